"""L-GRR: generalized randomized response, memoized, then randomized again at every report (Arcolezi et al.).

A person with category ``v`` holds a *permanent* GRR response ``z`` of ``v`` at ``epsilon_permanent`` (ε∞), derived
from their key (design rule R9: the same ``z`` for the same key and ``v``, however often they report), and at every
report sends an *instantaneous* GRR response ``y`` of ``z`` at the ε2 that makes one report ε1-LDP:

    P[y = v | v]  = p1·p2 + (1 - p1)·q2,           P[y = v | v'] = q1·p2 + (1 - q1)·q2,

with ``(p1, q1)`` the permanent plan's probabilities and ``(p2, q2 = (1 - p2)/(k - 1))`` the instantaneous one's
(the second counts every path to ``v``: through ``z = v`` and through the ``k - 2`` other values). Setting their
ratio to e^ε1 and solving (linear in ``p2``) gives the exact ``p2``. For ``k = 2`` it is Arcolezi et al.'s

    p2 = (e^(ε∞+ε1) - 1) / (-k·e^ε1 + (k - 1)·e^ε∞ + e^ε1 + e^(ε∞+ε1) - 1);

for ``k ≥ 3`` their closed form solves ``p1·p2 + q1·q2 = e^ε1·(p1·q2 + q1·p2)``, which leaves out the paths through
the other values: it is private but not tight (k = 5, ε∞ = 4, ε1 = 0.4: ratio 1.467 against e^0.4 = 1.492), so
ldpnum's ``p2`` is larger and each report more accurate at the same ε1 (``tests/longitudinal/test_grr.py``).
ldpnum solves with the integer plan's realized ``p1``, a relative 2**-40 below ε1 (:data:`SOLVE_MARGIN`), and builds
the instantaneous plan conservatively (:func:`~ldpnum.plans.grr_keep_cells`), so the realized ε1 never exceeds the
stated one. Both layers are ldpnum's one-word GRR plan and kernel.

References
----------
H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Improving the Utility of Locally Differentially Private
Protocols for Longitudinal and Multidimensional Frequency Estimates", Digital Communications and Networks, 2022
(L-GRR, L-OSUE). Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal
Response", CCS 2014 (permanent and instantaneous randomized response).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._kernels import client_grr
from .._kernels._jit import launch
from ..frequency import FrequencyOracle
from ..plans import TWO64, GRRPlan, grr_keep_cells
from ..spec import Spec
from .memo import Longitudinal, check_epsilons

__all__ = ["LGRR", "instantaneous_grr_epsilon"]

#: Largest ε of an instantaneous layer (the plans' range).
MAX_LAYER_EPSILON = 20.0
#: Relative margin below ε1 at which the instantaneous layer's ε2 is solved: solved in floating point, the root
#: can put the composed ratio a few 1e-16 above the rigorous lower bound of e^ε1 that the exact checks hold plans to
#: (measured: 5 of 7 L-GRR settings, e.g. k = 3, ε∞ = 2, ε1 = 1, +3.8e-16); aiming a relative 2**-40 lower keeps
#: every realized ε1 at or below the stated one, and tight to about 1e-12.
SOLVE_MARGIN = 2.0**-40


def instantaneous_grr_epsilon(p1: float, k: int, epsilon_report: float) -> float:
    """ε2 of the instantaneous GRR over ``k`` outputs that makes the composition exactly ε1-LDP.

    The composition is GRR(ε2) after a permanent GRR keeping with probability ``p1``; ε2 is the root of ``P[y = v |
    v] = e^ε1 · P[y = v | v']`` (linear in ``p2``).

    >>> round(instantaneous_grr_epsilon(math.e**4 / (math.e**4 + 1), 2, 1.0), 6)   # k = 2: Warner after Warner
    1.044308
    """
    e1 = math.exp(epsilon_report * (1 - SOLVE_MARGIN))
    q1 = (1 - p1) / (k - 1)
    a = 1.0 / (k - 1)
    den = p1 - (1 - p1) * a - e1 * q1 + e1 * (1 - q1) * a
    p2 = a * (e1 * (1 - q1) - (1 - p1)) / den
    if not 1.0 / k < p2 < 1:
        raise ValueError(f"no instantaneous layer makes one report {epsilon_report}-LDP after a permanent layer "
                         f"keeping with probability {p1}")
    return math.log(p2 * (k - 1) / (1 - p2))


class LGRR(Longitudinal, FrequencyOracle):
    """Longitudinal generalized randomized response over ``k`` categories (L-GRR).

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
    Privatize with each person's key: ``privatize(values, keys=keys, rng=None, round=r)``; the permanent GRR
    response of a category is derived from the key (memoized without stored state), the instantaneous one drawn
    from ``rng``. Each report is ε1-LDP; all reports about one category are ε∞-LDP; a person whose category
    changes spends ε∞ again for each distinct category. Estimators are post-processing: the pure-protocol
    estimator with the composed support probabilities (:attr:`support_probabilities`), per round.

    References
    ----------
    H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Improving the Utility of Locally Differentially Private
    Protocols for Longitudinal and Multidimensional Frequency Estimates", Digital Communications and Networks,
    2022.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=1.0, k=4)
    >>> keys = ldp.ClientKeys.generate(5, rng=0)
    >>> day1 = m.privatize(np.array([0, 1, 2, 3, 3]), keys=keys, rng=1, round=1)
    >>> day1.spec.get("round"), m.epsilon, m.epsilon_permanent
    (1, 1.0, 2.0)
    """

    name = "lgrr"
    aliases = ("l_grr",)
    MAX_K = 1 << 16

    def __init__(self, epsilon_permanent: float, epsilon_report: float, k: int) -> None:
        eps_perm, eps_rep = check_epsilons(epsilon_permanent, epsilon_report)
        FrequencyOracle.__init__(self, eps_rep, k)
        if self._k > self.MAX_K:
            raise ValueError(f"LGRR supports k <= {self.MAX_K}; got k={self._k}. For large domains use LOLOHA or "
                             "LOSUE")
        self._epsilon_permanent = eps_perm
        self._perm = GRRPlan(self._k, *grr_keep_cells(eps_perm, self._k))
        p1 = self._perm.keep_count() / TWO64
        eps2 = instantaneous_grr_epsilon(p1, self._k, eps_rep)
        if eps2 > MAX_LAYER_EPSILON:
            raise ValueError(f"epsilon_report={eps_rep!r} is too close to epsilon_permanent={eps_perm!r} for k="
                             f"{self._k}: the instantaneous layer would need epsilon {eps2:.3g} > "
                             f"{MAX_LAYER_EPSILON:g}")
        self._epsilon_instantaneous = eps2
        self._plan = GRRPlan(self._k, *grr_keep_cells(eps2, self._k))

    # -- parameters ---------------------------------------------------------------------------------
    def _spec_params(self):
        return {"k": self._k, "epsilon_permanent": self._epsilon_permanent}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.get("epsilon_permanent"), spec.epsilon, spec.get("k"))

    def _permanent_spec(self) -> Spec:
        return Spec("grr", self._epsilon_permanent, self._k, (("k", self._k),))

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: the ``k`` categories."""
        return self._k

    @property
    def permanent_plan(self) -> GRRPlan:
        """The permanent layer's integer plan (GRR at ε∞)."""
        return self._perm

    @property
    def epsilon_instantaneous(self) -> float:
        """ε2 of the instantaneous GRR layer (nominal; the plan realizes at most this)."""
        return self._epsilon_instantaneous

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` of one report: ``P[y = v | v]`` and ``P[y = u | v]`` (u ≠ v), from both plans."""
        p1 = self._perm.keep_count() / TWO64
        p2 = self._plan.keep_count() / TWO64
        q2 = (1.0 - p2) / (self._k - 1)
        p = p1 * p2 + (1.0 - p1) * q2
        return p, (1.0 - p) / (self._k - 1)

    # -- exact plans --------------------------------------------------------------------------------
    def memo_states(self) -> list[int]:
        """The categories ``0..k-1``: what is memoized."""
        return list(range(self._k))

    def permanent_probabilities(self, state: int) -> dict[int, Fraction]:
        """The permanent GRR plan's exact output probabilities for category ``state``."""
        return self._perm.exact_probabilities(state)

    def instantaneous_probabilities(self, permanent: int) -> dict[int, Fraction]:
        """The instantaneous GRR plan's exact output probabilities given the permanent output."""
        return self._plan.exact_probabilities(permanent)

    # -- client side --------------------------------------------------------------------------------
    @property
    def permanent_words(self) -> int:
        """One keyed word per record (GRR's plan)."""
        return 1

    @property
    def instantaneous_words(self) -> int:
        """One fresh word per record (GRR's plan)."""
        return 1

    def _memo_values(self, values: np.ndarray, keys: Any) -> tuple[np.ndarray, np.ndarray]:
        return values.astype(np.uint64), values  # unknown (-1) memoizes as 2**64 - 1: its own value

    def _allocate_permanent(self, n: int) -> np.ndarray:
        return np.empty(n, dtype=np.int64)

    def _run_permanent(self, inputs: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        launch(client_grr.grr_kernel, inputs, self._k, self._perm.a_keep, self._perm.shift, words, out)

    def _run_instantaneous(self, permanent: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        launch(client_grr.grr_kernel, permanent, self._k, self._plan.a_keep, self._plan.shift, words, out)
