"""``make bench``: ldpnum's throughput and accuracy, side by side with peer libraries and the RNG fill rate.

One run measures, on this machine:

1. the fill rate of every candidate word source (the machine's limit for a randomizer) — the secure
   default (AES-128-CTR keyed from ``os.urandom``), ``os.urandom`` itself, NumPy's PCG64 (seeded runs);
2. JIT compile time of the client kernels, in a fresh process with an empty Numba cache (reported
   separately; throughput excludes it);
3. ``privatize`` values/s at n = 1e6 and 1e7 for every mean oracle, seeded and secure, and the ratio to the
   fill-rate limit for the words each record needs; ``aggregate`` + ``estimate_mean`` values/s; peak memory
   (tracemalloc) per value;
4. accuracy: mean squared error of the mean estimate over repeated collections against the closed form;
   distribution estimation (Square Wave + EM/EMS, 1024 buckets) time, iterations, W1 and KS at n = 1e5, 1e6;
5. the peer libraries (pure-ldp, multi-freq-ldpy, ldp-toolbox) on randomized response, in their own
   virtual environment (they need old pins), with the ratio ours / best peer.

Medians of ``--repeats`` runs (default 3). Writes ``bench/results/bench-<timestamp>.json`` and
``bench/results/latest.md``, and prints the markdown.
"""

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ldpnum as ldp  # noqa: E402
from ldpnum._random import resolve_rng  # noqa: E402
from rng_fill import measure_fill_rates  # noqa: E402

EPSILON = 1.0


def mechanisms():
    out = [ldp.RandomizedResponse(EPSILON)]
    for name in ("StochasticRounding", "Duchi", "Piecewise", "Hybrid", "Laplace", "SquareWave"):
        cls = getattr(ldp, name, None)
        if cls is not None:
            out.append(cls(EPSILON, (0.0, 1.0)))
    return out


