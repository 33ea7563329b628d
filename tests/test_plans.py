"""The shared plan arithmetic (ldpnum/plans.py): one implementation that every family uses."""

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import plans
from ldpnum.frequency import grr, hashing, subset
from ldpnum.heavy import padding, prefix
from ldpnum.mechanisms import piecewise
from ldpnum.plans import TWO48, uniform_count
from ldpnum.vectors import sampled, sqkr


def test_families_use_the_shared_plans_not_copies():
    for module in (grr, hashing, padding, prefix, sqkr):
        assert module.GRRPlan is plans.GRRPlan and module.grr_keep_cells is plans.grr_keep_cells
    assert padding.lie_shift is plans.lie_shift
    assert subset.floyd_distribution is plans.floyd_distribution
    assert sampled.floyd_distribution is plans.floyd_distribution
    assert piecewise.grid_size is plans.grid_size  # still importable where it was


def test_grr_plan_is_the_plan_of_grr():
    m = ldp.GRR(1.0, k=5)
    assert m.plan == plans.GRRPlan(5, *plans.grr_keep_cells(1.0, 5))
    assert repr(m.plan).startswith("GRRPlan(k=5, ")


def test_grr_keep_cells_is_memoized_and_equal_to_a_fresh_bisection():
    """The plan is cached per ``(epsilon, k)`` (a hierarchical histogram's constructor asks ~40 times); the cached
    answer is the uncached function's, the argument kinds the callers pass share one entry, and a refusal (ε too
    small for ``k``) is raised again, not cached."""
    fresh = plans.grr_keep_cells.__wrapped__
    for eps, k in [(1e-3, 2), (0.5, 3), (1.0, 5), (2.0, 64), (8.0, 1024), (20.0, 65536)]:
        assert plans.grr_keep_cells(eps, k) == fresh(eps, k)
    assert plans.grr_keep_cells(np.float64(1.0), np.int64(5)) == fresh(1.0, 5)
    before = plans.grr_keep_cells.cache_info()
    plans.grr_keep_cells(1.0, 5)
    assert plans.grr_keep_cells.cache_info().hits == before.hits + 1
    for _ in range(2):
        with pytest.raises(ValueError, match="too small for GRR"):
            plans.grr_keep_cells(1e-18, 5)


def test_floyd_distribution_sums_to_one_over_all_subsets():
    dist = plans.floyd_distribution(5, 2)
    assert len(dist) == 10 and sum(dist.values()) == 1
    assert sampled.subset_probabilities(5, 2)[(0, 1)] == dist[0b11]


@pytest.mark.parametrize("mechanism", [ldp.Piecewise(1.0, (0, 1)), ldp.SquareWave(1.0, (0, 1)),
                                       ldp.GeneralWave(1.0, (0, 1), shape="triangle")])
def test_window_estimates_are_the_window_mechanisms_estimates(mechanism):
    u_hat, p_in = plans.window_estimates(mechanism.plan)
    assert np.array_equal(mechanism.code_estimates, u_hat)  # bounds (0, 1): data units are unit units
    assert p_in == mechanism.plan.t_in / plans.TWO53
    assert (mechanism.plan.n_cells, mechanism.plan.m) == plans.grid_size(
        mechanism.plan.m / mechanism.plan.n_cells, mechanism.plan.n_cells)


def test_window_estimates_are_unbiased_for_every_window_start():
    plan = ldp.GeneralWave(2.0, (0, 1), shape="trapezoid", n_cells=64).plan
    u_hat, _ = plans.window_estimates(plan)
    for s in (0, 7, plan.n_positions):
        probs = np.array([float(p) for p in plan.exact_probabilities(s).values()])
        assert probs @ u_hat == pytest.approx(s / plan.n_positions, abs=1e-9)


def test_uniform_count_helper_matches_kernel_mapping():
    m = 7
    assert sum(uniform_count(j, m) for j in range(m)) == TWO48
