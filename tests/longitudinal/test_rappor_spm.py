"""RAPPOR with segments: the segment pair reports and the Segment Pair Method (Fanti, Pihur, Erlingsson).

Exact ε of the two reports (tight, with planted bugs the checks reject), the reports' bits against the exact plans
for each person's cohort and position pair, discovery of planted items at a fixed seed with no false item, and bad
input refused before anything is drawn."""

import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum.longitudinal.rappor import BLOOM_SKIP, BloomDesign, segment_cliques, segment_values

ALPHA = 1e-6
SMALL = dict(k=8, h=2, cohorts=2, segments=3, segment_bits=2, item_type="uint")  # 6-bit items, 3 position pairs


def filter_state(m, word, cohort):
    """The Bloom filter of ``word`` in ``cohort`` as an int (bit j = bit j)."""
    return sum(1 << int(b) for b in set(m._positions(np.array([word], dtype=np.uint64), np.array([cohort]))[0, 0]))


def person_states(m, item, key):
    """The two filters person ``key`` (ClientKeys of one) reports for ``item``: the item's and its segment pair's."""
    c = int(m.person_cohorts(key)[0])
    g = int(m.person_position_pairs(key)[0])
    pair = int(m.pair_words(np.array([item], dtype=np.uint64), np.array([g]))[0])
    return filter_state(m, item, c), filter_state(m, pair, g * m.cohorts + c)


def max_ratio(d1, d2):
    """Exact largest ratio P[y | 1] / P[y | 2] of two distributions over the same outputs (all positive)."""
    return max(d1[y] / d2[y] for y in d1)


@functools.lru_cache(maxsize=None)
def bit_ratio(plan, state1, state2, layer="report"):
    """Exact largest likelihood ratio of one filter's report between two filters: the bits are independent given
    the filter, so it is the product over bits of the larger of the ratios of a 1 and of a 0."""
    out = Fraction(1)
    for a, b in zip(plan.bit_probabilities(state1, layer), plan.bit_probabilities(state2, layer)):
        out *= max(a / b, (1 - a) / (1 - b))
    return out


def report_ratio(m, states1, states2, pair_layer="report"):
    """Exact largest likelihood ratio of a person's whole report (both filters) between two pairs of filters: the
    two reports are independent given the item, so it is the product of theirs."""
    return bit_ratio(m.plan, states1[0], states2[0]) * bit_ratio(m.pair_plan, states1[1], states2[1], pair_layer)


def test_epsilons_are_the_two_reports_composed_and_tight():
    m = ldp.RAPPOR(**SMALL)
    h, f, p, q = 2, Fraction(1, 2), Fraction(1, 2), Fraction(3, 4)
    qs, ps = f / 2 * (p + q) + (1 - f) * q, f / 2 * (p + q) + (1 - f) * p
    e1 = Fraction(qs * (1 - ps), ps * (1 - qs)) ** h
    einf = ((1 - f / 2) / (f / 2)) ** (2 * h)
    # the stated ε: twice RAPPOR's (two reports of one item), equal to the plans' exact values
    assert m.realized_epsilons() == pytest.approx((m.epsilon, m.epsilon_permanent), rel=1e-15)
    assert m.epsilon == pytest.approx(2 * math.log(e1), rel=1e-15)
    assert m.epsilon_permanent == pytest.approx(2 * math.log(einf), rel=1e-15)
    assert m.epsilon == pytest.approx(2 * ldp.RAPPOR(k=8, h=2, cohorts=2, item_type="uint", item_bits=6).epsilon)
    # over every pair of the 64 items of one person: at most e^ε1 (ε∞ for the permanent layers), reached exactly
    key = ldp.ClientKeys.generate(1, rng=3)
    states = sorted({person_states(m, x, key) for x in range(64)})
    worst = max(report_ratio(m, a, b) for a in states for b in states)
    worst_perm = max(bit_ratio(m.plan, a[0], b[0], "permanent") * bit_ratio(m.pair_plan, a[1], b[1], "permanent")
                     for a in states for b in states)
    assert worst == e1 * e1 and worst_perm == einf * einf
    # the bitwise product is the enumeration of the 2**k outputs, checked on a pair reaching the bound
    a, b = next((a, b) for a in states for b in states if report_ratio(m, a, b) == worst)
    enum = [max(d1[y] / d2[y] for y in d1) for d1, d2 in
            ((m.plan.exact_probabilities(a[0]), m.plan.exact_probabilities(b[0])),
             (m.pair_plan.exact_probabilities(a[1]), m.pair_plan.exact_probabilities(b[1])))]
    assert enum[0] * enum[1] == worst


