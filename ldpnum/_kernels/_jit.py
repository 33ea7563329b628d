"""The one JIT policy of ldpnum (design rule R6): how every client kernel is compiled, and when.

Every Numba kernel is decorated through :func:`jit`, which returns a :class:`Kernel`: the plain Python
function plus, made on demand, its Numba dispatcher. A kernel call runs on one of two tiers:

* **interpreted**: the kernel's own Python source, executed by Python on NumPy scalars (wrapping integer
  arithmetic, as compiled). Used for small calls while the compiled kernel is not yet in this process;
* **compiled**: the Numba dispatcher (``cache=True``, ``nogil``, ``parallel=True`` for the per-record
  loops, never ``fastmath``: randomizers compare integers against thresholds and must not have their
  arithmetic reassociated; bounds checks left to validation, which runs before any kernel).

Both tiers run the same source on the same words, record by record, so reports are bit-identical whichever
runs (design rule R2; tests/_kernels/test_jit.py checks every registered mechanism on both).

Why two tiers (measured with ``bench/startup.py`` on a 2-vCPU VM, first ``privatize`` of 1000 values in a
fresh process with an empty Numba cache). Compiling costs 1.2-5.2 s per mechanism (Subset selection 5.2 s,
Laplace 4.7 s, GRR 1.6 s), of which ~0.2 s is importing Numba and ~0.35 s its first compilation in a
process. Alternatives measured and not kept:

* compiling serial kernels (``parallel=False``) for the first calls: 0.6-4.1 s (Subset selection 4.1 s,
  Laplace 2.0 s, OUE 1.7 s), still over a second;
* leaving inlining to LLVM instead of Numba's ``inline="always"``: Laplace 4.7 -> 2.2 s, but Subset selection
  6.9 s and its kernel no longer cacheable (it takes a function argument), so not kept;
* ahead-of-time compiled client kernels (Cython, like the server kernels): would remove the JIT from the
  client entirely, but means a second implementation of every randomizer to keep bit-identical and as fast
  (SWAR unary encoding, four-way interleaved Laplace search); left for a later change;
* compiling at install: needs the install's own machine (Numba's cache is specific to the processor) and a
  writable package directory, and does nothing for a user whose cache is empty.

The interpreted tier runs 1000 values of every registered mechanism in at most 0.06 s (2-26 µs per
array element), against 0.25-0.55 s to *load* the compiled kernels from a warm on-disk cache. So a call
whose work (by default its largest per-record array: values, words or output, not the plan's tables) is at
most :data:`INTERPRET_MAX_ELEMENTS` elements runs interpreted, while the kernel has interpreted at most
:data:`INTERPRET_TOTAL_ELEMENTS` elements and :data:`INTERPRET_SECONDS` seconds in this process, the next
call included at the rate its earlier calls were measured at (rent until renting has cost what buying
would); after that, and for every larger call, the kernel is compiled (or loaded from Numba's on-disk cache)
once and used from then on. A kernel whose cost per record grows with a parameter the arrays' sizes do not
show (a vector's dimension, Kashin's frame, the bits of a set) declares its work in elements of comparable
cost (``jit(work=...)``): without it, 16,384 PrivUnitG reports of dimension 50 (0.9 ms each interpreted)
took 15 s to aggregate instead of 0.3 s to load the compiled decoder. ``import ldpnum`` and small calls
therefore never import Numba. Records of a large call are processed in blocks of ``2**18`` words
(``ldpnum._random``), far above the limit, so large calls run compiled and their throughput is unchanged.

``LDPNUM_JIT`` chooses the tier for the whole process: ``auto`` (default, as above), ``compile`` (always
the compiled kernels, as before this policy; also the right choice for deployments that want the compiled
code's fixed instruction sequence, since Python gives no timing guarantee for the interpreted tier), or
``interpret`` (always Python: debugging, coverage). ``NUMBA_DISABLE_JIT=1`` implies ``interpret``.

Cache location: Numba writes ``__pycache__`` beside the kernel modules, and when that directory is not
writable (a read-only site-packages) it falls back to a per-user cache directory; ``NUMBA_CACHE_DIR``
overrides both.

Parallel kernels are launched while holding :data:`LAUNCH_LOCK`: Numba's ``workqueue`` threading layer
aborts the process on concurrent parallel launches from several Python threads.

Threading layer: unless the user chose one (``NUMBA_THREADING_LAYER``), ldpnum asks Numba for a
*fork-safe* layer (TBB if installed, else the built-in workqueue). Numba otherwise prefers GNU OpenMP,
and a process that forks after using GNU OpenMP kills its children on their first parallel launch
(``multiprocessing`` with the fork start method, Dask and Spark workers). This is set when ``ldpnum`` is
imported, in ``numba.config`` if Numba is loaded, else as ``NUMBA_THREADING_LAYER=forksafe`` in the
process environment (where Numba reads it when imported; child processes inherit it), and has no effect
if some other code launched a parallel kernel already.

TBB is a dependency on Linux x86-64 because of launch cost: privatize runs one parallel kernel per block
of words (while a helper thread draws the next block), and the workqueue layer wakes sleeping workers on
every launch: measured ~90 µs per launch on a 2-vCPU VM against ~2.5 µs with TBB, which is 0.35 ns per
report for one-word randomizers (blocks of 2**18) and more for many-word ones. pip installs TBB's library
in the environment's ``lib`` directory, which the dynamic loader does not search, so Numba cannot load its
TBB layer from a plain ``pip install`` (Numba issue #6108); :func:`_preload_tbb` loads the installed
``libtbb.so.12`` by its path first, which satisfies Numba's own load of it by name.
"""

