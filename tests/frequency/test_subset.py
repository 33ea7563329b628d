"""Subset selection: exact privacy over every subset, canonical wire format, kernel vs plan and naive."""

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.frequency import unpack_bits

import naive
from conftest import EPSILONS
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches


@pytest.mark.parametrize("k", [2, 3, 5, 8, 10])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_exact_epsilon_all_subsets(k, epsilon):
    ss = ldp.SubsetSelection(epsilon, k)
    rows = [ss.plan.exact_probabilities(v) for v in range(k)]
    worst = check_exact_epsilon(rows, epsilon)
    assert worst <= ss.plan.extreme_ratio_bound()
    check_exact_epsilon(rows + [ss.plan.exact_probabilities(-1)], epsilon, tight=False)  # unknown values


@pytest.mark.parametrize("k", [1024, 13_000, 1 << 16])
@pytest.mark.parametrize("epsilon", [0.01, 1.0, 8.0])
def test_structural_bound_large_k(k, epsilon):
    """The bound is ≤ E (and reaches it); the realized ratio is at least the bound / D**4 (the event "v in, v'
    out"), within 1e-6 of e^ε up to k = 13 000 and within 1.5 k² 2**-48 beyond, as documented."""
    ss = ldp.SubsetSelection(epsilon, k)
    bound = ss.plan.extreme_ratio_bound()
    check_exact_epsilon([], epsilon, ratio=bound)
    realized_low = bound / ss.plan.deviation_bound() ** 4
    check_exact_epsilon([], epsilon, ratio=realized_low, tight=k <= 13_000)
    assert realized_low >= Fraction(math.exp(epsilon)) * (1 - Fraction(3 * k * k, 2 * 2**48) - Fraction(1, 10**10))


def test_too_small_epsilon_is_refused():
    assert ldp.SubsetSelection(1e-12, 10).omega == 5
    with pytest.raises(ValueError, match="too small"):
        ldp.SubsetSelection(1e-13, 10)


def true_value_first(rows, k):
    """The mutant wire format: the subset listed with the true value first when it is in the subset."""
    out = []
    for v, row in enumerate(rows):
        new = {}
        for mask, prob in row.items():
            members = [j for j in range(k) if mask >> j & 1]
            if v in members:
                members.remove(v)
                members = [v] + members
            key = tuple(members)
            new[key] = new.get(key, 0) + prob
        out.append(new)
    return out


def test_true_value_first_wire_format_is_rejected():
    k, eps = 6, 1.0
    ss = ldp.SubsetSelection(eps, k)
    rows = [ss.plan.exact_probabilities(v) for v in range(k)]
    check_exact_epsilon(rows, eps)  # the canonical bitmask passes
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(true_value_first(rows, k), eps)


def test_reports_are_canonical_bitmasks():
    ss = ldp.SubsetSelection(2.0, 20)
    r = ss.privatize(np.arange(20).repeat(50), rng=3)
    bits = unpack_bits(r)
    assert r.codes.shape == (1000, 3) and r.codes.dtype == np.uint8
    assert np.all(bits.sum(axis=1) == ss.omega)


@pytest.mark.parametrize("k,eps", [(13, 1.5), (8, 0.5), (2, 0.01), (64, 0.3), (300, 1.0), (40, 0.4), (26, 0.5),
                                   (100, 0.7), (128, 2.0), (1024, 1.0), (65, 1.0), (16, 20.0), (1024, 20.0)])
def test_kernel_matches_naive(k, eps):
    """Bit for bit, including rows of whole 64-bit words (k = 64, 128, 1024) and not (the byte path, k = 65), a
    subset of one (ε = 20: field 0 only), and true values at the word edges (the kernel's index-to-category
    shift crosses words)."""
    ss = ldp.SubsetSelection(eps, k)
    assert ss.words_per_record == 1 + ss.omega - ss.omega // 4
    v = np.random.default_rng(k).integers(0, k, 600 if k < 100 else 150)
    edges = np.unique(np.clip([0, 1, 62, 63, 64, 65, 127, 128, k - 2, k - 1], 0, k - 1))
    v[1:1 + edges.size] = edges
    v[::37] = k + 3
    r = ss.privatize(v, rng=8, unknown="uniform")
    words = np.random.default_rng(8).bit_generator.random_raw(ss.words_per_record * v.size)
    ref = naive.subset_selection(np.where(v >= k, -1, v), k, ss.omega, ss.plan.t_inc, words)
    np.testing.assert_array_equal(unpack_bits(r), ref)


