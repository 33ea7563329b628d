"""No silent wrong answers: aggregates and report columns that cannot be what they claim are refused (specs:
tests/test_spec.py)."""

import struct
import zlib

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import Aggregate


# -- aggregates: counts against n_reports ---------------------------------------------------------------------
def test_single_code_aggregate_needs_n_reports_equal_to_the_sum():
    grr = ldp.GRR(1.0, k=4)
    with pytest.raises(ValueError, match=r"n_reports=5 but the counts sum to 400"):
        Aggregate([100] * 4, grr.spec, n_reports=5)
    a = Aggregate([100] * 4, grr.spec, n_reports=400)  # consistent: accepted, stored as the sum
    assert a == Aggregate([100] * 4, grr.spec) and a.n_reports == 400
    est = grr.estimate_frequencies(a)
    assert np.allclose(est.frequencies.sum(), 1.0)


@pytest.mark.parametrize("mech", [ldp.OUE(1.0, k=8), ldp.SUE(1.0, k=8), ldp.OLH(1.0, k=8), ldp.BLH(1.0, k=8),
                                  ldp.PIRappor(1.0, k=8), ldp.SubsetSelection(1.0, k=8)],
                         ids=lambda m: m.spec.mechanism)
def test_support_count_aggregates_need_every_count_at_most_n_reports(mech):
    agg = mech.aggregate(mech.privatize(np.arange(1000) % 8, rng=0))
    assert Aggregate(agg.counts, mech.spec, agg.n_reports) == agg
    with pytest.raises(ValueError, match="exceeds n_reports"):
        Aggregate(agg.counts, mech.spec, int(agg.counts.max()) - 1)
    with pytest.raises(ValueError, match="n_reports is required"):
        Aggregate(agg.counts, mech.spec)
    assert Aggregate.empty(mech.spec).n_reports == 0


def test_hierarchical_packed_aggregate_checks_every_level():
    hh = ldp.HierarchicalHistogram(1.0, (0, 1), n_leaves=1024, branching=4, oracle="olh")
    assert hh._plan.packed
    agg = hh.aggregate(hh.privatize(np.linspace(0, 1, 5000), rng=0))
    assert Aggregate(agg.counts, hh.spec, agg.n_reports) == agg
    with pytest.raises(ValueError, match="its levels hold 5000 reports"):
        Aggregate(agg.counts, hh.spec, 4999)
    counts = agg.counts.copy()
    lo = hh._plan.offsets[0]
    counts[lo] = agg.counts[hh._plan.offsets[1] - 1] + 1  # a support count above the level's n_l
    with pytest.raises(ValueError, match="exceeds the level's"):
        Aggregate(counts, hh.spec, agg.n_reports)


def test_sums_beyond_int64_are_refused():
    spec = ldp.GRR(1.0, k=2).spec
    with pytest.raises(OverflowError, match="beyond int64"):
        Aggregate([2**62, 2**62], spec)
    a = Aggregate([2**62 - 1, 0], spec)
    with pytest.raises(OverflowError):
        a + a + a  # noqa: B018
    with pytest.raises(ValueError, match="beyond int64"):
        Aggregate(np.array([2**63, 0], dtype=np.uint64), spec)
    with pytest.raises(TypeError, match="integers"):
        Aggregate(np.array([True, False]), spec)


def _with_crc(body):
    return body + struct.pack("<I", zlib.crc32(body))


def test_from_bytes_and_from_frame_run_the_same_checks():
    grr = ldp.GRR(1.0, k=4)
    spec_json = grr.spec.to_json().encode()
    body = (b"LDPA" + struct.pack("<BBHI", 1, 1, 0, len(spec_json)) + spec_json + struct.pack("<q", 5)
            + np.array([100] * 4, dtype="<i8").tobytes())
    with pytest.raises(ValueError, match="n_reports=5 but the counts sum to 400"):
        Aggregate.from_bytes(_with_crc(body))
    frame = pd.DataFrame({"key": [-1, 0, 1, 2, 3], "count": [5, 100, 100, 100, 100]})
    with pytest.raises(ValueError, match="n_reports=5"):
        Aggregate.from_frame(frame, spec=grr.spec)


