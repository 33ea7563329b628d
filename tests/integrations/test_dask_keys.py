"""Longitudinal collection through the Dask accessor: keys aligned with the data by index (partitioned with the
data), rounds, equality with the pandas accessor on the same partitions, keys and seed, and bad input refused."""

import warnings

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import ldpnum as ldp  # noqa: E402
import ldpnum.dask  # noqa: E402,F401
from ldpnum.engines import child_rng  # noqa: E402
from ldpnum.exceptions import SpecMismatchError  # noqa: E402
from ldpnum.pandas import privatize_frame, privatize_series  # noqa: E402

N = 4000
K = 8
SEED = 20261128
LGRR = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=1.0, k=K)
MECHS = {"app": LGRR, "age": ldp.Duchi(0.5, (0, 100))}


@pytest.fixture(autouse=True)
def sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"app": rng.integers(0, K, N), "age": rng.uniform(0, 100, N)},
                        index=pd.Index(np.arange(N) * 5 + 3, name="pid"))


@pytest.fixture(scope="module")
def keys():
    return ldp.ClientKeys.generate(N, rng=1)


@pytest.fixture(scope="module")
def key_frame(frame, keys):
    return keys.to_frame(index=frame.index)


def _pandas_on_partitions(ddf, fn):
    parts = [ddf.get_partition(i).compute() for i in range(ddf.npartitions)]
    return ldp.pandas.concat([fn(p, i) for i, p in enumerate(parts)])


def _dask_keys(key_frame, npartitions):
    """The keys as a Dask frame with other partitions than the data (and people the data do not have)."""
    extra = ldp.ClientKeys.generate(50, rng=2).to_frame(index=pd.Index(np.arange(50) * 5 + 4, name="pid"))
    return dd.from_pandas(pd.concat([key_frame, extra]).sort_index(), npartitions=npartitions)


@pytest.mark.parametrize("how", ["dask", "pandas"])
def test_seeded_reports_equal_the_pandas_accessor_on_the_same_partitions(how, frame, key_frame):
    ddf = dd.from_pandas(frame, npartitions=4)
    given = _dask_keys(key_frame, 3) if how == "dask" else key_frame.iloc[::-1]
    reports = ddf.ldp.privatize(MECHS, keys=given, round=2, rng=SEED, strategy="all-columns")
    assert reports.npartitions == ddf.npartitions and reports.divisions == ddf.divisions
    got = reports.compute()
    expected = _pandas_on_partitions(ddf, lambda p, i: privatize_frame(
        p, MECHS, keys=key_frame, round=2, rng=child_rng(SEED, i), strategy="all-columns"))
    pd.testing.assert_frame_equal(got, expected)
    assert reports.ldp.specs == {"app": LGRR.at_round(2).spec, "age": MECHS["age"].spec}
    # The permanent layer depends on the keys and values only: the same as the pandas one on the whole frame.
    perm = LGRR.permanent(frame["app"].to_numpy(), keys=ldp.ClientKeys.from_frame(key_frame))
    p_keep = LGRR.plan.keep_count() / 2**64
    assert abs(np.mean(got["app"].to_numpy() == perm) - p_keep) < 5 * np.sqrt(p_keep * (1 - p_keep) / N)


def test_client_keys_row_for_row_on_a_range_index(frame, keys):
    plain = frame.reset_index(drop=True)
    ddf = dd.from_pandas(plain, npartitions=5)
    got = ddf.ldp.privatize(MECHS, keys=keys, rng=SEED, strategy="all-columns").compute()
    expected = _pandas_on_partitions(ddf, lambda p, i: privatize_frame(
        p, MECHS, keys=keys[p.index[0]:p.index[-1] + 1], rng=child_rng(SEED, i), strategy="all-columns"))
    pd.testing.assert_frame_equal(got, expected)
    s = dd.from_pandas(plain["app"], npartitions=3)
    got_s = s.ldp.privatize(LGRR, keys=keys, round=0, rng=SEED).compute()
    expected_s = _pandas_on_partitions(s, lambda p, i: privatize_series(
        p, LGRR, keys=keys[p.index[0]:p.index[-1] + 1], round=0, rng=child_rng(SEED, i)))
    pd.testing.assert_series_equal(got_s, expected_s)


