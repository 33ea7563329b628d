"""2-D range queries over two numerical columns: ldpnum's HDG against two naive baselines (``make bench``,
section ``multi``).

Data (n = 10^6 people each):

* **flights**: (``dep_time`` in minutes after midnight, ``distance`` in miles) of the embedded NYC 2013 flights
  (``ldpnum.demo.flights_frame``: the 328,521 flights that departed), resampled with replacement to n rows
  (fixed seed; the truth is the resampled rows'); public bounds (0, 1440) and (0, 5000);
* **correlated**: a bivariate normal pair with correlation r = 0.8, each coordinate ``0.5 + z/6`` clipped to
  the bounds (0, 1) (0.3% clipped);
* **laplace**: an independent pair of Laplace(0.5, 0.1) coordinates clipped to (0, 1).

Each method runs ``repeats`` collections (default 3, different seeds) and the errors are averaged over them.

Queries: 200 random axis-aligned rectangles per volume, with both sides ``sqrt(volume)`` of their column's
range (volume 0.1 and 0.5 of the domain's area), placed uniformly inside the domain (fixed seed). Error: MAE and
MSE of the answered fractions against the exact fractions of the n rows.

Methods, each spending ε per person:

* **HDG** (``ldp.HDG`` at its default granularities for n = 10^6 — the paper's guideline with the 1-D constant
  α1 = 0.3 — and its post-processing, including the shrinkage of 2-D grids toward independence), and the
  same reports estimated with ``shrink=False`` and with ``consistency="paper"`` (the paper's Norm-Sub and
  unweighted consistency) for comparison;
* **2-D OLH**: one ``g × g`` grid, everyone reports their cell through OLH, Norm-Sub, cells read uniformly;
  ``g`` by the paper's 2-D guideline with one grid (TDG's formula, ``m = 1``);
* **1-D SW × 2 (independence)**: people split in halves by ``assign_columns``; each half reports one column by
  Square Wave (ε), EMS distributions (256 bins); a rectangle's answer is the product of the two 1-D ranges.

**privmdr's setting** (a second table, like for like with the reference figures). Yang et al.'s research code
(privmdr) measures HDG on integer data of domain 64 per attribute, with its own query generator: for a query
volume ``v`` each attribute's interval is ``L = floor(16 sqrt(v))`` of 16 coarse units (``v = 0.1``: 5/16 of the
domain, area 0.0977; ``v = 0.5``: 11/16, area 0.4727), its left end uniform over the ``17 - L`` coarse positions,
so that every interval is a union of whole coarse units of 4 domain values ``[4l, 4(l + L) - 1]``; MAE of the
answered fractions. The same three data sets, each coordinate discretized to ``floor(64 (x - low) / (high -
low))`` (clipped to 63), are given to ``ldp.HDG`` on bounds (0, 64); a query ``[4l, 4(l + L) - 1]`` is asked as
the range (4l, 4(l + L)) (the integer value ``t`` lies in ``[t, t + 1)``), so the queries are aligned with every
grid of 16 or fewer cells. Other differences from the continuous table: privmdr caps both granularities at the
domain size (64), answers from a 64 × 64 response matrix (the same fit: a table fitted from the uniform one by
proportional fitting to constraints that are unions of ``g1 × g1`` blocks stays constant within each block),
assigns people to grids by position rather than at random, uses OUE in every grid (OLH's variance) and runs a
fixed 100 consistency rounds; none of these changes the expected error. What the reference's data sets were
exactly (its Laplace scale, its correlated pair) is not known here: the figures compare settings, not data.

Also: HDG privatize throughput (people/s, seeded and secure randomness, after a warm-up), aggregate and
estimate time, and the time of 10,000 2-D queries answered at once. For scale, the figures the issue quotes
for the paper's reference code (domain 64 per attribute, n = 10^6) are shown next to the correlated and Laplace
pairs; they are not a run of that code (it is research code not on the package index).

**Granularity sweep** (``--sweep``): HDG's MAE for every candidate ``(g1, g2)`` (powers of two, ``g1 >= g2``,
``g1 / g2 <= 16``) in both settings, written to ``bench/results/multi-sweep.{md,json}``: the measurements behind
:func:`ldpnum.multi.guideline_granularities`.

Runs alone: ``python bench/multi.py [--n 1e6] [--sweep]``.
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

N = 1_000_000
EPSILONS = (0.5, 1.0, 2.0, 4.0)
VOLUMES = (0.1, 0.5)
N_QUERIES = 200
SEED = 0
#: privmdr's setting: the domain of each attribute, and the coarse units its queries are made of.
DOMAIN = 64
COARSE = 16
#: The issue's MAE figures of the reference code (domain 64, n = 1e6) at ε = 0.5, 1, 2: {(data, volume): ...}.
REFERENCE = {("correlated", 0.1): (0.0273, 0.0116, 0.0087), ("correlated", 0.5): (0.0186, 0.0132, 0.0060),
             ("laplace", 0.1): (0.0055, 0.0042, 0.0027), ("laplace", 0.5): (0.0094, 0.0078, 0.0038)}


def datasets(n):
    """``{name: (X, bounds)}`` with ``X`` of shape (n, 2)."""
    from ldpnum.demo import flights_frame

    rng = np.random.default_rng(SEED)
    df = flights_frame()
    rows = rng.integers(0, len(df), n)
    flights = df[["dep_time", "distance"]].to_numpy()[rows]
    z = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.8], [0.8, 1.0]], n)
    corr = np.clip(0.5 + z / 6, 0, 1)
    lap = np.clip(rng.laplace(0.5, 0.1, (n, 2)), 0, 1)
    unit = ((0.0, 1.0), (0.0, 1.0))
    return {"flights": (flights, ((0.0, 1440.0), (0.0, 5000.0))), "correlated": (corr, unit), "laplace": (lap, unit)}


def queries(bounds, volume, n_queries, seed):
    """``(lo, hi)`` arrays of shape (n_queries, 2): squares (in units of each range) of area ``volume``."""
    rng = np.random.default_rng(seed)
    side = math.sqrt(volume)
    lows = np.array([b[0] for b in bounds])
    widths = np.array([b[1] - b[0] for b in bounds])
    start = rng.uniform(0, 1 - side, (n_queries, 2))
    return lows + start * widths, lows + (start + side) * widths


def truth(X, lo, hi):
    """Exact fractions of rows inside each rectangle (closed ranges), via sorting on the first column."""
    order = np.argsort(X[:, 0], kind="stable")
    xs, ys = X[order, 0], X[order, 1]
    out = np.empty(len(lo))
    for i in range(len(lo)):
        a, b = np.searchsorted(xs, lo[i, 0], "left"), np.searchsorted(xs, hi[i, 0], "right")
        y = ys[a:b]
        out[i] = np.count_nonzero((y >= lo[i, 1]) & (y <= hi[i, 1]))
    return out / len(X)


def discretize(X, bounds, size=DOMAIN):
    """Each coordinate as an integer in [0, size): ``floor(size (x - low) / (high - low))``, clipped."""
    out = np.empty(X.shape, dtype=np.int64)
    for j, (lo, hi) in enumerate(bounds):
        out[:, j] = np.clip(np.floor((X[:, j] - lo) / (hi - lo) * size).astype(np.int64), 0, size - 1)
    return out


def grid_queries(volume, n_queries, seed, size=DOMAIN, coarse=COARSE):
    """privmdr's 2-D queries (re-implemented from its description): per attribute ``L = floor(coarse
    sqrt(volume))`` coarse units starting at a uniform coarse position in ``[0, coarse - L]``. Returns ``(lo,
    hi)`` integer arrays of shape (n_queries, 2): the query holds the integers ``lo <= t < hi`` of each
    attribute, i.e. the continuous range ``(lo, hi)`` on bounds ``(0, size)``."""
    rng = np.random.default_rng(seed)
    unit = size // coarse
    length = int(coarse * math.sqrt(volume))
    left = rng.integers(0, coarse - length + 1, (n_queries, 2))
    return unit * left, unit * (left + length)


def grid_truth(Z, lo, hi, size=DOMAIN):
    """Exact fractions of integer rows ``Z`` with ``lo <= z < hi`` in both columns (2-D prefix sums)."""
    S = np.zeros((size + 1, size + 1))
    S[1:, 1:] = np.bincount(Z[:, 0] * size + Z[:, 1], minlength=size * size).reshape(size, size).cumsum(0).cumsum(1)
    return (S[hi[:, 0], hi[:, 1]] - S[lo[:, 0], hi[:, 1]] - S[hi[:, 0], lo[:, 1]] + S[lo[:, 0], lo[:, 1]]) / len(Z)


def tdg_granularity(n, epsilon):
    """The paper's 2-D granularity with one grid: sqrt(2 α2 (e^ε - 1) sqrt(n / e^ε)), nearest power of 2."""
    from ldpnum.multi.hdg import ALPHA2, _nearest_power_of_two

    g = math.sqrt(2 * ALPHA2 * math.expm1(epsilon) * math.sqrt(n / math.exp(epsilon)))
    return min(_nearest_power_of_two(g), 256)


