"""The one JIT policy of ldpnum (DESIGN.md R6).

Every Numba kernel is decorated through :func:`jit`, so the policy lives in one place: compiled ahead of
first use and cached on disk (``cache=True``; set ``NUMBA_CACHE_DIR`` for read-only installs), ``nogil``,
never ``fastmath`` (randomizers compare integers against thresholds and must not have their arithmetic
reassociated), bounds checks left to validation (which happens before any kernel is called).

Parallel kernels are launched through :func:`launch`, which holds a module lock: Numba's ``workqueue``
threading layer aborts the process on concurrent parallel launches from several Python threads.

Threading layer: unless the user chose one (``NUMBA_THREADING_LAYER``), ldpnum asks Numba for a
*fork-safe* layer (TBB if installed, else the built-in workqueue). Numba otherwise prefers GNU OpenMP,
and a process that forks after using GNU OpenMP kills its children on their first parallel launch
(``multiprocessing`` with the fork start method, Dask and Spark workers). This is set before the first
parallel launch of the process and has no effect if some other code launched one already.

TBB is a dependency on Linux x86-64 because of launch cost: privatize runs one parallel kernel per block
of words (while a helper thread draws the next block), and the workqueue layer wakes sleeping workers on
every launch: measured ~90 µs per launch on a 2-vCPU VM against ~2.5 µs with TBB, which is 0.35 ns per
report for one-word randomizers (blocks of 2**18) and more for many-word ones. pip installs TBB's library
in the environment's ``lib`` directory, which the dynamic loader does not search, so Numba cannot load its
TBB layer from a plain ``pip install`` (Numba issue #6108); :func:`_preload_tbb` loads the installed
``libtbb.so.12`` by its path first, which satisfies Numba's own load of it by name.
"""

import ctypes
import importlib.metadata
import os
import sys
import threading

import numba


def _preload_tbb():
    """Load the pip-installed TBB library (if any) so Numba's TBB layer finds it; return its path or None.

    Uses the installed distribution's file list (public ``importlib.metadata``), never a guessed path.
    Any failure leaves Numba to fall back to the workqueue layer, which is correct, only slower to launch.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        files = importlib.metadata.files("tbb") or ()
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == "libtbb.so.12":
            path = os.path.realpath(f.locate())
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                return None
            return path
    return None


if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "forksafe"
# Loaded whatever layer is asked for: a user's NUMBA_THREADING_LAYER=tbb (or safe, threadsafe) needs it too,
# and loading it does not make Numba use it.
TBB_LIBRARY = _preload_tbb()

__all__ = ["jit", "launch", "LAUNCH_LOCK"]

LAUNCH_LOCK = threading.Lock()


def jit(*, parallel=False, inline=False):
    """Decorate a kernel with ldpnum's Numba policy."""
    options = dict(cache=True, nogil=True, fastmath=False, error_model="numpy", boundscheck=False)
    if parallel:
        options["parallel"] = True
    if inline:
        options["inline"] = "always"
    return numba.njit(**options)


def launch(kernel, *args):
    """Call a (parallel) kernel while holding the launch lock."""
    with LAUNCH_LOCK:
        return kernel(*args)
