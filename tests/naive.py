"""Slow, obviously-correct NumPy/Python references for the kernels (one record at a time, Python ints).

Each reference takes the same words the kernel consumed and must reproduce its output bit for bit.
"""

import numpy as np

TWO53 = 2**53


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


def em_dense(counts, matrix, method="ems", max_iter=10_000, tol=1e-7, atol=0.0):
    """EM (Algorithm 1 of seed 002) / EMS with the full matrix; same start, smoothing and stopping rule:
    stop after the first iteration with ``|L_t - L_{t-1}| < tol |L_{t-1}| + atol``.

    Returns ``(x, n_iter, converged, loglik)``.
    """
    n = np.asarray(counts, dtype=float)
    mat = np.asarray(matrix, dtype=float)
    d = mat.shape[1]
    seen = n > 0

    def loglik(x):
        return float(np.sum(n[seen] * np.log(mat[seen] @ x)))

    x = np.full(d, 1.0 / d)
    trace = [loglik(x)]
    converged = False
    it = 0
    while it < max_iter:
        it += 1
        y = mat @ x
        p = np.array([x[i] * np.sum(n[seen] * mat[seen, i] / y[seen]) for i in range(d)])   # E-step
        x = p / p.sum()
        if method == "ems":
            padded = np.concatenate([[x[0]], x, [x[-1]]])
            x = 0.5 * padded[1:-1] + 0.25 * (padded[:-2] + padded[2:])
            x = x / x.sum()
        trace.append(loglik(x))
        if abs(trace[-1] - trace[-2]) < tol * abs(trace[-2]) + atol:
            converged = True
            break
    return x, it, converged, np.array(trace)


def grr(values, k, t_keep, words):
    """Generalized randomized response, one record at a time (values -1: uniformly random report)."""
    out = []
    for i, v in enumerate(values):
        v = int(v)
        if v < 0:
            out.append(uniform(words[2 * i + 1], k))
        elif bernoulli(words[2 * i], t_keep):
            out.append(v)
        else:
            j = uniform(words[2 * i + 1], k - 1)
            out.append(j + 1 if j >= v else j)
    return np.array(out)


def subset_selection(values, k, omega, t_inc, words):
    """Subset selection with selection sampling, one record at a time; returns the (n, k) 0/1 matrix."""
    out = np.zeros((len(values), k), dtype=np.uint8)
    for i, v in enumerate(values):
        v = int(v)
        base = k * i
        if v < 0:
            need, left = omega, k
            for j in range(k):
                if uniform(words[base + j], left) < need:
                    out[i, j] = 1
                    need -= 1
                left -= 1
            continue
        need = omega
        if bernoulli(words[base], t_inc):
            out[i, v] = 1
            need -= 1
        left, w = k - 1, base + 1
        for j in range(k):
            if j == v:
                continue
            if uniform(words[w], left) < need:
                out[i, j] = 1
                need -= 1
            left -= 1
            w += 1
    return out
