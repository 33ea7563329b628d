"""Square Wave and General Wave: exact privacy, kernel vs plan, unbiasedness, the grid (issue: distributions)."""

import math

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.mechanisms.wave import square_wave_bandwidth

import naive
from conftest import EPSILONS, adversarial_values
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_input_free_alphabet, check_kernel_matches

EDGES = adversarial_values((0, 1), n_random=3)

SHAPES = ["square", "trapezoid", "triangle", lambda z: np.cos(z * np.pi / 2) ** 2]
SHAPE_IDS = ["square", "trapezoid", "triangle", "callable"]


def shaped_window_naive(x, low, high, n_cells, m, t_in, cum, words):
    """Reference for the shaped-window kernel: Python ints, one record at a time."""
    out = []
    for i, v in enumerate(x):
        s, t_up = naive.rounding(naive.unit(v, low, high), n_cells - m)
        s += int(naive.bernoulli(words[3 * i], t_up))
        if naive.bernoulli(words[3 * i + 1], t_in):
            r = int(words[3 * i + 2]) >> 11
            k = max(k for k in range(m) if cum[k] <= r)
            out.append(s + k)
        else:
            k = naive.uniform(words[3 * i + 2], n_cells - m)
            out.append(k + m if k >= s else k)
    return np.array(out)


def test_bandwidth_formula():
    assert square_wave_bandwidth(1.0) == pytest.approx((math.e - math.e + 1) / (2 * math.e * (math.e - 2)))
    for eps in (1e-6, 1e-4, 9.99e-4, 1e-3, 0.01):
        ee = math.exp(eps)
        direct = (eps * ee - ee + 1) / (2 * ee * (ee - 1 - eps))
        assert square_wave_bandwidth(eps) == pytest.approx(direct, rel=1e-3 if eps < 1e-3 else 1e-6)
    assert square_wave_bandwidth(1e-9) == pytest.approx(0.5, rel=1e-6)
    assert square_wave_bandwidth(20.0) < 1e-7


@pytest.mark.parametrize("epsilon,n_cells", [(0.5, 1024), (1.0, 1024), (4.0, 1024), (8.0, 8192), (12.0, 65536)])
def test_default_grid(epsilon, n_cells):
    sw = ldp.SquareWave(epsilon, (0, 1))
    assert sw.n_cells == n_cells
    assert sw.plan.m >= 16 or sw.n_cells == 2**16
    b = square_wave_bandwidth(epsilon)
    assert abs(sw.realized_bandwidth - b) <= 1 / (2 * (sw.n_cells - sw.plan.m)) + 1e-15


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_exact_epsilon_every_shape(shape, epsilon):
    m = ldp.GeneralWave(epsilon, (0, 1), shape=shape)
    check_exact_epsilon([], epsilon, ratio=m.plan.extreme_ratio())


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_brute_force_small_grid(shape, epsilon):
    m = ldp.GeneralWave(epsilon, (0, 1), shape=shape, n_cells=64)
    rows = [m.plan.exact_probabilities(s) for s in range(m.plan.n_positions + 1)]
    worst = check_exact_epsilon(rows, epsilon)
    assert float(worst) == pytest.approx(float(m.plan.extreme_ratio()), rel=1e-12)


def test_checker_rejects_inflated_wave():
    """A wave whose top weight exceeds e^ε (planted: built for 1.25 ε, checked at ε) is rejected."""
    m = ldp.GeneralWave(1.25, (0, 1), shape="triangle", n_cells=64)
    rows = [m.plan.exact_probabilities(s) for s in range(m.plan.n_positions + 1)]
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows, 1.0)


def test_plan_refuses_weights_beyond_e_epsilon():
    from ldpnum.plans import window_plan
    with pytest.raises(ValueError, match="span more than"):
        window_plan(1.0, 64, 8, weights=[1.0] * 7 + [math.e * 1.001])


def test_square_general_wave_is_square_wave():
    sw = ldp.SquareWave(1.0, (0, 1440))
    gw = ldp.GeneralWave(1.0, (0, 1440), shape="square")
    assert sw.spec == gw.spec and sw == gw and sw.plan == gw.plan
    x = adversarial_values((0, 1440), n_random=20_000)
    assert sw.privatize(x, rng=9) == gw.privatize(x, rng=9)
    assert ldp.from_spec(gw.spec) == sw


@pytest.mark.parametrize("shape", SHAPES[1:], ids=SHAPE_IDS[1:])
def test_shaped_kernel_matches_naive(shape):
    m = ldp.GeneralWave(2.0, (0.0, 10.0), shape=shape)
    x = adversarial_values((0.0, 10.0), n_random=2000)
    r = m.privatize(x, rng=21)
    words = np.random.default_rng(21).bit_generator.random_raw(3 * x.size)
    p = m.plan
    ref = shaped_window_naive(x, 0.0, 10.0, p.n_cells, p.m, p.t_in, p.cum, words)
    np.testing.assert_array_equal(r.codes, ref)


@pytest.mark.parametrize("make", [
    lambda: ldp.SquareWave(1.0, (0, 1440)),
    lambda: ldp.SquareWave(8.0, (0, 1)),
    lambda: ldp.GeneralWave(2.0, (0, 1), shape="triangle"),
    lambda: ldp.GeneralWave(0.5, (0, 1), shape="trapezoid"),
])
def test_kernel_matches_plan(make):
    m = make()
    low, high = m.bounds
    for i, x in enumerate([low, low + 0.41 * (high - low), high]):
        r = m.privatize(np.full(300_000, x), rng=500 + i)
        check_kernel_matches(m.aggregate(r).counts, m.output_probabilities(x))


