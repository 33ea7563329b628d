# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernel: EM / EMS reconstruction for the window randomizer (design rule R6).

Model (see ``ldpnum.estimation.em``): a value in input bucket ``i`` lands on window start ``s`` with
probability ``B[i, s]`` (a band, stored CSR-like: ``indptr``, ``s_index``, ``weight``); given ``s``, output
cell ``j`` has probability ``p_lo + delta[j - s]`` for ``0 <= j - s < m`` and ``p_lo`` otherwise. The
transition matrix ``M[j, i] = sum_s B[i, s] P(j | s)`` is never formed. Its two products are

* forward ``y = M x``: ``p_s = B^T x`` (band, O(nnz)), then
  ``y_j = p_lo * sum(x) + sum_t delta[t] p_s[j - t]``;
* backward ``z = M^T r``: ``W(s) = sum_t delta[t] r[s + t]``, then
  ``z_i = p_lo * sum(r) + sum_s B[i, s] W(s)``.

For the box (``delta = (p_hi - p_lo) * ones(m)``, passed as an empty ``delta``) the window sums are
differences of prefix sums, so one product costs O(d + n_cells); a general ``delta`` costs
O(n_positions * m) per product (axpy sweeps over contiguous memory, which the compiler vectorizes without
reassociating sums; ~80 µs per iteration at n_cells = d = 1024, m = 347, against ~9 µs for the box).

