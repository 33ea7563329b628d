"""PEM and TreeHist: exact ε through GRR's plan, value-free groups, the naive references, recovery of planted
heavy hitters, the exact top-k at huge ε, bad input, merging."""

from fractions import Fraction

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum._kernels import client_prefix as kernels
from ldpnum._kernels._jit import launch
from ldpnum.estimation.heavy import estimate_prefix_levels, extend_candidates, prefix_hash
from ldpnum.plans import GRRPlan, grr_keep_cells
from ldpnum.plans import TWO48

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio

WORDS = [int(w) for w in np.random.default_rng(77).bit_generator.random_raw(6)]


def run_kernel(m, items, words):
    out = m._allocate_reports(len(items))
    m._run_kernel(m.prepare_values(items), np.ascontiguousarray(words, dtype=np.uint64), out)
    return out


def group_and_hash(m, codes):
    codes = np.asarray(codes, dtype=np.int64)
    return codes // (m.n_hashes * m.g), (codes // m.g) % m.n_hashes


# -- privacy ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls,epsilon,kwargs", [
    (ldp.PEM, 0.5, dict(item_bits=8, top_k=4, n_hashes=8)),
    (ldp.PEM, 4.0, dict(item_bits=8, top_k=2, eta=3, n_hashes=16)),
    (ldp.PEM, 8.0, dict(item_bits=7, top_k=2, n_hashes=4, g=64)),
    (ldp.TreeHist, 2.0, dict(item_bits=6, top_k=2, n_hashes=8)),
])
def test_every_report_is_exactly_epsilon_ldp_through_grr_plan(cls, epsilon, kwargs):
    """Given the first word (group and hash index, never the item), the report's distribution is GRR's over
    ``[0, g)`` at the hashed prefix, shifted to the block ``(j·H + h)·g``: the same integer plan, so the same
    exact ratio, tight."""
    m = cls(epsilon, item_type="uint", **kwargs)
    grr = GRRPlan(m.g, *grr_keep_cells(epsilon, m.g))
    assert m.plan.grr == grr
    items = range(1 << m.item_bits)
    for w in WORDS:
        rows = [m.plan.exact_probabilities(v, w) for v in items]
        j, h = m.plan.group_and_hash(w)
        base = (j * m.n_hashes + h) * m.g
        for v, row in zip(items, rows):
            hv = m.plan.hashed_prefix(v, j, h)
            assert row == {base + y: p for y, p in grr.exact_probabilities(hv).items()}
        check_exact_epsilon(rows, epsilon)
        assert max_ratio(rows) == grr.extreme_ratio()
    # negative control: the plan for 1.25 ε is refused at ε
    mutant = cls(1.25 * epsilon, item_type="uint", **{**kwargs, "g": m.g})
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([mutant.plan.exact_probabilities(v, WORDS[0]) for v in items], epsilon)


def test_group_and_hash_do_not_depend_on_the_item():
    """Same words, different items: the same group and hash index for every record; the items only move y."""
    m = ldp.PEM(2.0, item_bits=16, top_k=4, n_hashes=64, item_type="uint")
    n = 5000
    words = np.random.default_rng(3).bit_generator.random_raw(2 * n)
    a = run_kernel(m, np.zeros(n, np.uint64), words)
    b = run_kernel(m, np.random.default_rng(4).integers(0, 1 << 16, n, dtype=np.uint64), words)
    ja, ha = group_and_hash(m, a)
    jb, hb = group_and_hash(m, b)
    assert np.array_equal(ja, jb) and np.array_equal(ha, hb)
    assert not np.array_equal(a, b)
    expected = [m.plan.group_and_hash(int(w)) for w in words[0::2]]
    assert np.array_equal(ja, [e[0] for e in expected]) and np.array_equal(ha, [e[1] for e in expected])


def test_people_per_group_are_as_documented():
    """Group ``j`` with probability ``uniform_count(j, G)/2**48`` (multiply-shift), hash index uniform on H:
    chi-square at α = 1e-6, on two very different inputs."""
    m = ldp.PEM(1.0, item_bits=32, top_k=8, n_hashes=32, item_type="uint")
    n = 200_000
    probs = [float(m.plan.group_probability(j)) for j in range(m.groups)]
    assert sum(m.plan.group_probability(j) for j in range(m.groups)) == 1
    assert max(probs) - min(probs) <= 1 / TWO48
    for items in (np.zeros(n, np.uint64), np.full(n, (1 << 32) - 1, np.uint64)):
        j, h = group_and_hash(m, m.privatize(items, rng=11).codes)
        check_kernel_matches(np.bincount(j, minlength=m.groups).tolist(), probs)
        check_kernel_matches(np.bincount(h, minlength=m.n_hashes).tolist(), [1 / m.n_hashes] * m.n_hashes)
    with pytest.raises(PrivacyViolation):  # negative control: a skewed assignment is caught
        skew = np.bincount(j, minlength=m.groups).astype(float)
        skew[0] *= 1.05
        check_kernel_matches(skew.astype(int).tolist(), probs)


