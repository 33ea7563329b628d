"""Dask integration: privatize and aggregate partitioned data, merge exactly, estimate once.

Importing this module (``import ldpnum.dask``; ``import ldpnum`` never imports Dask) registers the ``.ldp``
accessor on Dask DataFrames and Series, mirroring the pandas accessor::

    import ldpnum as ldp
    import ldpnum.dask  # noqa: F401  (registers ddf.ldp / dds.ldp)

    m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1440))
    reports = ddf.ldp.privatize({"dep_time": m})              # lazy; secure randomness (rng=None)
    agg = reports.ldp.aggregate("dep_time").compute()         # one small Aggregate on the driver
    est = reports.ldp.estimate_distribution("dep_time")       # aggregate, merge, then EMS on the driver
    reports["dep_time"].ldp.quantile(0.5)                     # the Series accessor

How it runs
-----------
*Privatize* is a ``map_partitions``: partition ``i`` runs :func:`ldpnum.engines.partition_privatize` with
the stream ``child_rng(rng, i)`` (:func:`ldpnum.engines.child_rng`). A seeded run therefore gives the same
reports under every scheduler and any number of workers, equal to the pandas result on the same
partitions; ``rng=None`` (the default, for real collections) keys every partition afresh from the
operating system, and two calls are two independent collections.

*Aggregate* reduces each partition to an :class:`~ldpnum.Aggregate` where it lies, then adds them along a
balanced binary tree of delayed merges (``to_delayed()``): only the counts move, ``8 × n_cells`` bytes
per partition (8 KB for 1024 cells), never the reports. The merge is exact integer addition, so the result
equals the aggregate of all reports in one place. *Estimates* (``estimate_mean``,
``estimate_distribution``, ``estimate_ranges``, ``quantile``) compute the merged aggregate and run the
estimator once on the driver (post-processing: no privacy cost).

Longitudinal collections
------------------------
Memoized columns (``ldp.LGRR`` ...) take each person's key and a round, as in pandas:
``ddf.ldp.privatize({"app": lgrr}, keys=keys, round=r)``. The keys are aligned with the data by index so that
each partition holds its own people's keys: a Dask or pandas DataFrame ``ClientKeys.to_frame(index=person
ids)`` (a Dask one is repartitioned to the data's divisions, so the data keep their partitions), or
:class:`~ldpnum.ClientKeys` row for row for a frame indexed by positions ``0..n-1`` with known divisions
(see :func:`privatize_frame`). A seeded run equals the pandas accessor on the same partitions, keys and seed.

Workers
-------
Tasks call module-level functions of :mod:`ldpnum.engines` and this module, which are pickled by reference:
each worker imports ldpnum and loads the compiled Numba kernels from the on-disk cache (``cache=True``), so
no kernel is recompiled per task. The cache lives next to the package (``__pycache__``); when the
installation is read-only (system site-packages, containers), set ``NUMBA_CACHE_DIR`` to a writable
directory in every worker's environment (e.g. ``NUMBA_CACHE_DIR=/tmp/numba-cache``), otherwise each worker
process compiles the kernels it uses once at start. With several worker processes on one machine, set
``NUMBA_NUM_THREADS`` to the cores per worker, so Numba's threads do not oversubscribe the cores.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import dask
from dask.dataframe.extensions import register_dataframe_accessor, register_series_accessor
from dask.dataframe.utils import make_meta

import numpy as np

from .spec import Spec
from ._frame import new_collection_id
from .collect import (aggregate_series, check_describe_method, check_shuffle, declare_shuffled, describe_aggregates,
                      estimate_mean_named, estimator, mechanism_of, quantiles_named, range_query,
                      resolve_strategy, run_seed)
from .engines import aggregate_frame, partition_privatize, tree_merge
from .exceptions import InvalidValuesError
from ._typing import ArrayLike, SeedLike

if TYPE_CHECKING:
    import dask.dataframe as dd
    import pandas as pd
    from dask.delayed import Delayed
    from ._results import DistributionEstimate, FrequencyEstimate
    from .heavy import HeavyHittersEstimate
    from .mechanisms import Mechanism

__all__ = ["DaskFrameAccessor", "DaskSeriesAccessor", "privatize_frame", "privatize_series", "aggregate",
           "tree_sum"]


# -- randomness -----------------------------------------------------------------------------------------------
def _partition_number(partition_info):
    if not partition_info or "number" not in partition_info:
        raise RuntimeError("ldpnum.dask: the partition number is unknown (partition_info missing)")
    return int(partition_info["number"])


# -- partition tasks (module level: pickled by reference) ------------------------------------------------------
def _in_partition(exc, part, number):
    """``exc`` reworded for the whole collection.

    Validators count positions within the partition, so the position is turned into the row's index label (the same
    in the partition and the whole frame).
    """
    import re

    def label(match):
        pos = int(match.group(1))
        if 0 <= pos < len(part):
            lab = part.index[pos]
            lab = lab.item() if hasattr(lab, "item") else lab  # a NumPy scalar prints as its plain value
            return f"first at the row labelled {lab!r} (position {pos} of partition {number})"
        return match.group(0)

    text, n = re.subn(r"first at index (\d+)", label, str(exc))
    if not n:
        text = f"partition {number}: {text}"
    if isinstance(exc, InvalidValuesError):  # keep what callers read: count, reason, position in the partition
        return InvalidValuesError(text, count=exc.count, first_index=exc.first_index, reason=exc.reason)
    return type(exc)(text)


def _declared(out, shuffle_delta, collection=None):
    """A partition's reports with the collection's shuffle declaration (δ) and id recorded in its attrs.

    They are the same in every partition, so ``compute()``'s concatenation keeps them.
    """
    from ._frame import ATTRS_KEY

    if shuffle_delta is not None:
        out.attrs[ATTRS_KEY]["shuffle_delta"] = float(shuffle_delta)
    if collection is not None:
        out.attrs[ATTRS_KEY]["collection"] = collection
    return out


def _privatize_frame_partition(df, mechanisms, seed, strategy, nan_policy, fill_value, nonce, shuffle_delta=None,
                               collection=None, keys=None, round=None, partition_info=None):
    """One partition of :func:`privatize_frame`; ``nonce`` only makes a secure run's task keys unique.

    ``keys``: the partition's keys (a pandas frame of key words by person id: the Dask keys' aligned partition, or
    the whole pandas keys) or the ClientKeys of the whole frame by row position (:func:`_partition_keys`).
    """
    number = _partition_number(partition_info)
    try:
        return _declared(partition_privatize(df, mechanisms, seed=seed, partition_index=number, strategy=strategy,
                                             nan_policy=nan_policy, fill_value=fill_value,
                                             keys=_partition_keys(df, keys), round=round), shuffle_delta, collection)
    except (TypeError, ValueError) as exc:
        raise _in_partition(exc, df, number) from None


def _privatize_series_partition(s, mechanism, seed, nan_policy, fill_value, nonce, shuffle_delta=None,
                                collection=None, keys=None, round=None, partition_info=None):
    """One partition of :func:`privatize_series`."""
    number = _partition_number(partition_info)
    try:
        return _declared(partition_privatize(s, mechanism, seed=seed, partition_index=number, nan_policy=nan_policy,
                                             fill_value=fill_value, keys=_partition_keys(s, keys), round=round),
                         shuffle_delta, collection)
    except (TypeError, ValueError) as exc:
        raise _in_partition(exc, s, number) from None


# -- client keys of longitudinal collections -------------------------------------------------------------------
def _partition_keys(part, keys):
    """The keys of one partition's rows.

    A frame of key words by person id as it is (the collection layer matches it to the partition's index), or the
    slice of row-for-row ClientKeys at the partition's positions (its index must be the rows' positions, as checked
    on the driver).
    """
    from .longitudinal.keys import ClientKeys

    if not isinstance(keys, ClientKeys):
        return keys
    n = len(part)
    if n == 0:
        return keys[:0]
    index = np.asarray(part.index)
    start = int(index[0]) if index.dtype.kind in "iu" else -1
    if start < 0 or start + n > len(keys) or not np.array_equal(index, np.arange(start, start + n)):
        raise ValueError("ClientKeys align row for row with a frame indexed by the rows' positions 0..n-1; this "
                         f"partition's index runs {index[0]!r}..{index[-1]!r} with {n} rows: pass the keys as "
                         "ClientKeys.to_frame(index=person ids) to match them by the index")
    return keys[start:start + n]


def _driver_keys(obj, keys):
    """``(keys for the partitions, keys for the driver's empty meta run)``, checked on the driver.

    Checked before any task runs (see :func:`privatize_frame`). The keys are ClientKeys by row position on known
    divisions ``0..n-1``, a pandas frame of key words by person id (sent to every partition), or a Dask frame of
    them repartitioned to ``obj``'s divisions (the data keep their partitions, so a seeded run equals pandas on the
    same partitions).
    """
    import dask.dataframe as dd
    import pandas as pd

    from .longitudinal.keys import ClientKeys

    if keys is None:
        return None, None
    if isinstance(keys, ClientKeys):
        n = len(keys)
        divisions = obj.divisions
        if not obj.known_divisions or divisions[0] != 0 or divisions[-1] != n - 1:
            where = f"divisions {divisions[0]!r}..{divisions[-1]!r}" if obj.known_divisions else "unknown divisions"
            raise ValueError(f"ClientKeys ({n} keys) align row for row with a frame indexed by the rows' positions "
                             f"0..{n - 1} with known divisions (dd.from_pandas of a frame with a RangeIndex); this "
                             f"frame has {where}: pass the keys as ClientKeys.to_frame(index=person ids), as a pandas "
                             "or Dask DataFrame, to match them by the index")
        return keys, keys[:0]
    if isinstance(keys, pd.DataFrame):
        ClientKeys.from_frame(keys.iloc[:0])  # columns key0, key1 of uint64 words
        if not keys.index.is_unique:
            dup = keys.index[keys.index.duplicated()][0]
            raise ValueError(f"keys name person {dup!r} more than once; a person holds one key")
        return dask.delayed(keys, pure=True), keys.iloc[:0]
    if isinstance(keys, dd.DataFrame):
        meta = make_meta(keys)
        ClientKeys.from_frame(meta)
        if not (obj.known_divisions and keys.known_divisions):
            raise ValueError("keys given as a Dask DataFrame are aligned with the data by index, which needs known "
                             "divisions on both (index both by person id with set_index, or read them with "
                             "read_parquet(..., calculate_divisions=True)); or pass the keys as a pandas DataFrame "
                             "(sent to every partition)")
        lo, hi = obj.divisions[0], obj.divisions[-1]
        return keys.loc[lo:hi].repartition(divisions=obj.divisions, force=True), meta
    raise TypeError(f"keys must be ClientKeys (row for row), or ClientKeys.to_frame(index=person ids) as a pandas or "
                    f"Dask DataFrame; got {type(keys).__name__}")


def _as_one_batch(agg, shuffle_delta, epsilon_per_row=None):
    """The merged aggregate of a collection declared shuffled, declared as the one batch it is.

    Each partition's aggregate carries the declaration of its own part; merged, they would read as batches shuffled
    apart. The messages are of ``epsilon_per_row`` (each person's row) as in the pandas accessor.
    """
    if isinstance(agg, dict):
        return {c: _as_one_batch(a, shuffle_delta, epsilon_per_row) for c, a in agg.items()}
    return declare_shuffled(agg, shuffle_delta, epsilon_per_row)


def _part_record(part, columns, number):
    """``(name, collection id or None, digest of the codes)`` of one partition, for :func:`_check_parts`."""
    import pandas as pd

    from ._frame import add_digests, codes_digest, frame_info

    cols = [part] if isinstance(part, pd.Series) else [part[c] for c in columns]
    digest = add_digests(*(codes_digest(c.dropna().to_numpy()) for c in cols))
    return f"partition {number}", (frame_info(part) or {}).get("collection"), digest


def _aggregate_partition(part, column, spec, number=0):
    """``(Aggregate, [part record])`` of one partition.

    The partition is a pandas DataFrame with ``column``, or a report Series.
    """
    import pandas as pd

    if isinstance(part, pd.Series):
        return aggregate_series(part, spec), [_part_record(part, None, number)]
    return aggregate_frame(part, column, spec), [_part_record(part, [column], number)]


def _aggregate_columns(part, columns, specs, number=0):
    """``(column -> Aggregate, [part record])`` of several report columns of one partition."""
    return ({c: aggregate_frame(part, c, s) for c, s in zip(columns, specs)},
            [_part_record(part, columns, number)])


def _merge_dicts(a, b):
    return {c: a[c] + b[c] for c in a}


def _merge_pair(a, b):
    return a + b


def _merge_tagged(a, b):
    """Merge two ``(aggregate or dict of them, part records)``."""
    merged = _merge_dicts(a[0], b[0]) if isinstance(a[0], dict) else a[0] + b[0]
    return merged, a[1] + b[1]


def _check_parts(tagged):
    """The merged aggregate, once its partitions are known to be one collection's, each once.

    See :func:`ldpnum._frame.check_parts`: a partition read from a part file of another collection, or a copied part
    file, is refused.
    """
    from ._frame import check_parts

    total, records = tagged
    check_parts(records, "the partitions")
    return total


# -- the collection-level functions ----------------------------------------------------------------------------
def _nonce(seed):
    return os.urandom(16).hex() if seed is None else None


def privatize_frame(ddf: dd.DataFrame, mechanisms: Mapping[Any, Mechanism], *, rng: SeedLike = None,
                    strategy: str | None = None, nan_policy: str = "raise", fill_value: Any = None,
                    shuffled: bool = False, shuffle_delta: float = 1e-6, keys: Any = None,
                    round: int | None = None) -> dd.DataFrame:
    """Privatize the columns of a Dask DataFrame, partition by partition (lazy).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    mechanisms, strategy, nan_policy, fill_value
        As for :func:`ldpnum.pandas.privatize_frame`.
    shuffled, shuffle_delta : optional
        As for :func:`ldpnum.pandas.privatize_frame`: ``shuffled=True`` declares **all** the reports, every
        partition's, one shuffled batch; :func:`aggregate` then declares the merged aggregate so (its
        estimates show the central ε of the whole batch).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        ``None`` (default): secure randomness. Otherwise partition ``i`` draws from ``child_rng(rng, i)``.
    keys : optional
        Each person's key, for longitudinal (memoized) columns (required then, refused otherwise), aligned
        with the data by index so that every partition holds its own people's keys:

        * ``ClientKeys.to_frame(index=person ids)`` as a **Dask** DataFrame: both frames indexed by person id
          with known divisions; the keys are repartitioned to the data's divisions (the data keep their
          partitions), and each partition matches its rows to its keys;
        * the same as a **pandas** DataFrame: sent to every partition (16 bytes per person), which matches its
          rows by index; any partitioning, known divisions or not;
        * :class:`~ldpnum.ClientKeys` row for row: only for a frame indexed by the rows' positions ``0..n-1``
          with known divisions (``dd.from_pandas`` of a frame with a RangeIndex); each partition takes the keys
          at its positions.

        Anything that cannot be aligned is refused on the driver. A person in several rows (panel data) uses
        their one key; a person without a key fails the partition with one error naming them.
    round : int, optional
        The round of a longitudinal collection, recorded in the memoized columns' specs (as for pandas).

    Returns
    -------
    dask.dataframe.DataFrame
        Report columns with their specs in ``attrs``, partitioned as ``ddf``.

    Notes
    -----
    Each call on one person's values spends the privacy budget of the pandas call it mirrors (ε per
    privatized column, by sequential composition, for ``strategy="all-columns"``); estimators are
    post-processing. Mechanisms, column kinds and dtypes are checked here, on the driver, before any task
    runs; each partition's values are validated before that partition's first draw. A longitudinal column's
    reports are ε1-LDP each, and all of a person's reports about one memoized value together ε∞-LDP, in
    every round. The Dask accessor keeps no privacy ledger (as for one-shot collections): charge one with the
    pandas accessor or ``ldpnum privatize --ledger``. A bad value in one
    partition fails the computation, but partitions run independently, so others may have been randomized
    already (their reports are discarded unless the same computation writes them out, e.g.
    ``to_parquet``).

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, ldpnum as ldp
    >>> import ldpnum.dask
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> ddf = dd.from_pandas(pd.DataFrame({"x": np.linspace(0, 1, 100)}), npartitions=4)
    >>> r = ddf.ldp.privatize({"x": m}, rng=0)
    >>> len(r.compute(scheduler="sync"))
    100
    """
    seed = run_seed(rng)
    delta = check_shuffle(shuffled, shuffle_delta, make_meta(ddf))
    strategy = resolve_strategy(strategy, mechanisms, stacklevel=4)  # the pandas default, warned once here
    collection = new_collection_id(seed)
    part_keys, meta_keys = _driver_keys(ddf, keys)
    meta = _declared(partition_privatize(make_meta(ddf), mechanisms, seed=0, partition_index=0, strategy=strategy,
                                         nan_policy=nan_policy, fill_value=fill_value, keys=meta_keys, round=round,
                                         ), delta, collection)
    return ddf.map_partitions(_privatize_frame_partition, mechanisms, seed, strategy, nan_policy, fill_value,
                              _nonce(seed), delta, collection, part_keys, round, meta=meta)


def privatize_series(dds: dd.Series, mechanism: Mechanism, *, rng: SeedLike = None, nan_policy: str = "raise",
                     fill_value: Any = None, shuffled: bool = False,
                     shuffle_delta: float = 1e-6, keys: Any = None, round: int | None = None) -> dd.Series:
    """Privatize a Dask Series partition by partition (lazy).

    See :func:`privatize_frame` (also for ``keys`` and ``round``).

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, ldpnum as ldp
    >>> import ldpnum.dask
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> s = dd.from_pandas(pd.Series(np.linspace(0, 1, 100), name="x"), npartitions=4)
    >>> s.ldp.privatize(m, rng=0).ldp.aggregate().compute(scheduler="sync").n_reports
    100
    """
    seed = run_seed(rng)
    delta = check_shuffle(shuffled, shuffle_delta, make_meta(dds))
    collection = new_collection_id(seed)
    part_keys, meta_keys = _driver_keys(dds, keys)
    meta = _declared(partition_privatize(make_meta(dds), mechanism, seed=0, partition_index=0, nan_policy=nan_policy,
                                         fill_value=fill_value, keys=meta_keys, round=round), delta, collection)
    return dds.map_partitions(_privatize_series_partition, mechanism, seed, nan_policy, fill_value,
                              _nonce(seed), delta, collection, part_keys, round, meta=meta)


def tree_sum(parts: Sequence[Any], merge: Callable[[Any, Any], Any] = _merge_pair) -> Any:
    """Merge a list of Delayed aggregates along a balanced binary tree of delayed merges; returns a Delayed.

    :func:`ldpnum.engines.tree_merge` with a delayed ``merge(a, b)`` (a module-level function: ``a + b`` by
    default): depth ``ceil(log2(len(parts)))``, every task adds two small count arrays.

    Examples
    --------
    >>> import dask
    >>> from ldpnum import Aggregate, Spec
    >>> from ldpnum.dask import tree_sum
    >>> spec = Spec("demo", 1.0, 2)
    >>> tree_sum([dask.delayed(Aggregate([i, 1], spec)) for i in range(5)]).compute().counts
    array([10,  5])
    """
    return tree_merge(parts, merge=dask.delayed(merge, pure=True))


def _column_spec(obj, column, spec):
    """The spec recorded in the collection's metadata for ``column`` (or ``spec``), None when unknown."""
    from ._frame import column_specs, spec_for

    meta = make_meta(obj)
    name = column if column is not None else meta.name
    if spec is None and name not in column_specs(meta):
        return None  # partitions read their own attrs (and fail clearly if they have none)
    return spec_for(meta, name, spec)


