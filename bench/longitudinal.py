"""Repeated collection (``make bench``, section ``longitudinal``): ldpnum's longitudinal frequency oracles against
multi-freq-ldpy 0.2.5's L-GRR, L-OSUE and L-SOUE, and the per-person ε after many rounds with memoization against
naive repeated collection.

Data: :func:`ldpnum.demo.telemetry_population` — n people, each with one of k categories (Zipf popularity), 10% of
them switching to another category each round (seed 0). Parameters: n = 1e6, k ∈ {16, 1024}, ε∞ ∈ {1, 2, 4},
ε1 = ε∞/2, 30 rounds.

ldpnum: every longitudinal frequency oracle it has (L-GRR, and L-OSUE and LOLOHA when present), each person with
a key (:class:`ldpnum.ClientKeys`, seeded), secure instantaneous randomness, ``privatize(..., keys=, round=r)``
timed per round (client), ``aggregate`` + ``estimate_frequencies`` timed per round (server; median over rounds,
JIT compile excluded by one untimed warm-up round). MSE of the frequencies against the round's truth, averaged
over rounds, for the unbiased estimate and after norm-sub (multi-freq-ldpy's MI estimator clips negatives and
renormalizes, so its MSE is comparable with norm-sub). Per-person ε: a :class:`ldpnum.PrivacyLedger` records every
round of the first ``LEDGER_PEOPLE`` people (``record_longitudinal``); the table gives the median and largest
total after all rounds against naive collection (ε1 per report: rounds·ε1 for everyone).

Peer (bench/.peers-venv, ``bench/peers/longitudinal_peers.py``): its clients take one value per call and draw the
first-round response afresh at every call (no memoization across rounds: a deployment would store it), so each
round is a full run of its client over the people; three rounds measured, on the first people when a pilot
projects a round beyond 30 s (sized to ~10 s). Its MSE at fewer people is scaled to n (MSE ∝ 1/n for these
estimators) and marked so.

Runs alone: ``python bench/longitudinal.py [--n 1e5] [--rounds 5] [--no-peers]``.
"""

import argparse
import json
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


def ldpnum_runs(values, k, rounds):
    records = []
    n = values.shape[0]
    keys = ldp.ClientKeys.generate(n, rng=1)
    for name in PROTOCOLS:
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
            client, server, mse, mse_ns = [], [], [], []
            for r in range(rounds):
                x = values[:, r]
                t0 = time.perf_counter()
                reports = m.privatize(x, keys=keys, round=r)
                t1 = time.perf_counter()
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
                            "server_s_per_round": statistics.median(server),
                            "mse": mse, "mse_norm_sub": mse_ns, "variance_closed_form": float(np.mean(
                                m.variance(np.bincount(values[:, 0], minlength=k) / n)) / n),
                            "eps_person_median": float(totals.median()), "eps_person_max": float(totals.max()),
                            "eps_naive": rounds * RATIO * ep})
            rec = records[-1]
            print(f"  ldpnum {name} k={k} eps_inf={ep:g}: {n / rec['client_s_per_round']:,.0f} people/s client, "
                  f"MSE {statistics.mean(mse):.3g}", flush=True)
    return records


def peer_runs(values, k, with_peers):
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
        proc = subprocess.run(cmd)
        if proc.returncode or not out.exists():
            return [{"library": "multi-freq-ldpy", "error": f"longitudinal_peers.py exited with {proc.returncode}"}]
        return json.loads(out.read_text())


def table(records, n):
    lines = ["| library | protocol | k | ε∞ | ε1 | people | client people/s | server s/round | MSE (unbiased) | "
             "MSE (norm-sub / peer's MI) at n | ε per person after the rounds: median / max (naive) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    peers = {(r["protocol"].replace("-", ""), r["k"], r["eps_perm"]): r for r in records
             if r["library"] != "ldpnum" and "error" not in r}
    for r in records:
        if "error" in r:
            lines.append(f"| {r['library']} | {r.get('protocol', '')} | {r.get('k', '')} | {r.get('eps_perm', '')} | "
                         f"error: {r['error']} |||||||")
            continue
        rate = r["people"] / r["client_s_per_round"]
        scaled = r["people"] / n
        if r["library"] == "ldpnum":
            mse_pp = f"{statistics.mean(r['mse_norm_sub']):.3g}"
            peer = peers.get((r["protocol"], r["k"], r["eps_perm"]))
            ratio = f" ({rate / (peer['people'] / peer['client_s_per_round']):,.0f}× peer)" if peer else ""
            eps = f"{r['eps_person_median']:.2f} / {r['eps_person_max']:.2f} ({r['eps_naive']:g})"
            mse = f"{statistics.mean(r['mse']):.3g} (closed form {r['variance_closed_form']:.3g})"
        else:
            mse_pp = f"{statistics.mean(r['mse']) * scaled:.3g}" + ("" if r["people"] == n else " (scaled)")
            ratio, eps, mse = "", "not memoized", "—"
        lines.append(f"| {r['library']} | {r['protocol']} | {r['k']} | {r['eps_perm']:g} | {r['eps_1']:g} | "
                     f"{r['people']:,} | {rate:,.0f}{ratio} | {r['server_s_per_round']:.3f} | {mse} | {mse_pp} | {eps} |")
    return "\n".join(lines)


def run(n=N, rounds=ROUNDS, with_peers=True, ks=KS):
    records = []
    for k in ks:
        values = telemetry_population(n, rounds, k, CHANGE)
        records += ldpnum_runs(values, k, rounds)
        records += peer_runs(values, k, with_peers)
    md = (f"### Longitudinal frequency oracles (n = {n:,}, {rounds} rounds, ε1 = ε∞/2, 10% of people change value "
          f"per round)\n\n" + table(records, n))
    return records, md


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=N)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--k", default=",".join(map(str, KS)))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    records, md = run(int(args.n), args.rounds, not args.no_peers, tuple(int(k) for k in args.k.split(",")))
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps(records))


if __name__ == "__main__":
    main()
