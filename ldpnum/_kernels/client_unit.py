"""Kernels of the unit-vector mechanisms (Numba; design rule R6).

PrivHS, and the rejection sampler that compresses PrivUnit and PrivUnitG to seed indices; plus the collector's decoder,
which must regenerate the very same public directions and therefore shares this module's generator.

**The public direction family** (``splitmix64-ziggurat/v2``). Seed ``s`` (an unsigned integer below 2**32)
names the vector ``g_s`` of ``d <= 2**16`` standard normals. Coordinate ``j`` has its own stream of words

    h_r = splitmix64(s·2**32 + j·2**16 + r)      (r = 0, 1, ..., 2**16 - 1; SplitMix64's output function)

and is drawn from them by Marsaglia and Tsang's ziggurat with 256 layers, reading ``r = 0, 1, 2, ...`` in
order. It is counter based: any coordinate of any seed is computed directly, by the client (to decide) and
by the collector (to decode), with no state, although the ziggurat reads a variable number of words.

*Tables* (float64, :data:`ZIG_X`, :data:`ZIG_F`): ``f(x) = exp(-x²/2)``, ``R = x_1 = 3.6541528853610088``
(Marsaglia and Tsang's value for 256 layers), the common layer area ``V = R f(R) + sqrt(π/2) erfc(R/√2)``,
``x_0 = V/f(R)``, ``x_{i+1} = sqrt(-2 ln(V/x_i + f(x_i)))`` for ``i = 1, ..., 254``, ``x_256 = 0``;
``F_i = f(x_i)`` (``F_256 = 1``). Layer ``i >= 1`` is the rectangle ``[0, x_i] × [F_i, F_{i+1}]`` and layer 0
the base ``[0, x_0] × [0, f(R)]`` (the strip under ``f(R)`` and the tail beyond ``R``), all of area ``V``
(the top layer's area matches to 2e-13, the float64 rounding of ``R``).

*One attempt*, from a word ``h``: the layer ``i = h & 255``, the sign bit ``(h >> 8) & 1`` (1: negative),
``x = (h >> 11)·x_i·2**-53`` (computed as ``(h >> 11)·(x_i·2**-53)``, the same float). Then

* ``x < x_{i+1}`` (inside the layer's rectangle under the curve): return ``±x``;
* ``i = 0`` (base layer, ``x >= R``): the tail (Marsaglia 1964): with the next two words ``u = (h' >> 11 + 1)
  ·2**-53 ∈ (0, 1]`` each, ``a = -ln(u_1)/R``, ``b = -ln(u_2)``; return ``±(R + a)`` when ``a·a < b + b``,
  else repeat with the next two words;
* ``i >= 1`` (the wedge): with the next word ``u = (h' >> 11)·2**-53``, return ``±x`` when
  ``F_i + u (F_{i+1} - F_i) < exp(-x²/2)``;

otherwise a new attempt from the next word. *Budget*: the ziggurat reads only words ``r < 2**16 - 2``; a
coordinate that would need more falls back to Box–Muller on its last two words (``u_1 = (h >> 11 + 1)
·2**-53``, ``u_2 = (h' >> 11)·2**-53``, ``sqrt(-2 ln u_1) cos(2π u_2)``), an exact normal drawn from words
the ziggurat never read. Count the work in steps: an attempt (its first word and, for a wedge, a second)
or a tail round (two words). Each step reads at most two fresh words and ends the coordinate with probability
at least 0.9 whatever came before (an attempt's rectangle alone accepts 0.985 of attempts over the uniform
layer, a tail round 0.937), so the budget (32767 steps at least) is exhausted with probability below
``0.1**32766``. The law of a coordinate is therefore within ``10**-32766`` in total variation of the
ziggurat's, which is the standard normal law up to floating point (53-bit uniforms, float64 tables).

*Coordinate bound.* Every value is below ``R + sqrt(2·53 ln 2) = 12.2258`` in magnitude: the rectangles
return ``x < x_1 = R``, the wedges ``x < x_i <= x_1``, the tail ``R + a`` with ``a² < 2b <= 2·53 ln 2``
(``u_2 >= 2**-53``), the fallback ``sqrt(2·53 ln 2)`` at most; :data:`GAUSS_MAX` = 12.23.

``splitmix64(x)`` is ``z = x + 0x9E3779B97F4A7C15``, then ``z = (z ^ z>>30)·0xBF58476D1CE4E5B9``,
``z = (z ^ z>>27)·0x94D049BB133111EB``, ``z ^ z>>31`` (mod 2**64).

The clients never store ``g_s``: they generate it coordinate by coordinate while accumulating ``⟨g_s, x⟩``
and ``‖g_s‖²`` (the sums in coordinate order, so the same floats as a stored vector gives).

Words (``ldpnum._random``): each copy of each record reads a fixed block of words, so reports do not depend
on the thread count. The sphere rounding of a record is ``(word >> 11) < keep`` (keep the direction ``x/‖x‖``,
else its opposite); a record with ``‖x‖ = 0`` rounds ``e_1`` the same way with ``keep = 2**52``.

*Compile time* (a fresh process with an empty Numba cache, ``LDPNUM_JIT=compile``, d = 64; median of 3 on a
2-vCPU VM, wall / CPU seconds nearly equal): PrivHS ``privatize`` 3.1 s, PrivUnitG (and PrivUnit, the same
kernel) ``privatize`` 3.3 s, the decoder (first ``aggregate``) 1.8 s, :func:`generate_directions` 0.9 s; loading
them all from a warm cache 0.2 s. :func:`direction` is a plain (non-inlined) function, compiled once and called
per vector by the decoder and the probe (decoder 2.0 -> 1.8 s, probe 1.1 -> 0.9 s, its speed unchanged).
:func:`projection_inline` stays inlined into both client kernels: as one shared non-inlined function
(with the ziggurat compiled once) the two first ``privatize`` calls compile in 2.5 s and 2.0 s instead of
3.1 s and 3.3 s, but the clients lose 5-12% of their vectors per CPU-second (PrivHS 310k -> 290k at
d = 1024, 2.45M -> 2.2M at d = 128; PrivUnitG 185k -> 177k and 1.39M -> 1.28M; ε = 1, one thread), so
it is not kept.

References: G. Marsaglia, W. W. Tsang, "The Ziggurat Method for Generating Random Variables", Journal of
Statistical Software 5(8), 2000; G. Marsaglia, "Generating a Variable from the Tail of the Normal
Distribution", Technometrics 6(1), 1964; G. L. Steele, D. Lea, C. H. Flood, "Fast Splittable Pseudorandom
Number Generators", OOPSLA 2014 (SplitMix64).
"""

