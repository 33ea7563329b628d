"""Generalized randomized response (GRR, also called direct encoding, DE).

A person with category ``v`` reports ``v`` with probability ``p = e^ε / (e^ε + k - 1)`` and each other
category with probability ``q = 1 / (e^ε + k - 1)``. With ``k = 2`` it is Warner's randomized response
(:class:`ldpnum.RandomizedResponse`): the two have the same integer plan.

Finite-output plan (DESIGN.md R1, TESTING.md D2), one random word per person. The word picks one of
``G = a_keep + (k - 1)·2**b`` cells, ``c = floor(word · G / 2**64)`` (the high word of a 64×64-bit product):
the first ``a_keep`` cells keep ``v``, and each of the ``k - 1`` *other* categories owns a block of
``2**b`` cells, ``b`` as large as keeps ``G < 2**63`` (``b = 63 - bitlength(ceil(e^ε) + k - 1)``: 58 at
ε = 1 and k = 16, 34 at ε = 20 and k = 2**16). A run of cells ``[s, e)`` gets
``ceil(e·2**64/G) - ceil(s·2**64/G)`` of the 2**64 words, within one word of ``(e - s)·2**64/G``, so
``P[keep]/P[lie j] = a_keep/2**b`` up to a relative ``(e^ε + k)/2**64``. ``a_keep`` is the largest integer
(below ``E·2**b``) for which the exact count ratio is at most E < e^ε (:func:`grr_keep_cells`): the realized
ε never exceeds the stated one and is within about ``2**(1-b)`` of it. The lie
is drawn among the ``k - 1`` *other* categories, never among all ``k`` (drawing it among all ``k`` is the
bug of OpenDP issue #480: it breaks the stated ε). An unknown value (``unknown="uniform"``) is a uniform
cell of ``k`` from the same word.

References
----------
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (generalized random response / direct encoding, variance table). S. L. Warner,
"Randomized Response: A Survey Technique for Eliminating Evasive Answer Bias", JASA 60(309), 1965, and
Lecture 3, "Intro to Differential Privacy", course lecture notes (Warner's randomized response).
"""

import math
from fractions import Fraction

from .._kernels import client_grr as kernels
from .._kernels._jit import launch
from ..plans import TWO64, cell_count, exp_lower
from ._base import FrequencyOracle

__all__ = ["GRR", "grr_keep_cells", "cell_count"]


def lie_shift(epsilon, k):
    """``b``: each lie block has ``2**b`` cells, as many as keep ``G = a_keep + (k-1)·2**b`` below ``2**63``."""
    return 63 - (math.ceil(math.exp(epsilon)) + k - 1).bit_length()


def _keep_cells_ok(a, k, b, e):
    total = a + ((k - 1) << b)
    d = TWO64 << b
    lie_lo, lie_hi = d // total, -(-d // total)
    return cell_count(0, a, total) <= e * lie_lo and lie_hi <= e * lie_lo


def _admissible(epsilon, k):
    b = lie_shift(epsilon, k)
    return _keep_cells_ok(1 << b, k, b, exp_lower(epsilon))


def _smallest_epsilon(k):
    """The smallest ε (to 1%) whose GRR plan exists for ``k`` categories (for the message of a refusal)."""
    lo, hi = 1e-20, 1e-9  # lo refused, hi admissible, for every k GRR takes
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if _admissible(mid, k) else (mid, hi)
    return hi


