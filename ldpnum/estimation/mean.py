"""Mean estimation for mean oracles: the average of the per-report unbiased estimates (costs no privacy).

A mean oracle's every output code ``c`` carries an unbiased estimate ``e_c`` of the person's value (its
``code_estimates``, exact from the mechanism's integer plan). From the aggregate's counts ``n_c`` of ``n``
reports the mean is estimated by

    x̄ = Σ_c n_c e_c / n,     SE = sqrt(s² / n),     s² = Σ_c n_c (e_c - x̄)² / (n - 1),

the sample variance of the per-report estimates (which includes both the noise of the mechanism and the
spread of the values). With a single report, or when every report is the same code (``s² = 0``), ``s²`` is
the mechanism's worst-case per-report variance: a zero-width interval would claim certainty the reports
do not give.
"""

import math

import numpy as np

from ..aggregate import Aggregate
from .._results import MeanEstimate
from .._typing import ArrayLike

__all__ = ["estimate_mean"]


def estimate_mean(agg: Aggregate, code_estimates: ArrayLike, *, worst_case_variance: float,
                  epsilon: float) -> MeanEstimate:
    """Unbiased :class:`~ldpnum.MeanEstimate` of the mean of the values behind an aggregate of reports.

    Parameters
    ----------
    agg : Aggregate
        Counts of every output code (already checked against the mechanism's spec).
    code_estimates : array_like of float, shape (n_cells,)
        Unbiased estimate of the value carried by each output code, in data units.
    worst_case_variance : float
        Largest per-report variance over the inputs: the variance used with a single report or when the
        sample variance is zero.
    epsilon : float
        The mechanism's ε (recorded on the result).

    Returns
    -------
    MeanEstimate
        With a standard error from the sample variance of the per-report estimates.

    Raises
    ------
    ValueError
        For an aggregate of no reports.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> from ldpnum.estimation.mean import estimate_mean
    >>> m = ldp.Duchi(epsilon=1.0, bounds=(0, 1))
    >>> agg = ldp.Aggregate([30, 70], m.spec)
    >>> est = estimate_mean(agg, m.code_estimates, worst_case_variance=m.worst_case_variance, epsilon=1.0)
    >>> est.value == m.estimate_mean(agg).value
    True
    """
    n = agg.n_reports
    if n == 0:
        raise ValueError("estimate_mean: no reports")
    counts = agg.counts.astype(np.float64)
    est = np.asarray(code_estimates, dtype=np.float64)
    value = float(counts @ est) / n
    s2 = float(counts @ (est - value) ** 2) / (n - 1) if n > 1 else 0.0
    if not s2 > 0:  # one report, or every report the same code: the worst case, not a zero-width interval
        s2 = float(worst_case_variance)
    return MeanEstimate(value=value, standard_error=math.sqrt(s2 / n), n_reports=n, epsilon=epsilon,
                        spec=agg.spec)
