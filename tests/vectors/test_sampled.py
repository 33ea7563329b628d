"""Vector mechanisms: sampled dimensions (TESTING.md, "Vectors"), and what they share with Duchi et al.'s
multidimensional mechanism (whose own tests are in test_duchi.py).

* exact ε, in rationals and tight, from the plans: the sampled dimensions' composition k · ε' over every inner
  mechanism, and a brute-force joint distribution of (coordinates, inner codes); each with negative controls;
* the coordinates' kernel against its naive NumPy reference, bit for bit, and against the exact plans (chi-square);
* the coordinates' choice: exact subset probabilities (chi-square) and independence from the values;
* unbiasedness (z-tests with the closed-form variances) and the squared error against its closed form;
* bad inputs (one clear error, nothing drawn), reproducibility, specs, aggregates and results.
"""

import math
import pickle
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum._kernels import client_vector
from ldpnum._kernels._jit import launch
from ldpnum.mechanisms import lookup, registered
from ldpnum.plans import exp_lower
from ldpnum.vectors.sampled import split_epsilon, subset_probabilities

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio
from test_common import CASES


# -- the kernels against the naive references (tests/naive.py) ------------------------------------------------

#: Rows per configuration of the two reference tests below. With the JIT disabled (tests/_kernels/test_jit.py
#: runs them so, under coverage) the kernels run as Python at ~1 ms a row; 600 rows still reach every line
#: that 3000 reach (that run checks its coverage of the kernels).
ROWS = naive.rows(3000)


def test_coordinate_kernel_matches_the_naive_reference():
    rng = np.random.default_rng(4)
    for d, k in [(1, 1), (5, 1), (5, 3), (7, 7), (300, 4), (2000, 60)]:
        m = ldp.SampledDimensions("duchi", 2.0, [(0, 1)] * d, k=k)
        c = m.words_per_record
        # wide configurations cost d per row in Python when the JIT is disabled: fewer rows reach the same lines
        n = min(ROWS, 2000) if d < 300 else naive.rows(2000, 40)
        words = rng.bit_generator.random_raw(n * c)
        X = rng.random((n, d))
        coords = np.empty((n, k), dtype=np.int64)
        units = np.empty(n * k)
        launch(client_vector.sample_coordinates, m.prepare_values(X), m._lows, m._inv_ranges, k, c, words, coords,
               units)
        ref = naive.sampled_coordinates(words, n, d, k, c)
        np.testing.assert_array_equal(coords, ref)
        np.testing.assert_array_equal(units, np.take_along_axis(X, ref, axis=1).ravel())


# -- exact ε: sampled dimensions ------------------------------------------------------------------------------

INNER = [("piecewise", {"n_cells": 64}), ("hybrid", {"n_cells": 16}), ("duchi", {}), ("stochastic_rounding", {}),
         ("square_wave", {"n_cells": 64}), ("general_wave", {"shape": "triangle", "n_cells": 64}), ("laplace", {})]


def inner_ratio(inner):
    """The exact largest ratio of one inner report, from its plan (the common suite's readers)."""
    rows, ratio = CASES[inner.name].rows(inner)
    return ratio if ratio is not None else max_ratio(rows)


@pytest.mark.parametrize("name,params", INNER, ids=[n for n, _ in INNER])
def test_sampled_composition_is_exact_and_tight(name, params):
    """k inner reports at ε' each: the report's ratio is R(ε')^k ≤ e^ε, and reaches it (tight)."""
    for eps in (1.0, 4.0, 8.0, 20.0):
        for k in sorted({1, 2, 3, 5}):
            m = ldp.SampledDimensions(name, eps, [(0, 1)] * 5, k=k, params=params)
            assert m.per_report_epsilon * k <= eps
            check_exact_epsilon([], eps, ratio=inner_ratio(m.inner) ** k)
    # negative control: each report planned at 1.25 ε / k fails
    m = ldp.SampledDimensions(name, 2.5, [(0, 1)] * 5, k=2, params=params)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([], 2.0, ratio=inner_ratio(m.inner) ** 2)


