r"""Accuracy metrics for distribution estimates: Wasserstein, Kolmogorov–Smirnov, range and quantile errors.

Each argument ``p``, ``q`` is a :class:`~ldpnum.DistributionEstimate` (its piecewise-linear CDF, see
its docstring) or raw samples (a 1-D array of values, one per person; their empirical CDF
:math:`F_n(x) = \#\{v_k \le x\} / n`). All metrics live on a public domain :math:`[lo, hi]`, taken from
the estimate(s) or, for two raw samples, from ``bounds``. Raw samples must lie inside the domain: clip
them to the bounds first, as the mechanisms do.

Definitions (seed ``002_bf216fff5ae8aeb1.txt``: the Wasserstein and KS distances "on the CDF over the
domain"):

.. math::

    W_1(p, q) = \frac{1}{hi - lo} \int_{lo}^{hi} |F_p(x) - F_q(x)|\,dx, \qquad
    KS(p, q) = \sup_x |F_p(x) - F_q(x)|.

:math:`W_1` is divided by the width of the domain, so it is the Wasserstein distance of the data
rescaled to the unit domain [0, 1]: it lies in [0, 1] whatever the units, and for two raw samples it
equals ``scipy.stats.wasserstein_distance(a, b) / (hi - lo)``; KS then equals
``scipy.stats.ks_2samp(a, b).statistic``. Both are computed exactly, not on a grid: the CDFs are
piecewise linear (estimates) or piecewise constant (samples) between the merged breakpoints (bin
edges and sample values), so the integral is a sum of exact integrals of :math:`|\text{linear}|`
over each piece (splitting a piece where the difference changes sign), and the supremum is attained
at a breakpoint or as a limit at one.

The **bucketised** variants (``n_bins=`` or :func:`wasserstein_binned` / :func:`ks_binned`) are the
accuracy measure of Li et al.'s experiments: with the domain split into ``n_bins`` equal buckets with right
edges :math:`r_1 < \dots < r_{n} = hi`,

.. math::

    W_1^{bin}(p, q) = \frac{1}{n}\sum_{j=1}^{n} |F_p(r_j) - F_q(r_j)|, \qquad
    KS^{bin}(p, q) = \max_j |F_p(r_j) - F_q(r_j)|,

where for raw samples :math:`F(r_j)` is the cumulative histogram: the fraction of the values in buckets
``1..j`` (buckets closed on the left, the last one closed on both sides, as :func:`numpy.histogram`).
Li et al. (SIGMOD 2020) write :math:`W_1` as the sum over buckets; the mean used here is that sum divided
by ``n``.

Relation between the two. Let :math:`H` be the histogram of the samples on the buckets, read as a
piecewise-uniform estimate. (i) When every bin edge of ``p`` is a bucket edge and :math:`F_p - F_H`
does not change sign inside a bucket, :math:`W_1^{bin}(p, \text{samples}) = W_1(p, H)` exactly (the
trapezoidal rule is exact for a linear integrand and the end terms are 0); a sign change inside a
bucket only makes :math:`W_1(p, H)` smaller. (ii) Within a bucket the empirical CDF and :math:`F_H` both
run monotonically between the same two values, so :math:`|W_1(p, H) - W_1(p, \text{samples})| \le
1/(2n)`. Likewise :math:`KS^{bin} \le KS`. The bucketised figures are what the issue's accuracy targets
use; the exact ones do not depend on a bucket choice.

Examples
--------
>>> import numpy as np
>>> from ldpnum import DistributionEstimate, metrics
>>> uniform = DistributionEstimate(np.linspace(0, 10, 3), [0.5, 0.5])
>>> skewed = DistributionEstimate(np.linspace(0, 10, 3), [0.8, 0.2])
>>> round(metrics.wasserstein(uniform, skewed), 12)   # |F_p - F_q| is a tent of height 0.3 on [0, 10]
0.15
>>> round(metrics.ks(uniform, skewed), 12)
0.3
>>> metrics.wasserstein([1.0, 2.0], [1.0, 4.0], bounds=(0, 10))   # = wasserstein_distance / 10
0.1
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Union

import numpy as np

from .reports import Reports
from .aggregate import Aggregate
from ._checks import at as _at
from ._checks import real_array as _real_array
from ._checks import where as _where
from ._results import DistributionEstimate
from ._typing import ArrayLike, Bounds, SeedLike
from ._validation import check_bounds, check_scalar

if TYPE_CHECKING:
    from .ranges import RangeEstimate

#: What the metrics compare: an estimate, or raw samples (one value per person).
DistributionLike = Union[DistributionEstimate, ArrayLike]

__all__ = ["wasserstein", "ks", "wasserstein_binned", "ks_binned", "range_query_error", "quantile_error"]

#: Estimates whose bounds differ by less than this fraction of the domain width share one domain.
_BOUNDS_RTOL = 1e-9


# -- validation ----------------------------------------------------------------------------------------------

def _operand(x, name):
    """A DistributionEstimate as is, or raw samples as a validated 1-D float64 array (unsorted)."""
    if isinstance(x, DistributionEstimate):
        return x
    if isinstance(x, (Reports, Aggregate)):
        raise TypeError(f"{name} must be a DistributionEstimate or raw values; got {type(x).__name__} "
                        "(estimate a distribution from the reports first)")
    try:
        arr = _real_array(x, name)
    except TypeError:
        dtype = f" with dtype {x.dtype}" if hasattr(x, "dtype") else ""
        raise TypeError(f"{name} must be a DistributionEstimate or a 1-D array of real values; "
                        f"got {type(x).__name__}{dtype}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per person); got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: raw samples need at least one value")
    if not np.all(np.isfinite(arr)):
        count, first = _where(~np.isfinite(arr))
        raise ValueError(f"{name} must be finite; {count} value(s) are NaN or infinite, first at index "
                         f"{first} ({_at(arr, first)!r})")
    return arr


def _check_inside(arr, name, lo, hi):
    outside = (arr < lo) | (arr > hi)
    if np.any(outside):
        count, first = _where(outside)
        raise ValueError(f"{name} has {count} value(s) outside the domain ({lo!r}, {hi!r}), first at index "
                         f"{first} ({_at(arr, first)!r}); clip them to the bounds (as the mechanisms do) "
                         "first")


def _domain(operands, bounds):
    """The common domain ``(lo, hi)`` of named operands, checking estimates and samples against it."""
    estimates = [(name, op.bounds) for name, op in operands if isinstance(op, DistributionEstimate)]
    if bounds is not None:
        lo, hi = check_bounds(bounds)
        source = f"bounds=({lo!r}, {hi!r})"
    elif estimates:
        name, (lo, hi) = estimates[0]
        source = f"{name}'s domain ({lo!r}, {hi!r})"
    else:
        raise ValueError("bounds is required when both arguments are raw samples: pass the public domain "
                         "bounds=(low, high) the values were collected on")
    tol = _BOUNDS_RTOL * (hi - lo)
    for name, (a, b) in estimates:
        if abs(a - lo) > tol or abs(b - hi) > tol:
            raise ValueError(f"mismatched bounds: {name} is an estimate on ({a!r}, {b!r}) but {source}; "
                             "compare distributions on one domain")
    for name, op in operands:
        if not isinstance(op, DistributionEstimate):
            _check_inside(op, name, lo, hi)
    return lo, hi


def _prepare(p, q, bounds):
    ops = [("p", _operand(p, "p")), ("q", _operand(q, "q"))]
    lo, hi = _domain(ops, bounds)
    p, q = (op if isinstance(op, DistributionEstimate) else np.sort(op) for _, op in ops)
    return p, q, lo, hi


def _check_n_bins(n_bins):
    return check_scalar(n_bins, "n_bins", int, low=1)


def _estimate(est, name="est"):
    if not isinstance(est, DistributionEstimate):
        raise TypeError(f"{name} must be a DistributionEstimate; got {type(est).__name__}")
    return est


# -- the CDF differences -------------------------------------------------------------------------------------

def _pieces(op, knots):
    """CDF at the left end of each piece ``[t_k, t_k+1)`` and its left limit at the right end."""
    if isinstance(op, DistributionEstimate):
        v = np.interp(knots, op.bin_edges, op._cum)
        return v[:-1], v[1:]
    n = op.size  # sorted samples; every sample is a knot, so the step CDF is constant on each piece
    return (np.searchsorted(op, knots[:-1], side="right") / n,
            np.searchsorted(op, knots[1:], side="left") / n)


def _exact_differences(p, q, lo, hi):
    """Breakpoints, and F_p - F_q at the start of each piece and as a limit at its end."""
    parts = [np.array([lo, hi])]
    parts += [op.bin_edges if isinstance(op, DistributionEstimate) else op for op in (p, q)]
    # Sorted runs merge in about linear time with the stable sort. Repeated knots make pieces of length
    # 0: they add nothing to the integral, and their end values are left limits, which the sup includes.
    knots = np.sort(np.concatenate(parts), kind="stable")
    (p0, p1), (q0, q1) = _pieces(p, knots), _pieces(q, knots)
    return knots, p0 - q0, p1 - q1


def _binned_cdf(op, right_edges):
    if isinstance(op, DistributionEstimate):
        f = np.interp(right_edges, op.bin_edges, op._cum)
    else:  # cumulative histogram: values < r_j (buckets are closed on the left)
        f = np.searchsorted(op, right_edges, side="left") / op.size
    f[-1] = 1.0  # the last bucket is closed: everything in the domain is at or below hi
    return f


def _binned_differences(p, q, lo, hi, n_bins):
    right_edges = np.linspace(lo, hi, n_bins + 1)[1:]
    return _binned_cdf(p, right_edges) - _binned_cdf(q, right_edges)


# -- public metrics ------------------------------------------------------------------------------------------

def wasserstein(p: DistributionLike, q: DistributionLike, *, bounds: Bounds | None = None,
                n_bins: int | None = None) -> float:
    r"""Wasserstein-1 distance between two distributions on the unit-domain scale.

    .. math::

        W_1(p, q) = \frac{1}{hi - lo} \int_{lo}^{hi} |F_p(x) - F_q(x)|\,dx

    computed exactly (see the module docstring); with ``n_bins``, the bucketised mean
    :math:`\frac{1}{n}\sum_j |F_p(r_j) - F_q(r_j)|` over ``n_bins`` equal buckets instead.

    Parameters
    ----------
    p, q : DistributionEstimate or array_like of float
        Estimates, or raw samples (1-D, finite, inside the domain).
    bounds : (float, float), optional
        The domain ``(lo, hi)``. Required when both ``p`` and ``q`` are raw samples; otherwise taken
        from the estimate(s), and if given must agree with them.
    n_bins : int, optional
        Use the bucketised definition on this many equal buckets (see :func:`wasserstein_binned`).

    Returns
    -------
    float
        In [0, 1]. For two raw samples, ``scipy.stats.wasserstein_distance(p, q) / (hi - lo)``.

    Raises
    ------
    TypeError
        If an argument is neither a DistributionEstimate nor numeric values.
    ValueError
        For empty, non-finite, 2-D or out-of-domain samples, missing bounds for two samples, or
        estimates on different domains.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum import DistributionEstimate, metrics
    >>> est = DistributionEstimate([0, 1, 2], [0.5, 0.5])      # uniform on [0, 2]
    >>> round(metrics.wasserstein(est, [1.0]), 12)           # a point mass in the middle
    0.25
    """
    p, q, lo, hi = _prepare(p, q, bounds)
    if n_bins is not None:
        return float(np.mean(np.abs(_binned_differences(p, q, lo, hi, _check_n_bins(n_bins)))))
    knots, a, b = _exact_differences(p, q, lo, hi)
    abs_a, abs_b = np.abs(a), np.abs(b)
    same_sign = a * b >= 0
    # The difference is linear from a to b on each piece: the integral of its absolute value is the
    # trapezoid when it keeps its sign, else two triangles meeting at the zero crossing.
    crossing = (a * a + b * b) / (2.0 * np.where(same_sign, 1.0, abs_a + abs_b))
    per_unit = np.where(same_sign, 0.5 * (abs_a + abs_b), crossing)
    return float(np.sum(np.diff(knots) * per_unit) / (hi - lo))


def ks(p: DistributionLike, q: DistributionLike, *, bounds: Bounds | None = None,
       n_bins: int | None = None) -> float:
    r"""Kolmogorov–Smirnov distance :math:`\sup_x |F_p(x) - F_q(x)|` between two distributions.

    Exact (the supremum over the domain, including limits at jumps of an empirical CDF); with
    ``n_bins``, the maximum over the right edges of ``n_bins`` equal buckets instead
    (see :func:`ks_binned`). Parameters, errors and the domain rules are those of :func:`wasserstein`.

    Returns
    -------
    float
        In [0, 1]. For two raw samples, ``scipy.stats.ks_2samp(p, q).statistic``.

    Examples
    --------
    >>> from ldpnum import DistributionEstimate, metrics
    >>> est = DistributionEstimate([0, 1, 2], [0.5, 0.5])
    >>> metrics.ks(est, [1.0])
    0.5
    """
    p, q, lo, hi = _prepare(p, q, bounds)
    if n_bins is not None:
        return float(np.max(np.abs(_binned_differences(p, q, lo, hi, _check_n_bins(n_bins)))))
    _, a, b = _exact_differences(p, q, lo, hi)
    return float(max(np.max(np.abs(a)), np.max(np.abs(b))))


def wasserstein_binned(est: DistributionEstimate, values: ArrayLike, n_bins: int, *,
                       bounds: Bounds | None = None) -> float:
    r"""Li et al.'s bucketised Wasserstein distance: mean over ``n_bins`` equal buckets of the CDF gap.

    .. math::

        W_1^{bin} = \frac{1}{n}\sum_{j=1}^{n} |\hat F(r_j) - F_{emp}(r_j)|,

    :math:`r_j` the right edge of bucket ``j`` and :math:`F_{emp}(r_j)` the fraction of ``values`` in
    buckets ``1..j`` (the cumulative empirical histogram of the values on the same buckets). This is the
    accuracy measure of the bucketised comparisons (the mean over, e.g., 1024 buckets of
    :math:`|\hat F - F|` against the empirical histogram of the same samples); it is
    ``wasserstein(est, values, n_bins=n_bins)``, and the module docstring relates it to the exact
    :func:`wasserstein`. Either argument may be an estimate or raw samples (``bounds`` then as for
    :func:`wasserstein`).

    Examples
    --------
    >>> from ldpnum import DistributionEstimate, metrics
    >>> est = DistributionEstimate([0, 1, 2, 3, 4], [0.25, 0.25, 0.25, 0.25])
    >>> metrics.wasserstein_binned(est, [0.5, 0.5, 2.5, 3.5], 4)   # F_emp = 0.5, 0.5, 0.75, 1
    0.0625
    """
    return wasserstein(est, values, bounds=bounds, n_bins=_check_n_bins(n_bins))


def ks_binned(est: DistributionEstimate, values: ArrayLike, n_bins: int, *,
              bounds: Bounds | None = None) -> float:
    r"""The bucketised KS distance: :math:`\max_j |\hat F(r_j) - F_{emp}(r_j)|` over ``n_bins`` equal buckets.

    The maximum instead of the mean of :func:`wasserstein_binned`; equal to
    ``ks(est, values, n_bins=n_bins)``.

    Examples
    --------
    >>> from ldpnum import DistributionEstimate, metrics
    >>> est = DistributionEstimate([0, 1, 2, 3, 4], [0.25, 0.25, 0.25, 0.25])
    >>> metrics.ks_binned(est, [0.5, 0.5, 2.5, 3.5], 4)
    0.25
    """
    return ks(est, values, bounds=bounds, n_bins=_check_n_bins(n_bins))


def range_query_error(est: "DistributionEstimate | RangeEstimate", values: ArrayLike,
                      queries: ArrayLike | None = None, *, width: float = 0.1, n_queries: int = 1000,
                      rng: SeedLike = 0) -> float:
    r"""Mean absolute error of range queries: estimated vs true fraction of the values in ``[a, b]``.

    .. math::

        \text{MAE} = \frac{1}{k}\sum_{l=1}^{k} \left|\hat F(b_l) - \hat F(a_l)
        - \frac{\#\{v : a_l \le v \le b_l\}}{n}\right|

    Parameters
    ----------
    est : DistributionEstimate
        The estimate; its bounds are the domain.
    values : array_like of float
        The true values (1-D, finite, inside the domain).
    queries : array_like of float, shape (k, 2), optional
        Explicit ranges ``[a, b]`` (``a <= b``, in the units of the data). When given, ``width``,
        ``n_queries`` and ``rng`` are not used.
    width : float, default 0.1
        Length of the random ranges as a fraction of the domain width, in (0, 1].
    n_queries : int, default 1000
        Number of random ranges.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default 0
        Source of the random range starts, uniform on ``[lo, hi - width·(hi - lo)]`` (SPEC 7,
        :func:`numpy.random.default_rng`). The fixed default makes different estimates face the same
        queries.

    Returns
    -------
    float
        The MAE, in units of probability mass (fractions of the population).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum import DistributionEstimate, metrics
    >>> est = DistributionEstimate([0, 1, 2], [0.5, 0.5])
    >>> metrics.range_query_error(est, [0.25, 0.75, 1.5, 1.5], queries=[[0, 1], [0, 0.5]])  # errors 0, 0
    0.0
    """
    est = _estimate(est)
    lo, hi = est.bounds
    values = _operand(values, "values")
    _check_inside(values, "values", lo, hi)
    values = np.sort(values)
    if queries is None:
        width = check_scalar(width, "width", float, low=0, high=1, include_boundaries="right")
        n_queries = check_scalar(n_queries, "n_queries", int, low=1)
        if isinstance(rng, (bool, np.bool_)):
            raise TypeError("rng must be None, an int seed, a numpy SeedSequence or a numpy Generator; "
                            "got a bool")
        span = float(width) * (hi - lo)
        a = lo + np.random.default_rng(rng).random(int(n_queries)) * (hi - lo - span)
        b = np.minimum(a + span, hi)
    else:
        qa = _real_array(queries, "queries")
        if qa.ndim != 2 or qa.shape[1] != 2 or qa.shape[0] == 0:
            raise ValueError("queries must have shape (k, 2) with k >= 1, one row [a, b] per range; "
                             f"got shape {qa.shape}")
        if not np.all(np.isfinite(qa)):
            count, first = _where(~np.all(np.isfinite(qa), axis=1))
            raise ValueError(f"queries must be finite; {count} row(s) are not, first at row {first}")
        a, b = qa[:, 0], qa[:, 1]
        if np.any(a > b):
            count, first = _where(a > b)
            raise ValueError(f"queries need a <= b; {count} row(s) have a > b, first at row {first} "
                             f"({_at(a, first)!r}, {_at(b, first)!r})")
    true = (np.searchsorted(values, b, side="right") - np.searchsorted(values, a, side="left")) / values.size
    return float(np.mean(np.abs(est.range(a, b) - true)))


def quantile_error(est: "DistributionEstimate | RangeEstimate", values: ArrayLike,
                   qs: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 0.9)) -> float:
    r"""Mean absolute error of quantiles, on the unit-domain scale.

    .. math::

        \frac{1}{|qs|} \sum_{q \in qs} \frac{|\hat Q(q) - Q_{emp}(q)|}{hi - lo}

    with :math:`\hat Q` = ``est.quantile`` and :math:`Q_{emp}` = ``numpy.quantile(values, q)`` (its
    default, linear-interpolation definition). Dividing by the domain width makes the error a fraction
    of the domain, comparable across data sets and with :func:`wasserstein`.

    Parameters
    ----------
    est : DistributionEstimate
        The estimate; its bounds are the domain.
    values : array_like of float
        The true values (1-D, finite, inside the domain).
    qs : float or array_like of float, default (0.1, 0.25, 0.5, 0.75, 0.9)
        Probabilities in [0, 1].

    Returns
    -------
    float

    Examples
    --------
    >>> from ldpnum import DistributionEstimate, metrics
    >>> est = DistributionEstimate([0, 5, 10], [0.5, 0.5])
    >>> metrics.quantile_error(est, [1.0, 5.0, 9.0], qs=[0.5])   # 5 vs 5
    0.0
    """
    est = _estimate(est)
    lo, hi = est.bounds
    samples = _operand(values, "values")
    _check_inside(samples, "values", lo, hi)
    qa = np.atleast_1d(_real_array(qs, "qs"))
    if qa.ndim != 1 or qa.size == 0:
        raise ValueError("qs must be a non-empty one-dimensional array of probabilities; "
                         f"got shape {qa.shape}")
    estimated = est.quantile(qa)  # validates qs in [0, 1]
    return float(np.mean(np.abs(estimated - np.quantile(samples, qa))) / (hi - lo))
