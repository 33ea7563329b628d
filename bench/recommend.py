"""``ldp.recommend``'s predicted errors next to the errors its choice makes on real data (``make bench``, section
``recommend``).

Data: the embedded NYC 2013 flights (``ldpnum.demo.flights_frame``: the 328,521 flights that departed), columns
``dep_time`` (minutes after midnight, public bounds (0, 1440)) and ``distance`` (miles, bounds (0, 5000)). One fixed
permutation (seed 0) of the rows splits them: the first ``N`` = 10^5 rows are the people who report (the truth is
their values), the next ``REFERENCE_N`` = 20,000 rows stand in for a **public** sample (say an earlier year's
published flights): disjoint from the reporting rows, so nothing private goes into the choice.

For each task ("mean", "distribution", "quantiles", "ranges"), column and ε in {0.5, 1, 2, 4}:

1. ``ldp.recommend(task, n=N, epsilon=ε, bounds=...)`` without a reference (its default simulates a Beta(2, 2)
   on the bounds), then with ``reference=`` the public stand-in ("mean" is a closed form and takes none);
2. the returned mechanism privatizes the ``N`` values in ``COLLECTIONS`` collections (privatization seeds
   ``5000 + c``; ``MEAN_COLLECTIONS`` for the mean, whose estimate is cheap and whose spread is the quantity
   measured), the returned estimator estimates, and the error is scored by the metric the prediction states,
   with recommend's own constants (``ldpnum._recommend``):

   * mean: the error of ``estimate_mean`` against the true mean; the prediction is the **worst-case** standard
     error ``sqrt(V_max / n)``; shown with the standard deviation of the estimates over collections and the
     exact noise-only standard error of these values, ``sqrt(sum(variance(x_i))) / n`` (the mechanism's
     per-value variance from its plan);
   * distribution: ``ldpnum.metrics.wasserstein(estimate, values)`` (W1 as a fraction of the domain width);
   * quantiles: the mean absolute error of the ``SIM_QUANTILES`` (0.1, 0.5, 0.9) quantiles in units of the data
     (``ldpnum.metrics.quantile_error`` times the domain width: ``numpy.quantile``'s definition, as recommend);
   * ranges: the range-query MSE over ``SIM_RANGES`` = 200 random ranges of each volume in ``SIM_VOLUMES`` (0.1
     and 0.5 of the domain), drawn by recommend's own ``_queries`` with collection ``c``'s seeds ``10 c + i``
     (collections 0–2 face exactly the ranges the prediction was simulated on); both candidates (Square Wave +
     its default estimator, the adaptive hierarchical histogram) are measured, to say whether the pick was right.

Each cell shows the mean ± standard error over collections and the ratio measured / predicted.

Runs alone: ``python bench/recommend.py [--collections 10]`` prints the markdown.
"""

import argparse
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

N = 100_000
REFERENCE_N = 20_000
SEED = 0
EPSILONS = (0.5, 1.0, 2.0, 4.0)
TASKS = ("mean", "distribution", "quantiles", "ranges")
COLUMNS = {"dep_time": (0.0, 1440.0), "distance": (0.0, 5000.0)}
COLLECTIONS = 10
MEAN_COLLECTIONS = 50
SHORT = {"square_wave": "Square Wave", "hierarchical_histogram": "hierarchical histogram", "duchi": "Duchi",
         "hybrid": "Hybrid", "piecewise": "Piecewise", "laplace": "Laplace"}


def data():
    """``{column: (values, reference)}``: the ``N`` reporting rows and the disjoint public stand-in."""
    from ldpnum.demo import flights_frame

    df = flights_frame()
    perm = np.random.default_rng(SEED).permutation(len(df))
    rows, ref_rows = perm[:N], perm[N:N + REFERENCE_N]
    return {c: (df[c].to_numpy(np.float64)[rows], df[c].to_numpy(np.float64)[ref_rows]) for c in COLUMNS}


def _range_queries(bounds, c):
    """Collection ``c``'s ranges: recommend's ``_queries`` with the seeds of its simulated run ``c``."""
    from ldpnum._recommend import SIM_VOLUMES, _queries

    qs = [_queries(bounds, 10 * c + i, width=v) for i, v in enumerate(SIM_VOLUMES)]
    return np.concatenate([q[0] for q in qs]), np.concatenate([q[1] for q in qs])


