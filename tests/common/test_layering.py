"""Module layering: the result objects, their plot helpers and checks import downwards only."""

import ast
import pathlib

import pytest

import ldpnum

ROOT = pathlib.Path(ldpnum.__file__).parent


def _type_only(tree):
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks: imports for annotations only, never executed."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def _imports(path):
    """(module imported, at module level?) for every ``from .x import`` / ``import ldpnum.x`` in a file that
    runs (imports under ``if TYPE_CHECKING:`` name types for annotations and are left out)."""
    tree = ast.parse(path.read_text())
    top = set(map(id, tree.body))
    skip = _type_only(tree)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
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


FAMILIES = ("mechanisms", "frequency", "ranges", "heavy", "vectors", "multi", "longitudinal", "pandas", "cli", "dask",
            "engines", "demo")


@pytest.mark.parametrize("path", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "estimation").glob("*.py")))
def test_estimation_imports_no_family(path):
    """Post-processing sits below the families that call it (HDG and Marginals call estimation/tables,
    joint and grids; the set-valued results call estimation/sizes), never the other way round."""
    for module, _ in _imports(ROOT / path):
        assert _package_module(module) not in FAMILIES, f"{path} imports {module}"


def _package_module(module):
    """The top-level ldpnum module named by an import in ldpnum/estimation/ (None for a sibling in it)."""
    if module.startswith("ldpnum."):
        return module.split(".")[1]
    if module.startswith(".."):
        return module[2:].split(".")[0]
    return None


def test_package_module_negative_control():
    assert _package_module("..vectors._base") == "vectors" and _package_module("ldpnum.multi.hdg") == "multi"
    assert _package_module(".consistency") is None and _package_module("..._x") != "vectors"


# -- families import each other's public names only ------------------------------------------------------------

#: Subpackages every family may import anything from: the compiled kernels are the shared core, like the
#: top-level modules (``_validation``, ``_random``, ``_frame``, ``_results``, ``_counting``, ``_checks``,
#: ``_typing``, ``base``, ``plans``), which the rule below does not restrict.
SHARED_SUBPACKAGES = frozenset({"_kernels"})


def _subpackages(root):
    return frozenset(p.parent.name for p in root.glob("*/__init__.py"))


def private_sibling_imports(source, subpackage, subpackages):
    """``[(line, what)]``: imports in the source of a module of ``ldpnum.<subpackage>`` that reach a private
    module (``ldpnum.<other>._x``) or a private name (``_name``) of a sibling subpackage ``<other>``.

    Relative (``from ..other._x import y``, ``from ..other import _y``) and absolute (``import ldpnum.other._x``)
    imports are resolved, at module level and inside functions alike.
    """
    package = ["ldpnum", subpackage]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names
                    if _is_private_sibling(a.name.split("."), subpackage, subpackages)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = package[:max(0, len(package) - node.level + 1)] + (node.module or "").split(".")
            else:
                target = (node.module or "").split(".")
            target = [t for t in target if t]
            if _is_private_sibling(target, subpackage, subpackages):
                out.append((node.lineno, ".".join(target)))
            elif _is_sibling(target, subpackage, subpackages):
                out += [(node.lineno, f"{'.'.join(target)}.{a.name}") for a in node.names if a.name.startswith("_")]
    return out


def _is_sibling(parts, subpackage, subpackages):
    return (len(parts) >= 2 and parts[0] == "ldpnum" and parts[1] in subpackages and parts[1] != subpackage
            and parts[1] not in SHARED_SUBPACKAGES)


def _is_private_sibling(parts, subpackage, subpackages):
    return _is_sibling(parts, subpackage, subpackages) and any(p.startswith("_") for p in parts[2:])


def _all_private_sibling_imports(root):
    subpackages = _subpackages(root)
    found = []
    for sub in sorted(subpackages):
        for path in sorted((root / sub).glob("*.py")):
            for line, what in private_sibling_imports(path.read_text(), sub, subpackages):
                found.append(f"{path.relative_to(root.parent)}:{line} imports {what}")
    return found


