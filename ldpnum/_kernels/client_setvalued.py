"""Client kernel of padding-and-sampling (SVIM, SVSM's frequency phases; Numba, design rule R6).

A person's local set ``L ⊆ {0..k-1}`` arrives as a row of ``W`` uint64 bitmask words (bit ``c % 64`` of
word ``c // 64`` set when ``c ∈ L``), already validated. Record ``i`` reads two words:

* word ``2i``: the slot. With ``m = |L|`` and ``u`` the top 48 bits of the word, the slot is
  ``s = (u·max(m, ℓ)) >> 48`` (the multiply-shift choice of :func:`ldpnum._random.assign_columns`). If
  ``s < m`` the sampled value is the ``s``-th smallest element of ``L``; otherwise it is the dummy
  ``k + (s - m)`` (the padding: ``ℓ - m`` distinct dummies among ``k..k+ℓ-1``);
* word ``2i + 1``: GRR over the ``K = k + ℓ`` values (:func:`ldpnum._kernels.client_grr.grr_inline`).

The report is GRR's code in ``[0, K)``. Every record runs the same loops (all ``W`` words, all 64 bits of
each), whatever its set.
"""

import numpy as np

from ._jit import jit, prange
from .client_grr import grr_inline
from .client_hashing import SEED_MASK, local_hash_inline

U1 = np.uint64(1)
U2 = np.uint64(2)
U4 = np.uint64(4)
U16 = np.uint64(16)
U48 = np.uint64(48)
U56 = np.uint64(56)
M1 = np.uint64(0x5555555555555555)
M2 = np.uint64(0x3333333333333333)
M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
H01 = np.uint64(0x0101010101010101)


@jit(inline=True)
def popcount64_inline(x):
    """Number of set bits of a uint64 (SWAR)."""
    x = x - ((x >> U1) & M1)
    x = (x & M2) + ((x >> U2) & M2)
    x = (x + (x >> U4)) & M4
    return np.int64((x * H01) >> U56)


@jit(inline=True)
def sample_slot_inline(row, k, ell, word):
    """The padded-and-sampled value of one local set (bitmask ``row``) from one word (see module notes)."""
    n_words = row.shape[0]
    m = np.int64(0)
    for w in range(n_words):
        m += popcount64_inline(row[w])
    size = m if m > ell else np.int64(ell)
    s = np.int64(((word >> U16) * np.uint64(size)) >> U48)
    found = np.int64(k + (s - m))  # the dummy, unless s < m
    rank = s
    for w in range(n_words):
        x = row[w]
        for b in range(64):
            bit = np.int64((x >> np.uint64(b)) & U1)
            hit = bit == 1 and rank == 0 and s < m
            found = np.int64(w * 64 + b) if hit else found
            rank -= bit
    return found


def _bit_work(masks, *rest):
    """A call's work in elements (see ``ldpnum._kernels._jit.jit``).

    :func:`sample_slot_inline` visits every bit of a set, four bits costing about one simple record (measured
    interpreted: ~230 µs per 64-bit set).
    """
    return masks.size * 16


@jit(parallel=True, work=_bit_work)
def padding_sampling_kernel(masks, k, ell, a_keep, shift, words, out):
    """Padding-and-sampling then GRR over ``k + ell`` values, 2 words per record."""
    n_values = k + ell
    for i in prange(masks.shape[0]):
        v = sample_slot_inline(masks[i], k, ell, words[2 * i])
        out[i] = grr_inline(v, words[2 * i + 1], n_values, a_keep, shift)


@jit(parallel=True, work=_bit_work)
def sample_slot_probe(masks, k, ell, words, out):
    """Probe: the sampled value (before GRR) of every record, word ``i`` of ``words`` for record ``i``."""
    for i in prange(masks.shape[0]):
        out[i] = sample_slot_inline(masks[i], k, ell, words[i])


@jit(parallel=True, work=_bit_work)
def padding_sampling_olh_kernel(masks, k, ell, g, a_keep, shift, words, out):
    """Padding-and-sampling then local hashing (OLH's report), 3 words per record.

    The hash seed (word ``3i``, never combined with the set), the slot (``3i + 1``), GRR over ``[0, g)`` on the hashed
    value (``3i + 2``); the report is ``seed bits | y`` as :func:`ldpnum._kernels.client_hashing.local_hash_kernel`'s.
    """
    for i in prange(masks.shape[0]):
        w = words[3 * i]
        v = sample_slot_inline(masks[i], k, ell, words[3 * i + 1])
        h = local_hash_inline(w, v, g)
        y = grr_inline(h, words[3 * i + 2], g, a_keep, shift)
        out[i] = (w & SEED_MASK) | np.uint64(y)
