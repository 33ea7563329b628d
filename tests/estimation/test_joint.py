"""Joint tables of two or more attributes (``ldpnum/estimation/joint.py``): response matrices fitted by iterative
proportional fitting, the interpolated and copula starts, and shrinking a 2-D grid toward independence, each
against a naive reference."""

import math

import numpy as np
import pytest

from ldpnum.estimation.joint import (fit_copula_correlation, gaussian_copula_table, interpolation_matrix,
                                     response_matrix, shrink_to_independence, toward_independence)


def naive_weights(x, g2):
    """Linear interpolation weights of a position x in [0, 1] on the centres of g2 equal cells (clamped)."""
    centres = [(c + 0.5) / g2 for c in range(g2)]
    w = [0.0] * g2
    if x <= centres[0]:
        w[0] = 1.0
    elif x >= centres[-1]:
        w[-1] = 1.0
    else:
        c = max(k for k in range(g2) if centres[k] <= x)
        t = (x - centres[c]) * g2
        w[c], w[c + 1] = 1 - t, t
    return w


def naive_interpolated_start(f_ab, g1):
    """The 2-D grid's cell masses placed at the cells' centres and interpolated linearly (clamped) to the centres
    of g1 × g1 fine cells, normalized: point by point, with plain loops."""
    g2 = f_ab.shape[0]
    M = np.zeros((g1, g1))
    for i in range(g1):
        wi = naive_weights((i + 0.5) / g1, g2)
        for j in range(g1):
            wj = naive_weights((j + 0.5) / g1, g2)
            M[i, j] = sum(wi[p] * wj[q] * f_ab[p, q] for p in range(g2) for q in range(g2))
    return M / M.sum()


def naive_ipf(f_a, f_b, f_ab, n_iter, start=None):
    """Iterative proportional fitting, one row, column and block at a time (plain loops), from ``start``
    (default: the uniform table)."""
    g1, g2 = len(f_a), f_ab.shape[0]
    r = g1 // g2
    M = [[1.0 / g1 ** 2] * g1 for _ in range(g1)] if start is None else [list(row) for row in start]
    for _ in range(n_iter):
        for i in range(g1):
            s = sum(M[i])
            if s > 0:
                M[i] = [v * f_a[i] / s for v in M[i]]
        for j in range(g1):
            s = sum(M[i][j] for i in range(g1))
            if s > 0:
                for i in range(g1):
                    M[i][j] *= f_b[j] / s
        for p in range(g2):
            for q in range(g2):
                cells = [(i, j) for i in range(p * r, p * r + r) for j in range(q * r, q * r + r)]
                s = sum(M[i][j] for i, j in cells)
                if s > 0:
                    for i, j in cells:
                        M[i][j] *= f_ab[p, q] / s
    return np.array(M)


def test_response_matrix_matches_a_dense_reference():
    rng = np.random.default_rng(0)
    f_a = rng.dirichlet(np.ones(8))
    f_b = rng.dirichlet(np.ones(8))
    f_ab = rng.dirichlet(np.ones(4)).reshape(2, 2)
    f_a[3] = 0.0
    f_a /= f_a.sum()
    M, n_iter, _ = response_matrix(f_a, f_b, f_ab, start="uniform", tol=0, max_iter=7)
    assert n_iter == 7
    np.testing.assert_allclose(M, naive_ipf(f_a, f_b, f_ab, 7), rtol=1e-12, atol=1e-15)
    M, n_iter, _ = response_matrix(f_a, f_b, f_ab, tol=0, max_iter=7)  # default: the interpolated start
    assert n_iter == 7
    np.testing.assert_allclose(M, naive_ipf(f_a, f_b, f_ab, 7, naive_interpolated_start(f_ab, 8)), rtol=1e-12,
                               atol=1e-15)
    M0, n_iter, _ = response_matrix(f_a, f_b, f_ab, tol=0, max_iter=0)
    assert n_iter == 0
    np.testing.assert_allclose(M0, naive_interpolated_start(f_ab, 8), rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="start"):
        response_matrix(f_a, f_b, f_ab, start="flat")


@pytest.mark.parametrize("g1,g2", [(8, 2), (8, 4), (16, 4), (4, 4), (64, 8), (2, 2)])
def test_interpolation_matrix_matches_a_naive_reference(g1, g2):
    A = interpolation_matrix(g1, g2)
    ref = np.array([naive_weights((k + 0.5) / g1, g2) for k in range(g1)])
    np.testing.assert_allclose(A, ref, atol=1e-12)
    np.testing.assert_allclose(A.sum(axis=1), 1.0)
    own = np.arange(g1) * g2 // g1
    assert np.all(A[np.arange(g1), own] >= 0.5)


