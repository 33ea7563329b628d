"""Post-processing of frequency estimates (ldpnum/estimation/postprocess.py): Norm-Sub, the projection on the
simplex and clipping, on their own and through a frequency oracle's ``estimate_frequencies(postprocess=)``."""

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.estimation import norm_sub, postprocess_frequencies, project_simplex


@pytest.mark.parametrize("method", ["norm-sub", "simplex", "clip"])
def test_postprocessing(method):
    g = ldp.GRR(0.5, 50)
    x = np.zeros(2000, dtype=np.int64)
    est = g.estimate_frequencies(g.privatize(x, rng=2), postprocess=method)
    assert est.frequencies.min() >= 0 and est.postprocess == method
    if method != "clip":
        assert est.frequencies.sum() == pytest.approx(1.0)
    raw = g.estimate_frequencies(g.privatize(x, rng=2))
    assert raw.frequencies.min() < 0  # the unbiased estimate needed it
    np.testing.assert_array_equal(est.standard_errors, raw.standard_errors)


def test_norm_sub_and_simplex_projection():
    """Norm-Sub equals the Euclidean projection when the positive part sums to at least 1 (the shift only
    ever removes mass); when mass must be added, Norm-Sub keeps zeroed entries at zero and they differ."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.normal(0.02, 0.05, 40)
        v = v - (v.sum() - 1.2) / v.size
        np.testing.assert_allclose(norm_sub(v), project_simplex(v), atol=1e-12)
    v = np.array([0.5, 0.2, -0.01, 0.05])
    np.testing.assert_allclose(norm_sub(v), [0.5 + 0.25 / 3, 0.2 + 0.25 / 3, 0.0, 0.05 + 0.25 / 3])
    np.testing.assert_allclose(project_simplex(v), [0.565, 0.265, 0.055, 0.115])

    with pytest.raises(ValueError, match="postprocess must be one of"):
        postprocess_frequencies(np.ones(3) / 3, "round")
