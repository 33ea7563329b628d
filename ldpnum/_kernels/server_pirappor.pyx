# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernels of PI-RAPPOR: reports → support counts ``I_j`` for every category (design rules R4, R6).

A report is the code ``φ1 << 32 | φ0`` of an affine map ``φ(z) = φ0 + z·φ1 mod p``; it *supports* category
``c`` (field element ``j = c + 1``) when ``bool(φ(j)) = [φ(j) < a]`` is 1. The aggregate is
``I_c = #{reports supporting c}`` for ``c = 0..k-1``. Two algorithms, one answer:

``support_stream``  the direct decoding (Feldman-Talwar Algorithm 4 for every ``j``): ``O(n·k)``. Reports
                    are taken in blocks of ``BLOCK``; for each ``j`` the block's ``φ(j)`` are advanced by
                    ``φ1`` (an addition and a conditional subtraction of ``p``; no multiplication or
                    division) and compared with ``a``. The loop over the block has no dependency between
                    iterations, so the compiler vectorizes it: measured 0.13-0.2 ns per (report, category)
                    on one core, against 0.6-0.75 ns for the per-report order (``j`` innermost, a dependency
                    through ``φ(j)``) and 1.7-1.8 ns for Algorithm 4 verbatim (a multiplication and a
                    modulo per pair).

``support_histogram``  the whole-histogram decoding of Appendix A (Algorithm 6: count how often each ``φ``
                    occurs, then decode each distinct ``φ`` once), plus one more step: all ``φ`` sharing
                    ``φ1 = f`` are decoded together. ``φ(j) < a`` iff ``φ0`` lies in the circular window
                    ``[-j·f, -j·f + a) mod p``, so with prefix sums over the row ``n[f, ·]`` each ``j`` costs
                    one window sum: ``O(n + p² + p·k)`` instead of ``O(n·k)``. It needs a table of
                    ``p²`` counters, so it is used when ``p`` is small (the caller decides by a cost model).

Both check every code (``φ0 < p`` and ``φ1 < p``) and return ``(n_bad, first_bad)``; when ``n_bad > 0`` the
counts are unspecified and the caller must raise. Inputs are ``const``; outputs are owned by the caller. The
GIL is released, so the caller runs slices of the codes on Python threads (each with its own
counts, and for the histogram its own table); no OpenMP (collectors fork: multiprocessing, Dask, Spark).
"""

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

cdef enum:
    BLOCK = 512  # reports per block of the direct decoding (2 x 2 KB of state: stays in L1)


def support_stream(const uint64_t[::1] codes, uint32_t p, uint32_t a, int64_t[::1] counts):
    """Add the support counts of ``codes`` to ``counts`` (length ``k``, ``k < p <= 2**30``): direct decoding.

    Returns ``(n_bad, first_bad)``.
    """
    cdef Py_ssize_t n = codes.shape[0]
    cdef Py_ssize_t k = counts.shape[0]
    cdef Py_ssize_t i, j, m, start, stop
    cdef int32_t ip = <int32_t> p
    cdef int32_t ia = <int32_t> a
    cdef int32_t s, f
    cdef int32_t acc
    cdef uint64_t c, lo, hi
    cdef int64_t n_bad = 0
    cdef int64_t first_bad = -1
    cdef int32_t* state = <int32_t*> malloc(2 * BLOCK * sizeof(int32_t))
    if state == NULL:
        raise MemoryError()
    cdef int32_t* step = state + BLOCK
    with nogil:
        start = 0
        while start < n:
            stop = start + BLOCK
            if stop > n:
                stop = n
            # φ(1) = φ0 + φ1 mod p for each valid report of the block; invalid ones are counted and skipped.
            m = 0
            for i in range(start, stop):
                c = codes[i]
                lo = c & 0xFFFFFFFFu
                hi = c >> 32
                if lo >= p or hi >= p:
                    if n_bad == 0:
                        first_bad = i
                    n_bad += 1
                    continue
                s = <int32_t> (lo + hi)
                if s >= ip:
                    s -= ip
                state[m] = s
                step[m] = <int32_t> hi
                m += 1
            for j in range(k):
                acc = 0
                for i in range(m):
                    s = state[i]
                    acc += s < ia
                    s += step[i]
                    s -= ip & -(<int32_t> (s >= ip))
                    state[i] = s
                counts[j] += acc
            start = stop
    free(state)
    return int(n_bad), int(first_bad)


def support_histogram(const uint64_t[::1] codes, uint32_t p, uint32_t a, int64_t[::1] counts):
    """Add the support counts of ``codes`` to ``counts`` (length ``k``): whole-histogram decoding with a
    private table of ``p²`` 32-bit counters (the caller passes fewer than ``2**32`` codes).

    Returns ``(n_bad, first_bad)``.
    """
    cdef Py_ssize_t n = codes.shape[0]
    cdef Py_ssize_t k = counts.shape[0]
    cdef Py_ssize_t pp = <Py_ssize_t> p * p
    cdef Py_ssize_t i, j, f, x, s, e
    cdef uint64_t c, lo, hi, bad, idx
    cdef int64_t n_bad = 0
    cdef int64_t first_bad = -1
    cdef int64_t w, row_total
    # one spare cell at the end receives the invalid codes, so the fill loop has no branch
    cdef uint32_t* table = <uint32_t*> calloc(pp + 1, sizeof(uint32_t))
    cdef int64_t* prefix = <int64_t*> malloc((p + 1) * sizeof(int64_t))
    if table == NULL or prefix == NULL:
        free(table)
        free(prefix)
        raise MemoryError()
    cdef uint32_t* row
    with nogil:
        for i in range(n):
            c = codes[i]
            lo = c & 0xFFFFFFFFu
            hi = c >> 32
            bad = (lo >= p) | (hi >= p)
            idx = hi * p + lo
            table[bad * <uint64_t> pp + (1 - bad) * idx] += 1
        n_bad = table[pp]
        if n_bad:
            for i in range(n):
                c = codes[i]
                if (c & 0xFFFFFFFFu) >= p or (c >> 32) >= p:
                    first_bad = i
                    break
        else:
            for f in range(p):
                row = table + f * p
                # prefix[x] = number of reports of this row with φ0 < x
                prefix[0] = 0
                for x in range(p):
                    prefix[x + 1] = prefix[x] + row[x]
                row_total = prefix[p]
                if row_total == 0:
                    continue
                # j = 1..k: the window [s, s + a) starts at s = -j·f mod p, which moves by -f per step
                s = 0
                for j in range(k):
                    s -= f
                    if s < 0:
                        s += p
                    e = s + a
                    if e <= p:
                        w = prefix[e] - prefix[s]
                    else:
                        w = row_total - prefix[s] + prefix[e - p]
                    counts[j] += w
    free(table)
    free(prefix)
    return int(n_bad), int(first_bad)
