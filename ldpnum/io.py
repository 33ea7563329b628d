"""File input and output: streaming sources, atomic writes, signed records, ledger and key files.

The library's file machinery, below the command line (:mod:`ldpnum.cli` parses arguments and prints; the
functions here read and write files and print nothing). Files larger than memory stream: a source yields
``batch_size`` rows at a time and never holds a column whole.

**Sources.** ``_Source`` reads some columns of a CSV/TSV file (optionally compressed: ``.gz``, ``.bz2``,
``.zst``) or a Parquet file in batches, a privatized CSV column parsed as numbers, never type-inferred; a
Parquet dataset (a directory of part files, as Dask and Spark write them) is listed by
:func:`parquet_parts`.

Errors caused by the user's files (a missing file, an unknown format or column, an unreadable row) raise
:class:`CLIError` with a one-line message, which the command line prints before exiting with status 2.
pyarrow, pandas and tqdm are imported by the functions that use them, so ``import ldpnum.io`` stays light.
"""

import os
import sys

__all__ = ["DEFAULT_BATCH_SIZE", "CLIError", "parquet_parts"]

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
    """A mistake in the command line or its input files: printed as one line, exit status 2."""


def _one_line(exc):
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _require_pyarrow():
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise CLIError('reading and writing files needs pyarrow, which is not installed: pip install '
                       '"ldpnum[parquet]" (see the README\'s "Command line" section)') from None


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


def parquet_parts(path):
    """The Parquet files of a dataset directory (as Dask and Spark write them), in name order."""
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
        raise CLIError(f"cannot read {path!r} as Parquet: {_one_line(exc)}") from None


class _Source:
    """The batches of some columns of a CSV or Parquet file, at most ``batch_size`` rows each."""

    def __init__(self, path, batch_size, delimiter=None):
        _require_pyarrow()
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
        """How CSV columns are parsed: the privatized ones as float64, ``text`` ones as strings (an empty field
        missing), the others type-inferred."""
        import pyarrow as pa
        import pyarrow.csv as pcsv

        types = {c: pa.float64() for c in numeric}
        types.update({c: pa.string() for c in text})
        return pcsv.ConvertOptions(include_columns=list(columns) if columns is not None else None,
                                   column_types=types, strings_can_be_null=bool(text))

    def _csv_reader(self, columns, numeric=(), text=(), block_size=None):
        """An Arrow CSV reader with ``block_size`` (default :data:`CSV_BLOCK`): a row longer than a block is
        read by reopening with blocks 8 times larger, up to :data:`CSV_MAX_BLOCK` (see :meth:`_read`)."""
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

        text = _one_line(exc)
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
                what, why = ("Parquet", _one_line(exc)) if self.kind == "parquet" else ("CSV", self._explain(exc))
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
