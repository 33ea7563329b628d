"""The demo behind ``make demo`` / ``python -m ldpnum demo``, on the embedded NYC flights data.

:func:`demo_distribution` is the analyst's workflow through the ``.ldp`` pandas accessor: two columns of the
flights DataFrame are privatized with "one-column-per-row", both distributions are reconstructed from the
report columns, compared with the truth in a table and a plot. :func:`demo` then compares every mean oracle
on the distances.
"""

import os
import sys
import time

import numpy as np

__all__ = ["demo", "demo_distribution"]

#: The columns the accessor demo privatizes: label, unit, public bounds.
DEMO_COLUMNS = {"dep_time": ("minutes after midnight", (0.0, 1440.0)), "distance": ("miles", (0.0, 5000.0))}

#: Where ``make demo`` writes the comparison plot (relative to the working directory).
PLOT_PATH = "demo-output/flights_accessor.png"


def flights_frame():
    """The flights that departed, with ``dep_time`` in minutes after midnight and ``distance`` in miles.

    Cancelled flights (no departure time) are not part of this population; the bounds are public facts
    about the columns (a day; the longest route from New York is 4,983 miles), never derived from the data.
    """
    import pandas as pd

    from .data import dep_time_minutes, load_flights

    flights = load_flights(["dep_time", "distance"])
    df = pd.DataFrame({"dep_time": dep_time_minutes(flights["dep_time"].to_numpy()),
                       "distance": flights["distance"].to_numpy(dtype=np.float64)})
    return df[df["dep_time"].notna()].reset_index(drop=True)


def demo_distribution(out=None, *, epsilon=1.0, rng=None, plot_path=PLOT_PATH):
    """The accessor on the flights: privatize two columns, one per flight, and reconstruct both.

    Every flight reports **one** of its two columns (``strategy="one-column-per-row"``, the column drawn
    independently of the values) through Square Wave with ε, so each flight spends ε in total; the server
    estimates each column's distribution (EMS), mean (unbiased, with a 95% interval) and quartiles from the
    report columns alone, and measures the Wasserstein-1 distance to the truth. The comparison plot
    (:func:`ldpnum.plot.compare`, CDFs) is written to ``plot_path`` (None: no plot).

    Printed to ``out`` (default: ``sys.stdout`` at the time of the call). Returns 0.
    """
    from . import SquareWave, metrics

    out = sys.stdout if out is None else out
    df = flights_frame()
    mechanisms = {c: SquareWave(epsilon=epsilon, bounds=bounds) for c, (_, bounds) in DEMO_COLUMNS.items()}
    t0 = time.perf_counter()
    reports = df.ldp.privatize(mechanisms, rng=rng, strategy="one-column-per-row")
    t1 = time.perf_counter()
    estimates = {c: reports[c].ldp.estimate_distribution() for c in DEMO_COLUMNS}
    means = {c: reports[c].ldp.estimate_mean() for c in DEMO_COLUMNS}
    t2 = time.perf_counter()

    print(f"NYC flights 2013: {len(df):,} flights that departed; columns "
          + ", ".join(f"{c} ({unit}, bounds {bounds[0]:g}-{bounds[1]:g})" for c, (unit, bounds) in DEMO_COLUMNS.items()),
          file=out)
    print(f"reports = df.ldp.privatize({{dep_time: SquareWave, distance: SquareWave}}, epsilon = {epsilon:g}, "
          f'strategy="one-column-per-row")', file=out)
    counts = ", ".join(f"{c} {int(reports[c].notna().sum()):,}" for c in DEMO_COLUMNS)
    print(f"each flight reports one column: {counts} reports; epsilon per flight = {reports.ldp.epsilon_per_row:g} "
          f"(recorded in reports.attrs)", file=out)
    qs = (0.25, 0.5, 0.75)
    header = f"{'column':<10}{'statistic':<18}{'true':>10}{'estimated':>12}"
    print(header, file=out)
    print("-" * len(header), file=out)
    for c, (_, (lo, hi)) in DEMO_COLUMNS.items():
        truth = df[c].to_numpy()
        est, mean = estimates[c], means[c]
        ci_lo, ci_hi = mean.confidence_interval(0.95)
        rows = [("mean", truth.mean(), mean.value, f"  95% CI [{ci_lo:.1f}, {ci_hi:.1f}]")]
        rows += [(f"quantile {q:g}", t, e, "") for q, t, e in zip(qs, np.quantile(truth, qs), est.quantile(qs))]
        for i, (name, t, e, extra) in enumerate(rows):
            print(f"{c if i == 0 else '':<10}{name:<18}{t:>10.1f}{e:>12.1f}{extra}", file=out)
        w1, ks = metrics.wasserstein(est, truth), metrics.ks(est, truth)
        print(f"{'':<10}{'W1':<18}{'':>10}{w1 * (hi - lo):>12.1f}  ({w1:.4f} of the domain; KS {ks:.3f}; "
              f"EMS {est.n_bins} bins, {est.n_iter} iterations, converged = {est.converged})", file=out)
    print(f"time: privatize {1000 * (t1 - t0):.0f} ms (the first call in a process includes loading the compiled "
          f"kernels), estimate both columns {1000 * (t2 - t1):.0f} ms", file=out)
    if plot_path:
        _plot(df, estimates, epsilon, plot_path, out)
    return 0


def _plot(df, estimates, epsilon, plot_path, out):
    try:
        import matplotlib
    except ImportError:
        print("(matplotlib is not installed: no plot; pip install 'ldpnum[plot]')", file=out)
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from . import plot

    fig, axes = plt.subplots(1, len(estimates), figsize=(11, 4))
    for ax, (c, est) in zip(axes, estimates.items()):
        plot.compare(df[c], est, ax=ax, kind="cdf", labels=[f"Square Wave + EMS ({est.n_reports:,} reports)"])
        ax.set_xlabel(f"{c} ({DEMO_COLUMNS[c][0]})")
        ax.set_title(c)
    fig.suptitle(f"{len(df):,} flights, one column per flight, epsilon = {epsilon:g} per flight: estimate vs truth")
    os.makedirs(os.path.dirname(plot_path) or ".", exist_ok=True)
    fig.savefig(plot_path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"plot written to {os.path.abspath(plot_path)}", file=out)


def demo(out=None, *, epsilons=(0.5, 1.0, 2.0, 4.0), rng=None):
    """Privatize the flights' distances with every mean oracle and compare the estimates with the truth.

    Each of the 336,776 flights is one "person": its distance (miles, public bounds 0–5000) is randomized
    by the mechanism, and the mean is estimated from the reports alone. Uses secure randomness unless
    ``rng`` is given. Printed to ``out`` (default: ``sys.stdout`` at the time of the call).
    """
    from . import Duchi, Hybrid, Laplace, Piecewise, StochasticRounding
    from .data import load_flights

    out = sys.stdout if out is None else out
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
