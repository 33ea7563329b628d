"""ldp.Marginals (CALM-style k-way marginals of categorical columns): exact ε of every report, the set choice
independent of the values, the kernel against its plan, unbiased raw marginals (z-tests, closed-form
variance), consistency after post-processing (with a dense reference of the consistency step), recovery of a
planted dependence, the pandas path, and bad input."""

import itertools
import math
import pickle
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum import Aggregate, Reports, from_spec
from ldpnum.multi import MarginalsEstimate
from ldpnum.multi.marginals import check_marginals_codes, consistency_step, max_inconsistency, shared_subsets

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches

CATS = {"a": 2, "b": 3, "c": 2}


def seed_words(n, seed=0):
    return [int(w) for w in np.random.default_rng(seed).bit_generator.random_raw(n)]


def every_row(categories):
    return np.array(list(itertools.product(*[range(c) for c in categories.values()])), dtype=float)


def draw_rows(p, n, seed):
    """``n`` rows drawn i.i.d. from the joint distribution ``p`` (an array over every column's categories)."""
    idx = np.random.default_rng(seed).choice(p.size, size=n, p=p.ravel())
    return np.column_stack(np.unravel_index(idx, p.shape)).astype(float)


def project(p, keep):
    return p.sum(axis=tuple(i for i in range(p.ndim) if i not in keep))


# -- the set choice and exact ε ----------------------------------------------------------------------------------

def test_set_choice_ignores_values_and_weights_are_exact():
    """Same words, different rows: the same set for every person (the word alone chooses it); the set
    weights are assign_columns' exact multiply-shift fractions, summing to 1."""
    m = ldp.Marginals(2.0, {"a": 4, "b": 3, "c": 5, "d": 2}, k=3)
    n = 5000
    words = np.random.default_rng(0).bit_generator.random_raw(3 * n)
    X1 = np.zeros((n, 4))
    X2 = draw_rows(np.full((4, 3, 5, 2), 1 / 120), n, 1)
    sets = []
    for X in (X1, X2):
        out = np.empty(n, dtype=np.uint64)
        m._run_kernel(m.prepare_values(X), words, out)
        sets.append(m._plan.report_grids(out))
    np.testing.assert_array_equal(sets[0], sets[1])
    naive = ((words[0::3] >> np.uint64(16)) * np.uint64(4)) >> np.uint64(48)
    np.testing.assert_array_equal(sets[0], naive.astype(np.intp))
    assert sum(m._plan.grid_weights) == 1 and len(m.sets) == math.comb(4, 3)
    assert max(m._plan.grid_weights) - min(m._plan.grid_weights) <= Fraction(1, 1 << 48)


@pytest.mark.parametrize("epsilon", [1.7, 2.0, 4.0, 8.0, 20.0])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_grr_sets_report_is_exactly_epsilon(epsilon, k):
    """Every row against every row, every report (GRR on every set: fewer than 3e^ε + 2 cells)."""
    m = ldp.Marginals(epsilon, CATS, k=k)
    assert set(m.oracle_names) == {"grr"}
    X = every_row(CATS)
    rows = [m.plan.exact_probabilities(c) for c in m.cells(X)]
    worst = check_exact_epsilon(rows, epsilon)
    assert worst == max(o.oracle.plan.extreme_ratio() for o in m.plan.oracles)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0])
def test_olh_sets_report_is_exactly_epsilon(epsilon):
    """OLH sets (many cells): given the seed word (drawn apart from the values and the set), every row pair
    and report, for 8 seeds; the worst ratio is the oracles' (tight)."""
    cats = {"a": 4, "b": 4, "c": 3}
    m = ldp.Marginals(epsilon, cats, k=2)
    assert set(m.oracle_names) == {"olh"}
    cells = m.cells(every_row(cats))
    worst = 0
    for s in seed_words(8, seed=1):
        worst = max(worst, check_exact_epsilon([m.plan.exact_probabilities(c, seed=s) for c in cells], epsilon,
                                               tight=False))
    assert worst == max(o.oracle.plan.extreme_ratio() for o in m.plan.oracles)


def test_mixed_sets_report_is_exactly_epsilon():
    cats = {"a": 2, "b": 2, "c": 9}
    m = ldp.Marginals(1.5, cats)
    assert m.oracle_names == ("grr", "olh", "olh")
    cells = m.cells(every_row(cats))
    for s in seed_words(4, seed=2):
        check_exact_epsilon([m.plan.exact_probabilities(c, seed=s) for c in cells], 1.5)


