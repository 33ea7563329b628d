"""Uncertainty of reconstructed distributions: bootstrap replicates, bands, quantile and range intervals,
and their coverage by simulation (fixed seeds)."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.stats import beta

import ldpnum as ldp
from ldpnum import DistributionEstimate
from ldpnum.estimation import bootstrap_distribution


@pytest.fixture(scope="module")
def boot():
    sw = ldp.SquareWave(1.0, (0, 1))
    x = np.random.default_rng(0).beta(5, 2, 20_000)
    agg = sw.aggregate(sw.privatize(x, rng=1))
    return sw, agg, x, sw.estimate_distribution(agg, method="ems", bootstrap=60, rng=2)


def _em_fit(counts, t, level):
    from ldpnum.estimation.em import expectation_maximization
    x = (expectation_maximization(counts, t, method="ems", smoothing=level) if level
         else expectation_maximization(counts, t, method="em", accelerate=True)).x  # plain EM with SQUAREM
    x = np.maximum(x, 0.0)
    return x / x.sum()


def test_replicates_are_the_undersmoothed_estimator_on_resampled_counts(boot):
    # default scheme: EMS (one pass) undersmoothed to a quarter is plain EM (accelerated by SQUAREM): the pilot is
    # EM on the observed counts, and each replicate is EM on counts drawn from the pilot's output distribution
    # (naive route here)
    sw, agg, _, est = boot
    assert est.replicates.shape == (60, est.n_bins) and np.allclose(est.replicates.sum(axis=1), 1.0)
    assert est == sw.estimate_distribution(agg, method="ems")  # the point estimate is unchanged
    again = bootstrap_distribution(sw, agg, n_boot=60, rng=2, method="ems")  # reproducible, whatever the threads
    assert np.array_equal(again.replicates, est.replicates)
    from ldpnum.estimation.em import window_transition_from_plan
    t = window_transition_from_plan(sw.plan, est.n_bins)
    pilot = _em_fit(agg.counts, t, 0)
    q = t.dense() @ pilot
    counts = np.random.default_rng(2).multinomial(agg.n_reports, q / q.sum(), size=60)
    for b in (0, 7):
        assert np.allclose(_em_fit(counts[b], t, 0), est.replicates[b], rtol=0, atol=1e-15)


def test_estimate_scheme_replicates_are_the_estimator_on_resampled_counts(boot):
    sw, agg, _, est = boot
    old = bootstrap_distribution(sw, agg, n_boot=60, rng=2, method="ems", scheme="estimate")
    assert old == est and not np.array_equal(old.replicates, est.replicates)
    from ldpnum.aggregate import Aggregate
    from ldpnum.estimation.em import window_transition_from_plan
    q = window_transition_from_plan(sw.plan, est.n_bins).dense() @ est.probabilities
    counts = np.random.default_rng(2).multinomial(agg.n_reports, q / q.sum(), size=60)
    naive = sw.estimate_distribution(Aggregate(counts[7], agg.spec), method="ems", n_bins=est.n_bins)
    assert np.allclose(naive.probabilities, old.replicates[7])
    with pytest.raises(ValueError, match="scheme must be one of"):
        bootstrap_distribution(sw, agg, n_boot=60, scheme="basic")


def test_plain_em_estimate_scheme_refits_with_plain_em_and_the_undersmoothed_pilot_with_squarem(boot):
    # method="em": the "estimate" scheme's replicates are the estimate's own estimator (plain EM, not accelerated)
    # on counts drawn from it; the undersmoothed scheme's pilot and refits are plain EM with SQUAREM, a different
    # point under the same stopping rule (negative control: the two fits of the same counts differ)
    from ldpnum.aggregate import Aggregate
    from ldpnum.estimation.em import window_transition_from_plan
    sw, agg, _, _ = boot
    est = sw.estimate_distribution(agg, method="em")
    old = bootstrap_distribution(sw, agg, n_boot=20, rng=3, method="em", scheme="estimate")
    t = window_transition_from_plan(sw.plan, est.n_bins)
    q = t.dense() @ est.probabilities
    counts = np.random.default_rng(3).multinomial(agg.n_reports, q / q.sum(), size=20)
    plain = sw.estimate_distribution(Aggregate(counts[5], agg.spec), method="em", n_bins=est.n_bins).probabilities
    assert np.allclose(plain, old.replicates[5], rtol=0, atol=1e-15)
    fast = _em_fit(counts[5], t, 0)
    assert not np.allclose(fast, plain, rtol=0, atol=1e-6)
    new = bootstrap_distribution(sw, agg, n_boot=20, rng=3, method="em")
    pilot = _em_fit(agg.counts, t, 0)
    q = t.dense() @ pilot
    counts = np.random.default_rng(3).multinomial(agg.n_reports, q / q.sum(), size=20)
    assert np.allclose(_em_fit(counts[5], t, 0), new.replicates[5], rtol=0, atol=1e-15)


def test_held_out_ems_replicates_are_ems_at_a_quarter_of_the_level_chosen_once():
    # the default estimator chooses its smoothing L on the observed counts, once; the default scheme's pilot and
    # replicates are EMS at L // 4 passes, the "estimate" scheme's replicates EMS at L from the estimate
    sw = ldp.SquareWave(4.0, (0, 1))
    agg = sw.aggregate(sw.privatize(np.random.default_rng(0).beta(5, 2, 20_000), rng=1))
    est = sw.estimate_distribution(agg, bootstrap=30, rng=5)
    assert est.method == "ems-cv" and est == sw.estimate_distribution(agg)
    from ldpnum.estimation.em import ems_heldout, window_transition_from_plan
    t = window_transition_from_plan(sw.plan, est.n_bins)
    level = ems_heldout(agg.counts, t).smoothing
    assert est.smoothing == level  # the bootstrap reads the level from the estimate instead of searching again
    assert level >= 4  # smooth data, many people per bucket: undersmoothing leaves a smoothing level
    for scheme, lv, population in (("undersmoothed", level // 4, _em_fit(agg.counts, t, level // 4)),
                                   ("estimate", level, est.probabilities)):
        q = t.dense() @ population
        counts = np.random.default_rng(5).multinomial(agg.n_reports, q / q.sum(), size=30)
        boot = bootstrap_distribution(sw, agg, n_boot=30, rng=5, scheme=scheme)
        for b in (0, 29):
            assert np.allclose(boot.replicates[b], _em_fit(counts[b], t, lv), rtol=0, atol=1e-15)
    assert np.array_equal(bootstrap_distribution(sw, agg, n_boot=30, rng=5).replicates, est.replicates)


def test_bands_and_intervals_are_ordered_and_proper(boot):
    _, _, x, est = boot
    for kind in ("pointwise", "simultaneous"):
        band = est.confidence_band(0.9, kind=kind)
        assert band.x.shape == band.low.shape == (est.n_bins + 1,)
        assert np.all(band.low <= band.high) and np.all(np.diff(band.low) >= 0) and np.all(np.diff(band.high) >= 0)
        assert band.low.min() >= 0 and band.high.max() <= 1
    pw, sim = est.confidence_band(0.95), est.confidence_band(0.95, kind="simultaneous")
    assert np.mean(sim.high - sim.low) > np.mean(pw.high - pw.low)  # one curve at once: wider
    narrow, wide = est.quantile(0.5, ci=0.5), est.quantile(0.5, ci=0.96)  # 60 replicates support up to 0.967
    assert wide.low <= narrow.low <= narrow.high <= wide.high
    q = est.quantile([0.25, 0.5, 0.75], ci=0.95)
    assert q.estimate.shape == q.low.shape == (3,) and np.all(q.low <= q.high)
    r = est.range(0.6, 0.8, ci=0.95)
    assert 0 <= r.low <= r.estimate <= r.high <= 1
    assert isinstance(est.range(0.6, 0.8), float)  # without ci: as before
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.replicates, est.replicates)


def test_no_replicates_no_intervals_and_bad_levels(boot):
    sw, agg, _, est = boot
    plain = sw.estimate_distribution(agg, method="ems")
    with pytest.raises(ValueError, match="no bootstrap replicates"):
        plain.confidence_band()
    with pytest.raises(ValueError, match="no bootstrap replicates"):
        plain.quantile(0.5, ci=0.95)
    with pytest.raises(ValueError, match="level"):
        est.quantile(0.5, ci=1.5)
    with pytest.raises(ValueError, match="kind"):
        est.confidence_band(kind="both")
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_distribution(sw, agg, n_boot=5)
    with pytest.raises(TypeError, match="window plan"):
        bootstrap_distribution(ldp.Duchi(1.0, (0, 1)), agg)
    # an option the estimator does not know is refused, also when the estimate is given (it used to be ignored)
    with pytest.raises(TypeError, match="unknown estimator option.*'smoothness'"):
        bootstrap_distribution(sw, agg, n_boot=20, estimate=est, smoothness=3)
    from ldpnum.estimation import bootstrap_ranges
    hh = ldp.HierarchicalHistogram(1.0, (0, 1))
    with pytest.raises(TypeError, match="unknown estimator option.*'method'"):
        bootstrap_ranges(hh, hh.aggregate(hh.privatize(np.full(100, 0.5), rng=0)), n_boot=20, method="ems")
    with pytest.raises(ValueError, match="replicates must have shape"):
        DistributionEstimate([0, 1, 2], [0.5, 0.5], replicates=np.ones((3, 5)))


def test_plot_draws_the_band(boot):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    _, _, x, est = boot
    ax = est.plot(kind="cdf", true=x)
    assert "95% band" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_coverage_of_quantile_intervals_fast():
    # 30 collections of 2,000 people from Beta(5, 2), eps = 2, the default estimator with 40 (undersmoothed)
    # replicates each: nominal 95% intervals of the quartiles cover the population quartiles (measured pooled:
    # 0.99 over 40 collections). At a true 95%, the pooled 90 intervals (SD of the share sqrt(.95 * .05 / 90)
    # = 0.023) fall below 0.95 - 3 SD = 0.88 with probability < 0.3%.
    sw = ldp.SquareWave(2.0, (0, 1))
    qs = np.array([0.25, 0.5, 0.75])
    truth = beta(5, 2).ppf(qs)
    rng = np.random.default_rng(0)
    hits = np.zeros(3)
    for r in range(30):
        x = rng.beta(5, 2, 2_000)
        est = sw.estimate_distribution(sw.aggregate(sw.privatize(x, rng=1000 + r)), bootstrap=40, rng=r)
        ci = est.quantile(qs, ci=0.95)
        hits += (ci.low <= truth) & (truth <= ci.high)
    assert hits.sum() / 90 >= 0.88, hits / 30


def test_undersmoothed_intervals_cover_a_sharp_step_where_the_estimate_scheme_does_not():
    # negative control: people uniform on [0.4, 1] (the density steps from 0 to 5/3 at 0.4), 2,000 per
    # collection, eps = 2; the mass of [0.4, 0.45] (1/12) next to the step. The smoothed estimate leaks mass below
    # 0.4 and is its own fixed point: replicates drawn from it ("estimate") cover 0.33 (measured, 30
    # collections, 40 replicates); the undersmoothed replicates cover 0.73. With 30 collections (binomial SD
    # <= 0.09): a true 0.73 reads below 0.55 (16 of 30) with probability about 1%, a true 0.33 above 0.55 with
    # probability below 1%. (On [0.4, 0.5], 1/6, the two measured 0.83 and 0.63: too close for a control.)
    from ldpnum.exceptions import SmoothingBiasWarning
    sw = ldp.SquareWave(2.0, (0, 1))
    rng = np.random.default_rng(0)
    hits = {"undersmoothed": 0, "estimate": 0}
    for r in range(30):
        agg = sw.aggregate(sw.privatize(rng.uniform(0.4, 1.0, 2_000), rng=100 + r))
        est = sw.estimate_distribution(agg)
        for scheme in hits:
            boot = bootstrap_distribution(sw, agg, n_boot=40, rng=r, estimate=est, scheme=scheme)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always", SmoothingBiasWarning)
                iv = boot.range(0.4, 0.45, ci=0.95)
            hits[scheme] += iv.low <= 1 / 12 <= iv.high
            outside = not iv.low <= iv.estimate <= iv.high
            # the warning says exactly when the smoothed estimate lies outside its own interval
            assert [w.category for w in seen] == ([SmoothingBiasWarning] if outside else [])
    assert hits["undersmoothed"] / 30 >= 0.55 and hits["estimate"] / 30 <= 0.55, hits


def test_smoothing_bias_warning_attributes():
    from ldpnum.exceptions import SmoothingBiasWarning
    d = DistributionEstimate([0, 1, 2], [0.5, 0.5], replicates=np.tile([0.9, 0.1], (20, 1)))
    with pytest.warns(SmoothingBiasWarning, match="1 of 2") as rec:
        d.range([1.5, 0.0], [2.0, 2.0], ci=0.9)
    assert rec[0].message.count == 1 and rec[0].message.first_index == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d.range(0.0, 2.0, ci=0.9)  # inside (1.0 in [1, 1]): no warning
    with pytest.warns(SmoothingBiasWarning, match="quantile"):
        d.quantile(0.5, ci=0.9)
    assert ldp.SmoothingBiasWarning is SmoothingBiasWarning


def test_describe_shows_quartile_intervals():
    import pandas as pd
    df = pd.DataFrame({"t": np.random.default_rng(3).beta(5, 2, 20_000) * 60, "d": np.linspace(0, 1, 20_000)})
    r = df.ldp.privatize({"t": ldp.SquareWave(2.0, (0, 60)), "d": ldp.Duchi(1.0, (0, 1))}, rng=1,
                         strategy="all-columns")
    d = r.ldp.describe(bootstrap=40, rng=0)  # 95% intervals need 39 replicates
    assert {"25% low", "50% high", "75% high"} <= set(d.columns)
    assert d.loc["t", "50% low"] <= d.loc["t", "50%"] <= d.loc["t", "50% high"]
    assert np.isnan(d.loc["d", "50% low"])  # a mean oracle has no distribution to bootstrap
    assert "25% low" not in r.ldp.describe().columns


def test_range_trees_carry_bootstrap_intervals():
    hh = ldp.HierarchicalHistogram(2.0, (0, 1), n_leaves=256)
    x = np.random.default_rng(4).beta(5, 2, 20_000)
    agg = hh.aggregate(hh.privatize(x, rng=5))
    est = hh.estimate_ranges(agg, bootstrap=40, rng=6)
    assert len(est.replicates) == 40 and est == hh.estimate_ranges(agg)
    r = est.range([0.2, 0.6], [0.5, 0.8], ci=0.9)
    assert r.low.shape == (2,) and np.all(r.low <= r.high)
    q = est.quantile(0.5, ci=0.9)
    assert q.low <= q.high and isinstance(q.low, float)
    band = est.confidence_band(0.95, kind="simultaneous")
    assert np.all(band.low <= band.high) and band.x.shape == (257,)
    with pytest.raises(ValueError, match="no bootstrap replicates"):
        hh.estimate_ranges(agg).range(0.1, 0.2, ci=0.9)
    # the simulation reproduces for a seed
    again = hh.estimate_ranges(agg, bootstrap=40, rng=6)
    assert again.range(0.6, 0.8, ci=0.9) == est.range(0.6, 0.8, ci=0.9)


def test_bootstrap_quantiles_are_read_at_order_statistics_b_plus_1_times_p():
    # the (B + 1)p-th order statistic (Davison and Hinkley, section 5.2), interpolated between neighbours: with
    # B = 39 the 95% interval is exactly [min, max]; numpy's default ("linear", position (B - 1)p + 1) would
    # sit about one order statistic inside at each end
    from ldpnum._results import bootstrap_quantile, percentile_interval
    reps = np.random.default_rng(3).permutation(np.arange(1.0, 40.0))
    assert np.allclose(percentile_interval(reps, 0.95), (1.0, 39.0), rtol=0, atol=1e-12)
    assert np.quantile(reps, 0.025) > 1.0  # the control: the default reading is narrower
    # a naive reference for other B and levels, column by column
    rng = np.random.default_rng(4)
    for b in (20, 57, 100, 200):
        values = rng.normal(size=(b, 3))
        for p in (0.005, 0.025, 0.05, 0.5, 0.95, 0.975, 0.995):
            x = np.sort(values, axis=0)
            h = min(max((b + 1) * p, 1.0), float(b))  # 1-based position, clamped to the sample
            k = int(np.floor(h))
            ref = x[k - 1] + (h - k) * (x[min(k, b - 1)] - x[k - 1])
            assert np.allclose(bootstrap_quantile(values, p), ref, rtol=0, atol=1e-12)


def test_intervals_of_distribution_estimates_read_the_order_statistics(boot):
    # every interval of a bootstrapped estimate is the (B + 1)p-th order statistic of the replicates' values
    # (a naive reference: sort and interpolate), for quantiles and ranges (numpy's default reading differs at B = 60)
    *_, est = boot
    b = est.replicates.shape[0]

    def naive(values, p):
        x = np.sort(np.asarray(values), axis=0)
        h = min(max((b + 1) * p, 1.0), float(b))
        k = int(np.floor(h))
        return x[k - 1] + (h - k) * (x[min(k, b - 1)] - x[k - 1])

    reps = [DistributionEstimate(est.bin_edges, r) for r in est.replicates]
    iv = est.quantile([0.25, 0.75], ci=0.9)
    values = np.stack([r.quantile([0.25, 0.75]) for r in reps])
    assert np.allclose(iv.low, naive(values, 0.05), rtol=0, atol=1e-12)
    assert np.allclose(iv.high, naive(values, 0.95), rtol=0, atol=1e-12)
    r = est.range(0.6, 0.8, ci=0.95)
    values = np.array([d.range(0.6, 0.8) for d in reps])
    assert np.isclose(r.low, naive(values, 0.025), rtol=0, atol=1e-12)
    assert np.isclose(r.high, naive(values, 0.975), rtol=0, atol=1e-12)


# -- levels the replicates cannot support, replicate counts that cannot be allocated, estimates outside --------
def _hand_made(b):
    """A bootstrapped estimate built by hand: b replicates spread around [0.5, 0.5] (no fit, instant)."""
    share = np.linspace(0.3, 0.7, b)
    return DistributionEstimate([0, 1, 2], [0.5, 0.5], replicates=np.column_stack([share, 1 - share]))


def test_levels_beyond_the_replicates_are_refused_with_the_count_they_need():
    """With B replicates a percentile interval's ends are the (B+1)(1-L)/2-th order statistics: 20 replicates
    gave the replicates' [min, max] for ci=0.999999, the same interval as for ci=0.91 (it used to be returned as
    if it held 0.999999)."""
    d = _hand_made(20)
    assert d.quantile(0.5, ci=0.9).low > 0.5  # (B+1)(1-L)/2 = 1.05 >= 1: supported
    with pytest.raises(ValueError, match=r"ci=0.999999 needs at least 1,999,999 bootstrap replicates; this estimate "
                                         r"has 20.*more than the 100,000 replicates ldpnum runs.*at most 0.9048"):
        d.quantile(0.5, ci=0.999999)
    with pytest.raises(ValueError, match=r"ci=0.95 needs at least 39 bootstrap replicates; this estimate has 20.*"
                                         r"bootstrap=39 or more"):
        d.range(0.5, 1.5, ci=0.95)
    with pytest.raises(ValueError, match=r"level=0.95 needs at least 39"):
        d.confidence_band(0.95)
    with pytest.raises(ValueError, match=r"level=0.96 needs at least 24"):  # one-sided: (B+1)(1-L) >= 1
        d.confidence_band(0.96, kind="simultaneous")
    d.confidence_band(0.95, kind="simultaneous")  # 21 * 0.05 >= 1
    # at exactly the replicates a level needs, its ends are the extreme order statistics
    d39 = _hand_made(39)
    iv = d39.range(0.0, 1.0, ci=0.95)
    assert (iv.low, iv.high) == pytest.approx((0.3, 0.7))


def test_range_trees_refuse_levels_beyond_their_replicates():
    hh = ldp.HierarchicalHistogram(1.0, (0, 1), n_leaves=16)
    est = hh.estimate_ranges(hh.aggregate(hh.privatize(np.random.default_rng(0).random(2000), rng=1)),
                             bootstrap=20, rng=2)
    est.range(0.2, 0.6, ci=0.9)
    for query in (lambda: est.range(0.2, 0.6, ci=0.999999), lambda: est.quantile(0.5, ci=0.95),
                  lambda: est.confidence_band(0.95)):
        with pytest.raises(ValueError, match="needs at least .* bootstrap replicates; this estimate has 20"):
            query()


@pytest.mark.parametrize("n_boot, error, message", [
    (10**7, ValueError, r"n_boot=10,000,000 is more bootstrap replicates than ldpnum runs \(at most 100,000"),
    (2.5, TypeError, "n_boot must be an integer"),
    (True, TypeError, "n_boot must be an integer"),
    (19, ValueError, "n_boot must be an integer >= 20"),
])
def test_replicate_counts_refused_before_anything_is_drawn(n_boot, error, message, monkeypatch):
    """bootstrap=10**7 asked numpy for 76 GiB of redrawn counts."""
    sw = ldp.SquareWave(1.0, (0, 1))
    agg = sw.aggregate(sw.privatize(np.full(500, 0.5), rng=0))
    hh = ldp.HierarchicalHistogram(1.0, (0, 1), n_leaves=16)
    tree = hh.aggregate(hh.privatize(np.full(500, 0.5), rng=0))

    def forbidden(*args, **kwargs):
        raise AssertionError("the bootstrap's generator was made for a refused count")
    monkeypatch.setattr(np.random, "default_rng", forbidden)  # both bootstraps draw through one
    with pytest.raises(error, match=message):
        bootstrap_distribution(sw, agg, n_boot=n_boot, method="norm-sub")
    with pytest.raises(error, match=message):
        hh.estimate_ranges(tree, bootstrap=n_boot)


def test_replicates_beyond_the_memory_limit_are_refused_with_the_amount(monkeypatch):
    from ldpnum.estimation import bootstrap
    sw = ldp.SquareWave(1.0, (0, 1), n_cells=64)
    agg = sw.aggregate(sw.privatize(np.full(500, 0.5), rng=0))
    # 100,000 replicates of 64 cells and 32 bins: 8 * (64 + 32) bytes each, 0.0715 GiB; a 0.0625 GiB limit
    monkeypatch.setattr(bootstrap, "MEMORY_LIMIT", 2**26)
    with pytest.raises(ValueError, match=r"n_boot=100,000 bootstrap replicates would take 0.0715 GiB of memory "
                                         r"\(768 bytes each\), more than the 0.0625 GiB limit; ask for at most 87,381"):
        bootstrap_distribution(sw, agg, n_boot=100_000, n_bins=32, method="norm-sub")


def test_a_tree_estimate_outside_its_own_interval_is_flagged():
    """The least-squares tree (negative leaves allowed) against replicates simulated from the non-negative tree:
    where the two disagree by more than the noise the estimate lies outside its own interval; this used to pass
    without a word (DistributionEstimate already warned)."""
    from ldpnum.exceptions import BootstrapBiasWarning
    hh = ldp.HierarchicalHistogram(1.0, (0, 1), n_leaves=64)
    x = np.random.default_rng(0).beta(5, 2, 5000)
    est = hh.estimate_ranges(hh.aggregate(hh.privatize(x, rng=1)), bootstrap=40, rng=2)
    with pytest.warns(BootstrapBiasWarning, match=r"range: the estimate lies outside its own bootstrap interval for 1 "
                                                  r"of 10 \(first at index 3\): the bootstrap distribution is biased "
                                                  r"there, the tree's post-processing") as rec:
        r = est.range(np.linspace(0, 0.9, 10), np.linspace(0.1, 1, 10), ci=0.9)
    assert rec[0].message.count == 1 and not r.low[3] <= r.estimate[3] <= r.high[3]
    assert not issubclass(BootstrapBiasWarning, ldp.SmoothingBiasWarning)
    assert issubclass(ldp.SmoothingBiasWarning, BootstrapBiasWarning)  # one filter catches both
    with pytest.warns(BootstrapBiasWarning, match="quantile"):
        est.quantile(np.linspace(0.02, 0.98, 25), ci=0.9)