import ctypes
import functools
import importlib.metadata
import os
import sys
import threading
import time
import types

import numpy as np

__all__ = ["jit", "launch", "prange", "Kernel", "LAUNCH_LOCK", "MODE", "INTERPRET_MAX_ELEMENTS",
           "INTERPRET_TOTAL_ELEMENTS", "INTERPRET_SECONDS", "numba_module", "num_threads"]

#: Largest array (in elements) of a call that may run interpreted.
INTERPRET_MAX_ELEMENTS = 1 << 14
#: Elements a kernel may interpret in one process before it is compiled.
INTERPRET_TOTAL_ELEMENTS = 1 << 16
#: Seconds a kernel may spend interpreted in one process before it is compiled: between what loading its
#: compiled code from Numba's on-disk cache costs (0.25-0.55 s per mechanism, measured on a 2-vCPU machine) and
#: what compiling it costs when the cache is empty (1.2-5.2 s), so renting wastes at most about a second either way,
#: and well above what small calls cost on a loaded machine (a kernel shared by several mechanisms, run on 1000
#: values of each, took over 0.25 s with both cores busy).
INTERPRET_SECONDS = 1.0
#: Calls smaller than this many elements are charged as this many when the kernel's rate is measured (a tiny
#: call's fixed cost would otherwise read as a high cost per element).
_RATE_MIN_ELEMENTS = 1024
#: The clock interpreted calls are timed with (a module attribute, so tests can replace it).
_clock = time.perf_counter

MODES = ("auto", "compile", "interpret")


def _mode_from_environment():
    mode = os.environ.get("LDPNUM_JIT", "auto").strip().lower() or "auto"
    if mode not in MODES:
        raise ValueError(f"LDPNUM_JIT must be one of {MODES}; got {mode!r}")
    try:
        disabled = int(os.environ.get("NUMBA_DISABLE_JIT", "0") or "0")
    except ValueError:
        disabled = 0
    return "interpret" if disabled else mode


#: The process's tier policy: "auto", "compile" or "interpret" (from ``LDPNUM_JIT``; see the module notes).
MODE = _mode_from_environment()

LAUNCH_LOCK = threading.Lock()
_INTERPRETING = threading.local()
_MAKE_LOCK = threading.RLock()
_NUMBA = None


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


def _configure_threading():
    """Ask for a fork-safe threading layer unless the user chose one, and preload TBB; at import.

    Before Numba is imported, its configuration comes from the environment, so the choice is written
    there (child processes inherit it); once imported, into ``numba.config``. Either way it holds for
    every parallel launch of the process, ldpnum's or not, as long as none happened before.
    """
    if "NUMBA_THREADING_LAYER" not in os.environ:
        if "numba" in sys.modules:
            sys.modules["numba"].config.THREADING_LAYER = "forksafe"
        else:
            os.environ["NUMBA_THREADING_LAYER"] = "forksafe"
    # Loaded whatever layer is asked for: a user's NUMBA_THREADING_LAYER=tbb (or safe, threadsafe) needs
    # it too, and loading it does not make Numba use it.
    return _preload_tbb()


TBB_LIBRARY = _configure_threading()


def numba_module():
    """Numba, imported on first need (the threading layer was chosen when this module was imported)."""
    global _NUMBA
    if _NUMBA is None:
        with _MAKE_LOCK:
            if _NUMBA is None:
                import numba

                _NUMBA = numba
    return _NUMBA


