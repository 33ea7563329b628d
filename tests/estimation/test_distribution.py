"""Distribution estimation end to end: Square Wave / General Wave / Piecewise reports → EM/EMS → estimate."""

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import metrics
from ldpnum.estimation import default_n_bins, norm_sub

import naive

# Issue targets (W1 on the unit domain, mean over the 1024 buckets of |F̂ − F| against the empirical histogram
# of the same samples; Beta(5, 2), n = 100,000, 1024 buckets, EMS, mean of 5 fixed seeds). Measured over
# seeds 0..14 (per-seed mean ± standard deviation; the test's 5-seed mean has a fifth of the variance):
# ε = 0.5: 0.0087 ± 0.0020, ε = 1: 0.0053 ± 0.0011, ε = 2: 0.0027 ± 0.00058, ε = 4: 0.0012 ± 0.00031, so
# each target is 4 to 7 standard deviations of the 5-seed mean above the measured mean.
TARGETS = {0.5: 0.0125, 1.0: 0.0080, 2.0: 0.0042, 4.0: 0.0019}

# W1 bounds of the single-seed tests below: measured mean + 5 standard deviations of W1 over 30 seeds
# (data seed 5 + 100 s or 7 + 100 s, reports seed one more, s = 0..29; Beta(5, 2), n = 50,000).
#   GeneralWave triangle, ε = 2, 128 bins, EMS: 0.0042 ± 0.0013 (largest 0.0068) -> 0.0108
#   Piecewise, ε = 2, 128 bins, EMS:            0.0034 ± 0.00092 (largest 0.0059) -> 0.0080
#   SquareWave, ε = 2, 64 bins, norm-sub:       0.059 ± 0.016 (largest 0.094)      -> 0.136
W1_BOUND = {"general_wave": 0.0108, "piecewise": 0.0080, "norm-sub": 0.136}


@pytest.mark.parametrize("epsilon", sorted(TARGETS))
def test_square_wave_ems_accuracy(epsilon):
    sw = ldp.SquareWave(epsilon, (0.0, 1.0))
    w1 = []
    for seed in range(5):
        x = np.random.default_rng(seed).beta(5, 2, 100_000)
        agg = sw.aggregate(sw.privatize(x, rng=1000 + seed))
        est = sw.estimate_distribution(agg, n_bins=1024, method="ems")
        assert est.converged and est.method == "ems"
        w1.append(metrics.wasserstein_binned(est, x, 1024))
    assert np.mean(w1) <= TARGETS[epsilon]


def test_em_matches_dense_reference_through_public_api():
    sw = ldp.SquareWave(1.0, (0.0, 10.0), n_cells=64)
    x = 10 * np.random.default_rng(3).beta(2, 5, 20_000)
    agg = sw.aggregate(sw.privatize(x, rng=4))
    for method in ("em", "ems"):
        est = sw.estimate_distribution(agg, n_bins=16, method=method, tol=1e-10)
        from ldpnum.estimation import window_transition_from_plan
        dense = window_transition_from_plan(sw.plan, 16).dense()
        ref = naive.em_dense(agg.counts, dense, method=method, tol=1e-10)
        np.testing.assert_allclose(est.probabilities, ref[0] / ref[0].sum(), atol=1e-10)


def test_em_log_likelihood_never_decreases():
    sw = ldp.SquareWave(2.0, (0, 1))
    x = np.random.default_rng(0).uniform(0.2, 0.6, 50_000)
    est = sw.estimate_distribution(sw.privatize(x, rng=1), method="em", n_bins=128)
    trace = np.array(est.log_likelihood)
    assert np.all(np.diff(trace) >= -1e-9 * np.abs(trace[:-1]))
    assert est.n_iter == len(trace) - 1


def test_provenance_and_queries():
    sw = ldp.SquareWave(1.0, (0, 1440))
    x = np.random.default_rng(1).normal(720, 120, 60_000).clip(0, 1440)
    r = sw.privatize(x, rng=2)
    est = sw.estimate_distribution(r)
    assert est.spec == sw.spec and est.epsilon == 1.0 and est.n_reports == 60_000
    assert est.n_bins == default_n_bins(60_000) == 512
    assert est.bin_edges[0] == 0 and est.bin_edges[-1] == 1440
    assert est.quantile(0.5) == pytest.approx(720, abs=25)
    assert est.range(600, 840) == pytest.approx(np.mean((x >= 600) & (x <= 840)), abs=0.03)
    assert est == sw.estimate_distribution(sw.aggregate(r))  # Reports or Aggregate


def test_shaped_and_piecewise_windows_estimate_distributions():
    x = np.random.default_rng(5).beta(5, 2, 50_000)
    for m in (ldp.GeneralWave(2.0, (0, 1), shape="triangle"), ldp.Piecewise(2.0, (0, 1))):
        est = m.estimate_distribution(m.privatize(x, rng=6), n_bins=128)
        assert metrics.wasserstein(est, x) < W1_BOUND[m.name], m


