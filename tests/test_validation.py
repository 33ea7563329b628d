"""The bad-input matrix (TESTING.md (d)): clear errors, and nothing is randomized when anything is bad."""

import warnings

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random

from conftest import mean_oracles

ORACLES = [ldp.StochasticRounding, ldp.Duchi, ldp.Piecewise, ldp.Hybrid, ldp.Laplace, ldp.SquareWave,
           ldp.GeneralWave]


@pytest.fixture
def no_draws(monkeypatch):
    """Fail the test if any random word is drawn."""
    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)


@pytest.mark.parametrize("cls", ORACLES)
@pytest.mark.parametrize("epsilon", [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 20.0000001, 1e9])
def test_epsilon_values(cls, epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number in"):
        cls(epsilon, (0, 1))


@pytest.mark.parametrize("cls", ORACLES)
@pytest.mark.parametrize("epsilon", [True, "1", None, 1 + 0j, np.array([1.0]), [1.0]])
def test_epsilon_kinds(cls, epsilon):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        cls(epsilon, (0, 1))


@pytest.mark.parametrize("epsilon", [np.float32(1.0), np.float64(2.0), 3, np.int64(1), 20])
def test_epsilon_accepted(epsilon):
    assert ldp.Duchi(epsilon, (0, 1)).epsilon == float(epsilon)


@pytest.mark.parametrize("cls", ORACLES)
@pytest.mark.parametrize("bounds,exc,msg", [
    (None, ValueError, "bounds is required"),
    ((1, 1), ValueError, "low < high"),
    ((2, 1), ValueError, "low < high"),
    ((0, np.inf), ValueError, "finite"),
    ((np.nan, 1), ValueError, "finite"),
    ((0, 1, 2), ValueError, "pair"),
    ("ab", TypeError, "pair"),
    (5, TypeError, "pair"),
    ((0, "1"), TypeError, "high must be a real number"),
    ((True, 2), TypeError, "low must be a real number"),
])
def test_bounds(cls, bounds, exc, msg):
    with pytest.raises(exc, match=msg):
        cls(1.0, bounds)


@pytest.mark.parametrize("m", mean_oracles(), ids=lambda m: m.name)
@pytest.mark.parametrize("bad,idx", [([0.1, np.nan, 0.2, np.nan], 1), ([np.inf, 0.5], 0), ([0.5, -np.inf], 1)])
def test_non_finite_values_raise(m, bad, idx, no_draws):
    with pytest.raises(ValueError, match=rf"has {sum(not np.isfinite(v) for v in bad)} missing .* first at index {idx}"):
        m.privatize(np.array(bad))


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


@pytest.mark.parametrize("m", mean_oracles(bounds=(0.0, 10.0)), ids=lambda m: m.name)
def test_out_of_range_clipped_with_warning(m):
    x = np.array([5.0, 11.0, -3.0, 10.0, 12.5])
    with pytest.warns(ldp.ClippingWarning, match=r"3 finite value\(s\) outside bounds .* first at index 1") as rec:
        r = m.privatize(x, rng=3)
    assert rec[0].message.count == 3 and rec[0].message.first_index == 1
    assert r == m.privatize(np.clip(x, 0, 10), rng=3)
    with pytest.raises(ValueError, match="outside bounds"):
        m.privatize(x, out_of_range="raise", rng=3)
    with pytest.raises(ValueError, match="out_of_range must be one of"):
        m.privatize(x, out_of_range="wrap", rng=3)


def test_large_integers_clipped_in_integer_domain():
    m = ldp.StochasticRounding(1.0, (0, 2**60))
    x = np.array([2**62, 2**53 + 1, 0], dtype=np.int64)
    with pytest.warns(ldp.ClippingWarning, match="1 finite value"):
        r = m.privatize(x, rng=0)
    assert len(r) == 3


@pytest.mark.parametrize("m", mean_oracles(), ids=lambda m: m.name)
@pytest.mark.parametrize("x,kind", [
    (np.array([True, False]), "bool"),
    (np.array(["a", "b"]), "str"),
    (np.array([1 + 2j]), "complex"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "datetime"),
    (np.array([1.0, None], dtype=object), "object"),
    (pd.Series(["a", "b"]), ""),
])
def test_wrong_kinds(m, x, kind, no_draws):
    with pytest.raises(TypeError, match="must hold real numbers"):
        m.privatize(x)


@pytest.mark.parametrize("m", mean_oracles(), ids=lambda m: m.name)
def test_two_dimensional_input(m, no_draws):
    with pytest.raises(ValueError, match="one-dimensional"):
        m.privatize(np.zeros((3, 2)))


@pytest.mark.parametrize("m", mean_oracles(), ids=lambda m: m.name)
def test_accepted_dtypes_agree(m):
    """float16/32, ints, big-endian and strided views are converted before the kernel (one signature)."""
    base = np.array([0.0, 0.25, 0.5, 1.0, 0.75, 0.0])
    ref = m.privatize(base, rng=9)
    for x in (base.astype(np.float32), base.astype(np.float16), base.astype(">f8"),
              np.repeat(base, 2)[::2], pd.Series(base), list(base), pd.Series(base, dtype="Float64")):
        assert m.privatize(x, rng=9) == ref
    ints = np.array([0, 1, 1, 0], dtype=np.int16)
    assert m.privatize(ints, rng=9) == m.privatize(ints.astype(float), rng=9)


def test_empty_input():
    for m in mean_oracles():
        r = m.privatize(np.array([]), rng=0)
        assert len(r) == 0 and r.codes.dtype.kind == "u"
        with pytest.raises(ValueError, match="no reports"):
            m.estimate_mean(r)


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


def test_kernels_have_one_signature_after_the_matrix():
    """dtype normalization happens before dispatch: every kernel sees one input type (read-only C float64).

    (A kernel may have one signature per output code dtype: uint8 for alphabets up to 256 cells, uint16 above.)"""
    from ldpnum._kernels import client
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in mean_oracles():
            for x in ([1, 2], np.array([0.5], np.float32), np.array([0.5], ">f8"), [0.1]):
                m.privatize(x, rng=0)
    from ldpnum._kernels import wave
    for k in (client.binary_kernel, client.window_kernel, client.hybrid_kernel, client.laplace_kernel,
              wave.shaped_window_kernel,
              client.scan_values):
        assert len({sig[0] for sig in k.signatures}) == 1, k.signatures
