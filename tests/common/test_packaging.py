"""What the wheel ships: every file of the package that git tracks is in a package the build finds, and every
file that is not Python source matches a ``package-data`` pattern of pyproject.toml (or is a Cython source the
build compiles). A data file, stub or kernel list added without a pattern would be left out of the wheel while
every test of a working tree still passed."""

import fnmatch
import pathlib
import shutil
import subprocess

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def unshipped(files, package_data, packages):
    """The files of ``files`` (paths relative to the root, under ``ldpnum/``) a wheel would leave out."""
    out = []
    for f in files:
        path = pathlib.PurePosixPath(f)
        package = ".".join(path.parent.parts)
        if package not in packages:
            out.append(f"{f} (its directory is not a package: no __init__.py)")
        elif path.suffix != ".py" and not any(fnmatch.fnmatch(path.name, p) for p in package_data.get(package, ())):
            out.append(f"{f} (no package-data pattern of {package!r} matches it)")
    return out


def _tracked():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    res = subprocess.run(["git", "ls-files", "ldpnum"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [f for f in res.stdout.splitlines() if (ROOT / f).exists()]


def _config():
    with open(ROOT / "pyproject.toml", "rb") as fh:
        cfg = tomllib.load(fh)["tool"]["setuptools"]
    assert cfg["packages"]["find"]["include"] == ["ldpnum*"]
    return cfg["package-data"]


def test_every_tracked_file_of_the_package_is_in_the_wheel():
    files = _tracked()
    packages = {".".join(p.relative_to(ROOT).parent.parts) for p in (ROOT / "ldpnum").rglob("__init__.py")}
    assert unshipped(files, _config(), packages) == []
    # the build compiles every .pyx of the kernels (setup.py's glob); each has its stub for type checkers
    pyx = {pathlib.Path(f).stem for f in files if f.endswith(".pyx")}
    assert pyx and pyx == {pathlib.Path(f).stem for f in files if f.endswith(".pyi")}


def test_the_check_finds_a_file_the_wheel_would_leave_out():
    packages = {"ldpnum", "ldpnum.data"}
    data = {"ldpnum.data": ["*.npz"]}
    found = unshipped(["ldpnum/data/new.csv", "ldpnum/data/flights.npz", "ldpnum/extra/mod.py"], data, packages)
    assert found == ["ldpnum/data/new.csv (no package-data pattern of 'ldpnum.data' matches it)",
                     "ldpnum/extra/mod.py (its directory is not a package: no __init__.py)"]
