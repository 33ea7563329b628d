"""ldpnum.io: the file machinery lives below the command line, and no import circle joins the front ends
(cli, demo) or the aggregate and its report-column metadata (aggregate, _frame)."""

import ast
import pathlib

import pytest

import ldpnum

ROOT = pathlib.Path(ldpnum.__file__).parent


def _imported_modules(path, root=ROOT):
    """Every ldpnum module ``path`` imports, at module level or inside a function, as a dotted name relative to
    the package ``root`` (``"cli"``, ``"heavy._result"``; ``""`` for the package itself)."""
    package = list(path.relative_to(root).parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
            module = ".".join(base + ([node.module] if node.module else []))
            out.add(module)
            if not node.module:  # `from . import cli`: the names may be modules
                out.update(".".join(base + [a.name]) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ldpnum"):
            out.add(node.module.removeprefix("ldpnum").lstrip("."))
        elif isinstance(node, ast.Import):
            out.update(a.name.removeprefix("ldpnum").lstrip(".") for a in node.names if a.name.startswith("ldpnum"))
    return out


def _imports(a, b, root=ROOT):
    """Whether module ``a`` (a name like ``"cli"``) imports module ``b`` or a name from it."""
    return any(m == b or m.startswith(b + ".") for m in _imported_modules(root / f"{a}.py", root))


@pytest.mark.parametrize("low, high", [("demo", "cli"), ("aggregate", "_frame"), ("io", "cli"), ("io", "demo")])
def test_lower_module_does_not_import_the_higher_one(low, high):
    """One direction only, at any level (a function-level import is how a circle hides): cli imports demo,
    _frame imports aggregate, cli imports io; never the other way."""
    assert not _imports(low, high), f"{low}.py imports {high}"


@pytest.mark.parametrize("a, b", [("cli", "demo"), ("aggregate", "_frame"), ("cli", "io")])
def test_no_circle_between(a, b):
    assert not (_imports(a, b) and _imports(b, a)), f"{a}.py and {b}.py import each other"


def test_circle_check_sees_function_level_and_relative_imports(tmp_path):
    """Negative control: a function-level ``from .x import y`` and a ``from . import x`` are both found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g\n")
    (pkg / "b.py").write_text("from . import a\n")
    (pkg / "sub" / "c.py").write_text("def f():\n    from ..a import f\n")
    assert _imports("a", "b", pkg) and _imports("b", "a", pkg)
    assert _imported_modules(pkg / "sub" / "c.py", pkg) == {"a"}
    assert not _imports("a", "sub", pkg)
