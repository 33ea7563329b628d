"""The bad-input matrix (TESTING.md (d)), cases beyond the common checks that test_common.py runs over every
registered mechanism (ε, bounds, non-finite values, wrong kinds, 2-D, empty input, accepted dtypes, clipping)."""


import re

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum._validation import check_scalar


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


# -- the one validation hook: Mechanism.prepare_values ------------------------------------------------------

HOOK_CASES = [  # mechanism, values, what prepare_values returns
    (ldp.SquareWave(1.0, (0, 10)), np.array([1, 2, 3], dtype=np.int8), np.array([1.0, 2.0, 3.0])),
    (ldp.SquareWave(1.0, (0, 10)), pd.array([1.5, None], dtype="Float64"), None),
    (ldp.GRR(1.0, k=4), pd.array([3, 0], dtype="Int64"), np.array([3, 0])),
    (ldp.RandomizedResponse(1.0), np.array([True, False]), np.array([1.0, 0.0])),
]


@pytest.mark.parametrize("m, x, expected", HOOK_CASES, ids=lambda v: getattr(v, "name", None))
def test_prepare_values_is_what_privatize_randomizes(m, x, expected, no_draws):
    """The hook returns the kernel's input (read-only), and privatize randomizes exactly that array."""
    if expected is None:
        with pytest.raises(ldp.exceptions.InvalidValuesError, match="column 'v' has 1 missing") as exc:
            m.prepare_values(x, name="column 'v'")
        assert (exc.value.count, exc.value.first_index, exc.value.reason) == (1, 1, "missing")
        return
    values = m.prepare_values(x)
    np.testing.assert_array_equal(values, expected)
    assert not values.flags.writeable and values.flags.c_contiguous
    monkey = pytest.MonkeyPatch()
    seen = []
    monkey.setattr(type(m), "_randomize", lambda self, v, rng: seen.append(v))
    try:
        m.privatize(x)
    finally:
        monkey.undo()
    np.testing.assert_array_equal(seen[0], values)


@pytest.mark.parametrize("m, x, error, fragments", [
    (ldp.SquareWave(1.0, (0, 10)), np.array(["1"]), TypeError, ["column 'c' has dtype <U1: it must hold real",
                                                                "pd.to_numeric"]),
    (ldp.SquareWave(1.0, (0, 10)), pd.Series([1, 2], dtype="category"), TypeError,
     ["column 'c' has dtype category", "frequency oracle", "ldp.GRR(epsilon"]),
    (ldp.SquareWave(1.0, (0, 10)), np.array([True]), TypeError, ["has dtype bool", "RandomizedResponse"]),
    (ldp.SquareWave(1.0, (0, 10)), [1.0, 11.0, 12.0], ValueError, ["column 'c' has 2 finite value(s) outside"]),
    (ldp.GRR(1.0, k=4), np.array([1.0]), TypeError, ["column 'c' has dtype float64", "integer category codes 0..3",
                                                     ".astype(int)"]),
    (ldp.GRR(1.0, k=4), pd.Series([1, 2], dtype="category"), TypeError, ["has dtype category", "with_categories"]),
    (ldp.GRR(1.0, k=4), [0, 7, 9], ValueError, ["column 'c' has 2 value(s) outside the categories [0, 4), first "
                                                "at index 1"]),
    (ldp.RandomizedResponse(1.0), np.array(["a"]), TypeError, ["column 'c' has dtype <U1", "0/1 values"]),
    (ldp.RandomizedResponse(1.0), [0, 2, 3], ValueError, ["column 'c' must be 0/1", "2 value(s) are not"]),
])
def test_prepare_values_names_the_values_and_counts_the_bad_ones(m, x, error, fragments, no_draws):
    options = {} if isinstance(m, ldp.frequency.FrequencyOracle) else {"out_of_range": "raise"}  # categories never clip
    with pytest.raises(error) as exc:
        m.prepare_values(x, name="column 'c'", **options)
    for fragment in fragments:
        assert fragment in str(exc.value)
    if error is ValueError:
        assert isinstance(exc.value, ldp.exceptions.InvalidValuesError) and exc.value.count == 2
        assert exc.value.first_index == 1 and exc.value.reason in ("out_of_range", "invalid")


@pytest.mark.parametrize("m, fill", [(ldp.SquareWave(1.0, (0, 10)), 11.0), (ldp.GRR(1.0, k=4), 4),
                                     (ldp.RandomizedResponse(1.0), 2)])
def test_prepare_values_checks_the_fill_value_without_data(m, fill, no_draws):
    """A bad fill value is refused even when nothing is missing (R5: every argument before any draw), and
    the message says which column it was for."""
    with pytest.raises(ValueError, match="^column 'c': fill_value"):
        m.prepare_values(np.empty(0, dtype=np.int64), name="column 'c'", nan_policy="impute", fill_value=fill)


