"""The frequency-oracle base class (``ldpnum/frequency/_base.py``): the per-report variance from the support
probabilities, Wang et al.'s table entry for GRR at frequency 0, and the worst case."""

import math

import numpy as np
import pytest

import ldpnum as ldp


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_grr_variance_at_zero_is_wang_et_als_table_entry(epsilon):
    e, k = math.exp(epsilon), 16
    # the integer plans round p* and q* to 2**-53 steps: the closed forms hold to that precision
    assert ldp.GRR(epsilon, k).variance(0.0) == pytest.approx((k - 2 + e) / (e - 1) ** 2, rel=1e-9)


def test_variance_follows_the_support_probabilities_and_refuses_frequencies_outside_0_1():
    m = ldp.GRR(1.0, 5)
    p, q = m.support_probabilities
    f = np.array([0.0, 0.3, 1.0])
    np.testing.assert_allclose(m.variance(f), (q * (1 - q) + f * (p - q) * (1 - p - q)) / (p - q) ** 2, rtol=1e-12)
    assert isinstance(m.variance(0.3), float)
    assert m.worst_case_variance == max(m.variance(0.0), m.variance(1.0))
    for bad in (-0.1, 1.5, [0.2, 2.0]):
        with pytest.raises(ValueError, match=r"frequency must lie in \[0, 1\]"):
            m.variance(bad)
