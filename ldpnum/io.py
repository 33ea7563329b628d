"""File input and output: streaming sources, atomic writes, signed records, ledger and key files.

The library's file machinery, below the command line: :mod:`ldpnum.cli` parses arguments and prints, the
functions here read and write files and print nothing. Files larger than memory stream: a source yields
``batch_size`` rows at a time and never holds a column whole, and a file is folded into a mergeable
aggregate batch by batch.

**Sources.** ``_Source`` reads some columns of a CSV/TSV file (optionally compressed: ``.gz``, ``.bz2``,
``.zst``) or of a Parquet file in batches; a privatized CSV column is parsed as numbers and an item column
(``_ItemSource``) as text, bytes or uint64, never type-inferred. A Parquet dataset (a directory of part
files, as Dask and Spark write them) is listed by :func:`parquet_parts`.

**Privatizing a file.** :func:`privatize_file` streams the columns of a CSV or Parquet file, batch by batch,
through the collection layer (:mod:`ldpnum.collect` plans the report columns, validates and randomizes each
batch) into a Parquet file of report columns, written beside the output and renamed over it when complete.

**Records.** A report file carries the ldpnum record (specs, digests of the codes, the budget, and an HMAC
under the collector's key when one is given) in its Parquet schema metadata, exactly where
``DataFrame.to_parquet`` puts a frame's ``attrs`` (``_with_record``). :func:`aggregate_file` streams a report
column back into one :class:`~ldpnum.Aggregate`, rebuilding the mechanism from the record and checking its
MAC, the digest of the codes and, for a dataset, that its parts are one collection's.
:func:`heavy_hitters_file` streams an item column through a heavy-hitter protocol into its aggregate (a
one-round simulation).

**Key files.** Each person's :class:`~ldpnum.ClientKeys` key, for longitudinal (memoized) columns, is kept in a
file written once by :func:`write_keys_file` (``ldpnum keys generate``): Parquet with the uint64 columns ``key0``,
``key1`` and optionally the people's ids, or ``.npy``, readable by its owner only. :func:`read_keys_file` reads
one back (checking its recorded fingerprint), and :func:`keys_for_rows` matches it to an input file's rows by
their people's ids, or takes it row for row; :func:`privatize_file` then checks the count against the rows and
gives each batch the keys of its rows.

**Small files.** Reports are written to a hidden file beside the output and renamed over it when complete
(``_remove_stale_temporaries`` clears those a killed run left); the ledger is replaced atomically
(``write_atomic``). The collector's MAC key file, the spec file a collection was deployed with
(:func:`write_spec_file`, read back by ``estimate --expect-spec``), the privacy ledger's file and the
person ids of an input column are read here.

**Used by the command line.** Besides the functions in ``__all__``, :mod:`ldpnum.cli` calls
:func:`report_column` (a report column's mechanism from the file's metadata, before a batch is read),
:func:`read_key`, :func:`open_ledger` and :func:`ledger_check` (a privacy ledger's file, checked before anything
is drawn; :func:`record_file_ledger` records the collection), :func:`generate_keys_file` and
:func:`distinct_people` (the people a key file is written for), :func:`write_atomic`,
:func:`read_spec_argument`, :func:`expected_spec_file`, :func:`expected_shuffle_file`, :func:`check_shuffle_declaration`,
:func:`check_plot_path`, :func:`write_plot` (an estimated distribution drawn into an image file),
:func:`check_file_keys`, :func:`check_file_shuffle` and :func:`check_estimate_request` (the collection layer's
rules in the command line's words), :func:`require_pyarrow`, :func:`one_line`, :func:`is_user_error` and
:func:`terminate_as_interrupt`: package-internal API, public so that no module imports another's private names,
but not part of ``ldpnum``'s namespace.

Errors caused by the user's files (a missing file, an unknown format or column, an unreadable row, a record
that fails its checks) raise :class:`CLIError` with a one-line message, which the command line prints
before exiting with status 2. pyarrow, pandas and tqdm are imported by the functions that use them, so
``import ldpnum.io`` stays light.
"""

import contextlib
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO, Union

if TYPE_CHECKING:
    import pandas as pd

    from .accounting import PrivacyLedger
    from .aggregate import Aggregate
    from .base import Mechanism
    from .heavy import PEM, HeavyHittersEstimate, TreeHist
    from .longitudinal.keys import ClientKeys
    from .spec import Spec

#: A file name: a str or a path object.
PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["DEFAULT_BATCH_SIZE", "CLIError", "aggregate_file", "dictionary_categories", "heavy_hitters_file",
           "keys_for_rows", "parquet_parts",
           "privatize_file", "read_keys_file", "write_keys_file", "write_spec_file"]

#: Rows read, randomized and written per step (about 2 MB of uint16 codes per column).
DEFAULT_BATCH_SIZE = 1 << 20

#: Bytes of CSV parsed per block (blocks are gathered into ``--batch-size`` rows), and whether blocks are
#: parsed on threads.
CSV_BLOCK = 1 << 20
#: Largest CSV block tried for a file with very long rows (a row must fit in one block).
CSV_MAX_BLOCK = 1 << 30
CSV_THREADS = True

#: Bytes of a Parquet column chunk read at a time.
READ_BUFFER = 1 << 20

_CSV_SUFFIXES = (".csv", ".tsv")
_COMPRESSED = (".gz", ".bz2", ".zst", ".lz4")
_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


class CLIError(Exception):
    """A mistake in the command line or its input files: printed as one line, exit status 2.

    The file functions of this module raise it for the user's files (a missing file or column, a malformed
    or changed record), so the command line reports them without a traceback.
    """


