"""Client kernels of the longitudinal frequency oracles' layers that no one-shot oracle has.

Numba kernels; see the design rules R2, R6, R9.

**Bit flip** (:func:`bit_flip_kernel`, the instantaneous layer of L-OSUE). The input is a bit-packed ``k``-bit
vector per person (the permanent unary report, in the layout of :mod:`ldpnum._kernels.client_unary`: bit ``j``
is bit ``j % 8`` of byte ``j // 8``); every bit is randomized independently, with a threshold per input bit:
an output bit is 1 iff its lane is below ``t_one`` when the input bit is 1, below ``t_zero`` when it is 0.
Words of record ``i``: ``c = n_bytes · lane_bits / 8`` of them, fixed whatever the input; bit ``s`` uses lane
``s % L`` of word ``c·i + s // L`` (``L = 64 / lane_bits``), the unary kernel's lane layout, compared eight
(or four) lanes at a time with the same SWAR comparisons; on 16-bit lanes each lane is compared once, with the
threshold its input bit selects (:func:`lane_choice16_inline`). Padding bits of the last byte are zero.

**Bit flip, sparse** (:func:`bit_flip_sparse_kernel`, the default at ``k`` of about 64 and more): the same
thresholds, the bits drawn by :func:`~ldpnum._kernels.client_unary.sparse_bits_inline` with each bit's input bit
as its selector (:class:`ldpnum.frequency.unary.SparseBits`: a few mask words per 64 bits, then lanes for the bits
they leave undecided), so a bit costs about five random bits instead of a 16-bit lane; every bit keeps its exact
probability, independently of the others.

**Keyed unary encoding** (:func:`keyed_unary_kernel`, the permanent layer of L-OSUE): OUE's
:func:`~ldpnum._kernels.client_unary.unary_kernel` on each person's keyed words, derived as they are used (no array
of words): the same words and so the same permanent reports.

**Seeded GRR** (:func:`seeded_grr_kernel`, both layers of LOLOHA). One word per record: GRR over ``[0, g)``
(:func:`~ldpnum._kernels.client_grr.grr_inline`) of the person's hashed value, written under the seed bits of
their local-hashing report (``seed & SEED_MASK | y``, the layout of
:mod:`ldpnum._kernels.client_hashing`), so the permanent answer and the report carry the person's hash function.
"""

import numpy as np

from ._jit import jit, prange
from .client_grr import grr_inline
from .client_hashing import SEED_MASK
from .client_keyed import siphash24_last_inline, siphash24_prefix_inline
from .client_unary import (H16, below8_inline, below16_inline, below32_inline, byte16_inline, byte32_inline,
                           sparse_bits_inline, true_bit_inline)

U1 = np.uint64(1)
U2 = np.uint64(2)
U3 = np.uint64(3)
U4 = np.uint64(4)
U6 = np.uint64(6)
FF = np.uint64(0xFF)
F4 = np.uint64(0xF)
#: ``nibble * SPREAD16`` puts bit ``l`` of a nibble at bit ``16l``; ``LOW16`` keeps those bits, ``LANE16`` widens each
#: to its whole 16-bit lane.
SPREAD16 = np.uint64(0x0000200040008001)
LOW16 = np.uint64(0x0001000100010001)
LANE16 = np.uint64(0xFFFF)


@jit(inline=True)
def flip_byte_inline(z, one, zero):
    """The output byte: where input bit ``z`` is 1 the ``one`` comparison's bit, else the ``zero`` one's."""
    return np.uint8(((z & one) | (~z & zero)) & FF)


@jit(inline=True)
def lane_choice16_inline(nibble, t0_all, t1_all):
    """``(t_all, t_low)`` of one word's four 16-bit lanes: lane ``l`` holds ``t_one`` where bit ``l`` of ``nibble`` is 1.

    Else ``t_zero``. The nibble's bits are spread to bit ``16l`` by one multiply (its four shifted copies do not
    overlap, so nothing carries), then widened to whole-lane masks: one lane comparison per word instead of two.
    """
    lanes = ((nibble * SPREAD16) & LOW16) * LANE16
    t_all = t0_all ^ ((t0_all ^ t1_all) & lanes)
    return t_all, t_all & ~H16


