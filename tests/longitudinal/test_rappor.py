"""RAPPOR (ldpnum/longitudinal/rappor.py): exact ε1 and ε∞ against the paper's formulas, the kernels against a naive
reference, memoization, the bits' distribution, the per-cohort aggregate, and the candidate decoder (planted
items recovered at the stated significance, no false positives beyond alpha, unbiased with calibrated standard
errors). The common longitudinal checks run on it too (tests/longitudinal/test_longitudinal.py, LCASES)."""

import math
import pickle
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
import naive
from ldpnum._random import resolve_rng
from ldpnum.longitudinal.memo import Longitudinal, _extreme_ratio
from ldpnum.longitudinal.rappor import BLOOM_KEY, RapporPlan, cohort_counts

ALPHA = 1e-6
BLOOM_KEY_BYTES = int(BLOOM_KEY[0]).to_bytes(8, "little") + int(BLOOM_KEY[1]).to_bytes(8, "little")


def paper_epsilons(h, f, p, q):
    """The paper's ε1 and ε∞ (Erlingsson, Pihur, Korolova, section 3)."""
    qs = 0.5 * f * (p + q) + (1 - f) * q
    ps = 0.5 * f * (p + q) + (1 - f) * p
    return h * math.log(qs * (1 - ps) / (ps * (1 - qs))), 2 * h * math.log((1 - f / 2) / (f / 2))


# -- privacy ---------------------------------------------------------------------------------------------------

def test_epsilons_at_the_papers_parameters():
    m = ldp.RAPPOR()
    eps1, eps_inf = paper_epsilons(2, 0.5, 0.5, 0.75)
    assert m.epsilon_permanent == pytest.approx(eps_inf, rel=1e-12) and round(m.epsilon_permanent, 2) == 4.39
    assert m.epsilon_report == m.epsilon == pytest.approx(eps1, rel=1e-12)
    assert m.realized_epsilons() == (m.epsilon_report, m.epsilon_permanent)
    assert m.spec.epsilon == m.epsilon and ldp.from_spec(m.spec) == m


@pytest.mark.parametrize("h, f, p, q, lanes", [(2, 0.5, 0.5, 0.75, 8), (1, 0.25, 0.25, 0.875, 8),
                                               (4, 0.75, 0.25, 0.5, 8), (2, 2000 / 2**16, 0.5, 0.75, 16),
                                               (3, 0.3, 0.1, 0.8, 32), (2, 0.5, 0.0, 1.0, 32)])
def test_epsilons_are_the_formulas_at_the_realized_parameters(h, f, p, q, lanes):
    if (p, q) == (0.0, 1.0):  # no instantaneous layer: one report leaks what all do
        with pytest.raises(ValueError, match="epsilon_report must be below epsilon_permanent"):
            ldp.RAPPOR(k=16, h=h, f=f, p=p, q=q)
        return
    m = ldp.RAPPOR(k=16, h=h, f=f, p=p, q=q)
    plan = m.plan
    assert plan.lane_bits == lanes
    eps1, eps_inf = paper_epsilons(h, float(plan.f), float(plan.p), float(plan.q))
    assert m.epsilon_report == pytest.approx(eps1, rel=1e-12)
    assert m.epsilon_permanent == pytest.approx(eps_inf, rel=1e-12)
    if lanes < 32:  # on the grid: the realized parameters are the given ones
        assert (plan.f, plan.p, plan.q) == (Fraction(f), Fraction(p), Fraction(q))
    else:
        assert abs(float(plan.f) - f) <= 2**-32 and abs(float(plan.q) - q) <= 2**-32


@pytest.mark.parametrize("h, f, p, q", [(1, 0.5, 0.5, 0.75), (2, 0.3, 0.1, 0.8)])
def test_structural_epsilons_equal_the_enumeration_over_every_filter(h, f, p, q):
    # Exact and tight: the largest ratio over every pair of Bloom filters (1..h bits of 8) and every output,
    # enumerated in Fractions, is the structural value; the factorized plan equals the composition of the layers.
    m = ldp.RAPPOR(k=8, h=h, cohorts=1, f=f, p=p, q=q)
    states = m.memo_states()
    assert len(states) == sum(math.comb(8, j) for j in range(1, h + 1))
    for s in states[:1] + states[-1:]:
        assert m.report_probabilities(s) == Longitudinal.report_probabilities(m, s)
    eps1 = math.log(float(_extreme_ratio([m.report_probabilities(s) for s in states])))
    eps_inf = math.log(float(_extreme_ratio([m.permanent_probabilities(s) for s in states])))
    assert (eps1, eps_inf) == pytest.approx(m.realized_epsilons(), rel=1e-12)
    assert (eps1, eps_inf) == pytest.approx(paper_epsilons(h, float(m.plan.f), float(m.plan.p), float(m.plan.q)),
                                            rel=1e-12)