import math

import numpy as np

from ._jit import jit, prange

U8 = np.uint64(8)
U11 = np.uint64(11)
U16 = np.uint64(16)
U27 = np.uint64(27)
U30 = np.uint64(30)
U31 = np.uint64(31)
U32 = np.uint64(32)
U33 = np.uint64(33)
U1 = np.uint64(1)
M8 = np.uint64(0xFF)
M32 = np.uint64(0xFFFFFFFF)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
TWO_M53 = 2.0**-53
TWO_PI = 2.0 * math.pi

#: Records per task of the client kernels.
CHUNK = 64
#: Coordinates the clients generate at a time (their scratch buffer).
GEN_BLOCK = 128

#: The family's name and version (recorded in every spec by ``ldpnum.vectors.unit``).
FAMILY = "splitmix64-ziggurat/v2"
#: Layers of the ziggurat and its base layer's edge ``R = x_1`` (Marsaglia and Tsang, 256 layers).
ZIG_LAYERS = 256
ZIG_R = 3.6541528853610088
#: Words of a coordinate's stream (``r`` below ``2**16``), of which the ziggurat may read the first
#: ``ZIG_BUDGET``; the last two are the Box–Muller fallback's.
STREAM_WORDS = 1 << 16
ZIG_BUDGET = STREAM_WORDS - 2
#: Largest magnitude of a coordinate: ``R + sqrt(2·53 ln 2)`` (the tail's maximum from 53-bit uniforms).
GAUSS_MAX = 12.23


def ziggurat_tables():
    """``(V, x, F)``: the layer area, the edges ``x_0..x_256`` and the heights ``F_i = exp(-x_i²/2)``.

    See the module notes; computed in float64 from their definition.
    """
    r = ZIG_R
    fr = math.exp(-0.5 * r * r)
    v = r * fr + math.sqrt(0.5 * math.pi) * math.erfc(r / math.sqrt(2.0))
    x = np.zeros(ZIG_LAYERS + 1)
    x[0] = v / fr
    x[1] = r
    for i in range(1, ZIG_LAYERS - 1):
        x[i + 1] = math.sqrt(-2.0 * math.log(v / x[i] + math.exp(-0.5 * x[i] * x[i])))
    f = np.array([math.exp(-0.5 * t * t) for t in x])
    f[ZIG_LAYERS] = 1.0
    return v, x, f