def _estimate(mech, estimator, x, seed):
    """Privatize ``x`` with ``mech`` (seed ``seed``) and run the estimator ``recommend`` named."""
    agg = mech.aggregate(mech.privatize(x, rng=seed))
    if estimator == "estimate_mean":
        return mech.estimate_mean(agg)
    if estimator.startswith("estimate_distribution"):
        return mech.estimate_distribution(agg)
    if estimator == "estimate_ranges(consistency='adaptive')":
        return mech.estimate_ranges(agg, consistency="adaptive")
    raise ValueError(f"unknown estimator {estimator!r}")


def _score(task, est, x, xs, bounds, c):
    """The error of one estimate by the metric recommend predicts for ``task``."""
    from ldpnum import metrics
    from ldpnum._recommend import SIM_QUANTILES

    lo, hi = bounds
    if task == "mean":
        return float(est.value - x.mean())
    if task == "distribution":
        return metrics.wasserstein(est, x)
    if task == "quantiles":
        return metrics.quantile_error(est, x, qs=SIM_QUANTILES) * (hi - lo)
    a, b = _range_queries(bounds, c)
    truth = (np.searchsorted(xs, b, side="right") - np.searchsorted(xs, a, side="left")) / xs.size
    return float(np.mean((np.asarray(est.range(a, b)) - truth) ** 2))


def _summary(v):
    v = np.asarray(v, dtype=np.float64)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def run(collections=COLLECTIONS, mean_collections=MEAN_COLLECTIONS):
    """Measure; return ``(records, markdown)``."""
    import ldpnum as ldp
    from ldpnum.mechanisms import SquareWave
    from ldpnum.ranges import HierarchicalHistogram

    records = []
    for column, (x, ref) in data().items():
        bounds = COLUMNS[column]
        xs = np.sort(x)
        for eps in EPSILONS:
            # each (mechanism, estimator)'s estimates of this column at this ε, shared by the tasks that use them
            cache: dict = {}

            def errors(task, mech, estimator, count):
                key = (mech.name, estimator.split(" ")[0])  # SW's distribution serves its ranges too
                if len(cache.get(key, ())) < count:
                    cache[key] = [_estimate(mech, estimator, x, 5000 + c) for c in range(count)]
                return [_score(task, e, x, xs, bounds, c) for c, e in enumerate(cache[key][:count])]

            for task in TASKS:
                for with_ref in (False, True):
                    if with_ref and task == "mean":
                        continue
                    rec = ldp.recommend(task, n=N, epsilon=eps, bounds=bounds,
                                        reference=ref if with_ref else None)
                    count = mean_collections if task == "mean" else collections
                    errs = errors(task, rec.mechanism, rec.estimator, count)
                    r = {"task": task, "column": column, "epsilon": eps, "reference": with_ref, "n": N,
                         "collections": count, "mechanism": rec.mechanism.name, "estimator": rec.estimator,
                         "metric": rec.metric, "predicted": rec.predicted_error, "how": rec.how,
                         "alternatives": rec.alternatives, "errors": errs}
                    if task == "mean":
                        e = np.asarray(errs)
                        r["measured"], r["measured_se"] = _summary(np.abs(e))
                        r["sd"] = float(e.std(ddof=1))
                        r["rmse"] = float(np.sqrt(np.mean(e ** 2)))
                        r["se_at_data"] = float(np.sqrt(np.sum(rec.mechanism.variance(x)))) / N
                        r["ratio"] = r["rmse"] / rec.predicted_error
                    else:
                        r["measured"], r["measured_se"] = _summary(errs)
                        r["ratio"] = r["measured"] / rec.predicted_error
                    if task == "ranges":
                        # both candidates, measured, to say whether the pick was right
                        sw, hh = SquareWave(eps, bounds), HierarchicalHistogram(eps, bounds)
                        r["measured_by"] = {
                            "square_wave": _summary(errors(task, sw, "estimate_distribution (its range)", count)),
                            "hierarchical_histogram": _summary(
                                errors(task, hh, "estimate_ranges(consistency='adaptive')", count))}
                        r["predicted_by"] = {rec.mechanism.name: rec.predicted_error, **rec.alternatives}
                    records.append(r)
                    print(f"recommend {task} {column} eps={eps:g} ref={with_ref}: {rec.mechanism.name} predicted "
                          f"{rec.predicted_error:.3g} measured {r['measured']:.3g} ratio {r['ratio']:.2f}",
                          flush=True)
    return records, markdown(records)


def _chosen(r):
    est = {"estimate_mean": "", "estimate_distribution": " + ems-cv",
           "estimate_distribution (its range)": " + ems-cv", "estimate_ranges(consistency='adaptive')": " (adaptive)"}
    return SHORT.get(r["mechanism"], r["mechanism"]) + est.get(r["estimator"], f" ({r['estimator']})")


