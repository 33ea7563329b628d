"""Shuffle amplification (ldpnum.accounting) against a brute-force divergence, the published figures, and
its own guarantees (upper bound, monotone, no-amplification regime)."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from ldpnum import accounting
from ldpnum.accounting import ShuffleAmplification, closed_form_shuffle_epsilon, shuffle_epsilon


def brute_force_delta(eps, eps0, n):
    """max(D(P||Q), D(Q||P)) of the clone reduction by enumerating every (c, k): no cut-off, no symmetry."""
    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    d_pq = d_qp = 0.0
    for c in range(n):
        w = binom.pmf(c, n - 1, math.exp(-eps0))
        b = binom.pmf(np.arange(c + 2), c, 0.5)  # B_c(k), k = 0..c+1 (B_c(c+1) = 0)
        b_prev = np.concatenate([[0.0], b[:-1]])  # B_c(k - 1)
        p = alpha * b + (1 - alpha) * b_prev
        q = (1 - alpha) * b + alpha * b_prev
        d_pq += w * np.maximum(p - math.exp(eps) * q, 0).sum()
        d_qp += w * np.maximum(q - math.exp(eps) * p, 0).sum()
    return max(d_pq, d_qp)


def fast_delta(eps, eps0, n):
    c, weight, tail = accounting._clone_blocks(n, math.exp(-eps0), 1e-15)
    return accounting._delta_of(eps, eps0, c, weight, tail)


@pytest.mark.parametrize("eps0,n", [(1.0, 30), (2.5, 60), (4.0, 200)])
def test_divergence_matches_brute_force(eps0, n):
    for eps in (0.05, 0.3, 0.9 * eps0):
        want = brute_force_delta(eps, eps0, n)
        assert fast_delta(eps, eps0, n) == pytest.approx(want, rel=1e-9, abs=1e-15)


def test_brute_force_rejects_a_planted_generous_divergence(monkeypatch):
    # Negative control: a divergence evaluated at 3% below the asked epsilon (a bound that flatters by a
    # little, like the reference implementation's typo) fails the comparison above.
    real = accounting._delta_of

    def planted(eps, eps0, c, weight, tail):
        return real(eps * 0.97, eps0, c, weight, tail)  # a slightly too generous bound

    eps0, n, eps = 2.5, 60, 0.3
    monkeypatch.setattr(accounting, "_delta_of", planted)
    assert fast_delta(eps, eps0, n) != pytest.approx(brute_force_delta(eps, eps0, n), rel=1e-9, abs=1e-15)


def test_published_figures():
    # Feldman, McMillan, Talwar: n = 1e5, eps0 = 4, delta = 1e-6 numerically in [0.1675, 0.1728] (the
    # bracket of their stepped computation), closed form 0.5378.
    r = shuffle_epsilon(4.0, 100_000, 1e-6)
    assert 0.1675 <= r.epsilon <= 0.1728
    assert r.epsilon == pytest.approx(0.1698, abs=5e-4)
    assert r.closed_form == pytest.approx(0.5378040242, abs=1e-9)
    assert r.amplified and r.closed_form_applies and float(r) == r.epsilon
    assert "0.1698" in str(r)


def test_result_is_an_upper_bound_and_tight():
    eps0, n, delta = 3.0, 400, 1e-3
    r = shuffle_epsilon(eps0, n, delta)
    assert brute_force_delta(r.epsilon, eps0, n) <= delta
    assert brute_force_delta(r.epsilon * (1 - 1e-4), eps0, n) > delta  # no looser than the tolerance


def test_blocks_only_loosen_the_bound(monkeypatch):
    exact = shuffle_epsilon(4.0, 1_000_000, 1e-6).epsilon  # ~1.6e4 counts: blocks of 8
    monkeypatch.setattr(accounting, "_MAX_BLOCKS", 10**6)
    every = shuffle_epsilon(4.0, 1_000_000, 1e-6).epsilon  # every count
    assert every <= exact <= every * 1.001


def test_monotone_in_n_and_eps0():
    ns = [10**3, 10**4, 10**5, 10**6, 10**7]
    eps_n = [shuffle_epsilon(2.0, n, 1e-6).epsilon for n in ns]
    assert all(a > b for a, b in zip(eps_n, eps_n[1:]))
    eps0s = [0.5, 1, 2, 4, 6]
    eps_e = [shuffle_epsilon(e, 10**5, 1e-6).epsilon for e in eps0s]
    assert all(a < b for a, b in zip(eps_e, eps_e[1:]))
    closed = [closed_form_shuffle_epsilon(2.0, n, 1e-6) for n in ns[1:]]
    assert all(a > b for a, b in zip(closed, closed[1:]))
    # the numerical bound is never worse than the closed form where that applies
    for n in ns[1:]:
        r = shuffle_epsilon(2.0, n, 1e-6)
        assert r.epsilon <= r.closed_form


def test_no_amplification_regime_reported():
    assert closed_form_shuffle_epsilon(8.0, 10**5, 1e-6) is None  # 8 > log(1e5 / (16 log 4e6)) = 6.0
    assert closed_form_shuffle_epsilon(5.9, 10**5, 1e-6) is not None
    r = shuffle_epsilon(8.0, 1_000, 1e-6)
    assert r.closed_form is None and not r.closed_form_applies
    assert r.epsilon == pytest.approx(8.0, rel=1e-6)
    one = shuffle_epsilon(1.0, 1, 1e-6)
    assert one.epsilon == 1.0 and not one.amplified


def test_fast_up_to_ten_million():
    import time
    for eps0 in (0.1, 1.0, 4.0, 10.0):
        t0 = time.perf_counter()
        shuffle_epsilon(eps0, 10**7, 1e-8)
        assert time.perf_counter() - t0 < 5.0  # ~0.1 s measured; 5 s leaves room for a loaded machine


@pytest.mark.parametrize("args,match", [((0.0, 10, 1e-6), "epsilon0"), ((math.inf, 10, 1e-6), "epsilon0"),
                                        ((float("nan"), 10, 1e-6), "epsilon0"), ((1.0, 0, 1e-6), "n must"),
                                        ((1.0, 10, 0.0), "delta"), ((1.0, 10, 1.0), "delta")])
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        shuffle_epsilon(*args)


@pytest.mark.parametrize("call,match", [
    (lambda: shuffle_epsilon("1", 10, 1e-6), "epsilon0 must be a real number; got str '1'"),
    (lambda: shuffle_epsilon(1.0, 10.5, 1e-6), "n must be an integer; got float 10.5"),
    (lambda: shuffle_epsilon(1.0, True, 1e-6), "n must be an integer; got bool True"),
    (lambda: shuffle_epsilon(1.0, 10, None), "delta must be a real number; got NoneType None"),
    (lambda: closed_form_shuffle_epsilon(True, 10, 1e-6), "epsilon0 must be a real number; got bool True"),
    (lambda: ldp.PrivacyLedger(cap="3"), "cap must be a real number or None; got str '3'"),
    (lambda: ldp.PrivacyLedger().record(epsilon="1", people=[1]), "epsilon must be a real number; got str '1'"),
    (lambda: ldp.PrivacyLedger().record(epsilon=1.0, people=[1, 2], shuffled=True, shuffle_n=1.5),
     "shuffle_n must be an integer or None; got float 1.5"),
    (lambda: ldp.PrivacyLedger().record(epsilon=1.0, people=[1], shuffled=True, shuffle_delta="1e-6"),
     "shuffle_delta must be a real number; got str '1e-6'"),
])
def test_a_wrong_kind_is_a_type_error(call, match):
    # The accounting checks raised ValueError for a wrong kind (a str epsilon, a float n); they are
    # TypeErrors like everywhere else (DESIGN.md R5), with the one message of check_scalar.
    with pytest.raises(TypeError, match=match):
        call()


def test_a_damaged_ledger_with_a_cap_of_another_kind_is_a_value_error():
    with pytest.raises(ValueError, match="privacy ledger JSON: cap must be a real number or None; got str 'x'"):
        ldp.PrivacyLedger.from_json('{"format": 1, "cap": "x", "entries": []}')


def test_result_is_frozen():
    r = shuffle_epsilon(1.0, 1000, 1e-6)
    assert isinstance(r, ShuffleAmplification)
    with pytest.raises(AttributeError):
        r.epsilon = 0.0


# -- the privacy ledger ------------------------------------------------------------------------------------

import pandas as pd  # noqa: E402

import ldpnum as ldp  # noqa: E402
from ldpnum.exceptions import BudgetExceededError, BudgetWarning  # noqa: E402


def test_sequential_and_parallel_composition():
    ledger = ldp.PrivacyLedger()
    ledger.record(epsilon=1.0, people=range(100), label="all")
    ledger.record(epsilon=2.0, people=range(0, 50), label="first half")   # parallel: the two halves
    ledger.record(epsilon=0.5, people=range(50, 100), label="second half")
    totals = ledger.totals()
    assert totals.loc[0] == 3.0 and totals.loc[99] == 1.5 and len(totals) == 100
    assert ledger.total(1000) == 0.0  # someone never recorded
    with pytest.raises(TypeError, match="holds int ids"):  # an id of the other kind could never be found
        ledger.total("someone else")
    frame = ledger.to_frame()
    assert frame["label"].tolist() == ["all", "first half", "second half"]
    assert frame["n_people"].tolist() == [100, 50, 50]


def test_the_accessor_records_epsilon_per_row_and_checks_before_drawing(monkeypatch):
    df = pd.DataFrame({"a": np.linspace(0, 1, 200), "b": np.linspace(0, 1, 200)},
                      index=pd.Index([f"p{i}" for i in range(200)]))
    mechs = {"a": ldp.Duchi(1.0, (0, 1)), "b": ldp.Duchi(2.0, (0, 1))}
    ledger = ldp.PrivacyLedger(cap=5.0)
    df.ldp.privatize(mechs, rng=0, strategy="all-columns", ledger=ledger, label="both")   # 3 per row
    df.ldp.privatize(mechs, rng=1, strategy="one-column-per-row", ledger=ledger)        # 2 per row
    assert ledger.total("p0") == 5.0 and ledger.to_frame()["strategy"].tolist() == ["all-columns",
                                                                                   "one-column-per-row"]
    assert "a: duchi" in ledger.to_frame()["mechanisms"][0][0]
    # the collection keeps the label it was given (a column's label once replaced it), or none
    labels = ledger.to_frame()["label"]
    assert labels[0] == "both" and pd.isna(labels[1])
    # a third collection would exceed the cap: refused before any word is drawn, nothing recorded
    from ldpnum import _random
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError("drew")))
    with pytest.raises(BudgetExceededError, match="200 person") as info:
        df["a"].ldp.privatize(ldp.Duchi(0.5, (0, 1)), ledger=ledger)
    assert info.value.count == 200 and info.value.first == "p0" and len(ledger) == 2
    # people= names the ids explicitly (the same people here: refused again)
    with pytest.raises(BudgetExceededError):
        df["a"].ldp.privatize(ldp.Duchi(0.5, (0, 1)), ledger=ledger, people=[f"p{i}" for i in range(200)])
    monkeypatch.undo()
    fresh = [f"q{i}" for i in range(200)]
    df["a"].ldp.privatize(ldp.Duchi(0.5, (0, 1)), rng=2, ledger=ledger, people=fresh, label="new people")
    assert ledger.total("q3") == 0.5 and ledger.total("p3") == 5.0


def test_warn_policy_records_with_a_warning():
    ledger = ldp.PrivacyLedger(cap=1.0, on_exceed="warn")
    ledger.record(epsilon=1.0, people=[1, 2])
    with pytest.warns(BudgetWarning, match="2 person"):
        ledger.record(epsilon=0.5, people=[1, 2, 3])
    assert ledger.total(1) == 1.5 and ledger.total(3) == 0.5


def test_json_round_trip_keeps_history_and_totals():
    ledger = ldp.PrivacyLedger(cap=10.0)
    ledger.record(epsilon=1.0, people=["a", "b"], specs=[ldp.Duchi(1.0, (0, 1)).spec], label="x")
    ledger.record(epsilon=2.5, people=["b"], strategy="all-columns")
    back = ldp.PrivacyLedger.from_json(ledger.to_json())
    assert back.cap == 10.0 and len(back) == 2
    assert back.totals().to_dict() == ledger.totals().to_dict() == {"a": 1.0, "b": 3.5}
    assert back.to_frame().equals(ledger.to_frame())
    with pytest.raises(ValueError, match="not an ldpnum privacy ledger"):
        ldp.PrivacyLedger.from_json('{"format": 99}')


@pytest.mark.parametrize("kwargs,err,match", [
    ({"epsilon": 0, "people": [1]}, ValueError, "epsilon"),
    ({"epsilon": float("inf"), "people": [1]}, ValueError, "epsilon"),
    ({"epsilon": 1.0, "people": [1.5, 2.5]}, TypeError, "ints or strs"),
    ({"epsilon": 1.0, "people": pd.Index([1.0, None])}, ValueError, "missing"),
])
def test_ledger_bad_input(kwargs, err, match):
    ledger = ldp.PrivacyLedger()
    with pytest.raises(err, match=match):
        ledger.record(**kwargs)
    assert len(ledger) == 0 and len(ledger.totals()) == 0


def test_ledger_constructor_and_accessor_arguments():
    with pytest.raises(ValueError, match="cap"):
        ldp.PrivacyLedger(cap=-1)
    with pytest.raises(ValueError, match="on_exceed"):
        ldp.PrivacyLedger(on_exceed="ignore")
    s = pd.Series([0.1, 0.2])
    with pytest.raises(ValueError, match="pass ledger"):
        s.ldp.privatize(ldp.Duchi(1.0, (0, 1)), people=[1, 2])
    with pytest.raises(TypeError, match="PrivacyLedger"):
        s.ldp.privatize(ldp.Duchi(1.0, (0, 1)), ledger={})
    with pytest.raises(ValueError, match="ids for"):
        s.ldp.privatize(ldp.Duchi(1.0, (0, 1)), ledger=ldp.PrivacyLedger(), people=[1])


def test_a_shuffled_collection_shows_its_central_epsilon():
    ledger = ldp.PrivacyLedger()
    ledger.record(epsilon=4.0, people=range(100_000), shuffled=True, shuffle_delta=1e-6, label="shuffled")
    ledger.record(epsilon=1.0, people=range(10), label="plain")
    frame = ledger.to_frame()
    assert frame.loc[0, "shuffled_epsilon"] == pytest.approx(0.1698, abs=5e-4)
    assert frame.loc[0, "shuffled_delta"] == 1e-6 and pd.isna(frame.loc[1, "shuffled_epsilon"])
    assert ledger.total(5) == 5.0  # totals stay local: what a person gave up before the shuffle
    back = ldp.PrivacyLedger.from_json(ledger.to_json())
    assert back.to_frame()["shuffled_epsilon"].tolist()[0] == frame.loc[0, "shuffled_epsilon"]


def test_a_ledger_holds_one_id_kind_so_the_cap_cannot_be_bypassed():
    # 7 and "7" were two people: the same person arriving once with int and once with text ids passed the cap
    # twice (issue 25). A ledger keeps the kind of its first collection and refuses the other kind.
    ledger = ldp.PrivacyLedger(cap=1.5)
    ledger.record(epsilon=1.0, people=[5, 6, 7])
    assert ledger.id_kind == "int"
    with pytest.raises(TypeError, match=r"holds int ids, but 2 id\(s\) are strs, the first at position 0: '7'"):
        ledger.record(epsilon=1.0, people=["7", "8"])
    with pytest.raises(TypeError, match="holds int ids"):
        ledger.check(epsilon=1.0, people=np.array(["7"]))
    with pytest.raises(TypeError, match="holds int ids"):
        ledger.total("7")
    assert len(ledger) == 1 and ledger.total(7) == 1.0
    with pytest.raises(BudgetExceededError):  # the same person with the same kind of id: the cap holds
        ledger.record(epsilon=1.0, people=np.array([7], dtype=np.int32))
    texts = ldp.PrivacyLedger()
    texts.record(epsilon=1.0, people=pd.Index(["a", "b"]))
    with pytest.raises(TypeError, match="holds str ids"):
        texts.record(epsilon=1.0, people=range(3))
    # one collection mixing kinds, or with a float hidden after the first id (only the first was checked)
    for people, match in (([1, "1"], r"mixes id types: people starts with int ids, but 1 id\(s\) are strs, the "
                           r"first at position 1"),
                          ([1, 2.5], "another type, the first at position 1: float 2.5"),
                          (["a", b"b"], "another type, the first at position 1: bytes")):
        fresh = ldp.PrivacyLedger()
        with pytest.raises(TypeError, match=match):
            fresh.record(epsilon=1.0, people=people)
        assert len(fresh) == 0 and fresh.id_kind is None


@pytest.mark.parametrize("delta,err", [(-0.1, ValueError), (1.0, ValueError), (float("nan"), ValueError),
                                       (2, ValueError), ("0", TypeError), (True, TypeError)])
def test_a_collection_delta_outside_zero_one_is_refused(delta, err):
    ledger = ldp.PrivacyLedger()
    with pytest.raises(err, match=r"delta must"):
        ledger.record(epsilon=1.0, people=[1], delta=delta)
    assert len(ledger) == 0
    ledger.record(epsilon=1.0, people=[1], delta=0.0)
    ledger.record(epsilon=1.0, people=[2], delta=1e-9)
    assert ledger.to_frame()["delta"].tolist() == [0.0, 1e-9]


@pytest.mark.parametrize("text,match", [
    ('{"format": 1}', "'entries' must be a list"),
    ('{"format": 1, "entries": {}}', "'entries' must be a list"),
    ('{"format": 1, "entries": [{"epsilon": 1.0}]}', "entry 0 \\(of 1\\) lacks 'people'"),
    ('{"format": 1, "entries": [{"people": [1]}]}', "entry 0 \\(of 1\\) lacks 'epsilon'"),
    ('{"format": 1, "entries": [3]}', "lacks 'epsilon' and 'people'"),
    ('{"format": 1, "entries": [{"epsilon": 1.0, "people": "abc"}]}', "'people' must be a list"),
    ('{"format": 1, "entries": [{"epsilon": 1.0, "people": [1]}, {"epsilon": 1.0, "people": ["1"]}]}',
     "entry 1 \\(of 2\\): .*holds int ids"),
    ('{"format": 1, "entries": [{"epsilon": -1, "people": [1]}]}', "entry 0 .*epsilon"),
    ("not json", "not JSON"),
])
def test_from_json_of_a_damaged_ledger_is_one_clear_value_error(text, match):
    with pytest.raises(ValueError, match=match):
        ldp.PrivacyLedger.from_json(text)


@pytest.mark.parametrize("eps0,n,delta", [
    (1.0, 10**15, 1e-6),   # issue 25: "The function value at x=0.0 is NaN" (bdtr is NaN beyond 2**31 counts)
    (20.0, 10**15, 1e-6), (1.0, 10**9, 1e-300), (1.0, 10**6, 5e-324), (1e-300, 10**15, 1e-6),
    (1e-300, 2, 1e-300), (99.0, 2**53, 1e-6), (1e6, 10**6, 1e-6), (30.0, 2**53, 1e-300), (1.0, 2, 1 - 1e-16),
    (20.0, 2, 1e-6), (4.0, 10**40, 1e-6),
])
def test_extremes_of_n_eps0_and_delta_give_a_bound(eps0, n, delta):
    r = shuffle_epsilon(eps0, n, delta)
    assert 0.0 <= r.epsilon <= eps0 and math.isfinite(r.epsilon)
    if r.closed_form is not None:
        assert r.epsilon <= r.closed_form * (1 + 1e-6)  # never looser than the closed form where it applies


def test_huge_n_is_an_upper_bound_and_monotone():
    # δ(ε) at the returned ε is at most δ, evaluated at every clone count of a narrower range (independent of
    # the blocks the bound used), and ε falls with n up to the point where the neighbouring views are closer
    # than δ in total variation (ε = 0 then: a true (0, δ) statement)
    eps = [shuffle_epsilon(4.0, n, 1e-9).epsilon for n in (10**10, 10**12, 10**14)]
    assert eps[0] > eps[1] > eps[2] > 0
    r = shuffle_epsilon(4.0, 10**12, 1e-9)
    c, weight, tail = accounting._clone_blocks(10**12, math.exp(-4.0), 1e-15)
    assert accounting._delta_of(r.epsilon, 4.0, c, weight, tail) <= 1e-9 * (1 + 1e-9)
    assert accounting._delta_of(r.epsilon * 0.99, 4.0, c, weight, tail) > 1e-9  # and tight
    zero = shuffle_epsilon(1.0, 10**15, 1e-6)  # the reproducer of issue 25
    assert zero.epsilon == 0.0 and zero.amplified and zero.closed_form > 0


# -- panel data and longitudinal collections ------------------------------------------------------------------

def test_panel_data_composes_per_person():
    # One person in several rows of a collection spends epsilon per row (it used to be refused).
    ledger = ldp.PrivacyLedger(cap=2.5)
    entry = ledger.record(epsilon=1.0, people=[1, 2, 1])
    assert entry["n_people"] == 2 and ledger.total(1) == 2.0 and ledger.total(2) == 1.0
    with pytest.raises(ldp.BudgetExceededError, match="1 person"):
        ledger.record(epsilon=0.5, people=[2, 1, 1])  # person 1 would reach 3 (two rows), person 2 only 1.5
    assert ledger.total(1) == 2.0 and len(ledger) == 1
    ledger.record(epsilon=0.5, people=[2, 1])  # exactly the cap is allowed
    assert ledger.total(1) == 2.5


def _simulate_rounds(m, n, rounds, change, seed):
    """Values per round: each round, a fraction ``change`` of people move to a new category."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, m.k, n)
    out = []
    for _ in range(rounds):
        out.append(values.copy())
        movers = rng.random(n) < change
        values[movers] = (values[movers] + rng.integers(1, m.k, movers.sum())) % m.k
    return out


