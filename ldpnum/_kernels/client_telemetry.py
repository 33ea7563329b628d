"""Client kernels of dBitFlip (Numba, design rule R6): bucketize, sample ``d`` buckets, one bit per sampled bucket.

A report is one ``uint64`` code: the ``d`` sampled buckets in increasing order, each with its bit, field ``t`` at
bits ``[t·w, (t + 1)·w)`` holding ``bucket << 1 | bit`` (``w = bit_length(buckets - 1) + 1``).

The sample. When there are at most 2**16 subsets (``M = C(buckets, d)``), it is the subset of rank
``floor(word·M/2**64)`` (one word, ``mulhi64``), looked up in a table of every subset's fields
(:func:`ldpnum.plans.subsets_by_rank`), its exact distribution :func:`ldpnum.plans.rank_distribution`. Beyond that it
is Floyd's algorithm with the kernels' 48-bit picks, one word per pick, exactly
:func:`ldpnum.plans.floyd_distribution`. The bits are integer events on 32-bit halves of
words, two bits per word (field ``t`` reads the low half of word ``t >> 1`` when ``t`` is even, the high half when
it is odd; threshold ``t_32 = t >> 21`` of a :func:`ldpnum.plans.binary_plan` on a 2**32 grid). Only the words
decide the sampled buckets, never the value, and every record does the same work whatever its value.
"""

import numpy as np

from ._jit import jit, prange
from .client_keyed import siphash24_last_inline, siphash24_prefix_inline
from .client_numeric import M32, U32, bernoulli_inline, mulhi64_inline, uniform_inline, unit_inline

U0 = np.uint64(0)
U1 = np.uint64(1)
U2 = np.uint64(2)


@jit(parallel=True)
def bucket_of(x, low, inv_range, b, out):
    """Bucket of each value: ``min(floor(u·b), b - 1)`` with ``u`` the value mapped to [0, 1] (clamped)."""
    for i in prange(x.shape[0]):
        j = np.int64(unit_inline(x[i], low, inv_range) * b)
        out[i] = j if j < b else b - 1


@jit(inline=True)
def floyd_insert_inline(out, i, col, t, j, r):
    """Floyd's step ``t`` of record ``i``: ``r`` (or ``j`` if ``r`` is in already) into the picks ``out[i, col:col + t]``.

    The picks stay sorted. Membership is a scan of the picks (``t < d ≤ 32``: a report holds at most 32 fields); the insertion keeps the
    row sorted (``d`` is small; NumPy's sort of a short row costs 10x).
    """
    row, base = np.uint64(i), np.uint64(col)  # unsigned indices: Numba wraps signed ones on every access
    pick = r
    for s in range(np.uint64(t)):
        pick = j if out[row, base + s] == r else pick
    s = base + np.uint64(t)
    while s > base and out[row, s - U1] > pick:
        out[row, s] = out[row, s - U1]
        s -= U1
    out[row, s] = pick


@jit(parallel=True)
def sample_buckets(words, c, offset, b, d, out):
    """Each record's ``d`` distinct buckets of ``b``, sorted, into ``out[i, 0:d]``.

    Floyd's pick at ``j = b - d + t`` draws ``r`` uniform in ``0..j`` from word ``c·i + offset + t`` and adds ``r``,
    or ``j`` if ``r`` is in already (:func:`floyd_insert_inline`); the picks are inserted in order as they come (the
    order depends on the words alone, never on the value).
    """
    for i in prange(out.shape[0]):
        for t in range(d):
            j = b - d + t
            floyd_insert_inline(out, i, 0, t, j, uniform_inline(words[c * i + offset + t], j + 1))


@jit(parallel=True)
def keyed_sample_kernel(keys, tweak, b, d, col, out):
    """:func:`sample_buckets` on each person's keyed words, into ``out[i, col:col + d]``.

    Word ``t`` of person ``i`` is ``SipHash-2-4_{keys[i]}(tweak ‖ 0 ‖ t)``, the words
    :func:`~ldpnum._kernels.client_keyed.keyed_words_kernel` derives for the memoized value 0, computed here as they
    are used (no array of words).
    """
    for ii in prange(out.shape[0]):
        i = np.uint64(ii)
        v0, v1, v2, v3 = siphash24_prefix_inline(keys[i, U0], keys[i, U1], tweak, U0)
        # The raw picks first (independent hashes, computed back to back), then Floyd's steps in place: step t reads
        # pick t and writes only the sorted prefix out[i, col:col + t + 1].
        for t in range(d):
            out[ii, col + t] = uniform_inline(siphash24_last_inline(v0, v1, v2, v3, np.uint64(t)), b - d + t + 1)
        for t in range(d):
            floyd_insert_inline(out, ii, col, t, b - d + t, out[ii, col + t])


@jit(inline=True)
def half_bit_inline(word, t, threshold):
    """Bit ``t`` of a pair from one word: its low 32-bit half (``t`` even) or high half (odd) below ``threshold``."""
    half = (word >> U32) if t & 1 else (word & M32)
    return U1 if half < threshold else U0