def one_grid_olh(X, bounds, epsilon, rng):
    """The 2-D OLH baseline: a MultiRangeEstimate whose only joint is the Norm-Sub'd g × g grid."""
    import ldpnum as ldp
    from ldpnum.estimation.postprocess import norm_sub
    from ldpnum.multi import MultiRangeEstimate

    g = tdg_granularity(len(X), epsilon)
    cells = np.zeros(len(X), dtype=np.int64)
    for j, (lo, hi) in enumerate(bounds):
        c = np.minimum(np.floor((X[:, j] - lo) / (hi - lo) * g).astype(np.int64), g - 1)
        cells = cells * g + np.clip(c, 0, g - 1)
    olh = ldp.OLH(epsilon, g * g)
    f = norm_sub(olh.estimate_frequencies(olh.privatize(cells, rng=rng), postprocess="none").frequencies)
    T = f.reshape(g, g)
    return MultiRangeEstimate(columns=("x", "y"), bounds=bounds, marginals=(T.sum(1), T.sum(0)), joints=(T,),
                              granularities=(g, g)), g


def independent_sw(X, bounds, epsilon, rng):
    """The 1-D baseline: half the people report each column by Square Wave; EMS distributions (256 bins)."""
    import ldpnum as ldp
    from ldpnum._random import assign_columns

    seeds = np.random.SeedSequence(rng).spawn(3)
    half = assign_columns(np.random.default_rng(seeds[0]), len(X), 2)
    dists = []
    for j in range(2):
        m = ldp.SquareWave(epsilon, bounds[j])
        r = m.privatize(X[half == j, j], rng=np.random.default_rng(seeds[j + 1]))
        dists.append(m.estimate_distribution(r, n_bins=256, method="ems"))
    return dists


