r"""CALM-style k-way marginals of categorical columns: one report per person, consistent marginals.

Zhang et al.'s CALM releases the k-way marginals of ``d`` categorical attributes under LDP. Attribute ``a``
takes the public categories ``0..c_a-1``. Here the released **attribute sets** are all ``m = C(d, k)`` sets of
``k`` attributes (``k`` = 1, 2 or 3). Each person is assigned one set, uniformly at random and independently
of their values (:func:`ldpnum._random.assign_columns`' multiply-shift on a word of its own), and reports the
**joint cell** of that set (one of ``c_a · c_b · …`` cells, row-major) through a categorical frequency oracle
with the **full** ε: GRR while the set has fewer than ``3e^ε + 2`` cells, OLH beyond (Wang et al.'s rule,
:func:`ldpnum.frequency.recommend` with ``communication="low"``; the same oracles and report layout as
:class:`ldpnum.HDG`, see :mod:`ldpnum._kernels.client_multi`).

**Estimation** (post-processing only). Each set's joint frequencies are estimated without bias from its
``n_j`` reporters (a uniformly random subset of the people): GRR or OLH's
:math:`\hat f_v = (I_v/n_j - q^*)/(p^* - q^*)`, whose variance for a cell of frequency ``f`` is
:math:`\pi(1-\pi)/(n_j (p^*-q^*)^2)` with :math:`\pi = q^* + f (p^* - q^*)` (the reporters' cells drawn from
the population's distribution). Then, as CALM does: **Norm-Sub** on every marginal (non-negative, summing
to 1), and **consistency** between marginals sharing attributes (Qardaji, Yang and Li's step): for every set
``A`` of attributes shared by two or more released sets, smallest ``A`` first, each holder ``V`` projects its
table onto ``A`` (``T_V``, sums of ``C_V = cells(V)/cells(A)`` cells), the projections are averaged with
weights inversely proportional to their variances, :math:`T = \sum_V w_V T_V / \sum_V w_V`,
:math:`w_V = 1/(C_V \sigma^2_V)` (``σ²_V`` the set's cell variance at frequency 0), and every cell of ``V``
moves by :math:`(T - T_V)/C_V`. Processing smaller ``A`` first keeps them consistent while larger ones are
fixed. Norm-Sub and consistency alternate until no cell is negative after a consistency pass (then the
marginals agree exactly), ending with Norm-Sub (Wang et al.'s procedure, shared with HDG:
:func:`ldpnum.multi.hdg.alternate_consistency`).

A marginal of any attributes inside one released set (``k`` or fewer) is the projection of the released
tables holding them, averaged with the same weights (after consistency they agree; with
``consistency="none"`` the average of unbiased projections is unbiased).

References
----------
Z. Zhang, T. Wang, N. Li, S. He, J. Chen, "CALM: Consistent Adaptive Local Marginal for Marginal Release
under Local Differential Privacy", ACM CCS 2018. W. Qardaji, W. Yang, N. Li, "PriView: Practical
Differentially Private Release of Marginal Contingency Tables", SIGMOD 2014 (the consistency step).
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (GRR, OLH and the choice rule). T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Škorić,
N. Li, "Locally Differentially Private Frequency Estimation with Consistency", NDSS 2020 (Norm-Sub).
"""

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._checks import read_only
from .._results import PrivacyProvenance
from ..accounting import ShuffleAmplification
from .._kernels import client_multi as kernels
from .._kernels._jit import launch
from .._typing import ArrayLike, FloatArray
from .._validation import check_choice
from ..aggregate import Aggregate
from ..estimation.postprocess import norm_sub
from ..exceptions import InvalidValuesError
from ..frequency.hashing import HASH_FAMILY
from ..reports import Reports, check_integer_codes, register_code_check
from ..spec import Spec
from ..vectors._base import check_int
from .hdg import (HDGPlan, PackedTables, _grid_oracle, alternate_consistency, check_packed_codes,
                  select_columns)

