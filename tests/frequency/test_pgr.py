"""Projective geometry response (ldpnum/frequency/pgr.py): the geometry, exact ε by enumeration (tight, with
planted bugs), the kernel against the naive reference, the decoder against the naive O(n·k) one, unbiasedness
and the variance against subset selection's closed form, bad inputs."""

import math
from fractions import Fraction

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum._kernels import server_pgr
from ldpnum.frequency.pgr import MAX_CODES, PGRPlan, choose_q, hyperplane_dp, hyperplane_sums
from ldpnum.plans import TWO53, TWO64, exp_lower, uniform_count64

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon

#: Small instances: (ε, k, variant, q); every category of each is enumerated.
SMALL = [(0.5, 7, "pgr", 2), (1.0, 13, "pgr", 3), (2.0, 31, "pgr", 5), (4.0, 50, "pgr", None),
         (1.0, 20, "hybrid", 2), (3.0, 40, "hybrid", 3), (6.0, 5, "pgr", None)]


def make(eps, k, variant, q):
    return ldp.PGR(eps, k, variant=variant, q=q)


def rows(m):
    return [m.plan.exact_probabilities(v) for v in range(m.k)] + [m.plan.exact_probabilities(-1)]


def test_geometry_of_the_paper_setting():
    """k = 3,307,948 at ε = 5: q = 149 (next to e^5 + 1 = 149.4), t = 4, 3,330,300 codes of 22 bits."""
    m = ldp.PGR(5.0, 3_307_948)
    assert (m.q, m.t, m.blocks, m.n_cells) == (149, 4, 1, 3_330_300)
    assert m.plan.c == 22_351 and m.plan.c2 == 150
    assert m.privatize(np.array([0, 3_307_947]), rng=0).codes.dtype == np.uint32
    h = ldp.PGR(5.0, 3_307_948, variant="hybrid", q=3)
    assert (h.q, h.blocks, h.t) == (3, 50, 11) and h.n_cells == 50 * (3**11 - 1) // 2


@pytest.mark.parametrize("q,t", [(2, 2), (2, 4), (3, 3), (5, 3), (3, 4)])
def test_numbering_and_hyperplanes(q, t):
    """Point indices are a bijection on the canonical vectors, in the reference's order; each hyperplane has
    c points and two meet in c' points."""
    plan = PGRPlan(q, t, 1, 2, 0)
    pts = naive.projective_points(q, t)
    assert [tuple(plan.space.point(i)) for i in range(plan.b)] == pts
    assert all(plan.space.index(list(p)) == i for i, p in enumerate(pts))
    inc = np.array([[plan.space.dot(list(u), list(v)) == 0 for u in pts] for v in pts])
    assert np.all(inc.sum(axis=1) == plan.c) and np.array_equal(inc, inc.T)
    meet = inc.astype(int) @ inc.T.astype(int)
    assert np.all(meet[~np.eye(plan.b, dtype=bool)] == plan.c2)


@pytest.mark.parametrize("eps,k,variant,q", SMALL)
def test_exact_epsilon_by_enumeration(eps, k, variant, q):
    """Every category (and the unknown value) over every code: rows sum to 1, ratios ≤ e^ε, tight; the
    structural bound holds and bounds the enumerated ratio."""
    m = make(eps, k, variant, q)
    worst = check_exact_epsilon(rows(m), eps)
    assert worst <= m.plan.extreme_ratio_bound() <= exp_lower(eps)
    # the set cells map onto v's hyperplane, the complement cells onto everything else, one to one
    plan = m.plan
    for v in (0, k - 1):
        inside = {plan.inside_code(v, i) for i in range(plan.c)}
        outside = [plan.outside_code(v, o) for o in range(plan.n_outside)]
        assert len(inside) == plan.c and all(plan.supports(u, v) for u in inside)
        assert sorted(inside | set(outside)) == list(range(plan.n_codes)) and len(set(outside)) == len(outside)


