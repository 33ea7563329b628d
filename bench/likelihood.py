"""Likelihood-based randomized response (``make bench``, section ``likelihood``): coverage of the likelihood-ratio
interval of ``estimate_mean(..., method="mle")`` against the default (Wald-type) interval of the unbiased estimate.

Randomized response (``ldp.RandomizedResponse``), people drawn at random from a population with a proportion
``p`` of ones: the number ``y`` of reported ones among ``n`` is Binomial(n, θ), ``θ = q + p (p1 - q)`` with the
plan's exact probabilities. Coverage is computed exactly, by enumeration over the count:
``coverage = Σ_y P(y) · 1[p ∈ CI(y)]`` (counts with probability below 1e-14 are left out, less than 1e-10 in all),
for each interval as ldpnum computes it from the aggregate ``[n - y, y]``:

- LR: ``estimate_mean(agg, method="mle").confidence_interval(0.95)``, the likelihood-ratio interval;
- Wald: ``estimate_mean(agg).confidence_interval(0.95)``, the default: the unbiased estimate ± Student's t times
  the standard error (variance floored at the worst case up to 30 reports, ``ldpnum.estimation.mean``).

Grid: n ∈ {20, 50, 200, 10^4}, p ∈ {0.01, 0.1, 0.5}, ε ∈ {0.5, 1, 2}, level 95%. Also the mean width of each
interval (the Wald interval's part inside [0, 1]) and how often the unbiased estimate leaves [0, 1].

GRR (k = 3) frequencies by simulation (2,000 collections per cell, counts drawn from the plan's exact multinomial
cell probabilities, seed 0): per-category coverage of the profile-likelihood intervals of
``estimate_frequencies(agg, method="mle")`` against the Wald intervals of the unbiased estimate, f = (0.01, 0.09,
0.9) and (0.2, 0.3, 0.5), n ∈ {50, 200, 10^4}, ε = 1; the coverage's own standard error is about 0.005. Two
models: people drawn at random from a population with frequencies f (the counts are multinomial; the target is
f), and exactly round(n f_j) people in category j (the target is their shares). The Wald standard error (Wang et
al.'s variance) describes the second: it leaves out the sampling variance of who holds which category. And the
time of the k profile intervals at k = 3, 30, 300 (n = 10^4, ε = 2).

Runs alone: ``python bench/likelihood.py [--quick] [--json FILE]``.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ldpnum as ldp  # noqa: E402

NS = (20, 50, 200, 10_000)
PS = (0.01, 0.1, 0.5)
EPSILONS = (0.5, 1.0, 2.0)
LEVEL = 0.95
#: Counts less likely than this under every p are not enumerated.
TAIL = 1e-14
GRR_FS = ((0.01, 0.09, 0.9), (0.2, 0.3, 0.5))
GRR_NS = (50, 200, 10_000)
GRR_COLLECTIONS = 2000
GRR_TIME_KS = (3, 30, 300)


def rr_intervals(n, epsilon, ys):
    """``{y: (lr_low, lr_high, wald_low, wald_high, unbiased)}`` for randomized response's aggregate [n - y, y]."""
    rr = ldp.RandomizedResponse(epsilon)
    out = {}
    for y in ys:
        agg = ldp.Aggregate([n - int(y), int(y)], rr.spec)
        mle, unb = rr.estimate_mean(agg, method="mle"), rr.estimate_mean(agg)
        out[int(y)] = (*mle.confidence_interval(LEVEL), *unb.confidence_interval(LEVEL), unb.value)
    return out


