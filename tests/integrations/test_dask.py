"""ldpnum.dask: the Dask accessor privatizes per partition with its own stream, aggregates by a tree-sum."""

import doctest
import json
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
from ldpnum.engines import child_rng  # noqa: E402
from ldpnum.pandas import privatize_frame, privatize_series  # noqa: E402

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
    merges = [k for k in dict(delayed.__dask_graph__()) if str(k).startswith("_merge_tagged")]
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
    with pytest.raises(TypeError, match="do not estimate range trees"):
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
    with pytest.raises(ValueError, match="records no report columns"):
        ldask.aggregate(bare)
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
    for module in (ldpnum.engines, ldask):
        finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        for test in finder.find(module):
            runner.run(test)
        assert runner.failures == 0, module.__name__


# -- privatize: partition i draws from child_rng(rng, i) -------------------------------------------------------
MECHS = {"a": SW, "b": ldp.Piecewise(0.5, (0, 10))}


def _value_frame(n=3000, seed=1):
    g = np.random.default_rng(seed)
    return pd.DataFrame({"a": g.beta(5, 2, n), "b": g.uniform(0, 10, n), "raw": np.arange(n)})


def _pandas_on_partitions(ddf, fn):
    parts = [ddf.get_partition(i).compute() for i in range(ddf.npartitions)]
    return ldp.pandas.concat([fn(p, i) for i, p in enumerate(parts)])


@pytest.mark.parametrize("strategy", ["all-columns", "one-column-per-row"])
def test_seeded_dask_equals_pandas_on_the_same_partitions(strategy):
    ddf = dd.from_pandas(_value_frame(), npartitions=4)
    got = ddf.ldp.privatize(MECHS, rng=SEED, strategy=strategy).compute()
    expected = _pandas_on_partitions(
        ddf, lambda p, i: privatize_frame(p, MECHS, rng=child_rng(SEED, i), strategy=strategy))
    pd.testing.assert_frame_equal(got, expected)
    # the same record, except that Dask partitions carry no digest of the whole column's codes
    assert got.ldp.specs == expected.ldp.specs and got.ldp.epsilon_per_row == expected.ldp.epsilon_per_row
    assert got.ldp.strategy == strategy
    assert list(got.columns) == ["a", "b"]  # raw values never travel with reports
    aggs = ddf.ldp.privatize(MECHS, rng=SEED, strategy=strategy).ldp.aggregate().compute()
    n_reports = [aggs[c].n_reports for c in MECHS]
    assert n_reports == [got[c].notna().sum() for c in MECHS]
    assert sum(n_reports) == (len(got) if strategy == "one-column-per-row" else 2 * len(got))


def test_seeded_series_equals_pandas_on_the_same_partitions():
    s = dd.from_pandas(_value_frame()["a"], npartitions=3)
    got = s.ldp.privatize(SW, rng=SEED).compute()
    expected = _pandas_on_partitions(s, lambda p, i: privatize_series(p, SW, rng=child_rng(SEED, i)))
    pd.testing.assert_series_equal(got, expected)
    assert s.ldp.privatize(SW, rng=SEED).ldp.spec == SW.spec


def test_the_same_reports_on_every_scheduler(thread_client):
    ddf = dd.from_pandas(_value_frame(), npartitions=4)
    sync = ddf.ldp.privatize(MECHS, rng=SEED).compute()
    threads = ddf.ldp.privatize(MECHS, rng=SEED).compute(scheduler="threads")
    cluster = thread_client.compute(ddf.ldp.privatize(MECHS, rng=SEED)).result()
    pd.testing.assert_frame_equal(sync, threads)
    pd.testing.assert_frame_equal(sync, cluster)
    agg = thread_client.compute(ddf.ldp.privatize(MECHS, rng=SEED).ldp.aggregate("a")).result()
    assert agg == SW.aggregate(ldp.Reports(sync["a"].to_numpy(), SW.spec))
    est = thread_client.compute(ddf["b"].ldp.privatize(MECHS["b"], rng=None).ldp.aggregate()).result()
    assert est.n_reports == len(sync)


