"""Likelihood-based randomized response (``ldpnum/estimation/likelihood.py``): the constrained MLE against a
brute-force maximisation on a grid, the likelihood-ratio intervals against their defining equation, bad input,
and coverage."""

import math

import numpy as np
import pytest
from scipy.stats import binom, chi2

import ldpnum as ldp
from ldpnum.estimation.likelihood import BinaryLikelihood, GRRLikelihood, grr_mle, lr_interval

CUT = float(chi2.ppf(0.95, 1))


def _rr(epsilon):
    rr = ldp.RandomizedResponse(epsilon)
    return rr, *rr._p_q


# -- two outputs -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("epsilon, n, ones", [(1.0, 20, 0), (1.0, 20, 3), (1.0, 20, 11), (1.0, 20, 20),
                                              (0.5, 200, 131), (2.0, 50, 44), (2.0, 10_000, 1234)])
def test_binary_mle_is_the_grid_maximum_and_the_clipped_unbiased_estimate(epsilon, n, ones):
    rr, p, q = _rr(epsilon)
    lik = BinaryLikelihood(ones, n, p, q)
    grid = np.linspace(0.0, 1.0, 200_001)
    best = grid[np.argmax(lik.log_likelihood(grid))]
    assert abs(lik.mle - best) <= 1e-5  # the grid's spacing, 5e-6, plus a flat top at the boundary
    agg = ldp.Aggregate([n - ones, ones], rr.spec)
    assert lik.mle == pytest.approx(min(1.0, max(0.0, rr.estimate_mean(agg).value)), abs=1e-15)
    assert lik.log_likelihood(lik.mle) >= lik.log_likelihood(grid).max() - 1e-9


@pytest.mark.parametrize("epsilon, n, ones", [(1.0, 20, 0), (1.0, 20, 11), (1.0, 20, 20), (0.5, 200, 131),
                                              (2.0, 10_000, 1234)])
def test_lr_interval_endpoints_solve_the_defining_equation(epsilon, n, ones):
    _, p, q = _rr(epsilon)
    lik = BinaryLikelihood(ones, n, p, q)
    lo, hi = lik.share_interval(0.95)
    assert 0.0 <= lo <= lik.mle <= hi <= 1.0
    for end, boundary in ((lo, 0.0), (hi, 1.0)):
        if end == boundary:  # the deviance stays below the cut-off up to the boundary
            assert lik.deviance(boundary) <= CUT
        else:
            assert lik.deviance(end) == pytest.approx(CUT, abs=1e-8)
    # ... and the interval is the grid's set {π : D(π) <= χ²₁(0.95)}
    grid = np.linspace(0.0, 1.0, 100_001)
    ll = lik.log_likelihood(grid)
    inside = grid[2 * (lik.log_likelihood(lik.mle) - ll) <= CUT]
    assert abs(inside.min() - lo) <= 1e-5 and abs(inside.max() - hi) <= 1e-5


def test_lr_interval_of_a_normal_likelihood_is_the_wald_interval():
    lo, hi = lr_interval(lambda t: (t - 0.4) ** 2 / 0.05 ** 2, 0.4, 0.0, 1.0, 0.9)
    z = 1.6448536269514722
    assert (lo, hi) == pytest.approx((0.4 - z * 0.05, 0.4 + z * 0.05), abs=1e-10)


def test_mle_stays_inside_the_bounds_where_the_unbiased_estimate_leaves_them():
    rr, p, q = _rr(1.0)
    few, many = ldp.Aggregate([18, 2], rr.spec), ldp.Aggregate([1, 19], rr.spec)
    assert rr.estimate_mean(few).value < 0 and rr.estimate_mean(many).value > 1
    low, high = rr.estimate_mean(few, method="mle"), rr.estimate_mean(many, method="mle")
    assert (low.value, high.value) == (0.0, 1.0)
    assert low.confidence_interval(0.95)[0] == 0.0 and high.confidence_interval(0.95)[1] == 1.0
    assert low.method == "mle" and low.degrees_of_freedom is None and low.standard_error > 0
    # stochastic rounding on other bounds: the MLE and its interval in data units, inside the bounds
    sr = ldp.StochasticRounding(1.0, (10, 30))
    est = sr.estimate_mean(ldp.Aggregate([19, 1], sr.spec), method="mle")
    assert est.value == 10.0 and 10.0 == est.confidence_interval()[0] < est.confidence_interval()[1] < 30.0
    share = BinaryLikelihood(1, 20, *sr._p_q).share_interval(0.95)
    assert est.confidence_interval() == pytest.approx((10 + 20 * share[0], 10 + 20 * share[1]), abs=1e-12)


