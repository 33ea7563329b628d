"""Set-valued data (SVIM, SVSM): robustness of the run, payload and state paths (TESTING.md "bad-input matrix").

Every bad input gets one clear error (TypeError for a wrong kind, ValueError for a wrong value, naming the field and
the value) raised before any random word is drawn; small and extreme cases either work or are refused before the
first phase draws; encoding is O(n log n) in the size of a set.
"""

import time

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum.heavy.setvalued import Payload, SetValuedState, encode_sets


@pytest.fixture
def no_draws(monkeypatch):
    """Fail the test if any random word is drawn (every draw of ldpnum goes through WordSource.draw)."""
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: pytest.fail("words drawn for a bad input"))


# -- encoding: O(m log m) per set ------------------------------------------------------------------------------

def test_one_huge_set_encodes_in_n_log_n():
    """Regression: the per-person insertion sort was quadratic in a set's size (one set of 240,000 str items took
    11 s, 10^6 about 7 min; 200,000 took 7.5 s). Sorting long sets with NumPy first: 0.1 s for 240,000 and 0.3 s
    for 10^6 measured; the 2.5 s limit leaves room for a loaded machine and still fails the quadratic sort."""
    sets = [{f"i{j}" for j in range(200_000)}, {"b", "a"}]
    start = time.perf_counter()
    enc = encode_sets(sets, 64)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.5, elapsed
    assert enc.lengths.tolist() == [200_000, 2]
    big = enc.words[:200_000]
    assert np.all(big[1:] > big[:-1])  # ascending and distinct
    assert enc.words[200_000] < enc.words[200_001]


def test_a_long_list_repeating_an_item_is_still_refused(no_draws):
    long_list = [f"w{j}" for j in range(500)] + ["w7"]
    with pytest.raises(ValueError, match=r"1 list\(s\) repeat an item .*first at index 1"):
        ldp.SVIM(4.0, top_k=2).run([{"a"}, long_list, {"b"}], rng=0)


# -- payloads and states: one clear error, nothing drawn --------------------------------------------------------

def unchanged(gen, before):
    return gen.bit_generator.state == before


SVIM4 = ldp.SVIM(4.0, top_k=2, item_bits=16, item_type="uint")
SVSM4 = ldp.SVSM(4.0, top_k=2, item_bits=16, item_type="uint")


def svim_payload(at, **fields):
    """A payload of SVIM4 as payload(state) returns it at stage ``at``, with ``fields`` replaced."""
    base = {0: {"candidates": (), "ell": 0}, 1: {"candidates": (7, 9, 11), "ell": 0},
            2: {"candidates": (7, 9, 11), "ell": 2}}[at]
    kw = {**base, **fields}
    return Payload("svim", kw.pop("stage", at), kw.pop("phase", SVIM4.phases[at]), SVIM4.params, **kw)


def svsm_payload(stage, **fields):
    base = {"candidates": (7, 9, 11), "itemsets": ((7, 9), (9, 11)), "ell": 0 if stage == 3 else 2}
    kw = {**base, **fields}
    return Payload("svsm", stage, SVSM4.phases[stage], SVSM4.params, **kw)


@pytest.mark.parametrize("text,exc,msg", [
    ("{}", ValueError, r"payload JSON lacks the required field\(s\) \['protocol', 'stage', 'phase', 'params'\]"),
    ("[1, 2]", ValueError, "must be an object"),
    ("{not json", ValueError, "payload is not valid JSON"),
    (7, TypeError, "payload JSON must be str or bytes; got int"),
    ('{"protocol": "svim", "stage": "1", "phase": "size", "params": {}}', TypeError,
     "payload stage must be an integer; got str '1'"),
    ('{"protocol": "svim", "stage": 1, "phase": "size", "params": {}, "candidates": [1852673427797059126777135760139006525652319754650249024631321344126610074238976]}',
     ValueError, (r"payload candidates must be item words in \[0, 2\*\*256\); 1 are not, first at index 0 "
                  r"\(18526734277970591267")),
    ('{"protocol": "svim", "stage": 1, "phase": "size", "params": {}, "candidates": [3, -1]}', ValueError,
     r"payload candidates .* first at index 1 \(-1\)"),
    ('{"protocol": "svim", "stage": 1, "phase": "size", "params": {}, "candidates": [3, "a"]}', TypeError,
     r"payload candidates must be item words .* first at index 1 \(str 'a'\)"),
    ('{"protocol": "svim", "stage": 1, "phase": "size", "params": [], "candidates": []}', TypeError,
     "payload params must be a dict"),
    ('{"protocol": "svim", "stage": 1, "phase": "size", "params": {}, "itemsets": [[1, true]]}', TypeError,
     r"payload itemsets\[0\] must be item words .*index 1 \(bool True\)"),
    ('{"protocol": "svim", "stage": 1, "phase": "size", "params": {}, "extra": 1}', ValueError,
     r"unknown field\(s\) \['extra'\]"),
    ('{"protocol": "svim", "stage": -1, "phase": "size", "params": {}}', ValueError, "payload stage must be >= 0; got -1"),
])
def test_bad_payload_json_one_clear_error(text, exc, msg):
    """Regression: Payload.from_json("{}") raised KeyError: 'protocol'; a candidate of 2**70 'Python int too large
    to convert to C long', of -1 'out of bounds for uint64' (at privatize); a stage "1" was silently made 1."""
    with pytest.raises(exc, match=msg):
        Payload.from_json(text)


