"""Mechanisms from the command line's flags, checked before any file is read.

The flags: ``--mechanism``/``--epsilon``/``--bounds``/``--param``, ``--categories``, ``--spec`` and ``--columns``,
and ``heavy-hitters``' ``--method``. Each builder checks the flags of one way of naming mechanisms and returns the mechanisms (nothing is read
or drawn); its errors are :class:`~ldpnum.io.CLIError` lines in the command line's words. :mod:`ldpnum.cli`
parses the arguments and calls these.
"""

import json
from collections.abc import Mapping
from typing import Any

from ._typing import Bounds
from .base import Mechanism, bounded_mechanisms, from_spec, lookup, mechanism_spellings, mechanisms_offering
from .collect import empty_values
from .io import CLIError, dictionary_categories, expected_spec_file, one_line, read_spec_argument

__all__ = ["cli_mechanisms", "mechanism_class", "make_mechanism", "parse_params", "per_column", "explicit_spec",
           "heavy_classes", "heavy_mechanism", "multi_column_mechanisms", "spec_column_mechanisms", "oracle_class",
           "category_column_mechanisms"]

#: The mechanisms ``--mechanism`` accepts, ``{spec name: class}``: every registered mechanism built from ε and
#: public bounds, so a new one is offered by registering it.
cli_mechanisms = bounded_mechanisms


def mechanism_class(name):
    known = ", ".join(sorted(mechanism_spellings(cli_mechanisms())))
    try:
        cls = lookup(str(name))
    except ValueError:
        raise CLIError(f"unknown mechanism {name!r}; choose one of {known} (or a mechanism's full name, e.g. "
                       "square_wave or SquareWave)") from None
    if cls.name not in cli_mechanisms():
        hint = ""
        if cls.takes_categories:
            hint = (f"; {cls.__name__} privatizes categories: give that column --categories A,B,... (its declared, "
                    "public categories, code i the i-th) instead of --bounds")
        elif cls.offers("estimate_heavy_hitters"):
            hint = (f"; {cls.__name__} finds frequent items (text, bytes or ids): run `ldpnum heavy-hitters FILE "
                    f"--column C --method {cls.name}`")
        else:
            hint = (f"; give {cls.__name__} whole as a spec instead of --mechanism/--epsilon/--bounds: --column C "
                    f"--spec JSON (the JSON of ldp.{cls.__name__}(...).spec.to_dict(), or @FILE)")
        raise CLIError(f"{cls.__name__} is not a mechanism for numerical columns with bounds (`ldpnum privatize "
                       f"--column` privatizes numbers in public bounds); choose one of {known}{hint}")
    return cls


def make_mechanism(name: str, epsilon: float, bounds: Bounds, params: Mapping[str, Any] | None = None) -> Mechanism:
    """Build a numerical mechanism from its command-line name.

    Parameters
    ----------
    name : str
        A registered mechanism's spec name (``square_wave``, ...), one of its aliases (``sw``, ``gw``, ``pm``,
        ``sr``, ``hm``, ``hh``) or its class name (``SquareWave``), case-insensitive; the mechanism must take
        public bounds (:func:`ldpnum.base.bounded_mechanisms`).
    epsilon : float
        Privacy parameter, validated by the mechanism (a finite number in (0, 20]).
    bounds : (float, float)
        Public range of the values.
    params : dict, optional
        Further keyword parameters of the mechanism (``n_cells``, ``shape``, ``bandwidth``, ``n_leaves``,
        ``branching``, ``oracle``).

    Returns
    -------
    ldpnum.Mechanism

    Examples
    --------
    >>> make_mechanism("sw", 1.0, (0, 1440)).spec.mechanism
    'square_wave'
    >>> make_mechanism("HierarchicalHistogram", 2.0, (0, 1), {"n_leaves": 64}).n_leaves
    64
    """
    cls = mechanism_class(name)
    try:
        return cls(epsilon=epsilon, bounds=bounds, **(params or {}))
    except TypeError as exc:
        if "unexpected keyword" in str(exc):
            raise CLIError(f"{cls.__name__} does not take that parameter: {exc}") from None
        raise


def parse_params(items):
    """``KEY=VALUE`` strings -> dict; values are JSON when they parse as JSON, else strings."""
    out = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"--param must look like KEY=VALUE; got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out[key.strip()] = tuple(value) if isinstance(value, list) else value
    return out


