# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernels of hierarchical histograms: consistent trees (design rule R6).

A tree is stored level by level in one array: level ``l`` (``0`` = the root, ``L`` = the leaves) holds nodes
``starts[l] .. starts[l+1]-1``, and the children of node ``j`` of level ``l`` (its index within the level) are
nodes ``j*B .. min((j+1)*B, k_{l+1})-1`` of level ``l+1``. The last node of a level may have fewer than ``B``
children (a *ragged* tree: the leaf count need not be a power of ``B``).

Three routines, all O(number of nodes) per pass, GIL released, no OpenMP (see ``server_counts.pyx``):

``tree_solve``
    The weighted least-squares consistent tree (generalised least squares): given an observation ``obs[v]``
    with variance ``var[v]`` for every node (``var = 0``: the node is known exactly) and the root fixed to
    ``root``, minimise ``sum_v (x[v] - obs[v])**2 / var[v]`` over trees whose every internal node equals
    the sum of its children. Two passes (Hay et al. 2010's constrained inference, generalised to per-node
    variances): bottom-up, each node's best estimate from its own subtree, ``z[v]``, with variance ``w[v]``
    (the inverse-variance average of its own observation and the sum of its children's ``z``); top-down,
    each parent's final value minus the sum of its children's ``z`` is shared among the children in
    proportion to ``w``. This is exact (the posterior mean of a Gaussian tree with a flat prior on the
    leaves), not an iteration.
``hh_admm``
    The non-negative consistent tree of Li et al.'s HH-ADMM: minimise ``sum_v (x[v] - obs[v])**2 / var[v]``
    subject to consistency, ``x >= 0`` and the root fixed, by ADMM splitting ``x`` (consistent: a
    ``tree_solve``) from ``z`` (non-negative: a clip), with residual balancing of ``rho`` and, every
    ``polish_every`` iterations, a *polish*: fix the leaves where ``z == 0`` at zero, solve the equality-
    constrained problem exactly with ``tree_solve`` and accept it if it satisfies the KKT conditions.
``active_set``
    A primal active-set method for the same problem (finite; each step one ``tree_solve``): the exact
    finisher when ADMM stops without a successful polish.

and one aggregation helper, ``split_levels``: packed hierarchical-histogram reports (level in bits 15..12)
grouped by level in one counting-sort pass, level bits cleared, so each level's block of the aggregate is
counted from a contiguous slice (the code histogram, or local hashing's support counts).
"""

from libc.math cimport sqrt, fabs
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, free

import numpy as np


cdef inline Py_ssize_t _imin(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a < b else b


cdef void _solve(const double* obs, const double* var, const int64_t* starts, Py_ssize_t n_levels,
                 Py_ssize_t B, double root, double* out, double* z, double* w) noexcept nogil:
    """Two-pass generalised least squares on the tree (see the module docstring)."""
    cdef Py_ssize_t L = n_levels
    cdef Py_ssize_t l, j, c, c0, c1, cs, ce
    cdef double s, vs, v, t, d, W
    for j in range(starts[L], starts[L + 1]):
        z[j] = obs[j]
        w[j] = var[j]
    # bottom-up: z = best estimate of the node from its subtree, w = its variance
    l = L - 1
    while l >= 1:
        cs = starts[l + 1]
        ce = starts[l + 2]
        for j in range(starts[l], starts[l + 1]):
            c0 = cs + (j - starts[l]) * B
            c1 = _imin(c0 + B, ce)
            s = 0.0
            vs = 0.0
            for c in range(c0, c1):
                s += z[c]
                vs += w[c]
            v = var[j]
            if v == 0.0:
                z[j] = obs[j]
                w[j] = 0.0
            elif vs == 0.0:
                z[j] = s
                w[j] = 0.0
            else:
                t = v + vs
                z[j] = (obs[j] * vs + s * v) / t
                w[j] = v * vs / t
        l -= 1
    # top-down: share each parent's surplus among its children in proportion to their variances
    out[0] = root
    for l in range(0, L):
        cs = starts[l + 1]
        ce = starts[l + 2]
        for j in range(starts[l], starts[l + 1]):
            c0 = cs + (j - starts[l]) * B
            c1 = _imin(c0 + B, ce)
            s = 0.0
            W = 0.0
            for c in range(c0, c1):
                s += z[c]
                W += w[c]
            d = out[j] - s
            if W > 0.0:
                for c in range(c0, c1):
                    out[c] = z[c] + d * (w[c] / W)
            else:  # every child is fixed: keep them (only reachable with contradictory constraints)
                for c in range(c0, c1):
                    out[c] = z[c]


cdef void _leaf_gradient(const double* x, const double* obs, const double* var, const int64_t* starts,
                         Py_ssize_t n_levels, Py_ssize_t B, double* acc) noexcept nogil:
    """``acc[leaf] = sum over the leaf's ancestors v at levels 1..L (itself included) of (x-obs)/var``:
    the gradient of the objective with respect to the leaf, for a tree determined by its leaves."""
    cdef Py_ssize_t l, j, p
    acc[0] = 0.0
    for l in range(1, n_levels + 1):
        for j in range(starts[l], starts[l + 1]):
            p = starts[l - 1] + (j - starts[l]) // B
            acc[j] = acc[p] + (x[j] - obs[j]) / var[j]


cdef int _polish(const double* obs, const double* var, const int64_t* starts, Py_ssize_t n_levels,
                 Py_ssize_t B, double root, const uint8_t* active, double kkt_tol, double* obs2, double* var2,
                 double* out, double* z, double* w, double* acc) noexcept nogil:
    """Solve with the active leaves fixed at 0; return 1 if the result satisfies the KKT conditions
    (free leaves >= 0, multipliers of the active leaves >= -kkt_tol * scale), 0 if a free leaf is negative,
    -1 if a multiplier is negative. ``out`` holds the equality-constrained solution in every case."""
    cdef Py_ssize_t N = starts[n_levels + 1]
    cdef Py_ssize_t s0 = starts[n_levels]
    cdef Py_ssize_t i, n_free = 0
    cdef double mu = 0.0, scale = 0.0, lam
    for i in range(N):
        obs2[i] = obs[i]
        var2[i] = var[i]
    for i in range(s0, N):
        if active[i - s0]:
            obs2[i] = 0.0
            var2[i] = 0.0
    _solve(obs2, var2, starts, n_levels, B, root, out, z, w)
    for i in range(s0, N):
        if not active[i - s0]:
            if out[i] < 0.0:
                return 0
    _leaf_gradient(out, obs, var, starts, n_levels, B, acc)
    for i in range(s0, N):
        if fabs(acc[i]) > scale:
            scale = fabs(acc[i])
        if not active[i - s0]:
            mu += acc[i]
            n_free += 1
    if n_free == 0:
        return -1
    mu = -mu / n_free
    scale = scale + fabs(mu)
    for i in range(s0, N):
        if active[i - s0]:
            lam = acc[i] + mu
            if lam < -kkt_tol * scale:
                return -1
    return 1


def tree_solve(const double[::1] obs, const double[::1] var, const int64_t[::1] starts, Py_ssize_t branching,
               double root, double[::1] out):
    """Weighted least-squares consistent tree with the root fixed to ``root``; writes ``out``.

    ``var[v] = 0`` fixes node ``v`` to ``obs[v]`` (the root's entry is ignored: it is ``root``).
    """
    cdef Py_ssize_t n_levels = starts.shape[0] - 2
    cdef Py_ssize_t N = starts[n_levels + 1]
    if obs.shape[0] != N or var.shape[0] != N or out.shape[0] != N:
        raise ValueError("tree_solve: obs, var and out must have one entry per node")
    cdef double* z = <double*> malloc(2 * N * sizeof(double))
    if z == NULL:
        raise MemoryError()
    with nogil:
        _solve(&obs[0], &var[0], &starts[0], n_levels, branching, root, &out[0], z, z + N)
    free(z)


def hh_admm(const double[::1] obs, const double[::1] var, const int64_t[::1] starts, Py_ssize_t branching,
            double root, double rho, Py_ssize_t max_iter, double eps_abs, double eps_rel,
            Py_ssize_t polish_every, double kkt_tol, double[::1] out):
    """HH-ADMM with polishing for the non-negative consistent tree (see the module docstring).

    The objective is scaled internally to weights ``var_min / var[v]`` (at most 1), so ``rho`` is relative
    to the most precise node. Stops at the first successful polish (status 1: an exact KKT point, to
    rounding), or when the primal and dual residuals ``r = |x - z|``, ``s = rho |z - z_prev|`` fall below
    ``sqrt(N) eps_abs + eps_rel max(|x|, |z|)`` and ``sqrt(N) eps_abs + eps_rel rho |u|`` (status 2: ``out``
    is the ADMM iterate ``z``, non-negative but consistent only to the tolerance), or after ``max_iter``
    iterations (status 0, ``out = z``). Returns ``(n_iter, status, rho)``.
    """
    cdef Py_ssize_t n_levels = starts.shape[0] - 2
    cdef Py_ssize_t N = starts[n_levels + 1]
    cdef Py_ssize_t s0 = starts[n_levels]
    cdef Py_ssize_t n_leaves = N - s0
    if obs.shape[0] != N or var.shape[0] != N or out.shape[0] != N:
        raise ValueError("hh_admm: obs, var and out must have one entry per node")
    cdef double* buf = <double*> malloc(10 * N * sizeof(double))
    cdef uint8_t* active = <uint8_t*> malloc(n_leaves * sizeof(uint8_t))
    if buf == NULL or active == NULL:
        free(buf)
        free(active)
        raise MemoryError()
    cdef double* wt = buf
    cdef double* x = buf + N
    cdef double* zz = buf + 2 * N
    cdef double* u = buf + 3 * N
    cdef double* o2 = buf + 4 * N
    cdef double* v2 = buf + 5 * N
    cdef double* wz = buf + 6 * N
    cdef double* ww = buf + 7 * N
    cdef double* acc = buf + 8 * N
    cdef double* pol = buf + 9 * N
    cdef Py_ssize_t i, it = 0, n_iter = 0
    cdef int status = 0, ok
    cdef double vmin = -1.0, r2, s2, xn2, zn2, un2, d, znew, eps_pri, eps_dual, prec
    cdef double sqrtN = sqrt(<double> (N - 1))
    with nogil:
        for i in range(1, N):
            if var[i] > 0.0 and (vmin < 0.0 or var[i] < vmin):
                vmin = var[i]
        for i in range(1, N):
            wt[i] = vmin / var[i] if var[i] > 0.0 else 0.0
        # start from the least-squares tree, clipped
        _solve(&obs[0], &var[0], &starts[0], n_levels, branching, root, x, wz, ww)
        for i in range(N):
            zz[i] = x[i] if x[i] > 0.0 else 0.0
            u[i] = 0.0
        o2[0] = root
        v2[0] = 0.0
        for it in range(1, max_iter + 1):
            n_iter = it
            # x-update: consistent tree closest to both the observations and z - u
            for i in range(1, N):
                prec = wt[i] + rho
                o2[i] = (wt[i] * obs[i] + rho * (zz[i] - u[i])) / prec
                v2[i] = 1.0 / prec
            _solve(o2, v2, &starts[0], n_levels, branching, root, x, wz, ww)
            # z-update (clip) and dual update, with the residuals
            r2 = 0.0
            s2 = 0.0
            xn2 = 0.0
            zn2 = 0.0
            un2 = 0.0
            for i in range(1, N):
                znew = x[i] + u[i]
                if znew < 0.0:
                    znew = 0.0
                d = znew - zz[i]
                s2 += d * d
                zz[i] = znew
                u[i] += x[i] - znew
                d = x[i] - znew
                r2 += d * d
                xn2 += x[i] * x[i]
                zn2 += znew * znew
                un2 += u[i] * u[i]
            if polish_every > 0 and it % polish_every == 0:
                for i in range(n_leaves):
                    active[i] = zz[s0 + i] <= 0.0
                ok = _polish(&obs[0], &var[0], &starts[0], n_levels, branching, root, active, kkt_tol,
                             o2, v2, pol, wz, ww, acc)
                o2[0] = root
                v2[0] = 0.0
                if ok == 1:
                    for i in range(N):
                        out[i] = pol[i]
                    status = 1
                    break
            eps_pri = sqrtN * eps_abs + eps_rel * sqrt(xn2 if xn2 > zn2 else zn2)
            eps_dual = sqrtN * eps_abs + eps_rel * rho * sqrt(un2)
            if sqrt(r2) <= eps_pri and rho * sqrt(s2) <= eps_dual:
                status = 2
                break
            if it % 10 == 0:  # residual balancing (Boyd et al. 2011, section 3.4.1)
                if r2 > 100.0 * rho * rho * s2:
                    rho *= 2.0
                    for i in range(N):
                        u[i] *= 0.5
                elif rho * rho * s2 > 100.0 * r2:
                    rho *= 0.5
                    for i in range(N):
                        u[i] *= 2.0
        if status != 1:
            zz[0] = root
            for i in range(N):
                out[i] = zz[i]
    free(buf)
    free(active)
    return int(n_iter), int(status), float(rho)


def active_set(const double[::1] obs, const double[::1] var, const int64_t[::1] starts, Py_ssize_t branching,
               double root, const double[::1] start, Py_ssize_t max_iter, double kkt_tol, double[::1] out):
    """Primal active-set method for the non-negative consistent tree, from a feasible leaf vector ``start``
    (non-negative, summing to ``root``). Each iteration solves the problem with the active leaves fixed at
    zero (one ``tree_solve``): if that point is feasible it is taken, and the active leaf with the most
    negative multiplier is released (stop when none is negative: the KKT conditions hold); otherwise the
    iterate moves toward it until the first free leaf reaches zero, which becomes active. The objective
    decreases at every step, so no active set repeats. Returns ``(n_iter, converged)``; ``out`` is the tree.
    """
    cdef Py_ssize_t n_levels = starts.shape[0] - 2
    cdef Py_ssize_t N = starts[n_levels + 1]
    cdef Py_ssize_t s0 = starts[n_levels]
    cdef Py_ssize_t n_leaves = N - s0
    if obs.shape[0] != N or var.shape[0] != N or out.shape[0] != N or start.shape[0] != n_leaves:
        raise ValueError("active_set: obs, var and out need one entry per node, start one per leaf")
    cdef double* buf = <double*> malloc((6 * N + n_leaves) * sizeof(double))
    cdef uint8_t* active = <uint8_t*> malloc(n_leaves * sizeof(uint8_t))
    if buf == NULL or active == NULL:
        free(buf)
        free(active)
        raise MemoryError()
    cdef double* o2 = buf
    cdef double* v2 = buf + N
    cdef double* sol = buf + 2 * N
    cdef double* wz = buf + 3 * N
    cdef double* ww = buf + 4 * N
    cdef double* acc = buf + 5 * N
    cdef double* th = buf + 6 * N
    cdef Py_ssize_t i, it = 0, n_iter = 0, best, n_free
    cdef int converged = 0, ok
    cdef double alpha, a, lam, mu, scale, worst
    with nogil:
        for i in range(n_leaves):
            th[i] = start[i]
            active[i] = start[i] <= 0.0
        for it in range(1, max_iter + 1):
            n_iter = it
            ok = _polish(&obs[0], &var[0], &starts[0], n_levels, branching, root, active, kkt_tol,
                         o2, v2, sol, wz, ww, acc)
            if ok == 1:
                converged = 1
                break
            if ok == 0:
                # step from th toward the solution until the first free leaf hits zero
                alpha = 1.0
                best = -1
                for i in range(n_leaves):
                    if not active[i] and sol[s0 + i] < 0.0:
                        a = th[i] / (th[i] - sol[s0 + i])
                        if a < alpha or best < 0:
                            alpha = a
                            best = i
                for i in range(n_leaves):
                    if active[i]:
                        th[i] = 0.0
                    else:
                        th[i] = th[i] + alpha * (sol[s0 + i] - th[i])
                        if th[i] <= 0.0:
                            th[i] = 0.0
                            active[i] = 1
                th[best] = 0.0
                active[best] = 1
            else:
                # feasible, but some multiplier is negative: release the most negative one
                for i in range(n_leaves):
                    th[i] = sol[s0 + i] if not active[i] else 0.0
                mu = 0.0
                n_free = 0
                scale = 0.0
                for i in range(n_leaves):
                    if fabs(acc[s0 + i]) > scale:
                        scale = fabs(acc[s0 + i])
                    if not active[i]:
                        mu += acc[s0 + i]
                        n_free += 1
                mu = -mu / n_free if n_free > 0 else 0.0
                best = -1
                worst = 0.0
                for i in range(n_leaves):
                    if active[i]:
                        lam = acc[s0 + i] + mu
                        if best < 0 or lam < worst:
                            worst = lam
                            best = i
                if best < 0:
                    break
                active[best] = 0
        for i in range(N):
            out[i] = sol[i]
        if not converged:  # return the last feasible iterate, made consistent from its leaves
            for i in range(n_leaves):
                out[s0 + i] = th[i]
    free(buf)
    free(active)
    return int(n_iter), bool(converged)


def split_levels(const uint64_t[::1] codes, Py_ssize_t n_levels, uint64_t[::1] out, int64_t[::1] starts):
    """Group packed reports by level: ``out[starts[l]:starts[l+1]]`` receives, in input order, the reports of
    level index ``l`` (bits 15..12) with those bits cleared. ``starts`` has ``n_levels + 1`` entries.

    Returns ``(n_bad, first_bad)``: reports whose level index is ``>= n_levels`` (not copied) and the index
    of the first (``-1`` if none).
    """
    cdef Py_ssize_t n = codes.shape[0], i, l
    if out.shape[0] != n or starts.shape[0] != n_levels + 1 or not 1 <= n_levels <= 16:
        raise ValueError("split_levels: out must have len(codes) entries, starts n_levels + 1, 1 <= n_levels <= 16")
    cdef int64_t pos[17]
    cdef int64_t n_bad = 0, first_bad = -1
    cdef uint64_t c, mask = ~(<uint64_t> 0xF000)
    with nogil:
        for l in range(17):
            pos[l] = 0
        for i in range(n):
            l = <Py_ssize_t> ((codes[i] >> 12) & 0xF)
            if l >= n_levels:
                if n_bad == 0:
                    first_bad = i
                n_bad += 1
            else:
                pos[l + 1] += 1
        for l in range(n_levels):
            pos[l + 1] += pos[l]
        for l in range(n_levels + 1):
            starts[l] = pos[l]
        for i in range(n):
            c = codes[i]
            l = <Py_ssize_t> ((c >> 12) & 0xF)
            if l < n_levels:
                out[pos[l]] = c & mask
                pos[l] += 1
    return int(n_bad), int(first_bad)