def test_checker_rejects_planted_bugs():
    """Negative controls: (1) the set chosen from the values; (2) a 1.25ε plan; (3) a report of every set."""
    eps = 2.0
    m = ldp.Marginals(eps, CATS)
    plan = m.plan
    cells = m.cells(every_row(CATS))
    rows = []
    for c in cells:
        w = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)] if c[0] % 2 else [Fraction(1, 4)] * 2 + [Fraction(1, 2)]
        rows.append({plan.report(j, code): w[j] * p for j, o in enumerate(plan.oracles)
                     for code, p in o.exact_probabilities(int(c[j])).items()})
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, eps)
    loose = ldp.Marginals(1.25 * eps, CATS)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([loose.plan.exact_probabilities(c) for c in cells], eps)
    every = []
    for c in cells:
        p = [o.exact_probabilities(int(c[j])) for j, o in enumerate(plan.oracles)]
        every.append({(x, y, z): px * py * pz for x, px in p[0].items() for y, py in p[1].items()
                      for z, pz in p[2].items()})
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(every, eps)
    check_exact_epsilon([plan.exact_probabilities(c) for c in cells], eps)  # the correct rows pass


# -- the kernel against its plan ------------------------------------------------------------------------------

def _run_with_seed(m, X, seed, rng):
    words = np.random.default_rng(rng).bit_generator.random_raw(3 * len(X))
    words[1::3] = seed
    out = np.empty(len(X), dtype=np.uint64)
    m._run_kernel(m.prepare_values(X), words, out)
    return out


@pytest.mark.parametrize("eps,cats,k", [(2.0, CATS, 2), (1.0, {"a": 4, "b": 3, "c": 2}, 2), (3.0, CATS, 3)])
def test_kernel_matches_plan(eps, cats, k):
    m = ldp.Marginals(eps, cats, k=k)
    rows = every_row(cats)
    for i, s in enumerate(seed_words(2, seed=3)):
        for j, row in enumerate([rows[0], rows[-1]]):
            X = np.tile(row, (150_000, 1))
            exact = m.plan.exact_probabilities(m.cells(X[:1])[0], seed=s)
            codes = list(exact)
            got, cnt = np.unique(_run_with_seed(m, X, s, rng=10 * i + j), return_counts=True)
            assert set(int(c) for c in got) <= set(codes)
            counts = dict(zip((int(c) for c in got), cnt))
            check_kernel_matches([counts.get(c, 0) for c in codes], [float(exact[c]) for c in codes])


def test_kernel_twin_rejects_a_mutant():
    """The reports of row 0 do not match the exact distribution of another row."""
    m = ldp.Marginals(2.0, CATS)
    rows = every_row(CATS)
    exact = m.plan.exact_probabilities(m.cells(rows[-1:])[0])
    codes = list(exact)
    got, cnt = np.unique(_run_with_seed(m, np.tile(rows[0], (150_000, 1)), 0, rng=5), return_counts=True)
    counts = dict(zip((int(c) for c in got), cnt))
    with pytest.raises(PrivacyViolation):
        check_kernel_matches([counts.get(c, 0) for c in codes], [float(exact[c]) for c in codes])


def test_cells_and_aggregate_match_naive_references():
    cats = {"a": 3, "b": 2, "c": 4, "d": 2}
    m = ldp.Marginals(1.0, cats, k=3)
    X = draw_rows(np.full((3, 2, 4, 2), 1 / 48), naive.rows(3000), 4)
    cells = m.cells(X)
    for j, s in enumerate(m._plan.grids):
        want = np.zeros(len(X), dtype=np.int64)
        for a in s:
            want = want * cats["abcd"[a]] + X[:, a].astype(np.int64)
        np.testing.assert_array_equal(cells[:, j], want)
    r = m.privatize(X, rng=1)
    sets = m.report_grids(r)
    counts = m.aggregate(r).counts
    for j, o in enumerate(m._plan.oracles):
        codes = r.codes[sets == j]
        block = counts[m._plan.offsets[j]:m._plan.offsets[j + 1]]
        if o.hashed:
            assert block[-1] == codes.size
            for v in range(0, o.k, 5):
                h = np.array([o.hashed_value(v, int(w)) for w in codes])
                assert block[v] == int(np.sum(h == (codes & np.uint64(1023)).astype(np.int64)))
        else:
            np.testing.assert_array_equal(block, np.bincount((codes >> np.uint64(16)).astype(np.int64),
                                                             minlength=o.k))