def test_merged_aggregates_of_privatized_partitions_equal_the_whole():
    ddf = dd.from_pandas(_value_frame(), npartitions=5)
    reports = ddf.ldp.privatize(MECHS, rng=SEED)
    local = reports.compute()
    aggs = reports.ldp.aggregate().compute()
    assert set(aggs) == {"a", "b"}
    for c, m in MECHS.items():
        assert aggs[c] == local[c].ldp.aggregate() == reports.ldp.aggregate(c).compute()
        assert aggs[c] == m.aggregate(ldp.Reports(local[c].to_numpy(), m.spec))
    pd.testing.assert_frame_equal(reports.ldp.describe(), local.ldp.describe())
    assert reports.ldp.specs == {"a": SW.spec, "b": MECHS["b"].spec}
    assert reports.ldp.epsilon_per_row == 1.5
    assert reports["a"].ldp.quantile(0.5) == local["a"].ldp.quantile(0.5)
    pd.testing.assert_series_equal(reports.ldp.quantile("a", [0.1, 0.9]), local["a"].ldp.quantile([0.1, 0.9]))
    assert reports.ldp.range("a", 0.2, 0.6) == local["a"].ldp.range(0.2, 0.6)
    assert reports["b"].ldp.estimate_mean() == local["b"].ldp.estimate_mean()


def test_secure_runs_differ():
    ddf = dd.from_pandas(_value_frame(), npartitions=3)
    a, b = ddf.ldp.privatize(MECHS), ddf.ldp.privatize(MECHS)  # rng=None
    ca, cb = dask.compute(a, b)  # one graph: the two collections must not share tasks
    assert not ca.equals(cb)
    assert not a.compute().equals(ca)  # a lazy secure collection draws afresh on every compute
    s = ddf["a"]
    assert not s.ldp.privatize(SW).compute().equals(s.ldp.privatize(SW).compute())
    assert a.ldp.aggregate("a").compute().n_reports == len(ca)


def test_secure_partitions_are_keyed_from_the_operating_system(monkeypatch):
    """rng=None: every partition and column keys its own stream from os.urandom, and nothing else feeds it."""
    import types

    from ldpnum import _random

    calls = []

    def fake_urandom(n):
        calls.append(n)
        return bytes([len(calls) % 256]) * n  # a distinct key per call

    monkeypatch.setattr(_random, "os", types.SimpleNamespace(urandom=fake_urandom))
    ddf = dd.from_pandas(pd.DataFrame({"a": np.full(3000, 0.5), "b": np.full(3000, 5.0)}), npartitions=3)
    first = ddf.ldp.privatize(MECHS).compute()
    assert calls == [16] * 6  # 3 partitions x 2 columns, one fresh key each
    parts = [first["a"].iloc[i * 1000:(i + 1) * 1000].to_numpy() for i in range(3)]
    assert not np.array_equal(parts[0], parts[1]) and not np.array_equal(parts[1], parts[2])
    calls.clear()
    again = ddf.ldp.privatize(MECHS).compute()  # the same keys again: the keys are the only source
    pd.testing.assert_frame_equal(first, again)
    calls.clear()
    ddf.ldp.privatize(MECHS, rng=SEED).compute()
    ddf["a"].ldp.privatize(SW, rng=SEED).compute()
    assert calls == []  # a seeded simulation never touches the operating system's generator
    ddf["a"].ldp.privatize(SW).compute()
    assert calls == [16] * 3


def test_empty_partitions_privatize_and_aggregate():
    df = _value_frame()
    ddf = dd.from_pandas(df, npartitions=4)
    sub = ddf[ddf["raw"] < 1000]  # the last partitions hold no rows
    assert [len(sub.get_partition(i).compute()) for i in range(4)] == [750, 250, 0, 0]
    reports = sub.ldp.privatize(MECHS, rng=SEED)
    local = reports.compute()
    assert len(local) == 1000
    assert reports.ldp.aggregate("a").compute() == SW.aggregate(ldp.Reports(local["a"].to_numpy(), SW.spec))
    assert reports["b"].ldp.aggregate().compute().n_reports == 1000
    nothing = reports[reports["a"] > 2**20]  # every partition empty
    assert nothing.ldp.aggregate("a").compute() == SW.empty_aggregate()
    assert sub["a"].ldp.privatize(SW, rng=SEED).ldp.aggregate().compute().n_reports == 1000