No OpenMP: a process that forks after using GNU OpenMP breaks its children, and collectors run under
multiprocessing, Dask and Spark. The GIL is released for the whole iteration loop. Inputs are ``const``;
outputs are owned by the caller; scratch memory is allocated here and freed before returning.
"""

from libc.math cimport fabs, log, sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

cdef extern from "float.h":
    double DBL_MIN


cdef int _check_band(const int64_t[::1] indptr, const int64_t[::1] s_index, Py_ssize_t nnz,
                     Py_ssize_t n_positions) noexcept nogil:
    """Width of the widest row if the band is valid (``indptr`` rises from 0 to ``nnz``, ``s_index`` in
    ``0..n_positions-1``), else -1."""
    cdef Py_ssize_t i, e, width = 0
    cdef Py_ssize_t d = indptr.shape[0] - 1
    if d < 1 or indptr[0] != 0 or indptr[d] != nnz:
        return -1
    for i in range(d):
        if indptr[i + 1] < indptr[i]:
            return -1
        if indptr[i + 1] - indptr[i] > width:
            width = indptr[i + 1] - indptr[i]
    for e in range(nnz):
        if s_index[e] < 0 or s_index[e] >= n_positions:
            return -1
    return <int> width


cdef struct Band:
    # The band B[i, s] = P(window start s | bucket i), stored twice in a padded, contiguous layout:
    # by rows:    row i covers starts base[i] .. base[i] + width - 1, probabilities w[i * width + t];
    # by columns: start k covers buckets base_t[k] .. base_t[k] + width_t - 1,
    #             probabilities w_t[k * width_t + t]
    # (zeros where there is no entry). Both products are then gathers with a fixed trip count: no
    # read-modify-write chains between overlapping rows and no mispredicted loop exits.
    Py_ssize_t d
    Py_ssize_t n_pos
    Py_ssize_t width
    Py_ssize_t width_t
    int64_t* base
    double* w
    int64_t* base_t
    double* w_t


cdef void _band_free(Band* band) noexcept nogil:
    free(band.base)
    free(band.w)
    free(band.base_t)
    free(band.w_t)
    band.base = NULL
    band.w = NULL
    band.base_t = NULL
    band.w_t = NULL


cdef int _band_init(Band* band, const int64_t[::1] indptr, const int64_t[::1] s_index,
                    const double[::1] weight, Py_ssize_t n_positions) noexcept nogil:
    """Build both padded layouts from the CSR band; free with :func:`_band_free` (also after a failure).

    Returns -1 if the CSR band is invalid, -2 if it is not banded (padding would need more than
    ``4 nnz + 4 (d + n_positions)`` entries; the bands ``window_transition`` builds need ~1x), -3 without
    memory.
    """
    cdef Py_ssize_t d = indptr.shape[0] - 1
    cdef Py_ssize_t nnz = s_index.shape[0]
    cdef Py_ssize_t i, e, k, lo, hi, width = 1, width_t = 1
    cdef Py_ssize_t limit = 4 * nnz + 4 * (d + n_positions)
    band.base = NULL
    band.w = NULL
    band.base_t = NULL
    band.w_t = NULL
    if _check_band(indptr, s_index, nnz, n_positions) < 0:
        return -1
    band.d = d
    band.n_pos = n_positions
    band.base = <int64_t*> malloc(d * sizeof(int64_t))
    band.base_t = <int64_t*> malloc(n_positions * sizeof(int64_t))
    cdef int64_t* top_t = <int64_t*> malloc(n_positions * sizeof(int64_t))
    if band.base == NULL or band.base_t == NULL or top_t == NULL:
        free(top_t)
        return -3
    # extents: rows (min start of row i in base[i]) and columns (min / max bucket of start k)
    for k in range(n_positions):
        band.base_t[k] = d
        top_t[k] = -1
    for i in range(d):
        lo = n_positions
        hi = -1
        for e in range(indptr[i], indptr[i + 1]):
            k = s_index[e]
            if k < lo:
                lo = k
            if k > hi:
                hi = k
            if i < band.base_t[k]:
                band.base_t[k] = i
            if i > top_t[k]:
                top_t[k] = i
        if hi >= lo and hi - lo + 1 > width:
            width = hi - lo + 1
        band.base[i] = lo if hi >= lo else 0
    for k in range(n_positions):
        if top_t[k] >= band.base_t[k] and top_t[k] - band.base_t[k] + 1 > width_t:
            width_t = top_t[k] - band.base_t[k] + 1
    free(top_t)
    if d * width > limit or n_positions * width_t > limit:
        return -2
    band.width = width
    band.width_t = width_t
    band.w = <double*> malloc(d * width * sizeof(double))
    band.w_t = <double*> malloc(n_positions * width_t * sizeof(double))
    if band.w == NULL or band.w_t == NULL:
        return -3
    memset(band.w, 0, d * width * sizeof(double))
    memset(band.w_t, 0, n_positions * width_t * sizeof(double))
    # width <= n_positions and width_t <= d, so shifting a base down keeps it >= 0
    for i in range(d):
        if band.base[i] + width > n_positions:
            band.base[i] = n_positions - width
    for k in range(n_positions):
        if band.base_t[k] + width_t > d:
            band.base_t[k] = d - width_t
    for i in range(d):
        for e in range(indptr[i], indptr[i + 1]):
            k = s_index[e]
            band.w[i * width + k - band.base[i]] += weight[e]
            band.w_t[k * width_t + i - band.base_t[k]] += weight[e]
    return 0


cdef void _forward(const Band* band, Py_ssize_t n_cells, Py_ssize_t m, double p_lo, double p_hi,
                   const double* delta, Py_ssize_t n_delta, const double* x, double* p_s,
                   double* c, double* y) noexcept nogil:
    """``y = M x``. Scratch: ``p_s`` (``n_pos``) ends holding ``B^T x``; ``c`` (``n_pos + 1``): prefix sums."""
    cdef Py_ssize_t n_pos = n_cells - m + 1
    cdef Py_ssize_t d = band.d, width_t = band.width_t
    cdef Py_ssize_t i, j, k, t
    cdef double total = 0.0, acc, dt, diff, base
    cdef const double* xk
    cdef const double* wk
    for i in range(d):
        total += x[i]
    for k in range(n_pos):
        acc = 0.0
        xk = x + band.base_t[k]
        wk = band.w_t + k * width_t
        for t in range(width_t):
            acc += wk[t] * xk[t]
        p_s[k] = acc
    base = p_lo * total
    if n_delta == 0:
        # y_j = p_lo * total + (p_hi - p_lo) * (C(min(j, n_pos - 1) + 1) - C(max(0, j - m + 1))),
        # C(k) = sum_{l < k} p_s[l]: the window starting at s covers j iff j - m < s <= j.
        diff = p_hi - p_lo
        acc = 0.0
        c[0] = 0.0
        for k in range(n_pos):
            acc += p_s[k]
            c[k + 1] = acc
        for j in range(n_pos):
            y[j] = c[j + 1]
        for j in range(n_pos, n_cells):
            y[j] = acc
        for j in range(m, n_cells):
            y[j] -= c[j - m + 1]
        for j in range(n_cells):
            y[j] = base + diff * y[j]
    else:
        # y_j = p_lo * total + sum_t delta[t] p_s[j - t]: one axpy sweep per offset, O(n_pos * m).
        for j in range(n_cells):
            y[j] = base
        for t in range(n_delta):
            dt = delta[t]
            for k in range(n_pos):
                y[k + t] += dt * p_s[k]


cdef void _backward(const Band* band, Py_ssize_t n_cells, Py_ssize_t m, double p_lo, double p_hi,
                    const double* delta, Py_ssize_t n_delta, const double* r, double* c, double* ws,
                    double* z) noexcept nogil:
    """``z = M^T r``. Scratch: ``c`` (``n_cells + 1``), ``ws`` (``n_pos``) ends holding the window sums."""
    cdef Py_ssize_t n_pos = n_cells - m + 1
    cdef Py_ssize_t d = band.d, width = band.width
    cdef Py_ssize_t i, j, k, t
    cdef double total = 0.0, acc, dt, diff, base
    cdef const double* wsi
    cdef const double* wi
    if n_delta == 0:
        # W(s) = (p_hi - p_lo) * (R(s + m) - R(s)) with prefix sums R(j) = sum_{l < j} r_l.
        c[0] = 0.0
        for j in range(n_cells):
            total += r[j]
            c[j + 1] = total
        diff = p_hi - p_lo
        for k in range(n_pos):
            ws[k] = diff * (c[k + m] - c[k])
    else:
        # W(s) = sum_t delta[t] r[s + t]: one axpy sweep per offset, O(n_pos * m).
        for j in range(n_cells):
            total += r[j]
        memset(ws, 0, n_pos * sizeof(double))
        for t in range(n_delta):
            dt = delta[t]
            for k in range(n_pos):
                ws[k] += dt * r[k + t]
    base = p_lo * total
    for i in range(d):
        acc = 0.0
        wsi = ws + band.base[i]
        wi = band.w + i * width
        for t in range(width):
            acc += wi[t] * wsi[t]
        z[i] = base + acc


cdef inline double _ratio_loglik(const double* counts, const double* y, double* r,
                                 Py_ssize_t n_cells) noexcept nogil:
    """Fill ``r_j = n_j / y_j`` and return ``L = sum_j n_j log(y_j)``, both over cells with ``n_j > 0``.

    A cell with counts but zero model probability (possible only when ``p_lo = 0``) gets ``r_j = 0`` and adds
    ``n_j log(DBL_MIN)`` to ``L`` instead of ``-inf``.
    """
    cdef Py_ssize_t j
    cdef double total = 0.0, yj, nj
    for j in range(n_cells):
        nj = counts[j]
        yj = y[j]
        if nj > 0.0:
            if yj > DBL_MIN:
                r[j] = nj / yj
                total += nj * log(yj)
            else:
                r[j] = 0.0
                total += nj * log(DBL_MIN)
        else:
            r[j] = 0.0
    return total


cdef double _smooth(double* x, Py_ssize_t d) noexcept nogil:
    """EMS smoothing ``x_i <- x_i/2 + (x_{i-1} + x_{i+1})/4`` with ``x_{-1} = x_0``, ``x_d = x_{d-1}``.

    The reflecting edges make the smoothing preserve the total (up to rounding); returns the new total.
    """
    cdef Py_ssize_t i
    cdef double prev, cur, total
    if d < 2:
        return x[0]
    prev = x[0]
    x[0] = 0.75 * prev + 0.25 * x[1]
    total = x[0]
    for i in range(1, d - 1):
        cur = x[i]
        x[i] = 0.5 * cur + 0.25 * (prev + x[i + 1])
        total += x[i]
        prev = cur
    x[d - 1] = 0.75 * x[d - 1] + 0.25 * prev
    return total + x[d - 1]


cdef double _smooth_passes(double* x, double* buf, Py_ssize_t d, Py_ssize_t passes) noexcept nogil:
    """``passes`` EMS smoothing steps of ``x`` (in place; ``buf`` is ``d`` doubles of scratch).

    Each pass writes ``out[i] = in[i]/2 + (in[i-1] + in[i+1])/4`` (reflecting edges) into the other buffer,
    so the inner loop carries no dependency and vectorizes; the arithmetic, in the same order, equals
    :func:`_smooth`'s bit for bit. Returns the total after the last pass (``0`` passes: the sum of ``x``).
    """
    cdef Py_ssize_t i, p
    cdef double total = 0.0
    cdef double* src = x
    cdef double* dst = buf
    cdef double* tmp
    if passes == 0 or d < 2:
        for i in range(d):
            total += x[i]
        return total
    for p in range(passes):
        dst[0] = 0.75 * src[0] + 0.25 * src[1]
        for i in range(1, d - 1):
            dst[i] = 0.5 * src[i] + 0.25 * (src[i - 1] + src[i + 1])
        dst[d - 1] = 0.75 * src[d - 1] + 0.25 * src[d - 2]
        tmp = src
        src = dst
        dst = tmp
    for i in range(d):
        total += src[i]
    if src != x:
        for i in range(d):
            x[i] = src[i]
    return total


cdef inline void _scale(double* x, Py_ssize_t d, double total) noexcept nogil:
    cdef Py_ssize_t i
    cdef double inv
    if total > 0.0:
        inv = 1.0 / total
        for i in range(d):
            x[i] *= inv


cdef int _prepare(Band* band, Py_ssize_t n_cells, Py_ssize_t m, const int64_t[::1] indptr,
                  const int64_t[::1] s_index, const double[::1] weight, const double[::1] delta) except -1:
    """Check the arguments every entry point shares and build the padded band (caller frees it)."""
    if not 1 <= m < n_cells:
        raise ValueError(f"need 1 <= m < n_cells; got m={m}, n_cells={n_cells}")
    if weight.shape[0] != s_index.shape[0]:
        raise ValueError("weight and s_index must have the same length")
    if delta.shape[0] != 0 and delta.shape[0] != m:
        raise ValueError(f"delta must be empty (box) or have length m={m}; got {delta.shape[0]}")
    cdef int status
    with nogil:
        status = _band_init(band, indptr, s_index, weight, n_cells - m + 1)
    if status != 0:
        _band_free(band)
        if status == -1:
            raise ValueError("invalid band: indptr must rise from 0 to len(s_index) and s_index must lie in "
                             "0..n_cells-m")
        if status == -2:
            raise ValueError("the band is not banded: its rows span too many window starts")
        raise MemoryError()
    return 0


def window_forward(Py_ssize_t n_cells, Py_ssize_t m, const int64_t[::1] indptr, const int64_t[::1] s_index,
                   const double[::1] weight, double p_lo, double p_hi, const double[::1] delta,
                   const double[::1] x, double[::1] y):
    """``y = M x`` (``y`` has length ``n_cells``, owned by the caller)."""
    cdef Py_ssize_t d = indptr.shape[0] - 1
    if d < 1 or x.shape[0] != d or y.shape[0] != n_cells:
        raise ValueError("x must have length n_bins and y length n_cells")
    cdef Band band
    _prepare(&band, n_cells, m, indptr, s_index, weight, delta)
    cdef Py_ssize_t n_pos = n_cells - m + 1
    cdef double* scratch = <double*> malloc((2 * n_pos + 1) * sizeof(double))
    if scratch == NULL:
        _band_free(&band)
        raise MemoryError()
    cdef const double* dp = &delta[0] if delta.shape[0] else NULL
    with nogil:
        _forward(&band, n_cells, m, p_lo, p_hi, dp, delta.shape[0], &x[0], scratch, scratch + n_pos, &y[0])
    free(scratch)
    _band_free(&band)


def window_backward(Py_ssize_t n_cells, Py_ssize_t m, const int64_t[::1] indptr, const int64_t[::1] s_index,
                    const double[::1] weight, double p_lo, double p_hi, const double[::1] delta,
                    const double[::1] r, double[::1] z):
    """``z = M^T r`` (``z`` has length ``n_bins``, owned by the caller)."""
    cdef Py_ssize_t d = indptr.shape[0] - 1
    if d < 1 or r.shape[0] != n_cells or z.shape[0] != d:
        raise ValueError("r must have length n_cells and z length n_bins")
    cdef Band band
    _prepare(&band, n_cells, m, indptr, s_index, weight, delta)
    cdef Py_ssize_t n_pos = n_cells - m + 1
    cdef double* scratch = <double*> malloc((n_cells + 1 + n_pos) * sizeof(double))
    if scratch == NULL:
        _band_free(&band)
        raise MemoryError()
    cdef const double* dp = &delta[0] if delta.shape[0] else NULL
    with nogil:
        _backward(&band, n_cells, m, p_lo, p_hi, dp, delta.shape[0], &r[0], scratch, scratch + n_cells + 1,
                  &z[0])
    free(scratch)
    _band_free(&band)


cdef struct Part:
    # One collection of the EM fit: its band and counts, and its scratch (y = M x, r = n / y; n_cells each).
    Band band
    const double* counts
    double* y
    double* r


cdef struct Fit:
    # One EM fit: the collections, the window, the buckets the smoothing acts on, and the scratch of one step
    # (p_s, c_fwd: n_pos and n_pos + 1; c_bwd: n_cells + 1; ws: n_pos; z, z_more: d).
    Part* parts
    Py_ssize_t n_parts
    Py_ssize_t n_cells
    Py_ssize_t m
    double p_lo
    double p_hi
    const double* dp
    Py_ssize_t n_delta
    Py_ssize_t d
    Py_ssize_t smooth
    const int64_t* free_idx
    Py_ssize_t n_free
    double* p_s
    double* c_fwd
    double* c_bwd
    double* ws
    double* z
    double* z_more


cdef double _loglik_at(Fit* f, const double* xp) noexcept nogil:
    """``L(x) = sum_r L_r``; leaves every collection's ``y = M_r x`` and ratios ``r = n_r / y`` for the next step."""
    cdef Py_ssize_t q
    cdef double total = 0.0
    for q in range(f.n_parts):
        _forward(&f.parts[q].band, f.n_cells, f.m, f.p_lo, f.p_hi, f.dp, f.n_delta, xp, f.p_s, f.c_fwd,
                 f.parts[q].y)
        total += _ratio_loglik(f.parts[q].counts, f.parts[q].y, f.parts[q].r, f.n_cells)
    return total


