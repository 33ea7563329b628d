"""Documentation of the installed package: references, the package docstring."""

import doctest
import pathlib
import re

import pytest

import ldpnum

PACKAGE = pathlib.Path(ldpnum.__file__).parent
SOURCES = sorted(p for p in PACKAGE.rglob("*") if p.suffix in {".py", ".pyx", ".pxd", ".md"})

# A reader of the installed package has no repository around it: docstrings cite papers and lecture notes by
# author and title, never a path into the development tree.
REPOSITORY_PATH = re.compile(r"\.\./shared|seeds/")


def test_sources_found():
    names = {p.name for p in SOURCES}
    assert {"__init__.py", "_results.py", "wave.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_repository_paths_in_references(path):
    text = path.read_text(encoding="utf-8")
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(text.splitlines(), 1) if REPOSITORY_PATH.search(line)]
    assert not hits, f"{path.name} cites repository paths; cite authors and title instead:\n" + "\n".join(hits)


def test_repository_path_pattern_catches_old_style_citations():
    # negative control: the pattern flags the citations this test exists to keep out
    assert REPOSITORY_PATH.search("``../shared/seeds/002_bf216fff5ae8aeb1.txt`` (EM Algorithm 1)")
    assert REPOSITORY_PATH.search("see seeds/004_14da69ae23cc8615.txt")
    assert not REPOSITORY_PATH.search('Z. Li et al., "Estimating Numerical Distributions under LDP", SIGMOD 2020')


def _modules():
    import pkgutil

    names = ["ldpnum"] + [m.name for m in pkgutil.walk_packages(ldpnum.__path__, "ldpnum.")
                          if not m.name.split(".")[-1].startswith("__")]
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name):
    # Every example in every module's docstrings runs and shows what it says (like pytest --doctest-modules).
    import importlib

    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, name):
        if test.examples and (test.filename is None or test.filename.startswith(str(PACKAGE))):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0, f"a docstring example of {name} fails (output above)"


def test_package_docstring_runs_and_describes_the_package():
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(ldpnum) if t.examples]
    assert tests, "the package docstring has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    doc = ldpnum.__doc__
    assert "later release" not in doc
    for topic in ("means", "distributions", "quantiles", "range", "frequencies", ".ldp", "ldpnum.dask",
                  "python -m ldpnum"):
        assert topic in doc, topic
