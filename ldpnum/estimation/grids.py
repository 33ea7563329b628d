r"""HDG's post-processing (costs no privacy).

Its grids made consistent, shrunk toward independence and turned into response matrices.

:class:`ldpnum.HDG` reports one cell of one grid per person: ``d`` 1-D grids of ``g1`` cells (one per
attribute) and a 2-D grid of ``g2 × g2`` cells per pair of attributes, in that order. Everything after the
unbiased cell estimates is here, as functions of the grids and their variances:
:func:`estimate_grids` runs the whole procedure that :meth:`ldpnum.HDG.estimate_ranges` describes (see
:mod:`ldpnum.multi.hdg` for the reasons and the measurements). Consistency between grids is the shared
routine of :mod:`ldpnum.estimation.tables` with each grid as a table (:func:`grid_tables`: a 1-D grid is a
table of the 2-D grids' margins); the shrinkage and the response matrices are :mod:`ldpnum.estimation.joint`.

References
----------
J. Yang, T. Wang, N. Li, X. Cheng, S. Su, "Answering Multi-Dimensional Range Queries under Local
Differential Privacy", PVLDB 14(3), 2020.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import tables as _tables
from .joint import fit_copula_correlation, response_matrix, shrink_to_independence, toward_independence
from .postprocess import norm_sub

__all__ = ["HDG_CONSISTENCY", "GridEstimates", "consistency_step", "estimate_grids", "grid_tables",
           "make_consistent", "max_inconsistency", "shrink_pairs"]

#: The post-processing choices of :func:`estimate_grids` (``consistency`` of ``HDG.estimate_ranges``).
HDG_CONSISTENCY = ("hdg", "paper", "norm-sub", "none")


def grid_tables(ests: Sequence[NDArray[np.float64]], grids: Sequence[tuple[int, ...]], d: int, g1: int,
                g2: int) -> tuple[list[NDArray[np.float64]], list[tuple[int, ...]]]:
    """HDG's grids as tables of :mod:`ldpnum.estimation.tables`: ``(tables, sets)``.

    A 2-D grid of attributes ``(a, b)`` is a ``(g2, g2)`` table over the labels ``(a, b)`` (their coarse intervals); the
    1-D grid of ``t`` is a ``(g2, g1/g2)`` table over ``(t, d + t)`` (``t``'s coarse intervals and the fine cells inside
    each), a view of the grid where it can be: its margin over ``t`` is the 2-D grids'.
    """
    r = g1 // g2
    tables = [np.reshape(e, (g2, r)) if len(attrs) == 1 else e for e, attrs in zip(ests, grids)]
    sets = [(attrs[0], d + attrs[0]) if len(attrs) == 1 else tuple(attrs) for attrs in grids]
    return tables, sets


def consistency_step(ests: Sequence[NDArray[np.float64]], grids: Sequence[tuple[int, ...]], d: int, g1: int,
                     g2: int, variances: Sequence[float] | None = None) -> None:
    r"""One pass of the consistency over every attribute (in place).

    Grids are lists of arrays (1-D grids of length ``g1``, 2-D grids of shape ``(g2, g2)``).

    An interval's mass ``T_i`` in grid ``i`` is a sum of ``C_i`` cells of variance ``σ_i²``
    (``variances[i]``), so its variance is ``C_i σ_i²`` and the least-squares common value is
    :math:`T = \sum_i T_i/(C_i σ_i^2) / \sum_i 1/(C_i σ_i^2)` (as :class:`ldpnum.Marginals` weighs its
    tables: both are :func:`ldpnum.estimation.tables.consistency_step` over :func:`grid_tables`).
    ``variances=None``: equal variances, the paper's weights ``1/C_i``. The grids' variances differ when
    their oracles do (at ε = 4, n = 10^6: GRR 1-D grids of 64 cells, OLH 2-D grids of 256).
    """
    tables, sets = grid_tables(ests, grids, d, g1, g2)
    _tables.consistency_step(tables, sets, variances)
    for e, t in zip(ests, tables):
        if not np.may_share_memory(e, t):  # a 1-D grid that could not be viewed as a table
            e[...] = t.reshape(np.shape(e))


def max_inconsistency(ests: Sequence[NDArray[np.float64]], grids: Sequence[tuple[int, ...]], d: int, g1: int,
                      g2: int) -> float:
    """Largest difference between two grids' masses of one coarse interval of one attribute."""
    return _tables.max_inconsistency(*grid_tables(ests, grids, d, g1, g2))


def make_consistent(raw: Sequence[NDArray[np.float64]], grids: Sequence[tuple[int, ...]], d: int, g1: int,
                    g2: int, *,
                    variances: Sequence[float] | None = None, tol: float = 1e-12,
                    max_iter: int = 1000) -> tuple[list[NDArray[np.float64]], int, bool]:
    """Non-negativity and consistency alternated until no cell is below ``-tol``; then clipping, and Norm-Sub last.

    The test is after a consistency pass; the remaining negatives are clipped. See :mod:`ldpnum.multi.hdg`;
    :func:`ldpnum.estimation.tables.make_consistent` over :func:`grid_tables`.

    ``variances`` (each grid's raw cell variance at frequency 0, :meth:`ldpnum.HDG.grid_variances`): the
    non-negativity step is :func:`~ldpnum.estimation.postprocess.noise_weighted_norm_sub` with
    ``σ_i = sqrt(variances[i])`` and the consistency weighs the grids by their variances
    (:func:`consistency_step`); ``None``: the paper's procedure (Norm-Sub, weights ``1/C_i``).

    Returns ``(grids, n_iter, converged)``: new arrays (1-D grids of length ``g1``, 2-D of ``(g2, g2)``).
    """
    tables, sets = grid_tables(raw, grids, d, g1, g2)
    out, n_iter, converged = _tables.make_consistent(
        tables, sets, variances, nonnegative="norm-sub" if variances is None else "noise-weighted", tol=tol,
        max_iter=max_iter)
    return [t.reshape(np.shape(r)) for t, r in zip(out, raw)], n_iter, converged


