"""The bad-input matrix (TESTING.md (d)), cases beyond the common checks that test_common.py runs over every
registered mechanism (ε, bounds, non-finite values, wrong kinds, 2-D, empty input, accepted dtypes, clipping)."""


import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random


@pytest.fixture
def no_draws(monkeypatch):
    """Fail the test if any random word is drawn."""
    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)


def test_pandas_na_follows_nan_policy(no_draws):
    m = ldp.Duchi(1.0, (0, 10))
    s = pd.Series([1, None, 3], dtype="Int64")
    with pytest.raises(ValueError, match="first at index 1"):
        m.privatize(s)
    with pytest.raises(ValueError, match="first at index 2"):
        m.privatize(pd.Series([1.0, 2.0, pd.NA], dtype="Float64"))


def test_impute_needs_explicit_public_fill_value():
    m = ldp.Duchi(1.0, (0, 10))
    with pytest.raises(ValueError, match="explicit public fill_value"):
        m.privatize([1.0, np.nan], nan_policy="impute", rng=0)
    with pytest.raises(ValueError, match="inside bounds"):
        m.privatize([1.0, np.nan], nan_policy="impute", fill_value=11.0, rng=0)
    with pytest.raises(ValueError, match="only used with"):
        m.privatize([1.0], fill_value=3.0, rng=0)
    with pytest.raises(ValueError, match="nan_policy must be one of"):
        m.privatize([1.0], nan_policy="omit", rng=0)
    r = m.privatize(pd.Series([1.0, np.nan, pd.NA], dtype="Float64"), nan_policy="impute", fill_value=5.0, rng=0)
    ref = m.privatize([1.0, 5.0, 5.0], rng=0)
    assert r == ref


def test_large_integers_clipped_in_integer_domain():
    m = ldp.StochasticRounding(1.0, (0, 2**60))
    x = np.array([2**62, 2**53 + 1, 0], dtype=np.int64)
    with pytest.warns(ldp.ClippingWarning, match="1 finite value"):
        r = m.privatize(x, rng=0)
    assert len(r) == 3


def test_scalar_is_one_person():
    m = ldp.Duchi(1.0, (0, 1))
    assert len(m.privatize(0.3, rng=0)) == 1


@pytest.mark.parametrize("rng,exc", [(True, TypeError), (-1, ValueError), (1.5, TypeError), ("0", TypeError),
                                     (np.random.RandomState(0), TypeError)])
def test_rng_kinds(rng, exc, no_draws):
    with pytest.raises(exc):
        ldp.Duchi(1.0, (0, 1)).privatize([0.5], rng=rng)


def test_randomized_response_inputs(no_draws):
    rr = ldp.RandomizedResponse(1.0)
    with pytest.raises(ValueError, match=r"1 value\(s\) are not, first at index 2 \(0.5\)"):
        rr.privatize([0, 1, 0.5])
    with pytest.raises(ValueError, match="first at index 1"):
        rr.privatize([0, np.nan])
    with pytest.raises(TypeError):
        rr.privatize(np.array(["1"]))
