"""Experiment (issue 16, point 1): bias-reducing estimators against SW + EMS on Beta(5, 2), n = 1e5 and 1e6,
ε ∈ {0.5, 1, 2, 4}, 1024 buckets, the seeds of bench/dist_candidates.py; W1 / KS ratios to EMS on the same
aggregates (mean over seeds of each metric, then the ratio), and the level each held-out rule picked.

    python bench/experiments/bias.py [--seeds 3] [--n 1e5,1e6] [--methods twice-cv,pml2-cv] [--eps 0.5,1,2,4]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldpnum as ldp
from dist_candidates import beta_sample, estimate, lognormal_sample, scores

ap = argparse.ArgumentParser()
ap.add_argument("--seeds", type=int, default=3)
ap.add_argument("--n", default="1e5,1e6")
ap.add_argument("--eps", default="0.5,1,2,4")
ap.add_argument("--methods", default="ems-cv,twice-cv")
ap.add_argument("--data", default="beta")
args = ap.parse_args()
methods = ["ems"] + args.methods.split(",")
sample = {"beta": beta_sample, "lognormal": lognormal_sample}[args.data]
bounds = (0.0, 1.0) if args.data == "beta" else (0.0, 5000.0)
print("| n | ε | method | W1 | KS | W1/ems | KS/ems | ms | levels |\n|---:|---:|---|---:|---:|---:|---:|---:|---|")
for n in (int(float(v)) for v in args.n.split(",")):
    for eps in (float(v) for v in args.eps.split(",")):
        sw = ldp.SquareWave(eps, bounds)
        acc = {m: [] for m in methods}
        for s in range(args.seeds):
            x = sample(n, s)
            agg = sw.aggregate(sw.privatize(x, rng=2000 + s))
            for m in methods:
                p, sec, info = estimate(sw, agg, m, with_info=True)
                sc = scores(p, bounds, x)
                acc[m].append((sc["w1"], sc["ks"], 1000 * sec, info))
        base = np.mean([r[0] for r in acc["ems"]]), np.mean([r[1] for r in acc["ems"]])
        for m in methods:
            w1, ks, ms = (np.mean([r[i] for r in acc[m]]) for i in range(3))
            print(f"| {n:.0e} | {eps:g} | {m} | {w1:.4f} | {ks:.4f} | {w1 / base[0]:.2f} | {ks / base[1]:.2f} | "
                  f"{ms:.0f} | {' '.join(str(r[3]) for r in acc[m])} |", flush=True)
