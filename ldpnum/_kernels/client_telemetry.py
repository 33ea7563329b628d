"""Client kernels of dBitFlip (Numba, design rule R6): bucketize, sample ``d`` buckets, one bit per sampled bucket.

A report is one ``uint64`` code: the ``d`` sampled buckets in increasing order, each with its bit, field ``t`` at
bits ``[t·w, (t + 1)·w)`` holding ``bucket << 1 | bit`` (``w = bit_length(buckets - 1) + 1``). The sampler is
Floyd's algorithm with the kernels' 48-bit picks (the sampler of subset selection and sampled dimensions), one
word per pick, so its exact distribution is :func:`ldpnum.plans.floyd_distribution`; the bits are the
two-output randomizer's integer events (``client_numeric.bernoulli_inline``). Only the words decide the sampled
buckets, never the value, and every record does the same work whatever its value.
"""

import numpy as np

from ._jit import jit, prange
from .client_keyed import siphash24_last_inline, siphash24_prefix_inline
from .client_numeric import bernoulli_inline, uniform_inline, unit_inline

U0 = np.uint64(0)
U1 = np.uint64(1)


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


@jit(parallel=True)
def bit_flip_kernel(buckets, samples, t_lo, t_hi, width, words, c, offset, out):
    """The report code of each record, one field per sampled bucket.

    For its sampled bucket ``j_t`` (``samples[i, t]``, sorted) the bit is 1 with probability ``t_hi / 2**53`` if
    ``j_t`` is the record's bucket, else ``t_lo / 2**53`` (word ``c·i + offset + t``); field ``t`` of the code is
    ``j_t << 1 | bit`` at bit ``t·width``.
    """
    d = samples.shape[1]
    for i in prange(buckets.shape[0]):
        v = buckets[i]
        code = np.uint64(0)
        for t in range(d):
            j = samples[i, t]
            threshold = t_hi if j == v else t_lo
            bit = 1 if bernoulli_inline(words[c * i + offset + t], threshold) else 0
            code |= np.uint64(j * 2 + bit) << np.uint64(t * width)
        out[i] = code


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