# -- numbers that overflow or underflow -----------------------------------------------------------------------
def test_bounds_whose_width_overflows_are_refused():
    with pytest.raises(ValueError, match="too large"):
        ldp.SquareWave(1.0, (-1e308, 1e308))
    ldp.SquareWave(1.0, (-1e100, 1e100))  # the widest bounds taken (check_bounds: variances stay finite)


def test_standard_error_underflow_is_an_error_not_a_zero_width_interval():
    with pytest.raises(ValueError, match="too narrow"):
        ldp.Duchi(1.0, (0, 1e-320))
    with pytest.raises(ValueError, match="too narrow"):  # its variance (~1e-600) would underflow to 0: refused
        ldp.Duchi(1.0, (0, 1e-300))                    # at construction, before any report is drawn


def test_identical_reports_give_the_worst_case_standard_error():
    m = ldp.Duchi(1.0, (0, 1))
    agg = Aggregate([0, 7], m.spec)  # every report the same code: sample variance 0
    est = m.estimate_mean(agg)
    assert est.standard_error == pytest.approx(np.sqrt(m.worst_case_variance / 7))


# -- nullable pandas arrays passed straight to privatize -------------------------------------------------------
@pytest.mark.parametrize("arr", [pd.array([1, None, 3], dtype="Int64"), pd.array([1, None], dtype="int64[pyarrow]"),
                                 pd.array([1.0, None], dtype="Float64")], ids=lambda a: str(a.dtype))
@pytest.mark.parametrize("mech", [ldp.GRR(1.0, k=4), ldp.SquareWave(1.0, (0, 5))], ids=lambda m: m.spec.mechanism)
def test_nullable_arrays_with_na_get_the_missing_value_error(arr, mech):
    if arr.dtype.kind == "f" and isinstance(mech, ldp.GRR):
        with pytest.raises(TypeError, match="integer category codes"):
            mech.privatize(arr, rng=0)
        return
    with pytest.raises(ValueError, match="missing .*first at index 1"):
        mech.privatize(arr, rng=0)
    filled = mech.privatize(arr, rng=0, nan_policy="impute", fill_value=2)
    assert len(filled) == len(arr)


# -- report columns tied to their exact codes --------------------------------------------------------------------
@pytest.fixture(scope="module")
def ages():
    return pd.DataFrame({"age": np.random.default_rng(0).uniform(18, 80, 4000),
                         "score": np.random.default_rng(1).uniform(0, 1, 4000)})


SW = ldp.SquareWave(1.0, (0, 100))
PW = ldp.Piecewise(1.0, (0, 1))


@pytest.mark.parametrize("change", [
    lambda s: s // 2, lambda s: s + 1, lambda s: s.astype("uint8"), lambda s: s.iloc[:-1],
    lambda s: s.head(100), lambda s: s[s > 500], lambda s: s.fillna(0), lambda s: s.clip(upper=900),
], ids=["floordiv", "add", "narrowing-cast", "drop-last", "head", "filter", "fillna", "clip"])
@pytest.mark.parametrize("strategy", ["all-columns", "one-column-per-row"])
def test_changed_report_column_is_refused(ages, change, strategy):
    r = ages.ldp.privatize({"age": SW, "score": PW}, rng=0, strategy=strategy)
    from ldpnum._frame import ReportsChangedError
    try:
        changed = change(r["age"])
    except (TypeError, ValueError):  # pandas itself refuses (a narrowing cast of a column with NA)
        return
    if np.array_equal(np.sort(changed.dropna().to_numpy(dtype=np.float64)),
                      np.sort(r["age"].dropna().to_numpy(dtype=np.float64))):
        return  # the reported codes are all still there (e.g. fillna without NA, a dropped row that had none)
    with pytest.raises(ReportsChangedError, match="no longer holds the reports it was privatized as"):
        changed.ldp.estimate_mean()


def test_harmless_operations_keep_the_reports(ages):
    r = ages.ldp.privatize({"age": SW}, rng=0)
    est = r["age"].ldp.estimate_mean()
    for same in (r["age"].astype("int64"), r["age"].astype("float64"), r["age"].sort_values(),
                 r["age"].sample(frac=1.0, random_state=0), r.copy()["age"]):
        assert same.ldp.estimate_mean() == est