def data_for(m, n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random(n) < 0.3).astype(np.float64) if m.name == "randomized_response" else rng.beta(5, 2, n)


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def machine():
    import numba
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor()
    data = np.zeros(10)
    ldp.Duchi(1.0, (0, 1)).privatize(data, rng=0)
    return {"cpu": cpu, "cores": os.cpu_count(), "numba_threads": numba.get_num_threads(),
            "threading_layer": numba.threading_layer(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__, "ldpnum": ldp.__version__}


COMPILE_SCRIPT = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    import numpy as np, ldpnum as ldp
    out = {"import_s": time.perf_counter() - t0}
    sys.path.insert(0, sys.argv[1])
    from run import mechanisms
    for m in mechanisms():
        t0 = time.perf_counter()
        m.privatize(np.zeros(16) if m.name == "randomized_response" else np.full(16, 0.5), rng=0)
        out[m.name] = time.perf_counter() - t0
    print(json.dumps(out))
""")


def compile_times():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        res = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, str(HERE)], env=env, capture_output=True,
                             text=True, check=True)
    return json.loads(res.stdout)


def throughput(m, n, repeats):
    x = data_for(m, n)
    m.privatize(x[:100], rng=0)  # compiled / loaded from cache before timing
    seeded = median_time(lambda: m.privatize(x, rng=1), repeats)
    secure = median_time(lambda: m.privatize(x), repeats)
    reports = m.privatize(x, rng=1)
    agg_est = median_time(lambda: m.estimate_mean(m.aggregate(reports)), repeats)
    tracemalloc.start()
    m.privatize(x, rng=1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"mechanism": m.name, "n": n, "epsilon": m.epsilon, "words_per_record": m.words_per_record,
            "privatize_seeded_values_per_s": n / seeded, "privatize_secure_values_per_s": n / secure,
            "aggregate_estimate_values_per_s": n / agg_est, "peak_bytes_per_value": peak / n,
            "report_bytes_per_value": reports.codes.dtype.itemsize}


def accuracy(m, n=1_000_000, repeats=50):
    x = data_for(m, n, seed=3)
    errs = [m.estimate_mean(m.privatize(x, rng=100 + r)).value - x.mean() for r in range(repeats)]
    predicted = float(np.mean(m.variance(x))) / n
    return {"mechanism": m.name, "n": n, "epsilon": m.epsilon, "repeats": repeats,
            "mse": float(np.mean(np.square(errs))), "predicted_mse": predicted}


def distribution(n, epsilon, method, repeats, n_bins=1024):
    """EM/EMS wall time (including building the transition) and accuracy on Beta(5, 2) samples."""
    from ldpnum import metrics

    sw = ldp.SquareWave(epsilon, (0.0, 1.0))
    x = np.random.default_rng(11).beta(5, 2, n)
    agg = sw.aggregate(sw.privatize(x, rng=12))
    sw.estimate_distribution(agg, n_bins=n_bins, method=method, max_iter=5)  # warm
    seconds = median_time(lambda: sw.estimate_distribution(agg, n_bins=n_bins, method=method), repeats)
    est = sw.estimate_distribution(agg, n_bins=n_bins, method=method)
    return {"n": n, "epsilon": epsilon, "method": method, "n_bins": n_bins, "seconds": seconds,
            "n_iter": est.n_iter, "converged": est.converged,
            "w1_binned": metrics.wasserstein_binned(est, x, n_bins), "w1": metrics.wasserstein(est, x),
            "ks": metrics.ks(est, x)}


def peers(ns, repeats):
    venv_py = HERE / ".peers-venv" / "bin" / "python"
    if not venv_py.exists():
        return [{"error": "bench/.peers-venv missing: run bash bench/peers/setup_venv.sh"}]
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [str(venv_py), str(HERE / "peers" / "run_peers.py"), "--n", ",".join(str(n) for n in ns),
               "--epsilon", str(EPSILON), "--repeats", str(repeats), "--json", f.name, "--quiet"]
        subprocess.run(cmd, check=True)
        return json.load(open(f.name))


def fmt(v, digits=3):
    if v is None:
        return "–"
    if abs(v) >= 1e6:
        return f"{v / 1e6:.1f} M"
    return f"{v:.{digits}g}"


def markdown(res):
    lines = [f"# ldpnum benchmark ({res['when']})", "",
             "Machine: " + ", ".join(f"{k} {v}" for k, v in res["machine"].items()), "",
             f"ε = {EPSILON}; medians of {res['repeats']} runs; values/s; compile time excluded (see below).", "",
             "## Word sources (the machine's limit)", "", "| source | secure | M words/s |", "|---|---|---:|"]
    for r in res["rng"]:
        lines.append(f"| {r['source']} | {'yes' if r['secure'] else 'no'} | {r['words_per_second'] / 1e6:.0f} |")
    lines += ["", "## Mean oracles", "",
              "| mechanism | n | words/rec | privatize seeded | ratio to PCG64 limit | privatize secure | "
              "ratio to AES limit | aggregate+estimate | peak B/value | report B/value |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in res["throughput"]:
        lines.append(
            f"| {r['mechanism']} | {r['n']:.0e} | {r['words_per_record']} | {fmt(r['privatize_seeded_values_per_s'])}"
            f" | {r['ratio_seeded_to_limit']:.2f} | {fmt(r['privatize_secure_values_per_s'])}"
            f" | {r['ratio_secure_to_limit']:.2f} | {fmt(r['aggregate_estimate_values_per_s'])}"
            f" | {r['peak_bytes_per_value']:.1f} | {r['report_bytes_per_value']} |")
    lines += ["", "## Compile time (fresh process, empty Numba cache)", "",
              "| what | seconds |", "|---|---:|"]
    for k, v in res["compile"].items():
        lines.append(f"| {k} | {v:.2f} |")
    lines += ["", "## Accuracy of the mean (n = 1e6, 50 collections)", "",
              "| mechanism | MSE | predicted MSE (closed form) | ratio |", "|---|---:|---:|---:|"]
    for r in res["accuracy"]:
        lines.append(f"| {r['mechanism']} | {r['mse']:.3g} | {r['predicted_mse']:.3g} | "
                     f"{r['mse'] / r['predicted_mse']:.2f} |")
    lines += ["", "## Distribution estimation: Square Wave + EM/EMS on Beta(5, 2), 1024 buckets", "",
              "Time includes building the exact transition structure. W1 (binned) is the issue's metric: mean over "
              "the 1024 buckets of |F̂ − F| against the empirical histogram; W1 and KS are exact, on the unit domain.",
              "", "| n | ε | method | iterations | converged | time (ms) | W1 (binned) | W1 | KS |",
              "|---:|---:|---|---:|---|---:|---:|---:|---:|"]
    for r in res["distribution"]:
        lines.append(f"| {r['n']:.0e} | {r['epsilon']:g} | {r['method']} | {r['n_iter']} | {r['converged']} | "
                     f"{1000 * r['seconds']:.1f} | {r['w1_binned']:.4f} | {r['w1']:.4f} | {r['ks']:.4f} |")
    lines += ["", "## Peers: randomized response (GRR, k = 2)", "",
              "| library | operation | n | values/s | ldpnum values/s | ldpnum / peer |", "|---|---|---:|---:|---:|---:|"]
    ours = {(r["n"], "privatize"): r["privatize_secure_values_per_s"] for r in res["throughput"]
            if r["mechanism"] == "randomized_response"}
    ours.update({(r["n"], "aggregate+estimate"): r["aggregate_estimate_values_per_s"] for r in res["throughput"]
                 if r["mechanism"] == "randomized_response"})
    for p in res["peers"]:
        if "error" in p and p.get("values_per_second") is None:
            lines.append(f"| {p.get('peer', '?')} | {p.get('operation', '')} | | error: {p['error']} | | |")
            continue
        o = ours.get((p["n"], p["operation"]))
        lines.append(f"| {p['peer']} {p.get('version', '')} | {p['operation']} | {p['n']:.0e} | "
                     f"{fmt(p['values_per_second'])} | {fmt(o)} | {o / p['values_per_second']:.0f}× |"
                     if o else f"| {p['peer']} | {p['operation']} | {p['n']:.0e} | {fmt(p['values_per_second'])} | | |")
    lines += ["", "ldpnum's peer comparison uses its secure default randomness (the peers use unseeded "
              "non-cryptographic generators)."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="1000000,10000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args(argv)
    ns = [int(float(v)) for v in args.n.split(",")]

    res = {"when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "repeats": args.repeats,
           "machine": machine()}
    print("word sources ...", flush=True)
    res["rng"] = measure_fill_rates(n_words=10_000_000, repeats=5)
    for name, src in (("ldpnum secure (rng=None)", resolve_rng(None)), ("ldpnum seeded (rng=int)", resolve_rng(0))):
        t = median_time(lambda: src.draw(10_000_000), 5)
        res["rng"].append({"source": name, "secure": src.secure, "words_per_second": 1e7 / t})
    limit = {"seeded": next(r["words_per_second"] for r in res["rng"] if r["source"] == "ldpnum seeded (rng=int)"),
             "secure": next(r["words_per_second"] for r in res["rng"] if r["source"] == "ldpnum secure (rng=None)")}
    print("compile times ...", flush=True)
    res["compile"] = compile_times()
    res["throughput"] = []
    for n in ns:
        for m in mechanisms():
            print(f"throughput {m.name} n={n:.0e} ...", flush=True)
            r = throughput(m, n, args.repeats)
            r["ratio_seeded_to_limit"] = r["privatize_seeded_values_per_s"] / (limit["seeded"] / m.words_per_record)
            r["ratio_secure_to_limit"] = r["privatize_secure_values_per_s"] / (limit["secure"] / m.words_per_record)
            res["throughput"].append(r)
    print("accuracy ...", flush=True)
    res["accuracy"] = [accuracy(m) for m in mechanisms()]
    print("distribution estimation ...", flush=True)
    res["distribution"] = [distribution(n, eps, method, args.repeats) for n in (100_000, 1_000_000)
                           for eps in (0.5, 1.0, 2.0, 4.0) for method in ("ems", "em")]
    res["peers"] = [] if args.no_peers else peers(ns, args.repeats)

    out = HERE / "results"
    out.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    (out / f"bench-{stamp}.json").write_text(json.dumps(res, indent=2))
    md = markdown(res)
    (out / "latest.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
