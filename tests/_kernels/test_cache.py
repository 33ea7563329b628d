"""The kernel manifest (ldpnum/_kernels/signatures.txt) behind ``ldpnum compile``: it lists every signature the
registered mechanisms launch, its lines round-trip through Numba's types, and compiling it fills the cache.

Run as a script to rewrite the manifest from what the mechanisms launch::

    .venv/bin/python tests/_kernels/test_cache.py --write
"""

import pathlib
import pickle
import sys
import warnings

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import cli
from ldpnum._kernels import _cache, _jit

TESTS = pathlib.Path(__file__).resolve().parents[1]
for _d in (TESTS, TESTS / "common", TESTS / "longitudinal"):
    if str(_d) not in sys.path:
        sys.path.insert(0, str(_d))

import test_attack  # noqa: E402
import test_common  # noqa: E402
import test_longitudinal  # noqa: E402


def mechanism_calls():
    """``(name, call)``: every accepted input form of every common-suite instance of the one-value mechanisms
    (the one-signature check's calls); then their first instance with its aggregate and estimators, the vector
    mechanisms' cases and every longitudinal instance, privatized and aggregated — each also as an unpickled
    copy, as a worker process receives it (NumPy does not pickle an array's read-only flag)."""
    calls = list(test_common.signature_calls(test_common.NAMES))

    def run(m, x, estimate=False, **kw):
        for mech in (m, pickle.loads(pickle.dumps(m))):
            agg = mech.aggregate(mech.privatize(x, rng=0, **kw))
            for e in ("estimate_mean", "estimate_frequencies", "estimate_ranges", "estimate_distribution",
                      "estimate_heavy_hitters") if estimate else ():
                if hasattr(mech, e):
                    getattr(mech, e)(agg)

    for name in test_common.NAMES:
        m = test_common.instance(name, test_common.case_of(name).settings[0])
        calls.append((name, lambda m=m: run(m, test_common.valid_input(m, 2000), estimate=True)))
    for name in test_attack.VECTOR_NAMES:
        m = test_attack.make(name)
        calls.append((name, lambda m=m, name=name: run(m, test_attack.good_input(name, m, 200))))
    # items wider than 64 bits: PEM's wide kernel, and the digest the sketches and RAPPOR hash (and the collectors)
    calls.append(("pem", lambda: run(ldp.PEM(4.0, item_bits=256, top_k=2), ["a" * 40, "b" * 9] * 100)))
    calls.append(("count_mean_sketch", lambda: run(ldp.CountMeanSketch(4.0, item_bits=256, width=64, hashes=16),
                                                   ["a" * 40, "b" * 9] * 100)))
    # dBitFlip with more than 2**16 d-subsets (C(40, 4) = 91,390): Floyd's sampler instead of the subset ranks
    floyd = dict(epsilon=2.0, bounds=(0, 1), buckets=40, d=4)
    calls.append(("d_bit_flip", lambda: run(ldp.DBitFlip(**floyd), np.linspace(0, 1, 200))))
    calls.append(("memoized_d_bit_flip", lambda: run(ldp.DBitFlip(**floyd, memoize=True, gamma=0.1),
                                                     np.linspace(0, 1, 200), keys=ldp.ClientKeys.generate(200, rng=1))))
    # L-OSUE at k = 1024: the instantaneous flip drawn by the sparse layout (the small cases below use lanes)
    calls.append(("losue", lambda: run(ldp.LOSUE(2.0, 1.0, 1024), np.arange(200) * 5 % 1024,
                                       keys=ldp.ClientKeys.generate(200, rng=1))))
    # the tier comparison's workload (tests/_kernels/test_jit.py: code widths of 8 to 64 bits, the probes the
    # tests read kernels' integers with), so the suite and a user's other parameters load what install compiled
    import test_jit

    def tiers():
        cases = test_jit._workload()
        for m, x, kw in cases:
            m.privatize(x, rng=3, **kw)
        test_jit.probe_calls(cases)
    calls.append(("tier workload", tiers))
    for name, case in test_longitudinal.LCASES.items():
        for kw in case.settings:
            m = test_longitudinal.build(name, kw)
            x = case.valid(m, 200, np.random.default_rng(0))
            calls.append((name, lambda m=m, x=x: run(m, x, keys=ldp.ClientKeys.generate(len(x), rng=1))))
    return calls


