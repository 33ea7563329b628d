"""Randomizers, one module per family."""

from ..base import Mechanism, MeanOracle, from_spec, lookup, registered
from .binary import Duchi, RandomizedResponse, StochasticRounding
from .laplace import Laplace
from .piecewise import Hybrid, Piecewise
from .wave import GeneralWave, SquareWave
from .adaptive import AdaptiveDistribution, AdaptivePayload, WarpedSquareWave

__all__ = ["Mechanism", "MeanOracle", "from_spec", "registered", "lookup", "RandomizedResponse",
           "StochasticRounding", "Duchi", "Piecewise", "Hybrid", "Laplace", "SquareWave", "GeneralWave",
           "AdaptiveDistribution", "AdaptivePayload", "WarpedSquareWave"]
