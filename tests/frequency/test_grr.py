"""GRR (ldpnum/frequency/grr.py): exact ε, its kernel against the plan and the naive reference, its estimate's
bias and variance, its inputs, and the golden digests of every categorical randomizer.

Post-processing is tested in tests/estimation/test_postprocess.py, the choice rule in test_frequency_recommend.py,
the FrequencyEstimate object in tests/test_results.py."""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum.frequency.grr import TWO64
from ldpnum.plans import TWO53

import naive
from conftest import EPSILONS
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches


@pytest.mark.parametrize("k", [2, 3, 5, 64])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_grr_exact_all_pairs(k, epsilon):
    g = ldp.GRR(epsilon, k)
    rows = [g.plan.exact_probabilities(v) for v in range(k)]
    worst = check_exact_epsilon(rows, epsilon)
    assert worst == g.plan.extreme_ratio()
    # an unknown value's uniform report is within the guarantee too
    check_exact_epsilon(rows + [g.plan.exact_probabilities(-1)], epsilon, tight=False)


@pytest.mark.parametrize("k", [1024, 1 << 16])
@pytest.mark.parametrize("epsilon", [0.01, 1.0, 20.0])
def test_grr_exact_large_k_structural(k, epsilon):
    check_exact_epsilon([], epsilon, ratio=ldp.GRR(epsilon, k).plan.extreme_ratio())


def test_grr_refuses_domains_beyond_its_exact_uniform_choice():
    with pytest.raises(ValueError, match="GRR supports k <= 65536"):
        ldp.GRR(1.0, (1 << 16) + 1)


