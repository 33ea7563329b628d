"""ldpnum._docstrings: sections of a docstring shared with the function that owns them."""

import inspect
import re

import pytest

from ldpnum import collect
from ldpnum._docstrings import parameter_entries, section, shares_docs
from ldpnum.pandas import DataFrameAccessor, SeriesAccessor


def owner(a, b, c, d):
    """Owner.

    Parameters
    ----------
    a : int
        The a,
        on two lines.
    b, c : optional
        Shared by b and c.
    d : float

    Raises
    ------
    ValueError
        When it is bad.
    """


def test_entries_in_the_order_asked_and_a_shared_entry_once():
    text = parameter_entries(owner, ["d", "b", "c", "a"])
    assert text.splitlines() == ["d : float", "b, c : optional", "    Shared by b and c.", "a : int",
                                 "    The a,", "    on two lines."]


def test_fills_markers_at_their_indentation():
    @shares_docs(owner, parameters=["a"], sections=["Raises"])
    def user(a):
        """User.

        Parameters
        ----------
        {parameters}

        Raises
        ------
        {Raises}
        """
    doc = inspect.cleandoc(user.__doc__)
    assert "a : int\n    The a,\n    on two lines." in doc
    assert section(user, "Raises") == "ValueError\n    When it is bad."
    assert not re.search(r"^\s*\{\w+\}\s*$", doc, re.MULTILINE)


def test_a_missing_entry_section_or_marker_fails_at_decoration():
    def user():
        """User.

        Parameters
        ----------
        {parameters}
        """
    with pytest.raises(KeyError, match="no parameter 'e'"):
        shares_docs(owner, parameters=["e"])(user)
    with pytest.raises(KeyError, match="no 'Notes' section"):
        shares_docs(owner, sections=["Notes"])(user)
    with pytest.raises(ValueError, match="no line '{Raises}'"):
        shares_docs(owner, sections=["Raises"])(user)


def _documented(func):
    names = []
    for line in section(func, "Parameters").splitlines():
        if line and not line[0].isspace():
            names += [n.strip().lstrip("*") for n in line.split(":")[0].split(",")]
    return names


@pytest.mark.parametrize("method, source", [(SeriesAccessor.privatize, collect.privatize_series),
                                            (DataFrameAccessor.privatize, collect.privatize_frame)])
def test_the_accessors_document_every_parameter_with_the_collection_layers_text(method, source):
    # every argument of the accessor's signature is documented once, and the shared entries are the owner's text
    params = [p for p in inspect.signature(method).parameters if p not in ("self", "kwargs")]
    documented = _documented(method)
    assert sorted(documented) == sorted(params), set(documented) ^ set(params)
    assert parameter_entries(source, ["keys"]) in inspect.cleandoc(method.__doc__)
    assert section(method, "Raises") == section(source, "Raises")
    assert not re.search(r"^\s*\{\w+\}\s*$", method.__doc__, re.MULTILINE)  # no marker left unfilled


def test_without_docstrings_nothing_is_shared_and_nothing_fails():
    # python -OO strips every docstring: the decorator must leave the function as it is
    def bare(a):
        pass
    assert shares_docs(owner, parameters=["a"], sections=["Raises"])(bare) is bare and bare.__doc__ is None
    bare_owner = lambda a: None  # noqa: E731
    assert shares_docs(bare_owner, parameters=["a"])(owner) is owner


def test_every_module_imports_without_docstrings():
    # python -OO: a module that reads a docstring at import (a shared section, a description) must still import
    import subprocess
    import sys

    script = ("import importlib, pkgutil, ldpnum\n"
              "bad = []\n"
              "for m in pkgutil.walk_packages(ldpnum.__path__, 'ldpnum.'):\n"
              "    try:\n"
              "        importlib.import_module(m.name)\n"
              "    except Exception as e:\n"
              "        bad.append(f'{m.name}: {e!r}')\n"
              "print(bad)")
    res = subprocess.run([sys.executable, "-OO", "-c", script], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "[]", (res.stdout[-2000:], res.stderr[-2000:])
