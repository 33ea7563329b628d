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
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .spec import Spec, check_spec
from .aggregate import Aggregate
from ._random import child_rng

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["partition_privatize", "partition_aggregate", "merge_aggregates", "combine", "aggregate_frame",
           "tree_merge", "child_rng", "BYTES_COLUMN"]

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
