"""Build the Cython server-side kernels (DESIGN.md R6); all metadata lives in pyproject.toml.

Every ``ldpnum/_kernels/*.pyx`` becomes an extension ``ldpnum._kernels.<name>``. The extensions are
translated and compiled in parallel, one job per core (``LDPNUM_BUILD_JOBS`` overrides): each generated C file
is over a megabyte of Cython's memoryview support, and compiling them one after another was most of the
install's time. The generated C goes to ``build/cython``, outside the package, so the wheel ships the
compiled extensions and their ``.pyx`` sources only.
"""

import os
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

jobs = int(os.environ.get("LDPNUM_BUILD_JOBS", "0") or 0) or os.cpu_count() or 1

setup(ext_modules=cythonize(extensions, nthreads=jobs, language_level=3, build_dir="build/cython",
                            compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True}),
      options={"build_ext": {"parallel": jobs}})
