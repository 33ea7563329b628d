"""Subset selection: exact privacy over every subset, canonical wire format, kernel vs plan and naive."""

import math
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


@pytest.mark.parametrize("k", [1024, 1 << 16])
@pytest.mark.parametrize("epsilon", [0.01, 1.0, 8.0])
def test_structural_bound_large_k(k, epsilon):
    ss = ldp.SubsetSelection(epsilon, k)
    check_exact_epsilon([], epsilon, ratio=ss.plan.extreme_ratio_bound(), tight=k <= 2048)


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


def test_kernel_matches_naive():
    k = 13
    ss = ldp.SubsetSelection(1.5, k)
    v = np.random.default_rng(0).integers(0, k, 600)
    v[::37] = 99
    r = ss.privatize(v, rng=8, unknown="uniform")
    words = np.random.default_rng(8).bit_generator.random_raw(k * v.size)
    ref = naive.subset_selection(np.where(v >= k, -1, v), k, ss.omega, ss.plan.t_inc, words)
    np.testing.assert_array_equal(unpack_bits(r), ref)


@pytest.mark.parametrize("k,eps", [(5, 1.0), (7, 0.5)])
def test_kernel_matches_plan(k, eps):
    ss = ldp.SubsetSelection(eps, k)
    subsets = list(combinations(range(k), ss.omega))
    index = {sum(1 << j for j in s): i for i, s in enumerate(subsets)}
    weights = 1 << np.arange(k)
    for v in (0, k - 1):
        bits = unpack_bits(ss.privatize(np.full(300_000, v), rng=10 + v))
        counts = np.bincount([index[m] for m in bits @ weights], minlength=len(subsets))
        exact = ss.plan.exact_probabilities(v)
        probs = np.array([float(exact[sum(1 << j for j in s)]) for s in subsets])
        check_kernel_matches(counts, probs)


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
        assert ss.words_per_record == k


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
