"""One text for a parameter documented in two places: sections of a numpydoc docstring shared by reference.

A front end often documents a function it delegates to: ``Series.ldp.privatize`` takes most of
:func:`ldpnum.collect.privatize_series`'s parameters and raises its errors. Writing those entries twice lets
them drift; :func:`shares_docs` copies them from the function that owns them when the module is imported, so
``help()``, the API pages and the source keep one text. The decorated docstring must be a numpydoc docstring;
an entry or section asked for that the source does not have raises at import time (a renamed parameter cannot
silently vanish from the page). Under ``python -OO`` (no docstrings) the decorator does nothing.
"""

import inspect
import re

__all__ = ["shares_docs", "parameter_entries", "section"]

_HEADER = re.compile(r"^(\S[^\n]*)\n(-{3,})$", re.MULTILINE)


def _sections(doc):
    """Section title -> its body (dedented, without the title and its underline), in order; '' is the summary."""
    text = inspect.cleandoc(doc)
    out = {}
    heads = list(_HEADER.finditer(text))
    out[""] = text[:heads[0].start()].rstrip() if heads else text
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        out[m.group(1).strip()] = text[m.end():end].strip("\n").rstrip()
    return out


def section(func, title):
    """The body of section ``title`` of ``func``'s numpydoc docstring (KeyError naming what exists)."""
    secs = _sections(func.__doc__ or "")
    if title not in secs:
        raise KeyError(f"{func.__qualname__}'s docstring has no {title!r} section; it has {list(secs)[1:]}")
    return secs[title]


def parameter_entries(func, names):
    """The entries of ``names`` in ``func``'s Parameters section, in the order asked, as one block of text.

    An entry is its ``name : type`` line and the indented lines under it; a line may name several parameters
    (``ledger, people, label : optional``) and is found by any of them.
    """
    entries, current = {}, None
    for line in section(func, "Parameters").splitlines():
        if line and not line[0].isspace():
            current = line
            entries[current] = [line]
        elif current is not None:
            entries[current].append(line)
    by_name = {}
    for head, lines in entries.items():
        for name in head.split(":")[0].split(","):
            by_name[name.strip()] = "\n".join(lines).rstrip()
    missing = [n for n in names if n not in by_name]
    if missing:
        raise KeyError(f"{func.__qualname__} documents no parameter {missing[0]!r}; it documents {list(by_name)}")
    blocks = []
    for n in names:
        if by_name[n] not in blocks:  # an entry naming several parameters is copied once
            blocks.append(by_name[n])
    return "\n".join(blocks)


def shares_docs(source, *, parameters=(), sections=()):
    """Decorator: fill ``{parameters}`` and ``{<Section>}`` markers of a docstring from ``source``'s docstring.

    Parameters
    ----------
    source : callable
        The function that owns the shared text.
    parameters : sequence of str
        Parameters whose entries replace the marker ``{parameters}`` (at the indentation of the marker).
    sections : sequence of str
        Section titles (``"Raises"``, ``"Notes"``) whose bodies replace the markers ``{Raises}``, ``{Notes}``.

    Returns
    -------
    callable
        A decorator that rewrites the function's ``__doc__`` and returns the function itself.

    Examples
    --------
    >>> def owner(x, y):
    ...     '''Owner.
    ...
    ...     Parameters
    ...     ----------
    ...     x : int
    ...         The x.
    ...     y : int
    ...         The y.
    ...     '''
    >>> @shares_docs(owner, parameters=["y"])
    ... def user(y):
    ...     '''User.
    ...
    ...     Parameters
    ...     ----------
    ...     {parameters}
    ...     '''
    >>> print(user.__doc__.strip().splitlines()[-2:])
    ['    y : int', '        The y.']
    """
    def fill(doc, marker, text):
        m = re.search(r"^([ \t]*)" + re.escape(marker) + r"[ \t]*$", doc, re.MULTILINE)
        if m is None:
            raise ValueError(f"the docstring has no line {marker!r} to fill")
        indent = m.group(1)
        block = "\n".join(indent + line if line else line for line in text.splitlines())
        return doc[:m.start()] + block + doc[m.end():]

    def decorate(func):
        doc = func.__doc__
        if doc is None or source.__doc__ is None:  # docstrings stripped (python -OO): nothing to share
            return func
        if parameters:
            doc = fill(doc, "{parameters}", parameter_entries(source, list(parameters)))
        for title in sections:
            doc = fill(doc, "{" + title + "}", section(source, title))
        func.__doc__ = doc
        return func

    return decorate
