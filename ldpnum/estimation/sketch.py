r"""Count-mean sketch estimators: Apple's (textbook) one and an estimator unbiased for the sketch's own hash family.

Notation. A sketch has ``k`` hash functions ``h_j`` onto ``[0, m)`` (``m`` = width); person ``i`` with value
:math:`v_i` reports about hash ``j_i``, drawn with probability :math:`\pi_j` independently of the value. The
collector turns the reports of hash ``j`` into a row :math:`R_j \in \mathbb{R}^m` of debiased sums (CMS: per bucket
:math:`(c_{jb} - q N_j)/(p - q)`; HCMS: the Hadamard transform of the signed counts over :math:`2p - 1`), so that
each report adds :math:`z_i` to row :math:`j_i` with :math:`E[z_{i,b}] = 1[b = h_{j_i}(v_i)]`. The *read* of a
candidate :math:`d` is

.. math::

    y_d = \sum_j R_j[h_j(d)] = \sum_i z_{i, h_{j_i}(d)},

Apple's :math:`\frac1k\sum_j M[j, h_j(d)]` (their ``M`` is ``k`` times these rows).

**Exact expectation.** Given the public hash family (drawn once and fixed: every estimate is made with it),

.. math::

    E[y_d] = \sum_e n_e\, A_{de}, \qquad A_{de} = \sum_j \pi_j\, 1[h_j(d) = h_j(e)],

with :math:`n_e` the number of people holding :math:`e` and :math:`A_{dd} = 1`. Apple's estimator
:math:`\hat n_d = \frac{m}{m-1}(y_d - n/m)` assumes :math:`A_{de} = 1/m` for every pair; its exact expectation is

.. math::

    E[\hat n_d] = n_d + \frac{m}{m-1} \sum_{e \ne d} n_e \Big(A_{de} - \frac1m\Big),

unbiased only on average over random draws of the family, biased for the fixed family every deployment uses: a
heavy item :math:`e` that collides with :math:`d` in more (or fewer) than :math:`k/m` of the hash functions
shifts :math:`d`'s estimate by :math:`n_e (A_{de} - 1/m)\, m/(m-1)`.

**Unbiased estimator.** Over a dictionary :math:`D` of candidates that holds every item people have, the
expectation is linear in :math:`n_D`: items outside :math:`D` are modelled as colliding at :math:`1/m`, so
:math:`E[y_D - (n/m)\mathbf 1] = B\, n_D` with :math:`B = A_D - \frac1m \mathbf 1 \mathbf 1^\top` (positive
semi-definite), and

.. math::

    \hat n_D = B^{-1}\big(y_D - \tfrac{n}{m}\mathbf 1\big)

is exactly unbiased when the dictionary covers the items held (for category codes, the whole domain). ``B`` is
close to :math:`(1 - 1/m) I` when :math:`|D| \ll k m`; it is singular when :math:`|D| > k m` (no estimator from
``k·m`` counts is unbiased for more items) or when two candidates share every hash value. It is solved by
conjugate gradients on the matrix-free product :math:`A x = \sum_j \pi_j (H_j^\top H_j x)` (``O(k|D|)``), exactly
when :math:`|D| \le` :data:`DENSE_MAX`.

**Variance** (both estimators, exact in the randomization, for the fixed family). Per report,
:math:`\mathrm{Cov}(z_{i,h(d)}, z_{i,h(e)}) = a A_{de} + g T_{de}(v_i) - A_{d v_i} A_{e v_i}`, with
:math:`T_{de}(v) = \sum_j \pi_j 1[h_j(d) = h_j(e) = h_j(v)]`, :math:`a = q(1-q)/(p-q)^2` and
:math:`g = 1 + (p(1-p) - q(1-q))/(p-q)^2` for CMS, :math:`a = 1/(2p-1)^2`, :math:`g = 0` for HCMS. So

.. math::

    \mathrm{Var}(y_d) = n a + \sum_i \big(g A_{d v_i} - A_{d v_i}^2\big),

and the textbook estimator's variance is :math:`\mathrm{Var}(y_d) (m/(m-1))^2`. The sum over people is estimated
by plug-in: :math:`\sum_i A_{d v_i} \approx y_d` and :math:`\sum_i A_{dv_i}^2 \approx \hat n_d + (n - \hat n_d)\kappa`,
:math:`\kappa = 1/m^2 + (1/m)(1 - 1/m)\sum_j \pi_j^2` (the mean of :math:`A^2` over pairs under random hashing).
For the unbiased estimator, :math:`\mathrm{Cov}(y) \approx n a A + \mathrm{diag}(s)` (the off-diagonal terms
left out are :math:`O(n/m^2)`, against :math:`n a / m`), and with :math:`A = B + \frac1m \mathbf 1\mathbf 1^\top`,

.. math::

    \mathrm{Var}(\hat n_d) = n a \Big([B^{-1}]_{dd} + \frac{u_d^2}{m}\Big) + \sum_e [B^{-1}]_{de}^2 s_e,
    \qquad u = B^{-1}\mathbf 1 ,

computed exactly for :math:`|D| \le` :data:`DENSE_MAX`, else to second order in
:math:`\Delta = B - (1 - 1/m) I`: :math:`[B^{-1}]_{dd} \approx 1/b + (\Delta^2)_{dd}/b^3` and
:math:`\sum_e [B^{-1}]^2_{de} s_e \approx s_d/b^2 + ((\Delta\circ\Delta)s)_d/b^4`, :math:`b = 1 - 1/m`; the
neglected terms are of relative order :math:`(|D|/km)^2 \le 1/256`, since larger dictionaries are refused
(:data:`MAX_LOAD`).

The derivation is this module's own, from the sketch's construction (Apple Differential Privacy Team, "Learning
with Privacy at Scale", 2017); Pan ("Count-Mean Sketch as an Optimized Framework for Frequency Estimation",
arXiv:2406.03785, 2024) reports that the published expectation and variance of CMS do not hold and that the
standard implementation is biased, which the tests of :mod:`ldpnum.heavy.cms` show on a small sketch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._typing import NDArray

__all__ = ["METHODS", "DENSE_MAX", "MAX_LOAD", "sketch_reads", "collision_block", "apple_counts", "apple_variances",
           "check_dictionary", "check_dictionary_size", "unbiased_counts", "CollisionMatrix", "fwht_rows"]

#: The estimators: ``"unbiased"`` (for the fixed hash family, :func:`unbiased_counts`) and ``"apple"`` (textbook).
METHODS = ("unbiased", "apple")
#: Largest dictionary whose collision matrix is inverted exactly (dense); larger ones use conjugate gradients.
DENSE_MAX = 1024
#: The unbiased estimator refuses dictionaries of more than ``MAX_LOAD · k · m`` candidates.
MAX_LOAD = 1 / 16


def fwht_rows(x: NDArray[Any]) -> NDArray[np.float64]:
    r"""The Walsh–Hadamard transform of each row, :math:`y_b = \sum_l (-1)^{\mathrm{popcount}(b \,\&\, l)} x_l`."""
    y = np.array(x, dtype=np.float64, copy=True)
    rows, m = y.shape
    h = 1
    while h < m:
        y = y.reshape(rows, m // (2 * h), 2, h)
        a, b = y[:, :, 0, :].copy(), y[:, :, 1, :]
        y[:, :, 0, :] += b
        y[:, :, 1, :] = a - b
        y = y.reshape(rows, m)
        h *= 2
    return y


def sketch_reads(rows: NDArray[np.float64], positions: NDArray[np.int64]) -> NDArray[np.float64]:
    """``y_d = Σ_j rows[j, positions[d, j]]`` for every candidate ``d`` (``positions``: ``(|D|, k)``)."""
    k = rows.shape[0]
    return rows[np.arange(k)[None, :], positions].sum(axis=1)


class CollisionMatrix:
    """``A_{de} = Σ_j π_j 1[h_j(d) = h_j(e)]`` over a dictionary, as two sparse one-hot factors ``A = W Oᵀ``.

    ``W`` (``|D| × k·m``) holds ``π_j`` at column ``j·m + h_j(d)`` of row ``d``, ``O`` the same with ones; both have
    ``k`` entries per row, so a product ``A x`` costs ``O(k|D|)`` and a block of rows of ``A`` ``O(k|D|²/m)``.
    """

    def __init__(self, positions: NDArray[np.int64], weights: NDArray[np.float64], width: int) -> None:
        from scipy import sparse

        n, k = positions.shape
        cols = (np.arange(k, dtype=np.int64)[None, :] * width + positions).ravel()
        rows = np.repeat(np.arange(n, dtype=np.int64), k)
        shape = (n, k * width)
        self.size = n
        self.positions = np.ascontiguousarray(positions, dtype=np.int64)
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.width = int(width)
        self.weighted = sparse.csr_matrix((np.tile(weights, n), (rows, cols)), shape=shape)
        self.ones_t = sparse.csr_matrix((np.ones(n * k), (cols, rows)), shape=(k * width, n))

    def matvec(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """``A x``."""
        return self.weighted @ (self.ones_t @ x)

    def rows(self, block: slice | None = None) -> NDArray[np.float64]:
        """Rows ``block`` of ``A`` (all rows by default), dense."""
        part = self.weighted if block is None else self.weighted[block]
        return np.asarray((part @ self.ones_t).toarray())

    def off_diagonal_squares(self, s: NDArray[np.float64], m: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``Σ_{e≠d} Δ_de²`` and ``Σ_{e≠d} Δ_de² s_e`` per row ``d``, with ``Δ = A - 1/m``, in ``O(k|D|²/m)``.

        A pair that never collides has ``Δ = -1/m``, so each sum is its value with no collision at all,
        ``(|D| - 1)/m²`` and ``(Σ_e s_e - s_d)/m²``, plus ``(A_de - 1/m)² - 1/m²`` (times ``s_e``) over the pairs
        ``e ≠ d`` that collide at least once (:func:`ldpnum._kernels.server_sketch.collision_excess`, which walks
        each candidate's buckets instead of building dense rows of ``A``).
        """
        from .._kernels import server_sketch

        d = self.size
        excess, excess_s = np.empty(d), np.empty(d)
        server_sketch.collision_excess(self.positions, self.weights, self.width,
                                       np.ascontiguousarray(s, dtype=np.float64), excess, excess_s)
        inv2 = 1.0 / (m * m)
        return excess + (d - 1) * inv2, excess_s + (float(np.sum(s)) - s) * inv2


