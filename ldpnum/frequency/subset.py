"""Subset selection (Wang et al. 2016; Ye and Barg 2018): report a random subset of ω categories.

A person with category ``v`` reports a subset ``S`` of size ``ω ≈ k/(e^ε + 1)`` (so ``ω ≤ k/2``); subsets
containing ``v`` are ``e^ε`` times as likely as the others: ``v ∈ S`` with probability
``p = ω e^ε / (ω e^ε + k - ω)``, and the rest of ``S`` is a uniform subset of the other categories. Wire
format: a bitmask of ``k`` bits (packed, ``ceil(k/8)`` bytes), so the report is canonical — listing the subset
in the order it was drawn, e.g. the true value first, would reveal it (the flaw of one peer library's
implementation; a test plants it).

Sampler. ``v ∈ S`` is an integer event over 2**53 (``t_inc``). The other ``r`` members (``r = ω - 1`` if
``v ∈ S``, else ``r = ω``) are a uniform ``r``-subset of the ``n = k - 1`` other categories drawn by
*Floyd's algorithm*: for ``j = n - r, ..., n - 1`` draw ``t`` uniform in ``0..j`` and add ``t``, or ``j``
when ``t`` is already in. Ideally every ``r``-subset then has probability ``1/C(n, r)``. Each pick is one
48-bit uniform choice among ``m = j + 1`` cells, four picks to three words, so a record costs
``1 + ω - ⌊ω/4⌋`` words whatever ``k`` (:mod:`ldpnum._kernels.client_subset` has the layout; an unknown
value gets a uniform ``ω``-subset of all ``k`` categories, ``n = k``, ``r = ω``).

Exact plan (design rule R1). Cell ``t`` of ``m`` has ``c = uniform_count(t, m)`` of the 2**48 draws, so a
subset's probability is the sum, over Floyd's draw sequences that produce it, of ``∏ c_i / 2**48``: exact
and computable (:meth:`SubsetPlan.subset_probability`, :meth:`SubsetPlan.exact_probabilities`, which sum
over the sequences by dynamic programming over the partial subsets).

Deviation bound (any ``k``). ``⌊2**48/m⌋ ≤ c ≤ ⌈2**48/m⌉``, so ``c/2**48 = (1 ± x)/m`` with
``|x| < m/2**48``; Floyd's ideal probability ``1/C(n, r)`` is the same sum with every factor ``1/m``, hence
every subset's probability lies within ``[∏(1 - x_i), ∏(1 + x_i)]`` times its ideal value, and
``∏(1 + x_i) ≤ 1/(1 - Σx_i)``, ``∏(1 - x_i) ≥ 1 - Σx_i``. The largest picks are those of an unknown value
(``m = k - ω + 1, ..., k``; the picks of a known value are these minus one, or fewer), so with
``M = ω(2k - ω + 1)/2`` every subset probability of every row is within the factor

    D = 2**48 / (2**48 - M)                  (ln D ≈ M 2**-48 ≤ (3k²/8 + k/4) 2**-48)

of its ideal value (:meth:`SubsetPlan.deviation_bound`). ``t_inc = ⌊2**53 ρ/(1 + ρ)⌋`` with
``ρ = E ω/((k - ω) D²)`` (``E`` the rigorous lower bound of ``e^ε``), so ``p/(1-p)·(k-ω)/ω·D² ≤ E``: the
ideal likelihood ratios are ``p/(1-p)·(k-ω)/ω`` (``v`` in the subset vs. not), its inverse, and those
against the unknown-value row (between the two), and each realized ratio exceeds its ideal one by at most
``D²`` (:meth:`SubsetPlan.extreme_ratio_bound`). The realized ε is therefore at most the stated one, for
every ``k``; it is also at least ``ε - 4 ln D`` minus the roundings of ``E`` and ``t_inc`` (below
``2**-49 + (e^ε + k + 2) 2**-53``), because the event "``v`` in, ``v'`` out" alone has the ratio
``≥ p/(1-p)·(k-ω)/ω / D²``: within 1e-6 of the stated ε up to ``k ≈ 13 000``, and within about
``1.5 k² 2**-48`` (2.3e-5 at ``k = 2**16``) beyond. For ``k ≤ 10`` the tests enumerate every subset exactly.

Estimator: the pure protocol with ``p* = p`` and ``q* = (p(ω-1) + (1-p)ω)/(k-1)`` (marginal inclusion of another
category under ideal picks; the realized marginal is within the factor ``D`` of it, below 1.5e-9 relatively
for ``k ≤ 1000``). Variance: Wang et al.'s pure-protocol formula with these.

References
----------
S. Wang, L. Huang, P. Wang, Y. Nie, H. Xu, W. Yang, X.-Y. Li, C. Qiao, "Mutual Information Optimally Local
Private Discrete Distribution Estimation", arXiv:1607.08025, 2016; M. Ye, A. Barg, "Optimal Schemes for
Discrete Distribution Estimation under Locally Differential Privacy", IEEE Trans. Inf. Theory 64(8), 2018;
"Local Differential Privacy (Part 1)", lecture slides on the work of T. Wang, N. Li and S. Jha (subset
selection among the frequency oracles); V. Feldman, K. Talwar, "Lossless Compression of Efficient Private
Local Randomizers", ICML 2021 (subset selection next to RAPPOR); R. W. Floyd's subset sampler (J. Bentley, R.
Floyd, "A sample of brilliance", Comm. ACM 30(9), 1987).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations
from typing import TYPE_CHECKING

from .._kernels import client_subset as kernels
from .._kernels._jit import launch
from ..plans import TWO48, TWO53, exp_lower, floyd_distribution, floyd_weights
from .unary import _BitVectorOracle

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["SubsetSelection", "SubsetPlan", "subset_size"]

MAX_K = 1 << 16


def subset_size(epsilon: float, k: int) -> int:
    """``ω = round(k / (e^ε + 1))`` clipped to ``[1, k - 1]`` (the variance-optimal size; ``ω ≤ k/2``)."""
    return int(min(max(1, round(k / (math.exp(epsilon) + 1))), k - 1))


def _to_categories(index_mask, v, k):
    """Map a bitmask of indices ``0..n-1`` over the categories other than ``v`` to a bitmask of categories."""
    low = (1 << v) - 1 if v >= 0 else (1 << k) - 1
    return (index_mask & low) | ((index_mask & ~low) << 1)


def _to_indices(category_mask, v, k):
    """Inverse of :func:`_to_categories` for a mask without bit ``v``."""
    low = (1 << v) - 1 if v >= 0 else (1 << k) - 1
    return (category_mask & low) | ((category_mask >> 1) & ~low)


class SubsetPlan:
    """Integer plan of subset selection: ``k``, ``ω`` and ``t_inc`` (``P[v ∈ S] = t_inc / 2**53``).

    The kernel draws ``v ∈ S`` from word 0 and the rest of the subset with Floyd's algorithm, 48-bit
    picks, four to three words (``1 + ω - ⌊ω/4⌋`` words per record); see :mod:`ldpnum.frequency.subset`
    for the exact probabilities and the deviation bound ``D``.
    """

    def __init__(self, k, omega, t_inc):
        self.k, self.omega, self.t_inc = k, omega, t_inc

    @property
    def words_per_record(self) -> int:
        """Random 64-bit words each record consumes."""
        return 1 + self.omega - self.omega // 4

    @property
    def n_bytes(self) -> int:
        """Bytes of one report's bit mask over the ``k`` categories."""
        return -(-self.k // 8)

    def __eq__(self, other):
        return isinstance(other, SubsetPlan) and (self.k, self.omega, self.t_inc) == (other.k, other.omega, other.t_inc)

    def __repr__(self):
        return f"SubsetPlan(k={self.k}, omega={self.omega}, t_inc={self.t_inc})"

    def _rows(self, v):
        """``(p, n, r, v)`` terms of the report distribution of ``v``.

        With probability ``p`` a Floyd ``r``-subset of ``n`` indices (skipping category ``v``), joined by ``v`` itself
        when ``r = ω - 1``.
        """
        if v < 0:
            return [(Fraction(1), self.k, self.omega, -1)]
        p = Fraction(self.t_inc, TWO53)
        return [(p, self.k - 1, self.omega - 1, v), (1 - p, self.k - 1, self.omega, v)]

    def subset_probability(self, subset: Iterable[int], v: int) -> Fraction:
        """Exact probability of reporting ``subset`` (a set of categories) for true category ``v`` (-1: unknown).

        Sums over Floyd's draw sequences that produce the subset (exponential in ``ω``: for small
        instances).
        """
        subset = frozenset(subset)
        if len(subset) != self.omega:
            return Fraction(0)
        mask = sum(1 << j for j in subset)
        total = Fraction(0)
        for weight, n, r, skip in self._rows(v):
            rest = mask
            if r < self.omega:  # the branch with v in the subset
                if not mask >> v & 1:
                    continue
                rest = mask & ~(1 << v)
            elif skip >= 0 and mask >> skip & 1:
                continue
            target = _to_indices(rest, skip, self.k)
            w = floyd_weights(n, r, target).get(target, 0)
            total += weight * Fraction(w, TWO48 ** r)
        return total

    def exact_probabilities(self, v: int) -> dict[int, Fraction]:
        """``{bitmask: Fraction}`` over all ``C(k, ω)`` subsets (small ``k`` only)."""
        if self.k > 16:
            raise ValueError("exact enumeration is for k <= 16")
        out = {sum(1 << j for j in s): Fraction(0) for s in combinations(range(self.k), self.omega)}
        for weight, n, r, skip in self._rows(v):
            extra = 1 << skip if r < self.omega else 0
            for s, prob in floyd_distribution(n, r).items():
                out[_to_categories(s, skip, self.k) | extra] += weight * prob
        return out

    def deviation_bound(self) -> Fraction:
        """``D = 2**48/(2**48 - M)``, ``M = ω(2k - ω + 1)/2``: the factor of every subset probability from its ideal.

        Every subset probability of every row is within a factor ``D`` of its ideal (uniform Floyd picks) value (module
        docstring).
        """
        return _deviation_bound(self.k, self.omega)

    def ideal_ratios(self) -> tuple[Fraction, Fraction, Fraction]:
        """Ideal probabilities of one subset, in units of ``1/C(k, ω)``: ``v`` in it, ``v`` not in it, unknown."""
        p = Fraction(self.t_inc, TWO53)
        k, w = self.k, self.omega
        return p * k / w, (1 - p) * Fraction(k, k - w), Fraction(1)

    def extreme_ratio_bound(self) -> Fraction:
        """A rigorous upper bound of the largest likelihood ratio, for any ``k`` (structural reduction).

        The largest ratio of ideal probabilities, times ``D²``.
        """
        ideal = self.ideal_ratios()
        d = self.deviation_bound()
        return max(ideal) / min(ideal) * d * d


def _deviation_bound(k, omega):
    m_sum = omega * (2 * k - omega + 1) // 2
    return Fraction(TWO48, TWO48 - m_sum)


def _t_inc(epsilon, k, omega):
    e = exp_lower(epsilon)
    d = _deviation_bound(k, omega)
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
    bitmasks of ``k`` bits (canonical wire format); ``1 + ω - ⌊ω/4⌋`` random words per person (the true
    value's coin, then the ``ω`` 48-bit picks of Floyd's algorithm, four to three words). Every subset's
    probability is exact on the integer plan and within a factor ``D = 2**48/(2**48 - ω(2k - ω + 1)/2)`` of
    the ideal one, so the realized ε is at most the stated one for every ``k``, and within 1e-6 of it up to
    ``k ≈ 13 000`` (module docstring). ε so small that ``D²`` swallows the ratio is refused. Per-report
    variance at true frequency 0: ``q*(1 - q*)/(p* - q*)²``, slightly below OUE's ``4e^ε/(e^ε - 1)²`` for
    small ``k``.

    References
    ----------
    S. Wang et al., "Mutual Information Optimally Local Private Discrete Distribution Estimation",
    arXiv:1607.08025 (2016); M. Ye, A. Barg, "Optimal Schemes for Discrete Distribution Estimation under
    Locally Differential Privacy", IEEE Trans. Inf. Theory 2018; J. Bentley, R. Floyd, Comm. ACM 30(9), 1987
    (Floyd's sampler).

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

    def __init__(self, epsilon: float, k: int) -> None:
        super().__init__(epsilon, k)
        if self._k > MAX_K:
            raise ValueError(f"SubsetSelection supports k <= {MAX_K}; got k={self._k}")
        self._omega = subset_size(self._epsilon, self._k)
        self._plan = SubsetPlan(self._k, self._omega, _t_inc(self._epsilon, self._k, self._omega))
        if self._plan.extreme_ratio_bound() > exp_lower(self._epsilon):
            raise ValueError(f"epsilon={epsilon!r} is too small for subset selection over k={self._k} "
                             "categories: the 48-bit picks' deviation bound exceeds e^epsilon")

    @property
    def omega(self) -> int:
        """Subset size ω."""
        return self._omega

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: probability that a report's subset holds the person's own / another category."""
        p = self._plan.t_inc / TWO53
        k, w = self._k, self._omega
        return p, (p * (w - 1) + (1 - p) * w) / (k - 1)

    def _run_kernel(self, values, words, out):
        plan = self._plan
        launch(kernels.subset_kernel, values, plan.k, plan.omega, plan.t_inc, words, out)

