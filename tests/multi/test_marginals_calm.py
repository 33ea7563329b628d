"""ldp.Marginals with strategy="calm" (CALM's adaptive choice of the released sets) and given sets: the choice
(a covering design, deterministic, never predicted worse than all sets, against a naive greedy reference), the
error model against simulation (closed-form mean and per-cell variances, with a 1.25ε negative control), exact
ε of every report of wide sets (GRR and OLH) with negative controls, the kernel against its plan and a naive
reference, maximum-entropy answers of queries no released set holds, spec round trips and bad input."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import from_spec
from ldpnum.multi.marginals import (MAX_WIDTH, calm_choice, covering_sequence, max_entropy, predicted_error,
                                    union_variance)
from ldpnum.spec import Spec

from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches
from test_marginals import _run_with_seed, draw_rows, every_row, seed_words

BIN4 = {"a": 2, "b": 2, "c": 2, "d": 2}
TRIPLES = [("a", "b", "c"), ("a", "b", "d"), ("a", "c", "d"), ("b", "c", "d")]


# -- the choice -------------------------------------------------------------------------------------------------

def naive_covering(cats, k, width, limit=64):
    """The greedy rule of covering_sequence, one candidate at a time in Python."""
    cands = list(itertools.combinations(range(len(cats)), width))
    count = {K: 0 for K in itertools.combinations(range(len(cats)), k)}
    out = []
    for _ in range(min(limit, len(cands))):
        def key(i):
            V = cands[i]
            subs = list(itertools.combinations(V, k))
            return (V in out, -sum(count[K] == 0 for K in subs), sum(count[K] for K in subs),
                    math.prod(cats[a] for a in V), i)
        best = cands[min(range(len(cands)), key=key)]
        out.append(best)
        for K in itertools.combinations(best, k):
            count[K] += 1
    return out


@pytest.mark.parametrize("cats,k,width", [((2, 2, 2, 2, 2), 2, 3), ((3, 2, 4, 2, 2, 3), 2, 4),
                                          ((2,) * 7, 3, 4), ((2,) * 8, 2, 2)])
def test_covering_sequence_matches_a_naive_greedy(cats, k, width):
    assert covering_sequence(cats, k, width) == naive_covering(cats, k, width)


@pytest.mark.parametrize("cats,k", [((2,) * 4, 2), ((2,) * 8, 2), ((3,) * 6, 2), ((2,) * 7, 3), ((4, 3, 2, 5), 2),
                                    ((2,) * 12, 2)])
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_choice_covers_every_k_set_and_is_never_predicted_worse_than_all(cats, k, eps):
    sets, err, cands = calm_choice(cats, k, eps, 1_000_000)
    assert sets == tuple(sorted(sets)) and len(set(sets)) == len(sets) <= 64
    assert {K for V in sets for K in itertools.combinations(V, k)} == set(itertools.combinations(range(len(cats)), k))
    width = len(sets[0])
    assert all(len(V) == width for V in sets) and k <= width <= MAX_WIDTH
    assert (width, len(sets), err) in cands and err == min(c[2] for c in cands)
    assert err == predicted_error(cats, k, eps, sets, 1_000_000)
    if math.comb(len(cats), k) <= 64:
        full = [c for c in cands if c[0] == k]
        assert full == [(k, math.comb(len(cats), k), predicted_error(cats, k, eps,
                                                                     list(itertools.combinations(range(len(cats)), k)),
                                                                     1_000_000))]
        assert err <= full[0][2]
    assert calm_choice(cats, k, eps, 1_000_000) == (sets, err, cands)


def test_choice_adapts_to_epsilon_and_names_the_sets():
    """Low ε: the all-pairs design (few cells per set); high ε: wider sets (their GRR noise grows slowly)."""
    cats = {c: 2 for c in "abcdef"}
    low = ldp.Marginals(0.5, cats, strategy="calm")
    high = ldp.Marginals(4.0, cats, strategy="calm")
    assert low.width == 2 and low.sets == ldp.Marginals(0.5, cats).sets
    assert high.width > 2 and high.predicted_error() < ldp.Marginals(4.0, cats).predicted_error() / 2
    assert all(len(s) == high.width for s in high.sets) and high.strategy == "calm" and high.n == 1_000_000
    assert "strategy='calm'" in repr(high) and high.k == 2
    # 16 binary columns: 120 pairs do not fit 64 sets, a covering design does
    wide = ldp.Marginals(1.0, {f"c{i}": 2 for i in range(16)}, strategy="calm")
    assert len(wide.sets) <= 64 and wide.width >= 3


# -- the error model against simulation ------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.5, 2.0])   # OLH triples (8 cells > 3e^0.5 + 2), GRR triples (8 < 3e^2 + 2)
def test_predicted_error_and_cell_variances_match_simulation(eps):
    """Uniform rows over 4 binary columns, raw tables (consistency="none"): every pair's marginal, averaged
    over the triples holding it, is unbiased with the model's cell variance (z-test over 40 collections,
    each cell's mean error against sqrt(var/R)), and the mean squared error over the pairs matches
    predicted_error (z-test with the closed-form variance of the mean of R squared errors; a 1.25ε model
    fails the same test)."""
    m = ldp.Marginals(eps, BIN4, sets=TRIPLES)
    assert m.oracle_names == (("olh",) if eps < 1 else ("grr",)) * 4
    n, R = 40_000, 40
    pairs = list(itertools.combinations("abcd", 2))
    rows = every_row(BIN4)
    errs, sq = [], []
    for r in range(R):
        X = rows[np.random.default_rng(100 + r).integers(0, 16, n)]
        est = m.estimate_marginals(m.privatize(X, rng=200 + r), consistency="none")
        e = np.stack([est.marginal(p) - 0.25 for p in pairs])
        errs.append(e)
        sq.append(float((e ** 2).sum(axis=(1, 2)).mean()))
    errs = np.array(errs)
    # each pair is held by 2 triples with n/4 reporters each; each pair cell sums 2 triple cells
    var_cell = 1 / sum(1 / union_variance(o, 2, 0.25, n / 4) for o in m.plan.oracles[:2])
    z = errs.mean(axis=0) / math.sqrt(var_cell / R)
    assert np.abs(z).max() < 4.5, np.abs(z).max()
    pred = m.predicted_error(n)
    assert pred == pytest.approx(4 * var_cell, rel=1e-12)   # 4 cells of var_cell per pair table
    se = np.std(sq, ddof=1) / math.sqrt(R)                  # t-test of the mean squared error (R collections)
    assert abs(np.mean(sq) - pred) < 4 * se, (np.mean(sq), pred, se)
    loose = ldp.Marginals(1.25 * eps, BIN4, sets=TRIPLES).predicted_error(n)
    assert abs(np.mean(sq) - loose) > 4 * se


# -- exact ε of every report -------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [1.7, 3.0, 8.0, 20.0])
def test_calm_grr_designs_are_exactly_epsilon(eps):
    cats = {"a": 2, "b": 2, "c": 2, "d": 2, "e": 2}
    m = ldp.Marginals(eps, cats, strategy="calm", n=10_000_000)
    assert m.width > 2 and set(m.oracle_names) == {"grr"}
    rows = [m.plan.exact_probabilities(c) for c in m.cells(every_row(cats))]
    assert check_exact_epsilon(rows, eps) == max(o.oracle.plan.extreme_ratio() for o in m.plan.oracles)


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_wide_olh_and_mixed_sets_are_exactly_epsilon(eps):
    cats = {"a": 2, "b": 3, "c": 2, "d": 2, "e": 2}
    m = ldp.Marginals(eps, cats, sets=[("a", "b", "c", "d", "e"), ("a", "b"), ("c", "d", "e")])
    assert m.oracle_names[:2] == ("olh", "grr") and m.width == 5   # the third: OLH at 0.5, GRR at 1
    cells = m.cells(every_row(cats))
    worst = 0
    for s in seed_words(6, seed=4):
        worst = max(worst, check_exact_epsilon([m.plan.exact_probabilities(c, seed=s) for c in cells], eps,
                                               tight=False))
    assert worst == max(o.oracle.plan.extreme_ratio() for o in m.plan.oracles)


def test_checker_rejects_planted_bugs_in_wide_designs():
    """Negative controls on a calm design: a 1.25ε plan; the set chosen from the values."""
    cats = {"a": 2, "b": 2, "c": 2, "d": 2, "e": 2}
    eps = 3.0
    m = ldp.Marginals(eps, cats, strategy="calm", n=10_000_000)
    cells = m.cells(every_row(cats))
    loose = ldp.Marginals(1.25 * eps, cats, sets=m.sets)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([loose.plan.exact_probabilities(c) for c in cells], eps)
    plan = m.plan
    rows = []
    for c in cells:
        j0 = int(c[0]) % plan.m   # the set picked from the person's cell of the first set
        rows.append({plan.report(j0, code): p for code, p in plan.oracles[j0].exact_probabilities(int(c[j0])).items()})
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, eps)


# -- the kernel -------------------------------------------------------------------------------------------------

def test_wide_kernel_matches_plan_and_a_naive_reference():
    import naive

    cats = {"a": 2, "b": 3, "c": 2, "d": 2, "e": 2}
    m = ldp.Marginals(1.0, cats, sets=[("a", "b", "c", "d", "e"), ("a", "b"), ("c", "d", "e")])
    rows = every_row(cats)
    for i, s in enumerate(seed_words(2, seed=7)):
        for j, row in enumerate([rows[0], rows[-1]]):
            X = np.tile(row, (150_000, 1))
            exact = m.plan.exact_probabilities(m.cells(X[:1])[0], seed=s)
            codes = list(exact)
            got, cnt = np.unique(_run_with_seed(m, X, s, rng=10 * i + j), return_counts=True)
            assert {int(c) for c in got} <= set(codes)
            counts = dict(zip((int(c) for c in got), cnt))
            check_kernel_matches([counts.get(c, 0) for c in codes], [float(exact[c]) for c in codes])
    X = draw_rows(np.full((2, 3, 2, 2, 2), 1 / 48), 300, 8)
    words = np.random.default_rng(9).bit_generator.random_raw(3 * len(X))
    out = np.empty(len(X), dtype=np.uint64)
    m._run_kernel(m.prepare_values(X), words, out)
    assert out.tolist() == naive.marginals_reports(m._plan, X, words)


# -- answers: projections and maximum entropy -------------------------------------------------------------------

def loglinear(shape, seed):
    """A joint table with every pairwise interaction and no 3-way one (log p = sum of pair terms)."""
    rng = np.random.default_rng(seed)
    logp = np.zeros(shape)
    for a, b in itertools.combinations(range(len(shape)), 2):
        t = rng.normal(0, 1, (shape[a], shape[b]))
        logp = logp + t.reshape([shape[i] if i in (a, b) else 1 for i in range(len(shape))])
    p = np.exp(logp)
    return p / p.sum()


def test_max_entropy_recovers_a_no_three_way_interaction_table():
    p = loglinear((3, 2, 4), 1)
    cons = [((0, 1), p.sum(2)), ((0, 2), p.sum(1)), ((1, 2), p.sum(0))]
    q, it = max_entropy(p.shape, cons)
    np.testing.assert_allclose(q, p, atol=1e-9)
    assert it > 1
    # one-way targets only: the product of the marginals (independence)
    q1, _ = max_entropy(p.shape, [((0,), p.sum((1, 2))), ((1,), p.sum((0, 2))), ((2,), p.sum((0, 1)))])
    np.testing.assert_allclose(q1, np.einsum("i,j,k->ijk", p.sum((1, 2)), p.sum((0, 2)), p.sum((0, 1))), atol=1e-12)
    # a planted 3-way interaction is not recovered from the pairs (negative control)
    x = p * np.where(np.indices(p.shape).sum(0) % 2, 1.5, 0.5)
    x /= x.sum()
    qx, _ = max_entropy(x.shape, [((0, 1), x.sum(2)), ((0, 2), x.sum(1)), ((1, 2), x.sum(0))])
    assert np.abs(qx - x).sum() > 0.05


def test_three_column_queries_from_pairs_and_k_way_from_wide_sets():
    p = loglinear((3, 2, 2, 3), 2)
    X = draw_rows(p, 400_000, 3)
    cats = {"a": 3, "b": 2, "c": 2, "d": 3}
    pairs = ldp.Marginals(8.0, cats)
    est = pairs.estimate_marginals(pairs.privatize(X, rng=4))
    assert not est.covers(("a", "b", "c")) and est.covers(("c", "a"))
    got = est.marginal(("c", "a", "b"))
    truth = np.transpose(p.sum(3), (2, 0, 1))
    prod = np.einsum("i,j,k->ijk", p.sum((0, 1, 3)), p.sum((1, 2, 3)), p.sum((0, 2, 3)))
    assert np.abs(got - truth).sum() < 0.03 < np.abs(prod - truth).sum()
    np.testing.assert_allclose(got.sum(2), est.marginal(("c", "a")), atol=1e-9)
    assert est.marginal(("a", "b", "c", "d"), as_frame=True).index.names == ["a", "b", "c", "d"]
    calm = ldp.Marginals(8.0, cats, strategy="calm", n=len(X))
    assert calm.width > 2
    ce = calm.estimate_marginals(calm.privatize(X, rng=5))
    for a, b in itertools.combinations("abcd", 2):
        assert ce.covers((a, b))
        t = p.sum(axis=tuple(i for i, c in enumerate("abcd") if c not in (a, b)))
        assert np.abs(ce.marginal((a, b)) - t).sum() < 0.03
    assert ce.max_inconsistency() < 1e-9


# -- specs, the pandas path and bad input -------------------------------------------------------------------------

def test_specs_round_trip_and_edited_sets_are_refused():
    calm = ldp.Marginals(4.0, {c: 2 for c in "abcdef"}, strategy="calm", n=2_000_000)
    given = ldp.Marginals(1.0, BIN4, sets=TRIPLES)
    for m in (calm, given):
        assert from_spec(m.spec) == m and from_spec(m.spec).sets == m.sets
        assert Spec.from_dict(m.spec.to_dict()) == m.spec
    assert given.spec.get("strategy") == "sets" and "sets=" in repr(given)
    assert calm != ldp.Marginals(4.0, {c: 2 for c in "abcdef"}, strategy="calm", n=1000)
    d = calm.spec.to_dict()
    d["params"]["sets"] = d["params"]["sets"][:-1]
    with pytest.raises(ValueError):
        from_spec(Spec.from_dict(d))
    X = every_row(BIN4)
    r = given.privatize(np.tile(X, (50, 1)), rng=0)
    agg = given.aggregate(r)
    assert agg.n_reports == 800 and len(given.estimate_marginals(agg).sets) == 4


def test_pandas_tuple_key_with_a_calm_mechanism():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({c: rng.integers(0, 2, 30_000) for c in "abcde"})
    mech = ldp.Marginals(4.0, {c: 2 for c in "abcde"}, strategy="calm", n=len(df))
    reports = df.ldp.privatize({tuple("abcde"): mech}, rng=1)
    est = reports["a,b,c,d,e"].ldp.estimate_marginals()
    assert est.sets == mech.sets
    assert np.abs(est.marginal(("a", "e")) - 0.25).max() < 0.05


@pytest.mark.parametrize("kwargs,err,match", [
    ({"strategy": "best"}, ValueError, "strategy"),
    ({"strategy": "calm", "sets": TRIPLES}, ValueError, "either sets or strategy"),
    ({"sets": "abc"}, TypeError, "sequence"),
    ({"sets": [("a", "z")]}, ValueError, "unknown column"),
    ({"sets": [("a",), ("b", "c", "d")]}, ValueError, "distinct columns"),
    ({"sets": [("a", "b", "c"), ("c", "b", "a"), ("d", "a")]}, ValueError, "distinct sets"),
    ({"sets": [("a", "b", "c")]}, ValueError, "in no set"),
    ({"sets": []}, ValueError, "1 to 64"),
    ({"strategy": "calm", "n": 0}, ValueError, "n"),
    ({"strategy": "calm", "n": 1.5}, TypeError, "n"),
])
def test_bad_parameters(kwargs, err, match):
    with pytest.raises(err, match=match):
        ldp.Marginals(1.0, BIN4, **kwargs)


def test_too_many_columns_for_calm():
    with pytest.raises(ValueError, match="at most 16 columns"):
        ldp.Marginals(1.0, {f"c{i}": 2 for i in range(17)}, strategy="calm")


def test_vector_scan_matches_numpy_counts():
    """check_vectors' one-pass scan (non-finite, out of bounds, non-integral) against NumPy masks, and the
    messages of each case naming the column."""
    from ldpnum._validation import _scan_vectors

    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (50_000, 5)).astype(float)
    lows, highs = np.zeros(5), np.array([3.0, 3.0, 2.0, 3.0, 1.0])
    x[rng.integers(0, 50_000, 40), rng.integers(0, 5, 40)] = np.nan
    x[rng.integers(0, 50_000, 30), rng.integers(0, 5, 30)] = 1.5
    x[rng.integers(0, 50_000, 20), rng.integers(0, 5, 20)] = -np.inf
    fin = np.isfinite(x)
    out = fin & ((x < lows) | (x > highs))
    frac = fin & ~out & (x != np.floor(x))
    for integral in (True, False):
        got = _scan_vectors(np.ascontiguousarray(x), lows, highs, integral)
        assert tuple(int(v) for v in got) == (int((~fin).sum()), int(out.sum()), int(frac.sum()) if integral else 0)
    m = ldp.Marginals(1.0, {"a": 4, "b": 4, "c": 3, "d": 4, "e": 2})
    clean = np.where(fin & ~out & ~frac, x, 0.0)
    np.testing.assert_array_equal(m.prepare_values(clean), clean)
    bad = clean.copy()
    bad[7, 2] = 1.5
    with pytest.raises(ValueError, match=r"1 non-integral category code\(s\), first at index 7 \(row 7, column 'c'"):
        m.prepare_values(bad)
    bad[7, 2] = 3.0
    with pytest.raises(ValueError, match=r"outside .* first at index 7 \(row 7, column 'c'"):
        m.prepare_values(bad)
