"""Distribution estimation for the window randomizer: EM / EMS / Norm-Sub → :class:`DistributionEstimate`.

References
----------
Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under Local
Differential Privacy", SIGMOD 2020 (EM Algorithm 1, EMS smoothing, W1/KS). T. Wang, M. Lopuhaä-Zwakenberg,
Z. Li, B. Škorić, N. Li, "Locally Differentially Private Frequency Estimation with Consistency", NDSS 2020
(Norm-Sub).
"""

import math
import numbers

import numpy as np

from .._results import DistributionEstimate
from .._validation import check_choice
from .em import DEFAULT_MAX_ITER, ems_heldout, expectation_maximization, window_transition_from_plan
from .postprocess import norm_sub

__all__ = ["DEFAULT_METHOD", "default_n_bins", "estimate_window_distribution", "METHODS"]

METHODS = ("ems-cv", "ems", "em", "norm-sub")
#: The method used when none is named.
DEFAULT_METHOD = "ems-cv"
MIN_BINS, MAX_BINS = 32, 1024


def default_n_bins(n_reports, n_positions):
    """Default number of input buckets: the power of two nearest ``1.5·sqrt(n)``, within [32, 1024].

    Why: EMS smooths neighbouring *buckets*, so its smoothing is stronger the coarser the buckets; with few
    reports coarse buckets tame the noise, with many reports fine buckets resolve the shape. Measured on
    Beta(5, 2) samples with Square Wave (W1 against the true CDF, 3 seeds, ε ∈ {0.5, 1, 4}), the best
    power of two was 64 at n = 1e3, 128 at 1e4, 256–512 at 1e5 and 512–1024 at 1e6, with ε mattering little;
    ``1.5·sqrt(n)`` reproduces that within a factor of two, where W1 changes by under 10%. More than 1024
    buckets cost time without measurable gain, and never more than the ``n_positions + 1`` window starts the
    randomizer can distinguish (buckets finer than that grid carry no extra information).
    """
    n = max(int(n_reports), 1)
    d = 2 ** round(math.log2(1.5 * math.sqrt(n)))
    d = min(max(d, MIN_BINS), MAX_BINS)
    return int(min(d, max(2, 2 ** int(math.log2(n_positions + 1)))))


def _check_bins(n_bins, n_reports, n_positions):
    if n_bins is None:
        return default_n_bins(n_reports, n_positions)
    if not isinstance(n_bins, numbers.Integral) or isinstance(n_bins, bool):
        raise TypeError(f"n_bins must be an integer; got {type(n_bins).__name__}")
    if not 2 <= int(n_bins) <= 65536:
        raise ValueError(f"n_bins must be in [2, 65536]; got {n_bins}")
    return int(n_bins)


def window_counts(plan, agg):
    """The counts of the output cells the window plan describes: the first ``plan.n_cells`` codes.

    For Square Wave, General Wave and Piecewise these are all the counts. Hybrid's reports are Piecewise's
    cells followed by Duchi's two (−C, +C); its mixing coin does not depend on the value, so the Piecewise
    reports are a random subsample of the people and their counts alone are an exact window collection.
    Duchi's reports carry only the mean, so the distribution is estimated from the window reports.
    """
    return np.asarray(agg.counts)[:plan.n_cells]


def estimate_window_distribution(mechanism, agg, *, n_bins=None, method=DEFAULT_METHOD, max_iter=None,
                                 tol=None):
    """Reconstruct the distribution of the values behind an aggregate of window-randomizer reports.

    The transition between ``n_bins`` equal input buckets and the output cells is computed exactly from the
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
    d = _check_bins(n_bins, n, plan.n_cells - plan.m)
    transition = window_transition_from_plan(plan, d)
    low, high = mechanism.bounds
    edges = np.linspace(low, high, d + 1)
    common = dict(spec=agg.spec, n_reports=n)
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
    return DistributionEstimate(edges, x / x.sum(), method=method, n_iter=res.n_iter, converged=res.converged,
                                log_likelihood=tuple(float(v) for v in res.loglik), **common)
