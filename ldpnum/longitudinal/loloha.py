"""LOLOHA: longitudinal local hashing (Arcolezi, Pinzón, Palamidessi, Gambs).

Each person's hash function ``h`` is chosen once, from their key (OLH's affine family over GF(2^24) with range
``[0, g)``, :mod:`ldpnum.frequency.hashing`; the seed is a keyed word under a tweak of its own, so it does not
depend on the value). What is memoized is the *hashed* value ``h(v)``: the person holds a permanent GRR response
``z`` of ``h(v)`` over ``[0, g)`` at ``epsilon_permanent`` (ε∞), derived from the key, and at every report sends an
instantaneous GRR response ``y`` of ``z`` at the ε2 that makes one report ε1-LDP — L-GRR's composition with
``k → g`` (:func:`~ldpnum.longitudinal.grr.instantaneous_grr_epsilon` on the realized permanent plan). The report
is OLH's: ``seed bits | y`` in one uint64.

**Privacy.** The seed is independent of the value, and for a fixed seed a report is the composition of two GRR
plans over ``[0, g)`` applied to ``h(v)``; so one report is ε1-LDP and all reports about one *hashed* value are
ε∞-LDP. Values that collide under the person's hash share a memoized answer: a person whose value changes spends
ε∞ again only when its hashed value changes, at most ``g`` times whatever ``k`` — the protocol's point (budget
linear in ``g``, not ``k``).

**Optimal g** (Arcolezi et al., the minimizer of the approximate variance
``q(1 - q)/(p* - q)²`` with ``q = 1/g``, ``p* = p1·p2 + (1 - p1)·q2`` and L-GRR's ``p1, p2`` over ``g``)::

    g = round(1 + (1 - a² + sqrt(a⁴ - 14a² - 12a²b² + 12ab + 12a³b + 1)) / (6(a - b))),   a = e^ε∞, b = e^ε1,

at least 2 (and at most 2**16, the report layout's range). :func:`loloha_g` computes it; the tests compare it
with the integer minimizer of that variance. The paper's ``p2`` there is its closed form, the root of
``p1·p2 + q1·q2 = e^ε1 (p1·q2 + q1·p2)``, which leaves out the paths through the other ``g - 2`` hashed values;
ldpnum solves the composed plan's own equation (a larger ``p2``, still exactly ε1), under which the paper's ``g``
is the optimum or close to it: at most 17.5% more variance than the best ``g`` over ε∞ ≤ 8 (ε∞ = 1.5, ε1 = 0.825:
``g = 2`` against 3). Pass ``g`` to choose another.

**Estimator.** Support counts ``I_v = #{reports with h(v) = y}`` (OLH's aggregation, O(n·k) in Cython), debiased
with the composed support probabilities computed exactly from both integer plans and the hash's class sizes
(:func:`composed_support_probabilities_exact`, as :func:`~ldpnum.frequency.hashing.support_probabilities_exact`
does for one plan), so the estimate is exactly unbiased.

References
----------
H. H. Arcolezi, C. Pinzón, C. Palamidessi, S. Gambs, "Frequency Estimation of Evolving Data Under Local
Differential Privacy", EDBT 2023 (LOLOHA, its optimal g). T. Wang, J. Blocki, N. Li, S. Jha, "Locally
Differentially Private Protocols for Frequency Estimation", USENIX Security 2017 (OLH).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._kernels import client_hashing, client_longitudinal
from .._kernels._jit import launch
from ..frequency import FrequencyOracle
from ..frequency.hashing import (FIELD_BITS, G_MAX, HASH_FAMILY, Y_MASK, LocalHashing, check_g, check_local_hash_codes,
                                 hash_class_sizes)
from ..plans import TWO64, GRRPlan, grr_keep_cells
from ..reports import register_code_check
from ..spec import Spec
from .grr import MAX_LAYER_EPSILON, instantaneous_grr_epsilon
from .keys import keyed_words, memo_tweak
from .memo import Longitudinal, check_epsilons

__all__ = ["LOLOHA", "loloha_g", "composed_support_probabilities_exact"]

#: Hash ranges up to this size are checked by enumerating the composed plan in exact rationals.
ENUMERATE_MAX_G = 64


def loloha_g(epsilon_permanent: float, epsilon_report: float) -> int:
    """Arcolezi et al.'s optimal hash range for LOLOHA (see the module notes), in ``[2, 2**16]``.

    >>> loloha_g(2.0, 1.0), loloha_g(4.0, 2.0), loloha_g(8.0, 4.0)
    (3, 7, 53)
    """
    a, b = math.exp(epsilon_permanent), math.exp(epsilon_report)
    disc = a**4 - 14 * a**2 - 12 * a**2 * b**2 + 12 * a * b + 12 * a**3 * b + 1
    g = 1 + (1 - a * a + math.sqrt(max(disc, 0.0))) / (6 * (a - b))
    return int(min(max(round(g), 2), G_MAX))


def _grr_times_vector(plan: GRRPlan, n: list[int], transpose: bool) -> list[int]:
    """``Σ_u n_u C(u, z)`` for every ``z`` (``transpose``) or ``Σ_y C(z, y) n_y`` for every ``z``, in O(g).

    ``C`` is the plan's word counts (keep on the diagonal, lie index ``j`` off it); O(g) by prefix and suffix sums.
    """
    g, keep, lie = plan.k, plan.keep_count(), plan.lie_counts()
    if transpose:
        # Σ_u n_u C(u, z) = keep·n_z + lie[z]·Σ_{u>z} n_u + lie[z-1]·Σ_{u<z} n_u
        total = sum(n)
        out, below = [], 0
        for z in range(g):
            above = total - below - n[z]
            out.append(keep * n[z] + (lie[z] * above if z < g - 1 else 0) + (lie[z - 1] * below if z else 0))
            below += n[z]
        return out
    # Σ_y C(z, y) n_y = keep·n_z + Σ_{y<z} lie[y] n_y + Σ_{y>z} lie[y-1] n_y
    prefix = [0] * (g + 1)
    for y in range(g - 1):
        prefix[y + 1] = prefix[y] + lie[y] * n[y]
    suffix = [0] * (g + 1)
    for y in range(g - 1, 0, -1):
        suffix[y] = suffix[y + 1] + lie[y - 1] * n[y]
    return [keep * n[z] + prefix[z] + suffix[z + 1] for z in range(g)]


def composed_support_probabilities_exact(permanent: GRRPlan, instantaneous: GRRPlan,
                                         field_bits: int = FIELD_BITS) -> tuple[Fraction, Fraction]:
    """``(p*, q*)`` of a LOLOHA report as Fractions, over the seed.

    ``p* = P[y = h(v) | v]``, ``q* = P[y = h(v') | v]`` (``v' ≠ v``), over the seed, both GRR plans over ``[0, g)``
    (``C1``, ``C2``: word counts of 2**64) and the hash's class sizes ``n_u`` (``N = 2**field_bits``).

    With ``(h(v), h(v'))`` distributed as ``n_u n_u' / N²`` (the family's pairwise uniformity) and ``M = C1·C2``::

        p* = Σ_u n_u M[u][u] / (N·2**128),        q* = (nᵀ C1)(C2 n) / (N²·2**128),

    each product O(g) by prefix sums; ``M[u][u] = keep1·keep2 + lie2[u-1]·Σ_{z<u} lie1[z] + lie2[u]·Σ_{z>u}
    lie1[z-1]`` (a lie skips the true value, so lie index ``j`` of ``u`` is ``j`` below ``u`` and ``j + 1`` above).
    """
    g = permanent.k
    n = hash_class_sizes(g, field_bits)
    big_n = 1 << field_bits
    k1, l1 = permanent.keep_count(), permanent.lie_counts()
    k2, l2 = instantaneous.keep_count(), instantaneous.lie_counts()
    diag_total, below = 0, 0
    total_l1 = sum(l1)
    for u in range(g):
        above = total_l1 - below  # Σ_{z>u} lie1[z-1] = Σ_{j>=u} lie1[j]
        m_uu = k1 * k2 + (l2[u - 1] * below if u else 0) + (l2[u] * above if u < g - 1 else 0)
        diag_total += n[u] * m_uu
        if u < g - 1:
            below += l1[u]
    left = _grr_times_vector(permanent, n, transpose=True)
    right = _grr_times_vector(instantaneous, n, transpose=False)
    p = Fraction(diag_total, big_n * TWO64 * TWO64)
    q = Fraction(sum(a * b for a, b in zip(left, right)), big_n * big_n * TWO64 * TWO64)
    return p, q


class LOLOHA(Longitudinal, LocalHashing):
    """Longitudinal local hashing over ``k`` categories (LOLOHA).

    A hash chosen once per person, the hashed value memoized by a permanent GRR over ``g``, then an instantaneous
    GRR over ``g`` at every report.

    Parameters
    ----------
    epsilon_permanent : float
        ε∞ in (0, 20]: all reports of one person about one *hashed* value together are ε∞-LDP.
    epsilon_report : float
        ε1 in (0, ε∞): one report is ε1-LDP.
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**24.
    g : int, optional
        Hash range in [2, 65536]; default Arcolezi et al.'s optimal ``g`` (:func:`loloha_g`).

    Notes
    -----
    Privatize with each person's key: ``privatize(values, keys=keys, rng=None, round=r)``. Each report is ε1-LDP;
    all reports about one hashed value are ε∞-LDP; a person spends ε∞ again only when their *hashed* value changes
    (:meth:`memo_values` gives it), so at most ``g·ε∞`` in all, whatever ``k``. Reports are OLH's (one uint64: the
    person's hash seed and ``y``), aggregated into support counts (O(n·k)); the estimator is the pure-protocol one
    with the composed, exact support probabilities (:attr:`support_probabilities`), per round. Per report the
    client derives two keyed words (the hash seed, the permanent GRR) and draws one fresh word.

    References
    ----------
    H. H. Arcolezi, C. Pinzón, C. Palamidessi, S. Gambs, "Frequency Estimation of Evolving Data Under Local
    Differential Privacy", EDBT 2023.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.LOLOHA(epsilon_permanent=2.0, epsilon_report=1.0, k=100)
    >>> m.g
    3
    >>> keys = ldp.ClientKeys.generate(5, rng=0)
    >>> r = m.privatize(np.array([0, 1, 2, 3, 99]), keys=keys, rng=1, round=1)
    >>> r.codes.dtype, r.spec.get("round")
    (dtype('uint64'), 1)
    """

    name = "loloha"

    def __init__(self, epsilon_permanent: float, epsilon_report: float, k: int, g: int | None = None) -> None:
        eps_perm, eps_rep = check_epsilons(epsilon_permanent, epsilon_report)
        FrequencyOracle.__init__(self, eps_rep, k)
        self._epsilon_permanent = eps_perm
        self._g = loloha_g(eps_perm, eps_rep) if g is None else check_g(g)
        self._perm = GRRPlan(self._g, *grr_keep_cells(eps_perm, self._g))
        eps2 = instantaneous_grr_epsilon(self._perm.keep_count() / TWO64, self._g, eps_rep)
        if eps2 > MAX_LAYER_EPSILON:
            raise ValueError(f"epsilon_report={eps_rep!r} is too close to epsilon_permanent={eps_perm!r} for g="
                             f"{self._g}: the instantaneous layer would need epsilon {eps2:.3g} > "
                             f"{MAX_LAYER_EPSILON:g}")
        self._epsilon_instantaneous = eps2
        self._inst = self._plan = GRRPlan(self._g, *grr_keep_cells(eps2, self._g))
        self._support: tuple[Fraction, Fraction] | None = None

    # -- parameters ---------------------------------------------------------------------------------
    def _spec_params(self):
        return {**LocalHashing._spec_params(self), "epsilon_permanent": self._epsilon_permanent}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.get("epsilon_permanent"), spec.epsilon, spec.get("k"), g=spec.get("g"))

    def _permanent_spec(self) -> Spec:
        return Spec("loloha", self._epsilon_permanent, self._g,
                    (("k", self._k), ("g", self._g), ("hash", HASH_FAMILY)))

    @property
    def hash_tweak(self) -> np.uint64:
        """The tweak of the keyed word that picks each person's hash function.

        The permanent layer's spec under the purpose ``"hash seed"`` (independent of the responses' words,
        :attr:`tweak`).
        """
        tweak = self.__dict__.get("_hash_tweak")
        if tweak is None:
            tweak = self.__dict__["_hash_tweak"] = memo_tweak(self._permanent_spec(), "hash seed")
        return tweak

    @property
    def permanent_plan(self) -> GRRPlan:
        """The permanent layer's integer plan (GRR over ``g`` at ε∞)."""
        return self._perm

    @property
    def instantaneous_plan(self) -> GRRPlan:
        """The instantaneous layer's integer plan (GRR over ``g`` at ε2)."""
        return self._inst

    @property
    def epsilon_instantaneous(self) -> float:
        """ε2 of the instantaneous GRR layer (nominal; the plan realizes at most this)."""
        return self._epsilon_instantaneous

    def exact_support_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(p*, q*)`` as Fractions (:func:`composed_support_probabilities_exact`)."""
        if self._support is None:
            self._support = composed_support_probabilities_exact(self._perm, self._inst)
        return self._support

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` of one report: the probability that it supports the person's own / another category."""
        p, q = self.exact_support_probabilities()
        return float(p), float(q)

    # -- exact plans (for a fixed hash seed: over the hashed values) ----------------------------------
    def memo_states(self) -> list[int]:
        """The hashed values ``0..g-1``: what is memoized."""
        return list(range(self._g))

    def permanent_probabilities(self, state: int) -> dict[int, Fraction]:
        """The permanent GRR plan's exact probabilities of ``z`` for the hashed value ``state``."""
        return self._perm.exact_probabilities(state)

    def instantaneous_probabilities(self, permanent: int) -> dict[int, Fraction]:
        """The instantaneous GRR plan's exact probabilities of ``y`` given the permanent ``z``."""
        return self._inst.exact_probabilities(permanent)

    def realized_epsilons(self) -> tuple[float, float]:
        """``(ε1, ε∞)`` realized by the integer plans for any hash seed (the seed does not depend on the value).

        The composed plan over ``[0, g)`` enumerated in exact rationals for ``g ≤ 64``; beyond, the same composition
        of the exact plans in floating point (relative error about 1e-15).
        """
        if self._g <= ENUMERATE_MAX_G:
            return super().realized_epsilons()
        c1, c2 = self._dense(self._perm), self._dense(self._inst)
        m = c1 @ c2
        return (math.log(float(np.max(m.max(axis=0) / m.min(axis=0)))),
                math.log(float(self._perm.extreme_ratio())))

    @staticmethod
    def _dense(plan: GRRPlan) -> np.ndarray:
        g = plan.k
        out = np.empty((g, g))
        lie = np.array(plan.lie_counts(), dtype=np.float64) / TWO64
        for u in range(g):
            out[u, :u] = lie[:u]
            out[u, u + 1:] = lie[u:]
            out[u, u] = plan.keep_count() / TWO64
        return out

    # -- client side --------------------------------------------------------------------------------
    @property
    def permanent_words(self) -> int:
        """One keyed word per record (GRR's plan), besides the hash seed's."""
        return 1

    @property
    def instantaneous_words(self) -> int:
        """One fresh word per record (GRR's plan)."""
        return 1

    def _memo_values(self, values: np.ndarray, keys: Any) -> tuple[np.ndarray, np.ndarray]:
        n = values.shape[0]
        seeds = keyed_words(keys, self.hash_tweak, np.zeros(n, dtype=np.uint64), 1)
        hashed = np.empty(n, dtype=np.int64)
        if n:
            launch(client_hashing.local_hash_probe, seeds, np.where(values >= 0, values, 0), self._g, hashed)
        hashed[values < 0] = -1  # an unknown value memoizes as 2**64 - 1: its own value
        return hashed.astype(np.uint64), np.stack([seeds.view(np.int64), hashed])

    def _run_permanent(self, inputs: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        launch(client_longitudinal.seeded_grr_kernel, inputs[0].view(np.uint64), inputs[1], self._g,
               self._perm.a_keep, self._perm.shift, words, out)

    def _run_instantaneous(self, permanent: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        hashed = (permanent & Y_MASK).astype(np.int64)
        hashed.flags.writeable = False  # read-only like the permanent layer's inputs: one compiled signature
        launch(client_longitudinal.seeded_grr_kernel, permanent, hashed, self._g, self._inst.a_keep,
               self._inst.shift, words, out)


register_code_check(LOLOHA.name, check_local_hash_codes)
