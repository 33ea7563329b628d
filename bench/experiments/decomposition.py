"""Experiment (issue 16, point 1): where Square Wave + EMS's error comes from, and two more levers.

Beta(5, 2), 1024 buckets, ε ∈ {0.5, 1, 2, 4}, n ∈ {1e5, 1e6}, 8 seeds (samples and privatizations of
bench/dist_candidates.py's seeds). Columns:

* ``W1``, ``KS``: mean over the seeds of EMS's error against Beta(5, 2)'s CDF (binned, unit scale);
* ``bias``: the error of the seeds' mean CDF (what stays when the noise is averaged away; it still holds
  1/8 of the variance);
* ``noise-free``: EMS run on the *expected* counts ``n·M p`` — no sampling or randomization noise at all, so
  this is the estimator's deterministic error (smoothing and early-stopping bias);
* ``start=truth``: EMS started from the true bucket distribution instead of the uniform one (an oracle: no
  estimator can know it; it shows how much the stopped iteration's path matters);
* ``linear edges``: the smoothing pass extrapolates the density linearly past the bounds
  (``x_{-1} = max(2 x_0 - x_1, 0)``) instead of reflecting it, so a density with a slope at the bound is not
  flattened there (a boundary-corrected kernel, as local-linear smoothing); ratio to EMS, noise-free and
  over the seeds.

And the mixed-bandwidth lever: people split evenly between two or three Square Wave bandwidths
(factors of the default b), one EMS fitted jointly to both aggregates (the E-step sums the groups'
back-projections), so the frequencies the default window's transfer function nearly zeroes (about
1/(2b) cycles per unit) are seen through another window; 3 seeds, n = 1e6.

    python bench/experiments/decomposition.py > bench/experiments/decomposition.out.md
"""
import sys
from pathlib import Path

import numpy as np
from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldpnum as ldp
from ldpnum.estimation.em import expectation_maximization, window_transition_from_plan
from dist_candidates import beta_sample, smooth_edges

D = 1024
SEEDS = 8
EDGES = np.linspace(0.0, 1.0, D + 1)
F = beta(5, 2).cdf(EDGES[1:])
P_TRUE = np.diff(np.r_[0.0, F])


def errors(p):
    c = np.cumsum(p)
    return np.abs(c - F).mean(), np.abs(c - F).max()


def smooth_linear(x):
    return smooth_edges(x, "linear")


def ems_np(parts, smoother, atol=1e-3, max_iter=10_000):
    """EMS in NumPy on one or more (counts, transition) pairs sharing the input buckets (uniform start,
    stop after the first iteration gaining less than ``atol`` nats: the kernel's rule)."""
    ns = [np.asarray(c, dtype=float) for c, _ in parts]
    total = sum(n.sum() for n in ns)
    x = np.full(D, 1.0 / D)

    def loglik(x):
        return sum(float(np.dot(n[n > 0], np.log(np.maximum(t.forward(x)[n > 0], 1e-300))))
                   for n, (_, t) in zip(ns, parts))

    prev = loglik(x)
    for _ in range(max_iter):
        g = np.zeros(D)
        for n, (_, t) in zip(ns, parts):
            g += t.backward(np.where(n > 0, n / np.maximum(t.forward(x), 1e-300), 0.0))
        x = smoother(x * g / total)
        cur = loglik(x)
        if abs(cur - prev) < atol:
            break
        prev = cur
    return x


def decomposition():
    print("| n | ε | EMS W1 | bias W1 | noise-free W1 | EMS KS | bias KS | noise-free KS | start=truth W1/KS "
          "(ratio) | linear edges noise-free W1/KS (ratio) | linear edges W1/KS (ratio) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (100_000, 1_000_000):
        for eps in (0.5, 1.0, 2.0, 4.0):
            sw = ldp.SquareWave(eps, (0.0, 1.0))
            t = window_transition_from_plan(sw.plan, D)
            runs = {"ems": [], "truth": [], "linear": []}
            for s in range(SEEDS):
                agg = sw.aggregate(sw.privatize(beta_sample(n, s), rng=2000 + s))
                runs["ems"].append(expectation_maximization(agg.counts, t).x)
                runs["truth"].append(expectation_maximization(agg.counts, t, start=P_TRUE + 1e-12).x)
                runs["linear"].append(ems_np([(agg.counts, t)], smooth_linear))
            mean = {k: np.mean([errors(p) for p in v], axis=0) for k, v in runs.items()}
            bias = errors(np.mean(runs["ems"], axis=0))
            expected = n * t.forward(P_TRUE)
            nf = errors(expectation_maximization(expected, t).x)
            nf_lin = errors(ems_np([(expected, t)], smooth_linear))
            w, k = mean["ems"]
            print(f"| {n:.0e} | {eps:g} | {w:.5f} | {bias[0]:.5f} | {nf[0]:.5f} | {k:.5f} | {bias[1]:.5f} | "
                  f"{nf[1]:.5f} | {mean['truth'][0] / w:.2f} / {mean['truth'][1] / k:.2f} | "
                  f"{nf_lin[0] / nf[0]:.2f} / {nf_lin[1] / nf[1]:.2f} | "
                  f"{mean['linear'][0] / w:.2f} / {mean['linear'][1] / k:.2f} |", flush=True)


def mixed_bandwidths(n=1_000_000, seeds=3):
    designs = [(1.0,), (1.0, 0.5), (1.0, 0.6), (1.0, 0.7), (1.4, 0.7), (1.0, 0.55, 0.3)]
    print("\n| ε | bandwidth factors (equal groups) | W1 | KS | W1/one window | KS/one window |")
    print("|---:|---|---:|---:|---:|---:|")
    for eps in (0.5, 1.0, 2.0):
        b0 = ldp.SquareWave(eps, (0.0, 1.0)).bandwidth
        base = None
        for factors in designs:
            mechs = [ldp.SquareWave(eps, (0.0, 1.0), bandwidth=b0 * f) for f in factors]
            errs = []
            for s in range(seeds):
                x = beta_sample(n, s)
                group = np.random.default_rng(5000 + s).integers(0, len(mechs), size=n)
                parts = [(m.aggregate(m.privatize(x[group == g], rng=2000 + 17 * s + g)).counts,
                          window_transition_from_plan(m.plan, D)) for g, m in enumerate(mechs)]
                errs.append(errors(ems_np(parts, lambda v: smooth_edges(v, "reflect"))))
            w, k = np.mean(errs, axis=0)
            base = base or (w, k)
            print(f"| {eps:g} | {', '.join(f'{f:g}' for f in factors)} | {w:.5f} | {k:.5f} | {w / base[0]:.2f} | "
                  f"{k / base[1]:.2f} |", flush=True)


if __name__ == "__main__":
    print(__doc__.split("\n\n")[0] + "\n")
    decomposition()
    mixed_bandwidths()
