"""Hierarchical histograms: privacy (exact), kernel vs plan and vs a naive reference, unbiased range answers,
consistency through estimate_ranges (the fits themselves: tests/estimation/test_consistency.py), RangeEstimate,
validation."""

import math
import pickle
from dataclasses import FrozenInstanceError
from fractions import Fraction

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum.estimation import consistency
from ldpnum.frequency import Recommendation
from ldpnum.ranges import HierarchicalHistogram, choose_branching, predicted_range_variance
from ldpnum.ranges import hierarchical as hier

import naive as naive_tree
from conftest import one_thread
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches

EPSILONS = [1e-3, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0]


def words_for(seed, n, c=2):
    return np.random.default_rng(seed).bit_generator.random_raw(c * n)


def beta_values(n, seed=0):
    return np.random.default_rng(seed).beta(5, 2, n)


# -- privacy -----------------------------------------------------------------------------------------------

def test_level_choice_does_not_depend_on_the_value():
    """Same words, any values → same level for every person (also at the bounds and outside them)."""
    hh = HierarchicalHistogram(1.0, (0.0, 1.0), n_leaves=64, branching=4)
    n = 20_000
    rng = np.random.default_rng(3)
    xs = [rng.random(n), np.zeros(n), np.ones(n), np.full(n, np.nextafter(1.0, 0.0)), rng.beta(5, 2, n)]
    levels = [hh.report_levels(hh.privatize(x, rng=11)) for x in xs]
    for lv in levels[1:]:
        np.testing.assert_array_equal(lv, levels[0])
    assert set(np.unique(levels[0])) == set(range(1, hh.n_levels + 1))
    # the kernel itself, fed the same words: level read back from the code's block
    words = words_for(11, n)
    from ldpnum._kernels import client_hierarchy as k

    outs = []
    for x in xs:
        out = np.empty(n, dtype=np.uint16)
        k.hierarchy_kernel(np.ascontiguousarray(x, float), 0.0, 1.0, 64, hh.plan.table, words, out)
        outs.append(np.searchsorted(hh.plan.offsets[1:], out, side="right"))
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


def test_level_distribution_matches_the_plan():
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=1000, branching=3)  # 7 levels: weights not all equal
    lv = hh.report_levels(hh.privatize(np.full(300_000, 0.3), rng=4))
    counts = np.bincount(lv, minlength=hh.n_levels + 1)[1:]
    w = [float(f) for f in hh.plan.level_weights]
    assert sum(hh.plan.level_weights) == 1
    check_kernel_matches(counts, w)
    assert len(set(hh.plan.level_weights)) == 2  # 2**16 is not a multiple of 7: two counts, one apart
    assert max(hh.plan.level_weights) - min(hh.plan.level_weights) == Fraction(1, 2**16)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_each_level_oracle_is_exactly_epsilon(epsilon):
    hh = HierarchicalHistogram(epsilon, (0, 1), n_leaves=64, branching=4, oracle="grr")
    for lvl in hh.level_oracles:
        rows = [lvl.exact_probabilities(j) for j in range(lvl.k)]
        check_exact_epsilon(rows, epsilon)
        assert lvl.oracle.plan.extreme_ratio() == check_exact_epsilon(rows, epsilon)


@pytest.mark.parametrize("branching", [2, 4])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_combined_report_is_exactly_epsilon(epsilon, branching):
    """A person's report is a mixture over levels with value-independent weights: check every leaf pair and
    every code in exact rationals; the worst ratio reaches e^ε (tight) and never exceeds it."""
    hh = HierarchicalHistogram(epsilon, (0, 1), n_leaves=16, branching=branching, oracle="grr")
    rows = [hh.plan.exact_probabilities(t) for t in range(16)]
    assert all(len(r) == hh.n_cells for r in rows)
    worst = check_exact_epsilon(rows, epsilon)
    assert worst == max(lvl.oracle.plan.extreme_ratio() for lvl in hh.level_oracles)


def test_ragged_tree_is_exactly_epsilon():
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=10, branching=3)
    assert hh.shape.counts == (1, 2, 4, 10)
    check_exact_epsilon([hh.plan.exact_probabilities(t) for t in range(10)], 1.0)


def test_checker_rejects_value_dependent_level():
    """Negative control: a level chosen from the value (here, heavier weight on level 1 for even leaves)."""
    eps = 1.0
    hh = HierarchicalHistogram(eps, (0, 1), n_leaves=16, branching=4, oracle="grr")
    plan = hh.plan
    rows = []
    for t in range(16):
        w = [Fraction(3, 4), Fraction(1, 4)] if t % 2 == 0 else [Fraction(1, 2), Fraction(1, 2)]
        row = {}
        for l, (lvl, wl) in enumerate(zip(plan.levels, w), start=1):
            for code, p in lvl.exact_probabilities(plan.node_of(t, l)).items():
                row[plan.offsets[l - 1] + code] = wl * p
        rows.append(row)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, eps)


def test_checker_rejects_reporting_every_level():
    """Negative control: each person reports on every level with the full ε (ratio e^{Lε})."""
    eps = 1.0
    hh = HierarchicalHistogram(eps, (0, 1), n_leaves=4, branching=2)
    plan = hh.plan
    rows = []
    for t in range(4):
        p1 = plan.levels[0].exact_probabilities(plan.node_of(t, 1))
        p2 = plan.levels[1].exact_probabilities(plan.node_of(t, 2))
        rows.append({(a, b): pa * pb for a, pa in p1.items() for b, pb in p2.items()})
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, eps)


def test_checker_rejects_budget_split_as_not_tight():
    """Negative control: ε/L per level (what spending ε per level would force) is private but not tight."""
    eps = 1.0
    hh = HierarchicalHistogram(eps / 2, (0, 1), n_leaves=4, branching=2)
    rows = [hh.plan.exact_probabilities(t) for t in range(4)]
    with pytest.raises(PrivacyViolation, match="does not reach"):
        check_exact_epsilon(rows, eps)


