"""ldpnum.dask: the Dask accessor privatizes per partition with its own stream, aggregates by a tree-sum."""

import doctest
import warnings

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from dask.delayed import Delayed  # noqa: E402

import ldpnum as ldp  # noqa: E402
import ldpnum.dask as ldask  # noqa: E402
import ldpnum.engines  # noqa: E402
from ldpnum._frame import attach_specs  # noqa: E402

SW = ldp.SquareWave(1.0, (0, 1))
HH = ldp.HierarchicalHistogram(1.0, (0, 1))
SEED = 20261122


@pytest.fixture(autouse=True)
def sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="module")
def thread_client():
    """One in-process cluster for the file: catches tasks that do not pickle."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # port-in-use notices and the like
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                           dashboard_address=None)
        client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def _values(n=6000, seed=0):
    return np.random.default_rng(seed).beta(5, 2, n)


def _report_frame(mech=SW, n=6000, seed=0):
    r = mech.privatize(_values(n, seed), rng=seed)
    return r, attach_specs(pd.DataFrame({"r": r.codes, "other": np.arange(n)}), {"r": mech.spec})


# -- aggregate: a tree-sum of partition aggregates --------------------------------------------------------------
@pytest.mark.parametrize("npartitions", [1, 3, 8])
def test_merged_partition_aggregates_equal_the_whole(npartitions):
    r, pdf = _report_frame()
    ddf = dd.from_pandas(pdf, npartitions=npartitions)
    whole = SW.aggregate(r)
    delayed = ddf.ldp.aggregate("r")
    assert isinstance(delayed, Delayed)
    assert delayed.compute() == whole
    assert ddf["r"].ldp.aggregate().compute() == whole
    assert ldask.aggregate(ddf, "r").compute() == whole
    merges = [k for k in dict(delayed.__dask_graph__()) if str(k).startswith("_merge_pair")]
    assert len(merges) == ddf.npartitions - 1  # a binary tree: n - 1 additions


def test_estimates_are_computed_once_from_the_merged_aggregate():
    r, pdf = _report_frame()
    ddf = dd.from_pandas(pdf, npartitions=4)
    whole = SW.aggregate(r)
    assert ddf.ldp.estimate_mean("r") == SW.estimate_mean(whole)
    assert ddf["r"].ldp.estimate_mean() == SW.estimate_mean(whole)
    d = ddf.ldp.estimate_distribution("r", n_bins=32)
    assert d == SW.estimate_distribution(whole, n_bins=32)
    assert ddf["r"].ldp.estimate_distribution(n_bins=32) == d
    assert np.array_equal(ddf.ldp.quantile("r", [0.25, 0.5], n_bins=32), d.quantile([0.25, 0.5]))
    assert ddf["r"].ldp.quantile(0.5, n_bins=32) == d.quantile(0.5)
    with pytest.raises(TypeError, match="no estimate_ranges"):
        ddf.ldp.estimate_ranges("r")


def test_hierarchical_histogram_ranges_and_quantiles():
    r, pdf = _report_frame(HH, n=20_000)
    ddf = dd.from_pandas(pdf, npartitions=3)
    whole = HH.aggregate(r)
    est = ddf.ldp.estimate_ranges("r")
    assert est == HH.estimate_ranges(whole)
    assert ddf["r"].ldp.quantile(0.5) == HH.estimate_ranges(whole).quantile(0.5)
    assert ddf.ldp.estimate_distribution("r") == HH.estimate_distribution(whole)


def test_per_report_count_aggregates_merge_with_their_report_count():
    sue = ldp.SUE(1.0, k=6)
    codes = np.arange(3000) % 6
    r = sue.privatize(codes, rng=3)
    parts = [sue.aggregate(r[i:i + 1000]) for i in range(0, 3000, 1000)]
    merged = ldask.tree_sum([dask.delayed(p) for p in parts]).compute()
    assert merged == sue.aggregate(r) and merged.n_reports == 3000


def test_spec_from_argument_when_the_collection_records_none():
    r, pdf = _report_frame()
    bare = dd.from_pandas(pd.DataFrame({"r": r.codes}), npartitions=3)
    with pytest.raises(ValueError, match="carries no ldpnum spec"):
        bare.ldp.aggregate("r").compute()
    assert bare.ldp.aggregate("r", spec=SW.spec).compute() == SW.aggregate(r)
    ddf = dd.from_pandas(pdf, npartitions=3)
    with pytest.raises(ldp.SpecMismatchError):
        ddf.ldp.aggregate("r", spec=ldp.SquareWave(2.0, (0, 1)).spec)
    with pytest.raises(ValueError, match="column 'nope'"):
        ddf.ldp.aggregate("nope")
    with pytest.raises(TypeError):
        ldask.aggregate(ddf)
    with pytest.raises(TypeError):
        ldask.aggregate(ddf["r"], "r")
    with pytest.raises(TypeError):
        ldask.aggregate(pdf, "r")
    with pytest.raises(TypeError):
        ddf.ldp.aggregate("r", spec=SW.spec.to_dict())
    with pytest.raises(ValueError):
        ldask.tree_sum([])


def test_aggregate_on_a_cluster_equals_the_synchronous_one(thread_client):
    r, pdf = _report_frame()
    ddf = dd.from_pandas(pdf, npartitions=5)
    assert thread_client.compute(ddf.ldp.aggregate("r")).result() == SW.aggregate(r)


def test_docstring_examples():
    pytest.importorskip("ldpnum.pandas")  # the privatize examples run the pandas functions
    for module in (ldpnum.engines, ldask):
        finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        for test in finder.find(module):
            runner.run(test)
        assert runner.failures == 0, module.__name__