def test_ldpnum_concat_keeps_the_record_and_checks_the_parts(ages):
    a = ages.ldp.privatize({"age": SW}, rng=1)
    b = ages.ldp.privatize({"age": SW}, rng=2)
    both = ldp.pandas.concat([a, b])
    assert both["age"].ldp.aggregate() == a["age"].ldp.aggregate() + b["age"].ldp.aggregate()
    bad = a.copy()
    bad["age"] = bad["age"] // 2
    from ldpnum._frame import ReportsChangedError
    with pytest.raises(ReportsChangedError):
        ldp.pandas.concat([bad, b])
    with pytest.raises(ValueError, match="not one collection design"):
        ldp.pandas.concat([a, ages.ldp.privatize({"age": SW}, rng=3, strategy="one-column-per-row")])


def test_parquet_round_trip_keeps_the_digest(tmp_path, ages):
    pytest.importorskip("pyarrow")
    r = ages.ldp.privatize({"age": SW}, rng=0)
    r.to_parquet(tmp_path / "r.parquet")
    back = pd.read_parquet(tmp_path / "r.parquet")
    assert back["age"].ldp.estimate_mean() == r["age"].ldp.estimate_mean()
    from ldpnum._frame import ReportsChangedError
    with pytest.raises(ReportsChangedError):
        (back["age"] // 2).ldp.estimate_mean()


def test_epsilon_per_row_must_agree_with_the_specs(ages):
    r = ages.ldp.privatize({"age": SW, "score": PW}, rng=0)
    assert r.ldp.epsilon_per_row == 2.0
    r.attrs["ldpnum"]["epsilon_per_row"] = 1.0
    with pytest.raises(ValueError, match="disagrees with its column specs: it must be the sum"):
        r["age"].ldp.estimate_mean()


def test_digest_is_order_free_additive_and_catches_one_change():
    from ldpnum._frame import add_digests, codes_digest
    g = np.random.default_rng(0)
    codes = g.integers(0, 1024, 10_000).astype(np.uint16)
    assert codes_digest(codes) == codes_digest(g.permutation(codes))
    assert codes_digest(codes) == add_digests(codes_digest(codes[:3000]), codes_digest(codes[3000:]))
    assert codes_digest(codes) == codes_digest(codes.astype(np.uint64))  # the histogram path = the word path
    for i in range(50):
        changed = codes.copy()
        changed[i] = (changed[i] + 1 + i) % 1024
        assert codes_digest(changed) != codes_digest(codes)


# -- keyed MAC ----------------------------------------------------------------------------------------------------
KEY = b"collector-secret-0123"


def test_aggregate_mac_detects_edits_and_wrong_keys():
    grr = ldp.GRR(1.0, k=4)
    agg = grr.aggregate(grr.privatize(np.arange(400) % 4, rng=0))
    signed = agg.to_bytes(key=KEY)
    assert Aggregate.from_bytes(signed, key=KEY) == agg == Aggregate.from_bytes(signed)
    with pytest.raises(ValueError, match="carries no MAC"):
        Aggregate.from_bytes(agg.to_bytes(), key=KEY)
    with pytest.raises(ValueError, match="fails its MAC check"):
        Aggregate.from_bytes(signed, key=b"another-secret-012345")
    # an edit of the spec with the CRC recomputed (what a forger can do) fails the MAC
    body = signed[:-4].replace(b'"epsilon": 1.0', b'"epsilon": 2.0')
    assert body != signed[:-4]
    with pytest.raises(ValueError, match="fails its MAC check"):
        Aggregate.from_bytes(_with_crc(body), key=KEY)
    with pytest.raises(ValueError, match="at least 16"):
        agg.to_bytes(key=b"short")


def test_record_mac_sign_and_verify():
    from ldpnum._frame import sign_info, verify_info
    r = pd.DataFrame({"x": np.linspace(0, 1, 100)}).ldp.privatize({"x": PW}, rng=0)
    info = sign_info(r.attrs["ldpnum"], KEY)
    verify_info(info, KEY)
    edited = {**info, "columns": [{**info["columns"][0], "codes": "100:" + "0" * 32}]}
    with pytest.raises(ValueError, match="fails its MAC check"):
        verify_info(edited, KEY)
    with pytest.raises(ValueError, match="carries no MAC"):
        verify_info(r.attrs["ldpnum"], KEY)