def test_epsilon_check_rejects_a_pair_report_without_its_instantaneous_layer():
    m = ldp.RAPPOR(**SMALL)
    key = ldp.ClientKeys.generate(1, rng=3)
    states = sorted({person_states(m, x, key) for x in range(64)})
    worst = max(report_ratio(m, a, b, pair_layer="permanent") for a in states for b in states)
    assert math.log(worst) > m.epsilon + 0.5


def test_reported_bits_follow_the_plans_for_each_persons_cohort_and_position_pair():
    m = ldp.RAPPOR(k=16, h=2, cohorts=4, segments=4, segment_bits=2, item_type="uint")
    n, item = 6_000, 0b10_01_11_00
    keys = ldp.ClientKeys.generate(n, rng=5)
    reports = m.privatize(np.full(n, item), keys=keys, rng=6)
    rf = m.plan.row_bytes
    bits = np.unpackbits(reports.codes, axis=1, bitorder="little")
    full, pair = bits[:, :16], bits[:, 8 * rf:8 * rf + 16]
    cohorts, g = m.person_cohorts(keys), m.person_position_pairs(keys)
    assert np.array_equal(reports.codes[:, rf - 1], cohorts) and np.array_equal(reports.codes[:, -1],
                                                                                g * m.cohorts + cohorts)
    qs, ps = m.support_probabilities

    def p_value(observed, cohort_ids, words):  # chi-square over the k bits: reported ones vs the exact plan's
        uniq = np.unique(words)
        pos = m._positions(uniq, np.arange(m.pair_plan.cohorts))
        prob = np.full(observed.shape, ps)
        rows = np.repeat(np.arange(n), m.h)
        prob[rows, pos[np.searchsorted(uniq, words), cohort_ids].ravel()] = qs
        e, v = prob.sum(axis=0), (prob * (1 - prob)).sum(axis=0)
        return stats.chi2.sf((((observed.sum(axis=0) - e) ** 2) / v).sum(), m.k)

    assert p_value(full, cohorts, np.full(n, item, dtype=np.uint64)) > ALPHA
    pair_words = m.pair_words(np.full(n, item, dtype=np.uint64), g)
    assert p_value(pair, g * m.cohorts + cohorts, pair_words) > ALPHA
    assert sorted(set(pair_words.tolist())) == sorted({(a << 2) | b for a, b in
                                                       [(2, 1), (2, 3), (2, 0), (1, 3), (1, 0), (3, 0)]})
    # negative control: the same check with the position pair left out of the pair cohort rejects the reports
    assert p_value(pair, cohorts, pair_words) < ALPHA


def test_the_two_reports_permanent_noise_is_independent():
    """Both filters' permanent noise is keyed on the same item: it must come from different words (the same noise on
    both would let the collector cancel it by combining the two reports)."""
    m = ldp.RAPPOR(k=8, h=1, cohorts=1, segments=2, segment_bits=4, item_type="uint")
    n = 4_000
    keys = ldp.ClientKeys.generate(n, rng=8)
    perm = m.permanent(np.full(n, 0x3C), keys=keys)
    b_full = filter_state(m, 0x3C, 0)
    b_pair = filter_state(m, 0x3C, 0)  # one position pair: the pair item is the item; cohort 0 both
    noise_full, noise_pair = perm[:, 0] ^ b_full, perm[:, m.plan.row_bytes] ^ b_pair

    def agreement_z(a, b):  # P[bit equal] = (f/2)² + (1-f/2)² = 5/8 for independent noise
        eq = np.unpackbits((~(a ^ b)).astype(np.uint8)[:, None], axis=1).sum()
        total, p0 = 8 * a.size, 5 / 8
        return (eq - total * p0) / math.sqrt(total * p0 * (1 - p0))

    assert abs(agreement_z(noise_full, noise_pair)) < 5
    assert agreement_z(noise_full, noise_full) > 5  # planted bug: shared words


PLANTED = {"hi": 0.30, "ok": 0.22, "no": 0.16}


def planted_strings(n, rng):
    share = np.array(list(PLANTED.values()))
    pick = rng.choice(len(share) + 1, size=n, p=[*share, 1 - share.sum()])
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    other = np.char.add(letters[rng.integers(0, 26, n)], letters[rng.integers(0, 26, n)])
    names = np.array(list(PLANTED) + [""], dtype=object)
    return np.where(pick < len(share), names[pick], other.astype(object))