ZIG_V, ZIG_X, ZIG_F = ziggurat_tables()
#: ``x_i·2**-53``: an attempt's value is ``(h >> 11)·ZIG_W[i]``.
ZIG_W = ZIG_X[:ZIG_LAYERS] * TWO_M53
#: The sign bit's factor.
SIGN = np.array([1.0, -1.0])


@jit(inline=True)
def splitmix_inline(x):
    """SplitMix64's output function at state ``x`` (uint64 in, uint64 out)."""
    z = x + GOLDEN
    z = (z ^ (z >> U30)) * MIX1
    z = (z ^ (z >> U27)) * MIX2
    return z ^ (z >> U31)


@jit()
def gauss_slow(key, h):
    """The rest of a coordinate whose first word ``h`` missed the layer's rectangle.

    The word is of stream ``key = s·2**32 + j·2**16``; the rest is the wedges, the tail, new attempts and the fallback
    (module notes).
    """
    r = 1  # the next word of the stream
    while True:
        i = np.int64(h & M8)
        x = np.float64(np.int64(h >> U11)) * ZIG_W[i]
        neg = ((h >> U8) & U1) == U1
        if x < ZIG_X[i + 1]:
            return -x if neg else x
        if i == 0:
            while r + 2 <= ZIG_BUDGET:
                u1 = (np.float64(np.int64(splitmix_inline(key + np.uint64(r)) >> U11)) + 1.0) * TWO_M53
                u2 = (np.float64(np.int64(splitmix_inline(key + np.uint64(r + 1)) >> U11)) + 1.0) * TWO_M53
                r += 2
                a = -math.log(u1) / ZIG_R
                b = -math.log(u2)
                if a * a < b + b:
                    return -(ZIG_R + a) if neg else ZIG_R + a
            break
        if r + 1 > ZIG_BUDGET:
            break
        u = np.float64(np.int64(splitmix_inline(key + np.uint64(r)) >> U11)) * TWO_M53
        r += 1
        if ZIG_F[i] + u * (ZIG_F[i + 1] - ZIG_F[i]) < math.exp(-0.5 * x * x):
            return -x if neg else x
        if r + 1 > ZIG_BUDGET:
            break
        h = splitmix_inline(key + np.uint64(r))
        r += 1
    h1 = splitmix_inline(key + np.uint64(ZIG_BUDGET))
    h2 = splitmix_inline(key + np.uint64(ZIG_BUDGET + 1))
    u1 = (np.float64(np.int64(h1 >> U11)) + 1.0) * TWO_M53
    u2 = np.float64(np.int64(h2 >> U11)) * TWO_M53
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(TWO_PI * u2)


@jit(inline=True)
def gauss_inline(base, j):
    """Coordinate ``j`` of the seed whose stream base is ``base = s << 32`` (uint64)."""
    key = base | (np.uint64(j) << U16)
    h = splitmix_inline(key)
    i = np.int64(h & M8)
    x = np.float64(np.int64(h >> U11)) * ZIG_W[i]
    if x < ZIG_X[i + 1]:
        return x * SIGN[np.int64((h >> U8) & U1)]  # a multiplication, not a branch: the sign is a coin flip
    return gauss_slow(key, h)


@jit(inline=True)
def draft_inline(base, j0, buf, cnt):
    """First attempts of coordinates ``j0 .. j0 + cnt - 1`` into ``buf[:cnt]``; returns the number of NaNs.

    The value where the word's rectangle test accepts (98.5%), NaN where the coordinate needs :func:`gauss_slow`. No
    branch on the words, so the compiler vectorizes it (SplitMix64, the table lookups and the test, several lanes at
    once).
    """
    misses = 0
    for k in range(cnt):
        h = splitmix_inline(base | (np.uint64(j0 + k) << U16))
        i = np.int64(h & M8)
        x = np.float64(np.int64(h >> U11)) * ZIG_W[i]
        hit = x < ZIG_X[i + 1]
        buf[k] = x * SIGN[np.int64((h >> U8) & U1)] if hit else np.nan
        misses += 0 if hit else 1
    return misses


@jit(inline=True)
def settle_inline(base, j0, buf, cnt, misses):
    """Replace the ``misses`` NaNs :func:`draft_inline` left in ``buf[:cnt]`` by their coordinates.

    This is the slow path.
    """
    k = 0
    while misses > 0:
        if buf[k] != buf[k]:
            key = base | (np.uint64(j0 + k) << U16)
            buf[k] = gauss_slow(key, splitmix_inline(key))
            misses -= 1
        k += 1