def test_longitudinal_totals_equal_the_memoized_bound_over_30_rounds():
    m = ldp.LGRR(epsilon_permanent=2.0, epsilon_report=0.5, k=16)
    n = 400
    keys = ldp.ClientKeys.generate(n, rng=1)
    ledger = ldp.PrivacyLedger()
    history = _simulate_rounds(m, n, 30, 0.10, seed=2)
    for r, values in enumerate(history):
        m.privatize(values, keys=keys, rng=r, round=r)
        ledger.record_longitudinal(m, people=np.arange(n), fingerprints=m.memo_fingerprints(values, keys=keys),
                                   round=r)
    # Independently: per person, sum over the distinct values held of min(eps_inf, reports about it * eps_1).
    stack = np.stack(history, axis=1)
    want = np.array([sum(min(2.0, c * 0.5) for c in np.unique(row, return_counts=True)[1]) for row in stack])
    assert np.allclose(ledger.totals().reindex(np.arange(n)).to_numpy(), want)
    assert want.max() < 30 * 0.5  # naive repeated collection: 15 for everyone
    # A person whose value never changed spent eps_inf once; a value visited again costs nothing more.
    steady = np.flatnonzero((stack == stack[:, :1]).all(axis=1))
    assert steady.size and np.allclose(ledger.totals().reindex(steady), 2.0)
    # The ledger round-trips through JSON with its longitudinal state, and keeps counting from it.
    again = ldp.PrivacyLedger.from_json(ledger.to_json())
    assert again.totals().equals(ledger.totals())
    moved = (history[-1] + 1) % m.k
    again.record_longitudinal(m, people=np.arange(n), fingerprints=m.memo_fingerprints(moved, keys=keys), round=30)
    assert np.all(again.totals().reindex(np.arange(n)).to_numpy() >= want)