def test_discover_finds_the_planted_strings_and_no_other():
    m = ldp.RAPPOR(k=32, h=2, cohorts=8, segments=4, segment_bits=4)  # 2-byte strings cut into 4-bit segments
    n = 100_000
    items = planted_strings(n, np.random.default_rng(30))
    agg = m.aggregate(m.privatize(items, keys=ldp.ClientKeys.generate(n, rng=31), rng=32))
    est = m.estimate_frequencies(agg)
    assert set(est.detected_items) == set(PLANTED)
    frame = est.to_frame().set_index("item")
    for item in PLANTED:
        assert abs(frame.loc[item, "frequency"] - np.mean(items == item)) < 4 * frame.loc[item, "standard_error"]
    prov = est.provenance
    assert prov["method"] == "segment-pairs" and prov["pairs_tested"] == 6 * 256
    assert prov["pair_z_threshold"] == pytest.approx(stats.norm.isf(0.05 / (6 * 256)))
    assert prov["candidates"] >= 3 and prov["z_threshold"] == pytest.approx(stats.norm.isf(0.05 / prov["candidates"]))
    assert est == m.discover(agg) and est.epsilon == m.epsilon


BYTE_ITEMS = {b"LDP!": 0.30, b"rapp": 0.20, b"byte": 0.15}


@pytest.mark.slow
def test_discover_finds_planted_byte_strings_with_8_bit_segments():
    """One segment per byte (Fanti, Pihur, Erlingsson's cut of strings): 2**16 segment pairs decoded per position
    pair. 40,000 people (6,667 per position pair), 3 planted 4-byte items, the rest uniform random 4-byte items."""
    m = ldp.RAPPOR(k=64, h=1, cohorts=8, f=0.25, p=1 / 16, q=15 / 16, segments=4, segment_bits=8,
                   item_type="bytes")
    n, rng = 40_000, np.random.default_rng(3)
    counts = [int(s * n) for s in BYTE_ITEMS.values()]
    items = np.empty(n, dtype=object)
    items[:] = ([v for v, c in zip(BYTE_ITEMS, counts) for _ in range(c)]
                + [bytes(rng.integers(1, 256, 4, dtype=np.uint8)) for _ in range(n - sum(counts))])
    agg = m.aggregate(m.privatize(items, keys=ldp.ClientKeys.generate(n, rng=0), rng=1))
    est = m.discover(agg)
    assert set(est.detected_items) == set(BYTE_ITEMS)
    assert est.provenance["pairs_tested"] == 6 * 2**16
    frame = est.to_frame().set_index("item")
    for item, share in BYTE_ITEMS.items():
        assert abs(frame.loc[item, "frequency"] - share) < 4 * frame.loc[item, "standard_error"]


def test_bloom_design_matches_the_sparse_matrix():
    """BloomDesign's X g, X' r, column norms and columns against the scipy.sparse matrix built from the same bits
    (a bit two hashes set counted once); negative control: without the SKIP marks the norms are wrong."""
    from scipy import sparse

    m = ldp.RAPPOR(k=8, h=3, cohorts=3, item_type="uint", item_bits=8)
    words, cohorts = np.arange(256, dtype=np.uint64), np.array([0, 2])
    raw = m._positions(words, cohorts)  # (256, 2, 3)
    rows = (np.arange(2)[None, :, None] * 8 + raw).ravel()
    dense = sparse.csc_matrix((np.ones(rows.size), (rows, np.repeat(np.arange(256), 6))), shape=(16, 256))
    dense.sum_duplicates()
    dense.data[:] = 1.0
    dense = dense.toarray()
    pos = m._design_positions(words, cohorts)
    assert (pos == BLOOM_SKIP).any() and np.array_equal(np.where(pos == BLOOM_SKIP, raw, pos), raw)
    w = np.array([0.5, 3.0])
    d = BloomDesign(pos, 8).whitened(w)
    xw = np.repeat(w, 8)[:, None] * dense
    rng = np.random.default_rng(0)
    g = np.where(rng.random(256) < 0.3, rng.random(256), 0.0)
    r = rng.normal(size=16)
    assert np.allclose(d @ g, xw @ g, rtol=1e-13) and np.allclose(d.T @ r, xw.T @ r, rtol=1e-13)
    assert np.allclose(d.column_norms(), np.linalg.norm(xw, axis=0), rtol=1e-13)
    sel = np.array([3, 17, 200])
    assert np.array_equal(d.columns(sel).toarray(), dense[:, sel])
    unmarked = BloomDesign(raw.astype(np.uint16), 8).whitened(w)
    assert not np.allclose(unmarked.column_norms(), np.linalg.norm(xw, axis=0))


def test_discover_without_frequent_items_returns_none():
    m = ldp.RAPPOR(k=16, cohorts=2, segments=2, segment_bits=4, item_type="uint")
    n = 3_000
    est = m.discover(m.privatize(np.arange(n) % 256, keys=ldp.ClientKeys.generate(n, rng=40), rng=41))
    assert est.items == () and est.provenance["candidates"] == 0 and est.provenance["detected"] == 0
    assert est.provenance["pairs_detected"] == 0 and len(est.to_frame()) == 0


