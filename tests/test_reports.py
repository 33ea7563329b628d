"""Reports, Aggregate, Spec and MeanEstimate (DESIGN.md R3, R4, R7)."""

import dataclasses

import numpy as np
import pytest

import ldpnum as ldp


def test_spec_distinguishes_parameters():
    a = ldp.Piecewise(1.0, (0, 10)).spec
    assert a != ldp.Piecewise(1.0, (0, 11)).spec
    assert a != ldp.Piecewise(1.5, (0, 10)).spec
    assert a != ldp.Piecewise(1.0, (0, 10), n_cells=2048).spec
    assert a != ldp.Hybrid(1.0, (0, 10)).spec
    assert ldp.Duchi(1.0, (0, 1)).spec != ldp.StochasticRounding(1.0, (0, 1)).spec
    assert "piecewise" in str(a) and "1024" in str(a)
    with pytest.raises(ValueError):
        ldp.Spec.from_dict({"mechanism": "x"})
    with pytest.raises(ValueError, match="unknown mechanism"):
        ldp.from_spec(ldp.Spec("nope", 1.0, 2))


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


def test_mismatched_specs_are_refused():
    a, b = ldp.Duchi(1.0, (0, 1)), ldp.Duchi(2.0, (0, 1))
    ra, rb = a.privatize([0.5], rng=0), b.privatize([0.5], rng=0)
    with pytest.raises(ldp.SpecMismatchError):
        a.aggregate(ra) + b.aggregate(rb)
    with pytest.raises(ldp.SpecMismatchError):
        a.estimate_mean(rb)
    with pytest.raises(ldp.SpecMismatchError):
        a.estimate_mean(b.aggregate(rb))
    with pytest.raises(ldp.SpecMismatchError):
        ldp.StochasticRounding(1.0, (0, 1)).estimate_mean(ra)  # same randomizer, other labels
    with pytest.raises(ldp.SpecMismatchError):
        ldp.Reports.concat([ra, rb])
    with pytest.raises(TypeError):
        a.estimate_mean(np.array([0, 1]))
    with pytest.raises(TypeError):
        a.aggregate(np.array([0, 1]))
    assert issubclass(ldp.SpecMismatchError, ValueError)


def test_estimators_accept_reports_or_aggregate():
    m = ldp.Hybrid(2.0, (0, 100))
    r = m.privatize(np.full(5000, 40.0), rng=1)
    assert m.estimate_mean(r) == m.estimate_mean(m.aggregate(r))


def test_reports_validate_codes():
    spec = ldp.Duchi(1.0, (0, 1)).spec
    with pytest.raises(ValueError, match="outside the output alphabet"):
        ldp.Reports(np.array([0, 1, 2]), spec)
    with pytest.raises(TypeError):
        ldp.Reports(np.array([0.0, 1.0]), spec)
    with pytest.raises(ValueError):
        ldp.Reports(np.zeros((2, 2), dtype=np.uint8), spec)
    r = ldp.Reports(np.array([0, 1, 1], dtype=np.int64), spec)
    assert r.codes.dtype == np.uint8 and len(r[1:]) == 2 and r[2] == 1
    codes = np.array([0, 1], dtype=np.uint8)
    r = ldp.Reports(codes, spec)
    codes[0] = 1  # the caller's array is not the reports'
    assert r.codes[0] == 0


def test_aggregate_validation():
    spec = ldp.Duchi(1.0, (0, 1)).spec
    with pytest.raises(ValueError, match="shape"):
        ldp.Aggregate([1, 2, 3], spec)
    with pytest.raises(ValueError, match="non-negative"):
        ldp.Aggregate([1, -2], spec)
    with pytest.raises(ValueError, match="at least one"):
        ldp.Aggregate.merge([])


def test_mean_estimate_is_frozen():
    m = ldp.Duchi(1.0, (0, 1))
    est = m.estimate_mean(m.privatize(np.full(1000, 0.5), rng=0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.value = 0.0
    assert est.epsilon == 1.0 and est.n_reports == 1000 and est.spec == m.spec
    assert "duchi" in str(est)


def test_mechanisms_are_immutable_values():
    a, b = ldp.Piecewise(1.0, (0, 1)), ldp.Piecewise(1.0, (0, 1))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert "Piecewise(epsilon=1.0" in repr(a)
    with pytest.raises(AttributeError):
        a.epsilon = 2.0