def shrink_pairs(raw: Sequence[NDArray[np.float64]], grids: Sequence[tuple[int, ...]],
                 cell_variances: Sequence[ArrayLike]) -> tuple[tuple[NDArray[np.float64], ...], tuple[float,
                 ...]]:
    """Every 2-D grid of ``raw`` shrunk by :func:`~ldpnum.estimation.joint.shrink_to_independence`.

    Each grid is shrunk with its cells' variances; returns the grids (the 1-D grids as they were) and the weights (one
    per pair).
    """
    out, weights = list(raw), []
    for j, attrs in enumerate(grids):
        if len(attrs) == 2:
            out[j], w = shrink_to_independence(raw[j], cell_variances[j])
            weights.append(w)
    return tuple(out), tuple(weights)


class GridEstimates(NamedTuple):
    """What :func:`estimate_grids` returns."""

    grids: tuple                 # every grid after the post-processing (1-D: g1 cells; 2-D: (g2, g2))
    joints: tuple                # each pair's response matrix (the raw 2-D grid with consistency="none")
    n_iter: int                  # Norm-Sub/consistency rounds
    converged: bool              # whether consistency left no negative cell
    shrinkage: tuple             # each pair's shrinkage weight (empty without shrinkage)
    copula_correlations: tuple   # each pair's fitted copula correlation (empty unless within_cell="copula")


def estimate_grids(raw: Sequence[NDArray[np.float64]], grids: Sequence[tuple[int, ...]], d: int, g1: int,
                   g2: int, *, variances: Sequence[float], cell_variances: Sequence[ArrayLike],
                   consistency: str = "hdg", shrink: bool = True,
                   within_cell: str = "copula") -> GridEstimates:
    """HDG's post-processing of its raw (unbiased) grids, as :meth:`ldpnum.HDG.estimate_ranges` describes.

    Parameters
    ----------
    raw : sequence of arrays
        The unbiased grids: the ``d`` 1-D grids (``g1`` cells), then the pairs' 2-D grids (``(g2, g2)``), in
        the order of ``grids``.
    grids : sequence of tuples
        The attributes of each grid: ``(t,)`` for the 1-D grids, then ``(a, b)`` with ``a < b``.
    d, g1, g2 : int
        Attributes and granularities.
    variances : sequence of float
        Each grid's raw cell variance at frequency 0 (the consistency's weights with ``"hdg"``).
    cell_variances : sequence of arrays
        Every raw cell's variance (the shrinkage's noise).
    consistency : {"hdg", "paper", "norm-sub", "none"}, default "hdg"
        ``"hdg"``: noise-weighted Norm-Sub and variance-weighted consistency; ``"paper"``: Norm-Sub and
        the weights ``1/C_i``; ``"norm-sub"``: Norm-Sub on each grid only; ``"none"``: the raw grids (the
        2-D grids are the joints; no response matrix).
    shrink : bool, default True
        Shrink every raw 2-D grid toward independence first (:func:`shrink_pairs`); after the
        non-negativity steps each pair's interaction is scaled by its weight once more
        (:func:`~ldpnum.estimation.joint.toward_independence`).
    within_cell : {"copula", "interpolated", "uniform"}, default "copula"
        The response matrices' start (:func:`~ldpnum.estimation.joint.response_matrix`); with ``"copula"``
        the correlation is fitted to the raw (shrunk) 2-D grid.

    Returns
    -------
    GridEstimates
    """
    shrinkage: tuple = ()
    if shrink:
        raw, shrinkage = shrink_pairs(raw, grids, cell_variances)
    n_iter, converged = 0, True
    if consistency == "none":
        ests = [np.array(r) for r in raw]
    elif consistency == "norm-sub":
        ests = [norm_sub(r.ravel()).reshape(r.shape) for r in raw]
    else:
        ests, n_iter, converged = make_consistent(raw, grids, d, g1, g2,
                                                  variances=variances if consistency == "hdg" else None)
    m = len(grids)
    if consistency != "none":  # the non-negativity step adds interaction back: scaled again by w
        for j, w in zip(range(d, m), shrinkage):
            ests[j] = toward_independence(ests[j], w)
    joints, rhos = [], []
    if consistency == "none":
        joints = list(ests[d:])
    else:
        for j in range(d, m):
            a, b = grids[j]
            rho = None
            if within_cell == "copula":  # fitted to the raw (unbiased) grid, see fit_copula_correlation;
                # after the shrinkage, so that a pair shrunk toward independence gets a correlation near 0
                rho = fit_copula_correlation(ests[a], ests[b], raw[j])
                rhos.append(rho)
            M, _, _ = response_matrix(ests[a], ests[b], ests[j], start=within_cell, rho=rho)
            joints.append(M)
    return GridEstimates(tuple(ests), tuple(joints), n_iter, converged, shrinkage, tuple(rhos))