def num_threads():
    """Threads a parallel kernel would use, without importing Numba for it.

    Numba's setting when Numba is loaded (``numba.set_num_threads`` may have lowered it), else its
    default: ``NUMBA_NUM_THREADS`` or the number of CPUs.
    """
    if _NUMBA is not None or "numba" in sys.modules:
        return max(1, int(sys.modules["numba"].get_num_threads()))
    try:
        return max(1, int(os.environ["NUMBA_NUM_THREADS"]))
    except (KeyError, ValueError):
        return max(1, os.cpu_count() or 1)


def prange(*args):
    """``range`` for interpreted kernels; compiled kernels see ``numba.prange`` in its place."""
    return range(*args)


def _global_names(code):
    """Global names a code object (and the code objects nested in it) may load."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


class Kernel:
    """A kernel under ldpnum's policy: call it like a function; the tier is chosen per call.

    Attributes
    ----------
    py_func : function
        The kernel's Python source, run as is by the interpreted tier.
    parallel, inline : bool
        Compiled with ``parallel=True``; inlined into its callers by Numba (a helper, never launched).
    """

    def __init__(self, py_func, options, parallel, inline, plan_arrays=(), buffers=(), work=None):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.options = options
        self.parallel = parallel
        self.inline = inline
        params = py_func.__code__.co_varnames[:py_func.__code__.co_argcount]
        unknown = (set(plan_arrays) | set(buffers)) - set(params)
        if unknown:
            raise TypeError(f"{py_func.__qualname__} has no parameters {sorted(unknown)}")
        #: Positions of the arguments whose size measures a call's work (all but the plan's tables and buffers).
        self.work_args = tuple(i for i, name in enumerate(params) if name not in (*plan_arrays, *buffers))
        #: Positions of the plan's tables, always handed to the kernel read-only (see :meth:`__call__`).
        self.plan_args = tuple(i for i, name in enumerate(params) if name in plan_arrays)
        #: Positions handed read-only: the plan's tables and the records' input (the first parameter, unless it
        #: is the words drawn or a scratch buffer), so one signature serves every caller (see :func:`_read_only`).
        first = (0,) if params and params[0] not in ("words", *buffers) and 0 not in self.plan_args else ()
        self.read_only_args = first + self.plan_args
        #: The kernel's own measure of a call's work (``work(*args)``, in elements), or None for the default.
        self.work = work
        self._dispatcher = None
        self.interpreted_elements = 0
        self.interpreted_seconds = 0.0
        #: The highest cost per element measured on this kernel's interpreted calls (seconds).
        self.seconds_per_element = 0.0

    def __reduce__(self):  # by reference, like a module-level function: never the compiled code
        return _kernel_by_name, (self.__module__, self.__qualname__)

    def __repr__(self):
        state = "compiled" if self._dispatcher is not None else "not compiled"
        return f"<ldpnum kernel {self.__module__}.{self.__qualname__} ({state})>"

    # -- the compiled tier ------------------------------------------------------------------------------
    @property
    def dispatcher(self):
        """The Numba dispatcher (made, not yet compiled, on first access; compiled on its first call)."""
        d = self._dispatcher
        if d is None:
            with _MAKE_LOCK:
                if self._dispatcher is None:
                    self._dispatcher = self._make_dispatcher()
                d = self._dispatcher
        return d

    def _make_dispatcher(self):
        numba = numba_module()
        f = self.py_func
        # Numba compiles a copy of the function whose globals name the dispatchers of the kernels it calls
        # and numba.prange; the module's own globals keep the Kernel objects the interpreted tier calls.
        g = dict(f.__globals__)
        for name in _global_names(f.__code__):
            v = g.get(name)
            if isinstance(v, Kernel):
                g[name] = v.dispatcher
            elif v is prange:
                g[name] = numba.prange
        clone = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
        clone.__qualname__ = f.__qualname__
        clone.__doc__ = f.__doc__
        clone.__kwdefaults__ = f.__kwdefaults__
        return numba.njit(**self.options)(clone)

    @property
    def compiled(self):
        """Whether this process uses the compiled tier for the kernel from now on."""
        return self._dispatcher is not None

    @property
    def signatures(self):
        """Signatures compiled (or loaded from the cache) so far; empty while interpreted."""
        return list(getattr(self._dispatcher, "signatures", ())) if self._dispatcher is not None else []

    @property
    def stats(self):
        """Numba's cache statistics of the compiled tier (``cache_hits``, ``cache_misses``), or None."""
        return getattr(self._dispatcher, "stats", None) if self._dispatcher is not None else None

    # -- calling ----------------------------------------------------------------------------------------
    def interpret(self, *args):
        """Run the Python source with NumPy's floating-point and integer warnings off, as compiled code runs.

        Integer arithmetic wraps silently; an invalid float operation gives NaN without a warning.
        """
        if getattr(_INTERPRETING, "on", False):  # inside an interpreted kernel: the state is set
            return self.py_func(*args)
        _INTERPRETING.on = True
        try:
            with np.errstate(all="ignore"):
                return self.py_func(*args)
        finally:
            _INTERPRETING.on = False

    def work_of(self, args):
        """A call's work in elements: the kernel's ``work`` function, else its largest per-record array."""
        if self.work is not None:
            return int(self.work(*args))
        return max((args[i].size for i in self.work_args if isinstance(args[i], np.ndarray)), default=0)

    def _interpreted_work(self, args):
        """The call's work if it runs interpreted (charged to the kernel's budgets), else None."""
        if MODE != "auto":
            return 0 if MODE == "interpret" else None
        if self._dispatcher is not None:
            return None
        work = self.work_of(args)
        if work > INTERPRET_MAX_ELEMENTS or self.interpreted_elements + work > INTERPRET_TOTAL_ELEMENTS:
            return None
        if self.interpreted_seconds + work * self.seconds_per_element > INTERPRET_SECONDS:
            return None
        self.interpreted_elements += work
        return work

    def _charge(self, work, seconds):
        self.interpreted_seconds += seconds
        self.seconds_per_element = max(self.seconds_per_element, seconds / max(work, _RATE_MIN_ELEMENTS))

    def __call__(self, *args):
        if self.inline:  # helpers run inside a kernel; called directly (tests), they are plain Python
            return self.interpret(*args)
        if self.read_only_args:
            args = _read_only(args, self.read_only_args)
        work = self._interpreted_work(args)
        if work is not None:
            if MODE != "auto":
                return self.interpret(*args)
            start = _clock()
            try:
                return self.interpret(*args)
            finally:
                self._charge(work, _clock() - start)
        d = self.dispatcher
        if self.parallel:
            with LAUNCH_LOCK:
                return d(*args)
        return d(*args)