def _report_columns(ddf):
    """The report columns recorded in a Dask DataFrame's metadata, in order: column -> Spec."""
    from ._frame import column_specs

    meta = make_meta(ddf)
    return {c: s for c, s in column_specs(meta).items() if c in meta.columns}


def aggregate(obj: dd.DataFrame | dd.Series, column: Any = None, *, spec: Spec | None = None) -> Delayed:
    """The merged :class:`~ldpnum.Aggregate` of a report column, as a ``dask.delayed.Delayed``.

    Parameters
    ----------
    obj : dask.dataframe.DataFrame or dask.dataframe.Series
        Reports (e.g. from :func:`privatize_frame`).
    column : str, optional
        The report column of a DataFrame. Without it: a Delayed dict column -> Aggregate of every report
        column the frame records (as the pandas ``df.ldp.aggregate()``).
    spec : Spec, optional
        Needed only when the collection does not record the column's spec; must equal it otherwise.

    Returns
    -------
    dask.delayed.Delayed
        Computes to the Aggregate of all partitions: each partition is aggregated where it lies, and the
        aggregates are added pairwise along a binary tree (only ``n_cells`` counts per partition move).
        Counts add exactly, so the result equals the aggregate of all reports in one place.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, ldpnum as ldp
    >>> import ldpnum.dask
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> ddf = dd.from_pandas(pd.DataFrame({"x": np.linspace(0, 1, 100)}), npartitions=4)
    >>> agg = ddf.ldp.privatize({"x": m}, rng=0).ldp.aggregate("x").compute(scheduler="sync")
    >>> agg.n_reports, agg.spec == m.spec
    (100, True)
    """
    import dask.dataframe as dd

    if spec is not None and not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    if isinstance(obj, dd.DataFrame):
        if column is None:
            if spec is not None:
                raise TypeError("aggregate: spec= goes with one column")
            specs = _report_columns(obj)
            if not specs:
                raise ValueError("aggregate: the frame records no report columns; name the column and pass spec=")
            task = dask.delayed(_aggregate_columns, pure=True)
            columns = list(specs)
            parts = [task(part, columns, list(specs.values()), i)
                     for i, part in enumerate(obj[columns].to_delayed())]
            return _one_batch(obj, _checked(tree_sum(parts, merge=_merge_tagged)))
        if column not in obj.columns:
            raise ValueError(f"column {column!r} is not in the frame (columns: {list(obj.columns)})")
        obj = obj[[column]]  # only the report column is read from each partition
    elif isinstance(obj, dd.Series):
        if column is not None:
            raise TypeError("aggregate: a Series is one report column; do not pass column")
    else:
        raise TypeError(f"expected a Dask DataFrame or Series; got {type(obj).__name__}")
    spec = _column_spec(obj, column, spec)
    task = dask.delayed(_aggregate_partition, pure=True)
    parts = [task(part, column, spec, i) for i, part in enumerate(obj.to_delayed())]
    return _one_batch(obj, _checked(tree_sum(parts, merge=_merge_tagged)))