# -- kernels -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_leaves,branching,eps", [(16, 4, 1.0), (10, 3, 2.0), (64, 2, 0.5)])
@pytest.mark.parametrize("oracle", ["grr", "hadamard"])
def test_kernel_matches_plan(n_leaves, branching, eps, oracle):
    hh = HierarchicalHistogram(eps, (0, 10), n_leaves=n_leaves, branching=branching, oracle=oracle)
    w = 10 / n_leaves
    for i, t in enumerate([0, n_leaves // 2 + 1, n_leaves - 1]):
        x = np.full(300_000, (t + 0.5) * w)
        r = hh.privatize(x, rng=100 + i)
        check_kernel_matches(hh.aggregate(r).counts, hh.plan.probabilities(t))


def test_twin_rejects_a_mutant_kernel():
    """Negative control for the chi-square twin: the leaf's true node reported one level too deep."""
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=16, branching=2, oracle="grr")
    n = 300_000
    rng = np.random.default_rng(2)
    probs = hh.plan.probabilities(5)
    mutant = hh.plan.probabilities(4)  # a neighbour's distribution
    sample = rng.multinomial(n, mutant / mutant.sum())
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(sample, probs)


@pytest.mark.parametrize("oracle", ["grr", "hadamard"])
@pytest.mark.parametrize("n_leaves,branching", [(1024, 4), (10, 3), (100, 7), (2, 2)])
def test_kernel_matches_naive(n_leaves, branching, oracle):
    low, high = -3.0, 5.0
    hh = HierarchicalHistogram(1.3, (low, high), n_leaves=n_leaves, branching=branching, oracle=oracle)
    rng = np.random.default_rng(0)
    edges = low + (high - low) * np.arange(n_leaves + 1) / n_leaves
    x = np.concatenate([rng.uniform(low, high, 3000), edges, np.nextafter(edges, high), [low, high, -0.0]])
    x = np.clip(x, low, high)
    r = hh.privatize(x, rng=5)
    ref = naive_tree.hierarchy(x, low, high, n_leaves, hh.plan.table, words_for(5, x.size))
    np.testing.assert_array_equal(r.codes, ref)
    assert r.codes.dtype == ldp.Reports(np.zeros(1, np.uint8), hh.spec).codes.dtype
    np.testing.assert_array_equal(hh.leaf_index(x), [naive_tree.leaf(v, low, high, n_leaves) for v in x])


def test_bucketization_convention():
    hh = HierarchicalHistogram(1.0, (0, 8), n_leaves=8, branching=2)
    np.testing.assert_array_equal(hh.leaf_index([0.0, 0.999, 1.0, 7.5, 8.0]), [0, 0, 1, 7, 7])
    with pytest.warns(ldp.ClippingWarning):
        np.testing.assert_array_equal(hh.leaf_index([-1.0, 9.0]), [0, 7])


def test_reports_are_one_small_code():
    hh = HierarchicalHistogram(1.0, (0, 1), oracle="grr")
    r = hh.privatize(beta_values(1000), rng=0)
    assert r.codes.ndim == 1 and r.codes.dtype == np.uint16 and hh.n_cells == 4 + 16 + 64 + 256 + 1024
    assert hh.words_per_record == 2
    assert hh.aggregate(r).counts.sum() == 1000


# -- reproducibility, spec, aggregates ---------------------------------------------------------------------

def test_same_seed_same_reports_and_chunks():
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=256)
    x = beta_values(2 * _random.BLOCK_RECORDS + 1234)
    whole = hh.privatize(x, rng=np.random.default_rng(5))
    assert whole == hh.privatize(x, rng=5)
    g = np.random.default_rng(5)
    assert ldp.Reports.concat([hh.privatize(c, rng=g) for c in np.array_split(x, 7)]) == whole
    assert hh.privatize(x[:1000], rng=6) != hh.privatize(x[:1000], rng=7)


def test_thread_count_does_not_change_reports():
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=256)
    x = np.random.default_rng(0).random(300_000)
    two = hh.privatize(x, rng=9)
    with one_thread():
        one = hh.privatize(x, rng=9)
    assert one == two


def test_spec_roundtrip_merge_and_mismatch():
    hh = HierarchicalHistogram(2.0, (0, 100), n_leaves=100, branching=3)
    assert ldp.from_spec(hh.spec) == hh
    assert ldp.from_spec(ldp.Spec.from_json(hh.spec.to_json())) == hh
    x = beta_values(30_000) * 100
    parts = [hh.aggregate(hh.privatize(c, rng=i)) for i, c in enumerate(np.array_split(x, 3))]
    total = sum(parts)
    assert total.n_reports == 30_000 and hh.empty_aggregate() + parts[0] == parts[0]
    a = hh.estimate_ranges(total)
    b = hh.estimate_ranges(ldp.Aggregate.merge(parts[::-1]))
    assert a == b
    other = HierarchicalHistogram(2.0, (0, 100), n_leaves=100, branching=4)
    with pytest.raises(ldp.SpecMismatchError):
        other.estimate_ranges(total)
    with pytest.raises(ldp.SpecMismatchError):
        HierarchicalHistogram(1.0, (0, 100), n_leaves=100, branching=3).estimate_ranges(total)
    with pytest.raises(ldp.SpecMismatchError):
        ldp.GRR(2.0, hh.n_cells).estimate_frequencies(total)
    est = hh.estimate_ranges(hh.privatize(x, rng=0))  # Reports are accepted too
    assert est.spec == hh.spec and est.n_reports == 30_000 and est.epsilon == 2.0
    assert sum(est.level_reports) == 30_000


# -- estimation: unbiased answers with consistency="none" --------------------------------------------------

