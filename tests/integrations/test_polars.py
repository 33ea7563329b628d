"""The ``.ldp`` Polars namespaces: the pandas accessor's results bit for bit, the record beside the frame, Parquet
files read both ways with pandas and the command line."""

import json

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum._frame import ReportsChangedError, parquet_metadata
from ldpnum.cli import main

pl = pytest.importorskip("polars")
lpl = pytest.importorskip("ldpnum.polars")

N = 2000
SW = ldp.SquareWave(epsilon=1.0, bounds=(0, 100))
GRR = ldp.GRR(epsilon=2.0, k=4)
MECHS = {"age": SW, "cat": GRR}


@pytest.fixture(scope="module")
def pdf():
    rng = np.random.default_rng(42)
    return pd.DataFrame({"age": rng.uniform(0, 100, N), "cat": rng.integers(0, 4, N),
                         "region": np.repeat(["north", "south"], N // 2)})


@pytest.fixture(scope="module")
def df(pdf):
    return pl.from_pandas(pdf)


def _codes(s):
    """A Polars or pandas report column as (codes with 0 in missing cells, missing mask)."""
    if isinstance(s, pl.Series):
        return s.fill_null(0).to_numpy(), s.is_null().to_numpy()
    return s.fillna(0).to_numpy().astype(np.int64), s.isna().to_numpy()


@pytest.mark.parametrize("strategy", ["all-columns", "one-column-per-row"])
def test_frame_equals_the_pandas_accessor_bit_for_bit(df, pdf, strategy):
    got = df.ldp.privatize(MECHS, rng=7, strategy=strategy)
    expected = pdf.ldp.privatize(MECHS, rng=7, strategy=strategy)
    assert isinstance(got, pl.DataFrame) and got.columns == ["age", "cat"]
    assert got.schema["age"] == pl.UInt16 and got.schema["cat"] == pl.UInt8
    assert got.ldp.record == expected.attrs["ldpnum"]  # specs, strategy, epsilon_per_row, digests
    for c in MECHS:
        a, b = _codes(got[c]), _codes(expected[c])
        assert np.array_equal(a[1], b[1]) and np.array_equal(a[0], b[0])
    assert got.ldp.aggregate() == expected.ldp.aggregate()
    assert got.ldp.epsilon_per_row == expected.ldp.epsilon_per_row and got.ldp.strategy == strategy
    assert df.equals(pl.from_pandas(pdf))  # the values are read through a view, never written


def test_series_equals_the_pandas_accessor_and_estimates(df, pdf):
    got = df["age"].ldp.privatize(SW, rng=3)
    expected = pdf["age"].ldp.privatize(SW, rng=3)
    assert got.name == "age" and np.array_equal(got.to_numpy(), expected.to_numpy())
    assert got.ldp.record == expected.attrs["ldpnum"] and got.ldp.spec == SW.spec
    assert got.ldp.estimate_mean() == expected.ldp.estimate_mean()
    dist = got.ldp.estimate_distribution()
    assert np.array_equal(dist.probabilities, expected.ldp.estimate_distribution().probabilities)
    q = got.ldp.quantile([0.25, 0.5])
    assert isinstance(q, pl.Series) and q.to_list() == expected.ldp.quantile([0.25, 0.5]).tolist()
    assert got.ldp.quantile(0.5) == expected.ldp.quantile(0.5)
    assert got.ldp.range(20, 60) == expected.ldp.range(20, 60)
    freq = df["cat"].ldp.privatize(GRR, rng=4).ldp.estimate_frequencies()
    assert freq.name == "cat" and np.array_equal(freq.frequencies,
                                                  pdf["cat"].ldp.privatize(GRR, rng=4).ldp.estimate_frequencies()
                                                  .frequencies)
    hh = ldp.HierarchicalHistogram(1.0, (0, 100))
    ranges = df["age"].ldp.privatize(hh, rng=5).ldp.estimate_ranges()
    assert ranges.range(0, 100) == pytest.approx(pdf["age"].ldp.privatize(hh, rng=5).ldp.estimate_ranges()
                                                 .range(0, 100), abs=0)


def test_the_record_stays_with_the_frame_and_its_columns(df):
    reports = df.ldp.privatize(MECHS, rng=1, strategy="one-column-per-row")
    col = reports.ldp.column("age")
    assert col.ldp.spec == SW.spec and col.ldp.epsilon_per_row == 2.0
    assert col.ldp.aggregate() == reports.ldp.aggregate()["age"]
    assert "2 report column(s)" in repr(reports.ldp) and "reports of square_wave" in repr(col.ldp)
    # a frame or Series derived by Polars is a new object without the record: refused, with the way out
    with pytest.raises(ValueError, match=r"reports\.ldp\.column\(name\)"):
        reports["age"].ldp.estimate_mean()
    with pytest.raises(ValueError, match="carries no ldpnum record"):
        reports.select("age").ldp.aggregate()
    assert reports.select("age").ldp.specs == {} and reports.select("age").ldp.record is None
    # spec= vouches for a bare column, as in pandas
    assert reports["age"].ldp.aggregate(spec=SW.spec) == col.ldp.aggregate()


def test_changed_codes_are_refused(df):
    """Negative control of the digest: the record held beside a changed frame does not vouch for new codes."""
    reports = df.ldp.privatize({"age": SW}, rng=2)
    changed = lpl.with_record(reports.with_columns(pl.col("age") // 2), reports.ldp.record)
    with pytest.raises(ReportsChangedError, match="no longer holds the reports"):
        changed.ldp.aggregate()
    fewer = lpl.with_record(reports.head(10), reports.ldp.record)
    with pytest.raises(ReportsChangedError, match="10 reports where 2000 were privatized"):
        fewer.ldp.column("age").ldp.estimate_mean()
    edited = dict(reports.ldp.record, epsilon_per_row=0.1)
    with pytest.raises(ValueError, match="disagrees with its column specs"):
        lpl.with_record(reports, edited)


def test_polars_files_read_by_pandas_and_the_command_line(df, pdf, tmp_path, capsys):
    reports = df.ldp.privatize(MECHS, rng=7, strategy="one-column-per-row")
    reports.ldp.write_parquet(tmp_path / "pl.parquet")
    back = pd.read_parquet(tmp_path / "pl.parquet")
    expected = pdf.ldp.privatize(MECHS, rng=7, strategy="one-column-per-row")
    assert back.attrs == expected.attrs
    assert back["age"].ldp.estimate_mean() == expected["age"].ldp.estimate_mean()
    assert main(["estimate", str(tmp_path / "pl.parquet"), "-c", "age", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_reports"] == expected["age"].notna().sum() and out["mean"]["value"] == back["age"].ldp.estimate_mean().value
    # a file whose record is only in the key-value metadata (Polars' writer without arrow_schema=)
    metadata = {k.decode(): v.decode() for k, v in parquet_metadata(reports.ldp.record).items()}
    reports.write_parquet(tmp_path / "kv.parquet", metadata=metadata)
    assert main(["estimate", str(tmp_path / "kv.parquet"), "-c", "cat", "-w", "frequencies", "--json"]) == 0
    freq = json.loads(capsys.readouterr().out)["frequencies"]["frequency"]
    assert freq == expected["cat"].ldp.estimate_frequencies().frequencies.tolist()
    assert lpl.read_parquet(tmp_path / "kv.parquet").ldp.record == reports.ldp.record


def test_pandas_and_command_line_files_read_by_polars(pdf, tmp_path, capsys):
    expected = pdf.ldp.privatize(MECHS, rng=8, strategy="all-columns")
    expected.to_parquet(tmp_path / "pd.parquet")
    got = lpl.read_parquet(tmp_path / "pd.parquet")
    assert got.ldp.record == expected.attrs["ldpnum"] and got.ldp.aggregate() == expected.ldp.aggregate()
    pdf[["age"]].to_parquet(tmp_path / "values.parquet")
    assert main(["privatize", str(tmp_path / "values.parquet"), str(tmp_path / "cli.parquet"), "--column", "age",
                 "--mechanism", "sw", "--bounds", "0", "100", "--epsilon", "1", "--rng", "3"]) == 0
    capsys.readouterr()
    cli = lpl.read_parquet(tmp_path / "cli.parquet")
    assert cli.ldp.specs["age"].mechanism == "square_wave"
    assert cli.ldp.column("age").ldp.aggregate() == pd.read_parquet(tmp_path / "cli.parquet")["age"].ldp.aggregate()
    assert lpl.read_parquet(tmp_path / "values.parquet").ldp.record is None


def test_groups_and_describe(df, pdf):
    reports = df.ldp.privatize({"age": SW}, rng=6).with_columns(df["region"])  # a public column joined back
    reports = lpl.with_record(reports, df.ldp.privatize({"age": SW}, rng=6).ldp.record)
    expected = pdf.ldp.privatize({"age": SW}, rng=6).assign(region=pdf["region"])
    assert reports.ldp.aggregate(by="region") == expected.ldp.aggregate(by="region")
    assert reports.ldp.aggregate(by=df["region"]) == expected.ldp.aggregate(by="region")
    table = reports.ldp.describe()
    assert table["column"].to_list() == ["age"]
    assert table["mean"][0] == expected.ldp.describe().loc["age", "mean"]
    assert reports.ldp.describe(by="region").columns[:2] == ["region", "column"]


def test_arguments_are_checked_before_drawing(df):
    with pytest.raises(TypeError, match="mapping"):
        df.ldp.privatize(SW, rng=0)
    with pytest.raises(ValueError, match="'nope'"):
        df.ldp.privatize({"age": SW, "nope": SW}, rng=0)
    with_nulls = pl.DataFrame({"age": [10.0, None, 30.0]})
    with pytest.raises(ValueError, match="missing"):
        with_nulls.ldp.privatize({"age": SW}, rng=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bandwidth'"):
        df.ldp.privatize({"age": SW}, rng=0, bandwidth=3)
    with pytest.raises(ValueError, match="no ldpnum record"):
        df.ldp.write_parquet("never-written.parquet")
    ledger = ldp.PrivacyLedger(cap=1.5)
    df.ldp.privatize({"age": SW}, rng=0, ledger=ledger, people=np.arange(N))
    with pytest.raises(ldp.BudgetExceededError):
        df.ldp.privatize({"age": SW}, rng=0, ledger=ledger, people=pl.Series(np.arange(N)))


def test_polars_is_an_extra_installed_for_the_tests():
    import importlib.metadata

    requires = importlib.metadata.metadata("ldpnum").get_all("Requires-Dist")
    assert any(r.startswith("polars") and 'extra == "polars"' in r for r in requires)
    assert any(r.startswith("polars") and 'extra == "test"' in r for r in requires)
    assert not any(r.startswith("polars") and "extra ==" not in r for r in requires)


def test_lazy_frames_privatize_eagerly_and_keys_pass_through(pdf, tmp_path):
    want = pdf.ldp.privatize(MECHS, rng=5, strategy="one-column-per-row")
    pdf.to_parquet(tmp_path / "values.parquet")
    lazy = pl.scan_parquet(tmp_path / "values.parquet")
    got = lazy.ldp.privatize(MECHS, rng=5, strategy="one-column-per-row")
    assert isinstance(got, pl.DataFrame) and got.columns == ["age", "cat"]
    assert got.ldp.record == want.attrs["ldpnum"]
    with pytest.raises(ValueError, match="not in the DataFrame, first 'nope'"):
        lazy.ldp.privatize({"nope": SW})
    # longitudinal columns: each person's key goes through to the collection layer
    lgrr = ldp.LGRR(2.0, 1.0, k=4)
    keys = ldp.ClientKeys.generate(N, rng=1)
    expected = pdf[["cat"]].ldp.privatize({"cat": lgrr}, keys=keys, rng=2)
    polars_reports = pl.from_pandas(pdf[["cat"]]).ldp.privatize({"cat": lgrr}, keys=keys, rng=2)
    assert polars_reports["cat"].to_list() == expected["cat"].tolist()
    with pytest.raises(TypeError, match="need each person's key"):
        pl.from_pandas(pdf[["cat"]]).ldp.privatize({"cat": lgrr}, rng=2)
