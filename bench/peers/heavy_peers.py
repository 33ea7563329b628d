"""Time pure-ldp's heavy-hitter protocols on a word sample (section ``heavy`` of ``bench/run.py``).

Runs INSIDE the peer virtual environment (bench/.peers-venv); ldpnum's side writes the people's items as
64-bit words (the UTF-8 bytes of each word cut to 8 bytes, zero-padded, big-endian: what ldpnum encodes at
``item_bits=64``) to a ``.npy`` file and scores what this script returns against the truth, so both libraries
see the same items and are scored by the same code.

pure-ldp's heavy hitters take strings over an alphabet; each person's item is its 64-bit word written as a
64-character bit string (alphabet ``0``/``1``), converted before timing.  Configuration, identical for every
method and ε:

* frequency oracle: pure-ldp's Hadamard count-mean sketch (``CMSClient``/``CMSServer`` with
  ``is_hadamard=True``), ``CMS_K`` hash functions into ``CMS_M`` cells.  The default oracle (OLH through
  ``LHServer``) enumerates the whole domain, 2^64 strings, for every estimate: it never finishes.
  pure-ldp 1.2's oracle base class calls ``np.zeros(None)``, which NumPy 2 rejects: :func:`_numpy2_shim`
  restores NumPy 1's answer for that module only.
* ``pem``: ``PEMClient``/``PEMServer``, start length ``PEM_START`` bits and ``PEM_FRAGMENT`` bits per group,
  so ``(64 - 4) / 4 = 15`` groups, as many as ldpnum's PEM at top_k = 20.  (A start length that leaves
  ``64 - s`` not a multiple of the fragment length makes pure-ldp's last candidates longer than the reports,
  so that none can match.)
* ``pem_cms``: the same PEM with the plain count-mean sketch (``is_hadamard=False``: each report is a vector
  of ``CMS_M`` signs with every sign flipped with probability ``1/(1 + e^(ε/2))``), slower per person but
  not limited to one bit per report.
* ``treehist``: ``TreeHistClient``/``TreeHistServer``, one bit per level (``TREEHIST_FRAGMENT``); as
  pure-ldp implements it every person sends a prefix report and a whole-word report, each at ε/2.
* ``sfp``: Apple's sequence fragment puzzle (``SFPClient``/``SFPServer``), ``SFP_FRAGMENT`` bits per fragment,
  ε/2 each for fragment and word.

Each person is one ``privatise`` call and one ``aggregate`` call (pure-ldp has no batch API); the end-to-end
time is that loop plus ``find_heavy_hitters(k=20)``.  ``find_heavy_hitters(k=50)`` is then run on the same
server (timed separately).  n is the requested n when a pilot projects one run to take at most
``--max-seconds``, else the first ``n`` people sized to take about ``--target-seconds``.  pure-ldp draws
its noise from Python's ``random`` and NumPy's global generator, unseeded (as in run_peers.py).

Usage::

    bench/.peers-venv/bin/python bench/peers/heavy_peers.py --words items.npy --n 1000000 \\
        --epsilon 2,4,8 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from importlib import metadata

import numpy as np

CMS_K = 256
CMS_M = 1024
PEM_START = 4
PEM_FRAGMENT = 4
TREEHIST_FRAGMENT = 1
SFP_FRAGMENT = 2
ITEM_BITS = 64
PILOT_N = 10_000


def _numpy2_shim():
    """pure-ldp 1.2's ``FreqOracleServer`` calls ``np.zeros(self.d)`` with ``d=None`` for sketch oracles, which
    NumPy 2 rejects (NumPy 1 returned a 0-d array, unused by the sketches).  Give that one module a ``zeros``
    that maps ``None`` to ``()``, as NumPy 1 did; nothing else changes."""
    import types
    from pure_ldp.core import _freq_oracle_server as mod
    if getattr(mod.np, "_ldpnum_shim", False):
        return
    shim = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    shim.zeros = lambda shape, *a, **kw: np.zeros(() if shape is None else shape, *a, **kw)
    shim._ldpnum_shim = True
    mod.np = shim


def _cms(epsilon, hadamard=True):
    _numpy2_shim()
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
    server = CMSServer(epsilon, CMS_K, CMS_M, is_hadamard=hadamard)
    client = CMSClient(epsilon, server.get_hash_funcs(), CMS_M, is_hadamard=hadamard)
    return client, server


def build(method, epsilon):
    """Return ``(client, server)`` for ``method`` at ``epsilon`` (configuration in the module docstring)."""
    fo_client, fo_server = _cms(epsilon, hadamard=method != "pem_cms")
    if method in ("pem", "pem_cms"):
        from pure_ldp.heavy_hitters.prefix_extending import PEMClient, PEMServer
        return (PEMClient(epsilon, PEM_START, ITEM_BITS, PEM_FRAGMENT, fo_client=fo_client),
                PEMServer(epsilon, PEM_START, ITEM_BITS, PEM_FRAGMENT, fo_server=fo_server))
    if method == "treehist":
        from pure_ldp.heavy_hitters.treehistogram import TreeHistClient, TreeHistServer
        return (TreeHistClient(epsilon, TREEHIST_FRAGMENT, ITEM_BITS, fo_client=fo_client),
                TreeHistServer(epsilon, ITEM_BITS, TREEHIST_FRAGMENT, fo_server=fo_server))
    if method == "sfp":
        from pure_ldp.heavy_hitters.apple_sfp import SFPClient, SFPServer
        alphabet = {"0", "1"}  # SFPServer adds the padding character to it: a set, not the default list
        return (SFPClient(epsilon, SFP_FRAGMENT, ITEM_BITS, alphabet=alphabet, fo_client=fo_client),
                SFPServer(epsilon, SFP_FRAGMENT, ITEM_BITS, alphabet=set(alphabet), fo_server=fo_server))
    raise ValueError(f"unknown method {method!r}")


def run_once(method, epsilon, strings):
    """One collection: returns (seconds end to end at k=20, seconds of the k=50 search, top-20, top-50)."""
    client, server = build(method, epsilon)
    t0 = time.perf_counter()
    for s in strings:
        server.aggregate(client.privatise(s))
    top20 = server.find_heavy_hitters(k=20)
    t1 = time.perf_counter()
    top50 = server.find_heavy_hitters(k=50)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, top20, top50


def _decode(found, n):
    """pure-ldp's (items, counts) as (64-bit words, fractions of n); items that are not 64 bits are dropped."""
    items, counts = found
    words, freqs = [], []
    for s, c in zip(items, counts):
        s = str(s)
        if len(s) == ITEM_BITS and set(s) <= {"0", "1"}:
            words.append(int(s, 2))
            freqs.append(float(c) / n)
    return words, freqs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--words", required=True, help=".npy file of uint64 items, one per person")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--epsilon", default="2,4,8")
    ap.add_argument("--methods", default="pem,pem_cms,treehist,sfp")
    ap.add_argument("--max-seconds", type=float, default=60.0, help="run at --n when a pilot projects at most this")
    ap.add_argument("--target-seconds", type=float, default=30.0, help="else size n to about this")
    ap.add_argument("--json", required=True)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    words = np.load(args.words)
    n_req = min(args.n, len(words))
    strings = [format(int(w), "064b") for w in words[:n_req]]
    epsilons = [float(e) for e in args.epsilon.split(",")]
    version = metadata.version("pure-ldp")
    records = []
    for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
        base = {"library": "pure-ldp", "version": version, "method": method}
        try:
            pilot = min(PILOT_N, n_req)
            t_pilot, _, _, _ = run_once(method, epsilons[len(epsilons) // 2], strings[:pilot])
            t_small, _, _, _ = run_once(method, epsilons[len(epsilons) // 2], strings[:pilot // 10])
            per_person = max((t_pilot - t_small) / (pilot - pilot // 10), 1e-9)
            fixed = max(t_pilot - per_person * pilot, 0.0)
            projected = fixed + per_person * n_req
            if projected <= args.max_seconds:
                n = n_req
            else:
                n = int((args.target_seconds - fixed) / per_person) if args.target_seconds > fixed else pilot
                n = max(pilot, min(n_req, int(float(f"{n:.2g}"))))
            print(f"pure-ldp {method}: pilot {per_person * 1e6:.1f} µs/person + {fixed:.1f} s, "
                  f"projected {projected:.0f} s at n={n_req:.0e}; running n={n:,}", file=sys.stderr, flush=True)
        except Exception as exc:  # a method that does not run is reported, not fatal
            records.append({**base, "error": f"pilot: {exc!r}"})
            print(f"pure-ldp {method} failed: {exc!r}", file=sys.stderr, flush=True)
            continue
        for eps in epsilons:
            try:
                secs, secs50, top20, top50 = run_once(method, eps, strings[:n])
            except Exception as exc:
                records.append({**base, "epsilon": eps, "n": n, "error": repr(exc)})
                continue
            w20, f20 = _decode(top20, n)
            w50, f50 = _decode(top50, n)
            records.append({**base, "epsilon": eps, "n": n, "n_requested": n_req,
                            "projected_seconds_at_n_requested": projected, "seconds": secs,
                            "seconds_top50_search": secs50, "top20": w20, "freq20": f20,
                            "top50": w50, "freq50": f50, "returned20": len(top20[0]),
                            "returned50": len(top50[0])})
            print(f"pure-ldp {method} eps={eps:g} n={n:,}: {secs:.1f} s", file=sys.stderr, flush=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(records, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
