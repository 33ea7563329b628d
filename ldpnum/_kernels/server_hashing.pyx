# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Server-side kernels of the hashing frequency oracles (design rules R4, R6).

:func:`local_hash_support` streams local-hashing reports (BLH, OLH) into the support counts
``I_v = #{reports with h_{a,b}(v) = y}`` for every category ``v`` — the sufficient statistic of the
frequency estimator, ``k`` integers that merge by addition. A report cannot be histogrammed (its alphabet
has 2^48·g letters), so every report is decoded against every category: O(n·k) work, kept cheap by
evaluating the hash *incrementally*. The field product is GF(2)-linear in ``v``, so with ``v = hi·S + t``
(``S = 2^s``)

    z(v) = (a ⊗ v) ⊕ b = [a ⊗ (hi·S)] ⊕ T[t],       T[t] = (a ⊗ t) ⊕ b   (a table of S entries per report)

and ``a ⊗ (hi·S)`` changes from ``hi - 1`` to ``hi`` by one precomputed XOR. The test ``h(v) = y`` is
``floor(z g / 2^24) = y``, i.e. ``z`` in ``[lo_y, lo_y + w_y)`` with ``lo_y = ceil(y 2^24 / g)``: one XOR,
one subtraction and one unsigned comparison per (report, category), in 32-bit lanes the compiler
vectorizes.

:func:`walsh_hadamard` is the fast Walsh–Hadamard transform of a histogram of Hadamard-response codes,
from which every support count follows (``I_v = (n + W[v + 1]) / 2``).

The GIL is released, so the Python wrappers run slices on several threads into private counts and add
them (the result does not depend on the number of threads). No OpenMP: a process that forks after using
GNU OpenMP breaks its children. Inputs are ``const``; outputs are owned by the caller.
"""

from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil

cdef enum:
    FIELD_BITS = 24
    FIELD_SIZE = 1 << 24
    M24 = (1 << 24) - 1
    POLY = 0x1B                  # x^24 = x^4 + x^3 + x + 1
    Y_BITS = 16
    Y_MASK = (1 << 16) - 1
    LOW_BITS = 6                 # s: categories are processed in blocks of at most 2^6 = 64
    FLUSH = 1 << 30              # private uint32 counters are flushed before they could overflow


cdef inline uint32_t xtime(uint32_t x) noexcept nogil:
    """``x ⊗ X`` in GF(2^24)."""
    return ((x << 1) & <uint32_t> M24) ^ ((<uint32_t> 0 - ((x >> 23) & 1)) & <uint32_t> POLY)


def local_hash_support(const uint64_t[::1] codes, uint32_t g, int64_t[::1] counts):
    """Add to ``counts[v]`` the number of reports with ``h_{a,b}(v) = y``, for every ``v < len(counts)``.

    A report is ``a << 40 | b << 16 | y`` (``a``, ``b`` in GF(2^24), ``y < g``). Returns
    ``(n_bad, first_bad)``: how many reports have ``y >= g`` (they are not counted) and the index of the
    first one (``-1`` if none).
    """
    if not 2 <= g <= (1 << Y_BITS):
        raise ValueError(f"g must be in [2, {1 << Y_BITS}]; got {g}")
    cdef Py_ssize_t n = codes.shape[0]
    cdef Py_ssize_t k = counts.shape[0]
    if not 1 <= k <= FIELD_SIZE:
        raise ValueError(f"need 1 <= k <= 2**24 categories; got {k}")
    cdef int n_bits = 1
    while (<Py_ssize_t> 1 << n_bits) < k:
        n_bits += 1
    cdef int s = n_bits if n_bits < LOW_BITS else LOW_BITS
    cdef Py_ssize_t S = 1 << s
    cdef Py_ssize_t n_hi = (k + S - 1) >> s
    cdef uint32_t* bounds = <uint32_t*> calloc(g + 1, sizeof(uint32_t))
    cdef uint32_t* local = <uint32_t*> calloc(k, sizeof(uint32_t))
    if bounds == NULL or local == NULL:
        free(bounds)
        free(local)
        raise MemoryError()
    cdef uint32_t powers[FIELD_BITS]
    cdef uint32_t steps[FIELD_BITS]
    cdef uint32_t table[1 << LOW_BITS]
    cdef uint32_t* cnt
    cdef uint64_t c, y, since_flush = 0
    cdef uint32_t a, b, x, lo, w, hi_part, acc
    cdef Py_ssize_t i, j, t, hi, m, half, v
    cdef int64_t n_bad = 0
    cdef int64_t first_bad = -1
    with nogil:
        for j in range(g + 1):
            bounds[j] = <uint32_t> ((<uint64_t> j * FIELD_SIZE + g - 1) // g)
        for i in range(n):
            c = codes[i]
            y = c & <uint64_t> Y_MASK
            if y >= g:
                if n_bad == 0:
                    first_bad = i
                n_bad += 1
                continue
            a = <uint32_t> (c >> 40)
            b = <uint32_t> ((c >> Y_BITS) & M24)
            lo = bounds[y]
            w = bounds[y + 1] - lo
            x = a
            for j in range(n_bits):          # powers[j] = a ⊗ X^j
                powers[j] = x
                x = xtime(x)
            table[0] = b                     # table[t] = (a ⊗ t) ⊕ b for t < S
            half = 1
            for j in range(s):
                for t in range(half):
                    table[half + t] = table[t] ^ powers[j]
                half <<= 1
            acc = 0                          # steps[j]: a ⊗ (hi·S) changes by this when ctz(hi) = j
            for j in range(n_bits - s):
                acc ^= powers[s + j]
                steps[j] = acc
            hi_part = 0
            for hi in range(n_hi):
                if hi:
                    hi_part ^= steps[__builtin_ctzll(<unsigned long long> hi)]
                v = hi << s
                m = k - v if k - v < S else S
                cnt = local + v
                for t in range(m):
                    cnt[t] += (((hi_part ^ table[t]) - lo) < w)
            since_flush += 1
            if since_flush == FLUSH:
                for v in range(k):
                    counts[v] += local[v]
                    local[v] = 0
                since_flush = 0
        for v in range(k):
            counts[v] += local[v]
    free(bounds)
    free(local)
    return int(n_bad), int(first_bad)


def walsh_hadamard(int64_t[::1] x):
    """In-place fast Walsh–Hadamard transform: ``x[r] <- sum_y (-1)^popcount(r & y) x[y]``.

    ``len(x)`` must be a power of two. Exact in int64 for counts below 2^62 / len(x).
    """
    cdef Py_ssize_t n = x.shape[0]
    if n & (n - 1):
        raise ValueError(f"walsh_hadamard needs a power-of-two length; got {n}")
    cdef Py_ssize_t h = 1, i, j, blk
    cdef int64_t u, v
    with nogil:
        while h < n:
            for blk in range(n // (2 * h)):
                i = blk * 2 * h
                for j in range(i, i + h):
                    u = x[j]
                    v = x[j + h]
                    x[j] = u + v
                    x[j + h] = u - v
            h *= 2
