"""Exact privacy guarantees (DESIGN.md R8 a–c), each checker with a planted bug it must reject."""

import math
from fractions import Fraction

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.plans import TWO53, BinaryPlan, WindowPlan, binary_plan, exp_lower, window_plan

from conftest import EPSILONS, adversarial_values
from naive import naive_float_piecewise, rows
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_input_free_alphabet, check_kernel_matches


def binary_rows(thresholds):
    return [{0: 1 - Fraction(int(t), TWO53), 1: Fraction(int(t), TWO53)} for t in thresholds]


# --- (a) exact epsilon ------------------------------------------------------------------------------

@pytest.mark.parametrize("epsilon", EPSILONS)
def test_binary_plan_exact_and_tight(epsilon):
    plan = binary_plan(epsilon)
    check_exact_epsilon(binary_rows([plan.t_lo, plan.t_hi]), epsilon)


@pytest.mark.parametrize("cls", [ldp.StochasticRounding, ldp.Duchi])
@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-3.5, 1e6), (-1e-100, 1e-100)])
def test_two_output_kernel_envelope(cls, epsilon, bounds):
    """The kernel's own thresholds over adversarial and 1e5 random inputs stay within the plan's envelope."""
    m = cls(epsilon, bounds)
    t = m.thresholds(adversarial_values(bounds))
    assert m.plan.t_lo <= t.min() and t.max() <= m.plan.t_hi
    assert t[0] == m.plan.t_lo  # the lower bound itself maps to the plan's endpoint
    check_exact_epsilon(binary_rows([t.min(), t.max()]), epsilon, tight=False)
    check_exact_epsilon(binary_rows([m.plan.t_lo, m.plan.t_hi]), epsilon)


def test_randomized_response_states_exact():
    rr = ldp.RandomizedResponse(1.0)
    t = rr.thresholds(np.array([0.0, 1.0]))
    worst = check_exact_epsilon(binary_rows(t), 1.0)
    assert float(worst) == pytest.approx(math.e, rel=1e-12)


def window_rows(plan):
    return [plan.exact_probabilities(s) for s in range(plan.n_positions + 1)]


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("n_cells", [16, 64])
def test_window_plan_brute_force(epsilon, n_cells):
    """All window positions × all cells in rationals; the structural reduction agrees."""
    m = ldp.Piecewise(epsilon, (0, 1), n_cells=n_cells)
    rows = window_rows(m.plan)
    worst = check_exact_epsilon(rows, epsilon)
    assert worst <= m.plan.extreme_ratio()
    assert float(worst) == pytest.approx(float(m.plan.extreme_ratio()), rel=1e-12)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_piecewise_default_grid_exact(epsilon):
    m = ldp.Piecewise(epsilon, (0, 1))
    check_exact_epsilon([], epsilon, ratio=m.plan.extreme_ratio())


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_hybrid_exact(epsilon):
    """Disjoint branches mixed by a value-independent coin: the mixture's ratio is the larger branch ratio."""
    h = ldp.Hybrid(epsilon, (0, 1))
    a = Fraction(round(h.alpha * TWO53), TWO53)
    ratios = [h.duchi_plan.t_hi * Fraction(1, h.duchi_plan.t_lo)]
    if a > 0:
        ratios.append(h.piecewise_plan.extreme_ratio())
    check_exact_epsilon([], epsilon, ratio=max(ratios))


def test_hybrid_brute_force_small_grid():
    h = ldp.Hybrid(2.0, (0, 1), n_cells=16)
    a = Fraction(h._t_mix, TWO53)
    pw, bp = h.piecewise_plan, h.duchi_plan
    rows = []
    for s in range(pw.n_positions + 1):
        for t in (bp.t_lo, bp.t_hi, (bp.t_lo + bp.t_hi) // 2):
            row = {j: a * p for j, p in pw.exact_probabilities(s).items()}
            row[16] = (1 - a) * (1 - Fraction(t, TWO53))
            row[17] = (1 - a) * Fraction(t, TWO53)
            rows.append(row)
    check_exact_epsilon(rows, 2.0)


def test_rounding_probe_matches_plan():
    """The kernel's rounding stays inside 0..n_positions with a threshold in [0, 2**53)."""
    m = ldp.Piecewise(1.0, (-2, 7))
    s0, t = m.window_starts(adversarial_values((-2, 7), n_random=rows(100_000, 5_000)))
    assert s0.min() == 0 and s0.max() == m.plan.n_positions
    assert t.min() >= 0 and t.max() < TWO53
    assert np.all(t[s0 == m.plan.n_positions] == 0)


# --- negative controls for the exact checker --------------------------------------------------------

@pytest.mark.parametrize("epsilon", [0.5, 1.0, 20.0])
def test_exact_checker_rejects_inflated_epsilon(epsilon):
    """M5: thresholds built for 1.25 ε."""
    plan = binary_plan(epsilon * 1.25) if epsilon * 1.25 <= 20 else binary_plan(20.0)
    if epsilon * 1.25 > 20:
        plan = BinaryPlan(t_lo=math.ceil(Fraction(TWO53) / (1 + Fraction(math.exp(25.0)))),
                          t_hi=TWO53 - math.ceil(Fraction(TWO53) / (1 + Fraction(math.exp(25.0)))))
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(binary_rows([plan.t_lo, plan.t_hi]), epsilon)


def test_exact_checker_rejects_half_epsilon_formula():
    """M6: e^{ε/2} used where e^ε belongs — private, but the stated guarantee is not tight."""
    plan = binary_plan(0.5)
    with pytest.raises(PrivacyViolation, match="not tight"):
        check_exact_epsilon(binary_rows([plan.t_lo, plan.t_hi]), 1.0)


def test_exact_checker_rejects_floor_rounding_at_epsilon_20():
    """M8: rounding the threshold the wrong way (floor instead of ceil) at ε = 20."""
    e = exp_lower(20.0)
    t_lo = math.floor(Fraction(TWO53) / (1 + e)) - 1
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(binary_rows([t_lo, TWO53 - t_lo]), 20.0)


@pytest.mark.parametrize("delta", [-1, +1])
def test_exact_checker_rejects_wrong_window(delta):
    """M7: a kernel window one cell narrower (bound violated) or wider (guarantee not tight) than planned."""
    good = window_plan(1.0, 64, 20)
    bad = WindowPlan(n_cells=64, m=20 + delta, t_in=good.t_in)
    with pytest.raises(PrivacyViolation):
        check_exact_epsilon(window_rows(bad), 1.0)


def test_exact_checker_rejects_zero_probability_output():
    rows = [{0: Fraction(1), 1: Fraction(0)}, {0: Fraction(1, 2), 1: Fraction(1, 2)}]
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, 1.0)


