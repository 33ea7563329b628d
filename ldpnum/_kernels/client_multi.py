"""Client kernel of hybrid-dimensional grids (HDG; Numba, design rule R6).

A person's vector of ``d`` values is mapped to the unit cube; their **grid** is chosen from a word alone
(never from the values), and the grid's frequency oracle reports the index of the cell of that grid holding
the person. Words: 3 per record, whatever the grid: word ``3i`` chooses the grid as
:func:`ldpnum._random.assign_columns` does, ``j = ((w >> 16) · m) >> 48`` (the top 48 bits scaled to the
``m`` grids), word ``3i+1`` is the hash seed (bits 63..16, :func:`ldpnum._kernels.client_hashing.
local_hash_inline`'s seed word, never combined with the value or the coins; a GRR grid draws it too and
ignores it) and word ``3i+2`` is GRR's whole word (:func:`ldpnum._kernels.client_grr.grr_inline`, over the
cells or over the hashed values). The report is one ``uint64``::

    bits 63..16  OLH grid: the seed (a, b) of the hash;  GRR grid: the reported cell (< 2**48)
    bits 15..10  the grid index j (m <= 64 grids)
    bits  9..0   OLH grid: y, GRR over [0, g) of the cell's hashed value (g <= 2**10);  GRR grid: 0

Grid table (int64, one row per grid): ``[kind, m, keep, lie_shift, a, b, gran]`` with ``kind`` the oracle
(``KIND_GRR`` = 0, ``KIND_OLH`` = 1, as in the hierarchical histogram), ``m`` the size of its GRR step (GRR:
the grid's cell count; OLH: the hash range ``g``), ``keep`` GRR's ``a_keep``, ``lie_shift`` GRR's lie-block
shift, ``a`` and ``b`` the grid's attributes (``b = -1`` for a 1-D grid) and ``gran`` its cells per side.
The cell of a 1-D grid is ``floor(u_a · gran)``; of a 2-D grid ``floor(u_a · gran) · gran + floor(u_b ·
gran)`` (the top value ``u = 1`` in the last cell).
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import unit_inline
from .client_hashing import SEED_MASK, local_hash_inline
from .client_grr import grr_inline
from .client_hierarchy import KIND_GRR, KIND_OLH, leaf_inline

__all__ = ["hdg_kernel", "hdg_cells_kernel", "marginals_kernel", "KIND_GRR", "KIND_OLH", "GRID_SHIFT", "Y_BITS", "GRID_BITS"]

#: The grid index sits in bits 15..10 of a report, the OLH report y in bits 9..0.
GRID_SHIFT = 10
Y_BITS = 10
GRID_BITS = 6

U16 = np.uint64(16)
U48 = np.uint64(48)
U_GRID = np.uint64(GRID_SHIFT)


@jit(inline=True)
def grid_inline(word, n_grids):
    """A grid in ``0..n_grids-1`` from the top 48 bits of ``word`` (``assign_columns``' multiply-shift)."""
    return np.int64(((word >> U16) * np.uint64(n_grids)) >> U48)


@jit(inline=True)
def cell_inline(values, i, lows, inv_ranges, table, j):
    """The cell of grid ``j`` holding row ``i``."""
    gran = table[j, 6]
    a = table[j, 4]
    ca = leaf_inline(unit_inline(values[i, a], lows[a], inv_ranges[a]), gran)
    b = table[j, 5]
    if b < 0:
        return ca
    cb = leaf_inline(unit_inline(values[i, b], lows[b], inv_ranges[b]), gran)
    return ca * gran + cb


@jit(inline=True)
def grid_report_inline(table, j, cell, w_seed, w_keep):
    """The report of ``cell`` of grid (or column set) ``j``: OLH or GRR, by row ``j`` of ``table``.

    OLH gives the seed word's bits, the grid tag and GRR over the hash range; GRR over the cells gives the code above 16
    bits and the grid tag. Row ``j`` of ``table`` is ``[kind, size, keep, lie_shift, ...]``.
    """
    tag = np.uint64(j) << U_GRID
    if table[j, 0] == KIND_OLH:
        h = local_hash_inline(w_seed, cell, table[j, 1])
        y = grr_inline(h, w_keep, table[j, 1], table[j, 2], table[j, 3])
        return (w_seed & SEED_MASK) | tag | np.uint64(y)
    code = grr_inline(cell, w_keep, table[j, 1], table[j, 2], table[j, 3])
    return (np.uint64(code) << U16) | tag


@jit(parallel=True, plan_arrays=("lows", "inv_ranges", "table"))
def hdg_kernel(values, lows, inv_ranges, table, words, out):
    """HDG report of each row of ``values`` (3 words per record; see the module docstring)."""
    n_grids = table.shape[0]
    for i in prange(values.shape[0]):
        w_grid = words[3 * i]
        w_seed = words[3 * i + 1]
        w_keep = words[3 * i + 2]
        j = grid_inline(w_grid, n_grids)
        cell = cell_inline(values, i, lows, inv_ranges, table, j)
        out[i] = grid_report_inline(table, j, cell, w_seed, w_keep)


@jit(parallel=True, plan_arrays=("lows", "inv_ranges", "table"))
def hdg_cells_kernel(values, lows, inv_ranges, table, j, out):
    """The cell of grid ``j`` holding each row, exactly as :func:`hdg_kernel` maps it (for the truth)."""
    for i in prange(values.shape[0]):
        out[i] = cell_inline(values, i, lows, inv_ranges, table, j)


@jit(parallel=True, plan_arrays=("table",))
def marginals_kernel(values, table, words, out):
    """Marginals report of each row of ``values`` (3 words per record, as :func:`hdg_kernel`).

    ``values`` holds category codes as float64, already validated integers in ``[0, c)``. Table row of attribute set
    ``j``: ``[kind, m, keep, lie_shift, a_0, …, a_{W-1}, c_0, …, c_{W-1}]`` with ``W = (columns - 4) / 2`` the widest
    set (unused attributes ``-1``, their ``c = 1``); the set's cell is the mixed-radix index ``(…(v_{a_0} c_1 + v_{a_1})
    c_2 + …) c_{W-1} + v_{a_{W-1}}`` (row-major over the set's categories).
    """
    n_sets = table.shape[0]
    width = (table.shape[1] - 4) // 2
    for i in prange(values.shape[0]):
        w_grid = words[3 * i]
        w_seed = words[3 * i + 1]
        w_keep = words[3 * i + 2]
        j = grid_inline(w_grid, n_sets)
        cell = np.int64(0)
        for t in range(width):
            a = table[j, 4 + t]
            if a >= 0:
                cell = cell * table[j, 4 + width + t] + np.int64(values[i, a])
        out[i] = grid_report_inline(table, j, cell, w_seed, w_keep)
