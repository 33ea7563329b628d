"""Slow, obviously-correct references for hierarchical histograms (Python loops, dense linear algebra).

- :func:`hierarchy`: the client kernel, one record at a time with Python ints, from the same words.
- :func:`hierarchy_packed`: the same for trees with OLH levels (packed uint64 reports, 3 words per record).
- :func:`aggregate_packed`: the aggregate of packed reports, level by level, every report decoded against
  every node with the schoolbook field product.
- :func:`cover`: the minimal node cover of a leaf range, by recursion from the root.
- :func:`dense_least_squares`: the constrained least-squares tree from the KKT system (numpy.linalg).
- :func:`dense_nonnegative`: the non-negative consistent tree by enumerating every active set (tiny trees).
- :func:`slsqp_nonnegative`: the same problem through scipy.optimize (SLSQP), for slightly larger trees.
- :func:`none_range_variance`: the exact variance of an unbiased ("none") range answer given the per-level
  report counts, for GRR levels.
"""

import itertools

import numpy as np

import naive_hashing

LOW16 = 0xFFFF


def unit(x, low, high):
    u = (float(x) - low) * (1.0 / (high - low))
    return 0.0 if not u > 0.0 else min(u, 1.0)


def leaf(x, low, high, n_leaves):
    return min(int(unit(x, low, high) * float(n_leaves)), n_leaves - 1)


def grr(v, w_keep, w_lie, k, t_keep):
    if (int(w_keep) >> 11) < t_keep:
        return v
    j = ((int(w_lie) >> 16) * (k - 1)) >> 48
    return j + 1 if j >= v else j


