"""The attack: hostile and unusual inputs against every mechanism, with two outcomes allowed.

TESTING.md ("The matrix over everything"): every registered mechanism — those taking one value per person
(:func:`ldpnum.mechanisms.registered`, whose per-kind matrices are in test_common.py) and those taking one
vector or row per person (unit vectors, bounded vectors, HDG's and Marginals' column groups) — meets hostile
containers, edited aggregates, merged parts and serialized specs and aggregates it never saw. The only outcomes
allowed are

* **one clear error, nothing drawn**: a TypeError (wrong kind) or ValueError (wrong value) whose message
  names the argument (``x``, ``spec``, ``aggregate``...), raised before any random word is drawn; never an
  error that leaks the implementation (KeyError, AttributeError, OverflowError, NumPy's own messages);
* **the right answer**: the input is accepted and means what it says (a scalar is one value; a Series with
  any index is its values in order; a masked array with nothing masked is its data).

Each family's own files add the attacks only it can meet (items with zero bytes, set payloads, ledgers);
this file is the part that grows by itself: a new mechanism is attacked by registering it (and, for vector
mechanisms, adding one line to :data:`VECTOR_CASES`).
"""

import functools
import inspect
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum import base as _base
from ldpnum.mechanisms import registered

from test_common import CASES, build, case_of, valid_input

#: Errors that name what went wrong in the library's words. InvalidValuesError and SpecMismatchError
#: subclass ValueError.
CLEAR = (TypeError, ValueError)
#: Messages that are NumPy's, Python's or Numba's own, not ldpnum's: never acceptable to a user.
FOREIGN = ("inhomogeneous", "setting an array element", "could not convert", "object has no attribute",
           "unsupported operand", "not supported between", "invalid literal", "cannot convert float",
           "out of bounds for", "too large to convert", "codec can't", "missing 1 required", "unexpected keyword")


def _load_vectors():
    _base._load_builtins()
    return dict(_base._VECTOR_REGISTRY)


VECTOR_REGISTRY = _load_vectors()
UNIT = ("priv_hs", "priv_unit", "priv_unit_g", "sqkr")

#: One small instance of each vector mechanism (one vector, or one row of columns, per person).
#: One instance per vector mechanism; a case that takes ``d`` builds the mechanism at that dimension
#: (bench/startup.py measures first calls at d = 1024 from it).
VECTOR_CASES = {
    "duchi_multivariate": lambda d=3: ldp.DuchiMultivariate(1.0, [(0.0, 1.0)] * d),
    "sampled_dimensions": lambda d=3: ldp.SampledDimensions("piecewise", 4.0, [(0.0, 1.0)] * d, k=2),
    "priv_hs": lambda d=3: ldp.PrivHS(2.0, d),
    "priv_unit": lambda d=3: ldp.PrivUnit(3.0, d),
    "priv_unit_g": lambda d=3: ldp.PrivUnitG(2.0, d),
    "sqkr": lambda d=3: ldp.SQKR(3.0, d),
    "hdg": lambda: ldp.HDG(2.0, {"x": (0, 1), "y": (0, 1), "z": (0, 1)}, n=1000),
    "marginals": lambda: ldp.Marginals(4.0, {"a": 3, "b": 3, "c": 2}),
}
VECTOR_NAMES = list(VECTOR_REGISTRY)
ALL_NAMES = list(registered()) + VECTOR_NAMES


def test_every_vector_mechanism_has_a_case():
    assert set(VECTOR_CASES) == set(VECTOR_REGISTRY), (
        f"vector mechanisms without an attack case: {sorted(set(VECTOR_REGISTRY) - set(VECTOR_CASES))}")


def takes_dimension(name):
    """Whether the vector case of ``name`` builds its mechanism at a given dimension."""
    return name in VECTOR_CASES and "d" in inspect.signature(VECTOR_CASES[name]).parameters


def make(name, d=None):
    """The first instance of ``name``'s case (at dimension ``d`` for a vector case that takes one)."""
    if name in VECTOR_CASES:
        return VECTOR_CASES[name]() if d is None else VECTOR_CASES[name](d)
    return build(name, **case_of(name).settings[0])


