"""Count-mean sketch (ldpnum/heavy/cms.py) and its estimators (ldpnum/estimation/sketch.py).

The common suite (tests/common/test_common.py, ``count_mean_sketch``) checks exact ε (tight), the kernels against
the plans, the bad-input matrix of category codes and reproducibility; here: the kernels bit for bit against
tests/naive.py, the textbook estimator's bias under the fixed family's collisions next to the unbiased estimator,
standard errors against the spread of repeated collections, merging, items, and the estimator's refusals.
"""

import dataclasses
import math
import warnings

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum.estimation import sketch as est_sketch
from ldpnum.frequency.unary import sparse_bits
from ldpnum.heavy.cms import sketch_key, sketch_positions

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio

#: A sketch small enough that collisions matter: 32 buckets, 8 hash functions, 12 categories (12 ≤ 32·8/16).
SMALL = dict(k=12, width=32, hashes=8)
#: One heavy category (half the people) and eleven light ones.
SHARES = np.array([0.5] + [0.5 / 11] * 11)


def collection(m, n, seed):
    x = np.repeat(np.arange(m.k), np.round(SHARES * n).astype(int))
    return x, np.bincount(x, minlength=m.k)


def collision_matrix(m):
    pos = sketch_positions(np.arange(m.k, dtype=np.uint64), m.hashes, m.width, m.plan.key)
    return est_sketch.collision_block(pos, m.plan.index_weights, m.width)


def with_sparse(m, pool=None):
    """``m`` drawing its other bits with the sparse layout (whatever its width), its lane pool ``pool`` words if given
    (``pool=1``: most records read lane words past the pool, from SipHash under their key words)."""
    u = m.plan.bits
    layout = sparse_bits(m.width, u.lane_bits, u.t_other)
    if pool is not None:
        layout = dataclasses.replace(layout, pool_words=pool)
    m._plan = dataclasses.replace(m.plan, sparse=layout)
    return m


@pytest.mark.parametrize("variant, epsilon, kwargs, pool", [
    ("cms", 2.0, dict(width=16, hashes=3), None), ("cms", 2.0, dict(width=24, hashes=300), None),
    ("cms", 4.0, dict(width=1024, hashes=256), None), ("cms", 1.0, dict(width=200, hashes=5), None),
    ("cms", 16.0, dict(width=1024, hashes=2), None), ("cms", 4.0, dict(width=1024, hashes=3), 1),
    ("cms", 1.0, dict(width=24, hashes=3), 1), ("hcms", 2.0, dict(width=256, hashes=256), None)])
