# The suite runs under ldpnum's default JIT policy ("auto", ldpnum/_kernels/_jit.py), as users' code does:
# calls above the interpreted size (most statistical tests) run the compiled kernels, small ones their Python
# source. pytest imports ldpnum before this file (pyproject's filterwarnings names ldpnum.exceptions), so a
# policy can only be chosen from the environment: `LDPNUM_JIT=compile make test` runs every call compiled.
# Both tiers are compared kernel by kernel, bit for bit, on every registered mechanism in
# tests/_kernels/test_jit.py, and the common suite's one-signature check forces the compiled tier.

import contextlib

import numpy as np
import pytest

@contextlib.contextmanager
def one_thread():
    """Run the block with Numba's thread count lowered to 1 (``numba.set_num_threads``, which ldpnum's kernels
    and block scheduling read), restored after. The per-family thread-count checks use it in process; one test
    (tests/common/test_reproducibility.py) starts processes with ``NUMBA_NUM_THREADS`` set, as users do."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


EPSILONS = [1e-3, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0]

ADVERSARIAL_UNIT = [0.0, 1.0, -0.0, 5e-324, np.nextafter(1.0, 0.0), 1 / 3, 0.5, np.nextafter(0.5, 1.0),
                    2.2250738585072014e-308]


def adversarial_values(bounds, n_random=100_000, seed=12345):
    low, high = bounds
    edge = [low + u * (high - low) for u in ADVERSARIAL_UNIT]
    edge += [low, high, np.nextafter(high, low), np.nextafter(low, high)]
    rnd = np.random.default_rng(seed).uniform(low, high, n_random)
    return np.concatenate([np.array(edge, dtype=np.float64), rnd])



# -- what a fresh interpreter imports ---------------------------------------------------------------------
#: One fresh interpreter (the default JIT policy) imports pandas, then ``ldpnum``, then ``ldpnum.plot``, and
#: records the top-level packages loaded after each step; the tests that ``import ldpnum`` stays light read
#: these records instead of each starting its own interpreter (about 1 CPU-s apiece). Modules only
#: accumulate, so a package absent after a later step was absent after the earlier ones too.
_FRESH_IMPORTS = """
import json, sys
def top():
    return {m.split(".")[0] for m in sys.modules}
import pandas
out = {"before_ldpnum": sorted(top())}
import ldpnum
out["ldpnum"] = sorted(top())
out["accessor"] = hasattr(pandas.Series([1.0]), "ldp")
import ldpnum.plot
out["ldpnum.plot"] = sorted(top())
print(json.dumps(out))
"""


@pytest.fixture(scope="session")
def fresh_imports():
    """``{"before_ldpnum", "ldpnum", "ldpnum.plot": sets of top-level packages loaded, "accessor": bool}``
    from one fresh interpreter (see ``_FRESH_IMPORTS``), run once per test process."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("LDPNUM_JIT", "NUMBA_DISABLE_JIT")}
    res = subprocess.run([sys.executable, "-c", _FRESH_IMPORTS], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    return {k: (set(v) if isinstance(v, list) else v) for k, v in out.items()}


# -- one compilation per kernel per session ---------------------------------------------------------------
# `make test` runs two xdist workers. On a clean clone Numba's on-disk cache is empty, and both workers would
# compile the same kernel signatures (SQKR's and Kashin's take 15-20 s each). The controller makes a directory
# of lock files before the workers start (they inherit its environment); a worker takes a kernel's lock
# before compiling it, so the second worker to need a kernel waits for the first one's compilation and then
# loads it from the cache that compilation wrote (Numba looks in its on-disk cache before compiling). What is
# compiled, and the code the tests run, are unchanged: only who compiles.
_COMPILE_LOCKS = "LDPNUM_TEST_COMPILE_LOCKS"
_LOCKS_MADE = pytest.StashKey[str]()


def pytest_configure(config):
    import os
    import tempfile

    if hasattr(config, "workerinput"):  # an xdist worker: use the controller's directory
        if os.environ.get(_COMPILE_LOCKS):
            _lock_compilations(os.environ[_COMPILE_LOCKS])
    elif config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None):
        config.stash[_LOCKS_MADE] = os.environ[_COMPILE_LOCKS] = tempfile.mkdtemp(prefix="ldpnum-compile-locks-")


def pytest_unconfigure(config):
    import os
    import shutil

    # only the process that made the directory removes it (a pytest run inside a test inherits the variable)
    made = config.stash.get(_LOCKS_MADE, None)
    if made is not None:
        os.environ.pop(_COMPILE_LOCKS, None)
        shutil.rmtree(made, ignore_errors=True)


def _lock_compilations(directory):
    """Serialize, across processes, the compilations of each kernel (Numba imported only when ldpnum first
    makes a dispatcher, as without this hook)."""
    import fcntl
    import hashlib
    import os
    import threading

    from ldpnum._kernels import _jit

    state = threading.local()
    make = _jit.Kernel._make_dispatcher

    def patch_numba():
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.dispatcher import Dispatcher

        compile_ = Dispatcher.compile
        if getattr(compile_, "ldpnum_locked", False):
            return

        def compile(self, sig):
            with global_compiler_lock:  # one compilation at a time in this process, as Numba does
                if getattr(state, "depth", 0):  # a kernel compiled while compiling its caller
                    return compile_(self, sig)
                f = self.py_func
                name = hashlib.sha1(f"{f.__module__}.{f.__qualname__}".encode()).hexdigest()
                os.makedirs(directory, exist_ok=True)
                with open(os.path.join(directory, name), "w") as fh:
                    fcntl.flock(fh, fcntl.LOCK_EX)
                    state.depth = 1
                    try:
                        return compile_(self, sig)
                    finally:
                        state.depth = 0
                        fcntl.flock(fh, fcntl.LOCK_UN)

        compile.ldpnum_locked = True
        Dispatcher.compile = compile

    def make_dispatcher(self):
        patch_numba()
        return make(self)

    _jit.Kernel._make_dispatcher = make_dispatcher