def test_segment_cliques_are_exactly_the_fully_connected_choices():
    edges = {(0, 1): np.array([[1, 2], [1, 3], [0, 2]]), (0, 2): np.array([[1, 0], [0, 0]]),
             (1, 2): np.array([[2, 0], [3, 1]])}
    words = segment_cliques(3, 2, edges, 10)
    assert sorted(words.tolist()) == [0b00_10_00, 0b01_10_00]  # 1-3 lacks (0,2)=(1,1) and (1,2)=(3,0)
    with pytest.raises(ValueError, match="max_candidates=1"):
        segment_cliques(3, 2, edges, 1)
    assert segment_values(np.array([0b01_10_00], dtype=np.uint64), 3, 2).tolist() == [[1, 2, 0]]


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(segments=4), ValueError, "segments and segment_bits go together"),
    (dict(segments=4, segment_bits=9), ValueError, r"segment_bits must be in \[1, 8\]; got 9"),
    (dict(segments=4.0, segment_bits=4), TypeError, "segments"),
    (dict(segments=3, segment_bits=4), ValueError, "multiple of 8"),
    (dict(segments=4, segment_bits=4, item_bits=64), ValueError, "leave item_bits out"),
    (dict(segments=16, segment_bits=4, cohorts=64), ValueError, "at most 34"),
])
def test_bad_parameters_are_refused(kwargs, err, match):
    with pytest.raises(err, match=match):
        ldp.RAPPOR(**kwargs)


def test_bad_input_is_refused_before_anything_is_drawn():
    m = ldp.RAPPOR(k=32, cohorts=4, segments=4, segment_bits=4)
    keys = ldp.ClientKeys.generate(3, rng=0)
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"longer than item_bits=16.*index 1.*segments=4 of segment_bits=4"):
        m.privatize(["ab", "abc", "a"], keys=keys, rng=rng)
    with pytest.raises(ValueError, match=r"longer than item_bits=16.*index 1"):
        m.privatize(["ab", "abc", "a"], keys=keys, rng=rng, truncate=True)
    with pytest.raises(TypeError, match="uint items"):
        m.privatize([1, 2, 3], keys=keys, rng=rng)
    assert rng.bit_generator.state == state
    u = ldp.RAPPOR(k=32, cohorts=4, segments=2, segment_bits=4, item_type="uint")
    with pytest.raises(ValueError, match="256"):
        u.privatize([1, 256, 3], keys=keys, rng=rng)
    assert rng.bit_generator.state == state
    with pytest.raises(ValueError, match="discover needs a RAPPOR with segments"):
        ldp.RAPPOR().discover(ldp.RAPPOR().empty_aggregate())
    with pytest.raises(ValueError, match="needs reports"):
        m.estimate_frequencies(m.empty_aggregate())


def test_spec_round_trip_aggregate_and_merge():
    m = ldp.RAPPOR(k=16, cohorts=2, segments=4, segment_bits=4, item_type="bytes")
    keys = ldp.ClientKeys.generate(50, rng=0)
    items = [bytes([i % 7, 1]) for i in range(50)]
    r = m.privatize(items, keys=keys, rng=1, round=2)
    assert ldp.from_spec(r.spec) == m.at_round(2)
    assert r.codes.shape == (50, m.bytes_per_report) and m.bytes_per_report == 2 * 3
    agg = m.aggregate(r)
    assert agg.counts.shape == (m.n_cells,) and m.n_cells == (2 + 6 * 2) * 17
    halves = m.aggregate(r[:20]) + m.aggregate(r[20:])
    assert np.array_equal(halves.counts, agg.counts)
    bad = agg.counts.copy()
    bad[3 * 17 + 1] = 51  # a segment pair cohort's bit count above the reports
    with pytest.raises(ValueError, match="exceeds"):
        ldp.Aggregate(bad, agg.spec, 50)


def test_ledger_charges_both_reports_per_distinct_item():
    # the memoized value is the item, whose two reports together are ε∞-LDP (twice RAPPOR's): a person whose item
    # never changes spends at most that ε∞, and min(ε∞, reports × ε1) for each further item
    m = ldp.RAPPOR(k=16, cohorts=2, segments=2, segment_bits=4)
    keys = ldp.ClientKeys.generate(2, rng=0)
    ledger = ldp.PrivacyLedger()
    for r, items in enumerate((["a", "b"], ["a", "c"]) * 6):
        ledger.record_longitudinal(m, people=np.arange(2), fingerprints=m.memo_fingerprints(items, keys=keys), round=r)
    e1, e_inf = m.epsilon_report, m.epsilon_permanent
    assert e_inf == pytest.approx(2 * ldp.RAPPOR(k=16, cohorts=2, item_bits=8).epsilon_permanent)
    assert np.allclose(np.asarray(ledger.totals(), dtype=float), [min(e_inf, 12 * e1), 2 * min(e_inf, 6 * e1)])
