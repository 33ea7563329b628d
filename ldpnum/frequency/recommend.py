"""Which frequency oracle to use: Wang et al.'s choice rule with predicted variances."""

import math
from typing import NamedTuple

from .._validation import check_epsilon, check_k
from .grr import GRR
from .hashing import OLH
from .unary import OUE

_BY_NAME = {"OLH": OLH, "OUE": OUE}

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
    """
    k = check_k(k)
    eps = check_epsilon(epsilon)
    if communication not in (None, "low"):
        raise ValueError(f"communication must be None or 'low'; got {communication!r}")
    ee = math.exp(eps)
    if k < 3 * ee + 2:
        return Recommendation(GRR, "GRR", (k - 2 + ee) / (ee - 1) ** 2)
    name = "OLH" if communication == "low" else "OUE"
    return Recommendation(_BY_NAME[name], name, 4 * ee / (ee - 1) ** 2)
