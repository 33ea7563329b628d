"""Client kernels of the categorical frequency oracles (Numba; DESIGN.md R6).

Values are int64 category codes already validated to lie in ``0..k-1``, or ``-1`` for an unknown value
that must be reported uniformly at random (``unknown="uniform"``).
"""

from numba import prange

from ._jit import jit
from .client import bernoulli_inline, uniform_inline


@jit(inline=True)
def grr_inline(v, w_keep, w_lie, k, t_keep):
    """Generalized randomized response: keep ``v`` w.p. ``t_keep / 2**53``, else a uniform *other* code."""
    if v < 0:
        return uniform_inline(w_lie, k)
    if bernoulli_inline(w_keep, t_keep):
        return v
    j = uniform_inline(w_lie, k - 1)
    if j >= v:
        j += 1
    return j


@jit(parallel=True)
def grr_kernel(values, k, t_keep, words, out):
    """GRR over ``k`` categories, 2 words per record."""
    for i in prange(values.shape[0]):
        out[i] = grr_inline(values[i], words[2 * i], words[2 * i + 1], k, t_keep)