def test_epsilon_check_rejects_a_planted_bug(monkeypatch):
    # Negative control: a permanent layer that keeps a set bit a little more often than 1 - f/2 leaks more than
    # the stated ε∞, and a report whose instantaneous q is raised leaks more than ε1; the exact check sees both.
    m = ldp.RAPPOR(k=8, h=2, cohorts=1)
    one = m.plan.permanent_one
    monkeypatch.setattr(RapporPlan, "permanent_one", property(lambda self: (one[0] + Fraction(1, 256), one[1])))
    eps1, eps_inf = m.realized_epsilons()
    assert eps_inf > m.epsilon_permanent * (1 + 1e-3) and eps1 > m.epsilon_report
    monkeypatch.undo()
    monkeypatch.setattr(RapporPlan, "q", property(lambda self: Fraction(self.t_q + 16, 256)))
    assert m.realized_epsilons()[0] > m.epsilon_report * (1 + 1e-3)


# -- the client against the naive reference --------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(k=16, h=3, cohorts=5), dict(k=24, h=2, cohorts=300, f=2000 / 2**16),
                                dict(k=16, h=2, cohorts=3, f=0.3, p=0.1, q=0.8)])
def test_reports_match_the_naive_reference(kw):
    m = ldp.RAPPOR(**kw)
    plan = m.plan
    items = [f"w{i % 37}" for i in range(120)]
    keys = ldp.ClientKeys.generate(120, rng=5)
    got = m.privatize(items, keys=keys, rng=6, round=2)
    words = m.prepare_values(items)
    fresh = resolve_rng(6).draw(120 * m.instantaneous_words)
    want = naive.rappor_reports(words, keys.to_bytes(), m.tweak, m.cohort_tweak, BLOOM_KEY_BYTES, plan.k, plan.h,
                                plan.cohorts, plan.lane_bits, plan.t_f, plan.t_p, plan.t_q, fresh)
    assert got.codes.shape == want.shape and np.array_equal(got.codes, want)
    assert m.bloom_bits(["w3"], [1]).ravel().tolist() == naive.rappor_bloom(BLOOM_KEY_BYTES, 1, words[3], plan.h,
                                                                             plan.k)


def test_naive_reference_planted_bug_is_caught():
    # Negative control: the reference with p and q swapped gives other reports.
    m = ldp.RAPPOR(k=16, h=2, cohorts=4)
    plan = m.plan
    items = [f"w{i}" for i in range(50)]
    keys = ldp.ClientKeys.generate(50, rng=1)
    got = m.privatize(items, keys=keys, rng=2)
    fresh = resolve_rng(2).draw(50 * m.instantaneous_words)
    bad = naive.rappor_reports(m.prepare_values(items), keys.to_bytes(), m.tweak, m.cohort_tweak, BLOOM_KEY_BYTES,
                               plan.k, plan.h, plan.cohorts, plan.lane_bits, plan.t_f, plan.t_q, plan.t_p, fresh)
    assert not np.array_equal(got.codes, bad)


# -- memoization -----------------------------------------------------------------------------------------------

def test_same_key_and_item_give_the_same_permanent_bits_across_calls_and_rounds():
    m = ldp.RAPPOR(k=32, h=2, cohorts=8)
    keys = ldp.ClientKeys.generate(1000, rng=1)
    items = np.array([f"i{j % 13}" for j in range(1000)], dtype=object)
    perm = m.permanent(items, keys=keys)
    assert np.array_equal(perm, m.permanent(items, keys=keys))
    assert np.array_equal(perm, ldp.RAPPOR(k=32, h=2, cohorts=8, p=0.25, q=0.5).permanent(items, keys=keys))
    r1, r2 = (m.privatize(items, keys=keys, rng=r, round=r) for r in (1, 2))
    assert not np.array_equal(r1.codes, r2.codes)
    assert np.array_equal(r1.codes[:, -1], perm[:, -1]) and np.array_equal(r2.codes[:, -1], perm[:, -1])  # cohorts
    assert np.array_equal(m.person_cohorts(keys), perm[:, -1])


