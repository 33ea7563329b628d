"""Client kernel of the shaped-window randomizer (General Wave family; design rule R6).

Same structure as ``client_numeric.window_kernel`` (3 words per record: rounding, in/out, cell), except that the
cell inside the window is drawn by inverting an integer cumulative table ``cum`` (``cum[0] = 0``,
``cum[m] = 2**53``) with a 53-bit draw, so offset ``k`` has probability ``(cum[k+1] - cum[k]) / 2**53``.
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import U11, bernoulli_inline, rounding_inline, uniform_inline, unit_inline


@jit(inline=True)
def shaped_window_inline(s, w_in, w_cell, n_cells, m, t_in, cum):
    if bernoulli_inline(w_in, t_in):
        r = np.int64(w_cell >> U11)
        return s + np.searchsorted(cum, r, side="right") - 1
    k = uniform_inline(w_cell, n_cells - m)
    if k >= s:
        k += m
    return k


@jit(parallel=True, plan_arrays=("cum",))
def shaped_window_kernel(x, low, inv_range, n_cells, m, t_in, cum, words, out):
    """Window randomizer with a shaped window (3 words per record)."""
    for i in prange(x.shape[0]):
        s, t_up = rounding_inline(unit_inline(x[i], low, inv_range), n_cells - m)
        if bernoulli_inline(words[3 * i], t_up):
            s += 1
        out[i] = shaped_window_inline(s, words[3 * i + 1], words[3 * i + 2], n_cells, m, t_in, cum)