def per_column(values, n_columns, option):
    """One option value per column: given once (shared) or once per ``--column``, in order."""
    if len(values) == 1:
        return list(values) * n_columns
    if len(values) != n_columns:
        raise CLIError(f"{option} was given {len(values)} times for {n_columns} --column(s); give it once (for "
                       "every column) or once per column, in the same order")
    return list(values)


def explicit_spec(args):
    if getattr(args, "expect_spec", None) is not None:
        if args.spec is not None:
            raise CLIError("give the expected spec once: --expect-spec FILE or --spec JSON")
        return expected_spec_file(args.expect_spec, args.column)
    if args.spec is not None:
        return read_spec_argument(args.spec, "--spec")
    given = [args.mechanism is not None, args.epsilon is not None, args.bounds is not None]
    if any(given):
        if not all(given):
            raise CLIError("--mechanism, --epsilon and --bounds describe the expected mechanism together: give "
                           "all three (or --spec JSON)")
        return make_mechanism(args.mechanism, args.epsilon, tuple(args.bounds), parse_params(args.param)).spec
    return None


def heavy_classes():
    """``--method`` name -> class of every registered mechanism that estimates heavy hitters.

    Their spec names and aliases are read from the registry: a new heavy-hitter mechanism needs no edit here.
    """
    classes = mechanisms_offering("estimate_heavy_hitters")
    return {alias: classes[name] for alias, name in mechanism_spellings(classes).items()}


def heavy_mechanism(args):
    """The heavy-hitter protocol of the command line, every argument checked (nothing read yet)."""
    from .heavy.items import MAX_ITEM_BITS

    if not 1 <= args.item_bits <= MAX_ITEM_BITS:
        raise CLIError(f"--item-bits must lie in [1, {MAX_ITEM_BITS}]; got {args.item_bits}")
    if args.item_type in ("str", "bytes") and args.item_bits % 8:
        raise CLIError(f"--item-type {args.item_type} needs --item-bits a multiple of 8 (whole bytes); got "
                       f"{args.item_bits}")
    if args.top_k < 1:
        raise CLIError(f"--top-k must be at least 1; got {args.top_k}")
    cls = heavy_classes()[args.method]
    try:
        return cls(args.epsilon, item_bits=args.item_bits, top_k=args.top_k, item_type=args.item_type)
    except (TypeError, ValueError) as exc:
        text = one_line(exc)
        if text.startswith("epsilon"):
            text = "--" + text
        raise CLIError(text) from None


def multi_column_mechanisms(args):
    """``{(c1, c2, ...): mechanism}`` of ``--columns`` with their ``--spec``s.

    Built by ``from_spec``; the mechanism itself decides whether it reads those columns.
    """
    if len(args.spec) != len(args.columns):
        raise CLIError(f"--columns was given {len(args.columns)} time(s) and --spec {len(args.spec)}: give one --spec "
                       "per --columns, in the same order")
    out = {}
    for cols, text in zip(args.columns, args.spec):
        key = tuple(c.strip() for c in cols.split(","))
        if len(key) < 2 or not all(key):
            raise CLIError(f"--columns takes two or more comma-separated column names; got {cols!r}")
        if key in out:
            raise CLIError(f"--columns {cols!r} is given twice")
        try:
            mech = from_spec(read_spec_argument(text, "--spec"))
            if mech.source_columns(key) is None:
                raise CLIError(f"--columns {cols!r}: the --spec's {type(mech).__name__} privatizes one column; use "
                               "--column with --mechanism for it")
        except (ValueError, TypeError) as exc:
            raise CLIError(f"--columns {cols!r}: {one_line(exc)}") from None
        try:  # the mechanism's own columns, checked before a file is read
            mech.prepare_values(empty_values(list(key)), name=f"--columns {cols!r}")
        except (ValueError, TypeError) as exc:
            raise CLIError(one_line(exc)) from None
        out[key] = mech
    return out