@jit(parallel=True)
def bit_flip_kernel(bits, lane_bits, t0_all, t0_low, t1_all, t1_low, tail_mask, words, out):
    """Randomize every bit of the packed vectors ``bits`` (``(n, n_bytes)`` uint8) into ``out`` (same shape).

    ``t0_*`` / ``t1_*`` are the thresholds for input bits 0 / 1 in every lane (with and without the lanes' high
    bits; for 32-bit lanes both are the threshold); ``tail_mask`` keeps the real bits of the last byte.
    """
    n_bytes = out.shape[1]
    c = n_bytes * lane_bits // 8
    nb = np.uint64(n_bytes)
    for ii in prange(bits.shape[0]):
        i = np.uint64(ii)
        base = np.uint64(c) * i
        if lane_bits == 8:
            for jj in range(n_bytes):
                j = np.uint64(jj)
                w = words[base + j]
                out[i, j] = flip_byte_inline(np.uint64(bits[i, j]), below8_inline(w, t1_all, t1_low),
                                             below8_inline(w, t0_all, t0_low))
        elif lane_bits == 16:
            for jj in range(n_bytes):
                j = np.uint64(jj)
                b = base + U2 * j
                z = np.uint64(bits[i, j])
                ta, tl = lane_choice16_inline(z & F4, t0_all, t1_all)
                lo = below16_inline(words[b], ta, tl)
                ta, tl = lane_choice16_inline(z >> U4, t0_all, t1_all)
                hi = below16_inline(words[b + U1], ta, tl)
                out[i, j] = np.uint8(lo | (hi << U4))
        else:
            for jj in range(n_bytes):
                j = np.uint64(jj)
                b = base + U4 * j
                one = (below32_inline(words[b], t1_all) | (below32_inline(words[b + U1], t1_all) << U2)
                       | (below32_inline(words[b + U2], t1_all) << U4)
                       | (below32_inline(words[b + U3], t1_all) << U6))
                zero = (below32_inline(words[b], t0_all) | (below32_inline(words[b + U1], t0_all) << U2)
                        | (below32_inline(words[b + U2], t0_all) << U4)
                        | (below32_inline(words[b + U3], t0_all) << U6))
                out[i, j] = flip_byte_inline(np.uint64(bits[i, j]), one, zero)
        out[i, nb - U1] &= tail_mask


@jit(parallel=True)
def bit_flip_sparse_kernel(bits, levels, t_high_zero, t_high_one, lane_bits, t_lane_zero, t_lane_one, pool, tail_mask,
                           words, out):
    """:func:`bit_flip_kernel`'s output, its bits drawn by the sparse layout (with each input bit as its selector).

    ``levels·ceil(8·n_bytes/64) + pool + 2`` words per record; ``(t_high_zero, t_lane_zero)`` and ``(t_high_one,
    t_lane_one)`` split the thresholds of input bits 0 and 1 (:class:`ldpnum.frequency.unary.SparseBits`).
    """
    n_bytes = out.shape[1]
    n_bits = 8 * n_bytes
    c = np.uint64(levels * ((n_bits + 63) // 64) + pool + 2)
    nb = np.uint64(n_bytes)
    for ii in prange(bits.shape[0]):
        i = np.uint64(ii)
        sparse_bits_inline(words, c * i, n_bits, levels, t_high_zero, t_high_one, lane_bits, t_lane_zero, t_lane_one,
                           pool, True, bits, out, i, 0)
        out[i, nb - U1] &= tail_mask


@jit(parallel=True)
def keyed_unary_kernel(keys, tweak, values, k, lane_bits, t_all, t_low, t_true, out):
    """OUE's :func:`~ldpnum._kernels.client_unary.unary_kernel` of each value on its person's keyed words.

    Word ``j`` of person ``i`` is ``SipHash-2-4_{keys[i]}(tweak ‖ values[i] ‖ j)``, as
    :func:`~ldpnum._kernels.client_keyed.keyed_words_kernel` derives it (the state after ``tweak ‖ values[i]``
    once per person). Word 0 decides the value's own bit, words ``1 + lane_bits/8·b ..`` byte ``b``'s lanes. Writing and reading
    the ``1 + ceil(k/8)·lane_bits/8`` words per person through memory cost more than hashing them (k = 1024: 1 KiB
    per person).
    """
    n_bytes = out.shape[1]
    tail = k & 7
    tail_mask = np.uint8((1 << tail) - 1) if tail else np.uint8(0xFF)
    nb = np.uint64(n_bytes)
    for ii in prange(values.shape[0]):
        i = np.uint64(ii)
        v = values[i]
        v0, v1, v2, v3 = siphash24_prefix_inline(keys[i, np.uint64(0)], keys[i, U1], tweak, np.uint64(v))
        if lane_bits == 8:
            for jj in range(n_bytes):
                j = np.uint64(jj)
                out[i, j] = np.uint8(below8_inline(siphash24_last_inline(v0, v1, v2, v3, U1 + j), t_all, t_low))
        elif lane_bits == 16:
            for jj in range(n_bytes):
                b = U1 + U2 * np.uint64(jj)
                out[i, np.uint64(jj)] = byte16_inline(siphash24_last_inline(v0, v1, v2, v3, b),
                                                      siphash24_last_inline(v0, v1, v2, v3, b + U1), t_all, t_low)
        else:
            for jj in range(n_bytes):
                b = U1 + U4 * np.uint64(jj)
                out[i, np.uint64(jj)] = byte32_inline(
                    siphash24_last_inline(v0, v1, v2, v3, b), siphash24_last_inline(v0, v1, v2, v3, b + U1),
                    siphash24_last_inline(v0, v1, v2, v3, b + U2), siphash24_last_inline(v0, v1, v2, v3, b + U3),
                    t_all)
        out[i, nb - U1] &= tail_mask
        true_bit_inline(out, i, v, siphash24_last_inline(v0, v1, v2, v3, np.uint64(0)), t_true)


@jit(parallel=True)
def seeded_grr_kernel(seeds, hashed, g, a_keep, shift, words, out):
    """``out[i] = seeds[i] & SEED_MASK | GRR_g(hashed[i])`` with word ``i`` (``hashed[i] = -1``: uniform)."""
    for i in prange(hashed.shape[0]):
        y = grr_inline(hashed[i], words[i], g, a_keep, shift)
        out[i] = (seeds[i] & SEED_MASK) | np.uint64(y)
