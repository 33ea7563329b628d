"""Shuffle amplification (ldpnum.accounting) against a brute-force divergence, the published figures, and
its own guarantees (upper bound, monotone, no-amplification regime)."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from ldpnum import accounting
from ldpnum.accounting import ShuffleAmplification, closed_form_shuffle_epsilon, shuffle_epsilon


def brute_force_delta(eps, eps0, n):
    """max(D(P||Q), D(Q||P)) of the clone reduction by enumerating every (c, k): no cut-off, no symmetry."""
    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    d_pq = d_qp = 0.0
    for c in range(n):
        w = binom.pmf(c, n - 1, math.exp(-eps0))
        b = binom.pmf(np.arange(c + 2), c, 0.5)  # B_c(k), k = 0..c+1 (B_c(c+1) = 0)
        b_prev = np.concatenate([[0.0], b[:-1]])  # B_c(k - 1)
        p = alpha * b + (1 - alpha) * b_prev
        q = (1 - alpha) * b + alpha * b_prev
        d_pq += w * np.maximum(p - math.exp(eps) * q, 0).sum()
        d_qp += w * np.maximum(q - math.exp(eps) * p, 0).sum()
    return max(d_pq, d_qp)


def fast_delta(eps, eps0, n):
    c, weight, tail = accounting._clone_blocks(n, math.exp(-eps0), 1e-15)
    return accounting._delta_of(eps, eps0, c, weight, tail)


@pytest.mark.parametrize("eps0,n", [(1.0, 30), (2.5, 60), (4.0, 200)])
def test_divergence_matches_brute_force(eps0, n):
    for eps in (0.05, 0.3, 0.9 * eps0):
        want = brute_force_delta(eps, eps0, n)
        assert fast_delta(eps, eps0, n) == pytest.approx(want, rel=1e-9, abs=1e-15)


def test_brute_force_rejects_a_planted_generous_divergence(monkeypatch):
    # Negative control: a divergence evaluated at 3% below the asked epsilon (a bound that flatters by a
    # little, like the reference implementation's typo) fails the comparison above.
    real = accounting._delta_of

    def planted(eps, eps0, c, weight, tail):
        return real(eps * 0.97, eps0, c, weight, tail)  # a slightly too generous bound

    eps0, n, eps = 2.5, 60, 0.3
    monkeypatch.setattr(accounting, "_delta_of", planted)
    assert fast_delta(eps, eps0, n) != pytest.approx(brute_force_delta(eps, eps0, n), rel=1e-9, abs=1e-15)


def test_published_figures():
    # Feldman, McMillan, Talwar: n = 1e5, eps0 = 4, delta = 1e-6 numerically in [0.1675, 0.1728] (the
    # bracket of their stepped computation), closed form 0.5378.
    r = shuffle_epsilon(4.0, 100_000, 1e-6)
    assert 0.1675 <= r.epsilon <= 0.1728
    assert r.epsilon == pytest.approx(0.1698, abs=5e-4)
    assert r.closed_form == pytest.approx(0.5378040242, abs=1e-9)
    assert r.amplified and r.closed_form_applies and float(r) == r.epsilon
    assert "0.1698" in str(r)


def test_result_is_an_upper_bound_and_tight():
    eps0, n, delta = 3.0, 400, 1e-3
    r = shuffle_epsilon(eps0, n, delta)
    assert brute_force_delta(r.epsilon, eps0, n) <= delta
    assert brute_force_delta(r.epsilon * (1 - 1e-4), eps0, n) > delta  # no looser than the tolerance


def test_blocks_only_loosen_the_bound(monkeypatch):
    exact = shuffle_epsilon(4.0, 1_000_000, 1e-6).epsilon  # ~1.6e4 counts: blocks of 8
    monkeypatch.setattr(accounting, "_MAX_BLOCKS", 10**6)
    every = shuffle_epsilon(4.0, 1_000_000, 1e-6).epsilon  # every count
    assert every <= exact <= every * 1.001


def test_monotone_in_n_and_eps0():
    ns = [10**3, 10**4, 10**5, 10**6, 10**7]
    eps_n = [shuffle_epsilon(2.0, n, 1e-6).epsilon for n in ns]
    assert all(a > b for a, b in zip(eps_n, eps_n[1:]))
    eps0s = [0.5, 1, 2, 4, 6]
    eps_e = [shuffle_epsilon(e, 10**5, 1e-6).epsilon for e in eps0s]
    assert all(a < b for a, b in zip(eps_e, eps_e[1:]))
    closed = [closed_form_shuffle_epsilon(2.0, n, 1e-6) for n in ns[1:]]
    assert all(a > b for a, b in zip(closed, closed[1:]))
    # the numerical bound is never worse than the closed form where that applies
    for n in ns[1:]:
        r = shuffle_epsilon(2.0, n, 1e-6)
        assert r.epsilon <= r.closed_form


def test_no_amplification_regime_reported():
    assert closed_form_shuffle_epsilon(8.0, 10**5, 1e-6) is None  # 8 > log(1e5 / (16 log 4e6)) = 6.0
    assert closed_form_shuffle_epsilon(5.9, 10**5, 1e-6) is not None
    r = shuffle_epsilon(8.0, 1_000, 1e-6)
    assert r.closed_form is None and not r.closed_form_applies
    assert r.epsilon == pytest.approx(8.0, rel=1e-6)
    one = shuffle_epsilon(1.0, 1, 1e-6)
    assert one.epsilon == 1.0 and not one.amplified


def test_fast_up_to_ten_million():
    import time
    for eps0 in (0.1, 1.0, 4.0, 10.0):
        t0 = time.perf_counter()
        shuffle_epsilon(eps0, 10**7, 1e-8)
        assert time.perf_counter() - t0 < 5.0  # ~0.1 s measured; 5 s leaves room for a loaded machine


@pytest.mark.parametrize("args,match", [((0.0, 10, 1e-6), "epsilon0"), ((math.inf, 10, 1e-6), "epsilon0"),
                                        ((float("nan"), 10, 1e-6), "epsilon0"), ((1.0, 0, 1e-6), "n must"),
                                        ((1.0, 10.5, 1e-6), "n must"), ((1.0, True, 1e-6), "n must"),
                                        ((1.0, 10, 0.0), "delta"), ((1.0, 10, 1.0), "delta")])
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        shuffle_epsilon(*args)


def test_result_is_frozen():
    r = shuffle_epsilon(1.0, 1000, 1e-6)
    assert isinstance(r, ShuffleAmplification)
    with pytest.raises(AttributeError):
        r.epsilon = 0.0