def test_words_per_record_are_consumed():
    """Each record consumes exactly ``1 + ω - ⌊ω/4⌋`` words (C4), whatever its value and coin."""
    ss = ldp.SubsetSelection(1.0, 40)
    assert (ss.omega, ss.words_per_record) == (11, 10)
    g = np.random.default_rng(4)
    ss.privatize(np.r_[np.arange(40), -1], rng=g, unknown="uniform")
    ahead = np.random.default_rng(4).bit_generator.random_raw(41 * 10 + 1)
    assert g.bit_generator.random_raw() == ahead[-1]


@pytest.mark.parametrize("k,eps", [(5, 0.5), (8, 1.0), (6, 0.001)])
def test_plan_equals_enumeration_of_draws(k, eps):
    """The plan's dynamic programme over Floyd's partial subsets == brute force over every draw sequence."""
    ss = ldp.SubsetSelection(eps, k)
    for v in (-1, 0, k // 2, k - 1):
        assert ss.plan.exact_probabilities(v) == {
            mask: prob for mask, prob in naive.subset_distribution(k, ss.omega, ss.plan.t_inc, v).items()}


@pytest.mark.parametrize("k,eps", [(5, 1.0), (10, 0.001), (8, 4.0)])
def test_subset_probability_matches_enumeration(k, eps):
    plan = ldp.SubsetSelection(eps, k).plan
    for v in (-1, 1):
        exact = plan.exact_probabilities(v)
        for mask, prob in list(exact.items())[::3]:
            assert plan.subset_probability({j for j in range(k) if mask >> j & 1}, v) == prob
    assert plan.subset_probability({0}, 0) == 0 or plan.omega == 1


@pytest.mark.parametrize("k,eps", [(5, 0.5), (8, 1.0), (10, 0.1), (10, 20.0)])
def test_deviation_bound_holds_exactly(k, eps):
    """Every subset probability of every row is within the factor D of its ideal value."""
    plan = ldp.SubsetSelection(eps, k).plan
    d = plan.deviation_bound()
    inc, exc, unk = (x / math.comb(k, plan.omega) for x in plan.ideal_ratios())
    for v in range(-1, k):
        for mask, prob in plan.exact_probabilities(v).items():
            ideal = unk if v < 0 else inc if mask >> v & 1 else exc
            assert ideal / d <= prob <= ideal * d


@pytest.mark.parametrize("k,eps", [(5, 1.0), (8, 0.5), (10, 0.001), (10, 2.0)])
def test_support_probabilities_match_exact_marginals(k, eps):
    """p* is exactly P[v in S]; q* is the marginal inclusion of every other category within D - 1."""
    ss = ldp.SubsetSelection(eps, k)
    p, q = ss.support_probabilities
    slack = float(ss.plan.deviation_bound() - 1)
    assert slack < 1e-12
    for v in range(k):
        exact = ss.plan.exact_probabilities(v)
        marg = [sum(prob for mask, prob in exact.items() if mask >> u & 1) for u in range(k)]
        assert marg[v] == Fraction(ss.plan.t_inc, 2**53) and float(marg[v]) == p
        for u in range(k):
            if u != v:
                assert abs(float(marg[u]) / q - 1) <= slack + 1e-15


@pytest.mark.parametrize("k,eps", [(5, 1.0), (7, 0.5), (10, 0.1)])
def test_kernel_matches_plan(k, eps):
    ss = ldp.SubsetSelection(eps, k)
    subsets = list(combinations(range(k), ss.omega))
    index = {sum(1 << j for j in s): i for i, s in enumerate(subsets)}
    weights = 1 << np.arange(k)
    for v in (0, k - 1, -1):
        bits = unpack_bits(ss.privatize(np.full(300_000, v), rng=10 + v, unknown="uniform"))
        counts = np.bincount([index[m] for m in bits @ weights], minlength=len(subsets))
        exact = ss.plan.exact_probabilities(v)
        probs = np.array([float(exact[sum(1 << j for j in s)]) for s in subsets])
        check_kernel_matches(counts, probs)


def test_twin_rejects_floyd_collision_bug():
    """Planted bug: Floyd re-adding ``t`` instead of ``j`` on a collision (naive mutant, same words) does not
    match the plan (chi-square over all 2**k bitmasks), while the correct reference does."""
    k, eps = 8, 1.0
    ss = ldp.SubsetSelection(eps, k)
    exact = ss.plan.exact_probabilities(3)
    probs = np.array([float(exact.get(m, 0)) for m in range(1 << k)])
    n = 20_000
    words = np.random.default_rng(21).bit_generator.random_raw(ss.words_per_record * n)
    weights = 1 << np.arange(k)
    good = naive.subset_selection(np.full(n, 3), k, ss.omega, ss.plan.t_inc, words)
    check_kernel_matches(np.bincount(good @ weights, minlength=1 << k), probs)
    bad = naive.subset_selection(np.full(n, 3), k, ss.omega, ss.plan.t_inc, words, mutant="add_t")
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(np.bincount(bad @ weights, minlength=1 << k), probs)


def test_exact_check_rejects_floyd_range_bug():
    """Planted bug: Floyd drawing ``t`` in ``0..j-1`` instead of ``0..j``: the exact ε check fails."""
    k, eps = 8, 1.0
    ss = ldp.SubsetSelection(eps, k)
    t_inc = ss.plan.t_inc
    check_exact_epsilon([naive.subset_distribution(k, ss.omega, t_inc, v) for v in range(k)], eps)
    rows = [naive.subset_distribution(k, ss.omega, t_inc, v, mutant="range_j") for v in range(k)]
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, eps)