@pytest.mark.parametrize("text,exc,msg", [
    ("{}", ValueError, r"state JSON lacks the required field\(s\) \['protocol', 'params'\]"),
    ('{"params": {}}', ValueError, r"lacks the required field\(s\) \['protocol'\]"),
    ('{"protocol": "svim", "params": {}, "stage": "1"}', TypeError, "state stage must be an integer; got str '1'"),
    ('{"protocol": "svim", "params": {}, "ell": 1.5}', TypeError, "state ell must be an integer; got float 1.5"),
    ('{"protocol": "svim", "params": {}, "candidates": [-3]}', ValueError, "state candidates must be item words"),
    ('{"protocol": "svim", "params": {}, "n_per_phase": [0]}', ValueError, r"state n_per_phase\[0\] must be >= 1; got 0"),
    ('{"protocol": 3, "params": {}}', TypeError, "state protocol must be a str; got int 3"),
    ("null", ValueError, "state JSON must be an object"),
])
def test_bad_state_json_one_clear_error(text, exc, msg):
    """Regression: SetValuedState.from_json("{}") raised "__init__() missing 2 required positional arguments"."""
    with pytest.raises(exc, match=msg):
        SetValuedState.from_json(text)


def test_a_state_built_with_a_string_stage_is_refused_when_built():
    """Regression: a stage given as "1" failed later with "'>=' not supported between instances of 'str' and
    'int'" (in payload)."""
    with pytest.raises(TypeError, match="state stage must be an integer; got str '1'"):
        SetValuedState("svim", SVIM4.params, stage="1")
    with pytest.raises(TypeError, match="payload ell must be an integer; got str '2'"):
        svim_payload(2, ell="2")


@pytest.mark.parametrize("make,exc,msg", [
    # the size payload of a collection with no candidates (was: "k must be in [2, 16777216]; got 1")
    (lambda: svim_payload(1, candidates=()), ValueError, "payload of phase 'size': candidates is empty"),
    # candidates wider than item_bits (16)
    (lambda: svim_payload(1, candidates=(7, 1 << 20)), ValueError,
     r"candidates must be words below 2\*\*item_bits = 2\*\*16; 1 are not, first at index 1 \(1048576\)"),
    # questionable case, decided: duplicate candidates are refused, never deduplicated
    (lambda: svim_payload(2, candidates=(7, 9, 7)), ValueError,
     r"candidates must be distinct; 1 repeat an earlier one, first at index 2 \(7, first listed at index 0\)"),
    # questionable case, decided: a stage that disagrees with the phase is refused
    (lambda: svim_payload(2, stage=7), ValueError, "payload stage 7 does not match its phase 'estimate', which is stage 2"),
    (lambda: svim_payload(1, stage=2), ValueError, "payload stage 2 does not match its phase 'size', which is stage 1"),
    (lambda: svim_payload(1, phase="bogus"), ValueError, r"payload phase must be one of svim's phases"),
    # ℓ = 0 in an estimate payload (was: ZeroDivisionError), ℓ above the candidates, ℓ in a size payload
    (lambda: svim_payload(2, ell=0), ValueError, r"ell must be in \[1, 3\] .*got 0"),
    (lambda: svim_payload(2, ell=4), ValueError, r"ell must be in \[1, 3\] .*got 4"),
    (lambda: svim_payload(1, ell=2), ValueError, "ell must be 0 until the size phase sets it; got 2"),
    (lambda: svim_payload(0, candidates=(7,)), ValueError, "carries candidates before the candidates phase"),
    (lambda: svim_payload(2, itemsets=((7, 9),)), ValueError, "svim has no itemset phases"),
    (lambda: Payload("svim", 1, "size", ldp.SVIM(2.0).params, (7,)), ValueError, "does not belong"),
])
def test_bad_svim_payload_one_clear_error_nothing_drawn(make, exc, msg, no_draws):
    payload = make()
    gen = np.random.default_rng(5)
    before = gen.bit_generator.state
    with pytest.raises(exc, match=msg):
        SVIM4.privatize(payload, [{7, 9}, {11}, set()], rng=gen)
    with pytest.raises(exc, match=msg):
        SVIM4.mechanism(payload)
    assert unchanged(gen, before)


