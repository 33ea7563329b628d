"""Slow, obviously-correct Python-int references for PI-RAPPOR (one record at a time).

The randomizer reference consumes the same three words per record as the Numba kernel and must reproduce its
codes bit for bit; the decoding reference is a plain NumPy evaluation of ``bool(φ(j))`` for every ``j``.
"""

import numpy as np

TWO64 = 2**64


def uniform(word, m):
    """Cell of ``m`` chosen by a 64-bit word: ``floor(w·m / 2**64)`` in Python integers."""
    return (int(word) * m) >> 64


def record(v, w_b, w_f, w_t, p, a, t_b, phi1_bug=False):
    """One report ``(φ0, φ1)`` of category ``v`` (``-1``: unknown), following Algorithm 3 literally.

    ``phi1_bug=True`` plants a value-dependent φ1 (odd categories only ever send odd φ1): a negative control.
    """
    j = v + 1
    b = (int(w_b) >> 11) < t_b
    phi1 = uniform(w_f, p)
    if phi1_bug and j % 2 == 1:
        phi1 |= 1
        phi1 %= p
    t = uniform(w_t, a) if b else a + uniform(w_t, p - a)
    phi0 = (t - j * phi1) % p
    assert ((phi0 + j * phi1) % p < a) == b
    return phi0, phi1


def randomize(values, p, a, t_b, words, phi1_bug=False):
    """uint64 codes ``φ1 << 32 | φ0`` for every value, three words per record."""
    out = np.empty(len(values), dtype=np.uint64)
    for i, v in enumerate(values):
        phi0, phi1 = record(int(v), words[3 * i], words[3 * i + 1], words[3 * i + 2], p, a, t_b, phi1_bug)
        out[i] = (phi1 << 32) | phi0
    return out


def split(codes):
    codes = np.asarray(codes, dtype=np.uint64)
    return (codes & np.uint64(0xFFFFFFFF)).astype(np.int64), (codes >> np.uint64(32)).astype(np.int64)


def support_counts(codes, p, a, k):
    """``I_c = #{reports with (φ0 + (c+1)·φ1) mod p < a}``: direct NumPy evaluation (exact, p < 2**31)."""
    phi0, phi1 = split(codes)
    return np.array([int((((phi0 + (c + 1) * phi1) % p) < a).sum()) for c in range(k)], dtype=np.int64)
