"""The adaptive two-round protocol: the warped Square Wave, its payload, the joint estimate and the switch."""

import json
import warnings
from fractions import Fraction

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.estimation.em import (joint_expectation_maximization, warped_transition_from_plan,
                                  window_transition_from_plan)
import ldpnum.mechanisms.adaptive as adaptive
from ldpnum.mechanisms.adaptive import (ADAPT_SPAN, FIT_BINS, MIN_PILOT_REPORTS, WarpedSquareWave, adapts, mass_span,
                                        point_mass_zones, warp_knots)
from ldpnum.plans import TWO53, window_plan
from privacy_checks import PrivacyViolation, check_exact_epsilon

SPIKES = np.array([0.1, 0.3, 0.45, 0.7, 0.9]), np.array([0.10, 0.08, 0.05, 0.04, 0.03])


def spiky(n, seed):
    """70% Beta(2, 5) with point masses at 0.1, 0.3, 0.45, 0.7 and 0.9 (10%, 8%, 5%, 4%, 3%)."""
    rng = np.random.default_rng(seed)
    points, weights = SPIKES
    k = np.searchsorted(np.cumsum(weights), rng.random(n), side="right")
    return np.where(k < points.size, points[np.minimum(k, points.size - 1)], rng.beta(2, 5, n))


def naive_warp(x, bounds, knots):
    """The warp by hand: linear interpolation of knots/total at the segment ends."""
    low, high = bounds
    grid = np.linspace(low, high, len(knots))
    return np.array([np.interp(v, grid, np.asarray(knots, float) / knots[-1]) for v in x])


def window_rows(m):
    plan = m.plan
    return [plan.exact_probabilities(s) for s in range(plan.n_positions + 1)]


# -- the warp and its transition, against naive references ---------------------------------------------------

def test_warp_matches_naive_interpolation():
    knots = (0, 7, 9, 30, 31, 64)
    m = WarpedSquareWave(1.0, (-2.0, 3.0), knots=knots, n_cells=64)
    x = np.r_[np.linspace(-2, 3, 101), -1.0, 0.0, 2.0]
    np.testing.assert_allclose(m.warp(x), naive_warp(x, (-2.0, 3.0), knots), rtol=0, atol=1e-15)
    assert m.warp([-5.0, 9.0]).tolist() == [0.0, 1.0]


def test_warped_transition_matches_averaged_output_probabilities():
    """Each column: the exact rows of the kernel's own window starts, averaged over values uniform in the bucket
    (midpoint rule on 4,000 points; the integrand is piecewise linear in the position, so its error is ~1e-8)."""
    m = WarpedSquareWave(2.0, (0.0, 8.0), knots=(0, 2, 13, 16), n_cells=64)
    d = 12
    dense = m.transition(d).dense()
    rows = np.array([[float(r.get(j, 0)) for j in range(m.n_cells)] for r in window_rows(m)])
    edges = np.linspace(0.0, 8.0, d + 1)
    u = (np.arange(4000) + 0.5) / 4000
    for i in range(d):
        s0, t_up = m.window_starts(edges[i] + u * (edges[i + 1] - edges[i]))
        f = (t_up / TWO53)[:, None]
        ref = ((1 - f) * rows[s0] + f * rows[np.minimum(s0 + 1, len(rows) - 1)]).mean(axis=0)
        np.testing.assert_allclose(dense[:, i], ref, rtol=0, atol=1e-7)
    np.testing.assert_allclose(dense.sum(axis=0), 1.0, atol=1e-12)


def test_identity_warp_gives_the_square_wave_transition():
    sw = ldp.SquareWave(1.0, (0, 1), n_cells=128)
    t = warped_transition_from_plan(sw.plan, np.linspace(0, 1, 33))
    np.testing.assert_allclose(t.dense(), window_transition_from_plan(sw.plan, 32).dense(), atol=1e-13)


