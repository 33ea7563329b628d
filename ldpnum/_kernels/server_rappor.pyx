# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernels of RAPPOR's decoder: its design matrix applied without building it (design rules R4, R6).

RAPPOR's collector regresses the per-(cohort, bit) estimates on the candidates' Bloom filters: the design ``X``
has a row per (cohort ``c``, bit ``i``), ``i < k``, and a column per candidate ``m``, with ``X[c·k + i, m] = 1``
when candidate ``m`` sets bit ``i`` in cohort ``c``. It is given here by the candidates' Bloom bit positions,
``pos[m, c, j]`` (``uint16``, hash ``j``), a bit that an earlier hash of the same candidate and cohort already set
being marked ``SKIP = 0xFFFF`` (a bit set twice is set once). The array holds ``M · C · h`` two-byte entries, the
design's non-zeros, instead of a sparse matrix's 12 or 16 bytes per non-zero or a dense matrix's
``M · C · k`` doubles: at ``M = 2**16`` segment pairs, 64 cohorts and ``h = 2`` that is 16.8 MB.

``bloom_scatter``  ``out += X x``: for each candidate with ``x[m] != 0``, ``x[m]`` is added to its bits' rows.
``bloom_gather``   ``out = X' r``: for each candidate, the sum of ``r`` over its bits' rows.

Inputs are ``const``; outputs are owned by the caller. The GIL is released; no OpenMP (collectors fork).
"""

from libc.stdint cimport uint16_t

cdef enum:
    SKIP = 0xFFFF


def bloom_scatter(const uint16_t[:, :, ::1] pos, const double[::1] x, Py_ssize_t k, double[::1] out):
    """``out[c·k + pos[m, c, j]] += x[m]`` for every candidate ``m`` with ``x[m] != 0``, cohort ``c`` and hash ``j``
    (entries ``SKIP`` left out). ``out`` has ``C · k`` entries."""
    cdef Py_ssize_t m_all = pos.shape[0], n_c = pos.shape[1], h = pos.shape[2]
    cdef Py_ssize_t m, c, j
    cdef uint16_t b
    cdef double v
    if x.shape[0] != m_all or out.shape[0] != n_c * k:
        raise ValueError(f"x must have {m_all} entries and out {n_c * k}; got {x.shape[0]} and {out.shape[0]}")
    with nogil:
        for m in range(m_all):
            v = x[m]
            if v == 0:
                continue
            for c in range(n_c):
                for j in range(h):
                    b = pos[m, c, j]
                    if b != SKIP:
                        out[c * k + b] += v


def bloom_gather(const uint16_t[:, :, ::1] pos, const double[::1] r, Py_ssize_t k, double[::1] out):
    """``out[m] = Σ_{c, j} r[c·k + pos[m, c, j]]`` over the entries that are not ``SKIP``. ``r`` has ``C · k``
    entries, ``out`` one per candidate."""
    cdef Py_ssize_t m_all = pos.shape[0], n_c = pos.shape[1], h = pos.shape[2]
    cdef Py_ssize_t m, c, j
    cdef uint16_t b
    cdef double s
    if r.shape[0] != n_c * k or out.shape[0] != m_all:
        raise ValueError(f"r must have {n_c * k} entries and out {m_all}; got {r.shape[0]} and {out.shape[0]}")
    with nogil:
        for m in range(m_all):
            s = 0.0
            for c in range(n_c):
                for j in range(h):
                    b = pos[m, c, j]
                    if b != SKIP:
                        s += r[c * k + b]
            out[m] = s
