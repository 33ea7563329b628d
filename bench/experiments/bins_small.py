"""Experiment (issue 16, point 1): which bucket count suits ems-cv at small n (1e3 .. 1e5)?

ems-cv (the default) at 64 .. 1024 buckets on Beta(5, 2) and the two-Gaussian mixture of the ranges bench,
ε ∈ {0.5, 1, 2}, 5 seeds; W1 / KS / range MSE as in ``bins.py``.

    python bench/experiments/bins_small.py
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bins import data, ldp, queries, score  # noqa: E402

DS = (64, 128, 256, 512, 1024)
qs = [queries((0, 1), v, 1000, 7 + i) for i, v in enumerate((0.1, 0.5))]
print("| data | n | ε | " + " | ".join(f"ems-cv@{d}" for d in DS) + " |")
print("|---|---:|---:|" + "---:|" * len(DS))
for name in ("beta", "mixture"):
    for n in (1_000, 10_000, 30_000, 100_000):
        for eps in (0.5, 1.0, 2.0):
            sw = ldp.SquareWave(eps, (0, 1))
            res = {d: [] for d in DS}
            for s in range(5):
                x = data(name, n, s)
                xs = np.sort(x)
                agg = sw.aggregate(sw.privatize(x, rng=2000 + s))
                for d in DS:
                    p = sw.estimate_distribution(agg, n_bins=d).probabilities
                    res[d].append(score(np.asarray(p), x, xs, qs))
            cells = [("{:.4f}/{:.4f}/{:.2e}").format(*np.mean(res[d], axis=0)) for d in DS]
            print(f"| {name} | {n:.0e} | {eps:g} | " + " | ".join(cells) + " |", flush=True)
