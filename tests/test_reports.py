"""Reports: codes checked against the spec's alphabet, and taken by estimators like aggregates (DESIGN.md R3).

The spec tests are in test_spec.py, the aggregate ones in test_aggregate.py, MeanEstimate's in test_results.py.
"""

import numpy as np
import pytest

import ldpnum as ldp


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


def test_mechanisms_are_immutable_values():
    a, b = ldp.Piecewise(1.0, (0, 1)), ldp.Piecewise(1.0, (0, 1))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert "Piecewise(epsilon=1.0" in repr(a)
    with pytest.raises(AttributeError):
        a.epsilon = 2.0
