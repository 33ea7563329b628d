"""How report columns carry their specs through pandas objects and Parquet files (design rule R3).

A report column holds integer codes; the :class:`~ldpnum.Spec` that decodes them travels in the object's
``attrs`` under the key ``"ldpnum"``::

    {"format": 1,
     "columns": [{"column": <name>, "spec": <Spec.to_dict()>}, ...],
     "strategy": "all-columns" | "one-column-per-row" | None,
     "epsilon_per_row": <float or None>,
     "shuffle_delta": <float>,   # only when the reports were declared shuffled (one batch), with this δ
     "collection": <hex id>}     # Dask collections: see new_collection_id

**Collections and parts.** A Dask collection (``ddf.ldp.privatize``) records a collection id, the same in every
partition (so ``compute()`` keeps it). A reader that merges parts (``ldpnum estimate DIR``,
the Dask aggregate) checks them with :func:`check_parts`: every part must carry the same id, and no two
non-empty parts the same codes (digest), so a part file of another collection (even of the same spec) or a
copied part is refused instead of being merged into the estimate.

pandas copies ``attrs`` through selection, ``copy`` and ``concat`` of objects with equal attrs, and writes
them to a Parquet file's schema metadata under ``b"PANDAS_ATTRS"`` (read back by ``read_parquet``), so the
specs survive those operations. :func:`specs_from_parquet_metadata` reads them from the metadata alone,
without loading the file (the command line streams files larger than memory).

Column names are stored as JSON values and compared with ``==``, so string and integer names both work.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._random import splitmix64_mix
from .aggregate import collector_key, count_codes
from .spec import Spec, check_spec

__all__ = ["ATTRS_KEY", "attach_specs", "budget_text", "column_specs", "frame_info", "parquet_metadata", "spec_for",
           "specs_from_parquet_metadata", "codes_digest", "add_digests", "column_digest", "ReportsChangedError",
           "sign_info", "verify_info", "collector_key", "histogram_digest", "check_codes", "column_sources",
           "report_record"]

ATTRS_KEY = "ldpnum"
FORMAT = 1


def _entry(info):
    if not isinstance(info, dict) or info.get("format") != FORMAT or not isinstance(info.get("columns"), list):
        raise ValueError(f"attrs[{ATTRS_KEY!r}] is not ldpnum report metadata (format {FORMAT}): {info!r}")
    _check_budget(info)
    return info


def _check_budget(info):
    """``epsilon_per_row`` must be what the column specs and the strategy give.

    That is the sum of the columns' ε ("all-columns", sequential composition), their largest ("one-column-per-row"), or
    the one column's ε.
    """
    recorded = info.get("epsilon_per_row")
    if recorded is None or not info["columns"]:
        return
    try:
        epsilons = [float(c["spec"]["epsilon"]) for c in info["columns"]]
    except (TypeError, KeyError, ValueError):
        raise ValueError(f"attrs[{ATTRS_KEY!r}] holds a column entry without a spec's epsilon") from None
    strategy = info.get("strategy")
    if strategy == "one-column-per-row":
        expected, how = max(epsilons), "the largest column epsilon (one-column-per-row)"
    elif strategy == "all-columns":
        expected, how = math.fsum(epsilons), "the sum of the column epsilons (all-columns)"
    elif strategy is None and len(epsilons) == 1:
        expected, how = epsilons[0], "the column's epsilon"
    else:
        raise ValueError(f"attrs[{ATTRS_KEY!r}] records strategy {strategy!r}, which ldpnum does not know")
    if not (isinstance(recorded, (int, float)) and math.isclose(float(recorded), expected, rel_tol=1e-12)):
        raise ValueError(f"the report record's epsilon_per_row {recorded!r} disagrees with its column specs: it must "
                         f"be {how}, {expected:g}; the record was edited or assembled by hand, so the privacy "
                         "spent per person is unknown")


class ReportsChangedError(ValueError):
    """A report column's codes are not the codes it was privatized as: estimating them as reports would be wrong.

    They were changed by arithmetic, a cast that changed values, filtering, truncation or an edit.
    """


_SALTS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03))
_CHUNK = 1 << 20
#: The SplitMix64 finalizer on a uint64 array, in place.
_mix = splitmix64_mix


#: Histograms of at most this many cells are hashed through a table of f_j(c) (uint8/uint16 codes).
_TABLE_CELLS = 1 << 16
_TABLES: list[np.ndarray] = []


def _tables():
    if not _TABLES:
        cells = np.arange(_TABLE_CELLS, dtype=np.uint64)
        # built whole, then put in place in one step: a thread (a Dask task) must never see some of the tables
        _TABLES[:] = [_mix(cells + salt) for salt in _SALTS]
    return _TABLES


def histogram_digest(counts: NDArray[Any]) -> str:
    """:func:`codes_digest` of codes given by their histogram: the same string, in O(cells) instead of O(codes).

    ``counts[c]`` is the number of codes equal to ``c``, at most 65,536 cells.
    """
    counts = np.asarray(counts)
    if counts.ndim != 1 or counts.shape[0] > _TABLE_CELLS:
        raise ValueError(f"histogram_digest takes at most {_TABLE_CELLS} counts; got shape {counts.shape}")
    c = counts.astype(np.uint64)
    s1, s2 = (int(np.sum(t[:c.shape[0]] * c, dtype=np.uint64)) for t in _tables())
    return f"{int(counts.sum())}:{s1:016x}{s2:016x}"


def _digest_sums(codes):
    """``(S1, S2)`` of the multiset hash below, as Python ints."""
    sums = [0, 0]
    if codes.ndim != 1 or codes.dtype.kind not in "iu":
        raise TypeError(f"a digest is taken of one-dimensional integer codes; got {codes.dtype}, shape {codes.shape}")
    flat = codes
    for start in range(0, flat.shape[0], _CHUNK):
        chunk = flat[start:start + _CHUNK].astype(np.uint64)
        for j, salt in enumerate(_SALTS):
            sums[j] = (sums[j] + int(np.sum(_mix(chunk + salt), dtype=np.uint64))) % (1 << 64)
    return sums


def codes_digest(codes: NDArray[Any]) -> str:
    r"""A digest of a column's report codes that any change of their values or number alters.

    The multiset hash :math:`(n, S_1, S_2)` with :math:`S_j = \sum_i f_j(c_i) \bmod 2^{64}`, where
    :math:`f_j` is the SplitMix64 finalizer of :math:`c + s_j` for two fixed salts: it does not depend on
    the order of the rows (sorting or shuffling reports changes no estimate) and is additive, so the digest
    of a concatenation is the sum of the parts' digests. Changing, adding or removing any code changes it
    except with probability about :math:`2^{-128}` for accidental edits (arithmetic, casts that change
    values, truncation, filtering). It is not a cryptographic tag: for tamper evidence against someone who
    edits on purpose, sign the metadata with a collector key (:func:`sign_info`).

    Returns
    -------
    str
        ``"<n>:<S1 hex><S2 hex>"``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum._frame import codes_digest
    >>> codes_digest(np.array([3, 1, 2], dtype=np.uint16)) == codes_digest(np.array([1, 2, 3], dtype=np.uint16))
    True
    >>> codes_digest(np.array([3, 1, 2], dtype=np.uint16)) == codes_digest(np.array([1, 1, 3], dtype=np.uint16))
    False
    """
    codes = np.asarray(codes)
    if codes.ndim == 1 and codes.dtype in (np.uint8, np.uint16):  # one threaded counting pass, then a table
        return histogram_digest(count_codes(codes, 1 << (8 * codes.dtype.itemsize)))
    s1, s2 = _digest_sums(codes)
    return f"{codes.shape[0]}:{s1:016x}{s2:016x}"


def new_collection_id(seed: Any = None) -> str:
    """A collection's id (32 hex digits): random for a real collection, else derived from the seed.

    A real collection (``seed=None``) takes 128 random bits from the operating system; a seed (an int or a SeedSequence)
    derives the id, so a seeded simulation writes the same record every time.
    """
    import os

    if seed is None:
        return os.urandom(16).hex()
    if isinstance(seed, np.random.SeedSequence):
        seed = (seed.entropy, tuple(seed.spawn_key))
    return hashlib.sha256(f"ldpnum collection {seed!r}".encode()).hexdigest()[:32]


def check_parts(parts: Sequence[tuple[Any, str | None, str | None]], what: str = "the parts") -> None:
    """Refuse merging parts that are not one collection's.

    ``parts`` is a list of ``(name, collection id or None, digest of the part's codes)``.

    Raises ValueError when some parts carry a collection id and others none, when two ids differ (a part of
    another collection, even with the same spec), or when two non-empty parts hold the same codes (a copied
    part: the digest of :func:`codes_digest` includes the number of codes and differs between distinct parts
    except with probability about 2^-128, or for parts so small that their codes coincide by chance, e.g. two
    parts of one report each, which are then refused too). Parts without any id (files written by pandas or by
    ``ldpnum privatize``, each a whole collection with the digest of its codes, or by older versions) are
    checked for copies only: which collection they belong to is not recorded.
    """
    ids: dict[str | None, list[Any]] = {}
    for name, cid, _ in parts:
        ids.setdefault(cid, []).append(name)
    if None in ids and len(ids) > 1:
        raise ValueError(f"{what} mix parts with and without a collection id ({len(ids[None])} without, the first "
                         f"{ids[None][0]!r}): they were not written by one collection; no estimate is made")
    if len(ids) > 1:
        (a, first), (b, other) = list(ids.items())[:2]
        raise ValueError(f"{what} hold parts of {len(ids)} different collections: {other[0]!r} belongs to "
                         f"collection {b}, {first[0]!r} to {a}; a part of another collection (even of the same "
                         "spec) would be counted as if its people were this collection's. Estimate each "
                         "collection on its own (merge their aggregates only if their people differ)")
    seen: dict[str, Any] = {}
    for name, _, digest in parts:
        if digest is None or digest.startswith("0:"):
            continue
        if digest in seen:
            raise ValueError(f"{what}: {name!r} holds exactly the codes of {seen[digest]!r} (digest {digest}): a "
                             "duplicated part would count its people twice; remove the copy")
        seen[digest] = name


def add_digests(*digests: str) -> str:
    """The digest of the concatenation of columns with the given digests (:func:`codes_digest`)."""
    n, s1, s2 = 0, 0, 0
    for d in digests:
        count, hexes = d.split(":")
        n += int(count)
        s1 = (s1 + int(hexes[:16], 16)) % (1 << 64)
        s2 = (s2 + int(hexes[16:], 16)) % (1 << 64)
    return f"{n}:{s1:016x}{s2:016x}"


def attach_specs(obj: Any, specs: Mapping[Any, Spec], *, strategy: str | None = None,
                 epsilon_per_row: float | None = None, digests: Mapping[Any, str] | None = None,
                 sources: Mapping[Any, Any] | None = None, shuffle_delta: float | None = None) -> Any:
    """Record ``specs`` (a mapping column name -> :class:`Spec`) in ``obj.attrs``; returns ``obj``.

    Replaces any ldpnum metadata already there. ``strategy`` and ``epsilon_per_row`` record how a
    DataFrame's columns were privatized and the total ε each row spent (sequential composition).
    ``digests`` (column name -> :func:`codes_digest` of the codes the column holds) ties each spec to
    the exact codes, so a column changed afterwards is refused (:func:`column_digest`). ``sources`` (column
    name -> list of the value columns it was privatized from) names the coordinates of a vector report column.
    ``shuffle_delta`` declares the reports one shuffled batch with that central δ (each column's aggregate is
    then declared shuffled: :meth:`ldpnum.Aggregate.shuffled`).
    """
    obj.attrs[ATTRS_KEY] = report_record(specs, strategy=strategy, epsilon_per_row=epsilon_per_row, digests=digests,
                                         sources=sources, shuffle_delta=shuffle_delta)
    return obj


def report_record(specs: Mapping[Any, Spec], *, strategy: str | None = None,
                  epsilon_per_row: float | None = None, digests: Mapping[Any, str] | None = None,
                  sources: Mapping[Any, Any] | None = None,
                  shuffle_delta: float | None = None) -> dict[str, Any]:
    """The ldpnum record of report columns; the arguments are those of :func:`attach_specs`.

    It is the dict :func:`attach_specs` puts in ``attrs`` and the command line in a Parquet file's metadata.
    """
    digests = digests or {}
    sources = sources or {}
    columns = []
    for name, spec in specs.items():
        if not isinstance(spec, Spec):
            raise TypeError(f"spec of column {name!r} must be a Spec; got {type(spec).__name__}")
        json.dumps(name)  # names must be JSON values to survive Parquet
        entry = {"column": name, "spec": spec.to_dict()}
        if name in digests:
            entry["codes"] = digests[name]
        if name in sources:
            entry["sources"] = list(sources[name])
            json.dumps(entry["sources"])
        columns.append(entry)
    record = {"format": FORMAT, "columns": columns, "strategy": strategy,
              "epsilon_per_row": None if epsilon_per_row is None else float(epsilon_per_row)}
    if shuffle_delta is not None:
        record["shuffle_delta"] = float(shuffle_delta)
    return record


def shuffle_delta_of(obj: Any) -> float | None:
    """The central δ of a report object declared one shuffled batch (:func:`attach_specs`), else None."""
    info = frame_info(obj)
    return None if info is None else info.get("shuffle_delta")


def budget_text(info: Mapping[str, Any] | None) -> str:
    """``"epsilon per row 1 (one-column-per-row)"`` (and the shuffle's δ) of a record, ``""`` without a budget."""
    if info is None or info.get("epsilon_per_row") is None:
        return ""
    strategy = info.get("strategy")
    shuffled = "" if info.get("shuffle_delta") is None else f"; shuffled (central delta {info['shuffle_delta']:g})"
    return f"epsilon per row {info['epsilon_per_row']:g}" + (f" ({strategy})" if strategy else "") + shuffled


def frame_info(obj: Any) -> dict[str, Any] | None:
    """The ldpnum metadata dict recorded on ``obj`` (None when there is none)."""
    info = getattr(obj, "attrs", {}).get(ATTRS_KEY)
    return None if info is None else _entry(info)


def column_specs(obj: Any) -> dict[Any, Spec]:
    """Mapping column name -> :class:`Spec` recorded on ``obj`` (empty when none)."""
    info = frame_info(obj)
    if info is None:
        return {}
    return {c["column"]: Spec.from_dict(c["spec"]) for c in info["columns"]}


def column_digest(obj: Any, name: Any) -> str | None:
    """The digest of the codes recorded for report column ``name`` of ``obj`` (None when none is)."""
    info = frame_info(obj)
    if info is None:
        return None
    for c in info["columns"]:
        if c["column"] == name:
            return c.get("codes")
    return None


def column_sources(obj: Any, name: Any) -> Any:
    """The value columns a vector report column ``name`` of ``obj`` was privatized from.

    None for a column of one value per person, or when nothing is recorded.
    """
    info = frame_info(obj)
    if info is None:
        return None
    for c in info["columns"]:
        if c["column"] == name:
            return c.get("sources")
    return None


def check_codes(obj: Any, name: Any, codes: Any = None, *, digest: str | None = None) -> None:
    """Raise :class:`ReportsChangedError` when ``codes`` differ from the codes recorded when the column was privatized.

    ``codes`` are the present codes of column ``name``; or their ``digest``, when the caller has it.
    """
    recorded = column_digest(obj, name)
    if recorded is None:
        return
    got = digest if digest is not None else codes_digest(codes)
    if got != recorded:
        n_rec, n_got = int(recorded.split(":")[0]), int(got.split(":")[0])
        what = (f"it holds {n_got} reports where {n_rec} were privatized" if n_rec != n_got
                else f"its {n_got} codes are not the codes privatized")
        raise ReportsChangedError(
            f"column {name!r} no longer holds the reports it was privatized as: {what}. Arithmetic, casts that "
            "change values, filling, filtering or truncating a report column make it stop being reports, and "
            "estimating it would give a wrong answer. Estimate the column as privatized; to estimate the people "
            "chosen by a public column, take reports.ldp.subset(mask) (a report object again) or group them with "
            "reports.ldp.aggregate(by=column) / describe(by=column)")


def spec_for(obj: Any, name: Any, spec: Spec | None = None) -> Spec:
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
                             "ldpnum (pass spec= to read it as reports; pandas.concat drops the record of report "
                             "objects from different collections: join them with ldpnum.pandas.concat)")
        return spec
    if spec is not None:
        check_spec(spec, recorded, f"reports in column {name!r}")
    return recorded


def specs_from_parquet_metadata(metadata: Mapping[bytes, bytes] | None) -> dict[str, Any] | None:
    """The ldpnum metadata dict in a Parquet schema's key-value metadata (``pyarrow.Schema.metadata``).

    Read from ``PANDAS_ATTRS`` (pandas' ``to_parquet``), else from the ``attributes`` of pandas' own
    ``pandas`` metadata (pyarrow's ``Table.from_pandas``, hence Dask's ``to_parquet``). Returns None when the
    file carries none.
    """
    metadata = metadata or {}
    raw = metadata.get(b"PANDAS_ATTRS")
    if raw is not None:
        attrs = json.loads(raw)
    elif b"pandas" in metadata:  # writers that keep attrs only in pandas' own metadata (pyarrow, Dask)
        attrs = json.loads(metadata[b"pandas"]).get("attributes") or {}
    else:
        return None
    info = attrs.get(ATTRS_KEY) if isinstance(attrs, dict) else None
    return None if info is None else _entry(info)


def parquet_metadata(info: Mapping[str, Any], metadata: Mapping[bytes, bytes] | None = None) -> dict[bytes, bytes]:
    """Parquet schema metadata ``{b"PANDAS_ATTRS": ...}`` carrying the ldpnum metadata dict ``info``.

    This is what ``DataFrame.to_parquet`` writes for a frame whose attrs are ``{"ldpnum": info}``; writers
    that stream batches with ``pyarrow.parquet.ParquetWriter`` add it to the schema, so ``read_parquet``
    restores the specs exactly as for a file written by pandas. Given a schema's ``metadata`` (e.g. with pandas'
    own ``b"pandas"`` entry, from ``pyarrow.Schema.from_pandas``), the record is added to it, and also put where
    ``to_parquet`` puts a frame's ``attrs`` inside that entry (``attributes``, read back by pyarrow's
    ``to_pandas``, hence by Dask): one layout for every writer.
    """
    out = dict(metadata or {})
    if b"pandas" in out:
        pandas_meta = json.loads(out[b"pandas"])
        pandas_meta["attributes"] = {ATTRS_KEY: _entry(info)}
        out[b"pandas"] = json.dumps(pandas_meta).encode()
    out[b"PANDAS_ATTRS"] = json.dumps({ATTRS_KEY: _entry(info)}).encode()
    return out


# -- tamper evidence: a keyed MAC over the record ------------------------------------------------------------
def _mac(info, key):
    body = json.dumps({k: v for k, v in info.items() if k != "mac"}, sort_keys=True, separators=(",", ":"))
    return hmac.new(collector_key(key), body.encode("utf-8"), hashlib.sha256).hexdigest()


def sign_info(info: Mapping[str, Any], key: bytes | str) -> dict[str, Any]:
    """The record ``info`` with ``"mac"``: HMAC-SHA256 (RFC 2104) of its canonical JSON under the collector's ``key``.

    The canonical JSON holds the specs, digests of the codes, strategy and ``epsilon_per_row``.
    """
    info = dict(_entry(info))
    info["mac"] = _mac(info, key)
    return info


def verify_info(info: Mapping[str, Any], key: bytes | str, what: str = "the report record") -> None:
    """Raise ValueError unless ``info`` carries a MAC made with ``key`` (:func:`sign_info`)."""
    info = _entry(info)
    mac = info.get("mac")
    if mac is None:
        raise ValueError(f"{what} carries no MAC: it was not signed with a collector key, so it cannot be "
                         "vouched for")
    if not hmac.compare_digest(str(mac), _mac(info, key)):
        raise ValueError(f"{what} fails its MAC check: its specs, digests or budget were edited after signing, "
                         "or it was signed with another key")
