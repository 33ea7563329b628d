r"""Apple's count-mean sketch (CMS) and its one-bit Hadamard variant (HCMS), with an estimator unbiased for the family.

Frequencies over a huge domain (words, emoji, URLs, app ids) from reports of ``width`` bits (CMS) or one bit and
two indices (HCMS), decoded against a dictionary of candidates (Apple Differential Privacy Team, "Learning with
Privacy at Scale", 2017).

The client (one person, item or category ``d``)
-----------------------------------------------
1. *Value.* An item (str, bytes or a non-negative int) is encoded to a word by the heavy hitters' item encoding
   (:func:`ldpnum.heavy.encode_items`); a category code in ``[0, k)`` is its own word. Items wider than 64 bits
   (``item_bits`` up to 256) are hashed through their public digest, one word
   (:func:`ldpnum.heavy.items.item_digests`): the report is then the same computation on that word.
2. *Hash index.* ``j`` uniform among the ``hashes`` public hash functions, from a random word of its own (never
   from the value): ``h_j(d) = floor(SipHash-2-4_K(j ‖ d ‖ 0) · width / 2**64)``, with ``K`` derived from the
   spec's ``hash_seed`` (:func:`sketch_key`), so the family is public and the collector recomputes it.
3. *CMS.* The ``±1`` vector of ``width`` entries with a single ``+1`` at ``h_j(d)``, every entry flipped with
   probability ``1/(e^{ε/2} + 1)``: the symmetric unary encoding (:class:`ldpnum.SUE`) of ``h_j(d)`` over
   ``width`` buckets, on SUE's integer plan (:func:`ldpnum.frequency.unary.unary_plan`: the bit at ``h_j(d)`` is
   +1 with probability ``p``, every other bit with ``q``, both exact integers over a power of two). Report: the
   ``width`` bits and ``j``. The other bits are drawn sparsely (:class:`~ldpnum.frequency.unary.SparseBits`):
   the first ``ℓ`` bits of each bit's comparison with ``q`` are made 64 bits at a time, and only the
   ``≈ width/2^ℓ`` bits they leave undecided read a lane, so a person costs 92 random words at ``width = 1024``,
   ε = 4 instead of SUE's 258, with the same exact distribution.
4. *HCMS.* A Hadamard column ``l`` uniform in ``[0, width)`` (``width`` a power of two), the entry
   ``H[h_j(d), l] = (-1)^popcount(h_j(d) & l)`` kept with probability ``e^ε/(e^ε + 1)`` (the two-output plan of
   :func:`ldpnum.plans.binary_plan`), else flipped. Report: one integer ``(j·width + l)·2 + s``.

Privacy (exact, from the integer plans)
---------------------------------------
The hash index and the Hadamard column are drawn from words that never see the value, so they cancel from every
likelihood ratio; given them, a CMS report is SUE's report over ``width`` buckets (two values differ in at most the
two buckets they hash to: ratio ``p(1-q)/(q(1-p)) ≤ e^ε``, tight) and an HCMS report is randomized response on one
bit (``t_hi/t_lo ≤ e^ε``, tight). Values that hash to the same bucket (or Hadamard sign) have ratio 1.

The collector
-------------
*Aggregate* (mergeable, ``O(width·hashes)``): CMS, per hash function, its number of reports and how many set each
bit (``hashes·(width + 1)`` counts); HCMS, the count of every code (``hashes·width·2`` counts).

*Estimates* (:meth:`CountMeanSketch.estimate_frequencies`, :mod:`ldpnum.estimation.sketch`): ``method="apple"``
is Apple's estimator, biased by the collisions of the fixed family; ``method="unbiased"`` (default) solves the
collision system exactly over the candidates, unbiased whenever the candidates include every value held (for
category codes, the whole domain, when it is at most ``width·hashes/16``). Both give standard errors from the exact
variance (plug-in).

References
----------
Apple Differential Privacy Team, "Learning with Privacy at Scale", Apple Machine Learning Journal, 2017.
M. Pan, "Count-Mean Sketch as an Optimized Framework for Frequency Estimation", arXiv:2406.03785, 2024.
J.-P. Aumasson, D. J. Bernstein, "SipHash: a fast short-input PRF", INDOCRYPT 2012.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._kernels import client_sketch as kernels
from .._kernels._jit import launch
from .._kernels.client_rappor_bloom import bloom_positions_kernel
from .._results import FrequencyEstimate
from .._validation import check_epsilon, check_k, check_scalar, prepared, check_categories
from ..aggregate import Aggregate, count_codes, single_code_counts
from ..base import Mechanism
from ..estimation.sketch import (METHODS, apple_counts, apple_variances, check_dictionary, check_dictionary_size,
                                 fwht_rows, sketch_reads, unbiased_counts)
from ..frequency.unary import (SparseBits, UnaryPlan, check_grouped_bit_counts, grouped_bit_counts, sparse_bits,
                               unary_extreme_ratio, unary_plan)
from ..plans import TWO48, TWO53, binary_plan, uniform_count
from ..reports import Reports
from ..spec import check_spec
from ._result import HeavyHittersEstimate
from .items import (ITEM_TYPES, check_digest, check_item_bits, digest_params, distinct_candidates, encode_typed_items,
                    item_digests)

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, SeedLike

__all__ = ["CountMeanSketch", "SketchPlan", "sketch_key", "sketch_positions", "VARIANTS", "HASH_FAMILY"]

#: The hash family and report layouts, as the spec names them (a change of either must change this string).
HASH_FAMILY = "siphash24-cms-v1"
#: The two clients: Apple's ``width``-bit CMS and its one-bit Hadamard variant.
VARIANTS = ("cms", "hcms")
#: Largest width and number of hash functions (the kernels' uniform choice and the HCMS column take 16 bits).
WIDTH_MAX = 1 << 16
HASHES_MAX = 1 << 16
_UNKNOWN = np.uint64(2**64 - 1)  # the word of category code -1 (unknown="uniform")
_CHUNK = 1 << 14  # candidates hashed at once when reading the sketch


def sketch_key(hash_seed: int) -> tuple[np.uint64, np.uint64]:
    """The public 128-bit SipHash key of the hash family of seed ``hash_seed``.

    The first 16 bytes of SHA-256 of ``b"ldpnum/count-mean-sketch/v1"`` followed by the seed as 8 little-endian bytes,
    as two little-endian 64-bit words.
    """
    digest = hashlib.sha256(b"ldpnum/count-mean-sketch/v1" + int(hash_seed).to_bytes(8, "little")).digest()
    return np.uint64(int.from_bytes(digest[:8], "little")), np.uint64(int.from_bytes(digest[8:16], "little"))


def sketch_positions(words: NDArray[np.uint64], hashes: int, width: int,
                     key: tuple[np.uint64, np.uint64]) -> NDArray[np.int64]:
    """``h_j(w)`` for every word and hash function: an ``(n, hashes)`` int64 array (the clients' own hash)."""
    words = np.ascontiguousarray(words, dtype=np.uint64)
    n = words.shape[0]
    items = np.repeat(words, hashes)
    index = np.tile(np.arange(hashes, dtype=np.uint64), n)
    out = np.empty((n * hashes, 1), dtype=np.int64)
    launch(bloom_positions_kernel, items, index, key[0], key[1], 1, width, out)
    return out.reshape(n, hashes)


@dataclass(frozen=True)
class SketchPlan:
    """Integer plan of a count-mean sketch client.

    Attributes
    ----------
    variant : {"cms", "hcms"}
    width, hashes : int
    key : (numpy.uint64, numpy.uint64)
        The hash family's SipHash key.
    unary : UnaryPlan or None
        CMS: SUE's plan over the ``width`` buckets (``p`` at the hashed bucket, ``q`` elsewhere).
    sparse : SparseBits or None
        CMS: the layout that draws the ``width`` bits of probability ``q`` sparsely
        (:class:`~ldpnum.frequency.unary.SparseBits`), when it reads fewer words than SUE's lanes (at the default
        width of 1024, at every ε: 92 words per record instead of 258 at ε = 4); ``None``: the lanes. Both give
        every bit the same exact probability.
    t_keep : int or None
        HCMS: the true Hadamard sign is kept iff ``(word >> 11) < t_keep`` (``t_keep / 2**53``).
    """

    variant: str
    width: int
    hashes: int
    key: tuple
    unary: UnaryPlan | None = None
    t_keep: int | None = None
    sparse: SparseBits | None = None

    @property
    def bits(self) -> UnaryPlan:
        """CMS: the unary plan of the ``width`` bits (AttributeError for HCMS)."""
        if self.unary is None:
            raise AttributeError("an HCMS plan has no unary plan")
        return self.unary

    @property
    def keep(self) -> Fraction:
        """HCMS: the probability of keeping the true Hadamard sign (AttributeError for CMS)."""
        if self.t_keep is None:
            raise AttributeError("a CMS plan has no keep probability")
        return Fraction(self.t_keep, TWO53)

    @property
    def words_per_record(self) -> int:
        """Words per record.

        CMS: the hash index's word, the true bit's, then the other bits' (lanes or the sparse layout); HCMS: two
        (index and column, then the coin).
        """
        if self.unary is None:
            return 2
        return 2 + self.sparse.words if self.sparse is not None else 1 + self.unary.words_per_record

    @property
    def index_bits(self) -> int:
        """CMS: bits of the hash index, ``max(1, ceil(log2 hashes))``."""
        return max(1, (self.hashes - 1).bit_length())

    @property
    def index_bytes(self) -> int:
        """CMS: bytes of the hash index after the ``width/8`` bytes of bits."""
        return -(-self.index_bits // 8)

    @property
    def index_weights(self) -> NDArray[np.float64]:
        """``π_j``: the exact probability that a report uses hash function ``j`` (``uniform_count / 2**48``)."""
        return np.array([uniform_count(j, self.hashes) / TWO48 for j in range(self.hashes)])

    def index_of(self, seed_word: int) -> tuple[int, int]:
        """``(j, l)`` chosen by a record's first word (``l`` is HCMS's column; 0 for CMS)."""
        j = ((seed_word >> 16) * self.hashes) >> 48
        return j, (seed_word & (self.width - 1)) if self.variant == "hcms" else 0

    def bucket(self, word: int, j: int) -> int:
        """``h_j(word)``."""
        return int(sketch_positions(np.array([word], dtype=np.uint64), self.hashes, self.width, self.key)[0, j])

    def exact_probabilities(self, v: int, seed_word: int) -> dict[int, Fraction]:
        """``{report key: Fraction}`` for value word ``v`` (``-1``: unknown) given the record's first word.

        Keys: CMS, the report's bits as an integer (bit ``b`` = report bit ``b``) plus ``j << width`` (``width ≤ 16``);
        HCMS, the report code. The first word's own probability does not depend on the value.
        """
        j, col = self.index_of(seed_word)
        pos = -1 if v < 0 else self.bucket(v, j)
        if self.variant == "cms":
            base = j << self.width
            return {base | y: p for y, p in self.bits.exact_probabilities(pos).items()}
        code = (j * self.width + col) * 2
        if pos < 0:
            return {code: Fraction(1, 2), code | 1: Fraction(1, 2)}
        plus = 1 - (bin(pos & col).count("1") & 1)
        keep = self.keep
        return {code | plus: keep, code | (1 - plus): 1 - keep}

    def extreme_ratio(self) -> Fraction:
        """Exact largest likelihood ratio over pairs of values (known or unknown) and reports, for any first word."""
        if self.variant == "cms":
            return unary_extreme_ratio(self.bits.p, self.bits.q)
        keep = self.keep
        return max(keep / (1 - keep), 2 * keep, 1 / (2 * (1 - keep)))

    def report_constants(self) -> tuple[float, float]:
        """``(a, g)`` of the variance of one report's contribution (:mod:`ldpnum.estimation.sketch`)."""
        if self.variant == "cms":
            p, q = self.bits.p, self.bits.q
            a = q * (1 - q) / (p - q) ** 2
            return float(a), float(1 + (p * (1 - p) - q * (1 - q)) / (p - q) ** 2)
        gap = 2 * self.keep - 1
        return float(1 / gap**2), 0.0


def _check_width(width, variant):
    width = check_scalar(width, "width", int, low=2, high=WIDTH_MAX)
    if variant == "cms" and width % 8:
        raise ValueError(f"width must be a multiple of 8 for variant='cms' (whole bytes of bits); got width={width}")
    if variant == "hcms" and width & (width - 1):
        raise ValueError(f"width must be a power of two for variant='hcms' (the Hadamard matrix's order); got "
                         f"width={width}")
    return width


class CountMeanSketch(Mechanism):
    r"""Apple's count-mean sketch over items or category codes, CMS or HCMS, with an unbiased estimator.

    Each person hashes their value with one of ``hashes`` public hash functions, chosen at random, onto
    ``[0, width)``, and reports a randomized one-hot ``±1`` vector of the bucket (CMS) or one randomized entry of
    its Hadamard row (HCMS). The collector's aggregate is a ``hashes × width`` sketch; frequencies are decoded
    for a dictionary of candidates.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int, optional
        Category codes ``0..k-1`` (``2 ≤ k ≤ 2**24``) as input. ``None`` (default): items (str, bytes or
        non-negative ints, :attr:`item_type`) as the heavy hitters take them.
    width : int, default 1024
        Buckets per hash function ``m``: a multiple of 8 (CMS) or a power of two (HCMS), at most 65536.
    hashes : int, default 256
        Number of hash functions ``k`` of the family, in [1, 65536]. The textbook estimator's collision bias
        shrinks as ``1/sqrt(hashes·width)``; the unbiased estimator's variance is inflated by about
        ``1 + |D|/(hashes·width)`` for ``|D|`` candidates; the aggregate holds about ``hashes·width`` counts.
    variant : {"cms", "hcms"}, default "cms"
        ``"cms"``: reports of ``width`` bits (per-report variance ``e^{ε/2}/(e^{ε/2} - 1)²``, SUE's);
        ``"hcms"``: one bit (variance ``((e^ε + 1)/(e^ε - 1))²``).
    item_type : {"str", "bytes", "uint"}, default "str"
        The items' type (``k=None`` only).
    item_bits : int, default 64
        Width of the item encoding (``k=None`` only), in [1, 256], see :func:`ldpnum.heavy.encode_items`. Above 64
        bits the family hashes each item's 64-bit digest (at the same people/s: one SipHash of the item's words
        more per person).
    hash_seed : int, default 0
        Seed of the public hash family, in ``[0, 2**64)``; stored in the spec.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. The hash index
    and Hadamard column come from random words that never see the value; given them, CMS is SUE over ``width``
    buckets and HCMS randomized response on one bit, both on exact integer plans (see :mod:`ldpnum.heavy.cms`).

    Apple's estimator :math:`\frac{m}{m-1}(y_d - n/m)`, :math:`y_d = \frac1k\sum_j M[j, h_j(d)]`, has expectation
    :math:`n_d + \frac{m}{m-1}\sum_{e\ne d} n_e (A_{de} - 1/m)`, with :math:`A_{de}` the share of hash functions
    under which :math:`d` and :math:`e` collide: it is biased for the fixed family a deployment uses.
    ``method="unbiased"`` inverts the collision matrix over the candidates instead (see
    :mod:`ldpnum.estimation.sketch`, whose derivation is this package's own; Pan, 2024, reports the same defect
    of the published analysis).

    References
    ----------
    Apple Differential Privacy Team, "Learning with Privacy at Scale", Apple Machine Learning Journal, 2017.
    M. Pan, "Count-Mean Sketch as an Optimized Framework for Frequency Estimation", arXiv:2406.03785, 2024.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> cms = ldp.CountMeanSketch(epsilon=4.0, width=256, hashes=64)
    >>> words = ["the", "of", "and", "to"]
    >>> x = np.random.default_rng(0).choice(words, 50_000, p=[0.4, 0.3, 0.2, 0.1]).tolist()
    >>> est = cms.estimate_frequencies(cms.privatize(x, rng=1), candidates=words)
    >>> est.items
    ('the', 'of', 'and', 'to')
    >>> bool(np.all(np.abs(est.frequencies - [0.4, 0.3, 0.2, 0.1]) < 5 * est.standard_errors))
    True
    """

    name = "count_mean_sketch"
    aliases = ("cms",)

    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        if spec.get("variant") == "hcms":
            return single_code_counts(counts, total, n_reports, spec)
        return check_grouped_bit_counts(counts, total, n_reports, spec, spec.get("hashes"), spec.get("width"),
                                        group="hash function")

    def __init__(self, epsilon: float, k: int | None = None, *, width: int = 1024, hashes: int = 256,
                 variant: str = "cms", item_type: str = "str", item_bits: int = 64, hash_seed: int = 0) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._bounds = None
        self._k = None if k is None else check_k(k)
        if not isinstance(variant, str):
            raise TypeError(f"variant must be a str, one of {VARIANTS}; got {type(variant).__name__}")
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}")
        self._variant = variant
        self._width = _check_width(width, variant)
        self._hashes = check_scalar(hashes, "hashes", int, low=1, high=HASHES_MAX)
        if self._k is None:
            if not isinstance(item_type, str):
                raise TypeError(f"item_type must be a str, one of {ITEM_TYPES}; got {type(item_type).__name__}")
            if item_type not in ITEM_TYPES:
                raise ValueError(f"item_type must be one of {ITEM_TYPES}; got {item_type!r}")
            self._item_bits = check_item_bits(item_bits, item_type)
        else:
            self._item_bits = 64
            item_type = "uint"
        self._item_type = item_type
        self._hash_seed = check_scalar(hash_seed, "hash_seed", int, low=0, high=2**64 - 1)
        key = sketch_key(self._hash_seed)
        if variant == "cms":
            h = self._epsilon / 2
            q0 = 1.0 / (math.exp(h) + 1.0)
            var0 = math.exp(h) / math.expm1(h) ** 2
            unary = unary_plan(self._epsilon, self._width, q0, var0)
            sparse = sparse_bits(self._width, unary.lane_bits, unary.t_other)
            lanes = unary.words_per_record - 1
            self._plan = SketchPlan(variant, self._width, self._hashes, key, unary=unary,
                                    sparse=sparse if sparse.words < lanes else None)
        else:
            self._plan = SketchPlan(variant, self._width, self._hashes, key, t_keep=binary_plan(self._epsilon).t_hi)

    # -- parameters --------------------------------------------------------------------------------
    @property
    def k(self) -> int | None:
        """Number of categories (codes ``0..k-1``), or None when the inputs are items."""
        return self._k

    @property
    def needs_candidates(self) -> bool:
        """True for a sketch over items: its frequencies are those of a dictionary (``candidates=``).

        Over category codes the whole domain is estimated when no candidates are given.
        """
        return self._k is None

    @property
    def width(self) -> int:
        """Buckets per hash function."""
        return self._width

    @property
    def hashes(self) -> int:
        """Number of hash functions."""
        return self._hashes

    @property
    def variant(self) -> str:
        """``"cms"`` or ``"hcms"``."""
        return self._variant

    @property
    def item_type(self) -> str:
        """The items' type (``"uint"`` for category codes)."""
        return self._item_type

    @property
    def item_bits(self) -> int:
        """Width of the item encoding (64 for category codes)."""
        return self._item_bits

    @property
    def hash_seed(self) -> int:
        """Seed of the public hash family."""
        return self._hash_seed

    @property
    def n_cells(self) -> int:
        """Counts in an aggregate: CMS ``hashes·(width + 1)``, HCMS ``hashes·width·2`` (the report codes)."""
        if self._variant == "cms":
            return self._hashes * (self._width + 1)
        return self._hashes * self._width * 2

    @property
    def bytes_per_report(self) -> int:
        """Size of one report: CMS ``width/8`` bytes plus the hash index's; HCMS one code."""
        if self._variant == "cms":
            return self._width // 8 + self._plan.index_bytes
        return int(self._report_dtype().itemsize)

    @property
    def variance_per_report(self) -> float:
        """Variance of one report's contribution to a frequency estimate, for a rare value and no collision.

        ``a (m/(m-1))²``: CMS ``≈ e^{ε/2}/(e^{ε/2} - 1)²``, HCMS ``≈ ((e^ε + 1)/(e^ε - 1))²`` (realized plans).
        """
        a, _ = self._plan.report_constants()
        m = self._width
        return a * (m / (m - 1)) ** 2

    def _spec_params(self):
        params: dict[str, Any] = {"k": self._k} if self._k is not None else {
            "item_type": self._item_type, "item_bits": self._item_bits, **digest_params(self._item_bits)}
        params.update(width=self._width, hashes=self._hashes, variant=self._variant, hash_seed=self._hash_seed,
                      hash=HASH_FAMILY)
        if self._variant == "cms":
            params["packed_bits"] = self._width + self._plan.index_bits
        return params

    @classmethod
    def _from_spec(cls, spec):
        params = {name: spec.get(name) for name, _ in spec.params}
        if params.pop("hash", HASH_FAMILY) != HASH_FAMILY:
            raise ValueError(f"spec names the hash family {spec.get('hash')!r}; this ldpnum has {HASH_FAMILY!r}")
        params.pop("packed_bits", None)
        check_digest(params, spec.mechanism)
        return cls(spec.epsilon, **params)

    def __repr__(self) -> str:
        what = f"k={self._k}" if self._k is not None else f"item_type={self._item_type!r}, item_bits={self._item_bits}"
        return (f"CountMeanSketch(epsilon={self._epsilon!r}, {what}, width={self._width}, hashes={self._hashes}, "
                f"variant={self._variant!r}, hash_seed={self._hash_seed})")

    # -- client side -------------------------------------------------------------------------------
    def prepare_values(self, x: ArrayLike, *, name: str | None = None,  # type: ignore[override]
                       nan_policy: str = "raise", fill_value: Any = None, unknown: str = "raise",
                       truncate: bool = True, locate: bool = False) -> NDArray[np.uint64]:
        """Validate one column and return its words (read-only uint64), without drawing anything.

        Category codes (``k`` given): as every frequency oracle takes them (integers in ``[0, k)``, floats refused,
        missing values raise or are imputed with a public ``fill_value``; codes outside raise, or with
        ``unknown="uniform"`` are reported as if the person held no value). Items (``k=None``): the words of
        :func:`ldpnum.heavy.encode_items` (``truncate``, ``locate`` as there); items of another type than
        :attr:`item_type` raise TypeError, missing items are never imputed.
        """
        label = "x" if name is None else str(name)
        if self._k is not None:
            codes = prepared(check_categories, x, self._k, name=name, nan_policy=nan_policy, fill_value=fill_value,
                             unknown=unknown)
            words = codes.view(np.uint64)
        else:
            if nan_policy != "raise" or fill_value is not None:
                raise ValueError(f"{label}: missing items cannot be imputed (nan_policy={nan_policy!r}, fill_value="
                                 f"{fill_value!r}): remove the missing rows before privatizing")
            if unknown != "raise":
                raise ValueError(f"{label}: unknown={unknown!r} applies to category codes (k given); every item is in "
                                 "the domain of a sketch over items")
            words = self._encode(x, label, truncate=truncate, locate=locate)
        words = np.ascontiguousarray(words, dtype=np.uint64).view()
        words.flags.writeable = False
        return words

    def _encode(self, x, label, *, truncate=True, locate=False, digest=True):
        """The items' words; with ``digest``, the one word per item the sketch hashes (``item_digests``)."""
        words = encode_typed_items(x, self._item_type, self._item_bits, name=label, owner=type(self).__name__,
                                   truncate=truncate, locate=locate)
        return item_digests(words, self._item_bits) if digest else words

    def privatize(self, x: ArrayLike, *, rng: SeedLike = None,  # type: ignore[override]
                  nan_policy: str = "raise", fill_value: int | None = None, unknown: str = "raise",
                  truncate: bool = True) -> Reports:
        """Randomize each person's item or category; return their :class:`~ldpnum.Reports`.

        Parameters
        ----------
        x : array_like, shape (n,)
            Items of :attr:`item_type` (``k=None``) or category codes in ``[0, k)``.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness. Anything else: reproducible simulation.
        nan_policy, fill_value, unknown
            Category codes only, as :meth:`ldpnum.frequency.FrequencyOracle.privatize`.
        truncate : bool, default True
            Items only: cut str/bytes items longer than ``item_bits/8`` bytes (counted in one
            :class:`~ldpnum.exceptions.TruncationWarning`), or refuse them.

        Notes
        -----
        Each call on one person's value is ε-LDP; estimators are post-processing. Everything is validated before
        the first random word is drawn.
        """
        values = self.prepare_values(x, nan_policy=nan_policy, fill_value=fill_value, unknown=unknown,
                                     truncate=truncate)
        return self._randomize(values, rng)

    def _allocate_reports(self, n):
        if self._variant == "cms":
            return np.empty((n, self.bytes_per_report), dtype=np.uint8)
        return np.empty(n, dtype=self._report_dtype())

    def _run_kernel(self, values, words, out):
        plan = self._plan
        key0, key1 = plan.key
        use_unknown = np.int64(self._k is not None)
        if self._variant == "cms" and plan.sparse is not None:
            sp = plan.sparse
            launch(kernels.cms_sparse_kernel, values, use_unknown, _UNKNOWN, key0, key1, self._hashes, self._width,
                   sp.levels, sp.t_high, sp.lane_bits, np.uint64(sp.t_lane), sp.pool_words, plan.bits.t_true, words,
                   out)
        elif self._variant == "cms":
            u = plan.bits
            t_all, t_low = u.kernel_thresholds()
            launch(kernels.cms_kernel, values, use_unknown, _UNKNOWN, key0, key1, self._hashes, self._width,
                   u.lane_bits, t_all, t_low, u.t_true, words, out)
        else:
            launch(kernels.hcms_kernel, values, use_unknown, _UNKNOWN, key0, key1, self._hashes,
                   self._width.bit_length() - 1, plan.t_keep, words, out)

    def check_column_codes(self, where: str = "a column") -> None:
        """Raise TypeError unless a report fits one code of a table column.

        HCMS reports are codes; a CMS report (its hash index and ``width`` bits) fits when it has at most 64 bits
        (``width = 32, hashes ≤ 2**32`` for instance), packed as one unsigned code like any bit-vector report.
        """
        try:
            super().check_column_codes(where)
        except TypeError as e:
            raise TypeError(f"{e}; a count-mean sketch can also use variant='hcms' (one code per person)") from None

    # -- server side -------------------------------------------------------------------------------
    def aggregate(self, reports: Reports) -> Aggregate:
        """The sketch counts of the reports: a mergeable :class:`~ldpnum.Aggregate` of ``O(width·hashes)`` counts.

        CMS: per hash function, its number of reports and how many set each bit; HCMS: the count of each code.
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        if self._variant == "hcms":
            return Aggregate(count_codes(reports.codes, self.n_cells), self.spec)
        counts = grouped_bit_counts(reports.codes, self._width, self._hashes, group="hash index",
                                    what="count-mean sketch")
        return Aggregate(counts.ravel(), self.spec, len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        if self._variant == "hcms":
            return Aggregate.empty(self.spec)
        return Aggregate(np.zeros(self.n_cells, dtype=np.int64), self.spec, 0)

    def sketch(self, data: Reports | Aggregate) -> NDArray[np.float64]:
        """The debiased sketch: a ``(hashes, width)`` array (Apple's ``M`` divided by ``hashes``).

        Entry ``[j, b]`` estimates how many reports of hash function ``j`` hold a value hashed to ``b``.
        """
        agg = self._as_aggregate(data)
        if self._variant == "cms":
            table = agg.counts.reshape(self._hashes, self._width + 1).astype(np.float64)
            p, q = float(self._plan.bits.p), float(self._plan.bits.q)
            return (table[:, 1:] - q * table[:, :1]) / (p - q)
        cells = agg.counts.reshape(self._hashes, self._width, 2).astype(np.float64)
        gap = float(2 * self._plan.keep - 1)
        return fwht_rows(cells[:, :, 1] - cells[:, :, 0]) / gap

    def candidate_words(self, candidates: Any) -> tuple[list, NDArray[np.uint64]]:
        """Candidates as a list (of items, or of int codes) and their words; one clear error for a bad dictionary."""
        if self._k is not None:
            codes = prepared(check_categories, candidates, self._k, name="candidates")
            if codes.size == 0:
                raise ValueError("candidates is empty: pass at least one category code")
            uniq, first = np.unique(codes, return_index=True)
            if uniq.size != codes.size:
                dup = np.setdiff1d(np.arange(codes.size), first)
                i = int(dup[0])
                raise ValueError(f"candidates must be distinct codes: {dup.size} are not, first candidate {i} "
                                 f"({int(codes[i])})")
            return codes.tolist(), codes.view(np.uint64)
        if candidates is None:
            raise TypeError("estimate_frequencies needs candidates=[...] for a sketch over items: the dictionary of "
                            "items to decode against")
        words = self._encode(candidates, "candidates", locate=True, digest=False)
        return (distinct_candidates(candidates, words, self._item_type, self._item_bits),
                item_digests(words, self._item_bits))

    def _reads(self, rows, words):
        out = np.empty(words.shape[0])
        for start in range(0, words.shape[0], _CHUNK):
            part = sketch_positions(words[start:start + _CHUNK], self._hashes, self._width, self._plan.key)
            out[start:start + _CHUNK] = sketch_reads(rows, part)
        return out

    def estimate_frequencies(self, data: Reports | Aggregate, *, candidates: Any = None,
                             method: str = "unbiased") -> FrequencyEstimate | HeavyHittersEstimate:
        r"""Estimate the share of people holding each candidate, with standard errors.

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this sketch or their (merged) aggregate.
        candidates : sequence, optional
            The dictionary: distinct items of :attr:`item_type` (required for a sketch over items), or distinct
            category codes (default: every code ``0..k-1``).
        method : {"unbiased", "apple"}, default "unbiased"
            ``"unbiased"``: :math:`\hat n_D = B^{-1}(y_D - n/m)` with the exact collision matrix of the public family
            over the candidates, unbiased whenever every value held is a candidate (at most ``width·hashes/16``
            candidates). ``"apple"``: Apple's :math:`\frac{m}{m-1}(y_d - n/m)`, biased by the family's collisions
            (shown for comparison; any number of candidates).

        Returns
        -------
        FrequencyEstimate or HeavyHittersEstimate
            Category codes without ``candidates``: a :class:`~ldpnum.FrequencyEstimate` over ``0..k-1``; otherwise a
            :class:`~ldpnum.HeavyHittersEstimate` of the candidates in decreasing order of estimated frequency
            (provenance: method, candidates, solver).

        Notes
        -----
        Variances are exact in the randomization for the fixed family, with plug-in estimates of the people's
        collision terms (see :mod:`ldpnum.estimation.sketch`). Everything is post-processing: it costs no privacy.
        """
        if not isinstance(method, str):
            raise TypeError(f"method must be a str, one of {METHODS}; got {type(method).__name__}")
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}")
        agg = self._as_aggregate(data)
        all_codes = self._k is not None and candidates is None
        if self._k is not None and candidates is None:
            labels, words = list(range(self._k)), np.arange(self._k, dtype=np.uint64)
        else:
            labels, words = self.candidate_words(candidates)
        n = agg.n_reports
        if n == 0:
            raise ValueError("estimate_frequencies needs reports: the aggregate holds no reports")
        rows = self.sketch(agg)
        a, g = self._plan.report_constants()
        weights = self._plan.index_weights
        provenance: dict[str, Any] = {"method": method, "candidates": len(labels), "width": self._width,
                                      "hashes": self._hashes, "variant": self._variant}
        if method == "apple":
            y = self._reads(rows, words)
            counts = apple_counts(y, n, self._width)
            var = apple_variances(y, counts, n, self._width, weights, a, g)
        else:
            check_dictionary_size(words.shape[0], self._hashes, self._width)  # before hashing a huge domain
            positions = sketch_positions(words, self._hashes, self._width, self._plan.key)
            check_dictionary(positions, self._width, labels)
            y = sketch_reads(rows, positions)
            counts, var, solved = unbiased_counts(y, n, positions, weights, self._width, a, g)
            provenance.update(solved)
        freq = counts / n
        se = np.sqrt(var) / n
        if all_codes:
            return FrequencyEstimate(counts=counts, frequencies=freq, standard_errors=se, n_reports=n,
                                     epsilon=self._epsilon, spec=agg.spec)
        order = np.argsort(-freq, kind="stable")
        return HeavyHittersEstimate(items=tuple(labels[i] for i in order.tolist()), frequencies=freq[order],
                                    standard_errors=se[order], n_reports=n, epsilon=self._epsilon, spec=agg.spec,
                                    provenance=provenance)
