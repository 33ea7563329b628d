"""No silent wrong answers: aggregates, specs and report columns that cannot be what they claim are refused."""

import struct
import zlib

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import Aggregate, Spec, SpecMismatchError


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


# -- specs -------------------------------------------------------------------------------------------------------
def test_spec_of_another_version_is_refused_by_name():
    d = ldp.GRR(1.0, k=4).spec.to_dict()
    d["version"] = 2
    with pytest.raises(ValueError, match="version 2; this ldpnum reads spec version 1"):
        Spec.from_dict(d)


def test_spec_naming_an_unknown_parameter():
    d = ldp.GRR(1.0, k=4).spec.to_dict()
    d["params"]["bogus"] = 1
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) 'bogus'; GRR takes 'k'"):
        ldp.from_spec(Spec.from_dict(d))


def test_mismatch_message_says_what_differs():
    a, b = ldp.GRR(1.0, k=4).spec, ldp.GRR(1.0, k=5).spec
    with pytest.raises(SpecMismatchError, match=r"n_cells 5 instead of 4; parameter k=5 \(int\) instead of 4"):
        ldp.GRR(1.0, k=4).estimate_frequencies(Aggregate.empty(b))
    assert a != b


# -- numbers that overflow or underflow -----------------------------------------------------------------------
def test_bounds_whose_width_overflows_are_refused():
    with pytest.raises(ValueError, match="width overflows float64"):
        ldp.SquareWave(1.0, (-1e308, 1e308))
    ldp.SquareWave(1.0, (-1e307, 1e307))  # finite width: accepted


def test_standard_error_underflow_is_an_error_not_a_zero_width_interval():
    m = ldp.Duchi(1.0, (0, 1e-320))
    with pytest.raises(ValueError, match="zero-width interval"):
        m.estimate_mean(m.privatize(np.zeros(100), rng=0))


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
