"""Kernel of the item encoding's wide items (more than 64 bits): a prefix of each item as one word (Numba).

An item of ``L`` bits (``64 < L <= 256``) is a row of ``W = ceil(L/64)`` uint64 words, most significant first:
the integer ``I = sum_k items[i, k] · 2**(64·(W-1-k))`` in ``[0, 2**L)`` (:func:`ldpnum.heavy.encode_items`).
Its prefix of length ``l`` is ``P = I >> (L - l)``; :func:`prefix_digest_kernel` makes one word of it:

* ``l <= 64``: ``P`` itself (so a prefix protocol's short levels hash exactly what they hash for narrow items);
* ``l > 64``: the *digest* ``SipHash-1-3_K(P_{m-1} ‖ ... ‖ P_0)``, ``m = ceil(l/64)``, of ``P``'s base-2**64
  digits, most significant first, each read as one little-endian 64-bit message word (an ``8m``-byte message),
  under the public key ``K`` (:data:`ldpnum.heavy.items.DIGEST_KEY`). SipHash-1-3 (one SipRound per word, three
  to finish; CPython's hash of str and bytes) rather than the memoized layer's SipHash-2-4: the key is public, so
  only the spread matters, at 8 rounds instead of 14 for a 32-byte item.

The digest is what the hash-based mechanisms (count-mean sketch, RAPPOR's Bloom filter, the long levels of
PEM/TreeHist) hash in place of the item: it is public and deterministic, so the collector computes it for its
candidates with the same kernel. Two distinct prefixes share a digest with probability about ``2**-64`` (SipHash
is a pseudo-random function); such a pair would be counted as one item.
"""

import numpy as np

from ._jit import jit, prange
from .client_keyed import _C0, _C1, _C2, _C3, sip_finish_inline, sip_rounds_inline

U1 = np.uint64(1)
U56 = np.uint64(56)
U6 = np.uint64(6)
U63 = np.uint64(63)
U64 = np.uint64(64)


@jit(inline=True)
def prefix_word_inline(items, i, n_words, shift, m):
    """Digit ``m`` (0 = least significant) of ``items[i] >> shift`` in base ``2**64`` (shift and m unsigned)."""
    t = shift + (m << U6)
    q = t >> U6
    r = t & U63
    if q >= n_words:
        return np.uint64(0)
    k = n_words - U1 - q
    lo = items[i, k] >> r
    if r != 0 and k >= U1:
        lo |= items[i, k - U1] << (U64 - r)
    return lo


@jit(inline=True)
def prefix_digest_inline(items, i, n_words, item_bits, shift, key0, key1):
    """The one word of the prefix ``items[i] >> shift``: itself up to 64 bits, else its SipHash-1-3 digest."""
    m_words = (item_bits - shift + U63) >> U6
    if m_words <= U1:
        return prefix_word_inline(items, i, n_words, shift, np.uint64(0))
    v0 = key0 ^ _C0
    v1 = key1 ^ _C1
    v2 = key0 ^ _C2
    v3 = key1 ^ _C3
    for mm in range(m_words):
        b = prefix_word_inline(items, i, n_words, shift, m_words - U1 - np.uint64(mm))
        v3 ^= b
        v0, v1, v2, v3 = sip_rounds_inline(v0, v1, v2, v3, 1)
        v0 ^= b
    return sip_finish_inline(v0, v1, v2, v3, (m_words << np.uint64(3)) << U56, 1, 3)


@jit(parallel=True)
def prefix_digest_kernel(items, item_bits, shifts, key0, key1, out):
    """``out[i]`` = the prefix ``items[i] >> shifts[i]`` (``item_bits - shifts[i]`` bits) as one word.

    The prefix itself when it has at most 64 bits, else its SipHash-1-3 digest under ``(key0, key1)``.
    """
    n_words = np.uint64(items.shape[1])
    bits = np.uint64(item_bits)
    for i in prange(items.shape[0]):
        out[i] = prefix_digest_inline(items, i, n_words, bits, np.uint64(shifts[i]), key0, key1)
