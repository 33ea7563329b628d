r"""Set-valued data: frequent items (SVIM) and frequent itemsets (SVSM), as chains of ordinary phases.

Each person holds a *set* of items (str, bytes or unsigned ints, encoded once by
:func:`ldpnum.heavy.encode_items`). Every person is assigned to exactly one phase, from a word independent of
their set, and sends one report with the full ε in that phase: the whole protocol is ε-LDP for every person.
A phase after the first needs the collector's public result of the phase before (its *payload*: candidate
items or itemsets and the padding length); the collector's state between phases is a small JSON-able
:class:`SetValuedState`.

**SVIM** (three phases, as in the paper; the split of the people, 1/2, 1/10, 2/5, is ldpnum's choice: the
candidates phase gets half because PEM divides its people further into one group per prefix length, and the
size phase, which only sets ℓ, the least):

1. *candidates* — each person samples one item of their set uniformly (48-bit multiply-shift on one word;
   a person with an empty set takes a uniformly random ``item_bits``-bit word instead) and reports it with
   :class:`ldpnum.PEM` (no item domain needs to be listed). Each report is ε-LDP: given PEM's own words,
   the report of a set is a mixture over the sampled item of PEM's output distributions, each within a
   factor ``e^ε`` of every other item's, so the mixture is too. With a public ``domain`` the sampled item
   (or a dummy, for a set holding none) is reported by an oracle over the domain and the dummy instead,
   as in the paper (padding-and-sampling with ``ℓ = 1``). The collector keeps the ``2·top_k`` best items,
   the candidate set ``S``.
2. *size* — each person reports ``|v ∩ S|`` in ``{0..|S|}`` with GRR or OLH (Wang et al.'s rule,
   :func:`ldpnum.frequency.recommend` with low communication). The collector estimates the size
   distribution ``θ`` (unbiased estimates, with the cells that are not significant at 5%, Bonferroni over
   the cells, set to 0: :func:`significant_sizes`) and takes ``ℓ``, the 90th percentile of ``θ`` among
   people whose local set is not empty (the paper's rule; at least 1).
3. *estimate* — each person reports ``v ∩ S`` with padding-and-sampling to ``ℓ``, by GRR at the amplified
   ``ε' = ln(ℓ(e^ε - 1) + 1)`` (:class:`ldpnum.PaddingSampling`) or OLH at ε
   (:class:`ldpnum.PaddingSamplingOLH`), whichever has the smaller variance (the paper's adaptive choice:
   GRR when ``|S| < ℓ e^ε (4ℓ - 1) + 1``, :func:`ldpnum.heavy.padding.padding_sampling`). It estimates
   ``π_c``, the mean probability that ``c`` is sampled. A holder of ``c`` with ``m`` local items samples it
   with probability ``1/max(m, ℓ)``; assuming a holder's ``m`` is distributed like a random held item's
   (size-biased: ``∝ m θ_m``, which holds when items are spread over sets independently of set sizes),

   .. math:: \hat f_c = \hat\pi_c \cdot s, \qquad
             s = \frac{\sum_{m \ge 1} m \theta_m}{\sum_{m \ge 1} m \theta_m / \max(m, \ell)}
               = \ell \frac{\sum_m m \theta_m}{\sum_m \min(m, \ell) \theta_m},

   which is ``ℓ`` when no set exceeds ``ℓ`` (the paper scales by ``ℓ`` and corrects for the items of sets
   longer than ``ℓ``, ``Σ_{m>ℓ} (m - ℓ) θ_m``, that padding-and-sampling cannot reach). Standard errors
   are ``s`` times that of ``π̂_c``, ``sqrt(P(1 - P)/n_3)/(p* - q*)`` with
   ``P = q* + π̂_c (p* - q*)`` (GRR's noise and the sampling of people and slots together; the
   uncertainty of ``s`` is not included).

   *What the sizes cannot tell.* The assumption behind ``s`` fails whenever an item's holders have sets
   of other sizes than a random held item's, and no collected statistic shows it: the sizes only bound
   the frequency, ``f_c ∈ [low(π_c), high(π_c)]`` (:func:`frequency_bounds`: ``ℓπ_c`` when the holders
   fill the smallest sets first, more when they fill the largest; for instance 92% hold ``{x}`` alone
   and 8% five other items: ``π̂ s`` gives ``x`` 1.21 and each other item 0.021, where the truth is 0.92
   and 0.08). So the result (:class:`SetItemsEstimate`, :class:`ItemsetsEstimate`) reports ``π̂ s``
   clipped to ``[low(π̂), high(π̂)]`` and to [0, 1], with a :class:`SizeCorrectionWarning` when it lay
   above even ``high(π̂ + 1.96σ̂_π)`` or above 1 by more than 1.96 of its standard errors (impossible,
   not noise; an estimate above 1 within its noise, such as 1.02 ± 0.012 for an item everyone holds, is
   clipped to 1 silently; flags in ``provenance["impossible"]`` and ``["clipped"]``, the unclipped value
   in ``["size_corrected"]``: no frequency outside [0, 1] is ever returned), and intervals
   ``[low(π̂ - zσ̂_π), high(π̂ + zσ̂_π)]`` that cover whatever the holders' sizes. The bounds allow for
   the size phase's noise (:func:`bounding_sizes`: cells raised by 1.96 standard errors, and the mass the
   significant cells leave unexplained put at the largest size). Measured on airport-name word
   sets (vega_datasets' 3,376 names × 100 people, ε = 4, 20 collections): the old ``π̂ s ± 1.96 s σ̂``
   covered "Municipa"(l), "County", "Regional", "Internat"(ional) in 0, 7, 5 and 18 of 20, and
   "Memorial" in 9 of the 15 that found it; these intervals in all of them (0.019 wide for the 29%
   item). On the benchmark's planted baskets (``bench/setvalued.py``, 100,000 people, ε = 4, 10
   collections) the old intervals covered 64 of the 85 items returned, these all 85.

   *Noise.* A candidate whose ``π̂`` is not above ``z σ̂_π`` (one-sided 5%, Bonferroni over the
   candidates) cannot be told from one nobody holds (e.g. the strings of control characters PEM's search
   may keep when fewer than ``2·top_k`` items are frequent): it is not returned, so the result may hold
   fewer than ``top_k`` items (``provenance["dropped_as_noise"]`` counts them). Candidates are the words
   the clients encoded, never re-encoded text; two words that decode alike (a str cut inside a
   multi-byte character, and the text before the cut) are estimated separately and the result shows the
   better-ranked once (``provenance["merged_display"]``). The result is the ``top_k`` remaining
   candidates by ``f̂``.

**SVSM** (five phases; 1/4, 1/20, 1/5 run SVIM for the items, then 1/10 and 2/5 for itemsets: half of the
people find items, half estimate itemsets, each half split like SVIM's last two phases): from SVIM's top
``top_k`` items (those told apart from noise, as below; all ``top_k`` when fewer than two are), candidate
itemsets of size ≥ 2 are ranked by the paper's guessed frequency ``Π_{i ∈ x} 0.9 f̂_i / max_j f̂_j`` and
the best ``2·top_k`` kept (built level by level: the guess only falls when an item is added, so every subset
of a kept itemset ranks above it). Then a *size* phase over
``|{candidate itemsets ⊆ v}|`` and a padding-and-sampling phase over the candidate itemsets estimate
itemset frequencies as above (the same clipping, intervals and noise rule, each with its own size
phase); the result is the ``top_k`` best of the singletons and the itemsets.

**Shuffled collections.** Each phase's reports may reach the collector anonymized and shuffled, one batch
per phase: the phase's aggregate is declared shuffled (:meth:`ldpnum.Aggregate.shuffled`; ``run(...,
shuffled=True)`` declares every phase) and the state records ``(δ, n_j)`` for it. Phase ``j``'s batch is then
``(ε_j, δ)``-DP centrally with ``ε_j = shuffle_epsilon(ε, n_j, δ)`` (:func:`ldpnum.accounting.shuffle_epsilon`).
Each person reports in exactly one phase, so by parallel composition the collection is ``(max_j ε_j, δ)``-DP:
the result's ``shuffle`` is the phase with the **largest** central ε (the fewest reports). A phase not
shuffled leaves its people with the local ε only, so the result carries no declaration; phases declared with
different δ are refused.

References
----------
T. Wang, N. Li, S. Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018.
T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 2021 (PEM).
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (GRR, OLH and the choice between them).
V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal Analysis of Privacy
Amplification by Shuffling", FOCS 2021 (shuffled collections).
"""

import json
import numbers
import warnings
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from typing import Any

import numpy as np

from .._checks import normal_quantile
from .._random import assign_columns, child_rng, resolve_rng
from ..exceptions import SizeCorrectionWarning
from .._typing import NDArray, SeedLike
from .._validation import _caller_stacklevel, check_epsilon, check_scalar
from ..accounting import ShuffleAmplification, check_shuffle_delta, shuffle_epsilon
from ..aggregate import Aggregate
from ..estimation.heavy import support_estimates
from ..estimation.sizes import frequency_bounds
from ..frequency.grr import GRR
from ..frequency.hashing import OLH
from ..frequency.recommend import recommend
from ..plans import TWO48, uniform_count
from ..reports import Reports
from .._results import thaw
from ._result import HeavyHittersEstimate, ItemsetsEstimate, SetItemsEstimate, _plain
from .items import (ITEM_TYPES, MAX_ITEM_BITS, check_item_bits, decode_items, encode_items, ints_to_words,
                    item_digests, item_words, words_to_ints)
from .._kernels.objects import sort_segments
from .padding import flatten_sets, padding_sampling
from .prefix import PEM

__all__ = [
    "SVIM",
    "SVSM",
    "EncodedSets",
    "SetItemsEstimate",
    "SizeCorrectionWarning",
    "ItemsetsEstimate",
    "Payload",
    "SetValuedState",
    "candidate_itemsets",
    "encode_sets",
    "bounding_sizes",
    "frequency_bounds",
    "padding_length",
    "significant_sizes",
    "size_scale",
]

#: Phase fractions, in twentieths (people are assigned by a uniform choice among 20 cells).
_CELLS = 20
_SVIM_CELLS = (10, 2, 8)
_SVSM_CELLS = (5, 1, 4, 2, 8)
#: Percentile of the size distribution that sets ℓ (the paper's 90%).
PERCENTILE = 0.9
#: Largest public domain: with the dummy, the 65536 values of GRR and of the local-hashing report.
MAX_DOMAIN = (1 << 16) - 1
#: The paper's damping of guessed itemset frequencies.
GUESS_FACTOR = 0.9


