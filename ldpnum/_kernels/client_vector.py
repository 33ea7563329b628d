"""Client kernels of the vector mechanisms (Numba; design rule R6).

Sampled dimensions and Duchi et al.'s multidimensional mechanism.

Values are C-contiguous float64 arrays of shape ``(n, d)``, validated before the kernel runs; each coordinate
``j`` is mapped to ``[0, 1]`` by ``(x - lows[j]) * inv_ranges[j]`` and clamped. Record ``i`` reads words
``[c*i, c*i + c)`` only, ``c`` the mechanism's words per record.
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import U11, bernoulli_inline, uniform_inline, unit_inline

U1 = np.uint64(1)
U63 = np.uint64(63)
TWO53 = float(2**53)


#: Records per task of the coordinate sampler's parallel loop (each task allocates its membership bytes once).
CHUNK = 128


@jit(parallel=True, plan_arrays=("lows", "inv_ranges"))
def sample_coordinates(x, lows, inv_ranges, k, c, words, coords, units):
    """Each record's ``k`` distinct coordinates of ``d``, sorted, and their values mapped to ``[0, 1]``.

    Floyd's algorithm, the sampler of subset selection (``client_subset``), on words ``c*i .. c*i + k - 1``:
    the pick at ``j = d - k + t`` draws ``r`` uniform in ``0..j`` (48-bit multiply-shift) and adds ``r``, or
    ``j`` if ``r`` is in already. Membership is one byte per coordinate (scratch of each task, cleared after
    each record by the coordinates it set), so a record costs O(k log k) whatever ``d``. Only the words
    decide, never the values, and the memory touched depends on the draws alone. ``coords[i]`` is written
    sorted (the canonical wire order) and ``units[k*i + t]`` is the unit value of coordinate ``coords[i, t]``.
    """
    n, d = x.shape
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        flags = np.zeros(d, np.uint8)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            row = coords[i]
            for t in range(k):
                j = d - k + t
                r = uniform_inline(words[c * i + t], j + 1)
                pick = j if flags[r] else r
                row[t] = pick
                flags[pick] = 1
            row.sort()
            for t in range(k):
                j = row[t]
                flags[j] = 0
                units[k * i + t] = unit_inline(x[i, j], lows[j], inv_ranges[j])


@jit(parallel=True)
def combine_codes(coords, inner, n_inner, out):
    """Report code ``coords[i, t] * n_inner + inner[k*i + t]`` of each (coordinate, inner code) pair."""
    k = coords.shape[1]
    for i in prange(coords.shape[0]):
        for t in range(k):
            out[i, t] = coords[i, t] * n_inner + inner[k * i + t]


@jit(inline=True)
def sign_threshold_inline(u):
    """Threshold over 2**53 of ``v = +1`` for a unit value ``u``: ``floor(u * 2**53)`` (2**53 at ``u = 1``)."""
    return np.int64(u * TWO53)


@jit(parallel=True, plan_arrays=("lows", "inv_ranges"))
def duchi_multivariate_kernel(x, lows, inv_ranges, t_lo, t_hi, n_bit_words, words, out):
    """Duchi et al.'s multidimensional randomizer, ``d + n_bit_words + 1`` words per record.

    1. ``v_j = +1`` with probability ``floor(u_j 2**53)/2**53`` (word ``j``), ``u_j`` the unit value;
    2. ``a`` uniform on ``{±1}^d`` from the bits of the next ``n_bit_words`` words (bit ``j`` of the
       sequence is ``a_j = +1``);
    3. if ``Σ a ≠ 0``, ``a`` is turned to the side ``Σ a > 0`` (negated if needed), then negated again unless
       the last word's coin (threshold ``t_hi``) says keep: ``a`` lands on the positive side with probability
       ``t_hi / 2**53``. A tie ``Σ a = 0`` (even ``d``) is kept as drawn;
    4. the report is ``z = v ⊙ a``, bit ``j`` set when ``z_j = +1``, packed least significant bit first.

    ``t_lo`` is unused by the sampler (it is ``2**53 - t_hi``); it is passed so the probe and the kernel
    read one plan.
    """
    n, d = x.shape
    c = d + n_bit_words + 1
    n_bytes = out.shape[1]
    for i in prange(n):
        base = c * i
        ones = 0
        for j in range(d):
            ones += np.int64((words[base + d + (j >> 6)] >> np.uint64(j & 63)) & U1)
        s = 2 * ones - d
        keep = np.int64(words[base + d + n_bit_words] >> U11) < t_hi
        flip = False
        if s < 0:
            flip = keep
        elif s > 0:
            flip = not keep
        for b in range(n_bytes):
            out[i, b] = 0
        for j in range(d):
            u = unit_inline(x[i, j], lows[j], inv_ranges[j])
            v = bernoulli_inline(words[base + j], sign_threshold_inline(u))
            a = ((words[base + d + (j >> 6)] >> np.uint64(j & 63)) & U1) == U1
            if flip:
                a = not a
            if v == a:
                out[i, j >> 3] |= np.uint8(1 << (j & 7))


@jit(parallel=True)
def sign_thresholds(x, lows, inv_ranges, out):
    """Probe: the threshold of ``v_j = +1`` that ``duchi_multivariate_kernel`` uses for every value."""
    n, d = x.shape
    for i in prange(n):
        for j in range(d):
            out[i, j] = sign_threshold_inline(unit_inline(x[i, j], lows[j], inv_ranges[j]))