def test_repeated_reports_reveal_the_permanent_bits_not_the_filter():
    # Averaging attack: 600 reports of one person's item converge to B' (bits at q or p), not to the filter B.
    m = ldp.RAPPOR(k=32, h=2, cohorts=4)
    keys = ldp.ClientKeys.generate(1, rng=3)
    perm = np.unpackbits(m.permanent(["secret"], keys=keys)[0, :4], bitorder="little")
    reports = np.array([np.unpackbits(m.privatize(["secret"], keys=keys, rng=r).codes[0, :4], bitorder="little")
                        for r in range(600)])
    assert np.array_equal(reports.mean(axis=0) > (m.p + m.q) / 2, perm.astype(bool))


def test_different_items_and_keys_give_independent_permanent_noise():
    # The permanent noise N = B' XOR B of one person for two items (and of two people for one item) is independent:
    # chi-square of the 2x2 table of one bit's noise; the same item twice is fully dependent (negative control).
    m = ldp.RAPPOR(k=8, h=1, cohorts=1)
    n = 20_000
    keys = ldp.ClientKeys.generate(n, rng=4)

    def noise(item, ks):
        filt = np.bitwise_or.reduce(1 << m.bloom_bits([item])[0, 0])
        return (m.permanent([item] * len(ks), keys=ks)[:, 0] ^ filt) & 1

    a, b = noise("apple", keys), noise("pear", keys)
    other = noise("apple", ldp.ClientKeys.generate(n, rng=5))
    for x, y, independent in ((a, b, True), (a, other, True), (a, noise("apple", keys), False)):
        table = np.array([[np.sum((x == i) & (y == j)) for j in (0, 1)] for i in (0, 1)])
        p = stats.chi2_contingency(table, correction=False).pvalue
        assert (p > ALPHA) if independent else (p < ALPHA)
    assert abs(a.mean() - 0.25) < 5 * math.sqrt(0.25 * 0.75 / n)


# -- the bits' distribution at the paper's parameters ----------------------------------------------------------

def test_reported_bits_follow_q_star_and_p_star_with_uniform_cohorts():
    m = ldp.RAPPOR()
    n = 20_000
    keys = ldp.ClientKeys.generate(n, rng=7)
    items = np.array([f"item{i}" for i in np.random.default_rng(8).integers(0, 50, n)], dtype=object)
    reports = m.privatize(items, keys=keys, rng=9)
    cohort = m.person_cohorts(keys)
    assert np.array_equal(reports.codes[:, -1], cohort)
    assert stats.chisquare(np.bincount(cohort, minlength=64)).pvalue > ALPHA
    bits = np.unpackbits(reports.codes[:, :16], axis=1, bitorder="little").astype(bool)
    positions = m.bloom_bits([f"item{i}" for i in range(50)])  # (50, 64, 2)
    which = np.array([int(v[4:]) for v in items])
    bloom = np.zeros((n, 128), dtype=bool)
    for j in range(2):
        bloom[np.arange(n), positions[which, cohort, j]] = True
    qs, ps = m.support_probabilities
    assert (qs, ps) == (0.6875, 0.5625)
    for mask, prob in ((bloom, qs), (~bloom, ps)):
        ones, total = bits[mask].sum(), mask.sum()
        assert abs(ones - prob * total) < 5 * math.sqrt(total * prob * (1 - prob))


# -- the aggregate ---------------------------------------------------------------------------------------------