@pytest.mark.parametrize("g1,g2,bound", [(16, 4, 0.80), (32, 8, 0.48), (64, 8, 0.48)])
def test_interpolated_start_keeps_a_correlated_pairs_shape_inside_cells(g1, g2, bound):
    # noise-free grids of a smooth correlated density (normal, r = 0.8, at the fine cells' centres): the
    # uniform start spreads each 2-D cell's mass as a product of its marginals; the interpolated one follows
    # the neighbouring cells. Both satisfy every constraint; L1 distance to the truth (deterministic: the
    # measured ratios are 0.79, 0.467, 0.465)
    z = ((np.arange(g1) + 0.5) / g1 - 0.5) * 6
    Z1, Z2 = np.meshgrid(z, z, indexing="ij")
    T = np.exp(-(Z1 ** 2 - 1.6 * Z1 * Z2 + Z2 ** 2) / (2 * 0.36))
    T /= T.sum()
    r = g1 // g2
    f_ab = T.reshape(g2, r, g2, r).sum(axis=(1, 3))
    errors = {}
    for start in ("uniform", "interpolated"):
        M, _, ok = response_matrix(T.sum(axis=1), T.sum(axis=0), f_ab, start=start)
        assert ok
        np.testing.assert_allclose(M.sum(axis=1), T.sum(axis=1), atol=1e-9)
        np.testing.assert_allclose(M.sum(axis=0), T.sum(axis=0), atol=1e-9)
        np.testing.assert_allclose(M.reshape(g2, r, g2, r).sum(axis=(1, 3)), f_ab, atol=1e-9)
        errors[start] = np.abs(M - T).sum()
    assert errors["interpolated"] < bound * errors["uniform"]


def naive_shrink(F, V, z):
    """shrink_to_independence written out: the interaction's first-order noise map built cell by cell, and the
    weight from every rectangle of cells enumerated."""
    g = F.shape[0]
    r, c, s = F.sum(axis=1), F.sum(axis=0), F.sum()
    P = np.array([[r[u] * c[v] / s for v in range(g)] for u in range(g)])
    D = F - P
    p = np.maximum(r, 0) / np.maximum(r, 0).sum()
    q = np.maximum(c, 0) / np.maximum(c, 0).sum()
    L = {(u, v): np.outer(np.eye(g)[u] - p, np.eye(g)[v] - q) for u in range(g) for v in range(g)}  # dD/dF[u,v]
    lam = np.array([[V[u, v] * np.sum(L[u, v] ** 2) for v in range(g)] for u in range(g)])
    if np.sum(D * D) > lam.sum() + z * math.sqrt(2 * np.sum(lam * lam)):
        return F, 1.0
    cov = ss = 0.0
    intervals = [(i, j) for i in range(g) for j in range(i, g)]
    for x0, x1 in intervals:
        for y0, y1 in intervals:
            ind = np.zeros((g, g))
            ind[x0:x1 + 1, y0:y1 + 1] = 1
            # Cov(dF(Q), dD(Q)) = Σ_cells V ind <ind, L(cell)>
            cov += sum(V[u, v] * ind[u, v] * np.sum(ind * L[u, v]) for u in range(g) for v in range(g))
            ss += np.sum(ind * D) ** 2
    w = min(1.0, max(0.0, 1 - cov / ss))
    return P + w * D, w


@pytest.mark.parametrize("g,seed", [(2, 0), (3, 1), (4, 2), (5, 3)])
def test_shrink_to_independence_matches_a_naive_reference(g, seed):
    rng = np.random.default_rng(seed)
    truth = np.outer(rng.dirichlet(np.ones(g)), rng.dirichlet(np.ones(g)))
    V = rng.uniform(0.5, 2.0, (g, g)) * 1e-4
    for dependence in (0.0, 0.02, 0.2):
        F = truth + rng.normal(0, np.sqrt(V)) + dependence * (np.eye(g) - 1 / g) / g
        for z in (0.0, 2.0, 5.0):
            got, w = shrink_to_independence(F, V, z=z)
            want, w_want = naive_shrink(F, V, z)
            assert w == pytest.approx(w_want, abs=1e-12)
            np.testing.assert_allclose(got, want, atol=1e-14)
            np.testing.assert_allclose(got.sum(axis=1), F.sum(axis=1), atol=1e-14)  # margins kept
            np.testing.assert_allclose(got.sum(axis=0), F.sum(axis=0), atol=1e-14)


def test_shrink_noise_is_the_interactions_variance():
    """N = Σ Var(F_uv) a_u b_v is E‖D‖² for an independent truth (first order): checked by simulation, within
    4 standard errors of the simulated mean (plus 2% for the second-order terms at this noise level)."""
    rng = np.random.default_rng(5)
    g, reps = 6, 4000
    truth = np.outer(rng.dirichlet(2 * np.ones(g)), rng.dirichlet(2 * np.ones(g)))
    V = rng.uniform(0.5, 2.0, (g, g)) * 1e-6
    p, q = truth.sum(axis=1), truth.sum(axis=0)
    noise = float(np.sum(V * np.outer(1 - 2 * p + p @ p, 1 - 2 * q + q @ q)))
    ss = np.empty(reps)
    for i in range(reps):
        F = truth + rng.normal(0, np.sqrt(V))
        D = F - np.outer(F.sum(axis=1), F.sum(axis=0)) / F.sum()
        ss[i] = np.sum(D * D)
    se = ss.std(ddof=1) / math.sqrt(reps)
    assert abs(ss.mean() - noise) < 4 * se + 0.02 * noise, (ss.mean(), noise, se)
    # a wrong noise (the cells' variances without the projection) is far off: the check can fail
    assert abs(ss.mean() - V.sum()) > 4 * se + 0.02 * noise


