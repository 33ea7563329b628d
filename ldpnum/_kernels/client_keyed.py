"""Client kernel of memoized (permanent) responses: SipHash-2-4 as a keyed pseudo-random function.

A memoized response must be a deterministic function of (person's secret key, mechanism, memoized value)
(design rule R9): the words a randomizer consumes for its permanent layer are

    word[i, j] = SipHash-2-4_{key_i}(tweak ‖ memo_i ‖ j),      j = 0 .. c - 1,

the message being three little-endian 64-bit words (24 bytes): the mechanism's ``tweak`` (a digest of the
permanent layer's spec), the person's memoized value ``memo_i`` (a category, a grid point, a hashed value)
and the word's index. SipHash-2-4 is a pseudo-random function with a 128-bit key (Aumasson and Bernstein),
so for a secret key the words are indistinguishable from uniform, fresh for every (spec, value, index), and
the same on every call, thread count, chunking and machine: a device and a simulation of a million devices
compute the same permanent answer with no table of past answers.

References
----------
J.-P. Aumasson, D. J. Bernstein, "SipHash: a fast short-input PRF", INDOCRYPT 2012.
"""

import numpy as np

from ._jit import jit, prange

_C0 = np.uint64(0x736F6D6570736575)
_C1 = np.uint64(0x646F72616E646F6D)
_C2 = np.uint64(0x6C7967656E657261)
_C3 = np.uint64(0x7465646279746573)
_FF = np.uint64(0xFF)
_LAST = np.uint64(24 << 56)  # SipHash's final block for a 24-byte message: the length in the top byte
_R13, _R51 = np.uint64(13), np.uint64(51)
_R16, _R48 = np.uint64(16), np.uint64(48)
_R17, _R47 = np.uint64(17), np.uint64(47)
_R21, _R43 = np.uint64(21), np.uint64(43)
_R32 = np.uint64(32)
_ZERO, _ONE = np.uint64(0), np.uint64(1)


@jit(inline=True)
def sip_rounds_inline(v0, v1, v2, v3, rounds):
    """``rounds`` SipRounds on the state ``(v0, v1, v2, v3)``."""
    for _ in range(rounds):
        v0 += v1
        v1 = (v1 << _R13) | (v1 >> _R51)
        v1 ^= v0
        v0 = (v0 << _R32) | (v0 >> _R32)
        v2 += v3
        v3 = (v3 << _R16) | (v3 >> _R48)
        v3 ^= v2
        v0 += v3
        v3 = (v3 << _R21) | (v3 >> _R43)
        v3 ^= v0
        v2 += v1
        v1 = (v1 << _R17) | (v1 >> _R47)
        v1 ^= v2
        v2 = (v2 << _R32) | (v2 >> _R32)
    return v0, v1, v2, v3


@jit(inline=True)
def siphash24_prefix_inline(k0, k1, m0, m1):
    """SipHash-2-4's state under the key ``(k0, k1)`` after its first two message words ``m0 ‖ m1``."""
    v0 = k0 ^ _C0
    v1 = k1 ^ _C1
    v2 = k0 ^ _C2
    v3 = k1 ^ _C3
    v3 ^= m0
    v0, v1, v2, v3 = sip_rounds_inline(v0, v1, v2, v3, 2)
    v0 ^= m0
    v3 ^= m1
    v0, v1, v2, v3 = sip_rounds_inline(v0, v1, v2, v3, 2)
    v0 ^= m1
    return v0, v1, v2, v3


@jit(inline=True)
def sip_finish_inline(v0, v1, v2, v3, last, c, d):
    """SipHash-c-d's end: the last block ``last`` with ``c`` rounds, then ``d`` rounds; the 64-bit result.

    ``last`` holds the message's length in its top byte (its last bytes below, none for whole words).
    """
    v3 ^= last
    v0, v1, v2, v3 = sip_rounds_inline(v0, v1, v2, v3, c)
    v0 ^= last
    v2 ^= _FF
    v0, v1, v2, v3 = sip_rounds_inline(v0, v1, v2, v3, d)
    return v0 ^ v1 ^ v2 ^ v3


@jit(inline=True)
def siphash24_last_inline(v0, v1, v2, v3, m2):
    """SipHash-2-4 of the 24-byte message whose first 16 bytes gave the state ``(v0, v1, v2, v3)``, then ``m2``."""
    v3 ^= m2
    v0, v1, v2, v3 = sip_rounds_inline(v0, v1, v2, v3, 2)
    v0 ^= m2
    return sip_finish_inline(v0, v1, v2, v3, _LAST, 2, 4)


@jit(inline=True)
def siphash24_three_inline(k0, k1, m0, m1, m2):
    """SipHash-2-4 under the key ``(k0, k1)`` of the 24-byte message ``m0 ‖ m1 ‖ m2`` (little-endian words)."""
    v0, v1, v2, v3 = siphash24_prefix_inline(k0, k1, m0, m1)
    return siphash24_last_inline(v0, v1, v2, v3, m2)


@jit(parallel=True)
def keyed_words_kernel(keys, tweak, memo, c, out):
    """``out[i*c + j] = SipHash-2-4_{keys[i]}(tweak ‖ memo[i] ‖ j)`` for every person ``i`` and ``j < c``.

    ``keys`` is an ``(n, 2)`` uint64 array (each person's 128-bit key as two little-endian words), ``memo``
    an ``(n,)`` uint64 array. The state after ``tweak ‖ memo[i]`` is computed once per person: the ``c`` words
    share that prefix, so each costs 8 SipRounds instead of 12 (the same words as hashing each message whole). Unsigned indices: Numba wraps signed ones, which keeps the word loop from vectorizing.
    """
    cu = np.uint64(c)
    for ii in prange(memo.shape[0]):
        i = np.uint64(ii)
        v0, v1, v2, v3 = siphash24_prefix_inline(keys[i, _ZERO], keys[i, _ONE], tweak, memo[i])
        base = i * cu
        for j in range(cu):
            out[base + j] = siphash24_last_inline(v0, v1, v2, v3, np.uint64(j))
