# The suite runs under ldpnum's default JIT policy ("auto", ldpnum/_kernels/_jit.py), as users' code does:
# calls above the interpreted size (most statistical tests) run the compiled kernels, small ones their Python
# source. pytest imports ldpnum before this file (pyproject's filterwarnings names ldpnum.exceptions), so a
# policy can only be chosen from the environment: `LDPNUM_JIT=compile make test` runs every call compiled.
# Both tiers are compared kernel by kernel, bit for bit, on every registered mechanism in
# tests/_kernels/test_jit.py, and the common suite's one-signature check forces the compiled tier.

import numpy as np

EPSILONS = [1e-3, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0]

ADVERSARIAL_UNIT = [0.0, 1.0, -0.0, 5e-324, np.nextafter(1.0, 0.0), 1 / 3, 0.5, np.nextafter(0.5, 1.0),
                    2.2250738585072014e-308]


def adversarial_values(bounds, n_random=100_000, seed=12345):
    low, high = bounds
    edge = [low + u * (high - low) for u in ADVERSARIAL_UNIT]
    edge += [low, high, np.nextafter(high, low), np.nextafter(low, high)]
    rnd = np.random.default_rng(seed).uniform(low, high, n_random)
    return np.concatenate([np.array(edge, dtype=np.float64), rnd])