def launched_signatures(monkeypatch, calls):
    """``{(module, kernel, arguments)}``: each kernel launch's argument types, as the manifest writes them
    (Numba compiles one signature per distinct tuple of argument types)."""
    numba = _jit.numba_module()
    seen = set()
    original = _jit.Kernel.__call__

    def spy(self, *args):
        if not self.inline:  # the arguments as the dispatcher receives them (plan tables made read-only)
            seen.add((self.__module__.removeprefix("ldpnum._kernels."), self.__qualname__,
                      _cache.encode(tuple(numba.typeof(a) for a in _jit._read_only(args, self.read_only_args)))))
        return original(self, *args)

    monkeypatch.setattr(_jit, "MODE", "compile")
    monkeypatch.setattr(_jit.Kernel, "__call__", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, call in calls:
            call()
    monkeypatch.setattr(_jit.Kernel, "__call__", original)
    return {s for s in seen if not s[0].startswith(("test_", "tests."))}


def manifest_problems(launched, manifest):
    """Signatures launched but missing from the manifest, and manifest lines no mechanism launches."""
    listed = set(manifest)
    return ([f"not in the manifest: {m}.{k}({a})" for m, k, a in sorted(launched - listed)]
            + [f"launched by no registered mechanism: {m}.{k}({a})" for m, k, a in sorted(listed - launched)])


@pytest.fixture(scope="module")
def launched():
    with pytest.MonkeyPatch.context() as mp:
        return launched_signatures(mp, mechanism_calls())


def test_manifest_lists_exactly_what_the_mechanisms_launch(launched):
    manifest = _cache.read_manifest()
    assert len(manifest) == len(set(manifest)), "duplicate manifest lines"
    assert manifest_problems(launched, manifest) == [], (
        "rewrite the manifest: python tests/_kernels/test_cache.py --write")
    assert len({(m, k) for m, k, _ in manifest}) > 30


def test_manifest_check_names_a_planted_missing_and_a_stale_line(launched):
    """Negative control: a launched signature dropped from the manifest, and a line nothing launches, are named."""
    manifest = sorted(launched)
    dropped = manifest.pop(0)
    stale = ("client_grr", "grr_kernel", "float32[1,C,ro], int64")
    problems = manifest_problems(launched, [*manifest, stale])
    assert problems == [f"not in the manifest: {dropped[0]}.{dropped[1]}({dropped[2]})",
                        "launched by no registered mechanism: client_grr.grr_kernel(float32[1,C,ro], int64)"]


def test_every_manifest_line_round_trips_through_numba_types():
    for module, kernel, arguments in _cache.read_manifest():
        assert _cache.encode(_cache.decode(arguments)) == arguments, f"{module}.{kernel}"


@pytest.mark.parametrize("bad, match", [
    ("complex128", "unknown type 'complex128'"),
    ("float64[1,C,ro], noway", "unknown type 'noway'"),
    ("float64[1,Q]", "unknown type 'float64\\[1,Q\\]'"),
])
def test_decode_refuses_unknown_types(bad, match):
    with pytest.raises(ValueError, match=match):
        _cache.decode(bad)


def test_read_manifest_names_a_malformed_line(tmp_path):
    p = tmp_path / "signatures.txt"
    p.write_text("# comment\nclient_grr.grr_kernel(int64)\nnot a line\n")
    with pytest.raises(ValueError, match="line 3 is not"):
        _cache.read_manifest(p)


def test_compile_all_checks_every_entry_before_compiling(monkeypatch):
    compiled = []
    monkeypatch.setattr(_cache, "compile_entries", lambda entries: compiled.extend(entries) or [])
    good = _cache.read_manifest()[0]
    with pytest.raises(ValueError, match="client_grr.no_such_kernel, which is not a kernel"):
        _cache.compile_all(jobs=1, entries=[good, ("client_grr", "no_such_kernel", "int64")])
    with pytest.raises(ValueError, match="unknown type"):
        _cache.compile_all(jobs=1, entries=[good, (good[0], good[1], "int65")])
    for jobs in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="jobs must be a positive integer"):
            _cache.compile_all(jobs=jobs, entries=[good])
    assert compiled == []


def test_compile_entries_compiles_the_listed_signature():
    entry = next(e for e in _cache.read_manifest() if e[:2] == ("client_grr", "grr_kernel"))
    (row,) = _cache.compile_entries([entry])
    assert row["kernel"] == "client_grr.grr_kernel" and row["arguments"] == entry[2]
    from ldpnum._kernels import client_grr
    assert _cache.decode(entry[2]) in client_grr.grr_kernel.signatures


def test_command_line_compile_reports_what_it_did(monkeypatch, capsys):
    entry = next(e for e in _cache.read_manifest() if e[:2] == ("client_grr", "grr_kernel"))
    monkeypatch.setattr(_cache, "read_manifest", lambda path=None: [entry])
    assert cli.main(["compile", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 signature of 1 kernel" in out
    assert cli.main(["compile", "--jobs", "0"]) == 2
    assert "jobs must be a positive integer" in capsys.readouterr().err


def write_manifest():
    with pytest.MonkeyPatch.context() as mp:
        lines = sorted(launched_signatures(mp, mechanism_calls()))
    header = ("# Every client kernel signature the registered mechanisms launch (ldpnum/_kernels/_cache.py).\n"
              "# Written by `python tests/_kernels/test_cache.py --write`; checked by that test file.\n")
    _cache.MANIFEST.write_text(header + "".join(f"{m}.{k}({a})\n" for m, k, a in lines))
    print(f"{_cache.MANIFEST}: {len(lines)} signatures of {len({(m, k) for m, k, _ in lines})} kernels")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(__doc__)
    write_manifest()
