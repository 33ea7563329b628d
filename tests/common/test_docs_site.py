"""The documentation site's API reference (docs/api/) names every public name.

The reference is written by hand, grouped by task, as autosummary lists; ``make docs`` then generates a page
for each entry. A name added to ``ldpnum.__all__``, to a public submodule's ``__all__`` or to the ``__all__``
of a module that has a reference page must be listed there too, or documented under another name for the same
object (a family's class re-exported at the top level is documented once, as ``ldpnum.Name``). Reads the pages
as text: Sphinx is not needed.
"""

import importlib
import pathlib
import re
import types

import ldpnum

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "api"
DIRECTIVE = re.compile(r"^\.\. (currentmodule|automodule|autosummary)::\s*(\S*)")
ENTRY = re.compile(r"^   ([A-Za-z_][\w.]*)\s*$")


def documented(pages):
    """``(names, modules)``: the dotted names the autosummary lists of ``pages`` document, and the modules
    with an ``automodule`` directive."""
    names, modules = set(), set()
    for page in pages:
        current, listing = None, False
        for line in page.read_text(encoding="utf-8").splitlines():
            directive = DIRECTIVE.match(line)
            if directive:
                kind, arg = directive.groups()
                listing = kind == "autosummary"
                if kind == "currentmodule":
                    current = arg
                elif kind == "automodule":
                    modules.add(arg)
                continue
            if listing and line and not line.startswith(" "):
                listing = False
            entry = ENTRY.match(line)
            if listing and entry and not line.strip().startswith(":"):
                names.add(entry.group(1) if current is None else f"{current}.{entry.group(1)}")
    return names, modules


def _resolve(dotted):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _has_identity(value):
    # a class, a function or a container is one object wherever it is exported; an int or a string is not (equal
    # small ints and interned strings are shared by unrelated names)
    return not isinstance(value, (int, float, complex, str, bytes, bool, type(None)))


def undocumented(modules, names, documented_modules):
    """``[module.name]`` of the public names of ``modules`` that the reference does not document."""
    by_identity = {id(_resolve(n)) for n in names}
    missing = []
    for module in modules:
        for name in module.__all__:
            if name.startswith("__"):
                continue  # __version__: a string, named in the reference's introduction
            value = getattr(module, name)
            if f"{module.__name__}.{name}" in names:
                continue
            if isinstance(value, types.ModuleType) and value.__name__ in documented_modules:
                continue
            if _has_identity(value) and id(value) in by_identity:
                continue
            missing.append(f"{module.__name__}.{name}")
    return missing


def _reference():
    pages = sorted(API.glob("*.rst"))
    assert pages, f"no reference pages in {API}"
    names, modules = documented(pages)
    public = {ldpnum} | {v for v in vars(ldpnum).values() if isinstance(v, types.ModuleType)
                         and v.__name__.split(".")[-1] in ldpnum.__all__}
    public |= {importlib.import_module(m) for m in modules}
    return sorted(public, key=lambda m: m.__name__), names, modules


def test_every_public_name_is_in_the_api_reference():
    modules, names, documented_modules = _reference()
    checked = {m.__name__ for m in modules}
    assert {"ldpnum.frequency", "ldpnum.pandas", "ldpnum.polars", "ldpnum.data"} <= checked
    missing = undocumented(modules, names, documented_modules)
    assert not missing, ("public names missing from the API reference (add them to an autosummary list in "
                         f"docs/api/): {missing}")


def test_every_public_submodule_has_a_reference_page():
    _, _, documented_modules = _reference()
    submodules = {f"ldpnum.{n}" for n in ldpnum.__all__ if isinstance(getattr(ldpnum, n), types.ModuleType)}
    assert submodules - documented_modules == set()
    unlisted = [m for m in documented_modules - {"ldpnum"} if not listed(m)]
    assert not unlisted, ("module pages missing from the toctree of docs/api/index.rst (or of their package's "
                          f"page): {unlisted}")


def listed(module):
    """Whether ``module``'s page is in the toctree of docs/api/index.rst or of its parent package's page."""
    parent = module.rpartition(".")[0]
    pages = [API / "index.rst"] + ([API / f"{parent}.rst"] if parent != "ldpnum" else [])
    return any(page.is_file() and f"   {module}\n" in page.read_text(encoding="utf-8") for page in pages)


def test_every_estimation_submodule_has_a_reference_page():
    # ldpnum.estimation is the library of server-side post-processing: its submodules are public (its docstring
    # lists them), each with its own __all__
    import pkgutil

    import ldpnum.estimation

    _, _, documented_modules = _reference()
    submodules = {f"ldpnum.estimation.{s.name}" for s in pkgutil.iter_modules(ldpnum.estimation.__path__)
                  if not s.name.startswith("_")}
    assert len(submodules) >= 10
    assert submodules - documented_modules == set()
    for name in submodules:
        assert importlib.import_module(name).__all__, f"{name} has no __all__"


def test_reference_names_exist():
    # an entry for a renamed or removed name would only fail at build time; say so here already
    _, names, _ = _reference()
    for name in names:
        _resolve(name)


def test_negative_control_a_new_name_is_reported(tmp_path):
    page = tmp_path / "ldpnum_fake.rst"
    page.write_text(".. currentmodule:: ldpnum\n\n.. autosummary::\n   :toctree: generated/\n\n   GRR\n"
                    "   OUE\n\nText that ends the list.\n\n   SUE\n", encoding="utf-8")
    names, modules = documented([page])
    assert names == {"ldpnum.GRR", "ldpnum.OUE"}
    fake = types.ModuleType("ldpnum_fake")
    fake.GRR, fake.SUE, fake.Renamed, fake.LIMIT = ldpnum.GRR, ldpnum.SUE, ldpnum.OUE, 3
    fake.__all__ = ["GRR", "SUE", "Renamed", "LIMIT", "__version__"]
    # GRR listed; Renamed is OUE's object, documented as ldpnum.OUE; SUE (outside the list) and LIMIT are not
    assert undocumented([fake], names, modules) == ["ldpnum_fake.SUE", "ldpnum_fake.LIMIT"]
    # a container exported under a second name is the documented object; an equal int is not
    import ldpnum.estimation.postprocess as postprocess
    import ldpnum.estimation.mean as mean

    fake.CHOICES, fake.SMALL, fake.__all__ = postprocess.POSTPROCESS, mean.SMALL_SAMPLE, ["CHOICES", "SMALL"]
    documented_as = {"ldpnum.estimation.POSTPROCESS", "ldpnum.estimation.mean.SMALL_SAMPLE"}
    assert undocumented([fake], documented_as, set()) == ["ldpnum_fake.SMALL"]
    assert not listed("ldpnum.estimation.nonexistent")
