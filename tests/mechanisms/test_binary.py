"""The two-output mean oracles (``ldpnum/mechanisms/binary.py``): Stochastic Rounding, Duchi et al.'s mechanism
and randomized response against their closed forms."""

import math

import numpy as np
import pytest

import ldpnum as ldp


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_duchi_outputs_and_variance_are_the_closed_form(epsilon):
    m = ldp.Duchi(epsilon, (-1, 1))
    e = math.exp(epsilon)
    B = (e + 1) / (e - 1)
    np.testing.assert_allclose(m.code_estimates, [-B, B], rtol=1e-12)  # the two outputs ±(e^ε + 1)/(e^ε - 1)
    for x in (-1.0, -0.2, 0.0, 0.7, 1.0):
        p = m.output_probabilities(x)
        assert p[1] == pytest.approx(0.5 + x * (e - 1) / (2 * (e + 1)), abs=1e-12)
        assert p @ m.code_estimates == pytest.approx(x, abs=1e-12)  # unbiased
        assert m.variance(x) == pytest.approx(B ** 2 - x ** 2, rel=1e-9)
    assert m.worst_case_variance == pytest.approx(B ** 2, rel=1e-12)


def test_stochastic_rounding_probability_and_worst_case_variance():
    m = ldp.StochasticRounding(2.0, (0, 5))
    e = math.exp(2.0)
    for x in (0.0, 1.0, 2.5, 5.0):
        p1 = 1 / (e + 1) + x / 5 * (e - 1) / (e + 1)  # the class's formula
        assert m.output_probabilities(x)[1] == pytest.approx(p1, abs=1e-12)
        assert m.output_probabilities(x) @ m.code_estimates == pytest.approx(x, abs=1e-12)
    # (high - low)² / (4 (p - q)²): the variance at the value whose code is a fair coin (the middle)
    assert m.worst_case_variance == pytest.approx(25 / 4 * ((e + 1) / (e - 1)) ** 2, rel=1e-12)
    assert m.variance(2.5) == pytest.approx(m.worst_case_variance, rel=1e-9)


def test_randomized_response_keeps_the_bit_with_probability_e_eps_over_1_plus_e_eps():
    m = ldp.RandomizedResponse(1.0)
    keep = math.e / (1 + math.e)
    np.testing.assert_allclose(m.output_probabilities(1), [1 - keep, keep], atol=1e-12)
    np.testing.assert_allclose(m.output_probabilities(0), [keep, 1 - keep], atol=1e-12)
    assert m.worst_case_variance == pytest.approx(keep * (1 - keep) / (2 * keep - 1) ** 2, rel=1e-12)
