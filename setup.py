"""Build the Cython server-side kernels (DESIGN.md R6); all metadata lives in pyproject.toml.

Every ``ldpnum/_kernels/*.pyx`` becomes an extension ``ldpnum._kernels.<name>``.
"""

from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(
        f"ldpnum._kernels.{pyx.stem}",
        [str(pyx)],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
    )
    for pyx in sorted(Path("ldpnum/_kernels").glob("*.pyx"))
]

setup(ext_modules=cythonize(extensions, language_level=3, compiler_directives={"boundscheck": False,
                                                                              "wraparound": False,
                                                                              "cdivision": True}))
