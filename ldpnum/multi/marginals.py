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
:func:`ldpnum.estimation.tables.make_consistent`). HDG's noise-weighted Norm-Sub
(:func:`ldpnum.estimation.postprocess.noise_weighted_norm_sub`) was measured here in its place and not adopted: 2-way total
variation ×0.97–0.99 on five flights columns and ×1.00–1.01 on eight synthetic ones (n = 10^6, ε 0.5–4, 4
collections): these tables are small and few of their cells sit within the noise of 0.

**CALM's adaptive choice** (``strategy="calm"``). Releasing all ``C(d, k)`` sets splits the people
``C(d, k)`` ways; CALM instead releases ``m`` sets of ``ℓ >= k`` attributes that together cover every
k-set, trading more cells per set against more people per set. The choice uses only public parameters
(``n``, ε, the category counts): for each width ``ℓ = k, …, min(d, 6)``, a greedy covering design
(:func:`covering_sequence`, the shortest prefix that covers every k-set: its ``m``), then the ``ℓ`` of
least expected error

.. math::

    \mathrm{Err}(\ell) = \frac{1}{\binom{d}{k}} \sum_{K} \Big(\sum_{V \supseteq K}
        \frac{1}{|K|\, v_V(|V|/|K|,\ 1/|K|,\ n/m)}\Big)^{-1}