__all__ = ["Marginals", "MarginalsEstimate", "MarginalsPlan", "consistency_step", "make_consistent",
           "check_marginals_codes", "MAX_K", "MAX_SETS", "MAX_CELLS", "MARGINALS_CONSISTENCY", "LAYOUT"]

#: Largest ``k``.
MAX_K = 3
#: At most 64 attribute sets: the report's 6 set-index bits (``C(11, 2) = 55``, ``C(8, 3) = 56``).
MAX_SETS = 1 << kernels.GRID_BITS
#: Largest number of cells of one attribute set (the aggregate holds every set's cells).
MAX_CELLS = 1 << 20
#: Names the report layout in the spec (HDG's packed word, over attribute sets).
LAYOUT = "marginals-packed-u64/v1"
MARGINALS_CONSISTENCY = ("calm", "norm-sub", "none")


class MarginalsPlan(HDGPlan):
    """The integer plan: the attribute sets, their oracles (over each set's joint cells), the kernel's
    table, the blocks of the aggregate and the exact distribution of the set. Set ``j`` is drawn with
    probability ``grid_weights[j] = c_j / 2**48`` exactly as HDG draws its grids (:class:`HDGPlan`, whose
    report packing, aggregation and exact probabilities this plan shares)."""

    words_per_record = 3

    def __init__(self, categories, k, epsilon):
        self.categories = tuple(categories)
        self.d, self.k = len(self.categories), k
        self.grids = tuple(itertools.combinations(range(self.d), k))
        self.m = len(self.grids)
        self.shapes = tuple(tuple(self.categories[a] for a in s) for s in self.grids)
        self.oracles = tuple(_grid_oracle(epsilon, math.prod(shape)) for shape in self.shapes)
        sizes = [o.block_size for o in self.oracles]
        self.offsets = tuple(int(v) for v in np.concatenate(([0], np.cumsum(sizes))))
        self.n_cells = self.offsets[-1]
        rows = []
        for attrs, shape, o in zip(self.grids, self.shapes, self.oracles):
            kind, size, keep, lie_shift = o.kernel_row()
            pad = MAX_K - len(attrs)
            rows.append((kind, size, keep, lie_shift, *attrs, *[-1] * pad, *shape, *[1] * pad))
        self.table = np.array(rows, dtype=np.int64).reshape(self.m, 4 + 2 * MAX_K)
        self.table.flags.writeable = False
        self.grid_weights = tuple(Fraction(self.grid_count(j), 1 << 48) for j in range(self.m))

    def __eq__(self, other):
        return isinstance(other, MarginalsPlan) and np.array_equal(self.table, other.table)

    def __repr__(self):
        names = ",".join(o.name for o in self.oracles)
        return f"MarginalsPlan(categories={self.categories}, k={self.k}, sets={self.m}, oracles=[{names}])"

    def cells(self, values):
        """``(n, m)`` int64: the cell of every set holding each row of validated category codes."""
        values = np.asarray(values).astype(np.int64)
        return np.stack([np.ravel_multi_index(tuple(values[:, a] for a in s), shape)
                         for s, shape in zip(self.grids, self.shapes)], axis=1).reshape(values.shape[0], self.m)


# -- post-processing ---------------------------------------------------------------------------------------

def _project(table, attrs, sub):
    """The projection of ``table`` (over ``attrs``) onto the attributes ``sub`` (a subset, sorted)."""
    return table.sum(axis=tuple(i for i, a in enumerate(attrs) if a not in sub))


def _shift(table, attrs, sub, delta):
    """Add ``delta / C`` to every cell (in place), ``delta`` indexed by ``sub``'s cells, ``C`` the cells
    of ``table`` per cell of ``sub``."""
    table += (delta * (delta.size / table.size)).reshape([s if a in sub else 1 for a, s in zip(attrs, table.shape)])


