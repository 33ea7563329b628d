"""HDG's bootstrap intervals: the resampling of grid counts, reproducibility, coverage and refusals."""

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.estimation.bootstrap import resample_table_counts
from ldpnum.multi.hdg import GRRLevel, GridOLH


def _pair(n, rng):
    a = rng.uniform(0, 1, n)
    return np.column_stack([a, np.clip(a + rng.normal(0, 0.1, n), 0, 1)])


@pytest.mark.parametrize("oracle", [GRRLevel(1.0, 6), GridOLH(1.0, 6)])
def test_resampled_counts_have_the_oracles_mean_and_covariance(oracle):
    # the unbiased estimate from resampled blocks: mean pi, covariance [diag(V) - pi pi^T (p-q)^2...] in closed form
    pi = np.array([0.4, 0.3, 0.2, 0.1, 0.0, 0.0])
    n, B = 500, 20_000
    blocks = resample_table_counts([oracle], [pi], [n], B, rng=3)
    est = np.array([oracle.estimate(b) for b in blocks])
    p, q = (float(v) for v in oracle.oracle.support_probabilities)
    s = q + (p - q) * pi  # a report's chance to support each cell
    cov = (-np.outer(pi, pi) * (p - q) ** 2 + np.diag(s * (1 - s) + (p - q) ** 2 * pi ** 2)) / (n * (p - q) ** 2)
    if not oracle.hashed:  # GRR: the output histogram is multinomial, supports of two cells exclusive
        cov = (np.diag(s) - np.outer(s, s)) / (n * (p - q) ** 2)
    se_mean = np.sqrt(np.diag(cov) / B)
    assert np.all(np.abs(est.mean(0) - pi) < 5 * se_mean)
    # sample variances within 5 SE of the closed form (SE of a variance: var * sqrt(2 / B))
    assert np.all(np.abs(est.var(0) - np.diag(cov)) < 5 * np.diag(cov) * np.sqrt(2 / B))
    corr = np.cov(est.T)[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1])
    assert abs(corr - cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1])) < 5 / np.sqrt(B)
    assert (blocks[:, :oracle.k] >= 0).all() and (blocks[:, :oracle.k] <= n).all()


@pytest.mark.filterwarnings("ignore::ldpnum.exceptions.BootstrapBiasWarning")  # near-empty cells
def test_replicates_reproducible_and_intervals_of_ranges_and_joint_cells():
    hdg = ldp.HDG(2.0, bounds={"a": (0, 1), "b": (0, 1)}, granularities=(8, 4))
    agg = hdg.aggregate(hdg.privatize(_pair(4000, np.random.default_rng(0)), rng=1))
    est = hdg.estimate_ranges(agg, bootstrap=20, rng=2, within_cell="uniform")
    again = hdg.estimate_ranges(agg, bootstrap=20, rng=2, within_cell="uniform")
    assert len(est.replicates) == 20
    assert all(np.array_equal(r.joints[0], s.joints[0]) for r, s in zip(est.replicates, again.replicates))
    q = {"a": (0, [0.5, 1.0]), "b": (0, 0.5)}
    r = est.range(q, ci=0.9)
    assert np.all(r.low <= r.estimate) and np.all(r.estimate <= r.high) and np.all(r.high - r.low > 0)
    assert np.array_equal(r.low, again.range(q, ci=0.9).low)
    cells = est.range(q, ci=0.9, interval="cells")  # the conservative closed-form interval is still there
    assert not np.array_equal(cells.low, r.low)
    j = est.joint("b", "a", grid=True, ci=0.9, as_frame=False)  # the 2-D grid's cells: range() of each
    assert j.estimate.shape == j.low.shape == (4, 4) and np.all(j.low <= j.high)
    assert np.allclose(j.estimate, est.joint("a", "b", grid=True, as_frame=False)[0].T)
    cell = est.range({"b": (0.25, 0.5), "a": (0.5, 0.75)}, ci=0.9)
    assert (j.estimate[1, 2], j.low[1, 2], j.high[1, 2]) == pytest.approx(tuple(cell))
    assert np.allclose(j.estimate.sum(axis=0), est.range({"a": (est.edges("a", 4)[:-1], est.edges("a", 4)[1:]),
                                                           "b": (0, 1)}))
    with pytest.raises(ValueError, match="needs at least 39 bootstrap replicates"):
        est.range(q, ci=0.95)


