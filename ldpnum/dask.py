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
the stream ``child_rng(rng, i)`` (:func:`ldpnum._random.child_rng`). A seeded run therefore gives the same
reports under every scheduler and any number of workers, equal to the pandas result on the same
partitions; ``rng=None`` (the default, for real collections) keys every partition afresh from the
operating system, and two calls are two independent collections.

*Aggregate* reduces each partition to an :class:`~ldpnum.Aggregate` where it lies, then adds them along a
balanced binary tree of delayed merges (``to_delayed()``): only the counts move, ``8 × n_cells`` bytes
per partition (8 KB for 1024 cells), never the reports. The merge is exact integer addition, so the result
equals the aggregate of all reports in one place. *Estimates* (``estimate_mean``,
``estimate_distribution``, ``estimate_ranges``, ``quantile``) compute the merged aggregate and run the
estimator once on the driver (post-processing: no privacy cost).

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

import os

import dask
from dask.dataframe.extensions import register_dataframe_accessor, register_series_accessor
from dask.dataframe.utils import make_meta

import numpy as np

from ._core import Spec
from ._random import child_rng, resolve_rng
from .engines import _reports_of, aggregate_frame, partition_privatize

__all__ = ["DaskFrameAccessor", "DaskSeriesAccessor", "privatize_frame", "privatize_series", "aggregate",
           "tree_sum"]


# -- randomness -----------------------------------------------------------------------------------------------
def _run_seed(rng):
    """The run's seed as something every partition can extend: None, an int or a SeedSequence.

    A Generator contributes 128 bits drawn from it on the driver (it advances, as on every use).
    """
    if rng is None:
        return None
    resolve_rng(rng)  # TypeError/ValueError for bad kinds and values, before anything runs
    if isinstance(rng, np.random.Generator):
        return child_rng(rng)
    return rng if isinstance(rng, np.random.SeedSequence) else int(rng)


def _partition_number(partition_info):
    if not partition_info or "number" not in partition_info:
        raise RuntimeError("ldpnum.dask: the partition number is unknown (partition_info missing)")
    return int(partition_info["number"])


# -- partition tasks (module level: pickled by reference) ------------------------------------------------------
def _privatize_frame_partition(df, mechanisms, seed, strategy, nan_policy, nonce, partition_info=None):
    """One partition of :func:`privatize_frame`; ``nonce`` only makes a secure run's task keys unique."""
    return partition_privatize(df, mechanisms, seed=seed, partition_index=_partition_number(partition_info),
                               strategy=strategy, nan_policy=nan_policy)


def _privatize_series_partition(s, mechanism, seed, nan_policy, fill_value, nonce, partition_info=None):
    """One partition of :func:`privatize_series`."""
    from .pandas import privatize_series as _privatize

    rng = child_rng(seed, _partition_number(partition_info))
    return _privatize(s, mechanism, rng=rng, nan_policy=nan_policy, fill_value=fill_value)


def _aggregate_partition(part, column, spec):
    """The Aggregate of one partition (a pandas DataFrame with ``column``, or a report Series)."""
    import pandas as pd

    if isinstance(part, pd.Series):
        from .mechanisms import from_spec

        reports = _reports_of(part, spec)
        return from_spec(reports.spec).aggregate(reports)
    return aggregate_frame(part, column, spec)


def _merge_pair(a, b):
    return a + b


# -- the collection-level functions ----------------------------------------------------------------------------
def _nonce(seed):
    return os.urandom(16).hex() if seed is None else None


