"""Vector mechanisms through the pandas accessor and Dask: several value columns in, one report column out."""

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum._frame import ReportsChangedError
from ldpnum._random import child_rng

N = 20_000
BOUNDS = [(0, 1), (0, 10), (-1, 1)]


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"q1": rng.uniform(0, 1, N), "q2": rng.uniform(0, 10, N), "q3": rng.uniform(-1, 1, N),
                         "age": rng.uniform(20, 60, N)})


MECHANISMS = {"sampled": lambda: ldp.SampledDimensions("piecewise", 6.0, BOUNDS, k=2),
              "duchi": lambda: ldp.DuchiMultivariate(2.0, BOUNDS)}


@pytest.mark.parametrize("kind", list(MECHANISMS))
def test_one_report_column_equals_the_mechanism_on_the_values(frame, kind):
    m = MECHANISMS[kind]()
    r = frame.ldp.privatize({("q1", "q2", "q3"): m}, rng=5)
    assert r.columns.tolist() == ["q1,q2,q3"] and r.index.equals(frame.index)
    assert r.attrs["ldpnum"]["columns"][0]["sources"] == ["q1", "q2", "q3"]
    assert r.ldp.epsilon_per_row == m.epsilon
    # the column holds the mechanism's own reports, packed one code per person
    direct = m.privatize(frame[["q1", "q2", "q3"]], rng=child_rng(5, 0))
    assert np.array_equal(r["q1,q2,q3"].to_numpy(), m.column_codes(direct))
    assert r["q1,q2,q3"].ldp.reports() == direct
    est = r["q1,q2,q3"].ldp.estimate_mean()
    assert est.names == ("q1", "q2", "q3") and est == m.estimate_mean(direct)
    series = r.ldp.estimate_mean(("q1", "q2", "q3"))
    assert series.index.tolist() == ["q1", "q2", "q3"] and np.array_equal(series.to_numpy(), est.mean)
    truth = frame[["q1", "q2", "q3"]].mean().to_numpy()
    assert np.all(np.abs(est.mean - truth) < 4.5 * est.standard_errors)


def test_vector_and_scalar_columns_together_under_both_strategies(frame):
    m = ldp.SampledDimensions("piecewise", 4.0, BOUNDS)
    for strategy, budget in (("all-columns", 5.0), ("one-column-per-row", 4.0)):
        r = frame.ldp.privatize({("q1", "q2", "q3"): m, "age": ldp.Duchi(1.0, (0, 100))}, rng=2, strategy=strategy)
        assert r.ldp.epsilon_per_row == budget and r.columns.tolist() == ["q1,q2,q3", "age"]
        d = r.ldp.describe()
        assert d.index.tolist() == ["q1", "q2", "q3", "age"]
        assert (d.loc[["q1", "q2", "q3"], "mechanism"] == "sampled_dimensions").all()
        assert d.loc[["q1", "q2", "q3"], "25%"].isna().all()
        est = r["q1,q2,q3"].ldp.estimate_mean()
        assert np.allclose(d.loc[["q1", "q2", "q3"], "mean"].to_numpy(), est.mean)
        if strategy == "one-column-per-row":
            assert r["q1,q2,q3"].isna().sum() + r["age"].isna().sum() == N
            assert int(r["q1,q2,q3"].notna().sum()) == est.n_reports


def test_a_changed_vector_column_is_refused(frame):
    r = frame.ldp.privatize({("q1", "q2", "q3"): ldp.DuchiMultivariate(1.0, BOUNDS)}, rng=1)
    edited = r["q1,q2,q3"].copy()
    edited.iloc[0] = edited.iloc[0] ^ 1
    with pytest.raises(ReportsChangedError):
        edited.ldp.estimate_mean()
    with pytest.raises(ReportsChangedError):
        r["q1,q2,q3"].iloc[:-1].ldp.estimate_mean()
    # a concatenation of two collections keeps the record and the coordinate names
    both = ldp.pandas.concat([r, r])
    assert both["q1,q2,q3"].ldp.estimate_mean().names == ("q1", "q2", "q3")
    assert both["q1,q2,q3"].ldp.aggregate() == r["q1,q2,q3"].ldp.aggregate() + r["q1,q2,q3"].ldp.aggregate()


def test_parquet_round_trip_keeps_the_vector_record(frame, tmp_path):
    pytest.importorskip("pyarrow")
    r = frame.ldp.privatize({("q1", "q2", "q3"): ldp.SampledDimensions("duchi", 3.0, BOUNDS, k=3)}, rng=4)
    path = tmp_path / "r.parquet"
    r.to_parquet(path)
    back = pd.read_parquet(path)
    assert back["q1,q2,q3"].ldp.estimate_mean() == r["q1,q2,q3"].ldp.estimate_mean()


