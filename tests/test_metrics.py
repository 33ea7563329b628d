"""ldpnum.metrics: exact W1/KS against SciPy and fine-grid integrals, the bucketised variants, errors."""

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum import DistributionEstimate, metrics


def beta_estimate(n_bins=64, bounds=(0.0, 10.0), seed=0, noise=0.3):
    """A noisy histogram of Beta(5, 2) on ``bounds``: an estimate close to, not equal to, the truth."""
    lo, hi = bounds
    edges = np.linspace(lo, hi, n_bins + 1)
    p = np.diff(stats.beta(5, 2).cdf((edges - lo) / (hi - lo)))
    p = np.maximum(p * (1 + noise * np.random.default_rng(seed).standard_normal(n_bins)), 0)
    return DistributionEstimate(edges, p / p.sum())


def beta_values(n, bounds=(0.0, 10.0), seed=1):
    lo, hi = bounds
    return lo + (hi - lo) * np.random.default_rng(seed).beta(5, 2, n)


def grid_cdf(x, op):
    """F at points x: the estimate's cdf, or the empirical CDF #(v <= x)/n."""
    if isinstance(op, DistributionEstimate):
        return op.cdf(x)
    return np.searchsorted(np.sort(op), x, side="right") / len(op)


def grid_w1(p, q, lo, hi, m=2_000_000):
    """Midpoint-rule integral of |F_p - F_q| over [lo, hi] on m cells, divided by the width."""
    x = lo + (np.arange(m) + 0.5) * ((hi - lo) / m)
    return float(np.mean(np.abs(grid_cdf(x, p) - grid_cdf(x, q))))