def test_aggregate_counts_per_cohort_and_merges():
    m = ldp.RAPPOR(k=16, h=2, cohorts=5)
    keys = ldp.ClientKeys.generate(3000, rng=10)
    items = [f"x{i % 7}" for i in range(3000)]
    r = m.privatize(items, keys=keys, rng=11, round=4)
    agg = m.aggregate(r)
    table = agg.counts.reshape(5, 17)
    bits = np.unpackbits(r.codes[:, :2], axis=1, bitorder="little")
    for j in range(5):
        mine = r.codes[:, -1] == j
        assert table[j, 0] == mine.sum() and np.array_equal(table[j, 1:], bits[mine].sum(axis=0))
    parts = m.aggregate(r[:1000]) + m.aggregate(r[1000:])
    assert parts == agg and agg.n_reports == 3000 and agg.spec.get("round") == 4
    assert m.at_round(4).empty_aggregate() + agg == agg
    assert m.estimate_frequencies(r, candidates=["x1", "x2"]).n_reports == 3000


def test_tampered_aggregates_and_reports_are_refused():
    m = ldp.RAPPOR(k=8, h=1, cohorts=3)
    agg = m.aggregate(m.privatize(["a", "b", "c"] * 20, keys=ldp.ClientKeys.generate(60, rng=1), rng=2))
    counts = agg.counts.copy().reshape(3, 9)
    j = int(np.argmax(counts[:, 0]))
    high = counts.copy()
    high[j, 3] = counts[j, 0] + 1
    with pytest.raises(ValueError, match=f"cohort {j}'s count .* of bit 2 exceeds the cohort's"):
        ldp.Aggregate(high.ravel(), agg.spec, 60)
    with pytest.raises(ValueError, match="n_reports=61 but its cohorts hold 60"):
        ldp.Aggregate(counts.ravel(), agg.spec, 61)
    with pytest.raises(ValueError, match="n_reports is required"):
        ldp.Aggregate(counts.ravel(), agg.spec)
    codes = np.zeros((4, 2), dtype=np.uint8)
    codes[2, 1] = 3  # cohort 3 of 3: fits the cohort's 2 bits, outside 0..2
    with pytest.raises(ValueError, match=r"1 cohort\(s\) outside 0..2, first at index 2 \(3\)"):
        m.aggregate(ldp.Reports(codes, m.spec))
    codes[2, 1] = 4  # beyond the packed bits
    with pytest.raises(ValueError, match="padding bits"):
        ldp.Reports(codes, m.spec)
    assert cohort_counts(np.zeros((0, 2), dtype=np.uint8), 8, 3).sum() == 0


# -- the decoder -----------------------------------------------------------------------------------------------

PLANTED = np.array([0.12, 0.10, 0.09, 0.08, 0.07, 0.06, 0.055, 0.05, 0.045, 0.04])


def planted_population(n, rng):
    """10 planted candidates at :data:`PLANTED`, the rest (29%) spread over 5,000 items that are no candidate."""
    which = rng.choice(11, n, p=np.append(PLANTED, 1 - PLANTED.sum()))
    items = np.array([f"c{i}" for i in range(10)] + [""], dtype=object)[which]
    tail = which == 10
    items[tail] = np.array([f"tail{i}" for i in range(5000)], dtype=object)[rng.integers(0, 5000, tail.sum())]
    return items


def test_decoder_recovers_planted_candidates():
    m = ldp.RAPPOR()
    n = 200_000
    items = planted_population(n, np.random.default_rng(20))
    candidates = [f"c{i}" for i in range(200)]
    agg = m.aggregate(m.privatize(items, keys=ldp.ClientKeys.generate(n, rng=21), rng=22))
    est = m.estimate_frequencies(agg, candidates=candidates)
    assert set(est.detected_items) == set(candidates[:10])
    truth = {c: np.mean(items == c) for c in candidates[:10]}
    frame = est.to_frame()
    for item, f, se in zip(frame["item"], frame["frequency"], frame["standard_error"]):
        if item in truth:
            assert abs(f - truth[item]) < 4 * se
    assert est.provenance["candidates"] == 200 and est.provenance["detected"] == 10
    assert est.provenance["z_threshold"] == pytest.approx(stats.norm.isf(0.05 / 200))
    assert abs(est.provenance["other_share"] - 0.29) < 4 * est.provenance["other_share_standard_error"]
    assert list(frame.columns) == ["item", "frequency", "standard_error", "ci_low", "ci_high", "count", "p_value",
                                   "detected"]
    assert est.epsilon == m.epsilon and est.spec == m.spec and est.n_reports == n