def is_user_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the user's mistake (printed as one line by the command line) rather than a bug.

    :class:`CLIError`, ValueError, TypeError, OSError and pyarrow's errors (an unreadable file) are.
    """
    if isinstance(exc, (CLIError, ValueError, TypeError, OSError)):
        return True
    try:
        import pyarrow as pa
    except ImportError:
        return False
    return isinstance(exc, pa.ArrowException)


@contextlib.contextmanager
def terminate_as_interrupt() -> "Iterator[None]":
    """Within the block, SIGTERM unwinds like Ctrl-C, so a stopped :func:`privatize_file` removes its hidden file.

    The previous handler is restored after the block; outside the main thread (where signals cannot be set) the
    block runs unchanged.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (its type's name when it has none), as ``ldpnum: error: ...`` prints it.

    Parameters
    ----------
    exc : BaseException

    Returns
    -------
    str

    Examples
    --------
    >>> one_line(ValueError("no  such   file")), one_line(KeyError())
    ('no such file', 'KeyError')
    """
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def require_pyarrow() -> None:
    """Refuse, with a :class:`CLIError` naming the extra to install, when pyarrow (file I/O) is missing."""
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise CLIError('reading and writing files needs pyarrow, which is not installed: pip install '
                       '"ldpnum[parquet]" (see the command-line guide, docs/guides/command-line.md)') from None


def _file_kind(path):
    name = os.path.basename(str(path)).lower()
    for comp in _COMPRESSED:
        if name.endswith(comp):
            name = name[: -len(comp)]
            break
    if name.endswith(_CSV_SUFFIXES):
        return "csv"
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    raise CLIError(f"cannot tell the format of {path!r} from its extension: use .csv or .tsv (optionally "
                   "compressed: .gz, .bz2, .zst) for CSV, .parquet or .pq for Parquet")


def _check_exists(path):
    if not os.path.exists(path):
        raise CLIError(f"no such file: {path!r}")
    if os.path.isdir(path):
        raise CLIError(f"{path!r} is a directory, not a file")


def parquet_parts(path: str) -> list[str]:
    """The Parquet files of a dataset directory (as Dask and Spark write them), in name order.

    Parameters
    ----------
    path : str
        A directory of part files. Names starting with ``.`` or ``_`` (``_SUCCESS``, ``_metadata``, hidden
        temporaries) are not parts.

    Returns
    -------
    list of str
        The paths of the ``.parquet``, ``.pq`` and ``.parq`` files in the directory, sorted by name.

    Raises
    ------
    CLIError
        If the directory holds no Parquet file.
    """
    names = sorted(f for f in os.listdir(path)
                   if not f.startswith((".", "_")) and f.lower().endswith(_PARQUET_SUFFIXES))
    if not names:
        raise CLIError(f"directory {path!r} holds no Parquet files (.parquet, .pq)")
    return [os.path.join(path, f) for f in names]


def _open_parquet(path):
    import pyarrow.parquet as pq

    if os.path.isdir(path):  # a dataset: its first part file stands for the dataset's schema and record
        path = parquet_parts(path)[0]
    _check_exists(path)
    try:
        # Pages are read through a 1 MB buffer, without pre-buffering column chunks: memory stays bounded by
        # the batch, even for a row group of 1e7 rows (pre-buffered reads keep whole column chunks alive).
        return pq.ParquetFile(path, pre_buffer=False, buffer_size=READ_BUFFER)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... for a file that is not Parquet
        raise CLIError(f"cannot read {path!r} as Parquet: {one_line(exc)}") from None


def dictionary_categories(path: PathLike, column: str) -> "list[str] | None":
    """The categories a Parquet file declares for ``column``: its dictionaries' text values, in their order.

    A pandas ``category`` column (``to_parquet``) or an Arrow dictionary column is stored with a dictionary in
    every row group, unused categories included. pandas writes the whole dictionary to each; a file written row
    group by row group (Arrow's ``ParquetWriter``) may hold a different one in each. The categories are their
    union in the order of first appearance (the order ``pd.read_parquet`` gives them), read row group by row
    group (the column's values are decoded once, one row group in memory at a time). Two row groups that order
    two of their shared categories differently make the codes ambiguous (is ``"a"`` category 0 or 1?): they are
    refused. ``ldpnum privatize -c C -m grr -e EPS`` without ``--categories`` uses these categories, with a note
    that they must be public.

    Parameters
    ----------
    path : str or path-like
        The input file.
    column : str
        The column.

    Returns
    -------
    list of str or None
        The categories; None for a CSV file, a column that is not a dictionary of text, or a file of no rows.

    Raises
    ------
    ValueError
        When two row groups' dictionaries order shared categories differently.

    Examples
    --------
    >>> import pathlib, tempfile, pandas as pd
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "answers.parquet"
    >>> pd.DataFrame({"q": pd.Categorical(["no"], categories=["yes", "no", "maybe"])}).to_parquet(path)
    >>> dictionary_categories(path, "q")
    ['yes', 'no', 'maybe']
    >>> groups = [pa.table({"q": pa.array(v).dictionary_encode()}) for v in (["b", "a"], ["c", "a"])]
    >>> with pq.ParquetWriter(path, groups[0].schema) as writer:
    ...     for group in groups:
    ...         writer.write_table(group)
    >>> dictionary_categories(path, "q")   # b, a from the first row group, then c
    ['b', 'a', 'c']
    """
    import pyarrow as pa

    if _file_kind(path) != "parquet":
        return None
    pf = _open_parquet(str(path))
    names = pf.schema_arrow.names
    if column not in names:
        return None
    kind = pf.schema_arrow.field(column).type
    if not pa.types.is_dictionary(kind) or not (pa.types.is_string(kind.value_type)
                                                or pa.types.is_large_string(kind.value_type)):
        return None
    categories: dict[str, int] = {}  # category -> its position, in order of first appearance
    first: dict[str, int] = {}  # category -> the row group that first listed it
    for group in range(pf.metadata.num_row_groups):
        for chunk in pf.read_row_group(group, columns=[column]).column(0).chunks:
            labels = [str(v) for v in chunk.dictionary.to_pylist()]
            for label in labels:
                if label not in categories:
                    categories[label], first[label] = len(categories), group
            _check_dictionary_order(labels, categories, first, group, column)
    return list(categories) or None


def _check_dictionary_order(labels: list, categories: dict, first: dict, group: int, column: str) -> None:
    """Refuse a row group's dictionary that orders two categories of earlier row groups the other way round.

    Categories new in this row group come after the known ones, in this dictionary's order, wherever it lists them.
    """
    known = [label for label in labels if first[label] < group]
    for a, b in zip(known, known[1:]):
        if categories[b] < categories[a]:
            raise ValueError(
                f"column {column!r}: row group {group} lists category {a!r} before {b!r}, row group "
                f"{max(first[a], first[b])} the other way round; the categories' order (their codes) is ambiguous: "
                "declare them (--categories A,B,... on the command line) or rewrite the file with one dictionary")


class _Source:
    """The batches of some columns of a CSV or Parquet file, at most ``batch_size`` rows each."""

    def __init__(self, path, batch_size, delimiter=None):
        require_pyarrow()
        self.delimiter = delimiter
        self.path = str(path)
        self.kind = _file_kind(self.path)
        self.batch_size = batch_size
        self._numeric = ()
        _check_exists(self.path)
        if self.kind == "parquet":
            self._pf = _open_parquet(self.path)
            self.schema = self._pf.schema_arrow
            self.num_rows = self._pf.metadata.num_rows
        else:
            self.schema = self._csv_reader(None).schema
            self.num_rows = None

    def _convert_options(self, columns, numeric, text=()):
        """How CSV columns are parsed.

        The privatized ones as float64, ``text`` ones as strings (an empty field missing), the others type-inferred.
        """
        import pyarrow as pa
        import pyarrow.csv as pcsv

        types = {c: pa.float64() for c in numeric}
        types.update({c: pa.string() for c in text})
        return pcsv.ConvertOptions(include_columns=list(columns) if columns is not None else None,
                                   column_types=types, strings_can_be_null=bool(text))

    def _csv_reader(self, columns, numeric=(), text=(), block_size=None):
        """An Arrow CSV reader with ``block_size`` (default :data:`CSV_BLOCK`).

        A row longer than a block is read by reopening with blocks 8 times larger, up to :data:`CSV_MAX_BLOCK` (see
        :meth:`_read`).
        """
        import pyarrow.csv as pcsv

        name = self.path.lower()
        delimiter = self.delimiter or ("\t" if any(name.endswith(".tsv" + c) for c in ("",) + _COMPRESSED) else ",")
        self._numeric = tuple(numeric)
        convert = self._convert_options(columns, numeric, text)
        try:
            # Small blocks, gathered into batches below: the reader's read-ahead stays a few MB (32 MB blocks
            # let it hold over 100 MB of a 184 MB file at once).
            return pcsv.open_csv(self.path, read_options=pcsv.ReadOptions(block_size=block_size or CSV_BLOCK,
                                                                          use_threads=CSV_THREADS),
                                 # a blank line is a row of missing values (an error, or imputed with
                                 # --nan-fill), never silently dropped
                                 parse_options=pcsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=False),
                                 convert_options=convert)
        except Exception as exc:
            size = block_size or CSV_BLOCK
            if _straddles(exc) and size < CSV_MAX_BLOCK:
                return self._csv_reader(columns, numeric, text, min(size * 8, CSV_MAX_BLOCK))
            raise CLIError(f"cannot read {self.path!r} as CSV: {self._explain(exc)}") from None

    def _explain(self, exc):
        """Arrow's message, with the name of the column it numbers ("CSV column #2")."""
        import re

        text = one_line(exc)
        names = getattr(getattr(self, "schema", None), "names", None)
        match = re.search(r"CSV column #(\d+)", text)
        if names and match and int(match.group(1)) < len(names):
            name = names[int(match.group(1))]
            text = text.replace(match.group(0), f"{match.group(0)} ({name!r})", 1)
            if "conversion error" in text and name in self._numeric:
                text += "; a privatized column must hold numbers"
        return text

    @property
    def columns(self):
        return list(self.schema.names)

    def check_columns(self, names):
        missing = [c for c in names if c not in self.schema.names]
        if missing:
            hint = ""
            if self.kind == "csv" and len(self.schema.names) == 1:
                sep = next((d for d in (";", "\t", "|", ",") if d in self.schema.names[0]), None)
                if sep is not None:
                    hint = f"; is the delimiter {sep!r}? pass --delimiter {sep!r}"
            raise CLIError(f"{self.path!r} has no column {missing[0]!r} (its columns: "
                           f"{', '.join(map(repr, self.schema.names))}){hint}")

    def _read(self, columns, numeric, text=()):
        """The reader's own batches (Parquet: ``batch_size`` rows; CSV: one per block)."""
        if self.kind == "parquet":
            it = self._pf.iter_batches(batch_size=self.batch_size, columns=list(columns))
        else:
            it = self._csv_reader(columns, numeric, text)
        rows, skip, block = 0, 0, CSV_BLOCK
        while True:
            try:
                batch = next(it)
            except StopIteration:
                return
            except Exception as exc:
                if self.kind == "csv" and _straddles(exc):
                    if block < CSV_MAX_BLOCK:
                        # a row longer than a block: read the file again with larger blocks, skipping the rows
                        # already given (the same rows in the same order, so the same reports)
                        block = min(block * 8, CSV_MAX_BLOCK)
                        it, skip = self._csv_reader(columns, numeric, text, block), rows
                        continue
                    raise CLIError(f"cannot read {self.path!r} as CSV: a row after row {rows:,} (counting from 0, "
                                   f"without the header) is longer than {CSV_MAX_BLOCK >> 20:,} MB, the largest "
                                   "block the CSV reader takes; a field that long is most likely an unclosed quote "
                                   "(check the quoting around that row) or data that does not belong in a CSV "
                                   "cell: fix or drop that row, or convert the file to Parquet") from None
                what, why = ("Parquet", one_line(exc)) if self.kind == "parquet" else ("CSV", self._explain(exc))
                raise CLIError(f"cannot read {self.path!r} as {what} (after row {rows}): {why}") from None
            if skip:
                drop = min(skip, batch.num_rows)
                batch, skip = batch.slice(drop), skip - drop
                if not batch.num_rows:
                    continue
            rows += batch.num_rows
            yield batch

    def batches(self, columns, numeric=(), text=()):
        """Yield ``(first_row, RecordBatch)`` over ``columns``, ``batch_size`` rows each (the last fewer).

        ``numeric`` columns of a CSV file are parsed as float64, ``text`` ones as strings (never inferred).
        """
        import pyarrow as pa

        start, pending, n_pending = 0, [], 0
        for batch in self._read(columns, numeric, text):
            if not pending and batch.num_rows == self.batch_size:  # as read (Parquet): no copy
                yield start, batch
                start += self.batch_size
                continue
            pending.append(batch)
            n_pending += batch.num_rows
            while n_pending >= self.batch_size:
                table = pa.Table.from_batches(pending)
                yield start, table.slice(0, self.batch_size).combine_chunks().to_batches()[0]
                start += self.batch_size
                pending = table.slice(self.batch_size).to_batches()
                n_pending -= self.batch_size
        if n_pending:
            table = pa.Table.from_batches(pending).combine_chunks()
            yield start, table.to_batches()[0]


def _straddles(exc):
    """Whether Arrow's CSV reader failed on a row longer than its block."""
    return "straddl" in str(exc)


def _is_numeric(arrow_type):
    import pyarrow.types as pat

    return pat.is_integer(arrow_type) or pat.is_floating(arrow_type)


def _values(array):
    """An Arrow numeric array as NumPy (missing entries as NaN)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count:
        array = pc.cast(array, pa.float64(), safe=False)
        return array.to_numpy(zero_copy_only=False)
    out = array.to_numpy(zero_copy_only=False)
    return out if out.dtype.kind in "iuf" else np.asarray(out, dtype=np.float64)


def _progress(enabled, total, desc):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        raise CLIError("--progress needs tqdm: pip install 'ldpnum[progress]'") from None
    return tqdm(total=total, unit="rows", unit_scale=True, desc=desc, file=sys.stderr, dynamic_ncols=True)


def _with_record(metadata, info):
    """Parquet schema metadata carrying the ldpnum record ``info``: one layout for every writer.

    The record goes exactly where ``DataFrame.to_parquet`` puts a frame's ``attrs``: pandas' ``attributes`` (read
    back by ``pyarrow``'s ``to_pandas``, hence by Dask) and ``PANDAS_ATTRS`` (read by ``pandas.read_parquet``):
    :func:`ldpnum._frame.parquet_metadata`.
    """
    from ._frame import parquet_metadata

    return parquet_metadata(info, metadata)


def privatize_file(source: PathLike, out: PathLike, mechanisms: "Mapping[Any, Mechanism]", *,
                   rng: "int | None" = None, strategy: str = "all-columns", nan_fill: "float | None" = None,
                   out_of_range: str = "clip", keep: "Sequence[str]" = (), batch_size: int = DEFAULT_BATCH_SIZE,
                   delimiter: "str | None" = None, progress: bool = False, log: "TextIO | None" = None,
                   key: "bytes | str | None" = None, shuffle_delta: "float | None" = None,
                   keys: Any = None, round: "int | None" = None,
                   before_drawing: "Callable[[Any, list], None] | None" = None) -> "dict[str, Any]":
    """Privatize columns of a CSV or Parquet file in batches and write the reports to Parquet.

    Parameters
    ----------
    source : str or path
        Input file: CSV/TSV (``.csv``, ``.tsv``, optionally compressed) or Parquet (``.parquet``, ``.pq``).
    out : str or path
        Output Parquet file (written to a temporary file beside it, renamed when complete).
    mechanisms : dict
        Column name -> mechanism. Each value of the column becomes one report of its mechanism. A tuple of
        column names -> a mechanism of several columns (:class:`~ldpnum.HDG`, :class:`~ldpnum.Marginals`,
        the vector mechanisms: :meth:`~ldpnum.Mechanism.source_columns` decides): each row's values of those
        columns become one report, in the report column ``"a,b,..."``, as ``df.ldp.privatize`` writes it.
    rng : None or int, optional
        None (default): secure randomness. An int seed: reproducible simulation; column ``j`` of
        ``mechanisms`` draws from ``child_rng(rng, j)`` and, with "one-column-per-row", the rows' columns
        from ``child_rng(rng, len(mechanisms))``, each stream shared by all batches. The reports are those of
        one call on the whole file, whatever ``batch_size``, and equal to ``df.ldp.privatize(mechanisms,
        rng=rng, strategy=strategy)`` on the same data.
    strategy : {"all-columns", "one-column-per-row"}, optional
        "all-columns" (default): every row reports every column, spending the sum of their ε.
        "one-column-per-row": each row reports one column, chosen uniformly by random words independent of
        its values, with that column's full ε; its other cells are missing (null). A row spends the largest
        ε, and each column is estimated from about ``1/m`` of the rows, which is more accurate than
        splitting ε across ``m`` columns.
    nan_fill : float, optional
        Public value imputed for missing or non-finite values (inside every mechanism's bounds). Without it,
        missing values raise, naming how many there are and the first row.
    out_of_range : {"clip", "raise"}, optional
        Finite values outside the bounds are clipped (default; counted in one warning per column) or raise.
        Missing and out-of-range values are looked for in every cell of a privatized column, reported or not.
    keep : sequence of str, optional
        Input columns copied unchanged into the output. They are **not** privatized: keep only public
        columns (a date, a region).
    batch_size : int, optional
        Rows per step (memory use is proportional to it).
    delimiter : str, optional
        Field delimiter of a CSV input (default ``","``, tab for ``.tsv``).
    progress : bool, optional
        Show a tqdm progress bar on stderr.
    log : file, optional
        Where warnings (clipped values) are written (default ``sys.stderr``).
    key : bytes or str, optional
        A collector's secret: the file's ldpnum record (specs, digests of the codes, budget) is signed with
        HMAC-SHA256 under it, so an edit of the metadata is detected by ``estimate`` with the same key.
    shuffle_delta : float, optional
        Declare the file's reports one shuffled batch with this central δ (recorded in its metadata):
        :func:`aggregate_file` then declares each column's aggregate shuffled
        (:meth:`ldpnum.Aggregate.shuffled`), so estimates show the central ε next to the local ε.
    keys : ClientKeys, optional
        The rows' keys, row for row (:func:`keys_for_rows` matches a key file to the rows' people): required
        when a column's mechanism is longitudinal (memoized), refused otherwise. Their count must equal the
        rows' (a CSV input is counted first), checked before anything is drawn; each batch takes the keys of
        its rows, so the reports do not depend on ``batch_size``.
    round : int, optional
        The round of a longitudinal collection (≥ 0), recorded in the memoized columns' specs
        (:meth:`ldpnum.longitudinal.Longitudinal.at_round`): aggregates of two rounds do not merge.
    before_drawing : callable, optional
        With memoized columns: called as ``before_drawing(plan, rounds)`` after a validation pass over the
        file and before the first word is drawn, with the collection's :class:`~ldpnum.collect.CollectionPlan`
        and its memoized columns' ``[(mechanism, fingerprints, round), ...]`` (one keyed fingerprint of each
        row's memoized value: :meth:`~ldpnum.collect.CollectionPlan.longitudinal_rounds`), e.g. a ledger's
        :meth:`~ldpnum.PrivacyLedger.check_longitudinal`; an exception it raises stops the run, nothing
        written. The rounds are returned as ``info["rounds"]`` to record once the file is written.

    Returns
    -------
    dict
        ``{"rows": n, "columns": [...], "specs": {column: Spec}, "epsilon_per_row": ε_total,
        "clipped": {column: count}, "one_shot_epsilon": ε of the columns not memoized (None if none),
        "rounds": the memoized columns' rounds (with ``before_drawing``) or None, "plan": the collection's
        CollectionPlan}`` (a ledger records ``info["plan"].ledger_charge(info["rounds"])``, then the rounds).

    Notes
    -----
    With "all-columns" each row reports every privatized column once, so each row's privacy loss is the sum
    of the columns' ε (sequential composition); with "one-column-per-row" it is the largest column ε. This
    ``epsilon_per_row`` and the strategy are recorded in the output's metadata.

    Values are validated batch by batch as they stream in. The output is written to a hidden file beside
    ``out`` and renamed only when every batch succeeded: on any error (a missing value in the last batch)
    no report is released and ``out`` is left as it was. A run stopped by SIGTERM or Ctrl-C removes its
    hidden file; one killed outright (SIGKILL) leaves it, and the next run writing beside it removes
    hidden files of processes that no longer run. The file's metadata records, per report column, the
    digest of its codes (:func:`ldpnum._frame.codes_digest`), written in a second streaming pass once all
    codes are known, so a column changed later is refused by every reader.

    Examples
    --------
    >>> import os, tempfile, numpy as np, pandas as pd, ldpnum as ldp
    >>> d = tempfile.mkdtemp()
    >>> pd.DataFrame({"x": np.linspace(0, 1, 1000)}).to_csv(os.path.join(d, "in.csv"), index=False)
    >>> info = privatize_file(os.path.join(d, "in.csv"), os.path.join(d, "out.parquet"),
    ...                       {"x": ldp.SquareWave(epsilon=1.0, bounds=(0, 1))}, rng=0)
    >>> info["rows"], info["epsilon_per_row"]
    (1000, 1.0)
    >>> pd.read_parquet(os.path.join(d, "out.parquet")).attrs["ldpnum"]["columns"][0]["spec"]["mechanism"]
    'square_wave'
    """
    import numpy as np

    from ._validation import check_choice
    from .collect import STRATEGIES, check_shuffle, plan_columns, privatize_batch
    from .longitudinal.keys import ClientKeys

    log = sys.stderr if log is None else log
    names = list(mechanisms)
    keep = list(keep or ())
    if not names:
        raise CLIError("nothing to privatize: give at least one --column")
    for c in [v for k in names for v in (k if isinstance(k, tuple) else (k,))] + keep:
        if not isinstance(c, str):
            raise TypeError(f"column names must be str; got {type(c).__name__} {c!r}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}; got {strategy!r}")
    # a mechanism of several columns reads the columns of its tuple key into one report column (the accessor's
    # rule: the mechanism decides which value columns a key names)
    try:
        plan = plan_columns(mechanisms, strategy, round=round)
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    check_file_keys(plan.mechanisms, keys=keys is not None, shuffled=shuffle_delta is not None)
    if keys is not None and not isinstance(keys, ClientKeys):
        raise TypeError(f"keys must be ClientKeys, row for row; got {type(keys).__name__}")
    mechanisms = plan.mechanisms
    sources = plan.sources
    columns = plan.labels
    value_columns = [v for c in columns for v in (sources[c] or [c])]
    for names in (keep, columns):  # a value column may feed several report columns (each spends its ε)
        dup = next((c for c in names if names.count(c) > 1), None)
        if dup is not None:
            raise CLIError(f"column {dup!r} is named twice")
    both = [c for c in keep if c in value_columns or c in mechanisms]
    if both:
        raise CLIError(f"column {both[0]!r} is both privatized and kept: keeping it would copy the raw values "
                       "next to their reports")
    check_choice(out_of_range, "out_of_range", ("clip", "raise"))
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise CLIError(f"--batch-size must be a positive integer; got {batch_size!r}")
    # Every column is validated by its mechanism's prepare_values, as by privatize and the .ldp accessor.
    options: dict[str, Any] = {"nan_policy": "raise", "fill_value": None, "out_of_range": out_of_range}
    if nan_fill is not None:
        options.update(nan_policy="impute", fill_value=float(nan_fill))
        for c, m in mechanisms.items():
            try:
                m.prepare_values(_empty_input(m, sources[c]), **_accepted(m, options))  # before a file is read
            except (TypeError, ValueError) as exc:
                raise CLIError(f"--nan-fill {nan_fill:g} cannot be imputed in column {c!r}: {one_line(exc)}; the "
                               "imputed value must be a public value inside the bounds") from None
    # One stream per column (and one for the rows' columns), each shared by all batches: words are consumed
    # in row order, so the reports do not depend on the batch size.
    streams = plan.streams(rng)

    out = str(out)
    if _file_kind(out) != "parquet":
        raise CLIError(f"the output must be a Parquet file (.parquet or .pq); got {out!r}")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise CLIError(f"--delimiter must be one character; got {delimiter!r}")
    src = _Source(source, batch_size, delimiter)
    if os.path.exists(out) and os.path.samefile(out, src.path):
        raise CLIError(f"the output {out!r} is the input file; write the reports to a new file")
    src.check_columns(value_columns + keep)
    labelled = [c for c in columns if sources[c] is None and _text_labels(mechanisms[c])]  # read as text
    numeric = [c for c in value_columns if c not in labelled]
    for c in numeric:
        t = src.schema.field(c).type
        if src.kind == "parquet" and not _is_numeric(t):  # CSV columns are parsed as numbers, row by row
            raise CLIError(f"column {c!r} of {src.path!r} holds {t} values, not numbers; ldpnum privatizes "
                           "numerical columns")
    if keys is not None:  # keys align with rows: the count is checked before anything is drawn
        n_rows = src.num_rows if src.num_rows is not None else \
            sum(b.num_rows for _, b in src.batches(value_columns[:1], numeric=value_columns[:1]))
        if len(keys) != n_rows:
            raise CLIError(f"the key file holds {len(keys):,} keys but {src.path!r} has {n_rows:,} rows: keys "
                           "without person ids are matched to the rows in order, one per row (write the keys with "
                           "their people's ids, `ldpnum keys generate --people`, and pass --people-column)")

    if shuffle_delta is not None:
        try:
            shuffle_delta = check_shuffle(True, shuffle_delta)
        except (TypeError, ValueError) as exc:
            raise CLIError(f"--shuffle-delta: {one_line(exc)}") from None
        if keep:
            raise CLIError(f"a shuffled collection keeps no input column beside its reports (keep={list(keep)!r}): "
                           "a kept column can link each report to its sender")
    rounds = None
    if before_drawing is not None and plan.memoized:
        # a validation pass: every batch checked and each row's memoized value fingerprinted (keyed), so that a
        # ledger refuses the collection before anything is drawn
        rounds = _longitudinal_rounds(plan, src, value_columns, keys, options, sources)
        before_drawing(plan, rounds)
    schema, info = _report_schema(src, plan, keep, shuffle_delta)
    specs = {c: m.spec for c, m in mechanisms.items()}
    out_dir = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(out_dir):
        raise CLIError(f"cannot write {out!r}: no such directory {out_dir!r}")

    import uuid

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ._frame import add_digests, codes_digest, sign_info

    # A hidden file beside OUT, renamed over it when complete: OUT is never left half-written.
    _remove_stale_temporaries(out)
    tmp = os.path.join(out_dir, f".{os.path.basename(out)}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    digests = {c: codes_digest(np.empty(0, dtype=np.uint8)) for c in columns}
    writer = None
    temporaries = [tmp]
    bar = _progress(progress, src.num_rows, "privatize")
    clipped = {c: [0, -1] for c in columns}
    rows = 0
    wanted = [c for c in src.columns if c in value_columns or c in keep]
    try:
        writer = pq.ParquetWriter(tmp, schema)
        batches = src.batches(wanted, numeric=numeric, text=labelled)
        for start, batch in batches:
            n = batch.num_rows
            # every column of the batch is validated by its mechanism before the batch's first word is drawn
            values = [_prepare_batch(mechanisms[c], c, batch, start, batches, options, clipped[c], src.kind,
                                     sources[c]) for c in columns]
            # each report as its column code (a vector mechanism packs a row of codes into one), as the pandas
            # accessor writes it; the streams are shared by all batches
            reports = privatize_batch(plan, values, streams, n,
                                      keys=None if keys is None else keys[start:start + n])
            arrays = {c: pa.array(reports.codes[c], type=schema.field(c).type, mask=reports.missing[c])
                      for c in columns}
            for c in columns:
                digests[c] = add_digests(digests[c], reports.digests[c])
            for c in keep:
                arrays[c] = batch.column(c)
            writer.write_batch(pa.record_batch([arrays[f.name] for f in schema], schema=schema))
            rows += n
            if bar is not None:
                bar.update(n)
        writer.close()
        writer = None
        # The record with the digests of the whole columns, known only now: a second streaming pass copies
        # the row groups under the final schema (the schema's metadata is written when a file is opened).
        info = plan.record(digests=digests, shuffle_delta=shuffle_delta)
        if key is not None:
            info = sign_info(info, key)
        final = schema.with_metadata(_with_record(schema.metadata, info))
        done = tmp + ".final"
        temporaries.append(done)
        written = pq.ParquetFile(tmp)
        writer = pq.ParquetWriter(done, final)
        for g in range(written.num_row_groups):
            writer.write_table(written.read_row_group(g).cast(final))
        writer.close()
        writer = None
        os.replace(done, out)
        os.unlink(tmp)
    except BaseException:
        if writer is not None:
            try:
                writer.close()
            except Exception:  # pragma: no cover - the original error matters
                pass
        for t in temporaries:
            if os.path.exists(t):
                os.unlink(t)
        raise
    finally:
        if bar is not None:
            bar.close()
    for c, (count, first) in clipped.items():
        if count:
            where = "their bounds" if sources[c] else "the bounds ({:g}, {:g})".format(*mechanisms[c].bounds)
            print(f"ldpnum: warning: column {c!r}: {count} value(s) outside {where} were clipped to them, first "
                  f"at row {first}", file=log)
    return {"rows": rows, "columns": columns, "specs": specs, "strategy": strategy,
            "epsilon_per_row": info["epsilon_per_row"], "clipped": {c: v[0] for c, v in clipped.items()},
            "kept": keep, "reports": {c: int(d.split(":")[0]) for c, d in digests.items()},
            "one_shot_epsilon": plan.one_shot_epsilon, "rounds": rounds, "plan": plan}


def _cli_names():
    """The command line's names in :func:`ldpnum.collect.check_memoized`'s refusals (raised as :class:`CLIError`)."""
    from .collect import ArgumentNames

    return ArgumentNames(
        keys_unused="--keys are each person's keys for longitudinal (memoized) mechanisms such as LGRR; none of the "
                    "columns is memoized",
        keys_missing="column {column!r} is longitudinal ({mechanism}): its permanent answers come from each person's "
                     "key; pass --keys FILE (`ldpnum keys generate`)",
        shuffled="--shuffled", ledger="--ledger", split="--strategy one-column-per-row", all_columns="all-columns",
        round_unused="--round numbers the rounds of a longitudinal collection; none of the columns is longitudinal (a "
                     "memoized mechanism such as LGRR, given with --spec)",
        queries={
            "no_marginals": "{name} reports do not hold marginals of categorical columns; --what marginals and "
                            "--marginal need a marginals report column",
            "marginals_only": "{name} reports estimate marginals only: use --what marginals (optionally --marginal "
                              "C1,C2)",
            "no_plot": "--plot does not apply to {name} reports",
            "marginal_columns": "--marginal {value!r}: give distinct columns of the report column ({columns}); "
                                "{problem}",
            "ranges_needed": "{name} reports answer range queries over their columns: pass --range COL:LO:HI ...",
            "ranges_only": "{name} reports answer range queries only (--what range with --range COL:LO:HI ...)",
            "numerical": "{name} reports are numerical; --what frequencies needs a frequency oracle's reports (grr, "
                         "oue, olh, ...)",
            "categorical": "{name} reports are categorical: use --what frequencies",
            "range_of_columns": "{name} reports answer --range LO HI, not COL:LO:HI",
            "range_of_values": "{name} reports answer --range COL:LO:HI ..., not LO HI",
            "no_distribution": "{name} reports estimate {estimates} only; distributions, quantiles, ranges and plots "
                               "need square_wave, general_wave, piecewise, hybrid or hierarchical_histogram",
            "n_bins": "--n-bins does not apply to {name}: its bins are {bins}",
            "no_mle": "--method mle: {name} reports have no maximum-likelihood estimate of {what} (their likelihood "
                      "is not implemented); it is offered for {what} of {offered} reports",
            "mle_queries": "--method mle gives the maximum-likelihood mean or frequencies (--what mean, "
                           "frequencies); it does not apply to --what {what}",
            "range_interval": "--range with --bootstrap: {problem}",
            "mle_postprocess": "--method mle takes no --postprocess (its frequencies are already on the simplex); "
                               "got --postprocess {value}",
            "no_candidates": "--candidates apply to reports decoded against a dictionary of items (rappor, "
                             "count_mean_sketch); {name} reports estimate their own categories",
            "needs_candidates": "{name} frequencies {why}: give --candidates ITEM,ITEM,... or @FILE (one item "
                                "per line)",
            "candidates_postprocess": "{name} frequencies are decoded against the candidates and take no "
                                      "--postprocess; got --postprocess {value}",
        },
        error=CLIError)


def check_file_keys(mechanisms: "Mapping[Any, Mechanism]", *, keys: bool, shuffled: bool, ledger: bool = False,
                    split: bool = False, round: "int | None" = None) -> None:
    """:func:`ldpnum.collect.check_memoized` in the command line's words (``--keys``, ``--shuffled``, ``--round``).

    Raises :class:`CLIError`.
    """
    from .collect import check_memoized

    check_memoized(mechanisms, keys=keys, shuffled=shuffled, ledger=ledger, split=split, round=round,
                   names=_cli_names())


def check_file_shuffle(shuffled: bool, shuffle_delta: "float | None", keep: Sequence[str]) -> "float | None":
    """The central δ of ``privatize --shuffled [--shuffle-delta DELTA]`` (default 1e-6), or None when not shuffled.

    Refused: a δ without ``--shuffled``, a δ outside (0, 1), and ``--keep`` beside a shuffled collection (a kept
    column can identify each row, as the index does for :func:`ldpnum.collect.check_shuffle`). Raises
    :class:`CLIError`.
    """
    if shuffle_delta is not None and not shuffled:
        raise CLIError("--shuffle-delta goes with --shuffled")
    if shuffled and keep:
        raise CLIError(f"--shuffled declares that the reports reach the analyst with nothing linking them to their "
                       f"senders, but --keep {keep[0]} copies an input column beside them, which can identify "
                       "each row: write the reports without --keep (record the people with --ledger "
                       "--people-column, which never writes ids into the reports)")
    if not shuffled:
        return None
    from .accounting import check_shuffle_delta

    try:
        return check_shuffle_delta(1e-6 if shuffle_delta is None else shuffle_delta)
    except ValueError as exc:
        raise CLIError(f"--shuffle-delta: {one_line(exc)}") from None


def check_estimate_request(mech: "Mechanism", whats: "list | None", *, marginal: "str | None", query: Any,
                           plot: "str | None", n_bins: "int | None", bootstrap: "int | None" = None,
                           level: float = 0.95, rng: "int | None" = None, estimate_method: str = "unbiased",
                           postprocess: str = "none", candidates: Any = None) -> list:
    """:func:`ldpnum.collect.check_queries` in the command line's words (``--what``, ``--marginal``, ``--range``).

    Also checks that the ``--plot`` file can be written, and ``--bootstrap`` (a replicate count that supports
    ``--level``; ``--rng`` only with it). ``estimate_method`` is ``--method unbiased|mle`` (the MLE only where
    the mechanism offers it, for ``--what mean`` and ``frequencies``); ``candidates`` (``--candidates``) only for
    reports decoded against a dictionary of items (RAPPOR, count-mean sketches). Raises :class:`CLIError` or
    ValueError; returns what to estimate.
    """
    from .collect import check_queries

    if rng is not None and bootstrap is None:
        raise CLIError("--rng seeds the --bootstrap resampling; give --bootstrap B too")
    if bootstrap is not None:
        from ._results import check_replicates_support
        from .estimation.bootstrap import check_replicates

        check_replicates(bootstrap, 1, name="--bootstrap")
        check_replicates_support(level, bootstrap, name="--level")
    whats = check_queries(mech, whats, marginals=marginal, query=query, distribution=bool(plot), n_bins=n_bins,
                          estimate_method=estimate_method, postprocess=postprocess, bootstrap=bootstrap,
                          candidates=candidates, names=_cli_names())
    if plot:
        check_plot_path(plot)
    return whats


def _longitudinal_rounds(plan, src, value_columns, keys, options, sources):
    """The memoized columns' ``[(mechanism, fingerprints of every row, round)]``.

    From one validation pass over ``src`` (the errors of the drawing pass, raised before anything is drawn).
    """
    import numpy as np

    parts = []  # per batch: the memoized columns' (mechanism, fingerprints, round)
    labelled = [c.label for c in plan.columns if c.sources is None and _text_labels(c.mechanism)]
    batches = src.batches(value_columns, numeric=[c for c in value_columns if c not in labelled], text=labelled)
    for start, batch in batches:
        # (clipped values are counted, and warned about once, by the drawing pass)
        values = [_prepare_batch(c.mechanism, c.label, batch, start, batches, options, [0, -1], src.kind,
                                 sources[c.label]) for c in plan.columns]
        parts.append(plan.longitudinal_rounds(values, keys[start:start + batch.num_rows]))
    memoized = [c.mechanism for c in plan.columns if c.mechanism.memoized]
    return [(m, np.concatenate([p[j][1] for p in parts]) if parts else np.empty(0, dtype=np.uint64), m.round)
            for j, m in enumerate(memoized)]


def _text_labels(mech):
    """Whether ``mech`` takes text labels: declared categories that are all str (read as text, not numbers)."""
    categories = getattr(mech, "categories", None) if getattr(mech, "takes_categories", False) else None
    return categories is not None and all(isinstance(c, str) for c in categories)


def _batch_input(batch, column, sources, categorical=False, labels=False):
    """A batch's values for a mechanism: the column's numbers, or a DataFrame of its value columns.

    The mechanism selects and orders them, as for ``df.ldp.privatize``. For a categorical mechanism, numbers that
    are all whole (a CSV column is parsed as float64) become integer codes, missing ones kept missing. With
    ``labels`` (:func:`_text_labels`), the column's text as pandas gives it (a Parquet dictionary as a category
    column), for the mechanism to match to its declared categories.
    """
    import pandas as pd

    if labels:
        return batch.column(column).to_pandas()
    if sources is None:
        values = _values(batch.column(column))
        return _category_codes(values) if categorical else values
    return pd.DataFrame({c: _values(batch.column(c)) for c in sources}, copy=False)


def _accepted(mech, options):
    """``options`` without ``out_of_range`` for a mechanism whose values have no bounds to clip to.

    Such as categories: a category outside the domain is an error.
    """
    import inspect

    params = inspect.signature(mech.prepare_values).parameters
    if "out_of_range" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return options
    return {k: v for k, v in options.items() if k != "out_of_range"}


def _empty_input(mech, sources):
    """No rows of a report column's input, as :func:`_batch_input` gives them to ``mech``."""
    from .collect import empty_values

    if _text_labels(mech):
        import numpy as np

        return np.empty(0, dtype=object)
    x = empty_values(sources)
    return _category_codes(x) if sources is None and getattr(mech, "categorical", False) else x


def _category_codes(values):
    """Float numbers as nullable integer category codes when every finite one is a whole number of at most 2**53.

    The numbers are a CSV column, or integers with missing cells; other values are left for the mechanism to refuse.
    """
    import numpy as np
    import pandas as pd

    if values.dtype.kind != "f":
        return values
    finite = np.isfinite(values)
    whole = values[finite]
    if not np.all((whole == np.round(whole)) & (np.abs(whole) <= 2.0**53)):
        return values
    return pd.arrays.IntegerArray(np.where(finite, values, 0).astype(np.int64), ~finite)


def _prepare_batch(mech, column, batch, start, batches, options, clipped, kind, sources=None):
    """One batch of a column, validated by its mechanism, with errors and clipping counted over the file.

    ``clipped`` is ``[count, first row]`` of the clipped values so far (updated; one warning is printed at
    the end). Errors name rows of the whole file: ``start`` is the batch's first row, and for missing
    values the rest of ``batches`` is read to give their total count. ``sources``: the value columns of a
    report column of several (None for one).
    """
    from .exceptions import ClippingWarning, InvalidValuesError

    values = _batch_input(batch, column, sources, getattr(mech, "categorical", False), _text_labels(mech))
    n = len(values)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ClippingWarning)
            prepared = mech.prepare_values(values, name=f"column {column!r}", **_accepted(mech, options))
    except InvalidValuesError as exc:
        first = start + exc.first_index
        if exc.reason == "missing":
            count = exc.count + _count_missing(mech, batches, column, sources)
            raise CLIError(f"column {column!r} has {count} missing or non-finite value(s), first at row {first} "
                           f"(0-based{', header excluded' if kind == 'csv' else ''}); pass --nan-fill VALUE to "
                           "impute a public value, or remove them first") from None
        if exc.reason == "out_of_range" and sources is None:
            low, high = mech.bounds
            raise CLIError(f"column {column!r} has {exc.count} value(s) outside the bounds ({low:g}, {high:g}) "
                           f"in rows {start}..{start + n - 1}, first at row {first}; widen --bounds or use "
                           "--out-of-range clip") from None
        raise CLIError(f"column {column!r}, rows {start}..{start + n - 1}: {one_line(exc)}") from None
    except (TypeError, ValueError) as exc:
        raise CLIError(f"column {column!r}, rows {start}..{start + n - 1}: {one_line(exc)}") from None
    for w in caught:
        if issubclass(w.category, ClippingWarning):
            if clipped[1] < 0:
                clipped[1] = start + w.message.first_index
            clipped[0] += w.message.count
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return prepared


def _count_missing(mech, batches, column, sources=None):
    """Missing or non-finite values of ``column`` in the rest of ``batches`` (to report the total)."""
    from .exceptions import InvalidValuesError

    total = 0
    for _, batch in batches:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mech.prepare_values(_batch_input(batch, column, sources, getattr(mech, "categorical", False),
                                                 _text_labels(mech)))
        except InvalidValuesError as exc:
            total += exc.count if exc.reason == "missing" else 0
    return total


def _report_schema(src, plan, keep, shuffle_delta=None):
    """Arrow schema of the output: report codes + kept columns, with pandas' and ldpnum's metadata.

    With "one-column-per-row" the report columns are nullable and recorded as pandas' nullable unsigned
    dtypes (``UInt16``...), so ``read_parquet`` gives the same columns as ``df.ldp.privatize``. A report
    column of several value columns (``sources[name]``) takes the place of the first of them and records
    them, as the accessor does.
    """
    import pandas as pd
    import pyarrow as pa

    from .longitudinal.keys import ClientKeys

    mechanisms, sources, strategy = plan.mechanisms, plan.sources, plan.strategy
    anchored = {}  # input column -> the report columns placed there: its own, and those it is the first source of
    for name in mechanisms:
        anchored.setdefault(sources[name][0] if sources.get(name) else name, []).append(name)
    fields, empty = [], {}
    for col in src.columns:  # input order
        for name in anchored.get(col, ()):
            # The dtype the mechanism's reports come in: the smallest unsigned type for a categorical alphabet,
            # uint64 for structured codes (a hierarchical histogram with hashed levels).
            mech = mechanisms[name]
            dt = mech.privatize(_empty_input(mech, sources.get(name)), rng=0,
                                **({"keys": ClientKeys.generate(0, rng=0)} if mech.memoized else {})).codes.dtype
            split = strategy == "one-column-per-row"
            fields.append(pa.field(name, pa.from_numpy_dtype(dt), nullable=split))
            empty[name] = pd.Series([], dtype=f"UInt{8 * dt.itemsize}" if split else dt)  # pandas' nullable
        if col in keep:
            field = src.schema.field(col)
            fields.append(field.with_metadata(None))
            empty[col] = pa.array([], type=field.type).to_pandas()
    info = plan.record(shuffle_delta=shuffle_delta)
    pandas_meta = pa.Schema.from_pandas(pd.DataFrame(empty), preserve_index=False).metadata or {}
    return pa.schema(fields, metadata=_with_record(pandas_meta, info)), info


def _record_metadata(pf):
    """The Parquet metadata that carries a file's ldpnum record: the Arrow schema's, else the file's key-value pairs.

    pyarrow, pandas and Dask write the record in the Arrow schema's metadata; writers that store the Arrow schema
    without it (Polars' own ``write_parquet(metadata=...)`` before it took ``arrow_schema=``) keep it only in the
    file's key-value metadata, in the same layout (``PANDAS_ATTRS``).
    """
    schema_meta = pf.schema_arrow.metadata or {}
    if b"PANDAS_ATTRS" in schema_meta or b"pandas" in schema_meta:
        return schema_meta
    return pf.metadata.metadata or schema_meta


def _file_spec(pf, path, column, explicit):
    """The spec of ``column``: from the file's metadata, checked against an explicit one when given."""
    from ._frame import specs_from_parquet_metadata
    from .spec import Spec, check_spec

    try:
        info = specs_from_parquet_metadata(_record_metadata(pf))
    except ValueError as exc:
        raise CLIError(f"{path!r} carries malformed ldpnum metadata: {one_line(exc)}") from None
    recorded = None
    if info is not None:
        entry = next((c for c in info["columns"] if c.get("column") == column), None)
        if entry is not None:
            try:
                recorded = Spec.from_dict(entry["spec"])
            except (ValueError, TypeError, KeyError) as exc:
                raise CLIError(f"{path!r} carries a malformed spec for column {column!r}: {exc}") from None
    if recorded is None:
        if explicit is not None:
            return explicit
        if info is None:
            raise CLIError(f"{path!r} carries no ldpnum spec: it was not written by `ldpnum privatize` or from a "
                           "report DataFrame; pass --spec JSON (or --mechanism, --epsilon and --bounds) to read "
                           f"column {column!r} as reports")
        names = ", ".join(repr(c["column"]) for c in info["columns"])
        raise CLIError(f"column {column!r} of {path!r} is not a report column (report columns: {names}); pass "
                       "--spec JSON to read it as reports")
    if explicit is not None:
        check_spec(explicit, recorded, f"reports in column {column!r} of {path!r}")
    return recorded


def report_column(path: str, column: str, spec: "Spec | None" = None) -> "tuple[Any, Mechanism]":
    """Open Parquet file ``path`` and rebuild the mechanism of its report column ``column``.

    Built from the file's metadata, reading no data.

    Parameters
    ----------
    path : str
        A Parquet file of reports.
    column : str
        The report column.
    spec : Spec, optional
        The expected spec (see :func:`aggregate_file`).

    Returns
    -------
    (pyarrow.parquet.ParquetFile, Mechanism)

    Raises
    ------
    CLIError
        For a missing file or column, a file without a spec for ``column``, or a column of non-integer type.
    """
    from .mechanisms import from_spec

    pf = _open_parquet(path)
    names = pf.schema_arrow.names
    if column not in names:
        raise CLIError(f"{path!r} has no column {column!r} (its columns: {', '.join(map(repr, names))})")
    spec = _file_spec(pf, path, column, spec)
    try:
        mech = from_spec(spec)
    except ValueError as exc:
        raise CLIError(f"cannot rebuild the mechanism of column {column!r}: {one_line(exc)}") from None
    ftype = pf.schema_arrow.field(column).type
    if not _is_numeric(ftype):
        raise CLIError(f"column {column!r} of {path!r} holds {ftype} values, not integer report codes")
    return pf, mech


def aggregate_file(path: PathLike, column: str, *, spec: "Spec | None" = None,
                   batch_size: int = DEFAULT_BATCH_SIZE, progress: bool = False,
                   key: "bytes | str | None" = None) -> "tuple[Aggregate, int]":
    """Stream a Parquet file's report column into one :class:`~ldpnum.Aggregate`, batch by batch.

    Parameters
    ----------
    path : str or path
        A Parquet file of reports (written by ``ldpnum privatize`` or ``DataFrame.to_parquet`` of a report
        frame).
    column : str
        The report column.
    spec : Spec, optional
        The expected spec. Required when the file records none for ``column``; otherwise it must equal the
        recorded one (:class:`~ldpnum.SpecMismatchError`).
    batch_size : int, optional
        Rows read per step: memory use is proportional to it, never to the file.
    progress : bool, optional
        Show a tqdm progress bar on stderr.
    key : bytes or str, optional
        The collector's MAC key: the file's ldpnum record must be signed with it (``privatize_file(...,
        key=)``).

    Returns
    -------
    aggregate : Aggregate
        The merged counts; exactly those of ``mechanism.aggregate`` on all the reports at once.
    n_missing : int
        Missing cells skipped (rows that did not report this column, e.g. under "one-column-per-row").

    Examples
    --------
    >>> import os, tempfile, numpy as np, pandas as pd, ldpnum as ldp
    >>> d = tempfile.mkdtemp()
    >>> pd.DataFrame({"x": np.linspace(0, 1, 1000)}).to_parquet(os.path.join(d, "in.parquet"))
    >>> m = ldp.Duchi(epsilon=1.0, bounds=(0, 1))
    >>> _ = privatize_file(os.path.join(d, "in.parquet"), os.path.join(d, "r.parquet"), {"x": m}, rng=0)
    >>> agg, n_missing = aggregate_file(os.path.join(d, "r.parquet"), "x", batch_size=100)
    >>> agg.n_reports, n_missing
    (1000, 0)
    """
    require_pyarrow()
    path = str(path)
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise CLIError(f"--batch-size must be a positive integer; got {batch_size!r}")
    if os.path.isdir(path):  # a dataset of part files (Dask's to_parquet): each part checked on its own
        from ._frame import check_parts

        files = parquet_parts(path)
        parts = [_aggregate_part(f, column, spec, batch_size, progress, key) for f in files]
        try:  # one collection's parts, none twice
            check_parts([(os.path.basename(f), cid, digest) for f, (_, _, cid, digest) in zip(files, parts)],
                        f"the part files of {path!r}")
        except ValueError as exc:
            raise CLIError(one_line(exc)) from None
        from .aggregate import Aggregate

        return Aggregate.merge(a for a, *_ in parts), sum(m for _, m, *_ in parts)
    return _aggregate_part(path, column, spec, batch_size, progress, key)[:2]


def _aggregate_part(path, column, spec, batch_size, progress, key):
    """:func:`aggregate_file` of one file.

    Returns ``(aggregate, n_missing, collection id or None, digest of the column's codes)``.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pat

    from ._frame import add_digests, codes_digest, specs_from_parquet_metadata, verify_info
    from .collect import declare_shuffled

    pf, mech = report_column(path, column, spec)
    info = specs_from_parquet_metadata(_record_metadata(pf))
    if key is not None:
        if info is None:
            raise CLIError(f"{path!r} carries no ldpnum record to check the MAC of")
        try:
            verify_info(info, key, f"the ldpnum record of {path!r}")
        except ValueError as exc:
            raise CLIError(one_line(exc)) from None
    entry = next((c for c in (info or {}).get("columns", []) if c.get("column") == column), {})
    recorded = entry.get("codes")
    digest = codes_digest(np.empty(0, dtype=np.uint8))
    spec = mech.spec
    total = mech.empty_aggregate()
    n_missing = 0
    bar = _progress(progress, pf.metadata.num_rows, "estimate")
    start = 0
    try:
        it = pf.iter_batches(batch_size=batch_size, columns=[column])
        while True:
            try:
                batch = next(it)
            except StopIteration:
                break
            except Exception as exc:
                raise CLIError(f"cannot read {path!r} (after row {start}): {one_line(exc)}") from None
            arr = batch.column(0)
            n = len(arr)
            if pat.is_floating(arr.type):
                arr = pc.drop_null(pc.if_else(pc.is_nan(arr), None, arr))
                try:
                    arr = pc.cast(arr, pa.int64())  # safe: fractional codes raise
                except pa.ArrowInvalid as exc:
                    raise CLIError(f"column {column!r}, rows {start}..{start + n - 1}: not integer report codes: "
                                   f"{one_line(exc)}") from None
            elif arr.null_count:
                arr = pc.drop_null(arr)
            n_missing += n - len(arr)
            codes = arr.to_numpy(zero_copy_only=False)
            digest = add_digests(digest, codes_digest(np.asarray(codes)))
            try:  # column codes back to the mechanism's reports (a vector's row of codes is packed in one)
                total = total + mech.aggregate(mech.reports_from_column(np.asarray(codes)))
            except (TypeError, ValueError) as exc:
                raise CLIError(f"column {column!r}, rows {start}..{start + n - 1}: {one_line(exc)}") from None
            start += n
            if bar is not None:
                bar.update(n)
    finally:
        if bar is not None:
            bar.close()
    if recorded is not None and digest != recorded:
        raise CLIError(f"column {column!r} of {path!r} does not hold the codes it was privatized as (digest "
                       f"{digest}, recorded {recorded}): the file was changed after privatizing; no estimate "
                       "is made from it")
    try:  # the rows' messages were shuffled, as in the ledger's entry
        total = declare_shuffled(total, (info or {}).get("shuffle_delta"), (info or {}).get("epsilon_per_row"))
    except (TypeError, ValueError) as exc:
        raise CLIError(f"{path!r} carries a malformed shuffle declaration: {one_line(exc)}") from None
    return total, n_missing, (info or {}).get("collection"), digest


def check_plot_path(path: str) -> None:
    """Fail before any work if a plot cannot be written to ``path``.

    That is: no matplotlib, no such directory, or a format (taken from the extension) matplotlib does not write.

    Raises
    ------
    CLIError
        Naming what is missing, or the formats that can be written.
    """
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise CLIError("--plot needs matplotlib: pip install 'ldpnum[plot]'")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CLIError(f"cannot write the plot to {path!r}: no such directory {directory!r}")
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if ext not in formats:
        raise CLIError(f"cannot write the plot to {path!r}: the format is taken from the extension; use one of "
                       f"{', '.join('.' + f for f in sorted(formats))}")


def write_plot(dist: Any, path: str, title: str) -> None:
    """Draw ``dist`` with ``title`` into the image file ``path``.

    Uses its ``plot(ax=...)`` (a distribution estimate), on matplotlib's Agg canvas without touching pyplot's global
    state.

    Raises
    ------
    CLIError
        When the file cannot be written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4), layout="constrained")
    FigureCanvasAgg(fig)  # the Agg canvas, without touching pyplot's global state
    ax = fig.add_subplot()
    dist.plot(ax=ax)
    ax.set_title(title)
    ax.legend()
    try:
        fig.savefig(path, dpi=120)
    except (OSError, ValueError) as exc:
        raise CLIError(f"cannot write the plot to {path!r}: {one_line(exc)}") from None


