"""Tests of ldpnum/_random.py's argument checks: sub-stream keys and row-to-column assignment."""

import numpy as np
import pytest

from ldpnum._random import assign_columns, child_rng


@pytest.mark.parametrize("key,exc,match", [
    (1.5, TypeError, "a sub-stream key must be an integer; got float 1.5"),
    (True, TypeError, "a sub-stream key must be an integer; got bool True"),
    (-1, ValueError, "a sub-stream key must be >= 0; got -1"),
])
def test_child_rng_refuses_bad_keys(key, exc, match):
    # a key of the wrong kind was a ValueError ("sub-stream keys must be non-negative ints"); R5: a TypeError
    with pytest.raises(exc, match=match):
        child_rng(7, 0, key)
    assert child_rng(7, np.int64(2)).spawn_key == (2,)


@pytest.mark.parametrize("n,m,exc,match", [
    (2.0, 3, TypeError, "n must be an integer; got float 2.0"),
    (-1, 3, ValueError, "n must be >= 0; got -1"),
    (10, True, TypeError, "m must be an integer; got bool True"),
    (10, 0, ValueError, r"m must be in \[1, \d+\]; got 0"),
])
def test_assign_columns_refuses_bad_sizes(n, m, exc, match):
    with pytest.raises(exc, match=match):
        assign_columns(0, n, m)
