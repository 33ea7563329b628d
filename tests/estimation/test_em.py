"""EM / EMS for the window randomizer: exact transition structure, structured products, iterations.

Everything structured is checked against the dense, independently built references in ``tests/naive.py``.
"""

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum._kernels import server_em
from ldpnum.estimation import (EMResult, WindowTransition, expectation_maximization, window_transition,
                               window_transition_from_plan)
from ldpnum.estimation import em as em_module
from ldpnum.estimation.em import joint_expectation_maximization
from ldpnum.plans import TWO53, window_plan

import naive

EPSILONS = [0.5, 1.0, 2.0, 4.0]


def p_in_for(epsilon, n_cells, m):
    """The window probability of the box plan at this ε (the same integer thresholds as the mechanisms)."""
    return Fraction(window_plan(epsilon, n_cells, m).t_in, TWO53)


def shaped_delta(m, p_in, n_cells):
    """A non-box window (triangle-like excess probabilities) and the matching ``window`` argument."""
    h = 1.0 - np.abs((np.arange(m) + 0.5) / m * 2 - 1)
    delta = float(p_in) * h / h.sum() * 0.9
    p_lo = (1 - delta.sum()) / n_cells
    return delta, delta + p_lo


# (n_cells, m, n_bins): windows from 1 cell to n_cells - 1, buckets finer and coarser than window starts
SIZES = [(64, 20, 16), (64, 1, 64), (64, 63, 7), (100, 37, 1), (128, 40, 48), (256, 61, 64), (256, 200, 33)]


# --- transition structure -----------------------------------------------------------------------------------

