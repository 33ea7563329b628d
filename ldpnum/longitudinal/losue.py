"""L-OSUE: optimized unary encoding, memoized, then every bit flipped again at every report (Arcolezi et al.).

A person with category ``v`` holds a *permanent* OUE report ``z`` of ``v`` at ``epsilon_permanent`` (ε∞): ``k`` bits,
bit ``v`` set with probability ``p1`` (½), every other bit with probability ``q1`` (``1/(e^ε∞ + 1)``), derived
from their key (the same ``z`` for the same key and ``v``, however often they report; ldpnum's OUE plan and kernel
fed keyed words). At every report each bit of ``z`` goes through an *instantaneous* symmetric flip (SUE's
randomizer): kept with probability ``p2``, flipped with ``1 - p2``. One report's bits are then independent with

    p* = P[bit v = 1 | v]  = p1·p2 + (1 - p1)·(1 - p2),     q* = P[bit u = 1 | v] = q1·p2 + (1 - q1)·(1 - p2),

and its ratio is the unary product bound ``p*(1 - q*) / (q*(1 - p*))``. Setting it to e^ε1 at ideal OUE gives
Arcolezi et al.'s

    p2 = (e^(ε∞+ε1) - 1) / (e^(ε∞+ε1) + e^ε∞ - e^ε1 - 1)         (q2 = 1 - p2).

**Integer plan of the instantaneous layer** (:class:`BitFlipPlan`). An output bit is 1 iff its ``b``-bit lane is
below a threshold *per input bit*: ``t_one`` for an input 1, ``t_zero`` for an input 0, so ``P[1 | 1] = t_one/2**b``
and ``P[1 | 0] = t_zero/2**b``. A symmetric pair ``t_one + t_zero = 2**b`` resolves ε1 only to about
``4·2**-b``, so the plan chooses, near the symmetric pair, the most symmetric pair whose composed ratio on the
*realized* permanent plan is at most ``E < e^ε1`` and whose realized ε1 is within a relative 1e-7 of ε1, with a
variance within 1% of the symmetric flip's (:func:`bit_flip_plan`). Lanes of 8, 16 or 32 bits, the narrowest
with such a pair within an asymmetry ``|P[1|1] + P[1|0] - 1|`` of 2**-6, 2**-5 or 2**-14, fix the thresholds'
grid. The output bits are drawn from ``ceil(k/8)·b/8`` words of lanes or, where that reads fewer words (``k`` of about
64 and more), by the sparse layout (:class:`~ldpnum.frequency.unary.SparseBits` with each bit's input bit selecting
its threshold: a few mask words per 64 bits decide most bits, lanes the rest), with the same probability for every
bit, independently: at ``k = 1024`` on 16-bit lanes, 90 words per record instead of 256. (Where ``P[1|0]`` is so small that one step of it moves the solution by more, at
ε1 above about 12, the most symmetric tight pair on 32-bit lanes is used: asymmetry up to 2e-3 below ε1 = 18, 0.09
at ε1 = 19.8 after ε∞ = 20.)

**Privacy.** ε∞ is OUE's at ε∞ (all reports about one category are a post-processing of ``z``); ε1 is the
composed plan's product bound (:meth:`LOSUE.realized_epsilons`: the structural reduction of
:func:`~ldpnum.frequency.unary.unary_extreme_ratio` on the composed ``(p*, q*)``; enumeration of the composed plan
over all ``2**k`` reports for ``k ≤ 4``). A person whose category changes spends ε∞ again for each distinct category.

**Estimator.** Reports are bit-packed like OUE's and aggregated into per-bit counts; the pure-protocol estimator
debiases them with the composed ``(p*, q*)`` of the realized plans, so it is exactly unbiased.

References
----------
H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Improving the Utility of Locally Differentially Private
Protocols for Longitudinal and Multidimensional Frequency Estimates", Digital Communications and Networks, 2022
(L-OSUE). T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
Estimation", USENIX Security 2017 (OUE, SUE). Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized
Aggregatable Privacy-Preserving Ordinal Response", CCS 2014 (permanent and instantaneous randomized response).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._kernels import client_longitudinal
from .._kernels._jit import launch
from ..frequency.unary import (OUE, BitVectorOracle, SparseBits, UnaryPlan, lane_thresholds, sparse_bits,
                               unary_extreme_ratio)
from ..plans import exp_lower
from ..spec import Spec
from .memo import Longitudinal, check_epsilons

__all__ = ["LOSUE", "BitFlipPlan", "bit_flip_plan", "losue_p2"]

#: Lane widths tried for the instantaneous flip, narrowest (fewest words) first.
LANE_BITS = (8, 16, 32)
#: Largest relative gap between the realized ε1 and the stated one (and, over ε1 = 1, between the realized composed
#: ratio and E, a rigorous lower bound of e^ε1).
TIGHT_TOL = 1e-7
#: Largest relative difference between the realized per-report variance and the symmetric flip's.
VARIANCE_TOL = 1e-2
#: Thresholds ``t_zero`` tried on each side of the symmetric flip's, per lane width.
_WINDOW = {8: 16, 16: 4096, 32: 4096}
#: Largest asymmetry ``|t_zero + t_one - 2**b|`` accepted per lane width: the flip is symmetric to within
#: 2**-6 on 8-bit lanes, 2**-5 on 16-bit ones, 2**-14 on 32-bit ones. 16-bit lanes halve the words of 32-bit
#: ones (and compare four lanes at a time), and a tight pair on them is 2**-11 to 2**-7 from symmetric at the
#: benchmarked budgets (7e-4 at ε∞ = 1, 6e-3 at 2, 8.5e-3 at 4, ε1 = ε∞/2): the variance bound
#: (:data:`VARIANCE_TOL`), not the symmetry, is what keeps the flip as useful as SUE's.
_ASYMMETRY = {8: 4, 16: 2**11, 32: 2**18}
#: Domains up to this size are checked by enumerating every report (2**k of them) as well.
ENUMERATE_MAX_K = 4


def losue_p2(epsilon_permanent: float, epsilon_report: float) -> float:
    """Arcolezi et al.'s ``p2`` of L-OSUE at ideal OUE: ``(e^(ε∞+ε1) - 1) / (e^(ε∞+ε1) + e^ε∞ - e^ε1 - 1)``.

    >>> round(losue_p2(2.0, 1.0), 6)
    0.803388
    """
    a, b = math.exp(epsilon_permanent), math.exp(epsilon_report)
    return (a * b - 1) / (a * b + a - b - 1)


def _composed(p1, q1, one, zero):
    """``(p*, q*)`` of a bit flip ``P[1 | 1] = one``, ``P[1 | 0] = zero`` after a unary layer ``(p1, q1)``."""
    return p1 * one + (1 - p1) * zero, q1 * one + (1 - q1) * zero


def _ratio(p1, q1, one, zero):
    """The composed pair ratio ``p*(1 - q*) / (q*(1 - p*))`` (floats or Fractions, arrays allowed)."""
    p, q = _composed(p1, q1, one, zero)
    return p * (1 - q) / (q * (1 - p))


def _variance(p, q):
    return q * (1 - q) / (p - q) ** 2


@dataclass(frozen=True)
class BitFlipPlan:
    """Integer plan of the instantaneous bit flip.

    An output bit is 1 iff its lane is below ``t_one`` (input bit 1) or ``t_zero`` (input bit 0).

    Attributes
    ----------
    k : int
        Number of bits.
    lane_bits : int
        Lane width ``b`` (8, 16 or 32).
    t_zero, t_one : int
        Thresholds: ``P[1 | 0] = t_zero / 2**b``, ``P[1 | 1] = t_one / 2**b``.
    sparse : SparseBits or None
        The layout that draws the ``8·n_bytes`` output bits sparsely, each with its input bit as the selector of its
        threshold (:class:`~ldpnum.frequency.unary.SparseBits`), when it reads fewer words than the lanes (``k`` of
        about 64 and more); the same probabilities.
    """

    k: int
    lane_bits: int
    t_zero: int
    t_one: int
    sparse: SparseBits | None = None

    @property
    def n_bytes(self) -> int:
        """Bytes per packed vector, ``ceil(k/8)``."""
        return -(-self.k // 8)

    @property
    def lane_words(self) -> int:
        """Words per record of the lanes: ``lane_bits`` bits for each of the ``8·n_bytes`` bits."""
        return self.n_bytes * self.lane_bits // 8

    @property
    def words_per_record(self) -> int:
        """Words per record: the sparse layout's if there is one, else the lanes'."""
        return self.sparse.words if self.sparse is not None else self.lane_words

    @property
    def one(self) -> Fraction:
        """Exact ``P[output bit 1 | input bit 1]``."""
        return Fraction(self.t_one, 2**self.lane_bits)

    @property
    def zero(self) -> Fraction:
        """Exact ``P[output bit 1 | input bit 0]``."""
        return Fraction(self.t_zero, 2**self.lane_bits)

    def exact_probabilities(self, z: int) -> dict[int, Fraction]:
        """``{report: Fraction}`` over all ``2**k`` outputs (``k ≤ 16``) for the input vector ``z``.

        Bit ``j`` of the integer is bit ``j`` of the vector, as :meth:`UnaryPlan.exact_probabilities` keys reports.
        """
        if self.k > 16:
            raise ValueError(f"exact_probabilities enumerates 2**k reports; k = {self.k} is too large")
        dist = {0: Fraction(1)}
        for j in range(self.k):
            pj = self.one if (z >> j) & 1 else self.zero
            bit = 1 << j
            new = {}
            for y, pr in dist.items():
                new[y] = pr * (1 - pj)
                new[y | bit] = pr * pj
            dist = new
        return dist

    def kernel_thresholds(self) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
        """``(t0_all, t0_low, t1_all, t1_low)`` for the kernel's lane comparisons."""
        return (*lane_thresholds(self.t_zero, self.lane_bits), *lane_thresholds(self.t_one, self.lane_bits))