# -- estimation: unbiased, consistent, accurate -----------------------------------------------------------------

def planted(shape, seed):
    """A joint distribution over ``shape`` with a strong dependence between the first two columns."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(int(np.prod(shape)))).reshape(shape)
    eye = np.zeros(shape[:2])
    np.fill_diagonal(eye, 1)
    p = p * (1 + 6 * eye.reshape(shape[:2] + (1,) * (len(shape) - 2)))
    return p / p.sum()


@pytest.mark.parametrize("eps,cats,k", [(2.0, {"a": 3, "b": 3, "c": 2}, 2), (1.0, {"a": 5, "b": 4, "c": 3}, 2),
                                        (1.0, {"a": 3, "b": 3, "c": 2, "d": 2}, 3)])
def test_raw_marginals_are_unbiased(eps, cats, k):
    """z-tests of every raw cell against the population's joint frequency, with the closed-form variance
    π(1-π)/(n_j (p*-q*)^2) (rows drawn i.i.d., so each set's reporters are i.i.d. from the population);
    Bonferroni over the cells of 3 collections at α = 1e-6; and the z's mean square near 1."""
    m = ldp.Marginals(eps, cats, k=k)
    z = z_scores(m, planted(tuple(cats.values()), 0), m.raw_marginals)
    assert np.abs(z).max() < stats.norm.isf(1e-6 / (2 * z.size))
    # cells of one table are negatively correlated, so sum z^2 is not exactly chi-square; its mean is still 1
    assert abs(np.mean(z ** 2) - 1) < 6 * math.sqrt(2 / z.size) + 0.05


def z_scores(m, p, estimator, n=120_000):
    truth = [project(p, s) for s in m._plan.grids]
    zs = []
    for seed in range(3):
        X = draw_rows(p, n, seed)
        raw, n_per = estimator(m.privatize(X, rng=100 + seed))
        var = m.cell_variances(truth, n_per)
        zs.append(np.concatenate([((r - t) / np.sqrt(v)).ravel() for r, t, v in zip(raw, truth, var)]))
    return np.concatenate(zs)


def test_unbiasedness_check_rejects_a_mutant():
    """Negative control: debiasing with the support probabilities of a 1.25ε plan fails the z-test."""
    cats = {"a": 3, "b": 3, "c": 2}
    m, wrong = ldp.Marginals(2.0, cats), ldp.Marginals(2.5, cats)

    def mutant(reports):
        _, n_per = m.raw_marginals(reports)
        blocks = m.grid_counts(m.aggregate(reports))
        return tuple(o.estimate(b).reshape(s) for o, b, s in zip(wrong._plan.oracles, blocks, m._plan.shapes)), n_per

    z = z_scores(m, planted(tuple(cats.values()), 0), mutant)
    assert np.abs(z).max() > stats.norm.isf(1e-6 / (2 * z.size))


@pytest.mark.parametrize("cats,k,eps", [({"a": 3, "b": 4, "c": 2, "d": 3}, 2, 1.0),
                                        ({"a": 3, "b": 4, "c": 2, "d": 3}, 3, 0.5),
                                        ({"a": 2, "b": 2, "c": 40}, 2, 2.0)])
def test_consistency_holds_after_post_processing(cats, k, eps):
    m = ldp.Marginals(eps, cats, k=k)
    X = draw_rows(planted(tuple(cats.values()), 1), 30_000, 2)
    est = m.estimate_marginals(m.privatize(X, rng=3))
    assert est.converged and est.n_iter >= 1
    assert est.max_inconsistency() < 1e-9
    for t in est.tables:
        assert t.min() >= 0 and abs(t.sum() - 1) < 1e-12
    for col in m.columns:  # every holder's 1-way projection agrees
        projections = [project(t, [s.index(col)]) for s, t in zip(est.sets, est.tables) if col in s]
        for q in projections[1:]:
            np.testing.assert_allclose(q, projections[0], atol=1e-9, rtol=0)
    raw = m.estimate_marginals(m.privatize(X, rng=3), consistency="none")
    assert raw.max_inconsistency() > 1e-4
    ns = m.estimate_marginals(m.privatize(X, rng=3), consistency="norm-sub")
    assert all(t.min() >= 0 for t in ns.tables)


def naive_consistency_step(tables, sets, variances, ncats):
    """Dense loops: for every attribute subset held by two or more sets (smallest first), every holder's
    projection cell by cell, the inverse-variance weighted mean, and each cell moved by (T - T_V)/C_V."""
    tables = [t.copy() for t in tables]
    d = len(ncats)
    subs = [a for r in range(1, d + 1) for a in itertools.combinations(range(d), r)
            if sum(set(a) <= set(s) for s in sets) >= 2]
    for sub in subs:
        holders = [i for i, s in enumerate(sets) if set(sub) <= set(s)]
        shape = tuple(ncats[a] for a in sub)
        proj, C = {}, {}
        for i in holders:
            T = np.zeros(shape)
            for cell in np.ndindex(tables[i].shape):
                T[tuple(cell[sets[i].index(a)] for a in sub)] += tables[i][cell]
            proj[i] = T
            C[i] = tables[i].size // T.size
        w = {i: 1 / (C[i] * variances[i]) for i in holders}
        target = sum(w[i] * proj[i] for i in holders) / sum(w.values())
        for i in holders:
            for cell in np.ndindex(tables[i].shape):
                key = tuple(cell[sets[i].index(a)] for a in sub)
                tables[i][cell] += (target[key] - proj[i][key]) / C[i]
    return tables


@pytest.mark.parametrize("ncats,k", [((2, 3, 2), 2), ((2, 3, 2, 3), 3), ((2, 2, 3, 2), 2)])
def test_consistency_step_matches_a_dense_reference(ncats, k):
    rng = np.random.default_rng(9)
    sets = list(itertools.combinations(range(len(ncats)), k))
    tables = [rng.normal(0.1, 0.05, tuple(ncats[a] for a in s)) for s in sets]
    tables = [t / t.sum() for t in tables]  # as after Norm-Sub: every table's total is 1 (the empty marginal)
    variances = list(rng.uniform(0.5, 2.0, len(sets)))
    want = naive_consistency_step(tables, sets, variances, ncats)
    got = [t.copy() for t in tables]
    consistency_step(got, sets, variances)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-14)
    assert max_inconsistency(got, sets) < 1e-12 and max_inconsistency(tables, sets) > 1e-3
    assert shared_subsets(sets) == sorted(shared_subsets(sets), key=lambda a: (len(a), a))


