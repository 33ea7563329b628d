# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernels of projective geometry response (design rules R4, R6).

The support count of category ``v`` is ``I_v = Σ_{u ⊥ v} hist[u]`` over the points ``u`` of ``v``'s block:
the sum of the code histogram over ``v``'s hyperplane. The incidence of points and hyperplanes of PG(t-1, q)
is symmetric (``u ⊥ v`` iff ``v ⊥ u``), so :func:`hyperplane_scatter` adds each nonzero ``hist[u]`` along
``u``'s own hyperplane: ``c = (q^{t-1} - 1)/(q - 1)`` additions per distinct report, against
``O(b·q·t)`` for the dynamic program over all coordinates. :func:`hyperplane_gather` sums the histogram over
the hyperplanes of chosen categories (``c`` reads each).

The walk over a hyperplane (:func:`walk`) enumerates the points ``y`` of PG(t-2, q) in index order, lifted as
the client kernel lifts them (:mod:`ldpnum._kernels.client_pgr`): ``y`` fills the coordinates other than
``j`` (the last nonzero coordinate of ``u``) and ``x_j = -(Σ_{r<j} x_r u_r)/u_j``. With the leading 1 and
the middle coordinates of ``y`` fixed, its last coordinate ``d`` runs over F_q: the point's index moves by
``d·w_l`` and ``x_j`` by a constant step mod ``q``, so the innermost loop is a run of stride 1 (``j < t - 1``)
or ``q`` (``j = t - 1``) with one table-free add per point. Point numbering: as in
:class:`ldpnum.frequency.pgr.ProjectiveSpace` (``offs[s] = (q^s - 1)/(q - 1)``, ``pows[s] = q^s``).

