# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernel of the prefix heavy-hitter protocols (PEM, TreeHist; design rule R6).

:func:`prefix_supports` evaluates ``I_j(p) = Σ_h counts_j[h, hash_h(p)]`` for every candidate prefix ``p``
(see :mod:`ldpnum.estimation.heavy`): one pass over the ``H`` functions per candidate, the hash computed in
registers (``mix64(a_h p + b_h)`` then the high word of its product with ``g``, exactly as the client kernel
and :func:`ldpnum.estimation.heavy.prefix_hash`), where NumPy materializes ``candidates × H`` arrays several
times. The GIL is released, so the Python wrapper can run slices of the candidates on several threads. Inputs
are ``const``; the output is owned by the caller.
"""

from libc.stdint cimport int64_t, uint64_t

cdef extern from *:
    """
    static inline unsigned long long ldp_mulhi64(unsigned long long a, unsigned long long b) {
        return (unsigned long long)(((unsigned __int128)a * b) >> 64);
    }
    """
    unsigned long long ldp_mulhi64(unsigned long long a, unsigned long long b) nogil


cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    z ^= z >> 33
    z *= <uint64_t> 0xFF51AFD7ED558CCD
    z ^= z >> 33
    z *= <uint64_t> 0xC4CEB9FE1A85EC53
    z ^= z >> 33
    return z


def prefix_supports(const int64_t[:, ::1] counts, const uint64_t[::1] prefixes, const uint64_t[::1] hash_a,
                    const uint64_t[::1] hash_b, double[::1] out):
    """``out[i] = Σ_h counts[h, hash_h(prefixes[i])]`` with ``hash_h(p) = ⌊mix64(a_h p + b_h) g / 2^64⌋``,
    ``g = counts.shape[1]`` and ``H = counts.shape[0]`` functions (``len(hash_a) == len(hash_b) == H``)."""
    cdef Py_ssize_t n_h = counts.shape[0]
    cdef uint64_t g = <uint64_t> counts.shape[1]
    cdef Py_ssize_t n = prefixes.shape[0]
    if hash_a.shape[0] != n_h or hash_b.shape[0] != n_h:
        raise ValueError(f"need {n_h} hash constants; got {hash_a.shape[0]} and {hash_b.shape[0]}")
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} entries for {n} prefixes")
    cdef Py_ssize_t i, h
    cdef uint64_t p
    cdef int64_t acc
    with nogil:
        for i in range(n):
            p = prefixes[i]
            acc = 0
            for h in range(n_h):
                acc += counts[h, ldp_mulhi64(mix64(hash_a[h] * p + hash_b[h]), g)]
            out[i] = <double> acc
