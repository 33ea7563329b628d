"""Unary encodings SUE and OUE: exact ε, kernel vs plan and vs the naive reference, negative controls,
unbiasedness and variance against the seed's table, validation, reproducibility, the packed report format."""

import hashlib
import math
import os
import pickle
from fractions import Fraction

import numba
import numpy as np

import ldpnum.base
import pandas as pd
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum import _random
from ldpnum._kernels import client_unary
from ldpnum._kernels.server_unary import count_bits as cython_count_bits
from ldpnum.frequency import unary
from ldpnum.frequency.unary import OUE, SUE, count_bits, pack_bits, unary_plan, unpack_bits
from ldpnum.plans import TWO53, exp_lower

import naive as naive_unary
from conftest import EPSILONS, one_thread
from privacy_checks import ALPHA, PrivacyViolation, check_exact_epsilon, check_kernel_matches

MECHS = [SUE, OUE]

# every (mechanism, lane width) the ε grid uses: SUE 8/16 bits, OUE 8/16/32 bits
LANE_CONFIGS = [(SUE, 0.5, 8), (SUE, 4.0, 16), (SUE, 20.0, 16),
                (OUE, 1.0, 8), (OUE, 8.0, 16), (OUE, 16.0, 32)]


def rows_of(plan, k, unknown=True):
    rows = [plan.exact_probabilities(v) for v in range(k)]
    return rows + [plan.exact_probabilities(-1)] if unknown else rows


def seed_variance(cls, eps):
    """The seed's table (002): SUE e^{ε/2}/(e^{ε/2}-1)², OUE 4e^ε/(e^ε-1)²."""
    if cls is SUE:
        h = math.exp(eps / 2)
        return h / (h - 1) ** 2
    return 4 * math.exp(eps) / (math.exp(eps) - 1) ** 2


def check_bits_match(counts, n, bit_probs, true_bit=None, min_expected=20.0):
    """Per-bit counts of ``n`` reports vs exact bit probabilities (independent bits; α = 1e-6).

    The true bit is its own cell; the other bits are merged into runs of consecutive bits until each run
    expects at least ``min_expected`` ones and zeros. A run's count is a sum of independent binomials, so
    Σ (O - E)² / Var is χ² with one degree of freedom per cell. Raises PrivacyViolation when p < α.
    """
    counts = np.asarray(counts, dtype=np.float64)
    probs = np.asarray(bit_probs, dtype=np.float64)
    cells = []
    if true_bit is not None:
        cells.append([true_bit])
    run = []
    for j in range(probs.size):
        if j == true_bit:
            continue
        run.append(j)
        mean = n * probs[run].sum()
        if min(mean, n * len(run) - mean) >= min_expected:
            cells.append(run)
            run = []
    if run:
        if len(cells) > (true_bit is not None):
            cells[-1] = cells[-1] + run
        else:
            cells.append(run)
    stat = 0.0
    for cell in cells:
        mean = n * probs[cell].sum()
        var = n * (probs[cell] * (1 - probs[cell])).sum()
        stat += (counts[cell].sum() - mean) ** 2 / var
    p = float(stats.chi2.sf(stat, len(cells)))
    if p < ALPHA:
        raise PrivacyViolation(f"sampled bit frequencies do not match the plan (chi-square p = {p:.3g})")
    return p


# -- (a) exact ε ------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_exact_epsilon_all_reports(cls, epsilon, k):
    """All 2^k reports × all pairs of inputs (the k categories and an unknown value), in rationals, tight."""
    plan = cls(epsilon, k).plan
    worst = check_exact_epsilon(rows_of(plan, k), epsilon)
    assert worst == plan.extreme_ratio()  # the structural reduction is exact


@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 8.0, 20.0])
@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_exact_epsilon_all_reports_k10(cls, epsilon):
    plan = cls(epsilon, 10).plan
    rows = rows_of(plan, 10)
    assert len(rows[0]) == 1024
    worst = check_exact_epsilon(rows, epsilon)
    assert worst == plan.extreme_ratio()


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_exact_probabilities_cross_checked_by_enumeration(cls):
    plan = cls(1.0, 6).plan
    for v in (0, 4, -1):
        assert plan.exact_probabilities(v) == naive_unary.enumerate_reports(plan.bit_probabilities(v))


