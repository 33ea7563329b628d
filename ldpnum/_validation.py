"""Input validation shared by every public function (design rule R5).

Everything is checked before the first random word is drawn. TypeError for a wrong kind, ValueError for a
wrong value; messages name the parameter, the offending value, and for arrays the count and first index of
the bad records.

The one validation module of the package: scalar arguments (:func:`check_scalar`, :func:`check_epsilon`),
bounds, one column of values or categories, and ``(n, d)`` arrays of vectors with per-coordinate bounds
(:func:`check_vectors`, shared by the vector mechanisms and the several-attribute ones, HDG and marginals).
Every family imports these from here.
"""

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ._typing import ArrayLike, FloatArray
from .exceptions import ClippingWarning, InvalidValuesError

__all__ = ["check_scalar", "check_epsilon", "check_bounds", "check_values", "check_categories", "check_category_labels",
           "category_codes", "check_labelled_categories", "check_binary", "check_choice", "prepared", "dtype_hint", "check_vector_bounds", "check_vectors", "check_frame_columns",
           "refuse_non_numeric", "EPSILON_MAX", "BOUND_MAX", "WIDTH_MIN", "MAX_DIM"]

EPSILON_MAX = 20.0
#: Largest magnitude of a bound, and smallest width of bounds, that mechanisms take (see :func:`check_bounds`).
BOUND_MAX = 1e100
WIDTH_MIN = 1e-100


def _is_real_scalar(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
            and not isinstance(value, np.ndarray))


_BOUNDARIES = {"both": ("[", "]"), "left": ("[", ")"), "right": ("(", "]"), "neither": ("(", ")")}


def check_scalar(value, name, kind=int, *, low=None, high=None, include_boundaries="both", finite=True,
                 allow_none=False, verb="be"):
    """Return a scalar argument as an ``int`` or a ``float`` after checking its kind and range.

    The one check of integer and real arguments (modelled on scikit-learn's ``check_scalar``). A TypeError
    for a wrong kind, a ValueError for a wrong value; both messages name the parameter and the value.

    Parameters
    ----------
    value : object
        The argument. Python and NumPy integers are integers; Python and NumPy integers and floats (and
        other :class:`numbers.Real`) are reals. ``bool`` and ``numpy.bool_`` are neither, nor are arrays.
    name : str
        The parameter's name, as the messages show it.
    kind : {int, float}, default int
        ``int`` for an integer (returned as ``int``), ``float`` for a real number (returned as ``float``).
    low, high : number, optional
        Bounds of the admissible range; ``None`` leaves that side open.
    include_boundaries : {"both", "left", "right", "neither"}, default "both"
        Which of ``low`` and ``high`` are admissible themselves (as in scikit-learn).
    finite : bool, default True
        For reals: refuse NaN and ±inf (ValueError). ``False`` checks the kind only, and the range if given.
    allow_none : bool, default False
        Accept ``None`` (returned as is); the type message then says "or None".
    verb : str, default "be"
        The verb of the range message: ``"{name} must {verb} in [low, high]; got value"``.

    Returns
    -------
    int, float or None

    Raises
    ------
    TypeError
        ``"{name} must be an integer; got float 2.5"``,
        ``"{name} must be a real number or None; got str '1'"``.
    ValueError
        Integers: ``"{name} must be in [1, 16]; got 17"``, ``"{name} must be >= 1; got 0"``; reals:
        ``"{name} must be a finite number in (0, 20]; got 0.0"``, ``"{name} must be a finite number >= 0; got
        nan"``.

    Examples
    --------
    >>> check_scalar(np.int64(3), "k", int, low=1, high=16)
    3
    >>> check_scalar(True, "k", int)
    Traceback (most recent call last):
    ...
    TypeError: k must be an integer; got bool True
    >>> check_scalar(0.0, "epsilon", float, low=0, high=20, include_boundaries="right")
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be a finite number in (0, 20]; got 0.0
    """
    if value is None and allow_none:
        return None
    if kind is int:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
        noun = "an integer"
    elif kind is float:
        ok = _is_real_scalar(value)
        noun = "a real number"
    else:
        raise TypeError(f"kind must be int or float; got {kind!r}")
    if not ok:
        noun += " or None" if allow_none else ""
        raise TypeError(f"{name} must be {noun}; got {type(value).__name__} {value!r:.60}")
    if include_boundaries not in _BOUNDARIES:
        raise ValueError(f"include_boundaries must be one of {', '.join(map(repr, _BOUNDARIES))}; "
                         f"got {include_boundaries!r}")
    out = kind(value)
    left, right = _BOUNDARIES[include_boundaries]
    inside = not (kind is float and finite and not math.isfinite(out))
    if low is not None:
        inside = inside and (out >= low if left == "[" else out > low)
    if high is not None:
        inside = inside and (out <= high if right == "]" else out < high)
    if inside:
        return out
    if low is not None and high is not None:
        what = f"in {left}{_show(low)}, {_show(high)}{right}"
    elif low is not None:
        what = f"{'>=' if left == '[' else '>'} {_show(low)}"
    elif high is not None:
        what = f"{'<=' if right == ']' else '<'} {_show(high)}"
    else:
        what = ""
    if kind is float:
        what = f"a finite number {what}".rstrip() if finite else what
        raise ValueError(f"{name} must {verb} {what}; got {value!r}")
    raise ValueError(f"{name} must {verb} {what}; got {out}")


