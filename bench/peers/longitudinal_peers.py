"""multi-freq-ldpy's longitudinal protocols on given rounds of values (run inside bench/.peers-venv by
``bench/longitudinal.py``).

Input: an ``(n, rounds)`` int .npy of each person's value per round. For each protocol and ε∞ (ε1 = ratio·ε∞), the
peer's client is called once per person per round (its API takes one value; it does not memoize across calls, so
the first-round (permanent) response is drawn afresh each round), then its MI aggregator estimates the round's
frequencies. If a pilot round projects more than ``--max-seconds`` per round, the first people are used, sized to
``--target-seconds``. Output: JSON records with people used, client and server seconds per round (median), and the
MSE of each measured round against that round's true frequencies, the client's CPU seconds per round
(``time.process_time``) and the 1-minute load average before and after each cell.
"""

import argparse
import json
import os
import statistics
import time

import numpy as np


def protocols(k):
    from multi_freq_ldpy.long_freq_est.L_GRR import L_GRR_Aggregator_MI, L_GRR_Client
    from multi_freq_ldpy.long_freq_est.L_OSUE import L_OSUE_Aggregator_MI, L_OSUE_Client
    from multi_freq_ldpy.long_freq_est.L_SOUE import L_SOUE_Aggregator_MI, L_SOUE_Client

    return {
        "L-GRR": (lambda v, ep, e1: L_GRR_Client(int(v), k, ep, e1), lambda r, ep, e1: L_GRR_Aggregator_MI(r, k, ep, e1)),
        "L-OSUE": (lambda v, ep, e1: L_OSUE_Client(int(v), k, ep, e1), lambda r, ep, e1: L_OSUE_Aggregator_MI(r, ep, e1)),
        "L-SOUE": (lambda v, ep, e1: L_SOUE_Client(int(v), k, ep, e1), lambda r, ep, e1: L_SOUE_Aggregator_MI(r, ep, e1)),
    }


def dbitflip(k, b, d):
    from multi_freq_ldpy.long_freq_est.dBitFlipPM import dBitFlipPM_Aggregator_MI, dBitFlipPM_Client

    return (lambda v, ep, e1: dBitFlipPM_Client(int(v), k, b, d, ep),
            lambda r, ep, e1: dBitFlipPM_Aggregator_MI(r, b, d, ep))


def one_round_buckets(client, server, x, ep, k, b):
    """A dBitFlipPM round: MSE of the bucket histogram (bucket of v = floor(v·b/k))."""
    c0, t0 = time.process_time(), time.perf_counter()
    reports = [client(v, ep, None) for v in x]
    t1, c1 = time.perf_counter(), time.process_time()
    est = np.asarray(server(reports, ep, None), dtype=float)
    t2 = time.perf_counter()
    truth = np.bincount((x * b) // k, minlength=b) / len(x)
    return t1 - t0, t2 - t1, float(np.mean((est - truth) ** 2)), c1 - c0


def one_round(client, server, x, ep, e1, k):
    c0, t0 = time.process_time(), time.perf_counter()
    reports = [client(v, ep, e1) for v in x]
    t1, c1 = time.perf_counter(), time.process_time()
    est = np.asarray(server(reports, ep, e1), dtype=float)
    t2 = time.perf_counter()
    truth = np.bincount(x, minlength=k) / len(x)
    return t1 - t0, t2 - t1, float(np.mean((est - truth) ** 2)), c1 - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--eps-perm", default="1,2,4")
    ap.add_argument("--ratio", type=float, default=0.5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-seconds", type=float, default=30.0)
    ap.add_argument("--target-seconds", type=float, default=10.0)
    ap.add_argument("--json", required=True)
    ap.add_argument("--dbitflip", default=None, metavar="B,D", help="also dBitFlipPM with B buckets and D bits")
    ap.add_argument("--only", default=None, metavar="NAMES", help="only these protocols (comma-separated, e.g. L-OSUE)")
    args = ap.parse_args()
    only = None if args.only is None else set(args.only.split(","))
    values = np.load(args.values)
    n, total_rounds = values.shape
    records = []
    for name, (client, server) in protocols(args.k).items():
        if only is not None and name not in only:
            continue
        for ep in (float(e) for e in args.eps_perm.split(",")):
            e1 = args.ratio * ep
            pilot = values[: min(n, 2000), 0]
            t0 = time.perf_counter()
            one_round(client, server, pilot, ep, e1, args.k)
            per_person = (time.perf_counter() - t0) / len(pilot)
            used = n if per_person * n <= args.max_seconds else max(1000, int(args.target_seconds / per_person))
            load_before = os.getloadavg()
            rows = [one_round(client, server, values[:used, r], ep, e1, args.k)
                    for r in range(min(args.rounds, total_rounds))]
            records.append({"library": "multi-freq-ldpy 0.2.5", "protocol": name, "k": args.k, "eps_perm": ep,
                            "eps_1": e1, "people": used, "rounds_measured": len(rows),
                            "client_s_per_round": statistics.median(r[0] for r in rows),
                            "client_cpu_s_per_round": statistics.median(r[3] for r in rows),
                            "load": [load_before[0], os.getloadavg()[0]],
                            "server_s_per_round": statistics.median(r[1] for r in rows),
                            "mse": [r[2] for r in rows]})
            print(f"  peer {name} k={args.k} eps_inf={ep:g}: {used:,} people, "
                  f"{used / records[-1]['client_s_per_round']:,.0f} people/s client", flush=True)
    if args.dbitflip:
        b, d = (int(v) for v in args.dbitflip.split(","))
        client, server = dbitflip(args.k, b, d)
        for ep in (float(e) for e in args.eps_perm.split(",")):
            pilot = values[: min(n, 2000), 0]
            t0 = time.perf_counter()
            one_round_buckets(client, server, pilot, ep, args.k, b)
            per_person = (time.perf_counter() - t0) / len(pilot)
            used = n if per_person * n <= args.max_seconds else max(1000, int(args.target_seconds / per_person))
            load_before = os.getloadavg()
            rows = [one_round_buckets(client, server, values[:used, r], ep, args.k, b)
                    for r in range(min(args.rounds, total_rounds))]
            records.append({"library": "multi-freq-ldpy 0.2.5", "protocol": f"dBitFlipPM(b={b}, d={d})",
                            "k": args.k, "eps_perm": ep, "eps_1": ep, "people": used, "rounds_measured": len(rows),
                            "client_s_per_round": statistics.median(r[0] for r in rows),
                            "client_cpu_s_per_round": statistics.median(r[3] for r in rows),
                            "load": [load_before[0], os.getloadavg()[0]],
                            "server_s_per_round": statistics.median(r[1] for r in rows),
                            "mse": [r[2] for r in rows]})
            print(f"  peer dBitFlipPM k={args.k} eps={ep:g}: {used:,} people", flush=True)
    with open(args.json, "w") as fh:
        json.dump(records, fh)


if __name__ == "__main__":
    main()
