"""`ldpnum privatize --columns C1,C2 --spec ...`: a report column of several value columns (HDG, Marginals) from a
CSV or Parquet file, the same reports and record as the pandas accessor, read back by `ldpnum estimate`
(--range for HDG, --what marginals for Marginals), and one clear error for each misuse."""

import json

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import cli
from ldpnum._frame import column_sources

N = 6000
MARG = ldp.Marginals(4.0, {"a": 3, "b": 3, "c": 2})
HDG = ldp.HDG(2.0, {"x": (0, 1), "y": (0, 1)}, n=N)


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(17)
    a = rng.integers(0, 3, N)
    return pd.DataFrame({"a": a, "b": np.where(rng.random(N) < 0.7, a, rng.integers(0, 3, N)),
                         "c": rng.integers(0, 2, N), "x": rng.random(N), "y": rng.random(N),
                         "site": rng.integers(0, 4, N)})


@pytest.fixture(scope="module")
def files(frame, tmp_path_factory):
    d = tmp_path_factory.mktemp("climulti")
    frame.to_csv(d / "in.csv", index=False)
    frame.to_parquet(d / "in.parquet", row_group_size=2500)
    (d / "m.json").write_text(json.dumps(MARG.spec.to_dict()))
    (d / "h.json").write_text(json.dumps(HDG.spec.to_dict()))
    return d


def run(argv, capsys):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_user_error(status, err, *fragments):
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("ldpnum: error: "), err
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.mark.parametrize("src", ["in.csv", "in.parquet"])
@pytest.mark.parametrize("strategy", ["all-columns", "one-column-per-row"])
def test_same_reports_and_record_as_the_accessor(files, frame, tmp_path, capsys, src, strategy):
    out = tmp_path / "r.parquet"
    status, stdout, err = run(["privatize", files / src, out, "--columns", "a,b,c", "--spec", f"@{files / 'm.json'}",
                               "--column", "x", "-m", "sw", "-e", "1", "-b", "0", "1",
                               "--columns", "x,y", "--spec", json.dumps(HDG.spec.to_dict()), "--keep", "site",
                               "--rng", 5, "--strategy", strategy, "--batch-size", 1700], capsys)
    assert status == 0, err
    assert "a,b,c: marginals" in stdout and "x,y: hdg" in stdout
    got = pd.read_parquet(out)
    want = frame.ldp.privatize({"x": ldp.SquareWave(1.0, (0, 1)), ("a", "b", "c"): MARG, ("x", "y"): HDG},
                               rng=5, strategy=strategy)
    for c in want.columns:
        np.testing.assert_array_equal(got[c].to_numpy(), want[c].to_numpy())
    assert list(got.columns) == ["a,b,c", "x", "x,y", "site"]   # each at its first value column's place
    assert column_sources(got, "a,b,c") == ["a", "b", "c"] and column_sources(got, "x,y") == ["x", "y"]
    assert got.attrs["ldpnum"]["epsilon_per_row"] == (7.0 if strategy == "all-columns" else 4.0)
    # read back by the accessor and by `ldpnum estimate`
    est = got["a,b,c"].ldp.estimate_marginals()
    status, stdout, err = run(["estimate", out, "-c", "a,b,c", "--what", "marginals", "--marginal", "b,a", "--json"],
                              capsys)
    assert status == 0, err
    doc = json.loads(stdout)
    np.testing.assert_allclose(doc["marginals"]["tables"][0]["frequency"], est.marginal(("b", "a")), rtol=0,
                               atol=1e-15)
    assert doc["marginals"]["sets"] == [["a", "b"], ["a", "c"], ["b", "c"]]
    status, stdout, err = run(["estimate", out, "-c", "x,y", "--range", "x:0:0.5", "y:0:0.5", "--json"], capsys)
    assert status == 0, err
    assert json.loads(stdout)["range"]["mass"] == float(got["x,y"].ldp.range({"x": (0, 0.5), "y": (0, 0.5)}))