def privatize_frame(ddf, mechanisms, *, rng=None, strategy="all-columns", nan_policy="raise"):
    """Privatize the columns of a Dask DataFrame, partition by partition (lazy).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    mechanisms, strategy, nan_policy
        As for :func:`ldpnum.pandas.privatize_frame`.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        ``None`` (default): secure randomness. Otherwise partition ``i`` draws from ``child_rng(rng, i)``.

    Returns
    -------
    dask.dataframe.DataFrame
        Report columns with their specs in ``attrs``, partitioned as ``ddf``.

    Notes
    -----
    Each call on one person's values spends the privacy budget of the pandas call it mirrors (ε per
    privatized column, by sequential composition, for ``strategy="all-columns"``); estimators are
    post-processing. Every partition is validated before its first draw.

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
    seed = _run_seed(rng)
    meta = partition_privatize(make_meta(ddf), mechanisms, seed=0, partition_index=0, strategy=strategy,
                               nan_policy=nan_policy)
    return ddf.map_partitions(_privatize_frame_partition, mechanisms, seed, strategy, nan_policy,
                              _nonce(seed), meta=meta)


def privatize_series(dds, mechanism, *, rng=None, nan_policy="raise", fill_value=None):
    """Privatize a Dask Series partition by partition (lazy); see :func:`privatize_frame`.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, ldpnum as ldp
    >>> import ldpnum.dask
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> s = dd.from_pandas(pd.Series(np.linspace(0, 1, 100), name="x"), npartitions=4)
    >>> s.ldp.privatize(m, rng=0).ldp.aggregate().compute(scheduler="sync").n_reports
    100
    """
    from .pandas import privatize_series as _privatize

    seed = _run_seed(rng)
    meta = _privatize(make_meta(dds), mechanism, rng=0, nan_policy=nan_policy, fill_value=fill_value)
    return dds.map_partitions(_privatize_series_partition, mechanism, seed, nan_policy, fill_value,
                              _nonce(seed), meta=meta)


def tree_sum(parts):
    """Merge a list of Delayed aggregates along a balanced binary tree of delayed ``+``; returns a Delayed.

    Depth ``ceil(log2(len(parts)))``; every task adds two small count arrays.
    """
    level = list(parts)
    if not level:
        raise ValueError("tree_sum needs at least one partition")
    merge = dask.delayed(_merge_pair, pure=True)
    while len(level) > 1:
        level = [merge(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    return level[0]


def _column_spec(obj, column, spec):
    """The spec recorded in the collection's metadata for ``column`` (or ``spec``), None when unknown."""
    from ._frame import column_specs, spec_for

    meta = make_meta(obj)
    name = column if column is not None else meta.name
    if spec is None and name not in column_specs(meta):
        return None  # partitions read their own attrs (and fail clearly if they have none)
    return spec_for(meta, name, spec)