def test_bad_keys_get_one_clear_error_and_draw_nothing(frame, monkeypatch):
    from ldpnum import _random
    drawn = []
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: drawn.append(n) or (_ for _ in ()).throw(
        AssertionError("drew")))
    m = ldp.SampledDimensions("piecewise", 4.0, BOUNDS)
    with pytest.raises(TypeError, match="tuple key"):
        frame.ldp.privatize({"q1": m})
    with pytest.raises(TypeError, match="privatizes one column of values"):
        frame.ldp.privatize({("q1", "q2"): ldp.Duchi(1.0, (0, 1))})
    with pytest.raises(ValueError, match="not in the DataFrame"):
        frame.ldp.privatize({("q1", "q2", "nope"): m})
    with pytest.raises(ValueError, match="3 columns"):
        frame.ldp.privatize({("q1", "q2"): m})
    with pytest.raises(ValueError, match="twice"):
        frame.ldp.privatize({("q1", "q1", "q2"): m})
    with pytest.raises(ValueError, match="comma"):
        frame.rename(columns={"q1": "a,b"}).ldp.privatize({("a,b", "q2", "q3"): m})
    with pytest.raises(TypeError, match="64-bit"):
        wide = pd.DataFrame(np.zeros((3, 65)), columns=[f"c{j}" for j in range(65)])
        wide.ldp.privatize({tuple(wide.columns): ldp.DuchiMultivariate(1.0, [(0, 1)] * 65)})
    assert drawn == []


def test_column_codes_refuse_codes_outside_the_alphabet():
    d = ldp.DuchiMultivariate(1.0, BOUNDS)
    with pytest.raises(ValueError, match="beyond the 3 bits of a report"):
        d.reports_from_column(np.array([1, 8], dtype=np.uint64))
    s = ldp.SampledDimensions("duchi", 4.0, BOUNDS, k=2)
    with pytest.raises(ValueError):
        s.reports_from_column(np.array([s.n_cells ** 2], dtype=np.uint64))
    with pytest.raises(ValueError):  # two codes of the same coordinate
        s.reports_from_column(np.array([0], dtype=np.uint64))
    with pytest.raises(ValueError, match="negative"):
        s.reports_from_column(np.array([-1]))


def test_dask_partitions_merge_exactly(frame):
    dd = pytest.importorskip("dask.dataframe")
    import ldpnum.dask  # noqa: F401  (registers the accessor)
    m = ldp.SampledDimensions("piecewise", 4.0, BOUNDS, k=2)
    ddf = dd.from_pandas(frame[["q1", "q2", "q3"]], npartitions=4)
    r = ddf.ldp.privatize({("q1", "q2", "q3"): m}, rng=9)
    est = r.ldp.estimate_mean("q1,q2,q3")
    assert est.names == ("q1", "q2", "q3")
    whole = r.compute()
    agg = r.ldp.aggregate("q1,q2,q3").compute()
    assert agg.n_reports == N
    parts = [part.compute()["q1,q2,q3"].ldp.aggregate() for part in r.to_delayed()]
    assert agg == sum(parts[1:], parts[0])
    assert est == m.estimate_mean(agg, names=["q1", "q2", "q3"])
    assert len(whole) == N and whole["q1,q2,q3"].ldp.estimate_mean() == est
    assert r["q1,q2,q3"].ldp.estimate_mean() == est


def test_dask_partitions_merge_exactly_for_hdg():
    dd = pytest.importorskip("dask.dataframe")
    import ldpnum.dask  # noqa: F401  (registers the accessor)
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.uniform(0, 1, 40_000), "b": rng.uniform(0, 10, 40_000)})
    hdg = ldp.HDG(2.0, bounds={"a": (0, 1), "b": (0, 10)}, n=40_000)
    r = dd.from_pandas(df, npartitions=3).ldp.privatize({("a", "b"): hdg}, rng=7)
    agg = r.ldp.aggregate("a,b").compute()
    parts = [part.compute()["a,b"].ldp.aggregate() for part in r.to_delayed()]
    assert agg == sum(parts[1:], parts[0]) and agg.n_reports == 40_000
    whole = r.compute()
    q = {"a": (0.2, 0.6), "b": (0.0, 5.0)}
    assert whole["a,b"].ldp.range(q) == hdg.estimate_ranges(agg).range(q)


@pytest.mark.parametrize("make", [lambda: ldp.PrivUnitG(4.0, 3), lambda: ldp.PrivHS(2.0, 3),
                                  lambda: ldp.DuchiMultivariate(1.0, BOUNDS)])