def _remove_stale_temporaries(out):
    """Remove hidden files a killed ``privatize`` (SIGKILL, power loss) left beside ``out``.

    Those whose process no longer runs (the pid is part of the name).
    """
    import glob

    pattern = os.path.join(os.path.dirname(os.path.abspath(out)), f".{glob.escape(os.path.basename(out))}.*.tmp*")
    for path in glob.glob(pattern):
        parts = os.path.basename(path)[len(os.path.basename(out)) + 2:].split(".")
        if not parts or not parts[0].isdigit():
            continue
        pid = int(parts[0])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            try:
                os.unlink(path)
            except OSError:  # pragma: no cover - removed by another run meanwhile
                pass
        except PermissionError:  # pragma: no cover - another user's live process
            pass


def write_atomic(path: str, text: str) -> None:
    """Replace the text file ``path`` with ``text`` in one step (written beside it, then renamed over it).

    Raises
    ------
    CLIError
        When the file cannot be written.
    """
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise CLIError(f"cannot write {path!r}: {exc.strerror}") from None


def read_key(path: "str | None") -> "bytes | None":
    """The collector's MAC key from a file (its bytes, a trailing newline removed).

    Parameters
    ----------
    path : str or None
        The key file (``--mac-key-file``); None: no key.

    Returns
    -------
    bytes or None

    Raises
    ------
    CLIError
        When the file cannot be read or holds fewer than 16 bytes.
    """
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            key = f.read().rstrip(b"\r\n")
    except OSError as exc:
        raise CLIError(f"cannot read --mac-key-file {path!r}: {exc.strerror}") from None
    if len(key) < 16:
        raise CLIError(f"--mac-key-file {path!r} holds {len(key)} bytes; a collector key needs at least 16")
    return key


