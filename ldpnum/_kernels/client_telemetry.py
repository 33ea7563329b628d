"""Client kernels of dBitFlip (Numba, DESIGN.md R6): bucketize, sample ``d`` buckets, one bit per sampled bucket.

A report is one ``uint64`` code: the ``d`` sampled buckets in increasing order, each with its bit, field ``t`` at
bits ``[t·w, (t + 1)·w)`` holding ``bucket << 1 | bit`` (``w = bit_length(buckets - 1) + 1``). The sampler is
Floyd's algorithm with the kernels' 48-bit picks (the sampler of subset selection and sampled dimensions), one
word per pick, so its exact distribution is :func:`ldpnum.plans.floyd_distribution`; the bits are the
two-output randomizer's integer events (``client_numeric.bernoulli_inline``). Only the words decide the sampled
buckets, never the value, and every record does the same work whatever its value.
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import bernoulli_inline, uniform_inline, unit_inline

#: Records per task of the sampler's parallel loop (each task allocates its membership bytes once).
CHUNK = 128


@jit(parallel=True)
def bucket_of(x, low, inv_range, b, out):
    """Bucket of each value: ``min(floor(u·b), b - 1)`` with ``u`` the value mapped to [0, 1] (clamped)."""
    for i in prange(x.shape[0]):
        j = np.int64(unit_inline(x[i], low, inv_range) * b)
        out[i] = j if j < b else b - 1


@jit(parallel=True)
def sample_buckets(words, c, offset, b, d, out):
    """Each record's ``d`` distinct buckets of ``b``, sorted, into ``out[i, 0:d]``.

    Floyd's pick at ``j = b - d + t`` draws ``r`` uniform in ``0..j`` from word ``c·i + offset + t`` and adds ``r``,
    or ``j`` if ``r`` is in already. Membership is one byte per bucket (scratch of each task, cleared after each
    record); the picks are inserted in order as they come (the order depends on the words alone, never on the
    value).
    """
    n = out.shape[0]
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        flags = np.zeros(b, np.uint8)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            row = out[i]
            for t in range(d):
                j = b - d + t
                r = uniform_inline(words[c * i + offset + t], j + 1)
                pick = j if flags[np.uint64(r)] else r
                flags[np.uint64(pick)] = 1
                s = t  # insertion into the sorted prefix (d is small; NumPy's sort of a short row costs 10x)
                while s > 0 and row[s - 1] > pick:
                    row[s] = row[s - 1]
                    s -= 1
                row[s] = pick
            for t in range(d):
                flags[np.uint64(row[t])] = 0


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
