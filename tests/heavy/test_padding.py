"""Padding-and-sampling (ldpnum/heavy/padding.py): PaddingSampling and its local-hashing variant
PaddingSamplingOLH (DESIGN.md R1, R8; TESTING.md "heavy hitters / itemsets").

The common suite (test_common.py, case "padding_sampling") runs the registry checks on PaddingSampling. Here:
the ratio bound at more (ε, k, ℓ), planted bugs, the kernel against a NumPy reference, unbiasedness for the
sampling probabilities, and the choice between the two variants. SVIM and SVSM, which use them, are tested in
test_setvalued.py.
"""

from fractions import Fraction

import naive
import numpy as np
import pytest
from privacy_checks import PrivacyViolation, check_exact_epsilon, max_ratio
from test_setvalued import all_local_sets

import ldpnum as ldp
from ldpnum._kernels import client_setvalued
from ldpnum._kernels._jit import launch
from ldpnum.heavy.padding import PaddingSamplingPlan, amplified_epsilon, padding_sampling_keep_cells
from ldpnum.heavy.setvalued import SetValuedState, encode_sets
from ldpnum.plans import TWO48, exp_lower, uniform_count


# -- padding-and-sampling: exact ε ------------------------------------------------------------------------------

@pytest.mark.parametrize("epsilon,k,ell", [(0.1, 2, 1), (1.0, 3, 2), (1.0, 5, 3), (2.0, 4, 7), (8.0, 3, 3),
                                           (20.0, 4, 2), (0.5, 6, 5)])
def test_padding_sampling_exact_epsilon_by_enumeration(epsilon, k, ell):
    """Every local set of a small domain: rows sum to 1, every ratio ≤ E < e^ε, the maximum reaches e^ε, and the
    plan's structural bound is at least the enumerated maximum (and equally tight)."""
    m = ldp.PaddingSampling(epsilon, k, ell)
    rows = [m.plan.exact_probabilities(s) for s in all_local_sets(k)]
    worst = check_exact_epsilon(rows, epsilon)
    assert worst <= m.plan.extreme_ratio() <= exp_lower(epsilon)
    assert m.plan.extreme_ratio() / worst < 1 + Fraction(1, 10**9)


@pytest.mark.parametrize("epsilon,k,ell", [(0.5, 40, 9), (4.0, 40, 3), (12.0, 1000, 100), (20.0, 60000, 7)])
def test_padding_sampling_structural_bound_at_large_domains(epsilon, k, ell):
    m = ldp.PaddingSampling(epsilon, k, ell)
    check_exact_epsilon([], epsilon, ratio=m.plan.extreme_ratio())


