"""Aggregates travel: bytes and long-form frames round-trip exactly; merging is a commutative monoid (R4)."""

import pickle
import struct
import zlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ldpnum as ldp
from ldpnum import Aggregate, Spec
from ldpnum.accounting import shuffle_epsilon

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SPECS = [Spec("demo", 1.0, 1), Spec("demo", 0.5, 7, (("bounds", (0.0, 1.0)),)), Spec("demo", 2.0, 64),
         ldp.SquareWave(1.0, (0, 1)).spec]


@st.composite
def aggregates(draw, spec=None, per_report=None):
    """An aggregate of one of SPECS: counts mostly zero (sparse form) or dense, any magnitudes."""
    spec = draw(st.sampled_from(SPECS)) if spec is None else spec
    n = spec.n_cells
    density = draw(st.sampled_from([0.0, 0.05, 0.5, 1.0]))
    big = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 2**40 if big else 50, n) * (rng.random(n) < density)
    if per_report is None:
        per_report = draw(st.booleans())
    n_reports = None
    if per_report:  # at least every count (no report adds twice to a cell); single-code specs: their sum
        n_reports = (int(counts.max(initial=0)) + int(rng.integers(0, 2**20)) if spec.mechanism == "demo"
                     else int(counts.sum()))
    return Aggregate(counts, spec, n_reports)


@st.composite
def same_spec_aggregates(draw, min_size=1, max_size=6):
    spec = draw(st.sampled_from(SPECS))
    per_report = draw(st.booleans())
    return draw(st.lists(aggregates(spec, per_report), min_size=min_size, max_size=max_size))


def _same(a, b):
    """Equal and of the same kind (per-report counts or not)."""
    return a == b and (a._n_reports is None) == (b._n_reports is None)


# -- round trips --------------------------------------------------------------------------------------------
@SETTINGS
@given(aggregates())
def test_bytes_round_trip_is_exact(a):
    b = a.to_bytes()
    assert isinstance(b, bytes) and b[:4] == b"LDPA"
    back = Aggregate.from_bytes(b)
    assert _same(back, a)
    assert Aggregate.from_bytes(bytearray(b)) == a == Aggregate.from_bytes(memoryview(b))
    assert back.to_bytes() == b  # canonical
    header = 16 + len(a.spec.to_json()) + (8 if a._n_reports is not None else 0)
    assert len(b) <= header + 8 * a.spec.n_cells


@SETTINGS
@given(aggregates())
def test_frame_round_trip_is_exact(a):
    df = a.to_frame()
    assert list(df.columns) == ["key", "count"]
    assert df["key"].dtype == np.int64 and df["count"].dtype == np.int64
    assert (df.loc[df["key"] >= 0, "count"] > 0).all()  # zero counts dropped
    assert _same(Aggregate.from_frame(df), a)
    plain = pd.DataFrame({"key": df["key"].to_numpy(), "count": df["count"].to_numpy()})  # attrs lost
    assert _same(Aggregate.from_frame(plain, spec=a.spec), a)


@SETTINGS
@given(same_spec_aggregates(min_size=1, max_size=5))
def test_concatenated_frames_are_the_merge(parts):
    cat = pd.concat([p.to_frame() for p in parts], ignore_index=True)
    assert _same(Aggregate.from_frame(cat, spec=parts[0].spec), Aggregate.merge(parts))
    grouped = cat.groupby("key", as_index=False)["count"].sum()  # what an SQL GROUP BY gives
    assert _same(Aggregate.from_frame(grouped, spec=parts[0].spec), Aggregate.merge(parts))


# -- the monoid ---------------------------------------------------------------------------------------------
@SETTINGS
@given(same_spec_aggregates(min_size=3, max_size=3))
def test_merge_is_associative_and_commutative(parts):
    a, b, c = parts
    assert _same((a + b) + c, a + (b + c))
    assert _same(a + b, b + a)
    empty = Aggregate.empty(a.spec, per_report_counts=a._n_reports is not None)
    assert _same(a + empty, a) and _same(empty + a, a)


@SETTINGS
@given(same_spec_aggregates(min_size=1, max_size=8), st.data())
def test_any_grouping_of_partitions_merges_to_the_same_aggregate(parts, data):
    whole = Aggregate.merge(parts)
    order = data.draw(st.permutations(range(len(parts))))
    shuffled = [parts[i] for i in order]
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(parts) - 1)), max_size=len(parts))))
    groups = [shuffled[i:j] for i, j in zip([0] + cuts, cuts + [len(parts)]) if shuffled[i:j]]
    partial = [Aggregate.from_bytes(Aggregate.merge(g).to_bytes()) for g in groups]  # travel in between
    assert _same(Aggregate.merge(partial), whole)
    assert whole.counts.sum() == sum(int(p.counts.sum()) for p in parts)