cdef double _em_map(Fit* f, double* xp) noexcept nogil:
    """One EM / EMS step in place, ``x <- F(x)``, from the ratios the last :func:`_loglik_at` of ``x`` left.

    E-step ``P_i = x_i sum_r (M_r^T r_r)_i``; M-step: normalise (EMS smooths first). With ``n_free > 0`` only the
    buckets ``free_idx[0..n_free-1]`` (increasing) are smoothed, as one sequence (the others, point masses, are
    left out of the filter: neither spread nor filled by it). Returns ``L(F(x))`` and leaves its ratios.
    """
    cdef Py_ssize_t i, q, d = f.d
    cdef double total
    cdef double* z = f.z
    cdef double* z_more = f.z_more
    # E-step: P_i = x_i sum_j n_j M[j, i] / (M x)_j = x_i (M^T r)_i with r_j = n_j / (M x)_j, per collection.
    _backward(&f.parts[0].band, f.n_cells, f.m, f.p_lo, f.p_hi, f.dp, f.n_delta, f.parts[0].r, f.c_bwd, f.ws, z)
    for q in range(1, f.n_parts):
        _backward(&f.parts[q].band, f.n_cells, f.m, f.p_lo, f.p_hi, f.dp, f.n_delta, f.parts[q].r, f.c_bwd, f.ws,
                  z_more)
        for i in range(d):
            z[i] += z_more[i]
    total = 0.0
    for i in range(d):
        xp[i] *= z[i]
        total += xp[i]
    # M-step: normalise. EMS smooths first: the smoothing is linear and preserves the total, so
    # normalising once afterwards equals normalise -> smooth -> renormalise.
    if f.smooth and f.n_free > 0:
        for i in range(f.n_free):                     # z, z_more are free after the E-step
            z[i] = xp[f.free_idx[i]]
        _smooth_passes(z, z_more, f.n_free, f.smooth)
        for i in range(f.n_free):
            xp[f.free_idx[i]] = z[i]
        total = 0.0
        for i in range(d):
            total += xp[i]
    elif f.smooth:
        total = _smooth_passes(xp, z, d, f.smooth)    # z is free after the E-step
    _scale(xp, d, total)
    return _loglik_at(f, xp)


