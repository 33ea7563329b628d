"""Client kernels of RAPPOR: the cohort's Bloom filter and both randomized responses.

Numba kernels (design rules R2, R6): the cohort's Bloom filter, the permanent randomized response (from keyed words)
and the instantaneous one (from fresh words).

A report row is ``k/8`` bytes of Bloom bits (bit ``j`` is bit ``j % 8`` of byte ``j // 8``, least significant
first, as every bit-packed report in ldpnum) followed by the cohort as a little-endian integer in the row's
last bytes.

*The Bloom filter.* Item ``w`` (a word of the heavy hitters' item encoding) in cohort ``c`` sets the bits

    pos_j(c, w) = floor(SipHash-2-4_K(c ‖ w ‖ j) · k / 2**64),      j = 0 .. h - 1,

with ``K`` a public 128-bit key (``ldpnum.longitudinal.rappor.BLOOM_KEY``): a public, seeded hash family that
the collector recomputes for its candidate items (:func:`bloom_positions_kernel`). Positions may coincide
(a Bloom filter then has fewer than ``h`` bits set).

*Bits from lanes.* As the unary encodings do (``client_unary``), each 64-bit word is cut into lanes of
``lane_bits`` ∈ {8, 16, 32} bits and a bit is 1 iff its lane is below a threshold ``t``, so its probability is
exactly ``t / 2**lane_bits``. Report byte ``b`` reads the lanes of words ``b·lane_bits/8 ...`` of its record.

*Permanent layer* (words keyed by the person's key and item): ``B' = B XOR N`` where every bit of ``N`` is 1
with probability ``f/2`` (threshold ``t_f``): a set bit stays 1 w.p. ``1 - f/2``, a clear bit becomes 1 w.p.
``f/2``, as Erlingsson, Pihur and Korolova specify it. *Instantaneous layer* (fresh words): each bit is 1
iff its lane is below ``t_q`` when the permanent bit is 1 and below ``t_p`` when it is 0 (one lane per bit,
compared with the threshold its permanent bit selects).
"""

import numpy as np

from ._jit import jit, prange
from .client_keyed import siphash24_three_inline
from .client_numeric import mulhi64_inline
from .client_unary import below8_inline, below16_inline, below32_inline

U1 = np.uint64(1)
U2 = np.uint64(2)
U3 = np.uint64(3)
U4 = np.uint64(4)
U6 = np.uint64(6)
U7 = np.uint64(7)
U8 = np.uint64(8)
UFF = np.uint64(0xFF)


@jit(inline=True)
def bloom_position_inline(key0, key1, cohort, word, j, k):
    """Bit of hash ``j`` of item ``word`` in cohort ``cohort``: ``floor(SipHash_K(c ‖ w ‖ j) · k / 2**64)``."""
    return mulhi64_inline(siphash24_three_inline(key0, key1, cohort, word, np.uint64(j)), np.uint64(k))


@jit(inline=True)
def lane_byte_inline(words, base, b, lane_bits, t_all, t_low):
    """Eight Bernoulli bits (``lane < t``) from the lanes of report byte ``b``, whose words start at ``base``."""
    if lane_bits == 8:
        return below8_inline(words[base + b], t_all, t_low)
    if lane_bits == 16:
        w = base + U2 * b
        return below16_inline(words[w], t_all, t_low) | (below16_inline(words[w + U1], t_all, t_low) << U4)
    w = base + U4 * b
    return (below32_inline(words[w], t_all) | (below32_inline(words[w + U1], t_all) << U2)
            | (below32_inline(words[w + U2], t_all) << U4) | (below32_inline(words[w + U3], t_all) << U6))


@jit(parallel=True)
def bloom_positions_kernel(items, cohorts, key0, key1, h, k, out):
    """``out[i, j]`` = bit of hash ``j`` of ``items[i]`` in cohort ``cohorts[i]`` (``out``: ``(n, h)`` int64)."""
    for i in prange(items.shape[0]):
        for j in range(h):
            out[i, j] = np.int64(bloom_position_inline(key0, key1, cohorts[i], items[i], j, k))


@jit(parallel=True)
def permanent_kernel(inputs, key0, key1, h, k, lane_bits, t_all, t_low, words, out):
    """Permanent randomized response of each person's Bloom filter, written with their cohort.

    ``inputs`` is ``(n, 2)`` uint64 (item word, cohort); ``out`` is ``(n, k/8 + cohort bytes)`` uint8;
    ``words`` holds ``k·lane_bits/64`` keyed words per record (``k/8 · lane_bits/8``); ``t_all``/``t_low`` are ``t_f`` in every lane
    (and without the lanes' high bits), as :func:`ldpnum._kernels.client_unary.unary_kernel` takes them.
    """
    n_bytes = k // 8
    c = np.uint64(n_bytes * lane_bits // 8)
    row = out.shape[1]
    for ii in prange(inputs.shape[0]):
        i = np.uint64(ii)
        item = inputs[ii, 0]
        cohort = inputs[ii, 1]
        for b in range(n_bytes):
            out[ii, b] = np.uint8(0)
        for j in range(h):
            pos = bloom_position_inline(key0, key1, cohort, item, j, k)
            out[ii, pos >> U3] |= np.uint8(U1 << (pos & U7))
        base = c * i
        for b in range(n_bytes):
            out[ii, b] ^= np.uint8(lane_byte_inline(words, base, np.uint64(b), lane_bits, t_all, t_low))
        for b in range(n_bytes, row):
            out[ii, b] = np.uint8((cohort >> (U8 * np.uint64(b - n_bytes))) & UFF)


@jit(parallel=True)
def instantaneous_kernel(permanent, k, lane_bits, tp_all, tp_low, tq_all, tq_low, words, out):
    """Instantaneous randomized response of each permanent row; the cohort bytes are copied.

    Bit ``j`` is 1 iff its lane is below ``t_q`` (permanent bit 1) or ``t_p`` (permanent bit 0).
    """
    n_bytes = k // 8
    c = np.uint64(n_bytes * lane_bits // 8)
    row = out.shape[1]
    for ii in prange(permanent.shape[0]):
        base = c * np.uint64(ii)
        for b in range(n_bytes):
            bb = np.uint64(b)
            z = np.uint64(permanent[ii, b])
            mq = lane_byte_inline(words, base, bb, lane_bits, tq_all, tq_low)
            mp = lane_byte_inline(words, base, bb, lane_bits, tp_all, tp_low)
            out[ii, b] = np.uint8((z & mq) | (~z & mp & UFF))
        for b in range(n_bytes, row):
            out[ii, b] = permanent[ii, b]
