"""Hadamard response: exact ε by enumeration, kernel twins, support counts by the Walsh–Hadamard transform."""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum.reports import code_dtype
from ldpnum._kernels.server_hashing import walsh_hadamard
from ldpnum.frequency.hadamard import HadamardPlan, HadamardResponse, hadamard_support_counts
from ldpnum.plans import TWO53, binary_plan

import naive as nh
from conftest import EPSILONS
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches


def raw_words(seed, n):
    return np.random.default_rng(seed).bit_generator.random_raw(n)


def test_output_alphabet_size():
    for k, K in [(2, 4), (3, 4), (4, 8), (7, 8), (8, 16), (1000, 1024), (1023, 1024), (1024, 2048),
                 (1 << 24, 1 << 25)]:
        hr = HadamardResponse(1.0, k)
        assert hr.n_cells == K and hr.spec.n_cells == K and K >= k + 1 and K // 2 < k + 1
    big = HadamardResponse(1.0, 1 << 24)
    assert big.privatize(np.array([0, (1 << 24) - 1]), rng=0).codes.dtype == np.uint32


@pytest.mark.parametrize("k", [2, 3, 5, 64])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_exact_epsilon_all_pairs(epsilon, k):
    """Every category × every index in [0, K), in rationals, tight; the unknown value's uniform report too."""
    hr = HadamardResponse(epsilon, k)
    rows = [hr.plan.exact_probabilities(v) for v in range(k)]
    worst = check_exact_epsilon(rows, epsilon)
    assert worst == hr.plan.extreme_ratio()
    check_exact_epsilon(rows + [hr.plan.exact_probabilities(-1)], epsilon, tight=False)


def test_exact_epsilon_k1000_enumeration():
    """K = 1024: all 1000 × 1024 (category, index) pairs in rationals; the structural ratio agrees."""
    hr = HadamardResponse(0.5, 1000)
    rows = [hr.plan.exact_probabilities(v) for v in range(1000)]
    assert check_exact_epsilon(rows, 0.5) == hr.plan.extreme_ratio()
    # the rows are the Hadamard matrix's: index y is in C_v exactly when H[v + 1, y] = +1
    H = nh.hadamard_matrix(1024)[1:1001]
    inside = max(rows[0].values())
    np.testing.assert_array_equal(np.array([[r[y] == inside for y in range(1024)] for r in rows[::37]]),
                                  H[::37] == 1)


def test_plan_support_sets_are_hadamard_rows():
    for K in (4, 8, 64, 1024):
        H = nh.hadamard_matrix(K)
        plan = HadamardPlan(K - 1, K.bit_length() - 1, 1)
        for v in list(range(min(K - 1, 40))) + [K - 2]:
            np.testing.assert_array_equal([plan.supports(v, y) for y in range(K)], H[v + 1] == 1)