cdef (Py_ssize_t, bint) _em_loop(Fit* f, Py_ssize_t max_iter, double tol, double atol, double* xp,
                                 double* loglik) noexcept nogil:
    """The plain EM / EMS iteration ``x <- F(x)`` (:func:`_em_map`); ``loglik`` gets ``L`` at the start and after
    every iteration. Returns ``(iterations, converged)``."""
    cdef Py_ssize_t it = 0
    cdef double prev, cur
    cdef bint converged = False
    prev = _loglik_at(f, xp)
    loglik[0] = prev
    while it < max_iter:
        it += 1
        cur = _em_map(f, xp)
        loglik[it] = cur
        if fabs(cur - prev) < tol * fabs(prev) + atol:
            converged = True
            break
        prev = cur
    return it, converged


#: SQUAREM: an extrapolated bucket that falls to or below zero is set to this share of its value after the two
#: plain steps (EM multiplies a bucket by its E-step factor, so a zero bucket would stay zero for good).
cdef double SQUAREM_FLOOR = 0.1
#: SQUAREM: the step-length cap starts at 1 (a plain double step) and is multiplied by this factor each time the
#: S3 length reaches it (and divided by it after a rejected step), Varadhan & Roland's globally convergent scheme.
cdef double SQUAREM_STEP_FACTOR = 4.0