@pytest.mark.parametrize("n_leaves,branching,eps", [(32, 2, 1.0), (27, 3, 2.0), (20, 4, 0.5)])
def test_none_range_answers_are_unbiased(n_leaves, branching, eps):
    """z-tests with the exact variance (given the per-level counts) for aligned ranges, fixed seeds."""
    hh = HierarchicalHistogram(eps, (0, 1), n_leaves=n_leaves, branching=branching, oracle="grr")
    x = beta_values(200_000, seed=n_leaves)
    leaves = hh.leaf_index(x)
    est = hh.estimate_ranges(hh.privatize(x, rng=1), consistency="none")
    support = [lvl.oracle.support_probabilities for lvl in hh.level_oracles]
    rng = np.random.default_rng(7)
    edges = hh.leaf_edges
    qs = [tuple(sorted(rng.integers(0, n_leaves + 1, 2))) for _ in range(25)] + [(0, n_leaves), (0, 1)]
    for a, b in qs:
        truth = np.mean((leaves >= a) & (leaves < b))
        var = naive_tree.none_range_variance(hh.shape, leaves, a, b, est.level_reports, support)
        answer = est.range(edges[a], edges[b]) if b > a else 0.0
        if a == 0 and b == n_leaves:
            assert answer == 1.0
            continue
        if b == a:
            continue
        z = (answer - truth) / math.sqrt(var)
        assert abs(z) < 5.0, (a, b, z)


def test_none_variance_formula_matches_repeated_collections():
    """The exact variance used above agrees with the spread of answers over 400 independent collections,
    and the answers' mean with the truth (unconditional unbiasedness)."""
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=16, branching=2)
    x = beta_values(3000, seed=3)
    leaves = hh.leaf_index(x)
    support = [lvl.oracle.support_probabilities for lvl in hh.level_oracles]
    a, b = 5, 12
    truth = np.mean((leaves >= a) & (leaves < b))
    answers, variances = [], []
    for s in range(400):
        est = hh.estimate_ranges(hh.privatize(x, rng=1000 + s), consistency="none")
        answers.append(est.range(a / 16, b / 16))
        variances.append(naive_tree.none_range_variance(hh.shape, leaves, a, b, est.level_reports, support))
    answers = np.array(answers)
    var = np.mean(variances)
    assert abs(answers.mean() - truth) < 5 * math.sqrt(var / 400)
    assert abs(np.var(answers, ddof=1) / var - 1) < 5 * math.sqrt(2 / 399)


def test_least_squares_answers_are_unbiased():
    """Least squares is linear with weights depending only on the per-level counts: still unbiased."""
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=16, branching=2)
    x = beta_values(3000, seed=4)
    leaves = hh.leaf_index(x)
    qs = [(0, 5), (3, 11), (8, 16)]
    ans = {q: [] for q in qs}
    for s in range(300):
        est = hh.estimate_ranges(hh.privatize(x, rng=5000 + s), consistency="least-squares")
        for q in qs:
            ans[q].append(est.range(q[0] / 16, q[1] / 16))
    for (a, b), v in ans.items():
        v = np.array(v)
        truth = np.mean((leaves >= a) & (leaves < b))
        assert abs(v.mean() - truth) < 5 * v.std(ddof=1) / math.sqrt(v.size)


# -- consistency -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("oracle", ["auto", "grr", "olh", "hadamard"])
@pytest.mark.parametrize("method", ["none", "least-squares", "nonnegative"])
def test_consistency_properties(method, oracle):
    """Children sum to their parent, non-negativity for "nonnegative", total 1 (= n people), with GRR, OLH
    and mixed levels."""
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=1024, oracle=oracle)
    est = hh.estimate_ranges(hh.privatize(beta_values(100_000), rng=2), consistency=method)
    assert est.n_reports == 100_000 and sum(est.level_reports) == 100_000
    nodes = est.node_estimates
    assert nodes[0].tolist() == [1.0] and len(nodes) == hh.n_levels + 1
    if method == "none":
        assert not consistency.is_consistent(hh.shape, nodes, atol=1e-3)
        return
    assert consistency.is_consistent(hh.shape, nodes, atol=1e-12)
    assert est.leaves.sum() == pytest.approx(1.0, abs=1e-12)
    assert est.range(0, 1) == pytest.approx(1.0, abs=1e-12)
    if method == "nonnegative":
        assert min(a.min() for a in nodes) >= 0.0
        assert est.converged and est.solver in ("lsq", "polish", "active-set")
    else:
        assert est.leaves.min() < 0  # leaves at ε = 1: least squares alone goes negative
    assert np.sum(est.leaves * 100_000) == pytest.approx(100_000)


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_consistency_lowers_range_error_on_beta(eps):
    """Range-query MAE against the truth (500 random ranges of width 0.1): least squares and non-negative
    consistency both beat the raw tree, fixed seeds."""
    hh = HierarchicalHistogram(eps, (0, 1), n_leaves=256)
    x = beta_values(100_000, seed=8)
    agg = hh.aggregate(hh.privatize(x, rng=9))
    rng = np.random.default_rng(10)
    lo = rng.random(500) * 0.9
    hi = lo + 0.1
    xs = np.sort(x)
    truth = (np.searchsorted(xs, hi, side="right") - np.searchsorted(xs, lo, side="left")) / x.size
    mae = {m: np.mean(np.abs(hh.estimate_ranges(agg, consistency=m).range(lo, hi) - truth))
           for m in ("none", "least-squares", "nonnegative")}
    assert mae["least-squares"] < mae["none"]
    assert mae["nonnegative"] < mae["none"]


# -- RangeEstimate -----------------------------------------------------------------------------------------