def hierarchy(x, low, high, n_leaves, table, words):
    """Reference for ``hierarchy_kernel``: table rows ``[kind, k, node_size, offset, t_keep, shift]`` (the
    shift is only the kernel's fast path; the reference divides)."""
    L = len(table)
    out = []
    for i, v in enumerate(x):
        t = leaf(v, low, high, n_leaves)
        w0, w1 = int(words[2 * i]), int(words[2 * i + 1])
        lev = ((w1 & LOW16) * L) >> 16
        kind, k, size, offset, t_keep, _ = (int(c) for c in table[lev])
        assert kind == 0
        out.append(offset + grr(t // size, w0, w1, k, t_keep))
    return np.array(out)


def hierarchy_packed(x, low, high, n_leaves, table, words):
    """Reference for ``hierarchy_packed_kernel``: word 3i the seed, 3i+1 the keep coin, 3i+2 the lie and
    the level; report ``seed | level << 12 | y`` (OLH level, kind 1) or ``code << 16 | level << 12`` (GRR)."""
    L = len(table)
    out = []
    for i, v in enumerate(x):
        t = leaf(v, low, high, n_leaves)
        ws, wk, wl = (int(w) for w in words[3 * i:3 * i + 3])
        lev = ((wl & LOW16) * L) >> 16
        kind, m, size, _, t_keep, _ = (int(c) for c in table[lev])
        node = t // size
        if kind == 1:
            a, b = ws >> 40, (ws >> 16) & ((1 << 24) - 1)
            y = grr(naive_hashing.local_hash(a, b, node, m), wk, wl, m, t_keep)
            out.append((ws >> 16 << 16) | (lev << 12) | y)
        else:
            assert kind == 0
            out.append((grr(node, wk, wl, m, t_keep) << 16) | (lev << 12))
    return np.array(out, dtype=np.uint64)


def aggregate_packed(codes, ks, gs):
    """Aggregate of packed reports: per level ``l`` (``gs[l] == 0``: GRR over ``ks[l]`` nodes; else OLH with
    hash range ``gs[l]``) GRR's code histogram, or the support count of every node and then ``n_l``."""
    codes = [int(c) for c in codes]
    blocks = []
    for l, (k, g) in enumerate(zip(ks, gs)):
        mine = [c for c in codes if (c >> 12) & 0xF == l]
        if g:
            block = [0] * (k + 1)
            for c in mine:
                a, b, y = c >> 40, (c >> 16) & ((1 << 24) - 1), c & 0xFFF
                for v in range(k):
                    block[v] += naive_hashing.local_hash(a, b, v, g) == y
            block[k] = len(mine)
        else:
            block = [0] * k
            for c in mine:
                assert c & 0xFFF == 0
                block[c >> 16] += 1
        blocks += block
    return np.array(blocks, dtype=np.int64)


# -- the tree ----------------------------------------------------------------------------------------------

def nodes(shape):
    """``[(level, index, first_leaf, stop_leaf)]`` of every node below the root, level by level."""
    out = []
    for l in range(1, shape.n_levels + 1):
        size = shape.node_sizes[l]
        for j in range(shape.counts[l]):
            out.append((l, j, j * size, min((j + 1) * size, shape.n_leaves)))
    return out


def leaf_matrix(shape):
    """Dense ``A``: row per node below the root (level by level), 1 where the node holds the leaf."""
    rows = nodes(shape)
    A = np.zeros((len(rows), shape.n_leaves))
    for r, (_, _, a, b) in enumerate(rows):
        A[r, a:b] = 1.0
    return A


def cover(shape, a, b):
    """Minimal node cover of leaves ``[a, b)`` as ``{level: [node indices]}``, recursively from the root:
    a node inside the range is taken whole, a node partly inside is split into its children."""
    out = {}

    def visit(l, j):
        size = shape.node_sizes[l]
        lo, hi = j * size, min((j + 1) * size, shape.n_leaves)
        if hi <= a or lo >= b:
            return
        if a <= lo and hi <= b:
            out.setdefault(l, []).append(j)
            return
        for c in range(j * shape.branching, min((j + 1) * shape.branching, shape.counts[l + 1])):
            visit(l + 1, c)

    if a < b:
        visit(0, 0)
    return out


def _kkt_solve(A, w, obs, root, free):
    """Minimise sum w (A θ - obs)^2 subject to sum θ = root and θ_i = 0 outside ``free``."""
    Af = A[:, free]
    H = Af.T @ (w[:, None] * Af)
    m = Af.shape[1]
    K = np.zeros((m + 1, m + 1))
    K[:m, :m] = H
    K[:m, m] = 1.0
    K[m, :m] = 1.0
    rhs = np.concatenate([Af.T @ (w * obs), [root]])
    sol = np.linalg.solve(K, rhs)
    theta = np.zeros(A.shape[1])
    theta[free] = sol[:m]
    return theta


def _levels(shape, theta):
    from ldpnum.ranges.consistency import tree_from_leaves

    return tree_from_leaves(shape, theta)


def _flat_obs(shape, estimates, variances):
    obs = np.concatenate([np.asarray(e, float) for e in estimates[1:]])
    var = np.concatenate([np.broadcast_to(np.asarray(v, float), (c,))
                          for v, c in zip(variances[1:], shape.counts[1:])])
    return obs, var


def dense_least_squares(shape, estimates, variances, root=1.0):
    A = leaf_matrix(shape)
    obs, var = _flat_obs(shape, estimates, variances)
    theta = _kkt_solve(A, 1.0 / var, obs, root, np.arange(shape.n_leaves))
    return _levels(shape, theta)


def objective(shape, levels, estimates, variances):
    obs, var = _flat_obs(shape, estimates, variances)
    x = np.concatenate([np.asarray(v, float) for v in levels[1:]])
    return float(np.sum((x - obs) ** 2 / var))


def dense_nonnegative(shape, estimates, variances, root=1.0):
    """Enumerate every free set; keep the feasible equality-constrained solution of least objective."""
    A = leaf_matrix(shape)
    obs, var = _flat_obs(shape, estimates, variances)
    w = 1.0 / var
    best = None
    n = shape.n_leaves
    for r in range(1, n + 1):
        for free in itertools.combinations(range(n), r):
            theta = _kkt_solve(A, w, obs, root, np.array(free))
            if theta.min() < -1e-13:
                continue
            theta = np.maximum(theta, 0.0)
            f = float(np.sum(w * (A @ theta - obs) ** 2))
            if best is None or f < best[0]:
                best = (f, theta)
    return _levels(shape, best[1])


def slsqp_nonnegative(shape, estimates, variances, root=1.0):
    from scipy.optimize import minimize

    A = leaf_matrix(shape)
    obs, var = _flat_obs(shape, estimates, variances)
    w = 1.0 / var
    scale = w.max()
    fun = lambda t: 0.5 * np.sum(w / scale * (A @ t - obs) ** 2)  # noqa: E731
    jac = lambda t: A.T @ (w / scale * (A @ t - obs))  # noqa: E731
    n = shape.n_leaves
    res = minimize(fun, np.full(n, root / n), jac=jac, method="SLSQP", bounds=[(0, None)] * n,
                   constraints=[{"type": "eq", "fun": lambda t: t.sum() - root, "jac": lambda t: np.ones(n)}],
                   options={"ftol": 1e-15, "maxiter": 2000})
    return _levels(shape, np.maximum(res.x, 0.0)), res


# -- exact variance of an unbiased range answer ------------------------------------------------------------

def none_range_variance(shape, leaves_of_people, a, b, n_per_level, support, hashed=()):
    """Exact ``Var(answer | n_1..n_L)`` of the ``"none"`` answer for leaves ``[a, b)``, GRR levels, and OLH
    levels (``l`` in ``hashed``) where the cover takes at most one node.

    ``leaves_of_people``: each person's leaf; ``support[l-1] = (p, q)`` of level ``l``'s GRR. Given the level
    sizes, levels are a uniform random partition of the people; the answer is
    ``T = sum_l (I_l / n_l - s_l q_l) / (p_l - q_l)`` with ``I_l`` the reports at level ``l`` in the cover's
    ``s_l`` nodes. ``Var T = E[Var(T | partition)] + Var(E[T | partition])``: the first is the oracles' noise
    (independent people), the second the partition's (a linear statistic of a random partition, exact
    second moments of the group indicators).
    """
    cov = cover(shape, a, b)
    n = len(leaves_of_people)
    t = np.asarray(leaves_of_people)
    L = shape.n_levels
    ind = np.zeros((L, n))
    oracle = 0.0
    for l in range(1, L + 1):
        chosen = cov.get(l, [])
        if not chosen:
            continue
        nl = n_per_level[l - 1]
        p, q = support[l - 1]
        s = len(chosen)
        # An OLH report supports one node w.p. p (its own) or q (any other): a Bernoulli, as GRR's; two
        # nodes' supports from one report are dependent beyond pairwise independence, so s = 1 only.
        assert l not in hashed or s == 1, "OLH levels: one node per level"
        ind[l - 1] = np.isin(t // shape.node_sizes[l], chosen)
        F = ind[l - 1].mean()
        pi1, pi0 = p + (s - 1) * q, s * q
        oracle += (nl * F * pi1 * (1 - pi1) + nl * (1 - F) * pi0 * (1 - pi0)) / (nl * (p - q)) ** 2
    nl = np.array(n_per_level, float)
    c = ind / nl[:, None]                 # c[l, i] = a_i^l / n_l
    C = c.sum(axis=1)
    Q = c @ c.T
    sampling = 0.0
    for l in range(L):
        for m in range(L):
            d = 1.0 if l == m else 0.0
            same = d * nl[l] / n - nl[l] * nl[m] / n**2
            other = nl[l] * (nl[m] - d) / (n * (n - 1)) - nl[l] * nl[m] / n**2
            sampling += Q[l, m] * same + (C[l] * C[m] - Q[l, m]) * other
    return oracle + sampling
