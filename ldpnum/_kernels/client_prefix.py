"""Client kernel of the prefix heavy-hitter protocols, PEM and TreeHist (Numba; design rule R6).

Items are ``uint64`` words already validated to lie in ``[0, 2**item_bits)``, most significant bit first:
the prefix of length ``l`` of item ``w`` is ``w >> (item_bits - l)``.

Record ``i`` reads two words:

* word ``2i`` (independent of the item): the group ``j = ((w >> 16)·G) >> 48`` (the multiply-shift choice
  of :func:`ldpnum._random.assign_columns`) from its top 48 bits, and the hash index ``h = w & (H - 1)``
  from its low 16 bits (``H`` a power of two ``<= 2**16``, so ``h`` is exactly uniform and independent of
  ``j``);
* word ``2i + 1``: GRR over ``[0, g)`` on the hashed prefix
  (:func:`ldpnum._kernels.client_grr.grr_inline`, GRR's integer plan).

The report is the single code ``(j·H + h)·g + y``.

**The hash family.** Function ``h`` of the public family maps a prefix ``p`` to

    hash_h(p) = floor(mix64(a_h · p + b_h mod 2**64) · g / 2**64)

with public constants ``a_h`` (odd) and ``b_h`` and ``mix64`` the bijective finalizer of MurmurHash3
(xor-shift, multiply, xor-shift, multiply, xor-shift). Integer arithmetic only.
"""

import numpy as np

from ._jit import jit, prange
from .client_grr import grr_inline
from .client_items import fmix64_inline, prefix_digest_inline
from .client_numeric import mulhi64_inline

U16 = np.uint64(16)
U33 = np.uint64(33)
U48 = np.uint64(48)
M16 = np.uint64(0xFFFF)
#: Records per chunk of :func:`prefix_wide_kernel` (its prefix words of a chunk stay in the first-level cache).
WIDE_CHUNK = 256


@jit(inline=True)
def prefix_hash_inline(p, a, b, g):
    """``hash(p) = floor(fmix64(a·p + b) · g / 2**64)`` in ``[0, g)``."""
    return np.int64(mulhi64_inline(fmix64_inline(p * a + b), np.uint64(g)))


@jit(parallel=True, plan_arrays=("lengths", "hash_a", "hash_b"))
def prefix_kernel(items, item_bits, lengths, n_hashes, hash_a, hash_b, g, a_keep, shift, words, out):
    """Prefix report (2 words per record): code ``(j·H + h)·g + y``.

    Group and hash index come from word ``2i``, the group's prefix of the item is hashed by function ``h``, GRR over
    ``[0, g)`` from word ``2i + 1``.
    """
    n_groups = np.uint64(lengths.shape[0])
    hmask = np.uint64(n_hashes - 1)
    for i in prange(items.shape[0]):
        w = words[2 * i]
        j = np.int64(((w >> U16) * n_groups) >> U48)
        h = np.int64(w & hmask)
        p = items[i] >> np.uint64(item_bits - lengths[j])
        v = prefix_hash_inline(p, hash_a[h], hash_b[h], g)
        y = grr_inline(v, words[2 * i + 1], g, a_keep, shift)
        out[i] = (j * n_hashes + h) * g + y


@jit(parallel=True, plan_arrays=("lengths", "hash_a", "hash_b"))
def prefix_wide_kernel(items, item_bits, lengths, n_hashes, hash_a, hash_b, g, a_keep, shift, key0, key1, words,
                       out):
    """:func:`prefix_kernel` for items wider than 64 bits (rows of words, most significant first).

    Group ``j``'s prefix of length ``l_j`` is hashed as one word: itself when ``l_j <= 64``, else its digest
    (:func:`ldpnum._kernels.client_items.prefix_digest_inline` under ``(key0, key1)``). Records are taken in chunks
    of :data:`WIDE_CHUNK`: the chunk's prefix words first, then their hash and GRR. One record's digest, hash and GRR
    form a chain of dependent multiplications too long for the processor to overlap the next record's with it; two
    short loops over a chunk run at the throughput of each (measured on one core, 2·10^4 records in cache:
    36 ns per record in one loop, 26 ns in two).
    """
    n_groups = np.uint64(lengths.shape[0])
    hmask = np.uint64(n_hashes - 1)
    n_words = np.uint64(items.shape[1])
    bits = np.uint64(item_bits)
    n = items.shape[0]
    for c in prange((n + WIDE_CHUNK - 1) // WIDE_CHUNK):
        start = c * WIDE_CHUNK
        stop = min(start + WIDE_CHUNK, n)
        prefix = np.empty(WIDE_CHUNK, dtype=np.uint64)
        for i in range(start, stop):
            j = ((words[2 * i] >> U16) * n_groups) >> U48
            prefix[i - start] = prefix_digest_inline(items, i, n_words, bits, bits - np.uint64(lengths[j]), key0,
                                                     key1)
        for i in range(start, stop):
            w = words[2 * i]
            j = np.int64(((w >> U16) * n_groups) >> U48)
            h = np.int64(w & hmask)
            v = prefix_hash_inline(prefix[i - start], hash_a[h], hash_b[h], g)
            y = grr_inline(v, words[2 * i + 1], g, a_keep, shift)
            out[i] = (j * n_hashes + h) * g + y


@jit(parallel=True)
def prefix_hash_probe(prefixes, hash_index, hash_a, hash_b, g, out):
    """Probe: ``out[i] = hash_{hash_index[i]}(prefixes[i])``, the hash :func:`prefix_kernel` uses."""
    for i in prange(prefixes.shape[0]):
        h = hash_index[i]
        out[i] = prefix_hash_inline(prefixes[i], hash_a[h], hash_b[h], g)