def test_warp_knots_by_hand():
    # masses 0.7, 0.1 | 0.1, 0.1 -> segments 0.8, 0.2, mixed half and half with 0.5, 0.5: 0.65, 0.35
    assert warp_knots([0.7, 0.1, 0.1, 0.1], 2, mix=0.5, total=100) == (0, 65, 100)
    capped = warp_knots(np.r_[1.0, np.zeros(127)], 128)  # all mass in one segment: its share capped at 16/128
    assert np.diff(capped).max() == round(2**20 * 16 / 128) and capped[-1] == 2**20


def naive_zones(p, window, ratio, min_mass, pad):
    """Point-mass zones by hand: bucket by bucket, the median of its window, runs, excess, merged if touching."""
    d = len(p)
    bg = [float(np.median([p[min(max(j, 0), d - 1)] for j in range(i - window, i + window + 1)])) for i in range(d)]
    hot = [p[i] > ratio * bg[i] for i in range(d)]
    zones, i = [], 0
    while i < d:
        if not hot[i]:
            i += 1
            continue
        j = i
        while j + 1 < d and hot[j + 1]:
            j += 1
        lo, hi = max(0, i - pad), min(d, j + 1 + pad)
        if sum(p[k] - bg[k] for k in range(lo, hi)) > min_mass:
            if zones and lo <= zones[-1][1]:
                lo = zones.pop()[0]
            zones.append((lo, hi))
        i = j + 1
    return tuple(zones)


def test_point_mass_zones_match_naive_reference():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.gamma(2.0, 1.0, 60)
        p[rng.choice(60, 3, replace=False)] += rng.uniform(0, 40, 3)
        p /= p.sum()
        for args in ((5, 3.0, 0.02, 2), (3, 2.0, 0.0, 0), (8, 4.0, 0.1, 4)):
            assert point_mass_zones(p, window=args[0], ratio=args[1], min_mass=args[2], pad=args[3]) == \
                naive_zones(list(p), *args)


def test_pinned_buckets_are_left_out_of_the_smoothing():
    """The joint fit's map with pinned buckets against NumPy EMS whose filter runs over the other buckets only
    (step by step, so without SQUAREM)."""
    sw = ldp.SquareWave(1.0, (0, 1), n_cells=128)
    counts = sw.aggregate(sw.privatize(spiky(5000, 0), rng=1)).counts.astype(float)
    t = window_transition_from_plan(sw.plan, 64)
    pin = np.zeros(64, bool)
    pin[[6, 19, 20, 45]] = True
    res = joint_expectation_maximization([(counts, t)], smoothing=2, max_iter=40, pinned=pin, accelerate=False)
    m, x = t.dense(), np.full(64, 1 / 64)
    for _ in range(res.n_iter):
        x = x * (m.T @ (counts / (m @ x)))
        b = x[~pin]
        for _ in range(2):
            b = 0.5 * b + 0.25 * (np.r_[b[0], b[:-1]] + np.r_[b[1:], b[-1]])
        x[~pin] = b
        x /= x.sum()
    np.testing.assert_allclose(res.x, x, rtol=1e-9, atol=1e-15)
    with pytest.raises(ValueError, match="pinned"):
        joint_expectation_maximization([(counts, t)], smoothing=1, pinned=np.ones(64, bool))