@pytest.mark.parametrize("n_cells,every_output", [(None, False), (32, True)])
def test_output_alphabet_is_input_free(n_cells, every_output):
    """C1: each adversarial input's reports are codes of the alphabet fixed by the plan; on 32 cells every
    input reaches every code (4,000 reports; the least likely cell has probability > 1/70)."""
    sw = ldp.SquareWave(1.0, (0, 1), n_cells=n_cells)
    out = {float(x): sw.privatize(np.full(4000, x), rng=2 + i).codes for i, x in enumerate(EDGES)}
    assert all(o.dtype == (np.uint16 if n_cells is None else np.uint8) for o in out.values())
    check_input_free_alphabet(out, np.arange(sw.n_cells, dtype=np.uint64), every_output=every_output)


def naive_float_square_wave(x, epsilon, rng):
    """The textbook float Square Wave (leaky; negative control only)."""
    b = square_wave_bandwidth(epsilon)
    ee = math.exp(epsilon)
    p_in = 2 * b * ee / (2 * b * ee + 1)
    inside = rng.random(x.size) < p_in
    y_in = x - b + 2 * b * rng.random(x.size)
    v = rng.random(x.size)  # outside: uniform on [-b, x-b) ∪ (x+b, 1+b], total length 1
    y_out = np.where(v < x, -b + v, x + b + (v - x))
    return np.where(inside, y_in, y_out)


def test_alphabet_check_rejects_naive_float_square_wave():
    """M4: the textbook float Square Wave's outputs are not in the grid's alphabet (cell centres)."""
    sw = ldp.SquareWave(1.0, (0, 1))
    rng = np.random.default_rng(0)
    out = {float(x): naive_float_square_wave(np.full(200, x), 1.0, rng) for x in EDGES}
    with pytest.raises(PrivacyViolation, match="outside the input-free alphabet"):
        check_input_free_alphabet(out, sw.labels)


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_mean_is_unbiased(shape, epsilon):
    bounds = (0.0, 1440.0)
    m = ldp.GeneralWave(epsilon, bounds, shape=shape)
    rng = np.random.default_rng(4)
    x = 1440 * rng.beta(5, 2, 200_000)
    x[:20_000] = 0.0
    x[20_000:40_000] = 1440.0
    est = m.estimate_mean(m.privatize(x, rng=int(10 * epsilon)))
    sd = math.sqrt(np.mean(m.variance(x)) / x.size)
    assert abs(est.value - x.mean()) < 4.5 * sd


def test_square_wave_mean_matches_design_measurement():
    """TESTING.md D1: 10 × 1e6 reports of Beta(5,2)-like data land within a few SE of the truth."""
    sw = ldp.SquareWave(1.0, (0, 1))
    x = np.random.default_rng(0).beta(5, 2, 1_000_000)
    aggs = [sw.aggregate(sw.privatize(x, rng=100 + k)) for k in range(10)]
    est = sw.estimate_mean(sum(aggs))
    sd = math.sqrt(np.mean(sw.variance(x[:100_000])) / (10 * x.size))
    assert abs(est.value - x.mean()) < 4.5 * sd


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_per_report_variance(shape):
    m = ldp.GeneralWave(1.0, (0.0, 1.0), shape=shape)
    x = 0.3
    n = 300_000
    e = m.code_estimates[m.privatize(np.full(n, x), rng=8).codes]
    probs = m.output_probabilities(x)
    mu = probs @ m.code_estimates
    assert mu == pytest.approx(x, abs=1e-9)
    var = m.variance(x)
    mu4 = probs @ (m.code_estimates - mu) ** 4
    assert abs(e.var(ddof=1) - var) < 4.5 * math.sqrt((mu4 - var**2) / n)


def test_square_wave_is_more_accurate_for_distributions_than_triangle():
    """Theorem 2 of the seed, measured through the plan: SW separates inputs more (W1 between outputs)."""
    sw = ldp.GeneralWave(1.0, (0, 1), shape="square")
    tri = ldp.GeneralWave(1.0, (0, 1), shape="triangle")

    def w1(m):
        a, b = np.cumsum(m.output_probabilities(0.2)), np.cumsum(m.output_probabilities(0.8))
        return np.abs(a - b).sum()

    assert w1(sw) > w1(tri)


@pytest.mark.parametrize("kwargs,exc", [
    (dict(shape="sine"), ValueError), (dict(shape=3), TypeError), (dict(bandwidth=0.0), ValueError),
    (dict(bandwidth=np.inf), ValueError), (dict(bandwidth="0.2"), TypeError), (dict(bandwidth=True), TypeError),
    (dict(shape=lambda z: 2 * np.ones_like(z)), ValueError), (dict(shape=lambda z: np.zeros_like(z)), ValueError),
    (dict(shape=lambda z: np.ones(3)), ValueError), (dict(n_cells=3), ValueError), (dict(n_cells=2.5), TypeError),
])
def test_bad_parameters(kwargs, exc):
    with pytest.raises(exc):
        ldp.GeneralWave(1.0, (0, 1), **kwargs)


def test_spec_round_trip_and_callable_shapes():
    tri = ldp.GeneralWave(1.5, (0, 10), shape="triangle", bandwidth=0.2)
    assert ldp.from_spec(ldp.Spec.from_json(tri.spec.to_json())) == tri
    f = ldp.GeneralWave(1.5, (0, 10), shape=lambda z: 1 - z * z)
    assert f.spec.get("shape").startswith("callable:")
    with pytest.raises(ValueError, match="cannot be rebuilt"):
        ldp.from_spec(f.spec)
    with pytest.raises(ldp.SpecMismatchError):
        tri.estimate_mean(ldp.SquareWave(1.5, (0, 10)).privatize([1.0], rng=0))
