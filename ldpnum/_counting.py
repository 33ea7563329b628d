"""Counting reports on threads: one helper for every server kernel that streams reports into counts.

The Cython aggregation kernels (code histograms, local-hashing and PI-RAPPOR support counts, unary bit
counts) release the GIL. Large inputs are split into contiguous row slices, each counted on a Python thread
into its own private histogram, and the histograms are added: no shared counter is written by two threads,
and the result is the same integer counts for any number of slices. A kernel that checks its input reports
how many records are bad and the first one within its slice; :func:`count_in_slices` turns that into the
count over all slices and the first bad record's index in the whole input, so error messages name global
positions.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["count_in_slices", "n_threads"]


def n_threads():
    """Threads to count on: the JIT policy's thread count, read without importing Numba.

    That is Numba's count, ``NUMBA_NUM_THREADS``, or the number of cores.
    """
    from ._kernels._jit import num_threads

    return num_threads()


def count_in_slices(kernel, data, n_out, *args, n_slices=1, max_workers=None):
    """Count ``data`` with ``kernel`` over ``n_slices`` row slices on threads; add the private histograms.

    Parameters
    ----------
    kernel : callable
        ``kernel(rows, *args, out)`` adds the counts of ``rows`` (a contiguous slice of ``data``) into the
        int64 array ``out`` of length ``n_out`` (zeroed), and returns ``(n_bad, first)``: how many records it
        refused and the first one's index within ``rows`` (or returns None when it refuses nothing). It
        must release the GIL to run in parallel.
    data : numpy.ndarray
        Records along the first axis (1-D codes or 2-D packed bit rows), C-contiguous.
    n_out : int
        Length of the histogram.
    *args
        Passed to ``kernel`` between the rows and the output.
    n_slices : int, optional
        Number of slices (at most one per record); 1 counts on the calling thread.
    max_workers : int, optional
        Threads for the slices (default: one per slice).

    Returns
    -------
    counts : numpy.ndarray of int64, shape (n_out,)
    n_bad : int
        Records refused by the kernel, over all slices.
    first : int
        Index in ``data`` of the first refused record, or -1.

    Examples
    --------
    >>> import numpy as np
    >>> def kernel(rows, out):
    ...     np.add.at(out, rows, 1)
    >>> counts, n_bad, first = count_in_slices(kernel, np.array([0, 2, 2, 1, 2]), 3, n_slices=2)
    >>> counts.tolist(), n_bad, first
    ([1, 1, 3], 0, -1)
    """
    n = data.shape[0]
    n_slices = max(1, min(int(n_slices), n))
    offsets = [n * i // n_slices for i in range(n_slices + 1)]
    partial = np.zeros((n_slices, n_out), dtype=np.int64)

    def run(i):
        result = kernel(data[offsets[i]:offsets[i + 1]], *args, partial[i])
        n_bad, first = (0, -1) if result is None else result
        return int(n_bad), (offsets[i] + int(first) if n_bad else -1)

    if n_slices == 1:
        results = [run(0)]
    else:
        with ThreadPoolExecutor(min(max_workers or n_slices, n_slices)) as pool:
            results = list(pool.map(run, range(n_slices)))
    n_bad = sum(r[0] for r in results)
    first = next((r[1] for r in results if r[0]), -1)
    return (partial[0] if n_slices == 1 else partial.sum(axis=0)), n_bad, first
