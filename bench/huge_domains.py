"""Huge categorical domains (``make bench``, section ``huge-domains``): frequency oracles at k = 3,307,948.

The setting of Feldman, Nelson, Nguyen and Talwar ("Private Frequency Estimation via Projective Geometry", ICML
2022): k = 3,307,948 categories, ε = 5, n = 10,000 people, and here also n = 10^6. People hold codes in ``[0, k)``
drawn from a Zipf law (P(i) ∝ (i + 1)^-1.1, ``run_peers.zipf_codes``, seed 0), so code ``i`` is the ``i``-th most
frequent.

Contestants (:data:`CONTESTANTS`, one entry each; a new mechanism is one more entry): ldpnum's count-mean sketch
(CMS and HCMS, width 1024, 256 hash functions, Apple's parameters), Hadamard response, PI-RAPPOR, subset
selection, projective geometry response (PGR) and hybrid PGR (q = 3). Per contestant and n:

* client: ``privatize`` people/s (seeded PCG64 words; median of ``--repeats``; a first untimed call compiles);
* collector: ``aggregate`` seconds on all cores, its reports/s per core (the same call with Numba and the counting
  threads set to 1), and ``estimate_frequencies`` seconds. The sketches decode the ``N_CANDIDATES`` = 10^4 most
  frequent codes (a dictionary: decoding all 3.3 million codes with the unbiased estimator is refused, the sketch
  holds only 262,144 counts; Apple's estimator reads all of them in about a minute); the others decode all k;
* the sketches' decode with Apple's estimator too (``method="apple"``: its time and MSE);
* accuracy: MSE of the frequencies over the 10^4 most frequent codes against the truth, next to its closed form
  (the mean over them of the oracle's variance at the true frequency; for the sketches, the mean of the
  estimator's plug-in variance, exact in the randomization for the fixed hash family);
* the load average before the first timed call and after each (the machine may be shared).

Sizes measured where the machine allows: subset selection would report a k-bit vector (413 KB per person, ω = 22,052
picks each; ldpnum's ``SubsetSelection`` takes k ≤ 65,536 and says so, so its row reports that with its closed-form
MSE at ω = k/(e^ε + 1)), capped at ``SS_MAX_N`` people; PI-RAPPOR's collector costs O(n·k) (the paper's C++ figure
is 1,893.8 s at n = 10^4), so it runs at n = 10^4 only, and its row at n = 10^6 gives the time its measured
aggregation rate would take. Both say so in the table. A row that raises is recorded with its error (and where),
and the other rows still run.

Peers: pure-ldp's CMS and HCMS (``CMSClient``/``CMSServer``, the same width and hash functions) run in
bench/.peers-venv (``bench/peers/sketch_peers.py``; ``$PEERS_VENV`` names another), person by person as pure-ldp's
API is; their n is sized by a pilot to about ``--peer-seconds`` per measurement and their MSE scaled to the table's
n (MSE ∝ 1/n). The C++ collector times published for the same setting (n = 10^4) are shown next to ours, not re-run.

The client table (:func:`cms_client`, also ``python bench/cms_client.py``): ldpnum's CMS client with the sparse
layout of the other bits (the default) and with SUE's lanes, and HCMS, each seeded and secure, at n = 10^6, ε = 4
(``--client-n``, ``--client-epsilon``): people/s, CPU µs per person (all threads, the words' drawing included),
words per person and the ratio to pure-ldp's clients at the same ε, with the seeded floor: the default layout's
words per person times the seeded source's CPU time per word, measured in the same run (the words are one stream
drawn in order, so that floor holds on one core whatever the cores).

Runs alone: ``python bench/huge_domains.py [--ns 10000,1000000] [--repeats 3] [--no-peers] [--client-n 0]``
(``--ns ''``: the client table only).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "peers"))

import ldpnum as ldp  # noqa: E402
from pgr import subset_selection_variance  # noqa: E402
from run_peers import ZIPF_S  # noqa: E402

K = 3_307_948
EPSILON = 5.0
NS = (10_000, 1_000_000)
N_CANDIDATES = 10_000
SS_MAX_N = 2_000
SKETCH = dict(width=1024, hashes=256)
#: The CMS client table's setting (the client alone; pure-ldp's clients at the same ε).
CLIENT_N = 1_000_000
CLIENT_EPSILON = 4.0
#: People whose codes go to the peers' process (pure-ldp's pilot sizes its n far below this).
PEER_MAX_N = 1_000_000
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
    closed_form: Callable | None = None  # per-report variance at frequencies f, for a row ldpnum cannot run
    extra: dict = field(default_factory=dict)


CONTESTANTS = [
    Contestant("CMS (ldpnum)", lambda: ldp.CountMeanSketch(EPSILON, K, **SKETCH), candidates=True),
    Contestant("HCMS (ldpnum)", lambda: ldp.CountMeanSketch(EPSILON, K, variant="hcms", **SKETCH), candidates=True),
    Contestant("Hadamard response (ldpnum)", lambda: ldp.HadamardResponse(EPSILON, K), cpp="Hadamard response"),
    Contestant("PI-RAPPOR (ldpnum)", lambda: ldp.PIRappor(EPSILON, K), max_n=10_000,
               why="collector O(n·k)", cpp="PI-RAPPOR", repeats=1),
    Contestant("subset selection (ldpnum)", lambda: ldp.SubsetSelection(EPSILON, K), max_n=10_000, run_n=SS_MAX_N,
               why="k-bit reports: 413 KB per person",
               closed_form=lambda f: subset_selection_variance(EPSILON, K, f)),
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


def load() -> float:
    """The 1-minute load average (the machine is shared: it goes next to every figure)."""
    return round(os.getloadavg()[0], 2)


def timed(fn, repeats):
    """``fn()`` ``repeats`` times: ``({"wall_s", "cpu_s", "load"}, last output)``.

    Wall and CPU seconds (``time.process_time``: all threads of the process) are medians over the calls; ``load`` is
    the load average before the first call and after each.
    """
    walls, cpus, loads, out = [], [], [load()], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        loads.append(load())
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus), "load": loads}, out


def one_thread(fn):
    """Seconds of ``fn()`` with Numba's and ldpnum's counting threads at 1 (the per-core figure), then restored."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return timed(fn, 1)[0]["wall_s"]
    finally:
        numba.set_num_threads(before)


