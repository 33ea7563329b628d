"""Integer-valued data (counts, ages, ratings): the discrete mode of HierarchicalHistogram and SquareWave, whose
cells are the integers, and the point-mass warning of the continuous mode.

The defect: with equal buckets, a range end or a quantile inside a bucket spreads the bucket's mass uniformly,
so the point masses of integer data at a range's ends were partly lost, with tight intervals around the wrong
answer (Poisson(3), ε = 4, 200,000 people: ``range(1, 3)`` 0.345 [0.336, 0.351] against P(1 ≤ X ≤ 3) = 0.598).

The discrete mode spans the mechanisms, the estimators and the results, so its end-to-end checks are here; the
meaning of the discrete queries is tested with the results (tests/test_results.py), the point transition with
EM (tests/estimation/test_em.py) and the held-out search with the distribution estimate
(tests/estimation/test_distribution.py).
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random

# -- the reproducer ----------------------------------------------------------------------------------------

POISSON = np.random.default_rng(0).poisson(3, 200_000).astype(float)
POISSON_TRUTH = float(np.mean((POISSON >= 1) & (POISSON <= 3)))  # 0.597925


def test_hierarchical_discrete_answers_integer_ranges():
    hh = ldp.HierarchicalHistogram(4.0, (0, 80), discrete=True)
    assert hh.discrete and hh.n_leaves == 81 and hh.spec.get("discrete") is True
    est = hh.estimate_ranges(hh.aggregate(hh.privatize(POISSON, rng=1)), bootstrap=40, rng=2)
    r = est.range(1, 3, ci=0.95)
    # measured 0.604 [0.597, 0.611]: the interval's half-width 0.007 is 1.96 sd, so 0.015 is about 4 sd
    assert abs(r.estimate - POISSON_TRUTH) < 0.015
    assert r.low <= POISSON_TRUTH <= r.high
    q = est.quantile(0.5, ci=0.95)
    assert isinstance(q.estimate, int) and (q.estimate, q.low, q.high) == (3, 3, 3)
    assert est.quantile([0.25, 0.5, 0.75]).tolist() == [2, 3, 4]  # np.quantile of the values: 2, 3, 4


def test_square_wave_discrete_answers_integer_ranges():
    sw = ldp.SquareWave(4.0, (0, 80), discrete=True)
    assert sw.discrete and sw.n_points == 81
    est = sw.estimate_distribution(sw.aggregate(sw.privatize(POISSON, rng=1)), bootstrap=40, rng=2)
    assert est.discrete and est.n_bins == 81
    r = est.range(1, 3, ci=0.95)
    # measured 0.598 [0.590, 0.607] (half-width 0.0085 = 1.96 sd): 0.017 is about 4 sd
    assert abs(r.estimate - POISSON_TRUTH) < 0.017
    assert r.low <= POISSON_TRUTH <= r.high
    assert est.quantile([0.25, 0.5, 0.75]).tolist() == [2, 3, 4]


def test_continuous_mode_warns_on_the_reproducer():
    """The old behaviour, kept for continuous data, now says that it cannot be trusted here."""
    hh = ldp.HierarchicalHistogram(4.0, (0, 80))
    with pytest.warns(ldp.PointMassWarning, match=r"8 cell\(s\) hold far more mass.*discrete=True") as rec:
        est = hh.estimate_ranges(hh.aggregate(hh.privatize(POISSON, rng=1)))
    assert rec[0].message.count == 8 and rec[0].message.first_index == 0  # the integers 0..7 (P(8) = 0.008)
    assert rec[0].filename == __file__  # attributed to the caller's line
    assert abs(est.range(1, 3) - 0.345) < 0.01  # the misplaced mass the warning is about
    assert issubclass(ldp.PointMassWarning, ldp.SmoothingBiasWarning)


# -- doctor visits: integers with 31% zeros, quartiles 0 / 1 / 4 --------------------------------------------

VISITS_PMF = np.array([0.31, 0.22, 0.12, 0.08, 0.07, 0.05, 0.04, 0.03, 0.02, 0.02, 0.01, 0.01, 0.01, 0.005, 0.005,
                       0, 0, 0, 0, 0, 0])
VISITS_PMF = VISITS_PMF / VISITS_PMF.sum()
QS = np.array([0.25, 0.5, 0.75])
VISITS_Q = np.searchsorted(np.cumsum(VISITS_PMF), QS - 1e-12)  # 0, 1, 4
VISITS_RANGE = float(VISITS_PMF[1:4].sum())  # P(1 <= X <= 3) = 0.42


def visits(n, rng):
    return rng.choice(VISITS_PMF.size, size=n, p=VISITS_PMF).astype(float)


def test_square_wave_continuous_warns_on_point_masses():
    sw = ldp.SquareWave(2.0, (0, 20))
    x = visits(20_000, np.random.default_rng(1))
    with pytest.warns(ldp.PointMassWarning, match=r"cell\(s\) hold far more mass.*first: cell 0") as rec:
        sw.estimate_distribution(sw.aggregate(sw.privatize(x, rng=1)))
    assert rec[0].message.count >= 1 and rec[0].filename == __file__


@pytest.mark.parametrize("make", [lambda: ldp.SquareWave(2.0, (0, 1)), lambda: ldp.HierarchicalHistogram(2.0, (0, 1))])
def test_no_point_mass_warning_on_smooth_data(make):
    """Negative control. Measured: Square Wave on Beta(5, 2), a log-normal tail, a two-Gaussian mixture, the
    uniform and a density stepping from 0 at 0.4, n = 1e4..1e6, ε = 0.5..4: no warning in 45 estimates."""
    m = make()
    x = np.random.default_rng(3).beta(5, 2, 100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ldp.PointMassWarning)
        est = m.estimate_ranges(m.aggregate(m.privatize(x, rng=4))) if hasattr(m, "estimate_ranges") else \
            m.estimate_distribution(m.aggregate(m.privatize(x, rng=4)))
    assert est is not None


def coverage(make, n_collections, n=1000, n_boot=40, seed=0):
    """Share of the nominal 95% bootstrap intervals of the quartiles and of P(1 <= X <= 3) that cover the truth
    of the doctor-visits distribution, over ``n_collections`` collections of ``n`` people (fixed seeds)."""
    hits_q, hits_r = np.zeros(3), 0
    for r in range(n_collections):
        g = np.random.default_rng(seed + r)
        m = make()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ldp.SmoothingBiasWarning)
            agg = m.aggregate(m.privatize(visits(n, g), rng=g))
            if hasattr(m, "estimate_ranges"):
                est = m.estimate_ranges(agg, bootstrap=n_boot, rng=g)
            else:
                est = m.estimate_distribution(agg, bootstrap=n_boot, rng=g)
            q, rng_ = est.quantile(QS, ci=0.95), est.range(1, 3, ci=0.95)
        hits_q += (np.asarray(q.low) <= VISITS_Q) & (VISITS_Q <= np.asarray(q.high))
        hits_r += rng_.low <= VISITS_RANGE <= rng_.high
    return hits_q / n_collections, hits_r / n_collections


def check_coverage(cov_q, cov_r):
    """A true 95% interval reads 0.92-0.98 over 200 collections (binomial sd 0.015); the quantiles of integer
    data are conservative (a quantile is an integer, the interval's ends are rounded outwards), so only their
    lower end is checked."""
    assert 0.92 <= cov_r <= 0.98, cov_r
    assert np.all(cov_q >= 0.92), cov_q


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["hierarchical", "square_wave"])
def test_discrete_intervals_cover(kind):
    """200 collections of 1,000 people at ε = 2, 40 replicates each. Measured: hierarchical histogram, range
    0.94, quartiles 1.00 / 0.99 / 0.985; Square Wave (128 cells), range 0.97, quartiles 0.99 / 0.99 / 0.995.
    The planted defect, the continuous mode on the same data (the behaviour before the discrete mode), covers
    the first quartile in 0 of 20 collections and is rejected by the same check."""
    if kind == "hierarchical":
        def make(discrete):
            return ldp.HierarchicalHistogram(2.0, (0, 20), discrete=discrete)
    else:
        def make(discrete):
            return ldp.SquareWave(2.0, (0, 20), n_cells=128, discrete=discrete)
    check_coverage(*coverage(lambda: make(True), 200))
    with pytest.raises(AssertionError):
        check_coverage(*coverage(lambda: make(False), 20, seed=10_000))


# -- validation, specs and round trips ---------------------------------------------------------------------

@pytest.fixture
def no_draws(monkeypatch):
    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)


MECHANISMS = [ldp.HierarchicalHistogram, ldp.SquareWave, ldp.GeneralWave]


@pytest.mark.parametrize("cls", MECHANISMS)
def test_discrete_bad_inputs_raise_before_any_draw(cls, no_draws):
    m = cls(1.0, (0, 10), discrete=True)
    with pytest.raises(ldp.exceptions.InvalidValuesError, match=r"2 non-integer value\(s\), first at index 1 \(2.5\)"):
        m.privatize([1, 2.5, 3, 0.1], rng=0)
    with pytest.raises(ldp.exceptions.InvalidValuesError, match=r"column 'v' has 1 non-integer"):
        m.prepare_values([1.0, 7.25], name="column 'v'")
    with pytest.raises(ValueError, match="non-integer"):
        m.privatize([1.0, np.nan], nan_policy="impute", fill_value=2.5, rng=0)
    with pytest.raises(ValueError, match="integer bounds"):
        cls(1.0, (0.5, 10), discrete=True)
    with pytest.raises(TypeError, match="discrete must be a bool"):
        cls(1.0, (0, 10), discrete=1)
    with pytest.raises(ValueError, match="integers, more than"):
        cls(1.0, (0, 10**6), discrete=True)


def test_discrete_parameter_conflicts():
    with pytest.raises(ValueError, match="n_leaves: discrete=True has one leaf per integer"):
        ldp.HierarchicalHistogram(1.0, (0, 10), n_leaves=16, discrete=True)
    assert ldp.HierarchicalHistogram(1.0, (0, 10), n_leaves=11, discrete=True).n_leaves == 11
    sw = ldp.SquareWave(1.0, (0, 10), discrete=True)
    agg = sw.aggregate(sw.privatize(np.arange(11.0).repeat(20), rng=0))
    with pytest.raises(ValueError, match="n_bins: a discrete=True mechanism"):
        sw.estimate_distribution(agg, n_bins=64)
    assert sw.estimate_distribution(agg, n_bins=11).n_bins == 11


@pytest.mark.parametrize("cls", MECHANISMS)
def test_discrete_spec_round_trips(cls):
    m = cls(2.0, (-3, 12), discrete=True)
    assert ldp.from_spec(m.spec) == m and ldp.from_spec(m.spec).discrete
    assert ldp.Spec.from_json(m.spec.to_json()) == m.spec
    assert m.spec != cls(2.0, (-3, 12)).spec
    assert "discrete" not in dict(cls(2.0, (-3, 12)).spec.params)  # continuous specs are unchanged
    assert "discrete=True" in repr(m)
    assert pickle.loads(pickle.dumps(m)) == m


def test_discrete_mode_through_the_pandas_accessor():
    x = visits(5_000, np.random.default_rng(7))
    df = pd.DataFrame({"visits": x.astype(np.int64)})
    hh = ldp.HierarchicalHistogram(2.0, (0, 20), discrete=True)
    sw = ldp.SquareWave(2.0, (0, 20), discrete=True)
    for m in (hh, sw):
        reports = df.ldp.privatize({"visits": m}, rng=0)
        col = reports["visits"]
        est = col.ldp.estimate_ranges() if m is hh else col.ldp.estimate_distribution()
        assert est.discrete
        assert ldp.from_spec(est.spec) == m  # the spec read back from the column names the discrete mode
        assert est.quantile(0.25) == 0  # 31% zeros
