"""The maximum-likelihood estimates (``method="mle"``) through every front end, checked before a report is read.

pandas and Polars accessors (``estimate_mean``, ``estimate_frequencies``, ``describe``), Dask's estimate helpers and
``ldpnum estimate --method mle``: each answer equals the mechanism's own ``method="mle"`` estimate, and a method the
mechanism does not offer is refused before any report is read (the reading functions are replaced by ones that fail,
so a refusal that came after reading would show as that failure instead).
"""

import json

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import cli
from ldpnum import pandas as ldp_pandas

RR = ldp.RandomizedResponse(epsilon=1.0)
DUCHI = ldp.Duchi(epsilon=1.0, bounds=(0.0, 10.0))
GRR = ldp.GRR(epsilon=2.0, categories=["tea", "coffee", "water"])
SW = ldp.SquareWave(epsilon=1.0, bounds=(0.0, 10.0))
N = 400  # small n, where the MLE differs from the clipped unbiased estimate


MECHANISMS = {"smoker": RR, "hours": DUCHI, "drink": GRR, "t": SW}


@pytest.fixture(scope="module")
def values():
    rng = np.random.default_rng(20261202)
    return pd.DataFrame({"smoker": rng.random(N) < 0.04, "hours": rng.uniform(0, 2, N),
                         "drink": rng.choice(["tea", "coffee", "water"], N, p=[0.05, 0.15, 0.8]),
                         "t": rng.uniform(0, 10, N)})


@pytest.fixture(scope="module")
def reports(values):
    return values.ldp.privatize(MECHANISMS, rng=3, strategy="all-columns")


def unread(monkeypatch, module, name):
    """Make ``module.name`` (a function that reads reports) fail if it is called."""
    def fail(*args, **kwargs):
        raise AssertionError(f"{name} read the reports before the request was checked")
    monkeypatch.setattr(module, name, fail)


def test_accessors_give_the_mechanisms_mle(reports):
    for col, mech in (("smoker", RR), ("hours", DUCHI)):
        want = mech.estimate_mean(reports[col].ldp.aggregate(), method="mle")
        got = reports[col].ldp.estimate_mean(method="mle")
        assert got.method == "mle" and got.value == want.value
        assert got.confidence_interval(0.9) == want.confidence_interval(0.9)
    want = GRR.estimate_frequencies(reports["drink"].ldp.aggregate(), method="mle")
    got = reports["drink"].ldp.estimate_frequencies(method="mle")
    assert got.method == "mle" and np.array_equal(got.frequencies, want.frequencies)
    assert got.to_frame().index.tolist() == ["tea", "coffee", "water"]
    # describe: the numerical columns' means by maximum likelihood, with their likelihood-ratio intervals
    table = reports[["smoker", "hours"]].ldp.describe(method="mle", level=0.9)
    for col, mech in (("smoker", RR), ("hours", DUCHI)):
        est = mech.estimate_mean(reports[col].ldp.aggregate(), method="mle")
        lo, hi = est.confidence_interval(0.9)
        assert table.loc[col, ["mean", "ci_low", "ci_high"]].tolist() == [est.value, lo, hi]
    # the Series' describe is the frame's row
    pd.testing.assert_frame_equal(reports["smoker"].ldp.describe(method="mle", level=0.9), table.loc[["smoker"]])
    assert reports.ldp.estimate_mean("smoker", method="mle").tolist() == [table.loc["smoker", "mean"]]
    unbiased = reports["smoker"].ldp.describe()
    assert unbiased.loc["smoker", "mean"] == RR.estimate_mean(reports["smoker"].ldp.aggregate()).value


def test_accessors_refuse_a_method_before_reading(reports, monkeypatch):
    unread(monkeypatch, ldp_pandas, "aggregate_series")
    with pytest.raises(ValueError, match="square_wave reports have no maximum-likelihood estimate of the mean.*"
                                         "offered for the mean of .*randomized_response"):
        reports["t"].ldp.estimate_mean(method="mle")
    with pytest.raises(ValueError, match="column 't': method='mle': square_wave"):
        reports.ldp.describe(method="mle")
    with pytest.raises(ValueError, match="column 't': method='mle'"):
        reports["t"].ldp.describe(method="mle")
    with pytest.raises(ValueError, match="method must be one of 'unbiased', 'mle'; got 'ml'"):
        reports["smoker"].ldp.estimate_mean(method="ml")
    olh = pd.Series([0, 1, 2] * 10, name="c").ldp.privatize(ldp.OLH(2.0, k=3), rng=0)
    with pytest.raises(ValueError, match="olh reports have no maximum-likelihood estimate of frequencies.*grr"):
        olh.ldp.estimate_frequencies(method="mle")
    # negative control: the replaced reader is what an unchecked request reaches
    with pytest.raises(AssertionError, match="read the reports"):
        reports["t"].ldp.estimate_mean()