def test_no_family_imports_a_private_name_of_a_sibling_family():
    """A family (``ldpnum/<sub>/``) imports from another family only its public names; what several families
    share lives in the core at the top of the package (``base``, ``plans``, ``_validation``, ...)."""
    found = _all_private_sibling_imports(ROOT)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("source", [
    "from ..vectors._base import check_vectors\n",
    "from ..frequency.grr import _GRRPlan\n",
    "from ..frequency import _base\n",
    "import ldpnum.frequency._base\n",
    "from ldpnum.frequency.subset import _floyd_distribution\n",
    "def f():\n    from ..vectors._base import check_int\n",
])
def test_the_layering_check_rejects_a_planted_violation(source):
    subpackages = frozenset({"multi", "vectors", "frequency", "_kernels"})
    assert private_sibling_imports(source, "multi", subpackages), source


@pytest.mark.parametrize("source", [
    "from ..vectors import VectorMechanism\n",          # a sibling's public name
    "from ..frequency.grr import GRR\n",                  # a sibling's public module and name
    "from ._base import something, _private\n",           # the family's own private module and names
    "from .._validation import _caller_stacklevel\n",     # the shared core at the top of the package
    "from ..plans import GRRPlan\n",
    "from .._kernels._jit import launch\n",               # the compiled kernels are shared core
    "from .. import plans\n",
])
def test_the_layering_check_accepts_allowed_imports(source):
    subpackages = frozenset({"multi", "vectors", "frequency", "_kernels"})
    assert not private_sibling_imports(source, "multi", subpackages), source


def test_type_checking_imports_are_left_out(tmp_path):
    """Negative control of the exemption: the same import counts when it runs."""
    f = tmp_path / "m.py"
    f.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..ranges import R\n")
    assert _imports(f) == []
    f.write_text("from ..ranges import R\n")
    assert _imports(f) == [("..ranges", True)]


# -- front ends import each other's public names only -----------------------------------------------------------

#: The top-level modules through which people use the package (the collection layer and file I/O below them are
#: shared, like the core).
FRONT_ENDS = ("pandas", "cli", "dask", "engines", "demo")


def private_front_end_uses(source, module):
    """``[(line, what)]``: private names (``_name``) of another front end that the source of ``ldpnum.<module>``
    imports (``from .cli import _x``, ``from ldpnum.cli import _x``) or reads off an imported front-end module
    (``from . import cli`` then ``cli._x``)."""
    others = set(FRONT_ENDS) - {module}
    tree = ast.parse(source)
    out, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = (node.module or "") if node.level else (node.module or "").removeprefix("ldpnum")
            target = target.lstrip(".")
            if target in others:
                out += [(node.lineno, f"{target}.{a.name}") for a in node.names if a.name.startswith("_")]
            elif target == "" and (node.level == 1 or node.module == "ldpnum"):
                aliases.update({a.asname or a.name: a.name for a in node.names if a.name in others})
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "ldpnum" and len(parts) > 1 and parts[1] in others and a.asname:
                    aliases[a.asname] = parts[1]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            out.append((node.lineno, f"{aliases[node.value.id]}.{node.attr}"))
    return out


@pytest.mark.parametrize("module", FRONT_ENDS)
def test_no_front_end_uses_a_private_name_of_another(module):
    found = private_front_end_uses((ROOT / f"{module}.py").read_text(), module)
    assert not found, f"ldpnum/{module}.py: {found}"


@pytest.mark.parametrize("source", [
    "from .pandas import _check_name\n",
    "def f():\n    from .cli import _parser\n",
    "from ldpnum.engines import _merge\n",
    "from . import cli\ncli._parser()\n",
    "import ldpnum.pandas as lp\nlp._x\n",
])
def test_the_front_end_check_rejects_a_planted_violation(source):
    assert private_front_end_uses(source, "dask"), source


@pytest.mark.parametrize("source", [
    "from .engines import partition_privatize\n",     # another front end's public name
    "from .collect import _owned\n",                   # the collection layer is shared, not a front end
    "from . import engines\nengines.tree_merge\n",
    "from .dask import _own_private\n",                # the module's own names
])
def test_the_front_end_check_accepts_allowed_uses(source):
    assert not private_front_end_uses(source, "dask"), source
