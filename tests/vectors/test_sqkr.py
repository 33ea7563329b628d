"""SQKR (TESTING.md, "Vectors"): Kashin's representation, sampled and quantized, through 2**k-ary randomized response.

* the frame is tight; Kashin's representation (kernel) against a dense NumPy reference: ``U a = x``, every
  coefficient within the level, on random and adversarial rows; the clipping path flagged and warned;
* the client kernel against a record-by-record reference, and the aggregate against a Python decode;
* exact ε in rationals, tight, with negative controls (1.25 ε; a bit sent in the clear); the kernel's report
  distribution for a fixed seed against the exact mixture (chi-square);
* unbiasedness per coordinate (z-tests with the closed-form variance) and the squared error within 5% of the
  closed form at two (d, ε);
* bad inputs (one clear error, nothing drawn), parameters, reproducibility, specs, aggregates' integrity.
"""

import math
import pickle
from fractions import Fraction

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum._kernels import client_kashin
from ldpnum._kernels._jit import launch
from ldpnum.plans import GRRPlan, grr_keep_cells
from ldpnum.mechanisms import lookup, registered
from ldpnum.plans import exp_lower
from ldpnum.vectors import sqkr
from ldpnum.vectors.sqkr import SQKRPlan, coordinates, frame, kashin_coefficients

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio


