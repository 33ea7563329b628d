"""Frozen result objects you can query (DESIGN.md R7)."""

from dataclasses import dataclass
from typing import NamedTuple

from ._core import Spec, normal_quantile

__all__ = ["MeanEstimate", "ConfidenceInterval"]


class ConfidenceInterval(NamedTuple):
    """A two-sided interval ``(low, high)``."""

    low: float
    high: float


@dataclass(frozen=True)
class MeanEstimate:
    """An unbiased estimate of the mean of the values behind a set of reports.

    Attributes
    ----------
    value : float
        The estimate, in the units of the data.
    standard_error : float
        Estimated standard error of ``value``: the sample standard deviation of the per-report unbiased
        estimates divided by ``sqrt(n_reports)``. It covers the mechanism's noise and the spread of the
        values themselves, so it is the standard error for people sampled from a larger population and
        slightly conservative for the mean of exactly these people (whose noise-only variance is
        ``sum(mechanism.variance(x_i)) / n**2``). With fewer than two reports it is the worst-case
        standard error of the mechanism instead.
    n_reports : int
        Number of reports behind the estimate.
    epsilon : float
        The privacy parameter each person's report was produced with.
    spec : Spec
        The mechanism specification of the reports.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.Duchi(epsilon=1.0, bounds=(0, 10))
    >>> est = m.estimate_mean(m.privatize(np.full(100_000, 3.0), rng=0))
    >>> lo, hi = est.confidence_interval(0.95)
    >>> bool(lo < 3.0 < hi)
    True
    """

    value: float
    standard_error: float
    n_reports: int
    epsilon: float
    spec: Spec

    def confidence_interval(self, level=0.95):
        """Normal-approximation confidence interval ``value ± z·standard_error``.

        The estimate is a mean of independent, bounded per-report estimates, so the normal approximation
        is accurate once there are more than a few hundred reports.
        """
        z = normal_quantile(level)
        return ConfidenceInterval(self.value - z * self.standard_error, self.value + z * self.standard_error)

    def __str__(self):
        return (f"{self.value:.6g} ± {self.standard_error:.3g} (SE; n={self.n_reports}, "
                f"epsilon={self.epsilon:g}, {self.spec.mechanism})")