def test_norm_sub_method():
    sw = ldp.SquareWave(2.0, (0, 1))
    x = np.random.default_rng(7).beta(5, 2, 50_000)
    est = sw.estimate_distribution(sw.privatize(x, rng=8), method="norm-sub", n_bins=64)
    assert est.method == "norm-sub" and est.probabilities.min() >= 0
    assert est.probabilities.sum() == pytest.approx(1.0)
    assert metrics.wasserstein(est, x) < W1_BOUND["norm-sub"]


def test_norm_sub_is_the_simplex_projection_for_unit_sum_input():
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.normal(0, 1, 12)
        v = v - (v.sum() - 1) / v.size
        # sort-based Euclidean projection onto the simplex
        u = np.sort(v)[::-1]
        css = np.cumsum(u)
        k = np.nonzero(u * np.arange(1, v.size + 1) > css - 1)[0][-1]
        ref = np.maximum(v - (css[k] - 1) / (k + 1), 0)
        np.testing.assert_allclose(norm_sub(v), ref, atol=1e-12)


def test_default_n_bins():
    assert default_n_bins(1_000) == 64
    assert default_n_bins(10_000) == 256
    assert default_n_bins(30_000) == 512
    assert default_n_bins(20_000) == 256
    assert default_n_bins(100_000) == 1024
    assert default_n_bins(10**7) == 1024  # capped at 1024, not by the window-start grid (512 starts here)
    assert default_n_bins(3) == 32
    sw = ldp.SquareWave(0.8, (0, 1))  # 647 window starts: the old grid cap gave 512 buckets
    x = np.random.default_rng(3).beta(5, 2, 200_000)
    assert sw.estimate_distribution(sw.privatize(x, rng=4)).n_bins == 1024


@pytest.mark.parametrize("kwargs,exc", [(dict(n_bins=1), ValueError), (dict(n_bins=2.0), TypeError),
                                        (dict(method="mle"), ValueError), (dict(n_bins=True), TypeError)])
def test_bad_arguments(kwargs, exc):
    sw = ldp.SquareWave(1.0, (0, 1))
    agg = sw.aggregate(sw.privatize(np.full(100, 0.5), rng=0))
    with pytest.raises(exc):
        sw.estimate_distribution(agg, **kwargs)


def test_refuses_empty_and_mismatched():
    sw = ldp.SquareWave(1.0, (0, 1))
    with pytest.raises(ValueError, match="no reports"):
        sw.estimate_distribution(sw.empty_aggregate())
    with pytest.raises(ldp.SpecMismatchError):
        sw.estimate_distribution(ldp.SquareWave(2.0, (0, 1)).privatize([0.5], rng=0))


def test_hybrid_estimates_the_distribution_from_its_piecewise_reports():
    # Hybrid's codes are Piecewise's cells then Duchi's two; the mixing coin ignores the value, so the window
    # reports alone are a Piecewise collection of a random subsample: the estimate is EM on those counts.
    x = np.random.default_rng(3).beta(5, 2, 40_000)
    hy = ldp.Hybrid(2.0, (0.0, 1.0))
    agg = hy.aggregate(hy.privatize(x, rng=4))
    est = hy.estimate_distribution(agg, n_bins=64, method="ems")
    cells = hy.plan.n_cells
    assert agg.counts.size == cells + 2 and est.n_reports == int(agg.counts[:cells].sum()) < agg.n_reports
    pw = ldp.Piecewise(2.0, (0.0, 1.0), n_cells=cells)
    assert pw.plan.n_cells == cells
    window_only = pw.estimate_distribution(ldp.Aggregate(agg.counts[:cells], pw.spec), n_bins=64, method="ems")
    np.testing.assert_allclose(est.probabilities, window_only.probabilities, rtol=0, atol=1e-12)
    assert metrics.wasserstein(est, x) < 0.02
    boot = hy.estimate_distribution(agg, n_bins=64, bootstrap=20, rng=5)
    assert boot.replicates.shape == (20, 64)
    with pytest.raises(ValueError, match="window"):  # at eps <= 0.61 Hybrid is Duchi's mechanism
        small = ldp.Hybrid(0.5, (0.0, 1.0))
        small.estimate_distribution(small.aggregate(small.privatize(x[:1000], rng=6)))


def test_held_out_smoothing_search_fits_every_level_on_the_integers():
    """128 integers (even, at least 64) would be regridded to coarser buckets by the held-out search: the point
    transition refuses that, and the search fits every level on the integers themselves."""
    sw = ldp.SquareWave(2.0, (0, 127), discrete=True)
    x = np.random.default_rng(2).binomial(127, 0.3, 20_000)
    est = sw.estimate_distribution(sw.privatize(x, rng=3))
    assert est.discrete and est.n_bins == 128 and est.method == "ems-cv"
    # measured: median 38 (the sample's 38), bootstrap 95% interval [37, 38] (40 replicates): 2 is beyond it
    assert abs(est.quantile(0.5) - np.median(x)) <= 2
