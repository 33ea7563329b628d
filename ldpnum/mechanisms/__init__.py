"""Randomizers, one module per family."""

from .. import base as _base
from ..base import Mechanism, MeanOracle, from_spec, lookup, registered
from .binary import Duchi, RandomizedResponse, StochasticRounding
from .laplace import Laplace
from .piecewise import Hybrid, Piecewise
from .wave import GeneralWave, SquareWave
from .adaptive import AdaptiveDistribution, AdaptivePayload, WarpedSquareWave

#: The estimators a mechanism may offer, each with what it estimates in words: ``{"estimate_mean": "means",
#: "estimate_distribution": "distributions", ...}``. ``mech.offers(name)`` (:meth:`ldpnum.Mechanism.offers`) says
#: whether a mechanism's reports answer one; the front ends name the others in their errors.
ESTIMATORS = _base.ESTIMATORS

__all__ = ["Mechanism", "MeanOracle", "from_spec", "registered", "lookup", "ESTIMATORS", "RandomizedResponse",
           "StochasticRounding", "Duchi", "Piecewise", "Hybrid", "Laplace", "SquareWave", "GeneralWave",
           "AdaptiveDistribution", "AdaptivePayload", "WarpedSquareWave"]