def _checked(tagged):
    return dask.delayed(_check_parts, pure=True)(tagged)


def _one_batch(obj, total):
    """``total`` (a Delayed aggregate or dict of them) declared one shuffled batch when the collection says so."""
    info = _info(obj)
    delta = info.get("shuffle_delta")
    return total if delta is None else dask.delayed(_as_one_batch, pure=True)(total, delta,
                                                                             info.get("epsilon_per_row"))


def _mech_agg(obj, column, spec, estimate=None, options=None):
    """Compute the merged aggregate; return (mechanism, aggregate) on the driver.

    With ``estimate``, the estimator and its ``method=`` in ``options`` are checked against the spec in the
    collection's metadata first, before any partition is read.
    """
    known = _column_spec(obj, column, spec) if estimate is not None else None
    if known is not None:
        estimator(mechanism_of(known), estimate, options)
    agg = aggregate(obj, column, spec=spec).compute()
    return mechanism_of(agg.spec), agg


def _estimate(obj, column, spec, which, **kwargs):
    from ._results import named

    mech, agg = _mech_agg(obj, column, spec, which, kwargs)
    return named(estimator(mech, which)(agg, **kwargs), obj.name if column is None else column)


def _quantile(obj, column, q, spec, **kwargs):
    mech, agg = _mech_agg(obj, column, spec)
    return quantiles_named(mech, agg, q, column if column is not None else make_meta(obj).name, **kwargs)


