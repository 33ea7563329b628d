"""Kernels of the unit-vector mechanisms (Numba; DESIGN.md R6): PrivHS, and the rejection sampler that
compresses PrivUnit and PrivUnitG to seed indices; plus the collector's decoder, which must regenerate the
very same public directions and therefore shares this module's generator.

**The public direction family** (``splitmix64-boxmuller/v1``). Seed ``s`` (an unsigned integer below 2**32)
names the vector ``g_s`` of ``d`` standard normals

    h_k = splitmix64(s·2**32 + k)        (k = 0, 1, ...; SplitMix64's output function, a bijection of 2**64)
    u1 = (floor(h_{2j} / 2**11) + 1) / 2**53 ∈ (0, 1],   u2 = floor(h_{2j+1} / 2**11) / 2**53 ∈ [0, 1)
    g_s[2j] = sqrt(-2 ln u1) cos(2π u2),    g_s[2j+1] = sqrt(-2 ln u1) sin(2π u2)   (Box–Muller)

(an odd ``d`` drops the last sine). It is counter based: any coordinate of any seed is computed directly,
by the client (to decide) and by the collector (to decode), with no state. The largest coordinate is
``sqrt(2·53 ln 2) < 8.58``. ``splitmix64(x)`` is ``z = x + 0x9E3779B97F4A7C15``, then
``z = (z ^ z>>30)·0xBF58476D1CE4E5B9``, ``z = (z ^ z>>27)·0x94D049BB133111EB``, ``z ^ z>>31`` (mod 2**64).

Words (``ldpnum._random``): each copy of each record reads a fixed block of words, so reports do not depend
on the thread count. The sphere rounding of a record is ``(word >> 11) < keep`` (keep the direction ``x/‖x‖``,
else its opposite); a record with ``‖x‖ = 0`` rounds ``e_1`` the same way with ``keep = 2**52``.
"""

import math

import numpy as np

from ._jit import jit, prange

U11 = np.uint64(11)
U27 = np.uint64(27)
U30 = np.uint64(30)
U31 = np.uint64(31)
U32 = np.uint64(32)
U33 = np.uint64(33)
U1 = np.uint64(1)
M32 = np.uint64(0xFFFFFFFF)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
TWO_M53 = 2.0**-53
TWO_PI = 2.0 * math.pi

#: Records per task of the client kernels (each task allocates its scratch direction once).
CHUNK = 64


@jit(inline=True)
def splitmix_inline(x):
    """SplitMix64's output function at state ``x`` (uint64 in, uint64 out)."""
    z = x + GOLDEN
    z = (z ^ (z >> U30)) * MIX1
    z = (z ^ (z >> U27)) * MIX2
    return z ^ (z >> U31)


