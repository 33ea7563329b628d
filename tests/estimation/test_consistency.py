"""Hierarchical consistency of range trees (``ldpnum/estimation/consistency.py``): minimal covers and range sums,
least squares and the non-negative fit, against dense references."""

import math

import numpy as np
import pytest

from ldpnum.estimation import consistency
from ldpnum.estimation.consistency import decompose, least_squares, nonnegative, range_sums, tree_shape

import naive as naive_tree


SHAPES = [(8, 2), (16, 4), (27, 3), (10, 3), (20, 4), (9, 2), (5, 5), (16, 2)]


@pytest.mark.parametrize("n_leaves,branching", SHAPES)
def test_decompose_is_the_minimal_cover(n_leaves, branching):
    shape = tree_shape(n_leaves, branching)
    pairs = [(a, b) for a in range(n_leaves + 1) for b in range(a, n_leaves + 1)]
    a, b = np.array(pairs).T
    runs = decompose(shape, a, b)
    for q, (qa, qb) in enumerate(pairs):
        got = {}
        for l, (lo1, hi1, lo2, hi2) in enumerate(runs):
            nodes = list(range(lo1[q], hi1[q])) + list(range(lo2[q], hi2[q]))
            if nodes:
                got[l] = nodes
        assert got == naive_tree.cover(shape, qa, qb), (qa, qb)
        assert all(len(v) <= 2 * (branching - 1) for v in got.values())
    # range sums of a consistent tree equal leaf sums
    leaves = np.random.default_rng(1).random(n_leaves)
    leaves /= leaves.sum()
    levels = consistency.tree_from_leaves(shape, leaves)
    cum = np.concatenate(([0.0], np.cumsum(leaves)))
    np.testing.assert_allclose(range_sums(shape, levels, a, b), cum[b] - cum[a], atol=1e-12)


def _noisy_tree(shape, rng, noise=0.1, variances=None):
    leaves = rng.dirichlet(np.ones(shape.n_leaves))
    true = consistency.tree_from_leaves(shape, leaves)
    if variances is None:
        variances = (0.0,) + tuple(rng.uniform(0.2, 3.0, shape.n_levels))
    est = [np.array([1.0])] + [t + rng.normal(0, noise * math.sqrt(v), t.size)
                               for t, v in zip(true[1:], variances[1:])]
    return est, variances


@pytest.mark.parametrize("n_leaves,branching", SHAPES)
def test_least_squares_matches_dense_reference(n_leaves, branching):
    shape = tree_shape(n_leaves, branching)
    rng = np.random.default_rng(n_leaves * 31 + branching)
    for _ in range(5):
        est, var = _noisy_tree(shape, rng)
        got = least_squares(shape, est, var)
        ref = naive_tree.dense_least_squares(shape, est, var)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=0, atol=1e-10)


def test_least_squares_is_hays_closed_form_for_equal_variances():
    """Complete binary tree, equal variances, root fixed: Hay et al.'s weights (B^i - B^{i-1})/(B^i - 1)."""
    shape = tree_shape(8, 2)
    rng = np.random.default_rng(0)
    est, _ = _noisy_tree(shape, rng, variances=(0.0, 1.0, 1.0, 1.0))
    B = 2
    z = [None] * 4
    z[3] = est[3]
    for l in (2, 1):
        i = 3 - l + 1  # height of the node (leaves: 1)
        child = z[l + 1].reshape(-1, B).sum(axis=1)
        z[l] = (B**i - B ** (i - 1)) / (B**i - 1) * est[l] + (B ** (i - 1) - 1) / (B**i - 1) * child
    out = [np.array([1.0])]
    for l in (1, 2, 3):
        parent = np.repeat(out[-1], B)
        sums = np.repeat(z[l].reshape(-1, B).sum(axis=1), B)
        out.append(z[l] + (parent - sums) / B)
    for g, r in zip(least_squares(shape, est, (0.0, 1.0, 1.0, 1.0)), out):
        np.testing.assert_allclose(g, r, atol=1e-13)


@pytest.mark.parametrize("n_leaves,branching", [(8, 2), (9, 3), (10, 3), (5, 5), (8, 4), (6, 2)])
def test_nonnegative_matches_enumeration(n_leaves, branching):
    """HH-ADMM + polish, and the active-set finisher alone, against enumeration of every active set."""
    shape = tree_shape(n_leaves, branching)
    rng = np.random.default_rng(n_leaves + 100 * branching)
    n_neg = 0
    for _ in range(6):
        est, var = _noisy_tree(shape, rng, noise=0.15)
        ref = naive_tree.dense_nonnegative(shape, est, var)
        for kwargs in ({}, {"max_iter": 1, "polish_every": 0}):
            res = nonnegative(shape, est, var, **kwargs)
            assert res.converged
            for g, r in zip(res.levels, ref):
                np.testing.assert_allclose(g, r, rtol=0, atol=1e-10)
        n_neg += res.method != "lsq"
    assert n_neg >= 3  # the constraint was active in most cases


@pytest.mark.parametrize("n_leaves,branching", [(16, 2), (27, 3), (16, 4)])
def test_nonnegative_matches_slsqp(n_leaves, branching):
    shape = tree_shape(n_leaves, branching)
    rng = np.random.default_rng(5)
    est, var = _noisy_tree(shape, rng, noise=0.2)
    res = nonnegative(shape, est, var)
    ref, info = naive_tree.slsqp_nonnegative(shape, est, var)
    assert info.success and res.converged and res.method in ("polish", "active-set")
    f_ours = naive_tree.objective(shape, res.levels, est, var)
    f_ref = naive_tree.objective(shape, ref, est, var)
    assert f_ours <= f_ref * (1 + 1e-9)
    np.testing.assert_allclose(res.levels[-1], ref[-1], atol=1e-5)  # SLSQP's own accuracy