def sphere_rows(n, d, seed, radius=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X * radius


def words(n, seed=0):
    return np.random.default_rng(seed).bit_generator.random_raw(n)


def test_fwht_matches_the_naive_stage_by_stage_transform_to_the_bit():
    """The radix-8/4 transform (interpreted and compiled) gives the radix-2 stage-by-stage results exactly,
    and H z (the dense Sylvester matrix) up to rounding, at every length 1 .. 2**12."""
    import numba

    fwht = client_kashin.fwht_inline.dispatcher

    @numba.njit
    def compiled(z):
        fwht(z)

    rng = np.random.default_rng(11)
    for L in range(13):
        z = rng.standard_normal(1 << L)
        want = naive.fwht_stages(z)
        got = z.copy()
        client_kashin.fwht_inline(got)
        assert np.array_equal(got, want)
        got = z.copy()
        compiled(got)
        assert np.array_equal(got, want)
        if L <= 10:
            np.testing.assert_allclose(want, naive.hadamard_matrix(1 << L) @ z, rtol=0, atol=1e-12 * (1 << L))


def hard_rows(d, seed=0):
    """Random directions, the basis, sparse vectors, the frame's own rows (restricted and normalized), flat
    vectors, zero and small rows."""
    L, pos, sign = frame(d)
    U = naive.hadamard_frame(d, 1 << L, pos, sign)
    rng = np.random.default_rng(seed)
    rows = [sphere_rows(40, d, seed), np.eye(d)[: min(d, 20)], U.T[:20] / np.linalg.norm(U.T[:20], axis=1)[:, None],
            np.sign(rng.normal(size=(10, d))) / math.sqrt(d), np.zeros((1, d)), sphere_rows(5, d, seed + 1, 1e-3)]
    sparse = np.zeros((10, d))
    sparse[:, : min(d, 3)] = rng.normal(size=(10, min(d, 3)))
    rows.append(sparse / np.linalg.norm(sparse, axis=1, keepdims=True))
    return np.vstack(rows)


# -- the frame and Kashin's representation ------------------------------------------------------------------------

@pytest.mark.parametrize("d,rho", [(1, 4), (3, 4), (16, 2), (100, 4), (100, 2)])
def test_the_frame_is_tight_and_public(d, rho):
    L, pos, sign = frame(d, rho)
    D = 1 << L
    assert rho * d <= D < 2 * rho * d
    assert np.all(np.diff(pos) > 0) and pos.min() >= 0 and pos.max() < D and set(np.abs(sign)) == {1.0}
    U = naive.hadamard_frame(d, D, pos, sign)
    np.testing.assert_allclose(U @ U.T, np.eye(d), atol=1e-12)
    L2, pos2, sign2 = frame(d, rho)
    assert L2 == L and np.array_equal(pos2, pos) and np.array_equal(sign2, sign)


@pytest.mark.parametrize("d,rho", [(3, 4), (8, 4), (16, 4), (128, 4), (8, 2), (16, 2), (128, 2)])
def test_kashin_matches_the_reference_and_represents_x(d, rho):
    X = hard_rows(d)
    a, clipped = kashin_coefficients(X, d, rho)
    L, pos, sign = frame(d, rho)
    D = 1 << L
    U = naive.hadamard_frame(d, D, pos, sign)
    level = sqkr.LEVELS[rho] / math.sqrt(D)
    assert not clipped.any()
    assert np.abs(a).max() <= level
    np.testing.assert_allclose(a @ U.T, X, atol=1e-12)  # U a = x
    for i in range(0, len(X), 7):
        want, flag = naive.kashin(X[i], U, level, sqkr.TRUNCATION, sqkr.ITERATIONS)
        np.testing.assert_allclose(a[i], want, atol=1e-12)
        assert not flag


@pytest.mark.parametrize("d", [1000, 1024])
def test_kashin_at_the_benchmark_dimensions_needs_no_clipping(d):
    X = hard_rows(d, seed=3)
    a, clipped = kashin_coefficients(X, d)
    assert not clipped.any() and np.abs(a).max() <= sqkr.LEVELS[4] / math.sqrt(4096)
    a, clipped = kashin_coefficients(X, d, 2)
    assert not clipped.any() and np.abs(a).max() <= sqkr.LEVELS[2] / math.sqrt(2048)


def test_a_coefficient_above_the_level_is_clipped_flagged_and_warned(monkeypatch):
    d = 16
    L, pos, sign = frame(d)
    D = 1 << L
    X = hard_rows(d)
    level = 1.0 / math.sqrt(D)  # K = 1: below what Kashin's representation of many rows needs
    out = np.empty((len(X), D))
    flags = np.empty(len(X), np.uint8)
    r = np.linalg.norm(X, axis=1)
    launch(client_kashin.kashin_probe, X, np.ones(len(X)), pos, sign, level, sqkr.TRUNCATION, sqkr.ITERATIONS, L, out,
           flags)
    assert flags.sum() > 0 and np.abs(out).max() <= level
    U = naive.hadamard_frame(d, D, pos, sign)
    for i in np.flatnonzero(flags)[:5]:
        _, flag = naive.kashin(X[i], U, level, sqkr.TRUNCATION, sqkr.ITERATIONS)
        assert flag
    ok = flags == 0
    np.testing.assert_allclose(out[ok] @ U.T, X[ok], atol=1e-12)
    a, again = kashin_coefficients(X, d, level=1.0)
    assert np.array_equal(again, flags.astype(bool)) and np.array_equal(a, out)
    monkeypatch.setitem(sqkr.LEVELS, 4, 1.0)
    m = ldp.SQKR(2.0, d)
    with pytest.warns(ldp.ClippingWarning, match=f"SQKR: {int(flags.sum())} row.*biased") as caught:
        m.privatize(X, rng=1)
    # counts only: no row position (the warning describes the people's values)
    w = [c.message for c in caught if isinstance(c.message, ldp.ClippingWarning)]
    assert len(w) == 1 and w[0].count == flags.sum() and w[0].first_index == -1 and "index" not in str(w[0])
    assert m.kashin_clipped(X) == int(flags.sum())
    # the check runs before any word is drawn: with drawing forbidden, the warning is already out
    from ldpnum import _random

    def forbidden(self, n):
        raise AssertionError("drawn")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)
    with pytest.warns(ldp.ClippingWarning, match="SQKR"), pytest.raises(AssertionError, match="drawn"):
        m.privatize(X, rng=1)
    assert r.max() <= 1 + 1e-12


# -- kernels against the references ------------------------------------------------------------------------------

