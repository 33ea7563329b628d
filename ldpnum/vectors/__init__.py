"""Bounded vectors: each person holds ``dim`` numbers, each within public bounds, and sends one report.

Two ways to collect them under ε-LDP (see the guide ``docs/vectors.md``):

* :class:`SampledDimensions` — each person reports ``k`` of the ``dim`` coordinates, each with ``ε/k``,
  through any 1-D mean mechanism (Piecewise, Hybrid, Duchi, Square Wave, ...); per-coordinate means and,
  with a distribution mechanism inside, per-coordinate distributions.
* :class:`DuchiMultivariate` — each person reports one vector of ``dim`` signs (Duchi et al.'s ℓ∞
  mechanism); per-coordinate means.

Both return a :class:`VectorMeanEstimate` from ``estimate_mean``.

Examples
--------
>>> import numpy as np, ldpnum as ldp
>>> X = np.random.default_rng(0).uniform(0, 1, (100_000, 2))
>>> m = ldp.SampledDimensions("hybrid", epsilon=2.0, bounds=[(0, 1), (0, 1)])
>>> est = m.estimate_mean(m.privatize(X, rng=1))
>>> est.mean.shape, est.k
((2,), 1)
"""

from ._base import MAX_DIM, VectorMechanism
from ._result import VectorMeanEstimate
from .duchi import DuchiMultivariate
from .sampled import SampledDimensions, default_k
from .sqkr import SQKR
from .unit import PrivHS, PrivUnit, PrivUnitG

__all__ = ["VectorMechanism", "VectorMeanEstimate", "SampledDimensions", "DuchiMultivariate", "PrivHS", "PrivUnit",
           "PrivUnitG", "SQKR", "default_k", "MAX_DIM"]
