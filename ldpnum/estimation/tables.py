r"""Consistency of estimated tables that share margins (post-processing; costs no privacy).

One routine for every family that releases several tables of the same people's attributes: the k-way
marginals of :class:`ldpnum.Marginals` (tables over sets of columns) and the grids of :class:`ldpnum.HDG`
(a 2-D grid is a table over two attributes' coarse intervals; a 1-D grid is a table over one attribute's
coarse intervals and, inside each, its ``g1/g2`` fine cells, so that its margin over the coarse axis is the
2-D grids' margin of that attribute).

A **table** is an array whose axes are labelled by ``sets[i]`` (one label per axis, e.g. column indices).
Two tables holding the labels ``A`` both estimate the table's projection onto ``A`` (the sum over its
other axes). **Consistency** makes every such pair agree: for every label set ``A`` held by two or more
tables, smallest first (then in lexicographic order, :func:`shared_subsets`), each holder ``V`` projects
onto ``A`` (``T_V``, each entry a sum of ``C_V = cells(V)/cells(A)`` cells), the projections are averaged
with weights inversely proportional to their variances,

.. math::

    T = \frac{\sum_V w_V T_V}{\sum_V w_V}, \qquad w_V = \frac{1}{C_V \sigma_V^2}

(``σ_V²`` the variance of one cell of table ``V``; equal variances when none are given: the weights
``1/C_V``), which is the least-squares common value, and every cell of ``V`` moves by
:math:`(T - T_V)/C_V` (Qardaji, Yang and Li's step). Processing smaller ``A`` first keeps them consistent
while larger ones are fixed. :func:`make_consistent` alternates a non-negativity step (Norm-Sub, or the
noise-weighted Norm-Sub of :func:`ldpnum.estimation.postprocess.noise_weighted_norm_sub`) with a consistency
pass until no cell is negative after a pass (then the tables agree exactly), ending with Norm-Sub (Wang et
al.'s procedure).

References
----------
W. Qardaji, W. Yang, N. Li, "PriView: Practical Differentially Private Release of Marginal Contingency
Tables", SIGMOD 2014 (the consistency step). Z. Zhang, T. Wang, N. Li, S. He, J. Chen, "CALM: Consistent
Adaptive Local Marginal for Marginal Release under Local Differential Privacy", ACM CCS 2018. J. Yang,
T. Wang, N. Li, X. Cheng, S. Su, "Answering Multi-Dimensional Range Queries under Local Differential
Privacy", PVLDB 14(3), 2020 (the grids' consistency). T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Škorić,
N. Li, "Locally Differentially Private Frequency Estimation with Consistency", NDSS 2020 (Norm-Sub and
the alternation).

Examples
--------
Two 2-way tables over columns ``(0, 1)`` and ``(1, 2)`` disagree on column 1's margin; one pass makes
them agree (here with equal variances and equal cell counts: both move to the mean):

>>> import numpy as np
>>> t01 = np.array([[0.1, 0.2], [0.3, 0.4]])      # column 1's margin: [0.4, 0.6]
>>> t12 = np.array([[0.3, 0.2], [0.25, 0.25]])    # column 1's margin: [0.5, 0.5]
>>> consistency_step([t01, t12], [(0, 1), (1, 2)])
>>> project(t01, (0, 1), (1,)), project(t12, (1, 2), (1,))
(array([0.45, 0.55]), array([0.45, 0.55]))
>>> round(max_inconsistency([t01, t12], [(0, 1), (1, 2)]), 12)
0.0
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice
from .postprocess import noise_weighted_norm_sub, norm_sub

__all__ = ["NONNEGATIVE", "alternate_consistency", "consistency_step", "make_consistent", "max_inconsistency",
           "project", "shared_subsets"]

#: The non-negativity steps :func:`make_consistent` alternates with consistency.
NONNEGATIVE = ("norm-sub", "noise-weighted")


def project(table: NDArray[np.float64], attrs: Sequence[Any], sub: Sequence[Any]) -> NDArray[np.float64]:
    """The projection of ``table`` (axes labelled ``attrs``) onto the labels ``sub``: the sum over the other axes.

    ``sub`` is a subset, in the order of ``attrs``.
    """
    return table.sum(axis=tuple(i for i, a in enumerate(attrs) if a not in sub))


def _shift(table, attrs, sub, delta):
    """Add ``delta / C`` to every cell (in place), ``delta`` indexed by ``sub``'s cells.

    ``C`` is the number of cells of ``table`` per cell of ``sub`` (an integer).
    """
    shape = [s if a in sub else 1 for a, s in zip(attrs, table.shape)]
    table += (delta / (table.size // delta.size)).reshape(shape)


def shared_subsets(sets: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Every non-empty label set contained in two or more of ``sets``, smallest first (then lexicographic)."""
    out: set[tuple[Any, ...]] = set()
    for s, t in itertools.combinations(sets, 2):
        common = tuple(sorted(set(s) & set(t)))
        for r in range(1, len(common) + 1):
            out.update(itertools.combinations(common, r))
    return sorted(out, key=lambda a: (len(a), a))


