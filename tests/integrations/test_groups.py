"""Per-group estimates with a public group key: reports.ldp.aggregate(by=...) and describe(by=...)."""

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum._frame import ReportsChangedError

N = 30_000


@pytest.fixture(scope="module")
def collected():
    rng = np.random.default_rng(0)
    region = rng.choice(["east", "north", "west"], N, p=[0.5, 0.3, 0.2])
    x = np.where(region == "east", 2.0, np.where(region == "north", 5.0, 8.0)) + rng.uniform(-1, 1, N)
    df = pd.DataFrame({"x": x, "t": rng.uniform(0, 60, N)})
    r = df.ldp.privatize({"x": ldp.Duchi(2.0, (0, 10)), "t": ldp.SquareWave(2.0, (0, 60))}, rng=1,
                         strategy="all-columns")
    r["region"] = region
    return df.assign(region=region), r


def test_group_aggregates_are_the_groups_reports_and_add_up(collected):
    df, r = collected
    aggs = r.ldp.aggregate(by="region")
    assert list(aggs) == ["east", "north", "west"]
    whole = r.ldp.aggregate()
    for c in ("x", "t"):
        assert sum((aggs[g][c] for g in ("north", "west")), aggs["east"][c]) == whole[c]
        for g in aggs:
            rows = (r["region"] == g).to_numpy()
            want = ldp.from_spec(whole[c].spec).aggregate(ldp.Reports(r[c].to_numpy()[rows], whole[c].spec))
            assert aggs[g][c] == want and aggs[g][c].n_reports == rows.sum()
    # each group's mean is estimated without bias: the truth within 4.5 standard errors
    duchi = ldp.Duchi(2.0, (0, 10))
    for g in aggs:
        est = duchi.estimate_mean(aggs[g]["x"])
        assert abs(est.value - df.loc[df.region == g, "x"].mean()) < 4.5 * est.standard_error


def test_describe_by_group(collected):
    df, r = collected
    d = r.ldp.describe(by="region")
    assert d.index.names == ["region", "column"]
    assert d.index.tolist() == [(g, c) for g in ("east", "north", "west") for c in ("x", "t")]
    assert d.loc[("west", "x"), "n_reports"] == (df.region == "west").sum()
    assert d.loc[("east", "x"), "ci_low"] < df.loc[df.region == "east", "x"].mean() < d.loc[("east", "x"), "ci_high"]
    keys = np.where(df.region == "east", 1, 0)  # an array of keys aligned with the rows
    d2 = r.ldp.describe(by=keys)
    assert d2.index.names == ["group", "column"] and sorted(set(d2.index.get_level_values(0))) == [0, 1]


def test_group_keys_get_one_clear_error(collected):
    _, r = collected
    with pytest.raises(ValueError, match="not a column"):
        r.ldp.aggregate(by="nope")
    with pytest.raises(ValueError, match="report column"):
        r.ldp.aggregate(by="x")
    with pytest.raises(ValueError, match="keys for"):
        r.ldp.aggregate(by=np.zeros(5))
    gaps = r.assign(region=r["region"].where(r.index != 7))
    with pytest.raises(ValueError, match="missing value"):
        gaps.ldp.aggregate(by="region")
    # one-column-per-row: a group too small to hold a report of each column
    df = pd.DataFrame({"a": np.zeros(40), "b": np.zeros(40)})
    rep = df.ldp.privatize({"a": ldp.Duchi(1.0, (0, 1)), "b": ldp.Duchi(1.0, (0, 1))}, rng=3,
                           strategy="one-column-per-row")
    lonely = rep["a"].isna().to_numpy().nonzero()[0][0]  # a row that reported b only
    rep["g"] = np.where(np.arange(40) == lonely, "solo", "rest")
    with pytest.raises(ValueError, match="group 'solo' has no reports in column 'a'"):
        rep.ldp.describe(by="g")


def test_a_changed_column_is_refused_before_grouping(collected):
    _, r = collected
    bad = r.copy()
    bad["x"] = bad["x"].to_numpy()[::-1].copy() // 2
    with pytest.raises(ReportsChangedError):
        bad.ldp.aggregate(by="region")


def test_groupby_apply_equivalent_is_documented():
    # pandas' groupby renames each sub-Series after its group key and keeps only part of the column, so a
    # report column's record cannot be read inside groupby(...).apply; aggregate(by=...) is the path.
    doc = ldp.pandas.DataFrameAccessor.aggregate.__doc__
    assert "by" in doc and "public" in doc.lower()


def test_subset_is_a_group_as_a_report_object(collected, tmp_path):
    _, r = collected
    north = (r["region"] == "north").to_numpy()
    part = r.ldp.subset(north)
    aggs = r.ldp.aggregate(by="region")["north"]
    assert {c: part[c].ldp.aggregate() for c in ("x", "t")} == aggs
    assert part.ldp.epsilon_per_row == r.ldp.epsilon_per_row and part.ldp.strategy == "all-columns"
    # a Series subset, with a boolean Series aligned on the index; the result survives a Parquet file
    col = r["x"].ldp.subset(pd.Series(north, index=r.index)[::-1])
    assert col.ldp.aggregate() == aggs["x"]
    part.to_parquet(tmp_path / "north.parquet")
    assert pd.read_parquet(tmp_path / "north.parquet")["t"].ldp.aggregate() == aggs["t"]
    # filtering by hand is refused, pointing to subset and aggregate(by=)
    with pytest.raises(ReportsChangedError, match=r"reports.ldp.subset\(mask\).*aggregate\(by=column\)"):
        r[north]["x"].ldp.estimate_mean()
    with pytest.raises(TypeError, match="boolean"):
        r.ldp.subset(np.ones(N, dtype=int))
    with pytest.raises(ValueError, match="3 entries for 30000 rows"):
        r.ldp.subset([True, False, True])
    with pytest.raises(ValueError, match="1 missing entries, first at row 0"):
        r.ldp.subset(pd.Series([None] + [True] * (N - 1), index=r.index, dtype="boolean"))
    changed = r.copy()
    changed.loc[changed.index[0], "x"] = 1 - changed["x"].iloc[0]  # one Duchi report flipped
    with pytest.raises(ReportsChangedError):
        changed.ldp.subset(north)
    shuffled = pd.Series(np.ones(50), name="y").ldp.privatize(ldp.Duchi(1.0, (0, 1)), rng=0, shuffled=True)
    with pytest.raises(ValueError, match="shuffled batch"):
        shuffled.ldp.subset(np.ones(50, dtype=bool))
