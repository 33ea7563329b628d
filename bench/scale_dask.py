"""10^7, 10^8 and 10^9 reports end to end on dask.distributed (``make bench``, section ``scale-dask``).

The measurement behind docs/scaling.md's table. A local cluster of worker *processes* (default 2, one thread each,
Numba limited to one thread per worker so the processes do not oversubscribe the cores) privatizes and aggregates
one Square Wave column (ε = 1, 1024 cells) whose values are generated inside each partition (``dd.from_map``:
nothing is materialized on the driver or shipped to the workers but the partition number); the driver merges the
partitions' aggregates and runs the estimator once. For each n a fresh cluster is started, so each worker's peak
resident memory (``VmHWM``) is that run's; the driver's peak is reset before each run (``/proc/self/clear_refs``),
so it is that run's too, also after other ``make bench`` sections. Figures: wall time of the whole pipeline,
reports/s and reports/s per core, the estimate's time on the driver, peak memory, next to one process doing the
same (privatize + aggregate of a partition in this process with the same thread count as all the workers
together) and to the generation alone.

Usage::

    python bench/run.py --only scale-dask            # 10^7, 10^8 and 10^9 (a few minutes on 2 cores)
    python bench/run.py --only scale-dask --quick    # 10^7 only: a check of the set-up
    python bench/scale_dask.py --n 1e7 1e8 --json out.json   # alone
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scaling import _peak_rss_mb  # noqa: E402  (VmHWM: a spawned process's own peak, not its parent's)

EPSILON = 1.0
PARTITION = 10_000_000
NS = (10**7, 10**8, 10**9)
WORKERS = 2


def _generate(i, size, seed=2026):
    """Partition ``i``: ``size`` values on [0, 1] with CDF x^4 (the square root of the larger of two uniforms:
    cheap to draw, and its quantiles are known), from the partition's own stream."""
    import pandas as pd

    u = np.random.default_rng([seed, i]).random((size, 2))
    return pd.DataFrame({"x": np.maximum(u[:, 0], u[:, 1]) ** 0.5})  # CDF x^4 on [0, 1]


def _reset_peak_rss():
    """Reset this process's ``VmHWM`` to its current resident memory (Linux); False where that is not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _one_run(client, n, partition):
    import dask.dataframe as dd

    import ldpnum as ldp
    import ldpnum.dask  # noqa: F401

    parts = [partition] * (n // partition) + ([n % partition] if n % partition else [])
    ddf = dd.from_map(_generate, range(len(parts)), parts, meta={"x": "f8"}, enforce_metadata=False)
    m = ldp.SquareWave(epsilon=EPSILON, bounds=(0, 1))
    reset = _reset_peak_rss()
    t0 = time.perf_counter()
    agg = ddf.ldp.privatize({"x": m}, rng=7).ldp.aggregate("x").compute()
    t1 = time.perf_counter()
    est = m.estimate_distribution(agg)
    t2 = time.perf_counter()
    workers = client.run(_peak_rss_mb)
    truth = lambda q: q ** 0.25  # noqa: E731  (CDF x^4)
    qs = np.array([0.1, 0.5, 0.9])
    return {"n": n, "partitions": len(parts), "n_reports": agg.n_reports, "wall_s": t1 - t0,
            "estimate_s": t2 - t1, "worker_peak_mib": sorted(workers.values()), "driver_peak_mib": _peak_rss_mb(),
            "driver_peak_reset": reset,
            "quantile_error": float(np.max(np.abs(est.quantile(qs) - truth(qs))))}


def single_process(partition, threads):
    """One partition privatized and aggregated in this process (``threads`` Numba threads), and generated alone."""
    import numba

    import ldpnum as ldp

    m = ldp.SquareWave(epsilon=EPSILON, bounds=(0, 1))
    numba.set_num_threads(threads)
    x = _generate(0, partition)["x"].to_numpy()
    m.aggregate(m.privatize(x[: 1 << 20], rng=0))  # load the compiled kernels
    times, gen = [], []
    for r in range(3):
        t0 = time.perf_counter()
        _generate(r, partition)
        gen.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        m.aggregate(m.privatize(x, rng=r))
        times.append(time.perf_counter() - t0)
    return {"privatize_aggregate_s": float(np.median(times)), "generate_s": float(np.median(gen))}


def run(ns=NS, workers=WORKERS, partition=PARTITION, quick=False):
    """Measure the table: one fresh ``LocalCluster`` per n (``quick``: the smallest n only); return
    ``(records, markdown)``."""
    import warnings

    from dask.distributed import Client, LocalCluster

    ns = sorted(int(n) for n in ns)[:1] if quick else [int(n) for n in ns]
    partition = int(partition)
    one = single_process(partition, workers)
    rows = []
    env = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for n in ns:  # a fresh cluster per n: each worker's peak memory is that run's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, env=env,
                                   dashboard_address=None, memory_limit="6GiB", silence_logs=40)
        with cluster, Client(cluster) as client:
            rows.append(_one_run(client, n, partition))
        print(f"  n = {n:.0e}: {rows[-1]['wall_s']:.1f} s", file=sys.stderr, flush=True)
    records = [{"section": "scale-dask", "kind": "single_process", "workers": workers, "partition": partition, **one}]
    records += [{"section": "scale-dask", "kind": "dask", "workers": workers, "partition": partition, **r}
                for r in rows]
    return records, markdown(one, rows, workers, partition)


def markdown(one, rows, workers, partition):
    per_s = partition / one["privatize_aggregate_s"]
    lines = ["## Dask at 10^7-10^9 reports: privatize + aggregate on worker processes, merge + estimate on the driver",
             "",
             f"Square Wave, ε = {EPSILON:g}, 1024 cells; {workers} worker processes × 1 thread on {os.cpu_count()} "
             f"cores; partitions of {partition:.0e} values generated in the workers (`dd.from_map`); a fresh "
             "cluster per row; wall time of the whole pipeline (privatize, aggregate, merge), the estimate apart.",
             "",
             f"One process ({workers} threads): privatize + aggregate {per_s / 1e6:.1f} M reports/s "
             f"({per_s / workers / 1e6:.1f} M per core); generating the values alone "
             f"{partition / one['generate_s'] / 1e6:.1f} M values/s per core.",
             "",
             "| reports | partitions | wall (s) | M reports/s | M reports/s per core | vs one process | estimate on "
             "the driver (s) | peak RSS per worker (MiB) | driver peak RSS (MiB) | max quantile error |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        rate = r["n"] / r["wall_s"]
        driver = f"{r['driver_peak_mib']:.0f}" + ("" if r.get("driver_peak_reset", True) else " (process peak)")
        lines.append(f"| {r['n']:.0e} | {r['partitions']} | {r['wall_s']:.1f} | {rate / 1e6:.1f} | "
                     f"{rate / workers / 1e6:.1f} | {rate / per_s:.2f} | {r['estimate_s']:.3f} | "
                     f"{', '.join(f'{v:.0f}' for v in r['worker_peak_mib'])} | {driver} | "
                     f"{r['quantile_error']:.4f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", nargs="+", type=float, default=list(NS), help="reports per run (default 1e7 1e8 1e9)")
    p.add_argument("--quick", action="store_true", help="the smallest n only: a check of the set-up")
    p.add_argument("--workers", type=int, default=WORKERS, help="worker processes (one thread each)")
    p.add_argument("--partition", type=float, default=PARTITION, help="values per partition (default 1e7)")
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args(argv)
    records, md = run(ns=args.n, workers=args.workers, partition=args.partition, quick=args.quick)
    print(md)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(records, fh, indent=1)


if __name__ == "__main__":
    main()
