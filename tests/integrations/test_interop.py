"""One Parquet layout: report files written by the CLI, pandas, Dask and Polars are read by all four alike;
killed runs leave no hidden files behind; the CLI states and checks the expected spec, digests and MACs."""

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
dd = pytest.importorskip("dask.dataframe")
pl = pytest.importorskip("polars")

import ldpnum as ldp  # noqa: E402
import ldpnum.dask  # noqa: E402,F401
import ldpnum.polars  # noqa: E402
from ldpnum.cli import aggregate_file, main, privatize_file  # noqa: E402

SW = ldp.SquareWave(1.0, (0, 1))
PW = ldp.Piecewise(2.0, (0, 10))
MECHS = {"x": SW, "y": PW}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("interop")
    g = np.random.default_rng(0)
    df = pd.DataFrame({"x": g.uniform(0, 1, 3000), "y": g.uniform(0, 10, 3000)})
    df.to_parquet(d / "in.parquet")
    out = {}
    for strategy in ("all-columns", "one-column-per-row"):
        cli = d / f"cli-{strategy}.parquet"
        privatize_file(d / "in.parquet", cli, MECHS, rng=0, strategy=strategy)
        pdf = d / f"pandas-{strategy}.parquet"
        df.ldp.privatize(MECHS, rng=0, strategy=strategy).to_parquet(pdf)
        ddir = d / f"dask-{strategy}"
        dd.from_pandas(df, npartitions=3).ldp.privatize(MECHS, rng=0, strategy=strategy).to_parquet(ddir)
        plf = d / f"polars-{strategy}.parquet"
        pl.from_pandas(df).ldp.privatize(MECHS, rng=0, strategy=strategy).ldp.write_parquet(plf)
        out[strategy] = {"cli": cli, "pandas": pdf, "dask": ddir, "polars": plf}
    return out


READERS = {
    "pandas": lambda p, c: pd.read_parquet(p)[c].ldp.aggregate(),
    "dask": lambda p, c: dd.read_parquet(p).ldp.aggregate(c).compute(scheduler="sync"),
    "cli": lambda p, c: aggregate_file(p, c)[0],
    "polars": lambda p, c: ldpnum.polars.read_parquet(p).ldp.column(c).ldp.aggregate(),
}


@pytest.mark.parametrize("strategy", ["all-columns", "one-column-per-row"])
@pytest.mark.parametrize("writer", ["cli", "pandas", "dask", "polars"])
@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_reads_every_writer(files, strategy, writer, reader):
    path = files[strategy][writer]
    if reader == "polars" and writer == "dask":  # a directory of parts: merged, checked, by aggregate_file only
        with pytest.raises(ValueError, match="directory of part files"):
            READERS[reader](path, "x")
        return
    truth = {c: READERS["pandas"](files[strategy]["pandas"], c) for c in MECHS}
    for c, m in MECHS.items():
        agg = READERS[reader](path, c)
        assert agg.spec == m.spec
        if writer != "dask":  # the pandas, Polars and CLI writers draw the same words (one stream per column)
            assert agg == truth[c]
        expected_n = 3000 if strategy == "all-columns" else None
        if expected_n is not None:
            assert agg.n_reports == expected_n


def test_cli_and_pandas_write_one_metadata_layout(files):
    for strategy in ("all-columns", "one-column-per-row"):
        a = pq.read_schema(files[strategy]["cli"]).metadata
        b = pq.read_schema(files[strategy]["pandas"]).metadata
        assert json.loads(a[b"PANDAS_ATTRS"]) == json.loads(b[b"PANDAS_ATTRS"])
        assert (json.loads(a[b"pandas"])["attributes"] == json.loads(b[b"pandas"])["attributes"]
                == json.loads(a[b"PANDAS_ATTRS"]))


def _edit_codes(src, dst, column):
    """Rewrite a report file with one column's codes halved, keeping its metadata (a silent edit)."""
    t = pq.read_table(src)
    i = t.schema.get_field_index(column)
    halved = pa.compute.divide(t.column(column), 2).cast(t.schema.field(column).type)
    pq.write_table(t.set_column(i, t.schema.field(column), halved), dst)


@pytest.mark.parametrize("writer", ["cli", "pandas"])
def test_edited_codes_in_a_file_are_refused_by_every_reader(files, tmp_path, writer):
    edited = tmp_path / "edited.parquet"
    _edit_codes(files["all-columns"][writer], edited, "x")
    with pytest.raises(ValueError, match="no longer holds the reports"):
        pd.read_parquet(edited)["x"].ldp.estimate_mean()
    from ldpnum.cli import CLIError
    with pytest.raises(CLIError, match="does not hold the codes it was privatized as"):
        aggregate_file(edited, "x")
    assert READERS["cli"](edited, "y") == READERS["pandas"](files["all-columns"]["pandas"], "y")


