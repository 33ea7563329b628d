"""Duchi et al.'s multidimensional mechanism (ldpnum/vectors/duchi.py; TESTING.md, "Vectors").

* exact ε, in rationals and tight, from the plan: every report for small d (and E[B z] = x exactly), with
  negative controls (restated samplers that are not private);
* the kernel against the naive NumPy reference, bit for bit, and against the exact plan (chi-square);
* unbiasedness (z-tests with the closed-form variances) and the squared error against its closed form.

The checks shared with the sampled dimensions (bad inputs, reproducibility, specs, aggregates, results) are
in test_sampled.py.
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.plans import TWO53
from ldpnum.vectors.duchi import DuchiMultivariatePlan, duchi_constant

import naive
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio
from test_sampled import assert_within_5_percent, repeated_squared_errors

EPSILONS = [0.1, 0.5, 1.0, 4.0, 8.0, 20.0]


# -- the kernel against the naive reference (tests/naive.py) ---------------------------------------------------

#: Rows per configuration. With the JIT disabled (tests/_kernels/test_jit.py runs this so, under coverage) the
#: kernel runs as Python at ~1 ms a row; 600 rows still reach every line that 3000 reach.
ROWS = naive.rows(3000)


def test_duchi_kernel_matches_the_naive_reference():
    rng = np.random.default_rng(3)
    for d, eps in [(1, 1.0), (2, 0.5), (5, 4.0), (64, 1.0), (65, 2.0), (130, 8.0)]:
        lows, highs = rng.uniform(-5, 0, d), rng.uniform(1, 5, d)
        m = ldp.DuchiMultivariate(eps, list(zip(lows, highs)))
        # the wide boxes cost d per row in Python when the JIT is disabled: fewer rows reach the same lines
        rows = ROWS if d < 64 else naive.rows(ROWS, 60)
        X = rng.uniform(lows - 1, highs + 1, (rows, d))
        X[:5] = lows
        X[5:10] = highs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ldp.ClippingWarning)
            values = m.prepare_values(X)
        words = rng.bit_generator.random_raw(rows * m.words_per_record)
        out = m._allocate_reports(rows)
        m._run_kernel(values, words, out)
        np.testing.assert_array_equal(out, naive.duchi_multivariate(X, lows, highs, m.plan.t_hi, words))


# -- exact ε ---------------------------------------------------------------------------------------------------

def duchi_rows(m, interior=True):
    """Exact report distributions for the corners of the box and (optionally) the kernel's own thresholds
    at adversarial interior points."""
    d = m.dim
    corners = [[TWO53 if v >> j & 1 else 0 for j in range(d)] for v in range(1 << d)]
    rows = [m.plan.exact_probabilities(t) for t in corners]
    if interior:
        lows, highs = m._lows, m._highs
        X = np.array([lows + (highs - lows) * f for f in (0.5, 1 / 3, 0.999)] + [np.where(np.arange(d) % 2, lows, highs)])
        rows += [m.plan.exact_probabilities(t) for t in m.sign_thresholds(X)]
    return rows


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_duchi_exact_epsilon_is_tight(d):
    for eps in EPSILONS if d <= 3 else [0.5, 8.0]:
        m = ldp.DuchiMultivariate(eps, [(0, 1)] * d)
        rows = duchi_rows(m, interior=d <= 4)
        worst = check_exact_epsilon(rows, eps)
        assert worst == m.plan.extreme_ratio()  # reached at the corners
        assert len(rows[0]) == 2**d  # the alphabet is every sign vector, for every input


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_duchi_decoding_is_exactly_unbiased(d):
    """E[B z_j | x] = t̃_j (the value on the [-1, 1] scale after the sign rounding), in exact rationals."""
    m = ldp.DuchiMultivariate(1.0, [(0, 1)] * d)
    p = m.plan
    b = duchi_constant(d) * Fraction(TWO53, p.t_hi - p.t_lo)
    assert float(b) == m.scale
    thresholds = [TWO53 // 3 * (j + 1) // (d + 1) for j in range(d)]
    probs = p.exact_probabilities(thresholds)
    for j in range(d):
        mean = sum((pz if z >> j & 1 else -pz) for z, pz in probs.items()) * b
        assert mean == 2 * Fraction(thresholds[j], TWO53) - 1


def test_duchi_constant_matches_the_paper_for_odd_d():
    # The paper's C_d for odd d: 2^(d-1) / binom(d-1, (d-1)/2); C_1 = 1 (randomized response), C_3 = 2.
    assert duchi_constant(1) == 1 and duchi_constant(3) == 2 and duchi_constant(5) == Fraction(16, 6)
    # B grows like sqrt(pi d / 2)
    assert abs(float(duchi_constant(1001)) / math.sqrt(math.pi * 1001 / 2) - 1) < 1e-3


class TiesInBothHalves(DuchiMultivariatePlan):
    """Mutant (a restated even-d sampler): orthogonal reports in both half-cubes: P = 1/|T| for a tie,
    π/|T| and (1-π)/|T| for the others, |T| = 2^(d-1) + binom(d, d/2)/2."""

    def sign_probability(self, a):
        d = self.dim
        size = Fraction(2 ** (d - 1)) + Fraction(math.comb(d, d // 2), 2)
        s = 2 * bin(a).count("1") - d
        if s > 0:
            return Fraction(self.t_hi, TWO53) / size
        if s < 0:
            return Fraction(self.t_lo, TWO53) / size
        return 1 / size


class TiesInTheLowerHalf(DuchiMultivariatePlan):
    """Mutant (another restatement): T+ = {⟨z, v⟩ > 0}, T- = {⟨z, v⟩ <= 0}, each uniform."""

    def sign_probability(self, a):
        d = self.dim
        ties = math.comb(d, d // 2) if d % 2 == 0 else 0
        upper, lower = Fraction(2 ** (d - 1)) - Fraction(ties, 2), Fraction(2 ** (d - 1)) + Fraction(ties, 2)
        s = 2 * bin(a).count("1") - d
        return Fraction(self.t_hi, TWO53) / upper if s > 0 else Fraction(self.t_lo, TWO53) / lower


def test_duchi_exact_check_rejects_planted_bugs():
    m = ldp.DuchiMultivariate(1.25, [(0, 1)] * 3)
    with pytest.raises(PrivacyViolation, match="exceeds"):  # M5: planned for 1.25 ε
        check_exact_epsilon(duchi_rows(m, interior=False), 1.0)
    with pytest.raises(PrivacyViolation, match="not tight"):  # planned for ε/2
        check_exact_epsilon(duchi_rows(ldp.DuchiMultivariate(0.5, [(0, 1)] * 3), interior=False), 1.0)
    honest = ldp.DuchiMultivariate(1.0, [(0, 1)] * 2).plan
    mutant = TiesInBothHalves(dim=2, t_lo=honest.t_lo, t_hi=honest.t_hi)
    corners = [[TWO53 if v >> j & 1 else 0 for j in range(2)] for v in range(4)]
    rows = [mutant.exact_probabilities(t) for t in corners]
    assert all(sum(r.values()) == 1 for r in rows)
    with pytest.raises(PrivacyViolation, match="exceeds"):  # ratio 1/(1 - π) = e^ε + 1
        check_exact_epsilon(rows, 1.0)
    assert abs(float(max_ratio(rows)) - (math.e + 1)) < 1e-9
    for d in (2, 4):
        honest = ldp.DuchiMultivariate(1.0, [(0, 1)] * d).plan
        mutant = TiesInTheLowerHalf(dim=d, t_lo=honest.t_lo, t_hi=honest.t_hi)
        corners = [[TWO53 if v >> j & 1 else 0 for j in range(d)] for v in range(2**d)]
        rows = [mutant.exact_probabilities(t) for t in corners]
        assert all(sum(r.values()) == 1 for r in rows)
        with pytest.raises(PrivacyViolation, match="exceeds"):  # e^ε |T-|/|T+|
            check_exact_epsilon(rows, 1.0)
    odd = ldp.DuchiMultivariate(1.0, [(0, 1)] * 3).plan  # for odd d there are no ties: the restatements agree
    rows = [TiesInTheLowerHalf(dim=3, t_lo=odd.t_lo, t_hi=odd.t_hi).exact_probabilities([TWO53 * (v >> j & 1)
                                                                                         for j in range(3)])
            for v in range(8)]
    check_exact_epsilon(rows, 1.0)


def duchi_twin(m, x, n, seed):
    """Chi-square of the kernel's reports of one vector against the plan's exact distribution."""
    r = m.privatize(np.tile(x, (n, 1)), rng=seed)
    keys = r.codes[:, 0].astype(np.int64)
    exact = m.plan.exact_probabilities(m.sign_thresholds(np.asarray([x]))[0])
    got = np.bincount(keys, minlength=2**m.dim)
    return check_kernel_matches(got, [float(exact[z]) for z in range(2**m.dim)])


def test_duchi_kernel_matches_the_plan():
    for d in (3, 4):
        m = ldp.DuchiMultivariate(1.0, [(0, 1)] * d)
        for i, x in enumerate([np.zeros(d), np.linspace(0.1, 0.9, d), np.ones(d)]):
            duchi_twin(m, x, 200_000, seed=10 + i)
    mutant = ldp.DuchiMultivariate(1.25, [(0, 1)] * 4)
    honest = ldp.DuchiMultivariate(1.0, [(0, 1)] * 4)
    r = mutant.privatize(np.zeros((200_000, 4)), rng=5)
    exact = honest.plan.exact_probabilities([0] * 4)
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(np.bincount(r.codes[:, 0], minlength=16), [float(exact[z]) for z in range(16)])


# -- unbiasedness and squared error against the closed forms ---------------------------------------------------

def test_duchi_unbiased_per_coordinate():
    rng = np.random.default_rng(30)
    bounds = [(0, 1), (-10, 10), (100, 200), (0, 1), (-1, 0)]
    lows, highs = np.array(bounds).T
    X = rng.uniform(lows, highs, (300_000, 5))
    X[:, 3] = rng.random(300_000) ** 4  # skewed
    m = ldp.DuchiMultivariate(2.0, bounds)
    est = m.estimate_mean(m.privatize(X, rng=31))
    sd = np.sqrt(m.variance(X).sum(axis=0)) / X.shape[0]
    z = (est.mean - X.mean(axis=0)) / sd
    assert np.all(np.abs(z) < 4.5), z
    np.testing.assert_allclose(est.standard_errors, sd, rtol=0.02)  # the estimated SE agrees with the closed form


@pytest.mark.parametrize("d,eps,n,reps", [(16, 1.0, 400, 600), (9, 4.0, 400, 1000), (2, 0.5, 200, 4000)])
def test_duchi_squared_error_matches_the_closed_form(d, eps, n, reps):
    rng = np.random.default_rng(d)
    X = rng.uniform(-2, 3, (n, d))
    m = ldp.DuchiMultivariate(eps, [(-2, 3)] * d)
    errors, _ = repeated_squared_errors(m, X, reps, seed=d + 100)
    assert_within_5_percent(errors, m.expected_squared_error(X))
