"""Sphinx configuration of ldpnum's documentation site (``make docs`` builds it into docs/_build/html)."""

import importlib
import os
import re
import warnings

from sphinx.util import logging as sphinx_logging

import ldpnum

project = "ldpnum"
author = "the ldpnum developers"
copyright = "the ldpnum developers"
release = ldpnum.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_templates", "examples/README.txt", "**/GALLERY_HEADER.rst"]
templates_path = ["_templates"]

# -- API reference: autosummary writes one page per public name (docs/api/generated/, not kept in git) -------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"show-inheritance": True}
autodoc_typehints = "none"          # the numpy-style Parameters sections carry the types
autodoc_member_order = "groupwise"
numpydoc_show_class_members = False  # the class template lists members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- Cross-references: every one must resolve (-n), see _resolve_ldpnum_reference below for ldpnum's own names ---
nitpicky = True
nitpick_ignore_regex = [
    # Other libraries' names (NumPy, SciPy, pandas, Polars, Dask, PyArrow, matplotlib): the build runs offline, so
    # their inventories (intersphinx) cannot be fetched; the names are shown in code, unlinked.
    (r"py:.*", r"(numpy|scipy|pandas|polars|dask|distributed|pyarrow|duckdb|pyspark|matplotlib)(\..+)?"),
    # The standard library's (same reason: no offline inventory of docs.python.org).
    (r"py:.*", r"(int|float|str|bytes|bool|object|dict|list|tuple|set|frozenset|type|None|Exception|ValueError|"
               r"TypeError|KeyError|RuntimeError|UserWarning|os\.PathLike|pathlib\..+|typing\..+|"
               r"collections\.abc\..+|enum\..+|dataclasses\..+)"),
]

# -- Markdown guides (docs/guides/*.md and docs/*.md) --------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# -- Gallery: the scripts in docs/examples run at every build; their figures are kept in the page ------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "show_memory": False,
}
os.environ.setdefault("MPLBACKEND", "agg")

# -- HTML ----------------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"ldpnum {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []
# The ~200 generated reference pages go without the left sidebar (the section's tree, rendered again on every page,
# took 40% of the build); the right one shows the page's own contents, and the reference index lists them all.
html_sidebars = {"api/generated/*": []}
html_show_sourcelink = False


# -- ldpnum's own names -------------------------------------------------------------------------------------
# Docstrings name ldpnum's objects where they are defined (``ldpnum._results.PrivacyProvenance``, a base class in
# a private module, a helper of the same module by its bare name), while the reference documents them under their
# public names (``ldpnum.PrivacyProvenance``). A reference Sphinx cannot resolve is imported: if it is the same
# object as a documented one, it links there; if it exists but has no page (a private helper, a submodule), it
# is shown unlinked; if it does not exist (a misspelt or removed name), the warning stands and fails the build.
# Names of other libraries are not imported: nitpick_ignore_regex above covers them.
_MISSING = object()
_FIELD = object()  # a class's annotated field without a class-level value (a dataclass field without default)
_public_objects = None  # filled once, when the first reference is resolved (all pages read by then)


def _import_dotted(name):
    """The object a dotted ``name`` denotes (the longest importable module, then attributes), or ``_MISSING``."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        except Exception:  # noqa: BLE001  (a module that fails to import is not a target)
            return _MISSING
        for attr in parts[i:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                annotated = isinstance(obj, type) and any(attr in vars(k).get("__annotations__", {})
                                                          for k in obj.__mro__)
                if not annotated or attr != parts[-1]:
                    return _MISSING
                obj = _FIELD
        return obj
    return _MISSING


def _documented(env):
    """``{key: public name}`` of every documented ldpnum object; the key is the object's id for modules, classes,
    functions and descriptors, ``(id(owner), attribute)`` for data (ints and strings are shared objects)."""
    global _public_objects
    if _public_objects is None:
        _public_objects = {}
        for name, entry in sorted(env.get_domain("py").objects.items(), key=lambda kv: (len(kv[0]), kv[0])):
            if entry.aliased or not name.startswith("ldpnum"):
                continue
            for key in _keys(name):
                _public_objects.setdefault(key, name)
    return _public_objects


def _keys(name):
    owner_name, _, attr = name.rpartition(".")
    obj = _import_dotted(name)
    if obj is _MISSING:
        return []
    keys = []
    if callable(obj) or isinstance(obj, (type(os), property, classmethod, staticmethod)):
        keys.append(id(obj))
    if owner_name:
        owner = _import_dotted(owner_name)
        if owner is not _MISSING:
            keys.append((id(owner), attr))
    return keys


def _defining_scopes(documented_as):
    """Where a docstring's bare names live: the classes and module that define the object documented as
    ``documented_as`` (an inherited member's docstring names its base class's neighbours), innermost first."""
    owner_name, _, attr = documented_as.rpartition(".")
    obj, owner = _import_dotted(documented_as), _import_dotted(owner_name)
    if isinstance(owner, type):  # a member: the classes of the MRO that define it (a base's doc comment)
        qualnames = [f"{k.__module__}.{k.__qualname__}" for k in owner.__mro__
                     if attr in vars(k) or attr in vars(k).get("__annotations__", {})] or [owner_name]
    else:
        func = getattr(obj, "fget", obj)
        module = getattr(func, "__module__", None)
        qualnames = [f"{module}.{func.__qualname__}" if module and hasattr(func, "__qualname__") else documented_as]
    scopes = []
    for qualname in qualnames:
        parts = qualname.split(".")
        scopes += [".".join(parts[:i]) + "." for i in range(len(parts), 0, -1)]
    return scopes


def _resolve_ldpnum_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    module, cls = node.get("py:module"), node.get("py:class")
    docstring_of = re.search(r"docstring of (\S+)", node.source or "")
    scopes = [f"{module}.{cls}." if module and cls else None, f"{module}." if module else None]
    scopes += _defining_scopes(docstring_of.group(1)) if docstring_of else []
    scopes.append("")
    documented = _documented(env)
    for scope in filter(lambda s: s is not None, scopes):
        name = scope + target
        if not name.startswith("ldpnum") or _import_dotted(name) is _MISSING:
            continue
        public = next((documented[k] for k in _keys(name) if k in documented), None)
        if public is None:
            return contnode  # exists, but has no page: shown unlinked
        return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"], public, node,
                                                 contnode)
    return None


def _numpydoc_warnings_to_sphinx(app):
    # numpydoc reports an unknown or badly underlined docstring section with warnings.warn, which Sphinx's -W
    # does not see; pass them to Sphinx's logger so that a malformed docstring fails the build.
    logger = sphinx_logging.getLogger("numpydoc")
    show = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, UserWarning) and "numpydoc" in str(filename):
            logger.warning(str(message), type="numpydoc", subtype="docstring")
        else:
            show(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning
    warnings.filterwarnings("always", category=UserWarning, module="numpydoc")


def setup(app):
    app.connect("missing-reference", _resolve_ldpnum_reference)
    _numpydoc_warnings_to_sphinx(app)