def test_planted_dependence_is_recovered_at_large_epsilon():
    """a and b agree 90% of the time, c is independent: at ε = 8 the a-b table recovers the dependence
    (each cell within 5 standard deviations of the sample's truth, by the closed form at frequency 0 and
    the cell's own frequency), the a-c table its independence."""
    rng = np.random.default_rng(11)
    n = 200_000
    a = rng.integers(0, 4, n)
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 4, n))
    c = rng.integers(0, 3, n)
    X = np.column_stack([a, b, c]).astype(float)
    m = ldp.Marginals(8.0, {"a": 4, "b": 4, "c": 3})
    est = m.estimate_marginals(m.privatize(X, rng=12))
    truth = m.true_marginals(X)
    sd = [np.sqrt(v + t * (1 - t) * 3 / n) for v, t in zip(m.cell_variances(truth, est.set_reports), truth)]
    ab = est.marginal(("a", "b"))
    assert np.all(np.abs(ab - truth[0]) < 5 * sd[0])
    assert abs(np.trace(ab) - np.mean(a == b)) < 0.01
    np.testing.assert_allclose(est.marginal(("b", "a")), ab.T)
    ac = est.marginal(("a", "c"))
    np.testing.assert_allclose(ac, np.outer(ac.sum(axis=1), ac.sum(axis=0)), atol=0.01)
    np.testing.assert_allclose(est.marginal("c"), np.bincount(c) / n, atol=0.01)


# -- the result, the pandas path, specs -----------------------------------------------------------------------------

def test_result_answers_and_round_trips():
    m = ldp.Marginals(2.0, CATS, k=3)
    X = draw_rows(planted((2, 3, 2), 3), 20_000, 5)
    est = m.estimate_marginals(m.privatize(X, rng=6))
    assert est.sets == (("a", "b", "c"),) and est.marginal(("c", "a", "b")).shape == (2, 2, 3)
    assert est.marginal(("a", "b", "c"), as_frame=True).index.names == ["a", "b", "c"]
    assert list(est.marginal("b", as_frame=True).index) == [0, 1, 2]
    frame = est.to_frame()
    assert list(frame.columns) == ["set", "a", "b", "c", "frequency"] and len(frame) == 12
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.marginal(("a", "b")), est.marginal(("a", "b")))
    assert est.epsilon == 2.0 and est.n_reports == 20_000 and "MarginalsEstimate" in repr(est)
    with pytest.raises(AttributeError):
        est.n_reports = 3
    with pytest.raises(ValueError, match="unknown column"):
        est.marginal(("a", "z"))
    with pytest.raises(ValueError, match="distinct"):
        est.marginal(("a", "a"))
    two = ldp.Marginals(2.0, CATS).estimate_marginals(ldp.Marginals(2.0, CATS).privatize(X, rng=1))
    three = two.marginal(("a", "b", "c"))   # no released set holds it: the maximum-entropy table
    assert not two.covers(("a", "b", "c")) and three.shape == (2, 3, 2)
    np.testing.assert_allclose(three.sum(2), two.marginal(("a", "b")), atol=1e-9)
    assert isinstance(two, MarginalsEstimate)


