"""Local hashing frequency oracles (BLH, OLH): hash family, exact ε, kernel twins, estimator, aggregation."""

import math
import pickle
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum._kernels import client_hashing as kernels
from ldpnum._kernels.server_hashing import local_hash_support
from ldpnum._kernels._jit import launch
from ldpnum.plans import GRRPlan, grr_keep_cells
from ldpnum.frequency.hashing import (BLH, G_MAX, OLH, LocalHashPlan, decode_reports, hash_class_sizes,
                                      local_hash_support_counts, olh_g, support_probabilities_exact)

import naive as nh
from conftest import EPSILONS
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio

M24 = (1 << 24) - 1


def raw_words(seed, n):
    return np.random.default_rng(seed).bit_generator.random_raw(n)


def probe_hash(seed_words, values, g):
    seed_words = np.ascontiguousarray(seed_words, dtype=np.uint64)
    values = np.ascontiguousarray(values, dtype=np.int64)
    out = np.empty(values.shape[0], dtype=np.int64)
    launch(kernels.local_hash_probe, seed_words, values, g, out)
    return out


def seed_word(a, b, low=0):
    return (a << 40) | (b << 16) | low


def run_kernel(m, values, words):
    values = np.array(values, dtype=np.int64)  # read-only, as privatize hands its validated values to kernels
    values.flags.writeable = False
    out = np.empty(values.shape[0], dtype=np.uint64)
    m._run_kernel(values, np.ascontiguousarray(words, dtype=np.uint64), out)
    return out


# --- the hash family -----------------------------------------------------------------------------------

def test_field_polynomial_is_irreducible():
    """x^24 + x^4 + x^3 + x + 1 is irreducible, so GF(2)[x]/(it) is the field GF(2^24) and the affine
    family is pairwise independent; the small fields used for brute force are fields too."""
    for bits, poly in nh.SMALL_FIELD_POLYS.items():
        assert nh.is_irreducible((1 << bits) | poly), bits
    assert not nh.is_irreducible((1 << 24) | 0x1)  # x^24 + 1 = (x^3 + 1)^8 is not: the test can fail


def test_hash_probe_matches_python_ints_on_adversarial_inputs():
    rng = np.random.default_rng(3)
    edge = [0, 1, 2, 1 << 23, M24 - 1, M24]
    a_vals = edge + [int(x) for x in rng.integers(0, 1 << 24, 6)]
    b_vals = [0, 1, 1 << 23, M24] + [int(x) for x in rng.integers(0, 1 << 24, 2)]
    v_vals = [0, 1, 2, 3, 1023, 1 << 23, M24 - 1, M24] + [int(x) for x in rng.integers(0, 1 << 24, 6)]
    for g in (2, 3, 4, 56, 2982, 65535, G_MAX):
        seeds, values, expect = [], [], []
        for a in a_vals:
            for b in b_vals:
                for v in v_vals:
                    seeds.append(seed_word(a, b, low=0xFFFF))  # the low 16 bits are not part of the seed
                    values.append(v)
                    expect.append(nh.local_hash(a, b, v, g))
        np.testing.assert_array_equal(probe_hash(seeds, values, g), expect)
        assert min(expect) >= 0 and max(expect) < g


@pytest.mark.parametrize("bits", [4, 5])
def test_affine_family_is_pairwise_uniform_small_field(bits):
    """Brute force on GF(2^bits): for v != v', (a, b) -> (a⊗v ⊕ b, a⊗v' ⊕ b) is a bijection onto all pairs."""
    poly = nh.SMALL_FIELD_POLYS[bits]
    n = 1 << bits
    for v, v2 in [(0, 1), (1, 2), (3, n - 1), (n - 2, n - 1)]:
        pairs = Counter((nh.gf_mul(a, v, bits, poly) ^ b, nh.gf_mul(a, v2, bits, poly) ^ b)
                        for a in range(n) for b in range(n))
        assert len(pairs) == n * n and set(pairs.values()) == {1}


