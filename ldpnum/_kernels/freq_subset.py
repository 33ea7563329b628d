"""Client kernel of subset selection (Numba; DESIGN.md R6).

Record ``i`` reads ``c = 1 + ω - ⌊ω/4⌋`` words, ``[c i, c (i + 1))``:

- word 0 decides whether the true category ``v`` joins the subset (``(w >> 11) < t_inc``, over 2**53);
- the other words hold ``ω`` 48-bit *fields*, four in each group of three words ``w0, w1, w2``: the top 48
  bits of each (``w >> 16``) and their low 16 bits together, ``(w0 & 0xFFFF)·2**32 + (w1 & 0xFFFF)·2**16 +
  (w2 & 0xFFFF)``; a last group of ``ω mod 4`` words gives one field each (its top 48 bits). Fields are
  disjoint bits of independent uniform words, hence independent uniform 48-bit draws.
- Field ``s`` is pick ``s`` of *Floyd's algorithm* drawing a uniform ``r``-subset of the ``n`` other
  categories, ``r = ω - 1`` if ``v`` joined and ``r = ω`` otherwise: ``j = n - r + s`` and
  ``t = uniform(field, j + 1)``, a 48-bit choice among the ``j + 1`` indices ``0..j`` (``uniform_inline`` on
  the field in the top bits); it adds index ``t``, or index ``j`` if ``t`` is already in the subset. Index
  ``t ∈ [0, n)`` is category ``t + (t >= v)`` (the categories other than ``v`` in order), and membership is
  read from the output bitmask itself. A record that includes ``v`` leaves its last field unused.
- An unknown value (``-1``) gets a uniform ``ω``-subset of all ``k`` categories: ``n = k``, ``r = ω``, no
  category skipped, the same ``ω`` fields (word 0 unused).

Four fields in three words, not one per word: 25% fewer words for the same 48-bit picks (the same exact
probabilities); drawing the words is about half of the CPU time per record at ``k = 1024``. Every record
runs the same ``ω`` picks whatever its value and coin: a record with ``r = ω - 1`` runs its last pick on its
unused field and writes nothing (a zero mask), and the collision choice is arithmetic, not a branch. The
subset is written as a bitmask (bit ``j`` of byte ``j // 8``, least significant first): the wire format is
canonical, nothing about the order of the picks or the true value is in it.
"""

import numpy as np
from numba import prange

from ._jit import jit
from .client import bernoulli_inline, uniform_inline

U1 = np.uint64(1)
U3 = np.uint64(3)
U7 = np.uint64(7)
U16 = np.uint64(16)
U32 = np.uint64(32)
LOW16 = np.uint64(0xFFFF)


@jit(inline=True)
def fourth_field_inline(w0, w1, w2):
    """The fourth 48-bit field of a group of three words (their low 16 bits), shifted to where
    ``uniform_inline`` reads a field (the top 48 bits of a word)."""
    return (((w0 & LOW16) << U32) | ((w1 & LOW16) << U16) | (w2 & LOW16)) << U16


@jit(inline=True)
def floyd_pick_inline(row, word, s, r, j0, skip):
    """Pick ``s`` of Floyd's algorithm (``j = j0 + 1 + s``, active iff ``s < r``) into the bitmask ``row``.

    ``old`` = the byte holding category ``ct``; bit ``ct`` is set (a no-op when it was already set) and bit
    ``cj`` is set iff it was (``hit``). Neither store address depends on a load: measured about 1.4x the
    picks/s at k = 1024 (single thread) of choosing the one category to set from ``hit``.
    """
    active = np.int64(s < r)
    j = j0 + s + active  # an inactive (last) pick reruns j = n - 1 and writes nothing
    t = uniform_inline(word, j + 1)
    ct = np.uint64(t + np.int64(t >= skip))
    cj = np.uint64(j + np.int64(j >= skip))
    sh = ct & U7
    old = row[ct >> U3]
    hit = np.uint64(old >> sh) & U1
    row[ct >> U3] = old | np.uint8(np.uint64(active) << sh)
    row[cj >> U3] |= np.uint8((hit & np.uint64(active)) << (cj & U7))


@jit(parallel=True)
def subset_kernel(values, k, omega, t_inc, words, out):
    """Subset selection, ``1 + omega - omega // 4`` words per record; ``out`` is ``(n, ceil(k/8))`` uint8."""
    c = 1 + omega - (omega >> 2)
    nb = out.shape[1]
    n_groups = omega >> 2
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
        for g in range(n_groups):
            w = base + 1 + 3 * g
            w0 = words[w]
            w1 = words[w + 1]
            w2 = words[w + 2]
            s = 4 * g
            floyd_pick_inline(row, w0, s, r, j0, skip)
            floyd_pick_inline(row, w1, s + 1, r, j0, skip)
            floyd_pick_inline(row, w2, s + 2, r, j0, skip)
            floyd_pick_inline(row, fourth_field_inline(w0, w1, w2), s + 3, r, j0, skip)
        w = base + 1 + 3 * n_groups
        for q in range(omega & 3):
            floyd_pick_inline(row, words[w + q], 4 * n_groups + q, r, j0, skip)
