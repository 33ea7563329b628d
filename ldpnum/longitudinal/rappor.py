"""RAPPOR: a Bloom filter per cohort, a permanent randomized response, then an instantaneous one at every report.

The permanent response is memoized; reports are decoded against a dictionary of candidate items (Erlingsson, Pihur,
Korolova).

The client (one person, item ``x``)
-----------------------------------
1. *Item.* ``x`` (str, bytes or a non-negative int) is encoded to a word ``w`` by the heavy hitters' item
   encoding (:func:`ldpnum.heavy.encode_items`, ``item_bits`` bits). An item wider than 64 bits (up to 256) is
   represented here by its public 64-bit digest (:func:`ldpnum.heavy.items.item_digests`), hashed, memoized and
   decoded against exactly as a 64-bit word.
2. *Cohort.* The person's cohort ``c ∈ [0, cohorts)`` is ``floor(u · cohorts / 2**64)`` for a keyed word
   ``u = SipHash_{key}(tweak_c ‖ 0 ‖ 0)`` (:func:`~ldpnum.longitudinal.keys.keyed_words` under a tweak of its
   own), so it is fixed for the person, independent of their item, and never stored.
3. *Bloom filter.* ``B`` has ``k`` bits, bit ``pos_j(c, w) = floor(SipHash-2-4_K(c ‖ w ‖ j) · k / 2**64)`` set
   for ``j < h``: ``h`` hash functions per cohort from one public, seeded family (``K`` = :data:`BLOOM_KEY`,
   the first 16 bytes of SHA-256 of ``b"ldpnum/rappor-bloom/v1"``; the spec names it ``hash="siphash24-bloom-v1"``).
   The collector recomputes it for its candidates (:meth:`RAPPOR.bloom_bits`).
4. *Permanent randomized response*, memoized: ``B'_i = 1`` w.p. ``f/2``, ``0`` w.p. ``f/2``, ``B_i`` w.p.
   ``1 - f`` (i.e. ``B' = B XOR N``, every bit of ``N`` 1 w.p. ``f/2``), from words keyed by the person's key
   with the item's word as the memoized value: the same person and item give the same ``B'`` at every
   report, on every call and machine, with nothing stored (design rule R9).
5. *Instantaneous randomized response*, at every report: ``S_i = 1`` w.p. ``q`` if ``B'_i = 1``, w.p. ``p`` if
   ``B'_i = 0``, from fresh words (``rng``).

The report is ``S`` and the cohort. Integer plan (design rule R1): every bit is drawn from a *lane* of a 64-bit
word (8, 16 or 32 bits, as the unary encodings draw theirs, :mod:`ldpnum.frequency.unary`) compared with a
threshold, so ``f/2``, ``p`` and ``q`` are realized exactly as ``t / 2**lane_bits``: the narrowest lane on
whose grid all three lie (8 bits for the paper's ``f = 1/2, p = 1/2, q = 3/4``), else 32-bit lanes with each
rounded to the nearest multiple of ``2**-32``. Both ε below are computed from the realized values.

Report layout
-------------
Bit-packed (``Reports`` with ``packed_bits = k + cohort_bits``): ``k/8`` bytes of ``S`` (bit ``j`` is bit
``j % 8`` of byte ``j // 8``), then the cohort as a little-endian integer of ``cohort_bits =
max(1, ceil(log2 cohorts))`` bits in the row's last byte(s). Why: a report is ``k`` (128 by default) bits plus a
cohort, more than the one ``uint64`` code of the structured-word layouts, and the bit-packed layout is the one
``Reports`` already holds for every row of bits (validated, sliced, concatenated, pickled the same way); ``k``
a multiple of 8 keeps the cohort in whole bytes, so the padding check of packed reports bounds it (a cohort
above ``cohorts - 1`` but within its bits is refused when aggregating).

Privacy (exact, from the integer plans)
---------------------------------------
With ``P1 = P[B'_i = 1 | B_i = 1] = 1 - f/2`` and ``P0 = f/2``, two items whose filters are disjoint (``k ≥ 2h``)
differ in ``2h`` bits, each of likelihood ratio ``P1/P0``, so all reports about one item are ε∞-LDP with

    ε∞ = 2h · ln((1 - f/2) / (f/2))                            (4.39 at h = 2, f = 1/2),

and one report, with ``q* = P[S_i = 1 | B_i = 1] = ½f(p + q) + (1 - f)q`` and ``p* = P[S_i = 1 | B_i = 0] =
½f(p + q) + (1 - f)p``, is ε1-LDP with

    ε1 = h · ln(q*(1 - p*) / (p*(1 - q*)))                     (1.07 at the paper's parameters).

Both are tight (reached by a pair of items with disjoint filters and a report setting exactly one's bits). The
cohort is independent of the item, so it cancels from every ratio. RAPPOR is parametrized by ``(f, p, q)``,
so its spec's ``epsilon`` is the computed ε1 (:attr:`RAPPOR.epsilon`), in (0, 20].

Decoding (the collector)
------------------------
The aggregate is, per cohort ``j``, its number of reports ``N_j`` and how many set each bit, ``c_ij``. Each true
bit count is estimated unbiasedly by ``t_ij = (c_ij - p* N_j) / (q* - p*)`` (``q* - p* = (1 - f)(q - p)``).
Against a dictionary of ``M`` candidates, the frequencies solve ``t_ij / N_j ≈ Σ_m X_{ij,m} f_m + u f_0``, where
``X_{ij,m}`` is 1 when candidate ``m`` sets bit ``i`` in cohort ``j`` and the intercept ``u = 1 - (1 - 1/k)^h``
(the chance a bit is set by an item outside the dictionary) carries ``f_0``, the share of people whose item is
not a candidate. As in the paper, a sparse regression selects candidates (a non-negative Lasso, see
:func:`nonnegative_lasso`), then least squares on the selected ones gives the estimates, their standard
errors, and a one-sided test of ``f_m > 0`` at the Bonferroni-corrected level ``alpha / M``.

Without a dictionary: segments (the Segment Pair Method)
--------------------------------------------------------
``RAPPOR(..., segments=S, segment_bits=b)`` cuts each item's word (``S·b`` bits) into ``S`` segments
(:func:`segment_values`). Besides the report above, each person reports the pair of segments ``(u, v)`` at a
position pair ``(a, b)``, ``a < b``, chosen uniformly among the ``P = S(S - 1)/2`` by a keyed word independent of
the item (:meth:`RAPPOR.person_position_pairs`): the same Bloom filter randomized response, permanent and
instantaneous, applied to the item ``u·2**b + v`` in cohort ``pair·cohorts + c`` (:attr:`RAPPOR.pair_plan`; the
position pair is thus public, like the cohort, and each position pair's people are decoded on their own). Its
permanent noise comes from keyed words of the same memoized item, disjoint from the first filter's (words
``c … 2c - 1`` of the record). A row is the two reports side by side (``2 · (k/8 + cohort bytes)``); the aggregate
is the two tables of per-cohort counts.

Privacy: the two reports are independent given the item, so the likelihood ratios multiply: each round's
report (both filters) is ε1-LDP and all reports about one item ε∞-LDP with

    ε1 = 2h · ln(q*(1 - p*) / (p*(1 - q*))),     ε∞ = 4h · ln((1 - f/2) / (f/2))      (2.15 and 8.79 at the paper's),

exact from the two plans and tight (two items differing at every segment, with disjoint filters in both).
The collector finds the frequent items by :meth:`RAPPOR.discover`: every segment pair of every position pair
decoded, the frequent ones (Bonferroni over the ``P · 2**(2b)`` tested) as the edges of a graph, its cliques as the
dictionary of the items' reports.

References
----------
Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal Response",
CCS 2014. G. Fanti, V. Pihur, Ú. Erlingsson, "Building a RAPPOR with the Unknown: Privacy-Preserving Learning of
Associations and Data Dictionaries", PoPETs 2016. J.-P. Aumasson, D. J. Bernstein, "SipHash: a fast
short-input PRF", INDOCRYPT 2012.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._kernels import client_rappor_bloom as kernels
from .._kernels import server_rappor
from .._kernels._jit import launch
from .._validation import check_scalar
from ..aggregate import Aggregate
from ..frequency.unary import check_grouped_bit_counts, grouped_bit_counts
from ..heavy import HeavyHittersEstimate
from ..heavy.items import (ITEM_TYPES, check_digest, check_item_bits, decode_items, digest_params,
                           distinct_candidates, encode_items, encode_typed_items, item_digests)
from ..reports import Reports
from ..spec import Spec, check_spec
from .keys import keyed_words, memo_tweak
from .memo import Longitudinal, check_epsilons, spec_round

if TYPE_CHECKING:
    import pandas as pd

    from .._typing import ArrayLike, NDArray

__all__ = ["RAPPOR", "RapporPlan", "RapporEstimate", "rappor_plan", "cohort_counts", "nonnegative_lasso",
           "BLOOM_KEY", "HASH_FAMILY", "pair_ratio", "log_ratio", "segment_values", "segment_cliques", "BloomDesign"]

#: The public hash family of the Bloom filters, as the spec names it.
HASH_FAMILY = "siphash24-bloom-v1"
_BLOOM_DIGEST = hashlib.sha256(b"ldpnum/rappor-bloom/v1").digest()
#: The public 128-bit SipHash key of the Bloom filters' hash family (two little-endian 64-bit words).
BLOOM_KEY = (np.uint64(int.from_bytes(_BLOOM_DIGEST[:8], "little")),
             np.uint64(int.from_bytes(_BLOOM_DIGEST[8:16], "little")))
#: Lane widths tried, narrowest (fewest words per record) first.
LANE_BITS = (8, 16, 32)
#: Largest Bloom filter and number of cohorts (the aggregate holds ``cohorts · (k + 1)`` counts).
MAX_K = 4096
MAX_COHORTS = 4096
#: Widest segment of the segment pair mode: its decoder tries all ``2**(2 · segment_bits)`` pairs per position pair
#: (``2**16`` at 8 bits, a byte per segment, as Fanti, Pihur and Erlingsson cut strings), held as a
#: :class:`BloomDesign` of ``2 · 2**16 · cohorts · h`` bytes (8.4 MB at 32 cohorts and h = 2).
MAX_SEGMENT_BITS = 8
#: A Bloom bit of :class:`BloomDesign` left out: one that an earlier hash of the same candidate and cohort set.
BLOOM_SKIP = 0xFFFF
#: (Candidate, cohort) pairs whose Bloom bits the decoder hashes at a time (:meth:`RAPPOR._design_positions`).
DESIGN_BATCH = 1 << 16
#: Default cap on the candidate items the segment pair graph may propose (its cliques).
MAX_CANDIDATES = 10_000
#: The non-negative Lasso keeps a candidate when its partial correlation with the residual, in standard errors,
#: exceeds ``z_{1 - 1/M}`` for ``M`` candidates (at least this): a screen that lets about one null candidate through
#: whatever the dictionary's size, below the detection level ``z_{1 - alpha/M}``. Null candidates kept on their noise
#: keep it in the least squares on the same data: measured at n = 10^6, 10^4 candidates of which 100 held by 70% of
#: people, a fixed screen at 2 standard errors kept 192 nulls, which biased the held candidates' estimates by +0.56
#: standard errors on average and the intercept by -1; this screen (3.72) kept 15 candidates, no null, and the
#: intercept within its standard error. Candidates kept near the screen are kept partly for their noise (the
#: winner's curse of any selection): their estimates lean high. ``SELECTION_Z`` is the floor for small dictionaries.
SELECTION_Z = 1.0
#: At most this share of the regression's rows may be selected (least squares needs fewer columns than rows).
MAX_SELECTED_SHARE = 0.8


def _lane_thresholds(t: int, b: int) -> tuple[np.uint64, np.uint64]:
    """``(t_all, t_low)`` of the SWAR lane comparisons.

    ``t`` in every lane of a word, and the same without the lanes' high bits (for 32-bit lanes both are ``t``).
    """
    if b == 32:
        return np.uint64(t), np.uint64(t)
    t_all = high = 0
    for lane in range(64 // b):
        t_all |= t << (b * lane)
        high |= 1 << (b * lane + b - 1)
    return np.uint64(t_all), np.uint64(t_all & ~high & (2**64 - 1))


@dataclass(frozen=True)
class RapporPlan:
    """Integer plan of RAPPOR's two layers: every bit is 1 iff a ``lane_bits``-bit lane is below a threshold.

    Attributes
    ----------
    k, h, cohorts : int
        Bloom filter bits, hash functions, cohorts.
    lane_bits : int
        8, 16 or 32.
    t_f, t_p, t_q : int
        Thresholds over ``2**lane_bits``: ``f/2 = t_f / 2**lane_bits`` (permanent noise), ``p`` and ``q``
        (instantaneous: the probability that a reported bit is 1 when the permanent bit is 0, resp. 1).
    """

    k: int
    h: int
    cohorts: int
    lane_bits: int
    t_f: int
    t_p: int
    t_q: int

    # -- realized parameters --------------------------------------------------------------------------
    @property
    def half_f(self) -> Fraction:
        """Exact ``f/2``: P[a permanent bit is forced to 1] = P[forced to 0]."""
        return Fraction(self.t_f, 2**self.lane_bits)

    @property
    def f(self) -> Fraction:
        """Exact realized ``f``."""
        return 2 * self.half_f

    @property
    def p(self) -> Fraction:
        """Exact realized ``p = P[S_i = 1 | B'_i = 0]``."""
        return Fraction(self.t_p, 2**self.lane_bits)

    @property
    def q(self) -> Fraction:
        """Exact realized ``q = P[S_i = 1 | B'_i = 1]``."""
        return Fraction(self.t_q, 2**self.lane_bits)

    @property
    def permanent_one(self) -> tuple[Fraction, Fraction]:
        """``(P1, P0)``: probability that a permanent bit is 1 when the Bloom bit is 1, resp. 0."""
        return 1 - self.half_f, self.half_f

    @property
    def support_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(q*, p*)``: probability that a reported bit is 1 when the Bloom bit is 1, resp. 0 (composed)."""
        p1, p0 = self.permanent_one
        return p1 * self.q + (1 - p1) * self.p, p0 * self.q + (1 - p0) * self.p

    @property
    def cohort_bits(self) -> int:
        """Bits of the cohort field, ``max(1, ceil(log2 cohorts))``."""
        return max(1, (self.cohorts - 1).bit_length())

    @property
    def n_bytes(self) -> int:
        """Bytes of the Bloom bits, ``k / 8``."""
        return self.k // 8

    @property
    def row_bytes(self) -> int:
        """Bytes per report: ``k/8`` plus the cohort's."""
        return self.n_bytes + -(-self.cohort_bits // 8)

    @property
    def words_per_layer(self) -> int:
        """64-bit words each layer consumes per record: ``k · lane_bits / 64``."""
        return self.k * self.lane_bits // 64

    # -- exact privacy --------------------------------------------------------------------------------
    def permanent_ratio(self) -> Fraction:
        """Exact largest likelihood ratio of the permanent layer over all pairs of Bloom filters and outputs.

        ``(P1/P0)^(2h)`` (filters with ``h`` bits each, disjoint; ``k ≥ 2h``).
        """
        one, zero = self.permanent_one
        return pair_ratio(one, zero, self.h)

    def report_ratio(self) -> Fraction:
        """Exact largest likelihood ratio of one report: ``(q*(1 - p*) / (p*(1 - q*)))^h``.

        Structural reduction: bits where two filters agree cancel; a bit set only in the first contributes at
        most ``q*/p*``, one set only in the second at most ``(1 - p*)/(1 - q*)``, each chosen by the report
        independently, and two filters of at most ``h`` bits each differ in at most ``h`` of each kind.
        """
        one, zero = self.support_probabilities
        return pair_ratio(one, zero, self.h)

    def epsilons(self) -> tuple[float, float]:
        """``(ε1, ε∞)`` realized by the plan: ``h·ln(q*(1-p*)/(p*(1-q*)))`` and ``2h·ln((1 - f/2)/(f/2))``."""
        return log_ratio(self.report_ratio()), log_ratio(self.permanent_ratio())

    def bit_probabilities(self, state: int, layer: str = "report") -> list[Fraction]:
        """Exact probability that each of the ``k`` bits is 1 given ``state``.

        ``state`` is the Bloom filter (bit ``j`` of the integer) for ``layer="permanent"`` or ``"report"``, or the
        permanent bits for ``"instantaneous"``.
        """
        if layer == "permanent":
            one, zero = self.permanent_one
        elif layer == "report":
            one, zero = self.support_probabilities
        elif layer == "instantaneous":
            one, zero = self.q, self.p
        else:
            raise ValueError(f"layer must be 'permanent', 'report' or 'instantaneous'; got {layer!r}")
        return [one if state >> j & 1 else zero for j in range(self.k)]

    def exact_probabilities(self, state: int, layer: str = "report") -> dict[int, Fraction]:
        """``{bits: probability}`` over all ``2**k`` bit vectors (``k ≤ 16``); see :meth:`bit_probabilities`.

        The bits are keyed as an integer whose bit ``j`` is bit ``j`` (the packed bytes read little-endian).
        """
        if self.k > 16:
            raise ValueError(f"exact_probabilities enumerates 2**k bit vectors; k = {self.k} is too large")
        dist = {0: Fraction(1)}
        for j, pj in enumerate(self.bit_probabilities(state, layer)):
            bit = 1 << j
            new = {}
            for y, pr in dist.items():
                new[y] = pr * (1 - pj)
                new[y | bit] = pr * pj
            dist = new
        return dist

    # -- kernel arguments -----------------------------------------------------------------------------
    def thresholds(self, t: int) -> tuple[np.uint64, np.uint64]:
        """``(t_all, t_low)`` of threshold ``t`` for the kernels' lane comparisons."""
        return _lane_thresholds(t, self.lane_bits)


def log_ratio(ratio: Fraction) -> float:
    """``ln`` of an exact likelihood ratio (the float nearest the ratio, then its log)."""
    return math.log(float(ratio))


def pair_ratio(one: Fraction, zero: Fraction, h: int) -> Fraction:
    """Largest likelihood ratio of ``k ≥ 2h`` independent bits between two disjoint filters of ``h`` bits each.

    Each bit is 1 with probability ``one`` when set and ``zero`` when clear: ``h`` bits set only in the first give
    at most ``max(one/zero, (1-one)/(1-zero))`` each, ``h`` set only in the second at most ``max(zero/one,
    (1-zero)/(1-one))`` each (every other bit cancels, and the output maximizes each factor on its own). Infinite
    ratios raise ValueError.
    """
    if not (0 < one < 1 and 0 < zero < 1):
        raise ValueError(f"bit probabilities {one} and {zero} are not both in (0, 1): no finite ε")
    first = max(one / zero, (1 - one) / (1 - zero))
    second = max(zero / one, (1 - zero) / (1 - one))
    return (first * second) ** h


def rappor_plan(f: float, p: float, q: float, k: int, h: int, cohorts: int) -> RapporPlan:
    """The integer plan of RAPPOR(f, p, q).

    The narrowest lane width on whose grid ``f/2``, ``p`` and ``q`` all lie exactly; else 32-bit lanes with each
    rounded to the nearest multiple of ``2**-32``.
    """
    for b in LANE_BITS:
        scale = 2**b
        raw = (f / 2 * scale, p * scale, q * scale)
        if all(v == math.floor(v) for v in raw) and (b == 32 or raw[2] < scale):
            t_f, t_p, t_q = (int(v) for v in raw)
            break
    else:
        b = 32
        t_f, t_p, t_q = (round(v * 2**32) for v in (f / 2, p, q))
    t_f = min(max(t_f, 1), 2**(b - 1) - 1)
    if not t_p < t_q:
        raise ValueError(f"p={p!r} and q={q!r} are too close: on the integer grid of 2**-32 they are equal")
    return RapporPlan(k=k, h=h, cohorts=cohorts, lane_bits=b, t_f=t_f, t_p=t_p, t_q=t_q)


def _check_segments(segments: Any, segment_bits: Any, item_bits: Any, item_type: str,
                    cohorts: int) -> tuple[int, int]:
    """``(segments, segment_bits)`` of the segment pair mode, ``(0, 0)`` without it; one clear error otherwise."""
    if segments is None and segment_bits is None:
        return 0, 0
    if segments is None or segment_bits is None:
        raise ValueError(f"segments and segment_bits go together (the item is cut into `segments` pieces of "
                         f"`segment_bits` bits); got segments={segments!r}, segment_bits={segment_bits!r}")
    segments = check_scalar(segments, "segments", int, low=2, high=64)
    segment_bits = check_scalar(segment_bits, "segment_bits", int, low=1, high=MAX_SEGMENT_BITS)
    bits = segments * segment_bits
    if bits > 64:
        raise ValueError(f"segments * segment_bits is the item's width and at most 64; got segments={segments}, "
                         f"segment_bits={segment_bits} ({bits} bits)")
    if item_bits is not None and item_bits != bits:
        raise ValueError(f"item_bits={item_bits!r} but segments={segments} of segment_bits={segment_bits} make "
                         f"{bits}-bit items: leave item_bits out")
    if item_type in ("str", "bytes") and bits % 8:
        raise ValueError(f"{item_type} items are whole bytes: segments * segment_bits must be a multiple of 8; got "
                         f"segments={segments}, segment_bits={segment_bits} ({bits} bits)")
    n_pairs = segments * (segments - 1) // 2
    if n_pairs * cohorts > MAX_COHORTS:
        raise ValueError(f"the segment pair reports have one cohort per (position pair, cohort): {n_pairs} pairs of "
                         f"{segments} segments times cohorts={cohorts} is {n_pairs * cohorts}, above {MAX_COHORTS}; "
                         f"use fewer cohorts (at most {MAX_COHORTS // n_pairs}) or fewer segments")
    return segments, segment_bits


def segment_values(words: NDArray[np.uint64], segments: int, segment_bits: int) -> NDArray[np.uint64]:
    """The ``(n, segments)`` segments of ``segments · segment_bits``-bit words, the first in the top bits.

    Segment ``s`` of word ``w`` is ``(w >> (L - (s + 1)·b)) & (2**b - 1)`` with ``L = segments · b``: for str and
    bytes items (big-endian, :func:`ldpnum.heavy.encode_items`) segment 0 holds the first bits of the item.

    Examples
    --------
    >>> import numpy as np
    >>> segment_values(np.array([0x6869], dtype=np.uint64), 4, 4).tolist()   # "hi": bytes 0x68, 0x69
    [[6, 8, 6, 9]]
    """
    words = np.asarray(words, dtype=np.uint64)
    shifts = np.array([(segments - 1 - s) * segment_bits for s in range(segments)], dtype=np.uint64)
    return (words[:, None] >> shifts[None, :]) & np.uint64((1 << segment_bits) - 1)


def segment_cliques(segments: int, segment_bits: int, edges: dict[tuple[int, int], Any],
                    limit: int) -> NDArray[np.uint64]:
    """Every item whose segment pairs are all edges: the ``segments``-cliques of the segment pair graph, as words.

    The graph has a node per (position, segment value) and an edge per frequent pair ``edges[(a, b)]`` (an
    ``(m, 2)`` array of segment values ``(u, v)`` at positions ``a < b``). A clique takes one value per position
    and is connected at every pair; found exactly by extending positions left to right, keeping the values
    adjacent to every earlier choice. Raises ValueError when there are more than ``limit``.

    Examples
    --------
    >>> import numpy as np
    >>> edges = {(0, 1): np.array([[1, 2], [3, 0]]), (0, 2): np.array([[1, 1]]), (1, 2): np.array([[2, 1], [0, 1]])}
    >>> [bin(w) for w in segment_cliques(3, 2, edges, limit=10)]   # 3-0-1 lacks the pair (3, 1) at (0, 2)
    ['0b11001']
    """
    adjacency: dict[tuple[int, int], dict[int, set[int]]] = {}
    for (a, b), uv in edges.items():
        table: dict[int, set[int]] = {}
        for u, v in np.asarray(uv, dtype=np.int64).reshape(-1, 2).tolist():
            table.setdefault(u, set()).add(v)
        adjacency[(a, b)] = table
    found: list[int] = []

    def extend(prefix: list[int]) -> None:
        s = len(prefix)
        if s == segments:
            word = 0
            for v in prefix:
                word = word << segment_bits | v
            found.append(word)
            if len(found) > limit:
                raise ValueError(f"the segment pair graph has more than max_candidates={limit} cliques (candidate "
                                 "items): lower alpha, collect more reports, or raise max_candidates")
            return
        options: set[int] | None = None
        for a in range(s):
            nxt = adjacency.get((a, s), {}).get(prefix[a], set())
            options = set(nxt) if options is None else options & nxt
            if not options:
                return
        if options is None:  # position 0: every value some edge starts from
            options = set().union(*(set(t) for (a, _), t in adjacency.items() if a == 0))
        for v in sorted(options):
            extend(prefix + [v])

    extend([])
    return np.array(found, dtype=np.uint64)
def cohort_counts(codes: NDArray[np.uint8], k: int, cohorts: int) -> NDArray[np.int64]:
    """Per-cohort counts of RAPPOR reports: :func:`ldpnum.frequency.unary.grouped_bit_counts` with the cohorts as groups.

    An ``(cohorts, k + 1)`` int64 array whose row ``j`` is the number of reports of cohort ``j`` followed by how
    many of them set each of the ``k`` bits.
    """
    return grouped_bit_counts(codes, k, cohorts, group="cohort", what="RAPPOR")


def cohorts_of(words: NDArray[np.uint64], cohorts: int) -> NDArray[np.int64]:
    """``floor(word · cohorts / 2**64)`` for uint64 words and ``cohorts < 2**32`` (exact, in NumPy)."""
    m = np.uint64(cohorts)
    hi = (words >> np.uint64(32)) * m
    lo = ((words & np.uint64(0xFFFFFFFF)) * m) >> np.uint64(32)
    return ((hi + lo) >> np.uint64(32)).astype(np.int64)


# -- the collector's regression -----------------------------------------------------------------------------
def nonnegative_lasso(design: Any, response: NDArray[np.float64], intercept: NDArray[np.float64], penalty: float, *,
                      tol: float = 1e-7, max_iter: int = 2000) -> tuple[NDArray[np.float64], int, bool]:
    r"""Non-negative Lasso with standardized columns and an unpenalized intercept, by FISTA.

    Solves :math:`\min_{\gamma \ge 0} \tfrac12 \lVert P(y - Z\gamma) \rVert^2 + \lambda \sum_m \gamma_m`, where
    ``Z`` is ``design`` with unit-norm columns and ``P`` projects out the ``intercept`` column (the intercept is
    fitted exactly, unpenalized: Frisch-Waugh-Lovell). At the solution a candidate is kept (``γ_m > 0``) iff
    its column's correlation with the residual reaches ``λ``; with rows whitened to unit noise variance, ``λ``
    is that correlation in standard errors.

    Parameters
    ----------
    design : scipy.sparse matrix or BloomDesign, shape (rows, M)
        Whitened design (no zero column): anything with ``design @ g``, ``design.T @ r`` and, unless a sparse
        matrix, ``column_norms()`` (:class:`BloomDesign` applies RAPPOR's design without building it).
    response : ndarray, shape (rows,)
        Whitened response.
    intercept : ndarray, shape (rows,)
        Whitened intercept column (non-zero).
    penalty : float
        ``λ``.
    tol, max_iter
        Stop when no standardized coefficient moved by more than ``tol`` times the largest one, or after
        ``max_iter`` iterations.

    Returns
    -------
    coef : ndarray, shape (M,)
        The coefficients of ``design``'s own (unstandardized) columns, non-negative.
    iterations : int
    converged : bool
    """
    norms = (design.column_norms() if hasattr(design, "column_norms")
             else np.sqrt(np.asarray(design.multiply(design).sum(axis=0)).ravel()))
    scale = 1.0 / norms
    u = intercept / np.linalg.norm(intercept)

    m = design.shape[1]
    scaled = np.empty(m)  # the loop's vectors of length M in place: each temporary of 2**16 doubles cost
    spare = np.empty(m)   # 0.8 ms of fresh pages, most of an iteration (same arithmetic, same results)

    def forward(g):  # P Z g
        v = design @ np.multiply(g, scale, out=scaled)
        return v - u * (u @ v)

    def backward(r):  # Z' r for r ⊥ u (P is symmetric and P r = r)
        out = design.T @ r
        out *= scale
        return out

    r0 = response - u * (u @ response)
    # Lipschitz constant ||PZ||², by power iteration on Z'PZ (from above: 1.01 times the estimate)
    v = np.ones(m) / math.sqrt(m)
    lip = 1.0
    for _ in range(50):
        w = backward(forward(v))
        lip_new = float(np.linalg.norm(w))
        if lip_new == 0:
            break
        v = w / lip_new
        if abs(lip_new - lip) <= 1e-4 * lip_new:
            lip = lip_new
            break
        lip = lip_new
    step = 1.0 / (1.01 * lip)
    g = np.zeros(m)
    g_new = np.empty(m)
    delta = np.empty(m)
    y = g.copy()
    t = 1.0
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        grad = backward(r0 - forward(y))  # minus the gradient
        np.negative(grad, out=grad)
        grad += penalty
        grad *= step
        np.maximum(np.subtract(y, grad, out=g_new), 0.0, out=g_new)  # g_new = max(y - step (grad + λ), 0)
        t_new = (1 + math.sqrt(1 + 4 * t * t)) / 2
        np.subtract(g_new, g, out=delta)
        # gradient restart (B. O'Donoghue, E. Candès, "Adaptive restart for accelerated gradient schemes", 2015):
        # when the step from the extrapolated point y to g_new opposes the momentum delta, i.e.
        # (y - g_new)·(g_new - g) > 0, drop the momentum. Summed by NumPy, not BLAS, whose threads took 5.8 ms per
        # dot of 2**16 doubles on a loaded 2-core machine (0.03 ms on one thread)
        if np.multiply(delta, np.subtract(y, g_new, out=spare), out=spare).sum() > 0:
            y[:] = g_new
            t_new = 1.0
        else:
            np.add(g_new, np.multiply((t - 1) / t_new, delta, out=y), out=y)  # y = g_new + (t - 1)/t_new · delta
        g, g_new, t = g_new, g, t_new
        top = float(g.max()) if m else 0.0
        if float(np.abs(delta, out=spare).max(initial=0.0)) <= tol * max(top, 1e-12):
            converged = True
            break
    return g * scale, it, converged


class BloomDesign:
    r"""RAPPOR's regression design, applied from its candidates' Bloom bits without building the matrix.

    The design ``X`` has a row per (cohort ``c``, bit ``i``) and a column per candidate ``m``; ``X[c·k + i, m]``
    is 1 when candidate ``m`` sets bit ``i`` in cohort ``c``. It is held as the bit positions ``pos[m, c, j]``
    (:meth:`RAPPOR._design_positions`: ``M · C · h`` two-byte entries, a repeated bit marked
    :data:`BLOOM_SKIP`), and ``X g`` and ``X' r`` are Cython loops over them
    (:func:`ldpnum._kernels.server_rappor.bloom_scatter`, :func:`~ldpnum._kernels.server_rappor.bloom_gather`).
    Memory: ``2 · M · C · h`` bytes, 16.8 MB for the ``2**16`` segment pairs of 8-bit segments at 64 cohorts and
    ``h = 2``, against 12 bytes per non-zero for a sparse matrix (101 MB) and ``8 · M · C · k`` for a dense one
    (4.3 GB at ``k = 128``).

    Parameters
    ----------
    positions : ndarray of uint16, shape (M, C, h)
        The candidates' bits in each cohort (below ``k``, or :data:`BLOOM_SKIP`).
    k : int
        Bloom filter bits.
    row_weights : ndarray of float, shape (C,), optional
        A weight per cohort multiplying its rows (the whitened design ``diag(w) X``); default 1.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.longitudinal.rappor import BloomDesign
    >>> d = BloomDesign(np.array([[[0, 2]], [[1, 65535]]], dtype=np.uint16), k=4)   # 2 candidates, 1 cohort
    >>> (d @ np.array([1.0, 10.0])).tolist(), (d.T @ np.array([1.0, 2.0, 4.0, 8.0])).tolist()
    ([1.0, 10.0, 1.0, 0.0], [5.0, 2.0])
    """

    def __init__(self, positions: NDArray[np.uint16], k: int, row_weights: NDArray[np.float64] | None = None):
        self.positions = np.ascontiguousarray(positions, dtype=np.uint16)
        self.k = int(k)
        m, c, _ = self.positions.shape
        self.shape = (c * self.k, m)
        self.row_weights = None if row_weights is None else np.asarray(row_weights, dtype=np.float64)

    def whitened(self, row_weights: NDArray[np.float64]) -> "BloomDesign":
        """The same design with cohort ``c``'s rows multiplied by ``row_weights[c]``."""
        return BloomDesign(self.positions, self.k, row_weights)

    def _weigh(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.row_weights is None:
            return v
        return (v.reshape(-1, self.k) * self.row_weights[:, None]).ravel()

    def __matmul__(self, g: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros(self.shape[0])
        server_rappor.bloom_scatter(self.positions, np.ascontiguousarray(g, dtype=np.float64), self.k, out)
        return self._weigh(out)

    @property
    def T(self) -> "_BloomDesignT":  # noqa: N802 (as NumPy and SciPy name it)
        """The transpose, for ``design.T @ r``."""
        return _BloomDesignT(self)

    def column_norms(self) -> NDArray[np.float64]:
        """Each column's Euclidean norm: ``sqrt(Σ_c w_c² · (bits candidate m sets in cohort c))``."""
        bits = (self.positions != BLOOM_SKIP).sum(axis=2, dtype=np.float64)
        w2 = np.ones(bits.shape[1]) if self.row_weights is None else self.row_weights**2
        return np.sqrt(bits @ w2)

    def columns(self, index: NDArray[np.int64]) -> Any:
        """The columns ``index`` as a scipy.sparse CSC matrix (of the design without row weights)."""
        from scipy import sparse

        pos = self.positions[index].astype(np.int64)  # (len(index), C, h)
        rows = np.arange(pos.shape[1])[None, :, None] * self.k + pos
        cols = np.broadcast_to(np.arange(pos.shape[0])[:, None, None], pos.shape)
        keep = pos != BLOOM_SKIP
        return sparse.csc_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])),
                                 shape=(self.shape[0], pos.shape[0]))


