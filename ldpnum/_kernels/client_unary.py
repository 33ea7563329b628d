"""Client kernel of the unary encodings SUE and OUE (Numba; design rules R2, R6).

A report is ``k`` bits, written bit-packed: bit ``j`` is bit ``j % 8`` of byte ``j // 8`` of the output row
(least significant first, ``numpy.packbits(..., bitorder="little")``); the padding bits of the last byte
are zero.

Words of record ``i`` (``c = 1 + n_bytes * lane_bits / 8`` of them, fixed whatever the value):

* word ``c*i``: the true bit, 1 iff ``(word >> 11) < t_true`` (a 53-bit Bernoulli event, as everywhere);
* words ``c*i + 1 ...``: cut into ``64 / lane_bits`` lanes of ``lane_bits`` bits, lane ``l`` of a word
  being bits ``[l*lane_bits, (l+1)*lane_bits)`` of its value. Report bit ``s`` uses lane ``s % L`` of word
  ``c*i + 1 + s // L`` (``L = 64 / lane_bits``) and is 1 iff that lane ``< t_other``. Every bit, the true
  one included, is drawn this way; then the true bit is overwritten from the first word.

So one 64-bit word yields 8, 4 or 2 independent Bernoulli bits. The lane comparisons are done eight (or
four) at a time with SWAR arithmetic: for lanes ``x`` and the broadcast threshold ``y`` (high bit of each
lane ``H``), ``d = (x | H) - (y & ~H)`` cannot borrow across lanes, and the high bit of a lane of
``(~x & y) | (~(x ^ y) & ~d)`` is ``x < y`` (unsigned). A multiply gathers the lanes' high bits into
consecutive bits. ``tests/naive_unary.py`` computes the same bits one lane at a time in Python integers.
"""

import numpy as np

from ._jit import jit, prange
from .client_keyed import siphash24_three_inline
from .client_numeric import bernoulli_inline

H8 = np.uint64(0x8080808080808080)
H16 = np.uint64(0x8000800080008000)
# (m * GATHER8) >> 56 moves bit 8l of m to bit l; (m * GATHER16) >> 48 moves bit 16l to bit l: every
# partial product lands on a distinct bit, so there are no carries into the gathered bits.
GATHER8 = np.uint64(0x0102040810204080)
GATHER16 = np.uint64(0x0001000200040008)
LOW32 = np.uint64(0xFFFFFFFF)
U7 = np.uint64(7)
U15 = np.uint64(15)
U32 = np.uint64(32)
U48 = np.uint64(48)
U56 = np.uint64(56)
U4 = np.uint64(4)
U1 = np.uint64(1)
U3 = np.uint64(3)
U2 = np.uint64(2)
U6 = np.uint64(6)
F4 = np.uint64(0xF)


@jit(inline=True)
def below8_inline(x, t_all, t_low):
    """Eight bits: bit ``l`` is ``byte l of x < t`` (``t_all`` = t in every byte, ``t_low = t_all & ~H8``)."""
    d = (x | H8) - t_low
    lt = ((~x & t_all) | (~(x ^ t_all) & ~d)) & H8
    return ((lt >> U7) * GATHER8) >> U56


@jit(inline=True)
def below16_inline(x, t_all, t_low):
    """Four bits: bit ``l`` is ``16-bit lane l of x < t``."""
    d = (x | H16) - t_low
    lt = ((~x & t_all) | (~(x ^ t_all) & ~d)) & H16
    return (((lt >> U15) * GATHER16) >> U48) & F4


@jit(inline=True)
def below32_inline(x, t):
    """Two bits: bit ``l`` is ``32-bit lane l of x < t``."""
    lo = np.uint64(1) if (x & LOW32) < t else np.uint64(0)
    hi = np.uint64(2) if (x >> U32) < t else np.uint64(0)
    return lo | hi


@jit(inline=True)
def byte16_inline(w0, w1, t_all, t_low):
    """One output byte from two words of four 16-bit lanes each (bits 0-3 from ``w0``, 4-7 from ``w1``)."""
    return np.uint8(below16_inline(w0, t_all, t_low) | (below16_inline(w1, t_all, t_low) << U4))


@jit(inline=True)
def byte32_inline(w0, w1, w2, w3, t):
    """One output byte from four words of two 32-bit lanes each."""
    return np.uint8(below32_inline(w0, t) | (below32_inline(w1, t) << U2) | (below32_inline(w2, t) << U4)
                    | (below32_inline(w3, t) << U6))


@jit(inline=True)
def true_bit_inline(out, i, v, word, t_true):
    """Bit ``v`` of row ``i`` (``v ≥ 0``; ``-1``: unknown, left alone) set with probability ``t_true / 2**53``."""
    if v >= 0:
        j = np.uint64(v >> 3)
        m = np.uint8(1 << (v & 7))
        if bernoulli_inline(word, t_true):
            out[i, j] |= m
        else:
            out[i, j] &= ~m


