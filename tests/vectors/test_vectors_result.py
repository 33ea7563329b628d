"""VectorMeanEstimate (``ldpnum/vectors/_result.py``) built by hand: per-coordinate intervals, shape and
finiteness checks, equality that ignores the names."""

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.vectors import VectorMeanEstimate


def estimate(**kw):
    spec = ldp.DuchiMultivariate(2.0, [(0, 1)] * 3).spec
    args = dict(mean=[0.2, 0.5, 0.9], standard_errors=[0.01, 0.02, 0.04], expected_squared_error=0.0021,
                n_reports=1000, epsilon=2.0, spec=spec, dim=3)
    return VectorMeanEstimate(**{**args, **kw})


def test_confidence_interval_is_mean_plus_minus_z_standard_errors():
    est = estimate()
    low, high = est.confidence_interval(0.95)
    z = 1.959963984540054
    np.testing.assert_allclose(low, [0.2 - z * 0.01, 0.5 - z * 0.02, 0.9 - z * 0.04], rtol=1e-12)
    np.testing.assert_allclose(high, [0.2 + z * 0.01, 0.5 + z * 0.02, 0.9 + z * 0.04], rtol=1e-12)
    assert not est.mean.flags.writeable and not est.standard_errors.flags.writeable


def test_checks_and_equality():
    with pytest.raises(ValueError, match=r"mean must have shape \(3,\)"):
        estimate(mean=[0.2, 0.5])
    with pytest.raises(ValueError, match="one name per coordinate"):
        estimate(names=["a", "b"])
    with pytest.raises(ValueError, match="not finite"):
        estimate(mean=[0.2, np.nan, 0.9])
    with pytest.raises(ValueError, match="not positive"):
        estimate(standard_errors=[0.01, 0.0, 0.04])
    assert estimate(names=["a", "b", "c"]) == estimate() != estimate(n_reports=999)
