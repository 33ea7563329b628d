"""Set-valued data: SVIM and SVSM (DESIGN.md R1, R2, R5, R8; TESTING.md "heavy hitters / itemsets").

Padding-and-sampling (PaddingSampling, PaddingSamplingOLH), the oracle of their estimate phases, is tested in
test_padding.py. Here: the exact ε of the other two report types (PEM on one sampled item with the empty-set
mixture; the size phase), the phase split, recovery of planted items and itemsets, exactness at ε = 20, the
protocol phase by phase with JSON state, and bad input.
"""

import doctest
import itertools
import pathlib
from fractions import Fraction

import numpy as np
import pytest
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio

import ldpnum as ldp
from ldpnum import _random
from ldpnum._random import child_rng
from ldpnum.heavy import decode_items, setvalued
from ldpnum.heavy.setvalued import Payload, SetValuedState, candidate_itemsets, encode_sets
from ldpnum.plans import TWO48, uniform_count

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "setvalued.md"


def all_local_sets(k):
    return [c for r in range(k + 1) for c in itertools.combinations(range(k), r)]


# -- SVIM with padding-and-sampling's local-hashing variant ------------------------------------------------------

def test_svim_with_the_olh_estimate_phase_recovers_planted_items():
    """ε = 1, top_k = 10, one item per person: 20 candidates and ℓ = 1, where OLH's variance is the smaller
    (20 ≥ e (4 - 1) + 1), and is used."""
    rng = np.random.default_rng(2)
    sets = [{v} for v in rng.choice(["a", "b", "c", "d"], 100_000, p=[0.5, 0.3, 0.15, 0.05])]
    est = ldp.SVIM(1.0, top_k=10).run(sets, rng=3)
    assert est.provenance["ell"] == 1
    assert est.provenance["oracles"][2] == "padding_sampling_olh"
    assert set(est.items[:2]) == {"a", "b"}
    truth = np.array([true_frequency(sets, {v}) for v in est.items[:2]])
    assert np.all(np.abs(est.frequencies[:2] - truth) < 4 * est.standard_errors[:2])


# -- the other report types: exact ε --------------------------------------------------------------------------

def candidate_rows(pem, first_word, item_bits):
    """Exact report distribution of every set over a ``2**item_bits`` domain in the candidates phase, given PEM's
    first word: the sampled item (the j-th smallest with probability uniform_count(j, m)/2^48; a uniform word of
    item_bits bits for the empty set) mixed over PEM's rows."""
    domain = range(1 << item_bits)
    pem_rows = {v: pem.plan.exact_probabilities(v, first_word) for v in domain}
    rows = []
    for local in all_local_sets(1 << item_bits):
        if local:
            weights = {v: Fraction(uniform_count(j, len(local)), TWO48) for j, v in enumerate(sorted(local))}
        else:
            weights = {v: Fraction(1, 1 << item_bits) for v in domain}
        row = {}
        for v, w in weights.items():
            for y, p in pem_rows[v].items():
                row[y] = row.get(y, 0) + w * p
        rows.append(row)
    return rows


def test_candidates_phase_exact_epsilon_with_the_empty_set_mixture():
    """Sets over 8 items (all 256, the empty one included), given each of 4 PEM first words: ≤ e^ε and tight
    (singletons reach PEM's ratio); the same protocol planned for 1.25 ε fails."""
    words = [int(w) for w in np.random.default_rng(11).bit_generator.random_raw(4)]
    for eps in (1.0, 3.0):
        sv = ldp.SVIM(eps, top_k=2, item_bits=3, item_type="uint")
        pem = sv.mechanism(sv.payload(sv.start()))
        assert pem.name == "pem" and pem.epsilon == eps
        worst = max(max_ratio(candidate_rows(pem, w, 3)) for w in words)
        check_exact_epsilon([], eps, ratio=worst)
        loose = ldp.SVIM(1.25 * eps, top_k=2, item_bits=3, item_type="uint")
        rows = candidate_rows(loose.mechanism(loose.payload(loose.start())), words[0], 3)
        with pytest.raises(PrivacyViolation, match="exceeds"):
            check_exact_epsilon(rows, eps)


