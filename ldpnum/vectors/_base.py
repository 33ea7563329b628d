"""What every vector mechanism shares: the base class, report checks and column codes.

The validation of public per-coordinate bounds and of ``(n, d)`` inputs lives with all validation, in
:mod:`ldpnum._validation`.
"""

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import QUARTILE_LABELS, QUARTILES, Mechanism
from .._typing import ArrayLike, FloatArray, SeedLike
from ..reports import Reports, check_integer_codes
from .._validation import MAX_DIM, check_epsilon, check_vector_bounds, check_vectors, prepared

__all__ = ["VectorMechanism", "IMPLAUSIBLE", "column_words", "check_report_variance", "MAX_DIM"]

#: Vector aggregates whose counts have no exact relation to their number of reports (DuchiMultivariate's
#: sign counts, PrivUnitG's sums of squares) are checked statistically: an aggregate is refused when counts as
#: far out as its own have probability below this under the mechanism, whatever the inputs (a legitimate
#: aggregate is refused at most once in 10^12).
IMPLAUSIBLE = 1e-12


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


def column_words(codes: ArrayLike, what: str) -> np.ndarray:
    """The codes of a table column as a 1-D uint64 array, after checking they are non-negative integers."""
    return check_integer_codes(codes, f"{what} column codes").astype(np.uint64)


class _OffersEstimators:
    """An ``estimate_*`` method a vector mechanism does not have raises an AttributeError saying what it does answer.

    What its reports answer is :meth:`ldpnum.Mechanism.offers`, instead of Python's bare "no attribute".
    """

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
                      bootstrap: int | None = None, rng: SeedLike = None,
                      method: str = "unbiased") -> list[tuple[Any, dict]]:
        """Summary rows (:meth:`ldpnum.mechanisms.Mechanism.describe_rows`), one per value column.

        The mean of each coordinate with its confidence interval (mechanisms that estimate vector means), or the mean
        and quartiles of each column's marginal (joint estimates such as HDG's). Rows are labelled by ``names`` (the
        value columns), else ``column[j]`` / the estimate's column names.
        """
        from ..estimation.likelihood import check_method

        check_method(method, self.estimate_methods("estimate_mean") or ("unbiased",), mechanism=self.spec.mechanism)
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

