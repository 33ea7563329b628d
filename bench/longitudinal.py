"""Repeated collection (``make bench``, section ``longitudinal``): ldpnum's longitudinal frequency oracles against
multi-freq-ldpy 0.2.5's L-GRR, L-OSUE and L-SOUE, and the per-person ε after many rounds with memoization against
naive repeated collection.

Data: :func:`ldpnum.demo.telemetry_population` — n people, each with one of k categories (Zipf popularity), 10% of
them switching to another category each round (seed 0). Parameters: n = 1e6, k ∈ {16, 1024}, ε∞ ∈ {1, 2, 4},
ε1 = ε∞/2, 30 rounds.

dBitFlip: ldpnum's memoized ``DBitFlip`` (γ = 0, the paper's memoization: ε1 = ε∞) and multi-freq-ldpy's
dBitFlipPM on the same values in ``min(32, k)`` buckets (bucket of v = floor(v·b/k)), d = 4 bits per person;
MSE of the bucket histogram after clipping negatives and normalizing (what the peer's aggregator does).

ldpnum: every longitudinal frequency oracle it has (L-GRR, L-OSUE, LOLOHA), each person with
a key (:class:`ldpnum.ClientKeys`, seeded), secure instantaneous randomness, ``privatize(..., keys=, round=r)``
timed per round (client), ``aggregate`` + ``estimate_frequencies`` timed per round (server; median over rounds,
JIT compile excluded by one untimed warm-up round), with the client's CPU time per round (``time.process_time``:
every thread of this process) next to its wall time and the machine's 1-minute load average before and after each
cell, so ratios taken under load can be read: the client column gives ldpnum's people/s over the peer's, and
its CPU time per person over the peer's ("by CPU"; ldpnum's kernels run on both cores, the peer's loop on one, so
on an idle machine the wall ratio would be about twice that). MSE of the frequencies against the round's truth, averaged
over rounds, for the unbiased estimate and after norm-sub (multi-freq-ldpy's MI estimator clips negatives and
renormalizes, so its MSE is comparable with norm-sub). Per-person ε: a :class:`ldpnum.PrivacyLedger` records every
round of the first ``LEDGER_PEOPLE`` people (``record_longitudinal``); the table gives the median and largest
total after all rounds against naive collection (ε1 per report: rounds·ε1 for everyone).

Peer (bench/.peers-venv, ``bench/peers/longitudinal_peers.py``): its clients take one value per call and draw the
first-round response afresh at every call (no memoization across rounds: a deployment would store it), so each
round is a full run of its client over the people; three rounds measured, on the first people when a pilot
projects a round beyond 30 s (sized to ~10 s). Its MSE at fewer people is scaled to n (MSE ∝ 1/n for these
estimators) and marked so.

RAPPOR (no installable peer decodes it): the paper's parameters, n people, a 10^4-string dictionary of which 100
strings are held (Zipf) by 70% of people and the rest hold strings outside it; privatize, aggregate and decode
times and what the decoder detected against what was planted.

Runs alone: ``python bench/longitudinal.py [--n 1e5] [--rounds 5] [--no-peers] [--protocols LOSUE]``
(``--protocols``: only these of ldpnum's oracles, with the peer's protocol of the same name, and no dBitFlip or
RAPPOR unless named: ``DBitFlip``, ``RAPPOR``).
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ldpnum as ldp  # noqa: E402
from ldpnum.demo import telemetry_population  # noqa: E402

N = 1_000_000
ROUNDS = 30
KS = (16, 1024)
EPS_PERM = (1.0, 2.0, 4.0)
RATIO = 0.5
CHANGE = 0.10
LEDGER_PEOPLE = 100_000
PROTOCOLS = ("LGRR", "LOSUE", "LOLOHA")


def ldpnum_runs(values, k, rounds, protocols=PROTOCOLS):
    records = []
    n = values.shape[0]
    keys = ldp.ClientKeys.generate(n, rng=1)
    for name in protocols:
        cls = getattr(ldp, name, None)
        if cls is None:
            continue
        for ep in EPS_PERM:
            try:
                m = cls(ep, RATIO * ep, k)
            except (TypeError, ValueError) as exc:
                records.append({"library": "ldpnum", "protocol": name, "k": k, "eps_perm": ep, "error": str(exc)})
                continue
            m.estimate_frequencies(m.aggregate(m.privatize(values[:50_000, 0], keys=keys[:50_000])))  # warm-up
            ledger = ldp.PrivacyLedger()
            client, client_cpu, server, mse, mse_ns = [], [], [], [], []
            load_before = os.getloadavg()
            for r in range(rounds):
                x = values[:, r]
                c0, t0 = time.process_time(), time.perf_counter()
                reports = m.privatize(x, keys=keys, round=r)
                t1, c1 = time.perf_counter(), time.process_time()
                client_cpu.append(c1 - c0)
                agg = m.aggregate(reports)
                est = m.estimate_frequencies(agg)
                t2 = time.perf_counter()
                truth = np.bincount(x, minlength=k) / n
                mse.append(float(np.mean((est.frequencies - truth) ** 2)))
                mse_ns.append(float(np.mean((m.estimate_frequencies(agg, postprocess="norm-sub").frequencies
                                             - truth) ** 2)))
                client.append(t1 - t0)
                server.append(t2 - t1)
                few = slice(0, min(n, LEDGER_PEOPLE))
                ledger.record_longitudinal(m, people=np.arange(few.stop),
                                           fingerprints=m.memo_fingerprints(x[few], keys=keys[few]), round=r)
            totals = ledger.totals()
            records.append({"library": "ldpnum", "protocol": name, "k": k, "eps_perm": ep, "eps_1": RATIO * ep,
                            "people": n, "rounds_measured": rounds,
                            "client_s_per_round": statistics.median(client),
                            "client_cpu_s_per_round": statistics.median(client_cpu),
                            "load": [load_before[0], os.getloadavg()[0]],
                            "server_s_per_round": statistics.median(server),
                            "mse": mse, "mse_norm_sub": mse_ns, "variance_closed_form": float(np.mean(
                                m.variance(np.bincount(values[:, 0], minlength=k) / n)) / n),
                            "eps_person_median": float(totals.median()), "eps_person_max": float(totals.max()),
                            "eps_naive": rounds * RATIO * ep})
            rec = records[-1]
            print(f"  ldpnum {name} k={k} eps_inf={ep:g}: {n / rec['client_s_per_round']:,.0f} people/s client "
                  f"({rec['client_cpu_s_per_round']:.3f} CPU s/round, load {rec['load'][0]:.1f} → "
                  f"{rec['load'][1]:.1f}), MSE {statistics.mean(mse):.3g}", flush=True)
    return records


#: dBitFlip's setting in the bench: the k values in BUCKETS public buckets, D sampled buckets per person.
BUCKETS, D_BITS = 32, 4


def dbitflip_runs(values, k, rounds):
    """ldpnum's memoized dBitFlip (γ = 0: ε1 = ε∞, the paper's memoization) on the values' buckets."""
    records = []
    n = values.shape[0]
    keys = ldp.ClientKeys.generate(n, rng=2)
    for ep in EPS_PERM:
        m = ldp.DBitFlip(ep, (0, k), buckets=min(BUCKETS, k), d=D_BITS, memoize=True, gamma=0.0)
        m.estimate_histogram(m.aggregate(m.privatize(values[:50_000, 0].astype(float), keys=keys[:50_000])))
        ledger = ldp.PrivacyLedger()
        client, client_cpu, server, mse = [], [], [], []
        load_before = os.getloadavg()
        for r in range(rounds):
            x = values[:, r].astype(float)
            c0, t0 = time.process_time(), time.perf_counter()
            reports = m.privatize(x, keys=keys, round=r)
            t1, c1 = time.perf_counter(), time.process_time()
            client_cpu.append(c1 - c0)
            est = m.estimate_histogram(m.aggregate(reports))
            t2 = time.perf_counter()
            b = min(BUCKETS, k)
            truth = np.bincount((values[:, r] * b) // k, minlength=b) / n
            mse.append(float(np.mean((np.clip(est.frequencies, 0, None) / max(np.clip(est.frequencies, 0, None).sum(),
                                                                                1e-12) - truth) ** 2)))
            client.append(t1 - t0)
            server.append(t2 - t1)
            few = slice(0, min(n, LEDGER_PEOPLE))
            ledger.record_longitudinal(m, people=np.arange(few.stop),
                                       fingerprints=m.memo_fingerprints(x[few], keys=keys[few]), round=r)
        totals = ledger.totals()
        records.append({"library": "ldpnum", "protocol": f"DBitFlip(b={min(BUCKETS, k)}, d={D_BITS}, memoized)", "k": k,
                        "eps_perm": ep, "eps_1": m.epsilon, "people": n, "rounds_measured": rounds,
                        "client_s_per_round": statistics.median(client),
                        "client_cpu_s_per_round": statistics.median(client_cpu),
                        "load": [load_before[0], os.getloadavg()[0]],
                        "server_s_per_round": statistics.median(server), "mse": mse, "mse_norm_sub": mse,
                        "variance_closed_form": float("nan"), "eps_person_median": float(totals.median()),
                        "eps_person_max": float(totals.max()), "eps_naive": rounds * m.epsilon})
        print(f"  ldpnum DBitFlip k={k} eps={ep:g}: {n / statistics.median(client):,.0f} people/s client "
              f"({statistics.median(client_cpu):.3f} CPU s/round, load {load_before[0]:.1f} → "
              f"{os.getloadavg()[0]:.1f})", flush=True)
    return records


#: RAPPOR's setting: the paper's parameters, a dictionary of RAPPOR_CANDIDATES strings of which RAPPOR_PLANTED are
#: held (Zipf) by RAPPOR_SHARE of the people; the others hold strings outside the dictionary.
RAPPOR_CANDIDATES, RAPPOR_PLANTED, RAPPOR_SHARE = 10_000, 100, 0.7


def rappor_run(n):
    """RAPPOR at n people: privatize, aggregate, decode against the dictionary (times after a warm-up), and what
    the decoder detected against what was planted."""
    gen = np.random.default_rng(3)
    candidates = np.array([f"c{i:05d}" for i in range(RAPPOR_CANDIDATES)], dtype=object)
    planted = gen.choice(RAPPOR_CANDIDATES, RAPPOR_PLANTED, replace=False)
    w = 1.0 / np.arange(1, RAPPOR_PLANTED + 1)
    held = gen.random(n) < RAPPOR_SHARE
    items = np.empty(n, dtype=object)
    items[held] = candidates[planted[gen.choice(RAPPOR_PLANTED, held.sum(), p=w / w.sum())]]
    items[~held] = np.array([f"o{i}" for i in gen.integers(0, 10**6, (~held).sum())], dtype=object)
    m = ldp.RAPPOR()
    keys = ldp.ClientKeys.generate(n, rng=4)
    m.estimate_frequencies(m.aggregate(m.privatize(items[:20_000], keys=keys[:20_000])), candidates=candidates[:50])
    t0 = time.perf_counter()
    reports = m.privatize(items, keys=keys)
    t1 = time.perf_counter()
    agg = m.aggregate(reports)
    t2 = time.perf_counter()
    est = m.estimate_frequencies(agg, candidates=candidates)
    t3 = time.perf_counter()
    truth = {c: f for c, f in zip(*np.unique(items[held], return_counts=True))}
    detected = set(est.detected_items)
    planted_set = set(candidates[planted])
    found = [c for c in detected if c in planted_set]
    big = sorted(planted_set, key=lambda c: -truth.get(c, 0))
    return {"library": "ldpnum", "protocol": "RAPPOR(k=128, h=2, cohorts=64, f=0.5, p=0.5, q=0.75)", "people": n,
            "candidates": RAPPOR_CANDIDATES, "planted": RAPPOR_PLANTED, "eps_perm": m.epsilon_permanent,
            "eps_1": m.epsilon, "privatize_s": t1 - t0, "aggregate_s": t2 - t1, "decode_s": t3 - t2,
            "detected": len(detected), "detected_planted": len(found), "false_positives": len(detected) - len(found),
            "smallest_detected_share": min((truth.get(c, 0) / n for c in found), default=float("nan")),
            "largest_missed_share": max((truth.get(c, 0) / n for c in big if c not in detected), default=0.0)}


def rappor_table(r):
    return (f"RAPPOR, paper's parameters (ε∞ = {r['eps_perm']:.2f}, ε1 = {r['eps_1']:.3f}), n = {r['people']:,}, "
            f"{r['candidates']:,} candidates of which {r['planted']} are held by {RAPPOR_SHARE:.0%} of people: "
            f"privatize {r['privatize_s']:.2f} s ({r['people'] / r['privatize_s']:,.0f} people/s), aggregate "
            f"{r['aggregate_s']:.2f} s, decode {r['decode_s']:.2f} s; detected {r['detected']} "
            f"({r['detected_planted']} planted, {r['false_positives']} false positives; the smallest detected holds "
            f"{r['smallest_detected_share']:.3%}, the largest missed {r['largest_missed_share']:.3%}).")


#: ldpnum's protocol names against the peer's.
PEER_NAMES = {"LGRR": "L-GRR", "LOSUE": "L-OSUE"}


def peer_runs(values, k, with_peers, protocols=None):
    """The peer's protocols (``protocols``: only the peers of these of ldpnum's names, and dBitFlipPM only if
    ``DBitFlip`` is among them; ``None``: all)."""
    if not with_peers:
        return []
    venv_py = HERE / ".peers-venv" / "bin" / "python"
    if not venv_py.exists():
        return [{"library": "multi-freq-ldpy", "error": "bench/.peers-venv missing: run bash bench/peers/setup_venv.sh"}]
    with tempfile.TemporaryDirectory() as tmp:
        np.save(Path(tmp) / "values.npy", values[:, :3])
        out = Path(tmp) / "out.json"
        cmd = [str(venv_py), str(HERE / "peers" / "longitudinal_peers.py"), "--values", str(Path(tmp) / "values.npy"),
               "--k", str(k), "--eps-perm", ",".join(f"{e:g}" for e in EPS_PERM), "--ratio", str(RATIO),
               "--rounds", "3", "--json", str(out)]
        if protocols is None or "DBitFlip" in protocols:
            cmd += ["--dbitflip", f"{min(BUCKETS, k)},{D_BITS}"]
        if protocols is not None:
            cmd += ["--only", ",".join(PEER_NAMES.get(p, p) for p in protocols)]
        proc = subprocess.run(cmd)
        if proc.returncode or not out.exists():
            return [{"library": "multi-freq-ldpy", "error": f"longitudinal_peers.py exited with {proc.returncode}"}]
        return json.loads(out.read_text())


def table(records, n):
    lines = ["| library | protocol | k | ε∞ | ε1 | people | client people/s | client CPU µs/person | load (1 min) "
             "before → after | server s/round | MSE (unbiased) | MSE (norm-sub / peer's MI) at n | "
             "ε per person after the rounds: median / max (naive) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    # the peer's protocol names without "-" and "PM", case-folded: "L-OSUE" is LOSUE, "dBitFlipPM(...)" DBitFlip
    peers = {(r["protocol"].replace("-", "").replace("PM", "").split("(")[0].lower(), r["k"], r["eps_perm"]): r
             for r in records if r["library"] != "ldpnum" and "error" not in r}
    for r in records:
        if "error" in r:
            lines.append(f"| {r['library']} | {r.get('protocol', '')} | {r.get('k', '')} | {r.get('eps_perm', '')} | "
                         f"error: {r['error']} |||||||||")
            continue
        rate = r["people"] / r["client_s_per_round"]
        scaled = r["people"] / n
        if r["library"] == "ldpnum":
            mse_pp = f"{statistics.mean(r['mse_norm_sub']):.3g}"
            peer = peers.get((r["protocol"].split("(")[0].lower(), r["k"], r["eps_perm"]))
            ratio = f" ({rate / (peer['people'] / peer['client_s_per_round']):,.0f}× peer" if peer else ""
            if peer and r.get("client_cpu_s_per_round") and peer.get("client_cpu_s_per_round"):
                # CPU per person, the peer's over ldpnum's: what the wall ratio would be if each got its cores
                cpu_ratio = ((peer["client_cpu_s_per_round"] / peer["people"])
                             / (r["client_cpu_s_per_round"] / r["people"]))
                ratio += f"; {cpu_ratio:,.0f}× by CPU"
            ratio += ")" if peer else ""
            eps = f"{r['eps_person_median']:.2f} / {r['eps_person_max']:.2f} ({r['eps_naive']:g})"
            closed = r["variance_closed_form"]
            mse = f"{statistics.mean(r['mse']):.3g}" + ("" if closed != closed else f" (closed form {closed:.3g})")
        else:
            mse_pp = f"{statistics.mean(r['mse']) * scaled:.3g}" + ("" if r["people"] == n else " (scaled)")
            ratio, eps, mse = "", "not memoized", "—"
        cpu = r.get("client_cpu_s_per_round")
        cpu = "—" if cpu is None else f"{cpu / r['people'] * 1e6:.3g}"
        load = r.get("load")
        load = "—" if load is None else f"{load[0]:.1f} → {load[1]:.1f}"
        lines.append(f"| {r['library']} | {r['protocol']} | {r['k']} | {r['eps_perm']:g} | {r['eps_1']:g} | "
                     f"{r['people']:,} | {rate:,.0f}{ratio} | {cpu} | {load} | {r['server_s_per_round']:.3f} | "
                     f"{mse} | {mse_pp} | {eps} |")
    return "\n".join(lines)


def run(n=N, rounds=ROUNDS, with_peers=True, ks=KS, protocols=None):
    """Every section, or (``protocols``) only the named ones: ldpnum's oracles, ``DBitFlip``, ``RAPPOR``."""
    records = []
    for k in ks:
        values = telemetry_population(n, rounds, k, CHANGE)
        records += ldpnum_runs(values, k, rounds, [p for p in PROTOCOLS if protocols is None or p in protocols])
        if protocols is None or "DBitFlip" in protocols:
            records += dbitflip_runs(values, k, rounds)
        records += peer_runs(values, k, with_peers, protocols)
    rappor = rappor_run(n) if protocols is None or "RAPPOR" in protocols else None
    md = (f"### Longitudinal frequency oracles (n = {n:,}, {rounds} rounds, ε1 = ε∞/2, 10% of people change value "
          f"per round)\n\n" + table(records, n))
    if rappor is not None:
        records.append(rappor)
        md += "\n\n" + rappor_table(rappor)
    return records, md


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=N)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--k", default=",".join(map(str, KS)))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--protocols", default=None, help="only these, comma-separated (LGRR, LOSUE, LOLOHA, DBitFlip, "
                    "RAPPOR); default: all")
    args = ap.parse_args()
    protocols = None if args.protocols is None else args.protocols.split(",")
    records, md = run(int(args.n), args.rounds, not args.no_peers, tuple(int(k) for k in args.k.split(",")),
                      protocols)
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps(records))


if __name__ == "__main__":
    main()
