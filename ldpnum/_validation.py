"""Input validation shared by every public function (DESIGN.md R5).

Everything is checked before the first random word is drawn. TypeError for a wrong kind, ValueError for a
wrong value; messages name the parameter, the offending value, and for arrays the count and first index of
the bad records.
"""

import math
import numbers
import warnings

import numpy as np

from .exceptions import ClippingWarning

__all__ = ["check_epsilon", "check_bounds", "check_values", "check_choice", "EPSILON_MAX"]

EPSILON_MAX = 20.0


def _is_real_scalar(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
            and not isinstance(value, np.ndarray))


def check_epsilon(epsilon, name="epsilon"):
    """Return ``epsilon`` as a float after checking it is a finite real in (0, 20]."""
    if not _is_real_scalar(epsilon):
        raise TypeError(f"{name} must be a real number; got {type(epsilon).__name__} {epsilon!r}")
    value = float(epsilon)
    if not math.isfinite(value) or not (0.0 < value <= EPSILON_MAX):
        raise ValueError(f"{name} must be a finite number in (0, {EPSILON_MAX:g}]; got {epsilon!r}")
    return value


def check_bounds(bounds, name="bounds"):
    """Return ``(low, high)`` as floats after checking they are public, finite and ordered.

    Bounds are parameters of the mechanism, never derived from the data: deriving them from the values
    would leak information about the values outside the privacy guarantee.
    """
    if bounds is None:
        raise ValueError(f"{name} is required: pass the public range (low, high) of the values; "
                         "ldpnum never derives bounds from the data")
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__"):
        raise TypeError(f"{name} must be a pair (low, high); got {type(bounds).__name__} {bounds!r}")
    if len(bounds) != 2:
        raise ValueError(f"{name} must be a pair (low, high); got {len(bounds)} items: {bounds!r}")
    low, high = bounds
    for part, v in (("low", low), ("high", high)):
        if not _is_real_scalar(v):
            raise TypeError(f"{name}: {part} must be a real number; got {type(v).__name__} {v!r}")
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{name} must be finite; got ({low!r}, {high!r})")
    if not low < high:
        raise ValueError(f"{name} must satisfy low < high; got ({low!r}, {high!r})")
    if not math.isfinite(high - low):
        raise ValueError(f"{name} ({low!r}, {high!r}) is too wide: its width overflows float64 "
                         f"(at most {np.finfo(np.float64).max:.3g}); rescale the values (e.g. to other units)")
    return low, high