def test_aggregates_specs_codes_and_reproducibility():
    m = ldp.Marginals(1.0, {"a": 4, "b": 3, "c": 2})
    X = draw_rows(np.full((4, 3, 2), 1 / 24), 6000, 7)
    r = m.privatize(X, rng=0)
    a, b = m.aggregate(r[:2000]), m.aggregate(r[2000:])
    np.testing.assert_array_equal((a + b).counts, m.aggregate(r).counts)
    counts = m.aggregate(r).counts.copy()
    counts[-1] += 1
    with pytest.raises(ValueError, match="n_reports"):
        Aggregate(counts, m.spec, n_reports=6000)
    assert from_spec(m.spec) == m and from_spec(m.spec).k == 2
    assert ldp.Marginals(1.0, {"a": 4, "b": 3, "c": 2}, k=3) != m
    np.testing.assert_array_equal(m.privatize(X, rng=5).codes, m.privatize(X, rng=5).codes)
    gen = np.random.default_rng(5)
    parts = [m.privatize(X[:1234], rng=gen).codes, m.privatize(X[1234:], rng=gen).codes]
    np.testing.assert_array_equal(np.concatenate(parts), m.privatize(X, rng=5).codes)
    assert not np.array_equal(m.privatize(X).codes, m.privatize(X).codes)
    codes = np.array(r.codes)
    check_marginals_codes(codes, m.spec)
    for bad in (np.uint64(3) << np.uint64(10), np.uint64(2) << np.uint64(10) | np.uint64(2)):
        c = codes.copy()
        c[5] = bad
        with pytest.raises(ValueError, match="first at index 5"):
            Reports(c, m.spec)


def test_pandas_accessor_tuple_key():
    X = draw_rows(planted((3, 3, 2), 4), 20_000, 8)
    df = pd.DataFrame({"c": X[:, 2].astype(int), "a": X[:, 0].astype(int), "b": X[:, 1].astype(int), "o": 1.0})
    m = ldp.Marginals(2.0, {"a": 3, "b": 3, "c": 2})
    out = df.ldp.privatize({("a", "b", "c"): m}, rng=0)
    assert list(out.columns) == ["a,b,c"]
    est = m.estimate_marginals(out["a,b,c"].ldp.aggregate())
    direct = m.estimate_marginals(m.privatize(X, rng=ldp._random.child_rng(0, 0)))
    np.testing.assert_array_equal(est.marginal(("a", "b")), direct.marginal(("a", "b")))
    with pytest.raises(ValueError, match="Marginals's columns"):
        df.ldp.privatize({("a", "b", "o"): m}, rng=0)


# -- bad input ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("categories,k,err,match", [
    ({"a": 3, "b": 1}, 2, ValueError, "categories\\['b'\\]"),
    ({"a": 3, "b": 2.5}, 2, TypeError, "categories\\['b'\\]"),
    ({"a": 3, "b": 3}, 3, ValueError, "exceeds the number of columns"),
    ({"a": 3, "b": 3, "c": 2, "d": 2}, 4, ValueError, "k must be in"),
    ({"a": 3, "b": 3}, 0, ValueError, "k must be in"),
    ({"a": 3, "b": 3}, True, TypeError, "k must be an int"),
    ({"a": 3}, 1, ValueError, "at least 2 columns"),
    ([3, 3], 2, TypeError, "mapping"),
    ({"a": 3, 5: 3}, 2, TypeError, "non-empty str"),
    ({c: 2 for c in "abcdefghijkl"}, 2, ValueError, "at most 64"),
    ({"a": 2000, "b": 2000}, 2, ValueError, "cells"),
])
def test_bad_parameters(categories, k, err, match):
    with pytest.raises(err, match=match):
        ldp.Marginals(1.0, categories, k=k)
    with pytest.raises(ValueError, match="epsilon"):
        ldp.Marginals(0.0, CATS)


