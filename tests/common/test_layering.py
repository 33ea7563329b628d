"""Module layering: the result objects, their plot helpers and checks import downwards only."""

import ast
import pathlib

import pytest

import ldpnum

ROOT = pathlib.Path(ldpnum.__file__).parent


def _imports(path):
    """(module imported, at module level?) for every ``from .x import`` / ``import ldpnum.x`` in a file."""
    tree = ast.parse(path.read_text())
    top = set(map(id, tree.body))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            out.append((("." * node.level) + (node.module or ""), id(node) in top))
        elif isinstance(node, ast.Import):
            out += [(a.name, id(node) in top) for a in node.names if a.name.startswith("ldpnum")]
    return out


@pytest.mark.parametrize("below, above", [
    ("_checks.py", ("_results", "ranges", "plot", "_plotting")),
    ("_plotting.py", ("_results", "ranges", "plot")),
    ("_results.py", ("ranges", "plot")),
])
def test_lower_modules_do_not_import_higher_ones(below, above):
    for module, _ in _imports(ROOT / below):
        name = module.lstrip(".").split(".")[0]
        assert name not in above, f"{below} imports {module}"


@pytest.mark.parametrize("path", ["_results.py", "ranges/_result.py", "plot.py", "_plotting.py", "_checks.py"])
def test_no_function_level_imports_of_ldpnum_modules(path):
    """A function-level import of a package module is how an import circle hides; these have none."""
    late = [m for m, at_top in _imports(ROOT / path) if not at_top]
    assert not late, f"{path} imports {late} inside functions"