def test_split_epsilon_rounds_down_only_when_needed():
    for eps in (0.1, 1.0, 3.0, 20.0):
        for k in (1, 2, 3, 7, 64):
            each = split_epsilon(eps, k)
            assert exp_lower(each) ** k <= exp_lower(eps)
            assert each <= eps / k and each >= math.nextafter(eps / k, 0) - 1e-15 * eps


def joint_rows(m, states):
    """Exact distribution of (coordinates, inner codes) for each vector of inner thresholds (duchi inner)."""
    subsets = subset_probabilities(m.dim, m.k)
    plan = m.inner.plan
    rows = []
    for state in states:
        row = {}
        for subset, ps in subsets.items():
            for codes in np.ndindex(*(2,) * m.k):
                p = ps
                for j, c in zip(subset, codes):
                    p *= plan.exact_probabilities(state[j])[c]
                row[tuple(j * 2 + c for j, c in zip(subset, codes))] = p
        rows.append(row)
    return rows


def test_sampled_joint_distribution_is_exactly_private():
    """Brute force over every (coordinates, codes) output and the extreme inner thresholds of 3 coordinates."""
    for eps, k in [(1.0, 2), (3.0, 3), (0.5, 1)]:
        m = ldp.SampledDimensions("duchi", eps, [(0, 1)] * 3, k=k)
        p = m.inner.plan
        levels = (p.t_lo, p.t_hi, (p.t_lo + p.t_hi) // 2)
        states = [tuple(levels[(s // 3**j) % 3] for j in range(3)) for s in range(27)]
        check_exact_epsilon(joint_rows(m, states), eps)
    mutant = ldp.SampledDimensions("duchi", 1.25, [(0, 1)] * 3, k=2)
    q = mutant.inner.plan
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(joint_rows(mutant, [(q.t_lo,) * 3, (q.t_hi,) * 3]), 1.0)


def test_sampled_kernel_matches_the_joint_plan():
    m = ldp.SampledDimensions("duchi", 2.0, [(0, 1), (0, 10), (-1, 1)], k=2)
    x = np.array([0.2, 10.0, -0.5])
    states = [tuple(int(t) for t in (m.inner.thresholds(np.array([u]))[0] for u in (0.2, 1.0, 0.25)))]
    exact = joint_rows(m, states)[0]
    r = m.privatize(np.tile(x, (200_000, 1)), rng=8)
    keys, counts = np.unique(np.asarray(r.codes, dtype=np.int64), axis=0, return_counts=True)
    observed = {tuple(int(v) for v in key): int(c) for key, c in zip(keys, counts)}
    assert set(observed) <= set(exact)
    outcomes = sorted(exact)
    check_kernel_matches([observed.get(o, 0) for o in outcomes], [float(exact[o]) for o in outcomes])


# -- the coordinates' choice --------------------------------------------------------------------------------

def test_subset_probabilities_are_exact_and_nearly_uniform():
    for d, k in [(1, 1), (4, 2), (5, 3), (6, 6)]:
        probs = subset_probabilities(d, k)
        assert sum(probs.values()) == 1 and len(probs) == math.comb(d, k)
        assert all(abs(p * math.comb(d, k) - 1) < Fraction(d * k, 2**40) for p in probs.values())


def test_coordinate_counts_match_the_exact_probabilities():
    d, k, n = 5, 2, 200_000
    m = ldp.SampledDimensions("piecewise", 4.0, [(0, 1)] * d, k=k)
    coords = m.coordinates(n, rng=11)
    assert np.all(np.diff(coords, axis=1) > 0)
    probs = subset_probabilities(d, k)
    keys, counts = np.unique(coords, axis=0, return_counts=True)
    observed = {tuple(int(v) for v in key): int(c) for key, c in zip(keys, counts)}
    outcomes = sorted(probs)
    check_kernel_matches([observed.get(o, 0) for o in outcomes], [float(probs[o]) for o in outcomes])


def choice_is_independent_of_values(privatize_coords, d):
    """The same words give the same coordinates whatever the values (extreme and random vectors)."""
    rng = np.random.default_rng(0)
    inputs = [np.zeros((4000, d)), np.ones((4000, d)), rng.random((4000, d)), np.tile(np.eye(d)[0], (4000, 1))]
    first = privatize_coords(inputs[0])
    for X in inputs[1:]:
        if not np.array_equal(privatize_coords(X), first):
            raise PrivacyViolation("the coordinates reported depend on the values")


def test_coordinate_choice_is_independent_of_the_values():
    m = ldp.SampledDimensions("square_wave", 3.0, [(0, 1)] * 6, k=2, params={"n_cells": 64})
    n_inner = m.inner.n_cells

    def honest(X):
        return np.asarray(m.privatize(X, rng=21).codes, dtype=np.int64) // n_inner

    choice_is_independent_of_values(honest, 6)

    def mutant(X):  # planted bug: the largest coordinate is always among those reported
        coords = honest(X)
        top = np.argmax(X, axis=1)
        has = (coords == top[:, None]).any(axis=1)
        coords[~has, 0] = top[~has]
        return np.sort(coords, axis=1)

    with pytest.raises(PrivacyViolation, match="depend on the values"):
        choice_is_independent_of_values(mutant, 6)


# -- unbiasedness and squared error against the closed forms ---------------------------------------------------

def sampled_mse(m, X, n_j):
    """Closed form of the sampled-dimensions estimate's error per coordinate given ``n_j`` reporters: the
    inner noise averaged over everyone, ``v̄_j / n_j``, plus the sampling of ``n_j`` of ``n`` people without
    replacement, ``S²_j (1/n_j - 1/n)``."""
    n = X.shape[0]
    vbar = np.array([m.coordinate_mechanism(j).variance(X[:, j]).mean() for j in range(m.dim)])
    s2 = X.var(axis=0, ddof=1)
    return vbar / n_j + s2 * (1.0 / n_j - 1.0 / n)


def test_sampled_unbiased_per_coordinate():
    rng = np.random.default_rng(40)
    bounds = [(0, 1), (0, 100), (-5, 5), (0, 1)]
    lows, highs = np.array(bounds).T
    X = rng.uniform(lows, highs, (300_000, 4))
    X[:, 3] = rng.random(300_000) ** 3
    for name, k, seed in [("piecewise", 2, 41), ("hybrid", 1, 42), ("duchi", 3, 43), ("square_wave", 2, 44)]:
        m = ldp.SampledDimensions(name, 4.0, bounds, k=k, params={"n_cells": 256} if name == "square_wave" else None)
        est = m.estimate_mean(m.privatize(X, rng=seed))
        sd = np.sqrt(sampled_mse(m, X, est.n_per_coordinate))
        z = (est.mean - X.mean(axis=0)) / sd
        assert np.all(np.abs(z) < 4.5), (name, z)
        assert est.n_per_coordinate.sum() == k * X.shape[0]


def repeated_squared_errors(m, X, reps, seed):
    """‖estimate − mean‖² of ``reps`` independent collections of the same people (one privatize call)."""
    n = X.shape[0]
    r = m.privatize(np.tile(X, (reps, 1)), rng=seed)
    truth = X.mean(axis=0)
    errors, n_j = np.empty(reps), []
    for i in range(reps):
        est = m.estimate_mean(r[i * n:(i + 1) * n])
        errors[i] = np.sum((est.mean - truth) ** 2)
        n_j.append(est.n_per_coordinate)
    return errors, n_j


def assert_within_5_percent(errors, closed):
    mean, se = errors.mean(), errors.std(ddof=1) / math.sqrt(errors.size)
    assert 0.05 * closed > 3 * se, "too few repetitions for a 5% check"
    assert abs(mean / closed - 1) < 0.05, (mean, closed, se)
    return mean / closed, se / closed


@pytest.mark.parametrize("name,d,k,eps,reps", [("piecewise", 4, 1, 2.0, 2500), ("duchi", 6, 3, 6.0, 1500)])
def test_sampled_squared_error_matches_the_closed_form(name, d, k, eps, reps):
    rng = np.random.default_rng(7)
    n = 1000
    X = rng.uniform(0, 10, (n, d))
    m = ldp.SampledDimensions(name, eps, [(0, 10)] * d, k=k)
    errors, n_j = repeated_squared_errors(m, X, reps, seed=77)
    closed = np.mean([sampled_mse(m, X, nj).sum() for nj in n_j])  # averaged over the realized n_j
    assert_within_5_percent(errors, closed)


# -- bad inputs: one clear error, nothing drawn -----------------------------------------------------------------

@pytest.fixture
def no_draws(monkeypatch):
    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)


def vector_mechanisms():
    return [ldp.DuchiMultivariate(1.0, [(0, 1), (0, 10)]), ldp.SampledDimensions("piecewise", 2.0, [(0, 1), (0, 10)])]


@pytest.mark.parametrize("m", vector_mechanisms(), ids=lambda m: m.name)
def test_bad_values_raise_before_any_draw(m, no_draws):
    good = np.array([[0.5, 5.0], [0.1, 1.0]])
    cases = [
        (np.array([[0.5, np.nan], [0.1, 1.0], [np.inf, 2.0]]), ValueError, r"2 missing .* first at index 0 \(row 0, coordinate 1"),
        (np.array([0.5, 5.0]), ValueError, "two-dimensional"),
        (np.zeros((2, 3)), ValueError, "must have 2 columns"),
        (np.zeros((2, 2, 1)), ValueError, "two-dimensional"),
        (np.array([[0.5, 5.0], [0.1, 11.0]]), ValueError, r"1 finite value\(s\) outside .* first at index 1"),
        (good.astype(bool), TypeError, "dtype bool"),
        (good.astype(str), TypeError, "real numbers"),
        (good.astype(complex), TypeError, "complex"),
        (np.array([[0.5, None]], dtype=object), TypeError, "object"),
        (pd.DataFrame({"a": [0.5], "b": ["x"]}), TypeError, "column 'b'"),
    ]
    for x, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            m.privatize(x, rng=0, out_of_range="raise")
    for rng, exc in [(True, TypeError), (-1, ValueError), (np.random.RandomState(0), TypeError)]:
        with pytest.raises(exc):
            m.privatize(good, rng=rng)
    with pytest.raises(ValueError, match="fill_value"):
        m.privatize(good, nan_policy="impute", fill_value=[0.5, 20.0])


@pytest.mark.parametrize("make", [lambda **kw: ldp.DuchiMultivariate(**kw),
                                  lambda **kw: ldp.SampledDimensions("hybrid", **kw)], ids=["duchi", "sampled"])
def test_bad_parameters(make):
    good = dict(epsilon=1.0, bounds=[(0, 1), (0, 2)])
    for eps, exc in [(0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError), (21.0, ValueError),
                     (True, TypeError), ("1", TypeError)]:
        with pytest.raises(exc, match="epsilon"):
            make(**{**good, "epsilon": eps})
    for bounds, exc, msg in [([], ValueError, "d >= 1"), (None, ValueError, "required"),
                             ((0, 1), TypeError, r"single pair .* \[\(0, 1\)\] \* d"),
                             ([(0, 1), (2, 1)], ValueError, r"bounds\[1\] must satisfy low < high"),
                             ([(0, np.inf)], ValueError, "finite"), ("ab", TypeError, "pairs"),
                             ([(0, 1)] * (ldp.vectors.MAX_DIM + 1), ValueError, "at most")]:
        with pytest.raises(exc, match=msg):
            make(**{**good, "bounds": bounds})


def test_bad_sampled_parameters():
    b = [(0, 1)] * 3
    for k, exc in [(0, ValueError), (4, ValueError), (True, TypeError), (1.5, TypeError), (-1, ValueError)]:
        with pytest.raises(exc, match="k must"):
            ldp.SampledDimensions("piecewise", 1.0, b, k=k)
    for mech, exc in [("grr", ValueError), ("randomized_response", ValueError), ("magic", ValueError),
                      (ldp.GRR, ValueError), (3, TypeError), ("sampled_dimensions", ValueError)]:
        with pytest.raises(exc, match="mechanism"):
            ldp.SampledDimensions(mech, 1.0, b)
    with pytest.raises(ValueError, match="epsilon or bounds"):
        ldp.SampledDimensions("piecewise", 1.0, b, params={"bounds": (0, 1)})
    with pytest.raises(ValueError, match="exceeds"):
        ldp.SampledDimensions("piecewise", 1.0, [(0, 1)] * 1000, params={"n_cells": 65536})


def test_empty_input_and_estimators_refuse_no_reports():
    for m in vector_mechanisms():
        r = m.privatize(np.zeros((0, 2)), rng=0)
        assert len(r) == 0 and m.aggregate(r) == m.empty_aggregate()
        with pytest.raises(ValueError, match="no reports"):
            m.estimate_mean(r)


def test_out_of_range_values_are_clipped_with_a_warning():
    for m in vector_mechanisms():
        X = np.array([[0.5, 5.0], [2.0, 5.0], [0.5, -3.0]])
        with pytest.warns(ldp.ClippingWarning, match=r"2 finite value\(s\) outside .* first at index 1") as rec:
            r = m.privatize(X, rng=3)
        assert rec[0].message.count == 2 and rec[0].message.first_index == 1
        assert r == m.privatize(np.clip(X, [0, 0], [1, 10]), rng=3)


# -- reproducibility, specs, aggregates, results ------------------------------------------------------------------

@pytest.mark.parametrize("m", vector_mechanisms() + [ldp.SampledDimensions("duchi", 8.0, [(0, 1)] * 7, k=3),
                                                     ldp.SampledDimensions("general_wave", 4.0, [(0, 1), (-1, 1)], k=2,
                                                                           params={"shape": "triangle", "n_cells": 64}),
                                                     ldp.DuchiMultivariate(2.0, [(0, 1)] * 70)],
                         ids=lambda m: f"{m.name}-{m.dim}")
def test_reproducible_in_chunks_and_blocks(m, monkeypatch):
    X = np.random.default_rng(1).random((6007, m.dim)) * (m._highs - m._lows) + m._lows
    whole = m.privatize(X, rng=np.random.default_rng(5))
    assert whole == m.privatize(X, rng=np.random.default_rng(5)) and whole != m.privatize(X, rng=6)
    g = np.random.default_rng(5)
    parts = [m.privatize(c, rng=g) for c in np.array_split(X, 7)]
    assert ldp.Reports.concat(parts) == whole
    assert ldp.Aggregate.merge([m.aggregate(p) for p in parts]) == m.aggregate(whole)
    monkeypatch.setattr(_random, "BLOCK_RECORDS", 1000)
    monkeypatch.setattr(_random, "BLOCK_WORDS", 1000 * m.words_per_record)
    assert m.privatize(X, rng=np.random.default_rng(5)) == whole
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(m.dim)])
    assert m.privatize(df, rng=np.random.default_rng(5)) == whole  # a DataFrame is its array
    m2 = pickle.loads(pickle.dumps(m))
    assert m2 == m and ldp.from_spec(m.spec) == m and ldp.Spec.from_json(m.spec.to_json()) == m.spec
    assert pickle.loads(pickle.dumps(whole)) == whole and not whole.codes.flags.writeable
    agg = m.aggregate(whole)
    assert ldp.Aggregate.from_bytes(agg.to_bytes()) == agg and ldp.Aggregate.from_frame(agg.to_frame()) == agg


def test_registry_finds_vector_mechanisms_but_lists_one_column_mechanisms_only():
    from ldpnum import cli

    assert lookup("sampled_dimensions") is ldp.SampledDimensions and lookup("DuchiMultivariate") is ldp.DuchiMultivariate
    assert lookup("duchi-md") is ldp.DuchiMultivariate
    assert not {"sampled_dimensions", "duchi_multivariate"} & set(registered())
    assert not {"sampled_dimensions", "duchi_multivariate"} & set(cli.cli_mechanisms())


def test_aggregates_refuse_counts_reports_cannot_give():
    m = ldp.SampledDimensions("duchi", 2.0, [(0, 1)] * 3, k=2)  # 3 coordinates × 2 codes
    with pytest.raises(ValueError, match="add 4"):
        ldp.Aggregate([1, 0, 1, 0, 0, 1], m.spec, 2)
    with pytest.raises(ValueError, match="coordinate 0 has 3 counts"):
        ldp.Aggregate([2, 1, 1, 0, 0, 0], m.spec, 2)
    with pytest.raises(ValueError, match="n_reports is required"):
        ldp.Aggregate([1, 0, 1, 0, 0, 0], m.spec)
    d = ldp.DuchiMultivariate(1.0, [(0, 1)] * 3)
    with pytest.raises(ValueError, match="exceeds n_reports"):
        ldp.Aggregate([3, 0, 0], d.spec, 2)
    with pytest.raises(ldp.SpecMismatchError):
        m.aggregate(d.privatize(np.zeros((3, 3)), rng=0))


def test_reports_are_checked_when_built_from_outside():
    m = ldp.SampledDimensions("duchi", 2.0, [(0, 1)] * 3, k=2)
    r = m.privatize(np.random.default_rng(0).random((100, 3)), rng=1)
    assert ldp.Reports(np.asarray(r.codes, dtype=np.int64), m.spec) == r
    with pytest.raises(ValueError, match="not strictly increasing"):
        ldp.Reports(np.array([[4, 1]]), m.spec)  # coordinate 2 before coordinate 0: not the wire order
    with pytest.raises(ValueError, match="outside the output alphabet"):
        ldp.Reports(np.array([[0, 6]]), m.spec)
    with pytest.raises(ValueError, match="shape"):
        ldp.Reports(np.array([0, 2]), m.spec)
    d = ldp.DuchiMultivariate(1.0, [(0, 1)] * 3)
    with pytest.raises(ValueError, match="padding bits"):
        ldp.Reports(np.array([[8]], dtype=np.uint8), d.spec)


def test_distribution_of_one_coordinate_delegates_to_the_inner_mechanism():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(30, 5, 60_000).clip(0, 100), rng.random(60_000)])
    m = ldp.SampledDimensions("square_wave", 3.0, [(0, 100), (0, 1)], k=1, params={"n_cells": 256})
    agg = m.aggregate(m.privatize(X, rng=3))
    dist = m.estimate_distribution(agg, 0, n_bins=64)
    inner = m.coordinate_mechanism(0)
    assert dist.spec == inner.spec
    np.testing.assert_array_equal(dist.probabilities,
                                  inner.estimate_distribution(m.coordinate_aggregate(agg, 0), n_bins=64).probabilities)
    assert abs(dist.quantile(0.5) - 30) < 3
    with pytest.raises(TypeError, match="means only"):
        ldp.SampledDimensions("duchi", 1.0, [(0, 1)]).estimate_distribution(agg, 0)
    with pytest.raises(ValueError, match="coordinate"):
        m.estimate_distribution(agg, 2)


