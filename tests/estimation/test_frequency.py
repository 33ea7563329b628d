"""Frequency estimation from support counts (``ldpnum/estimation/frequency.py``): the unbiased estimate and its
per-report variance against their closed forms."""

import math

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.estimation import postprocess_frequencies
from ldpnum.estimation.frequency import estimate_frequencies, support_variance, unbiased_frequencies


@pytest.mark.parametrize("p,q", [(0.7, 0.1), (0.5, 1 / 3), (0.9, 0.05)])
def test_support_variance_is_the_bernoulli_variance_of_the_reports(p, q):
    # a share f of the people hold v: their reports support it with probability p, the others' with q, each
    # independently, so one report's share of Var(I_v) is f p(1 - p) + (1 - f) q(1 - q), over (p - q)²
    f = np.linspace(0, 1, 11)
    bernoulli = (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (p - q) ** 2
    np.testing.assert_allclose(support_variance(p, q, f), bernoulli, rtol=1e-12)


def test_grr_variance_at_zero_is_wang_et_als_table_entry():
    eps, k = 1.0, 8
    e = math.exp(eps)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    assert support_variance(p, q, 0.0) == pytest.approx((k - 2 + e) / (e - 1) ** 2, rel=1e-12)


def test_estimate_frequencies_standard_errors_are_the_plug_in_variance():
    spec = ldp.GRR(1.0, 4).spec
    p, q, n = 0.6, 0.2, 4000
    support = np.array([1600.0, 1200.0, 800.0, 400.0])
    est = estimate_frequencies(support, n, p, q, epsilon=1.0, spec=spec)
    f = (support / n - q) / (p - q)
    np.testing.assert_allclose(est.frequencies, f, atol=1e-12)  # postprocess="none": the unbiased ones
    np.testing.assert_allclose(est.counts, f * n, atol=1e-9)
    clipped = np.clip(f, 0, 1)
    np.testing.assert_allclose(est.standard_errors, np.sqrt(support_variance(p, q, clipped) / n), rtol=1e-9)


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