def test_candidates_phase_samples_as_documented():
    """The sampled item of each person against a per-person Python reference on the same words."""
    sv = ldp.SVIM(1.0, top_k=2, item_bits=16, item_type="uint")
    rng = np.random.default_rng(4)
    sets = [set(rng.choice(1 << 16, rng.integers(0, 6), replace=False).tolist()) for _ in range(500)]
    enc = sv.encode(sets)
    words = np.random.default_rng(5).bit_generator.random_raw(500)
    got = sv._sample_items(enc, np.random.default_rng(5))
    for i, s in enumerate(sets):
        w = int(words[i])
        want = sorted(s)[((w >> 16) * len(s)) >> 48] if s else w >> 48
        assert int(got[i]) == want


def test_size_phase_is_an_ordinary_oracle_at_the_full_epsilon():
    state = SetValuedState("svim", ldp.SVIM(1.0, top_k=3).params, stage=1, candidates=tuple(range(6)),
                           n_per_phase=(10,), oracles=("pem",))
    sv = ldp.SVIM(1.0, top_k=3)
    payload = sv.payload(state)
    fo = sv.mechanism(payload)
    assert payload.phase == "size" and fo.name == "grr" and fo.k == 7 and fo.epsilon == 1.0
    check_exact_epsilon([fo.plan.exact_probabilities(v) for v in range(7)], 1.0)
    sv4 = ldp.SVIM(0.5, top_k=20)
    state4 = SetValuedState("svim", sv4.params, stage=1, candidates=tuple(range(40)), n_per_phase=(10,))
    assert sv4.mechanism(sv4.payload(state4)).name == "olh"  # k = 41 ≥ 3 e^0.5 + 2


# -- who reports in which phase ----------------------------------------------------------------------------------

def test_phase_probabilities_are_exact_and_the_split_follows_them():
    for sv, nominal in [(ldp.SVIM(1.0), [0.5, 0.1, 0.4]), (ldp.SVSM(1.0), [0.25, 0.05, 0.2, 0.1, 0.4])]:
        probs = sv.phase_probabilities()
        assert sum(probs) == 1
        assert all(abs(float(p) - q) <= 20 / 2**48 for p, q in zip(probs, nominal))
        phases = sv.assign_phases(400_000, rng=7)
        counts = np.bincount(phases, minlength=len(probs))
        check_kernel_matches(counts, [float(p) for p in probs])


def test_the_split_does_not_depend_on_the_sets():
    """Same seed, different data of the same size: the same people in each phase."""
    rng = np.random.default_rng(0)
    a = [{"x", "y"} if rng.random() < 0.5 else {"z"} for _ in range(3000)]
    b = [{f"w{i}"} for i in range(3000)]
    sv = ldp.SVIM(2.0, top_k=2)
    assert sv.run(a, rng=9).provenance["n_per_phase"] == sv.run(b, rng=9).provenance["n_per_phase"]


# -- recovery ------------------------------------------------------------------------------------------------------

BASKETS = [({"a", "b"}, 0.30), ({"a"}, 0.20), ({"b", "c"}, 0.05), ({"c", "d", "e"}, 0.10), ({"d"}, 0.10)]


def planted_sets(n, seed):
    """Baskets with the probabilities above; the remaining 25% hold one rare item each (thousands of them)."""
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    edges = np.cumsum([p for _, p in BASKETS])
    which = np.searchsorted(edges, u, side="right")
    out = [set(BASKETS[j][0]) if j < len(BASKETS) else {f"r{rng.integers(5000)}"} for j in which]
    return out


def true_frequency(sets, itemset):
    return float(np.mean([itemset <= s for s in sets]))


def test_svim_recovers_planted_items_within_their_standard_errors():
    """ε = 4, 10^5 people: the top 4 are a, b, d, c (0.5, 0.35, 0.2, 0.15). No set holds more than ℓ candidates
    (ℓ is 3 when e is a candidate, else 2), so the estimates are unbiased (no size correction is needed) and
    each lies within 4 standard errors of the true share."""
    sets = planted_sets(100_000, 1)
    est = ldp.SVIM(4.0, top_k=4).run(sets, rng=2)
    assert est.items == ("a", "b", "d", "c")
    cands = set(decode_items(np.array(est.provenance["candidates"], np.uint64), "str", 64))
    assert cands == set(est.provenance["candidate_items"])
    assert {"a", "b", "c", "d"} <= cands
    assert est.provenance["ell"] == max(len(b & cands) for b, _ in BASKETS) == round(est.provenance["scales"][0])
    assert est.provenance["oracles"] == ("pem", "grr", "padding_sampling")
    truth = np.array([true_frequency(sets, {v}) for v in est.items])
    assert np.all(np.abs(est.frequencies - truth) < 4 * est.standard_errors), (est.frequencies, truth)
    assert np.all(est.standard_errors < 0.01)
    frame = est.to_frame()
    assert list(frame["item"]) == list(est.items) and len(frame) == 4