@pytest.mark.parametrize("n_cells,m,n_bins", SIZES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_box_transition_matches_brute_force(n_cells, m, n_bins, epsilon):
    p_in = p_in_for(epsilon, n_cells, m)
    t = window_transition(n_cells, m, n_bins, p_in=p_in)
    ref = naive.window_transition_dense(n_cells, m, float(p_in), n_bins)
    dense = t.dense()
    assert dense.shape == (n_cells, n_bins)
    np.testing.assert_allclose(dense, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dense.sum(axis=0), 1.0, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.add.reduceat(t.weight, t.indptr[:-1]), 1.0, rtol=0, atol=1e-14)
    assert t.is_box


@pytest.mark.parametrize("n_cells,m,n_bins", SIZES)
def test_general_window_matches_brute_force(n_cells, m, n_bins):
    p_in = p_in_for(1.0, n_cells, m)
    delta, window = shaped_delta(m, p_in, n_cells)
    t = window_transition(n_cells, m, n_bins, window=window)
    ref = naive.window_transition_dense(n_cells, m, None, n_bins, delta=delta)
    np.testing.assert_allclose(t.dense(), ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.dense().sum(axis=0), 1.0, rtol=0, atol=1e-13)
    assert (m == 1) == t.is_box  # a one-cell window is a box


def test_band_weights_are_the_exact_integrals_correctly_rounded():
    """Each weight is float((H(b - k) - H(a - k)) / (b - a)), the closed form evaluated in exact rationals."""
    def hat_integral(x):  # H(x) = ∫_{-inf}^x max(0, 1 - |t|) dt, exact on Fractions
        if x <= -1:
            return Fraction(0)
        if x <= 0:
            return (1 + x) ** 2 / 2
        if x <= 1:
            return 1 - (1 - x) ** 2 / 2
        return Fraction(1)

    for n_cells, m, d in [(30, 7, 9), (20, 3, 40), (17, 16, 5), (50, 13, 50)]:
        p = n_cells - m
        t = window_transition(n_cells, m, d, p_in=0.5)
        for i in range(d):
            a, b = Fraction(i * p, d), Fraction((i + 1) * p, d)
            row = range(t.indptr[i], t.indptr[i + 1])
            ks = t.s_index[t.indptr[i]:t.indptr[i + 1]]
            assert list(ks) == list(range(math.floor(a), math.ceil(b) + 1))  # the band: floor(a_i)..ceil(b_i)
            for e, k in zip(row, ks):
                exact = (hat_integral(b - k) - hat_integral(a - k)) / (b - a)
                assert t.weight[e] == float(exact), (n_cells, m, d, i, k)
            total = sum(hat_integral(b - k) - hat_integral(a - k) for k in range(-2, p + 3)) / (b - a)
            assert total == 1


def test_band_size_is_linear():
    t = window_transition(1024, 300, 1024, p_in=0.6)
    assert t.s_index.size <= (1024 - 300) + 3 * 1024
    assert t.indptr.shape == (1025,)
    for arr in (t.indptr, t.s_index, t.weight):
        assert not arr.flags.writeable


@pytest.mark.parametrize("shape", ["square", "triangle", "trapezoid"])
def test_transition_from_plan_agrees_with_the_plans_exact_probabilities(shape):
    """Up to the documented 48-bit imperfection of uniform choices (relative <= n_cells / 2**48)."""
    mech = ldp.GeneralWave(1.0, (0, 1), shape=shape, n_cells=64)
    plan = mech.plan
    d = 16
    t = window_transition_from_plan(plan, d)
    assert t.is_box == (shape == "square")
    by_start = np.array([[float(v) for _, v in sorted(plan.exact_probabilities(s).items())]
                         for s in range(plan.n_cells - plan.m + 1)]).T      # (n_cells, n_positions)
    expected = by_start @ t.window_start_matrix()
    np.testing.assert_allclose(t.dense(), expected, rtol=64 / 2**48 * 4, atol=0)


def test_piecewise_plan_transition():
    mech = ldp.Piecewise(1.0, (0, 1), n_cells=128)
    t = window_transition_from_plan(mech.plan, 32)
    p_in = mech.plan.t_in / TWO53
    assert t.p_hi == pytest.approx(p_in / mech.plan.m, rel=1e-15)
    assert t.p_lo == pytest.approx((1 - p_in) / (128 - mech.plan.m), rel=1e-15)
    ref = naive.window_transition_dense(128, mech.plan.m, p_in, 32)
    np.testing.assert_allclose(t.dense(), ref, rtol=0, atol=1e-12)


def test_constant_window_becomes_the_box():
    p_in = 0.7
    w = np.full(10, p_in / 10)
    box = window_transition(50, 10, 20, p_in=p_in)
    general = window_transition(50, 10, 20, window=w)
    assert general.is_box
    np.testing.assert_allclose(general.dense(), box.dense(), rtol=0, atol=1e-15)


# --- products -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_cells,m,n_bins", SIZES)
@pytest.mark.parametrize("box", [True, False])
def test_forward_backward_match_dense(n_cells, m, n_bins, box):
    p_in = p_in_for(2.0, n_cells, m)
    if box:
        t = window_transition(n_cells, m, n_bins, p_in=p_in)
    else:
        t = window_transition(n_cells, m, n_bins, window=shaped_delta(m, p_in, n_cells)[1])
    dense = t.dense()
    rng = np.random.default_rng(n_cells * 1000 + m)
    for _ in range(3):
        x = rng.dirichlet(np.ones(n_bins))
        r = rng.random(n_cells) * 50
        np.testing.assert_allclose(t.forward(x), dense @ x, rtol=1e-12, atol=0)
        np.testing.assert_allclose(t.backward(r), dense.T @ r, rtol=1e-12, atol=0)
    # unnormalised vectors too (the products are linear)
    x = rng.random(n_bins) * 7
    np.testing.assert_allclose(t.forward(x), dense @ x, rtol=1e-12, atol=0)


def test_products_accept_read_only_inputs():
    t = window_transition(64, 20, 16, p_in=0.6)
    x = np.full(16, 1 / 16)
    x.flags.writeable = False
    r = np.ones(64)
    r.flags.writeable = False
    np.testing.assert_allclose(t.forward(x).sum(), 1.0, atol=1e-14)
    np.testing.assert_allclose(t.backward(r), 1.0, atol=1e-14)  # columns of M sum to 1


# --- EM and EMS against the dense reference -----------------------------------------------------------------

def _case(n_cells, m, n_bins, epsilon, box, seed, n=20_000):
    p_in = p_in_for(epsilon, n_cells, m)
    if box:
        t = window_transition(n_cells, m, n_bins, p_in=p_in)
        ref = naive.window_transition_dense(n_cells, m, float(p_in), n_bins)
    else:
        delta, window = shaped_delta(m, p_in, n_cells)
        t = window_transition(n_cells, m, n_bins, window=window)
        ref = naive.window_transition_dense(n_cells, m, None, n_bins, delta=delta)
    rng = np.random.default_rng(seed)
    x_true = rng.dirichlet(np.full(n_bins, 0.7))
    counts = rng.multinomial(n, ref @ x_true)
    return t, ref, counts


EM_CASES = [(64, 20, 16, 0.5, True), (64, 20, 16, 4.0, False), (128, 40, 32, 1.0, True),
            (128, 40, 32, 2.0, False), (256, 61, 64, 2.0, True), (256, 100, 48, 1.0, False),
            (200, 57, 64, 4.0, True)]


@pytest.mark.parametrize("n_cells,m,n_bins,epsilon,box", EM_CASES)
@pytest.mark.parametrize("method", ["ems", "em"])
def test_em_matches_dense_reference(n_cells, m, n_bins, epsilon, box, method):
    t, ref, counts = _case(n_cells, m, n_bins, epsilon, box, seed=n_cells + m)
    max_iter = 300
    for tol, atol in ((1e-9, 0.0), (None, 1e-3)):
        got = expectation_maximization(counts, t, method=method, max_iter=max_iter, tol=tol)
        rtol = 0.0 if tol is None else tol
        x, n_iter, converged, loglik = naive.em_dense(counts, ref, method, max_iter, rtol, atol)
        assert isinstance(got, EMResult) and got.method == method
        assert (got.n_iter, got.converged) == (n_iter, converged)
        np.testing.assert_allclose(got.x, x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(got.loglik, loglik, rtol=1e-12, atol=0)
        assert got.loglik.shape == (got.n_iter + 1,)
        assert got.x.sum() == pytest.approx(1.0, abs=1e-14)
        assert got.x.min() >= 0


@pytest.mark.parametrize("n_cells,m,n_bins,epsilon,box", EM_CASES[:4])
def test_em_log_likelihood_is_non_decreasing(n_cells, m, n_bins, epsilon, box):
    t, _, counts = _case(n_cells, m, n_bins, epsilon, box, seed=7)
    res = expectation_maximization(counts, t, method="em", max_iter=2000, tol=0.0)
    steps = np.diff(res.loglik)
    assert steps.min() >= -1e-12 * abs(res.loglik[0])
    assert res.loglik[-1] > res.loglik[0]


def test_ems_ends_above_the_uniform_start():
    t, _, counts = _case(128, 40, 32, 1.0, True, seed=3)
    res = expectation_maximization(counts, t, method="ems")
    assert res.loglik[-1] > res.loglik[0]


def test_convergence_flags():
    t, _, counts = _case(128, 40, 32, 2.0, True, seed=11)
    capped = expectation_maximization(counts, t, method="ems", max_iter=5, tol=0.0)
    assert (capped.n_iter, capped.converged, capped.loglik.shape) == (5, False, (6,))
    loose = expectation_maximization(counts, t, method="ems", tol=1e-3)
    assert loose.converged and loose.n_iter < 20
    default = expectation_maximization(counts, t)
    assert default.converged and default.method == "ems"
    assert abs(default.loglik[-1] - default.loglik[-2]) < 1e-3       # the default rule: < 1e-3 nats
    assert all(abs(b - a) >= 1e-3 for a, b in zip(default.loglik[:-2], default.loglik[1:-1]))
    # one bucket: nothing to estimate; the first iteration changes nothing
    one = expectation_maximization(counts, window_transition(128, 40, 1, p_in=0.5))
    assert (one.n_iter, one.converged) == (1, True)
    np.testing.assert_array_equal(one.x, [1.0])


def test_results_are_read_only_and_inputs_untouched():
    t, _, counts = _case(64, 20, 16, 1.0, True, seed=5)
    counts.flags.writeable = False
    before = counts.copy()
    res = expectation_maximization(counts, t)
    np.testing.assert_array_equal(counts, before)
    assert not res.x.flags.writeable and not res.loglik.flags.writeable
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.n_iter = 3


def test_counts_dtypes_give_the_same_estimate():
    t, _, counts = _case(64, 20, 16, 1.0, True, seed=5)
    base = expectation_maximization(counts.astype(np.int64), t).x
    for dtype in (np.int32, np.uint16, np.float64, np.float32):
        np.testing.assert_array_equal(expectation_maximization(counts.astype(dtype), t).x, base)


def test_zero_count_cells_are_skipped():
    t, ref, counts = _case(64, 20, 16, 2.0, True, seed=9)
    counts = counts.copy()
    counts[::3] = 0
    got = expectation_maximization(counts, t, method="em", max_iter=50, tol=0.0)
    x, _, _, loglik = naive.em_dense(counts, ref, "em", 50, 0.0)
    np.testing.assert_allclose(got.x, x, atol=1e-10)
    np.testing.assert_allclose(got.loglik, loglik, rtol=1e-12)


# --- SQUAREM ------------------------------------------------------------------------------------------------

def _em_gradient(ref, counts, x):
    """``z_i = (M^T (n / M x))_i / N``: the EM fixed point (the MLE) has ``z_i = 1`` where ``x_i > 0``, ``<= 1``
    elsewhere (the Kuhn-Tucker conditions on the simplex); EM's step is ``x_i <- x_i z_i``."""
    return ref.T @ (counts / (ref @ x)) / counts.sum()


@pytest.mark.parametrize("n_cells,m,n_bins,epsilon,box", EM_CASES)
def test_squarem_em_reaches_the_likelihood_maximum(n_cells, m, n_bins, epsilon, box):
    """Run to the fixed point (relative tol 1e-15), SQUAREM's EM meets the Kuhn-Tucker conditions of the MLE
    against the dense reference matrix: measured max(z) - 1 <= 1.1e-7 and |z_i - 1| <= 5.8e-6 where x_i > 1e-4,
    in 582-9,529 steps where the plain iteration needs 77,000 to more than 200,000. Negative control: the plain
    iteration stopped by the default 1e-3-nat rule is visibly short of it (max(z) - 1 >= 2.2e-4 measured)."""
    t, ref, counts = _case(n_cells, m, n_bins, epsilon, box, seed=n_cells + m)
    res = expectation_maximization(counts, t, method="em", max_iter=50_000, tol=1e-15, accelerate=True)
    z = _em_gradient(ref, counts, res.x)
    assert z.max() - 1 < 1e-6
    assert np.abs(z - 1)[res.x > 1e-4].max() < 5e-5
    early = expectation_maximization(counts, t, method="em")
    assert _em_gradient(ref, counts, early.x).max() - 1 > 1e-5
    assert res.x.min() >= 0 and res.x.sum() == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("n_cells,m,n_bins,epsilon,box", EM_CASES)
def test_squarem_ems_reaches_the_plain_fixed_point(n_cells, m, n_bins, epsilon, box):
    """EMS has no likelihood to maximise; its fixed point is the map's. Both iterations run to relative tol 1e-15
    land on the same point (measured max |difference| <= 7.3e-10 in L1), and the plain one is the dense NumPy
    reference's, checked above."""
    t, ref, counts = _case(n_cells, m, n_bins, epsilon, box, seed=n_cells + m)
    plain = expectation_maximization(counts, t, method="ems", max_iter=20_000, tol=1e-15)
    fast = expectation_maximization(counts, t, method="ems", max_iter=20_000, tol=1e-15, accelerate=True)
    assert plain.converged and fast.converged and fast.n_iter < plain.n_iter
    np.testing.assert_allclose(fast.x, plain.x, rtol=0, atol=1e-8)


@pytest.mark.parametrize("n_cells,m,n_bins,epsilon,box", EM_CASES)
@pytest.mark.parametrize("method", ["ems", "em"])
def test_squarem_stops_where_the_plain_iteration_stops(n_cells, m, n_bins, epsilon, box, method):
    """With the default rule (a step gaining < 1e-3 nats) SQUAREM stops in fewer steps (measured 2-40x fewer),
    no lower in likelihood than the plain iteration (measured 1.4e-3 to 0.25 nats higher), and, for EMS, as
    close to the fixed point (measured L1 distance at most 1.9x the plain one's, 3.7e-4 to 1.3e-3)."""
    t, _, counts = _case(n_cells, m, n_bins, epsilon, box, seed=n_cells + m)
    plain = expectation_maximization(counts, t, method=method)
    fast = expectation_maximization(counts, t, method=method, accelerate=True)
    assert fast.converged and fast.n_iter < plain.n_iter
    one_more = expectation_maximization(counts, t, method=method, max_iter=1, tol=0.0, start=fast.x).loglik
    assert abs(one_more[1] - one_more[0]) < 1e-3           # a point where one step of the map gains < 1e-3 nats
    assert fast.loglik[-1] >= plain.loglik[-1] - 1e-3
    assert fast.loglik.shape == (fast.n_iter + 1,) and fast.x.min() >= 0
    if method == "ems":
        fixed = expectation_maximization(counts, t, method="ems", max_iter=20_000, tol=1e-15).x
        assert np.abs(fast.x - fixed).sum() <= 3 * np.abs(plain.x - fixed).sum() + 1e-5
    else:  # the safeguard keeps EM monotone
        assert np.diff(fast.loglik).min() >= -1e-12 * abs(fast.loglik[0])


def test_squarem_respects_the_cap_and_checks_its_flag():
    t, _, counts = _case(128, 40, 32, 2.0, True, seed=11)
    for k in range(1, 8):
        capped = expectation_maximization(counts, t, method="em", max_iter=k, tol=0.0, accelerate=True)
        assert (capped.n_iter, capped.converged, capped.loglik.shape) == (k, False, (k + 1,))
    with pytest.raises(TypeError, match="accelerate"):
        expectation_maximization(counts, t, accelerate=1)


def test_squarem_joint_fit_with_pinned_buckets_reaches_the_plain_fixed_point():
    """Two collections (a plain and a warped Square Wave) and pinned buckets: the joint EMS fixed point is the
    same with and without SQUAREM (200,000 steps each: measured max difference 1.4e-15; after 5,000 steps the
    plain iteration is 6.4e-3 off, SQUAREM 1e-4, after 50,000 both within 1.6e-8 of each other), and the
    default stop is reached in fewer steps."""
    sw = ldp.SquareWave(1.0, (0, 1), n_cells=128)
    w = ldp.WarpedSquareWave(1.0, (0, 1), knots=(0, 1, 30, 31, 40), n_cells=128)
    x = np.random.default_rng(4).beta(2, 5, 20_000)
    x[::7] = 0.3
    parts = [(sw.aggregate(sw.privatize(x[:5000], rng=1)).counts, window_transition_from_plan(sw.plan, 64)),
             (w.aggregate(w.privatize(x[5000:], rng=2)).counts, w.transition(64))]
    pin = np.zeros(64, bool)
    pin[17:22] = True
    for k in (0, 2):
        fits = [joint_expectation_maximization(parts, smoothing=k, pinned=pin, accelerate=a) for a in (False, True)]
        assert fits[1].n_iter < fits[0].n_iter
        if k:
            tight = [em_module._joint_run(em_module._check_parts(parts), k, steps, 0.0, None,
                                          em_module._smoothed_index(pin, 64), a)[0]
                     for a, steps in ((False, 200_000), (True, 200_000))]
            np.testing.assert_allclose(tight[1], tight[0], rtol=0, atol=1e-10)


# --- EMS smoothing ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("d", [1, 2, 3, 10, 257])
def test_ems_smoothing_preserves_mass_and_matches_formula(d):
    x = np.random.default_rng(d).random(d)
    out = np.empty(d)
    total = server_em.ems_smooth(x, out)
    assert total == pytest.approx(x.sum(), rel=1e-15)
    assert out.sum() == pytest.approx(x.sum(), rel=1e-15)
    padded = np.concatenate([[x[0]], x, [x[-1]]])          # x_{-1} = x_0, x_d = x_{d-1}
    np.testing.assert_allclose(out, 0.5 * padded[1:-1] + 0.25 * (padded[:-2] + padded[2:]), rtol=1e-15)


# --- bad inputs ---------------------------------------------------------------------------------------------

@pytest.fixture
def small():
    t = window_transition(64, 20, 16, p_in=0.6)
    return t, np.full(64, 10, dtype=np.int64)


@pytest.mark.parametrize("counts,exc", [
    (np.ones(63, dtype=np.int64), ValueError),                          # wrong length
    (np.ones((64, 1), dtype=np.int64), ValueError),                     # 2-D
    (np.r_[-1, np.ones(63, dtype=np.int64)], ValueError),               # negative
    (np.zeros(64, dtype=np.int64), ValueError),                         # no reports
    (np.r_[np.nan, np.ones(63)], ValueError),                           # NaN
    (np.r_[np.inf, np.ones(63)], ValueError),                           # inf
    (np.ones(64, dtype=bool), TypeError),
    (np.ones(64, dtype=object), TypeError),
    (np.ones(64, dtype=complex), TypeError),
    (np.array(["1"] * 64), TypeError),
    (np.ones(64, dtype="datetime64[s]"), TypeError),
])
def test_bad_counts(small, counts, exc):
    t, _ = small
    with pytest.raises(exc, match="counts"):
        expectation_maximization(counts, t)


@pytest.mark.parametrize("kwargs,exc", [
    ({"method": "newton"}, ValueError), ({"method": None}, ValueError),
    ({"max_iter": 0}, ValueError), ({"max_iter": 1.5}, TypeError), ({"max_iter": True}, TypeError),
    ({"tol": -1e-9}, ValueError), ({"tol": float("nan")}, ValueError), ({"tol": "1e-9"}, TypeError),
    ({"tol": True}, TypeError),
])
def test_bad_options(small, kwargs, exc):
    t, counts = small
    with pytest.raises(exc):
        expectation_maximization(counts, t, **kwargs)


def test_bad_transition(small):
    _, counts = small
    with pytest.raises(TypeError, match="transition"):
        expectation_maximization(counts, np.eye(64))


@pytest.mark.parametrize("args,kwargs,exc", [
    ((64, 64, 16), {"p_in": 0.5}, ValueError),        # m == n_cells
    ((64, 0, 16), {"p_in": 0.5}, ValueError),
    ((64, 20, 0), {"p_in": 0.5}, ValueError),
    ((64.0, 20, 16), {"p_in": 0.5}, TypeError),
    ((64, 20, True), {"p_in": 0.5}, TypeError),
    ((64, 20, 16), {"p_in": 1.5}, ValueError),
    ((64, 20, 16), {"p_in": float("nan")}, ValueError),
    ((64, 20, 16), {"p_in": "0.5"}, TypeError),
    ((64, 20, 16), {}, TypeError),                    # neither p_in nor window
    ((64, 20, 16), {"p_in": 0.5, "window": np.full(20, 0.01)}, TypeError),
    ((64, 20, 16), {"window": np.full(19, 0.01)}, ValueError),
    ((64, 20, 16), {"window": np.full(20, 0.1)}, ValueError),           # sums to 2
    ((64, 20, 16), {"window": np.r_[np.full(19, 0.04), 0.0]}, ValueError),  # a window cell below p_lo
    ((64, 20, 16), {"window": np.full(20, "a")}, TypeError),
])
def test_bad_transition_parameters(args, kwargs, exc):
    with pytest.raises(exc):
        window_transition(*args, **kwargs)


def test_kernel_rejects_a_corrupt_band():
    good = window_transition(64, 20, 16, p_in=0.6)
    bad_index = good.s_index.copy()
    bad_index[3] = 64 - 20 + 1                                          # past the last window start
    corrupt = WindowTransition(good.n_cells, good.m, good.p_hi, good.p_lo, good.n_bins, good.indptr,
                               bad_index, good.weight)
    with pytest.raises(ValueError, match="band"):
        expectation_maximization(np.ones(64), corrupt)
    with pytest.raises(ValueError, match="band"):
        corrupt.forward(np.ones(16))
    bad_ptr = good.indptr.copy()
    bad_ptr[5] = bad_ptr[6] + 1
    with pytest.raises(ValueError, match="band"):
        bad = WindowTransition(64, 20, good.p_hi, good.p_lo, 16, bad_ptr, good.s_index, good.weight)
        bad.backward(np.ones(64))
    with pytest.raises(ValueError, match="indptr"):
        WindowTransition(64, 20, good.p_hi, good.p_lo, 15, good.indptr, good.s_index, good.weight)


# --- realistic: the real kernel's reports -------------------------------------------------------------------

@pytest.mark.parametrize("epsilon", [1.0, 2.0])
def test_ems_recovers_beta_cdf_from_piecewise_reports(epsilon):
    """EMS on counts of the real randomizer recovers the Beta(5, 2) CDF.

    Tolerance, per threshold ``t``: 5 standard deviations of the *unbiased* least-squares estimate of F(t)
    at the same resolution, ``F_LS(t) = g_t · counts/n`` with ``g_t`` the sum of the first rows of
    ``pinv(M)``. Reports are i.i.d. draws from ``q = M x`` (values drawn from Beta, then randomized), so
    ``Var F_LS(t) = g_t^T (diag(q) - q q^T) g_t / n`` in closed form; it covers both the sampling of the
    values and the randomization. EMS is a smoothed maximum-likelihood estimate, typically well inside
    1 σ_LS, plus a small smoothing bias at the steep upper tail (measured over 40 seeds: at most 1.7 σ_LS
    at ε ∈ {1, 2}); 5 σ is a two-sided Gaussian tail of 6e-7 per threshold.
    """
    n, d = 100_000, 64
    mech = ldp.Piecewise(epsilon, (0, 1), n_cells=1024)
    t = window_transition_from_plan(mech.plan, d)
    u = np.random.default_rng(2024).beta(5, 2, n)
    agg = mech.aggregate(mech.privatize(u, rng=7))
    res = expectation_maximization(agg.counts, t)
    assert res.converged

    m_dense = t.dense()
    x_true = np.diff(stats.beta.cdf(np.arange(d + 1) / d, 5, 2))
    q = m_dense @ x_true
    ks = np.array([8, 16, 24, 32, 40, 48, 56, 60])
    g = np.cumsum(np.linalg.pinv(m_dense), axis=0)[ks - 1]
    sigma = np.sqrt(np.einsum("ij,jk,ik->i", g, (np.diag(q) - np.outer(q, q)) / n, g))
    err = np.abs(np.cumsum(res.x)[ks - 1] - stats.beta.cdf(ks / d, 5, 2))
    assert np.all(err <= 5 * sigma), (err / sigma)


def test_point_transition_is_the_exact_output_distribution_of_each_integer():
    """Each column of the discrete EM transition equals the plan's output probabilities of its integer (the
    integer's two window starts, by the hat weights): measured to 2e-15."""
    from ldpnum.estimation.em import point_transition_from_plan

    for sw in (ldp.SquareWave(4.0, (0, 80), discrete=True), ldp.SquareWave(1.0, (-3, 4), n_cells=64, discrete=True)):
        low, high = sw.bounds
        t = point_transition_from_plan(sw.plan, sw.n_points)
        dense = t.dense()
        for j, k in enumerate(range(int(low), int(high) + 1)):
            np.testing.assert_allclose(dense[:, j], sw.output_probabilities(float(k)), rtol=0, atol=1e-13)
        with pytest.raises(ValueError, match="cannot be regridded"):
            t.with_bins(2 * sw.n_points)
