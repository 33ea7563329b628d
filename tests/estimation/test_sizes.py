"""Frequencies from sampling rates under padding-and-sampling (``ldpnum/estimation/sizes.py``): the two ends of
the linear programme, worked out by hand, and the interval built on them."""

import numpy as np
import pytest

from ldpnum.estimation.sizes import bounded_interval, frequency_bounds


def test_frequency_bounds_fill_the_smallest_or_the_largest_sets_first():
    # ℓ = 2; half the people hold 1 item, 30% hold 2, 20% hold 3: an item held in a set of size m is sampled
    # with probability 1/max(m, 2), so sizes 1, 2, 3 give at most 0.25, 0.15 and 0.2/3 of sampling rate
    theta, ell = [0.0, 0.5, 0.3, 0.2], 2
    low, high = frequency_bounds([0.2], theta, ell)
    assert low[0] == pytest.approx(0.4)  # holders in sets of size 1 first: f = ℓπ
    # holders in the largest sets first: all of size 3 (π 0.2/3, f 0.2), then 2·(0.2 - 0.2/3) of size 2
    assert high[0] == pytest.approx(0.2 + 2 * (0.2 - 0.2 / 3))
    # a rate above what the sizes can produce gives every non-empty set for both ends
    low, high = frequency_bounds([0.25 + 0.15 + 0.2 / 3, 0.9], theta, ell)
    np.testing.assert_allclose(low, 1.0)
    np.testing.assert_allclose(high, 1.0)
    low, high = frequency_bounds([0.0, -0.1], theta, ell)
    np.testing.assert_array_equal(low, 0.0)
    np.testing.assert_array_equal(high, 0.0)


def test_frequency_bounds_meet_when_no_set_is_larger_than_ell():
    pi = np.array([0.05, 0.2, 0.3])
    low, high = frequency_bounds(pi, [0.1, 0.5, 0.4], 2)
    np.testing.assert_allclose(low, 2 * pi)
    np.testing.assert_allclose(high, 2 * pi)


def test_bounded_interval_widens_the_rate_by_z_standard_errors():
    theta, ell = [0.0, 0.5, 0.3, 0.2], 2
    low, high = bounded_interval([0.2], [0.01], theta, ell, 0.95)
    z = 1.959963984540054
    assert low[0] == pytest.approx(frequency_bounds([0.2 - z * 0.01], theta, ell)[0][0])
    assert high[0] == pytest.approx(frequency_bounds([0.2 + z * 0.01], theta, ell)[1][0])
    low, high = bounded_interval([0.2], [0.0], theta, ell, 0.95)
    assert (low[0], high[0]) == pytest.approx((0.4, 0.2 + 2 * (0.2 - 0.2 / 3)))