def test_svsm_recovers_planted_itemsets_within_their_standard_errors():
    sets = planted_sets(100_000, 3)
    est = ldp.SVSM(4.0, top_k=5).run(sets, rng=4)
    assert est.itemsets == (frozenset("a"), frozenset("b"), frozenset("ab"), frozenset("d"), frozenset("c"))
    truth = np.array([true_frequency(sets, s) for s in est.itemsets])
    assert np.all(np.abs(est.frequencies - truth) < 4 * est.standard_errors), (est.frequencies, truth)
    frame = est.to_frame()
    assert list(frame["size"]) == [1, 1, 2, 1, 1]
    assert est.provenance["itemset_ell"] >= 1 and len(est.provenance["n_per_phase"]) == 5


def exact_top(sets, k, itemsets=False):
    counts = {}
    for s in sets:
        subsets = [frozenset(c) for r in range(1, len(s) + 1) for c in itertools.combinations(sorted(s), r)] \
            if itemsets else [frozenset({v}) for v in s]
        for c in subsets:
            counts[c] = counts.get(c, 0) + 1
    return sorted(counts, key=lambda c: -counts[c])[:k]


def test_at_epsilon_20_results_equal_the_exact_top_k():
    sets = planted_sets(60_000, 5)
    items = ldp.SVIM(20.0, top_k=4).run(sets, rng=6).items
    assert [frozenset({v}) for v in items] == exact_top(sets, 4)
    assert ldp.SVSM(20.0, top_k=5).run(sets, rng=6).itemsets == tuple(exact_top(sets, 5, itemsets=True))


def test_candidate_itemsets_follow_the_guessed_frequencies():
    f = np.array([0.5, 0.35, 0.2, 0.15, 0.1])
    got = candidate_itemsets(f, 10)
    r = 0.9 * f / f.max()
    every = [c for size in range(2, 6) for c in itertools.combinations(range(5), size)]
    score = {c: float(np.prod(r[list(c)])) for c in every}
    assert got == sorted(every, key=lambda c: (-score[c], c))[:10]
    assert candidate_itemsets(np.array([0.3]), 5) == []


def test_uint_items_and_size_correction():
    """uint items; sets longer than ℓ: the scale s exceeds ℓ (the paper's correction) and is ℓ otherwise."""
    assert setvalued.size_scale(np.array([0.1, 0.5, 0.4]), 2) == 2.0
    s = setvalued.size_scale(np.array([0.0, 0.5, 0.0, 0.0, 0.5]), 2)
    assert s == pytest.approx((0.5 + 2.0) / (0.5 / 2 + 2.0 / 4))  # Σ m θ_m / Σ m θ_m / max(m, ℓ)
    assert setvalued.padding_length(np.array([0.2, 0.5, 0.3])) == 2
    assert setvalued.padding_length(np.array([1.0, 0.0])) == 1
    rng = np.random.default_rng(8)
    sets = [set((rng.choice(3, rng.integers(1, 3), replace=False) * 1000 + 7).tolist()) for _ in range(20_000)]
    est = ldp.SVIM(20.0, top_k=3, item_bits=16, item_type="uint").run(sets, rng=1)
    assert sorted(est.items) == [7, 1007, 2007]


# -- the protocol, phase by phase ------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [ldp.SVIM, ldp.SVSM])
def test_protocol_phase_by_phase_with_json_state_equals_run(cls):
    """A real collection: phases assigned from words, each phase's public payload and the collector's state sent
    as JSON, the reports aggregated in two chunks and merged: the same result as the one-call simulation."""
    sets = planted_sets(30_000, 9)
    sv = cls(4.0, top_k=3)
    phase_of = sv.assign_phases(len(sets), child_rng(12, 0))
    state = sv.start()
    for stage, name in enumerate(sv.phases):
        payload = sv.payload(state)
        wire = payload.to_json()
        assert len(wire) < 2000 and Payload.from_json(wire) == payload and payload.phase == name
        group = [sets[i] for i in np.flatnonzero(phase_of == stage)]
        reports = sv.privatize(Payload.from_json(wire), group, rng=child_rng(12, 1, stage))
        mech = sv.mechanism(payload)
        half = len(reports) // 2
        agg = mech.aggregate(reports[:half]) + mech.aggregate(reports[half:])
        state = sv.collect(state, agg)
        text = state.to_json()
        assert SetValuedState.from_json(text) == state
        state = SetValuedState.from_json(text)
    with pytest.raises(ValueError, match="every phase"):
        sv.payload(state)
    assert sv.result(state) == sv.run(sets, rng=12)