def read_spec_argument(text: str, option: str) -> "Spec":
    """A spec given on the command line: its JSON (``Spec.to_dict()``), or ``@FILE`` holding it.

    Parameters
    ----------
    text : str
        The argument.
    option : str
        The option it was given to (``"--spec"``), named in the messages.

    Returns
    -------
    Spec

    Raises
    ------
    CLIError
        When the file cannot be read or the text is not a spec's JSON.
    """
    from .spec import Spec

    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise CLIError(f"cannot read {option} file {text[1:]!r}: {exc.strerror}") from None
    try:
        return Spec.from_json(text)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"{option} is not an ldpnum spec (JSON of Spec.to_dict()): {one_line(exc)}") from None


def expected_spec_file(path: str, column: str) -> "Spec":
    """The spec of ``column`` in a file written by :func:`write_spec_file` (or one Spec's JSON).

    Parameters
    ----------
    path : str
        The ``--expect-spec`` file.
    column : str
        The report column.

    Returns
    -------
    Spec

    Raises
    ------
    CLIError
        When the file cannot be read, is not JSON, states no spec for ``column`` or holds no valid spec.
    """
    from .spec import Spec

    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise CLIError(f"cannot read --expect-spec file {path!r}: {exc.strerror}") from None
    except ValueError as exc:
        raise CLIError(f"--expect-spec file {path!r} is not JSON: {one_line(exc)}") from None
    if isinstance(doc, dict) and "columns" in doc and isinstance(doc["columns"], dict):
        if column not in doc["columns"]:
            raise CLIError(f"--expect-spec file {path!r} states no spec for column {column!r} (it has "
                           f"{', '.join(map(repr, doc['columns']))})")
        doc = doc["columns"][column]
    try:
        return Spec.from_dict(doc)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"--expect-spec file {path!r} is not an ldpnum spec: {one_line(exc)}") from None