# -- input -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EncodedSets:
    """Sets of items as words: person ``i`` holds ``words[offsets[i]:offsets[i+1]]`` (sorted, distinct).

    Items wider than 64 bits are held as their digests in ``words`` (what membership compares) and whole in
    ``wide``, one row of words per item in ``words`` order (what the candidates phase reports); ``wide`` is None up
    to 64 bits.
    """

    offsets: NDArray[np.int64]
    words: NDArray[np.uint64]
    item_type: str
    wide: NDArray[np.uint64] | None = None

    @property
    def n(self) -> int:
        """Number of sets (persons)."""
        return int(self.offsets.size - 1)

    @property
    def lengths(self) -> NDArray[np.int64]:
        """Number of items in each person's set."""
        return np.diff(self.offsets)

    @property
    def rows(self) -> NDArray[np.int64]:
        """The person of each item, in ``words`` order."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.lengths)

    def take(self, idx: NDArray[np.intp]) -> "EncodedSets":
        """The sets of persons ``idx`` (in that order)."""
        idx = np.asarray(idx, dtype=np.int64)
        lengths = self.lengths[idx]
        offsets = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        starts = np.repeat(self.offsets[:-1][idx] - offsets[:-1], lengths)
        at = starts + np.arange(offsets[-1], dtype=np.int64)
        return EncodedSets(offsets, self.words[at], self.item_type, None if self.wide is None else self.wide[at])

    def membership_pairs(self, candidates: NDArray[np.uint64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(persons, columns)``: person ``persons[t]`` holds candidate ``columns[t]``.

        Each pair once, when the candidates are distinct; without an ``n × candidates`` array.
        """
        cands = np.asarray(candidates, dtype=np.uint64)
        if cands.size == 0 or self.words.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        order = np.argsort(cands, kind="stable")
        sorted_c = cands[order]
        pos = np.minimum(np.searchsorted(sorted_c, self.words), sorted_c.size - 1)
        hit = sorted_c[pos] == self.words
        return self.rows[hit], order[pos[hit]].astype(np.int64)

    def membership(self, candidates: NDArray[np.uint64]) -> NDArray[np.bool_]:
        """``(n, len(candidates))`` booleans: person ``i`` holds candidate ``c``."""
        out = np.zeros((self.n, np.asarray(candidates).size), dtype=bool)
        out[self.membership_pairs(candidates)] = True
        return out


def encode_sets(sets: object, item_bits: int = 64, *, item_type: str | None = None, name: str = "sets",
                truncate: bool = True) -> EncodedSets:
    """Validate and encode one set of items per person, without drawing anything.

    The sets come as a list, tuple, array or pandas Series of sets or lists.

    Items go through :func:`ldpnum.heavy.encode_items` (all of one type; str/bytes longer than
    ``item_bits/8`` bytes cut with a counted warning, or refused with ``truncate=False``). A person's list
    holding an item twice is not a set: ValueError with the count and first index. No person at all:
    ValueError. ``item_type``, when given, must be the items' type (TypeError otherwise).
    """
    lengths, flat = flatten_sets(sets, name)
    if lengths.size == 0:
        raise ValueError(f"{name} is empty: no people to collect from")
    try:
        words, kind, _ = encode_items(flat, item_bits, name=f"items of {name}", truncate=truncate)
    except (TypeError, ValueError) as exc:  # name the person, not the position in the flattened list
        rows = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
        raise (TypeError if isinstance(exc, TypeError) else ValueError)(_person_message(str(exc), rows)) from exc
    if len(flat) == 0:
        kind = item_type or kind
    if item_type is not None and kind != item_type:
        raise TypeError(f"{name} holds {kind} items but the protocol was built for {item_type} items; pass "
                        f"item_type={kind!r} to the constructor")
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    wide = None
    if words.ndim == 2:  # items wider than 64 bits: sets of digests, each with its item's row of words
        digests = item_digests(words, item_bits)
        person = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
        order = np.lexsort((digests, person))
        words, wide, person = digests[order], np.ascontiguousarray(words[order]), person[order]
        repeats = np.unique(person[1:][(person[1:] == person[:-1]) & (words[1:] == words[:-1])])
        count, first = int(repeats.size), int(repeats[0]) if repeats.size else -1
        wide.flags.writeable = False
    else:
        words, count, first = _sort_sets(offsets, np.ascontiguousarray(words, dtype=np.uint64))
    if count:
        raise ValueError(f"{name}: a set holds each item once; {count} list(s) repeat an item (after encoding to "
                         f"{item_bits} bits), first at index {first}")
    words.flags.writeable = False
    return EncodedSets(offsets, words, kind, wide)


#: Sets longer than this are sorted with NumPy's O(m log m) sort before the per-person insertion sort.
LONG_SET = 64


def _sort_sets(offsets, words):
    """``(words, n_repeating, first_repeating)``: each person's words ascending, and which persons repeat one.

    Small sets (the common case) take one compiled insertion sort per person (:func:`sort_segments`, no global
    sort of all the items); a set of ``m > LONG_SET`` items is first sorted on its own by NumPy in
    ``O(m log m)``, so the insertion sort meets it sorted and passes over it in ``O(m)``. Without that, one
    set of 240,000 str items took 11 s to encode (quadratic); it now takes well under a second.
    """
    lengths = np.diff(offsets)
    long_sets = np.flatnonzero(lengths > LONG_SET)
    if long_sets.size:
        words = words.copy()
        for i in long_sets.tolist():
            words[offsets[i]:offsets[i + 1]].sort()
    return sort_segments(offsets, words)


def _person_message(message, rows):
    """Rewrite 'first at index j' (and 'item j is') of the flattened items as the person holding item j."""
    import re

    def sub(match):
        j = int(match.group(1))
        return f"first in the set at index {int(rows[j])}" if j < rows.size else match.group(0)

    def sub_item(match):
        j = int(match.group(1))
        return f"the item of the set at index {int(rows[j])} is" if j < rows.size else match.group(0)

    return re.sub(r"\bitem (\d+) is\b", sub_item, re.sub(r"first at index (\d+)", sub, message))


# -- itemset candidates --------------------------------------------------------------------------------------

def candidate_itemsets(frequencies: NDArray[np.float64], count: int) -> list[tuple[int, ...]]:
    """The ``count`` itemsets (index tuples, size ≥ 2) of the items with the largest guessed frequency, best first.

    The guess is ``Π_{i ∈ x} 0.9 f_i / max_j f_j`` (negative estimates count as 0); ties by the tuple.

    Built level by level: a guess only falls when an item is added, so the kept itemsets of size
    ``s + 1`` extend kept itemsets of size ``s``.

    Examples
    --------
    >>> candidate_itemsets(np.array([0.5, 0.4, 0.1]), 3)
    [(0, 1), (0, 2), (1, 2)]
    """
    f = np.clip(np.asarray(frequencies, dtype=np.float64), 0.0, None)
    n_items = f.size
    if n_items < 2 or count < 1:
        return []
    top = f.max()
    r = GUESS_FACTOR * f / top if top > 0 else np.zeros(n_items)
    pool = {(i, j): r[i] * r[j] for i in range(n_items) for j in range(i + 1, n_items)}

    def best(candidates):
        return sorted(candidates, key=lambda t: (-candidates[t], t))[:count]

    kept = best(pool)
    level = [t for t in kept if len(t) == 2]
    while level:
        new = {t + (j,): pool[t] * r[j] for t in level for j in range(t[-1] + 1, n_items)}
        pool.update(new)
        kept = best(pool)
        level = [t for t in kept if t in new]
    return kept


# -- collector state and client payload ----------------------------------------------------------------------

def _json_default(params):
    return _plain(thaw(params), "state")


