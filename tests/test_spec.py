"""Spec: what identifies a mechanism's reports, and the refusal of reports whose spec does not match (DESIGN.md R3)."""

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum import Aggregate, Spec, SpecMismatchError


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


@pytest.mark.parametrize("field,value,err,match", [
    ("epsilon", "1.0", ValueError, "^spec of 'grr': epsilon must be a real number; got str '1.0'$"),
    ("epsilon", True, ValueError, "^spec of 'grr': epsilon must be a real number; got bool True$"),
    ("epsilon", 0, ValueError, "^spec of 'grr': epsilon must be a finite number > 0; got 0$"),
    ("epsilon", float("inf"), ValueError, "^spec of 'grr': epsilon must be a finite number > 0; got inf$"),
    ("n_cells", 4.0, ValueError, "^spec of 'grr': n_cells must be an integer; got float 4.0$"),
    ("n_cells", "4", ValueError, "^spec of 'grr': n_cells must be an integer; got str '4'$"),
    ("n_cells", 0, ValueError, "^spec of 'grr': n_cells must be >= 1; got 0$"),
])
def test_spec_read_back_checks_epsilon_and_n_cells(field, value, err, match):
    # a spec is data read back (JSON, Parquet metadata): a field of the wrong kind is a bad value, a ValueError
    d = ldp.GRR(1.0, 4).spec.to_dict()
    d[field] = value
    with pytest.raises(err, match=match):
        Spec.from_dict(d)
    assert Spec.from_dict(ldp.GRR(1.0, 4).spec.to_dict()) == ldp.GRR(1.0, 4).spec


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