class _BloomDesignT:
    """``X'`` of a :class:`BloomDesign`, for ``design.T @ r``."""

    def __init__(self, design: BloomDesign):
        self.design = design

    def __matmul__(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        d = self.design
        out = np.empty(d.shape[1])
        server_rappor.bloom_gather(d.positions, np.ascontiguousarray(d._weigh(np.asarray(r, dtype=np.float64))),
                                   d.k, out)
        return out


# -- the result ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, repr=False)
class RapporEstimate(HeavyHittersEstimate):
    r"""The candidates RAPPOR's decoder kept, their estimated shares, and which are detected.

    A :class:`~ldpnum.HeavyHittersEstimate` (items in decreasing order of estimated frequency, standard errors,
    intervals ``f̂ ± z σ̂``, provenance) with, per item, the one-sided p-value of ``f > 0`` and whether it is
    *detected*: below the Bonferroni-corrected level ``alpha / M`` for ``M`` candidates
    (``provenance["alpha"]``, ``provenance["candidates"]``). Items are the candidates the sparse regression
    selected; candidates it dropped are estimated at 0 and not listed.

    Parameters
    ----------
    items, frequencies, standard_errors, n_reports, epsilon, spec, provenance, name, shuffle
        As :class:`~ldpnum.HeavyHittersEstimate`.
    p_values : array_like of float, shape (k,)
        One-sided p-value of each item's test of ``f > 0``, in [0, 1].
    detected : array_like of bool, shape (k,)
        Whether each item is detected.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> spec = ldp.RAPPOR().spec
    >>> est = ldp.RapporEstimate(items=["a", "b"], frequencies=[0.3, 0.01], standard_errors=[0.01, 0.01],
    ...                          n_reports=10_000, epsilon=spec.epsilon, spec=spec, p_values=[1e-12, 0.16],
    ...                          detected=[True, False])
    >>> est.detected_items
    ('a',)
    """

    p_values: Any = field(default=None)
    detected: Any = field(default=None)

    def __post_init__(self):
        super().__post_init__()
        k = len(self.items)
        p = np.ones(k) if self.p_values is None else np.array(self.p_values, dtype=np.float64)
        if p.shape != (k,) or not np.all((p >= 0) & (p <= 1)):
            raise ValueError(f"p_values must hold one probability in [0, 1] per item ({k}); got shape {p.shape}")
        d = np.zeros(k, dtype=bool) if self.detected is None else np.asarray(self.detected)
        if d.shape != (k,) or d.dtype != bool:
            raise ValueError(f"detected must hold one bool per item ({k}); got shape {d.shape} and dtype {d.dtype}")
        p.flags.writeable = False
        d = d.copy()
        d.flags.writeable = False
        object.__setattr__(self, "p_values", p)
        object.__setattr__(self, "detected", d)

    @property
    def detected_items(self) -> tuple:
        """The detected items, in rank order."""
        return tuple(v for v, d in zip(self.items, self.detected) if d)

    def to_frame(self, level: float = 0.95) -> "pd.DataFrame":
        """As :meth:`ldpnum.HeavyHittersEstimate.to_frame`, with the columns ``p_value`` and ``detected``."""
        frame = super().to_frame(level)
        frame["p_value"] = np.array(self.p_values)
        frame["detected"] = np.array(self.detected)
        return frame

    def __repr__(self) -> str:
        shown = ", ".join(f"({v!r}, {f:.4g})" for v, f in zip(self.detected_items[:3],
                                                             self.frequencies[self.detected][:3]))
        more = ", ..." if int(self.detected.sum()) > 3 else ""
        return (f"RapporEstimate(selected={self.k}, detected={int(self.detected.sum())}, n_reports={self.n_reports}, "
                f"epsilon={self.epsilon:g}, top=[{shown}{more}])")

    def __reduce__(self):
        cls, args = super().__reduce__()
        return cls, (*args, self.p_values, self.detected)


# -- the mechanism ------------------------------------------------------------------------------------------
class RAPPOR(Longitudinal):
    """RAPPOR: Bloom filters per cohort, permanent (memoized) and instantaneous randomized response.

    Parameters
    ----------
    k : int, default 128
        Bits of the Bloom filter: a multiple of 8 (the report layout), 8 ≤ k ≤ 4096, at least ``2h``.
    h : int, default 2
        Hash functions per cohort, ``1 ≤ h ≤ k/2``.
    cohorts : int, default 64
        Cohorts (each with its own hash functions), 1 ≤ cohorts ≤ 4096.
    f : float, default 0.5
        Permanent randomized response: each Bloom bit is set to 1 with probability ``f/2``, to 0 with
        probability ``f/2``, kept with probability ``1 - f``; in (0, 1).
    p : float, default 0.5
        Instantaneous randomized response: probability of reporting 1 for a permanent 0; ``0 ≤ p < q``.
    q : float, default 0.75
        Probability of reporting 1 for a permanent 1; ``p < q ≤ 1``.
    item_type : {"str", "bytes", "uint"}, default "str"
        The type of the items (encoded by :func:`ldpnum.heavy.encode_items`; results decode back to it).
    item_bits : int, default 64
        Width of the item encoding, in [1, 256] (str and bytes: a multiple of 8; longer items are truncated to
        ``item_bits / 8`` bytes with a counted warning, as for the heavy hitters; above 64 bits the Bloom filter
        hashes each item's 64-bit digest). With segments it is ``segments · segment_bits`` (leave it out, at most
        64) and longer items are refused.
    segments, segment_bits : int, optional
        The Segment Pair Method (Fanti, Pihur, Erlingsson): each item is cut into ``segments`` (2 to 64) of
        ``segment_bits`` (1 to 8) bits, and each person also reports the segment pair at a position pair fixed by
        their key, so that :meth:`discover` finds frequent items without a dictionary. The report doubles, and so
        do both ε. ``segments · (segments - 1)/2 · cohorts`` is at most 4096.

    Notes
    -----
    Privatize with each person's key: ``privatize(items, keys=keys, rng=None, round=r)``. Each report is
    ε1-LDP with ``ε1 = h·ln(q*(1 - p*)/(p*(1 - q*)))``, ``q* = ½f(p + q) + (1 - f)q``, ``p* = ½f(p + q) + (1 - f)p``
    (:attr:`epsilon`, :attr:`epsilon_report`); all reports of one person about one item together are ε∞-LDP
    with ``ε∞ = 2h·ln((1 - f/2)/(f/2))`` (:attr:`epsilon_permanent`): 1.07 and 4.39 at the defaults (the
    paper's); with segments each is doubled (two reports of the item; see :mod:`ldpnum.longitudinal.rappor`).
    Both are computed exactly from the integer plan (:meth:`realized_epsilons`) and tight. A person
    whose item changes spends ε∞ again for each distinct item. Estimators are post-processing. See
    :mod:`ldpnum.longitudinal.rappor` for the client, the report layout and the decoder.

    References
    ----------
    Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal
    Response", CCS 2014.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> m = ldp.RAPPOR()
    >>> round(m.epsilon_permanent, 2), round(m.epsilon_report, 4)
    (4.39, 1.0743)
    >>> keys = ldp.ClientKeys.generate(4, rng=0)
    >>> r = m.privatize(["apple", "pear", "apple", "fig"], keys=keys, rng=1, round=3)
    >>> r.codes.shape, r.spec.get("round")
    ((4, 17), 3)
    """

    name = "rappor"

    def __init__(self, k: int = 128, h: int = 2, cohorts: int = 64, f: float = 0.5, p: float = 0.5,
                 q: float = 0.75, *, item_type: str = "str", item_bits: int | None = None,
                 segments: int | None = None, segment_bits: int | None = None) -> None:
        k = check_scalar(k, "k", int, low=8, high=MAX_K)
        if k % 8:
            raise ValueError(f"k must be a multiple of 8 (reports hold the Bloom filter in whole bytes, then the "
                             f"cohort); got k={k}")
        h = check_scalar(h, "h", int, low=1, high=k // 2)
        cohorts = check_scalar(cohorts, "cohorts", int, low=1, high=MAX_COHORTS)
        f = check_scalar(f, "f", float, low=0, high=1, include_boundaries="neither")
        p = check_scalar(p, "p", float, low=0, high=1, include_boundaries="left")
        q = check_scalar(q, "q", float, low=0, high=1, include_boundaries="right")
        if not p < q:
            raise ValueError(f"p must be below q (p: the chance of reporting 1 for a permanent 0, q: for a permanent "
                             f"1); got p={p!r}, q={q!r}")
        if not isinstance(item_type, str) or item_type not in ITEM_TYPES:
            raise ValueError(f"item_type must be one of {', '.join(map(repr, ITEM_TYPES))}; got {item_type!r}")
        self._item_type = item_type
        self._segments, self._segment_bits = _check_segments(segments, segment_bits, item_bits, item_type, cohorts)
        if self._segments:
            item_bits = self._segments * self._segment_bits
        self._item_bits = check_item_bits(64 if item_bits is None else item_bits, item_type)
        self._k, self._h, self._cohorts = k, h, cohorts
        self._f, self._p, self._q = f, p, q
        self._plan = rappor_plan(f, p, q, k, h, cohorts)
        self._pair_plan = (rappor_plan(f, p, q, k, h, cohorts * len(self.position_pairs)) if self._segments
                           else None)
        eps1, eps_inf = self._plan.epsilons()
        if self._pair_plan is not None:  # two independent reports of one item: the likelihood ratios multiply
            eps1 = log_ratio(self._plan.report_ratio() * self._pair_plan.report_ratio())
            eps_inf = log_ratio(self._plan.permanent_ratio() * self._pair_plan.permanent_ratio())
        if not 0 < eps_inf <= 20 or not 0 < eps1 <= 20:
            raise ValueError(f"RAPPOR(h={h}, f={f!r}, p={p!r}, q={q!r}) has epsilon_permanent={eps_inf:.6g} and "
                             f"epsilon_report={eps1:.6g}; both must be in (0, 20] (raise f, narrow q - p, or lower h)")
        self._epsilon_permanent, self._epsilon = check_epsilons(eps_inf, eps1)
        self._bounds = None

    # -- parameters ---------------------------------------------------------------------------------
    @property
    def k(self) -> int:
        """Bits of the Bloom filter."""
        return self._k

    @property
    def h(self) -> int:
        """Hash functions per cohort."""
        return self._h

    @property
    def cohorts(self) -> int:
        """Number of cohorts."""
        return self._cohorts

    @property
    def f(self) -> float:
        """Permanent randomized response's ``f`` (as given; :attr:`plan` holds the realized one)."""
        return self._f

    @property
    def p(self) -> float:
        """Instantaneous ``p = P[report 1 | permanent 0]`` (as given)."""
        return self._p

    @property
    def q(self) -> float:
        """Instantaneous ``q = P[report 1 | permanent 1]`` (as given)."""
        return self._q

    @property
    def item_type(self) -> str:
        """The type of the items: ``"str"``, ``"bytes"`` or ``"uint"``."""
        return self._item_type

    @property
    def item_bits(self) -> int:
        """Width of the item encoding in bits."""
        return self._item_bits

    @property
    def needs_candidates(self) -> bool:
        """True without segment pairs: the reports are then decoded against a dictionary only (``candidates=``)."""
        return not self._segments

    @property
    def segments(self) -> int | None:
        """Segments of the segment pair mode (None without it)."""
        return self._segments or None

    @property
    def segment_bits(self) -> int | None:
        """Bits per segment of the segment pair mode (None without it)."""
        return self._segment_bits or None

    @property
    def pair_plan(self) -> RapporPlan | None:
        """The integer plan of the segment pair reports (:attr:`plan`'s, with a cohort per (position pair, cohort))."""
        return self._pair_plan

    @property
    def position_pairs(self) -> list[tuple[int, int]]:
        """The segment position pairs ``(a, b)``, ``a < b``, in order (empty without the segment pair mode)."""
        return list(itertools.combinations(range(self._segments), 2))

    @property
    def n_cells(self) -> int:
        """Counts in an aggregate: per cohort, its number of reports and one count per bit.

        With segments, then the same per (position pair, cohort) for the segment pair reports.
        """
        pair = self._pair_plan.cohorts if self._pair_plan is not None else 0
        return (self._cohorts + pair) * (self._k + 1)

    @property
    def bytes_per_report(self) -> int:
        """Size of one report: ``k/8`` bytes of bits plus the cohort's byte(s) (twice with segments)."""
        return self._plan.row_bytes + (self._pair_plan.row_bytes if self._pair_plan is not None else 0)

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(q*, p*)`` of one report, realized: P[reported bit 1 | Bloom bit 1], P[... | Bloom bit 0]."""
        qs, ps = self._plan.support_probabilities
        return float(qs), float(ps)

    def _spec_params(self):
        params = {"k": self._k, "h": self._h, "cohorts": self._cohorts, "f": self._f, "p": self._p, "q": self._q,
                  "item_type": self._item_type, "item_bits": self._item_bits, "hash": HASH_FAMILY,
                  "packed_bits": self._k + self._plan.cohort_bits, **digest_params(self._item_bits)}
        if self._pair_plan is not None:
            params.pop("item_bits")
            params.update(segments=self._segments, segment_bits=self._segment_bits,
                          packed_bits=8 * self._plan.row_bytes + self._k + self._pair_plan.cohort_bits)
        return params

    @classmethod
    def _from_spec(cls, spec):
        params = {name: spec.get(name) for name, _ in spec.params}
        if params.pop("hash", HASH_FAMILY) != HASH_FAMILY:
            raise ValueError(f"spec names the hash family {spec.get('hash')!r}; this ldpnum has {HASH_FAMILY!r}")
        params.pop("packed_bits", None)
        check_digest(params, spec.mechanism)
        return cls(**params)

    def _permanent_spec(self) -> Spec:
        plan = self._plan
        segments = (("segments", self._segments), ("segment_bits", self._segment_bits)) if self._segments else ()
        return Spec("rappor", self._epsilon_permanent, self._k,
                    (("k", self._k), ("h", self._h), ("cohorts", self._cohorts), ("lane_bits", plan.lane_bits),
                     ("t_f", plan.t_f), ("item_type", self._item_type), ("item_bits", self._item_bits),
                     ("hash", HASH_FAMILY), *segments))

    @property
    def cohort_tweak(self) -> np.uint64:
        """The tweak of the keyed word that assigns each person's cohort.

        :func:`memo_tweak` of a spec naming the cohorts only, so a person keeps their cohort whatever the other
        parameters.
        """
        tweak = self.__dict__.get("_cohort_tweak")
        if tweak is None:
            spec = Spec("rappor_cohort", 1.0, self._cohorts, (("cohorts", self._cohorts),))
            tweak = self.__dict__["_cohort_tweak"] = memo_tweak(spec)
        return tweak

    @property
    def pair_tweak(self) -> np.uint64:
        """The tweak of the keyed word that assigns each person's segment position pair (independent of the item)."""
        tweak = self.__dict__.get("_pair_tweak")
        if tweak is None:
            spec = Spec("rappor_segment_pair", 1.0, self._segments, (("segments", self._segments),))
            tweak = self.__dict__["_pair_tweak"] = memo_tweak(spec, "position-pair")
        return tweak

    def _repr_params(self) -> dict[str, Any]:
        params = super()._repr_params()
        if "item_bits" in params and (params["item_type"], params["item_bits"]) == ("str", 64):
            del params["item_type"], params["item_bits"]  # the defaults, shown together or not at all
        return params

    # -- exact plans --------------------------------------------------------------------------------
    def memo_states(self) -> list[int]:
        """Every Bloom filter an item can have (1 to ``h`` bits set), as integers (bit ``j`` = bit ``j``).

        The exact checks range over these. Only for ``k ≤ 16``.
        """
        if self._k > 16:
            raise ValueError(f"memo_states enumerates Bloom filters of k <= 16 bits; k = {self._k}")
        return [sum(1 << j for j in bits) for size in range(1, self._h + 1)
                for bits in itertools.combinations(range(self._k), size)]

    def permanent_probabilities(self, state: int) -> dict[int, Fraction]:
        """``{permanent bits: probability}`` for the Bloom filter ``state`` (exact; ``k ≤ 16``)."""
        return self._plan.exact_probabilities(state, "permanent")

    def instantaneous_probabilities(self, permanent: int) -> dict[int, Fraction]:
        """``{reported bits: probability}`` given the permanent bits (exact; ``k ≤ 16``)."""
        return self._plan.exact_probabilities(permanent, "instantaneous")

    def report_probabilities(self, state: int) -> dict[int, Fraction]:
        """``{reported bits: probability}`` of one report for the Bloom filter ``state``.

        The composed plan, computed bit by bit (the layers act on each bit independently; equal to
        :meth:`Longitudinal.report_probabilities`' sum over permanent outputs).
        """
        return self._plan.exact_probabilities(state, "report")

    def realized_epsilons(self) -> tuple[float, float]:
        """``(ε1, ε∞)`` realized by the integer plan, by the structural reduction of :func:`pair_ratio`.

        The bits are independent given the filter, so the largest ratio over every pair of filters and every output
        is a product of per-bit ratios (:meth:`RapporPlan.report_ratio`, :meth:`RapporPlan.permanent_ratio`).

        For ``k = 8`` the per-bit probabilities are read off the exact plans themselves
        (:meth:`permanent_probabilities` and the composition of :meth:`Longitudinal.report_probabilities` over
        :meth:`instantaneous_probabilities`, for the filter of bit 0), so the check sees any change of either
        layer; the tests also compare it with the enumeration over every filter.

        With segments, each person sends two reports with independent randomness given their item (the item's
        filter and its segment pair's), so both ratios are the products of the two filters' (tight: two items
        that differ at every segment, with disjoint filters in both).
        """
        if self._k > 8:
            report, permanent = self._plan.report_ratio(), self._plan.permanent_ratio()
        else:
            perm = self.permanent_probabilities(1)
            composed = Longitudinal.report_probabilities(self, 1)

            def marginals(dist):  # P[bit 0 = 1] (set in the filter), P[bit 1 = 1] (clear)
                return (sum((v for y, v in dist.items() if y & 1), Fraction(0)),
                        sum((v for y, v in dist.items() if y & 2), Fraction(0)))

            (qs, ps), (p1, p0) = marginals(composed), marginals(perm)
            report, permanent = pair_ratio(qs, ps, self._h), pair_ratio(p1, p0, self._h)
        if self._pair_plan is not None:
            report, permanent = report * self._pair_plan.report_ratio(), permanent * self._pair_plan.permanent_ratio()
        return log_ratio(report), log_ratio(permanent)

    # -- client side --------------------------------------------------------------------------------
    @property
    def permanent_words(self) -> int:
        """Keyed words per record: one lane per Bloom bit (of each of the two filters, with segments)."""
        return self._plan.words_per_layer * (2 if self._segments else 1)

    @property
    def instantaneous_words(self) -> int:
        """Fresh words per record: one lane per Bloom bit (of each of the two filters, with segments)."""
        return self._plan.words_per_layer * (2 if self._segments else 1)

    def prepare_values(self, x: ArrayLike, *, name: str | None = None,  # type: ignore[override]
                       nan_policy: str = "raise", fill_value: Any = None, truncate: bool = True,
                       locate: bool = False) -> NDArray[np.uint64]:
        """Validate and encode one column of items, without drawing anything.

        Words of :func:`ldpnum.heavy.encode_items` (``item_bits`` bits; str and bytes longer than ``item_bits / 8``
        bytes are cut with a counted :class:`~ldpnum.exceptions.TruncationWarning`, or refused with
        ``truncate=False``). Items of another type than :attr:`item_type` raise a TypeError; missing items are never
        imputed.
        """
        label = "x" if name is None else str(name)
        if nan_policy != "raise" or fill_value is not None:
            raise ValueError(f"{label}: missing items cannot be imputed (nan_policy={nan_policy!r}, fill_value="
                             f"{fill_value!r}): remove the missing rows before privatizing")
        if self._segments:  # a cut item would be decoded as another: refused, whatever `truncate`
            try:
                words, item_type = self._encode(x, label, truncate=False, locate=locate)
            except ValueError as exc:
                if "longer than item_bits" not in str(exc):
                    raise
                raise ValueError(str(exc).split("; raise item_bits")[0] + f": the segment pair mode cuts each item "
                                 f"into segments={self._segments} of segment_bits={self._segment_bits} bits and "
                                 "refuses longer items (a cut item would be found as another)") from None
        else:
            words, item_type = self._encode(x, label, truncate=truncate, locate=locate)
        words = np.ascontiguousarray(words, dtype=np.uint64).view()
        words.flags.writeable = False
        return words

    def _encode(self, x, label, *, truncate=True, locate=False, digest=True):
        """The items' words; with ``digest``, the one word per item the Bloom filter hashes (``item_digests``)."""
        words = encode_typed_items(x, self._item_type, self._item_bits, name=label, owner=type(self).__name__,
                                   truncate=truncate, locate=locate)
        return (item_digests(words, self._item_bits) if digest else words), self._item_type

    def person_cohorts(self, keys: Any) -> NDArray[np.int64]:
        """Each person's cohort, from their key (independent of their item)."""
        word = keyed_words(keys, self.cohort_tweak, np.zeros(len(keys), dtype=np.uint64), 1)
        return cohorts_of(word, self._cohorts)

    def person_position_pairs(self, keys: Any) -> NDArray[np.int64]:
        """Each person's segment position pair, an index into :attr:`position_pairs`, from their key.

        Uniform over the pairs and independent of the item (a keyed word under :attr:`pair_tweak`); segment pair
        mode only.
        """
        if not self._segments:
            raise ValueError("person_position_pairs: this RAPPOR has no segments (pass segments= and segment_bits=)")
        word = keyed_words(keys, self.pair_tweak, np.zeros(len(keys), dtype=np.uint64), 1)
        return cohorts_of(word, len(self.position_pairs))

    def pair_words(self, values: NDArray[np.uint64], pairs: NDArray[np.int64]) -> NDArray[np.uint64]:
        """The segment pair item ``u · 2**b + v`` of each word: its segments ``u, v`` at its position pair ``(a, b)``."""
        seg = segment_values(values, self._segments, self._segment_bits)
        ab = np.array(self.position_pairs, dtype=np.int64)[pairs]
        rows = np.arange(seg.shape[0])
        return (seg[rows, ab[:, 0]] << np.uint64(self._segment_bits)) | seg[rows, ab[:, 1]]

    def _memo_values(self, values: np.ndarray, keys: Any) -> tuple[np.ndarray, np.ndarray]:
        cohorts = self.person_cohorts(keys)
        inputs = np.empty((values.shape[0], 4 if self._segments else 2), dtype=np.uint64)
        inputs[:, 0] = values
        inputs[:, 1] = cohorts
        if self._segments:  # the segment pair report: its item, and its cohort (position pair, cohort)
            pairs = self.person_position_pairs(keys)
            inputs[:, 2] = self.pair_words(values, pairs)
            inputs[:, 3] = pairs * self._cohorts + cohorts
        return values, inputs

    def _allocate_permanent(self, n: int) -> np.ndarray:
        return np.empty((n, self.bytes_per_report), dtype=np.uint8)

    def _allocate_reports(self, n: int) -> np.ndarray:
        return np.empty((n, self.bytes_per_report), dtype=np.uint8)

    def _layers(self):
        """``[(plan, first byte, bytes)]`` of each Bloom filter report in a row: the item's, then the segment pair's."""
        out = [(self._plan, 0, self._plan.row_bytes)]
        if self._pair_plan is not None:
            out.append((self._pair_plan, self._plan.row_bytes, self._pair_plan.row_bytes))
        return out

    def _split(self, words: np.ndarray, n: int, part: int) -> np.ndarray:
        """Record-major ``words`` of the two filters, the ``part``-th filter's (contiguous, as the kernels take them)."""
        if not self._segments:
            return words
        return np.ascontiguousarray(words.reshape(n, 2, self._plan.words_per_layer)[:, part]).ravel()

    def _run_permanent(self, inputs: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        n = inputs.shape[0]
        for part, (plan, start, size) in enumerate(self._layers()):
            t_all, t_low = plan.thresholds(plan.t_f)
            cols = inputs if not self._segments else np.ascontiguousarray(inputs[:, 2 * part:2 * part + 2])
            cols.flags.writeable = False
            dest = out if not self._segments else np.empty((n, size), dtype=np.uint8)
            launch(kernels.permanent_kernel, cols, BLOOM_KEY[0], BLOOM_KEY[1], self._h, self._k, plan.lane_bits,
                   t_all, t_low, self._split(words, n, part), dest)
            if self._segments:
                out[:, start:start + size] = dest

    def _run_instantaneous(self, permanent: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        n = permanent.shape[0]
        for part, (plan, start, size) in enumerate(self._layers()):
            tp_all, tp_low = plan.thresholds(plan.t_p)
            tq_all, tq_low = plan.thresholds(plan.t_q)
            src, dest = permanent, out
            if self._segments:
                src = np.ascontiguousarray(permanent[:, start:start + size])
                src.flags.writeable = False
                dest = np.empty((n, size), dtype=np.uint8)
            launch(kernels.instantaneous_kernel, src, self._k, plan.lane_bits, tp_all, tp_low, tq_all, tq_low,
                   self._split(words, n, part), dest)
            if self._segments:
                out[:, start:start + size] = dest

    def bloom_bits(self, items: Any, cohorts: Any = None) -> NDArray[np.int64]:
        """The Bloom bits of ``items`` (str, bytes or int, as :attr:`item_type`) in each cohort.

        An ``(len(items), n_cohorts, h)`` int64 array of bit positions (``cohorts``: which cohorts, default all),
        from the public hash family every client uses.
        """
        words, _ = self._encode(items, "items", locate=True)
        return self._positions(words, np.arange(self._cohorts) if cohorts is None else np.asarray(cohorts))

    def _positions(self, words, cohorts):
        m, c = words.shape[0], cohorts.shape[0]
        item = np.repeat(words.astype(np.uint64), c)
        coh = np.tile(cohorts.astype(np.uint64), m)
        out = np.empty((m * c, self._h), dtype=np.int64)
        launch(kernels.bloom_positions_kernel, item, coh, BLOOM_KEY[0], BLOOM_KEY[1], self._h, self._k, out)
        return out.reshape(m, c, self._h)

    def _design_positions(self, words: NDArray[np.uint64], cohorts: NDArray[np.int64]) -> NDArray[np.uint16]:
        """The decoder's design as :class:`BloomDesign` takes it: ``(M, C, h)`` uint16 Bloom bits of ``words``.

        In ``cohorts``, a bit an earlier hash of the same word and cohort set already being :data:`BLOOM_SKIP`.
        Computed :data:`DESIGN_BATCH` (word, cohort) pairs at a time, so the int64 positions of the hash kernel
        never take more than ``8 · h · DESIGN_BATCH`` bytes.
        """
        m, c, h = words.shape[0], cohorts.shape[0], self._h
        out = np.empty((m, c, h), dtype=np.uint16)
        step = max(1, DESIGN_BATCH // max(c, 1))
        for start in range(0, m, step):
            pos = self._positions(words[start:start + step], cohorts)
            for j in range(1, h):
                pos[:, :, j][(pos[:, :, j:j + 1] == pos[:, :, :j]).any(axis=2)] = BLOOM_SKIP
            out[start:start + step] = pos
        return out

    # -- server side --------------------------------------------------------------------------------
    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        """Per cohort: its reports' number, then each bit's count, which cannot exceed it.

        The cohorts' reports add up to ``n_reports`` (required whenever there are counts).
        """
        for group, table in zip(("cohort", "segment pair cohort"), _count_tables(counts, spec)):
            check_grouped_bit_counts(table, total, n_reports, spec, table.shape[0], table.shape[1] - 1, group=group)
        return 0 if n_reports is None else n_reports

    def aggregate(self, reports: Reports) -> Aggregate:
        """Count the reports per cohort (its reports, and how many set each bit) into a mergeable Aggregate.

        A :class:`~ldpnum.Aggregate` of ``cohorts · (k + 1)`` counts that keeps their round (aggregates of different
        rounds do not merge).
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        expected = self._expected_spec(reports.spec)
        check_spec(expected, reports.spec, "reports")
        counts = np.concatenate([cohort_counts(reports.codes[:, start:start + size], self._k, plan.cohorts).ravel()
                                 for plan, start, size in self._layers()])
        return Aggregate(counts, expected, len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports (of this mechanism's round, :meth:`at_round`), the identity of ``+``."""
        return Aggregate(np.zeros(self.n_cells, dtype=np.int64), self.spec, 0)

    def bit_estimates(self, data: Reports | Aggregate) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """``(t, N)``: how many people of each cohort have each Bloom bit set (unbiased), and the cohorts' reports.

        ``t_ij = (c_ij - p* N_j)/(q* - p*)`` estimates how many people of cohort ``j`` have Bloom bit ``i`` set
        (``(cohorts, k)``); ``N_j`` is cohort ``j``'s reports.
        """
        agg = self._as_aggregate(data)
        table = _count_tables(agg.counts, agg.spec)[0]
        qs, ps = self.support_probabilities
        n = table[:, 0]
        return (table[:, 1:] - ps * n[:, None]) / (qs - ps), n

    def estimate_frequencies(self, data: Reports | Aggregate, *, candidates: Any = None,
                             alpha: float = 0.05, max_candidates: int = MAX_CANDIDATES) -> RapporEstimate:
        """Decode the reports against a dictionary of candidate items, as Erlingsson, Pihur and Korolova do.

        Without a dictionary (``candidates=None``) a RAPPOR with segments finds its candidates first, by the
        Segment Pair Method (:meth:`discover`).

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate, of one round.
        candidates : sequence of items, optional
            The dictionary: distinct items of :attr:`item_type` (a list, tuple, NumPy array or pandas Series),
            at least one. Items that encode to the same word (str/bytes cut to ``item_bits / 8`` bytes) are
            refused: their reports cannot be told apart. Required unless the mechanism has segments.
        alpha : float, default 0.05
            Family-wise significance level of detection, in (0, 1): a candidate is detected when its one-sided
            p-value is below ``alpha / len(candidates)`` (Bonferroni).
        max_candidates : int, default 10,000
            Without ``candidates``: the most candidate items the segment pair graph may propose (see
            :meth:`discover`).

        Returns
        -------
        RapporEstimate
            The candidates the sparse regression selected, in decreasing order of estimated frequency, with
            standard errors, p-values and which are detected; provenance: candidates, selected, detected,
            ``alpha``, the z threshold, ``other_share`` (the intercept: a rough estimate of the share of people
            whose item is no candidate or was not selected), the Lasso's iterations and the screen's level.

        Notes
        -----
        1. ``y_ij = t_ij / N_j`` (:meth:`bit_estimates`) for the cohorts with reports; ``X`` the candidates' Bloom
           bits (:meth:`bloom_bits`), one row per (cohort, bit); the intercept column ``u = 1 - (1 - 1/k)^h``.
        2. Selection: the non-negative Lasso (:func:`nonnegative_lasso`) on rows whitened to unit noise
           variance (weights ``N_j / σ²``, ``σ² = π(1 - π)/(q* - p*)²`` with ``π`` the share of reported ones),
           keeping candidates whose partial correlation with the residual exceeds ``z_{1 - 1/M}`` standard
           errors (:data:`SELECTION_Z`; at most :data:`MAX_SELECTED_SHARE` of the rows: the largest coefficients). The paper's
           decoder uses the Lasso the same way, as a screen.
        3. Estimation: weighted least squares (weights ``N_j``) of ``y`` on the selected columns and the
           intercept, which is linear in ``y`` with a fixed design, hence unbiased when the dictionary holds every
           frequent item. Standard errors are the sandwich ``G⁻¹ X'VX G⁻¹`` with ``V`` the randomization
           variance of each ``t_ij``, ``c_ij(N_j - c_ij)/N_j/(q* - p*)²`` (conservative: the variance of a sum of
           Bernoulli draws of different rates is at most that of the pooled rate).
        4. Detection: ``z_m = f̂_m / σ̂_m`` against ``z_{1 - alpha/M}``.

        Everything is post-processing of the reports: it costs no privacy.
        """
        agg = self._as_aggregate(data)
        alpha = check_scalar(alpha, "alpha", float, low=0, high=1, include_boundaries="neither")
        if candidates is None and self._segments:
            return self._discover(agg, alpha, max_candidates)
        items, words = self._candidate_words(candidates)
        return self._estimate(agg, items, words, alpha, {"method": "lasso+least-squares"})

    def discover(self, data: Reports | Aggregate, *, alpha: float = 0.05,
                 max_candidates: int = MAX_CANDIDATES) -> RapporEstimate:
        r"""Find the frequent items without a dictionary: the Segment Pair Method of Fanti, Pihur and Erlingsson.

        Needs a RAPPOR with segments: every person reported, besides their item, the pair of its segments
        ``(u, v)`` at a position pair ``(a, b)`` fixed by their key.

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their aggregate, of one round.
        alpha : float, default 0.05
            Significance level, in (0, 1), of each of the two stages (see Notes).
        max_candidates : int, default 10,000
            The most candidate items (cliques) the graph may propose; more raise a ValueError.

        Returns
        -------
        RapporEstimate
            As :meth:`estimate_frequencies` against the candidates found; ``provenance["method"]`` is
            ``"segment-pairs"``, with ``pairs_tested`` (``P · 2**(2b)``), ``pairs_detected``, ``pair_z_threshold``
            and ``candidates`` (the cliques that encode an item).

        Notes
        -----
        1. *Segment pairs.* For each of the ``P = S(S - 1)/2`` position pairs, the segment pair reports of its
           people (its cohorts ``pair · cohorts + c``) are decoded against every one of the ``2**(2b)`` segment
           pairs (``2**16`` at ``b = 8``, one byte per segment: held as their Bloom bits, two bytes per candidate,
           cohort and hash, without building the design matrix) by the decoder of :meth:`estimate_frequencies`; a pair is *frequent* when its z-score exceeds ``z_{1 - alpha/(P·2**(2b))}``
           (Bonferroni over every pair tested).
        2. *Graph.* A node per (position, segment value), an edge per frequent pair. An item is frequent only if all
           its ``P`` segment pairs are (each is at least as frequent as the item), so the frequent items are among
           the graph's ``S``-cliques with one node per position (:func:`segment_cliques`, an exact search).
        3. *Decoding.* The cliques that encode an item (for str and bytes: valid UTF-8 / padding only at the end) are
           the dictionary against which the items' own reports are decoded, at family-wise level ``alpha``. The
           pair reports' randomness is independent of the item reports', so a false candidate proposed in step 2 is
           detected with probability at most ``alpha / M`` like any other candidate.

        A frequent item is found only when all its segment pairs are detected, which takes about ``P`` times the
        people a dictionary decoder needs for the same item (each position pair sees ``1/P`` of the people).
        Everything is post-processing: the privacy is that of the reports (:attr:`epsilon`, :attr:`epsilon_permanent`).

        References
        ----------
        G. Fanti, V. Pihur, Ú. Erlingsson, "Building a RAPPOR with the Unknown: Privacy-Preserving Learning of
        Associations and Data Dictionaries", PoPETs 2016.

        Examples
        --------
        >>> import ldpnum as ldp
        >>> m = ldp.RAPPOR(k=32, cohorts=16, segments=2, segment_bits=4, item_type="uint")
        >>> keys = ldp.ClientKeys.generate(20_000, rng=0)
        >>> items = [0x5A] * 8_000 + [0xC3] * 6_000 + list(range(6_000))
        >>> est = m.discover(m.privatize([v % 256 for v in items], keys=keys, rng=1))
        >>> sorted(est.detected_items)
        [90, 195]
        """
        agg = self._as_aggregate(data)
        alpha = check_scalar(alpha, "alpha", float, low=0, high=1, include_boundaries="neither")
        if not self._segments:
            raise ValueError("discover needs a RAPPOR with segments (segments=, segment_bits=): without them the "
                             "reports hold no segment pairs; decode against candidates=[...] instead")
        return self._discover(agg, alpha, max_candidates)

    def _discover(self, agg: Aggregate, alpha: float, max_candidates: Any) -> RapporEstimate:
        from scipy.stats import norm

        max_candidates = check_scalar(max_candidates, "max_candidates", int, low=1)
        n_values = 1 << (2 * self._segment_bits)
        pairs = self.position_pairs
        tested = len(pairs) * n_values
        z_pair = float(norm.isf(alpha / tested))
        table = _count_tables(agg.counts, agg.spec)[1]
        if not table[:, 0].any():
            raise ValueError("estimate_frequencies needs reports: the aggregate holds none")
        all_pairs = np.arange(n_values, dtype=np.uint64)
        mask = (1 << self._segment_bits) - 1
        edges: dict[tuple[int, int], Any] = {}
        for g, ab in enumerate(pairs):
            sub = table[g * self._cohorts:(g + 1) * self._cohorts]
            if not sub[:, 0].any():
                edges[ab] = np.zeros((0, 2), dtype=np.int64)
                continue
            fit = self._decode(sub, g * self._cohorts, all_pairs)
            hit = fit["selected"][_z_scores(fit["frequencies"], fit["standard_errors"]) > z_pair].astype(np.int64)
            edges[ab] = np.stack([hit >> self._segment_bits, hit & mask], axis=1)
        words = segment_cliques(self._segments, self._segment_bits, edges, max_candidates)
        items = decode_items(words, self._item_type, self._item_bits)
        if self._item_type != "uint":  # only the words some item encodes to (UTF-8, zero padding only at the end)
            ok = [_encodes_to(v, w, self._item_bits) for v, w in zip(items, words.tolist())]
            words = words[np.array(ok, dtype=bool)]
            items = [v for v, keep in zip(items, ok) if keep]
        provenance = {"method": "segment-pairs", "pairs_tested": tested, "pair_z_threshold": z_pair,
                      "pairs_detected": int(sum(len(e) for e in edges.values()))}
        return self._estimate(agg, items, words, alpha, provenance)

    def _estimate(self, agg: Aggregate, items: list, words: NDArray[np.uint64], alpha: float,
                  provenance: dict[str, Any]) -> RapporEstimate:
        """The candidates ``items`` (words ``words``) decoded from the item reports of ``agg``."""
        from scipy.stats import norm

        m_all = len(items)
        z_crit = float(norm.isf(alpha / max(m_all, 1)))
        provenance.update(candidates=m_all, alpha=alpha, z_threshold=z_crit, epsilon_permanent=self._epsilon_permanent,
                          round=spec_round(agg.spec))
        table = _count_tables(agg.counts, agg.spec)[0]
        if not table[:, 0].any():
            raise ValueError("estimate_frequencies needs reports: the aggregate holds none")
        if not m_all:
            provenance.update(selection_z=None, lasso_iterations=0, lasso_converged=True, selected=0,
                              other_share=None, other_share_standard_error=None, detected=0)
            empty = np.zeros(0)
            return RapporEstimate(items=(), frequencies=empty, standard_errors=empty, n_reports=agg.n_reports,
                                  epsilon=self._epsilon, spec=agg.spec, provenance=provenance, p_values=empty,
                                  detected=np.zeros(0, dtype=bool))
        fit = self._decode(table, 0, words)
        selected, freq, freq_se = fit.pop("selected"), fit.pop("frequencies"), fit.pop("standard_errors")
        provenance.update(fit, selected=int(selected.size))
        zs = _z_scores(freq, freq_se)
        p_values = norm.sf(zs)
        detected = zs > z_crit
        order = np.argsort(-freq, kind="stable")
        provenance["detected"] = int(detected.sum())
        chosen = selected[order]
        return RapporEstimate(items=tuple(items[i] for i in chosen.tolist()), frequencies=freq[order],
                              standard_errors=freq_se[order], n_reports=agg.n_reports, epsilon=self._epsilon,
                              spec=agg.spec, provenance=provenance, p_values=p_values[order],
                              detected=detected[order])

    def _decode(self, table: NDArray[np.int64], first_cohort: int, words: NDArray[np.uint64]) -> dict[str, Any]:
        """Lasso screen and least squares of the candidate ``words`` on one count table.

        ``table`` holds cohorts ``first_cohort, first_cohort + 1, ...`` (their hash functions), at least one with
        reports. Returns the selected candidates' indices, their frequencies and standard errors, the intercept
        (``other_share``) and the screen's figures.
        """
        from scipy import sparse
        from scipy.stats import norm

        m_all = words.shape[0]
        k, h = self._k, self._h
        n_j = table[:, 0].astype(np.float64)
        live = np.flatnonzero(n_j > 0)
        z_screen = max(float(norm.isf(1 / max(m_all, 2))), SELECTION_Z)
        qs, ps = self.support_probabilities
        gap = qs - ps
        counts = table[live, 1:].astype(np.float64)
        nl = n_j[live]
        y = ((counts - ps * nl[:, None]) / gap / nl[:, None]).ravel()
        var_t = (counts * (nl[:, None] - counts) / nl[:, None]).ravel() / gap**2  # variance of t_ij
        row_n = np.repeat(nl, k)
        u = 1.0 - (1.0 - 1.0 / k) ** h
        rows_n = live.size * k

        design = BloomDesign(self._design_positions(words, live + first_cohort), k)

        # -- selection: non-negative Lasso, rows whitened to unit noise variance
        rate = float(table[live, 1:].sum() / (nl.sum() * k))
        sigma2 = max(rate * (1 - rate), 1e-12) / gap**2
        w = np.sqrt(row_n / sigma2)
        coef, iterations, converged = nonnegative_lasso(design.whitened(np.sqrt(nl / sigma2)), w * y, w * u,
                                                        z_screen)
        selected = np.flatnonzero(coef > 0)
        cap = max(int(MAX_SELECTED_SHARE * rows_n) - 1, 0)
        if selected.size > cap:
            selected = selected[np.argsort(-coef[selected], kind="stable")[:cap]]
            selected.sort()

        # -- estimation: weighted least squares on the selected candidates and the intercept
        xs = sparse.hstack([design.columns(selected), sparse.csc_matrix(np.full((rows_n, 1), u))], format="csc")
        gram = (xs.T @ sparse.diags(row_n) @ xs).toarray()
        rhs = xs.T @ (row_n * y)
        meat = (xs.T @ sparse.diags(var_t) @ xs).toarray()
        try:
            chol = np.linalg.cholesky(gram)
        except np.linalg.LinAlgError:
            raise ValueError("the selected candidates' Bloom bits are linearly dependent (candidates that set the "
                             "same bits in every cohort): enlarge k or cohorts, or drop such candidates") from None
        beta = _chol_solve(chol, rhs)
        ginv_meat = _chol_solve(chol, meat)
        cov = _chol_solve(chol, ginv_meat.T).T
        se = np.sqrt(np.maximum(np.diag(cov), 0.0))
        return {"selected": selected, "frequencies": beta[:-1], "standard_errors": se[:-1], "selection_z": z_screen,
                "lasso_iterations": iterations, "lasso_converged": converged, "other_share": float(beta[-1]),
                "other_share_standard_error": float(se[-1])}

    def _candidate_words(self, candidates: Any) -> tuple[list, NDArray[np.uint64]]:
        """The candidates as a list of items and their words.

        One clear error for a wrong type, an empty dictionary or items that coincide after encoding.
        """
        if candidates is None:
            raise TypeError("estimate_frequencies needs candidates=[...]: the dictionary of items to decode against")
        words, _ = self._encode(candidates, "candidates", locate=True, digest=False)
        return (distinct_candidates(candidates, words, self._item_type, self._item_bits),
                item_digests(words, self._item_bits))


def _z_scores(freq: NDArray[np.float64], se: NDArray[np.float64]) -> NDArray[np.float64]:
    """``f̂ / σ̂`` of each estimate (``inf`` for a positive estimate without error, 0 for a non-positive one)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, freq / se, np.where(freq > 0, np.inf, 0.0))


def _encodes_to(item: Any, word: int, item_bits: int) -> bool:
    """Whether ``item`` (decoded from ``word``) encodes back to ``word``: a word some str or bytes item has."""
    try:
        return int(encode_items([item], item_bits, truncate=False)[0][0]) == word
    except ValueError:  # e.g. a NUL inside a str
        return False


def _count_tables(counts: NDArray[np.int64], spec: Spec) -> list[NDArray[np.int64]]:
    """An aggregate's count tables, ``(cohorts, k + 1)`` each: the items' reports, then the segment pairs' if any."""
    k, n_cohorts, segments = spec.get("k"), spec.get("cohorts"), spec.get("segments")
    first = n_cohorts * (k + 1)
    tables = [counts[:first].reshape(n_cohorts, k + 1)]
    if segments:
        tables.append(counts[first:].reshape(-1, k + 1))
    return tables


def _chol_solve(chol: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``G⁻¹ b`` from the Cholesky factor of ``G``."""
    from scipy.linalg import solve_triangular

    return solve_triangular(chol.T, solve_triangular(chol, b, lower=True), lower=False)
