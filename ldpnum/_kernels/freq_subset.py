"""Client kernel of subset selection (Numba; DESIGN.md R6).

Record ``i`` reads ``1 + ω`` words, ``[(1 + ω) i, (1 + ω)(i + 1))``:

- word 0 decides whether the true category ``v`` joins the subset (``(w >> 11) < t_inc``, over 2**53);
- words ``1..ω`` are the picks of *Floyd's algorithm* drawing a uniform ``r``-subset of the ``n`` other
  categories, ``r = ω - 1`` if ``v`` joined and ``r = ω`` otherwise: pick ``s`` (word ``1 + s``) has
  ``j = n - r + s`` and draws ``t = uniform(word, j + 1)``, a 48-bit choice among the ``j + 1`` indices
  ``0..j``; it adds index ``t``, or index ``j`` if ``t`` is already in the subset. Index ``t ∈ [0, n)`` is
  category ``t + (t >= v)`` (the categories other than ``v`` in order), and membership is read from the
  output bitmask itself. A record that includes ``v`` leaves its last word unused.
- An unknown value (``-1``) gets a uniform ``ω``-subset of all ``k`` categories: ``n = k``, ``r = ω``, no
  category skipped, words ``1..ω`` (word 0 unused).

Every record runs the same ``ω`` iterations whatever its value and coin: a record with ``r = ω - 1`` runs
its last iteration on its unused word and writes nothing (a zero mask), and the collision choice is
arithmetic, not a branch. The subset is written as a bitmask (bit ``j`` of byte ``j // 8``, least
significant first): the wire format is canonical, nothing about the order of the picks or the true value is
in it.
"""

import numpy as np
from numba import prange

from ._jit import jit
from .client import bernoulli_inline, uniform_inline

U1 = np.uint64(1)
U3 = np.uint64(3)
U7 = np.uint64(7)


@jit(parallel=True)
def subset_kernel(values, k, omega, t_inc, words, out):
    """Subset selection, ``1 + omega`` words per record; ``out`` is ``(n, ceil(k/8))`` uint8 bitmasks.

    Per pick: ``old`` = the byte holding category ``ct``; bit ``ct`` is set (a no-op when it was already
    set) and bit ``cj`` is set iff it was (``hit``). Neither store address depends on a load: measured about
    1.4x the picks/s at k = 1024 (single thread) of choosing the one category to set from ``hit``.
    """
    c = omega + 1
    nb = out.shape[1]
    for i in prange(values.shape[0]):
        row = out[i]
        v = values[i]
        base = c * i
        for b in range(nb):
            row[b] = 0
        if v < 0:
            n = k
            skip = k  # no category skipped
            r = omega
        else:
            n = k - 1
            skip = v
            inc = np.int64(bernoulli_inline(words[base], t_inc))
            row[v >> 3] |= np.uint8(inc << (v & 7))
            r = omega - inc
        j0 = n - r - 1
        for s in range(omega):
            active = np.int64(s < r)
            j = j0 + s + active  # n - r + s; an inactive (last) iteration reruns j = n - 1 and writes nothing
            t = uniform_inline(words[base + 1 + s], j + 1)
            ct = np.uint64(t + np.int64(t >= skip))
            cj = np.uint64(j + np.int64(j >= skip))
            sh = ct & U7
            old = row[ct >> U3]
            hit = np.uint64(old >> sh) & U1
            row[ct >> U3] = old | np.uint8(np.uint64(active) << sh)
            row[cj >> U3] |= np.uint8((hit & np.uint64(active)) << (cj & U7))
