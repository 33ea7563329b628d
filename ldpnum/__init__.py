"""ldpnum: numerical data under local differential privacy.

Each person randomizes their own value with a mechanism's ``privatize``; the collector merges the reports
into an :class:`Aggregate` and estimates means (and, in later releases, distributions, quantiles and range
counts) from it. Every randomizer has a finite output alphabet and integer thresholds, so its privacy
guarantee holds exactly as stated and is tested exactly.

``import ldpnum`` also registers the ``.ldp`` accessor on pandas objects (:mod:`ldpnum.pandas`):
``df.ldp.privatize({"col": mechanism}, strategy=...)`` returns report columns with each row's total ε
recorded, and ``reports["col"].ldp.estimate_distribution()`` reads the spec from the column.

>>> import numpy as np, ldpnum as ldp
>>> m = ldp.Piecewise(epsilon=1.0, bounds=(0, 5000))
>>> reports = m.privatize(np.array([1200.0, 80.0, 4100.0]), rng=0)
>>> len(reports), reports.spec.mechanism
(3, 'piecewise')
"""

from ._core import Aggregate, Reports, Spec
from . import metrics
from ._results import ConfidenceInterval, DistributionEstimate, FrequencyEstimate, MeanEstimate
from .exceptions import BudgetWarning, ClippingWarning, SpecMismatchError
from .mechanisms import (Duchi, Hybrid, Laplace, Mechanism, MeanOracle, Piecewise, RandomizedResponse,
                         StochasticRounding, from_spec)
from .mechanisms import GeneralWave, SquareWave
from . import frequency
from .frequency import BLH, GRR, OLH, OUE, SUE, HadamardResponse, PIRappor, SubsetSelection
from . import ranges
from .ranges import HierarchicalHistogram, RangeEstimate
from . import pandas  # registers the ``.ldp`` accessors on pandas Series and DataFrame
from . import plot  # light: matplotlib is imported only when something is drawn

__version__ = "0.1.0.dev0"

__all__ = [
    "Aggregate", "Reports", "Spec", "MeanEstimate", "ConfidenceInterval", "DistributionEstimate", "metrics",
    "ClippingWarning", "BudgetWarning", "SpecMismatchError",
    "Mechanism", "MeanOracle", "from_spec",
    "RandomizedResponse", "StochasticRounding", "Duchi", "Piecewise", "Hybrid",
    "SquareWave", "GeneralWave", "Laplace",
    "frequency", "FrequencyEstimate", "GRR", "SUE", "OUE", "BLH", "OLH", "HadamardResponse", "SubsetSelection", "PIRappor",
    "ranges", "HierarchicalHistogram", "RangeEstimate",
    "pandas", "plot",
    "__version__",
]
