"""How report columns carry their specs through pandas objects and Parquet files (DESIGN.md R3).

A report column holds integer codes; the :class:`~ldpnum.Spec` that decodes them travels in the object's
``attrs`` under the key ``"ldpnum"``::

    {"format": 1,
     "columns": [{"column": <name>, "spec": <Spec.to_dict()>}, ...],
     "strategy": "all-columns" | "one-column-per-row" | None,
     "epsilon_per_row": <float or None>}

pandas copies ``attrs`` through selection, ``copy`` and ``concat`` of objects with equal attrs, and writes
them to a Parquet file's schema metadata under ``b"PANDAS_ATTRS"`` (read back by ``read_parquet``), so the
specs survive those operations. :func:`specs_from_parquet_metadata` reads them from the metadata alone,
without loading the file (the command line streams files larger than memory).

Column names are stored as JSON values and compared with ``==``, so string and integer names both work.
"""

import json

from ._core import Spec, check_spec

__all__ = ["ATTRS_KEY", "attach_specs", "column_specs", "frame_info", "parquet_metadata", "spec_for",
           "specs_from_parquet_metadata"]

ATTRS_KEY = "ldpnum"
FORMAT = 1


def _entry(info):
    if not isinstance(info, dict) or info.get("format") != FORMAT or not isinstance(info.get("columns"), list):
        raise ValueError(f"attrs[{ATTRS_KEY!r}] is not ldpnum report metadata (format {FORMAT}): {info!r}")
    return info


def attach_specs(obj, specs, *, strategy=None, epsilon_per_row=None):
    """Record ``specs`` (a mapping column name -> :class:`Spec`) in ``obj.attrs``; returns ``obj``.

    Replaces any ldpnum metadata already there. ``strategy`` and ``epsilon_per_row`` record how a
    DataFrame's columns were privatized and the total ε each row spent (sequential composition).
    """
    columns = []
    for name, spec in specs.items():
        if not isinstance(spec, Spec):
            raise TypeError(f"spec of column {name!r} must be a Spec; got {type(spec).__name__}")
        json.dumps(name)  # names must be JSON values to survive Parquet
        columns.append({"column": name, "spec": spec.to_dict()})
    obj.attrs[ATTRS_KEY] = {"format": FORMAT, "columns": columns, "strategy": strategy,
                            "epsilon_per_row": None if epsilon_per_row is None else float(epsilon_per_row)}
    return obj


def frame_info(obj):
    """The ldpnum metadata dict recorded on ``obj`` (None when there is none)."""
    info = getattr(obj, "attrs", {}).get(ATTRS_KEY)
    return None if info is None else _entry(info)


def column_specs(obj):
    """Mapping column name -> :class:`Spec` recorded on ``obj`` (empty when none)."""
    info = frame_info(obj)
    if info is None:
        return {}
    return {c["column"]: Spec.from_dict(c["spec"]) for c in info["columns"]}


def spec_for(obj, name, spec=None):
    """The spec of report column ``name`` of ``obj``.

    An explicit ``spec`` is used when the column records none, and must equal the recorded one otherwise
    (:class:`~ldpnum.SpecMismatchError`). ValueError when neither exists.
    """
    if spec is not None and not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    recorded = column_specs(obj).get(name)
    if recorded is None:
        if spec is None:
            raise ValueError(f"column {name!r} carries no ldpnum spec: it is not a report column produced by "
                             "ldpnum (pass spec= to read it as reports)")
        return spec
    if spec is not None:
        check_spec(spec, recorded, f"reports in column {name!r}")
    return recorded


def specs_from_parquet_metadata(metadata):
    """The ldpnum metadata dict in a Parquet schema's key-value metadata (``pyarrow.Schema.metadata``).

    Returns None when the file carries none.
    """
    raw = (metadata or {}).get(b"PANDAS_ATTRS")
    if raw is None:
        return None
    info = json.loads(raw).get(ATTRS_KEY)
    return None if info is None else _entry(info)


def parquet_metadata(info):
    """Parquet schema metadata ``{b"PANDAS_ATTRS": ...}`` carrying the ldpnum metadata dict ``info``.

    This is what ``DataFrame.to_parquet`` writes for a frame whose attrs are ``{"ldpnum": info}``; writers
    that stream batches with ``pyarrow.parquet.ParquetWriter`` add it to the schema, so ``read_parquet``
    restores the specs exactly as for a file written by pandas.
    """
    return {b"PANDAS_ATTRS": json.dumps({ATTRS_KEY: _entry(info)}).encode()}