def test_kernels_match_the_naive_reference(variant, epsilon, kwargs, pool):
    """Same words, same bytes: the kernels against tests/naive.py, items and category codes (with unknowns); CMS
    with the lanes (narrow widths) and the sparse layout (wide ones, or forced), its pool cut to one word in two
    cases so that records read lane words past it."""
    key = naive.sketch_key_bytes(5)
    for k in (None, 7):
        m = ldp.CountMeanSketch(epsilon, k, variant=variant, hash_seed=5, item_type="uint", **kwargs)
        if pool is not None:
            with_sparse(m, pool)
        assert (m.plan.sparse is not None) == (variant == "cms" and (pool is not None or m.width >= 200))
        x = np.arange(40) % 7 if k else np.random.default_rng(1).integers(0, 2**64, 40, dtype=np.uint64)
        if k:  # every fifth code is outside [0, k): reported as no value
            values = m.prepare_values(np.where(np.arange(40) % 5 == 0, 99, x), unknown="uniform")
        else:
            values = m.prepare_values(x)
        words = np.random.default_rng(2).bit_generator.random_raw(40 * m.words_per_record)
        out = m._allocate_reports(40)
        m._run_kernel(values, words, out)
        unknown = 2**64 - 1 if k else None
        if variant == "cms":
            u = m.plan.bits
            want = naive.count_mean_sketch(values, key, m.hashes, m.width, u.lane_bits, u.t_other, u.t_true, words,
                                           unknown, sparse=m.plan.sparse)
        else:
            want = naive.hadamard_count_mean_sketch(values, key, m.hashes, m.width, m.plan.t_keep, words, unknown)
        np.testing.assert_array_equal(out, want.astype(out.dtype))
    assert sketch_key(5) == (np.uint64(int.from_bytes(key[:8], "little")), np.uint64(int.from_bytes(key[8:], "little")))


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 4.0, 8.0, 20.0])
def test_sparse_bits_have_the_plans_exact_distribution(epsilon):
    """The sparse layout (forced at width 16, its pool one word so that most records also read SipHash's lane
    words) against the plan's exact report distribution, given a fixed first word: chi-square at α = 1e-6 over
    2·10^5 reports of a known value and of an unknown one. Negative control: the last mask level compared with the
    wrong bit of t (every other bit 1 with probability q ± 2^-levels) is rejected."""
    m = with_sparse(ldp.CountMeanSketch(epsilon, 3, width=16, hashes=4), pool=1)
    sp, n = m.plan.sparse, 200_000
    assert sp.q == m.plan.bits.q
    seed = int(np.random.default_rng(5).bit_generator.random_raw(1)[0])
    c = m.words_per_record

    def counts(mech, v):
        words = np.random.default_rng(6 + v).bit_generator.random_raw(n * c)
        words[::c] = seed  # the first word: the hash index, independent of the value
        values = mech.prepare_values(np.full(n, v if v >= 0 else 99), unknown="uniform")
        out = mech._allocate_reports(n)
        mech._run_kernel(values, words, out)
        return np.unique(out[:, 0].astype(np.int64) | out[:, 1].astype(np.int64) << 8 | out[:, 2].astype(np.int64)
                         << 16, return_counts=True)

    for v in (1, -1):
        probs = m.plan.exact_probabilities(v, seed)
        keys, got = counts(m, v)
        assert set(keys.tolist()) <= set(probs)
        table = sorted(probs)
        observed = dict(zip(keys.tolist(), got.tolist()))
        check_kernel_matches([observed.get(y, 0) for y in table], [float(probs[y]) for y in table])
    bad = dataclasses.replace(m.plan, sparse=dataclasses.replace(sp, t_high=sp.t_high ^ 1))
    mutant = ldp.CountMeanSketch(epsilon, 3, width=16, hashes=4)
    mutant._plan = bad
    keys, got = counts(mutant, 1)
    probs = m.plan.exact_probabilities(1, seed)
    observed = dict(zip(keys.tolist(), got.tolist()))
    with pytest.raises(PrivacyViolation, match="do not match"):
        check_kernel_matches([observed.get(y, 0) for y in sorted(probs)], [float(probs[y]) for y in sorted(probs)])


def test_the_sparse_layout_reads_fewer_words():
    """At the default width every ε draws its other bits sparsely: 92 words per person instead of 258 at ε = 4
    (the lanes' 2 + 1024·16/64), and far fewer random bits per report bit than the lanes' 8 or 16."""
    for epsilon in (0.05, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0):
        m = ldp.CountMeanSketch(epsilon, width=1024)
        lanes = 1 + m.plan.bits.words_per_record
        assert m.plan.sparse is not None and m.words_per_record < lanes, epsilon
    assert ldp.CountMeanSketch(4.0, width=1024).words_per_record == 92
    assert ldp.CountMeanSketch(4.0, width=8).plan.sparse is None  # one chunk: the lanes are fewer words


