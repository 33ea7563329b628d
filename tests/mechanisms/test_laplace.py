"""The Laplace mean oracle on a grid (DESIGN.md R1, R8; TESTING.md D3): exact ε, kernel = plan, no float leak.

Every structural fact the privacy argument uses is verified here in exact integers, on the kernel's own
table, rather than trusted; brute-force enumeration of ``P(y | i)`` on small grids cross-checks the
structural reduction; and each checker rejects a planted bug.
"""

import math
import time
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum._kernels import client_numeric
from ldpnum._kernels._jit import launch
from ldpnum.plans import exp_lower
from ldpnum.mechanisms.laplace import (MIN_EPSILON, TWO106, LaplacePlan, _ratio, build_plan, clamp_cells,
                                      grid_cells, laplace_plan)

import naive
from conftest import EPSILONS, adversarial_values
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_input_free_alphabet, check_kernel_matches

SMALL = [(2.0, 4), (0.5, 2), (8.0, 8), (20.0, 16), (1.0, 2), (0.05, 2)]


def kernel_weights(plan):
    """``W(z)`` for ``z = -Z..Z`` read back from the kernel's cumulative table (hi/lo halves)."""
    c = plan.table_values()
    return [c[0]] + [c[j] - c[j - 1] for j in range(1, len(c))]


def brute_force_rows(plan):
    """``P(code | i)`` for every grid input, by enumerating every noise value of the kernel's table."""
    g, t, z_max = plan.g, plan.t, plan.z_max
    w = kernel_weights(plan)
    rows = []
    for i in range(g + 1):
        row = defaultdict(int)
        for j, wz in enumerate(w):
            y = min(max(i + j - z_max, -t), g + t)
            row[y + t] += wz
        rows.append({c: Fraction(v, TWO106) for c, v in row.items()})
    return rows


# --- (a) exact epsilon, structurally, on the shipped plans ------------------------------------------------

@pytest.mark.parametrize("epsilon", EPSILONS)
def test_plan_exact_and_tight(epsilon):
    plan = ldp.Laplace(epsilon, (0, 1)).plan
    g, t, z_max = plan.g, plan.t, plan.z_max
    e = exp_lower(epsilon)
    assert g & (g - 1) == 0 and g >= 2 and 2 * z_max + 1 <= 2**18
    assert t >= 40 * g / epsilon
    # the kernel's table: increasing, halves below 2**53, ends at exactly 2**106, symmetric weights = plan's
    assert int(plan.table_lo.max()) < 2**53 and int(plan.table_hi.max()) <= 2**53
    w = kernel_weights(plan)
    assert sum(w) == TWO106 == plan.total
    assert w == list(plan.weights[:0:-1]) + list(plan.weights)
    assert w == w[::-1]
    assert min(w) > 0
    # R^G <= E, and the consecutive-ratio property W(a+1) <= W(a) <= R W(a+1) on the interior
    assert plan.ratio**g <= e
    half = plan.weights
    assert all(half[a + 1] <= half[a] and (half[a] << plan.k) <= half[a + 1] * plan.p
               for a in range(z_max - 1))
    assert plan.consecutive_ratios_ok()
    # interior window ratio W(a)/W(a+G): at most E and tight
    window = plan.window_ratio()
    check_exact_epsilon([], epsilon, ratio=window)
    assert window >= Fraction(half[0], half[g])  # reached at the centre (y = G vs inputs G and 0)
    # clamp geometry: z = ±Z always lands in an atom, |z| < Z never needs W(±Z)
    for i in range(g + 1):
        assert i - z_max <= -t and i + z_max >= g + t
    # atoms for every input, exactly
    lows = [half[z_max] + sum(half[t + i:z_max]) for i in range(g + 1)]
    highs = [half[z_max] + sum(half[t + g - i:z_max]) for i in range(g + 1)]
    assert [plan.atom_weights(i) for i in range(g + 1)] == list(zip(lows, highs))
    for col in (lows, highs):
        assert Fraction(max(col), min(col)) <= e
    # the structural maximum over all outputs and inputs
    check_exact_epsilon([], epsilon, ratio=plan.max_ratio())
    # bias of the clamp: exact, below 1e-12 of the range
    assert plan.max_bias / g < 1e-12