def errors(ans, true):
    d = np.asarray(ans) - true
    return float(np.mean(np.abs(d))), float(np.mean(d * d))


def run(repeats=3, n=N):
    """Measure; return ``(records, markdown)``."""
    import ldpnum as ldp

    data = datasets(n)
    records = []
    for name, (X, bounds) in data.items():
        qs = {v: queries(bounds, v, N_QUERIES, SEED + int(v * 100)) for v in VOLUMES}
        truths = {v: truth(X, *qs[v]) for v in VOLUMES}
        cols = {"x": bounds[0], "y": bounds[1]}
        for eps in EPSILONS:
            hdg = ldp.HDG(eps, cols, n=n)
            hdg.privatize(X[:1000], rng=0)  # compile
            errs = {}
            shrink_w = []
            for rep in range(repeats):
                t0 = time.perf_counter()
                reports = hdg.privatize(X, rng=1 + 10 * rep)
                t_priv = time.perf_counter() - t0
                t0 = time.perf_counter()
                agg = hdg.aggregate(reports)
                t_agg = time.perf_counter() - t0
                t0 = time.perf_counter()
                est = hdg.estimate_ranges(agg)
                t_est = time.perf_counter() - t0
                shrink_w.append(est.shrinkage[0])
                est_paper = hdg.estimate_ranges(agg, consistency="paper")
                est_plain = hdg.estimate_ranges(agg, shrink=False)
                grid, g = one_grid_olh(X, bounds, eps, 2 + 10 * rep)
                sw = independent_sw(X, bounds, eps, 3 + 10 * rep)
                for v in VOLUMES:
                    lo, hi = qs[v]
                    q = {"x": (lo[:, 0], hi[:, 0]), "y": (lo[:, 1], hi[:, 1])}
                    answers = {"HDG": est.range(q), "HDG paper": est_paper.range(q),
                               "HDG no shrink": est_plain.range(q), "2-D OLH": grid.range(q),
                               "1-D SW × 2": sw[0].range(lo[:, 0], hi[:, 0]) * sw[1].range(lo[:, 1], hi[:, 1])}
                    for method, ans in answers.items():
                        errs.setdefault((v, method), []).append(errors(ans, truths[v]))
            for (v, method), e in errs.items():
                mae, mse = np.mean(e, axis=0)
                records.append({"data": name, "setting": "continuous", "epsilon": eps, "volume": v, "method": method,
                                "mae": float(mae),
                                "mse": float(mse), "mae_runs": [x[0] for x in e], "n": n, "repeats": repeats,
                                "granularities": list(hdg.granularities) if method.startswith("HDG")
                                else ([g, g] if method == "2-D OLH" else [256]),
                                "oracles": list(hdg.oracle_names) if method.startswith("HDG") else None,
                                **({"shrinkage": shrink_w} if method == "HDG" else {})})
            records.append({"data": name, "epsilon": eps, "timing": True, "privatize_seeded_s": t_priv,
                            "aggregate_s": t_agg, "estimate_s": t_est})
            print(f"multi {name} eps={eps:g}: HDG {hdg.granularities} "
                  + ", ".join(f"{r['method']} {r['mae']:.4f}" for r in records[-11:-1] if r.get("volume") == 0.1),
                  flush=True)
        records += run_grid_setting(name, X, bounds, repeats, n)
    records.append(speed(data["correlated"][0], n, repeats))
    return records, markdown(records)