@pytest.mark.parametrize("eps,d,k,rho", [(1.0, 3, None, 4), (3.0, 5, 2, 2), (6.0, 4, None, 4)])
def test_kernel_matches_the_naive_reference(eps, d, k, rho):
    m = ldp.SQKR(eps, d, k=k, redundancy=rho)
    X = np.vstack([sphere_rows(30, d, 4, 0.6), np.zeros((2, d)), sphere_rows(5, d, 5)])
    w = words(len(X) * m.words_per_record, 6)
    out = np.empty(len(X), np.uint64)
    m._run_kernel(X, w, out)
    L, pos, sign = frame(d, rho)
    U = naive.hadamard_frame(d, 1 << L, pos, sign)
    p = m.plan
    want = naive.sqkr(X, w, U, m.level, sqkr.TRUNCATION, sqkr.ITERATIONS, p.k, p.frame_bits, p.grr.a_keep, p.grr.shift)
    assert np.array_equal(out, want)


def test_aggregate_matches_a_python_decode():
    m = ldp.SQKR(3.0, 5)
    r = m.privatize(sphere_rows(400, 5, 7, 0.9), rng=8)
    k, L = m.k, m.plan.frame_bits
    D = 1 << L
    want = np.zeros(2 * D, np.int64)
    for code in r.codes.tolist():
        seed = code >> k
        for t in range(k):
            j = naive.splitmix64((seed + t * 0x9E3779B97F4A7C15) & naive.M64) >> (64 - L)
            want[j if (code >> t) & 1 else D + j] += 1
    agg = m.aggregate(r)
    assert np.array_equal(agg.counts, want) and agg.n_reports == 400 and agg.counts.sum() == 400 * k


def test_sampled_coordinates_are_uniform():
    from scipy import stats

    j = coordinates(np.arange(40_000, dtype=np.uint64) * np.uint64(2654435761), 4, 5)
    counts = np.bincount(j.ravel(), minlength=32)
    assert stats.chisquare(counts).pvalue > 1e-6
    # coordinates of one report are independent: pairs (j_0, j_1) uniform over 32 x 32
    assert stats.chisquare(np.bincount(j[:, 0] * 32 + j[:, 1], minlength=1024)).pvalue > 1e-6


# -- exact ε -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.1, 1.0, 2.5, 4.0, 8.0])
def test_exact_epsilon_is_tight(eps):
    m = ldp.SQKR(eps, 200)
    plan = m.plan
    assert plan.k == math.ceil(eps)
    rows = [plan.exact_probabilities(bits) for bits in range(1 << plan.k)]
    ratio = check_exact_epsilon(rows, eps)
    assert ratio == plan.extreme_ratio()
    # the rows of real inputs (their quantization probabilities at one seed) are mixtures: never above e^eps
    X = np.vstack([sphere_rows(3, 200, 1), np.zeros((1, 200))])
    a, _ = kashin_coefficients(X, 200)
    seed = 12345
    j = coordinates(np.array([seed], np.uint64), plan.k, plan.frame_bits)[0]
    mix = []
    for row in a:
        thr = np.floor((1.0 + row[j] / m.level) * 0.5 * 2.0**53).astype(np.int64)
        mix.append(plan.report_probabilities([Fraction(int(t), 2**53) for t in thr]))
    assert max_ratio(mix) <= ratio
    check_exact_epsilon(mix, eps, tight=False)


def test_exact_epsilon_at_the_largest_k():
    plan = ldp.SQKR(20.0, 100).plan
    assert plan.k == sqkr.MAX_K and plan.words_per_record == 18 and plan.seed_bits == 48
    ratio = plan.extreme_ratio()
    assert ratio <= exp_lower(20.0) and ratio >= Fraction(math.exp(20.0)) * (1 - Fraction(1, 10**6))


def test_the_exact_check_rejects_planted_bugs():
    eps = 2.0
    good = ldp.SQKR(eps, 8).plan
    # 1.25 ε: the GRR plan of a larger ε
    bad = SQKRPlan(dim=8, frame_bits=good.frame_bits, k=good.k, grr=GRRPlan(1 << good.k, *grr_keep_cells(1.25 * eps, 4)))
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([bad.exact_probabilities(b) for b in range(4)], eps)
    # the first quantized bit also sent in the clear (report = (bit, y)): a zero-probability output
    leaky = [{(b & 1, y): p for y, p in good.exact_probabilities(b).items()} for b in range(4)]
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(leaky, eps)