def shared_subsets(sets):
    """Every non-empty attribute set contained in two or more of ``sets``, smallest first (then lexicographic)."""
    out = set()
    for s, t in itertools.combinations(sets, 2):
        common = tuple(sorted(set(s) & set(t)))
        for r in range(1, len(common) + 1):
            out.update(itertools.combinations(common, r))
    return sorted(out, key=lambda a: (len(a), a))


def consistency_step(tables, sets, variances):
    """One pass of the consistency step over every shared attribute set (in place; see the module
    docstring). ``tables``: arrays of shapes ``(c_a, c_b, …)`` over ``sets``; ``variances``: each set's cell
    variance at frequency 0 (the weights)."""
    for sub in shared_subsets(sets):
        holders = [i for i, s in enumerate(sets) if set(sub) <= set(s)]
        masses = [_project(tables[i], sets[i], sub) for i in holders]
        weights = np.array([T.size / (tables[i].size * variances[i]) for i, T in zip(holders, masses)])
        target = sum(w * T for w, T in zip(weights, masses)) / weights.sum()
        for i, T in zip(holders, masses):
            _shift(tables[i], sets[i], sub, target - T)


def make_consistent(raw, sets, variances, *, tol=1e-12, max_iter=1000):
    """Norm-Sub and :func:`consistency_step` alternated until no cell is negative, then Norm-Sub.

    Returns ``(tables, n_iter, converged)``."""
    return alternate_consistency(raw, lambda tables: consistency_step(tables, sets, variances), tol=tol,
                                 max_iter=max_iter)


def max_inconsistency(tables, sets):
    """Largest difference between two released tables' projections onto an attribute set they share."""
    worst = 0.0
    for sub in shared_subsets(sets):
        stack = np.stack([_project(t, s, sub) for t, s in zip(tables, sets) if set(sub) <= set(s)])
        worst = max(worst, float((stack.max(axis=0) - stack.min(axis=0)).max()))
    return worst


