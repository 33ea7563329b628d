"""Client kernel of PI-RAPPOR (pairwise-independent RAPPOR, Numba; design rule R6).

A person with category ``v`` (field element ``j = v + 1``; ``j = 0`` for an unknown value) reports an affine
function ``φ(z) = φ0 + z·φ1 mod p`` drawn uniformly from ``Φ_{j,b} = {φ : bool(φ(j)) = b}``, where
``bool(z) = [z < a]`` and ``b`` is a Bernoulli bit. Three words per record, every record doing the same work:

* word 0: ``b = (w0 >> 11) < t_b``                       (Bernoulli over 2**53)
* word 1: ``φ1 = mulhi(w1, p)``                           (uniform-ish in F_p)
* word 2: ``t = mulhi(w2, a)`` if ``b`` else ``a + mulhi(w2, p - a)``   (uniform-ish in b's class)
* ``φ0 = t - j·φ1 mod p``, so that ``φ(j) = t``.

``mulhi(w, m) = floor(w·m / 2**64)`` is computed exactly from 32-bit halves (``m < 2**32``): cell ``c`` of
``m`` receives ``ceil((c+1)·2**64/m) - ceil(c·2**64/m)`` of the 2**64 words, i.e. ``floor`` or ``ceil`` of
``2**64/m`` (a relative non-uniformity below ``m/2**64``), and the plan counts exactly these numbers.
``j·φ1 mod p`` is a Barrett reduction (two multiplications, one conditional subtraction), so no division
whose latency could depend on the value is executed; selections are arithmetic, not branches.

Report code (uint64): ``φ1 << 32 | φ0`` (``φ0`` in the low 32 bits, ``φ1`` in the high 32 bits).
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import mulhi32_inline, mulhi64_inline

U11 = np.uint64(11)
U32 = np.uint64(32)
ONE = np.uint64(1)


@jit(inline=True)
def mod_p_inline(x, p, barrett):
    """``x mod p`` for ``x < 2**64`` and ``barrett = floor(2**64 / p)``.

    The quotient estimate is at most one short, so one arithmetic conditional subtraction finishes it.
    """
    r = x - mulhi64_inline(x, barrett) * p
    return r - p * np.uint64(r >= p)


@jit(inline=True)
def pirappor_parts_inline(j, w_b, w_f, w_t, p, a, t_b, barrett):
    """``(b, φ1, t, φ0)`` of one record with field element ``j`` (all uint64)."""
    b = np.uint64(np.int64(w_b >> U11) < t_b)
    f = mulhi32_inline(w_f, p)
    m = b * a + (ONE - b) * (p - a)          # size of b's class: a values if b else p - a
    t = (ONE - b) * a + mulhi32_inline(w_t, m)
    s = t + p - mod_p_inline(j * f, p, barrett)
    phi0 = s - p * np.uint64(s >= p)
    return b, f, t, phi0


@jit(parallel=True)
def pirappor_kernel(values, p, a, t_b, barrett, words, out):
    """PI-RAPPOR randomizer, 3 words per record; ``values`` are codes ``0..k-1`` or ``-1`` (unknown)."""
    pu = np.uint64(p)
    au = np.uint64(a)
    bu = np.uint64(barrett)
    for i in prange(values.shape[0]):
        j = np.uint64(values[i] + 1)
        _, f, _, phi0 = pirappor_parts_inline(j, words[3 * i], words[3 * i + 1], words[3 * i + 2],
                                              pu, au, t_b, bu)
        out[i] = (f << U32) | phi0


@jit(parallel=True)
def pirappor_parts(values, p, a, t_b, barrett, words, out_b, out_phi1, out_t, out_phi0):
    """Probe: the kernel's own intermediate integers ``b, φ1, t, φ0`` for each record."""
    pu = np.uint64(p)
    au = np.uint64(a)
    bu = np.uint64(barrett)
    for i in prange(values.shape[0]):
        j = np.uint64(values[i] + 1)
        b, f, t, phi0 = pirappor_parts_inline(j, words[3 * i], words[3 * i + 1], words[3 * i + 2],
                                              pu, au, t_b, bu)
        out_b[i] = b
        out_phi1[i] = f
        out_t[i] = t
        out_phi0[i] = phi0


@jit(parallel=True)
def uniform_probe(words, m, out):
    """Probe: the kernel's uniform choice ``mulhi(w, m)`` for each word (checks the exact cell counts)."""
    mu = np.uint64(m)
    for i in prange(words.shape[0]):
        out[i] = mulhi32_inline(words[i], mu)


@jit(parallel=True)
def mod_probe(x, p, barrett, out):
    """Probe: the kernel's Barrett reduction ``x mod p`` for each ``x``."""
    pu = np.uint64(p)
    bu = np.uint64(barrett)
    for i in prange(x.shape[0]):
        out[i] = mod_p_inline(x[i], pu, bu)
