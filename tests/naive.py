"""Slow, obviously-correct NumPy/Python references for the kernels (one record at a time, Python ints).

Each randomizer reference takes the same words the kernel consumed and must reproduce its output bit for
bit; each server-side reference (support counts, consistency) computes the plain way what the kernels
compute the fast way. Sections, one per family:

- shared primitives and the numerical mechanisms (binary, window, hybrid, Laplace), EM/EMS;
- categorical oracles: GRR and subset selection (Floyd's sampler, and a planted Floyd bug);
- unary encodings (SUE/OUE): packed reports bit by bit, and the enumeration of every report;
- local hashing (BLH/OLH: the GF(2^24) hash family, reports, support counts) and Hadamard response;
- PI-RAPPOR (Algorithm 3 literally, and decoding by direct evaluation);
- hierarchical histograms: the client kernels (offset and packed layouts), the packed aggregate, the
  minimal node cover, dense least-squares and non-negative consistency, the exact range-answer variance;
- vectors: the coordinates of sampled dimensions (Floyd's sampler per record) and Duchi et al.'s
  multidimensional sign mechanism.
"""

import functools
import itertools
import math
import os
from fractions import Fraction

import numpy as np

TWO53 = 2**53
LOW16 = 0xFFFF

#: Whether the kernels run as Python: tests/_kernels/test_jit.py runs the reference tests with
#: ``NUMBA_DISABLE_JIT=1`` (under coverage), where a kernel takes about a millisecond a row.
INTERPRETED = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def rows(compiled, interpreted=600):
    """Records per configuration of a reference test: ``compiled`` normally, ``interpreted`` (fewer, still
    reaching every line of the kernel: the JIT-disabled run checks its coverage) when the kernels run as Python."""
    return interpreted if INTERPRETED else compiled


def unit(x, low, high):
    u = (float(x) - low) * (1.0 / (high - low))
    return 0.0 if not u > 0.0 else min(u, 1.0)


def bernoulli(word, threshold):
    return (int(word) >> 11) < threshold


def uniform(word, m):
    return ((int(word) >> 16) * m) >> 48


def binary_threshold(u, t_lo, t_hi):
    return min(t_lo + int(u * float(t_hi - t_lo)), t_hi)


def rounding(u, n_positions):
    pos = u * float(n_positions)
    s0 = int(pos)
    if s0 >= n_positions:
        return n_positions, 0
    return s0, int((pos - s0) * float(TWO53))


def window_cell(s, w_in, w_cell, n_cells, m, t_in):
    if bernoulli(w_in, t_in):
        return s + uniform(w_cell, m)
    k = uniform(w_cell, n_cells - m)
    return k + m if k >= s else k


def binary(x, low, high, t_lo, t_hi, words):
    return np.array([int(bernoulli(words[i], binary_threshold(unit(v, low, high), t_lo, t_hi)))
                     for i, v in enumerate(x)])


def window(x, low, high, n_cells, m, t_in, words):
    out = []
    for i, v in enumerate(x):
        s, t_up = rounding(unit(v, low, high), n_cells - m)
        s += int(bernoulli(words[3 * i], t_up))
        out.append(window_cell(s, words[3 * i + 1], words[3 * i + 2], n_cells, m, t_in))
    return np.array(out)


def hybrid(x, low, high, n_cells, m, t_in, t_lo, t_hi, t_mix, words):
    out = []
    for i, v in enumerate(x):
        u = unit(v, low, high)
        s, t_up = rounding(u, n_cells - m)
        s += int(bernoulli(words[5 * i], t_up))
        cell = window_cell(s, words[5 * i + 1], words[5 * i + 2], n_cells, m, t_in)
        bit = int(bernoulli(words[5 * i + 3], binary_threshold(u, t_lo, t_hi)))
        out.append(cell if bernoulli(words[5 * i + 4], t_mix) else n_cells + bit)
    return np.array(out)


def naive_float_piecewise(x, epsilon, low, high, rng):
    """The textbook floating-point Piecewise mechanism (leaky: DESIGN.md R1). A negative control only."""
    a = np.exp(epsilon / 2)
    c = (a + 1) / (a - 1)
    t = 2 * (np.asarray(x, float) - low) / (high - low) - 1
    left = (c + 1) / 2 * t - (c - 1) / 2
    right = left + c - 1
    inside = rng.random(t.size) < a / (a + 1)
    y_in = left + rng.random(t.size) * (c - 1)
    # outside: uniform on [-c, left) ∪ (right, c]
    len_l = left + c
    len_r = c - right
    v = rng.random(t.size) * (len_l + len_r)
    y_out = np.where(v < len_l, -c + v, right + (v - len_l))
    return np.where(inside, y_in, y_out)


def laplace(x, low, high, g, t, weights, words):
    """Discrete Laplace on a grid from one-sided weights ``W(0..Z)``: bisect a Python-int cumulative table."""
    import bisect
    from itertools import accumulate

    z_max = g + t
    cumulative = list(accumulate(list(weights[:0:-1]) + list(weights)))  # C(j) for z = j - Z, j = 0..2Z
    out = []
    for i, v in enumerate(x):
        s, t_up = rounding(unit(v, low, high), g)
        s += int(bernoulli(words[3 * i], t_up))
        u = ((int(words[3 * i + 1]) >> 11) << 53) + (int(words[3 * i + 2]) >> 11)
        z = bisect.bisect_right(cumulative, u) - z_max
        out.append(min(max(s + z, -t), g + t) + t)
    return np.array(out)


def naive_float_laplace(x, epsilon, low, high, rng):
    """The textbook float ``x + Lap((high - low)/ε)`` (leaky: DESIGN.md R1). A negative control only."""
    x = np.asarray(x, float)
    return x + rng.laplace(0.0, (high - low) / epsilon, x.size)


# --- EM / EMS for the window randomizer (references for ldpnum.estimation.em) ---------------------------------

def window_transition_dense(n_cells, m, p_in, n_bins, delta=None):
    """Dense ``M[j, i] = P(cell j | input bucket i)`` of the window randomizer, by brute force.

    Each bucket ``[i/d, (i+1)/d)`` is replaced by ``K = P`` evenly spaced sub-positions (midpoints), each
    rounded to a window start exactly as the kernel does (``floor(pos)``, +1 with probability ``frac``), in
    exact integer arithmetic. With ``K`` a multiple of ``P`` every integer is a sub-interval boundary, so the
    hat is linear on each sub-interval and the midpoint average equals the bucket integral exactly.
    Given the start ``s``, the output column is ``p_lo`` everywhere plus the window on ``s..s+m-1``:
    ``p_in/m - p_lo`` each (box, ``p_lo = (1-p_in)/(N-m)``) or ``delta`` (then ``p_lo = (1 - sum(delta))/N``).
    """
    n, d = n_cells, n_bins
    p = n - m
    k_sub = p
    starts = np.zeros((p + 1, d))
    for i in range(d):
        for j in range(k_sub):
            num = (2 * i * k_sub + 2 * j + 1) * p      # pos = num / (2 d K), exactly
            den = 2 * d * k_sub
            s0, rem = divmod(num, den)
            frac = rem / den
            starts[s0, i] += (1 - frac) / k_sub
            if frac > 0:
                starts[s0 + 1, i] += frac / k_sub
    if delta is None:
        p_lo = (1 - p_in) / (n - m)
        excess = np.full(m, p_in / m - p_lo)
    else:
        excess = np.asarray(delta, dtype=float)
        p_lo = (1 - excess.sum()) / n
    given_s = np.full((n, p + 1), p_lo)              # P(cell j | start s)
    for s in range(p + 1):
        given_s[s:s + m, s] += excess
    return given_s @ starts


def em_dense(counts, matrix, method="ems", max_iter=10_000, tol=1e-7, atol=0.0, smoothing=1, start=None):
    """EM (Algorithm 1 of seed 002) / EMS with the full matrix; same start, smoothing and stopping rule:
    stop after the first iteration with ``|L_t - L_{t-1}| < tol |L_{t-1}| + atol``. EMS smooths
    ``smoothing`` times per iteration; ``start`` (default uniform) is the first iterate.

    Returns ``(x, n_iter, converged, loglik)``.
    """
    n = np.asarray(counts, dtype=float)
    mat = np.asarray(matrix, dtype=float)
    d = mat.shape[1]
    seen = n > 0
    n_seen, mat_seen = n[seen], mat[seen]  # cells without reports add nothing to the sums below

    def loglik(x):
        return float(np.sum(n_seen * np.log(mat_seen @ x)))

    x = np.full(d, 1.0 / d) if start is None else np.array(start, dtype=float)
    trace = [loglik(x)]
    converged = False
    it = 0
    while it < max_iter:
        it += 1
        y = mat_seen @ x
        p = x * ((n_seen / y) @ mat_seen)   # E-step: p_i = x_i sum_j n_j M_ji / y_j
        x = p / p.sum()
        if method == "ems":
            for _ in range(smoothing):
                padded = np.concatenate([[x[0]], x, [x[-1]]])
                x = 0.5 * padded[1:-1] + 0.25 * (padded[:-2] + padded[2:])
            x = x / x.sum()
        trace.append(loglik(x))
        if abs(trace[-1] - trace[-2]) < tol * abs(trace[-2]) + atol:
            converged = True
            break
    return x, it, converged, np.array(trace)


