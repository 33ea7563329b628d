"""Unary encodings: symmetric (SUE, basic RAPPOR) and optimized (OUE) — one randomizer, two parameter sets.

A person with category ``v`` encodes it as ``k`` bits, bit ``v`` set, and reports every bit independently
randomized: the true bit is 1 with probability ``p``, every other bit is 1 with probability ``q``.

* **SUE** (symmetric unary encoding, basic RAPPOR): ``p = e^{ε/2}/(e^{ε/2} + 1)``, ``q = 1 - p``;
  per-report variance of a frequency estimate ``e^{ε/2}/(e^{ε/2} - 1)²``.
* **OUE** (optimized unary encoding): ``p = 1/2``, ``q = 1/(e^ε + 1)``; variance ``4e^ε/(e^ε - 1)²``, the
  same as OLH, the smallest of the pure oracles for large ``k``.

Two inputs ``v ≠ v'`` change only bits ``v`` and ``v'``, so the largest likelihood ratio of a whole report is
the *product bound* ``[p/q]·[(1 - q)/(1 - p)]``; an unknown value (``unknown="uniform"``: every bit at
``q``) differs from ``v`` in bit ``v`` only, so its ratios ``p/q`` and ``(1 - q)/(1 - p)`` are smaller.

Finite-output integer plan (design rule R1). Unary encodings need ``k`` random bits per
person, so the "other" bits are drawn several per random word: each 64-bit word is cut into lanes of
``b ∈ {8, 16, 32}`` bits and a bit is 1 iff its lane is below ``t_other``, so ``q = t_other / 2**b``
exactly. The true bit is drawn from a word of its own as a 53-bit event, ``p = t_true / 2**53``, with
``t_true`` the largest integer such that ``p(1 - q) / (q(1 - p)) ≤ E`` (E the rigorous lower bound of e^ε
of ``exp_lower``). So the realized ε never exceeds ε and is tight to about ``2**-53 / (p(1 - p))``
(< 1e-9 relatively over ε ∈ (0, 20]) at every ε — the coarse grid of ``q`` costs no tightness, because
the fine-grained ``p`` absorbs the rounding of ``q``. What the grid can cost is variance: ``t_other`` is
``q``'s nearest grid neighbour below or above (whichever gives the variance closer to Wang et al.'s), and the
lane width ``b`` is the smallest whose realized per-report variance is within ``VARIANCE_TOL`` (1%)
of Wang et al.'s table; the estimator always uses the realized ``p`` and ``q``, so it is exactly unbiased
and its standard errors are exact. Lanes of 8 bits serve SUE for ε ≤ 2 and OUE for ε ≤ 4, 16 bits SUE
above and OUE up to ε = 8, 32 bits OUE beyond (where its ``q`` falls below 2**-16). Words per record are
fixed, ``1 + ceil(k/8)·b/8`` (R2), and randomizing is bound by the rate at which words are drawn, so the
lane width sets the speed.

Reports are bit-packed (``ceil(k/8)`` bytes per person; see :class:`ldpnum.Reports`). Aggregation counts
each bit over the packed reports (Cython, ``ldpnum/_kernels/server_unary.pyx``) into ``k`` counts plus the
number of reports, and the pure-protocol estimator of :class:`~ldpnum.frequency.FrequencyOracle` debiases
them with the realized ``p* = p`` and ``q* = q``.

References
----------
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (unary encoding / basic RAPPOR, optimized unary encoding, the variance table).
Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal Response",
CCS 2014. Lecture 20, "Local Model of Differential Privacy", course lecture notes (the unary-encoding
histogram).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..spec import check_spec
from ..reports import Reports
from ..aggregate import Aggregate
from ..aggregate import support_counts as support_count_check
from .._counting import count_in_slices, n_threads
from .._kernels import client_unary as kernels
from .._kernels._jit import launch
from ..plans import TWO53, exp_lower
from ._base import FrequencyOracle

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["SUE", "OUE", "UnaryPlan", "SparseBits", "sparse_bits", "BitVectorOracle", "unary_plan", "unary_extreme_ratio", "lane_thresholds",
           "pack_bits", "unpack_bits", "count_bits", "grouped_bit_counts", "check_grouped_bit_counts"]

#: Lane widths tried, narrowest (fastest: 8 bits per random byte) first.
LANE_BITS = (8, 16, 32)
#: Largest relative difference between the realized and the nominal per-report variance.
VARIANCE_TOL = 1e-2
_PARALLEL_MIN_BYTES = 1 << 22


@dataclass(frozen=True)
class UnaryPlan:
    """Integer plan of the unary randomizer.

    Attributes
    ----------
    k : int
        Number of bits (categories).
    lane_bits : int
        Width ``b`` of the lanes an "other" bit is drawn from (8, 16 or 32).
    t_other : int
        An "other" bit is 1 iff its lane ``< t_other``: ``q = t_other / 2**lane_bits``.
    t_true : int
        The true bit is 1 iff ``(word >> 11) < t_true``: ``p = t_true / 2**53``.
    """

    k: int
    lane_bits: int
    t_other: int
    t_true: int

    @property
    def n_bytes(self) -> int:
        """Bytes per packed report, ``ceil(k/8)``."""
        return -(-self.k // 8)

    @property
    def words_per_record(self) -> int:
        """One word for the true bit, then ``lane_bits`` bits of words for each of the ``8·n_bytes`` bits."""
        return 1 + self.n_bytes * self.lane_bits // 8

    @property
    def p(self) -> Fraction:
        """Exact probability that the true bit is 1."""
        return Fraction(self.t_true, TWO53)

    @property
    def q(self) -> Fraction:
        """Exact probability that any other bit (every bit, for an unknown value) is 1."""
        return Fraction(self.t_other, 2**self.lane_bits)

    def bit_probabilities(self, v: int) -> list[Fraction]:
        """Exact probability that each bit is 1, for true category ``v`` (``-1``: unknown)."""
        q = self.q
        out = [q] * self.k
        if v >= 0:
            out[v] = self.p
        return out

    def exact_probabilities(self, v: int) -> dict[int, Fraction]:
        """``{report: Fraction}`` over all ``2**k`` reports (``k ≤ 16``), for true category ``v``.

        A report is keyed by the integer whose bit ``j`` is report bit ``j``, i.e. its packed bytes read as a
        little-endian integer.
        """
        if self.k > 16:
            raise ValueError(f"exact_probabilities enumerates 2**k reports; k = {self.k} is too large")
        probs = self.bit_probabilities(v)
        dist = {0: Fraction(1)}
        for j, pj in enumerate(probs):
            bit = 1 << j
            new = {}
            for y, pr in dist.items():
                new[y] = pr * (1 - pj)
                new[y | bit] = pr * pj
            dist = new
        return dist

    def extreme_ratio(self) -> Fraction:
        """Exact largest ``P[y | s] / P[y | s']`` over all states (categories and unknown) and reports.

        Structural reduction: bits where two states have the same probability cancel. Two categories
        differ in bits ``v`` (``p`` vs ``q``) and ``v'`` (``q`` vs ``p``), an unknown value and ``v`` in bit
        ``v`` only, and each bit's factor is maximized independently by the report
        (:func:`unary_extreme_ratio`).
        """
        return unary_extreme_ratio(self.p, self.q)

    def kernel_thresholds(self) -> tuple[np.uint64, np.uint64]:
        """``(t_all, t_low)``: ``t_other`` in every lane of a word, and the same without the lanes' high bits."""
        return lane_thresholds(self.t_other, self.lane_bits)


def unary_extreme_ratio(p: Fraction, q: Fraction) -> Fraction:
    """Exact largest likelihood ratio of a report of independent bits.

    A category sets its own bit with probability ``p`` and every other bit (every bit, for an unknown value) with
    probability ``q``.

    Two categories differ in two bits, an unknown value and a category in one, and each bit's factor is
    maximized independently by the report (the reduction of :meth:`UnaryPlan.extreme_ratio`).
    """
    single = max(p / q, q / p, (1 - p) / (1 - q), (1 - q) / (1 - p))
    pair = max(p / q, (1 - p) / (1 - q)) * max(q / p, (1 - q) / (1 - p))
    return max(single, pair)


def lane_thresholds(t: int, lane_bits: int) -> tuple[np.uint64, np.uint64]:
    """``(t_all, t_low)`` of the kernels' SWAR lane comparison.

    ``t`` in every ``lane_bits``-bit lane of a word, and the same without the lanes' high bits (for 32-bit lanes,
    compared one at a time, both are ``t``).
    """
    b = lane_bits
    if b == 32:
        return np.uint64(t), np.uint64(t)
    t_all = 0
    high = 0
    for lane in range(64 // b):
        t_all |= t << (b * lane)
        high |= 1 << (b * lane + b - 1)
    return np.uint64(t_all), np.uint64(t_all & ~high & (2**64 - 1))


@dataclass(frozen=True)
class SparseBits:
    r"""Layout of words that draws ``n_bits`` independent bits of probability ``q = t / 2**b`` sparsely.

    The lane method of :class:`UnaryPlan` spends ``b`` random bits on every bit, comparing a uniform ``b``-bit lane
    ``U`` with ``t``. That comparison is decided at the first bit, from the top, where ``U`` and ``t`` differ: half
    the time at the first bit, a quarter at the second... This layout makes the first ``ℓ`` = ``levels`` of those
    decisions for 64 bits at once, bit-sliced: for each 64-bit chunk of the report, mask word ``k`` holds bit ``k``
    (from the top) of the 64 lanes ``U``. A report bit still *alive* before level ``k`` (its lane's top ``k - 1``
    bits equal ``t``'s) is decided there when its mask bit differs from ``t``'s bit ``k`` (``t_k``): it is 1 if
    ``t_k = 1`` (its lane has a 0 there, so ``U < t``), 0 if ``t_k = 0``; it stays alive when the bits agree. The
    ``≈ n_bits / 2**ℓ`` bits alive after ``ℓ`` levels compare the rest of their lane with the rest of ``t``: taken
    in bit order over the whole record, they read consecutive ``λ``-bit lanes (``λ`` = ``lane_bits``; lane ``l``
    of a word is its bits ``[l·λ, (l+1)·λ)``) and are 1 iff the lane is below ``t_lane = (t mod 2**(b - ℓ)) ·
    2**(λ - (b - ℓ))``, so the lane's top ``b - ℓ`` bits stand for the rest of ``U``. So

    .. math::

        P[\text{bit} = 1] = \sum_{k \le \ell,\ t_k = 1} 2^{-k} + 2^{-\ell}\,\frac{t_{\text{lane}}}{2^{\lambda}}
        = \frac{t}{2^b} = q

    exactly, for every bit independently of the others (an alive bit's lane is a fresh part of a uniform word,
    whatever the other bits' masks), so the report has the plan's exact distribution. ``t_high`` is ``t``'s top
    ``ℓ`` bits, ``t >> (b - ℓ)``.

    Words of a record: ``ℓ`` mask words per chunk (chunk ``ch``, level ``k`` at ``ch·ℓ + k``), then
    ``pool_words`` lane words, then two key words. The number of alive bits is random (binomial, mean
    ``n_bits / 2**ℓ``); lane word ``i ≥ pool_words`` is SipHash-2-4 under the record's two key words of the message
    ``(SPARSE_TAG, 0, i)``, a pseudo-random function of words the record drew, as the memoized responses use it.
    ``pool_words`` covers the mean plus four standard deviations, so a record reads beyond its pool about once in
    30,000. Words per record stay fixed (design rule R2); a bit costs ``ℓ + λ/2**ℓ`` random bits on average
    instead of ``b``.

    **Two thresholds.** With ``t_high_one`` and ``t_lane_one`` (the split of a second threshold ``t_one`` at the same
    ``ℓ``), a bit whose *selector* bit is 1 compares its lane's bits with ``t_one``'s instead of ``t``'s, so it is 1
    with probability ``q_one = t_one / 2**b``, and the others with ``q``: the decisions per level are the same
    bit-sliced comparisons, with each bit's threshold bit chosen by its selector. L-OSUE's instantaneous flip draws
    each output bit with its input bit as the selector (``P[1 | 1]``, ``P[1 | 0]``); the count-mean sketch has one
    threshold.

    Attributes
    ----------
    n_bits, levels, t_high, lane_bits, t_lane, pool_words : int
    t_high_one, t_lane_one : int or None
        The second threshold's split (None: the same as ``t_high``, ``t_lane``).
    """

    n_bits: int
    levels: int
    t_high: int
    lane_bits: int
    t_lane: int
    pool_words: int
    t_high_one: int | None = None
    t_lane_one: int | None = None

    @property
    def n_chunks(self) -> int:
        """64-bit chunks of the bits, ``ceil(n_bits / 64)``."""
        return -(-self.n_bits // 64)

    @property
    def words(self) -> int:
        """Words this layout reads per record: masks, lane pool, the two key words."""
        return self.levels * self.n_chunks + self.pool_words + 2

    @property
    def q(self) -> Fraction:
        """Exact probability of every bit (with two thresholds, of a bit whose selector is 0).

        ``(t_high + t_lane / 2**lane_bits) / 2**levels``.
        """
        return (self.t_high + Fraction(self.t_lane, 2**self.lane_bits)) / 2**self.levels

    @property
    def q_one(self) -> Fraction:
        """Exact probability of a bit whose selector is 1: ``(t_high_one + t_lane_one / 2**lane_bits) / 2**levels``."""
        _, high, _, lane = self.thresholds()
        return (high + Fraction(lane, 2**self.lane_bits)) / 2**self.levels

    def thresholds(self) -> tuple[int, int, int, int]:
        """``(t_high, t_high_one, t_lane, t_lane_one)`` as the kernels take them (one threshold: each twice)."""
        high_one = self.t_high if self.t_high_one is None else self.t_high_one
        lane_one = self.t_lane if self.t_lane_one is None else self.t_lane_one
        return self.t_high, high_one, self.t_lane, lane_one


#: The first message word of the lane words a :class:`SparseBits` record reads beyond its pool (ASCII "sparse-1").
SPARSE_TAG = 0x312D657372617073


def sparse_bits(n_bits: int, lane_bits: int, t: int, t_one: int | None = None) -> SparseBits:
    """The :class:`SparseBits` layout of ``n_bits`` bits of probability ``t / 2**lane_bits`` (``0 < t < 2**lane_bits``).

    With ``t_one``, bits whose selector is 1 have probability ``t_one / 2**lane_bits`` instead. Of the level counts
    from the fewest leading zeros of the thresholds (in ``lane_bits`` bits) to the most plus 3, the one that reads
    the fewest words (the most levels among equals: fewer alive bits to visit); the lanes are the narrowest of 8, 16
    and 32 bits that hold the ``lane_bits - levels`` remaining bits of the thresholds.

    >>> sp = sparse_bits(1024, 16, 13_000, 52_600)
    >>> sp.levels, sp.lane_bits, sp.words, (sp.q, sp.q_one) == (Fraction(13_000, 2**16), Fraction(52_600, 2**16))
    (4, 16, 90, True)
    """
    ts = [t] if t_one is None else [t, t_one]
    for x in ts:
        if not 0 < x < 2**lane_bits:
            raise ValueError(f"thresholds must be in (0, 2**lane_bits); got {x}, lane_bits={lane_bits}")
    ts = [int(x) for x in ts]
    best = None
    leads = [lane_bits - x.bit_length() for x in ts]
    for levels in range(min(leads), min(lane_bits - 1, max(leads) + 3) + 1):
        rest = lane_bits - levels
        width = next(b for b in LANE_BITS if b >= rest)
        mean = n_bits / 2**levels
        sd = math.sqrt(mean * (1 - 2.0**-levels))
        pool = max(1, math.ceil((mean + 4 * sd + 1) / (64 // width)))
        high, lane = [x >> rest for x in ts], [(x & ((1 << rest) - 1)) << (width - rest) for x in ts]
        out = SparseBits(n_bits, levels, high[0], width, lane[0], pool,
                         *((high[1], lane[1]) if t_one is not None else ()))
        if best is None or out.words <= best.words:
            best = out
    assert best is not None and best.q == Fraction(ts[0], 2**lane_bits) and best.q_one == Fraction(ts[-1], 2**lane_bits)
    return best


def _true_threshold(e, q):
    """Largest ``t`` with ``p = t/2**53`` satisfying ``p (1 - q) ≤ E q (1 - p)``."""
    return math.floor(TWO53 * e * q / (1 - q + e * q))


def unary_plan(epsilon: float, k: int, q_nominal: float, variance_nominal: float) -> UnaryPlan:
    """The integer plan whose realized ε is ≤ ε (tight) and whose variance is closest to the nominal one.

    For each lane width in :data:`LANE_BITS`, ``t_other`` is ``q_nominal · 2**b`` rounded down or up and
    ``t_true`` the largest threshold the product bound allows; the first width whose realized per-report
    variance ``q(1 - q)/(p - q)²`` is within :data:`VARIANCE_TOL` of ``variance_nominal`` is used (the
    widest otherwise).
    """
    e = exp_lower(epsilon)
    best = None
    for b in LANE_BITS:
        scale = 2**b
        candidates = {min(max(math.floor(q_nominal * scale), 1), scale - 1),
                      min(max(math.ceil(q_nominal * scale), 1), scale - 1)}
        for t_other in sorted(candidates):
            q = Fraction(t_other, scale)
            t_true = _true_threshold(e, q)
            p = Fraction(t_true, TWO53)
            if not q < p < 1:
                continue
            var = float(q * (1 - q) / (p - q) ** 2)
            loss = abs(var / variance_nominal - 1)
            if best is None or b > best[0] or loss < best[1]:
                best = (b, loss, UnaryPlan(k=k, lane_bits=b, t_other=t_other, t_true=t_true))
        if best is not None and best[0] == b and best[1] <= VARIANCE_TOL:
            break
    if best is None:
        raise ValueError(f"epsilon={epsilon!r} is too small to separate the true bit from the others on the "
                         "integer grid")
    return best[2]


class BitVectorOracle(FrequencyOracle):
    """Oracles whose reports are ``k``-bit vectors (unary encodings, subset selection, L-OSUE).

    Packed reports, aggregated into per-bit counts plus the number of reports.
    """

    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        return support_count_check(counts, total, n_reports, spec)  # a report adds to several support counts

    @property
    def n_cells(self) -> int:
        """Number of bits per report = number of counts in the aggregate (``k``)."""
        return self._k

    @property
    def bytes_per_report(self) -> int:
        """Size of one packed report: ``ceil(k/8)`` bytes."""
        return -(-self._k // 8)

    def _spec_params(self):
        return {"k": self._k, "packed_bits": self._k}

    def _allocate_reports(self, n):
        return np.empty((n, self.bytes_per_report), dtype=np.uint8)

    def aggregate(self, reports: Reports) -> Aggregate:
        """Count, for each bit, the reports that set it: ``k`` counts plus the number of reports."""
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        return Aggregate(count_bits(reports.codes, self._k), self.spec, len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports (``k`` zero bit counts), the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)


#: The former private name, kept for the family's own modules.
_BitVectorOracle = BitVectorOracle


class _UnaryEncoding(BitVectorOracle):
    """The unary randomizer shared by :class:`SUE` and :class:`OUE` (they differ only in ``p`` and ``q``)."""

    def __init__(self, epsilon: float, k: int) -> None:
        super().__init__(epsilon, k)
        q0 = self.nominal_probabilities[1]
        self._plan = unary_plan(self._epsilon, self._k, q0, self.nominal_variance)

    @property
    def nominal_probabilities(self) -> tuple[float, float]:
        """``(p, q)`` of the textbook mechanism (the realized ones are ``support_probabilities``)."""
        raise NotImplementedError

    @property
    def nominal_variance(self) -> float:
        """Wang et al.'s per-report variance at true frequency 0 (``Var[c̃(i)]/n`` of its table)."""
        raise NotImplementedError

    @property
    def support_probabilities(self) -> tuple[float, float]:
        return float(self._plan.p), float(self._plan.q)

    def _run_kernel(self, values, words, out):
        plan = self._plan
        t_all, t_low = plan.kernel_thresholds()
        launch(kernels.unary_kernel, values, plan.k, plan.lane_bits, t_all, t_low, plan.t_true, words, out)



class SUE(_UnaryEncoding):
    """Symmetric unary encoding (basic RAPPOR) over ``k`` categories.

    Each bit of the one-hot encoding of the value is kept with probability ``e^{ε/2}/(e^{ε/2} + 1)``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**24.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    Reports are ``k`` bits packed into ``ceil(k/8)`` bytes per person. The realized ``p`` and ``q``
    (``support_probabilities``) are on the integer grid described in :mod:`ldpnum.frequency.unary`: the
    realized ε is ≤ ε and tight, and the per-report variance is within 1% of Wang et al.'s
    ``e^{ε/2}/(e^{ε/2} - 1)²``. OUE has a smaller variance at every ε; SUE is here for comparison and
    compatibility with RAPPOR.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
    Estimation", USENIX Security 2017; Lecture 20, "Local Model of Differential Privacy", course lecture
    notes.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.frequency.unary import SUE
    >>> sue = SUE(epsilon=2.0, k=12)
    >>> r = sue.privatize(np.array([0, 5, 11]), rng=0)
    >>> r.codes.shape, r.codes.dtype
    ((3, 2), dtype('uint8'))
    """

    name = "sue"

    @property
    def nominal_probabilities(self) -> tuple[float, float]:
        """Nominal ``(p, q)`` of SUE: ``q = 1 / (e^(ε/2) + 1)``, ``p = 1 - q`` (before the integer grid)."""
        q = 1.0 / (math.exp(self._epsilon / 2) + 1.0)
        return 1.0 - q, q

    @property
    def nominal_variance(self) -> float:
        """Textbook SUE per-report variance at frequency 0: ``e^(ε/2) / (e^(ε/2) - 1)^2``."""
        h = self._epsilon / 2
        d = math.expm1(h) ** 2
        return math.exp(h) / d if d > 0 else math.inf


class OUE(_UnaryEncoding):
    """Optimized unary encoding over ``k`` categories.

    The true bit is 1 with probability 1/2, every other bit with probability ``1/(e^ε + 1)``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**24.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    Reports are ``k`` bits packed into ``ceil(k/8)`` bytes per person. The realized ``p`` and ``q`` are on
    the integer grid described in :mod:`ldpnum.frequency.unary`: the realized ε is ≤ ε and tight, and the
    per-report variance is within 1% of Wang et al.'s ``4e^ε/(e^ε - 1)²`` (that of OLH). OUE is the choice
    rule's pick for ``k ≥ 3e^ε + 2`` when communication is not a concern
    (:func:`ldpnum.frequency.recommend`).

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
    Estimation", USENIX Security 2017; Lecture 20, "Local Model of Differential Privacy", course lecture
    notes.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.frequency.unary import OUE
    >>> oue = OUE(epsilon=1.0, k=1024)
    >>> x = np.random.default_rng(0).integers(0, 8, 20_000)
    >>> est = oue.estimate_frequencies(oue.privatize(x, rng=1))
    >>> bool(np.all(np.abs(est.frequencies[:8] - 1 / 8) < 4.5 * est.standard_errors[:8]))
    True
    """

    name = "oue"

    @property
    def nominal_probabilities(self) -> tuple[float, float]:
        """``(p, q)`` of the textbook OUE: ``(1/2, 1 / (e^ε + 1))`` (nominal, before the integer grid)."""
        return 0.5, 1.0 / (math.exp(self._epsilon) + 1.0)

    @property
    def nominal_variance(self) -> float:
        """Textbook OUE per-report variance at frequency 0: ``4 e^ε / (e^ε - 1)^2``."""
        d = math.expm1(self._epsilon) ** 2
        return 4 * math.exp(self._epsilon) / d if d > 0 else math.inf


# -- packed bit vectors -------------------------------------------------------------------------------
def pack_bits(bits: NDArray[Any]) -> NDArray[np.uint8]:
    """Pack an ``(n, k)`` array of 0/1 into ``(n, ceil(k/8))`` bytes.

    Bit ``j`` of a row goes to bit ``j % 8`` (least significant first) of byte ``j // 8``.
    """
    bits = np.asarray(bits)
    if bits.ndim != 2:
        raise ValueError(f"bits must be two-dimensional (n, k); got shape {bits.shape}")
    if bits.size and not np.isin(bits, (0, 1)).all():
        raise ValueError("bits must hold only 0 and 1")
    return np.packbits(bits.astype(np.uint8), axis=1, bitorder="little")


def unpack_bits(reports: Reports) -> NDArray[np.uint8]:
    """The ``(n, k)`` array of 0/1 (``uint8``) behind bit-packed :class:`~ldpnum.Reports`."""
    if not isinstance(reports, Reports) or reports.spec.get("packed_bits") is None:
        raise TypeError("unpack_bits expects bit-packed Reports (a unary encoding's)")
    k = int(reports.spec.get("packed_bits"))
    return np.unpackbits(reports.codes, axis=1, count=k, bitorder="little")


def count_bits(codes: NDArray[np.uint8], k: int) -> NDArray[np.int64]:
    """Per-bit counts of bit-packed reports (``(n, ceil(k/8))`` uint8): how many reports set each bit.

    Counts row slices on several threads (the Cython kernel releases the GIL) when the input is large.
    Raises ValueError if a padding bit beyond bit ``k - 1`` is set.
    """
    from .._kernels.server_unary import count_bits as _count

    codes = np.ascontiguousarray(codes, dtype=np.uint8)
    n, n_bytes = codes.shape
    if sys.byteorder != "little":  # pragma: no cover - the kernel's word loads assume little-endian
        full = np.unpackbits(codes, axis=1, bitorder="little").sum(axis=0, dtype=np.int64)
    else:
        n_slices = n_threads() if codes.size >= _PARALLEL_MIN_BYTES else 1
        full, _, _ = count_in_slices(_count, codes, 8 * n_bytes, n_slices=n_slices)
    if full[k:].any():
        raise ValueError(f"reports have padding bits set beyond bit {k - 1} "
                         f"({int(full[k:].sum())} of them): not reports of a {k}-bit unary encoding")
    return full[:k]


def grouped_bit_counts(codes: NDArray[np.uint8], k: int, groups: int, *, group: str = "group",
                       what: str = "this mechanism") -> NDArray[np.int64]:
    """Per-group counts of bit-packed reports that end with their group's index.

    A report row is ``k/8`` bytes of bits followed by its group (a RAPPOR cohort, a count-mean sketch's hash
    index) as a little-endian integer in the row's last bytes. Returns an ``(groups, k + 1)`` int64 array whose
    row ``j`` is the number of reports of group ``j`` followed by how many of them set each of the ``k`` bits.

    Reports are grouped (one stable sort) and each group's bits counted by :func:`count_bits`. Raises ValueError
    for a group ``≥ groups`` (naming the count and the first report; ``group`` and ``what`` word the message).
    """
    n_bytes = k // 8
    codes = np.ascontiguousarray(codes, dtype=np.uint8)
    index = np.zeros(codes.shape[0], dtype=np.int64)
    for b in range(codes.shape[1] - n_bytes):
        index |= codes[:, n_bytes + b].astype(np.int64) << (8 * b)
    bad = index >= groups
    if bad.any():
        first = int(np.argmax(bad))
        raise ValueError(f"reports have {int(bad.sum())} {group}(s) outside 0..{groups - 1}, first at index {first} "
                         f"({int(index[first])}): not reports of this {what}")
    sizes = np.bincount(index, minlength=groups)
    out = np.zeros((groups, k + 1), dtype=np.int64)
    out[:, 0] = sizes
    if codes.shape[0]:
        order = np.argsort(index, kind="stable")
        bits = np.ascontiguousarray(codes[order, :n_bytes])
        start = 0
        for j in np.flatnonzero(sizes).tolist():
            stop = start + int(sizes[j])
            out[j, 1:] = count_bits(bits[start:stop], k)
            start = stop
    return out


def check_grouped_bit_counts(counts: NDArray[np.int64], total: int, n_reports: int | None, spec: Any, groups: int,
                             k: int, *, group: str = "group") -> int:
    """The count check of :func:`grouped_bit_counts`' aggregates (see :func:`ldpnum.aggregate.register_count_check`).

    Per group: its reports' number, then each bit's count, which cannot exceed it; the groups' reports add up to
    ``n_reports`` (required whenever there are counts). Returns ``n_reports``.
    """
    table = counts.reshape(groups, k + 1)
    if n_reports is None:
        if total:
            raise ValueError(f"aggregate of {spec}: n_reports is required (each {spec.mechanism} report adds to "
                             "several counts, so their sum is not the number of reports)")
        return 0
    held = int(table[:, 0].sum())
    if held != n_reports:
        raise ValueError(f"aggregate of {spec}: n_reports={n_reports} but its {group}s hold {held} reports")
    over = table[:, 1:] > table[:, :1]
    if over.any():
        j, i = (int(v) for v in np.argwhere(over)[0])
        raise ValueError(f"aggregate of {spec}: {group} {j}'s count {table[j, i + 1]} of bit {i} exceeds the "
                         f"{group}'s {table[j, 0]} reports")
    return n_reports