def test_range_estimate_is_frozen_and_picklable(tmp_path):
    hh = HierarchicalHistogram(2.0, (0, 1), n_leaves=64)
    est = hh.estimate_ranges(hh.privatize(beta_values(50_000), rng=1), consistency="nonnegative")
    with pytest.raises(FrozenInstanceError):
        est.consistency = "none"
    assert not est.leaves.flags.writeable and not est.node_estimates[1].flags.writeable
    with pytest.raises(ValueError):
        est.leaves[0] = 1.0
    assert pickle.loads(pickle.dumps(est)) == est
    text = repr(est)
    for part in ("consistency='nonnegative'", "branching=4", "n_leaves=64", "epsilon=2", "n_reports=50000"):
        assert part in text
    d = est.to_distribution()
    assert d.spec == hh.spec and d.n_reports == 50_000 and d.method == "hh-nonnegative"
    assert d.n_bins == 64
    import matplotlib

    matplotlib.use("Agg")
    ax = est.plot(true=beta_values(1000))
    assert ax.get_xlabel() == "value"
    import matplotlib.pyplot as plt

    plt.close("all")


# -- parameters, branching, oracle choice ------------------------------------------------------------------

def test_choose_branching_refuses_candidates_that_all_exceed_the_leaves():
    # every candidate larger than the tree: one clear ValueError naming them (it failed with a TypeError on None)
    with pytest.raises(ValueError, match=r"no candidate branching factor is at most n_leaves=16; got \[32, 64\]"):
        choose_branching(1.0, 16, candidates=(32, 64))
    assert choose_branching(1.0, 16, candidates=(32, 4)) == 4


def test_default_branching_follows_the_variance_formula():
    assert HierarchicalHistogram(1.0, (0, 1)).branching == 4
    assert choose_branching(1.0, 1024) == 4
    assert choose_branching(1.0, 1024, "grr") == 4
    # the formula by hand for GRR levels, B = 4, 1024 leaves: 5 levels of 4..1024 nodes, 3 nodes per level
    ee = math.e
    by_hand = 5 * sum(3 * (k - 2 + ee) / (ee - 1) ** 2 for k in (4, 16, 64, 256, 1024))
    assert predicted_range_variance(1.0, 1024, 4, "grr") == pytest.approx(by_hand)
    assert predicted_range_variance(1.0, 1024, 4, "grr", n_reports=1000) == pytest.approx(by_hand / 1000)
    # "auto": GRR on the 4 nodes of level 1 (4 < 3e + 2), OLH (g = 4) on the levels of 16..1024 nodes
    p, q = ee / (ee + 3), 1 / 4
    olh = q * (1 - q) / (p - q) ** 2
    auto = 5 * (3 * (4 - 2 + ee) / (ee - 1) ** 2 + 4 * 3 * olh)
    assert predicted_range_variance(1.0, 1024, 4) == pytest.approx(auto)
    assert auto < by_hand / 10
    for oracle in ("auto", "grr", "olh"):
        best = choose_branching(1.0, 1024, oracle)
        for b in range(2, 17):
            assert predicted_range_variance(1.0, 1024, best, oracle) <= predicted_range_variance(1.0, 1024, b, oracle)


def test_branching_with_a_constant_variance_oracle(monkeypatch):
    """OUE/OLH-style levels (variance independent of k): (B-1) L^2 is minimal at B = 4 for 1024 leaves
    (real minimiser ≈ 4.9, Kulkarni–Cormode–Srivastava)."""

    class Flat(hier.GRRLevel):
        name = "flat"

        @classmethod
        def predicted_variance(cls, epsilon, k):
            return 4 * math.exp(epsilon) / math.expm1(epsilon) ** 2

    monkeypatch.setitem(hier.LEVEL_ORACLES, "flat", Flat)
    assert choose_branching(1.0, 1024, "flat") == 4
    assert choose_branching(1.0, 4096, "flat") == 4  # (B-1)L^2: B=4 -> 108, B=8 -> 112, B=5 -> 144
    assert choose_branching(1.0, 2**16, "flat") in (4, 5, 6)
    obj = {b: (b - 1) * consistency.tree_shape(1024, b).n_levels ** 2 for b in range(2, 17)}
    assert min(obj, key=obj.get) == 4


def test_auto_oracle_falls_back_to_grr(monkeypatch):
    calls = []

    def fake(k, epsilon, *, communication=None):
        calls.append((k, communication))
        return Recommendation(None, "OLH", 1.0)  # recommended but not available as a level oracle

    monkeypatch.setattr(hier, "recommend", fake)
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=64, branching=4)
    assert hh.oracle_names == ("grr", "grr", "grr")
    assert calls == [(4, "low"), (16, "low"), (64, "low")]


def test_oracle_argument_forms():
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=64, branching=4, oracle=("grr", "grr", "grr"))
    assert hh == HierarchicalHistogram(1.0, (0, 1), n_leaves=64, branching=4, oracle="grr")
    assert hh.spec.get("oracle") == ("grr", "grr", "grr")


@pytest.mark.parametrize("kwargs,exc,msg", [
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(epsilon="1"), TypeError, "epsilon"),
    (dict(bounds=None), ValueError, "bounds is required"),
    (dict(bounds=(1, 1)), ValueError, "low < high"),
    (dict(n_leaves=1), ValueError, "n_leaves must be in"),
    (dict(n_leaves=2**16 + 1), ValueError, "n_leaves must be in"),
    (dict(n_leaves=16.0), TypeError, "n_leaves must be an int"),
    (dict(n_leaves=True), TypeError, "n_leaves must be an int"),
    (dict(branching=1), ValueError, "branching must be in"),
    (dict(n_leaves=8, branching=9), ValueError, "branching must be in"),
    (dict(branching=2.5), TypeError, "branching must be an int"),
    (dict(oracle="oue"), ValueError, "oracle must be"),
    (dict(oracle=3), TypeError, "oracle must be"),
    (dict(oracle=["grr", 1]), TypeError, "oracle names"),
    (dict(oracle=["grr", "xyz"]), ValueError, "unknown level oracle"),
    (dict(n_leaves=64, branching=4, oracle=["grr"] * 2), ValueError, "one name per level"),
    (dict(oracle=["grr"] * 5), ValueError, "branching is required"),
])
def test_bad_parameters(kwargs, exc, msg):
    args = dict(epsilon=1.0, bounds=(0, 1))
    args.update(kwargs)
    eps, bounds = args.pop("epsilon"), args.pop("bounds")
    with pytest.raises(exc, match=msg):
        HierarchicalHistogram(eps, bounds, **args)