def consistency_step(tables: Sequence[NDArray[np.float64]], sets: Sequence[Sequence[Any]],
                     variances: Sequence[float] | None = None) -> None:
    """One pass of the consistency step over every shared label set (in place; see the module docstring).

    Parameters
    ----------
    tables : list of ndarray
        Float arrays, one axis per label of the matching set; changed in place.
    sets : sequence of tuples
        The labels of each table's axes (hashable, orderable; a label names the same axis, of the same
        length, in every table holding it).
    variances : sequence of float, optional
        Each table's cell variance (the weights ``1/(C_V σ_V²)``); ``None``: equal variances, weights
        ``1/C_V``.
    """
    for sub in shared_subsets(sets):
        holders = [i for i, s in enumerate(sets) if set(sub) <= set(s)]
        masses = [project(tables[i], sets[i], sub) for i in holders]
        weights = np.array([T.size / tables[i].size for i, T in zip(holders, masses)])  # 1 / C_V
        if variances is not None:
            weights = weights / np.array([variances[i] for i in holders])
        target = sum(w * T for w, T in zip(weights, masses)) / weights.sum()
        for i, T in zip(holders, masses):
            _shift(tables[i], sets[i], sub, target - T)


def max_inconsistency(tables: Sequence[NDArray[np.float64]], sets: Sequence[Sequence[Any]]) -> float:
    """Largest difference between two tables' projections onto a label set they share (0 when none)."""
    worst = 0.0
    for sub in shared_subsets(sets):
        stack = np.stack([project(t, s, sub) for t, s in zip(tables, sets) if set(sub) <= set(s)])
        worst = max(worst, float((stack.max(axis=0) - stack.min(axis=0)).max()))
    return worst


def _norm_sub_table(i: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Norm-Sub of one flattened table (the default non-negativity step; ``i`` is the table's index)."""
    return norm_sub(x)


def alternate_consistency(raw: Sequence[ArrayLike], step: Callable[[list[NDArray[np.float64]]], None], *,
                          tol: float = 1e-12, max_iter: int = 1000,
                          nonneg: Callable[[int, NDArray[np.float64]], NDArray[np.float64]] | None = None
                          ) -> tuple[list[NDArray[np.float64]], int, bool]:
    """A non-negativity step on every table, then a consistency pass, until no cell is below ``-tol``; Norm-Sub last.

    The non-negativity step is ``nonneg(i, flat_table)`` (default Norm-Sub), the consistency pass ``step(tables)`` (in
    place); the test follows a pass.

    Returns ``(tables, n_iter, converged)``: new float64 arrays of the shapes of ``raw``.
    """
    if nonneg is None:
        nonneg = _norm_sub_table
    ests = [np.array(r, dtype=np.float64, copy=True) for r in raw]
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        for i, e in enumerate(ests):
            ests[i] = nonneg(i, e.ravel()).reshape(e.shape)
        step(ests)
        if min(float(e.min()) for e in ests) >= -tol:
            converged = True
            break
    for i, e in enumerate(ests):
        ests[i] = norm_sub(e.ravel()).reshape(e.shape)
    return ests, n_iter, converged


def make_consistent(raw: Sequence[ArrayLike], sets: Sequence[Sequence[Any]],
                    variances: Sequence[float] | None = None, *, nonnegative: str = "norm-sub",
                    tol: float = 1e-12, max_iter: int = 1000) -> tuple[list[NDArray[np.float64]], int, bool]:
    """Non-negative, consistent tables from unbiased ones.

    A non-negativity step and :func:`consistency_step` alternated until no cell is below ``-tol`` after a consistency
    pass, then Norm-Sub last.

    Parameters
    ----------
    raw : sequence of arrays
        The tables (not changed), axes labelled by ``sets``.
    sets : sequence of tuples
        See :func:`consistency_step`.
    variances : sequence of float, optional
        Each table's cell variance at frequency 0: the consistency's weights (``None``: equal variances).
    nonnegative : {"norm-sub", "noise-weighted"}, default "norm-sub"
        ``"noise-weighted"``: :func:`~ldpnum.estimation.postprocess.noise_weighted_norm_sub` with each
        table's ``σ = sqrt(variances[i])`` (needs ``variances``).
    tol, max_iter
        Stopping rule of the alternation.

    Returns
    -------
    (tables, n_iter, converged)
        New float64 arrays of the shapes of ``raw``; the number of rounds; whether the last consistency
        pass left no cell below ``-tol``.
    """
    check_choice(nonnegative, "nonnegative", NONNEGATIVE)
    nonneg = None
    if nonnegative == "noise-weighted":
        if variances is None:
            raise ValueError("make_consistent: nonnegative='noise-weighted' needs the tables' variances")
        sigmas = [math.sqrt(v) for v in variances]

        def nonneg(i: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
            return noise_weighted_norm_sub(x, sigmas[i])
    return alternate_consistency(raw, lambda tables: consistency_step(tables, sets, variances), tol=tol,
                                 max_iter=max_iter, nonneg=nonneg)
