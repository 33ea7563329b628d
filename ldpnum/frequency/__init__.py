"""Categorical frequency oracles over codes ``0..k-1``, their post-processing and the choice rule."""

from ._base import FrequencyOracle
from .grr import GRR
from .hadamard import HadamardResponse
from .hashing import BLH, OLH
from .pirappor import PIRappor
from .subset import SubsetSelection
from .unary import OUE, SUE, pack_bits, unpack_bits
from .postprocess import POSTPROCESS, postprocess_frequencies, project_simplex
from .recommend import Recommendation, recommend

__all__ = ["FrequencyOracle", "GRR", "SUE", "OUE", "BLH", "OLH", "HadamardResponse", "SubsetSelection", "PIRappor", "pack_bits", "unpack_bits", "POSTPROCESS", "postprocess_frequencies", "project_simplex", "recommend",
           "Recommendation"]