# --- (b) the kernel samples what the plan says ------------------------------------------------------

def test_twin_checker_rejects_inflated_epsilon():
    """M5 sampled: a randomizer run at 1.25 ε does not match the plan at ε."""
    honest = ldp.Piecewise(1.0, (0, 10))
    mutant = ldp.Piecewise(1.25, (0, 10), n_cells=honest.plan.n_cells)
    r = mutant.privatize(np.full(300_000, 0.0), rng=7)
    counts = np.bincount(r.codes, minlength=honest.n_cells)
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(counts, honest.output_probabilities(0.0))


def test_twin_checker_rejects_lie_from_all_outcomes():
    """M1: with probability 1-p the bit is drawn from *both* outcomes (it may repeat the truth)."""
    rr = ldp.RandomizedResponse(1.0)
    p = rr.plan.t_hi / TWO53
    rng = np.random.default_rng(3)
    n = 300_000
    keep = rng.random(n) < p
    bits = np.where(keep, 1, rng.integers(0, 2, n))
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(np.bincount(bits, minlength=2), rr.output_probabilities(1))


# --- (c) the output alphabet does not depend on the input ------------------------------------------

def outputs_by_input(m, xs, n, seed=5):
    """The codes the kernel reports for each input (``n`` reports of it)."""
    return {float(x): m.privatize(np.full(n, x), rng=seed + i).codes for i, x in enumerate(xs)}


EDGES = adversarial_values((0, 1), n_random=3)


@pytest.mark.parametrize("make,every_output", [
    (lambda: ldp.Duchi(1.0, (0, 1)), True),
    (lambda: ldp.Piecewise(1.0, (0, 1), n_cells=16), True),
    (lambda: ldp.Piecewise(1.0, (0, 1)), False),
    (lambda: ldp.Laplace(8.0, (0, 1)), False),
])
def test_output_alphabet_is_input_free(make, every_output):
    """C1: for every adversarial input, the reports are unsigned codes of the plan's alphabet
    ``0..n_cells-1``, fixed before any input is seen; on small alphabets every input reaches every code
    (4,000 reports per input: the least likely Piecewise cell at n_cells = 16 has probability > 1/40)."""
    m = make()
    out = outputs_by_input(m, EDGES, 4000)
    assert all(o.dtype.kind == "u" for o in out.values())
    check_input_free_alphabet(out, np.arange(m.n_cells, dtype=np.uint64), every_output=every_output)


def test_alphabet_check_rejects_naive_float_piecewise():
    """M4: the textbook float Piecewise mechanism emits values outside any fixed alphabet."""
    m = ldp.Piecewise(1.0, (0, 1))
    rng = np.random.default_rng(0)
    out = {float(x): naive_float_piecewise(np.full(200, x), 1.0, 0.0, 1.0, rng) for x in EDGES}
    with pytest.raises(PrivacyViolation, match="outside the input-free alphabet"):
        check_input_free_alphabet(out, m.labels)


def test_alphabet_check_rejects_codes_relative_to_the_input():
    """A mutant that reports the cell relative to the window start (``j - s``): its codes are integers, but
    which codes occur depends on the input."""
    m = ldp.Piecewise(1.0, (0, 1), n_cells=16)
    out = outputs_by_input(m, EDGES, 4000)
    starts = {x: int(m.window_starts([x])[0][0]) for x in out}
    mutant = {x: codes.astype(np.int64) - starts[x] for x, codes in out.items()}
    check_input_free_alphabet(out, np.arange(m.n_cells), every_output=True)  # the honest codes pass
    with pytest.raises(PrivacyViolation, match="outside the input-free alphabet"):
        check_input_free_alphabet(mutant, np.arange(m.n_cells))


def test_alphabet_check_rejects_an_input_dependent_support():
    """A mutant Duchi that never reports −C for the top input: all its codes are in the alphabet, but the
    top input does not reach every output."""
    m = ldp.Duchi(1.0, (0, 1))
    out = outputs_by_input(m, EDGES, 4000)
    out[1.0] = np.ones_like(out[1.0])
    with pytest.raises(PrivacyViolation, match="depends on the input"):
        check_input_free_alphabet(out, np.arange(m.n_cells, dtype=np.uint64), every_output=True)
