"""Client kernel of the hierarchical histogram (Numba; DESIGN.md R6).

A value is bucketized to a leaf, the person's level is chosen from the words alone (never from the value),
and the level's frequency oracle reports the index of the node holding the leaf at that level; the report
is that code plus the level's offset in the concatenated alphabet.

Words: 2 per record. Word ``2i`` is the oracle's keep coin (bits 11..63); word ``2i+1`` carries the
oracle's uniform lie in bits 16..63 and the level in its low 16 bits: level ``((w & 0xFFFF) * L) >> 16``,
so level ``l`` has probability ``c_l / 2**16`` with ``c_l = ceil((l+1) 2**16 / L) - ceil(l 2**16 / L)``
(uniform up to ``L / 2**16``). Disjoint bits of a uniform word are independent, so the level is
independent of the oracle's coins, and neither depends on the value. Oracles plugged in later must keep
the low 16 bits of word ``2i+1`` free (or the plan must raise ``words_per_record``).

Level table (int64, one row per level 1..L): ``[kind, k, node_size, offset, t_keep, shift]`` with ``kind``
the oracle (``KIND_GRR`` = 0, the only one so far), ``k`` the level's node count, ``node_size`` the leaves per
node, ``offset`` the level's first code, ``shift = log2(node_size)`` when that is a power of two (the node is
then ``leaf >> shift``, measured ~25% faster than the division) and ``-1`` otherwise.
"""

import numpy as np
from numba import prange

from ._jit import jit
from .client import unit_inline
from .frequency import grr_inline

KIND_GRR = 0

U16 = np.uint64(16)
LOW16 = np.uint64(0xFFFF)


@jit(inline=True)
def leaf_inline(u, n_leaves):
    """Leaf of a unit value: ``floor(u * n_leaves)``, the top value ``u = 1`` in the last leaf."""
    leaf = np.int64(u * float(n_leaves))
    if leaf >= n_leaves:
        leaf = n_leaves - 1
    return leaf


@jit(inline=True)
def level_inline(word, n_levels):
    """A level in ``0..n_levels-1`` from the low 16 bits of ``word``."""
    return np.int64(((word & LOW16) * np.uint64(n_levels)) >> U16)


@jit(parallel=True)
def hierarchy_kernel(values, low, inv_range, n_leaves, table, words, out):
    """Hierarchical histogram report of each value: one level, one frequency-oracle report at that level."""
    n_levels = table.shape[0]
    for i in prange(values.shape[0]):
        leaf = leaf_inline(unit_inline(values[i], low, inv_range), n_leaves)
        w0 = words[2 * i]
        w1 = words[2 * i + 1]
        lev = level_inline(w1, n_levels)
        shift = table[lev, 5]
        if shift >= 0:
            node = leaf >> shift
        else:
            node = leaf // table[lev, 2]
        # kind KIND_GRR (the only kind so far); later kinds branch here on table[lev, 0]
        code = grr_inline(node, w0, w1, table[lev, 1], table[lev, 4])
        out[i] = table[lev, 3] + code


@jit(parallel=True)
def leaf_kernel(values, low, inv_range, n_leaves, out):
    """The leaf index of each value, exactly as :func:`hierarchy_kernel` bucketizes it."""
    for i in prange(values.shape[0]):
        out[i] = leaf_inline(unit_inline(values[i], low, inv_range), n_leaves)