def test_mle_of_an_interior_estimate_is_the_unbiased_one_and_its_se_the_plug_in():
    rr, p, q = _rr(2.0)
    agg = ldp.Aggregate([600, 400], rr.spec)
    unb, mle = rr.estimate_mean(agg), rr.estimate_mean(agg, method="mle")
    assert mle.value == pytest.approx(unb.value, abs=1e-14)
    assert mle.standard_error == pytest.approx(math.sqrt(0.4 * 0.6 / 1000) / (p - q), rel=1e-12)
    # at n = 1000 the LR and Wald intervals nearly agree away from the boundary
    assert mle.confidence_interval() == pytest.approx(unb.confidence_interval(), abs=0.01)


def test_mle_comes_from_the_aggregate_and_merges():
    rr = ldp.RandomizedResponse(1.0)
    bits = np.random.default_rng(3).random(300) < 0.2
    a, b = rr.privatize(bits[:100], rng=1), rr.privatize(bits[100:], rng=2)
    whole = rr.estimate_mean(ldp.Aggregate.merge([rr.aggregate(a), rr.aggregate(b)]), method="mle")
    both = rr.estimate_mean(ldp.Reports.concat([a, b]), method="mle")
    assert whole == both and whole.likelihood.ones == int(np.concatenate([a.codes, b.codes]).sum())


# -- GRR ---------------------------------------------------------------------------------------------------------

def _simplex_grid(step=1 / 600):
    g = np.arange(0.0, 1.0 + step / 2, step)
    f0, f1 = np.meshgrid(g, g, indexing="ij")
    ok = f0 + f1 <= 1 + 1e-12
    return np.stack([f0[ok], f1[ok], np.clip(1 - f0[ok] - f1[ok], 0, 1)], axis=1)


@pytest.mark.parametrize("counts", [[2, 40, 58], [30, 33, 37], [0, 0, 12], [5, 1, 0], [900, 20, 80]])
def test_grr_mle_is_the_simplex_grid_maximum(counts):
    grr = ldp.GRR(1.0, 3)
    p, q = grr.support_probabilities
    lik = GRRLikelihood(np.array(counts), p, q)
    grid = _simplex_grid()
    ll = np.log(q + (p - q) * grid) @ np.asarray(counts, dtype=float)
    assert np.abs(lik.mle - grid[np.argmax(ll)]).max() <= 2 / 600
    assert lik.log_likelihood(lik.mle) >= ll.max() - 1e-9
    assert lik.mle.sum() == pytest.approx(1.0, abs=1e-15) and lik.mle.min() >= 0.0
    unbiased = (np.asarray(counts) / sum(counts) - q) / (p - q)
    if unbiased.min() >= 0:
        np.testing.assert_allclose(lik.mle, unbiased, atol=1e-14)


def test_grr_mle_and_profile_of_two_categories_are_randomized_responses():
    grr = ldp.GRR(1.0, 2)
    p, q = grr.support_probabilities
    for ones in (0, 3, 9, 20):
        f = grr_mle([20 - ones, ones], p, q)
        binary = BinaryLikelihood(ones, 20, p, q)
        assert f[1] == pytest.approx(binary.mle, abs=1e-14)
        lo, hi = GRRLikelihood(np.array([20 - ones, ones]), p, q).intervals(0.95)
        assert (lo[1], hi[1]) == pytest.approx(binary.share_interval(0.95), abs=1e-10)
        assert (lo[0], hi[0]) == pytest.approx((1 - hi[1], 1 - lo[1]), abs=1e-10)


@pytest.mark.parametrize("counts", [[2, 40, 58], [30, 33, 37], [5, 1, 0]])
def test_grr_profile_is_the_constrained_grid_maximum_and_intervals_solve_their_equation(counts):
    grr = ldp.GRR(1.0, 3)
    p, q = grr.support_probabilities
    lik = GRRLikelihood(np.array(counts), p, q)
    c = np.asarray(counts, dtype=float)
    step = 1 / 2000
    for j in range(3):
        for t in (0.0, 0.05, 0.3, 0.7, 1.0):
            rest = np.arange(0.0, 1 - t + step / 2, step)  # f of the first other category; the second gets the rest
            f = np.empty((rest.size, 3))
            others = [i for i in range(3) if i != j]
            f[:, j], f[:, others[0]], f[:, others[1]] = t, rest, np.clip(1 - t - rest, 0, 1)
            brute = (np.log(q + (p - q) * f) @ c).max()
            exact = lik.log_likelihood(lik.profile_argmax(j, t))
            assert brute - 1e-9 <= exact <= brute + 0.05 * c.sum() * step  # at least the grid's, and close
        assert lik.profile_deviance(j, float(lik.mle[j])) == pytest.approx(0.0, abs=1e-10)
    lo, hi = lik.intervals(0.95)
    for j in range(3):
        assert lo[j] <= lik.mle[j] <= hi[j]
        for end, boundary in ((lo[j], 0.0), (hi[j], 1.0)):
            if end == boundary:
                assert lik.profile_deviance(j, boundary) <= CUT
            else:
                assert lik.profile_deviance(j, end) == pytest.approx(CUT, abs=1e-8)