def test_real_aggregates_round_trip():
    x = np.random.default_rng(0).beta(5, 2, 2000)
    cases = [ldp.SquareWave(1.0, (0, 1)), ldp.Piecewise(2.0, (0, 1)), ldp.HierarchicalHistogram(1.0, (0, 1))]
    for m in cases:
        a = m.aggregate(m.privatize(x, rng=1))
        assert _same(Aggregate.from_bytes(a.to_bytes()), a)
        assert _same(Aggregate.from_frame(a.to_frame()), a)
    sue = ldp.SUE(1.0, k=5)
    a = sue.aggregate(sue.privatize(np.arange(1000) % 5, rng=2))
    assert a._n_reports == 1000
    assert _same(Aggregate.from_bytes(a.to_bytes()), a) and _same(Aggregate.from_frame(a.to_frame()), a)
    assert sue.estimate_frequencies(Aggregate.from_bytes(a.to_bytes())) == sue.estimate_frequencies(a)


def test_dense_form_size_for_1024_cells():
    m = ldp.SquareWave(1.0, (0, 1))
    a = m.aggregate(m.privatize(np.random.default_rng(0).random(100_000), rng=0))
    b = a.to_bytes()
    assert m.n_cells == 1024 and np.all(a.counts > 0)
    assert len(b) == 16 + len(m.spec.to_json()) + 8 * 1024 < 8192 + 512
    assert b[5] == 0  # dense
    small = m.aggregate(m.privatize([0.5] * 3, rng=0)).to_bytes()
    assert small[5] == 2 and len(small) < 300  # sparse: 3 reports, a few cells


def test_parquet_round_trip_of_the_long_form(tmp_path):
    pytest.importorskip("pyarrow")
    a = Aggregate(np.array([0, 3, 0, 9, 1]), Spec("demo", 1.0, 5), 11)
    a.to_frame().to_parquet(tmp_path / "agg.parquet")
    assert _same(Aggregate.from_frame(pd.read_parquet(tmp_path / "agg.parquet")), a)


# -- bad input ----------------------------------------------------------------------------------------------
@SETTINGS
@given(aggregates(), st.data())
def test_any_truncation_or_byte_flip_is_refused(a, data):
    b = a.to_bytes()
    cut = data.draw(st.integers(0, len(b) - 1))
    with pytest.raises(ValueError):
        Aggregate.from_bytes(b[:cut])
    i = data.draw(st.integers(0, len(b) - 1))
    flip = data.draw(st.integers(1, 255))
    bad = bytearray(b)
    bad[i] ^= flip
    with pytest.raises(ValueError):
        Aggregate.from_bytes(bytes(bad))
    with pytest.raises(ValueError):
        Aggregate.from_bytes(b + b"\x00")


def _forge(body):
    """A payload with a valid checksum, to reach the checks behind it."""
    return body + struct.pack("<I", zlib.crc32(body))


def test_forged_payloads_are_refused():
    spec = Spec("demo", 1.0, 4)
    sj = spec.to_json().encode()
    head = lambda flags, version=1, n=len(sj): b"LDPA" + struct.pack("<BBHI", version, flags, 0, n)  # noqa: E731
    dense = np.array([1, 2, 3, 4], "<i8").tobytes()
    assert Aggregate.from_bytes(_forge(head(0) + sj + dense)).counts.tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="format version 2"):
        Aggregate.from_bytes(_forge(head(0, version=2) + sj + dense))
    with pytest.raises(ValueError, match="unknown flags"):
        Aggregate.from_bytes(_forge(head(16) + sj + dense))  # bit 3 (8) is the shuffle declaration
    with pytest.raises(ValueError, match="invalid spec"):
        Aggregate.from_bytes(_forge(head(0, n=5) + b"nope!" + dense))
    with pytest.raises(ValueError, match="truncated"):
        Aggregate.from_bytes(_forge(head(0, n=10_000) + sj + dense))
    with pytest.raises(ValueError, match="4 counts need 32 bytes"):
        Aggregate.from_bytes(_forge(head(0) + sj + dense[:-8]))
    with pytest.raises(ValueError, match="non-negative"):
        Aggregate.from_bytes(_forge(head(0) + sj + np.array([1, -2, 3, 4], "<i8").tobytes()))
    with pytest.raises(ValueError, match="negative n_reports"):
        Aggregate.from_bytes(_forge(head(1) + sj + struct.pack("<q", -1) + dense))
    sparse = lambda idx, vals: (struct.pack("<I", len(idx)) + np.array(idx, "<u4").tobytes()  # noqa: E731
                                + np.array(vals, "<i8").tobytes())
    assert Aggregate.from_bytes(_forge(head(2) + sj + sparse([1, 3], [5, 6]))).counts.tolist() == [0, 5, 0, 6]
    for idx, vals in [([3, 1], [5, 6]), ([1, 1], [5, 6]), ([1, 4], [5, 6]), ([1, 3], [5, 0])]:
        with pytest.raises(ValueError, match="strictly increasing"):
            Aggregate.from_bytes(_forge(head(2) + sj + sparse(idx, vals)))
    with pytest.raises(ValueError, match="not a serialized"):
        Aggregate.from_bytes(b"PK\x03\x04" + bytes(20))
    with pytest.raises(TypeError):
        Aggregate.from_bytes("LDPA")
    with pytest.raises(TypeError):
        Aggregate.from_bytes(np.zeros(20, np.uint8))