def test_pinned_buckets_as_atoms_smooth_the_continuous_part_only():
    """``atoms=True``: every bucket's continuous part is smoothed (all buckets, one sequence) and a pinned bucket's
    atom is not; both share the bucket's column. Against NumPy EM step by step, from the layout's uniform start;
    and the atom layout is the same joint likelihood (two rounds, the held-out search)."""
    sw = ldp.SquareWave(1.0, (0, 1), n_cells=128)
    counts = sw.aggregate(sw.privatize(spiky(5000, 0), rng=1)).counts.astype(float)
    t = window_transition_from_plan(sw.plan, 64)
    pin = np.zeros(64, bool)
    pin[[6, 19, 20, 45]] = True
    res = joint_expectation_maximization([(counts, t)], smoothing=2, max_iter=40, pinned=pin, accelerate=False,
                                         atoms=True)
    m = t.dense()
    d_ext = 64 + pin.sum()
    c, a = np.full(64, 1 / d_ext), np.where(pin, 1 / d_ext, 0.0)
    for _ in range(res.n_iter):
        g = m.T @ (counts / (m @ (c + a)))
        c, a = c * g, a * g
        for _ in range(2):
            c = 0.5 * c + 0.25 * (np.r_[c[0], c[:-1]] + np.r_[c[1:], c[-1]])
        total = c.sum() + a.sum()
        c, a = c / total, a / total
    np.testing.assert_allclose(res.x, c + a, rtol=1e-9, atol=1e-15)
    # without pinned buckets, atoms change nothing
    plain = joint_expectation_maximization([(counts, t)], smoothing=2, max_iter=40, accelerate=False)
    none = joint_expectation_maximization([(counts, t)], smoothing=2, max_iter=40, accelerate=False, atoms=True,
                                          pinned=np.zeros(64, bool))
    np.testing.assert_array_equal(plain.x, none.x)
    with pytest.raises(TypeError, match="atoms"):
        joint_expectation_maximization([(counts, t)], smoothing=1, pinned=pin, atoms="yes")


