"""Microsoft's numeric telemetry: OneBitMean and DBitFlip, one-shot and memoized (ldpnum/longitudinal/telemetry.py).

The common checks run on them too: tests/common/test_common.py (one-shot, CASES) and
tests/longitudinal/test_longitudinal.py (memoized, LCASES, with γ > 0). Here: γ = 0, the paper's formulas, the
α-point rounding's unbiasedness, memoization within a rounding cell, the estimators against their closed-form
variances through the mechanisms' reports (dBitFlip's estimator alone: tests/estimation/test_bitflip.py), the
kernels against tests/naive.py, bad input.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
import naive
from ldpnum import _random
from ldpnum.base import lookup, memoized_mechanisms, registered
from ldpnum.longitudinal.keys import keyed_words
from ldpnum.longitudinal.telemetry import (DBitFlip, MemoizedDBitFlip, MemoizedOneBitMean, OneBitMean,
                                           flip_threshold)
from ldpnum import plans
from ldpnum.plans import TWO53, binary_plan, exp_lower
from privacy_checks import PrivacyViolation, check_exact_epsilon

ALPHA = 1e-6
#: z beyond which an unbiasedness test fails: two-sided 1e-6.
Z = stats.norm.isf(ALPHA / 2)


def paper_epsilon1(epsilon, gamma):
    """The paper's ε of one report after output perturbation: ``log((γ + (1-γ)e^ε)/((1-γ) + γ e^ε))``."""
    e = math.exp(epsilon)
    return math.log((gamma + (1 - gamma) * e) / ((1 - gamma) + gamma * e))


# -- construction and registries ------------------------------------------------------------------------------

def test_memoize_chooses_the_class_and_its_registry():
    one, memo = ldp.OneBitMean(1.0, (0, 10)), ldp.OneBitMean(1.0, (0, 10), memoize=True)
    assert type(one) is OneBitMean and type(memo) is MemoizedOneBitMean and isinstance(memo, OneBitMean)
    assert type(ldp.DBitFlip(1.0, (0, 1), 4, 2)) is DBitFlip
    assert type(ldp.DBitFlip(1.0, (0, 1), 4, 2, memoize=True)) is MemoizedDBitFlip
    # One-shot classes are listed with the others (the CLI, pandas and the common suite privatize them with
    # rng alone); the memoized ones, whose privatize needs keys, in their own registry.
    assert {"one_bit_mean", "d_bit_flip"} <= set(registered())
    assert {"memoized_one_bit_mean", "memoized_d_bit_flip"} <= set(memoized_mechanisms())
    assert lookup("1BitMean") is OneBitMean and lookup("dBitFlip") is DBitFlip
    assert lookup("MemoizedOneBitMean") is MemoizedOneBitMean


def test_memoized_mechanisms_pickle_and_rebuild_from_their_spec():
    import pickle

    for m in (ldp.OneBitMean(2.0, (0, 100), memoize=True, grid_points=9, gamma=0.2),
              ldp.DBitFlip(2.0, (0, 100), 8, 3, memoize=True, gamma=0.1), ldp.DBitFlip(1.0, (0, 1), 4, 2)):
        assert pickle.loads(pickle.dumps(m)) == m and ldp.from_spec(m.spec) == m
        if m.memoized:
            r = m.privatize([1.0], keys=ldp.ClientKeys.generate(1, rng=0), round=3)
            assert ldp.from_spec(r.spec) == m.at_round(3) and "round=3" in repr(m.at_round(3))
            assert m.aggregate(r).spec == r.spec == m.at_round(3).aggregate(r).spec
        else:
            assert ldp.from_spec(m.privatize([1.0]).spec) == m


def test_one_shot_one_bit_mean_is_stochastic_rounding():
    # The same randomizer (one idea, one implementation): the same plan and kernel, so the same reports for one
    # seed, and the same estimate.
    x = np.random.default_rng(0).uniform(-3, 7, 10_000)
    ob, sr = ldp.OneBitMean(1.5, (-3, 7)), ldp.StochasticRounding(1.5, (-3, 7))
    assert ob.plan == sr.plan and np.array_equal(ob.code_estimates, sr.code_estimates)
    a, b = ob.privatize(x, rng=1), sr.privatize(x, rng=1)
    assert np.array_equal(a.codes, b.codes) and a.spec.mechanism == "one_bit_mean"
    assert ob.estimate_mean(a).value == sr.estimate_mean(b).value