@jit(parallel=True)
def bit_flip_kernel(buckets, samples, t_lo, t_hi, width, words, c, offset, out):
    """The report code of each record from its sampled buckets (Floyd's sample), one field per bucket.

    For its sampled bucket ``j_t`` (``samples[i, t]``, sorted) the bit is 1 with probability ``t_hi / 2**32`` if
    ``j_t`` is the record's bucket, else ``t_lo / 2**32`` (:func:`half_bit_inline` of word ``c·i + offset + t//2``);
    field ``t`` of the code is ``j_t << 1 | bit`` at bit ``t·width``.
    """
    d = samples.shape[1]
    for i in prange(buckets.shape[0]):
        v = buckets[i]
        code = np.uint64(0)
        for t in range(d):
            j = samples[i, t]
            bit = half_bit_inline(words[c * i + offset + (t >> 1)], t, t_hi if j == v else t_lo)
            code |= (np.uint64(j) * U2 + bit) << np.uint64(t * width)
        out[i] = code


@jit(inline=True)
def pair_bits_inline(sample, v, s, d, width, word, t_lo, t_hi):
    """The bits of fields ``2s`` and ``2s + 1`` (if ``< d``) of a sample's code, from one word, in place.

    ``sample`` is the code with every field ``j_t << 1``; field ``t``'s bit is :func:`half_bit_inline` at ``t_hi``
    if its bucket is the record's bucket ``v``, else ``t_lo``.
    """
    mask = (U1 << np.uint64(width - 1)) - U1
    bits = U0
    for t in range(2 * s, min(2 * s + 2, d)):
        shift = np.uint64(t * width)
        j = (sample >> (shift + U1)) & mask
        bits |= half_bit_inline(word, t, t_hi if j == v else t_lo) << shift
    return bits


@jit(parallel=True, plan_arrays=("table",))
def rank_bit_flip_kernel(buckets, words, c, table, d, t_lo, t_hi, width, out):
    """The report code of each record, its sample by rank from word ``c·i``, its bits from the words after it.

    Word ``c·i + 1 + s`` holds the bits of fields ``2s, 2s + 1``. The rank ``r = floor(word·M/2**64)`` of the ``M`` samples of ``table`` (each sample's code with every field
    ``j_t << 1``, in the order of :func:`ldpnum.plans.subsets_by_rank`), then :func:`pair_bits_inline`.
    """
    m = np.uint64(table.shape[0])
    cu = np.uint64(c)
    for ii in prange(buckets.shape[0]):
        base = cu * np.uint64(ii)
        v = np.uint64(buckets[ii])
        sample = table[mulhi64_inline(words[base], m)]
        code = sample
        for s in range((d + 1) // 2):
            code |= pair_bits_inline(sample, v, s, d, width, words[base + U1 + np.uint64(s)], t_lo, t_hi)
        out[ii] = code


@jit(parallel=True, plan_arrays=("table",))
def keyed_rank_bit_flip_kernel(keys, sample_tweak, tweak, buckets, table, d, t_lo, t_hi, width, out):
    """:func:`rank_bit_flip_kernel` on each person's keyed words, derived as they are used (no array of words).

    The rank from ``SipHash-2-4_{keys[i]}(sample_tweak ‖ 0 ‖ 0)`` (the person alone: the same sample for every
    bucket), the bits of fields ``2s, 2s + 1`` from ``SipHash-2-4_{keys[i]}(tweak ‖ bucket_i ‖ s)``: the words
    :func:`~ldpnum._kernels.client_keyed.keyed_words_kernel` derives.
    """
    m = np.uint64(table.shape[0])
    for ii in prange(buckets.shape[0]):
        i = np.uint64(ii)
        k0, k1 = keys[i, U0], keys[i, U1]
        v = np.uint64(buckets[ii])
        s0, s1, s2, s3 = siphash24_prefix_inline(k0, k1, sample_tweak, U0)
        sample = table[mulhi64_inline(siphash24_last_inline(s0, s1, s2, s3, U0), m)]
        v0, v1, v2, v3 = siphash24_prefix_inline(k0, k1, tweak, v)
        code = sample
        for s in range((d + 1) // 2):
            code |= pair_bits_inline(sample, v, s, d, width, siphash24_last_inline(v0, v1, v2, v3, np.uint64(s)),
                                     t_lo, t_hi)
        out[ii] = code


@jit(parallel=True)
def flip_bits_kernel(codes, d, width, t_flip, words, out):
    """Output perturbation of dBitFlip reports; the sampled buckets are kept.

    Each of the ``d`` bits (bit ``t·width`` of the code) is flipped with probability ``t_flip / 2**53`` (word ``d·i
    + t``).
    """
    for i in prange(codes.shape[0]):
        flips = np.uint64(0)
        for t in range(d):
            if bernoulli_inline(words[d * i + t], t_flip):
                flips |= np.uint64(1) << np.uint64(t * width)
        out[i] = codes[i] ^ flips
