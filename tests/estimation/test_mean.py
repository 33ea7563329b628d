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


def test_estimate_mean_is_the_count_weighted_mean_of_the_code_estimates():
    m = ldp.Duchi(1.0, (-1, 1))
    n0, n1 = 150, 250
    agg = ldp.Aggregate([n0, n1], m.spec)
    e0, e1 = m.code_estimates
    est = estimate_mean(agg, m.code_estimates, worst_case_variance=m.worst_case_variance, epsilon=1.0)
    mean = (n0 * e0 + n1 * e1) / 400
    assert est.value == pytest.approx(mean, rel=1e-12)
    s2 = (n0 * (e0 - mean) ** 2 + n1 * (e1 - mean) ** 2) / 399
    assert est.standard_error == pytest.approx(float(standard_error(400, s2, m.worst_case_variance)), rel=1e-9)
