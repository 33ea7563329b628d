"""Shuffled collections on results: every estimate of a shuffled aggregate shows the central ε, and the pandas /
command-line wiring. Aggregate.shuffled itself (the declaration, the merge rule, round trips) is tested in
tests/test_aggregate.py."""

import pickle

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum.accounting import shuffle_epsilon
from ldpnum.mechanisms import registered

from test_aggregate import sw_aggregate
from test_common import CASES, build


def test_published_value_on_an_aggregate():
    # Feldman, McMillan and Talwar: n = 1e5, eps0 = 4, delta = 1e-6 gives about 0.17
    m = ldp.GRR(epsilon=4.0, k=2)
    agg = m.aggregate(m.privatize(np.zeros(100_000, dtype=np.int64), rng=0)).shuffled(1e-6)
    assert round(agg.shuffle.epsilon, 3) == 0.17
    assert m.estimate_frequencies(agg).privacy == ("local ε = 4, central ε (shuffled, n = 100,000, δ = 1e-06) = "
                                                    f"{agg.shuffle.epsilon:.4g}")


def _values(name, m, n=4_000):
    """n valid inputs of a registered mechanism, cycling through its test case's inputs."""
    inputs = list(CASES[name].inputs(m))
    return np.asarray([inputs[i % len(inputs)] for i in range(n)])


@pytest.mark.parametrize("name", list(registered()))
def test_every_estimate_of_a_shuffled_aggregate_shows_the_central_epsilon(name):
    case = CASES[name]
    m = build(name, **case.settings[0])
    agg = m.aggregate(m.privatize(_values(name, m), rng=0))
    s = agg.shuffled(1e-6)
    methods = [a for a in dir(m) if a.startswith("estimate_")]
    assert methods, name
    shown = 0
    for attr in methods:
        try:
            plain = getattr(m, attr)(agg)
        except TypeError:  # an estimator that needs more than the aggregate (e.g. a coordinate)
            continue
        est = getattr(m, attr)(s)
        assert plain.shuffle is None and "central" not in repr(plain), (name, attr)
        assert est.shuffle == s.shuffle, (name, attr)
        assert est.privacy == s.shuffle.describe()
        assert s.shuffle.describe() in repr(est), (name, attr)
        if hasattr(est, "_repr_html_"):
            assert "central ε (shuffled, n = 4,000, δ = 1e-06)" in est._repr_html_(), (name, attr)
        shown += 1
    assert shown, name


def test_reports_are_never_declared_and_vector_mechanisms_show_it_too():
    m = ldp.DuchiMultivariate(epsilon=2.0, bounds=[(0, 1)] * 3)
    reports = m.privatize(np.random.default_rng(0).random((5_000, 3)), rng=1)
    assert m.estimate_mean(reports).shuffle is None
    s = m.aggregate(reports).shuffled(1e-6)
    est = m.estimate_mean(s)
    assert est.shuffle == shuffle_epsilon(2.0, 5_000, 1e-6) and "central ε" in repr(est) and "central ε" in str(est)


def test_bootstrapped_estimates_keep_it():
    m, agg = sw_aggregate(n=5_000)
    est = m.estimate_distribution(agg.shuffled(1e-6), bootstrap=20, rng=0, method="ems")
    assert est.shuffle is not None and est.replicates.shape[0] == 20
    assert pickle.loads(pickle.dumps(est)).shuffle == est.shuffle


# -- pandas ---------------------------------------------------------------------------------------------------

