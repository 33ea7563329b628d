r"""Prefix heavy-hitter protocols: PEM (Wang, Li, Jha) and TreeHist (Bassily, Nissim, Stemmer, Thakurta).

Items are words of ``item_bits`` bits, most significant bit first (the prefix of length ``l`` of item ``w``
is ``w >> (item_bits - l)``); above 64 bits (up to 256) an item is a row of 64-bit words and a prefix longer than
64 bits is reported through its public digest, one 64-bit word (:func:`ldpnum.heavy.items.prefix_digests`: two
distinct prefixes share it with probability about ``2**-64``, which adds that to their collision rate). One
round, every person reports once with the full ε:

1. From a word independent of the item, the person draws a group ``j`` in ``0..G-1`` (multiply-shift on 48
   bits, as :func:`ldpnum._random.assign_columns`: probability ``⌈2^48/G⌉/2^48`` or ``⌊2^48/G⌋/2^48``) and a
   hash index ``h`` in ``0..H-1`` (the low 16 bits of the same word, ``H`` a power of two: exactly uniform).
2. Group ``j`` reports the prefix of length ``l_j`` of its item, hashed into ``[0, g)`` by function ``h`` of
   a fixed public family (see :mod:`ldpnum._kernels.client_prefix`), then randomized by GRR over ``[0, g)``
   with GRR's integer plan (:func:`ldpnum.plans.grr_keep_cells`), ``g = round(e^ε) + 1`` as OLH.
3. The report is one code ``(j·H + h)·g + y``: the aggregate is the ordinary code histogram of
   :meth:`ldpnum.Mechanism.aggregate`, of ``G·H·g`` counts whatever the number of people, and merges with
   ``+``.

**Privacy.** ``(j, h)`` is drawn from its own word and never combined with the item: its distribution is
the same for every item. Given ``(j, h)``, the report is GRR over ``[0, g)`` of the hashed prefix, whose
every likelihood ratio is at most ``E < e^ε`` (GRR's plan, tight). Prefixing and hashing are deterministic
given ``(j, h)`` and add nothing data-dependent, so each report is ε-LDP.

**Hash family.** ``hash_h(p) = ⌊mix64(a_h p + b_h mod 2^64) · g / 2^64⌋`` with ``(a_h, b_h)`` the first
``2H`` outputs of NumPy's PCG64 seeded with :data:`HASH_SEED` (``a_h`` made odd) and ``mix64``
MurmurHash3's bijective finalizer. The family is public and finite: the collector counts reports per
``(j, h, y)``, which is what makes the aggregate mergeable and of fixed size. Two prefixes collide under
about a ``1/g`` fraction of the functions; the estimator assumes exactly ``1/g`` and the deviation, of order
``sqrt(1/(gH))`` per pair, averages out over the many values a candidate meets (see
:mod:`ldpnum.estimation.heavy`).

References
----------
T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 2021.
R. Bassily, K. Nissim, U. Stemmer, A. Thakurta, "Practical Locally Private Heavy Hitters", NeurIPS 2017.
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017.
"""

import warnings
from fractions import Fraction

from typing import Any

import numpy as np

from .._kernels import client_prefix as kernels
from .._kernels._jit import launch
from .._typing import ArrayLike, NDArray, SeedLike
from .._validation import check_epsilon, check_scalar
from ..aggregate import Aggregate
from ..estimation.heavy import estimate_prefix_levels, fmix64
from ..frequency.hashing import G_MAX, olh_g
from ..base import Mechanism
from ..plans import TWO48, TWO64, GRRPlan, grr_keep_cells, uniform_count
from ..reports import Reports
from ._result import HeavyHittersEstimate
from .items import (DIGEST_KEY, ITEM_TYPES, admissible_prefixes, check_digest, check_item_bits, decode_items,
                    digest_params, encode_typed_items, ints_to_words, item_digests, prefix_digests, words_to_ints)

__all__ = ["PEM", "TreeHist", "PrefixPlan", "HASH_FAMILY", "HASH_SEED", "hash_constants"]

