import os

# The suite checks the compiled kernels (as before the interpreted tier existed); the interpreted tier is
# checked against them by tests/_kernels/test_jit.py. Set before ldpnum is imported (ldpnum/_kernels/_jit.py).
os.environ.setdefault("LDPNUM_JIT", "compile")

import numpy as np
import pytest

EPSILONS = [1e-3, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0]

ADVERSARIAL_UNIT = [0.0, 1.0, -0.0, 5e-324, np.nextafter(1.0, 0.0), 1 / 3, 0.5, np.nextafter(0.5, 1.0),
                    2.2250738585072014e-308]


def adversarial_values(bounds, n_random=100_000, seed=12345):
    low, high = bounds
    edge = [low + u * (high - low) for u in ADVERSARIAL_UNIT]
    edge += [low, high, np.nextafter(high, low), np.nextafter(low, high)]
    rnd = np.random.default_rng(seed).uniform(low, high, n_random)
    return np.concatenate([np.array(edge, dtype=np.float64), rnd])


#: Test files run under ldpnum's default JIT policy ("auto": small calls interpreted, larger ones compiled), as
#: users' code runs: the documentation's examples check what they print, not a tier, and compiling every kernel
#: their small examples touch cost ~25 s of CPU on a clean clone. Both tiers are compared kernel by kernel in
#: tests/_kernels/test_jit.py; every other file checks the compiled kernels.
DEFAULT_POLICY_FILES = {"test_docs.py"}


@pytest.fixture(autouse=True, scope="module")
def _jit_tier(request):
    if request.path.name not in DEFAULT_POLICY_FILES:
        yield
        return
    from ldpnum._kernels import _jit

    patch = pytest.MonkeyPatch()
    patch.setattr(_jit, "MODE", "auto")
    yield
    patch.undo()
