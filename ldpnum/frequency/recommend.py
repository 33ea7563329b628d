"""Which frequency oracle to use: Wang et al.'s choice rule with predicted variances."""

import math
from typing import NamedTuple

from .._validation import check_epsilon, check_k
from .grr import GRR
from .hashing import OLH
from .unary import OUE

_BY_NAME = {"GRR": GRR, "OLH": OLH, "OUE": OUE}

__all__ = ["recommend", "Recommendation"]


class Recommendation(NamedTuple):
    """The recommended oracle (a class), its name and its predicted per-report variance at frequency 0."""

    mechanism: type
    name: str
    variance: float


def recommend(k: int, epsilon: float, *, communication: str | None = None) -> Recommendation:
    """Choose a frequency oracle for ``k`` categories at ``epsilon`` by Wang et al.'s rule.

    Direct encoding (GRR) when ``k < 3 e^ε + 2``; otherwise OUE, or OLH when communication matters
    (``communication="low"``: one small integer and a hash seed per report instead of ``k`` bits). OUE and
    OLH have the same variance ``4 e^ε / (e^ε - 1)²``.

    The recommended oracle is one that can be built with ``(k, epsilon)``: when the rule's choice cannot
    (GRR beyond its largest ``k``, 65536, which the rule picks at large ε; OUE's integer thresholds at
    ε below about 1e-15), the next one in the order GRR, OUE, OLH that can is recommended (the variance is
    its own); when none can, ValueError says why. Variances use ``expm1``, exact down to the smallest ε the
    oracles take.

    Parameters
    ----------
    k : int
    epsilon : float
    communication : {None, "low"}, optional

    Returns
    -------
    Recommendation
        ``(mechanism, name, variance)``; ``variance / n`` is the variance of an estimated frequency.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
    Estimation", USENIX Security 2017 (the comparison table and the choice rule).

    Examples
    --------
    >>> from ldpnum.frequency import recommend
    >>> recommend(4, 1.0).name
    'GRR'
    >>> recommend(1024, 1.0, communication="low").name
    'OLH'
    >>> recommend(100_000, 12.0).name          # the rule says GRR, which stops at k = 65536
    'OUE'
    """
    k = check_k(k)
    eps = check_epsilon(epsilon)
    if communication not in (None, "low"):
        raise ValueError(f"communication must be None or 'low'; got {communication!r}")
    em1 = math.expm1(eps)
    ee = em1 + 1.0
    ue = "OLH" if communication == "low" else "OUE"
    order = ["GRR", ue, "OUE" if ue == "OLH" else "OLH"] if k < 3 * ee + 2 else [ue, "OUE" if ue == "OLH" else "OLH"]
    reasons = []
    for name in order:
        mech = _BY_NAME[name]
        try:
            mech(k=k, epsilon=eps)  # a few integer thresholds: microseconds, no table of k cells
        except ValueError as exc:
            reasons.append(f"{name}: {exc}")
            continue
        variance = (k - 2 + ee) / em1**2 if name == "GRR" else 4 * ee / em1**2
        if not math.isfinite(variance):  # pragma: no cover - the oracles refuse such ε first
            reasons.append(f"{name}: its variance at epsilon={eps!r} overflows")
            continue
        return Recommendation(mech, name, variance)
    raise ValueError(f"no frequency oracle can be built for k={k} at epsilon={eps!r}: " + "; ".join(reasons))
