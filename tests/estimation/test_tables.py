"""ldpnum.estimation.tables: the one consistency routine of HDG's grids and Marginals' tables, against a
dense least-squares reference written another way (a KKT solve over every cell)."""

import itertools

import numpy as np
import pytest

from ldpnum.estimation.grids import grid_tables
from ldpnum.estimation.tables import (
    consistency_step,
    make_consistent,
    max_inconsistency,
    project,
    shared_subsets,
)
from ldpnum.multi.hdg import HDGPlan


def dense_least_squares(tables, sets, variances):
    """The tables closest to ``tables`` in the weighted sum of squares (cell weights 1/variance of their
    table) among those whose projections onto every shared label set agree: one KKT system over all cells,
    with the projection matrices built cell by cell."""
    sizes = [t.size for t in tables]
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    n = offsets[-1]
    x0 = np.concatenate([t.ravel() for t in tables])
    w = np.concatenate([np.full(t.size, 1.0 / v) for t, v in zip(tables, variances)])
    w = w / w.max()  # only the ratios matter; keeps the KKT system well conditioned
    rows = []
    for sub in shared_subsets(sets):
        holders = [i for i, s in enumerate(sets) if set(sub) <= set(s)]

        def projection(i, sub=sub):
            shape = tuple(tables[i].shape[sets[i].index(a)] for a in sub)
            P = np.zeros((int(np.prod(shape)), n))
            for flat, cell in enumerate(np.ndindex(tables[i].shape)):
                key = np.ravel_multi_index(tuple(cell[sets[i].index(a)] for a in sub), shape)
                P[key, offsets[i] + flat] = 1.0
            return P

        first = projection(holders[0])
        rows += [projection(i) - first for i in holders[1:]]
    A = np.vstack(rows)
    K = np.block([[np.diag(2 * w), A.T], [A, np.zeros((A.shape[0], A.shape[0]))]])
    rhs = np.concatenate((2 * w * x0, np.zeros(A.shape[0])))
    sol = np.linalg.lstsq(K, rhs, rcond=None)[0][:n]
    return [sol[offsets[i]:offsets[i + 1]].reshape(t.shape) for i, t in enumerate(tables)]


def normalized(rng, shape):
    t = rng.uniform(0.01, 1.0, shape)
    return t / t.sum()  # every table's total is 1, as after Norm-Sub


@pytest.mark.parametrize("sets, shapes", [
    ([(0, 1), (1, 2), (1, 3)], {0: 2, 1: 3, 2: 4, 3: 2}),   # three tables sharing one column
    ([(0, 1), (0, 2), (1, 2)], {0: 3, 1: 2, 2: 4}),          # every pair: three shared columns
    ([(0, 1, 2), (2, 3)], {0: 2, 1: 2, 2: 3, 3: 5}),         # tables of different widths
])
def test_one_pass_is_the_weighted_least_squares_projection(sets, shapes):
    rng = np.random.default_rng(3)
    tables = [normalized(rng, tuple(shapes[a] for a in s)) for s in sets]
    variances = rng.uniform(0.5, 2.0, len(sets))
    want = dense_least_squares(tables, sets, variances)
    got = [t.copy() for t in tables]
    consistency_step(got, sets, variances)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-13)
    assert max_inconsistency(got, sets) < 1e-15 and max_inconsistency(tables, sets) > 1e-3
    # no variances: equal weights per cell
    got = [t.copy() for t in tables]
    consistency_step(got, sets)
    for g, w in zip(got, dense_least_squares(tables, sets, [1.0] * len(sets))):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-13)


@pytest.mark.parametrize("d, g1, g2", [(2, 8, 4), (3, 6, 3), (3, 4, 4)])
def test_hdg_grids_are_tables_of_the_2d_grids_margins(d, g1, g2):
    """A 1-D grid as a (g2, g1/g2) table: its margin over the coarse axis is what the 2-D grids hold, so
    the shared routine is the least-squares consistency of the grids (the dense reference over the grids'
    own cells)."""
    rng = np.random.default_rng(d + g1)
    grids = HDGPlan(d, g1, g2, 1.0).grids
    ests = [normalized(rng, (g1,) if len(a) == 1 else (g2, g2)) for a in grids]
    variances = rng.uniform(1e-5, 1e-4, len(grids))
    tables, sets = grid_tables(ests, grids, d, g1, g2)
    assert sets[:d] == [(t, d + t) for t in range(d)]
    assert all(np.shares_memory(e, t) for e, t in zip(ests, tables))
    assert shared_subsets(sets) == [(t,) for t in range(d)]
    want = dense_least_squares(tables, sets, variances)
    consistency_step(tables, sets, variances)
    for e, w in zip(ests, want):  # changed in place through the views
        np.testing.assert_allclose(e, w.reshape(e.shape), rtol=0, atol=1e-13)


def test_make_consistent_gives_non_negative_agreeing_tables():
    rng = np.random.default_rng(5)
    sets = list(itertools.combinations(range(4), 2))
    shapes = (2, 3, 2, 4)
    raw = [rng.normal(1.0 / np.prod([shapes[a] for a in s]), 0.05, tuple(shapes[a] for a in s)) for s in sets]
    variances = list(rng.uniform(1e-3, 3e-3, len(sets)))
    before = [r.copy() for r in raw]
    for nonnegative in ("norm-sub", "noise-weighted"):
        out, n_iter, converged = make_consistent(raw, sets, variances, nonnegative=nonnegative)
        assert converged and n_iter >= 1
        assert max_inconsistency(out, sets) < 1e-9
        for t, r in zip(out, raw):
            assert t.shape == r.shape and t.min() >= 0 and t.sum() == pytest.approx(1, abs=1e-12)
    for r, b in zip(raw, before):
        np.testing.assert_array_equal(r, b)  # the input is not changed
    # one column's margin, from either table holding it, is the same
    np.testing.assert_allclose(project(out[0], sets[0], (1,)), project(out[3], sets[3], (1,)), atol=1e-9)


def test_bad_options():
    with pytest.raises(ValueError, match="nonnegative"):
        make_consistent([np.ones((2, 2)) / 4], [(0, 1)], nonnegative="clip")
    with pytest.raises(ValueError, match="needs the tables' variances"):
        make_consistent([np.ones((2, 2)) / 4], [(0, 1)], nonnegative="noise-weighted")
    assert max_inconsistency([np.ones((2, 2))], [(0, 1)]) == 0.0  # nothing shared
