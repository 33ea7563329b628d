"""The JIT policy (ldpnum/_kernels/_jit.py): one place compiles kernels, both tiers give identical reports,
small calls start fast without Numba, ``import ldpnum`` stays light, and the kernels run as plain Python."""

import ast
import importlib
import os
import pathlib
import pickle
import pkgutil
import subprocess
import sys
import textwrap
import types
import warnings

import numba
import numpy as np
import pytest
from numba.extending import is_jitted

import ldpnum as ldp
from ldpnum._kernels import _jit
from ldpnum._kernels._jit import prange
from ldpnum.base import _REGISTRY, _VECTOR_REGISTRY

from conftest import adversarial_values

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ldpnum"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("LDPNUM_JIT", "NUMBA_DISABLE_JIT")}
    env.update(extra)
    return env


def _run(script, **env):
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=_env(**env), capture_output=True,
                         text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return res.stdout


# -- one policy -----------------------------------------------------------------------------------------
def _ldpnum_modules():
    """Every Python module of ldpnum, imported (not ``__main__``, which runs the command line)."""
    mods = [ldp]
    for info in pkgutil.walk_packages(ldp.__path__, "ldpnum."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            mods.append(importlib.import_module(info.name))
    return mods


def jitted_outside_policy(modules):
    """``module.name`` of every Numba-compiled function held by a module (kernels made by the policy are
    :class:`ldpnum._kernels._jit.Kernel` objects, whose dispatchers no module holds)."""
    return sorted(f"{m.__name__}.{name}" for m in modules for name, v in vars(m).items() if is_jitted(v))


def numba_importers(sources):
    """Names of the sources (``{name: text}``) that import Numba; only the policy module may."""
    out = []
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            if any(n == "numba" or n.startswith("numba.") for n in names):
                out.append(name)
                break
    return sorted(out)


def test_no_kernel_is_compiled_outside_the_policy():
    modules = _ldpnum_modules()
    assert len(modules) > 20
    assert jitted_outside_policy(modules) == []
    kernels = [v for m in modules for v in vars(m).values() if isinstance(v, _jit.Kernel)]
    assert len(kernels) > 40
    for k in kernels:  # made by jit(): the policy's options, never fastmath
        assert k.options["cache"] and k.options["nogil"] and not k.options["fastmath"], k
        assert k.options.get("parallel", False) == k.parallel and (k.options.get("inline") == "always") == k.inline


def test_kernels_pickle_by_reference():
    import pickle

    from ldpnum._kernels import client_numeric as client
    blob = pickle.dumps(client.binary_kernel)
    assert pickle.loads(blob) is client.binary_kernel and b"numba" not in blob and len(blob) < 200


def test_policy_check_catches_a_planted_kernel():
    planted = types.ModuleType("ldpnum._kernels.planted")

    def double(x):
        return 2 * x

    planted.double = numba.njit(double)
    planted.parallel_double = numba.njit(parallel=True)(double)
    planted.fine = _jit.jit()(double)
    assert jitted_outside_policy([planted]) == ["ldpnum._kernels.planted.double",
                                                "ldpnum._kernels.planted.parallel_double"]


def test_only_the_policy_module_imports_numba():
    sources = {str(p.relative_to(ROOT)): p.read_text() for p in PACKAGE.rglob("*.py")}
    assert numba_importers(sources) == ["ldpnum/_kernels/_jit.py"]
    planted = {"a.py": "from numba import njit\n", "b.py": "import numba.core\n", "c.py": "import numpy\n",
               "d.py": "def f():\n    import numba\n"}
    assert numba_importers(planted) == ["a.py", "b.py", "d.py"]


# -- both tiers, bit for bit ----------------------------------------------------------------------------
def _workload():
    """Mechanisms (with the parameters that select different kernel branches) and their inputs."""
    bounds = (-3.0, 11.0)
    x = adversarial_values(bounds, n_random=2000)
    numeric = [ldp.StochasticRounding(0.5, bounds), ldp.Duchi(3.0, bounds), ldp.Piecewise(1.0, bounds),
               ldp.Piecewise(12.0, bounds), ldp.Hybrid(0.3, bounds), ldp.Hybrid(2.0, bounds),
               ldp.Laplace(0.1, bounds), ldp.Laplace(4.0, bounds), ldp.SquareWave(1.0, bounds),
               ldp.GeneralWave(2.0, bounds, shape="triangle"), ldp.GeneralWave(0.5, bounds, shape="trapezoid"),
               ldp.HierarchicalHistogram(1.0, bounds, oracle="grr"),
               ldp.HierarchicalHistogram(1.0, bounds, n_leaves=64, oracle="hadamard"),
               ldp.HierarchicalHistogram(2.0, bounds, oracle="olh"), ldp.HierarchicalHistogram(1.0, bounds)]
    cases = [(m, x, {}) for m in numeric]
    cases.append((ldp.RandomizedResponse(0.7), np.arange(2001) % 2, {}))
    for k in (2, 5, 64, 300):
        codes = np.random.default_rng(k).integers(-1, k, 1500)
        for cls in (ldp.GRR, ldp.HadamardResponse, ldp.BLH, ldp.OLH, ldp.PIRappor, ldp.SUE, ldp.OUE,
                    ldp.SubsetSelection):
            for eps in (0.5, 6.0):
                cases.append((cls(eps, k), codes, {"unknown": "uniform"}))
    ids = np.random.default_rng(7).bit_generator.random_raw(1500)
    ids[::3] = 0  # the extremes of the prefix shift
    ids[1::3] = np.uint64(2**64 - 1)
    for m in (ldp.PEM(0.5, item_type="uint"), ldp.PEM(6.0, item_bits=20, eta=3, item_type="uint"),
              ldp.TreeHist(2.0, item_bits=12, item_type="uint")):
        cases.append((m, ids >> np.uint64(64 - m.item_bits), {}))
    vb = [bounds, (0.0, 1.0), (-1.0, 1.0), (5.0, 6.0)]
    X = np.column_stack([x[:1500], np.linspace(0, 1, 1500), np.linspace(-1.5, 1.5, 1500), np.full(1500, 5.5)])
    for m in (ldp.DuchiMultivariate(1.0, vb), ldp.DuchiMultivariate(4.0, vb[:3]),
              ldp.DuchiMultivariate(2.0, [(0.0, 1.0)] * 70),
              ldp.SampledDimensions("piecewise", 4.0, vb, k=2), ldp.SampledDimensions("hybrid", 2.0, vb),
              ldp.SampledDimensions("duchi", 8.0, vb)):
        cases.append((m, X if m.dim == 4 else X[:, :3] if m.dim == 3 else np.tile(X[:, 1:2], (1, 70)), {}))
    held = np.random.default_rng(8).random((1500, 70)) < np.linspace(0.0, 0.5, 70)  # 0 to ~40 candidates each
    for k, ell in ((70, 3), (5, 9)):
        cases.append((ldp.PaddingSampling(1.0, k, ell), held[:, :k], {}))
        cases.append((ldp.PaddingSamplingOLH(2.0, k, ell), held[:, :k], {}))
    rows = X[:300, 1:4] / np.linalg.norm(X[:300, 1:4], axis=1, keepdims=True) * np.linspace(0, 1, 300)[:, None]
    U = np.vstack([rows, np.zeros((2, 3)), np.eye(3)])  # norms in [0, 1], zero rows, unit rows
    for m in (ldp.PrivHS(2.0, 3, repetitions=2), ldp.PrivUnit(3.0, 3), ldp.PrivUnitG(1.0, 3, trials=2),
              ldp.PrivUnitG(2.0, 1), ldp.SQKR(3.0, 3), ldp.SQKR(1.0, 1)):
        cases.append((m, U if m.dim == 3 else U[:, :1], {}))
    hb = {"p": bounds, "q": (0.0, 1.0), "r": (-1.0, 1.0)}  # HDG: GRR and OLH grids, 1-D and 2-D cells
    for m in (ldp.HDG(3.0, hb, granularities=(16, 8)), ldp.HDG(0.5, hb, granularities=(8, 2)),
              ldp.HDG(6.0, hb, granularities=(16, 4))):
        cases.append((m, X[:, :3], {}))
    C = np.column_stack([np.arange(1500) % 3, (np.arange(1500) // 3) % 4, np.arange(1500) % 2])
    for m in (ldp.Marginals(3.0, {"u": 3, "v": 4, "w": 2}), ldp.Marginals(0.5, {"u": 3, "v": 4, "w": 2}, k=3)):
        cases.append((m, C, {}))  # Marginals: GRR and OLH attribute sets, 2- and 3-way cells
    # Every other registered mechanism: each instance of its common-test case (or its attack case, for the
    # vector mechanisms), so a new mechanism's kernel is compared on both tiers without an entry here.
    from test_attack import VECTOR_CASES, good_input, make
    from test_common import CASES, build

    covered = {m.name for m, _, _ in cases}
    for name in [*_REGISTRY, *_VECTOR_REGISTRY]:
        if name in covered:
            continue
        instances = ([make(name)] if name in VECTOR_CASES or name not in CASES
                     else [build(name, **kw) for kw in CASES[name].settings])
        cases += [(m, good_input(name, m, 1500), {}) for m in instances]
    return cases


def probe_calls(cases):
    """The kernels that no ``privatize`` of ``cases`` launches: the unit vectors' public directions, SQKR's
    representation, the mechanisms' probes (a kernel's own integers, as their tests read them), the sparse bits
    of the count-mean sketch and the probes of padding-and-sampling and PI-RAPPOR. Shared by the tier comparison
    and the kernel manifest (tests/_kernels/test_cache.py), so what the tests launch is compiled at install."""
    from ldpnum.ranges.hierarchical import _hash_nodes
    from ldpnum.vectors.unit import generate_directions
    generate_directions(np.arange(50), 7)
    from ldpnum.vectors.sqkr import kashin_coefficients  # SQKR's representation, as its tests probe it
    kashin_coefficients(next(x for m, x, _ in cases if m.name == "sqkr" and m.dim == 3), 3)
    for m, x, _ in cases:  # the probes that tests use to read a kernel's own integers
        for probe in ("thresholds", "window_starts", "rounding", "leaf_index", "sign_thresholds"):
            if hasattr(m, probe):
                getattr(m, probe)(x)
    _hash_nodes(12345 << 16, np.arange(300), 17)
    keys = ldp.ClientKeys.generate(300, rng=7)  # longitudinal mechanisms take keys (not in CASES)
    for m in (ldp.LGRR(2.0, 1.0, 8), ldp.LOSUE(2.0, 1.0, 13), ldp.LOSUE(1.0, 0.5, 8), ldp.LOLOHA(2.0, 1.0, 8),
              ldp.LOSUE(2.0, 1.0, 1024)):  # (the last one's instantaneous flip by the sparse bit layout)
        m.privatize(np.where(np.arange(300) == 5, m.k, np.arange(300) % m.k), keys=keys, rng=3, unknown="uniform")
    for m in (ldp.RAPPOR(k=16, h=2, cohorts=5), ldp.RAPPOR(k=24, h=2, cohorts=300, f=2000 / 2**16),
              ldp.RAPPOR(k=16, h=3, cohorts=3, f=0.3, p=0.1, q=0.8)):  # RAPPOR's three lane widths
        m.privatize([f"w{i % 37}" for i in range(300)], keys=keys, rng=3)
        m.bloom_bits(["a", "b"])
    u = np.linspace(0.0, 100.0, 300)  # memoized telemetry: alpha-point rounding, the bits and the gamma flips
    for m in (ldp.OneBitMean(2.0, (0, 100), memoize=True, grid_points=5, gamma=0.1),
              ldp.DBitFlip(2.0, (0, 100), buckets=6, d=2, memoize=True, gamma=0.1),
              ldp.DBitFlip(2.0, (0, 100), buckets=300, d=3, memoize=True)):  # beyond 2**16 samples: Floyd's
        m.privatize(u, keys=keys, rng=3)
    ldp.DBitFlip(2.0, (0, 100), buckets=300, d=3).privatize(u, rng=3)
    for m, x, _ in cases:  # HDG's cell probe (its tests read the cells with it), a 1-D and a 2-D grid
        if m.name == "hdg":
            m.cells(x, 0)
            m.cells(x, m.dim)
    from ldpnum._kernels import client_prefix  # the prefix protocols' hash, as their tests probe it
    pp = ldp.PEM(4.0, item_type="uint").plan
    client_prefix.prefix_hash_probe(np.random.default_rng(6).bit_generator.random_raw(300),
                                    np.arange(300) % pp.n_hashes, pp.hash_a, pp.hash_b, pp.g,
                                    np.empty(300, np.int64))
    wide = ldp.PEM(4.0, item_bits=200, top_k=2, item_type="uint")  # items wider than 64 bits: prefix digests
    wide.privatize([(7 << 150) + 3 * i for i in range(300)], rng=3)
    from ldpnum.heavy.items import prefix_digests  # digests of prefixes of any length (PrefixPlan.prefix_word)
    prefix_digests(wide.prepare_values([(5 << 140) + 7 * i for i in range(300)]), 200, np.arange(300) % 200)
    ldp.CountMeanSketch(2.0, item_bits=256, width=64, hashes=4).privatize(["a" * 40, "b"] * 150, rng=3)
    ldp.CountMeanSketch(4.0, 7, width=1024, hashes=4).privatize(np.arange(300) % 7, rng=3)  # sparse bits
    for m in (ldp.PGR(2.0, 1000), ldp.HadamardResponse(1.0, 70_000),  # codes of 16 and 32 bits
              ldp.CountMeanSketch(2.0, 7, width=16, hashes=4, variant="hcms"),  # 8 and 16 bits
              ldp.CountMeanSketch(2.0, 7, width=64, hashes=4, variant="hcms")):
        m.privatize(np.arange(300) % 7, rng=3)
    from ldpnum._kernels import client_setvalued  # padding-and-sampling's slot, as its tests probe it
    sets = ldp.PaddingSampling(1.0, 70, 3).prepare_values(np.random.default_rng(9).random((300, 70)) < 0.1)
    client_setvalued.sample_slot_probe(sets, 70, 3, np.random.default_rng(6).bit_generator.random_raw(300),
                                       np.empty(300, np.int64))
    from ldpnum._kernels import client_pirappor as pir  # probes of PI-RAPPOR's arithmetic (its tests use them)
    words = np.random.default_rng(5).bit_generator.random_raw(3 * 500)
    for p in (5, 1031, 482106433):
        pir.uniform_probe(words, p, np.empty(words.size, np.uint64))
        pir.mod_probe(words, p, (1 << 64) // p, np.empty(words.size, np.uint64))
    pl = ldp.PIRappor(2.0, 16).plan
    pir.pirappor_parts(np.arange(-1, 499) % 17 - 1, pl.p, pl.a, pl.t_b, pl.barrett, words,
                       *[np.empty(500, np.uint64) for _ in range(4)])


def _dual_call(calls):
    def call(self, *args):
        """Run the compiled kernel, then the interpreted one on copies of the outputs; compare."""
        if self.inline:
            return self.py_func(*args)
        args = _jit._read_only(args, self.read_only_args)  # as Kernel.__call__ hands them: one signature
        copies = [a.copy() if isinstance(a, np.ndarray) and a.flags.writeable else a for a in args]
        with _jit.LAUNCH_LOCK:
            got = self.dispatcher(*args)
        want = self.interpret(*copies)
        for a, b in zip(args, copies):
            if isinstance(a, np.ndarray) and a.flags.writeable:
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b, err_msg=self.__qualname__)
        assert got == want, self.__qualname__
        calls.add(self)
        return got
    return call


def test_interpreted_and_compiled_kernels_agree_bit_for_bit(monkeypatch):
    """Every kernel, run by the workload below, writes the same bytes and returns the same values on both
    tiers; and the workload reaches every kernel of the package (a new mechanism's kernel through its entry in
    test_common.py's CASES; a kernel reached by no mechanism must be called here)."""
    calls = set()
    monkeypatch.setattr(_jit.Kernel, "__call__", _dual_call(calls))
    cases = _workload()
    assert {m.name for m, _, _ in cases} == set(_REGISTRY) | set(_VECTOR_REGISTRY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldp.ClippingWarning)
        for m, x, kw in cases:
            m.privatize(x, rng=3, **kw)
        for m, x, _ in cases:  # the unit-vector mechanisms' decoder regenerates the public directions
            if m.name in ("priv_hs", "priv_unit", "priv_unit_g"):
                m.aggregate(m.privatize(x, rng=4))
        probe_calls(cases)
        for bad in ([0.0, np.inf, 20.0], [0.5, np.nan]):  # the validation scans on their error paths
            with pytest.raises(ValueError):
                ldp.Duchi(1.0, (0, 1)).privatize(bad, out_of_range="raise")
            with pytest.raises(ValueError):
                ldp.RandomizedResponse(1.0).privatize(bad)
        with pytest.raises(ValueError):
            ldp.GRR(1.0, 4).privatize([0, 4, -2])
    everything = {v for m in _ldpnum_modules() if m.__name__.startswith("ldpnum._kernels")
                  for v in vars(m).values() if isinstance(v, _jit.Kernel) and not v.inline}
    assert {k.__qualname__ for k in everything - calls} == set()


@pytest.fixture
def planted_mechanism():
    """A mechanism registered for one test only (the registry is restored afterwards), with no case in the
    common suite: the derived lists must name it rather than skip it."""
    import test_attack  # noqa: F401  (the common suites read the registry when imported: import them first)

    from ldpnum import base as _base

    saved = [dict(r) for r in (_base._REGISTRY, _base._VECTOR_REGISTRY, _base._NAMES)]
    try:
        yield type("PlantedMechanism", (ldp.Mechanism,), {"name": "planted_mechanism", "__module__": __name__})
    finally:
        for registry, old in zip((_base._REGISTRY, _base._VECTOR_REGISTRY, _base._NAMES), saved):
            registry.clear()
            registry.update(old)


def test_tier_workload_names_a_mechanism_without_a_case(planted_mechanism):
    with pytest.raises(pytest.fail.Exception, match="'planted_mechanism' has no entry in tests/common/test_common.py CASES"):
        _workload()


def _startup():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import startup
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return startup


def test_startup_benchmark_measures_every_registered_mechanism(planted_mechanism):
    """bench/startup.py keeps no list: it measures what is registered, on the common suite's cases, and names a
    registered mechanism that has none."""
    startup = _startup()
    with pytest.raises(SystemExit, match=r"\['planted_mechanism'\] have no case in tests/common/test_common.py CASES"):
        startup.registered()
    del _REGISTRY["planted_mechanism"]
    assert startup.registered() == [*_REGISTRY, *_VECTOR_REGISTRY]
    built = startup.instances(["oue", "hdg"], 10)
    assert built["oue"][0].name == "oue" and len(built["oue"][1]) == 10 and built["hdg"][1].shape[0] == 10
    # the vector cases that take a dimension are measured at a given one too (point 6's d = 1024), HDG not
    built = startup.instances(["sqkr", "hdg"], 10, dimension=64)
    assert list(built) == ["sqkr", "sqkr (d=64)", "hdg"]
    assert built["sqkr (d=64)"][0].dim == 64 and built["sqkr (d=64)"][1].shape == (10, 64)


_OFFSET = np.array([1], dtype=np.uint64)


@_jit.jit(parallel=True)
def _plus_offset(values, out):
    for i in prange(values.shape[0]):
        out[i] = values[i] + _OFFSET[0]  # a global array is a constant frozen into the compiled code


def test_tier_comparison_catches_a_kernel_whose_tiers_differ():
    calls = set()
    values = np.arange(5, dtype=np.uint64)
    _dual_call(calls)(_plus_offset, values, np.empty(5, np.uint64))  # compiled with _OFFSET = [1]: agree
    assert calls == {_plus_offset}
    _OFFSET[0] = 2
    try:
        with pytest.raises(AssertionError, match="_plus_offset"):
            _dual_call(calls)(_plus_offset, values, np.empty(5, np.uint64))
    finally:
        _OFFSET[0] = 1


# -- the tiers ------------------------------------------------------------------------------------------
@_jit.jit(parallel=True)
def _plus_words(values, words, out):
    for i in prange(values.shape[0]):
        out[i] = values[i] + words[2 * i] - words[2 * i + 1]


def _fresh_plus_words():
    return _jit.Kernel(_plus_words.py_func, _plus_words.options, True, False)


def test_auto_tier_interprets_small_calls_then_compiles(monkeypatch):
    monkeypatch.setattr(_jit, "MODE", "auto")
    monkeypatch.setattr(_jit, "INTERPRET_MAX_ELEMENTS", 100)
    monkeypatch.setattr(_jit, "INTERPRET_TOTAL_ELEMENTS", 250)
    k = _fresh_plus_words()

    def run(n):
        values = np.arange(n, dtype=np.uint64)
        words = np.arange(2 * n, dtype=np.uint64)[::-1].copy()
        out = np.empty(n, np.uint64)
        k(values, words, out)
        return out

    ref = np.arange(40, dtype=np.uint64) + np.uint64(1)  # words[2i] - words[2i + 1] = 1
    np.testing.assert_array_equal(run(40), ref)  # 80 words: interpreted
    assert not k.compiled and k.interpreted_elements == 80
    run(50)  # 100 words: interpreted, 180 in all
    assert not k.compiled
    run(50)  # would make 280 > 250: compiled from now on
    assert k.compiled and k.signatures
    np.testing.assert_array_equal(run(40), ref)
    assert k.interpreted_elements == 180
    k2 = _fresh_plus_words()
    run2 = k2(np.arange(51, dtype=np.uint64), np.zeros(102, np.uint64), np.empty(51, np.uint64))  # 102 > 100
    assert run2 is None and k2.compiled


def test_auto_tier_compiles_once_interpreting_has_cost_what_loading_would(monkeypatch):
    """The time budget: each interpreted call of 2048 words "takes" 0.1 s on a fake clock, so two fit in a budget
    of 0.25 s and the third, predicted at the measured rate, is compiled — although the element budgets (16,384
    per call, 65,536 in all) would have interpreted it. Negative control: a free clock interprets all three."""
    monkeypatch.setattr(_jit, "MODE", "auto")
    monkeypatch.setattr(_jit, "INTERPRET_SECONDS", 0.25)
    now = [0.0]
    monkeypatch.setattr(_jit, "_clock", lambda: now[0])

    def run(k, n=1024):
        values = np.arange(n, dtype=np.uint64)
        words = np.zeros(2 * n, np.uint64)
        out = np.empty(n, np.uint64)
        k(values, words, out)
        np.testing.assert_array_equal(out, values)

    def kernel(seconds_per_call):
        k = _fresh_plus_words()
        interpret = k.interpret

        def slow(*args):
            now[0] += seconds_per_call
            return interpret(*args)
        k.interpret = slow
        return k

    k = kernel(0.1)
    run(k)
    run(k)
    assert not k.compiled and k.interpreted_seconds == pytest.approx(0.2)
    assert k.seconds_per_element == pytest.approx(0.1 / 2048)
    run(k)
    assert k.compiled and k.interpreted_elements == 4096 and k.interpreted_seconds == pytest.approx(0.2)
    free = kernel(0.0)
    for _ in range(3):
        run(free)
    assert not free.compiled and free.interpreted_elements == 3 * 2048
    tiny = kernel(0.1)  # a tiny call's fixed cost is charged as _RATE_MIN_ELEMENTS elements, not per word
    run(tiny, 2)
    assert tiny.seconds_per_element == pytest.approx(0.1 / _jit._RATE_MIN_ELEMENTS)


def test_declared_work_counts_what_a_record_costs():
    """Kernels whose cost per record grows with a parameter the arrays do not show declare their work: a
    block of 10,000 PrivUnitG reports of dimension 50 is 500,000 elements (compiled), not 10,000 (interpreted
    at ~0.9 ms a report); SQKR's rows count their frame transforms, a set's bitmask its bits. The default
    (the largest per-record array) is unchanged for the others."""
    from ldpnum._kernels import client_kashin, client_setvalued, client_unit

    sums = np.empty((client_unit.DECODE_TASKS, 3, 50), dtype=np.int64)
    codes = np.zeros((10_000, 1), dtype=np.uint32)
    args = (codes, 2, 1.0, sums)
    assert client_unit.decode_sums.work_of(args) == 500_000 > _jit.INTERPRET_MAX_ELEMENTS
    fresh = _jit.Kernel(client_unit.decode_sums.py_func, {}, True, False, work=client_unit.decode_sums.work)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_jit, "MODE", "auto")
        assert fresh._interpreted_work(args) is None and fresh.interpreted_elements == 0
        plain = _jit.Kernel(client_unit.decode_sums.py_func, {}, True, False)  # negative control: no work=
        assert plain._interpreted_work(args) == 10_000
    x = np.full((100, 8), 0.1)
    assert client_kashin._frame_work(100, 3, 4) == 100 * 4 * 16
    assert client_setvalued.padding_sampling_kernel.work_of((np.zeros((100, 2), np.uint64),)) == 100 * 2 * 16
    assert client_unit.privhs_kernel.work_of((x, 1.0, 0, 1, 0, np.zeros(300, np.uint64),
                                              np.zeros((100, 1), np.uint32))) == 800



def test_rejection_sampler_counts_its_expected_trials_not_its_words():
    """PrivUnit draws ``J + 2`` words per report but uses ``1/A`` of them on average: 1000 reports of dimension 3
    at ε = 4 (``J = 96``, 7.4 expected trials) are 98,000 words (over the interpreted limit, so the first call
    loaded the compiled kernel, ~1 s) but 12,000 elements of work (0.29 s interpreted, measured); dimension 50
    is 13 times as much (compiled).
    Negative control: the default measure (the words) would compile the small call."""
    from ldpnum._kernels import client_unit

    m = ldp.PrivUnit(4.0, 3)
    p = m._plan
    x = np.full((1000, 3), 0.5)
    words = np.zeros(1000 * (p.trials + 2), dtype=np.uint64)
    out = np.zeros((1000, 1), dtype=np.uint32)
    args = (x, np.ones(1000), np.zeros(1000, np.int64), 1, p.trials, True, p.gamma, p.t_c, words, out,
            np.zeros((1000, 1), np.int64))
    k = client_unit.rejection_kernel
    assert p.trials >= 8 and words.size > _jit.INTERPRET_MAX_ELEMENTS
    assert k.work_of(args) == 1000 * (p.trials // 8) <= _jit.INTERPRET_MAX_ELEMENTS
    wide = (np.full((1000, 50), 0.1),) + args[1:]
    assert k.work_of(wide) == 13 * k.work_of(args) > _jit.INTERPRET_MAX_ELEMENTS
    plain = _jit.Kernel(k.py_func, {}, True, False)  # negative control: no work=
    assert plain.work_of(args) == words.size > _jit.INTERPRET_MAX_ELEMENTS

def test_plan_arrays_do_not_count_as_work():
    """Laplace's noise table has tens of thousands of entries whatever n: the records' arrays measure work."""
    from ldpnum._kernels import client_numeric as client
    k = client.laplace_kernel
    assert [k.py_func.__code__.co_varnames[i] for i in k.work_args] == [
        "x", "low", "inv_range", "g", "t", "words", "out"]
    assert ldp.Laplace(0.1, (0, 1)).plan.table_hi.size > _jit.INTERPRET_MAX_ELEMENTS
    with pytest.raises(TypeError, match="no parameters"):
        _jit.jit(parallel=True, plan_arrays=("tabel",))(_plus_words.py_func)


def _table_flags(values, table, words, out):
    out[0] = table.flags.writeable
    out[1] = values.flags.writeable
    out[2] = words.flags.writeable


def _words_first(words, out):
    out[0] = words.flags.writeable


def test_plan_arrays_and_record_inputs_are_handed_to_kernels_read_only(monkeypatch):
    """A plan's tables and the records' input (the first parameter) reach the kernel read-only even when the
    caller's copy is writable (an unpickled mechanism: NumPy does not pickle the flag; a test or reader holding
    a writable array), so one signature is compiled; the words and the outputs are untouched, and so is the
    caller's array. Negative control: without ``plan_arrays`` the writable table gets through."""
    monkeypatch.setattr(_jit, "MODE", "interpret")
    table, values, words, out = np.arange(3.0), np.arange(2.0), np.arange(2.0), np.empty(3)
    _jit.jit(plan_arrays=("table",))(_table_flags)(values, table, words, out)
    assert list(out) == [0.0, 0.0, 1.0] and table.flags.writeable and values.flags.writeable
    _jit.jit()(_table_flags)(values, table, words, out)
    assert list(out) == [1.0, 0.0, 1.0]
    _jit.jit()(_words_first)(words, out)  # the words drawn come first here: not an input, left as given
    assert out[0] == 1.0
    m = pickle.loads(pickle.dumps(ldp.Laplace(1.0, (0, 1))))
    assert m.plan.table_hi.flags.writeable  # what a worker receives
    assert m.privatize(np.full(10, 0.5), rng=3) == ldp.Laplace(1.0, (0, 1)).privatize(np.full(10, 0.5), rng=3)


def test_forced_modes(monkeypatch):
    k = _fresh_plus_words()
    args = (np.arange(3, dtype=np.uint64), np.ones(6, np.uint64), np.empty(3, np.uint64))
    monkeypatch.setattr(_jit, "MODE", "interpret")
    k(*args)
    assert not k.compiled and k.interpreted_elements == 0
    monkeypatch.setattr(_jit, "MODE", "compile")
    k(*args)
    assert k.compiled
    monkeypatch.setattr(_jit, "MODE", "interpret")  # "interpret" wins even once compiled
    args[2][:] = 7
    k(*args)
    np.testing.assert_array_equal(args[2], args[0])


@pytest.mark.parametrize("env, mode", [({}, "auto"), ({"LDPNUM_JIT": "Compile"}, "compile"),
                                       ({"LDPNUM_JIT": "interpret"}, "interpret"),
                                       ({"LDPNUM_JIT": "compile", "NUMBA_DISABLE_JIT": "1"}, "interpret")])
def test_mode_from_environment(monkeypatch, env, mode):
    monkeypatch.delenv("LDPNUM_JIT", raising=False)
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _jit._mode_from_environment() == mode


def test_bad_mode_is_refused(monkeypatch):
    monkeypatch.setenv("LDPNUM_JIT", "fast")
    with pytest.raises(ValueError, match="LDPNUM_JIT must be one of"):
        _jit._mode_from_environment()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the TBB dependency is Linux x86-64 only")
def test_fork_safe_layer_even_when_other_code_launches_first():
    """ldpnum's import chooses the layer although Numba is not imported yet (bench/run.py's order)."""
    out = _run("""
        import numpy as np, ldpnum, numba
        numba.njit(parallel=True)(lambda x: x.sum())(np.ones(10))
        print(numba.threading_layer())
    """)
    assert out.strip() in ("tbb", "workqueue")


def test_num_threads_without_numba(monkeypatch):
    assert _jit.num_threads() == numba.get_num_threads()
    out = _run("""
        import sys, ldpnum._kernels._jit as j
        print(j.num_threads(), "numba" in sys.modules)
    """, NUMBA_NUM_THREADS="3")
    assert out.split() == ["3", "False"]


# -- fast start -----------------------------------------------------------------------------------------
HEAVY = ("numba", "llvmlite", "scipy", "matplotlib", "dask", "distributed", "pyarrow", "tqdm")


def test_import_ldpnum_loads_no_heavy_module(fresh_imports):
    """Beyond what pandas loads itself (pandas imports pyarrow when it is installed): a fresh interpreter's
    ``import ldpnum`` after ``import pandas`` (conftest's ``fresh_imports``)."""
    new = fresh_imports["ldpnum"] - fresh_imports["before_ldpnum"]
    assert "ldpnum" in new and sorted(new & set(HEAVY)) == []


@pytest.mark.slow
def test_first_small_call_of_every_mechanism_needs_no_numba(tmp_path):
    """In a fresh process (default policy, empty Numba cache), 1000 values of every registered mechanism (the
    start-up benchmark's instances: the first of each common-test case) are randomized without importing Numba;
    a large call then compiles, and gives the reports a small call would have given."""
    built = tmp_path / "instances.pickle"
    built.write_bytes(pickle.dumps(list(_startup().instances(list(_REGISTRY), 1000).values())))
    out = _run(f"""
        import pickle, sys
        import numpy as np
        import ldpnum as ldp
        with open({str(built)!r}, "rb") as fh:
            for m, x in pickle.load(fh):
                m.privatize(x, rng=0)
        print("numba" in sys.modules)
        from ldpnum._kernels import client_numeric as client
        m = ldp.Duchi(1.0, (0, 1))
        x = np.random.default_rng(1).random(1 << 15)
        small = ldp.Reports.concat([m.privatize(c, rng=g) for g in [np.random.default_rng(4)]
                                   for c in np.array_split(x, 8)])
        big = m.privatize(x, rng=4)
        print(client.binary_kernel.compiled, "numba" in sys.modules, big == small)
    """, NUMBA_CACHE_DIR=str(tmp_path))
    assert out.split() == ["False", "True", "True", "True"]


# -- the kernels as plain Python ------------------------------------------------------------------------
#: Tests that compare kernels with their references (tests/naive.py, or the exact integers of the kernels' own
#: probes) are found by name: a test (or test file) whose name has one of these words, in any test file.
NAIVE_KEYWORDS = ("naive", "inverts_the_table", "groups_of_four", "probe")
#: Reference tests left out with the JIT disabled: server-side checks (real reports through the support
#: counts, EM's held-out selection) and the wide Marginals sample, which take minutes with interpreted client
#: kernels and reach no client kernel line the others do not. A new test is included unless named here.
NAIVE_EXCLUDED = ("real_reports", "heldout", "wide_kernel")
#: Client kernels that no reference test reaches yet (measured when the reach check was introduced; the
#: aggregate coverage figure below had hidden them). Each needs a test named like those of NAIVE_KEYWORDS,
#: after which it leaves this set (the check asserts the set exactly, so it cannot go stale); any other
#: unreached kernel, such as a new one, fails the check by name.
NO_REFERENCE_TEST_YET = {
    "ldpnum._kernels.client_kashin.kashin_clip_flags",  # SQKR's clipping flags (tested statistically only)
    "ldpnum._kernels.client_kashin.kashin_probe",  # Kashin coefficients (test_sqkr: "matches_the_reference")
    "ldpnum._kernels.client_vector.combine_codes",  # SampledDimensions' report (test_vectors: joint plan)
    "ldpnum._kernels.client_vector.sign_thresholds",  # Duchi multivariate's probe (test_vectors: exact ε)
}


def naive_test_files(root):
    """Test files under ``root`` (at any depth) whose name, or the name of a test they define, has one of
    :data:`NAIVE_KEYWORDS`, as paths relative to the repository (no list of them is kept). This file is left
    out: its own tests of the selection would run the selection again."""
    out = []
    for path in sorted(root.rglob("test_*.py")):
        if path.resolve() == pathlib.Path(__file__).resolve():
            continue
        names = [path.stem] + [node.name for node in ast.walk(ast.parse(path.read_text()))
                               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                               and node.name.startswith("test")]
        if any(word in name for name in names for word in NAIVE_KEYWORDS):
            out.append(str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path))
    return out


def client_kernels():
    """Every kernel (and inlined helper) of the client modules ``ldpnum/_kernels/client_*.py``."""
    import ldpnum._kernels as pkg

    out = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("client_"):
            module = importlib.import_module(f"ldpnum._kernels.{info.name}")
            out += [v for name, v in vars(module).items()
                    if isinstance(v, _jit.Kernel) and v.__module__ == module.__name__]
    return out


def body_lines(kernel):
    """``(file, line numbers)`` of the statements in a kernel's body (its signature and docstring excluded)."""
    import inspect

    lines, first = inspect.getsourcelines(kernel.py_func)
    func = ast.parse(textwrap.dedent("".join(lines))).body[0]
    body = func.body[1:] if ast.get_docstring(func) is not None else func.body
    numbers = {node.lineno + first - 1 for stmt in body for node in ast.walk(stmt) if isinstance(node, ast.stmt)}
    return inspect.getsourcefile(kernel.py_func), numbers


def unreached_kernels(kernels, executed):
    """Names of the kernels none of whose body lines is in ``executed`` (``{file: executed line numbers}``)."""
    out = []
    for k in kernels:
        path, lines = body_lines(k)
        if not lines & set(executed.get(os.path.realpath(path), ())):
            out.append(f"{k.__module__}.{k.__qualname__}")
    return sorted(out)


def test_naive_reference_tests_are_found_by_name(tmp_path):
    """The reference tests are found wherever they live; a planted file is found, a file without one is not."""
    found = naive_test_files(ROOT / "tests")
    assert len(found) >= 16 and any(f.endswith("test_kernels_naive.py") for f in found)
    assert not any(f.endswith("_kernels/test_jit.py") for f in found)
    assert all(pathlib.Path(f).name.startswith("test_") for f in found)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "test_new_family.py").write_text("def test_kernel_matches_the_naive_reference():\n    pass\n")
    (tmp_path / "test_other.py").write_text("def test_unbiased():\n    pass\n")
    (tmp_path / "test_x_probe.py").write_text("def test_a():\n    pass\n")
    assert [pathlib.Path(f).relative_to(tmp_path).as_posix() for f in naive_test_files(tmp_path)] == [
        "sub/test_new_family.py", "test_x_probe.py"]


def test_unreached_kernel_is_named():
    """Negative control of the reach check: a kernel whose body never ran (here, one planted in this file) is
    named, and one line of its body run is enough."""
    kernels = [k for k in client_kernels() if k.__qualname__ == "binary_kernel"] + [_plus_words]
    assert len(kernels) == 2
    executed = {}
    for k in kernels:
        path, lines = body_lines(k)
        executed.setdefault(os.path.realpath(path), set()).add(min(lines))
    assert unreached_kernels(kernels, executed) == []
    path, lines = body_lines(_plus_words)
    executed[os.path.realpath(path)] -= lines
    assert unreached_kernels(kernels, executed) == [f"{__name__}._plus_words"]
    assert len(client_kernels()) > 40


@pytest.mark.slow
def test_kernels_match_the_naive_references_with_the_jit_disabled(tmp_path):
    """The kernel-versus-reference tests, with ``NUMBA_DISABLE_JIT=1``: every kernel runs as Python (so its
    source lines are exercised and measurable by coverage tools) and still matches tests/naive.py, or the
    exact integers of the probes. The statistical kernel-versus-plan tests are left out: at their sample
    sizes (2e5 and more per state) the interpreted kernels take over ten minutes. Every client kernel must be
    reached (a new kernel without a reference test named like those of :data:`NAIVE_KEYWORDS` is named)."""
    coverage = pytest.importorskip("coverage")
    data = tmp_path / "coverage.dat"
    selection = f"({' or '.join(NAIVE_KEYWORDS)}) and not ({' or '.join(NAIVE_EXCLUDED)})"
    # --assert=plain: the same assertions, without pytest rewriting the 33 files' asserts for introspection
    # (a third of the run's collection, measured 13.4 -> 8.3 CPU-s, where no bytecode cache is written); a
    # failure is still reported by its test's name and traceback
    res = subprocess.run([sys.executable, "-m", "coverage", "run", f"--data-file={data}",
                          "--include=ldpnum/_kernels/client_*.py", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "--assert=plain", "-k", selection, *naive_test_files(ROOT / "tests")],
                         env=_env(NUMBA_DISABLE_JIT="1"), capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert " passed" in res.stdout and " failed" not in res.stdout
    measured = coverage.CoverageData(basename=str(data))
    measured.read()
    executed = {os.path.realpath(f): measured.lines(f) or () for f in measured.measured_files()}
    unreached = set(unreached_kernels(client_kernels(), executed))
    assert not unreached - NO_REFERENCE_TEST_YET, (
        f"client kernels that no reference test reaches: {', '.join(sorted(unreached - NO_REFERENCE_TEST_YET))}")
    assert not NO_REFERENCE_TEST_YET - unreached, (
        f"now reached by a reference test: remove {sorted(NO_REFERENCE_TEST_YET - unreached)} from "
        "NO_REFERENCE_TEST_YET")
    # The kernels' lines run as Python and are counted: measured 98% of the client kernels' statements (the
    # rest: error branches of the probes and Laplace's table-overflow path). Fewer than 95% means a kernel
    # (or a new one) is no longer reached by its reference tests.
    report = subprocess.run([sys.executable, "-m", "coverage", "report", f"--data-file={data}", "--format=total"],
                            capture_output=True, text=True, cwd=ROOT)
    assert report.returncode == 0, report.stderr
    assert int(report.stdout.strip()) >= 95, report.stdout
