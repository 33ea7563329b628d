"""2-way marginals of several categorical columns: ldpnum's Marginals, all pairs against CALM's adaptive choice
and the product of 1-way estimates (``make bench``, section ``marginals``).

Data (n = 10^6 people each; the truth is the n rows' own tables):

* **flights**: five categorical columns derived from the embedded NYC 2013 flights (``ldpnum.data.
  load_flights``: the 327,346 flights with every column present), resampled with replacement to n rows (fixed
  seed): departure block (6: four-hour blocks of ``dep_time``), distance band (5: < 500, < 1000, < 1500,
  < 2500, more miles), arrival delay (4: early, 0–15, 15–60, > 60 minutes), air time band (4: < 60, < 120,
  < 240, more minutes) and speed band (3: distance / air time < 6, < 7.5, more miles per minute);
* **synthetic**: eight correlated columns of 2, 2, 3, 3, 2, 2, 3 and 4 categories, drawn from a mixture of
  three latent classes (each column's categories given the class from a Dirichlet(0.7) draw, fixed seed).

Methods, each spending ε per person (one report each):

* **all pairs**: ``ldp.Marginals(ε, categories, k=2)``, people split among all C(d, 2) pairs, consistency;
* **CALM**: ``ldp.Marginals(ε, categories, k=2, strategy="calm", n=n)``, the adaptive choice of width ℓ and
  covering sets (the chosen ℓ and m are shown), consistency; a pair is the projection of the sets holding it;
* **1-way product**: ``ldp.Marginals(ε, categories, k=1)`` (people split among the d columns), a pair answered
  by the product of its two 1-way estimates (the maximum-entropy table of 1-way tables: independence).

Errors, averaged over every pair and over ``repeats`` collections (default 2): total variation distance
(half the L1 distance of the 2-way tables) and the mean absolute error per cell. Also the 3-way total
variation over every triple (all pairs and 1-way: maximum-entropy tables; CALM: the projection when a set
holds the triple, else maximum entropy). Timing: privatize people/s (seeded, after a warm-up), aggregate and
estimate (post-processing) seconds, on the synthetic data at ε = 1. CALM's published figures are not quoted:
the paper's text was not available to this benchmark's author.

Runs alone: ``python bench/marginals.py [--n 1e6] [--repeats 2]``.
"""

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

N = 1_000_000
EPSILONS = (0.5, 1.0, 2.0, 4.0)
SEED = 0
METHODS = ("all pairs", "CALM", "1-way product")


