# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Conversion of Python objects for the heavy-hitter and set-valued inputs (design rule R6): items to
fixed-width words (:func:`object_words`), lists of sets to lengths and elements (:func:`flatten_collections`),
and each person's words sorted (:func:`sort_segments`).

Numba cannot read Python objects, and NumPy's route for an object array of ``bytes`` or ``str`` goes through
a type scan, a list and a fixed-width ``S`` copy (about 60 ms per million items). :func:`object_words` makes
one pass over the array (or over a list, in place), reading each exact ``bytes`` object's buffer, or each exact
``str``'s UTF-8 form
(``PyUnicode_AsUTF8AndSize``: for ASCII strings the string's own buffer, otherwise a UTF-8 copy cached on the
string by CPython), and writes the big-endian word of its first ``nbytes`` bytes, zero-padded on the right —
the same word :func:`ldpnum.heavy.encode_items` makes by its NumPy route. It never raises on bad items: it
returns ``None`` when it meets anything else (another type, a subclass, a mix of ``bytes`` and ``str``, a str
holding NUL), and the caller falls back to the checked NumPy route, which names the offending item (a str
with no UTF-8 form raises UnicodeEncodeError, which the caller turns into its message).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.unicode cimport PyUnicode_CheckExact
from libc.stdint cimport uint64_t
from cpython.object cimport PyObject
from libc.string cimport memchr, memcpy, memset

