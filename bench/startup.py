"""Start-up costs: ``import ldpnum`` over ``import pandas``, and the first ``privatize`` of every mechanism.

Each figure comes from a fresh Python process. "cold" runs with ``NUMBA_CACHE_DIR`` pointed at a new empty
directory (Numba then neither reads nor writes the in-tree ``__pycache__``), as for a user whose cache is
empty; "cached" is a second fresh process sharing that (now filled) cache directory; "warm" is a second call
in the cold process. Every registered mechanism is measured (a mechanism added to the registry without a
constructor here makes this script fail, so the table stays complete).

Usage::

    .venv/bin/python bench/startup.py                # the whole table (about a minute on 2 cores)
    .venv/bin/python bench/startup.py --only oue,laplace --repeats 3
    .venv/bin/python bench/startup.py --json out.json
    LDPNUM_JIT=compile .venv/bin/python bench/startup.py   # every call compiled (the JIT tier policy's
                                                           # alternative; see ldpnum/_kernels/_jit.py)

The first call is on ``--n`` values (default 1000) with ``rng=0``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

EPSILON = 1.0

#: One constructor per registered mechanism name, as a Python expression over ``ldp`` (the ldpnum module).
FACTORIES = {
    "stochastic_rounding": "ldp.StochasticRounding(EPS, (0.0, 1.0))",
    "duchi": "ldp.Duchi(EPS, (0.0, 1.0))",
    "randomized_response": "ldp.RandomizedResponse(EPS)",
    "laplace": "ldp.Laplace(EPS, (0.0, 1.0))",
    "piecewise": "ldp.Piecewise(EPS, (0.0, 1.0))",
    "hybrid": "ldp.Hybrid(EPS, (0.0, 1.0))",
    "general_wave": "ldp.GeneralWave(EPS, (0.0, 1.0), shape='triangle')",
    "square_wave": "ldp.SquareWave(EPS, (0.0, 1.0))",
    "grr": "ldp.GRR(EPS, 64)",
    "hadamard_response": "ldp.HadamardResponse(EPS, 64)",
    "blh": "ldp.BLH(EPS, 64)",
    "olh": "ldp.OLH(EPS, 64)",
    "pi_rappor": "ldp.PIRappor(EPS, 64)",
    "sue": "ldp.SUE(EPS, 64)",
    "oue": "ldp.OUE(EPS, 64)",
    "subset_selection": "ldp.SubsetSelection(EPS, 64)",
    "hierarchical_histogram": "ldp.HierarchicalHistogram(EPS, (0.0, 1.0))",
    "pem": "ldp.PEM(EPS, item_type='uint')",
    "tree_hist": "ldp.TreeHist(EPS, item_type='uint')",
    "padding_sampling": "ldp.PaddingSampling(EPS, 40, 4)",
    "padding_sampling_olh": "ldp.PaddingSamplingOLH(EPS, 40, 4)",
    # mechanisms that read several columns per person (``input_kind = "vector"``): d = 1024 for unit vectors
    "sampled_dimensions": "ldp.SampledDimensions('piecewise', EPS, [(0.0, 1.0)] * 16)",
    "duchi_multivariate": "ldp.DuchiMultivariate(EPS, [(0.0, 1.0)] * 16)",
    "priv_hs": "ldp.PrivHS(EPS, 1024)",
    "priv_unit": "ldp.PrivUnit(EPS, 1024)",
    "priv_unit_g": "ldp.PrivUnitG(EPS, 1024)",
    "sqkr": "ldp.SQKR(EPS, 1024)",
    "hdg": "ldp.HDG(EPS, {'a': (0.0, 1.0), 'b': (0.0, 1.0)}, n=1000)",
    "marginals": "ldp.Marginals(EPS, {'a': 3, 'b': 4, 'c': 5}, n=1000)",
}

#: Modules that ``import ldpnum`` should not load (reported, not asserted, here; tests/test_startup.py asserts).
HEAVY = ("numba", "llvmlite", "scipy", "matplotlib", "dask", "distributed", "pyarrow", "tqdm", "cryptography")

FIRST_CALL = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    t0 = time.perf_counter()
    import ldpnum as ldp
    t_import = time.perf_counter() - t0
    EPS = float(sys.argv[2])
    m = eval(sys.argv[1])
    n = int(sys.argv[3])
    if m.name in ("priv_hs", "priv_unit", "priv_unit_g", "sqkr"):  # unit vectors
        x = np.random.default_rng(0).standard_normal((n, m.dim))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    elif m.name == "marginals":  # category codes, one column per attribute
        x = np.arange(n)[:, None] % np.array([3, 4, 5])
    elif m.input_kind == "vector":  # several numerical columns on [0, 1]
        x = np.random.default_rng(0).random((n, 2 if m.name == "hdg" else 16))
    elif m.name == "randomized_response":
        x = (np.arange(n) % 2).astype(np.float64)
    elif m.name.startswith("padding_sampling"):  # local sets as an (n, k) indicator array
        x = np.arange(n)[:, None] % 3 == np.arange(m.k)[None, :] % 3
    elif hasattr(m, "k"):
        x = np.arange(n) % m.k
    elif hasattr(m, "item_bits"):
        x = np.arange(n, dtype=np.uint64) % 64
    else:
        x = np.linspace(0.0, 1.0, n)
    t0 = time.perf_counter()
    m.privatize(x, rng=0)
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    m.privatize(x, rng=1)
    t_second = time.perf_counter() - t0
    print(json.dumps({"name": m.name, "import_s": t_import, "first_s": t_first, "second_s": t_second}))
""")

