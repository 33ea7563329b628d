"""Regenerate ``ldpnum/data/english_words.tsv.gz`` from the ``wordfreq`` package's English list.

This is a data-preparation script, not part of the ``ldpnum`` package (which never imports wordfreq): it
needs ``wordfreq`` 3.x, which ships its word lists inside its wheel and reads them offline. Run it where
wordfreq is installed, e.g. the environment of ``make bench`` (the ``bench`` extra) or a throwaway one::

    python3 -m venv /tmp/dataprep
    /tmp/dataprep/bin/pip install wordfreq==3.1.1
    /tmp/dataprep/bin/python scripts/make_words_data.py

The file holds the ``N_WORDS`` most frequent English words, ``wordfreq.top_n_list("en", N_WORDS)`` (the
"best" list, which for English is the large one), in that order, each with
``wordfreq.word_frequency(word, "en")``: its estimated share of all English word tokens, as wordfreq rounds
it. It is UTF-8 text, a header line ``word<TAB>frequency`` then one line ``word<TAB>frequency`` per word
(the frequency written as Python's shortest ``repr`` of the float), compressed with gzip at level 9 with the
timestamp set to 0 and no file name, so rerunning the script with the same wordfreq and zlib gives the same
bytes.

By default the file is written to ``ldpnum/data/english_words.tsv.gz`` below this script's repository root;
pass another path as the first argument to write elsewhere. The script checks that the words are distinct,
non-empty and free of tabs, line breaks and NUL, that the frequencies are positive and non-increasing, and
that the written file reloads to exactly the same words and frequencies; it prints the count, the sum of
the frequencies, the size and the SHA-256.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import math
import sys
import zlib
from importlib.metadata import version
from pathlib import Path

import wordfreq

N_WORDS = 50_000
LANG = "en"
HEADER = "word\tfrequency"

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "ldpnum" / "data" / "english_words.tsv.gz"


def check(words: list[str], freqs: list[float]) -> None:
    """Refuse a list the loader could not read back unambiguously, or one out of rank order."""
    if len(words) != N_WORDS or len(set(words)) != N_WORDS:
        raise SystemExit(f"expected {N_WORDS} distinct words, got {len(words)} ({len(set(words))} distinct)")
    for i, w in enumerate(words):
        if not w or any(c in w for c in "\t\n\r\x00") or w != w.strip() or len(w.splitlines()) != 1:
            raise SystemExit(f"word {i} ({w!r}) is empty or holds a tab, line break, NUL or edge whitespace")
    if not all(math.isfinite(f) and f > 0 for f in freqs):
        raise SystemExit("every frequency must be finite and positive")
    if any(b > a for a, b in itertools.pairwise(freqs)):
        raise SystemExit("frequencies are not in non-increasing order")


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    words = wordfreq.top_n_list(LANG, N_WORDS)
    freqs = [float(wordfreq.word_frequency(w, LANG)) for w in words]
    check(words, freqs)

    text = HEADER + "\n" + "".join(f"{w}\t{f!r}\n" for w, f in zip(words, freqs))
    blob = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(blob)

    # Verify the round trip, word for word and float for float.
    lines = gzip.decompress(out.read_bytes()).decode("utf-8").split("\n")
    assert lines[0] == HEADER and lines[-1] == "", (lines[0], lines[-1])
    rows = [line.split("\t") for line in lines[1:-1]]
    assert [w for w, _ in rows] == words
    assert [float(f) for _, f in rows] == freqs

    print(f"wrote {out}")
    print(f"words: {len(words)}; first {words[:5]}; last {words[-1]!r}")
    print(f"frequencies: {freqs[0]!r} .. {freqs[-1]!r}, sum {math.fsum(freqs)!r}")
    print(f"words longer than 8 UTF-8 bytes: {sum(len(w.encode('utf-8')) > 8 for w in words)}")
    print(f"size: {len(blob)} bytes")
    print(f"sha256: {hashlib.sha256(blob).hexdigest()}")
    print(f"wordfreq {version('wordfreq')}, Python {sys.version.split()[0]}, zlib {zlib.ZLIB_RUNTIME_VERSION}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