def check_choice(value, name, choices):
    """Check that ``value`` is one of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


_KIND_NAMES = {"b": "bool", "O": "object", "U": "str", "S": "bytes", "c": "complex", "M": "datetime64",
               "m": "timedelta64", "V": "void"}


def as_1d_array(x, name):
    """Convert array-likes (including pandas objects with nullable dtypes) to a 1-D NumPy array."""
    to_numpy = getattr(x, "to_numpy", None)
    if to_numpy is not None and not isinstance(x, np.ndarray):
        dtype = getattr(x, "dtype", None)
        kind = getattr(dtype, "kind", "O")
        if kind in "iufb" and hasattr(dtype, "na_value") and _has_na(x):
            # Nullable Int64/Float64 with pd.NA: NA becomes NaN and follows nan_policy.
            arr = to_numpy(dtype=np.float64, na_value=np.nan)
        elif kind in "iuf" and hasattr(dtype, "numpy_dtype"):
            arr = to_numpy(dtype=dtype.numpy_dtype)
        else:
            arr = to_numpy()
    else:
        arr = np.asarray(x)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per person); got shape {arr.shape}")
    return arr


def _has_na(x):
    """Whether a pandas object (Series or extension array, e.g. ``pd.array([1, None], dtype="Int64")``)
    holds missing values."""
    hasnans = getattr(x, "hasnans", None)
    if hasnans is not None:
        return bool(hasnans)
    isna = getattr(x, "isna", None)
    return bool(np.asarray(isna()).any()) if isna is not None else False


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

    arr = as_1d_array(x, name)
    kind = arr.dtype.kind
    if kind not in "iuf":
        what = _KIND_NAMES.get(kind, str(arr.dtype))
        hint = " (convert booleans with .astype(int) if they are 0/1 values)" if kind == "b" else ""
        raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype} ({what}){hint}")
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
            raise ValueError(f"{name} has {n_bad} missing or non-finite value(s) (NaN, inf or NA), first at "
                             f"index {i} ({float(arr[i])!r}); pass nan_policy='impute' with a public fill_value, "
                             "or remove them before privatizing")
        arr = np.where(bad, float(fill_value), arr)
    if n_out:
        mask = (arr < low) | (arr > high)
        _report_out_of_range(name, mask, int(mask.sum()), low, high, out_of_range)
    return arr


def _report_out_of_range(name, mask, count, low, high, out_of_range):
    i = _first(mask)
    msg = (f"{name} has {count} finite value(s) outside bounds ({low!r}, {high!r}), first at index {i}")
    if out_of_range == "raise":
        raise ValueError(msg)
    warnings.warn(ClippingWarning(msg + "; they were clipped to the bounds", count=count, first_index=i),
                  stacklevel=4)


def _scan_categories(arr, k):
    from ._kernels._jit import launch
    from ._kernels.client import scan_categories

    view = arr.view()
    view.flags.writeable = False
    return int(launch(scan_categories, view, k))


def _scan(arr, low, high):
    from ._kernels._jit import launch
    from ._kernels.client import scan_values

    view = arr.view()
    view.flags.writeable = False  # kernels always see read-only arrays: one compiled signature
    return launch(scan_values, view, low, high)


K_MAX = 1 << 24


def check_k(k, name="k"):
    """Return the categorical domain size as an int after checking 2 <= k <= 2**24."""
    if not isinstance(k, numbers.Integral) or isinstance(k, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer; got {type(k).__name__} {k!r}")
    if not 2 <= int(k) <= K_MAX:
        raise ValueError(f"{name} must be in [2, {K_MAX}]; got {k}")
    return int(k)


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
        if not isinstance(fill_value, numbers.Integral) or isinstance(fill_value, (bool, np.bool_)):
            raise TypeError(f"fill_value must be an integer category; got {type(fill_value).__name__}")
        if not 0 <= int(fill_value) < k:
            raise ValueError(f"fill_value must be a category in [0, {k}); got {fill_value!r}")
    elif fill_value is not None:
        raise ValueError("fill_value is only used with nan_policy='impute'")
    dtype = getattr(x, "dtype", None)
    missing = None
    if dtype is not None and not isinstance(x, np.ndarray) and getattr(dtype, "kind", "O") in "iu" \
            and hasattr(dtype, "na_value") and _has_na(x):
        missing = np.asarray(x.isna())
        arr = x.to_numpy(dtype=np.int64, na_value=0)
    else:
        arr = as_1d_array(x, name)
        if arr.dtype.kind in "f" and missing is None:
            raise TypeError(f"{name} must hold integer category codes 0..{k - 1}; got dtype {arr.dtype} "
                            "(convert with .astype(int) after checking the values are whole numbers)")
        if arr.dtype.kind not in "iu":
            what = _KIND_NAMES.get(arr.dtype.kind, str(arr.dtype))
            raise TypeError(f"{name} must hold integer category codes 0..{k - 1}; got dtype {arr.dtype} ({what})")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    if missing is not None and missing.any():
        if nan_policy == "raise":
            i = _first(missing)
            raise ValueError(f"{name} has {int(missing.sum())} missing value(s), first at index {i}; pass "
                             "nan_policy='impute' with a public fill_value category")
        arr = np.where(missing, int(fill_value), arr)
    if arr.dtype == np.uint64:
        big = arr > np.uint64(np.iinfo(np.int64).max)
        if big.any():
            i = _first(big)
            raise ValueError(f"{name} has {int(big.sum())} value(s) outside [0, {k}), first at index {i}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    n_bad = _scan_categories(arr, k)  # one Numba pass; the masks below only on the error path
    if n_bad:
        bad = (arr < 0) | (arr >= k)
        i = _first(bad)
        if unknown == "raise":
            raise ValueError(f"{name} has {n_bad} value(s) outside the categories [0, {k}), first at index {i} "
                             f"({int(arr[i])}); pass unknown='uniform' to report them as uniformly random")
        arr = np.where(bad, -1, arr)
    return arr