def test_generator_and_seed_sequence_rngs():
    ddf = dd.from_pandas(_value_frame(), npartitions=3)
    g1 = ddf.ldp.privatize(MECHS, rng=np.random.default_rng(5)).compute()
    g2 = ddf.ldp.privatize(MECHS, rng=np.random.default_rng(5)).compute()
    pd.testing.assert_frame_equal(g1, g2)
    ss = np.random.SeedSequence(11)
    got = ddf.ldp.privatize(MECHS, rng=ss).compute()
    expected = _pandas_on_partitions(ddf, lambda p, i: privatize_frame(p, MECHS, rng=child_rng(ss, i)))
    pd.testing.assert_frame_equal(got, expected)


def test_bad_input_is_refused_before_anything_runs():
    ddf = dd.from_pandas(_value_frame(), npartitions=3)
    for bad, exc in [(True, TypeError), (-1, ValueError), (1.5, TypeError), (np.random.RandomState(0), TypeError)]:
        with pytest.raises(exc):
            ddf.ldp.privatize(MECHS, rng=bad)
        with pytest.raises(exc):
            ddf["a"].ldp.privatize(SW, rng=bad)
    with pytest.raises(TypeError):
        ddf.ldp.privatize({"a": "square wave"})
    with pytest.raises(ValueError):
        ddf.ldp.privatize(MECHS, strategy="some")
    text = dd.from_pandas(pd.DataFrame({"a": ["x", "y"]}), npartitions=1)
    with pytest.raises(TypeError):
        text.ldp.privatize({"a": SW})


def test_missing_values_raise_or_are_imputed():
    df = _value_frame(300)
    df.loc[250, "a"] = np.nan
    ddf = dd.from_pandas(df, npartitions=3)
    with pytest.raises(ValueError, match="missing"):
        ddf.ldp.privatize(MECHS, rng=0).compute()
    got = ddf.ldp.privatize(MECHS, rng=0, nan_policy="impute", fill_value={"a": 0.5, "b": 5.0}).compute()
    assert len(got) == 300 and got["a"].notna().all()
    s = ddf["a"].ldp.privatize(SW, rng=0, nan_policy="impute", fill_value=0.5).compute()
    assert len(s) == 300


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # Dask's Parquet reader on pandas 3.1
def test_reports_survive_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    ddf = dd.from_pandas(_value_frame(), npartitions=3)
    reports = ddf.ldp.privatize(MECHS, rng=SEED)
    reports.to_parquet(tmp_path / "reports")
    back = dd.read_parquet(tmp_path / "reports")
    assert back.ldp.aggregate("a").compute() == reports.ldp.aggregate("a").compute()


def test_dask_is_an_optional_extra():
    """``pip install ldpnum[dask]`` brings Dask; plain ldpnum does not require it (and ``import ldpnum`` does
    not import it: tests/integrations/test_pandas.py)."""
    import importlib.metadata

    requires = importlib.metadata.metadata("ldpnum").get_all("Requires-Dist")
    extra = {r.split(";")[0].split(">")[0].split("[")[0] for r in requires if 'extra == "dask"' in r}
    assert {"dask", "distributed"} <= extra
    assert not any(r.startswith(("dask", "distributed")) and "extra ==" not in r for r in requires)


