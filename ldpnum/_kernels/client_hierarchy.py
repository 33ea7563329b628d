"""Client kernel of the hierarchical histogram (Numba; design rule R6).

A value is bucketized to a leaf, the person's level is chosen from the words alone (never from the value),
and the level's frequency oracle reports the index of the node holding the leaf at that level; the report
is that code plus the level's offset in the concatenated alphabet.

Two layouts, fixed by the plan (never by the value):

**Offset layout** (:func:`hierarchy_kernel`, GRR or Hadamard-response levels). Words: 2 per record. Word
``2i`` is GRR's whole word (:func:`ldpnum._kernels.client_grr.grr_inline`) or Hadamard response's keep coin
(bits 11..63); word ``2i+1`` carries Hadamard response's uniform index (its top ``log2 K <= 17`` bits; a GRR
level does not use them) and the level in its low 16 bits: level ``((w & 0xFFFF) * L) >> 16``, so level ``l`` has probability ``c_l / 2**16``
with ``c_l = ceil((l+1) 2**16 / L) - ceil(l 2**16 / L)`` (uniform up to ``L / 2**16``). Disjoint bits of a
uniform word are independent, so the level is independent of the oracle's coins, and neither depends on
the value. The report is the level's offset plus the oracle's code, in the smallest unsigned dtype.

**Packed layout** (:func:`hierarchy_packed_kernel`, some level uses local hashing). Words: 3 per record,
whatever the level: word ``3i`` is the hash seed (bits 63..16, :func:`ldpnum._kernels.client_hashing.
local_hash_inline`'s seed word, never combined with the value or the coins), word ``3i+1`` GRR's word (a GRR
or OLH level) or Hadamard response's keep coin, and word ``3i+2`` Hadamard response's index (top bits) and the
level (bits 0..15), as above. A GRR level draws the seed
word too and ignores it, so every record consumes the same words. The report is one ``uint64``::

    bits 63..16  OLH level: the seed (a, b) of the hash;  GRR / HR level: the oracle's code (< 2**17)
    bits 15..12  the level index l - 1 (L <= 16 since n_leaves <= 2**16)
    bits 11..0   OLH level: y, GRR over [0, g) of the node's hashed value (g <= 2**12);  otherwise 0

Level table (int64, one row per level 1..L): ``[kind, m, node_size, offset, keep, shift, lie_shift]`` with ``kind``
the oracle (``KIND_GRR`` = 0, ``KIND_OLH`` = 1, ``KIND_HR`` = 2), ``m`` the oracle's size parameter (GRR:
the level's node count ``k``; OLH: the hash range ``g`` of its GRR step; Hadamard response: ``log2 K``), ``node_size`` the leaves per node, ``offset`` the
level's first code (offset layout only), ``keep`` GRR's ``a_keep`` (GRR and OLH levels) or Hadamard
response's ``t_keep`` over 2**53, ``shift = log2(node_size)`` when that is a power of two (the node
is then ``leaf >> shift``, measured ~25% faster than the division) and ``-1`` otherwise, and ``lie_shift``
GRR's lie-block shift (GRR and OLH levels; 0 for Hadamard response).
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import unit_inline
from .client_hashing import SEED_MASK, hadamard_inline, local_hash_inline
from .client_grr import grr_inline

KIND_GRR = 0
KIND_OLH = 1
KIND_HR = 2

U12 = np.uint64(12)
U16 = np.uint64(16)
LOW16 = np.uint64(0xFFFF)
#: Packed layout: the level index sits in bits 15..12, the OLH report y in bits 11..0.
LEVEL_SHIFT = 12
Y_BITS = 12


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


@jit(parallel=True, plan_arrays=("table",))
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
        if table[lev, 0] == KIND_HR:
            code = np.int64(hadamard_inline(node, w0, w1, table[lev, 1], table[lev, 4]))
        else:
            code = grr_inline(node, w0, table[lev, 1], table[lev, 4], table[lev, 6])
        out[i] = table[lev, 3] + code


@jit(parallel=True, plan_arrays=("table",))
def hierarchy_packed_kernel(values, low, inv_range, n_leaves, table, words, out):
    """Packed-layout report of each value (3 words per record; see the module docstring)."""
    n_levels = table.shape[0]
    for i in prange(values.shape[0]):
        leaf = leaf_inline(unit_inline(values[i], low, inv_range), n_leaves)
        w_seed = words[3 * i]
        w_keep = words[3 * i + 1]
        w_lie = words[3 * i + 2]
        lev = level_inline(w_lie, n_levels)
        shift = table[lev, 5]
        if shift >= 0:
            node = leaf >> shift
        else:
            node = leaf // table[lev, 2]
        tag = np.uint64(lev) << U12
        if table[lev, 0] == KIND_OLH:
            h = local_hash_inline(w_seed, node, table[lev, 1])
            y = grr_inline(h, w_keep, table[lev, 1], table[lev, 4], table[lev, 6])
            out[i] = (w_seed & SEED_MASK) | tag | np.uint64(y)
        elif table[lev, 0] == KIND_HR:
            code = np.int64(hadamard_inline(node, w_keep, w_lie, table[lev, 1], table[lev, 4]))
            out[i] = (np.uint64(code) << U16) | tag
        else:
            code = grr_inline(node, w_keep, table[lev, 1], table[lev, 4], table[lev, 6])
            out[i] = (np.uint64(code) << U16) | tag


@jit(parallel=True)
def leaf_kernel(values, low, inv_range, n_leaves, out):
    """The leaf index of each value, exactly as :func:`hierarchy_kernel` bucketizes it."""
    for i in prange(values.shape[0]):
        out[i] = leaf_inline(unit_inline(values[i], low, inv_range), n_leaves)
