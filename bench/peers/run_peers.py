"""Time peer LDP libraries' randomized response (GRR with k=2) on binary data.

Runs INSIDE the peer virtual environment (bench/.peers-venv, built by
bench/peers/setup_venv.sh), never in ldpnum's own environment: the peers need
old dependency pins.  ldpnum's benchmark runs this script as a subprocess and
merges its JSON with its own figures.

For every peer that ships Warner randomized response / generalized randomized
response (GRR, a.k.a. direct encoding, k-RR) it times, at each requested n:

* ``privatize``: perturbing n binary values (30% ones) with the library's
  client.  All three peers expose only a per-user client function, so a list
  comprehension over users is their natural API; none offers a batch call.
* ``aggregate+estimate``: the library's server-side counting of those reports
  plus its frequency estimator (one record per estimator a peer offers).

Each record holds the median over ``--repeats`` runs, values per second, the
n actually timed (capped at 1e6 or 1e5 users when a single run at the
requested n is projected to exceed ``--max-seconds``) and the absolute error of
the estimated proportion of ones against the true proportion in the data.

``--seed`` seeds the input data only (``numpy.random.default_rng``).  The peers
draw their noise from their own global generators (Python's ``random`` module
for pure-ldp, numba's internal NumPy-compatible state for multi-freq-ldpy and
ldp-toolbox); seeding those would mean mutating global state, which this script
deliberately does not do, so their reports vary from run to run.

Usage::

    bench/.peers-venv/bin/python bench/peers/run_peers.py \\
        --n 1000000 --epsilon 1.0 --repeats 3 --seed 0 --json peers.json
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from collections.abc import Callable

import numpy as np

ONES_FRACTION = 0.3
PILOT_USERS = 20_000
CAP_CHOICES = (1_000_000, 100_000)

Privatizer = Callable[[list, float], list]
Estimator = Callable[[list, float], float]


@dataclass
class PeerEstimator:
    """One server-side estimator: returns the estimated proportion of ones."""

    label: str
    api: str
    run: Estimator


@dataclass
class Peer:
    """A peer library's GRR client plus its estimators."""

    name: str
    dist: str
    client_api: str
    privatize: Privatizer
    estimators: list[PeerEstimator] = field(default_factory=list)
    note: str = ""


# --------------------------------------------------------------------------
# Peer adapters.  Inputs are Python lists of ints 0/1, prepared outside the
# timed region; each adapter calls the library exactly as its docs/source do.
# --------------------------------------------------------------------------


def _load_pure_ldp() -> Peer:
    # pure_ldp.core.FreqOracleClient maps items with index_mapper, default
    # ``x - 1`` (items are 1..d); an identity mapper keeps our 0/1 items.
    # DEClient: p = e^eps / (e^eps + d - 1), q = 1 / (e^eps + d - 1).
    from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer

    identity = lambda x: x  # noqa: E731 - the library wants a callable

    def privatize(values: list, epsilon: float) -> list:
        client = DEClient(epsilon=epsilon, d=2, index_mapper=identity)
        priv = client.privatise
        return [priv(v) for v in values]

    def estimate(reports: list, epsilon: float) -> float:
        server = DEServer(epsilon=epsilon, d=2, index_mapper=identity)
        server.aggregate_all(reports)
        # estimate() returns an unbiased *count* for the item.
        return float(server.estimate(1, suppress_warnings=True)) / len(reports)

    return Peer(
        name="pure-ldp",
        dist="pure-ldp",
        client_api="DEClient(epsilon, d=2).privatise(x) per user",
        privatize=privatize,
        estimators=[PeerEstimator(
            "unbiased", "DEServer.aggregate_all(reports); DEServer.estimate(1)",
            estimate)],
        note="noise from Python's global random module",
    )


def _load_multi_freq_ldpy() -> Peer:
    # GRR_Client is a numba @jit(nopython=True) function taking one value;
    # p = e^eps / (e^eps + k - 1) recomputed on every call.
    from multi_freq_ldpy.pure_frequency_oracles.GRR import (
        GRR_Aggregator_IBU, GRR_Aggregator_MI, GRR_Client)

    def privatize(values: list, epsilon: float) -> list:
        return [GRR_Client(v, 2, epsilon) for v in values]

    def estimate_mi(reports: list, epsilon: float) -> float:
        # Matrix inversion, clipped at 0 and renormalised to sum to 1.
        return float(GRR_Aggregator_MI(reports, 2, epsilon)[1])

    def estimate_ibu(reports: list, epsilon: float) -> float:
        # Iterative Bayesian update, library defaults (10000 iters, tol 1e-12).
        return float(GRR_Aggregator_IBU(reports, 2, epsilon)[1])

    return Peer(
        name="multi-freq-ldpy",
        dist="multi-freq-ldpy",
        client_api="GRR_Client(x, k=2, epsilon) per user (numba-jitted)",
        privatize=privatize,
        estimators=[
            PeerEstimator("MI", "GRR_Aggregator_MI(reports, 2, epsilon)",
                          estimate_mi),
            PeerEstimator("IBU", "GRR_Aggregator_IBU(reports, 2, epsilon)",
                          estimate_ibu),
        ],
        note="noise from numba's internal global NumPy-style RNG",
    )


