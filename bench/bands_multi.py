"""Coverage of the bootstrap intervals of several columns (``make bench``, section ``bands-multi``).

HDG (``HDG.estimate_ranges(..., bootstrap=B)``) on two pairs, the correlated normal pair of ``bench/multi.py``
(r = 0.8, each coordinate ``0.5 + z/6`` clipped to [0, 1]) and the flights' (``dep_time``, ``distance``); and
Marginals (``Marginals.estimate_marginals(..., bootstrap=B)``, all pairs) on the five categorical flights columns
of ``bench/marginals.py``. For each data set and ε: ``R`` collections of ``N`` people drawn afresh (with
replacement) from a population of 10^6 rows, privatized (one batch, split into the collections), estimated with
the defaults and bootstrapped with ``B`` replicates; the share of nominal 95% intervals covering the population's
value, with its binomial standard error, and the mean width. HDG: 1-D and 2-D ranges (some aligned with the grid
cells, some cutting them) and every cell of the pair's joint table (mean coverage over the cells holding more than
the mean cell mass); Marginals: every cell of the released 2-way tables (mean over cells, and over cells of at least
1%). The 1-D bands (``bench/bands.py``) use the same N, B and ε.

HDG's rows say which interval: what ``ci=`` gives (ranges on the grid's cell edges, every cell of the 1-D grids
and of the 2-D grid), the plain percentile interval of the same replicates (before ``ci=`` widens it to hold the
basic one), and, for the queries ``ci=`` refuses (ranges cutting cells, the finer joint table's cells), the
percentile interval computed from the replicates for the record and the conservative ``interval="cells"``.

Runs alone: ``PYTHONPATH=. python bench/bands_multi.py [--collections 100] [--epsilons 1 4]`` (from the repository
root, so that this checkout's ``ldpnum`` is measured).
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

N = 20_000
R = 100
B = 100
EPSILONS = (0.5, 1.0, 4.0)
POPULATION = 1_000_000
LEVEL = 0.95


def pairs():
    """``{name: (population, bounds, queries)}`` of the HDG pairs."""
    from multi import datasets

    data = datasets(POPULATION)
    corr, unit = data["correlated"]
    fl, fb = data["flights"]
    return {"correlated": (corr, unit, [{"a": (0.25, 0.5)}, {"a": (0.3, 0.45)}, {"a": (0.0, 0.5), "b": (0.0, 0.5)},
                                        {"a": (0.4, 0.6), "b": (0.4, 0.6)}, {"a": (0.5, 0.75), "b": (0.25, 0.5)}]),
            "flights": (fl, fb, [{"a": (360.0, 540.0)}, {"a": (1020.0, 1200.0)},
                                 {"a": (360.0, 540.0), "b": (0.0, 1000.0)},
                                 {"a": (0.0, 720.0), "b": (0.0, 2500.0)}, {"a": (1020.0, 1200.0), "b": (500.0, 1500.0)}])}


def _mass(X, query, bounds, closed=True):
    """The population's share inside ``query`` (closed ranges; ``closed=False``: ``[lo, hi)`` but for the upper
    bound, the cells' convention, for ranges on cell edges where the values have ties, as the flights' minutes)."""
    inside = np.ones(len(X), dtype=bool)
    for i, c in enumerate(("a", "b")):
        if c in query:
            lo, hi = query[c]
            inside &= (X[:, i] >= lo) & ((X[:, i] <= hi) if closed or hi >= bounds[i][1] else (X[:, i] < hi))
    return float(inside.mean())


def _cells_truth(X, bounds, cells):
    """Each column's 1-D cells (``cells[0]`` a side) and the pair's 2-D cells (``cells[1]``): population shares."""
    one = [np.histogram(np.clip(X[:, i], *bounds[i]), np.linspace(*bounds[i], cells[0] + 1))[0] / len(X)
           for i in range(2)]
    return one, _joint_truth(X, bounds, (cells[1], cells[1]))


def _joint_truth(X, bounds, shape):
    edges = [np.linspace(lo, hi, s + 1) for (lo, hi), s in zip(bounds, shape)]
    H, _, _ = np.histogram2d(np.clip(X[:, 0], *bounds[0]), np.clip(X[:, 1], *bounds[1]), bins=edges)
    return H / len(X)


def _label(query):
    return " × ".join(f"{c} [{lo:g}, {hi:g}]" for c, (lo, hi) in query.items()).replace("a ", "x ").replace("b ", "y ")


def _aligned(est, query):
    try:
        est._refuse_cut(query)
    except ValueError:
        return False
    return True


def _percentile(est, answer):
    """The percentile interval of ``answer(replicate)`` over the replicates (what is refused, for the record)."""
    from ldpnum._results import percentile_interval

    return percentile_interval(np.stack([np.asarray(answer(r), dtype=np.float64) for r in est.replicates]), LEVEL)


def run_hdg(name, eps, collections, n, replicates):
    """Coverage of HDG's intervals on one pair: what ``ci=`` offers, and what it refuses (for the record)."""
    import ldpnum as ldp

    X, bounds, queries = pairs()[name]
    rng = np.random.default_rng(11)
    hdg = ldp.HDG(eps, bounds={"a": bounds[0], "b": bounds[1]}, n=n)
    g1, g2 = hdg.granularities
    e1 = [np.linspace(*b, g1 + 1) for b in bounds]
    e2 = [np.linspace(*b, g2 + 1) for b in bounds]
    # aligned ranges of this grid: a wide 1-D one and, when the 2-D grid has more than one cell a side, a 2-D one
    queries = queries + [{"a": (e1[0][1], e1[0][g1 // 2 + 1])}, {"b": (e1[1][0], e1[1][g1 // 2])}]
    if g2 > 2:
        queries.append({"a": (e2[0][1], e2[0][g2 // 2 + 1]), "b": (e2[1][0], e2[1][g2 // 2])})
    one, two = _cells_truth(X, bounds, (g1, g2))
    big1 = [t >= 1.0 / g1 for t in one]
    big2 = two >= 1.0 / two.size
    reports = hdg.privatize(X[rng.integers(0, len(X), collections * n)], rng=rng)
    tallies: dict = {}

    def tally(key, cover, width):
        h, w, c = tallies.get(key, (0.0, 0.0, 0))
        tallies[key] = (h + float(np.mean(cover)), w + float(np.mean(width)), c + 1)

    aligned = None
    fine_truth = None
    t0 = time.perf_counter()
    for k in range(collections):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = hdg.estimate_ranges(hdg.aggregate(reports[k * n:(k + 1) * n]), bootstrap=replicates, rng=rng)
            if aligned is None:
                aligned = [_aligned(est, q) for q in queries]
                truth = [_mass(X, q, bounds, closed=not a) for q, a in zip(queries, aligned)]
            for q, a, t in zip(queries, aligned, truth):
                if a:
                    r = est.range(q, ci=LEVEL)
                    tally(("bootstrap", _label(q)), r.low <= t <= r.high, r.high - r.low)
                    lo, hi = _percentile(est, lambda e: e._range(q))
                    tally(("percentile alone", _label(q)), lo <= t <= hi, hi - lo)
                else:
                    r = est.range(q, ci=LEVEL, interval="cells")
                    tally(("cells", _label(q)), r.low <= t <= r.high, r.high - r.low)
                    lo, hi = _percentile(est, lambda e: e._range(q))
                    tally(("refused: bootstrap", _label(q)), lo <= t <= hi, hi - lo)
            for c, col in enumerate(("a", "b")):  # every 1-D grid cell, as one range query each
                cell = {col: (e1[c][:-1], e1[c][1:])}
                r = est.range(cell, ci=LEVEL)
                cover = (r.low <= one[c]) & (one[c] <= r.high)
                tally(("bootstrap", "1-D grid cells, all"), cover, r.high - r.low)
                tally(("bootstrap", "1-D grid cells ≥ mean mass"), cover[big1[c]], (r.high - r.low)[big1[c]])
            j = est.joint("a", "b", grid=True, ci=LEVEL, as_frame=False)
            cover = (j.low <= two) & (two <= j.high)
            tally(("bootstrap", f"2-D grid cells, all ({two.size})"), cover, j.high - j.low)
            tally(("bootstrap", f"2-D grid cells ≥ mean mass ({int(big2.sum())})"), cover[big2], (j.high - j.low)[big2])
            T = est.joint("a", "b", as_frame=False)[0]
            if fine_truth is None:
                fine_truth = _joint_truth(X, bounds, T.shape)
            lo, hi = _percentile(est, lambda e: e.joints[0])
            big = fine_truth >= 1.0 / fine_truth.size
            tally(("refused: bootstrap", f"joint table cells ≥ mean mass ({int(big.sum())} of {big.size})"),
                  ((lo <= fine_truth) & (fine_truth <= hi))[big], (hi - lo)[big])
    seconds = (time.perf_counter() - t0) / collections
    return [dict(kind="hdg", data=name, epsilon=eps, interval=kind, query=label, coverage=h / c, width=w / c,
                 n=n, collections=collections, replicates=replicates, granularities=(g1, g2),
                 seconds_per_collection=seconds) for (kind, label), (h, w, c) in tallies.items()]


def run_marginals(eps, collections, n, replicates):
    import ldpnum as ldp
    from marginals import flights, true_table

    X, cats = flights(POPULATION, np.random.default_rng(0))
    names = list(cats)
    mech = ldp.Marginals(eps, cats, k=2)
    by_index = dict(enumerate(cats.values()))
    truths = {s: true_table(X, [names.index(c) for c in s], by_index) for s in mech.sets}
    rng = np.random.default_rng(12)
    reports = mech.privatize(X[rng.integers(0, len(X), collections * n)], rng=rng)
    hit_all, hit_big, w_all, w_big = 0.0, 0.0, 0.0, 0.0
    cells = sum(t.size for t in truths.values())
    big_cells = sum(int((t >= 0.01).sum()) for t in truths.values())
    t0 = time.perf_counter()
    for k in range(collections):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = mech.estimate_marginals(mech.aggregate(reports[k * n:(k + 1) * n]), bootstrap=replicates, rng=rng)
            for s, t in truths.items():
                r = est.marginal(s, ci=LEVEL)
                cover, width, big = (r.low <= t) & (t <= r.high), r.high - r.low, t >= 0.01
                hit_all += cover.sum() / cells
                w_all += width.sum() / cells
                hit_big += cover[big].sum() / big_cells
                w_big += width[big].sum() / big_cells
    seconds = (time.perf_counter() - t0) / collections
    base = dict(kind="marginals", data="flights (5 columns, all pairs)", epsilon=eps, interval="bootstrap", n=n,
                collections=collections, replicates=replicates, seconds_per_collection=seconds)
    return [dict(base, query=f"all {cells} cells", coverage=hit_all / collections, width=w_all / collections),
            dict(base, query=f"cells ≥ 1% ({big_cells})", coverage=hit_big / collections, width=w_big / collections)]


#: What is measured: HDG on each pair, Marginals.
PARTS = ("correlated", "flights", "marginals")


def run(collections=R, n=N, replicates=B, epsilons=EPSILONS, parts=PARTS):
    records = []
    for eps in epsilons:
        for name in parts:
            records += (run_marginals(eps, collections, n, replicates) if name == "marginals"
                        else run_hdg(name, eps, collections, n, replicates))
    return records, markdown(records)


def markdown(records):
    if not records:
        return "## bands-multi\n\nnothing measured\n"
    r0 = records[0]
    lines = ["## bands-multi: bootstrap intervals of several columns", "",
             f"{r0['collections']} collections of {r0['n']:,} people per row, {r0['replicates']} replicates, nominal "
             f"{LEVEL:.0%}; coverage ± its binomial standard error (`python bench/bands_multi.py`). Interval "
             "*bootstrap*: what `ci=` gives (HDG: ranges on the grid's cell edges, the 2-D grid's cells; Marginals: "
             "released sets' cells); *cells*: `interval=\"cells\"`, the conservative interval, for ranges cutting "
             "cells; *percentile alone*: the percentile interval before `ci=` widens it to the basic one "
             "(`ldpnum.multi._result.table_interval`), for the record; *refused: bootstrap*: the percentile "
             "interval that `ci=` refuses there, computed from the replicates for the record.", "",
             "| mechanism | data | ε | interval | query | coverage | mean width | s / collection |",
             "|---|---|---|---|---|---|---|---|"]
    order = {"bootstrap": 0, "percentile alone": 1, "cells": 2, "refused: bootstrap": 3}
    for r in sorted(records, key=lambda r: (r["epsilon"], r["kind"], r["data"], order[r["interval"]])):
        se = np.sqrt(max(r["coverage"] * (1 - r["coverage"]), LEVEL * (1 - LEVEL)) / r["collections"])
        grid = f" {tuple(r['granularities'])}" if "granularities" in r else ""
        lines.append(f"| {r['kind']}{grid} | {r['data']} | {r['epsilon']:g} | {r['interval']} | {r['query']} | "
                     f"{r['coverage']:.3f} ± {se:.3f} | {r['width']:.4f} | {r['seconds_per_collection']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collections", type=int, default=R)
    p.add_argument("--n", type=int, default=N)
    p.add_argument("--replicates", type=int, default=B)
    p.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    args = p.parse_args(argv)
    _, md = run(args.collections, args.n, args.replicates, tuple(args.epsilons), tuple(args.parts))
    print(md)


if __name__ == "__main__":
    main()
