"""Projective geometry response at the paper's huge-domain setting: client and collector time, and error against
the closed form (``python bench/pgr.py``; :func:`run_pgr` is what a bench section calls).

Setting of Feldman, Nelson, Nguyen and Talwar ("Private Frequency Estimation via Projective Geometry", ICML
2022): k = 3,307,948 categories, ε = 5 (q = 149, t = 4: 3,330,300 codes of 22 bits), n = 10,000 people, and
n = 10^6. Their C++ collector times at n = 10^4 (decoding all k values): PGR 36.9 s, hybrid PGR (q = 3) 5.9 s.

Data: a Zipf(1.5) sample folded into [0, k) (fixed seed). Per method, after one untimed call at n = 20,000 (the
client kernel's compile, reported apart as ``first_call_s``):

* ``client_s``: ``privatize`` of all n values (simulation words from a seed; secure words cost more per
  report, see the README's throughput tables);
* ``aggregate_s``: the code histogram (``aggregate``), ``decode_s``: ``estimate_frequencies`` of all k values
  (its CPU time ``decode_cpu_s`` too: the machine is shared, wall times vary with the load), ``collector_s``
  their sum, the figure to set next to the C++ one;
* ``mse``: mean over all k categories of the squared error of the frequency estimate; ``mse_closed_form``: the
  mean of the closed-form variances at the true frequencies over n; ``ss_mse_closed_form``: subset
  selection's closed form at the same (k, ε) with its variance-optimal ω = k/(e^ε + 1) (ldpnum's
  SubsetSelection sends k-bit reports and stops at k = 2**16, so it is compared by its formula here).

Times are medians over ``repeats`` runs.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ldpnum as ldp  # noqa: E402

K = 3_307_948
EPSILON = 5.0
#: The paper's C++ collector times at n = 10^4, k = 3,307,948, ε = 5 (seconds).
PAPER_COLLECTOR_S = {"pgr": 36.9, "hybrid": 5.9}


def data(n, k, seed=0):
    """Zipf(1.5) ranks folded into ``[0, k)``."""
    return (np.random.default_rng(seed).zipf(1.5, n) - 1) % k


def subset_selection_variance(epsilon, k, f):
    """Subset selection's per-report variance (Wang et al.) at frequencies ``f``, ω = k/(e^ε + 1)."""
    e = math.exp(epsilon)
    w = k / (e + 1)
    p = w * e / (w * e + k - w)
    q = (p * (w - 1) + (1 - p) * w) / (k - 1)
    return (q * (1 - q) + f * (p - q) * (1 - p - q)) / (p - q) ** 2


def _median(fn, repeats):
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), out


def run_pgr(n: int, k: int = K, epsilon: float = EPSILON, *, repeats: int = 1, seed: int = 0,
            variants: tuple = (("pgr", None), ("hybrid", 3))) -> list[dict]:
    """One row per variant: times, error, closed forms, geometry (see the module docstring)."""
    x = data(n, k, seed)
    f = np.bincount(x, minlength=k) / n
    rows = []
    for variant, q in variants:
        m = ldp.PGR(epsilon, k, variant=variant, q=q)
        t0 = time.perf_counter()
        m.estimate_frequencies(m.aggregate(m.privatize(data(20_000, k, seed + 1), rng=seed + 1)))
        first = time.perf_counter() - t0
        client, _, reports = _median(lambda: m.privatize(x, rng=seed + 2), repeats)
        aggregate, _, agg = _median(lambda: m.aggregate(reports), repeats)
        decode, decode_cpu, est = _median(lambda: m.estimate_frequencies(agg), repeats)
        if m.blocks > 1:
            block = np.bincount(np.arange(k) // m.plan.b, weights=f)[np.arange(k) // m.plan.b]
            closed = float(np.mean(m.variance(f, block))) / n
        else:
            closed = float(np.mean(m.variance(f))) / n
        mse = float(np.mean((est.frequencies - f) ** 2))
        rows.append(dict(
            method="PGR" if variant == "pgr" else f"hybrid PGR (q={m.q})", variant=variant, n=n, k=k,
            epsilon=epsilon, q=m.q, t=m.t, blocks=m.blocks, n_codes=m.n_cells,
            report_bits=math.ceil(math.log2(m.n_cells)), first_call_s=first, client_s=client,
            client_reports_per_s=n / client, aggregate_s=aggregate, decode_s=decode, decode_cpu_s=decode_cpu,
            collector_s=aggregate + decode, paper_cpp_collector_s=PAPER_COLLECTOR_S[variant] if n == 10_000 else None,
            mse=mse, mse_closed_form=closed, mse_ratio=mse / closed,
            ss_mse_closed_form=float(np.mean(subset_selection_variance(epsilon, k, f))) / n))
    return rows


def markdown(rows):
    head = ("| method | n | q, t, blocks | bits | client s | aggregate s | decode s (CPU) | collector s | "
            "C++ collector s | MSE | closed form | ratio | subset selection's closed form |")
    lines = [head, "|" + " --- |" * 13]
    for r in rows:
        cpp = f"{r['paper_cpp_collector_s']}" if r["paper_cpp_collector_s"] else "–"
        lines.append(
            f"| {r['method']} | {r['n']:,} | {r['q']}, {r['t']}, {r['blocks']} | {r['report_bits']} | "
            f"{r['client_s']:.3f} | {r['aggregate_s']:.3f} | {r['decode_s']:.2f} ({r['decode_cpu_s']:.2f}) | "
            f"{r['collector_s']:.2f} | {cpp} | {r['mse']:.3e} | {r['mse_closed_form']:.3e} | {r['mse_ratio']:.3f} | "
            f"{r['ss_mse_closed_form']:.3e} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, nargs="+", default=[1e4, 1e6])
    ap.add_argument("--k", type=int, default=K)
    ap.add_argument("--epsilon", type=float, default=EPSILON)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)
    rows = [r for n in args.n for r in run_pgr(int(n), args.k, args.epsilon, repeats=args.repeats)]
    print(markdown(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