@pytest.mark.parametrize("make,exc,msg", [
    # an itemset naming a non-candidate (was: KeyError: 3)
    (lambda: svsm_payload(3, itemsets=((7, 3),)), ValueError,
     r"itemsets\[0\] names item word 3, which is not a candidate"),
    (lambda: svsm_payload(4, itemsets=((7, 9), (9, 7))), ValueError, "itemsets must be distinct; itemset 1 repeats"),
    (lambda: svsm_payload(3, itemsets=((7,),)), ValueError, r"itemsets\[0\] must hold at least two distinct items"),
    (lambda: svsm_payload(3, itemsets=((7, 7),)), ValueError, r"itemsets\[0\] must hold at least two distinct items"),
    (lambda: svsm_payload(3, itemsets=()), ValueError, "itemsets is empty"),
    (lambda: svsm_payload(4, ell=0), ValueError, r"itemset ell must be in \[1, 2\]"),
    (lambda: svsm_payload(3, ell=1), ValueError, "itemset ell must be 0 until the itemset size phase sets it"),
])
def test_bad_svsm_payload_one_clear_error_nothing_drawn(make, exc, msg, no_draws):
    payload = make()
    gen = np.random.default_rng(5)
    before = gen.bit_generator.state
    with pytest.raises(exc, match=msg):
        SVSM4.privatize(payload, [{7, 9}, {11}, set()], rng=gen)
    assert unchanged(gen, before)


def test_good_hand_built_payloads_are_accepted():
    """The payloads above before they were spoiled: accepted, and the same as the ones payload(state) builds."""
    for stage in range(3):
        assert len(SVIM4.privatize(svim_payload(stage), [{7, 9}, {11}, set()], rng=0)) == 3
    for stage in (3, 4):
        assert len(SVSM4.privatize(svsm_payload(stage), [{7, 9}, {11}, set()], rng=0)) == 3
    state = SetValuedState("svim", SVIM4.params, stage=2, candidates=(7, 9, 11), ell=2, n_per_phase=(5, 1))
    assert SVIM4.payload(state) == svim_payload(2)
    assert Payload.from_json(svim_payload(2).to_json()) == svim_payload(2)


@pytest.mark.parametrize("fields,exc,msg", [
    ({"stage": 4, "n_per_phase": (1, 1, 1, 1)}, ValueError, r"state stage must be in \[0, 3\] .*got 4"),
    ({"stage": 2, "candidates": (7, 9), "ell": 1}, ValueError, "state stage 2 says 2 phase.* n_per_phase lists 0"),
    ({"stage": 1, "n_per_phase": (4,)}, ValueError, "state candidates is empty"),
    ({"stage": 2, "n_per_phase": (4, 4), "candidates": (7, 9, 9), "ell": 1}, ValueError,
     "candidates must be distinct"),
    ({"stage": 2, "n_per_phase": (4, 4), "candidates": (7, 9), "ell": 0}, ValueError,
     r"state ell must be in \[1, 2\]"),
    ({"stage": 0, "ell": 3}, ValueError, "state ell must be 0 until the size phase"),
    ({"stage": 1, "n_per_phase": (4,), "candidates": (7,), "shuffles": (None, None)}, ValueError,
     r"2 shuffle declaration\(s\) for 1 collected"),
])
def test_inconsistent_state_refused_before_the_next_phase(fields, exc, msg, no_draws):
    state = SetValuedState("svim", SVIM4.params, **fields)
    with pytest.raises(exc, match=msg):
        SVIM4.payload(state)