def expected_shuffle_file(path: str) -> "tuple[bool, float | None]":
    """The shuffle declaration an ``--expect-spec`` file states.

    Parameters
    ----------
    path : str
        A file already read by :func:`expected_spec_file`.

    Returns
    -------
    stated : bool
        Whether the file states the collection's shuffle declaration (files written by
        :func:`write_spec_file` do; a lone spec's JSON does not).
    delta : float or None
        The central δ of a collection deployed shuffled (None: not shuffled).
    """
    with open(path, encoding="utf-8") as f:  # read once already by expected_spec_file: no error here
        doc = json.load(f)
    if not (isinstance(doc, dict) and "shuffle_delta" in doc):
        return False, None
    delta = doc["shuffle_delta"]
    if delta is not None:
        from .accounting import check_shuffle_delta

        try:
            delta = check_shuffle_delta(delta)
        except (TypeError, ValueError) as exc:
            raise CLIError(f"--expect-spec file {path!r}: {one_line(exc)}") from None
    return True, delta


def check_shuffle_declaration(path: str, agg: "Aggregate", expect_spec: "str | None") -> "float | None":
    """Compare the shuffle declaration of the reports in ``path`` with the one the collection was deployed with.

    The reports' declaration is ``agg.shuffle``, read from the file's record; the deployed one is stated by the
    ``--expect-spec`` file.

    Parameters
    ----------
    path : str
        The report file (named in the message).
    agg : Aggregate
        Its column's aggregate, declared shuffled or not as the file's record says.
    expect_spec : str or None
        The ``--expect-spec`` file (:func:`write_spec_file` records the declaration; a lone spec's JSON
        states none).

    Returns
    -------
    float or None
        The central δ of a declaration that was read from the file and not checked (no deployed declaration
        stated); None when there is none, or when it was checked.

    Raises
    ------
    CLIError
        When the declarations differ: the file's record was changed after privatizing.
    """
    stated, expected = (False, None) if expect_spec is None else expected_shuffle_file(expect_spec)
    found = None if agg.shuffle is None else agg.shuffle.delta
    if not stated:
        return found
    if found != expected:
        what = "declares no shuffle" if found is None else \
            f"declares its reports shuffled (central delta {found:g})"
        deployed = "not shuffled" if expected is None else f"shuffled with central delta {expected:g}"
        raise CLIError(f"{path!r} {what}, but the collection was deployed {deployed} (--expect-spec "
                       f"{expect_spec}): the file's record was changed after privatizing; no estimate "
                       "is made from it")
    return None


