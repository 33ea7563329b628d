"""Held-out smoothing rules of ``ems-cv`` side by side, from one set of fits per collection.

For every collection: thin the counts once (``HELDOUT_SEED``), fit every level of ``SMOOTHING_LEVELS`` on each
half (warm chain, as ``ems_heldout`` does) and score it on the other half, keeping the per-cell held-out
terms; fit the full counts at every final level. Every rule is then a look-up:

* ``first-drop``: the rule of ``ems_heldout`` before this change (stop at the first level that scores lower);
* ``se-all z``: a weaker level must gain more than ``z`` standard errors of the gain (each step);
* ``se-zero z``: as ``first-drop``, but the step to level 0 (no smoothing) must gain more than ``z`` SE;
* ``cross``: ``first-drop`` on the summed scores of both directions (fit a score b + fit b score a);
* ``cross-se-zero z``: cross-fitted scores, and the step to 0 must gain more than ``z`` SE of the summed gain.

The SE of a gain ``G = Σ_j b_j Δ_j`` (``Δ_j`` the change of ``log (M x)_j`` between the two levels) is the
multinomial one given the fit, ``sqrt(Σ_j b_j Δ_j² - G²/N_b)``.

Kept from this (``ems_heldout``'s docstring has the figures): ``se-zero 2`` stopped the small-n failures but
also real spikes (log-normal n = 1e5, ε = 4; the flights' distances at n = 328,521); ``cross`` and
``cross-se-zero`` changed smooth data's levels too and doubled the search. The default confirms level 0 on the
second fold only (both folds' gains summed, 0.5 SE), measured against the old rule in
``bench/ems_cv_small_n.py``.

Runs alone: ``python bench/experiments/cv_rules.py [--runs 200] [--eps ...] [--only NAME]``; prints markdown.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE.parent))

import ldpnum as ldp  # noqa: E402
from ldpnum import data as ldp_data, metrics  # noqa: E402
from ldpnum._results import DistributionEstimate  # noqa: E402
from ldpnum.estimation.distribution import default_n_bins  # noqa: E402
from ldpnum.estimation.em import (HELDOUT_LOGLIK_STEP, HELDOUT_SEED, SMOOTHING_LEVELS, _final_level,  # noqa: E402
                                  _level_grid, _regrid, _run, _thin, window_transition_from_plan)

LEVELS = list(SMOOTHING_LEVELS)


def chain(fit_counts, t):
    """log (M x_k) at every cell for every level (warm chain, coarse grids as ems_heldout fits them)."""
    grids, x, logs = {}, None, []
    for k in LEVELS:
        d_k, passes = _level_grid(k, t.n_bins)
        t_k = grids.setdefault(d_k, t.with_bins(d_k))
        x, _, _, _ = _run(fit_counts, t_k, passes, 10_000, 0.0, HELDOUT_LOGLIK_STEP, _regrid(x, d_k))
        logs.append(np.log(np.maximum(t_k.forward(x), np.finfo(float).tiny)))
    return np.array(logs)


def collection(sw, t, x):
    agg = sw.aggregate(sw.privatize(x, rng=np.random.default_rng()))
    n = np.ascontiguousarray(agg.counts, dtype=np.float64)
    a, b = _thin(n, HELDOUT_SEED)
    la, lb = chain(a, t), chain(b, t)          # fits on a (score with b) and on b (score with a)
    finals = {}
    for k in sorted({_final_level(k) for k in LEVELS}):
        xf, *_ = _run(n, t, k, 10_000, 0.0, 1e-3, None)
        est = DistributionEstimate(np.linspace(*sw.bounds, t.n_bins + 1), xf / xf.sum())
        finals[k] = (metrics.wasserstein(est, x), metrics.ks(est, x))
    return dict(a=a, b=b, la=la, lb=lb, finals=finals)


def gains(held, logs, i):
    """(gain, SE) of level i over level i - 1 on the held-out counts."""
    d = logs[i] - logs[i - 1]
    g = float(np.dot(held, d))
    v = float(np.dot(held, d * d)) - g * g / held.sum()
    return g, np.sqrt(max(v, 0.0))


def pick(c, rule, z=1.0):
    best = 0
    for i in range(1, len(LEVELS)):
        g, se = gains(c["b"], c["la"], i)
        if rule.startswith("cross"):
            g2, se2 = gains(c["a"], c["lb"], i)
            g, se = g + g2, np.hypot(se, se2)
        need = 0.0
        if rule in ("se-all",) or (rule in ("se-zero", "cross-se-zero") and LEVELS[i] == 0):
            need = z * se
        if not g > need:
            break
        best = i
    return LEVELS[best]


RULES = [("first-drop", None), ("se-all", 1.0), ("se-zero", 0.5), ("se-zero", 1.0), ("se-zero", 2.0),
         ("cross", None), ("cross-se-zero", 0.5), ("cross-se-zero", 1.0), ("cross-se-zero", 2.0)]


def data_sets():
    from vega_datasets import local_data

    temps = local_data.seattle_temps()["temp"].to_numpy(dtype=np.float64)
    f = ldp_data.load_flights()
    dep = f["dep_time"].dropna().to_numpy(dtype=np.float64)
    dep = np.asarray(ldp_data.dep_time_minutes(dep), dtype=np.float64)
    dist = f["distance"].to_numpy(dtype=np.float64)
    return temps, dep, dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--eps", type=float, nargs="*", default=[0.5, 1.0, 2.0, 4.0])
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    temps, dep, dist = data_sets()
    rng = np.random.default_rng(7)
    cases = [("seattle temp (30, 80)", (30.0, 80.0), lambda: temps), ("seattle temp (0, 100)", (0.0, 100.0), lambda: temps)]
    for n in (2000, 30_000):
        cases.append((f"flights dep_time n={n}", (0.0, 1440.0), lambda n=n: rng.choice(dep, n, replace=False)))
        cases.append((f"flights distance n={n}", (0.0, 4983.0), lambda n=n: rng.choice(dist, n, replace=False)))
        cases.append((f"Beta(5,2) n={n}", (0.0, 1.0), lambda n=n: rng.beta(5, 2, n)))
    def lognormal(n, high=5000.0):
        x = rng.lognormal(3.0, 1.5, n)
        while (bad := x > high).any():
            x[bad] = rng.lognormal(3.0, 1.5, int(bad.sum()))
        return x

    cases.append(("log-normal n=100000", (0.0, 5000.0), lambda: lognormal(100_000)))
    cases.append(("Beta(5,2) n=100000", (0.0, 1.0), lambda: rng.beta(5, 2, 100_000)))
    cases.append(("full flights distance", (0.0, 4983.0), lambda: dist))
    cases.append(("full flights dep_time", (0.0, 1440.0), lambda: dep))
    print("| data | ε | rule | share k=0 | levels | W1 mean | W1 p90 | KS mean | KS p90 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, bounds, sample in cases:
        if args.only not in name:
            continue
        for eps in args.eps:
            sw = ldp.SquareWave(eps, bounds)
            t0 = time.perf_counter()
            cols = []
            for _ in range(args.runs):
                x = sample()
                t = window_transition_from_plan(sw.plan, default_n_bins(len(x)))
                cols.append(collection(sw, t, x))
            for rule, z in RULES:
                ks_, w1_, lv = [], [], []
                for c in cols:
                    k = pick(c, rule, z or 1.0)
                    lv.append(k)
                    w, s = c["finals"][_final_level(k)]
                    w1_.append(w)
                    ks_.append(s)
                lv = np.array(lv)
                hist = " ".join(f"{k}:{np.mean(lv == k):.2f}" for k in LEVELS if np.any(lv == k))
                label = rule if z is None else f"{rule} {z:g}"
                z0 = [gains(c["b"], c["la"], len(LEVELS) - 1) for c in cols]
                zz = np.array([g / max(se, 1e-300) for g, se in z0])
                print(f"<!-- gain/SE of 1->0: median {np.median(zz):.2f}, share >1 {np.mean(zz > 1):.2f} -->")
                print(f"| {name} | {eps:g} | {label} | {np.mean(lv == 0):.3f} | {hist} | {np.mean(w1_):.4f} | "
                      f"{np.quantile(w1_, 0.9):.4f} | {np.mean(ks_):.4f} | {np.quantile(ks_, 0.9):.4f} |",
                      flush=True)
            print(f"<!-- {name} ε={eps}: {time.perf_counter() - t0:.1f} s -->", flush=True)


if __name__ == "__main__":
    main()