def test_grr_lie_covers_the_largest_domain():
    """At k = 2**16 the lie still reaches the top categories (no overflow in the uniform choice)."""
    k = 1 << 16
    g = ldp.GRR(0.01, k)
    codes = g.privatize(np.zeros(200_000, dtype=np.int64), rng=3).codes
    assert codes.max() > k - 200 and np.mean(codes >= k // 2) == pytest.approx(0.5, abs=0.01)


def test_grr_with_two_categories_is_randomized_response():
    """GRR's one-word plan at k = 2 keeps the truth with randomized response's probability (the two plans
    round on different grids: within 2**-31 relatively), and both are tight."""
    for eps in (0.1, 1.0, 7.0):
        keep = Fraction(ldp.GRR(eps, 2).plan.keep_count(), TWO64)
        rr = Fraction(ldp.RandomizedResponse(eps).plan.t_hi, TWO53)
        assert abs(keep / rr - 1) < Fraction(1, 2**31)


def test_grr_one_word_cell_counts_are_exact():
    """The plan's word counts are those of the kernel's ``floor(word · G / 2**64)``: checked by scaling the
    64-bit word space down (the same formula at 2**16 words, enumerated)."""
    from ldpnum.frequency.grr import cell_count
    total = 2**16
    for G in (3, 7, 1000, 40_000):
        hist = np.bincount((np.arange(total, dtype=np.int64) * G) >> 16, minlength=G)
        for s, e in [(0, 1), (0, G // 3), (G // 3, G), (1, G - 1)]:
            assert -((-e * total) // G) + ((-s * total) // G) == hist[s:e].sum()
    assert sum(cell_count(j, j + 1, 5) for j in range(5)) == TWO64


def test_grr_mulhi_matches_python_big_ints():
    from ldpnum._kernels.client_numeric import mulhi64_inline
    rng = np.random.default_rng(4)
    a = rng.integers(0, 2**64, 2000, dtype=np.uint64, endpoint=False)
    b = rng.integers(0, 2**64, 2000, dtype=np.uint64, endpoint=False)
    a[:4] = [0, 2**64 - 1, 2**64 - 1, 2**32]
    b[:4] = [2**64 - 1, 2**64 - 1, 1, 2**32]
    got = [int(mulhi64_inline(x, y)) for x, y in zip(a, b)]
    assert got == [(int(x) * int(y)) >> 64 for x, y in zip(a, b)]


def test_checker_rejects_lie_drawn_from_all_k():
    """OpenDP #480: keep w.p. p, else draw the report from all k categories (it may repeat the truth)."""
    k, eps = 5, 1.0
    keep = Fraction(ldp.GRR(eps, k).plan.keep_count(), TWO64)
    rows = [{j: (keep if j == v else 0) + (1 - keep) / k for j in range(k)} for v in range(k)]
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, eps)


@pytest.mark.parametrize("k,eps", [(4, 1.0), (64, 2.0), (1000, 4.0)])
def test_grr_kernel_matches_plan(k, eps):
    g = ldp.GRR(eps, k)
    p, q = g.support_probabilities  # equal to the exact plan up to 2**-35 relatively (lie blocks)
    for i, v in enumerate([0, k // 3, k - 1]):
        r = g.privatize(np.full(300_000, v), rng=40 + i)
        probs = np.full(k, q)
        probs[v] = p
        check_kernel_matches(g.aggregate(r).counts, probs)


def test_twin_rejects_lie_drawn_from_all_k():
    k = 4
    g = ldp.GRR(1.0, k)
    p = g.support_probabilities[0]
    rng = np.random.default_rng(1)
    n = 300_000
    out = np.where(rng.random(n) < p, 2, rng.integers(0, k, n))
    probs = np.array([float(g.plan.exact_probabilities(2)[j]) for j in range(k)])
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(np.bincount(out, minlength=k), probs)


def test_grr_kernel_matches_naive():
    k = 37
    g = ldp.GRR(1.3, k)
    v = np.random.default_rng(0).integers(0, k, 4000)
    v[::97] = 999  # unknown → uniform
    r = g.privatize(v, rng=5, unknown="uniform")
    words = np.random.default_rng(5).bit_generator.random_raw(v.size)
    ref = naive.grr(np.where(v >= k, -1, v), k, g.plan.a_keep, g.plan.shift, words)
    np.testing.assert_array_equal(r.codes, ref)


@pytest.mark.parametrize("k,eps", [(3, 0.5), (16, 1.0), (256, 3.0)])
def test_grr_unbiased_with_seed_variance(k, eps):
    g = ldp.GRR(eps, k)
    rng = np.random.default_rng(k)
    p = rng.dirichlet(np.ones(k))
    n = 200_000
    x = rng.choice(k, n, p=p)
    est = g.estimate_frequencies(g.privatize(x, rng=9))
    truth = np.bincount(x, minlength=k) / n
    sd = np.sqrt(g.variance(truth) / n)
    assert np.all(np.abs(est.frequencies - truth) < 4.5 * sd)
    ee = math.exp(eps)
    assert g.variance(0.0) == pytest.approx((k - 2 + ee) / (ee - 1) ** 2, rel=1e-9)
    assert est.frequencies.sum() == pytest.approx(1.0, abs=1e-9)  # GRR's estimate sums to 1 exactly


def test_grr_empirical_variance():
    k, eps, n = 8, 1.0, 20_000
    g = ldp.GRR(eps, k)
    x = np.zeros(n, dtype=np.int64)
    f = [g.estimate_frequencies(g.privatize(x, rng=s)).frequencies[3] for s in range(400)]
    var = g.variance(0.0) / n
    # sample variance of 400 draws: relative SE sqrt(2/399) ≈ 0.07
    assert abs(np.var(f, ddof=1) / var - 1) < 4.5 * math.sqrt(2 / 399)


@pytest.mark.parametrize("x,exc,msg", [
    (np.array([0.0, 1.0]), TypeError, "integer category codes"),
    (np.array([True, False]), TypeError, "integer category codes"),
    (np.array(["a"]), TypeError, "integer category codes"),
    (np.array([0, 5, 7, 1]), ValueError, r"2 value\(s\) outside the categories \[0, 5\), first at index 1"),
    (np.array([-1, 2]), ValueError, "first at index 0"),
    (np.zeros((2, 2), dtype=int), ValueError, "one-dimensional"),
    (pd.Series([1, None, 2], dtype="Int64"), ValueError, "missing value"),
])
def test_bad_categories(x, exc, msg, monkeypatch):
    from ldpnum import _random
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError))
    with pytest.raises(exc, match=msg):
        ldp.GRR(1.0, 5).privatize(x)


def test_categories_accepted_forms():
    g = ldp.GRR(1.0, 5)
    ref = g.privatize(np.array([0, 4, 2]), rng=0)
    for x in ([0, 4, 2], np.array([0, 4, 2], dtype=np.uint8), pd.Series([0, 4, 2], dtype="Int64"),
              np.array([0, 4, 2], dtype=">i4")):
        assert g.privatize(x, rng=0) == ref
    r = g.privatize(pd.Series([0, None, 2], dtype="Int64"), nan_policy="impute", fill_value=4, rng=0)
    assert r == ref
    with pytest.raises(ValueError, match="fill_value must be a category"):
        g.privatize([0], nan_policy="impute", fill_value=5)


@pytest.mark.parametrize("k,exc", [(1, ValueError), (0, ValueError), (2.0, TypeError), (True, TypeError),
                                   ((1 << 24) + 1, ValueError), ((1 << 16) + 1, ValueError), ("4", TypeError)])
def test_bad_k(k, exc):
    with pytest.raises(exc):
        ldp.GRR(1.0, k)


def test_spec_and_merge():
    g = ldp.GRR(1.0, 6)
    assert ldp.from_spec(g.spec) == g
    x = np.random.default_rng(0).integers(0, 6, 9000)
    parts = [g.aggregate(g.privatize(c, rng=i)) for i, c in enumerate(np.array_split(x, 3))]
    assert sum(parts).n_reports == 9000
    assert g.empty_aggregate() + parts[0] == parts[0]
    with pytest.raises(ldp.SpecMismatchError):
        ldp.GRR(1.0, 7).estimate_frequencies(parts[0])
    with pytest.raises(ValueError, match="no reports"):
        g.estimate_frequencies(g.empty_aggregate())


GOLDEN = {"grr": "c77a6ab3b65fec5e", "grr_eps20": "c9059311bbad4b9d", "olh": "c5e3004c014792c6",
          "hadamard": "75eb4099329f4766", "pi_rappor": "ee8c67b5efd51085", "hh_grr": "85214bc521cf1301",
          "hh_auto": "3eade8da983d1732", "sue": "8248e761a6c6ef65", "oue": "2ad49730b7daae49",
          "blh": "1689886f6fef56de", "ss": "c2e846861ea05cbd", "ss_k16": "bb9cf98f3c9247b1"}


def test_golden_digests_of_the_categorical_randomizers():
    """E7: seeded reports of each categorical randomizer and both hierarchical layouts are pinned; a deliberate
    change of a kernel, plan or word layout changes these (and says so in its commit)."""
    import hashlib

    x = np.random.default_rng(1).integers(0, 100, 10_000)
    u = np.random.default_rng(1).random(10_000)
    seed = 20261123
    runs = {"grr": ldp.GRR(1.0, 100).privatize(x, rng=seed), "grr_eps20": ldp.GRR(20.0, 100).privatize(x, rng=seed),
            "olh": ldp.OLH(1.0, 100).privatize(x, rng=seed),
            "hadamard": ldp.HadamardResponse(1.0, 100).privatize(x, rng=seed),
            "pi_rappor": ldp.PIRappor(1.0, 100).privatize(x, rng=seed),
            "hh_grr": ldp.HierarchicalHistogram(1.0, (0, 1), oracle="grr").privatize(u, rng=seed),
            "hh_auto": ldp.HierarchicalHistogram(1.0, (0, 1)).privatize(u, rng=seed),
            "sue": ldp.SUE(1.0, 100).privatize(x, rng=seed), "oue": ldp.OUE(1.0, 100).privatize(x, rng=seed),
            "blh": ldp.BLH(1.0, 100).privatize(x, rng=seed),
            "ss": ldp.SubsetSelection(1.0, 100).privatize(x, rng=seed),  # byte-flag picks (k > 64)
            "ss_k16": ldp.SubsetSelection(1.0, 16).privatize(x % 16, rng=seed)}  # one-register picks
    assert {k: hashlib.sha256(r.codes.tobytes()).hexdigest()[:16] for k, r in runs.items()} == GOLDEN