@pytest.mark.parametrize("k", [1024, 1 << 16])
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_exact_epsilon_product_bound_large_k(cls, epsilon, k):
    """Large k: the product bound [p/q]·[(1-q)/(1-p)] (only the two bits where inputs differ matter),
    exact in rationals and tight to 1e-6; the per-bit thresholds do not depend on k, so they are the ones
    the enumeration above checked."""
    plan = cls(epsilon, k).plan
    p, q = plan.p, plan.q
    ratio = plan.extreme_ratio()
    assert ratio == (p / q) * ((1 - q) / (1 - p))
    worst = check_exact_epsilon([], epsilon, ratio=ratio)
    assert 1 - worst / Fraction(math.exp(epsilon)) < Fraction(1, 10**9)  # realized tightness, see module doc
    small = cls(epsilon, 5).plan
    assert (plan.lane_bits, plan.t_other, plan.t_true) == (small.lane_bits, small.t_other, small.t_true)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_plan_thresholds_are_the_largest_allowed(cls, epsilon):
    """t_true is maximal: one more and the product bound exceeds E (so the guarantee is as tight as the
    53-bit grid allows)."""
    plan = cls(epsilon, 4).plan
    e = exp_lower(epsilon)
    q = plan.q
    for t, ok in ((plan.t_true, True), (plan.t_true + 1, False)):
        p = Fraction(t, TWO53)
        assert (p * (1 - q) <= e * q * (1 - p)) is ok
    assert 0 < plan.q < plan.p < 1


# -- (f) negative controls M2 (and a per-bit e^ε instead of e^{ε/2}) -----------------------------------
def _mutant_rows(bit_probs_of, k):
    return [naive_unary.enumerate_reports(bit_probs_of(v)) for v in range(k)]


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0, 16.0])
@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_exact_checker_rejects_true_bit_ored_with_noise(cls, epsilon):
    """pure-ldp's UE bug: the true bit is the noise bit OR'ed with the coin, P(1) = p + (1-p) q."""
    k = 4
    plan = cls(epsilon, k).plan
    p, q = plan.p, plan.q

    def probs(v):
        out = [q] * k
        out[v] = p + (1 - p) * q
        return out

    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(_mutant_rows(probs, k), epsilon)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([], epsilon, ratio=((p + (1 - p) * q) / q) * ((1 - q) / ((1 - p) * (1 - q))))


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_exact_checker_rejects_true_bit_always_one(cls):
    k = 3
    plan = cls(1.0, k).plan

    def probs(v):
        out = [plan.q] * k
        out[v] = Fraction(1)
        return out

    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(_mutant_rows(probs, k), 1.0)


def test_exact_checker_rejects_sue_with_full_epsilon_per_bit():
    """Keeping each bit with e^ε/(e^ε+1) (the per-bit budget not halved) realizes 2ε."""
    plan = SUE(2.0, 3).plan  # a SUE plan at 2ε is the per-bit-ε mutant at ε
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows_of(plan, 3), 1.0)


def test_exact_checker_rejects_untight_plan():
    plan = OUE(0.9, 3).plan
    with pytest.raises(PrivacyViolation, match="not tight"):
        check_exact_epsilon(rows_of(plan, 3), 1.0)


# -- (b) the kernel's sampled frequencies match the plan --------------------------------------------
def joint_counts(reports, k):
    keys = np.zeros(len(reports), dtype=np.int64)
    bits = unpack_bits(reports)
    for j in range(k):
        keys |= bits[:, j].astype(np.int64) << j
    return np.bincount(keys, minlength=2**k)


@pytest.mark.parametrize("cls,eps,lane", LANE_CONFIGS, ids=lambda x: getattr(x, "name", str(x)))
def test_kernel_joint_distribution_matches_plan(cls, eps, lane):
    """k = 4: the whole report (16 outputs) vs the exact distribution, for a first, last and unknown value."""
    k = 4
    m = cls(eps, k)
    assert m.plan.lane_bits == lane
    for i, v in enumerate([0, 3, -1]):
        x = np.full(200_000, v if v >= 0 else 99)
        r = m.privatize(x, rng=70 + i, unknown="uniform")
        exact = m.plan.exact_probabilities(v)
        check_kernel_matches(joint_counts(r, k), [float(exact[y]) for y in range(2**k)])


