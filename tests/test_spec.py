"""Spec: what identifies a mechanism's reports, and the refusal of reports whose spec does not match (DESIGN.md R3)."""

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
