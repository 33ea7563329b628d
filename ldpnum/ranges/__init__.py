"""Range queries over numerical data: hierarchical histograms and their results.

:class:`HierarchicalHistogram` is the mechanism (each person reports one level of a ``B``-ary tree over
buckets of the domain, with the full ε); :class:`RangeEstimate` answers range queries, CDFs and quantiles
from the estimated tree; :mod:`ldpnum.estimation.consistency` holds the tree shapes and the least-squares
and non-negative consistency algorithms, and :mod:`ldpnum.ranges.adaptive` the adaptive (AHEAD-style) tree,
``estimate_ranges(consistency="adaptive")``.
"""

from ._result import CONSISTENCY, RangeEstimate
from .hierarchical import (BRANCHING_CANDIDATES, LEVEL_ORACLES, GRRLevel, HadamardLevel, HierarchicalHistogram,
                           LevelOracle, OLHLevel, choose_branching, predicted_range_variance)

__all__ = ["HierarchicalHistogram", "RangeEstimate", "CONSISTENCY", "choose_branching",
           "predicted_range_variance", "LevelOracle", "GRRLevel", "OLHLevel", "HadamardLevel",
           "LEVEL_ORACLES",
           "BRANCHING_CANDIDATES"]