@pytest.mark.parametrize("cls,eps,lane", LANE_CONFIGS, ids=lambda x: getattr(x, "name", str(x)))
def test_kernel_bit_frequencies_match_plan_large_k(cls, eps, lane):
    k = 1027  # not a multiple of 8: padding handled
    m = cls(eps, k)
    n = 60_000
    for i, v in enumerate([0, 517, k - 1, -1]):
        x = np.full(n, v if v >= 0 else k)
        agg = m.aggregate(m.privatize(x, rng=80 + i, unknown="uniform"))
        probs = [float(f) for f in m.plan.bit_probabilities(v)]
        check_bits_match(agg.counts, n, probs, true_bit=v if v >= 0 else None)


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_twin_rejects_true_bit_ored_with_noise(cls):
    """The chi-square twin catches pure-ldp's UE bug on simulated mutant reports (joint and per-bit)."""
    k, v, n = 4, 2, 200_000
    m = cls(1.0, k)
    p, q = m.support_probabilities
    rng = np.random.default_rng(3)
    bits = (rng.random((n, k)) < q).astype(np.uint8)
    bits[:, v] |= rng.random(n) < p
    mutant = ldp.Reports(pack_bits(bits), m.spec)
    exact = m.plan.exact_probabilities(v)
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(joint_counts(mutant, k), [float(exact[y]) for y in range(2**k)])
    with pytest.raises(PrivacyViolation):
        check_bits_match(m.aggregate(mutant).counts, n, [float(f) for f in m.plan.bit_probabilities(v)],
                         true_bit=v)


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_twin_rejects_naive_mutant_on_kernel_words(cls):
    """The naive reference with the OR bug, fed the kernel's own words, is rejected; without it, accepted."""
    k, v, n = 4, 1, 20_000
    m = cls(1.0, k)
    pl = m.plan
    words = np.random.default_rng(11).bit_generator.random_raw(n * pl.words_per_record)
    probs = [float(f) for f in pl.bit_probabilities(v)]
    args = (np.full(n, v), k, pl.lane_bits, pl.t_other, pl.t_true, words)
    good = ldp.Reports(naive_unary.unary(*args), m.spec)
    check_bits_match(m.aggregate(good).counts, n, probs, true_bit=v)
    bad = ldp.Reports(naive_unary.unary(*args, mutant="or"), m.spec)
    with pytest.raises(PrivacyViolation):
        check_bits_match(m.aggregate(bad).counts, n, probs, true_bit=v)


# -- kernel vs the naive reference, bit for bit -------------------------------------------------------
@pytest.mark.parametrize("k", [2, 5, 8, 13, 64, 100])
@pytest.mark.parametrize("cls,eps,lane", LANE_CONFIGS, ids=lambda x: getattr(x, "name", str(x)))
def test_kernel_matches_naive(cls, eps, lane, k):
    m = cls(eps, k)
    pl = m.plan
    x = np.random.default_rng(k).integers(0, k, 300)
    x[::17] = k + 3  # unknown → every bit at q
    r = m.privatize(x, rng=5, unknown="uniform")
    words = np.random.default_rng(5).bit_generator.random_raw(x.size * pl.words_per_record)
    ref = naive_unary.unary(np.where(x >= k, -1, x), k, pl.lane_bits, pl.t_other, pl.t_true, words)
    np.testing.assert_array_equal(r.codes, ref)


@pytest.mark.parametrize("lane", [8, 16])
def test_swar_lane_comparison_at_the_edges(lane):
    """Every lane value against thresholds at the edges of the lane (0, 1, high bit, all ones)."""
    below = client_unary.below8_inline if lane == 8 else client_unary.below16_inline  # the compiled helpers
    n_lanes = 64 // lane
    edges = [0, 1, 2**(lane - 1) - 1, 2**(lane - 1), 2**(lane - 1) + 1, 2**lane - 2, 2**lane - 1]
    rng = np.random.default_rng(0)
    for t in edges[1:] + [5, 200 % 2**lane]:
        plan = unary.UnaryPlan(k=8, lane_bits=lane, t_other=t, t_true=1)
        t_all, t_low = plan.kernel_thresholds()
        for _ in range(200):
            lanes = rng.choice(edges + list(rng.integers(0, 2**lane, 4)), n_lanes)
            x = sum(int(a) << (lane * i) for i, a in enumerate(lanes))
            got = int(below(np.uint64(x), t_all, t_low))
            assert got == sum(int(a < t) << i for i, a in enumerate(lanes))


