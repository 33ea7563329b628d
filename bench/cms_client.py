"""The count-mean sketch's client: people/s of ``CountMeanSketch.privatize``, its two layouts, and pure-ldp's, in one run.

Apple's parameters as in ``bench/huge_domains.py`` (width 1024, 256 hash functions, category codes of a Zipf law over
k = 3,307,948), ε = 4 by default. Rows:

* ldpnum CMS with the sparse layout of the other bits (the default, :class:`ldpnum.frequency.unary.SparseBits`) and
  with SUE's lanes (the layout before it, forced through the plan), seeded (PCG64 words) and secure (``rng=None``);
  ldpnum HCMS, seeded. Wall and CPU seconds (``time.process_time``, all threads) are medians of ``--repeats`` calls on
  ``--n`` people after an untimed call that compiles;
* pure-ldp's CMS and HCMS client (``CMSClient.privatise``, person by person, ``bench/peers/sketch_peers.py`` in the
  peers' virtual environment), on as many people as take about ``--peer-seconds``.

The load average (1 minute) is printed before and after each row: the machine may be shared, so compare the ratios
of one run, not figures across runs.

Runs alone: ``python bench/cms_client.py [--n 1000000] [--epsilon 4] [--repeats 3] [--peers-venv DIR]`` (default
``bench/.peers-venv``, or ``$PEERS_VENV``); ``--no-peers`` skips pure-ldp.
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
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import ldpnum as ldp  # noqa: E402
from huge_domains import K, SKETCH, zipf_people  # noqa: E402


def load() -> float:
    return round(os.getloadavg()[0], 2)


def lanes(m: ldp.CountMeanSketch) -> ldp.CountMeanSketch:
    """``m`` drawing its other bits from SUE's lanes (the layout before the sparse one)."""
    m._plan = dataclasses.replace(m.plan, sparse=None)
    return m


def time_client(m, x, repeats, rng):
    m.privatize(x[:1000], rng=0)  # compiles (or loads the cache): not timed
    walls, cpus, loads = [], [], [load()]
    for rep in range(repeats):
        seed = None if rng is None else rng + rep
        t0, c0 = time.perf_counter(), time.process_time()
        m.privatize(x, rng=seed)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        loads.append(load())
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    return {"n": len(x), "words_per_person": m.words_per_record, "wall_s": wall, "cpu_s": cpu,
            "people_per_s": len(x) / wall, "cpu_us_per_person": 1e6 * cpu / len(x), "load": loads}


def peers(x, epsilon, peer_seconds, venv):
    py = Path(venv) / "bin" / "python"
    if not py.exists():
        return [{"library": "pure-ldp", "error": f"{venv} missing: run bash bench/peers/setup_venv.sh"}]
    with tempfile.TemporaryDirectory() as tmp:
        codes, out = Path(tmp) / "codes.npy", Path(tmp) / "peers.json"
        np.save(codes, np.asarray(x[:200_000], dtype=np.int64))
        before = load()
        subprocess.run([str(py), str(HERE / "peers" / "sketch_peers.py"), "--codes", str(codes), "--epsilon",
                        str(epsilon), "--width", str(SKETCH["width"]), "--hashes", str(SKETCH["hashes"]),
                        "--candidates", "100", "--target-seconds", str(peer_seconds), "--json", str(out)],
                       check=True)
        records = json.loads(out.read_text())
    for r in records:
        r["load"] = [before, load()]
    return records


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-seconds", type=float, default=10.0)
    ap.add_argument("--peers-venv", default=os.environ.get("PEERS_VENV", str(HERE / ".peers-venv")))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    x = zipf_people(args.n)
    eps = args.epsilon

    def cms():
        return ldp.CountMeanSketch(eps, K, **SKETCH)

    rows = {}
    for label, build, rng in (("ldpnum CMS, sparse bits, seeded", cms, 1),
                              ("ldpnum CMS, SUE lanes, seeded", lambda: lanes(cms()), 1),
                              ("ldpnum CMS, sparse bits, secure", cms, None),
                              ("ldpnum CMS, SUE lanes, secure", lambda: lanes(cms()), None),
                              ("ldpnum HCMS, seeded", lambda: ldp.CountMeanSketch(eps, K, variant="hcms", **SKETCH),
                               1)):
        rows[label] = time_client(build(), x, args.repeats, rng)
        r = rows[label]
        print(f"{label}: {r['people_per_s']:,.0f} people/s ({r['cpu_us_per_person']:.2f} µs CPU/person, "
              f"{r['words_per_person']} words/person), load {r['load']}", file=sys.stderr, flush=True)
    peer = [] if args.no_peers else peers(x, eps, args.peer_seconds, args.peers_venv)
    by_variant = {p["variant"]: p for p in peer if "client_people_per_s" in p}
    print(f"\nCountMeanSketch client, n = {args.n:,}, ε = {eps}, width {SKETCH['width']}, {SKETCH['hashes']} hashes "
          f"(medians of {args.repeats}; load average before/after each call)\n")
    print("| client | people/s | CPU µs/person | words/person | × pure-ldp | load |")
    print("|---|---|---|---|---|---|")
    for label, r in rows.items():
        ref = by_variant.get("hcms" if "HCMS" in label else "cms")
        ratio = f"{r['people_per_s'] / ref['client_people_per_s']:,.0f}×" if ref else "n/a"
        print(f"| {label} | {r['people_per_s']:,.0f} | {r['cpu_us_per_person']:.2f} | {r['words_per_person']} | "
              f"{ratio} | {min(r['load'])}–{max(r['load'])} |")
    for p in peer:
        if "client_people_per_s" in p:
            print(f"| pure-ldp {p['version']} {p['variant'].upper()} (n = {p['n']:,}) | "
                  f"{p['client_people_per_s']:,.0f} | | | 1× | {p['load'][0]}–{p['load'][1]} |")
        else:
            print(f"| pure-ldp {p.get('variant', '')} | error: {p['error']} | | | | |")
    path = Path(args.json) if args.json else HERE / "results" / f"cms-client-{time.strftime('%Y%m%dT%H%MZ', time.gmtime())}.json"
    path.write_text(json.dumps({"n": args.n, "epsilon": eps, **SKETCH, "ldpnum": rows, "peers": peer}, indent=1))
    print(f"\nwrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