@jit(buffers=("g",))  # a helper: its caller counted the work (the tier notes in ``_jit``)
def direction(seed, g):
    """Write ``g_seed`` (the family's ``len(g)`` normals for ``seed``) into ``g``; return ``‖g‖²``.

    The squared norm is summed as in :func:`projection_inline`.

    Not inlined into its callers (the decoder :func:`decode_sums` and the probe :func:`generate_directions`):
    one call per vector costs nothing next to its ``d`` normals, and each caller compiles and loads without a
    copy of the ziggurat.
    """
    base = np.uint64(seed) << U32
    d = g.shape[0]
    settle_inline(base, 0, g, d, draft_inline(base, 0, g, d))
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    j = 0
    while j + 4 <= d:
        s0 += g[j] * g[j]
        s1 += g[j + 1] * g[j + 1]
        s2 += g[j + 2] * g[j + 2]
        s3 += g[j + 3] * g[j + 3]
        j += 4
    if j < d:
        s0 += g[j] * g[j]
    if j + 1 < d:
        s1 += g[j + 1] * g[j + 1]
    if j + 2 < d:
        s2 += g[j + 2] * g[j + 2]
    return (s0 + s1) + (s2 + s3)


@jit(inline=True)
def projection_inline(x, i, inv_norm, keep, word, seed, norm, buf):
    """``(⟨g_s, w⟩, ‖g_s‖²)`` for the record's rounded sphere point ``w``, generating ``g_s`` on the fly.

    ``w = ±x_i/‖x_i‖`` (``±e_1`` when ``x_i = 0``), the sign kept when ``(word >> 11) < keep``; ``g_s`` is generated
    ``len(buf)`` coordinates at a time (a multiple of 4; the whole vector is never stored). ``‖g_s‖²`` only when
    ``norm`` (else 0; and for ``x_i = 0`` only the first coordinate is drawn).

    Summation order (fixed, so reports are reproducible): coordinate ``j`` goes to partial sum ``j mod 4``,
    each partial sum in coordinate order, and the result is ``(s_0 + s_1) + (s_2 + s_3)`` (four independent
    additions in flight instead of one chain); the dot product is then multiplied by ``inv_norm``.
    """
    base = np.uint64(seed) << U32
    d = x.shape[1]
    nb = buf.shape[0]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    if inv_norm > 0.0:
        p0 = 0.0
        p1 = 0.0
        p2 = 0.0
        p3 = 0.0
        for j0 in range(0, d, nb):
            cnt = min(nb, d - j0)
            settle_inline(base, j0, buf, cnt, draft_inline(base, j0, buf, cnt))
            k = 0
            while k + 4 <= cnt:
                v0 = buf[k]
                v1 = buf[k + 1]
                v2 = buf[k + 2]
                v3 = buf[k + 3]
                p0 += v0 * x[i, j0 + k]
                p1 += v1 * x[i, j0 + k + 1]
                p2 += v2 * x[i, j0 + k + 2]
                p3 += v3 * x[i, j0 + k + 3]
                s0 += v0 * v0
                s1 += v1 * v1
                s2 += v2 * v2
                s3 += v3 * v3
                k += 4
            if k < cnt:
                p0 += buf[k] * x[i, j0 + k]
                s0 += buf[k] * buf[k]
            if k + 1 < cnt:
                p1 += buf[k + 1] * x[i, j0 + k + 1]
                s1 += buf[k + 1] * buf[k + 1]
            if k + 2 < cnt:
                p2 += buf[k + 2] * x[i, j0 + k + 2]
                s2 += buf[k + 2] * buf[k + 2]
        dot = ((p0 + p1) + (p2 + p3)) * inv_norm
    else:
        dot = gauss_inline(base, 0)
        if norm:
            s0 = dot * dot
            for j in range(1, d):
                v = gauss_inline(base, j)
                if j % 4 == 0:
                    s0 += v * v
                elif j % 4 == 1:
                    s1 += v * v
                elif j % 4 == 2:
                    s2 += v * v
                else:
                    s3 += v * v
    ss = (s0 + s1) + (s2 + s3)
    if np.int64(word >> U11) < keep:
        return dot, ss
    return -dot, ss


@jit(parallel=True, work=lambda seeds, out: out.size)
def generate_directions(seeds, out):
    """Probe: ``out[k] = g_{seeds[k]}`` (the family's vectors, ``out.shape[1]`` coordinates each)."""
    for k in prange(seeds.shape[0]):
        direction(seeds[k], out[k])