def _read_only(args, positions):
    """``args`` with the arrays at ``positions`` (the plan's tables, the records' input) as read-only views.

    Numba compiles one signature per tuple of argument types, and an array's type includes whether it is
    writable. A plan's tables are read-only when the mechanism builds them, but NumPy does not pickle the flag:
    a mechanism sent to a worker process (Dask, Spark, multiprocessing) would hand its kernels writable tables,
    a second signature that ``ldpnum compile`` never compiled. Likewise the records' input: validation hands
    the kernels read-only values, but a caller holding a writable array (a reference test, a chunked reader)
    would compile the kernel again, for a few seconds each. A read-only view costs a few hundred nanoseconds
    per launch and keeps one signature.
    """
    out = list(args)
    for i in positions:
        a = out[i]
        if isinstance(a, np.ndarray) and a.flags.writeable:
            a = a.view()
            a.flags.writeable = False
            out[i] = a
    return tuple(out)


def _kernel_by_name(module, qualname):
    return getattr(importlib.import_module(module), qualname)


def jit(*, parallel=False, inline=False, plan_arrays=(), buffers=(), work=None):
    """Decorate a kernel with ldpnum's policy; returns a :class:`Kernel`.

    Parameters
    ----------
    parallel : bool
        Compile with ``parallel=True`` (its ``prange`` loops run on Numba's threads).
    inline : bool
        A helper inlined into the kernels that call it (Numba's ``inline="always"``).
    plan_arrays : tuple of str
        Parameters holding the plan's tables (not per-record data): their size does not count as work
        when choosing the tier, and they are handed to the kernel read-only (one compiled signature whether
        or not the mechanism was unpickled).
    buffers : tuple of str
        Parameters of a helper's scratch arrays, written by it, whose size its caller counted already.
    work : callable, optional
        ``work(*args)``: the call's work in elements of about the cost of one simple record's, for a kernel whose
        cost per record grows with a parameter the arrays' sizes do not show (the tier policy compares it with
        :data:`INTERPRET_MAX_ELEMENTS`). Default: the size of the largest per-record array.
    """
    options = dict(cache=True, nogil=True, fastmath=False, error_model="numpy", boundscheck=False)
    if parallel:
        options["parallel"] = True
    if inline:
        options["inline"] = "always"

    def decorate(py_func):
        return Kernel(py_func, options, parallel, inline, plan_arrays, buffers, work)

    return decorate


def launch(kernel, *args):
    """Call a kernel under the policy (parallel compiled launches hold :data:`LAUNCH_LOCK`)."""
    return kernel(*args)