@pytest.mark.parametrize("x,exc,msg", [
    (np.array([0.1, np.nan]), ValueError, "missing or non-finite"),
    (np.array([0.1, np.inf]), ValueError, "missing or non-finite"),
    (np.zeros((2, 2)), ValueError, "one-dimensional"),
    (np.array(["a"]), TypeError, "real numbers"),
    (np.array([True]), TypeError, "real numbers"),
])
def test_bad_values_draw_nothing(x, exc, msg, monkeypatch):
    monkeypatch.setattr(_random.WordSource, "draw", lambda self, n: (_ for _ in ()).throw(AssertionError))
    with pytest.raises(exc, match=msg):
        HierarchicalHistogram(1.0, (0, 1), n_leaves=16).privatize(x)


def test_out_of_range_values_are_clipped_or_raise():
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=16)
    with pytest.warns(ldp.ClippingWarning):
        r = hh.privatize(np.array([-1.0, 2.0]), rng=0)
    assert r == hh.privatize(np.array([0.0, 1.0]), rng=0)
    with pytest.raises(ValueError):
        hh.privatize(np.array([2.0]), out_of_range="raise")
    assert len(hh.privatize(np.array([], dtype=float), rng=0)) == 0


def test_estimate_errors():
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=64)
    with pytest.raises(ValueError, match="no reports"):
        hh.estimate_ranges(hh.empty_aggregate())
    with pytest.raises(ValueError, match="received no reports"):
        hh.estimate_ranges(hh.privatize(np.array([0.5]), rng=0))
    agg = hh.aggregate(hh.privatize(beta_values(1000), rng=0))
    with pytest.raises(ValueError, match="consistency must be one of"):
        hh.estimate_ranges(agg, consistency="ls")
    with pytest.raises(TypeError, match="Reports or Aggregate"):
        hh.estimate_ranges(np.zeros(hh.n_cells))
    d = hh.estimate_distribution(agg)
    assert isinstance(d, ldp.DistributionEstimate) and d.n_bins == 64


# -- OLH levels (packed reports) ---------------------------------------------------------------------------

SEED_MASK = (2**64 - 1) ^ 0xFFFF
MIXED = ("grr", "grr", "olh", "olh")  # n_leaves=16, branching=2
MIXED_HR = ("grr", "hadamard", "olh", "hadamard")


def seed_words(n, seed=0):
    return [int(w) for w in np.random.default_rng(seed).bit_generator.random_raw(n)]


def test_auto_picks_olh_where_the_choice_rule_says():
    hh = HierarchicalHistogram(1.0, (0, 1))
    assert hh.branching == 4 and hh.shape.counts[1:] == (4, 16, 64, 256, 1024)
    # GRR while k < 3e^ε + 2 = 10.2, OLH from 16 nodes on; at the leaves (k = 1024) OLH, as recommend says
    assert hh.oracle_names == ("grr", "olh", "olh", "olh", "olh")
    assert ldp.frequency.recommend(1024, 1.0, communication="low").name == "OLH"
    assert all(isinstance(lvl, hier.OLHLevel) and lvl.g == 4 for lvl in hh.level_oracles[1:])
    assert hh.words_per_record == 3 and hh.plan.packed
    assert HierarchicalHistogram(4.0, (0, 1), n_leaves=64, branching=4).oracle_names == ("grr", "grr", "grr")
    assert HierarchicalHistogram(4.0, (0, 1), n_leaves=1024).oracle_names[-1] == "olh"
    # the spec records the level oracles and the layout: configurations never mix
    assert hh.spec.get("oracle") == ("grr", "olh", "olh", "olh", "olh")
    assert hh.spec.get("layout") == hier.PACKED_LAYOUT and hh.spec.get("g") == (0, 4, 4, 4, 4)
    assert HierarchicalHistogram(1.0, (0, 1), oracle="grr").spec.get("layout") is None
    assert ldp.from_spec(hh.spec) == hh and ldp.from_spec(ldp.Spec.from_json(hh.spec.to_json())) == hh
    x = beta_values(5000)
    for other in ("grr", "olh", ("olh",) * 5):
        mech = HierarchicalHistogram(1.0, (0, 1), branching=4, oracle=other)
        assert mech.spec != hh.spec
        with pytest.raises(ldp.SpecMismatchError):
            mech.estimate_ranges(hh.aggregate(hh.privatize(x, rng=0)))
    assert HierarchicalHistogram(1.0, (0, 1), branching=4, oracle=("olh",) * 5) == \
        HierarchicalHistogram(1.0, (0, 1), branching=4, oracle="olh")


def test_olh_level_g_is_capped_for_the_packed_report():
    assert hier.level_g(1.0) == 4 and hier.level_g(8.0) == round(math.exp(8)) + 1
    assert hier.level_g(9.0) == hier.LEVEL_G_MAX == 4096
    hh = HierarchicalHistogram(20.0, (0, 1), n_leaves=16, branching=4, oracle="olh")
    assert [lvl.g for lvl in hh.level_oracles] == [4096, 4096]
    r = hh.privatize(beta_values(2000), rng=0)
    assert int((r.codes & np.uint64(0xFFF)).max()) < 4096


