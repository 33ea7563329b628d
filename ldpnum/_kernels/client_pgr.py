"""Client kernel of projective geometry response (Numba; design rule R6).

Points of the projective space PG(t-1, q) are the *canonical* vectors of F_q^t (first nonzero coordinate 1),
numbered by :func:`point_index_inline`: a point whose leading 1 is followed by ``s`` coordinates has index
``(q^s - 1)/(q - 1) + (those s coordinates read as a base-q number)``. A report is a code
``block·b + point`` of ``K = h·b`` codes, ``b = (q^t - 1)/(q - 1)`` (``h = 1``: plain PGR).

Record ``i`` reads 2 words, ``[2i, 2i + 2)``: word 0 decides "in the set" (``(w >> 11) < t_in``, over
2**53), word 1 picks one of ``m`` cells, ``floor(w·m / 2**64)`` (``mulhi32_inline``, exact for ``m < 2**32``):

- in the set (``m = c = (q^{t-1} - 1)/(q - 1)``): cell ``i`` is the canonical vector ``y`` of length ``t - 1``
  with index ``i``; with ``j`` the last nonzero coordinate of the person's point ``v``, the report is the
  point ``x`` with ``y`` in the coordinates other than ``j`` and ``x_j = -(Σ_{r<j} x_r v_r)/v_j``: a
  bijection between the points of PG(t-2, q) and those of the hyperplane ``⟨x, v⟩ = 0`` (``x`` is
  canonical as it stands: if ``y`` has no nonzero before ``j``, the sum is 0 and so is ``x_j``);
- outside (``m = (h - 1)b + q^{t-1}``): a cell ``o < q^{t-1}`` is the vector ``y`` of its ``t - 1`` base-q
  digits and the report the point of ``x`` with ``x_j = (1 - Σ_{r<j} x_r v_r)/v_j`` (so ``⟨x, v⟩ = 1``;
  each point off the hyperplane has exactly one such representative), scaled to canonical form; a cell
  ``o ≥ q^{t-1}`` is code ``o - q^{t-1}`` of the other ``h - 1`` blocks, the own block skipped.

An unknown value (``-1``) is a uniform code of all ``K`` from word 1. Both branches are computed for every
record and the answer selected, so the work does not depend on the coin; the loops run over all ``t``
coordinates whatever the value. Field inverses come from a table of ``q`` entries (``inv[0] = 0``);
``offs[s] = (q^s - 1)/(q - 1)`` and ``pows[s] = q^s`` for ``s = 0..t``.
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import bernoulli_inline, mulhi32_inline

#: Records per task of the parallel loop (each task allocates its scratch digits once).
CHUNK = 256


@jit(inline=True)
def point_digits_inline(idx, q, length, offs, pows, out):
    """Write the canonical vector of ``length`` coordinates with index ``idx`` into ``out[:length]``."""
    s = np.int64(-1)
    for r in range(length):
        s += np.int64(offs[r] <= idx)
    x = pows[s] + idx - offs[s]  # the leading 1 and the s coordinates after it, as one base-q number
    for r in range(length - 1, -1, -1):
        out[r] = x % q
        x //= q


@jit(inline=True)
def point_index_inline(x, q, t, offs, pows):
    """Index of the canonical vector ``x[:t]``."""
    value = np.int64(0)
    lead = t - 1
    for r in range(t - 1, -1, -1):
        lead = r if x[r] != 0 else lead
    for r in range(t):
        value = value * q + x[r]
    s = t - 1 - lead
    return value - pows[s] + offs[s]


@jit(inline=True)
def hyperplane_point_inline(y, vd, j, g, z, q, t, inv, offs, pows, x):
    """Index of the point of ``x``: ``y`` in the coordinates other than ``j``, ``⟨x, v⟩ = z`` solved for ``x_j``.

    ``g = 1/v_j``; ``x`` is scaled to canonical form (a no-op when it already is).
    """
    dot = np.int64(0)
    for r in range(t - 1):
        before = np.int64(r < j)
        x[r + 1 - before] = y[r]
        dot += y[r] * vd[r] * before
    x[j] = ((z - dot % q + q) % q) * g % q
    lead = np.int64(0)
    for r in range(t - 1, -1, -1):
        lead = x[r] if x[r] != 0 else lead
    scale = inv[lead]
    for r in range(t):
        x[r] = x[r] * scale % q
    return point_index_inline(x, q, t, offs, pows)


@jit(parallel=True, plan_arrays=("offs", "pows", "inv"))
def pgr_kernel(values, q, t, h, b, t_in, offs, pows, inv, words, out):
    """Projective geometry response (``h`` blocks of ``b`` points of PG(t-1, q)), 2 words per record."""
    n = values.shape[0]
    c_in = np.uint64(offs[t - 1])
    own = pows[t - 1]
    m_out = np.uint64((h - 1) * b + own)
    n_codes = np.uint64(h * b)
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        vd = np.empty(t, np.int64)
        y = np.empty(t, np.int64)
        x = np.empty(t, np.int64)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            v = values[i]
            base = np.uint64(2) * np.uint64(i)
            w0 = words[base]
            w1 = words[base + np.uint64(1)]
            vv = max(v, 0)
            blk = vv // b
            point_digits_inline(vv - blk * b, q, t, offs, pows, vd)
            j = np.int64(0)
            for r in range(t):
                j = r if vd[r] != 0 else j
            g = inv[vd[j]]
            # in the set: the point of PG(t-2, q) with the drawn index, lifted to the hyperplane
            point_digits_inline(np.int64(mulhi32_inline(w1, c_in)), q, t - 1, offs, pows, y)
            code_in = blk * b + hyperplane_point_inline(y, vd, j, g, 0, q, t, inv, offs, pows, x)
            # outside: a cell of the own block (digits of y, <x, v> = 1) or a code of another block
            o = np.int64(mulhi32_inline(w1, m_out))
            d = min(o, own - 1)
            for r in range(t - 2, -1, -1):
                y[r] = d % q
                d //= q
            code_own = blk * b + hyperplane_point_inline(y, vd, j, g, 1, q, t, inv, offs, pows, x)
            rest = max(o - own, 0)
            other = rest // b
            code_other = (other + np.int64(other >= blk)) * b + rest - other * b
            code_out = code_own if o < own else code_other
            code = code_in if bernoulli_inline(w0, t_in) else code_out
            out[i] = code if v >= 0 else np.int64(mulhi32_inline(w1, n_codes))