def _json_object(text, what):
    """The JSON object (dict) in ``text``; TypeError for text of the wrong kind, ValueError for bad JSON."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise TypeError(f"{what} JSON must be str or bytes; got {type(text).__name__}")
    try:
        d = json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError and undecodable bytes
        raise ValueError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(d, dict):  # the text is of the right kind; its content is not: a wrong value
        raise ValueError(f"{what} JSON must be an object {{...}}; got a JSON {type(d).__name__}")  # noqa: TRY004
    return d


def _check_json_fields(d, cls, required, what):
    """ValueError naming the missing and the unknown fields of a JSON object for dataclass ``cls``."""
    known = [f.name for f in fields(cls)]
    missing = [name for name in required if name not in d]
    if missing:
        raise ValueError(f"{what} JSON lacks the required field(s) {missing} (it needs {list(required)}; see "
                         f"{cls.__name__}.to_json)")
    unknown = sorted(set(d) - set(known))
    if unknown:
        raise ValueError(f"{what} JSON has unknown field(s) {unknown}; a {cls.__name__} has {known}")


def _field_int(value, name, low=0):
    """An int field (not bool, not str) ``>= low``: TypeError for another kind, ValueError below ``low``."""
    return check_scalar(value, name, int, low=low)


def _field_str(value, name):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str; got {type(value).__name__} {value!r:.60}")
    return value


def _field_words(values, name):
    """A tuple of item words: ints in ``[0, 2**256)`` (TypeError/ValueError with the count and first index)."""
    if isinstance(values, np.ndarray) and values.ndim == 1:
        values = values.tolist()
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{name} must be a list or tuple of item words (ints); got {type(values).__name__} "
                        f"{values!r:.60}")
    bad = [i for i, v in enumerate(values)
           if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral)]
    if bad:
        v = values[bad[0]]
        raise TypeError(f"{name} must be item words (ints in [0, 2**{MAX_ITEM_BITS})); {len(bad)} are not, first at index "
                        f"{bad[0]} ({type(v).__name__} {v!r:.60})")
    ints = tuple(int(v) for v in values)
    bad = [i for i, v in enumerate(ints) if not 0 <= v < 1 << MAX_ITEM_BITS]
    if bad:
        raise ValueError(f"{name} must be item words in [0, 2**{MAX_ITEM_BITS}); {len(bad)} are not, first at index "
                         f"{bad[0]} ({ints[bad[0]]})")
    return ints


def _field_itemsets(values, name):
    """A tuple of itemsets, each a tuple of item words (see :func:`_field_words`)."""
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{name} must be a list or tuple of itemsets (lists of item words); got "
                        f"{type(values).__name__} {values!r:.60}")
    return tuple(_field_words(v, f"{name}[{j}]") for j, v in enumerate(values))


def _field_params(value, name):
    from collections.abc import Mapping

    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a dict of the protocol's parameters; got {type(value).__name__} "
                        f"{value!r:.60}")
    return dict(value)


@dataclass(frozen=True)
class Payload:
    """What the clients of one phase receive: public, small, JSON-able.

    ``phase`` names the phase (``"candidates"``, ``"size"``, ``"estimate"``, ``"itemset_size"``,
    ``"itemset_estimate"``); ``params`` the protocol's parameters; ``candidates`` the candidate item words
    (size/estimate phases); ``itemsets`` the candidate itemsets as tuples of item words (itemset phases);
    ``ell`` the padding length (estimate phases).

    A payload checks the kind of each field when built (or read by :meth:`from_json`): TypeError or
    ValueError naming the field and the value, e.g. for a stage given as ``"1"`` or a candidate outside
    ``[0, 2**64)``. The protocol that receives it (:meth:`SVIM.privatize`, :meth:`SVIM.mechanism`) then checks,
    before anything is drawn, that it is one its :meth:`~SVIM.payload` can have returned: its parameters, a
    known phase, candidates present exactly after the candidates phase (distinct words of ``item_bits`` bits,
    from the domain if there is one), itemsets of at least two distinct candidates (itemset phases of SVSM),
    and ``ell`` in ``[1, candidates]`` in an estimate phase, 0 otherwise.

    Questionable cases, decided: **duplicate candidates** (or itemsets) are refused, not deduplicated: a
    payload repeating a candidate was not made by :meth:`~SVIM.payload`, and using it would count its holders
    twice in the size phase and give the item two slots in padding-and-sampling. A **stage that disagrees
    with the phase** (stage 7, or stage 1 for ``"estimate"``) is refused: the two are redundant, and either
    could be the edited one.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> sv = ldp.SVIM(4.0, top_k=2, item_bits=16, item_type="uint")
    >>> p = Payload("svim", 2, "estimate", sv.params, candidates=(7, 9, 7), ell=1)
    >>> sv.mechanism(p)
    Traceback (most recent call last):
    ...
    ValueError: payload of phase 'estimate': candidates must be distinct; 1 repeat an earlier one, first at index 2 (7, first listed at index 0)
    """

    protocol: str
    stage: int
    phase: str
    params: dict
    candidates: tuple = ()
    itemsets: tuple = ()
    ell: int = 0

    def __post_init__(self):
        # Kinds and ranges of the fields (TypeError/ValueError naming the field); whether the payload fits a
        # protocol (its phase, stage, candidates and ℓ) is checked by the protocol that uses it.
        set_ = object.__setattr__
        _field_str(self.protocol, "payload protocol")
        _field_str(self.phase, "payload phase")
        set_(self, "stage", _field_int(self.stage, "payload stage"))
        set_(self, "params", _field_params(self.params, "payload params"))
        set_(self, "candidates", _field_words(self.candidates, "payload candidates"))
        set_(self, "itemsets", _field_itemsets(self.itemsets, "payload itemsets"))
        set_(self, "ell", _field_int(self.ell, "payload ell"))

    def to_json(self) -> str:
        """The payload as JSON text (item words as integers)."""
        return json.dumps({"protocol": self.protocol, "stage": self.stage, "phase": self.phase,
                           "params": dict(self.params), "candidates": [int(c) for c in self.candidates],
                           "itemsets": [[int(w) for w in s] for s in self.itemsets], "ell": self.ell})

    @classmethod
    def from_json(cls, text: str) -> "Payload":
        """The payload written by :meth:`to_json`.

        ``protocol``, ``stage``, ``phase`` and ``params`` are required, ``candidates``, ``itemsets`` and ``ell`` default
        as in the constructor; a missing or unknown field, or a field of the wrong kind (a stage given as ``"1"``, a
        candidate outside ``[0, 2**64)``), raises ValueError or TypeError naming it.
        """
        d = _json_object(text, "payload")
        _check_json_fields(d, cls, ("protocol", "stage", "phase", "params"), "payload")
        return cls(d["protocol"], d["stage"], d["phase"], d["params"], d.get("candidates", ()),
                   d.get("itemsets", ()), d.get("ell", 0))


@dataclass(frozen=True)
class SetValuedState:
    """The collector's state between phases: small and JSON-able (:meth:`~SetValuedState.to_json`, ``from_json``).

    ``stage`` is the number of phases collected so far. After the candidates phase it holds the candidate
    item words; after a size phase the size distribution and ℓ; after an estimate phase the estimated
    frequencies and standard errors of the candidates (and, in SVSM, the candidate itemsets). Everything in
    it is computed from reports (post-processing) or public parameters.

    ``shuffles`` holds one entry per collected phase: ``None`` when the phase's reports were not declared
    shuffled, else ``(delta, n)``, the central δ of its declaration and the reports in its smallest shuffled
    batch (:attr:`ldpnum.Aggregate.shuffle`). A state written before this field existed loads with none,
    and its phases count as not shuffled.

    The fields the state machine reads are checked when a state is built or read (:meth:`from_json`: a
    missing ``protocol`` or ``params``, an unknown field, a stage given as ``"1"``: one TypeError or
    ValueError naming it); the protocol checks that the state fits it (stage in ``[0, phases]`` with one
    report count per collected phase, candidates, ℓ and itemsets as in :class:`Payload`) before it is used.
    """

    protocol: str
    params: dict
    stage: int = 0
    candidates: tuple = ()
    sizes: tuple = ()
    ell: int = 0
    item_frequencies: tuple = ()
    item_standard_errors: tuple = ()
    itemsets: tuple = ()
    itemset_sizes: tuple = ()
    itemset_ell: int = 0
    itemset_frequencies: tuple = ()
    itemset_standard_errors: tuple = ()
    n_per_phase: tuple = ()
    oracles: tuple = ()
    scales: tuple = ()
    shuffles: tuple = ()

    def __post_init__(self):
        # Kinds of the fields the protocol's state machine reads (TypeError/ValueError naming the field);
        # whether the state fits a protocol (stage, candidates, ℓ) is checked by the protocol that uses it.
        set_ = object.__setattr__
        _field_str(self.protocol, "state protocol")
        set_(self, "params", _field_params(self.params, "state params"))
        for name in ("stage", "ell", "itemset_ell"):
            set_(self, name, _field_int(getattr(self, name), f"state {name}"))
        set_(self, "candidates", _field_words(self.candidates, "state candidates"))
        set_(self, "itemsets", _field_itemsets(self.itemsets, "state itemsets"))
        if not isinstance(self.n_per_phase, (list, tuple)):
            raise TypeError(f"state n_per_phase must be a tuple of report counts; got "
                            f"{type(self.n_per_phase).__name__}")
        set_(self, "n_per_phase", tuple(_field_int(n, f"state n_per_phase[{j}]", 1)
                                        for j, n in enumerate(self.n_per_phase)))

    def to_json(self) -> str:
        """The state as JSON text."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        return json.dumps(_json_default(d))

    @classmethod
    def from_json(cls, text: str) -> "SetValuedState":
        """The state written by :meth:`to_json`.

        ``protocol`` and ``params`` are required; a missing or unknown field, or one of the wrong kind, raises
        ValueError or TypeError naming it.
        """
        d = _json_object(text, "state")
        _check_json_fields(d, cls, ("protocol", "params"), "state")

        def tup(v):
            return tuple(tup(x) for x in v) if isinstance(v, list) else v

        kwargs: dict[str, Any] = {k: (v if k == "params" else tup(v)) for k, v in d.items()}
        return cls(**kwargs)


def _padded_shuffles(state):
    """One shuffle entry per collected phase (a state from before ``shuffles`` existed: none shuffled)."""
    entries = tuple(state.shuffles)
    return entries + (None,) * (len(state.n_per_phase) - len(entries))


def _check_one_delta(entries, phases):
    """ValueError when shuffled phases were declared with different δ (as ``Aggregate.__add__``)."""
    declared = [(phases[i] if i < len(phases) else str(i), e[0]) for i, e in enumerate(entries) if e is not None]
    deltas = sorted({d for _, d in declared})
    if len(deltas) > 1:
        shown = ", ".join(f"{p!r} with delta {d:g}" for p, d in declared)
        raise ValueError(f"phases shuffled with different delta ({shown}): no single delta describes the "
                         "collection; declare every phase with one delta")


def _check_shuffle_entry(entry, n_phase, phase):
    """The batch size of a recorded shuffle declaration ``(delta, n)``, checked against the phase's reports."""
    if not isinstance(entry, tuple) or len(entry) != 2:
        raise ValueError(f"shuffle declaration of phase {phase!r} must be (delta, n); got {entry!r}")
    check_shuffle_delta(entry[0])
    n = check_scalar(entry[1], f"shuffled batch size of phase {phase!r}", int, low=1, high=n_phase, verb="lie")
    return n


# -- the protocols -----------------------------------------------------------------------------------------------

