"""Frequency estimation from support counts (``ldpnum/estimation/frequency.py``): the unbiased estimate and its
per-report variance against their closed forms."""

import math

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.estimation.frequency import estimate_frequencies, support_variance, unbiased_frequencies


def test_unbiased_frequencies_invert_the_expected_support():
    p, q, n = 0.7, 0.1, 1000
    f = np.array([0.5, 0.3, 0.2, 0.0])
    expected_support = n * (q + f * (p - q))  # each report supports category v with probability q + f_v (p - q)
    np.testing.assert_allclose(unbiased_frequencies(expected_support, n, p, q), f, atol=1e-12)


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