IMPORT_OVERHEAD = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    import pandas
    t1 = time.perf_counter()
    before = set(sys.modules)
    import ldpnum
    t2 = time.perf_counter()
    heavy = sorted(m for m in sys.argv[1].split(",") if m in sys.modules and m not in before)
    print(json.dumps({"pandas_s": t1 - t0, "ldpnum_over_pandas_s": t2 - t1, "heavy_loaded": heavy}))
""")


def _run(script, args, env):
    res = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"child failed ({res.returncode}):\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def first_calls(names, n, repeats):
    """Median cold / cached / warm seconds of the first privatize of each mechanism in ``names``."""
    rows = []
    for name in names:
        cold, cached, warm = [], [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, NUMBA_CACHE_DIR=cache)
                args = [FACTORIES[name], str(EPSILON), str(n)]
                r = _run(FIRST_CALL, args, env)
                cold.append(r["first_s"])
                warm.append(r["second_s"])
                cached.append(_run(FIRST_CALL, args, env)["first_s"])
        rows.append({"mechanism": name, "cold_s": statistics.median(cold), "cached_s": statistics.median(cached),
                     "warm_s": statistics.median(warm)})
        print(f"  {name}: cold {rows[-1]['cold_s']:.2f} s", file=sys.stderr, flush=True)
    return rows


def import_overhead(repeats):
    """Median seconds of ``import pandas`` and of ``import ldpnum`` after it, and the heavy modules that
    ``import ldpnum`` adds (pandas itself imports pyarrow when it is installed)."""
    runs = [_run(IMPORT_OVERHEAD, [",".join(HEAVY)], dict(os.environ)) for _ in range(repeats)]
    return {"pandas_s": statistics.median(r["pandas_s"] for r in runs),
            "ldpnum_over_pandas_s": statistics.median(r["ldpnum_over_pandas_s"] for r in runs),
            "heavy_loaded": runs[-1]["heavy_loaded"]}


def registered():
    """Every mechanism ldpnum registers, those reading one value per person and those reading several columns
    (vectors, HDG, marginals) alike."""
    import ldpnum  # noqa: F401  (registers every mechanism)
    from ldpnum.base import _REGISTRY, _VECTOR_REGISTRY
    names = [*_REGISTRY, *_VECTOR_REGISTRY]
    missing = sorted(set(names) - set(FACTORIES))
    if missing:
        raise SystemExit(f"bench/startup.py has no constructor for registered mechanisms {missing}")
    return names


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000, help="values in the first call (default 1000)")
    p.add_argument("--repeats", type=int, default=1, help="fresh processes per figure; medians (default 1)")
    p.add_argument("--only", help="comma list of registered mechanism names (default: all)")
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args(argv)
    names = registered() if args.only is None else args.only.split(",")
    unknown = sorted(set(names) - set(FACTORIES))
    if unknown:
        raise SystemExit(f"unknown mechanism names {unknown}; known: {sorted(FACTORIES)}")
    imp = import_overhead(max(3, args.repeats))
    rows = first_calls(names, args.n, args.repeats)
    print(f"import pandas: {imp['pandas_s']:.3f} s; import ldpnum after it: {imp['ldpnum_over_pandas_s']:.3f} s; "
          f"heavy modules that import ldpnum adds to pandas's: {', '.join(imp['heavy_loaded']) or 'none'}")
    print()
    print(f"| mechanism | first call, cold (s) | first call, cached (s) | second call (s) |  n = {args.n}")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['mechanism']} | {r['cold_s']:.2f} | {r['cached_s']:.2f} | {r['warm_s']:.4f} |")
    print(f"| max | {max(r['cold_s'] for r in rows):.2f} | {max(r['cached_s'] for r in rows):.2f} | "
          f"{max(r['warm_s'] for r in rows):.4f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"import": imp, "first_calls": rows, "n": args.n, "repeats": args.repeats}, fh, indent=1)


if __name__ == "__main__":
    main()