def test_vector_mean_estimate_result():
    X = np.random.default_rng(9).random((20_000, 3))
    m = ldp.DuchiMultivariate(2.0, [(0, 1)] * 3)
    est = m.estimate_mean(m.privatize(X, rng=1), names=["a", "b", "c"])
    lo, hi = est.confidence_interval(0.95)
    assert lo.shape == (3,) and np.all(lo < est.mean) and np.all(est.mean < hi)
    assert est.expected_squared_error == pytest.approx(np.sum(est.standard_errors**2))
    assert list(est.to_series().index) == ["a", "b", "c"] and est.to_frame().shape == (3, 3)
    assert est.dim == 3 and est.k is None and est.n_reports == 20_000 and est.epsilon == 2.0
    assert est.mechanism == "duchi_multivariate" and est.spec == m.spec
    assert "VectorMeanEstimate" in repr(est) and "dimension" in est._repr_html_()
    with pytest.raises(ValueError):
        est.mean[0] = 1.0  # read-only
    with pytest.raises(ValueError, match="one name per coordinate"):
        m.estimate_mean(m.privatize(X, rng=1), names=["a"])
    s = ldp.SampledDimensions("piecewise", 2.0, [(0, 1)] * 3)
    e2 = s.estimate_mean(s.privatize(X, rng=2))
    assert e2.k == 1 and e2.to_frame()["n_reports"].sum() == 20_000
    with pytest.raises(ValueError, match="coordinate"):
        s.estimate_mean(s.privatize(X[:1], rng=2))  # one person: two coordinates have no reports


