"""Client kernels of the hashing frequency oracles: local hashing (BLH, OLH) and Hadamard response (Numba).

Values are int64 category codes already validated to lie in ``0..k-1``, or ``-1`` for an unknown value
that must be reported uniformly at random (``unknown="uniform"``).

**The hash family** (local hashing). A seed is a pair ``(a, b)`` of elements of the field GF(2^24)
(24-bit strings: polynomials over GF(2) modulo the irreducible ``x^24 + x^4 + x^3 + x + 1``), and

    h_{a,b}(v) = ((a ⊗ v) ⊕ b) · g >> 24        (v < 2^24 read as a field element)

``⊗`` is the field product (carry-less multiplication, then reduction), ``⊕`` bitwise XOR (the field sum);
the last step maps the field element ``z`` to ``[0, g)`` by range reduction (``floor(z g / 2^24)``).
For ``v ≠ v'`` the map ``(a, b) -> (a⊗v ⊕ b, a⊗v' ⊕ b)`` is a bijection of GF(2^24)², so with ``(a, b)``
uniform the pair ``(z, z')`` is *exactly* uniform over all 2^48 pairs (a pairwise-independent family), and
``(a, b)`` is exactly uniform because it is 48 bits of a uniformly random word. Everything is integer
arithmetic; no string hashing.

Record ``i`` of :func:`local_hash_kernel` reads two words: ``2i`` (the seed: bits 63..16 of the word
*are* the seed) and ``2i+1`` (GRR over the hashed values, :func:`ldpnum._kernels.client_grr.grr_inline`). The seed word is never combined with the value, so the
seed does not depend on the value (the same words give the same seed whatever the value).

Hadamard response: record ``i`` of :func:`hadamard_kernel` reads two words, ``2i`` (keep) and ``2i+1``
(a uniform index in ``[0, K)``, then flipped on one bit to land in the chosen half).
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import bernoulli_inline
from .client_grr import grr_inline

U1 = np.uint64(1)
U16 = np.uint64(16)
U24 = np.uint64(24)
U40 = np.uint64(40)
U64 = np.uint64(64)
M24 = np.uint64((1 << 24) - 1)
#: x^24 = x^4 + x^3 + x + 1 in GF(2^24): the low terms of the reduction polynomial.
POLY24 = 0x1B
#: Bits 63..16 of a report: the seed (a in 63..40, b in 39..16); bits 15..0 hold the report y.
SEED_MASK = np.uint64(0xFFFF_FFFF_FFFF_0000)


@jit(inline=True)
def gf24_reduce_inline(p):
    """Reduce a carry-less product of degree < 47 modulo ``x^24 + x^4 + x^3 + x + 1`` (two folding rounds)."""
    hi = p >> U24
    p = (p & M24) ^ hi ^ (hi << np.uint64(1)) ^ (hi << np.uint64(3)) ^ (hi << np.uint64(4))
    hi = p >> U24
    return (p & M24) ^ hi ^ (hi << np.uint64(1)) ^ (hi << np.uint64(3)) ^ (hi << np.uint64(4))


@jit(inline=True)
def gf24_mul_inline(a, v):
    """Field product ``a ⊗ v`` in GF(2^24) for ``a, v < 2^24``.

    Branch-free shift-and-XOR over all 24 bits of ``v`` (a fixed count, so the work never depends on the
    value; the constant trip count also lets the compiler unroll it: measured 1.6x faster than looping
    over only ``bit_length(k - 1)`` bits).
    """
    p = np.uint64(0)
    for i in range(24):
        s = np.uint64(i)
        p ^= (a << s) & (np.uint64(0) - ((v >> s) & U1))
    return gf24_reduce_inline(p)


@jit(inline=True)
def local_hash_inline(seed_word, v, g):
    """``h_{a,b}(v)`` in ``[0, g)`` with ``a = seed_word[63:40]``, ``b = seed_word[39:16]``."""
    a = seed_word >> U40
    b = (seed_word >> U16) & M24
    z = gf24_mul_inline(a, np.uint64(v)) ^ b
    return np.int64((z * np.uint64(g)) >> U24)


@jit(parallel=True)
def local_hash_kernel(values, g, a_keep, shift, words, out):
    """Local hashing (2 words per record): hash with word ``2i``'s seed, then GRR over ``[0, g)`` with word ``2i + 1``.

    The value is hashed with the seed of word ``2i``, then randomized by GRR on the hashed value; the report is ``seed
    bits | y`` (uint64).

    The hash is computed for every record (for an unknown value, of 0, then discarded), so every record
    does the same work.
    """
    for i in prange(values.shape[0]):
        w = words[2 * i]
        v = values[i]
        h = local_hash_inline(w, v if v >= 0 else 0, g)
        y = grr_inline(h if v >= 0 else -1, words[2 * i + 1], g, a_keep, shift)
        out[i] = (w & SEED_MASK) | np.uint64(y)


@jit(parallel=True)
def local_hash_probe(seed_words, values, g, out):
    """Probe: ``out[i] = h(seed_words[i], values[i])``, the hash :func:`local_hash_kernel` uses."""
    for i in prange(values.shape[0]):
        out[i] = local_hash_inline(seed_words[i], values[i], g)


@jit(inline=True)
def parity_inline(x):
    """Parity of the number of set bits of ``x < 2^32`` (0 or 1)."""
    x ^= x >> np.uint64(16)
    x ^= x >> np.uint64(8)
    x ^= x >> np.uint64(4)
    x ^= x >> np.uint64(2)
    x ^= x >> np.uint64(1)
    return x & U1


@jit(inline=True)
def hadamard_inline(v, w_keep, w_index, log2_k, t_keep):
    """Hadamard response for row ``r = v + 1`` of the K×K Sylvester matrix (``K = 2**log2_k``).

    ``C_v = {y : popcount(r & y) even}`` (the +1 entries of row ``r``; ``|C_v| = K/2``). With probability
    ``t_keep / 2**53`` a uniform element of ``C_v``, else a uniform element of its complement: a uniform
    index ``u`` in ``[0, K)`` whose parity is fixed, if needed, by flipping the lowest set bit of ``r``
    (a bijection between the two halves, so the result is exactly uniform in the chosen half). An unknown
    value (``v < 0``, ``r = 0``) keeps ``u``: uniform over ``[0, K)``.
    """
    u = w_index >> (U64 - np.uint64(log2_k))
    r = np.uint64(v + 1) if v >= 0 else np.uint64(0)
    target = np.uint64(0) if bernoulli_inline(w_keep, t_keep) else U1
    low = r & (np.uint64(0) - r)
    return u ^ (low * (parity_inline(r & u) ^ target))


@jit(parallel=True)
def hadamard_kernel(values, log2_k, t_keep, words, out):
    """Hadamard response (2 words per record): one index in ``[0, K)`` per record."""
    for i in prange(values.shape[0]):
        out[i] = hadamard_inline(values[i], words[2 * i], words[2 * i + 1], log2_k, t_keep)