@pytest.mark.filterwarnings("ignore::ldpnum.exceptions.BootstrapBiasWarning")  # near-empty cells
def test_bootstrap_intervals_refused_where_the_within_cell_model_decides():
    # a range cutting a grid cell, or a cell of the joint table finer than the 2-D grid, relies on the within-cell
    # model, whose bias the bootstrap does not contain (bench/bands_multi.py: as low as 0.00-0.19 coverage of nominal 95%)
    hdg = ldp.HDG(2.0, bounds={"a": (0, 1), "b": (0, 1)}, granularities=(8, 4))
    est = hdg.estimate_ranges(hdg.aggregate(hdg.privatize(_pair(3000, np.random.default_rng(0)), rng=1)),
                              bootstrap=20, rng=2, consistency="none")
    est.range({"a": (-1, 0.5), "b": (0.25, np.inf)}, ci=0.9)  # ends outside the bounds are clipped to edges
    with pytest.raises(ValueError, match=r"1 of 3 queries cut cells of the 1-D grid, first at query 2.*"
                                         r"'a': 0, 0.125, .*the smallest aligned range holding query 2: "
                                         r"\{'a': \(0.25, 0.5\)\}.*interval='cells'"):
        est.range({"a": ([0.0, 0.25, 0.3], 0.5)}, ci=0.9)
    with pytest.raises(ValueError, match=r"cut cells of the 2-D grid \(4 x 4 cells\), first at query 0"):
        est.range({"a": (0.0, 0.5), "b": (0.1, 0.5)}, ci=0.9)
    cells = est.range({"a": (0.0, 0.5), "b": (0.1, 0.5)}, ci=0.9, interval="cells")  # the conservative one stays
    assert cells.low <= cells.estimate <= cells.high
    with pytest.raises(ValueError, match="cut cells"):
        est.range({"a": (0.3, 0.5)}, ci=0.9, interval="bootstrap")
    fine = hdg.estimate_ranges(hdg.aggregate(hdg.privatize(_pair(3000, np.random.default_rng(0)), rng=1)),
                               bootstrap=20, rng=2, within_cell="uniform")
    with pytest.raises(ValueError, match=r"joint table's 8 x 8 cells split the 2-D grid's 4 x 4.*grid=True"):
        fine.joint("a", "b", ci=0.9)
    raw = est.joint("a", "b", ci=0.9, as_frame=False)  # consistency="none": the table is the 2-D grid itself
    assert raw.estimate.shape == (4, 4)


def test_ci_from_bootstrap_refused_without_replicates():
    hdg = ldp.HDG(2.0, bounds={"a": (0, 1), "b": (0, 1)}, granularities=(8, 4))
    est = hdg.estimate_ranges(hdg.aggregate(hdg.privatize(_pair(2000, np.random.default_rng(0)), rng=1)))
    with pytest.raises(ValueError, match=r"no bootstrap replicates.*bootstrap=200"):
        est.range({"a": (0, 0.5)}, ci=0.95, interval="bootstrap")
    with pytest.raises(ValueError, match=r"no bootstrap replicates"):
        est.joint("a", "b", ci=0.95)
    with pytest.raises(ValueError, match="interval must be"):
        est.range({"a": (0, 0.5)}, ci=0.95, interval="wald")
    with pytest.raises(ValueError, match="bootstrap must be an integer >= 20"):
        hdg.estimate_ranges(hdg.empty_aggregate(), bootstrap=5)


#: Collections of the coverage checks and their floor: nominal 95% less 4 binomial standard errors (0.80 at 30
#: runs; the percentile ends at the 1st and 39th of B = 39 replicates have nominal coverage 38/40 = 0.95 exactly
#: for a pivotal answer). Lean checks that catch a wrong interval (the refused ones covered down to 0.00); the
#: coverage itself is measured in bench/bands_multi.py (100 collections, n = 20,000, B = 100, three ε).
RUNS = 30
FLOOR = 0.95 - 4 * np.sqrt(0.95 * 0.05 / RUNS)