cimport numpy as cnp
import numpy as np

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* The big-endian 64-bit word of the 8 bytes at p (one load and a byte swap where the compiler has one). */
    static inline uint64_t ldpnum_load_be64(const unsigned char* p) {
    #if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint64_t v;
        memcpy(&v, p, 8);
        return __builtin_bswap64(v);
    #else
        uint64_t v = 0;
        for (int j = 0; j < 8; j++) v = (v << 8) | p[j];
        return v;
    #endif
    }
    """
    uint64_t ldpnum_load_be64(const unsigned char* p) nogil


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object unicode, Py_ssize_t* size) except NULL


cdef inline int put_words(object obj, Py_ssize_t nbytes, Py_ssize_t n_words, Py_ssize_t lead,
                          uint64_t* out) except -1:
    """Write the ``n_words`` words of one item to ``out``; return its kind (1 bytes, 2 str), plus 4 if it is cut.

    0 for anything else (another type, a subclass, a str holding NUL). A str with no UTF-8 form raises.
    """
    cdef const unsigned char* p
    cdef Py_ssize_t size, m, k, s
    cdef int kind
    cdef uint64_t word
    cdef unsigned char row[32]
    if PyBytes_CheckExact(obj):
        kind = 1
        p = <const unsigned char*> PyBytes_AS_STRING(obj)
        size = PyBytes_GET_SIZE(obj)
    elif PyUnicode_CheckExact(obj):
        kind = 2
        p = <const unsigned char*> PyUnicode_AsUTF8AndSize(obj, &size)
        if size and memchr(p, 0, <size_t> size) != NULL:
            return 0
    else:
        return 0
    m = size if size < nbytes else nbytes
    if m >= 8:
        # word k holds the item's bytes [s, s + 8), s = 8k - lead, zero outside [0, m): one big-endian load of
        # them (of the first 8 - lead bytes, shifted right, for k = 0 when lead > 0; of the item's last 8 bytes,
        # shifted left, for the word the item ends inside), or 0
        for k in range(n_words):
            s = 8 * k - lead
            if s + 8 <= m:
                word = ldpnum_load_be64(p + s) if s >= 0 else ldpnum_load_be64(p) >> (8 * lead)
            elif s < m:
                word = ldpnum_load_be64(p + m - 8) << (8 * (8 - (m - s)))
            else:
                word = 0
            out[k] = word
    else:
        # fewer than 8 bytes: the 8·W-byte big-endian form (lead zero bytes, the m bytes, zero bytes) in a buffer
        memset(row, 0, 32)
        memcpy(row + lead, p, <size_t> m)
        for k in range(n_words):
            out[k] = ldpnum_load_be64(row + 8 * k)
    return kind | (4 if size > nbytes and p[nbytes] != 0 else 0)


def object_words(items, int nbytes):
    """Words of an object array or a list holding only exact ``bytes`` or only exact ``str`` (NUL-free) items.

    Returns ``(words, kind, n_long, first_long)``: ``words`` holds, per item, the big-endian integer of the item's
    first ``nbytes`` bytes (UTF-8 for str), zero-padded on the right: one uint64 per item for ``nbytes <= 8``
    (shape ``(n,)``), else ``W = ceil(nbytes / 8)`` uint64 digits per item, most significant first (shape
    ``(n, W)``, the item encoding's wide form); ``kind`` is ``"bytes"`` or ``"str"``; ``n_long`` counts the items
    whose byte at position ``nbytes`` exists and is not zero (the items cut, by the NumPy route's rule: zero bytes
    beyond the width are padding), ``first_long`` is the first such index (-1 if none). Returns ``None`` for an
    empty input, ``nbytes`` outside [1, 32], or any other content. ``items`` is a one-dimensional NumPy array of
    dtype object (any strides, read-only too) or an exact ``list`` (read in place: converting a list of a million
    strings to an object array costs more than this whole pass); it is only read.
    """
    cdef Py_ssize_t n, i, step = 0
    cdef PyObject** data = NULL
    cdef bint is_list = type(items) is list
    cdef int kind = 0, got
    cdef Py_ssize_t n_long = 0, first_long = -1
    cdef Py_ssize_t n_words = (nbytes + 7) // 8
    cdef Py_ssize_t lead = 8 * n_words - nbytes  # zero bytes before the item's first byte in its 8·W-byte form
    if is_list:
        n = PyList_GET_SIZE(items)
    elif isinstance(items, np.ndarray) and items.ndim == 1 and items.dtype.kind == "O":
        n = items.shape[0]
        step = items.strides[0] // <Py_ssize_t> sizeof(PyObject*)
        data = <PyObject**> cnp.PyArray_DATA(items)
    else:
        return None
    if n == 0 or nbytes < 1 or nbytes > 32:
        return None
    words = np.empty((n, n_words), dtype=np.uint64) if n_words > 1 else np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] w = words.reshape(-1)
    cdef uint64_t* out = &w[0]
    for i in range(n):
        if is_list:
            if PyList_GET_SIZE(items) != n:  # changed while read (another thread): refuse rather than guess
                raise RuntimeError("a list of items changed size while it was being read")
            got = put_words(<object> PyList_GET_ITEM(items, i), nbytes, n_words, lead, out + i * n_words)
        else:
            got = put_words(<object> data[i * step], nbytes, n_words, lead, out + i * n_words)
        if got == 0 or (kind != 0 and kind != (got & 3)):
            return None
        kind = got & 3
        if got & 4:
            n_long += 1
            if first_long < 0:
                first_long = i
    return words, ("bytes" if kind == 1 else "str"), n_long, first_long


def flatten_collections(seq):
    """Lengths and elements of a list of exact ``set``, ``frozenset``, ``list`` or ``tuple`` objects.

    Returns ``(lengths, flat)``: int64 lengths, one per entry, and an object array of all elements in entry
    order (a set's in its iteration order). Returns ``None`` when ``seq`` is not a list or tuple, or holds
    anything else (an array, a subclass, a missing entry): the caller's checked route names it.
    """
    if not isinstance(seq, (list, tuple)):
        return None
    cdef Py_ssize_t n = len(seq), i, total = 0, t = 0, m
    cdef object s, v
    lengths = np.empty(n, dtype=np.int64)
    cdef long long[::1] lens = lengths
    for i in range(n):
        s = seq[i]
        t_s = type(s)
        if t_s is not list and t_s is not tuple and t_s is not set and t_s is not frozenset:
            return None
        m = len(s)
        lens[i] = m
        total += m
    flat = np.empty(total, dtype=object)
    cdef cnp.ndarray[object, ndim=1] out = flat
    for i in range(n):
        for v in seq[i]:
            if t == total:
                break
            out[t] = v
            t += 1
    if t != total:  # a set changed size while we read it (another thread): refuse rather than guess
        raise RuntimeError("a set changed size while it was being read")
    return lengths, flat


def sort_segments(const long long[::1] offsets, const uint64_t[::1] words):
    """Each person's words in ascending order, and which persons hold a word twice.

    ``words[offsets[i]:offsets[i + 1]]`` are person ``i``'s (``offsets`` non-decreasing, from 0 to
    ``len(words)``). Returns ``(sorted_words, n_repeating, first_repeating)``: a new array with every segment
    sorted (insertion sort: the segments are small sets), the number of persons whose segment holds a value
    twice and the first of them (-1 if none).
    """
    cdef Py_ssize_t n = offsets.shape[0] - 1, i, a, b, j, r
    cdef Py_ssize_t n_rep = 0, first_rep = -1
    cdef uint64_t v
    if n < 0 or offsets[0] != 0 or offsets[n] != words.shape[0]:
        raise ValueError("offsets must run from 0 to len(words)")
    out = np.array(words, dtype=np.uint64, copy=True)
    cdef uint64_t[::1] w = out
    with nogil:
        for i in range(n):
            a = offsets[i]
            b = offsets[i + 1]
            for j in range(a + 1, b):
                v = w[j]
                r = j - 1
                while r >= a and w[r] > v:
                    w[r + 1] = w[r]
                    r -= 1
                w[r + 1] = v
            for j in range(a + 1, b):
                if w[j] == w[j - 1]:
                    n_rep += 1
                    if first_rep < 0:
                        first_rep = i
                    break
    return out, n_rep, first_rep