def test_estimate_marginals_prints_tables_and_maximum_entropy(files, tmp_path, capsys):
    out = tmp_path / "m.parquet"
    calm = ldp.Marginals(4.0, {"a": 3, "b": 3, "c": 2}, k=1)
    status, _, err = run(["privatize", files / "in.csv", out, "--columns", "a,b,c",
                          "--spec", json.dumps(calm.spec.to_dict()), "--rng", 1], capsys)
    assert status == 0, err
    status, stdout, err = run(["estimate", out, "-c", "a,b,c"], capsys)   # default: every released table
    assert status == 0, err
    assert "released sets: a; b; c" in stdout and "P(a):" in stdout and "P(c):" in stdout
    status, stdout, _ = run(["estimate", out, "-c", "a,b,c", "--marginal", "a,c"], capsys)
    assert "P(a, c) (maximum entropy" in stdout and "a / c" in stdout
    status, _, err = run(["estimate", out, "-c", "a,b,c", "--marginal", "a,z"], capsys)
    assert_user_error(status, err, "--marginal 'a,z'", "unknown: z")
    status, _, err = run(["estimate", out, "-c", "a,b,c", "--what", "mean"], capsys)
    assert_user_error(status, err, "estimate marginals only")


def test_estimate_refuses_n_bins_for_hdg(files, tmp_path, capsys):
    # --n-bins on an HDG column raised AttributeError (no n_leaves) with a traceback: now one clear error
    out = tmp_path / "h.parquet"
    status, _, err = run(["privatize", files / "in.csv", out, "--columns", "x,y", "--spec", f"@{files / 'h.json'}",
                          "--rng", 1], capsys)
    assert status == 0, err
    status, _, err = run(["estimate", out, "-c", "x,y", "--range", "x:0:0.5", "--n-bins", 4], capsys)
    assert_user_error(status, err, "--n-bins does not apply to hdg: its bins are the cells of its grids")


@pytest.mark.parametrize("extra,fragments", [
    (["--columns", "a,b,c"], ("--columns was given 1 time(s) and --spec 0",)),
    (["--columns", "a", "--spec", "@m.json"], ("two or more",)),
    (["--columns", "a,b", "--spec", "@m.json"], ("--columns 'a,b'", "Marginals's columns")),
    (["--columns", "a,b,c", "--spec", "@nope.json"], ("cannot read --spec file",)),
    (["--columns", "a,b,c", "--spec", "{]"], ("not an ldpnum spec",)),
    (["--columns", "a,b,c", "--spec", json.dumps(ldp.GRR(1.0, k=3).spec.to_dict())], ("privatizes one column",)),
    (["--columns", "a,b,c", "--spec", "@m.json", "--columns", "a,b,c", "--spec", "@m.json"], ("given twice",)),
    (["--columns", "a,b,q", "--spec", "@m.json"], ("--columns 'a,b,q'", "not in categories: ['q']")),
    (["--columns", "a,b,c", "--spec", "@m.json", "-m", "sw"], ("--mechanism", "--spec")),
    ([], ("nothing to privatize",)),
    (["--column", "x"], ("--column needs --mechanism, --epsilon, --bounds",)),
    (["--columns", "a,b,c", "--spec", "@m.json", "--keep", "a"], ("both privatized and kept",)),
])
def test_misuse_gets_one_clear_error(files, tmp_path, capsys, monkeypatch, extra, fragments):
    monkeypatch.chdir(files)
    status, _, err = run(["privatize", "in.csv", tmp_path / "o.parquet", *extra], capsys)
    assert_user_error(status, err, *fragments)
    assert not (tmp_path / "o.parquet").exists()