def aggregate(obj, column=None, *, spec=None):
    """The merged :class:`~ldpnum.Aggregate` of a report column, as a ``dask.delayed.Delayed``.

    Parameters
    ----------
    obj : dask.dataframe.DataFrame or dask.dataframe.Series
        Reports (e.g. from :func:`privatize_frame`).
    column : str, optional
        The report column (DataFrames only).
    spec : Spec, optional
        Needed only when the collection does not record the column's spec.

    Returns
    -------
    dask.delayed.Delayed
        Computes to the Aggregate of all partitions: each partition is aggregated where it lies, and the
        aggregates are added pairwise along a binary tree (only ``n_cells`` counts per partition move).

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
            raise TypeError("aggregate: pass the report column of the DataFrame")
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
    return tree_sum([task(part, column, spec) for part in obj.to_delayed()])


def _estimate(obj, column, spec, method, **kwargs):
    from .mechanisms import from_spec

    agg = aggregate(obj, column, spec=spec).compute()
    mech = from_spec(agg.spec)
    if not hasattr(mech, method):
        raise TypeError(f"{type(mech).__name__} reports have no {method} (mechanism {agg.spec})")
    return getattr(mech, method)(agg, **kwargs)


def _quantile(obj, column, q, spec, **kwargs):
    from .mechanisms import from_spec

    agg = aggregate(obj, column, spec=spec).compute()
    mech = from_spec(agg.spec)
    if hasattr(mech, "estimate_ranges"):
        est = mech.estimate_ranges(agg, **kwargs)
    elif hasattr(mech, "estimate_distribution"):
        est = mech.estimate_distribution(agg, **kwargs)
    else:
        raise TypeError(f"{type(mech).__name__} reports estimate no distribution, hence no quantile")
    return est.quantile(q)


# -- accessors -------------------------------------------------------------------------------------------------
@register_dataframe_accessor("ldp")
class DaskFrameAccessor:
    """``ddf.ldp``: privatize columns of a Dask DataFrame, aggregate and estimate report columns.

    Every estimate computes the merged aggregate (a tree-sum over partitions) and estimates on the driver.
    """

    def __init__(self, ddf):
        self._obj = ddf

    def privatize(self, mechanisms, *, rng=None, strategy="all-columns", nan_policy="raise"):
        """Lazy privatized copy; see :func:`ldpnum.dask.privatize_frame`."""
        return privatize_frame(self._obj, mechanisms, rng=rng, strategy=strategy, nan_policy=nan_policy)

    def aggregate(self, column, *, spec=None):
        """Delayed merged Aggregate of report column ``column``; see :func:`ldpnum.dask.aggregate`."""
        return aggregate(self._obj, column, spec=spec)

    def estimate_mean(self, column, *, spec=None):
        """``mechanism.estimate_mean`` of the merged aggregate of ``column``: a MeanEstimate."""
        return _estimate(self._obj, column, spec, "estimate_mean")

    def estimate_distribution(self, column, *, spec=None, **kwargs):
        """``mechanism.estimate_distribution(agg, **kwargs)``: a DistributionEstimate."""
        return _estimate(self._obj, column, spec, "estimate_distribution", **kwargs)

    def estimate_ranges(self, column, *, spec=None, **kwargs):
        """``mechanism.estimate_ranges(agg, **kwargs)`` (hierarchical histograms): a RangeEstimate."""
        return _estimate(self._obj, column, spec, "estimate_ranges", **kwargs)

    def quantile(self, column, q, *, spec=None, **kwargs):
        """Estimated quantile(s) ``q`` of ``column``: from the range tree (hierarchical histograms) or the
        estimated distribution; ``kwargs`` go to that estimator."""
        return _quantile(self._obj, column, q, spec, **kwargs)


@register_series_accessor("ldp")
class DaskSeriesAccessor:
    """``dds.ldp``: privatize a Dask Series, aggregate and estimate a report Series."""

    def __init__(self, dds):
        self._obj = dds

    def privatize(self, mechanism, *, rng=None, nan_policy="raise", fill_value=None):
        """Lazy privatized copy; see :func:`ldpnum.dask.privatize_series`."""
        return privatize_series(self._obj, mechanism, rng=rng, nan_policy=nan_policy, fill_value=fill_value)

    def aggregate(self, *, spec=None):
        """Delayed merged Aggregate of the reports; see :func:`ldpnum.dask.aggregate`."""
        return aggregate(self._obj, spec=spec)

    def estimate_mean(self, *, spec=None):
        """``mechanism.estimate_mean`` of the merged aggregate: a MeanEstimate."""
        return _estimate(self._obj, None, spec, "estimate_mean")

    def estimate_distribution(self, *, spec=None, **kwargs):
        """``mechanism.estimate_distribution(agg, **kwargs)``: a DistributionEstimate."""
        return _estimate(self._obj, None, spec, "estimate_distribution", **kwargs)

    def estimate_ranges(self, *, spec=None, **kwargs):
        """``mechanism.estimate_ranges(agg, **kwargs)`` (hierarchical histograms): a RangeEstimate."""
        return _estimate(self._obj, None, spec, "estimate_ranges", **kwargs)

    def quantile(self, q, *, spec=None, **kwargs):
        """Estimated quantile(s) ``q``; see :meth:`DaskFrameAccessor.quantile`."""
        return _quantile(self._obj, None, q, spec, **kwargs)

