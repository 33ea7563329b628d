"""Shuffled set-valued collections (SVIM, SVSM): each phase's batch declared shuffled on its own, the state
recording it (JSON round trip, old states), the result's central ε = the largest over the phases (parallel
composition: each person reports in one phase), dropped when a phase was not shuffled, mixed δ refused, bad
declarations refused before anything is drawn, and the pandas wiring."""

import json
import pickle

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum._random import child_rng
from ldpnum.accounting import shuffle_epsilon
from ldpnum.heavy.setvalued import SetValuedState

from test_setvalued import planted_sets

EPS = 4.0


def expected_central(epsilon, n_per_phase, delta=1e-6):
    """The collection's central ε computed here from each phase's count: the largest phase ε."""
    per_phase = [shuffle_epsilon(epsilon, int(n), delta).epsilon for n in n_per_phase]
    return max(per_phase), per_phase


@pytest.fixture(scope="module")
def sets():
    return planted_sets(30_000, 9)


@pytest.mark.parametrize("cls", [ldp.SVIM, ldp.SVSM])
def test_run_shuffled_central_epsilon_is_the_largest_over_the_phases(cls, sets):
    sv = cls(EPS, top_k=3)
    est = sv.run(sets, rng=12, shuffled=True)
    n_per_phase = est.provenance["n_per_phase"]
    assert len(n_per_phase) == len(sv.phases) and sum(n_per_phase) == len(sets)
    # the phases are those of the unshuffled run (same seed): the declaration draws nothing
    plain = sv.run(sets, rng=12)
    assert plain.shuffle is None and plain == est and plain.provenance["n_per_phase"] == n_per_phase
    assert "central" not in repr(plain) and plain.privacy == f"local ε = {EPS:g}"
    want, per_phase = expected_central(EPS, n_per_phase)
    assert est.shuffle.epsilon == want and est.shuffle.delta == 1e-6 and est.shuffle.epsilon0 == EPS
    # the largest is the phase with the fewest reports (all phases at the same local ε) ...
    assert est.shuffle.n == min(n_per_phase)
    # ... and strictly above the ε of one batch of everybody (which would understate it)
    assert want > shuffle_epsilon(EPS, len(sets), 1e-6).epsilon and want > min(per_phase)
    assert est.privacy == est.shuffle.describe() and est.privacy in repr(est) and est.privacy in str(est)
    assert est.provenance["shuffled_phases"] == tuple((1e-6, n) for n in n_per_phase)
    back = pickle.loads(pickle.dumps(est))
    assert back == est and back.shuffle == est.shuffle


def run_phases(sv, sets, declare, seed=12):
    """The protocol phase by phase (state through JSON), phase ``j``'s aggregate passed through ``declare(j, agg)``;
    also checks that every state survives the JSON round trip with its declarations."""
    phase_of = sv.assign_phases(len(sets), child_rng(seed, 0))
    state = sv.start()
    for stage in range(len(sv.phases)):
        payload = sv.payload(state)
        group = [sets[i] for i in np.flatnonzero(phase_of == stage)]
        mech = sv.mechanism(payload)
        agg = declare(stage, mech.aggregate(sv.privatize(payload, group, rng=child_rng(seed, 1, stage))))
        state = sv.collect(state, agg)
        text = state.to_json()
        back = SetValuedState.from_json(text)
        assert back == state and back.shuffles == state.shuffles and len(state.shuffles) == stage + 1
        state = back
    return state


@pytest.mark.parametrize("cls", [ldp.SVIM, ldp.SVSM])
def test_phase_by_phase_declarations_survive_json_and_equal_run(cls, sets):
    sv = cls(EPS, top_k=3)
    state = run_phases(sv, sets, lambda j, agg: agg.shuffled(1e-6))
    assert all(e is not None and e[0] == 1e-6 for e in state.shuffles)
    assert [e[1] for e in state.shuffles] == list(state.n_per_phase)
    est = sv.result(state)
    assert est.shuffle == sv.run(sets, rng=12, shuffled=True).shuffle == sv.shuffle(state)
    assert est.shuffle.epsilon == expected_central(EPS, state.n_per_phase)[0]


