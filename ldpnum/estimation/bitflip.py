r"""dBitFlip's histogram: unbiased bucket frequencies from sampled-bucket bits, their variance, the distribution.

dBitFlip (Ding, Kulkarni and Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017) splits the value
range into ``b`` buckets; each of ``n`` people samples ``d`` of them uniformly without replacement and reports one
bit per sampled bucket, 1 with probability ``p`` when the bucket holds their value and ``q`` otherwise. With
``S_v`` the reports that sampled bucket ``v`` and ``O_v`` those of them whose bit is 1,

.. math::

    \hat h_v = \frac{b}{n d} \cdot \frac{O_v - q S_v}{p - q}, \qquad
    \operatorname{Var}[\hat h_v] = \frac{1}{n} \left[\frac{b}{d}\left(\frac{p q}{(p - q)^2} + h_v\right)
    - h_v\right],

unbiased for the fraction ``h_v`` of values in bucket ``v`` (the variance is estimated at ``h_v`` clipped to
[0, 1]). The mechanism (:class:`ldpnum.DBitFlip`, one-shot or memoized) takes ``p`` and ``q`` from its integer
plans, so the estimate is unbiased for the mechanism as implemented.
"""

from typing import Any

import numpy as np

from .._results import DistributionEstimate, FrequencyEstimate
from .._typing import ArrayLike, FloatArray
from ..spec import Spec
from .postprocess import norm_sub, project_simplex

__all__ = ["bit_flip_histogram", "estimate_bit_flip_histogram", "bucket_distribution"]


def bit_flip_histogram(sampled: ArrayLike, ones: ArrayLike, n: int, d: int, p: float,
                       q: float) -> tuple[FloatArray, FloatArray]:
    """``(frequencies, standard errors)`` of every bucket from its counts.

    Parameters
    ----------
    sampled, ones : array_like
        Per bucket: the reports that sampled it (``S_v``), and those of them with bit 1 (``O_v``).
    n : int
        Number of reports (> 0).
    d : int
        Buckets sampled per report.
    p, q : float
        Probability of bit 1 for a sampled bucket holding the value / another sampled bucket.

    Returns
    -------
    frequencies, standard_errors : ndarray
        The unbiased frequencies (may be negative and need not sum to 1) and their standard errors.

    Examples
    --------
    >>> f, se = bit_flip_histogram([50, 50], [40, 10], n=100, d=1, p=0.8, q=0.2)
    >>> [round(float(v), 6) for v in f]
    [1.0, 0.0]
    """
    s = np.asarray(sampled, dtype=np.float64)
    b = s.shape[0]
    freq = b / (n * d) * (np.asarray(ones, dtype=np.float64) - q * s) / (p - q)
    h = np.clip(freq, 0.0, 1.0)
    var = ((b / d) * (p * q / (p - q) ** 2 + h) - h) / n
    return freq, np.sqrt(np.maximum(var, 0.0))


def estimate_bit_flip_histogram(counts: ArrayLike, n: int, d: int, p: float, q: float, *, epsilon: float,
                                spec: Spec) -> FrequencyEstimate:
    """:class:`~ldpnum.FrequencyEstimate` of the buckets from a dBitFlip aggregate's counts.

    ``counts`` holds ``2·b`` counts: the reports that sampled each bucket, then those of them with bit 1
    (:func:`bit_flip_histogram`); ``counts`` of the estimate are ``frequencies·n``.
    """
    c = np.asarray(counts)
    b = c.shape[0] // 2
    freq, se = bit_flip_histogram(c[:b], c[b:], n, d, p, q)
    return FrequencyEstimate(counts=freq * n, frequencies=freq, standard_errors=se, n_reports=n, epsilon=epsilon,
                             spec=spec)


def bucket_distribution(est: FrequencyEstimate, bucket_edges: Any, method: str | None = None, *,
                        epsilon: float) -> DistributionEstimate:
    """The bucket frequencies ``est`` projected onto the simplex, as a distribution over ``bucket_edges``.

    ``method="simplex"``: the Euclidean projection onto the simplex; anything else (the default, ``"norm-sub"``,
    and the window mechanisms' ``"em"``, ``"ems"``, ``"ems-cv"``, which the front ends pass by default and which
    have no meaning for bits): Norm-Sub (shift, clip at 0, sum to 1).
    """
    freq = np.asarray(est.frequencies, dtype=np.float64)
    chosen = "simplex" if method == "simplex" else "norm-sub"
    probs = project_simplex(freq) if chosen == "simplex" else norm_sub(freq)
    return DistributionEstimate(bucket_edges, probs, spec=est.spec, epsilon=epsilon, n_reports=est.n_reports,
                                method=chosen)