@pytest.mark.parametrize("variant", ["cms", "hcms"])
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 5.0, 12.0, 20.0])
def test_exact_epsilon_is_tight_at_every_epsilon(variant, epsilon):
    """The structural ratio (any first word) is ≤ the rigorous lower bound of e^ε and reaches it; the rows of a
    few first words reach it too, and the same sketch planned at 1.25 ε is refused."""
    width = 8 if variant == "cms" else 64
    m = ldp.CountMeanSketch(epsilon, 4, width=width, hashes=5, variant=variant)
    ratio = check_exact_epsilon([], epsilon, ratio=m.plan.extreme_ratio())  # ≤ E, and within 1e-6 of e^ε
    seeds = [int(w) for w in np.random.default_rng(3).bit_generator.random_raw(6)]
    worst = max(max_ratio([m.plan.exact_probabilities(v, s) for v in (-1, 0, 1, 2, 3)]) for s in seeds)
    assert worst <= ratio
    check_exact_epsilon([m.plan.exact_probabilities(v, seeds[0]) for v in range(4)], epsilon, ratio=worst)
    if 1.25 * epsilon <= 20:
        bad = ldp.CountMeanSketch(1.25 * epsilon, 4, width=width, hashes=5, variant=variant)
        with pytest.raises(PrivacyViolation, match="exceeds"):
            check_exact_epsilon([bad.plan.exact_probabilities(v, seeds[0]) for v in range(4)], epsilon,
                                ratio=bad.plan.extreme_ratio())


def test_hash_index_drawn_from_the_value_is_caught():
    """Planted bug: a client whose hash index depends on its value. Over (first word, report) pairs the exact
    check sees a report one value never sends: the index must come from a word that never sees the value."""
    m = ldp.CountMeanSketch(1.0, 3, width=8, hashes=4)
    seeds = [int(w) for w in np.random.default_rng(4).bit_generator.random_raw(4)]

    def honest(v):  # the first word is uniform over the seeds, independent of v
        return {(s, y): p / len(seeds) for s in seeds for y, p in m.plan.exact_probabilities(v, s).items()}

    def planted(v):  # the first word is the v-th seed: the index follows the value
        return {(seeds[v], y): p for y, p in m.plan.exact_probabilities(v, seeds[v]).items()}

    assert check_exact_epsilon([honest(v) for v in range(3)], 1.0) == m.plan.extreme_ratio()
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([planted(v) for v in range(3)], 1.0)


def test_textbook_estimator_is_biased_by_collisions_and_the_unbiased_one_is_not():
    """A 32 × 8 sketch, 12 categories, one held by half the people. The fixed family makes some categories collide
    with the heavy one in more than 8/32 of the hash functions: Apple's estimate of them is shifted by the exact bias
    ``n_heavy (A - 1/m) m/(m-1)``, which 30 collections show (z-test on the mean), while the unbiased estimate is on
    its true value within its own standard errors, whose spread matches the closed form."""
    m = ldp.CountMeanSketch(2.0, **SMALL)
    n, reps = 20_000, 30
    x, truth = collection(m, n, 0)
    a = collision_matrix(m)
    off = a - 1 / m.width
    np.fill_diagonal(off, 0.0)
    bias = off @ truth * m.width / (m.width - 1)  # exact expectation of Apple's estimate minus the truth
    z_apple, z_unbiased, apple_mean = [], [], np.zeros(m.k)
    for seed in range(reps):
        agg = m.aggregate(m.privatize(x, rng=seed))
        ub = m.estimate_frequencies(agg)
        ap = m.estimate_frequencies(agg, method="apple")
        z_unbiased.append((ub.counts - truth) / (ub.standard_errors * n))
        z_apple.append((ap.counts - truth - bias) / (ap.standard_errors * n))
        apple_mean += ap.counts / reps
    z_unbiased, z_apple = np.array(z_unbiased), np.array(z_apple)
    # unbiased: every category's mean z within 4.5 standard errors of 0, and unit spread (closed-form variance)
    assert np.all(np.abs(z_unbiased.mean(axis=0)) < 4.5 / np.sqrt(reps))
    assert 0.85 < z_unbiased.std() < 1.15
    # Apple's: centred on truth + the exact bias, with the spread its variance states ...
    assert np.all(np.abs(z_apple.mean(axis=0)) < 4.5 / np.sqrt(reps))
    assert 0.85 < z_apple.std() < 1.15
    # ... and that bias is far outside the noise of 30 collections for the most collided categories
    se_mean = ap.standard_errors * n / np.sqrt(reps)
    worst = int(np.argmax(np.abs(bias) / se_mean))
    assert abs(bias[worst]) > 10 * se_mean[worst] and abs(apple_mean[worst] - truth[worst]) > 8 * se_mean[worst]


