"""Unbiasedness and variance against the closed forms (DESIGN.md R8 d), with fixed seeds.

Tolerances come from the exact per-report variance of each mechanism: |z| < 4.5 has a false-alarm
probability below 1e-5 per test, and the seeds are fixed, so the suite is deterministic.
"""

import math

import numpy as np
import pytest

import ldpnum as ldp

Z = 4.5


def make(name, epsilon, bounds):
    return {"sr": ldp.StochasticRounding, "duchi": ldp.Duchi, "pm": ldp.Piecewise, "hm": ldp.Hybrid,
            "lap": ldp.Laplace}[name](epsilon, bounds)


def population(bounds, n, seed):
    low, high = bounds
    rng = np.random.default_rng(seed)
    x = low + (high - low) * rng.beta(5, 2, n)
    x[: n // 10] = low
    x[n // 10: n // 5] = high
    return x


@pytest.mark.parametrize("name", ["sr", "duchi", "pm", "hm", "lap"])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_mean_is_unbiased(name, epsilon):
    bounds = (-20.0, 5000.0)
    m = make(name, epsilon, bounds)
    x = population(bounds, 200_000, seed=1)
    est = m.estimate_mean(m.privatize(x, rng=int(epsilon * 100)))
    sd = math.sqrt(np.mean(m.variance(x)) / x.size)
    assert abs(est.value - x.mean()) < Z * sd
    # the reported standard error is the spread of the per-report estimates: the mechanism's noise plus
    # the spread of the values themselves (the standard error for a sample from a larger population)
    assert est.standard_error == pytest.approx(math.sqrt((np.mean(m.variance(x)) + x.var()) / x.size), rel=0.02)


@pytest.mark.parametrize("name", ["sr", "duchi", "pm", "hm", "lap"])
@pytest.mark.parametrize("u", [0.0, 0.37, 1.0])
def test_per_report_variance(name, u):
    """Sample variance of the per-report estimates against ``variance(x)``; SE from the exact 4th moment."""
    bounds = (0.0, 10.0)
    m = make(name, 1.0, bounds)
    x = bounds[0] + u * (bounds[1] - bounds[0])
    n = 400_000
    r = m.privatize(np.full(n, x), rng=77)
    e = m.code_estimates[r.codes]
    probs = m.output_probabilities(x)
    mu = probs @ m.code_estimates
    assert mu == pytest.approx(x, abs=1e-9 * (bounds[1] - bounds[0]))  # exactly unbiased per state
    var = m.variance(x)
    mu4 = probs @ (m.code_estimates - mu) ** 4
    assert probs @ (m.code_estimates - mu) ** 2 == pytest.approx(var, rel=1e-9)
    assert abs(e.var(ddof=1) - var) < Z * math.sqrt((mu4 - var**2) / n)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0, 8.0])
def test_closed_forms(epsilon):
    ee = math.exp(epsilon)
    rr = ldp.RandomizedResponse(epsilon)
    assert rr.variance(0.0) == pytest.approx(ee / (ee - 1) ** 2, rel=1e-9)
    assert rr.variance(1.0) == pytest.approx(ee / (ee - 1) ** 2, rel=1e-9)
    d = ldp.Duchi(epsilon, (-1, 1))
    c = (ee + 1) / (ee - 1)
    for t in (-1.0, 0.0, 0.4, 1.0):
        assert d.variance(t) == pytest.approx(c * c - t * t, rel=1e-9)
    assert d.worst_case_variance == pytest.approx(c * c, rel=1e-9)
    sr = ldp.StochasticRounding(epsilon, (0, 7))
    assert sr.worst_case_variance == pytest.approx(49 * c * c / 4, rel=1e-9)
    # Piecewise on its grid is within a few percent of the textbook variance (Wang et al., ICDE 2019)
    pm = ldp.Piecewise(epsilon, (-1, 1))
    a = math.exp(epsilon / 2)
    for t in (0.0, 0.5, 1.0):
        textbook = t * t / (a - 1) + (a + 3) / (3 * (a - 1) ** 2)
        assert pm.variance(t) == pytest.approx(textbook, rel=0.05)


def test_hybrid_alpha_and_variance():
    h = ldp.Hybrid(2.0, (-1, 1))
    assert h.alpha == pytest.approx(1 - math.exp(-1.0), abs=1e-15)
    assert ldp.Hybrid(0.5, (-1, 1)).alpha == 0.0
    # Hybrid never does worse in the worst case than both of its branches
    assert h.worst_case_variance <= max(ldp.Piecewise(2.0, (-1, 1)).worst_case_variance,
                                        ldp.Duchi(2.0, (-1, 1)).worst_case_variance)


def test_confidence_interval():
    m = ldp.Duchi(1.0, (0, 1))
    est = m.estimate_mean(m.privatize(np.full(10_000, 0.5), rng=0))
    lo, hi = est.confidence_interval(0.95)
    assert hi - lo == pytest.approx(2 * 1.959963984540054 * est.standard_error)
    lo99, hi99 = est.confidence_interval(0.99)
    assert lo99 < lo and hi < hi99
    for bad in (0, 1, 1.5, -0.1, "0.9", True):
        with pytest.raises(ValueError):
            est.confidence_interval(bad)


def test_single_report_uses_worst_case_variance():
    m = ldp.StochasticRounding(1.0, (0, 1))
    est = m.estimate_mean(m.privatize([0.3], rng=0))
    assert est.n_reports == 1
    assert est.standard_error == pytest.approx(math.sqrt(m.worst_case_variance))