class _SetValued:
    """A chain of phases over sets of items; SVIM and SVSM list the phases."""

    protocol = ""
    PHASES: tuple = ()
    CELLS: tuple = ()
    _min_people: int | None = None  # computed once by min_people

    def __init__(self, epsilon: float, *, top_k: int = 20, item_bits: int = 64, item_type: str = "str",
                 domain: object = None) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._top_k = check_scalar(top_k, "top_k", int, low=1, high=1 << 12, verb="lie")
        if not isinstance(item_type, str) or item_type not in ITEM_TYPES:
            raise ValueError(f"item_type must be one of {', '.join(map(repr, ITEM_TYPES))}; got {item_type!r}")
        self._item_type = item_type
        self._item_bits = check_item_bits(item_bits, item_type)
        self._domain = None if domain is None else self._check_domain(domain)
        self._domain_words = frozenset(self._domain or ())
        self._check_small_cases()
        self._check_plannable()

    def _check_small_cases(self):
        """Parameters that could only fail once phases were drawn (SVSM refines it)."""

    def _check_plannable(self):
        """Build every phase's oracle now, at the extremes of its size, refusing an ε too small before any draw.

        The extremes are 1 and ``2·top_k`` candidates or itemsets, ℓ of 1 and of every candidate; an ε too small to plan
        or to estimate anything is refused here, rather than after the first phases ran.

        An oracle whose probabilities of supporting a held and a not held value are equal in floating point
        (PEM at ε = 1e-15) estimates nothing (a division by zero); its plan is otherwise exact. Measured: every
        ε from 2e-15 up runs; 1e-15 and below are refused.
        """
        n_max = 2 * self._top_k if self._domain is None else min(2 * self._top_k, len(self._domain))
        probes = [("candidates", self._candidates_mechanism)]
        for n in sorted({1, n_max}):
            probes.append(("size", lambda n=n: self._size_mechanism(n)))
            for ell in sorted({1, n}):
                probes.append(("estimate", lambda n=n, ell=ell: padding_sampling(self._epsilon, n, ell)))
        name = type(self).__name__
        for phase, build in probes:
            try:
                mech = build()
            except ValueError as exc:
                raise ValueError(f"{name}(epsilon={self._epsilon!r}, top_k={self._top_k}) cannot plan the oracle of "
                                 f"its {phase} phase: {exc}") from None
            # PEM's plan gives (p*, q*) as a method; the frequency oracles as a property
            p, q = mech.plan.support_probabilities() if mech.name == "pem" else mech.support_probabilities
            if not p > q:
                raise ValueError(f"epsilon={self._epsilon!r} is too small for {name}: the oracle of its {phase} phase "
                                 f"({mech.name}) supports a held and a not held value with the same probability in "
                                 f"floating point ({p!r}), so nothing could be estimated; use epsilon >= 2e-15")

    def _check_domain(self, domain):
        """The public domain's item words, validated.

        Items of ``item_type``, distinct, 1..65535 of them, each fitting in ``item_bits`` bits whole.
        """
        words, kind = self._encode_domain(domain)
        if words.shape[0] == 0:
            raise ValueError("domain is empty: give the public list of possible items, or None")
        if kind != self._item_type:
            raise TypeError(f"domain holds {kind} items but item_type={self._item_type!r}")
        if words.shape[0] > MAX_DOMAIN:
            raise ValueError(f"domain has {words.shape[0]} items; at most {MAX_DOMAIN} (with the dummy, GRR's and "
                             "the local-hashing report's limit of 65536 values)")
        n_repeated = words.shape[0] - np.unique(words, axis=0 if words.ndim == 2 else None).shape[0]
        if n_repeated:
            raise ValueError(f"domain items must be distinct (after encoding to item_bits bits); {n_repeated} "
                             "repeat an earlier one")
        return tuple(words_to_ints(words))

    def _encode_domain(self, domain):
        """``(words, item_type)`` of the domain; a str/bytes item longer than ``item_bits`` allows is refused.

        The message says what can be done; cutting it is not offered: two domain items sharing their first bytes would
        become one.
        """
        import warnings

        from ..exceptions import TruncationWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TruncationWarning)
            words, kind, _ = encode_items(domain, self._item_bits, name="domain", truncate=True,
                                          locate=True)  # a public domain: naming its items reveals nothing
        cut = [w.message for w in caught if isinstance(w.message, TruncationWarning)]
        for w in caught:
            if not isinstance(w.message, TruncationWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if cut:
            count, first = cut[0].count, cut[0].first_index
            items = list(domain)
            sizes = [len(v.encode("utf-8", "surrogatepass") if isinstance(v, str) else v) for v in items]
            item, size, longest = items[first], sizes[first], max(sizes)
            bits, what = self._item_bits, "bytes of UTF-8" if kind == "str" else "bytes"
            longer = (f"raise item_bits to {8 * longest} (the longest item has {longest} bytes; item_bits is at "
                      f"most {MAX_ITEM_BITS}), or " if 8 * longest <= MAX_ITEM_BITS else "")
            raise ValueError(
                f"domain: {count} item(s) do not fit in item_bits={bits} bits ({bits // 8} {what}), first at index "
                f"{first} ({item!r:.60}, {size} bytes). A public domain's items are compared whole with the "
                f"people's, so they are not cut: {longer}list each item by a short code (for instance its position "
                "in the domain, with item_type='uint', mapping the people's items the same way), or leave "
                f"domain=None (the candidates phase then finds items with PEM, cutting long items to their first "
                f"{bits // 8} bytes with a warning)")
        return words, kind

    @property
    def epsilon(self) -> float:
        """Each person's one report is ε-LDP."""
        return self._epsilon

    @property
    def top_k(self) -> int:
        return self._top_k

    @property
    def params(self) -> dict:
        """The protocol's public parameters, JSON-able (a ``domain`` as its item words)."""
        return {"epsilon": self._epsilon, "top_k": self._top_k, "item_bits": self._item_bits,
                "item_type": self._item_type, "domain": None if self._domain is None else list(self._domain)}

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in self.params.items()) + ")"

    def __eq__(self, other):
        return type(self) is type(other) and self.params == other.params

    def __hash__(self):
        return hash((type(self).__name__, tuple(self.params.items())))

    # -- who reports in which phase ------------------------------------------------------------------------
    @property
    def phases(self) -> tuple[str, ...]:
        """The phases, in collection order."""
        return self.PHASES

    def phase_probabilities(self) -> tuple[Fraction, ...]:
        """Exact probability that a person is assigned to each phase by :meth:`assign_phases`.

        Sums of 48-bit multiply-shift cell counts over 20 cells; within ``20/2^48`` of the nominal fractions.
        """
        out, start = [], 0
        for c in self.CELLS:
            out.append(sum((Fraction(uniform_count(j, _CELLS), TWO48) for j in range(start, start + c)),
                           Fraction(0)))
            start += c
        return tuple(out)

    @property
    def min_people(self) -> int:
        r"""The fewest people :meth:`run` accepts (checked before anything is drawn).

        Phases, and the groups of PEM's prefix lengths inside the candidates phase (without a ``domain``), are
        assigned from random words, independently of the sets; a phase or group that gets nobody cannot be
        estimated, and that would only show after the earlier phases were drawn. ``min_people`` is the
        smallest ``n`` with :math:`\sum_c (1 - p_c)^n \le 10^{-9}` over those cells ``c`` (``p_c`` from
        :meth:`phase_probabilities` and PEM's groups), a bound on the probability that one is empty.
        About 700 for SVIM and 1400 for SVSM with the defaults; estimates from so few people are mostly noise.

        Examples
        --------
        >>> import ldpnum as ldp
        >>> ldp.SVIM(4.0).min_people < ldp.SVSM(4.0).min_people
        True
        """
        import math

        if self._min_people is not None:
            return self._min_people
        probs = [float(p) for p in self.phase_probabilities()]
        cells = probs[1:]
        if self._domain is None:
            groups = self._candidates_mechanism().groups
            cells += [probs[0] * uniform_count(g, groups) / TWO48 for g in range(groups)]
        else:
            cells.append(probs[0])

        def empty_bound(n):
            return sum(math.exp(n * math.log1p(-p)) for p in cells)

        lo, hi = 1, 1
        while empty_bound(hi) > 1e-9:
            lo, hi = hi, 2 * hi
        while lo < hi:  # the smallest n in (lo, hi] with a bound <= 1e-9
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if empty_bound(mid) > 1e-9 else (lo, mid)
        self._min_people = hi
        return hi

    def assign_phases(self, n: int, rng: SeedLike = None) -> NDArray[np.int64]:
        """The phase of each of ``n`` people, from one word each and nothing else (independent of their sets).

        A uniform cell among 20 (:func:`ldpnum._random.assign_columns`), cells split by the phase fractions.
        """
        cells = assign_columns(rng, n, _CELLS)
        return np.repeat(np.arange(len(self.CELLS), dtype=np.int64), self.CELLS)[cells]

    # -- state machine --------------------------------------------------------------------------------------
    def start(self) -> SetValuedState:
        """The collector's state before any report."""
        return SetValuedState(self.protocol, self.params)

    def _check_state(self, state):
        """TypeError/ValueError unless ``state`` is one this protocol's state machine can have produced.

        Its protocol and parameters, a stage in ``[0, number of phases]`` with one report count per collected phase,
        and, once collected, distinct candidates (of ``item_bits`` bits, from the domain if there is one), ℓ in ``[1,
        candidates]``, and itemsets over the candidates (SVSM).
        """
        if not isinstance(state, SetValuedState):
            raise TypeError(f"expected a SetValuedState; got {type(state).__name__}")
        if state.protocol != self.protocol or dict(state.params) != self.params:
            raise ValueError(f"state of {state.protocol} {dict(state.params)} does not belong to {self!r}")
        n_phases = len(self.PHASES)
        if state.stage > n_phases:
            raise ValueError(f"state stage must be in [0, {n_phases}] ({self.protocol} has {n_phases} phases); "
                             f"got {state.stage}")
        if len(state.n_per_phase) != state.stage:
            raise ValueError(f"state stage {state.stage} says {state.stage} phase(s) were collected but "
                             f"n_per_phase lists {len(state.n_per_phase)}: the state was edited or built by hand; "
                             "use the state collect() returned")
        if len(state.shuffles) > state.stage:
            raise ValueError(f"state lists {len(state.shuffles)} shuffle declaration(s) for {state.stage} collected "
                             "phase(s)")
        done = self.PHASES[:state.stage]
        self._check_stage_fields("state", "candidates" in done, state.candidates, "size" in done, state.ell)
        if "itemset_size" in self.PHASES:
            self._check_itemset_fields("state", "estimate" in done, state.itemsets, state.candidates,
                                       "itemset_size" in done, state.itemset_ell)
        elif state.itemsets or state.itemset_ell:
            raise ValueError(f"state of {self.protocol} has no itemset phases; got itemsets {state.itemsets!r:.60} "
                             f"and itemset_ell {state.itemset_ell}")

    def _check_stage_fields(self, where, has_candidates, candidates, has_ell, ell):
        """Candidates and ℓ exactly when the phase that sets them was collected.

        Candidates present, distinct, of item_bits bits, from the domain; ℓ in [1, candidates].
        """
        if not has_candidates:
            if candidates:
                raise ValueError(f"{where} carries candidates before the candidates phase was collected; got "
                                 f"{len(candidates)}")
        else:
            self._check_candidates(candidates, f"{where} candidates")
        if not has_ell:
            if ell:
                raise ValueError(f"{where} ell must be 0 until the size phase sets it; got {ell}")
        elif not 1 <= ell <= len(candidates):
            raise ValueError(f"{where} ell must be in [1, {len(candidates)}] (the padding length is at most the "
                             f"number of candidates); got {ell}")

    def _check_itemset_fields(self, where, has_itemsets, itemsets, candidates, has_ell, ell):
        """Itemsets and their ℓ, exactly when the phases that set them were collected.

        Itemsets present, distinct, each of >= 2 distinct candidates.
        """
        if not has_itemsets:
            if itemsets:
                raise ValueError(f"{where} carries itemsets before the items' estimate phase was collected; got "
                                 f"{len(itemsets)}")
        else:
            self._check_itemsets(itemsets, candidates, f"{where} itemsets")
        if not has_ell:
            if ell:
                raise ValueError(f"{where} itemset ell must be 0 until the itemset size phase sets it; got {ell}")
        elif not 1 <= ell <= len(itemsets):
            raise ValueError(f"{where} itemset ell must be in [1, {len(itemsets)}] (at most the number of candidate "
                             f"itemsets); got {ell}")

    def _check_candidates(self, candidates, name):
        """ValueError unless the candidate words are 1..65535 distinct words of ``item_bits`` bits.

        Domain items, when there is a domain.
        """
        if not candidates:
            raise ValueError(f"{name} is empty: the phases after the candidates phase need at least one candidate")
        if len(candidates) > MAX_DOMAIN:
            raise ValueError(f"{name}: {len(candidates)} candidates; at most {MAX_DOMAIN} (the padding-and-sampling "
                             "oracle's limit of 65536 values)")
        wide = [j for j, w in enumerate(candidates) if w >> self._item_bits]
        if wide:
            raise ValueError(f"{name} must be words below 2**item_bits = 2**{self._item_bits}; {len(wide)} are "
                             f"not, first at index {wide[0]} ({candidates[wide[0]]})")
        first_at: dict = {}
        repeats = [j for j, w in enumerate(candidates) if first_at.setdefault(w, j) != j]
        if repeats:
            # A repeated candidate would count its holders twice in the size phase and give the item two slots
            # in padding-and-sampling (twice the sampling probability): refused, never deduplicated silently.
            raise ValueError(f"{name} must be distinct; {len(repeats)} repeat an earlier one, first at index "
                             f"{repeats[0]} ({candidates[repeats[0]]}, first listed at index "
                             f"{first_at[candidates[repeats[0]]]})")
        if self._domain is not None:
            outside = [j for j, w in enumerate(candidates) if w not in self._domain_words]
            if outside:
                raise ValueError(f"{name} must be items of the public domain; {len(outside)} are not, first at "
                                 f"index {outside[0]} ({candidates[outside[0]]})")

    def _check_itemsets(self, itemsets, candidates, name):
        """ValueError unless the itemsets are 1..65535 distinct sets of >= 2 distinct candidates."""
        if not itemsets:
            raise ValueError(f"{name} is empty: the itemset phases need at least one candidate itemset")
        if len(itemsets) > MAX_DOMAIN:
            raise ValueError(f"{name}: {len(itemsets)} itemsets; at most {MAX_DOMAIN}")
        known = set(candidates)
        seen: dict = {}
        for j, itemset in enumerate(itemsets):
            if len(itemset) < 2 or len(set(itemset)) != len(itemset):
                raise ValueError(f"{name}[{j}] must hold at least two distinct items; got {itemset!r:.80}")
            strangers = [w for w in itemset if w not in known]
            if strangers:
                raise ValueError(f"{name}[{j}] names item word {strangers[0]}, which is not a candidate: an "
                                 "itemset is made of candidates only")
            key = frozenset(itemset)
            if key in seen:
                raise ValueError(f"{name} must be distinct; itemset {j} repeats itemset {seen[key]}")
            seen[key] = j

    def _check_payload(self, payload):
        """TypeError/ValueError unless ``payload`` is one :meth:`payload` can have returned for this protocol.

        Its protocol and parameters, a known phase at its own stage, and that phase's candidates, itemsets and ℓ.

        Questionable cases, decided: a payload whose ``stage`` disagrees with its ``phase`` is refused (they are
        redundant; a mismatch means the payload was edited or is from another collection, and either field
        could be the wrong one); so are duplicate candidates (see :meth:`_check_candidates`) and duplicate
        itemsets, never repaired silently.
        """
        if not isinstance(payload, Payload):
            raise TypeError(f"payload must be a Payload; got {type(payload).__name__}")
        if payload.protocol != self.protocol or dict(payload.params) != self.params:
            raise ValueError(f"payload of {payload.protocol} {dict(payload.params)} does not belong to {self!r}")
        if payload.phase not in self.PHASES:
            raise ValueError(f"payload phase must be one of {self.protocol}'s phases {self.PHASES}; got "
                             f"{payload.phase!r:.60}")
        stage = self.PHASES.index(payload.phase)
        if payload.stage != stage:
            raise ValueError(f"payload stage {payload.stage} does not match its phase {payload.phase!r}, which is "
                             f"stage {stage} of {self.protocol}: the payload was edited or built by hand; send the "
                             "payload that payload(state) returned")
        where = f"payload of phase {payload.phase!r}:"
        itemset_phase = payload.phase.startswith("itemset")
        estimate = payload.phase.endswith("estimate")
        self._check_stage_fields(where, stage >= 1, payload.candidates, estimate and not itemset_phase,
                                 payload.ell if not itemset_phase else 0)
        if "itemset_size" in self.PHASES:
            self._check_itemset_fields(where, itemset_phase, payload.itemsets, payload.candidates,
                                       estimate and itemset_phase, payload.ell if itemset_phase else 0)
        elif payload.itemsets:
            raise ValueError(f"{where} {self.protocol} has no itemset phases; got {len(payload.itemsets)} itemsets")
        if itemset_phase and not estimate and payload.ell:
            raise ValueError(f"{where} ell must be 0 until the itemset size phase sets it; got {payload.ell}")

    def payload(self, state: SetValuedState) -> Payload:
        """What the clients of the next phase need (public; see :class:`Payload`)."""
        self._check_state(state)
        if state.stage >= len(self.PHASES):
            raise ValueError("every phase has been collected; call result(state)")
        phase = self.PHASES[state.stage]
        ell = state.itemset_ell if phase.startswith("itemset") else state.ell
        return Payload(self.protocol, state.stage, phase, self.params, state.candidates, state.itemsets, ell)

    def mechanism(self, payload: Payload) -> Any:
        """The ordinary mechanism of a phase (PEM, GRR/OLH, or :class:`ldpnum.PaddingSampling`)."""
        self._check_payload(payload)
        phase = payload.phase
        if phase == "candidates":
            return self._candidates_mechanism()
        n_cands = len(payload.itemsets) if phase.startswith("itemset") else len(payload.candidates)
        if phase.endswith("size"):
            return self._size_mechanism(n_cands)
        return padding_sampling(self._epsilon, n_cands, payload.ell)

    def _candidates_mechanism(self):
        if self._domain is not None:  # the paper's first step: one sampled item, an oracle over the domain
            return padding_sampling(self._epsilon, len(self._domain), 1)
        return PEM(self._epsilon, item_bits=self._item_bits, top_k=2 * self._top_k, item_type=self._item_type)

    def _size_mechanism(self, n_cands):
        rec = recommend(n_cands + 1, self._epsilon, communication="low")
        return GRR(self._epsilon, n_cands + 1) if rec.name == "GRR" else OLH(self._epsilon, n_cands + 1)

    def _member_words(self, items):
        """The words membership compares for item values (Python ints): themselves, or their digests above 64 bits."""
        if self._item_bits <= 64:
            return np.array(items, dtype=np.uint64)
        return item_digests(ints_to_words(items, self._item_bits), self._item_bits)

    def _local_sets(self, payload, sets):
        """Person × candidate membership for the payload's candidates (items or itemsets)."""
        held = sets.membership(self._member_words(payload.candidates))
        if not payload.phase.startswith("itemset"):
            return held
        index = {int(c): j for j, c in enumerate(payload.candidates)}
        out = np.ones((sets.n, len(payload.itemsets)), dtype=bool)
        for j, itemset in enumerate(payload.itemsets):
            for w in itemset:
                out[:, j] &= held[:, index[int(w)]]
        return out

    def encode(self, sets: object, *, truncate: bool = True) -> EncodedSets:
        """Validate and encode sets for this protocol (:func:`encode_sets`), drawing nothing."""
        return encode_sets(sets, self._item_bits, item_type=self._item_type, truncate=truncate)

    def privatize(self, payload: Payload, sets: object, *, rng: SeedLike = None, truncate: bool = True) -> Reports:
        """The client side of one phase: each person's one report, from the public payload and their set.

        Parameters
        ----------
        payload : Payload
            The phase's public payload (:meth:`payload`, or :meth:`Payload.from_json`).
        sets : sequence of sets, or EncodedSets
            The sets of the people assigned to this phase.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness.

        Notes
        -----
        Each person's report is ε-LDP (see the module notes); everything is validated before the first
        random word is drawn.
        """
        self._check_payload(payload)
        enc = self._check_encoded(sets) if isinstance(sets, EncodedSets) else self.encode(sets, truncate=truncate)
        if isinstance(rng, np.random.Generator) or rng is None:
            gen = rng
        else:
            resolve_rng(rng)  # validate before anything is drawn
            gen = np.random.default_rng(rng)
        mech = self.mechanism(payload)
        if payload.phase == "candidates" and self._domain is None:
            return mech._randomize(self._sample_items(enc, gen), gen)
        if payload.phase == "candidates":
            # a catalogue of thousands of items: the sets as (person, item) pairs, never an n × k array
            persons, columns = enc.membership_pairs(self._member_words(self._domain))
            return mech._randomize(mech._masks_from_pairs(enc.n, persons, columns), gen)
        local = self._local_sets(payload, enc)
        if payload.phase.endswith("size"):
            return mech.privatize(local.sum(axis=1).astype(np.int64), rng=gen)
        return mech.privatize(local, rng=gen)

    def _check_encoded(self, enc):
        """Sets encoded elsewhere must be of this protocol's item type and width.

        Words of more bits would never match a candidate: their holders would silently count as holding nothing.
        """
        if enc.item_type != self._item_type:
            raise TypeError(f"sets were encoded as {enc.item_type} items but the protocol was built for "
                            f"{self._item_type} items")
        n_words = item_words(self._item_bits)
        if (enc.wide is None) != (n_words == 1) or (enc.wide is not None and enc.wide.shape[1] != n_words):
            got = "at most 64" if enc.wide is None else f"{64 * (enc.wide.shape[1] - 1) + 1} to {64 * enc.wide.shape[1]}"
            raise ValueError(f"sets were encoded with {got} bits per item but the protocol has item_bits="
                             f"{self._item_bits}; encode them with this protocol's encode()")
        if enc.wide is not None and enc.wide.size:
            wide = np.flatnonzero(enc.wide[:, 0] >> np.uint64(self._item_bits - 64 * (n_words - 1)))
            if wide.size:
                person = int(np.searchsorted(enc.offsets, wide[0], side="right") - 1)
                raise ValueError(f"sets were encoded with more than item_bits={self._item_bits} bits: "
                                 f"{wide.size} item(s) are wider, first in the set at index {person}; encode them "
                                 f"with this protocol's encode()")
        if self._item_bits < 64 and enc.words.size:
            wide = np.flatnonzero(enc.words >> np.uint64(self._item_bits))
            if wide.size:
                person = int(np.searchsorted(enc.offsets, wide[0], side="right") - 1)
                raise ValueError(f"sets were encoded with more than item_bits={self._item_bits} bits: "
                                 f"{wide.size} word(s) are wider, first in the set at index {person}; encode them "
                                 f"with this protocol's encode()")
        return enc

    def _sample_items(self, enc, rng):
        """One item of each set, uniformly, from one word per person.

        The top 48 bits pick the ``j``-th smallest word of the set by multiply-shift; an empty set takes the word's top
        ``item_bits`` bits as an item. Items wider than 64 bits: the picked item's row of words (the ``j``-th smallest
        digest's item), and for an empty set the item whose top 64 bits are the word and whose other bits are 0.
        """
        n = enc.n
        words = resolve_rng(rng).draw(n) if n else np.zeros(0, np.uint64)
        lengths = enc.lengths
        j = (((words >> np.uint64(16)) * lengths.astype(np.uint64)) >> np.uint64(48)).astype(np.int64)
        empty = lengths == 0
        pick = np.where(empty, 0, enc.offsets[:-1] + j)
        items = enc.words[np.minimum(pick, max(enc.words.size - 1, 0))] if enc.words.size else np.zeros(n, np.uint64)
        if enc.wide is not None:
            out = ints_to_words([int(w) << (self._item_bits - 64) for w in words[empty].tolist()], self._item_bits)
            rows = np.zeros((n, enc.wide.shape[1]), dtype=np.uint64)
            rows[empty] = out
            if enc.wide.shape[0]:
                rows[~empty] = enc.wide[pick[~empty]]
            rows.flags.writeable = False
            return rows
        random_item = words >> np.uint64(64 - self._item_bits)
        out = np.ascontiguousarray(np.where(empty, random_item, items), dtype=np.uint64)
        out.flags.writeable = False
        return out

    def collect(self, state: SetValuedState, data: Reports | Aggregate) -> SetValuedState:
        """The collector's next state from the reports (or their aggregate) of the current phase.

        A phase whose reports reached the collector anonymized and shuffled is collected from its aggregate
        declared shuffled (:meth:`ldpnum.Aggregate.shuffled`); the state records the declaration
        (:attr:`SetValuedState.shuffles`) and :meth:`result` combines the phases. A declaration whose δ
        differs from an earlier phase's is refused (ValueError), as :meth:`ldpnum.Aggregate.__add__` refuses
        it: declare every phase with one δ.
        """
        payload = self.payload(state)
        mech = self.mechanism(payload)
        agg = mech._as_aggregate(data)
        if agg.n_reports == 0:
            raise ValueError(f"no reports in phase {payload.phase!r}")
        phase = payload.phase
        shuffled = None if agg.shuffle is None else (agg.shuffle.delta, agg.shuffle.n)
        if shuffled is not None:
            _check_one_delta(_padded_shuffles(state) + (shuffled,), self.PHASES)
        n_per_phase = state.n_per_phase + (agg.n_reports,)
        oracles = state.oracles + (mech.name,)
        base = replace(state, stage=state.stage + 1, n_per_phase=n_per_phase, oracles=oracles,
                       shuffles=_padded_shuffles(state) + (shuffled,))
        if phase == "candidates" and self._domain is not None:
            p_star, q_star = mech.support_probabilities
            pi_hat, _ = support_estimates(agg.counts.astype(np.float64), float(agg.n_reports), p_star, q_star)
            best = _ranked(pi_hat[:len(self._domain)], self._domain)[:2 * self._top_k]
            return replace(base, candidates=tuple(self._domain[i] for i in best.tolist()))
        if phase == "candidates":
            words = _candidate_words(mech.estimate_heavy_hitters(agg, top_k=2 * self._top_k), 2 * self._top_k)
            if not words:
                raise ValueError("the candidates phase found no candidate items")
            return replace(base, candidates=tuple(int(w) for w in words))
        if phase.endswith("size"):
            theta = significant_sizes(mech.estimate_frequencies(agg))
            sizes = tuple(float(v) for v in theta)
            ell = padding_length(theta)
            if phase == "size":
                return replace(base, sizes=sizes, ell=ell)
            return replace(base, itemset_sizes=sizes, itemset_ell=ell)
        p_star, q_star = mech.support_probabilities
        pi_hat, pi_se = support_estimates(agg.counts.astype(np.float64), float(agg.n_reports), p_star, q_star)
        itemset_phase = phase.startswith("itemset")
        theta = np.array(state.itemset_sizes if itemset_phase else state.sizes)
        scale = size_scale(theta, payload.ell)
        n_c = mech.k
        freq = tuple(float(v) for v in pi_hat[:n_c] * scale)
        se = tuple(float(v) for v in pi_se[:n_c] * scale)
        base = replace(base, scales=state.scales + (scale,))
        if itemset_phase:
            return replace(base, itemset_frequencies=freq, itemset_standard_errors=se)
        base = replace(base, item_frequencies=freq, item_standard_errors=se)
        if "itemset_size" in self.PHASES:
            top = self._itemset_items(base, pi_hat[:n_c], pi_se[:n_c])
            chosen = candidate_itemsets(np.array(freq)[top], 2 * self._top_k)
            if not chosen:
                raise ValueError("fewer than two frequent items: no candidate itemsets")
            itemsets = tuple(tuple(int(state.candidates[top[i]]) for i in t) for t in chosen)
            base = replace(base, itemsets=itemsets)
        return base

    def result(self, state: SetValuedState) -> Any:  # pragma: no cover - SVIM and SVSM define it
        raise NotImplementedError

    def _items_table(self, state, phase="items"):
        """One row per candidate item (or itemset): display label, sampling rate, clipped estimate and sampling error.

        From the state's size-corrected estimates (:func:`_corrected`).
        """
        if phase == "items":
            words = [(w,) for w in state.candidates]
            freq, se = state.item_frequencies, state.item_standard_errors
            ell, scale = state.ell, state.scales[0]
        else:
            words = [tuple(s) for s in state.itemsets]
            freq, se = state.itemset_frequencies, state.itemset_standard_errors
            ell, scale = state.itemset_ell, state.scales[-1]
        theta = self._sizes_upper(state, phase)  # the sizes that bound frequencies (the size phase's noise)
        pi, pi_se, estimate = _corrected(freq, se, scale, theta, ell)
        z = _noise_threshold(len(words))
        rows = []
        for j, w in enumerate(words):
            decoded = self._decode(list(w))
            label = decoded[0] if phase == "items" else frozenset(decoded)
            rows.append({"label": label, "words": w, "assumed": float(freq[j]), "estimate": float(estimate[j]),
                         "se": float(se[j]), "pi": float(pi[j]), "pi_se": float(pi_se[j]), "theta": theta,
                         "ell": ell, "phase": phase, "noise": not pi[j] > z * pi_se[j],
                         "size": len(decoded) if phase == "items" else len(label)})
        return rows

    def _sizes_upper(self, state, phase="items"):
        """The size distribution that bounds frequencies (:func:`bounding_sizes`), with each cell's standard error.

        ``sqrt(P(1-P)/n)/(p* - q*)`` from the size phase's oracle (``P = q* + θ_m (p* - q*)``).
        """
        stage = self.PHASES.index("size" if phase == "items" else "itemset_size")
        theta = np.array(state.sizes if phase == "items" else state.itemset_sizes, dtype=np.float64)
        # the payload that phase's clients received: itemsets exist only from the itemsets' size phase on
        payload = Payload(self.protocol, stage, self.PHASES[stage], self.params, state.candidates,
                          state.itemsets if phase == "itemsets" else (), 0)
        mech = self.mechanism(payload)
        p_star, q_star = mech.support_probabilities
        d, n = p_star - q_star, state.n_per_phase[stage]
        share = q_star + np.clip(theta, 0.0, 1.0) * d
        se = np.sqrt(share * (1.0 - share) / n) / d
        ell = state.itemset_ell if phase == "itemsets" else state.ell
        kept = (np.arange(theta.size) <= ell) | (theta > 0)
        # the unexplained mass 1 - Σ_kept θ̂ is the estimate of the other cells' total, B: GRR's report
        # supports one cell, so its variance is that of one cell of share P_B = |B| q* + f_B (p* - q*); a
        # local-hashing report supports each cell independently: the sum of the cells' variances
        hidden = max(1.0 - float(theta[kept].sum()), 0.0)
        if mech.name == "grr":
            share_b = min(int((~kept).sum()) * q_star + hidden * d, 1.0)
            rest_se = float(np.sqrt(share_b * (1.0 - share_b) / n) / d)
        else:
            rest_se = float(np.sqrt((share * (1.0 - share))[~kept].sum() / n) / d)
        return bounding_sizes(theta, se, ell, rest_se=rest_se)

    def _ranked(self, rows, count):
        """The ``count`` best rows by estimate, without noise and without rows that display like a better one.

        Ties go to smaller itemsets, then the words. Rows indistinguishable from noise (``π̂ ≤ z σ̂``, one-sided 5%
        Bonferroni over the candidates of their phase) are dropped, and so is a second row that displays like a better
        one (words that decode alike: a str cut inside a character; both were estimated as the distinct words they are).
        Returns the rows and the counts ``{"dropped_as_noise": …, "merged_display": …}``; warns about impossible
        estimates among the rows returned.
        """
        order = sorted(range(len(rows)), key=lambda i: (-rows[i]["estimate"], rows[i]["size"], rows[i]["words"]))
        kept, seen, noise, merged = [], set(), 0, 0
        for i in order:
            r = rows[i]
            if r["noise"]:
                noise += 1
                continue
            if r["label"] in seen or (r["phase"] == "itemsets" and len(r["label"]) < len(r["words"])):
                merged += 1
                continue
            seen.add(r["label"])
            kept.append(r)
        kept = kept[:count]
        for phase in ("items", "itemsets"):
            part = [r for r in kept if r["phase"] == phase]
            if part:
                flags = _impossible([r["label"] for r in part], np.array([r["assumed"] for r in part]),
                                    np.array([r["pi"] for r in part]), np.array([r["pi_se"] for r in part]),
                                    part[0]["theta"], part[0]["ell"])
                for r, flag in zip(part, flags):
                    r["impossible"] = bool(flag)
        return kept, {"dropped_as_noise": noise, "merged_display": merged}

    def _estimate_provenance(self, state, rows, dropped):
        bounds = {"size_bounds_distribution": [float(v) for v in self._sizes_upper(state)]}
        if state.itemset_sizes:
            bounds["itemset_size_bounds_distribution"] = [float(v) for v in self._sizes_upper(state, "itemsets")]
        return {**bounds, "sampling_probabilities": [r["pi"] for r in rows],
                "sampling_standard_errors": [r["pi_se"] for r in rows],
                "size_phase": [r["phase"] for r in rows],
                "size_corrected": [r["assumed"] for r in rows],
                "clipped": [r["estimate"] != r["assumed"] for r in rows],
                "impossible": [r.get("impossible", False) for r in rows], **dropped}

    def _itemset_items(self, state, pi, pi_se):
        """The items SVSM builds candidate itemsets from: the ``top_k`` best without those indistinguishable from noise.

        The rule is the result's (:meth:`_ranked`), so no itemset slot goes to an item nobody holds (measured: 4 of the
        8 candidate itemsets of the docs' basket example held a noise string); all ``top_k`` when fewer than two items
        remain, so that the protocol can go on.
        """
        top = self._top_items(state)
        z = _noise_threshold(len(state.candidates))
        real = top[np.asarray(pi)[top] > z * np.asarray(pi_se)[top]]
        return real if real.size >= 2 else top

    def _top_items(self, state):
        return _ranked(np.array(state.item_frequencies), state.candidates)[:self._top_k]

    def shuffle(self, state: SetValuedState) -> ShuffleAmplification | None:
        r"""The central ε of the collection, when every phase's reports were declared shuffled, else None.

        Each person reports in exactly one phase, so by parallel composition the collection is as private as
        its least private phase: the central ε is the **largest** of the phases' central ε,
        ``max_j shuffle_epsilon(ε, n_j, δ)`` with ``n_j`` the reports of phase ``j`` (of its smallest shuffled
        batch when the phase's aggregate merges several; :func:`ldpnum.accounting.shuffle_epsilon`). It is
        the phase with the fewest reports when all phases use the same ε. A phase that was not shuffled has
        only the local ε, so the declaration is dropped (None). Phases declared with different δ are refused
        (ValueError): no single δ describes the collection.

        References
        ----------
        V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal Analysis of
        Privacy Amplification by Shuffling", FOCS 2021.

        Examples
        --------
        >>> import numpy as np, ldpnum as ldp
        >>> rng = np.random.default_rng(0)
        >>> sets = [{"milk", "bread"} if rng.random() < 0.6 else {"tea"} for _ in range(40_000)]
        >>> sv = ldp.SVIM(epsilon=4.0, top_k=2)
        >>> est = sv.run(sets, rng=1, shuffled=True)
        >>> est.shuffle.n == min(est.provenance["n_per_phase"])
        True
        >>> est.privacy  # doctest: +ELLIPSIS
        'local ε = 4, central ε (shuffled, n = ..., δ = 1e-06) = ...'
        >>> sv.run(sets, rng=1).shuffle is None  # not declared shuffled: the local ε only
        True
        """
        self._check_state(state)
        entries = _padded_shuffles(state)
        sizes = [None if e is None else _check_shuffle_entry(e, n, phase)
                 for e, n, phase in zip(entries, state.n_per_phase, self.PHASES)]
        _check_one_delta(entries, self.PHASES)
        if len(entries) < len(self.PHASES) or None in sizes:
            return None
        return max((shuffle_epsilon(self._epsilon, n, e[0]) for e, n in zip(entries, sizes) if n is not None),
                   key=lambda a: a.epsilon)

    def _provenance(self, state, **extra):
        fractions_ = [float(p) for p in self.phase_probabilities()]
        return {"method": self.protocol, "phases": list(self.PHASES), "n_per_phase": list(state.n_per_phase),
                "phase_fractions": fractions_, "oracles": list(state.oracles), "ell": state.ell,
                "epsilon_amplified": padding_sampling(self._epsilon, len(state.candidates), state.ell).amplified_epsilon,
                "candidates": [int(c) for c in state.candidates],
                "candidate_items": self._json_items(state.candidates), "size_distribution": list(state.sizes),
                "scales": list(state.scales), "item_bits": self._item_bits, "item_type": self._item_type,
                "shuffled_phases": [None if e is None else list(e) for e in _padded_shuffles(state)], **extra}

    def _json_items(self, words):
        """Decoded items as JSON can hold them (bytes as hex text)."""
        return [v.hex() if isinstance(v, bytes) else v for v in self._decode(list(words))]

    def _decode(self, words):
        words = list(words) if self._item_bits > 64 else np.array(words, dtype=np.uint64)
        return decode_items(words, self._item_type, self._item_bits)

    def _check_done(self, state):
        self._check_state(state)
        if state.stage < len(self.PHASES):
            raise ValueError(f"phase {self.PHASES[state.stage]!r} has not been collected yet "
                             f"({state.stage} of {len(self.PHASES)} phases done)")

    def run(self, sets: object, *, rng: SeedLike = None, truncate: bool = True, shuffled: bool = False,
            shuffle_delta: float = 1e-6) -> Any:
        """Simulate the whole protocol on one set per person.

        Assign phases, run each phase's clients on their people, collect, and return the result.

        Everything is validated before the first random word is drawn, including the number of people:
        at least :attr:`min_people`, so that no phase (and no PEM group) is left empty but with probability
        under 1e-9. ``rng=None`` (default) is secure;
        an int, SeedSequence or Generator makes the run reproducible. ``shuffled=True`` declares that each
        phase's reports reach the collector anonymized and shuffled, one batch per phase
        (:meth:`ldpnum.Aggregate.shuffled` with ``shuffle_delta``); the result then carries the central ε of
        the collection, the largest over the phases (:meth:`shuffle`).
        """
        if not isinstance(shuffled, (bool, np.bool_)):
            raise TypeError(f"shuffled must be True or False; got {type(shuffled).__name__} {shuffled!r}")
        delta = check_shuffle_delta(shuffle_delta)
        if rng is not None:
            resolve_rng(rng)  # its TypeError/ValueError first; a Generator is not advanced
        enc = self.encode(sets, truncate=truncate)
        if enc.n < self.min_people:
            raise ValueError(f"{type(self).__name__}.run needs at least {self.min_people} people (min_people) for every "
                             f"phase{'' if self._domain is not None else ' and every PEM group'} to get someone "
                             f"with probability 1 - 1e-9; got {enc.n} sets")
        phase_of = self.assign_phases(enc.n, child_rng(rng, 0))
        state = self.start()
        for stage in range(len(self.PHASES)):
            group = enc.take(np.flatnonzero(phase_of == stage))
            payload = self.payload(state)
            reports = self.privatize(payload, group, rng=child_rng(rng, 1, stage))
            agg = self.mechanism(payload).aggregate(reports)
            state = self.collect(state, agg.shuffled(delta) if shuffled and agg.n_reports else agg)
        return self.result(state)


