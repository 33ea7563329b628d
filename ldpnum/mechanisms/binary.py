"""Two-output mean oracles: randomized response, stochastic rounding and Duchi et al.'s 1-D mechanism.

These three published mechanisms are one randomizer: a value ``x`` in ``[low, high]`` is
mapped to ``u = (x - low) / (high - low)`` and reported as code 1 with probability

    P[1 | u] = q + u (p - q),        p = e^ε / (1 + e^ε),  q = 1 / (1 + e^ε),

that is, stochastic rounding of ``u`` to an endpoint followed by Warner's randomized response of that bit
(for ``u`` in {0, 1} it *is* randomized response). They differ in what the two codes mean and how they are
debiased: stochastic rounding labels them 0/1 and estimates ``low + (high - low)(Y - q)/(p - q)``
(the 1-bit mean estimator, Lecture 20 "Local Model of Differential Privacy"); Duchi et al. label them ±C,
``C = (e^ε + 1)/(e^ε - 1)``, on the [-1, 1] scale. Both estimators are the same affine map of the code,
computed from the plan's exact probabilities (``p = t_hi / 2**53``, ``q = t_lo / 2**53``), so they are
unbiased for the mechanism as implemented, not only for its textbook form.

References
----------
S. L. Warner, "Randomized Response: A Survey Technique for Eliminating Evasive Answer Bias", JASA 60(309),
1965. Lecture 20, "Local Model of Differential Privacy", course lecture notes (randomized response, 1-bit mean
estimation). Lecture 3, "Intro to Differential Privacy", course lecture notes (Warner's randomized response
and its analysis). "Local Differential Privacy (Part 1)", lecture slides on the work of T. Wang, N. Li and
S. Jha (numerical mean oracle: discretize unbiasedly, then perturb). "The Local Model: Foundations", lecture
slides, CS 2080 Applied Privacy for Data Science, Harvard University, 2025 (randomized response in the local
model).
J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally private estimation",
JASA 2018.
"""

import numpy as np

from .._kernels import client_numeric
from .._typing import ArrayLike, Bounds, FloatArray
from .._kernels._jit import launch
from .._validation import check_binary, check_choice, prepared
from ..base import MeanOracle
from ..estimation.likelihood import mean_mle
from ..plans import TWO53, binary_plan

__all__ = ["RandomizedResponse", "StochasticRounding", "Duchi"]


class _TwoOutput(MeanOracle):
    """Shared randomizer of the two-output mean oracles."""

    #: ``estimate_mean(..., method="mle")``: the binomial likelihood of the count of ones (its aggregate).
    mean_methods = ("unbiased", "mle")

    def __init__(self, epsilon: float, bounds: Bounds) -> None:
        super().__init__(epsilon, bounds)
        self._plan = binary_plan(self._epsilon)
        low, high = self._bounds
        self._inv_range = 1.0 / (high - low)

    @property
    def n_cells(self) -> int:
        return 2

    @property
    def _p_q(self):
        return self._plan.t_hi / TWO53, self._plan.t_lo / TWO53

    def _run_kernel(self, values, words, out):
        plan = self._plan
        launch(client_numeric.binary_kernel, values, self._bounds[0], self._inv_range, plan.t_lo, plan.t_hi, words, out)

    def thresholds(self, x: ArrayLike) -> np.ndarray:
        """The kernel's own integer threshold for each value (code 1 iff ``word >> 11 < threshold``)."""
        values = self.prepare_values(x)
        out = np.empty(values.shape[0], dtype=np.int64)
        launch(client_numeric.binary_thresholds, values, self._bounds[0], self._inv_range, self._plan.t_lo,
               self._plan.t_hi, out)
        return out

    def output_probabilities(self, x: float) -> np.ndarray:
        """Probability of each output code for a value ``x`` (from the kernel's own threshold)."""
        p1 = float(self.thresholds(np.asarray([x], dtype=np.float64))[0]) / TWO53
        return np.array([1.0 - p1, p1])

    def _mean_mle(self, agg):
        p, q = self._p_q
        return mean_mle(agg, p, q, bounds=self._bounds, epsilon=self._epsilon)

    @property
    def code_estimates(self) -> np.ndarray:
        p, q = self._p_q
        low, high = self._bounds
        return low + (high - low) * (np.array([0.0, 1.0]) - q) / (p - q)

    def _second_moment(self, x):
        p, q = self._p_q
        low, high = self._bounds
        p1 = q + (x - low) / (high - low) * (p - q)
        e0, e1 = self.code_estimates
        return (1 - p1) * e0 * e0 + p1 * e1 * e1

    @property
    def worst_case_variance(self) -> float:
        """``(high - low)² / (4 (p - q)²)``: the variance at the value whose code is a fair coin."""
        p, q = self._p_q
        low, high = self._bounds
        return (high - low) ** 2 / (4 * (p - q) ** 2)


