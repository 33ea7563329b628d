"""The demo behind ``make demo`` / ``python -m ldpnum demo``, on the embedded NYC flights data.

:func:`demo_distribution` reconstructs the distribution of the departure times under Square Wave + EMS;
:func:`demo` compares every mean oracle on the distances.
"""

import sys
import time

import numpy as np

__all__ = ["demo", "demo_distribution"]


def demo_distribution(out=sys.stdout, *, epsilon=1.0, rng=None, plot_path="demo-output/dep_time_square_wave.png"):
    """Square Wave + EMS on the flights' departure times: the distribution, quantiles and W1/KS vs the truth.

    Departure times (HHMM clock values) are converted to minutes after midnight (bounds 0–1440); flights
    that never departed (missing times) are not part of the population here. Each flight reports once with
    ε; the server reconstructs the whole distribution from the reports alone.
    """
    from . import SquareWave, metrics
    from .data import dep_time_minutes, load_flights

    dep = dep_time_minutes(load_flights(["dep_time"])["dep_time"].to_numpy())
    dep = dep[np.isfinite(dep)]
    bounds = (0.0, 1440.0)
    t0 = time.perf_counter()
    sw = SquareWave(epsilon=epsilon, bounds=bounds)
    reports = sw.privatize(dep, rng=rng)
    t1 = time.perf_counter()
    agg = sw.aggregate(reports)
    est = sw.estimate_distribution(agg, n_bins=1024)
    t2 = time.perf_counter()
    qs = (0.25, 0.5, 0.75)
    true_q = np.quantile(dep, qs)
    est_q = est.quantile(qs)
    mean = sw.estimate_mean(agg)
    print(f"NYC flights 2013: departure time of n = {dep.size:,} flights (minutes after midnight, bounds {bounds})",
          file=out)
    print(f"Square Wave, epsilon = {epsilon:g}: {sw.n_cells} output cells, window {sw.plan.m} cells, "
          f"b = {sw.bandwidth:.4f}; EMS on 1024 buckets: {est.n_iter} iterations, converged = {est.converged}",
          file=out)
    print(f"{'':>22}{'true':>10}{'estimated':>12}", file=out)
    print(f"{'mean (from EMS)':>22}{dep.mean():>10.1f}{est.mean:>12.1f}", file=out)
    lo, hi = mean.confidence_interval()
    print(f"{'mean (unbiased)':>22}{dep.mean():>10.1f}{mean.value:>12.1f}   95% CI [{lo:.1f}, {hi:.1f}]", file=out)
    for q, tq, eq in zip(qs, true_q, est_q):
        print(f"{f'quantile {q:g}':>22}{tq:>10.1f}{eq:>12.1f}", file=out)
    w1 = metrics.wasserstein(est, dep)
    ks = metrics.ks(est, dep)
    print(f"W1 = {w1:.5f} (unit domain; {w1 * 1440:.1f} minutes), KS = {ks:.4f}", file=out)
    print(f"time: privatize {1000 * (t1 - t0):.0f} ms, aggregate + EMS {1000 * (t2 - t1):.0f} ms", file=out)
    if plot_path:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("(matplotlib is not installed: no plot; pip install 'ldpnum[plot]')", file=out)
        else:
            import os

            fig, axes = plt.subplots(1, 2, figsize=(11, 4))
            est.plot(ax=axes[0], true=dep, kind="pdf")
            est.plot(ax=axes[1], true=dep, kind="cdf")
            fig.suptitle(f"Departure times of {dep.size:,} flights: Square Wave (epsilon = {epsilon:g}) + EMS vs truth")
            os.makedirs(os.path.dirname(plot_path) or ".", exist_ok=True)
            fig.savefig(plot_path, dpi=110, bbox_inches="tight")
            plt.close(fig)
            print(f"plot written to {os.path.abspath(plot_path)}", file=out)
    return 0


def demo(out=sys.stdout, *, epsilons=(0.5, 1.0, 2.0, 4.0), rng=None):
    """Privatize the flights' distances with every mean oracle and compare the estimates with the truth.

    Each of the 336,776 flights is one "person": its distance (miles, public bounds 0–5000) is randomized
    by the mechanism, and the mean is estimated from the reports alone. Uses secure randomness unless
    ``rng`` is given.
    """
    from . import Duchi, Hybrid, Laplace, Piecewise, StochasticRounding
    from .data import load_flights

    distance = load_flights(["distance"])["distance"].to_numpy(dtype=np.float64)
    bounds = (0.0, 5000.0)
    true_mean = distance.mean()
    print(f"NYC flights 2013: n = {distance.size:,} distances (miles), public bounds {bounds}, "
          f"true mean {true_mean:.2f}", file=out)
    print(f"{'mechanism':<20}{'epsilon':>8}{'estimate':>12}{'95% CI':>24}{'error':>10}{'covers':>8}{'time':>9}",
          file=out)
    for cls in (StochasticRounding, Duchi, Piecewise, Hybrid, Laplace):
        for eps in epsilons:
            t0 = time.perf_counter()
            m = cls(epsilon=eps, bounds=bounds)
            est = m.estimate_mean(m.aggregate(m.privatize(distance, rng=rng)))
            elapsed = time.perf_counter() - t0
            lo, hi = est.confidence_interval(0.95)
            print(f"{cls.__name__:<20}{eps:>8g}{est.value:>12.2f}{f'[{lo:.2f}, {hi:.2f}]':>24}"
                  f"{est.value - true_mean:>+10.2f}{'yes' if lo <= true_mean <= hi else 'NO':>8}"
                  f"{elapsed * 1000:>7.0f}ms", file=out)
    print("Each row: privatize all flights + aggregate + estimate (first rows include JIT start-up).", file=out)
    return 0
