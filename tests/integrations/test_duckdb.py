"""The SQL merge of ``Aggregate.to_frame()`` in a real DuckDB: partitions' long forms written as Parquet, merged
with ``UNION ALL`` + ``GROUP BY``, read back with ``Aggregate.from_frame`` and equal to the Python merge; and the
guide ``docs/duckdb.md`` run as written."""

import pathlib
import re

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp

duckdb = pytest.importorskip("duckdb")

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "duckdb.md"
MERGE = 'SELECT key, CAST(SUM("count") AS BIGINT) AS "count" FROM ({parts}) GROUP BY key ORDER BY key'
N, PARTS = 3000, 3


def _blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), flags=re.S)


def _partition_aggregates(mech, values):
    """One aggregate per partition, each from its own stream (the Python merge is their sum)."""
    return [mech.aggregate(mech.privatize(values[i::PARTS], rng=np.random.default_rng([5, i]))) for i in range(PARTS)]


def _write(aggs, folder):
    folder.mkdir()
    paths = []
    for i, agg in enumerate(aggs):
        paths.append(folder / f"part-{i:05d}.parquet")
        agg.to_frame().to_parquet(paths[-1])
    return paths


def _union(paths):
    return " UNION ALL ".join(f"SELECT key, \"count\" FROM read_parquet('{p}')" for p in paths)


x = np.random.default_rng(0).beta(5, 2, N)
c = np.random.default_rng(1).integers(0, 8, N)
MECHANISMS = {
    "square_wave": (ldp.SquareWave(1.0, (0, 1)), x),                 # counts per output cell
    "oue": (ldp.OUE(1.0, k=8), c),                                   # a unary encoding: the key -1 row holds n
    "hierarchical": (ldp.HierarchicalHistogram(1.0, (0, 1)), x),     # a range tree of 1368 nodes
}


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_sql_merge_equals_the_python_merge(name, tmp_path):
    mech, values = MECHANISMS[name]
    aggs = _partition_aggregates(mech, values)
    paths = _write(aggs, tmp_path / "aggregates")
    counts = duckdb.connect().sql(MERGE.format(parts=_union(paths))).df()
    merged = ldp.Aggregate.from_frame(counts, spec=mech.spec)
    assert merged == sum(aggs) and merged.n_reports == N
    assert np.array_equal(merged.counts, sum(aggs).counts)
    if name == "oue":
        assert counts["key"].iloc[0] == -1 and counts["count"].iloc[0] == N


def test_sum_without_the_cast_is_refused(tmp_path):
    """Negative control: DuckDB's SUM of BIGINT is a HUGEINT that reaches pandas as float64, which from_frame
    refuses (its counts could be inexact), so the guide's cast is needed."""
    mech, values = MECHANISMS["square_wave"]
    paths = _write(_partition_aggregates(mech, values), tmp_path / "aggregates")
    counts = duckdb.connect().sql(f'SELECT key, SUM("count") AS "count" FROM ({_union(paths)}) GROUP BY key').df()
    assert counts["count"].dtype == np.float64
    with pytest.raises(TypeError, match="'count' must hold integers"):
        ldp.Aggregate.from_frame(counts, spec=mech.spec)


def test_the_guide_runs_as_written(tmp_path, monkeypatch):
    """docs/duckdb.md end to end: report files -> aggregate files -> the SQL merge -> Aggregate -> estimate."""
    (setup, read_back), (sql,) = _blocks("python"), _blocks("sql")
    m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1440))
    monkeypatch.chdir(tmp_path)
    pathlib.Path("reports").mkdir()
    expected = []
    for i in range(PARTS):  # three report files, each a collection of its own
        values = pd.DataFrame({"dep_time": np.random.default_rng([9, i]).uniform(0, 1440, 1000)})
        reports = values.ldp.privatize({"dep_time": m}, rng=i)
        reports.to_parquet(f"reports/r{i}.parquet")
        expected.append(reports["dep_time"].ldp.aggregate())
    exec(setup, {})
    ns = {"MERGE_SQL": sql}
    exec(read_back, ns)
    assert ns["spec"] == m.spec and ns["agg"] == sum(expected)
    assert ns["est"].n_reports == 3000


def test_the_guide_refuses_mixed_specs(tmp_path, monkeypatch):
    """The guide's spec check: aggregate files of two collection designs give two specs, and its assertion fails."""
    read_back = _blocks("python")[1]
    monkeypatch.chdir(tmp_path)
    sw, other = ldp.SquareWave(1.0, (0, 1)), ldp.SquareWave(2.0, (0, 1))
    _write([sw.aggregate(sw.privatize(x[:500], rng=0)), other.aggregate(other.privatize(x[:500], rng=1))],
           tmp_path / "aggregates")
    with pytest.raises(AssertionError, match="2 different specs"):
        exec(read_back, {"MERGE_SQL": _blocks("sql")[0]})


def test_duckdb_is_an_extra_installed_for_the_tests():
    import importlib.metadata

    requires = importlib.metadata.metadata("ldpnum").get_all("Requires-Dist")
    assert any(r.startswith("duckdb") and 'extra == "duckdb"' in r for r in requires)
    assert any(r.startswith("duckdb") and 'extra == "test"' in r for r in requires)
    assert not any(r.startswith("duckdb") and "extra ==" not in r for r in requires)
