"""Post-processing of estimated frequencies into consistent ones (costs no privacy).

References
----------
T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Škorić, N. Li, "Locally Differentially Private Frequency
Estimation with Consistency", NDSS 2020 (consistency: project onto the simplex; Norm-Sub).
"""

import numpy as np

from .._validation import check_choice
from ..estimation.distribution import norm_sub

__all__ = ["POSTPROCESS", "postprocess_frequencies", "project_simplex"]

POSTPROCESS = ("none", "norm-sub", "simplex", "clip")


def project_simplex(v):
    """Euclidean projection of ``v`` onto the probability simplex (sort-based, O(k log k))."""
    v = np.asarray(v, dtype=np.float64)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.nonzero(u * np.arange(1, v.size + 1) > css)[0][-1]
    return np.maximum(v - css[rho] / (rho + 1), 0.0)


def postprocess_frequencies(freq, method):
    """Apply a post-processing method (see :data:`POSTPROCESS`) to a vector of estimated frequencies."""
    check_choice(method, "postprocess", POSTPROCESS)
    freq = np.asarray(freq, dtype=np.float64)
    if method == "none":
        return freq.copy()
    if method == "clip":
        return np.clip(freq, 0.0, 1.0)
    if method == "simplex":
        return project_simplex(freq)
    return norm_sub(freq)
