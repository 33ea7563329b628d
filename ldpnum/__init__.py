"""ldpnum: numerical and categorical data under local differential privacy (LDP).

Each person randomizes their own value on their own device with a mechanism's ``privatize``; the collector
only ever sees the randomized :class:`Reports`, reduces them to a mergeable :class:`Aggregate` (``a + b``
merges chunks, partitions or days) and estimates from it. Every randomizer has a finite output alphabet and
integer thresholds, so its privacy guarantee holds exactly as stated and is tested exactly; randomness comes
from the operating system's CSPRNG unless a seed is given for a simulation.

What can be estimated
---------------------
* **means** with a confidence interval: :class:`StochasticRounding`, :class:`Duchi`, :class:`Piecewise`,
  :class:`Hybrid`, :class:`Laplace` (and every distribution mechanism) → :class:`MeanEstimate`;
* **distributions and quantiles**: :class:`SquareWave`, :class:`GeneralWave`, :class:`Piecewise` with EM/EMS
  → :class:`DistributionEstimate` (``cdf``, ``quantile``, ``range``, ``plot``);
* **range counts**: :class:`HierarchicalHistogram` → :class:`RangeEstimate`;
* **category frequencies**: :class:`GRR`, :class:`SUE`, :class:`OUE`, :class:`BLH`, :class:`OLH`,
  :class:`SubsetSelection`, :class:`HadamardResponse`, :class:`PIRappor`, :class:`PGR` → :class:`FrequencyEstimate`;
* **heavy hitters** over str, bytes or integer items (:mod:`ldpnum.heavy`) → :class:`HeavyHittersEstimate`;
* **frequent items and itemsets** of set-valued data: :class:`SVIM` → :class:`HeavyHittersEstimate`, :class:`SVSM`
  → :class:`ItemsetsEstimate` (padding-and-sampling, :class:`PaddingSampling`);
* **central ε of shuffled reports** (amplification by shuffling): :func:`ldpnum.accounting.shuffle_epsilon`;
* **mean vectors** of bounded vectors: :class:`SampledDimensions`, :class:`DuchiMultivariate`, and of vectors
  in the unit ℓ2 ball: :class:`PrivHS`, :class:`PrivUnit`, :class:`PrivUnitG` (compressed seed-index
  reports) and :class:`SQKR` (Kashin's representation, one 64-bit report; :mod:`ldpnum.vectors`) → :class:`VectorMeanEstimate`;
* **1-D and 2-D range queries over several columns at once**: :class:`HDG` (hybrid-dimensional grids,
  :mod:`ldpnum.multi`) → :class:`MultiRangeEstimate`;
* **k-way marginals of categorical columns** (CALM-style, consistent): :class:`Marginals` → :class:`MarginalsEstimate`;
* distances between estimates and raw samples in :mod:`ldpnum.metrics`, plots in :mod:`ldpnum.plot`.

Where it runs
-------------
``import ldpnum`` registers the ``.ldp`` accessor on pandas objects (:mod:`ldpnum.pandas`):
``df.ldp.privatize({"col": mechanism})`` returns report columns with each row's total ε recorded, and
``reports["col"].ldp.estimate_distribution()`` reads the spec from the column. The command line
``python -m ldpnum privatize|estimate|demo`` (:mod:`ldpnum.cli`) works on CSV and Parquet files, and
``import ldpnum.dask`` adds the same accessor to Dask DataFrames, aggregating partitions where they lie.

Examples
--------
>>> import numpy as np, ldpnum as ldp
>>> x = np.random.default_rng(0).uniform(0, 1440, 20_000)       # e.g. departure times in minutes
>>> sw = ldp.SquareWave(epsilon=2.0, bounds=(0, 1440))
>>> agg = sw.aggregate(sw.privatize(x, rng=1))                    # on the collector's side
>>> est = sw.estimate_mean(agg)
>>> lo, hi = est.confidence_interval(0.99)
>>> bool(lo < x.mean() < hi)
True
>>> median = sw.estimate_distribution(agg).quantile(0.5)
>>> bool(abs(median - 720) < 60)
True
"""