# -- the kernel and the server against naive references ------------------------------------------------------

@pytest.mark.parametrize("cls,epsilon,kwargs", [
    (ldp.PEM, 1.0, dict(item_bits=64, top_k=20, n_hashes=1024)),
    (ldp.PEM, 4.0, dict(item_bits=20, top_k=5, eta=3, n_hashes=8)),
    (ldp.TreeHist, 3.0, dict(item_bits=12, top_k=3, n_hashes=16)),
])
def test_kernel_matches_naive_reference(cls, epsilon, kwargs):
    m = cls(epsilon, item_type="uint", **kwargs)
    p = m.plan
    n = 3000
    rng = np.random.default_rng(5)
    items = rng.integers(0, 2**m.item_bits, n, dtype=np.uint64) if m.item_bits < 64 else \
        rng.bit_generator.random_raw(n).astype(np.uint64)
    words = rng.bit_generator.random_raw(2 * n)
    got = run_kernel(m, items, words)
    ref = naive.prefix_reports(items, m.item_bits, p.lengths, p.n_hashes, p.hash_a, p.hash_b, p.g, p.grr.a_keep,
                               p.grr.shift, words)
    assert np.array_equal(got.astype(np.int64), ref)


def test_hash_probe_is_the_same_in_kernel_numpy_and_python():
    m = ldp.PEM(4.0, item_bits=64, n_hashes=256, item_type="uint")
    p = m.plan
    rng = np.random.default_rng(8)
    prefixes = rng.bit_generator.random_raw(500).astype(np.uint64)
    prefixes[:3] = [0, 1, 2**64 - 1]
    hidx = rng.integers(0, p.n_hashes, 500)
    out = np.empty(500, np.int64)
    launch(kernels.prefix_hash_probe, prefixes, hidx, p.hash_a, p.hash_b, p.g, out)
    table = prefix_hash(prefixes, p.hash_a, p.hash_b, p.g)
    assert np.array_equal(out, table[np.arange(500), hidx])
    assert [naive.prefix_hash_one(int(x), p.hash_a[h], p.hash_b[h], p.g) for x, h in zip(prefixes, hidx)] == \
        out.tolist()
    # the hash spreads: every value of [0, g) is hit, roughly uniformly
    counts = np.bincount(table.ravel(), minlength=p.g)
    check_kernel_matches(counts.tolist(), [1 / p.g] * p.g)


def test_candidate_extension_and_search_match_naive_reference():
    assert extend_candidates(np.array([5], np.uint64), 2).tolist() == [20, 21, 22, 23]
    assert extend_candidates(np.array([], np.uint64), 3).size == 0
    m = ldp.PEM(3.0, item_bits=12, top_k=3, n_candidates=4, eta=3, n_hashes=8, item_type="uint")
    rng = np.random.default_rng(2)
    items = np.where(rng.random(20_000) < 0.5, rng.choice([17, 900, 3000, 4001], 20_000),
                     rng.integers(0, 4096, 20_000)).astype(np.uint64)
    agg = m.aggregate(m.privatize(items, rng=1))
    p = m.plan
    counts = np.asarray(agg.counts).reshape(p.n_groups, p.n_hashes, p.g)
    ps, qs = p.support_probabilities()
    # the search itself, selecting and estimating on all the last group's reports (holdout=False); the split
    # that estimate_heavy_hitters uses is tested against the naive search in test_top_k_is_selected_by_...
    got = estimate_prefix_levels(counts, p.lengths, p.hash_a, p.hash_b, p.g, ps, qs, 4, 3, holdout=False)
    ref_items, ref_freq = naive.prefix_search(counts, p.lengths, p.hash_a, p.hash_b, p.g, ps, qs, 4, 3)
    assert got.items.tolist() == ref_items and got.holdout is None
    np.testing.assert_allclose(got.frequencies, ref_freq, rtol=1e-12, atol=1e-15)
    assert got.candidates_per_level == (32, 4 * 8, 4 * 8, 4 * 2)  # 2**5, then 4 kept × 2**3, × 2**1 at the end
    est = m.estimate_heavy_hitters(agg)
    assert est.provenance["prefix_lengths"] == (5, 8, 11, 12)
    assert est.provenance["n_per_group"] == tuple(int(v) for v in counts.sum(axis=(1, 2)))
    assert sum(est.provenance["n_per_group"]) == est.n_reports == 20_000


# -- accuracy -----------------------------------------------------------------------------------------------