def _show(bound):
    """A bound as a message shows it: integers as they are, reals in ``%g`` (``1000``, ``1e+100``)."""
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


def check_epsilon(epsilon, name="epsilon"):
    """Return ``epsilon`` as a float after checking it is a finite real in (0, 20]."""
    return check_scalar(epsilon, name, float, low=0, high=EPSILON_MAX, include_boundaries="right")


def check_bounds(bounds, name="bounds"):
    r"""Return ``(low, high)`` as floats after checking they are public, finite, ordered and of a usable scale.

    Bounds are parameters of the mechanism, never derived from the data: deriving them from the values
    would leak information about the values outside the privacy guarantee.

    Every estimate's variance is the squared width :math:`(high - low)^2` times a factor of the mechanism that
    grows like :math:`\varepsilon^{-2}` (up to about :math:`10^{30}` at the smallest ε a plan takes), and
    second moments square the bounds themselves. So that these stay finite and non-zero in float64 for every
    mechanism and ε, bounds must lie within :math:`\pm 10^{100}` (``BOUND_MAX``) and be at least
    :math:`10^{-100}` apart (``WIDTH_MIN``); outside that range the mechanism is refused here, at
    construction, instead of an ``OverflowError`` or a non-finite or zero-width interval after the reports
    were drawn. Rescaling the values (other units) always brings them into range.

    Examples
    --------
    >>> check_bounds((0, 1440))
    (0.0, 1440.0)
    >>> check_bounds((0, 1e300))
    Traceback (most recent call last):
    ...
    ValueError: bounds (0.0, 1e+300) are too large: ldpnum takes bounds within ±1e+100 ...
    """
    if bounds is None:
        raise ValueError(f"{name} is required: pass the public range (low, high) of the values; "
                         "ldpnum never derives bounds from the data")
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__"):
        raise TypeError(f"{name} must be a pair (low, high); got {type(bounds).__name__} {bounds!r}")
    if len(bounds) != 2:
        raise ValueError(f"{name} must be a pair (low, high); got {len(bounds)} items: {bounds!r}")
    low, high = bounds
    low = check_scalar(low, f"{name}: low", float, finite=False)
    high = check_scalar(high, f"{name}: high", float, finite=False)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{name} must be finite; got ({low!r}, {high!r})")
    if not low < high:
        raise ValueError(f"{name} must satisfy low < high; got ({low!r}, {high!r})")
    if max(abs(low), abs(high)) > BOUND_MAX:
        raise ValueError(f"{name} ({low!r}, {high!r}) are too large: ldpnum takes bounds within ±{BOUND_MAX:g} "
                         "(an estimate's variance is the squared width times up to ε^-2, which must stay finite in "
                         "float64); rescale the values (e.g. to other units)")
    if not high - low >= WIDTH_MIN:
        raise ValueError(f"{name} ({low!r}, {high!r}) are too narrow: ldpnum takes bounds at least {WIDTH_MIN:g} "
                         f"apart (got a width of {high - low!r}; an estimate's variance, the squared width times "
                         "the mechanism's factor, would underflow float64 to a zero-width interval); rescale the "
                         "values (e.g. to other units)")
    return low, high


