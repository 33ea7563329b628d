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
    base = {0: dict(candidates=(), ell=0), 1: dict(candidates=(7, 9, 11), ell=0),
            2: dict(candidates=(7, 9, 11), ell=2)}[at]
    kw = {**base, **fields}
    return Payload("svim", kw.pop("stage", at), kw.pop("phase", SVIM4.phases[at]), SVIM4.params, **kw)


def svsm_payload(stage, **fields):
    base = dict(candidates=(7, 9, 11), itemsets=((7, 9), (9, 11)), ell=0 if stage == 3 else 2)
    kw = {**base, **fields}
    return Payload("svsm", stage, SVSM4.phases[stage], SVSM4.params, **kw)


@pytest.mark.parametrize("text,exc,msg", [
    ("{}", ValueError, r"payload JSON lacks the required field\(s\) \['protocol', 'stage', 'phase', 'params'\]"),
    ("[1, 2]", ValueError, "must be an object"),
    ("{not json", ValueError, "payload is not valid JSON"),
    (7, TypeError, "payload JSON must be str or bytes; got int"),
    ('{"protocol": "svim", "stage": "1", "phase": "size", "params": {}}', TypeError,
     "payload stage must be an int; got str '1'"),
    ('{"protocol": "svim", "stage": 1, "phase": "size", "params": {}, "candidates": [1180591620717411303424]}',
     ValueError, r"payload candidates must be item words in \[0, 2\*\*64\); 1 are not, first at index 0 "
                 r"\(1180591620717411303424\)"),
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
    ('{"protocol": "svim", "stage": -1, "phase": "size", "params": {}}', ValueError, "payload stage must be an int >= 0"),
])
def test_bad_payload_json_one_clear_error(text, exc, msg):
    """Regression: Payload.from_json("{}") raised KeyError: 'protocol'; a candidate of 2**70 'Python int too large
    to convert to C long', of -1 'out of bounds for uint64' (at privatize); a stage "1" was silently made 1."""
    with pytest.raises(exc, match=msg):
        Payload.from_json(text)


@pytest.mark.parametrize("text,exc,msg", [
    ("{}", ValueError, r"state JSON lacks the required field\(s\) \['protocol', 'params'\]"),
    ('{"params": {}}', ValueError, r"lacks the required field\(s\) \['protocol'\]"),
    ('{"protocol": "svim", "params": {}, "stage": "1"}', TypeError, "state stage must be an int; got str '1'"),
    ('{"protocol": "svim", "params": {}, "ell": 1.5}', TypeError, "state ell must be an int; got float 1.5"),
    ('{"protocol": "svim", "params": {}, "candidates": [-3]}', ValueError, "state candidates must be item words"),
    ('{"protocol": "svim", "params": {}, "n_per_phase": [0]}', ValueError, r"state n_per_phase\[0\] must be an int >= 1"),
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
    with pytest.raises(TypeError, match="state stage must be an int; got str '1'"):
        SetValuedState("svim", SVIM4.params, stage="1")
    with pytest.raises(TypeError, match="payload ell must be an int; got str '2'"):
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
    (dict(stage=4, n_per_phase=(1, 1, 1, 1)), ValueError, r"state stage must be in \[0, 3\] .*got 4"),
    (dict(stage=2, candidates=(7, 9), ell=1), ValueError, "state stage 2 says 2 phase.* n_per_phase lists 0"),
    (dict(stage=1, n_per_phase=(4,)), ValueError, "state candidates is empty"),
    (dict(stage=2, n_per_phase=(4, 4), candidates=(7, 9, 9), ell=1), ValueError, "candidates must be distinct"),
    (dict(stage=2, n_per_phase=(4, 4), candidates=(7, 9), ell=0), ValueError, r"state ell must be in \[1, 2\]"),
    (dict(stage=0, ell=3), ValueError, "state ell must be 0 until the size phase"),
    (dict(stage=1, n_per_phase=(4,), candidates=(7,), shuffles=(None, None)), ValueError,
     r"2 shuffle declaration\(s\) for 1 collected"),
])
def test_inconsistent_state_refused_before_the_next_phase(fields, exc, msg, no_draws):
    state = SetValuedState("svim", SVIM4.params, **fields)
    with pytest.raises(exc, match=msg):
        SVIM4.payload(state)