def test_kernel_matches_the_exact_report_distribution():
    eps, d = 2.0, 3
    m = ldp.SQKR(eps, d)
    p = m.plan
    n = 200_000
    x = np.array([[0.5, -0.3, 0.1]])
    a, _ = kashin_coefficients(x, d)
    for seed_word in (np.uint64(0x0123456789ABCDEF), np.uint64(0xFEDCBA9876543210)):
        w = words(n * p.words_per_record, 11)
        w[:: p.words_per_record] = seed_word
        out = np.empty(n, np.uint64)
        m._run_kernel(np.repeat(x, n, axis=0), w, out)
        seed = int(seed_word) >> p.k
        assert np.all(out >> np.uint64(p.k) == np.uint64(seed))
        j = coordinates(np.array([seed], np.uint64), p.k, p.frame_bits)[0]
        thr = np.floor((1.0 + a[0, j] / m.level) * 0.5 * 2.0**53).astype(np.int64)
        exact = p.report_probabilities([Fraction(int(t), 2**53) for t in thr])
        y = (out & np.uint64((1 << p.k) - 1)).astype(np.int64)
        counts = np.bincount(y, minlength=1 << p.k)
        check_kernel_matches(counts, [float(exact[v]) for v in range(1 << p.k)])


# -- unbiasedness and the squared error ----------------------------------------------------------------------------

@pytest.mark.parametrize("eps,d", [(2.0, 6), (6.0, 3), (1.0, 20)])
def test_unbiased_per_coordinate(eps, d):
    m = ldp.SQKR(eps, d)
    n = 200_000
    X = sphere_rows(n, d, 21, 0.8)
    X[:, 0] = np.abs(X[:, 0])  # a mean away from 0
    est = m.estimate_mean(m.privatize(X, rng=22))
    sd = np.sqrt(m.variance(X).sum(axis=0)) / n
    z = (est.mean - X.mean(axis=0)) / sd
    assert np.all(np.abs(z) < 4.5), z  # Bonferroni over <= 20 coordinates at 1e-4 each
    assert np.all(est.standard_errors >= sd * (1 - 1e-9))  # the stated errors are conservative
    assert np.all(est.standard_errors <= sd * 1.1)


def decoded_reports(m, codes):
    """Each report's estimate ``U â`` (rows), the dense way."""
    k, L = m.k, m.plan.frame_bits
    D = 1 << L
    j = coordinates(codes >> np.uint64(k), k, L)
    y = 2.0 * ((codes[:, None] >> np.arange(k, dtype=np.uint64)[None, :]) & np.uint64(1)).astype(float) - 1.0
    a = np.zeros((len(codes), D))
    np.add.at(a, (np.repeat(np.arange(len(codes)), k), j.ravel()), y.ravel())
    a *= (D / k) * m.level / m.decoding_scale
    _, pos, sign = frame(m.dim, m.redundancy)
    return a @ naive.hadamard_frame(m.dim, D, pos, sign).T


@pytest.mark.parametrize("eps,d,reps", [(1.0, 16, 700), (4.0, 32, 500)])
def test_squared_error_matches_the_closed_form(eps, d, reps):
    m = ldp.SQKR(eps, d)
    n = 200
    X = sphere_rows(n, d, 3, 0.8)
    codes = m.privatize(np.tile(X, (reps, 1)), rng=13).codes
    est = decoded_reports(m, codes).reshape(reps, n, d).mean(axis=1)
    errors = ((est - X.mean(axis=0)) ** 2).sum(axis=1)
    closed = m.expected_squared_error(X)
    assert math.isclose(closed, m.variance(X).sum() / n**2, rel_tol=1e-9)
    se = errors.std() / math.sqrt(reps)
    assert 0.05 * closed > 3 * se, "too few repetitions for a 5% check"
    assert abs(errors.mean() / closed - 1) < 0.05, (errors.mean(), closed, se)
    # the dense decode agrees with the aggregate's
    whole = m.estimate_mean(m.privatize(X, rng=14))
    np.testing.assert_allclose(whole.mean, decoded_reports(m, m.privatize(X, rng=14).codes).mean(axis=0), atol=1e-12)


