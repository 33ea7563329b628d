"""The command line end to end, on real files in a temporary directory.

Most runs call ``ldpnum.cli.main`` in-process; a few run ``python -m ldpnum`` and the ``ldpnum`` console
script in a subprocess.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import cli
from ldpnum import io as ldpnum_io
from ldpnum._frame import attach_specs, spec_for, specs_from_parquet_metadata
from ldpnum._random import child_rng

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

N = 5000
BOUNDS = (0.0, 100.0)


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(20261122)
    return pd.DataFrame({"x": rng.uniform(0, 100, N), "y": rng.integers(0, 50, N),
                         "city": rng.choice(["ams", "nyc", "tok"], N)})


@pytest.fixture(scope="module")
def files(frame, tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    frame.to_csv(d / "in.csv", index=False)
    frame.to_parquet(d / "in.parquet", row_group_size=1500)
    return d


def run(argv, capsys):
    """``main(argv)`` in-process: (exit status, stdout, stderr)."""
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def privatize(src, out, capsys, *extra, column="x", mechanism="sw", epsilon=1.0, bounds=BOUNDS, rng=7):
    argv = ["privatize", src, out, "--column", column, "--mechanism", mechanism, "--epsilon", epsilon,
            "--bounds", *bounds, *extra]
    if rng is not None:
        argv += ["--rng", rng]
    status, stdout, err = run(argv, capsys)
    assert status == 0, err
    return stdout, err


def codes(path, column="x"):
    return pq.read_table(path, columns=[column]).column(0).to_numpy()


def assert_user_error(status, err, *fragments):
    lines = err.strip().splitlines()
    assert status == 2
    assert len(lines) == 1 and lines[0].startswith("ldpnum: error: "), err
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], lines[0]


# -- privatize -----------------------------------------------------------------------------------------------

def test_privatize_csv_writes_reports_and_specs(files, frame, tmp_path, capsys):
    out = tmp_path / "reports.parquet"
    stdout, _ = privatize(files / "in.csv", out, capsys, "--column", "y", "--bounds", 0, 50)
    assert "epsilon per row: 2" in stdout
    sw_x, sw_y = ldp.SquareWave(epsilon=1.0, bounds=BOUNDS), ldp.SquareWave(epsilon=1.0, bounds=(0, 50))

    # read back by pandas: the report columns, their dtype, and the specs in attrs
    df = pd.read_parquet(out)
    assert list(df.columns) == ["x", "y"] and len(df) == N
    assert df["x"].dtype == np.uint16
    info = df.attrs["ldpnum"]
    assert info["strategy"] == "all-columns" and info["epsilon_per_row"] == 2.0
    assert spec_for(df, "x") == sw_x.spec and spec_for(df, "y") == sw_y.spec
    assert specs_from_parquet_metadata(pq.ParquetFile(out).schema_arrow.metadata) == info

    # the reports are exactly those of the mechanism on the whole column, drawn from column i's sub-stream
    for i, (c, m) in enumerate([("x", sw_x), ("y", sw_y)]):
        expected = m.privatize(frame[c].to_numpy(), rng=np.random.default_rng(child_rng(7, i)))
        np.testing.assert_array_equal(df[c].to_numpy(), expected.codes)


def test_same_reports_and_metadata_as_the_pandas_accessor(files, frame, tmp_path, capsys):
    """The command line and ``df.ldp`` are one pipeline: same seeded reports, same attrs, each reads the other."""
    if not hasattr(pd.DataFrame, "ldp"):
        pytest.skip("the pandas accessor is not available")
    out = tmp_path / "cli.parquet"
    privatize(files / "in.parquet", out, capsys, "--column", "y", "--bounds", 0, 50)
    mechs = {"x": ldp.SquareWave(epsilon=1.0, bounds=BOUNDS), "y": ldp.SquareWave(epsilon=1.0, bounds=(0, 50))}
    expected = frame[["x", "y"]].ldp.privatize(mechs, rng=7)
    got = pd.read_parquet(out)
    assert got.attrs == expected.attrs
    for c in mechs:
        np.testing.assert_array_equal(got[c].to_numpy(), expected[c].to_numpy())
    status, stdout, _ = run(["estimate", out, "-c", "x", "--json"], capsys)
    assert status == 0 and json.loads(stdout)["mean"]["value"] == got["x"].ldp.estimate_mean().value

    # a frame privatized by the accessor with one column per row: the cells of the other column are missing
    split = frame[["x", "y"]].ldp.privatize(mechs, rng=1, strategy="one-column-per-row")
    split.to_parquet(tmp_path / "split.parquet")
    status, stdout, err = run(["estimate", tmp_path / "split.parquet", "-c", "y", "--json", "--batch-size", 700],
                              capsys)
    assert status == 0, err
    doc = json.loads(stdout)
    assert doc["n_missing"] == int(split["y"].isna().sum()) > 0
    assert doc["mean"]["value"] == split["y"].ldp.estimate_mean().value


def test_one_column_per_row(files, frame, tmp_path, capsys):
    mechs = {"x": ldp.Piecewise(epsilon=2.0, bounds=BOUNDS), "y": ldp.SquareWave(epsilon=1.0, bounds=(0, 50))}
    outs = []
    for k, batch in enumerate((1000, 333)):
        out = tmp_path / f"split{k}.parquet"
        status, stdout, err = run(["privatize", files / "in.parquet", out, "-c", "x", "-c", "y", "-m", "piecewise",
                                   "-m", "sw", "-e", 2, "-e", 1, "-b", *BOUNDS, "-b", 0, 50, "--rng", 4,
                                   "--strategy", "one-column-per-row", "--batch-size", batch], capsys)
        assert status == 0, err
        assert "epsilon per row: 2" in stdout and "one column per row" in stdout
        outs.append(pd.read_parquet(out))
    got = outs[0]
    pd.testing.assert_frame_equal(got, outs[1])  # seeded output independent of the batch size
    assert str(got["x"].dtype) == "UInt16"
    assert (got["x"].isna() ^ got["y"].isna()).all()  # each row reported exactly one column
    n_x = int(got["x"].notna().sum())
    assert abs(n_x - N / 2) < 5 * np.sqrt(N / 4)  # the column is chosen uniformly (5 standard errors)
    info = got.attrs["ldpnum"]
    assert info["strategy"] == "one-column-per-row" and info["epsilon_per_row"] == 2.0
    assert spec_for(got, "x") == mechs["x"].spec

    status, stdout, err = run(["estimate", tmp_path / "split0.parquet", "-c", "x", "--json"], capsys)
    assert status == 0, err
    doc = json.loads(stdout)
    codes_x = got["x"].dropna().to_numpy(dtype=np.uint16)
    assert doc["n_reports"] == n_x and doc["n_missing"] == N - n_x
    assert doc["mean"]["value"] == mechs["x"].estimate_mean(ldp.Reports(codes_x, mechs["x"].spec)).value

    if hasattr(pd.DataFrame, "ldp"):  # the same reports as the pandas accessor
        expected = frame[["x", "y"]].ldp.privatize(mechs, rng=4, strategy="one-column-per-row")
        assert got.attrs == expected.attrs
        for c in mechs:
            pd.testing.assert_series_equal(got[c], expected[c], check_dtype=False)


def test_seeded_output_does_not_depend_on_batch_size_or_input_format(files, tmp_path, capsys):
    outs = []
    for k, (src, batch) in enumerate([("in.parquet", 1000), ("in.parquet", 777), ("in.csv", 333),
                                      ("in.csv", None)]):
        out = tmp_path / f"r{k}.parquet"
        privatize(files / src, out, capsys, *(["--batch-size", batch] if batch else []), mechanism="hybrid")
        outs.append(codes(out))
    for other in outs[1:]:
        np.testing.assert_array_equal(outs[0], other)
    # CSV blocks and Parquet row groups are regrouped into --batch-size rows: one row group per batch
    for k, batch in ((0, 1000), (1, 777), (2, 333)):
        meta = pq.ParquetFile(tmp_path / f"r{k}.parquet").metadata
        assert meta.row_group(0).num_rows == batch and meta.num_row_groups == -(-N // batch)
    privatize(files / "in.parquet", tmp_path / "other.parquet", capsys, mechanism="hybrid", rng=8)
    assert not np.array_equal(outs[0], codes(tmp_path / "other.parquet"))


def test_several_columns_with_their_own_mechanism_and_bounds(files, frame, tmp_path, capsys):
    out = tmp_path / "two.parquet"
    status, stdout, err = run(["privatize", files / "in.parquet", out, "-c", "x", "-c", "y", "-m", "piecewise",
                               "-m", "hh", "-e", "1", "-e", "0.5", "-b", 0, 100, "-b", 0, 50, "--rng", 3,
                               "--keep", "city"], capsys)
    assert status == 0, err
    assert "epsilon per row: 1.5" in stdout and "kept unchanged: city" in stdout
    df = pd.read_parquet(out)
    assert list(df.columns) == ["x", "y", "city"]
    assert df["city"].tolist() == frame["city"].tolist()  # kept columns are copied unchanged
    assert spec_for(df, "y") == ldp.HierarchicalHistogram(epsilon=0.5, bounds=(0, 50)).spec


def test_missing_values_raise_with_count_and_first_row_or_are_imputed(frame, tmp_path, capsys):
    df = frame.copy()
    df.loc[[1234, 3000, 4999], "x"] = np.nan
    src = tmp_path / "nan.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "out.parquet"
    status, _, err = run(["privatize", src, out, "-c", "x", "-m", "sw", "-e", 1, "-b", *BOUNDS,
                          "--batch-size", 1000], capsys)
    assert_user_error(status, err, "3 missing", "first at row 1234", "--nan-fill")
    assert not out.exists() and os.listdir(tmp_path) == ["nan.csv"]  # no partial output left behind

    privatize(src, out, capsys, "--nan-fill", 50, "--batch-size", 1000)
    m = ldp.SquareWave(epsilon=1.0, bounds=BOUNDS)
    expected = m.privatize(df["x"].to_numpy(), rng=np.random.default_rng(child_rng(7, 0)),
                           nan_policy="impute", fill_value=50.0)
    np.testing.assert_array_equal(codes(out), expected.codes)


def test_csv_delimiter(frame, tmp_path, capsys):
    src = tmp_path / "semi.csv"
    frame.to_csv(src, sep=";", index=False)
    out = tmp_path / "out.parquet"
    status, _, err = run(["privatize", src, out, "-c", "x", *PRIV], capsys)
    assert_user_error(status, err, "no column 'x'", "--delimiter ';'")
    privatize(src, out, capsys, "--delimiter", ";")
    privatize(tmp_path / "semi.csv", tmp_path / "ref.parquet", capsys, "--delimiter", ";", "--batch-size", 100)
    np.testing.assert_array_equal(codes(out), codes(tmp_path / "ref.parquet"))
    assert len(codes(out)) == N


def test_out_of_range_values_are_clipped_with_one_warning(frame, tmp_path, capsys):
    df = frame.copy()
    df.loc[[10, 2500, 2600], "x"] = [-5.0, 150.0, 1e9]
    src = tmp_path / "wide.parquet"
    df.to_parquet(src)
    out = tmp_path / "out.parquet"
    _, err = privatize(src, out, capsys, "--batch-size", 1000)
    assert err.count("\n") == 1 and "warning" in err and "3 value(s) outside the bounds" in err
    assert "first at row 10" in err
    status, _, err = run(["privatize", src, out, "-c", "x", "-m", "sw", "-e", 1, "-b", *BOUNDS,
                          "--out-of-range", "raise", "--batch-size", 1000], capsys)
    assert_user_error(status, err, "1 value(s) outside the bounds (0, 100)", "rows 0..999", "first at row 10")


def test_progress_bar(files, tmp_path, capsys):
    pytest.importorskip("tqdm")
    out = tmp_path / "p.parquet"
    _, err = privatize(files / "in.parquet", out, capsys, "--progress", "--batch-size", 1000)
    assert "rows" in err and "100%" in err
    status, _, err = run(["estimate", out, "-c", "x", "--progress"], capsys)
    assert status == 0 and "100%" in err


def test_tqdm_is_imported_only_with_progress(files, tmp_path):
    """tqdm (like matplotlib) is imported by the commands that use it, never by a plain run. One fresh
    interpreter runs both commands plainly, then (tqdm installed) with ``--progress``: modules only
    accumulate, so what the plain runs loaded is read before the progress runs."""
    import importlib.util

    runs = ["plain"] + (["--progress"] if importlib.util.find_spec("tqdm") is not None else [])
    code = ("import sys; from ldpnum.cli import main; a, out, *runs = sys.argv[1:]\n"
            "for extra in ([] if r == 'plain' else [r] for r in runs):\n"
            "    assert main(['privatize', a, out, '-c', 'x', '-m', 'sw', '-e', '1', '-b', '0', '100', "
            "'--rng', '1'] + extra) == 0; assert main(['estimate', out, '-c', 'x'] + extra) == 0\n"
            "    print('modules:', sorted(m for m in ('tqdm', 'matplotlib') if m in sys.modules))")
    out = tmp_path / "r.parquet"
    res = subprocess.run([sys.executable, "-c", code, str(files / "in.csv"), str(out), *runs],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    loaded = [line for line in res.stdout.splitlines() if line.startswith("modules: ")]
    assert loaded == ["modules: []", "modules: ['tqdm']"][:len(runs)]
    if len(runs) == 1:
        pytest.skip("tqdm is not installed: the --progress half needs it")


# -- estimate ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sw_reports(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("sw") / "sw.parquet"
    assert cli.main(["privatize", str(files / "in.parquet"), str(out), "-c", "x", "-m", "sw", "-e", "2", "-b",
                     "0", "100", "--rng", "11"]) == 0
    return out


def test_estimate_equals_the_in_memory_estimate_exactly(sw_reports, capsys):
    m = ldp.SquareWave(epsilon=2.0, bounds=BOUNDS)
    reports = ldp.Reports(pd.read_parquet(sw_reports)["x"].to_numpy(), m.spec)
    status, stdout, err = run(["estimate", sw_reports, "-c", "x", "-w", "mean", "quantiles", "range",
                               "--range", 20, 40, "-q", 0.1, 0.5, 0.9, "--n-bins", 64, "--batch-size", 613,
                               "--json"], capsys)
    assert status == 0, err
    doc = json.loads(stdout)
    mean = m.estimate_mean(reports)
    assert doc["n_reports"] == N and doc["n_missing"] == 0
    assert doc["mean"]["value"] == mean.value and doc["mean"]["standard_error"] == mean.standard_error
    assert doc["mean"]["ci"] == list(mean.confidence_interval(0.95))
    dist = m.estimate_distribution(reports, n_bins=64)    # the command line uses the library default (ems-cv)
    assert doc["quantiles"]["value"] == dist.quantile([0.1, 0.5, 0.9]).tolist()
    assert doc["range"]["mass"] == dist.range(20, 40)

    agg, n_missing = cli.aggregate_file(sw_reports, "x", batch_size=100)
    assert agg == m.aggregate(reports) and n_missing == 0


def test_estimate_prints_readable_results_and_plots(sw_reports, tmp_path, capsys):
    status, stdout, _ = run(["estimate", sw_reports, "-c", "x"], capsys)
    assert status == 0
    assert f"{N:,} reports" in stdout and "mean (unbiased): " in stdout and "95% CI" in stdout
    png = tmp_path / "d.png"
    status, stdout, err = run(["estimate", sw_reports, "-c", "x", "-w", "distribution", "quantiles", "--plot", png],
                              capsys)
    assert status == 0, err
    assert "distribution: " in stdout and "iterations" in stdout and "quantile" in stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_hierarchical_histogram_range(files, tmp_path, capsys, frame):
    out = tmp_path / "hh.parquet"
    privatize(files / "in.parquet", out, capsys, "--param", "n_leaves=64", mechanism="hh", epsilon=4.0)
    status, stdout, err = run(["estimate", out, "-c", "x", "-w", "range", "mean", "--range", 0, 50, "--json"],
                              capsys)
    assert status == 0, err
    doc = json.loads(stdout)
    hh = ldp.HierarchicalHistogram(epsilon=4.0, bounds=BOUNDS, n_leaves=64)
    reports = ldp.Reports(codes(out), hh.spec)
    assert doc["range"]["mass"] == hh.estimate_ranges(reports).range(0, 50)
    assert doc["mean"]["standard_error"] is None
    assert doc["mean"]["value"] == hh.estimate_distribution(reports).mean


def test_missing_cells_are_skipped(tmp_path, capsys):
    """A report frame where some rows did not report the column (as with "one-column-per-row")."""
    m = ldp.Duchi(epsilon=1.0, bounds=BOUNDS)
    r = m.privatize(np.linspace(0, 100, 3000), rng=0)
    present = np.arange(3000) % 3 != 0
    col = pd.Series(r.codes, dtype="UInt8").where(present)
    df = attach_specs(pd.DataFrame({"a": col, "b": col.astype("float64")}), {"a": m.spec, "b": m.spec})
    df.to_parquet(tmp_path / "holes.parquet")
    expected = m.estimate_mean(ldp.Reports(r.codes[present], m.spec))
    for column in ("a", "b"):
        status, stdout, err = run(["estimate", tmp_path / "holes.parquet", "-c", column, "--json",
                                   "--batch-size", 500], capsys)
        assert status == 0, err
        doc = json.loads(stdout)
        assert doc["n_missing"] == 1000 and doc["mean"]["value"] == expected.value


def test_frequencies_of_a_categorical_column(tmp_path, capsys):
    """Report files of a frequency oracle (as the accessor writes them) are estimated with --what frequencies."""
    grr, duchi = ldp.GRR(epsilon=2.0, k=5), ldp.Duchi(epsilon=1.0, bounds=(0, 1))
    rng = np.random.default_rng(3)
    r = grr.privatize(rng.choice(5, 4000, p=[0.1, 0.2, 0.3, 0.2, 0.2]), rng=1)
    d = duchi.privatize(rng.uniform(0, 1, 4000), rng=2)
    df = attach_specs(pd.DataFrame({"c": r.codes, "v": d.codes}), {"c": grr.spec, "v": duchi.spec})
    df.to_parquet(tmp_path / "cat.parquet")
    status, stdout, err = run(["estimate", tmp_path / "cat.parquet", "-c", "c", "--json", "--batch-size", 999],
                              capsys)
    assert status == 0, err
    doc = json.loads(stdout)
    est = grr.estimate_frequencies(r)
    assert doc["frequencies"]["frequency"] == est.frequencies.tolist()
    assert doc["frequencies"]["standard_error"] == est.standard_errors.tolist()
    status, stdout, _ = run(["estimate", tmp_path / "cat.parquet", "-c", "c", "--postprocess", "norm-sub"], capsys)
    assert status == 0 and "frequencies (norm-sub" in stdout and stdout.count("\n") == 2 + 5 + 1
    status, _, err = run(["estimate", tmp_path / "cat.parquet", "-c", "c", "-w", "mean"], capsys)
    assert_user_error(status, err, "categorical", "--what frequencies")
    status, _, err = run(["estimate", tmp_path / "cat.parquet", "-c", "v", "-w", "frequencies"], capsys)
    assert_user_error(status, err, "numerical")


def test_explicit_spec_reads_a_file_without_one_and_must_match_a_recorded_one(sw_reports, tmp_path, capsys):
    m = ldp.SquareWave(epsilon=2.0, bounds=BOUNDS)
    plain = tmp_path / "plain.parquet"
    pd.DataFrame({"x": codes(sw_reports)}).to_parquet(plain)
    expected = m.estimate_mean(ldp.Reports(codes(sw_reports), m.spec)).value
    for how in (["--spec", m.spec.to_json()], ["-m", "square_wave", "-e", 2, "-b", *BOUNDS]):
        status, stdout, err = run(["estimate", plain, "-c", "x", "--json", *how], capsys)
        assert status == 0, err
        assert json.loads(stdout)["mean"]["value"] == expected
    status, _, err = run(["estimate", sw_reports, "-c", "x", "-m", "sw", "-e", 1, "-b", *BOUNDS], capsys)
    assert_user_error(status, err, "were produced by square_wave(epsilon=2.0", "not by square_wave(epsilon=1.0")
    other = ldp.Piecewise(epsilon=2.0, bounds=BOUNDS).spec.to_json()
    status, _, err = run(["estimate", sw_reports, "-c", "x", "--spec", other], capsys)
    assert_user_error(status, err, "not by piecewise")


# -- user errors: one line, exit status 2, no traceback, no output file ------------------------------------

PRIV = ["-m", "sw", "-e", "1", "-b", "0", "100"]


@pytest.mark.parametrize("case, argv, fragments", [
    ("missing file", ["privatize", "{d}/nope.csv", "{d}/o.parquet", "-c", "x", *PRIV], ["no such file"]),
    ("malformed parquet", ["privatize", "{d}/bad.parquet", "{d}/o.parquet", "-c", "x", *PRIV],
     ["cannot read", "as Parquet"]),
    ("ragged csv", ["privatize", "{d}/ragged.csv", "{d}/o.parquet", "-c", "x", *PRIV], ["as CSV", "columns"]),
    ("text in a numerical column", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "city", *PRIV],
     ["conversion error", "('city')", "must hold numbers"]),
    ("string column of parquet", ["privatize", "{d}/in.parquet", "{d}/o.parquet", "-c", "city", *PRIV],
     ["'city'", "not numbers"]),
    ("wrong column", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "z", *PRIV], ["no column 'z'", "'x'"]),
    ("unknown extension", ["privatize", "{d}/in.txt", "{d}/o.parquet", "-c", "x", *PRIV], [".csv", ".parquet"]),
    ("output not parquet", ["privatize", "{d}/in.csv", "{d}/o.csv", "-c", "x", *PRIV], ["must be a Parquet"]),
    ("output is input", ["privatize", "{d}/in.parquet", "{d}/in.parquet", "-c", "x", *PRIV], ["is the input"]),
    ("unknown mechanism", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "x", "-m", "magic", "-e", "1",
                           "-b", "0", "1"], ["unknown mechanism 'magic'", "sw"]),
    ("bad epsilon", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "x", "-m", "sw", "-e", "25", "-b", "0",
                     "1"], ["epsilon", "(0, 20]"]),
    ("nan epsilon", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "x", "-m", "sw", "-e", "nan", "-b", "0",
                     "1"], ["epsilon"]),
    ("bad bounds", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "x", "-m", "sw", "-e", "1", "-b", "5",
                    "1"], ["bounds", "low < high"]),
    ("bad parameter", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "x", *PRIV, "--param", "bogus=1"],
     ["does not take"]),
    ("bounds count", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "x", "-c", "y", "-m", "sw", "-e", "1",
                      "-b", "0", "1", "-b", "0", "2", "-b", "0", "3"], ["--bounds was given 3 times"]),
    ("fill outside bounds", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "x", *PRIV, "--nan-fill", "500"],
     ["--nan-fill"]),
    ("keep a privatized column", ["privatize", "{d}/in.csv", "{d}/o.parquet", "-c", "x", *PRIV, "--keep", "x"],
     ["both privatized and kept"]),
    ("estimate missing file", ["estimate", "{d}/nope.parquet", "-c", "x"], ["no such file"]),
    ("estimate malformed", ["estimate", "{d}/bad.parquet", "-c", "x"], ["as Parquet"]),
    ("estimate csv", ["estimate", "{d}/in.csv", "-c", "x"], ["as Parquet"]),
    ("no spec", ["estimate", "{d}/in.parquet", "-c", "x"], ["carries no ldpnum spec", "--spec"]),
    ("estimate wrong column", ["estimate", "{r}", "-c", "z"], ["no column 'z'"]),
    ("not a report column", ["estimate", "{r}", "-c", "city"], ["not a report column", "'x'"]),
    ("mean-only mechanism", ["estimate", "{r}", "-c", "y", "-w", "quantiles"], ["estimate means only"]),
    ("range without bounds", ["estimate", "{r}", "-c", "x", "-w", "range"], ["--range LO HI"]),
    ("partial expected mechanism", ["estimate", "{r}", "-c", "x", "-e", "1"], ["all three"]),
    ("bad spec json", ["estimate", "{r}", "-c", "x", "--spec", "{{oops"], ["--spec"]),
])
def test_user_errors(case, argv, fragments, files, tmp_path_factory, capsys):
    d = files
    (d / "bad.parquet").write_bytes(b"this is not a parquet file")
    (d / "ragged.csv").write_text("x,y\n1,2\n3,4,5,6\n")
    r = d / "mixed.parquet"
    if not r.exists():
        assert cli.main(["privatize", str(d / "in.parquet"), str(r), "-c", "x", "-c", "y", "-m", "sw", "-m",
                         "duchi", "-e", "1", "-b", "0", "100", "-b", "0", "100", "--keep", "city", "--rng", "1"]) == 0
    capsys.readouterr()
    before = sorted(os.listdir(d))
    status, _, err = run([a.format(d=d, r=r) for a in argv], capsys)
    assert_user_error(status, err, *fragments)
    assert sorted(os.listdir(d)) == before  # nothing written, no partial file left


@pytest.mark.parametrize("extra, fragments", [
    (["-c", "y", "-w", "quantiles"], ["duchi reports estimate means only"]),
    (["-c", "y", "--plot", "out.png"], ["means only", "plots"]),
    (["-c", "x", "-w", "frequencies"], ["numerical"]),
    (["-c", "x", "--plot", "{d}/no-such-dir/out.png"], ["no such directory"]),
    (["-c", "x", "--plot", "{d}/out.nope"], ["extension", ".png"]),
    (["-c", "h", "--n-bins", "16"], ["--n-bins does not apply"]),
    (["-c", "x", "-e", "2", "-m", "sw", "-b", "0", "100"], ["not by square_wave(epsilon=2.0"]),
])
def test_estimate_checks_the_request_before_reading_a_report(extra, fragments, frame, tmp_path, capsys,
                                                             monkeypatch):
    """A request the file's mechanism cannot answer, or a plot that cannot be written, fails from the metadata
    alone: on a file larger than memory the user does not wait for the whole stream to learn it."""
    if not hasattr(pd.DataFrame, "ldp"):
        pytest.skip("the pandas accessor is not available")
    r = tmp_path / "r.parquet"
    mechs = {"x": ldp.SquareWave(epsilon=1.0, bounds=BOUNDS), "y": ldp.Duchi(epsilon=1.0, bounds=BOUNDS),
             "h": ldp.HierarchicalHistogram(epsilon=1.0, bounds=BOUNDS, n_leaves=16)}
    frame.assign(h=frame["x"]).ldp.privatize(mechs, rng=1).to_parquet(r)

    def no_stream(*args, **kwargs):
        raise AssertionError("the reports were read before the request was checked")

    monkeypatch.setattr(cli, "aggregate_file", no_stream)
    status, _, err = run(["estimate", r, *[a.format(d=tmp_path) for a in extra]], capsys)
    assert_user_error(status, err, *fragments)
    assert not (tmp_path / "out.nope").exists()


def test_usage_errors_exit_2(files, capsys):
    for argv in (["privatize"], ["estimate", "r.parquet"], ["privatize", "a.csv", "b.parquet", "-c", "x", "-m",
                                                            "sw", "-e", "one", "-b", "0", "1"],
                 ["estimate", "r.parquet", "-c", "x", "--batch-size", "0"], ["frobnicate"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_make_mechanism_names():
    for name in ("sw", "square_wave", "SquareWave", "square-wave"):
        assert cli.make_mechanism(name, 1.0, (0, 1)).spec.mechanism == "square_wave"
    for alias, full in cli.MECHANISM_ALIASES.items():
        params = {"shape": "triangle"} if full == "general_wave" else {}
        assert cli.make_mechanism(alias, 1.0, (0, 1), params).spec.mechanism == full


# -- subprocesses: `python -m ldpnum` and the `ldpnum` console script ----------------------------------------

def _script():
    found = Path(sys.executable).with_name("ldpnum")
    return str(found) if found.exists() else shutil.which("ldpnum")


def test_python_m_ldpnum_and_console_script(sw_reports):
    """The two entry points: `python -m ldpnum` (success) and the console script (exit status of an error)."""
    res = subprocess.run([sys.executable, "-m", "ldpnum", "estimate", str(sw_reports), "-c", "x", "-w", "mean",
                          "quantiles"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "mean (unbiased): " in res.stdout and "quantile" in res.stdout
    script = _script()
    if script is None:
        pytest.skip("the ldpnum console script is not installed")
    res = subprocess.run([script, "estimate", str(sw_reports), "-c", "nope"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith("ldpnum: error: ") and res.stderr.count("\n") == 1
    assert "no column 'nope'" in res.stderr


def test_docstring_examples(tmp_path, monkeypatch):
    import doctest

    monkeypatch.chdir(tmp_path)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for module in (cli, ldpnum_io) for t in finder.find(module) if t.examples]
    assert len(tests) >= 4
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


def test_privatize_records_the_collection_in_a_ledger(tmp_path):
    import json
    import pandas as pd
    from ldpnum.cli import main

    src = tmp_path / "in.csv"
    pd.DataFrame({"user": [f"u{i}" for i in range(300)], "x": np.linspace(0, 1, 300)}).to_csv(src, index=False)
    ledger = tmp_path / "ledger.json"
    base = ["privatize", str(src), str(tmp_path / "out.parquet"), "-c", "x", "-m", "duchi", "-e", "1.5",
            "-b", "0", "1", "--rng", "1", "--ledger", str(ledger), "--people-column", "user"]
    assert main(base + ["--ledger-cap", "2", "--label", "day 1"]) == 0
    data = json.loads(ledger.read_text())
    assert data["cap"] == 2.0 and data["entries"][0]["label"] == "day 1"
    assert data["entries"][0]["people"][:2] == ["u0", "u1"] and data["entries"][0]["epsilon"] == 1.5
    # a second collection at 1.5 would take everyone to 3 > 2: refused, nothing written
    out2 = tmp_path / "out2.parquet"
    base[2] = str(out2)
    assert main(base) == 2
    assert not out2.exists() and len(json.loads(ledger.read_text())["entries"]) == 1
    # flags that need a ledger
    assert main(["privatize", str(src), str(tmp_path / "o3.parquet"), "-c", "x", "-m", "duchi", "-e", "1",
                 "-b", "0", "1", "--people-column", "user"]) == 2
    assert main(base[:-2]) == 2  # --ledger without --people-column


def test_estimate_a_two_column_range_of_hdg_reports(tmp_path, capsys):
    import json
    import pandas as pd
    import ldpnum as ldp
    from ldpnum.cli import main

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"dep_time": rng.uniform(0, 1440, 50_000), "distance": rng.uniform(0, 5000, 50_000)})
    hdg = ldp.HDG(2.0, bounds={"dep_time": (0, 1440), "distance": (0, 5000)}, n=50_000)
    r = df.ldp.privatize({("dep_time", "distance"): hdg}, rng=1)
    path = tmp_path / "r.parquet"
    r.to_parquet(path)
    query = {"dep_time": (360.0, 540.0), "distance": (0.0, 1000.0)}
    want = float(r["dep_time,distance"].ldp.range(query))
    assert main(["estimate", str(path), "-c", "dep_time,distance", "--range", "dep_time:360:540",
                 "distance:0:1000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["range"]["mass"] == want and doc["range"]["query"]["distance"] == [0.0, 1000.0]
    assert main(["estimate", str(path), "-c", "dep_time,distance", "--range", "dep_time:360:540"]) == 0
    assert "360 <= dep_time <= 540" in capsys.readouterr().out
    # a one-column range on HDG reports, a COL:LO:HI range on one-column reports, malformed tokens
    assert main(["estimate", str(path), "-c", "dep_time,distance", "--range", "0", "1"]) == 2
    assert main(["estimate", str(path), "-c", "dep_time,distance", "--range", "dep_time:5"]) == 2
    assert main(["estimate", str(path), "-c", "dep_time,distance", "--range", "nope:0:1"]) == 2
    assert main(["estimate", str(path), "-c", "dep_time,distance", "--range", "dep_time:9:1"]) == 2


def test_hdg_reports_without_a_range_get_one_clear_error(tmp_path, capsys):
    import pandas as pd
    import ldpnum as ldp
    from ldpnum.cli import main

    df = pd.DataFrame({"a": np.linspace(0, 1, 2000), "b": np.linspace(0, 1, 2000)})
    r = df.ldp.privatize({("a", "b"): ldp.HDG(1.0, bounds={"a": (0, 1), "b": (0, 1)}, n=2000)}, rng=0)
    r.to_parquet(tmp_path / "r.parquet")
    assert main(["estimate", str(tmp_path / "r.parquet"), "-c", "a,b"]) == 2
    assert "pass --range COL:LO:HI" in capsys.readouterr().err
    assert main(["estimate", str(tmp_path / "r.parquet"), "-c", "a,b", "-w", "mean", "--range", "a:0:1"]) == 2


def test_the_ledger_sees_the_same_person_in_files_whose_id_columns_parse_differently(tmp_path, capsys):
    # In one file the ids all look numeric, in the other a text id makes the column text: ids were typed per
    # file (7 vs "7"), so the same people passed the cap twice (issue 25). Ids are read as text in every file.
    import json
    from ldpnum.cli import main

    ids = [str(i) for i in range(200)]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"pid": ids, "x": np.linspace(0, 1, 200)}).to_csv(a, index=False)
    pd.DataFrame({"pid": ids + ["guest"], "x": np.linspace(0, 1, 201)}).to_csv(b, index=False)
    ledger = tmp_path / "ledger.json"
    args = ["-c", "x", "-m", "duchi", "-e", "1", "-b", "0", "1", "--rng", "1", "--ledger", str(ledger),
            "--people-column", "pid"]
    assert main(["privatize", str(a), str(tmp_path / "a.parquet"), "--ledger-cap", "1.5"] + args) == 0
    assert json.loads(ledger.read_text())["entries"][0]["people"][:2] == ["0", "1"]
    capsys.readouterr()
    assert main(["privatize", str(b), str(tmp_path / "b.parquet")] + args) == 2
    err = capsys.readouterr().err
    assert "200 person(s) would reach a total epsilon above the cap 1.5 (first: '0' at 2)" in err
    assert not (tmp_path / "b.parquet").exists()
    # "007" stays "007" (type inference read it as the int 7)
    pd.DataFrame({"pid": ["007"], "x": [0.5]}).to_csv(tmp_path / "c.csv", index=False)
    assert main(["privatize", str(tmp_path / "c.csv"), str(tmp_path / "c.parquet")] + args) == 0
    assert json.loads(ledger.read_text())["entries"][1]["people"] == ["007"]


def test_a_ledger_of_int_ids_written_by_the_library_reads_the_column_as_ints(tmp_path, capsys):
    from ldpnum.cli import main

    book = ldp.PrivacyLedger(cap=1.5)
    book.record(epsilon=1.0, people=[0, 1, 2])
    ledger = tmp_path / "ledger.json"
    ledger.write_text(book.to_json())
    args = ["-c", "x", "-m", "duchi", "-e", "1", "-b", "0", "1", "--rng", "1", "--ledger", str(ledger),
            "--people-column", "pid"]
    pd.DataFrame({"pid": ["2", "3"], "x": [0.1, 0.2]}).to_csv(tmp_path / "a.csv", index=False)
    assert main(["privatize", str(tmp_path / "a.csv"), str(tmp_path / "a.parquet")] + args) == 2
    assert "first: 2 at 2" in capsys.readouterr().err  # person 2 is found as the int 2
    pd.DataFrame({"pid": ["3", "x7"], "x": [0.1, 0.2]}).to_csv(tmp_path / "b.csv", index=False)
    assert main(["privatize", str(tmp_path / "b.csv"), str(tmp_path / "b.parquet")] + args) == 2
    assert "the ledger holds int person ids, but 1 id(s)" in capsys.readouterr().err
    pd.DataFrame({"pid": ["3", "4"], "x": [0.1, 0.2]}).to_csv(tmp_path / "c.csv", index=False)
    assert main(["privatize", str(tmp_path / "c.csv"), str(tmp_path / "c.parquet")] + args) == 0
    assert ldp.PrivacyLedger.from_json(ledger.read_text()).total(4) == 1.0


def _edit_record(path, change):
    """Rewrite a report file with its ldpnum record changed by ``change(info)`` (what a hand edit with pyarrow
    does), keeping the data."""
    from ldpnum.io import _with_record

    t = pq.read_table(path)
    info = specs_from_parquet_metadata(t.schema.metadata)
    change(info)
    pq.write_table(t.replace_schema_metadata(_with_record(t.schema.metadata, info)), path)


def test_expect_spec_checks_the_shuffle_declaration(tmp_path, capsys):
    # issue 25: a shuffle declaration added to (or changed in) a file by hand was believed under --expect-spec:
    # a central epsilon printed for reports that were never shuffled, and no "not checked" note
    from ldpnum.cli import main

    pd.DataFrame({"x": np.random.default_rng(0).uniform(0, 100, 20_000)}).to_csv(tmp_path / "in.csv", index=False)
    base = ["-c", "x", "-m", "duchi", "-e", "2", "-b", "0", "100", "--rng", "1"]
    plain, shuffled = tmp_path / "plain.parquet", tmp_path / "shuffled.parquet"
    assert main(["privatize", str(tmp_path / "in.csv"), str(plain), *base, "--write-spec",
                 str(tmp_path / "plain.json")]) == 0
    assert main(["privatize", str(tmp_path / "in.csv"), str(shuffled), *base, "--shuffled", "--write-spec",
                 str(tmp_path / "shuffled.json")]) == 0
    assert json.loads((tmp_path / "plain.json").read_text())["shuffle_delta"] is None
    assert json.loads((tmp_path / "shuffled.json").read_text())["shuffle_delta"] == 1e-6
    capsys.readouterr()
    # untouched files estimate, the shuffled one with its central epsilon and no note
    assert main(["estimate", str(shuffled), "-c", "x", "--expect-spec", str(tmp_path / "shuffled.json")]) == 0
    out = capsys.readouterr()
    assert "central ε (shuffled, n = 20,000, δ = 1e-06)" in out.out and "note" not in out.err
    assert main(["estimate", str(plain), "-c", "x", "--expect-spec", str(tmp_path / "plain.json")]) == 0
    assert "central" not in capsys.readouterr().out
    # a declaration added to the unshuffled file, one changed in the shuffled file, one removed: refused
    _edit_record(plain, lambda info: info.update(shuffle_delta=1e-6))
    assert main(["estimate", str(plain), "-c", "x", "--expect-spec", str(tmp_path / "plain.json")]) == 2
    out = capsys.readouterr()
    assert "central" not in out.out
    assert "declares its reports shuffled (central delta 1e-06), but the collection was deployed not shuffled" \
        in out.err
    _edit_record(shuffled, lambda info: info.update(shuffle_delta=0.5))
    assert main(["estimate", str(shuffled), "-c", "x", "--expect-spec", str(tmp_path / "shuffled.json")]) == 2
    assert "deployed shuffled with central delta 1e-06" in capsys.readouterr().err
    _edit_record(shuffled, lambda info: info.pop("shuffle_delta"))
    assert main(["estimate", str(shuffled), "-c", "x", "--expect-spec", str(tmp_path / "shuffled.json")]) == 2
    assert "declares no shuffle" in capsys.readouterr().err
    # an expected spec that states no declaration (one spec's JSON): the file's declaration is noted unchecked
    one = tmp_path / "one.json"
    one.write_text(json.dumps(json.loads((tmp_path / "plain.json").read_text())["columns"]["x"]))
    assert main(["estimate", str(plain), "-c", "x", "--expect-spec", str(one)]) == 0
    out = capsys.readouterr()
    assert "shuffle declaration (central delta 1e-06) was read from the file and not checked" in out.err


def test_a_csv_row_longer_than_a_block_is_read(tmp_path, capsys, monkeypatch):
    # issue 25: a 20 MB line gave Arrow's "straddling object straddles two block boundaries"; the reader now
    # reopens the file with larger blocks and skips the rows already read, so the reports are those of the
    # same file with a short field (same rows, same order, same words)
    from ldpnum.cli import main

    x = np.linspace(0, 1, 30)
    note = ["ok"] * 30
    pd.DataFrame({"x": x, "note": note}).to_csv(tmp_path / "short.csv", index=False)
    note[12] = "a" * (3 << 20)  # 3 MB: three times the reader's first block
    pd.DataFrame({"x": x, "note": note}).to_csv(tmp_path / "long.csv", index=False)
    args = ["-c", "x", "-m", "duchi", "-e", "1", "-b", "0", "1", "--rng", "1", "--batch-size", "7"]
    for name in ("short", "long"):
        assert main(["privatize", str(tmp_path / f"{name}.csv"), str(tmp_path / f"{name}.parquet"), *args,
                     "--keep", "note"]) == 0
    short, long = pd.read_parquet(tmp_path / "short.parquet"), pd.read_parquet(tmp_path / "long.parquet")
    assert long["x"].tolist() == short["x"].tolist() and long["note"].str.len()[12] == 3 << 20
    # beyond the largest block: one message naming where and what to do
    monkeypatch.setattr(ldpnum_io, "CSV_MAX_BLOCK", 1 << 20)  # no larger block than the first
    capsys.readouterr()
    assert main(["privatize", str(tmp_path / "long.csv"), str(tmp_path / "l2.parquet"), *args, "--keep",
                 "note"]) == 2
    err = capsys.readouterr().err
    assert "a row after row" in err and "longer than 1 MB" in err and "unclosed quote" in err
    assert "straddl" not in err


def test_messages_name_what_works(tmp_path, capsys):
    from ldpnum.cli import main

    pd.DataFrame({"w": ["a", "b"] * 50, "x": np.arange(100.0)}).to_csv(tmp_path / "w.csv", index=False)
    # a mechanism without bounds is named as such (it was asked for --bounds)
    assert main(["privatize", str(tmp_path / "w.csv"), str(tmp_path / "o.parquet"), "-c", "w", "-m", "pem",
                 "-e", "4"]) == 2
    err = capsys.readouterr().err
    assert "--bounds" not in err and "PEM is not a mechanism for numerical columns" in err
    assert "ldpnum heavy-hitters FILE --column C --method pem" in err
    # a tiny epsilon: the range that works, not the plan's internals
    assert main(["heavy-hitters", str(tmp_path / "w.csv"), "-c", "w", "--epsilon=1e-300"]) == 2
    err = capsys.readouterr().err
    assert "lie blocks" not in err and "the smallest epsilon it takes is about 1e-15" in err
    with pytest.raises(ValueError, match=r"any epsilon in \[1e-15, 20\] works"):
        ldp.GRR(1e-16, k=5)
    ldp.GRR(1e-15, k=5)  # the stated bound is admissible


def test_the_missing_pyarrow_message_names_the_extra_the_guide_documents(monkeypatch):
    import importlib.util
    import re
    import tomllib

    root = Path(__file__).resolve().parents[2]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(cli.CLIError) as info:
        ldpnum_io.require_pyarrow()
    command = re.search(r'pip install "ldpnum\[(\w+)\]"', str(info.value))
    assert command, str(info.value)
    assert command.group(0) in (root / "docs" / "guides" / "command-line.md").read_text()
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("pyarrow") for d in extras[command.group(1)])
