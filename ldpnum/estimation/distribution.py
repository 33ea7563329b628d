"""Distribution estimation for the window randomizer: EM / EMS / Norm-Sub → :class:`DistributionEstimate`.

References
----------
Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under Local
Differential Privacy", SIGMOD 2020 (EM Algorithm 1, EMS smoothing, W1/KS). T. Wang, M. Lopuhaä-Zwakenberg,
Z. Li, B. Škorić, N. Li, "Locally Differentially Private Frequency Estimation with Consistency", NDSS 2020
(Norm-Sub).
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._results import DistributionEstimate
from .._validation import check_choice, check_scalar
from .em import (DEFAULT_MAX_ITER, ems_heldout, expectation_maximization, point_transition_from_plan,
                 window_transition_from_plan)
from .postprocess import norm_sub

if TYPE_CHECKING:
    from ..aggregate import Aggregate
    from .em import WindowTransition

__all__ = ["DEFAULT_METHOD", "default_n_bins", "estimate_window_distribution", "METHODS", "input_grid",
           "point_mass_cells", "warn_point_masses"]

METHODS = ("ems-cv", "ems", "em", "norm-sub")
#: The method used when none is named.
DEFAULT_METHOD = "ems-cv"
MIN_BINS, MAX_BINS = 32, 1024


def default_n_bins(n_reports: int) -> int:
    """Default number of input buckets: the power of two nearest ``2.4·sqrt(n)``, within [32, 1024].

    Tuned for the default estimator (``"ems-cv"``: EMS whose smoothing strength is chosen from the data).
    Measured on Beta(5, 2) and a two-Gaussian mixture (0.5·N(0.3, 0.05²) + 0.5·N(0.7, 0.08²)) with Square
    Wave, ε ∈ {0.5, 1, 2}, 5 seeds (W1, KS and range MSE against the sample), no bucket count between 64 and
    1024 wins consistently for n ≤ 1e4 (the rule's 64 at n = 1e3 is within 30% of the best W1, as the
    earlier rule ``1.5·sqrt(n)`` gave; its 256 at 1e4 within 15%), at n = 3e4 the rule's 512 is within 10%
    of the best, while at n = 1e5 1024 buckets are best (W1 0.0097 against 0.0105
    at 512 on Beta, ε = 0.5; 0.0118 against 0.0135 on the mixture) and at n = 1e6 (3 seeds, ε ∈ {0.5, 0.8,
    1, 2}) 1024 beat 512 by up to 2x in range MSE (mixture, ε = 0.8: 4.1e-5 against 9.4e-5; W1 0.0040
    against 0.0048). 2048 buckets gain at most 7% on the mixture at n = 1e6 and lose on
    Beta(5, 2), at twice the time, hence the cap at 1024. The rule reaches 1024 buckets from n ≈ 9.1e4 on
    (a factor 2.4 keeps 256 buckets at n = 2e4 and 64 at 1e3; 3 would give 1024 from 5.8e4 and 128 at
    1e3, equally within the measurements).

    The bucket count is *not* capped by the ``n_positions + 1`` window starts of the randomizer's grid (it
    was, giving 512 buckets for every ε on the default 1024-cell grid). The window starts bound the
    information in the reports, and plain EM indeed gives the same answer at 512 and 1024 buckets (W1
    within 1% on both data sets) — but EMS smooths neighbouring *buckets*, so its smoothing is stronger the
    coarser the buckets: one pass of the ½, ¼, ¼ filter at 512 buckets has the variance of four passes at
    1024, and EMS at 512 buckets equals EMS with 4 passes at 1024 buckets to 4e-5 relatively (the same
    iterations). A grid-sized cap therefore forced a smoothing at least 4x stronger than EMS's own at
    1024 buckets, which over-smooths narrow features when n is large (the mixture's range MSE tripled).

    Examples
    --------
    >>> from ldpnum.estimation import default_n_bins
    >>> default_n_bins(1_000), default_n_bins(10_000), default_n_bins(100_000), default_n_bins(10**7)
    (64, 256, 1024, 1024)
    """
    n = max(int(n_reports), 1)
    d = 2 ** round(math.log2(2.4 * math.sqrt(n)))
    return int(min(max(d, MIN_BINS), MAX_BINS))


def _check_bins(n_bins, n_reports):
    if n_bins is None:
        return default_n_bins(n_reports)
    return check_scalar(n_bins, "n_bins", int, low=2, high=65536)


def window_counts(plan: Any, agg: Aggregate) -> NDArray[Any]:
    """The counts of the output cells the window plan describes: the first ``plan.n_cells`` codes.

    For Square Wave, General Wave and Piecewise these are all the counts. Hybrid's reports are Piecewise's
    cells followed by Duchi's two (−C, +C); its mixing coin does not depend on the value, so the Piecewise
    reports are a random subsample of the people and their counts alone are an exact window collection.
    Duchi's reports carry only the mean, so the distribution is estimated from the window reports.
    """
    return np.asarray(agg.counts)[:plan.n_cells]


#: Family-wise level of :func:`point_mass_cells` over the cells (Bonferroni).
POINT_MASS_ALPHA = 0.01


def point_mass_cells(masses: ArrayLike, sd: ArrayLike, *,
                     alpha: float = POINT_MASS_ALPHA) -> NDArray[np.intp]:
    r"""Cells whose estimated mass is a point mass: far above what their neighbours' interpolation allows.

    For cell ``i`` with estimate :math:`m_i` and neighbours' mean :math:`\bar m_i` (one neighbour at the
    ends), the excess :math:`e_i = m_i - \bar m_i` is flagged when both

    * :math:`e_i > m_i / 2` (the cell holds more than twice its neighbours' mean: a lone spike, not a slope
      or a step, where one neighbour is as high as the cell), and
    * :math:`e_i > z\,s_i`, :math:`s_i^2 = sd_i^2 + \overline{sd}_i^2 / 2` (interior; :math:`sd_i^2 + sd_j^2`
      at the ends) the variance of the excess for independent cells, :math:`z` the normal quantile at
      ``alpha / n_cells`` (Bonferroni: under a smooth density, no flag in 99% of estimates).

    Parameters
    ----------
    masses : array_like, shape (d,)
        The estimate of each cell (raw or fitted).
    sd : float or array_like, shape (d,)
        Standard error of each cell's estimate.

    Returns
    -------
    ndarray of int
        Indices of the flagged cells, increasing.

    Examples
    --------
    >>> from ldpnum.estimation.distribution import point_mass_cells
    >>> point_mass_cells([0.1, 0.1, 0.1, 0.4, 0.0, 0.1, 0.1, 0.1], 0.01).tolist()
    [3]
    >>> point_mass_cells([0.1, 0.1, 0.1, 0.4, 0.0, 0.1, 0.1, 0.1], 0.2).tolist()   # within the noise
    []
    """
    from scipy.stats import norm

    m = np.asarray(masses, dtype=np.float64)
    d = m.size
    if d < 2:
        return np.empty(0, dtype=np.int64)
    var = np.broadcast_to(np.asarray(sd, dtype=np.float64) ** 2, m.shape)
    left, right = np.r_[m[1], m[:-1]], np.r_[m[1:], m[-2]]
    vl, vr = np.r_[var[1], var[:-1]], np.r_[var[1:], var[-2]]
    excess = m - (left + right) / 2
    v = var + (vl + vr) / 4
    v[0], v[-1] = var[0] + var[1], var[-1] + var[-2]
    z = norm.isf(alpha / d)
    flag = (excess > m / 2) & (excess > z * np.sqrt(v)) & (m > 0)
    return np.flatnonzero(flag)


def warn_point_masses(cells: NDArray[Any], masses: NDArray[Any], edges: NDArray[Any], where: str,
                      stacklevel: int = 3) -> None:
    """Warn (:class:`~ldpnum.exceptions.PointMassWarning`) about the point-mass ``cells`` of a continuous-mode estimate.

    ``masses`` per cell, ``edges`` the cells' edges; the warning names how many there are and the first.
    """
    from ..exceptions import PointMassWarning

    if len(cells) == 0:
        return
    i = int(cells[0])
    nb = [masses[j] for j in (i - 1, i + 1) if 0 <= j < len(masses)]
    warnings.warn(PointMassWarning(
        f"{where}: {len(cells)} cell(s) hold far more mass than their neighbours allow (first: cell {i}, "
        f"[{edges[i]:g}, {edges[i + 1]:g}), estimated {masses[i]:.3g} against {float(np.mean(nb)):.3g} around "
        "it): the values have point masses (integers or rounded values?). Ranges, CDFs and quantiles spread a "
        "cell's mass uniformly within it, so a range end or quantile inside such a cell can be far off, with "
        "an interval that does not cover. For integer values build the mechanism with discrete=True",
        count=len(cells), first_index=i), stacklevel=stacklevel)


#: The diagonal-information errors of an EM fit, multiplied by this for :func:`point_mass_cells`: they ignore the
#: (negative) correlation of neighbouring buckets in the deconvolution, so they are too small. Measured (Square
#: Wave, ε = 1 and 2, n = 2,000 to 20,000, 4 seeds each; the largest cell's excess in units of the Bonferroni
#: bound with the diagonal errors): uniform, Beta(5, 2) and a log-normal tail at most 2.2 (plain EM's own
#: spikes: the maximum-likelihood mixing distribution is discrete); integers with 31% zeros 3.2-11 wherever the
#: fit resolved them (smoothing level 0). 3 separates the two.
FISHER_SD_INFLATION = 3.0


def _fisher_sd(counts, transition, x):
    r"""Per-bucket standard errors of an EM fit ``x`` from the diagonal of the observed information.

    :math:`I_{ii} = \sum_j n_j M_{ji}^2 / (Mx)_j^2` (box window: :math:`M_{ji} = p_{lo} + \delta W_{ji}`, :math:`W_{ji}
    \in [0, 1]`, bounded above with :math:`W^2 \le W`, so that one product by :math:`M^T` gives it).

    :math:`1/\sqrt{I_{ii}}` is the error of bucket ``i`` were the others known: a lower bound of its marginal
    error (deconvolution correlates neighbours), so :func:`point_mass_cells` leans on its relative condition.
    """
    q = np.maximum(transition.forward(x), np.finfo(float).tiny)
    n = np.asarray(counts, dtype=np.float64)
    r = n / (q * q)
    total = r.sum()
    p_lo, delta = transition.p_lo, transition.p_hi - transition.p_lo
    w_r = (transition.backward(r) - p_lo * total) / delta
    info = p_lo**2 * total + (2 * p_lo * delta + delta**2) * w_r
    return 1.0 / np.sqrt(np.maximum(info, np.finfo(float).tiny))


def input_grid(mechanism: Any, n_bins: int | None, n_reports: int) -> tuple[WindowTransition,
               NDArray[np.float64], bool]:
    """``(transition, bin_edges, discrete)``: the EM inputs of a window mechanism.

    Equal buckets of the bounds (``n_bins``, default :func:`default_n_bins`), or, for a ``discrete=True``
    mechanism, one point per integer of the bounds (:func:`~ldpnum.estimation.em.point_transition_from_plan`;
    bins ``[k - 1/2, k + 1/2)``; ``n_bins`` must then be omitted or equal the number of integers).
    """
    n_points = getattr(mechanism, "n_points", None)
    low, high = mechanism.bounds
    if n_points is None:
        d = _check_bins(n_bins, n_reports)
        return window_transition_from_plan(mechanism.plan, d), np.linspace(low, high, d + 1), False
    if n_bins is not None and _check_bins(n_bins, n_reports) != n_points:
        raise ValueError(f"n_bins: a discrete=True mechanism estimates one point mass per integer of its bounds "
                         f"({n_points}); got n_bins={n_bins} (omit it)")
    return point_transition_from_plan(mechanism.plan, n_points), np.arange(n_points + 1) + (low - 0.5), True


def estimate_window_distribution(mechanism: Any, agg: Aggregate, *, n_bins: int | None = None,
                                 method: str = DEFAULT_METHOD, max_iter: int | None = None,
                                 tol: float | None = None) -> DistributionEstimate:
    """Reconstruct the distribution of the values behind an aggregate of window-randomizer reports.

    The transition between ``n_bins`` equal input buckets (for a ``discrete=True`` mechanism: the integers of
    its bounds, as point masses; see :func:`input_grid`) and the output cells is computed exactly from the
    mechanism's plan. ``"ems-cv"`` (default) is EMS with its smoothing strength chosen by held-out
    likelihood on a binomial thinning of the counts (:func:`~ldpnum.estimation.em.ems_heldout`);
    ``"ems"`` (Li et al.'s EMS, one smoothing pass per iteration) and ``"em"`` run the Cython EM kernel
    directly; ``"norm-sub"`` solves the unbiased least-squares system and projects it with
    :func:`norm_sub` (fast for a rough look; it ignores that the counts are multinomial, and is less
    accurate than EMS).
    """
    check_choice(method, "method", METHODS)
    if agg.n_reports == 0:
        raise ValueError("estimate_distribution: no reports")
    plan = mechanism.plan
    counts = window_counts(plan, agg)
    n = int(counts.sum())
    if n == 0:
        raise ValueError(f"estimate_distribution: none of the {agg.n_reports:,} reports came from the window "
                         "branch (Hybrid's Duchi reports, ±C, carry the mean but not the distribution; at "
                         "ε ≤ 0.61 Hybrid sends only those): use estimate_mean, or Piecewise/Square Wave")
    transition, edges, discrete = input_grid(mechanism, n_bins, n)
    common: dict[str, Any] = dict(spec=agg.spec, n_reports=n, discrete=discrete)
    if method == "norm-sub":
        freq = counts / n
        x, *_ = np.linalg.lstsq(transition.dense(), freq, rcond=None)
        return DistributionEstimate(edges, norm_sub(x), method=method, n_iter=1, converged=True, **common)
    if max_iter is None:
        max_iter = DEFAULT_MAX_ITER
    if method == "ems-cv":
        res = ems_heldout(counts, transition, max_iter=max_iter, tol=tol)
    else:
        res = expectation_maximization(counts, transition, method=method, max_iter=max_iter, tol=tol)
    x = np.maximum(res.x, 0.0)
    x /= x.sum()
    if not discrete and transition.is_box:
        sd = FISHER_SD_INFLATION * _fisher_sd(counts, transition, x)
        warn_point_masses(point_mass_cells(x, sd), x, edges,
                          f"{type(mechanism).__name__}.estimate_distribution", stacklevel=5)
    return DistributionEstimate(edges, x, method=method, n_iter=res.n_iter, converged=res.converged,
                                log_likelihood=tuple(float(v) for v in res.loglik), smoothing=res.smoothing,
                                smoothing_fallback=res.smoothing_fallback, **common)