def test_result_before_the_last_phase_and_foreign_state_are_refused():
    sv = ldp.SVIM(1.0, top_k=2)
    with pytest.raises(ValueError, match="has not been collected"):
        sv.result(sv.start())
    with pytest.raises(ValueError, match="does not belong"):
        ldp.SVIM(2.0, top_k=2).payload(sv.start())
    with pytest.raises(TypeError, match="Payload"):
        sv.privatize({"phase": "size"}, [{"a"}], rng=0)


# -- bad input: one clear error, nothing drawn ------------------------------------------------------------------------

@pytest.fixture
def no_draws(monkeypatch):
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: pytest.fail("words drawn for a bad input"))


@pytest.mark.parametrize("sets,kwargs,exc,msg", [
    ([], {}, ValueError, "empty"),
    ([{"a"}, {1}], {}, TypeError, "one type|mixed|uint"),
    ([{"a"}, ["b", "b"], ["c", "c"]], {}, ValueError, "2 list.* repeat an item .*first at index 1"),
    ([{"a"}, None], {}, TypeError, "first at index 1"),
    ("ab", {}, TypeError, "list, tuple"),
    ([{"a"}, {"much too long"}], {"truncate": False}, ValueError, "longer|too long"),
    ([{1}, {70000}], {"uint": True}, ValueError, "2\\*\\*16|16 bits|below"),
    ([{"a"}], {"uint": True}, TypeError, "uint"),
    ([{1.5}], {}, TypeError, "float"),
])
def test_bad_sets_raise_before_any_draw(sets, kwargs, exc, msg, no_draws):
    kwargs = dict(kwargs)
    sv = ldp.SVIM(1.0, top_k=2, item_bits=16, item_type="uint") if kwargs.pop("uint", False) else \
        ldp.SVIM(1.0, top_k=2, item_bits=32)
    with pytest.raises(exc, match=msg):
        sv.run(sets, rng=0, **kwargs)


def test_bad_parameters(no_draws):
    for top_k, exc in [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)]:
        with pytest.raises(exc, match="top_k"):
            ldp.SVIM(1.0, top_k=top_k)
        with pytest.raises(exc, match="top_k"):
            ldp.SVSM(1.0, top_k=top_k)
    with pytest.raises(ValueError, match="epsilon"):
        ldp.SVIM(0.0)
    with pytest.raises(ValueError, match="item_type"):
        ldp.SVIM(1.0, item_type="float")
    with pytest.raises(ValueError, match="item_bits"):
        ldp.SVIM(1.0, item_bits=12)  # str items need whole bytes
    with pytest.raises(TypeError):
        ldp.SVIM(1.0).run([{"a"}], rng=-1.5)
    with pytest.raises(ValueError):
        ldp.PaddingSampling(1.0, 10, 0)


def test_encode_sets_names_the_person():
    with pytest.raises(ValueError, match="first in the set at index 2"):
        encode_sets([{1}, set(), {-4}], 16)
    enc = encode_sets([["b", "a"], [], ("c",)], 16)
    assert enc.n == 3 and enc.lengths.tolist() == [2, 0, 1] and enc.item_type == "str"
    assert enc.words.tolist() == sorted(enc.words[:2].tolist()) + [enc.words[2]]


# -- documentation ----------------------------------------------------------------------------------------------------