@pytest.mark.parametrize("oracle", ["olh", MIXED, MIXED_HR])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_tree_with_olh_levels_is_exactly_epsilon(epsilon, oracle):
    """Given the seed word (independent of the value and of the level), a report is a mixture over levels
    with value-independent weights of GRR over ``k_l`` or over ``g``: check every leaf pair and code in
    exact rationals for 48 seeds; the worst ratio is the level oracles' (tight), never above e^ε."""
    small = hier.level_g(epsilon) <= 64  # else rows of g Fractions per OLH level: a smaller tree, 3 seeds
    n_leaves = 16 if small else 4
    if not small and oracle != "olh":
        oracle = oracle[1:2] + ("olh",)
    hh = HierarchicalHistogram(epsilon, (0, 1), n_leaves=n_leaves, branching=2, oracle=oracle)
    assert hh.plan.packed
    worst = 0
    for s in seed_words(48 if small else 3, seed=1):
        rows = [hh.plan.exact_probabilities(t, seed=s) for t in range(n_leaves)]
        worst = max(worst, check_exact_epsilon(rows, epsilon, tight=False))
    assert worst == max(lvl.oracle.plan.extreme_ratio() for lvl in hh.level_oracles)
    check_exact_epsilon(rows, epsilon, ratio=worst)  # tight: the ratio reaches e^ε
    with pytest.raises(ValueError, match="seed"):
        hh.plan.exact_probabilities(0)


def test_olh_checker_rejects_planted_bugs():
    """Negative controls on an OLH tree: (1) the hash seed derived from the value (seed word XOR the leaf):
    reports of different leaves carry different seeds, an infinite ratio; (2) the level chosen from the value."""
    eps = 1.0
    hh = HierarchicalHistogram(eps, (0, 1), n_leaves=16, branching=4, oracle="olh")
    plan = hh.plan
    s = seed_words(1, seed=2)[0]
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([plan.exact_probabilities(t, seed=s ^ (t << 16)) for t in range(16)], eps)
    rows = []
    for t in range(16):
        w = [Fraction(3, 4), Fraction(1, 4)] if t % 2 == 0 else [Fraction(1, 2), Fraction(1, 2)]
        row = {}
        for l, (lvl, wl) in enumerate(zip(plan.levels, w), start=1):
            for y, p in lvl.exact_probabilities(plan.node_of(t, l), s).items():
                row[plan.level_code(l, y, s)] = wl * p
        rows.append(row)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, eps)
    # the correct rows pass
    check_exact_epsilon([plan.exact_probabilities(t, seed=s) for t in range(16)], eps)


def _run_with_seed(hh, x, seed, rng):
    """The kernel on values ``x`` with every record's seed word set to ``seed`` (other words random)."""
    words = np.random.default_rng(rng).bit_generator.random_raw(3 * x.size)
    words[0::3] = seed
    out = np.empty(x.size, dtype=np.uint64)
    hh._run_kernel(np.ascontiguousarray(x, dtype=np.float64), words, out)
    return out


@pytest.mark.parametrize("oracle,eps", [(MIXED, 1.0), ("olh", 2.0), ("olh", 0.5), (MIXED_HR, 1.0)])
def test_olh_kernel_matches_plan(oracle, eps):
    """Chi-square (α = 1e-6) of the kernel's reports against the plan's exact distribution given the seed,
    for 3 seeds × 3 leaves; every report is in the plan's alphabet for that seed."""
    hh = HierarchicalHistogram(eps, (0, 10), n_leaves=16, branching=2, oracle=oracle)
    for i, s in enumerate(seed_words(3, seed=3)):
        for j, t in enumerate([0, 9, 15]):
            exact = hh.plan.exact_probabilities(t, seed=s)
            codes = list(exact)
            out = _run_with_seed(hh, np.full(200_000, (t + 0.5) * 10 / 16), s, rng=10 * i + j)
            got, cnt = np.unique(out, return_counts=True)
            assert set(int(c) for c in got) <= set(codes)
            counts = dict(zip((int(c) for c in got), cnt))
            check_kernel_matches([counts.get(c, 0) for c in codes], [float(exact[c]) for c in codes])


def test_olh_twin_rejects_a_mutant():
    """Negative control for the chi-square twin: the kernel's reports for leaf 0 against the plan of leaf 15."""
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=16, branching=2, oracle="olh")
    s = seed_words(1, seed=4)[0]
    exact = hh.plan.exact_probabilities(15, seed=s)
    codes = list(exact)
    out = _run_with_seed(hh, np.zeros(200_000), s, rng=5)
    got, cnt = np.unique(out, return_counts=True)
    counts = dict(zip((int(c) for c in got), cnt))
    with pytest.raises(PrivacyViolation):
        check_kernel_matches([counts.get(c, 0) for c in codes], [float(exact[c]) for c in codes])


def test_hash_seed_and_level_do_not_depend_on_the_value():
    """Same words, different values → the same level and, on OLH levels, the same seed: the seed word's
    bits 63..16, never combined with the value."""
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=64, branching=4, oracle=("grr", "olh", "olh"))
    n = 20_000
    rng = np.random.default_rng(3)
    xs = [rng.random(n), np.zeros(n), np.ones(n), rng.beta(5, 2, n)]
    words = words_for(11, n, c=3)
    outs = []
    for x in xs:
        out = np.empty(n, dtype=np.uint64)
        hh._run_kernel(np.ascontiguousarray(x, dtype=np.float64), words, out)
        outs.append(out)
    levels = [hh.plan.report_levels(o) for o in outs]
    olh = levels[0] >= 2
    assert set(np.unique(levels[0])) == {1, 2, 3}
    for o, lv in zip(outs, levels):
        np.testing.assert_array_equal(lv, levels[0])
        np.testing.assert_array_equal(o[olh] & np.uint64(SEED_MASK), words[0::3][olh] & np.uint64(SEED_MASK))
    # the same through privatize (seeded), and the values' reports differ where they should
    r = [hh.privatize(x, rng=11) for x in xs]
    for a in r[1:]:
        np.testing.assert_array_equal(hh.report_levels(a), hh.report_levels(r[0]))
        np.testing.assert_array_equal((a.codes & np.uint64(SEED_MASK))[olh], (r[0].codes & np.uint64(SEED_MASK))[olh])
    assert not np.array_equal(r[1].codes, r[2].codes)


