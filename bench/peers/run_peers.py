"""Time peer LDP libraries: randomized response, frequency oracles, hierarchical histograms.

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

Three suites (``--suite``, comma list; default ``rr``, the section above):

``rr``
    randomized response (GRR with k=2), as described above.
``frequency``
    the categorical frequency oracles each peer ships, at every ``--k``
    (default 16 and 1024), over Zipf(1.1)-distributed codes 0..k-1
    (:func:`zipf_codes`, the same generator ldpnum's side uses): GRR/DE,
    SUE and OUE, BLH and OLH, Hadamard response (HR), pure-ldp's Hadamard
    mechanism (HM) and subset selection (SS), each through the library's
    own per-user client in a list comprehension and its own server-side
    aggregation + estimation.  ``privatize`` and ``aggregate+estimate``
    are sized separately: each is timed on the largest of n, 1e7, 1e6, ...,
    1e3 users (capped at the requested n) projected from a pilot to take at
    most ``--max-seconds`` per run and, for the reports, at most 2 GiB of
    payload (peers keep one float or int per bit of a unary report);
    estimation runs on the first ``n_est <= n_priv`` reports of each
    privatize run.  Records carry the n requested and the n timed; a
    measurement that serves several requested n is made once.  Errors are
    the max-abs and RMS error of the estimated frequencies (fractions of
    the users) against the true frequencies of the users estimated.
``hierarchical``
    ldp-hierarchical-mechanism (``Private_TreeBary``) on Beta(5,2) values
    bucketized to 1024 integer leaves, branching 4 (ldpnum's choice at
    eps = 1): users/s of ``update_tree`` (its per-user privatize+aggregate
    loop) and of ``compute_attributes`` + ``post_process``, for its default
    mode (every user reports on every level with the full eps: eps per
    level) and one-level-per-user modes with several protocols, plus the
    range-query MAE of its normalized answers and the scale of its answers
    (median answer / true value) on 1000 random ranges of width 0.1.

Usage::

    bench/.peers-venv/bin/python bench/peers/run_peers.py \\
        --n 1000000 --epsilon 1.0 --repeats 3 --seed 0 --json peers.json
    bench/.peers-venv/bin/python bench/peers/run_peers.py --suite frequency,hierarchical \\
        --n 1e6,1e7 --k 16,1024 --max-seconds 1 --json freq.json
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
# Frequency-oracle suite
# --------------------------------------------------------------------------

ZIPF_S = 1.1
FREQ_KS = (16, 1024)
FREQ_WARM_USERS = 50
FREQ_PILOT_USERS = 500
FREQ_MIN_N = 1_000
MAX_REPORT_BYTES = 2 * 1024 ** 3


def zipf_codes(n: int, k: int, seed: int) -> np.ndarray:
    """n codes in 0..k-1 with P(i) proportional to (i + 1)^-1.1 (int64).

    Shared with ldpnum's side of the benchmark (bench/run.py imports it), so
    both sides privatize data from one distribution.
    """
    p = 1.0 / np.arange(1, k + 1, dtype=np.float64) ** ZIPF_S
    p /= p.sum()
    return np.random.default_rng(seed).choice(k, size=n, p=p).astype(np.int64)


@dataclass
class FreqCase:
    """One peer's frequency oracle: ``build(k, epsilon)`` returns
    ``(privatize(values) -> reports, estimate(reports) -> frequencies)``,
    frequencies being fractions of the users (length k)."""

    peer: str
    dist: str
    mechanism: str  # GRR, SUE, OUE, BLH, OLH, HR, HM, SS
    client_api: str
    estimator_api: str
    build: Callable[[int, float], tuple[Callable[[list], list], Callable[[list], np.ndarray]]]
    note: str = ""


def _per_user(client_fn: Callable) -> Callable[[list], list]:
    return lambda values: [client_fn(v) for v in values]


def _freq_pure_ldp() -> list[FreqCase]:
    # Every pure-ldp client/server maps items with index_mapper, default
    # ``x - 1`` (items 1..d); an identity mapper keeps our codes 0..k-1.
    # Servers aggregate one report at a time (aggregate_all is a Python
    # loop) and estimate_all returns unbiased *counts*, divided by n here.
    from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer
    from pure_ldp.frequency_oracles.hadamard_mechanism import HadamardMechClient, HadamardMechServer
    from pure_ldp.frequency_oracles.hadamard_response import (HadamardResponseClient,
                                                              HadamardResponseServer)
    from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer
    from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

    ident = lambda x: x  # noqa: E731 - the library wants a callable

    def with_server(make_server: Callable, k: int) -> Callable[[list], np.ndarray]:
        def estimate(reports: list) -> np.ndarray:
            server = make_server()
            server.aggregate_all(reports)
            counts = server.estimate_all(range(k), suppress_warnings=True)
            return np.asarray(counts, dtype=np.float64) / len(reports)
        return estimate

    def de(k, eps):
        return (_per_user(DEClient(eps, k, index_mapper=ident).privatise),
                with_server(lambda: DEServer(eps, k, index_mapper=ident), k))

    def ue(oue):
        def build(k, eps):
            return (_per_user(UEClient(eps, k, use_oue=oue, index_mapper=ident).privatise),
                    with_server(lambda: UEServer(eps, k, use_oue=oue, index_mapper=ident), k))
        return build

    def lh(olh):
        def build(k, eps):
            # g = 2 (BLH) unless use_olh, which sets g = round(e^eps) + 1.
            return (_per_user(LHClient(eps, k, g=2, use_olh=olh, index_mapper=ident).privatise),
                    with_server(lambda: LHServer(eps, k, g=2, use_olh=olh, index_mapper=ident), k))
        return build

    def hr(k, eps):
        # The client needs the server's hash functions (a permutation when
        # eps > 1; None in the eps <= 1 regime used here).  One server is
        # reset before each aggregation so both sides keep the same state.
        server = HadamardResponseServer(eps, k, index_mapper=ident)
        client = HadamardResponseClient(eps, k, server.get_hash_funcs(), index_mapper=ident)

        def estimate(reports):
            server.reset()
            server.aggregate_all(reports)
            counts = server.estimate_all(range(k), suppress_warnings=True)
            return np.asarray(counts, dtype=np.float64) / len(reports)
        return _per_user(client.privatise), estimate

    def hm(k, eps):
        # Hadamard mechanism with t = ceil(log2(e^eps + 1)) coefficients.
        # A report is a list of t (index, +-1) pairs -- or, when the client
        # lies, a one-shot zip iterator: it can be aggregated only once.
        client = HadamardMechClient(eps, k, None, use_optimal_t=True, index_mapper=ident)
        return (_per_user(client.privatise),
                with_server(lambda: HadamardMechServer(eps, k, None, use_optimal_t=True,
                                                       index_mapper=ident), k))

    srv = "Server.aggregate_all(reports); Server.estimate_all(range(k)) / n"
    return [
        FreqCase("pure-ldp", "pure-ldp", "GRR", "DEClient(eps, k).privatise(x)", "DE" + srv, de,
                 "noise from Python's random module"),
        FreqCase("pure-ldp", "pure-ldp", "SUE", "UEClient(eps, k, use_oue=False).privatise(x)",
                 "UE" + srv, ue(False), "np.random.choice over k per user; int64 per bit"),
        FreqCase("pure-ldp", "pure-ldp", "OUE", "UEClient(eps, k, use_oue=True).privatise(x)",
                 "UE" + srv, ue(True), "np.random.choice over k per user; int64 per bit"),
        FreqCase("pure-ldp", "pure-ldp", "BLH", "LHClient(eps, k, g=2).privatise(x)", "LH" + srv,
                 lh(False), "xxhash of str(x); server hashes every item for every report"),
        FreqCase("pure-ldp", "pure-ldp", "OLH", "LHClient(eps, k, use_olh=True).privatise(x)",
                 "LH" + srv, lh(True), "xxhash of str(x); server hashes every item for every report"),
        FreqCase("pure-ldp", "pure-ldp", "HR", "HadamardResponseClient(eps, k, hash_funcs).privatise(x)",
                 "HadamardResponse" + srv, hr, "Acharya-Sun-Zhang high-privacy regime (eps <= 1)"),
        FreqCase("pure-ldp", "pure-ldp", "HM", "HadamardMechClient(eps, k, use_optimal_t=True).privatise(x)",
                 "HadamardMech" + srv, hm, "t Hadamard coefficients per user; no ldpnum counterpart"),
    ]


def _freq_multi_freq_ldpy() -> list[FreqCase]:
    # Clients: GRR/UE/SS are numba-jitted single-user functions; LH_Client is
    # plain Python (xxhash of str(x)) calling the jitted GRR_Client.  Only
    # the MI (matrix inversion, clipped at 0 and renormalised) estimators are
    # timed: IBU (10000 iterations over a k x k matrix) is post-processing
    # whose cost does not scale with n.
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI, GRR_Client
    from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Aggregator_MI, LH_Client
    from multi_freq_ldpy.pure_frequency_oracles.SS import SS_Aggregator_MI, SS_Client
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Aggregator_MI, UE_Client

    def grr(k, eps):
        return (lambda values: [GRR_Client(v, k, eps) for v in values],
                lambda reports: np.asarray(GRR_Aggregator_MI(reports, k, eps)))

    def ue(optimal):
        def build(k, eps):
            return (lambda values: [UE_Client(v, k, eps, optimal) for v in values],
                    lambda reports: np.asarray(UE_Aggregator_MI(reports, eps, optimal)))
        return build

    def lh(optimal):
        def build(k, eps):
            return (lambda values: [LH_Client(v, k, eps, optimal) for v in values],
                    lambda reports: np.asarray(LH_Aggregator_MI(reports, k, eps, optimal)))
        return build

    def ss(k, eps):
        return (lambda values: [SS_Client(v, k, eps) for v in values],
                lambda reports: np.asarray(SS_Aggregator_MI(reports, k, eps)))

    mi = "_Aggregator_MI(reports, ...) (clipped, renormalised)"
    return [
        FreqCase("multi-freq-ldpy", "multi-freq-ldpy", "GRR", "GRR_Client(x, k, eps)", "GRR" + mi, grr,
                 "numba-jitted client; np.random.choice over the k-1 others per lie"),
        FreqCase("multi-freq-ldpy", "multi-freq-ldpy", "SUE", "UE_Client(x, k, eps, optimal=False)",
                 "UE" + mi, ue(False), "numba-jitted; float64 per bit"),
        FreqCase("multi-freq-ldpy", "multi-freq-ldpy", "OUE", "UE_Client(x, k, eps, optimal=True)",
                 "UE" + mi, ue(True), "numba-jitted; float64 per bit"),
        FreqCase("multi-freq-ldpy", "multi-freq-ldpy", "BLH", "LH_Client(x, k, eps, optimal=False)",
                 "LH" + mi, lh(False), "xxhash of str(x); server hashes every item for every report"),
        FreqCase("multi-freq-ldpy", "multi-freq-ldpy", "OLH", "LH_Client(x, k, eps, optimal=True)",
                 "LH" + mi, lh(True), "xxhash of str(x); server hashes every item for every report"),
        FreqCase("multi-freq-ldpy", "multi-freq-ldpy", "SS", "SS_Client(x, k, eps)", "SS" + mi, ss,
                 "the true value, when kept, is always the first element of the subset"),
    ]


def _freq_ldp_toolbox() -> list[FreqCase]:
    # Protocol objects with obfuscate(x) per user (numba-jitted kernels for
    # GRR/UE/SS, plain Python + xxhash for LH) and estimate(reports)
    # (unbiased, clipped at 0, renormalised).  LocalHashing.estimate
    # dispatches one joblib task per report (Parallel(n_jobs=-1)).
    from ldp_toolbox.protocols.frequency.grr import GeneralizedRandomizedResponse
    from ldp_toolbox.protocols.frequency.lh import LocalHashing
    from ldp_toolbox.protocols.frequency.ss import SubsetSelection
    from ldp_toolbox.protocols.frequency.ue import UnaryEncoding

    def proto(factory):
        def build(k, eps):
            obj = factory(k, eps)
            return _per_user(obj.obfuscate), lambda reports: np.asarray(obj.estimate(reports))
        return build

    est = ".estimate(reports) (clipped, renormalised)"
    return [
        FreqCase("ldp-toolbox", "ldp-toolbox", "GRR", "GeneralizedRandomizedResponse(k, eps).obfuscate(x)",
                 "GeneralizedRandomizedResponse" + est, proto(GeneralizedRandomizedResponse),
                 "numba-jitted; builds np.arange(k) per user"),
        FreqCase("ldp-toolbox", "ldp-toolbox", "SUE", "UnaryEncoding(k, eps, optimal=False).obfuscate(x)",
                 "UnaryEncoding" + est, proto(lambda k, e: UnaryEncoding(k, e, optimal=False)),
                 "numba-jitted; float64 per bit"),
        FreqCase("ldp-toolbox", "ldp-toolbox", "OUE", "UnaryEncoding(k, eps, optimal=True).obfuscate(x)",
                 "UnaryEncoding" + est, proto(lambda k, e: UnaryEncoding(k, e, optimal=True)),
                 "numba-jitted; float64 per bit"),
        FreqCase("ldp-toolbox", "ldp-toolbox", "BLH", "LocalHashing(k, eps, optimal=False).obfuscate(x)",
                 "LocalHashing" + est, proto(lambda k, e: LocalHashing(k, e, optimal=False)),
                 "xxhash of str(x); estimate = one joblib task per report"),
        FreqCase("ldp-toolbox", "ldp-toolbox", "OLH", "LocalHashing(k, eps, optimal=True).obfuscate(x)",
                 "LocalHashing" + est, proto(lambda k, e: LocalHashing(k, e, optimal=True)),
                 "xxhash of str(x); estimate = one joblib task per report"),
        FreqCase("ldp-toolbox", "ldp-toolbox", "SS", "SubsetSelection(k, eps).obfuscate(x)",
                 "SubsetSelection" + est, proto(SubsetSelection),
                 "numba-jitted; the subset is shuffled"),
    ]


FREQ_LOADERS: dict[str, Callable[[], list[FreqCase]]] = {
    "pure-ldp": _freq_pure_ldp,
    "multi-freq-ldpy": _freq_multi_freq_ldpy,
    "ldp-toolbox": _freq_ldp_toolbox,
}


def _payload_bytes(report) -> float:
    """Bytes of data in one report: arrays by nbytes, Python/NumPy scalars as
    8-byte words, tuples/lists summed; NaN when unknown (a zip iterator)."""
    if isinstance(report, np.ndarray):
        return float(report.nbytes)
    if isinstance(report, np.generic):
        return float(report.itemsize)
    if isinstance(report, (int, float, bool)):
        return 8.0
    if isinstance(report, (tuple, list)):
        return float(sum(_payload_bytes(r) for r in report))
    return math.nan


def _ladder_n(n: int, per_value_s: float, max_seconds: float,
              bytes_per_value: float = math.nan) -> int:
    """Largest of n, 1e7, 1e6, ..., 1e3 (not above n) projected to fit
    max_seconds per run and MAX_REPORT_BYTES of reports; at least 1e3."""
    candidates = [n] + [10 ** e for e in range(7, 2, -1) if 10 ** e < n]
    for c in candidates:
        if c * per_value_s > max_seconds:
            continue
        if not math.isnan(bytes_per_value) and c * bytes_per_value > MAX_REPORT_BYTES:
            continue
        return c
    return min(n, FREQ_MIN_N)


def bench_freq_case(case: FreqCase, k: int, ns: list[int], epsilon: float, repeats: int,
                    seed: int, max_seconds: float) -> list[dict]:
    """Time one peer oracle at one k for every requested n; return records."""
    version = metadata.version(case.dist)
    privatize, estimate = case.build(k, epsilon)

    # Warm-up: numba JIT compilation, joblib worker start-up.
    warm = zipf_codes(FREQ_WARM_USERS, k, seed + 1).tolist()
    estimate(privatize(warm))
    # Pilot: per-value cost of each operation and the report payload.
    pilot = zipf_codes(FREQ_PILOT_USERS, k, seed + 2).tolist()
    t_priv, pilot_reports = _timed(lambda: privatize(pilot))
    sizes = [_payload_bytes(r) for r in pilot_reports[:50]]
    known = [b for b in sizes if not math.isnan(b)]
    bytes_per = statistics.median(known) if known else math.nan
    t_est, _ = _timed(lambda: estimate(pilot_reports))
    pilot_reports = None
    priv_per, est_per = t_priv / len(pilot), t_est / len(pilot)

    measured: dict[tuple[int, int], tuple[list, list, list, list]] = {}
    records: list[dict] = []
    for n in sorted(ns):
        n_priv = _ladder_n(n, priv_per, max_seconds, bytes_per)
        n_est = min(n_priv, _ladder_n(n, est_per, max_seconds))
        key = (n_priv, n_est)
        if key not in measured:
            codes = zipf_codes(n_priv, k, seed)
            values = codes.tolist()
            true = np.bincount(codes[:n_est], minlength=k) / n_est
            priv_times, est_times, max_abs, rms = [], [], [], []
            for _ in range(repeats):
                seconds, reports = _timed(lambda: privatize(values))
                priv_times.append(seconds)
                sub = reports if n_est == n_priv else reports[:n_est]
                seconds, freq = _timed(lambda sub=sub: estimate(sub))
                est_times.append(seconds)
                err = np.asarray(freq, dtype=np.float64) - true
                max_abs.append(float(np.max(np.abs(err))))
                rms.append(float(np.sqrt(np.mean(err ** 2))))
                del reports, sub
            measured[key] = (priv_times, est_times, max_abs, rms)
        priv_times, est_times, max_abs, rms = measured[key]
        common = {"suite": "frequency", "peer": case.peer, "version": version,
                  "mechanism": case.mechanism, "k": k, "epsilon": epsilon, "repeats": repeats,
                  "n_requested": n, "report_payload_bytes": bytes_per}
        for op, times, n_used, api, errors in (
                ("privatize", priv_times, n_priv, case.client_api + " per user", None),
                ("aggregate+estimate", est_times, n_est, case.estimator_api, (max_abs, rms))):
            median = statistics.median(times)
            cap = "" if n_used == n else (
                f"; capped: requested n={n}, timed n={n_used} (pilot projected "
                f"{n * (priv_per if op == 'privatize' else est_per):.1f} s per run at full n)")
            records.append({
                **common, "operation": op, "n": n_used, "median_seconds": median,
                "values_per_second": n_used / median if median > 0 else math.inf,
                "abs_error": None if errors is None else statistics.median(errors[0]),
                "rms_error": None if errors is None else statistics.median(errors[1]),
                "note": f"{api}; {case.note}{cap}"})
    return records


def run_frequency_suite(peers: list[str], ns: list[int], ks: list[int], epsilon: float,
                        repeats: int, seed: int, max_seconds: float) -> tuple[list[dict], int]:
    records: list[dict] = []
    failed = 0
    for name in peers:
        try:
            cases = FREQ_LOADERS[name]()
        except Exception as exc:  # a peer that will not import is reported, not fatal
            failed += 1
            records.append({"suite": "frequency", "peer": name, "mechanism": None, "k": None,
                            "operation": None, "n": None, "values_per_second": None,
                            "error": f"import: {exc!r}"})
            print(f"run_peers: {name} unavailable: {exc!r}", file=sys.stderr)
            continue
        for case in cases:
            for k in ks:
                print(f"run_peers: {case.peer} {case.mechanism} k={k} ...", file=sys.stderr, flush=True)
                try:
                    records.extend(bench_freq_case(case, k, ns, epsilon, repeats, seed, max_seconds))
                except Exception as exc:
                    failed += 1
                    records.append({"suite": "frequency", "peer": case.peer, "mechanism": case.mechanism,
                                    "k": k, "operation": None, "n": None, "values_per_second": None,
                                    "error": repr(exc)})
                    print(f"run_peers: {case.peer} {case.mechanism} k={k} failed: {exc!r}",
                          file=sys.stderr)
    return records, failed


# --------------------------------------------------------------------------
# Hierarchical-histogram suite (ldp-hierarchical-mechanism)
# --------------------------------------------------------------------------

HH_LEAVES = 1024
HH_BRANCHING = 4
HH_QUERIES = 1000
HH_WIDTH = 0.1
# (protocol, on_all_levels): the library's default first.
HH_MODES = (("unary_encoding", True), ("unary_encoding", False), ("direct_encoding", False),
            ("local_hashing", False), ("hadamard_response", False))


def _hh_values(n: int, seed: int) -> np.ndarray:
    """Beta(5, 2) values bucketized to the integer leaves 0..1023."""
    x = np.random.default_rng(seed).beta(5, 2, n)
    return np.minimum((x * HH_LEAVES).astype(np.int64), HH_LEAVES - 1)


def _hh_queries(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Ranges (a, b] of width 0.1 of the domain, in leaves."""
    span = int(round(HH_WIDTH * HH_LEAVES))
    a = (np.random.default_rng(seed).random(HH_QUERIES) * (HH_LEAVES - 1 - span)).astype(np.int64)
    return a, a + span