def rr_coverage(n, epsilon, ps=PS):
    rr = ldp.RandomizedResponse(epsilon)
    p1, q = rr._p_q
    thetas = [q + p * (p1 - q) for p in ps]
    y = np.arange(n + 1)
    pmfs = [binom.pmf(y, n, th) for th in thetas]
    keep = np.zeros(n + 1, dtype=bool)
    for pmf in pmfs:
        keep |= pmf > TAIL
    t0 = time.perf_counter()
    ci = rr_intervals(n, epsilon, y[keep])
    seconds = time.perf_counter() - t0
    records = []
    for p, pmf in zip(ps, pmfs):
        ys = y[keep]
        w = pmf[keep]
        table = np.array([ci[int(v)] for v in ys])
        lr_in = (table[:, 0] <= p) & (p <= table[:, 1])
        wald_in = (table[:, 2] <= p) & (p <= table[:, 3])
        records.append({"n": n, "p": p, "epsilon": epsilon, "mass": float(w.sum()),
                        "lr_coverage": float(w @ lr_in), "wald_coverage": float(w @ wald_in),
                        "lr_width": float(w @ (table[:, 1] - table[:, 0])),
                        "wald_width": float(w @ (np.minimum(table[:, 3], 1) - np.maximum(table[:, 2], 0))),
                        "outside_01": float(w @ ((table[:, 4] < 0) | (table[:, 4] > 1))),
                        "seconds_intervals": seconds, "counts_enumerated": int(keep.sum())})
    return records


def grr_counts(f, n, cells_of, model, rng, collections):
    """Category counts of ``collections`` collections: people drawn at random (``"sampled"``: the counts are
    Multinomial(n, q + (p - q) f)), or exactly ``round(n f_j)`` people in each category (``"fixed"``: a sum of
    one multinomial per category, each over its row of GRR's channel)."""
    if model == "sampled":
        cells = cells_of(np.asarray(f))
        return rng.multinomial(n, cells / cells.sum(), size=collections)
    people = np.round(n * np.asarray(f)).astype(int)
    rows = [cells_of(np.eye(len(f))[v]) for v in range(len(f))]
    return sum(rng.multinomial(m, row / row.sum(), size=collections) for m, row in zip(people, rows))


def grr_coverage(f, n, model, epsilon=1.0, collections=GRR_COLLECTIONS, seed=0):
    grr = ldp.GRR(epsilon, len(f))
    p, q = grr.support_probabilities
    counts = grr_counts(f, n, lambda g: q + (p - q) * g, model, np.random.default_rng(seed), collections)
    # the target: the population's frequencies, or the shares of exactly these people
    target = np.asarray(f) if model == "sampled" else np.round(n * np.asarray(f)) / n
    lr_in = np.zeros(len(f))
    wald_in = np.zeros(len(f))
    t0 = time.perf_counter()
    for c in counts:
        agg = ldp.Aggregate(c, grr.spec)
        lo, hi = grr.estimate_frequencies(agg, method="mle").confidence_interval(LEVEL)
        lr_in += (lo <= target) & (target <= hi)
        wlo, whi = grr.estimate_frequencies(agg).confidence_interval(LEVEL)
        wald_in += (wlo <= target) & (target <= whi)
    seconds = (time.perf_counter() - t0) / collections
    return [{"k": len(f), "f": list(f), "model": model, "category": j, "n": n, "epsilon": epsilon,
             "collections": collections, "lr_coverage": float(lr_in[j] / collections),
             "wald_coverage": float(wald_in[j] / collections), "seconds_per_collection": seconds}
            for j in range(len(f))]


def grr_interval_times(ks=GRR_TIME_KS, n=10_000, epsilon=2.0, repeats=3):
    """Seconds of ``confidence_interval`` of a GRR MLE (all k profile intervals): median of ``repeats``, one
    collection of n people with Dirichlet(1) frequencies (seed 0)."""
    out = []
    for k in ks:
        grr = ldp.GRR(epsilon, k)
        p, q = grr.support_probabilities
        f = np.random.default_rng(0).dirichlet(np.ones(k))
        counts = np.random.default_rng(1).multinomial(n, q + (p - q) * f)
        est = grr.estimate_frequencies(ldp.Aggregate(counts, grr.spec), method="mle")
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            est.confidence_interval(LEVEL)
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        grr.estimate_frequencies(ldp.Aggregate(counts, grr.spec), method="mle")
        mle_seconds = time.perf_counter() - t0
        out.append({"k": k, "n": n, "epsilon": epsilon, "interval_seconds": float(np.median(times)),
                    "mle_seconds": mle_seconds})
    return out


