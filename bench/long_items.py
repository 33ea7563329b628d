"""Items longer than 8 bytes (``make bench``, section ``long-items``): people/s at item_bits = 64 and 256.

Every mechanism over items (the count-mean sketch, RAPPOR, PEM, TreeHist) takes items of up to 256 bits. Items up to
64 bits are one word each; wider ones are rows of four words: the hash-based mechanisms hash one 64-bit digest per
item (a public mix of its words, the spec's ``digest``), the prefix protocols run more levels, a level of at most 64 bits hashing its prefix
word as for short items and a longer one its prefix digest. This section measures what that costs, on the same
people at both widths:

* data: ``n`` people holding path-like strings of 20 to 32 ASCII bytes (three words of ldpnum's embedded English
  list joined by ``/``, cut to 32 bytes), drawn from 1,000 such items by a Zipf(1.1) law (seed 0); at 64 bits they
  are cut to their first 8 bytes (the warning is silenced; the 64-bit dictionary is their distinct cuts), at 256
  bits kept whole;
* ``encode``: ``prepare_values`` seconds (validation and the item encoding, no randomness);
* ``privatize``: people/s of ``privatize`` (encoding included; seeded PCG64 words), median of ``--repeats`` after
  one untimed call (the compile), and the randomization alone (the words drawn and the kernels run on the prepared
  values: ``Mechanism._randomize``; not for RAPPOR, whose reports also draw keyed words per person);
* for PEM and TreeHist the number of levels (groups): every person reports one level, so the people/s of a
  collection is the people/s per level;
* ``estimate``: the collector's seconds to the top 20 (PEM, TreeHist) or to decode the 1,000 items (CMS, RAPPOR).

Runs alone: ``python bench/long_items.py [--n 1e6] [--repeats 3]``.

Where a 256-bit person's time goes, and its floor (measured 2026-12-02 on the 2-core 2 GHz AMD EPYC, shared: load
average 2.5-4.5 from other work throughout, so absolute figures moved by up to 2x from run to run; CPU time,
medians, 10^6 of the items above unless said):

* encoding (``encode_items``, one thread): the same str objects are read at both widths; a 256-bit item writes
  four words (32 bytes) instead of one. The compiled pass took 18.7 ms at 64 bits and 47.5 ms at 256, most of the
  difference a byte loop with a test per byte; as 8-byte loads and byte swaps, 14-16 ms and 24-27 ms. Making an
  object array from the list cost another 24 ms at both widths; the pass now reads the list itself:
  ``encode_items`` 40 -> 15-17 ms at 64 bits, 50 -> 28-32 ms at 256. Writing 32 MB instead of 8 MB costs 3.8
  against 0.9 ms by itself (a NumPy fill).
* the hash-based mechanisms (CMS, HCMS, RAPPOR) hash one digest per item instead of the item: one more pass over
  the rows, 7 ns of CPU per item (16 ns when it was the prefix digest at shift 0); their kernels then do what
  they do for 64-bit items. The words drawn are the same at both widths.
* PEM and TreeHist, the kernel alone (one thread, ns per record): 9.2 for 64-bit items; 39.9 for 256-bit items
  before, 27.8 now (the digest's digits from the row loaded once: 21 -> 13.4 ns per digest; each chunk of 256
  records in two loops, since one record's digest, hash and GRR form a chain of multiplications too long for
  the processor to overlap with the next record's). Scratch variants of the same loops: with the digest replaced
  by the row's first word 12.7 (11.9 from (n, 1) rows: reading 32 bytes per person instead of 8 costs under
  1 ns), with the four digits extracted but xored instead of mixed 21.7. So of the 18.6 ns a 256-bit record
  costs more, about 3.5 are the two-loop structure and the row, 9 the extraction of a prefix's digits at a
  shift that varies from record to record, 6 the mixing.
* the floor: what a 256-bit person must do that a 64-bit one does not is write and read 24 more bytes, assemble
  three more words, and hash one 64-bit digest of its item or prefix (7 ns for a whole item, 13.4 ns for a
  prefix at a random length); a new digest (which would be a new ``digest`` name in every spec) could save at
  most the 6 ns of mixing per prefix record; a digest over masked instead of shifted digits was measured slower
  (36 ns per record). Paired runs before/after (3 pairs, load 3.5-4.7, both cores busy with other work):
  privatize CPU 143 -> 76 ms for PEM at 256 bits (65 ms at 64), 201 -> 97 ms for HCMS (70 at 64), 132 -> 101
  ms for TreeHist (44 at 64), 1.90 -> 1.48 s for CMS (1.42 at 64).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from run import median_time  # noqa: E402

N = 1_000_000
EPSILON = 4.0
N_ITEMS = 1_000
WIDTHS = (64, 256)


def generate(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``(x, items)``: one URL-like string per person, and the distinct items."""
    from ldpnum.data import load_words

    words, _ = load_words()
    rng = np.random.default_rng(seed)
    picks = rng.choice(min(len(words), 5_000), size=(N_ITEMS * 4, 3))
    items, seen = [], set()
    for a, b, c in picks:
        text = f"{words[a]}/{words[b]}/{words[c]}"[:32]
        if len(text) >= 20 and text.isascii() and text not in seen:
            seen.add(text)
            items.append(text)
        if len(items) == N_ITEMS:
            break
    p = 1.0 / np.arange(1, len(items) + 1) ** 1.1
    idx = rng.choice(len(items), size=n, p=p / p.sum())
    return [items[i] for i in idx], items


