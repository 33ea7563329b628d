"""ldpnum.estimation: the server-side estimators that the mechanisms delegate to."""

import math

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.estimation import (estimate_frequencies, estimate_mean, postprocess_frequencies, support_variance,
                               unbiased_frequencies)


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


@pytest.mark.parametrize("oracle", [ldp.GRR(1.0, k=5), ldp.OLH(2.0, k=5), ldp.HadamardResponse(0.5, k=5)],
                         ids=lambda o: o.name)
def test_unbiased_frequencies_invert_the_expected_support(oracle):
    """With the expected support counts n (f p + (1 - f) q) the estimator returns f: unbiasedness."""
    p, q = oracle.support_probabilities
    p, q = float(p), float(q)
    f = np.array([0.1, 0.4, 0.0, 0.3, 0.2])
    n = 12_345
    np.testing.assert_allclose(unbiased_frequencies(n * (f * p + (1 - f) * q), n, p, q), f, atol=1e-12)
    np.testing.assert_allclose(oracle.variance(f), support_variance(p, q, f), rtol=1e-15)
    assert support_variance(p, q, 0.0) == pytest.approx(q * (1 - q) / (p - q) ** 2, rel=1e-15)


def test_estimate_frequencies_matches_the_oracle_and_checks_arguments():
    grr = ldp.GRR(1.0, k=4)
    agg = grr.aggregate(grr.privatize(np.repeat(np.arange(4), 500), rng=0))
    p, q = grr.support_probabilities
    est = estimate_frequencies(agg.counts, agg.n_reports, p, q, postprocess="norm-sub", epsilon=1.0, spec=grr.spec)
    ref = grr.estimate_frequencies(agg, postprocess="norm-sub")
    np.testing.assert_array_equal(est.frequencies, ref.frequencies)
    np.testing.assert_array_equal(est.standard_errors, ref.standard_errors)
    np.testing.assert_array_equal(est.frequencies, postprocess_frequencies(
        unbiased_frequencies(agg.counts, agg.n_reports, p, q), "norm-sub"))
    with pytest.raises(ValueError, match="no reports"):
        estimate_frequencies(np.zeros(4), 0, p, q, epsilon=1.0, spec=grr.spec)
    with pytest.raises(ValueError, match="postprocess must be one of"):
        estimate_frequencies(agg.counts, agg.n_reports, p, q, postprocess="round", epsilon=1.0, spec=grr.spec)


def test_hierarchy_levels_estimate_with_the_frequency_estimator():
    """A level of a hierarchical histogram is a frequency oracle: the same unbiased estimator."""
    from ldpnum.frequency.hadamard import hadamard_support_counts
    from ldpnum.ranges.hierarchical import GRRLevel, HadamardLevel, OLHLevel

    grr = GRRLevel(1.0, 4)
    block = np.array([10.0, 20.0, 30.0, 40.0])
    p, q = grr.oracle.support_probabilities
    np.testing.assert_array_equal(grr.estimate(block), unbiased_frequencies(block, 100, p, q))
    olh = OLHLevel(1.0, 4)
    p, q = olh.oracle.support_probabilities
    np.testing.assert_array_equal(olh.estimate(np.append(block, 150.0)), unbiased_frequencies(block, 150, p, q))
    hr = HadamardLevel(1.0, 4)
    codes = np.arange(hr.K, dtype=np.float64)
    p, q = hr.oracle.support_probabilities
    support = hadamard_support_counts(codes, 4).astype(np.float64)
    np.testing.assert_array_equal(hr.estimate(codes), unbiased_frequencies(support, codes.sum(), p, q))
