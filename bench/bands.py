"""Coverage of the bootstrap intervals of reconstructed distributions (``make bench``, section ``bands``).

For each data set and ε: ``R_DISTRIBUTION`` collections of ``N`` people drawn afresh from the population
(Beta(5, 2) on [0, 1], or the embedded flights' departure times — the 328,521 departed flights as the
population, people drawn with replacement), each privatized with Square Wave (fixed seeds), reconstructed with
the default estimator (held-out EMS, ``method="ems-cv"``) and bootstrapped twice with ``B`` parametric replicates: the default undersmoothed scheme
(``estimate_distribution(..., bootstrap=B)``) and the replicates of the estimate itself (``scheme="estimate"``,
the default until the undersmoothed scheme measured better); the share of nominal 95% intervals that cover the
population's median, quartiles and two ranges, and the mean interval width. 93–98% is the target.
The same for range trees (``R`` collections): a hierarchical histogram (``HierarchicalHistogram``, default tree, least-squares
consistency) with ``B`` simulation bootstrap replicates (``estimate_ranges(..., bootstrap=B)``).

Runs alone: ``PYTHONPATH=. python bench/bands.py [--collections 100]`` (from the repository root, so that this
checkout's ``ldpnum`` is measured).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

N = 20_000
R = 100
#: Collections per row of the distribution table: each is bootstrapped twice (the undersmoothed scheme's
#: plain-EM refits run with SQUAREM; before, they took 2-6x the time of the estimate scheme's).
R_DISTRIBUTION = 60
B = 100
#: Cells cheap enough (about 0.1 s per collection) to be measured again with ``R_PRECISE`` collections, where 60
#: cannot tell a 90% coverage from 95%: (data, ε).
PRECISE = (("Beta(5, 2)", 4.0),)
R_PRECISE = 300
EPSILONS = (0.5, 1.0, 4.0)
QS = (0.25, 0.5, 0.75)


def populations():
    from scipy.stats import beta

    from ldpnum.demo import flights_frame

    b = beta(5, 2)
    dep = flights_frame()["dep_time"].to_numpy()
    return {"Beta(5, 2)": dict(bounds=(0.0, 1.0), draw=lambda rng, n: rng.beta(5, 2, n), quantiles=b.ppf(QS),
                               ranges=((0.6, 0.8), (0.2, 0.5)), mass=lambda lo, hi: b.cdf(hi) - b.cdf(lo)),
            "flights dep_time": dict(bounds=(0.0, 1440.0), draw=lambda rng, n: rng.choice(dep, n),
                                     quantiles=np.quantile(dep, QS), ranges=((360.0, 540.0), (1020.0, 1200.0)),
                                     mass=lambda lo, hi: float(np.mean((dep >= lo) & (dep <= hi))))}


#: What is bootstrapped: a window mechanism's distribution estimate, or a range tree's.
KINDS = ("distribution", "ranges")
#: The distribution bootstrap's schemes measured side by side (``bootstrap_distribution(..., scheme=)``).
SCHEMES = ("undersmoothed", "estimate")


def _estimates(kind, eps, bounds, x, r, replicates, schemes=SCHEMES):
    """``{label: (bootstrapped estimate, seconds)}`` for one collection: each scheme of the distribution
    bootstrap on the same estimate (seconds: the estimate's and that scheme's), or the range tree's."""
    import ldpnum as ldp
    from ldpnum.estimation import bootstrap_distribution

    if kind == "distribution":
        sw = ldp.SquareWave(eps, bounds)
        agg = sw.aggregate(sw.privatize(x, rng=10_000 + r))
        t0 = time.perf_counter()
        est = sw.estimate_distribution(agg)
        base, out = time.perf_counter() - t0, {}
        for scheme in schemes:
            t0 = time.perf_counter()
            boot = bootstrap_distribution(sw, agg, n_boot=replicates, rng=r, estimate=est, scheme=scheme)
            out[scheme] = boot, base + time.perf_counter() - t0
        return out
    hh = ldp.HierarchicalHistogram(eps, bounds)
    agg = hh.aggregate(hh.privatize(x, rng=10_000 + r))
    t0 = time.perf_counter()
    return {"": (hh.estimate_ranges(agg, bootstrap=replicates, rng=r), time.perf_counter() - t0)}