def test_paper_estimator_is_the_two_output_estimator():
    # 1BitMean's estimate: (high - low)/n · Σ (Y (e^ε + 1) - 1)/(e^ε - 1) + low, with the plan's exact p, q.
    m = ldp.OneBitMean(1.0, (0, 3600))
    y = m.privatize(np.random.default_rng(2).uniform(0, 3600, 5000), rng=3).codes.astype(float)
    p, q = m.plan.t_hi / TWO53, m.plan.t_lo / TWO53
    assert (p + q == 1) and (p / q) == pytest.approx(math.e, rel=1e-12)
    assert m.estimate_mean(m.aggregate(m.privatize(
        np.random.default_rng(2).uniform(0, 3600, 5000), rng=3))).value == pytest.approx(
        3600 * np.mean((y - q) / (p - q)), rel=1e-12)


# -- exact ε ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("epsilon, gamma, grid", [(2.0, 0.0, 5), (2.0, 0.1, 5), (0.3, 0.45, 2), (8.0, 0.01, 33)])
def test_one_bit_mean_epsilons_are_exact_and_tight(epsilon, gamma, grid):
    m = ldp.OneBitMean(epsilon, (0, 1), memoize=True, grid_points=grid, gamma=gamma)
    states = m.memo_states()
    check_exact_epsilon([m.permanent_probabilities(s) for s in states], epsilon)
    check_exact_epsilon([m.report_probabilities(s) for s in states], m.epsilon)
    assert m.epsilon_permanent == epsilon and m.epsilon == pytest.approx(paper_epsilon1(epsilon, gamma), rel=1e-12)
    assert m.gamma >= gamma and m.gamma - gamma < 1e-9
    if gamma == 0:
        assert m.epsilon == epsilon and m.instantaneous_words == 0


def test_one_bit_mean_epsilon_check_rejects_a_flip_rounded_down():
    # Negative control: γ realized below the γ the stated ε1 assumes (rounded down by 2**-20) leaks more than ε1.
    m = ldp.OneBitMean(2.0, (0, 1), memoize=True, grid_points=3, gamma=0.1)
    m._t_gamma -= TWO53 >> 20
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([m.report_probabilities(s) for s in m.memo_states()], m.epsilon)


def test_flip_threshold_is_the_least_admissible():
    plan = binary_plan(3.0)
    t, eps1 = flip_threshold(plan, 0.2, 3.0)
    ratio = lambda r: Fraction(r * TWO53 + (TWO53 - 2 * r) * plan.t_hi, r * TWO53 + (TWO53 - 2 * r) * plan.t_lo)  # noqa
    assert ratio(t) <= exp_lower(eps1) < ratio(t - 1) or t == math.ceil(0.2 * TWO53)
    assert t >= 0.2 * TWO53


@pytest.mark.parametrize("epsilon, buckets, d, gamma", [(1.0, 5, 1, 0.0), (2.0, 6, 2, 0.0), (4.0, 4, 3, 0.1),
                                                       (0.5, 5, 2, 0.3)])
def test_d_bit_flip_epsilons_are_exact_and_tight(epsilon, buckets, d, gamma):
    m = ldp.DBitFlip(epsilon, (0, 1), buckets, d, memoize=True, gamma=gamma)
    rows = [m.permanent_probabilities(v) for v in range(buckets)]
    check_exact_epsilon(rows, epsilon)
    check_exact_epsilon([m.report_probabilities(v) for v in range(buckets)], m.epsilon)
    bit_eps = epsilon if d == 1 else epsilon / 2
    want = paper_epsilon1(bit_eps, gamma) * (1 if d == 1 else 2)
    assert m.epsilon == pytest.approx(want, rel=1e-12) and m.epsilon_permanent == epsilon
    one_shot = ldp.DBitFlip(epsilon, (0, 1), buckets, d)
    assert one_shot.exact_probabilities(0) == m.permanent_probabilities(0)


def test_d_bit_flip_bits_at_half_epsilon_for_one_bucket_waste_half_the_budget():
    # Why d = 1 reports its bit at ε: at the paper's ε/2 the realized guarantee is ε/2 (one bit can differ at one
    # of the two buckets only), which the tight check rejects as a wrong formula.
    m = ldp.DBitFlip(2.0, (0, 1), 5, 1)
    assert m.epsilon_bit == 2.0
    m._plan = binary_plan(1.0)
    with pytest.raises(PrivacyViolation, match="not tight"):
        check_exact_epsilon([m.exact_probabilities(v) for v in range(5)], 2.0)


