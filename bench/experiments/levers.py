"""Experiment (issue 16, point 4): levers not tried before, on Beta(5, 2), n = 1e6, ε ∈ {0.5, 1, 2}, 5 seeds
(the seeds of bench/dist_candidates.py), 1024 buckets; W1 / KS ratios to EMS on the same aggregates.

* boundary handling of the EMS smoothing (NumPy EMS, same start and 1e-3-nat stop as the kernel):
  ``reflect`` (the kernel's: x_{-1} = x_0, mass-preserving; checked to reproduce the kernel), ``zero``
  (zero padding: the edge bucket leaks a quarter of its mass, then renormalise: pulls the density to 0 at
  the edges, as Beta(5, 2)'s), ``renorm`` (the truncated kernel renormalised per bucket, (2 x_0 + x_1)/3);
* "EMS to convergence" (a penalized-likelihood fixed point instead of EMS's early stop): the kernel with
  k ∈ {1, 2, 4, 8} passes run to a relative change of 1e-12 (at most 20,000 iterations); the best k chosen
  knowing the truth (an upper bound of the lever);
* a Haar-wavelet thresholded estimator: plain EM (1e-3-nat stop), Haar transform of the 1024 bucket masses,
  detail coefficients soft-thresholded at c·sqrt(s/n) (s the mass under the coefficient's support: the
  multinomial scale), c ∈ {0.5, 1, 2, 4, 8, 16, 32, 64} with the best c chosen knowing the truth (upper bound).

    python bench/experiments/levers.py
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldpnum as ldp
from ldpnum import metrics
from ldpnum._results import DistributionEstimate
from ldpnum.estimation.em import expectation_maximization, window_transition_from_plan
from dist_candidates import beta_sample, ems_edges, haar_threshold


def score(p, x):
    est = DistributionEstimate(np.linspace(0, 1, p.size + 1), p)
    return metrics.wasserstein(est, x), metrics.ks(est, x)


res = {}
for eps in (0.5, 1.0, 2.0):
    sw = ldp.SquareWave(eps, (0, 1))
    t = window_transition_from_plan(sw.plan, 1024)
    for s in range(5):
        x = beta_sample(1_000_000, s)
        agg = sw.aggregate(sw.privatize(x, rng=2000 + s))
        counts = np.asarray(agg.counts, dtype=float)
        n = counts.sum()
        out = {"ems": expectation_maximization(counts, t).x}
        for mode in ("reflect", "zero", "renorm"):
            out[f"ems-{mode}"] = ems_edges(counts, t, mode)
        for k in (1, 2, 4, 8):
            out[f"fixpt-k{k}"] = expectation_maximization(counts, t, smoothing=k, tol=1e-12, max_iter=20_000).x
        em = expectation_maximization(counts, t, method="em").x
        for c in (0.5, 1, 2, 4, 8, 16, 32, 64):
            out[f"haar-c{c:g}"] = haar_threshold(em, n, c)
        for k, p in out.items():
            res.setdefault((eps, k), []).append(score(np.maximum(p, 0) / np.maximum(p, 0).sum(), x))
    base = np.mean(res[(eps, "ems")], axis=0)
    print(f"\n### ε = {eps:g}: EMS W1 {base[0]:.5f}, KS {base[1]:.5f}\n\n| method | W1/ems | KS/ems |\n|---|---:|---:|")
    for (e, k), v in res.items():
        if e == eps:
            m = np.mean(v, axis=0)
            print(f"| {k} | {m[0] / base[0]:.3f} | {m[1] / base[1]:.3f} |", flush=True)
