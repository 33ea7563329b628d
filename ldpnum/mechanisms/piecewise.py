"""Piecewise and Hybrid mechanisms (Wang et al., ICDE 2019) on a finite output grid.

The textbook Piecewise mechanism (PM) maps ``t`` in [-1, 1] to a real number in [-C, C],
``C = (e^{ε/2} + 1)/(e^{ε/2} - 1)``: with probability ``e^{ε/2}/(e^{ε/2} + 1)`` uniform on a window
``[l(t), l(t) + C - 1]`` centred at ``(C + 1) t / 2``, otherwise uniform outside it. Reporting that real number
in floating point leaks the input through its representation (design rule R1), so ldpnum reports a *cell* of a
fixed grid instead: ``n_cells`` cells over [-C', C'], the window ``m`` cells wide with
``m ≈ n_cells / (e^{ε/2} + 1)`` (the textbook window fraction), ``C' = n_cells / (n_cells - 2m)``.
The input is randomly rounded to a window start ``s ∈ {0..n_cells-m}`` with ``E[s] = u (n_cells - m)``,
so the window centre equals ``(C' + 1) t / 2`` in expectation and the estimator stays exactly unbiased.
Window cells are e^ε times as likely as the others (integer thresholds over 2**53, see ``_plan``).

Unbiased estimate of a report in cell ``j`` (cell coordinates centred at 0): with
``κ = P_in - P_out · m / (n_cells - m)`` the expected centred cell is ``κ (s + m/2 - n_cells/2)``, hence
``û = ((j + 1/2 - n_cells/2)/κ + (n_cells - m)/2) / (n_cells - m)``.

Grid: 1024 cells by default, doubled until the window holds at least 16 cells, at most 2**16.
What it costs: the window fraction differs from the textbook one by at most half a cell, and input rounding
adds a variance of at most ``(high - low)² / (4 (n_cells - m)²)`` per report — at ε = 1 about 1e-6 of the
per-report variance.

References
----------
N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu, "Collecting and Analyzing
Multidimensional Data with Local Differential Privacy", ICDE 2019 (Piecewise and Hybrid mechanisms).
Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under Local
Differential Privacy", SIGMOD 2020 (the output grid, EM and EMS).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..reports import Reports
from ..aggregate import Aggregate
from .._kernels import client_numeric, client_wave
from .._results import DistributionEstimate
from .._typing import ArrayLike, Bounds
from .._kernels._jit import launch
from ..estimation.distribution import estimate_window_distribution
from ..base import MeanOracle
from ..plans import TWO53, BinaryPlan, WindowPlan, binary_plan, grid_size, window_estimates, window_plan

__all__ = ["Piecewise", "Hybrid", "grid_size"]

class _WindowOracle(MeanOracle):
    """Shared helpers of mechanisms built on the window randomizer."""

    def _setup_window(self, window_fraction, n_cells, weights=None):
        n, m = grid_size(window_fraction, n_cells)
        self._window = window_plan(self._epsilon, n, m, None if weights is None else weights(m))
        low, high = self._bounds
        self._inv_range = 1.0 / (high - low)
        counts, total = self._window.in_counts()
        self._in_probs = np.array(counts, dtype=np.float64) / total
        if self._window.cum is not None:
            self._cum = np.array(self._window.cum, dtype=np.int64)
            self._cum.flags.writeable = False

    def _window_moments(self):
        """Per-cell unbiased estimates (data units) and P_in (:func:`ldpnum.plans.window_estimates`)."""
        u_hat, p_in = window_estimates(self._window, self._in_probs)
        low, high = self._bounds
        return low + (high - low) * u_hat, p_in

    def _window_second_moment(self, x):
        """``E[estimate² | x]`` of the window randomizer, mixing the two rounding positions."""
        w = self._window
        n, m = w.n_cells, w.m
        est, p_in = self._window_moments()
        sq = est * est
        inside = np.correlate(sq, self._in_probs, mode="valid")  # Σ_k π_k e²[s+k], every s
        cum = np.concatenate([[0.0], np.cumsum(sq)])
        window_sum = cum[m:] - cum[:-m]
        moment = p_in * inside + (1 - p_in) / (n - m) * (cum[-1] - window_sum)
        low, high = self._bounds
        pos = (x - low) / (high - low) * (n - m)
        s0 = np.minimum(np.floor(pos), n - m).astype(np.int64)
        frac = pos - s0
        s1 = np.minimum(s0 + 1, n - m)
        return (1 - frac) * moment[s0] + frac * moment[s1]

    def _window_probabilities(self, x):
        """Probability of each window cell for a value ``x``: the mixture of the two rounding positions."""
        w = self._window
        n, m = w.n_cells, w.m
        p_in = w.t_in / TWO53
        s0, t_up = self.window_starts(np.asarray([x], dtype=np.float64))
        s0, f = int(s0[0]), float(t_up[0]) / TWO53
        out = np.zeros(n)
        for s, weight in ((s0, 1.0 - f), (min(s0 + 1, n - m), f)):
            probs = np.full(n, (1 - p_in) / (n - m))
            probs[s:s + m] = p_in * self._in_probs
            out += weight * probs
        return out

    def _run_kernel(self, values, words, out):
        w = self._window
        if w.cum is None:
            launch(client_numeric.window_kernel, values, self._bounds[0], self._inv_range, w.n_cells, w.m, w.t_in, words,
                   out)
        else:
            launch(client_wave.shaped_window_kernel, values, self._bounds[0], self._inv_range, w.n_cells, w.m, w.t_in,
                   self._cum, words, out)

    def output_probabilities(self, x: float) -> np.ndarray:
        """Probability of each output cell for a value ``x`` (the box's 48-bit uniform choice taken as exact)."""
        return self._window_probabilities(x)

    @property
    def code_estimates(self) -> np.ndarray:
        return self._window_moments()[0]

    def _second_moment(self, x):
        return self._window_second_moment(x)

    @property
    def worst_case_variance(self) -> float:
        """Largest per-report variance, over a grid twice as fine as the window starts (exact at each point)."""
        low, high = self._bounds
        grid = np.linspace(low, high, 2 * (self._window.n_positions + 1) + 1)
        return float(np.max(self.variance(grid)))

    def estimate_distribution(self, data: Reports | Aggregate, *, n_bins: int | None = None,
                              method: str = "ems-cv", max_iter: int | None = None,
                              tol: float | None = None, bootstrap: int | None = None,
                              rng: Any = None) -> DistributionEstimate:
        """Reconstruct the distribution of the values behind the reports.

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate.
        n_bins : int, optional
            Number of equal buckets over the bounds (default: the power of two nearest ``2.4·sqrt(n)``,
            between 32 and 1024; see :func:`ldpnum.estimation.default_n_bins` for the measurements behind it).
        method : {"ems-cv", "ems", "em", "norm-sub"}, optional
            ``"ems-cv"`` (default): EMS with its smoothing strength (0 to 16 passes per iteration) chosen
            by held-out likelihood on a binomial thinning of the counts
            (:func:`ldpnum.estimation.ems_heldout`). Measured with Square Wave, 1024 buckets, 5 seeds,
            ε = 0.5-4 (ratios to ``"ems"``): Beta(5, 2) at n = 1e5, W1 0.82-0.99 and KS 0.76-0.91; at
            n = 1e6 identical to EMS for ε <= 2 (it picks EMS's level), W1 0.94 and KS 0.83 at ε = 4; a
            log-normal tail, KS 0.20-0.34; flight distances, W1 0.59-0.81; flight departure times,
            within noise (W1 1.00-1.04). It costs about 2-3x the time of EMS (more when it picks plain EM).
            Plain EM is chosen only when both halves of the thinning confirm it past the noise of the score;
            ``smoothing_fallback`` on the result says when it scored higher but was not confirmed. Where plain
            EM is chosen, tails of the estimate that the held-out halves do not support are cut (the mass plain
            EM puts over the empty part of wide bounds; :func:`ldpnum.estimation.ems_heldout`, step 4).
            ``"ems"``: Li et al.'s EM with one smoothing pass per iteration; ``"em"``: plain EM (Algorithm
            1 of the seed); ``"norm-sub"``: least squares followed by Norm-Sub.
        max_iter, tol : optional
            EM stopping rule: at most ``max_iter`` iterations (default 10,000); stop when the log-likelihood
            gains less than 1e-3 nats in an iteration (default) or, with ``tol``, less than ``tol`` relatively.
        bootstrap : int, optional
            Attach this many parametric bootstrap replicates (:func:`ldpnum.estimation.bootstrap_distribution`,
            e.g. 200) for ``confidence_band``, ``quantile(q, ci=)`` and ``range(lo, hi, ci=)``; ``rng`` seeds
            the resampling. The replicates are those of an undersmoothed fit (EMS at a quarter of the estimate's
            smoothing passes, plain EM below 4), so the intervals include most of the smoothing bias at sharp
            features (flight departures' 6-9 am share at ε = 1: 0.92 coverage where replicates of the estimate
            itself gave 0.13; see :mod:`ldpnum.estimation.bootstrap` for where it is still short), at up to twice
            the width; ``bootstrap_distribution(..., scheme="estimate")`` gives
            the narrower intervals of the noise alone.

        Returns
        -------
        DistributionEstimate
            Bucket probabilities with ``cdf``, ``quantile``, ``mean``, ``var``, ``range``, ``plot`` and the
            provenance (spec, ε, n_reports, method, n_iter, converged, log-likelihood trace).

        Notes
        -----
        Post-processing of ε-LDP reports: costs no privacy. The transition matrix between input buckets and
        output cells is computed exactly from the plan; one EM iteration costs O(n_bins + n_cells) for box
        windows (prefix sums), O(n_cells · m) for shaped ones.

        References
        ----------
        Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under
        Local Differential Privacy", SIGMOD 2020 (EM, Algorithm 1; EMS).
        """
        agg = self._as_aggregate(data)
        est = estimate_window_distribution(self, agg, n_bins=n_bins, method=method, max_iter=max_iter, tol=tol)
        if bootstrap is None:
            return est
        from ..estimation.bootstrap import bootstrap_distribution

        return bootstrap_distribution(self, agg, n_boot=bootstrap, rng=rng, estimate=est, method=method,
                                      max_iter=max_iter, tol=tol)

    def window_starts(self, x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """The kernel's own rounding of each value: base window start and threshold (over 2**53) for +1."""
        values = self.prepare_values(x)
        s0 = np.empty(values.shape[0], dtype=np.int64)
        t_up = np.empty(values.shape[0], dtype=np.int64)
        launch(client_numeric.window_rounding, values, self._bounds[0], self._inv_range, self._window.n_positions, s0,
               t_up)
        return s0, t_up


class Piecewise(_WindowOracle):
    """Wang et al.'s Piecewise mechanism on a fixed output grid, with randomized input rounding.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    bounds : (float, float)
        Public range of the values.
    n_cells : int, optional
        Output grid size (default: 1024, raised to a power of two until the window holds 16 cells).

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. Reports are
    cell indices; :attr:`labels` gives each cell's centre on the textbook [-C', C'] scale. Per-report
    variance on the [-1, 1] scale is close to the textbook ``t²/(e^{ε/2} - 1) + (e^{ε/2} + 3)/(3(e^{ε/2} - 1)²)``;
    :meth:`variance` gives the exact value for the grid.

    References
    ----------
    N. Wang et al., "Collecting and Analyzing Multidimensional Data with Local Differential Privacy",
    ICDE 2019.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.Piecewise(epsilon=2.0, bounds=(0, 100))
    >>> x = np.random.default_rng(0).uniform(0, 100, 100_000)
    >>> est = m.estimate_mean(m.privatize(x, rng=1))
    >>> bool(abs(est.value - x.mean()) < 4 * est.standard_error)
    True
    """

    name = "piecewise"
    aliases = ("pm",)

    def __init__(self, epsilon: float, bounds: Bounds, *, n_cells: int | None = None) -> None:
        super().__init__(epsilon, bounds)
        self._setup_window(1.0 / (math.exp(self._epsilon / 2) + 1.0), n_cells)
        self._plan = self._window

    def _spec_params(self):
        return {"bounds": self._bounds, "n_cells": self._window.n_cells}

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: reports are codes ``0..n_cells-1``."""
        return self._window.n_cells

    @property
    def labels(self) -> np.ndarray:
        """Centre of each output cell on the textbook scale [-C', C'], ``C' = n_cells/(n_cells - 2m)``."""
        n, m = self._window.n_cells, self._window.m
        h = 2.0 / (n - 2 * m) if n > 2 * m else 2.0 / n
        return (np.arange(n) + 0.5 - n / 2) * h



class Hybrid(_WindowOracle):
    """Wang et al.'s Hybrid mechanism: Piecewise with probability α, else Duchi's, each with the full ε.

    ``α = 1 - e^{-ε/2}`` for ε > 0.61 and 0 otherwise (the paper's choice, which minimizes the worst-case
    variance). The mixing coin is independent of the value, and the two branches have disjoint output
    codes (``0..n_cells-1`` Piecewise cells, ``n_cells`` and ``n_cells + 1`` Duchi's −C and +C), so the
    mixture is ε-LDP. Both branches' estimates are unbiased, hence so is the mixture's.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    bounds : (float, float)
        Public range of the values.
    n_cells : int, optional
        Output grid size of the Piecewise branch.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    Every record consumes 5 words and computes both branches, so the work is the same for every value.

    References
    ----------
    N. Wang et al., "Collecting and Analyzing Multidimensional Data with Local Differential Privacy",
    ICDE 2019.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.Hybrid(epsilon=1.0, bounds=(0, 1))
    >>> est = m.estimate_mean(m.privatize(np.full(100_000, 0.25), rng=3))
    >>> bool(abs(est.value - 0.25) < 4 * est.standard_error)
    True
    """

    name = "hybrid"
    aliases = ("hm",)
    words_per_record = 5

    def __init__(self, epsilon: float, bounds: Bounds, *, n_cells: int | None = None) -> None:
        super().__init__(epsilon, bounds)
        self._setup_window(1.0 / (math.exp(self._epsilon / 2) + 1.0), n_cells)
        self._binary = binary_plan(self._epsilon)
        self._alpha = 1.0 - math.exp(-self._epsilon / 2) if self._epsilon > 0.61 else 0.0
        self._t_mix = round(self._alpha * TWO53)
        self._plan = self._window

    @property
    def alpha(self) -> float:
        """Probability of the Piecewise branch, as realized: ``t_mix / 2**53``."""
        return self._t_mix / TWO53

    def _spec_params(self):
        return {"bounds": self._bounds, "n_cells": self._window.n_cells}

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: Piecewise's cells followed by Duchi's two (−C, +C)."""
        return self._window.n_cells + 2

    def _run_kernel(self, values, words, out):
        w, b = self._window, self._binary
        launch(client_numeric.hybrid_kernel, values, self._bounds[0], self._inv_range, w.n_cells, w.m, w.t_in, b.t_lo,
               b.t_hi, self._t_mix, words, out)

    def _duchi_estimates(self):
        p, q = self._binary.t_hi / TWO53, self._binary.t_lo / TWO53
        low, high = self._bounds
        return low + (high - low) * (np.array([0.0, 1.0]) - q) / (p - q), p, q

    @property
    def piecewise_plan(self) -> WindowPlan:
        """Integer plan of the Piecewise branch."""
        return self._window

    @property
    def duchi_plan(self) -> BinaryPlan:
        """Integer plan of the Duchi branch."""
        return self._binary

    def output_probabilities(self, x: float) -> np.ndarray:
        """Probability of each output code for a value ``x``."""
        (e0, e1), p, q = self._duchi_estimates()
        low, high = self._bounds
        u = min(max((float(x) - low) / (high - low), 0.0), 1.0)
        t = self._binary.t_lo + int(u * float(self._binary.t_hi - self._binary.t_lo))
        p1 = min(t, self._binary.t_hi) / TWO53
        a = self.alpha
        return np.concatenate([a * self._window_probabilities(x), (1 - a) * np.array([1 - p1, p1])])

    @property
    def code_estimates(self) -> np.ndarray:
        """Unbiased estimate of the value carried by each output code, in data units."""
        return np.concatenate([self._window_moments()[0], self._duchi_estimates()[0]])

    def _second_moment(self, x):
        (e0, e1), p, q = self._duchi_estimates()
        low, high = self._bounds
        p1 = q + (x - low) / (high - low) * (p - q)
        duchi = (1 - p1) * e0 * e0 + p1 * e1 * e1
        a = self.alpha
        return a * self._window_second_moment(x) + (1 - a) * duchi