def test_fixed_words_per_record():
    """C4: the kernel consumes exactly n · words_per_record words, whatever the values."""
    for m in (OUE(1.0, 16), SUE(2.0, 1027), OUE(20.0, 9)):
        pl = m.plan
        assert pl.words_per_record == 1 + pl.n_bytes * pl.lane_bits // 8
        for x in (np.zeros(1000, dtype=int), np.arange(1000) % m.k):
            g = np.random.default_rng(1)
            m.privatize(x, rng=g)
            after = g.bit_generator.random_raw(1)[0]
            ref = np.random.default_rng(1).bit_generator.random_raw(1000 * pl.words_per_record + 1)[-1]
            assert after == ref


# -- (d) unbiasedness and variance against the seed's table ------------------------------------------
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_variance_matches_seed_table(cls, epsilon):
    m = cls(epsilon, 16)
    assert m.nominal_variance == pytest.approx(seed_variance(cls, epsilon), rel=1e-12)
    assert abs(m.variance(0.0) / seed_variance(cls, epsilon) - 1) <= unary.VARIANCE_TOL
    p, q = m.support_probabilities
    assert m.variance(0.3) == pytest.approx((q * (1 - q) + 0.3 * (p - q) * (1 - p - q)) / (p - q) ** 2)


@pytest.mark.parametrize("cls,k,eps", [(SUE, 16, 1.0), (OUE, 16, 1.0), (OUE, 300, 2.0), (SUE, 64, 4.0),
                                       (OUE, 10, 16.0)], ids=str)
def test_unbiased_with_seed_variance(cls, k, eps):
    m = cls(eps, k)
    rng = np.random.default_rng(k)
    p = rng.dirichlet(np.ones(k))
    n = 100_000
    x = rng.choice(k, n, p=p)
    est = m.estimate_frequencies(m.privatize(x, rng=9))
    truth = np.bincount(x, minlength=k) / n
    sd = np.sqrt(m.variance(truth) / n)
    assert np.all(np.abs(est.frequencies - truth) < 4.5 * sd)
    np.testing.assert_allclose(est.standard_errors, np.sqrt(m.variance(np.clip(est.frequencies, 0, 1)) / n))


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_empirical_variance(cls):
    k, eps, n = 8, 1.0, 20_000
    m = cls(eps, k)
    x = np.zeros(n, dtype=np.int64)
    f = np.array([m.estimate_frequencies(m.privatize(x, rng=s)).frequencies[[0, 3]] for s in range(400)])
    rel = 4.5 * math.sqrt(2 / 399)  # sample variance of 400 draws
    assert abs(np.var(f[:, 1], ddof=1) / (seed_variance(cls, eps) / n) - 1) < rel  # frequency 0: the table
    assert abs(np.var(f[:, 0], ddof=1) / (m.variance(1.0) / n) - 1) < rel
    assert abs(f[:, 0].mean() - 1) < 4.5 * math.sqrt(m.variance(1.0) / n / 400)


def test_oue_beats_sue_and_matches_olh_variance():
    for eps in (0.5, 1.0, 4.0):
        assert OUE(eps, 100).variance(0.0) < SUE(eps, 100).variance(0.0)