def warm(m, x):
    """An untimed ``privatize`` of up to 50,000 people: large enough that the client kernel is compiled (or loaded
    from the cache) then, not in a timed call (smaller calls may run on the interpreted tier, ``ldpnum._kernels._jit``).
    """
    m.privatize(x[:50_000], rng=99)


def failure(rec, exc):
    """``rec`` with the error of a row that raised, and where (the row is recorded, the others still run)."""
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return {**rec, "error": f"{exc!r} at {Path(frame.filename).name}:{frame.lineno}"}


def closed_form_only(c, n, rec):
    """A contestant ldpnum cannot run at this size: its closed-form MSE when it has one, else nothing more."""
    if c.closed_form is None:
        return rec
    x = zipf_people(n)
    truth = np.bincount(x[x < N_CANDIDATES], minlength=N_CANDIDATES) / n
    return {**rec, "mse_closed_form": float(np.mean(c.closed_form(truth))) / n}


def measure(c, n, repeats, measured=()):
    """One row of the oracle table: client, collector, per-core aggregation and MSE of contestant ``c`` at ``n``.

    ``measured``: the rows already measured (a contestant not run above its ``max_n`` quotes the time its
    measured aggregation rate would take).
    """
    rec = {"library": "ldpnum", "contestant": c.label, "k": K, "epsilon": EPSILON, "n_requested": n}
    if c.max_n is not None and n > c.max_n:
        rates = [r["n"] / r["aggregate_s"] for r in measured if r.get("contestant") == c.label and "aggregate_s" in r]
        would = (f"; its aggregate at the measured {rates[-1]:,.0f} reports/s would take {n / rates[-1] / 60:,.0f} min"
                 if rates else "")
        return closed_form_only(c, n, {**rec, "skipped": f"not run above n = {c.max_n:,} ({c.why}{would})"})
    try:
        m = c.build()
    except ValueError as exc:  # a mechanism that does not take this k: said, not fatal
        return closed_form_only(c, n, {**rec, "skipped": f"not available: {exc}"})
    if c.run_n is not None:
        n = min(n, c.run_n)
        rec["note"] = f"run at n = {n:,} ({c.why})"
    repeats = c.repeats or repeats
    x = zipf_people(n)
    truth = np.bincount(x[x < N_CANDIDATES], minlength=N_CANDIDATES) / n
    warm(m, x)
    client, reports = timed(lambda: m.privatize(x, rng=1), repeats)
    aggregate, agg = timed(lambda r=reports: m.aggregate(r), repeats)
    agg_1 = one_thread(lambda r=reports: m.aggregate(r))
    cand = np.arange(N_CANDIDATES)
    if c.candidates:
        decode, est = timed(lambda: m.estimate_frequencies(agg, candidates=cand), 1)
        apple_t, apple = timed(lambda: m.estimate_frequencies(agg, candidates=cand, method="apple"), 1)
        a_freq = apple.frequencies[np.argsort(np.array(apple.items))]
        rec.update(apple_decode_s=apple_t["wall_s"], apple_mse=float(np.mean((a_freq - truth) ** 2)))
        order = np.argsort(np.array(est.items))
        freq, se = est.frequencies[order], est.standard_errors[order]
        closed = float(np.mean(se**2))
    else:
        decode, est = timed(lambda: m.estimate_frequencies(agg), 1)
        freq, se = est.frequencies[:N_CANDIDATES], est.standard_errors[:N_CANDIDATES]
        if m.name == "pgr" and m.blocks > 1:  # the hybrid's variance depends on each category's whole block
            b = m.n_cells // m.blocks
            block_freq = (np.bincount(x // b, minlength=m.blocks) / n)[np.arange(N_CANDIDATES) // b]
            closed = float(np.mean(m.variance(truth, block_freq))) / n
        else:
            closed = float(np.mean(m.variance(truth))) / n
    mse = float(np.mean((freq - truth) ** 2))
    size = reports.codes.itemsize * (reports.codes.shape[1] if reports.codes.ndim == 2 else 1)
    return {**rec, "n": n, "bytes_per_report": int(size), "words_per_record": m.words_per_record,
            "client_s": client["wall_s"], "client_people_per_s": n / client["wall_s"],
            "client_cpu_us_per_person": 1e6 * client["cpu_s"] / n, "aggregate_s": aggregate["wall_s"],
            "aggregate_reports_per_s_per_core": n / agg_1, "estimate_s": decode["wall_s"],
            "estimate_cpu_s": decode["cpu_s"],
            "decoded": f"{N_CANDIDATES:,} candidates" if c.candidates else f"all {K:,}",
            "collector_s": aggregate["wall_s"] + decode["wall_s"], "mse": mse, "mse_closed_form": closed,
            "cpp": c.cpp, "load": client["load"] + aggregate["load"][1:] + decode["load"][1:]}


def peer_runs(codes, epsilon, peer_seconds, candidates=N_CANDIDATES):
    """pure-ldp's CMS and HCMS (``bench/peers/sketch_peers.py`` in the peers' venv) on the first of ``codes``."""
    base = {"library": "pure-ldp", "epsilon": epsilon, "n_requested": len(codes)}
    venv_py = Path(os.environ.get("PEERS_VENV", HERE / ".peers-venv")) / "bin" / "python"
    if not venv_py.exists():
        return [{**base, "error": f"{venv_py} missing: run bash bench/peers/setup_venv.sh"}]
    with tempfile.TemporaryDirectory() as tmp:
        np.save(Path(tmp) / "codes.npy", np.asarray(codes[:PEER_MAX_N], dtype=np.int64))
        out = Path(tmp) / "out.json"
        cmd = [str(venv_py), str(HERE / "peers" / "sketch_peers.py"), "--codes", str(Path(tmp) / "codes.npy"),
               "--epsilon", str(epsilon), "--width", str(SKETCH["width"]), "--hashes", str(SKETCH["hashes"]),
               "--candidates", str(candidates), "--target-seconds", str(peer_seconds), "--json", str(out)]
        before = load()
        proc = subprocess.run(cmd)
        if proc.returncode or not out.exists():
            return [{**base, "error": f"sketch_peers.py exited with {proc.returncode}"}]
        records = json.loads(out.read_text())
    return [{**r, "n_requested": len(codes), "load": [before, load()]} for r in records]


def _oracle_row(r, ours):
    if "error" in r or "skipped" in r:
        n_req = r.get("n_requested")
        closed = f" ({r['mse_closed_form']:.3g}, closed form)" if "mse_closed_form" in r else ""
        return (f"| {r.get('contestant', r.get('library'))} | {f'{n_req:,}' if isinstance(n_req, int) else '—'} | "
                f"{r.get('skipped') or 'error: ' + str(r['error'])} |||||| —{closed} |")
    if r["library"] == "ldpnum":
        cpp = f" ({CPP_COLLECTOR_S[r['cpp']]:,} s)" if r.get("cpp") and r["n"] == 10_000 else ""
        apple = (f"; Apple's estimator {r['apple_decode_s']:.2f} s, MSE {r['apple_mse']:.3g}"
                 if "apple_decode_s" in r else "")
        return (f"| {r['contestant']} | {r['n']:,}{' (' + r['note'] + ')' if r.get('note') else ''} | "
                f"{r['bytes_per_report']:,} | {r['client_people_per_s']:,.0f} | {r['aggregate_s']:.3f} "
                f"({r['aggregate_reports_per_s_per_core']:,.0f}) | {r['estimate_s']:.2f} ({r['decoded']}{apple}) | "
                f"{r['collector_s']:.2f}{cpp} | {min(r['load'])}–{max(r['load'])} | "
                f"{r['mse']:.3g} ({r['mse_closed_form']:.3g}) |")
    mine = ours.get((f"{r['variant'].upper()} (ldpnum)", r["n_requested"]))
    ratio = f" (ldpnum {mine['client_people_per_s'] / r['client_people_per_s']:,.0f}×)" if mine else ""
    agg_ratio = (f"; ldpnum {mine['aggregate_reports_per_s_per_core'] / r['aggregate_people_per_s']:,.0f}×"
                 if mine else "")
    return (f"| {r['variant'].upper()} (pure-ldp {r['version']}), {r['n']:,} people | {r['n_requested']:,} | — | "
            f"{r['client_people_per_s']:,.0f}{ratio} | — ({r['aggregate_people_per_s']:,.0f}{agg_ratio}) | "
            f"{r['estimate_s_per_candidate'] * N_CANDIDATES:.2f} ({N_CANDIDATES:,} candidates, Apple's estimator) | "
            f"— | {r['load'][0]}–{r['load'][1]} | {r['mse'] * r['n'] / r['n_requested']:.3g} (scaled to n) |")


def _rows(records, render):
    """Markdown rows of ``records``; a record that does not render is a row with its error (the table stands)."""
    lines = []
    for r in records:
        try:
            lines.append(render(r))
        except Exception as exc:  # noqa: BLE001  (a bad record must not lose the table)
            lines.append(f"| {r.get('contestant', r.get('label', r.get('library')))} | cannot render: {exc!r} |")
    return lines


def table(records):
    lines = ["| contestant | n | bytes/report | client people/s | aggregate s (reports/s per core) | decode s "
             "(what) | collector s (C++ at n = 10^4) | load | MSE (closed form) |",
             "|---|---|---|---|---|---|---|---|---|"]
    records = [r for r in records if r.get("part") != "cms-client"]  # the client table's rows are rendered apart
    ours = {(r["contestant"], r["n"]): r for r in records if r.get("library") == "ldpnum" and "n" in r}
    return "\n".join(lines + _rows(records, lambda r: _oracle_row(r, ours)))


def lanes(m):
    """``m`` (a CMS) drawing its other bits from SUE's lanes, the layout before the sparse one (forced in its plan)."""
    m._plan = dataclasses.replace(m.plan, sparse=None)
    return m


#: The CMS client table: (label, build at ε, rng: 1 seeded, None secure).
CLIENT_ROWS = (
    ("ldpnum CMS, sparse bits, seeded", lambda e: ldp.CountMeanSketch(e, K, **SKETCH), 1),
    ("ldpnum CMS, SUE lanes, seeded", lambda e: lanes(ldp.CountMeanSketch(e, K, **SKETCH)), 1),
    ("ldpnum CMS, sparse bits, secure", lambda e: ldp.CountMeanSketch(e, K, **SKETCH), None),
    ("ldpnum CMS, SUE lanes, secure", lambda e: lanes(ldp.CountMeanSketch(e, K, **SKETCH)), None),
    ("ldpnum HCMS, seeded", lambda e: ldp.CountMeanSketch(e, K, variant="hcms", **SKETCH), 1),
    ("ldpnum HCMS, secure", lambda e: ldp.CountMeanSketch(e, K, variant="hcms", **SKETCH), None),
)

#: The row whose words give the seeded floor (words per person times PCG64's fill rate).
FLOOR_ROW = CLIENT_ROWS[0][0]


def cms_client(n=CLIENT_N, epsilon=CLIENT_EPSILON, repeats=3, with_peers=True, peer_seconds=10.0):
    """The count-mean sketch's client alone: ldpnum's layouts, seeded and secure, next to pure-ldp's.

    Returns ``(records, markdown)``; a row that raises is recorded with its error.
    """
    x = zipf_people(n)
    records = []
    for label, build, rng in CLIENT_ROWS:
        print(f"huge-domains: client {label} n={n:,} eps={epsilon:g}", file=sys.stderr, flush=True)
        rec = {"library": "ldpnum", "part": "cms-client", "label": label, "n": n, "epsilon": epsilon,
               "secure": rng is None}
        try:
            m = build(epsilon)
            warm(m, x)
            t, _ = timed(lambda: m.privatize(x, rng=rng), repeats)
            records.append({**rec, "words_per_person": m.words_per_record, **t, "people_per_s": n / t["wall_s"],
                            "cpu_us_per_person": 1e6 * t["cpu_s"] / n})
        except Exception as exc:  # noqa: BLE001  (one row's failure is recorded, the others still run)
            records.append(failure(rec, exc))
    records.append(fill_rate(repeats))
    if with_peers:
        records += [{**p, "part": "cms-client"} for p in peer_runs(x, epsilon, peer_seconds, candidates=100)]
    return records, client_table(records, n, epsilon, repeats)


def fill_rate(repeats, blocks=40):
    """CPU ns per word of the seeded source drawn as ``privatize`` draws it (blocks of ``BLOCK_WORDS``)."""
    from ldpnum._random import BLOCK_WORDS, resolve_rng

    src = resolve_rng(0)

    def draw():  # one block alive at a time, as in privatize (keeping all 40 cost a page fault per 4 KB:
        for _ in range(blocks):  # 4.46 instead of 2.33 ns per word, quiet, on the 2-core EPYC)
            src.draw(BLOCK_WORDS)

    t, _ = timed(draw, max(repeats, 5))
    return {"library": "ldpnum", "part": "cms-client", "label": "PCG64 words", "ns_per_word":
            1e9 * t["cpu_s"] / (blocks * BLOCK_WORDS), "load": t["load"]}


def _client_row(r, peers):
    if "ns_per_word" in r:
        return (f"| seeded floor: PCG64's words alone ({r['ns_per_word']:.2f} ns CPU per word, one stream, one core) "
                f"| {r['floor_people_per_s']:,.0f} | {r['floor_us']:.2f} | {r['floor_words']} | | "
                f"{min(r['load'])}–{max(r['load'])} |") if "floor_us" in r else ""
    if "error" in r:
        return f"| {r.get('label') or ('pure-ldp ' + r.get('variant', '')).strip()} | error: {r['error']} |||||"
    if r["library"] == "pure-ldp":
        return (f"| pure-ldp {r['version']} {r['variant'].upper()} (n = {r['n']:,}) | {r['client_people_per_s']:,.0f} "
                f"| | | 1× | {r['load'][0]}–{r['load'][1]} |")
    ref = peers.get("hcms" if "HCMS" in r["label"] else "cms")
    ratio = f"{r['people_per_s'] / ref['client_people_per_s']:,.0f}×" if ref else "n/a"
    return (f"| {r['label']} | {r['people_per_s']:,.0f} | {r['cpu_us_per_person']:.2f} | {r['words_per_person']} | "
            f"{ratio} | {min(r['load'])}–{max(r['load'])} |")


def client_table(records, n, epsilon, repeats):
    peers = {p["variant"]: p for p in records if p.get("library") == "pure-ldp" and "client_people_per_s" in p}
    words = [r["words_per_person"] for r in records if r.get("label") == FLOOR_ROW and "words_per_person" in r]
    for r in records:
        if "ns_per_word" in r and words:  # the sparse layout's words at the measured fill rate
            r.update(floor_words=words[0], floor_us=words[0] * r["ns_per_word"] / 1000,
                     floor_people_per_s=1e9 / (words[0] * r["ns_per_word"]))
    rows = [line for line in _rows(records, lambda r: _client_row(r, peers)) if line]
    return "\n".join([
        f"#### Count-mean sketch client: n = {n:,}, ε = {epsilon:g}, width {SKETCH['width']}, {SKETCH['hashes']} "
        f"hashes (medians of {repeats}; load average around the calls)", "",
        "| client | people/s | CPU µs/person | words/person | × pure-ldp | load |", "|---|---|---|---|---|---|"]
        + rows) + ("\n\nCPU time is the process's, all threads (the words' drawing included); pure-ldp's client is "
                   "one `privatise` call per person. The seeded floor is the default layout's words per person at the "
                   "seeded source's CPU time per word: no seeded client of that layout can spend less.")


def run(ns=NS, repeats=3, with_peers=True, peer_seconds=20.0, client_n=CLIENT_N, client_epsilon=CLIENT_EPSILON):
    import numba

    records = []
    for n in ns:
        for c in CONTESTANTS:
            print(f"huge-domains: {c.label} n={n:,}", file=sys.stderr, flush=True)
            rec = {"library": "ldpnum", "contestant": c.label, "n_requested": n}
            try:
                records.append(measure(c, n, repeats, records))
            except Exception as exc:  # noqa: BLE001  (one row's failure is recorded, the others still run)
                records.append(failure(rec, exc))
        if with_peers:
            try:
                records += peer_runs(zipf_people(n), EPSILON, peer_seconds)
            except Exception as exc:  # noqa: BLE001
                records.append(failure({"library": "pure-ldp", "n_requested": n}, exc))
    cpp = ", ".join(f"{k} {v:,} s" for k, v in CPP_COLLECTOR_S.items())
    md = "" if not ns else (f"### Huge domains: k = {K:,}, ε = {EPSILON:g}, Zipf(1.1) people ({os.cpu_count()} cores, "
          f"{numba.get_num_threads()} Numba threads)\n\n" + table(records) + "\n\n"
          f"Collector = aggregate + decode. Published C++ collector times at n = 10^4 (Feldman et al., ICML 2022): "
          f"{cpp}. MSE over the {N_CANDIDATES:,} most frequent codes; pure-ldp's rows are person-by-person runs on "
          "the first people (pilot-sized), their aggregate column is its server's people/s (one core) and the "
          "ratio is ldpnum's per-core figure over it.")
    if client_n:
        client_records, client_md = cms_client(client_n, client_epsilon, repeats, with_peers, peer_seconds / 2)
        records += client_records
        md += ("\n\n" if md else "") + client_md
    return records, md


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns", default=",".join(str(n) for n in NS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--peer-seconds", type=float, default=20.0)
    ap.add_argument("--client-n", type=int, default=CLIENT_N, help="people of the CMS client table (0: skip it)")
    ap.add_argument("--client-epsilon", type=float, default=CLIENT_EPSILON)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    ns = tuple(int(float(v)) for v in args.ns.split(",") if v.strip())
    records, md = run(ns, args.repeats, not args.no_peers, args.peer_seconds, args.client_n, args.client_epsilon)
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1, default=str))


if __name__ == "__main__":
    main()