def run(collections=None, n=N, replicates=B, kinds=KINDS):
    """Measure every kind; return ``(records, markdown)`` (one table per kind). ``collections`` per row: by
    default ``R_DISTRIBUTION`` for the distribution table and ``R`` for the range trees'."""
    records, tables = [], []
    for kind in kinds:
        rows = collections or (R_DISTRIBUTION if kind == "distribution" else R)
        recs, md = _run_kind(rows, n, replicates, kind)
        records += recs
        tables.append(md)
        if kind == "distribution" and collections is None:
            recs, md = _run_kind(R_PRECISE, n, replicates, kind, only=PRECISE)
            records += [{**r, "precise": True} for r in recs]
            tables.append(md)
    return records, "\n".join(tables)


def _run_kind(collections, n, replicates, kind, only=None, schemes=SCHEMES):
    """One table: every (data, ε), or only the (data, ε) pairs in ``only`` (distribution: the bootstrap
    ``schemes`` side by side)."""
    records = []
    for name, pop in populations().items():
        truth_r = [pop["mass"](lo, hi) for lo, hi in pop["ranges"]]
        for eps in EPSILONS:
            if only is not None and (name, eps) not in only:
                continue
            rng = np.random.default_rng(0)
            hits, widths, seconds, flagged, missed = {}, {}, {}, {}, {}
            for r in range(collections):
                x = pop["draw"](rng, n)
                for label, (est, sec) in _estimates(kind, eps, pop["bounds"], x, r, replicates,
                                                            schemes).items():
                    q = est.quantile(np.array(QS), ci=0.95)
                    cover = [(lo <= t <= hi) for lo, hi, t in zip(q.low, q.high, pop["quantiles"])]
                    width = list(q.high - q.low)
                    outside = list((q.estimate < q.low) | (q.estimate > q.high))
                    for (lo, hi), t in zip(pop["ranges"], truth_r):
                        iv = est.range(lo, hi, ci=0.95)
                        cover.append(iv.low <= t <= iv.high)
                        width.append(iv.high - iv.low)
                        outside.append(not iv.low <= iv.estimate <= iv.high)
                    hits[label] = hits.get(label, 0) + np.array(cover, dtype=float)
                    flagged[label] = flagged.get(label, 0) + np.array(outside, dtype=float)
                    missed[label] = missed.get(label, 0) + (np.array(outside) & ~np.array(cover))
                    widths[label] = widths.get(label, 0) + np.array(width)
                    seconds[label] = seconds.get(label, 0) + sec
            for label in hits:
                rec = {"kind": kind, "scheme": label or None, "data": name, "epsilon": eps, "n": n,
                       "collections": collections, "replicates": replicates,
                       "coverage": (hits[label] / collections).tolist(),
                       "width": (widths[label] / collections).tolist(),
                       "seconds_per_collection": seconds[label] / collections,
                       # the point estimate outside its own interval (BiasWarning), and such intervals missing
                       "outside": (flagged[label] / collections).tolist(),
                       "outside_missed": (missed[label] / collections).tolist(),
                       "targets": [f"q{int(q * 100)}" for q in QS] + [f"[{lo:g}, {hi:g}]" for lo, hi in pop["ranges"]]}
                print(f"bands {kind} {label} {name} eps={eps:g}: coverage {np.round(rec['coverage'], 2).tolist()}, "
                      f"width {np.round(rec['width'], 4).tolist()}", flush=True)
                records.append(rec)
    return records, markdown(records, precise=only is not None)