#: Name of the public hash family in the spec (a change of family changes the name).
HASH_FAMILY = "mix64-mulhi/v1"
#: Seed of the PCG64 stream whose outputs are the family's constants.
HASH_SEED = 0x5EED_4E11_0F00_0001
#: Largest number of hash functions (the hash index is 16 bits of a word).
MAX_HASHES = 1 << 16
#: Default ceiling on the aggregate's counts ``G·H·g``: the default ``H`` is the largest power of two
#: ``<= 1024`` that keeps under it (32 MB of int64 counts), but at least 2 (the split of the last group).
DEFAULT_MAX_CELLS = 1 << 22
#: Hard ceiling on ``G·H·g``: 2**25 int64 counts are 256 MB per aggregate.
MAX_CELLS = 1 << 25
#: Fewest prefixes kept per level by default: with only ``2·top_k`` at a small ``top_k`` a short frequent item
#: loses to prefixes that many items share (measured: "a", 2.4% of English words, fell out of PEM's top 10
#: at its 12-bit level in every run at n = 2e5, ε = 8, top_k = 5).
MIN_CANDIDATES = 32
#: Largest first-level prefix length: group 0's estimator enumerates all ``2**l_0`` prefixes.
MAX_FIRST_BITS = 20


def hash_constants(n_hashes: int) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """``(a, b)``: the constants of the first ``n_hashes`` functions of the public family (``a`` odd).

    Examples
    --------
    >>> a, b = hash_constants(4)
    >>> a.dtype, bool((a & 1).all())
    (dtype('uint64'), True)
    """
    raw = np.random.PCG64(HASH_SEED).random_raw(2 * n_hashes).astype(np.uint64)
    a = raw[0::2] | np.uint64(1)
    b = raw[1::2].copy()
    a.flags.writeable = False
    b.flags.writeable = False
    return a, b