def test_tasks_carry_no_compiled_code():
    """What a worker receives refers to ldpnum by module and name: no Numba dispatcher travels by value
    (it would be recompiled on every worker), whatever the mechanism."""
    import cloudpickle

    numeric = {"sr": ldp.StochasticRounding(1.0, (0, 1)), "duchi": ldp.Duchi(1.0, (0, 1)),
               "pm": ldp.Piecewise(1.0, (0, 1)), "hy": ldp.Hybrid(1.0, (0, 1)), "lap": ldp.Laplace(1.0, (0, 1)),
               "sw": SW, "gw": ldp.GeneralWave(1.0, (0, 1), shape="triangle"), "hh": HH}
    codes = {"grr": ldp.GRR(1.0, k=5), "blh": ldp.BLH(1.0, k=5), "olh": ldp.OLH(1.0, k=5),
             "had": ldp.HadamardResponse(1.0, k=5), "pir": ldp.PIRappor(1.0, k=5)}  # one code per report
    x = _values(100)
    df = pd.DataFrame({**{c: x for c in numeric}, **{c: np.arange(100) % 5 for c in codes}})
    reports = dd.from_pandas(df, npartitions=2).ldp.privatize({**numeric, **codes}, rng=SEED)
    graphs = [reports.__dask_graph__(), reports.ldp.aggregate().__dask_graph__(),
              reports["sw"].ldp.aggregate().__dask_graph__()]
    for graph in graphs:
        blob = cloudpickle.dumps(dict(graph))
        assert b"numba" not in blob and b"llvmlite" not in blob
    assert reports.ldp.aggregate().compute()["olh"].n_reports == 100


@pytest.mark.slow
def test_worker_processes_import_ldpnum_and_use_the_kernel_cache(monkeypatch):
    """Worker processes unpickle the tasks by reference (module-level functions) and load the kernels."""
    from ldpnum._kernels import _jit

    # The partitions are small enough for the interpreted tier: this process and the workers (which inherit
    # the environment) use the compiled kernels, so that the workers have kernels to load from the cache.
    monkeypatch.setattr(_jit, "MODE", "compile")
    monkeypatch.setenv("LDPNUM_JIT", "compile")
    ddf = dd.from_pandas(_value_frame(), npartitions=4)
    expected = ddf.ldp.privatize(MECHS, rng=SEED).compute()
    processes = ddf.ldp.privatize(MECHS, rng=SEED).compute(scheduler="processes", num_workers=2)
    pd.testing.assert_frame_equal(processes, expected)  # Dask's local process pool (spawned workers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            reports = ddf.ldp.privatize(MECHS, rng=SEED)
            got = client.compute(reports).result()
            agg = client.compute(reports.ldp.aggregate("a")).result()
            stats = client.run(_kernel_cache_stats)
    pd.testing.assert_frame_equal(got, expected)
    assert agg == SW.aggregate(ldp.Reports(expected["a"].to_numpy(), SW.spec))
    for hits, misses in stats.values():  # the parent compiled (or loaded) them first: workers only load
        assert hits >= 2 and misses == 0


def _kernel_cache_stats():
    """On a worker: (kernels loaded from Numba's on-disk cache, kernels compiled) of ldpnum's dispatchers."""
    import sys

    from ldpnum._kernels._jit import Kernel

    hits = misses = 0
    for name, module in list(sys.modules.items()):
        if name.startswith("ldpnum._kernels"):
            for obj in vars(module).values():
                if isinstance(obj, Kernel) and obj.signatures:
                    hits += sum(obj.stats.cache_hits.values())
                    misses += sum(obj.stats.cache_misses.values())
    return hits, misses


