"""Dask scaling (``make bench``, section ``scaling``): privatize + aggregate + EMS on 1 and 2 worker processes.

For n = 1e7 and 1e8 values of Beta(5, 2), Square Wave (ε = 1, bounds (0, 1), 1024 cells):

- **single process**: the loop a user would write without an engine — for each chunk, draw the values,
  ``mech.privatize`` (seeded with the chunk's child stream) and ``mech.aggregate``, add the aggregates; then
  EMS. Run in a fresh (spawned) process so its peak memory is its own.
- **Dask**, on a ``LocalCluster`` of 1 and 2 worker processes (1 task thread each, ``NUMBA_NUM_THREADS`` =
  cores / workers, so Numba's kernels do not oversubscribe the cores): values generated per partition by
  ``dask.array`` (never materialised at once) → ``ddf.ldp.privatize({"x": m}, rng=seed)`` →
  ``.ldp.aggregate("x")`` (a tree-sum of per-partition aggregates) → EMS on the driver.

Times are medians of ``repeats`` runs (3) on one cluster. Both paths generate the values inside the timed run (Beta sampling is a large part of the cost: it is the
same work in both). Reported: wall time, values/s, the ratio of Dask's values/s to the single process's,
EMS time, peak resident memory per worker process (``VmHWM``) next to its resident memory after start-up
and warm-up, the bytes of one partition's aggregate (what crosses the network per partition), and the
worker warm-up time (import ldpnum, load the compiled kernels from Numba's cache: excluded from the
throughput). With ``--tuned`` each Dask configuration also runs with ``MALLOC_MMAP_THRESHOLD_=16 MB`` in the
workers' environment (see ``MMAP_THRESHOLD``: Dask's ``MALLOC_TRIM_THRESHOLD_`` default otherwise turns every
large buffer into fresh page faults). Runs alone: ``python bench/scaling.py [--sizes 1e7,1e8]`` prints the markdown table;
``--quick`` measures n = 1e7 once per configuration (about a minute).
"""

import argparse
import importlib
import multiprocessing as mp
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

EPSILON = 1.0
BOUNDS = (0.0, 1.0)
CHUNK = 5_000_000
SEED = 2026
BETA = (5.0, 2.0)
#: glibc's ``MALLOC_MMAP_THRESHOLD_`` for the "tuned" workers. Dask's nanny starts workers with
#: ``MALLOC_TRIM_THRESHOLD_=65536``, which also freezes glibc's mmap threshold at 128 KB: every multi-MB
#: buffer (a block of random words, a partition's reports) is then mmap'ed, page-faulted and unmapped anew,
#: which makes ``privatize`` 1.6-2x slower in a worker than in a plain process (measured).
MMAP_THRESHOLD = 16 * 2**20


def _mechanism():
    import ldpnum as ldp

    return ldp.SquareWave(epsilon=EPSILON, bounds=BOUNDS)


def _rss_mb():
    """Current resident memory of this process, MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_rss_mb():
    """Peak resident memory of this process's own address space, MB (``VmHWM``, reset by exec).

    Not ``ru_maxrss``: on Linux a spawned child's ``ru_maxrss`` starts from its parent's RSS at the fork, so
    under ``make bench`` (a parent that has held large arrays) every process would report the parent's peak.
    """
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024  # kB


def _warm():
    """On a worker: import ldpnum and load its kernels (compile time is not throughput)."""
    importlib.import_module("ldpnum.dask")

    m = _mechanism()
    m.aggregate(m.privatize(np.linspace(0, 1, 1000), rng=0))
    return _rss_mb()


def _summary(agg, t_ems):
    """Sanity of the result: the unbiased mean estimate against the true mean, in standard errors."""
    m = _mechanism()
    est = m.estimate_mean(agg)
    true_mean = BETA[0] / sum(BETA)
    return {"ems_s": t_ems, "mean_estimate": est.value, "mean_z": (est.value - true_mean) / est.standard_error}


def _single_process(n, chunk, seed, repeats):
    """The loop without an engine, in its own process: median timings and this process's peak memory."""
    from ldpnum._random import child_rng

    m = _mechanism()
    m.aggregate(m.privatize(np.linspace(0, 1, 1000), rng=0))  # warm-up (kernel cache)
    base = _rss_mb()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        total = m.empty_aggregate()
        for i, start in enumerate(range(0, n, chunk)):
            x = np.random.default_rng([seed, i]).beta(*BETA, min(chunk, n - start))
            total = total + m.aggregate(m.privatize(x, rng=child_rng(seed, i)))
        t_agg = time.perf_counter() - t0
        t1 = time.perf_counter()
        m.estimate_distribution(total)
        t_ems = time.perf_counter() - t1
        times.append((time.perf_counter() - t0, t_agg, t_ems))
    seconds, t_agg, t_ems = (statistics.median(t[k] for t in times) for k in range(3))
    return {"seconds": seconds, "aggregate_s": t_agg, "ems_s": t_ems, "n_reports": total.n_reports,
            "peak_rss_mb": [_peak_rss_mb()], "baseline_rss_mb": [base], "agg": total.to_bytes()}


def _run_single(n, chunk, seed, repeats):
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(_single_process, n, chunk, seed, repeats).result()


