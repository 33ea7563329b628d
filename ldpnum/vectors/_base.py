"""What every vector mechanism shares: public per-coordinate bounds and the validation of ``(n, d)`` inputs."""

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exceptions import ClippingWarning, InvalidValuesError
from ..base import QUARTILE_LABELS, QUARTILES, Mechanism
from .._typing import ArrayLike, FloatArray, SeedLike
from ..reports import Reports, check_integer_codes
from .._validation import _is_real_scalar, check_bounds, check_choice, check_epsilon, dtype_hint, plain_array, prepared

__all__ = ["VectorMechanism", "check_vector_bounds", "check_vectors", "MAX_DIM", "IMPLAUSIBLE", "column_words",
           "check_report_variance", "check_frame_columns", "refuse_non_numeric"]

#: Largest dimension of a vector mechanism (a uniform choice among the coordinates uses 48-bit draws).
MAX_DIM = 1 << 16
#: Vector aggregates whose counts have no exact relation to their number of reports (DuchiMultivariate's
#: sign counts, PrivUnitG's sums of squares) are checked statistically: an aggregate is refused when counts as
#: far out as its own have probability below this under the mechanism, whatever the inputs (a legitimate
#: aggregate is refused at most once in 10^12).
IMPLAUSIBLE = 1e-12


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


def check_report_variance(owner: str, epsilon: float, unit_variance: float, widths: Any, bounds: Any,
                          what: str = "one report's estimate", unit_extent: float = 1.0) -> None:
    """Refuse, at construction, a mechanism whose estimates cannot be represented in float64.

    ``unit_variance`` is the largest variance of ``what`` on the unit scale of a coordinate (from the plan); a
    coordinate of width ``w`` has variance ``w² · unit_variance``. ``unit_extent`` bounds the magnitude of one
    report's estimate on that scale (offset from the low bound), so the estimators' sums of squared per-report
    estimates stay below ``(max|bound| + w · unit_extent)²`` per report; that is required to stay finite with
    a margin of ``2**64`` (for the number of reports). If the unit variance itself is not a finite positive
    number, ``epsilon`` is too small (the bounds are not to blame); otherwise a failing coordinate's bounds
    are too wide. Either way every estimate would come out infinite or NaN, so the error is raised before any
    report is drawn rather than when estimating.
    """
    if not (math.isfinite(unit_variance) and unit_variance > 0):
        raise ValueError(f"{owner}: epsilon={epsilon!r} is too small: the variance of {what} on a unit range is "
                         f"{unit_variance!r} in float64, so estimates would be infinite or NaN (this is not about the "
                         "bounds); use a larger epsilon")
    for j, w in enumerate(widths):
        lo, hi = bounds[j]
        extent = max(abs(float(lo)), abs(float(hi))) + float(w) * max(unit_extent, math.sqrt(unit_variance))
        if not extent < 2.0**480:  # extent² · 2**64 < 2**1024 (float64's range), as in check_bounds' width rule
            raise ValueError(f"{owner}: bounds[{j}] = {tuple(bounds[j])!r} are too wide for float64: one report's "
                             f"estimate reaches about {extent:.3g} (variance (high - low)² × {unit_variance:.3g}), so "
                             f"the sums of squares behind the standard errors of coordinate {j} would overflow; rescale "
                             "the values (e.g. to thousands or millions of units) and the bounds with them")


def check_frame_columns(x: Any, name: str) -> bool:
    """For a DataFrame of vectors: TypeError naming the first column whose dtype does not hold real numbers
    (text, categories, dates), before any conversion (which would fail with NumPy's "could not convert
    string to float"). Returns whether ``x`` is a DataFrame."""
    dtypes = getattr(x, "dtypes", None)
    if isinstance(x, np.ndarray) or dtypes is None or not hasattr(dtypes, "items"):
        return False
    for col, dt in dtypes.items():
        kind = getattr(dt, "kind", "O")
        if kind not in "iuf" or getattr(dt, "name", None) == "category":
            raise TypeError(f"{name}: column {col!r} has dtype {dt}: it must hold real numbers; {dtype_hint(dt)}")
    return True


def refuse_non_numeric(arr: np.ndarray, name: str) -> None:
    """TypeError for an array whose dtype does not hold real numbers, naming (for an object array) the first
    entry that is not a real number by row and coordinate."""
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
    """One compiled pass over ``arr`` (:func:`ldpnum._kernels.client_numeric.scan_vectors`): counts of
    non-finite, out-of-bounds and (``integral``) non-integral values."""
    from .._kernels._jit import launch
    from .._kernels.client_numeric import scan_vectors

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


def column_words(codes: ArrayLike, what: str) -> np.ndarray:
    """The codes of a table column as a 1-D uint64 array, after checking they are non-negative integers."""
    return check_integer_codes(codes, f"{what} column codes").astype(np.uint64)


class _OffersEstimators:
    """An ``estimate_*`` method a vector mechanism does not have raises an AttributeError that says what its
    reports do answer (:meth:`ldpnum.Mechanism.offers`), instead of Python's bare "no attribute"."""

    if not TYPE_CHECKING:  # hidden from type checkers, which would read every attribute as present

        def __getattr__(self, attr: str) -> Any:
            if attr.startswith("estimate_") and not attr.startswith("__"):
                from ..base import ESTIMATORS

                cls = type(self)
                offered = [f"{e} ({what})" for e, what in ESTIMATORS.items() if cls.offers(e)]
                wanted = ESTIMATORS.get(attr)
                raise AttributeError(f"{cls.__name__} has no {attr}: its reports "
                                     f"{'do not estimate ' + wanted if wanted else 'offer no such estimate'}; it offers "
                                     f"{', '.join(offered) or 'no estimator'} (ask Mechanism.offers(name))")
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")