cdef inline bint _plain_step(Fit* f, double* xp, double* save, double* loglik, Py_ssize_t* it, double* prev,
                             double tol, double atol) noexcept nogil:
    """One step of the map inside a SQUAREM cycle: ``save`` gets the current iterate, ``xp`` becomes ``F(xp)``,
    ``loglik[it]`` its ``L``; true when the stopping rule is met (``prev`` is left at the previous ``L``), else
    ``prev`` becomes the new ``L``."""
    cdef Py_ssize_t i
    cdef double cur
    for i in range(f.d):
        save[i] = xp[i]
    it[0] += 1
    cur = _em_map(f, xp)
    loglik[it[0]] = cur
    if fabs(cur - prev[0]) < tol * fabs(prev[0]) + atol:
        return True
    prev[0] = cur
    return False


cdef (Py_ssize_t, bint) _squarem_loop(Fit* f, Py_ssize_t max_iter, double tol, double atol, double* xp,
                                      double* loglik, double* x0, double* x1) noexcept nogil:
    """The EM / EMS fixed-point iteration ``x <- F(x)`` accelerated by SQUAREM (Varadhan & Roland 2008, S3).

    One cycle: two plain steps ``x1 = F(x0)``, ``x2 = F(x1)``; ``r = x1 - x0``, ``v = x2 - 2 x1 + x0``, step length
    ``a = ||r|| / ||v||`` clipped to ``[1, a_max]``; the extrapolation ``x' = x0 + 2a r + a^2 v`` (``a = 1`` gives
    ``x2``) is projected onto the simplex (a bucket at or below 0 is set to ``SQUAREM_FLOOR x2_i``, then the
    total renormalised to 1) and stabilised by one more step, ``x_new = F(x')``. Safeguard: EM (no smoothing)
    keeps ``x_new`` only if ``L(x_new) >= L(x2)`` (monotone, as plain EM); EMS, whose map does not ascend
    ``L``, only if its fixed-point residual does not grow, ``||F(x') - x'|| <= ||x2 - x1||``; otherwise the
    cycle ends at ``x2`` and ``a_max`` shrinks. The stopping rule is the plain loop's, applied to every step of
    the map: stop after the first step ``z -> F(z)`` with ``|L(F(z)) - L(z)| < tol |L(z)| + atol``, so the
    result is a point where one step of ``F`` changes ``L`` as little as where the plain loop stops (never
    farther from the fixed point than one such step). ``max_iter`` bounds the steps of ``F`` (three per
    cycle, each one backward and one forward product; the extrapolated point costs one more forward
    product); ``loglik[t]`` is ``L`` of the current iterate after step ``t``. Scratch ``x0``, ``x1``: ``d``
    doubles each. Returns ``(steps, converged)``.
    """
    cdef Py_ssize_t i, d = f.d, it = 0
    cdef double prev, cur, at_x, sr2, sv2, ri, vi, alpha, a_max = 1.0, total, res_old, res_new, xn
    cdef bint converged = False, accept
    prev = _loglik_at(f, xp)
    loglik[0] = prev
    while it < max_iter:
        # the two plain steps: x0 = x, x1 = F(x0), xp = x2 = F(x1); prev ends as L(x2)
        if _plain_step(f, xp, x0, loglik, &it, &prev, tol, atol):
            converged = True
            break
        if it == max_iter:
            break
        if _plain_step(f, xp, x1, loglik, &it, &prev, tol, atol):
            converged = True
            break
        if it == max_iter:
            break
        sr2 = 0.0
        sv2 = 0.0
        res_old = 0.0
        for i in range(d):
            ri = x1[i] - x0[i]
            vi = xp[i] - 2.0 * x1[i] + x0[i]
            sr2 += ri * ri
            sv2 += vi * vi
            res_old += (xp[i] - x1[i]) * (xp[i] - x1[i])
        if not sv2 > 0.0:
            continue
        alpha = sqrt(sr2 / sv2)
        if alpha > a_max:
            alpha = a_max
        if alpha < 1.0:
            alpha = 1.0
        if alpha > 1.01:
            # x' into xp, x2 kept in x1 (for the fallback), x' kept in x0 (for the residual)
            total = 0.0
            for i in range(d):
                ri = x1[i] - x0[i]
                vi = xp[i] - 2.0 * x1[i] + x0[i]
                xn = x0[i] + 2.0 * alpha * ri + alpha * alpha * vi
                x1[i] = xp[i]
                if not xn > 0.0:
                    xn = SQUAREM_FLOOR * x1[i]
                xp[i] = xn
                total += xn
            _scale(xp, d, total)
            for i in range(d):
                x0[i] = xp[i]
            at_x = _loglik_at(f, xp)
            it += 1
            cur = _em_map(f, xp)
            if f.smooth:
                res_new = 0.0
                for i in range(d):
                    res_new += (xp[i] - x0[i]) * (xp[i] - x0[i])
                accept = res_new <= res_old
            else:
                accept = cur >= prev
            if accept:
                loglik[it] = cur
                if fabs(cur - at_x) < tol * fabs(at_x) + atol:
                    converged = True
                    break
                prev = cur
            else:
                for i in range(d):
                    xp[i] = x1[i]
                prev = _loglik_at(f, xp)
                loglik[it] = prev
                if alpha == a_max:
                    a_max = a_max / SQUAREM_STEP_FACTOR
                    if a_max < 1.0:
                        a_max = 1.0
                alpha = 1.0
        if alpha == a_max:
            a_max *= SQUAREM_STEP_FACTOR
    return it, converged