def collision_block(positions: NDArray[np.int64], weights: NDArray[np.float64], width: int,
                    rows: slice | None = None) -> NDArray[np.float64]:
    """Rows ``rows`` of ``A_{de} = Σ_j π_j 1[h_j(d) = h_j(e)]`` over the candidates (dense)."""
    return CollisionMatrix(positions, weights, width).rows(rows)


def apple_counts(y: NDArray[np.float64], n: int, width: int) -> NDArray[np.float64]:
    """Apple's estimate ``m/(m-1) (y_d - n/m)`` of how many people hold each candidate."""
    m = float(width)
    return (y - n / m) * (m / (m - 1))


def _plugin_excess(y: NDArray[np.float64], counts: NDArray[np.float64], n: int, width: int,
                   weights: NDArray[np.float64], g: float) -> NDArray[np.float64]:
    """``s_d``, the plug-in of ``Σ_i (g A_{dv_i} - A_{dv_i}²)`` (see the module's notes)."""
    m = float(width)
    kappa = 1 / m**2 + (1 / m) * (1 - 1 / m) * float(np.sum(weights**2))
    own = np.clip(counts, 0, n)
    return g * np.clip(y, 0, n) - (own + (n - own) * kappa)


def apple_variances(y: NDArray[np.float64], counts: NDArray[np.float64], n: int, width: int,
                    weights: NDArray[np.float64], a: float, g: float) -> NDArray[np.float64]:
    """Variance of Apple's estimate of each candidate's count: ``(n a + s_d) (m/(m-1))²`` (plug-in ``s_d``)."""
    m = float(width)
    return np.maximum(n * a + _plugin_excess(y, counts, n, width, weights, g), 0.0) * (m / (m - 1)) ** 2