def run_grid_setting(name, X, bounds, repeats, n):
    """HDG in privmdr's setting (module docstring): the data discretized to 64 values per attribute on bounds
    (0, 64), privmdr's queries; the default granularities; the same seeds as the continuous table."""
    import ldpnum as ldp

    Z = discretize(X, bounds)
    qs = {v: grid_queries(v, N_QUERIES, SEED + int(v * 100)) for v in VOLUMES}
    truths = {v: grid_truth(Z, *qs[v]) for v in VOLUMES}
    Zf = Z.astype(np.float64)
    out = []
    for eps in EPSILONS:
        hdg = ldp.HDG(eps, {"x": (0, DOMAIN), "y": (0, DOMAIN)}, n=n)
        errs = {v: [] for v in VOLUMES}
        paper = {v: [] for v in VOLUMES}
        plain = {v: [] for v in VOLUMES}
        shrink_w = []
        for rep in range(repeats):
            agg = hdg.aggregate(hdg.privatize(Zf, rng=1 + 10 * rep))
            for options, out_errs in (({}, errs), ({"consistency": "paper"}, paper), ({"shrink": False}, plain)):
                est = hdg.estimate_ranges(agg, **options)
                if not options:
                    shrink_w.append(est.shrinkage[0])
                for v in VOLUMES:
                    lo, hi = qs[v]
                    q = {"x": (lo[:, 0], hi[:, 0]), "y": (lo[:, 1], hi[:, 1])}
                    out_errs[v].append(errors(est.range(q), truths[v]))
        for v in VOLUMES:
            mae, mse = np.mean(errs[v], axis=0)
            side = int(COARSE * math.sqrt(v)) / COARSE
            out.append({"data": name, "setting": "domain64", "epsilon": eps, "volume": v, "area": side * side,
                        "method": "HDG", "mae": float(mae), "mse": float(mse), "mae_runs": [x[0] for x in errs[v]],
                        "paper_mae": float(np.mean([x[0] for x in paper[v]])),
                        "no_shrink_mae": float(np.mean([x[0] for x in plain[v]])),
                        "no_shrink_mae_runs": [x[0] for x in plain[v]], "shrinkage": shrink_w,
                        "n": n, "repeats": repeats, "granularities": list(hdg.granularities)})
        print(f"multi {name} domain 64 eps={eps:g}: HDG {hdg.granularities} "
              + ", ".join(f"vol {r['volume']:g} {r['mae']:.4f}" for r in out[-2:]), flush=True)
    return out


#: The granularity sweep's candidates: g1 and g2 powers of two, g1 >= g2, g1 / g2 <= 16.
SWEEP = tuple((g1, g2) for g2 in (2, 4, 8, 16, 32) for g1 in (8, 16, 32, 64, 128) if g2 <= g1 <= 16 * g2)


