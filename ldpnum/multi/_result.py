r"""The results of several attributes at once: MultiRangeEstimate and MarginalsEstimate.

MultiRangeEstimate holds HDG's grids, marginals and response matrices, and the range queries they answer;
MarginalsEstimate holds Marginals' k-way tables and the marginals inside them.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._checks import check_provenance, normal_quantile, read_only
from ..accounting import ShuffleAmplification
from .._results import DistributionEstimate, EstimateInterval, PrivacyProvenance, bootstrap_interval
from ..estimation.joint import max_entropy
from ..estimation.tables import max_inconsistency, project
from ..exceptions import BootstrapBiasWarning, NoisyRangesWarning
from ..spec import Spec

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["GridGeometry", "GridQueries", "MultiRangeEstimate", "MarginalsEstimate", "NoisyRangesWarning", "NOISE_WARNING_SE"]

#: What an estimate outside its own bootstrap interval means for grids and tables of cells.
GRID_BIAS = ("the post-processing (non-negativity, consistency, shrinkage) is biased there by more than the noise; "
             "the interval is widened by twice the replicates' shift (table_interval)")
def table_interval(point: Any, reps: Any, level: float, what: str) -> tuple:
    r"""The bootstrap interval of an answer of grids or tables of cells: percentile and basic, whichever is wider.

    With :math:`q_\mp` the replicates' percentile ends (:func:`ldpnum._results.bootstrap_interval`),
    :math:`[\min(q_-, 2\hat\theta - q_+),\ \max(q_+, 2\hat\theta - q_-)] \cap [0, 1]`: the percentile
    interval widened on one side by twice the replicates' shift from the estimate, the bootstrap's estimate of
    the post-processing's bias. Non-negativity and consistency bias near-empty cells upwards, the same way in
    the replicates as in the estimate, so the percentile interval alone sits twice that bias away from the truth:
    a range summing many near-empty cells (the flights' distance above 2,500 miles at ε = 4, 16 of 32 cells)
    covered 0.83 of nominal 95% (``bench/bands_multi.py``); the basic interval undoes that shift, the percentile
    one stays right where the replicates do not reproduce the bias, and the hull is right in both.
    """
    low, high = bootstrap_interval(point, reps, level, what=what, warning=BootstrapBiasWarning, reason=GRID_BIAS)
    return (np.clip(np.minimum(low, 2 * np.asarray(point) - high), 0.0, 1.0),
            np.clip(np.maximum(high, 2 * np.asarray(point) - low), 0.0, 1.0))


#: :class:`NoisyRangesWarning` is raised when a range over half of a grid's cells has a standard error above this.
NOISE_WARNING_SE = 0.2


def _cell_weights(tl, th, cells):
    """``(queries, cells)``: the fraction of each cell inside each query (positions in cell units)."""
    u = np.arange(cells)
    tl, th = np.atleast_1d(tl).ravel(), np.atleast_1d(th).ravel()
    return np.clip(np.minimum(th[:, None], u + 1.0) - np.maximum(tl[:, None], u), 0.0, 1.0)


def _cumulative_1d(p):
    return np.concatenate(([0.0], np.cumsum(p)))


def _prefix_2d(T):
    S = np.zeros((T.shape[0] + 1, T.shape[1] + 1))
    S[1:, 1:] = T.cumsum(axis=0).cumsum(axis=1)
    return S


def _bilinear(S, tx, ty):
    """The prefix table ``S`` (shape ``(gx+1, gy+1)``) at fractional cell positions ``tx, ty``.

    Exact for a density uniform within each cell.
    """
    gx, gy = S.shape[0] - 1, S.shape[1] - 1
    i = np.minimum(np.floor(tx).astype(np.intp), gx - 1)
    j = np.minimum(np.floor(ty).astype(np.intp), gy - 1)
    fx, fy = tx - i, ty - j
    return ((1 - fx) * (1 - fy) * S[i, j] + fx * (1 - fy) * S[i + 1, j] + (1 - fx) * fy * S[i, j + 1]
            + fx * fy * S[i + 1, j + 1])


class GridQueries:
    """HDG's grids as range queries see them: the columns, their bounds and the granularities ``(g1, g2)``.

    Shared by :class:`MultiRangeEstimate` and by the mechanism (:class:`GridGeometry`), so whether a range
    query lies on the grids' cell edges is known from the spec alone, before any report is read.
    """

    if TYPE_CHECKING:
        columns: tuple
        bounds: tuple
        granularities: tuple

    def _cells_1d(self, c: int) -> int:
        """The cells of column ``c``'s 1-D grid."""
        return int(self.granularities[0])

    def _index(self, column):
        try:
            return self.columns.index(str(column)) if isinstance(column, str) else self.columns.index(column)
        except ValueError:
            raise ValueError(f"unknown column {column!r}; this estimate has {list(self.columns)}") from None

    def _positions(self, column, lo, hi, cells):
        """``lo``/``hi`` of ``column`` as fractional cell positions in ``[0, cells]`` (validated)."""
        c = self._index(column)
        low, high = self.bounds[c]
        try:
            lo_a = np.asarray(lo, dtype=np.float64)
            hi_a = np.asarray(hi, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"range: lo and hi of column {column!r} must be real numbers or arrays of them") from None
        lo_b, hi_b = np.broadcast_arrays(lo_a, hi_a)
        bad = np.isnan(lo_b) | np.isnan(hi_b)
        if bad.any():
            raise ValueError(f"range: column {column!r} has {int(bad.sum())} NaN bound(s), first at query "
                             f"{int(np.flatnonzero(bad.ravel())[0])}")
        bad = lo_b > hi_b
        if bad.any():
            first = int(np.flatnonzero(bad.ravel())[0])
            raise ValueError(f"range: {int(bad.sum())} range(s) of column {column!r} have lo > hi, first at query "
                             f"{first} ([{float(lo_b.ravel()[first])!r}, {float(hi_b.ravel()[first])!r}])")
        scale = cells / (high - low)  # ends outside the bounds (±inf too) are clipped to them
        return (np.clip((np.clip(lo_b, low, high) - low) * scale, 0, cells),
                np.clip((np.clip(hi_b, low, high) - low) * scale, 0, cells))

    def _items(self, query):
        """The validated ``(column, lo, hi)`` of a query."""
        if not isinstance(query, Mapping):
            raise TypeError(f"range: query must be a dict {{column: (lo, hi)}} of one or two columns; got "
                            f"{type(query).__name__}")
        if not 1 <= len(query) <= 2:
            raise ValueError(f"range: HDG answers queries on one or two columns; got {len(query)} "
                             f"({list(query)})")
        items = []
        for col, rng in query.items():
            self._index(col)
            if isinstance(rng, (str, bytes)) or not hasattr(rng, "__len__") or len(rng) != 2:
                raise TypeError(f"range: the range of column {col!r} must be a pair (lo, hi); got {rng!r}")
            items.append((col, rng[0], rng[1]))
        return items

    def _grid_of(self, query):
        """``[(column, lo, hi, cells)]`` of a query, ``cells`` the size of the grid answering it along the column.

        A 1-D query is answered on the column's 1-D grid (``g1`` cells), a 2-D one on the pair's 2-D grid
        (``g2`` a side): the cells whose masses the reports pin down without a within-cell model.
        """
        items = self._items(query)
        if len(items) == 1:
            return [items[0] + (self._cells_1d(self._index(items[0][0])),)]
        g2 = int(self.granularities[1])
        return [it + (g2,) for it in items]

    def _refuse_cut(self, query):
        """Raise ValueError when a query cuts a cell of the grid answering it (bootstrap intervals refused there).

        Every end must lie on a cell edge (ends outside the bounds are clipped to them, which are edges).
        """
        parts = self._grid_of(query)
        pos = np.broadcast_arrays(*(t for col, lo, hi, cells in parts for t in self._positions(col, lo, hi, cells)))
        cut = np.zeros(pos[0].shape, dtype=bool)
        for t in pos:
            cut |= np.abs(t - np.round(t)) > 1e-9
        if not cut.any():
            return
        first = int(np.argmax(cut.ravel()))
        edges, wider = [], {}
        for i, (col, lo, hi, cells) in enumerate(parts):
            e = self.edges(col, cells)
            tl, th = (np.ravel(x)[first] for x in (pos[2 * i], pos[2 * i + 1]))
            edges.append(f"{col!r}: {', '.join(f'{v:g}' for v in e)}")
            wider[col] = (float(e[int(np.floor(tl + 1e-9))]), float(e[int(np.ceil(th - 1e-9))]))
        grid = "1-D grid" if len(parts) == 1 else f"2-D grid ({parts[0][3]} x {parts[0][3]} cells)"
        raise ValueError(
            f"range(ci=): {int(cut.sum())} of {cut.size} queries cut cells of the {grid}, first at query {first}; "
            f"the grid's cell edges are {'; '.join(edges)}. The share of a cut cell inside a range comes from the "
            "within-cell model, whose bias the bootstrap does not contain (measured coverage of nominal 95% down "
            "to 0.00 on such ranges). Align the range with the cell edges (the smallest aligned range holding "
            f"query {first}: {wider}), or ask interval='cells' for the conservative interval that holds whatever "
            "the distribution inside the cells, or collect with finer grids (more people or a larger epsilon)")

    def edges(self, column: str, cells: int | None = None) -> np.ndarray:
        """Cell edges of ``column`` at ``cells`` cells (default: its 1-D grid's ``g1``)."""
        c = self._index(column)
        low, high = self.bounds[c]
        return np.linspace(low, high, (self._cells_1d(c) if cells is None else cells) + 1)


@dataclass(frozen=True)
class GridGeometry(GridQueries):
    """The cells of an HDG collection's grids, from its spec: no counts (see :class:`GridQueries`)."""

    columns: tuple
    bounds: tuple
    granularities: tuple


@dataclass(frozen=True, eq=False, repr=False)
class MultiRangeEstimate(GridQueries, PrivacyProvenance):
    r"""Estimated 1-D and 2-D distributions of several columns (HDG), and the range queries they answer.

    Queries. :meth:`range` takes ``{column: (lo, hi)}`` for one or two columns (``lo``/``hi`` scalars or
    arrays, broadcast: many queries at once). A 1-D query is answered from the column's marginal (its 1-D
    grid, ``g1`` cells), a 2-D query from the pair's joint table (the response matrix, ``R g1 × R g1`` cells
    with the default copula start, ``g1 × g1`` with the others, see :func:`ldpnum.estimation.joint.response_matrix`;
    with ``consistency="none"`` the raw 2-D grid, ``g2 × g2``), cells cut by the query counting in proportion
    to the part inside (the density is taken uniform within each table cell): 2-D answers are four bilinear
    lookups in the table's prefix sums. Ranges are closed; **ends outside a column's bounds are clipped to
    them** (±inf too), as :class:`ldpnum.HierarchicalHistogram`'s ranges are: the clients clip their values
    to the public bounds, so all the mass lies inside and ``{"a": (-inf, x)}`` is the marginal CDF at ``x``
    (a range wholly outside the bounds is answered 0). NaN ends and ``lo > hi`` raise ValueError.

    Parameters
    ----------
    columns : tuple of str
    bounds : tuple of (float, float)
        One per column.
    marginals : tuple of arrays
        Each column's 1-D grid frequencies (``g1``).
    joints : tuple of 2-D arrays
        Each pair's joint table (pairs ``(a, b)``, ``a < b`` in column order, lexicographic).
    grids : tuple of arrays
        Every grid after post-processing (1-D grids, then 2-D grids of shape ``(g2, g2)``).
    granularities : (int, int)
    consistency : {"hdg", "paper", "norm-sub", "none"}
    spec, epsilon, n_reports
        Provenance.
    grid_reports : tuple of int
        Reports per grid.
    grid_variances : tuple of float
        Variance of a raw cell estimate of each grid, at frequency 0.
    n_iter : int
        Norm-Sub/consistency rounds.
    converged : bool
        Whether consistency left no negative cell (else the last Norm-Sub leaves a small inconsistency).
    shrinkage : tuple of float
        Each pair's James–Stein weight toward the product of the 1-D grids (1: the 2-D grid kept; 0: the
        product), empty when the grids were not shrunk (``HDG.estimate_ranges(shrink=...)``).
    name : str, optional
        The report column's name (set by the pandas accessor).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.multi import MultiRangeEstimate
    >>> est = MultiRangeEstimate(columns=("a", "b"), bounds=((0, 1), (0, 1)),
    ...                          marginals=(np.array([0.5, 0.5]), np.array([0.5, 0.5])),
    ...                          joints=(np.array([[0.5, 0.0], [0.0, 0.5]]),), granularities=(2, 2))
    >>> est.range({"a": (0, 0.5), "b": (0, 0.5)}), est.range({"b": (0.25, 1)})
    (0.5, 0.75)
    >>> est.range({"a": (0, [0.5, 1.0]), "b": (0, 1)}).tolist()     # many queries at once (broadcast)
    [0.5, 1.0]
    >>> est.range({"a": (0, 2)}), est.range({"a": (-np.inf, 0.5)})   # ends outside the bounds are clipped
    (1.0, 0.5)
    """

    columns: tuple
    bounds: tuple
    marginals: tuple
    joints: tuple
    granularities: tuple
    grids: tuple = ()
    consistency: str = "hdg"
    spec: Spec | None = None
    epsilon: float | None = None
    n_reports: int | None = None
    grid_reports: tuple = ()
    grid_variances: tuple = ()
    n_iter: int = 0
    converged: bool = True
    name: str | None = None
    #: The James–Stein weight of each pair's 2-D grid (:func:`ldpnum.estimation.joint.shrink_to_independence`; 1:
    #: kept, 0: the 1-D grids' product); empty when the grids were not shrunk.
    shrinkage: tuple = ()
    #: How the joint tables place mass inside the 2-D grid's cells (``HDG.estimate_ranges(within_cell=)``):
    #: "copula", "interpolated" or "uniform" (the raw grids of ``consistency="none"``).
    within_cell: str = "uniform"
    #: Each pair's Gaussian copula correlation (:func:`ldpnum.estimation.joint.fit_copula_correlation`) with
    #: ``within_cell="copula"``; else empty.
    copula_correlations: tuple = ()
    #: The plug-in variance of every raw grid cell (:meth:`ldpnum.HDG.cell_variances`; the shapes of
    #: :attr:`grids`), from which :meth:`standard_error` is computed; empty when not known.
    cell_variances: tuple = ()
    #: The central ε of a shuffled collection (:meth:`ldpnum.Aggregate.shuffled`), None when the reports were
    #: not declared shuffled; shown next to the local ε (:attr:`privacy`). Provenance only.
    shuffle: "ShuffleAmplification | None" = field(default=None, compare=False)
    #: Bootstrap replicates (MultiRangeEstimates refitted on simulated aggregates, ``HDG.estimate_ranges(...,
    #: bootstrap=B)``), None when not bootstrapped; ``range(query, ci=)`` and ``joint(a, b, grid=True, ci=)``
    #: read them.
    replicates: tuple | None = field(default=None, compare=False)
    _cum: tuple = field(default=(), init=False, repr=False)
    _prefix: tuple = field(default=(), init=False, repr=False)

    def __post_init__(self):
        set_ = object.__setattr__
        cols = tuple(str(c) for c in self.columns)
        d = len(cols)
        if d < 2 or len(set(cols)) != d:
            raise ValueError(f"columns must be at least 2 distinct names; got {self.columns!r}")
        if len(self.bounds) != d or len(self.marginals) != d or len(self.joints) != d * (d - 1) // 2:
            raise ValueError(f"{d} columns need {d} bounds, {d} marginals and {d * (d - 1) // 2} joint tables")
        set_(self, "columns", cols)
        set_(self, "bounds", tuple((float(lo), float(hi)) for lo, hi in self.bounds))
        marg = tuple(read_only(np.asarray(m).ravel()) for m in self.marginals)
        joints = tuple(read_only(j) for j in self.joints)
        if any(j.ndim != 2 for j in joints):
            raise ValueError("joint tables must be two-dimensional")
        set_(self, "marginals", marg)
        set_(self, "joints", joints)
        set_(self, "grids", tuple(read_only(g) for g in self.grids))
        set_(self, "cell_variances", tuple(read_only(v) for v in self.cell_variances))
        if self.cell_variances and (len(self.cell_variances) != d + d * (d - 1) // 2 or not all(
                np.isfinite(v).all() and (v >= 0).all() for v in self.cell_variances)):
            raise ValueError(f"cell_variances must be empty or one array of finite non-negative variances per grid "
                             f"({d + d * (d - 1) // 2} grids)")
        set_(self, "shrinkage", tuple(float(w) for w in self.shrinkage))
        if len(self.shrinkage) not in (0, d * (d - 1) // 2) or not all(0 <= w <= 1 for w in self.shrinkage):
            raise ValueError(f"shrinkage must be empty or one weight in [0, 1] per pair; got {self.shrinkage!r}")
        eps, n = check_provenance(self.spec, self.epsilon, self.n_reports)
        set_(self, "epsilon", eps)
        set_(self, "n_reports", n)
        if self.replicates is not None:
            reps = tuple(self.replicates)
            if len(reps) < 2 or not all(isinstance(r, MultiRangeEstimate) and r.columns == cols
                                        and r.granularities == tuple(self.granularities)
                                        and all(a.shape == b.shape for a, b in zip(r.joints, joints))
                                        for r in reps):
                raise ValueError("replicates must be at least 2 MultiRangeEstimates of the same columns, "
                                 "granularities and joint tables")
            set_(self, "replicates", reps)
        set_(self, "_cum", tuple(_cumulative_1d(m) for m in marg))
        set_(self, "_prefix", tuple(_prefix_2d(j) for j in joints))

    # -- helpers --------------------------------------------------------------------------------------------
    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The pairs of columns of :attr:`joints`, in order."""
        return tuple((self.columns[a], self.columns[b]) for a in range(len(self.columns))
                     for b in range(a + 1, len(self.columns)))

    def _cells_1d(self, c: int) -> int:
        return int(self.marginals[c].size)

    def _pair(self, a, b):
        i, j = self._index(a), self._index(b)
        if i == j:
            raise ValueError(f"a joint needs two different columns; got {a!r} twice")
        lo, hi = min(i, j), max(i, j)
        d = len(self.columns)
        k = lo * d - lo * (lo + 1) // 2 + (hi - lo - 1)
        return k, i > j

    # -- queries --------------------------------------------------------------------------------------------
    def _reps(self):
        if self.replicates is None:
            raise ValueError("this estimate carries no bootstrap replicates: estimate it with "
                             "HDG.estimate_ranges(..., bootstrap=200) for bootstrap intervals")
        return self.replicates

    def range(self, query: Mapping, *, ci: float | None = None, interval: str | None = None) -> Any:
        r"""Estimated fraction of people whose values lie in the given ranges of one or two columns.

        Parameters
        ----------
        query : dict
            ``{column: (lo, hi)}`` for one or two columns; ``lo`` and ``hi`` are numbers or arrays (all
            broadcast together: one answer per query).
        ci : float, optional
            A confidence level in (0, 1): return an :class:`~ldpnum._results.EstimateInterval` ``(estimate, low,
            high)``, a **conservative** interval that holds whatever the distribution inside the grid's
            cells: with ``I`` the grid cells wholly inside the query and ``O`` the cells it touches (the
            column's 1-D grid for a 1-D query, the pair's 2-D grid for a 2-D one; post-processed, so that
            ``I``'s mass <= the estimate <= ``O``'s),

            .. math::

                \Big[\hat F(I) - z\,\mathrm{SE}(I),\ \hat F(O) + z\,\mathrm{SE}(O)\Big] \cap [0, 1],

            ``SE`` the raw cells' closed-form standard error summed over the cells (:meth:`standard_error`'s
            variances; covariances left out). A query aligned with the cells gets ``estimate ± z·SE``; one
            cutting cells also spans the cut cells' whole mass, since no within-cell model is assumed (the
            estimate's own, :func:`ldpnum.estimation.joint.response_matrix`, is a model: measured, ``estimate ±
            z·standard_error`` alone covered 81% of nominal 95% on a cut query at n = 5000, its within-cell
            bias -0.046). Measured coverage (tests/multi/test_hdg.py): at least the nominal level, often more
            (conservative).

            With bootstrap replicates (``HDG.estimate_ranges(..., bootstrap=B)``) the interval is instead the
            **bootstrap interval** of the replicates' answers (:func:`table_interval`: the percentile interval,
            ends at the :math:`(B+1)(1 \mp L)/2`-th order statistics, a level needing more replicates refused,
            widened to hold the basic one): the estimator's spread under the oracles' noise and the sampling of
            people, re-running the whole post-processing (consistency, shrinkage, copula and response matrix).
            **Only for ranges on the cell edges** of the grid answering them (a 1-D range on its column's 1-D
            grid, ``g1`` cells; a 2-D range on the pair's 2-D grid, ``g2`` a side; ends outside the bounds are
            clipped to them, which are edges). A range cutting a cell is refused with a ValueError naming the
            edges and the smallest aligned range holding it: the share of a cut cell inside it comes from the
            within-cell model, whose bias the replicates do not contain. Measured (``python
            bench/bands_multi.py``: n = 20,000, B = 100, nominal 95%, the correlated pair and the flights'
            departure time × distance; ``ci=`` as given, 50 collections, a coverage's binomial SE 0.031; the
            rest 100 collections, SE 0.022; ε = 0.5 was measured before the widening, which can only raise it):

            ============================================  ===========  ==========  ==========
            query kind                                     ε = 0.5      ε = 1       ε = 4
            ============================================  ===========  ==========  ==========
            ``ci=``: ranges on the cells' edges            ≥0.92-0.98   0.94-1.00   0.92-1.00
            ``ci=``: 1-D and 2-D grid cells (mean)         ≥0.95-0.97   0.96-1.00   0.95-0.99
            the percentile interval alone, same ranges     0.92-0.98    0.90-0.98   0.78-0.98
            refused: cut ranges, percentile                0.00-1.00    0.73-0.98   0.28-0.92
            refused: joint table cells, percentile         0.54-0.74    0.47-0.81   0.19-0.89
            ``interval="cells"`` on the cut ranges         1.00         1.00        1.00
            ============================================  ===========  ==========  ==========

            The percentile interval alone fell to 0.78 on a wide range over many near-empty cells (the
            flights' distance [0, 2500] of [0, 5000] at ε = 4, 16 of 32 cells): non-negativity biases
            near-empty cells upwards in the replicates as in the estimate; the widening brought it to 0.94
            (width 0.017 to 0.021; 8-30% wider elsewhere). The conservative ``interval="cells"`` covered every
            cut range (it spans the cut cells' whole mass: 0.12 to 1.0 wide).
        interval : {None, "bootstrap", "cells"}
            Which interval ``ci`` gives: ``"bootstrap"`` (refused with a ValueError when the estimate carries no
            replicates), ``"cells"`` (the conservative closed-form interval above), or None: bootstrap when
            replicates are attached, else cells.

        Returns
        -------
        float or numpy.ndarray, or EstimateInterval with ``ci``
        """
        if interval not in (None, "bootstrap", "cells"):
            raise ValueError(f"range: interval must be None, 'bootstrap' or 'cells'; got {interval!r}")
        point = self._range(query)
        if ci is None:
            if interval is not None:
                raise ValueError("range: interval= chooses the kind of a ci= interval; give ci=level too")
            return point
        if interval == "bootstrap" or (interval is None and self.replicates is not None):
            reps = self._reps()
            self._refuse_cut(query)
            reps = np.stack([np.asarray(r._range(query), dtype=np.float64) for r in reps])
            low, high = table_interval(point, reps, ci, "range")
            if np.ndim(point) == 0:
                return EstimateInterval(point, float(low), float(high))
            return EstimateInterval(point, low, high)
        low, high = self._cell_interval(query, normal_quantile(ci))
        if np.ndim(point) == 0:
            return EstimateInterval(point, float(low), float(high))
        return EstimateInterval(point, low, high)

    def _range(self, query):
        items = self._items(query)
        if len(items) == 1:
            col, lo, hi = items[0]
            c = self._index(col)
            cum = self._cum[c]
            tl, th = self._positions(col, lo, hi, cum.size - 1)
            grid = np.arange(cum.size)
            out = np.interp(th, grid, cum) - np.interp(tl, grid, cum)
        else:
            (ca, la, ha), (cb, lb, hb) = items
            k, swapped = self._pair(ca, cb)
            if swapped:
                (ca, la, ha), (cb, lb, hb) = (cb, lb, hb), (ca, la, ha)
            S = self._prefix[k]
            xl, xh = self._positions(ca, la, ha, S.shape[0] - 1)
            yl, yh = self._positions(cb, lb, hb, S.shape[1] - 1)
            xl, xh, yl, yh = np.broadcast_arrays(xl, xh, yl, yh)
            out = _bilinear(S, xh, yh) - _bilinear(S, xl, yh) - _bilinear(S, xh, yl) + _bilinear(S, xl, yl)
        return float(out) if np.ndim(out) == 0 else out

    def _cell_interval(self, query, z):
        """``(low, high)`` of :meth:`range`'s ``ci``.

        The post-processed grid's inner and outer cell masses widened by ``z`` standard errors, clipped to [0, 1].
        """
        if not self.cell_variances or not self.grids:
            raise ValueError("range(ci=): this estimate carries no grids or cell variances (built without "
                             "HDG.estimate_ranges)")
        items = self._items(query)
        d = len(self.columns)
        eps = 1e-9

        def masks(tl, th, cells):
            w = _cell_weights(tl, th, cells)
            return (w >= 1.0 - eps).astype(np.float64), (w > eps).astype(np.float64)

        if len(items) == 1:
            col, lo, hi = items[0]
            c = self._index(col)
            g, v = np.asarray(self.grids[c], dtype=np.float64), self.cell_variances[c]
            tl, th = self._positions(col, lo, hi, v.size)
            shape = np.shape(tl)
            (i_in, i_out) = masks(tl, th, v.size)
            m_in, m_out, v_in, v_out = i_in @ g, i_out @ g, i_in @ v, i_out @ v
        else:
            (ca, la, ha), (cb, lb, hb) = items
            k, swapped = self._pair(ca, cb)
            if swapped:
                (ca, la, ha), (cb, lb, hb) = (cb, lb, hb), (ca, la, ha)
            G, V = np.asarray(self.grids[d + k], dtype=np.float64), self.cell_variances[d + k]
            xl, xh = self._positions(ca, la, ha, V.shape[0])
            yl, yh = self._positions(cb, lb, hb, V.shape[1])
            xl, xh, yl, yh = np.broadcast_arrays(xl, xh, yl, yh)
            shape = xl.shape
            (x_in, x_out), (y_in, y_out) = masks(xl, xh, V.shape[0]), masks(yl, yh, V.shape[1])
            m_in, m_out = (np.einsum("qu,uv,qv->q", x, G, y) for x, y in ((x_in, y_in), (x_out, y_out)))
            v_in, v_out = (np.einsum("qu,uv,qv->q", x, V, y) for x, y in ((x_in, y_in), (x_out, y_out)))
        low = np.clip(m_in - z * np.sqrt(v_in), 0.0, 1.0).reshape(shape)
        high = np.clip(m_out + z * np.sqrt(v_out), 0.0, 1.0).reshape(shape)
        return low, high

    def standard_error(self, query: Mapping) -> Any:
        r"""Standard error of the answer to ``query``, from the raw grids' closed-form variances.

        ``query`` as for :meth:`range`; arrays broadcast.

        A 1-D query on column ``a`` is read on ``a``'s raw 1-D grid, a 2-D query on the pair's raw 2-D grid:
        with ``w_c`` the fraction of cell ``c`` inside the query and ``v_c`` its plug-in variance
        (:meth:`ldpnum.HDG.cell_variances`: the oracle's variance at the cell's estimated frequency plus the
        sampling of the grid's people),

        .. math::

            \mathrm{SE} = \Big(\sum_c w_c^2 v_c\Big)^{1/2}

        (for a 2-D query ``w_{uv} = x_u y_v``). This is the noise of the unbiased raw-grid answer; the
        covariances between cells, negative for GRR and for the sampling, are left out, so it is on the safe
        side for that answer. The returned answers pool the grids (consistency) and so usually have less
        noise, but they also carry the bias of the within-cell model where a query cuts cells; the standard
        error says how much of an answer is noise (an answer from a handful of reports has a standard error
        of the order of 1), not that the answer is unbiased; ``range(query, ci=level)`` gives an interval that
        also spans the cells a query cuts.

        Raises ValueError when the variances are not known (an estimate built by hand).
        """
        if not self.cell_variances:
            raise ValueError("standard_error: this estimate carries no cell variances (built without "
                             "HDG.estimate_ranges)")
        items = self._items(query)
        d = len(self.columns)
        if len(items) == 1:
            col, lo, hi = items[0]
            c = self._index(col)
            v = self.cell_variances[c]
            tl, th = self._positions(col, lo, hi, v.size)
            var = _cell_weights(tl, th, v.size) ** 2 @ v
            shape = np.shape(tl)
        else:
            (ca, la, ha), (cb, lb, hb) = items
            k, swapped = self._pair(ca, cb)
            if swapped:
                (ca, la, ha), (cb, lb, hb) = (cb, lb, hb), (ca, la, ha)
            V = self.cell_variances[d + k]
            xl, xh = self._positions(ca, la, ha, V.shape[0])
            yl, yh = self._positions(cb, lb, hb, V.shape[1])
            xl, xh, yl, yh = np.broadcast_arrays(xl, xh, yl, yh)
            shape = xl.shape
            wx, wy = _cell_weights(xl, xh, V.shape[0]) ** 2, _cell_weights(yl, yh, V.shape[1]) ** 2
            var = np.einsum("qu,uv,qv->q", wx, V, wy)
        se = np.sqrt(var).reshape(shape)
        return float(se) if se.ndim == 0 else se

    def joint(self, a: str, b: str, *, as_frame: bool = True, grid: bool = False, ci: float | None = None) -> Any:
        """The joint table of columns ``a`` (rows) and ``b`` (columns).

        A pandas DataFrame indexed by intervals, or with ``as_frame=False`` the array and the two edge arrays.
        ``grid=True``: the table on the pair's 2-D grid instead (``g2 x g2`` cells; each cell the answer of
        :meth:`range` to it, the joint table summed over it): the cells whose masses the reports pin down
        without a within-cell model.

        ``ci=level`` (a bootstrapped estimate, ``HDG.estimate_ranges(..., bootstrap=B)``) with ``grid=True``:
        an :class:`~ldpnum._results.EstimateInterval` of three tables (the estimate and its cells' percentile bootstrap
        intervals, frames or arrays), as ``range(cell, ci=level)`` gives for each cell; refused with a
        ValueError without replicates. The finer joint table (``R g1`` a side) gets **no** interval: its cells
        split the 2-D grid's cells by the within-cell model (the copula), whose bias the bootstrap does not
        contain: percentile intervals of its cells covered 0.19-0.74 (flights) and 0.54-0.89 (correlated pair)
        of nominal 95% (``bench/bands_multi.py``, n = 20,000, ε = 0.5-4, B = 100), so ``ci=`` without ``grid=True`` is refused
        with a ValueError, unless the table is the 2-D grid itself (``consistency="none"``). Measured coverage
        of the grid cells' intervals: see :meth:`range`.
        """
        k, swapped = self._pair(a, b)
        T = self.joints[k].T if swapped else self.joints[k]
        g2 = int(self.granularities[1])
        if grid:
            ea, eb = self.edges(a, g2), self.edges(b, g2)
            cell = {a: (ea[:-1, None], ea[1:, None]), b: (eb[None, :-1], eb[None, 1:])}
            T = np.asarray(self._range(cell), dtype=np.float64)
        else:
            ea, eb = self.edges(a, T.shape[0]), self.edges(b, T.shape[1])
        tables = [T]
        if ci is not None:
            reps = self._reps()
            if T.shape != (g2, g2):
                raise ValueError(
                    f"joint(ci=): the joint table's {T.shape[0]} x {T.shape[1]} cells split the 2-D grid's {g2} x "
                    f"{g2} cells by the within-cell model, whose bias the bootstrap does not contain (measured "
                    "coverage of nominal 95%: 0.19-0.89); ask joint(a, b, grid=True, ci=level) for the grid's "
                    "cells, or range(query, ci=level) for ranges aligned with them")
            if grid:
                reps = np.stack([np.asarray(r._range(cell), dtype=np.float64) for r in reps])
            else:
                reps = np.stack([r.joints[k].T if swapped else r.joints[k] for r in reps])
            tables += list(table_interval(T, reps, ci, "joint"))
        if not as_frame:
            return (T, ea, eb) if ci is None else EstimateInterval(*tables)
        import pandas as pd

        frames = [pd.DataFrame(t, index=pd.IntervalIndex.from_breaks(ea, closed="left", name=str(a)),
                               columns=pd.IntervalIndex.from_breaks(eb, closed="left", name=str(b))) for t in tables]
        return frames[0] if ci is None else EstimateInterval(*frames)

    def quantile(self, q: Any, *args: Any, **kwargs: Any) -> Any:
        """Refused with a TypeError: a joint estimate of several columns has no quantiles of its own.

        Ask a column's :meth:`marginal` (``est.marginal(column).quantile(q)``).
        """
        raise TypeError(f"{type(self).__name__} answers ranges of several columns, not quantiles of one; use "
                        "its marginal(column).quantile(q)")

    def marginal(self, column: str, *more: str) -> DistributionEstimate:
        """Column ``column``'s distribution (its 1-D grid) as a :class:`~ldpnum.DistributionEstimate`.

        Raises ValueError for ``consistency="none"`` (raw frequencies may be negative). Two or more columns
        (``marginal("a", "b")``) raise a TypeError pointing to :meth:`joint`, the pair's table (a
        DistributionEstimate is one column's).
        """
        if more:
            cols = (column,) + more
            hint = (f"est.joint({cols[0]!r}, {cols[1]!r}) for the pair's joint table, or "
                    if len(cols) == 2 else "")
            raise TypeError(f"marginal takes one column and returns its distribution; got {len(cols)} columns "
                            f"{list(cols)}: use {hint}est.marginal(column) for one column")
        c = self._index(column)
        if self.consistency == "none":
            raise ValueError("marginal: the raw grids (consistency='none') are not distributions; estimate with "
                             "consistency='hdg', 'paper' or 'norm-sub'")
        kw = {"spec": self.spec} if self.spec is not None else {"epsilon": self.epsilon}
        return DistributionEstimate(self.edges(column), self.marginals[c], n_reports=self.n_reports,
                                    method=f"hdg-{self.consistency}", n_iter=self.n_iter, converged=self.converged,
                                    name=str(column), **kw)

    def plot(self, a: str, b: str, ax: "Axes | None" = None, **kwargs: Any) -> "Axes":
        """Heat map of the joint table of ``a`` (x axis) and ``b`` (y axis): density per unit area.

        matplotlib is imported only here; ``kwargs`` go to ``pcolormesh``.
        """
        from .._plotting import new_axes

        T, ea, eb = self.joint(a, b, as_frame=False)
        ax = new_axes(ax)
        area = np.outer(np.diff(ea), np.diff(eb))
        mesh = ax.pcolormesh(ea, eb, (T / area).T, **kwargs)
        ax.set_xlabel(str(a))
        ax.set_ylabel(str(b))
        ax.figure.colorbar(mesh, ax=ax, label="density")
        title = f"HDG joint, ε = {self.epsilon:g}" if self.epsilon is not None else "HDG joint"
        ax.set_title(title + (f" ({self.name})" if self.name else ""))
        return ax

    def __repr__(self) -> str:
        eps = "" if self.epsilon is None else f", epsilon={self.epsilon:g}"
        n = "" if self.n_reports is None else f", n_reports={self.n_reports}"
        return (f"MultiRangeEstimate(columns={list(self.columns)}, granularities={self.granularities}, "
                f"consistency={self.consistency!r}{eps}{n}{self._shuffle_note()})")


@dataclass(frozen=True, eq=False, repr=False)
class MarginalsEstimate(PrivacyProvenance):
    r"""Estimated k-way marginals of categorical columns, and every lower-way marginal inside them.

    The columns were collected by :class:`ldpnum.Marginals`.

    Parameters
    ----------
    columns : tuple of str
    categories : tuple of int
        Categories ``c`` of each column (codes ``0..c-1``).
    sets : tuple of tuple of str
        The released attribute sets (column order).
    tables : tuple of arrays
        Each set's joint frequencies after post-processing, shape ``(c_a, c_b, …)``.
    weights : tuple of float
        Inverse cell variance of each set's table (how projections of several sets are averaged).
    consistency : {"calm", "norm-sub", "none"}
    spec, epsilon, n_reports
        Provenance.
    set_reports : tuple of int
        Reports per set.
    set_variances : tuple of float
        Variance of a raw cell estimate of each set, at frequency 0.
    n_iter : int
        Norm-Sub/consistency rounds.
    converged : bool
        Whether consistency left no negative cell.
    name : str, optional
        The report column's name (set by the pandas accessor).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.multi import MarginalsEstimate
    >>> est = MarginalsEstimate(columns=("a", "b"), categories=(2, 3), sets=(("a", "b"),),
    ...                         tables=(np.array([[0.1, 0.2, 0.2], [0.3, 0.1, 0.1]]),))
    >>> est.marginal("a").round(3).tolist(), est.marginal(("b", "a")).shape, est.marginal("b", "a").shape
    ([0.5, 0.5], (3, 2), (3, 2))
    >>> est.marginal(("a", "b"), as_frame=True).loc[1, 2]
    np.float64(0.1)
    """

    columns: tuple
    categories: tuple
    sets: tuple
    tables: tuple
    weights: tuple = ()
    consistency: str = "calm"
    spec: Spec | None = None
    epsilon: float | None = None
    n_reports: int | None = None
    set_reports: tuple = ()
    set_variances: tuple = ()
    n_iter: int = 0
    converged: bool = True
    name: str | None = None
    #: The central ε of a shuffled collection (:meth:`ldpnum.Aggregate.shuffled`), None when the reports were
    #: not declared shuffled; shown next to the local ε (:attr:`privacy`). Provenance only.
    shuffle: "ShuffleAmplification | None" = field(default=None, compare=False)
    #: Bootstrap replicates (MarginalsEstimates refitted on simulated aggregates,
    #: ``Marginals.estimate_marginals(..., bootstrap=B)``), None when not bootstrapped.
    replicates: tuple | None = field(default=None, compare=False)

    def __post_init__(self):
        set_ = object.__setattr__
        if self.replicates is not None:
            reps = tuple(self.replicates)
            if len(reps) < 2 or not all(isinstance(r, MarginalsEstimate) and r.sets == self.sets
                                        and r.categories == self.categories for r in reps):
                raise ValueError("replicates must be at least 2 MarginalsEstimates of the same sets and categories")
            set_(self, "replicates", reps)
        set_(self, "columns", tuple(str(c) for c in self.columns))
        set_(self, "categories", tuple(int(c) for c in self.categories))
        set_(self, "sets", tuple(tuple(str(a) for a in s) for s in self.sets))
        if len(self.categories) != len(self.columns) or len(self.tables) != len(self.sets):
            raise ValueError("one category count per column and one table per set are needed")
        tables = []
        for s, t in zip(self.sets, self.tables):
            t = np.array(t, dtype=np.float64)
            want = tuple(self.categories[self.columns.index(a)] for a in s)
            if t.shape != want:
                raise ValueError(f"the table of set {s} has shape {t.shape}; its categories need {want}")
            tables.append(read_only(t))
        set_(self, "tables", tuple(tables))
        if not self.weights:
            set_(self, "weights", (1.0,) * len(self.sets))
        if self.epsilon is None and self.spec is not None:
            set_(self, "epsilon", self.spec.epsilon)

    def __repr__(self):
        return (f"MarginalsEstimate(columns={self.columns}, sets={len(self.sets)}, consistency={self.consistency!r}, "
                f"epsilon={self.epsilon}, n_reports={self.n_reports}{self._shuffle_note()})")

    def _names(self, cols):
        if isinstance(cols, str):
            cols = (cols,)
        if isinstance(cols, (bytes, Mapping)) or not hasattr(cols, "__iter__"):
            raise TypeError(f"marginal: columns must be a column name or a tuple of names; got {cols!r}")
        cols = tuple(cols)
        unknown = [c for c in cols if c not in self.columns]
        if unknown:
            raise ValueError(f"marginal: unknown column(s) {unknown}; the columns are {list(self.columns)}")
        if not cols or len(set(cols)) != len(cols):
            raise ValueError(f"marginal: give one or more distinct columns; got {cols!r}")
        return cols

    def covers(self, cols: Any) -> bool:
        """Whether one released set holds every column of ``cols``.

        Then :meth:`marginal` projects it; otherwise it reconstructs the maximum-entropy table.
        """
        cols = self._names(cols)
        return any(set(cols) <= set(s) for s in self.sets)

    def _projected(self, srt):
        holders = [i for i, s in enumerate(self.sets) if set(srt) <= set(s)]
        w = np.array([self.weights[i] for i in holders])
        return sum(wi * project(self.tables[i], self.sets[i], srt) for wi, i in zip(w, holders)) / w.sum()

    def _reps(self):
        if self.replicates is None:
            raise ValueError("this estimate carries no bootstrap replicates: estimate it with "
                             "Marginals.estimate_marginals(..., bootstrap=200) for standard errors and intervals")
        return self.replicates

    def standard_error(self, cols: Any, *more: str) -> np.ndarray:
        """Bootstrap standard error of every cell of ``marginal(cols)`` (the replicates' standard deviation).

        Refused with a ValueError when the estimate carries no replicates, and for a marginal no released set
        holds (as :meth:`marginal`'s ``ci=``).
        """
        reps = self._reps()
        self._refuse_reconstructed(cols, *more, what="standard_error")
        return np.stack([r.marginal(cols, *more) for r in reps]).std(axis=0, ddof=1)

    def _refuse_reconstructed(self, cols, *more, what):
        """ValueError for intervals of a marginal no released set holds (maximum entropy: a model)."""
        names = self._names((cols,) + more if more else cols)
        if not self.covers(names):
            raise ValueError(
                f"{what}: no released set holds {list(names)}; its table is a maximum-entropy reconstruction "
                "(no interaction beyond the released sets), whose bias the bootstrap does not contain, so it gets "
                f"no interval. Ask a marginal of a released set (the sets are {[list(s) for s in self.sets]}), "
                f"or collect with Marginals(k={len(names)}) to release these columns together")

    def marginal(self, cols: Any, *more: str, as_frame: bool = False, ci: float | None = None) -> Any:
        r"""Joint frequencies of ``cols``, an array of shape ``(c_a, c_b, …)`` in the order given.

        ``cols`` is a name or a tuple of names; ``marginal("a", "b")`` is ``marginal(("a", "b"))``. When a released set
        holds them: the projections of every released table holding them, averaged with :attr:`weights`. Otherwise (e.g.
        three columns from 2-way tables) the **maximum-entropy** table matching every released table's projection onto
        its columns among ``cols`` (the largest such intersections; :func:`max_entropy`, iterative proportional
        fitting): the least-committal joint table given what was released, exact when the columns' dependence is no
        richer than the released sets (e.g. no 3-way interaction given all pairs). ``as_frame=True``: a Series (one
        column), a DataFrame (rows: the first column's categories, columns: the second's) or a MultiIndex Series (three
        or more).

        ``ci=level`` (a bootstrapped estimate, ``Marginals.estimate_marginals(..., bootstrap=B)``): an
        :class:`~ldpnum._results.EstimateInterval` of the table and its cells' percentile bootstrap intervals (the same
        marginal of every replicate, :func:`table_interval`; a level needing more replicates is refused), each an
        array or, with ``as_frame``, a frame; refused with a ValueError without replicates, and for a marginal no
        released set holds (the maximum-entropy reconstruction is a model whose bias the replicates do not
        contain). Measured (``python bench/bands_multi.py``: the flights' five categorical columns, all ten
        2-way tables, n = 20,000, B = 100, 100 collections, nominal 95%, the percentile interval before its
        widening, which can only raise it): mean coverage over the 191 cells 0.975 (ε = 0.5), 0.966 (ε = 1),
        0.951 (ε = 4); over the 149 cells of at least 1%, 0.975, 0.969, 0.948 (binomial SE 0.022).
        """
        if ci is not None:
            point = self.marginal(cols, *more)
            reps_ = self._reps()
            self._refuse_reconstructed(cols, *more, what="marginal(ci=)")
            reps = np.stack([r.marginal(cols, *more) for r in reps_])
            low, high = table_interval(point, reps, ci, "marginal")
            if not as_frame:
                return EstimateInterval(point, low, high)
            return EstimateInterval(*(self._frame(t, cols, *more) for t in (point, low, high)))
        if more:
            if not isinstance(cols, str) or not all(isinstance(c, str) for c in more):
                raise TypeError(f"marginal: give the columns as names, marginal('a', 'b'), or as one tuple, "
                                f"marginal(('a', 'b')); got {(cols,) + more!r}")
            cols = (cols,) + more
        cols = self._names(cols)
        srt = tuple(sorted(cols, key=self.columns.index))
        if any(set(srt) <= set(s) for s in self.sets):
            out = self._projected(srt)
        else:
            parts = {tuple(a for a in srt if a in s) for s in self.sets}
            parts = {p for p in parts if p and not any(set(p) < set(q) for q in parts)}
            if set().union(*parts) != set(srt):
                missing = sorted(set(srt) - set().union(*parts), key=self.columns.index)
                raise ValueError(f"marginal: no released set holds {missing}; the sets are {list(self.sets)}")
            shape = tuple(self.categories[self.columns.index(c)] for c in srt)
            cons = [(tuple(srt.index(a) for a in p), self._projected(p)) for p in sorted(parts)]
            out, _ = max_entropy(shape, cons)
        out = np.transpose(out, [srt.index(c) for c in cols])
        if not as_frame:
            return out
        return self._frame(out, cols)

    def _frame(self, out, cols, *more):
        """A table of ``marginal(cols)``'s shape as a Series / DataFrame / MultiIndex Series."""
        cols = self._names((cols,) + more if more else cols)
        import pandas as pd

        if len(cols) == 1:
            return pd.Series(out, index=pd.RangeIndex(out.size, name=cols[0]), name="frequency")
        if len(cols) == 2:
            return pd.DataFrame(out, index=pd.RangeIndex(out.shape[0], name=cols[0]),
                                columns=pd.RangeIndex(out.shape[1], name=cols[1]))
        index = pd.MultiIndex.from_product([range(s) for s in out.shape], names=list(cols))
        return pd.Series(out.ravel(), index=index, name="frequency")

    def to_frame(self) -> Any:
        """Every released table in long form: one row per (set, cell).

        Columns ``set``, the set's columns' categories (missing for columns outside the set) and ``frequency``.
        """
        import pandas as pd

        parts = []
        for s, t in zip(self.sets, self.tables):
            idx = np.indices(t.shape).reshape(len(s), -1)
            part = pd.DataFrame({a: idx[i] for i, a in enumerate(s)})
            part.insert(0, "set", ",".join(s))
            part["frequency"] = t.ravel()
            parts.append(part)
        frame = pd.concat(parts, ignore_index=True)
        cols = ["set"] + [c for c in self.columns if c in frame.columns] + ["frequency"]
        return frame[cols].astype({c: "Int64" for c in self.columns if c in frame.columns})

    def max_inconsistency(self) -> float:
        """Largest disagreement between two released tables on a lower-way marginal they share."""
        idx = [tuple(self.columns.index(a) for a in s) for s in self.sets]
        return max_inconsistency(list(self.tables), idx) if len(self.sets) > 1 else 0.0