def test_huge_epsilon_gives_the_exact_top_k():
    """At ε = 20 (the largest allowed) every report keeps its hashed prefix but for ~1e-4: the top-k equals
    the exact non-private one, and each frequency equals the exact frequency among the reports that estimate
    it (the last group's estimating half)."""
    m = ldp.PEM(20.0, item_bits=16, top_k=5, n_candidates=8, item_type="uint")
    rng = np.random.default_rng(9)
    values = np.array([40000, 7, 12345, 256, 65535, 1000, 999, 30000], np.uint64)
    shares = np.array([0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.06, 0.04])
    items = values[rng.choice(8, 100_000, p=shares)]
    r = m.privatize(items, rng=10)
    est = m.estimate_heavy_hitters(r)
    uniq, cnt = np.unique(items, return_counts=True)
    exact_top = uniq[np.argsort(-cnt, kind="stable")][:5]
    assert list(est.items) == exact_top.tolist()
    # the frequencies are estimated by the last group's reports of the hash functions H/2..H-1 (the others
    # select the items)
    j, h = group_and_hash(m, r.codes)
    last = items[(j == m.groups - 1) & (h >= m.n_hashes // 2)]
    exact_f = np.array([(last == v).mean() for v in est.items])
    np.testing.assert_allclose(est.frequencies, exact_f, atol=2e-3)


@pytest.mark.parametrize("cls", [ldp.PEM, ldp.TreeHist])
def test_planted_heavy_hitters_are_recovered_within_four_standard_errors(cls):
    """64-bit items: 8 planted heavy hitters (55% of people) among singletons, ε = 4."""
    rng = np.random.default_rng(21)
    n = 400_000 if cls is ldp.PEM else 1_000_000
    planted = rng.bit_generator.random_raw(8).astype(np.uint64)
    shares = np.array([0.12, 0.1, 0.09, 0.07, 0.06, 0.05, 0.04, 0.02])
    which = rng.choice(9, n, p=np.append(shares, 1 - shares.sum()))
    items = np.where(which < 8, planted[np.minimum(which, 7)], rng.bit_generator.random_raw(n).astype(np.uint64))
    m = cls(4.0, top_k=8, item_type="uint")
    est = m.estimate_heavy_hitters(m.privatize(items, rng=22))
    assert set(est.items) == set(planted.tolist())
    truth = dict(zip(planted.tolist(), shares))
    z = [(f - truth[int(v)]) / se for v, f, se in zip(est.items, est.frequencies, est.standard_errors)]
    assert np.all(np.abs(z) < 4), z
    assert np.all(np.diff(est.frequencies) <= 0)


# -- bad input, merging, specs --------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [ldp.PEM, ldp.TreeHist])
def test_bad_parameters(cls):
    for kwargs, exc in [(dict(top_k=0), ValueError), (dict(top_k=-3), ValueError), (dict(top_k=True), TypeError),
                        (dict(top_k=2.0), TypeError), (dict(item_bits=0), ValueError),
                        (dict(item_bits=257), ValueError), (dict(item_bits="64"), TypeError),
                        (dict(n_hashes=100), ValueError), (dict(n_hashes=0), ValueError),
                        (dict(g=1), ValueError), (dict(s=64), ValueError), (dict(groups=3), ValueError),
                        (dict(item_type="float"), ValueError), (dict(top_k=5, n_candidates=4), ValueError)]:
        with pytest.raises(exc):
            cls(2.0, **{"item_type": "uint", **kwargs})
    with pytest.raises(ValueError, match="s \\+ eta"):
        ldp.PEM(2.0, s=10, eta=16, item_type="uint")
    with pytest.raises(ValueError, match="exceeds 33554432 counts"):  # the aggregate's size is capped
        ldp.PEM(20.0, n_hashes=1024, item_type="uint")
    with pytest.raises(ValueError, match="eta must be 1"):
        ldp.TreeHist(2.0, eta=2, item_type="uint")


def test_empty_input_and_bad_top_k_at_estimation():
    m = ldp.PEM(2.0, item_bits=16, top_k=3, item_type="uint")
    r = m.privatize(np.array([], np.uint64), rng=0)
    assert len(r) == 0
    with pytest.raises(ValueError, match="no reports"):
        m.estimate_heavy_hitters(r)
    with pytest.raises(ValueError, match="group"):  # too few people to fill every group
        m.estimate_heavy_hitters(m.privatize(np.array([1], np.uint64), rng=0))
    r = m.privatize(np.arange(1000, dtype=np.uint64), rng=0)
    for k, exc in [(0, ValueError), (-1, ValueError), (True, TypeError)]:
        with pytest.raises(exc):
            m.estimate_heavy_hitters(r, top_k=k)
    assert len(m.estimate_heavy_hitters(r, top_k=7).items) == 7
    with pytest.raises(ValueError, match="below 2\\*\\*item_bits"):
        m.privatize(np.array([1, 1 << 16], np.uint64), rng=0)


def test_merge_equals_aggregate_of_concatenation():
    m = ldp.PEM(4.0, item_bits=24, top_k=5, item_type="uint")
    x = np.random.default_rng(1).integers(0, 1 << 24, 30_000, dtype=np.uint64)
    g = np.random.default_rng(2)
    a, b = m.privatize(x[:12_345], rng=g), m.privatize(x[12_345:], rng=g)
    whole = m.aggregate(ldp.Reports.concat([a, b]))
    assert m.aggregate(a) + m.aggregate(b) == whole
    assert whole.counts.size == m.groups * m.n_hashes * m.g
    e1, e2 = m.estimate_heavy_hitters(whole), m.estimate_heavy_hitters(m.aggregate(a) + m.aggregate(b))
    assert e1.items == e2.items


def test_spec_round_trip_and_defaults():
    m = ldp.PEM(4.0, item_type="uint")
    assert (m.item_bits, m.top_k, m.groups, m.prefix_lengths[0], m.prefix_lengths[-1]) == (64, 20, 15, 10, 64)
    assert m.g == 56 and m.n_hashes == 1024 and m.n_cells == 15 * 1024 * 56
    assert ldp.PEM(20.0, item_bits=16, top_k=5, item_type="uint").n_hashes == 16  # 3 groups · 16 · 65536 <= 2**22 counts
    assert ldp.from_spec(m.spec) == m
    t = ldp.TreeHist(4.0, item_bits=32, top_k=4, item_type="uint")
    assert t.prefix_lengths == tuple(range(6, 33)) and ldp.from_spec(t.spec) == t  # s = log2(32 candidates)
    assert Fraction(1) == sum(t.plan.group_probability(j) for j in range(t.groups))


# -- items of every type ------------------------------------------------------------------------------------

def test_string_items_round_trip_and_planted_words_are_recovered():
    """str items (the default): encoded to 64-bit words, found at ε = 4, decoded back to str in rank order."""
    rng = np.random.default_rng(31)
    words = ["the", "of", "and", "to", "in", "naïve", "zürich"]
    shares = np.array([0.16, 0.12, 0.1, 0.08, 0.07, 0.06, 0.05])
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", np.uint8)  # a tail of random 8-letter words
    tail = [bytes(r).decode() for r in letters[rng.integers(0, 26, (300_000, 8))]]
    which = rng.choice(8, 300_000, p=np.append(shares, 1 - shares.sum()))
    items = [words[w] if w < 7 else tail[i] for i, w in enumerate(which)]
    m = ldp.PEM(4.0, top_k=7)
    assert m.item_type == "str" and m.item_bits == 64
    est = m.estimate_heavy_hitters(m.privatize(items, rng=32))
    assert set(est.items) == set(words) and all(isinstance(v, str) for v in est.items)
    truth = dict(zip(words, shares))
    z = [(f - truth[v]) / se for v, f, se in zip(est.items, est.frequencies, est.standard_errors)]
    assert np.all(np.abs(z) < 4), z
    assert est.provenance["method"] == "pem"


def test_long_strings_are_truncated_with_a_count_and_bytes_decode_to_bytes():
    m = ldp.PEM(8.0, item_bits=16, top_k=1)
    with pytest.warns(ldp.TruncationWarning, match="4000 item"):
        r = m.privatize(["abc", "ab", "abd"] * 2000, rng=0)
    assert m.estimate_heavy_hitters(r).items == ("ab",)
    with pytest.raises(ValueError, match="longer"):
        m.privatize(["abc"], truncate=False, rng=0)
    b = ldp.TreeHist(8.0, item_bits=16, top_k=1, item_type="bytes")
    assert b.estimate_heavy_hitters(b.privatize([b"\x00\x01", b"\xff"] * 3000, rng=0)).items in ((b"\x00\x01",),
                                                                                              (b"\xff",))


def test_items_of_another_type_are_refused_before_any_draw(monkeypatch):
    from ldpnum import _random

    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: pytest.fail("words drawn for a bad input"))
    with pytest.raises(TypeError, match="item_type='uint'"):
        ldp.PEM(2.0).privatize(np.array([1, 2], np.uint64), rng=0)
    with pytest.raises(TypeError, match="item_type='str'"):
        ldp.PEM(2.0, item_type="uint").privatize(["a", "b"], rng=0)
    with pytest.raises(TypeError, match="item_type='str'"):
        ldp.PEM(2.0, item_bits=12, item_type="uint").privatize(["a", "b"], rng=0)
    with pytest.raises(TypeError, match="one type"):
        ldp.PEM(2.0).privatize(["a", b"b"], rng=0)
    with pytest.raises(ValueError, match="multiple of 8"):
        ldp.PEM(2.0, item_bits=12)


def test_small_noisy_collections_give_distinct_possible_items():
    # Few people per group: most candidates are noise. Encodings that differ only in a character cut at the
    # item width decode to one text, and a zero byte before a non-zero one or invalid UTF-8 is no str item;
    # before the fix, 19 of these 20 collections raised "items must be distinct".
    from ldpnum.heavy.items import admissible_prefixes, encode_items
    for seed in range(20):
        x = list(np.random.default_rng(seed).choice(["the", "of", "and", "to", "in"], 2000))
        pem = ldp.PEM(2.0)
        est = pem.estimate_heavy_hitters(pem.privatize(x, rng=seed))
        assert len(set(est.items)) == est.k == 20
        words, _, _ = encode_items(list(est.items), 64)
        assert admissible_prefixes(words, 64, "str", 64).all()


def test_admissible_prefixes_see_a_non_zero_byte_begun_after_a_zero_one():
    # "the" padded with zero bytes: at 63 bits a prefix whose last 7 bits are not zero begins a non-zero byte
    # after a zero one, so no item extends it (TreeHist kept such prefixes and then had fewer than k
    # admissible items at its last level: 17 of 20 on an English word sample at eps = 4).
    from ldpnum.heavy.items import admissible_prefixes, encode_items
    (the,), _, _ = encode_items([b"the"], 64)[0], None, None
    at63 = int(the) >> 1
    cands = np.array([at63, at63 | 1, at63 | 0b1000000], dtype=np.uint64)
    assert admissible_prefixes(cands, 63, "str", 64).tolist() == [True, False, False]
    # bytes items may hold zero bytes anywhere (b"the\x00\x00\x00\x00\x01" is an item), so every prefix is one
    assert admissible_prefixes(cands, 63, "bytes", 64).tolist() == [True, True, True]
    # a prefix that stops right after a non-zero byte may begin any next byte
    (ab,), _, _ = encode_items([b"abcdefgh"], 64)[0], None, None
    assert admissible_prefixes(np.array([int(ab) >> 3], np.uint64), 61, "str", 64).tolist() == [True]
    # every 12-bit prefix of two bytes: for str, 0x00 then any non-zero bit is impossible; for bytes nothing is
    cands = np.arange(1 << 12, dtype=np.uint64)
    str_ok = admissible_prefixes(cands, 12, "str", 64)
    assert not str_ok[[c for c in range(1 << 12) if (c >> 4) == 0 and (c & 0xF)]].any()
    assert str_ok[[c for c in range(0x200, 0x800)]].all()  # ASCII 0x20..0x7F then any first bits
    assert admissible_prefixes(cands, 12, "bytes", 64).all()


def test_a_larger_top_k_at_estimation_searches_wider():
    x = np.repeat(np.arange(60, dtype=np.uint64), np.arange(60, 0, -1) * 100)
    pem = ldp.PEM(8.0, item_bits=16, top_k=10, item_type="uint")
    agg = pem.aggregate(pem.privatize(x, rng=3))
    small = pem.estimate_heavy_hitters(agg)
    wide = pem.estimate_heavy_hitters(agg, top_k=50)
    assert max(small.provenance["kept_per_level"][:-1]) == 32  # n_candidates = max(2 * top_k, 32)
    assert max(wide.provenance["kept_per_level"][:-1]) == 160  # the same ratio for the request
    assert wide.k == 50 and len(set(wide.items)) == 50
    # an explicit n_candidates keeps its ratio to top_k
    tight = ldp.PEM(8.0, item_bits=16, top_k=10, n_candidates=10, item_type="uint")
    est = tight.estimate_heavy_hitters(tight.privatize(x, rng=3), top_k=30)
    assert max(est.provenance["kept_per_level"][:-1]) == 30


def test_prefix_support_kernel_matches_the_numpy_hash_table():
    # The Cython kernel (hash in registers, threads over candidate slices) against the NumPy reference
    # prefix_hash (a candidates x H table), on extreme and random prefixes, one thread and several.
    from ldpnum.estimation import heavy as server
    rng = np.random.default_rng(11)
    for g, n_hashes, n_cand in ((2, 4, 50), (56, 1024, 700), (2982, 64, 5000)):
        a, b = ldp.heavy.prefix.hash_constants(n_hashes)
        counts = rng.integers(0, 1000, (n_hashes, g))
        prefixes = rng.bit_generator.random_raw(n_cand).astype(np.uint64)
        prefixes[:3] = [0, 1, 2**64 - 1]
        table = prefix_hash(prefixes, a, b, g)
        want = counts[np.arange(n_hashes)[None, :], table].sum(axis=1)
        got = server.prefix_supports(counts, prefixes, a, b, g)
        assert got.dtype == np.float64 and np.array_equal(got, want)
    with pytest.raises(ValueError, match="not g"):
        server.prefix_supports(counts, prefixes, a, b, g + 1)


@pytest.mark.parametrize("item_type", ["bytes", "str"])
@pytest.mark.parametrize("length", [8, 13, 24, 37, 56, 63, 64])
def test_admissible_prefixes_agree_with_the_byte_by_byte_rule(item_type, length):
    # random prefixes with many zero bytes, ASCII and high bytes (UTF-8 leads, continuations, invalid ones)
    from ldpnum.heavy.items import admissible_prefixes
    rng = np.random.default_rng(length)
    n_bytes = -(-length // 8)
    pool = np.array([0, 0, 0, 0x61, 0x7A, 0x80, 0xA9, 0xC3, 0xE2, 0xF0, 0xFF], dtype=np.uint64)
    raw = pool[rng.integers(0, len(pool), (3000, n_bytes))]
    words = np.zeros(3000, dtype=np.uint64)
    for j in range(n_bytes):
        words = (words << np.uint64(8)) | raw[:, j]
    prefixes = words >> np.uint64(8 * n_bytes - length)
    got = admissible_prefixes(prefixes, length, item_type, 64).tolist()
    want = [naive.admissible_prefix(p, length, item_type) for p in prefixes.tolist()]
    assert got == want
    assert 0 < sum(want) and (sum(want) < len(want)) == (item_type == "str")  # any prefix begins a bytes item


# -- bytes items: zero bytes inside are ordinary bytes; zero bytes at the end are padding --------------------

@pytest.mark.parametrize("cls", [ldp.PEM, ldp.TreeHist])
def test_bytes_items_with_inner_zero_bytes_are_found(cls):
    # An IPv4 address with zero bytes inside (10.0.0.1). The str rule "no zero byte before a non-zero one" was
    # applied to bytes items too, so every prefix of 10.0.0.1 past its first byte was dropped as impossible:
    # PEM returned (8.8.8.8, b"X*\x8f\x8f"), TreeHist (8.8.8.8, b"\x08\x08\x08").
    m = cls(4.0, item_bits=32, top_k=2, item_type="bytes")
    x = [bytes([10, 0, 0, 1])] * 60_000 + [bytes([8, 8, 8, 8])] * 40_000
    est = m.estimate_heavy_hitters(m.privatize(x, rng=1))
    assert est.items == (bytes([10, 0, 0, 1]), bytes([8, 8, 8, 8]))
    assert np.all(np.abs(est.frequencies - [0.6, 0.4]) <= 4 * est.standard_errors)


def test_bytes_items_ending_in_zero_bytes_are_counted_with_the_shorter_item():
    # Questionable case, decided: under the fixed-width encoding b"\x0a\x00\x00\x00" and b"\x0a" are the same
    # word (trailing zero bytes are the padding), so both are counted as one item, returned without the zero
    # bytes (documented in encode_items and PEM).
    m = ldp.PEM(4.0, item_bits=32, top_k=2, item_type="bytes")
    x = [bytes([10, 0, 0, 0])] * 30_000 + [b"\x0a"] * 20_000 + [bytes([7, 0, 7])] * 30_000 + [b"\x01"] * 20_000
    est = m.estimate_heavy_hitters(m.privatize(x, rng=2))
    assert est.items == (b"\x0a", bytes([7, 0, 7]))
    assert np.all(np.abs(est.frequencies - [0.5, 0.3]) <= 4 * est.standard_errors)
    from ldpnum.heavy import decode_items, encode_items
    words, kind, _ = encode_items([bytes([10, 0, 0, 0]), b"\x0a", bytes([0, 0, 0, 1])], 32)
    assert words[0] == words[1] and decode_items(words, kind, 32) == [b"\x0a", b"\x0a", bytes([0, 0, 0, 1])]


# -- the returned top-k: selected by one half of the last group, estimated by the other ---------------------

def _selected_z(m, x, seeds, holdout):
    """z-scores ``(f̂ - f)/se`` of the items returned from each collection (truth 0.01 for the planted items,
    0 for anything else): by ``estimate_heavy_hitters`` (holdout) or by the search without the split
    (selection and estimation on the same reports: the planted defect)."""
    p = m.plan
    p_star, q_star = p.support_probabilities()
    planted = set(np.unique(x).tolist())
    z = []
    for seed in seeds:
        agg = m.aggregate(m.privatize(x, rng=seed))
        if holdout:
            est = m.estimate_heavy_hitters(agg)
            items, freq, se = est.items, est.frequencies, est.standard_errors
        else:
            counts = np.asarray(agg.counts).reshape(p.n_groups, p.n_hashes, p.g)
            lv = estimate_prefix_levels(counts, p.lengths, p.hash_a, p.hash_b, p.g, p_star, q_star,
                                        m._n_candidates, m.top_k, holdout=False)
            items, freq, se = lv.items.tolist(), lv.frequencies, lv.standard_errors
        truth = np.array([0.01 if int(v) in planted else 0.0 for v in items])
        z.extend((freq - truth) / se)
    return np.array(z)


@pytest.mark.slow
def test_selected_top_k_frequencies_are_unbiased_and_their_intervals_cover():
    # 100 items at 1% each (the case), PEM at ε = 4, top 5 of them per collection, 240 collections of
    # 10^5 people: 1,200 nominal 95% intervals, so a true 95% reads 0.95 ± 0.0063 (binomial sd) and lies in
    # [0.93, 0.97] but for 3 sd. Measured with these seeds: coverage 0.945, mean z -0.10, sd of z 1.02 (the
    # small negative mean: the people of the last group are split between the halves, so an item drawn
    # often into the selecting half is drawn a little less into the estimating one; 0.1 sd). The old estimator
    # on the same collections: coverage 0.874, mean z +1.39 (the winner's curse), which the same checks reject.
    m = ldp.PEM(4.0, item_bits=16, top_k=5, item_type="uint")
    x = np.repeat((np.arange(100, dtype=np.uint64) * 37 + 5), 1000)
    seeds = range(240)
    z = _selected_z(m, x, seeds, holdout=True)
    assert z.size == 1200
    coverage = np.mean(np.abs(z) <= normal_z95)
    assert 0.93 <= coverage <= 0.98, coverage
    assert abs(z.mean()) < 0.2, z.mean()  # unbiased: |mean z| well under the old +1.39
    old = _selected_z(m, x, seeds, holdout=False)
    assert np.mean(np.abs(old) <= normal_z95) < 0.92 and old.mean() > 1.0  # the planted defect is rejected


normal_z95 = 1.959963984540054


def test_top_k_is_selected_by_one_half_of_the_last_group_and_estimated_by_the_other():
    # The split by hash index, against the naive search: the first H/2 hash functions' reports of the last
    # group rank the candidates, the other H/2 estimate the chosen items, and the provenance says so.
    m = ldp.PEM(3.0, item_bits=12, top_k=3, n_candidates=4, eta=3, n_hashes=8, item_type="uint")
    rng = np.random.default_rng(2)
    items = np.where(rng.random(20_000) < 0.5, rng.choice([17, 900, 3000, 4001], 20_000),
                     rng.integers(0, 4096, 20_000)).astype(np.uint64)
    agg = m.aggregate(m.privatize(items, rng=1))
    p = m.plan
    counts = np.asarray(agg.counts).reshape(p.n_groups, p.n_hashes, p.g)
    ps, qs = p.support_probabilities()
    sel = counts.copy()
    sel[-1, 4:] = 0  # the last group's selecting half only
    chosen, _ = naive.prefix_search(sel, p.lengths, p.hash_a, p.hash_b, p.g, ps, qs, 4, 4)
    n_est = counts[-1, 4:].sum()
    freq = {c: (sum(int(counts[-1, h, naive.prefix_hash_one(c, p.hash_a[h], p.hash_b[h], p.g)])
                    for h in range(4, 8)) / n_est - qs) / (ps - qs) for c in chosen[:3]}
    est = m.estimate_heavy_hitters(agg)
    assert set(est.items) == set(chosen[:3])
    assert list(est.items) == sorted(chosen[:3], key=lambda c: -freq[c])  # shown by decreasing estimate
    np.testing.assert_allclose(est.frequencies, [freq[c] for c in est.items], rtol=1e-12)
    assert dict(est.provenance["holdout"]) == {"select_reports": int(counts[-1, :4].sum()),
                                               "estimate_reports": int(n_est), "select_hashes": (0, 4),
                                               "estimate_hashes": (4, 8)}


def test_one_hash_function_cannot_split_and_says_so():
    m = ldp.PEM(10.0, item_bits=8, top_k=2, n_hashes=1, item_type="uint")
    r = m.privatize(np.repeat(np.array([3, 200], np.uint64), [3000, 2000]), rng=0)
    with pytest.warns(UserWarning, match="n_hashes=1 cannot split.*biased upward"):
        est = m.estimate_heavy_hitters(r)
    assert est.provenance["holdout"] is None and set(est.items) == {3, 200}


def test_default_hash_family_can_always_split():
    # TreeHist over 64-bit items at ε >= 11 had n_hashes = 1 by default (58 groups × 65536 hash values), so its
    # estimates could not be split and came with the selection-bias warning; the default is now at least 2
    import warnings
    m = ldp.TreeHist(12.0, top_k=2, item_type="uint")
    assert m.n_hashes == 2 and ldp.PEM(20.0).n_hashes == 4
    x = np.repeat(np.array([2**63 + 5, 77], np.uint64), [12_000, 8_000])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = m.estimate_heavy_hitters(m.privatize(x, rng=4))
    assert est.items == (2**63 + 5, 77) and est.provenance["holdout"]["estimate_hashes"] == (1, 2)
    assert np.all(np.abs(est.frequencies - [0.6, 0.4]) <= 4 * est.standard_errors)


# -- items wider than 64 bits ---------------------------------------------------------------------------------

def test_wide_items_kernel_matches_the_naive_reference_at_every_level():
    """200-bit items: levels up to 64 bits hash the prefix word, longer ones its SipHash digest (Python reference)."""
    from ldpnum.heavy.items import DIGEST_KEY

    m = ldp.PEM(3.0, item_bits=200, top_k=4, eta=8, n_hashes=16, item_type="uint")
    assert max(m.prefix_lengths) == 200 and min(m.prefix_lengths) <= 64
    p = m.plan
    n = 2000
    rng = np.random.default_rng(9)
    items = [int.from_bytes(rng.bytes(25), "big") for _ in range(n)]
    words = rng.bit_generator.random_raw(2 * n)
    got = run_kernel(m, items, words)
    ref = naive.prefix_reports(items, 200, p.lengths, p.n_hashes, p.hash_a, p.hash_b, p.g, p.grr.a_keep,
                               p.grr.shift, words, DIGEST_KEY)
    assert np.array_equal(got.astype(np.int64), ref)
    j, _ = group_and_hash(m, got)
    assert (p.lengths[j] > 64).any() and (p.lengths[j] <= 64).any()  # both kinds of level were exercised


def test_wide_reports_are_exactly_epsilon_ldp_through_grr_plan():
    """The plan of a 256-bit PEM: given the first word, GRR over [0, g) at the hashed prefix (or prefix digest)."""
    epsilon = 2.0
    m = ldp.PEM(epsilon, item_bits=256, top_k=2, n_hashes=8, item_type="uint")
    grr = GRRPlan(m.g, *grr_keep_cells(epsilon, m.g))
    rng = np.random.default_rng(4)
    items = [int.from_bytes(rng.bytes(32), "big") for _ in range(6)] + [0, 2**256 - 1]
    long_level = 0
    for w in WORDS + [int(v) for v in rng.bit_generator.random_raw(40)]:
        j, _ = m.plan.group_and_hash(w)
        long_level += m.prefix_lengths[j] > 64
        rows = [m.plan.exact_probabilities(v, w) for v in items]
        check_exact_epsilon(rows, epsilon)
        assert max_ratio(rows) <= grr.extreme_ratio()
    assert long_level > 20
    mutant = ldp.PEM(1.25 * epsilon, item_bits=256, top_k=2, n_hashes=8, g=m.g, item_type="uint")
    with pytest.raises(PrivacyViolation, match="exceeds"):  # negative control
        check_exact_epsilon([mutant.plan.exact_probabilities(v, WORDS[0]) for v in items], epsilon)


LONG_NAMES = ["aéroport international Charles-de-Gaulle", "aéroport de Paris-Orly (ORY)",  # cut to 32 bytes
              "Flughafen Zürich (ZRH)", "https://example.org/a/b/c?q=1", "société générale"]


@pytest.mark.parametrize("cls,n", [(ldp.PEM, 120_000), (ldp.TreeHist, 200_000)])
def test_planted_long_items_are_recovered_within_four_standard_errors(cls, n):
    """256-bit str items (up to 32 bytes of UTF-8): every level runs, the planted items come back whole."""
    import warnings

    rng = np.random.default_rng(31)
    shares = np.array([0.2, 0.16, 0.13, 0.1, 0.08])
    which = rng.choice(6, n, p=np.append(shares, 1 - shares.sum()))
    noise = [f"rare item {i:09d} with a long tail" for i in rng.integers(0, 10**9, n)]
    x = [LONG_NAMES[k] if k < 5 else noise[i] for i, k in enumerate(which)]
    m = cls(4.0, item_bits=256, top_k=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldp.TruncationWarning)
        est = m.estimate_heavy_hitters(m.privatize(x, rng=32))
    cut = [s.encode()[:32].decode(errors="replace") for s in LONG_NAMES]
    assert set(est.items) == set(cut)
    truth = dict(zip(cut, np.bincount(which, minlength=6)[:5] / n))
    z = [(f - truth[v]) / se for v, f, se in zip(est.items, est.frequencies, est.standard_errors)]
    assert np.all(np.abs(z) < 4), z
    assert len(est.provenance["prefix_lengths"]) == m.groups and m.prefix_lengths[-1] == 256


def test_wide_items_bad_input_one_clear_error_before_any_draw(monkeypatch):
    from ldpnum import _random

    with pytest.raises(ValueError, match=r"item_bits must be in \[1, 256\]; got 257"):
        ldp.PEM(2.0, item_bits=257)
    with pytest.raises(ValueError, match="bytes items need item_bits a multiple of 8"):
        ldp.TreeHist(2.0, item_bits=100, item_type="bytes")
    m = ldp.PEM(2.0, item_bits=100, item_type="uint")
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: pytest.fail("words drawn for a bad input"))
    with pytest.raises(ValueError, match=r"below 2\*\*item_bits = 2\*\*100; 1 item\(s\) are not, first at index 1"):
        m.privatize([5, 2**100, 7], rng=0)
    with pytest.raises(ValueError, match="first at index 0"):
        ldp.PEM(2.0, item_bits=256).privatize(["x" * 33], rng=0, truncate=False)


def test_planted_wide_integers_come_back_as_python_ints():
    """200-bit uint items (ints above 2**64): found whole, decoded to Python ints, within 4 standard errors."""
    a, b = 2**199 + 5, 2**150 + 7
    x = [a] * 30_000 + [b] * 20_000 + list(range(10_000))
    m = ldp.PEM(8.0, item_bits=200, top_k=2, item_type="uint")
    est = m.estimate_heavy_hitters(m.privatize(x, rng=1))
    assert est.items == (a, b) and all(type(v) is int for v in est.items)
    truth = {a: 0.5, b: 1 / 3}
    assert all(abs(f - truth[v]) < 4 * se for v, f, se in zip(est.items, est.frequencies, est.standard_errors))
    assert set(est.provenance["candidate_words"][:2]) == {a, b}  # the words the clients encoded, as ints