def test_expect_spec_and_mac_key(tmp_path, capsys):
    src = tmp_path / "in.csv"
    pd.DataFrame({"x": np.linspace(0, 1, 500)}).to_csv(src, index=False)
    key = tmp_path / "key"
    key.write_bytes(b"a collector secret of 32 bytes!!\n")
    out = tmp_path / "r.parquet"
    assert main(["privatize", str(src), str(out), "-c", "x", "-m", "sw", "-e", "1", "-b", "0", "1", "--rng", "0",
                 "--write-spec", str(tmp_path / "spec.json"), "--mac-key-file", str(key)]) == 0
    assert main(["estimate", str(out), "-c", "x", "--expect-spec", str(tmp_path / "spec.json"),
                 "--mac-key-file", str(key), "--json"]) == 0
    capsys.readouterr()
    # the collector expected another spec: refused before a report is read
    other = tmp_path / "other.json"
    other.write_text(ldp.SquareWave(2.0, (0, 1)).spec.to_json())
    assert main(["estimate", str(out), "-c", "x", "--expect-spec", str(other)]) == 2
    assert "instead of" in capsys.readouterr().err
    # a forger who edits the codes and deletes their digest from the record: only the MAC tells
    forged = tmp_path / "forged.parquet"
    _edit_codes(out, forged, "x")
    t = pq.read_table(forged)
    md = dict(t.schema.metadata)
    for k in (b"PANDAS_ATTRS",):
        rec = json.loads(md[k])
        del rec["ldpnum"]["columns"][0]["codes"]
        md[k] = json.dumps(rec).encode()
    pq.write_table(t.replace_schema_metadata(md), forged)
    assert main(["estimate", str(forged), "-c", "x"]) == 0  # no key: nothing left to tell the edit
    capsys.readouterr()
    assert main(["estimate", str(forged), "-c", "x", "--mac-key-file", str(key)]) == 2
    assert "fails its MAC check" in capsys.readouterr().err
    # without a stated spec the CLI says that the file's own record was trusted
    assert main(["estimate", str(out), "-c", "x"]) == 0
    assert "--expect-spec" in capsys.readouterr().err


def test_negative_bounds_in_exponent_form(tmp_path, capsys):
    src = tmp_path / "in.csv"
    pd.DataFrame({"x": np.linspace(-5, 5, 100)}).to_csv(src, index=False)
    assert main(["privatize", str(src), str(tmp_path / "r.parquet"), "-c", "x", "-m", "duchi", "-e", "1",
                 "-b", "-1e1", "1E1", "--rng", "0"]) == 0
    assert "bounds=[-10.0, 10.0]" in capsys.readouterr().out


def test_stale_hidden_files_of_dead_runs_are_removed(tmp_path):
    src = tmp_path / "in.csv"
    pd.DataFrame({"x": np.linspace(0, 1, 100)}).to_csv(src, index=False)
    out = tmp_path / "r.parquet"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".r.parquet.{dead.pid}.0123456789ab.tmp"
    stale.write_bytes(b"half-written")
    live = tmp_path / f".r.parquet.{os.getpid()}.0123456789ab.tmp"  # a running writer's file is kept
    live.write_bytes(b"in progress")
    privatize_file(src, out, {"x": SW}, rng=0)
    assert not stale.exists() and live.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [live.name]


def test_sigterm_removes_the_hidden_file(tmp_path):
    # Deterministic: the run signals itself while writing its second batch (a signal sent from outside can
    # land after the last batch, when there is nothing left to stop).
    src = tmp_path / "in.parquet"
    pd.DataFrame({"x": np.random.default_rng(0).uniform(0, 1, 5000)}).to_parquet(src)
    driver = (
        "import os, signal, sys\n"
        "import pyarrow.parquet as pq\n"
        "from ldpnum.cli import main\n"
        "write, calls = pq.ParquetWriter.write_batch, []\n"
        "def write_batch(self, *a, **k):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 2:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return write(self, *a, **k)\n"
        "pq.ParquetWriter.write_batch = write_batch\n"
        f"sys.exit(main(['privatize', {str(src)!r}, {str(tmp_path / 'r.parquet')!r}, '-c', 'x', '-m', 'sw',"
        " '-e', '1', '-b', '0', '1', '--batch-size', '1000']))\n")
    proc = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert "interrupted" in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["in.parquet"]


def test_dask_errors_name_the_row_of_the_whole_frame():
    df = pd.DataFrame({"x": np.linspace(0, 1, 100)}, index=np.arange(1000, 1100))
    df.loc[1060, "x"] = np.nan
    lazy = dd.from_pandas(df, npartitions=4).ldp.privatize({"x": SW}, rng=0)
    with pytest.raises(ValueError, match=r"first at the row labelled 1060 \(position 10 of partition 2\)"):
        lazy.compute(scheduler="sync")


def test_blank_csv_lines_are_missing_values_not_dropped(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("x,y\n0.1,2\n\n0.3,4\n")
    out = tmp_path / "r.parquet"
    assert main(["privatize", str(src), str(out), "-c", "x", "-m", "sw", "-e", "1", "-b", "0", "1"]) == 2
    assert "1 missing or non-finite value(s), first at row 1" in capsys.readouterr().err
    assert main(["privatize", str(src), str(out), "-c", "x", "-m", "sw", "-e", "1", "-b", "0", "1",
                 "--nan-fill", "0.5", "--rng", "0"]) == 0
    assert pq.read_metadata(out).num_rows == 3


def test_one_bounds_for_several_columns_is_refused(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("x,y\n0.1,2\n0.3,4\n")
    argv = ["privatize", str(src), str(tmp_path / "r.parquet"), "-c", "x", "-c", "y", "-m", "sw", "-e", "1"]
    assert main(argv + ["-b", "0", "5"]) == 2
    assert "once per --column" in capsys.readouterr().err
    assert main(argv + ["-b", "0", "5", "-b", "0", "5", "--strategy", "all-columns"]) == 0


def test_default_strategy_warns_when_it_sums_epsilon():
    df = pd.DataFrame({"x": [0.1, 0.2], "y": [0.3, 0.4]})
    with pytest.warns(ldp.BudgetWarning, match="spends the sum of their epsilons, 3"):
        df.ldp.privatize({"x": SW, "y": ldp.SquareWave(2.0, (0, 1))}, rng=0)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df.ldp.privatize({"x": SW, "y": SW}, rng=0, strategy="all-columns")
        df[["x"]].ldp.privatize({"x": SW}, rng=0)  # one column: nothing is summed
    with pytest.warns(ldp.BudgetWarning):
        dd.from_pandas(df, npartitions=1).ldp.privatize({"x": SW, "y": SW}, rng=0)
