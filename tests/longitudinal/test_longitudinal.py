"""Common checks over every longitudinal (memoized) mechanism (DESIGN.md R8, R9), like tests/common/test_common.py
for the one-shot ones: a mechanism is checked by adding one entry to :data:`LCASES`.

Each mechanism composes a permanent plan (keyed by the person's key) and an instantaneous plan (fresh words):
- exact ε1 (one report) and ε∞ (the permanent layer) from the composed plans, at most the stated values and
  tight, and a planted bug (the instantaneous layer removed) that the check rejects;
- the kernels' sampled outputs match the exact plans (chi-square over people, alpha = 1e-6): the permanent layer
  over keys (different keys give independent answers), the reports over keys and words;
- memoization: the same key and value give the same permanent answer across calls, chunks, threads and processes;
- seeded reproducibility of reports, in chunks; rounds in the spec (aggregates of two rounds do not merge);
- bad input refused with one clear error before anything is drawn.
"""

import hashlib
import math
import os
import subprocess
import sys
from dataclasses import dataclass, field
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

import ldpnum as ldp
from ldpnum._kernels import client_hashing
from ldpnum.base import memoized_mechanisms
from ldpnum.exceptions import SpecMismatchError

ALPHA = 1e-6


@dataclass
class LCase:
    """How the checks read one longitudinal mechanism.

    ``settings``: keyword arguments of a few instances. ``inputs(m)``: ``[(value, state), ...]``, values to
    privatize and the memoized state :meth:`permanent_probabilities`/:meth:`report_probabilities` take for them.
    ``valid(m, n, rng)``: ``n`` valid values. ``bad(m)``: ``[(values, exception), ...]`` refused inputs.
    ``permanent_key(m, perm)`` / ``report_key(m, reports)``: each person's permanent output / report as the int
    the exact plans key it by (default: the codes themselves). ``mechanism``: the registered name, when the entry's
    name is that of a mode of it (default: the entry's name).
    """

    settings: list
    inputs: Callable
    valid: Callable
    bad: Callable = lambda m: []
    permanent_key: Callable = lambda m, perm: np.asarray(perm).astype(np.int64)
    report_key: Callable = lambda m, reports: reports.codes.astype(np.int64)
    n_people: int = 20_000
    extra: dict = field(default_factory=dict)
    mechanism: str = ""


def categories(m, n, rng):
    return rng.integers(0, m.k, n)


def hashed_relabel(m, codes, value=0):
    """LOLOHA: each output relative to the person's hashed value ``h(value)`` under the seed in its code's high bits
    (0: ``h(value)`` itself; ``j + 1``: the ``j``-th other hashed value), as the plans of hashed value 0 key them
    (GRR's plans are the same for every hashed value up to this relabelling, exactly for the permanent layer and
    within 2**-64 relatively for the composition)."""
    codes = np.asarray(codes, dtype=np.uint64)
    h = np.empty(codes.shape[0], dtype=np.int64)
    client_hashing.local_hash_probe(codes, np.full(codes.shape[0], value, dtype=np.int64), m.g, h)
    y = (codes & np.uint64(0xFFFF)).astype(np.int64)
    return np.where(y == h, 0, np.where(y < h, y + 1, y))


def packed_key(codes):
    """Bit-packed vectors ``(n, n_bytes)`` as the integers the exact plans key them by (bit j = bit j of the int)."""
    codes = np.asarray(codes, dtype=np.uint8)
    return sum(codes[:, j].astype(np.int64) << (8 * j) for j in range(codes.shape[1]))


def bounded_values(m, n, rng):
    low, high = m.bounds
    return rng.uniform(low, high, n)


