"""All compiled code of ldpnum (design rule R6), named by side and family.

``client_<family>.py``
    Numba kernels of the per-record randomizers (the client's work), all decorated through the one JIT
    policy module ``_jit.py``: ``client_numeric`` (mean oracles, Laplace, input scans), ``client_wave``
    (shaped windows), ``client_grr``, ``client_unary``, ``client_subset``, ``client_hashing`` (local hashing,
    Hadamard response), ``client_pirappor``, ``client_hierarchy``, ``client_prefix``, ``client_vector`` (sampled dimensions'
    coordinates, Duchi et al.'s multidimensional signs), ``client_unit`` (the unit-vector mechanisms' public
    direction family, PrivHS, the rejection sampler of PrivUnit/PrivUnitG, and the collector's decoder of
    their reports, which must regenerate the same directions: one source for both sides), ``client_kashin``
    (SQKR: Kashin's representation over a randomized Hadamard frame, sampled quantized coefficients, 2**k-ary
    randomized response; the collector decodes its reports with NumPy).
``server_<family>.pyx``
    Cython kernels of the collector (built by ``setup.py``, no JIT warm-up): ``server_counts`` (code
    histograms), ``server_unary``, ``server_hashing``, ``server_pirappor`` (support counts), ``server_rappor`` (RAPPOR's regression design), ``server_em``
    (EM/EMS), ``server_tree`` (hierarchical consistency); each with a ``.pyi`` stub for type checkers.
``objects.pyx``
    Cython conversion of Python objects that Numba cannot read: ``object_words`` (``bytes``/``str`` items to
    the heavy hitters' fixed-width words, either side), ``flatten_collections`` (lists of sets) and
    ``sort_segments`` (each person's set of words, sorted).
"""
