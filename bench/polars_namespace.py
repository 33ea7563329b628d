"""The Polars namespace's cost over the pandas accessor it calls (``python bench/polars_namespace.py``).

At n = 1e6 values (uniform on the bounds, Square Wave, ε = 1), each operation is timed through ``ldpnum.polars``
(a Polars frame or Series) and through the pandas accessor on the same data, medians of 9 alternating runs after
one warm-up (no JIT compile in the figures); overhead = median of the paired ratios − 1. The Polars side converts
the columns it needs to pandas and the codes back (one copy of the values, O(n)); the randomizing, counting and
estimating are the same calls.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from accessor import _paired  # noqa: E402  (the pandas accessor benchmark's paired timer)

N = 1_000_000


def run(repeats=9, n=N):
    """Measure; return ``(records, markdown)``."""
    import pandas as pd
    import polars as pl

    import ldpnum as ldp
    import ldpnum.polars  # noqa: F401

    values = np.random.default_rng(0).uniform(0, 1440, n)
    mech = ldp.SquareWave(epsilon=1.0, bounds=(0, 1440))
    pdf, df = pd.DataFrame({"dep_time": values}), pl.DataFrame({"dep_time": values})
    preports = pdf.ldp.privatize({"dep_time": mech}, rng=0)
    reports = df.ldp.privatize({"dep_time": mech}, rng=0)
    column, pcolumn = reports.ldp.column("dep_time"), preports["dep_time"]
    assert reports.ldp.aggregate() == preports.ldp.aggregate()
    cases = [
        ("privatize (DataFrame, 1 column, seeded)", lambda: df.ldp.privatize({"dep_time": mech}, rng=0),
         lambda: pdf.ldp.privatize({"dep_time": mech}, rng=0)),
        ("privatize (Series, seeded)", lambda: df["dep_time"].ldp.privatize(mech, rng=0),
         lambda: pdf["dep_time"].ldp.privatize(mech, rng=0)),
        ("aggregate (frame)", lambda: reports.ldp.aggregate(), lambda: preports.ldp.aggregate()),
        ("aggregate + estimate_mean (column)", lambda: column.ldp.estimate_mean(),
         lambda: pcolumn.ldp.estimate_mean()),
    ]
    records = []
    for name, through, direct in cases:
        t_pl, t_pd, ratio = _paired(through, direct, repeats)
        records.append({"operation": name, "n": n, "repeats": repeats, "polars_s": t_pl, "pandas_s": t_pd,
                        "overhead": ratio - 1.0})
    lines = ["## Polars namespace over the pandas accessor", "",
             f"Square Wave (ε = 1), n = {n:.0e}, medians of {repeats} alternating runs after a warm-up; overhead = "
             "median of the paired ratios − 1.", "",
             "| operation | Polars ms | pandas ms | overhead |", "|---|---|---|---|"]
    lines += [f"| {r['operation']} | {1e3 * r['polars_s']:.2f} | {1e3 * r['pandas_s']:.2f} | {r['overhead']:+.1%} |"
              for r in records]
    return records, "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run()[1])
