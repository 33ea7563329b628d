"""Start-up costs: ``import ldpnum`` over ``import pandas``, and the first ``privatize`` + ``aggregate`` of every
mechanism.

Each figure comes from a fresh Python process. "cold" runs with ``NUMBA_CACHE_DIR`` pointed at a new empty
directory (Numba then neither reads nor writes the in-tree ``__pycache__``), as for a user whose cache is
empty; "after compile" is a fresh process whose cache directory ``ldpnum compile`` filled beforehand (what
``make install`` does; no call of the mechanism ran before), so it checks that the kernel manifest covers the
call; "warm" is a second call in the same process. "extra" is after compile minus warm: the first call's wait.
Every registered mechanism is measured, on the first instance of its entry in the common test suite (``CASES``
in tests/common/test_common.py; vector mechanisms: ``VECTOR_CASES`` in tests/common/test_attack.py) and that
suite's valid inputs, so no list of mechanisms is kept here: a registered mechanism without a case makes this
script fail, naming it.

Usage::

    .venv/bin/python bench/startup.py                # the whole table at n = 1000 (the interpreted tier)
    .venv/bin/python bench/startup.py --n 1000000 --n-vectors 10000 --no-cold   # first large calls
    .venv/bin/python bench/startup.py --only oue,laplace --repeats 3
    .venv/bin/python bench/startup.py --json out.json
    LDPNUM_JIT=compile .venv/bin/python bench/startup.py   # every call compiled (the JIT tier policy's
                                                           # alternative; see ldpnum/_kernels/_jit.py)

The first call is on ``--n`` values (``--n-vectors`` rows for the vector mechanisms) with ``rng=0``; the
instances and values are built in this process and handed to each child pickled, so the child imports nothing
but ldpnum.
"""

import argparse
import json
import os
import pathlib
import pickle
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: Modules that ``import ldpnum`` should not load (reported, not asserted, here; tests/_kernels/test_jit.py asserts).
HEAVY = ("numba", "llvmlite", "scipy", "matplotlib", "dask", "distributed", "pyarrow", "tqdm", "cryptography")