def spec_column_mechanisms(args):
    """``{column: mechanism}`` of ``--column``s given with ``--spec``s instead of ``--mechanism``.

    Any registered mechanism of one column (e.g. a longitudinal LGRR or a frequency oracle), the specs in the
    columns' order.
    """
    stray = [flag for flag, v in (("--epsilon", args.epsilon), ("--bounds", args.bounds), ("--param", args.param))
             if v]
    if stray:
        raise CLIError(f"{', '.join(stray)}: a --column given with --spec takes its mechanism whole from the spec")
    out = {}
    for c, text in zip(args.column, per_column(args.spec, len(args.column), "--spec")):
        if c in out:
            raise CLIError(f"column {c!r} is named twice")
        try:
            mech = from_spec(read_spec_argument(text, "--spec"))
            if mech.source_columns(c) is not None:  # pragma: no cover - a mechanism of several columns refuses c
                raise TypeError("it privatizes several columns")
        except (ValueError, TypeError) as exc:
            raise CLIError(f"--column {c!r} --spec: {one_line(exc)} (a mechanism of several value columns goes "
                           "with --columns C1,C2,...)") from None
        out[c] = mech
    return out


def _file_categories(path, column):
    """``--categories`` of a Parquet category column, read from the file's dictionary, with a note on stderr."""
    import sys

    try:
        labels = dictionary_categories(path, column)
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None
    if labels is None:
        raise CLIError(f"column {column!r} needs its categories: give --categories A,B,... (declared, public, code i "
                       "the i-th), or privatize a Parquet file whose column is a category column with its declared "
                       "categories (pandas: astype(pd.CategoricalDtype([...])))")
    print(f"ldpnum: note: column {column!r}: {len(labels)} categories read from the file's dictionary "
          f"({', '.join(labels[:8])}{', ...' if len(labels) > 8 else ''}): they must be public and fixed in "
          "advance (a dictionary derived from the data, e.g. by astype('category'), reveals which values occur); "
          "state them with --categories to silence this note", file=sys.stderr)
    return labels


def oracle_class(name):
    """The registered mechanism ``name`` if it takes declared categories (a frequency oracle), else None."""
    try:
        cls = lookup(str(name))
    except ValueError:
        return None
    return cls if cls.takes_categories else None


def category_column_mechanisms(args):
    """``{column: mechanism}`` when ``--categories`` is given: frequency oracles over them, others with bounds.

    Each ``--column`` whose ``--mechanism`` is a frequency oracle takes the next ``--categories`` (its ``k`` is
    their number); every other column takes the next ``--bounds``, as without categories. Without any
    ``--categories``, an oracle's column must be a Parquet category (dictionary) column: its declared categories
    are read from the file (:func:`ldpnum.io.dictionary_categories`), with a note on stderr that they must be
    public, not derived from the data.
    """
    columns = args.column
    if not columns or args.spec or args.columns or args.param:
        raise CLIError("--categories goes with --column, --mechanism and --epsilon (no --spec, --columns or --param)")
    missing = [flag for flag, v in (("--mechanism", args.mechanism), ("--epsilon", args.epsilon)) if not v]
    if missing:
        raise CLIError(f"--column needs {', '.join(missing)}")
    names = per_column(args.mechanism, len(columns), "--mechanism")
    epsilons = per_column(args.epsilon, len(columns), "--epsilon")
    oracles = [c for c, name in zip(columns, names) if oracle_class(name) is not None]
    if not args.categories:
        args.categories = [_file_categories(args.input, c) for c in oracles]
    if len(args.categories) != len(oracles):
        raise CLIError(f"--categories was given {len(args.categories)} time(s) for {len(oracles)} column(s) with a "
                       "frequency-oracle --mechanism (grr, olh, ...): give it once per such column, in order")
    others = [c for c in columns if c not in oracles]
    if len(args.bounds) != len(others):
        raise CLIError(f"--bounds was given {len(args.bounds)} time(s) for {len(others)} column(s) of numbers: give "
                       "--bounds LO HI once per column whose mechanism is not a frequency oracle, in order")
    categories = iter(args.categories)
    bounds = iter(tuple(b) for b in args.bounds)
    mechanisms = {}
    for c, name, eps in zip(columns, names, epsilons):
        if c in mechanisms:
            raise CLIError(f"column {c!r} is named twice")
        try:
            cls = oracle_class(name)
            if cls is None:
                mechanisms[c] = make_mechanism(name, eps, next(bounds))
                continue
            given = next(categories)
            labels = given if isinstance(given, list) else [x.strip() for x in given.split(",")]
            mechanisms[c] = cls(eps, len(labels)).with_categories(labels)
        except (ValueError, TypeError) as exc:
            raise CLIError(f"column {c!r}: {one_line(exc)}") from None
    return mechanisms
