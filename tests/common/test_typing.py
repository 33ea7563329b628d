"""The public API is typed: the package ships ``py.typed`` and ``mypy`` finds no error in ``ldpnum/``."""

import importlib.util
import pathlib
import subprocess
import sys

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
