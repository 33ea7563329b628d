"""Server-side estimation: post-processing of aggregates (costs no privacy).

:mod:`ldpnum.estimation.em` reconstructs a bucketized distribution from the output-cell counts of the
window randomizer (Square Wave, General Wave, Piecewise) with EM or EMS.
"""

from .distribution import default_n_bins, estimate_window_distribution, norm_sub
from .em import (EMResult, WindowTransition, expectation_maximization, window_transition,
                 window_transition_from_plan)

__all__ = ["default_n_bins", "estimate_window_distribution", "norm_sub", "EMResult", "WindowTransition", "expectation_maximization", "window_transition",
           "window_transition_from_plan"]
