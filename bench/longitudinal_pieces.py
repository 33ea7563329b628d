"""Where a memoized client's time goes: ns per person of each piece of ``privatize`` (wall and CPU).

For memoized dBitFlip (``buckets = min(32, k)``, d = 4, γ = 0, as in ``bench/longitudinal.py``) and L-OSUE
(ε1 = ε∞/2) at n people: the whole ``privatize``, and its pieces as ``privatize`` runs them on one block — the
memoized values (``_memo_values``), the permanent layer (keyed words and the permanent kernel,
``_permanent_layer``), the keyed words alone (SipHash-2-4, ``permanent_words`` per person), the fresh draw of the
instantaneous layer (the secure stream, as ``privatize`` draws by default) and its kernel. Each figure is the median of ``--reps`` runs after one untimed warm-up (JIT
compile excluded); CPU is ``time.process_time`` (every thread of this process). The machine's 1-minute load average
is printed before and after.

Runs alone: ``python bench/longitudinal_pieces.py [--n 1e6] [--k 1024] [--eps 2] [--reps 5]``.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ldpnum as ldp  # noqa: E402
from ldpnum._random import resolve_rng  # noqa: E402
from ldpnum.longitudinal.keys import keyed_words  # noqa: E402


def timed(fn, reps):
    """``(wall, cpu)`` medians of ``reps`` calls of ``fn`` after one warm-up call."""
    fn()
    wall, cpu = [], []
    for _ in range(reps):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def pieces(m, values, keys, reps):
    """``{piece: (wall s, cpu s)}`` of one ``privatize`` call and of its pieces on all ``n`` people at once."""
    n = values.shape[0]
    prepared = m.prepare_values(values)
    out = {"privatize": timed(lambda: m.privatize(values, keys=keys), reps)}  # secure, as the bench
    memo, inputs = m._memo_values(prepared, keys)
    inputs.flags.writeable = False
    out["memoized values"] = timed(lambda: m._memo_values(prepared, keys), reps)
    perm = m._allocate_permanent(n)
    out["permanent layer"] = timed(lambda: m._permanent_layer(inputs, memo, keys, perm), reps)
    c_perm, c_inst = m.permanent_words, m.instantaneous_words
    out[f"keyed words alone ({c_perm}/person)"] = timed(lambda: keyed_words(keys, m.tweak, memo, c_perm), reps)
    if c_inst:
        source = resolve_rng(None)  # the secure stream (AES-128-CTR), as privatize draws by default
        out[f"fresh draw ({c_inst}/person)"] = timed(lambda: source.draw(n * c_inst), reps)
        fresh = source.draw(n * c_inst)
        perm.flags.writeable = False
        rep = m._allocate_reports(n)
        out["instantaneous kernel"] = timed(lambda: m._run_instantaneous(perm, fresh, rep), reps)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--eps", type=float, default=2.0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", choices=("dbitflip", "losue"), default=None)
    args = ap.parse_args()
    n, k = int(args.n), args.k
    gen = np.random.default_rng(0)
    cats = gen.integers(0, k, n)
    keys = ldp.ClientKeys.generate(n, rng=1)
    mechs = {"dbitflip": (ldp.DBitFlip(args.eps, (0, k), buckets=min(32, k), d=4, memoize=True, gamma=0.0),
                          cats.astype(float)),
             "losue": (ldp.LOSUE(args.eps, args.eps / 2, k), cats)}
    print(f"n = {n:,}, k = {k}, eps_inf = {args.eps:g}, load before {os.getloadavg()[0]:.2f}")
    for name, (m, values) in mechs.items():
        if args.only and name != args.only:
            continue
        print(f"{m!r}")
        for piece, (wall, cpu) in pieces(m, values, keys, args.reps).items():
            print(f"  {piece:<32} {wall / n * 1e9:8.1f} ns/person wall {cpu / n * 1e9:8.1f} ns/person CPU")
    print(f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
