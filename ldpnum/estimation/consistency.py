r"""Tree shapes, range decompositions and consistency for hierarchical histograms (post-processing).

A :class:`TreeShape` is a ``B``-ary tree over ``n_leaves`` equal leaves: level ``l = 0..L`` (0 the root, ``L``
the leaves, ``L = ceil(log_B n_leaves)``) has nodes of ``B**(L-l)`` leaves each, and ``ceil(n_leaves /
B**(L-l))`` of them. When ``n_leaves`` is not a power of ``B`` the tree is *ragged*: it is the complete tree
over ``B**L`` leaves, padded on the right, with the nodes that cover only padding removed (they hold nobody,
so no one reports on them); the last node of a level then covers fewer leaves.

Consistency (a tree is *consistent* when every internal node equals the sum of its children and the root
is 1), given unbiased node estimates :math:`\tilde x_v` with variances :math:`\sigma_v^2`:

``least_squares``
    :math:`\min \sum_v (\hat x_v - \tilde x_v)^2 / \sigma_v^2` over consistent trees: Hay et al.'s
    constrained inference (PVLDB 2010), in its generalised two-pass form for per-node variances (Cython,
    :func:`ldpnum._kernels.server_tree.tree_solve`; exact, no iteration). With weights that do not depend on the
    estimates it is a linear map fixing every consistent tree, so it keeps the node estimates unbiased.
``nonnegative``
    the same objective with :math:`\hat x \ge 0` in addition: HH-ADMM of Li et al. (SIGMOD 2020; the
    lecture slides "Local Differential Privacy (Part 1)", "Improvement on HH": minimise
    :math:`\frac12\|\hat x - \tilde x\|^2` s.t. :math:`A\hat x = 0, \hat x \ge 0, \hat x_0 = 1`), weighted by
    the inverse variances so that it reduces to ``least_squares`` whenever that is already non-negative (and
    to HH-ADMM's unweighted objective when all variances are equal). Solved by ADMM with polishing, finished
    if needed by an exact active-set method (Cython, :func:`ldpnum._kernels.server_tree.hh_admm` /
    ``active_set``); see :func:`nonnegative`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_scalar

__all__ = ["TreeShape", "tree_shape", "least_squares", "nonnegative", "NonnegativeResult", "decompose",
           "range_sums", "tree_from_leaves", "is_consistent"]

#: Largest supported leaf count (every level's oracle then has at most 2**16 categories).
MAX_LEAVES = 1 << 16


@dataclass(frozen=True)
class TreeShape:
    """Shape of a (possibly ragged) ``branching``-ary tree over ``n_leaves`` leaves.

    Attributes
    ----------
    n_leaves, branching, n_levels : int
        Leaves, branching factor ``B`` and height ``L`` (levels ``1..L`` below the root).
    node_sizes : tuple of int
        Leaves per node at levels ``0..L`` (``B**(L-l)``; the last node of a level may cover fewer).
    counts : tuple of int
        Nodes per level ``0..L`` (``counts[0] == 1``, ``counts[L] == n_leaves``).
    starts : tuple of int
        Offset of each level in the level-by-level node array (root at 0), plus the total at the end.
    """

    n_leaves: int
    branching: int

    @cached_property
    def n_levels(self) -> int:
        """Height ``L``: levels ``1..L`` below the root."""
        return _height(self.n_leaves, self.branching)

    @cached_property
    def node_sizes(self) -> tuple[int, ...]:
        """Leaves per node at each level ``0..L`` (``B**(L-l)``)."""
        L = self.n_levels
        return tuple(self.branching ** (L - l) for l in range(L + 1))

    @cached_property
    def counts(self) -> tuple[int, ...]:
        """Nodes per level ``0..L``."""
        return tuple(-(-self.n_leaves // s) for s in self.node_sizes)

    @cached_property
    def starts(self) -> tuple[int, ...]:
        """Offset of each level in the level-by-level node array, plus the total at the end."""
        return tuple(int(v) for v in np.concatenate(([0], np.cumsum(self.counts))))

    @cached_property
    def n_nodes(self) -> int:
        """Total number of nodes, the root included."""
        return self.starts[-1]

    def starts_array(self) -> NDArray[np.int64]:
        """The level offsets :attr:`starts` as an int64 array."""
        return np.array(self.starts, dtype=np.int64)

    def split(self, flat: NDArray[Any]) -> tuple[NDArray[Any], ...]:
        """Split a level-by-level node array into one array per level (views)."""
        s = self.starts
        return tuple(flat[s[l]:s[l + 1]] for l in range(self.n_levels + 1))

    def parent_index(self, level: int) -> NDArray[np.int64]:
        """Index (within level ``level - 1``) of the parent of every node of ``level``."""
        return np.arange(self.counts[level]) // self.branching


def _height(n_leaves, branching):
    L, size = 1, branching
    while size < n_leaves:
        size *= branching
        L += 1
    return L


def tree_shape(n_leaves: int, branching: int) -> TreeShape:
    """The :class:`TreeShape` of ``n_leaves`` leaves and branching factor ``branching`` (validated ints)."""
    return TreeShape(int(n_leaves), int(branching))


def tree_from_leaves(shape: TreeShape, leaves: ArrayLike) -> tuple[NDArray[np.float64], ...]:
    """The consistent tree (tuple of level arrays) whose leaves are ``leaves``.

    Every node is the sum of its leaves, summed bottom-up.
    """
    levels: list[NDArray[Any]] = [np.asarray(leaves, dtype=np.float64)]
    for l in range(shape.n_levels, 0, -1):
        levels.append(np.bincount(shape.parent_index(l), levels[-1], minlength=shape.counts[l - 1]))
    return tuple(levels[::-1])


def is_consistent(shape: TreeShape, levels: Sequence[NDArray[Any]], *, atol: float = 1e-12) -> bool:
    """Whether every internal node equals the sum of its children within ``atol``."""
    for l in range(shape.n_levels, 0, -1):
        sums = np.bincount(shape.parent_index(l), levels[l], minlength=shape.counts[l - 1])
        if not np.all(np.abs(sums - levels[l - 1]) <= atol):  # np.allclose(rtol=0), without its overhead
            return False
    return True


def _flatten(shape, estimates, variances):
    obs = np.concatenate([np.asarray(e, dtype=np.float64) for e in estimates])
    var = np.concatenate([np.broadcast_to(np.asarray(v, dtype=np.float64), (c,))
                          for v, c in zip(variances, shape.counts)])
    if obs.shape != (shape.n_nodes,):
        raise ValueError(f"estimates must hold {shape.counts} nodes per level; "
                         f"got {[np.size(e) for e in estimates]}")
    if not (np.all(np.isfinite(obs[1:])) and np.all(np.isfinite(var[1:])) and np.all(var[1:] > 0)):
        raise ValueError("node estimates must be finite with finite positive variances below the root")
    return np.ascontiguousarray(obs), np.ascontiguousarray(var)


def least_squares(shape: TreeShape, estimates: Sequence[ArrayLike], variances: Sequence[ArrayLike], *,
                  root: float = 1.0) -> tuple[NDArray[np.float64], ...]:
    r"""The least-squares consistent tree: Hay et al.'s constrained inference with per-node variances.

    Parameters
    ----------
    shape : TreeShape
    estimates : sequence of arrays
        Node estimates per level ``0..L`` (the root's entry is ignored: the root is ``root``).
    variances : sequence of float or arrays
        Variance of each node's estimate per level (the root's entry is ignored); only their ratios matter.
    root : float, default 1.0
        The known total.

    Returns
    -------
    tuple of ndarray
        The consistent tree, one array per level, minimising :math:`\sum_v (\hat x_v - \tilde x_v)^2 /
        \sigma_v^2` with :math:`\hat x_0` = ``root``.

    Notes
    -----
    Two passes, O(nodes). Bottom-up, :math:`z_v` is the inverse-variance average of :math:`\tilde x_v` and
    :math:`\sum_{c} z_c` over the children (variances :math:`\sigma_v^2` and :math:`\sum_c w_c`), with
    variance :math:`w_v`; leaves start at :math:`z = \tilde x`, :math:`w = \sigma^2`. Top-down,
    :math:`\hat x_c = z_c + (w_c / \sum_{c'} w_{c'}) (\hat x_v - \sum_{c'} z_{c'})`. With equal variances per
    level in a complete tree this is Hay et al.'s closed form; in general it is the exact generalised
    least-squares solution (tested against a dense solve).
    """
    from .._kernels.server_tree import tree_solve

    obs, var = _flatten(shape, estimates, variances)
    var[0] = 0.0
    out = np.empty(shape.n_nodes)
    tree_solve(obs, var, shape.starts_array(), shape.branching, float(root), out)
    return tuple(a.copy() for a in shape.split(out))


class NonnegativeResult(NamedTuple):
    """The non-negative consistent tree and how it was found."""

    levels: tuple
    n_iter: int          # ADMM iterations
    n_active_set: int    # active-set iterations after ADMM (0 when a polish succeeded)
    converged: bool      # True when the KKT conditions hold (to rounding)
    method: str          # "polish" (ADMM + polish), "active-set" (ADMM, then active set) or "lsq"


#: Defaults of :func:`nonnegative` (chosen on Beta(5,2) and flight-time trees, 1024 leaves, ε ∈ [0.5, 4]).
ADMM_RHO = 2.0
ADMM_MAX_ITER = 2000
ADMM_EPS_ABS = 1e-12
ADMM_EPS_REL = 1e-9
POLISH_EVERY = 10
KKT_TOL = 1e-9


def nonnegative(shape: TreeShape, estimates: Sequence[ArrayLike], variances: Sequence[ArrayLike], *,
                root: float = 1.0, rho: float | None = None, max_iter: int = ADMM_MAX_ITER,
                polish_every: int = POLISH_EVERY, eps_abs: float = ADMM_EPS_ABS,
                eps_rel: float = ADMM_EPS_REL,
                kkt_tol: float = KKT_TOL) -> NonnegativeResult:
    r"""The non-negative consistent tree closest to the estimates (weighted HH-ADMM).

    Solves :math:`\min \sum_v (\hat x_v - \tilde x_v)^2/\sigma_v^2` subject to parent = sum of children,
    :math:`\hat x \ge 0` and :math:`\hat x_0` = ``root``.

    Algorithm and convergence:

    1. If the least-squares tree is already non-negative it is the answer (``method="lsq"``, 0 iterations).
    2. HH-ADMM (seed 002) on the node vector: the x-step is the least-squares consistent tree closest to the
       observations and to ``z - u`` (one two-pass solve, weights ``σ_min²/σ_v²`` plus ``rho``), the z-step
       clips every node at zero; ``rho`` starts at ``rho`` (default ``ADMM_RHO`` times the median weight) and
       is doubled or halved every 10 iterations when one residual exceeds the other tenfold (Boyd et al.
       2011, §3.4.1).
    3. Every ``polish_every`` iterations, a polish: the leaves where ``z == 0`` are fixed at zero, the rest
       solved exactly; if the solution is non-negative and every fixed leaf's KKT multiplier is
       ``>= -kkt_tol·scale`` (``scale`` the largest gradient entry), it is the exact optimum and ADMM stops
       (``method="polish"``). Measured (Beta(5,2) and flight times, n = 1e5–1e7, ε = 0.5–4, per-level GRR):
       20–50 ADMM iterations at 1024 leaves (< 2 ms), 80–540 at 65536 leaves (50–400 ms).
    4. If ADMM meets its residual tolerances (``eps_abs``, ``eps_rel``, as in Boyd et al. §3.3.1) or
       ``max_iter`` without a successful polish, the primal active-set method finishes from ADMM's
       non-negative iterate (renormalised): each step is one exact solve and either fixes one more leaf at
       zero or releases the fixed leaf with the most negative multiplier; the objective decreases strictly,
       so it terminates (cap ``10 n_leaves + 100`` steps) at the exact optimum (``method="active-set"``).
       Measured on random noisy trees of 8–4096 leaves: 22% of solves end here, after at most 94 steps
       (from a cold start it needs about as many steps as there are zero leaves: 100–400 at 1024 leaves).

    Returns
    -------
    NonnegativeResult
        ``levels`` is consistent to rounding (internal nodes are the sums of the clipped leaves), exactly
        non-negative, with the root equal to ``root`` to rounding.
    """
    from .._kernels.server_tree import active_set, hh_admm, tree_solve

    obs, var = _flatten(shape, estimates, variances)
    var[0] = 0.0
    starts = shape.starts_array()
    root = float(root)
    lsq = np.empty(shape.n_nodes)
    tree_solve(obs, var, starts, shape.branching, root, lsq)
    s0 = starts[-2]
    if lsq[s0:].min() >= 0.0:
        return NonnegativeResult(_rooted(shape, lsq[s0:].copy(), root), 0, 0, True, "lsq")
    if rho is None:
        rho = ADMM_RHO * float(np.median(var[1:].min() / var[1:]))
    out = np.empty(shape.n_nodes)
    n_iter, status, _ = hh_admm(obs, var, starts, shape.branching, root, float(rho), int(max_iter),
                                float(eps_abs), float(eps_rel), int(polish_every), float(kkt_tol), out)
    n_as = 0
    if status == 1:
        method, converged = "polish", True
    else:
        leaves = np.maximum(out[s0:], 0.0)
        total = leaves.sum()
        start = leaves * (root / total) if total > 0 else np.full(shape.n_leaves, root / shape.n_leaves)
        n_as, converged = active_set(obs, var, starts, shape.branching, root, np.ascontiguousarray(start),
                                     10 * shape.n_leaves + 100, float(kkt_tol), out)
        method = "active-set"
    leaves = np.maximum(out[s0:], 0.0)
    return NonnegativeResult(_rooted(shape, leaves, root), int(n_iter), int(n_as), bool(converged), method)


def _rooted(shape, leaves, root):
    """The tree summed up from ``leaves``, with the root stated exactly (the sum agrees to rounding)."""
    levels = tree_from_leaves(shape, leaves)
    return (np.array([root]),) + levels[1:]


# -- range queries -----------------------------------------------------------------------------------------

def decompose(shape: TreeShape, a: ArrayLike, b: ArrayLike) -> list[Any]:
    """The minimal set of nodes covering leaves ``[a, b)``, level by level.

    Returns a list over levels ``0..L`` of ``(starts, stops)`` arrays: at level ``l`` the nodes
    ``starts..stops-1`` (within the level) are used; the two pieces per level (left and right fringe) are
    given as two half-open runs, ``(left_lo, left_hi, right_lo, right_hi)``. Vectorised over query arrays.

    Greedy bottom-up: at each level the nodes before the first complete parent and after the last complete
    parent are taken; the parents in between go one level up. A run ending at the level's last node
    counts as ending at a parent boundary (ragged trees). At most ``2(B-1)`` nodes per level.
    """
    B = shape.branching
    a = np.array(a, dtype=np.int64, copy=True)
    b = np.array(b, dtype=np.int64, copy=True)
    runs: list[Any] = [None] * (shape.n_levels + 1)
    for l in range(shape.n_levels, 0, -1):
        k = shape.counts[l]
        live = a < b
        up_a = -(-a // B)
        up_b = np.where(b == k, -(-b // B), b // B)
        direct = live & (up_a >= up_b)
        split = live & ~direct
        left_hi = np.where(direct, b, np.where(split, np.minimum(up_a * B, b), a))
        right_lo = np.where(split, np.minimum(up_b * B, b), b)
        runs[l] = (a.copy(), left_hi, right_lo, b.copy())
        a = np.where(split, up_a, 0)
        b = np.where(split, up_b, 0)
    runs[0] = (a, np.where(a < b, b, a), b, b)
    return runs


def range_sums(shape: TreeShape, levels: Sequence[NDArray[Any]], a: ArrayLike,
               b: ArrayLike) -> NDArray[np.float64]:
    """Sum of the estimates of the minimal node cover of leaves ``[a, b)`` (vectorised)."""
    total = np.zeros(np.broadcast(np.asarray(a), np.asarray(b)).shape)
    runs = decompose(shape, a, b)
    for l, (lo1, hi1, lo2, hi2) in enumerate(runs):
        cum = np.concatenate(([0.0], np.cumsum(levels[l])))
        total = total + (cum[hi1] - cum[lo1]) + (cum[hi2] - cum[lo2])
    return total


def snap(t: ArrayLike, n: float) -> NDArray[np.float64]:
    """Positions in leaf units, clipped to ``[0, n]``, snapped to an integer within ``1e-9``."""
    t = np.clip(t, 0.0, float(n))
    r = np.rint(t)
    return np.where(np.abs(t - r) <= 1e-9, r, t)


def check_tree(n_leaves: int, branching: int) -> TreeShape:
    """Validate ``n_leaves`` (2..2**16) and ``branching`` (2..n_leaves) and return the shape."""
    n_leaves = check_scalar(n_leaves, "n_leaves", int, low=2, high=MAX_LEAVES)
    branching = check_scalar(branching, "branching", int, low=2, high=n_leaves)
    return tree_shape(n_leaves, branching)


__all__ += ["snap", "check_tree", "MAX_LEAVES"]
