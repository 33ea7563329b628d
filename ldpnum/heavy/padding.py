r"""Padding-and-sampling frequency oracle (PSFO) over a small candidate domain, for set-valued data.

A person holds a *local set* ``L ⊆ {0..k-1}`` (in SVIM/SVSM: the public candidates they hold) of size
``m``. Padding and sampling to length ``ℓ`` (Wang, Li, Jha, S&P 2018) pads ``L`` with ``ℓ - m`` distinct
dummy values when ``m < ℓ`` (or keeps all of it when ``m ≥ ℓ``) and samples one element uniformly; the
sampled value, in ``[0, k + ℓ)`` (``k..k+ℓ-1`` are the dummies), is reported with generalized randomized
response (GRR) over the ``K = k + ℓ`` values.

**Sampling, exactly.** From the top 48 bits ``u`` of one word the slot is ``s = ⌊u·max(m, ℓ)/2^48⌋``
(multiply-shift, as :func:`ldpnum._random.assign_columns`): slot ``s < m`` is the ``s``-th smallest element
of ``L``, slot ``s ≥ m`` the dummy ``k + s - m``. Slot ``j`` of ``M`` has probability
``c_j/2^48 = uniform_count(j, M)/2^48``, at most ``c_max/2^48`` with ``c_max = ⌈2^48/ℓ⌉`` for every
``M = max(m, ℓ) ≥ ℓ``. So every value is sampled with probability at most ``c_max/2^48 ≈ 1/ℓ``.

**Privacy amplification.** With GRR's keep probability ``p`` and lie probabilities ``q_j`` (GRR's integer
plan over ``K``: :class:`ldpnum.plans.GRRPlan`), the report ``y`` of a local set has probability
``Σ_x π(x) G(y|x)``, at most ``(c_max·p + (2^48 - c_max)·q_max)/2^48`` and at least ``q_min``. The ratio

.. math:: \frac{c_{\max} p + (2^{48} - c_{\max}) q_{\max}}{2^{48} q_{\min}} \le E < e^\varepsilon

is what the plan enforces (:func:`padding_sampling_keep_cells` bisects GRR's keep cells under it, in
integers). With exact uniform slots this is GRR at the amplified
``ε' = ln(ℓ(e^ε - 1) + 1)``: a value is sampled with probability at most ``1/ℓ``, so GRR's ratio
``e^{ε'}`` shrinks to ``1 + (e^{ε'} - 1)/ℓ = e^ε``. The realized ratio is computed from the plan in
rationals (:meth:`PaddingSamplingPlan.extreme_ratio`) and reaches ``e^ε`` within about ``2^-40``.

**Large domains.** GRR's variance grows with ``K``; :class:`PaddingSamplingOLH` reports the sampled value
with OLH at ε instead (no amplification claimed; a mixture of OLH's rows given its seed), and
:func:`padding_sampling` picks whichever of the two has the smaller variance, as the paper does.

**Estimation.** The aggregate is GRR's code histogram over ``K``; GRR's unbiased estimator gives
``π̂_c``, the mean over people of the probability that ``c`` is sampled. SVIM and SVSM turn it into a
frequency (:mod:`ldpnum.heavy.setvalued`).

References
----------
T. Wang, N. Li, S. Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018
(padding-and-sampling, privacy amplification, SVIM and SVSM).
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (GRR).
"""

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .._kernels import client_setvalued as kernels
from .._kernels._jit import launch
from .._kernels.objects import flatten_collections
from .._results import FrequencyEstimate
from .._typing import ArrayLike, NDArray, SeedLike
from .._validation import check_epsilon, check_scalar, plain_array
from ..aggregate import Aggregate
from ..aggregate import support_counts as support_count_check
from ..base import Mechanism
from ..estimation.frequency import estimate_frequencies, support_variance
from ..frequency.hashing import (
    G_MAX,
    check_local_hash_codes,
    local_hash_support_counts,
    olh_g,
    support_probabilities_exact,
)
from ..frequency.hashing import HASH_FAMILY as LOCAL_HASH_FAMILY
from ..plans import TWO48, TWO64, GRRPlan, cell_count, exp_lower, grr_keep_cells, lie_shift, uniform_count
from ..reports import Reports, register_code_check
from ..spec import check_spec