def test_hcms_is_unbiased_and_its_standard_errors_hold():
    """HCMS (one bit per person): the unbiased estimate against the truth over 20 collections (z-tests)."""
    m = ldp.CountMeanSketch(3.0, 12, width=16, hashes=4096, variant="hcms")
    n, reps = 20_000, 20
    x, truth = collection(m, n, 1)
    z = []
    for seed in range(reps):
        est = m.estimate_frequencies(m.privatize(x, rng=100 + seed))
        z.append((est.counts - truth) / (est.standard_errors * n))
    z = np.array(z)
    assert np.all(np.abs(z.mean(axis=0)) < 4.5 / np.sqrt(reps))
    assert 0.8 < z.std() < 1.2
    assert est.standard_errors[1] * np.sqrt(n) == pytest.approx(np.sqrt(m.variance_per_report), rel=0.05)


def test_conjugate_gradients_agree_with_the_dense_solve(monkeypatch):
    """Above DENSE_MAX the system is solved by conjugate gradients and the variance to second order: the same
    estimates (1e-9) and standard errors (within 1%) as the exact dense route on the same aggregate."""
    m = ldp.CountMeanSketch(2.0, 60, width=64, hashes=16)
    x = np.random.default_rng(5).integers(0, 60, 30_000)
    agg = m.aggregate(m.privatize(x, rng=6))
    dense = m.estimate_frequencies(agg)
    monkeypatch.setattr(est_sketch, "DENSE_MAX", 10)
    cg = m.estimate_frequencies(agg)
    np.testing.assert_allclose(cg.frequencies, dense.frequencies, atol=1e-9)
    np.testing.assert_allclose(cg.standard_errors, dense.standard_errors, rtol=1e-2)


def _dense_off_diagonal_squares(positions, weights, width, s):
    """The reference: dense rows of A, Δ = A - 1/m with the diagonal left out."""
    delta = est_sketch.collision_block(positions, weights, width) - 1 / width
    np.fill_diagonal(delta, 0.0)
    return (delta**2).sum(axis=1), (delta**2) @ s


@pytest.mark.parametrize("n, k, width, zero", [(1500, 64, 256, False), (301, 16, 64, True), (2000, 256, 128, False),
                                               (1, 8, 16, False), (7, 3, 2, True)])
def test_the_variances_collision_sums_from_the_buckets_equal_the_dense_rows(n, k, width, zero):
    """The conjugate-gradient route's Σ_e Δ_de² and Σ_e Δ_de² s_e (the bucket kernel, O(k|D|²/m)) equal the dense
    rows' to 1e-12, blocks of rows not a multiple of the kernel's, uneven weights, a hash of weight 0 among them."""
    rng = np.random.default_rng(n)
    positions = rng.integers(0, width, (n, k))
    weights = rng.dirichlet(np.ones(k))
    if zero:
        weights[0] = 0.0
        weights /= weights.sum()
    s = rng.normal(size=n) * 100
    coll = est_sketch.CollisionMatrix(positions, weights, width)
    got = coll.off_diagonal_squares(s, float(width))
    ref = _dense_off_diagonal_squares(positions, weights, width, s)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * float(np.abs(b).max()))
    # negative control: a kernel that counted the diagonal (A_dd = 1) would be off by (1 - 1/m)² - 1/m² per row,
    # which this comparison sees (at m = 2 that term is 0: the diagonal cannot matter there)
    planted = got[0] + (1 - 1 / width) ** 2 - 1 / width**2
    assert width == 2 or not np.allclose(planted, ref[0], rtol=1e-6)


