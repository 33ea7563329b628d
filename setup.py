"""Build the Cython server-side kernels (DESIGN.md R6); all metadata lives in pyproject.toml."""

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(
        "ldpnum._kernels._aggregate",
        ["ldpnum/_kernels/_aggregate.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
    ),
    Extension(
        "ldpnum._kernels._em",
        ["ldpnum/_kernels/_em.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
    ),
]

setup(ext_modules=cythonize(extensions, language_level=3, compiler_directives={"boundscheck": False,
                                                                              "wraparound": False,
                                                                              "cdivision": True}))