# -- raw samples against SciPy --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_two_samples_match_scipy(seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 100, rng.integers(1, 400))
    b = rng.beta(2, 5, rng.integers(1, 400)) * 100
    for x, y in ((a, b), (b, a), (a, a[: max(1, a.size // 2)])):
        w = metrics.wasserstein(x, y, bounds=(0, 100))
        assert w == pytest.approx(stats.wasserstein_distance(x, y) / 100, rel=1e-12, abs=1e-15)
        assert metrics.ks(x, y, bounds=(0, 100)) == pytest.approx(stats.ks_2samp(x, y).statistic, abs=1e-12)


def test_two_samples_with_ties_match_scipy():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 20, 1000).astype(float)  # many ties, within and across samples, and at the bounds
    b = rng.integers(3, 21, 777).astype(float)
    assert metrics.wasserstein(a, b, bounds=(0, 20)) == pytest.approx(
        stats.wasserstein_distance(a, b) / 20, rel=1e-12)
    assert metrics.ks(a, b, bounds=(0, 20)) == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-12)
    assert metrics.wasserstein(a, a, bounds=(0, 20)) == 0.0 and metrics.ks(a, a, bounds=(0, 20)) == 0.0


def test_two_large_samples_match_scipy():
    a, b = beta_values(200_000, seed=2), beta_values(150_000, seed=3)
    assert metrics.wasserstein(a, b, bounds=(0, 10)) == pytest.approx(
        stats.wasserstein_distance(a, b) / 10, rel=1e-12)
    assert metrics.ks(a, b, bounds=(0, 10)) == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-12)


# -- estimates: exact piecewise integration -------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7, 300, 5000])
def test_estimate_vs_samples_against_fine_grid(n):
    est = beta_estimate()
    values = beta_values(n)
    values[: min(2, n)] = [0.0, 10.0][: min(2, n)]  # samples exactly at the bounds
    w = metrics.wasserstein(est, values)
    assert w == pytest.approx(grid_w1(est, values, 0, 10), abs=1e-6)
    assert metrics.wasserstein(values, est) == pytest.approx(w, rel=1e-14)
    # KS: the supremum includes left limits at jumps; check against F evaluated just left of each sample.
    x = np.concatenate([np.sort(values), np.sort(values) - 1e-12, est.bin_edges])
    sup = max(np.max(np.abs(est.cdf(x) - grid_cdf(x, values))),
              np.max(np.abs(est.cdf(values) - (np.searchsorted(np.sort(values), values, "left") / n))))
    assert metrics.ks(est, values) == pytest.approx(sup, abs=1e-9)


def test_estimate_vs_estimate_against_fine_grid():
    p = beta_estimate(n_bins=37, seed=0)
    inner = np.sort(np.random.default_rng(5).uniform(0, 10, 12))
    q = DistributionEstimate(np.concatenate([[0.0], inner, [10.0]]), np.full(13, 1 / 13))
    w = metrics.wasserstein(p, q)
    assert w == pytest.approx(grid_w1(p, q, 0, 10), abs=1e-6)
    x = np.linspace(0, 10, 2_000_001)
    assert metrics.ks(p, q) == pytest.approx(np.max(np.abs(p.cdf(x) - q.cdf(x))), abs=1e-6)
    assert metrics.wasserstein(p, p) == 0.0 and metrics.ks(q, q) == 0.0


def test_hand_computed_cases():
    uniform = DistributionEstimate([0, 1], [1.0])
    # Point mass at c vs uniform on [0, 1]: W1 = c^2/2 + (1-c)^2/2, KS = max(c, 1-c).
    for c in (0.0, 0.25, 0.5, 1.0):
        assert metrics.wasserstein(uniform, [c]) == pytest.approx(c * c / 2 + (1 - c) ** 2 / 2, abs=1e-15)
        assert metrics.ks(uniform, [c]) == pytest.approx(max(c, 1 - c), abs=1e-15)
    # Two point masses: W1 = |a - b| / width, KS = 1.
    assert metrics.wasserstein([2.0], [5.0], bounds=(0, 10)) == pytest.approx(0.3)
    assert metrics.ks([2.0], [5.0], bounds=(0, 10)) == 1.0
    # Uniform on [0, 1] vs all mass in [0.5, 1]: |F_p - F_q| = x on [0, .5], (1 - x) on [.5, 1].
    right = DistributionEstimate([0, 0.5, 1], [0, 1])
    assert metrics.wasserstein(uniform, right) == pytest.approx(0.25, abs=1e-15)
    assert metrics.ks(uniform, right) == pytest.approx(0.5, abs=1e-15)


def test_sign_change_inside_a_piece():
    # F_p - F_q is linear from +0.25 to -0.25 over [0, 1]: the integral is two triangles, 1/8, not 1/4.
    p = DistributionEstimate([0, 1, 2], [0.75, 0.25])
    q = DistributionEstimate([0, 1, 2], [0.25, 0.75])
    assert metrics.wasserstein(p, q) == pytest.approx(grid_w1(p, q, 0, 2), abs=1e-9)
    skew = DistributionEstimate([0, 2], [1.0])
    assert metrics.wasserstein(p, skew) == pytest.approx(grid_w1(p, skew, 0, 2), abs=1e-9)


def test_properties_of_the_distances():
    est = beta_estimate()
    values = beta_values(3000)
    for f in (metrics.wasserstein, metrics.ks):
        assert 0 <= f(est, values) <= 1
        assert f(est, values) == pytest.approx(f(values, est), rel=1e-14)
    assert metrics.wasserstein(est, values) <= metrics.ks(est, values)
    # Invariant to the units: the same data in minutes and in hours.
    hours = DistributionEstimate(est.bin_edges / 60, est.probabilities)
    w = metrics.wasserstein(est, values)
    assert metrics.wasserstein(hours, values / 60) == pytest.approx(w, rel=1e-9)
    assert metrics.ks(hours, values / 60) == pytest.approx(metrics.ks(est, values), rel=1e-9)


# -- the bucketised variants ------------------------------------------------------------------------------

def test_binned_hand_checked():
    est = DistributionEstimate([0, 1, 2, 3, 4], [0.25, 0.25, 0.25, 0.25])
    values = [0.5, 1.0, 1.0, 3.999]  # 1.0 is a bucket edge: it belongs to bucket [1, 2)
    # F_hat at right edges = .25 .5 .75 1; F_emp = .25 .75 .75 1.
    assert metrics.wasserstein_binned(est, values, 4) == pytest.approx(0.25 / 4)
    assert metrics.ks_binned(est, values, 4) == pytest.approx(0.25)
    # On 2 buckets (edges 2, 4): F_hat(2) = .5, F_emp(2) = .75; the estimate is read at the edges.
    assert metrics.wasserstein_binned(est, values, 2) == pytest.approx(0.25 / 2)
    # A value at the high bound belongs to the last bucket.
    assert metrics.wasserstein_binned(est, [4.0, 4.0], 4) == pytest.approx((0.25 + 0.5 + 0.75) / 4)
    assert metrics.wasserstein(est, values, n_bins=4) == metrics.wasserstein_binned(est, values, 4)
    assert metrics.ks(est, values, n_bins=4) == metrics.ks_binned(est, values, 4)


def test_binned_matches_numpy_histogram():
    rng = np.random.default_rng(8)
    a = np.round(rng.uniform(0, 1440, 5000))  # integer minutes: many values on or near bucket edges
    b = np.round(rng.beta(2, 2, 4000) * 1440)
    for n_bins in (1, 7, 64, 1024):
        edges = np.linspace(0, 1440, n_bins + 1)
        fa = np.cumsum(np.histogram(a, edges)[0]) / a.size
        fb = np.cumsum(np.histogram(b, edges)[0]) / b.size
        assert metrics.wasserstein_binned(a, b, n_bins, bounds=(0, 1440)) == pytest.approx(
            np.mean(np.abs(fa - fb)), abs=1e-15)
        assert metrics.ks_binned(a, b, n_bins, bounds=(0, 1440)) == pytest.approx(np.max(np.abs(fa - fb)),
                                                                                  abs=1e-15)
        est = DistributionEstimate(edges, np.histogram(b, edges)[0] / b.size)
        assert metrics.wasserstein_binned(est, a, n_bins) == pytest.approx(np.mean(np.abs(fa - fb)),
                                                                           abs=1e-14)


def test_binned_relation_to_exact():
    n_bins = 64
    edges = np.linspace(0, 10, n_bins + 1)
    values = beta_values(20_000, seed=4)
    hist = DistributionEstimate(edges, np.histogram(values, edges)[0] / values.size)
    # (ii) the histogram CDF is within 1/(2 n_bins) of the empirical CDF in W1.
    est = beta_estimate(n_bins=n_bins)
    assert abs(metrics.wasserstein(est, hist) - metrics.wasserstein(est, values)) <= 1 / (2 * n_bins)
    # (i) binned >= exact against the histogram, with equality when F_p - F_H keeps its sign in each bucket:
    assert metrics.wasserstein_binned(est, values, n_bins) >= metrics.wasserstein(est, hist) - 1e-15
    h = hist.probabilities
    # Shift the histogram one bucket right: F_shifted <= F_H everywhere, so no sign changes.
    shifted = DistributionEstimate(edges, np.concatenate([[0.0], h[:-2], [h[-2] + h[-1]]]))
    assert metrics.wasserstein_binned(shifted, values, n_bins) == pytest.approx(
        metrics.wasserstein(shifted, hist), rel=1e-12)
    assert metrics.ks_binned(est, values, n_bins) <= metrics.ks(est, values) + 1e-15


# -- range and quantile errors -------------------------------------------------------------------------------

def test_range_query_error_explicit_queries():
    est = DistributionEstimate([0, 1, 2], [0.5, 0.5])
    values = [0.25, 0.75, 1.5, 1.5]
    # [0, 1]: est .5, true .5;  [1.5, 1.5]: est 0, true .5;  [0.5, 2]: est .75, true .75 (closed ends).
    assert metrics.range_query_error(est, values, [[0, 1], [1.5, 1.5], [0.5, 2]]) == pytest.approx(0.5 / 3)
    assert metrics.range_query_error(est, values, np.array([[-5.0, 5.0]])) == 0.0


def test_range_query_error_random_queries():
    est = beta_estimate()
    values = beta_values(5000)
    err = metrics.range_query_error(est, values)
    assert err == metrics.range_query_error(est, values, rng=0)  # fixed default: same queries
    assert err != metrics.range_query_error(est, values, rng=1)
    # The same as the explicit queries drawn the documented way.
    a = 10 * 0.9 * np.random.default_rng(0).random(1000)
    q = np.column_stack([a, a + 1.0])
    assert err == pytest.approx(metrics.range_query_error(est, values, q), rel=1e-12)
    true = np.array([np.mean((values >= lo) & (values <= hi)) for lo, hi in q])
    assert err == pytest.approx(np.mean(np.abs(est.range(q[:, 0], q[:, 1]) - true)), rel=1e-12)
    assert metrics.range_query_error(est, values, width=1.0, n_queries=3) == pytest.approx(0.0, abs=1e-15)


def test_quantile_error():
    est = DistributionEstimate([0, 10], [1.0])  # uniform: Q(q) = 10 q
    values = [0.0, 2.0, 4.0, 6.0, 8.0]  # np.quantile: 8 q
    qs = [0.25, 0.5, 1.0]
    assert metrics.quantile_error(est, values, qs) == pytest.approx(np.mean([0.5, 1.0, 2.0]) / 10)
    assert metrics.quantile_error(est, values, 0.5) == pytest.approx(0.1)
    default = metrics.quantile_error(est, values)
    assert default == pytest.approx(np.mean(2 * np.array([0.1, 0.25, 0.5, 0.75, 0.9])) / 10)


# -- validation ----------------------------------------------------------------------------------------------

def test_bounds_rules():
    est = beta_estimate()
    with pytest.raises(ValueError, match="bounds is required when both arguments are raw samples"):
        metrics.wasserstein([1.0], [2.0])
    with pytest.raises(ValueError, match="mismatched bounds: p is an estimate on"):
        metrics.wasserstein(est, [1.0], bounds=(0, 20))
    other = DistributionEstimate([0, 5, 20], [0.5, 0.5])
    with pytest.raises(ValueError, match="mismatched bounds: q is an estimate on"):
        metrics.ks(est, other)
    assert metrics.wasserstein(est, [1.0], bounds=(0, 10)) == metrics.wasserstein(est, [1.0])
    with pytest.raises(ValueError, match=r"q has 2 value\(s\) outside the domain \(0.0, 10.0\), "
                                         r"first at index 2 \(10.5\)"):
        metrics.wasserstein(est, [1.0, 2.0, 10.5, -1.0])
    with pytest.raises(ValueError, match="q has 1 value"):
        metrics.ks([1.0], [11.0], bounds=(0, 10))
    with pytest.raises(ValueError, match="low < high"):
        metrics.ks([1.0], [2.0], bounds=(3, 3))


@pytest.mark.parametrize("bad, exc, match", [
    ([], ValueError, "q is empty"),
    ([1.0, np.nan, np.inf], ValueError, r"finite; 2 value\(s\) are NaN or infinite, first at index 1"),
    ([[1.0, 2.0]], ValueError, r"one-dimensional .* shape \(1, 2\)"),
    (3.0, ValueError, "one-dimensional"),
    (["a", "b"], TypeError, "q must be a DistributionEstimate or a 1-D array of real values"),
    ([True, False], TypeError, "DistributionEstimate or a 1-D array"),
    (None, TypeError, "DistributionEstimate or a 1-D array"),
])
def test_sample_validation(bad, exc, match):
    with pytest.raises(exc, match=match):
        metrics.wasserstein(beta_estimate(), bad)


def test_rejects_reports_and_bad_n_bins():
    spec = ldp.Spec("x", 1.0, 4)
    with pytest.raises(TypeError, match="estimate a distribution from the reports first"):
        metrics.ks(beta_estimate(), ldp.Reports(np.array([0, 1], dtype=np.uint8), spec))
    with pytest.raises(TypeError, match="n_bins must be an int"):
        metrics.wasserstein_binned(beta_estimate(), [1.0], 2.5)
    with pytest.raises(ValueError, match="n_bins must be >= 1; got 0"):
        metrics.ks(beta_estimate(), [1.0], n_bins=0)


def test_error_metric_validation():
    est = beta_estimate()
    with pytest.raises(TypeError, match="est must be a DistributionEstimate"):
        metrics.range_query_error([1.0], [1.0])
    with pytest.raises(TypeError, match="est must be a DistributionEstimate"):
        metrics.quantile_error(np.array([1.0]), [1.0])
    with pytest.raises(ValueError, match=r"queries must have shape \(k, 2\)"):
        metrics.range_query_error(est, [1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"1 row\(s\) have a > b, first at row 1"):
        metrics.range_query_error(est, [1.0], [[1, 2], [3, 2]])
    with pytest.raises(ValueError, match="queries must be finite"):
        metrics.range_query_error(est, [1.0], [[1, np.nan]])
    with pytest.raises(ValueError, match=r"width must be a finite number in \(0, 1\]"):
        metrics.range_query_error(est, [1.0], width=0)
    with pytest.raises(TypeError, match="width"):
        metrics.range_query_error(est, [1.0], width="0.1")
    with pytest.raises(ValueError, match="n_queries"):
        metrics.range_query_error(est, [1.0], n_queries=0)
    with pytest.raises(TypeError, match="bool"):
        metrics.range_query_error(est, [1.0], rng=False)
    with pytest.raises(ValueError, match="outside the domain"):
        metrics.range_query_error(est, [11.0])
    with pytest.raises(ValueError, match=r"q must be in \[0, 1\]"):
        metrics.quantile_error(est, [1.0], qs=[0.5, 1.5])
    with pytest.raises(ValueError, match="qs must be a non-empty"):
        metrics.quantile_error(est, [1.0], qs=[])
    with pytest.raises(ValueError, match="values is empty"):
        metrics.quantile_error(est, [])


def test_pandas_values_accepted():
    pd = pytest.importorskip("pandas")
    est = beta_estimate()
    values = beta_values(100)
    assert metrics.wasserstein(est, pd.Series(values)) == metrics.wasserstein(est, values)
    with pytest.raises(ValueError, match="finite"):
        metrics.ks(est, pd.Series([1.0, None], dtype="Float64"))
