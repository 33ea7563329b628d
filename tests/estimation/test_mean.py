"""Mean estimation from code counts (``ldpnum/estimation/mean.py``): the unbiased mean and the small-sample floor
of its standard error."""

import math

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.estimation.mean import SMALL_SAMPLE, estimate_mean, standard_error


def test_standard_error_is_the_sample_variance_with_a_worst_case_floor_for_small_samples():
    V = 2.0
    # large n: the sample variance when it is above V·n0/n
    assert standard_error(3000, 0.5, V) == pytest.approx(math.sqrt(0.5 / 3000), rel=1e-12)
    # up to n0 reports the floor is the worst-case variance itself, beyond it V·n0/n
    assert standard_error(10, 0.1, V) == pytest.approx(math.sqrt(V / 10), rel=1e-12)
    n = 2 * SMALL_SAMPLE
    assert standard_error(n, 0.1, V) == pytest.approx(math.sqrt(V * SMALL_SAMPLE / n / n), rel=1e-12)
    np.testing.assert_allclose(standard_error(np.array([10, 3000]), np.array([0.1, 0.5]), V),
                               [math.sqrt(V / 10), math.sqrt(0.5 / 3000)], rtol=1e-12)  # arrays broadcast


def test_estimate_mean_is_the_average_of_the_code_estimates():
    m = ldp.Duchi(epsilon=1.0, bounds=(0, 10))
    agg = ldp.Aggregate([30, 70], m.spec)
    e0, e1 = m.code_estimates
    value = (30 * e0 + 70 * e1) / 100
    s2 = (30 * (e0 - value) ** 2 + 70 * (e1 - value) ** 2) / 99
    est = estimate_mean(agg, m.code_estimates, worst_case_variance=m.worst_case_variance, epsilon=1.0)
    assert est.value == pytest.approx(value, rel=1e-14)
    assert est.standard_error == pytest.approx(math.sqrt(s2 / 100), rel=1e-14)
    assert m.estimate_mean(agg) == est  # the mechanism's method is a thin wrapper
    one = estimate_mean(ldp.Aggregate([0, 1], m.spec), m.code_estimates, worst_case_variance=9.0, epsilon=1.0)
    assert one.standard_error == 3.0  # one report: the worst-case variance
    with pytest.raises(ValueError, match="estimate_mean: no reports"):
        estimate_mean(ldp.Aggregate([0, 0], m.spec), m.code_estimates, worst_case_variance=1.0, epsilon=1.0)
