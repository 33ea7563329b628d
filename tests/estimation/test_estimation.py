"""ldpnum.estimation through the mechanisms that delegate to it: a hierarchy's levels estimate with the frequency
estimator (the estimators' own tests are in their modules' files: test_frequency.py, test_mean.py)."""

import numpy as np

from ldpnum.estimation import unbiased_frequencies


def test_hierarchy_levels_estimate_with_the_frequency_estimator():
    """A level of a hierarchical histogram is a frequency oracle: the same unbiased estimator."""
    from ldpnum.frequency.hadamard import hadamard_support_counts
    from ldpnum.ranges.hierarchical import GRRLevel, HadamardLevel, OLHLevel

    grr = GRRLevel(1.0, 4)
    block = np.array([10.0, 20.0, 30.0, 40.0])
    p, q = grr.oracle.support_probabilities
    np.testing.assert_array_equal(grr.estimate(block), unbiased_frequencies(block, 100, p, q))
    olh = OLHLevel(1.0, 4)
    p, q = olh.oracle.support_probabilities
    np.testing.assert_array_equal(olh.estimate(np.append(block, 150.0)), unbiased_frequencies(block, 150, p, q))
    hr = HadamardLevel(1.0, 4)
    codes = np.arange(hr.K, dtype=np.float64)
    p, q = hr.oracle.support_probabilities
    support = hadamard_support_counts(codes, 4).astype(np.float64)
    np.testing.assert_array_equal(hr.estimate(codes), unbiased_frequencies(support, codes.sum(), p, q))