def check_choice(value, name, choices):
    """Check that ``value`` is one of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


_KIND_NAMES = {"b": "bool", "O": "object", "U": "str", "S": "bytes", "c": "complex", "M": "datetime64",
               "m": "timedelta64", "V": "void"}

_DTYPE_HINTS = {
    "b": "convert 0/1 flags with .astype(int), or privatize them with ldp.RandomizedResponse",
    "M": "convert to a number first, e.g. minutes since a public origin",
    "m": "convert to a number first, e.g. s.dt.total_seconds()",
    "c": "complex values have no order; privatize the real and imaginary parts as two columns",
}


def _is_categorical(dtype):
    return getattr(dtype, "name", None) == "category"  # pandas.CategoricalDtype, without importing pandas


def dtype_hint(dtype):
    """How to turn values of ``dtype`` (not real numbers) into values ldpnum can privatize."""
    if _is_categorical(dtype):
        return ("privatize it with a frequency oracle, e.g. s.ldp.privatize(ldp.GRR(epsilon, "
                "k=len(s.cat.categories))) (its declared categories are recorded and label the estimates), or "
                "convert numbers with .astype(float)")
    return _DTYPE_HINTS.get(getattr(dtype, "kind", "O"), "convert numbers stored as text with pd.to_numeric(s)")


def _check_kind(x, name, kinds, requirement, hints=None):
    """The values of ``x`` as a 1-D NumPy array whose dtype kind is one of ``kinds``, else a TypeError.

    The dtype is checked before conversion too: a pandas categorical of numbers is refused (its codes,
    not its values, are what a frequency oracle takes). The message names the dtype, says what is
    required and how to convert (``hints`` maps dtype kinds to mechanism-specific advice).
    """
    dtype = getattr(x, "dtype", None)
    if dtype is not None and not isinstance(x, np.ndarray) and (
            _is_categorical(dtype) or getattr(dtype, "kind", "O") not in kinds):
        arr = None
    else:
        arr = as_1d_array(x, name)
        dtype = arr.dtype
        if dtype.kind in kinds:
            return arr
    kind = "category" if _is_categorical(dtype) else getattr(dtype, "kind", "O")
    hint = (hints or {}).get(kind) or dtype_hint(dtype)
    raise TypeError(f"{name} has dtype {dtype}: it must hold {requirement}; {hint}")


def _has_na(x):
    """Whether a pandas object (Series, Index or a nullable array such as ``pd.array([1, None])``) has NA."""
    hasnans = getattr(x, "hasnans", None)
    if hasnans is not None:
        return bool(hasnans)
    isna = getattr(x, "isna", None)
    return isna is not None and bool(np.asarray(isna()).any())


def plain_array(x, name):
    """``np.asarray(x)``, refusing what NumPy would silently misread, with one message naming ``name``.

    * A masked array with masked entries: NumPy's conversion keeps the values *under* the mask, so they
      would be randomized as if valid (and dropping them would reveal who is missing). ValueError with the
      count and first index of the masked rows; a masked array with nothing masked is its data.
    * A ragged nested sequence (rows of different lengths): ValueError naming ``name`` instead of NumPy's
      "inhomogeneous shape" message.
    """
    if isinstance(x, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(x)
        if mask.any():
            rows = mask.reshape(mask.shape[0], -1).any(axis=1) if mask.ndim > 1 else mask
            first = int(np.flatnonzero(rows)[0])
            raise ValueError(f"{name} is a masked array with {int(rows.sum())} masked row(s), first at index {first}: "
                             "masked entries are neither randomized nor dropped (dropping them reveals who is "
                             f"missing); fill them with a public value first, e.g. {name}.filled(value)")
        return np.asarray(np.ma.getdata(x))
    try:
        return np.asarray(x)
    except ValueError as exc:
        if "inhomogeneous" not in str(exc) and "sequence" not in str(exc):
            raise
        raise ValueError(f"{name} is a ragged nested sequence (its rows have different lengths); pass one value "
                         "(or, for vector mechanisms, one row of the same length) per person") from None


def as_1d_array(x, name):
    """Convert array-likes (including pandas objects with nullable dtypes) to a 1-D NumPy array."""
    to_numpy = getattr(x, "to_numpy", None)
    if to_numpy is not None and not isinstance(x, np.ndarray):
        dtype = getattr(x, "dtype", None)
        kind = getattr(dtype, "kind", "O")
        if isinstance(dtype, np.dtype):  # a NumPy-backed column: its array, without pandas' NA scan
            arr = to_numpy()
        elif kind in "iufb" and hasattr(dtype, "na_value") and _has_na(x):
            # Nullable Int64/Float64 with pd.NA: NA becomes NaN and follows nan_policy.
            arr = to_numpy(dtype=np.float64, na_value=np.nan)
        elif kind in "iuf" and hasattr(dtype, "numpy_dtype"):
            arr = to_numpy(dtype=dtype.numpy_dtype)
        else:
            arr = to_numpy()
    else:
        arr = plain_array(x, name)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per person); got shape {arr.shape}")
    return arr


def prepared(check, x, *args, name=None, **options):
    """``check(x, *args, name=..., **options)`` as a read-only array, every message naming ``name``.

    The one wrapper of the validators for :meth:`ldpnum.Mechanism.prepare_values`: ``name`` (e.g.
    ``"column 'age'"``, default ``"x"``) is the subject of the validators' messages and warnings, and
    prefixes the few messages about other arguments (``fill_value: ...``), so an error raised for one
    column of many says which. Kernels see read-only arrays: one compiled signature whatever the input.
    """
    label = "x" if name is None else str(name)
    try:
        values = check(x, *args, name=label, **options)
    except (TypeError, ValueError) as exc:
        if name is not None and exc.args and isinstance(exc.args[0], str) and not exc.args[0].startswith(label):
            exc.args = (f"{label}: {exc.args[0]}",) + exc.args[1:]
        raise
    values = values.view()
    values.flags.writeable = False
    return values


def _first(mask):
    return int(np.flatnonzero(mask)[0])


def check_values(x, bounds, *, name="x", nan_policy="raise", fill_value=None, out_of_range="clip"):
    """Validate numerical values for a randomizer and return them as C-contiguous float64.

    Finite values outside ``bounds`` are reported in a :class:`~ldpnum.exceptions.ClippingWarning` (or
    raise with ``out_of_range="raise"``); the kernels clamp them to the bounds. NaN and ±inf raise, unless
    ``nan_policy="impute"`` with an explicit, public ``fill_value`` inside the bounds. Missing values are
    never dropped: dropping would reveal who is missing.

    The returned array may share memory with ``x`` (it is never written); values whose conversion
    needed a change (imputation, integer clamping) are in a new array.
    """
    check_choice(nan_policy, "nan_policy", ("raise", "impute"))
    check_choice(out_of_range, "out_of_range", ("clip", "raise"))
    low, high = bounds
    if nan_policy == "impute":
        if fill_value is None:
            raise ValueError("nan_policy='impute' needs an explicit public fill_value")
        if not _is_real_scalar(fill_value):
            raise TypeError(f"fill_value must be a real number; got {type(fill_value).__name__}")
        if not (math.isfinite(float(fill_value)) and low <= float(fill_value) <= high):
            raise ValueError(f"fill_value must be finite and inside bounds ({low!r}, {high!r}); "
                             f"got {fill_value!r}")
    elif fill_value is not None:
        raise ValueError("fill_value is only used with nan_policy='impute'")

    arr = _check_kind(x, name, "iuf", "real numbers (integer or float dtypes, nullable Int64/Float64 included)")
    kind = arr.dtype.kind
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))

    if kind in "iu":
        # Compare in the integer domain: a float64 cast of int64 > 2**53 would round first.
        ilow, ihigh = math.ceil(low), math.floor(high)
        below = arr < ilow if ilow > np.iinfo(arr.dtype).min else np.zeros(arr.shape, bool)
        above = arr > ihigh if ihigh < np.iinfo(arr.dtype).max else np.zeros(arr.shape, bool)
        n_out = int(below.sum() + above.sum())
        if n_out:
            _report_out_of_range(name, below | above, n_out, low, high, out_of_range)
            arr = np.clip(arr, max(ilow, np.iinfo(arr.dtype).min), min(ihigh, np.iinfo(arr.dtype).max))
        return np.ascontiguousarray(arr, dtype=np.float64)

    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.size == 0:
        return arr
    n_bad, n_out = _scan(arr, low, high)
    if n_bad:
        bad = ~np.isfinite(arr)
        if nan_policy == "raise":
            i = _first(bad)
            raise InvalidValuesError(
                f"{name} has {n_bad} missing or non-finite value(s) (NaN, inf or NA), first at index {i} "
                f"({float(arr[i])!r}); pass nan_policy='impute' with a public fill_value, or remove them before "
                "privatizing", count=n_bad, first_index=i, reason="missing")
        arr = np.where(bad, float(fill_value), arr)
    if n_out:
        mask = (arr < low) | (arr > high)
        _report_out_of_range(name, mask, int(mask.sum()), low, high, out_of_range)
    return arr


def _report_out_of_range(name, mask, count, low, high, out_of_range):
    i = _first(mask)
    msg = (f"{name} has {count} finite value(s) outside bounds ({low!r}, {high!r}), first at index {i}")
    if out_of_range == "raise":
        raise InvalidValuesError(msg, count=count, first_index=i, reason="out_of_range")
    warnings.warn(ClippingWarning(msg + "; they were clipped to the bounds", count=count, first_index=i),
                  stacklevel=_caller_stacklevel())


def _caller_stacklevel():
    """The ``stacklevel`` that attributes a warning to the user's line, the first frame outside the ldpnum package.

    The warning is raised by the function calling this one, however many of ldpnum's frames (a mechanism's
    ``privatize``, the pandas accessor, the command line) lie between.
    """
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _scan_categories(arr, k):
    from ._kernels._jit import launch
    from ._kernels.client_numeric import scan_categories

    view = arr.view()
    view.flags.writeable = False
    return int(launch(scan_categories, view, k))


def _scan(arr, low, high):
    from ._kernels._jit import launch
    from ._kernels.client_numeric import scan_values

    view = arr.view()
    view.flags.writeable = False  # kernels always see read-only arrays: one compiled signature
    return launch(scan_values, view, low, high)


K_MAX = 1 << 24


def check_k(k, name="k"):
    """Return the categorical domain size as an int after checking 2 <= k <= 2**24."""
    return check_scalar(k, name, int, low=2, high=K_MAX)


_CATEGORY_HINTS = {
    "f": "convert with .astype(int) after checking the values are whole numbers",
    "b": "convert flags with .astype(int)",
    "category": "privatize through the column's accessor, s.ldp.privatize(mech) (a frequency oracle takes its "
                "declared categories; or mech.with_categories(s.cat.categories)), or pass its codes s.cat.codes",
}
_TEXT_CATEGORIES = ("declare the public, fixed list of the k categories on the oracle, e.g. "
                    "ldp.GRR(epsilon, categories=[...]) or mech.with_categories([...]) (not categories learned from "
                    "the data: they would depend on who answered)")
_CATEGORY_HINTS.update({kind: _TEXT_CATEGORIES for kind in "USOT"})


def check_category_labels(categories, k=None, *, name="categories"):
    """The declared categories as a tuple of str or int labels (JSON-safe, unique, in the given order).

    Categories are public parameters of a frequency oracle (category ``categories[i]`` is code ``i``): they
    must be declared, never read off the data (the set of values present would leak). ``k``, when given,
    must equal their number.

    Examples
    --------
    >>> check_category_labels(["tea", "coffee"])
    ('tea', 'coffee')
    """
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__len__") or np.ndim(categories) != 1:
        raise TypeError(f"{name} must be a list of category labels (str or int), e.g. ['tea', 'coffee']; got "
                        f"{type(categories).__name__}")
    out = []
    for i, c in enumerate(categories):
        if isinstance(c, np.generic):
            c = c.item()
        if isinstance(c, bool) or not isinstance(c, (str, int)):
            raise TypeError(f"{name} must hold str or int labels (they are recorded as JSON in the reports' spec); "
                            f"entry {i} is {c!r} ({type(c).__name__})")
        out.append(c)
    if len(out) < 2:
        raise ValueError(f"{name} must declare at least 2 categories; got {len(out)}")
    seen: dict = {}
    for i, c in enumerate(out):
        if c in seen:
            raise ValueError(f"{name} must be unique; entry {i} ({c!r}) repeats entry {seen[c]}")
        seen[c] = i
    if k is not None and len(out) != k:
        raise ValueError(f"{name} declares {len(out)} categories but k={k}: k must equal the number of categories "
                         f"(leave k out to derive it)")
    return tuple(out)


def category_codes(x, categories, *, name="x", fill_value=None, unknown="raise"):
    """Labels ``x`` as codes ``0..k-1`` of the declared ``categories`` (``categories[i]`` is code ``i``).

    Returns ``(codes, fill_code)`` for :func:`check_categories`: a nullable integer array (missing values
    stay missing, for ``nan_policy``), values outside the categories as code ``k`` with ``unknown="uniform"``
    (a :class:`~ldpnum.exceptions.InvalidValuesError` naming the first one otherwise), and ``fill_value`` (a
    label) as its code. A pandas ``category`` column is matched by value, whatever its own categories' order.
    """
    import pandas as pd

    k = len(categories)
    dtype = getattr(x, "dtype", None)
    if dtype is None or isinstance(x, (list, tuple)):
        x = np.asarray(x, dtype=object) if not isinstance(x, np.ndarray) else x
        dtype = x.dtype
    if getattr(dtype, "kind", "O") in "fcbmM" and not _is_categorical(dtype):
        raise TypeError(f"{name} has dtype {dtype}: it must hold labels of the declared categories (text or int), "
                        f"e.g. {list(categories[:3])!r}")
    if _is_categorical(dtype):  # matched by value: the column's categories onto the declared ones
        cat = pd.Categorical(x)
        own, uniques = np.asarray(cat.codes, dtype=np.int64), cat.categories
    else:
        values = x.to_numpy() if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray) else np.asarray(x)
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional; got shape {values.shape}")
        own, uniques = pd.factorize(values)  # one hash pass; missing values as -1
        own = np.asarray(own, dtype=np.int64)
    missing = own < 0
    mapping = pd.Index(list(categories), dtype=object).get_indexer(uniques)
    codes = np.where(missing, -1, mapping[np.maximum(own, 0)]) if len(uniques) else np.full(own.shape, -1)
    outside = (codes < 0) & ~missing
    if outside.any():
        i = _first(outside)
        if unknown == "raise":
            raise InvalidValuesError(f"{name} has {int(outside.sum())} value(s) outside the declared categories, "
                                     f"first at index {i} ({uniques[own[i]]!r}); the categories are "
                                     f"{list(categories[:8])!r}{' ...' if k > 8 else ''}: declare it among them, or pass "
                                     "unknown='uniform' to report such values uniformly at random",
                                     count=int(outside.sum()), first_index=i)
        codes[outside] = k
    fill_code = None
    if fill_value is not None:
        if isinstance(fill_value, np.generic):
            fill_value = fill_value.item()
        if isinstance(fill_value, bool) or fill_value not in categories:
            raise ValueError(f"fill_value must be one of the declared categories; got {fill_value!r}")
        fill_code = categories.index(fill_value)
    if missing.any():
        return pd.arrays.IntegerArray(np.where(missing, 0, codes), missing), fill_code
    return codes, fill_code


def check_labelled_categories(x, categories, *, name="x", nan_policy="raise", fill_value=None, unknown="raise"):
    """:func:`check_categories` of labels of the declared ``categories`` (:func:`category_codes`)."""
    codes, fill_code = category_codes(x, categories, name=name, fill_value=fill_value, unknown=unknown)
    return check_categories(codes, len(categories), name=name, nan_policy=nan_policy, fill_value=fill_code,
                            unknown=unknown)


def check_categories(x, k, *, name="x", nan_policy="raise", fill_value=None, unknown="raise"):
    """Validate categorical values (codes ``0..k-1``) and return them as C-contiguous int64.

    Floats are refused even when integral (a float category is almost always a bug upstream, and hashing
    mechanisms must not see two spellings of one category); NaN/NA raise or are imputed with a public
    ``fill_value`` in ``[0, k)``; codes outside ``[0, k)`` raise, or with ``unknown="uniform"`` are marked
    ``-1`` so the kernel reports a uniformly random output for them (never wrapped around).
    """
    check_choice(nan_policy, "nan_policy", ("raise", "impute"))
    check_choice(unknown, "unknown", ("raise", "uniform"))
    if nan_policy == "impute":
        fill_value = check_scalar(fill_value, "fill_value", int, low=0, high=k, include_boundaries="left",
                                  verb="be a category")
    elif fill_value is not None:
        raise ValueError("fill_value is only used with nan_policy='impute'")
    dtype = getattr(x, "dtype", None)
    missing = None
    if not isinstance(x, np.ndarray) and hasattr(dtype, "na_value") and getattr(dtype, "kind", "O") in "iu" \
            and _has_na(x):  # nullable Int64 with pd.NA: NA follows nan_policy
        missing = np.asarray(x.isna())
        arr = x.to_numpy(dtype=np.int64, na_value=0)
    else:
        arr = _check_kind(x, name, "iu", f"integer category codes 0..{k - 1}", _CATEGORY_HINTS)
    if missing is not None and missing.any():
        if nan_policy == "raise":
            i = _first(missing)
            raise InvalidValuesError(f"{name} has {int(missing.sum())} missing value(s), first at index {i}; pass "
                                     "nan_policy='impute' with a public fill_value category",
                                     count=int(missing.sum()), first_index=i, reason="missing")
        arr = np.where(missing, int(fill_value), arr)
    if arr.dtype == np.uint64:
        big = arr > np.uint64(np.iinfo(np.int64).max)
        if big.any():
            i = _first(big)
            raise InvalidValuesError(f"{name} has {int(big.sum())} value(s) outside [0, {k}), first at index {i}",
                                     count=int(big.sum()), first_index=i)
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    n_bad = _scan_categories(arr, k)  # one Numba pass; the masks below only on the error path
    if n_bad:
        bad = (arr < 0) | (arr >= k)
        i = _first(bad)
        if unknown == "raise":
            raise InvalidValuesError(f"{name} has {n_bad} value(s) outside the categories [0, {k}), first at "
                                     f"index {i} ({int(arr[i])}); pass unknown='uniform' to report them as "
                                     "uniformly random", count=n_bad, first_index=i)
        arr = np.where(bad, -1, arr)
    return arr


def check_binary(x, *, name="x", nan_policy="raise", fill_value=None):
    """Validate 0/1 values (bool, integer or float) for randomized response; return C-contiguous float64.

    Missing or non-finite values raise, or are replaced by the public ``fill_value`` (0 or 1) with
    ``nan_policy="impute"``; any other value raises.
    """
    from ._kernels._jit import launch
    from ._kernels.client_numeric import scan_binary

    check_choice(nan_policy, "nan_policy", ("raise", "impute"))
    if nan_policy == "impute":
        if isinstance(fill_value, (str, bytes)) or fill_value not in (0, 1):
            raise ValueError(f"fill_value must be 0 or 1 for randomized response; got {fill_value!r}")
    elif fill_value is not None:
        raise ValueError("fill_value is only used with nan_policy='impute'")
    arr = _check_kind(x, name, "biuf", "0/1 values (bool or numeric)", {"category": "privatize s.cat.codes"})
    if arr.dtype.kind == "b":
        return arr.astype(np.float64)
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    view = arr.view()
    view.flags.writeable = False
    n_missing, n_other = launch(scan_binary, view)  # one pass; NumPy masks only on the error path
    if n_missing:
        missing = ~np.isfinite(arr)
        if nan_policy == "raise":
            i = _first(missing)
            raise InvalidValuesError(f"{name} has {n_missing} missing or non-finite value(s), first at index {i}; "
                                     "pass nan_policy='impute' with fill_value=0 or 1", count=n_missing,
                                     first_index=i, reason="missing")
        arr = np.where(missing, float(fill_value), arr)
    if n_other:
        bad = (arr != 0) & (arr != 1)
        i = _first(bad)
        raise InvalidValuesError(f"{name} must be 0/1 for randomized response; {int(bad.sum())} value(s) are not, "
                                 f"first at index {i} ({float(arr[i])!r})", count=int(bad.sum()), first_index=i)
    return np.ascontiguousarray(arr)


def check_discrete(discrete, bounds, max_points, *, name="discrete"):
    """Validate a mechanism's ``discrete`` flag against its bounds; return the number of integers in them.

    ``discrete=True`` declares that the values are integers: the bounds must then be integers themselves
    (the first and last possible values, both included), and the domain may hold at most ``max_points``
    integers. Returns ``hi - lo + 1`` (or None when ``discrete`` is False).
    """
    if not isinstance(discrete, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool; got {type(discrete).__name__} {discrete!r}")
    if not discrete:
        return None
    low, high = bounds
    if not (float(low).is_integer() and float(high).is_integer()):
        raise ValueError(f"discrete=True needs integer bounds (the smallest and largest possible values, both "
                         f"included); got ({low!r}, {high!r})")
    count = int(high) - int(low) + 1
    if count > max_points:
        raise ValueError(f"discrete=True gives one cell per integer: bounds ({low!r}, {high!r}) hold {count} "
                         f"integers, more than the {max_points} cells available; use discrete=False (equal "
                         "buckets) or coarser units")
    return count


def check_integral(values, name="x"):
    """Refuse non-integer values (for ``discrete=True`` mechanisms), before anything is drawn.

    One InvalidValuesError naming the count and first index. ``values`` is the validated float64 array.
    """
    bad = values != np.floor(values)
    if bad.any():
        i = _first(bad)
        raise InvalidValuesError(
            f"{name} has {int(bad.sum())} non-integer value(s), first at index {i} ({float(values[i])!r}); this "
            "mechanism was built with discrete=True, whose cells are the integers: round the values (a public, "
            "data-independent rule) or use discrete=False", count=int(bad.sum()), first_index=i, reason="invalid")
    return values


# -- vectors: (n, d) inputs with public per-coordinate bounds -----------------------------------------------

#: Largest dimension of a vector mechanism (a uniform choice among the coordinates uses 48-bit draws).
MAX_DIM = 1 << 16
def check_vector_bounds(bounds: Any, name: str = "bounds") -> tuple[tuple[float, float], ...]:
    """Per-coordinate public bounds: a sequence of ``(low, high)`` pairs, one per coordinate (``d >= 1``).

    Each pair is checked like a scalar mechanism's bounds (finite, ``low < high``, width representable).
    """
    if bounds is None:
        raise ValueError(f"{name} is required: pass one public range (low, high) per coordinate; ldpnum never "
                         "derives bounds from the data")
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or isinstance(bounds, np.ndarray) and (
            bounds.ndim != 2):
        raise TypeError(f"{name} must be a sequence of (low, high) pairs, one per coordinate; got "
                        f"{type(bounds).__name__} {bounds!r}")
    items = list(bounds)
    if not items:
        raise ValueError(f"{name} is empty: a vector needs at least one coordinate (d >= 1)")
    if len(items) == 2 and all(_is_real_scalar(b) for b in items):
        raise TypeError(f"{name} must be a sequence of (low, high) pairs, one per coordinate; got the single pair "
                        f"{tuple(items)!r}: for d coordinates sharing one range pass [{tuple(items)!r}] * d")
    if len(items) > MAX_DIM:
        raise ValueError(f"{name} gives {len(items)} coordinates; at most {MAX_DIM} are supported")
    return tuple(check_bounds(b, name=f"{name}[{j}]") for j, b in enumerate(items))


def check_frame_columns(x: Any, name: str) -> bool:
    """For a DataFrame of vectors: TypeError naming the first column whose dtype does not hold real numbers.

    Such columns hold text, categories or dates; the check comes before any conversion (which would fail with NumPy's
    "could not convert string to float"). Returns whether ``x`` is a DataFrame.
    """
    dtypes = getattr(x, "dtypes", None)
    if isinstance(x, np.ndarray) or dtypes is None or not hasattr(dtypes, "items"):
        return False
    for col, dt in dtypes.items():
        kind = getattr(dt, "kind", "O")
        if kind not in "iuf" or getattr(dt, "name", None) == "category":
            raise TypeError(f"{name}: column {col!r} has dtype {dt}: it must hold real numbers; {dtype_hint(dt)}")
    return True


def refuse_non_numeric(arr: np.ndarray, name: str) -> None:
    """TypeError for an array whose dtype does not hold real numbers.

    For an object array, the message names the first entry that is not a real number by row and coordinate.
    """
    where = ""
    if arr.dtype.kind == "O" and arr.ndim == 2:
        for (i, j), v in np.ndenumerate(arr):
            if not _is_real_scalar(v):
                where = f" (first at row {i}, coordinate {j}: {type(v).__name__} {v!r})"
                break
    raise TypeError(f"{name} has dtype {arr.dtype}: it must hold real numbers (integer or float dtypes){where}; "
                    f"{dtype_hint(arr.dtype)}")


def _as_2d_array(x, name, dim):
    """``x`` as a 2-D NumPy array of shape ``(n, dim)`` whose dtype holds real numbers, else one clear error."""
    to_numpy = getattr(x, "to_numpy", None)
    if to_numpy is not None and not isinstance(x, np.ndarray):
        if check_frame_columns(x, name):  # a DataFrame: every column must hold numbers
            arr = to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            arr = np.asarray(to_numpy())
    else:
        arr = plain_array(x, name)
    if arr.dtype.kind not in "iuf":
        refuse_non_numeric(arr, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional, one row of {dim} values per person; got shape {arr.shape} "
                         "(for one person pass x.reshape(1, -1))")
    if arr.shape[1] != dim:
        raise ValueError(f"{name} must have {dim} columns (one per coordinate of the bounds); got shape {arr.shape}")
    return arr


def _scan_vectors(arr, lows, highs, integral):
    """One compiled pass over ``arr``: counts of non-finite, out-of-bounds and non-integral values.

    The pass is :func:`ldpnum._kernels.client_numeric.scan_vectors`; non-integral values count only with ``integral``.
    """
    from ._kernels._jit import launch
    from ._kernels.client_numeric import scan_vectors

    view = arr.view()
    view.flags.writeable = False  # kernels always see read-only arrays: one compiled signature
    return launch(scan_vectors, view, lows, highs, bool(integral))


def check_vectors(x: ArrayLike, lows: FloatArray, highs: FloatArray, *, name: str = "x", nan_policy: str = "raise",
                  fill_value: Any = None, out_of_range: str = "clip", integral: bool = False,
                  columns: Any = None) -> FloatArray:
    """Validate an ``(n, d)`` array of vectors and return it as C-contiguous float64 (never written).

    As for one column (:func:`ldpnum._validation.check_values`): non-finite values raise (or, with
    ``nan_policy="impute"``, are replaced by ``fill_value``: a number or one number per coordinate, inside
    the bounds), finite values outside their coordinate's bounds are counted in a ``ClippingWarning``
    (the kernels clamp them) or raise with ``out_of_range="raise"``. With ``integral`` (category codes),
    values that are not whole numbers raise. Messages give the count and the first row (and its
    coordinate, or its name in ``columns``).
    """
    check_choice(nan_policy, "nan_policy", ("raise", "impute"))
    check_choice(out_of_range, "out_of_range", ("clip", "raise"))
    dim = lows.shape[0]
    fill = None
    if nan_policy == "impute":
        if fill_value is None:
            raise ValueError("nan_policy='impute' needs an explicit public fill_value")
        fills = [fill_value] * dim if _is_real_scalar(fill_value) else list(np.asarray(fill_value, dtype=object).ravel())
        if len(fills) != dim or not all(_is_real_scalar(f) for f in fills):
            raise TypeError(f"fill_value must be a real number or {dim} real numbers (one per coordinate); "
                            f"got {fill_value!r}")
        fill = np.array([float(f) for f in fills])
        if not (np.all(np.isfinite(fill)) and np.all((lows <= fill) & (fill <= highs))):
            raise ValueError(f"fill_value must be finite and inside each coordinate's bounds; got {fill_value!r}")
    elif fill_value is not None:
        raise ValueError("fill_value is only used with nan_policy='impute'")
    arr = np.ascontiguousarray(_as_2d_array(x, name, dim), dtype=np.float64)
    if arr.size == 0:
        return arr
    # Fast path (the usual case): everything finite, inside the bounds (and whole), by one compiled pass without
    # (n, d) masks (n = 10^6, d = 8 category codes: 8 ms, against 110 ms for NumPy's strided column minima and
    # maxima and a floor comparison); otherwise the masks below count and locate.
    if not any(_scan_vectors(arr, lows, highs, integral)):
        return arr
    where = (lambda j: f"coordinate {j}") if columns is None else (lambda j: f"column {columns[j]!r}")
    bad = ~np.isfinite(arr)
    n_bad = int(bad.sum())
    if n_bad:
        if fill is None:
            i, j = (int(v) for v in np.argwhere(bad)[0])
            raise InvalidValuesError(
                f"{name} has {n_bad} missing or non-finite value(s) (NaN, inf or NA), first at index {i} (row {i}, "
                f"{where(j)}: {float(arr[i, j])!r}); pass nan_policy='impute' with a public fill_value, or "
                "remove them before privatizing", count=n_bad, first_index=i, reason="missing")
        arr = np.where(bad, fill, arr)
    outside = (arr < lows) | (arr > highs)
    n_out = int(outside.sum())
    if n_out:
        i, j = (int(v) for v in np.argwhere(outside)[0])
        msg = (f"{name} has {n_out} finite value(s) outside their coordinate's bounds, first at index {i} (row {i}, "
               f"{where(j)}: {float(arr[i, j])!r} outside ({float(lows[j])!r}, {float(highs[j])!r}))")
        if out_of_range == "raise":
            raise InvalidValuesError(msg, count=n_out, first_index=i, reason="out_of_range")
        warnings.warn(ClippingWarning(msg + "; they were clipped to the bounds", count=n_out, first_index=i),
                      stacklevel=5)
    if integral:
        frac = arr != np.floor(arr)
        n_frac = int(frac.sum())
        if n_frac:
            i, j = (int(v) for v in np.argwhere(frac)[0])
            raise InvalidValuesError(f"{name} has {n_frac} non-integral category code(s), first at index {i} (row "
                                     f"{i}, {where(j)}: {float(arr[i, j])!r}); codes are integers 0..c-1",
                                     count=n_frac, first_index=i, reason="out_of_range")
    return arr
