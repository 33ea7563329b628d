"""Subset selection (Wang et al. 2016; Ye and Barg 2018): report a random subset of ω categories.

A person with category ``v`` reports a subset ``S`` of size ``ω ≈ k/(e^ε + 1)``; subsets containing ``v``
are ``e^ε`` times as likely as the others: ``v ∈ S`` with probability ``p = ω e^ε / (ω e^ε + k - ω)``, and the
rest of ``S`` is a uniform subset of the other categories. Wire format: a bitmask of ``k`` bits (packed,
``ceil(k/8)`` bytes), so the report is canonical — listing the subset in the order it was drawn, e.g. the
true value first, would reveal it (the flaw of one peer library's implementation; a test plants it).

Finite-output plan (DESIGN.md R1). ``v ∈ S`` is an integer event over 2**53 (``t_inc``); the other members
come from selection sampling with 48-bit uniform choices, whose step probabilities ``ceil(need·2**48/left)/2**48``
differ from ``need/left`` by at most ``2**-48``. Each subset's probability is therefore exact and computable
(:meth:`SubsetPlan.subset_probability`), and within a factor ``D = 1 + 6 N² 2**-48`` (``N = k - 1``) of the
ideal uniform one; ``t_inc`` is rounded so that ``p/(1-p) · (k-ω)/ω · D² ≤ E < e^ε``. The realized ε is within
1e-6 of the stated one up to k ≈ 4000, and within ``12k²·2**-48`` beyond.

Estimator: the pure protocol with ``p* = p`` and ``q* = (p(ω-1) + (1-p)ω)/(k-1)`` (marginal inclusion of another
category; exact up to the ``2**-48`` steps, below 1e-9 relatively). Variance: the seed's formula with these.

References
----------
``../shared/seeds/002_bf216fff5ae8aeb1.txt`` (subset selection among the frequency oracles);
``../shared/seeds/004_14da69ae23cc8615.txt`` (subset selection next to RAPPOR).
"""

import math
from fractions import Fraction
from itertools import combinations

from .._kernels import freq_subset as kernels
from .._kernels._jit import launch
from ..mechanisms._plan import TWO48, TWO53, exp_lower
from .unary import _BitVectorOracle

__all__ = ["SubsetSelection", "SubsetPlan", "subset_size"]

MAX_K = 1 << 16


def subset_size(epsilon, k):
    """``ω = round(k / (e^ε + 1))`` clipped to ``[1, k - 1]`` (the variance-optimal size)."""
    return int(min(max(1, round(k / (math.exp(epsilon) + 1))), k - 1))


def _step_count(need, left):
    """Draws (of 2**48) for which the kernel's ``uniform(word, left) < need``."""
    return -((-need * TWO48) // left)


class SubsetPlan:
    """Integer plan of subset selection: ``k``, ``ω`` and ``t_inc`` (``P[v ∈ S] = t_inc / 2**53``)."""

    def __init__(self, k, omega, t_inc):
        self.k, self.omega, self.t_inc = k, omega, t_inc

    @property
    def words_per_record(self):
        return self.k

    @property
    def n_bytes(self):
        return -(-self.k // 8)

    def __eq__(self, other):
        return isinstance(other, SubsetPlan) and (self.k, self.omega, self.t_inc) == (other.k, other.omega, other.t_inc)

    def __repr__(self):
        return f"SubsetPlan(k={self.k}, omega={self.omega}, t_inc={self.t_inc})"

    @staticmethod
    def _selection(order, members, size):
        """Exact probability that selection sampling over ``order`` picks exactly ``members`` (``size`` of them)."""
        prob = Fraction(1)
        need, left = size, len(order)
        for j in order:
            c = _step_count(need, left)
            if j in members:
                prob *= Fraction(c, TWO48)
                need -= 1
            else:
                prob *= Fraction(TWO48 - c, TWO48)
            left -= 1
        return prob if need == 0 else Fraction(0)

    def subset_probability(self, subset, v):
        """Exact probability of reporting ``subset`` (a set of categories) for true category ``v`` (-1: unknown)."""
        subset = frozenset(subset)
        if len(subset) != self.omega:
            return Fraction(0)
        if v < 0:
            return self._selection(range(self.k), subset, self.omega)
        others = [j for j in range(self.k) if j != v]
        p = Fraction(self.t_inc, TWO53)
        if v in subset:
            return p * self._selection(others, subset - {v}, self.omega - 1)
        return (1 - p) * self._selection(others, subset, self.omega)

    def exact_probabilities(self, v):
        """``{bitmask: Fraction}`` over all ``C(k, ω)`` subsets (small ``k`` only)."""
        if self.k > 16:
            raise ValueError("exact enumeration is for k <= 16")
        return {sum(1 << j for j in s): self.subset_probability(s, v)
                for s in combinations(range(self.k), self.omega)}

    def deviation_bound(self):
        """``D``: every subset probability is within a factor ``D`` of its ideal (uniform selection) value."""
        n = self.k - 1
        return 1 + Fraction(6 * n * n, TWO48)

    def extreme_ratio_bound(self):
        """A rigorous upper bound of the largest likelihood ratio, for any ``k`` (structural reduction)."""
        p = Fraction(self.t_inc, TWO53)
        k, w = self.k, self.omega
        d = self.deviation_bound()
        inclusion = p / (1 - p) * Fraction(k - w, w)
        return max(inclusion, 1 / inclusion) * d * d if w < k else d * d


def _t_inc(epsilon, k, omega):
    e = exp_lower(epsilon)
    d = 1 + Fraction(6 * (k - 1) ** 2, TWO48)
    r = e * Fraction(omega, k - omega) / (d * d)  # p/(1-p) <= r: one D for each side of the ratio
    return math.floor(TWO53 * r / (1 + r))


class SubsetSelection(_BitVectorOracle):
    """Subset selection over ``k`` categories with subset size ``ω ≈ k/(e^ε + 1)``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories, 2 ≤ k ≤ 2**16.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. Reports are
    bitmasks of ``k`` bits (canonical wire format), ``k`` random words per person. Per-report variance at true
    frequency 0: ``q*(1 - q*)/(p* - q*)²``, slightly below OUE's ``4e^ε/(e^ε - 1)²`` for small ``k``.

    References
    ----------
    ``../shared/seeds/002_bf216fff5ae8aeb1.txt``; S. Wang et al., arXiv:1607.08025 (2016); M. Ye, A. Barg,
    IEEE Trans. Inf. Theory 2018.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> ss = ldp.SubsetSelection(epsilon=1.0, k=8)
    >>> ss.omega
    2
    >>> r = ss.privatize(np.array([3, 3, 5]), rng=0)
    >>> [int(b) for b in ldp.frequency.unpack_bits(r).sum(axis=1)]
    [2, 2, 2]
    """

    name = "subset_selection"

    def __init__(self, epsilon, k):
        super().__init__(epsilon, k)
        if self._k > MAX_K:
            raise ValueError(f"SubsetSelection supports k <= {MAX_K}; got k={self._k}")
        self._omega = subset_size(self._epsilon, self._k)
        self._plan = SubsetPlan(self._k, self._omega, _t_inc(self._epsilon, self._k, self._omega))

    @property
    def omega(self):
        """Subset size ω."""
        return self._omega

    @property
    def support_probabilities(self):
        p = self._plan.t_inc / TWO53
        k, w = self._k, self._omega
        return p, (p * (w - 1) + (1 - p) * w) / (k - 1)

    def _run_kernel(self, values, words, out):
        plan = self._plan
        launch(kernels.subset_kernel, values, plan.k, plan.omega, plan.t_inc, words, out)