@jit(inline=True)
def direction_inline(seed, g):
    """Write ``g_seed`` (the family's ``len(g)`` normals for ``seed``) into ``g``; return ``‖g‖²``."""
    d = g.shape[0]
    base = np.uint64(seed) << U32
    ss = 0.0
    for j in range((d + 1) // 2):
        h1 = splitmix_inline(base | np.uint64(2 * j))
        h2 = splitmix_inline(base | np.uint64(2 * j + 1))
        u1 = (np.float64(h1 >> U11) + 1.0) * TWO_M53
        u2 = np.float64(h2 >> U11) * TWO_M53
        r = math.sqrt(-2.0 * math.log(u1))
        a = TWO_PI * u2
        v = r * math.cos(a)
        g[2 * j] = v
        ss += v * v
        if 2 * j + 1 < d:
            v = r * math.sin(a)
            g[2 * j + 1] = v
            ss += v * v
    return ss


@jit(inline=True)
def projection_inline(x, i, inv_norm, keep, word, g):
    """``⟨g, w⟩`` for the record's rounded sphere point ``w = ±x_i/‖x_i‖`` (``±e_1`` when ``x_i = 0``), the sign
    kept when ``(word >> 11) < keep``."""
    if inv_norm > 0.0:
        dot = 0.0
        for j in range(g.shape[0]):
            dot += g[j] * x[i, j]
        dot *= inv_norm
    else:
        dot = g[0]
    if np.int64(word >> U11) < keep:
        return dot
    return -dot


@jit(parallel=True)
def generate_directions(seeds, out):
    """Probe: ``out[k] = g_{seeds[k]}`` (the family's vectors, ``out.shape[1]`` coordinates each)."""
    for k in prange(seeds.shape[0]):
        direction_inline(seeds[k], out[k])


@jit(parallel=True)
def privhs_kernel(x, inv_norm, keep, m, t_hi, words, out):
    """PrivHS, ``m`` copies per record, 3 words per copy: the sphere rounding, the seed (its top 31 bits), the
    randomized-response coin. The bit ``b = [⟨g_s, w⟩ >= 0]`` is kept when ``(word >> 11) < t_hi``, else
    flipped; the report is ``2 s + b`` (uint32)."""
    n, d = x.shape
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        g = np.empty(d)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            for t in range(m):
                base = 3 * (i * m + t)
                s = words[base + 1] >> U33
                direction_inline(s, g)
                b = projection_inline(x, i, inv_norm[i], keep[i], words[base], g) >= 0.0
                if np.int64(words[base + 2] >> U11) >= t_hi:
                    b = not b
                out[i, t] = np.uint32((s << U1) | np.uint64(b))


@jit(parallel=True)
def rejection_kernel(x, inv_norm, keep, m, n_trials, sphere, gamma, t_c, words, out, trials):
    """PrivUnit (``sphere``: the cap ``⟨g_s/‖g_s‖, w⟩ >= gamma``) or PrivUnitG (the half-space
    ``⟨g_s, w⟩ >= gamma``) by rejection against the family, ``m`` copies per record.

    Copy words: the sphere rounding, ``n_trials`` trial words, one fallback word (``n_trials + 2``). Trial
    ``k`` proposes the seed ``s = word >> 32`` and accepts it when ``g_s`` is inside the cap, or else when
    ``word & 0xFFFFFFFF < t_c`` (probability ``t_c / 2**32``); the first accepted seed is the report. If all
    ``n_trials`` reject, the report is the fallback word's top 32 bits, a uniform seed. ``trials[i, t]`` is
    the number of trials used (``n_trials + 1`` for the fallback).
    """
    n, d = x.shape
    c = n_trials + 2
    t_c64 = np.uint64(t_c)
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        g = np.empty(d)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            for t in range(m):
                base = c * (i * m + t)
                chosen = words[base + 1 + n_trials] >> U32
                used = n_trials + 1
                for k in range(n_trials):
                    wd = words[base + 1 + k]
                    s = wd >> U32
                    ss = direction_inline(s, g)
                    dot = projection_inline(x, i, inv_norm[i], keep[i], words[base], g)
                    thr = gamma * math.sqrt(ss) if sphere else gamma
                    if dot >= thr or (wd & M32) < t_c64:
                        chosen = s
                        used = k + 1
                        break
                out[i, t] = np.uint32(chosen)
                trials[i, t] = used


#: Tasks of the decoder's parallel loop (each with its own int64 sums, added at the end: exact).
DECODE_TASKS = 16


@jit(parallel=True)
def decode_sums(codes, kind, scale, sums):
    """The collector's sums over reports of the decoded (unscaled) directions, in fixed point.

    ``kind`` 0: PrivHS (``code = 2s + b``; direction ``±g_s/‖g_s‖``), 1: PrivUnit (``g_s/‖g_s‖``), 2:
    PrivUnitG (``g_s``). Each coordinate ``v`` of each report adds ``round(v·scale)`` to ``sums[task, 0, j]``
    when positive, its magnitude to ``sums[task, 1, j]`` when negative, and ``round(v²·scale)`` to
    ``sums[task, 2, j]`` (round half up: ``floor(y + 1/2)``). Integer sums, so the result does not depend on
    the split into tasks. ``sums`` has shape ``(DECODE_TASKS, 3, d)`` and is zeroed here.
    """
    n, m = codes.shape
    d = sums.shape[2]
    n_tasks = sums.shape[0]
    for task in prange(n_tasks):
        acc = sums[task]
        for a in range(3):
            for j in range(d):
                acc[a, j] = 0
        g = np.empty(d)
        lo = task * n // n_tasks
        hi = (task + 1) * n // n_tasks
        for i in range(lo, hi):
            for t in range(m):
                code = np.uint64(codes[i, t])
                if kind == 0:
                    s = code >> U1
                else:
                    s = code
                ss = direction_inline(s, g)
                f = 1.0
                if kind != 2:
                    f = 1.0 / math.sqrt(ss)
                    if kind == 0 and (code & U1) == np.uint64(0):
                        f = -f
                for j in range(d):
                    v = g[j] * f
                    q = np.int64(math.floor(v * scale + 0.5))
                    if q > 0:
                        acc[0, j] += q
                    else:
                        acc[1, j] -= q
                    acc[2, j] += np.int64(math.floor(v * v * scale + 0.5))