def test_d_bit_flip_epsilon_check_rejects_bits_at_full_epsilon():
    # Negative control for d >= 2: bits at ε instead of ε/2 realize 2ε.
    m = ldp.DBitFlip(2.0, (0, 1), 5, 2)
    m._plan = binary_plan(2.0)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([m.exact_probabilities(v) for v in range(5)], 2.0)


# -- α-point rounding and memoization ------------------------------------------------------------------------------

def test_alpha_point_rounding_is_unbiased_over_offsets():
    # E over the people's offsets of the rounded value is x (to 2**-53 of a step); z-test with the rounding's
    # variance Δ² f (1 - f).
    m = ldp.OneBitMean(1.0, (0, 100), memoize=True, grid_points=11)
    n = 200_000
    keys = ldp.ClientKeys.generate(n, rng=20)
    for j, x in enumerate([0.0, 3.7, 41.25, 99.99, 100.0]):
        grid = m.grid[m.grid_indices(np.full(n, x), keys=keys)]
        f = (x / 10) % 1 if x < 100 else 0.0
        sd = 10 * math.sqrt(f * (1 - f) / n)
        if sd == 0:
            assert np.all(grid == x)
        else:
            assert abs(grid.mean() - x) < Z * sd


def test_alpha_point_rounding_rounds_up_exactly_above_the_offset():
    m = ldp.OneBitMean(1.0, (0, 1), memoize=True, grid_points=5)
    keys = ldp.ClientKeys.generate(2000, rng=21)
    alpha = m.offsets(keys)
    assert np.all((0 <= alpha) & (alpha < 1))
    x = np.random.default_rng(22).uniform(0, 1, 2000)
    pos = x * 4
    want = np.floor(pos) + (alpha < pos - np.floor(pos))
    got = m.grid_indices(x, keys=keys)
    close = np.abs(alpha - (pos - np.floor(pos))) < 1e-12  # ties decided by the last bits: not compared
    assert np.array_equal(got[~close], want[~close].astype(np.int64))
    assert np.array_equal(m.memo_values(x, keys=keys), got.astype(np.uint64))


def test_a_value_that_moves_within_its_rounding_cell_keeps_its_answer():
    # Each person's value moves within one grid step on the same side of their α-point: same grid point, same
    # permanent bit, and (γ = 0) the same report on every round; the ledger sees one memoized value.
    m = ldp.OneBitMean(1.0, (0, 10), memoize=True, grid_points=6)
    n = 5000
    keys = ldp.ClientKeys.generate(n, rng=23)
    alpha = m.offsets(keys)
    g = np.random.default_rng(24)
    step = g.integers(0, 5, n)
    below = g.random(n) < 0.5
    lo_f, hi_f = np.where(below, 0.05 * alpha, alpha + 0.05 * (1 - alpha)), np.where(below, 0.95 * alpha,
                                                                                      alpha + 0.95 * (1 - alpha))
    day1, day2 = 2.0 * (step + lo_f), 2.0 * (step + hi_f)
    assert np.array_equal(m.memo_values(day1, keys=keys), m.memo_values(day2, keys=keys))
    assert np.array_equal(m.memo_fingerprints(day1, keys=keys), m.memo_fingerprints(day2, keys=keys))
    r1, r2 = m.privatize(day1, keys=keys, round=1), m.privatize(day2, keys=keys, round=2)
    assert np.array_equal(r1.codes, r2.codes)
    # Crossing the α-point changes the grid point (and so, for about half the people, the answer).
    crossed = np.where(below, 2.0 * (step + alpha + 0.5 * (1 - alpha)), 2.0 * (step + 0.5 * alpha))
    assert np.all(m.memo_values(crossed, keys=keys) != m.memo_values(day1, keys=keys))


def test_same_key_and_grid_point_give_the_same_bit_and_output_perturbation_flips_it():
    m = ldp.OneBitMean(1.0, (0, 1), memoize=True, grid_points=3, gamma=0.25)
    keys = ldp.ClientKeys.generate(1, rng=25)
    perm = int(m.permanent([1.0], keys=keys)[0])
    reports = np.array([m.privatize([1.0], keys=keys, rng=r).codes[0] for r in range(2000)])
    flipped = np.mean(reports != perm)
    assert abs(flipped - m.gamma) < Z * math.sqrt(m.gamma * (1 - m.gamma) / 2000)


