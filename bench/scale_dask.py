"""10^7, 10^8 and 10^9 reports end to end on dask.distributed, measured (docs/scaling.md's table).

A local cluster of worker *processes* (default 2, one thread each, Numba limited to one thread per worker so the
processes do not oversubscribe the cores) privatizes and aggregates one Square Wave column (ε = 1, 1024 cells)
whose values are generated inside each partition (``dd.from_map``: nothing is materialized on the driver or
shipped to the workers but the partition number); the driver merges the partitions' aggregates and runs the
estimator once. For each n a fresh cluster is started, so each worker's peak resident memory (from
``getrusage``) is that run's; the driver's peak is its own process's so far. Figures: wall time of the whole
pipeline, reports/s and reports/s per core, the estimate's time on the driver, peak memory, next to one process
doing the same (privatize + aggregate of a partition in this process with the same thread count as all the
workers together) and to the generation alone.

Usage::

    .venv/bin/python bench/scale_dask.py                       # 10^7, 10^8 and 10^9 (about 10 minutes on 2 cores)
    .venv/bin/python bench/scale_dask.py --n 1e7 1e8 --json out.json
"""

import argparse
import json
import os
import resource
import sys
import time

import numpy as np

EPSILON = 1.0
PARTITION = 10_000_000


def _generate(i, size, seed=2026):
    """Partition ``i``: ``size`` values on [0, 1] with CDF x^4 (the square root of the larger of two uniforms:
    cheap to draw, and its quantiles are known), from the partition's own stream."""
    import pandas as pd

    u = np.random.default_rng([seed, i]).random((size, 2))
    return pd.DataFrame({"x": np.maximum(u[:, 0], u[:, 1]) ** 0.5})  # CDF x^4 on [0, 1]


def _peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(client, n, partition):
    import dask.dataframe as dd

    import ldpnum as ldp
    import ldpnum.dask  # noqa: F401

    parts = [partition] * (n // partition) + ([n % partition] if n % partition else [])
    ddf = dd.from_map(_generate, range(len(parts)), parts, meta={"x": "f8"}, enforce_metadata=False)
    m = ldp.SquareWave(epsilon=EPSILON, bounds=(0, 1))
    t0 = time.perf_counter()
    agg = ddf.ldp.privatize({"x": m}, rng=7).ldp.aggregate("x").compute()
    t1 = time.perf_counter()
    est = m.estimate_distribution(agg)
    t2 = time.perf_counter()
    workers = client.run(_peak_mib)
    truth = lambda q: q ** 0.25  # noqa: E731  (CDF x^4)
    qs = np.array([0.1, 0.5, 0.9])
    return {"n": n, "partitions": len(parts), "n_reports": agg.n_reports, "wall_s": t1 - t0,
            "estimate_s": t2 - t1, "worker_peak_mib": sorted(workers.values()), "driver_peak_mib": _peak_mib(),
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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", nargs="+", type=float, default=[1e7, 1e8, 1e9], help="reports per run")
    p.add_argument("--workers", type=int, default=2, help="worker processes (one thread each)")
    p.add_argument("--partition", type=float, default=PARTITION, help="values per partition (default 1e7)")
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    partition = int(args.partition)
    one = single_process(partition, args.workers)
    rows = []
    env = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for n in args.n:  # a fresh cluster per n: each worker's peak memory is that run's
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, env=env,
                          dashboard_address=None, memory_limit="6GiB") as cluster, Client(cluster) as client:
            rows.append(run(client, int(n), partition))
        r = rows[-1]
        print(f"  n = {r['n']:.0e}: {r['wall_s']:.1f} s", file=sys.stderr, flush=True)
    per_s = partition / one["privatize_aggregate_s"]
    print(f"Square Wave, ε = {EPSILON:g}, 1024 cells; {args.workers} worker processes × 1 thread on "
          f"{os.cpu_count()} cores; partitions of {partition:.0e} values generated in the workers")
    print(f"one process ({args.workers} threads): privatize + aggregate {per_s / 1e6:.1f} M reports/s "
          f"({per_s / args.workers / 1e6:.1f} M per core); generating the values alone "
          f"{partition / one['generate_s'] / 1e6:.1f} M values/s per core")
    print()
    print("| reports | partitions | wall (s) | M reports/s | M reports/s per core | vs one process | estimate on the "
          "driver (s) | peak RSS per worker (MiB) | driver peak RSS (MiB) | max quantile error |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        rate = r["n"] / r["wall_s"]
        print(f"| {r['n']:.0e} | {r['partitions']} | {r['wall_s']:.1f} | {rate / 1e6:.1f} | "
              f"{rate / args.workers / 1e6:.1f} | {rate / per_s:.2f} | {r['estimate_s']:.3f} | "
              f"{', '.join(f'{v:.0f}' for v in r['worker_peak_mib'])} | {r['driver_peak_mib']:.0f} | "
              f"{r['quantile_error']:.4f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"single_process": one, "runs": rows, "workers": args.workers, "partition": partition}, fh,
                      indent=1)


if __name__ == "__main__":
    main()
