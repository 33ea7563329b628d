"""The threaded-count helper shared by the server kernels: same counts and same errors for any slicing."""

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import aggregate as _aggregate
from ldpnum._counting import count_in_slices
from ldpnum._kernels.server_counts import count_codes as code_kernel
from ldpnum._kernels.server_hashing import local_hash_support
from ldpnum._kernels.server_unary import count_bits


@pytest.mark.parametrize("n_slices", [1, 2, 3, 7, 64])
def test_counts_and_first_bad_index_do_not_depend_on_slicing(n_slices):
    codes = np.random.default_rng(0).integers(0, 50, 10_001).astype(np.uint16)
    expected = np.bincount(codes, minlength=50)
    counts, n_bad, first = count_in_slices(code_kernel, codes, 50, n_slices=n_slices)
    np.testing.assert_array_equal(counts, expected)
    assert (n_bad, first) == (0, -1)
    bad = codes.copy()
    bad[[6000, 6001, 9999]] = 60  # outside 0..49, in the later slices
    counts, n_bad, first = count_in_slices(code_kernel, bad, 50, n_slices=n_slices, max_workers=2)
    assert (n_bad, first) == (3, 6000)


@pytest.mark.parametrize("n_cells", [50, 2_500, 40_000])  # the private copies, the boundary, counted in place
def test_count_codes_over_small_and_large_alphabets_against_bincount(n_cells):
    codes = np.random.default_rng(n_cells).integers(0, n_cells, 10_000).astype(np.uint32)
    out = np.zeros(n_cells, dtype=np.int64)
    assert code_kernel(codes, out) == (0, -1)
    np.testing.assert_array_equal(out, np.bincount(codes, minlength=n_cells))
    bad = codes.copy()
    bad[[17, 18, 9_000]] = n_cells + 3
    assert code_kernel(bad, np.zeros(n_cells, dtype=np.int64)) == (3, 17)


def test_kernels_without_checks_and_with_extra_arguments():
    rows = np.random.default_rng(1).integers(0, 256, (1000, 3), dtype=np.uint8)
    rows[:, 2] &= 0x0F
    one, _, _ = count_in_slices(count_bits, rows, 24)
    four, n_bad, first = count_in_slices(count_bits, rows, 24, n_slices=4)
    np.testing.assert_array_equal(one, four)
    np.testing.assert_array_equal(one, np.unpackbits(rows, axis=1, bitorder="little").sum(axis=0))
    assert (n_bad, first) == (0, -1)
    olh = ldp.OLH(1.0, k=30)
    codes = olh.privatize(np.arange(3000) % 30, rng=0).codes
    a = count_in_slices(local_hash_support, codes, 30, olh.plan.g)[0]
    b = count_in_slices(local_hash_support, codes, 30, olh.plan.g, n_slices=5)[0]
    np.testing.assert_array_equal(a, b)
    assert a.sum() > 3000  # each report supports about k/g categories


def test_count_codes_names_the_global_index_when_threaded(monkeypatch):
    """count_codes on threads reports the count and the first index in the whole input."""
    monkeypatch.setattr(_aggregate, "_PARALLEL_MIN", 16)
    monkeypatch.setattr(_aggregate, "n_threads", lambda: 3)
    codes = np.zeros(3000, dtype=np.uint8)
    codes[[2500, 2900]] = 9
    with pytest.raises(ValueError, match=r"2 code\(s\) outside the output alphabet 0..3, first at index 2500 \(9\)"):
        _aggregate.count_codes(codes, 4)
    np.testing.assert_array_equal(_aggregate.count_codes(codes[:2000], 4), [2000, 0, 0, 0])
