# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernel: per-bit counts of bit-packed reports (unary encodings; design rules R4, R6).

A report is a row of ``n_bytes`` bytes; bit ``j`` is bit ``j % 8`` of byte ``j // 8``. Counting how many
rows have each bit set is a *positional population count*. Rows are read as 64-bit words (little-endian
loads: byte ``l`` of a word is bits ``8l..8l+7`` of its value; the tail of a row that is not a whole word is
zero-padded) and the bits are summed in SWAR counters of growing width, so each row costs about one
operation per byte instead of one per bit:

* 2-bit fields: ``e += w & 0x55..``, ``o += (w >> 1) & 0x55..`` (at most 3 rows before they would overflow);
* every 3 rows, each 2-bit field is spread into 4-bit fields (at most 15 rows);
* every 15 rows, each 4-bit field is spread into 8-bit fields (at most 255 rows);
* every 255 rows, the 8-bit fields are added into the int64 counts.

After spreading, the 8-bit accumulator number ``t`` (0..7) holds in its byte lane ``l`` the count of bit
``t`` of byte ``l`` of the word, i.e. of report bit ``64 * word + 8 * l + t``.

Inputs are ``const`` (read-only arrays and memory maps are accepted and never written); the GIL is
released, so the Python wrapper counts row slices on several threads into private counts. No OpenMP
(forked collectors, see ``server_counts.pyx``).
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

cdef uint64_t M1 = 0x5555555555555555ULL
cdef uint64_t M2 = 0x3333333333333333ULL
cdef uint64_t M4 = 0x0F0F0F0F0F0F0F0FULL


cdef inline uint64_t load_tail(const uint8_t* row, Py_ssize_t j, Py_ssize_t n_bytes) noexcept nogil:
    """The last, partial word ``j`` of a row (little-endian), zero-padded past the row's end."""
    cdef uint64_t w = 0
    cdef Py_ssize_t start = 8 * j
    cdef Py_ssize_t m = n_bytes - start
    cdef Py_ssize_t b
    for b in range(m):
        w |= (<uint64_t> row[start + b]) << (8 * b)
    return w


def count_bits(const uint8_t[:, ::1] reports, int64_t[::1] counts):
    """Add, for each bit position ``j < len(counts)``, how many reports have bit ``j`` set to ``counts[j]``.

    ``len(counts)`` must be ``8 * reports.shape[1]`` (every bit of every byte, padding included, so the
    caller can check that padding bits are zero).
    """
    cdef Py_ssize_t n = reports.shape[0]
    cdef Py_ssize_t n_bytes = reports.shape[1]
    cdef Py_ssize_t n_words = (n_bytes + 7) // 8
    cdef Py_ssize_t n_full = n_bytes // 8
    cdef Py_ssize_t i, j, t, l, r255, r15, r3, stop255, stop15, stop3
    cdef uint64_t w, a
    if counts.shape[0] != 8 * n_bytes:
        raise ValueError(f"counts must have {8 * n_bytes} entries; got {counts.shape[0]}")
    if n == 0:
        return
    # scratch: 2 two-bit, 4 four-bit and 8 eight-bit accumulators per word of a row
    cdef uint64_t* scratch = <uint64_t*> calloc(14 * n_words, sizeof(uint64_t))
    if scratch == NULL:
        raise MemoryError()
    cdef uint64_t* acc2 = scratch
    cdef uint64_t* acc4 = scratch + 2 * n_words
    cdef uint64_t* acc8 = scratch + 6 * n_words
    cdef const uint8_t* row
    with nogil:
        r255 = 0
        while r255 < n:
            stop255 = min(n, r255 + 255)
            memset(acc8, 0, 8 * n_words * sizeof(uint64_t))
            r15 = r255
            while r15 < stop255:
                stop15 = min(stop255, r15 + 15)
                memset(acc4, 0, 4 * n_words * sizeof(uint64_t))
                r3 = r15
                while r3 < stop15:
                    stop3 = min(stop15, r3 + 3)
                    memset(acc2, 0, 2 * n_words * sizeof(uint64_t))
                    for i in range(r3, stop3):
                        row = &reports[i, 0]
                        for j in range(n_full):
                            memcpy(&w, row + 8 * j, 8)
                            acc2[j] += w & M1
                            acc2[n_words + j] += (w >> 1) & M1
                        if n_full < n_words:
                            w = load_tail(row, n_full, n_bytes)
                            acc2[n_full] += w & M1
                            acc2[n_words + n_full] += (w >> 1) & M1
                    # 2-bit fields -> 4-bit fields: acc4[2h + e] field u counts bit 4u + 2h + e
                    for j in range(n_words):
                        a = acc2[j]
                        acc4[j] += a & M2
                        acc4[2 * n_words + j] += (a >> 2) & M2
                        a = acc2[n_words + j]
                        acc4[n_words + j] += a & M2
                        acc4[3 * n_words + j] += (a >> 2) & M2
                    r3 = stop3
                # 4-bit fields -> 8-bit fields: acc8[4g + a] byte lane l counts bit 8l + 4g + a
                for t in range(4):
                    for j in range(n_words):
                        a = acc4[t * n_words + j]
                        acc8[t * n_words + j] += a & M4
                        acc8[(4 + t) * n_words + j] += (a >> 4) & M4
                r15 = stop15
            for t in range(8):
                for j in range(n_words):
                    a = acc8[t * n_words + j]
                    for l in range(8):
                        if 8 * j + l < n_bytes:
                            counts[64 * j + 8 * l + t] += <int64_t> ((a >> (8 * l)) & 0xFF)
            r255 = stop255
    free(scratch)
