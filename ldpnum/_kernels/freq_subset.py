"""Client kernel of subset selection (Numba; DESIGN.md R6).

Record ``i`` reads ``k`` words: word 0 decides whether the true category joins the subset (integer threshold
over 2**53); the remaining ``k - 1`` words drive *selection sampling* over the other categories in index
order: with ``need`` still to pick among ``left`` remaining, a category is picked iff
``uniform(word, left) < need``. An unknown value (``-1``) gets a uniform ``ω``-subset of all ``k`` categories
(selection sampling over all of them, ``k`` words). The subset is written as a bitmask (bit ``j`` of byte
``j // 8``, least significant first): the wire format is canonical, nothing about the order of selection or
the true value is in it.
"""

import numpy as np
from numba import prange

from ._jit import jit
from .client import bernoulli_inline, uniform_inline


@jit(parallel=True)
def subset_kernel(values, k, omega, t_inc, words, out):
    for i in prange(values.shape[0]):
        v = values[i]
        base = k * i
        for b in range(out.shape[1]):
            out[i, b] = 0
        if v < 0:
            need = omega
            left = k
            for j in range(k):
                if uniform_inline(words[base + j], left) < need:
                    out[i, j >> 3] |= np.uint8(1 << (j & 7))
                    need -= 1
                left -= 1
        else:
            need = omega
            if bernoulli_inline(words[base], t_inc):
                out[i, v >> 3] |= np.uint8(1 << (v & 7))
                need = omega - 1
            left = k - 1
            w = base + 1
            for j in range(k):
                if j == v:
                    continue
                if uniform_inline(words[w], left) < need:
                    out[i, j >> 3] |= np.uint8(1 << (j & 7))
                    need -= 1
                left -= 1
                w += 1
