"""Generalized randomized response (GRR, also called direct encoding, DE).

A person with category ``v`` reports ``v`` with probability ``p = e^ε / (e^ε + k - 1)`` and each other
category with probability ``q = 1 / (e^ε + k - 1)``. With ``k = 2`` it is Warner's randomized response
(:class:`ldpnum.RandomizedResponse`): the two have the same integer plan.

Finite-output plan (DESIGN.md R1, TESTING.md D2): keep with probability ``t_keep / 2**53``, else a uniform
other category via a 48-bit uniform choice among ``k - 1``; ``t_keep`` is the largest integer with
``t_keep · 2**48 ≤ E (2**53 - t_keep) · c_min``, ``c_min`` the smallest uniform count, so every ratio is at
most E < e^ε (and within 1e-6 of it). The lie is drawn among the ``k - 1`` *other* categories, never among
all ``k`` (drawing it among all ``k`` is the bug of OpenDP issue #480: it breaks the stated ε).

References
----------
``../shared/seeds/002_bf216fff5ae8aeb1.txt`` (generalized random response / direct encoding, variance table),
``../shared/seeds/001_fd29501611b153a0.txt`` (Warner's randomized response).
"""

import math
from fractions import Fraction

from .._kernels import frequency as kernels
from .._kernels._jit import launch
from ..mechanisms._plan import TWO48, TWO53, exp_lower, uniform_count, uniform_extremes
from ._base import FrequencyOracle

__all__ = ["GRR", "grr_threshold"]


def grr_threshold(epsilon, k):
    """Largest ``t_keep`` over 2**53 keeping every GRR likelihood ratio ≤ E < e^ε."""
    e = exp_lower(epsilon)
    c_min = uniform_extremes(k - 1)[0]
    return math.floor(e * c_min * TWO53 / (TWO48 + e * c_min))


class GRR(FrequencyOracle):
    """Generalized randomized response over ``k`` categories.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**16.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    Reports are one code each (smallest unsigned dtype). Per-report variance of a frequency estimate at
    true frequency 0: ``(k - 2 + e^ε)/(e^ε - 1)²`` (the seed's table). GRR is the best choice when
    ``k < 3 e^ε + 2`` (:func:`ldpnum.frequency.recommend`).

    References
    ----------
    ``../shared/seeds/002_bf216fff5ae8aeb1.txt``.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> grr = ldp.GRR(epsilon=1.0, k=3)
    >>> r = grr.privatize(np.array([0, 1, 2, 2]), rng=0)
    >>> r.codes.dtype, len(r)
    (dtype('uint8'), 4)
    """

    name = "grr"
    MAX_K = 1 << 16

    def __init__(self, epsilon, k):
        super().__init__(epsilon, k)
        if self._k > self.MAX_K:
            # The kernel's exact 48-bit uniform choice covers up to 2**16 cells; beyond that GRR's variance,
            # (k - 2 + e^ε)/(e^ε - 1)², makes it the wrong oracle anyway.
            raise ValueError(f"GRR supports k <= {self.MAX_K}; got k={self._k}. For large domains use a unary "
                             "or local-hashing oracle (see ldpnum.frequency.recommend)")
        self._t_keep = grr_threshold(self._epsilon, self._k)
        self._plan = _GRRPlan(self._k, self._t_keep)

    @property
    def n_cells(self):
        return self._k

    @property
    def support_probabilities(self):
        p = self._t_keep / TWO53
        return p, (1.0 - p) / (self._k - 1)

    def _run_kernel(self, values, words, out):
        launch(kernels.grr_kernel, values, self._k, self._t_keep, words, out)


class _GRRPlan:
    """Integer plan of GRR: ``t_keep`` over 2**53 and the 48-bit uniform lie among ``k - 1``."""

    words_per_record = 2

    def __init__(self, k, t_keep):
        self.k = k
        self.t_keep = t_keep

    def __eq__(self, other):
        return isinstance(other, _GRRPlan) and (self.k, self.t_keep) == (other.k, other.t_keep)

    def __repr__(self):
        return f"GRRPlan(k={self.k}, t_keep={self.t_keep})"

    def exact_probabilities(self, v):
        """``{code: Fraction}`` for true category ``v`` (``-1``: an unknown value, reported uniformly)."""
        k = self.k
        if v < 0:
            return {j: Fraction(uniform_count(j, k), TWO48) for j in range(k)}
        keep = Fraction(self.t_keep, TWO53)
        out = {v: keep}
        for j in range(k):
            if j != v:
                out[j] = (1 - keep) * Fraction(uniform_count(j if j < v else j - 1, k - 1), TWO48)
        return out

    def extreme_ratio(self):
        """Exact largest ratio over all pairs of true categories and outputs (structural reduction)."""
        keep = Fraction(self.t_keep, TWO53)
        lo, hi = uniform_extremes(self.k - 1)
        values = [keep, (1 - keep) * Fraction(lo, TWO48), (1 - keep) * Fraction(hi, TWO48)]
        return max(values) / min(values)
