"""Frequency estimation for pure frequency oracles: the unbiased estimator and its variance.

A *pure* frequency oracle (Wang, Blocki, Li and Jha, "Locally Differentially Private Protocols for Frequency
Estimation", USENIX Security 2017) has a support function: each report supports some categories; a report
of a person with value ``v`` supports ``v`` with probability ``p*`` and any other given category with
probability ``q*``. With ``I_v`` the number of the ``n`` reports that support ``v``,

    f̂_v = (I_v / n - q*) / (p* - q*)                                  (unbiased frequency of v)
    n Var[f̂_v] = [q*(1 - q*) + f_v (p* - q*)(1 - p* - q*)] / (p* - q*)²

The mechanisms compute ``I_v`` from their aggregate (counts of codes, hashed or Hadamard-decoded support
counts) and take ``p*`` and ``q*`` from their integer plan, so the estimate is unbiased for the mechanism
as implemented. Every frequency oracle, and every level of a hierarchical histogram, estimates through
this module.
"""

from typing import Any

import numpy as np

from ..spec import Spec
from .._results import FrequencyEstimate
from .._typing import ArrayLike, FloatArray
from .._validation import check_choice
from .postprocess import POSTPROCESS, postprocess_frequencies

__all__ = ["unbiased_frequencies", "support_variance", "estimate_frequencies"]


def unbiased_frequencies(support: ArrayLike, n: float, p: float, q: float) -> FloatArray:
    """``(I_v / n - q*) / (p* - q*)`` for every category: the unbiased frequency estimates.

    Parameters
    ----------
    support : array_like of float
        Support counts ``I_v``.
    n : int
        Number of reports (> 0).
    p, q : float
        Probability that a report supports the person's own / another given category.
    """
    return (np.asarray(support, dtype=np.float64) - n * q) / (p - q) / n


def support_variance(p: float, q: float, frequency: ArrayLike) -> Any:
    """Per-report variance of a frequency estimate at true frequency ``frequency`` (array or scalar).

    ``[q(1 - q) + f (p - q)(1 - p - q)] / (p - q)²``; divide by ``n`` for ``n`` reports.
    """
    f = np.asarray(frequency, dtype=np.float64)
    return (q * (1 - q) + f * (p - q) * (1 - p - q)) / (p - q) ** 2


def estimate_frequencies(support: ArrayLike, n: int, p: float, q: float, *, postprocess: str = "none", epsilon: float,
                         spec: Spec) -> FrequencyEstimate:
    """:class:`~ldpnum.FrequencyEstimate` from support counts.

    Unbiased frequencies, their standard errors, and the post-processed frequencies.

    Parameters
    ----------
    support : array_like of float, shape (k,)
        Support counts ``I_v`` of the ``n`` reports.
    n : int
        Number of reports.
    p, q : float
        The oracle's support probabilities ``p*`` and ``q*``.
    postprocess : {"none", "norm-sub", "simplex", "clip"}, optional
        See :func:`ldpnum.estimation.postprocess.postprocess_frequencies`. The standard errors always
        describe the unbiased estimate (evaluated at its value clipped to [0, 1]).
    epsilon : float
        The mechanism's ε (recorded on the result).
    spec : Spec
        The mechanism's spec (recorded on the result).

    Raises
    ------
    ValueError
        For no reports or an unknown ``postprocess``.
    """
    if n == 0:
        raise ValueError("estimate_frequencies: no reports")
    check_choice(postprocess, "postprocess", POSTPROCESS)
    freq = unbiased_frequencies(support, n, p, q)
    se = np.sqrt(support_variance(p, q, np.clip(freq, 0.0, 1.0)) / n)
    freq_pp = postprocess_frequencies(freq, postprocess)
    return FrequencyEstimate(counts=freq_pp * n, frequencies=freq_pp, standard_errors=se, n_reports=n,
                             epsilon=epsilon, spec=spec, postprocess=postprocess)
