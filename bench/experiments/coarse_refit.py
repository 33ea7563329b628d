"""Experiment (issue 16, point 1): refit EMS's coarse masses by maximum likelihood, keeping its shape.

If EMS's W1 came from biased *coarse* masses (its regularization toward the uniform start), a well-posed
maximum-likelihood refit of a few coarse masses would remove it: with EMS's estimate ``x`` split into ``C``
equal coarse buckets of masses ``w_c`` and within-bucket shapes ``s_i = x_i / w_c(i)``, EM over ``w`` alone
(``x_i = w_c(i) s_i``; ``C`` parameters) run to convergence. Beta(5, 2), n = 1e6, 1024 buckets, 4 seeds of
bench/dist_candidates.py; ratios W1/KS to EMS on the same aggregates.

    python bench/experiments/coarse_refit.py > bench/experiments/coarse_refit.out.md
"""
import sys
from pathlib import Path

import numpy as np
from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldpnum as ldp
from ldpnum.estimation.em import expectation_maximization, window_transition_from_plan
from dist_candidates import beta_sample

D = 1024
COARSE = (2, 4, 8, 16, 32)
F = beta(5, 2).cdf(np.linspace(0.0, 1.0, D + 1)[1:])


def errors(x):
    c = np.cumsum(x)
    return np.abs(c - F).mean(), np.abs(c - F).max()


def coarse_refit(counts, t, x, c, max_iter=20_000, tol=1e-10):
    n = np.asarray(counts, dtype=float)
    keep = n > 0
    group = np.repeat(np.arange(c), D // c)
    w = np.bincount(group, x, c)
    shape = x / w[group]
    for _ in range(max_iter):
        g = t.backward(np.where(keep, n / np.maximum(t.forward(w[group] * shape), 1e-300), 0.0))
        new = w * np.bincount(group, shape * g, c) / n.sum()
        done = np.abs(new - w).max() < tol
        w = new
        if done:
            break
    return w[group] * shape


def main(n=1_000_000, seeds=4):
    print("| ε | EMS W1 | EMS KS | " + " | ".join(f"C = {c}" for c in COARSE) + " |")
    print("|---:|---:|---:|" + "---:|" * len(COARSE))
    for eps in (0.5, 1.0, 2.0):
        sw = ldp.SquareWave(eps, (0.0, 1.0))
        t = window_transition_from_plan(sw.plan, D)
        res = {k: [] for k in ("ems",) + COARSE}
        for s in range(seeds):
            counts = sw.aggregate(sw.privatize(beta_sample(n, s), rng=2000 + s)).counts
            x = expectation_maximization(counts, t).x
            res["ems"].append(errors(x))
            for c in COARSE:
                res[c].append(errors(coarse_refit(counts, t, x, c)))
        w, k = np.mean(res["ems"], axis=0)
        print(f"| {eps:g} | {w:.5f} | {k:.5f} | " + " | ".join(
            f"{np.mean(res[c], axis=0)[0] / w:.2f} / {np.mean(res[c], axis=0)[1] / k:.2f}" for c in COARSE) + " |",
            flush=True)


if __name__ == "__main__":
    print(__doc__.split("\n\n")[0] + "\n")
    main()