where ``|·|`` counts cells and :math:`v_V(C, f, N)` is the variance of the sum of ``C`` raw cells of set
``V``'s oracle at total frequency ``f`` over ``N`` reporters (:func:`union_variance`; it holds the noise
*and* the sampling error, taken at uniform frequencies, their worst case). The sum inside is the
inverse-variance combination of every released set holding ``K``; a k-set no set holds would need
reconstruction, so only covering designs are candidates (their reconstruction error is zero). ``ℓ = k``
is the all-sets design, so the choice is never predicted worse than it. Larger ε favours wider sets
(GRR's noise grows slowly with the cells), smaller ε the all-sets design.

**Answers.** A marginal of any attributes inside one released set is the projection of the released
tables holding them, averaged with the same weights (after consistency they agree; with
``consistency="none"`` the average of unbiased projections is unbiased). A marginal no released set holds
(three columns from 2-way tables, say) is the **maximum-entropy** table matching every released table's
projection onto its columns among those asked for (:func:`max_entropy`, iterative proportional fitting),
as CALM reconstructs marginals it did not collect.

References
----------
Z. Zhang, T. Wang, N. Li, S. He, J. Chen, "CALM: Consistent Adaptive Local Marginal for Marginal Release
under Local Differential Privacy", ACM CCS 2018 (the adaptive choice, the consistency and the
maximum-entropy reconstruction). W. Qardaji, W. Yang, N. Li, "PriView: Practical Differentially Private
Release of Marginal Contingency Tables", SIGMOD 2014 (the consistency step). W. E. Deming, F. F. Stephan,
"On a Least Squares Adjustment of a Sampled Frequency Table When the Expected Marginal Totals are Known",
Annals of Mathematical Statistics 11(4), 1940 (iterative proportional fitting). T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (GRR, OLH and the choice rule). T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Škorić,
N. Li, "Locally Differentially Private Frequency Estimation with Consistency", NDSS 2020 (Norm-Sub).
"""

import functools
import itertools
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._kernels import client_multi as kernels
from .._kernels._jit import launch
from .._typing import ArrayLike, FloatArray
from .._validation import check_choice, check_scalar, check_vectors, prepared
from ..aggregate import Aggregate
from ..estimation.joint import max_entropy
from ..estimation.postprocess import norm_sub
from ..estimation.tables import consistency_step, make_consistent
from ..estimation.tables import max_inconsistency, shared_subsets  # noqa: F401  (importable here too)
from ..frequency.hashing import HASH_FAMILY
from ..reports import Reports, check_integer_codes, register_code_check
from ._result import MarginalsEstimate
from .hdg import HDGPlan, PackedTables, _grid_oracle, check_packed_codes, check_table_epsilon, select_columns

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["Marginals", "MarginalsEstimate", "MarginalsPlan", "consistency_step", "make_consistent",
           "check_marginals_codes", "calm_choice", "covering_sequence", "predicted_error", "union_variance",
           "max_entropy", "MAX_K", "MAX_WIDTH", "MAX_COLUMNS", "MAX_SETS", "MAX_CELLS", "MARGINALS_CONSISTENCY",
           "MARGINALS_STRATEGIES", "LAYOUT"]

#: Largest ``k``.
MAX_K = 3
#: Largest size ``ℓ`` of a released attribute set (``strategy="calm"`` may release sets wider than ``k``).
MAX_WIDTH = 6
#: Most columns ``strategy="calm"`` accepts (``strategy="all"`` is bounded by ``C(d, k) <= 64`` instead).
MAX_COLUMNS = 16
#: At most 64 attribute sets: the report's 6 set-index bits (``C(11, 2) = 55``, ``C(8, 3) = 56``).
MAX_SETS = 1 << kernels.GRID_BITS
#: Largest number of cells of one attribute set (the aggregate holds every set's cells).
MAX_CELLS = 1 << 20
#: Names the report layout in the spec (HDG's packed word, over attribute sets).
LAYOUT = "marginals-packed-u64/v1"
MARGINALS_CONSISTENCY = ("calm", "norm-sub", "none")
MARGINALS_STRATEGIES = ("all", "calm")


class MarginalsPlan(HDGPlan):
    """The integer plan of Marginals: its attribute sets, drawn as HDG draws its grids.

    The attribute sets, their oracles (over each set's joint cells), the kernel's table, the blocks of the aggregate and
    the exact distribution of the set. Set ``j`` is drawn with probability ``grid_weights[j] = c_j / 2**48`` exactly as
    HDG draws its grids (:class:`HDGPlan`, whose report packing, aggregation and exact probabilities this plan shares).
    ``sets``: the attribute sets (sorted column indices, at most :data:`MAX_WIDTH` each); by default every set of ``k``
    columns.
    """

    words_per_record = 3

    def __init__(self, categories, k, epsilon, sets=None):
        self.categories = tuple(categories)
        self.d, self.k = len(self.categories), k
        self.grids = (tuple(itertools.combinations(range(self.d), k)) if sets is None
                      else tuple(tuple(int(a) for a in s) for s in sets))
        self.m = len(self.grids)
        self.shapes = tuple(tuple(self.categories[a] for a in s) for s in self.grids)
        self.oracles = tuple(_oracle(epsilon, math.prod(shape)) for shape in self.shapes)
        sizes = [o.block_size for o in self.oracles]
        self.offsets = tuple(int(v) for v in np.concatenate(([0], np.cumsum(sizes))))
        self.n_cells = self.offsets[-1]
        rows = []
        for attrs, shape, o in zip(self.grids, self.shapes, self.oracles):
            kind, size, keep, lie_shift = o.kernel_row()
            pad = MAX_WIDTH - len(attrs)
            rows.append((kind, size, keep, lie_shift, *attrs, *[-1] * pad, *shape, *[1] * pad))
        self.table = np.array(rows, dtype=np.int64).reshape(self.m, 4 + 2 * MAX_WIDTH)
        self.table.flags.writeable = False
        self.grid_weights = tuple(Fraction(self.grid_count(j), 1 << 48) for j in range(self.m))

    def __eq__(self, other):
        return isinstance(other, MarginalsPlan) and np.array_equal(self.table, other.table)

    def __repr__(self):
        names = ",".join(o.name for o in self.oracles)
        return f"MarginalsPlan(categories={self.categories}, k={self.k}, sets={self.grids}, oracles=[{names}])"

    def cells(self, values: np.ndarray) -> np.ndarray:
        """``(n, m)`` int64: the cell of every set holding each row of validated category codes."""
        values = np.asarray(values).astype(np.int64)
        return np.stack([np.ravel_multi_index(tuple(values[:, a] for a in s), shape)
                         for s, shape in zip(self.grids, self.shapes)], axis=1).reshape(values.shape[0], self.m)


@functools.lru_cache(maxsize=512)
def _oracle(epsilon, cells):
    """The oracle of a set of ``cells`` joint cells (:func:`ldpnum.multi.hdg._grid_oracle`), built once per (ε, cells).

    The choice below plans many candidate designs.
    """
    return _grid_oracle(epsilon, cells)


# -- CALM's adaptive choice --------------------------------------------------------------------------------

def union_variance(oracle: Any, size: int, f: float, n: float) -> float:
    r"""Variance of the unbiased estimate of the total frequency ``f`` of ``size`` cells of one set.

    Summed from the raw cells of ``n`` reporters drawn from the population (noise and sampling together).

    With the oracle's support probabilities :math:`p^*, q^*`: GRR's supports of distinct cells are
    exclusive, so the union is one Bernoulli of :math:`\pi = C q^* + f (p^* - q^*)`, variance
    :math:`\pi (1 - \pi) / (n (p^* - q^*)^2)`. OLH's supports are pairwise independent given the person's
    cell: :math:`[C q^*(1-q^*) + f(p^*(1-p^*) - q^*(1-q^*)) + f(1-f)(p^*-q^*)^2] / (n (p^*-q^*)^2)`.
    """
    p, q = oracle.oracle.support_probabilities
    if oracle.hashed:
        per = size * q * (1 - q) + f * (p * (1 - p) - q * (1 - q)) + f * (1 - f) * (p - q) ** 2
    else:
        pi = size * q + f * (p - q)
        per = pi * (1 - pi)
    return per / (n * (p - q) ** 2)


def predicted_error(categories: Any, k: int, epsilon: float, sets: Any, n: int) -> float:
    r"""CALM-style expected error of the k-way marginals answered from released ``sets`` at ``n`` people.

    ``sets`` are column-index tuples; the people are split evenly among them. The error is the mean over every k-set
    ``K`` of the expected squared L2 error of its table, :math:`E_K = (\sum_{V \supseteq K} 1/E_{K,V})^{-1}`, where
    :math:`E_{K,V} = |K| \cdot v_V(C_V, 1/|K|, n/m)` sums :func:`union_variance` over ``K``'s ``|K|`` cells, each the
    projection of ``C_V = |V|/|K|`` cells of ``V`` (``|·|`` counting cells), at the uniform frequency ``1/|K|`` (the
    largest sampling term: the rule does not look at the data). Holders are averaged with inverse-variance weights, as
    the estimator does. ``inf`` when a k-set has no holder.
    """
    cats = tuple(categories)
    per = n / len(sets)
    total = 0.0
    for K in itertools.combinations(range(len(cats)), k):
        cells_k = math.prod(cats[a] for a in K)
        inv = 0.0
        for V in sets:
            if set(K) <= set(V):
                cells_v = math.prod(cats[a] for a in V)
                var = union_variance(_oracle(epsilon, cells_v), cells_v // cells_k, 1 / cells_k, per)
                inv += 1 / (cells_k * var)
        if inv == 0:
            return math.inf
        total += 1 / inv
    return total / math.comb(len(cats), k)


def covering_sequence(categories: Any, k: int, width: int, limit: int = MAX_SETS) -> list[tuple[int, ...]]:
    """Attribute sets of ``width`` columns, picked one at a time (at most ``limit``, without repeats).

    Each pick covers the most k-sets no earlier pick covers, then the k-sets covered fewest times so far (smallest sum
    of their coverage counts), then has the fewest cells, then comes first in lexicographic order. Every prefix is the
    greedy design of its length (a covering design once every k-set is covered).
    """
    cats = tuple(categories)
    d = len(cats)
    cands = list(itertools.combinations(range(d), width))
    ksets = list(itertools.combinations(range(d), k))
    index = {K: i for i, K in enumerate(ksets)}
    # holders[K]: the candidates holding k-set K; new / load: per candidate, its k-sets not yet covered and
    # the sum of their coverage counts, updated for the k-sets of each pick only
    holders: list[Any] = [[] for _ in ksets]
    for r, V in enumerate(cands):
        for K in itertools.combinations(V, k):
            holders[index[K]].append(r)
    holders = [np.array(h, dtype=np.intp) for h in holders]
    cells = np.array([math.prod(cats[a] for a in V) for V in cands], dtype=np.int64)
    new = np.full(len(cands), math.comb(width, k), dtype=np.int64)
    load = np.zeros(len(cands), dtype=np.int64)
    counts = np.zeros(len(ksets), dtype=np.int64)
    used = np.zeros(len(cands), dtype=bool)
    out = []
    for _ in range(min(limit, len(cands))):
        # np.lexsort's primary key is the last: unused first, then most new, least load, fewest cells, index
        best = int(np.lexsort((np.arange(len(cands)), cells, load, -new, used))[0])
        used[best] = True
        out.append(cands[best])
        for K in itertools.combinations(cands[best], k):
            i = index[K]
            if counts[i] == 0:
                new[holders[i]] -= 1
            counts[i] += 1
            load[holders[i]] += 1
    return out


def calm_choice(categories: Any, k: int, epsilon: float, n: int) -> tuple[Any, Any, tuple[Any, ...]]:
    r"""The released sets of :class:`Marginals` with ``strategy="calm"``.

    For every width ``ℓ`` from ``k`` to ``min(d, MAX_WIDTH)``: the shortest prefix of
    :func:`covering_sequence` covering every k-set (a greedy covering design of ``m_ℓ`` sets; for ``ℓ = k``
    all ``C(d, k)`` sets), if it has at most 64 sets of at most :data:`MAX_CELLS` cells; then the width whose
    design has the least :func:`predicted_error` (ties: the smaller ``ℓ``). Why the shortest cover: the
    variance model is flat in ``m`` once coverage is even (``m`` times fewer reporters per set, ``m`` times
    more sets holding each k-set), while fewer, fuller tables lose less to Norm-Sub's bias, which the model
    leaves out (measured on six correlated binary columns, n = 10^6, ε = 0.5, 1, 4, 3 collections: the
    first cover's 2-way total variation was below or within 5% of the longer designs', e.g. 0.0067 for 7
    triples against 0.0076 for all 20 at ε = 1).

    Returns ``(sets, error, candidates)``: the chosen sets (sorted), their predicted error and every
    ``(ℓ, m, error)`` considered.
    """
    cats = tuple(categories)
    n_k = math.comb(len(cats), k)
    best, candidates = None, []
    for width in range(k, min(len(cats), MAX_WIDTH) + 1):
        seq = covering_sequence(cats, k, width)
        covered: set = set()
        for m in range(1, len(seq) + 1):
            covered.update(itertools.combinations(seq[m - 1], k))
            if len(covered) == n_k:
                break
        if len(covered) < n_k or max(math.prod(cats[a] for a in V) for V in seq[:m]) > MAX_CELLS:
            continue
        err = predicted_error(cats, k, epsilon, seq[:m], n)
        candidates.append((width, m, err))
        if best is None or err < best[1]:
            best = (tuple(sorted(seq[:m])), err)
    if best is None:
        raise ValueError(f"no design of at most {MAX_SETS} attribute sets of at most {MAX_WIDTH} columns and "
                         f"{MAX_CELLS} cells covers every {k}-way marginal of categories {cats}")
    return best[0], best[1], tuple(candidates)


# -- the mechanism -----------------------------------------------------------------------------------------

def _check_categories(categories, k, strategy="all"):
    """``categories`` as ``(names, counts)`` and ``k``, validated together (one clear error each).

    With ``strategy="calm"`` the number of k-sets is not bounded (the released sets are), the columns are.
    """
    if not isinstance(categories, Mapping):
        raise TypeError(f"categories must be a mapping {{column: number of categories}}; got "
                        f"{type(categories).__name__}")
    names = tuple(categories)
    bad = [c for c in names if not isinstance(c, str) or not c]
    if bad:
        raise TypeError(f"categories: column names must be non-empty str; got {bad[0]!r}")
    counts = tuple(check_scalar(categories[c], f"categories[{c!r}]", int, low=2, high=MAX_CELLS) for c in names)
    k = check_scalar(k, "k", int, low=1, high=MAX_K)
    if len(names) < 2:
        raise ValueError(f"categories must name at least 2 columns; got {len(names)} (for one column use ldp.GRR or "
                         "ldp.OLH)")
    if k > len(names):
        raise ValueError(f"k = {k} exceeds the number of columns d = {len(names)}")
    m = math.comb(len(names), k)
    if strategy == "calm":
        if len(names) > MAX_COLUMNS:
            raise ValueError(f"strategy='calm' takes at most {MAX_COLUMNS} columns; got {len(names)}")
    elif m > MAX_SETS:
        raise ValueError(f"{len(names)} columns give C({len(names)}, {k}) = {m} attribute sets; at most {MAX_SETS} "
                         "fit a report")
    for s in itertools.combinations(range(len(names)), k):
        cells = math.prod(counts[a] for a in s)
        if cells > MAX_CELLS:
            raise ValueError(f"the set {[names[a] for a in s]} has {cells} cells; at most {MAX_CELLS} are supported")
    return names, counts, k


def _check_sets(sets, names, counts, k):
    """Released ``sets`` given by column names, as sorted column-index tuples in the order given.

    A non-empty sequence of at most :data:`MAX_SETS` distinct sets of ``k`` to :data:`MAX_WIDTH` distinct known columns
    of at most :data:`MAX_CELLS` cells, every column in one of them.
    """
    if isinstance(sets, (str, bytes, Mapping)) or not hasattr(sets, "__iter__"):
        raise TypeError(f"sets must be a sequence of column-name tuples; got {type(sets).__name__}")
    out = []
    for s in sets:
        if isinstance(s, (str, bytes, Mapping)) or not hasattr(s, "__iter__"):
            raise TypeError(f"sets: each set must be a tuple of column names; got {s!r}")
        s = tuple(s)
        unknown = [c for c in s if c not in names]
        if unknown:
            raise ValueError(f"sets: unknown column(s) {unknown} in {s}; the columns are {list(names)}")
        if len(set(s)) != len(s) or not k <= len(s) <= MAX_WIDTH:
            raise ValueError(f"sets: {s} must hold {k} to {MAX_WIDTH} distinct columns")
        idx = tuple(sorted(names.index(c) for c in s))
        if math.prod(counts[a] for a in idx) > MAX_CELLS:
            raise ValueError(f"sets: {s} has more than {MAX_CELLS} cells")
        out.append(idx)
    if not out or len(out) > MAX_SETS or len(set(out)) != len(out):
        raise ValueError(f"sets must hold 1 to {MAX_SETS} distinct sets; got {len(out)} ({len(set(out))} distinct)")
    missing = [names[a] for a in range(len(names)) if not any(a in s for s in out)]
    if missing:
        raise ValueError(f"sets: column(s) {missing} are in no set")
    return tuple(out)


class Marginals(PackedTables):
    r"""CALM-style k-way marginals of categorical columns: one report per person, consistent estimates.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in [1e-9, 20] of each person's one report (below 1e-9: a ValueError, see
        :func:`~ldpnum.multi.hdg.check_table_epsilon`).
    categories : dict
        ``{column: c}`` for 2 or more columns (str names): column values are category codes ``0..c-1``
        (``c >= 2``). Their order is the order of the columns of an array given to :meth:`privatize`.
    k : int, default 2
        Size of the marginals asked for (1, 2 or 3; at most the number of columns).
    strategy : {"all", "calm"}, default "all"
        ``"all"``: release every one of the ``C(d, k)`` sets of ``k`` columns (at most 64).
        ``"calm"``: CALM's adaptive choice of ``m`` sets of ``ℓ >= k`` columns covering every k-set (at
        most 16 columns, 64 sets of 6 columns), the width of least expected error at ``n`` people (see
        :mod:`ldpnum.multi.marginals` for the rule and its formula).
    n : int, default 1_000_000
        The planned number of people, a public parameter of the collection (like bounds) that steers
        ``strategy="calm"``.
    sets : sequence of tuples of str, optional
        Release exactly these sets of column names instead (``k`` to 6 columns each, every column in one).

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
    >>> est.marginal(("a", "b", "c")).shape   # no released set holds it: maximum entropy
    (3, 3, 2)

    CALM's choice at a large ε releases one 3-way table here (predicted error below the pairs'):

    >>> calm = ldp.Marginals(4.0, categories={"a": 3, "b": 3, "c": 2}, strategy="calm", n=a.size)
    >>> calm.sets, calm.predicted_error() < ldp.Marginals(4.0, calm.categories, n=a.size).predicted_error()
    ((('a', 'b', 'c'),), True)
    """

    name = "marginals"

    def __init__(self, epsilon: float, categories: Any, *, k: int = 2, strategy: str = "all",
                 n: int = 1_000_000, sets: Any = None) -> None:
        check_choice(strategy, "strategy", MARGINALS_STRATEGIES)
        if sets is not None and strategy != "all":
            raise ValueError(f"give either sets or strategy={strategy!r}, not both")
        names, counts, k = _check_categories(categories, k, "calm" if sets is not None else strategy)
        n = check_scalar(n, "n", int, low=1, high=1 << 62)
        chosen = _check_sets(sets, names, counts, k) if sets is not None else None
        super().__init__(epsilon, [(0.0, float(c - 1)) for c in counts])
        check_table_epsilon(self._epsilon, "Marginals")
        self._columns = names
        self._strategy, self._n = ("sets" if sets is not None else strategy), n
        if strategy == "calm":
            chosen, _, _ = calm_choice(counts, k, self._epsilon, n)
        self._plan = MarginalsPlan(counts, k, self._epsilon, chosen)

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
        """Size ``k`` of the released attribute sets (the marginals' order)."""
        return self._plan.k

    @property
    def sets(self) -> tuple[tuple[str, ...], ...]:
        """The released attribute sets by name."""
        return tuple(tuple(self._columns[a] for a in s) for s in self._plan.grids)

    @property
    def strategy(self) -> str:
        """``"all"`` (every set of ``k`` columns), ``"calm"`` (the adaptive choice) or ``"sets"`` (given)."""
        return self._strategy

    @property
    def n(self) -> int:
        """The planned number of people (a public parameter; it steers ``strategy="calm"``'s choice)."""
        return self._n

    @property
    def width(self) -> int:
        """Columns per released set (``ℓ``; ``k`` unless ``strategy="calm"`` chose wider sets)."""
        return max(len(s) for s in self._plan.grids)

    def predicted_error(self, n: int | None = None) -> float:
        """The error model of :func:`predicted_error` for this design.

        Mean expected squared L2 error of a k-way marginal's table at ``n`` people (default: the planned :attr:`n`).
        """
        n = self._n if n is None else check_scalar(n, "n", int, low=1, high=1 << 62)
        return predicted_error(self._plan.categories, self._plan.k, self._epsilon, self._plan.grids, n)

    def _spec_params(self):
        params = {"columns": self._columns, "categories": self._plan.categories, "k": self._plan.k,
                  "oracle": self.oracle_names, "layout": LAYOUT, "hash": HASH_FAMILY,
                  "g": tuple(o.g if o.hashed else 0 for o in self._plan.oracles)}
        if self._strategy != "all":
            params.update(strategy=self._strategy, n=self._n, sets=self._plan.grids)
        return params

    @classmethod
    def _from_spec(cls, spec):
        cats = dict(zip(spec.get("columns"), spec.get("categories")))
        strategy, k, cols = spec.get("strategy", "all"), spec.get("k"), spec.get("columns")
        if strategy == "all":
            return cls(spec.epsilon, cats, k=k)
        sets = spec.get("sets")
        if not isinstance(sets, tuple) or not all(isinstance(s, tuple) for s in sets):
            raise ValueError(f"{spec}: 'sets' must list the released sets")
        if strategy == "sets":
            return cls(spec.epsilon, cats, k=k, n=spec.get("n"), sets=[[cols[a] for a in s] for s in sets])
        mech = cls(spec.epsilon, cats, k=k, strategy=strategy, n=spec.get("n"))
        if sets != mech._plan.grids:
            raise ValueError(f"{spec}: its sets are not the ones strategy='calm' chooses for its parameters")
        return mech

    def __repr__(self) -> str:
        extra = {"all": "", "calm": f", strategy='calm', n={self._n!r}", "sets": f", sets={self.sets!r}"}
        return (f"Marginals(epsilon={self._epsilon!r}, categories={self.categories!r}, k={self.k!r}"
                f"{extra[self._strategy]})")

    # -- client side ----------------------------------------------------------------------------------------
    def prepare_values(self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise",
                       fill_value: Any = None, out_of_range: str = "clip") -> FloatArray:
        """Validate an ``(n, d)`` array of category codes or a DataFrame of those columns, without drawing anything.

        The array's columns are in the order of ``categories``; the DataFrame holds exactly those columns (any order).
        Codes must be integers in ``[0, c)``: anything else raises, whatever ``out_of_range`` says (``"clip"`` or
        ``"raise"``, accepted for the common interface): a category is never clipped.
        """
        check_choice(out_of_range, "out_of_range", ("clip", "raise"))
        x = select_columns(x, self._columns, name, "Marginals", "categories")
        return prepared(check_vectors, x, self._lows, self._highs, name=name, nan_policy=nan_policy,
                        fill_value=fill_value, out_of_range="raise", integral=True, columns=self._columns)

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
        """Unbiased estimates of every set's joint frequencies (shape ``(c_a, c_b, …)``) and number of reports.

        Raises ValueError when a set received no report.
        """
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
        r"""Variance of every raw cell estimate of each set, for reporters drawn from joint frequencies ``frequencies``.

        One table per set: :math:`\pi(1-\pi)/(n_j (p^*-q^*)^2)`, :math:`\pi = q^* + f (p^* - q^*)`.
        """
        out = []
        for o, f, n in zip(self._plan.oracles, frequencies, n_per):
            p, q = o.oracle.support_probabilities
            pi = q + np.asarray(f, dtype=np.float64) * (p - q)
            out.append(pi * (1 - pi) / (n * (p - q) ** 2))
        return tuple(out)

    def estimate_marginals(self, data: Reports | Aggregate, *, consistency: str = "calm",
                           bootstrap: int | None = None, rng: Any = None) -> MarginalsEstimate:
        """Estimate every released k-way marginal and make them consistent.

        Parameters
        ----------
        data : Reports or Aggregate
        consistency : {"calm", "norm-sub", "none"}, default "calm"
            ``"calm"``: Norm-Sub and the consistency step alternated (see the module docstring).
            ``"norm-sub"``: Norm-Sub on each table only (tables need not agree). ``"none"``: the raw unbiased
            tables (cells may be negative).
        bootstrap : int, optional
            Attach this many parametric bootstrap replicates (20 to 100,000; 39 or more for 95% intervals):
            each set's counts are redrawn from the fitted tables with the observed reports per set
            (:func:`ldpnum.estimation.bootstrap.resample_table_counts`, as for :meth:`ldpnum.HDG.estimate_ranges`)
            and the post-processing is re-run. Then ``marginal(cols, ci=)`` gives percentile intervals of every
            cell and ``standard_error(cols)`` the replicates' standard deviations, for the marginals of a
            released set (a maximum-entropy reconstruction is a model: refused; measured coverage in
            :meth:`~ldpnum.multi.MarginalsEstimate.marginal`).
        rng : None, int or numpy.random.Generator
            Randomness of the bootstrap's resampling (a simulation: it costs no privacy).

        Returns
        -------
        MarginalsEstimate
        """
        check_choice(consistency, "consistency", MARGINALS_CONSISTENCY)
        if bootstrap is not None:
            from ..estimation.bootstrap import check_replicates

            check_replicates(bootstrap, 1, name="bootstrap")
        agg = self._as_aggregate(data)
        est = self._fit_marginals(agg, consistency)
        if bootstrap is None:
            return est
        from ..estimation.bootstrap import bootstrap_tables

        size = 16 * sum(t.size for t in est.tables) + 4096
        reps = bootstrap_tables(self, agg, lambda a: self._fit_marginals(a, consistency), est.tables,
                                n_boot=bootstrap, rng=rng, bytes_per_replicate=size)
        import dataclasses

        return dataclasses.replace(est, replicates=reps)

    def _fit_marginals(self, agg: Aggregate, consistency: str) -> MarginalsEstimate:
        """The :class:`MarginalsEstimate` of an aggregate (no bootstrap)."""
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


def check_marginals_codes(codes: np.ndarray, spec: "Spec") -> np.ndarray:
    """Validate Marginals report codes against their spec (every :class:`~ldpnum.Reports` path).

    HDG's packed layout over the spec's attribute sets (:func:`ldpnum.multi.hdg.check_packed_codes`).
    """
    codes = check_integer_codes(codes)
    if spec.get("layout") != LAYOUT or spec.get("hash") != HASH_FAMILY:
        raise ValueError(f"{spec} has an unknown report layout")
    cats = spec.get("categories")
    sets = spec.get("sets") or itertools.combinations(range(len(cats)), spec.get("k"))
    ks = [math.prod(cats[a] for a in s) for s in sets]
    return check_packed_codes(codes, spec, ks)


register_code_check(Marginals.name, check_marginals_codes)
