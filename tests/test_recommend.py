"""ldp.recommend: the rule per task, its predicted errors against measured ones, bad input."""

import math

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0, 8.0])
def test_mean_picks_the_smallest_worst_case_variance(eps):
    r = ldp.recommend("mean", n=10_000, epsilon=eps, bounds=(0, 100))
    assert r.task == "mean" and r.mechanism.epsilon == eps and r.mechanism.bounds == (0.0, 100.0)
    assert all(r.predicted_error <= v for v in r.alternatives.values())
    assert r.predicted_error == pytest.approx(math.sqrt(r.mechanism.worst_case_variance / 10_000))
    assert set(r.alternatives) | {r.mechanism.name} == {"duchi", "piecewise", "hybrid", "square_wave", "laplace"}


def test_mean_prediction_bounds_the_measured_error():
    # at the worst case (values at an end of the range, for Hybrid) the empirical standard error of the mean
    # over 200 collections is within 10% of the predicted one (the SE of an SD estimate from 200 runs: 5%)
    r = ldp.recommend("mean", n=2_000, epsilon=2.0, bounds=(0, 1))
    m = r.mechanism
    x = np.ones(2_000)
    est = [m.estimate_mean(m.privatize(x, rng=s)).value for s in range(200)]
    assert np.std(est, ddof=1) == pytest.approx(r.predicted_error, rel=0.15)


def test_simulated_tasks_predict_what_they_measure():
    r = ldp.recommend("distribution", n=50_000, epsilon=1.0, bounds=(0, 10))
    assert r.mechanism.name == "square_wave" and "simulated" in r.how
    # the prediction is the mean over the reference collections: a fresh collection lands near it
    x = 10 * np.random.default_rng(99).beta(2, 2, 50_000)
    d = r.mechanism.estimate_distribution(r.mechanism.aggregate(r.mechanism.privatize(x, rng=5)))
    assert ldp.metrics.wasserstein(d, x) < 2.5 * r.predicted_error
    q = ldp.recommend("quantiles", n=50_000, epsilon=1.0, bounds=(0, 10))
    assert 0 < q.predicted_error < 2.0
    rr = ldp.recommend("ranges", n=50_000, epsilon=1.0, bounds=(0, 10))
    assert rr.mechanism.name in ("square_wave", "hierarchical_histogram")
    assert set(rr.alternatives) == {"square_wave", "hierarchical_histogram"} - {rr.mechanism.name}
    big = ldp.recommend("distribution", n=4_000_000, epsilon=1.0, bounds=(0, 10))
    assert "scaled" in big.how


@pytest.mark.parametrize("n", [10_000, 100_000])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_ranges_default_reference_picks_square_wave(n, eps):
    """On its own smooth default reference (a Beta(2, 2)) the adaptive hierarchical histogram's range MSE is
    1.5-6.3x Square Wave's (30 simulated collections at each of these n and ε), so without a reference the
    rule must pick Square Wave. With 3 simulated collections it picked the tree at ε = 1 (n = 10^4 and 10^5):
    one Square Wave collection in a few lands at 2-10x its typical MSE (ems-cv's smoothing choice), and the mean
    of three followed it."""
    r = ldp.recommend("ranges", n=n, epsilon=eps, bounds=(0, 1440))
    assert r.mechanism.name == "square_wave", (r.predicted_error, r.alternatives)


def test_frequencies_delegate_to_the_oracle_rule():
    r = ldp.recommend("frequencies", n=10_000, epsilon=1.0, k=4)
    assert r.mechanism.name == "grr" and r.mechanism.k == 4
    assert ldp.recommend("frequencies", n=10_000, epsilon=1.0, k=1024).mechanism.name == "oue"


@pytest.mark.parametrize("kwargs,match", [
    ({"task": "median", "n": 10, "epsilon": 1.0, "bounds": (0, 1)}, "task must be"),
    ({"task": "mean", "n": 0, "epsilon": 1.0, "bounds": (0, 1)}, "n must"),
    ({"task": "mean", "n": 10, "epsilon": 0.0, "bounds": (0, 1)}, "epsilon"),
    ({"task": "mean", "n": 10, "epsilon": 1.0, "bounds": None}, "bounds"),
    ({"task": "mean", "n": 10, "epsilon": 1.0, "bounds": (0, 1), "k": 3}, "not k"),
    ({"task": "frequencies", "n": 10, "epsilon": 1.0}, "needs k"),
    ({"task": "frequencies", "n": 10, "epsilon": 1.0, "k": 3, "bounds": (0, 1)}, "not bounds"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ldp.recommend(**kwargs)


@pytest.mark.parametrize("n", [10.0, "10", True, None])
def test_n_of_a_wrong_kind(n):
    # a wrong kind was a ValueError; R5: a TypeError
    with pytest.raises(TypeError, match="^n must be an integer; got"):
        ldp.recommend("mean", n=n, epsilon=1.0, bounds=(0, 1))


def test_accessor_auto():
    s = pd.Series(np.random.default_rng(0).uniform(0, 100, 1000), name="age")
    r = s.ldp.privatize("auto", epsilon=0.5, bounds=(0, 100), task="mean", rng=1)
    assert r.ldp.spec.mechanism == "duchi"
    with pytest.raises(ValueError, match="needs epsilon"):
        s.ldp.privatize("auto", epsilon=1.0)
    with pytest.raises(ValueError, match="go with mechanism='auto'"):
        s.ldp.privatize(ldp.Duchi(1.0, (0, 100)), epsilon=1.0)


def test_adaptive_rule_needs_point_masses_on_a_background_in_a_public_reference():
    """The rule alone (no simulation): point masses holding 10-90% of the reference, n >= 1e5, ε >= 2."""
    from ldpnum._recommend import _adaptive_pays, _check_reference

    rng = np.random.default_rng(0)
    spiky = _check_reference(np.where(rng.random(5000) < 0.3, rng.choice([0.1, 0.5, 0.9], 5000),
                                      rng.beta(2, 5, 5000)), (0.0, 1.0))
    smooth = _check_reference(rng.beta(2, 5, 5000), (0.0, 1.0))
    integers = _check_reference(rng.integers(0, 10, 5000).astype(float) / 10, (0.0, 1.0))
    assert _adaptive_pays("distribution", 2.0, 100_000, spiky) and _adaptive_pays("ranges", 4.0, 10**6, spiky)
    assert not _adaptive_pays("distribution", 1.0, 10**6, spiky)          # ε below 2
    assert not _adaptive_pays("distribution", 2.0, 99_999, spiky)          # pilot under 20,000 reports
    assert not _adaptive_pays("quantiles", 2.0, 10**6, spiky)              # not measured for quantiles
    assert not _adaptive_pays("distribution", 2.0, 10**6, smooth)          # no point masses
    assert not _adaptive_pays("distribution", 2.0, 10**6, integers)        # a discrete column
    assert not _adaptive_pays("distribution", 2.0, 10**6, None)            # no reference: never