def _ranked(values, items):
    """Indices of ``values`` largest first, ties by the smaller item (Python ints, of any width)."""
    if all(v < 1 << 64 for v in items):
        return np.lexsort((np.array(items, dtype=np.uint64), -np.asarray(values)))
    return np.array(sorted(range(len(items)), key=lambda i: (-float(values[i]), items[i])), dtype=np.intp)


def _candidate_words(estimate, count):
    """The ``count`` best candidates of PEM's estimate as the words the clients encoded (rank order).

    Never re-encode the decoded items: a str item cut inside a multi-byte character decodes with a replacement mark
    for the cut character, and its re-encoding is another word that no client holds (measured when the cut
    character was dropped instead: "日本語の", cut at 8 bytes, was estimated at 0.0 instead of 0.5). The words are
    Python ints, of up to ``item_bits`` = 256 bits. The words are PEM's last-level candidates
    (``provenance["candidate_words"]``), before it merges encodings that decode alike: both are real words of
    clients, estimated separately; only the result's display merges them (:meth:`SVIM.result`).
    """
    return [int(w) for w in estimate.provenance["candidate_words"][:count]]


def significant_sizes(estimate: Any) -> NDArray[np.float64]:
    """The size distribution used for ℓ and the correction: the unbiased estimates, the insignificant cells set to 0.

    Every cell whose estimate is under ``z`` standard errors is set to 0 (``z`` two-sided at 5% Bonferroni-corrected
    over the cells: 3.0 for 41 cells).

    Why: the correction weights size ``m`` by ``m``, so the noise of the many empty cells of large sizes would
    otherwise dominate it (Norm-Sub leaves a positive remainder of noise in every empty cell: measured, SVSM at
    ε = 4 overestimated a pair by 8%, 9.5 standard errors). A truly present size under the threshold is
    dropped, which biases ``s`` down by at most its share.
    """
    f = np.asarray(estimate.frequencies, dtype=np.float64)
    z = normal_quantile(1 - 0.05 / max(f.size, 1))
    return np.where(f > z * np.asarray(estimate.standard_errors), f, 0.0)