def markdown(records, precise=False):
    from scipy.stats import binom

    r0 = records[0]
    k = r0["collections"]
    reads = binom.ppf([0.025, 0.975], k, 0.95) / k  # where a true 95% coverage reads 95% of the time
    if r0.get("kind", "distribution") == "distribution":
        title = "## Coverage of bootstrap intervals (distribution, quantiles, ranges)"
        if precise:
            title = ("### The same, more collections where they are cheap (the first collections coincide with the "
                     "table above: same seeds)")
        how = (f"Square Wave + the default estimator (held-out EMS, `method=\"ems-cv\"`, default buckets; until "
               f"2026-11-25 this table used `method=\"ems\"`), {r0['replicates']} parametric bootstrap replicates "
               "each, percentile intervals (read at the (B+1)p-th order statistic since 2026-11-25; before, numpy's "
               "linear rule, about 8% narrower at 100 replicates), by "
               + ("both schemes" if len({r.get("scheme") for r in records}) > 1 else "this scheme")
               + " of `bootstrap_distribution`: *undersmoothed* (the "
               "default of `estimate_distribution(..., bootstrap=B)`: replicates drawn from and refitted with EMS at a "
               "quarter of the estimate's smoothing passes, plain EM below 4)"
               + (" and *estimate* (`scheme=\"estimate\"`: replicates drawn from the estimate and refitted at its own "
                  "level)" if any(r.get("scheme") == "estimate" for r in records) else ""))
    else:
        title = "## Coverage of bootstrap intervals (range trees: quantiles, ranges)"
        how = (f"HierarchicalHistogram (default tree, least-squares consistency), {r0['replicates']} simulation "
               "bootstrap replicates each (`estimate_ranges(..., bootstrap=B)`, percentile intervals read at the "
               "(B+1)p-th order statistic)")
    lines = [title, "",
             f"{r0['collections']} collections of {r0['n']:,} people per row, drawn afresh from the population, "
             f"{how}; share of nominal 95% intervals "
             "covering the population value (target 93–98%; with this many collections a true 95% reads "
             f"{reads[0]:.0%}–{reads[1]:.0%} about 95% of the time), and the mean interval width (units of the data for quantiles, probability "
             "for ranges). Time: one collection with its replicates.", "",
             "Ranges: " + "; ".join(dict.fromkeys(f"{r['data']}: range 1 = {r['targets'][3]}, range 2 = "
                                                  f"{r['targets'][4]}" for r in records)) + ".", "",
             "| data | ε | bootstrap | cover q25 | cover q50 | cover q75 | cover range 1 | cover range 2 | width q50 | "
             "width range 1 | s/collection |", "|---|---:|---|" + "---:|" * (len(r0["targets"]) + 3)]
    for r in records:
        lines.append(f"| {r['data']} | {r['epsilon']:g} | {r.get('scheme') or 'simulation'} | "
                     + " | ".join(f"{c:.2f}" for c in r["coverage"])
                     + f" | {r['width'][1]:.4g} | {r['width'][3]:.4g} | {r['seconds_per_collection']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collections", type=int, default=None)
    ap.add_argument("--kind", choices=KINDS + ("both",), default="both")
    ap.add_argument("--precise", action="append", metavar="DATA@EPS", default=None,
                    help="only these distribution cells, e.g. 'flights dep_time@0.5' (repeatable), with "
                         f"--collections collections (default {R_PRECISE}); the table's first collections "
                         "coincide with the main table's (same seeds)")
    ap.add_argument("--scheme", choices=SCHEMES, action="append", default=None,
                    help="with --precise: only these bootstrap schemes (default both)")
    args = ap.parse_args(argv)
    if args.precise:
        only = []
        for cell in args.precise:
            name, _, eps = cell.rpartition("@")
            if name not in populations() or not eps:
                ap.error(f"--precise {cell!r}: expected DATA@EPS with DATA one of {list(populations())}")
            only.append((name, float(eps)))
        _, md = _run_kind(args.collections or R_PRECISE, N, B, "distribution", only=tuple(only),
                          schemes=tuple(args.scheme or SCHEMES))
        print(md)
        return 0
    _, md = run(collections=args.collections, kinds=KINDS if args.kind == "both" else (args.kind,))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