def test_exact_check_rejects_planted_bugs():
    """Negative controls: (1) the threshold planned for 1.25 ε; (2) the complement drawn from all K codes
    (the hyperplane included, so its points get more than e^ε times the others); (3) the set drawn with one point missed and
    another doubled (a broken lift)."""
    m = ldp.PGR(1.0, 13, q=3)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows(ldp.PGR(1.25, 13, q=3)), 1.0)
    plan = m.plan
    p_in = Fraction(plan.t_in, TWO53)

    def mutant_all_codes(v):
        row = {u: (1 - p_in) * Fraction(uniform_count64(u, plan.n_codes), TWO64) for u in range(plan.n_codes)}
        for i in range(plan.c):
            row[plan.inside_code(v, i)] += p_in * Fraction(uniform_count64(i, plan.c), TWO64)
        return row

    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([mutant_all_codes(v) for v in range(13)], 1.0)

    def mutant_lift(v):
        row = plan.exact_probabilities(v)
        a, b = plan.inside_code(v, 0), plan.inside_code(v, 1)
        row[b] += row[a] - (1 - p_in) / plan.n_outside  # cell 0 lands on cell 1's point; a keeps an outside mass
        row[a] = (1 - p_in) / plan.n_outside
        total = sum(row.values())
        return {u: p / total for u, p in row.items()}

    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([mutant_lift(v) for v in range(13)], 1.0)


@pytest.mark.parametrize("eps,k,variant,q", [(1.0, 13, "pgr", 3), (2.0, 200, "pgr", None),
                                             (2.5, 60, "hybrid", 3), (0.7, 30, "hybrid", 2)])
def test_pgr_kernel_matches_naive_on_the_same_words(eps, k, variant, q):
    m = make(eps, k, variant, q)
    x = np.concatenate([np.arange(k), np.random.default_rng(5).integers(0, k, 1500)])
    r = m.privatize(x, rng=7)
    words = np.random.default_rng(7).bit_generator.random_raw(2 * x.size)
    ref = naive.pgr(x, m.q, m.t, m.blocks, m.plan.t_in, words)
    np.testing.assert_array_equal(r.codes.astype(np.int64), ref)
    u = m.privatize(np.array([-5, k + 3, 0]), rng=3, unknown="uniform")
    ref_u = naive.pgr([-1, -1, 0], m.q, m.t, m.blocks, m.plan.t_in,
                      np.random.default_rng(3).bit_generator.random_raw(6))
    np.testing.assert_array_equal(u.codes.astype(np.int64), ref_u)