@pytest.mark.parametrize("buckets, d", [(8, 3), (32, 4), (1000, 5)])
def test_d_bit_flip_keyed_sample_is_the_one_shot_sampler_on_the_keyed_words(buckets, d):
    # The fused kernels derive the sample's words themselves: by rank (C(8, 3), C(32, 4) <= 2**16) or Floyd's picks
    # (C(1000, 5)), the sample tests/naive.py draws from keyed_words.
    m = ldp.DBitFlip(1.0, (0, 8), buckets, d, memoize=True)
    assert m.by_rank == (math.comb(buckets, d) <= 1 << 16) and m.sample_words == (1 if m.by_rank else d)
    keys = ldp.ClientKeys.generate(300, rng=28)
    words = keyed_words(keys, m.sample_tweak, np.zeros(300, dtype=np.uint64), d).reshape(300, d)
    want = np.array([naive.d_bit_flip_sample(w, buckets, d) for w in words])
    assert np.array_equal(m.sampled_buckets(keys), want)
    assert not np.array_equal(m.sampled_buckets(keys[::-1]), want)  # negative control: other people's keys


def test_d_bit_flip_rank_and_bits_are_exact_at_the_word_boundaries():
    # The rank's cells are exactly rank_distribution's: the first word of cell j, ceil(j·2**64/M), gives subset j
    # and the word just below it subset j - 1 (a cell one word off would fail here); a bit is 1 exactly below its
    # 32-bit threshold: t_hi for the field holding the value, t_lo for the others.
    m = ldp.DBitFlip(2.0, (0, 6), 6, 3)
    subsets = plans.subsets_by_rank(6, 3)
    total = len(subsets)
    firsts = [-(-j * 2**64 // total) for j in range(total)] + [2**64]
    assert [plans.uniform_count64(j, total) for j in range(total)] == [firsts[j + 1] - firsts[j] for j in range(total)]
    assert sum(plans.rank_distribution(6, 3).values()) == 1
    t_lo, t_hi = (int(t) for t in m._thresholds32())
    cases = [(firsts[j], j) for j in range(total)] + [(firsts[j] - 1, j - 1) for j in range(1, total)]
    words, values, want = [], [], []
    for word, j in cases:
        sample = subsets[j]
        for low, high, bits in [(t_lo - 1, t_hi - 1, (1, 1, 0)), (t_lo, t_hi, (0, 0, 0))]:
            words += [word, high << 32 | low, 0xFFFFFFFF]  # field 2's low half at the top: bit 0
            values.append(sample[1] + 0.5)  # field 1 holds the value (its bit at t_hi), fields 0 and 2 do not
            want.append(sum((s_t << 1 | b_t) << (t * m._width) for t, (s_t, b_t) in enumerate(zip(sample, bits))))
    out = np.empty(len(values), dtype=np.uint64)
    m._run_kernel(np.array(values), np.array(words, dtype=np.uint64), out)
    assert out.tolist() == want


def test_d_bit_flip_sample_is_fixed_by_the_key_alone():
    m = ldp.DBitFlip(1.0, (0, 8), 8, 3, memoize=True)
    keys = ldp.ClientKeys.generate(300, rng=26)
    sample = m.sampled_buckets(keys)
    assert np.all(np.diff(sample, axis=1) > 0)
    for x in (np.zeros(300), np.full(300, 7.5), np.random.default_rng(27).uniform(0, 8, 300)):
        codes = m.privatize(x, keys=keys).codes
        fields = [(codes >> np.uint64(4 * t + 1)) & np.uint64(7) for t in range(3)]
        assert np.array_equal(np.stack(fields, axis=1).astype(np.int64), sample)


# -- estimators: unbiased, with their closed-form variances -------------------------------------------------------

@pytest.mark.parametrize("gamma", [0.0, 0.2])
def test_memoized_mean_is_unbiased_with_the_closed_form_variance(gamma):
    m = ldp.OneBitMean(1.0, (0, 3600), memoize=True, grid_points=7, gamma=gamma)
    n = 200_000
    x = np.random.default_rng(30).beta(2, 5, n) * 3600
    keys = ldp.ClientKeys.generate(n, rng=31)
    est = m.estimate_mean(m.privatize(x, keys=keys, rng=32, round=1))
    sd = math.sqrt(np.sum(m.variance(x))) / n
    assert abs(est.value - x.mean()) < Z * sd
    assert est.standard_error == pytest.approx(sd, rel=0.02)
    assert est.epsilon == m.epsilon


def test_memoized_report_law_over_keys_matches_the_marginal_over_offsets():
    # An interior value (its grid point depends on the offset): reports of many people holding it follow
    # output_probabilities, the mixture over the two neighbouring grid points.
    m = ldp.OneBitMean(2.0, (0, 1), memoize=True, grid_points=4, gamma=0.1)
    n = 200_000
    reports = m.privatize(np.full(n, 0.45), keys=ldp.ClientKeys.generate(n, rng=33), rng=34)
    p1 = m.output_probabilities(0.45)[1]
    assert abs(reports.codes.mean() - p1) < Z * math.sqrt(p1 * (1 - p1) / n)


def _histogram_check(m, est, x, n):
    h = np.bincount(m.buckets_of(x), minlength=m.buckets) / n
    p, q = m.support_probabilities
    var = ((m.buckets / m.d) * (p * q / (p - q) ** 2 + h) - h) / n
    z = (est.frequencies - h) / np.sqrt(var)
    assert np.all(np.abs(z) < Z), z
    np.testing.assert_allclose(est.standard_errors, np.sqrt(var), rtol=0.05)


@pytest.mark.parametrize("buckets, d", [(8, 1), (8, 3), (32, 4)])
def test_histogram_is_unbiased_with_the_closed_form_variance(buckets, d):
    m = ldp.DBitFlip(1.0, (0, 100), buckets, d)
    n = 200_000
    x = np.random.default_rng(40).gamma(2.0, 15.0, n).clip(0, 100)
    _histogram_check(m, m.estimate_histogram(m.privatize(x, rng=41)), x, n)


def test_memoized_histogram_is_unbiased_and_aggregates_merge_within_a_round():
    m = ldp.DBitFlip(2.0, (0, 100), 10, 2, memoize=True, gamma=0.1)
    n = 200_000
    x = np.random.default_rng(42).gamma(2.0, 15.0, n).clip(0, 100)
    keys = ldp.ClientKeys.generate(n, rng=43)
    a = m.aggregate(m.privatize(x[:n // 2], keys=keys[:n // 2], rng=44, round=5))
    b = m.aggregate(m.privatize(x[n // 2:], keys=keys[n // 2:], rng=45, round=5))
    est = m.estimate_histogram(a + b)
    _histogram_check(m, est, x, n)
    dist = m.estimate_distribution(a + b)
    assert dist.probabilities.sum() == pytest.approx(1.0) and np.all(dist.probabilities >= 0)
    np.testing.assert_array_equal(dist.bin_edges, m.bucket_edges)


def test_memoized_vs_one_shot_mse_at_equal_epsilon():
    # Measured, not a target: at equal ε the memoized 1BitMean with γ = 0 has the one-shot's law, and with γ it
    # is the one-shot 1BitMean at ε1 (output perturbation of randomized response is randomized response).
    n, reps = 100_000, 30
    x = np.random.default_rng(50).beta(2, 5, n) * 100
    keys = ldp.ClientKeys.generate(n, rng=51)
    one = ldp.OneBitMean(1.0, (0, 100))
    memo = ldp.OneBitMean(1.0, (0, 100), memoize=True, grid_points=11)
    mse_one = np.mean([(one.estimate_mean(one.privatize(x, rng=100 + r)).value - x.mean()) ** 2
                       for r in range(reps)])
    k = [ldp.ClientKeys.generate(n, rng=200 + r) for r in range(reps)]  # fresh people (keys) each collection
    mse_memo = np.mean([(memo.estimate_mean(memo.privatize(x, keys=k[r], rng=300 + r)).value - x.mean()) ** 2
                        for r in range(reps)])
    want = np.sum(one.variance(x)) / n ** 2
    for mse in (mse_one, mse_memo):  # each a mean of 30 squared normal errors: within a χ²_30 band
        assert stats.chi2.ppf(ALPHA, reps) / reps < mse / want < stats.chi2.isf(ALPHA, reps) / reps
    del keys


# -- kernels against the naive references ------------------------------------------------------------------------

@pytest.mark.parametrize("buckets, d", [(12, 3), (300, 4)])  # sample by rank, Floyd's
def test_one_shot_d_bit_flip_matches_naive(buckets, d):
    m = ldp.DBitFlip(1.5, (-2, 9), buckets, d)
    x = np.random.default_rng(60).uniform(-3, 10, 500)
    with pytest.warns(ldp.ClippingWarning):
        r = m.privatize(x, rng=61)
    words = _random.resolve_rng(61).draw(500 * m.words_per_record)
    want = naive.d_bit_flip(x, -2.0, 9.0, buckets, d, m.plan.t_lo, m.plan.t_hi, words)
    assert r.codes.tolist() == want


@pytest.mark.parametrize("buckets, d", [(7, 2), (300, 3)])  # sample by rank, Floyd's
def test_memoized_d_bit_flip_matches_naive(buckets, d):
    m = ldp.DBitFlip(2.0, (0, 1), buckets, d, memoize=True, gamma=0.2)
    keys = ldp.ClientKeys.generate(300, rng=62)
    x = np.random.default_rng(63).uniform(0, 1, 300)
    r = m.privatize(x, keys=keys, rng=64)
    words = _random.resolve_rng(64).draw(300 * d)
    want = naive.memoized_d_bit_flip(x, 0.0, 1.0, buckets, d, m.plan.t_lo, m.plan.t_hi, m._t_gamma,
                                     keys.to_bytes(), m.sample_tweak, m.tweak, words)
    assert r.codes.tolist() == want


@pytest.mark.parametrize("gamma", [0.0, 0.3])
def test_memoized_one_bit_mean_matches_naive(gamma):
    m = ldp.OneBitMean(1.0, (10, 20), memoize=True, grid_points=9, gamma=gamma)
    keys = ldp.ClientKeys.generate(300, rng=65)
    x = np.random.default_rng(66).uniform(10, 20, 300)
    x[:3] = [10.0, 20.0, 12.5]
    r = m.privatize(x, keys=keys, rng=67)
    words = _random.resolve_rng(67).draw(300) if gamma else None
    want = naive.memoized_one_bit_mean(x, 10.0, 20.0, 9, m.plan.t_lo, m.plan.t_hi, m._t_gamma, keys.to_bytes(),
                                       m.offset_tweak, m.tweak, words)
    assert r.codes.tolist() == want


# -- reports, aggregates and bad input -----------------------------------------------------------------------------

def test_d_bit_flip_codes_and_counts_are_checked():
    m = ldp.DBitFlip(1.0, (0, 1), 6, 2)
    r = m.privatize(np.linspace(0, 1, 50), rng=70)
    assert ldp.Reports(r.codes.astype(np.int64), m.spec) == r
    w = 4  # bit_length(5) + 1
    for bad in (np.uint64(6 << 1) | (np.uint64(7 << 1) << np.uint64(w)),  # bucket 6 of 6
                np.uint64(3 << 1) | (np.uint64(1 << 1) << np.uint64(w)),  # not increasing
                np.uint64(1 << 1) | (np.uint64(2 << 1) << np.uint64(w)) | np.uint64(1 << 20)):  # stray bit
        with pytest.raises(ValueError, match="increasing buckets"):
            ldp.Reports(np.array([bad], dtype=np.uint64), m.spec)
    agg = m.aggregate(r)
    assert agg.counts[:6].sum() == 2 * 50 and np.all(agg.counts[6:] <= agg.counts[:6])
    with pytest.raises(ValueError, match="sum to"):
        ldp.Aggregate(agg.counts, m.spec, n_reports=49)
    with pytest.raises(ValueError, match="ones among"):
        ldp.Aggregate(np.r_[agg.counts[:6], agg.counts[:6] + 1], m.spec, n_reports=50)


@pytest.mark.parametrize("build, err, match", [
    (lambda: ldp.OneBitMean(1.0, (1, 0)), ValueError, "bounds"),
    (lambda: ldp.OneBitMean(1.0, (0, 1), gamma=0.1), TypeError, "memoize=True"),
    (lambda: ldp.OneBitMean(1.0, (0, 1), memoize=True, gamma=0.5), ValueError, "gamma"),
    (lambda: ldp.OneBitMean(1.0, (0, 1), memoize=True, gamma=-0.1), ValueError, "gamma"),
    (lambda: ldp.OneBitMean(1.0, (0, 1), memoize=True, gamma=float("nan")), ValueError, "gamma"),
    (lambda: ldp.OneBitMean(1.0, (0, 1), memoize=True, grid_points=1), ValueError, "grid_points"),
    (lambda: ldp.OneBitMean(1.0, (0, 1), memoize="yes"), TypeError, "memoize"),
    (lambda: ldp.DBitFlip(1.0, (0, np.inf), 4, 2), ValueError, "bounds"),
    (lambda: ldp.DBitFlip(1.0, (0, 1), 4, 5), ValueError, "d must be"),
    (lambda: ldp.DBitFlip(1.0, (0, 1), 1, 1), ValueError, "buckets"),
    (lambda: ldp.DBitFlip(1.0, (0, 1), 1024, 6), ValueError, "does not fit one 64-bit code"),
    (lambda: ldp.DBitFlip(1.0, (0, 1), 8, 2, gamma=0.1), TypeError, "memoize=True"),
    (lambda: ldp.DBitFlip(1.0, (0, 1), 8, 2, memoize=True, gamma=0.5), ValueError, "gamma"),
])
def test_bad_parameters_get_one_clear_error(build, err, match):
    with pytest.raises(err, match=match):
        build()


@pytest.mark.parametrize("m", [ldp.OneBitMean(1.0, (0, 1), memoize=True, gamma=0.1),
                               ldp.DBitFlip(1.0, (0, 1), 8, 2, memoize=True, gamma=0.1)], ids=lambda m: m.name)
def test_missing_keys_or_bad_values_draw_nothing(m):
    g = np.random.default_rng(80)
    before = g.bit_generator.state
    with pytest.raises(TypeError, match="key"):
        m.privatize([0.5, 0.2], rng=g)
    with pytest.raises(ValueError, match="missing"):
        m.privatize([0.5, np.nan], keys=ldp.ClientKeys.generate(2, rng=1), rng=g)
    with pytest.raises(ValueError, match="keys for 3 people"):
        m.privatize([0.5, 0.2], keys=ldp.ClientKeys.generate(3, rng=1), rng=g)
    assert g.bit_generator.state == before


def test_ledger_charges_each_distinct_grid_point_once():
    # 30 rounds: values that stay on one side of their α-point cost min(ε∞, 30 ε1) once; a value that alternates
    # between two grid points costs that for each of the two, however often it returns; naive collection, 30 ε1.
    m = ldp.OneBitMean(1.0, (0, 10), memoize=True, grid_points=2, gamma=0.2)
    keys = ldp.ClientKeys.generate(3, rng=90)
    alpha = m.offsets(keys)
    below, above = 10 * alpha * 0.5, 10 * (alpha + (1 - alpha) * 0.5)
    ledger = ldp.PrivacyLedger()
    for r in range(30):
        x = np.array([below[0], above[1], (below if r % 2 else above)[2]])
        ledger.record_longitudinal(m, people=[0, 1, 2], fingerprints=m.memo_fingerprints(x, keys=keys), round=r)
    totals = ledger.totals().reindex([0, 1, 2]).to_numpy()
    np.testing.assert_allclose(totals, [1.0, 1.0, 2.0])
    assert 30 * m.epsilon > 2.0


def test_front_ends_build_and_estimate_the_one_shot_mechanisms():
    # The classes are called with their __init__'s parameters (what inspect.signature shows the front ends), so
    # the command line offers them; the distribution estimate takes the front ends' n_bins and method.
    import inspect

    from ldpnum import cli
    from ldpnum.base import bounded_mechanisms

    assert {"one_bit_mean", "d_bit_flip"} <= set(bounded_mechanisms())
    assert list(inspect.signature(ldp.DBitFlip).parameters)[:4] == ["epsilon", "bounds", "buckets", "d"]
    m = cli.make_mechanism("dbitflip", 2.0, (0, 10), {"buckets": 8})
    assert m.d == 8 and m.buckets == 8  # 4-bit fields: all 8 buckets fit one report
    agg = m.aggregate(m.privatize(np.random.default_rng(1).uniform(0, 10, 5000), rng=2))
    assert m.estimate_distribution(agg, n_bins=8, method="ems-cv").method == "norm-sub"
    simplex = m.estimate_distribution(agg, method="simplex")
    assert simplex.method == "simplex" and simplex.probabilities.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="histogram of its 8 buckets"):
        m.estimate_distribution(agg, n_bins=16)