def test_grr_estimate_frequencies_mle_result():
    grr = ldp.GRR(1.0, 3)
    agg = ldp.Aggregate([2, 40, 58], grr.spec)
    est = grr.estimate_frequencies(agg, method="mle")
    unb = grr.estimate_frequencies(agg)
    assert est.method == "mle" and est.frequencies.min() == 0.0 and unb.frequencies.min() < 0
    np.testing.assert_allclose(est.counts, est.frequencies * 100)
    p, q = grr.support_probabilities
    np.testing.assert_allclose(est.standard_errors, np.sqrt(grr.variance(est.frequencies) / 100))
    lo, hi = est.confidence_interval(0.9)
    np.testing.assert_allclose(np.stack([lo, hi]), np.stack(GRRLikelihood(np.array([2, 40, 58]), p, q).intervals(0.9)))
    assert est != unb and "method='mle'" in repr(est) and "maximum likelihood" in est._repr_html_()


# -- bad input ---------------------------------------------------------------------------------------------------

def test_bad_method_and_level_get_one_clear_error():
    rr = ldp.RandomizedResponse(1.0)
    agg = ldp.Aggregate([10, 10], rr.spec)
    with pytest.raises(ValueError, match=r"method must be one of 'unbiased', 'mle'; got 'MLE'"):
        rr.estimate_mean(agg, method="MLE")
    with pytest.raises(ValueError, match="method must be one of"):
        rr.estimate_mean(agg, method=None)  # type: ignore[arg-type]
    est = rr.estimate_mean(agg, method="mle")
    for level in (0.0, 1.0, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="level"):
            est.confidence_interval(level)
    with pytest.raises(TypeError, match="level"):
        est.confidence_interval("0.95")  # type: ignore[arg-type]
    sw, oue, grr = ldp.SquareWave(1.0, (0, 1)), ldp.OUE(1.0, 3), ldp.GRR(1.0, 3)
    with pytest.raises(ValueError, match="method must be 'unbiased' for square_wave"):
        sw.estimate_mean(sw.empty_aggregate(), method="mle")
    with pytest.raises(ValueError, match="method must be 'unbiased' for oue"):
        oue.estimate_frequencies(oue.empty_aggregate(), method="mle")
    with pytest.raises(ValueError, match="postprocess must be 'none' with method='mle'.*got 'norm-sub'"):
        grr.estimate_frequencies(ldp.Aggregate([1, 2, 3], grr.spec), method="mle", postprocess="norm-sub")
    g = grr.estimate_frequencies(ldp.Aggregate([1, 2, 3], grr.spec), method="mle")
    with pytest.raises(ValueError, match="level"):
        g.confidence_interval(1.0)
    with pytest.raises(ValueError, match="no reports"):
        rr.estimate_mean(rr.empty_aggregate(), method="mle")
    with pytest.raises(ValueError, match="no reports"):
        grr.estimate_frequencies(grr.empty_aggregate(), method="mle")


# -- coverage ----------------------------------------------------------------------------------------------------

def _exact_coverage(epsilon, n, share, level=0.95):
    """Σ_y P(y) 1[share ∈ LR interval(y)]: the interval's coverage, by enumeration (a naive reference)."""
    _, p, q = _rr(epsilon)
    y = np.arange(n + 1)
    inside = []
    for ones in y:
        lo, hi = BinaryLikelihood(int(ones), n, p, q).share_interval(level)
        inside.append(lo <= share <= hi)
    return float(binom.pmf(y, n, q + share * (p - q)) @ np.array(inside))


@pytest.mark.parametrize("epsilon, n, share", [(1.0, 50, 0.1), (2.0, 200, 0.5)])
def test_lr_interval_coverage_from_privatized_collections(epsilon, n, share):
    collections = 2000
    rr = ldp.RandomizedResponse(epsilon)
    rng = np.random.default_rng(12)
    bits = rng.random((collections, n)) < share  # people drawn at random from the population
    codes = rr.privatize(bits.ravel(), rng=13).codes.reshape(collections, n).astype(np.int64)
    ones, times = np.unique(codes.sum(axis=1), return_counts=True)  # the interval depends on the count only
    covered = 0
    for y, m in zip(ones.tolist(), times.tolist()):
        lo, hi = rr.estimate_mean(ldp.Aggregate([n - y, y], rr.spec), method="mle").confidence_interval(0.95)
        covered += m * (lo <= share <= hi)
    coverage = covered / collections
    exact = _exact_coverage(epsilon, n, share)
    se = math.sqrt(exact * (1 - exact) / collections)
    assert abs(coverage - exact) <= 4 * se  # the pipeline's intervals are the enumerated ones
    assert coverage >= 0.95 - 4 * math.sqrt(0.95 * 0.05 / collections)  # and cover at the nominal level
