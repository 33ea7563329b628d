"""Experiment (issue 16, point 1): 512 vs 1024 vs 2048 buckets for Square Wave + EMS / ems-cv.

W1, KS (exact, unit scale) and range MSE (1000 ranges each of volume 0.1 and 0.5, the ranges bench's
queries) on Beta(5, 2) and the ranges bench's two-Gaussian mixture, ε ∈ {0.5, 0.8, 1, 2}, n = 1e5 / 1e6,
3 seeds. Also ``ems`` at 1024 buckets with 4 smoothing passes (``k4@1024``): 4 passes of the ½, ¼, ¼ filter
at 1024 buckets have the variance (2 buckets² = 0.5 coarse buckets²) of one pass at 512, so if it tracks
``ems@512`` the coarse grid's loss is EMS's smoothing, not information. ``em`` at 512/1024 (plain EM, no
smoothing) separates the model's resolution from the smoothing.

    python bench/experiments/bins.py [--seeds 3] > out.md
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldpnum as ldp
from ldpnum import metrics
from ldpnum._results import DistributionEstimate
from ldpnum.estimation.em import expectation_maximization, window_transition_from_plan
from ranges import queries, sample, truth


def data(name, n, s):
    if name == "beta":
        return np.random.default_rng(1000 + s).beta(5, 2, n)
    return sample("mixture", n, 100 + s)[0]


def score(p, x, xs, qs):
    est = DistributionEstimate(np.linspace(0, 1, len(p) + 1), p)
    err = np.concatenate([np.asarray(est.range(lo, hi)) - truth(xs, lo, hi) for lo, hi in qs])
    return metrics.wasserstein(est, x), metrics.ks(est, x), float(np.mean(err ** 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--eps", type=float, nargs="*", default=[0.5, 0.8, 1.0, 2.0])
    ap.add_argument("--n", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--data", nargs="*", default=["beta", "mixture"])
    args = ap.parse_args()
    qs = [queries((0, 1), v, 1000, 7 + i) for i, v in enumerate((0.1, 0.5))]
    cols = [("ems-cv", 512), ("ems-cv", 1024), ("ems-cv", 2048), ("ems", 512), ("ems", 1024), ("ems", 2048),
            ("k4", 1024), ("em", 512), ("em", 1024)]
    print("| data | n | ε | " + " | ".join(f"{m}@{d}" for m, d in cols) + " |")
    print("|---|---:|---:|" + "---:|" * len(cols))
    for name in args.data:
        for n in args.n:
            for eps in args.eps:
                sw = ldp.SquareWave(eps, (0, 1))
                res = {c: [] for c in cols}
                for s in range(args.seeds):
                    x = data(name, n, s)
                    xs = np.sort(x)
                    agg = sw.aggregate(sw.privatize(x, rng=2000 + s))
                    for m, d in cols:
                        if m == "k4":
                            p = expectation_maximization(agg.counts, window_transition_from_plan(sw.plan, d),
                                                         smoothing=4).x
                        else:
                            p = sw.estimate_distribution(agg, n_bins=d, method=m).probabilities
                        res[(m, d)].append(score(np.asarray(p), x, xs, qs))
                cells = []
                for c in cols:
                    w1, ks, mse = np.mean(res[c], axis=0)
                    cells.append(f"{w1:.4f}/{ks:.4f}/{mse:.2e}")
                print(f"| {name} | {n:.0e} | {eps:g} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