# -- aggregation --------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 7, 8, 9, 63, 64, 65, 130, 1024])
def test_count_bits_matches_numpy(k):
    rng = np.random.default_rng(k)
    for n in (0, 1, 2, 3, 4, 14, 15, 16, 254, 255, 256, 1000):
        bits = (rng.random((n, k)) < rng.random()).astype(np.uint8)
        codes = pack_bits(bits) if n else np.zeros((0, -(-k // 8)), np.uint8)
        codes.flags.writeable = False  # const memoryview: read-only input accepted
        np.testing.assert_array_equal(count_bits(codes, k), bits.sum(axis=0))


def test_count_bits_threaded_path_and_all_ones():
    k = 1024
    n = 40_000  # 5 MB: counted on threads
    codes = np.full((n, k // 8), 0xFF, np.uint8)
    codes[::3, 5] = 0x0F
    expected = np.full(k, n)
    expected[44:48] -= len(range(0, n, 3))
    np.testing.assert_array_equal(count_bits(codes, k), expected)
    counts = np.zeros(8 * 128, np.int64)
    cython_count_bits(codes, counts)
    np.testing.assert_array_equal(counts, expected)
    with pytest.raises(ValueError, match="entries"):
        cython_count_bits(codes, np.zeros(5, np.int64))


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_aggregate_merge_and_estimate(cls):
    k = 50
    m = cls(1.0, k)
    x = np.random.default_rng(0).integers(0, k, 9000)
    g = np.random.default_rng(1)
    parts = [m.privatize(c, rng=g) for c in np.array_split(x, 3)]
    aggs = [m.aggregate(p) for p in parts]
    whole = m.aggregate(ldp.Reports.concat(parts))
    assert sum(aggs) == whole == ldp.Aggregate.merge(aggs)
    assert whole.n_reports == 9000 and whole.counts.shape == (k,)
    np.testing.assert_array_equal(whole.counts, unpack_bits(ldp.Reports.concat(parts)).sum(axis=0))
    empty = m.empty_aggregate()
    assert empty.n_reports == 0 and empty + aggs[0] == aggs[0]
    assert pickle.loads(pickle.dumps(whole)) == whole
    e1 = m.estimate_frequencies(whole)
    e2 = m.estimate_frequencies(ldp.Reports.concat(parts))
    np.testing.assert_array_equal(e1.frequencies, e2.frequencies)
    assert e1.n_reports == 9000 and e1.spec == m.spec
    pp = m.estimate_frequencies(whole, postprocess="norm-sub")
    assert pp.frequencies.min() >= 0 and pp.frequencies.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no reports"):
        m.estimate_frequencies(empty)


def test_specs_refuse_the_other_encoding():
    sue, oue = SUE(1.0, 8), OUE(1.0, 8)
    r = sue.privatize([1, 2], rng=0)
    with pytest.raises(ldp.SpecMismatchError):
        oue.aggregate(r)
    with pytest.raises(ldp.SpecMismatchError):
        oue.estimate_frequencies(sue.aggregate(r))
    with pytest.raises(ldp.SpecMismatchError):
        OUE(1.0, 9).aggregate(oue.privatize([1], rng=0))
    with pytest.raises(TypeError, match="expects Reports"):
        oue.aggregate(np.zeros((2, 1), np.uint8))
    assert ldp.from_spec(sue.spec) == sue and ldp.from_spec(oue.spec) == oue
    assert ldp.Spec.from_json(oue.spec.to_json()) == oue.spec
    assert sue.spec != oue.spec and oue.spec.get("packed_bits") == 8


# -- validation (TESTING.md (d)) ----------------------------------------------------------------------
@pytest.fixture
def no_draws(monkeypatch):
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError))


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
@pytest.mark.parametrize("x,exc,msg", [
    (np.array([0.0, 1.0]), TypeError, "integer category codes"),
    (np.array([True, False]), TypeError, "integer category codes"),
    (np.array(["a"]), TypeError, "integer category codes"),
    (np.array([0, 5, 7, 1]), ValueError, r"2 value\(s\) outside the categories \[0, 5\), first at index 1"),
    (np.array([-1, 2]), ValueError, "first at index 0"),
    (np.zeros((2, 2), dtype=int), ValueError, "one-dimensional"),
    (pd.Series([1, None, 2], dtype="Int64"), ValueError, "missing value"),
])
def test_bad_categories(cls, x, exc, msg, no_draws):
    with pytest.raises(exc, match=msg):
        cls(1.0, 5).privatize(x)


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_bad_parameters(cls):
    for eps, exc in ((0.0, ValueError), (-0.0, ValueError), (float("nan"), ValueError), (21.0, ValueError),
                     (True, TypeError), ("1", TypeError), (None, TypeError)):
        with pytest.raises(exc):
            cls(eps, 4)
    for k, exc in ((1, ValueError), (2.0, TypeError), (True, TypeError), ((1 << 24) + 1, ValueError)):
        with pytest.raises(exc):
            cls(1.0, k)
    with pytest.raises(ValueError, match="too small"):
        cls(1e-300, 4)


@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_unknown_uniform_and_accepted_forms(cls):
    m = cls(1.0, 5)
    ref = m.privatize(np.array([0, 4, 2]), rng=0)
    for x in ([0, 4, 2], np.array([0, 4, 2], dtype=np.uint8), pd.Series([0, 4, 2], dtype="Int64"),
              np.array([0, 4, 2], dtype=">i4")):
        assert m.privatize(x, rng=0) == ref
    r = m.privatize(pd.Series([0, None, 2], dtype="Int64"), nan_policy="impute", fill_value=4, rng=0)
    assert r == ref
    # unknown values: the report of a -1 marker (every bit at q) is within ε of every category's
    check_exact_epsilon([m.plan.exact_probabilities(-1)] + rows_of(m.plan, 5, unknown=False), 1.0)
    u = m.privatize([7, -3, 0], rng=0, unknown="uniform")
    words = np.random.default_rng(0).bit_generator.random_raw(3 * m.plan.words_per_record)
    pl = m.plan
    np.testing.assert_array_equal(u.codes, naive_unary.unary([-1, -1, 0], 5, pl.lane_bits, pl.t_other,
                                                              pl.t_true, words))


def test_empty_input():
    m = OUE(1.0, 20)
    r = m.privatize(np.array([], dtype=np.int64), rng=0)
    assert len(r) == 0 and r.codes.shape == (0, 3)
    assert m.aggregate(r) == m.empty_aggregate()


# -- (e) reproducibility ------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", MECHS, ids=lambda c: c.name)
def test_same_seed_same_reports(cls):
    m = cls(1.0, 100)
    x = np.random.default_rng(0).integers(0, 100, 5000)
    assert m.privatize(x, rng=42) == m.privatize(x, rng=42)
    assert m.privatize(x, rng=np.random.SeedSequence(42)) == m.privatize(x, rng=np.random.default_rng(42))
    assert m.privatize(x, rng=42) != m.privatize(x, rng=43)
    a, b = m.privatize(x), m.privatize(x)  # secure default: fresh key per call
    assert a != b


@pytest.mark.parametrize("cls,k", [(SUE, 13), (OUE, 1024)], ids=str)
def test_chunked_calls_equal_one_call(cls, k, monkeypatch):
    """7 chunks sharing a Generator == one call; blocks inside a call (here many, small) change nothing."""
    m = cls(2.0, k)
    x = np.random.default_rng(0).integers(0, k, 20_011)
    whole = m.privatize(x, rng=np.random.default_rng(5))
    monkeypatch.setattr(ldpnum._random, "BLOCK_WORDS", 50 * m.plan.words_per_record + 7)
    assert m.privatize(x, rng=np.random.default_rng(5)) == whole
    g = np.random.default_rng(5)
    parts = [m.privatize(c, rng=g) for c in np.array_split(x, 7)]
    assert ldp.Reports.concat(parts) == whole


def test_thread_count_does_not_change_reports():
    x = np.random.default_rng(0).integers(0, 1000, 100_000)
    mechanisms = (SUE(1.0, 1000), OUE(4.0, 1000), OUE(16.0, 1000))
    assert numba.get_num_threads() > 1 or os.cpu_count() == 1
    two = [m.privatize(x, rng=2024) for m in mechanisms]
    with one_thread():
        one = [m.privatize(x, rng=2024) for m in mechanisms]
    assert one == two


# -- the packed report format -------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 8, 9, 16, 1024, 1025])
def test_packed_format_and_round_trip(k):
    m = OUE(1.0, k)
    n = 500
    x = np.random.default_rng(k).integers(0, k, n)
    r = m.privatize(x, rng=1)
    assert r.codes.dtype == np.uint8 and r.codes.shape == (n, -(-k // 8)) == (n, m.bytes_per_report)
    assert r.codes.nbytes == n * math.ceil(k / 8) and not r.codes.flags.writeable
    bits = unpack_bits(r)
    assert bits.shape == (n, k) and set(np.unique(bits)) <= {0, 1}
    np.testing.assert_array_equal(pack_bits(bits), r.codes)  # padding bits are zero
    assert ldp.Reports(pack_bits(bits), m.spec) == r
    # bit j of a report is bit j % 8 of byte j // 8
    j = k - 1
    np.testing.assert_array_equal(bits[:, j], (r.codes[:, j // 8] >> (j % 8)) & 1)


def test_packed_reports_behave_per_person():
    m = SUE(1.0, 12)
    r = m.privatize(np.arange(12) % 12, rng=0)
    assert len(r) == 12
    row = r[3]
    assert isinstance(row, np.ndarray) and row.shape == (2,) and not row.flags.writeable
    assert r[2:5] == ldp.Reports(r.codes[2:5], m.spec) and len(r[2:5]) == 3
    assert len(r[np.arange(12) % 2 == 0]) == 6 and len(r[[0, 0, 1]]) == 3
    assert r[::2] == ldp.Reports(r.codes[::2], m.spec) and r[::2].codes.flags.c_contiguous
    assert ldp.Reports.concat([r[:5], r[5:]]) == r
    assert r != m.privatize(np.arange(12) % 12, rng=1)
    assert pickle.loads(pickle.dumps(r)) == r
    assert np.asarray(r).shape == (12, 2)
    with pytest.raises(IndexError, match="by person"):
        r[1, 0]
    codes = r.codes.copy()
    r2 = ldp.Reports(codes, m.spec)
    codes[0, 0] ^= 1
    assert r2 == r  # the caller's array was copied


def test_packed_reports_are_validated():
    spec = OUE(1.0, 12).spec
    with pytest.raises(TypeError, match="uint8"):
        ldp.Reports(np.zeros((3, 2), np.int64), spec)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        ldp.Reports(np.zeros((3, 3), np.uint8), spec)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        ldp.Reports(np.zeros(6, np.uint8), spec)
    bad = np.zeros((4, 2), np.uint8)
    bad[2, 1] = 0x10  # bit 12 of a 12-bit report
    with pytest.raises(ValueError, match="1 report.*padding bits.*first at index 2"):
        ldp.Reports(bad, spec)
    assert len(ldp.Reports(np.zeros((0, 2), np.uint8), spec)) == 0
    with pytest.raises(ValueError, match="padding bits"):
        count_bits(bad, 12)


def test_one_dimensional_reports_unchanged():
    """Specs without packed_bits keep the 1-D code behaviour."""
    g = ldp.GRR(1.0, 5)
    r = g.privatize([0, 1, 4], rng=0)
    assert isinstance(r[0], int) and r.codes.ndim == 1
    with pytest.raises(ValueError, match="one-dimensional"):
        ldp.Reports(np.zeros((2, 2), np.uint8), g.spec)


GOLDEN = ["d2b7d79fd664a417", "5c64390b6deaa097", "99e6d826bd2949a4"]


def test_golden_digest():
    """E7: a deliberate change of the kernel, plan or word layout changes these."""
    x = np.random.default_rng(1).integers(0, 100, 10_000)
    digests = [hashlib.sha256(cls(eps, 100).privatize(x, rng=20261122).codes.tobytes()).hexdigest()[:16]
               for cls, eps in ((SUE, 1.0), (OUE, 1.0), (OUE, 16.0))]
    assert digests == GOLDEN


def test_unary_plan_chooses_narrowest_lane_within_tolerance():
    for cls in MECHS:
        for eps in EPSILONS:
            m = cls(eps, 8)
            q0 = m.nominal_probabilities[1]
            narrower = [b for b in unary.LANE_BITS if b < m.plan.lane_bits]
            for b in narrower:  # every narrower lane width misses the tolerance
                unary.LANE_BITS, saved = (b,), unary.LANE_BITS
                try:
                    alt = unary_plan(eps, 8, q0, m.nominal_variance)
                finally:
                    unary.LANE_BITS = saved
                p, q = float(alt.p), float(alt.q)
                assert abs(q * (1 - q) / (p - q) ** 2 / m.nominal_variance - 1) > unary.VARIANCE_TOL