def sweep(repeats=3, n=N, candidates=SWEEP):
    """HDG's MAE for every candidate ``(g1, g2)`` (``--sweep``): the three data sets, both settings (continuous
    queries; privmdr's domain 64), both volumes, ε = 0.5, 1, 2, 4, ``repeats`` collections. Returns ``(records,
    markdown)``: per ε, each candidate's geometric-mean and worst ratio to the best candidate over the 12 cases."""
    import ldpnum as ldp

    records = []
    for name, (X, bounds) in datasets(n).items():
        Z = discretize(X, bounds)
        settings = {"continuous": (X, bounds, {v: queries(bounds, v, N_QUERIES, SEED + int(v * 100)) for v in VOLUMES}),
                    "domain64": (Z.astype(np.float64), ((0.0, DOMAIN), (0.0, DOMAIN)),
                                 {v: grid_queries(v, N_QUERIES, SEED + int(v * 100)) for v in VOLUMES})}
        for setting, (XX, bb, qs) in settings.items():
            truths = {v: (truth(X, *qs[v]) if setting == "continuous" else grid_truth(Z, *qs[v])) for v in VOLUMES}
            for eps in EPSILONS:
                for g in candidates:
                    hdg = ldp.HDG(eps, {"x": bb[0], "y": bb[1]}, granularities=g)
                    errs = {v: [] for v in VOLUMES}
                    for rep in range(repeats):
                        est = hdg.estimate_ranges(hdg.aggregate(hdg.privatize(XX, rng=1 + 10 * rep)))
                        for v in VOLUMES:
                            lo, hi = qs[v]
                            ans = est.range({"x": (lo[:, 0], hi[:, 0]), "y": (lo[:, 1], hi[:, 1])})
                            errs[v].append(errors(ans, truths[v])[0])
                    for v in VOLUMES:
                        records.append({"data": name, "setting": setting, "epsilon": eps, "volume": v,
                                        "granularities": list(g), "mae": float(np.mean(errs[v])), "n": n,
                                        "repeats": repeats})
            print(f"sweep {name} {setting}: done", flush=True)
    return records, sweep_markdown(records, n)