def simulated_aggregate(m, counts_per_cohort_item, candidates_bits, background, rng):
    """An aggregate drawn from the exact model: in cohort j, bit i is reported 1 by Binomial(T_ij, q*) people whose
    filter sets it and Binomial(N_j - T_ij, p*) others (the reports' bits are independent given the filters).
    ``background[j]`` more people of cohort j hold items outside the dictionary, each its own random filter."""
    qs, ps = m.support_probabilities
    n_j = counts_per_cohort_item.sum(axis=1) + background
    table = np.zeros((m.cohorts, m.k + 1), dtype=np.int64)
    table[:, 0] = n_j
    for j in range(m.cohorts):
        set_bits = np.zeros(m.k, dtype=np.int64)
        for item, count in enumerate(counts_per_cohort_item[j]):
            set_bits[np.unique(candidates_bits[item, j])] += count
        filters = np.zeros((background[j], m.k), dtype=bool)
        filters[np.arange(background[j])[:, None], rng.integers(0, m.k, (background[j], m.h))] = True
        set_bits += filters.sum(axis=0)
        table[j, 1:] = rng.binomial(set_bits, qs) + rng.binomial(n_j[j] - set_bits, ps)
    return ldp.Aggregate(table.ravel(), m.spec, int(n_j.sum()))


def test_decoder_has_no_false_positives_beyond_alpha_and_calibrated_errors():
    # 60 collections of 100,000 people: 5 candidates planted, 195 null candidates, 20% of people on items outside
    # the dictionary. The family-wise rate of any null detected stays within alpha (binomial bound at 1e-6), every
    # planted candidate is detected, and the planted estimates' z-scores have mean 0 and sd 1.
    m = ldp.RAPPOR(k=64, h=2, cohorts=16)
    rng = np.random.default_rng(30)
    candidates = [f"c{i}" for i in range(200)]
    bits = m.bloom_bits(candidates)
    planted = np.array([0.3, 0.2, 0.15, 0.1, 0.08])
    n, runs, false_runs, zs = 100_000, 60, 0, []
    for _ in range(runs):
        counts = rng.multinomial(n, np.append(planted, 1 - planted.sum()))
        per_cohort = np.zeros((m.cohorts, 200), dtype=np.int64)
        for item in range(5):
            per_cohort[:, item] = rng.multinomial(counts[item], np.full(m.cohorts, 1 / m.cohorts))
        background = rng.multinomial(counts[5], np.full(m.cohorts, 1 / m.cohorts))
        est = m.estimate_frequencies(simulated_aggregate(m, per_cohort, bits, background, rng), candidates=candidates)
        detected = set(est.detected_items)
        false_runs += bool(detected - set(candidates[:5]))
        assert set(candidates[:5]) <= detected
        for item, f, se in zip(est.items, est.frequencies, est.standard_errors):
            if item in candidates[:5]:
                zs.append((f - counts[candidates.index(item)] / n) / se)
    assert false_runs <= stats.binom.isf(ALPHA, runs, 0.05)
    zs = np.array(zs)
    assert abs(zs.mean()) < 4 / math.sqrt(zs.size) and 0.75 < zs.std() < 1.25


