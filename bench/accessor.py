"""The pandas accessor's overhead over calling the mechanism directly (``make bench``, section ``accessor``).

At n = 1e6 values (uniform on the bounds), each operation is timed through the accessor and directly on the
NumPy array, medians of ``max(repeats, 9)`` runs, alternating
the two calls, after one warm-up (no JIT compile in the figures):

- ``privatize``: ``s.ldp.privatize(m, rng=0)`` vs ``m.privatize(values, rng=0)``; also a one-column
  ``df.ldp.privatize({...})`` and the secure default (``rng=None``);
- ``aggregate``: ``r.ldp.aggregate()`` vs ``m.aggregate(reports)``;
- ``aggregate + estimate_mean``: ``r.ldp.estimate_mean()`` vs ``m.estimate_mean(m.aggregate(reports))``.

The overhead is the median over the pairs of ``accessor / direct - 1`` (target: below 10%). Runs alone: ``python bench/accessor.py``
prints the markdown table.
"""

import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

N = 1_000_000
TARGET = 0.10


def _paired(through, direct, repeats, min_sample=0.01):
    """Median times of the two calls run alternately, and the median of the per-pair time ratios (robust to
    load on the machine drifting during the run). Calls shorter than ``min_sample`` seconds are repeated
    within each sample so that timer and scheduling noise stay small against them."""
    t0 = time.perf_counter()
    through(), direct()  # warm-up: JIT compile, caches, page faults
    loops = max(1, math.ceil(min_sample / max(time.perf_counter() - t0, 1e-9) * 2))
    t_acc, t_dir = [], []
    for _ in range(repeats):
        for fn, times in ((through, t_acc), (direct, t_dir)):
            t0 = time.perf_counter()
            for _ in range(loops):
                fn()
            times.append((time.perf_counter() - t0) / loops)
    ratio = statistics.median(a / d for a, d in zip(t_acc, t_dir))
    return statistics.median(t_acc), statistics.median(t_dir), ratio


def run(repeats=3, n=N):
    """Measure the accessor's overhead; return ``(records, markdown)``."""
    import pandas as pd

    import ldpnum as ldp
    from ldpnum._random import child_rng

    repeats = max(int(repeats), 9)  # the differences are small: more runs than the other sections
    values = np.random.default_rng(0).uniform(0, 1440, n)
    s = pd.Series(values, name="dep_time")
    df = s.to_frame()
    records = []
    for mech in (ldp.SquareWave(epsilon=1.0, bounds=(0, 1440)), ldp.Piecewise(epsilon=1.0, bounds=(0, 1440))):
        reports = mech.privatize(values, rng=0)
        column = s.ldp.privatize(mech, rng=0)
        cases = [
            ("privatize (seeded)", lambda: s.ldp.privatize(mech, rng=0), lambda: mech.privatize(values, rng=0)),
            ("privatize (DataFrame, 1 column)", lambda: df.ldp.privatize({"dep_time": mech}, rng=0),
             lambda: mech.privatize(values, rng=0)),
            ("privatize (secure)", lambda: s.ldp.privatize(mech), lambda: mech.privatize(values)),
            ("aggregate", lambda: column.ldp.aggregate(), lambda: mech.aggregate(reports)),
            ("aggregate + estimate_mean", lambda: column.ldp.estimate_mean(),
             lambda: mech.estimate_mean(mech.aggregate(reports))),
        ]
        assert column.ldp.aggregate() == mech.aggregate(mech.privatize(values, rng=child_rng(0, 0)))
        for name, through, direct in cases:
            t_acc, t_dir, ratio = _paired(through, direct, repeats)
            records.append({"mechanism": mech.name, "operation": name, "n": n, "repeats": repeats,
                            "accessor_s": t_acc, "direct_s": t_dir, "overhead": ratio - 1.0})
    return records, markdown(records)


def markdown(records):
    lines = ["## pandas accessor overhead", "",
             f"Accessor (`s.ldp...`) vs the direct mechanism call on the NumPy array, n = {records[0]['n']:.0e}, "
             f"medians of {records[0]['repeats']} alternating runs after a warm-up; overhead = median of the "
             f"paired ratios − 1; target < {TARGET:.0%}.", "",
             "| mechanism | operation | accessor ms | direct ms | overhead |", "|---|---|---|---|---|"]
    for r in records:
        flag = "" if r["overhead"] < TARGET else " (over target)"
        lines.append(f"| {r['mechanism']} | {r['operation']} | {1e3 * r['accessor_s']:.2f} | "
                     f"{1e3 * r['direct_s']:.2f} | {r['overhead']:+.1%}{flag} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run()[1])