def test_class_sizes_are_the_range_reduction_preimages():
    for g in (2, 3, 7, 56, 1000):
        sizes = hash_class_sizes(g, 12)
        z = np.arange(1 << 12)
        np.testing.assert_array_equal(sizes, np.bincount((z * g) >> 12, minlength=g))
    sizes = hash_class_sizes(2982)
    assert sum(sizes) == 1 << 24 and set(sizes) == {(1 << 24) // 2982, (1 << 24) // 2982 + 1}


@pytest.mark.parametrize("bits,g,eps", [(5, 2, 1.0), (5, 3, 0.5), (6, 5, 1.3), (6, 7, 2.0), (5, 4, 1.0)])
def test_support_probabilities_match_enumeration(bits, g, eps):
    """p*, q* of the closed form equal the brute-force average over every seed of a small field, for
    several pairs (the same q* for every pair of distinct values: unbiased for all)."""
    poly = nh.SMALL_FIELD_POLYS[bits]
    n = 1 << bits
    grr = GRRPlan(g, *grr_keep_cells(eps, g))
    rows = [grr.exact_probabilities(h) for h in range(g)]
    p_star, q_star = support_probabilities_exact(grr, bits)
    for v, v2 in [(0, 1), (2, 9), (n - 1, 5)]:
        p_sum = q_sum = Fraction(0)
        for a in range(n):
            for b in range(n):
                h = nh.local_hash(a, b, v, g, bits, poly)
                h2 = nh.local_hash(a, b, v2, g, bits, poly)
                p_sum += rows[h][h]
                q_sum += rows[h][h2]
        assert p_sum / (n * n) == p_star
        assert q_sum / (n * n) == q_star


def test_q_star_is_one_over_g_when_g_is_a_power_of_two():
    for eps, g in [(1.0, 2), (1.0, 4), (2.0, 8), (20.0, G_MAX)]:
        assert support_probabilities_exact(GRRPlan(g, *grr_keep_cells(eps, g)))[1] == Fraction(1, g)


# --- exact ε -----------------------------------------------------------------------------------------

def joint_rows(plan, seeds, k, unknown=False):
    """Rows over (seed, y) for the given fixed seeds, each seed weighted 1/len(seeds): P[seed] does not
    depend on the value, so the ratio is that of the per-seed GRR rows."""
    hashes = probe_hash(np.repeat(seeds, k), np.tile(np.arange(k), len(seeds)), plan.g)
    hashes = hashes.reshape(len(seeds), k)
    w = Fraction(1, len(seeds))
    grr_rows = {}

    def grr_row(h):
        if h not in grr_rows:
            grr_rows[h] = plan.exact_probabilities(h)
        return grr_rows[h]

    rows = []
    for v in list(range(k)) + ([-1] if unknown else []):
        row = {}
        for s in range(len(seeds)):
            for y, pr in grr_row(-1 if v < 0 else int(hashes[s, v])).items():
                row[(s, y)] = w * pr
        rows.append(row)
    return rows


SEEDS_256 = raw_words(2024, 256)


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("epsilon", [e for e in EPSILONS if olh_g(e) <= 64])
@pytest.mark.parametrize("cls", [BLH, OLH])
def test_exact_epsilon_256_seeds(cls, epsilon, k):
    """256 fixed seeds × all v × all g outputs, in rationals, tight (plus the uniform report of an
    unknown value, which must stay within the bound)."""
    m = cls(epsilon, k)
    rows = joint_rows(m.plan, SEEDS_256, k)
    worst = check_exact_epsilon(rows, epsilon)
    assert worst == m.plan.extreme_ratio()
    check_exact_epsilon(rows + joint_rows(m.plan, SEEDS_256, k, unknown=True)[-1:], epsilon, tight=False)


@pytest.mark.parametrize("epsilon", [1.0])
def test_exact_epsilon_256_seeds_k64(epsilon):
    m = OLH(epsilon, 64)
    worst = check_exact_epsilon(joint_rows(m.plan, SEEDS_256, 64), epsilon)
    assert worst == m.plan.extreme_ratio()


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", [BLH, OLH])
def test_exact_epsilon_structural(cls, epsilon):
    """For any seed the rows are GRR rows over g, so GRR's exact extreme ratio bounds every seed."""
    m = cls(epsilon, 1000)
    check_exact_epsilon([], epsilon, ratio=m.plan.extreme_ratio())
    if m.g <= 64:
        rows = [m.plan.exact_probabilities(h) for h in range(m.g)]
        assert max_ratio(rows) == m.plan.extreme_ratio()


def test_exact_checker_rejects_inflated_epsilon():
    """Negative control: thresholds computed for 1.25 ε must fail the exact check at ε."""
    for cls, eps, k in [(BLH, 1.0, 3), (OLH, 2.0, 5), (OLH, 0.5, 3)]:
        m = cls(eps, k)
        bad = LocalHashPlan(k, m.g, *grr_keep_cells(1.25 * eps, m.g))
        with pytest.raises(PrivacyViolation, match="exceeds"):
            check_exact_epsilon(joint_rows(bad, SEEDS_256[:32], k), eps)


# --- the seed does not depend on the value ----------------------------------------------------------------

def check_seed_independent(run, k, n=5000, seed=11):
    """Same words, different values → identical seed bits in every report."""
    words = raw_words(seed, 2 * n)
    rng = np.random.default_rng(seed)
    inputs = [np.zeros(n, np.int64), np.full(n, k - 1), rng.integers(0, k, n), np.full(n, -1)]
    seeds = [run(x, words) & np.uint64(~0xFFFF & (2**64 - 1)) for x in inputs]
    for s in seeds[1:]:
        if not np.array_equal(s, seeds[0]):
            raise AssertionError("the hash seed depends on the value")
    np.testing.assert_array_equal(seeds[0], words[0::2] & np.uint64(~0xFFFF & (2**64 - 1)))


@pytest.mark.parametrize("cls,eps,k", [(BLH, 1.0, 16), (OLH, 3.0, 1000), (OLH, 12.0, 1 << 24)])
def test_seed_is_independent_of_value(cls, eps, k):
    m = cls(eps, k)
    check_seed_independent(lambda x, w: run_kernel(m, x, w), k)


def test_independence_check_catches_seed_depending_on_value():
    """Negative control: a randomizer whose seed words are XOR'ed with the value must be caught."""
    m = OLH(2.0, 64)

    def mutant(x, words):
        w = words.copy()
        w[0::2] ^= (np.maximum(x, 0).astype(np.uint64) << np.uint64(16))
        return run_kernel(m, x, w)

    with pytest.raises(AssertionError, match="depends on the value"):
        check_seed_independent(mutant, 64)


# --- the kernel matches the plan (chi-square, α = 1e-6) ---------------------------------------------------

@pytest.mark.parametrize("cls,eps,k", [(BLH, 1.0, 16), (OLH, 2.0, 100), (OLH, 4.0, 1024), (OLH, 0.5, 3)])
def test_kernel_matches_plan_for_fixed_seeds(cls, eps, k):
    m = cls(eps, k)
    n = 200_000
    for j, s in enumerate(SEEDS_256[:3]):
        for v in (0, k - 1, -1):
            words = raw_words(100 * j + v + 7, 2 * n)
            words[0::2] = s
            y = run_kernel(m, np.full(n, v), words) & np.uint64(0xFFFF)
            h = -1 if v < 0 else int(probe_hash([s], [v], m.g)[0])
            row = m.plan.exact_probabilities(h)
            probs = [float(row[i]) for i in range(m.g)]
            check_kernel_matches(np.bincount(y.astype(np.int64), minlength=m.g), probs)


def test_twin_rejects_lie_drawn_from_all_g():
    """Negative control for the fixed-seed twin: a lie drawn among all g values (OpenDP #480)."""
    m = OLH(2.0, 100)
    p = m.support_probabilities[0]
    rng = np.random.default_rng(1)
    n = 300_000
    h = 3
    y = np.where(rng.random(n) < p, h, rng.integers(0, m.g, n))
    row = m.plan.exact_probabilities(h)
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(np.bincount(y, minlength=m.g), [float(row[i]) for i in range(m.g)])


@pytest.mark.parametrize("eps,k", [(1.0, 50), (2.0, 1000)])
def test_seed_distribution_matches_family(eps, k):
    """Over random seeds: the seed's fields are uniform, h(v) follows the class sizes, and (h(v), h(v'))
    follows the product of the class sizes (pairwise independence), all by chi-square."""
    m = OLH(eps, k)
    n = 400_000
    r = m.privatize(np.full(n, 5), rng=77)
    a, b, _ = decode_reports(r)
    flat = np.full(256, 1 / 256)
    check_kernel_matches(np.bincount((a >> np.uint64(16)).astype(np.int64), minlength=256), flat)
    check_kernel_matches(np.bincount((b & np.uint64(255)).astype(np.int64), minlength=256), flat)
    seeds = r.codes
    h1 = probe_hash(seeds, np.full(n, 5), m.g)
    h2 = probe_hash(seeds, np.full(n, k - 1), m.g)
    sizes = np.array(m.plan.class_sizes(), dtype=float) / 2**24
    check_kernel_matches(np.bincount(h1, minlength=m.g), sizes)
    check_kernel_matches(np.bincount(h1 * m.g + h2, minlength=m.g * m.g), np.outer(sizes, sizes).ravel())


# --- kernel vs the naive reference, bit for bit ---------------------------------------------------------

@pytest.mark.parametrize("cls,eps,k", [(BLH, 1.0, 2), (OLH, 1.3, 37), (OLH, 4.0, 1000), (OLH, 8.0, 1 << 24),
                                       (OLH, 11.5, 70_000)])
def test_kernel_matches_naive(cls, eps, k):
    m = cls(eps, k)
    n = 3000
    v = np.random.default_rng(k).integers(0, k, n)
    v[:4] = [0, k - 1, 0, k - 1]
    v[::97] = k + 5  # unknown → uniform
    r = m.privatize(v, rng=5, unknown="uniform")
    words = raw_words(5, 2 * n)
    ref = nh.local_hashing(np.where(v >= k, -1, v), m.g, m.plan.a_keep, m.plan.shift, words)
    np.testing.assert_array_equal(r.codes, ref)


# --- estimator: unbiased, variance as in the seed's table -----------------------------------------------

def test_variance_matches_seed_table():
    for eps in (0.1, 0.5, 1.0, 2.0, 4.0):
        ee = math.exp(eps)
        assert BLH(eps, 64).variance(0.0) == pytest.approx((ee + 1) ** 2 / (ee - 1) ** 2, rel=1e-9)
    for eps in np.linspace(0.01, 11.0, 60):
        ee = math.exp(eps)
        olh = OLH(float(eps), 64)
        g = olh.g
        p, q = ee / (ee + g - 1), 1 / g  # the textbook p, q for the integer g actually used
        # the exact q* differs from 1/g relatively by up to (g / 2^24)^2 / 4 (unequal hash classes)
        assert olh.variance(0.0) == pytest.approx(q * (1 - q) / (p - q) ** 2, rel=1e-9 + (g / 2**24) ** 2 / 4)
        # g = round(e^ε) + 1 instead of e^ε + 1: at most 4.2% above the seed's 4 e^ε / (e^ε - 1)²
        table = 4 * ee / (ee - 1) ** 2
        assert table * (1 - 1e-9) <= olh.variance(0.0) <= 1.042 * table


@pytest.mark.parametrize("cls,eps,k", [(BLH, 1.0, 16), (OLH, 1.0, 16), (OLH, 3.0, 200), (OLH, 0.5, 5)])
def test_unbiased_with_exact_q_star(cls, eps, k):
    m = cls(eps, k)
    rng = np.random.default_rng(k + 1)
    p = rng.dirichlet(np.ones(k))
    n = 200_000
    x = rng.choice(k, n, p=p)
    est = m.estimate_frequencies(m.privatize(x, rng=9))
    truth = np.bincount(x, minlength=k) / n
    sd = np.sqrt(m.variance(truth) / n)
    assert np.all(np.abs(est.frequencies - truth) < 4.5 * sd)
    np.testing.assert_allclose(est.standard_errors, np.sqrt(m.variance(np.clip(est.frequencies, 0, 1)) / n))


@pytest.mark.parametrize("cls", [BLH, OLH])
def test_empirical_variance(cls):
    k, eps, n, reps = 8, 1.0, 20_000, 300
    m = cls(eps, k)
    x = np.zeros(n, dtype=np.int64)
    f = [m.estimate_frequencies(m.privatize(x, rng=s)).frequencies[3] for s in range(reps)]
    var = m.variance(0.0) / n
    assert abs(np.mean(f)) < 4.5 * math.sqrt(var / reps)
    assert abs(np.var(f, ddof=1) / var - 1) < 4.5 * math.sqrt(2 / (reps - 1))


# --- aggregation: Cython support counts, merging ----------------------------------------------------------

@pytest.mark.parametrize("k,g", [(2, 2), (3, 3), (16, 4), (64, 56), (65, 2982), (1000, 8), (1025, G_MAX)])
def test_support_counts_match_naive(k, g):
    rng = np.random.default_rng(k)
    n = 3000
    seeds = rng.bit_generator.random_raw(n) & np.uint64(~0xFFFF & (2**64 - 1))
    codes = seeds | rng.integers(0, g, n).astype(np.uint64)
    codes[:3] = [0, (M24 << 40) | (M24 << 16) | (g - 1), (1 << 40) | 0]  # a = 0, all-ones, a = 1
    counts = np.zeros(k, dtype=np.int64)
    assert local_hash_support(codes, g, counts) == (0, -1)
    np.testing.assert_array_equal(counts, nh.local_hash_support(codes, k, g))


def test_support_counts_match_probe_on_real_reports():
    m = OLH(2.0, 300)
    x = np.random.default_rng(0).integers(0, 300, 2000)
    r = m.privatize(x, rng=3)
    _, _, y = decode_reports(r)
    ref = [int(np.count_nonzero(probe_hash(r.codes, np.full(2000, v), m.g) == y)) for v in range(300)]
    np.testing.assert_array_equal(m.aggregate(r).counts, ref)


def test_threaded_support_counts_equal_single_thread():
    k, g = 700, 8
    codes = raw_words(1, 40_000)
    codes = (codes & np.uint64(~0xFFFF & (2**64 - 1))) | (codes & np.uint64(7))
    one = np.zeros(k, dtype=np.int64)
    local_hash_support(codes, g, one)
    np.testing.assert_array_equal(local_hash_support_counts(codes, k, g), one)  # n·k ≥ 2^22: threads


def test_support_counts_reject_y_outside_range():
    codes = np.array([3, 9, 2, 12], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"2 code\(s\) whose y lies outside \[0, 8\), first at index 1"):
        local_hash_support_counts(codes, 10, 8)
    with pytest.raises(ValueError, match="first at index 1"):
        ldp.Reports(codes, OLH(2.0, 10).spec)


def test_merge_equals_aggregate_of_concatenation():
    m = OLH(2.0, 50)
    x = np.random.default_rng(0).integers(0, 50, 9000)
    parts = [m.privatize(c, rng=i) for i, c in enumerate(np.array_split(x, 3))]
    aggs = [m.aggregate(p) for p in parts]
    whole = m.aggregate(ldp.Reports.concat(parts))
    assert sum(aggs) == whole == ldp.Aggregate.merge(aggs)
    assert whole.n_reports == 9000 and whole.counts.shape == (50,)
    assert m.empty_aggregate() + aggs[0] == aggs[0]
    assert m.empty_aggregate().n_reports == 0
    e1, e2 = m.estimate_frequencies(whole), m.estimate_frequencies(ldp.Reports.concat(parts))
    np.testing.assert_array_equal(e1.frequencies, e2.frequencies)
    with pytest.raises(ValueError, match="no reports"):
        m.estimate_frequencies(m.empty_aggregate())
    with pytest.raises(ldp.SpecMismatchError):
        OLH(2.0, 51).estimate_frequencies(whole)
    with pytest.raises(ldp.SpecMismatchError):
        BLH(2.0, 50).aggregate(parts[0])


# --- reports, spec, API ---------------------------------------------------------------------------------

def test_reports_layout_and_container():
    m = OLH(4.0, 1000)
    x = np.arange(1000)
    r = m.privatize(x, rng=0)
    assert isinstance(r, ldp.Reports) and r.codes.dtype == np.uint64 and not r.codes.flags.writeable
    a, b, y = decode_reports(r)
    assert int(a.max()) <= M24 and int(b.max()) <= M24 and int(y.max()) < m.g
    np.testing.assert_array_equal((a << np.uint64(40)) | (b << np.uint64(16)) | y, r.codes)
    sub = r[10:20]
    assert isinstance(sub, ldp.Reports) and len(sub) == 10 and sub.spec == m.spec
    assert r[3] == int(r.codes[3])
    assert ldp.Reports(np.array(r.codes), m.spec) == r
    small = r.codes[r.codes < np.uint64(2**63)]
    assert ldp.Reports(small.astype(np.int64), m.spec) == ldp.Reports(small, m.spec)
    with pytest.raises(ValueError, match="negative"):
        ldp.Reports(np.array([-1]), m.spec)
    with pytest.raises(TypeError):
        ldp.Reports(np.array([1.0]), m.spec)
    with pytest.raises(ValueError, match="one-dimensional"):
        ldp.Reports(np.zeros((2, 2), dtype=np.uint64), m.spec)
    with pytest.raises(ValueError, match="outside the output alphabet"):
        ldp.Reports(np.full(2, 2**40, dtype=np.uint64), ldp.GRR(1.0, 4).spec)
    with pytest.raises(TypeError):
        m.aggregate(np.asarray(r))
    r2 = pickle.loads(pickle.dumps(r))
    assert isinstance(r2, ldp.Reports) and r2 == r and not r2.codes.flags.writeable


def test_spec_round_trip_and_parameters():
    for m in (BLH(1.0, 10), OLH(2.0, 1000), OLH(2.0, 1000, g=3), OLH(15.0, 1 << 24)):
        assert ldp.from_spec(m.spec) == m
        assert ldp.Spec.from_json(m.spec.to_json()) == m.spec
        assert m.spec.n_cells == m.k and m.words_per_record == 2
    assert BLH(3.0, 5).g == 2
    assert [OLH(e, 100).g for e in (0.001, 1.0, 2.0, 4.0, 8.0, 11.0, 12.0, 20.0)] == \
        [2, 4, 8, 56, 2982, 59875, G_MAX, G_MAX]
    assert OLH(2.0, 1000) != OLH(2.0, 1000, g=3) and OLH(1.0, 9, g=2) != BLH(1.0, 9)
    assert repr(OLH(2.0, 10)) == "OLH(epsilon=2.0, k=10, g=8)"
    assert repr(BLH(2.0, 10)) == "BLH(epsilon=2.0, k=10)"


@pytest.mark.parametrize("g,exc", [(1, ValueError), (G_MAX + 1, ValueError), (2.0, TypeError),
                                   (True, TypeError)])
def test_bad_g(g, exc):
    with pytest.raises(exc):
        OLH(1.0, 10, g=g)


@pytest.mark.parametrize("x,exc,msg", [
    (np.array([0.0, 1.0]), TypeError, "integer category codes"),
    (np.array([True, False]), TypeError, "integer category codes"),
    (np.array([0, 5, 7, 1]), ValueError, r"2 value\(s\) outside the categories \[0, 5\), first at index 1"),
    (np.array([-1, 2]), ValueError, "first at index 0"),
    (np.zeros((2, 2), dtype=int), ValueError, "one-dimensional"),
    (pd.Series([1, None, 2], dtype="Int64"), ValueError, "missing value"),
])
@pytest.mark.parametrize("cls", [BLH, OLH])
def test_bad_categories_rejected_before_any_draw(cls, x, exc, msg, monkeypatch):
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError))
    with pytest.raises(exc, match=msg):
        cls(1.0, 5).privatize(x)


def test_unknown_uniform_reports_uniform_y():
    m = OLH(2.0, 5)
    n = 200_000
    r = m.privatize(np.full(n, 99), rng=4, unknown="uniform")
    _, _, y = decode_reports(r)
    row = m.plan.exact_probabilities(-1)
    check_kernel_matches(np.bincount(y.astype(np.int64), minlength=m.g), [float(row[i]) for i in range(m.g)])


def test_reproducible_and_chunked():
    m = OLH(3.0, 500)
    x = np.random.default_rng(0).integers(0, 500, 2 * _random.BLOCK_RECORDS + 123)
    whole = m.privatize(x, rng=np.random.default_rng(5))
    assert whole == m.privatize(x, rng=5) and whole != m.privatize(x, rng=6)
    gen = np.random.default_rng(5)
    assert ldp.Reports.concat([m.privatize(c, rng=gen) for c in np.array_split(x, 7)]) == whole
    np.testing.assert_array_equal(whole.codes, run_kernel(m, x, raw_words(5, 3 * x.size)))
    assert m.privatize(x[:1000]) != m.privatize(x[:1000])  # secure default: fresh key per call
    assert len(m.privatize(np.array([], dtype=np.int64), rng=0)) == 0