def flights(n, rng):
    """``(X, categories)``: five categorical columns of the flights, resampled to ``n`` rows."""
    from ldpnum.data import dep_time_minutes, load_flights

    df = load_flights().dropna()
    dep = dep_time_minutes(df["dep_time"].to_numpy())
    dist, delay, air = (df[c].to_numpy() for c in ("distance", "arr_delay", "air_time"))
    cols = {
        "dep_block": np.minimum(dep // 240, 5),
        "distance": np.searchsorted([500, 1000, 1500, 2500], dist, side="right"),
        "arr_delay": np.searchsorted([0, 15, 60], delay, side="right"),
        "air_time": np.searchsorted([60, 120, 240], air, side="right"),
        "speed": np.searchsorted([6.0, 7.5], dist / air, side="right"),
    }
    cats = {"dep_block": 6, "distance": 5, "arr_delay": 4, "air_time": 4, "speed": 3}
    X = np.column_stack([cols[c] for c in cats]).astype(np.float64)
    return X[rng.integers(0, len(X), n)], cats


def synthetic(n, rng):
    """``(X, categories)``: eight columns correlated through three latent classes."""
    cats = {f"s{j}": c for j, c in enumerate((2, 2, 3, 3, 2, 2, 3, 4))}
    z = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    X = np.empty((n, len(cats)))
    for j, c in enumerate(cats.values()):
        cond = rng.dirichlet(np.full(c, 0.7), size=3)   # P(column j = v | class)
        u = rng.random(n)
        X[:, j] = (u[:, None] > np.cumsum(cond[z], axis=1)).sum(axis=1).clip(0, c - 1)
    return X, cats


def datasets(n):
    rng = np.random.default_rng(SEED)
    return {"flights": flights(n, rng), "synthetic": synthetic(n, rng)}


def true_table(X, cols, cats):
    shape = tuple(cats[c] for c in cols)
    idx = np.ravel_multi_index(tuple(X[:, i].astype(np.int64) for i in cols), shape)
    return np.bincount(idx, minlength=int(np.prod(shape))).reshape(shape) / len(X)


def mechanisms(eps, cats, n):
    import ldpnum as ldp

    return {"all pairs": ldp.Marginals(eps, cats, k=2), "CALM": ldp.Marginals(eps, cats, k=2, strategy="calm", n=n),
            "1-way product": ldp.Marginals(eps, cats, k=1)}


def run(repeats=2, n=N):
    """Measure; return ``(records, markdown)``."""
    data = datasets(n)
    records = []
    for name, (X, cats) in data.items():
        names = list(cats)
        pairs = list(itertools.combinations(range(len(names)), 2))
        triples = list(itertools.combinations(range(len(names)), 3))
        truth2 = {p: true_table(X, p, dict(enumerate(cats.values()))) for p in pairs}
        truth3 = {t: true_table(X, t, dict(enumerate(cats.values()))) for t in triples}
        for eps in EPSILONS:
            mechs = mechanisms(eps, cats, n)
            for method, m in mechs.items():
                m.privatize(X[:1000], rng=0)  # compile
                tv2, mae2, tv3, times = [], [], [], []
                for rep in range(repeats):
                    t0 = time.perf_counter()
                    reports = m.privatize(X, rng=1 + 10 * rep)
                    t1 = time.perf_counter()
                    agg = m.aggregate(reports)
                    t2 = time.perf_counter()
                    est = m.estimate_marginals(agg)
                    t3 = time.perf_counter()
                    times.append((t1 - t0, t2 - t1, t3 - t2))
                    d2 = [est.marginal((names[a], names[b])) - truth2[(a, b)] for a, b in pairs]
                    tv2.append(np.mean([0.5 * np.abs(e).sum() for e in d2]))
                    mae2.append(np.mean([np.abs(e).mean() for e in d2]))
                    tv3.append(np.mean([0.5 * np.abs(est.marginal(tuple(names[i] for i in t)) - truth3[t]).sum()
                                        for t in triples]))
                t_priv, t_agg, t_est = np.median(times, axis=0)
                records.append({"data": name, "epsilon": eps, "method": method, "tv2": float(np.mean(tv2)),
                                "mae2": float(np.mean(mae2)), "tv3": float(np.mean(tv3)),
                                "tv2_runs": [float(v) for v in tv2], "n": n, "repeats": repeats,
                                "width": m.width, "sets": len(m.sets), "predicted": m.predicted_error()
                                if method != "1-way product" else None,
                                "privatize_per_s": n / t_priv, "aggregate_s": float(t_agg), "estimate_s": float(t_est)})
            print(f"marginals {name} eps={eps:g}: " + ", ".join(
                f"{r['method']} TV {r['tv2']:.4f} (l={r['width']}, m={r['sets']})" for r in records[-3:]), flush=True)
    return records, markdown(records)


def markdown(records):
    intro = (f"bench/marginals.py: n = {records[0]['n']:,} people per data set, errors averaged over every pair "
             f"(3-way: every triple) and {records[0]['repeats']} collections. TV: total variation distance of the "
             "estimated table from the n rows' own; MAE: mean absolute error per cell. All pairs: every pair "
             "released; CALM: the adaptive choice (width ℓ, m sets); 1-way product: independence from 1-way "
             "estimates. 3-way tables: projections where a released set holds them, else maximum entropy.")
    head = ("| data | ε | all pairs TV | CALM TV (ℓ, m) | 1-way product TV | CALM / all | all pairs MAE | CALM MAE | "
            "3-way TV all / CALM / product |")
    lines = ["## Several categorical columns: 2-way marginals (Marginals: all pairs, CALM, 1-way product)", "",
             intro, "", head, "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    by = {(r["data"], r["epsilon"], r["method"]): r for r in records}
    for data in dict.fromkeys(r["data"] for r in records):
        for eps in EPSILONS:
            a, c, p = (by[(data, eps, m)] for m in METHODS)
            lines.append(f"| {data} | {eps:g} | {a['tv2']:.4f} | {c['tv2']:.4f} ({c['width']}, {c['sets']}) | "
                         f"{p['tv2']:.4f} | {c['tv2'] / a['tv2']:.2f} | {a['mae2']:.5f} | {c['mae2']:.5f} | "
                         f"{a['tv3']:.4f} / {c['tv3']:.4f} / {p['tv3']:.4f} |")
    lines += ["", "Timing (synthetic data, ε = 1, n = {:,}; median of the collections, after warm-up):".format(
        records[0]["n"]), ""]
    for m in METHODS:
        r = by[("synthetic", 1.0, m)]
        lines.append(f"- {m}: privatize {r['privatize_per_s'] / 1e6:.1f} M people/s (seeded), aggregate "
                     f"{r['aggregate_s']:.2f} s, estimate {r['estimate_s'] * 1e3:.0f} ms ({r['sets']} tables)")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default=str(N))
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    _, md = run(repeats=args.repeats, n=int(float(args.n)))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