def test_decoder_refuses_bad_candidates_and_alpha():
    m = ldp.RAPPOR(k=16, h=2, cohorts=4)
    agg = m.aggregate(m.privatize(["a", "b"] * 50, keys=ldp.ClientKeys.generate(100, rng=1), rng=2))
    cases = [(dict(candidates=None), TypeError, "candidates"),
             (dict(candidates=[1, 2]), TypeError, "candidates holds uint items but this RAPPOR was built for str"),
             (dict(candidates="abc"), TypeError, "single str"),
             (dict(candidates=[]), ValueError, "candidates is empty"),
             (dict(candidates=["a", "b", "a"]), ValueError, r"first candidate 2 \('a'\) repeats candidate 0"),
             (dict(candidates=["abcdefgh1", "abcdefgh2"]), ValueError, "encodes to the same 64-bit word as"),
             (dict(candidates=["a", None]), ValueError, "missing"),
             (dict(candidates=["a"], alpha=0.0), ValueError, "alpha"),
             (dict(candidates=["a"], alpha=1.5), ValueError, "alpha"),
             (dict(candidates=["a"], alpha="0.05"), TypeError, "alpha")]
    for kwargs, err, match in cases:
        with pytest.raises(err, match=match), warnings.catch_warnings():
            warnings.simplefilter("ignore", ldp.exceptions.TruncationWarning)
            m.estimate_frequencies(agg, **kwargs)
    with pytest.raises(ValueError, match="needs reports"):
        m.estimate_frequencies(m.empty_aggregate(), candidates=["a"])
    with pytest.raises(ldp.exceptions.SpecMismatchError):
        ldp.RAPPOR(k=16, h=2, cohorts=5).estimate_frequencies(agg, candidates=["a"])


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(k=12), ValueError, "k must be a multiple of 8"), (dict(k=0), ValueError, "k must be in"),
    (dict(k=8, h=5), ValueError, "h must be in"), (dict(cohorts=0), ValueError, "cohorts must be in"),
    (dict(f=0.0), ValueError, "f must be"), (dict(f=1.0), ValueError, "f must be"),
    (dict(p=-0.1), ValueError, "p must be"), (dict(q=1.5), ValueError, "q must be"),
    (dict(p=0.75, q=0.5), ValueError, "p must be below q"), (dict(f="0.5"), TypeError, "f must be"),
    (dict(h=8, f=0.01), ValueError, r"epsilon_permanent=.* must be in \(0, 20\]"),
    (dict(item_type="float"), ValueError, "item_type"), (dict(item_type="str", item_bits=12), ValueError, "item_bits"),
    (dict(k=8.0), TypeError, "k must be an integer")])
def test_bad_parameters_are_refused(kwargs, err, match):
    with pytest.raises(err, match=match):
        ldp.RAPPOR(**kwargs)


# -- items, specs, results -------------------------------------------------------------------------------------

def test_integer_and_bytes_items():
    for item_type, items, cands in (("uint", np.arange(400) % 4, [0, 1, 2, 3, 99]),
                                    ("bytes", [b"ab", b"cd"] * 200, [b"ab", b"cd", b"zz"])):
        m = ldp.RAPPOR(k=16, h=2, cohorts=2, item_type=item_type, item_bits=32)
        est = m.estimate_frequencies(m.privatize(items, keys=ldp.ClientKeys.generate(400, rng=1), rng=2),
                                     candidates=cands)
        assert est.item_type == item_type and set(est.items) <= set(cands)
        with pytest.raises(TypeError, match="built for"):
            m.privatize(["text"] * 2, keys=ldp.ClientKeys.generate(2, rng=1), rng=2)
        assert ldp.from_spec(m.spec) == m and repr(m).startswith("RAPPOR(k=16")


def test_spec_names_the_hash_family_and_reports_pickle():
    m = ldp.RAPPOR(k=16, h=2, cohorts=4)
    assert m.spec.get("hash") == "siphash24-bloom-v1" and m.spec.n_cells == 4 * 17
    assert m.spec.get("packed_bits") == 18 and m.bytes_per_report == 3
    bad = ldp.Spec.from_dict({**m.spec.to_dict(), "params": {**dict(m.spec.params), "hash": "md5"}})
    with pytest.raises(ValueError, match="hash family"):
        ldp.from_spec(bad)
    r = m.privatize(["a"] * 5, keys=ldp.ClientKeys.generate(5, rng=1), rng=2, round=1)
    assert pickle.loads(pickle.dumps(r)) == r


def test_result_round_trips_and_shows_detections():
    m = ldp.RAPPOR(k=16, h=2, cohorts=4)
    est = m.estimate_frequencies(m.privatize(["a"] * 300 + ["b"] * 100, keys=ldp.ClientKeys.generate(400, rng=3),
                                             rng=4), candidates=["a", "b", "c"])
    back = pickle.loads(pickle.dumps(est))
    assert back == est and np.array_equal(back.detected, est.detected)
    assert np.array_equal(back.p_values, est.p_values)
    assert "RapporEstimate(selected=" in repr(est)
    with pytest.raises(ValueError, match="detected must hold one bool per item"):
        ldp.RapporEstimate(items=["a"], frequencies=[0.1], standard_errors=[0.1], n_reports=10, epsilon=m.epsilon,
                           spec=m.spec, detected=[1])