@pytest.mark.filterwarnings("ignore::ldpnum.exceptions.BootstrapBiasWarning")  # raw grids clipped to resample
def test_bootstrap_intervals_cover_aligned_queries():
    # the raw grids (consistency="none": their refits are cheap), B = 39: a 1-D and a 2-D range on the cells' edges
    hdg = ldp.HDG(2.0, bounds={"a": (0, 1), "b": (0, 1)}, granularities=(8, 4))
    rng = np.random.default_rng(5)
    queries = [{"a": (0.25, 0.5)}, {"a": (0, 0.5), "b": (0, 0.5)}]
    n = 2000
    x = _pair(RUNS * n, rng)
    reports = hdg.privatize(x, rng=rng)
    pop = _pair(1_000_000, np.random.default_rng(6))  # the population's answers, to a Monte Carlo error of 5e-4
    truth = [0.25, np.mean((pop[:, 0] < 0.5) & (pop[:, 1] < 0.5))]
    hits = np.zeros(2)
    for k in range(RUNS):
        est = hdg.estimate_ranges(hdg.aggregate(reports[k * n:(k + 1) * n]), consistency="none", bootstrap=39,
                                  rng=rng)
        for i, q in enumerate(queries):
            r = est.range(q, ci=0.95)
            hits[i] += r.low <= truth[i] <= r.high
    assert np.all(hits / RUNS >= FLOOR), hits / RUNS


# -- Marginals ------------------------------------------------------------------------------------------------

def _categorical(n, rng):
    a = rng.integers(0, 3, n)
    return np.column_stack([a, np.where(rng.random(n) < 0.8, a, rng.integers(0, 3, n)), rng.integers(0, 2, n)])


def test_marginals_replicates_reproducible_errors_and_refusals():
    mech = ldp.Marginals(2.0, categories={"a": 3, "b": 3, "c": 2})
    agg = mech.aggregate(mech.privatize(_categorical(4000, np.random.default_rng(0)), rng=1))
    est = mech.estimate_marginals(agg, bootstrap=20, rng=2)
    again = mech.estimate_marginals(agg, bootstrap=20, rng=2)
    r, s = est.marginal("b", "a", ci=0.9), again.marginal(("b", "a"), ci=0.9)
    assert np.array_equal(r.low, s.low) and np.array_equal(r.high, s.high)
    assert np.allclose(r.estimate, est.marginal("b", "a")) and np.all(r.low <= r.high)
    se = est.standard_error("a", "b")
    reps = np.stack([x.marginal("a", "b") for x in est.replicates])
    assert se.shape == (3, 3) and np.allclose(se, reps.std(axis=0, ddof=1))
    frame = est.marginal(("c", "a"), ci=0.9, as_frame=True)
    assert frame.low.shape == (2, 3) and (frame.low <= frame.high).all().all()
    # a reconstruction (maximum entropy: a model) gets no interval and no standard error
    with pytest.raises(ValueError, match=r"no released set holds \['a', 'b', 'c'\].*maximum-entropy.*k=3"):
        est.marginal(("a", "b", "c"), ci=0.9)
    with pytest.raises(ValueError, match=r"standard_error: no released set holds"):
        est.standard_error("c", "b", "a")
    plain = mech.estimate_marginals(agg)
    assert plain.replicates is None
    with pytest.raises(ValueError, match=r"no bootstrap replicates.*bootstrap=200"):
        plain.marginal("a", ci=0.9)
    with pytest.raises(ValueError, match=r"no bootstrap replicates"):
        plain.standard_error("a")
    with pytest.raises(TypeError, match="bootstrap"):
        mech.estimate_marginals(agg, bootstrap=50.0)


def test_marginals_bootstrap_intervals_cover_populated_cells():
    # one released pair (its refits are cheap), B = 39: the 2-way table's populated (diagonal) cells and a 1-way
    # marginal's cell. Near-empty cells are measured in bench/bands_multi.py (non-negativity biases them upwards).
    mech = ldp.Marginals(2.0, categories={"a": 3, "b": 3})
    truth = np.full((3, 3), 0.2 / 9) + np.eye(3) * 0.8 / 3
    n = 2000
    rng = np.random.default_rng(7)
    reports = mech.privatize(_categorical(RUNS * n, rng)[:, :2], rng=rng)
    hits = np.zeros(4)
    for k in range(RUNS):
        est = mech.estimate_marginals(mech.aggregate(reports[k * n:(k + 1) * n]), bootstrap=39, rng=rng)
        r = est.marginal("a", "b", ci=0.95)
        hits[:3] += (np.diag(r.low) <= np.diag(truth)) & (np.diag(truth) <= np.diag(r.high))
        m = est.marginal("b", ci=0.95)
        hits[3] += m.low[0] <= 1 / 3 <= m.high[0]
    assert np.all(hits / RUNS >= FLOOR), hits / RUNS
