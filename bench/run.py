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
   distribution estimation (Square Wave + ems-cv/EMS/EM, 1024 buckets) time, iterations, W1 and KS at n = 1e5,
   1e6; and ``bench/dist_candidates.py``: SW + EMS against the default (ems-cv) and every other lever measured
   (fixed smoothing levels, plain EM, a mean tilt, half the bandwidth) on Beta(5, 2), the flights and a
   log-normal tail, 5 seeds per cell, mean ± SE, with quantile errors and times;
5. the peer libraries (pure-ldp, multi-freq-ldpy, ldp-toolbox) on randomized response, in their own
   virtual environment (they need old pins), with the ratio ours / best peer;
6. frequency oracles (section ``frequency``): privatize and aggregate+estimate values/s of every ldpnum oracle
   (GRR, SUE, OUE, BLH, OLH, Hadamard response, and PI-RAPPOR / subset selection when they import) at
   k = 16 and 1024 and each n, with bytes per report and estimation error; HierarchicalHistogram users/s
   (privatize, aggregate, aggregate + estimate_ranges with each consistency); range-query MAE of
   HierarchicalHistogram vs SquareWave + EMS on Beta(5, 2) and the embedded flight departure times; and the
   peers' frequency oracles and ldp-hierarchical-mechanism (``run_peers.py --suite frequency,hierarchical``,
   each measurement capped at ``FREQ_PEER_SECONDS`` per run), with the ratio ours / fastest peer.

7. the pandas accessor's overhead over direct mechanism calls (section ``accessor``, ``bench/accessor.py``), the
   command line's streaming estimate over a 1e7-row Parquet file with its peak memory (``cli``,
   ``bench/cli_stream.py``), and Dask scaling on 1 and 2 workers (``scaling``, ``bench/scaling.py``); each of these
   scripts also runs alone.
8. heavy hitters (section ``heavy``, ``bench/heavy.py``): ldpnum's PEM and TreeHist against pure-ldp's PEM,
   TreeHist and SFP on people sampled from the ``wordfreq`` English word list, ε = 2, 4, 8: precision, NCR and
   MAE of the top 20 and top 50, and end-to-end time (n = 1e6; ldpnum also at 1e7).
9. several columns (section ``multi``, ``bench/multi.py``): HDG's 2-D range-query MAE and MSE (volumes 0.1 and
   0.5, ε = 0.5, 1, 2, 4, n = 1e6) on the flights' (dep_time, distance), a correlated pair and an independent
   pair, against one 2-D OLH grid and two independent 1-D Square Wave estimates; privatize people/s; 10,000
   queries.
10. categorical columns (section ``marginals``, ``bench/marginals.py``): 2-way marginal total variation and MAE
   (ε = 0.5, 1, 2, 4, n = 1e6) of ``Marginals`` releasing all pairs, CALM's adaptive choice and the product of
   1-way estimates, on five categorical columns derived from the flights and eight synthetic correlated
   columns; 3-way total variation; privatize people/s, aggregate and estimate time.
11. 1-D range queries (section ``ranges``, ``bench/ranges.py``): MSE and MAE of 1000 random ranges of volume 0.1
   and 0.5 on a Gaussian, a two-Gaussian mixture, a spiky and a heavy-tailed data set (n = 1e6, ε = 0.8, 2,
   domain 1024, 10 collections) for Square Wave + EMS / ems-cv and hierarchical histograms (least-squares,
   non-negative, adaptive); build time and 10,000 answers.