LCASES = {
    "lgrr": LCase(
        [dict(epsilon_permanent=2.0, epsilon_report=1.0, k=4), dict(epsilon_permanent=4.0, epsilon_report=0.5, k=2),
         dict(epsilon_permanent=1.0, epsilon_report=0.9, k=5)],
        lambda m: [(0, 0), (m.k - 1, m.k - 1)], categories,
        lambda m: [(np.array([0, m.k]), ValueError), (np.array([0.5, 1.0]), TypeError)]),
    # RAPPOR: one cohort and k = 8, so a value's Bloom filter (the state of the exact plans) is the same for every
    # key and the 2**8 bit vectors can be enumerated; the report's first byte is its bits.
    "rappor": LCase(
        [dict(k=8, h=2, cohorts=1), dict(k=8, h=1, cohorts=1, f=0.25, p=0.25, q=0.875),
         dict(k=8, h=3, cohorts=1, f=0.3, p=0.1, q=0.8)],
        lambda m: [(v, int(np.bitwise_or.reduce(1 << m.bloom_bits([v])[0, 0]))) for v in ("apple", "pear")],
        lambda m, n, rng: np.array([f"item{i}" for i in rng.integers(0, 20, n)], dtype=object),
        lambda m: [(np.array([1, 2]), TypeError), (np.array(["a", None], dtype=object), ValueError),
                   (np.array([0.5]), TypeError)],
        permanent_key=lambda m, perm: np.asarray(perm)[:, 0].astype(np.int64),
        report_key=lambda m, reports: reports.codes[:, 0].astype(np.int64)),
    # RAPPOR with segments (the Segment Pair Method): two segments of 4 bits, so one position pair whose segment pair
    # item is the item itself, and one cohort: both filters are the item's, the same for every key. The exact plans
    # are the item filter's (the report's first byte; the pair filter's bits: tests/longitudinal/test_rappor_spm.py);
    # ε1 and ε∞ are those of both filters.
    "rappor_segments": LCase(
        [dict(k=8, h=1, cohorts=1, segments=2, segment_bits=4, item_type="uint"),
         dict(k=8, h=2, cohorts=1, f=0.25, p=0.25, q=0.875, segments=2, segment_bits=4, item_type="uint"),
         dict(k=8, h=2, cohorts=1, segments=2, segment_bits=8, item_type="bytes")],
        lambda m: [(v, int(np.bitwise_or.reduce(1 << m.bloom_bits([v])[0, 0])))
                   for v in ((0x5A, 0xC3) if m.item_type == "uint" else (b"ok", b"no"))],
        lambda m, n, rng: (rng.integers(0, 256, n) if m.item_type == "uint"
                           else np.array([bytes(b) for b in rng.integers(1, 256, (n, 2), dtype=np.uint8)],
                                         dtype=object)),
        lambda m: ([(np.array([1, 256]), ValueError), (np.array(["a"], dtype=object), TypeError),
                    (np.array([0.5]), TypeError)] if m.item_type == "uint"
                   else [(np.array([b"abc"], dtype=object), ValueError), (np.array([1, 2]), TypeError)]),
        permanent_key=lambda m, perm: np.asarray(perm)[:, 0].astype(np.int64),
        report_key=lambda m, reports: reports.codes[:, 0].astype(np.int64), mechanism="rappor"),
    "losue": LCase(
        [dict(epsilon_permanent=2.0, epsilon_report=1.0, k=4), dict(epsilon_permanent=4.0, epsilon_report=0.5, k=2),
         dict(epsilon_permanent=1.0, epsilon_report=0.9, k=3)],
        lambda m: [(0, 0), (m.k - 1, m.k - 1)], categories,
        lambda m: [(np.array([0, m.k]), ValueError), (np.array([0.5, 1.0]), TypeError)],
        permanent_key=lambda m, perm: packed_key(perm), report_key=lambda m, reports: packed_key(reports.codes)),
    "loloha": LCase(
        [dict(epsilon_permanent=2.0, epsilon_report=1.0, k=10), dict(epsilon_permanent=4.0, epsilon_report=0.5, k=6, g=2),
         dict(epsilon_permanent=1.0, epsilon_report=0.9, k=20, g=5)],
        lambda m: [(0, 0)], categories,
        lambda m: [(np.array([0, m.k]), ValueError), (np.array([0.5, 1.0]), TypeError)],
        permanent_key=lambda m, perm: hashed_relabel(m, perm), report_key=lambda m, reports: hashed_relabel(
            m, reports.codes)),
    # Telemetry (tests/longitudinal/test_telemetry.py checks γ = 0 and the estimators): the bounds are the only
    # values whose grid point does not depend on the person's offset.
    "memoized_one_bit_mean": LCase(
        [dict(epsilon=2.0, bounds=(0, 100), memoize=True, grid_points=5, gamma=0.1),
         dict(epsilon=0.5, bounds=(-1, 1), memoize=True, grid_points=2, gamma=0.3),
         dict(epsilon=4.0, bounds=(0, 3600), memoize=True, grid_points=100, gamma=0.01)],
        lambda m: [(m.bounds[0], 0), (m.bounds[1], m.grid_points - 1)], bounded_values,
        lambda m: [(np.array([0.0, np.nan]), ValueError), (np.array(["a", "b"]), TypeError)]),
    "memoized_d_bit_flip": LCase(
        [dict(epsilon=2.0, bounds=(0, 60), buckets=6, d=2, memoize=True, gamma=0.1),
         dict(epsilon=1.0, bounds=(0, 1), buckets=5, d=1, memoize=True, gamma=0.2),
         dict(epsilon=4.0, bounds=(-5, 5), buckets=4, d=3, memoize=True, gamma=0.05)],
        lambda m: [(m.bounds[0], 0), (m.bounds[1], m.buckets - 1)], bounded_values,
        lambda m: [(np.array([0.0, np.inf]), ValueError), (np.array(["a", "b"]), TypeError)]),
}


