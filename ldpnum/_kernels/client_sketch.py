"""Client kernels of Apple's count-mean sketch: CMS (a ±1 vector of ``width`` bits) and HCMS (one Hadamard bit).

Values are uint64 words: a category code, or an item's word from the heavy hitters' item encoding. A record is
*unknown* (reported as if it held no value: ``unknown="uniform"``) iff ``use_unknown`` is set and its word equals
``unknown_word``.

**The hash family** is public and seeded: hash function ``j`` of item word ``w`` is

    h_j(w) = floor(SipHash-2-4_K(j ‖ w ‖ 0) · width / 2**64)

with ``K`` the sketch's 128-bit key, derived from the seed its spec names
(:func:`ldpnum._kernels.client_rappor_bloom.bloom_position_inline`, the Bloom filters' hash with the hash index in
the place of the cohort). The collector recomputes it for its candidates with
:func:`ldpnum._kernels.client_rappor_bloom.bloom_positions_kernel`.

**CMS** (:func:`cms_kernel`; ``c = 2 + n_bytes · lane_bits / 8`` words per record). Word ``c·i`` chooses the hash
index ``j`` (``uniform_inline`` among ``n_hashes``); the rest are the unary encoding's words
(:mod:`ldpnum._kernels.client_unary`): word ``c·i + 1`` decides the bit at ``h_j(w)`` (1 iff ``(word >> 11) <
t_true``), and every other bit ``b`` is 1 iff its lane of words ``c·i + 2 ...`` is below ``t_other``, read as
:func:`ldpnum._kernels.client_rappor_bloom.lane_byte_inline` reads them. A report row is the ``width`` bits
(bit ``b`` is bit ``b % 8`` of byte ``b // 8``) followed by ``j`` as a little-endian integer in the row's last
bytes. Bit 1 stands for Apple's ``+1`` and bit 0 for ``-1``.

**CMS, sparse** (:func:`cms_sparse_kernel`, the default at widths of about 64 bits and more): the same report,
with the other bits drawn by :func:`ldpnum._kernels.client_unary.sparse_bits_inline` from the words after the first
two (:class:`ldpnum.frequency.unary.SparseBits`: a few mask words per 64 bits, then lanes for the bits that
survive them only), so each bit costs a few random bits instead of a whole lane; every bit keeps its exact
probability.

**HCMS** (:func:`hcms_kernel`; 2 words per record). Word ``2i`` chooses ``j = uniform_inline(word, n_hashes)``
(its bits 63..16) and the Hadamard column ``l`` = its low ``log2_width`` bits (``width ≤ 2**16``, so the two never
share a bit); word ``2i + 1`` keeps the true entry ``H[h_j(w), l] = (-1)^popcount(h_j(w) & l)`` with probability
``t_keep / 2**53``, else flips it. The report is the code ``(j · width + l) · 2 + s``, ``s = 1`` for ``+1``. An
unknown record reports ``s`` from the same coin against ``2**52`` (a fair bit).

Neither the hash index nor the Hadamard column depends on the value, and every record does the same work.
"""

import numpy as np

from ._jit import jit, prange
from .client_hashing import parity_inline
from .client_numeric import bernoulli_inline, uniform_inline
from .client_rappor_bloom import bloom_position_inline, lane_byte_inline
from .client_unary import sparse_bits_inline

U1 = np.uint64(1)
U2 = np.uint64(2)
U3 = np.uint64(3)
U7 = np.uint64(7)
U8 = np.uint64(8)
UFF = np.uint64(0xFF)
HALF53 = np.int64(1 << 52)


@jit(inline=True)
def true_bit_and_index_inline(out, ii, known, pos, coin, t_true, j, n_bytes):
    """A CMS row's end: the true bit, then the hash index.

    Bit ``pos`` becomes the true bit's coin (``(coin >> 11) < t_true``) unless the value is unknown; the hash
    index ``j`` is written little-endian in the bytes after the ``n_bytes`` bytes of bits.
    """
    if known:
        byte = pos >> U3
        m = np.uint8(U1 << (pos & U7))
        if bernoulli_inline(coin, t_true):
            out[ii, byte] |= m
        else:
            out[ii, byte] &= ~m
    for b in range(n_bytes, out.shape[1]):
        out[ii, b] = np.uint8((np.uint64(j) >> (U8 * np.uint64(b - n_bytes))) & UFF)


@jit(parallel=True)
def cms_kernel(values, use_unknown, unknown_word, key0, key1, n_hashes, width, lane_bits, t_all, t_low, t_true,
               words, out):
    """Count-mean sketch reports: ``out`` is ``(n, width/8 + index bytes)`` uint8."""
    n_bytes = width // 8
    c = np.uint64(2 + n_bytes * lane_bits // 8)
    for ii in prange(values.shape[0]):
        head = c * np.uint64(ii)
        j = uniform_inline(words[head], n_hashes)
        w = values[ii]
        pos = bloom_position_inline(key0, key1, np.uint64(j), w, 0, width)
        base = head + U2
        for b in range(n_bytes):
            out[ii, b] = np.uint8(lane_byte_inline(words, base, np.uint64(b), lane_bits, t_all, t_low))
        true_bit_and_index_inline(out, ii, not (use_unknown and w == unknown_word), pos, words[head + U1], t_true,
                                  j, n_bytes)


@jit(parallel=True)
def cms_sparse_kernel(values, use_unknown, unknown_word, key0, key1, n_hashes, width, levels, t_high, lane_bits,
                      t_lane, pool, t_true, words, out):
    """Count-mean sketch reports with the other bits drawn sparsely (``ldpnum.frequency.unary.SparseBits``).

    ``c = 2 + levels·ceil(width/64) + pool + 2`` words per record: the hash index, the true bit, then the sparse
    layout of the ``width`` bits. ``out`` as :func:`cms_kernel`'s.
    """
    n_bytes = width // 8
    c = np.uint64(2 + levels * ((width + 63) // 64) + pool + 2)
    for ii in prange(values.shape[0]):
        head = c * np.uint64(ii)
        j = uniform_inline(words[head], n_hashes)
        w = values[ii]
        sparse_bits_inline(words, head + U2, width, levels, t_high, t_high, lane_bits, t_lane, t_lane, pool, False,
                           out, out, ii, 0)
        pos = bloom_position_inline(key0, key1, np.uint64(j), w, 0, width)
        true_bit_and_index_inline(out, ii, not (use_unknown and w == unknown_word), pos, words[head + U1], t_true,
                                  j, n_bytes)


@jit(parallel=True)
def hcms_kernel(values, use_unknown, unknown_word, key0, key1, n_hashes, log2_width, t_keep, words, out):
    """Hadamard count-mean sketch reports: one code ``(j·width + l)·2 + s`` per record (``out``: uint32)."""
    width = np.uint64(1) << np.uint64(log2_width)
    for ii in prange(values.shape[0]):
        w0 = words[2 * ii]
        j = np.uint64(uniform_inline(w0, n_hashes))
        col = w0 & (width - U1)
        w = values[ii]
        pos = bloom_position_inline(key0, key1, j, w, 0, width)
        plus = parity_inline(pos & col) ^ U1  # 1 iff H[pos, col] = +1
        if use_unknown and w == unknown_word:
            s = U1 if np.int64(words[2 * ii + 1] >> np.uint64(11)) < HALF53 else np.uint64(0)
        elif bernoulli_inline(words[2 * ii + 1], t_keep):
            s = plus
        else:
            s = plus ^ U1
        out[ii] = np.uint32(((j * width + col) << U1) | s)
