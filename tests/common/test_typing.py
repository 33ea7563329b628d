"""The public API is typed: the package ships ``py.typed`` and ``mypy`` finds no error in ``ldpnum/``."""

import functools
import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import subprocess
import sys
import types

import pytest

import ldpnum

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(ldpnum.__file__).resolve().parent


def test_package_ships_py_typed_marker():
    assert (PACKAGE / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text()
    assert '"ldpnum" = ["py.typed"]' in text  # installed with the package, not only present in the tree


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    """One mypy cache for this file, fresh when the file starts: the package check below fills it (so it runs
    on an empty cache), and the negative control reuses the package's analysis instead of redoing it."""
    return tmp_path_factory.mktemp("mypy") / "cache"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (it comes with the [test] extra: pip install -e '.[test]')")
def test_mypy_is_clean_on_the_package(mypy_cache):
    # The [tool.mypy] section of pyproject.toml holds the settings; a fresh cache keeps the run honest.
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(mypy_cache), "ldpnum"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_catches_a_misuse_of_the_public_api(tmp_path, mypy_cache):
    # negative control: the annotations are strong enough to reject a wrong call
    user = tmp_path / "user.py"
    user.write_text("import ldpnum as ldp\n"
                    "m = ldp.SquareWave(epsilon='one', bounds=(0, 1))\n"
                    "est = m.estimate_mean(m.privatize([0.5]))\n"
                    "v: str = est.value\n")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(mypy_cache),
                           "--config-file", str(ROOT / "pyproject.toml"), str(user)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'Argument "epsilon"' in proc.stdout and "user.py:4" in proc.stdout, proc.stdout


# --- Annotations on the public API -------------------------------------------------------------------------
# Every public function and every public method of a public class (names without a leading underscore,
# reached from ``ldpnum.__all__`` and the public names of the public modules) annotates each parameter
# (``self``/``cls`` and untyped ``*args``/``**kwargs`` aside) and its return; properties annotate their return.


#: Public callables left untyped on purpose, with the reason (qualified name -> reason).
DELIBERATELY_UNTYPED: dict[str, str] = {}

#: Public callables not annotated yet. The list only shrinks: an entry that is now annotated fails the test
#: until it is removed, and a new public callable must arrive annotated. Empty: every public callable is
#: annotated.
NOT_YET_ANNOTATED: frozenset[str] = frozenset()


def _public_modules():
    """``ldpnum`` and every importable module below it whose dotted name has no private component."""
    names = ["ldpnum"] + [m.name for m in pkgutil.walk_packages(ldpnum.__path__, "ldpnum.")
                          if not any(part.startswith("_") for part in m.name.split("."))]
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except ImportError:  # an optional integration whose dependency is absent (dask)
            continue
    return modules


def _public_names(module):
    """The names ``module`` makes public: its ``__all__``, else what it defines without a leading underscore."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [name for name, value in vars(module).items() if not name.startswith("_")
            and getattr(value, "__module__", None) == module.__name__]


def _own(func):
    return getattr(func, "__module__", None) is not None and func.__module__.startswith("ldpnum")


def _members(cls):
    """The public methods and property getters of ``cls`` defined by ldpnum (inherited ones included)."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        for klass in cls.__mro__:
            if name in vars(klass):
                raw = vars(klass)[name]
                break
        else:
            continue
        if isinstance(raw, (staticmethod, classmethod)):
            yield raw.__func__, isinstance(raw, classmethod)
        elif isinstance(raw, property) and raw.fget is not None:
            yield raw.fget, True
        elif isinstance(raw, functools.cached_property):
            yield raw.func, True
        elif inspect.isfunction(raw):
            yield raw, True


def public_callables(modules=None):
    """``{qualified name: function}`` of the public functions, methods and property getters."""
    found = {}

    def add(func, is_method):
        func = inspect.unwrap(func)
        if inspect.isfunction(func) and _own(func):
            found[f"{func.__module__}.{func.__qualname__}"] = (func, is_method)

    for module in modules if modules is not None else _public_modules():
        for name in _public_names(module):
            value = getattr(module, name, None)
            if inspect.isclass(value) and _own(value):
                for func, is_method in _members(value):
                    add(func, is_method)
            elif inspect.isfunction(value):
                add(value, False)
    return found


def missing_annotations(func, is_method):
    """Names of the parameters of ``func`` without an annotation, plus ``"return"`` if that is missing."""
    annotations = func.__annotations__
    params = list(inspect.signature(func).parameters.values())
    if is_method and params and params[0].name in ("self", "cls"):
        params = params[1:]
    missing = [p.name for p in params if p.name not in annotations
               and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    if "return" not in annotations:
        missing.append("return")
    return missing


def annotation_misses(callables):
    return {qualname: missing for qualname, (func, is_method) in sorted(callables.items())
            if (missing := missing_annotations(func, is_method))}


def test_public_callables_are_annotated():
    callables = public_callables()
    assert len(callables) > 300  # the walk reaches the families, not only the top level
    misses = annotation_misses(callables)
    new = {q: m for q, m in misses.items() if q not in DELIBERATELY_UNTYPED and q not in NOT_YET_ANNOTATED}
    assert not new, "public callables without annotations (parameter names, 'return'):\n" + "\n".join(
        f"  {q}: {', '.join(m)}" for q, m in new.items())
    done = sorted(q for q in NOT_YET_ANNOTATED if q not in misses)
    assert not done, "annotated now, remove from NOT_YET_ANNOTATED:\n" + "\n".join(f"  {q}" for q in done)
    gone = sorted(q for q in NOT_YET_ANNOTATED | set(DELIBERATELY_UNTYPED) if q not in callables)
    assert not gone, "no longer public callables, remove from the lists:\n" + "\n".join(f"  {q}" for q in gone)


def test_annotation_check_catches_an_unannotated_function():
    # negative control: a planted module with one untyped function, one half-typed method, one typed pair
    planted = types.ModuleType("ldpnum._planted")
    exec("def bare(x, *args, y=1, **kw):\n    return x\n"
         "def typed(x: int, *args, **kw) -> int:\n    return x\n"
         "class Thing:\n"
         "    def half(self, x: int):\n        return x\n"
         "    @property\n    def size(self):\n        return 1\n"
         "    def _private(self, x):\n        return x\n",
         planted.__dict__)
    planted.__all__ = ["bare", "typed", "Thing"]
    misses = annotation_misses(public_callables([planted]))
    assert misses == {"ldpnum._planted.bare": ["x", "y", "return"],
                      "ldpnum._planted.Thing.half": ["return"],
                      "ldpnum._planted.Thing.size": ["return"]}, misses


# --- Docstrings of public names (ruff's pydocstyle rules) -----------------------------------------------------

@pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                    reason="ruff is not installed (it comes with the [test] extra: pip install -e '.[test]')")
def test_ruff_is_clean_on_the_package():
    # The rule set is explicit in [tool.ruff.lint] of pyproject.toml: pyflakes, pycodestyle's errors and
    # pydocstyle (numpy convention) for public names.
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "ldpnum"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '"D"' in (ROOT / "pyproject.toml").read_text()  # the docstring rules are part of the set