FIRST_CALL = textwrap.dedent("""
    import json, pickle, sys, time
    t0 = time.perf_counter()
    import ldpnum as ldp
    t_import = time.perf_counter() - t0
    with open(sys.argv[1], "rb") as fh:
        m, x = pickle.load(fh)
    t0 = time.perf_counter()
    m.aggregate(m.privatize(x, rng=0))
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    m.aggregate(m.privatize(x, rng=1))
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


def _test_helpers():
    """The common suite's case tables and input makers (tests/common/test_common.py and tests/common/test_attack.py, wherever
    they live under tests/)."""
    tests = ROOT / "tests"
    for d in dict.fromkeys([tests, *(p.parent for p in sorted(tests.rglob("test_attack.py")))]):
        if str(d) not in sys.path:
            sys.path.insert(0, str(d))
    before = os.environ.get("LDPNUM_JIT")
    import test_attack
    import test_common

    if before is None:  # tests/conftest.py sets LDPNUM_JIT=compile for the suite; the children keep ours
        os.environ.pop("LDPNUM_JIT", None)
    else:
        os.environ["LDPNUM_JIT"] = before
    return test_common.CASES, test_attack.VECTOR_CASES, test_attack.make, test_attack.good_input, \
        test_attack.takes_dimension


def instances(names, n, n_vectors=None, dimension=None):
    """``{label: (mechanism, values)}``: the first instance of each mechanism's common-test case, and ``n`` of
    that suite's valid inputs for it (``n_vectors`` rows for the vector mechanisms; default ``n``). With
    ``dimension``, every vector case that takes a dimension is built at it too, labelled ``name (d=...)``."""
    _, vector_cases, make, good_input, takes_dimension = _test_helpers()
    out = {}
    for name in names:
        rows = n if n_vectors is None or name not in vector_cases else n_vectors
        m = make(name)
        out[name] = (m, good_input(name, m, rows))
        if dimension is not None and takes_dimension(name):
            m = make(name, dimension)
            out[f"{name} (d={dimension})"] = (m, good_input(name, m, rows))
    return out


def first_calls(names, n, repeats, n_vectors=None, cold=True, dimension=None):
    """Median cold / after-compile / warm seconds of the first privatize + aggregate of each mechanism."""
    rows = []
    built = instances(names, n, n_vectors, dimension)
    names = list(built)
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as compiled:
        env_compiled = dict(os.environ, NUMBA_CACHE_DIR=compiled)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ldpnum", "compile"], env=env_compiled, check=True,
                       stdout=subprocess.DEVNULL)
        print(f"  ldpnum compile into an empty cache: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        for name in names:
            path = os.path.join(tmp, f"{len(rows)}.pickle")
            with open(path, "wb") as fh:
                pickle.dump(built[name], fh)
            first, after, warm = [], [], []
            for _ in range(repeats):
                if cold:
                    with tempfile.TemporaryDirectory() as cache:
                        first.append(_run(FIRST_CALL, [path], dict(os.environ, NUMBA_CACHE_DIR=cache))["first_s"])
                r = _run(FIRST_CALL, [path], env_compiled)
                after.append(r["first_s"])
                warm.append(r["second_s"])
            row = {"mechanism": name, "cold_s": statistics.median(first) if cold else None,
                   "after_compile_s": statistics.median(after), "warm_s": statistics.median(warm)}
            row["extra_s"] = row["after_compile_s"] - row["warm_s"]
            rows.append(row)
            print(f"  {name}: after compile {row['after_compile_s']:.2f} s, warm {row['warm_s']:.3f} s",
                  file=sys.stderr, flush=True)
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
    (vectors, HDG, marginals) alike; each must have a case in the common test suite."""
    import ldpnum  # noqa: F401  (registers every mechanism)
    from ldpnum.base import _REGISTRY, _VECTOR_REGISTRY
    names = [*_REGISTRY, *_VECTOR_REGISTRY]
    cases, vector_cases, *_ = _test_helpers()
    missing = sorted(set(names) - set(cases) - set(vector_cases))
    if missing:
        raise SystemExit(f"registered mechanisms {missing} have no case in tests/common/test_common.py CASES (or, for "
                         "vector mechanisms, tests/common/test_attack.py VECTOR_CASES): add one")
    return names


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000, help="values in the first call (default 1000)")
    p.add_argument("--n-vectors", type=int, default=None, help="rows in the vector mechanisms' call (default --n)")
    p.add_argument("--dimension", type=int, default=None,
                   help="also measure every vector mechanism whose case takes a dimension at this one (e.g. 1024)")
    p.add_argument("--no-cold", action="store_true", help="skip the empty-cache (compiling) column")
    p.add_argument("--repeats", type=int, default=1, help="fresh processes per figure; medians (default 1)")
    p.add_argument("--only", help="comma list of registered mechanism names (default: all)")
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args(argv)
    known = registered()
    names = known if args.only is None else args.only.split(",")
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise SystemExit(f"unknown mechanism names {unknown}; known: {sorted(known)}")
    imp = import_overhead(max(3, args.repeats))
    rows = first_calls(names, args.n, args.repeats, args.n_vectors, cold=not args.no_cold, dimension=args.dimension)
    print(f"import pandas: {imp['pandas_s']:.3f} s; import ldpnum after it: {imp['ldpnum_over_pandas_s']:.3f} s; "
          f"heavy modules that import ldpnum adds to pandas's: {', '.join(imp['heavy_loaded']) or 'none'}")
    print()
    vec = "" if args.n_vectors is None else f", vectors {args.n_vectors}"
    vec += "" if args.dimension is None else f" (also at d = {args.dimension})"
    print(f"| mechanism | first call, cold (s) | first call after `ldpnum compile` (s) | second call (s) | extra (s) |"
          f"  n = {args.n}{vec}, privatize + aggregate")
    print("|---|---:|---:|---:|---:|")
    fmt = lambda v, d=2: "—" if v is None else f"{v:.{d}f}"  # noqa: E731
    for r in rows:
        print(f"| {r['mechanism']} | {fmt(r['cold_s'])} | {fmt(r['after_compile_s'])} | {fmt(r['warm_s'], 4)} | "
              f"{fmt(r['extra_s'])} |")
    cold = [r["cold_s"] for r in rows if r["cold_s"] is not None]
    print(f"| max | {fmt(max(cold) if cold else None)} | {max(r['after_compile_s'] for r in rows):.2f} | "
          f"{max(r['warm_s'] for r in rows):.4f} | {max(r['extra_s'] for r in rows):.2f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"import": imp, "first_calls": rows, "n": args.n, "n_vectors": args.n_vectors,
                       "repeats": args.repeats}, fh, indent=1)


if __name__ == "__main__":
    main()