def test_twin_rejects_value_leaking_sampler():
    """A sampler that always includes the true value does not match the plan."""
    k, eps = 5, 1.0
    ss = ldp.SubsetSelection(eps, k)
    subsets = list(combinations(range(k), ss.omega))
    rng = np.random.default_rng(0)
    n = 300_000
    counts = np.zeros(len(subsets))
    with_v = [i for i, s in enumerate(subsets) if 0 in s]
    np.add.at(counts, rng.choice(with_v, n), 1)
    exact = ss.plan.exact_probabilities(0)
    probs = np.array([float(exact[sum(1 << j for j in s)]) for s in subsets])
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(counts, probs)


@pytest.mark.parametrize("k,eps", [(4, 1.0), (32, 2.0), (300, 1.0)])
def test_unbiased_with_variance(k, eps):
    ss = ldp.SubsetSelection(eps, k)
    rng = np.random.default_rng(k)
    p = rng.dirichlet(np.ones(k))
    n = 100_000
    x = rng.choice(k, n, p=p)
    est = ss.estimate_frequencies(ss.privatize(x, rng=2))
    truth = np.bincount(x, minlength=k) / n
    assert np.all(np.abs(est.frequencies - truth) < 4.5 * np.sqrt(ss.variance(truth) / n))


def test_variance_close_to_oue_and_words_fixed():
    for k, eps in ((64, 1.0), (1024, 2.0)):
        ss = ldp.SubsetSelection(eps, k)
        ee = math.exp(eps)
        assert ss.variance(0.0) <= 1.05 * 4 * ee / (ee - 1) ** 2
        assert ss.words_per_record == 1 + ss.omega - ss.omega // 4


def test_spec_validation_and_merge():
    ss = ldp.SubsetSelection(1.0, 10)
    assert ldp.from_spec(ss.spec) == ss
    with pytest.raises(ValueError, match="k <= 65536"):
        ldp.SubsetSelection(1.0, (1 << 16) + 1)
    with pytest.raises(TypeError):
        ss.privatize(np.array([1.0]))
    with pytest.raises(ValueError, match="outside the categories"):
        ss.privatize([10])
    x = np.random.default_rng(0).integers(0, 10, 3000)
    parts = [ss.aggregate(ss.privatize(c, rng=i)) for i, c in enumerate(np.array_split(x, 3))]
    whole = ss.aggregate(ldp.Reports.concat([ss.privatize(c, rng=i) for i, c in enumerate(np.array_split(x, 3))]))
    assert sum(parts) == whole and whole.n_reports == 3000
