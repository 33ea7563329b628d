"""Raw fill rates of the random sources ldpnum can draw its noise from.

``measure_fill_rates`` times how fast each source fills a buffer of 64-bit
words, the raw material for every randomized-response bit:

* ``os.urandom`` (the kernel CSPRNG), viewed as ``uint64`` via ``np.frombuffer``;
* NumPy's PCG64, SFC64 and Philox bit generators (``random_raw``);
* randomgen's AESCounter (AES-128 in counter mode, keyed directly with a
  128-bit key from ``os.urandom``) and ChaCha with 20 rounds (keyed with a
  256-bit key from ``os.urandom``), both cryptographically strong: the
  candidates ldpnum's secure default was chosen against (``bench/run.py``
  adds ldpnum's own sources: OpenSSL's AES-128-CTR, and PCG64 for seeded runs).

Every source is warmed up once, then timed ``repeats`` times; the median is
reported.  Generators are constructed locally; no global RNG state is touched.

Run as a script to print a markdown table::

    python bench/rng_fill.py [--words 10000000] [--repeats 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

Filler = Callable[[int], np.ndarray]


def _urandom_fill(n_words: int) -> np.ndarray:
    return np.frombuffer(os.urandom(8 * n_words), dtype=np.uint64)


def _raw_filler(bit_generator) -> Filler:
    raw = bit_generator.random_raw
    return lambda n_words: raw(n_words)


def _sources() -> list[tuple[str, bool, Filler, str]]:
    """(source, secure, filler, note) for each available source."""
    seed_seq = np.random.SeedSequence()  # fresh OS entropy, local object
    pcg, sfc, philox = seed_seq.spawn(3)
    sources: list[tuple[str, bool, Filler, str]] = [
        ("os.urandom", True, _urandom_fill,
         "kernel CSPRNG via getrandom; np.frombuffer(..., uint64)"),
        ("numpy PCG64", False, _raw_filler(np.random.PCG64(pcg)),
         f"PCG64.random_raw, numpy {np.__version__}"),
        ("numpy SFC64", False, _raw_filler(np.random.SFC64(sfc)),
         f"SFC64.random_raw, numpy {np.__version__}"),
        ("numpy Philox", False, _raw_filler(np.random.Philox(philox)),
         f"Philox4x64-10 random_raw, numpy {np.__version__}"),
    ]
    try:
        import randomgen
        from randomgen import AESCounter, ChaCha
    except ImportError as exc:  # reported as a note rather than failing
        sources.append(("randomgen", True, None, f"unavailable: {exc}"))
        return sources

    aes = AESCounter(key=int.from_bytes(os.urandom(16), "little"))
    sources.append((
        "randomgen AESCounter", True, _raw_filler(aes),
        f"AES-128 CTR, key= 128-bit from os.urandom; "
        f"AES-NI {'used' if aes.use_aesni else 'NOT used'} "
        f"(use_aesni={bool(aes.use_aesni)}); randomgen {randomgen.__version__}"))
    chacha = ChaCha(key=int.from_bytes(os.urandom(32), "little"), rounds=20)
    simd = getattr(chacha, "use_simd", None)
    sources.append((
        "randomgen ChaCha20", True, _raw_filler(chacha),
        f"ChaCha 20 rounds, key= 256-bit from os.urandom; use_simd={simd}; "
        f"randomgen {randomgen.__version__}"))
    return sources


def measure_fill_rates(n_words: int = 10_000_000, repeats: int = 5) -> list[dict]:
    """Median fill rate of each random source for ``n_words`` 64-bit words.

    Returns one dict per source: ``source``, ``secure`` (True for os.urandom,
    AESCounter and ChaCha), ``words_per_second`` (64-bit words per second),
    ``mwords_per_second`` (the same in millions), ``median_seconds``, ``note``.
    """
    if n_words < 1 or repeats < 1:
        raise ValueError("n_words and repeats must be >= 1")
    records = []
    for source, secure, fill, note in _sources():
        if fill is None:
            records.append({"source": source, "secure": secure,
                            "words_per_second": None, "mwords_per_second": None,
                            "median_seconds": None, "note": note})
            continue
        out = fill(min(n_words, 100_000))  # warm-up: first-touch, lazy init
        assert out.dtype == np.uint64
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            out = fill(n_words)
            times.append(time.perf_counter() - start)
            assert out.shape == (n_words,)
            del out
        median = statistics.median(times)
        records.append({"source": source, "secure": secure,
                        "words_per_second": n_words / median,
                        "mwords_per_second": n_words / median / 1e6,
                        "median_seconds": median, "note": note})
    return records


def markdown_table(records: list[dict]) -> str:
    """Render measure_fill_rates output as a markdown table."""
    lines = ["| source | secure | M words/s | median s | note |",
             "|---|---|---:|---:|---|"]
    for r in records:
        rate = "-" if r["words_per_second"] is None else f"{r['mwords_per_second']:.1f}"
        secs = "-" if r["median_seconds"] is None else f"{r['median_seconds']:.4f}"
        lines.append(f"| {r['source']} | {'yes' if r['secure'] else 'no'} "
                     f"| {rate} | {secs} | {r['note']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=float, default=10_000_000,
                        help="64-bit words per fill (default 1e7)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", metavar="OUT", help="also write records to OUT")
    args = parser.parse_args(argv)
    records = measure_fill_rates(int(args.words), args.repeats)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(records, fh, indent=2)
            fh.write("\n")
    print(f"Fill rates, {int(args.words):,} x 64-bit words, median of {args.repeats}:\n")
    print(markdown_table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
