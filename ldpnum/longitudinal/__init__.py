"""Repeated collection from the same people: client keys and memoized responses.

A person who reports again about the same value must not spend ε again. Each person holds a secret key
(:class:`ClientKeys`); a longitudinal mechanism's *permanent* response to a value is a deterministic function of
(key, spec, value) through a keyed pseudo-random function (:func:`~ldpnum.longitudinal.keys.keyed_words`), and an
*instantaneous* randomizer drawn from ``rng`` may follow it at every report.
"""

from .keys import ClientKeys
from .memo import Longitudinal
from .grr import LGRR
from .losue import LOSUE
from .loloha import LOLOHA
from .telemetry import DBitFlip, MemoizedDBitFlip, MemoizedOneBitMean, OneBitMean
from .rappor import RAPPOR, RapporEstimate

__all__ = ["ClientKeys", "Longitudinal", "LGRR", "LOSUE", "LOLOHA", "OneBitMean", "MemoizedOneBitMean", "DBitFlip",
           "MemoizedDBitFlip", "RAPPOR", "RapporEstimate"]
