"""Client kernel of SQKR (Numba; design rule R6).

Kashin's representation of each vector over a randomized Hadamard frame, stochastic quantization of ``k`` sampled
coefficients to one bit each, and ``2**k``-ary randomized response of the ``k`` bits.

**The frame.** ``D = 2**L`` coefficients, ``H`` the ``D × D`` Hadamard matrix (Sylvester order, entries
``±1``); the public map puts coordinate ``m`` of ``x`` at row ``pos[m]`` with sign ``sign[m]``, so the frame
coefficients are ``U^T x = H z / √D`` with ``z[pos[m]] = sign[m] x[m]`` (zero elsewhere) and the synthesis is
``(U a)[m] = sign[m] (H a)[pos[m]] / √D``. ``U U^T = I_d``: a tight frame (Parseval).

**Kashin's representation** (Lyubarskii and Vershynin's truncation iterations). ``x_0 = x``, ``a = 0``; each
of ``iterations`` rounds truncates the frame coefficients ``b = U^T x_t`` at ``± T ‖x_t‖ / √D`` and also keeps
every running coefficient inside the level, ``a_j + b̂_j ∈ [-c, c]``, then ``a += b̂``,
``x_{t+1} = x_t - U b̂``. The residual's own coefficients ``U^T x_r`` are then added untruncated, so
``U a = x`` exactly (up to rounding); a coefficient that ends beyond the level ``c`` is clipped to it and the
record flagged (``clipped[i] = 1`` when some coefficient exceeded ``c`` by more than ``1e-9 c``). Every record
runs all rounds (the same work whatever its value; a zero residual truncates at 0).

**Sampling, quantization, randomized response.** Words per record: ``k + 2``. The report's seed is the top
``64 - k`` bits of word 0; the ``k`` coordinates are ``j_t = splitmix64(seed + t·0x9E3779B97F4A7C15) >> (64 - L)``
(``t = 0..k-1``: the first ``k`` outputs of a SplitMix64 stream started at the seed; with replacement).
Bit ``t`` is 1 (the value ``+c``) when ``(word_{1+t} >> 11) < floor((1 + a_{j_t}/c)/2 · 2**53)``, else 0
(``-c``): unbiased stochastic quantization, each draw with its own word. The ``k`` bits, as the integer
``B = Σ bit_t 2**t``, go through generalized randomized response over ``2**k`` values with word ``k + 1``
(:func:`ldpnum._kernels.client_grr.grr_inline`, the GRR plan). The report is ``seed << k | y`` (uint64).
"""

import math

import numpy as np

from ._jit import jit, prange
from .client_grr import grr_inline
from .client_unit import GOLDEN, U11, splitmix_inline

U64 = np.uint64(64)

#: Records per task (each task allocates its scratch vectors once).
CHUNK = 16