def bench_hierarchical(ns: list[int], epsilon: float, repeats: int, seed: int,
                       max_seconds: float) -> tuple[list[dict], int]:
    dist = "ldp-hierarchical-mechanism"
    try:
        from hierarchical_mechanism_LDP import Private_TreeBary
        version = metadata.version(dist)
    except Exception as exc:
        print(f"run_peers: {dist} unavailable: {exc!r}", file=sys.stderr)
        return [{"suite": "hierarchical", "peer": dist, "mode": None, "operation": None, "n": None,
                 "values_per_second": None, "error": f"import: {exc!r}"}], 1

    qa, qb = _hh_queries(seed + 7)
    records: list[dict] = []
    failed = 0
    for protocol, all_levels in HH_MODES:
        mode = f"{protocol}, {'all levels (default)' if all_levels else 'one level per user'}"
        print(f"run_peers: {dist} {mode} ...", file=sys.stderr, flush=True)

        def run(data: np.ndarray):
            tree = Private_TreeBary(HH_LEAVES, HH_BRANCHING, epsilon, protocol=protocol,
                                    on_all_levels=all_levels)
            t_upd, _ = _timed(lambda: tree.update_tree(data))
            t_est, _ = _timed(lambda: (tree.compute_attributes(), tree.post_process()))
            return tree, t_upd, t_est

        try:
            pilot_tree, t_upd, _ = run(_hh_values(FREQ_PILOT_USERS, seed + 2))
            depth = pilot_tree.depth
            per_user = t_upd / FREQ_PILOT_USERS
            measured: dict[int, dict] = {}
            for n in sorted(ns):
                n_used = _ladder_n(n, per_user, max_seconds)
                if n_used not in measured:
                    data = _hh_values(n_used, seed)
                    srt = np.sort(data)
                    # (a, b] in leaves: values v with a < v <= b.
                    true = (np.searchsorted(srt, qb, side="right")
                            - np.searchsorted(srt, qa, side="right")) / n_used
                    upd, est, mae, scale, scale_counts = [], [], [], [], []
                    for _ in range(repeats):
                        tree, t_upd, t_est = run(data)
                        upd.append(t_upd)
                        est.append(t_est)
                        ans = np.array([tree.get_range_query(int(a), int(b), normalized=True)
                                        for a, b in zip(qa, qb)])
                        ans_counts = np.array([tree.get_range_query(int(a), int(b), normalized=False)
                                               for a, b in zip(qa, qb)])
                        big = true > 0.01
                        mae.append(float(np.mean(np.abs(ans - true))))
                        scale.append(float(np.median(ans[big] / true[big])))
                        scale_counts.append(float(np.median(ans_counts[big] / (true[big] * n_used))))
                    measured[n_used] = {"upd": upd, "est": est, "mae": statistics.median(mae),
                                        "scale": statistics.median(scale),
                                        "scale_counts": statistics.median(scale_counts)}
                m = measured[n_used]
                cap = "" if n_used == n else (f"; capped: requested n={n}, timed n={n_used} "
                                              f"(pilot projected {n * per_user:.1f} s per run)")
                common = {"suite": "hierarchical", "peer": dist, "version": version, "mode": mode,
                          "protocol": protocol, "on_all_levels": all_levels,
                          "n_leaves": HH_LEAVES, "branching": HH_BRANCHING, "levels": depth - 1,
                          "epsilon": epsilon,
                          "epsilon_per_person": epsilon * (depth - 1) if all_levels else epsilon,
                          "repeats": repeats, "n_requested": n, "n": n_used,
                          "range_mae": m["mae"], "answer_scale_normalized": m["scale"],
                          "answer_scale_counts": m["scale_counts"]}
                for op, times, api in (
                        ("privatize+aggregate", m["upd"], "Private_TreeBary.update_tree(data) (per-user loop)"),
                        ("estimate", m["est"], "compute_attributes(); post_process()")):
                    median = statistics.median(times)
                    records.append({**common, "operation": op, "median_seconds": median,
                                    "values_per_second": n_used / median if median > 0 else math.inf,
                                    "note": f"{api}{cap}"})
        except Exception as exc:
            failed += 1
            error = repr(exc)
            if protocol == "hadamard_response" and isinstance(exc, UnboundLocalError):
                # Its pure-ldp clients keep the default index_mapper x - 1, so node 0 of a level is
                # item -1, i.e. Hadamard row 0, which has no bit to flip: encode_symbol fails when it lies.
                error += (" (node 0 of each level maps to item -1 through pure-ldp's default index_mapper "
                          "x - 1: Hadamard row 0, no bit to flip when the client lies)")
            records.append({"suite": "hierarchical", "peer": dist, "version": version, "mode": mode,
                            "protocol": protocol, "on_all_levels": all_levels, "operation": None,
                            "n": None, "values_per_second": None, "error": error})
            print(f"run_peers: {dist} {mode} failed: {exc!r}", file=sys.stderr)
    return records, failed


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