__all__ = [
    "MAX_VALUES",
    "PaddingSampling",
    "PaddingSamplingOLH",
    "PaddingSamplingOLHPlan",
    "PaddingSamplingPlan",
    "amplified_epsilon",
    "flatten_sets",
    "padding_sampling",
    "padding_sampling_keep_cells",
    "padding_sampling_variances",
]

#: Largest ``K = k + ℓ`` (GRR's own limit: codes fit in uint16).
MAX_VALUES = 1 << 16


def amplified_epsilon(epsilon: float, ell: int) -> float:
    """``ε' = ln(ℓ(e^ε - 1) + 1)``: the ε at which GRR runs after sampling one of ``ℓ`` slots."""
    return math.log1p(ell * math.expm1(epsilon))


def _ratio_bound(a, K, b, ell):
    """Upper bound of the report ratio for ``a`` keep cells and lie blocks of ``2**b`` cells (exact)."""
    total = a + ((K - 1) << b)
    d = TWO64 << b
    lie_lo, lie_hi = d // total, -(-d // total)
    keep = cell_count(0, a, total)
    c_max = -(-TWO48 // ell)
    return Fraction(c_max * keep + (TWO48 - c_max) * lie_hi, TWO48 * lie_lo)


def padding_sampling_keep_cells(epsilon: float, K: int, ell: int) -> tuple[int, int]:
    """``(a_keep, b)`` of GRR over ``K`` values after padding and sampling to ``ℓ``.

    The largest ``a_keep`` (lie blocks of ``2**b`` cells, ``b`` for the amplified ε') whose ratio bound (module notes)
    is ≤ E.
    """
    e = exp_lower(epsilon)
    b = lie_shift(amplified_epsilon(epsilon, ell), K)
    lo = 1 << b
    if _ratio_bound(lo, K, b, ell) > e:  # tiny ε: E is 1 or less, below even one lie block's ratio
        raise ValueError(f"epsilon={epsilon!r} is too small for padding-and-sampling over {K} values: the integer "
                         "plan keeps every ratio below a lower bound of e^epsilon that is 2**-50 under it, which leaves "
                         "no room below epsilon of about 1e-15")
    hi = math.floor((ell * (e - 1) + 1) * (1 << b)) + 2
    while _ratio_bound(hi, K, b, ell) <= e:  # pragma: no cover - the bound exceeds E past ε' by construction
        hi *= 2
    hi -= 1  # invariant: lo admissible, hi + 1 not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _ratio_bound(mid, K, b, ell) <= e:
            lo = mid
        else:
            hi = mid - 1
    return lo, b


class PaddingSamplingPlan:
    """Integer plan of padding-and-sampling: ``k`` candidates, ``ℓ`` dummies, GRR's plan over ``k + ℓ``.

    Two words per record: the slot, then GRR's.
    """

    words_per_record = 2

    def __init__(self, k, ell, a_keep, shift):
        self.k = k
        self.ell = ell
        self.grr = GRRPlan(k + ell, a_keep, shift)

    def __repr__(self):
        return f"PaddingSamplingPlan(k={self.k}, ell={self.ell}, {self.grr!r})"

    def sample_probabilities(self, local_set: Any) -> dict[int, Fraction]:
        """``{value: Fraction}``: the exact distribution of the sampled value of a local set, as the kernel samples it.

        Values are ``0..k-1``, dummies ``k..k+ℓ-1``.
        """
        members = sorted(int(v) for v in local_set)
        m = len(members)
        size = max(m, self.ell)
        out = {}
        for s in range(size):
            v = members[s] if s < m else self.k + s - m
            out[v] = Fraction(uniform_count(s, size), TWO48)
        return out

    def exact_probabilities(self, local_set: Any) -> dict[int, Fraction]:
        """``{code: Fraction}`` of the report of a local set (a mixture of GRR's rows)."""
        out: dict[int, Fraction] = {}
        for v, w in self.sample_probabilities(local_set).items():
            for y, p in self.grr.exact_probabilities(v).items():
                out[y] = out.get(y, 0) + w * p
        return out

    def extreme_ratio(self) -> Fraction:
        """The plan's bound on every ratio ``P[y | L] / P[y | L']``, exactly, from the actual lie counts."""
        lies = self.grr.lie_counts()
        c_max = -(-TWO48 // self.ell)
        return Fraction(c_max * self.grr.keep_count() + (TWO48 - c_max) * max(lies), TWO48 * min(lies))

    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` of the GRR estimator over ``k + ℓ`` values."""
        p = self.grr.keep_count() / TWO64
        return p, (1.0 - p) / (self.k + self.ell - 1)


def flatten_sets(sets: object, name: str = "sets") -> tuple[NDArray[np.int64], Any]:
    """``(lengths, flat)``: each person's number of elements and all elements in person order.

    ``flat`` is a list, or an object array when a list or tuple of exact sets, lists or tuples took the compiled pass.

    ``sets`` is a list, tuple, 1-D object array or pandas Series of sets, frozensets, lists, tuples or 1-D
    arrays (one per person). Missing persons (None, NaN) and strings/bytes in place of a set are refused
    with the count and first index. Elements are not checked here.
    """
    fast = flatten_collections(sets)
    if fast is not None:  # a list or tuple of exact sets, lists or tuples: one compiled pass
        return fast
    if isinstance(sets, (pd.Series, pd.Index)):
        seq = sets.tolist()
    elif isinstance(sets, np.ndarray):
        if sets.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional (one set per person); got shape {sets.shape}")
        seq = sets.tolist()
    elif isinstance(sets, (list, tuple)):
        seq = sets
    else:
        raise TypeError(f"{name} must be a list, tuple, numpy array or pandas Series of sets; got "
                        f"{type(sets).__name__}")
    bad = [i for i, s in enumerate(seq)
           if isinstance(s, (str, bytes, dict)) or not isinstance(s, (set, frozenset, list, tuple, np.ndarray))]
    if bad:
        i = bad[0]
        raise TypeError(f"{name} must hold one set (or list) of items per person; {len(bad)} entries are not, "
                        f"first at index {i} ({type(seq[i]).__name__} {seq[i]!r:.40})")
    lengths = np.fromiter((len(s) for s in seq), dtype=np.int64, count=len(seq))
    flat = [v for s in seq for v in (s.tolist() if isinstance(s, np.ndarray) else s)]
    return lengths, flat


def first_duplicate(rows: NDArray[np.int64], values: NDArray[Any]) -> tuple[int, int]:
    """``(count, first row)`` of rows holding a value twice (``values`` sorted within rows), or ``(0, -1)``."""
    if values.size < 2:
        return 0, -1
    dup = (rows[1:] == rows[:-1]) & (values[1:] == values[:-1])
    if not dup.any():
        return 0, -1
    bad_rows = np.unique(rows[1:][dup])
    return int(bad_rows.size), int(bad_rows[0])


class PaddingSampling(Mechanism):
    r"""Padding-and-sampling frequency oracle (PSFO) over ``k`` candidates, with GRR at the amplified ε.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of candidates: a local set is a subset of ``{0..k-1}``.
    ell : int
        Padding length ``ℓ ≥ 1``; ``k + ℓ ≤ 65536``.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.

    A person pads their local set with ``ℓ - m`` distinct dummies (``m = |L| < ℓ``), samples one element
    uniformly from the padded set (or from ``L`` when ``m ≥ ℓ``) and reports it with GRR over ``k + ℓ``
    values, planned so that every ratio is at most ``e^ε`` (GRR at ``ε' = ln(ℓ(e^ε - 1) + 1)``, the
    paper's amplification, up to the 48-bit slot draw: see :mod:`ldpnum.heavy.padding`).
    :meth:`estimate_frequencies` returns, for every value (dummies last), the unbiased estimate of the mean
    probability that a person samples it; SVIM and SVSM scale it to frequencies.

    References
    ----------
    T. Wang, N. Li, S. Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> ps = ldp.PaddingSampling(epsilon=2.0, k=4, ell=2)
    >>> r = ps.privatize([{0, 1}, {2}, set(), {0, 1, 3}], rng=0)
    >>> len(r), r.codes.dtype, ps.n_cells
    (4, dtype('uint8'), 6)
    """

    name = "padding_sampling"
    aliases = ("psfo",)

    def __init__(self, epsilon: float, k: int, ell: int) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._bounds = None
        self._k = check_scalar(k, "k", int, low=1, high=MAX_VALUES - 1, verb="lie")
        self._ell = check_scalar(ell, "ell", int, low=1, high=MAX_VALUES - self._k, verb="lie")
        if self._k + self._ell < 2:  # pragma: no cover - k, ell >= 1
            raise ValueError("k + ell must be at least 2")
        self._plan = PaddingSamplingPlan(self._k, self._ell,
                                         *padding_sampling_keep_cells(self._epsilon, self._k + self._ell, self._ell))

    @property
    def k(self) -> int:
        """Number of candidates (local sets are subsets of ``0..k-1``)."""
        return self._k

    @property
    def ell(self) -> int:
        """Padding length ℓ."""
        return self._ell

    @property
    def amplified_epsilon(self) -> float:
        """``ln(ℓ(e^ε - 1) + 1)``, the ε of the GRR step (see the module notes)."""
        return amplified_epsilon(self._epsilon, self._ell)

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: the ``k`` items plus the ``ℓ`` dummy items."""
        return self._k + self._ell

    def _spec_params(self):
        return {"k": self._k, "ell": self._ell}

    def __repr__(self):
        return f"PaddingSampling(epsilon={self._epsilon!r}, k={self._k}, ell={self._ell})"

    # -- client side ---------------------------------------------------------------------------------
    def prepare_values(self, x: ArrayLike, *, name: str | None = None,  # type: ignore[override]
                       nan_policy: str = "raise", fill_value: Any = None) -> NDArray[np.uint64]:
        """Validate local sets and pack them as bitmask rows, without drawing anything.

        ``x`` is either a 2-D boolean (or 0/1 integer) array of shape ``(n, k)`` (``x[i, c]``: person ``i``
        holds candidate ``c``), or one set (or list, tuple, 1-D array) of candidate codes in ``0..k-1`` per
        person. Returns read-only C-contiguous uint64 rows of ``⌈k/64⌉`` words (bit ``c % 64`` of word
        ``c // 64``). A list holding a code twice is not a set: ValueError.
        """
        label = "x" if name is None else str(name)
        if nan_policy != "raise" or fill_value is not None:
            raise ValueError(f"{label}: missing sets cannot be imputed (nan_policy={nan_policy!r}); an empty set "
                             "is a valid local set")
        k, n_words = self._k, -(-self._k // 64)
        if isinstance(x, np.ndarray):
            x = plain_array(x, label)
        if isinstance(x, np.ndarray) and x.ndim == 2:
            if x.dtype.kind not in "biu":
                raise TypeError(f"{label}: a 2-D indicator array must be boolean or 0/1 integers; got dtype {x.dtype}")
            if x.shape[1] != k:
                raise ValueError(f"{label}: a 2-D indicator array needs one column per candidate ({k}); got shape "
                                 f"{x.shape}")
            bad = (x != 0) & (x != 1)
            if bad.any():
                rows = np.flatnonzero(bad.any(axis=1))
                raise ValueError(f"{label}: indicator entries must be 0 or 1; {rows.size} row(s) are not, first at "
                                 f"index {rows[0]}")
            ind = np.ascontiguousarray(x, dtype=bool)
        else:
            if isinstance(x, np.ndarray) and x.ndim != 1:
                raise ValueError(f"{label} must be one-dimensional (one set per person) or a 2-D indicator array; "
                                 f"got shape {x.shape}")
            lengths, flat = flatten_sets(x, label)
            n = lengths.size
            rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
            raw = flat.tolist() if isinstance(flat, np.ndarray) else flat
            try:
                codes = np.asarray(raw)
            except ValueError:  # a nested sequence among the codes: the type check below names its person
                codes = np.empty(len(raw), dtype=object)
                for i, v in enumerate(raw):
                    codes[i] = v
            if codes.size and (codes.dtype.kind not in "iu" or codes.ndim != 1):
                first = next(i for i, v in enumerate(flat)
                             if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral))
                raise TypeError(f"{label}: candidate codes must be ints; person {int(rows[first])} holds "
                                f"{type(flat[first]).__name__} {flat[first]!r:.40}")
            codes = codes.astype(np.int64, copy=False) if codes.size else np.zeros(0, np.int64)
            bad = (codes < 0) | (codes >= k)
            if bad.any():
                bad_rows = np.unique(rows[bad])
                raise ValueError(f"{label}: candidate codes must lie in [0, {k}); {bad_rows.size} set(s) hold "
                                 f"another value, first at index {bad_rows[0]} ({int(codes[bad][0])})")
            order = np.lexsort((codes, rows))
            count, first = first_duplicate(rows[order], codes[order])
            if count:
                raise ValueError(f"{label}: a set holds each item once; {count} list(s) repeat an item, first at "
                                 f"index {first}")
            return self._masks_from_pairs(n, rows, codes)
        packed = np.packbits(ind, axis=1, bitorder="little")
        width = 8 * n_words
        if packed.shape[1] != width:
            packed = np.concatenate([packed, np.zeros((packed.shape[0], width - packed.shape[1]), np.uint8)], axis=1)
        masks = np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False)
        masks = np.ascontiguousarray(masks.reshape(ind.shape[0], n_words))
        masks.flags.writeable = False
        return masks

    def _masks_from_pairs(self, n: int, rows: NDArray[np.int64], codes: NDArray[np.int64]) -> NDArray[np.uint64]:
        """Bitmask rows (as :meth:`prepare_values` returns them) of ``n`` sets given as ``(person, code)`` pairs.

        The pairs are already checked (codes in ``[0, k)``, no pair twice): O(n·⌈k/64⌉ + pairs), no ``n × k`` array.
        """
        n_words = -(-self._k // 64)
        masks = np.zeros(n * n_words, dtype=np.uint64)
        if codes.size:
            # distinct codes of one person set distinct bits of a word, so adding the bits is or-ing them
            np.add.at(masks, rows * n_words + codes // 64, np.left_shift(np.uint64(1), (codes % 64).astype(np.uint64)))
        masks = masks.reshape(n, n_words)
        masks.flags.writeable = False
        return masks

    def privatize(self, x: ArrayLike, *, rng: SeedLike = None) -> Reports:  # type: ignore[override]
        """Randomize each person's local set; return their :class:`~ldpnum.Reports` (one code each).

        Parameters
        ----------
        x : 2-D boolean array (n, k), or sequence of sets of codes in ``0..k-1``
            One local set per person (see :meth:`prepare_values`).
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness. Anything else: reproducible simulation.

        Notes
        -----
        Each call on one person's value is ε-LDP; estimators are post-processing. Everything is validated
        before the first random word is drawn.
        """
        return self._randomize(self.prepare_values(x), rng)

    def _run_kernel(self, values, words, out):
        p = self._plan
        launch(kernels.padding_sampling_kernel, values, p.k, p.ell, p.grr.a_keep, p.grr.shift, words, out)

    # -- server side ---------------------------------------------------------------------------------
    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: GRR's keep probability and mean lie probability over ``k + ℓ`` values."""
        return self._plan.support_probabilities()

    def variance(self, frequency: ArrayLike = 0.0) -> Any:
        """Per-report variance of the estimate of a sampling probability ``frequency`` (divide by ``n``)."""
        p, q = self.support_probabilities
        out = support_variance(p, q, np.asarray(frequency, dtype=np.float64))
        return float(out) if out.ndim == 0 else out

    def estimate_frequencies(self, data: Reports | Aggregate) -> FrequencyEstimate:
        """Unbiased estimate of the mean probability that a person samples each value, with standard errors.

        For every value ``0..k+ℓ-1`` (dummies last), by GRR's estimator.
        """
        agg = self._as_aggregate(data)
        p, q = self.support_probabilities
        return estimate_frequencies(agg.counts.astype(np.float64), agg.n_reports, p, q, epsilon=self._epsilon,
                                    spec=agg.spec)


class PaddingSamplingOLHPlan(PaddingSamplingPlan):
    """Integer plan of padding-and-sampling with local hashing.

    The slot rule of :class:`PaddingSamplingPlan`, then OLH's report at ε (hash seed from its own word, GRR over ``[0,
    g)``).

    Three words per record: the hash seed, the slot, GRR's.
    """

    words_per_record = 3

    def __init__(self, k, ell, g, a_keep, shift):
        self.k = k
        self.ell = ell
        self.g = g
        self.grr = GRRPlan(g, a_keep, shift)

    def __repr__(self):
        return f"PaddingSamplingOLHPlan(k={self.k}, ell={self.ell}, g={self.g}, {self.grr!r})"

    def hashes(self, seed_word: int, values: ArrayLike) -> NDArray[np.int64]:
        """``h(v)`` of the public local-hashing family under a seed word (the kernel's own hash)."""
        from .._kernels.client_hashing import local_hash_probe

        values = np.ascontiguousarray(values, dtype=np.int64)
        out = np.empty(values.shape[0], dtype=np.int64)
        seeds = np.full(values.shape[0], seed_word, dtype=np.uint64)
        launch(local_hash_probe, seeds, values, self.g, out)
        return out

    def exact_probabilities(self, local_set: Any, seed_word: int = 0) -> dict[int, Fraction]:
        """``{code: Fraction}`` of the report of a local set given the record's seed word.

        The seed word's own distribution does not depend on the set: the sampled value's hash, then GRR over ``[0, g)``.
        """
        from .._kernels.client_hashing import SEED_MASK

        weights = self.sample_probabilities(local_set)
        values = list(weights)
        hashed = self.hashes(seed_word, values)
        base = int(seed_word) & int(SEED_MASK)
        out: dict[int, Fraction] = {}
        for v, h in zip(values, hashed):
            for y, p in self.grr.exact_probabilities(int(h)).items():
                out[base | y] = out.get(base | y, 0) + weights[v] * p
        return out

    def extreme_ratio(self) -> Fraction:
        """GRR's over ``[0, g)``: given the seed, every report is a mixture of GRR's rows."""
        return self.grr.extreme_ratio()

    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` of the OLH estimator over the hashed items, from the exact GRR step."""
        p, q = support_probabilities_exact(self.grr)
        return float(p), float(q)


def padding_sampling_variances(epsilon: float, k: int, ell: int) -> tuple[float, float]:
    """Per-report variance at frequency 0 of a sampled value's estimate: ``(GRR at ε', OLH at ε)``.

    ``(k + ℓ - 2 + e^{ε'})/(e^{ε'} - 1)²`` and ``4 e^ε/(e^ε - 1)²``. GRR is smaller exactly when ``k < ℓ e^ε (4ℓ - 1) +
    1`` (the paper's rule).
    """
    epsilon = check_epsilon(epsilon)
    k = check_scalar(k, "k", int, low=1, high=MAX_VALUES - 1, verb="lie")
    ell = check_scalar(ell, "ell", int, low=1, high=MAX_VALUES - k, verb="lie")
    em1 = math.expm1(epsilon)
    d = ell * em1  # e^{ε'} - 1, without the cancellation of (ℓ(e^ε - 1) + 1) - 1 at tiny ε
    return _over_square(k + ell - 1 + d, d), _over_square(4 * math.exp(epsilon), em1)


def _over_square(a, b):
    """``a / b²``, or ``inf`` when ``b²`` underflows (ε below about 1e-154): the estimate is pure noise there."""
    return a / (b * b) if b * b > 0 else math.inf


def padding_sampling(epsilon: float, k: int, ell: int) -> "PaddingSampling":
    """The padding-and-sampling oracle with the smaller variance (:func:`padding_sampling_variances`).

    :class:`PaddingSampling` (GRR at the amplified ε') or :class:`PaddingSamplingOLH` (OLH at ε).

    The two variances' ratio is ``(k + ℓ - 1 + ℓ(e^ε - 1)) / (4 e^ε ℓ²)``, so GRR is taken when
    ``k + ℓ - 1 + ℓ(e^ε - 1) ≤ 4 e^ε ℓ²`` (the paper's rule ``k ≤ ℓ e^ε (4ℓ - 1) + 1``), compared without
    dividing by ``(e^ε - 1)²``, which is 0 in floating point at tiny ε. ``k`` and ``ℓ`` are checked first
    (``ℓ = 0`` is a ValueError, not a division by zero).
    """
    epsilon = check_epsilon(epsilon)
    k = check_scalar(k, "k", int, low=1, high=MAX_VALUES - 1, verb="lie")
    ell = check_scalar(ell, "ell", int, low=1, high=MAX_VALUES - k, verb="lie")
    grr_smaller = k + ell - 1 + ell * math.expm1(epsilon) <= 4 * math.exp(epsilon) * ell * ell
    return PaddingSampling(epsilon, k, ell) if grr_smaller else PaddingSamplingOLH(epsilon, k, ell)


class PaddingSamplingOLH(PaddingSampling):
    r"""Padding-and-sampling with optimized local hashing (OLH) at ε: the choice for large candidate domains.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of candidates (local sets are subsets of ``{0..k-1}``).
    ell : int
        Padding length ``ℓ ≥ 1``; ``k + ℓ ≤ 65536``.
    g : int, optional
        Hash range (default OLH's ``round(e^ε) + 1``).

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.

    The sampled value (as :class:`PaddingSampling`) is reported with OLH's report at ε: a hash seed drawn
    from its own word, then GRR over ``[0, g)`` of the value's hash. Given the seed, a report is a mixture of
    GRR rows, each within ``e^ε`` of every other; no amplification is claimed. Its variance,
    ``4 e^ε/(e^ε - 1)²`` per report, does not grow with the domain: the paper's adaptive choice takes it over
    GRR at the amplified ε' when ``k ≥ ℓ e^ε (4ℓ - 1) + 1`` (:func:`padding_sampling`). Reports and the
    aggregate (support counts of the ``k + ℓ`` values) are OLH's.

    References
    ----------
    T. Wang, N. Li, S. Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018.
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
    USENIX Security 2017.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> ps = ldp.PaddingSamplingOLH(epsilon=1.0, k=40, ell=2)
    >>> r = ps.privatize([{0, 1}, {2}, set()], rng=0)
    >>> r.codes.dtype, ps.g, ps.aggregate(r).counts.shape
    (dtype('uint64'), 4, (42,))
    """

    name = "padding_sampling_olh"
    aliases = ("psfo_olh",)

    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        return support_count_check(counts, total, n_reports, spec)  # a report supports several values

    def __init__(self, epsilon: float, k: int, ell: int, *, g: int | None = None) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._bounds = None
        self._k = check_scalar(k, "k", int, low=1, high=MAX_VALUES - 1, verb="lie")
        self._ell = check_scalar(ell, "ell", int, low=1, high=MAX_VALUES - self._k, verb="lie")
        self._g = olh_g(self._epsilon) if g is None else check_scalar(g, "g", int, low=2, high=G_MAX, verb="lie")
        self._plan = PaddingSamplingOLHPlan(self._k, self._ell, self._g, *grr_keep_cells(self._epsilon, self._g))

    @property
    def g(self) -> int:
        """Hash range."""
        return self._g

    @property
    def amplified_epsilon(self) -> float:
        """ε itself: no amplification is claimed for the local-hashing report."""
        return self._epsilon

    def _spec_params(self):
        return {"k": self._k, "ell": self._ell, "g": self._g, "hash": LOCAL_HASH_FAMILY}

    @classmethod
    def _from_spec(cls, spec):
        if spec.get("hash") != LOCAL_HASH_FAMILY:
            raise ValueError(f"spec names the hash family {spec.get('hash')!r}; this ldpnum has {LOCAL_HASH_FAMILY!r}")
        return cls(spec.epsilon, spec.get("k"), spec.get("ell"), g=spec.get("g"))

    def __repr__(self):
        return f"PaddingSamplingOLH(epsilon={self._epsilon!r}, k={self._k}, ell={self._ell}, g={self._g})"

    def _report_dtype(self):
        return np.dtype(np.uint64)

    def _run_kernel(self, values, words, out):
        p = self._plan
        launch(kernels.padding_sampling_olh_kernel, values, p.k, p.ell, p.g, p.grr.a_keep, p.grr.shift, words, out)

    def aggregate(self, reports: Reports) -> Aggregate:
        """Support counts of the reports for every value ``0..k+ℓ-1`` (OLH's, in Cython)."""
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        counts = local_hash_support_counts(reports.codes, self.n_cells, self._g)
        return Aggregate(counts, self.spec, n_reports=len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)


register_code_check(PaddingSamplingOLH.name, check_local_hash_codes)