@jit(inline=True)
def fwht_inline(z):
    """In-place unnormalized Walsh–Hadamard transform of ``z`` (length a power of two): ``z <- H z``.

    The radix-2 butterflies ``(u, v) -> (u + v, u - v)`` at spans ``h = 1, 2, 4, ...``, in order: the first
    three spans on groups of 8 contiguous values in registers (radix 8, when ``n >= 8``), then two spans per
    pass (radix 4: the four values ``z[j + t·h]`` of a group go through the span-``h`` and then the span-``2h``
    butterflies in registers), plus one radix-2 pass when the number of spans left is odd. Every output is the
    same sequence of floating-point operations as the stage-by-stage transform, so the results are the same
    to the bit, with half the passes over memory. For ``h >= 8`` a group's four quarters are views indexed
    from 0 (no negative-index wraparound to rule out, distinct pointers), which the compiler vectorizes.
    """
    n = z.shape[0]
    h = 1
    if n >= 8:  # the spans 1, 2 and 4 on each group of 8 contiguous values, in registers (radix 8)
        for s in range(0, n, 8):
            x0 = z[s]
            x1 = z[s + 1]
            x2 = z[s + 2]
            x3 = z[s + 3]
            x4 = z[s + 4]
            x5 = z[s + 5]
            x6 = z[s + 6]
            x7 = z[s + 7]
            y0 = x0 + x1
            y1 = x0 - x1
            y2 = x2 + x3
            y3 = x2 - x3
            y4 = x4 + x5
            y5 = x4 - x5
            y6 = x6 + x7
            y7 = x6 - x7
            x0 = y0 + y2
            x2 = y0 - y2
            x1 = y1 + y3
            x3 = y1 - y3
            x4 = y4 + y6
            x6 = y4 - y6
            x5 = y5 + y7
            x7 = y5 - y7
            z[s] = x0 + x4
            z[s + 4] = x0 - x4
            z[s + 1] = x1 + x5
            z[s + 5] = x1 - x5
            z[s + 2] = x2 + x6
            z[s + 6] = x2 - x6
            z[s + 3] = x3 + x7
            z[s + 7] = x3 - x7
        h = 8
    while 4 * h <= n:
        for s in range(0, n, 4 * h):
            if h >= 8:
                za = z[s:s + h]
                zb = z[s + h:s + 2 * h]
                zc = z[s + 2 * h:s + 3 * h]
                ze = z[s + 3 * h:s + 4 * h]
                for t in range(h):
                    a = za[t]
                    b = zb[t]
                    c = zc[t]
                    e = ze[t]
                    a1 = a + b
                    b1 = a - b
                    c1 = c + e
                    e1 = c - e
                    za[t] = a1 + c1
                    zc[t] = a1 - c1
                    zb[t] = b1 + e1
                    ze[t] = b1 - e1
            else:
                for j in range(s, s + h):
                    a = z[j]
                    b = z[j + h]
                    c = z[j + 2 * h]
                    e = z[j + 3 * h]
                    a1 = a + b
                    b1 = a - b
                    c1 = c + e
                    e1 = c - e
                    z[j] = a1 + c1
                    z[j + 2 * h] = a1 - c1
                    z[j + h] = b1 + e1
                    z[j + 3 * h] = b1 - e1
        h *= 4
    if 2 * h <= n:
        za = z[:h]
        zb = z[h:2 * h]
        for t in range(h):
            u = za[t]
            v = zb[t]
            za[t] = u + v
            zb[t] = u - v


@jit(inline=True)
def analysis_inline(xt, pos, sign, z, r):
    """``z <- U^T xt`` (the frame coefficients of ``xt``); ``r = 1/√D``."""
    for j in range(z.shape[0]):
        z[j] = 0.0
    for m in range(xt.shape[0]):
        z[pos[m]] = sign[m] * xt[m]
    fwht_inline(z)
    for j in range(z.shape[0]):
        z[j] *= r


@jit(inline=True)
def kashin_inline(x, i, scale, pos, sign, level, truncation, iterations, xt, z, a):
    """Kashin's representation of ``scale · x[i]`` into ``a`` (length ``D``), every ``|a_j| <= level``.

    Returns 1 when a coefficient had to be clipped (by more than ``1e-9 level``), else 0.
    """
    d = xt.shape[0]
    D = z.shape[0]
    r = 1.0 / math.sqrt(D)
    for m in range(d):
        xt[m] = x[i, m] * scale
    for j in range(D):
        a[j] = 0.0
    for _ in range(iterations):
        nrm2 = 0.0
        for m in range(d):
            nrm2 += xt[m] * xt[m]
        cut = truncation * math.sqrt(nrm2) * r
        analysis_inline(xt, pos, sign, z, r)
        for j in range(D):
            lo = max(-cut, -level - a[j])
            hi = min(cut, level - a[j])
            b = min(max(z[j], lo), hi)
            a[j] += b
            z[j] = b
        fwht_inline(z)
        for m in range(d):
            xt[m] -= sign[m] * z[pos[m]] * r
    analysis_inline(xt, pos, sign, z, r)
    flag = 0
    tol = level * 1e-9
    for j in range(D):
        v = a[j] + z[j]
        if v > level:
            if v > level + tol:
                flag = 1
            v = level
        elif v < -level:
            if v < -level - tol:
                flag = 1
            v = -level
        a[j] = v
    return flag