def test_bad_codes_in_a_multi_column_input_name_the_rows(files, frame, tmp_path, capsys):
    bad = frame.copy()
    bad.loc[4321, "b"] = 3   # outside b's 3 categories
    bad.to_csv(tmp_path / "bad.csv", index=False)
    status, _, err = run(["privatize", tmp_path / "bad.csv", tmp_path / "o.parquet", "--columns", "a,b,c", "--spec",
                          f"@{files / 'm.json'}", "--batch-size", 1000], capsys)
    assert_user_error(status, err, "column 'a,b,c'", "rows 4000..4999")
    bad.loc[4321, "b"] = np.nan
    bad.to_csv(tmp_path / "bad.csv", index=False)
    status, _, err = run(["privatize", tmp_path / "bad.csv", tmp_path / "o.parquet", "--columns", "a,b,c", "--spec",
                          f"@{files / 'm.json'}"], capsys)
    assert_user_error(status, err, "1 missing", "row 4321")
    assert not (tmp_path / "o.parquet").exists()


# -- every vector mechanism through `privatize --columns a,b,c --spec ...` and `estimate` ----------------------

VECTOR_MECHANISMS = [ldp.PrivHS(2.0, 3), ldp.PrivUnit(2.0, 3), ldp.PrivUnitG(2.0, 3), ldp.SQKR(2.0, 3),
                     ldp.SampledDimensions("hybrid", epsilon=2.0, bounds=[(-1, 1)] * 3),
                     ldp.DuchiMultivariate(2.0, [(-1, 1)] * 3)]


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    d = tmp_path_factory.mktemp("clivec")
    x = np.random.default_rng(8).normal(size=(3000, 3))
    x /= 2 * np.linalg.norm(x, axis=1, keepdims=True)   # inside the unit ball and the box [-1, 1]^3
    df = pd.DataFrame(x, columns=["u", "v", "w"]).assign(site=np.arange(3000) % 4)
    df.to_csv(d / "vec.csv", index=False)
    return d, df


@pytest.mark.parametrize("m", VECTOR_MECHANISMS, ids=lambda m: m.name)
def test_every_vector_mechanism_through_the_cli(vectors, tmp_path, capsys, m):
    # The documented `privatize --columns a,b --spec ...` failed for all of them (unexpected keyword
    # out_of_range for the unit-ball mechanisms; "a digest is taken of one-dimensional integer codes" for the
    # others); `estimate` then read the column as raw Reports and printed a scalar mean.
    d, df = vectors
    out = tmp_path / "r.parquet"
    status, stdout, err = run(["privatize", d / "vec.csv", out, "--columns", "u,v,w", "--spec",
                               json.dumps(m.spec.to_dict()), "--keep", "site", "--rng", 11], capsys)
    assert status == 0, err
    got = pd.read_parquet(out)
    want = df.ldp.privatize({("u", "v", "w"): m}, rng=11)   # the library, same seed: the same reports
    np.testing.assert_array_equal(got["u,v,w"].to_numpy(), want["u,v,w"].to_numpy())
    lib = m.estimate_mean(m.aggregate(m.reports_from_column(want["u,v,w"].to_numpy())))
    status, stdout, err = run(["estimate", out, "-c", "u,v,w", "--json"], capsys)
    assert status == 0, err
    doc = json.loads(stdout)
    assert doc["n_reports"] == 3000 and [e["coordinate"] for e in doc["mean"]["coordinates"]] == [0, 1, 2]
    np.testing.assert_array_equal([e["value"] for e in doc["mean"]["coordinates"]], lib.mean)
    np.testing.assert_array_equal([e["standard_error"] for e in doc["mean"]["coordinates"]], lib.standard_errors)
    lo, hi = lib.confidence_interval(0.95)
    np.testing.assert_array_equal([e["ci"] for e in doc["mean"]["coordinates"]], np.c_[lo, hi])
    # the file's record is read back by the accessor too, and the text output names every coordinate
    assert np.array_equal(got["u,v,w"].ldp.estimate_mean().mean, lib.mean)
    status, stdout, err = run(["estimate", out, "-c", "u,v,w"], capsys)
    assert status == 0 and all(f"[{j}]" in stdout for j in range(3)), err