def _mechanism(name):
    return LCASES[name].mechanism or name


def _instances():
    out = [pytest.param(name, None, id=f"{name}-0") for name in memoized_mechanisms()
           if name not in {_mechanism(c) for c in LCASES}]
    for name, case in LCASES.items():
        for i, kw in enumerate(case.settings):
            out.append(pytest.param(name, kw, id=f"{name}-{i}"))
    return out


INSTANCES = _instances()


def build(name, kw):
    if name not in LCASES:
        pytest.fail(f"longitudinal mechanism {name!r} has no entry in tests/longitudinal/test_longitudinal.py LCASES")
    return memoized_mechanisms()[_mechanism(name)](**kw)


def test_every_memoized_mechanism_has_a_case():
    assert {_mechanism(name) for name in LCASES} == set(memoized_mechanisms())


def test_memoized_mechanisms_are_not_listed_with_the_one_shot_ones():
    assert not set(memoized_mechanisms()) & set(ldp.base.registered())
    for name, cls in memoized_mechanisms().items():
        assert ldp.base.lookup(name) is cls


# -- exact ε ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kw", INSTANCES)
def test_realized_epsilons_are_tight(name, kw):
    m = build(name, kw)
    eps1, eps_inf = m.realized_epsilons()
    assert eps1 <= m.epsilon_report and eps_inf <= m.epsilon_permanent
    assert eps1 == pytest.approx(m.epsilon_report, rel=1e-6)
    assert eps_inf == pytest.approx(m.epsilon_permanent, rel=1e-6)


@pytest.mark.parametrize("name, kw", INSTANCES)
def test_epsilon_check_rejects_a_missing_instantaneous_layer(name, kw, monkeypatch):
    # Negative control: reports that are the permanent answers themselves leak ε∞ per report, and the check sees it.
    m = build(name, kw)
    monkeypatch.setattr(type(m), "instantaneous_probabilities", lambda self, z: {z: 1})
    eps1, _ = m.realized_epsilons()
    assert eps1 > m.epsilon_report * (1 + 1e-3)


@pytest.mark.parametrize("name, kw", INSTANCES)
def test_spec_round_trip_and_epsilons(name, kw):
    m = build(name, kw)
    assert ldp.from_spec(m.spec) == m
    assert m.epsilon == m.epsilon_report < m.epsilon_permanent
    assert "key" not in m.spec.to_json().lower()



@pytest.mark.parametrize("name, kw", INSTANCES)
def test_repr_is_the_constructor_call_then_the_round(name, kw):
    m = build(name, kw)
    assert eval(repr(m), vars(ldp)) == m  # the constructor call that builds it
    assert repr(m.at_round(3)) == repr(m)[:-1] + ", round=3)"

# -- sampled outputs against the exact plans ----------------------------------------------------------------

def _chisquare(observed_keys, probs, n):
    """p-value of the observed keys against ``{key: Fraction}`` (cells with expected < 5 pooled)."""
    keys = sorted(probs)
    expected = np.array([float(probs[k]) for k in keys]) * n
    index = {k: i for i, k in enumerate(keys)}
    obs = np.zeros(len(keys))
    for k, c in zip(*np.unique(observed_keys, return_counts=True)):
        assert int(k) in index, f"output {int(k)} has probability 0 in the plan"
        obs[index[int(k)]] = c
    small = expected < 5
    if small.any():
        expected = np.append(expected[~small], expected[small].sum())
        obs = np.append(obs[~small], obs[small].sum())
    return stats.chisquare(obs, expected * obs.sum() / expected.sum()).pvalue


