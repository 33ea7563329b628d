"""``ldpnum privatize --categories``: text and Parquet category columns with declared categories."""
import json

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import cli

DRINKS = ["tea", "coffee", "water"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"drink": rng.choice(DRINKS, 3000, p=[0.5, 0.3, 0.2]), "age": rng.uniform(0, 100, 3000)})
    d = tmp_path_factory.mktemp("cli_categories")
    frame.to_csv(d / "in.csv", index=False)
    frame.astype({"drink": pd.CategoricalDtype(DRINKS)}).to_parquet(d / "in.parquet", row_group_size=1000)
    return d, frame


def run(argv, capsys):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("source", ["in.csv", "in.parquet"])
def test_reports_of_a_text_column_equal_the_accessor_and_are_labelled(files, source, capsys, tmp_path):
    d, frame = files
    out = tmp_path / "r.parquet"
    status, _, err = run(["privatize", d / source, out, "-c", "drink", "-c", "age", "-m", "grr", "-m", "sw",
                          "-e", "2", "--categories", ",".join(DRINKS), "-b", "0", "100", "--rng", "3",
                          "--batch-size", "700"], capsys)
    assert status == 0, err
    want = frame.ldp.privatize({"drink": ldp.GRR(2.0, categories=DRINKS), "age": ldp.SquareWave(2.0, (0, 100))},
                               rng=3, strategy="all-columns")
    got = pd.read_parquet(out)
    np.testing.assert_array_equal(got["drink"].to_numpy(), want["drink"].to_numpy())
    assert got.ldp.specs == want.ldp.specs
    status, stdout, _ = run(["estimate", out, "-c", "drink", "--json"], capsys)
    assert status == 0 and json.loads(stdout)["frequencies"]["category"] == DRINKS
    status, stdout, _ = run(["estimate", out, "-c", "drink"], capsys)
    assert status == 0 and "    coffee  " in stdout


def test_refusals(files, capsys, tmp_path):
    d, _ = files
    out = tmp_path / "r.parquet"
    base = ["privatize", d / "in.csv", out, "-c", "drink", "-m", "grr", "-e", "1"]
    status, _, err = run(base, capsys)
    assert status != 0 and "--categories A,B,..." in err
    status, _, err = run(base + ["--categories", "tea,coffee"], capsys)
    assert status != 0 and "outside the declared categories, first at index" in err and "'water'" in err
    status, _, err = run(base + ["--categories", "tea,tea,water"], capsys)
    assert status != 0 and "must be unique" in err
    status, _, err = run(base + ["--categories", "tea,coffee,water", "--categories", "a,b"], capsys)
    assert status != 0 and "--categories was given 2 time(s) for 1 column(s)" in err
    assert not out.exists()


def test_categories_read_from_a_parquet_category_column(files, capsys, tmp_path):
    d, frame = files
    # declared categories, one of them held by no one, survive in the file's dictionary and are used in order
    declared = ["tea", "coffee", "water", "juice"]
    frame.astype({"drink": pd.CategoricalDtype(declared)}).to_parquet(tmp_path / "in.parquet", row_group_size=900)
    status, _, err = run(["privatize", tmp_path / "in.parquet", tmp_path / "a.parquet", "-c", "drink", "-m", "grr",
                          "-e", "2", "--rng", "3", "--batch-size", "700"], capsys)
    assert status == 0, err
    assert "4 categories read from the file's dictionary (tea, coffee, water, juice): they must be public" in err
    status, _, err = run(["privatize", tmp_path / "in.parquet", tmp_path / "b.parquet", "-c", "drink", "-m", "grr",
                          "-e", "2", "--rng", "3", "--categories", ",".join(declared)], capsys)
    assert status == 0 and "note" not in err, err
    a, b = pd.read_parquet(tmp_path / "a.parquet")["drink"], pd.read_parquet(tmp_path / "b.parquet")["drink"]
    assert a.ldp.spec == b.ldp.spec == ldp.GRR(2.0, categories=declared).spec
    assert np.array_equal(a.to_numpy(), b.to_numpy())
    # no dictionary to read: a CSV file, or a numeric column
    for src, column in ((d / "in.csv", "drink"), (d / "in.parquet", "age")):
        status, _, err = run(["privatize", src, tmp_path / "c.parquet", "-c", column, "-m", "grr", "-e", "2"], capsys)
        assert status == 2 and f"column {column!r} needs its categories: give --categories A,B" in err, err
