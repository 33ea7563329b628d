"""docs/adding-a-mechanism.md builds what it says.

The document's worked example is made of marked code blocks (``<!-- adding-example: KIND PATH -->`` before a
```` ```python ```` block): the module of the new mechanism, a usage example, its entry in ``CASES`` and its own
tests. Here they run in the document's order: the module is executed as a throwaway module registered under
the path it names (only while this file's tests run: the registry, ``CASES`` and ``sys.modules`` are restored
afterwards, so no other test sees the example), the ``CASES`` entry is added to the common suite's table, and
then every check of tests/common/test_common.py that is parametrized over the registered mechanisms runs on the new
one (exact ε, kernel against plan, bad inputs, reproducibility, pickling, negative controls), followed by the
usage block and the example's own tests. A document whose example no longer builds, or no longer passes the
checks a real mechanism must pass, fails here.
"""

import contextlib
import importlib.util
import inspect
import pathlib
import re
import sys
import types

import numpy as np
import pytest
import test_common as common
from test_common import no_draws  # noqa: F401  (a fixture some common checks take)

from ldpnum import base
from ldpnum.mechanisms import registered

ROOT = next(p for p in pathlib.Path(__file__).resolve().parents if (p / "docs" / "adding-a-mechanism.md").is_file())
DOC = ROOT / "docs" / "adding-a-mechanism.md"
BLOCK = re.compile(r"<!-- adding-example: (\w+)(?: (\S+))? -->\n```python\n(.*?)```", flags=re.DOTALL)
KINDS = ("module", "use", "case", "tests")


def example_blocks(text):
    """``[(kind, path, code)]`` of the marked example blocks, in the document's order."""
    return BLOCK.findall(text)


def _common_checks():
    """Names of the checks of tests/common/test_common.py parametrized over registered mechanisms (by ``name``, or by
    ``name`` and instance ``kwargs``), and whether they are for numerical mechanisms only."""
    out = {}
    for fname, f in vars(common).items():
        marks = [m for m in getattr(f, "pytestmark", []) if m.name == "parametrize"] if callable(f) else []
        if fname.startswith("test_") and marks and marks[0].args[0] in ("name", "name,kwargs"):
            out[fname] = marks[0].args[1] is common.NUMERIC
    return out


COMMON_CHECKS = _common_checks()


@contextlib.contextmanager
def built_example():
    """Build the document's mechanism from its blocks; on exit, remove everything it registered."""
    blocks = example_blocks(DOC.read_text(encoding="utf-8"))
    registries = (base._REGISTRY, base._VECTOR_REGISTRY, base._NAMES)
    registered()  # the built-in mechanisms first, so that what the example adds is all that is new
    saved = [dict(r) for r in registries]
    saved_cases = dict(common.CASES)
    added = []
    try:
        for kind, path, code in blocks:
            if kind == "module":
                name = path.removesuffix(".py").replace("/", ".")
                assert importlib.util.find_spec(name.rpartition(".")[0]) is not None, path
                assert name not in sys.modules and not (ROOT / path).exists(), f"{path} exists: rename the example"
                module = types.ModuleType(name)
                module.__file__ = str(DOC)
                sys.modules[name] = module
                added.append(name)
                exec(compile(code, f"{DOC.name}: {path}", "exec"), module.__dict__)  # noqa: S102 (the document's own code)
            elif kind == "case":
                common.CASES.update(eval("{" + code + "}", vars(common)))
        names = sorted((set(base._REGISTRY) | set(base._VECTOR_REGISTRY)) - set(saved[0]) - set(saved[1]))
        yield types.SimpleNamespace(blocks=blocks, names=names, modules=[sys.modules[n] for n in added])
    finally:
        for registry, old in zip(registries, saved):
            registry.clear()
            registry.update(old)
        common.CASES.clear()
        common.CASES.update(saved_cases)
        for name in added:
            sys.modules.pop(name, None)


