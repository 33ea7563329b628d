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
"""

import os
import threading

import numba

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "forksafe"

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