12. repeated collection (section ``longitudinal``, ``bench/longitudinal.py``): ldpnum's longitudinal frequency
   oracles (memoized from client keys) against multi-freq-ldpy's L-GRR, L-OSUE and L-SOUE at n = 1e6, k = 16 and
   1024, ε∞ = 1, 2, 4 over 30 rounds: people/s, server time and MSE per round, and each person's ε after the rounds
   (the ledger's memoized totals) against naive repeated collection.
12b. bootstrap intervals of several columns (section ``bands-multi``, ``bench/bands_multi.py``): coverage of
   95% intervals of HDG's 1-D and 2-D ranges and joint cells on the correlated pair and the flights, and of
   Marginals' 2-way cells on the flights' categorical columns (N = 20,000, B = 100, 100 collections).
13. likelihood-based randomized response (section ``likelihood``, ``bench/likelihood.py``): exact coverage (by
   enumeration over the count) and width of the likelihood-ratio interval of ``estimate_mean(method="mle")``
   against the default Wald-type interval, n ∈ {20, 50, 200, 10^4}, p ∈ {0.01, 0.1, 0.5}, ε ∈ {0.5, 1, 2};
   GRR's profile-likelihood intervals against Wald by simulation (k = 3).
14. huge domains (section ``huge-domains``, ``bench/huge_domains.py``): k = 3,307,948, ε = 5, n = 1e4 and 1e6 (the
   setting of Feldman et al.'s projective geometry response): client people/s, the collector's aggregate (and its
   reports/s per core) and decode times, and MSE against the closed form of ldpnum's count-mean sketches (CMS,
   HCMS), Hadamard response, PI-RAPPOR, subset selection, PGR and hybrid PGR, next to pure-ldp's CMS and HCMS and
   the published C++ collector times; then the CMS client alone (n = 1e6, ε = 4: its two layouts of the other bits
   and HCMS, seeded and secure, CPU µs and words per person, against pure-ldp's clients; ``bench/cms_client.py``
   runs that table alone).
15. adaptive two-round collection (section ``adaptive``, ``bench/adaptive.py``): ``AdaptiveDistribution`` (a 20% Square
   Wave pilot, a warped second round when the pilot calls for it) against one round of SW + ems-cv on spiky,
   heavy-tailed and smooth data, n = 1e6, ε = 0.5, 1, 2, 4, 5 collections: W1, KS and range-query MSE as ratios,
   time per round.
16. items longer than 8 bytes (section ``long-items``, ``bench/long_items.py``): people/s of CMS, HCMS, RAPPOR, PEM
   and TreeHist at item_bits = 64 and 256 on the same people (n = 1e6, ε = 4), the encoding's share apart, the
   levels of the prefix protocols and the collector's time.
17. a billion reports on Dask (section ``scale-dask``, ``bench/scale_dask.py``): 10^7, 10^8 and 10^9 Square Wave
   reports (ε = 1, 1024 cells) privatized and aggregated on a ``dask.distributed`` cluster of 2 worker processes,
   values generated per partition, merged and estimated on the driver: wall time, reports/s per core, the estimate's
   time, peak memory of each worker and of the driver, next to one process (docs/scaling.md's table). ``--quick``
   runs its smallest n only.

Medians of ``--repeats`` runs (default 3). ``--only SECTIONS`` (comma list of rng, compile, mean, accuracy,
distribution, peers, frequency, accessor, cli, scaling, heavy, setvalued, bands, bands-multi, multi, marginals,
ranges, longitudinal, likelihood, huge-domains, adaptive, long-items, scale-dask) runs some
sections alone; ``--quick`` runs the sections that have a quick form (``scale-dask``) in it, and writes its
markdown apart (``latest-<sections>-quick.md``). Writes ``bench/results/bench-<timestamp>.json`` and
``bench/results/latest.md`` (a partial run: ``latest-<sections>.md``), and prints the markdown.
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

if Path(ldp.__file__).resolve().parents[1] != HERE.parent:  # an installed ldpnum, not this checkout's code
    print(f"warning: measuring the ldpnum at {Path(ldp.__file__).resolve().parent}, not this checkout's "
          f"({HERE.parent / 'ldpnum'}); run with PYTHONPATH={HERE.parent} to measure the checkout",
          file=sys.stderr, flush=True)
from ldpnum._random import BLOCK_WORDS, resolve_rng  # noqa: E402
from rng_fill import measure_fill_rates  # noqa: E402

sys.path.insert(0, str(HERE / "peers"))
from run_peers import zipf_codes  # noqa: E402  (stdlib + NumPy only: shared with the peers' side)

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
            "numpy": np.__version__, "numba": numba.__version__, "ldpnum": ldp.__version__,
            "ldpnum_path": str(Path(ldp.__file__).resolve().parent)}


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


# -- frequency oracles and hierarchical histograms ------------------------------------------------------

FREQ_KS = (16, 1024)
#: Per-run time budget of a peer measurement in the frequency section (run_peers.py --max-seconds).
FREQ_PEER_SECONDS = 1.0
#: ldpnum's own per-run budget: a privatize run projected longer is measured at a smaller n (said in the table).
FREQ_OUR_SECONDS = 8.0
#: ldpnum oracle name -> the label the peers' records use.
FREQ_LABELS = {"grr": "GRR", "sue": "SUE", "oue": "OUE", "blh": "BLH", "olh": "OLH",
               "hadamard_response": "HR", "pi_rappor": "PI-RAPPOR", "subset_selection": "SS"}
UNARY = ("SUE", "OUE")
#: Oracles only a peer ships (no ldpnum counterpart): shown for completeness.
PEER_ONLY = {"HM": "pure-ldp's Hadamard mechanism", "SS": "subset selection"}
HH_LEAVES = 1024
#: HierarchicalHistogram level oracles benchmarked: GRR on every level (the offset layout, an O(n) server) and
#: the default choice rule (OLH where the seed's rule prefers it: better ranges, an O(n·k) server).
HH_ORACLES = ("grr", "auto")
RANGE_EPSILONS = (0.5, 1.0, 2.0, 4.0)
RANGE_WIDTH = 0.1
RANGE_QUERIES = 1000


def frequency_oracles(k):
    """Every ldpnum frequency oracle at ε = EPSILON and k, and a note on the optional ones left out."""
    out = [ldp.GRR(EPSILON, k), ldp.SUE(EPSILON, k), ldp.OUE(EPSILON, k), ldp.BLH(EPSILON, k),
           ldp.OLH(EPSILON, k), ldp.HadamardResponse(EPSILON, k)]
    notes = []
    out += [ldp.PIRappor(EPSILON, k), ldp.SubsetSelection(EPSILON, k)]
    return out, notes


def mem_available():
    """MemAvailable from /proc/meminfo in bytes (None when unknown)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def timed_runs(fn, repeats):
    """Median wall time of ``repeats`` calls and the last result (each result is dropped before the next
    call, so at most one is alive: the 1.3 GB of unary reports at k = 1024, n = 1e7 are held once)."""
    times, out = [], None
    for _ in range(repeats):
        out = None
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def frequency_throughput(m, x, n, repeats, secure_limit, cache):
    """privatize (secure default) and aggregate+estimate values/s of oracle ``m`` on the first n codes.

    n is lowered to 1e6 when 2 copies of the reports would not fit in the available memory, or to the largest
    power of ten whose privatize run is projected (from a 1e5 pilot) to fit FREQ_OUR_SECONDS; the record says
    so. ``cache`` maps (oracle, k, n timed) to records already measured, reused for a larger requested n.
    """
    k = m.k
    warm = x[:1000]
    m.estimate_frequencies(m.aggregate(m.privatize(warm)))  # compiled / loaded from cache before timing
    bytes_per = m.privatize(warm, rng=0).codes.nbytes / warm.size
    pilot = x[:min(n, 100_000)]
    t0 = time.perf_counter()
    m.privatize(pilot)
    per_value = (time.perf_counter() - t0) / pilot.size
    n_used, cap_note = n, ""
    avail = mem_available()
    if avail is not None and 2 * n * bytes_per + (1 << 30) > avail:
        n_used = min(n, 1_000_000)
        cap_note = (f"n={n:.0e} needs {n * bytes_per / 1e9:.1f} GB of reports, {avail / 1e9:.1f} GB available: "
                    f"measured n={n_used:.0e}")
    elif n * per_value > FREQ_OUR_SECONDS:
        n_used = next((c for c in (10 ** e for e in range(7, 4, -1)) if c < n and c * per_value <= FREQ_OUR_SECONDS),
                      min(n, 100_000))
        cap_note = (f"privatize at n={n:.0e} projected {n * per_value:.0f} s per run (> {FREQ_OUR_SECONDS:g} s): "
                    f"measured n={n_used:.0e}")
    key = (m.name, k, n_used)
    if key in cache:
        return dict(cache[key], n_requested=n, cap_note=cap_note)
    xs = x[:n_used]
    true = np.bincount(xs, minlength=k) / n_used
    m.privatize(xs)  # one untimed run at this n: the allocator and the thread pools reach their steady state
    t_priv, reports = timed_runs(lambda: m.privatize(xs), repeats)
    report_bytes = reports.codes.nbytes / n_used
    t_est, est = timed_runs(lambda: m.estimate_frequencies(m.aggregate(reports)), repeats)
    reports = None  # free the reports (1.3 GB for unary encodings at k = 1024, n = 1e7) before the next run
    err = est.frequencies - true
    words = m.words_per_record
    cache[key] = {
        "oracle": FREQ_LABELS.get(m.name, m.name), "name": m.name, "k": k, "n_requested": n, "n": n_used,
        "cap_note": cap_note, "epsilon": m.epsilon, "words_per_record": words,
        "privatize_values_per_s": n_used / t_priv, "aggregate_estimate_values_per_s": n_used / t_est,
        "ratio_to_secure_limit": (n_used / t_priv) / (secure_limit / words) if secure_limit else None,
        "report_bytes_per_value": report_bytes,
        "max_abs_error": float(np.max(np.abs(err))), "rms_error": float(np.sqrt(np.mean(err ** 2)))}
    return cache[key]


def hierarchical_throughput(n, repeats, oracle):
    """HierarchicalHistogram users/s on Beta(5, 2) values: privatize, aggregate, and aggregate +
    estimate_ranges with each consistency."""
    hh = ldp.HierarchicalHistogram(EPSILON, (0.0, 1.0), n_leaves=HH_LEAVES, oracle=oracle)
    x = np.random.default_rng(0).beta(5, 2, n)
    warm = hh.privatize(x[:1000])
    for c in ("least-squares", "nonnegative"):
        hh.estimate_ranges(hh.aggregate(warm), consistency=c)
    t_priv, reports = timed_runs(lambda: hh.privatize(x), repeats)
    t_agg, _ = timed_runs(lambda: hh.aggregate(reports), repeats)
    out = {"n": n, "oracle": oracle, "epsilon": EPSILON, "n_leaves": hh.n_leaves, "branching": hh.branching,
           "level_oracles": list(hh.oracle_names), "report_bytes_per_value": reports.codes.nbytes / n,
           "privatize_users_per_s": n / t_priv, "aggregate_users_per_s": n / t_agg,
           "privatize_aggregate_users_per_s": n / (t_priv + t_agg)}
    for c in ("least-squares", "nonnegative"):
        t, est = timed_runs(lambda c=c: hh.estimate_ranges(hh.aggregate(reports), consistency=c), repeats)
        key = c.replace("-", "_")
        out[f"aggregate_estimate_{key}_users_per_s"] = n / t
        out[f"{key}_n_iter"] = est.n_iter
        out[f"{key}_solver"] = est.solver
    return out


def range_datasets():
    from ldpnum.data import dep_time_minutes, load_flights

    minutes = dep_time_minutes(load_flights("dep_time")["dep_time"].to_numpy())
    minutes = minutes[~np.isnan(minutes)]
    return [("Beta(5, 2)", (0.0, 1.0), np.random.default_rng(21).beta(5, 2, 100_000)),
            ("flights dep_time (minutes)", (0.0, 1440.0), minutes)]


def range_queries(bounds, seed=0):
    """RANGE_QUERIES ranges of width RANGE_WIDTH of the domain, starts uniform (metrics.range_query_error's
    own rule, drawn here so that the least-squares tree, which is not a distribution, faces the same ones)."""
    lo, hi = bounds
    span = RANGE_WIDTH * (hi - lo)
    a = lo + np.random.default_rng(seed).random(RANGE_QUERIES) * (hi - lo - span)
    return np.column_stack([a, np.minimum(a + span, hi)])


def range_accuracy():
    """Range-query MAE: HierarchicalHistogram (nonnegative and least-squares) vs SquareWave + EMS."""
    from ldpnum import metrics

    out = []
    for name, bounds, x in range_datasets():
        q = range_queries(bounds)
        srt = np.sort(x)
        true = (np.searchsorted(srt, q[:, 1], side="right") - np.searchsorted(srt, q[:, 0], side="left")) / x.size
        for eps in RANGE_EPSILONS:
            sw = ldp.SquareWave(eps, bounds)
            swd = sw.estimate_distribution(sw.aggregate(sw.privatize(x, rng=22)))
            row = {"data": name, "n": int(x.size), "epsilon": eps,
                   "square_wave_ems_mae": metrics.range_query_error(swd, x, queries=q),
                   "square_wave_bins": int(len(swd.bin_edges) - 1)}
            for oracle in HH_ORACLES:
                hh = ldp.HierarchicalHistogram(eps, bounds, n_leaves=HH_LEAVES, oracle=oracle)
                agg = hh.aggregate(hh.privatize(x, rng=22))
                nn = hh.estimate_ranges(agg, consistency="nonnegative")
                ls = hh.estimate_ranges(agg, consistency="least-squares")
                row[f"hh_{oracle}_levels"] = ",".join(hh.oracle_names)
                row[f"hh_{oracle}_nonnegative_mae"] = metrics.range_query_error(nn.to_distribution(), x, queries=q)
                row[f"hh_{oracle}_least_squares_mae"] = float(np.mean(np.abs(ls.range(q[:, 0], q[:, 1]) - true)))
            out.append(row)
    return out


def frequency_peers(ns, repeats):
    venv_py = HERE / ".peers-venv" / "bin" / "python"
    if not venv_py.exists():
        return [{"error": "bench/.peers-venv missing: run bash bench/peers/setup_venv.sh"}]
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [str(venv_py), str(HERE / "peers" / "run_peers.py"), "--suite", "frequency,hierarchical",
               "--n", ",".join(str(n) for n in ns), "--k", ",".join(str(k) for k in FREQ_KS),
               "--epsilon", str(EPSILON), "--repeats", str(repeats), "--max-seconds", str(FREQ_PEER_SECONDS),
               "--json", f.name, "--quiet"]
        subprocess.run(cmd, check=True)
        return json.load(open(f.name))


def frequency_section(ns, repeats, with_peers, secure_limit):
    res = {"throughput": [], "notes": []}
    for k in FREQ_KS:
        x = zipf_codes(max(ns), k, seed=0)
        oracles, notes = frequency_oracles(k)
        for note in notes:
            if note not in res["notes"]:
                res["notes"].append(note)
        cache = {}
        for m in oracles:
            for n in sorted(ns):
                print(f"frequency {m.name} k={k} n={n:.0e} ...", flush=True)
                res["throughput"].append(frequency_throughput(m, x, n, repeats, secure_limit, cache))
        del x
    res["hierarchical"] = []
    for n in ns:
        print(f"hierarchical histogram n={n:.0e} ...", flush=True)
        for oracle in HH_ORACLES:
            res["hierarchical"].append(hierarchical_throughput(n, repeats, oracle))
    print("range-query accuracy ...", flush=True)
    res["range_accuracy"] = range_accuracy()
    if with_peers:
        print("frequency peers ...", flush=True)
        res["peers"] = frequency_peers(ns, repeats)
    else:
        res["peers"] = []
    return res


def _fmt_rate(v):
    if v is None:
        return "–"
    if v >= 1e6:
        return f"{v / 1e6:.3g} M"
    if v >= 1e3:
        return f"{v / 1e3:.3g} k"
    return f"{v:.3g}"


def _best_peer(records):
    ok = [r for r in records if r.get("values_per_second")]
    return max(ok, key=lambda r: r["values_per_second"]) if ok else None


def _dedupe(records, key):
    seen, out = set(), []
    for r in records:
        kk = key(r)
        if kk not in seen:
            seen.add(kk)
            out.append(r)
    return out


def markdown_frequency(fr, repeats):
    peers = [p for p in fr["peers"] if p.get("suite") == "frequency"]
    hh_peers = [p for p in fr["peers"] if p.get("suite") == "hierarchical"]
    missing = [p for p in fr["peers"] if "suite" not in p and "error" in p]
    lines = ["## Frequency oracles (ε = 1, Zipf(1.1) codes)", "",
             f"ldpnum: secure default randomness, medians of {repeats} runs after compilation and one untimed run at the same n; errors are those of "
             "the unbiased estimate (no post-processing) against the true frequencies. Ratio to AES limit: values/s "
             "over (secure words/s ÷ words per record).", "",
             "| oracle | k | n | B/report | words/rec | privatize | ratio to AES limit | aggregate+estimate | "
             "max abs error | RMS error |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in fr["throughput"]:
        n = f"{r['n']:.0e}" if not r["cap_note"] else f"{r['n']:.0e} (asked {r['n_requested']:.0e})"
        ratio = "–" if r["ratio_to_secure_limit"] is None else f"{r['ratio_to_secure_limit']:.2f}"
        lines.append(f"| {r['oracle']} | {r['k']} | {n} | {r['report_bytes_per_value']:g} | {r['words_per_record']} "
                     f"| {_fmt_rate(r['privatize_values_per_s'])} | {ratio} "
                     f"| {_fmt_rate(r['aggregate_estimate_values_per_s'])} | {r['max_abs_error']:.4f} "
                     f"| {r['rms_error']:.5f} |")
    for note in fr["notes"]:
        lines += ["", note]
    for r in fr["throughput"]:
        if r["cap_note"]:
            lines += ["", f"{r['oracle']} k={r['k']}: {r['cap_note']}."]

    lines += ["", "### ldpnum vs the fastest peer", "",
              "Peers run their per-user clients in a list comprehension (their natural API) and are timed on a "
              f"subset sized to ≤ {FREQ_PEER_SECONDS:g} s per run (n timed). Targets from issue 4: ≥ 100× the "
              "fastest peer, ≥ 20× for the unary encodings (printed, not asserted).", "",
              "| oracle | k | n | operation | ldpnum values/s | best peer values/s | best peer (n timed) | "
              "ours / best | target |", "|---|---:|---:|---|---:|---:|---|---:|---:|"]
    ours = {(r["oracle"], r["k"], r["n_requested"]): r for r in fr["throughput"]}
    keys = list(ours)
    for label in sorted({p["mechanism"] for p in peers if p.get("mechanism")} - {o for o, _, _ in keys}):
        keys += [(label, k, n) for k in FREQ_KS for n in sorted({p["n_requested"] for p in peers
                                                                   if "n_requested" in p})]
    for oracle, k, n in keys:
        for op, field in (("privatize", "privatize_values_per_s"),
                          ("aggregate+estimate", "aggregate_estimate_values_per_s")):
            mine = ours.get((oracle, k, n))
            o = mine[field] if mine else None
            best = _best_peer([p for p in peers if p.get("mechanism") == oracle and p.get("k") == k
                               and p.get("operation") == op and p.get("n_requested") == n])
            target = 20 if oracle in UNARY else 100
            b = best["values_per_second"] if best else None
            ratio = f"{o / b:,.0f}×" if (o and b) else "–"
            who = f"{best['peer']} (n={best['n']:.0e})" if best else "–"
            n_txt = f"{n:.0e}" if not (mine and mine["cap_note"]) else f"{n:.0e} (timed {mine['n']:.0e})"
            tgt = f"≥ {target}×" if mine else PEER_ONLY.get(oracle, "no ldpnum oracle")
            lines.append(f"| {oracle} | {k} | {n_txt} | {op} | {_fmt_rate(o)} | {_fmt_rate(b)} | {who} | {ratio} "
                         f"| {tgt} |")

    lines += ["", "### Peer measurements", "",
              "One row per measurement (a measurement at a capped n serves every requested n above it). "
              "Payload: bytes of data per report as the peer keeps it (unary reports: one float64 or int64 per "
              "bit). Errors: of the peer's own estimator (MI = unbiased, clipped at 0 and renormalised, for "
              "multi-freq-ldpy and ldp-toolbox; unbiased counts for pure-ldp) on the n users estimated.", "",
              "| peer | oracle | k | operation | n timed | values/s | payload B/report | max abs error | RMS error |",
              "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for p in _dedupe(peers + missing, lambda r: (r.get("peer"), r.get("mechanism"), r.get("k"),
                                                 r.get("operation"), r.get("n"), r.get("error"))):
        if "error" in p:
            lines.append(f"| {p.get('peer', '?')} | {p.get('mechanism') or '–'} | {p.get('k') or ''} | "
                         f"error: {p['error']} | | | | | |")
            continue
        err = ("", "") if p["abs_error"] is None else (f"{p['abs_error']:.4f}", f"{p['rms_error']:.5f}")
        pay = "?" if p["report_payload_bytes"] != p["report_payload_bytes"] else f"{p['report_payload_bytes']:g}"
        lines.append(f"| {p['peer']} {p['version']} | {p['mechanism']} | {p['k']} | {p['operation']} | "
                     f"{p['n']:.0e} | {_fmt_rate(p['values_per_second'])} | {pay} | {err[0]} | {err[1]} |")

    lines += ["", "## Hierarchical histogram (ε = 1, Beta(5, 2), 1024 leaves)", "",
              "| n | oracle= | branching | level oracles | B/report | privatize | aggregate | aggregate+estimate "
              "(least-squares) | aggregate+estimate (nonnegative) | nonnegative iterations (solver) |",
              "|---:|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in fr["hierarchical"]:
        lines.append(f"| {r['n']:.0e} | {r.get('oracle', 'auto')} | {r['branching']} | {','.join(r['level_oracles'])} | "
                     f"{r['report_bytes_per_value']:g} | {_fmt_rate(r['privatize_users_per_s'])} | "
                     f"{_fmt_rate(r['aggregate_users_per_s'])} | "
                     f"{_fmt_rate(r['aggregate_estimate_least_squares_users_per_s'])} | "
                     f"{_fmt_rate(r['aggregate_estimate_nonnegative_users_per_s'])} | "
                     f"{r['nonnegative_n_iter']} ({r['nonnegative_solver']}) |")
    lines += ["", "ldp-hierarchical-mechanism (`Private_TreeBary`, 1024 integer leaves, branching 4) privatizes and "
              "aggregates in one per-user loop (`update_tree`), compared with ldpnum's privatize + aggregate "
              "(n / (t_privatize + t_aggregate)); its estimate, `compute_attributes()` + `post_process()`, costs "
              "about the same at any n. Range MAE and answer / truth (median over ranges holding > 1 % of the "
              "users): its `get_range_query(a, b, normalized=True)` on 1000 ranges of width 0.1, at the n timed. "
              "Like with like: its direct encoding against ldpnum's GRR levels (`oracle=\"grr\"`), its other modes "
              "against the default (`oracle=\"auto\"`, OLH levels where the choice rule prefers them).", "",
              "| n | ldpnum oracle= | ldpnum users/s | peer mode | ε per person | n timed | peer users/s | ours / peer | "
              "peer estimate (s) | peer range MAE | peer answer / truth |",
              "|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    ours_hh = {(r["n"], r.get("oracle", "auto")): r for r in fr["hierarchical"]}
    for p in hh_peers:
        if "error" in p:
            lines.append(f"| | | | {p.get('mode') or p.get('peer')} | | | error: {p['error']} | | | | |")
            continue
        if p["operation"] != "privatize+aggregate":
            continue
        est = next((q for q in hh_peers if "error" not in q and q["operation"] == "estimate"
                    and q["mode"] == p["mode"] and q["n_requested"] == p["n_requested"]), None)
        oracle = "grr" if str(p["mode"]).startswith("direct") else "auto"
        mine = ours_hh.get((p["n_requested"], oracle))
        o = mine["privatize_aggregate_users_per_s"] if mine else None
        ratio = f"{o / p['values_per_second']:,.0f}×" if o else "–"
        est_s = f"{est['median_seconds']:.3g}" if est else "–"
        lines.append(f"| {p['n_requested']:.0e} | {oracle} | {_fmt_rate(o)} | {p['mode']} | {p['epsilon_per_person']:g} | "
                     f"{p['n']:.0e} | {_fmt_rate(p['values_per_second'])} | {ratio} | {est_s} | "
                     f"{p['range_mae']:.3g} | {p['answer_scale_normalized']:.3g} |")

    lines += ["", "## Range-query MAE: HierarchicalHistogram vs SquareWave + EMS", "",
              f"{RANGE_QUERIES} ranges of width {RANGE_WIDTH:g} of the domain (seed 0), "
              "`ldpnum.metrics.range_query_error` (least-squares: the same queries, computed directly since the "
              "tree is not a distribution). 1024 leaves; SquareWave default buckets. HH with GRR on every level "
              "(`oracle=\"grr\"`) and with the default rule (`oracle=\"auto\"`, its levels listed).", "",
              "| data | n | ε | HH grr nonnegative | HH grr least-squares | HH auto levels | HH auto nonnegative "
              "| HH auto least-squares | SquareWave+EMS | best |",
              "|---|---:|---:|---:|---:|---|---:|---:|---:|---|"]
    for r in fr["range_accuracy"]:
        cands = {f"HH {o} {c}": r[f"hh_{o}_{c.replace('-', '_')}_mae"] for o in HH_ORACLES
                 for c in ("nonnegative", "least-squares")}
        cands["SquareWave+EMS"] = r["square_wave_ems_mae"]
        lines.append(f"| {r['data']} | {r['n']:,} | {r['epsilon']:g} | {r['hh_grr_nonnegative_mae']:.4f} | "
                     f"{r['hh_grr_least_squares_mae']:.4f} | {r['hh_auto_levels']} | {r['hh_auto_nonnegative_mae']:.4f} | "
                     f"{r['hh_auto_least_squares_mae']:.4f} | {r['square_wave_ems_mae']:.4f} | "
                     f"{min(cands, key=cands.get)} |")
    return lines


def fmt(v, digits=3):
    if v is None:
        return "–"
    if abs(v) >= 1e6:
        return f"{v / 1e6:.1f} M"
    return f"{v:.{digits}g}"


def markdown(res):
    lines = [f"# ldpnum benchmark ({res['when']})", "",
             "Machine: " + ", ".join(f"{k} {v}" for k, v in res["machine"].items() if k != "ldpnum_path"), "",
             f"ε = {EPSILON}; medians of {res['repeats']} runs; values/s; compile time excluded (see below).",
             f"Sections: {', '.join(res['sections'])}."
             + (" Quick run (--quick): a check of the set-up, not the section's figures." if res.get("quick") else "")]
    if "rng" in res:
        lines += ["", "## Word sources (the machine's limit)", "",
                  "The ldpnum rows draw as `privatize` does, in blocks of 2**18 words (each freed before the next); "
                  "the others fill one array of 1e7 words, which also times the first touch of 80 MB.", "",
                  "| source | secure | M words/s |", "|---|---|---:|"]
        for r in res["rng"]:
            lines.append(f"| {r['source']} | {'yes' if r['secure'] else 'no'} | {r['words_per_second'] / 1e6:.0f} |")
    if "throughput" in res:
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
    if "compile" in res:
        lines += ["", "## Compile time (fresh process, empty Numba cache)", "",
                  "| what | seconds |", "|---|---:|"]
        for k, v in res["compile"].items():
            lines.append(f"| {k} | {v:.2f} |")
    if "accuracy" in res:
        lines += ["", "## Accuracy of the mean (n = 1e6, 50 collections)", "",
                  "| mechanism | MSE | predicted MSE (closed form) | ratio |", "|---|---:|---:|---:|"]
        for r in res["accuracy"]:
            lines.append(f"| {r['mechanism']} | {r['mse']:.3g} | {r['predicted_mse']:.3g} | "
                         f"{r['mse'] / r['predicted_mse']:.2f} |")
    if "distribution" in res:
        lines += ["", "## Distribution estimation: Square Wave + EM/EMS on Beta(5, 2), 1024 buckets", "",
                  "One sample and one privatization (seeds 11, 12). ems-cv (the default of estimate_distribution): "
                  "EMS with its smoothing strength chosen by held-out likelihood on a binomial thinning of the "
                  "counts; ems: Li et al.'s EMS; em: plain EM; iterations of ems-cv count its half fits too. "
                  "Time includes building the exact transition structure. W1 (binned) is the issue's metric: mean "
                  "over the 1024 buckets of |F̂ − F| against the empirical histogram; W1 and KS are exact, on the "
                  "unit domain.", "", "| n | ε | method | iterations | converged | time (ms) | W1 (binned) | W1 | KS |",
                  "|---:|---:|---|---:|---|---:|---:|---:|---:|"]
        for r in res["distribution"]:
            lines.append(f"| {r['n']:.0e} | {r['epsilon']:g} | {r['method']} | {r['n_iter']} | {r['converged']} | "
                         f"{1000 * r['seconds']:.1f} | {r['w1_binned']:.4f} | {r['w1']:.4f} | {r['ks']:.4f} |")
    if "distribution_candidates" in res:
        lines += ["", res["distribution_candidates"]["markdown"].rstrip()]
    if "peers" in res:
        lines += ["", "## Peers: randomized response (GRR, k = 2)", "",
                  "| library | operation | n | values/s | ldpnum values/s | ldpnum / peer |",
                  "|---|---|---:|---:|---:|---:|"]
        ours = {(r["n"], "privatize"): r["privatize_secure_values_per_s"] for r in res.get("throughput", [])
                if r["mechanism"] == "randomized_response"}
        ours.update({(r["n"], "aggregate+estimate"): r["aggregate_estimate_values_per_s"]
                     for r in res.get("throughput", []) if r["mechanism"] == "randomized_response"})
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
    if "frequency" in res:
        lines += [""] + markdown_frequency(res["frequency"], res["repeats"])
    for name in EXTERNAL_SECTIONS:
        if name in res:
            lines += ["", res[name]["markdown"].rstrip()]
    return "\n".join(lines) + "\n"


#: Sections implemented in their own scripts (bench/<module>.py, each runnable alone): a ``run()`` returning
#: ``(records, markdown)``.
EXTERNAL_SECTIONS = {"accessor": "accessor", "cli": "cli_stream", "scaling": "scaling", "heavy": "heavy",
                     "setvalued": "setvalued", "vectors": "vectors", "bands": "bands", "bands-multi": "bands_multi",
                     "multi": "multi",
                     "marginals": "marginals", "ranges": "ranges", "recommend": "recommend",
                     "longitudinal": "longitudinal", "likelihood": "likelihood", "huge-domains": "huge_domains",
                     "adaptive": "adaptive", "long-items": "long_items", "scale-dask": "scale_dask"}


def external_section(name, repeats, with_peers=True, quick=False):
    """Run bench/<module>.py's ``run`` for section ``name``; an error is recorded, not raised."""
    import importlib
    import inspect

    t0 = time.perf_counter()
    try:
        module = importlib.import_module(EXTERNAL_SECTIONS[name])
        params = inspect.signature(module.run).parameters
        kwargs = {"repeats": repeats} if "repeats" in params else {}
        if "with_peers" in params:
            kwargs["with_peers"] = with_peers
        if quick and "quick" in params:
            kwargs["quick"] = True
        records, md = module.run(**kwargs)
    except Exception as exc:  # one broken section must not lose the others' figures
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        records, md = [], f"## {name}\n\nfailed: {exc!r} at {Path(frame.filename).name}:{frame.lineno}\n"
    return {"records": records, "markdown": md, "seconds": time.perf_counter() - t0}


SECTIONS = ("rng", "compile", "mean", "accuracy", "distribution", "peers", "frequency", "accessor", "cli", "scaling",
            "heavy", "setvalued", "vectors", "bands", "bands-multi", "multi", "marginals", "ranges", "recommend",
            "longitudinal", "likelihood", "huge-domains", "adaptive", "long-items", "scale-dask")
SECTION_HELP = {"rng": "word-source fill rates", "compile": "JIT compile times", "mean": "mean-oracle throughput",
                "accuracy": "mean-estimate MSE", "distribution": "Square Wave EM/EMS/ems-cv, and estimators side by side "
                "(bench/dist_candidates.py)",
                "peers": "peers on randomized response", "frequency": "frequency oracles, hierarchical histogram, "
                "range-query MAE and their peers", "accessor": "pandas accessor overhead (bench/accessor.py)",
                "cli": "command-line streaming estimate (bench/cli_stream.py)",
                "scaling": "Dask scaling, 1 and 2 workers (bench/scaling.py)",
                "heavy": "heavy hitters on English words vs pure-ldp (bench/heavy.py)",
                "setvalued": "SVIM/SVSM frequent items and itemsets vs the truth (bench/setvalued.py)",
                "vectors": "PrivHS/PrivUnit/PrivUnitG/SQKR mean of unit vectors, error and speed (bench/vectors.py)",
                "bands": "coverage of bootstrap intervals of distributions, quantiles, ranges (bench/bands.py)",
                "bands-multi": "coverage of bootstrap intervals of HDG ranges and joint cells and of Marginals' cells "
                "(bench/bands_multi.py)",
                "multi": "HDG 2-D range queries vs one 2-D OLH grid and independent 1-D SW (bench/multi.py)",
                "marginals": "2-way marginals of categorical columns: all pairs, CALM, 1-way product "
                "(bench/marginals.py)",
                "ranges": "1-D range queries: SW + EMS/ems-cv vs fixed and adaptive hierarchical histograms "
                "(bench/ranges.py)",
                "recommend": "ldp.recommend's predicted errors next to the measured ones on the flights "
                "(bench/recommend.py)",
                "longitudinal": "repeated collection: longitudinal oracles vs multi-freq-ldpy, epsilon per person "
                "with memoization vs naive (bench/longitudinal.py)",
                "likelihood": "randomized response: coverage of likelihood-ratio vs Wald intervals (bench/likelihood.py)",
                "huge-domains": "k = 3,307,948, eps = 5: count-mean sketches, Hadamard response, PI-RAPPOR, subset "
                "selection, PGR vs pure-ldp's CMS/HCMS and the published C++ times; the CMS client alone at eps = 4 "
                "(bench/huge_domains.py)",
                "adaptive": "two-round adaptive distribution collection vs one round of SW + ems-cv "
                "(bench/adaptive.py)",
                "long-items": "people/s at item_bits 64 and 256: CMS, HCMS, RAPPOR, PEM, TreeHist (bench/long_items.py)",
                "scale-dask": "10^7, 10^8 and 10^9 reports end to end on dask.distributed, 2 worker processes "
                "(bench/scale_dask.py)"}


def block_fill_rate(rng, total=10_000_000):
    """Words/s of ldpnum's source for ``rng`` drawn as ``privatize`` draws them: blocks of ``BLOCK_WORDS``,
    each freed before the next (one draw of 1e7 words would mostly time the first touch of 80 MB)."""
    src = resolve_rng(rng)
    sizes = [BLOCK_WORDS] * (total // BLOCK_WORDS)

    def run():
        for m in sizes:
            src.draw(m)
    return BLOCK_WORDS * len(sizes) / median_time(run, 5)


def word_limits(res):
    """Secure and seeded words/s of ldpnum's own sources (from the rng section when it ran)."""
    rates = {r["source"]: r["words_per_second"] for r in res.get("rng", [])}
    out = {}
    for key, name, rng in (("seeded", "ldpnum seeded (rng=int)", 0), ("secure", "ldpnum secure (rng=None)", None)):
        if name not in rates:
            rates[name] = block_fill_rate(rng)
        out[key] = rates[name]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="1000000,10000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true", help="skip the peer libraries in every section")
    ap.add_argument("--quick", action="store_true",
                    help="a check of the set-up: sections with a quick form run it (scale-dask: its smallest n only)")
    ap.add_argument("--only", default=",".join(SECTIONS), metavar="SECTIONS",
                    help="comma list of sections to run (default: all): "
                         + "; ".join(f"{k}: {v}" for k, v in SECTION_HELP.items()))
    args = ap.parse_args(argv)
    ns = [int(float(v)) for v in args.n.split(",")]
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown or not sections:
        ap.error(f"--only: unknown section(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(SECTIONS)}")
    full = set(sections) == set(SECTIONS)
    if args.no_peers:
        sections = [s for s in sections if s != "peers"]

    res = {"when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "repeats": args.repeats,
           "sections": sections, "quick": args.quick, "machine": machine()}
    if "rng" in sections:
        print("word sources ...", flush=True)
        res["rng"] = measure_fill_rates(n_words=10_000_000, repeats=5)
        for name, rng in (("ldpnum secure (rng=None)", None), ("ldpnum seeded (rng=int)", 0)):
            res["rng"].append({"source": name, "secure": rng is None, "words_per_second": block_fill_rate(rng)})
    if "compile" in sections:
        print("compile times ...", flush=True)
        res["compile"] = compile_times()
    if "mean" in sections:
        limit = word_limits(res)
        res["throughput"] = []
        for n in ns:
            for m in mechanisms():
                print(f"throughput {m.name} n={n:.0e} ...", flush=True)
                r = throughput(m, n, args.repeats)
                r["ratio_seeded_to_limit"] = r["privatize_seeded_values_per_s"] / (limit["seeded"] / m.words_per_record)
                r["ratio_secure_to_limit"] = r["privatize_secure_values_per_s"] / (limit["secure"] / m.words_per_record)
                res["throughput"].append(r)
    if "accuracy" in sections:
        print("accuracy ...", flush=True)
        res["accuracy"] = [accuracy(m) for m in mechanisms()]
    if "distribution" in sections:
        print("distribution estimation ...", flush=True)
        res["distribution"] = [distribution(n, eps, method, args.repeats) for n in (100_000, 1_000_000)
                               for eps in (0.5, 1.0, 2.0, 4.0) for method in ("ems-cv", "ems", "em")]
        print("distribution estimators side by side (bench/dist_candidates.py) ...", flush=True)
        import dist_candidates

        t0 = time.perf_counter()
        records, md = dist_candidates.run()
        res["distribution_candidates"] = {"records": records, "markdown": md,
                                          "seconds": time.perf_counter() - t0}
    if "peers" in sections:
        res["peers"] = peers(ns, args.repeats)
    if "frequency" in sections:
        t0 = time.perf_counter()
        res["frequency"] = frequency_section(ns, args.repeats, not args.no_peers, word_limits(res)["secure"])
        res["frequency"]["seconds"] = time.perf_counter() - t0
    for name in EXTERNAL_SECTIONS:
        if name in sections:
            print(f"{name} ...", flush=True)
            res[name] = external_section(name, args.repeats, not args.no_peers, args.quick)

    out = HERE / "results"
    out.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    (out / f"bench-{stamp}.json").write_text(json.dumps(res, indent=2))
    md = markdown(res)
    # A partial run (--only) leaves the full run's latest.md alone, a quick one every full section's.
    name = "latest" if full else f"latest-{'+'.join(sections)}"
    (out / f"{name}{'-quick' if args.quick else ''}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