def bounding_sizes(theta: object, standard_errors: object, ell: int, z: float = 1.96, *,
                   rest_se: float | None = None) -> NDArray[np.float64]:
    """A size distribution for :func:`frequency_bounds` that allows for the size phase's noise.

    The sizes used for ``ℓ`` and the correction (:func:`significant_sizes`) set every cell under its
    significance threshold to 0, and a long tail of small cells (people holding many candidates) may be
    set to 0 entirely (measured: 15% of 20,000 people holding 3-20 of 20 candidates, every cell above
    size 1 dropped; ``π̂ s ± 1.96 s σ̂`` then covered 10% of the items, intervals from these sizes 48%).
    Here: the cells of sizes ``1..ℓ`` and the kept cells above ``ℓ`` are raised by ``z`` standard errors;
    the mass the kept cells cannot account for, up to ``z`` standard errors, ``1 - Σ_kept θ_m + z·rest_se``,
    is put at the largest size, where it widens the upper bound the most: wherever the unseen tail lies,
    the bounds hold. ``rest_se`` is the standard error of ``1 - Σ_kept θ̂_m`` (the estimate of the other
    cells' total): SVIM/SVSM compute it from the size oracle (GRR: one cell of share ``|B| q* + f_B (p* - q*)``
    over the other cells ``B``; local hashing: the sum of their variances); by default
    ``sqrt(Σ_kept se_m²)``, cells taken as independent (which overstates the variance of GRR's negatively
    correlated estimates: 0.0155 where the exact one is 0.008 for 5,000 reports over 21 sizes).

    Examples
    --------
    >>> bounding_sizes([0.0, 0.85, 0.0, 0.0], [0.01, 0.01, 0.01, 0.01], 1).round(4).tolist()
    [0.0, 0.8696, 0.0, 0.1777]
    """
    t = np.clip(np.asarray(theta, dtype=np.float64), 0.0, None)
    se = np.asarray(standard_errors, dtype=np.float64)
    small = np.arange(t.size) <= ell
    kept = small | (t > 0)
    out = np.where(kept & (np.arange(t.size) >= 1), t + z * se, 0.0)
    if t.size - 1 > ell:  # a tail is possible: sizes above ℓ up to the number of candidates
        if rest_se is None:
            rest_se = float(np.sqrt((se[kept] ** 2).sum()))
        rest = 1.0 - t[kept].sum() + z * rest_se
        out[-1] += max(rest, 0.0)
    return out