def write_spec_file(path: PathLike, specs: "Mapping[Any, Spec]",
                    shuffle_delta: "float | None" = None) -> None:
    """Write the specs a collection was deployed with, for ``estimate --expect-spec``.

    The file holds ``{"columns": {column: Spec.to_dict()}, "shuffle_delta": δ or null}``; the collector keeps it
    apart from the reports.

    ``shuffle_delta`` records the collection's shuffle declaration (``privatize --shuffled``; null for reports
    that were not shuffled), so that ``estimate --expect-spec`` refuses a file whose declaration was added,
    removed or changed afterwards: a declaration is a claim about how the reports travelled, which the reports
    themselves cannot show, and it lowers the ε an estimate prints.

    Parameters
    ----------
    path : str or path
        The JSON file written (replaced if it exists).
    specs : mapping
        Report column name -> :class:`~ldpnum.Spec` (``privatize_file(...)["specs"]``).
    shuffle_delta : float, optional
        The central δ of a collection declared shuffled; None (default) for one that was not.

    Examples
    --------
    >>> import json, os, tempfile, ldpnum as ldp
    >>> path = os.path.join(tempfile.mkdtemp(), "deployed.json")
    >>> write_spec_file(path, {"x": ldp.Duchi(epsilon=1.0, bounds=(0, 1)).spec})
    >>> doc = json.load(open(path))
    >>> doc["columns"]["x"]["mechanism"], doc["shuffle_delta"]
    ('duchi', None)
    """
    doc = {"format": 1, "columns": {c: sp.to_dict() for c, sp in specs.items()},
           "shuffle_delta": None if shuffle_delta is None else float(shuffle_delta)}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")