@pytest.mark.parametrize("X,err,match", [
    (np.array([[0, 1, 1], [2, 0, 0]]), ValueError, "outside"),
    (np.array([[0, 1, 1], [-1, 0, 0]]), ValueError, "outside"),
    (np.array([[0, 1.5, 1]]), ValueError, "non-integral"),
    (np.array([[0, np.nan, 1]]), ValueError, "missing"),
    (np.array([[0, 1]]), ValueError, "3 columns"),
    (np.zeros(3), ValueError, "two-dimensional"),
    (np.array([["x", "y", "z"]]), TypeError, "dtype"),
    (pd.DataFrame({"a": [0], "b": [1], "z": [0]}), ValueError, "missing \\['c'\\]"),
])
def test_bad_values_draw_nothing(X, err, match):
    m = ldp.Marginals(1.0, CATS)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    for options in ({}, {"out_of_range": "clip"}):
        with pytest.raises(err, match=match):
            m.privatize(X, rng=gen, **options)
    assert gen.bit_generator.state == state
    with pytest.raises(ValueError, match="no reports"):
        m.estimate_marginals(m.empty_aggregate())
    with pytest.raises(ValueError, match="consistency"):
        m.estimate_marginals(m.privatize(np.zeros((100, 3)), rng=0), consistency="ipf")


def test_kernel_matches_a_naive_reference():
    """Report by report in Python ints: the set from word 3i, the row-major cell, GRR from word 3i+2 over the
    cells (GRR sets) or over the hash range of the cell's hashed value under seed word 3i+1 (OLH sets)."""
    import naive

    cats = {"a": 2, "b": 2, "c": 9}
    m = ldp.Marginals(1.5, cats)
    assert m.oracle_names == ("grr", "olh", "olh")
    X = draw_rows(np.full((2, 2, 9), 1 / 36), 400, 13)
    words = np.random.default_rng(14).bit_generator.random_raw(3 * len(X))
    out = np.empty(len(X), dtype=np.uint64)
    m._run_kernel(m.prepare_values(X), words, out)
    assert out.tolist() == naive.marginals_reports(m._plan, X, words)


def test_describe_skips_a_marginals_column():
    """Categories are not numbers: describe() leaves a marginals report column out, as it does frequencies."""
    df = pd.DataFrame({"a": np.arange(300) % 3, "b": np.arange(300) % 2, "x": np.linspace(0, 1, 300)})
    r = df.ldp.privatize({("a", "b"): ldp.Marginals(2.0, {"a": 3, "b": 2}), "x": ldp.SquareWave(1.0, (0, 1))},
                         rng=0, strategy="all-columns")
    assert list(r.ldp.describe().index) == ["x"]


def test_accessor_estimate_marginals_delegates():
    import pandas as pd
    rng = np.random.default_rng(9)
    df = pd.DataFrame({"a": rng.integers(0, 2, 5_000), "b": rng.integers(0, 3, 5_000)})
    m = ldp.Marginals(2.0, categories={"a": 2, "b": 3})
    r = df.ldp.privatize({("a", "b"): m}, rng=2)
    est = r["a,b"].ldp.estimate_marginals(consistency="norm-sub")
    want = m.estimate_marginals(r["a,b"].ldp.aggregate(), consistency="norm-sub")
    assert np.array_equal(est.marginal(("a", "b")), want.marginal(("a", "b")))
    other = df.ldp.privatize({"a": ldp.Duchi(1.0, (0, 1))}, rng=3)
    with pytest.raises(TypeError, match="do not estimate marginals"):
        other["a"].ldp.estimate_marginals()


@pytest.mark.parametrize("epsilon", [1e-10, 1e-15, 1e-300])
@pytest.mark.parametrize("strategy", ["all", "calm"])
def test_tiny_epsilon_is_refused_in_the_constructor(epsilon, strategy):
    # before: 1e-300 raised ZeroDivisionError from the oracle choice, 1e-15 estimated NaN tables
    with pytest.raises(ValueError, match=r"Marginals: epsilon=.* is too small.*epsilon >= 1e-09"):
        ldp.Marginals(epsilon, CATS, strategy=strategy)


def test_smallest_accepted_epsilon_estimates_finite_tables():
    m = ldp.Marginals(1e-9, {"a": 2, "b": 3})
    est = m.estimate_marginals(m.aggregate(m.privatize(np.zeros((500, 2), dtype=int), rng=0)))
    assert np.isfinite(est.marginal(("a", "b"))).all()

