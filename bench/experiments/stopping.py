"""Experiment (issue 16, point 1): data-driven *stopping* as the regularizer, the lever not measured before.

EM and EMS (1 pass) from the uniform start, NumPy loop over the library's exact transition (the kernel's
iteration, checked to match it), Beta(5, 2), 1024 buckets, 5 seeds of bench/dist_candidates.py. Along each
path:

* ``oracle``: the iteration with the lowest W1 knowing the truth (an upper bound of any stopping rule), and
  its KS; ``oracle KS``: the lowest KS on the path;
* ``discrepancy``: Morozov's discrepancy principle for counts: stop at the first iteration whose Pearson
  statistic ``Σ_j (c_j − n (M x)_j)² / (n (M x)_j)`` falls to its expectation under the model, the number of
  output cells minus one;
* ``held-out``: thin the counts (binomial ½, the seed of ``ems_heldout``), run the path on one half, take the
  iteration ``t*`` with the best held-out log-likelihood of the other half, run the full counts ``t*``
  iterations (EM's iterations do not depend on the sample size, only on the proportions).

Ratios W1/KS to the library's EMS (1e-3-nat stop) on the same aggregates.

    python bench/experiments/stopping.py > bench/experiments/stopping.out.md
"""
import sys
from pathlib import Path

import numpy as np
from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldpnum as ldp
from ldpnum.estimation.em import HELDOUT_SEED, _thin, expectation_maximization, window_transition_from_plan
from dist_candidates import beta_sample, smooth_edges

D = 1024
SEEDS = 5
MAX_ITER = 6000
F = beta(5, 2).cdf(np.linspace(0.0, 1.0, D + 1)[1:])


def errors(x):
    c = np.cumsum(x)
    return np.abs(c - F).mean(), np.abs(c - F).max()


def path(counts, t, smooth, max_iter=MAX_ITER, heldout=None):
    """Run EM/EMS ``max_iter`` iterations; yield per iteration ``(x, pearson, heldout loglik)``."""
    n = np.asarray(counts, dtype=float)
    keep = n > 0
    total = n.sum()
    x = np.full(D, 1.0 / D)
    for _ in range(max_iter):
        y = t.forward(x)
        x = x * t.backward(np.where(keep, n / np.maximum(y, 1e-300), 0.0))
        x = x / x.sum()
        if smooth:
            x = smooth_edges(x, "reflect")
        y = t.forward(x)
        pearson = float(np.sum((n - total * y) ** 2 / (total * y)))
        held = None if heldout is None else float(np.dot(heldout[heldout > 0], np.log(y[heldout > 0])))
        yield x, pearson, held


def main():
    print("| n | ε | method | EMS W1 | EMS KS | oracle W1/KS (iteration) | oracle KS | discrepancy W1/KS (iteration) | "
          "held-out W1/KS (iteration) |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in (100_000, 1_000_000):
        for eps in (0.5, 1.0, 2.0, 4.0):
            sw = ldp.SquareWave(eps, (0.0, 1.0))
            t = window_transition_from_plan(sw.plan, D)
            for smooth in (False, True):
                acc = []
                for s in range(SEEDS):
                    counts = np.asarray(sw.aggregate(sw.privatize(beta_sample(n, s), rng=2000 + s)).counts, float)
                    base = errors(expectation_maximization(counts, t).x)
                    errs, disc = [], None
                    for it, (x, pearson, _) in enumerate(path(counts, t, smooth), start=1):
                        errs.append(errors(x))
                        if disc is None and pearson <= t.n_cells - 1:
                            disc = (it, errs[-1])
                    errs = np.array(errs)
                    best = int(np.argmin(errs[:, 0]))
                    a, b = _thin(counts, HELDOUT_SEED)
                    helds = [h for _, _, h in path(a, t, smooth, heldout=b)]
                    t_star = int(np.argmax(helds))
                    acc.append((base, errs[best], best + 1, errs[:, 1].min(), disc, errs[t_star], t_star + 1))
                w = np.mean([r[0][0] for r in acc])
                k = np.mean([r[0][1] for r in acc])

                def ratio(vals):
                    return f"{np.mean([v[0] for v in vals]) / w:.2f} / {np.mean([v[1] for v in vals]) / k:.2f}"

                discs = [r[4] for r in acc if r[4] is not None]
                disc_txt = (f"{ratio([d[1] for d in discs])} ({int(np.median([d[0] for d in discs]))}; "
                            f"{len(discs)}/{SEEDS} reached)" if discs else f"never within {MAX_ITER}")
                print(f"| {n:.0e} | {eps:g} | {'EMS' if smooth else 'EM'} | {w:.5f} | {k:.5f} | "
                      f"{ratio([r[1] for r in acc])} ({int(np.median([r[2] for r in acc]))}) | "
                      f"{np.mean([r[3] for r in acc]) / k:.2f} | {disc_txt} | "
                      f"{ratio([r[5] for r in acc])} ({int(np.median([r[6] for r in acc]))}) |", flush=True)


if __name__ == "__main__":
    print(__doc__.split("\n\n")[0] + "\n")
    main()