def test_closed_form_constants():
    m = ldp.SQKR(4.0, 100)
    p, beta = m.plan.debias()
    e = math.exp(4.0)
    assert math.isclose(p, e / (e + 15), rel_tol=1e-9) and math.isclose(beta, (e - 1) / (e + 15), rel_tol=1e-9)
    K2 = 2.0**2
    assert math.isclose(m.squared_norm, 100 * K2 / (4 * beta**2) + 3 / (4 * beta), rel_tol=1e-12)
    assert m.frame_size == 512 and m.k == 4 and m.report_bits == 64 and m.words_per_record == 6
    assert m.kashin_level == 2.0 and m.redundancy == 4 and m.level == 2.0 / math.sqrt(512)
    # less redundancy, a higher level: the error scales with K²
    for rho, size in ((2, 256),):
        other = ldp.SQKR(4.0, 100, redundancy=rho)
        assert other.frame_size == size and math.isclose(
            (other.squared_norm - 3 / (4 * beta)) / (m.squared_norm - 3 / (4 * beta)), (sqkr.LEVELS[rho] / 2.0) ** 2)


# -- bad inputs, parameters, reproducibility, specs, aggregates -----------------------------------------------------

@pytest.fixture
def no_draws(monkeypatch):
    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)


def test_bad_values_raise_before_any_draw(no_draws):
    m = ldp.SQKR(1.0, 3)
    good = sphere_rows(5, 3, 1, 0.5)
    cases = [(np.where(np.arange(15).reshape(5, 3) == 7, np.nan, good), ValueError, "non-finite"),
             (np.where(np.arange(15).reshape(5, 3) == 4, np.inf, good), ValueError, "first at index 1"),
             (good[:, :2], ValueError, r"shape \(n, 3\)"), (good[0], ValueError, "shape"),
             (good * 3, ValueError, "5 row.*norm above 1.*clip=True"), (good.astype(str), TypeError, "dtype"),
             (good.astype(complex), TypeError, "dtype")]
    for x, err, match in cases:
        with pytest.raises(err, match=match):
            m.privatize(x)
    with pytest.raises(TypeError, match="clip"):
        m.privatize(good, clip="yes")
    assert len(m.privatize(np.empty((0, 3)), rng=1)) == 0


def test_bad_parameters():
    for eps, err in ((0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError), (21.0, ValueError), ("1", TypeError)):
        with pytest.raises(err, match="epsilon"):
            ldp.SQKR(eps, 3)
    for dim, err in ((0, ValueError), (2**16 + 1, ValueError), (2.0, TypeError), (True, TypeError)):
        with pytest.raises(err, match="dim"):
            ldp.SQKR(1.0, dim)
    for k, err in ((0, ValueError), (17, ValueError), (3, ValueError), (2.0, TypeError), (True, TypeError)):
        with pytest.raises(err, match="k"):
            ldp.SQKR(1.0, 1, k=k, redundancy=2)  # dim 1: D = 2 coefficients, so k <= 2
    assert ldp.SQKR(8.0, 1, redundancy=2).k == 2 and ldp.SQKR(8.0, 3, k=1).k == 1
    for rho, err in ((3, ValueError), (8, ValueError), (4.0, TypeError), (True, TypeError), (None, TypeError)):
        with pytest.raises(err, match="redundancy"):
            ldp.SQKR(1.0, 3, redundancy=rho)


def test_clip_scales_rows_to_norm_one():
    m = ldp.SQKR(2.0, 2)
    X = np.array([[3.0, 4.0], [0.6, 0.8], [1e200, 1e200]])
    with pytest.warns(ldp.ClippingWarning, match="2 row"):
        r = m.privatize(X, rng=1, clip=True)
    Y = np.array([[0.6, 0.8], [0.6, 0.8], [2**-0.5, 2**-0.5]])
    assert m.privatize(Y, rng=1) == r