def test_estimate_bootstrap_prints_intervals_of_ranges_marginals_and_quantiles(files, tmp_path, capsys):
    out = tmp_path / "b.parquet"
    status, _, err = run(["privatize", files / "in.parquet", out, "--columns", "a,b,c", "--spec",
                          f"@{files / 'm.json'}", "--columns", "x,y", "--spec", json.dumps(HDG.spec.to_dict()),
                          "--column", "x", "-m", "sw", "-e", "2", "-b", "0", "1", "--rng", 3], capsys)
    assert status == 0, err
    got = pd.read_parquet(out)
    query = {"x": (0.0, 0.5), "y": (0.0, 0.5)}
    # HDG: the same interval as the estimate's own, reproducible from --rng
    argv = ["estimate", out, "-c", "x,y", "--range", "x:0:0.5", "y:0:0.5", "--bootstrap", 39, "--rng", 4]
    status, stdout, err = run(argv + ["--json"], capsys)
    assert status == 0, err
    doc = json.loads(stdout)["range"]
    want = HDG.estimate_ranges(HDG.aggregate(ldp.Reports(got["x,y"].to_numpy(), HDG.spec)), bootstrap=39,
                               rng=4).range(query, ci=0.95)
    assert doc["ci"] == [want.low, want.high] and doc["level"] == 0.95
    status, stdout, err = run(argv, capsys)
    assert status == 0 and "95% bootstrap CI [" in stdout, err
    # marginals: every cell with its interval and standard error
    status, stdout, err = run(["estimate", out, "-c", "a,b,c", "--marginal", "a,b", "--bootstrap", 39, "--rng", 1],
                              capsys)
    assert status == 0, err
    assert "95% bootstrap CI, standard error" in stdout and len(stdout.splitlines()) >= 11
    # a window mechanism's quantiles and range
    status, stdout, err = run(["estimate", out, "-c", "x", "--what", "quantiles", "range", "--range", 0.2, 0.4,
                               "--bootstrap", 39, "--rng", 2, "--json"], capsys)
    assert status == 0, err
    doc = json.loads(stdout)
    assert len(doc["quantiles"]["ci"]) == 3 and all(lo <= v <= hi for v, (lo, hi) in zip(doc["quantiles"]["value"],
                                                                                            doc["quantiles"]["ci"]))
    assert doc["range"]["ci"][0] <= doc["range"]["mass"] <= doc["range"]["ci"][1]
    # refused where the answer rests on a model the bootstrap does not contain: a range cutting HDG's cells (from
    # the spec, before a report is read), a reconstructed (maximum-entropy) marginal (after the note that the spec
    # was read from the file)
    status, _, err = run(argv[:5] + ["x:0.1:0.5"] + argv[6:], capsys)
    assert_user_error(status, err, "cut cells of the 2-D grid (2 x 2 cells)")
    status, _, err = run(["estimate", out, "-c", "a,b,c", "--marginal", "a,b,c", "--bootstrap", 39], capsys)
    assert status == 2 and err.splitlines()[-1].startswith("ldpnum: error: "), err
    assert "no released set holds ['a', 'b', 'c']" in err
    # refusals before a report is read: too few replicates, a level they cannot support, --rng alone
    status, _, err = run(["estimate", out, "-c", "x,y", "--range", "x:0:1", "--bootstrap", 5], capsys)
    assert_user_error(status, err, "--bootstrap must be an integer >= 20")
    status, _, err = run(["estimate", out, "-c", "x", "-w", "quantiles", "--bootstrap", 39, "--level", 0.99], capsys)
    assert_user_error(status, err, "--level=0.99 needs at least 199 bootstrap replicates")
    status, _, err = run(["estimate", out, "-c", "x", "-w", "quantiles", "--rng", 3], capsys)
    assert_user_error(status, err, "--rng seeds the --bootstrap resampling")