from .spec import Spec
from .reports import Reports
from .aggregate import Aggregate
from . import metrics
from ._results import (ConfidenceBand, ConfidenceInterval, DistributionEstimate, EstimateInterval, FrequencyEstimate,
                       MeanEstimate, PrivacyProvenance)
from .exceptions import (BootstrapBiasWarning, BudgetExceededError, BudgetWarning, ClippingWarning, NoisyRangesWarning,
                         PointMassWarning, SizeCorrectionWarning, SmoothingBiasWarning, SpecMismatchError,
                         TruncationWarning)
from .mechanisms import (Duchi, Hybrid, Laplace, Mechanism, MeanOracle, Piecewise, RandomizedResponse,
                         StochasticRounding, from_spec)
from .mechanisms import GeneralWave, SquareWave
from .mechanisms import AdaptiveDistribution, AdaptivePayload, WarpedSquareWave
from . import frequency
from .frequency import BLH, GRR, OLH, OUE, PGR, SUE, HadamardResponse, PIRappor, SubsetSelection
from . import ranges
from .ranges import HierarchicalHistogram, RangeEstimate
from . import heavy
from .heavy import CountMeanSketch, HeavyHittersEstimate, PEM, TreeHist
from .heavy import ItemsetsEstimate, PaddingSampling, PaddingSamplingOLH, SVIM, SVSM
from . import accounting
from ._recommend import recommend
from .accounting import PrivacyLedger
from . import vectors
from .vectors import SQKR, DuchiMultivariate, PrivHS, PrivUnit, PrivUnitG, SampledDimensions, VectorMeanEstimate
from . import multi
from .multi import HDG, Marginals, MarginalsEstimate, MultiRangeEstimate
from . import longitudinal
from .longitudinal import LGRR, LOLOHA, LOSUE, RAPPOR, ClientKeys, DBitFlip, OneBitMean, RapporEstimate
from . import pandas  # registers the ``.ldp`` accessors on pandas Series and DataFrame
from . import plot  # light: matplotlib is imported only when something is drawn

__version__ = "0.1.0.dev0"

__all__ = [
    "Aggregate", "Reports", "Spec", "MeanEstimate", "ConfidenceInterval", "DistributionEstimate", "metrics",
    "EstimateInterval", "ConfidenceBand", "PrivacyProvenance",
    "ClippingWarning", "BudgetWarning", "BudgetExceededError", "SpecMismatchError", "SmoothingBiasWarning",
    "PointMassWarning", "SizeCorrectionWarning", "NoisyRangesWarning", "BootstrapBiasWarning",
    "Mechanism", "MeanOracle", "from_spec",
    "RandomizedResponse", "StochasticRounding", "Duchi", "Piecewise", "Hybrid",
    "SquareWave", "GeneralWave", "Laplace", "AdaptiveDistribution", "AdaptivePayload", "WarpedSquareWave",
    "frequency", "FrequencyEstimate", "GRR", "SUE", "OUE", "BLH", "OLH", "HadamardResponse", "SubsetSelection", "PIRappor", "PGR",
    "ranges", "HierarchicalHistogram", "RangeEstimate",
    "heavy", "HeavyHittersEstimate", "TruncationWarning", "PEM", "TreeHist", "CountMeanSketch",
    "SVIM", "SVSM", "PaddingSampling", "PaddingSamplingOLH", "ItemsetsEstimate",
    "accounting", "PrivacyLedger", "recommend",
    "vectors", "VectorMeanEstimate", "SampledDimensions", "DuchiMultivariate", "PrivHS", "PrivUnit", "PrivUnitG",
    "SQKR", "multi", "HDG", "MultiRangeEstimate", "Marginals", "MarginalsEstimate",
    "longitudinal", "ClientKeys", "LGRR", "LOSUE", "LOLOHA", "OneBitMean", "DBitFlip", "RAPPOR", "RapporEstimate",
    "pandas", "plot",
    "__version__",
]