def test_a_shuffled_collection_is_one_batch_across_partitions():
    # every partition's reports are one shuffled batch: the merged aggregate is declared with n = all reports
    # (merging the partitions' own declarations alone would give the epsilon of the smallest partition)
    x = np.random.default_rng(3).random(40_000)
    ddf = dd.from_pandas(pd.DataFrame({"x": x, "y": x / 2}), npartitions=5)
    m = ldp.SquareWave(4.0, (0, 1))
    r = ddf.ldp.privatize({"x": m, "y": m}, rng=1, strategy="all-columns", shuffled=True, shuffle_delta=1e-6)
    agg = r.ldp.aggregate("x").compute()
    want = ldp.accounting.shuffle_epsilon(8.0, 40_000, 1e-6)  # each row sent both columns: 4 + 4 (issue 25)
    assert agg.shuffle.n == 40_000 and agg.shuffle_batches == 1 and agg.shuffle.epsilon == want.epsilon
    both = r.ldp.aggregate().compute()
    assert all(a.shuffle.n == 40_000 for a in both.values())
    assert "central ε" in str(r.ldp.estimate_mean("x").privacy)
    # a Series, and the same counts as without the declaration
    s = dd.from_pandas(pd.Series(x, name="x"), npartitions=3)
    plain = s.ldp.privatize(m, rng=2).ldp.aggregate().compute()
    declared = s.ldp.privatize(m, rng=2, shuffled=True).ldp.aggregate().compute()
    assert plain.shuffle is None and declared.shuffle.n == 40_000
    np.testing.assert_array_equal(plain.counts, declared.counts)
    # the computed pandas frame keeps the one-batch declaration (the partitions' attrs agree)
    assert r.compute()["x"].ldp.aggregate().shuffle.n == 40_000
    with pytest.raises(TypeError, match="shuffled"):
        s.ldp.privatize(m, shuffled="yes")
    with pytest.raises(ValueError):
        s.ldp.privatize(m, shuffled=True, shuffle_delta=2.0)


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # Dask's Parquet reader on pandas 3.1
def test_a_foreign_or_duplicated_part_file_is_refused(tmp_path, capsys):
    # issue 25: a part file of another collection (same spec) or a copied part was merged silently (mean
    # 176 -> 537, 150,000 reports instead of 100,000). Every collection records an id; readers refuse parts of
    # two collections and two parts with the same codes (digest), in the CLI and in the Dask aggregate.
    pytest.importorskip("pyarrow")
    import shutil

    from ldpnum.cli import main

    x = pd.DataFrame({"t": np.random.default_rng(0).uniform(0, 300, 4000)})
    m = ldp.Duchi(1.0, (0, 1000))
    one = dd.from_pandas(x, npartitions=4).ldp.privatize({"t": m}, rng=1)
    other = dd.from_pandas(x * 3, npartitions=4).ldp.privatize({"t": m}, rng=2)  # same spec, mean ~3x
    secure = dd.from_pandas(x, npartitions=2).ldp.privatize({"t": m})  # rng=None: a random id
    assert one.compute().attrs["ldpnum"]["collection"] != other.compute().attrs["ldpnum"]["collection"]
    assert len(secure.compute().attrs["ldpnum"]["collection"]) == 32
    # a seeded run records the same id every time (its output is reproducible)
    again = dd.from_pandas(x, npartitions=4).ldp.privatize({"t": m}, rng=1)
    assert again.compute().attrs == one.compute().attrs
    clean, foreign, dup = tmp_path / "clean", tmp_path / "foreign", tmp_path / "dup"
    one.to_parquet(clean)
    other.to_parquet(tmp_path / "other")
    shutil.copytree(clean, foreign)
    shutil.copy(tmp_path / "other" / "part.1.parquet", foreign / "part.9.parquet")
    shutil.copytree(clean, dup)
    shutil.copy(clean / "part.2.parquet", dup / "part.2 copy.parquet")
    want = one.ldp.aggregate("t").compute()
    assert dd.read_parquet(clean).ldp.aggregate("t").compute() == want
    assert main(["estimate", str(clean), "-c", "t", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_reports"] == 4000
    with pytest.raises(ValueError, match="parts of 2 different collections"):
        dd.read_parquet(foreign).ldp.aggregate("t").compute()
    with pytest.raises(ValueError, match="holds exactly the codes of"):
        dd.read_parquet(dup).ldp.aggregate("t").compute()
    with pytest.raises(ValueError, match="different collections"):
        dd.read_parquet(foreign).ldp.aggregate().compute()  # every report column at once
    with pytest.raises(ValueError, match="different collections"):
        dd.read_parquet(foreign)["t"].ldp.estimate_mean()
    assert main(["estimate", str(foreign), "-c", "t"]) == 2
    err = capsys.readouterr().err
    assert "hold parts of 2 different collections: 'part.9.parquet' belongs to collection" in err
    assert main(["estimate", str(dup), "-c", "t"]) == 2
    assert "'part.2.parquet' holds exactly the codes of 'part.2 copy.parquet'" in capsys.readouterr().err
