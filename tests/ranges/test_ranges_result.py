"""RangeEstimate (``ldpnum/ranges/_result.py``): range, CDF and quantile queries on hand-built trees, the three
consistency modes, the discrete mode, validation."""

import pickle

import numpy as np
import pytest

from ldpnum.ranges import RangeEstimate


def small_estimate(consistency_="least-squares"):
    return RangeEstimate([[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]], bounds=(0, 4), branching=2,
                         consistency=consistency_)


def test_range_estimate_queries():
    est = small_estimate()
    assert est.range(1, 3) == pytest.approx(0.5)
    assert est.range(0.5, 1.5) == pytest.approx(0.05 + 0.1)  # half of leaf 0, half of leaf 1
    assert est.range(1.25, 1.75) == pytest.approx(0.1)
    assert est.range(-5, 50) == pytest.approx(1.0)
    got = est.range(np.array([[0, 1], [2, 3]]), np.array([[4, 2], [3, 4]]))
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got, [[1.0, 0.2], [0.3, 0.4]])
    np.testing.assert_allclose(est.cdf([-1, 0, 0.5, 2, 4, 10]), [0, 0, 0.05, 0.3, 1, 1])
    assert np.isnan(est.cdf(np.nan))
    np.testing.assert_allclose(est.quantile([0, 0.05, 0.3, 0.5, 1]), [0, 0.5, 2, 2 + 2 / 3, 4])
    assert isinstance(est.range(0, 1), float) and isinstance(est.quantile(0.5), float)
    d = est.to_distribution()
    for q in (0.1, 0.37, 0.9):
        assert d.quantile(q) == pytest.approx(est.quantile(q), abs=1e-12)
    np.testing.assert_allclose(d.cdf([0.3, 1.7, 3.9]), est.cdf([0.3, 1.7, 3.9]), atol=1e-12)


def test_none_answers_use_the_minimal_cover():
    """An inconsistent tree: the full domain is the root (1), [0, 2) is node (1, 0), partial leaves
    interpolate within the leaf."""
    est = RangeEstimate([[1.0], [0.5, 0.45], [0.1, 0.2, 0.3, 0.35]], bounds=(0, 4), branching=2,
                        consistency="none")
    assert est.range(0, 4) == 1.0
    assert est.range(0, 2) == 0.5
    assert est.range(1, 2) == pytest.approx(0.2)
    assert est.range(0.5, 2.5) == pytest.approx(0.05 + 0.2 + 0.15)  # leaf 0 half, leaf 1, leaf 2 half
    assert est.range(0, 3) == pytest.approx(0.5 + 0.3)
    assert est.cdf(2) == 0.5
    with pytest.raises(ValueError, match="consistent"):
        est.to_distribution()
    assert est.quantile(0.5) == pytest.approx(2.0)


def test_least_squares_to_distribution_uses_norm_sub():
    est = RangeEstimate([[1.0], [0.3, 0.7], [0.35, -0.05, 0.3, 0.4]], bounds=(0, 4), branching=2)
    d = est.to_distribution()
    assert d.method == "hh-least-squares+norm-sub" and d.probabilities.min() >= 0
    from ldpnum.estimation import norm_sub

    np.testing.assert_allclose(d.probabilities, norm_sub(est.leaves))


def test_range_estimate_validation():
    with pytest.raises(ValueError, match="consistent tree"):
        RangeEstimate([[1.0], [0.3, 0.6], [0.1, 0.2, 0.3, 0.4]], bounds=(0, 4), branching=2)
    with pytest.raises(ValueError, match="non-negative"):
        RangeEstimate([[1.0], [0.3, 0.7], [0.35, -0.05, 0.3, 0.4]], bounds=(0, 4), branching=2,
                      consistency="nonnegative")
    with pytest.raises(ValueError, match="nodes on levels"):
        RangeEstimate([[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]], bounds=(0, 4), branching=4)
    with pytest.raises(ValueError, match="consistency must be"):
        RangeEstimate([[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]], bounds=(0, 4), branching=2, consistency="ls")
    est = small_estimate()
    with pytest.raises(ValueError, match="lo <= hi"):
        est.range(3, 1)
    with pytest.raises(ValueError, match="NaN"):
        est.range(np.nan, 1)
    with pytest.raises(ValueError, match=r"q must be in \[0, 1\]"):
        est.quantile([0.5, 1.5])
    with pytest.raises(TypeError):
        est.range("a", 1)


def tree(discrete):
    return RangeEstimate([[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]], bounds=(0, 3), branching=2,
                         discrete=discrete)


def test_range_estimate_discrete_queries():
    est = tree(True)
    np.testing.assert_array_equal(est.leaf_edges, [-0.5, 0.5, 1.5, 2.5, 3.5])
    # both ends included, for any real ends
    assert est.range(1, 2) == pytest.approx(0.5)  # p_1 + p_2
    assert tree(False).range(1, 2) == pytest.approx(1 / 3)  # continuous: 4 leaves of width 0.75, fractions
    np.testing.assert_allclose(est.range([1.5, 0.2, -5, 3, 2.2], [2.5, 0.8, 10, 3, 2.8]), [0.3, 0, 1, 0.4, 0])
    np.testing.assert_allclose(est.cdf([-1, 0, 0.5, 1, 2.99, 3, 9]), [0, 0.1, 0.1, 0.3, 0.6, 1, 1])
    assert est.quantile([0, 0.1, 0.15, 0.3, 0.31, 1]).tolist() == [0, 0, 1, 1, 2, 3]
    assert isinstance(est.quantile(0.5), int) and est.quantile(0.5) == 2
    assert "discrete=True" in repr(est)
    assert pickle.loads(pickle.dumps(est)) == est and est != tree(False)
    for none in (RangeEstimate([[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]], bounds=(0, 3), branching=2,
                               consistency="none", discrete=True),):
        assert none.range(1, 2) == pytest.approx(0.5)
    d = est.to_distribution()
    assert d.discrete and d.range(1, 2) == pytest.approx(0.5) and d.quantile(0.5) == 2


def test_range_estimate_discrete_refuses_a_tree_that_is_not_one_leaf_per_integer():
    with pytest.raises(ValueError, match="one leaf per integer"):
        RangeEstimate([[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]], bounds=(0, 4), branching=2, discrete=True)
    with pytest.raises(ValueError, match="one leaf per integer"):
        RangeEstimate([[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]], bounds=(0.5, 3.5), branching=2, discrete=True)
    with pytest.raises(TypeError, match="discrete must be a bool"):
        RangeEstimate([[1.0], [0.3, 0.7], [0.1, 0.2, 0.3, 0.4]], bounds=(0, 3), branching=2, discrete="yes")