def _spiky_rounds(eps, n, seed, **kwargs):
    """Both rounds of a warped collection of the spiky sample: ``(protocol, pilot, second, payload, aggregates)``."""
    proto = ldp.AdaptiveDistribution(eps, (0, 1), adapt=True, **kwargs)
    x = spiky(n, seed)
    rounds = proto.assign_rounds(x.size, rng=1)
    pilot = proto.pilot_mechanism()
    pilot_agg = pilot.aggregate(pilot.privatize(x[rounds == 0], rng=2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldp.PointMassWarning)
        payload = proto.fit_payload(pilot_agg)
    second = proto.second_mechanism(payload)
    return proto, pilot, second, payload, [pilot_agg, second.aggregate(second.privatize(x[rounds == 1], rng=3))]


def _covered(zones):
    """(how many of the five point masses lie in a zone, how many zones hold none of them)."""
    at = (SPIKES[0] * FIT_BINS).astype(int)
    return (sum(any(lo <= b < hi for lo, hi in zones) for b in at),
            sum(not any(lo <= b < hi for b in at) for lo, hi in zones))


def test_joint_zones_keep_what_both_halves_show(monkeypatch):
    """A zone is kept where a zone of each half overlaps (over the union of the two), touching ones merged; a
    zone of one half only, or two that only touch, is dropped."""
    halves = iter([((10, 20), (25, 35), (60, 70), (90, 95)), ((15, 30), (40, 50), (95, 99))])
    monkeypatch.setattr(adaptive, "_zones_of_fit", lambda parts: next(halves))
    proto, pilot, second, _, aggs = _spiky_rounds(2.0, 20_000, 0)
    assert adaptive._joint_zones(aggs, [pilot, second], FIT_BINS) == ((10, 35),)


def test_joint_zones_of_both_rounds_find_the_point_masses_with_less_noise():
    """200,000 people at ε = 2: both halves of both rounds' reports agree on a zone at each of the five point
    masses, with fewer zones of noise than the 40,000 pilot reports alone show."""
    proto, pilot, second, payload, aggs = _spiky_rounds(2.0, 200_000, 0)
    zones = adaptive._joint_zones(aggs, [pilot, second], FIT_BINS)
    hits, noise = _covered(zones)
    pilot_hits, pilot_noise = _covered(payload.pinned)
    assert hits == 5 and hits >= pilot_hits and noise < pilot_noise


@pytest.mark.parametrize("redetect", [True, False])
def test_estimate_leaves_the_zones_of_both_rounds_out_of_the_smoothing(monkeypatch, redetect):
    """The joint fit gets the zones of both rounds (or, switched off, the payload's); no zones without pins."""
    proto, pilot, second, payload, aggs = _spiky_rounds(2.0, 50_000, 1)
    seen = []
    fit = adaptive._fit
    monkeypatch.setattr(adaptive, "_fit", lambda *a, **k: seen.append(k["pinned"]) or fit(*a, **k))
    monkeypatch.setattr(adaptive, "REDETECT_ZONES", redetect)
    proto.estimate(*aggs, payload=payload)
    zones = adaptive._joint_zones(aggs, [pilot, second], FIT_BINS) if redetect else payload.pinned
    assert zones and zones != (payload.pinned if redetect else ())
    np.testing.assert_array_equal(seen[-1], adaptive._pinned_mask(zones, FIT_BINS))
    unpinned = ldp.AdaptiveDistribution(2.0, (0, 1), adapt=True, pin_point_masses=False)
    unpinned.estimate(*aggs, payload=unpinned.fit_payload(aggs[0]))
    assert seen[-1] is None


# -- privacy of the second round --------------------------------------------------------------------------------

def test_second_round_exact_epsilon_from_a_fitted_payload():
    proto = ldp.AdaptiveDistribution(1.5, (0, 1), n_cells=64, adapt=True)
    pilot = proto.pilot_mechanism()
    payload = proto.fit_payload(pilot.aggregate(pilot.privatize(spiky(5000, 0), rng=1)))
    m = proto.second_mechanism(payload)
    assert isinstance(m, WarpedSquareWave) and m.plan == pilot.plan
    check_exact_epsilon(window_rows(m), 1.5)  # tight: the largest ratio reaches e^1.5
    # the rows are those of the reports: every value's distribution is a mixture of two of them
    rows = window_rows(m)
    for v in (0.0, 0.1, 0.37, 1.0):
        s0, t_up = m.window_starts([v])
        f = Fraction(int(t_up[0]), TWO53)
        exact = [(1 - f) * rows[int(s0[0])].get(j, 0) + f * rows[min(int(s0[0]) + 1, len(rows) - 1)].get(j, 0)
                 for j in range(m.n_cells)]
        np.testing.assert_allclose(m.output_probabilities(v), [float(p) for p in exact], rtol=1e-9)


def test_negative_control_a_plan_for_more_epsilon_is_rejected():
    m = WarpedSquareWave(1.0, (0, 1), knots=(0, 5, 6, 20), n_cells=64)
    planted = window_plan(1.25, m.plan.n_cells, m.plan.m)  # the same grid planned for 1.25 ε
    with pytest.raises(PrivacyViolation):
        check_exact_epsilon([planted.exact_probabilities(s) for s in range(planted.n_positions + 1)], 1.0)


def test_second_round_reports_depend_on_the_pilot_only_through_the_payload():
    """Two collectors with different pilots, handed the same payload, give the same reports for the same words."""
    protos = [ldp.AdaptiveDistribution(1.0, (0, 1), adapt=True) for _ in range(2)]
    pilot = protos[0].pilot_mechanism()
    payload = protos[0].fit_payload(pilot.aggregate(pilot.privatize(spiky(4000, 1), rng=2)))
    other = protos[1].fit_payload(pilot.aggregate(pilot.privatize(spiky(4000, 3), rng=4)))
    assert other != payload
    received = ldp.AdaptivePayload.from_json(json.loads(json.dumps(payload.to_json())))
    x = spiky(3000, 5)
    a = protos[0].second_mechanism(payload).privatize(x, rng=6)
    b = protos[1].second_mechanism(received).privatize(x, rng=6)
    c = WarpedSquareWave(1.0, (0, 1), knots=payload.knots).privatize(x, rng=6)
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.codes, c.codes) and a.spec == b.spec == c.spec
    assert ldp.from_spec(a.spec) == protos[1].second_mechanism(received)


# -- the protocol --------------------------------------------------------------------------------------------

def test_each_person_reports_once():
    proto = ldp.AdaptiveDistribution(2.0, (0, 1), pilot_share=0.25)
    rounds = proto.assign_rounds(100_000, rng=0)
    assert set(np.unique(rounds)) == {0, 1}
    share = np.mean(rounds == 0)
    assert abs(share - 0.25) < 5 * np.sqrt(0.25 * 0.75 / 100_000)
    assert np.array_equal(rounds, proto.assign_rounds(100_000, rng=0))
    d = proto.run(spiky(20_000, 0), rng=1)
    assert d.n_reports == 20_000