@pytest.mark.parametrize("epsilon,g", SMALL)
def test_brute_force_small_grids(epsilon, g):
    """Full enumeration of P(y | i) from the kernel's table agrees with the plan and the structural check."""
    plan = laplace_plan(epsilon, g)
    rows = brute_force_rows(plan)
    worst = check_exact_epsilon(rows, epsilon)
    assert worst == plan.max_ratio()
    for i, row in enumerate(rows):
        assert row == {c: p for c, p in plan.exact_probabilities(i).items() if p}
        assert set(row) == set(range(plan.n_cells))  # every input reaches every output
        mean = sum(p * (c - plan.t) for c, p in row.items())
        second = sum(p * (c - plan.t) ** 2 for c, p in row.items())
        assert mean == plan.exact_mean(i) and second == plan.exact_second_moment(i)
    assert plan.max_bias == float(max(abs(plan.exact_mean(i) - i) for i in range(g + 1)))


def test_brute_force_shipped_plan_epsilon_20():
    """All 257 inputs × 1281 outputs of the shipped ε = 20 plan, enumerated in integers."""
    plan = ldp.Laplace(20.0, (0, 1)).plan
    e = exp_lower(20.0)
    w = kernel_weights(plan)
    g, t, z_max = plan.g, plan.t, plan.z_max
    cols_max = [0] * plan.n_cells
    cols_min = [None] * plan.n_cells
    for i in range(g + 1):
        row = [0] * plan.n_cells
        for j, wz in enumerate(w):
            row[min(max(i + j - z_max, -t), g + t) + t] += wz
        assert sum(row) == TWO106
        for c, v in enumerate(row):
            cols_max[c] = max(cols_max[c], v)
            cols_min[c] = v if cols_min[c] is None else min(cols_min[c], v)
    worst = max(Fraction(hi, lo) for hi, lo in zip(cols_max, cols_min))
    assert worst == plan.max_ratio()
    assert worst <= e and worst >= Fraction(math.exp(20.0)) * (1 - Fraction(1, 10**12))


# --- negative controls: the checkers reject planted bugs --------------------------------------------------

@pytest.mark.parametrize("epsilon", [0.5, 1.0, 16.0])
def test_rejects_inflated_epsilon(epsilon):
    """M5: a table built for 1.25 ε."""
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([], epsilon, ratio=laplace_plan(1.25 * epsilon).max_ratio())
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(brute_force_rows(laplace_plan(1.25 * 2.0, 4)), 2.0)


@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 20.0])
def test_rejects_ratio_just_above_the_bound(epsilon):
    """A table whose R is one step (2**-64) above the largest R with R**G <= E."""
    g = grid_cells(epsilon)
    p = _ratio(epsilon, g)
    assert Fraction(p + 1, 2**64) ** g > exp_lower(epsilon)
    bad = build_plan(epsilon, g, clamp_cells(epsilon, g), p + 1)
    assert bad.window_ratio() > exp_lower(epsilon)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([], epsilon, ratio=bad.window_ratio())


def test_rejects_half_epsilon_formula():
    """M6: e^{ε/2} where e^ε belongs: private, but the stated guarantee is not tight."""
    with pytest.raises(PrivacyViolation, match="not tight"):
        check_exact_epsilon([], 1.0, ratio=laplace_plan(0.5).max_ratio())
    with pytest.raises(PrivacyViolation, match="not tight"):
        check_exact_epsilon(brute_force_rows(laplace_plan(1.0, 4)), 2.0)


def _moved_atoms(plan, atom):
    """The plan's weights with ``W(±Z) = atom`` and the difference put into ``W(0)`` (the sum stays 2**106).

    Raising ``W(0)`` may itself break ``W(0) <= R W(1)``; the tests below look at the atoms' own column."""
    w = list(plan.weights)
    w[0] += 2 * (w[-1] - atom)
    w[-1] = atom
    return LaplacePlan.from_weights(plan.epsilon, plan.g, plan.t, plan.p, plan.k, w)


@pytest.mark.parametrize("epsilon,g", [(2.0, 4), (20.0, 16)])
def test_rejects_zero_atoms(epsilon, g):
    """No slack into the atoms: the atom y = -T is impossible for i = G but not for i = 0."""
    bad = _moved_atoms(laplace_plan(epsilon, g), 0)
    assert bad.total == TWO106
    rows = brute_force_rows(bad)
    assert rows[g].get(0, 0) == 0 < rows[0][0]
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, epsilon)
    assert bad.atom_ratio() == math.inf


