"""Huge categorical domains (``make bench``, section ``huge-domains``): frequency oracles at k = 3,307,948.

The setting of Feldman, Nelson, Nguyen and Talwar ("Private Frequency Estimation via Projective Geometry", ICML
2022): k = 3,307,948 categories, ε = 5, n = 10,000 people, and here also n = 10^6. People hold codes in ``[0, k)``
drawn from a Zipf law (P(i) ∝ (i + 1)^-1.1, ``run_peers.zipf_codes``, seed 0), so code ``i`` is the ``i``-th most
frequent.

Contestants (:data:`CONTESTANTS`, one entry each; a new mechanism is one more entry): ldpnum's count-mean sketch
(CMS and HCMS, width 1024, 256 hash functions, Apple's parameters), Hadamard response, PI-RAPPOR and subset
selection. Per contestant and n:

* client: ``privatize`` people/s (seeded PCG64 words; median of ``--repeats``; a first untimed call compiles);
* collector: ``aggregate`` seconds on all cores, its reports/s per core (the same call with Numba and the counting
  threads set to 1), and ``estimate_frequencies`` seconds. The sketches decode the ``N_CANDIDATES`` = 10^4 most
  frequent codes (a dictionary: decoding all 3.3 million codes with the unbiased estimator is refused, the sketch
  holds only 262,144 counts; Apple's estimator reads all of them in about a minute); the others decode all k;
* the sketches' decode with Apple's estimator too (``method="apple"``: its time and MSE);
* accuracy: MSE of the frequencies over the 10^4 most frequent codes against the truth, next to its closed form
  (the mean over them of the oracle's variance at the true frequency; for the sketches, the mean of the
  estimator's plug-in variance, exact in the randomization for the fixed hash family).

Sizes measured where the machine allows: subset selection would report a k-bit vector (413 KB per person, ω = 22,052
picks each; ldpnum's ``SubsetSelection`` takes k ≤ 65,536 and says so, so its row reports that), capped at
``SS_MAX_N`` people; PI-RAPPOR's collector costs O(n·k) (the paper's C++ figure is
1,893.8 s at n = 10^4), so it runs at n = 10^4 only. Both say so in the table.

Peers: pure-ldp's CMS and HCMS (``CMSClient``/``CMSServer``, the same width and hash functions) run in
bench/.peers-venv (``bench/peers/sketch_peers.py``), person by person as pure-ldp's API is; their n is sized by a
pilot to about ``--peer-seconds`` per measurement and their MSE scaled to the table's n (MSE ∝ 1/n). The C++ collector
times published for the same setting (n = 10^4) are shown next to ours, not re-run.

Runs alone: ``python bench/huge_domains.py [--ns 10000,1000000] [--repeats 3] [--no-peers]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "peers"))

import ldpnum as ldp  # noqa: E402
from run_peers import ZIPF_S  # noqa: E402

K = 3_307_948
EPSILON = 5.0
NS = (10_000, 1_000_000)
N_CANDIDATES = 10_000
SS_MAX_N = 2_000
SKETCH = dict(width=1024, hashes=256)
#: Collector times (s) published by Feldman, Nelson, Nguyen and Talwar for k = 3,307,948, ε = 5, n = 10^4 (C++).
CPP_COLLECTOR_S = {"PI-RAPPOR": 1893.8, "PGR": 36.9, "hybrid PGR (q = 3)": 5.9, "recursive Hadamard": 1.2,
                   "Hadamard response": 0.64}


@dataclass
class Contestant:
    """One mechanism of the table: ``build()`` makes it at (ε, k); ``max_n`` caps the people it is run on."""

    label: str
    build: Callable[[], ldp.Mechanism]
    max_n: int | None = None  # not run above this n
    why: str = ""
    run_n: int | None = None  # run on this many people instead of n (where n is too large for the machine)
    repeats: int | None = None  # timed runs (default: --repeats)
    candidates: bool = False  # decode the dictionary of the N_CANDIDATES most frequent codes, not all k
    cpp: str | None = None  # the key of its published C++ collector time
    extra: dict = field(default_factory=dict)


CONTESTANTS = [
    Contestant("CMS (ldpnum)", lambda: ldp.CountMeanSketch(EPSILON, K, **SKETCH), candidates=True),
    Contestant("HCMS (ldpnum)", lambda: ldp.CountMeanSketch(EPSILON, K, variant="hcms", **SKETCH), candidates=True),
    Contestant("Hadamard response (ldpnum)", lambda: ldp.HadamardResponse(EPSILON, K), cpp="Hadamard response"),
    Contestant("PI-RAPPOR (ldpnum)", lambda: ldp.PIRappor(EPSILON, K), max_n=10_000,
               why="collector O(n·k)", cpp="PI-RAPPOR", repeats=1),
    Contestant("subset selection (ldpnum)", lambda: ldp.SubsetSelection(EPSILON, K), max_n=10_000, run_n=SS_MAX_N,
               why="k-bit reports: 413 KB per person"),
]
CONTESTANTS += [
    Contestant("PGR (ldpnum)", lambda: ldp.PGR(EPSILON, K), cpp="PGR"),
    Contestant("hybrid PGR, q = 3 (ldpnum)", lambda: ldp.PGR(EPSILON, K, variant="hybrid", q=3),
               cpp="hybrid PGR (q = 3)"),
]


_PROBS: dict = {}


def zipf_people(n, seed=0):
    """n codes of the Zipf law over [0, K) (the probabilities of ``run_peers.zipf_codes``, computed once)."""
    if "p" not in _PROBS:
        p = 1.0 / np.arange(1, K + 1, dtype=np.float64) ** ZIPF_S
        _PROBS["p"] = p / p.sum()
    return np.random.default_rng(seed).choice(K, size=n, p=_PROBS["p"]).astype(np.int64)


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def one_thread(fn):
    """``fn()`` with Numba's and ldpnum's counting threads at 1 (the per-core figure), then restored."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        numba.set_num_threads(before)


