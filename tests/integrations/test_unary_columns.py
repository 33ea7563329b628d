"""Bit-vector reports (SUE, OUE, subset selection) as table columns: one unsigned code per person, bit j = bit j.

Through the pandas accessor, Parquet files, the command line, Polars and Dask, each column's codes are the
mechanism's own reports packed (:meth:`ldpnum.Mechanism.column_codes`) and estimate what the reports estimate.
"""

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import cli
from ldpnum._random import child_rng
from ldpnum.reports import packed_column_codes, packed_column_rows

DRINKS = ["tea", "coffee", "water"]
N = 3000


@pytest.fixture(scope="module")
def drinks():
    rng = np.random.default_rng(7)
    return pd.Series(rng.choice(DRINKS, N, p=[0.5, 0.3, 0.2]), name="drink").astype(pd.CategoricalDtype(DRINKS))


@pytest.mark.parametrize("mech", [ldp.OUE(2.0, k=3), ldp.SUE(2.0, k=3), ldp.SubsetSelection(2.0, k=3)],
                         ids=lambda m: type(m).__name__)
def test_pandas_column_holds_the_packed_reports(drinks, mech, tmp_path):
    r = drinks.ldp.privatize(mech, rng=1)
    direct = mech.privatize(drinks.cat.codes.to_numpy(), rng=child_rng(1, 0))
    assert r.dtype == np.uint8 and np.array_equal(r.to_numpy(), mech.column_codes(direct))
    assert mech.reports_from_column(r.to_numpy()) == direct
    np.testing.assert_array_equal(r.ldp.aggregate().counts, mech.aggregate(direct).counts)
    est = r.ldp.estimate_frequencies()
    np.testing.assert_array_equal(est.frequencies, mech.estimate_frequencies(direct).frequencies)
    assert est.to_series().index.tolist() == DRINKS
    # through a Parquet file, with the spec and digest
    r.to_frame().to_parquet(tmp_path / "r.parquet")
    back = pd.read_parquet(tmp_path / "r.parquet")["drink"]
    np.testing.assert_array_equal(back.ldp.estimate_frequencies().frequencies, est.frequencies)


def test_one_column_per_row_and_the_other_front_ends(drinks, tmp_path, capsys):
    oue = ldp.OUE(2.0, k=3)
    frame = pd.DataFrame({"drink": drinks, "x": np.linspace(0, 1, N)})
    mechs = {"drink": oue, "x": ldp.Duchi(1.0, (0, 1))}
    r = frame.ldp.privatize(mechs, rng=2, strategy="one-column-per-row")
    assert r["drink"].dtype == "UInt8" and 0 < r["drink"].notna().sum() < N
    want = r["drink"].ldp.aggregate()
    assert want.n_reports == r["drink"].notna().sum()
    # Polars and Dask give the same reports for the same seed
    pl = pytest.importorskip("polars")
    dd = pytest.importorskip("dask.dataframe")
    import dask

    import ldpnum.dask  # noqa: F401
    import ldpnum.polars  # noqa: F401

    # a Polars Enum holds declared categories, in order; a Polars Categorical only the values met, so it is text
    enum = pl.from_pandas(frame.assign(drink=drinks.astype(str))).with_columns(pl.col("drink").cast(pl.Enum(DRINKS)))
    got = enum.ldp.privatize(mechs, rng=2, strategy="one-column-per-row")
    assert got.ldp.column("drink").ldp.aggregate() == want
    with pytest.raises(TypeError, match="declared"):
        pl.from_pandas(frame).ldp.privatize(mechs, rng=2, strategy="one-column-per-row")
    labelled = {"drink": oue.with_categories(DRINKS), "x": mechs["x"]}
    got = pl.from_pandas(frame).ldp.privatize(labelled, rng=2, strategy="one-column-per-row")
    assert got.ldp.column("drink").ldp.aggregate() == want
    with dask.config.set(scheduler="sync"):
        parts = dd.from_pandas(frame, npartitions=2).ldp.privatize(mechs, rng=2, strategy="one-column-per-row")
        agg = parts.ldp.aggregate("drink").compute()
    assert agg.n_reports + parts.ldp.aggregate("x").compute().n_reports == N
    # the command line: privatize a text column with declared categories, estimate from the file
    pd.DataFrame({"drink": drinks.astype(str)}).to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "o.parquet"
    assert cli.main(["privatize", str(tmp_path / "in.csv"), str(out), "-c", "drink", "-m", "oue", "-e", "2",
                     "--categories", ",".join(DRINKS), "--rng", "1"]) == 0
    file_codes = pd.read_parquet(out)["drink"]
    direct = ldp.OUE(2.0, k=3).privatize(drinks.cat.codes.to_numpy(), rng=child_rng(1, 0))
    assert np.array_equal(file_codes.to_numpy(), oue.column_codes(direct))
    capsys.readouterr()
    assert cli.main(["estimate", str(out), "-c", "drink"]) == 0
    assert "coffee" in capsys.readouterr().out


