"""Server-side estimation: all post-processing of aggregates (costs no privacy).

Mechanisms validate their arguments and delegate here; nothing in this package sees raw values.

:mod:`~ldpnum.estimation.mean`
    The unbiased mean of a mean oracle's reports, with its standard error.
:mod:`~ldpnum.estimation.frequency`
    The unbiased frequencies of a pure frequency oracle's support counts, and their variance.
:mod:`~ldpnum.estimation.likelihood`
    Constrained maximum likelihood for randomized response (two-output mean oracles, GRR's frequencies) and
    likelihood-ratio (profile-likelihood) intervals.
:mod:`~ldpnum.estimation.em`, :mod:`~ldpnum.estimation.distribution`
    The distribution behind window-randomizer reports (Square Wave, General Wave, Piecewise): EMS with a
    held-out choice of its smoothing (default), EMS, EM or Norm-Sub.
:mod:`~ldpnum.estimation.postprocess`
    Norm-Sub, the simplex projection and clipping of estimated frequencies.
:mod:`~ldpnum.estimation.consistency`
    Tree shapes, range decompositions and least-squares or non-negative consistency of hierarchical
    histograms.
:mod:`~ldpnum.estimation.tables`
    Consistency of tables that share margins (Marginals' attribute sets, HDG's grids).
:mod:`~ldpnum.estimation.joint`
    Joint tables from margins: shrinkage toward independence, Gaussian-copula and interpolated response
    matrices (iterative proportional fitting), maximum-entropy reconstruction.
:mod:`~ldpnum.estimation.grids`
    HDG's post-processing of its grids, end to end.
:mod:`~ldpnum.estimation.bootstrap`
    Parametric bootstrap intervals over the aggregate: distributions, range trees, and tables of cells (HDG's
    grids, Marginals' sets).
:mod:`~ldpnum.estimation.bitflip`
    dBitFlip's histogram: unbiased bucket frequencies from sampled-bucket bits, their variance, the distribution.
"""

from . import consistency
from .distribution import default_n_bins, estimate_window_distribution
from .em import (EMResult, WindowTransition, ems_heldout, expectation_maximization, window_transition,
                 window_transition_from_plan)
from .frequency import estimate_frequencies, support_variance, unbiased_frequencies
from .mean import estimate_mean
from .postprocess import POSTPROCESS, norm_sub, postprocess_frequencies, project_simplex
from .bootstrap import bootstrap_distribution, bootstrap_ranges, bootstrap_tables, resample_table_counts

__all__ = ["consistency", "default_n_bins", "estimate_window_distribution", "EMResult", "WindowTransition",
           "ems_heldout", "expectation_maximization", "window_transition", "window_transition_from_plan",
           "estimate_frequencies", "support_variance", "unbiased_frequencies", "estimate_mean", "POSTPROCESS",
           "norm_sub", "postprocess_frequencies", "project_simplex", "bootstrap_distribution", "bootstrap_ranges",
           "bootstrap_tables", "resample_table_counts"]
