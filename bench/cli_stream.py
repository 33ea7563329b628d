"""The command line streams: ``ldpnum privatize`` and ``ldpnum estimate`` on a 1e7-row Parquet file, bounded memory.

What it does, in a temporary directory:

1. writes ``n`` raw values (Beta(5, 2) on [0, 1440], float64) to Parquet, generated and written batch by batch
   (never all at once), and files of the same kind with 1e4 rows (the *small run*: interpreter, imports,
   kernels) and with each of ``also`` (default 1e6);
2. runs ``ldpnum privatize`` on each (Square Wave, ε = 1, seeded) in a subprocess: the report files, codes
   in ``uint16``;
3. runs ``ldpnum estimate --what mean`` on each, in a subprocess;
4. for reference, loads the small and the big report file whole in a subprocess (``pandas.read_parquet`` +
   ``estimate_mean``).

Each command runs ``ldpnum.cli.main`` (the console script's code) in a fresh interpreter, ``repeats`` times
(medians). For each subprocess it records the wall time, the time spent in ``main`` (timed inside the child
after its imports) and the peak resident set size of **that** child (its own ``VmHWM``; ``ru_maxrss`` would
also count the parent's RSS at the fork). Throughput is rows over the time in ``main`` and, marginally,
``(n - n_prev) / (main_n - main_prev)`` between the two largest sizes, so the fixed costs inside ``main``
cancel. Memory is bounded when the streaming peak is the same at 1e6 and 1e7 rows, exceeding the small
run's by the batch buffers only, while the column's in-memory size grows tenfold.

Run alone: ``python bench/cli_stream.py [--n 1e7] [--also 1e6] [--repeats 3] [--batch-size N] [--json out.json]``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BOUNDS = (0.0, 1440.0)
EPSILON = 1.0
WRITE_BATCH = 1 << 20
BASELINE_ROWS = 10_000


def write_values(path, n, seed=0, batch=WRITE_BATCH):
    """Write ``n`` Beta(5, 2)·1440 values to a Parquet file, one batch at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    schema = pa.schema([pa.field("dep_time", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, n, batch):
            values = rng.beta(5, 2, min(batch, n - start)) * BOUNDS[1]
            writer.write_batch(pa.record_batch([pa.array(values)], schema=schema))
    return path


def run_child(argv):
    """Run ``argv``; return (wall seconds, peak RSS in bytes, stdout, stderr). Raises on failure.

    The peak is the child's own report (a ``peak-rss N`` line on stderr) when it gives one, else its
    ``ru_maxrss`` from ``os.wait4`` (an upper bound: it includes the parent's RSS at the fork).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} failed ({proc.returncode}): {stderr.strip()}")
    reported = [line.split()[1] for line in stderr.splitlines() if line.startswith("peak-rss ")]
    if reported and reported[-1] != "None":
        return wall, int(reported[-1]), stdout, stderr
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return wall, usage.ru_maxrss * scale, stdout, stderr


#: The console script's code path (``ldpnum.cli.main``) with a clock around it: the child imports what the
#: command imports first, then prints the seconds ``main`` took (reading, randomizing or counting, writing)
#: as its last line of stderr.
#: Its peak RSS is the kernel's high-water mark of the child's own address space (``VmHWM``, reset by exec),
#: not ``ru_maxrss``: on Linux a child's ``ru_maxrss`` also counts the parent's RSS when it was forked.
PEAK_RSS = """
def _peak_rss():
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None
"""

TIMED_MAIN = PEAK_RSS + """
import sys, time
import numpy, pandas, pyarrow.parquet, scipy.stats, ldpnum, ldpnum.cli
from ldpnum.cli import main
t0 = time.perf_counter()
status = main(sys.argv[1:])
print(f"main-seconds {time.perf_counter() - t0!r}", file=sys.stderr)
print(f"peak-rss {_peak_rss()}", file=sys.stderr)
sys.exit(status)
"""


def ldpnum_cmd(*args):
    return [sys.executable, "-c", TIMED_MAIN, *map(str, args)]


IN_MEMORY = PEAK_RSS + """
import sys, numpy as np, pandas as pd, ldpnum as ldp
from ldpnum._frame import spec_for
df = pd.read_parquet(sys.argv[1])
spec = spec_for(df, "dep_time")
m = ldp.from_spec(spec)
print(m.estimate_mean(ldp.Reports(df["dep_time"].to_numpy(), spec)).value)
print(f"peak-rss {_peak_rss()}", file=sys.stderr)
"""


def run(n=10_000_000, repeats=3, batch_size=None, also=(1_000_000,)):
    """Measure the command line's streaming privatize and estimate over an ``n``-row Parquet file.

    ``also``: smaller row counts measured the same way, to show that the peak does not grow with the file.

    Returns
    -------
    records : list of dict
        One per measurement: command, rows, wall seconds, rows/s net of start-up, peak RSS, file sizes.
    markdown : str
        A table of the figures.
    """
    import pyarrow.parquet as pq

    from ldpnum.io import DEFAULT_BATCH_SIZE

    batch_size = batch_size or DEFAULT_BATCH_SIZE
    records = []
    with tempfile.TemporaryDirectory(prefix="ldpnum-cli-bench-") as d:
        d = Path(d)
        sizes_rows = sorted({BASELINE_ROWS, n, *(int(a) for a in also if BASELINE_ROWS < int(a) < n)})
        files = {}
        for rows in sizes_rows:
            t0 = time.perf_counter()
            raw = write_values(d / f"values-{rows}.parquet", rows, seed=rows)
            write_s = time.perf_counter() - t0
            files[rows] = {"raw": raw, "reports": d / f"reports-{rows}.parquet", "write_seconds": write_s}

        def measure(command, rows, argv, reps):
            walls, peaks, mains = [], [], []
            for _ in range(reps):
                wall, peak, stdout, stderr = run_child(argv)
                walls.append(wall)
                peaks.append(peak)
                timed = [line for line in stderr.splitlines() if line.startswith("main-seconds ")]
                if timed:
                    mains.append(float(timed[-1].split()[1]))
            return {"command": command, "rows": rows, "wall_seconds": statistics.median(walls),
                    "main_seconds": statistics.median(mains) if mains else None,
                    "peak_rss_mb": max(peaks) / 2**20, "stdout": stdout.strip()}

        privatize = {}
        estimate = {}
        for rows in sizes_rows:
            f = files[rows]
            argv = ldpnum_cmd("privatize", f["raw"], f["reports"], "--column", "dep_time", "--mechanism", "sw",
                              "--epsilon", EPSILON, "--bounds", *BOUNDS, "--rng", 1, "--batch-size", batch_size)
            privatize[rows] = measure("privatize", rows, argv, repeats)  # seeded: the same file every time
            argv = ldpnum_cmd("estimate", f["reports"], "--column", "dep_time", "--what", "mean", "--json",
                              "--batch-size", batch_size)
            run_child(argv)  # warm the page cache and the kernels' on-disk cache
            estimate[rows] = measure("estimate", rows, argv, repeats)
        in_memory, in_memory_small = (
            measure("in-memory (pandas.read_parquet + estimate_mean)", rows,
                    [sys.executable, "-c", IN_MEMORY, str(files[rows]["reports"])], 1)
            for rows in (n, BASELINE_ROWS))

        # What holding the column whole costs: float64 values in, the codes' own dtype out.
        code_bytes = pq.ParquetFile(files[n]["reports"]).schema_arrow.field("dep_time").type.bit_width // 8
        sizes = {(cmd, rows): (os.path.getsize(files[rows][key]), width * rows)
                 for rows in sizes_rows
                 for cmd, key, width in (("privatize", "raw", 8), ("estimate", "reports", code_bytes))}
        mean_stream = json.loads(estimate[n]["stdout"])["mean"]["value"]
        mean_memory = float(in_memory["stdout"].splitlines()[-1])

    for command, table in (("privatize", privatize), ("estimate", estimate)):
        base = table[BASELINE_ROWS]
        for prev, rows in zip(sizes_rows[:-1], sizes_rows[1:]):
            big = table[rows]
            file_bytes, array_bytes = sizes[(command, rows)]
            records.append({
                "section": "cli", "command": command, "rows": rows, "batch_size": batch_size,
                "wall_seconds": big["wall_seconds"], "main_seconds": big["main_seconds"],
                "startup_seconds": big["wall_seconds"] - big["main_seconds"],
                "rows_per_second": rows / big["main_seconds"],
                # Marginal rate from the previous size: the fixed costs inside main (kernels loaded from the
                # on-disk cache, parallel runtime started, plans built) cancel out.
                "marginal_rows_per_second": ((rows - prev) / (big["main_seconds"] - table[prev]["main_seconds"])
                                             if prev != BASELINE_ROWS and big["main_seconds"] > table[prev]["main_seconds"]
                                             else None),
                "marginal_from_rows": prev,
                "baseline_main_seconds": base["main_seconds"], "rows_per_second_wall": rows / big["wall_seconds"],
                "peak_rss_mb": big["peak_rss_mb"], "baseline_rows": BASELINE_ROWS,
                "baseline_peak_rss_mb": base["peak_rss_mb"],
                "peak_over_baseline_mb": big["peak_rss_mb"] - base["peak_rss_mb"],
                "file_mb": file_bytes / 2**20, "column_in_memory_mb": array_bytes / 2**20,
                "repeats": repeats,
            })
    records.append({"section": "cli", "command": "in-memory estimate", "rows": n,
                    "wall_seconds": in_memory["wall_seconds"], "peak_rss_mb": in_memory["peak_rss_mb"],
                    "peak_over_small_run_mb": in_memory["peak_rss_mb"] - in_memory_small["peak_rss_mb"],
                    "same_mean_as_streaming": mean_stream == mean_memory})
    return records, markdown(records)


def markdown(records):
    lines = ["## Command line: streaming over a Parquet file", "",
             "Square Wave, ε = 1, seeded; `uint16` codes. Each command runs `ldpnum.cli.main` (the console "
             "script's code) in its own subprocess (median of the repeats); start-up is the interpreter and imports; "
             "rows/s is rows over the time in `main`, *marginal* the extra rows over the extra time from the previous "
             f"size (fixed costs cancel). The small run has {BASELINE_ROWS:,} rows. Peak RSS "
             "is the subprocess's own high-water mark (`VmHWM`); *vs small run* subtracts the same command's "
             "peak on the small file (imports, kernels, buffers). *Column in memory* is what holding the column "
             "whole would take.", "",
             "| command | rows | batch | rows/s | marginal rows/s | main s | start-up s | peak RSS MB "
             "| vs small run MB | column in memory MB | file MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if r["command"] in ("privatize", "estimate"):
            marginal = "" if r["marginal_rows_per_second"] is None else f"{r['marginal_rows_per_second']:.3g}"
            lines.append(f"| `ldpnum {r['command']}` | {r['rows']:.0e} | {r['batch_size']:,} "
                         f"| {r['rows_per_second']:.3g} | {marginal} | {r['main_seconds']:.2f} "
                         f"| {r['startup_seconds']:.2f} "
                         f"| {r['peak_rss_mb']:.0f} | {r['peak_over_baseline_mb']:+.0f} "
                         f"| {r['column_in_memory_mb']:.0f} | {r['file_mb']:.1f} |")
    mem = next(r for r in records if r["command"] == "in-memory estimate")
    lines += ["", f"Reference: loading the {mem['rows']:.0e}-row report file whole (`pandas.read_parquet` + "
                  f"`estimate_mean`) peaks at {mem['peak_rss_mb']:.0f} MB "
                  f"({mem['peak_over_small_run_mb']:+.0f} MB vs loading the small file whole) in "
                  f"{mem['wall_seconds']:.2f} s; same mean as the streaming estimate: "
                  f"{mem['same_mean_as_streaming']}.", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e7)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--also", type=float, nargs="*", default=[1e6],
                    help="smaller row counts measured too (default 1e6), to show the peak does not grow")
    ap.add_argument("--json", default=None, help="also write the records to this file")
    args = ap.parse_args(argv)
    records, md = run(int(args.n), repeats=args.repeats, batch_size=args.batch_size,
                      also=tuple(int(a) for a in args.also))
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=2))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