class StochasticRounding(_TwoOutput):
    """The 1-bit mean oracle: stochastic rounding to an endpoint, then randomized response.

    A value ``x`` in ``[low, high]`` is reported as one bit ``Y`` with
    ``P[Y = 1] = 1/(e^ε + 1) + (x - low)/(high - low) · (e^ε - 1)/(e^ε + 1)``; the mean is estimated by
    ``low + (high - low) · mean((Y (e^ε + 1) - 1)/(e^ε - 1))``, computed with the plan's exact
    probabilities.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    bounds : (float, float)
        Public range of the values.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. The two
    output probabilities are integers over 2**53 rounded so that their ratio is at most e^ε (and within
    2**-49 of it). Per-report variance at ``x``: ``(high - low)² p(x)(1 - p(x)) / (p - q)²``; at most
    ``(high - low)² (e^ε + 1)² / (4 (e^ε - 1)²)``.

    References
    ----------
    Lecture 20, "Local Model of Differential Privacy", course lecture notes (1-bit communication mean
    estimation); "Local Differential Privacy (Part 1)", lecture slides on the work of T. Wang, N. Li and
    S. Jha (numerical mean oracle).

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.StochasticRounding(epsilon=1.0, bounds=(0, 5000))
    >>> x = np.random.default_rng(1).uniform(0, 5000, 200_000)
    >>> est = m.estimate_mean(m.privatize(x, rng=2))
    >>> bool(abs(est.value - x.mean()) < 4 * est.standard_error)
    True
    """

    name = "stochastic_rounding"
    aliases = ("sr",)


class Duchi(_TwoOutput):
    """Duchi et al.'s one-dimensional mechanism: report ±C with C = (e^ε + 1)/(e^ε - 1).

    With ``t = 2(x - low)/(high - low) - 1`` in [-1, 1], the report is ``+C`` with probability
    ``1/2 + t (e^ε - 1)/(2(e^ε + 1))`` and ``-C`` otherwise; ``E[report] = t``. Reports are codes 0 (−C)
    and 1 (+C); :attr:`labels` is their value on the [-1, 1] scale.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    bounds : (float, float)
        Public range of the values.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. This is the
    same randomizer as :class:`StochasticRounding` with the outputs labelled ±C; ``C`` is computed from the
    plan's exact probabilities, ``C = 1/(p - q)``. Per-report variance on the [-1, 1] scale: ``C² - t²``.

    References
    ----------
    J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally private
    estimation", JASA 2018; "Local Differential Privacy (Part 1)", lecture slides on the work of T. Wang,
    N. Li and S. Jha (numerical mean oracle).

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.Duchi(epsilon=2.0, bounds=(-1, 1))
    >>> r = m.privatize(np.zeros(1000), rng=0)
    >>> sorted(set(m.labels[r.codes].tolist())) == sorted(m.labels.tolist())
    True
    """

    name = "duchi"

    @property
    def labels(self) -> np.ndarray:
        """Value of codes 0 and 1 on the [-1, 1] scale: ``(-C, +C)``."""
        p, q = self._p_q
        c = 1.0 / (p - q)
        return np.array([-c, c])


class RandomizedResponse(_TwoOutput):
    """Warner's randomized response for a 0/1 column: keep the bit with probability e^ε/(1 + e^ε).

    ``estimate_mean`` estimates the proportion of ones, ``(mean(Y) - q)/(p - q)``; ``estimate_mean(...,
    method="mle")`` gives the maximum-likelihood proportion (that estimate clipped to [0, 1]) with
    likelihood-ratio intervals inside [0, 1], the better choice near 0 or 1 and at small n
    (:mod:`ldpnum.estimation.likelihood`).

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. Inputs must
    be 0/1 (bool, integer or float); anything else raises ValueError. Per-report variance:
    ``p(x)(1 - p(x))/(p - q)²``, equal to ``e^ε/(e^ε - 1)²`` for both inputs.

    References
    ----------
    S. L. Warner, "Randomized Response: A Survey Technique for Eliminating Evasive Answer Bias", JASA
    60(309), 1965; Lecture 3, "Intro to Differential Privacy", and Lecture 20, "Local Model of Differential
    Privacy", course lecture notes; "The Local Model: Foundations", lecture slides, CS 2080 Applied Privacy
    for Data Science, Harvard University, 2025.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> rr = ldp.RandomizedResponse(epsilon=1.0)
    >>> bits = np.random.default_rng(0).random(100_000) < 0.3
    >>> est = rr.estimate_mean(rr.privatize(bits, rng=1))
    >>> bool(abs(est.value - bits.mean()) < 4 * est.standard_error)
    True
    >>> few = rr.privatize(np.zeros(30, dtype=int), rng=2)            # 30 people, none of them a 1
    >>> mle = rr.estimate_mean(few, method="mle")
    >>> lo, hi = mle.confidence_interval(0.95)
    >>> bool(0.0 <= lo <= mle.value <= hi <= 1.0)
    True
    """

    name = "randomized_response"

    def __init__(self, epsilon: float) -> None:
        super().__init__(epsilon, (0.0, 1.0))

    def _spec_params(self):
        return {}

    @classmethod
    def _from_spec(cls, spec):
        return cls(epsilon=spec.epsilon)

    def prepare_values(self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise",
                       fill_value: float | None = None, out_of_range: str = "clip") -> FloatArray:
        """Validate one column of 0/1 values (bool, integer or float), without drawing anything.

        As :meth:`ldpnum.Mechanism.prepare_values`; any value other than 0 or 1 raises (``out_of_range``
        is accepted for a common signature and has no effect: there is nothing to clip).
        """
        check_choice(out_of_range, "out_of_range", ("clip", "raise"))
        return prepared(check_binary, x, name=name, nan_policy=nan_policy, fill_value=fill_value)

    @property
    def worst_case_variance(self) -> float:
        """Largest per-report variance over all inputs in the bounds."""
        p, q = self._p_q
        return p * (1 - p) / (p - q) ** 2