@pytest.mark.parametrize("unshuffled", [0, 2])
def test_a_phase_not_shuffled_drops_the_declaration(sets, unshuffled):
    sv = ldp.SVIM(EPS, top_k=3)
    state = run_phases(sv, sets, lambda j, agg: agg if j == unshuffled else agg.shuffled(1e-6))
    assert state.shuffles[unshuffled] is None and sum(e is not None for e in state.shuffles) == 2
    est = sv.result(state)
    assert est.shuffle is None and "central" not in repr(est) and est.privacy == "local ε = 4"


def test_a_phase_merged_from_shuffled_batches_counts_its_smallest_batch(sets):
    """Two chunks of the size phase shuffled apart: that phase's central ε is of its smaller chunk
    (:meth:`ldpnum.Aggregate.__add__`), and it becomes the collection's."""
    sv = ldp.SVIM(EPS, top_k=3)
    phase_of = sv.assign_phases(len(sets), child_rng(12, 0))
    state, small = sv.start(), None
    for stage in range(3):
        payload = sv.payload(state)
        group = [sets[i] for i in np.flatnonzero(phase_of == stage)]
        mech = sv.mechanism(payload)
        reports = sv.privatize(payload, group, rng=child_rng(12, 1, stage))
        if stage == 1:
            small = len(reports) // 5
            agg = mech.aggregate(reports[:small]).shuffled(1e-6) + mech.aggregate(reports[small:]).shuffled(1e-6)
        else:
            agg = mech.aggregate(reports).shuffled(1e-6)
        state = sv.collect(state, agg)
    assert state.shuffles[1] == (1e-6, small)
    est = sv.result(state)
    assert est.shuffle.n == small and est.shuffle == shuffle_epsilon(EPS, small, 1e-6)


def test_mixed_delta_is_refused(sets):
    sv = ldp.SVIM(EPS, top_k=3)
    with pytest.raises(ValueError, match=r"different delta .*'candidates' with delta 1e-06.*'size' with delta "
                                         r"0\.001.*one delta"):
        run_phases(sv, sets, lambda j, agg: agg.shuffled(1e-6 if j == 0 else 1e-3))
    # a state carrying mixed declarations (edited by hand) is refused by result too
    state = run_phases(sv, sets, lambda j, agg: agg.shuffled(1e-6))
    d = json.loads(state.to_json())
    d["shuffles"][2][0] = 1e-5
    with pytest.raises(ValueError, match="different delta"):
        sv.result(SetValuedState.from_json(json.dumps(d)))
    # an unshuffled phase does not excuse mixed delta among the others
    d["shuffles"][1] = None
    with pytest.raises(ValueError, match="different delta"):
        sv.result(SetValuedState.from_json(json.dumps(d)))


def test_impossible_recorded_declarations_are_refused(sets):
    sv = ldp.SVIM(EPS, top_k=3)
    state = run_phases(sv, sets, lambda j, agg: agg.shuffled(1e-6))
    d = json.loads(state.to_json())
    for bad, exc, msg in (([1e-6, state.n_per_phase[0] + 1], ValueError, "batch size of phase 'candidates'"),
                          ([1e-6, 0], ValueError, "batch size"), ([2.0, 10], ValueError, "shuffle_delta must lie"),
                          ([1e-6], ValueError, r"must be \(delta, n\)")):
        d["shuffles"][0] = bad
        with pytest.raises(exc, match=msg):
            sv.result(SetValuedState.from_json(json.dumps(d)))


def test_a_state_from_before_the_declarations_still_loads(sets):
    sv = ldp.SVIM(EPS, top_k=3)
    state = run_phases(sv, sets, lambda j, agg: agg)
    d = json.loads(state.to_json())
    assert d["shuffles"] == [None, None, None]
    del d["shuffles"]
    old = SetValuedState.from_json(json.dumps(d))
    assert old.shuffles == ()
    est = sv.result(old)
    assert est == sv.result(state) and est.shuffle is None
    assert est.provenance["shuffled_phases"] == (None, None, None)
    # an old partial state continues with a shuffled phase: the earlier phases count as not shuffled
    partial = json.loads(run_phases_upto(sv, sets, 2).to_json())
    del partial["shuffles"]
    st = SetValuedState.from_json(json.dumps(partial))
    payload = sv.payload(st)
    phase_of = sv.assign_phases(len(sets), child_rng(12, 0))
    group = [sets[i] for i in np.flatnonzero(phase_of == 2)]
    agg = sv.mechanism(payload).aggregate(sv.privatize(payload, group, rng=child_rng(12, 1, 2))).shuffled(1e-6)
    st = sv.collect(st, agg)
    assert st.shuffles == (None, None, (1e-6, agg.n_reports)) and sv.result(st).shuffle is None


