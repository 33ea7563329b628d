"""Post-processing of estimated frequencies and distributions into consistent ones (costs no privacy).

References
----------
T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Škorić, N. Li, "Locally Differentially Private Frequency
Estimation with Consistency", NDSS 2020 (consistency: project onto the simplex; Norm-Sub).
"""

import numpy as np

from .._validation import check_choice

__all__ = ["POSTPROCESS", "postprocess_frequencies", "project_simplex", "norm_sub"]

POSTPROCESS = ("none", "norm-sub", "simplex", "clip")


def norm_sub(x, tol=1e-12, max_iter=10_000):
    """Norm-Sub: make an estimate non-negative and sum to 1 by zeroing negatives and shifting the rest.

    Repeats ``x ← max(x - δ, 0)`` with ``δ`` chosen so the positive entries sum to 1, until no entry changes
    sign (Wang et al., NDSS 2020). When the positive part sums
    to at least 1 (the shifts only remove mass) it equals the Euclidean projection onto the probability simplex;
    when mass must be added, entries zeroed in the first step stay zero and the two differ.
    """
    x = np.asarray(x, dtype=np.float64).copy()
    for _ in range(max_iter):
        pos = x > 0
        delta = (x[pos].sum() - 1.0) / max(int(pos.sum()), 1)
        y = np.where(pos, x - delta, 0.0)
        if np.all((y > 0) == pos) or np.all(y <= 0):
            x = np.maximum(y, 0.0)
            break
        x = y
    x = np.maximum(x, 0.0)
    s = x.sum()
    return x / s if s > 0 else np.full(x.size, 1.0 / x.size)


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