def test_q_star_is_one_half_by_orthogonality():
    """|C_v ∩ C_v'| = |complement(C_v) ∩ C_v'| = K/4 for every pair: q* = p/2 + (1-p)/2 = 1/2 exactly."""
    for K in (4, 16, 256):
        H = nh.hadamard_matrix(K)[1:]
        inside = (H == 1).astype(np.int64)
        both = inside @ inside.T
        np.fill_diagonal(both, K // 4)
        assert np.all(both == K // 4)
    hr = HadamardResponse(1.0, 10)
    p, q = hr.plan.support_probabilities()
    for v, v2 in [(0, 1), (3, 9)]:
        row = hr.plan.exact_probabilities(v)
        assert sum(pr for y, pr in row.items() if hr.plan.supports(v, y)) == p
        assert sum(pr for y, pr in row.items() if hr.plan.supports(v2, y)) == q == Fraction(1, 2)


def test_exact_checker_rejects_inflated_epsilon():
    """Negative control: thresholds for 1.25 ε must fail the exact check at ε."""
    for eps, k in [(1.0, 3), (0.1, 5), (4.0, 64)]:
        bad = HadamardPlan(k, k.bit_length(), binary_plan(1.25 * eps).t_hi)
        with pytest.raises(PrivacyViolation, match="exceeds"):
            check_exact_epsilon([bad.exact_probabilities(v) for v in range(k)], eps)


@pytest.mark.parametrize("k,eps", [(3, 1.0), (12, 2.0), (300, 0.5)])
def test_kernel_matches_plan(k, eps):
    hr = HadamardResponse(eps, k)
    n = 200_000
    for i, v in enumerate([0, k // 2, k - 1, -1]):
        x = np.full(n, v if v >= 0 else k + 3)
        r = hr.privatize(x, rng=30 + i, unknown="uniform")
        row = hr.plan.exact_probabilities(v)
        check_kernel_matches(hr.aggregate(r).counts, [float(row[y]) for y in range(hr.n_cells)])


def test_twin_rejects_lie_drawn_from_all_indices():
    """Negative control: 'lie' = a uniform index over all of [0, K) (the complement is not enforced)."""
    hr = HadamardResponse(1.0, 12)
    K = hr.n_cells
    p = hr.plan.t_keep / TWO53
    rng = np.random.default_rng(2)
    n = 300_000
    inside = np.flatnonzero([hr.plan.supports(5, y) for y in range(K)])
    y = np.where(rng.random(n) < p, rng.choice(inside, n), rng.integers(0, K, n))
    row = hr.plan.exact_probabilities(5)
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(np.bincount(y, minlength=K), [float(row[j]) for j in range(K)])


@pytest.mark.parametrize("k,eps", [(2, 1.0), (37, 1.3), (1000, 4.0), (1 << 24, 0.5)])
def test_kernel_matches_naive(k, eps):
    hr = HadamardResponse(eps, k)
    n = 4000
    v = np.random.default_rng(k).integers(0, k, n)
    v[:2] = [0, k - 1]
    v[::97] = k + 1  # unknown → uniform
    r = hr.privatize(v, rng=5, unknown="uniform")
    log2_k = hr.n_cells.bit_length() - 1
    ref = nh.hadamard(np.where(v >= k, -1, v), log2_k, hr.plan.t_keep, raw_words(5, 2 * n))
    np.testing.assert_array_equal(r.codes, ref)
    assert r.codes.dtype == code_dtype(hr.n_cells)


def test_walsh_hadamard_matches_dense_matrix():
    rng = np.random.default_rng(0)
    for K in (1, 2, 4, 64, 1024):
        x = rng.integers(0, 1000, K).astype(np.int64)
        w = x.copy()
        walsh_hadamard(w)
        np.testing.assert_array_equal(w, nh.hadamard_matrix(K) @ x)
    with pytest.raises(ValueError, match="power-of-two"):
        walsh_hadamard(np.zeros(6, dtype=np.int64))


@pytest.mark.parametrize("k", [2, 5, 64, 300])
def test_support_counts_match_naive(k):
    hr = HadamardResponse(1.0, k)
    x = np.random.default_rng(k).integers(0, k, nh.rows(3000))
    r = hr.privatize(x, rng=1)
    np.testing.assert_array_equal(hadamard_support_counts(hr.aggregate(r).counts, k),
                                  nh.hadamard_support(r.codes, k))


@pytest.mark.parametrize("k,eps", [(3, 0.5), (16, 1.0), (1000, 3.0)])
def test_unbiased_with_seed_variance(k, eps):
    hr = HadamardResponse(eps, k)
    rng = np.random.default_rng(k)
    p = rng.dirichlet(np.ones(k))
    n = 200_000
    x = rng.choice(k, n, p=p)
    est = hr.estimate_frequencies(hr.privatize(x, rng=9))
    truth = np.bincount(x, minlength=k) / n
    sd = np.sqrt(hr.variance(truth) / n)
    assert np.all(np.abs(est.frequencies - truth) < 4.5 * sd)
    ee = math.exp(eps)
    assert hr.variance(0.0) == pytest.approx((ee + 1) ** 2 / (ee - 1) ** 2, rel=1e-9)


def test_empirical_variance():
    k, eps, n, reps = 8, 1.0, 20_000, 300
    hr = HadamardResponse(eps, k)
    x = np.zeros(n, dtype=np.int64)
    f = [hr.estimate_frequencies(hr.privatize(x, rng=s)).frequencies[3] for s in range(reps)]
    var = hr.variance(0.0) / n
    assert abs(np.mean(f)) < 4.5 * math.sqrt(var / reps)
    assert abs(np.var(f, ddof=1) / var - 1) < 4.5 * math.sqrt(2 / (reps - 1))


def test_merge_equals_aggregate_of_concatenation():
    hr = HadamardResponse(2.0, 50)
    x = np.random.default_rng(0).integers(0, 50, 9000)
    parts = [hr.privatize(c, rng=i) for i, c in enumerate(np.array_split(x, 3))]
    aggs = [hr.aggregate(p) for p in parts]
    whole = hr.aggregate(ldp.Reports.concat(parts))
    assert sum(aggs) == whole and whole.n_reports == 9000 and whole.counts.shape == (64,)
    assert hr.empty_aggregate() + aggs[0] == aggs[0]
    np.testing.assert_array_equal(hr.estimate_frequencies(whole).frequencies,
                                  hr.estimate_frequencies(ldp.Reports.concat(parts)).frequencies)
    with pytest.raises(ValueError, match="no reports"):
        hr.estimate_frequencies(hr.empty_aggregate())
    with pytest.raises(ldp.SpecMismatchError):
        HadamardResponse(2.0, 51).estimate_frequencies(whole)


def test_spec_round_trip_and_reproducibility():
    hr = HadamardResponse(1.5, 100)
    assert ldp.from_spec(hr.spec) == hr and hr.words_per_record == 2
    x = np.random.default_rng(0).integers(0, 100, 2 * _random.BLOCK_RECORDS + 7)
    whole = hr.privatize(x, rng=3)
    gen = np.random.default_rng(3)
    assert ldp.Reports.concat([hr.privatize(c, rng=gen) for c in np.array_split(x, 5)]) == whole
    assert hr.privatize(x[:500]) != hr.privatize(x[:500])


@pytest.mark.parametrize("x,exc,msg", [
    (np.array([0.0, 1.0]), TypeError, "integer category codes"),
    (np.array([True, False]), TypeError, "integer category codes"),
    (np.array([0, 5, 7, 1]), ValueError, r"2 value\(s\) outside the categories \[0, 5\), first at index 1"),
    (np.array([-1, 2]), ValueError, "first at index 0"),
    (pd.Series([1, None, 2], dtype="Int64"), ValueError, "missing value"),
])
def test_bad_categories_rejected_before_any_draw(x, exc, msg, monkeypatch):
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError))
    with pytest.raises(exc, match=msg):
        HadamardResponse(1.0, 5).privatize(x)


@pytest.mark.parametrize("k,exc", [(1, ValueError), (2.0, TypeError), (True, TypeError),
                                   ((1 << 24) + 1, ValueError)])
def test_bad_k(k, exc):
    with pytest.raises(exc):
        HadamardResponse(1.0, k)