# -- small and extreme cases: refused before the first phase draws, or working -----------------------------------

@pytest.mark.parametrize("cls", [ldp.SVIM, ldp.SVSM])
def test_too_few_people_refused_before_any_draw(cls, no_draws):
    """Regression: SVIM.run and SVSM.run on 10 people failed after the candidates phase was drawn ("10 group(s)
    of reports are empty"). Now refused first, the Generator untouched."""
    sv = cls(4.0, top_k=2)
    gen = np.random.default_rng(1)
    before = gen.bit_generator.state
    with pytest.raises(ValueError, match=rf"{cls.__name__}.run needs at least {sv.min_people} people .*got 10 sets"):
        sv.run([{"a", "b"}] * 10, rng=gen)
    assert unchanged(gen, before)


def test_min_people_bounds_the_chance_of_an_empty_phase_or_group():
    """min_people is the smallest n whose union bound on an empty phase or PEM group is <= 1e-9 (recomputed here
    from the phase probabilities and PEM's groups); the defaults give 692 (SVIM) and 1395 (SVSM)."""
    import math

    for sv in (ldp.SVIM(4.0), ldp.SVSM(4.0), ldp.SVIM(4.0, domain=["a", "b"])):
        probs = [float(p) for p in sv.phase_probabilities()]
        if sv.params["domain"] is None:
            groups = sv.mechanism(sv.payload(sv.start())).groups
            cells = probs[1:] + [probs[0] / groups] * groups
        else:
            cells = probs

        def bound(n, cells=cells):
            return sum((1 - p) ** n for p in cells)

        n = sv.min_people
        assert bound(n) <= 1e-9 * (1 + 1e-6) and bound(n - 1) > 1e-9 * (1 - 1e-6), (sv, n)
    assert (ldp.SVIM(4.0).min_people, ldp.SVSM(4.0).min_people) == (692, 1395)
    assert math.isclose(ldp.SVIM(4.0, domain=["a", "b"]).min_people, 197, abs_tol=0)


@pytest.mark.parametrize("cls", [ldp.SVIM, ldp.SVSM])
def test_runs_at_min_people_finish(cls):
    """At exactly min_people people, every seed tried finishes (measured: 144 runs per protocol over ε 0.5/4/20,
    PEM or a domain, one shared item, empty sets, mixed and all-distinct items; none failed)."""
    sv = cls(4.0, top_k=2)
    sets = [{"a", "b"} if i % 2 else {"c"} for i in range(sv.min_people)]
    for seed in range(3):
        est = sv.run(sets, rng=seed)
        assert sum(est.provenance["n_per_phase"]) == sv.min_people


def test_svsm_needs_two_items_refused_when_built():
    """Regression: SVSM(top_k=1).run failed after the three item phases were drawn ("fewer than two frequent
    items: no candidate itemsets"); a one-item domain likewise."""
    with pytest.raises(ValueError, match=r"SVSM needs top_k >= 2 .*got top_k=1.*use SVIM\(top_k=1\)"):
        ldp.SVSM(4.0, top_k=1)
    with pytest.raises(ValueError, match="SVSM needs a domain of at least 2 items .*got 1"):
        ldp.SVSM(4.0, top_k=3, domain=["a"])
    assert ldp.SVIM(4.0, top_k=1, domain=["a"]).top_k == 1  # SVIM has no itemsets: fine


@pytest.mark.parametrize("epsilon,msg", [
    (1e-15, (r"epsilon=1e-15 is too small for SVIM: the oracle of its candidates phase \(pem\) supports .* "
             "same probability")),
    (1e-17, (r"SVIM\(epsilon=1e-17, top_k=2\) cannot plan the oracle of its candidates phase: epsilon=1e-17 is "
             "too small")),
    (5e-324, "cannot plan the oracle of its candidates phase"),
])
def test_tiny_epsilon_refused_when_built(epsilon, msg):
    """Regression: at ε = 1e-15 SVIM.run failed after the candidates phase was drawn ("frequencies must be finite"),
    at 1e-17 when it was planned (after the phases were assigned). Now the constructor builds every phase's oracle."""
    with pytest.raises(ValueError, match=msg):
        ldp.SVIM(epsilon, top_k=2)
    with pytest.raises(ValueError, match="too small"):
        ldp.SVIM(epsilon, top_k=2, domain=["a", "b"])