def contestants(bits: int):
    """``(name, mechanism, privatize kwargs factory, estimate)`` at ``item_bits = bits``."""
    import ldpnum as ldp

    def keys_for(x):
        return {"keys": ldp.ClientKeys.generate(len(x), rng=7)}

    return [
        ("CMS", ldp.CountMeanSketch(EPSILON, item_bits=bits), None,
         lambda m, r, items: m.estimate_frequencies(r, candidates=items)),
        ("HCMS", ldp.CountMeanSketch(EPSILON, item_bits=bits, variant="hcms"), None,
         lambda m, r, items: m.estimate_frequencies(r, candidates=items)),
        ("RAPPOR", ldp.RAPPOR(k=256, cohorts=32, item_bits=bits), keys_for,
         lambda m, r, items: m.estimate_frequencies(r, candidates=items)),
        ("PEM", ldp.PEM(EPSILON, item_bits=bits, top_k=20), None, lambda m, r, items: m.estimate_heavy_hitters(r)),
        ("TreeHist", ldp.TreeHist(EPSILON, item_bits=bits, top_k=20), None,
         lambda m, r, items: m.estimate_heavy_hitters(r)),
    ]


def wall_and_cpu(fn, repeats: int) -> tuple[float, float]:
    """Medians of ``repeats`` calls: wall seconds, and CPU seconds of the process (every thread)."""
    wall, cpu = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def run(repeats: int = 3, n: int = N) -> tuple[list[dict], str]:
    """Measure; return ``(records, markdown)``."""
    x, items = generate(n)
    records = []
    load_start = os.getloadavg()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 64-bit rows cut every item on purpose
        for bits in WIDTHS:
            for name, m, extra, estimate in contestants(bits):
                kw = extra(x) if extra else {}
                small = {k: v[:10_000] for k, v in kw.items()}
                cands = items if bits > 64 else sorted({s[:8] for s in items})
                estimate(m, m.privatize(x[:10_000], rng=0, **small), cands)  # compile
                encode = median_time(lambda: m.prepare_values(x), repeats)
                priv, priv_cpu = wall_and_cpu(lambda: m.privatize(x, rng=1, **kw), repeats)
                values = m.prepare_values(x)
                rand = None if extra else median_time(lambda: m._randomize(values, 1), repeats)
                reports = m.privatize(x, rng=1, **kw)
                t0 = time.perf_counter()
                estimate(m, reports, cands)
                est_s = time.perf_counter() - t0
                records.append({"mechanism": name, "item_bits": bits, "n": n, "epsilon": EPSILON,
                                "levels": getattr(m, "groups", None), "encode_s": encode, "privatize_s": priv,
                                "people_per_s": n / priv, "cpu_us_per_person": 1e6 * priv_cpu / n,
                                "kernel_people_per_s": None if rand is None else n / rand, "estimate_s": est_s})
                print(f"long-items {name} bits={bits}: {n / priv:,.0f} people/s", flush=True)
    for r in records:
        r["load_average"] = [round(v, 2) for v in (*load_start, *os.getloadavg())]
    return records, markdown(records)


def markdown(records: list[dict]) -> str:
    lines = ["## Items longer than 8 bytes (item_bits 64 vs 256)", "",
             f"n = {records[0]['n']:,} people, ε = {EPSILON:g}, path-like str items of 20–32 bytes (cut to 8 at 64 "
             "bits); medians; the compile excluded; load average (1, 5, 15 min) "
             f"{'/'.join(f'{v:.1f}' for v in records[0]['load_average'][:3])} at the start, "
             f"{'/'.join(f'{v:.1f}' for v in records[0]['load_average'][3:])} at the end. "
             "`python bench/long_items.py`.", "",
             "| mechanism | item_bits | levels | encode s | privatize people/s | ratio 256/64 | privatize CPU µs/person "
             "| randomize people/s | ratio 256/64 | estimate s |", "|---|---|---|---|---|---|---|---|---|---|"]
    base = {r["mechanism"]: r for r in records if r["item_bits"] == 64}
    for r in records:
        b = base.get(r["mechanism"], r)
        ratio = r["people_per_s"] / b["people_per_s"]
        rand = r["kernel_people_per_s"]
        rand_s = "—" if rand is None else f"{rand:,.0f} | {rand / b['kernel_people_per_s']:.2f}"
        lines.append(f"| {r['mechanism']} | {r['item_bits']} | {r['levels'] or ''} | {r['encode_s']:.3f} | "
                     f"{r['people_per_s']:,.0f} | {ratio:.2f} | {r['cpu_us_per_person']:.3f} | "
                     f"{rand_s if rand is not None else '— | —'} | "
                     f"{r['estimate_s']:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=N)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    _, md = run(args.repeats, int(args.n))
    print(md)


if __name__ == "__main__":
    main()