def _range(obj, column, lo, hi, spec, **kwargs):
    mech, agg = _mech_agg(obj, column, spec)
    return range_query(mech, agg, lo, hi, **kwargs)


def _info(obj):
    from ._frame import frame_info

    return frame_info(make_meta(obj)) or {}


# -- accessors -------------------------------------------------------------------------------------------------
@register_dataframe_accessor("ldp")
class DaskFrameAccessor:
    """``ddf.ldp``: privatize columns of a Dask DataFrame; aggregate and estimate its report columns.

    Mirrors the pandas ``df.ldp`` (:class:`ldpnum.pandas.DataFrameAccessor`); the estimates take the report
    column first. Every estimate computes the merged aggregate (a tree-sum over partitions, on the current
    Dask scheduler) and runs the estimator once on the driver.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, ldpnum as ldp
    >>> import ldpnum.dask
    >>> x = pd.DataFrame({"t": np.random.default_rng(0).uniform(0, 60, 20_000)})
    >>> r = dd.from_pandas(x, npartitions=4).ldp.privatize({"t": ldp.SquareWave(2.0, (0, 60))}, rng=1)
    >>> r.ldp.epsilon_per_row
    2.0
    >>> est = r.ldp.estimate_mean("t")
    >>> bool(abs(est.value - 30) < 5 * est.standard_error)
    True
    """

    def __init__(self, ddf):
        self._obj = ddf

    def privatize(self, mechanisms: Mapping[Any, Mechanism], *, rng: SeedLike = None,
                  strategy: str | None = None,
                  nan_policy: str = "raise", fill_value: Any = None, shuffled: bool = False,
                  shuffle_delta: float = 1e-6, keys: Any = None, round: int | None = None) -> dd.DataFrame:
        """Lazy privatized report frame; see :func:`ldpnum.dask.privatize_frame`."""
        return privatize_frame(self._obj, mechanisms, rng=rng, strategy=strategy, nan_policy=nan_policy,
                               fill_value=fill_value, shuffled=shuffled, shuffle_delta=shuffle_delta, keys=keys,
                               round=round)

    @property
    def specs(self) -> dict[Any, Spec]:
        """Report column -> :class:`~ldpnum.Spec`, from the collection's metadata."""
        return _report_columns(self._obj)

    @property
    def epsilon_per_row(self) -> float | None:
        """Total ε each row spent (None for a frame that is not a report frame)."""
        return _info(self._obj).get("epsilon_per_row")

    @property
    def strategy(self) -> str | None:
        """The strategy the report columns were privatized with (None if unknown)."""
        return _info(self._obj).get("strategy")

    def aggregate(self, column: Any = None, *, spec: Spec | None = None) -> Delayed:
        """Delayed merged Aggregate of report column ``column``; see :func:`ldpnum.dask.aggregate`.

        Without ``column``: a Delayed dict of every report column.
        """
        return aggregate(self._obj, column, spec=spec)

    def estimate_mean(self, column: Any, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.MeanEstimate` of ``column``'s mean, from the merged aggregate.

        A vector report column gives a :class:`~ldpnum.vectors.VectorMeanEstimate` named by its value columns.
        ``kwargs`` go to the mechanism's ``estimate_mean``: ``method="mle"`` (randomized response, stochastic
        rounding, Duchi et al.) is checked against the recorded spec before any partition is read.
        """
        mech, agg = _mech_agg(self._obj, column, spec, "estimate_mean", kwargs)
        return estimate_mean_named(mech, agg, make_meta(self._obj), column, **kwargs)

    def estimate_distribution(self, column: Any, *, spec: Spec | None = None,
                              **kwargs: Any) -> DistributionEstimate:
        """:class:`~ldpnum.DistributionEstimate` of ``column``; ``kwargs`` go to the estimator."""
        return _estimate(self._obj, column, spec, "estimate_distribution", **kwargs)

    def estimate_ranges(self, column: Any, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.RangeEstimate` of ``column`` (hierarchical histograms)."""
        return _estimate(self._obj, column, spec, "estimate_ranges", **kwargs)

    def estimate_frequencies(self, column: Any, *, spec: Spec | None = None,
                             **kwargs: Any) -> FrequencyEstimate:
        """:class:`~ldpnum.FrequencyEstimate` of ``column`` (frequency oracles)."""
        return _estimate(self._obj, column, spec, "estimate_frequencies", **kwargs)

    def heavy_hitters(self, column: Any, *, spec: Spec | None = None, **kwargs: Any) -> HeavyHittersEstimate:
        """:class:`~ldpnum.HeavyHittersEstimate` of ``column`` (PEM, TreeHist reports)."""
        return _estimate(self._obj, column, spec, "estimate_heavy_hitters", **kwargs)

    def quantile(self, column: Any, q: ArrayLike = 0.5, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """Estimated quantile(s) of ``column``: a float for a scalar ``q``, else a Series indexed by ``q``.

        As in the pandas accessor. From the range tree (hierarchical histograms) or the estimated distribution;
        ``kwargs`` go to that estimator.
        """
        return _quantile(self._obj, column, q, spec, **kwargs)

    def range(self, column: Any, lo: Any, hi: Any, *, spec: Spec | None = None,
              **kwargs: Any) -> Any:
        """Estimated fraction of people with ``column`` in ``[lo, hi]``."""
        return _range(self._obj, column, lo, hi, spec, **kwargs)

    def describe(self, *, level: float = 0.95, method: str = "unbiased") -> pd.DataFrame:
        """Per report column: mean with a ``level`` confidence interval and quartiles.

        Computed by :func:`ldpnum.collect.describe_aggregates` of the merged aggregates; ``method="mle"`` gives
        maximum-likelihood means (checked for every recorded column before any partition is read).
        """
        check_describe_method(_report_columns(self._obj), method)
        return describe_aggregates(aggregate(self._obj).compute(), level=level, method=method)


@register_series_accessor("ldp")
class DaskSeriesAccessor:
    """``dds.ldp``: privatize a Dask Series; aggregate and estimate a report Series.

    Mirrors the pandas ``s.ldp`` (:class:`ldpnum.pandas.SeriesAccessor`).

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, ldpnum as ldp
    >>> import ldpnum.dask
    >>> x = dd.from_pandas(pd.Series(np.random.default_rng(0).uniform(0, 100, 50_000)), npartitions=5)
    >>> r = x.ldp.privatize(ldp.SquareWave(epsilon=2.0, bounds=(0, 100)), rng=0)
    >>> q = r.ldp.quantile([0.25, 0.75])
    >>> bool(abs(q[0.25] - 25) < 5 and abs(q[0.75] - 75) < 5)
    True
    """

    def __init__(self, dds):
        self._obj = dds

    def privatize(self, mechanism: Mechanism, *, rng: SeedLike = None, nan_policy: str = "raise",
                  fill_value: Any = None, shuffled: bool = False, shuffle_delta: float = 1e-6, keys: Any = None,
                  round: int | None = None) -> dd.Series:
        """Lazy privatized report Series; see :func:`ldpnum.dask.privatize_series`."""
        return privatize_series(self._obj, mechanism, rng=rng, nan_policy=nan_policy, fill_value=fill_value,
                                shuffled=shuffled, shuffle_delta=shuffle_delta, keys=keys, round=round)

    @property
    def spec(self) -> Spec | None:
        """The :class:`~ldpnum.Spec` recorded for this report column (None for a column of values)."""
        return _column_spec(self._obj, None, None)

    @property
    def epsilon_per_row(self) -> float | None:
        """Total ε each row spent on the collection the column comes from (None if unknown)."""
        return _info(self._obj).get("epsilon_per_row")

    def aggregate(self, spec: Spec | None = None) -> Delayed:
        """Delayed merged Aggregate of the reports; see :func:`ldpnum.dask.aggregate`."""
        return aggregate(self._obj, spec=spec)

    def estimate_mean(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.MeanEstimate` of the mean, from the merged aggregate.

        A vector report column gives a :class:`~ldpnum.vectors.VectorMeanEstimate`; ``kwargs`` as for
        :meth:`DaskFrameAccessor.estimate_mean`.
        """
        mech, agg = _mech_agg(self._obj, None, spec, "estimate_mean", kwargs)
        meta = make_meta(self._obj)
        return estimate_mean_named(mech, agg, meta, meta.name, **kwargs)

    def describe(self, *, level: float = 0.95, spec: Spec | None = None, method: str = "unbiased") -> pd.DataFrame:
        """The report column's summary row (:meth:`ldpnum.pandas.SeriesAccessor.describe`), from the merged aggregate.

        ``method="mle"`` is checked against the recorded spec before any partition is read.
        """
        meta = make_meta(self._obj)
        known = _column_spec(self._obj, None, spec)
        if known is not None:
            check_describe_method({meta.name: known}, method)
        return describe_aggregates({meta.name: aggregate(self._obj, spec=spec).compute()}, level=level, method=method)

    def estimate_distribution(self, spec: Spec | None = None, **kwargs: Any) -> DistributionEstimate:
        """:class:`~ldpnum.DistributionEstimate`; ``kwargs`` go to the estimator."""
        return _estimate(self._obj, None, spec, "estimate_distribution", **kwargs)

    def estimate_ranges(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.RangeEstimate` (hierarchical histograms)."""
        return _estimate(self._obj, None, spec, "estimate_ranges", **kwargs)

    def estimate_frequencies(self, spec: Spec | None = None, **kwargs: Any) -> FrequencyEstimate:
        """:class:`~ldpnum.FrequencyEstimate` (frequency oracles)."""
        return _estimate(self._obj, None, spec, "estimate_frequencies", **kwargs)

    def heavy_hitters(self, spec: Spec | None = None, **kwargs: Any) -> HeavyHittersEstimate:
        """:class:`~ldpnum.HeavyHittersEstimate` (PEM, TreeHist reports)."""
        return _estimate(self._obj, None, spec, "estimate_heavy_hitters", **kwargs)

    def quantile(self, q: ArrayLike = 0.5, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """Estimated quantile(s); see :meth:`DaskFrameAccessor.quantile`."""
        return _quantile(self._obj, None, q, spec, **kwargs)

    def range(self, lo: Any, hi: Any, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """Estimated fraction of people with values in ``[lo, hi]``."""
        return _range(self._obj, None, lo, hi, spec, **kwargs)
