r"""Heavy hitters over huge domains, and frequent items and itemsets of set-valued data.

Item encoding, the prefix protocols PEM and TreeHist, and their result; set-valued data: frequent items (SVIM) and
itemsets (SVSM) with padding-and-sampling (PaddingSampling).

Items (``str``, ``bytes`` or unsigned integers) are encoded once to fixed-width unsigned words by
:func:`encode_items` before any mechanism sees them, and decoded only in results by :func:`decode_items`;
a heavy-hitter estimate is a :class:`HeavyHittersEstimate`.

Examples
--------
>>> from ldpnum.heavy import encode_items, decode_items
>>> words, item_type, n_truncated = encode_items([b"\x01\x02", b"\xff"], item_bits=16)
>>> words.tolist(), item_type
([258, 65280], 'bytes')
>>> decode_items(words, item_type, 16)
[b'\x01\x02', b'\xff']
"""

from ..exceptions import TruncationWarning
from ._result import HeavyHittersEstimate, SetItemsEstimate, item_label
from .items import ITEM_TYPES, decode_items, encode_items
from .prefix import PEM, TreeHist
from .padding import PaddingSampling, PaddingSamplingOLH
from .cms import CountMeanSketch
from .setvalued import SVIM, SVSM, ItemsetsEstimate, Payload, SetValuedState

__all__ = ["encode_items", "decode_items", "ITEM_TYPES", "HeavyHittersEstimate", "TruncationWarning", "PEM", "TreeHist",
           "PaddingSampling", "PaddingSamplingOLH", "SVIM", "SVSM", "ItemsetsEstimate", "SetItemsEstimate", "Payload",
           "SetValuedState", "item_label", "CountMeanSketch"]
