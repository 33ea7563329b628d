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


def _mass(X, query):
    inside = np.ones(len(X), dtype=bool)
    for i, c in enumerate(("a", "b")):
        if c in query:
            lo, hi = query[c]
            inside &= (X[:, i] >= lo) & (X[:, i] <= hi)
    return float(inside.mean())


def _joint_truth(X, bounds, shape):
    edges = [np.linspace(lo, hi, s + 1) for (lo, hi), s in zip(bounds, shape)]
    H, _, _ = np.histogram2d(np.clip(X[:, 0], *bounds[0]), np.clip(X[:, 1], *bounds[1]), bins=edges)
    return H / len(X)


def _label(query):
    return " × ".join(f"{c} [{lo:g}, {hi:g}]" for c, (lo, hi) in query.items())


def run_hdg(name, eps, collections, n, replicates):
    import ldpnum as ldp

    X, bounds, queries = pairs()[name]
    rng = np.random.default_rng(11)
    hdg = ldp.HDG(eps, bounds={"a": bounds[0], "b": bounds[1]}, n=n)
    truth = [_mass(X, q) for q in queries]
    reports = hdg.privatize(X[rng.integers(0, len(X), collections * n)], rng=rng)
    hits, widths = np.zeros(len(queries)), np.zeros(len(queries))
    cell_hits, cell_width, joint = 0.0, 0.0, None
    t0 = time.perf_counter()
    for k in range(collections):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = hdg.estimate_ranges(hdg.aggregate(reports[k * n:(k + 1) * n]), bootstrap=replicates, rng=rng)
            for i, q in enumerate(queries):
                r = est.range(q, ci=LEVEL)
                hits[i] += r.low <= truth[i] <= r.high
                widths[i] += r.high - r.low
            j = est.joint("a", "b", as_frame=False, ci=LEVEL)
        if joint is None:
            joint = _joint_truth(X, bounds, j.estimate.shape)
        big = joint >= 1.0 / joint.size  # the cells above the mean cell mass
        cell_hits += np.mean(((j.low <= joint) & (joint <= j.high))[big])
        cell_width += np.mean((j.high - j.low)[big])
    seconds = (time.perf_counter() - t0) / collections
    rows = [dict(kind="hdg", data=name, epsilon=eps, query=_label(q).replace("a ", "x ").replace("b ", "y "),
                 truth=t, coverage=h / collections, width=w / collections)
            for q, t, h, w in zip(queries, truth, hits, widths)]
    rows.append(dict(kind="hdg", data=name, epsilon=eps, query=f"joint cells ≥ mean mass ({int(big.sum())} of {big.size})",
                     truth=None, coverage=cell_hits / collections, width=cell_width / collections))
    for r in rows:
        r.update(n=n, collections=collections, replicates=replicates, granularities=hdg.granularities,
                 seconds_per_collection=seconds)
    return rows


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
    base = dict(kind="marginals", data="flights (5 columns, all pairs)", epsilon=eps, truth=None, n=n,
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
             f"{LEVEL:.0%}; coverage ± its binomial standard error (`python bench/bands_multi.py`).", "",
             "| mechanism | data | ε | query | coverage | mean width | s / collection |", "|---|---|---|---|---|---|---|"]
    for r in records:
        se = np.sqrt(max(r["coverage"] * (1 - r["coverage"]), LEVEL * (1 - LEVEL)) / r["collections"])
        grid = f" {tuple(r['granularities'])}" if "granularities" in r else ""
        lines.append(f"| {r['kind']}{grid} | {r['data']} | {r['epsilon']:g} | {r['query']} | "
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