def test_the_example_leaves_nothing_behind():
    """Runs first: building the example and leaving it restores the registry, CASES and sys.modules."""
    before = (dict(registered()), dict(base._VECTOR_REGISTRY), dict(base._NAMES), dict(common.CASES),
              set(sys.modules))
    with built_example() as ex:
        assert ex.names and ex.names[0] in registered()
    after = (dict(registered()), dict(base._VECTOR_REGISTRY), dict(base._NAMES), dict(common.CASES))
    assert after == before[:4] and not {m.__name__ for m in ex.modules} & set(sys.modules)


@pytest.fixture(scope="module")
def example():
    """The document's mechanism, for this file's tests only."""
    with built_example() as ex:
        yield ex


def test_the_document_is_module_use_case_and_tests():
    """The example is exactly what a new mechanism is: its module, one CASES entry, its own tests."""
    blocks = example_blocks(DOC.read_text(encoding="utf-8"))
    assert [kind for kind, _, _ in blocks] == list(KINDS)
    paths = {kind: path for kind, path, _ in blocks}
    assert paths["module"].startswith("ldpnum/") and paths["module"].endswith(".py")
    assert paths["case"] == "tests/common/test_common.py"
    assert paths["tests"].startswith("tests/") and pathlib.Path(paths["tests"]).name.startswith("test_")


def test_block_parser_reads_a_planted_document():
    text = ("x\n<!-- adding-example: module ldpnum/a/b.py -->\n```python\nA = 1\n```\n"
            "```python\nnot marked\n```\n<!-- adding-example: use -->\n```python\nB = 2\n```\n")
    assert example_blocks(text) == [("module", "ldpnum/a/b.py", "A = 1\n"), ("use", "", "B = 2\n")]


def test_the_example_registers_one_mechanism_that_builds_with_its_defaults(example):
    assert len(example.names) == 1
    (name,) = example.names
    cls = registered()[name]
    assert cls.__module__ == example.modules[0].__name__ and name in common.CASES
    m = cls(1.0, (0, 1))
    assert m.spec.mechanism == name and len(m.privatize(np.linspace(0, 1, 100), rng=0)) == 100


@pytest.mark.parametrize("check", sorted(COMMON_CHECKS))
def test_common_check(example, check, request):
    """One check of the common suite, on every instance of the example's CASES entry."""
    f = getattr(common, check)
    params = list(inspect.signature(f).parameters)
    fixtures = {p: request.getfixturevalue(p) for p in params if p not in ("name", "kwargs")}
    for name in example.names:
        if COMMON_CHECKS[check] and common.CASES[name].kind != "numeric":
            continue
        for kwargs in common.CASES[name].settings if "kwargs" in params else [None]:
            f(name=name, **({"kwargs": kwargs} if "kwargs" in params else {}), **fixtures)


def test_common_checks_found():
    assert {"test_exact_epsilon", "test_kernel_matches_plan", "test_bad_inputs_raise_before_any_draw",
            "test_same_seed_same_reports", "test_chunks_and_blocks_equal_one_call",
            "test_pickling_and_specs_round_trip", "test_exact_check_rejects_inflated_epsilon",
            "test_bad_bounds"} <= set(COMMON_CHECKS)
    assert COMMON_CHECKS["test_bad_bounds"] and not COMMON_CHECKS["test_exact_epsilon"]


def test_kernels_of_the_example_have_one_input_signature(example, monkeypatch):
    from ldpnum._kernels import _jit

    monkeypatch.setattr(_jit, "MODE", "compile")
    launched = common.launched_kernels(monkeypatch, common.signature_calls(example.names))
    assert common.signature_problems(launched) == []


def test_the_usage_block_runs(example):
    (code,) = [code for kind, _, code in example.blocks if kind == "use"]
    exec(compile(code, f"{DOC.name}: usage", "exec"), {})  # noqa: S102 (the document's own code)


def test_the_examples_own_tests_pass(example):
    (code,) = [code for kind, _, code in example.blocks if kind == "tests"]
    namespace = {}
    exec(compile(code, f"{DOC.name}: tests", "exec"), namespace)  # noqa: S102 (the document's own code)
    tests = [f for n, f in namespace.items() if n.startswith("test_") and callable(f)]
    assert tests
    for f in tests:
        f()
