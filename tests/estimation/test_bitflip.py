"""dBitFlip's histogram estimator (ldpnum/estimation/bitflip.py) on counts drawn from its model.

The counts are simulated here with NumPy (each person samples d of b buckets without replacement, one bit per
sampled bucket with P[1] = p on their own bucket and q elsewhere), so the estimator is checked apart from the
mechanism's kernels (tests/longitudinal/test_telemetry.py checks it through DBitFlip's reports).
"""

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum.estimation.bitflip import bit_flip_histogram, bucket_distribution, estimate_bit_flip_histogram

#: z beyond which an unbiasedness test fails: two-sided 1e-6.
Z = stats.norm.isf(0.5e-6)


def _model_counts(h, n, d, p, q, rng):
    """``(sampled, ones)`` per bucket from ``n`` people with bucket frequencies ``h`` under the model."""
    b = len(h)
    value = rng.choice(b, size=n, p=h)
    chosen = np.argsort(rng.random((n, b)), axis=1)[:, :d]  # d distinct buckets per person, uniformly
    bits = rng.random((n, d)) < np.where(chosen == value[:, None], p, q)
    sampled = np.bincount(chosen.ravel(), minlength=b)
    ones = np.bincount(chosen.ravel(), weights=bits.ravel(), minlength=b)
    return sampled, ones


def _closed_form_se(h, n, b, d, p, q):
    return np.sqrt(((b / d) * (p * q / (p - q) ** 2 + h) - h) / n)


@pytest.mark.parametrize("d", [1, 3])
def test_histogram_is_unbiased_with_the_closed_form_standard_errors(d):
    h = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])
    n, p, q = 20_000, 0.7, 0.3
    freq, se = bit_flip_histogram(*_model_counts(h, n, d, p, q, np.random.default_rng(d)), n, d, p, q)
    want = _closed_form_se(h, n, len(h), d, p, q)
    assert np.all(np.abs(freq - h) < Z * want), (freq - h) / want
    np.testing.assert_allclose(se, want, rtol=0.05)  # plug-in at the estimate: within a few % at this n


def test_the_check_rejects_an_estimator_that_ignores_the_sampling():
    # Negative control: dividing by n instead of n·d/b (as if every report held every bucket) is off by b/d.
    h = np.array([0.5, 0.3, 0.2, 0.0])
    n, d, p, q = 20_000, 2, 0.7, 0.3
    sampled, ones = _model_counts(h, n, d, p, q, np.random.default_rng(7))
    wrong = (ones - q * sampled) / (p - q) / n
    assert np.any(np.abs(wrong - h) > Z * _closed_form_se(h, n, len(h), d, p, q))


def test_estimate_of_an_aggregate_and_its_distribution():
    m = ldp.DBitFlip(1.0, (0, 10), 4, 2)
    counts = np.array([50, 50, 50, 50, 30, 20, 25, 25])  # 100 reports, 2 buckets each
    p, q = m.support_probabilities
    est = estimate_bit_flip_histogram(counts, 100, 2, p, q, epsilon=m.epsilon, spec=m.spec)
    freq, se = bit_flip_histogram(counts[:4], counts[4:], 100, 2, p, q)
    np.testing.assert_array_equal(est.frequencies, freq)
    np.testing.assert_array_equal(est.standard_errors, se)
    np.testing.assert_allclose(est.counts, 100 * freq)
    assert est.n_reports == 100 and est.spec == m.spec
    for method, chosen in ((None, "norm-sub"), ("ems-cv", "norm-sub"), ("simplex", "simplex")):
        dist = bucket_distribution(est, m.bucket_edges, method, epsilon=m.epsilon)
        assert dist.method == chosen and dist.probabilities.sum() == pytest.approx(1.0)
        assert np.all(dist.probabilities >= 0)
        np.testing.assert_array_equal(dist.bin_edges, m.bucket_edges)