@pytest.mark.parametrize("epsilon,g", [(2.0, 4), (20.0, 16), (1.0, 256)])
def test_rejects_atoms_below_the_tail(epsilon, g):
    """Atoms holding less than the geometric tail needs: the atom ratio exceeds E."""
    plan = laplace_plan(epsilon, g)
    e = exp_lower(epsilon)
    tail = sum(plan.weights[plan.t:plan.z_max])
    need = math.ceil(tail / (e - 1))
    assert plan.weights[-1] >= need
    bad = _moved_atoms(plan, need // 2)
    assert bad.atom_ratio() > e
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([], epsilon, ratio=bad.atom_ratio())
    if g <= 16:
        rows = brute_force_rows(bad)
        assert max(r[0] for r in rows) > e * min(r[0] for r in rows)  # the atom's own column
        with pytest.raises(PrivacyViolation, match="exceeds"):
            check_exact_epsilon(rows, epsilon)


# --- (b) the kernel samples what the plan says ------------------------------------------------------------

@pytest.mark.parametrize("epsilon", [0.1, 1.0, 20.0])
def test_kernel_matches_plan(epsilon):
    m = ldp.Laplace(epsilon, (0, 10))
    for i, x in enumerate([0.0, 3.0, 10.0]):
        r = m.privatize(np.full(300_000, x), rng=2000 + i)
        check_kernel_matches(m.aggregate(r).counts, m.output_probabilities(x))


def test_twin_checker_rejects_inflated_epsilon():
    """M5 sampled: noise for 1.25 ε does not match the plan for ε (compared on the same y grid)."""
    honest, mutant = ldp.Laplace(1.0, (0, 10)), ldp.Laplace(1.25, (0, 10))
    assert honest.grid == mutant.grid
    y = mutant.privatize(np.full(300_000, 3.0), rng=7).codes.astype(np.int64) - mutant.plan.t
    counts = np.bincount(y + honest.plan.t, minlength=honest.n_cells)
    with pytest.raises(PrivacyViolation):
        check_kernel_matches(counts, honest.output_probabilities(3.0))


# --- kernel against the naive reference, and at every table boundary --------------------------------------

def words_for(seed, n_words):
    return np.random.default_rng(seed).bit_generator.random_raw(n_words)


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 20.0])
def test_kernel_matches_naive(epsilon):
    bounds = (-3.0, 11.0)
    m = ldp.Laplace(epsilon, bounds)
    x = adversarial_values(bounds, n_random=3000)
    r = m.privatize(x, rng=21)
    p = m.plan
    ref = naive.laplace(x, *bounds, p.g, p.t, p.weights, words_for(21, 3 * x.size))
    np.testing.assert_array_equal(r.codes, ref)
    assert r.codes.dtype == ldp.reports.code_dtype(m.n_cells)


def test_kernel_groups_of_four_and_remainders():
    """The kernel searches four records in lockstep, the rest one by one: every n mod 4 agrees with naive."""
    m = ldp.Laplace(4.0, (0, 1))
    p = m.plan
    x = np.random.default_rng(3).random(11)
    for n in range(12):
        r = m.privatize(x[:n], rng=n)
        np.testing.assert_array_equal(r.codes, naive.laplace(x[:n], 0.0, 1.0, p.g, p.t, p.weights,
                                                             words_for(n, 3 * n)).astype(r.codes.dtype))


@pytest.mark.parametrize("epsilon,g", [(20.0, None), (2.0, 4)])
def test_kernel_inverts_the_table_at_every_boundary(epsilon, g):
    """For every table entry j, U = C(j) - 1 gives z = j - Z and U = C(j) gives z = j + 1 - Z (exactly).

    Inputs at the bounds fix i = 0 (z ≥ -T readable from the code) or i = G (z ≤ T readable); the 11 low
    bits of each word, which the kernel drops, are random."""
    plan = laplace_plan(epsilon, g)
    g, t, z_max = plan.g, plan.t, plan.z_max
    c = plan.table_values()
    us, zs = [0, TWO106 - 1], [-z_max, z_max]
    for j, cj in enumerate(c[:-1]):
        us += [cj - 1, cj]
        zs += [j - z_max, j + 1 - z_max]
    n = len(us)
    noise = np.random.default_rng(0).integers(0, 2**11, (2, n), dtype=np.uint64)
    w = np.empty(3 * n, dtype=np.uint64)
    w[0::3] = np.random.default_rng(1).bit_generator.random_raw(n)
    w[1::3] = np.array([(u >> 53) << 11 for u in us], dtype=np.uint64) | noise[0]
    w[2::3] = np.array([(u & (2**53 - 1)) << 11 for u in us], dtype=np.uint64) | noise[1]
    zs = np.array(zs)
    for x, i in ((0.0, 0), (1.0, g)):
        values = np.full(n, x)
        values.flags.writeable = False
        out = np.empty(n, dtype=ldp.reports.code_dtype(plan.n_cells))
        launch(client_numeric.laplace_kernel, values, 0.0, 1.0, g, t, plan.table_hi, plan.table_lo, w, out)
        np.testing.assert_array_equal(out, np.clip(i + zs, -t, g + t) + t)
        np.testing.assert_array_equal(out, naive.laplace(values, 0.0, 1.0, g, t, plan.weights, w))
        readable = (i + zs > -t) & (i + zs < g + t)
        assert readable.sum() > n // 2