def test_pandas_series_and_frame():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"t": rng.uniform(0, 1440, 8_000), "c": rng.integers(0, 4, 8_000)})
    ledger = ldp.PrivacyLedger()
    r = df.ldp.privatize({"t": ldp.SquareWave(1.0, (0, 1440)), "c": ldp.GRR(0.5, k=4)}, rng=0,
                         strategy="all-columns", shuffled=True, shuffle_delta=1e-6, ledger=ledger, label="day 1")
    assert r.attrs["ldpnum"]["shuffle_delta"] == 1e-6
    # every column shows the central epsilon of the rows' messages (each row sent both columns, 1.5 in all),
    # and so does the ledger: a column's own epsilon understated it (issue 25: 1.0 and 0.5 against 1.5)
    d = r["t"].ldp.estimate_distribution()
    assert d.shuffle == shuffle_epsilon(1.5, 8_000, 1e-6) and d.name == "t"
    assert r["c"].ldp.estimate_frequencies().shuffle == shuffle_epsilon(1.5, 8_000, 1e-6)
    assert all(a.shuffle is not None for a in r.ldp.aggregate().values())
    entry = ledger.to_frame().iloc[0]
    assert entry["shuffled_epsilon"] == shuffle_epsilon(1.5, 8_000, 1e-6).epsilon == d.shuffle.epsilon
    assert "local ε = 1.5, central ε" in d.privacy
    # a series, and the default (not shuffled)
    s = df["t"].ldp.privatize(ldp.SquareWave(1.0, (0, 1440)), rng=1, shuffled=True, shuffle_delta=1e-4)
    assert s.ldp.estimate_mean().shuffle == shuffle_epsilon(1.0, 8_000, 1e-4)
    plain = df["t"].ldp.privatize(ldp.SquareWave(1.0, (0, 1440)), rng=1)
    assert "shuffle_delta" not in plain.attrs["ldpnum"] and plain.ldp.estimate_mean().shuffle is None
    # parts shuffled apart are not one batch: their concatenation is not declared shuffled
    other = df["t"].ldp.privatize(ldp.SquareWave(1.0, (0, 1440)), rng=2, shuffled=True, shuffle_delta=1e-4)
    both = ldp.pandas.concat([s, other])
    assert both.ldp.aggregate().shuffle is None


def test_pandas_bad_shuffle_arguments_draw_and_record_nothing(monkeypatch):
    from ldpnum import _random

    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)
    df = pd.DataFrame({"t": np.linspace(0, 1, 50)})
    ledger = ldp.PrivacyLedger()
    m = ldp.SquareWave(1.0, (0, 1))
    with pytest.raises(ValueError, match="shuffle_delta must lie in"):
        df.ldp.privatize({"t": m}, rng=0, shuffled=True, shuffle_delta=0.0, ledger=ledger)
    with pytest.raises(TypeError, match="shuffled must be True or False"):
        df["t"].ldp.privatize(m, rng=0, shuffled="yes")
    with pytest.raises(TypeError, match="shuffle_delta must be a real number"):
        df["t"].ldp.privatize(m, rng=0, shuffled=True, shuffle_delta="1e-6")
    assert len(ledger) == 0


# -- command line ---------------------------------------------------------------------------------------------

