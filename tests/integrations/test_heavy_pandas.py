"""Heavy hitters through the pandas accessor, Parquet files, Dask partitions and the engines."""

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp

WORDS = np.array(["the", "of", "and", "to", "in", "is", "you", "that", "it", "he"])
P = np.array([0.22, 0.16, 0.13, 0.11, 0.09, 0.08, 0.07, 0.06, 0.05, 0.03])


@pytest.fixture(scope="module")
def frame():
    g = np.random.default_rng(0)
    return pd.DataFrame({"word": g.choice(WORDS, 60_000, p=P), "x": g.uniform(0, 1, 60_000)})


def test_string_column_with_pem_and_a_numeric_column(frame):
    pem = ldp.PEM(8.0, top_k=5)
    r = frame.ldp.privatize({"word": pem, "x": ldp.SquareWave(1.0, (0, 1))}, rng=0, strategy="one-column-per-row")
    est = r["word"].ldp.heavy_hitters()
    assert est.items == tuple(WORDS[:5]) and est.name == "word"
    n = int(r["word"].notna().sum())
    truth = pd.Series(frame["word"].to_numpy()[r["word"].notna().to_numpy()]).value_counts(normalize=True)
    z = (est.frequencies - truth[list(est.items)].to_numpy()) / est.standard_errors
    assert np.all(np.abs(z) < 5), z  # within the stated standard errors (5 sigma: no flake at 5 items)
    assert est.n_reports == n
    assert list(r.ldp.describe().index) == ["x"]  # items are not described as numbers
    with pytest.raises(TypeError, match="do not estimate means .*heavy hitters"):
        r["word"].ldp.estimate_mean()
    with pytest.raises(TypeError, match="do not estimate heavy hitters"):
        r["x"].ldp.heavy_hitters()


def test_parquet_round_trip_and_digest(tmp_path, frame):
    pytest.importorskip("pyarrow")
    r = frame[["word"]].ldp.privatize({"word": ldp.PEM(4.0, top_k=3)}, rng=1)
    r.to_parquet(tmp_path / "r.parquet")
    back = pd.read_parquet(tmp_path / "r.parquet")
    assert back["word"].ldp.heavy_hitters() == r["word"].ldp.heavy_hitters()
    from ldpnum._frame import ReportsChangedError
    with pytest.raises(ReportsChangedError):
        back["word"].iloc[:-10].ldp.heavy_hitters()


def test_missing_items_are_refused_not_imputed():
    s = pd.Series(["a", None, "b"], name="word")
    with pytest.raises(ValueError, match="missing"):
        s.ldp.privatize(ldp.PEM(4.0))
    with pytest.raises(ValueError, match="cannot be imputed"):
        s.ldp.privatize(ldp.PEM(4.0), nan_policy="impute", fill_value="x")


def test_dask_partitions_merge_exactly(frame):
    dd = pytest.importorskip("dask.dataframe")
    import ldpnum.dask  # noqa: F401
    from ldpnum._random import child_rng
    from ldpnum.pandas import privatize_frame

    pem = ldp.PEM(8.0, top_k=4)
    ddf = dd.from_pandas(frame[["word"]], npartitions=3)
    reports = ddf.ldp.privatize({"word": pem}, rng=5)
    agg = reports.ldp.aggregate("word").compute(scheduler="sync")
    parts = [ddf.get_partition(i).compute() for i in range(3)]
    expected = sum(privatize_frame(p, {"word": pem}, rng=child_rng(5, i))["word"].ldp.aggregate()
                   for i, p in enumerate(parts))
    assert agg == expected and agg.n_reports == len(frame)
    est = reports.ldp.heavy_hitters("word")
    assert est.items == tuple(WORDS[:4])


# -- columns of sets: SVIM / SVSM through the accessor ---------------------------------------------------

def _baskets(n=30_000, seed=0):
    baskets = [["milk", "bread"], ["milk"], ["tea", "bread"], []]
    idx = np.random.default_rng(seed).choice(4, n, p=[0.4, 0.3, 0.2, 0.1])
    return pd.Series([baskets[i] for i in idx], name="basket")


def test_frequent_items_and_itemsets_delegate_to_the_protocol():
    s = _baskets()
    svim = ldp.SVIM(epsilon=4.0, top_k=3)
    est = s.ldp.frequent_items(svim, rng=3)
    assert est == svim.run(s, rng=3) and est.name == "basket"
    assert est.items == ("milk", "bread", "tea")
    svsm = ldp.SVSM(epsilon=4.0, top_k=4)
    sets = s.ldp.frequent_itemsets(svsm, rng=4)
    assert sets.itemsets == svsm.run(s, rng=4).itemsets
    assert frozenset({"milk", "bread"}) in sets.itemsets


def test_frequent_items_refuse_the_wrong_protocol_before_drawing(monkeypatch):
    from ldpnum import _random
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError("drew")))
    s = _baskets(100)
    with pytest.raises(TypeError, match="SVSM"):
        s.ldp.frequent_itemsets(ldp.SVIM(4.0, top_k=2))
    with pytest.raises(TypeError, match="SVIM"):
        s.ldp.frequent_items(ldp.SVSM(4.0, top_k=2))
    with pytest.raises(TypeError, match="SVIM"):
        s.ldp.frequent_items(ldp.PEM(4.0))
    with pytest.raises(ValueError):
        s.ldp.frequent_items(ldp.SVIM(4.0, top_k=2), rng=-1)
    bad = pd.Series([["a", "a"], ["b"]])
    with pytest.raises(ValueError, match="repeat an item"):
        bad.ldp.frequent_items(ldp.SVIM(4.0, top_k=1), rng=0)


def test_frequent_items_records_the_collection_in_a_ledger():
    # frequent_items(ledger=) was "an unexpected keyword argument"; each person spends the protocol's epsilon
    baskets = [["milk", "bread"], ["milk"], ["tea"]]
    s = pd.Series([baskets[i] for i in np.random.default_rng(0).choice(3, 3000, p=[.5, .3, .2])])
    ledger = ldp.PrivacyLedger(cap=5.0)
    s.ldp.frequent_items(ldp.SVIM(epsilon=4.0, top_k=2), rng=1, ledger=ledger, label="baskets")
    assert len(ledger) == 1 and ledger.total(0) == 4.0 and ledger.to_frame()["n_people"][0] == 3000
    with pytest.raises(ldp.exceptions.BudgetExceededError):  # refused before anything is drawn
        s.ldp.frequent_itemsets(ldp.SVSM(epsilon=4.0, top_k=2), rng=1, ledger=ledger)
    assert len(ledger) == 1