def test_nullable_arrays_with_na_passed_directly(no_draws):
    """pd.array(...) with NA (no ``hasnans``): missing values follow nan_policy, not a foreign error."""
    with pytest.raises(ValueError, match="x has 1 missing value"):
        ldp.GRR(1.0, k=4).privatize(pd.array([1, None], dtype="Int64"))
    with pytest.raises(ValueError, match="x has 1 missing"):
        ldp.RandomizedResponse(1.0).privatize(pd.array([True, None], dtype="boolean"))
    values = ldp.RandomizedResponse(1.0).prepare_values(pd.array([True, None], dtype="boolean"),
                                                        nan_policy="impute", fill_value=0)
    np.testing.assert_array_equal(values, [1.0, 0.0])


# -- bounds of an unusable scale are refused at construction, for every mechanism that takes bounds ---------------
def _bounded_mechanisms():
    from ldpnum.base import _all_registered, _load_builtins

    _load_builtins()
    return {n: c for n, c in _all_registered().items()
            if "bounds" in __import__("inspect").signature(c.__init__).parameters}


def _build(name, cls, bounds):
    if name == "hdg":
        return cls(1.0, bounds={"a": bounds, "b": (0, 1)}, n=1000)
    if name == "sampled_dimensions":
        return cls("duchi", 1.0, [bounds, (0, 1)])
    if name == "duchi_multivariate":
        return cls(1.0, [bounds, (0, 1)])
    return cls(1.0, bounds)


def test_every_mechanism_taking_bounds_is_covered():
    assert set(_bounded_mechanisms()) >= {"stochastic_rounding", "duchi", "laplace", "piecewise", "hybrid",
                                           "general_wave", "square_wave", "hierarchical_histogram",
                                           "duchi_multivariate", "sampled_dimensions", "hdg"}


@pytest.mark.parametrize("name", sorted(_bounded_mechanisms()))
@pytest.mark.parametrize("bounds, message", [
    ((0, 1e300), r"too large: ldpnum takes bounds within ±1e\+100"),
    ((-1e101, 0), r"too large: ldpnum takes bounds within ±1e\+100"),
    ((-1e-300, 1e-300), r"too narrow: ldpnum takes bounds at least 1e-100 apart"),
])
def test_bounds_of_unusable_scale_refused_at_construction(name, bounds, message):
    """(0, 1e300) used to be accepted and refused only when estimating (OverflowError for Duchi and
    StochasticRounding, a non-finite estimate for the others), after the reports were drawn."""
    with pytest.raises(ValueError, match=message):
        _build(name, _bounded_mechanisms()[name], bounds)


def test_recommend_refuses_bounds_of_unusable_scale():
    with pytest.raises(ValueError, match=r"too large: ldpnum takes bounds within ±1e\+100"):
        ldp.recommend("mean", n=1000, epsilon=1.0, bounds=(0, 1e300))  # was an OverflowError
    for bounds in ((-1e100, 1e100), (0, 1e-100)):  # the limits themselves: finite predictions
        assert np.isfinite(ldp.recommend("mean", n=1000, epsilon=1e-3, bounds=bounds).predicted_error)


@pytest.mark.parametrize("cls, epsilon", [(ldp.Duchi, 1e-14), (ldp.StochasticRounding, 1e-3), (ldp.Laplace, 1e-3),
                                          (ldp.Piecewise, 1e-3), (ldp.Hybrid, 1e-3), (ldp.SquareWave, 1e-3)])
@pytest.mark.parametrize("bounds", [(-1e100, 1e100), (0, 1e-100)])
def test_bounds_at_the_limits_estimate_finite_means(cls, epsilon, bounds):
    """The limits are wide enough that every mean estimate stays finite with a positive standard error, even
    at a tiny ε (Duchi at 1e-14 multiplies the squared width by ~1e28)."""
    m = cls(epsilon, bounds)
    x = np.array([bounds[0], bounds[1], 0.5 * (bounds[0] + bounds[1])] * 10)
    est = m.estimate_mean(m.privatize(x, rng=0))
    lo, hi = est.confidence_interval(0.95)
    assert np.isfinite([est.value, est.standard_error, lo, hi]).all() and est.standard_error > 0


# -- check_scalar: the one check of integer and real arguments ------------------------------------------------


@pytest.mark.parametrize("value", [3, np.int8(3), np.int64(3), np.uint16(3)])
def test_check_scalar_takes_python_and_numpy_integers(value):
    out = check_scalar(value, "k", int, low=1, high=4)
    assert out == 3 and type(out) is int


@pytest.mark.parametrize("value", [2.5, 3, np.float32(2.5), np.float64(2.5), np.int64(3)])
def test_check_scalar_takes_python_and_numpy_reals(value):
    out = check_scalar(value, "x", float, low=0, high=4)
    assert out == float(value) and type(out) is float


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
@pytest.mark.parametrize("kind", [int, float])
def test_check_scalar_refuses_bool(value, kind):
    noun = "an integer" if kind is int else "a real number"
    with pytest.raises(TypeError, match=f"^flag must be {noun}; got bool (np.)?(True|False)_?$"):
        check_scalar(value, "flag", kind)


