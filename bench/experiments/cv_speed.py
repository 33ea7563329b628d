"""Experiment (issue 16, point 2): cheaper level searches for ems-cv; same chosen level = same estimate.

Variants of ``ems_heldout``'s search (the final fit is unchanged, so a variant that picks the same level gives
the bit-identical estimate):

* ``base``: today's (32, 16, ..., 0 strongest first, warm-started chain, half fits stop at 1e-3 nats);
* ``step=X``: the same with the half fits stopping at X nats;
* ``c2f``: start at 8 from the uniform start, then 4; go down (2, 1, 0) while the score rises, else up
  (16, 32, each warm-started from the previous);
* ``c2f+step=X``: both.

Prints, per case, the level each variant picks and the iterations of its half fits.

    python bench/experiments/cv_speed.py
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldpnum as ldp
from ldpnum.estimation import em
from dist_candidates import beta_sample, lognormal_sample


def score(t, x, held, scored):
    return float(np.dot(held, np.log(np.maximum(t.forward(x)[scored], np.finfo(float).tiny))))


def search(n, t, order, step):
    a, b = em._thin(n, em.HELDOUT_SEED)
    scored = b > 0
    held = b[scored]
    fits, iters = {}, 0

    def fit(k, start):
        nonlocal iters
        x, it, _, _ = em._run(a, t, k, 10_000, 0.0, step, start)
        iters += it
        fits[k] = (x, score(t, x, held, scored))
        return fits[k]

    if order == "base":
        best_k, best, x = None, None, None
        for k in em.SMOOTHING_LEVELS:
            x, s = fit(k, x)
            if best is not None and not s > best:
                break
            best_k, best = k, s
        return best_k, iters
    x8, s8 = fit(8, None)
    x4, s4 = fit(4, x8)
    if s4 > s8:
        best_k, best, x = 4, s4, x4
        for k in (2, 1, 0):
            x, s = fit(k, x)
            if not s > best:
                break
            best_k, best = k, s
        return best_k, iters
    best_k, best, x = 8, s8, x8
    for k in (16, 32):
        x, s = fit(k, x)
        if not s > best:
            break
        best_k, best = k, s
    return best_k, iters


def cases():
    from ldpnum.demo import flights_frame
    df = flights_frame()
    dep, dist = df["dep_time"].to_numpy(float), df["distance"].to_numpy(float)
    for s in range(3):
        for eps in (0.5, 1.0, 2.0, 4.0):
            yield f"beta 1e5 s{s}", (0, 1), beta_sample(100_000, s), eps, s
            yield f"beta 1e6 s{s}", (0, 1), beta_sample(1_000_000, s), eps, s
            yield f"lognormal s{s}", (0, 5000), lognormal_sample(100_000, s), eps, s
            if s == 0:
                yield "dep_time", (0, 1440), dep, eps, s
                yield "distance", (0, 4983), dist, eps, s


VARIANTS = [("base", 1e-3), ("base", 3e-3), ("base", 1e-2), ("c2f", 1e-3), ("c2f", 3e-3)]
print("| case | ε | " + " | ".join(f"{o} {s:g}" for o, s in VARIANTS) + " |")
print("|---|---:|" + "---|" * len(VARIANTS))
tot = {v: 0 for v in VARIANTS}
agree = {v: 0 for v in VARIANTS}
count = 0
for name, bounds, x, eps, s in cases():
    sw = ldp.SquareWave(eps, bounds)
    agg = sw.aggregate(sw.privatize(x, rng=2000 + s))
    t = em.window_transition_from_plan(sw.plan, 1024)
    n = em._check_counts(agg.counts, t.n_cells)
    out = {v: search(n, t, *v) for v in VARIANTS}
    ref = out[VARIANTS[0]][0]
    count += 1
    for v in VARIANTS:
        tot[v] += out[v][1]
        agree[v] += out[v][0] == ref
    print(f"| {name} | {eps:g} | " + " | ".join(f"k={out[v][0]} ({out[v][1]})" for v in VARIANTS) + " |",
          flush=True)
print()
print("| variant | same level as base | half-fit iterations (sum) |")
print("|---|---:|---:|")
for v in VARIANTS:
    print(f"| {v[0]} {v[1]:g} | {agree[v]}/{count} | {tot[v]} |")