def grr_keep_cells(epsilon, k):
    """``(a_keep, b)``: the largest ``a_keep`` keeping every likelihood ratio of GRR's one-word plan ≤ E < e^ε,
    with lie blocks of ``2**b`` cells (:func:`lie_shift`).

    Every lie block has ``floor(d)`` or ``ceil(d)`` words, ``d = 2**(64+b) / G``; the keep run has
    ``cell_count(0, a_keep, G)``. The ratio of the keep run to the smallest possible lie block grows with
    ``a_keep``, so the largest admissible ``a_keep`` below ``E·2**b`` is found by bisection.
    """
    e = exp_lower(epsilon)
    b = lie_shift(epsilon, k)
    lo, hi = 1 << b, math.floor(e * (1 << b))  # invariant: lo admissible, hi + 1 not
    if not _keep_cells_ok(lo, k, b, e):
        least = _smallest_epsilon(k)
        raise ValueError(f"epsilon={epsilon!r} is too small for GRR with k={k}: its exact plan draws from 64-bit "
                         f"words, which cannot express a likelihood ratio this close to 1; the smallest epsilon it "
                         f"takes is about {least:.2g} (any epsilon in [{least:.2g}, 20] works)")
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _keep_cells_ok(mid, k, b, e):
            lo = mid
        else:
            hi = mid - 1
    return lo, b


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
    true frequency 0: ``(k - 2 + e^ε)/(e^ε - 1)²`` (Wang et al.'s table). GRR is the best choice when
    ``k < 3 e^ε + 2`` (:func:`ldpnum.frequency.recommend`).

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
    Estimation", USENIX Security 2017.

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

    def __init__(self, epsilon: float, k: int) -> None:
        super().__init__(epsilon, k)
        if self._k > self.MAX_K:
            # Reports are at most uint16 codes, and lie blocks stay ≥ 2**34 cells wide (exact ratios within ~1e-10
            # of e^ε up to ε = 20); beyond 2**16 GRR's variance, (k - 2 + e^ε)/(e^ε - 1)², makes it the wrong
            # oracle anyway.
            raise ValueError(f"GRR supports k <= {self.MAX_K}; got k={self._k}. For large domains use a unary "
                             "or local-hashing oracle (see ldpnum.frequency.recommend)")
        self._plan = _GRRPlan(self._k, *grr_keep_cells(self._epsilon, self._k))

    @property
    def n_cells(self):
        return self._k

    @property
    def support_probabilities(self):
        p = self._plan.keep_count() / TWO64
        return p, (1.0 - p) / (self._k - 1)

    def _run_kernel(self, values, words, out):
        launch(kernels.grr_kernel, values, self._k, self._plan.a_keep, self._plan.shift, words, out)


class _GRRPlan:
    """Integer plan of GRR from one word: ``a_keep`` keep cells and ``k - 1`` lie blocks of ``2**shift`` cells."""

    words_per_record = 1

    def __init__(self, k, a_keep, shift):
        self.k = k
        self.a_keep = a_keep
        self.shift = shift
        self.total = a_keep + ((k - 1) << shift)
        if not (0 < a_keep and self.total < TWO64):
            raise ValueError(f"GRR plan out of range: a_keep={a_keep}, shift={shift}, k={k}")
        self._lie_counts = None

    def __eq__(self, other):
        return isinstance(other, _GRRPlan) and (self.k, self.a_keep, self.shift) == (
            other.k, other.a_keep, other.shift)

    def __repr__(self):
        return f"GRRPlan(k={self.k}, a_keep={self.a_keep}, shift={self.shift})"

    def keep_count(self):
        """Words (of 2**64) that keep the true category."""
        return cell_count(0, self.a_keep, self.total)

    def lie_counts(self):
        """Words (of 2**64) of each lie index ``0..k-2`` (index ``j`` reports the ``j``-th other category)."""
        if self._lie_counts is None:
            a, t, b = self.a_keep, self.total, self.shift
            self._lie_counts = [cell_count(a + (j << b), a + ((j + 1) << b), t) for j in range(self.k - 1)]
        return self._lie_counts

    def exact_probabilities(self, v):
        """``{code: Fraction}`` for true category ``v`` (``-1``: an unknown value, reported uniformly)."""
        k = self.k
        if v < 0:
            return {j: Fraction(cell_count(j, j + 1, k), TWO64) for j in range(k)}
        out = {v: Fraction(self.keep_count(), TWO64)}
        lies = self.lie_counts()
        for j in range(k):
            if j != v:
                out[j] = Fraction(lies[j if j < v else j - 1], TWO64)
        return out

    def extreme_ratio(self):
        """Exact largest ratio over all pairs of true categories and outputs: an output is kept (the keep
        count) or a lie of index ``j`` or ``j - 1``, so the extremes of the counts give the maximum."""
        counts = [self.keep_count()] + self.lie_counts()
        return Fraction(max(counts), min(counts))
