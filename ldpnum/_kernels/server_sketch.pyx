# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernel of the count-mean sketches' unbiased estimator: the collision sums of its variance (R6).

For a dictionary of ``|D|`` candidates with positions ``h_j(d)`` under ``k`` hash functions of weight ``π_j``, the
collision matrix is ``A_de = Σ_j π_j 1[h_j(d) = h_j(e)]`` and the variance of the unbiased estimate needs, per row
``d``, ``Σ_{e≠d} (A_de - 1/m)²`` and ``Σ_{e≠d} (A_de - 1/m)² s_e`` (:mod:`ldpnum.estimation.sketch`).
:func:`collision_excess` computes their parts over the pairs that collide at least once, ``Σ_{e≠d, A_de>0}
[(A_de - 1/m)² - 1/m²]`` (and times ``s_e``); the pairs that never collide add ``1/m²`` each, which the caller
adds in closed form. The candidates are first sorted into their buckets ``(j, h_j(e))`` by counting (``O(k|D|)``);
rows of ``A`` are then built :data:`ROWS` at a time, hash by hash, by adding ``π_j`` to every candidate of each
row's bucket under hash ``j`` (hash ``j``'s bucket starts and members stay in cache while the block reads them):
``Σ_j |bucket_j(d)|`` additions per row, ``O(k·|D|²/m)`` in all, against ``O(|D|²)`` for dense rows of ``A``.
Each row's bucket under a hash is a random line of the members array (10 MB at 10^4 candidates and 256 hashes),
so the buckets :data:`AHEAD` hashes on are prefetched: at that size the kernel took 0.81 s without, 0.31-0.39 s
with.
The GIL is released; inputs are ``const``.
"""

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free

cdef extern from *:
    void __builtin_prefetch(const void *) nogil

cdef enum:
    ROWS = 4  # rows of the collision matrix built together (their accumulators: ROWS·8·|D| bytes)
    AHEAD = 8  # hashes ahead whose buckets are prefetched (a bucket is a random line of the members array)


def collision_excess(const int64_t[:, ::1] positions, const double[::1] weights, int64_t width,
                     const double[::1] s, double[::1] excess, double[::1] excess_s):
    """Write ``Σ_{e≠d, A_de>0} [(A_de - 1/m)² - 1/m²]`` into ``excess[d]`` and the same times ``s_e`` into
    ``excess_s[d]``, for every candidate ``d`` (``positions[d, j]`` is ``h_j(d)``, in ``[0, width)``)."""
    cdef Py_ssize_t n = positions.shape[0], k = positions.shape[1]
    cdef Py_ssize_t n_cols = k * width
    cdef Py_ssize_t d, d0, d1, r, j, t, c
    cdef Py_ssize_t n_touched[ROWS]
    cdef int64_t col
    cdef int32_t e
    cdef double inv_m = 1.0 / width, inv2 = inv_m * inv_m, x, extra, row, row_s, w
    cdef double *row_acc
    cdef int32_t *row_touched
    cdef double *acc = <double *> calloc(ROWS * n + 1, sizeof(double))
    cdef int32_t *touched = <int32_t *> calloc(ROWS * n + 1, sizeof(int32_t))
    cdef int64_t *start = <int64_t *> calloc(n_cols + 1, sizeof(int64_t))
    cdef int64_t *fill = <int64_t *> calloc(n_cols + 1, sizeof(int64_t))
    cdef int32_t *members = <int32_t *> calloc(n * k + 1, sizeof(int32_t))
    if acc == NULL or touched == NULL or start == NULL or fill == NULL or members == NULL:
        free(acc)
        free(touched)
        free(start)
        free(fill)
        free(members)
        raise MemoryError("collision_excess: no memory for the buckets of the collision matrix")
    with nogil:
        # the buckets (j, b) as lists of candidates, by a counting sort
        for d in range(n):
            for j in range(k):
                start[j * width + positions[d, j] + 1] += 1
        for c in range(n_cols):
            start[c + 1] += start[c]
            fill[c] = start[c]
        for d in range(n):
            for j in range(k):
                col = j * width + positions[d, j]
                members[fill[col]] = <int32_t> d
                fill[col] += 1
        d0 = 0
        while d0 < n:
            d1 = d0 + ROWS if d0 + ROWS < n else n
            for r in range(d1 - d0):
                n_touched[r] = 0
            for j in range(k):
                if j + AHEAD < k:
                    for r in range(d1 - d0):
                        __builtin_prefetch(&members[start[(j + AHEAD) * width + positions[d0 + r, j + AHEAD]]])
                w = weights[j]
                if w == 0.0:  # a hash no report uses adds nothing (and must not mark a candidate touched)
                    continue
                for r in range(d1 - d0):
                    col = j * width + positions[d0 + r, j]
                    row_acc = acc + r * n
                    row_touched = touched + r * n
                    for t in range(start[col], start[col + 1]):
                        e = members[t]
                        if row_acc[e] == 0.0:
                            row_touched[n_touched[r]] = e
                            n_touched[r] += 1
                        row_acc[e] += w
            for r in range(d1 - d0):
                d = d0 + r
                row_acc = acc + r * n
                row_touched = touched + r * n
                row = 0.0
                row_s = 0.0
                for c in range(n_touched[r]):
                    e = row_touched[c]
                    if e != d:
                        x = row_acc[e] - inv_m
                        extra = x * x - inv2
                        row += extra
                        row_s += extra * s[e]
                    row_acc[e] = 0.0
                excess[d] = row
                excess_s[d] = row_s
            d0 = d1
    free(acc)
    free(touched)
    free(start)
    free(fill)
    free(members)