def test_polars_and_dask(values, reports, monkeypatch):
    pl = pytest.importorskip("polars")
    dd = pytest.importorskip("dask.dataframe")
    import ldpnum.dask as ldp_dask
    import ldpnum.polars  # noqa: F401

    want = RR.estimate_mean(reports["smoker"].ldp.aggregate(), method="mle")
    s = pl.Series("smoker", reports["smoker"].to_numpy())
    s = ldpnum.polars.with_record(s, reports.attrs["ldpnum"])
    assert s.ldp.estimate_mean(method="mle").value == want.value
    assert s.ldp.describe(method="mle")["mean"].to_list() == [want.value]
    ddf = dd.from_pandas(values, npartitions=3).ldp.privatize(MECHANISMS, rng=3, strategy="all-columns")
    with ldp_dask.dask.config.set(scheduler="sync"):
        aggs = ddf.ldp.aggregate().compute()
        want = RR.estimate_mean(aggs["smoker"], method="mle")
        assert ddf.ldp.estimate_mean("smoker", method="mle").value == want.value
        assert ddf["smoker"].ldp.estimate_mean(method="mle").value == want.value
        freq = ddf.ldp.estimate_frequencies("drink", method="mle")
        assert np.array_equal(freq.frequencies, GRR.estimate_frequencies(aggs["drink"], method="mle").frequencies)
        assert ddf[["smoker", "hours"]].ldp.describe(method="mle").loc["smoker", "mean"] == want.value
        assert ddf["smoker"].ldp.describe(method="mle").loc["smoker", "mean"] == want.value
        unread(monkeypatch, ldp_dask, "aggregate")  # refused before any partition is read
        with pytest.raises(ValueError, match="square_wave reports have no maximum-likelihood"):
            ddf.ldp.estimate_mean("t", method="mle")
        with pytest.raises(ValueError, match="column 't': method='mle'"):
            ddf.ldp.describe(method="mle")
        with pytest.raises(ValueError, match="column 't': method='mle'"):
            ddf["t"].ldp.describe(method="mle")


def run(argv, capsys):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_estimate_method_mle(reports, tmp_path, capsys, monkeypatch):
    pytest.importorskip("pyarrow")
    path = tmp_path / "r.parquet"
    reports.to_parquet(path)
    status, out, err = run(["estimate", path, "-c", "smoker", "--method", "mle", "--json", "--level", 0.9], capsys)
    assert status == 0, err
    doc = json.loads(out)["mean"]
    want = RR.estimate_mean(reports["smoker"].ldp.aggregate(), method="mle")
    assert doc["method"] == "mle" and doc["value"] == want.value and doc["ci"] == list(want.confidence_interval(0.9))
    status, out, err = run(["estimate", path, "-c", "smoker", "--method", "mle"], capsys)
    assert status == 0 and "mean (maximum likelihood)" in out and "likelihood-ratio CI" in out, err
    status, out, err = run(["estimate", path, "-c", "drink", "--method", "mle", "--json"], capsys)
    freq = json.loads(out)["frequencies"]
    want_f = GRR.estimate_frequencies(reports["drink"].ldp.aggregate(), method="mle")
    assert freq["method"] == "mle" and freq["frequency"] == want_f.frequencies.tolist()
    assert freq["category"] == ["tea", "coffee", "water"]
    status, out, err = run(["estimate", path, "-c", "drink", "--method", "mle"], capsys)
    assert status == 0 and "profile-likelihood CI" in out, err
    # a window mechanism's distribution estimator is still --method's (default ems-cv)
    status, out, err = run(["estimate", path, "-c", "t", "-w", "distribution", "--method", "em", "--json"], capsys)
    assert status == 0 and json.loads(out)["distribution"]["method"] == "em", err
    # refused before a report is read
    unread(monkeypatch, cli, "aggregate_file")
    for argv, what in ((["-c", "t", "--method", "mle"], "--method mle: square_wave reports have no maximum-likelihood"),
                       (["-c", "t", "--method", "mle", "-w", "quantiles"], "it does not apply to --what quantiles"),
                       (["-c", "drink", "--method", "mle", "--postprocess", "norm-sub"], "takes no --postprocess")):
        status, _, err = run(["estimate", path, *argv], capsys)
        assert status == 2 and err.startswith("ldpnum: error: ") and what in err and "Traceback" not in err, err
    with pytest.raises(AssertionError, match="read the reports"):  # negative control
        cli.main(["estimate", str(path), "-c", "t"])


def test_cli_refuses_a_cut_hdg_range_before_reading(tmp_path, capsys, monkeypatch):
    pytest.importorskip("pyarrow")
    hdg = ldp.HDG(1.0, {"x": (0, 1), "y": (0, 1)}, granularities=(4, 2))
    xy = pd.DataFrame(np.random.default_rng(1).uniform(0, 1, (300, 2)), columns=["x", "y"])
    path = tmp_path / "hdg.parquet"
    xy.ldp.privatize({("x", "y"): hdg}, rng=2).to_parquet(path)
    with pytest.raises(ValueError) as lib:
        hdg.check_range_interval({"x": (0.1, 0.5), "y": (0.0, 0.5)})
    unread(monkeypatch, cli, "aggregate_file")
    status, _, err = run(["estimate", path, "-c", "x,y", "--range", "x:0.1:0.5", "y:0:0.5", "--bootstrap", 39],
                         capsys)
    assert status == 2 and err.startswith("ldpnum: error: --range with --bootstrap: range(ci=): 1 of 1 queries cut "
                                          "cells of the 2-D grid (2 x 2 cells)"), err
    assert str(lib.value).split(". ")[0] in err
    # on the cells' edges the request passes the check (and goes on to read the reports)
    with pytest.raises(AssertionError, match="read the reports"):
        cli.main(["estimate", str(path), "-c", "x,y", "--range", "x:0:0.5", "y:0:0.5", "--bootstrap", "39"])
