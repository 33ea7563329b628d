"""Kernel of the item encoding's wide items (more than 64 bits): a prefix of each item as one word (Numba).

An item of ``L`` bits (``64 < L <= 256``) is a row of ``W = ceil(L/64)`` uint64 words, most significant first:
the integer ``I = sum_k items[i, k] · 2**(64·(W-1-k))`` in ``[0, 2**L)`` (:func:`ldpnum.heavy.encode_items`).
Its prefix of length ``l`` is ``P = I >> (L - l)``; :func:`prefix_digest_kernel` makes one word of it:

* ``l <= 64``: ``P`` itself (so a prefix protocol's short levels hash exactly what they hash for narrow items);
* ``l > 64``: the *digest* of ``P``'s four base-2**64 digits ``P_3, P_2, P_1, P_0`` (most significant first; the
  digits above ``m = ceil(l/64)`` are zero) under the public key ``K = (K_0, K_1)``
  (:data:`ldpnum.heavy.items.DIGEST_KEY`)::

      h = K_0 ^ (m · C_3)
      for each digit d:  h = rotl(h ^ (d · C_2), 31) · C_1          (mod 2**64)
      digest = fmix64(h ^ K_1)

  with xxHash64's primes ``C_1, C_2, C_3`` and MurmurHash3's 64-bit finalizer ``fmix64`` (the avalanche the
  mechanisms' own hashes rely on). Each step is a bijection of the digit for a given ``h``, so two prefixes that
  differ in their last digit only never collide; the key is public, so only the spread matters and a keyed
  pseudo-random function (SipHash) would add nothing but cost. Always four digits, read without branches
  (:func:`prefix_digit_inline`): a prefix protocol's records have prefix lengths that vary from record to record,
  and a loop or a branch on that length is mispredicted at random (77 ns per record with SipHash-1-3 over ``m``
  words against 15.5 ns here, measured on one core over random lengths).

The digest is what the hash-based mechanisms (count-mean sketch, RAPPOR's Bloom filter, the long levels of
PEM/TreeHist) hash in place of the item: it is public and deterministic, so the collector computes it for its
candidates with the same kernel. Two distinct prefixes share a digest with probability about ``2**-64``; such a
pair would be counted as one item.
"""

import numpy as np

from ._jit import jit, prange

U1 = np.uint64(1)
U31 = np.uint64(31)
U33 = np.uint64(33)
U6 = np.uint64(6)
U63 = np.uint64(63)
#: xxHash64's primes (C_1, C_2, C_3 of the module docstring) and MurmurHash3's fmix64 multipliers.
C1 = np.uint64(0x9E3779B185EBCA87)
C2 = np.uint64(0xC2B2AE3D27D4EB4F)
C3 = np.uint64(0x165667B19E3779F9)
F1 = np.uint64(0xFF51AFD7ED558CCD)
F2 = np.uint64(0xC4CEB9FE1A85EC53)


@jit(inline=True)
def prefix_digit_inline(items, i, n_words, q, r, m):
    """Digit ``m`` (0 = least significant, int64) of ``items[i] >> (64q + r)`` in base ``2**64``, without a branch.

    ``q``, ``r`` (``r < 64``) unsigned; a digit above the item's words is 0. The high part ``x << (64 - r)`` is
    written ``(x << 1) << (63 - r)``, which is 0 at ``r = 0`` where a shift by 64 is undefined.
    """
    k = np.int64(n_words) - np.int64(1) - np.int64(q) - m
    lo = items[i, max(k, np.int64(0))] >> r
    hi = (items[i, max(k - np.int64(1), np.int64(0))] << U1) << (U63 - r)
    digit = lo | (hi if k >= np.int64(1) else np.uint64(0))
    return digit if k >= np.int64(0) else np.uint64(0)


@jit(inline=True)
def prefix_digest_inline(items, i, n_words, item_bits, shift, key0, key1):
    """The one word of the prefix ``items[i] >> shift``: itself up to 64 bits, else its digest (module docstring)."""
    m_words = (item_bits - shift + U63) >> U6
    q = shift >> U6
    r = shift & U63
    h = key0 ^ (m_words * C3)
    for mm in range(4):
        h ^= prefix_digit_inline(items, i, n_words, q, r, np.int64(3 - mm)) * C2
        h = ((h << U31) | (h >> U33)) * C1
    h ^= key1
    h ^= h >> U33
    h *= F1
    h ^= h >> U33
    h *= F2
    h ^= h >> U33
    return h if m_words > U1 else prefix_digit_inline(items, i, n_words, q, r, np.int64(0))


@jit(parallel=True)
def prefix_digest_kernel(items, item_bits, shifts, key0, key1, out):
    """``out[i]`` = the prefix ``items[i] >> shifts[i]`` (``item_bits - shifts[i]`` bits) as one word.

    The prefix itself when it has at most 64 bits, else its digest under ``(key0, key1)``.
    """
    n_words = np.uint64(items.shape[1])
    bits = np.uint64(item_bits)
    for i in prange(items.shape[0]):
        out[i] = prefix_digest_inline(items, i, n_words, bits, np.uint64(shifts[i]), key0, key1)