def test_ledger_charges_eps_inf_per_distinct_item():
    # The memoized value is the item: a person reporting one item every round spends at most ε∞, one whose item
    # changes spends again for the new item (min(ε∞, reports × ε1) per item).
    m = ldp.RAPPOR()
    keys = ldp.ClientKeys.generate(3, rng=0)
    ledger = ldp.PrivacyLedger()
    for r, items in enumerate((["a", "b", "c"], ["a", "b", "d"], ["a", "e", "d"]) * 3):
        ledger.record_longitudinal(m, people=np.arange(3), fingerprints=m.memo_fingerprints(items, keys=keys), round=r)
    e1, e_inf = m.epsilon_report, m.epsilon_permanent
    want = [e_inf, e_inf + min(e_inf, 3 * e1), min(e_inf, 3 * e1) + e_inf]
    assert np.allclose(np.asarray(ledger.totals(), dtype=float), want)


def test_long_items_share_their_first_bytes_and_are_told_apart():
    """256-bit items: the Bloom filter hashes each item's digest, so long words sharing their first 8 bytes (one
    64-bit word) are separate candidates, detected with their shares."""
    m = ldp.RAPPOR(item_bits=256)
    n = 30_000
    long = ["aéroport international A", "aéroport international B", "aéroport international C"]
    rng = np.random.default_rng(40)
    which = rng.choice(4, n, p=[0.3, 0.2, 0.15, 0.35])
    items = np.array([long[k] if k < 3 else f"someone else {i}" for i, k in enumerate(which)], dtype=object)
    candidates = long + ["aéroport international D", "aéroport"]
    est = m.estimate_frequencies(m.privatize(items.tolist(), keys=ldp.ClientKeys.generate(n, rng=41), rng=42),
                                 candidates=candidates)
    assert set(est.detected_items) == set(long)
    frame = est.to_frame()
    for item, f, se in zip(frame["item"], frame["frequency"], frame["standard_error"]):
        if item in long:
            assert abs(f - np.mean(items == item)) < 4 * se
    with pytest.raises(ValueError, match="encodes to the same 64-bit word"):
        ldp.RAPPOR().estimate_frequencies(ldp.RAPPOR().empty_aggregate(), candidates=long)
    with pytest.raises(ValueError, match=r"item_bits must be in \[1, 256\]; got 264"):
        ldp.RAPPOR(item_bits=264)


def _lasso_problem():
    """A RAPPOR-like regression: 0/1 design of 600 candidates over 2,048 rows, 15 present, unit noise, an intercept."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    x = sp.random(2048, 600, density=0.1, random_state=1, format="csr")
    x.data[:] = 1.0
    beta = np.zeros(600)
    beta[:15] = rng.uniform(2, 10, 15)
    intercept = np.ones(2048)
    return x, x @ beta + 3.0 * intercept + rng.normal(size=2048), intercept


@pytest.mark.parametrize("penalty", [2.0, 5.0])
def test_nonnegative_lasso_reaches_the_optimum_faster_than_plain_proximal_gradient(penalty):
    """Kuhn-Tucker at the solution (a kept candidate's standardized correlation with the residual equals λ, a dropped
    one's is at most λ), the same coefficients as plain proximal gradient (tests/naive.py), in fewer iterations: the
    momentum restarts only when it opposes the step (a restart test that always fires is plain proximal gradient,
    with its iteration count). Negative control: two iterations are not a solution."""
    from ldpnum.longitudinal.rappor import nonnegative_lasso

    x, y, intercept = _lasso_problem()
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=0)).ravel())
    u = intercept / np.linalg.norm(intercept)

    def kkt_gap(coef):
        r = y - x @ coef
        corr = (x.T @ (r - u * (u @ r))) / norms
        kept = coef > 0
        return max(np.abs(corr[kept] - penalty).max(initial=0.0), (corr[~kept] - penalty).max(initial=0.0))

    coef, iterations, converged = nonnegative_lasso(x, y, intercept, penalty)
    ref, ref_iterations = naive.nonnegative_lasso(x, y, intercept, penalty, tol=1e-7)  # the same stopping rule
    assert converged and kkt_gap(coef) < 1e-3
    np.testing.assert_allclose(coef, ref, atol=1e-4 * ref.max())
    assert iterations < 0.8 * ref_iterations
    assert kkt_gap(nonnegative_lasso(x, y, intercept, penalty, max_iter=2)[0]) > 0.1
