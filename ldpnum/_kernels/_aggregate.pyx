# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernel: stream report codes into a histogram of output cells (DESIGN.md R4, R6).

This is the collector's hot loop, so it is compiled ahead of time (no JIT warm-up on the server): one pass
over the codes both checks that every code lies inside the output alphabet and counts it. The GIL is
released, so the Python wrapper can count slices on several threads into private histograms and add them
(the result does not depend on the number of threads). No OpenMP: a process that forks after using GNU
OpenMP breaks its children, and collectors run under multiprocessing, Dask and Spark.
The output array is owned by the caller; inputs are ``const`` (read-only arrays from pandas 3 or memory
maps are accepted and never written).
"""

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t

ctypedef fused code_t:
    uint8_t
    uint16_t
    uint32_t


def count_codes(const code_t[::1] codes, int64_t[::1] counts):
    """Add the histogram of ``codes`` over ``0..len(counts)-1`` to ``counts``.

    Returns ``(n_bad, first_bad)``: how many codes lie outside ``[0, len(counts))`` and the index of the
    first one (``-1`` if none). When ``n_bad > 0`` the contents of ``counts`` are unspecified and the
    caller must discard them.
    """
    cdef Py_ssize_t n = codes.shape[0]
    cdef Py_ssize_t n_cells = counts.shape[0]
    cdef Py_ssize_t i, c
    cdef int64_t n_bad = 0
    cdef int64_t first_bad = -1
    with nogil:
        for i in range(n):
            c = <Py_ssize_t> codes[i]
            if c < n_cells:
                counts[c] += 1
            else:
                if n_bad == 0:
                    first_bad = i
                n_bad += 1
    return int(n_bad), int(first_bad)
