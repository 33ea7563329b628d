"""L-GRR beyond the common checks: the instantaneous layer against Arcolezi et al.'s closed form, unbiasedness from the
closed-form variance, and the memoized values the ledger counts."""

import math

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum.longitudinal.grr import instantaneous_grr_epsilon

ALPHA = 1e-6
GRID = [(0.5, 0.1), (1.0, 0.5), (2.0, 1.0), (4.0, 0.5), (4.0, 3.5), (8.0, 4.0)]


def paper_p2(k, eps_inf, eps_1):
    """Arcolezi et al.'s p2 = (e^(ε∞+ε1) − 1)/(−k e^ε1 + (k−1) e^ε∞ + e^ε1 + e^(ε∞+ε1) − 1)."""
    a, b = math.exp(eps_inf), math.exp(eps_1)
    return (a * b - 1) / (-k * b + (k - 1) * a + b + a * b - 1)


def composed_ratio(k, p1, p2):
    """P[y = v | v] / P[y = v | v'] of GRR(p2) after GRR(p1) over k values (written from scratch)."""
    q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)
    return (p1 * p2 + (1 - p1) * q2) / (q1 * p2 + (1 - q1) * q2)


def solved_p2(k, p1, eps_1):
    eps2 = instantaneous_grr_epsilon(p1, k, eps_1)
    return math.exp(eps2) / (math.exp(eps2) + k - 1)


@pytest.mark.parametrize("eps_inf, eps_1", GRID)
def test_p2_at_ideal_p1_is_the_papers_for_two_values(eps_inf, eps_1):
    p1 = math.exp(eps_inf) / (math.exp(eps_inf) + 1)
    # ε2 is solved a relative 2**-40 below ε1 (grr.SOLVE_MARGIN): at ε1 = 3.5 the ratio is 3.2e-12 low.
    assert solved_p2(2, p1, eps_1) == pytest.approx(paper_p2(2, eps_inf, eps_1), rel=1e-10)
    assert composed_ratio(2, p1, solved_p2(2, p1, eps_1)) == pytest.approx(math.exp(eps_1), rel=1e-10)
    assert composed_ratio(2, p1, solved_p2(2, p1, eps_1)) <= math.exp(eps_1)


@pytest.mark.parametrize("eps_inf, eps_1", GRID)
@pytest.mark.parametrize("k", [3, 5, 64])
def test_papers_p2_is_conservative_for_more_values_and_ours_is_tight(k, eps_inf, eps_1):
    # The paper's closed form solves p1 p2 + q1 q2 = e^ε1 (p1 q2 + q1 p2): the paths through the other k - 2 values
    # are left out, so for k ≥ 3 its composed ratio is below e^ε1 (private, not tight). L-GRR solves the composed
    # plan's own equation: its p2 is larger (less noise) and its ratio is e^ε1.
    p1 = math.exp(eps_inf) / (math.exp(eps_inf) + k - 1)
    ours, theirs = solved_p2(k, p1, eps_1), paper_p2(k, eps_inf, eps_1)
    assert composed_ratio(k, p1, ours) == pytest.approx(math.exp(eps_1), rel=1e-10)  # 2**-40 low (SOLVE_MARGIN)
    assert composed_ratio(k, p1, ours) <= math.exp(eps_1)
    assert composed_ratio(k, p1, theirs) < math.exp(eps_1) * (1 - 1e-6)
    assert ours > theirs
    q1, q2 = (1 - p1) / (k - 1), (1 - theirs) / (k - 1)
    assert (p1 * theirs + q1 * q2) / (p1 * q2 + q1 * theirs) == pytest.approx(math.exp(eps_1), rel=1e-12)


@pytest.mark.parametrize("eps_inf, eps_1", GRID)
def test_instantaneous_plan_keeps_with_the_p2_solved_on_the_realized_permanent_plan(eps_inf, eps_1):
    m = ldp.LGRR(eps_inf, eps_1, 6)
    p1 = m.permanent_plan.keep_count() / 2**64
    p2 = m._plan.keep_count() / 2**64
    assert p2 == pytest.approx(solved_p2(6, p1, eps_1), rel=1e-12)
    p, q = m.support_probabilities
    assert p / q == pytest.approx(math.exp(eps_1), rel=1e-9)


@pytest.mark.parametrize("eps_inf, eps_1, k", [(2.0, 1.0, 8), (4.0, 0.5, 40)])
def test_frequency_estimates_are_unbiased(eps_inf, eps_1, k):
    m = ldp.LGRR(eps_inf, eps_1, k)
    n = 100_000
    rng = np.random.default_rng(1)
    x = rng.choice(k, n, p=rng.dirichlet(np.ones(k)))
    truth = np.bincount(x, minlength=k) / n
    est = m.estimate_frequencies(m.privatize(x, keys=ldp.ClientKeys.generate(n, rng=2), rng=3, round=4))
    sd = np.sqrt(m.variance(truth) / n)
    bound = stats.norm.isf(ALPHA / (2 * k))
    assert np.max(np.abs((est.frequencies - truth) / sd)) < bound
    assert stats.chi2.sf(np.sum(((est.frequencies - truth) / sd) ** 2), k) > ALPHA
    if eps_1 < 1:
        return  # too noisy for the negative control below to have power at this n
    # negative control: debiased as if the reports were the permanent answers (one layer), the test rejects it
    p, q = m.support_probabilities
    p_perm = m.permanent_plan.keep_count() / 2**64
    q_perm = (1 - p_perm) / (k - 1)
    raw = est.frequencies * (p - q) + q
    z_bad = ((raw - q_perm) / (p_perm - q_perm) - truth) / sd
    assert stats.chi2.sf(np.sum(z_bad**2), k) < ALPHA


def test_memo_values_are_the_categories():
    m = ldp.LGRR(2.0, 1.0, 4)
    keys = ldp.ClientKeys.generate(5, rng=1)
    memo = m.memo_values([0, 3, 1, 9, 3], keys=keys, unknown="uniform")
    assert memo.dtype == np.uint64 and memo.tolist() == [0, 3, 1, 2**64 - 1, 3]
    with pytest.raises(ValueError, match="keys for 4 people"):
        m.memo_values([0, 1, 2, 3, 0], keys=keys[:4])
    with pytest.raises(TypeError, match="key"):
        m.memo_values([0, 1])