def _symmetric_one(p1: float, q1: float, e1: float) -> float:
    """``p2`` of the symmetric flip (``P[1|0] = 1 - p2``) whose composed ratio after ``(p1, q1)`` is ``e1``."""
    lo, hi = 0.5, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _ratio(p1, q1, mid, 1 - mid) < e1:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def bit_flip_plan(permanent: UnaryPlan, epsilon_report: float) -> BitFlipPlan:
    """The instantaneous flip after the permanent unary plan ``permanent``, nearly tight at ε1.

    Its composed ratio is at most ``E = exp_lower(ε1)`` and within a relative ``TIGHT_TOL·min(ε1, 1)`` of it (so the
    realized ε1 is within a relative :data:`TIGHT_TOL` of ε1), with a variance within :data:`VARIANCE_TOL` of the
    symmetric flip's.

    For each lane width ``b``, every ``t_zero`` within :data:`_WINDOW` of the symmetric flip's gets the largest
    ``t_one`` the bound allows (a float bisection, then corrected in exact rationals); the first width with an
    admissible pair (tight, asymmetry within :data:`_ASYMMETRY`, variance within :data:`VARIANCE_TOL`) is used, its
    most symmetric admissible pair; 32-bit lanes take their most symmetric tight pair whatever its asymmetry.
    """
    p1, q1 = permanent.p, permanent.q
    e_bound = exp_lower(epsilon_report)
    tol = TIGHT_TOL * min(epsilon_report, 1.0)
    e1 = float(e_bound)
    p1f, q1f = float(p1), float(q1)
    one_sym = _symmetric_one(p1f, q1f, e1)
    var_sym = _variance(*_composed(p1f, q1f, one_sym, 1 - one_sym))
    for b in LANE_BITS:
        scale = 2**b
        centre = round((1 - one_sym) * scale)
        t0 = np.arange(max(1, centre - _WINDOW[b]), min(scale - 2, centre + _WINDOW[b]) + 1, dtype=np.float64)
        zero = t0 / scale
        lo, hi = zero.copy(), np.ones_like(zero)
        for _ in range(80):  # the largest P[1|1] whose composed ratio is e1 (increasing in it above P[1|0])
            mid = 0.5 * (lo + hi)
            below = _ratio(p1f, q1f, mid, zero) < e1
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        t1 = np.minimum(np.floor(lo * scale), scale - 1)
        asym = np.abs(t0 + t1 - scale)
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = 1 - _ratio(p1f, q1f, t1 / scale, zero) / e1
            loss = np.abs(_variance(*_composed(p1f, q1f, t1 / scale, zero)) / var_sym - 1)
        last = b == LANE_BITS[-1]  # the widest lanes take the most symmetric tight pair there is
        ok = (t1 > t0) & (loss <= VARIANCE_TOL) & (gap >= -1e-12) & (gap <= 2 * tol)
        if not last:
            ok &= asym <= _ASYMMETRY[b]
        best = None
        for idx in np.flatnonzero(ok)[np.argsort(asym[ok], kind="stable")][:16]:
            tz, to = int(t0[idx]), int(t1[idx])
            while to > tz and _ratio(p1, q1, Fraction(to, scale), Fraction(tz, scale)) > e_bound:
                to -= 1
            while to + 1 < scale and _ratio(p1, q1, Fraction(to + 1, scale), Fraction(tz, scale)) <= e_bound:
                to += 1
            exact_gap = 1 - _ratio(p1, q1, Fraction(to, scale), Fraction(tz, scale)) / e_bound
            if to > tz and exact_gap <= tol and (last or abs(tz + to - scale) <= _ASYMMETRY[b]):
                best = BitFlipPlan(permanent.k, b, tz, to)
                sparse = sparse_bits(8 * best.n_bytes, b, tz, to)
                if sparse.words < best.lane_words:
                    best = dataclasses.replace(best, sparse=sparse)
                break
        if best is not None:
            return best
    raise ValueError(f"no instantaneous bit flip on 32-bit lanes makes one report {epsilon_report}-LDP (tight) after "
                     f"a permanent OUE with p = {float(p1):.6g}, q = {float(q1):.6g}: epsilon_report is too close to "
                     "epsilon_permanent")