def _run_dask(n, n_workers, chunk, seed, repeats, mmap_threshold=False):
    import warnings

    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    importlib.import_module("ldpnum.dask")  # registers the accessor

    m = _mechanism()
    threads = max(1, (os.cpu_count() or 1) // n_workers)
    env = {"NUMBA_NUM_THREADS": str(threads)}
    if mmap_threshold:
        env["MALLOC_MMAP_THRESHOLD_"] = str(MMAP_THRESHOLD)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               env=env, silence_logs=40)
        client = Client(cluster)
    try:
        t_start = time.perf_counter() - t0
        t0 = time.perf_counter()
        base = client.run(_warm)
        t_warm = time.perf_counter() - t0

        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            values = da.random.default_rng(seed).beta(*BETA, size=n, chunks=chunk)
            ddf = dd.from_dask_array(values, columns=["x"])
            reports = ddf.ldp.privatize({"x": m}, rng=seed)
            agg = client.compute(reports.ldp.aggregate("x")).result()
            t_agg = time.perf_counter() - t0
            t1 = time.perf_counter()
            m.estimate_distribution(agg)
            t_ems = time.perf_counter() - t1
            times.append((time.perf_counter() - t0, t_agg, t_ems))
        seconds, t_agg, t_ems = (statistics.median(t[k] for t in times) for k in range(3))
        peak = client.run(_peak_rss_mb)
    finally:
        client.close()
        cluster.close()
    assert agg.n_reports == n
    return {"seconds": seconds, "aggregate_s": t_agg, "ems_s": t_ems, "n_reports": agg.n_reports,
            "partitions": ddf.npartitions, "peak_rss_mb": sorted(peak.values()), "baseline_rss_mb": sorted(base.values()),
            "cluster_start_s": t_start, "warmup_s": t_warm, "numba_threads_per_worker": threads,
            "agg": agg.to_bytes()}


def run(sizes=(10**7, 10**8), workers=(1, 2), chunk=CHUNK, seed=SEED, repeats=3, tuned=False):
    """Measure the scaling table (medians of ``repeats`` runs per configuration); return ``(records, markdown)``."""
    from ldpnum import Aggregate

    records = []
    for n in sizes:
        single = _run_single(n, chunk, seed, repeats)
        rows = [("single process", 0, single)]
        for mmap in (False, True) if tuned else (False,):
            for w in workers:
                label = f"Dask, {w} worker{'s' if w > 1 else ''}" + (", mmap threshold 16 MB" if mmap else "")
                rows.append((label, w, _run_dask(n, w, chunk, seed, repeats, mmap_threshold=mmap)))
        for label, w, r in rows:
            agg = Aggregate.from_bytes(r.pop("agg"))
            rec = {"section": "scaling", "path": label, "workers": w, "n": int(n), "values_per_s": n / r["seconds"],
                   "ratio_to_single": single["seconds"] / r["seconds"], "bytes_per_partition": len(agg.to_bytes()),
                   **r, **_summary(agg, r["ems_s"])}
            rec.setdefault("partitions", -(-n // chunk))
            records.append(rec)
    return records, markdown(records, chunk, repeats)


def _fmt_n(n):
    e = int(round(np.log10(n)))
    return f"1e{e}" if 10**e == n else f"{n:,}"


def markdown(records, chunk=CHUNK, repeats=3):
    lines = ["## Dask scaling: privatize + aggregate + EMS (Square Wave, ε = 1, Beta(5, 2))", "",
             f"Values drawn per partition of {chunk:,} (never all at once); single process = the same chunks in a "
             "loop (`mech.privatize` + `mech.aggregate`); Dask = `LocalCluster` worker processes, 1 task thread and "
             "cores/workers Numba threads each. Throughput excludes cluster start and worker warm-up (import + "
             "kernel cache load), shown apart; times are medians of "
             f"{repeats} runs. Memory: peak RSS per worker process (after warm-up in brackets).",
             "",
             "| n | path | partitions | time (s) | values/s | vs single | EMS (s) | peak RSS per worker, MB | "
             "warm-up (s) | bytes per partition's aggregate | mean: (est − 5/7)/SE |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        mem = ", ".join(f"{p:.0f} ({b:.0f})" for p, b in zip(r["peak_rss_mb"], r["baseline_rss_mb"]))
        warm = f"{r['warmup_s']:.2f}" if "warmup_s" in r else "–"
        lines.append(f"| {_fmt_n(r['n'])} | {r['path']} | {r['partitions']} | {r['seconds']:.2f} | "
                     f"{r['values_per_s'] / 1e6:.1f} M | {r['ratio_to_single']:.2f}× | {r['ems_s']:.3f} | {mem} | {warm} | "
                     f"{r['bytes_per_partition']:,} | {r['mean_z']:+.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1e7,1e8", help="comma list of n (default 1e7,1e8)")
    p.add_argument("--workers", default="1,2", help="comma list of worker counts (default 1,2)")
    p.add_argument("--chunk", type=float, default=CHUNK, help=f"values per partition (default {CHUNK:.0e})")
    p.add_argument("--repeats", type=int, default=3, help="runs per configuration, median reported (default 3)")
    p.add_argument("--tuned", action="store_true", help="also run the workers with MALLOC_MMAP_THRESHOLD_=16 MB")
    p.add_argument("--quick", action="store_true",
                   help="a check of the set-up in about a minute: n = 1e7 only, one run per configuration")
    args = p.parse_args(argv)
    if args.quick:
        args.sizes, args.repeats = "1e7", 1
    sizes = tuple(int(float(s)) for s in args.sizes.split(","))
    workers = tuple(int(w) for w in args.workers.split(","))
    _, md = run(sizes=sizes, workers=workers, chunk=int(args.chunk), repeats=args.repeats, tuned=args.tuned)
    print(md)


if __name__ == "__main__":
    main()