def _markdown_frequency(records: list[dict]) -> str:
    lines = ["| peer | oracle | k | operation | n requested | n timed | values/s | payload B/report "
             "| max abs error | RMS error |", "|---|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in records:
        if "error" in r:
            lines.append(f"| {r['peer']} | {r.get('mechanism') or '-'} | {r.get('k') or ''} "
                         f"| failed: {r['error']} | | | | | | |")
            continue
        err = ("", "") if r["abs_error"] is None else (f"{r['abs_error']:.4f}", f"{r['rms_error']:.5f}")
        lines.append(f"| {r['peer']} | {r['mechanism']} | {r['k']} | {r['operation']} "
                     f"| {r['n_requested']:,} | {r['n']:,} | {r['values_per_second']:,.0f} "
                     f"| {r['report_payload_bytes']:g} | {err[0]} | {err[1]} |")
    return "\n".join(lines)


def _markdown_hierarchical(records: list[dict]) -> str:
    lines = ["| mode | eps/person | operation | n requested | n timed | users/s | range MAE "
             "| answer / truth (normalized) | answer / truth (counts) |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in records:
        if "error" in r:
            lines.append(f"| {r.get('mode') or '-'} | | failed: {r['error']} | | | | | | |")
            continue
        lines.append(f"| {r['mode']} | {r['epsilon_per_person']:g} | {r['operation']} "
                     f"| {r['n_requested']:,} | {r['n']:,} | {r['values_per_second']:,.0f} "
                     f"| {r['range_mae']:.4g} | {r['answer_scale_normalized']:.4g} "
                     f"| {r['answer_scale_counts']:.4g} |")
    return "\n".join(lines)


SUITES = ("rr", "frequency", "hierarchical")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="rr",
                        help=f"comma list of suites among {', '.join(SUITES)} (default rr)")
    parser.add_argument("--n", action="append",
                        help="users per run; repeatable or comma list (default 1e6)")
    parser.add_argument("--k", default=",".join(str(k) for k in FREQ_KS),
                        help="frequency suite: comma list of domain sizes (default 16,1024)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="OUT", help="write records to OUT")
    parser.add_argument("--max-seconds", type=float, default=60.0,
                        help="cap n when one run would exceed this (default 60)")
    parser.add_argument("--peers", default=",".join(PEER_LOADERS),
                        help="comma list of peers to run (default: all; rr and frequency suites)")
    parser.add_argument("--quiet", action="store_true",
                        help="do not print the markdown table")
    args = parser.parse_args(argv)
    try:
        ns = _parse_ns(args.n)
        ks = [int(v) for v in args.k.split(",") if v.strip()]
    except (ValueError, argparse.ArgumentTypeError) as exc:
        parser.error(str(exc))
    if args.epsilon <= 0 or args.repeats < 1:
        parser.error("need epsilon > 0 and repeats >= 1")
    suites = [s.strip() for s in args.suite.split(",") if s.strip()]
    for suite in suites:
        if suite not in SUITES:
            parser.error(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for name in peers:
        if name not in PEER_LOADERS:
            parser.error(f"unknown peer {name!r}; known: {', '.join(PEER_LOADERS)}")

    # The peers warn about small n / small epsilon and numba about
    # experimental features; none of it matters for timing.
    warnings.simplefilter("ignore")

    records: list[dict] = []
    failed = 0
    if "rr" in suites:
        rr: list[dict] = []
        for name in peers:
            try:
                peer = PEER_LOADERS[name]()
            except Exception as exc:  # a peer that will not import is reported, not fatal
                failed += 1
                rr.append(_error_record(name, None, args.epsilon,
                                        f"import: {exc!r}"))
                print(f"run_peers: {name} unavailable: {exc!r}", file=sys.stderr)
                continue
            for n in ns:
                try:
                    rr.extend(bench_peer(peer, n, args.epsilon, args.repeats,
                                         args.seed, args.max_seconds))
                except Exception as exc:
                    failed += 1
                    rr.append(_error_record(name, n, args.epsilon, repr(exc)))
                    print(f"run_peers: {name} failed at n={n}: {exc!r}", file=sys.stderr)
        for r in rr:
            r.setdefault("suite", "rr")
        records.extend(rr)
    if "frequency" in suites:
        freq, bad = run_frequency_suite(peers, ns, ks, args.epsilon, args.repeats, args.seed,
                                        args.max_seconds)
        records.extend(freq)
        failed += bad
    if "hierarchical" in suites:
        hh, bad = bench_hierarchical(ns, args.epsilon, args.repeats, args.seed, args.max_seconds)
        records.extend(hh)
        failed += bad

    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(records, fh, indent=2)
            fh.write("\n")
    if not args.quiet:
        by_suite = {s: [r for r in records if r.get("suite") == s] for s in suites}
        render = {"rr": _markdown, "frequency": _markdown_frequency,
                  "hierarchical": _markdown_hierarchical}
        print("\n\n".join(render[s](by_suite[s]) for s in suites))
    return 1 if failed and failed == len(records) else 0


if __name__ == "__main__":
    sys.exit(main())