The GIL is released; inputs are ``const``; outputs are owned by the caller.
"""

from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free


cdef int64_t walk(int64_t u, int64_t q, int t, const int64_t* offs, const int64_t* pows,
                  const int64_t* inv, int64_t* ud, int64_t* mid, const int64_t* src, int64_t* dst,
                  int64_t add) noexcept nogil:
    """Visit every point of ``u``'s hyperplane: ``dst[x] += add`` for each (``dst`` not NULL), and return
    ``Σ src[x]`` (``src`` not NULL). ``ud``, ``mid``: scratch of ``t`` entries."""
    cdef int r, s_y, p_y, p_x, s_x, j, xl, n_mid, pos
    cdef int64_t x, g, cu, wl, wj, d0, r0, xj, step, code, total = 0, d, configs, cfg
    # digits of u
    s_y = -1
    for r in range(t):
        if offs[r] <= u:
            s_y = r
    x = pows[s_y] + u - offs[s_y]
    for r in range(t - 1, -1, -1):
        ud[r] = x % q
        x //= q
    j = 0
    for r in range(t):
        if ud[r] != 0:
            j = r
    g = inv[ud[j]]
    # s_y = 0: y = e_{t-2}
    if j == t - 1:
        code = 1 + (q - ud[t - 2] * g % q) % q
    else:
        code = 0
    if dst != NULL:
        dst[code] += add
    if src != NULL:
        total += src[code]
    for s_y in range(1, t - 1):
        p_y = t - 2 - s_y
        p_x = p_y if p_y < j else p_y + 1
        s_x = t - 1 - p_x
        xl = t - 2 if t - 2 < j else t - 1
        wl = pows[t - 1 - xl]
        cu = ud[t - 2] if t - 2 < j else 0
        wj = pows[t - 1 - j] if j > p_x else 0
        step = (q - cu * g % q) % q
        n_mid = s_y - 1
        for r in range(n_mid):
            mid[r] = 0
        configs = pows[n_mid]
        for cfg in range(configs):
            d0 = ud[p_y] if p_y < j else 0
            r0 = 0
            for r in range(n_mid):
                pos = p_y + 1 + r  # y-position
                if pos < j:
                    d0 += mid[r] * ud[pos]
                    r0 += mid[r] * pows[t - 1 - pos]
                else:
                    r0 += mid[r] * pows[t - 2 - pos]
            code = offs[s_x] + r0
            xj = (q - d0 % q) % q * g % q
            if dst != NULL:
                for d in range(q):
                    dst[code + d * wl + xj * wj] += add
                    xj += step
                    if xj >= q:
                        xj -= q
            if src != NULL:
                for d in range(q):
                    total += src[code + d * wl + xj * wj]
                    xj += step
                    if xj >= q:
                        xj -= q
            # next middle digits (odometer, last digit fastest)
            for r in range(n_mid - 1, -1, -1):
                mid[r] += 1
                if mid[r] < q:
                    break
                mid[r] = 0
    return total


def hyperplane_scatter(const int64_t[::1] hist, int64_t[::1] out, int64_t q, int t, int64_t h,
                       const int64_t[::1] offs, const int64_t[::1] pows, const int64_t[::1] inv):
    """Add ``hist[B·b + u]`` to ``out[B·b + x]`` for every point ``x`` of ``u``'s hyperplane, every block ``B``.

    ``out[v]`` then holds ``Σ_{u ⊥ v} hist[u]`` over ``v``'s block (``b = offs[t]``).
    """
    cdef int64_t b = offs[t]
    if hist.shape[0] != h * b or out.shape[0] != h * b:
        raise ValueError(f"need histogram and output of h·b = {h * b} entries")
    cdef int64_t* scratch = <int64_t*> calloc(2 * t, sizeof(int64_t))
    if scratch == NULL:
        raise MemoryError()
    cdef int64_t blk, u, c
    try:
        with nogil:
            for blk in range(h):
                for u in range(b):
                    c = hist[blk * b + u]
                    if c != 0:
                        walk(u, q, t, &offs[0], &pows[0], &inv[0], scratch, scratch + t, NULL, &out[blk * b], c)
    finally:
        free(scratch)


def hyperplane_gather(const int64_t[::1] hist, const int64_t[::1] targets, int64_t[::1] out, int64_t q, int t,
                      const int64_t[::1] offs, const int64_t[::1] pows, const int64_t[::1] inv):
    """``out[i] = Σ_{u ⊥ v} hist[B·b + u]`` for each target code ``targets[i] = B·b + v``."""
    cdef int64_t b = offs[t]
    cdef Py_ssize_t i, n = targets.shape[0]
    cdef int64_t v, blk
    if out.shape[0] != n:
        raise ValueError("need one output per target")
    for i in range(n):
        if not 0 <= targets[i] < hist.shape[0]:
            raise ValueError(f"target {targets[i]} at index {i} is outside the {hist.shape[0]} codes")
    cdef int64_t* scratch = <int64_t*> calloc(2 * t, sizeof(int64_t))
    if scratch == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                blk = targets[i] // b
                v = targets[i] - blk * b
                out[i] = walk(v, q, t, &offs[0], &pows[0], &inv[0], scratch, scratch + t, &hist[blk * b], NULL, 0)
    finally:
        free(scratch)


cdef int64_t split_suffix(int64_t beta, int m, int64_t q, const int64_t* offs, const int64_t* pows,
                          const int64_t* inv, int64_t* digits, int64_t* b0, int64_t* ginv) noexcept nogil:
    """Split the suffix of length ``m`` with index ``beta`` (0: zero, else 1 + canonical index) into its first
    coordinate ``b0`` and the rest ``g·b̂'``; return the index of ``b̂'`` (length ``m - 1``), set ``1/g``."""
    cdef int64_t ib, R, x, value
    cdef int r, lead, sl
    b0[0] = 0
    ginv[0] = 1
    if beta == 0:
        return 0
    ib = beta - 1
    if ib < offs[m - 1]:  # first coordinate 0: the rest is canonical already
        return 1 + ib
    b0[0] = 1
    R = ib - offs[m - 1]
    if R == 0:
        return 0
    x = R
    for r in range(m - 2, -1, -1):
        digits[r] = x % q
        x //= q
    lead = m - 2
    for r in range(m - 2, -1, -1):
        if digits[r] != 0:
            lead = r
    ginv[0] = inv[digits[lead]]
    value = 0
    for r in range(lead, m - 1):
        value = value * q + digits[r] * ginv[0] % q
    sl = m - 2 - lead
    return 1 + value - pows[sl] + offs[sl]


cdef void dp_level(const int64_t* prev, int64_t* cur, int64_t q, int t, int l, int64_t H, const int64_t* offs,
                   const int64_t* pows, const int64_t* inv, int64_t* table, int64_t* digits,
                   int64_t beta_lo, int64_t beta_hi) noexcept nogil:
    """Level ``l`` of the dynamic program from level ``l + 1``, for suffix indices ``[beta_lo, beta_hi)``.

    ``F_l(α, β, z) = Σ_d F_{l+1}(α·d, β', (z - d·b_0)/g)`` where ``α`` numbers the prefixes of length ``l`` of the
    reports (0: zero, else 1 + canonical index; its children are ``α·d``), ``β`` the categories' suffixes of
    length ``t - l`` in the same way, ``b = (b_0, g·b̂')`` with ``β'`` the index of ``b̂'``; stored as
    ``[β][α][z][lane]``, ``H`` lanes (blocks of the hybrid sharing one geometry). With ``w = z/g`` the ``q``
    terms are cyclic shifts of contiguous rows (``w - d/g``, since ``b_0`` is 0 or 1), summed in ``w`` and
    permuted back to ``z`` once per ``(α, β)``. Scratch: ``table`` of ``q + qH`` entries, ``digits`` of ``t``.
    """
    cdef int64_t A = offs[l] + 1, A1 = offs[l + 1] + 1, W = q * H
    cdef int m = t - l
    cdef int64_t beta, alpha, b0, bp, ginv, d, d_hi, child, shift, z, i, lane, row
    cdef const int64_t* src
    cdef int64_t* dst
    cdef int64_t* acc = table + q
    for beta in range(beta_lo, beta_hi):
        bp = split_suffix(beta, m, q, offs, pows, inv, digits, &b0, &ginv)
        for z in range(q):
            table[z] = z * ginv % q
        for alpha in range(A):
            dst = cur + (beta * A + alpha) * W
            d_hi = q if alpha > 0 else 2
            for i in range(W):
                acc[i] = 0
            for d in range(d_hi):
                child = q * (alpha - 1) + 2 + d if alpha > 0 else d
                src = prev + (bp * A1 + child) * W
                # acc[w] += src[w - shift]: with w = z/g the permutation is applied once, after the sum
                shift = (d * ginv % q if b0 else 0) * H
                for i in range(shift):
                    acc[i] += src[i + W - shift]
                for i in range(shift, W):
                    acc[i] += src[i - shift]
            for z in range(q):
                row = table[z] * H
                for lane in range(H):
                    dst[z * H + lane] = acc[row + lane]


cdef void dp_final(const int64_t* prev, int64_t* out, int64_t q, int t, int64_t H, const int64_t* offs,
                   const int64_t* pows, const int64_t* inv, int64_t* digits) noexcept nogil:
    """``out[v][lane] = F_0(∅, v, 0) = F_1((0), v', 0) + F_1((1), v', -v_0/g)``."""
    cdef int64_t v, A1 = offs[1] + 1, b0, bp, ginv, z, lane, W = q * H
    for v in range(offs[t]):
        bp = split_suffix(1 + v, t, q, offs, pows, inv, digits, &b0, &ginv)
        z = (q - b0) % q * ginv % q
        for lane in range(H):
            out[v * H + lane] = prev[(bp * A1 + 0) * W + lane] + prev[(bp * A1 + 1) * W + z * H + lane]


def dp_size(int64_t q, int t, int64_t H, const int64_t[::1] offs):
    """Entries of the largest level of the dynamic program: ``max_l A_l B_l q H``, ``1 <= l < t``."""
    cdef int l
    cdef int64_t size = 0
    for l in range(1, t):
        size = max(size, (offs[l] + 1) * (offs[t - l] + 1) * q * H)
    return size


def dp_start(const int64_t[:, ::1] hist, int64_t[::1] level, int64_t q, int t, const int64_t[::1] offs):
    """Level ``t - 1`` of the dynamic program from the histograms ``hist[point, lane]`` of one geometry.

    Suffix ``b = 0`` keeps ``z = 0`` only (the prefix's total); ``b = (1)`` reads digit ``d = z``.
    """
    cdef int64_t b = offs[t], A = offs[t - 1] + 1, H = hist.shape[1], W, alpha, d, child, lane, i
    W = q * H
    if hist.shape[0] != b or level.shape[0] < 2 * A * W:
        raise ValueError(f"need histograms of b = {b} points and a level of at least {2 * A * W} entries")
    with nogil:
        for i in range(2 * A * W):
            level[i] = 0
        for alpha in range(A):
            for d in range(q if alpha > 0 else 2):
                child = q * (alpha - 1) + 2 + d if alpha > 0 else d
                if child > 0:
                    for lane in range(H):
                        level[alpha * W + lane] += hist[child - 1, lane]
                        level[(A + alpha) * W + d * H + lane] = hist[child - 1, lane]


def dp_range(const int64_t[::1] prev, int64_t[::1] cur, int64_t q, int t, int l, int64_t H,
             const int64_t[::1] offs, const int64_t[::1] pows, const int64_t[::1] inv, int64_t lo, int64_t hi):
    """Level ``l`` (``1 <= l <= t - 2``) from level ``l + 1``, for the suffixes ``[lo, hi)`` (threads split them:
    each writes its own rows of ``cur``). Releases the GIL."""
    cdef int64_t* scratch = <int64_t*> calloc(q + q * H + t, sizeof(int64_t))
    if scratch == NULL:
        raise MemoryError()
    try:
        with nogil:
            dp_level(&prev[0], &cur[0], q, t, l, H, &offs[0], &pows[0], &inv[0], scratch, scratch + q + q * H,
                     lo, hi)
    finally:
        free(scratch)


def dp_finish(const int64_t[::1] level, int64_t[:, ::1] out, int64_t q, int t, const int64_t[::1] offs,
              const int64_t[::1] pows, const int64_t[::1] inv):
    """Level 0 from level 1: ``out[v, lane] = Σ_{u ⊥ v} hist[u, lane]`` for the ``b = offs[t]`` points."""
    if out.shape[0] != offs[t]:
        raise ValueError(f"need an output of b = {offs[t]} rows")
    cdef int64_t* digits = <int64_t*> calloc(t, sizeof(int64_t))
    if digits == NULL:
        raise MemoryError()
    try:
        with nogil:
            dp_final(&level[0], &out[0, 0], q, t, out.shape[1], &offs[0], &pows[0], &inv[0], digits)
    finally:
        free(digits)
