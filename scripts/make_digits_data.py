"""Regenerate ``ldpnum/data/digits.npz`` from the copy of the UCI handwritten-digits test set that ships in
scikit-learn's wheel.

This is a data-preparation script, not part of the ``ldpnum`` package (which never imports scikit-learn). It
reads ``sklearn/datasets/data/digits.csv.gz`` straight out of a scikit-learn wheel (no installation needed)::

    pip download --no-deps --only-binary=:all: scikit-learn==1.9.1 -d /tmp/skl
    python scripts/make_digits_data.py /tmp/skl/scikit_learn-1.9.1-*.whl

The CSV has 1,797 rows of 65 integers: the 64 pixels of an 8×8 image (row by row, each 0..16) then the digit
(0..9). The npz holds ``images`` (uint8, 1797×64) and ``digits`` (uint8, 1797), in the CSV's row order, written
with ``numpy.savez_compressed``; the script checks the shapes and ranges and prints the SHA-256 of the CSV it read
and of the file it wrote.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

MEMBER = "sklearn/datasets/data/digits.csv.gz"


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    wheel = Path(argv[1])
    out = Path(argv[2]) if len(argv) > 2 else Path(__file__).resolve().parents[1] / "ldpnum" / "data" / "digits.npz"
    with zipfile.ZipFile(wheel) as z:
        raw = z.read(MEMBER)
    print(f"{MEMBER} from {wheel.name}: sha256 {hashlib.sha256(raw).hexdigest()}")
    table = np.loadtxt(io.StringIO(gzip.decompress(raw).decode("ascii")), delimiter=",", dtype=np.int64)
    assert table.shape == (1797, 65), table.shape
    images, digits = table[:, :64], table[:, 64]
    assert images.min() >= 0 and images.max() <= 16 and set(np.unique(digits)) == set(range(10))
    np.savez_compressed(out, images=images.astype(np.uint8), digits=digits.astype(np.uint8))
    print(f"wrote {out} ({out.stat().st_size:,} bytes), sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