def test_smallest_accepted_epsilon_runs():
    """ε = 2e-15, the smallest accepted: both protocols finish (estimates are noise, with huge standard errors)."""
    for cls in (ldp.SVIM, ldp.SVSM):
        sv = cls(2e-15, top_k=2)
        est = sv.run([{"a", "b"}] * sv.min_people, rng=0)
        assert np.all(np.isfinite(est.frequencies)) and np.all(est.standard_errors > 1e6)


def test_padding_sampling_choice_has_no_division_by_zero():
    """Regression: padding_sampling(ε, k, ℓ) divided by (ℓ(e^ε - 1) + 1 - 1)², zero at ℓ = 0 and at tiny ε: a
    ZeroDivisionError instead of a ValueError naming ℓ or ε."""
    from ldpnum.heavy.padding import padding_sampling, padding_sampling_variances

    with pytest.raises(ValueError, match=r"ell must lie in \[1, "):
        padding_sampling(4.0, 3, 0)
    with pytest.raises(ValueError, match=r"ell must lie in \[1, "):
        padding_sampling_variances(4.0, 3, 0)
    with pytest.raises(ValueError, match="epsilon=1e-17 is too small for padding-and-sampling over 4 values"):
        padding_sampling(1e-17, 3, 1)
    grr, olh = padding_sampling_variances(1e-17, 3, 1)
    assert grr == pytest.approx(3 / 1e-34) and olh == pytest.approx(4 / 1e-34)
    assert padding_sampling_variances(1e-200, 3, 1) == (np.inf, np.inf)


@pytest.mark.parametrize("domain,kwargs,msg", [
    (["international"], {}, (r"domain: 1 item\(s\) do not fit in item_bits=64 bits \(8 bytes of UTF-8\), first "
                              r"at index 0 \('international', 13 bytes\).*short code.*item_type='uint'.*domain=None")),
    (["ab", "abcdefgh"], {"item_bits": 16}, r"first at index 1 \('abcdefgh', 8 bytes\).*raise item_bits to 64"),
    ([b"0123456789"], {"item_type": "bytes"}, r"\(8 bytes\), first at index 0"),
])
def test_domain_items_too_long_say_what_is_possible(domain, kwargs, msg, no_draws):
    """Regression: the refusal advised "raise item_bits or pass truncate=True", neither possible (item_bits is at
    most 64; the constructor has no truncate)."""
    with pytest.raises(ValueError, match=msg) as info:
        ldp.SVIM(4.0, domain=domain, **kwargs)
    assert "truncate=True" not in str(info.value)


def test_sets_encoded_for_another_width_or_type_are_refused():
    """Words of 64 bits given to a 16-bit protocol never match a candidate: their holders would silently count as
    holding nothing. Refused, naming the first person, nothing drawn."""
    gen = np.random.default_rng(3)
    before = gen.bit_generator.state
    wide = encode_sets([[1], [2, 70_000]], 64, item_type="uint")
    with pytest.raises(ValueError, match=r"more than item_bits=16 bits: 1 word\(s\) are wider, first in the set at "
                                         "index 1"):
        SVIM4.privatize(svim_payload(1), wide, rng=gen)
    with pytest.raises(TypeError, match="encoded as str items but the protocol was built for uint items"):
        SVIM4.privatize(svim_payload(1), encode_sets([["a"]], 16), rng=gen)
    assert unchanged(gen, before)
    assert len(SVIM4.privatize(svim_payload(1), encode_sets([[7], [9, 11]], 16, item_type="uint"), rng=0)) == 2


def test_a_lone_surrogate_names_the_set(no_draws):
    """Regression: a str item with a lone surrogate (no UTF-8 encoding) made encode_sets re-raise the codec's
    UnicodeEncodeError with one argument: "TypeError: function takes exactly 5 arguments (1 given)"."""
    sets = [{"a"}, {"b", "x\ud800"}, {"\udfff"}] * 300
    with pytest.raises(ValueError, match=r"must be valid Unicode text: 600 str item\(s\) have no UTF-8 form, "
                                         r"first in the set at index 1 \('x\\ud800': a lone surrogate"):
        ldp.SVIM(4.0, top_k=2).run(sets, rng=0)


def test_item_kind_errors_name_the_set_not_the_flattened_position(no_draws):
    with pytest.raises(TypeError, match="the item of the set at index 2 is list"):
        encode_sets([["a"], [], [["b"]]], 64)