def sweep_markdown(records, n):
    from ldpnum.multi.hdg import PAPER_ALPHA1, guideline_granularities

    cases = {}
    for r in records:
        cases.setdefault((r["epsilon"], r["data"], r["setting"], r["volume"]), {})[tuple(r["granularities"])] = r["mae"]
    lines = ["## HDG granularity sweep", "",
             f"bench/multi.py --sweep: n = {n:,}, 2 attributes, {records[0]['repeats']} collections per candidate, "
             f"{N_QUERIES} queries per volume; per ε and setting 6 cases (flights, correlated, laplace × volume 0.1, "
             "0.5). Ratio: the candidate's MAE over the best candidate's in each case; geometric mean (worst) over the "
             "cases. The continuous setting (queries anywhere) is the basis of the default; in the domain-64 setting "
             "every query is aligned with a 16-cell grid, which favours g1 = 16 and g2 = 16 (no cell is cut). "
             "Default: the granularities ldp.HDG picks for n; paper: Yang et al.'s guideline (α1 = 0.7).", "",
             "| ε | candidate (g1, g2) | continuous: geo-mean ratio (worst) | domain 64: geo-mean ratio (worst) | "
             "default | paper |", "|---:|---|---:|---:|:---:|:---:|"]
    for eps in EPSILONS:
        cands = set.intersection(*(set(v) for k, v in cases.items() if k[0] == eps))
        rows = []
        for g in cands:
            stats = []
            for setting in ("continuous", "domain64"):
                ratios = np.array([v[g] / min(v.values()) for k, v in cases.items() if k[0] == eps and k[2] == setting])
                stats.append((float(np.exp(np.mean(np.log(ratios)))), float(ratios.max())))
            rows.append((stats, g))
        default = guideline_granularities(n, eps, 2)
        paper = guideline_granularities(n, eps, 2, alpha1=PAPER_ALPHA1)
        for (c, d), g in sorted(rows):
            lines.append(f"| {eps:g} | {g} | {c[0]:.2f} ({c[1]:.2f}) | {d[0]:.2f} ({d[1]:.2f}) | "
                         f"{'yes' if g == default else ''} | {'yes' if g == paper else ''} |")
    lines += ["", "MAE per case (rows: candidate; columns: data, setting, volume):", ""]
    for eps in EPSILONS:
        keys = sorted(k for k in cases if k[0] == eps)
        lines += [f"ε = {eps:g}:", "", "| (g1, g2) | " + " | ".join(f"{k[1][:4]} {k[2][:4]} {k[3]:g}" for k in keys) + " |",
                  "|---|" + "---:|" * len(keys)]
        for g in sorted(set.intersection(*(set(cases[k]) for k in keys))):
            lines.append(f"| {g} | " + " | ".join(f"{cases[k][g]:.4f}" for k in keys) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def speed(X, n, repeats):
    """HDG privatize people/s (seeded and secure), and 10,000 queries at once, on the correlated pair at ε = 1."""
    import ldpnum as ldp

    hdg = ldp.HDG(1.0, {"x": (0, 1), "y": (0, 1)}, n=n)
    hdg.privatize(X[:1000], rng=0)

    def median(f):
        times = []
        for _ in range(max(3, repeats)):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    seeded = median(lambda: hdg.privatize(X, rng=1))
    secure = median(lambda: hdg.privatize(X))
    est = hdg.estimate_ranges(hdg.privatize(X, rng=1))
    lo, hi = queries(((0, 1), (0, 1)), 0.1, 10_000, 7)
    q = {"x": (lo[:, 0], hi[:, 0]), "y": (lo[:, 1], hi[:, 1])}
    t_q = median(lambda: est.range(q))
    return {"speed": True, "n": n, "privatize_seeded_per_s": n / seeded, "privatize_secure_per_s": n / secure,
            "queries_10000_s": t_q, "epsilon": 1.0}


def markdown(records):
    rows = [r for r in records if r.get("setting") == "continuous"]
    grid_rows = [r for r in records if r.get("setting") == "domain64"]
    sp = next(r for r in records if r.get("speed"))
    timing = {(r["data"], r["epsilon"]): r for r in records if r.get("timing")}
    lines = ["## Several columns: 2-D range queries (HDG)", "",
             f"bench/multi.py: n = {rows[0]['n']:,} people per data set, errors averaged over {rows[0]['repeats']} "
             f"collections, {N_QUERIES} random square queries per "
             "volume (sides sqrt(volume) of each range), MAE and MSE of the answered fractions against the exact "
             "fractions. HDG at ldpnum's default granularities (g1, g2) (the paper's guideline, α1 = 0.3) with its "
             "post-processing (shrinkage of the 2-D grid toward independence, noise-weighted Norm-Sub, "
             "variance-weighted consistency; w: the shrinkage weight, mean over the collections, 1 = kept); without "
             "shrinkage: the same reports with shrink=False; the paper's post-processing: "
             "the same reports with consistency=\"paper\" (Norm-Sub, weights 1/C); 2-D OLH: "
             "one g × g grid (the paper's 2-D guideline with one grid); 1-D SW × 2: half the people per column, "
             "Square Wave + EMS, answers multiplied (independence). Reference: the issue's MAE figures for the "
             "paper's research code (domain 64 per attribute), for scale only.", ""]
    lines += ["| data | volume | ε | HDG (g1, g2) | HDG MAE | HDG MSE | w | HDG without shrinkage MAE | "
              "HDG, paper's post-proc. MAE | 2-D OLH MAE | 1-D SW × 2 MAE | HDG / indep. | reference MAE |",
              "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    by = {(r["data"], r["volume"], r["epsilon"], r["method"]): r for r in rows}
    for data in dict.fromkeys(r["data"] for r in rows):
        for v in VOLUMES:
            for eps in EPSILONS:
                h, p, o, s, ns = (by[(data, v, eps, m)] for m in ("HDG", "HDG paper", "2-D OLH", "1-D SW × 2",
                                                                   "HDG no shrink"))
                ref = REFERENCE.get((data, v))
                refv = f"{ref[EPSILONS.index(eps)]:.4f}" if ref and eps in (0.5, 1.0, 2.0) else "–"
                lines.append(f"| {data} | {v:g} | {eps:g} | {tuple(h['granularities'])} | {h['mae']:.4f} | "
                             f"{h['mse']:.2e} | {np.mean(h['shrinkage']):.2f} | {ns['mae']:.4f} | {p['mae']:.4f} | "
                             f"{o['mae']:.4f} | {s['mae']:.4f} | "
                             f"{h['mae'] / s['mae']:.2f} | {refv} |")
    if grid_rows:
        lines += ["", "### privmdr's setting: domain 64 per attribute, its query generator", "",
                  "The same data discretized to 64 integer values per attribute (bounds (0, 64)); queries of "
                  f"{N_QUERIES} rectangles per volume whose sides are floor(16 sqrt(volume)) of 16 coarse units "
                  "(area 0.0977 and 0.4727) at uniform coarse positions, as privmdr draws them; HDG at the default "
                  "granularities, the same collections. Reference: the issue's MAE figures of privmdr run "
                  "unmodified in this setting (mean of 3 seeds; its own data sets of the same description).", "",
                  "| data | volume (area) | ε | HDG (g1, g2) | HDG MAE (SE) | HDG MSE | w | HDG without shrinkage MAE | "
                  "HDG, paper's post-proc. MAE | reference MAE | HDG ≤ reference |",
                  "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|:---:|"]
        gby = {(r["data"], r["volume"], r["epsilon"]): r for r in grid_rows}
        for data in dict.fromkeys(r["data"] for r in grid_rows):
            for v in VOLUMES:
                for eps in EPSILONS:
                    h = gby[(data, v, eps)]
                    ref = REFERENCE.get((data, v))
                    ref = ref[EPSILONS.index(eps)] if ref and eps in (0.5, 1.0, 2.0) else None
                    se = np.std(h["mae_runs"], ddof=1) / math.sqrt(len(h["mae_runs"])) if len(h["mae_runs"]) > 1 else 0
                    lines.append(f"| {data} | {v:g} ({h['area']:.4f}) | {eps:g} | {tuple(h['granularities'])} | "
                                 f"{h['mae']:.4f} ({se:.4f}) | {h['mse']:.2e} | {np.mean(h['shrinkage']):.2f} | "
                                 f"{h['no_shrink_mae']:.4f} | {h['paper_mae']:.4f} | "
                                 f"{'–' if ref is None else f'{ref:.4f}'} | "
                                 f"{'–' if ref is None else ('yes' if h['mae'] <= ref else 'no')} |")
    t = timing.get(("correlated", 1.0))
    lines += ["", f"HDG privatize (correlated pair, ε = 1, n = {sp['n']:,}): {sp['privatize_seeded_per_s'] / 1e6:.1f} M "
              f"people/s seeded, {sp['privatize_secure_per_s'] / 1e6:.1f} M people/s secure (median of runs, after "
              f"warm-up; validation of the (n, 2) input included); aggregate {t['aggregate_s']:.2f} s, estimate "
              f"(post-processing and response matrix) {t['estimate_s'] * 1e3:.0f} ms; 10,000 2-D queries at once: "
              f"{sp['queries_10000_s'] * 1e3:.1f} ms."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default=str(N))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sweep", action="store_true",
                    help="measure every candidate (g1, g2) instead; writes bench/results/multi-sweep.{md,json}")
    ap.add_argument("--speed", action="store_true",
                    help="only the privatize throughput and the 10,000-query time (seconds; for a quiet machine)")
    args = ap.parse_args(argv)
    if args.speed:
        sp = speed(datasets(int(float(args.n)))["correlated"][0], int(float(args.n)), max(args.repeats, 7))
        print(f"HDG privatize (correlated pair, ε = 1, n = {sp['n']:,}, median of {max(args.repeats, 7)}): "
              f"{sp['privatize_seeded_per_s'] / 1e6:.1f} M people/s seeded, "
              f"{sp['privatize_secure_per_s'] / 1e6:.1f} M people/s secure; 10,000 2-D queries "
              f"{1e3 * sp['queries_10000_s']:.1f} ms")
        return 0
    if args.sweep:
        import json

        records, md = sweep(repeats=args.repeats, n=int(float(args.n)))
        (HERE / "results" / "multi-sweep.md").write_text(md)
        (HERE / "results" / "multi-sweep.json").write_text(json.dumps(records, indent=1))
        print(md)
        return 0
    _, md = run(repeats=args.repeats, n=int(float(args.n)))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