def test_three_words_per_record():
    m = ldp.Laplace(1.0, (0, 1))
    assert m.words_per_record == 3
    g = np.random.default_rng(5)
    m.privatize(np.random.default_rng(0).random(1001), rng=g)
    after = np.random.default_rng(5).bit_generator.random_raw(3 * 1001 + 1)[-1]
    assert g.bit_generator.random_raw(1)[0] == after


# --- (c) the output alphabet does not depend on the input -------------------------------------------------

EDGES = adversarial_values((0, 1), n_random=3)


@pytest.mark.parametrize("epsilon", [0.5, 20.0])
def test_output_alphabet_is_input_free(epsilon):
    """C1: each adversarial input's reports are codes of the plan's alphabet ``0..n_cells-1``."""
    m = ldp.Laplace(epsilon, (0, 1))
    out = {float(x): m.privatize(np.full(2000, x), rng=5 + i).codes for i, x in enumerate(EDGES)}
    assert all(o.dtype.kind == "u" for o in out.values())
    check_input_free_alphabet(out, np.arange(m.n_cells, dtype=np.uint64))
    # the alphabet is a function of (ε, bounds) only: the same for any other data
    other = ldp.Laplace(epsilon, (0, 1))
    np.testing.assert_array_equal(other.labels.view(np.uint64), m.labels.view(np.uint64))


def test_alphabet_check_rejects_naive_float_laplace():
    """M4: the textbook float ``x + Lap`` emits values outside any fixed alphabet."""
    m = ldp.Laplace(1.0, (0, 1))
    rng = np.random.default_rng(0)
    out = {float(x): naive.naive_float_laplace(np.full(200, x), 1.0, 0.0, 1.0, rng) for x in EDGES}
    with pytest.raises(PrivacyViolation, match="outside the input-free alphabet"):
        check_input_free_alphabet(out, m.labels)


# --- (d) moments against closed forms ---------------------------------------------------------------------

@pytest.mark.parametrize("epsilon", EPSILONS)
def test_variance_closed_forms(epsilon):
    bounds = (-2.0, 7.0)
    span = bounds[1] - bounds[0]
    m = ldp.Laplace(epsilon, bounds)
    plan = m.plan
    r = 1 / float(plan.ratio)
    discrete = 2 * r / (1 - r) ** 2  # Var of the (untruncated) discrete Laplace with P(z) ∝ r^|z|
    assert plan.noise_variance == pytest.approx(discrete, rel=1e-9)
    h = span / plan.g
    for f in (0.0, 0.25, 0.5):
        x = bounds[0] + (100 % plan.g + f) * h
        assert m.variance(x) == pytest.approx(h * h * (discrete + f * (1 - f)), rel=1e-9)
    # textbook 2(range/ε)²: the grid's discreteness costs a relative (ε/G)²/12
    assert m.variance(bounds[0]) == pytest.approx(2 * (span / epsilon) ** 2, rel=(epsilon / plan.g) ** 2 / 6)
    assert m.worst_case_variance == pytest.approx(h * h * (discrete + 0.25), rel=1e-9)
    assert m.max_bias < 1e-12 * span


def test_estimates_and_labels():
    m = ldp.Laplace(1.0, (10.0, 20.0))
    t, g = m.plan.t, m.grid
    np.testing.assert_array_equal(m.code_estimates, m.labels)
    assert m.labels[t] == 10.0 and m.labels[t + g] == 20.0
    assert m.labels[0] == 10.0 - 10.0 * t / g


# --- parameters and plan building -------------------------------------------------------------------------

def test_grid_and_epsilon_floor():
    assert grid_cells(1.0) == 256 and grid_cells(0.1) == 256 and grid_cells(0.05) == 128
    assert grid_cells(1e-3) == 2
    ldp.Laplace(MIN_EPSILON, (0, 1))
    with pytest.raises(ValueError, match="too small for ldpnum's Laplace"):
        ldp.Laplace(math.nextafter(MIN_EPSILON, 0.0), (0, 1))
    assert ldp.Laplace(1.0, (0, 1)).spec == ldp.Laplace(1.0, (0, 1)).spec != ldp.Laplace(1.0, (0, 2)).spec


def test_plan_building_is_fast():
    """The agreed budget is 0.3 s for any ε; this guard allows 5x for a loaded CI machine."""
    for epsilon in (MIN_EPSILON, 0.01, 0.1, 1.0, 20.0):
        t0 = time.perf_counter()
        laplace_plan(epsilon)
        assert time.perf_counter() - t0 < 1.5
