r"""Adaptive hierarchical decomposition of a hierarchical histogram's noisy tree (post-processing).

A hierarchical histogram estimates every node of a fixed ``B``-ary tree, and its range answers add up the noise
of every leaf they cover, also in regions that hold almost nobody. Du et al.'s AHEAD splits a node only where
its noisy frequency passes a threshold :math:`\theta`; below it the node's mass is taken as **uniform** over its
leaves, because there the error of assuming uniformity (at most the node's small mass) is below the noise the
finer levels would add. AHEAD is interactive (the collector announces each level's decomposition before the next
group of people reports); :func:`adaptive_tree` applies the same threshold rule non-interactively, on the tree
of a :class:`~ldpnum.ranges.HierarchicalHistogram` whose levels have all been collected:

1. top-down, a node of level ``l >= 1`` is **closed** when its parent is closed or when its raw (unbiased)
   estimate, from level ``l``'s reports alone, is below :math:`\theta_l = c\,\sigma_l`, with
   :math:`\sigma_l^2` the variance of a level-``l`` estimate at frequency 0 (the least-squares weights);
2. the non-negative consistent tree (:func:`ldpnum.estimation.consistency.nonnegative`) gives every node its
   value :math:`\hat x_v`; every closed node whose parent is open (the *frontier*) spreads :math:`\hat x_v`
   evenly over its leaves; the leaves under open nodes keep their values;
3. the tree is summed up again from these leaves: consistent, non-negative, root 1.

The default multiplier is :data:`DEFAULT_THRESHOLD` ``c = 4``: a node is split only where its own level says its
mass is clearly non-zero. AHEAD's own threshold is :math:`\theta = \sqrt{(B+1)\,\mathrm{Var}}`, i.e.
``c = sqrt(B + 1)`` (2.24 for the usual ``B = 4``), derived for its interactive protocol, where a closed node's
descendants are never measured. Here they were measured, and the value spread is the non-negative tree's (which
already pools them), so the best multiplier is larger. Measured (``bench/ranges.py``: Gaussian, two-Gaussian
mixture, spiky and log-normal data, n = 10^6, 1024 leaves, ``B = 4``, ε ∈ {0.8, 2}, volumes 0.1 and 0.5, 3
collections each; range MSE relative to ``"nonnegative"``, geometric mean over the 16 cells / worst cell):
c = 2.24: 0.96 / 1.15; 3: 0.93 / 1.11; **4: 0.90 / 1.08**; 5: 0.91 / 1.09; 6: 0.92 / 1.34; 8: 0.98 / 1.49
(the worst cells are the Gaussian at ε = 0.8, volume 0.5, within one standard error of 1). Checked on 10
collections per cell (7 of them not used to choose): c = 4 gave 0.92 / 1.15 and beat ``"nonnegative"`` in 15
of 16 cells; AHEAD's c = 2.24 0.96 / 1.11 (14 of 16); c = 8 1.03 / 1.68.

Privacy: this reads only the aggregate of the hierarchical histogram's reports; it is post-processing and
costs no privacy (each report is the mechanism's, ε-LDP).

References
----------
L. Du, Z. Zhang, S. Bai, C. Liu, S. Ji, P. Cheng, J. Chen, "AHEAD: Adaptive Hierarchical Decomposition for Range
Query under Local Differential Privacy", ACM CCS 2021. Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić,
"Estimating Numerical Distributions under Local Differential Privacy", SIGMOD 2020 (HH-ADMM, the non-negative
consistent tree).
"""

import math
from typing import Any, NamedTuple

import numpy as np

from .._validation import check_scalar
from ..estimation.consistency import TreeShape, tree_from_leaves

__all__ = ["DEFAULT_THRESHOLD", "AdaptiveTree", "adaptive_tree", "ahead_threshold", "check_threshold"]

#: Default multiplier ``c`` of the threshold ``c·σ_l`` (see the module notes for the measurements).
DEFAULT_THRESHOLD = 4.0


class AdaptiveTree(NamedTuple):
    """What :func:`adaptive_tree` returns: the tree, the multiplier ``c`` used, and the frontier's size.

    The tree is one array per level, the root first; the frontier is the closed nodes whose parent is open: how many
    there are and how many leaves lie under them.
    """

    levels: tuple
    threshold: float
    n_frontier: int
    n_uniform_leaves: int