def test_run_equals_the_round_by_round_protocol():
    proto = ldp.AdaptiveDistribution(2.0, (0, 1), adapt=True)
    x = spiky(20_000, 2)
    d = proto.run(x, rng=7)
    from ldpnum._random import child_rng

    rounds = proto.assign_rounds(x.size, child_rng(7, 0))
    pilot = proto.pilot_mechanism()
    pilot_agg = pilot.aggregate(pilot.privatize(x[rounds == 0], rng=child_rng(7, 1)))
    second = proto.second_mechanism(proto.fit_payload(pilot_agg))
    second_agg = second.aggregate(second.privatize(x[rounds == 1], rng=child_rng(7, 2)))
    assert proto.estimate(pilot_agg, second_agg) == d


def test_switch_falls_back_on_smooth_data_and_adapts_on_spikes():
    proto = ldp.AdaptiveDistribution(1.0, (0, 1))
    pilot = proto.pilot_mechanism()
    smooth = np.random.default_rng(0).beta(5, 2, 20_000)
    payload = proto.fit_payload(pilot.aggregate(pilot.privatize(smooth, rng=1)))
    assert payload.design == "plain" and payload.knots == ()
    assert proto.second_mechanism(payload) == pilot
    # at ε = 4 the spikes are clear in 50,000 pilot reports (no smoothing chosen); in 20,000 this sample's pilot
    # keeps one pass, confirmed, and falls back
    sharp = ldp.AdaptiveDistribution(4.0, (0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldp.PointMassWarning)
        spikes = sharp.fit_payload(sharp.pilot_mechanism().aggregate(sharp.pilot_mechanism().privatize(
            spiky(50_000, 0), rng=1)))
    assert spikes.design == "warped"
    # falling back, the two rounds are one Square Wave collection, estimated as one
    x = np.random.default_rng(2).beta(5, 2, 40_000)
    d = proto.run(x, rng=3)
    assert d.method == "ems-cv" and d.spec == pilot.spec


def _pilot_estimate(p, smoothing, fallback=False):
    p = np.asarray(p, dtype=np.float64)
    return ldp.DistributionEstimate(np.linspace(0, 1, p.size + 1), p / p.sum(), smoothing=smoothing,
                                    smoothing_fallback=fallback)


def test_mass_span_against_a_sort():
    """The fewest buckets (largest first) holding 90% of the mass, as a share of the buckets, against a plain
    loop; a uniform histogram needs 90% of them, one point mass one bucket."""
    rng = np.random.default_rng(5)
    for p in (np.ones(1024), np.r_[1.0, np.zeros(99)], rng.dirichlet(np.full(64, 0.3)), rng.lognormal(0, 2, 300)):
        q = sorted(p / p.sum(), reverse=True)
        k, acc = 0, 0.0
        while acc < 0.9 * (1 - 1e-12):
            acc += q[k]
            k += 1
        assert mass_span(p) == pytest.approx(k / len(p))
    assert mass_span(np.ones(1024)) == pytest.approx(922 / 1024)
    with pytest.raises(ValueError, match="no buckets"):
        mass_span([])


def test_switch_rule_on_each_kind_of_pilot():
    """adapt="auto": no smoothing warps; one pass warps only when no smoothing scored higher but was not
    confirmed, when the mass sits on under a tenth of the bounds (a tail on wide bounds) or when the pilot's
    plain-EM histogram shows a clear point mass; more smoothing, or one pass on a spread-out density (the
    Gaussian whose warped rounds under-smoothed), stays plain."""
    bulk = np.exp(-0.5 * ((np.arange(1024) - 512) / 102.4) ** 2)   # N(0.5, 0.1²) on 1024 buckets
    tail = np.r_[np.linspace(30, 1, 40), np.full(984, 1e-3)]        # 90% of the mass in 4% of the buckets
    assert mass_span(bulk) > 0.3 and mass_span(tail) < ADAPT_SPAN
    assert adapts(_pilot_estimate(bulk, 0))
    assert not adapts(_pilot_estimate(bulk, 1))
    assert adapts(_pilot_estimate(bulk, 1, fallback=True))
    assert adapts(_pilot_estimate(tail, 1))
    assert not adapts(_pilot_estimate(tail, 2)) and not adapts(_pilot_estimate(bulk, 4, fallback=True))
    assert not adapts(_pilot_estimate(bulk, None))
    # a point mass in the pilot's plain-EM histogram (256 buckets): 8% of the people at one value warps a pilot at
    # one pass; 4% (about what a smooth density's noise shows there) does not
    background = np.full(256, 1.0)
    for share, warps in ((0.08, True), (0.04, False)):
        hist = background / background.sum() * (1 - share)
        hist[100:103] += share / 3
        assert adapts(_pilot_estimate(bulk, 1), hist) is warps
        assert adapts(_pilot_estimate(bulk, 0), hist) and not adapts(_pilot_estimate(bulk, 2), hist)


def test_plain_fallback_is_one_round_on_everyone():
    """Falling back, the estimate is SW + ems-cv of all n people's reports: the same reports, one merged aggregate,
    so the protocol equals one round exactly (never worse)."""
    proto = ldp.AdaptiveDistribution(1.0, (0, 1))
    sw = proto.pilot_mechanism()
    x = np.random.default_rng(8).beta(5, 2, 30_000)
    reports = sw.privatize(x, rng=9)                    # each person's one Square Wave report
    rounds = proto.assign_rounds(x.size, rng=10)
    pilot_agg, second_agg = sw.aggregate(reports[rounds == 0]), sw.aggregate(reports[rounds == 1])
    payload = proto.fit_payload(pilot_agg)
    assert payload.design == "plain" and proto.second_mechanism(payload) == sw
    one_round = sw.estimate_distribution(sw.aggregate(reports))
    assert proto.estimate(pilot_agg, second_agg) == one_round
    assert np.array_equal(proto.estimate(pilot_agg, second_agg).probabilities, one_round.probabilities)


def test_joint_fit_matches_dense_em():
    """The joint kernel's map against plain NumPy EM with the dense transitions (plain and warped), 30 iterations
    (step by step, so without SQUAREM)."""
    sw = ldp.SquareWave(1.0, (0, 1), n_cells=128)
    w = WarpedSquareWave(1.0, (0, 1), knots=(0, 1, 30, 31, 40), n_cells=128)
    x = spiky(4000, 4)
    a, b = sw.aggregate(sw.privatize(x[:1000], rng=1)).counts, w.aggregate(w.privatize(x[1000:], rng=2)).counts
    ta, tb = window_transition_from_plan(sw.plan, 64), w.transition(64)
    ma, mb = ta.dense(), tb.dense()
    p = np.full(64, 1 / 64)
    for _ in range(30):
        p = p * (ma.T @ (a / (ma @ p)) + mb.T @ (b / (mb @ p))) / (a.sum() + b.sum())
    res = joint_expectation_maximization([(a, ta), (b, tb)], max_iter=30, accelerate=False)
    if res.n_iter == 30:
        np.testing.assert_allclose(res.x, p, rtol=1e-9, atol=1e-15)
    else:  # stopped earlier by the 1e-3-nat rule: compare at its iteration count
        q = np.full(64, 1 / 64)
        for _ in range(res.n_iter):
            q = q * (ma.T @ (a / (ma @ q)) + mb.T @ (b / (mb @ q))) / (a.sum() + b.sum())
        np.testing.assert_allclose(res.x, q, rtol=1e-9, atol=1e-15)


def test_bootstrap_intervals_of_a_warped_collection():
    proto = ldp.AdaptiveDistribution(2.0, (0, 1), adapt=True)
    x = spiky(20_000, 6)
    d = proto.run(x, rng=1, bootstrap=20)
    assert d.replicates.shape == (20, d.n_bins)
    ci = d.range(0.25, 0.5, ci=0.9)
    truth = np.mean((x >= 0.25) & (x < 0.5))
    assert ci.low <= ci.estimate <= ci.high and ci.high - ci.low < 0.1 and abs(ci.estimate - truth) < 0.05


# -- bad input: one clear error, nothing drawn ---------------------------------------------------------------

def test_pilot_too_small_to_fit():
    proto = ldp.AdaptiveDistribution(1.0, (0, 1))
    pilot = proto.pilot_mechanism()
    agg = pilot.aggregate(pilot.privatize(np.full(MIN_PILOT_REPORTS - 1, 0.5), rng=0))
    with pytest.raises(ValueError, match="pilot has 1,999 reports"):
        proto.fit_payload(agg)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="pilot reports"):
        proto.run(np.full(5000, 0.5), rng=gen)
    assert gen.bit_generator.state == state