@pytest.mark.parametrize("name, kw", INSTANCES)
def test_permanent_answers_over_keys_follow_the_permanent_plan(name, kw):
    m, case = build(name, kw), LCASES[name]
    n = case.n_people
    for j, (value, state) in enumerate(case.inputs(m)):
        keys = ldp.ClientKeys.generate(n, rng=100 + j)
        perm = m.permanent(np.full(n, value) if not isinstance(value, (str, bytes)) else [value] * n, keys=keys)
        assert _chisquare(case.permanent_key(m, perm), m.permanent_probabilities(state), n) > ALPHA


@pytest.mark.parametrize("name, kw", INSTANCES)
def test_reports_follow_the_composed_plan(name, kw):
    m, case = build(name, kw), LCASES[name]
    n = case.n_people
    for j, (value, state) in enumerate(case.inputs(m)):
        keys = ldp.ClientKeys.generate(n, rng=200 + j)
        x = np.full(n, value) if not isinstance(value, (str, bytes)) else [value] * n
        reports = m.privatize(x, keys=keys, rng=300 + j)
        assert _chisquare(case.report_key(m, reports), m.report_probabilities(state), n) > ALPHA


def test_chisquare_rejects_permanent_answers_that_ignore_the_key():
    # Negative control of the check above: one key for everyone gives one permanent answer, not the plan.
    m = ldp.LGRR(2.0, 1.0, 4)
    keys = ldp.ClientKeys.from_array(np.repeat(ldp.ClientKeys.generate(1, rng=1).to_array(), 5000, axis=0))
    perm = m.permanent(np.zeros(5000, dtype=np.int64), keys=keys)
    assert _chisquare(perm.astype(np.int64), m.permanent_probabilities(0), 5000) < ALPHA


# -- memoization and reproducibility ----------------------------------------------------------------------

@pytest.mark.parametrize("name, kw", INSTANCES)
def test_same_key_and_value_give_the_same_permanent_answer(name, kw):
    m, case = build(name, kw), LCASES[name]
    x = case.valid(m, 3000, np.random.default_rng(1))
    keys = ldp.ClientKeys.generate(3000, rng=2)
    whole = m.permanent(x, keys=keys)
    assert np.array_equal(whole, m.permanent(x, keys=keys))
    chunks = np.concatenate([m.permanent(x[a:b], keys=keys[a:b]) for a, b in ((0, 1), (1, 1500), (1500, 3000))])
    assert np.array_equal(whole, chunks)
    other = m.permanent(x, keys=ldp.ClientKeys.generate(3000, rng=3))
    assert not np.array_equal(whole, other)


@pytest.mark.parametrize("name, kw", INSTANCES)
def test_seeded_reports_are_reproducible_in_chunks(name, kw):
    m, case = build(name, kw), LCASES[name]
    x = case.valid(m, 2000, np.random.default_rng(4))
    keys = ldp.ClientKeys.generate(2000, rng=5)
    a = m.privatize(x, keys=keys, rng=6)
    assert np.array_equal(a.codes, m.privatize(x, keys=keys, rng=6).codes)
    g = np.random.default_rng(6)
    parts = [m.privatize(x[s:e], keys=keys[s:e], rng=g) for s, e in ((0, 700), (700, 2000))]
    assert np.array_equal(a.codes, np.concatenate([p.codes for p in parts]))


@pytest.mark.parametrize("make, values", [
    ("ldp.LGRR(2.0, 1.0, 8)", "np.arange(5000) % 8"),
    ("ldp.RAPPOR(k=16, h=2, cohorts=4, segments=4, segment_bits=4, item_type='uint')", "np.arange(5000) * 13 % 65536"),
])
def test_permanent_answers_are_the_same_in_other_processes_and_thread_counts(make, values):
    # Compiled kernels (LDPNUM_JIT=compile) on 1 and 2 Numba threads, in fresh processes: the keyed words and the
    # permanent answers (both filters, with RAPPOR's segments) are those of this process.
    m, x = eval(make, {"ldp": ldp, "np": np}), eval(values, {"np": np})
    keys = ldp.ClientKeys.generate(5000, rng=7)
    code = (f"import numpy as np, ldpnum as ldp, numba, hashlib; m = {make}; "
            "k = ldp.ClientKeys.generate(5000, rng=7); "
            f"print(numba.get_num_threads(), hashlib.sha256(m.permanent({values}, keys=k).tobytes()"
            ").hexdigest())")
    want = hashlib.sha256(m.permanent(x, keys=keys).tobytes()).hexdigest()
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads, LDPNUM_JIT="compile")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
        assert out.split() == [threads, want]