def test_reproducible_in_chunks_and_blocks(monkeypatch):
    m = ldp.SQKR(3.0, 7)
    X = sphere_rows(3001, 7, 1, 0.9)
    whole = m.privatize(X, rng=np.random.default_rng(5))
    assert whole == m.privatize(X, rng=np.random.default_rng(5)) and whole != m.privatize(X, rng=6)
    g = np.random.default_rng(5)
    parts = [m.privatize(c, rng=g) for c in np.array_split(X, 7)]
    assert ldp.Reports.concat(parts) == whole
    agg = m.aggregate(whole)
    assert ldp.Aggregate.merge([m.aggregate(p) for p in parts]) == agg
    monkeypatch.setattr(_random, "BLOCK_RECORDS", 100)
    monkeypatch.setattr(_random, "BLOCK_WORDS", 100 * m.words_per_record)
    monkeypatch.setattr(sqkr, "DECODE_ROWS", 97)
    assert m.privatize(X, rng=np.random.default_rng(5)) == whole and m.aggregate(whole) == agg
    m2 = pickle.loads(pickle.dumps(m))
    assert m2 == m and ldp.from_spec(m.spec) == m and ldp.Spec.from_json(m.spec.to_json()) == m.spec
    assert pickle.loads(pickle.dumps(whole)) == whole and not whole.codes.flags.writeable
    assert ldp.Aggregate.from_bytes(agg.to_bytes()) == agg and ldp.Aggregate.from_frame(agg.to_frame()) == agg
    assert m.spec.get("frame") == sqkr.FRAME and m.spec.get("dim") == 7 and m.empty_aggregate() + agg == agg
    assert m.reports_from_column(m.column_codes(whole)) == whole


def test_registry_specs_and_integrity():
    assert lookup("SQKR") is ldp.SQKR and lookup("sqkr") is ldp.SQKR and "sqkr" not in registered()
    a, b = ldp.SQKR(2.0, 5), ldp.SQKR(2.0, 5, k=1)
    assert ldp.from_spec(ldp.SQKR(2.0, 5, redundancy=2).spec) == ldp.SQKR(2.0, 5, redundancy=2) != a
    r = a.privatize(sphere_rows(100, 5, 1), rng=1)
    with pytest.raises(ldp.exceptions.SpecMismatchError):
        b.aggregate(r)
    spec = ldp.Spec(a.spec.mechanism, a.spec.epsilon, a.spec.n_cells,
                    tuple({**dict(a.spec.params), "frame": "other/v0"}.items()))
    with pytest.raises(ValueError, match="frame"):
        ldp.from_spec(spec)
    agg = a.aggregate(r)
    with pytest.raises(ValueError, match="n_reports is required"):
        ldp.Aggregate(agg.counts, a.spec)
    counts = agg.counts.copy()
    counts[0] += 1
    with pytest.raises(ValueError, match="not 2 per report"):
        ldp.Aggregate(counts, a.spec, 100)
    with pytest.raises(ValueError, match="one-dimensional"):
        ldp.Reports(np.zeros((5, 2), np.uint64), a.spec)
    with pytest.raises(ValueError, match="negative"):
        ldp.Reports(np.array([-1, 2]), a.spec)
    with pytest.raises(TypeError, match="integers"):
        ldp.Reports(np.array([1.0]), a.spec)
    with pytest.raises(ValueError, match="no reports"):
        a.estimate_mean(a.empty_aggregate())
    assert (agg + agg).n_reports == 200 and a.estimate_mean(agg + agg).mean.shape == (5,)


def test_docstring_examples_run():
    import doctest

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(sqkr) if t.examples]
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0 and len(tests) >= 3


# -- tiny ε: exact debiasing, then a clear refusal -------------------------------------------------------------

def test_debias_is_exact_at_tiny_epsilon_and_tinier_epsilon_is_refused():
    from fractions import Fraction

    for eps in (1e-13, 1e-15):   # 1e-15 divided by zero (β = p - q computed in floats was 0); 1e-13: off by 4e-6
        m = ldp.SQKR(eps, 3)
        p = Fraction(m._plan.grr.keep_count(), 2**64)
        beta = p - (1 - p) / ((1 << m.k) - 1)
        assert m._plan.debias()[1] == float(beta) > 0
    for eps in (9e-16, 1e-300):   # GRR's own refusal, in SQKR's terms
        with pytest.raises(ValueError, match=r"too small for SQKR's randomized response"):
            ldp.SQKR(eps, 3)
