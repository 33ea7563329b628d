"""Longitudinal collection through the pandas accessor: keys aligned with people, rounds, the ledger."""

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum.exceptions import SpecMismatchError

N = 2000


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"app": rng.integers(0, 8, N), "age": rng.uniform(0, 100, N)},
                        index=pd.Index(np.arange(N) * 3 + 1, name="pid"))


@pytest.fixture
def keys():
    return ldp.ClientKeys.generate(N, rng=1)


def test_rounds_are_recorded_and_estimated_separately(frame, keys, tmp_path):
    m = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=1.0, k=8)
    days = [frame.ldp.privatize({"app": m, "age": ldp.Duchi(0.5, (0, 100))}, strategy="all-columns", keys=keys,
                                round=r, rng=r) for r in range(2)]
    assert [d.ldp.specs["app"].get("round") for d in days] == [0, 1]
    assert days[0].ldp.specs["age"].get("round") is None
    aggs = [d["app"].ldp.aggregate() for d in days]
    with pytest.raises(SpecMismatchError, match="round"):
        aggs[0] + aggs[1]
    est = days[1]["app"].ldp.estimate_frequencies()
    truth = np.bincount(frame["app"], minlength=8) / N
    se = np.sqrt(m.variance(truth) / N)
    assert np.all(np.abs(est.frequencies - truth) < 5 * se)
    # A report column read back from Parquet rebuilds the mechanism at its round.
    pytest.importorskip("pyarrow")
    days[1].to_parquet(tmp_path / "day1.parquet")
    back = pd.read_parquet(tmp_path / "day1.parquet")
    assert back["app"].ldp.aggregate() == aggs[1]


def test_same_keys_and_seed_give_the_same_reports_in_any_row_order(frame, keys):
    m = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=1.0, k=8)
    a = frame["app"].ldp.privatize(m, keys=keys, rng=3)
    assert a.equals(frame["app"].ldp.privatize(m, keys=keys, rng=3))
    # Keys as a frame indexed by person id are matched to the rows' people, whatever their order.
    by_person = keys.to_frame(index=frame.index).iloc[::-1]
    b = frame["app"].ldp.privatize(m, keys=by_person, rng=3)
    assert a.equals(b)
    perm = m.permanent(frame["app"].to_numpy(), keys=keys)
    p2 = m.plan.keep_count() / 2**64  # the instantaneous layer keeps the permanent answer with probability p2
    assert abs(np.mean(a.to_numpy() == perm) - p2) < 5 * np.sqrt(p2 * (1 - p2) / N)


def test_ledger_charges_memoized_values_not_rounds(frame, keys):
    m = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=0.5, k=8)
    memo_ledger, naive_ledger = ldp.PrivacyLedger(), ldp.PrivacyLedger()
    for r in range(10):
        frame["app"].ldp.privatize(m, keys=keys, round=r, rng=r, ledger=memo_ledger)
        frame["app"].ldp.privatize(ldp.GRR(0.5, 8), rng=r, ledger=naive_ledger)
    assert np.allclose(memo_ledger.totals(), 2.0)  # min(eps_inf, 10 x 0.5) for one unchanged value
    assert np.allclose(naive_ledger.totals(), 5.0)
    # A person whose value changes spends again; one with several rows (panel data) uses their one key per row.
    moved = frame["app"].copy()
    moved.iloc[0] = (moved.iloc[0] + 1) % 8
    moved.ldp.privatize(m, keys=keys, round=10, rng=10, ledger=memo_ledger)
    assert memo_ledger.total(1) == pytest.approx(2.5) and memo_ledger.total(4) == pytest.approx(2.0)
    panel = pd.concat([frame["app"].iloc[:3], frame["app"].iloc[:3]])
    panel.ldp.privatize(m, keys=keys.to_frame(index=frame.index), round=11, rng=11, ledger=memo_ledger)
    assert memo_ledger.total(4) == pytest.approx(2.0)


def test_ledger_cap_refuses_before_drawing(frame, keys):
    m = ldp.LGRR(epsilon_permanent=1.0, epsilon_report=0.6, k=8)
    ledger = ldp.PrivacyLedger(cap=1.2)
    both = {"app": m, "age": ldp.Duchi(0.5, (0, 100))}
    frame.ldp.privatize(both, strategy="all-columns", keys=keys, round=0, rng=0, ledger=ledger)
    assert ledger.total(1) == pytest.approx(1.1)
    g = np.random.default_rng(5)
    state = g.bit_generator.state
    with pytest.raises(ldp.BudgetExceededError):
        frame.ldp.privatize(both, strategy="all-columns", keys=keys, round=1, rng=g, ledger=ledger)
    assert g.bit_generator.state == state and len(ledger) == 2


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(), TypeError, "need each person's key"),
    (dict(keys="secret"), TypeError, "keys must be ClientKeys"),
    (dict(keys=ldp.ClientKeys.generate(5, rng=0)), ValueError, "keys for 5 people"),
    (dict(keys=ldp.ClientKeys.generate(5, rng=0).to_frame()), ValueError, "no key for"),
    (dict(keys=ldp.ClientKeys.generate(N, rng=0), round=-1), ValueError, "round"),
    (dict(keys=ldp.ClientKeys.generate(N, rng=0), shuffled=True), ValueError, "shuffle"),
])
def test_bad_keys_and_rounds_are_refused_before_drawing(frame, kwargs, err, match):
    m = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=1.0, k=8)
    g = np.random.default_rng(6)
    state = g.bit_generator.state
    with pytest.raises(err, match=match):
        frame["app"].ldp.privatize(m, rng=g, **kwargs)
    assert g.bit_generator.state == state


def test_keys_and_rounds_need_a_longitudinal_column(frame, keys):
    with pytest.raises(ValueError, match="none of these columns is memoized"):
        frame["app"].ldp.privatize(ldp.GRR(1.0, 8), keys=keys, rng=1)
    with pytest.raises(ValueError, match="none of these mechanisms is longitudinal"):
        frame.ldp.privatize({"app": ldp.GRR(1.0, 8)}, round=2, rng=1)


def test_a_ledger_under_one_column_per_row_is_refused_for_longitudinal_columns(frame, keys):
    m = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=1.0, k=8)
    out = frame.ldp.privatize({"app": m, "age": ldp.Duchi(1.0, (0, 100))}, strategy="one-column-per-row", keys=keys,
                              rng=1)
    assert out["app"].notna().sum() + out["age"].notna().sum() == N
    with pytest.raises(ValueError, match="one-column-per-row"):
        frame.ldp.privatize({"app": m, "age": ldp.Duchi(1.0, (0, 100))}, strategy="one-column-per-row", keys=keys,
                            rng=1, ledger=ldp.PrivacyLedger())