def good_input(name, m, n, seed=0):
    """``n`` valid inputs of ``m`` (rows for vector mechanisms)."""
    if name not in VECTOR_CASES:
        return valid_input(m, n, seed)
    rng = np.random.default_rng(seed)
    if name == "marginals":
        return np.stack([rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(0, 2, n)], axis=1)
    if name in UNIT:
        v = rng.normal(size=(n, m.dim))
        return 0.9 * v / np.linalg.norm(v, axis=1, keepdims=True)
    return rng.uniform(0.0, 1.0, (n, m.dim))


@pytest.fixture
def draws(monkeypatch):
    """The number of random words drawn since the test began (a list, appended to by every draw)."""
    seen = []
    original = _random.WordSource.draw

    def spy(self, n):
        seen.append(int(n))
        return original(self, n)

    monkeypatch.setattr(_random.WordSource, "draw", spy)
    return seen


def attack(call, draws, subject="x"):
    """Run ``call``: it must raise one clear error naming ``subject`` with nothing drawn, or succeed.
    Returns the result (None when it raised)."""
    del draws[:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call()
    except CLEAR as exc:
        msg = str(exc)
        assert not draws, f"{type(exc).__name__} raised after {sum(draws)} random words were drawn: {msg}"
        assert not any(f in msg for f in FOREIGN), f"foreign message: {type(exc).__name__}: {msg}"
        assert subject in msg, f"the message does not name {subject!r}: {msg}"
        return None


def refused(call, draws, subject="x"):
    """Run ``call``: it must raise one clear error naming ``subject`` with nothing drawn. Returns the error."""
    try:
        got = attack(call, draws, subject)
    except CLEAR:
        raise
    del draws[:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except CLEAR as exc:
        assert got is None
        return exc
    pytest.fail(f"accepted: {got!r}")


# -- hostile containers ---------------------------------------------------------------------------------------

def hostile_values(name, m):
    """``(label, x, outcome)``: containers NumPy would misread. ``outcome`` is ``"error"`` (a clear error is
    the only right answer), or ``("same", y)``: accepted as ``y``, or ``("either", y)``: refused, or accepted
    as ``y`` (a scalar item: a lone string is refused rather than read as a sequence of characters)."""
    v = good_input(name, m, 4)
    kind = "vector" if name in VECTOR_CASES else CASES[name].kind
    out = [("dict", {"a": 1}, "error"), ("none", None, "error"), ("generator", (t for t in [1, 2]), "error"),
           ("text numbers", ["1", "2"], "error"), ("bytes object", b"abc", "error")]
    masked = np.ma.array(v, mask=np.zeros(np.shape(v), dtype=bool))
    masked[1] = np.ma.masked
    out.append(("masked entry", masked, "error"))
    out.append(("masked nothing", np.ma.array(v, mask=np.zeros(np.shape(v), dtype=bool)), ("same", v)))
    if kind == "sets":
        out.append(("nested set", [[0, 1], [[0]]], "error"))
        return out
    if kind == "vector":
        out += [("ragged rows", [list(v[0]), list(v[1][:2])], "error"),
                ("one row", v[0], "error"), ("rows of rows", v[None], "error")]
        if name not in ("marginals", "hdg"):
            out.append(("indexed frame", pd.DataFrame(v, index=[7, 3, 9, 1]), ("same", v)))
        return out
    out += [("ragged", [[v[0], v[1]], [v[2]]], "error"), ("2-D", np.stack([v, v], axis=1), "error"),
            ("indexed series", pd.Series(v, index=[10, 3, 12, 0]), ("same", v)),
            ("scalar", v[0], ("either" if kind == "items" else "same", v[:1]))]
    return out


HOSTILE = [pytest.param(n, i, id=f"{n}-{lab}") for n in ALL_NAMES for i, (lab, _, _) in
           enumerate(hostile_values(n, make(n)))]


@pytest.mark.parametrize("name,i", HOSTILE)
def test_hostile_containers(name, i, draws):
    m = make(name)
    label, x, outcome = hostile_values(name, m)[i]
    got = attack(lambda: m.privatize(x, rng=5), draws)
    if outcome == "error":
        assert got is None, f"{label}: accepted (expected one clear error)"
    elif outcome[0] == "either":
        assert got is None or got == m.privatize(outcome[1], rng=5)
    else:
        assert got is not None, f"{label}: refused, but it means {outcome[1]!r}"
        assert got == m.privatize(outcome[1], rng=5)


VECTOR_BAD = [
    ("text", lambda v: np.array([["a", "b", "c"]] * 2), TypeError),
    ("complex", lambda v: v.astype(complex), TypeError),
    ("datetime", lambda v: np.array([["2020-01-01"] * 3], dtype="datetime64[D]"), TypeError),
    ("object with None", lambda v: np.array([list(v[0]), [None, 0.1, 0.1]], dtype=object), TypeError),
    ("bool", lambda v: np.ones((2, 3), dtype=bool), TypeError),
    ("text column", lambda v: pd.DataFrame({c: (["a"] * len(v) if j == 0 else v[:, j])
                                            for j, c in enumerate("abc")}), (TypeError, ValueError)),
    ("nan", lambda v: np.where(np.arange(v.size).reshape(v.shape) == 3, np.nan, v), ValueError),
    ("inf", lambda v: np.where(np.arange(v.size).reshape(v.shape) == 7, np.inf, v), ValueError),
    ("too few columns", lambda v: v[:, :2], ValueError),
    ("too many columns", lambda v: np.concatenate([v, v[:, :1]], axis=1), ValueError),
    ("empty columns", lambda v: np.zeros((2, 0)), ValueError),
]


@pytest.mark.parametrize("name", VECTOR_NAMES)
@pytest.mark.parametrize("label,bad,exc", VECTOR_BAD, ids=[b[0] for b in VECTOR_BAD])
def test_vector_bad_inputs(name, label, bad, exc, draws):
    """The bad-input matrix for one row per person: kinds, missing values, shapes."""
    m = make(name)
    x = bad(good_input(name, m, 4).astype(np.float64))
    if label == "text column" and name in ("hdg", "marginals"):
        x = x.set_axis(list(m.spec.get("columns")), axis=1)  # the right names, one of them text
    err = refused(lambda: m.privatize(x, rng=5), draws)
    assert isinstance(err, exc), f"{label}: {type(err).__name__}: {err}"
    if label in ("nan", "inf"):
        assert "first at index 1" in str(err) or "first at index 2" in str(err), str(err)
    if label == "text column":
        assert "column" in str(err) and isinstance(err, TypeError), str(err)


# -- aggregates edited ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def collected(name, n=1000):
    """``(mechanism, aggregate)`` of ``n`` valid inputs (built once per name: both are immutable)."""
    m = make(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agg = m.aggregate(m.privatize(good_input(name, m, n), rng=1))
    return m, agg


def estimate(m, data):
    for e in ("estimate_mean", "estimate_frequencies", "estimate_ranges", "estimate_distribution",
              "estimate_heavy_hitters", "estimate_marginals"):
        if m.offers(e):
            if e == "estimate_distribution" and m.name == "sampled_dimensions":
                return m.estimate_distribution(data, 0)
            return getattr(m, e)(data)
    raise AssertionError(f"{m.name} offers no estimator")


@pytest.mark.parametrize("name", ALL_NAMES)
def test_edited_aggregates_are_refused(name, draws):
    """Counts and n_reports that no collection can produce are refused when the aggregate is built (so no
    estimate is ever made from them): n_reports negative, zero with counts, below a count a report can
    reach; counts negative, fractional, of the wrong length."""
    m, agg = collected(name)
    n, counts = agg.n_reports, agg.counts
    # below a count a report can reach (support counts); half (sums of report values, checked statistically)
    below = n // 2 if counts.max() > n else int(counts.max()) - 1
    bad = [dict(n_reports=-1), dict(n_reports=0), dict(n_reports=below)]
    neg = counts.copy()
    neg[0] = -1
    frac = counts.astype(np.float64)
    frac[0] += 0.5
    bad += [dict(counts=neg), dict(counts=frac), dict(counts=counts[:-1]),
            dict(counts=np.concatenate([counts, [0]]))]
    for edit in bad:
        kwargs = {**dict(counts=counts, spec=agg.spec, n_reports=n), **edit}
        refused(lambda: estimate(m, ldp.Aggregate(**kwargs)), draws, subject="")


#: Mechanisms whose aggregate holds sums or support counts that a report adds to several times (vectors,
#: unary and hashed oracles): their n_reports is stored beside the counts, and an n_reports raised above the
#: largest count cannot be told from the counts alone (only a MAC can: test_aggregate_bytes_are_checked).
def _n_reports_free(agg):
    return agg.counts.sum() != agg.n_reports


@pytest.mark.parametrize("name", ALL_NAMES)
def test_n_reports_halved_or_doubled(name):
    """Where the counts determine the number of reports, any other n_reports is refused; where they only
    bound it (support counts), n_reports below the largest count is refused — and an aggregate whose counts
    are sums of report values (vectors) carries the number of reports it was made of in those sums."""
    m, agg = collected(name)
    n = agg.n_reports
    sums = agg.counts.max() > n  # counts are sums of report values (vectors): checked statistically
    for edited in (n // 2, 2 * n, n - 1, n + 1):
        try:
            got = ldp.Aggregate(agg.counts, agg.spec, n_reports=edited)
        except CLEAR:
            continue
        assert _n_reports_free(agg), f"n_reports={edited} accepted although the counts sum to {n}"
        if sums:  # one report more or less is within the sums' noise; half or twice as many is not
            assert abs(edited - n) == 1, f"n_reports={edited} accepted for sums of {n} reports"
        else:
            assert edited >= agg.counts.max(), f"n_reports={edited} accepted below a count ({agg.counts.max()})"
        # Accepted: estimates must then follow the declared number (no silent mixture of both).
        assert got.n_reports == edited


@pytest.mark.parametrize("name", ALL_NAMES)
def test_foreign_spec_is_refused_by_the_estimator(name, draws):
    """An aggregate whose spec was edited (ε, or a parameter) is refused by the mechanism it claims."""
    m, agg = collected(name)
    d = json.loads(agg.spec.to_json())
    d["epsilon"] = d["epsilon"] * 1.5 if d["epsilon"] * 1.5 <= 20 else d["epsilon"] / 2
    edited = ldp.Spec.from_json(json.dumps(d))
    # refused when built (counts implausible under the edited spec) or when estimated (not m's spec)
    err = refused(lambda: estimate(m, ldp.Aggregate(agg.counts, edited, n_reports=agg.n_reports)), draws,
                  subject="epsilon")
    assert isinstance(err, ValueError)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_aggregate_bytes_are_checked(name):
    """Serialized aggregates: any flipped byte or truncation is refused (checksum; with a collector key,
    the MAC), and a MAC'd aggregate read without the key, or with another, is refused."""
    _, agg = collected(name)
    key = b"k" * 32
    for data, k in ((agg.to_bytes(), None), (agg.to_bytes(key=key), key)):
        assert ldp.Aggregate.from_bytes(data, key=k) == agg
        for pos in sorted({0, 5, 10, len(data) // 2, len(data) - 1}):
            flipped = bytearray(data)
            flipped[pos] ^= 0x10
            with pytest.raises(ValueError):
                ldp.Aggregate.from_bytes(bytes(flipped), key=k)
        for cut in (0, 4, len(data) // 2, len(data) - 1):
            with pytest.raises(ValueError):
                ldp.Aggregate.from_bytes(data[:cut], key=k)
    with pytest.raises(ValueError):
        ldp.Aggregate.from_bytes(agg.to_bytes(key=key), key=b"other key of 32 bytes..........")


# -- serialized specs -----------------------------------------------------------------------------------------

GARBAGE = ["DELETE", None, "x", -1, 0, 1e309, [1, 2], {"a": 1}, True]


def spec_edits(spec):
    d = json.loads(spec.to_json())
    keys = [k for k in d] + [f"params.{k}" for k in d.get("params", {})]
    for key in keys:
        for value in GARBAGE:
            e = json.loads(spec.to_json())
            target = e["params"] if key.startswith("params.") else e
            field = key.split(".", 1)[-1]
            if value == "DELETE":
                target.pop(field)
            else:
                target[field] = value
            yield key, value, json.dumps(e)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_edited_specs(name):
    """Every field of a mechanism's serialized spec deleted or replaced by garbage: rebuilding the
    mechanism either gives one clear error or a mechanism whose own spec is the edited one (an edit that is
    itself a valid spec) — never an internal error."""
    m = make(name)
    tried = 0
    for key, value, text in spec_edits(m.spec):
        tried += 1
        try:
            spec = ldp.Spec.from_json(text)
            rebuilt = ldp.from_spec(spec)
        except CLEAR as exc:
            assert not any(f in str(exc) for f in FOREIGN), f"{key}={value!r}: foreign message: {exc}"
            continue
        except Exception as exc:  # noqa: BLE001 — the point of the test
            pytest.fail(f"{key}={value!r}: {type(exc).__name__}: {exc}")
        assert rebuilt.spec == spec, f"{key}={value!r}: rebuilt a mechanism of another spec"
    assert tried >= 3 * len(GARBAGE)


def test_spec_garbage_is_refused():
    for text, exc in [("{}", ValueError), ("[]", ValueError), ('{"mechanism": 3, "epsilon": 1, "n_cells": 2}', TypeError),
                      ('{"mechanism": "grr", "epsilon": "1", "n_cells": 2}', ValueError),
                      ('{"mechanism": "grr", "epsilon": 1, "n_cells": 1e309}', ValueError),
                      ('{"mechanism": "grr", "epsilon": 1, "n_cells": 2, "params": [1]}', TypeError),
                      ('{"mechanism": "grr", "epsilon": 1, "n_cells": 2, "version": 99}', ValueError)]:
        with pytest.raises(exc, match="spec"):
            ldp.Spec.from_json(text)


# -- the count of attacks ---------------------------------------------------------------------------------------

def test_attack_size():
    """How many hostile inputs this file tries (quoted in the issue notes; a floor, so it only grows)."""
    hostile = len(HOSTILE)
    vector_bad = len(VECTOR_NAMES) * len(VECTOR_BAD)
    aggregates = len(ALL_NAMES) * (7 + 4 + 1 + 2 * (5 + 4) + 1)
    specs = sum(sum(1 for _ in spec_edits(make(n).spec)) for n in ALL_NAMES)
    total = hostile + vector_bad + aggregates + specs
    assert len(ALL_NAMES) >= 29 and total > 2000, (hostile, vector_bad, aggregates, specs)


CATEGORICAL = [n for n in registered() if CASES[n].kind == "categorical"]


@pytest.mark.parametrize("name", CATEGORICAL)
def test_text_categories_get_category_advice(name, draws):
    """Text given to a categorical oracle is refused with advice about category codes from a public list, not
    the numeric columns' "convert numbers stored as text with pd.to_numeric" (which would fail on 'red')."""
    m = make(name)
    for x in (np.array(["red", "blue"]), pd.Series(["red", "blue"]), pd.Series(["red", "blue"], dtype="string")):
        err = refused(lambda: m.privatize(x, rng=0), draws)
        assert isinstance(err, TypeError) and "public, fixed list" in str(err) and "to_numeric" not in str(err), err


# -- items that encodings get wrong: the right answer at the largest ε --------------------------------------------

#: ``(item_type, items with their counts, the truth as the results show it)``: bytes with zero bytes inside and
#: in front (an IPv4 address; a big-endian id), str items cut inside a multi-byte character (two strings
#: sharing their first 4 bytes are one item under 32-bit words: their holders are counted together, and the cut
#: character shows as a replacement mark).
HOSTILE_ITEMS = [
    ("bytes", {bytes([10, 0, 0, 1]): 3000, bytes([0, 0, 0, 7]): 2000, bytes([8, 8, 8, 8]): 1000},
     {bytes([10, 0, 0, 1]): 0.5, bytes([0, 0, 0, 7]): 2 / 6, bytes([8, 8, 8, 8]): 1 / 6}),
    ("str", {"日本語の": 3000, "tea": 2000, "日本人": 1000}, {"日\ufffd": 4 / 6, "tea": 2 / 6}),
]


@pytest.mark.parametrize("cls", [ldp.PEM, ldp.TreeHist], ids=["PEM", "TreeHist"])
@pytest.mark.parametrize("item_type,counts,truth", HOSTILE_ITEMS, ids=[h[0] for h in HOSTILE_ITEMS])
def test_hostile_items_are_found_at_the_largest_epsilon(cls, item_type, counts, truth):
    """At ε = 20 every report is all but exact: the returned items are the true ones, each frequency within
    5 of its own standard errors of the truth (the last level's estimating half has ~n/2 reports)."""
    m = cls(20.0, item_bits=32, top_k=len(truth), item_type=item_type)
    items = [v for v, c in counts.items() for _ in range(c)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = m.estimate_heavy_hitters(m.privatize(items, rng=1))
    got = dict(zip(est.items, est.frequencies))
    assert set(got) == set(truth), (est.items, truth)
    for item, f in truth.items():
        se = np.sqrt(f * (1 - f) / (len(items) / 2))
        assert abs(got[item] - f) < 5 * se, (item, got[item], f)