def markdown(rr_records, grr_records, times=()):
    lines = ["## likelihood", "",
             "Randomized response, 95% intervals of the proportion p: exact coverage by enumeration over the count "
             "(people drawn at random; `bench/likelihood.py`). LR: `estimate_mean(agg, method=\"mle\")`'s "
             "likelihood-ratio interval; Wald: the default interval of the unbiased estimate. Widths are means "
             "over the count's distribution (Wald's clipped to [0, 1], which does not change its coverage); "
             "'outside' is how often the unbiased estimate leaves [0, 1].", "",
             "| ε | n | p | LR coverage | Wald coverage | LR width | Wald width | unbiased outside [0, 1] |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rr_records:
        lines.append(f"| {r['epsilon']:g} | {r['n']:,} | {r['p']:g} | {r['lr_coverage']:.3f} | "
                     f"{r['wald_coverage']:.3f} | {r['lr_width']:.3f} | {r['wald_width']:.3f} | "
                     f"{r['outside_01']:.2f} |")
    if grr_records:
        lines += ["", f"GRR, k = 3, ε = 1: per-category coverage of 95% intervals over {GRR_COLLECTIONS:,} simulated "
                  "collections (SE ≈ 0.005). LR: profile-likelihood intervals of `estimate_frequencies(agg, "
                  "method=\"mle\")`; Wald: the unbiased estimate ± 1.96 SE. *Sampled*: people drawn at random "
                  "from a population with frequencies f (the target); *fixed*: exactly round(n f_j) people hold "
                  "category j (the target: their shares).", "",
                  "| f | n | category (f_j) | LR, sampled | Wald, sampled | LR, fixed | Wald, fixed |",
                  "|---|---|---|---|---|---|---|"]
        cov = {(tuple(r["f"]), r["n"], r["category"], r["model"]): r for r in grr_records}
        for (f, n, j, model), r in cov.items():
            if model != "sampled":
                continue
            fx = cov[(f, n, j, "fixed")]
            lines.append(f"| {f} | {n:,} | {j} ({f[j]:g}) | {r['lr_coverage']:.3f} | {r['wald_coverage']:.3f} | "
                         f"{fx['lr_coverage']:.3f} | {fx['wald_coverage']:.3f} |")
        per = {(tuple(r["f"]), r["n"]): r["seconds_per_collection"] for r in grr_records if r["model"] == "fixed"}
        lines += ["", "Time per GRR collection (MLE + three profile intervals, and the unbiased estimate): "
                  + ", ".join(f"n = {n:,}: {s * 1e3:.1f} ms" for (f, n), s in per.items() if f == GRR_FS[0]) + "."]
    if times:
        lines += ["", "GRR's profile intervals (`confidence_interval` of the MLE, all k categories; n = 10^4, ε = 2, "
                  "median of 3): " + ", ".join(f"k = {t['k']}: {t['interval_seconds']:.3g} s" for t in times)
                  + "; the MLE itself: " + ", ".join(f"{t['mle_seconds'] * 1e3:.2g} ms" for t in times) + "."]
    return lines


def run(ns=NS, epsilons=EPSILONS, grr=True):
    rr_records = [r for eps in epsilons for n in ns for r in rr_coverage(n, eps)]
    grr_records = ([r for f in GRR_FS for n in GRR_NS for model in ("sampled", "fixed")
                    for r in grr_coverage(f, n, model)] if grr else [])
    times = grr_interval_times() if grr else []
    return ({"rr": rr_records, "grr": grr_records, "grr_times": times},
            "\n".join(markdown(rr_records, grr_records, times)) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 20, 200 and ε = 1 only, no GRR")
    ap.add_argument("--json", default=None, help="also write the records to this file")
    args = ap.parse_args()
    if args.quick:
        records, md = run(ns=(20, 200), epsilons=(1.0,), grr=False)
    else:
        records, md = run()
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