def check_dictionary_size(n: int, k: int, width: int) -> None:
    """Refuse a dictionary too large for the unbiased estimator (more than ``MAX_LOAD · k · width`` candidates)."""
    if n > MAX_LOAD * k * width:
        raise ValueError(f"the unbiased count-mean-sketch estimator needs at most width·hashes/16 = "
                         f"{int(MAX_LOAD * k * width)} candidates (its variance grows without bound as the number "
                         f"of candidates nears width·hashes = {k * width}, the number of sketch counts); got {n}: pass "
                         "fewer candidates, a larger sketch, or method='apple' (biased by hash collisions)")


def check_dictionary(positions: NDArray[np.int64], width: int, labels: Any) -> None:
    """Refuse a dictionary the unbiased estimator cannot invert: too large, or two candidates sharing every hash."""
    n, k = positions.shape
    check_dictionary_size(n, k, width)
    _, first, inverse = np.unique(positions, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    dup = np.flatnonzero(first[inverse] != np.arange(n))
    if dup.size:
        i = int(dup[0])
        j = int(first[inverse[i]])
        raise ValueError(f"candidates {labels[j]!r} and {labels[i]!r} have the same value under all {k} hash "
                         "functions, so no estimator can tell their counts apart: use a sketch with more hashes or a "
                         "larger width, or merge the two candidates")


def unbiased_counts(y: NDArray[np.float64], n: int, positions: NDArray[np.int64], weights: NDArray[np.float64],
                    width: int, a: float, g: float) -> tuple[NDArray[np.float64], NDArray[np.float64], dict]:
    """The unbiased estimate ``B⁻¹(y - n/m)`` over the candidates, its variances, and how it was solved."""
    from scipy.sparse.linalg import LinearOperator, cg

    d, _ = positions.shape
    m = float(width)
    b = 1 - 1 / m
    rhs = y - n / m
    ones = np.ones(d)
    coll = CollisionMatrix(positions, weights, width)
    if d <= DENSE_MAX:
        big_b = coll.rows() - 1 / m
        inv = np.linalg.inv(big_b)
        counts = inv @ rhs
        u = inv @ ones
        s = _plugin_excess(y, counts, n, width, weights, g)
        var = n * a * (np.diag(inv) + u * u / m) + (inv * inv) @ s
        return counts, np.maximum(var, 0.0), {"solver": "dense"}
    op = LinearOperator((d, d), matvec=lambda x: coll.matvec(x) - x.sum() / m, dtype=np.float64)
    solutions, iterations = [], []
    for target in (rhs, ones):
        count = [0]

        def step(_x, count=count):
            count[0] += 1

        scale = float(np.abs(target).max()) or 1.0
        x, info = cg(op, target / scale, x0=target / scale / b, rtol=1e-12, atol=0.0, maxiter=500, callback=step)
        if info != 0:
            raise ValueError("the count-mean-sketch collision system did not converge (its matrix is near singular "
                             "for these candidates): pass fewer candidates or method='apple'")
        solutions.append(x * scale)
        iterations.append(count[0])
    counts, u = solutions
    s = _plugin_excess(y, counts, n, width, weights, g)
    delta_sq, delta_sq_s = coll.off_diagonal_squares(s, m)
    var = n * a * (1 / b + delta_sq / b**3 + u * u / m) + s / b**2 + delta_sq_s / b**4
    return counts, np.maximum(var, 0.0), {"solver": "conjugate-gradient", "iterations": iterations}