def markdown(records):
    r0 = records[0]
    colls = max(r["collections"] for r in records if r["task"] != "mean")
    lines = ["## `ldp.recommend`: predicted errors next to measured ones (flights)", "",
             f"bench/recommend.py: n = {N:,} flights (a fixed-seed subsample of the 328,521 embedded ones, seed "
             f"{SEED}); the public sample for `reference=` is {REFERENCE_N:,} other rows of the same permutation "
             "(disjoint from the reporting ones; a stand-in for a public sample such as an earlier year's). "
             "The returned mechanism privatizes the column, the returned estimator estimates, and the error is the "
             f"metric the prediction states; mean ± standard error over {colls} collections (mean: "
             f"{r0['collections']}). Ratio: measured / predicted.", "",
             "**Mean** (no reference: a closed form). Predicted: the worst-case standard error `sqrt(V_max / n)`; "
             "at the data: the exact noise-only standard error of these values `sqrt(Σ variance(x_i)) / n`; "
             "measured: the RMS error of the estimates (and their SD, and the mean |error|). "
             "Ratio: measured RMS / predicted.", "",
             "| column | ε | chosen | predicted SE (worst case) | SE at the data | measured RMS error | SD over "
             "collections | mean abs. error | ratio |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in records:
        if r["task"] == "mean":
            lines.append(f"| {r['column']} | {r['epsilon']:g} | {_chosen(r)} | {r['predicted']:.3g} | "
                         f"{r['se_at_data']:.3g} | {r['rmse']:.3g} | {r['sd']:.3g} | {r['measured']:.3g} ± "
                         f"{r['measured_se']:.1g} | {r['ratio']:.2f} |")
    units = {"distribution": "W1 (fraction of the width)", "quantiles": "MAE of q0.1/0.5/0.9 (units of the data)",
             "ranges": "range MSE (vol. 0.1 and 0.5)"}
    for with_ref, title in ((False, "Without a reference (Beta(2, 2) on the bounds)"),
                            (True, f"With `reference=` ({REFERENCE_N:,} public rows)")):
        lines += ["", f"**{title}.**", "", "| task (metric) | column | ε | chosen | predicted | measured | ratio |",
                  "|---|---|---:|---|---:|---:|---:|"]
        for r in records:
            if r["task"] != "mean" and r["reference"] == with_ref:
                lines.append(f"| {r['task']}: {units[r['task']]} | {r['column']} | {r['epsilon']:g} | {_chosen(r)} "
                             f"| {r['predicted']:.3g} | {r['measured']:.3g} ± {r['measured_se']:.1g} | "
                             f"{r['ratio']:.2f} |")
    lines += ["", "**Ranges: both candidates** (range MSE; predicted by the Beta(2, 2) default / with `reference=`; "
              "measured on the flights). Pick: the rule's choice without / with the reference; right: whether it is "
              "the candidate with the smaller measured MSE.", "",
              "| column | ε | SW predicted | HH predicted | SW measured | HH measured | pick | right |",
              "|---|---:|---:|---:|---:|---:|---|---|"]
    by = {(r["column"], r["epsilon"], r["reference"]): r for r in records if r["task"] == "ranges"}
    for column in COLUMNS:
        for eps in EPSILONS:
            d, w = by.get((column, eps, False)), by.get((column, eps, True))
            if d is None or w is None:
                continue
            m = w["measured_by"]
            best = min(m, key=lambda k: m[k][0])
            short = {"square_wave": "SW", "hierarchical_histogram": "HH"}
            lines.append(
                f"| {column} | {eps:g} | {d['predicted_by']['square_wave']:.2g} / {w['predicted_by']['square_wave']:.2g}"
                f" | {d['predicted_by']['hierarchical_histogram']:.2g} / "
                f"{w['predicted_by']['hierarchical_histogram']:.2g} | {m['square_wave'][0]:.2g} ± "
                f"{m['square_wave'][1]:.1g} | {m['hierarchical_histogram'][0]:.2g} ± "
                f"{m['hierarchical_histogram'][1]:.1g} | {short[d['mechanism']]} / {short[w['mechanism']]} | "
                f"{'yes' if d['mechanism'] == best else 'no'} / {'yes' if w['mechanism'] == best else 'no'} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collections", type=int, default=COLLECTIONS)
    args = ap.parse_args(argv)
    _, md = run(collections=args.collections)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