cdef _check_run(Py_ssize_t d, double[::1] x, double[::1] loglik, Py_ssize_t smooth, Py_ssize_t max_iter):
    if d < 1 or x.shape[0] != d:
        raise ValueError("x must have length n_bins")
    if max_iter < 1 or loglik.shape[0] < max_iter + 1:
        raise ValueError("need max_iter >= 1 and len(loglik) >= max_iter + 1")
    if smooth < 0:
        raise ValueError(f"smooth must be >= 0 passes; got {smooth}")


def em_window(const double[::1] counts, Py_ssize_t m, const int64_t[::1] indptr, const int64_t[::1] s_index,
              const double[::1] weight, double p_lo, double p_hi, const double[::1] delta,
              Py_ssize_t smooth, Py_ssize_t max_iter, double tol, double atol, double[::1] x, double[::1] loglik,
              bint warm=False, const int64_t[::1] smoothed=None, bint accelerate=False):
    """Run EM (``smooth=0``) or EMS with ``smooth`` smoothing passes per iteration (``1`` is Li et al.'s EMS).

    ``counts`` (length ``n_cells``) are the observed cell counts. Outputs owned by the caller: ``x`` (length
    ``n_bins``) receives the estimate, ``loglik`` (length ``max_iter + 1``) the log-likelihood of the start
    and after every iteration. The start is uniform, or with ``warm=True`` the positive distribution the
    caller left in ``x`` (summing to 1). Stops after the first iteration ``t`` with
    ``|L_t - L_{t-1}| < tol * |L_{t-1}| + atol``, or after ``max_iter`` iterations. ``smoothed`` (increasing
    bucket indices, optional): smooth only those buckets, as one sequence (the rest are point masses left sharp).
    ``accelerate=True`` runs the same map and stopping rule accelerated by SQUAREM (:func:`_squarem_loop`;
    ``n_iter`` then counts the steps of the map).

    Returns ``(n_iter, converged)``; ``loglik[:n_iter + 1]`` is the trace.
    """
    return _em(counts, indptr, s_index, weight, None, None, None, None, m, p_lo, p_hi, delta, smooth, max_iter,
               tol, atol, x, loglik, warm, smoothed, accelerate)