def run_phases_upto(sv, sets, stages, seed=12):
    phase_of = sv.assign_phases(len(sets), child_rng(seed, 0))
    state = sv.start()
    for stage in range(stages):
        payload = sv.payload(state)
        group = [sets[i] for i in np.flatnonzero(phase_of == stage)]
        state = sv.collect(state, sv.privatize(payload, group, rng=child_rng(seed, 1, stage)))
    return state


@pytest.fixture
def no_draws(monkeypatch):
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: pytest.fail("words drawn for a bad input"))


@pytest.mark.parametrize("kwargs,exc,msg", [
    ({"shuffle_delta": 0}, ValueError, "shuffle_delta must lie in"),
    ({"shuffle_delta": 1.5}, ValueError, "shuffle_delta must lie in"),
    ({"shuffle_delta": float("nan")}, ValueError, "shuffle_delta must lie in"),
    ({"shuffle_delta": "1e-6"}, TypeError, "shuffle_delta must be a real number"),
    ({"shuffle_delta": None}, TypeError, "shuffle_delta must be a real number"),
    ({"shuffled": "yes"}, TypeError, "shuffled must be True or False"),
    ({"shuffled": 1}, TypeError, "shuffled must be True or False"),
])
@pytest.mark.parametrize("cls", [ldp.SVIM, ldp.SVSM])
def test_bad_declaration_refused_before_any_draw(cls, kwargs, exc, msg, no_draws):
    kw = {"shuffled": True, **kwargs}
    with pytest.raises(exc, match=msg):
        cls(EPS, top_k=2).run([{"a", "b"}, {"a"}] * 50, rng=0, **kw)
    with pytest.raises(exc, match=msg):
        pd.Series([["a", "b"], ["a"]] * 50).ldp.frequent_items(ldp.SVIM(EPS, top_k=2), rng=0, **kw) \
            if cls is ldp.SVIM else \
            pd.Series([["a", "b"], ["a"]] * 50).ldp.frequent_itemsets(ldp.SVSM(EPS, top_k=2), rng=0, **kw)


def test_pandas_passes_the_declaration_through(sets):
    s = pd.Series([sorted(x) for x in sets], name="basket")
    sv, ss = ldp.SVIM(EPS, top_k=3), ldp.SVSM(EPS, top_k=3)
    est = s.ldp.frequent_items(sv, rng=12, shuffled=True, shuffle_delta=1e-5)
    assert est.shuffle == sv.run(s, rng=12, shuffled=True, shuffle_delta=1e-5).shuffle
    assert est.shuffle.delta == 1e-5 and est.name == "basket"
    assert est.shuffle.epsilon == expected_central(EPS, est.provenance["n_per_phase"], 1e-5)[0]
    assert s.ldp.frequent_items(sv, rng=12).shuffle is None
    est2 = s.ldp.frequent_itemsets(ss, rng=12, shuffled=True)
    assert est2.shuffle.epsilon == expected_central(EPS, est2.provenance["n_per_phase"])[0]


def test_itemsets_estimate_carries_a_given_declaration():
    spec = ldp.Spec("padding_sampling", epsilon=4.0, n_cells=6)
    amp = shuffle_epsilon(4.0, 10_000, 1e-6)
    est = ldp.ItemsetsEstimate((frozenset({"a"}),), [0.5], [0.01], n_reports=30_000, epsilon=4.0, spec=spec,
                               shuffle=amp)
    assert est.shuffle is amp and est.privacy == amp.describe() and amp.describe() in repr(est)
    assert est == ldp.ItemsetsEstimate((frozenset({"a"}),), [0.5], [0.01], n_reports=30_000, epsilon=4.0, spec=spec)
    with pytest.raises(TypeError, match="ShuffleAmplification"):
        ldp.ItemsetsEstimate((frozenset({"a"}),), [0.5], [0.01], n_reports=30_000, epsilon=4.0, spec=spec,
                             shuffle=0.5)
