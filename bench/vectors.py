"""Unit-vector mean estimation: PrivHS, PrivUnit, PrivUnit (optimized split) and PrivUnitG with compressed
reports, and SQKR (Kashin's representation, one 64-bit report) (``make bench``, section ``vectors``).

Expected squared ℓ2 error ``E‖m̂ − m‖²`` of the mean of n = 10,000 unit vectors, from each mechanism's closed
form (``expected_squared_error``) at d = 128, 1000 and 1024 and ε = 1…8, with the default repetitions and with
one report per person; measured errors (mean of ``RUNS`` collections, secure randomness) at ε = 1, 4, 8 next to
the closed form; client throughput (vectors/s, compile excluded), expected trials per report and bits per
report, and the ratio of SQKR's closed-form error to the others' (Feldman and Talwar compare SQKR with PrivUnit
at d = 1000, n = 10,000, ε = 1…8). The data: n unit vectors ``m + noise`` normalized, ``m`` a fixed random direction of norm 0.5 (seed 0).

For scale, the figures the issue quotes for apple/ml-projunit's PrivUnitG (research code, not on the package index,
so not run here): ‖m̂ − m‖² = 0.668 / 0.0432 / 0.0136 at d = 1024 and 0.0774 / 0.00564 / 0.00167 at d = 128 for
ε = 1 / 4 / 8 (n = 10,000), at about 2,000 vectors/s.

Also (the client's cost, issue 15): client vectors/s at d = 128 and 1024, ε = 1, 4, 8 (median of ``TIMINGS``
calls of ``privatize`` on the n vectors, secure randomness, both cores) and per CPU-second of the process (the
machine is shared: CPU time counts only while the threads run), next to the secure word source's fill rate
measured just before (``RNG words/s``) and their ratio; the collector's decoder (``aggregate``) on n = 100,000 reports; and the compile time of the kernels
(a fresh process with an empty Numba cache: the first ``privatize`` and ``aggregate``), reported apart.

Runs alone: ``python bench/vectors.py``.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

N = 10_000
RUNS = 2
EPSILONS = (1, 2, 3, 4, 5, 6, 7, 8)
MEASURED = (1, 4, 8)
DIMS = (128, 1000, 1024)
#: Timed privatize calls per throughput figure (their median).
TIMINGS = 5
#: Reports decoded when timing the collector.
DECODE_N = 100_000
REFERENCE = {(1024, 1): 0.668, (1024, 4): 0.0432, (1024, 8): 0.0136, (128, 1): 0.0774, (128, 4): 0.00564,
             (128, 8): 0.00167}


def data(n, dim, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal(dim)
    m *= 0.5 / np.linalg.norm(m)
    x = m + rng.standard_normal((n, dim)) / np.sqrt(dim)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def mechanisms(eps, dim, repetitions=None):
    import ldpnum as ldp

    kw = {} if repetitions is None else {"repetitions": repetitions}
    out = {"PrivHS": lambda: ldp.PrivHS(eps, dim, **kw),
           "PrivUnit": lambda: ldp.PrivUnit(eps, dim, **kw),
           "PrivUnitOptimized": lambda: ldp.PrivUnit(eps, dim, optimized=True, **kw),
           "PrivUnitG": lambda: ldp.PrivUnitG(eps, dim, **kw)}
    if repetitions is None:  # SQKR sends one report per person (it does not improve with ε/m, so splitting hurts)
        out["SQKR"] = lambda: ldp.SQKR(eps, dim)
    return out


def rng_fill_rate(words=1 << 23, repeats=5):
    """Words/s of ldpnum's secure source, drawn in privatize's blocks (the machine's load, for the ratio)."""
    from ldpnum._random import BLOCK_WORDS, resolve_rng

    src = resolve_rng(None)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(words // BLOCK_WORDS):
            src.draw(BLOCK_WORDS)
        times.append(time.perf_counter() - t0)
    return words / statistics.median(times)


def decode_seconds(m, x, n=DECODE_N, repeats=3):
    """Median seconds of ``aggregate`` on ``n`` reports (the reports of ``x`` repeated)."""
    import ldpnum as ldp

    r = m.privatize(x, rng=1)
    codes = np.tile(r.codes, (-(-n // len(x)), 1))[:n]
    reports = ldp.Reports(codes, m.spec)
    m.aggregate(ldp.Reports(codes[:100], m.spec))  # compiled / loaded before timing
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        m.aggregate(reports)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


COMPILE_SCRIPT = """
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import ldpnum as ldp
out = {"import": time.perf_counter() - t0}
x = np.full((2000, 64), 0.1)
for name, m in (("PrivHS", ldp.PrivHS(1.0, 64)), ("PrivUnitG", ldp.PrivUnitG(1.0, 64))):
    t0 = time.perf_counter()
    r = m.privatize(x, rng=0)
    out[name + " privatize"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    m.aggregate(r)
    out[name + " aggregate"] = time.perf_counter() - t0
print(json.dumps(out))
"""


def compile_seconds():
    """Seconds of the first privatize / aggregate calls in a fresh process with an empty Numba cache
    (``LDPNUM_JIT=compile``: the kernels are compiled, never interpreted)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, LDPNUM_JIT="compile")
        res = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, str(HERE.parent)], env=env,
                             capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def _bits(name, m):
    if name == "SQKR":
        return m.report_bits
    return 33 * m.repetitions if name == "PrivHS" else 32 * m.repetitions


def run(repeats=RUNS):
    """Measure; return ``(records, markdown)``."""
    records = []
    for dim in DIMS:
        x = data(N, dim)
        for eps in EPSILONS:
            for reps in (None, 1) if eps == 8 else (None,):
                for name, make in mechanisms(float(eps), dim, reps).items():
                    m = make()
                    rec = {"dim": dim, "epsilon": eps, "mechanism": name, "repetitions": m.repetitions,
                           "forced_one": reps == 1, "closed_form": m.expected_squared_error(x),
                           "bits": _bits(name, m),
                           "expected_trials": getattr(m, "expected_trials", None)}
                    if eps in MEASURED and dim in (128, 1024):
                        m.privatize(x[:2000 if name != "SQKR" else 200], rng=0)  # compile
                        errs, times = [], []
                        for r in range(repeats):
                            reports = m.privatize(x)
                            est = m.estimate_mean(m.aggregate(reports))
                            errs.append(float(np.sum((est.mean - x.mean(axis=0)) ** 2)))
                        fill = rng_fill_rate()
                        cpu = []
                        for r in range(TIMINGS):
                            t0, c0 = time.perf_counter(), time.process_time()
                            m.privatize(x)
                            times.append(time.perf_counter() - t0)
                            cpu.append(time.process_time() - c0)
                        vps = N / float(np.median(times))
                        rec.update(measured=float(np.mean(errs)), measured_se=float(np.std(errs, ddof=1) / np.sqrt(
                            len(errs))) if len(errs) > 1 else None, vectors_per_second=vps,
                            vectors_per_cpu_second=N / float(np.median(cpu)),
                            rng_words_per_second=fill, vectors_per_million_rng_words=vps / (fill / 1e6))
                        if eps == 1 and not reps and name != "SQKR":
                            rec["decode_seconds"] = decode_seconds(m, x)
                        print(f"vectors {name} d={dim} eps={eps} reps={m.repetitions}: {rec['measured']:.4g} "
                              f"(closed {rec['closed_form']:.4g})", flush=True)
                    records.append(rec)
    compile_info = compile_seconds()
    records.append({"compile_seconds": compile_info})
    return records, markdown(records, repeats)


def _trials(v):
    return "–" if v is None else f"{float(v):.1f}"


def markdown(records, repeats):
    lines = ["## Unit vectors: PrivHS, PrivUnit, PrivUnitG (compressed reports), SQKR", "",
             f"E‖m̂ − m‖² of the mean of n = {N:,} unit vectors (closed form; measured = mean of {repeats} "
             "collections with secure randomness at ε = 1, 4, 8), default repetitions (the reports per person ldpnum "
             "picks) and, at ε = 8, one report per person. Reports are 32-bit seed indices (PrivHS: 32 bits + a sign), "
             "so bits per report = 32·m or 33·m; SQKR sends one 64-bit report (seed and 2^k-ary randomized "
             "response, k = ⌈ε⌉; frame redundancy 4, level K = 2). Client vectors/s, compile excluded, 2 shared cores. Reference: the "
             "figures quoted for apple/ml-projunit's PrivUnitG (not on the package index; ~2,000 vectors/s).", "",
             "| d | ε | mechanism | m | closed form | measured | reference | expected trials | bits | vectors/s |",
             "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    compile_info = next((r["compile_seconds"] for r in records if "compile_seconds" in r), None)
    records = [r for r in records if "compile_seconds" not in r]
    for r in records:
        meas = "" if "measured" not in r else f"{r['measured']:.4g}"
        ref = REFERENCE.get((r["dim"], r["epsilon"])) if r["mechanism"] == "PrivUnitG" and not r["forced_one"] else None
        vps = "" if "vectors_per_second" not in r else f"{r['vectors_per_second']:,.0f}"
        name = r["mechanism"] + (" (m = 1)" if r["forced_one"] else "")
        lines.append(f"| {r['dim']} | {r['epsilon']} | {name} | {r['repetitions']} | {r['closed_form']:.4g} | {meas} | "
                     f"{'' if ref is None else ref} | {_trials(r['expected_trials'])} | {r['bits']} | {vps} |")
    timed = [r for r in records if "vectors_per_second" in r]
    lines += ["", f"Client throughput (median of {TIMINGS} calls on {N:,} vectors, secure randomness, compile excluded) "
              "and per CPU-second of the process (all threads; what a core does when it runs, whatever else shares "
              "the machine), and the secure word source's fill rate measured just before with their ratio; decoder: "
              f"seconds of aggregate on {DECODE_N:,} reports at ε = 1.", "",
              "| d | ε | mechanism | m | expected trials | vectors/s | vectors per CPU-s | RNG words/s | "
              "vectors per 10^6 RNG words | decode s |", "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in timed:
        name = r["mechanism"] + (" (m = 1)" if r["forced_one"] else "")
        dec = f"{r['decode_seconds']:.3f}" if "decode_seconds" in r else ""
        lines.append(f"| {r['dim']} | {r['epsilon']} | {name} | {r['repetitions']} | {_trials(r['expected_trials'])} | "
                     f"{r['vectors_per_second']:,.0f} | {r['vectors_per_cpu_second']:,.0f} | "
                     f"{r['rng_words_per_second']:.3g} | "
                     f"{r['vectors_per_million_rng_words']:.1f} | {dec} |")
    if compile_info:
        lines += ["", "Compile (fresh process, empty Numba cache, d = 64, 2,000 vectors; seconds): " + ", ".join(
            f"{k} {v:.2f}" for k, v in compile_info.items()) + "."]
    closed = {(r["dim"], r["epsilon"], r["mechanism"]): r["closed_form"] for r in records if not r["forced_one"]}
    lines += ["", "SQKR's closed-form error over the others' (default repetitions):", "",
              "| d | ε | / PrivHS | / PrivUnit | / PrivUnitOptimized | / PrivUnitG |", "|---:|---:|---:|---:|---:|---:|"]
    for (dim, eps, name), v in closed.items():
        if name == "SQKR":
            ratios = " | ".join(f"{v / closed[(dim, eps, other)]:.2f}" for other in
                                ("PrivHS", "PrivUnit", "PrivUnitOptimized", "PrivUnitG"))
            lines.append(f"| {dim} | {eps} | {ratios} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    _, md = run()
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