def test_from_frame_refuses_bad_frames():
    spec = Spec("demo", 1.0, 4)
    ok = pd.DataFrame({"key": [0, 3], "count": [1, 2]})
    assert Aggregate.from_frame(ok, spec).counts.tolist() == [1, 0, 0, 2]
    with pytest.raises(ValueError, match="no ldpnum spec"):
        Aggregate.from_frame(ok)
    with pytest.raises(TypeError):
        Aggregate.from_frame(ok.to_dict(), spec)
    with pytest.raises(TypeError):
        Aggregate.from_frame(ok, spec.to_dict())
    with pytest.raises(ValueError, match="missing \\['count'\\]"):
        Aggregate.from_frame(ok[["key"]], spec)
    with pytest.raises(ValueError, match="1 value\\(s\\) outside -1..3, first at row 1 \\(4\\)"):
        Aggregate.from_frame(pd.DataFrame({"key": [0, 4], "count": [1, 2]}), spec)
    with pytest.raises(ValueError, match="1 negative value\\(s\\), first at row 0"):
        Aggregate.from_frame(pd.DataFrame({"key": [0, 1], "count": [-1, 2]}), spec)
    with pytest.raises(TypeError, match="integers"):
        Aggregate.from_frame(pd.DataFrame({"key": [0.0, 1.0], "count": [1, 2]}), spec)
    with pytest.raises(ValueError, match="missing value"):
        Aggregate.from_frame(pd.DataFrame({"key": pd.array([0, None], dtype="Int64"), "count": [1, 2]}), spec)
    recorded = Aggregate(np.ones(4), spec).to_frame()
    with pytest.raises(ldp.SpecMismatchError):
        Aggregate.from_frame(recorded, Spec("demo", 2.0, 4))
    assert Aggregate.from_frame(recorded, spec) == Aggregate(np.ones(4), spec)
    nullable = pd.DataFrame({"key": pd.array([0, 2], dtype="Int64"), "count": pd.array([1, 2], dtype="UInt32")})
    assert Aggregate.from_frame(nullable, spec).counts.tolist() == [1, 0, 2, 0]


def test_what_a_dask_task_moves_is_small():
    import pickle

    m = ldp.SquareWave(1.0, (0, 1))
    a = m.aggregate(m.privatize(np.random.default_rng(0).random(100_000), rng=0))
    assert len(pickle.dumps(a)) < len(a.to_bytes()) + 512  # the counts and the spec, nothing else
    assert pickle.loads(pickle.dumps(a)) == a


def test_aggregate_merges_exactly():
    m = ldp.Piecewise(1.0, (0, 1))
    x = np.random.default_rng(0).random(30_000)
    parts = [m.aggregate(m.privatize(c, rng=i)) for i, c in enumerate(np.array_split(x, 7))]
    whole = m.aggregate(ldp.Reports.concat([m.privatize(c, rng=i) for i, c in enumerate(np.array_split(x, 7))]))
    assert sum(parts) == whole == ldp.Aggregate.merge(parts)
    assert parts[0] + parts[1] == parts[1] + parts[0]
    assert (parts[0] + parts[1]) + parts[2] == parts[0] + (parts[1] + parts[2])
    empty = m.empty_aggregate()
    assert empty + parts[0] == parts[0] == parts[0] + empty
    assert empty.n_reports == 0 and whole.n_reports == x.size
    assert m.estimate_mean(whole) == m.estimate_mean(sum(parts))


def test_aggregate_validation():
    spec = ldp.Duchi(1.0, (0, 1)).spec
    with pytest.raises(ValueError, match="shape"):
        ldp.Aggregate([1, 2, 3], spec)
    with pytest.raises(ValueError, match="non-negative"):
        ldp.Aggregate([1, -2], spec)
    with pytest.raises(ValueError, match="at least one"):
        ldp.Aggregate.merge([])