class VectorMechanism(_OffersEstimators, Mechanism):
    """Base of the mechanisms whose input is one vector of ``dim`` bounded coordinates per person.

    ``privatize`` takes an ``(n, dim)`` array (or a DataFrame of ``dim`` numeric columns); every coordinate
    has its own public bounds. Vector mechanisms are found by :func:`ldpnum.mechanisms.lookup` and
    :func:`ldpnum.from_spec`, not listed by :func:`ldpnum.mechanisms.registered` (see ``input_kind``).
    """

    input_kind = "vector"
    _vector_bounds: tuple[tuple[float, float], ...]

    def __init__(self, epsilon: float, bounds: Any) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._vector_bounds = check_vector_bounds(bounds)
        self._bounds = None
        lows = np.array([b[0] for b in self._vector_bounds])
        highs = np.array([b[1] for b in self._vector_bounds])
        widths = highs - lows
        for arr in (lows, highs, widths):
            arr.flags.writeable = False
        self._lows, self._highs, self._widths = lows, highs, widths
        self._inv_ranges = 1.0 / widths
        self._inv_ranges.flags.writeable = False

    def describe_rows(self, agg: Any, *, column: Any, names: Any = None, level: float = 0.95,
                      bootstrap: int | None = None, rng: SeedLike = None) -> list[tuple[Any, dict]]:
        """Summary rows (:meth:`ldpnum.mechanisms.Mechanism.describe_rows`), one per value column: the mean of
        each coordinate with its confidence interval (mechanisms that estimate vector means), or the mean and
        quartiles of each column's marginal (joint estimates such as HDG's). Rows are labelled by ``names``
        (the value columns), else ``column[j]`` / the estimate's column names."""
        nan = float("nan")
        rows = []
        if self.offers("estimate_mean"):
            mean = self.estimate_mean(agg)  # type: ignore[attr-defined]
            for j, coord in enumerate(mean.coordinates().values()):
                lo, hi = coord.confidence_interval(level)
                rows.append((names[j] if names is not None else f"{column}[{j}]",
                             {"n_reports": coord.n_reports, "mean": coord.value, "std_error": coord.standard_error,
                              "ci_low": lo, "ci_high": hi, "dist_mean": nan, "25%": nan, "50%": nan, "75%": nan}))
            return rows
        est = self._describe_estimate(agg, bootstrap, rng)
        if est is None:
            return Mechanism.describe_rows(self, agg, column=column, names=names, level=level)
        for col in est.columns:
            dist = est.marginal(col)
            q = dist.quantile(QUARTILES)
            rows.append((col, {"mean": nan, "std_error": nan, "ci_low": nan, "ci_high": nan, "dist_mean": dist.mean,
                               **dict(zip(QUARTILE_LABELS, (float(v) for v in q)))}))
        return rows

    @property
    def bounds(self) -> Any:
        """Public range ``(low, high)`` of each coordinate, a tuple of ``dim`` pairs."""
        return self._vector_bounds

    @property
    def dim(self) -> int:
        """Dimension ``d`` of the vectors."""
        return len(self._vector_bounds)

    def _spec_params(self):
        return {"bounds": self._vector_bounds}

    def prepare_values(self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise",
                       fill_value: Any = None, out_of_range: str = "clip") -> FloatArray:
        """Validate an ``(n, dim)`` array of vectors without drawing anything (see :func:`check_vectors`).

        Returns the values as a read-only C-contiguous float64 array of shape ``(n, dim)``.
        """
        return prepared(check_vectors, x, self._lows, self._highs, name=name, nan_policy=nan_policy,
                        fill_value=fill_value, out_of_range=out_of_range)

    def privatize(self, x: ArrayLike, *, rng: SeedLike = None, nan_policy: str = "raise",
                  fill_value: Any = None, out_of_range: str = "clip") -> Reports:
        """Randomize each person's vector; return their :class:`~ldpnum.Reports` (one row per person).

        Parameters
        ----------
        x : array_like of real numbers, shape (n, dim)
            One vector per person: a 2-D array, or a DataFrame of ``dim`` numeric columns (nullable dtypes
            included).
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness. Anything else: a reproducible simulation.
        nan_policy : {"raise", "impute"}, optional
            Non-finite values raise (default), or are replaced by ``fill_value``.
        fill_value : float or sequence of float, optional
            Public replacement (one per coordinate, or one for all) with ``nan_policy="impute"``.
        out_of_range : {"clip", "raise"}, optional
            Finite values outside their coordinate's bounds are clipped with a ``ClippingWarning``
            (default), or raise.

        Notes
        -----
        Each call on one person's vector is ε-LDP; estimators are post-processing. The whole batch is
        validated before the first random word is drawn.
        """
        values = self.prepare_values(x, nan_policy=nan_policy, fill_value=fill_value, out_of_range=out_of_range)
        return self._randomize(values, rng)


def check_names(names: Any, dim: int) -> tuple[str, ...] | None:
    """Coordinate names for a result: None, or ``dim`` names (a DataFrame's columns, a list of str)."""
    if names is None:
        return None
    if isinstance(names, (str, bytes)) or not hasattr(names, "__len__"):
        raise TypeError(f"names must be a sequence of {dim} coordinate names; got {type(names).__name__}")
    out = tuple(str(n) for n in names)
    if len(out) != dim:
        raise ValueError(f"names must give one name per coordinate ({dim}); got {len(out)}")
    return out


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)

