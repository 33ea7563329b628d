"""PI-RAPPOR (seed 004): exact privacy, kernel vs plan and vs the naive reference, decoding, estimator."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum import _random
from ldpnum._kernels import client_pirappor as kern
from ldpnum.frequency.pirappor import (P_MAX, TWO64, PIRappor, PIRapporPlan, 
                                       bernoulli_threshold, choose_field, is_prime, support_counts,
                                       uniform_count64)
from ldpnum.plans import TWO53, exp_lower

import naive
from conftest import EPSILONS, one_thread
from privacy_checks import ALPHA, PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio

SMALL_PRIMES = [5, 7, 11]


def oue_variance(epsilon):
    e = math.exp(epsilon)
    return 4 * e / (e - 1) ** 2


def all_rows(plan, k):
    """Exact output distributions of every input: categories 0..k-1 and the unknown value (-1)."""
    return [plan.exact_probabilities(v) for v in range(-1, k)]


def words_for(seed, n):
    return np.random.default_rng(seed).bit_generator.random_raw(3 * n)


# -- parameters and the structural exact check ------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 5, 64, 1024, 1 << 20])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_plan_is_valid_exact_and_tight(epsilon, k):
    m = PIRappor(epsilon, k)
    plan = m.plan
    assert is_prime(plan.p) and k + 1 <= plan.p < P_MAX
    assert 1 <= plan.a and 2 * plan.a < plan.p
    assert plan.alpha0 < plan.alpha1 < 1
    # the realized worst ratio, from the exact counts of every draw, is <= E and within 1e-6 of e^ε
    worst = check_exact_epsilon([], epsilon, ratio=plan.extreme_ratio())
    assert float(worst) / math.exp(epsilon) > 1 - 1e-12  # achieved: 2**-50-tight at every ε
    # the per-report variance is within 1e-5 of OUE's optimum 4e^ε/(e^ε-1)²
    assert m.variance(0.0) / oue_variance(epsilon) - 1 < 1.0001e-5
    assert m.variance(0.0) >= oue_variance(epsilon) * (1 - 1e-9)
    # bias from the non-uniformity of φ1: below 1e-6 standard errors even for 1e12 reports
    n = 10**12
    assert plan.bias_bound(n) < 1e-6 * math.sqrt(n * m.variance(0.0))


def test_smallest_prime_rule():
    """p is the smallest prime >= k + 1 meeting the variance tolerance: no smaller prime does."""
    for epsilon, k in [(1.0, 16), (0.1, 2), (4.0, 100), (8.0, 16)]:
        p, _ = choose_field(epsilon, k)
        e = float(exp_lower(epsilon))
        for q in range(k + 1, p):
            if is_prime(q):
                for b in range(1, (q + 1) // 2):
                    x = b / q
                    assert (1 + x * (e - 1)) ** 2 / (x * (1 - x)) / (4 * e) - 1 > 1e-5
    assert choose_field(1.0, 1024) == (1031, 277)


def test_uniform_counts_sum_and_extremes():
    for m in (1, 2, 3, 41, 2**20, 2**30 - 35):
        assert sum(uniform_count64(c, m) for c in range(min(m, 50))) <= TWO64
        assert {uniform_count64(c, m) for c in (0, m // 2, m - 1)} <= {TWO64 // m, -(-TWO64 // m)}
    assert sum(uniform_count64(c, 41) for c in range(41)) == TWO64


# -- exact ε by enumerating all (v, φ) --------------------------------------------------------------
@pytest.mark.parametrize("p", SMALL_PRIMES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_exact_enumeration_small_primes(epsilon, p):
    k = p - 1 if p < 11 else 3
    plan = PIRappor._with_prime(epsilon, k, p).plan
    rows = all_rows(plan, k)
    worst = check_exact_epsilon(rows, epsilon)  # every row sums to 1, all ratios <= E, tight
    assert worst == plan.extreme_ratio()  # the structural reduction is exact


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
def test_exact_enumeration_real_plan(epsilon):
    m = PIRappor(epsilon, 2)
    assert m.plan.p <= 61
    rows = all_rows(m.plan, 2)
    assert check_exact_epsilon(rows, epsilon) == m.plan.extreme_ratio()


def test_output_alphabet_is_input_free():
    plan = PIRappor._with_prime(1.0, 4, 7).plan
    supports = [{c for c, q in plan.exact_probabilities(v).items() if q > 0} for v in range(-1, 4)]
    assert all(s == supports[0] for s in supports) and len(supports[0]) == 49


def test_exact_support_probabilities():
    """p* = α1 exactly; q* = a/p up to the non-uniformity of φ1, below min(a, p-a)/2**64."""
    for epsilon, k, p in [(1.0, 4, 7), (0.5, 3, 11), (1.0, 16, None)]:
        m = PIRappor(epsilon, k) if p is None else PIRappor._with_prime(epsilon, k, p)
        plan = m.plan
        bound = Fraction(min(plan.a, plan.p - plan.a), TWO64)
        for v in (-1, 0, k - 1):
            for c in range(k):
                q = plan.support_probability(c, v)
                if c == v:
                    assert q == plan.alpha1
                else:
                    assert abs(q - plan.alpha0) < bound
        assert m.support_probabilities == (float(plan.alpha1), float(plan.alpha0))


# -- negative controls for the exact checker --------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0, 20.0])
def test_checker_rejects_inflated_epsilon(epsilon):
    good = PIRappor._with_prime(epsilon, 4, 7).plan
    bad = PIRapporPlan(good.p, good.a, bernoulli_threshold(1.25 * epsilon, good.p, good.a))
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(all_rows(bad, 4), epsilon)
    real = PIRappor(epsilon, 64).plan
    bad = PIRapporPlan(real.p, real.a, bernoulli_threshold(1.25 * epsilon, real.p, real.a))
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([], epsilon, ratio=bad.extreme_ratio())


def mutant_rows(plan, k):
    """Exact distributions of the planted bug: for odd field elements j, φ1 is forced odd (φ1 | 1, mod p)."""
    p = plan.p
    rows = []
    for v in range(-1, k):
        j = v + 1
        pf = {}
        for f in range(p):
            g = ((f | 1) % p) if j % 2 else f
            pf[g] = pf.get(g, 0) + uniform_count64(f, p)
        row = {}
        for f, cf in pf.items():
            for x in range(p):
                row[(f << 32) | x] = Fraction(cf * plan.weight((x + j * f) % p), 2**181)
        rows.append(row)
    return rows


def test_checker_rejects_value_dependent_phi1():
    plan = PIRappor._with_prime(1.0, 4, 7).plan
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(mutant_rows(plan, 4), 1.0)
    assert max_ratio(mutant_rows(plan, 4)) == math.inf


# -- the kernel's own integers ----------------------------------------------------------------------
@pytest.mark.parametrize("m", [1, 3, 41, 1030, 2**29 + 11, 2**30 - 35, 2**32 - 1])
def test_uniform_probe_boundaries_match_exact_counts(m):
    """The kernel's uniform choice switches cell exactly at ceil(c·2**64/m): the counts the plan uses."""
    cells = sorted({c for c in (0, 1, m // 3, m // 2, m - 1) if c < m})
    starts = [-(-c * TWO64 // m) for c in cells]
    words = np.array([w for s in starts for w in (s, max(s - 1, 0), min(s + 1, TWO64 - 1))] + [TWO64 - 1],
                     dtype=np.uint64)
    out = np.empty(words.size, dtype=np.uint64)
    kern.uniform_probe(words, m, out)
    np.testing.assert_array_equal(out, [(int(w) * m) >> 64 for w in words])
    for c, s in zip(cells, starts):
        assert (s * m) >> 64 == c and (c == 0 or ((s - 1) * m) >> 64 == c - 1)
    assert int(out[-1]) == m - 1


def test_mod_probe_is_exact():
    for p in (5, 41, 1031, 8830103, 482106433, P_MAX - 35):
        rng = np.random.default_rng(p)
        x = np.concatenate([rng.integers(0, 2**62, naive.rows(20_000, 2_000), dtype=np.uint64),
                            np.array([0, p - 1, p, 2 * p - 1, 2 * p, 2**62 - 1, 2**64 - 1], dtype=np.uint64)])
        out = np.empty_like(x)
        kern.mod_probe(x, p, TWO64 // p, out)
        np.testing.assert_array_equal(out, [int(v) % p for v in x])


def test_parts_probe():
    m = PIRappor(2.0, 16)
    pl = m.plan
    n = naive.rows(50_000, 5_000)
    v = np.random.default_rng(3).integers(-1, 16, n)
    words = words_for(4, n)
    outs = [np.empty(n, dtype=np.uint64) for _ in range(4)]
    kern.pirappor_parts(v, pl.p, pl.a, pl.t_b, pl.barrett, words, *outs)
    b, phi1, t, phi0 = (o.astype(object) for o in outs)
    np.testing.assert_array_equal(b, [int(int(w) >> 11 < pl.t_b) for w in words[0::3]])
    np.testing.assert_array_equal(phi1, [(int(w) * pl.p) >> 64 for w in words[1::3]])
    assert all((ti < pl.a) == bi for ti, bi in zip(t, b))
    assert all((x + (vi + 1) * f) % pl.p == ti for x, f, ti, vi in zip(phi0, phi1, t, v))


# -- kernel vs the naive reference ------------------------------------------------------------------
@pytest.mark.parametrize("epsilon,k", [(1.0, 16), (1e-3, 3), (8.0, 1024), (20.0, 5), (0.5, 1 << 20)])
def test_kernel_matches_naive(epsilon, k):
    m = PIRappor(epsilon, k)
    pl = m.plan
    n = 3000
    v = np.random.default_rng(0).integers(0, k, n)
    v[::37] = k + 5  # unknown → field element 0
    r = m.privatize(v, rng=5, unknown="uniform")
    ref = naive.randomize(np.where(v >= k, -1, v), pl.p, pl.a, pl.t_b, words_for(5, n))
    np.testing.assert_array_equal(r.codes, ref)
    assert r.codes.dtype == np.uint64


def test_small_prime_kernel_matches_naive():
    m = PIRappor._with_prime(20.0, 4, 5)
    pl = m.plan
    v = np.random.default_rng(1).integers(0, 4, 2000)
    r = m.privatize(v, rng=9)
    np.testing.assert_array_equal(r.codes, naive.randomize(v, pl.p, pl.a, pl.t_b, words_for(9, v.size)))


# -- empirical twin: sampled reports vs the exact plan ----------------------------------------------
def cell_range_count(lo, hi, m):
    """Words mapped to cells lo..hi-1 of m (telescoping sum of uniform_count64)."""
    return -((-hi * TWO64) // m) + ((-lo * TWO64) // m)


def binned_target_probabilities(plan, edges):
    """Exact probability that t = φ(j) falls in [edges[i], edges[i+1])."""
    a, p = plan.a, plan.p
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        w = 0
        if lo < a:
            w += plan.t_b * cell_range_count(lo, min(hi, a), a)
        if hi > a:
            w += (TWO53 - plan.t_b) * cell_range_count(max(lo, a) - a, hi - a, p - a)
        out.append(Fraction(w, 2**117))
    return out


def twin_check(m, v, codes, n_bins=None):
    """Chi-square of the joint (binned t = φ(v), binned φ1) table against the exact product distribution.
    For a fixed input, (t, φ1) ↔ φ is a bijection, so this compares the whole output distribution."""
    plan = m.plan
    p, a = plan.p, plan.a
    phi0, phi1 = naive.split(codes)
    t = (phi0 + (v + 1) * phi1) % p
    if n_bins is None:
        t_edges = f_edges = list(range(p + 1))
    else:
        t_edges = sorted({0, a, p} | {a + (p - a) * i // n_bins for i in range(n_bins)})
        f_edges = [p * i // n_bins for i in range(n_bins + 1)]
    pt = binned_target_probabilities(plan, t_edges)
    pf = [Fraction(cell_range_count(lo, hi, p), TWO64) for lo, hi in zip(f_edges[:-1], f_edges[1:])]
    ti = np.searchsorted(t_edges, t, side="right") - 1
    fi = np.searchsorted(f_edges, phi1, side="right") - 1
    counts = np.bincount(ti * len(pf) + fi, minlength=len(pt) * len(pf))
    probs = np.array([float(x * y) for x in pt for y in pf])
    return check_kernel_matches(counts, probs)


@pytest.mark.parametrize("epsilon,k,n_bins", [(1.0, 16, None), (4.0, 8, None), (16.0, 8, 16),
                                              (0.1, 1024, 24)])
def test_kernel_matches_plan(epsilon, k, n_bins):
    m = PIRappor(epsilon, k)
    for i, v in enumerate([0, k // 2, k - 1, -1]):
        x = np.full(200_000, v if v >= 0 else k)
        r = m.privatize(x, rng=100 + i, unknown="uniform")
        twin_check(m, v, r.codes, n_bins)


def test_support_bits_match_plan_for_every_category():
    """bool(φ(c)) for every c: Binomial(n, p*) at the true category, else Binomial(n, q*) (Bonferroni)."""
    k, n = 64, 200_000
    m = PIRappor(1.0, k)
    ps, qs = m.support_probabilities
    for i, v in enumerate([0, 31, 63]):
        agg = m.aggregate(m.privatize(np.full(n, v), rng=7 + i))
        pi = np.full(k, qs)
        pi[v] = ps
        z = (agg.counts - n * pi) / np.sqrt(n * pi * (1 - pi))
        assert 2 * stats.norm.sf(np.abs(z)).min() * k > ALPHA


def test_twin_rejects_value_dependent_phi1():
    """The planted bug (odd categories send odd φ1 only) is caught by the chi-square of φ1's distribution."""
    m = PIRappor(1.0, 16)
    pl = m.plan
    n = 20_000
    v = np.zeros(n, dtype=np.int64)  # field element 1: odd
    codes = naive.randomize(v, pl.p, pl.a, pl.t_b, words_for(11, n), phi1_bug=True)
    with pytest.raises(PrivacyViolation):
        twin_check(m, 0, codes)
    twin_check(m, 0, naive.randomize(v, pl.p, pl.a, pl.t_b, words_for(11, n)))  # the correct one passes


# -- decoding ---------------------------------------------------------------------------------------
def random_codes(p, n, seed):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, p, n, dtype=np.uint64) << np.uint64(32)) | rng.integers(0, p, n, dtype=np.uint64)


@pytest.mark.parametrize("p,a,k", [(5, 2, 4), (41, 11, 16), (1031, 277, 1024), (2969, 1, 100),
                                   (8830103, 1, 16), (P_MAX - 35, 7, 9)])
@pytest.mark.parametrize("n", [0, 1, 511, 513, 20_000])
def test_decoders_match_numpy(p, a, k, n):
    codes = random_codes(p, n, seed=n + k)
    codes.flags.writeable = False
    ref = naive.support_counts(codes, p, a, k)
    np.testing.assert_array_equal(support_counts(codes, p, a, k, method="stream"), ref)
    np.testing.assert_array_equal(support_counts(codes, p, a, k), ref)
    if p * p <= 1 << 24:
        np.testing.assert_array_equal(support_counts(codes, p, a, k, method="histogram"), ref)


def test_decoders_threads_and_slices():
    p, a, k = 41, 11, 16
    codes = random_codes(p, 300_000, seed=1)
    ref = naive.support_counts(codes, p, a, k)
    for method in ("stream", "histogram"):
        for threads in (1, 2, 3):
            got = support_counts(codes, p, a, k, method=method, n_threads=threads)
            np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("method", ["stream", "histogram"])
def test_decoders_reject_codes_outside_alphabet(method):
    p, a, k = 41, 11, 16
    codes = random_codes(p, 100_000, seed=2)
    codes[70_001] = np.uint64(41)              # φ0 = p
    codes[90_000] = np.uint64(41 << 32)        # φ1 = p
    codes[99_999] = np.uint64(2**64 - 1)
    with pytest.raises(ValueError, match=r"3 code\(s\) outside the PI-RAPPOR alphabet .* at index 70001"):
        support_counts(codes, p, a, k, method=method, n_threads=2)
    with pytest.raises(TypeError, match="uint64"):
        support_counts(codes.astype(np.int64), p, a, k, method=method)


def test_auto_method_choice():
    from ldpnum.frequency.pirappor import _histogram_pays
    assert _histogram_pays(10**6, 41, 16, 2)            # small field: histogram
    assert _histogram_pays(10**7, 1031, 1024, 2)
    assert not _histogram_pays(10**6, 2969, 16, 2)      # big table, few categories: direct
    assert not _histogram_pays(10**9, 8830103, 1024, 2)  # no table that large
    with pytest.raises(ValueError, match="p²"):
        support_counts(random_codes(8830103, 10, 0), 8830103, 1, 16, method="histogram")
    with pytest.raises(ValueError, match="method"):
        support_counts(random_codes(41, 10, 0), 41, 11, 16, method="fast")


# -- estimator ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon,k", [(0.5, 16), (1.0, 64), (4.0, 16), (8.0, 64)])
def test_unbiased_with_lemma_variance(epsilon, k):
    m = PIRappor(epsilon, k)
    rng = np.random.default_rng(k)
    probs = rng.dirichlet(np.ones(k))
    n = 200_000
    x = rng.choice(k, n, p=probs)
    est = m.estimate_frequencies(m.privatize(x, rng=9))
    truth = np.bincount(x, minlength=k) / n
    sd = np.sqrt(m.variance(truth) / n)
    assert np.all(np.abs(est.frequencies - truth) < 4.5 * sd)
    np.testing.assert_allclose(est.standard_errors, np.sqrt(m.variance(np.clip(est.frequencies, 0, 1)) / n))
    # Lemma 4.2: Var[c̃_j] = c_j (1-α0-α1)/(α1-α0) + n α0(1-α0)/(α1-α0)²
    a1, a0 = (float(f) for f in (m.plan.alpha1, m.plan.alpha0))
    c = truth * n
    lemma = c * (1 - a0 - a1) / (a1 - a0) + n * a0 * (1 - a0) / (a1 - a0) ** 2
    np.testing.assert_allclose(m.variance(truth) * n, lemma, rtol=1e-12)


def test_empirical_variance():
    k, eps, n, reps = 8, 1.0, 20_000, 400
    m = PIRappor(eps, k)
    x = np.zeros(n, dtype=np.int64)
    f = np.array([m.estimate_frequencies(m.privatize(x, rng=s)).frequencies for s in range(reps)])
    se = 4.5 * math.sqrt(2 / (reps - 1))
    assert abs(np.var(f[:, 3], ddof=1) / (m.variance(0.0) / n) - 1) < se      # a category nobody holds
    assert abs(np.var(f[:, 0], ddof=1) / (m.variance(1.0) / n) - 1) < se      # the category everyone holds
    assert abs(f[:, 0].mean() - 1) < 4.5 * math.sqrt(m.variance(1.0) / n / reps)


def test_unknown_values_count_for_no_category():
    k, n = 16, 200_000
    m = PIRappor(1.0, k)
    rng = np.random.default_rng(2)
    x = rng.integers(0, k, n)
    x[: n // 4] = 99  # a quarter unknown
    est = m.estimate_frequencies(m.privatize(x, rng=3, unknown="uniform"))
    truth = np.bincount(x[x < k], minlength=k) / n
    assert np.all(np.abs(est.frequencies - truth) < 4.5 * np.sqrt(m.variance(truth) / n))
    assert abs(est.frequencies.sum() - 0.75) < 4.5 * math.sqrt(k * m.variance(0.1) / n)


# -- aggregates, specs, reports ---------------------------------------------------------------------
def test_merge_equals_aggregate_of_concatenation():
    m = PIRappor(1.0, 32)
    x = np.random.default_rng(0).integers(0, 32, 9000)
    parts = [m.privatize(c, rng=i) for i, c in enumerate(np.array_split(x, 3))]
    whole = m.aggregate(ldp.Reports.concat(parts))
    aggs = [m.aggregate(r) for r in parts]
    assert sum(aggs) == whole == ldp.Aggregate.merge(aggs)
    assert whole.n_reports == 9000 and whole.counts.shape == (32,)
    assert m.empty_aggregate() + aggs[0] == aggs[0] and m.empty_aggregate().n_reports == 0
    assert m.estimate_frequencies(whole) == m.estimate_frequencies(ldp.Reports.concat(parts))
    with pytest.raises(ValueError, match="no reports"):
        m.estimate_frequencies(m.empty_aggregate())
    for method in ("stream", "histogram"):
        assert m.aggregate(ldp.Reports.concat(parts), method=method) == whole


def test_spec_round_trip_and_mismatch():
    m = PIRappor(2.0, 100)
    assert m.spec.n_cells == 100 and m.spec.get("p") == m.plan.p
    assert ldp.from_spec(ldp.Spec.from_json(m.spec.to_json())) == m
    small = PIRappor._with_prime(2.0, 4, 7)
    assert ldp.from_spec(small.spec) == small and small.plan.p == 7
    r = m.privatize(np.arange(100), rng=0)
    with pytest.raises(ldp.SpecMismatchError):
        PIRappor(2.0, 101).aggregate(r)
    with pytest.raises(ldp.SpecMismatchError):
        PIRappor(2.5, 100).estimate_frequencies(m.aggregate(r))
    with pytest.raises(TypeError, match="Reports"):
        m.aggregate(r.codes)
    assert repr(m) == "PIRappor(epsilon=2.0, k=100)"


def test_reports_object():
    m = PIRappor(1.0, 16)
    r = m.privatize(np.arange(16), rng=0)
    assert isinstance(r, ldp.Reports) and not r.codes.flags.writeable
    sub = r[2:5]
    assert isinstance(sub, ldp.Reports) and len(sub) == 3 and r[2] == int(r.codes[2])
    again = ldp.Reports(np.array(r.codes), m.spec)
    assert again == r and ldp.Reports(r.codes.astype(np.int64), m.spec) == r
    bad = np.array(r.codes)
    bad[5] = np.uint64(m.plan.p)
    with pytest.raises(ValueError, match=r"1 value\(s\) outside the PI-RAPPOR alphabet .* first at index 5"):
        ldp.Reports(bad, m.spec)
    with pytest.raises(ValueError, match="outside the output alphabet"):
        ldp.Reports(r.codes, ldp.GRR(1.0, 16).spec)
    with pytest.raises(ValueError, match="one-dimensional"):
        ldp.Reports(r.codes.reshape(4, 4), m.spec)
    with pytest.raises(TypeError, match="integers"):
        ldp.Reports(r.codes.astype(float), m.spec)


# -- validation -------------------------------------------------------------------------------------
@pytest.mark.parametrize("x,exc,msg", [
    (np.array([0.0, 1.0]), TypeError, "integer category codes"),
    (np.array([True, False]), TypeError, "integer category codes"),
    (np.array([0, 5, 7, 1]), ValueError, r"2 value\(s\) outside the categories \[0, 5\), first at index 1"),
    (np.array([-1, 2]), ValueError, "first at index 0"),
    (np.zeros((2, 2), dtype=int), ValueError, "one-dimensional"),
])
def test_bad_categories_draw_nothing(x, exc, msg, monkeypatch):
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError))
    with pytest.raises(exc, match=msg):
        PIRappor(1.0, 5).privatize(x)


def test_accepted_forms_share_one_kernel_signature():
    import pandas as pd

    m = PIRappor(1.0, 5)
    ref = m.privatize(np.array([0, 4, 2]), rng=0)
    for x in ([0, 4, 2], np.array([0, 4, 2], dtype=np.uint8), pd.Series([0, 4, 2], dtype="Int64"),
              np.array([0, 4, 2], dtype=">i4"), np.array([0, 0, 4, 4, 2, 2])[::2]):
        assert m.privatize(x, rng=0) == ref
    assert m.privatize(pd.Series([0, None, 2], dtype="Int64"), nan_policy="impute", fill_value=4, rng=0) == ref
    assert len(kern.pirappor_kernel.signatures) == 1


def test_bad_parameters():
    for k, exc in [(1, ValueError), (2.0, TypeError), (True, TypeError), ((1 << 24) + 1, ValueError)]:
        with pytest.raises(exc):
            PIRappor(1.0, k)
    for eps, exc in [(0.0, ValueError), (float("nan"), ValueError), (21.0, ValueError), ("1", TypeError)]:
        with pytest.raises(exc):
            PIRappor(eps, 4)
    for p, exc in [(9, ValueError), (5, ValueError), (P_MAX + 3, ValueError), (7.0, TypeError)]:
        with pytest.raises(exc):
            PIRappor._with_prime(1.0, 5, p)


def test_empty_input_and_secure_default():
    m = PIRappor(1.0, 8)
    r = m.privatize(np.array([], dtype=np.int64))
    assert len(r) == 0 and r.codes.dtype == np.uint64 and m.aggregate(r).n_reports == 0
    x = np.zeros(1000, dtype=np.int64)
    assert m.privatize(x) != m.privatize(x)


# -- reproducibility --------------------------------------------------------------------------------
def test_reproducible_chunked_and_thread_independent():
    m = PIRappor(1.0, 64)
    x = np.random.default_rng(0).integers(0, 64, 2 * _random.BLOCK_RECORDS + 12345)
    whole = m.privatize(x, rng=np.random.default_rng(5))
    assert whole == m.privatize(x, rng=5) and whole != m.privatize(x, rng=6)
    g = np.random.default_rng(5)
    assert ldp.Reports.concat([m.privatize(c, rng=g) for c in np.array_split(x, 7)]) == whole
    with one_thread():
        one = m.privatize(x, rng=5)
    assert one == whole