def sw_aggregate(n=20_000, epsilon=2.0, seed=0):
    m = ldp.SquareWave(epsilon=epsilon, bounds=(0, 1))
    return m, m.aggregate(m.privatize(np.random.default_rng(seed).random(n), rng=seed + 1))


def test_declared_aggregate_carries_the_central_epsilon_of_its_reports():
    m, agg = sw_aggregate()
    assert agg.shuffle is None and agg.shuffle_batches == 0
    s = agg.shuffled(1e-6)
    assert s.shuffle == shuffle_epsilon(2.0, 20_000, 1e-6)
    assert s.shuffle_batches == 1 and s.shuffle.amplified
    assert np.array_equal(s.counts, agg.counts) and s.spec == agg.spec and agg.shuffle is None  # a copy
    assert s != agg  # the declaration is part of what the aggregate says
    assert "shuffled=(delta=1e-06)" in repr(s)
    assert s.shuffled(1e-3).shuffle.delta == 1e-3  # a new declaration replaces the old one


def test_merge_rule():
    m, a = sw_aggregate(n=20_000, seed=0)
    _, b = sw_aggregate(n=5_000, seed=3)
    sa, sb = a.shuffled(1e-6), b.shuffled(1e-6)
    both = sa + sb
    # two batches shuffled apart, each person in one: the epsilon of the smallest batch (parallel composition)
    assert both.shuffle_batches == 2 and both.shuffle == shuffle_epsilon(2.0, 5_000, 1e-6)
    assert both.n_reports == 25_000 and np.array_equal(both.counts, a.counts + b.counts)
    assert (sb + sa) == both and sum([sa, sb]) == both and Aggregate.merge([sa, sb]) == both
    # not as one batch of 25,000: that would understate epsilon
    assert both.shuffle.epsilon > shuffle_epsilon(2.0, 25_000, 1e-6).epsilon
    # reports that were not shuffled have only the local epsilon: the declaration is dropped
    assert (sa + b).shuffle is None and (a + sb).shuffle is None
    # the empty aggregate is the identity
    assert (sa + m.empty_aggregate()) == sa and (m.empty_aggregate() + sa) == sa
    with pytest.raises(ValueError, match="delta 1e-06 and 0.001"):
        sa + b.shuffled(1e-3)
    # chunks of one batch: merge first, then declare the whole batch
    assert (a + b).shuffled(1e-6).shuffle == shuffle_epsilon(2.0, 25_000, 1e-6)


def test_bad_declarations():
    m, agg = sw_aggregate(n=100)
    for bad in (0, 1, -1e-6, 1.5, float("nan")):
        with pytest.raises(ValueError, match="shuffle_delta must lie in"):
            agg.shuffled(bad)
    for bad in (True, "1e-6", None):
        with pytest.raises(TypeError, match="shuffle_delta must be a real number"):
            agg.shuffled(bad)
    with pytest.raises(ValueError, match="no reports cannot be declared shuffled"):
        m.empty_aggregate().shuffled(1e-6)


def test_round_trips_keep_the_declaration():
    _, a = sw_aggregate(n=3_000)
    _, b = sw_aggregate(n=1_000, seed=5)
    s = a.shuffled(1e-5) + b.shuffled(1e-5)
    assert Aggregate.from_bytes(s.to_bytes()) == s
    assert Aggregate.from_bytes(s.to_bytes(key=b"k" * 16), key=b"k" * 16) == s
    assert Aggregate.from_frame(s.to_frame()) == s
    back = pickle.loads(pickle.dumps(s))
    assert back == s and back.shuffle == s.shuffle and back.shuffle_batches == 2
    assert Aggregate.from_bytes(a.to_bytes()) == a  # no declaration, no flag
    # an impossible declaration (two batches of at least 3,000 among 4,000 reports) is refused
    frame = s.to_frame()
    frame.attrs["ldpnum_aggregate"]["shuffle"] = [1e-5, 3_000, 2]
    with pytest.raises(ValueError, match="impossible with 4000 reports"):
        Aggregate.from_frame(frame)
    frame.attrs["ldpnum_aggregate"]["shuffle"] = [2.0, 1_000, 2]
    with pytest.raises(ValueError, match="shuffle_delta must lie in"):
        Aggregate.from_frame(frame)
    frame.attrs["ldpnum_aggregate"]["shuffle"] = [1e-5, 1_000, 2.5]  # a batch count of another kind
    with pytest.raises(ValueError, match="shuffle declaration: batches must be an integer; got float 2.5"):
        Aggregate.from_frame(frame)
