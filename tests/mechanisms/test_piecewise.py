"""Piecewise and Hybrid (``ldpnum/mechanisms/piecewise.py``) against their closed forms: the output distribution
of a value, exact unbiasedness of the code estimates, the textbook variance and the ε bound."""

import math

import numpy as np
import pytest

import ldpnum as ldp


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_piecewise_is_unbiased_with_the_textbook_variance_and_within_epsilon(epsilon):
    m = ldp.Piecewise(epsilon, (-1, 1))
    e2 = math.exp(epsilon / 2)
    xs = np.linspace(-1, 1, 41)
    P = np.array([m.output_probabilities(x) for x in xs])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(P @ m.code_estimates, xs, atol=1e-12)  # unbiased at every value
    # Wang et al.'s variance on [-1, 1]: t²/(e^{ε/2} - 1) + (e^{ε/2} + 3)/(3(e^{ε/2} - 1)²), up to the 1024-cell grid
    textbook = xs ** 2 / (e2 - 1) + (e2 + 3) / (3 * (e2 - 1) ** 2)
    np.testing.assert_allclose(m.variance(xs), textbook, rtol=1e-3)
    np.testing.assert_allclose(P @ m.code_estimates ** 2 - xs ** 2, m.variance(xs), rtol=1e-9)
    assert (P.max(axis=0) / P.min(axis=0)).max() <= math.exp(epsilon) * (1 + 1e-12)


def test_hybrid_is_unbiased_and_its_variance_is_at_most_the_worst_case():
    m = ldp.Hybrid(1.0, (0, 10))
    xs = np.linspace(0, 10, 21)
    P = np.array([m.output_probabilities(x) for x in xs])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(P @ m.code_estimates, xs, atol=1e-9)
    assert np.all(P @ m.code_estimates ** 2 - xs ** 2 <= m.worst_case_variance * (1 + 1e-12))
