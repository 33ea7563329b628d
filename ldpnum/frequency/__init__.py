"""Categorical frequency oracles over codes ``0..k-1`` and the choice rule.

Their estimator and post-processing are in :mod:`ldpnum.estimation`.
"""

from ._base import FrequencyOracle
from .grr import GRR
from .hadamard import HadamardResponse
from .hashing import BLH, OLH
from .pirappor import PIRappor
from .pgr import PGR
from .subset import SubsetSelection
from .unary import OUE, SUE, pack_bits, unpack_bits
from .recommend import Recommendation, recommend

__all__ = ["FrequencyOracle", "GRR", "SUE", "OUE", "BLH", "OLH", "HadamardResponse", "SubsetSelection", "PIRappor", "PGR", "pack_bits", "unpack_bits", "recommend",
           "Recommendation"]
