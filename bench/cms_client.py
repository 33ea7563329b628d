"""The count-mean sketch's client alone: the ``huge-domains`` section's client table (``bench/huge_domains.py``).

Apple's parameters (width 1024, 256 hash functions, category codes of a Zipf law over k = 3,307,948), ε = 4 by
default. Rows (:data:`huge_domains.CLIENT_ROWS`, timed by :func:`huge_domains.cms_client`, the section's code):
ldpnum's CMS with the sparse layout of the other bits (the default, :class:`ldpnum.frequency.unary.SparseBits`) and
with SUE's lanes (the layout before it, forced through the plan), and HCMS, each seeded (PCG64 words) and secure
(``rng=None``): wall and CPU seconds (``time.process_time``, all threads) are medians of ``--repeats`` calls on
``--n`` people after an untimed call that compiles; pure-ldp's CMS and HCMS clients (``CMSClient.privatise``,
person by person, ``bench/peers/sketch_peers.py`` in the peers' virtual environment) on as many people as take
about ``--peer-seconds``. The load average is given around each row: compare the ratios of one run.

Runs alone: ``python bench/cms_client.py [--n 1000000] [--epsilon 4] [--repeats 3] [--peers-venv DIR]`` (default
``bench/.peers-venv``, or ``$PEERS_VENV``); ``--no-peers`` skips pure-ldp. Writes
``bench/results/cms-client-<time>.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from huge_domains import CLIENT_EPSILON, CLIENT_N, cms_client  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=CLIENT_N)
    ap.add_argument("--epsilon", type=float, default=CLIENT_EPSILON)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-seconds", type=float, default=10.0)
    ap.add_argument("--peers-venv", default=None, help="the peers' virtual environment (default bench/.peers-venv)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.peers_venv:
        os.environ["PEERS_VENV"] = args.peers_venv
    records, md = cms_client(args.n, args.epsilon, args.repeats, not args.no_peers, args.peer_seconds)
    print(md)
    path = Path(args.json) if args.json else HERE / "results" / f"cms-client-{time.strftime('%Y%m%dT%H%MZ', time.gmtime())}.json"
    path.write_text(json.dumps(records, indent=1))
    print(f"\nwrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