# -- the result --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False, repr=False)
class MarginalsEstimate(PrivacyProvenance):
    r"""Estimated k-way marginals of categorical columns (:class:`ldpnum.Marginals`), and every lower-way
    marginal inside them.

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
    >>> est.marginal("a").round(3).tolist(), est.marginal(("b", "a")).shape
    ([0.5, 0.5], (3, 2))
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

    def __post_init__(self):
        set_ = object.__setattr__
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

    def marginal(self, cols: Any, *, as_frame: bool = False) -> Any:
        """Joint frequencies of ``cols`` (a name or a tuple of names inside one released set), an array of
        shape ``(c_a, c_b, …)`` in the order given: the projections of every released table holding them,
        averaged with :attr:`weights`. ``as_frame=True``: a Series (one column), a DataFrame (rows: the first
        column's categories, columns: the second's) or a MultiIndex Series (three)."""
        cols = self._names(cols)
        srt = tuple(sorted(cols, key=self.columns.index))
        holders = [i for i, s in enumerate(self.sets) if set(srt) <= set(s)]
        if not holders:
            raise ValueError(f"marginal: no released set holds {list(cols)}; the sets are {list(self.sets)}")
        w = np.array([self.weights[i] for i in holders])
        out = sum(wi * _project(self.tables[i], self.sets[i], srt) for wi, i in zip(w, holders)) / w.sum()
        out = np.transpose(out, [srt.index(c) for c in cols])
        if not as_frame:
            return out
        import pandas as pd

        if len(cols) == 1:
            return pd.Series(out, index=pd.RangeIndex(out.size, name=cols[0]), name="frequency")
        if len(cols) == 2:
            return pd.DataFrame(out, index=pd.RangeIndex(out.shape[0], name=cols[0]),
                                columns=pd.RangeIndex(out.shape[1], name=cols[1]))
        index = pd.MultiIndex.from_product([range(s) for s in out.shape], names=list(cols))
        return pd.Series(out.ravel(), index=index, name="frequency")

    def to_frame(self) -> Any:
        """Every released table in long form: one row per (set, cell), columns ``set``, the set's columns'
        categories (missing for columns outside the set) and ``frequency``."""
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


# -- the mechanism -----------------------------------------------------------------------------------------

def _check_categories(categories, k):
    """``categories`` as ``(names, counts)`` and ``k``, validated together (one clear error each)."""
    if not isinstance(categories, Mapping):
        raise TypeError(f"categories must be a mapping {{column: number of categories}}; got "
                        f"{type(categories).__name__}")
    names = tuple(categories)
    bad = [c for c in names if not isinstance(c, str) or not c]
    if bad:
        raise TypeError(f"categories: column names must be non-empty str; got {bad[0]!r}")
    counts = tuple(check_int(categories[c], f"categories[{c!r}]", 2, MAX_CELLS) for c in names)
    k = check_int(k, "k", 1, MAX_K)
    if len(names) < 2:
        raise ValueError(f"categories must name at least 2 columns; got {len(names)} (for one column use ldp.GRR or "
                         "ldp.OLH)")
    if k > len(names):
        raise ValueError(f"k = {k} exceeds the number of columns d = {len(names)}")
    m = math.comb(len(names), k)
    if m > MAX_SETS:
        raise ValueError(f"{len(names)} columns give C({len(names)}, {k}) = {m} attribute sets; at most {MAX_SETS} "
                         "fit a report")
    for s in itertools.combinations(range(len(names)), k):
        cells = math.prod(counts[a] for a in s)
        if cells > MAX_CELLS:
            raise ValueError(f"the set {[names[a] for a in s]} has {cells} cells; at most {MAX_CELLS} are supported")
    return names, counts, k


class Marginals(PackedTables):
    r"""CALM-style k-way marginals of categorical columns: one report per person, consistent estimates.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20] of each person's one report.
    categories : dict
        ``{column: c}`` for 2 or more columns (str names): column values are category codes ``0..c-1``
        (``c >= 2``). Their order is the order of the columns of an array given to :meth:`privatize`.
    k : int, default 2
        Size of the released marginals (1, 2 or 3; at most the number of columns). All ``C(d, k)`` sets
        of ``k`` columns are released (at most 64).

    Notes
    -----
    Each call of ``privatize`` on one person's row is ε-LDP; estimators are post-processing. The attribute
    set is chosen from a word of its own, independently of the values, and the set's oracle (GRR or OLH,
    planned exactly like :class:`ldpnum.GRR` and :class:`ldpnum.OLH`) spends the whole ε on the one joint
    cell. Category codes outside ``[0, c)``, non-integral, missing or non-finite raise before anything is
    drawn. See :mod:`ldpnum.multi.marginals` for the estimators and the consistency step. Reports are
    HDG's packed ``uint64`` (set index, and cell or hash seed and hashed value), so a tuple key of the
    pandas accessor works: ``df.ldp.privatize({("a", "b", "c"): mech})``.

    References
    ----------
    Z. Zhang, T. Wang, N. Li, S. He, J. Chen, "CALM: Consistent Adaptive Local Marginal for Marginal
    Release under Local Differential Privacy", ACM CCS 2018.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 3, 200_000); b = np.where(rng.random(a.size) < 0.8, a, rng.integers(0, 3, a.size))
    >>> c = rng.integers(0, 2, a.size)
    >>> mech = ldp.Marginals(2.0, categories={"a": 3, "b": 3, "c": 2})
    >>> est = mech.estimate_marginals(mech.privatize(np.column_stack([a, b, c]), rng=1))
    >>> est.sets
    (('a', 'b'), ('a', 'c'), ('b', 'c'))
    >>> ab = est.marginal(("a", "b"))
    >>> bool(abs(ab.trace() - np.mean(a == b)) < 0.03), est.max_inconsistency() < 1e-9
    (True, True)
    """

    name = "marginals"

    def __init__(self, epsilon: float, categories: Any, *, k: int = 2) -> None:
        names, counts, k = _check_categories(categories, k)
        super().__init__(epsilon, [(0.0, float(c - 1)) for c in counts])
        self._columns = names
        self._plan = MarginalsPlan(counts, k, self._epsilon)

    # -- parameters -----------------------------------------------------------------------------------------
    @property
    def columns(self) -> tuple[str, ...]:
        """The attributes' column names, in order."""
        return self._columns

    @property
    def categories(self) -> Any:
        """``{column: c}`` (a dict)."""
        return dict(zip(self._columns, self._plan.categories))

    @property
    def k(self) -> int:
        return self._plan.k

    @property
    def sets(self) -> tuple[tuple[str, ...], ...]:
        """The released attribute sets by name."""
        return tuple(tuple(self._columns[a] for a in s) for s in self._plan.grids)

    def _spec_params(self):
        return {"columns": self._columns, "categories": self._plan.categories, "k": self._plan.k,
                "oracle": self.oracle_names, "layout": LAYOUT, "hash": HASH_FAMILY,
                "g": tuple(o.g if o.hashed else 0 for o in self._plan.oracles)}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.epsilon, dict(zip(spec.get("columns"), spec.get("categories"))), k=spec.get("k"))

    def __repr__(self) -> str:
        return f"Marginals(epsilon={self._epsilon!r}, categories={self.categories!r}, k={self.k!r})"

    # -- client side ----------------------------------------------------------------------------------------
    def prepare_values(self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise",
                       fill_value: Any = None, out_of_range: str = "clip") -> FloatArray:
        """Validate an ``(n, d)`` array of category codes (columns in the order of ``categories``) or a
        DataFrame holding exactly those columns (any order), without drawing anything. Codes must be
        integers in ``[0, c)``: anything else raises, whatever ``out_of_range`` says (``"clip"`` or
        ``"raise"``, accepted for the common interface): a category is never clipped."""
        check_choice(out_of_range, "out_of_range", ("clip", "raise"))
        x = select_columns(x, self._columns, name, "Marginals", "categories")
        values = super().prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value,
                                        out_of_range="raise")
        frac = values != np.floor(values)
        if frac.any():
            i, j = (int(v) for v in np.argwhere(frac)[0])
            subject = "x" if name is None else str(name)
            raise InvalidValuesError(f"{subject} has {int(frac.sum())} non-integral category code(s), first at index "
                                     f"{i} (row {i}, column {self._columns[j]!r}: {float(values[i, j])!r}); codes are "
                                     "integers 0..c-1", count=int(frac.sum()), first_index=i, reason="out_of_range")
        return values

    def _run_kernel(self, values, words, out):
        launch(kernels.marginals_kernel, values, self._plan.table, words, out)

    def cells(self, x: ArrayLike) -> np.ndarray:
        """``(n, m)``: the cell of every released set holding each row (validated like ``privatize``)."""
        return self._plan.cells(self.prepare_values(x))

    def true_marginals(self, x: ArrayLike) -> tuple[np.ndarray, ...]:
        """The true joint frequencies of every released set of the rows of ``x``."""
        cells = self.cells(x)
        n = max(1, cells.shape[0])
        return tuple(np.bincount(cells[:, j], minlength=math.prod(shape)).reshape(shape) / n
                     for j, shape in enumerate(self._plan.shapes))

    # -- server side ----------------------------------------------------------------------------------------
    def raw_marginals(self, data: Reports | Aggregate) -> tuple[tuple[np.ndarray, ...], tuple[int, ...]]:
        """Unbiased estimates of every set's joint frequencies (shape ``(c_a, c_b, …)``) and every set's
        number of reports. Raises ValueError when a set received no report."""
        agg = self._as_aggregate(data)
        plan = self._plan
        blocks = self.grid_counts(agg)
        n_per = tuple(o.level_reports(b) for o, b in zip(plan.oracles, blocks))
        if agg.n_reports == 0:
            raise ValueError("estimate_marginals: no reports")
        if min(n_per) == 0:
            empty = [self.sets[j] for j, v in enumerate(n_per) if v == 0]
            raise ValueError(f"estimate_marginals: set(s) {empty} received no reports ({agg.n_reports} reports in "
                             f"all, spread over {plan.m} sets); collect more reports")
        raw = tuple(o.estimate(b).reshape(shape) for o, b, shape in zip(plan.oracles, blocks, plan.shapes))
        return raw, n_per

    def set_variances(self, n_per: tuple[int, ...]) -> tuple[float, ...]:
        """Variance of one raw cell estimate of each set at frequency 0 (its oracle's, over its reports)."""
        return tuple(float(o.variance(v)) for o, v in zip(self._plan.oracles, n_per))

    def cell_variances(self, frequencies: Any, n_per: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        r"""Variance of every raw cell estimate of each set, for reporters drawn from joint frequencies
        ``frequencies`` (one table per set): :math:`\pi(1-\pi)/(n_j (p^*-q^*)^2)`,
        :math:`\pi = q^* + f (p^* - q^*)`."""
        out = []
        for o, f, n in zip(self._plan.oracles, frequencies, n_per):
            p, q = o.oracle.support_probabilities
            pi = q + np.asarray(f, dtype=np.float64) * (p - q)
            out.append(pi * (1 - pi) / (n * (p - q) ** 2))
        return tuple(out)

    def estimate_marginals(self, data: Reports | Aggregate, *, consistency: str = "calm") -> MarginalsEstimate:
        """Estimate every released k-way marginal and make them consistent.

        Parameters
        ----------
        data : Reports or Aggregate
        consistency : {"calm", "norm-sub", "none"}, default "calm"
            ``"calm"``: Norm-Sub and the consistency step alternated (see the module docstring).
            ``"norm-sub"``: Norm-Sub on each table only (tables need not agree). ``"none"``: the raw unbiased
            tables (cells may be negative).

        Returns
        -------
        MarginalsEstimate
        """
        check_choice(consistency, "consistency", MARGINALS_CONSISTENCY)
        agg = self._as_aggregate(data)
        raw, n_per = self.raw_marginals(agg)
        variances = self.set_variances(n_per)
        n_iter, converged = 0, True
        if consistency == "none":
            tables = [np.array(r) for r in raw]
        elif consistency == "norm-sub":
            tables = [norm_sub(r.ravel()).reshape(r.shape) for r in raw]
        else:
            tables, n_iter, converged = make_consistent(raw, self._plan.grids, variances)
        return MarginalsEstimate(columns=self._columns, categories=self._plan.categories, sets=self.sets,
                                 tables=tuple(tables), weights=tuple(1.0 / v for v in variances),
                                 consistency=consistency, spec=agg.spec, n_reports=agg.n_reports,
                                 set_reports=n_per, set_variances=variances, n_iter=n_iter, converged=converged)


def check_marginals_codes(codes, spec):
    """Validate Marginals report codes against their spec (every :class:`~ldpnum.Reports` path): HDG's
    packed layout over the spec's attribute sets (:func:`ldpnum.multi.hdg.check_packed_codes`)."""
    codes = check_integer_codes(codes)
    if spec.get("layout") != LAYOUT or spec.get("hash") != HASH_FAMILY:
        raise ValueError(f"{spec} has an unknown report layout")
    cats = spec.get("categories")
    ks = [math.prod(cats[a] for a in s) for s in itertools.combinations(range(len(cats)), spec.get("k"))]
    return check_packed_codes(codes, spec, ks)


register_code_check(Marginals.name, check_marginals_codes)