def ems_heldout_dense(counts, matrix_for, levels, seed, n_bins, max_iter=10_000, atol=1e-3, min_bins=64,
                      zero_se=0.5, folds=2, trim_masses=None, refit_iter=200, stop_loss=1.0, trim_reference_n=None):
    """EMS with held-out smoothing, spelled out: thin the counts (Binomial(n_j, 1/2) from
    ``default_rng(seed)``, fractional parts halved) into halves ``a`` and ``b``; fit each level strongest
    first on ``a`` (warm starts), score ``sum_j b_j log (M x)_j``, keep the last level before the score
    drops, and refit all counts from the uniform start with ``k // 2`` passes (``k`` itself for 0 and 1).
    Before level 0 is kept over the level ``p`` before it, ``folds=2`` fits ``p`` and then 0 on ``b`` too
    (``p`` from the start that ``a``'s fit of ``p`` had, 0 from that fit) and scores them on ``a``; the two
    directions' gains of 0 over ``p`` are added, and 0 must beat ``p`` by more than ``zero_se`` standard
    errors: each direction's SE is the multinomial one of its held-out cells given the fits (the
    ``w``-weighted standard deviation of the per-cell log ratio of 0 to ``p`` times ``sqrt(sum_j w_j)``,
    ``w`` the held-out counts), and the variances add. When 0 gains less, ``p`` is kept and the fit "fell
    back". A level ``k`` is fitted with ``k / 4**j`` passes on ``n_bins / 2**j`` buckets for the largest
    ``j`` with ``4**j`` dividing ``k``, ``2**j`` dividing ``n_bins`` and at least ``min_bins`` buckets left;
    a warm start moves between grids by summing neighbouring buckets or splitting one evenly.
    ``matrix_for(d)`` is the dense transition at ``d`` buckets.

    ``trim_masses`` (the library's ``TRIM_MASSES``; None: no trim), each times ``sqrt(trim_reference_n / N)``
    (at most 0.5) when the counts' total ``N`` is below ``trim_reference_n``: when level 0 is kept on both folds, for
    the upper tail and then the lower one, each mass ``u`` in turn cuts the buckets whose cumulative mass of
    the final fit before them is at least ``1 - u`` (lower tail: whose cumulative mass up to them is at most
    ``u``), each fold's level-0 fit is restricted to the rest, refitted by plain EM (at most ``refit_iter``
    steps) on its half and scored on the other; the largest positive sum of the two gains over the uncut
    fits is kept (a cut that loses more than ``stop_loss`` ends that tail's scan; a cut equal to one tried is
    skipped), and if anything is cut the final fit is rerun from the uniform distribution on the rest.
    Returns ``(x, smoothing, iterations of the half fits, the cuts' refits and the final fits, fell back)``."""
    n = np.asarray(counts, dtype=float)
    whole = np.floor(n)
    a = np.random.default_rng(seed).binomial(whole.astype(np.int64), 0.5) + (n - whole) / 2
    b = n - a

    def fit_level(k, fitted, held, x):
        d, passes = n_bins, k
        while passes > 0 and passes % 4 == 0 and d % 2 == 0 and d // 2 >= min_bins:
            d, passes = d // 2, passes // 4
        mat = np.asarray(matrix_for(d), dtype=float)
        if x is not None and x.size < d:
            x = np.repeat(x / (d // x.size), d // x.size)
        elif x is not None and x.size > d:
            x = np.array([x[i * (x.size // d):(i + 1) * (x.size // d)].sum() for i in range(d)])
        x, it = em_dense(fitted, mat, "ems", max_iter, 0.0, atol, smoothing=passes, start=x)[:2]
        return x, it, np.log(mat[held > 0] @ x)

    def gain_var(held, lg, pv):
        w, ratio = held[held > 0], lg - pv
        mean = np.sum(w * ratio) / w.sum()
        return float(np.sum(w * ratio)), float(np.sum(w * (ratio - mean) ** 2))

    best, kept, x, total, fell = -np.inf, levels[0], None, 0, False
    prev_logs, prev_start, level0 = None, None, []
    for k in levels:
        start = x
        x, it, logs = fit_level(k, a, b, x)
        total += it
        if k == 0:
            level0 = [(a, b, x, logs)]  # (fitted half, held-out half, fit, held-out log (M x))
        score = float(np.sum(b[b > 0] * logs))
        if score <= best:
            break
        if k == 0 and prev_logs is not None:
            g, var = gain_var(b, logs, prev_logs)
            if folds == 2:
                xb, it1, pb = fit_level(kept, b, a, prev_start)
                x0b, it2, lb = fit_level(0, b, a, xb)
                level0.append((b, a, x0b, lb))
                total += it1 + it2
                g2, v2 = gain_var(a, lb, pb)
                g, var = g + g2, var + v2
            if not g > zero_se * np.sqrt(var):
                fell = True
                break
        best, kept, prev_logs, prev_start = score, k, logs, start
    final = kept // 2 if kept > 1 else kept
    mat = np.asarray(matrix_for(n_bins), dtype=float)
    x, it = em_dense(n, mat, "ems", max_iter, 0.0, atol, smoothing=final)[:2]
    total += it
    if trim_masses is not None and kept == 0 and not fell and len(level0) == folds:
        c = np.cumsum(x)
        before = np.concatenate([[0.0], c[:-1]])

        def keep_for(lower, upper):
            keep = (c > lower if lower > 0 else np.ones(x.size, bool)) & (before < 1 - upper if upper > 0 else True)
            if not keep.any():
                keep[np.argmax(c > lower)] = True
            return keep

        total_n = float(n.sum())
        factor = np.sqrt(trim_reference_n / total_n) if trim_reference_n and total_n < trim_reference_n else 1.0
        cut = [0.0, 0.0]
        for side in (1, 0):
            best_gain, best_mass, tried = 0.0, 0.0, [keep_for(*cut)]
            for mass in [min(0.5, m * factor) for m in trim_masses]:
                trial = list(cut)
                trial[side] = mass
                keep = keep_for(*trial)
                if any(np.array_equal(keep, t) for t in tried):
                    continue
                tried.append(keep)
                gain = 0.0
                for fitted, held, x0, logs0 in level0:
                    start = np.where(keep, x0, 0.0)
                    xt, it = em_dense(fitted, mat, "em", refit_iter, 0.0, atol, start=start / start.sum())[:2]
                    total += it
                    gain += float(np.sum(held[held > 0] * (np.log(mat[held > 0] @ xt) - logs0)))
                if gain > best_gain:
                    best_gain, best_mass = gain, mass
                elif gain < -stop_loss:
                    break
            cut[side] = best_mass
        keep = keep_for(*cut)
        if not keep.all():
            x, it = em_dense(n, mat, "em", max_iter, 0.0, atol, start=keep / keep.sum())[:2]
            total += it
    return x, final, total, fell


def grr(values, k, a_keep, shift, words):
    """Generalized randomized response, one record (one word) at a time (values -1: uniformly random)."""
    return np.array([grr_one(int(v), words[i], k, a_keep, shift) for i, v in enumerate(values)])


def floyd_cells(j, mutant=None):
    """Number of cells of Floyd's pick at ``j``: ``0..j`` (``j + 1``); the mutant ``"range_j"`` draws in ``0..j-1``."""
    return j if mutant == "range_j" else j + 1


def floyd(draws, n, mutant=None):
    """Floyd's algorithm: the ``r = len(draws)``-subset of ``0..n-1`` given the cells drawn at each pick.

    Pick ``s`` has ``j = n - r + s`` and cell ``t = draws[s]`` in ``0..j``; it adds ``t``, or ``j`` if ``t`` is
    already in. Mutants: ``"add_t"`` re-adds ``t`` on a collision (a no-op) instead of ``j``; ``"range_j"``
    (with cells from :func:`floyd_cells`) never draws ``t = j``.
    """
    r = len(draws)
    chosen = set()
    for s, t in enumerate(draws):
        j = n - r + s
        chosen.add(j if t in chosen and mutant != "add_t" else t)
    return chosen


def subset_fields(record_words, omega):
    """The ``ω`` 48-bit pick fields of one record (each shifted into the top 48 bits of a 64-bit int, where
    :func:`uniform` reads it): word 0 is the coin; then groups of three words ``w0, w1, w2`` give four fields,
    ``w0 >> 16``, ``w1 >> 16``, ``w2 >> 16`` and ``(w0 & 0xFFFF)·2**32 + (w1 & 0xFFFF)·2**16 + (w2 & 0xFFFF)``;
    a last group of ``ω mod 4`` words gives one field each."""
    fields = []
    for s in range(omega):
        g, q = divmod(s, 4)
        w = [int(x) for x in record_words[1 + 3 * g:4 + 3 * g]]
        field = w[q] >> 16 if q < 3 else ((w[0] & LOW16) << 32) | ((w[1] & LOW16) << 16) | (w[2] & LOW16)
        fields.append(field << 16)
    return fields


def subset_selection(values, k, omega, t_inc, words, mutant=None):
    """Subset selection with Floyd's algorithm, one record at a time; returns the (n, k) 0/1 matrix.

    Record ``i`` reads ``c = 1 + ω - ⌊ω/4⌋`` words ``[c i, c (i + 1))``. Word 0: ``v`` joins the subset iff
    ``(w >> 11) < t_inc``. Then :func:`floyd` draws an ``r``-subset (``r = ω - 1`` if ``v`` joined, else ``ω``)
    of the list of the ``k - 1`` categories other than ``v``, pick ``s`` (at ``j = n - r + s``) drawing
    ``uniform(subset_fields(...)[ω - r + s], j + 1)``: the last ``r`` fields. An unknown value (-1): ``r = ω`` picks over all ``k``
    categories (word 0 unused).
    """
    c = 1 + omega - omega // 4
    out = np.zeros((len(values), k), dtype=np.uint8)
    for i, v in enumerate(values):
        v = int(v)
        rec = words[c * i:c * (i + 1)]
        fields = subset_fields(rec, omega)
        others = [j for j in range(k) if j != v]
        r = omega
        if v >= 0 and bernoulli(rec[0], t_inc):
            out[i, v] = 1
            r = omega - 1
        n = len(others)
        # field ω - r + s is the pick at j = n - r + s (field s always sits at j = n - ω + s; field 0 is unused
        # when v joined)
        draws = [uniform(fields[omega - r + s], floyd_cells(n - r + s, mutant)) for s in range(r)]
        for t in floyd(draws, n, mutant):
            out[i, others[t]] = 1
    return out


def subset_distribution(k, omega, t_inc, v, mutant=None):
    """``{bitmask: Fraction}``: the exact report distribution of :func:`subset_selection` for value ``v``, by
    enumerating every sequence of Floyd draws with its 48-bit cell counts (small ``k`` only)."""
    def count(t, m):
        return -((-(t + 1) * 2**48) // m) + ((-t * 2**48) // m)

    others = [j for j in range(k) if j != v]
    n = len(others)
    p = Fraction(t_inc, TWO53)
    branches = [(Fraction(1), omega, 0)] if v < 0 else [(p, omega - 1, 1 << v), (1 - p, omega, 0)]
    out = {}
    for weight, r, extra in branches:
        cells = [floyd_cells(n - r + s, mutant) for s in range(r)]
        for draws in itertools.product(*(range(m) for m in cells)):
            prob = weight
            for t, m in zip(draws, cells):
                prob *= Fraction(count(t, m), 2**48)
            mask = extra | sum(1 << others[t] for t in floyd(draws, n, mutant))
            out[mask] = out.get(mask, 0) + prob
    return out


# -- unary encodings (SUE/OUE) -------------------------------------------------------------------------------
# ``unary`` reproduces the kernel's packed reports bit for bit; ``enumerate_reports`` is an independent
# enumeration of the exact report distribution of independent bits (cross-checks UnaryPlan.exact_probabilities).

def unary_bits(v, k, lane_bits, t_other, t_true, record_words, mutant=None):
    """The ``k`` report bits of one person from the record's words (``v = -1``: unknown).

    Word 0 decides the true bit (``(w >> 11) < t_true``); report bit ``s`` is lane ``s % L`` of word
    ``1 + s // L`` (``L = 64 // lane_bits`` lanes per word, lane ``l`` = bits ``[l*b, (l+1)*b)``), set iff the
    lane is below ``t_other``. ``mutant="or"`` plants pure-ldp's UE bug: the true bit is the noise bit OR'ed
    with the coin instead of being replaced by it.
    """
    per_word = 64 // lane_bits
    mask = (1 << lane_bits) - 1
    bits = []
    for s in range(k):
        w = int(record_words[1 + s // per_word])
        lane = (w >> (lane_bits * (s % per_word))) & mask
        bits.append(1 if lane < t_other else 0)
    if v >= 0:
        coin = 1 if (int(record_words[0]) >> 11) < t_true else 0
        bits[v] = (bits[v] | coin) if mutant == "or" else coin
    return bits


def unary(values, k, lane_bits, t_other, t_true, words, mutant=None):
    """Packed reports ``(n, ceil(k/8))`` uint8 of all records, words consumed ``c`` per record in order."""
    n_bytes = -(-k // 8)
    c = 1 + n_bytes * lane_bits // 8
    out = np.zeros((len(values), n_bytes), dtype=np.uint8)
    for i, v in enumerate(values):
        bits = unary_bits(int(v), k, lane_bits, t_other, t_true, words[c * i: c * i + c], mutant)
        for j, bit in enumerate(bits):
            if bit:
                out[i, j // 8] |= 1 << (j % 8)
    return out


def enumerate_reports(bit_probs):
    """``{report: Fraction}`` for independent bits with the given probabilities of 1 (report bit j = bit j of
    the integer key), by listing every one of the ``2**k`` bit vectors."""
    out = {}
    for bits in itertools.product((0, 1), repeat=len(bit_probs)):
        pr = Fraction(1)
        key = 0
        for j, (b, pj) in enumerate(zip(bits, bit_probs)):
            pr *= pj if b else 1 - pj
            key |= b << j
        out[key] = pr
    return out


# -- local hashing (BLH/OLH) and Hadamard response -----------------------------------------------------------
# Schoolbook GF(2^k) arithmetic; the support-count references decode every report against every category.

FIELD_BITS = 24
POLY = 0x1B  # x^24 + x^4 + x^3 + x + 1 (low terms)
#: Low terms of an irreducible polynomial of each small degree, for brute-force checks on small fields.
SMALL_FIELD_POLYS = {3: 0x3, 4: 0x3, 5: 0x5, 6: 0x3, 7: 0x3, 8: 0x1B, 24: POLY}


def clmul(a, b):
    """Carry-less product of two non-negative Python ints."""
    p = 0
    i = 0
    while b >> i:
        if (b >> i) & 1:
            p ^= a << i
        i += 1
    return p


def poly_mod(p, modulus):
    """Remainder of the GF(2) polynomial ``p`` modulo ``modulus`` (both as bit masks)."""
    d = modulus.bit_length() - 1
    while p.bit_length() - 1 >= d:
        p ^= modulus << (p.bit_length() - 1 - d)
    return p


def gf_mul(a, v, field_bits=FIELD_BITS, poly=POLY):
    """``a ⊗ v`` in GF(2^field_bits): schoolbook carry-less product, then long division."""
    return poly_mod(clmul(a, v), (1 << field_bits) | poly)


def is_irreducible(modulus):
    """Rabin's test: a GF(2) polynomial of degree n is irreducible iff x^(2^n) = x (mod it) and
    gcd(x^(2^(n/q)) - x, it) = 1 for every prime q dividing n."""
    n = modulus.bit_length() - 1

    def x_pow_2_pow(t):
        x = 2
        for _ in range(t):
            x = poly_mod(clmul(x, x), modulus)
        return x

    def gcd(a, b):
        while b:
            a, b = b, poly_mod(a, b)
        return a

    if x_pow_2_pow(n) != 2:
        return False
    primes = [q for q in range(2, n + 1) if n % q == 0 and all(q % r for r in range(2, q))]
    return all(gcd(modulus, x_pow_2_pow(n // q) ^ 2) == 1 for q in primes)


def local_hash(a, b, v, g, field_bits=FIELD_BITS, poly=POLY):
    """``h_{a,b}(v) = floor(((a ⊗ v) ⊕ b) · g / 2^field_bits)``."""
    return ((gf_mul(a, v, field_bits, poly) ^ b) * g) >> field_bits


def decode(code):
    """``(a, b, y)`` of one local-hashing report."""
    code = int(code)
    return code >> 40, (code >> 16) & ((1 << 24) - 1), code & 0xFFFF


def grr_one(h, word, g, a_keep, shift):
    """GRR from one word, in Python ints: cell ``word · G >> 64`` of ``G = a_keep + (g - 1)·2**shift``."""
    word = int(word)
    if h < 0:
        return (word * g) >> 64
    c = (word * (a_keep + (g - 1) * 2**shift)) >> 64
    if c < a_keep:
        return h
    j = (c - a_keep) >> shift
    return j + 1 if j >= h else j


def local_hashing(values, g, a_keep, shift, words):
    """BLH/OLH reports: seed bits of word 2i, GRR over g of h(v) with word 2i + 1."""
    out = []
    for i, v in enumerate(values):
        v = int(v)
        w = int(words[2 * i])
        a, b = w >> 40, (w >> 16) & ((1 << 24) - 1)
        h = local_hash(a, b, v, g) if v >= 0 else -1
        y = grr_one(h, words[2 * i + 1], g, a_keep, shift)
        out.append((w & ~0xFFFF & (2**64 - 1)) | y)
    return np.array(out, dtype=np.uint64)


def gf_mul_np(a, v, field_bits=FIELD_BITS, poly=POLY):
    """``a ⊗ v`` for an array ``a`` and one int ``v`` (NumPy uint64, bit by bit)."""
    a = np.asarray(a, dtype=np.uint64)
    p = np.zeros_like(a)
    for i in range(int(v).bit_length()):
        if (int(v) >> i) & 1:
            p ^= a << np.uint64(i)
    for d in range(2 * field_bits, field_bits - 1, -1):
        hit = ((p >> np.uint64(d)) & np.uint64(1)).astype(bool)
        p[hit] ^= np.uint64(((1 << field_bits) | poly) << (d - field_bits))
    return p


def local_hash_support(codes, k, g):
    """``I_v = #{reports with h(v) = y}``, decoding every report against every category (NumPy)."""
    codes = np.asarray(codes, dtype=np.uint64)
    a = codes >> np.uint64(40)
    b = (codes >> np.uint64(16)) & np.uint64((1 << 24) - 1)
    y = codes & np.uint64(0xFFFF)
    out = np.zeros(k, dtype=np.int64)
    for v in range(k):
        h = ((gf_mul_np(a, v) ^ b) * np.uint64(g)) >> np.uint64(24)
        out[v] = int(np.count_nonzero(h == y))
    return out


def parity(x):
    return bin(int(x)).count("1") & 1


def hadamard_one(v, w_keep, w_index, log2_k, t_keep):
    """One Hadamard-response report: a uniform index, flipped on the lowest set bit of v + 1 into the
    chosen half (``v = -1``: the uniform index)."""
    u = int(w_index) >> (64 - log2_k)
    if v >= 0:
        r = v + 1
        target = 0 if bernoulli(w_keep, t_keep) else 1
        if parity(r & u) != target:
            u ^= r & -r
    return u


def hadamard(values, log2_k, t_keep, words):
    """Hadamard response of every value, words ``2i`` (keep) and ``2i+1`` (index)."""
    return np.array([hadamard_one(int(v), words[2 * i], words[2 * i + 1], log2_k, t_keep)
                     for i, v in enumerate(values)], dtype=np.int64)


def hadamard_matrix(K):
    """Dense Sylvester–Hadamard matrix by its recursive construction ``[[H, H], [H, -H]]`` (which equals
    ``(-1)^popcount(r & y)``; built independently of that formula on purpose)."""
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < K:
        h = np.block([[h, h], [h, -h]])
    return h


def fwht_stages(z):
    """The Walsh-Hadamard transform stage by stage (radix 2, spans 1, 2, 4, ...), on a copy."""
    z = np.array(z, dtype=np.float64)
    h = 1
    while h < len(z):
        for s in range(0, len(z), 2 * h):
            u = z[s:s + h].copy()
            v = z[s + h:s + 2 * h].copy()
            z[s:s + h] = u + v
            z[s + h:s + 2 * h] = u - v
        h *= 2
    return z


def hadamard_support(codes, k):
    """``I_v = #{reports y with popcount((v + 1) & y) even}``, report by report."""
    codes = np.asarray(codes, dtype=np.int64)
    out = np.zeros(k, dtype=np.int64)
    for v in range(k):
        par = np.array([parity((v + 1) & int(y)) for y in codes])
        out[v] = int(np.count_nonzero(par == 0))
    return out


# -- PI-RAPPOR -----------------------------------------------------------------------------------------------
# The randomizer consumes the same three words per record as the Numba kernel (its uniform choices take a
# whole 64-bit word: ``uniform64``); decoding is a plain NumPy evaluation of ``bool(φ(j))`` for every ``j``.


def uniform64(word, m):
    """Cell of ``m`` chosen by a 64-bit word: ``floor(w·m / 2**64)`` in Python integers."""
    return (int(word) * m) >> 64


def record(v, w_b, w_f, w_t, p, a, t_b, phi1_bug=False):
    """One report ``(φ0, φ1)`` of category ``v`` (``-1``: unknown), following Algorithm 3 literally.

    ``phi1_bug=True`` plants a value-dependent φ1 (odd categories only ever send odd φ1): a negative control.
    """
    j = v + 1
    b = (int(w_b) >> 11) < t_b
    phi1 = uniform64(w_f, p)
    if phi1_bug and j % 2 == 1:
        phi1 |= 1
        phi1 %= p
    t = uniform64(w_t, a) if b else a + uniform64(w_t, p - a)
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


# -- hierarchical histograms ---------------------------------------------------------------------------------
# The client kernels with Python ints from the same words (offset layout: ``hierarchy``; packed layout with
# OLH levels: ``hierarchy_packed``), the packed aggregate decoded report by report, the minimal node cover by
# recursion, dense least squares (KKT, numpy.linalg), the non-negative tree by enumerating active sets (tiny
# trees) or through SLSQP, and the exact variance of an unbiased ("none") range answer.


def leaf(x, low, high, n_leaves):
    return min(int(unit(x, low, high) * float(n_leaves)), n_leaves - 1)


def hierarchy(x, low, high, n_leaves, table, words):
    """Reference for ``hierarchy_kernel``: table rows ``[kind, m, node_size, offset, keep, shift, lie_shift]``, kind 0
    GRR over ``m`` nodes (word 2i), 2 Hadamard response with ``K = 2**m`` (words 2i, 2i + 1); the level from
    word 2i + 1 (the shift is only the kernel's fast path; the reference divides)."""
    L = len(table)
    out = []
    for i, v in enumerate(x):
        t = leaf(v, low, high, n_leaves)
        w0, w1 = int(words[2 * i]), int(words[2 * i + 1])
        lev = ((w1 & LOW16) * L) >> 16
        kind, m, size, offset, keep, _, lie_shift = (int(c) for c in table[lev])
        assert kind in (0, 2)
        code = grr_one(t // size, w0, m, keep, lie_shift) if kind == 0 else hadamard_one(t // size, w0, w1, m, keep)
        out.append(offset + code)
    return np.array(out)


def hierarchy_packed(x, low, high, n_leaves, table, words):
    """Reference for ``hierarchy_packed_kernel``: word 3i the seed, 3i+1 GRR's word (or Hadamard response's
    keep coin), 3i+2 Hadamard response's index and the level; report ``seed | level << 12 | y`` (OLH level, kind 1) or ``code << 16 | level << 12`` (GRR,
    kind 0, or Hadamard response, kind 2)."""
    L = len(table)
    out = []
    for i, v in enumerate(x):
        t = leaf(v, low, high, n_leaves)
        ws, wk, wl = (int(w) for w in words[3 * i:3 * i + 3])
        lev = ((wl & LOW16) * L) >> 16
        kind, m, size, _, keep, _, lie_shift = (int(c) for c in table[lev])
        node = t // size
        if kind == 1:
            a, b = ws >> 40, (ws >> 16) & ((1 << 24) - 1)
            y = grr_one(local_hash(a, b, node, m), wk, m, keep, lie_shift)
            out.append((ws >> 16 << 16) | (lev << 12) | y)
        else:
            assert kind in (0, 2)
            code = grr_one(node, wk, m, keep, lie_shift) if kind == 0 else hadamard_one(node, wk, wl, m, keep)
            out.append((code << 16) | (lev << 12))
    return np.array(out, dtype=np.uint64)


def aggregate_packed(codes, ks, gs):
    """Aggregate of packed reports: per level ``l``, when ``gs[l] == 0`` (GRR or Hadamard) the histogram of
    its ``ks[l]`` codes, else (OLH with hash range ``gs[l]`` over ``ks[l]`` nodes) the support count of every
    node and then ``n_l``."""
    codes = [int(c) for c in codes]
    blocks = []
    for l, (k, g) in enumerate(zip(ks, gs)):
        mine = [c for c in codes if (c >> 12) & 0xF == l]
        if g:
            block = [0] * (k + 1)
            for c in mine:
                a, b, y = c >> 40, (c >> 16) & ((1 << 24) - 1), c & 0xFFF
                for v in range(k):
                    block[v] += local_hash(a, b, v, g) == y
            block[k] = len(mine)
        else:
            block = [0] * k
            for c in mine:
                assert c & 0xFFF == 0
                block[c >> 16] += 1
        blocks += block
    return np.array(blocks, dtype=np.int64)


# -- the tree ----------------------------------------------------------------------------------------------

def nodes(shape):
    """``[(level, index, first_leaf, stop_leaf)]`` of every node below the root, level by level."""
    out = []
    for l in range(1, shape.n_levels + 1):
        size = shape.node_sizes[l]
        for j in range(shape.counts[l]):
            out.append((l, j, j * size, min((j + 1) * size, shape.n_leaves)))
    return out


def leaf_matrix(shape):
    """Dense ``A``: row per node below the root (level by level), 1 where the node holds the leaf."""
    rows = nodes(shape)
    A = np.zeros((len(rows), shape.n_leaves))
    for r, (_, _, a, b) in enumerate(rows):
        A[r, a:b] = 1.0
    return A


def cover(shape, a, b):
    """Minimal node cover of leaves ``[a, b)`` as ``{level: [node indices]}``, recursively from the root:
    a node inside the range is taken whole, a node partly inside is split into its children."""
    out = {}

    def visit(l, j):
        size = shape.node_sizes[l]
        lo, hi = j * size, min((j + 1) * size, shape.n_leaves)
        if hi <= a or lo >= b:
            return
        if a <= lo and hi <= b:
            out.setdefault(l, []).append(j)
            return
        for c in range(j * shape.branching, min((j + 1) * shape.branching, shape.counts[l + 1])):
            visit(l + 1, c)

    if a < b:
        visit(0, 0)
    return out


def _kkt_solve(A, w, obs, root, free):
    """Minimise sum w (A θ - obs)^2 subject to sum θ = root and θ_i = 0 outside ``free``."""
    Af = A[:, free]
    H = Af.T @ (w[:, None] * Af)
    m = Af.shape[1]
    K = np.zeros((m + 1, m + 1))
    K[:m, :m] = H
    K[:m, m] = 1.0
    K[m, :m] = 1.0
    rhs = np.concatenate([Af.T @ (w * obs), [root]])
    sol = np.linalg.solve(K, rhs)
    theta = np.zeros(A.shape[1])
    theta[free] = sol[:m]
    return theta


def _levels(shape, theta):
    from ldpnum.estimation.consistency import tree_from_leaves

    return tree_from_leaves(shape, theta)


def _flat_obs(shape, estimates, variances):
    obs = np.concatenate([np.asarray(e, float) for e in estimates[1:]])
    var = np.concatenate([np.broadcast_to(np.asarray(v, float), (c,))
                          for v, c in zip(variances[1:], shape.counts[1:])])
    return obs, var


def dense_least_squares(shape, estimates, variances, root=1.0):
    A = leaf_matrix(shape)
    obs, var = _flat_obs(shape, estimates, variances)
    theta = _kkt_solve(A, 1.0 / var, obs, root, np.arange(shape.n_leaves))
    return _levels(shape, theta)


def objective(shape, levels, estimates, variances):
    obs, var = _flat_obs(shape, estimates, variances)
    x = np.concatenate([np.asarray(v, float) for v in levels[1:]])
    return float(np.sum((x - obs) ** 2 / var))


def dense_nonnegative(shape, estimates, variances, root=1.0):
    """Enumerate every free set; keep the feasible equality-constrained solution of least objective."""
    A = leaf_matrix(shape)
    obs, var = _flat_obs(shape, estimates, variances)
    w = 1.0 / var
    best = None
    n = shape.n_leaves
    for r in range(1, n + 1):
        for free in itertools.combinations(range(n), r):
            theta = _kkt_solve(A, w, obs, root, np.array(free))
            if theta.min() < -1e-13:
                continue
            theta = np.maximum(theta, 0.0)
            f = float(np.sum(w * (A @ theta - obs) ** 2))
            if best is None or f < best[0]:
                best = (f, theta)
    return _levels(shape, best[1])


def slsqp_nonnegative(shape, estimates, variances, root=1.0):
    from scipy.optimize import minimize

    A = leaf_matrix(shape)
    obs, var = _flat_obs(shape, estimates, variances)
    w = 1.0 / var
    scale = w.max()
    fun = lambda t: 0.5 * np.sum(w / scale * (A @ t - obs) ** 2)  # noqa: E731
    jac = lambda t: A.T @ (w / scale * (A @ t - obs))  # noqa: E731
    n = shape.n_leaves
    res = minimize(fun, np.full(n, root / n), jac=jac, method="SLSQP", bounds=[(0, None)] * n,
                   constraints=[{"type": "eq", "fun": lambda t: t.sum() - root, "jac": lambda t: np.ones(n)}],
                   options={"ftol": 1e-15, "maxiter": 2000})
    return _levels(shape, np.maximum(res.x, 0.0)), res


def adaptive_leaves(shape, raw, variances, tree, c):
    """AHEAD's threshold rule, node by node: descend from the root through nodes whose raw estimate is at least
    ``c`` standard deviations of their level; a node below it gets its tree value spread evenly over its leaves."""
    leaves = [float(v) for v in tree[-1]]
    L = shape.n_levels

    def visit(l, j):
        size = shape.node_sizes[l]
        first, stop = j * size, min((j + 1) * size, shape.n_leaves)
        if raw[l][j] < c * math.sqrt(variances[l - 1]):
            for i in range(first, stop):
                leaves[i] = tree[l][j] / (stop - first)
            return
        if l < L:
            for child in range(j * shape.branching, min((j + 1) * shape.branching, shape.counts[l + 1])):
                visit(l + 1, child)

    for j in range(shape.counts[1]):
        visit(1, j)
    return np.array(leaves)


# -- exact variance of an unbiased range answer ------------------------------------------------------------

def none_range_variance(shape, leaves_of_people, a, b, n_per_level, support, hashed=()):
    """Exact ``Var(answer | n_1..n_L)`` of the ``"none"`` answer for leaves ``[a, b)``, GRR levels, and OLH or
    Hadamard levels (``l`` in ``hashed``) where the cover takes at most one node.

    ``leaves_of_people``: each person's leaf; ``support[l-1] = (p, q)`` of level ``l``'s GRR. Given the level
    sizes, levels are a uniform random partition of the people; the answer is
    ``T = sum_l (I_l / n_l - s_l q_l) / (p_l - q_l)`` with ``I_l`` the reports at level ``l`` in the cover's
    ``s_l`` nodes. ``Var T = E[Var(T | partition)] + Var(E[T | partition])``: the first is the oracles' noise
    (independent people), the second the partition's (a linear statistic of a random partition, exact
    second moments of the group indicators).
    """
    cov = cover(shape, a, b)
    n = len(leaves_of_people)
    t = np.asarray(leaves_of_people)
    L = shape.n_levels
    ind = np.zeros((L, n))
    oracle = 0.0
    for l in range(1, L + 1):
        chosen = cov.get(l, [])
        if not chosen:
            continue
        nl = n_per_level[l - 1]
        p, q = support[l - 1]
        s = len(chosen)
        # An OLH or Hadamard report supports one node w.p. p (its own) or q (any other): a Bernoulli, as
        # GRR's; but one report's supports of several nodes are not GRR's (they may support several), so s = 1.
        assert l not in hashed or s == 1, "OLH / Hadamard levels: one node per level"
        ind[l - 1] = np.isin(t // shape.node_sizes[l], chosen)
        F = ind[l - 1].mean()
        pi1, pi0 = p + (s - 1) * q, s * q
        oracle += (nl * F * pi1 * (1 - pi1) + nl * (1 - F) * pi0 * (1 - pi0)) / (nl * (p - q)) ** 2
    nl = np.array(n_per_level, float)
    c = ind / nl[:, None]                 # c[l, i] = a_i^l / n_l
    C = c.sum(axis=1)
    Q = c @ c.T
    sampling = 0.0
    for l in range(L):
        for m in range(L):
            d = 1.0 if l == m else 0.0
            same = d * nl[l] / n - nl[l] * nl[m] / n**2
            other = nl[l] * (nl[m] - d) / (n * (n - 1)) - nl[l] * nl[m] / n**2
            sampling += Q[l, m] * same + (C[l] * C[m] - Q[l, m]) * other
    return oracle + sampling


def prefix_hash_one(p, a, b, g):
    """The prefix protocols' hash in Python ints: ``floor(mix64(a·p + b mod 2**64) · g / 2**64)``."""
    z = (int(a) * int(p) + int(b)) % 2**64
    for mult in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        z ^= z >> 33
        z = (z * mult) % 2**64
    z ^= z >> 33
    return (z * g) >> 64


def prefix_word(v, item_bits, length, digest_key=None):
    """The one word a prefix protocol hashes for item ``v`` (a Python int) at prefix length ``length``: the prefix
    ``v >> (item_bits - length)`` up to 64 bits, else its digest under ``digest_key`` (two ints,
    :func:`digest64`)."""
    p = int(v) >> (item_bits - int(length))
    if length <= 64:
        return p
    return digest64(digest_key, p, -(-int(length) // 64))


def digest64(key, p, m, finalize=True):
    """The digest of a prefix ``p`` of ``m`` 64-bit digits (``m >= 2``) under the public ``key`` (two ints), written
    from its definition: ``h = K0 ^ m·C3``; for the four digits of ``p``, most significant first,
    ``h = rotl(h ^ d·C2, 31)·C1``; then MurmurHash3's fmix64 of ``h ^ K1`` (all mod 2**64; ``finalize=False``
    leaves the finalizer out, a planted weakness for the tests' negative controls)."""
    c1, c2, c3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
    h = int(key[0]) ^ (m * c3) & _M64
    for t in (3, 2, 1, 0):
        h ^= ((p >> (64 * t)) & _M64) * c2 & _M64
        h = _rotl(h, 31) * c1 & _M64
    h ^= int(key[1])
    if not finalize:
        return h
    for mult in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        h ^= h >> 33
        h = h * mult & _M64
    return h ^ (h >> 33)


def prefix_reports(items, item_bits, lengths, n_hashes, hash_a, hash_b, g, a_keep, shift, words, digest_key=None):
    """PEM / TreeHist reports one record at a time: group and hash index from word 2i, the group's prefix
    (its digest above 64 bits, :func:`prefix_word`) hashed and randomized by GRR with word 2i + 1; code
    ``(j·H + h)·g + y``. Items are Python ints of any width."""
    out = []
    for i, v in enumerate(items):
        w = int(words[2 * i])
        j = ((w >> 16) * len(lengths)) >> 48
        h = w & (n_hashes - 1)
        p = prefix_word(v, item_bits, int(lengths[j]), digest_key)
        y = grr_one(prefix_hash_one(p, hash_a[h], hash_b[h], g), words[2 * i + 1], g, a_keep, shift)
        out.append((j * n_hashes + h) * g + y)
    return np.array(out, dtype=np.int64)


def prefix_search(counts, lengths, hash_a, hash_b, g, p_star, q_star, n_candidates, top_k):
    """The prefix-extending search with Python loops and dicts: ``(items, frequencies)`` best first."""
    cands = list(range(2 ** int(lengths[0])))
    for j in range(len(lengths)):
        if j:
            d = int(lengths[j]) - int(lengths[j - 1])
            cands = [(c << d) | e for c in cands for e in range(2**d)]
        n_j = counts[j].sum()
        est = {}
        for c in cands:
            support = sum(int(counts[j, h, prefix_hash_one(c, hash_a[h], hash_b[h], g)])
                          for h in range(counts.shape[1]))
            est[c] = (support / n_j - q_star) / (p_star - q_star)
        keep = top_k if j == len(lengths) - 1 else n_candidates
        cands = sorted(cands, key=lambda c: (-est[c], c))[:keep]
    return cands, [est[c] for c in cands]


# -- vectors ------------------------------------------------------------------------------------------------

def sampled_coordinates(words, n, d, k, c):
    """Each record's sorted ``k`` coordinates of ``d``: :func:`floyd` on the 48-bit picks of words
    ``c*i .. c*i + k - 1``."""
    out = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        draws = [((int(words[c * i + t]) >> 16) * (d - k + t + 1)) >> 48 for t in range(k)]
        out[i] = sorted(floyd(draws, d))
    return out


def duchi_multivariate(X, lows, highs, t_hi, words):
    """Duchi et al.'s sign mechanism in plain NumPy on the kernel's words: signs ``v`` (one word per coordinate,
    threshold ``floor(u 2**53)``), uniform bits ``a`` (``ceil(d/64)`` words), ``a`` put on the side ``Σa > 0``
    and kept there with probability ``t_hi/2**53`` (last word), ties kept; report bits ``z = (v == a)``."""
    n, d = X.shape
    nb = -(-d // 64)
    W = words.reshape(n, d + nb + 1)
    u = np.clip((X - lows) * (1.0 / (highs - lows)), 0.0, 1.0)
    v = (W[:, :d] >> np.uint64(11)).astype(np.int64) < (u * 2.0**53).astype(np.int64)
    j = np.arange(d)
    a = ((W[:, d + j // 64] >> (j % 64).astype(np.uint64)) & np.uint64(1)).astype(bool)
    s = 2 * a.sum(axis=1) - d
    keep = (W[:, -1] >> np.uint64(11)).astype(np.int64) < t_hi
    flip = np.where(s < 0, keep, np.where(s > 0, ~keep, False))
    z = v == (a ^ flip[:, None])
    return np.packbits(z, axis=1, bitorder="little")


# -- unit vectors (ldpnum.vectors.unit): the public family and the samplers, record by record ----------------
M64 = (1 << 64) - 1


def splitmix64(x):
    """SplitMix64's output function in Python integers."""
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def ziggurat_tables():
    """The family's ziggurat (256 layers, R = 3.6541528853610088): layer area V, edges x_0..x_256 and heights
    exp(-x_i²/2) (F_256 = 1), from their definition in float64."""
    r = 3.6541528853610088
    f = lambda t: math.exp(-0.5 * t * t)
    v = r * f(r) + math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))
    x = [v / f(r), r]
    while len(x) < 256:
        x.append(math.sqrt(-2 * math.log(v / x[-1] + f(x[-1]))))
    x.append(0.0)
    return v, x, [f(t) for t in x[:256]] + [1.0]


def unit_gauss(seed, j, budget=2**16 - 2):
    """Coordinate j of g_seed in the family splitmix64-ziggurat/v2, read off its definition: the stream
    splitmix64(seed·2**32 + j·2**16 + r), r = 0, 1, ..., through Marsaglia and Tsang's ziggurat (Python
    integers and floats). The ziggurat reads at most ``budget`` words, then Box-Muller takes the next two."""
    _, x, F = ziggurat_tables()
    R = x[1]
    words = (splitmix64((seed << 32) + (j << 16) + r) for r in range(budget))
    try:
        while True:
            h = next(words)
            i, neg, k = h & 255, (h >> 8) & 1, h >> 11
            v = k * (x[i] / 2.0**53)
            if v < x[i + 1]:
                return -v if neg else v
            if i == 0:
                while True:
                    a = -math.log(((next(words) >> 11) + 1) / 2.0**53) / R
                    b = -math.log(((next(words) >> 11) + 1) / 2.0**53)
                    if a * a < 2 * b:
                        return -(R + a) if neg else R + a
            u = (next(words) >> 11) / 2.0**53
            if F[i] + u * (F[i + 1] - F[i]) < math.exp(-v * v / 2):
                return -v if neg else v
    except StopIteration:  # the budget is spent: Box-Muller on the next two words
        u1 = ((splitmix64((seed << 32) + (j << 16) + budget) >> 11) + 1) / 2.0**53
        u2 = (splitmix64((seed << 32) + (j << 16) + budget + 1) >> 11) / 2.0**53
        return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


def unit_direction(seed, d):
    """g_seed of the family splitmix64-ziggurat/v2 (d coordinates), from its definition."""
    return np.array([unit_gauss(seed, j) for j in range(d)])


def sphere_point(x, word):
    """The rounded sphere point w of a row: ±x/‖x‖ kept with probability floor((1 + r)/2 · 2**53)/2**53."""
    r = float(np.sqrt(np.dot(x, x)))
    keep = int(np.floor((1.0 + min(r, 1.0)) * 0.5 * 2.0**53))
    w = x / r if r > 0 else np.eye(len(x))[0]
    return w if (int(word) >> 11) < keep else -w


def privhs(X, words, m, t_hi):
    """PrivHS reports (n, m): 2s + b, three words per copy."""
    n, d = X.shape
    out = np.empty((n, m), dtype=np.uint32)
    for i in range(n):
        for t in range(m):
            base = 3 * (i * m + t)
            w = sphere_point(X[i], words[base])
            s = int(words[base + 1]) >> 33
            b = int(np.dot(unit_direction(s, d), w) >= 0)
            if (int(words[base + 2]) >> 11) >= t_hi:
                b ^= 1
            out[i, t] = 2 * s + b
    return out


def rejection(X, words, m, n_trials, sphere, gamma, t_c):
    """Compressed PrivUnit (sphere) / PrivUnitG reports (n, m) and the trials each used."""
    n, d = X.shape
    out = np.empty((n, m), dtype=np.uint32)
    used = np.empty((n, m), dtype=np.int64)
    for i in range(n):
        for t in range(m):
            base = (n_trials + 2) * (i * m + t)
            w = sphere_point(X[i], words[base])
            out[i, t], used[i, t] = int(words[base + 1 + n_trials]) >> 32, n_trials + 1
            for k in range(n_trials):
                word = int(words[base + 1 + k])
                g = unit_direction(word >> 32, d)
                inside = np.dot(g, w) >= (gamma * np.linalg.norm(g) if sphere else gamma)
                if inside or (word & 0xFFFFFFFF) < t_c:
                    out[i, t], used[i, t] = word >> 32, k + 1
                    break
    return out, used


def admissible_prefix(prefix, length, item_type):
    """Whether one ``length``-bit prefix can begin a real str/bytes item's encoding, byte by byte: any prefix
    for bytes (zero bytes may stand anywhere in a bytes item); for str no zero byte before a non-zero one
    (counting the first bits of a begun next byte) and valid UTF-8 up to an incomplete character at the end."""
    if item_type == "bytes":
        return True
    n_bytes, n_partial = divmod(length, 8)
    raw = (int(prefix) >> n_partial).to_bytes(n_bytes, "big")
    stripped = raw.rstrip(b"\x00")
    if b"\x00" in stripped or ((int(prefix) & ((1 << n_partial) - 1)) and b"\x00" in raw):
        return False
    if item_type == "str":
        try:
            stripped.decode("utf-8")
        except UnicodeDecodeError as exc:
            return exc.reason == "unexpected end of data" and exc.end == len(stripped)
    return True


def marginals_reports(plan, X, words):
    """Marginals' reports, record by record in Python ints: the column set from word 3i (multiply-shift), the
    row-major cell of the record's values in it, GRR from word 3i+2 over the cells (GRR sets) or over the hash
    range of the cell's hashed value under seed word 3i+1 (OLH sets)."""
    out = []
    for i, row in enumerate(np.asarray(X).astype(int)):
        j = ((int(words[3 * i]) >> 16) * plan.m) >> 48
        cell = 0
        for a in plan.grids[j]:
            cell = cell * plan.categories[a] + int(row[a])
        o = plan.oracles[j]
        _, size, keep, shift = o.kernel_row()
        if o.hashed:
            y = grr_one(o.hashed_value(cell, int(words[3 * i + 1])), words[3 * i + 2], size, keep, shift)
            out.append(plan.report(j, y, int(words[3 * i + 1])))
        else:
            out.append(plan.report(j, grr_one(cell, words[3 * i + 2], size, keep, shift)))
    return out


def hadamard_frame(d, D, pos, sign):
    """SQKR's frame as a dense ``d × D`` matrix ``U``: ``U[m] = sign[m] · H[pos[m]] / √D`` (``H`` Sylvester)."""
    from scipy.linalg import hadamard

    return sign[:, None] * hadamard(D)[pos].astype(float) / np.sqrt(D)


def kashin(x, U, level, truncation, iterations):
    """Lyubarskii–Vershynin truncation with a running-level cap, then the exact residual, for one row (dense U):
    ``(a, clipped)``, as SQKR's module describes it."""
    a = np.zeros(U.shape[1])
    xt = np.array(x, dtype=float)
    D = U.shape[1]
    for _ in range(iterations):
        r = np.linalg.norm(xt)
        cut = truncation * r / np.sqrt(D)
        b = np.clip(U.T @ xt, np.maximum(-cut, -level - a), np.minimum(cut, level - a))
        a += b
        xt = xt - U @ b
    a = a + U.T @ xt
    clipped = bool(np.any(np.abs(a) > level * (1 + 1e-9)))
    return np.clip(a, -level, level), clipped


def sqkr(X, words, U, level, truncation, iterations, k, frame_bits, a_keep, shift):
    """SQKR reports, one record at a time in Python ints: seed, k coordinates from SplitMix64, quantized bits, GRR."""
    out = np.empty(len(X), dtype=np.uint64)
    for i, x in enumerate(X):
        a, _ = kashin(x, U, level, truncation, iterations)
        base = (k + 2) * i
        seed = int(words[base]) >> k
        bits = 0
        for t in range(k):
            j = splitmix64((seed + t * 0x9E3779B97F4A7C15) & M64) >> (64 - frame_bits)
            thr = int(np.floor((1.0 + a[j] / level) * 0.5 * 2.0**53))
            if (int(words[base + 1 + t]) >> 11) < thr:
                bits |= 1 << t
        out[i] = (seed << k) | grr_one(bits, words[base + 1 + k], 1 << k, a_keep, shift)
    return out


# -- longitudinal: SipHash-2-4, the keyed pseudo-random function of memoized responses ----------------------

_M64 = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _M64


def siphash24(key, msg):
    """SipHash-2-4 of the bytes ``msg`` under the 16-byte ``key``, as Aumasson and Bernstein specify it (any
    length; the kernel hashes 24-byte messages only)."""
    return siphash(key, msg, 2, 4)


def siphash13(key, msg):
    """SipHash-1-3 (one round per message word, three to finalize; CPython's hash of str and bytes since 3.11)."""
    return siphash(key, msg, 1, 3)


def siphash(key, msg, c, d):
    """SipHash-c-d of the bytes ``msg`` under the 16-byte ``key`` (any length)."""
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:16], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def sip_round():
        v[0] = (v[0] + v[1]) & _M64
        v[1] = _rotl(v[1], 13) ^ v[0]
        v[0] = _rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & _M64
        v[3] = _rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & _M64
        v[3] = _rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & _M64
        v[1] = _rotl(v[1], 17) ^ v[2]
        v[2] = _rotl(v[2], 32)

    n = len(msg)
    full = n - n % 8
    blocks = [int.from_bytes(msg[i:i + 8], "little") for i in range(0, full, 8)]
    blocks.append(int.from_bytes(msg[full:], "little") | ((n & 0xFF) << 56))
    for m in blocks:
        v[3] ^= m
        for _ in range(c):
            sip_round()
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(d):
        sip_round()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def keyed_words(key_bytes, tweak, memo, c):
    """The memoized layer's words of one person: ``SipHash-2-4_key(tweak ‖ memo ‖ j)`` for ``j < c``."""
    return [siphash24(key_bytes, int(tweak).to_bytes(8, "little") + int(memo).to_bytes(8, "little")
                      + j.to_bytes(8, "little")) for j in range(c)]


# -- longitudinal: RAPPOR (ldpnum.longitudinal.rappor), person by person, bit by bit -------------------------

def rappor_bloom(bloom_key, cohort, word, h, k):
    """Positions of the ``h`` hash functions of item ``word`` in ``cohort``: ``SipHash_K(c ‖ w ‖ j) · k >> 64``."""
    return [siphash24(bloom_key, int(cohort).to_bytes(8, "little") + int(word).to_bytes(8, "little")
                      + j.to_bytes(8, "little")) * k >> 64 for j in range(h)]


def rappor_lane_bits(words, k, lane_bits, t):
    """``k`` Bernoulli bits: bit ``s`` is lane ``s % L`` (``L = 64 / lane_bits``) of word ``s // L`` below ``t``."""
    per = 64 // lane_bits
    mask = (1 << lane_bits) - 1
    return [int((int(words[s // per]) >> (lane_bits * (s % per))) & mask < t) for s in range(k)]


def rappor_reports(words_items, key_bytes, tweak, cohort_tweak, bloom_key, k, h, cohorts, lane_bits, t_f, t_p, t_q,
                   fresh):
    """Each person's report row (``k/8`` bytes of bits, then the cohort little-endian), from their key: the cohort
    from one keyed word, the Bloom filter, ``B' = B XOR noise(t_f)`` from keyed words, then each bit below ``t_q``
    or ``t_p`` by its permanent bit, from ``fresh`` (``c = k·lane_bits/64`` words per person)."""
    c = k * lane_bits // 64
    cohort_bytes = -(-max(1, (cohorts - 1).bit_length()) // 8)
    rows = []
    for i, w in enumerate(words_items):
        key = key_bytes[16 * i:16 * i + 16]
        cohort = keyed_words(key, cohort_tweak, 0, 1)[0] * cohorts >> 64
        bloom = [0] * k
        for pos in rappor_bloom(bloom_key, cohort, w, h, k):
            bloom[pos] = 1
        noise = rappor_lane_bits(keyed_words(key, tweak, w, c), k, lane_bits, t_f)
        perm = [b ^ z for b, z in zip(bloom, noise)]
        lanes = fresh[c * i:c * i + c]
        high, low = rappor_lane_bits(lanes, k, lane_bits, t_q), rappor_lane_bits(lanes, k, lane_bits, t_p)
        bits = [hi if z else lo for z, hi, lo in zip(perm, high, low)]
        row = [sum(bits[8 * b + j] << j for j in range(8)) for b in range(k // 8)]
        rows.append(row + [(cohort >> (8 * b)) & 0xFF for b in range(cohort_bytes)])
    return np.array(rows, dtype=np.uint8).reshape(len(words_items), k // 8 + cohort_bytes)


# -- L-OSUE (ldpnum.longitudinal.losue): the instantaneous bit flip, one lane at a time --------------------------

def bit_flip(bits, k, lane_bits, t_zero, t_one, words, mutant=None, sparse=None):
    """Packed ``(n, ceil(k/8))`` outputs of the bit flip: output bit ``s`` of record ``i`` is lane ``s % L`` of word
    ``c·i + s // L`` (``c = ceil(k/8)·lane_bits/8``, ``L = 64 // lane_bits``) compared with ``t_one`` if input bit
    ``s`` is 1, else with ``t_zero``. ``mutant="keep"`` plants a flip that copies input 1 bits unchanged.
    ``sparse``: the plan's ``SparseBits``; the bits then come from :func:`sparse_bits` with the input bits as the
    selectors (``c`` = its words)."""
    bits = np.asarray(bits, dtype=np.uint8)
    n_bytes = -(-k // 8)
    c = n_bytes * lane_bits // 8 if sparse is None else sparse.words
    per_word = 64 // lane_bits
    mask = (1 << lane_bits) - 1
    out = np.zeros((bits.shape[0], n_bytes), dtype=np.uint8)
    for i in range(bits.shape[0]):
        if sparse is not None:
            z = [(int(bits[i, s // 8]) >> (s % 8)) & 1 for s in range(8 * n_bytes)]
            high0, high1, lane0, lane1 = sparse.thresholds()
            y = sparse_bits(8 * n_bytes, sparse.levels, high0, sparse.lane_bits, lane0, sparse.pool_words,
                            words[c * i: c * i + c], select=z, t_high_one=high1, t_lane_one=lane1)
            for s in range(k):
                if mutant == "keep" and z[s]:
                    y[s] = 1
                if y[s]:
                    out[i, s // 8] |= 1 << (s % 8)
            continue
        for s in range(k):
            z = (int(bits[i, s // 8]) >> (s % 8)) & 1
            w = int(words[c * i + s // per_word])
            lane = (w >> (lane_bits * (s % per_word))) & mask
            y = 1 if lane < (t_one if z else t_zero) else 0
            if mutant == "keep" and z:
                y = 1
            if y:
                out[i, s // 8] |= 1 << (s % 8)
    return out


# -- LOLOHA (ldpnum.longitudinal.loloha): a hash chosen from a keyed word, GRR on the hashed value ---------------

def loloha_reports(values, key_bytes, hash_tweak, tweak, g, perm, inst, fresh):
    """LOLOHA reports record by record in Python ints: the seed is the keyed word ``SipHash(key, hash_tweak ‖ 0 ‖
    0)``, ``h = h_seed(v)`` (``-1`` for an unknown value), the permanent ``z = GRR_g(h)`` from the keyed word
    ``SipHash(key, tweak ‖ h mod 2**64 ‖ 0)`` with ``perm = (a_keep, shift)``, then ``y = GRR_g(z)`` from
    ``fresh[i]`` with ``inst``; the report is ``seed bits | y``. Returns ``(memoized values, permanent codes,
    reports)``."""
    memo, permanent, out = [], [], []
    for i, v in enumerate(values):
        v = int(v)
        key = key_bytes[16 * i:16 * i + 16]
        seed = keyed_words(key, hash_tweak, 0, 1)[0]
        h = local_hash(seed >> 40, (seed >> 16) & ((1 << 24) - 1), v, g) if v >= 0 else -1
        m = h % 2**64
        z = grr_one(h, keyed_words(key, tweak, m, 1)[0], g, *perm)
        y = grr_one(z, fresh[i], g, *inst)
        high = seed & ~0xFFFF & (2**64 - 1)
        memo.append(m)
        permanent.append(high | z)
        out.append(high | y)
    return (np.array(memo, dtype=np.uint64), np.array(permanent, dtype=np.uint64), np.array(out, dtype=np.uint64))


# -- telemetry (ldpnum.longitudinal.telemetry): OneBitMean's α-point rounding and dBitFlip, record by record -----

def unit_value(x, low, high):
    """``x`` mapped to [0, 1] and clamped, with the kernels' float operations."""
    u = (x - low) * (1.0 / (high - low))
    return 0.0 if not u > 0.0 else min(u, 1.0)


def alpha_point_round(x, low, high, grid_points, alpha_word):
    """The grid index of ``x`` under α-point rounding: up within its grid step iff ``α·2**53 < ⌊f·2**53⌋``."""
    steps = grid_points - 1
    pos = unit_value(x, low, high) * steps
    base = int(pos)
    if base >= steps:
        return steps
    return base + ((int(alpha_word) >> 11) < int((pos - base) * 2.0**53))


def one_bit(u, t_lo, t_hi, word):
    """The two-output randomizer's bit at unit value ``u`` from one word."""
    threshold = min(t_lo + int(u * float(t_hi - t_lo)), t_hi)
    return int((int(word) >> 11) < threshold)


def memoized_one_bit_mean(x, low, high, grid_points, t_lo, t_hi, t_gamma, key_bytes, offset_tweak, tweak, words):
    """Reports of memoized 1BitMean, person by person: the offset's keyed word, α-point rounding, the keyed bit of
    the grid point, then the two-output randomizer of that bit at thresholds ``(t_gamma, 2**53 - t_gamma)`` from the
    person's fresh word (a flip with probability ``t_gamma/2**53``; none at ``t_gamma = 0``)."""
    out = []
    for i, v in enumerate(x):
        key = key_bytes[16 * i:16 * i + 16]
        j = alpha_point_round(v, low, high, grid_points, keyed_words(key, offset_tweak, 0, 1)[0])
        bit = one_bit(j / (grid_points - 1), t_lo, t_hi, keyed_words(key, tweak, j, 1)[0])
        if t_gamma:
            bit = one_bit(float(bit), t_gamma, 2**53 - t_gamma, words[i])
        out.append(bit)
    return out


def floyd_sorted(words, b, d):
    """Floyd's ``d``-subset of ``0..b-1`` from ``d`` words (pick ``r = ((w >> 16)·(j + 1)) >> 48`` at
    ``j = b - d + t``, or ``j`` if ``r`` is in), sorted."""
    chosen = set()
    for t in range(d):
        j = b - d + t
        r = ((int(words[t]) >> 16) * (j + 1)) >> 48
        chosen.add(j if r in chosen else r)
    return sorted(chosen)


def d_bit_flip_code(bucket, sample, bit_words, t_lo, t_hi, width):
    """One dBitFlip code: field ``t`` is ``sample[t] << 1 | bit`` at bit ``t·width``; the bit of field ``t`` is
    the low (``t`` even) or high (odd) 32-bit half of ``bit_words[t // 2]`` below ``t_hi >> 21`` (its bucket) or
    ``t_lo >> 21`` (another)."""
    code = 0
    for t, j in enumerate(sample):
        word = int(bit_words[t // 2])
        half = word >> 32 if t % 2 else word & 0xFFFFFFFF
        bit = int(half < ((t_hi if j == bucket else t_lo) >> 21))
        code |= (j << 1 | bit) << (t * width)
    return code


@functools.lru_cache(maxsize=8)
def _subsets(b, d):
    return list(itertools.combinations(range(b), d))


def rank_sample(word, b, d):
    """The ``d``-subset of ``0..b-1`` of rank ``floor(word·C(b, d)/2**64)`` in lexicographic order."""
    subsets = _subsets(b, d)
    return list(subsets[(int(word) * len(subsets)) >> 64])


def d_bit_flip_sample(words, b, d):
    """dBitFlip's sample from its words: by rank from one word when ``C(b, d) ≤ 2**16``, else Floyd's from ``d``."""
    return rank_sample(words[0], b, d) if math.comb(b, d) <= 1 << 16 else floyd_sorted(words[:d], b, d)


def d_bit_flip(x, low, high, b, d, t_lo, t_hi, words):
    """One-shot dBitFlip reports: the sample's words (1 or ``d``), then ``ceil(d/2)`` words of bits, per person."""
    width = (b - 1).bit_length() + 1
    n_sample = 1 if math.comb(b, d) <= 1 << 16 else d
    c = n_sample + (d + 1) // 2
    out = []
    for i, v in enumerate(x):
        bucket = min(int(unit_value(v, low, high) * b), b - 1)
        w = words[c * i:c * (i + 1)]
        out.append(d_bit_flip_code(bucket, d_bit_flip_sample(w, b, d), w[n_sample:], t_lo, t_hi, width))
    return out


def memoized_d_bit_flip(x, low, high, b, d, t_lo, t_hi, t_gamma, key_bytes, sample_tweak, tweak, words):
    """Memoized dBitFlip reports: the sample from keyed words of the person alone, the bits from ``ceil(d/2)`` keyed
    words of their bucket, then each bit flipped with probability ``t_gamma/2**53`` from the person's ``d`` fresh
    words."""
    width = (b - 1).bit_length() + 1
    out = []
    for i, v in enumerate(x):
        key = key_bytes[16 * i:16 * i + 16]
        bucket = min(int(unit_value(v, low, high) * b), b - 1)
        sample = d_bit_flip_sample(keyed_words(key, sample_tweak, 0, d), b, d)
        code = d_bit_flip_code(bucket, sample, keyed_words(key, tweak, bucket, (d + 1) // 2), t_lo, t_hi, width)
        if t_gamma:
            for t in range(d):
                if (int(words[d * i + t]) >> 11) < t_gamma:
                    code ^= 1 << (t * width)
        out.append(code)
    return out


# -- projective geometry response --------------------------------------------------------------------------

def projective_points(q, t):
    """Every point of PG(t-1, q) in canonical form, in index order: the leading 1 at position ``t - 1 - s``
    followed by the ``s``-digit base-q numbers in increasing order, for ``s = 0, 1, ...``."""
    points = []
    for s in range(t):
        for r in range(q**s):
            tail = [(r // q**(s - 1 - i)) % q for i in range(s)]
            points.append(tuple([0] * (t - 1 - s) + [1] + tail))
    return points


def _canonical(x, q):
    lead = next(c for c in x if c)
    inv = pow(lead, q - 2, q) if q > 2 else 1
    return tuple(c * inv % q for c in x)


def pgr(values, q, t, h, t_in, words):
    """PGR reports from the same 2 words per person as the kernel: the coin, then a cell of the hyperplane
    (a point of PG(t-2, q) lifted with ``x_j`` solved, ``j`` the last nonzero of the person's point) or of its
    complement (``t - 1`` digits with ``<x, v> = 1``, or a code of another block)."""
    pts = projective_points(q, t)
    index = {p: i for i, p in enumerate(pts)}
    low = projective_points(q, t - 1)
    b, c, own = len(pts), len(low), q ** (t - 1)
    n_codes, m_out = h * b, h * b - len(low)
    out = []
    for i, v in enumerate(values):
        w0, w1 = int(words[2 * i]), int(words[2 * i + 1])
        if v < 0:
            out.append((w1 * n_codes) >> 64)
            continue
        blk, pv = divmod(int(v), b)
        vec = pts[pv]
        j = max(r for r in range(t) if vec[r])
        inv_j = pow(vec[j], q - 2, q) if q > 2 else 1

        def lift(y, z):
            x = list(y[:j]) + [0] + list(y[j:])
            x[j] = (z - sum(x[r] * vec[r] for r in range(j))) * inv_j % q
            return index[_canonical(x, q)]

        if (w0 >> 11) < t_in:
            out.append(blk * b + lift(low[(w1 * c) >> 64], 0))
            continue
        o = (w1 * m_out) >> 64
        if o < own:
            out.append(blk * b + lift([(o // q**(t - 2 - r)) % q for r in range(t - 1)], 1))
        else:
            other, point = divmod(o - own, b)
            out.append((other + (other >= blk)) * b + point)
    return np.array(out, dtype=np.int64)


def pgr_supports(codes, q, t, k):
    """``I_v``: the reports in ``v``'s block whose point is orthogonal to ``v``'s, for every ``v < k``; O(n·k)."""
    pts = np.array(projective_points(q, t), dtype=np.int64)
    b = len(pts)
    codes = np.asarray(codes, dtype=np.int64)
    out = np.zeros(k, dtype=np.int64)
    for v in range(k):
        same = codes // b == v // b
        out[v] = np.count_nonzero(same & ((pts[codes % b] @ pts[v % b]) % q == 0))
    return out


# -- count-mean sketch (ldpnum.heavy.cms), person by person ---------------------------------------------------

def sketch_key_bytes(hash_seed):
    """The 16 bytes of the sketch family's SipHash key: SHA-256 of the tag and the seed (8 bytes, little-endian)."""
    import hashlib

    return hashlib.sha256(b"ldpnum/count-mean-sketch/v1" + int(hash_seed).to_bytes(8, "little")).digest()[:16]


def sparse_bits(n_bits, levels, t_high, lane_bits, t_lane, pool, record_words, select=None, t_high_one=None,
                t_lane_one=None):
    """The ``n_bits`` bits of ``ldpnum.frequency.unary.SparseBits``, one at a time in Python integers.

    Bit ``s`` compares bit ``s % 64`` of the ``levels`` mask words of its chunk with ``t_high``'s bits, from the top:
    at the first that differs it is 1 if ``t_high``'s bit is 1, else 0. If all agree, it is the ``r``-th alive bit
    (in bit order) and reads lane ``r % L`` of lane word ``r // L`` (``L = 64 // lane_bits``): word
    ``levels·chunks + r // L`` of the record while ``r // L < pool``, else SipHash-2-4 under the two words after
    the pool of ``SPARSE_TAG ‖ 0 ‖ r // L``; it is 1 iff that lane is below ``t_lane``. ``select``: a list of
    selector bits; where one is 1 the bit uses ``t_high_one`` and ``t_lane_one`` instead.
    """
    chunks = -(-n_bits // 64)
    rec = [int(w) for w in record_words]
    key = rec[levels * chunks + pool].to_bytes(8, "little") + rec[levels * chunks + pool + 1].to_bytes(8, "little")
    per_word = 64 // lane_bits
    bits, r = [], 0
    for s in range(n_bits):
        ch = s // 64
        one = select is not None and select[s]
        high, low = (t_high_one, t_lane_one) if one else (t_high, t_lane)
        decided = None
        for lvl in range(levels):
            mask_bit = (rec[ch * levels + lvl] >> (s % 64)) & 1
            t_bit = (high >> (levels - 1 - lvl)) & 1
            if mask_bit != t_bit:
                decided = t_bit
                break
        if decided is not None:
            bits.append(decided)
            continue
        i = r // per_word
        word = rec[levels * chunks + i] if i < pool else siphash(
            key, b"".join(v.to_bytes(8, "little") for v in (0x312D657372617073, 0, i)), 2, 4)
        lane = (word >> (lane_bits * (r % per_word))) & ((1 << lane_bits) - 1)
        bits.append(1 if lane < low else 0)
        r += 1
    return bits


def count_mean_sketch(values, key, hashes, width, lane_bits, t_other, t_true, words, unknown=None, sparse=None):
    """CMS report rows: ``width`` bits of SUE on ``h_j(v)`` then ``j`` little-endian (``c = 2 + width·lane_bits/64``
    words per record: the hash index, the true bit, the lanes). ``unknown``: the word reported as no value.
    ``sparse``: the plan's ``SparseBits``; the other bits then come from :func:`sparse_bits` (``c = 2 +`` its words)."""
    c = 2 + ((width // 8) * lane_bits // 8 if sparse is None else sparse.words)
    index_bytes = -(-max(1, (hashes - 1).bit_length()) // 8)
    out = np.zeros((len(values), width // 8 + index_bytes), dtype=np.uint8)
    for i, v in enumerate(values):
        rec = words[c * i: c * i + c]
        j = uniform(rec[0], hashes)
        pos = -1 if unknown is not None and int(v) == unknown else rappor_bloom(key, j, int(v), 1, width)[0]
        if sparse is None:
            bits = unary_bits(pos, width, lane_bits, t_other, t_true, rec[1:])
        else:
            bits = sparse_bits(width, sparse.levels, sparse.t_high, sparse.lane_bits, sparse.t_lane, sparse.pool_words,
                               rec[2:])
            if pos >= 0:
                bits[pos] = 1 if (int(rec[1]) >> 11) < t_true else 0
        for s, bit in enumerate(bits):
            if bit:
                out[i, s // 8] |= 1 << (s % 8)
        for b in range(index_bytes):
            out[i, width // 8 + b] = (j >> (8 * b)) & 0xFF
    return out


def hadamard_count_mean_sketch(values, key, hashes, width, t_keep, words, unknown=None):
    """HCMS codes ``(j·width + l)·2 + s``: word 0 gives ``j`` (bits 63..16) and ``l`` (low bits), word 1 keeps the
    sign ``(-1)^popcount(h_j(v) & l)`` (``s = 1`` for +1) or flips it; an unknown word gets a fair bit."""
    out = np.zeros(len(values), dtype=np.uint64)
    for i, v in enumerate(values):
        w0, w1 = int(words[2 * i]), int(words[2 * i + 1])
        j, col = uniform(w0, hashes), w0 & (width - 1)
        if unknown is not None and int(v) == unknown:
            s = 1 if (w1 >> 11) < (1 << 52) else 0
        else:
            pos = rappor_bloom(key, j, int(v), 1, width)[0]
            plus = 1 - (bin(pos & col).count("1") & 1)
            s = plus if bernoulli(w1, t_keep) else 1 - plus
        out[i] = (j * width + col) * 2 + s
    return out


def nonnegative_lasso(design, response, intercept, penalty, tol=1e-9, max_iter=100_000):
    """The non-negative Lasso of :func:`ldpnum.longitudinal.rappor.nonnegative_lasso` by plain proximal gradient
    (ISTA, no momentum) on the dense standardized design with the intercept projected out: ``(coef, iterations)``."""
    x = np.asarray(design.toarray() if hasattr(design, "toarray") else design, dtype=np.float64)
    norms = np.sqrt((x * x).sum(axis=0))
    u = intercept / np.linalg.norm(intercept)
    z = x / norms
    z = z - np.outer(u, u @ z)
    r0 = response - u * (u @ response)
    lip = np.linalg.norm(z, 2) ** 2
    g = np.zeros(x.shape[1])
    for it in range(1, max_iter + 1):
        g_new = np.maximum(g + (z.T @ (r0 - z @ g) - penalty) / lip, 0.0)
        moved = np.abs(g_new - g).max()
        g = g_new
        if moved <= tol * max(g.max(), 1e-12):
            return g / norms, it
    raise AssertionError("the reference did not converge")