def ahead_threshold(branching: int) -> float:
    r"""AHEAD's own multiplier :math:`c = \sqrt{B + 1}` for branching factor ``B`` (for comparison)."""
    return math.sqrt(int(branching) + 1)


def check_threshold(threshold: float | None) -> float:
    """Validate ``threshold`` and return the multiplier.

    None for :data:`DEFAULT_THRESHOLD`, else a finite real ``>= 0``; 0 closes only nodes whose raw estimate is negative.
    """
    if threshold is None:
        return DEFAULT_THRESHOLD
    return check_scalar(threshold, "threshold", float, low=0, allow_none=True)


def adaptive_tree(shape: TreeShape, raw: Any, variances: Any, tree: Any, *,
                  threshold: float | None = None) -> AdaptiveTree:
    r"""The AHEAD-style adaptive tree from raw node estimates and a non-negative consistent tree.

    Parameters
    ----------
    shape : TreeShape
    raw : sequence of arrays
        Unbiased node estimates per level ``0..L`` (the root's entry is ignored).
    variances : sequence of float
        Variance of a node estimate at frequency 0 for each level ``1..L`` (``L`` values).
    tree : sequence of arrays
        The non-negative consistent tree per level ``0..L`` (its node values are spread on the frontier).
    threshold : float, optional
        The multiplier ``c`` of :math:`\theta_l = c\sigma_l` (default :data:`DEFAULT_THRESHOLD`, 4).

    Returns
    -------
    AdaptiveTree
        ``levels`` is consistent (every node the sum of its leaves), non-negative, with root 1.

    Examples
    --------
    A binary tree over 4 leaves whose right half is below the threshold: its mass 0.1 is spread evenly.

    >>> import numpy as np
    >>> from ldpnum.estimation.consistency import tree_shape
    >>> from ldpnum.ranges.adaptive import adaptive_tree
    >>> shape = tree_shape(4, 2)
    >>> tree = ([1.0], np.array([0.9, 0.1]), np.array([0.5, 0.4, 0.1, 0.0]))
    >>> raw = ([1.0], np.array([0.88, 0.05]), np.array([0.52, 0.41, 0.12, -0.03]))
    >>> res = adaptive_tree(shape, raw, [0.01, 0.01], tree, threshold=1.0)  # theta = 1 * 0.1
    >>> res.levels[-1], res.n_frontier, res.n_uniform_leaves
    (array([0.5 , 0.4 , 0.05, 0.05]), 1, 2)
    """
    if not isinstance(shape, TreeShape):
        raise TypeError(f"shape must be a TreeShape; got {type(shape).__name__}")
    c = check_threshold(threshold)
    L = shape.n_levels
    raw = [np.asarray(a, dtype=np.float64) for a in raw]
    tree = [np.asarray(a, dtype=np.float64) for a in tree]
    sig = np.sqrt(np.asarray(variances, dtype=np.float64))
    if len(raw) != L + 1 or len(tree) != L + 1 or sig.shape != (L,):
        raise ValueError(f"need {L + 1} levels of raw estimates and of the tree and {L} variances; got "
                         f"{len(raw)}, {len(tree)} and {sig.size}")
    for l in range(1, L + 1):
        if raw[l].shape != (shape.counts[l],) or tree[l].shape != (shape.counts[l],):
            raise ValueError(f"level {l} must have {shape.counts[l]} nodes")
    if not (np.all(np.isfinite(sig)) and np.all(sig > 0)):
        raise ValueError("variances must be finite and positive")
    n = shape.n_leaves
    leaves = tree[L].copy()
    if leaves.min() < 0:
        raise ValueError("tree must be non-negative (the non-negative consistent tree)")
    closed = np.zeros(1, dtype=bool)
    assigned = np.zeros(n, dtype=bool)
    leaf = np.arange(n)
    n_frontier = 0
    for l in range(1, L + 1):
        parent_closed = closed[shape.parent_index(l)]
        closed = parent_closed | (raw[l] < c * sig[l - 1])
        frontier = closed & ~parent_closed
        if not frontier.any():
            continue
        n_frontier += int(frontier.sum())
        size = shape.node_sizes[l]
        node = leaf // size
        under = frontier[node]
        width = np.minimum(size, n - node * size)       # the last node of a ragged level is narrower
        leaves[under] = tree[l][node[under]] / width[under]
        assigned |= under
    levels = tree_from_leaves(shape, leaves)
    return AdaptiveTree((np.array([1.0]),) + tuple(levels[1:]), c, n_frontier, int(assigned.sum()))