class LOSUE(Longitudinal, BitVectorOracle):
    """Longitudinal unary encoding: OUE memoized at ε∞, then SUE's bit flip at every report (L-OSUE).

    Parameters
    ----------
    epsilon_permanent : float
        ε∞ in (0, 20]: all reports of one person about one category together are ε∞-LDP.
    epsilon_report : float
        ε1 in (0, ε∞): one report is ε1-LDP.
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**16.

    Notes
    -----
    Privatize with each person's key: ``privatize(values, keys=keys, rng=None, round=r)``; the permanent OUE
    report of a category is derived from the key (memoized without stored state), the instantaneous flip drawn
    from ``rng``. Each report is ε1-LDP (the composed plan, tight); all reports about one category are ε∞-LDP
    (OUE's plan at ε∞, tight); a person whose category changes spends ε∞ again for each distinct category.
    Reports are ``k`` bits packed into ``ceil(k/8)`` bytes, aggregated into per-bit counts; the estimator is the
    pure-protocol one with the composed support probabilities (:attr:`support_probabilities`), per round. See
    :mod:`ldpnum.longitudinal.losue` for the integer plans. Per report, the client derives
    ``1 + ceil(k/8)·b∞/8`` keyed words (OUE's plan, ``b∞`` its lane width) and draws the flip's
    :attr:`instantaneous_words` fresh ones (``ceil(k/8)·b/8`` on lanes, fewer with the sparse layout at large ``k``).

    References
    ----------
    H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Improving the Utility of Locally Differentially Private
    Protocols for Longitudinal and Multidimensional Frequency Estimates", Digital Communications and Networks,
    2022.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.LOSUE(epsilon_permanent=2.0, epsilon_report=1.0, k=16)
    >>> keys = ldp.ClientKeys.generate(4, rng=0)
    >>> r = m.privatize(np.array([0, 3, 3, 15]), keys=keys, rng=1, round=1)
    >>> r.codes.shape, r.spec.get("round")
    ((4, 2), 1)
    """

    name = "losue"
    aliases = ("l_osue",)
    MAX_K = 1 << 16

    def __init__(self, epsilon_permanent: float, epsilon_report: float, k: int) -> None:
        eps_perm, eps_rep = check_epsilons(epsilon_permanent, epsilon_report)
        BitVectorOracle.__init__(self, eps_rep, k)
        if self._k > self.MAX_K:
            raise ValueError(f"LOSUE supports k <= {self.MAX_K} (reports are k bits per person); got k={self._k}. "
                             "For large domains use LOLOHA")
        self._epsilon_permanent = eps_perm
        self._perm = OUE(eps_perm, self._k).plan  # OUE's integer plan at ε∞, used as is
        self._plan = bit_flip_plan(self._perm, eps_rep)

    # -- parameters ---------------------------------------------------------------------------------
    def _spec_params(self):
        return {**BitVectorOracle._spec_params(self), "epsilon_permanent": self._epsilon_permanent}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.get("epsilon_permanent"), spec.epsilon, spec.get("k"))

    def _permanent_spec(self) -> Spec:
        return Spec("oue", self._epsilon_permanent, self._k, (("k", self._k), ("packed_bits", self._k)))

    @property
    def permanent_plan(self) -> UnaryPlan:
        """The permanent layer's integer plan (OUE at ε∞)."""
        return self._perm

    @property
    def instantaneous_plan(self) -> BitFlipPlan:
        """The instantaneous layer's integer plan (the bit flip)."""
        return self._plan

    def exact_support_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(p*, q*)`` of one report as Fractions.

        The composed probability that a report sets the person's own bit / any other bit.
        """
        return _composed(self._perm.p, self._perm.q, self._plan.one, self._plan.zero)

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` of one report (the composed plans', exactly rounded to floats)."""
        p, q = self.exact_support_probabilities()
        return float(p), float(q)

    # -- exact plans --------------------------------------------------------------------------------
    def memo_states(self) -> list[int]:
        """The categories ``0..k-1``: what is memoized."""
        return list(range(self._k))

    def permanent_probabilities(self, state: int) -> dict[int, Fraction]:
        """OUE's exact report probabilities for category ``state`` (``k ≤ 16``; reports keyed as integers)."""
        return self._perm.exact_probabilities(state)

    def instantaneous_probabilities(self, permanent: int) -> dict[int, Fraction]:
        """The bit flip's exact output probabilities for the permanent vector ``permanent`` (``k ≤ 16``)."""
        return self._plan.exact_probabilities(permanent)

    def structural_epsilons(self) -> tuple[float, float]:
        """``(ε1, ε∞)`` by the unary structural reduction, exact for every ``k``.

        :func:`~ldpnum.frequency.unary.unary_extreme_ratio` on the composed ``(p*, q*)`` and on OUE's ``(p1, q1)``:
        exact for every ``k``.
        """
        p, q = self.exact_support_probabilities()
        return math.log(unary_extreme_ratio(p, q)), math.log(self._perm.extreme_ratio())

    def realized_epsilons(self) -> tuple[float, float]:
        """``(ε1, ε∞)`` realized by the integer plans.

        Enumerated over all reports of the composed plan when ``k ≤ 4``, by the structural reduction
        (:meth:`structural_epsilons`) otherwise.
        """
        if self._k <= ENUMERATE_MAX_K:
            return super().realized_epsilons()
        return self.structural_epsilons()

    # -- client side --------------------------------------------------------------------------------
    @property
    def permanent_words(self) -> int:
        """Keyed words per record: OUE's plan's."""
        return self._perm.words_per_record

    @property
    def instantaneous_words(self) -> int:
        """Fresh words per record: the bit flip's."""
        return self._plan.words_per_record

    def _memo_values(self, values: np.ndarray, keys: Any) -> tuple[np.ndarray, np.ndarray]:
        return values.astype(np.uint64), values  # unknown (-1) memoizes as 2**64 - 1: its own value

    def _permanent_layer(self, inputs: np.ndarray, memo: np.ndarray, keys: Any, out: np.ndarray) -> None:
        """OUE's unary kernel on the keyed words, derived inside the kernel (the words of :meth:`_run_permanent`)."""
        if inputs.shape[0]:
            plan = self._perm
            t_all, t_low = plan.kernel_thresholds()
            launch(client_longitudinal.keyed_unary_kernel, keys.words, self.tweak, inputs, plan.k, plan.lane_bits,
                   t_all, t_low, plan.t_true, out)

    def _run_instantaneous(self, permanent: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        plan = self._plan
        tail = self._k & 7
        tail_mask = np.uint8((1 << tail) - 1 if tail else 0xFF)
        sp = plan.sparse
        if sp is not None:
            high0, high1, lane0, lane1 = sp.thresholds()
            launch(client_longitudinal.bit_flip_sparse_kernel, permanent, sp.levels, np.uint64(high0),
                   np.uint64(high1), sp.lane_bits, np.uint64(lane0), np.uint64(lane1), sp.pool_words, tail_mask,
                   words, out)
        else:
            launch(client_longitudinal.bit_flip_kernel, permanent, plan.lane_bits, *plan.kernel_thresholds(),
                   tail_mask, words, out)