def test_longitudinal_cap_refuses_before_recording_and_rounds_are_not_reused():
    m = ldp.LGRR(epsilon_permanent=1.0, epsilon_report=0.6, k=4)
    keys = ldp.ClientKeys.generate(3, rng=3)
    ledger = ldp.PrivacyLedger(cap=1.5)
    fp = m.memo_fingerprints([0, 1, 2], keys=keys)
    ledger.record_longitudinal(m, people=[0, 1, 2], fingerprints=fp, round=0)
    assert ledger.total(0) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="round 0 .* already recorded for 3"):
        ledger.record_longitudinal(m, people=[0, 1, 2], fingerprints=fp, round=0)
    ledger.record_longitudinal(m, people=[0, 1, 2], fingerprints=fp, round=1)
    assert ledger.total(0) == pytest.approx(1.0)  # capped at eps_inf for the one value
    moved = m.memo_fingerprints([3, 1, 2], keys=keys)
    with pytest.raises(ldp.BudgetExceededError, match="1 person"):  # person 0's new value: 1.0 + 0.6 > 1.5
        ledger.record_longitudinal(m, people=[0, 1, 2], fingerprints=moved, round=2)
    assert len(ledger) == 2 and ledger.total(0) == pytest.approx(1.0)
    with pytest.raises(TypeError, match="longitudinal mechanism"):
        ledger.record_longitudinal(ldp.GRR(1.0, 4), people=[0], fingerprints=fp[:1])
    with pytest.raises(ValueError, match="one uint64 per person"):
        ledger.record_longitudinal(m, people=[0, 1], fingerprints=fp)


def test_fingerprints_are_keyed_digests_of_the_memoized_value():
    m = ldp.LGRR(epsilon_permanent=1.0, epsilon_report=0.6, k=4)
    keys = ldp.ClientKeys.generate(2, rng=4)
    a = m.memo_fingerprints([1, 1], keys=keys)
    assert a[0] != a[1]  # two people with one value: unrelated digests
    assert np.array_equal(a, m.memo_fingerprints([1, 1], keys=keys))
    assert not np.any(a == m.memo_fingerprints([2, 2], keys=keys))
    assert not np.any(a == m.permanent([1, 1], keys=keys).astype(np.uint64))