@pytest.mark.parametrize("n_leaves,branching,oracle", [(1024, 4, "auto"), (100, 7, "olh"), (10, 3, ("olh", "grr", "olh")),
                                                       (2, 2, "olh"), (64, 4, ("hadamard", "grr", "olh"))])
def test_packed_kernel_and_aggregate_match_naive(n_leaves, branching, oracle):
    low, high = -3.0, 5.0
    hh = HierarchicalHistogram(1.3, (low, high), n_leaves=n_leaves, branching=branching, oracle=oracle)
    assert hh.plan.packed
    rng = np.random.default_rng(0)
    edges = low + (high - low) * np.arange(n_leaves + 1) / n_leaves
    x = np.clip(np.concatenate([rng.uniform(low, high, 1500), edges, np.nextafter(edges, high), [low, high]]),
                low, high)
    r = hh.privatize(x, rng=5)
    assert r.codes.dtype == np.uint64
    np.testing.assert_array_equal(r.codes, naive_tree.hierarchy_packed(x, low, high, n_leaves, hh.plan.table,
                                                                        words_for(5, x.size, c=3)))
    sub = r[:400]
    agg = hh.aggregate(sub)
    ks = [lvl.k if lvl.hashed else lvl.block_size for lvl in hh.level_oracles]
    gs = [lvl.g if lvl.hashed else 0 for lvl in hh.level_oracles]
    np.testing.assert_array_equal(agg.counts, naive_tree.aggregate_packed(sub.codes, ks, gs))
    assert agg.n_reports == 400


def test_packed_aggregates_merge_exactly():
    hh = HierarchicalHistogram(1.0, (0, 100), n_leaves=256, oracle="auto")
    x = beta_values(30_000) * 100
    r = hh.privatize(x, rng=3)
    whole = hh.aggregate(r)
    parts = [hh.aggregate(r[i:i + 7000]) for i in range(0, len(r), 7000)]
    assert sum(parts) == whole and ldp.Aggregate.merge(parts[::-1]) == whole
    assert hh.empty_aggregate() + whole == whole and hh.empty_aggregate().n_reports == 0
    assert whole.n_reports == 30_000 and ldp.Aggregate.from_bytes(whole.to_bytes()) == whole
    blocks = hh.level_counts(whole)
    n_l = [lvl.level_reports(b) for lvl, b in zip(hh.level_oracles, blocks)]
    np.testing.assert_array_equal(n_l, np.bincount(hh.report_levels(r), minlength=hh.n_levels + 1)[1:])
    assert hh.estimate_ranges(whole) == hh.estimate_ranges(ldp.Aggregate.merge(parts))


def test_packed_reports_are_validated():
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=64, branching=4, oracle=("grr", "olh", "olh"))
    good = hh.privatize(beta_values(100), rng=0).codes.copy()
    spec = hh.spec
    r = ldp.Reports(good, spec)
    assert not r.codes.flags.writeable and r.codes is not good  # the caller keeps their array
    bad_level = good.copy()
    bad_level[7] = np.uint64(3 << 12)  # level index 3 of 3 levels
    bad_y = good.copy()
    bad_y[5] = np.uint64(1 << 20 | 2 << 12 | 4)  # OLH level, y = 4 >= g = 4
    bad_grr = good.copy()
    bad_grr[9] = np.uint64(4 << 16)  # GRR level 1 has 4 nodes
    grr_with_y = good.copy()
    grr_with_y[2] = np.uint64(1 << 16 | 1)
    for codes, first in [(bad_level, 7), (bad_y, 5), (bad_grr, 9), (grr_with_y, 2)]:
        with pytest.raises(ValueError, match=f"first at index {first}"):
            ldp.Reports(codes, spec)
    hr = HierarchicalHistogram(1.0, (0, 1), n_leaves=64, branching=4, oracle=("hadamard", "olh", "olh"))
    codes = hr.privatize(beta_values(100), rng=0).codes.copy()
    codes[3] = np.uint64(7 << 16)  # K = 8 indices on level 1: fine
    ldp.Reports(codes, hr.spec)
    codes[4] = np.uint64(8 << 16)
    with pytest.raises(ValueError, match="first at index 4"):
        ldp.Reports(codes, hr.spec)
    with pytest.raises(ValueError, match="negative"):
        ldp.Reports(np.array([1, -1]), spec)
    with pytest.raises(TypeError):
        ldp.Reports(np.array([1.0]), spec)
    # the offset layout still checks the categorical alphabet
    g = HierarchicalHistogram(1.0, (0, 1), n_leaves=64, branching=4, oracle="grr")
    with pytest.raises(ValueError, match="outside the output alphabet"):
        ldp.Reports(np.array([0, g.n_cells]), g.spec)
    assert ldp.Reports(np.array([0, g.n_cells - 1]), g.spec).codes.dtype == np.uint8


@pytest.mark.parametrize("oracle,eps", [("olh", 1.0), (("grr", "olh", "olh", "olh", "olh"), 0.5),
                                        (("hadamard", "olh", "grr", "hadamard", "hadamard"), 1.0)])