@pytest.mark.parametrize("value, kind", [(2.0, int), (np.float64(2.0), int), ("2", int), ("2", float),
                                         (None, int), (np.array(2), int), (np.array(2.0), float), (1 + 0j, float)])
def test_check_scalar_refuses_other_kinds(value, kind):
    with pytest.raises(TypeError, match=f"^v must be (an integer|a real number); got {type(value).__name__} "):
        check_scalar(value, "v", kind)


def test_check_scalar_none_only_when_allowed():
    assert check_scalar(None, "tol", float, low=0, allow_none=True) is None
    with pytest.raises(TypeError, match=r"^tol must be a real number or None; got str '1'$"):
        check_scalar("1", "tol", float, low=0, allow_none=True)


@pytest.mark.parametrize("include, inside, outside, shown", [
    ("both", [1, 4], [0, 5], "[1, 4]"),
    ("left", [1, 3], [0, 4], "[1, 4)"),
    ("right", [2, 4], [1, 5], "(1, 4]"),
    ("neither", [2, 3], [1, 4], "(1, 4)"),
])
def test_check_scalar_bounds_inclusive_and_exclusive(include, inside, outside, shown):
    for v in inside:
        assert check_scalar(v, "n", int, low=1, high=4, include_boundaries=include) == v
        assert check_scalar(float(v), "x", float, low=1, high=4, include_boundaries=include) == v
    for v in outside:
        with pytest.raises(ValueError, match=f"^n must be in {re.escape(shown)}; got {v}$"):
            check_scalar(v, "n", int, low=1, high=4, include_boundaries=include)
        with pytest.raises(ValueError, match=f"^x must be a finite number in {re.escape(shown)}; got {float(v)}$"):
            check_scalar(float(v), "x", float, low=1, high=4, include_boundaries=include)


def test_check_scalar_one_sided_messages():
    with pytest.raises(ValueError, match=r"^n_bins must be >= 1; got 0$"):
        check_scalar(0, "n_bins", int, low=1)
    with pytest.raises(ValueError, match=r"^n must be > 1; got 1$"):
        check_scalar(1, "n", int, low=1, include_boundaries="right")
    with pytest.raises(ValueError, match=r"^n must be <= 3; got 4$"):
        check_scalar(np.int64(4), "n", int, high=3)
    with pytest.raises(ValueError, match=r"^tol must be a finite number >= 0; got -0.5$"):
        check_scalar(-0.5, "tol", float, low=0)
    with pytest.raises(ValueError, match=r"^ell must lie in \[1, 3\]; got 0$"):
        check_scalar(0, "ell", int, low=1, high=3, verb="lie")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -np.inf, np.float32("nan")])
def test_check_scalar_refuses_non_finite_reals(value):
    with pytest.raises(ValueError, match="^x must be a finite number; got "):
        check_scalar(value, "x", float)
    with pytest.raises(ValueError, match=r"^x must be a finite number in \(0, 1000\]; got "):
        check_scalar(value, "x", float, low=0, high=1e3, include_boundaries="right")
    with pytest.raises(ValueError, match=r"^x must be in \[0, 1\]; got "):  # NaN fails every comparison
        check_scalar(float("nan"), "x", float, low=0, high=1, finite=False)
    assert np.isinf(check_scalar(np.inf, "x", float, finite=False))


def test_check_scalar_refuses_an_unknown_kind_or_boundary_rule():
    with pytest.raises(TypeError, match="kind must be int or float"):
        check_scalar(1, "n", complex)
    with pytest.raises(ValueError, match="include_boundaries must be one of"):
        check_scalar(1, "n", int, low=0, include_boundaries="open")


@pytest.mark.parametrize("call, error, message", [
    (lambda: ldp.SquareWave(1.0, (0, 1), bandwidth=0), ValueError, r"bandwidth must be a finite number in \(0, 1000\]"),
    (lambda: ldp.SquareWave(1.0, (0, 1), bandwidth=True), TypeError, "bandwidth must be a real number; got bool True"),
    (lambda: ldp.Piecewise(1.0, (0, 1), n_cells=2.0), TypeError, "n_cells must be an integer; got float 2.0"),
    (lambda: ldp.Piecewise(1.0, (0, 1), n_cells=3), ValueError, r"n_cells must be in \[4, 65536\]; got 3"),
    (lambda: ldp.GRR(1.0, k=np.bool_(True)), TypeError, "k must be an integer; got bool"),
    (lambda: ldp.PEM(1.0, top_k=0), ValueError, r"top_k must lie in \[1, 65536\]; got 0"),
    (lambda: ldp.PrivUnit(1.0, dim=1.5), TypeError, "dim must be an integer; got float 1.5"),
    (lambda: ldp.SquareWave(True, (0, 1)), TypeError, "epsilon must be a real number; got bool True"),
    (lambda: ldp.SquareWave(21, (0, 1)), ValueError, r"epsilon must be a finite number in \(0, 20\]; got 21"),
])
def test_mechanisms_check_their_scalars_with_check_scalar(call, error, message):
    with pytest.raises(error, match=message):
        call()