def test_rounds_aggregate_and_estimate_separately(frame, key_frame):
    ddf = dd.from_pandas(frame, npartitions=4)
    given = _dask_keys(key_frame, 2)
    days = [ddf.ldp.privatize({"app": LGRR}, keys=given, round=r, rng=SEED + r) for r in range(3)]
    aggs = [d.ldp.aggregate("app").compute() for d in days]
    assert [a.spec.get("round") for a in aggs] == [0, 1, 2]
    with pytest.raises(SpecMismatchError, match="round"):
        aggs[0] + aggs[1]
    for r, d in enumerate(days):
        est = d.ldp.estimate_frequencies("app")
        local = d.compute()["app"].ldp.estimate_frequencies()
        assert np.array_equal(est.frequencies, local.frequencies)
    truth = np.bincount(frame["app"], minlength=K) / N
    se = np.sqrt(LGRR.variance(truth) / N)
    assert np.all(np.abs(days[0].ldp.estimate_frequencies("app").frequencies - truth) < 5 * se)


def test_panel_data_uses_one_key_per_person(frame, key_frame):
    panel = pd.concat([frame.iloc[:300], frame.iloc[:300]]).sort_index()
    ddf = dd.from_pandas(panel, npartitions=3)
    got = ddf.ldp.privatize({"app": LGRR}, keys=_dask_keys(key_frame, 2), rng=SEED).compute()
    expected = _pandas_on_partitions(ddf, lambda p, i: privatize_frame(p, {"app": LGRR}, keys=key_frame,
                                                                       rng=child_rng(SEED, i)))
    pd.testing.assert_frame_equal(got, expected)


def test_the_same_reports_on_a_cluster(frame, key_frame):
    ddf = dd.from_pandas(frame, npartitions=4)
    sync = ddf.ldp.privatize(MECHS, keys=_dask_keys(key_frame, 3), rng=SEED, strategy="all-columns").compute()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            for given in (_dask_keys(key_frame, 3), key_frame):
                got = client.compute(ddf.ldp.privatize(MECHS, keys=given, rng=SEED, strategy="all-columns")).result()
                pd.testing.assert_frame_equal(got, sync)


# -- bad input: refused on the driver before any task runs, or by the partition that lacks a key -----------------
def test_bad_keys_are_refused_on_the_driver(frame, keys, key_frame):
    ddf = dd.from_pandas(frame, npartitions=4)
    cases = [
        (dict(), TypeError, "need each person's key"),
        (dict(keys="secret"), TypeError, "keys must be ClientKeys"),
        (dict(keys=keys), ValueError, "positions 0..3999"),
        (dict(keys=key_frame.astype("int64")), TypeError, "uint64"),
        (dict(keys=key_frame.rename(columns={"key1": "k1"})), ValueError, "key1"),
        (dict(keys=pd.concat([key_frame, key_frame.iloc[:1]])), ValueError, "more than once"),
        (dict(keys=key_frame, round=-1), ValueError, "round"),
        (dict(keys=key_frame, shuffled=True), ValueError, "shuffle"),
    ]
    for kwargs, err, match in cases:
        with pytest.raises(err, match=match):
            ddf.ldp.privatize(MECHS, rng=SEED, strategy="all-columns", **kwargs)
    with pytest.raises(ValueError, match="none of these columns is memoized"):
        ddf.ldp.privatize({"age": MECHS["age"]}, keys=key_frame, rng=SEED)
    with pytest.raises(ValueError, match="known divisions"):
        dd.from_pandas(frame, npartitions=4).clear_divisions().ldp.privatize(
            {"app": LGRR}, keys=_dask_keys(key_frame, 2), rng=SEED)
    plain = dd.from_pandas(frame.reset_index(drop=True), npartitions=4)
    with pytest.raises(ValueError, match="ClientKeys \\(3999 keys\\)"):
        plain.ldp.privatize({"app": LGRR}, keys=keys[1:], rng=SEED)
    with pytest.raises(ValueError, match="unknown divisions"):
        plain.clear_divisions().ldp.privatize({"app": LGRR}, keys=keys, rng=SEED)


def test_a_person_without_a_key_fails_the_partition_naming_them(frame, key_frame):
    ddf = dd.from_pandas(frame, npartitions=4)
    for given in (key_frame.drop(index=frame.index[1234]), _dask_keys(key_frame.drop(index=frame.index[1234]), 2)):
        with pytest.raises(ValueError, match=f"no key for 1 of the rows' people, first {frame.index[1234]} "):
            ddf.ldp.privatize({"app": LGRR}, keys=given, rng=SEED).compute()