def _em(const double[::1] counts_a, const int64_t[::1] indptr_a, const int64_t[::1] s_index_a,
        const double[::1] weight_a, const double[::1] counts_b, const int64_t[::1] indptr_b,
        const int64_t[::1] s_index_b, const double[::1] weight_b, Py_ssize_t m, double p_lo, double p_hi,
        const double[::1] delta, Py_ssize_t smooth, Py_ssize_t max_iter, double tol, double atol, double[::1] x,
        double[::1] loglik, bint warm, const int64_t[::1] smoothed, bint accelerate):
    """One or two collections (``counts_b`` None: one) through :func:`_em_loop` (or :func:`_squarem_loop`)."""
    cdef Py_ssize_t n_cells = counts_a.shape[0]
    cdef Py_ssize_t d = indptr_a.shape[0] - 1
    cdef Py_ssize_t n_parts = 1 if counts_b is None else 2
    if n_parts == 2 and (counts_b.shape[0] != n_cells or indptr_b.shape[0] - 1 != d):
        raise ValueError("both collections need the same cells and buckets")
    _check_run(d, x, loglik, smooth, max_iter)
    cdef Py_ssize_t n_free = 0 if smoothed is None else smoothed.shape[0]
    cdef Py_ssize_t f
    for f in range(n_free):
        if smoothed[f] < 0 or smoothed[f] >= d or (f > 0 and smoothed[f] <= smoothed[f - 1]):
            raise ValueError("smoothed must hold increasing bucket indices in 0..n_bins-1")
    cdef const int64_t* fp = &smoothed[0] if n_free else NULL
    cdef Part parts[2]
    _prepare(&parts[0].band, n_cells, m, indptr_a, s_index_a, weight_a, delta)
    if n_parts == 2:
        try:
            _prepare(&parts[1].band, n_cells, m, indptr_b, s_index_b, weight_b, delta)
        except BaseException:
            _band_free(&parts[0].band)
            raise
    cdef Py_ssize_t n_pos = n_cells - m + 1
    cdef Py_ssize_t q
    # p_s, c_fwd (n_pos + 1), c_bwd (n_cells + 1), ws (n_pos), z, z_more (d); y, r (n_cells) per collection;
    # SQUAREM's x0, x1 (d)
    cdef double* scratch = <double*> malloc((3 * n_pos + n_cells + 2 + 4 * d + 2 * n_parts * n_cells)
                                            * sizeof(double))
    if scratch == NULL:
        for q in range(n_parts):
            _band_free(&parts[q].band)
        raise MemoryError()
    cdef double* tail = scratch + 3 * n_pos + n_cells + 2 + 2 * d
    parts[0].counts = &counts_a[0]
    if n_parts == 2:
        parts[1].counts = &counts_b[0]
    for q in range(n_parts):
        parts[q].y = tail + 2 * q * n_cells
        parts[q].r = parts[q].y + n_cells
    cdef Fit fit
    fit.parts = parts
    fit.n_parts = n_parts
    fit.n_cells = n_cells
    fit.m = m
    fit.p_lo = p_lo
    fit.p_hi = p_hi
    fit.dp = &delta[0] if delta.shape[0] else NULL
    fit.n_delta = delta.shape[0]
    fit.d = d
    fit.smooth = smooth
    fit.free_idx = fp
    fit.n_free = n_free
    fit.p_s = scratch
    fit.c_fwd = fit.p_s + n_pos
    fit.c_bwd = fit.c_fwd + n_pos + 1
    fit.ws = fit.c_bwd + n_cells + 1
    fit.z = fit.ws + n_pos
    fit.z_more = fit.z + d
    cdef double* x0 = tail + 2 * n_parts * n_cells
    cdef Py_ssize_t it, i
    cdef bint converged
    cdef double* xp = &x[0]
    with nogil:
        if not warm:
            for i in range(d):
                xp[i] = 1.0 / d
        if accelerate:
            it, converged = _squarem_loop(&fit, max_iter, tol, atol, xp, &loglik[0], x0, x0 + d)
        else:
            it, converged = _em_loop(&fit, max_iter, tol, atol, xp, &loglik[0])
    free(scratch)
    for q in range(n_parts):
        _band_free(&parts[q].band)
    return int(it), bool(converged)