@jit(inline=True)
def coordinate_inline(seed, t, shift):
    """Coordinate ``t`` of the report with ``seed``: SplitMix64 output ``t`` from state ``seed``, top bits."""
    return np.int64(splitmix_inline(seed + np.uint64(t) * GOLDEN) >> np.uint64(shift))


def _frame_work(rows, iterations, frame_bits):
    """Work of Kashin's representation of ``rows`` rows, in elements (see ``ldpnum._kernels._jit.jit``).

    Each row runs ``iterations + 1`` transforms of the ``D = 2**frame_bits`` frame coefficients.
    """
    return rows * (int(iterations) + 1) * (1 << int(frame_bits))


@jit(parallel=True, plan_arrays=("pos", "sign"),
     work=lambda x, scale, pos, sign, level, truncation, iterations, k, frame_bits, *rest:
     _frame_work(x.shape[0], iterations, frame_bits))
def sqkr_kernel(x, scale, pos, sign, level, truncation, iterations, k, frame_bits, a_keep, grr_shift, words, out,
                clipped):
    """SQKR, ``k + 2`` words per record (seed, ``k`` quantization words, the randomized-response word)."""
    n, d = x.shape
    D = 1 << frame_bits
    c = k + 2
    kk = np.uint64(k)
    coord_shift = 64 - frame_bits
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        xt = np.empty(d)
        z = np.empty(D)
        a = np.empty(D)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            clipped[i] = kashin_inline(x, i, scale[i], pos, sign, level, truncation, iterations, xt, z, a)
            base = c * i
            seed = words[base] >> kk
            bits = np.int64(0)
            for t in range(k):
                j = coordinate_inline(seed, t, coord_shift)
                thr = np.int64(math.floor((1.0 + a[j] / level) * 0.5 * 9007199254740992.0))
                if np.int64(words[base + 1 + t] >> U11) < thr:
                    bits |= np.int64(1) << np.int64(t)
            y = grr_inline(bits, words[base + 1 + k], 1 << k, a_keep, grr_shift)
            out[i] = (seed << kk) | np.uint64(y)


@jit(parallel=True, work=lambda x, scale, pos, sign, level, truncation, iterations, frame_bits, *rest:
     _frame_work(x.shape[0], iterations, frame_bits))
def kashin_probe(x, scale, pos, sign, level, truncation, iterations, frame_bits, out, clipped):
    """Probe: ``out[i]`` = Kashin's representation of row ``i`` (the coefficients the kernel quantizes)."""
    n, d = x.shape
    D = 1 << frame_bits
    for i in prange(n):
        xt = np.empty(d)
        z = np.empty(D)
        clipped[i] = kashin_inline(x, i, scale[i], pos, sign, level, truncation, iterations, xt, z, out[i])


@jit(parallel=True, plan_arrays=("pos", "sign"),
     work=lambda x, scale, pos, sign, level, truncation, iterations, frame_bits, clipped:
     _frame_work(x.shape[0], iterations, frame_bits))
def kashin_clip_flags(x, scale, pos, sign, level, truncation, iterations, frame_bits, clipped):
    """``clipped[i] = 1`` when Kashin's representation of row ``i`` needs a coefficient clipped to the level.

    This is the flag :func:`sqkr_kernel` computes, without drawing anything: the client's check before randomizing.
    Scratch of ``O(D)`` per task, whatever the number of rows.
    """
    n, d = x.shape
    D = 1 << frame_bits
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        xt = np.empty(d)
        z = np.empty(D)
        a = np.empty(D)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            clipped[i] = kashin_inline(x, i, scale[i], pos, sign, level, truncation, iterations, xt, z, a)
