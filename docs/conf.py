"""Sphinx configuration of ldpnum's documentation site (``make docs`` builds it into docs/_build/html)."""

import os
import pathlib
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

# -- Markdown guides (docs/*.md and the README sections the guides include) ----------------------------------
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


# -- README sections included by the guides ------------------------------------------------------------------
# The guides include sections of the repository's README.md (``{include}`` with ``:relative-docs: docs/``,
# so its links to docs/*.md become links to these pages). Its links to other files of the source tree (the
# data's provenance notes, scripts) have no page on this site: they are shown as the path, in code.
_SOURCE_LINK = re.compile(r"\[([^\]]+)\]\((?!https?:|#|docs/)([^)\s]+)\)")


def _source_links_as_paths(app, relative_path, parent_docname, content):
    if pathlib.PurePath(relative_path).name == "README.md":
        content[0] = _SOURCE_LINK.sub(lambda m: f"`{m.group(2)}`", content[0])


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
    app.connect("include-read", _source_links_as_paths)
    _numpydoc_warnings_to_sphinx(app)