def ems_smooth(const double[::1] x, double[::1] out):
    """The EMS smoothing step alone (for tests): ``out`` (caller-owned, same length) gets the smoothed ``x``.

    Returns the total of ``out``, which equals the total of ``x`` up to rounding.
    """
    cdef Py_ssize_t d = x.shape[0]
    if d < 1 or out.shape[0] != d:
        raise ValueError("x and out must have the same, positive length")
    cdef Py_ssize_t i
    cdef double total
    with nogil:
        for i in range(d):
            out[i] = x[i]
        total = _smooth(&out[0], d)
    return total


def em_window_joint(const double[::1] counts_a, const int64_t[::1] indptr_a, const int64_t[::1] s_index_a,
                    const double[::1] weight_a, const double[::1] counts_b, const int64_t[::1] indptr_b,
                    const int64_t[::1] s_index_b, const double[::1] weight_b, Py_ssize_t m, double p_lo,
                    double p_hi, const double[::1] delta, Py_ssize_t smooth, Py_ssize_t max_iter, double tol,
                    double atol, double[::1] x, double[::1] loglik, bint warm=False, const int64_t[::1] smoothed=None,
                    bint accelerate=False):
    """:func:`em_window` over two collections of one distribution: the same window (``m``, ``p_lo``, ``p_hi``,
    ``delta``) and buckets, each with its own band (``B_a``, ``B_b``) and counts.

    E-step ``P_i = x_i ((M_a^T r_a)_i + (M_b^T r_b)_i)`` with ``r = n / (M x)`` per collection; the M-step
    normalises (after ``smooth`` passes); ``loglik`` holds ``L_a + L_b``. Same outputs and stopping rule as
    :func:`em_window`.
    """
    return _em(counts_a, indptr_a, s_index_a, weight_a, counts_b, indptr_b, s_index_b, weight_b, m, p_lo, p_hi,
               delta, smooth, max_iter, tol, atol, x, loglik, warm, smoothed, accelerate)
