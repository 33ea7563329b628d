"""Several attributes at once: hybrid-dimensional grids (HDG) and k-way marginals (Marginals).

HDG answers 1-D and 2-D range queries over numerical columns; Marginals gives CALM-style k-way marginals of categorical
columns.

Examples
--------
>>> import numpy as np, ldpnum as ldp
>>> X = np.random.default_rng(0).uniform(0, 1, (100_000, 3))
>>> hdg = ldp.HDG(2.0, bounds={"x": (0, 1), "y": (0, 1), "z": (0, 1)}, n=len(X))
>>> est = hdg.estimate_ranges(hdg.privatize(X, rng=1))
>>> est.pairs
(('x', 'y'), ('x', 'z'), ('y', 'z'))
>>> bool(abs(est.range({"y": (0.2, 0.7), "z": (0, 0.5)}) - 0.25) < 0.03)
True
"""

from ._result import MarginalsEstimate, MultiRangeEstimate, NoisyRangesWarning
from .hdg import HDG, guideline_granularities
from .marginals import Marginals

__all__ = ["HDG", "MultiRangeEstimate", "NoisyRangesWarning", "guideline_granularities", "Marginals", "MarginalsEstimate"]
