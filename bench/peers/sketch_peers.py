"""Time pure-ldp's count-mean sketches, CMS and HCMS, on huge-domain codes (section ``huge-domains``).

Runs INSIDE the peer virtual environment (bench/.peers-venv). ldpnum's side writes the people's codes (int64, a
Zipf law over k = 3,307,948) to a ``.npy`` file; pure-ldp takes each code as the string ``str(code)``.
``CMSClient``/``CMSServer`` with ``--hashes`` hash functions into ``--width`` cells (``is_hadamard`` False: CMS,
True: HCMS), as ldpnum's ``CountMeanSketch`` is configured. pure-ldp has no batch API: the client is one
``privatise`` call per person and the server one ``aggregate`` call per report, timed separately; then
``estimate(str(c))`` for each of the ``--candidates`` most frequent codes (0..candidates-1). n is the first people
sized by a pilot of ``PILOT_N`` so that client + server take about ``--target-seconds``. The MSE is over the
candidates at that n (ldpnum's side scales it to its own n). pure-ldp 1.2's server base class calls
``np.zeros(None)``, which NumPy 2 rejects: ``heavy_peers._numpy2_shim`` restores NumPy 1's answer for that module.

Usage::

    bench/.peers-venv/bin/python bench/peers/sketch_peers.py --codes codes.npy --epsilon 5 --width 1024 \\
        --hashes 256 --candidates 10000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heavy_peers import _numpy2_shim  # noqa: E402

PILOT_N = 2_000


def build(epsilon, width, hashes, hadamard):
    _numpy2_shim()
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
    server = CMSServer(epsilon, hashes, width, is_hadamard=hadamard)
    client = CMSClient(epsilon, server.get_hash_funcs(), width, is_hadamard=hadamard)
    return client, server


def collect(client, server, strings):
    t0 = time.perf_counter()
    reports = [client.privatise(s) for s in strings]
    t1 = time.perf_counter()
    for r in reports:
        server.aggregate(r)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--codes", required=True)
    ap.add_argument("--epsilon", type=float, default=5.0)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--hashes", type=int, default=256)
    ap.add_argument("--candidates", type=int, default=10_000)
    ap.add_argument("--target-seconds", type=float, default=20.0)
    ap.add_argument("--json", required=True)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    codes = np.load(args.codes)
    version = metadata.version("pure-ldp")
    records = []
    for variant, hadamard in (("cms", False), ("hcms", True)):
        base = {"library": "pure-ldp", "version": version, "variant": variant, "epsilon": args.epsilon}
        try:
            pilot = min(PILOT_N, len(codes))
            c_s, a_s = collect(*build(args.epsilon, args.width, args.hashes, hadamard),
                               [str(int(v)) for v in codes[:pilot]])
            per_person = (c_s + a_s) / pilot
            n = int(min(len(codes), max(pilot, args.target_seconds / per_person)))
            n = int(float(f"{n:.2g}")) if n < len(codes) else n
            client, server = build(args.epsilon, args.width, args.hashes, hadamard)
            strings = [str(int(v)) for v in codes[:n]]
            c_s, a_s = collect(client, server, strings)
            t0 = time.perf_counter()
            est = np.array([server.estimate(str(c), suppress_warnings=True) for c in range(args.candidates)])
            e_s = time.perf_counter() - t0
            truth = np.bincount(codes[:n][codes[:n] < args.candidates], minlength=args.candidates) / n
            mse = float(np.mean((est / n - truth) ** 2))
            records.append({**base, "n": n, "client_people_per_s": n / c_s, "aggregate_people_per_s": n / a_s,
                            "estimate_s_per_candidate": e_s / args.candidates, "mse": mse})
            print(f"pure-ldp {variant}: n={n:,} client {n / c_s:,.0f}/s, server {n / a_s:,.0f}/s, "
                  f"estimate {e_s:.1f} s", file=sys.stderr, flush=True)
        except Exception as exc:  # a variant that does not run is reported, not fatal
            records.append({**base, "error": repr(exc)})
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(records, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
