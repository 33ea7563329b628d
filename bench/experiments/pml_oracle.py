"""Experiment (issue 16, point 1): the penalized-likelihood family's upper bound — for each cell and seed
the λ (half-decade grid) with the lowest W1 chosen knowing the truth, fitted on all counts; Beta(5, 2),
n = 1e5 and 1e6, ε ∈ {0.5, 1, 2, 4}, 1024 buckets, 3 seeds; W1 / KS ratios to EMS (mean over seeds first).

    python bench/experiments/pml_oracle.py ORDER [log|p]
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldpnum as ldp
from dist_candidates import beta_sample, estimate, penalized_ml, scores, window_transition_from_plan

order = int(sys.argv[1])
on = sys.argv[2] if len(sys.argv) > 2 else "log"
lams = [10.0 ** (e / 2) for e in range(14, -5, -1)]
print(f"order {order}, penalty on {on}\n\n| n | ε | W1/ems | KS/ems | oracle λ per seed |\n|---:|---:|---:|---:|---|")
for n in (100_000, 1_000_000):
    for eps in (0.5, 1.0, 2.0, 4.0):
        sw = ldp.SquareWave(eps, (0.0, 1.0))
        t = window_transition_from_plan(sw.plan, 1024)
        e_w, e_k, o_w, o_k, lam_best = [], [], [], [], []
        for s in range(3):
            x = beta_sample(n, s)
            agg = sw.aggregate(sw.privatize(x, rng=2000 + s))
            se = scores(estimate(sw, agg, "ems")[0], (0, 1), x)
            e_w.append(se["w1"]), e_k.append(se["ks"])
            start, best = None, None
            for lam in lams:
                p = penalized_ml(np.asarray(agg.counts, float), t, lam, order, on, start=start)
                start = p
                sc = scores(p, (0, 1), x)
                if best is None or sc["w1"] < best[0]:
                    best = (sc["w1"], sc["ks"], lam)
            o_w.append(best[0]), o_k.append(best[1]), lam_best.append(best[2])
        print(f"| {n:.0e} | {eps:g} | {np.mean(o_w) / np.mean(e_w):.2f} | {np.mean(o_k) / np.mean(e_k):.2f} | "
              f"{' '.join(f'{v:.0e}' for v in lam_best)} |", flush=True)
