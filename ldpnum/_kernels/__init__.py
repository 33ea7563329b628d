"""All compiled code of ldpnum: Numba client kernels (``_jit.py`` policy) and Cython server kernels."""