def _noise_threshold(n_tests):
    """One-sided z of a 5% test Bonferroni-corrected over ``n_tests`` candidates."""
    return normal_quantile(1 - 0.1 / max(int(n_tests), 1))


def _corrected(freq, se, scale, theta, ell):
    """``(π̂, σ̂_π, estimate)`` from the state's size-corrected estimates (``π̂ s`` and ``σ̂_π s``).

    The estimate is clipped to the frequencies the sizes allow at ``π̂`` (:func:`frequency_bounds`) and to [0, 1].
    """
    pi = np.asarray(freq, dtype=np.float64) / scale
    pi_se = np.asarray(se, dtype=np.float64) / scale
    low, high = frequency_bounds(np.clip(pi, 0.0, None), theta, ell)
    estimate = np.clip(np.clip(np.asarray(freq, dtype=np.float64), low, high), 0.0, 1.0)
    return pi, pi_se, estimate


def _impossible(labels, assumed, pi, pi_se, theta, ell):
    """Warn (:class:`SizeCorrectionWarning`) about entries whose size-corrected estimate is impossible.

    Impossible beyond sampling noise: above every frequency the sizes allow at the 95% upper end of the
    sampling rate, or above 1 by more than 1.96 of its standard errors. Returns the flags. (An estimate
    above 1 within its noise, e.g. 1.02 ± 0.012 for an item everyone holds, is clipped to 1 without a
    warning; ``provenance["clipped"]`` shows it.)
    """
    z = normal_quantile(0.95)
    assumed, pi, pi_se = (np.asarray(v, dtype=np.float64) for v in (assumed, pi, pi_se))
    allowed = frequency_bounds(pi + z * pi_se, theta, ell)[1]
    scale = np.divide(assumed, pi, out=np.zeros_like(assumed), where=pi != 0)
    over_sizes = assumed > allowed + 1e-12
    over_one = assumed - z * pi_se * scale > 1.0
    bad = over_sizes | over_one
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        t = np.clip(np.asarray(theta, dtype=np.float64), 0.0, None)
        above = float(t[ell + 1:].sum()) if t.size > ell + 1 else 0.0
        cap = min(float(frequency_bounds(pi[i], theta, ell)[1]), 1.0)
        sizes = (f"with a sampling rate of {pi[i]:.4g} ± {pi_se[i]:.2g} and the sizes collected (ℓ = {ell}; "
                 f"{above:.1%} of the people hold more than ℓ candidates) at most {cap:.4g} of the people can "
                 "hold it")
        warnings.warn(SizeCorrectionWarning(
            f"{int(bad.sum())} size-corrected frequencies are impossible beyond their sampling error, first "
            f"{labels[i]!r} at rank {i + 1}: the correction gives {assumed[i]:.4g} "
            f"(± {pi_se[i] * scale[i]:.2g}), but {sizes}. The correction assumes an item's holders have set "
            "sizes like a random held item's; here they do not (the item is held mostly in small sets, or "
            "the sizes' tail is the size phase's noise). Reported the largest value the sizes allow (at most "
            "1); its interval spans every frequency they allow (frequency_bounds)",
            count=int(bad.sum()), first_index=i), stacklevel=_caller_stacklevel())
    return bad