def test_default_k():
    from ldpnum.vectors import default_k

    assert [default_k("pm", e, 10) for e in (1.0, 2.5, 5.0, 20.0)] == [1, 1, 2, 8]
    assert default_k("hybrid", 20.0, 3) == 3
    assert default_k("duchi", 0.5, 10) == 1
    for name in ("duchi", "laplace", "square_wave"):  # the k minimizing (d/k) V(ε/k) over 1..⌈ε⌉
        k = default_k(name, 8.0, 10)
        cls = lookup(name)
        cost = [10 / j * cls(split_epsilon(8.0, j), (0.0, 1.0)).worst_case_variance for j in range(1, 9)]
        assert k == 1 + int(np.argmin(cost))


def test_the_guide_runs_as_written():
    """docs/vectors.md: its Python example runs, assertions included."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "vectors.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/vectors.md", "exec"), {})


@pytest.mark.parametrize("module", ["ldpnum.vectors", "ldpnum.vectors.sampled", "ldpnum.vectors.duchi",
                                    "ldpnum.vectors._result", "ldpnum.vectors._base"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(importlib.import_module(module)) if t.examples]
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0
    assert tests or module.endswith("_base")


# -- integrity: every vector family's aggregate checks n_reports against its counts (TESTING.md "Integrity") ----

def _unit_rows(n, d, seed):
    x = np.random.default_rng(seed).normal(size=(n, d))
    return x / (2 * np.linalg.norm(x, axis=1, keepdims=True))


EDITED_FAMILIES = [
    (lambda: ldp.PrivHS(2.0, 3), "unit"),
    (lambda: ldp.PrivUnit(2.0, 3), "unit"),
    (lambda: ldp.PrivUnitG(2.0, 3), "unit"),
    (lambda: ldp.PrivUnitG(0.5, 1), "unit"),
    (lambda: ldp.SQKR(2.0, 3), "unit"),
    (lambda: ldp.SampledDimensions("hybrid", epsilon=2.0, bounds=[(0, 1)] * 3), "box"),
    (lambda: ldp.DuchiMultivariate(2.0, [(0, 1)] * 3), "box"),
    (lambda: ldp.DuchiMultivariate(0.5, [(0, 1)] * 8), "box"),
]


@pytest.mark.parametrize("make,kind", EDITED_FAMILIES,
                         ids=["privhs", "privunit", "privunitg", "privunitg-d1", "sqkr", "sampled", "duchi-d3", "duchi-d8"])
def test_every_vector_family_refuses_an_edited_aggregate(make, kind):
    # Half n_reports doubles every mean; twice it halves them (PrivUnitG and DuchiMultivariate accepted all
    # three edits of a 20,000-report aggregate, whose counts have no exact relation to n_reports: their checks
    # are statistical, refusing below probability 1e-12 under the mechanism; 20,000 reports are far beyond the
    # few dozen (PrivUnitG) to few thousand (DuchiMultivariate, twice n_reports at t = 0) that they need).
    m = make()
    n = 20_000
    x = _unit_rows(n, m.dim, 3) if kind == "unit" else np.full((n, m.dim), 0.5)
    agg = m.aggregate(m.privatize(x, rng=4))
    for edit, counts, n_reports in [("half n_reports", agg.counts, n // 2), ("double n_reports", agg.counts, 2 * n),
                                    ("double counts", agg.counts * 2, n)]:
        with pytest.raises(ValueError, match="aggregate of"):
            ldp.Aggregate(counts, agg.spec, n_reports)
            pytest.fail(f"{m.name}: {edit} accepted")
    assert ldp.Aggregate(agg.counts, agg.spec, n) == agg   # the untouched aggregate is accepted


def test_statistical_count_checks_accept_every_legitimate_aggregate():
    # No false refusal of genuine aggregates of few reports (where the law of the counts is widest), at the
    # extreme inputs (a corner of the box, a unit vector) and small/large ε; the checks' level is 1e-12, so
    # a refusal here would mean the bounds are wrong, not bad luck. A measured sweep (ε 0.05..20, d 1..64,
    # n 1..5000, 1608 aggregates) refused none.
    for eps, d in [(0.05, 1), (2.0, 7), (20.0, 2)]:
        g = ldp.PrivUnitG(eps, d)
        b = ldp.DuchiMultivariate(eps, [(0, 1)] * d)
        for n in (1, 2, 5, 30, 300):
            for seed in range(3):
                e1 = np.zeros((n, d))
                e1[:, 0] = 1.0
                g.aggregate(g.privatize(e1 if seed else _unit_rows(n, d, seed), rng=seed))
                b.aggregate(b.privatize(np.full((n, d), float(seed == 1)), rng=seed))


# -- tiny ε and huge bounds: refused at construction, naming the real cause, never after drawing ---------------

@pytest.mark.parametrize("inner", ["piecewise", "square_wave", "general_wave"])
def test_sampled_dimensions_at_tiny_epsilon_blames_epsilon_not_the_bounds(inner):
    # these inner mechanisms build at ε = 1e-15, but their variance is NaN in float64: the estimate used to be
    # refused after drawing, saying "the bounds are too wide" for bounds (0, 1)
    with pytest.raises(ValueError, match=r"epsilon=1e-15 is too small.*not about the bounds"):
        ldp.SampledDimensions(inner, epsilon=1e-15, bounds=[(0, 1)] * 3)


@pytest.mark.parametrize("make", [lambda b: ldp.SampledDimensions("duchi", 1.0, [(0, 1), b]),
                                  lambda b: ldp.SampledDimensions("stochastic_rounding", 1.0, [(0, 1), b]),
                                  lambda b: ldp.SampledDimensions("hybrid", 1.0, [(0, 1), b]),
                                  lambda b: ldp.DuchiMultivariate(1.0, [(0, 1), b])],
                         ids=["sd-duchi", "sd-sr", "sd-hybrid", "duchi-md"])
@pytest.mark.parametrize("bounds", [(0, 1e300), (-1e300, 1e300), (0, 1e308)])
def test_huge_bounds_are_refused_at_construction(make, bounds):
    # used to be accepted, then refused when estimating (OverflowError (34, 'Numerical result out of range') for
    # inner Duchi / StochasticRounding, "not finite" for the others)
    # refused by the shared bounds check (beyond ±1e100) or by the vector family's own (one report's estimate
    # must stay representable)
    with pytest.raises(ValueError, match=r"bounds\[1\].* (too wide for float64|are too large)"):
        make(bounds)
    make((0, 1e100))   # wide but representable: estimates stay finite