def read_ledger(path: str, cap: "float | None") -> "PrivacyLedger":
    """The privacy ledger kept in the file ``path`` (``privatize --ledger``).

    Parameters
    ----------
    path : str
        The ledger's JSON file (:meth:`~ldpnum.PrivacyLedger.to_json`).
    cap : float or None
        The cap of a new ledger, when the file does not exist yet; given for an existing ledger, it must be
        the one it records.

    Returns
    -------
    PrivacyLedger

    Raises
    ------
    CLIError
        When the file cannot be read or parsed, or ``cap`` differs from the recorded one.
    """
    from .accounting import PrivacyLedger

    try:
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                ledger = PrivacyLedger.from_json(f.read())
            if cap is not None and cap != ledger.cap:
                raise CLIError(f"--ledger-cap {cap:g} differs from the cap recorded in {path!r} "
                               f"({ledger.cap}); the cap of an existing ledger is not changed from the command line")
        else:
            ledger = PrivacyLedger(cap)
    except OSError as exc:
        raise CLIError(f"cannot read --ledger {path!r}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise CLIError(f"--ledger {path!r}: {one_line(exc)}") from None
    return ledger


def read_people(path: str, column: str, delimiter: "str | None", kind: "str | None" = None) -> "pd.Index":
    r"""The person ids of an input file's column (one pass over that column only), as text.

    A CSV column is read as strings whatever it looks like, a Parquet column's ints (or whole floats) are
    written in decimal. So the same person has the same id in every file, whether or not the rest of a
    file's column looks numeric (type inference would make ``7`` an int in one file and ``"7"`` a str in
    another, and ``"007"`` an int 7).

    Parameters
    ----------
    path : str
        The input file (CSV or Parquet).
    column : str
        The column of person ids (``--people-column``).
    delimiter : str or None
        Field delimiter of a CSV file (``\t`` written as two characters stands for a tab).
    kind : {None, "int"}, optional
        ``"int"`` (a ledger already holding int ids, written by the library) converts the ids to ints
        instead, refusing any that are not written as a plain decimal integer.

    Returns
    -------
    pandas.Index
        One id per row.
    """
    import numpy as np
    import pandas as pd

    src = _Source(path, DEFAULT_BATCH_SIZE, None if delimiter is None else delimiter.replace("\\t", "\t"))
    src.check_columns([column])
    parts = [batch.column(0).to_pandas() for _, batch in src.batches([column], text=[column])]
    ids = pd.concat(parts, ignore_index=True) if parts else pd.Series([], dtype=object)
    if ids.dtype.kind == "f" and ids.notna().all() and (ids == ids.round()).all():
        ids = ids.astype("int64")
    if ids.dtype.kind in "iu" and kind == "int":
        return pd.Index(ids)
    ids = ids.astype(object).where(ids.isna(), ids.astype(str))
    if kind == "int" and ids.notna().all():
        canonical = ids.str.fullmatch(r"-?(0|[1-9][0-9]*)")
        if not canonical.all():
            bad = np.flatnonzero(~canonical.to_numpy())
            raise CLIError(f"--people-column {column!r}: the ledger holds int person ids, but {bad.size} id(s) of "
                           f"{path!r} are not plain decimal integers (first: row {bad[0]}, {ids.iloc[bad[0]]!r}); "
                           "a ledger keeps one id type so that the same person cannot pass its cap twice")
        values = [int(v) for v in ids]
        ids = pd.Series(values, dtype=np.int64 if all(-2**63 <= v < 2**63 for v in values) else object)
    return pd.Index(ids)



def distinct_people(path: str, column: str, delimiter: "str | None" = None) -> "pd.Index":
    r"""The distinct person ids of an input file's column, in order of first appearance (``keys generate --people``).

    Ids all written as plain decimal integers are kept as ints (pandas reads the index of a key file written with
    them as such); otherwise every id is text, as :func:`read_people` reads it.

    Parameters
    ----------
    path : str
        The file (CSV or Parquet): a data file or a list of ids.
    column : str
        Its column of person ids (``--people-column``).
    delimiter : str or None
        Field delimiter of a CSV file (``\t`` written as two characters stands for a tab).

    Returns
    -------
    pandas.Index
        Of dtype object, one entry per person.

    Raises
    ------
    CLIError
        For an unreadable file, an unknown column, or a row that names no person.
    """
    import pandas as pd

    try:
        people = read_people(path, column, delimiter, "int")
    except CLIError as exc:
        if "not plain decimal integers" not in str(exc):
            raise
        people = read_people(path, column, delimiter)
    if people.hasnans:
        raise CLIError(f"--people-column {column!r}: {int(people.isna().sum())} row(s) of {path!r} name no person")
    return pd.Index(pd.unique(people.to_numpy()), dtype=object)


def open_ledger(path: str, cap: "float | None", source: str, people_column: str, delimiter: "str | None",
                epsilon: "float | None") -> "tuple[PrivacyLedger, pd.Index]":
    r"""The ledger of ``privatize --ledger FILE`` and the person ids of ``source``'s rows, before anything is drawn.

    Parameters
    ----------
    path, cap
        As for :func:`read_ledger`.
    source, people_column, delimiter
        The input file and its column of person ids (:func:`read_people`, in the ledger's id kind).
    epsilon : float or None
        What each row spends on a collection of one-shot columns, checked here against the ledger's cap; None for a
        collection with memoized columns, whose rows are checked per memoized value (:func:`ledger_check`).

    Returns
    -------
    (PrivacyLedger, pandas.Index)

    Raises
    ------
    CLIError
        When the ledger or the ids cannot be read, or the collection would take someone above the cap.
    """
    from .exceptions import BudgetExceededError

    ledger = read_ledger(path, cap)
    people = read_people(source, people_column, delimiter, ledger.id_kind)
    if epsilon is not None:
        try:
            ledger.check(epsilon=epsilon, people=people)
        except BudgetExceededError as exc:
            raise CLIError(f"{one_line(exc)} (--ledger {path})") from None
        except (ValueError, TypeError) as exc:
            raise CLIError(f"--people-column {people_column!r}: {one_line(exc)}") from None
    return ledger, people


def ledger_check(ledger: "PrivacyLedger", people: "pd.Index", path: str) -> "Callable[[Any, list], None]":
    """:func:`privatize_file`'s ``before_drawing`` for memoized columns kept in the ledger file ``path``.

    The ledger's cap and rounds are checked with each row's memoized-value fingerprints
    (:meth:`~ldpnum.PrivacyLedger.check_longitudinal`), before anything is drawn: one clear error, nothing written.
    """
    from .exceptions import BudgetExceededError

    def check(plan, rounds):
        try:
            ledger.check_longitudinal(rounds, people=people, epsilon=plan.one_shot_epsilon)
        except BudgetExceededError as exc:
            raise CLIError(f"{one_line(exc)} (--ledger {path})") from None
        except (ValueError, TypeError) as exc:
            raise CLIError(f"--ledger {path}: {one_line(exc)}") from None

    return check

def record_file_ledger(ledger: "PrivacyLedger", path: str, info: dict, *, people: "pd.Index", label: "str | None",
                       shuffled: bool, shuffle_delta: "float | None") -> None:
    """Record a finished :func:`privatize_file` collection (``info``, its return value) in the ledger file ``path``.

    Each person is charged what :meth:`~ldpnum.collect.CollectionPlan.ledger_charge` says: the one-shot columns'
    ε per row and, per memoized column, each memoized value's ``min(ε∞, reports × ε1)`` for their rounds
    (:func:`ldpnum.collect.record_ledger`, as the pandas accessor records); the file is then replaced atomically.
    """
    from .collect import record_ledger

    epsilon, specs = info["plan"].ledger_charge(info["rounds"])
    record_ledger(ledger, epsilon=epsilon, people=people, specs=specs, strategy=info["strategy"], label=label,
                  shuffled=shuffled, shuffle_delta=1e-6 if shuffle_delta is None else shuffle_delta,
                  counts=info["reports"].values(), rounds=info["rounds"])
    write_atomic(path, ledger.to_json())


#: Parquet schema metadata key of a client-key file's description (count, fingerprint, id column).
KEYS_METADATA = b"ldpnum.client_keys"

_KEY_SUFFIXES = (".npy",)


def _key_file_kind(path):
    name = os.path.basename(str(path)).lower()
    if name.endswith(_KEY_SUFFIXES):
        return "npy"
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    raise CLIError(f"cannot tell the format of key file {str(path)!r} from its extension: use .parquet (or .pq: "
                   "columns key0, key1 and optionally the person ids) or .npy (key words only, row for row)")


def canonical_ids(ids: Any) -> "pd.Index":
    """Person ids as text, as :func:`read_people` reads an input's id column.

    Ints (and whole floats) in decimal, strings unchanged. Keys are matched to rows by these, so ``7`` in a key file
    and ``"7"`` in a CSV file are one person.
    """
    import pandas as pd

    s = pd.Series(pd.Index(ids), copy=False)
    if s.dtype.kind == "f" and s.notna().all() and (s == s.round()).all():
        s = s.astype("int64")
    return pd.Index(s.astype(object).where(s.isna(), s.astype(str)), dtype=object)


def generate_keys_file(path: PathLike, count: "int | None", *, people: "str | None" = None,
                       people_column: "str | None" = None, delimiter: "str | None" = None,
                       rng: Any = None) -> "tuple[ClientKeys, pd.Index | None]":
    """Fresh client keys written to a new file (``ldpnum keys generate``): ``(keys, ids)``.

    ``count`` keys, or one per distinct id of column ``people_column`` of the file ``people``
    (:func:`distinct_people`; ``count``, if given, must equal their number); ``ids`` is None without ``people``.
    The keys come from the operating system's secure source unless ``rng`` seeds a simulation; the file is
    written by :func:`write_keys_file`.
    """
    from .longitudinal.keys import ClientKeys

    ids = None
    if people is not None:
        ids = distinct_people(people, str(people_column), delimiter)
        if count is not None and count != len(ids):
            raise CLIError(f"N is {count:,} but column {people_column!r} of {people!r} names {len(ids):,} distinct "
                           f"people; give N = {len(ids)} or leave it out")
        count = len(ids)
    elif count is None:
        raise CLIError("give N, the number of keys (people), or --people FILE --people-column C")
    keys = ClientKeys.generate(count, rng=rng)
    write_keys_file(path, keys, people=ids, people_column=people_column)
    return keys, ids


def write_keys_file(path: PathLike, keys: Any, people: Any = None, people_column: "str | None" = None) -> None:
    """Write client keys to a new file readable only by its owner (mode 0600).

    Parameters
    ----------
    path : str or path
        ``.parquet``/``.pq``: uint64 columns ``key0``, ``key1`` and, with ``people``, the person ids in the column
        ``people_column`` (the file's pandas index, so ``pandas.read_parquet(path)`` gives
        ``ClientKeys.to_frame(index=ids)``); ``.npy``: the ``(n, 2)`` uint64 words of :meth:`ClientKeys.save`, row
        for row. An existing file is never replaced (it holds people's secrets): the call fails instead.
    keys : ClientKeys
    people : array_like, optional
        One id per key (distinct; ints or text, written as they are), Parquet only.
    people_column : str, optional
        The name of the id column (default ``"person"``).

    Raises
    ------
    CLIError
        For an existing file, an unknown extension, ids with a ``.npy`` file, or ids that are not one per key.
    """
    import numpy as np
    import pandas as pd

    from .longitudinal.keys import ClientKeys

    if not isinstance(keys, ClientKeys):
        raise TypeError(f"keys must be ClientKeys; got {type(keys).__name__}")
    path = str(path)
    kind = _key_file_kind(path)
    if os.path.exists(path):
        raise CLIError(f"{path!r} exists: a key file holds people's secrets and is never overwritten (their memoized "
                       "answers would change); remove it first if it is no longer used")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CLIError(f"cannot write {path!r}: no such directory {directory!r}")
    if people is not None:
        if kind != "parquet":
            raise CLIError("person ids are written to Parquet key files only (.parquet); a .npy key file is row for "
                           "row")
        ids = pd.Index(people)
        if len(ids) != len(keys):
            raise CLIError(f"{len(ids)} person ids for {len(keys)} keys")
        if not ids.is_unique:
            raise CLIError(f"person {ids[ids.duplicated()][0]!r} is named twice: a person holds one key")
    import uuid

    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            if kind == "npy":
                np.save(f, keys.words, allow_pickle=False)
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                index = None if people is None else pd.Index(ids, name=people_column or "person")
                table = pa.Table.from_pandas(keys.to_frame(index=index), preserve_index=people is not None)
                about = {"format": 1, "n": len(keys), "fingerprint": keys.fingerprint,
                         "people_column": None if index is None else index.name}
                table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                                       KEYS_METADATA: json.dumps(about).encode()})
                pq.write_table(table, f)
        if os.path.exists(path):  # written meanwhile by someone else: theirs stays
            raise CLIError(f"{path!r} appeared while the keys were written; it was left unchanged")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_keys_file(path: PathLike) -> "tuple[Any, pd.Index | None]":
    """The client keys of a file written by :func:`write_keys_file`, read whole.

    Returns ``(ClientKeys, person ids or None)``. Also reads a file written by ``ClientKeys.save`` or
    ``ClientKeys.to_frame(index=ids).to_parquet``.

    A Parquet file names people when it records an id column, or when its pandas index is not a plain range
    of positions; its ids are read as text (:func:`canonical_ids`). A ``.npy`` file is row for row.

    Raises
    ------
    CLIError
        For a missing or unreadable file, columns other than uint64 ``key0``/``key1``, a malformed array, or a
        person named twice.
    """
    import numpy as np

    from .longitudinal.keys import ClientKeys

    path = str(path)
    kind = _key_file_kind(path)
    _check_exists(path)
    if kind == "npy":
        try:
            words = np.load(path, allow_pickle=False)
        except Exception as exc:  # ValueError, OSError, ... for a file that is not a .npy array
            raise CLIError(f"cannot read key file {path!r}: {one_line(exc)}") from None
        try:
            return ClientKeys.from_array(words), None
        except (TypeError, ValueError) as exc:
            raise CLIError(f"key file {path!r}: {one_line(exc)}") from None
    import pandas as pd
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:
        raise CLIError(f"cannot read key file {path!r} as Parquet: {one_line(exc)}") from None
    missing = [c for c in ("key0", "key1") if c not in table.column_names]
    if missing:
        raise CLIError(f"key file {path!r} has no column {missing[0]!r} (its columns: "
                       f"{', '.join(map(repr, table.column_names))}); a key file holds uint64 columns key0 and key1")
    for c in ("key0", "key1"):
        t = table.schema.field(c).type
        if str(t) != "uint64":
            raise CLIError(f"key file {path!r}: column {c!r} holds {t} values, not the uint64 words of 128-bit keys")
        if table.column(c).null_count:
            raise CLIError(f"key file {path!r}: column {c!r} has {table.column(c).null_count} missing key word(s)")
    about = json.loads((table.schema.metadata or {}).get(KEYS_METADATA, b"{}") or b"{}")
    frame = table.to_pandas()
    ids = None
    if about.get("people_column") is not None or not isinstance(frame.index, pd.RangeIndex):
        ids = canonical_ids(frame.index)
        if ids.hasnans:
            raise CLIError(f"key file {path!r}: {int(ids.isna().sum())} key(s) name no person")
        if not ids.is_unique:
            raise CLIError(f"key file {path!r} names person {ids[ids.duplicated()][0]!r} more than once; a person "
                           "holds one key")
    try:
        keys = ClientKeys.from_frame(frame)
    except (TypeError, ValueError) as exc:  # pragma: no cover - the columns were checked above
        raise CLIError(f"key file {path!r}: {one_line(exc)}") from None
    if about.get("fingerprint") not in (None, keys.fingerprint):
        raise CLIError(f"key file {path!r} does not hold the keys it was written with (fingerprint "
                       f"{keys.fingerprint[:16]}..., recorded {str(about['fingerprint'])[:16]}...): it was changed")
    return keys, ids