def test_payload_for_another_collection_is_refused():
    proto = ldp.AdaptiveDistribution(1.0, (0, 1))
    payload = ldp.AdaptiveDistribution(1.0, (0, 1), adapt=True).fit_payload(
        proto.pilot_mechanism().aggregate(proto.pilot_mechanism().privatize(spiky(4000, 0), rng=0)))
    for other, what in ((ldp.AdaptiveDistribution(2.0, (0, 1)), "epsilon"),
                        (ldp.AdaptiveDistribution(1.0, (0, 2)), "bounds"),
                        (ldp.AdaptiveDistribution(1.0, (0, 1), n_cells=2048), "n_cells")):
        with pytest.raises(ValueError, match=f"payload: {what}"):
            other.second_mechanism(payload)
    with pytest.raises(TypeError, match="AdaptivePayload"):
        proto.second_mechanism(payload.to_json())
    with pytest.raises(ValueError, match="adaptive payload"):
        ldp.AdaptivePayload.from_json('{"epsilon": 1}')
    pinned = ldp.AdaptivePayload(1.0, (0, 1), "warped", (0, 3, 8), "p", 64, ((3, 9), (40, 47)))
    assert ldp.AdaptivePayload.from_json(pinned.to_json()) == pinned
    for zones in (((3, 9), (9, 12)), ((5, 5),), ((0, 2000),), ((1, 2, 3),)):
        with pytest.raises(ValueError, match="pinned"):
            ldp.AdaptivePayload(1.0, (0, 1), "warped", (0, 3, 8), "p", 64, zones)
    with pytest.raises(ValueError, match="plain payload pins"):
        ldp.AdaptivePayload(1.0, (0, 1), "plain", (), "p", 64, ((3, 9),))
    with pytest.raises(ldp.SpecMismatchError):
        proto.fit_payload(ldp.SquareWave(2.0, (0, 1)).empty_aggregate())
    # the estimate refuses a payload whose warp is not the one the second round's reports used
    second = ldp.AdaptiveDistribution(1.0, (0, 1), adapt=True).second_mechanism(payload)
    pilot = proto.pilot_mechanism()
    other = ldp.AdaptivePayload(1.0, (0, 1), "warped", (0, 1, 2), payload.pilot, payload.n_cells)
    with pytest.raises(ValueError, match="knots"):
        proto.estimate(pilot.empty_aggregate(), second.empty_aggregate(), payload=other)


@pytest.mark.parametrize("knots, error", [((0,), ValueError), ((1, 5), ValueError), ((0, 5, 5), ValueError),
                                          ((0, 2.5), TypeError), ("0,5", TypeError)])
def test_bad_knots(knots, error):
    with pytest.raises(error, match="knots"):
        WarpedSquareWave(1.0, (0, 1), knots=knots)


@pytest.mark.parametrize("kwargs, error", [(dict(pilot_share=0.0), ValueError), (dict(pilot_share=1), ValueError),
                                           (dict(pilot_share="0.2"), TypeError), (dict(adapt="yes"), ValueError),
                                           (dict(n_segments=0), ValueError)])
def test_bad_parameters(kwargs, error):
    with pytest.raises(error):
        ldp.AdaptiveDistribution(1.0, (0, 1), **kwargs)
