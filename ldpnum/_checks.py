"""Validation shared by the result objects (and the plot helpers and metrics that take their arguments).

One place for the checks that :class:`~ldpnum.DistributionEstimate`, :class:`~ldpnum.RangeEstimate` and
their queries repeat: arrays of real numbers, finiteness with the count and first position of the bad
entries, probabilities ``q`` in [0, 1], range queries ``lo <= hi``, and the provenance every estimate carries
(spec, ε, number of reports). This module imports neither the results nor the plots, so both can use it.
"""

import numbers

import numpy as np

from ._validation import check_scalar
from .spec import Spec

__all__ = ["real_array", "where", "at", "is_int", "check_finite", "check_probabilities", "check_ranges",
           "check_provenance", "check_required_provenance", "read_only"]


def real_array(x, name):
    """``x`` as a float64 array of any shape; TypeError unless it holds real numbers (not bools)."""
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {type(x).__name__}")
    dtype = getattr(x, "dtype", None)
    if not isinstance(x, np.ndarray) and hasattr(x, "to_numpy") and getattr(dtype, "kind", "O") in "iuf":
        arr = x.to_numpy(dtype=np.float64, na_value=np.nan)  # pandas, including nullable dtypes with NA
    else:
        arr = np.asarray(x)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real numbers; got {type(x).__name__} with dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def where(mask):
    """Count and first position (an int, or a tuple for n-d arrays) of the True entries of ``mask``."""
    mask = np.asarray(mask)
    if mask.ndim == 0:
        return int(bool(mask)), 0
    first = np.argwhere(mask)[0]
    return int(np.count_nonzero(mask)), (int(first[0]) if first.size == 1 else tuple(int(i) for i in first))


def at(arr, index):
    """``arr[index]`` as a Python float, for messages (``index`` from :func:`where`; 0-d arrays too)."""
    return float(arr.item() if arr.ndim == 0 else arr[index])


def is_int(v):
    """Whether ``v`` is an integer (Python or NumPy), not a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def check_finite(arr, name, what=""):
    """ValueError naming ``name``, the count and the first non-finite entry of ``arr``.

    ``what`` (e.g. ``" value(s)"``) is how the count reads.
    """
    bad = ~np.isfinite(arr)
    if np.any(bad):
        count, first = where(bad)
        raise ValueError(f"{name} must be finite; {count}{what} are not, first at index {first} "
                         f"({at(arr, first)!r})")
    return arr


def check_probabilities(q, name="q"):
    """``q`` as a float64 array of probabilities in [0, 1] (NaN refused), for quantiles."""
    qa = real_array(q, name)
    bad = ~((qa >= 0) & (qa <= 1))
    if np.any(bad):
        count, first = where(bad)
        raise ValueError(f"{name} must be in [0, 1]; {count} value(s) are not, first at index {first} "
                         f"({at(qa, first)!r})")
    return qa


def check_ranges(lo, hi):
    """``lo`` and ``hi`` broadcast to one shape as float64 arrays, with no NaN and ``lo <= hi``."""
    a, b = real_array(lo, "lo"), real_array(hi, "hi")
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise ValueError(f"lo and hi must broadcast to one shape; got shapes {a.shape} and {b.shape}") from None
    for name, v in (("lo", a), ("hi", b)):
        if np.any(np.isnan(v)):
            count, first = where(np.isnan(v))
            raise ValueError(f"{name} must not be NaN; {count} value(s) are, first at index {first}")
    if np.any(a > b):
        count, first = where(a > b)
        raise ValueError(f"range needs lo <= hi; {count} query(ies) have lo > hi, first at index {first} "
                         f"(lo={at(a, first)!r}, hi={at(b, first)!r})")
    return a, b


def check_provenance(spec, epsilon, n_reports):
    """The ``(epsilon, n_reports)`` an estimate records, checked against its ``spec``.

    ``spec`` is a :class:`~ldpnum.Spec` or None; ``epsilon`` defaults to the spec's and must agree with
    it (a finite positive real); ``n_reports`` is None or a non-negative int.
    """
    if spec is not None and not isinstance(spec, Spec):
        raise TypeError(f"spec must be an ldpnum Spec or None; got {type(spec).__name__}")
    if epsilon is None and spec is not None:
        epsilon = spec.epsilon
    if epsilon is not None:
        epsilon = check_scalar(epsilon, "epsilon", float, low=0, include_boundaries="neither")
        if spec is not None and epsilon != spec.epsilon:
            raise ValueError(f"epsilon={epsilon!r} disagrees with the spec's epsilon={spec.epsilon!r}")
    n_reports = check_scalar(n_reports, "n_reports", int, low=0, allow_none=True)
    return epsilon, n_reports


def check_required_provenance(spec, epsilon, n_reports):
    """:func:`check_provenance` for an estimate that always comes from reports; ``(epsilon, n_reports)``.

    ``spec`` must be a :class:`~ldpnum.Spec` and ``n_reports`` an int (neither may be None). The heavy-hitter
    and set-valued results (:class:`~ldpnum.HeavyHittersEstimate`, :class:`~ldpnum.ItemsetsEstimate` and its
    subclass) check their provenance with it.
    """
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be an ldpnum Spec; got {type(spec).__name__}")
    return check_provenance(spec, epsilon, check_scalar(n_reports, "n_reports", int, low=0))


def read_only(arr):
    """A read-only float64 copy of ``arr`` (never the caller's array)."""
    out = np.array(arr, dtype=np.float64, copy=True)
    out.flags.writeable = False
    return out
def check_level(level: float) -> float:
    """A confidence level in (0, 1), as a float (TypeError unless a real number, ValueError outside (0, 1))."""
    return check_scalar(level, "level", float, low=0, high=1, include_boundaries="neither")


def normal_quantile(level: float) -> float:
    """Two-sided normal critical value for a confidence level in (0, 1)."""
    from scipy.stats import norm

    return float(norm.ppf(0.5 + check_level(level) / 2))