def test_packing_round_trip_and_refusals():
    rng = np.random.default_rng(3)
    for bits in (1, 8, 9, 33, 64):
        rows = np.packbits(rng.integers(0, 2, (50, bits)), axis=1, bitorder="little")
        codes = packed_column_codes(rows, bits)
        assert codes.dtype.itemsize == (1 if bits <= 8 else 2 if bits <= 16 else 4 if bits <= 32 else 8)
        np.testing.assert_array_equal(packed_column_rows(codes, bits), rows)
    with pytest.raises(ValueError, match="2 code\\(s\\) have bits set beyond the 3 bits of a report, first at "
                                         "index 1 \\(8\\)"):
        packed_column_rows(np.array([7, 8, 9], dtype=np.uint64), 3)
    with pytest.raises(ValueError, match="negative"):
        ldp.OUE(1.0, k=3).reports_from_column(np.array([-1]))
    with pytest.raises(TypeError, match="bit vectors of 65 bits per person"):
        pd.Series(np.zeros(3, dtype=int)).ldp.privatize(ldp.OUE(1.0, k=65))


def test_rappor_column_through_parquet_and_the_command_line(tmp_path, capsys):
    # RAPPOR's report (k Bloom bits, then the cohort) packed in one code per person, decoded against candidates
    import json

    rappor = ldp.RAPPOR(k=32, h=2, cohorts=8)
    assert rappor.spec.get("packed_bits") == 35
    rng = np.random.default_rng(0)
    words = pd.Series(rng.choice(DRINKS + ["juice"], 5000, p=[0.4, 0.3, 0.2, 0.1]), name="drink")
    keys = ldp.ClientKeys.generate(len(words), rng=1)
    r = words.ldp.privatize(rappor, keys=keys, round=1, rng=2)
    assert r.dtype == np.uint64 and int(r.max()) < 2 ** 35
    candidates = DRINKS + ["juice"]
    want = r.ldp.estimate_frequencies(candidates=candidates)
    r.to_frame().to_parquet(tmp_path / "r.parquet")
    back = pd.read_parquet(tmp_path / "r.parquet")["drink"]
    assert back.ldp.aggregate() == r.ldp.aggregate()
    assert rappor.reports_from_column(back.to_numpy()).codes.shape == (len(words), 5)  # 4 Bloom bytes + cohort
    capsys.readouterr()
    assert cli.main(["estimate", str(tmp_path / "r.parquet"), "-c", "drink", "--candidates", ",".join(candidates),
                     "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["frequencies"]
    assert got["category"] == list(want.items) and got["method"] == "lasso+least-squares"
    np.testing.assert_array_equal(got["frequency"], want.frequencies)
    np.testing.assert_array_equal(got["standard_error"], want.standard_errors)
    (tmp_path / "words.txt").write_text("\n".join(candidates) + "\n", encoding="utf-8")
    assert cli.main(["estimate", str(tmp_path / "r.parquet"), "-c", "drink", "--candidates",
                     f"@{tmp_path / 'words.txt'}"]) == 0
    assert "coffee" in capsys.readouterr().out
    # refused before a report is read: no candidates, a postprocess, candidates for a column with its own categories
    def no_reading(*args, **kwargs):
        raise AssertionError("the reports were read")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli, "aggregate_file", no_reading)
        assert cli.main(["estimate", str(tmp_path / "r.parquet"), "-c", "drink"]) == 2
    assert ("rappor frequencies without segment pairs are decoded against a dictionary of items only: give "
            "--candidates") in capsys.readouterr().err
    assert cli.main(["estimate", str(tmp_path / "r.parquet"), "-c", "drink", "--candidates", "tea",
                     "--postprocess", "clip"]) == 2
    assert "decoded against the candidates and take no --postprocess" in capsys.readouterr().err
    pd.DataFrame({"drink": words}).to_csv(tmp_path / "in.csv", index=False)
    assert cli.main(["privatize", str(tmp_path / "in.csv"), str(tmp_path / "g.parquet"), "-c", "drink", "-m", "grr",
                     "-e", "2", "--categories", ",".join(candidates), "--rng", "1"]) == 0
    assert cli.main(["estimate", str(tmp_path / "g.parquet"), "-c", "drink", "--candidates", "tea"]) == 2
    assert "--candidates apply to reports decoded against a dictionary" in capsys.readouterr().err