@pytest.mark.parametrize("variant", ["cms", "hcms"])
def test_aggregates_merge(variant):
    m = ldp.CountMeanSketch(1.0, item_type="bytes", width=64 if variant == "cms" else 128, hashes=1024,
                            variant=variant)
    items = [b"a", b"bb", b"\x00c", b"dd\x00e"] * 500
    whole = m.privatize(items, rng=np.random.default_rng(7))
    g = np.random.default_rng(7)
    parts = [m.privatize(c, rng=g) for c in (items[:700], items[700:701], items[701:])]
    merged = ldp.Aggregate.merge([m.aggregate(p) for p in parts])
    assert merged == m.aggregate(whole) and merged.n_reports == len(items)
    assert m.aggregate(whole) + m.empty_aggregate() == m.aggregate(whole)
    a = m.estimate_frequencies(merged, candidates=[b"a", b"bb", b"\x00c", b"dd\x00e"])
    assert a == m.estimate_frequencies(whole, candidates=[b"a", b"bb", b"\x00c", b"dd\x00e"])
    assert ldp.from_spec(merged.spec) == m


def test_string_items_are_found_with_their_shares():
    words = ["privacy", "sketch", "émoji", "😀", "a"]
    shares = [0.35, 0.25, 0.2, 0.15, 0.05]
    x = np.random.default_rng(8).choice(words, 40_000, p=shares).tolist()
    for variant in ("cms", "hcms"):
        m = ldp.CountMeanSketch(4.0, width=256, hashes=256, variant=variant)
        est = m.estimate_frequencies(m.privatize(x, rng=9), candidates=words + ["absent"])
        assert est.items[:5] == tuple(words) and est.provenance["candidates"] == 6
        truth = np.array([x.count(w) for w in est.items]) / len(x)
        assert np.all(np.abs(est.frequencies - truth) < 4.5 * est.standard_errors)


def test_bad_parameters_and_candidates_get_one_clear_error(monkeypatch):
    with pytest.raises(ValueError, match="power of two"):
        ldp.CountMeanSketch(1.0, width=1000, variant="hcms")
    with pytest.raises(ValueError, match="multiple of 8"):
        ldp.CountMeanSketch(1.0, width=1001)
    with pytest.raises(ValueError, match="variant"):
        ldp.CountMeanSketch(1.0, variant="count-min")
    with pytest.raises(TypeError, match="variant"):
        ldp.CountMeanSketch(1.0, variant=1)
    for bad, exc in [(0, ValueError), (2**16 + 1, ValueError), (2.0, TypeError), (True, TypeError)]:
        with pytest.raises(exc, match="hashes"):
            ldp.CountMeanSketch(1.0, hashes=bad)
    with pytest.raises(ValueError, match="hash_seed"):
        ldp.CountMeanSketch(1.0, hash_seed=-1)
    with pytest.raises(ValueError, match="item_type"):
        ldp.CountMeanSketch(1.0, item_type="float")

    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")

    monkeypatch.setattr(_random.WordSource, "draw", forbidden)
    items = ldp.CountMeanSketch(1.0, width=64, hashes=16)
    with pytest.raises(TypeError, match="item 1"):
        items.privatize(["a", 2])
    with pytest.raises(TypeError, match="built for str items"):
        items.privatize([b"a"])
    with pytest.raises(ValueError, match="cannot be imputed"):
        items.privatize(["a"], nan_policy="impute", fill_value=0)
    with pytest.raises(ValueError, match="category codes"):
        items.privatize(["a"], unknown="uniform")
    monkeypatch.undo()

    agg = items.aggregate(items.privatize(["a", "b"], rng=0))
    with pytest.raises(TypeError, match="candidates"):
        items.estimate_frequencies(agg)
    with pytest.raises(ValueError, match="distinct"):
        items.estimate_frequencies(agg, candidates=["a", "b", "a"])
    with pytest.raises(ValueError, match="empty"):
        items.estimate_frequencies(agg, candidates=[])
    with pytest.raises(ValueError, match="method"):
        items.estimate_frequencies(agg, candidates=["a"], method="median")
    with pytest.raises(ValueError, match="at most width·hashes/16 = 64"):
        items.estimate_frequencies(agg, candidates=[str(i) for i in range(65)])
    assert items.estimate_frequencies(agg, candidates=[str(i) for i in range(65)], method="apple").k == 65
    codes = ldp.CountMeanSketch(1.0, 10, width=64, hashes=16)
    agg = codes.aggregate(codes.privatize(np.arange(10), rng=0))
    with pytest.raises(ValueError, match=r"1 value.* first at index 1"):
        codes.estimate_frequencies(agg, candidates=[3, 10, 2])
    with pytest.raises(ValueError, match="distinct codes"):
        codes.estimate_frequencies(agg, candidates=[3, 3])
    with pytest.raises(ValueError, match="no reports"):
        codes.estimate_frequencies(codes.empty_aggregate())
    big = ldp.CountMeanSketch(1.0, 2**20, width=64, hashes=16)
    with pytest.raises(ValueError, match="at most"):
        big.estimate_frequencies(big.aggregate(big.privatize([1, 2], rng=0)))