@jit(parallel=True)
def unary_kernel(values, k, lane_bits, t_all, t_low, t_true, words, out):
    """Unary encoding of each value (``-1``: unknown, every bit at the "other" probability).

    ``out`` has shape ``(n, ceil(k/8))``; ``t_all`` is ``t_other`` repeated in every lane, ``t_low`` the same
    without the lanes' high bits (for 32-bit lanes both are ``t_other``).
    """
    n_bytes = out.shape[1]
    c = 1 + n_bytes * lane_bits // 8
    tail = k & 7
    tail_mask = np.uint8((1 << tail) - 1) if tail else np.uint8(0xFF)
    nb = np.uint64(n_bytes)
    # Unsigned indices: Numba adds a negative-index wrap-around to every access with a signed index, which
    # also keeps the byte loops from vectorizing.
    for ii in prange(values.shape[0]):
        i = np.uint64(ii)
        head = np.uint64(c) * i
        base = head + U1
        if lane_bits == 8:
            for jj in range(n_bytes):
                j = np.uint64(jj)
                out[i, j] = np.uint8(below8_inline(words[base + j], t_all, t_low))
        elif lane_bits == 16:
            for jj in range(n_bytes):
                b = base + U2 * np.uint64(jj)
                out[i, np.uint64(jj)] = byte16_inline(words[b], words[b + U1], t_all, t_low)
        else:
            for jj in range(n_bytes):
                b = base + U4 * np.uint64(jj)
                out[i, np.uint64(jj)] = byte32_inline(words[b], words[b + U1], words[b + U2], words[b + U3], t_all)
        out[i, nb - U1] &= tail_mask
        true_bit_inline(out, i, values[i], words[head], t_true)


#: ``ldpnum.frequency.unary.SPARSE_TAG``: the first message word of a record's lane words beyond its pool.
SPARSE_TAG = np.uint64(0x312D657372617073)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_U0 = np.uint64(0)
_U8 = np.uint64(8)
_U64 = np.uint64(64)
_UFF = np.uint64(0xFF)


@jit(inline=True)
def sparse_bits_inline(words, base, n_bits, levels, t_high, t_high_one, lane_bits, t_lane, t_lane_one, pool, select,
                       sel, out, ii, first_byte):
    """Write ``n_bits`` independent Bernoulli bits (:class:`ldpnum.frequency.unary.SparseBits`) into ``out[ii]``.

    The record's layout starts at word ``base``: ``levels`` mask words per 64-bit chunk, ``pool`` lane words, two
    key words. Each bit has its threshold: ``(t_high_one, t_lane_one)`` where its selector bit is 1 (``select`` set:
    bit ``s`` of ``sel[ii]``, bit ``s % 8`` of byte ``s // 8``), else ``(t_high, t_lane)``. Mask word ``k`` of a
    chunk decides its alive bits whose mask bit differs from bit ``k`` (from the top) of their ``t_high``: 1 if
    that bit of ``t_high`` is 1, else 0. The bits alive after the masks, in bit order, read consecutive
    ``lane_bits``-bit lanes (lane words ``i >= pool`` are SipHash-2-4 under the key words of ``SPARSE_TAG ‖ 0 ‖
    i``) and are 1 iff their lane is ``< t_lane``. Bit ``s`` is bit ``s % 8`` of byte ``first_byte + s // 8``
    (``n_bits`` a multiple of 8). Alive bits are visited by their lowest set bit, with no loop over the others.
    """
    nb = np.uint64(n_bits)
    lv = np.uint64(levels)
    width = np.uint64(lane_bits)
    per_word = _U64 // width
    lane_mask = (U1 << width) - U1
    n_chunks = (nb + np.uint64(63)) >> np.uint64(6)
    pool_base = base + lv * n_chunks
    pool_u = np.uint64(pool)
    key0 = words[pool_base + pool_u]
    key1 = words[pool_base + pool_u + U1]
    used = _U0  # lane words read so far
    left = _U0  # lanes left in `cur`
    cur = _U0
    th0 = np.uint64(t_high)
    th1 = np.uint64(t_high_one)
    tl0 = np.uint64(t_lane)
    tl1 = np.uint64(t_lane_one)
    for ch in range(n_chunks):
        c = np.uint64(ch)
        bits_here = nb - _U64 * c
        n_out = (bits_here >> U3) if bits_here < _U64 else _U8
        byte0 = np.uint64(first_byte) + _U8 * c
        s = _U0  # the chunk's selector bits
        if select:
            for k in range(n_out):
                s |= np.uint64(sel[ii, byte0 + np.uint64(k)]) << (_U8 * np.uint64(k))
        alive = _ALL
        ones = _U0
        m = base + c * lv
        for lvl in range(lv):
            w = words[m + np.uint64(lvl)]
            shift = lv - U1 - np.uint64(lvl)
            b0 = _U0 - ((th0 >> shift) & U1)  # bit `lvl` of each threshold, as a whole word
            b1 = _U0 - ((th1 >> shift) & U1)
            t = b0 ^ ((b0 ^ b1) & s)  # each bit's threshold bit
            ones |= alive & ~w & t  # a 0 in the lane where t has a 1: below t
            alive &= ~(w ^ t)  # decided where the lane's bit differs from t's
        if bits_here < _U64:
            alive &= (U1 << bits_here) - U1
            ones &= (U1 << bits_here) - U1
        kept = alive | ones
        while alive:
            if left == _U0:
                cur = words[pool_base + used] if used < pool_u else siphash24_three_inline(key0, key1, SPARSE_TAG,
                                                                                           _U0, used)
                used += U1
                left = per_word
            low = alive & (~alive + U1)
            tl = tl1 if s & low else tl0
            kept ^= low * np.uint64((cur & lane_mask) >= tl)  # a survivor whose lane is >= its t_lane is 0
            cur >>= width
            left -= U1
            alive ^= low
        for k in range(n_out):
            out[ii, byte0 + np.uint64(k)] = np.uint8((kept >> (_U8 * np.uint64(k))) & _UFF)
