"""Kernels against the slow references in ``tests/naive.py``: same words, same codes, bit for bit."""

import numpy as np
import pytest

import ldpnum as ldp

import naive
from conftest import adversarial_values


def words_for(seed, n_words):
    return np.random.default_rng(seed).bit_generator.random_raw(n_words)


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 20.0])
def test_two_output(epsilon):
    bounds = (-3.0, 11.0)
    m = ldp.StochasticRounding(epsilon, bounds)
    x = adversarial_values(bounds, n_random=3000)
    r = m.privatize(x, rng=11)
    ref = naive.binary(x, *bounds, m.plan.t_lo, m.plan.t_hi, words_for(11, x.size))
    np.testing.assert_array_equal(r.codes, ref)


@pytest.mark.parametrize("epsilon,n_cells", [(0.5, None), (2.0, 64), (12.0, None)])
def test_window(epsilon, n_cells):
    bounds = (0.0, 1440.0)
    m = ldp.Piecewise(epsilon, bounds, n_cells=n_cells)
    x = adversarial_values(bounds, n_random=3000)
    r = m.privatize(x, rng=12)
    p = m.plan
    ref = naive.window(x, *bounds, p.n_cells, p.m, p.t_in, words_for(12, 3 * x.size))
    np.testing.assert_array_equal(r.codes, ref)


@pytest.mark.parametrize("epsilon", [0.3, 2.0])
def test_hybrid(epsilon):
    bounds = (5.0, 6.0)
    m = ldp.Hybrid(epsilon, bounds)
    x = adversarial_values(bounds, n_random=3000)
    r = m.privatize(x, rng=13)
    w, b = m.piecewise_plan, m.duchi_plan
    ref = naive.hybrid(x, *bounds, w.n_cells, w.m, w.t_in, b.t_lo, b.t_hi, m._t_mix, words_for(13, 5 * x.size))
    np.testing.assert_array_equal(r.codes, ref)


def test_randomized_response():
    rr = ldp.RandomizedResponse(0.7)
    x = np.random.default_rng(0).integers(0, 2, 5000)
    r = rr.privatize(x, rng=14)
    ref = naive.binary(x, 0.0, 1.0, rr.plan.t_lo, rr.plan.t_hi, words_for(14, x.size))
    np.testing.assert_array_equal(r.codes, ref)


def test_aggregation_kernel_matches_bincount():
    rng = np.random.default_rng(1)
    for n_cells, dtype, n in [(2, np.uint8, 2_100_003), (7, np.uint8, 1_000_003), (1024, np.uint16, 300_001), (70_000, np.uint32, 200_000),
                              (300, np.uint16, 10)]:
        codes = rng.integers(0, n_cells, n).astype(dtype)
        spec = ldp.Spec("test", 1.0, n_cells)
        agg = ldp.Aggregate(ldp.aggregate.count_codes(codes, n_cells), spec)
        np.testing.assert_array_equal(agg.counts, np.bincount(codes, minlength=n_cells))


@pytest.mark.parametrize("n", [10, 1_000_000, 2_100_001])
def test_aggregation_rejects_codes_outside_alphabet(n):
    codes = np.zeros(n, dtype=np.uint16)
    codes[n // 2] = 5
    codes[-1] = 9
    with pytest.raises(ValueError, match=rf"2 code\(s\) outside the output alphabet 0..4, first at index {n // 2}"):
        ldp.aggregate.count_codes(codes, 5)


def test_aggregation_accepts_read_only_codes():
    codes = np.arange(10, dtype=np.uint8) % 3
    codes.flags.writeable = False
    np.testing.assert_array_equal(ldp.aggregate.count_codes(codes, 3), [4, 3, 3])