def test_the_slot_probability_is_not_exactly_uniform_and_the_plan_accounts_for_it():
    """ℓ = 3 does not divide 2**48: the first slot has probability ⌈2^48/3⌉/2^48 > 1/3, and the plan's ε bound uses
    that count (a plan assuming exactly 1/ℓ keeps one more keep cell and breaks ε)."""
    assert uniform_count(0, 3) == -(-TWO48 // 3) > TWO48 / 3
    eps, k, ell = 2.0, 3, 3
    a, b = padding_sampling_keep_cells(eps, k + ell, ell)
    rows = lambda plan: [plan.exact_probabilities(s) for s in all_local_sets(k)]
    check_exact_epsilon(rows(PaddingSamplingPlan(k, ell, a, b)), eps)
    # the largest keep count that exactly-uniform slots would allow exceeds the plan's: it must fail
    e = exp_lower(eps)
    a_uniform = a
    while True:
        plan = PaddingSamplingPlan(k, ell, a_uniform + 1, b)
        lies = plan.grr.lie_counts()
        if Fraction(plan.grr.keep_count() + (ell - 1) * max(lies), ell * min(lies)) > e:
            break
        a_uniform += 1
    assert a_uniform > a
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon(rows(PaddingSamplingPlan(k, ell, a_uniform, b)), eps)


def test_negative_controls_inflated_epsilon_and_no_padding():
    """M5: the plan for 1.25 ε fails at ε. A planted bug: sampling from the local set without padding (one of m
    items with probability 1/m, so a singleton is always reported through GRR) at the amplified ε' fails."""
    k, ell, eps = 3, 3, 1.0
    loose = ldp.PaddingSampling(1.25 * eps, k, ell)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([loose.plan.exact_probabilities(s) for s in all_local_sets(k)], eps)
    plan = ldp.PaddingSampling(eps, k, ell).plan

    def unpadded(local_set):
        members = sorted(local_set) or [k]  # the empty set reports a dummy
        out = {}
        for j, v in enumerate(members):
            w = Fraction(uniform_count(j, len(members)), TWO48)
            for y, p in plan.grr.exact_probabilities(v).items():
                out[y] = out.get(y, 0) + w * p
        return out

    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([unpadded(s) for s in all_local_sets(k)], eps)


def test_amplified_epsilon_matches_the_paper_and_the_plan():
    for eps, ell in [(1.0, 1), (1.0, 4), (4.0, 9)]:
        e1 = amplified_epsilon(eps, ell)
        assert np.isclose(np.exp(e1), ell * (np.exp(eps) - 1) + 1)
        plan = ldp.PaddingSampling(eps, 5, ell).plan
        lies = plan.grr.lie_counts()
        assert np.isclose(plan.grr.keep_count() / np.mean(lies), np.exp(e1), rtol=1e-9)
    assert amplified_epsilon(2.0, 1) == pytest.approx(2.0)


# -- padding-and-sampling: kernel against the NumPy reference --------------------------------------------------

def naive_sample(held, k, ell, words):
    """Padding and sampling, person by person, from the documented rule (indicator rows, one word each)."""
    out = np.empty(len(held), dtype=np.int64)
    for i, row in enumerate(held):
        members = np.flatnonzero(row)
        m = members.size
        s = ((int(words[i]) >> 16) * max(m, ell)) >> 48
        out[i] = members[s] if s < m else k + s - m
    return out


@pytest.mark.parametrize("k,ell", [(5, 3), (70, 4), (130, 1), (3, 9)])
def test_kernel_matches_the_naive_reference(k, ell):
    rng = np.random.default_rng(k)
    held = rng.random((600, k)) < rng.uniform(0, 0.6, (600, 1))
    held[0] = False
    held[1] = True
    m = ldp.PaddingSampling(1.0, k, ell)
    masks = m.prepare_values(held)
    words = rng.bit_generator.random_raw(2 * 600)
    out = np.empty(600, np.int64)
    launch(client_setvalued.sample_slot_probe, masks, k, ell, np.ascontiguousarray(words[0::2]), out)
    slots = naive_sample(held, k, ell, words[0::2])
    np.testing.assert_array_equal(out, slots)
    codes = np.empty(600, dtype=m._report_dtype())
    m._run_kernel(masks, words, codes)
    p = m.plan.grr
    np.testing.assert_array_equal(codes, naive.grr(slots, k + ell, p.a_keep, p.shift, words[1::2]))


def test_indicator_arrays_and_sets_pack_alike():
    m = ldp.PaddingSampling(1.0, 70, 2)
    sets = [{0, 69}, set(), {64}, set(range(70))]
    held = np.zeros((4, 70), bool)
    for i, s in enumerate(sets):
        held[i, list(s)] = True
    masks = m.prepare_values(sets)
    assert masks.shape == (4, 2) and masks.dtype == np.uint64 and not masks.flags.writeable
    np.testing.assert_array_equal(masks, m.prepare_values(held))
    assert int(masks[0, 0]) == 1 and int(masks[0, 1]) == 1 << 5 and int(masks[2, 1]) == 1


def test_catalogue_membership_as_pairs_packs_like_the_dense_indicator():
    # the domain phase packs (person, item) pairs straight into bitmask rows; the dense n x k route is the reference
    rng = np.random.default_rng(7)
    domain = np.unique(rng.integers(1, 2**40, 300, dtype=np.uint64))
    sets = [list(rng.choice(domain, size=int(rng.integers(0, 9)), replace=False)) +
            list(rng.integers(2**41, 2**42, size=int(rng.integers(0, 3)), dtype=np.uint64)) for _ in range(400)]
    enc = encode_sets([[int(w) for w in s] for s in sets], 64, item_type="uint")
    persons, columns = enc.membership_pairs(domain)
    dense = enc.membership(domain)
    assert dense.sum() == persons.size == sum(sum(int(w) in set(domain.tolist()) for w in s) for s in sets)
    m = ldp.PaddingSamplingOLH(1.0, domain.size, 4)
    np.testing.assert_array_equal(m._masks_from_pairs(enc.n, persons, columns), m.prepare_values(dense))


def test_estimate_is_unbiased_for_the_sampling_probabilities():
    """π̂ against the exact mean sampling probability of a fixed population, within 4 of GRR's standard errors."""
    m = ldp.PaddingSampling(1.0, 6, 3)
    rng = np.random.default_rng(2)
    held = rng.random((200_000, 6)) < [0.6, 0.4, 0.3, 0.1, 0.05, 0.0]
    est = m.estimate_frequencies(m.privatize(held, rng=3))
    sizes = held.sum(axis=1)
    pi = (held / np.maximum(sizes, 3)[:, None]).mean(axis=0)
    dummies = [np.mean(np.arange(3)[j] < 3 - np.minimum(sizes, 3)) / 3 for j in range(3)]
    truth = np.concatenate([pi, dummies])
    assert np.all(np.abs(est.frequencies - truth) < 4 * est.standard_errors)


# -- padding-and-sampling with local hashing (the large-domain choice) ----------------------------------------------

SEED_WORDS = [int(w) for w in np.random.default_rng(21).bit_generator.random_raw(6)]


@pytest.mark.parametrize("epsilon,k,ell", [(1.0, 3, 1), (4.0, 4, 1), (2.0, 4, 3), (0.5, 5, 2)])
def test_olh_variant_exact_epsilon_by_enumeration(epsilon, k, ell):
    """Given each seed word, every local set: ≤ E < e^ε. With ℓ = 1 a singleton is reported through GRR over
    [0, g) with probability 1, so the ratio reaches e^ε; with ℓ > 1 it reaches it only when the sampled values
    collide under the seed (no amplification is claimed, so the realized ε may be smaller)."""
    m = ldp.PaddingSamplingOLH(epsilon, k, ell)
    worst = max(max_ratio([m.plan.exact_probabilities(s, w) for s in all_local_sets(k)]) for w in SEED_WORDS)
    check_exact_epsilon([], epsilon, ratio=worst, tight=(ell == 1))
    assert worst <= m.plan.extreme_ratio()
    loose = ldp.PaddingSamplingOLH(1.25 * epsilon, k, 1)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        check_exact_epsilon([loose.plan.exact_probabilities(s, SEED_WORDS[0]) for s in all_local_sets(k)], epsilon)


@pytest.mark.parametrize("k,ell", [(5, 3), (70, 2)])
def test_olh_variant_kernel_matches_the_naive_reference(k, ell):
    rng = np.random.default_rng(k + 1)
    held = rng.random((400, k)) < 0.2
    m = ldp.PaddingSamplingOLH(2.0, k, ell)
    words = rng.bit_generator.random_raw(3 * 400)
    codes = np.empty(400, np.uint64)
    m._run_kernel(m.prepare_values(held), words, codes)
    slots = naive_sample(held, k, ell, words[1::3])
    pairs = np.empty(800, np.uint64)
    pairs[0::2], pairs[1::2] = words[0::3], words[2::3]
    p = m.plan.grr
    np.testing.assert_array_equal(codes, naive.local_hashing(slots, m.g, p.a_keep, p.shift, pairs))


def test_olh_variant_estimate_is_unbiased_for_the_sampling_probabilities():
    m = ldp.PaddingSamplingOLH(1.0, 6, 2)
    held = np.random.default_rng(5).random((100_000, 6)) < [0.5, 0.3, 0.2, 0.1, 0.0, 0.0]
    est = m.estimate_frequencies(m.privatize(held, rng=6))
    pi = (held / np.maximum(held.sum(axis=1), 2)[:, None]).mean(axis=0)
    assert np.all(np.abs(est.frequencies[:6] - pi) < 4 * est.standard_errors[:6])


def test_adaptive_choice_follows_the_variances():
    from ldpnum.heavy.padding import padding_sampling, padding_sampling_variances

    for eps, k, ell in [(0.5, 40, 1), (0.5, 5, 1), (4.0, 40, 3), (1.0, 40, 2), (2.0, 1000, 1)]:
        grr_var, olh_var = padding_sampling_variances(eps, k, ell)
        expect = "padding_sampling" if grr_var <= olh_var else "padding_sampling_olh"
        assert padding_sampling(eps, k, ell).name == expect
        assert (grr_var <= olh_var) == (k < ell * np.exp(eps) * (4 * ell - 1) + 1)  # the paper's rule
        assert ldp.PaddingSampling(eps, k, ell).variance(0.0) == pytest.approx(grr_var, rel=1e-6)
    sv = ldp.SVIM(0.5, top_k=20)
    state = SetValuedState("svim", sv.params, stage=2, candidates=tuple(range(40)), ell=1, n_per_phase=(1, 1))
    assert sv.mechanism(sv.payload(state)).name == "padding_sampling_olh"