def test_candidates_sharing_every_hash_value_are_refused():
    m = ldp.CountMeanSketch(1.0, 2000, width=16, hashes=2)  # 256 signatures for 2000 codes
    agg = m.aggregate(m.privatize(np.arange(50), rng=0))
    pos = sketch_positions(np.arange(100, dtype=np.uint64), 2, 16, m.plan.key)
    i, j = next((i, j) for i in range(100) for j in range(i) if (pos[i] == pos[j]).all())
    with pytest.raises(ValueError, match=f"candidates {j} and {i} have the same value under all 2 hash"):
        m.estimate_frequencies(agg, candidates=[j, i])


def test_reports_and_column_codes():
    cms = ldp.CountMeanSketch(1.0, 5, width=1024, hashes=256)
    r = cms.privatize(np.arange(5), rng=0)
    sparse = cms.plan.sparse  # ε = 1: three mask words per 64 bits, a pool of 8-bit lanes, two key words
    assert (sparse.levels, sparse.lane_bits, sparse.pool_words) == (3, 8, 22)
    assert r.codes.shape == (5, 129) and cms.bytes_per_report == 129 and cms.words_per_record == 2 + 48 + 22 + 2
    with pytest.raises(TypeError, match="variant='hcms'"):
        cms.column_codes(r)
    hcms = ldp.CountMeanSketch(1.0, 5, width=1024, hashes=256, variant="hcms")
    r = hcms.privatize(np.arange(5), rng=0)
    assert r.codes.dtype == np.uint32 and hcms.bytes_per_report == 4 and hcms.words_per_record == 2
    np.testing.assert_array_equal(hcms.column_codes(r), r.codes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert repr(hcms).startswith("CountMeanSketch(epsilon=1.0, k=5, width=1024")


def test_a_cms_report_of_at_most_64_bits_is_a_table_column():
    """width 32 + a 2-bit hash index = 34 bits: one uint64 code per person through pandas, back to the same reports;
    a code with a bit beyond the report or a hash index past ``hashes`` is refused."""
    import pandas as pd

    from ldpnum._random import child_rng

    cms = ldp.CountMeanSketch(2.0, k=100, width=32, hashes=3)
    x = pd.Series(np.random.default_rng(0).integers(0, 5, 5000), name="c")
    col = x.ldp.privatize(cms, rng=0)
    assert col.dtype == np.uint64 and cms.spec.get("packed_bits") == 34
    assert col.ldp.reports() == cms.privatize(x.to_numpy(), rng=child_rng(0, 0))
    assert col.ldp.aggregate() == cms.aggregate(col.ldp.reports())
    with pytest.raises(ValueError, match="bits set beyond the 34 bits"):
        cms.reports_from_column(np.array([1 << 40], dtype=np.uint64))
    with pytest.raises(ValueError, match="hash index"):
        cms.aggregate(cms.reports_from_column(np.array([3 << 32], dtype=np.uint64)))


def test_long_items_are_hashed_through_their_digest_and_found_with_their_shares():
    """256-bit items (up to 32 bytes): the kernel hashes each item's digest (same words, same bytes as the naive
    sketch on the digests), and the unbiased estimates of long words that share their first 8 bytes hold."""
    from ldpnum.heavy.items import encode_items, item_digests

    words = ["internationalisation", "international", "internationale", "https://example.org/" + "x" * 12]
    shares = [0.4, 0.3, 0.2, 0.1]
    x = np.random.default_rng(18).choice(words, 12_000, p=shares).tolist()
    key = naive.sketch_key_bytes(0)
    m = ldp.CountMeanSketch(4.0, width=256, hashes=256, item_bits=256)
    values = m.prepare_values(x[:50])
    assert np.array_equal(values, item_digests(encode_items(x[:50], 256)[0], 256))
    raw = np.random.default_rng(2).bit_generator.random_raw(50 * m.words_per_record)
    out = m._allocate_reports(50)
    m._run_kernel(values, raw, out)
    u = m.plan.bits
    want = naive.count_mean_sketch(values, key, m.hashes, m.width, u.lane_bits, u.t_other, u.t_true, raw, None,
                                   sparse=m.plan.sparse)
    np.testing.assert_array_equal(out, want.astype(out.dtype))
    for variant in ("cms", "hcms"):
        m = ldp.CountMeanSketch(4.0, width=256, hashes=256, item_bits=256, variant=variant)
        est = m.estimate_frequencies(m.privatize(x, rng=19), candidates=words + ["international airport"])
        assert est.items[:4] == tuple(words)
        truth = np.array([x.count(w) for w in est.items]) / len(x)
        assert np.all(np.abs(est.frequencies - truth) < 4.5 * est.standard_errors)
    short = ldp.CountMeanSketch(4.0)  # what 64 bits could not tell apart
    with pytest.raises(ValueError, match="encodes to the same 64-bit word"):
        short.estimate_frequencies(short.empty_aggregate(), candidates=words[:2])


def test_long_items_bad_input_before_any_draw(monkeypatch):
    from ldpnum import _random

    with pytest.raises(ValueError, match=r"item_bits must be in \[1, 256\]; got 257"):
        ldp.CountMeanSketch(2.0, item_bits=257)
    with pytest.raises(ValueError, match="bytes items need item_bits a multiple of 8"):
        ldp.CountMeanSketch(2.0, item_bits=130, item_type="bytes")
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: pytest.fail("words drawn for a bad input"))
    with pytest.raises(ValueError, match=r"2\*\*item_bits = 2\*\*130; 1 item\(s\) are not, first at index 2"):
        ldp.CountMeanSketch(2.0, item_bits=130, item_type="uint").privatize([1, 2, 2**130], rng=0)


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("width,hashes", [(1024, 256), (16, 1), (64, 257)])
def test_the_mechanisms_guide_table_row_holds(epsilon, width, hashes):
    # docs/guides/mechanisms.md, the CountMeanSketch row: bytes, words per record, code type, per-report variance
    cms = ldp.CountMeanSketch(epsilon, width=width, hashes=hashes, variant="cms")
    hcms = ldp.CountMeanSketch(epsilon, width=width, hashes=hashes, variant="hcms")
    assert cms.bytes_per_report == width // 8 + math.ceil(max(1, math.ceil(math.log2(hashes))) / 8)
    lane = 8 if epsilon <= 2 else 16
    lanes = width * lane // 64  # the other bits' words with the lanes; the sparse layout when it reads fewer
    sparse = cms.plan.sparse
    assert cms.words_per_record == (2 + sparse.words if sparse is not None else 2 + lanes)
    assert sparse is None or sparse.words < lanes
    assert hcms.words_per_record == 2
    codes = hcms.privatize(["a", "b"], rng=0).codes
    assert codes.dtype == np.min_scalar_type(2 * width * hashes - 1)
    e, m = math.exp(epsilon), width
    collisions = (m / (m - 1)) ** 2
    # CMS on SUE's integer plan: the realized ε is at most the stated one, within 0.15% in variance here
    assert cms.variance_per_report == pytest.approx(collisions * math.exp(epsilon / 2) / math.expm1(epsilon / 2) ** 2,
                                                    rel=2e-3)
    assert hcms.variance_per_report == pytest.approx(collisions * ((e + 1) / (e - 1)) ** 2, rel=1e-9)
    bits = width + max(1, math.ceil(math.log2(hashes)))
    if bits <= 64:  # one table-column code per person
        cms.check_column_codes()
    else:
        with pytest.raises(TypeError, match=f"{bits} bits per person"):
            cms.check_column_codes()
