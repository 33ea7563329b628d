# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Conversion of Python objects to fixed-width words (the heavy hitters' item encoding; DESIGN.md R6).

Numba cannot read Python objects, and NumPy's route for an object array of ``bytes`` or ``str`` goes through
a type scan, a list and a fixed-width ``S`` copy (about 60 ms per million items). :func:`object_words` makes
one pass over the array, reading each exact ``bytes`` object's buffer, or each exact ``str``'s UTF-8 form
(``PyUnicode_AsUTF8AndSize``: for ASCII strings the string's own buffer, otherwise a UTF-8 copy cached on the
string by CPython), and writes the big-endian word of its first ``nbytes`` bytes, zero-padded on the right —
the same word :func:`ldpnum.heavy.encode_items` makes by its NumPy route. It never raises on bad items: it
returns ``None`` when it meets anything else (another type, a subclass, a mix of ``bytes`` and ``str``, a str
holding NUL), and the caller falls back to the checked NumPy route, which names the offending item.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_CheckExact
from libc.stdint cimport uint64_t
from cpython.object cimport PyObject
from libc.string cimport memchr

cimport numpy as cnp
import numpy as np

cnp.import_array()

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object unicode, Py_ssize_t* size) except NULL


def object_words(cnp.ndarray items, int nbytes):
    """Words of an object array holding only exact ``bytes`` or only exact ``str`` (NUL-free) items.

    Returns ``(words, kind, n_long, first_long)``: ``words`` (uint64, one per item) is the big-endian integer of
    the item's first ``nbytes`` bytes (UTF-8 for str), zero-padded; ``kind`` is ``"bytes"`` or ``"str"``;
    ``n_long`` counts the items whose byte at position ``nbytes`` exists and is not zero (the items cut, by the
    NumPy route's rule: zero bytes beyond the width are padding), ``first_long`` is the first such index (-1 if
    none). Returns ``None`` for an empty array, ``nbytes`` outside [1, 8], or any other content. ``items`` is a
    one-dimensional NumPy array of dtype object (any strides, read-only too); it is only read.
    """
    if items.ndim != 1 or items.dtype.kind != "O":
        return None
    cdef Py_ssize_t n = items.shape[0], i, size, j, m
    cdef Py_ssize_t step = items.strides[0] // <Py_ssize_t> sizeof(PyObject*)
    cdef PyObject** data = <PyObject**> cnp.PyArray_DATA(items)
    cdef const unsigned char* p
    cdef uint64_t word
    cdef int kind = 0, k
    cdef Py_ssize_t n_long = 0, first_long = -1
    cdef object obj
    if n == 0 or nbytes < 1 or nbytes > 8:
        return None
    words = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] w = words
    for i in range(n):
        obj = <object> data[i * step]
        if PyBytes_CheckExact(obj):
            k = 1
            p = <const unsigned char*> PyBytes_AS_STRING(obj)
            size = PyBytes_GET_SIZE(obj)
        elif PyUnicode_CheckExact(obj):
            k = 2
            p = <const unsigned char*> PyUnicode_AsUTF8AndSize(obj, &size)
            if size and memchr(p, 0, <size_t> size) != NULL:
                return None
        else:
            return None
        if kind == 0:
            kind = k
        elif kind != k:
            return None
        m = size if size < nbytes else nbytes
        word = 0
        for j in range(m):
            word = (word << 8) | p[j]
        w[i] = word << (8 * (nbytes - m))
        if size > nbytes and p[nbytes] != 0:
            n_long += 1
            if first_long < 0:
                first_long = i
    return words, ("bytes" if kind == 1 else "str"), n_long, first_long