@jit(parallel=True)
def privhs_kernel(x, inv_norm, keep, m, t_hi, words, out):
    """PrivHS, ``m`` copies per record, 3 words per copy: the sphere rounding, the seed, the randomized-response coin.

    The seed is the word's top 31 bits. The bit ``b = [⟨g_s, w⟩ >= 0]`` is kept when ``(word >> 11) < t_hi``, else
    flipped; the report is ``2 s + b`` (uint32).
    """
    n = x.shape[0]
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        buf = np.empty(GEN_BLOCK)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            for t in range(m):
                base = 3 * (i * m + t)
                s = words[base + 1] >> U33
                dot, _ = projection_inline(x, i, inv_norm[i], keep[i], words[base], s, False, buf)
                b = dot >= 0.0
                if np.int64(words[base + 2] >> U11) >= t_hi:
                    b = not b
                out[i, t] = np.uint32((s << U1) | np.uint64(b))


def _rejection_work(x, inv_norm, keep, m, n_trials, sphere, gamma, t_c, words, out, trials):
    """The rejection sampler's work in elements: copies x expected trials x blocks of 4 coordinates a trial makes.

    The expected trials ``1/A`` are not among the arguments; ``J/8`` stands for
    them: ``J = ceil(ln(failure)/ln(1 - A))`` is about ``13.8/A`` at the default failure probability ``1e-6``
    (``J/8`` counts ~1.7x more; a smaller failure probability or a larger explicit ``trials`` counts more still,
    which only compiles sooner). Not the words' count: every copy draws ``J + 2`` words but uses ``1/A`` of them
    on average (1000 PrivUnit reports of dimension 3 with ``J = 55`` draw 57,000 words and take 0.18 s
    interpreted, against ~1 s to load the compiled kernel).
    """
    return out.size * max(1, n_trials // 8) * (1 + x.shape[1] // 4)


@jit(parallel=True, work=_rejection_work)
def rejection_kernel(x, inv_norm, keep, m, n_trials, sphere, gamma, t_c, words, out, trials):
    """PrivUnit or PrivUnitG by rejection against the family, ``m`` copies per record.

    PrivUnit (``sphere``) accepts the cap ``⟨g_s/‖g_s‖, w⟩ >= gamma``, PrivUnitG the half-space ``⟨g_s, w⟩ >= gamma``.

    Copy words: the sphere rounding, ``n_trials`` trial words, one fallback word (``n_trials + 2``). Trial
    ``k`` proposes the seed ``s = word >> 32`` and accepts it when ``g_s`` is inside the cap, or else when
    ``word & 0xFFFFFFFF < t_c`` (probability ``t_c / 2**32``); the first accepted seed is the report. If all
    ``n_trials`` reject, the report is the fallback word's top 32 bits, a uniform seed. ``trials[i, t]`` is
    the number of trials used (``n_trials + 1`` for the fallback).
    """
    n = x.shape[0]
    c = n_trials + 2
    t_c64 = np.uint64(t_c)
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        buf = np.empty(GEN_BLOCK)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            for t in range(m):
                base = c * (i * m + t)
                chosen = words[base + 1 + n_trials] >> U32
                used = n_trials + 1
                for k in range(n_trials):
                    wd = words[base + 1 + k]
                    s = wd >> U32
                    dot, ss = projection_inline(x, i, inv_norm[i], keep[i], words[base], s, sphere, buf)
                    thr = gamma * math.sqrt(ss) if sphere else gamma
                    if dot >= thr or (wd & M32) < t_c64:
                        chosen = s
                        used = k + 1
                        break
                out[i, t] = np.uint32(chosen)
                trials[i, t] = used


#: Tasks of the decoder's parallel loop (each with its own int64 sums, added at the end: exact).
DECODE_TASKS = 16


@jit(parallel=True, work=lambda codes, kind, scale, sums: codes.size * sums.shape[2])
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
                ss = direction(s, g)
                f = 1.0
                if kind != 2:
                    f = 1.0 / math.sqrt(ss)
                    if kind == 0 and (code & U1) == np.uint64(0):
                        f = -f
                for j in range(d):  # no branch on the sign (a coin flip): both sums take max(±q, 0)
                    v = g[j] * f
                    q = np.int64(math.floor(v * scale + 0.5))
                    acc[0, j] += max(q, 0)
                    acc[1, j] += max(-q, 0)
                    acc[2, j] += np.int64(math.floor(v * v * scale + 0.5))