class PrefixPlan:
    """Integer plan of a prefix protocol: prefix lengths per group, the hash family, GRR's plan over ``g``.

    Two words per record: the group and hash index, then GRR's.
    """

    words_per_record = 2

    def __init__(self, item_bits, lengths, n_hashes, g, a_keep, shift):
        self.item_bits = item_bits
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.lengths.flags.writeable = False
        self.n_groups = len(lengths)
        self.n_hashes = n_hashes
        self.g = g
        self.grr = GRRPlan(g, a_keep, shift)
        self.hash_a, self.hash_b = hash_constants(n_hashes)

    def __repr__(self):
        return (f"PrefixPlan(item_bits={self.item_bits}, lengths={self.lengths.tolist()}, "
                f"n_hashes={self.n_hashes}, g={self.g}, {self.grr!r})")

    def group_and_hash(self, word: int) -> tuple[int, int]:
        """``(j, h)`` that the kernel reads from a record's first word (never from the item)."""
        word = int(word)
        return ((word >> 16) * self.n_groups) >> 48, word & (self.n_hashes - 1)

    def group_probability(self, j: int) -> Fraction:
        """Exact probability of group ``j`` (the multiply-shift cell count over ``2**48``)."""
        return Fraction(uniform_count(j, self.n_groups), TWO48)

    def prefix_word(self, item: int, j: int) -> int:
        """The one word group ``j`` hashes for ``item``: its prefix of length ``l_j``, or that prefix's digest.

        The digest (:func:`~ldpnum.heavy.items.prefix_digests`) stands for prefixes longer than 64 bits.
        """
        shift = self.item_bits - int(self.lengths[j])
        if int(self.lengths[j]) <= 64:
            return int(item) >> shift
        return int(prefix_digests(ints_to_words([item], self.item_bits), self.item_bits,
                                  np.array([shift], dtype=np.int64))[0])

    def hashed_prefix(self, item: int, j: int, h: int) -> int:
        """``hash_h(prefix of item of length l_j)``, in exact Python integers (of its digest above 64 bits)."""
        p = self.prefix_word(item, j)
        z = int(fmix64([(int(self.hash_a[h]) * p + int(self.hash_b[h])) % TWO64])[0])
        return (z * self.g) >> 64

    def exact_probabilities(self, item: int, word: int) -> dict[int, Fraction]:
        """``{code: Fraction}`` of the report of ``item`` given the record's first word.

        The first word fixes ``j`` and ``h``; its own distribution does not depend on the item.
        """
        j, h = self.group_and_hash(word)
        base = (j * self.n_hashes + h) * self.g
        return {base + y: p for y, p in self.grr.exact_probabilities(self.hashed_prefix(item, j, h)).items()}

    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: GRR's exact keep probability, and ``1/g``.

        ``1/g`` is a hash collision under a uniformly chosen function of an ideal family.
        """
        return self.grr.keep_count() / TWO64, 1.0 / self.g


class _PrefixProtocol(Mechanism):
    """The one-round prefix protocol; PEM and TreeHist choose the prefix lengths."""

    #: Bits added per group when ``eta`` is not given.
    DEFAULT_ETA = 4

    def __init__(self, epsilon: float, *, item_bits: int = 64, top_k: int = 20, eta: int | None = None,
                 s: int | None = None, n_candidates: int | None = None, n_hashes: int | None = None,
                 g: int | None = None, groups: int | None = None, item_type: str = "str") -> None:
        self._epsilon = check_epsilon(epsilon)
        self._bounds = None
        if not isinstance(item_type, str) or item_type not in ITEM_TYPES:
            raise ValueError(f"item_type must be one of {', '.join(map(repr, ITEM_TYPES))}; got {item_type!r}")
        self._item_type = item_type
        self._item_bits = check_item_bits(item_bits, item_type)
        self._top_k = check_scalar(top_k, "top_k", int, low=1, high=1 << 16, verb="lie")
        self._n_candidates = max(2 * self._top_k, MIN_CANDIDATES) if n_candidates is None else check_scalar(
            n_candidates, "n_candidates", int, low=self._top_k, high=1 << 16, verb="lie")
        self._eta = self.DEFAULT_ETA if eta is None else check_scalar(eta, "eta", int, low=1, high=16, verb="lie")
        default_s = min(max(self._n_candidates - 1, 0).bit_length(), self._item_bits - 1)
        self._s = default_s if s is None else check_scalar(s, "s", int, low=0, high=self._item_bits - 1,
                                                           verb="lie")
        n_groups = -(-(self._item_bits - self._s) // self._eta)
        lengths = [min(self._s + (j + 1) * self._eta, self._item_bits) for j in range(n_groups)]
        if lengths[0] > MAX_FIRST_BITS:
            raise ValueError(f"the first group's prefixes have s + eta = {lengths[0]} bits; at most "
                             f"{MAX_FIRST_BITS} (the collector enumerates all of them)")
        if groups is not None and check_scalar(groups, "groups", int, low=1, high=1 << 16, verb="lie") != n_groups:
            raise ValueError(f"groups={groups} disagrees with item_bits={self._item_bits}, s={self._s}, "
                             f"eta={self._eta}, which give {n_groups} groups")
        if n_groups > 1 << 16:  # pragma: no cover - item_bits <= 256 keeps n_groups <= 256
            raise ValueError(f"too many groups: {n_groups}")
        self._g = olh_g(self._epsilon) if g is None else check_scalar(g, "g", int, low=2, high=G_MAX, verb="lie")
        if n_hashes is None:
            n_hashes = 1024
            while n_hashes > 2 and n_groups * n_hashes * self._g > DEFAULT_MAX_CELLS:
                n_hashes //= 2
        n_hashes = check_scalar(n_hashes, "n_hashes", int, low=1, high=MAX_HASHES, verb="lie")
        if n_hashes & (n_hashes - 1):
            raise ValueError(f"n_hashes must be a power of two; got {n_hashes}")
        if n_groups * n_hashes * self._g > MAX_CELLS:
            raise ValueError(f"groups·n_hashes·g = {n_groups}·{n_hashes}·{self._g} exceeds {MAX_CELLS} counts; "
                             "use fewer hash functions or a smaller g")
        self._plan = PrefixPlan(self._item_bits, lengths, n_hashes, self._g, *grr_keep_cells(self._epsilon, self._g))

    # -- parameters ------------------------------------------------------------------------------------
    @property
    def item_bits(self) -> int:
        """Width of an item in bits: items are words in ``[0, 2**item_bits)``."""
        return self._item_bits

    @property
    def item_type(self) -> str:
        """What the items are: ``"str"`` (UTF-8), ``"bytes"`` or ``"uint"``; results decode to it."""
        return self._item_type

    @property
    def top_k(self) -> int:
        """How many heavy hitters :meth:`estimate_heavy_hitters` returns."""
        return self._top_k

    @property
    def g(self) -> int:
        """Hash range: hashed prefixes and randomized reports ``y`` lie in ``[0, g)``."""
        return self._g

    @property
    def n_hashes(self) -> int:
        """Size ``H`` of the public hash family."""
        return self._plan.n_hashes

    @property
    def groups(self) -> int:
        """Number of groups ``G`` (one prefix length each)."""
        return self._plan.n_groups

    @property
    def prefix_lengths(self) -> tuple[int, ...]:
        """Prefix length ``l_j`` reported by group ``j``."""
        return tuple(int(v) for v in self._plan.lengths)

    @property
    def n_cells(self) -> int:
        return self.groups * self.n_hashes * self._g

    def _spec_params(self):
        return {"item_bits": self._item_bits, "top_k": self._top_k, "groups": self.groups, "eta": self._eta,
                "s": self._s, "n_candidates": self._n_candidates, "n_hashes": self.n_hashes, "g": self._g,
                "item_type": self._item_type, "hash": HASH_FAMILY, **digest_params(self._item_bits)}

    @classmethod
    def _from_spec(cls, spec):
        params = {k: spec.get(k) for k, _ in spec.params}
        if params.pop("hash", HASH_FAMILY) != HASH_FAMILY:
            raise ValueError(f"spec names the hash family {spec.get('hash')!r}; this ldpnum has {HASH_FAMILY!r}")
        check_digest(params, spec.mechanism)
        return cls(spec.epsilon, **params)

    def __repr__(self):
        return (f"{type(self).__name__}(epsilon={self._epsilon!r}, item_bits={self._item_bits}, "
                f"top_k={self._top_k}, eta={self._eta}, s={self._s}, n_hashes={self.n_hashes}, g={self._g})")

    # -- client side -----------------------------------------------------------------------------------
    def prepare_values(self, x: ArrayLike, *, name: str | None = None,  # type: ignore[override]
                       nan_policy: str = "raise", fill_value: Any = None,
                       truncate: bool = True, locate: bool = False) -> NDArray[np.uint64]:
        """Validate and encode one column of items, without drawing anything.

        Items are encoded to ``item_bits``-bit words by :func:`ldpnum.heavy.encode_items` (the one place
        items are validated; str and bytes longer than ``item_bits / 8`` bytes are cut, with a
        :class:`~ldpnum.exceptions.TruncationWarning` that counts them, or raise with ``truncate=False``).
        The warning names no position unless ``locate=True`` (for a collector-side caller holding the whole
        column; see :func:`~ldpnum.heavy.encode_items` for what the warning reveals).
        Items of another type than the mechanism's ``item_type`` raise a TypeError. Returns read-only
        C-contiguous uint64 words.
        """
        label = "x" if name is None else str(name)
        if nan_policy != "raise" or fill_value is not None:
            raise ValueError(f"{label}: missing items cannot be imputed (nan_policy={nan_policy!r}, fill_value="
                             f"{fill_value!r}): a public fill item would be counted as a heavy hitter; remove the "
                             "missing rows before privatizing")

        words = encode_typed_items(x, self._item_type, self._item_bits, name=label, owner=type(self).__name__,
                                   truncate=truncate, locate=locate)
        words = np.ascontiguousarray(words, dtype=np.uint64).view()
        words.flags.writeable = False
        return words

    def privatize(self, x: ArrayLike, *, rng: SeedLike = None,  # type: ignore[override]
                  truncate: bool = True) -> Reports:
        """Randomize each person's item; return their :class:`~ldpnum.Reports` (one code per person).

        Parameters
        ----------
        x : sequence, numpy.ndarray or pandas Series of items, shape (n,)
            One item per person, of the mechanism's ``item_type``: ``str`` (UTF-8), ``bytes``, or
            non-negative integers below ``2**item_bits``.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness. Anything else: reproducible simulation.
        truncate : bool, optional
            Cut str/bytes items longer than ``item_bits / 8`` bytes, with a counted warning (default), or
            raise. The :class:`~ldpnum.exceptions.TruncationWarning` gives the count only, never which
            items were cut (a client's warnings must not describe individual inputs); it still tells how many
            raw items were long, so keep it on the device (it is not part of the reports).

        Notes
        -----
        Each call on one person's item is ε-LDP; estimators are post-processing. Everything is validated
        before the first random word is drawn.
        """
        return self._randomize(self.prepare_values(x, truncate=truncate), rng)

    def _run_kernel(self, values, words, out):
        p = self._plan
        if values.ndim == 1:
            launch(kernels.prefix_kernel, values, self._item_bits, p.lengths, p.n_hashes, p.hash_a, p.hash_b, p.g,
                   p.grr.a_keep, p.grr.shift, words, out)
            return
        # Wide items: the one word of each record's group prefix (itself up to 64 bits, else its digest), then the
        # same hash and GRR as for narrow items.
        launch(kernels.prefix_wide_kernel, values, self._item_bits, p.lengths, p.n_hashes, p.hash_a, p.hash_b, p.g,
               p.grr.a_keep, p.grr.shift, np.uint64(DIGEST_KEY[0]), np.uint64(DIGEST_KEY[1]), words, out)

    # -- server side -----------------------------------------------------------------------------------
    def estimate_heavy_hitters(self, data: Reports | Aggregate, *,
                               top_k: int | None = None) -> HeavyHittersEstimate:
        """The heavy hitters behind the reports, in rank order, with frequency estimates and standard errors.

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate.
        top_k : int, optional
            How many items to return (default: the mechanism's ``top_k``). Each level keeps
            ``n_candidates · top_k / self.top_k`` prefixes (rounded up, at least ``n_candidates``), so a larger
            request searches proportionally wider.

        Returns
        -------
        HeavyHittersEstimate
            Items (decoded to ``item_type``) in decreasing order of their estimated frequencies; standard
            errors; provenance: groups, reports per group, prefix lengths, candidates estimated and kept per
            level, and ``holdout``, the reports that selected and those that estimated the items.

        Notes
        -----
        **Which reports select, which estimate.** The last group's reports are split by their hash index
        ``h``, which each person draws from a word independent of the item (so the split is independent of the
        items, and kept by the aggregate): those with ``h < H/2`` rank the last level's candidates and choose
        the ``top_k`` items; those with ``h >= H/2`` (``n^E`` reports) estimate them,
        ``f̂(v) = (I^E(v)/n^E - q*)/(p* - q*)`` with ``I^E(v) = Σ_{h >= H/2} counts[G-1, h, hash_h(v)]`` and the
        standard error ``sqrt(P(1 - P)/n^E)/(p* - q*)``, ``P = q* + clip(f̂, 0, 1)(p* - q*)``. Estimating the
        chosen items from the reports that chose them would report the largest of many noisy estimates (the
        winner's curse): 100 items at 1%, top 5 by PEM at ε = 4 from 10^5 people, 240 collections: those
        estimates were 1.39 standard errors too high on average and their nominal 95% intervals covered 87.4%;
        from the other half they are 0.10 standard errors low on average and cover 94.5% (TreeHist, 120
        collections: 0.04 low, 96.7%; the old way 1.35 high, 88.7%). The small remaining bias is downward: the
        population is finite, so an item whose holders happened to fall into the selecting half has a few
        fewer left in the estimating one, and the standard error grows with the estimate. Earlier levels only choose candidates from other
        groups' reports, so they cannot bias these estimates. The price is half the last group's reports for
        each task (see :mod:`ldpnum.estimation.heavy` for measurements). With ``n_hashes=1`` no split is
        possible: the old estimate is returned with a warning.
        """
        k = self._top_k if top_k is None else check_scalar(top_k, "top_k", int, low=1, high=1 << 16, verb="lie")
        agg = self._as_aggregate(data)
        p = self._plan
        counts = np.asarray(agg.counts).reshape(p.n_groups, p.n_hashes, p.g)
        p_star, q_star = p.support_probabilities()
        item_type, item_bits = self._item_type, self._item_bits
        # Candidates per level scale with the requested k at the constructor's ratio (2k by default); the
        # last level keeps twice as many, so that k remain after merging encodings that decode alike (with few
        # reports per half, tied noise candidates are consecutive encodings, which often decode alike).
        n_cand = max(self._n_candidates, -(-self._n_candidates * k // self._top_k))
        levels = estimate_prefix_levels(
            counts, p.lengths, p.hash_a, p.hash_b, p.g, p_star, q_star, n_cand, 2 * n_cand,
            admissible=lambda c, length: admissible_prefixes(c, length, item_type, item_bits),
            digest=item_digests)
        if levels.holdout is None:
            warnings.warn(f"{type(self).__name__} with n_hashes=1 cannot split the last group's reports between "
                          "selecting the top items and estimating them: their frequencies are the selected "
                          "maxima of noisy estimates, biased upward, and their intervals undercover; build the "
                          "mechanism with n_hashes >= 2", UserWarning, stacklevel=2)
        # Encodings that differ only in a character cut at the item width decode to the same text: keep the
        # best-ranked of each (in the selection half's order), then the top k; then order them by their
        # frequencies, estimated from the other half.
        decoded = decode_items(levels.items, item_type, item_bits)
        first: dict = {}
        for i, item in enumerate(decoded):
            first.setdefault(item, i)
        idx = np.array(sorted(first.values())[:k], dtype=np.intp)
        idx = idx[np.argsort(-levels.frequencies[idx], kind="stable")]
        provenance = {"method": self.name, "groups": p.n_groups, "n_per_group": levels.n_per_group,
                      "prefix_lengths": self.prefix_lengths, "candidates_per_level": levels.candidates_per_level,
                      "kept_per_level": levels.kept_per_level, "n_hashes": p.n_hashes, "g": p.g,
                      "hash": HASH_FAMILY, "holdout": levels.holdout,
                      # the words the clients encoded, every last-level candidate in rank order (before merging
                      # encodings that decode alike): a later phase (SVIM) must use these, not re-encoded text
                      "candidate_words": words_to_ints(levels.items)}
        items = tuple(decoded[i] for i in idx)
        return HeavyHittersEstimate(items, levels.frequencies[idx], levels.standard_errors[idx], agg.n_reports,
                                    self._epsilon, agg.spec, provenance)


class PEM(_PrefixProtocol):
    r"""Prefix Extending Method: heavy hitters of items from a huge domain, in one round.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    item_bits : int, optional
        Width of the items in bits, 1..256 (default 64; str/bytes: ``item_bits / 8`` bytes). Wider items run more
        groups (levels): at η = 4, 15 groups at 64 bits and 63 at 256, each person still reporting once. A level's
        prefix of at most 64 bits is hashed as for 64-bit items; a longer one through its public digest
        (:func:`ldpnum.heavy.items.prefix_digests`), and the collector's candidates become rows of words.
    top_k : int, optional
        How many heavy hitters to find (default 20).
    eta : int, optional
        Bits added per group, η (default 4).
    s : int, optional
        Prefix bits below the first group's, default ``⌈log2 n_candidates⌉`` (capped at ``item_bits - 1``), so
        the first group estimates ``2^{s+η} ≈ n_candidates·2^η`` prefixes, as many as every later group.
    n_candidates : int, optional
        Prefixes kept at each level, at least ``top_k`` (default ``max(2·top_k, 32)``: the paper keeps the top k; a
        few more keep a true heavy hitter whose prefix is briefly outranked by a noisy or crowded one.
        Measured on a Zipf(1.1) sample of 10^6 people over 10^5 64-bit items, precision of the top 20 at
        ε = 4 rose from 0.87 to 0.95, at ε = 2 from 0.40 to 0.43, for 0.03 s more).
    n_hashes : int, optional
        Size ``H`` of the public hash family, a power of two ≤ 65536 (default: 1024, halved until the
        aggregate has at most 2**22 counts, but at least 2: the last group's reports are split by hash index
        between selecting the top items and estimating them, see :meth:`estimate_heavy_hitters`).
    g : int, optional
        Hash range (default ``round(e^ε) + 1``, OLH's).
    groups : int, optional
        Only to check a spec: must equal ``⌈(item_bits - s)/η⌉``.
    item_type : {"str", "bytes", "uint"}, optional
        What the items are (default ``"str"``, UTF-8 text: words, URLs, queries; ``"uint"`` for integer
        ids). Encoded by :func:`ldpnum.heavy.encode_items`; results decode back to it. str and bytes need
        ``item_bits`` a multiple of 8; longer items are truncated with a counted warning. Bytes items may hold
        zero bytes anywhere, but an item ending in zero bytes is counted with (and returned as) the item without
        them: trailing zero bytes cannot be told from the fixed-width encoding's padding (see
        :mod:`ldpnum.heavy.items`).

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.

    People are split into ``G = ⌈(m - s)/η⌉`` groups (``m = item_bits``); group ``j`` reports the prefix of
    length ``l_j = min(s + (j+1)η, m)`` with local hashing at the full ε (see :mod:`ldpnum.heavy.prefix` for
    the report and the hash family). The collector estimates all ``2^{s+η}`` prefixes of group 0, keeps
    the ``n_candidates`` most frequent, extends each by the next group's ``η`` bits (``n_candidates·2^η``
    candidates), and so on; the last group estimates full items: the reports of its first ``H/2`` hash
    functions choose the ``top_k`` best, the reports of the others estimate their frequencies (so they are
    unbiased for the chosen items; see :meth:`estimate_heavy_hitters`). With ``s = ⌈log2 c⌉``
    (``c = n_candidates``) the first level has about ``c·2^η`` candidates like every other level, as in the
    paper (which takes ``c = k``). Larger ``η`` means fewer groups (more people per group, smaller variance)
    but more candidates per level (more chances for a noisy prefix to displace a true one). The aggregate
    holds ``G·H·g`` counts whatever the number of people.

    References
    ----------
    T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 2021.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> pem = ldp.PEM(epsilon=4.0, item_bits=32, top_k=3)
    >>> x = np.repeat(["the", "of", "and", "zoo"], [30_000, 20_000, 10_000, 100])
    >>> est = pem.estimate_heavy_hitters(pem.privatize(x, rng=0))
    >>> est.items
    ('the', 'of', 'and')
    >>> h = est.provenance["holdout"]  # the last group: one half selected the items, the other estimated them
    >>> h["select_hashes"], h["estimate_hashes"], h["select_reports"] + h["estimate_reports"] == \
    ...     est.provenance["n_per_group"][-1]
    ((0, 512), (512, 1024), True)
    """

    name = "pem"
    aliases = ("prefix_extending",)


class TreeHist(_PrefixProtocol):
    r"""TreeHist: heavy hitters by extending prefixes one bit per level, in one round.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    item_bits, top_k, s, n_candidates, n_hashes, g, groups, item_type
        As for :class:`PEM`.
    eta : int, optional
        Must be 1 (one bit per level); accepted for specs.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.

    The prefix tree of Bassily, Nissim, Stemmer and Thakurta: ``G = m - s`` groups, group ``j`` reports the
    prefix of length ``s + j + 1`` (one more bit per level), by the same local-hashing report as
    :class:`PEM`, and the collector keeps the ``n_candidates`` most frequent prefixes per level (the paper
    keeps those above a threshold) and extends each by one bit. Same result object as :class:`PEM`, so the
    two compare directly; with ``m`` groups each holds fewer people than PEM's.

    References
    ----------
    R. Bassily, K. Nissim, U. Stemmer, A. Thakurta, "Practical Locally Private Heavy Hitters", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> th = ldp.TreeHist(epsilon=4.0, item_bits=8, top_k=2, item_type="uint")
    >>> x = np.repeat(np.array([3, 200], np.uint64), [30_000, 20_000])
    >>> th.estimate_heavy_hitters(th.privatize(x, rng=0)).items
    (3, 200)
    """

    name = "tree_hist"
    aliases = ("treehist",)
    DEFAULT_ETA = 1

    def __init__(self, epsilon: float, *, item_bits: int = 64, top_k: int = 20, eta: int | None = None,
                 s: int | None = None, n_candidates: int | None = None, n_hashes: int | None = None,
                 g: int | None = None, groups: int | None = None, item_type: str = "str") -> None:
        if eta is not None and (isinstance(eta, (bool, np.bool_)) or eta != 1):
            raise ValueError(f"TreeHist extends prefixes by one bit per level: eta must be 1; got {eta!r}")
        super().__init__(epsilon, item_bits=item_bits, top_k=top_k, eta=1, s=s, n_candidates=n_candidates,
                         n_hashes=n_hashes, g=g, groups=groups, item_type=item_type)

