"""Unit-vector mechanisms: PrivHS, compressed PrivUnit and PrivUnitG, repetition (TESTING.md, "Vectors").

* exact ε in rationals, tight, of every report type: PrivHS's bit for every seed; the rejection sampler's seed
  distribution for the ideal family, including the trial bound J; with negative controls (1.25 ε, an
  acceptance that forgets the cap's share, a family whose caps differ between inputs);
* the kernels against naive NumPy references (the family's generator, both samplers), and the aggregate
  against a NumPy decode;
* the effect of J: the cap's share of reports and the trials' distribution match their formulas, the decoder
  stays unbiased at J = 1, and the realized ε grows with J towards ε;
* unbiasedness per coordinate (z-tests with the closed-form variance) and the squared error against its closed
  form (within 5%); repetition's composition in the spec;
* bad inputs (one clear error, nothing drawn), reproducibility, specs, aggregates.
"""

import math
import pickle
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum import _random
from ldpnum._kernels import client_unit
from ldpnum.mechanisms import lookup, registered
from ldpnum.plans import TWO53, binary_plan, exp_lower
from ldpnum.vectors import unit
from ldpnum.vectors.unit import PrivHSPlan, RejectionPlan, generate_directions

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon, merged_chisquare


def sphere_rows(n, d, seed, radius=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X * radius


def words(n, seed=0):
    return np.random.default_rng(seed).bit_generator.random_raw(n)


# -- the family and the kernels against the naive references ----------------------------------------------------

def first_attempts(seeds, j):
    """NumPy: the first word of coordinate ``j``'s stream for each seed, its layer and whether its rectangle
    test fails (0: accepted, 1: wedge, 2: tail)."""
    with np.errstate(over="ignore"):
        z = (np.asarray(seeds, np.uint64) << np.uint64(32)) + np.uint64(j << 16) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h = z ^ (z >> np.uint64(31))
    layer = (h & np.uint64(255)).astype(np.int64)
    x = (h >> np.uint64(11)).astype(np.float64) * (client_unit.ZIG_X[layer] / 2.0**53)
    miss = x >= client_unit.ZIG_X[layer + 1]
    return np.where(miss, np.where(layer == 0, 2, 1), 0)


def test_family_matches_the_naive_reference():
    """Bit for bit, on ordinary seeds and on coordinates whose first word goes to a wedge or to the tail."""
    seeds = np.array([0, 1, 7, 2**31, 2**32 - 1, 123456789])
    for d in (1, 2, 5, 8, 300):
        got = generate_directions(seeds, d)
        want = np.array([naive.unit_direction(int(s), d) for s in seeds])
        assert np.array_equal(got, want)
    kind = first_attempts(np.arange(200_000), 3)
    special = [int(np.flatnonzero(kind == k)[t]) for k in (1, 2) for t in range(4)]
    got = generate_directions(special, 4)[:, 3]
    assert np.array_equal(got, [naive.unit_gauss(s, 3) for s in special])
    assert np.abs(got[4:]).min() >= client_unit.ZIG_R  # the tail
    assert np.array_equal(generate_directions(seeds, 5)[:, :4], generate_directions(seeds, 4))  # a prefix
    assert np.array_equal(client_unit.ZIG_X, naive.ziggurat_tables()[1])
    assert np.array_equal(client_unit.ZIG_F, naive.ziggurat_tables()[2])


def test_family_budget_fallback_matches_the_naive_reference(monkeypatch):
    """The Box-Muller fallback when the ziggurat's word budget runs out (forced with a budget of 1 to 4 words:
    the default, 2**16 - 2, is never reached in practice), against the naive reference."""
    kind = first_attempts(np.arange(200_000), 0)
    special = [int(np.flatnonzero(kind == k)[t]) for k in (1, 2) for t in range(6)]
    monkeypatch.setattr(client_unit, "ZIG_BUDGET", client_unit.ZIG_BUDGET)
    for budget in (1, 2, 3, 4):
        monkeypatch.setattr(client_unit, "ZIG_BUDGET", budget)
        for s in special:
            key = np.uint64(s) << np.uint64(32)
            got = client_unit.gauss_slow.interpret(key, client_unit.splitmix_inline(key))
            assert got == naive.unit_gauss(s, 0, budget)
    # with one word (the failed first one) every coordinate here falls back to Box-Muller on words 1 and 2
    u1 = ((naive.splitmix64((special[0] << 32) + 1) >> 11) + 1) / 2.0**53
    u2 = (naive.splitmix64((special[0] << 32) + 2) >> 11) / 2.0**53
    assert naive.unit_gauss(special[0], 0, 1) == math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


def test_family_tables_and_bound():
    """Every layer has the area V (the top one to the float64 rounding of R); the bound GAUSS_MAX is the tail's
    maximum from 53-bit uniforms; the acceptance rates behind the budget argument."""
    x, F, V, R = client_unit.ZIG_X, client_unit.ZIG_F, client_unit.ZIG_V, client_unit.ZIG_R
    assert x[1] == R and x[256] == 0 and F[256] == 1 and np.all(np.diff(x) < 0)
    assert x[0] * F[1] == pytest.approx(V, rel=1e-15)
    assert np.allclose(x[1:256] * (F[2:] - F[1:256]), V, rtol=2e-13, atol=0)
    assert V == pytest.approx(R * math.exp(-R * R / 2) + math.sqrt(math.pi / 2) * math.erfc(R / math.sqrt(2)))
    top = R + math.sqrt(2 * 53 * math.log(2))  # a² < 2b <= 2·53 ln 2
    assert top < unit.GAUSS_MAX == client_unit.GAUSS_MAX < top + 0.01
    assert (x[1:] / x[:-1]).mean() > 0.98  # an attempt's first word accepts
    tail = R * math.sqrt(2 * math.pi) * math.exp(R * R / 2) * 0.5 * math.erfc(R / math.sqrt(2))
    assert tail > 0.9  # a tail round accepts: P[a² < 2b] = E[exp(-a²/2)], a ~ Exp(R)
    # the decoder's counts: one Gaussian report adds less than 2**32 to a sum of squares, 2**28 to a sum
    assert unit.GAUSS_MAX**2 * 2**unit.FIXED_POINT_BITS < 2**32 and unit.GAUSS_MAX * 2**24 < 2**28
    assert unit.MAX_REPORTS[1] * 2**32 <= 2**63


def test_family_is_standard_normal():
    """10**6 draws (fixed seeds): KS, chi-square on 100 equiprobable bins, the tails beyond 3 and 4 sd against
    the exact normal tail (binomial tolerance), mean and variance, the bound."""
    g = generate_directions(np.arange(100_000), 10).ravel()
    n = g.size
    assert stats.kstest(g, "norm").pvalue > 1e-4
    edges = stats.norm.ppf(np.linspace(0, 1, 101))
    counts = np.histogram(g, edges)[0]
    assert stats.chisquare(counts).pvalue > 1e-4
    for t in (3.0, 4.0):
        p = 2 * stats.norm.sf(t)
        assert abs(np.mean(np.abs(g) > t) - p) < 5 * math.sqrt(p * (1 - p) / n)
    assert abs(g.mean()) < 5 / math.sqrt(n) and abs(g.var() - 1) < 5 * math.sqrt(2 / n)
    assert np.abs(g).max() < unit.GAUSS_MAX
    # coordinates of one seed and one coordinate across seeds are uncorrelated
    G = g.reshape(-1, 10)
    C = np.corrcoef(G, rowvar=False)
    assert np.abs(C - np.eye(10)).max() < 5 / math.sqrt(G.shape[0])


def test_old_family_is_refused():
    m = ldp.PrivUnitG(2.0, 5)
    for name in ("splitmix64-boxmuller/v1", "other/v0"):
        spec = ldp.Spec(m.spec.mechanism, m.spec.epsilon, m.spec.n_cells,
                        tuple({**dict(m.spec.params), "family": name}.items()))
        with pytest.raises(ValueError, match=r"splitmix64-ziggurat/v2") as err:
            ldp.from_spec(spec)
        assert name in str(err.value)
        with pytest.raises(ldp.exceptions.SpecMismatchError):
            m.aggregate(ldp.Reports(np.zeros((3, 1), np.uint32), spec))


def test_privhs_kernel_matches_the_naive_reference():
    X = np.vstack([sphere_rows(40, 4, 1, 0.7), np.zeros((2, 4)), sphere_rows(3, 4, 2)])
    m = ldp.PrivHS(2.0, 4, repetitions=2)
    w = words(len(X) * m.words_per_record, 3)
    out = np.empty((len(X), 2), np.uint32)
    m._run_kernel(X, w, out)
    assert np.array_equal(out, naive.privhs(X, w, 2, m.plan.t_hi))


@pytest.mark.parametrize("cls", [ldp.PrivUnit, ldp.PrivUnitG])
def test_rejection_kernel_matches_the_naive_reference(cls):
    X = np.vstack([sphere_rows(30, 3, 4, 0.5), np.zeros((2, 3)), sphere_rows(3, 3, 5)])
    for trials in (1, 4, None):
        m = cls(3.0, 3, repetitions=2, trials=trials)
        w = words(len(X) * m.words_per_record, 6)
        out = np.empty((len(X), 2), np.uint32)
        used = np.empty((len(X), 2), np.int64)
        m._run_kernel(X, w, out, used)
        p = m.plan
        want, want_used = naive.rejection(X, w, 2, p.trials, p.sphere, p.gamma, p.t_c)
        assert np.array_equal(out, want) and np.array_equal(used, want_used)


@pytest.mark.parametrize("make", [lambda: ldp.PrivHS(1.0, 5, repetitions=3), lambda: ldp.PrivUnit(2.0, 5),
                                  lambda: ldp.PrivUnitG(2.0, 5)])
def test_aggregate_matches_the_naive_numpy_decode(make):
    m = make()
    r = m.privatize(sphere_rows(500, 5, 7, 0.9), rng=8)
    codes = r.codes.astype(np.int64).ravel()
    seeds = codes >> 1 if m.name == "priv_hs" else codes
    g = generate_directions(seeds, 5)
    if m.name != "priv_unit_g":
        g /= np.linalg.norm(g, axis=1, keepdims=True)
    if m.name == "priv_hs":
        g *= (2 * (codes & 1) - 1)[:, None]
    q = np.floor(g * 2.0**24 + 0.5).astype(np.int64)
    want = np.concatenate([np.where(q > 0, q, 0).sum(0), np.where(q < 0, -q, 0).sum(0),
                           np.floor(g * g * 2.0**24 + 0.5).astype(np.int64).sum(0)])
    agg = m.aggregate(r)
    assert np.array_equal(agg.counts, want) and agg.n_reports == 500


# -- exact ε ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0, 20.0])
def test_privhs_exact_epsilon_is_tight(eps):
    plan = ldp.PrivHS(eps, 3, repetitions=1).plan
    # for a fixed seed, the bit's distribution under inputs on either side of g_s; every seed has the same rows
    rows = [{b: plan.probability(b, side) * (1 << plan.seed_bits) for b in (0, 1)} for side in (0, 1)]
    check_exact_epsilon(rows, eps)
    # the sphere rounding mixes the two sides: any mixture lies between them
    mix = {b: (rows[0][b] + 3 * rows[1][b]) / 4 for b in (0, 1)}
    check_exact_epsilon(rows + [mix], eps)


def test_privhs_check_rejects_planted_bugs():
    b = binary_plan(1.25 * 2.0)
    plan = PrivHSPlan(dim=3, repetitions=1, t_lo=b.t_lo, t_hi=b.t_hi)
    rows = [{bit: plan.probability(bit, side) * 2**31 for bit in (0, 1)} for side in (0, 1)]
    with pytest.raises(PrivacyViolation):
        check_exact_epsilon(rows, 2.0)


def tight_trials(eps, q=0.25):
    """A trial bound with (1 - A)^J < 1e-8 c for caps of mass q, so the ratio is within 1e-8 of 1/c."""
    c = math.exp(-eps)
    return math.ceil(math.log(1e-8 * c) / math.log1p(-(q + (1 - q) * c)))


def ideal_rows(plan, q, n_seeds=4, q_other=None):
    """Rows P[s | x] over a small ideal family of ``n_seeds`` seeds, a fraction ``q`` in each input's cap: two
    inputs whose caps hold different seeds (seed 0 in the first's, seed 1 in the second's)."""
    scale = Fraction(1 << plan.seed_bits, n_seeds)
    rows = []
    for inside_seed, qq in ((0, q), (1, q if q_other is None else q_other)):
        k = int(qq * n_seeds)
        cap = {(inside_seed + j) % n_seeds for j in range(k)}
        p_in, p_out = (plan.seed_probability(inside, Fraction(k, n_seeds)) * scale for inside in (True, False))
        rows.append({s: p_in if s in cap else p_out for s in range(n_seeds)})
    return rows


@pytest.mark.parametrize("cls", [ldp.PrivUnit, ldp.PrivUnitG])
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_rejection_exact_epsilon_is_tight(cls, eps):
    """With J large enough that (1 - A)^J is negligible the ratio reaches e^ε; at the default J it is below it by
    at most (1 - A)^J / (c (1 - (1 - A)^J)) relatively (the module's bound), and never above."""
    plan = cls(eps, 4, repetitions=1, trials=tight_trials(eps)).plan
    rows = ideal_rows(plan, Fraction(1, 4))
    check_exact_epsilon(rows, eps)
    assert plan.extreme_ratio(Fraction(1, 4)) == rows[0][0] / rows[0][2]
    default = cls(eps, 4, repetitions=1).plan
    q = Fraction(default.q)
    ratio = default.extreme_ratio(q)
    A = default.acceptance(q)
    f = (1 - A) ** default.trials
    assert 1 / default.c * (1 - f / (default.c * (1 - f))) <= ratio < 1 / default.c <= exp_lower(eps)
    assert f <= Fraction(1, 10**6) and default.epsilon() <= eps
    assert math.isclose(default.epsilon(), eps, rel_tol=1e-4)


def test_rejection_check_rejects_planted_bugs():
    base = ldp.PrivUnit(2.0, 4, repetitions=1, trials=tight_trials(2.0, 1 / 8)).plan
    q = Fraction(1, 4)
    # 1.25 ε: the acceptance threshold of a larger ε
    bad = RejectionPlan(**{**base.__dict__, "t_c": unit._accept_threshold(2.5)})
    with pytest.raises(PrivacyViolation):
        check_exact_epsilon(ideal_rows(bad, q), 2.0)
    # accepting outside the cap with e^-ε0 · e^-ε (the cap's share counted twice)
    bad = RejectionPlan(**{**base.__dict__, "t_c": unit._accept_threshold(2.0 + 0.5 * 2.0)})
    with pytest.raises(PrivacyViolation):
        check_exact_epsilon(ideal_rows(bad, q), 2.0)
    # a non-ideal family: the two inputs' caps hold different fractions: above e^ε, below the 2ε bound
    rows = ideal_rows(base, Fraction(1, 4), n_seeds=8, q_other=Fraction(5, 8))
    ratio = max(rows[0][s] / rows[1][s] for s in range(8))
    assert ratio > exp_lower(2.0) and ratio <= base.unconditional_ratio_bound() <= exp_lower(4.0)
    with pytest.raises(PrivacyViolation):
        check_exact_epsilon(rows, 2.0, tight=False)


@pytest.mark.parametrize("make", [lambda: ldp.PrivHS(8.0, 10), lambda: ldp.PrivUnit(8.0, 10, repetitions=3),
                                  lambda: ldp.PrivUnitG(8.0, 10), lambda: ldp.PrivUnit(20.0, 50, optimized=True)])
def test_repetition_composes_exactly(make):
    m = make()
    k = m.repetitions
    per = float(m.plan.extreme_ratio()) if isinstance(m, ldp.PrivHS) else float(m.plan.extreme_ratio())
    assert k * math.log(per) <= m.epsilon
    assert m.spec.epsilon == m.epsilon and m.spec.get("repetitions") == k
    assert m.spec.get("epsilon_per_report") == m.epsilon / k and m.epsilon_per_report == m.epsilon / k
    assert m.words_per_record % k == 0
    r = m.privatize(sphere_rows(10, m.dim, 1), rng=1)
    assert r.codes.shape == (10, k)


def test_default_repetitions():
    # PrivHS: the m minimizing B(ε/m)²/m; about ε/2.2 reports
    for eps in (1.0, 2.0, 5.0, 8.0, 20.0):
        m = ldp.PrivHS(eps, 100)
        cost = [ldp.PrivHS(eps, 100, repetitions=k).squared_norm / k for k in range(1, math.ceil(eps) + 1)]
        assert m.repetitions == 1 + int(np.argmin(cost))
    assert ldp.PrivHS(8.0, 100).repetitions in (3, 4)
    # the rejection samplers: the fewest reports with a split of at most 64 expected trials
    for cls, kw in ((ldp.PrivUnit, {}), (ldp.PrivUnit, {"optimized": True}), (ldp.PrivUnitG, {})):
        for eps in (1.0, 8.0, 12.0, 20.0):
            m = cls(eps, 200, **kw)
            assert 1 / m._design_.acceptance <= unit.TRIAL_TARGET
            if m.repetitions > 1:
                fewer = cls(eps, 200, repetitions=m.repetitions - 1, **kw)
                assert kw or 1 / fewer._design_.acceptance > unit.TRIAL_TARGET
    # the constrained optimum beats both the plain split and two reports at ε/2 (d = 200, ε = 8)
    opt, plain = ldp.PrivUnit(8.0, 200, optimized=True), ldp.PrivUnit(8.0, 200)
    two = ldp.PrivUnit(8.0, 200, optimized=True, repetitions=2)
    free = ldp.PrivUnit(8.0, 200, optimized=True, repetitions=1)
    assert opt.repetitions == 1 and opt.squared_norm <= plain.squared_norm < two.squared_norm / 2
    assert free.squared_norm <= opt.squared_norm <= 1.25 * free.squared_norm  # 27.0, 33.3 (module notes)
    assert free.expected_trials > 4 * opt.expected_trials and two.squared_norm > 80


def test_optimized_split_is_the_grid_minimum():
    m = ldp.PrivUnit(4.0, 1000, optimized=True, repetitions=1)
    proxies = [unit._design(True, 1000, 4.0, th, m.plan.t_c, trials=10**9).squared_norm for th in unit.SPLIT_GRID]
    assert m.split == unit.SPLIT_GRID[int(np.argmin(proxies))]
    assert m.squared_norm < ldp.PrivUnit(4.0, 1000, repetitions=1).squared_norm
    g = ldp.PrivUnitG(4.0, 1000, repetitions=1)
    assert g._design_.squared_norm <= min(unit._design(False, 1000, 4.0, th, g.plan.t_c, trials=g.trials).squared_norm
                                          for th in unit.SPLIT_GRID) * (1 + 1e-9)
    # PrivUnitG approaches PrivUnit as d grows (both ~ the same optimal constant)
    assert abs(g.squared_norm / m.squared_norm - 1) < 0.01


@pytest.mark.parametrize("d, eps", [(128, 1.0), (128, 8.0), (1024, 4.0), (1000, 2.0)])
def test_privunitg_reaches_the_ideal_optimum(d, eps):
    """One report per person, PrivUnitG's closed form equals the best ideal PrivUnitG (Asi, Feldman, Talwar):
    α ~ N(0, 1) inside the cap ``α >= γ`` with probability ``p = e^ε Q / (e^ε Q + 1 - Q)`` (``Q = P[N >= γ]``),
    per-person error ``(E α² + d - 1) / E[α]² - 1``, minimized over γ independently here with SciPy; the
    compressed family's acceptance rounding and failure probability change it by less than 1e-4."""
    from scipy import optimize, stats

    def err(g):
        q, phi = stats.norm.sf(g), stats.norm.pdf(g)
        p = math.exp(eps) * q / (math.exp(eps) * q + 1 - q)
        m = p * phi / q - (1 - p) * phi / (1 - q)
        return (1 + g * m + d - 1) / m ** 2 - 1

    best = optimize.minimize_scalar(err, bounds=(-3, 7), method="bounded", options={"xatol": 1e-8}).fun
    mech = ldp.PrivUnitG(eps, d, repetitions=1)
    x = np.tile(np.eye(d)[0], (10, 1))
    assert mech.expected_squared_error(x) * 10 == pytest.approx(best, rel=1e-4)
    # a negative control: the optimum at a 1.25x budget is clearly smaller, so the check can fail
    assert ldp.PrivUnitG(1.25 * eps, d, repetitions=1).expected_squared_error(x) * 10 < best * (1 - 1e-3)


# -- the effect of J --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [ldp.PrivUnit, ldp.PrivUnitG])
def test_trial_bound_effect(cls):
    """The share of reports in their cap is (q/A)(1 - f) + f q and the trials are geometric truncated at J
    (f = (1 - A)^J); the decoder stays unbiased at J = 1; the realized ε grows with J towards ε."""
    d, n = 6, 40_000
    X = np.tile(np.eye(d)[0], (n, 1))  # unit rows: the rounding keeps w = e_1
    eps_values = []
    for trials in (1, 3, None):
        m = cls(2.0, d, repetitions=1, trials=trials)
        r, used = m.trial_counts(X, rng=11)
        seeds = r.codes[:, 0].astype(np.int64)
        g = generate_directions(seeds, d)
        inside = g[:, 0] >= (m.cap_threshold * np.linalg.norm(g, axis=1) if cls is ldp.PrivUnit else m.cap_threshold)
        A, q, J = m._design_.acceptance, m._design_.q, m.trials
        f = (1 - A) ** J
        p_in = q / A * (1 - f) + f * q
        assert abs(inside.mean() - p_in) < 5 * math.sqrt(p_in * (1 - p_in) / n) + 5 * math.sqrt(q / 2**32)
        k = np.arange(1, J + 2)
        probs = np.where(k <= J, A * (1 - A) ** (k - 1), f)
        counts = np.bincount(used[:, 0], minlength=J + 2)[1:]
        assert merged_chisquare(counts, probs) > 1e-6
        assert abs(used.mean() - m.expected_trials) < 5 * used.std() / math.sqrt(n)
        est = m.estimate_mean(m.aggregate(r))
        sd = np.sqrt(m.variance(X[:1])[0] / n)
        assert np.all(np.abs(est.mean - X[0]) < 4.5 * sd)
        eps_values.append(m.plan.epsilon())
    assert eps_values[0] < eps_values[1] < eps_values[2] <= 2.0


# -- statistics -------------------------------------------------------------------------------------------------

def mechanisms_for_stats():
    return [ldp.PrivHS(1.0, 6), ldp.PrivHS(6.0, 6), ldp.PrivUnit(2.0, 6), ldp.PrivUnit(6.0, 6, optimized=True),
            ldp.PrivUnitG(2.0, 6), ldp.PrivUnitG(6.0, 1)]


@pytest.mark.parametrize("m", mechanisms_for_stats(), ids=lambda m: f"{m.name}-{m.epsilon}-{m.dim}")
def test_unbiased_per_coordinate(m):
    n = 30_000
    d = m.dim
    X = np.vstack([sphere_rows(n // 3, d, 1, 1.0), sphere_rows(n // 3, d, 2, 0.3), np.zeros((n - 2 * (n // 3), d))])
    X[: n // 3, 0] = np.abs(X[: n // 3, 0])
    est = m.estimate_mean(m.privatize(X, rng=12))
    sd = np.sqrt(m.variance(X).sum(axis=0)) / n
    z = (est.mean - X.mean(axis=0)) / sd
    assert np.all(np.abs(z) < 4.5), z
    # the empirical standard errors: the reports' variance (closed form) plus the spread of the people's vectors
    k = m.repetitions
    want = np.sqrt((k * m.variance(X).mean(axis=0) + X.var(axis=0)) / (n * k))
    assert np.all(np.abs(est.standard_errors / want - 1) < 0.05)
    assert math.isclose(est.expected_squared_error, m.squared_norm / (n * m.repetitions))


@pytest.mark.parametrize("make,d,reps", [(lambda d: ldp.PrivHS(1.0, d), 10, 900), (lambda d: ldp.PrivHS(8.0, d), 32, 500),
                                         (lambda d: ldp.PrivUnit(1.0, d), 10, 900),
                                         (lambda d: ldp.PrivUnit(4.0, d, optimized=True), 32, 500),
                                         (lambda d: ldp.PrivUnitG(4.0, d), 32, 500)])
def test_squared_error_matches_the_closed_form(make, d, reps):
    m = make(d)
    n = 200
    X = sphere_rows(n, d, 3, 0.8)
    codes = m.privatize(np.tile(X, (reps, 1)), rng=13).codes.astype(np.int64)
    seeds = codes >> 1 if m.name == "priv_hs" else codes
    g = generate_directions(seeds.ravel(), d).reshape(codes.shape + (d,))
    if m.name != "priv_unit_g":
        g /= np.linalg.norm(g, axis=2, keepdims=True)
    if m.name == "priv_hs":
        g *= (2 * (codes & 1) - 1)[:, :, None]
    est = g.mean(axis=1).reshape(reps, n, d).mean(axis=1) / m.decoding_scale
    errors = ((est - X.mean(axis=0)) ** 2).sum(axis=1)
    closed = m.expected_squared_error(X)
    assert math.isclose(closed, m.variance(X).sum() / n**2, rel_tol=1e-9)
    se = errors.std() / math.sqrt(reps)
    assert 0.05 * closed > 3 * se, "too few repetitions for a 5% check"
    assert abs(errors.mean() / closed - 1) < 0.05, (errors.mean(), closed, se)


def test_privhs_scale_is_feldman_talwar_B():
    for d, eps in ((2000, 8.0), (10, 1.0), (1, 2.0)):
        m = ldp.PrivHS(eps, d, repetitions=1)
        B = (math.exp(eps) + 1) / (math.exp(eps) - 1) * math.sqrt(math.pi) / 2 * d * math.exp(
            math.lgamma((d - 1) / 2 + 1) - math.lgamma(d / 2 + 1))
        assert math.isclose(m.squared_norm, B * B, rel_tol=1e-12)
    assert abs(ldp.PrivHS(8.0, 2000, repetitions=1).squared_norm - 3145) < 1


# -- bad inputs, reproducibility, specs, aggregates -------------------------------------------------------------

@pytest.fixture
def no_draws(monkeypatch):
    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)


@pytest.mark.parametrize("m", [ldp.PrivHS(1.0, 3), ldp.PrivUnit(1.0, 3), ldp.PrivUnitG(1.0, 3)], ids=lambda m: m.name)
def test_bad_values_raise_before_any_draw(m, no_draws):
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


@pytest.mark.parametrize("cls", [ldp.PrivHS, ldp.PrivUnit, ldp.PrivUnitG])
def test_bad_parameters(cls):
    for eps, err in ((0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError), (21.0, ValueError), ("1", TypeError)):
        with pytest.raises(err, match="epsilon"):
            cls(eps, 3)
    for dim, err in ((0, ValueError), (2**16 + 1, ValueError), (2.0, TypeError), (True, TypeError)):
        with pytest.raises(err, match="dim"):
            cls(1.0, dim)
    with pytest.raises(ValueError, match="repetitions"):
        cls(1.0, 3, repetitions=0)
    if cls is not ldp.PrivHS:
        with pytest.raises(ValueError, match="failure_probability"):
            cls(1.0, 3, failure_probability=1.0)
        for bad in ("0.1", True, None):  # a wrong kind was a ValueError; R5: a TypeError
            with pytest.raises(TypeError, match="^failure_probability must be a real number; got"):
                cls(1.0, 3, failure_probability=bad)
        with pytest.raises(ValueError, match="trials"):
            cls(1.0, 3, trials=0)
        with pytest.raises(ValueError, match="more repetitions"):
            cls(20.0, 200, repetitions=1, **({"optimized": True} if cls is ldp.PrivUnit else {}))
        with pytest.raises(ValueError, match="more repetitions"):
            cls(20.0, 3, repetitions=1, failure_probability=1e-300)
    with pytest.raises(ValueError, match="dim"):
        ldp.PrivUnit(1.0, 1)  # the sphere of R^1 has no caps


def test_clip_scales_rows_to_norm_one_with_one_warning():
    m = ldp.PrivHS(1.0, 2)
    X = np.array([[3.0, 4.0], [0.6, 0.8], [0.0, 1.0 + 1e-12], [1e200, 1e200]])
    with pytest.warns(ldp.ClippingWarning, match="2 row") as w:
        r = m.privatize(X, rng=1, clip=True)
    assert len(w) == 1
    inv, keep = unit._sphere_inputs(X)
    assert np.all(keep == 2**53) and np.allclose(inv[:3], [0.2, 1.0, 1.0]) and np.isclose(inv[3] * 1e200, 2**-0.5)
    Y = X / np.linalg.norm(X / 1e100, axis=1, keepdims=True) / 1e100
    assert m.privatize(Y, rng=1) == r


@pytest.mark.parametrize("m", [ldp.PrivHS(3.0, 7, repetitions=2), ldp.PrivUnit(3.0, 7), ldp.PrivUnitG(3.0, 7)],
                         ids=lambda m: m.name)
def test_reproducible_in_chunks_and_blocks(m, monkeypatch):
    X = sphere_rows(3001, m.dim, 1, 0.9)
    whole = m.privatize(X, rng=np.random.default_rng(5))
    assert whole == m.privatize(X, rng=np.random.default_rng(5)) and whole != m.privatize(X, rng=6)
    g = np.random.default_rng(5)
    parts = [m.privatize(c, rng=g) for c in np.array_split(X, 7)]
    assert ldp.Reports.concat(parts) == whole
    agg = m.aggregate(whole)
    assert ldp.Aggregate.merge([m.aggregate(p) for p in parts]) == agg
    monkeypatch.setattr(_random, "BLOCK_RECORDS", 100)
    monkeypatch.setattr(_random, "BLOCK_WORDS", 100 * m.words_per_record)
    monkeypatch.setattr(unit, "DECODE_ROWS", 97)
    assert m.privatize(X, rng=np.random.default_rng(5)) == whole and m.aggregate(whole) == agg
    m2 = pickle.loads(pickle.dumps(m))
    assert m2 == m and ldp.from_spec(m.spec) == m and ldp.Spec.from_json(m.spec.to_json()) == m.spec
    assert pickle.loads(pickle.dumps(whole)) == whole and not whole.codes.flags.writeable
    assert ldp.Aggregate.from_bytes(agg.to_bytes()) == agg and ldp.Aggregate.from_frame(agg.to_frame()) == agg
    assert m.spec.get("family") == unit.FAMILY and m.spec.get("dim") == m.dim
    assert m.empty_aggregate() + agg == agg


def test_registry_and_spec_mismatch():
    assert lookup("PrivUnit") is ldp.PrivUnit and lookup("priv_unit_g") is ldp.PrivUnitG and lookup("privhs") is ldp.PrivHS
    assert not {"priv_hs", "priv_unit", "priv_unit_g"} & set(registered())
    a, b = ldp.PrivUnit(2.0, 5), ldp.PrivUnit(2.0, 5, optimized=True)
    r = a.privatize(sphere_rows(10, 5, 1), rng=1)
    with pytest.raises(ldp.exceptions.SpecMismatchError):
        b.aggregate(r)
    spec = ldp.Spec(a.spec.mechanism, a.spec.epsilon, a.spec.n_cells,
                    tuple({**dict(a.spec.params), "family": "other/v0"}.items()))
    with pytest.raises(ValueError):
        ldp.from_spec(spec)


def test_aggregates_and_reports_refuse_what_reports_cannot_give():
    m = ldp.PrivUnit(2.0, 3)
    agg = m.aggregate(m.privatize(sphere_rows(100, 3, 1), rng=1))
    counts = agg.counts.copy()
    with pytest.raises(ValueError, match="n_reports is required"):
        ldp.Aggregate(counts, m.spec)
    counts[0] = 10**15
    with pytest.raises(ValueError, match="exceeds"):
        ldp.Aggregate(counts, m.spec, 100)
    counts = agg.counts.copy()
    counts[6] += 2**30
    with pytest.raises(ValueError, match="squares add to"):
        ldp.Aggregate(counts, m.spec, 100)
    with pytest.raises(ValueError, match="shape"):
        ldp.Reports(np.zeros((5, 2), np.uint32), m.spec)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        ldp.Reports(np.full((5, 1), 2**32, np.int64), m.spec)
    with pytest.raises(ValueError, match="no reports"):
        m.estimate_mean(m.empty_aggregate())


def test_docstring_examples_run():
    import doctest

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(unit) if t.examples]
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0 and len(tests) >= 4


def test_column_codes_and_the_pandas_accessor():
    import pandas as pd

    X = sphere_rows(300, 3, 9, 0.8)
    for m in (ldp.PrivHS(4.0, 3, repetitions=2), ldp.PrivUnit(2.0, 3), ldp.PrivUnitG(3.0, 3, repetitions=2)):
        r = m.privatize(X, rng=1)
        assert m.reports_from_column(m.column_codes(r)) == r
        df = pd.DataFrame(X, columns=["a", "b", "c"])
        rep = df.ldp.privatize({("a", "b", "c"): m}, rng=2)
        assert m.reports_from_column(rep["a,b,c"].to_numpy()).codes.shape == (300, m.repetitions)
    with pytest.raises(ValueError, match="32 bits"):
        ldp.PrivUnit(2.0, 3).reports_from_column(np.array([2**32], np.uint64))
    with pytest.raises(TypeError, match="3 reports"):
        ldp.PrivHS(4.0, 3, repetitions=3).column_codes(ldp.PrivHS(4.0, 3, repetitions=3).privatize(X, rng=1))


def test_missing_values_are_imputed_with_a_public_fill():
    m = ldp.PrivUnitG(2.0, 3)
    X = sphere_rows(50, 3, 1, 0.5)
    Y = X.copy()
    Y[3, 1] = np.nan
    Z = X.copy()
    Z[3, 1] = 0.1
    assert m.privatize(Y, rng=1, nan_policy="impute", fill_value=0.1) == m.privatize(Z, rng=1)
    assert m.privatize(Y, rng=1, nan_policy="impute", fill_value=[0, 0.1, 0]) == m.privatize(Z, rng=1)
    with pytest.raises(ValueError, match="fill_value"):
        m.privatize(Y, nan_policy="impute")
    with pytest.raises(ValueError, match="fill_value"):
        m.privatize(Y, nan_policy="impute", fill_value=[1, 2])
    with pytest.raises(ValueError, match="nan_policy"):
        m.privatize(Y, nan_policy="drop")


def test_privhs_bits_match_the_plan():
    """The kernel keeps the bit [⟨g_s, w⟩ >= 0] with probability t_hi/2**53 (chi-square, α = 1e-6), and
    its seeds are uniform (their top bits)."""
    n = 200_000
    m = ldp.PrivHS(1.0, 4, repetitions=1)
    X = np.tile([0.0, 0.6, 0.0, 0.8], (n, 1))  # unit rows: w = x
    codes = m.privatize(X, rng=21).codes[:, 0].astype(np.int64)
    side = (generate_directions(codes >> 1, 4) @ X[0] >= 0).astype(np.int64)
    kept = int(np.sum((codes & 1) == side))
    p = m.plan.t_hi / TWO53
    assert stats.binomtest(kept, n, p).pvalue > 1e-6
    top = np.bincount(codes >> 28, minlength=8)  # the seed's top 3 bits
    assert stats.chisquare(top).pvalue > 1e-6


def test_small_calls_stay_interpreted_with_their_helpers(tmp_path):
    """Small calls (default policy, fresh process, empty Numba cache) run interpreted, helpers included:
    the non-inlined helper ``direction`` (called per report by the decoder) counts no work of its own (the
    calling kernel counted the reports), so repeated small calls never compile it, nor import Numba."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = (
        "import sys\n"
        "import numpy as np\n"
        "import ldpnum as ldp\n"
        "x = np.random.default_rng(0).standard_normal((100, 16))\n"
        "x /= np.linalg.norm(x, axis=1, keepdims=True)\n"
        "for m in (ldp.PrivHS(1.0, 16), ldp.PrivUnit(1.0, 16), ldp.PrivUnitG(1.0, 16)):\n"
        "    for seed in range(3):\n"
        "        m.aggregate(m.privatize(x, rng=seed))\n"
        "print('numba' in sys.modules)\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), LDPNUM_JIT="auto", PYTHONPATH=str(root))
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                         cwd=str(root))
    assert out.stdout.split() == ["False"]


# -- tiny ε: refused at construction with the smallest ε/m that works ------------------------------------------

@pytest.mark.parametrize("cls", [ldp.PrivUnit, ldp.PrivUnitG])
@pytest.mark.parametrize("eps", [1e-10, 1e-15, 3e-16, 1e-300])
def test_rejection_mechanisms_refuse_an_epsilon_too_small_for_the_acceptance_grid(cls, eps):
    # 1e-10 and 1e-15 divided by zero (the acceptance threshold rounded to 2**32: M = 0); 3e-16 and below
    # built a mechanism with a NEGATIVE decoding scale M (threshold 2**32 + 1), whose means had the wrong sign
    with pytest.raises(ValueError, match=r"too small for the acceptance threshold on a 2\*\*32 grid"):
        cls(eps, 3)
    with pytest.raises(ValueError, match="epsilon/repetitions"):
        cls(1e-7, 3, repetitions=1000)   # ε/m = 1e-10


def test_smallest_epsilon_per_report_works():
    from ldpnum.vectors.unit import min_epsilon_per_report

    e = min_epsilon_per_report()
    assert 2.3e-10 < e < 2.4e-10   # about 2**-32
    for cls in (ldp.PrivUnit, ldp.PrivUnitG):
        m = cls(e, 3)
        assert m.decoding_scale > 0 and math.isfinite(m.squared_norm)
        with pytest.raises(ValueError, match=repr(e)):
            cls(math.nextafter(e, 0), 3)


# -- the keywords every mechanism takes, and clear messages -------------------------------------------------------

@pytest.mark.parametrize("m", [ldp.PrivHS(2.0, 2), ldp.PrivUnit(2.0, 2), ldp.PrivUnitG(2.0, 2), ldp.SQKR(2.0, 2)],
                         ids=lambda m: m.name)
def test_out_of_range_is_another_spelling_of_clip(m):
    # the CLI and the table accessors pass out_of_range to every mechanism: these raised "unexpected keyword"
    X = np.array([[0.6, 0.8], [3.0, 4.0]])
    with pytest.warns(ldp.ClippingWarning, match="1 row"):
        r = m.privatize(X, rng=1, out_of_range="clip")
    with pytest.warns(ldp.ClippingWarning):
        assert m.privatize(X, rng=1, clip=True) == r
    with pytest.raises(ValueError, match="norm above 1"):
        m.privatize(X, rng=1, out_of_range="raise")
    with pytest.raises(ValueError, match="contradicts"):
        m.privatize(X, rng=1, clip=True, out_of_range="raise")
    with pytest.raises(ValueError, match="out_of_range"):
        m.prepare_values(X, out_of_range="wrap")
    assert m.prepare_values(X[:1], out_of_range="raise").shape == (1, 2)


@pytest.mark.parametrize("m", [ldp.PrivHS(2.0, 2), ldp.PrivUnit(2.0, 2), ldp.PrivUnitG(2.0, 2), ldp.SQKR(2.0, 2),
                               ldp.DuchiMultivariate(2.0, [(0, 1)] * 2)], ids=lambda m: m.name)
def test_text_columns_are_named_and_missing_estimators_say_what_is_offered(m):
    # a text column gave NumPy's "could not convert string to float: 'x'" (ValueError) for the unit-ball ones
    df = pd.DataFrame({"a": [0.1, 0.2], "t": ["x", "y"]})
    with pytest.raises(TypeError, match="column 't' has dtype"):
        m.privatize(df, rng=0)
    with pytest.raises(TypeError, match=r"first at row 0, coordinate 1: str 'x'"):
        m.privatize(df.to_numpy(), rng=0)
    with pytest.raises(TypeError, match="column 't'"):
        df.ldp.privatize({("a", "t"): m}, rng=0)
    # 'DuchiMultivariate' object has no attribute 'estimate_distribution', before
    with pytest.raises(AttributeError, match=r"has no estimate_distribution: its reports do not estimate "
                                             r"distributions; it offers estimate_mean \(means\)"):
        m.estimate_distribution
    assert not hasattr(m, "estimate_frequencies") and not m.offers("estimate_distribution")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        m.nope


def test_the_gaussian_squares_check_minimizes_chernoffs_exponent_as_scipy_does():
    """The aggregate check's golden-section search finds the bounded minimum SciPy's optimizer finds (to 1e-7
    relative) on the Chernoff exponents of PrivUnitG totals on both sides of the mean, and at an end."""
    from scipy import optimize

    m = ldp.PrivUnitG(2.0, 3)
    spec = m.spec
    d = int(spec.get("dim"))
    des = unit._gaussian_design(d, float(spec.epsilon) / m.repetitions, float(spec.get("split")),
                                int(spec.get("trials")), float(spec.get("failure_probability")))
    copies = 1000
    mean = copies * (d - 1 + des.t2)
    for s, (lo, hi) in ((0.5 * mean, (0.0, 60.0)), (0.9 * mean, (0.0, 60.0)), (1.1 * mean, (-60.0, 0.0)),
                        (3.0 * mean, (-60.0, 0.0))):
        def f(w):
            return copies * unit._gaussian_log_mgf(des, d, w) + 0.5 * math.expm1(w) * s
        ours = unit._unimodal_minimum(f, lo, hi)
        ref = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-9}).fun
        assert ours <= ref + 1e-7 * abs(ref) + 1e-9 and ours < 0, (s, ours, ref)
    assert unit._unimodal_minimum(lambda x: x, 2.0, 5.0) == 2.0  # a minimum at an end
    assert abs(unit._unimodal_minimum(lambda x: (x - 1.3) ** 2 - 4.0, -10.0, 10.0) + 4.0) < 1e-12