def test_shrink_weights_independent_and_dependent_grids():
    rng = np.random.default_rng(6)
    g = 8
    truth = np.outer(rng.dirichlet(3 * np.ones(g)), rng.dirichlet(3 * np.ones(g)))
    V = np.full((g, g), 1e-5)
    ws = [shrink_to_independence(truth + rng.normal(0, np.sqrt(V)), V)[1] for _ in range(200)]
    # independent, equal cell variances: 1 - w estimates Σ_Q Cov(δF(Q), δD(Q)) / Σ_Q Var δD(Q), 0.990 for this
    # truth (computed by enumerating the rectangles): the ideal weight is 0.01, the estimates mostly 0; the
    # pre-test keeps a grid (w = 1) at a few % of the draws
    assert np.median(ws) < 0.1 and np.mean(np.array(ws) == 1.0) < 0.08
    assert np.mean([w for w in ws if w < 1]) < 0.15
    dependent = truth + 0.5 * np.diag(truth.sum(axis=1)) - 0.5 * np.outer(truth.sum(axis=1), truth.sum(axis=0))
    assert shrink_to_independence(dependent + rng.normal(0, np.sqrt(V)), V)[1] == 1.0
    # z = inf-like: never kept; a mildly dependent grid gets an intermediate weight
    mild = truth + 0.1 * (np.diag(truth.sum(axis=1)) - np.outer(truth.sum(axis=1), truth.sum(axis=0)))
    _, w = shrink_to_independence(mild, V, z=1e9)
    assert 0.0 < w < 1.0


def test_toward_independence_keeps_margins_and_non_negativity():
    rng = np.random.default_rng(7)
    E = rng.dirichlet(np.ones(25)).reshape(5, 5)
    P = np.outer(E.sum(axis=1), E.sum(axis=0))
    np.testing.assert_array_equal(toward_independence(E, 1.0), E)
    np.testing.assert_allclose(toward_independence(E, 0.0), P, atol=1e-15)
    for w in (0.0, 0.3, 0.9):
        T = toward_independence(E, w)
        assert T.min() >= 0
        np.testing.assert_allclose(T.sum(axis=1), E.sum(axis=1), atol=1e-15)
        np.testing.assert_allclose(T.sum(axis=0), E.sum(axis=0), atol=1e-15)
        np.testing.assert_allclose(T, P + w * (E - P), atol=1e-15)


def test_gaussian_copula_table_and_fit():
    pa, pb = np.full(64, 1 / 64), np.full(64, 1 / 64)
    np.testing.assert_allclose(gaussian_copula_table(pa, pb, 0.0), np.outer(pa, pb), rtol=1e-12)
    T = gaussian_copula_table(pa, pb, 0.8)
    assert T.sum() == pytest.approx(1.0) and np.allclose(T, T.T)
    # its block sums at 8 × 8 match the exact Gaussian-copula cell probabilities (bivariate normal CDF)
    from scipy import stats

    z = stats.norm.ppf(np.linspace(0, 1, 9)[1:-1])
    cdf = np.zeros((9, 9))
    cdf[1:-1, 1:-1] = stats.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]]).cdf(
        np.stack(np.meshgrid(z, z, indexing="ij"), axis=-1))
    cdf[-1, 1:-1] = cdf[1:-1, -1] = stats.norm.cdf(z)
    cdf[-1, -1] = 1.0
    exact = np.diff(np.diff(cdf, axis=0), axis=1)
    np.testing.assert_allclose(T.reshape(8, 8, 8, 8).sum(axis=(1, 3)), exact, atol=2e-3)  # mid-cell density
    assert fit_copula_correlation(pa, pb, exact) == pytest.approx(0.8, abs=0.02)
    assert fit_copula_correlation(pa, pb, np.full((8, 8), 1 / 64)) == pytest.approx(0.0, abs=1e-3)
    # the copula response matrix: R g1 cells a side, margins and block sums as constrained
    M, _, ok = response_matrix(np.full(16, 1 / 16), np.full(16, 1 / 16), exact, start="copula", refine=2)
    assert ok and M.shape == (32, 32)
    np.testing.assert_allclose(M.reshape(16, 2, 16, 2).sum(axis=(1, 3)).sum(axis=1), 1 / 16, atol=1e-8)
    np.testing.assert_allclose(M.reshape(8, 4, 8, 4).sum(axis=(1, 3)), exact, atol=1e-8)


def test_copula_response_matrix_refuses_a_huge_refinement():
    with pytest.raises(ValueError, match="refine"):
        response_matrix(np.full(1024, 1 / 1024), np.full(1024, 1 / 1024), np.full((4, 4), 1 / 16), start="copula",
                        refine=8)  # 8192 cells a side: more than G1_MAX
