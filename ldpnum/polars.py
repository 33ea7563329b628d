r"""The ``.ldp`` namespaces on Polars DataFrames and Series: privatize columns, estimate from report columns.

``import ldpnum.polars`` (``import ldpnum`` alone never imports Polars; install the extra:
``pip install ldpnum[polars]``) registers a namespace named ``ldp`` on :class:`polars.DataFrame`,
:class:`polars.Series` and :class:`polars.LazyFrame` through Polars' public extension API
(``polars.api.register_dataframe_namespace``; a LazyFrame's ``privatize`` collects the columns it names and
returns a report DataFrame: reports are drawn once, never inside a lazy plan that each ``collect`` runs again). The
namespaces hold no math and draw no words: they convert the columns they need to pandas, call the collection
layer through the pandas accessor (:mod:`ldpnum.pandas`, over :mod:`ldpnum.collect`) and wrap the codes in Polars
objects again. A seeded collection therefore gives, bit for bit, the reports and the record of the pandas accessor
on the same data and seed, and every argument means what it means there.

Privatizing
-----------
``df.ldp.privatize({column: mechanism, ...}, rng=..., strategy=...)`` returns a new DataFrame of report columns
(integer codes; under ``"one-column-per-row"`` the cells a row did not report are null), and
``s.ldp.privatize(mechanism, rng=...)`` a new Series; the other arguments (``nan_policy``, ``fill_value``,
``ledger``, ``people``, ``label``, ``shuffled``, ``shuffle_delta``, ``unknown``, ``keys``, ``round``, and
``mechanism="auto"`` on a Series) are those of :meth:`ldpnum.pandas.DataFrameAccessor.privatize` and
:meth:`ldpnum.pandas.SeriesAccessor.privatize`. ``people`` may name a column of the frame, or be a Series or an
array of one person id per row. A ``pl.Enum`` column given to a frequency oracle uses its declared categories, in
their order (as a pandas ``category`` column); a ``pl.Categorical`` column holds only the values Polars has met, so
it is read as text, and the oracle needs its categories declared (``ldp.GRR(epsilon, categories=[...])``).

Where the specs travel
----------------------
Polars keeps no attributes on its objects (pandas has ``attrs``), so the **record** of a collection — every report
column's :class:`~ldpnum.Spec`, the strategy, ``epsilon_per_row``, the digest of each column's codes and a
shuffle declaration, the dict of :func:`ldpnum.collect.CollectionPlan.record` — is held beside the report frame
that ``privatize`` returned, for as long as that frame lives: ``reports.ldp.specs``, ``reports.ldp.record``.
A frame derived from it (``select``, ``filter``, ``with_columns``, ``reports["x"]``) is a new object without the
record; take a report column with ``reports.ldp.column("x")``, which keeps it. The record goes into files with
``reports.ldp.write_parquet(path)``: Polars' own writer, the record in the file's key-value metadata under
``PANDAS_ATTRS``, the layout pandas (``to_parquet``) and the command line (``ldpnum privatize``) write, so
``pd.read_parquet``, ``ldpnum estimate`` and :func:`read_parquet` (``pl.read_parquet`` plus the record) read
each other's files. Digests are checked on every read: a column whose codes changed is refused.

Estimating
----------
On a report column: ``s.ldp.aggregate()``, ``s.ldp.estimate_mean()``, ``s.ldp.estimate_distribution(**kw)``,
``s.ldp.estimate_frequencies(**kw)``, ``s.ldp.estimate_ranges(**kw)``, ``s.ldp.heavy_hitters(**kw)``,
``s.ldp.quantile(q)`` and ``s.ldp.range(lo, hi)``; on a report frame ``df.ldp.aggregate(by=...)`` and
``df.ldp.describe()``. A column without a record takes ``spec=`` (as in pandas, it then vouches for the codes).

Examples
--------
>>> import polars as pl, ldpnum as ldp
>>> import ldpnum.polars  # noqa: F401  registers df.ldp / s.ldp
>>> df = pl.DataFrame({"age": [34.0, 51.0, 27.0, 62.0], "income": [41e3, 58e3, 23e3, 90e3]})
>>> reports = df.ldp.privatize({"age": ldp.SquareWave(epsilon=1.0, bounds=(0, 100)),
...                             "income": ldp.Piecewise(epsilon=1.0, bounds=(0, 2e5))},
...                            rng=0, strategy="one-column-per-row")
>>> reports.ldp.epsilon_per_row, reports.ldp.specs["income"].mechanism
(1.0, 'piecewise')
>>> reports.select(pl.sum_horizontal(pl.all().is_not_null())).to_series().to_list()  # one report per row
[1, 1, 1, 1]
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl

from . import pandas as _pandas  # noqa: F401  registers the pandas accessor the namespaces call
from ._frame import ATTRS_KEY, frame_info, parquet_metadata, specs_from_parquet_metadata
from ._typing import ArrayLike, SeedLike
from .aggregate import Aggregate
from .mechanisms import Mechanism
from .reports import Reports
from .spec import Spec

__all__ = ["DataFrameNamespace", "LazyFrameNamespace", "SeriesNamespace", "read_parquet", "record_of", "with_record"]


# -- the record beside a Polars object --------------------------------------------------------------------------

#: id(object) -> (weak reference to it, its ldpnum record). An entry goes with its object.
_RECORDS: dict[int, tuple[weakref.ref, dict]] = {}


def _forget(key: int, ref: weakref.ref) -> None:
    if _RECORDS.get(key, (None,))[0] is ref:
        del _RECORDS[key]


def with_record(obj: Any, record: Mapping[str, Any] | None) -> Any:
    """``obj`` (a Polars DataFrame or Series) with ``record`` held beside it; returns ``obj``.

    ``record`` is an ldpnum report record (``attrs["ldpnum"]`` of a pandas report object, or what
    :func:`record_of` returns); it is checked (format, budget) before it is kept. None forgets any record.

    Examples
    --------
    >>> import polars as pl, ldpnum as ldp
    >>> from ldpnum.polars import record_of, with_record
    >>> r = pl.Series("x", [0.2, 0.7]).ldp.privatize(ldp.Duchi(1.0, (0, 1)), rng=0)
    >>> bare = pl.Series("x", r.to_list(), dtype=r.dtype)      # a copy: no record
    >>> record_of(bare) is None, with_record(bare, record_of(r)).ldp.spec.mechanism
    (True, 'duchi')
    """
    if not isinstance(obj, (pl.DataFrame, pl.Series)):
        raise TypeError(f"with_record takes a Polars DataFrame or Series; got {type(obj).__name__}")
    key = id(obj)
    if record is None:
        _RECORDS.pop(key, None)
        return obj
    holder = pd.Series([], dtype="float64")
    holder.attrs[ATTRS_KEY] = dict(record)
    info = frame_info(holder)  # ValueError for a record that is not ldpnum's, or whose budget was edited
    assert info is not None

    def forget(ref: weakref.ref) -> None:
        _forget(key, ref)

    _RECORDS[key] = (weakref.ref(obj, forget), info)
    return obj


def record_of(obj: Any) -> dict[str, Any] | None:
    """The ldpnum record held beside ``obj`` (a Polars DataFrame or Series), or None when it has none.

    Objects made by ``privatize``, ``reports.ldp.column`` and :func:`read_parquet` have one; frames derived from
    them by Polars operations do not.
    """
    entry = _RECORDS.get(id(obj))
    return entry[1] if entry is not None and entry[0]() is obj else None


# -- conversion -------------------------------------------------------------------------------------------------

def _pandas_column(s: pl.Series) -> pd.Series:
    """A Polars column as pandas: integer columns with nulls as nullable integers (codes stay integers).

    A ``pl.Enum`` column becomes a pandas ``category`` column of its declared categories, in their order. A
    ``pl.Categorical`` column's categories are the values Polars has met, not declared ones (``pl.from_pandas``
    keeps only the categories present), so it becomes text: a frequency oracle then needs its categories
    declared (``ldp.GRR(epsilon, categories=[...])``), as for any text column.
    """
    if s.dtype == pl.Categorical:
        return s.cast(pl.Utf8).to_pandas()
    if s.dtype.is_numeric() and not s.null_count():  # numbers without nulls: a view of the values, no copy
        return pd.Series(s.to_numpy(), name=s.name, copy=False)
    if s.dtype.is_integer():
        codes = s.fill_null(0).to_numpy()
        return pd.Series(pd.arrays.IntegerArray(codes, s.is_null().to_numpy()), name=s.name)
    return s.to_pandas()


def _pandas_frame(df: pl.DataFrame, columns: list) -> pd.DataFrame:
    return pd.DataFrame({c: _pandas_column(df.get_column(c)) for c in columns}, columns=pd.Index(columns), copy=False)


def _with_attrs(obj: Any, record: dict | None) -> Any:
    if record is not None:
        obj.attrs[ATTRS_KEY] = record
    return obj


def _polars(obj: Any) -> Any:
    """A pandas report object made by the collection layer as Polars, with its record beside it."""
    record = obj.attrs.get(ATTRS_KEY)
    return with_record(pl.from_pandas(obj), record)


def _plain(x: Any) -> Any:
    """A Polars Series argument (``people``, ``by``) as a numpy array; anything else unchanged."""
    return x.to_numpy() if isinstance(x, pl.Series) else x


def _no_record(name: Any) -> ValueError:
    return ValueError(f"report column {name!r} carries no ldpnum record: Polars operations (select, filter, "
                      "df[name], ...) make new objects without it. Take report columns with reports.ldp.column(name), "
                      "read files with ldpnum.polars.read_parquet, or pass spec= to vouch for the codes yourself")


def _needed_columns(mechanisms: Any, people: Any, columns: list) -> list:
    """The value columns a privatize mapping names (and a ``people`` column), in order; checked against ``columns``."""
    if not isinstance(mechanisms, Mapping):
        raise TypeError("mechanisms must be a mapping {column: mechanism}, e.g. "
                        f"{{'dep_time': ldp.SquareWave(1.0, (0, 1440))}}; got {type(mechanisms).__name__}")
    wanted: list = []
    for key in mechanisms:
        for c in key if isinstance(key, tuple) else (key,):
            if c not in wanted:
                wanted.append(c)
    if isinstance(people, str) and people in columns and people not in wanted:
        wanted.append(people)
    missing = [c for c in wanted if c not in columns]
    if missing:
        raise ValueError(f"{len(missing)} column(s) to privatize are not in the DataFrame, first {missing[0]!r}; "
                         f"its columns: {columns}")
    return wanted


# -- files -------------------------------------------------------------------------------------------------------

def read_parquet(source: str | Path, **kwargs: Any) -> pl.DataFrame:
    """``polars.read_parquet(source, **kwargs)`` with the file's ldpnum record beside the frame.

    Reads files written by :meth:`DataFrameNamespace.write_parquet`, by pandas (``to_parquet`` of a report
    frame), by Dask and by ``ldpnum privatize``: the record is the file's key-value metadata (``PANDAS_ATTRS``, or
    the attributes in pandas' own ``pandas`` entry). A file without one gives a frame without a record. A directory
    of part files (Dask's ``to_parquet``) is refused: :func:`ldpnum.io.aggregate_file` merges its parts, checked.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, polars as pl, ldpnum as ldp
    >>> from ldpnum.polars import read_parquet
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> r = pl.DataFrame({"x": np.linspace(0, 1, 200)}).ldp.privatize({"x": m}, rng=0)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "reports.parquet"
    >>> r.ldp.write_parquet(path)
    >>> read_parquet(path).ldp.aggregate()["x"] == r.ldp.aggregate()["x"]
    True
    """
    if isinstance(source, (str, Path)) and Path(source).is_dir():
        raise ValueError(f"{str(source)!r} is a directory of part files: merging parts needs checking that they are one "
                         "collection's and that none is a copy; aggregate them with ldpnum.io.aggregate_file(path, "
                         "column) (or `ldpnum estimate DIR`), or read each part file on its own")
    frame = pl.read_parquet(source, **kwargs)
    metadata = pl.read_parquet_metadata(source)
    info = specs_from_parquet_metadata({k.encode(): v.encode() for k, v in metadata.items()})
    return with_record(frame, info)


# -- the namespaces ------------------------------------------------------------------------------------------------

@pl.api.register_series_namespace("ldp")
class SeriesNamespace:
    """``s.ldp``: privatize a Polars column of values, or estimate from a column of reports.

    Construction is O(1); each verb converts the column to pandas and calls the pandas accessor
    (:class:`ldpnum.pandas.SeriesAccessor`), whose arguments and results it shares.

    Examples
    --------
    >>> import numpy as np, polars as pl, ldpnum as ldp
    >>> x = pl.Series("x", np.random.default_rng(1).uniform(0, 10, 20_000))
    >>> r = x.ldp.privatize(ldp.Piecewise(epsilon=2.0, bounds=(0, 10)), rng=0)
    >>> est = r.ldp.estimate_mean()
    >>> bool(abs(est.value - x.mean()) < 5 * est.standard_error)
    True
    """

    def __init__(self, series: pl.Series):
        self._obj = series

    def _pandas(self, spec: Spec | None = None) -> pd.Series:
        record = record_of(self._obj)
        if record is None and spec is None:
            raise _no_record(self._obj.name)
        return _with_attrs(_pandas_column(self._obj), record)

    # -- privatizing
    def privatize(self, mechanism: Any, *, rng: SeedLike = None, nan_policy: str = "raise",
                  fill_value: float | None = None, ledger: Any = None, people: Any = None,
                  label: str | None = None, epsilon: float | None = None, bounds: Any = None,
                  task: str = "distribution", shuffled: bool = False, shuffle_delta: float = 1e-6,
                  unknown: str = "raise", keys: Any = None, round: int | None = None, **kwargs: Any) -> pl.Series:
        """Privatize the values: a new Series of report codes with its record (see :func:`ldpnum.pandas.privatize_series`).

        The arguments are those of :meth:`ldpnum.pandas.SeriesAccessor.privatize`; a seeded result equals its codes.

        Examples
        --------
        >>> import polars as pl, ldpnum as ldp
        >>> r = pl.Series("age", [34.0, 51.0, 27.0]).ldp.privatize(ldp.SquareWave(1.0, (0, 100)), rng=0)
        >>> r.name, r.dtype, r.ldp.spec.mechanism
        ('age', UInt16, 'square_wave')
        """
        out = _pandas_column(self._obj).ldp.privatize(
            mechanism, rng=rng, nan_policy=nan_policy, fill_value=fill_value, ledger=ledger, people=_plain(people),
            label=label, epsilon=epsilon, bounds=bounds, task=task, shuffled=shuffled, shuffle_delta=shuffle_delta,
            unknown=unknown, keys=keys, round=round, **kwargs)
        return _polars(out)

    # -- what the column is
    @property
    def record(self) -> dict[str, Any] | None:
        """The ldpnum record held beside this Series (None for values, or a Series derived by Polars)."""
        return record_of(self._obj)

    @property
    def spec(self) -> Spec | None:
        """The :class:`~ldpnum.Spec` recorded for this report column (None when there is no record)."""
        record = record_of(self._obj)
        return None if record is None else _with_attrs(pd.Series([], dtype="float64", name=self._obj.name),
                                                       record).ldp.spec

    @property
    def epsilon_per_row(self) -> float | None:
        """The total ε each row (person) spent on the collection the column comes from (None if unknown)."""
        record = record_of(self._obj)
        return None if record is None else record.get("epsilon_per_row")

    def __repr__(self) -> str:
        record = record_of(self._obj)
        if record is None:
            return f"<ldp namespace: column {self._obj.name!r}, no ldpnum record>"
        return repr(_with_attrs(pd.Series([], dtype="float64", name=self._obj.name), record).ldp).replace(
            "<ldp accessor", "<ldp namespace", 1)

    # -- estimating
    def reports(self, spec: Spec | None = None) -> Reports:
        """The column's :class:`~ldpnum.Reports` (see :func:`ldpnum.pandas.reports_of`)."""
        return self._pandas(spec).ldp.reports(spec)

    def aggregate(self, spec: Spec | None = None) -> Aggregate:
        """The column's mergeable :class:`~ldpnum.Aggregate` (see :func:`ldpnum.pandas.aggregate_series`)."""
        return self._pandas(spec).ldp.aggregate(spec)

    def estimate_mean(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.MeanEstimate` of the mean (a vector mean for a vector report column).

        ``kwargs`` as for :meth:`ldpnum.pandas.SeriesAccessor.estimate_mean` (``method="mle"``).
        """
        return self._pandas(spec).ldp.estimate_mean(spec, **kwargs)

    def describe(self, *, level: float = 0.95, spec: Spec | None = None, bootstrap: int | None = None,
                 rng: Any = None, method: str = "unbiased") -> pl.DataFrame:
        """The report column's summary row (:meth:`ldpnum.pandas.SeriesAccessor.describe`) as a Polars DataFrame."""
        table = self._pandas(spec).ldp.describe(level=level, spec=spec, bootstrap=bootstrap, rng=rng, method=method)
        return pl.from_pandas(table.reset_index())

    def estimate_distribution(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.DistributionEstimate` of the values; ``kwargs`` go to the mechanism's estimator."""
        return self._pandas(spec).ldp.estimate_distribution(spec, **kwargs)

    def estimate_frequencies(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.FrequencyEstimate` of the categories (frequency oracles)."""
        return self._pandas(spec).ldp.estimate_frequencies(spec, **kwargs)

    def estimate_ranges(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.RangeEstimate` (hierarchical histograms); ``kwargs`` go to ``estimate_ranges``."""
        return self._pandas(spec).ldp.estimate_ranges(spec, **kwargs)

    def heavy_hitters(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.HeavyHittersEstimate`: the most frequent items (PEM, TreeHist reports)."""
        return self._pandas(spec).ldp.heavy_hitters(spec, **kwargs)

    def quantile(self, q: ArrayLike = 0.5, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """Estimated quantile(s): a float for a scalar ``q``, else a Polars Series of them, in the order of ``q``."""
        out = self._pandas(spec).ldp.quantile(q, spec=spec, **kwargs)
        return pl.Series(self._obj.name, out.to_numpy()) if isinstance(out, pd.Series) else out

    def range(self, lo: Any, hi: ArrayLike | None = None, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """Estimated fraction of people with values in ``[lo, hi]`` (see :meth:`ldpnum.pandas.SeriesAccessor.range`)."""
        return self._pandas(spec).ldp.range(lo, hi, spec=spec, **kwargs)


@pl.api.register_dataframe_namespace("ldp")
class DataFrameNamespace:
    """``df.ldp``: privatize columns of a Polars DataFrame, read the record, aggregate and describe report columns.

    Examples
    --------
    >>> import polars as pl, ldpnum as ldp
    >>> df = pl.DataFrame({"a": [0.2, 0.4, 0.6], "b": [10.0, 20.0, 30.0]})
    >>> r = df.ldp.privatize({"a": ldp.Duchi(0.5, (0, 1)), "b": ldp.Duchi(0.5, (0, 50))}, rng=3,
    ...                      strategy="all-columns")
    >>> r.ldp.epsilon_per_row, r.ldp.strategy, r.columns
    (1.0, 'all-columns', ['a', 'b'])
    """

    def __init__(self, df: pl.DataFrame):
        self._obj = df

    def privatize(self, mechanisms: Mapping[Any, Mechanism], *, rng: SeedLike = None,
                  strategy: str | None = None, nan_policy: str = "raise", fill_value: Any = None,
                  ledger: Any = None, people: Any = None, label: str | None = None, shuffled: bool = False,
                  shuffle_delta: float = 1e-6, unknown: str = "raise", keys: Any = None, round: int | None = None,
                  **kwargs: Any) -> pl.DataFrame:
        """Privatize columns: a new DataFrame of the report columns only, with its record (see :func:`ldpnum.pandas.privatize_frame`).

        The arguments are those of :meth:`ldpnum.pandas.DataFrameAccessor.privatize`; ``people`` may name a column
        of the frame. Only the columns named (and the ``people`` column) are converted.
        """
        wanted = _needed_columns(mechanisms, people, self._obj.columns)
        out = _pandas_frame(self._obj, wanted).ldp.privatize(
            mechanisms, rng=rng, strategy=strategy, nan_policy=nan_policy, fill_value=fill_value, ledger=ledger,
            people=_plain(people), label=label, shuffled=shuffled, shuffle_delta=shuffle_delta, unknown=unknown,
            keys=keys, round=round, **kwargs)
        return _polars(out)

    # -- the record
    @property
    def record(self) -> dict[str, Any] | None:
        """The ldpnum record held beside this frame (None for a frame of values, or one derived by Polars)."""
        return record_of(self._obj)

    def _pandas(self) -> pd.DataFrame:
        return _with_attrs(_pandas_frame(self._obj, self._obj.columns), record_of(self._obj))

    def _empty(self) -> pd.DataFrame:
        """No rows, the frame's columns and record: what the pandas accessor's record properties read."""
        return _with_attrs(pd.DataFrame(columns=pd.Index(self._obj.columns)), record_of(self._obj))

    @property
    def specs(self) -> dict[Any, Spec]:
        """Report column -> :class:`~ldpnum.Spec`, for the recorded columns present in the frame."""
        return self._empty().ldp.specs

    @property
    def epsilon_per_row(self) -> float | None:
        """Total ε each row spent (the sum of the columns' ε, or their max under "one-column-per-row"); None if unknown."""
        record = record_of(self._obj)
        return None if record is None else record.get("epsilon_per_row")

    @property
    def strategy(self) -> str | None:
        """The strategy the report columns were privatized with (None if unknown)."""
        record = record_of(self._obj)
        return None if record is None else record.get("strategy")

    def __repr__(self) -> str:
        return repr(self._empty().ldp).replace("<ldp accessor", "<ldp namespace", 1)

    def column(self, name: str) -> pl.Series:
        """Report column ``name`` as a Series that keeps the frame's record (``df[name]`` does not)."""
        if name not in self._obj.columns:
            raise ValueError(f"column {name!r} is not in the DataFrame; its columns: {self._obj.columns}")
        return with_record(self._obj.get_column(name), record_of(self._obj))

    def write_parquet(self, file: str | Path, **kwargs: Any) -> None:
        """``DataFrame.write_parquet(file, **kwargs)`` with the record in the file's key-value metadata.

        The layout pandas and ``ldpnum privatize`` write (``PANDAS_ATTRS``): ``pd.read_parquet``, ``ldpnum
        estimate`` and :func:`read_parquet` read the specs and check the digests. A frame without a record is
        refused (write it with Polars' own ``write_parquet``).
        """
        record = record_of(self._obj)
        if record is None:
            raise ValueError("this DataFrame carries no ldpnum record (it was not returned by ldp.privatize or "
                             "ldpnum.polars.read_parquet, or was derived from one by a Polars operation): there are "
                             "no specs to write; use DataFrame.write_parquet for other frames")
        if "metadata" in kwargs:
            raise TypeError("write_parquet writes the ldpnum record as the file's key-value metadata; metadata= "
                            "cannot be combined with it")
        import pyarrow as pa

        # pandas' own entry for these columns (nullable integers where cells are missing), as the command line
        # writes it: pandas and Dask read the record from it, and the columns back in the dtypes pandas wrote
        empty = {c: _pandas_column(s.filter(s.is_null()).head(1) if s.null_count() else s.head(0))[:0]
                 for c, s in zip(self._obj.columns, self._obj.get_columns())}
        pandas_meta = pa.Schema.from_pandas(pd.DataFrame(empty), preserve_index=False).metadata
        metadata = {k.decode(): v.decode() for k, v in parquet_metadata(record, pandas_meta).items()}
        if "arrow_schema" in inspect.signature(pl.DataFrame.write_parquet).parameters:
            # Polars that writes the Arrow schema's own metadata: pandas' read_parquet restores attrs from it
            kwargs["arrow_schema"] = self._obj.to_arrow().schema.with_metadata(metadata)
        self._obj.write_parquet(file, metadata=metadata, **kwargs)

    # -- estimating
    def aggregate(self, specs: Mapping[Any, Spec] | None = None, *, by: Any = None) -> dict[Any, Any]:
        """Column -> :class:`~ldpnum.Aggregate` of every report column (``specs`` adds or checks columns).

        With ``by`` (a **public** column's name, a Series or an array of one key per row): group key -> {column ->
        Aggregate}. See :meth:`ldpnum.pandas.DataFrameAccessor.aggregate`.
        """
        if record_of(self._obj) is None and not specs:
            raise _no_record(self._obj.columns[0] if self._obj.columns else None)
        return self._pandas().ldp.aggregate(specs, by=_plain(by))

    def describe(self, *, level: float = 0.95, specs: Mapping[Any, Spec] | None = None, by: Any = None,
                 bootstrap: int | None = None, rng: Any = None, method: str = "unbiased") -> pl.DataFrame:
        """Per report column (and group, with ``by``): mean with a ``level`` interval and quartiles.

        The table of :meth:`ldpnum.pandas.DataFrameAccessor.describe` as a Polars DataFrame: its row labels become
        the first column(s), ``column`` (and the group key's name).
        """
        if record_of(self._obj) is None and not specs:
            raise _no_record(self._obj.columns[0] if self._obj.columns else None)
        table = self._pandas().ldp.describe(level=level, specs=specs, by=_plain(by), bootstrap=bootstrap, rng=rng,
                                            method=method)
        names = ["column"] if table.index.nlevels == 1 else [table.index.names[0] or "group", "column"]
        return pl.from_pandas(table.rename_axis(names).reset_index())



@pl.api.register_lazyframe_namespace("ldp")
class LazyFrameNamespace:
    """``lf.ldp``: privatize columns of a Polars LazyFrame (e.g. ``pl.scan_parquet(...)``), eagerly.

    Only the columns the mapping names (and a ``people`` column) are collected. The result is a report
    **DataFrame** with its record, as :meth:`DataFrameNamespace.privatize` returns: reports are drawn once. A
    lazy plan is run again by every ``collect``, and each run would draw fresh reports (with secure randomness,
    other reports of the same people: ε spent again), so privatizing is never part of a lazy plan. Estimate
    from the returned frame, or write it (:meth:`DataFrameNamespace.write_parquet`) and read it back with
    :func:`read_parquet`.

    Examples
    --------
    >>> import polars as pl, ldpnum as ldp
    >>> lf = pl.LazyFrame({"age": [34.0, 51.0, 27.0], "name": ["a", "b", "c"]})
    >>> r = lf.ldp.privatize({"age": ldp.SquareWave(1.0, (0, 100))}, rng=0)
    >>> type(r).__name__, r.columns, r.ldp.specs["age"].mechanism
    ('DataFrame', ['age'], 'square_wave')
    """

    def __init__(self, lf: pl.LazyFrame):
        self._obj = lf

    def privatize(self, mechanisms: Mapping[Any, Mechanism], **kwargs: Any) -> pl.DataFrame:
        """Collect the columns ``mechanisms`` names and privatize them: see :meth:`DataFrameNamespace.privatize`."""
        wanted = _needed_columns(mechanisms, kwargs.get("people"), self._obj.collect_schema().names())
        return DataFrameNamespace(self._obj.select(wanted).collect()).privatize(mechanisms, **kwargs)
