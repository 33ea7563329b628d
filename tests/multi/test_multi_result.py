"""The several-attribute results (``ldpnum/multi/_result.py``): MultiRangeEstimate and MarginalsEstimate built by
hand, their checks and queries, and the result classes' import and pickle paths."""

import pickle

import numpy as np
import pytest

import ldpnum as ldp
from ldpnum.multi import MarginalsEstimate, MultiRangeEstimate


def test_result_checks_the_shrinkage_weights():
    base = dict(columns=("a", "b"), bounds=((0, 1), (0, 1)), marginals=(np.ones(2) / 2, np.ones(2) / 2),
                joints=(np.full((2, 2), 0.25),), granularities=(2, 2))
    assert MultiRangeEstimate(**base, shrinkage=[np.float64(0.5)]).shrinkage == (0.5,)
    for bad in ((0.5, 0.5), (1.5,), (-0.1,)):
        with pytest.raises(ValueError, match="shrinkage"):
            MultiRangeEstimate(**base, shrinkage=bad)


def test_marginal_takes_the_columns_as_separate_arguments():
    # before: "marginal() takes 2 positional arguments but 3 were given"
    est = MarginalsEstimate(columns=("a", "b", "c"), categories=(2, 3, 2), sets=(("a", "b"), ("b", "c")),
                            tables=(np.full((2, 3), 1 / 6), np.full((3, 2), 1 / 6)))
    np.testing.assert_array_equal(est.marginal("b", "a"), est.marginal(("b", "a")))
    np.testing.assert_array_equal(est.marginal("a", "b", "c"), est.marginal(("a", "b", "c")))
    with pytest.raises(TypeError, match="as names"):
        est.marginal(("a", "b"), "c")
    with pytest.raises(ValueError, match="unknown column"):
        est.marginal("a", "z")


def test_result_class_lives_with_the_multi_results_and_keeps_its_old_path():
    # MarginalsEstimate is in multi/_result.py next to MultiRangeEstimate; ldpnum.multi.marginals still names
    # it, so imports and pickles written before the move (which name ldpnum.multi.marginals) still work
    from ldpnum.multi import _result, marginals

    assert ldp.MarginalsEstimate is ldp.multi.MarginalsEstimate is _result.MarginalsEstimate
    assert marginals.MarginalsEstimate is _result.MarginalsEstimate
    assert _result.MarginalsEstimate.__module__ == "ldpnum.multi._result"
    assert pickle.loads(b"cldpnum.multi.marginals\nMarginalsEstimate\n.") is _result.MarginalsEstimate