def _load_ldp_toolbox() -> Peer:
    # GeneralizedRandomizedResponse(k, epsilon).obfuscate(x) calls a numba
    # @jit function per value; p = e^eps / (e^eps + k - 1).
    from ldp_toolbox.protocols.frequency.grr import GeneralizedRandomizedResponse

    def privatize(values: list, epsilon: float) -> list:
        grr = GeneralizedRandomizedResponse(k=2, epsilon=epsilon)
        obf = grr.obfuscate
        return [obf(v) for v in values]

    def estimate(reports: list, epsilon: float) -> float:
        # Unbiased estimate, clipped at 0 and renormalised to sum to 1.
        grr = GeneralizedRandomizedResponse(k=2, epsilon=epsilon)
        return float(grr.estimate(reports)[1])

    return Peer(
        name="ldp-toolbox",
        dist="ldp-toolbox",
        client_api="GeneralizedRandomizedResponse(k=2, epsilon).obfuscate(x) per user",
        privatize=privatize,
        estimators=[PeerEstimator(
            "unbiased, clipped", "GeneralizedRandomizedResponse.estimate(reports)",
            estimate)],
        note="noise from numba's internal global NumPy-style RNG",
    )


PEER_LOADERS: dict[str, Callable[[], Peer]] = {
    "pure-ldp": _load_pure_ldp,
    "multi-freq-ldpy": _load_multi_freq_ldpy,
    "ldp-toolbox": _load_ldp_toolbox,
}


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    """Run fn once with the cyclic GC paused; return (seconds, result)."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    return elapsed, result


def _make_values(n: int, seed: int) -> tuple[list, float]:
    """n binary values with P(1) = ONES_FRACTION, as a Python list."""
    rng = np.random.default_rng(seed)
    bits = (rng.random(n) < ONES_FRACTION).astype(np.int64)
    return bits.tolist(), float(bits.mean())


def _choose_n(n: int, per_value_s: float, max_seconds: float) -> int:
    """Largest of n, 1e6, 1e5 (not above n) projected to fit max_seconds."""
    if n * per_value_s <= max_seconds:
        return n
    for cap in CAP_CHOICES:
        if cap < n and cap * per_value_s <= max_seconds:
            return cap
    return min(n, CAP_CHOICES[-1])


def bench_peer(peer: Peer, n: int, epsilon: float, repeats: int, seed: int,
               max_seconds: float) -> list[dict]:
    """Benchmark one peer at one n; return its JSON records."""
    version = metadata.version(peer.dist)

    # Warm-up (numba JIT compilation happens here, outside every timing).
    warm, _ = _make_values(2_000, seed + 1)
    warm_reports = peer.privatize(warm, epsilon)
    for est in peer.estimators:
        est.run(warm_reports, epsilon)

    # Pilot to project the cost of one full-size run.
    pilot_n = min(n, PILOT_USERS)
    pilot, _ = _make_values(pilot_n, seed + 2)
    t_priv, pilot_reports = _timed(lambda: peer.privatize(pilot, epsilon))
    per_value = t_priv / pilot_n
    for est in peer.estimators:
        t_est, _ = _timed(lambda est=est: est.run(pilot_reports, epsilon))
        per_value = max(per_value, t_est / pilot_n)
    n_used = _choose_n(n, per_value, max_seconds)

    values, true_prop = _make_values(n_used, seed)
    priv_times: list[float] = []
    est_times: dict[str, list[float]] = {e.label: [] for e in peer.estimators}
    est_errors: dict[str, list[float]] = {e.label: [] for e in peer.estimators}
    for _ in range(repeats):
        seconds, reports = _timed(lambda: peer.privatize(values, epsilon))
        priv_times.append(seconds)
        for est in peer.estimators:
            seconds, p_hat = _timed(lambda est=est, reports=reports: est.run(reports, epsilon))
            est_times[est.label].append(seconds)
            est_errors[est.label].append(abs(p_hat - true_prop))
        del reports

    cap_note = ""
    if n_used != n:
        cap_note = (f"; capped: requested n={n}, timed n={n_used} "
                    f"(projected {n * per_value:.1f} s per run at full n)")
    common = {"peer": peer.name, "version": version, "n": n_used,
              "epsilon": epsilon, "repeats": repeats}

    def record(mechanism: str, operation: str, times: list[float],
               abs_error: float | None, api: str) -> dict:
        median = statistics.median(times)
        return {**common, "mechanism": mechanism, "operation": operation,
                "median_seconds": median,
                "values_per_second": n_used / median if median > 0 else math.inf,
                "abs_error": abs_error,
                "note": f"{api}; {peer.note}; true proportion {true_prop:.6f}"
                        f"{cap_note}"}

    records = [record("GRR k=2", "privatize", priv_times, None,
                      f"{peer.client_api} (Python loop over users)")]
    for est in peer.estimators:
        records.append(record(
            f"GRR k=2 ({est.label} estimator)", "aggregate+estimate",
            est_times[est.label], statistics.median(est_errors[est.label]),
            f"{est.api}; abs_error is the median over repeats"))
    return records


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def _parse_ns(raw: list[str] | None) -> list[int]:
    """Accept --n given several times and/or comma lists; 1e6 notation ok."""
    items = raw or ["1000000"]
    ns: list[int] = []
    for chunk in items:
        for tok in chunk.split(","):
            tok = tok.strip().replace("_", "")
            if not tok:
                continue
            value = float(tok)
            if value < 1 or value != int(value):
                raise argparse.ArgumentTypeError(f"bad n: {tok!r}")
            ns.append(int(value))
    return ns


def _error_record(peer: str, n: int | None, epsilon: float, error: str) -> dict:
    """A record with the usual keys left null, for a peer that failed."""
    return {"peer": peer, "version": None, "mechanism": "GRR k=2",
            "operation": None, "n": n, "epsilon": epsilon,
            "median_seconds": None, "values_per_second": None, "repeats": 0,
            "abs_error": None, "note": f"failed: {error}", "error": error}


def _markdown(records: list[dict]) -> str:
    lines = ["| peer | version | mechanism | operation | n | median s | values/s | abs error |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for r in records:
        if "error" in r:
            lines.append(f"| {r['peer']} | - | - | failed: {r['error']} | | | | |")
            continue
        err = "" if r["abs_error"] is None else f"{r['abs_error']:.5f}"
        lines.append(
            f"| {r['peer']} | {r['version']} | {r['mechanism']} | {r['operation']} "
            f"| {r['n']:,} | {r['median_seconds']:.4f} "
            f"| {r['values_per_second'] / 1e6:.2f} M | {err} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", action="append",
                        help="users per run; repeatable or comma list (default 1e6)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="OUT", help="write records to OUT")
    parser.add_argument("--max-seconds", type=float, default=60.0,
                        help="cap n when one run would exceed this (default 60)")
    parser.add_argument("--peers", default=",".join(PEER_LOADERS),
                        help="comma list of peers to run (default: all)")
    parser.add_argument("--quiet", action="store_true",
                        help="do not print the markdown table")
    args = parser.parse_args(argv)
    try:
        ns = _parse_ns(args.n)
    except (ValueError, argparse.ArgumentTypeError) as exc:
        parser.error(str(exc))
    if args.epsilon <= 0 or args.repeats < 1:
        parser.error("need epsilon > 0 and repeats >= 1")

    # The peers warn about small n / small epsilon and numba about
    # experimental features; none of it matters for timing.
    warnings.simplefilter("ignore")

    records: list[dict] = []
    failed = 0
    for name in [p.strip() for p in args.peers.split(",") if p.strip()]:
        if name not in PEER_LOADERS:
            parser.error(f"unknown peer {name!r}; known: {', '.join(PEER_LOADERS)}")
        try:
            peer = PEER_LOADERS[name]()
        except Exception as exc:  # a peer that will not import is reported, not fatal
            failed += 1
            records.append(_error_record(name, None, args.epsilon,
                                         f"import: {exc!r}"))
            print(f"run_peers: {name} unavailable: {exc!r}", file=sys.stderr)
            continue
        for n in ns:
            try:
                records.extend(bench_peer(peer, n, args.epsilon, args.repeats,
                                          args.seed, args.max_seconds))
            except Exception as exc:
                failed += 1
                records.append(_error_record(name, n, args.epsilon, repr(exc)))
                print(f"run_peers: {name} failed at n={n}: {exc!r}", file=sys.stderr)

    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(records, fh, indent=2)
            fh.write("\n")
    if not args.quiet:
        print(_markdown(records))
    return 1 if failed and failed == len(records) else 0


if __name__ == "__main__":
    sys.exit(main())