@pytest.mark.parametrize("q,t,h", [(2, 2, 1), (2, 5, 3), (3, 3, 2), (3, 4, 1), (5, 3, 1), (7, 3, 2), (11, 2, 1)])
def test_decoder_matches_naive(q, t, h):
    """The hyperplane sums of every category — the dynamic program, the scattered walks and the choice between
    them — and of candidates, against the O(n·k) reference."""
    plan = PGRPlan(q, t, h, h * (q**t - 1) // (q - 1), 0)
    codes = np.random.default_rng(q * t + h).integers(0, plan.n_codes, 400)
    hist = np.bincount(codes, minlength=plan.n_codes)
    want = naive.pgr_supports(codes, q, t, plan.k)
    np.testing.assert_array_equal(hyperplane_sums(hist, plan), want)
    sp, b = plan.space, plan.b
    scattered = np.zeros(plan.n_codes, dtype=np.int64)
    server_pgr.hyperplane_scatter(hist, scattered, q, t, h, sp.offs, sp.pows, sp.inv)
    np.testing.assert_array_equal(scattered, want)
    lanes = np.ascontiguousarray(hist.reshape(h, b).T)
    for workers in (1, 2, 3):
        np.testing.assert_array_equal(hyperplane_dp(lanes, plan, n_workers=workers).T.reshape(-1), want)
    cand = np.array([0, plan.k - 1, plan.k // 2, 0])
    np.testing.assert_array_equal(hyperplane_sums(hist, plan, cand), want[cand])


# (at most 255 codes: the uint8 signature of the kernel that the common checks compile anyway)
@pytest.mark.parametrize("kwargs", [dict(epsilon=2.0, k=50), dict(epsilon=2.0, k=50, variant="hybrid"),
                                    dict(epsilon=1.0, k=50, variant="hybrid", q=2)])
def test_estimates_are_unbiased_with_the_closed_form_variance(kwargs):
    """z-scores of the estimates (the closed-form standard errors at the true frequencies) over 4 seeds and all
    k categories: mean within 4 standard errors of 0, spread of 1 within its sampling error (4·sqrt(1/(2·4k)))."""
    m = ldp.PGR(**kwargs)
    k = m.k
    p = np.r_[0.3, 0.2, np.full(k - 2, 0.5 / (k - 2))]
    x = np.random.default_rng(0).choice(k, 40_000, p=p)
    f = np.bincount(x, minlength=k) / x.size
    blocks = np.bincount(np.arange(k) // m.plan.b, weights=f)[np.arange(k) // m.plan.b]
    se = np.sqrt(m.variance(f, blocks if m.blocks > 1 else None) / x.size)
    z = np.concatenate([(m.estimate_frequencies(m.privatize(x, rng=s)).frequencies - f) / se for s in range(4)])
    assert abs(z.mean()) < 4 / math.sqrt(z.size)
    assert abs(z.std() - 1) < 4 * math.sqrt(1 / (2 * z.size))


def test_candidates_equal_the_full_decoding():
    m = ldp.PGR(2.0, 500, variant="hybrid")
    agg = m.aggregate(m.privatize(np.random.default_rng(1).integers(0, 50, 5000), rng=2))
    full = m.estimate_frequencies(agg)
    cand = np.array([3, 499, 0, 3])
    part = m.estimate_frequencies(agg, candidates=cand)
    np.testing.assert_allclose(part.frequencies, full.frequencies[cand], rtol=1e-12)
    np.testing.assert_allclose(part.standard_errors, full.standard_errors[cand], rtol=1e-12)
    assert np.all(m.estimate_frequencies(agg, candidates=cand, postprocess="clip").frequencies >= 0)
    # the result names the categories it estimates: its Series is indexed by the candidates, not 0..3
    assert part.categories.tolist() == [3, 499, 0, 3] and full.categories is None
    assert part.to_series().index.tolist() == [3, 499, 0, 3]
    assert part.to_series().loc[499].item() == full.to_series().loc[499]
    assert "categories=[  3, 499,   0,   3]" in repr(part) and part != m.estimate_frequencies(agg, candidates=cand[::-1])


SS_SETTINGS = [(5.0, 3_307_948), (1.0, 10_000), (2.0, 1_000), (3.0, 100_000), (0.5, 5_000)]


@pytest.mark.parametrize("eps,k", SS_SETTINGS)
def test_variance_equals_subset_selection_within_5_percent(eps, k):
    """PGR's per-report variance at frequency 0 against subset selection's closed form (Wang et al.; subsets of
    ω = k/(e^ε + 1), the real optimum, so no rounding of ω favours either)."""
    e = math.exp(eps)
    w = k / (e + 1)
    p = w * e / (w * e + k - w)
    qs = (p * (w - 1) + (1 - p) * w) / (k - 1)
    ss = qs * (1 - qs) / (p - qs) ** 2
    pgr = ldp.PGR(eps, k).variance(0.0)
    assert abs(pgr / ss - 1) < 0.05, (pgr, ss)


def test_empirical_error_matches_the_closed_form():
    """Mean squared error over all k categories of 6 collections against Σ variance/n (its relative sampling
    error over 6k nearly independent estimates is about sqrt(2/(6k)))."""
    m = ldp.PGR(2.5, 183)  # q = 13, t = 3: 183 codes
    assert (m.q, m.t, m.n_cells) == (13, 3, 183)
    x = np.random.default_rng(3).integers(0, 20, 30_000)
    f = np.bincount(x, minlength=m.k) / x.size
    mse = np.mean([np.mean((m.estimate_frequencies(m.privatize(x, rng=s)).frequencies - f) ** 2) for s in range(6)])
    expected = np.mean(m.variance(f)) / x.size
    assert abs(mse / expected - 1) < 5 * math.sqrt(2 / (6 * m.k))


def test_bad_inputs_one_clear_error():
    with pytest.raises(ValueError, match="no prime q"):  # e^15 + 1 needs a field beyond 2**20
        ldp.PGR(15.0, 1000)
    with pytest.raises(ValueError, match="codes"):
        ldp.PGR(1.0, 2**24, q=1048573)  # t = 3 would need about 2**40 codes
    with pytest.raises(ValueError, match="k"):
        ldp.PGR(1.0, 2**24 + 1)
    with pytest.raises(ValueError, match="prime"):
        ldp.PGR(1.0, 100, q=4)
    with pytest.raises(TypeError, match="q"):
        ldp.PGR(1.0, 100, q=3.0)
    with pytest.raises(ValueError, match="variant"):
        ldp.PGR(1.0, 100, variant="hpg")
    m = ldp.PGR(2.0, 100)
    agg = m.aggregate(m.privatize(np.arange(100), rng=0))
    with pytest.raises(ValueError, match=r"candidates.*100.*index 1"):
        m.estimate_frequencies(agg, candidates=[3, 100, -1])
    with pytest.raises(TypeError, match="candidates"):
        m.estimate_frequencies(agg, candidates=[1.5])
    with pytest.raises(ValueError, match="postprocess"):
        m.estimate_frequencies(agg, candidates=[1], postprocess="norm-sub")
    with pytest.raises(ValueError, match="method must be 'unbiased' for pgr"):
        m.estimate_frequencies(agg, method="mle")
    assert MAX_CODES == 1 << 26 and choose_q(5.0, 3_307_948) == 149