def test_olh_range_answers_are_unbiased(oracle, eps):
    """Before consistency, z-tests with the exact variance given the per-level counts, on prefix and suffix
    ranges of a binary tree (at most one node per level: an OLH node's support is then a Bernoulli)."""
    hh = HierarchicalHistogram(eps, (0, 1), n_leaves=32, branching=2, oracle=oracle)
    x = beta_values(200_000, seed=12)
    leaves = hh.leaf_index(x)
    est = hh.estimate_ranges(hh.privatize(x, rng=13), consistency="none")
    support = [lvl.oracle.support_probabilities for lvl in hh.level_oracles]
    hashed = [l for l, lvl in enumerate(hh.level_oracles, start=1) if lvl.name != "grr"]
    edges = hh.leaf_edges
    for a, b in [(0, c) for c in range(1, 32)] + [(c, 32) for c in range(1, 32)]:
        truth = np.mean((leaves >= a) & (leaves < b))
        var = naive_tree.none_range_variance(hh.shape, leaves, a, b, est.level_reports, support, hashed)
        z = (est.range(edges[a], edges[b]) - truth) / math.sqrt(var)
        assert abs(z) < 5.0, (a, b, z)


def test_olh_range_variance_matches_repeated_collections():
    """The variance formula for OLH nodes agrees with the spread over 300 collections (and the mean with the
    truth)."""
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=16, branching=2, oracle="olh")
    x = beta_values(3000, seed=3)
    leaves = hh.leaf_index(x)
    support = [lvl.oracle.support_probabilities for lvl in hh.level_oracles]
    a, b = 0, 11
    truth = np.mean(leaves < b)
    answers, variances = [], []
    for s in range(300):
        est = hh.estimate_ranges(hh.privatize(x, rng=2000 + s), consistency="none")
        answers.append(est.range(a / 16, b / 16))
        variances.append(naive_tree.none_range_variance(hh.shape, leaves, a, b, est.level_reports, support,
                                                        (1, 2, 3, 4)))
    answers = np.array(answers)
    var = np.mean(variances)
    assert abs(answers.mean() - truth) < 5 * math.sqrt(var / 300)
    assert abs(np.var(answers, ddof=1) / var - 1) < 5 * math.sqrt(2 / 299)


def test_olh_level_variance_is_the_closed_form():
    lvl = hier.OLHLevel(1.0, 1024)
    p, q = lvl.oracle.support_probabilities
    assert lvl.variance(1000) == pytest.approx(q * (1 - q) / (p - q) ** 2 / 1000, rel=1e-12)
    assert lvl.variance(1) == pytest.approx(hier.OLHLevel.predicted_variance(1.0, 1024), rel=1e-6)
    assert hier.GRRLevel.predicted_variance(1.0, 1024) / hier.OLHLevel.predicted_variance(1.0, 1024) > 60


def test_hadamard_levels():
    """Hadamard response as a level oracle: offset layout (2 words, categorical codes), exact ε on every
    leaf pair (tight), K = 2**bit_length(k) codes per level, variance BLH's."""
    hh = HierarchicalHistogram(1.0, (0, 1), n_leaves=16, branching=2, oracle="hadamard")
    assert not hh.plan.packed and hh.words_per_record == 2
    assert [lvl.K for lvl in hh.level_oracles] == [4, 8, 16, 32] and hh.n_cells == 60
    rows = [hh.plan.exact_probabilities(t) for t in range(16)]
    assert check_exact_epsilon(rows, 1.0) == hh.level_oracles[0].oracle.plan.extreme_ratio()
    ee = math.e
    assert hier.HadamardLevel.predicted_variance(1.0, 64) == pytest.approx((ee + 1) ** 2 / (ee - 1) ** 2)
    lvl = hh.level_oracles[-1]
    assert lvl.variance(1) == pytest.approx(lvl.predicted_variance(1.0, 16), rel=1e-9)
    assert ldp.frequency.recommend(1024, 1.0, communication="low").name != "HadamardResponse"
    for node in (0, 5, 15):  # float probabilities agree with the exact ones
        exact = lvl.exact_probabilities(node)
        np.testing.assert_allclose(lvl.probabilities(node), [float(exact[y]) for y in range(32)], rtol=1e-15)


def test_split_levels_groups_reports_by_level():
    from ldpnum._kernels.server_tree import split_levels

    rng = np.random.default_rng(0)
    codes = (rng.integers(0, 2**40, 1000, dtype=np.uint64) << np.uint64(16)) | \
        (rng.integers(0, 3, 1000, dtype=np.uint64) << np.uint64(12)) | rng.integers(0, 4096, 1000, dtype=np.uint64)
    out = np.empty_like(codes)
    starts = np.empty(4, dtype=np.int64)
    assert split_levels(codes, 3, out, starts) == (0, -1)
    lev = (codes >> np.uint64(12)) & np.uint64(15)
    for l in range(3):
        np.testing.assert_array_equal(out[starts[l]:starts[l + 1]], codes[lev == l] & ~np.uint64(0xF000))
    assert starts[0] == 0 and starts[-1] == 1000
    codes[[5, 9]] |= np.uint64(0xF000)
    assert split_levels(codes, 3, out, starts) == (2, 5)


def test_quantiles_of_a_noisy_tree_are_not_biased_early():
    # least-squares leaves are noisy and can be negative, so the CDF wanders; its first crossing of q comes
    # early (measured: mean median 616 against a truth of 721). The isotonic fit is unbiased within noise:
    # measured spread of the median 66 per collection, so 4 standard errors of a 40-collection mean is 42.
    x = np.random.default_rng(0).uniform(0, 1440, 10_000)
    hh = ldp.HierarchicalHistogram(1.0, (0, 1440), n_leaves=1024)
    q = np.array([hh.estimate_ranges(hh.aggregate(hh.privatize(x, rng=seed))).quantile([0.25, 0.5, 0.75])
                  for seed in range(40)])
    truth = np.quantile(x, [0.25, 0.5, 0.75])
    se = q.std(axis=0, ddof=1) / np.sqrt(len(q))
    assert np.all(np.abs(q.mean(axis=0) - truth) < 4 * se), (q.mean(axis=0), truth, se)