def measure(c, n, repeats):
    rec = {"library": "ldpnum", "contestant": c.label, "k": K, "epsilon": EPSILON, "n_requested": n}
    if c.max_n is not None and n > c.max_n:
        return {**rec, "skipped": f"not run above n = {c.max_n:,} ({c.why})"}
    if c.run_n is not None:
        n = min(n, c.run_n)
        rec["note"] = f"run at n = {n:,} ({c.why})"
    repeats = c.repeats or repeats
    try:
        m = c.build()
    except ValueError as exc:  # a mechanism that does not take this k: said, not fatal
        return {**rec, "skipped": f"not available: {exc}"}
    x = zipf_people(n)
    truth = np.bincount(x[x < N_CANDIDATES], minlength=N_CANDIDATES) / n
    m.privatize(x[: min(n, 50_000)], rng=99)  # compile (or load) the client kernel, untimed
    client_s, reports = timed(lambda: m.privatize(x, rng=1), repeats)
    agg_s, agg = timed(lambda r=reports: m.aggregate(r), repeats)
    agg_1 = one_thread(lambda r=reports: m.aggregate(r))
    cand = np.arange(N_CANDIDATES)
    if c.candidates:
        est_s, est = timed(lambda: m.estimate_frequencies(agg, candidates=cand), 1)
        apple_s, apple = timed(lambda: m.estimate_frequencies(agg, candidates=cand, method="apple"), 1)
        a_freq = apple.frequencies[np.argsort(np.array(apple.items))]
        rec.update(apple_decode_s=apple_s, apple_mse=float(np.mean((a_freq - truth) ** 2)))
        order = np.argsort(np.array(est.items))
        freq, se = est.frequencies[order], est.standard_errors[order]
        closed = float(np.mean(se**2))
    else:
        est_s, est = timed(lambda: m.estimate_frequencies(agg), 1)
        freq, se = est.frequencies[:N_CANDIDATES], est.standard_errors[:N_CANDIDATES]
        if m.name == "pgr" and m.blocks > 1:  # the hybrid's variance depends on each category's whole block
            b = m.n_cells // m.blocks
            block_freq = (np.bincount(x // b, minlength=m.blocks) / n)[np.arange(N_CANDIDATES) // b]
            closed = float(np.mean(m.variance(truth, block_freq))) / n
        else:
            closed = float(np.mean(m.variance(truth))) / n
    mse = float(np.mean((freq - truth) ** 2))
    size = reports.codes.itemsize * (reports.codes.shape[1] if reports.codes.ndim == 2 else 1)
    return {**rec, "n": n, "bytes_per_report": int(size), "client_s": client_s, "client_people_per_s": n / client_s,
            "aggregate_s": agg_s, "aggregate_reports_per_s_per_core": n / agg_1, "estimate_s": est_s,
            "decoded": f"{N_CANDIDATES:,} candidates" if c.candidates else f"all {K:,}",
            "collector_s": agg_s + est_s, "mse": mse, "mse_closed_form": closed, "cpp": c.cpp}


def peer_runs(n, peer_seconds):
    venv_py = HERE / ".peers-venv" / "bin" / "python"
    if not venv_py.exists():
        return [{"library": "pure-ldp", "error": "bench/.peers-venv missing: run bash bench/peers/setup_venv.sh"}]
    with tempfile.TemporaryDirectory() as tmp:
        np.save(Path(tmp) / "codes.npy", zipf_people(n))
        out = Path(tmp) / "out.json"
        cmd = [str(venv_py), str(HERE / "peers" / "sketch_peers.py"), "--codes", str(Path(tmp) / "codes.npy"),
               "--epsilon", str(EPSILON), "--width", str(SKETCH["width"]), "--hashes", str(SKETCH["hashes"]),
               "--candidates", str(N_CANDIDATES), "--target-seconds", str(peer_seconds), "--json", str(out)]
        proc = subprocess.run(cmd)
        if proc.returncode or not out.exists():
            return [{"library": "pure-ldp", "error": f"sketch_peers.py exited with {proc.returncode}"}]
        records = json.loads(out.read_text())
    for r in records:
        r["n_requested"] = n
    return records


def table(records):
    lines = ["| contestant | n | bytes/report | client people/s | aggregate s (reports/s per core) | decode s "
             "(what) | collector s (C++ at n = 10^4) | MSE (closed form) |",
             "|---|---|---|---|---|---|---|---|"]
    ours = {(r["contestant"], r["n"]): r for r in records if r.get("library") == "ldpnum" and "n" in r}
    for r in records:
        if "error" in r or "skipped" in r:
            n_req = r.get("n_requested", r.get("n"))
            lines.append(f"| {r.get('contestant', r.get('library'))} | {n_req:,} | " if isinstance(n_req, int)
                         else f"| {r.get('contestant', r.get('library'))} | — | ")
            lines[-1] += f"{r.get('skipped') or 'error: ' + str(r['error'])} ||||||"
            continue
        if r["library"] == "ldpnum":
            cpp = f" ({CPP_COLLECTOR_S[r['cpp']]:,} s)" if r.get("cpp") and r["n"] == 10_000 else ""
            apple = (f"; Apple's estimator {r['apple_decode_s']:.2f} s, MSE {r['apple_mse']:.3g}"
                     if "apple_decode_s" in r else "")
            lines.append(f"| {r['contestant']} | {r['n']:,}{' (' + r['note'] + ')' if r.get('note') else ''} | "
                         f"{r['bytes_per_report']:,} | "
                         f"{r['client_people_per_s']:,.0f} | {r['aggregate_s']:.3f} "
                         f"({r['aggregate_reports_per_s_per_core']:,.0f}) | {r['estimate_s']:.2f} ({r['decoded']}"
                         f"{apple}) | {r['collector_s']:.2f}{cpp} | {r['mse']:.3g} ({r['mse_closed_form']:.3g}) |")
        else:
            mine = ours.get((f"{r['variant'].upper()} (ldpnum)", r["n_requested"]))
            ratio = (f" (ldpnum {mine['client_people_per_s'] / r['client_people_per_s']:,.0f}×)"
                     if mine else "")
            agg_ratio = (f"; ldpnum {mine['aggregate_reports_per_s_per_core'] / r['aggregate_people_per_s']:,.0f}×"
                         if mine else "")
            scale = r["n"] / r["n_requested"]
            lines.append(f"| {r['variant'].upper()} (pure-ldp {r['version']}), {r['n']:,} people | "
                         f"{r['n_requested']:,} | — | {r['client_people_per_s']:,.0f}{ratio} | "
                         f"— ({r['aggregate_people_per_s']:,.0f}{agg_ratio}) | "
                         f"{r['estimate_s_per_candidate'] * N_CANDIDATES:.2f} ({N_CANDIDATES:,} candidates, Apple's "
                         f"estimator) | — | {r['mse'] * scale:.3g} (scaled to n) |")
    return "\n".join(lines)


def run(ns=NS, repeats=3, with_peers=True, peer_seconds=20.0):
    import numba

    records = []
    for n in ns:
        for c in CONTESTANTS:
            print(f"huge-domains: {c.label} n={n:,}", file=sys.stderr, flush=True)
            records.append(measure(c, n, repeats))
        if with_peers:
            records += peer_runs(n, peer_seconds)
    cpp = ", ".join(f"{k} {v:,} s" for k, v in CPP_COLLECTOR_S.items())
    md = (f"### Huge domains: k = {K:,}, ε = {EPSILON:g}, Zipf(1.1) people ({os.cpu_count()} cores, "
          f"{numba.get_num_threads()} Numba threads)\n\n" + table(records) + "\n\n"
          f"Collector = aggregate + decode. Published C++ collector times at n = 10^4 (Feldman et al., ICML 2022): "
          f"{cpp}. MSE over the {N_CANDIDATES:,} most frequent codes; pure-ldp's rows are person-by-person runs on "
          "the first people (pilot-sized), their aggregate column is its server's people/s (one core) and the "
          "ratio is ldpnum's per-core figure over it.")
    return records, md


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns", default=",".join(str(n) for n in NS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--peer-seconds", type=float, default=20.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    records, md = run(tuple(int(float(v)) for v in args.ns.split(",")), args.repeats, not args.no_peers,
                      args.peer_seconds)
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1, default=str))


if __name__ == "__main__":
    main()
