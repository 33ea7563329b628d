"""Generalized randomized response (GRR, also called direct encoding, DE).

A person with category ``v`` reports ``v`` with probability ``p = e^ε / (e^ε + k - 1)`` and each other
category with probability ``q = 1 / (e^ε + k - 1)``. With ``k = 2`` it is Warner's randomized response
(:class:`ldpnum.RandomizedResponse`): the two have the same integer plan.

Finite-output plan (design rule R1), one random word per person. The word picks one of
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

from typing import Any

from .._kernels import client_grr as kernels
from .._kernels._jit import launch
from ..plans import TWO64, GRRPlan, cell_count, grr_keep_cells
from ._base import FrequencyOracle

__all__ = ["GRR", "grr_keep_cells", "cell_count"]


class GRR(FrequencyOracle):
    """Generalized randomized response over ``k`` categories.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int, optional
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**16. Derived from ``categories`` when left out.
    categories : list of str or int, optional
        Declared, public labels of the categories (``categories[i]`` is code ``i``): the oracle then takes
        labels (a text or pandas ``category`` column) and labels its estimates (see
        :meth:`~ldpnum.frequency.FrequencyOracle.with_categories`). Never read them off the data: which
        values occur would leak.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    Reports are one code each (smallest unsigned dtype). Per-report variance of a frequency estimate at
    true frequency 0: ``(k - 2 + e^ε)/(e^ε - 1)²`` (Wang et al.'s table). GRR is the best choice when
    ``k < 3 e^ε + 2`` (:func:`ldpnum.frequency.recommend`). ``estimate_frequencies(..., method="mle")``
    gives the maximum-likelihood frequencies on the simplex with per-category profile-likelihood intervals
    (:mod:`ldpnum.estimation.likelihood`).

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
    #: ``estimate_frequencies(..., method="mle")``: the multinomial likelihood of its category counts.
    frequency_methods = ("unbiased", "mle")

    def __init__(self, epsilon: float, k: int | None = None, *, categories: Any = None) -> None:
        super().__init__(epsilon, k, categories)
        if self._k > self.MAX_K:
            # Reports are at most uint16 codes, and lie blocks stay ≥ 2**34 cells wide (exact ratios within ~1e-10
            # of e^ε up to ε = 20); beyond 2**16 GRR's variance, (k - 2 + e^ε)/(e^ε - 1)², makes it the wrong
            # oracle anyway.
            raise ValueError(f"GRR supports k <= {self.MAX_K}; got k={self._k}. For large domains use a unary "
                             "or local-hashing oracle (see ldpnum.frequency.recommend)")
        self._plan = GRRPlan(self._k, *grr_keep_cells(self._epsilon, self._k))

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: the ``k`` categories."""
        return self._k

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: probability of reporting the person's own / another given category."""
        p = self._plan.keep_count() / TWO64
        return p, (1.0 - p) / (self._k - 1)

    def _run_kernel(self, values, words, out):
        launch(kernels.grr_kernel, values, self._k, self._plan.a_keep, self._plan.shift, words, out)