def test_memoization_hides_repeated_reports_of_one_value():
    # Averaging attack: many reports of one person's value converge to the permanent answer, not to the value.
    m = ldp.LGRR(1.0, 0.5, 4)
    keys = ldp.ClientKeys.generate(1, rng=8)
    perm = int(m.permanent([2], keys=keys)[0])
    rounds = np.array([int(m.privatize([2], keys=keys, rng=r).codes[0]) for r in range(400)])
    assert np.argmax(np.bincount(rounds, minlength=4)) == perm


# -- rounds -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kw", INSTANCES)
def test_rounds_do_not_merge(name, kw):
    m, case = build(name, kw), LCASES[name]
    x = case.valid(m, 500, np.random.default_rng(9))
    keys = ldp.ClientKeys.generate(500, rng=10)
    r1, r2 = (m.privatize(x, keys=keys, rng=r, round=r) for r in (1, 2))
    assert r1.spec.get("round") == 1 and ldp.from_spec(r1.spec) == m.at_round(1) != m
    assert m.at_round(1).round == 1 and m.at_round(1).at_round(None) == m and m.at_round(1).tweak == m.tweak
    assert np.array_equal(m.at_round(2).privatize(x, keys=keys, rng=2).codes, r2.codes)
    a1, a2 = m.aggregate(r1), m.aggregate(r2)
    with pytest.raises(SpecMismatchError, match="round"):
        m.at_round(1).aggregate(r2)
    assert a1.spec == r1.spec and (a1 + m.aggregate(m.privatize(x, keys=keys, rng=3, round=1))).n_reports == 1000
    with pytest.raises(SpecMismatchError, match="round"):
        a1 + a2
    assert m.at_round(2).empty_aggregate() + a2 == a2


# -- bad input ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kw", INSTANCES)
def test_bad_input_is_refused_before_anything_is_drawn(name, kw):
    m, case = build(name, kw), LCASES[name]
    x = case.valid(m, 10, np.random.default_rng(11))
    keys = ldp.ClientKeys.generate(10, rng=12)
    bad = [(dict(x=x), TypeError, "key"),  # no keys
           (dict(x=x, keys=keys[:9]), ValueError, "keys for 9 people but there are 10 values"),
           (dict(x=x, keys=np.zeros(3)), TypeError, "ClientKeys|uint64|shape"),
           (dict(x=x, keys=keys, round=-1), ValueError, "round"),
           (dict(x=x, keys=keys, round=True), TypeError, "round"),
           (dict(x=x, keys=keys, round=1.5), TypeError, "round")]
    bad += [(dict(x=v, keys=ldp.ClientKeys.generate(len(v), rng=1)), err, None) for v, err in case.bad(m)]
    for kwargs, err, match in bad:
        g = np.random.default_rng(13)
        before = g.bit_generator.state
        with pytest.raises(err, match=match):
            m.privatize(kwargs.pop("x"), rng=g, **kwargs)
        assert g.bit_generator.state == before


def test_epsilons_are_checked():
    with pytest.raises(ValueError, match="epsilon_report must be below epsilon_permanent"):
        ldp.LGRR(1.0, 1.0, 4)
    with pytest.raises(ValueError, match="epsilon_permanent must be"):
        ldp.LGRR(0.0, 0.5, 4)
    with pytest.raises(TypeError, match="epsilon_report must be"):
        ldp.LGRR(1.0, "0.5", 4)


def test_keys_never_enter_reports_or_aggregates():
    m = ldp.LGRR(2.0, 1.0, 4)
    keys = ldp.ClientKeys.generate(100, rng=14)
    r = m.privatize(np.arange(100) % 4, keys=keys, rng=1)
    text = r.spec.to_json() + repr(r) + repr(m.aggregate(r).spec)
    for word in keys.to_array().ravel()[:10]:
        assert str(int(word)) not in text
    assert math.isfinite(m.epsilon_permanent)
