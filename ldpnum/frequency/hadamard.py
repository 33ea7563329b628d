"""Hadamard response (Acharya, Sun and Zhang): one index of a Hadamard matrix per person.

Let ``K`` be the smallest power of two ≥ ``k + 1`` and ``H`` the K×K Sylvester–Hadamard matrix,
``H[r, y] = (-1)^popcount(r & y)``. Category ``v`` owns row ``r = v + 1`` (row 0, all ones, is unused) and
its support set ``C_v = {y : H[v+1, y] = +1}``, ``|C_v| = K/2``.

**Output alphabet and probabilities.** A report is one index ``y ∈ [0, K)``:

    P[y | v] = p · 2/K          if y ∈ C_v        p = t_keep / 2**53  (≈ e^ε / (e^ε + 1))
             = (1 - p) · 2/K    otherwise

(an unknown value with ``unknown="uniform"``: ``1/K`` each). The ratio across values is
``p / (1 - p) = t_keep / (2**53 - t_keep) ≤ E < e^ε``, tight; ``t_keep`` is randomized response's
(:func:`ldpnum.plans.binary_plan`'s ``t_hi``). The kernel draws a uniform index in
``[0, K)`` (exact: ``K`` is a power of two) and flips the lowest set bit of ``r`` if the index lies in the
wrong half — a bijection between the halves, so the choice within a half is exactly uniform.

**Estimator.** A report supports ``v`` when ``y ∈ C_v``: ``p* = p``, and for ``v' != v`` rows ``v + 1`` and
``v' + 1`` are orthogonal, so ``|C_v ∩ C_v'| = |C̄_v ∩ C_v'| = K/4`` and ``q* = 1/2`` exactly. Per-report
variance at frequency 0: ``(1/4) / (p - 1/2)² ≈ (e^ε + 1)² / (e^ε - 1)²``, BLH's (the seed: "one way to
implement BLH is to use Hadamard Response"), at O(log k) bits per report and with a cheap server.

**Aggregate.** The histogram of the ``K ≤ 2k`` report indices (the default aggregation, mergeable by
addition). The support counts follow from one fast Walsh–Hadamard transform ``W = H · hist``:
``I_v = (n + W[v + 1]) / 2`` (Cython ``ldpnum._kernels.server_hashing.walsh_hadamard``, O(K log K) at estimation
time) — cheaper than decoding each report against each category, O(n·k).

References
----------
J. Acharya, Z. Sun, H. Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently, and with
Little Communication", AISTATS 2019 (arXiv 2018). "Local Differential Privacy (Part 1)", lecture slides on the
work of T. Wang, N. Li and S. Jha (Hadamard response among the frequency oracles).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .._kernels import client_hashing as kernels
from .._kernels._jit import launch
from ..plans import TWO53, binary_plan
from ._base import FrequencyOracle

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["HadamardResponse", "HadamardPlan", "hadamard_support_counts"]


def _parity(x):
    return bin(x).count("1") & 1


class HadamardPlan:
    """Integer plan of Hadamard response: ``K = 2**log2_k`` indices, ``t_keep`` over 2**53.

    2 words per record (keep, index).
    """

    words_per_record = 2

    def __init__(self, k, log2_k, t_keep):
        self.k = k
        self.log2_k = log2_k
        self.t_keep = t_keep

    @property
    def K(self) -> int:
        """Order ``K = 2**log2_k`` of the Hadamard matrix (the smallest power of two above ``k``)."""
        return 1 << self.log2_k

    def __eq__(self, other):
        return isinstance(other, HadamardPlan) and (self.k, self.log2_k, self.t_keep) == (
            other.k, other.log2_k, other.t_keep)

    def __repr__(self):
        return f"HadamardPlan(k={self.k}, K={self.K}, t_keep={self.t_keep})"

    def supports(self, v: int, y: int) -> bool:
        """Whether index ``y`` lies in ``C_v`` (``H[v + 1, y] = +1``)."""
        return _parity((v + 1) & y) == 0

    def exact_probabilities(self, v: int) -> dict[int, Fraction]:
        """``{y: Fraction}`` for true category ``v`` (``-1``: an unknown value, reported uniformly)."""
        K = self.K
        if v < 0:
            return {y: Fraction(1, K) for y in range(K)}
        keep = Fraction(self.t_keep, TWO53)
        inside, outside = keep * Fraction(2, K), (1 - keep) * Fraction(2, K)
        return {y: inside if self.supports(v, y) else outside for y in range(K)}

    def extreme_ratio(self) -> Fraction:
        """Exact largest ratio over all pairs of categories and outputs: ``t_keep / (2**53 - t_keep)``.

        Every category's set and its complement each hold K/2 indices, and any two categories differ.
        """
        return Fraction(self.t_keep, TWO53 - self.t_keep)

    def support_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(p*, q*)`` as Fractions: ``(t_keep / 2**53, 1/2)``."""
        return Fraction(self.t_keep, TWO53), Fraction(1, 2)


def hadamard_support_counts(histogram: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    """``I_v = #{reports with y ∈ C_v}`` for ``v < k`` from the histogram of report indices (length K)."""
    from .._kernels.server_hashing import walsh_hadamard

    w = np.array(histogram, dtype=np.int64, copy=True)
    n = int(w.sum())
    walsh_hadamard(w)
    return (n + w[1:k + 1]) // 2


class HadamardResponse(FrequencyOracle):
    """Hadamard response over ``k`` categories: each person reports one index in ``[0, K)``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**24.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    ``K`` is the smallest power of two ≥ ``k + 1``; a person with category ``v`` reports a uniform index of
    ``C_v = {y : popcount((v+1) & y) even}`` with probability ``p = t_keep / 2**53 ≈ e^ε/(e^ε+1)``, else a
    uniform index outside it (see :mod:`ldpnum.frequency.hadamard`). Reports are one code in the smallest
    unsigned dtype holding ``K - 1`` (``log2 K`` bits of information). Per-report variance at frequency 0:
    ``(e^ε + 1)² / (e^ε - 1)²``, BLH's. The aggregate is the histogram of the ``K`` indices; support
    counts come from one fast Walsh–Hadamard transform.

    References
    ----------
    J. Acharya, Z. Sun, H. Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently,
    and with Little Communication", AISTATS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.frequency.hadamard import HadamardResponse
    >>> hr = HadamardResponse(epsilon=1.0, k=5)
    >>> hr.n_cells
    8
    >>> r = hr.privatize(np.array([0, 4, 2]), rng=0)
    >>> r.codes.dtype, len(r)
    (dtype('uint8'), 3)
    """

    name = "hadamard_response"

    def __init__(self, epsilon: float, k: int) -> None:
        super().__init__(epsilon, k)
        self._log2_k = self._k.bit_length()  # 2**bit_length(k) is the smallest power of two > k
        self._t_keep = binary_plan(self._epsilon).t_hi
        self._plan = HadamardPlan(self._k, self._log2_k, self._t_keep)

    @property
    def n_cells(self) -> int:
        """``K``: reports are indices ``0..K-1``."""
        return 1 << self._log2_k

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: probability that a report supports the person's own / another given category."""
        p, q = self._plan.support_probabilities()
        return float(p), float(q)

    def _support_counts(self, agg):
        return hadamard_support_counts(agg.counts, self._k).astype(np.float64)

    def _run_kernel(self, values, words, out):
        launch(kernels.hadamard_kernel, values, self._log2_k, self._t_keep, words, out)
