r"""Frequencies of set-valued data from sampling rates and set sizes (post-processing; costs no privacy).

SVIM and SVSM (:mod:`ldpnum.heavy.setvalued`) measure, per candidate, the mean probability ``π`` that
padding-and-sampling to ``ℓ`` samples it. Which frequency that is depends on how the candidate's holders
spread over local-set sizes, which the collected size distribution ``θ`` does not say: here are the least
and the largest frequencies it allows (:func:`frequency_bounds`) and the intervals of the results
(:class:`ldpnum.heavy.SetItemsEstimate`, :class:`ldpnum.ItemsetsEstimate`) built from them.

References
----------
T. Wang, N. Li, S. Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018 (SVIM, SVSM
and padding-and-sampling).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._checks import normal_quantile
from .._results import ConfidenceInterval

__all__ = ["bounded_interval", "frequency_bounds", "interval_from_provenance"]


def frequency_bounds(pi: object, theta: object, ell: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""The least and the largest share of people holding an item sampled with mean probability ``π``.

    Padding-and-sampling to ``ℓ`` samples an item from a local set of size ``m`` with probability
    ``1/max(m, ℓ)``. Let ``h_m`` be the share of people with a local set of size ``m`` that hold the item;
    then

    .. math:: \pi = \sum_{m \ge 1} \frac{h_m}{\max(m, \ell)}, \qquad f = \sum_{m \ge 1} h_m
              = \ell\pi + \sum_{m > \ell} h_m \Bigl(1 - \frac{\ell}{m}\Bigr), \qquad 0 \le h_m \le \theta_m .

    The sizes ``θ`` alone do not say how an item's holders spread over the sizes (that is the assumption of
    :func:`ldpnum.heavy.setvalued.size_scale`), so ``f`` is only known to lie between the two ends of this linear programme: the
    least when the holders fill the smallest sets first (``f = ℓπ`` while those hold enough people), the
    largest when they fill the largest sets first. Both ends are piecewise linear and increasing in ``π``;
    ``π`` above what the sizes can produce (``Σ θ_m / max(m, ℓ)``) gives ``Σ_{m≥1} θ_m`` for both.

    Parameters
    ----------
    pi : array_like of float
        Mean sampling probabilities (values ``≤ 0`` give 0).
    theta : array_like of float
        The size distribution, index = size (negative entries count as 0).
    ell : int
        The padding length ``ℓ ≥ 1``.

    Returns
    -------
    (low, high) : tuple of ndarray
        The least and largest frequencies, shaped like ``pi``.

    Examples
    --------
    >>> low, high = frequency_bounds([0.55], [0.0, 0.95, 0.05], 1)  # 5% of the people hold 2 candidates
    >>> round(float(low[0]), 3), round(float(high[0]), 3)
    (0.55, 0.575)
    """
    p = np.asarray(pi, dtype=np.float64)
    t = np.clip(np.asarray(theta, dtype=np.float64), 0.0, None)[1:]
    weight = t / np.maximum(np.arange(1, t.size + 1, dtype=np.float64), ell)

    def end(order):
        xs = np.concatenate([[0.0], np.cumsum(weight[order])])
        ys = np.concatenate([[0.0], np.cumsum(t[order])])
        return np.interp(p, xs, ys)

    ascending = np.arange(t.size)
    return end(ascending), end(ascending[::-1])


def bounded_interval(pi: ArrayLike, pi_se: ArrayLike, theta: object, ell: int,
                     level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``[low(π̂ - zσ̂), high(π̂ + zσ̂)]``: every frequency the sizes allow for a sampling rate in its interval."""
    z = normal_quantile(level)
    pi, pi_se = np.asarray(pi, dtype=np.float64), np.asarray(pi_se, dtype=np.float64)
    low = frequency_bounds(pi - z * pi_se, theta, ell)[0]
    high = frequency_bounds(pi + z * pi_se, theta, ell)[1]
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def interval_from_provenance(prov: Any, level: float, frequencies: NDArray[np.float64],
                             standard_errors: NDArray[np.float64]) -> ConfidenceInterval:
    """The interval of a set-valued result from the sampling rates its provenance records; ``f̂ ± zσ̂`` without them.

    One size distribution per entry: the items' or the itemsets'.
    """
    pis = prov.get("sampling_probabilities")
    if pis is None or len(pis) != len(frequencies):
        z = normal_quantile(level)
        return ConfidenceInterval(frequencies - z * standard_errors, frequencies + z * standard_errors)
    pis, ses = np.array(pis, dtype=np.float64), np.array(prov["sampling_standard_errors"], dtype=np.float64)
    which = np.array(prov.get("size_phase", ["items"] * len(pis)))
    low, high = np.zeros(len(pis)), np.zeros(len(pis))
    for phase, theta, ell in (("items", prov.get("size_bounds_distribution", prov["size_distribution"]),
                               prov["ell"]),
                              ("itemsets", prov.get("itemset_size_bounds_distribution",
                                                    prov.get("itemset_size_distribution")), prov.get("itemset_ell"))):
        rows = which == phase
        if rows.any():
            low[rows], high[rows] = bounded_interval(pis[rows], ses[rows], theta, ell, level)
    return ConfidenceInterval(np.minimum(low, frequencies), np.maximum(high, frequencies))