def keys_for_rows(path: PathLike, source: PathLike, people_column: "str | None",
                  delimiter: "str | None" = None) -> Any:
    """The keys of ``source``'s rows, row for row, from the key file ``path`` (``privatize --keys``).

    A key file naming people is matched to the rows by ``people_column`` (the input's column of person ids; a
    person in several rows uses their one key), and one clear error names the first person without a key. A key
    file of keys only is taken row for row (its count is checked against the rows by :func:`privatize_file`).

    Raises
    ------
    CLIError
        For an unreadable key file, a key file naming people without ``people_column``, or rows whose people
        hold no key in it.
    """
    from .collect import align_keys

    keys, ids = read_keys_file(path)
    if ids is None:
        return keys
    if people_column is None:
        raise CLIError(f"--keys {str(path)!r} holds the keys of named people: give --people-column C, the input's "
                       "column of each row's person id, to match them to the rows")
    people = read_people(str(source), people_column, delimiter)
    if people.hasnans:
        raise CLIError(f"--people-column {people_column!r}: {int(people.isna().sum())} row(s) name no person")
    try:
        return align_keys(keys.to_frame(index=ids), len(people), people)
    except (TypeError, ValueError) as exc:
        raise CLIError(f"--keys {str(path)!r}: {one_line(exc)}") from None


class _ItemSource(_Source):
    """A :class:`_Source` whose CSV item column is read as text, binary or uint64, never type-inferred.

    Text (``str``), binary (``bytes``) or uint64 (``uint``): a column of zip codes stays strings. Only an empty cell
    (``,,`` or ``,"",``, as pandas writes a missing value) is missing: ``NA`` or ``null`` are items like any other.
    """

    def __init__(self, path, batch_size, delimiter=None, *, column=None, item_type="str"):
        self._item_column = column
        self._item_type = item_type
        super().__init__(path, batch_size, delimiter)

    def _convert_options(self, columns, numeric, text=()):
        import pyarrow as pa
        import pyarrow.csv as pcsv

        arrow_type = {"str": pa.string(), "bytes": pa.binary(), "uint": pa.uint64()}[self._item_type]
        types = {} if columns is None else {c: arrow_type for c in columns}
        return pcsv.ConvertOptions(include_columns=list(columns) if columns is not None else None,
                                   column_types=types, null_values=[""], strings_can_be_null=True)

    def _explain(self, exc):
        text = super()._explain(exc)
        if "conversion error" in text and self._item_type == "uint":
            text += "; --item-type uint needs non-negative integers below 2**64 (use --item-type str for text)"
        return text


def _item_array(array, item_type):
    """One batch of an item column (Arrow) as what :func:`ldpnum.heavy.encode_items` takes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if item_type == "uint":
        return np.asarray(array.to_numpy(zero_copy_only=False))
    if item_type == "str" and pa.types.is_large_string(array.type):
        array = pc.cast(array, pa.string())
    return array.to_numpy(zero_copy_only=False)


def _check_item_column(src, column, item_type):
    """The Parquet column's type agrees with ``--item-type`` (CSV columns are read as that type)."""
    import pyarrow.types as pat

    if src.kind != "parquet":
        return
    t = src.schema.field(column).type
    value = t.value_type if pat.is_dictionary(t) else t
    ok = {"str": pat.is_string(value) or pat.is_large_string(value),
          "bytes": pat.is_binary(value) or pat.is_large_binary(value) or pat.is_fixed_size_binary(value),
          "uint": pat.is_integer(value)}[item_type]
    if not ok:
        hint = {"str": "text", "bytes": "binary values", "uint": "integers"}[item_type]
        other = ("str" if pat.is_string(value) or pat.is_large_string(value) else
                 "uint" if pat.is_integer(value) else "bytes" if pat.is_binary(value) else None)
        suggest = f"; pass --item-type {other}" if other else ""
        raise CLIError(f"column {column!r} of {src.path!r} holds {t} values, not {hint} as --item-type "
                       f"{item_type} needs{suggest}")


def heavy_hitters_file(path: PathLike, column: str, mechanism: "PEM | TreeHist", *, rng: "int | None" = None,
                       batch_size: int = DEFAULT_BATCH_SIZE, delimiter: "str | None" = None,
                       top_k: "int | None" = None,
                       progress: bool = False) -> "tuple[HeavyHittersEstimate, dict[str, Any]]":
    """Simulate a one-round heavy-hitter collection on one column of a CSV or Parquet file.

    Every value of ``column`` is one person's item. The column is read in batches; each batch is randomized
    by ``mechanism`` (:class:`~ldpnum.PEM` or :class:`~ldpnum.TreeHist`) and counted into the mechanism's
    mergeable :class:`~ldpnum.Aggregate`, so memory holds one batch and one aggregate, never the column.

    Parameters
    ----------
    path : str or path
        CSV/TSV (``.csv``, ``.tsv``, optionally compressed) or Parquet (``.parquet``, ``.pq``) file.
    column : str
        The item column: text for ``item_type="str"``, binary for ``"bytes"``, integers for ``"uint"``
        (a CSV column is read as that type; only an empty cell is missing).
    mechanism : PEM or TreeHist
    rng : None or int, optional
        None (default): secure randomness. An int seed: reproducible simulation drawing from the stream
        ``child_rng(rng, 0)``, one generator shared by all batches, so the reports (and the result) are those
        of ``mechanism.privatize(whole_column, rng=numpy.random.default_rng(child_rng(rng, 0)))`` whatever
        ``batch_size`` (the same stream ``privatize_file`` gives its first column).
    batch_size : int, optional
        Rows per step.
    delimiter : str, optional
        Field delimiter of a CSV input.
    top_k : int, optional
        Heavy hitters returned (default: the mechanism's ``top_k``).
    progress : bool, optional
        Show a tqdm progress bar on stderr.

    Returns
    -------
    (HeavyHittersEstimate, dict)
        The estimate, and ``{"rows": n, "truncated": count, "first_truncated": row or None}``.

    Raises
    ------
    CLIError
        A missing file or column, a column of the wrong type, missing values (counted over the whole file,
        with the first row; items are never imputed), items the mechanism refuses (negative or too wide
        integers, mixed types). Nothing is estimated then.
    """
    import numpy as np

    from ._random import child_rng
    from .exceptions import TruncationWarning

    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise CLIError(f"--batch-size must be a positive integer; got {batch_size!r}")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise CLIError(f"--delimiter must be one character; got {delimiter!r}")
    src = _ItemSource(path, batch_size, delimiter, column=column, item_type=mechanism.item_type)
    src.check_columns([column])
    _check_item_column(src, column, mechanism.item_type)
    # One stream shared by all batches: words are drawn in row order, so the result does not depend on
    # the batch size.
    stream = None if rng is None else np.random.default_rng(child_rng(rng, 0))
    agg = mechanism.empty_aggregate()
    truncated, first_truncated, rows = 0, None, 0
    where = "0-based" + (", header excluded" if src.kind == "csv" else "")
    bar = _progress(progress, src.num_rows, "heavy-hitters")
    try:
        batches = src.batches([column])
        for start, batch in batches:
            array = batch.column(column)
            n = len(array)
            if array.null_count:
                import pyarrow.compute as pc

                first = start + int(np.argmax(pc.is_null(array).to_numpy(zero_copy_only=False)))
                count = array.null_count + sum(b.column(column).null_count for _, b in batches)
                raise CLIError(f"column {column!r} has {count} missing value(s), first at row {first} ({where}); "
                               "heavy-hitter items are never imputed: remove those rows first")
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", TruncationWarning)
                    values = mechanism.prepare_values(_item_array(array, mechanism.item_type),
                                                      name=f"column {column!r}", locate=True)
            except (TypeError, ValueError) as exc:
                raise CLIError(f"column {column!r}, rows {start}..{start + n - 1} (indices count from row "
                               f"{start}): {one_line(exc)}") from None
            for w in caught:
                if issubclass(w.category, TruncationWarning):
                    found: Any = w.message  # a TruncationWarning: how many items were cut, the first one
                    if first_truncated is None:
                        first_truncated = start + found.first_index
                    truncated += found.count
                else:  # pragma: no cover - no other warning is expected here
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            agg = agg + mechanism.aggregate(mechanism._randomize(values, stream))
            rows += n
            if bar is not None:
                bar.update(n)
    finally:
        if bar is not None:
            bar.close()
    if rows == 0:
        raise CLIError(f"column {column!r} of {src.path!r} has no rows: nothing to estimate")
    est = mechanism.estimate_heavy_hitters(agg, top_k=top_k)
    return est, {"rows": rows, "truncated": truncated, "first_truncated": first_truncated}