def test_docs_setvalued_examples_run():
    result = doctest.testfile(str(DOCS), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 5 and result.failed == 0


def test_size_noise_does_not_inflate_the_correction():
    """Regression: with Norm-Sub sizes, the noise left in empty large-size cells (weighted by m in the correction)
    put a pair's estimate 9.5 standard errors high (SVSM, ε = 4, seed 3 below). With the significant cells only,
    every returned estimate of 4 collections lies within 4 standard errors (12 collections measured: z-scores mean
    -0.01, sd 0.85, largest 2.2)."""
    for seed in (1, 3, 5, 7):
        sets = planted_sets(100_000, 100 + seed)
        est = ldp.SVSM(4.0, top_k=5).run(sets, rng=seed)
        truth = np.array([true_frequency(sets, s) for s in est.itemsets])
        assert np.all(np.abs(est.frequencies - truth) < 4 * est.standard_errors), (seed, est.frequencies, truth)


def test_significant_sizes_drops_noise_cells():
    fe = ldp.GRR(2.0, 12).estimate_frequencies(ldp.GRR(2.0, 12).privatize(np.repeat([1, 2], [6000, 4000]), rng=0))
    theta = setvalued.significant_sizes(fe)
    assert theta[1] > 0.5 and theta[2] > 0.3 and np.all(theta[3:] == 0) and theta[0] == 0


# -- a public domain --------------------------------------------------------------------------------------------------

def test_a_public_domain_replaces_pem_by_padding_and_sampling_with_ell_1():
    """With domain=, the candidates phase is the paper's: one sampled item (a dummy for a set holding none) by GRR
    or OLH over the domain and the dummy, i.e. PaddingSampling(ε, |D|, 1), whose exact ε is checked above. The
    recovery matches PEM's, and items outside the domain are never candidates."""
    sets = planted_sets(60_000, 4)
    domain = ["a", "b", "c", "d", "e", "f", "g"]
    sv = ldp.SVIM(4.0, top_k=3, domain=domain)
    mech = sv.mechanism(sv.payload(sv.start()))
    assert mech.name == "padding_sampling" and mech.k == 7 and mech.ell == 1
    est = sv.run(sets, rng=5)
    assert est.items == ("a", "b", "d") and est.provenance["oracles"][0] == "padding_sampling"
    assert set(est.provenance["candidate_items"]) <= set(domain)
    truth = np.array([true_frequency(sets, {v}) for v in est.items])
    assert np.all(np.abs(est.frequencies - truth) < 4 * est.standard_errors)
    assert SetValuedState.from_json(sv.start().to_json()).params["domain"] == list(sv.params["domain"])
    itemsets = ldp.SVSM(20.0, top_k=4, domain=domain).run(sets, rng=5).itemsets
    assert itemsets == tuple(exact_top(sets, 4, itemsets=True))


@pytest.mark.parametrize("domain,exc,msg", [([], ValueError, "empty"), (["a", "a"], ValueError, "distinct"),
                                            ([1, 2], TypeError, "uint items"), (["a", 3], TypeError, None),
                                            (["way too long"], ValueError, "long")])
def test_bad_domains(domain, exc, msg, no_draws):
    with pytest.raises(exc, match=msg):
        ldp.SVIM(1.0, top_k=2, item_bits=32, domain=domain)


def test_sets_as_a_pandas_series_or_object_array_give_the_same_run():
    import pandas as pd

    sets = planted_sets(5000, 6)
    lists = [sorted(s) for s in sets]
    ref = ldp.SVIM(4.0, top_k=2).run(sets, rng=7)
    assert ldp.SVIM(4.0, top_k=2).run(pd.Series(lists), rng=7) == ref
    arr = np.empty(len(lists), dtype=object)
    arr[:] = [tuple(v) for v in lists]
    assert ldp.SVIM(4.0, top_k=2).run(arr, rng=7) == ref


def test_results_pickle_and_secure_runs_work():
    import pickle

    sets = planted_sets(20_000, 8)
    items = ldp.SVIM(8.0, top_k=2).run(sets)  # rng=None: secure words
    assert set(items.items) == {"a", "b"}
    itemsets = ldp.SVSM(8.0, top_k=3).run(sets, rng=1)
    for est in (items, itemsets):
        assert pickle.loads(pickle.dumps(est)) == est
    with pytest.raises(ValueError, match="epsilon"):
        ldp.ItemsetsEstimate(itemsets.itemsets, itemsets.frequencies, itemsets.standard_errors, 10, 1.0,
                             itemsets.spec)


def test_compiled_set_flattening_and_per_person_sort_match_the_python_route():
    from ldpnum._kernels.objects import flatten_collections, sort_segments
    rng = np.random.default_rng(11)
    pool = [f"w{i}" for i in range(50)]
    sets = []
    for i in range(300):
        items = list(rng.choice(pool, size=int(rng.integers(0, 12)), replace=False))
        sets.append([set, frozenset, list, tuple][i % 4](items))
    lengths, flat = flatten_collections(sets)
    assert lengths.tolist() == [len(s) for s in sets]
    assert flat.tolist() == [v for s in sets for v in s]
    enc = encode_sets(sets, 64)
    for i, s in enumerate(sets):  # every person's words, ascending, distinct
        want = sorted(int.from_bytes(v.encode().ljust(8, b"\0"), "big") for v in s)
        assert enc.words[enc.offsets[i]:enc.offsets[i + 1]].tolist() == want
    # anything but a list/tuple of exact sets, lists or tuples goes to the checked route
    assert flatten_collections(np.array([[1], [2]], dtype=object)) is None
    assert flatten_collections([[1], None]) is None
    assert flatten_collections([[1], np.array([2])]) is None
    assert flatten_collections([[1], type("L", (list,), {})([2])]) is None
    # duplicates: counted per person, first person named
    offsets = np.array([0, 3, 3, 6, 8], dtype=np.int64)
    words = np.array([5, 1, 3, 2, 9, 2, 7, 7], dtype=np.uint64)
    out, count, first = sort_segments(offsets, words)
    assert out.tolist() == [1, 3, 5, 2, 2, 9, 7, 7] and (count, first) == (2, 2)
    assert words.tolist() == [5, 1, 3, 2, 9, 2, 7, 7]  # the input is not changed
    with pytest.raises(ValueError, match="offsets"):
        sort_segments(np.array([0, 9], dtype=np.int64), words)


# -- items wider than 64 bits ---------------------------------------------------------------------------------

LONG = ["aéroport international Charles", "aéroport international d'Orly", "gare de Lyon Part-Dieu, Lyon"]


def long_sets(n, seed):
    rng = np.random.default_rng(seed)
    held = rng.random((n, 3)) < [0.5, 0.35, 0.25]
    other = rng.integers(0, 10**6, n)
    return [{LONG[j] for j in np.flatnonzero(h)} | ({f"other item number {o}"} if o % 2 else set())
            for h, o in zip(held, other)]


@pytest.mark.parametrize("domain", [False, True])
def test_svim_recovers_long_items_sharing_their_first_bytes(domain):
    """256-bit items: the first two share 23 bytes (three 64-bit words). PEM finds them whole (or the domain lists
    them), membership compares digests, the estimates lie within 4 standard errors of the true shares."""
    # Without a domain PEM runs 63 levels over a third of the people (about 160 per level): the two most frequent
    # items are found; with the domain all three.
    sets = long_sets(30_000, 5)
    top_k = 3 if domain else 2
    sv = ldp.SVIM(4.0, top_k=top_k, item_bits=256, domain=LONG + ["never held, but long enough"] if domain else None)
    est = sv.run(sets, rng=6)
    assert set(est.items) == set(LONG[:top_k])
    truth = np.array([true_frequency(sets, {v}) for v in est.items])
    assert np.all(np.abs(est.frequencies - truth) < 4 * est.standard_errors), (est.frequencies, truth)
    assert max(est.provenance["candidates"]) >= 2**64  # the candidates are whole 256-bit words


def test_long_items_bad_sets_and_mixed_widths_are_refused(no_draws):
    with pytest.raises(ValueError, match=r"item_bits must be in \[1, 256\]; got 257"):
        ldp.SVIM(1.0, item_bits=257)
    with pytest.raises(ValueError, match="1 list.* repeat an item .*first at index 1"):
        ldp.SVIM(1.0, item_bits=256).run([{"a"}, ["b" * 40, "b" * 41]], rng=0)  # equal once cut to 32 bytes
    with pytest.raises(ValueError, match=r"2\*\*item_bits = 2\*\*100"):
        ldp.SVIM(1.0, item_bits=100, item_type="uint").run([{1}, {2**100}], rng=0)
    narrow = ldp.SVIM(1.0).encode([{"a"}, {"b"}])
    sv = ldp.SVIM(1.0, item_bits=256)
    with pytest.raises(ValueError, match="encoded with at most 64 bits per item but the protocol has item_bits=256"):
        sv.privatize(sv.payload(sv.start()), narrow, rng=0)
