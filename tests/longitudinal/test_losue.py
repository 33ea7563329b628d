"""L-OSUE: the instantaneous flip against Arcolezi et al.'s p2, exact ε1/ε∞ (enumerated at k ≤ 4, structural for any
k) with negative controls, the kernels against the naive references, sampled bits against the composed plan, and
unbiasedness from the closed-form variance. The common checks (memoization, rounds, bad input) are in
test_longitudinal.py."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum._kernels import client_longitudinal
from ldpnum.frequency.unary import sparse_bits, unary_extreme_ratio
from ldpnum.longitudinal import losue
from ldpnum.longitudinal.losue import LOSUE, BitFlipPlan, bit_flip_plan, losue_p2

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio

ALPHA = 1e-6
GRID = [(0.5, 0.1), (1.0, 0.5), (1.0, 0.99), (2.0, 1.0), (4.0, 0.5), (4.0, 3.9), (8.0, 4.0), (20.0, 10.0),
        (20.0, 0.01)]


@pytest.mark.parametrize("eps_inf, eps_1", GRID)
def test_symmetric_flip_at_ideal_oue_is_the_papers_p2(eps_inf, eps_1):
    q1 = 1 / (math.exp(eps_inf) + 1)
    assert losue._symmetric_one(0.5, q1, math.exp(eps_1)) == pytest.approx(losue_p2(eps_inf, eps_1), rel=1e-12)


@pytest.mark.parametrize("eps_inf, eps_1", GRID)
def test_realized_flip_is_nearly_symmetric_and_solves_the_realized_plan(eps_inf, eps_1):
    m = LOSUE(eps_inf, eps_1, 8)
    plan, perm = m.instantaneous_plan, m.permanent_plan
    b = plan.lane_bits
    asymmetry = abs(plan.one + plan.zero - 1)
    assert asymmetry * 2**b <= losue._ASYMMETRY[b] or (b == 32 and eps_1 > 12 and asymmetry < 0.1)
    one = losue._symmetric_one(float(perm.p), float(perm.q), math.exp(eps_1))
    assert float(plan.one) == pytest.approx(one, abs=float(asymmetry) + 2**-b)


@pytest.mark.parametrize("eps_inf, eps_1", GRID)
@pytest.mark.parametrize("k", [2, 1024, 2**16])
def test_structural_epsilons_are_at_most_the_stated_ones_and_tight(eps_inf, eps_1, k):
    m = LOSUE(eps_inf, eps_1, k)
    p, q = m.exact_support_probabilities()
    check_exact_epsilon([], eps_1, ratio=unary_extreme_ratio(p, q))
    check_exact_epsilon([], eps_inf, ratio=m.permanent_plan.extreme_ratio())
    e1, e_inf = m.structural_epsilons()
    assert e1 <= eps_1 and e1 == pytest.approx(eps_1, rel=1e-6)
    assert e_inf <= eps_inf and e_inf == pytest.approx(eps_inf, rel=1e-6)


@pytest.mark.parametrize("kw", [dict(epsilon_permanent=2.0, epsilon_report=1.0, k=4),
                                dict(epsilon_permanent=1.0, epsilon_report=0.2, k=3),
                                dict(epsilon_permanent=6.0, epsilon_report=5.0, k=2)])
def test_enumeration_over_every_report_agrees_with_the_structural_reduction(kw):
    m = LOSUE(**kw)
    states = m.memo_states() + [-1]  # every category, and an unknown value (every permanent bit at q1)
    rows = [m.report_probabilities(s) for s in states]
    ratio = check_exact_epsilon(rows, m.epsilon_report)
    p, q = m.exact_support_probabilities()
    assert ratio == unary_extreme_ratio(p, q)
    perm_rows = [m.permanent_probabilities(s) for s in states]
    assert check_exact_epsilon(perm_rows, m.epsilon_permanent) == m.permanent_plan.extreme_ratio()
    # the composed plan's bits are independent with the composed (p*, q*)
    assert rows[0] == naive.enumerate_reports([p] + [q] * (m.k - 1))


def test_exact_check_rejects_a_flip_rounded_the_wrong_way_and_a_missing_flip():
    m = LOSUE(2.0, 1.0, 4)
    plan = m.instantaneous_plan
    for bad in (BitFlipPlan(plan.k, plan.lane_bits, plan.t_zero, plan.t_one + 2**12),   # P[1|1] rounded up
                BitFlipPlan(plan.k, plan.lane_bits, 0, 2**plan.lane_bits - 1)):          # (almost) no flip
        p, q = losue._composed(m.permanent_plan.p, m.permanent_plan.q, bad.one, bad.zero)
        with pytest.raises(PrivacyViolation, match="exceeds"):
            check_exact_epsilon([], m.epsilon_report, ratio=unary_extreme_ratio(p, q))
        rows = [m.permanent_probabilities(s) for s in range(4)]
        composed = [{y: sum(pz * bad.exact_probabilities(z)[y] for z, pz in r.items()) for y in range(16)}
                    for r in rows]
        assert max_ratio(composed) == unary_extreme_ratio(p, q)


def test_bit_flip_plan_keeps_realized_epsilon_at_most_the_stated_one_on_a_fine_grid():
    perm = LOSUE(3.0, 1.0, 8).permanent_plan
    for eps_1 in np.linspace(0.01, 2.99, 60):
        plan = bit_flip_plan(perm, float(eps_1))
        p, q = losue._composed(perm.p, perm.q, plan.one, plan.zero)
        check_exact_epsilon([], float(eps_1), ratio=unary_extreme_ratio(p, q))


# -- kernels against the naive references ------------------------------------------------------------------

@pytest.mark.parametrize("k", [3, 8, 13, 70])
@pytest.mark.parametrize("lane_bits", [8, 16, 32])
def test_bit_flip_kernel_matches_naive(k, lane_bits):
    rng = np.random.default_rng(k * lane_bits)
    n = 40
    plan = BitFlipPlan(k, lane_bits, int(rng.integers(1, 2**lane_bits // 2)),
                       int(rng.integers(2**lane_bits // 2, 2**lane_bits)))
    bits = ldp.frequency.unary.pack_bits(rng.integers(0, 2, (n, k)))
    words = rng.integers(0, 2**64, n * plan.words_per_record, dtype=np.uint64)
    out = np.empty_like(bits)
    tail = k & 7
    client_longitudinal.bit_flip_kernel(bits, lane_bits, *plan.kernel_thresholds(),
                                        np.uint8((1 << tail) - 1 if tail else 0xFF), words, out)
    want = naive.bit_flip(bits, k, lane_bits, plan.t_zero, plan.t_one, words)
    assert np.array_equal(out, want)
    assert not np.array_equal(want, naive.bit_flip(bits, k, lane_bits, plan.t_zero, plan.t_one, words,
                                                   mutant="keep"))


def _sparse_flip(kernel_plan, pool=None):
    """``kernel_plan`` with its bits drawn by the sparse layout (whatever its k; the levels of its layout at k = 1024,
    so that small k have mask levels too), its lane pool ``pool`` words if given (``pool=1``: records read lane
    words past the pool, from SipHash under their key words)."""
    layout = dataclasses.replace(sparse_bits(1024, kernel_plan.lane_bits, kernel_plan.t_zero, kernel_plan.t_one),
                                 n_bits=8 * kernel_plan.n_bytes)
    if pool is not None:
        layout = dataclasses.replace(layout, pool_words=pool)
    assert layout.levels > 0
    return dataclasses.replace(kernel_plan, sparse=layout)


def _run_flip(plan, bits, words):
    m = LOSUE(2.0, 1.0, plan.k)
    m._plan = plan
    out = np.empty_like(bits)
    m._run_instantaneous(bits, words, out)
    return out


@pytest.mark.parametrize("k, lane_bits, pool", [(3, 8, None), (13, 16, 1), (70, 16, None), (70, 32, 1),
                                                (1024, 16, None), (1024, 8, 2)])
def test_sparse_bit_flip_kernel_matches_naive(k, lane_bits, pool):
    """Same words, same bytes: the sparse flip against tests/naive.py (the pool cut short in some cases, so that
    records read SipHash's lane words past it); the planted flip that keeps input 1 bits is told apart."""
    rng = np.random.default_rng(k * lane_bits)
    n = 40 if k < 1024 else 12
    plan = _sparse_flip(BitFlipPlan(k, lane_bits, int(rng.integers(1, 2**lane_bits // 2)),
                                    int(rng.integers(2**lane_bits // 2, 2**lane_bits))), pool)
    bits = ldp.frequency.unary.pack_bits(rng.integers(0, 2, (n, k)))
    words = rng.integers(0, 2**64, n * plan.words_per_record, dtype=np.uint64)
    want = naive.bit_flip(bits, k, lane_bits, plan.t_zero, plan.t_one, words, sparse=plan.sparse)
    assert np.array_equal(_run_flip(plan, bits, words), want)
    assert not np.array_equal(want, naive.bit_flip(bits, k, lane_bits, plan.t_zero, plan.t_one, words,
                                                   mutant="keep", sparse=plan.sparse))


@pytest.mark.parametrize("eps_inf, eps_1", [(2.0, 1.0), (4.0, 0.5), (20.0, 10.0)])
def test_sparse_flip_has_the_plans_exact_distribution(eps_inf, eps_1):
    """The sparse flip (forced at k = 8, its pool one word so that most records also read SipHash's lane words)
    against the plan's exact report distribution for two permanent vectors: chi-square at α = 1e-6 over 2·10^5
    reports of each. Negative control: the last mask level of input 1 bits compared with the wrong bit of t_one
    (P[1 | 1] off by 2^-levels) is rejected."""
    m = LOSUE(eps_inf, eps_1, 8)
    plan = _sparse_flip(m.instantaneous_plan, pool=1)
    n = 200_000

    def observed(p, z, seed):
        bits = np.full((n, 1), z, dtype=np.uint8)
        words = np.random.default_rng(seed).bit_generator.random_raw(n * p.words_per_record)
        keys, got = np.unique(_run_flip(p, bits, words)[:, 0], return_counts=True)
        return dict(zip(keys.tolist(), got.tolist()))

    for z in (0b10110010, 0b00000001):
        probs = plan.exact_probabilities(z)
        got = observed(plan, z, z)
        assert set(got) <= set(probs)
        check_kernel_matches([got.get(y, 0) for y in range(256)], [float(probs[y]) for y in range(256)])
    sp = plan.sparse
    bad = dataclasses.replace(plan, sparse=dataclasses.replace(sp, t_high_one=sp.thresholds()[1] ^ 1))
    probs = plan.exact_probabilities(0b10110010)
    got = observed(bad, 0b10110010, 7)
    with pytest.raises(PrivacyViolation, match="do not match"):
        check_kernel_matches([got.get(y, 0) for y in range(256)], [float(probs[y]) for y in range(256)])


def test_the_sparse_flip_reads_fewer_words_at_large_k():
    """At k = 1024 every benchmarked budget (and the grid's) draws the flip sparsely, 90 words per person on 16-bit
    lanes instead of 256; at k = 16 the lanes are fewer words, and the sparse layout is not used."""
    for eps_inf, eps_1 in GRID + [(1.0, 0.5), (2.0, 1.0), (4.0, 2.0)]:
        plan = LOSUE(eps_inf, eps_1, 1024).instantaneous_plan
        assert plan.sparse is not None and plan.words_per_record < plan.lane_words, (eps_inf, eps_1)
        assert (plan.sparse.q, plan.sparse.q_one) == (plan.zero, plan.one)
    for eps_inf in (1.0, 2.0, 4.0):
        plan = LOSUE(eps_inf, eps_inf / 2, 1024).instantaneous_plan
        assert (plan.lane_bits, plan.words_per_record, plan.lane_words) == (16, 90, 256)
        assert LOSUE(eps_inf, eps_inf / 2, 16).instantaneous_plan.sparse is None


@pytest.mark.parametrize("eps_perm, eps_report, lane_bits", [(2.0, 1.0, 8), (8.0, 4.0, 16), (12.0, 6.0, 32)])
def test_reports_match_naive_keyed_words_unary_and_flip(eps_perm, eps_report, lane_bits):
    # The permanent kernel derives its keyed words itself: the same bits as OUE's unary kernel fed keyed_words, on
    # each of OUE's lane widths.
    m = LOSUE(eps_perm, eps_report, 13)
    assert m.permanent_plan.lane_bits == lane_bits
    n = 25
    x = np.arange(n) % 13
    keys = ldp.ClientKeys.generate(n, rng=5)
    raw = keys.to_bytes()
    perm, plan = m.permanent_plan, m.instantaneous_plan
    words = np.array([w for i in range(n) for w in naive.keyed_words(raw[16 * i:16 * i + 16], m.tweak, x[i],
                                                                      m.permanent_words)], dtype=np.uint64)
    permanent = naive.unary(x, 13, perm.lane_bits, perm.t_other, perm.t_true, words)
    assert np.array_equal(m.permanent(x, keys=keys), permanent)
    fresh = ldp._random.resolve_rng(9).draw(n * m.instantaneous_words)
    want = naive.bit_flip(permanent, 13, plan.lane_bits, plan.t_zero, plan.t_one, fresh)
    assert np.array_equal(m.privatize(x, keys=keys, rng=9).codes, want)


def test_reports_match_naive_with_the_sparse_flip():
    """privatize at k = 200 (the sparse flip): keyed OUE bits, then the sparse flip of tests/naive.py."""
    m = LOSUE(2.0, 1.0, 200)
    plan = m.instantaneous_plan
    assert plan.sparse is not None
    n = 10
    x = np.arange(n) * 19 % 200
    keys = ldp.ClientKeys.generate(n, rng=5)
    permanent = m.permanent(x, keys=keys)
    fresh = ldp._random.resolve_rng(9).draw(n * m.instantaneous_words)
    want = naive.bit_flip(permanent, 200, plan.lane_bits, plan.t_zero, plan.t_one, fresh, sparse=plan.sparse)
    assert np.array_equal(m.privatize(x, keys=keys, rng=9).codes, want)


def test_memo_values_are_the_categories():
    m = LOSUE(2.0, 1.0, 5)
    keys = ldp.ClientKeys.generate(4, rng=1)
    assert m.memo_values([0, 4, 2, 9], keys=keys, unknown="uniform").tolist() == [0, 4, 2, 2**64 - 1]


# -- sampled bits against the composed plan, unbiasedness ------------------------------------------------------

def _bit_counts_pvalue(counts, n, v, p, q):
    """Chi-square (1 + (k - 1) degrees of freedom) of independent per-bit binomial counts against p at bit v and q
    elsewhere."""
    counts = np.asarray(counts, dtype=np.float64)
    probs = np.full(counts.size, q)
    probs[v] = p
    stat = float(np.sum((counts - n * probs) ** 2 / (n * probs * (1 - probs))))
    return stats.chi2.sf(stat, counts.size)


@pytest.mark.parametrize("eps_inf, eps_1, k", [(2.0, 1.0, 1024), (4.0, 0.5, 40), (1.0, 0.9, 9)])
def test_report_bits_over_keys_follow_the_composed_plan(eps_inf, eps_1, k):
    m = LOSUE(eps_inf, eps_1, k)
    n, v = 20_000, k // 3
    keys = ldp.ClientKeys.generate(n, rng=k)
    agg = m.aggregate(m.privatize(np.full(n, v), keys=keys, rng=k + 1))
    p, q = m.support_probabilities
    assert _bit_counts_pvalue(agg.counts, n, v, p, q) > ALPHA
    # negative control: the same counts are far from the plan without the flip (the permanent OUE's)
    assert _bit_counts_pvalue(agg.counts, n, v, float(m.permanent_plan.p), float(m.permanent_plan.q)) < ALPHA


def test_permanent_bits_over_keys_follow_oue():
    m = LOSUE(2.0, 1.0, 256)
    n, v = 20_000, 100
    perm = m.permanent(np.full(n, v), keys=ldp.ClientKeys.generate(n, rng=3))
    counts = np.unpackbits(perm, axis=1, count=256, bitorder="little").sum(axis=0)
    assert _bit_counts_pvalue(counts, n, v, float(m.permanent_plan.p), float(m.permanent_plan.q)) > ALPHA


@pytest.mark.parametrize("eps_inf, eps_1, k", [(2.0, 1.0, 16), (4.0, 0.5, 100)])
def test_frequency_estimates_are_unbiased(eps_inf, eps_1, k):
    m = LOSUE(eps_inf, eps_1, k)
    n = 100_000
    rng = np.random.default_rng(7)
    f = rng.dirichlet(np.ones(k))
    x = rng.choice(k, n, p=f)
    truth = np.bincount(x, minlength=k) / n
    keys = ldp.ClientKeys.generate(n, rng=8)
    est = m.estimate_frequencies(m.privatize(x, keys=keys, rng=9, round=0))
    se = np.sqrt(m.variance(truth) / n)
    z = (est.frequencies - truth) / se
    assert np.max(np.abs(z)) < stats.norm.isf(ALPHA / (2 * k))
    p, q = m.support_probabilities
    assert m.variance(0.0) == pytest.approx(q * (1 - q) / (p - q) ** 2)


def test_bad_parameters_get_one_clear_error():
    with pytest.raises(ValueError, match="epsilon_report must be below epsilon_permanent"):
        LOSUE(1.0, 1.0, 4)
    with pytest.raises(ValueError, match="epsilon_report must be below epsilon_permanent"):
        LOSUE(1.0, 2.0, 4)
    with pytest.raises(ValueError, match="LOSUE supports k <= 65536"):
        LOSUE(2.0, 1.0, 2**16 + 1)
    with pytest.raises(ValueError, match="k"):
        LOSUE(2.0, 1.0, 1)
    with pytest.raises(TypeError, match="k"):
        LOSUE(2.0, 1.0, 4.0)
    with pytest.raises(ValueError, match="too close"):
        LOSUE(20.0, 20.0 - 1e-12, 4)


def test_public_name_and_registry():
    assert ldp.LOSUE is LOSUE and "losue" in ldp.base.memoized_mechanisms()
    assert ldp.base.lookup("l_osue") is LOSUE
    m = LOSUE(2.0, 1.0, 12)
    assert repr(m) == "LOSUE(epsilon_permanent=2.0, epsilon_report=1.0, k=12)"
    assert m.spec.get("packed_bits") == 12 and m.spec.get("epsilon_permanent") == 2.0