def test_cli_privatize_shuffled_then_estimate(tmp_path, capsys):
    from ldpnum.cli import main

    pytest.importorskip("pyarrow")
    src, out, ledger = tmp_path / "in.csv", tmp_path / "r.parquet", tmp_path / "ledger.json"
    pd.DataFrame({"id": np.arange(6_000), "x": np.random.default_rng(0).random(6_000)}).to_csv(src, index=False)
    assert main(["privatize", str(src), str(out), "-c", "x", "-m", "sw", "-e", "2", "-b", "0", "1", "--rng", "0",
                 "--shuffled", "--shuffle-delta", "1e-5", "--ledger", str(ledger), "--people-column", "id"]) == 0
    assert "declared shuffled (central delta 1e-05)" in capsys.readouterr().out
    central = shuffle_epsilon(2.0, 6_000, 1e-5)
    assert main(["estimate", str(out), "-c", "x", "-w", "mean"]) == 0
    assert central.describe() in capsys.readouterr().out
    assert main(["estimate", str(out), "-c", "x", "-w", "mean", "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["shuffle"] == {"epsilon": central.epsilon, "delta": 1e-5, "n": 6_000}
    assert ldp.PrivacyLedger.from_json(ledger.read_text()).to_frame()["shuffled_epsilon"][0] == central.epsilon
    # --shuffle-delta alone, or out of range: refused before anything is written
    for argv, msg in ((["--shuffle-delta", "0.1"], "goes with --shuffled"),
                      (["--shuffled", "--shuffle-delta", "2"], "must lie in")):
        target = tmp_path / "bad.parquet"
        assert main(["privatize", str(src), str(target), "-c", "x", "-m", "sw", "-e", "2", "-b", "0", "1",
                     *argv]) != 0
        assert msg in capsys.readouterr().err and not target.exists()


def test_describe_and_accessor_show_the_shuffle():
    df = pd.DataFrame({"t": np.random.default_rng(0).uniform(0, 1440, 5_000)})
    m = ldp.SquareWave(1.0, (0, 1440))
    r = df.ldp.privatize({"t": m}, rng=0, shuffled=True)
    table = r.ldp.describe()
    assert table.loc["t", "central_epsilon"] == shuffle_epsilon(1.0, 5_000, 1e-6).epsilon
    assert "central_epsilon" not in df.ldp.privatize({"t": m}, rng=0).ldp.describe().columns
    assert "shuffled (central delta 1e-06)" in repr(r["t"].ldp)


def test_a_multi_column_shuffled_batch_agrees_everywhere(tmp_path, capsys):
    # the CLI's file, the Dask collection and the aggregate's serialized forms carry the rows' epsilon
    import json

    from ldpnum.aggregate import Aggregate
    from ldpnum.cli import main

    pytest.importorskip("pyarrow")
    g = np.random.default_rng(0)
    df = pd.DataFrame({"pid": np.arange(5_000), "a": g.random(5_000), "b": g.random(5_000)})
    df.to_csv(tmp_path / "in.csv", index=False)
    ledger = tmp_path / "ledger.json"
    assert main(["privatize", str(tmp_path / "in.csv"), str(tmp_path / "r.parquet"), "-c", "a", "-c", "b",
                 "-m", "duchi", "-e", "1", "-e", "2", "-b", "0", "1", "-b", "0", "1", "--rng", "0", "--shuffled",
                 "--strategy", "all-columns", "--ledger", str(ledger), "--people-column", "pid"]) == 0
    central = shuffle_epsilon(3.0, 5_000, 1e-6)
    assert ldp.PrivacyLedger.from_json(ledger.read_text()).to_frame()["shuffled_epsilon"][0] == central.epsilon
    capsys.readouterr()
    for column in ("a", "b"):
        assert main(["estimate", str(tmp_path / "r.parquet"), "-c", column, "-w", "mean", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["shuffle"]["epsilon"] == central.epsilon
    # the declaration survives bytes, pickles and frames; epsilon0 below the report's own is refused
    agg = ldp.Duchi(1.0, (0, 1)).aggregate(ldp.Duchi(1.0, (0, 1)).privatize(g.random(100), rng=0))
    s = agg.shuffled(1e-6, epsilon0=3.0)
    assert s.shuffle == shuffle_epsilon(3.0, 100, 1e-6) and s.shuffle_epsilon0 == 3.0
    assert Aggregate.from_bytes(s.to_bytes()) == s and pickle.loads(pickle.dumps(s)) == s
    assert Aggregate.from_frame(s.to_frame()) == s and "epsilon0=3" in repr(s)
    assert (s + agg.shuffled(1e-6)).shuffle_epsilon0 == 3.0  # the largest over the batches merged
    assert agg.shuffled(1e-6, epsilon0=1.0) == agg.shuffled(1e-6)
    with pytest.raises(ValueError, match="at least the report's own epsilon 1"):
        agg.shuffled(1e-6, epsilon0=0.5)


def test_a_shuffle_declaration_next_to_an_identifier_is_refused(tmp_path, capsys, monkeypatch):
    # issue 25: `--shuffled --keep id` wrote reports declared anonymous beside the column naming their senders
    from ldpnum import _random
    from ldpnum.cli import main, privatize_file, CLIError

    pytest.importorskip("pyarrow")
    src = tmp_path / "in.csv"
    pd.DataFrame({"id": np.arange(100), "x": np.linspace(0, 1, 100)}).to_csv(src, index=False)
    out = tmp_path / "r.parquet"
    assert main(["privatize", str(src), str(out), "-c", "x", "-m", "sw", "-e", "2", "-b", "0", "1", "--shuffled",
                 "--keep", "id"]) == 2
    assert "--keep id copies an input column" in capsys.readouterr().err and not out.exists()
    with pytest.raises(CLIError, match="keeps no input column"):
        privatize_file(src, out, {"x": ldp.SquareWave(2.0, (0, 1))}, keep=["id"], shuffle_delta=1e-6)
    # the accessor's equivalent: reports keep the input's index; an identifying index is refused before drawing
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError("drew")))
    people = pd.DataFrame({"x": [0.1, 0.5]}, index=pd.Index(["ann", "bob"], name="user"))
    m = ldp.SquareWave(1.0, (0, 1))
    with pytest.raises(ValueError, match="keep the input's index .*first label 'ann'.*reset_index"):
        people.ldp.privatize({"x": m}, shuffled=True)
    with pytest.raises(ValueError, match="identifies each row"):
        people["x"].ldp.privatize(m, shuffled=True)
    monkeypatch.undo()
    assert people.reset_index(drop=True).ldp.privatize({"x": m}, rng=0, shuffled=True).ldp.aggregate()["x"].shuffle
    assert people.ldp.privatize({"x": m}, rng=0).index.tolist() == ["ann", "bob"]  # not shuffled: kept


def test_one_column_per_row_columns_and_ledger_agree(tmp_path, capsys):
    # each row sends one column's report; each column's estimates show the central epsilon of its own reports
    # (with the rows' epsilon), and the ledger's entry the largest of them: the smallest column's
    g = np.random.default_rng(1)
    df = pd.DataFrame({"a": g.random(6_000), "b": g.random(6_000)})
    ledger = ldp.PrivacyLedger()
    r = df.ldp.privatize({"a": ldp.Duchi(1.0, (0, 1)), "b": ldp.Duchi(2.0, (0, 1))}, rng=0, ledger=ledger,
                         strategy="one-column-per-row", shuffled=True)
    shown = {c: r[c].ldp.estimate_mean().shuffle for c in "ab"}
    assert all(s.epsilon0 == 2.0 for s in shown.values())
    assert ledger.to_frame()["shuffled_epsilon"][0] == max(s.epsilon for s in shown.values())
    # the command line's entry too
    from ldpnum.cli import main

    pytest.importorskip("pyarrow")
    df.assign(pid=np.arange(6_000)).to_csv(tmp_path / "in.csv", index=False)
    book = tmp_path / "ledger.json"
    assert main(["privatize", str(tmp_path / "in.csv"), str(tmp_path / "r.parquet"), "-c", "a", "-c", "b",
                 "-m", "duchi", "-e", "1", "-e", "2", "-b", "0", "1", "-b", "0", "1", "--rng", "0", "--shuffled",
                 "--strategy", "one-column-per-row", "--ledger", str(book), "--people-column", "pid"]) == 0
    capsys.readouterr()
    import json

    epsilons = []
    for c in "ab":
        assert main(["estimate", str(tmp_path / "r.parquet"), "-c", c, "-w", "mean", "--json"]) == 0
        epsilons.append(json.loads(capsys.readouterr().out)["shuffle"]["epsilon"])
    assert ldp.PrivacyLedger.from_json(book.read_text()).to_frame()["shuffled_epsilon"][0] == max(epsilons)