def padding_length(theta: NDArray[np.float64], percentile: float = PERCENTILE) -> int:
    """ℓ: the smallest size ``m ≥ 1`` such that sizes ``1..m`` hold at least ``percentile`` of the people.

    Of the people with a non-empty local set, under the size distribution ``theta`` (index = size); 1 if there are none.

    Examples
    --------
    >>> padding_length(np.array([0.5, 0.2, 0.2, 0.05, 0.05]))
    3
    """
    t = np.clip(np.asarray(theta, dtype=np.float64)[1:], 0.0, None)
    if t.size == 0 or t.sum() <= 0:
        return 1
    c = np.cumsum(t) / t.sum()
    return int(np.searchsorted(c, percentile - 1e-12) + 1)


def size_scale(theta: NDArray[np.float64], ell: int) -> float:
    """The factor ``s`` from sampling probability to frequency (module notes).

    ``s = Σ_{m≥1} m θ_m / Σ_{m≥1} m θ_m / max(m, ℓ) = ℓ Σ m θ_m / Σ min(m, ℓ) θ_m``; ``ℓ`` when the distribution has no
    mass above size 0.
    """
    t = np.clip(np.asarray(theta, dtype=np.float64), 0.0, None)
    m = np.arange(t.size, dtype=np.float64)
    num = float((m * t)[1:].sum())
    den = float((m * t / np.maximum(m, ell))[1:].sum())
    return float(ell) if num <= 0 or den <= 0 else num / den


class SVIM(_SetValued):
    r"""Set-Value Item Mining: the most frequent items when each person holds a set of items.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20]: each person sends one ε-LDP report.
    top_k : int, optional
        How many items to find (default 20); ``2·top_k`` candidates are kept after the first phase.
    item_bits : int, optional
        Width of the encoded items in bits, 1..256 (default 64; str/bytes need a multiple of 8). Above 64 bits the
        candidates phase runs PEM over the whole items (more levels, the same report per person) and the other
        phases compare the items' 64-bit digests (:func:`ldpnum.heavy.items.item_digests`).
    item_type : {"str", "bytes", "uint"}, optional
        What the items are (default ``"str"``).
    domain : sequence of items, optional
        The public list of possible items, when there is one (at most 65535). The candidates phase then
        reports the sampled item (or, for a set holding none of them, a dummy) with a frequency oracle over
        the domain and the dummy, as in the paper: padding-and-sampling with ``ℓ = 1``
        (:func:`ldpnum.heavy.padding.padding_sampling`, GRR or OLH), instead of PEM. Items outside the
        domain are never reported.

    Notes
    -----
    Each person is assigned to one of three phases (1/2, 1/10, 2/5 of the people, from a word independent
    of their set) and reports once with the full ε: candidates by PEM on one sampled item, the size
    ``|v ∩ S|`` by GRR or OLH, and ``v ∩ S`` by padding-and-sampling (see :mod:`ldpnum.heavy.setvalued`
    for the estimator and its assumption). :meth:`run` simulates the whole collection; :meth:`start`,
    :meth:`payload`, :meth:`privatize` and :meth:`collect` are the protocol of a real one, and
    :meth:`result` gives the estimate. A collection whose phases were each shuffled (``run(...,
    shuffled=True)``, or every phase's aggregate declared shuffled) shows its central ε, the largest over the
    phases (:meth:`shuffle`).

    References
    ----------
    T. Wang, N. Li, S. Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> rng = np.random.default_rng(0)
    >>> sets = [{"milk", "bread"} if rng.random() < 0.6 else {"tea"} for _ in range(40_000)]
    >>> est = ldp.SVIM(epsilon=4.0, top_k=2).run(sets, rng=1)
    >>> sorted(est.items)
    ['bread', 'milk']
    """

    protocol = "svim"
    PHASES = ("candidates", "size", "estimate")
    CELLS = _SVIM_CELLS

    #: What :meth:`run` finds (the pandas accessor's ``frequent_items`` takes such protocols).
    finds = "items"

    def result(self, state: SetValuedState) -> HeavyHittersEstimate:
        """At most ``top_k`` items with their frequency estimates, standard errors and provenance.

        A :class:`SetItemsEstimate`, whose intervals include the size correction's bias. Candidates that cannot be told
        from noise are left out, so there may be fewer (module notes); a :class:`SizeCorrectionWarning` says when a
        size-corrected estimate was impossible and was clipped.
        """
        self._check_done(state)
        rows, dropped = self._ranked(self._items_table(state), self._top_k)
        spec = padding_sampling(self._epsilon, len(state.candidates), state.ell).spec
        labels = [r["label"] for r in rows]
        prov = self._provenance(state, **self._estimate_provenance(state, rows, dropped))
        return SetItemsEstimate(tuple(labels), np.array([r["estimate"] for r in rows], dtype=np.float64),
                                np.array([r["se"] for r in rows], dtype=np.float64),
                                sum(state.n_per_phase), self._epsilon, spec, prov, shuffle=self.shuffle(state))


class SVSM(_SetValued):
    r"""Set-Value itemSet Mining: the most frequent itemsets (single items included) of set-valued data.

    Parameters
    ----------
    epsilon, top_k, item_bits, item_type, domain
        As for :class:`SVIM`.

    Notes
    -----
    Five phases (1/4, 1/20, 1/5 of the people run SVIM's three for the items; 1/10 and 2/5 the itemsets'
    size and padding-and-sampling phases); each person reports once with the full ε. Candidate itemsets of
    size ≥ 2 are the ``2·top_k`` best by the paper's guessed frequency from SVIM's ``top_k`` items (see
    :mod:`ldpnum.heavy.setvalued`). Shuffled phases: as for :class:`SVIM` (central ε the largest over the five
    phases, :meth:`shuffle`).

    References
    ----------
    T. Wang, N. Li, S. Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> rng = np.random.default_rng(0)
    >>> sets = [{1, 2} if rng.random() < 0.7 else {3} for _ in range(60_000)]
    >>> est = ldp.SVSM(epsilon=4.0, top_k=3, item_bits=16, item_type="uint").run(sets, rng=1)
    >>> sorted(sorted(s) for s in est.itemsets)
    [[1], [1, 2], [2]]
    >>> shuffled = ldp.SVSM(epsilon=4.0, top_k=3, item_bits=16, item_type="uint").run(sets, rng=1, shuffled=True)
    >>> shuffled.shuffle.n == min(shuffled.provenance["n_per_phase"])  # the smallest phase sets the central ε
    True
    """

    protocol = "svsm"
    PHASES = ("candidates", "size", "estimate", "itemset_size", "itemset_estimate")
    CELLS = _SVSM_CELLS

    #: What :meth:`run` finds (the pandas accessor's ``frequent_itemsets`` takes such protocols).
    finds = "itemsets"

    def _check_small_cases(self):
        """Refuse a ``top_k`` or domain that leaves no itemsets here, not after the three item phases were drawn.

        Itemsets (size >= 2) are built from the ``top_k`` items: ``top_k = 1`` or a domain of one item leaves none.
        """
        if self._top_k < 2:
            raise ValueError(f"SVSM needs top_k >= 2 (its itemsets are built from its top_k items; one item makes "
                             f"no itemset); got top_k={self._top_k}. The most frequent itemset is always a single "
                             "item (no itemset is more frequent than its items): for it use SVIM(top_k=1)")
        if self._domain is not None and len(self._domain) < 2:
            raise ValueError(f"SVSM needs a domain of at least 2 items to form itemsets; got {len(self._domain)}: "
                             "with one possible item use SVIM")

    def result(self, state: SetValuedState) -> ItemsetsEstimate:
        """The ``top_k`` best of the candidate items and itemsets, with estimates and provenance.

        As :meth:`SVIM.result` (intervals with the size correction's bias, noise left out, impossible estimates clipped
        and warned), each with the size phase of its own kind.
        """
        self._check_done(state)
        items = self._items_table(state)
        for r in items:
            r["label"] = frozenset([r["label"]])
        rows, dropped = self._ranked(items + self._items_table(state, "itemsets"), self._top_k)
        spec = padding_sampling(self._epsilon, len(state.itemsets), state.itemset_ell).spec
        prov = self._provenance(state, itemsets=[list(s) for s in state.itemsets],
                                itemset_items=[self._json_items(s) for s in state.itemsets],
                                itemset_ell=state.itemset_ell,
                                itemset_size_distribution=list(state.itemset_sizes))
        prov.update(self._estimate_provenance(state, rows, dropped))
        return ItemsetsEstimate(tuple(r["label"] for r in rows), np.array([r["estimate"] for r in rows], dtype=np.float64),
                                np.array([r["se"] for r in rows], dtype=np.float64), sum(state.n_per_phase),
                                self._epsilon, spec, prov,
                                self.shuffle(state))
