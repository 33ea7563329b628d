"""Adaptive two-round collection against one round of Square Wave (``make bench``, section ``adaptive``).

For each data set and ε, ``COLLECTIONS`` collections of ``N`` people (fixed seeds; a fresh sample per collection)
are estimated by

* **SW + ems-cv** (the baseline): everyone reports with ``SquareWave(ε, bounds)``, estimated with the default
  ``estimate_distribution`` at 1024 buckets. Its reports are reused by the protocols (common random numbers):
  the pilot's people report the same Square Wave reports, and so does the second round when the payload is
  plain, so a fallback equals the baseline exactly (ratio 1.00) and a warped round differs from it only by
  its own second-round draw;
* **adaptive** (``ldp.AdaptiveDistribution(ε, bounds)``, the default ``adapt="auto"``): a 20% Square Wave pilot,
  a payload, a second round warped to the pilot when the pilot's held-out likelihood prefers no smoothing, or one
  pass on a pilot that leaned towards none or sits on a tenth of the bounds (``ldpnum.mechanisms.adaptive.adapts``;
  else plain), one joint estimate;
* **warped (forced)**, ``adapt=True``: the warped second round on every data set (the candidate design itself,
  to show what the switch avoids; where the switch warped, the same pilot, payload and reports as *adaptive*);
* **warped, no pins** (spiky and heavy only): the warped second round with ``pin_point_masses=False`` (the
  design before point-mass zones: the joint fit smooths everywhere; dropped where the zones pay);
* **warped λ = 0.2** (not run by default, ``--methods``): a steeper warp (a fifth of the slope uniform instead of
  half). Measured and dropped (5 collections, before the zones): spiky 0.84-1.28 of the baseline, heavy 0.25-1.32,
  no better than λ = 0.5 overall and slower per iteration;
* **oracle warp** (not run by default): bounds on what a better pilot could give. The protocol's own pilot
  reports and second-round draw, but the payload built from the *people's true distribution*: the warp of their
  1024-bucket histogram (:func:`ldpnum.mechanisms.adaptive.warp_knots`, as from a pilot with no noise) and, on
  the spiky data, zones at the true point masses (:func:`oracle_zones`);
* **oracle zones, one round** (spiky only, not run by default): no second round at all, the baseline's reports of
  everyone fitted with the true point masses' zones left out of the smoothing (what a perfect detector of point
  masses would give one round).

Metrics against the people's own values: W1 and KS (``ldpnum.metrics``), and the MSE of 1000 random ranges
of each volume 0.1 and 0.5 of the bounds (starts uniform, fixed seeds), as ratios of the means over the collections
to the baseline's (< 1 is better), and *adaptive*'s with 95% intervals from a paired bootstrap over the
collections (:func:`ratio_interval`: on the heavy data one collection's W1 varies threefold from the next, so a
19-collection ratio is known to about ±0.2 there). On the heavy data, also the share of W1 that lies above x = 10
(:func:`w1_beyond`), where 1.07% of the people are. Time per round (median over the collections, seconds): the pilot's privatize +
aggregate, the fit of the payload, the second round's privatize + aggregate, and the joint estimate; the
baseline's privatize + aggregate + estimate.

Data: spiky = 70% Beta(2, 5) + point masses 0.10/0.08/0.05/0.04/0.03 at 0.1/0.3/0.45/0.7/0.9 on (0, 1);
heavy = log-normal(0, 1) on the wide public bound (0, 100); smooth: Beta(5, 2) on (0, 1), N(0.5, 0.1²) on (0, 1)
and the embedded flights' distance (328,521 flights, people drawn with replacement) on (0, 4983).

Runs alone: ``PYTHONPATH=. python bench/adaptive.py [--collections 5] [--n 1e6] [--quick] [--json F]``; more
collections added to a run with ``--first 5 --json G`` and one table of both with ``--render F G``.
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

N = 1_000_000
COLLECTIONS = 5
EPSILONS = (0.5, 1.0, 2.0, 4.0)
DATASETS = ("spiky", "heavy", "Beta(5, 2)", "gaussian", "flights distance")
#: Where the point-mass zones are compared with the warp alone.
SHARP = ("spiky", "heavy")
VOLUMES = (0.1, 0.5)
N_QUERIES = 1000
#: The adaptive protocol's joint fit with the zones as atoms (``PIN_ATOMS``), on the same rounds as "adaptive".
ATOMS = "adaptive, atoms"
ORACLE_WARP, ORACLE_ZONES = "oracle warp", "oracle zones, one round"
METHODS = ("SW + ems-cv", "adaptive", "warped (forced)", "warped, no pins", "warped λ=0.2", ATOMS, ORACLE_WARP,
           ORACLE_ZONES)
#: What ``make bench`` runs (the λ = 0.2 warp was measured and dropped: docstring).
DEFAULT_METHODS = METHODS[:4]
BASELINE = "SW + ems-cv"


def sample(name, n, seed):
    """``(values, bounds)`` of data set ``name`` (see the module docstring)."""
    from ranges import sample as range_sample

    if name in ("spiky", "heavy", "gaussian"):
        return range_sample(name, n, seed)
    rng = np.random.default_rng(seed)
    if name == "Beta(5, 2)":
        return rng.beta(5, 2, n), (0.0, 1.0)
    if name == "flights distance":
        from ldpnum.demo import flights_frame

        dist = flights_frame()["distance"].to_numpy(dtype=np.float64)
        return rng.choice(dist, n), (0.0, 4983.0)
    raise ValueError(name)


def range_mse(est, xs, bounds, volume):
    from ranges import queries, truth

    a, b = queries(bounds, volume, N_QUERIES, 7 + int(100 * volume))
    return float(np.mean((est.range(a, b) - truth(xs, a, b)) ** 2))


#: Where the heavy data's W1 is split (:func:`w1_beyond`): 1.07% of the log-normal's people lie above 10.
TAIL_CUT = {"heavy": 10.0}


def w1_beyond(est, xs, bounds, cut, points=200_001):
    """The part of ``wasserstein(est, xs)`` (unit scale) that lies above ``cut``: ``∫_cut^hi |F̂ - F| dx / (hi - lo)``.

    On a grid of ``points`` equal steps (a Riemann sum: the CDF gaps are piecewise linear or constant between
    the estimate's edges and the people's values, so it agrees with the exact W1 to about the step).
    """
    lo, hi = bounds
    grid = np.linspace(cut, hi, points)
    gap = np.abs(est.cdf(grid) - np.searchsorted(xs, grid, side="right") / xs.size)
    return float(gap.mean() * (hi - cut) / (hi - lo))


def _timed(fn):
    """``(fn(), wall seconds, CPU seconds of the process)``: the CPU time is steadier on a loaded machine."""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def protocol(proto, x, seed, reports):
    """The adaptive protocol round by round, timed: ``(estimate, design, seconds per round)``.

    ``reports`` are every person's Square Wave report of the baseline (common random numbers): the pilot's
    people report those, and so do the second round's when the payload is plain, so that a fallback is the
    baseline's collection exactly (ratio 1 by construction) and the other ratios are not blurred by a second
    draw of the pilot's noise. A warped second round draws its own reports.
    """
    rounds = proto.assign_rounds(x.size, rng=seed)
    pilot = proto.pilot_mechanism()
    # timed on a fresh draw of the pilot's reports (the same work as the real round), then the common ones used
    _, t1, c1 = _timed(lambda: pilot.aggregate(pilot.privatize(x[rounds == 0], rng=seed + 1)))
    pilot_agg = pilot.aggregate(reports[rounds == 0])
    payload, t2, c2 = _timed(lambda: proto.fit_payload(pilot_agg))
    second = proto.second_mechanism(payload)
    second_agg, t3, c3 = _timed(lambda: second.aggregate(second.privatize(x[rounds == 1], rng=seed + 2)))
    if second == pilot:
        second_agg = second.aggregate(reports[rounds == 1])
    est, t4, c4 = _timed(lambda: proto.estimate(pilot_agg, second_agg, payload=payload))
    return (est, payload, {"pilot": t1, "fit": t2, "second": t3, "estimate": t4},
            {"pilot": c1, "fit": c2, "second": c3, "estimate": c4}, (pilot_agg, second_agg))


def with_atoms(proto, payload, aggs):
    """The joint estimate of the same rounds with the zones fitted as atoms (``PIN_ATOMS``), timed."""
    import ldpnum.mechanisms.adaptive as adaptive

    saved = adaptive.PIN_ATOMS
    adaptive.PIN_ATOMS = True
    try:
        return _timed(lambda: proto.estimate(*aggs, payload=payload))
    finally:
        adaptive.PIN_ATOMS = saved


def oracle_zones(name, bounds):
    """The point-mass zones (runs of the joint fit's buckets) at the data set's true point masses (spiky only).

    Each point's bucket of :data:`ldpnum.mechanisms.adaptive.FIT_BINS`, padded by ``ZONE_PAD`` buckets each side,
    as :func:`ldpnum.mechanisms.adaptive.point_mass_zones` pads what it detects.
    """
    import ldpnum.mechanisms.adaptive as adaptive
    from ranges import SPIKES

    if name != "spiky":
        return ()
    lo, hi = bounds
    zones = []
    for p in SPIKES[0]:
        b = min(int((p - lo) / (hi - lo) * adaptive.FIT_BINS), adaptive.FIT_BINS - 1)
        zones.append((max(b - adaptive.ZONE_PAD, 0), min(b + adaptive.ZONE_PAD + 1, adaptive.FIT_BINS)))
    return tuple(zones)


def oracle_warp(proto, x, bounds, seed, reports, zones):
    """The protocol's rounds with the payload of a noise-free pilot (:data:`ORACLE_WARP`): ``(estimate, seconds)``.

    The pilot's people report the baseline's reports and the second round draws with the seed of
    :func:`protocol`, so only the payload differs from *adaptive*'s collection.
    """
    import ldpnum.mechanisms.adaptive as adaptive

    lo, hi = bounds
    rounds = proto.assign_rounds(x.size, rng=seed)
    pilot = proto.pilot_mechanism()
    pilot_agg = pilot.aggregate(reports[rounds == 0])
    d = adaptive.FIT_BINS
    truth = np.bincount(np.minimum(((x - lo) / (hi - lo) * d).astype(np.int64), d - 1), minlength=d) / x.size
    payload = adaptive.AdaptivePayload(proto.epsilon, bounds, "warped", adaptive.warp_knots(truth),
                                       adaptive._digest(pilot.spec), pilot.n_cells, zones)
    second = proto.second_mechanism(payload)
    second_agg = second.aggregate(second.privatize(x[rounds == 1], rng=seed + 2))
    saved = adaptive.REDETECT_ZONES
    adaptive.REDETECT_ZONES = False  # the true zones, not those the estimate would find on the reports
    try:
        return _timed(lambda: proto.estimate(pilot_agg, second_agg, payload=payload))[:2]
    finally:
        adaptive.REDETECT_ZONES = saved


def _tail(name, est, xs, bounds):
    """``{"w1_tail": ...}`` for the data sets of :data:`TAIL_CUT`, else ``{}``."""
    return {"w1_tail": w1_beyond(est, xs, bounds, TAIL_CUT[name])} if name in TAIL_CUT else {}


def one(name, eps, seed, n, methods):
    import ldpnum as ldp
    import ldpnum.mechanisms.adaptive as adaptive
    from ldpnum.metrics import ks, wasserstein

    x, bounds = sample(name, n, 1000 + seed)
    xs = np.sort(x)
    sw = ldp.SquareWave(eps, bounds)
    reports = sw.privatize(x, rng=seed + 10) if BASELINE not in methods else None
    out = []
    adaptive_run = None  # (protocol, payload, both rounds' aggregates) of the method "adaptive"
    for method in methods:
        same = [r for r in out if r["method"] == "adaptive" and r["design"] == "warped"]
        if method == "warped (forced)" and same:  # the switch warped: the same pilot, payload and reports
            out.append({**same[0], "method": method})
            continue
        if method == ATOMS:
            if adaptive_run is None:
                raise ValueError(f"{ATOMS!r} re-estimates the rounds of 'adaptive': list 'adaptive' before it")
            base_rec = next(r for r in out if r["method"] == "adaptive")
            proto, payload, aggs = adaptive_run
            if not payload.pinned:  # no zone: the same fit as adaptive's
                out.append({**base_rec, "method": method})
                continue
            est, t, c = with_atoms(proto, payload, aggs)
            times = {**base_rec["times"], "estimate": t}
            cpu = {**base_rec["cpu"], "estimate": c}
            for d in (times, cpu):
                d["total"] = sum(v for k, v in d.items() if k != "total")
            out.append({**base_rec, "method": method, "w1": float(wasserstein(est, x)), "ks": float(ks(est, x)),
                        **_tail(name, est, xs, bounds),
                        **{f"mse{v:g}": range_mse(est, xs, bounds, v) for v in VOLUMES},
                        "smoothing": est.smoothing, "times": times, "cpu": cpu})
            continue
        if method in (ORACLE_WARP, ORACLE_ZONES):
            import ldpnum.mechanisms.adaptive as adaptive

            zones = oracle_zones(name, bounds)
            if method == ORACLE_ZONES and not zones:
                continue
            if reports is None:
                raise ValueError(f"{method!r} uses the baseline's reports: list {BASELINE!r} before it")
            if method == ORACLE_WARP:
                est, t = oracle_warp(ldp.AdaptiveDistribution(eps, bounds, adapt=True), x, bounds, seed + 20,
                                     reports, zones)
            else:
                est, t, _ = _timed(lambda: adaptive._fit(
                    [sw.aggregate(reports)], [sw], n_bins=adaptive.FIT_BINS,
                    pinned=adaptive._pinned_mask(zones, adaptive.FIT_BINS), max_iter=adaptive.JOINT_MAX_ITER,
                    search_max_iter=adaptive.JOINT_SEARCH_MAX_ITER))
            out.append({"data": name, "epsilon": eps, "seed": seed, "n": n, "method": method, "design": "oracle",
                        "w1": float(wasserstein(est, x)), "ks": float(ks(est, x)), **_tail(name, est, xs, bounds),
                        **{f"mse{v:g}": range_mse(est, xs, bounds, v) for v in VOLUMES},
                        "smoothing": est.smoothing, "times": {"total": t}, "cpu": {"total": t}})
            continue
        if method == "warped, no pins" and name not in SHARP:  # the zones are for sharp data (and cost a run)
            continue
        if method == BASELINE:
            def base():
                nonlocal reports
                reports = sw.privatize(x, rng=seed + 10)
                return sw.estimate_distribution(sw.aggregate(reports), n_bins=1024)
            est, t, c = _timed(base)
            design, times, cpu = "plain", {"total": t}, {"total": c}
        else:
            mix = adaptive.UNIFORM_MIX
            proto = ldp.AdaptiveDistribution(eps, bounds, adapt="auto" if method == "adaptive" else True,
                                             pin_point_masses=method != "warped, no pins")
            adaptive.UNIFORM_MIX = 0.2 if method == "warped λ=0.2" else mix
            try:
                est, payload, times, cpu, aggs = protocol(proto, x, seed + 20, reports)
            finally:
                adaptive.UNIFORM_MIX = mix
            design = payload.design
            if method == "adaptive":
                adaptive_run = (proto, payload, aggs)
            times["total"] = sum(times.values())
            cpu["total"] = sum(cpu.values())
        out.append({"data": name, "epsilon": eps, "seed": seed, "n": n, "method": method, "design": design,
                    "w1": float(wasserstein(est, x)), "ks": float(ks(est, x)), **_tail(name, est, xs, bounds),
                    **{f"mse{v:g}": range_mse(est, xs, bounds, v) for v in VOLUMES},
                    "smoothing": est.smoothing, "times": times, "cpu": cpu})
    return out


def run(collections=COLLECTIONS, n=N, epsilons=EPSILONS, datasets=DATASETS, methods=DEFAULT_METHODS,
        json_path=None, first=0):
    records = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # point-mass warnings of the spiky data
        for seed in range(first, first + collections):  # collections outermost: a run cut short has every cell
            for name in datasets:
                for eps in epsilons:
                    records += one(name, eps, seed, n, methods)
                    if json_path:  # after every collection: a long run interrupted keeps its figures
                        import json

                        Path(json_path).write_text(json.dumps(records, indent=1))
                    print(f"adaptive: {name} ε={eps:g} collection {seed + 1}/{first + collections}", file=sys.stderr,
                          flush=True)
    return records, markdown(records)


def _mean(records, data, eps, method, key):
    return float(np.mean([r[key] for r in records if (r["data"], r["epsilon"], r["method"]) == (data, eps, method)]))


#: Resamples of the paired bootstrap of the ratios' intervals (:func:`ratio_interval`), and its seed.
BOOTSTRAP_DRAWS, BOOTSTRAP_SEED = 4000, 0


def ratio_interval(records, data, eps, method, key, level=0.95):
    """``(ratio, lo, hi)``: the ratio of ``method``'s mean ``key`` to the baseline's, with a paired bootstrap interval.

    The collections are resampled with replacement (each with both methods' errors, which share the people and
    the pilot), ``BOOTSTRAP_DRAWS`` times, and the ratio of the resampled means taken each time; ``lo, hi`` are its
    central ``level`` percentiles. It says how far the ratio of a table cell could move with other collections:
    on heavy-tailed data one collection's W1 varies threefold from the next.
    """
    mine = {r["seed"]: r[key] for r in records if (r["data"], r["epsilon"], r["method"]) == (data, eps, method)}
    base = {r["seed"]: r[key] for r in records if (r["data"], r["epsilon"], r["method"]) == (data, eps, BASELINE)}
    seeds = sorted(set(mine) & set(base))
    a = np.array([mine[s] for s in seeds])
    b = np.array([base[s] for s in seeds])
    idx = np.random.default_rng(BOOTSTRAP_SEED).integers(0, len(seeds), (BOOTSTRAP_DRAWS, len(seeds)))
    boot = a[idx].mean(axis=1) / b[idx].mean(axis=1)
    lo, hi = np.percentile(boot, [50 * (1 - level), 50 * (1 + level)])
    return float(a.mean() / b.mean()), float(lo), float(hi)


def interval_table(records, method="adaptive"):
    """Markdown rows: ``method``'s ratios with their 95% paired-bootstrap intervals (:func:`ratio_interval`)."""
    keys = ("w1", "ks", "mse0.1", "mse0.5")
    lines = [f"{method.capitalize()}'s ratios with 95% intervals (paired bootstrap over the collections, "
             f"{BOOTSTRAP_DRAWS} resamples):", "",
             "| data | ε | W1 | KS | MSE.1 | MSE.5 |", "|---|---:|---|---|---|---|"]
    for data in [d for d in DATASETS if any(r["data"] == d for r in records)]:
        for eps in sorted({r["epsilon"] for r in records if r["data"] == data}):
            if not any((r["data"], r["epsilon"], r["method"]) == (data, eps, method) for r in records):
                continue
            cells = ["{:.2f} [{:.2f}, {:.2f}]".format(*ratio_interval(records, data, eps, method, key))
                     for key in keys]
            lines.append(f"| {data} | {eps:g} | " + " | ".join(cells) + " |")
    return lines


def markdown(records):
    seen = list(dict.fromkeys(r["method"] for r in records))
    methods = [m for m in METHODS if m in seen] + [m for m in seen if m not in METHODS]  # dropped designs' records
    others = [m for m in methods if m != BASELINE]
    r0 = records[0]
    k = len({r["seed"] for r in records})
    lines = ["## Adaptive two-round collection (AdaptiveDistribution) against one round of SW + ems-cv", "",
             f"bench/adaptive.py: n = {r0['n']:,} people, {k} collections per cell, ratios of the mean error over the "
             f"collections to {BASELINE}'s (< 1 is better). Metrics: W1, KS, MSE of {N_QUERIES} random ranges of "
             "volume 0.1 and 0.5. *design*: how many of the collections the switch warped.", "",
             "| data | ε | " + " | ".join(f"{m} W1 / KS / MSE.1 / MSE.5" for m in others) + " | adaptive warped |",
             "|---|---:|" + "---|" * len(others) + "---:|"]
    datasets = [d for d in DATASETS if any(r["data"] == d for r in records)]
    epsilons = sorted({r["epsilon"] for r in records})
    for data in datasets:
        for eps in epsilons:
            cells = []
            for m in others:
                if not any((r["data"], r["epsilon"], r["method"]) == (data, eps, m) for r in records):
                    cells.append("-")
                    continue
                ratios = [_mean(records, data, eps, m, key) / _mean(records, data, eps, BASELINE, key)
                          for key in ("w1", "ks", "mse0.1", "mse0.5")]
                cells.append(" / ".join(f"{v:.2f}" for v in ratios))
            warped = [r for r in records if (r["data"], r["epsilon"], r["method"]) == (data, eps, "adaptive")]
            share = f"{sum(r['design'] == 'warped' for r in warped)}/{len(warped)}" if warped else "-"
            lines.append(f"| {data} | {eps:g} | " + " | ".join(cells) + f" | {share} |")
    if len({r["seed"] for r in records}) > 1:
        for m in ("adaptive", ORACLE_WARP, ORACLE_ZONES):
            if m in others:
                lines += [""] + interval_table(records, m)
    tails = [r for r in records if "w1_tail" in r]
    if tails:
        lines += ["", "Where W1 lies on the heavy data: the share of each method's W1 above x = 10 (where 1.07% of the "
                  "people are), mean over the collections:", "",
                  "| data | ε | " + " | ".join(methods) + " |", "|---|---:|" + "---:|" * len(methods)]
        for data in sorted({r["data"] for r in tails}):
            for eps in sorted({r["epsilon"] for r in tails if r["data"] == data}):
                cells = []
                for m in methods:
                    rows = [r for r in tails if (r["data"], r["epsilon"], r["method"]) == (data, eps, m)]
                    cells.append(f"{np.mean([r['w1_tail'] for r in rows]) / np.mean([r['w1'] for r in rows]):.0%}"
                                 if rows else "-")
                lines.append(f"| {data} | {eps:g} | " + " | ".join(cells) + " |")
    lines += ["", "Baseline's absolute errors (mean over the collections; W1 on the unit scale of the bounds, as "
              "ldpnum.metrics.wasserstein gives it):", "",
              "| data | ε | W1 | KS | MSE.1 | MSE.5 |", "|---|---:|---:|---:|---:|---:|"]
    for data in datasets:
        for eps in epsilons:
            rows = [r for r in records if (r["data"], r["epsilon"], r["method"]) == (data, eps, BASELINE)]
            lines.append(f"| {data} | {eps:g} | {np.mean([r['w1'] for r in rows]):.2e} | "
                         f"{np.mean([r['ks'] for r in rows]):.2e} | {np.mean([r['mse0.1'] for r in rows]):.2e} | "
                         f"{np.mean([r['mse0.5'] for r in rows]):.2e} |")
    lines += ["", "Time per round (seconds, median over ε and collections; 2-core shared machine; the baseline's "
              "total is its privatize + aggregate + estimate):", "",
              "| data | method | pilot privatize+aggregate | fit payload | second privatize+aggregate | estimate | "
              "total |", "|---|---|---:|---:|---:|---:|---:|"]
    lines += _time_rows(records, datasets, methods, "times")
    if any("cpu" in r for r in records):
        lines += ["", "CPU seconds per round (`time.process_time`: every thread of the process, steadier than the wall "
                  "clock on a shared machine; median over ε and collections):", "",
                  "| data | method | pilot privatize+aggregate | fit payload | second privatize+aggregate | estimate | "
                  "total |", "|---|---|---:|---:|---:|---:|---:|"]
        lines += _time_rows([r for r in records if "cpu" in r], datasets, methods, "cpu")
    return "\n".join(lines) + "\n"


def _time_rows(records, datasets, methods, field):
    lines = []
    for data in datasets:
        for m in methods:
            rows = [r[field] for r in records if r["method"] == m and r["data"] == data]
            if not rows:
                continue
            med = {key: np.median([t[key] for t in rows if key in t]) if any(key in t for t in rows) else None
                   for key in ("pilot", "fit", "second", "estimate", "total")}
            lines.append(f"| {data} | {m} | " + " | ".join("-" if v is None else f"{v:.2f}" for v in med.values())
                         + " |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collections", type=int, default=COLLECTIONS)
    ap.add_argument("--n", type=float, default=N)
    ap.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    ap.add_argument("--datasets", default=";".join(DATASETS), help="names separated by ';'")
    ap.add_argument("--methods", default=";".join(DEFAULT_METHODS), help="names separated by ';'")
    ap.add_argument("--quick", action="store_true", help="n = 1e5, 1 collection")
    ap.add_argument("--first", type=int, default=0, help="first collection's index (to add collections to a run)")
    ap.add_argument("--json", help="also write the records here")
    ap.add_argument("--render", nargs="+", help="print the tables of records written by --json (no run)")
    args = ap.parse_args(argv)
    if args.render:
        import json

        print(markdown([r for path in args.render for r in json.loads(Path(path).read_text())]))
        return 0
    n, k = (100_000, 1) if args.quick else (int(args.n), args.collections)
    records, md = run(collections=k, n=n, epsilons=tuple(float(e) for e in args.epsilons.split(",")),
                      datasets=tuple(args.datasets.split(";")), methods=tuple(args.methods.split(";")),
                      json_path=args.json, first=args.first)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