def test_dask_partitions_merge_exactly_for_every_vector_mechanism(make):
    dd = pytest.importorskip("dask.dataframe")
    import ldpnum.dask  # noqa: F401  (registers the accessor)
    m = make()
    rng = np.random.default_rng(8)
    x = rng.standard_normal((6_000, 3))
    x *= 0.4 / np.linalg.norm(x, axis=1, keepdims=True)  # norms 0.4: inside the unit ball, and shifted, the box
    df = pd.DataFrame(x + (0.0 if m.name != "duchi_multivariate" else np.array([0.5, 5.0, 0.0])),
                      columns=["q1", "q2", "q3"])
    r = dd.from_pandas(df, npartitions=3).ldp.privatize({("q1", "q2", "q3"): m}, rng=4)
    agg = r.ldp.aggregate("q1,q2,q3").compute()
    parts = [part.compute()["q1,q2,q3"].ldp.aggregate() for part in r.to_delayed()]
    assert agg == sum(parts[1:], parts[0]) and agg.n_reports == 6_000
    est = r.ldp.estimate_mean("q1,q2,q3")
    assert est.names == ("q1", "q2", "q3") and est == m.estimate_mean(agg, names=["q1", "q2", "q3"])


UNIT = {"priv_hs": lambda: ldp.PrivHS(2.0, 3), "priv_unit": lambda: ldp.PrivUnit(4.0, 3, optimized=True),
        "priv_unit_g": lambda: ldp.PrivUnitG(4.0, 3), "sqkr": lambda: ldp.SQKR(4.0, 3)}


def unit_frame(n=6_000, seed=8):
    x = np.random.default_rng(seed).standard_normal((n, 3))
    x *= 0.6 / np.linalg.norm(x, axis=1, keepdims=True)
    x[:, 0] = np.abs(x[:, 0])  # a mean away from 0
    return pd.DataFrame(x, columns=["q1", "q2", "q3"])


@pytest.mark.parametrize("name", list(UNIT))
@pytest.mark.parametrize("npartitions", [2, 5])
def test_unit_vector_mechanisms_through_dask_partitions(name, npartitions):
    """Each partition privatizes from its own stream (``child_rng(seed, i)``) and aggregates alone; the tree-sum
    of the partition aggregates equals the aggregate of all reports, and the estimate is the pandas one."""
    dd = pytest.importorskip("dask.dataframe")
    import dask

    import ldpnum.dask  # noqa: F401  (registers the accessor)
    from ldpnum.pandas import privatize_frame

    m = UNIT[name]()
    df = unit_frame()
    key = ("q1", "q2", "q3")
    with dask.config.set(scheduler="sync"):
        ddf = dd.from_pandas(df, npartitions=npartitions)
        r = ddf.ldp.privatize({key: m}, rng=4)
        agg = r.ldp.aggregate("q1,q2,q3").compute()
        est = r.ldp.estimate_mean("q1,q2,q3")
        parts = [part.compute() for part in r.to_delayed()]
        inputs = [part.compute() for part in ddf.to_delayed()]
    assert len(parts) == npartitions
    part_aggs = [p["q1,q2,q3"].ldp.aggregate() for p in parts]
    assert agg == ldp.Aggregate.merge(part_aggs) and agg.n_reports == len(df)
    # each partition holds exactly the reports the mechanism gives its rows from the partition's stream
    for i, (p, x) in enumerate(zip(parts, inputs)):
        want = privatize_frame(x, {key: m}, rng=child_rng(4, i))
        assert np.array_equal(p["q1,q2,q3"].to_numpy(), want["q1,q2,q3"].to_numpy())
    every = ldp.Reports.concat([m.reports_from_column(p["q1,q2,q3"].to_numpy()) for p in parts])
    assert m.aggregate(every) == agg
    assert est.names == key and est == m.estimate_mean(agg, names=list(key))
    truth = df.mean().to_numpy()
    assert np.all(np.abs(est.mean - truth) < 4.5 * est.standard_errors)


@pytest.mark.parametrize("name", list(UNIT))
def test_unit_vector_mechanisms_through_the_engine_functions(name):
    """The engine-neutral path (``ldpnum.engines``): partition_privatize on four partitions, one aggregate frame
    per partition (bytes), combined on the driver: the same aggregate as the reports of all partitions."""
    from ldpnum.engines import combine, partition_aggregate, partition_privatize

    m = UNIT[name]()
    df = unit_frame(4_000, 9)
    key = ("q1", "q2", "q3")
    outs = [partition_privatize(part, {key: m}, seed=11, partition_index=i)
            for i, part in enumerate(df.iloc[j:j + 1_000] for j in range(0, 4_000, 1_000))]
    frames = [next(partition_aggregate([o], "q1,q2,q3", m.spec)) for o in outs]
    agg = combine(frames)
    every = ldp.Reports.concat([m.reports_from_column(o["q1,q2,q3"].to_numpy()) for o in outs])
    assert agg == m.aggregate(every) and agg.n_reports == 4_000
    est = m.estimate_mean(agg)
    assert np.all(np.abs(est.mean - df.mean().to_numpy()) < 4.5 * est.standard_errors)
