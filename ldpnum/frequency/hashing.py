"""Local hashing frequency oracles: binary local hashing (BLH, ``g = 2``) and optimized local hashing (OLH).

One randomizer with a parameter ``g``: each person draws a hash function ``h`` from a public
family mapping the categories to ``[0, g)``, applies generalized randomized response over ``[0, g)`` to
``h(v)`` and reports ``(h, y)``. BLH is ``g = 2``; OLH is ``g = round(e^ε) + 1``, the choice that minimizes
the variance (Wang et al., USENIX Security 2017).

**Hash family.** ``h_{a,b}(v) = floor(((a ⊗ v) ⊕ b) · g / 2^24)`` with ``a, b`` in the field GF(2^24)
(``⊗``: carry-less product modulo the irreducible ``x^24 + x^4 + x^3 + x + 1``; ``⊕``: XOR), the
affine (Carter–Wegman) family over a finite field as in seed 004's PI-RAPPOR, with a field of 2^24
elements instead of a prime field. Every category ``v < k <= 2^24`` is a distinct field element, and for
``v != v'`` the map ``(a, b) -> (z, z') = (a⊗v ⊕ b, a⊗v' ⊕ b)`` is a bijection of GF(2^24)², so with
``(a, b)`` uniform (``a = 0`` included) the pair ``(z, z')`` is *exactly* uniform on all 2^48 pairs. The
seed is exactly uniform because it is 48 bits of one random word. A prime field offers neither property
here: a seed ``(a, b)`` over ``P = 2^61 - 1`` takes 122 bits and cannot share one uint64 with ``y``; and over
any prime, a seed uniform on ``[0, P)²`` is not a whole number of bits (drawn by multiplication it is
non-uniform by ~P/2^64, which biases the estimator by ~1e-9 at small ε). The field element ``z`` is mapped to
``[0, g)`` by range reduction, so hashed value ``u`` has ``n_u = ceil((u+1) 2^24/g) - ceil(u 2^24/g)`` field
elements: ``⌊2^24/g⌋`` or one more, not exactly uniform when ``g`` is not a power of two (relative deviation
at most ``g / 2^24 <= 2^-8``), and the lie's one-word choice among ``g - 1`` values (GRR's plan) is not exactly
uniform either. The estimator assumes neither: ``q*`` is computed exactly from the ``n_u`` and the lie's
integer counts (:func:`support_probabilities_exact`); it is the same for every pair ``v != v'``, so the
estimate is exactly unbiased. (The textbook ``q* = 1/g`` is exact when ``g`` is a power of two; otherwise
it is off by ``~1e-16`` to ``2e-11`` — 4e-16 at ε = 0.5, 1.2e-14 at ε = 4, 7e-13 at ε = 8, 1.7e-11 at
ε = 11 — which would bias each frequency by that over ``p* - q*``, up to 3.5e-11.)

**Randomization.** With the seed fixed, the report ``y`` is GRR over ``[0, g)`` on ``h(v)``: keep with
probability ``keep_count / 2**64``, else a uniform *other* hashed value (the GRR kernel's ``grr_inline``
on one word, with ``a_keep`` from :func:`ldpnum.plans.grr_keep_cells`). The seed comes from its own word, never
combined with the value, so its distribution does not depend on the value, and for each seed the ratio
across values is GRR's ratio: at most E < e^ε, and tight.

**Report layout** (one ``uint64`` per person; 2 random words per record: the seed, then GRR's)::

    bits 63..40  a   (24 bits, GF(2^24) element: the multiplier)
    bits 39..16  b   (24 bits, GF(2^24) element: the offset)
    bits 15..0   y   (16 bits, the randomized hashed value, y < g <= 2^16)

so ``g`` is at most 2^16: OLH's ``g = round(e^ε) + 1`` is capped at 65536 for ε > 11.09. The cap costs
accuracy only there: the per-report variance levels off at about ``q*/p*²`` with ``q* = 2^-16``
(1.5e-5 to 3e-5) instead of falling as ``4 e^-ε``; GRR is the better oracle whenever ``k < 3 e^ε + 2``
(every k ≤ 2^24 once ε > 15.5).

**Aggregate.** The server cannot histogram ``(seed, y)`` pairs; the sufficient statistic is the support
count ``I_v = #{reports with h(v) = y}`` for every category: an :class:`~ldpnum.Aggregate` of ``k``
counts with ``n_reports`` carried separately, merged by addition. Computing it takes O(n·k) hash
evaluations, done incrementally in the Cython kernel ``ldpnum._kernels.server_hashing.local_hash_support``.
A spec's ``n_cells`` is therefore ``k`` (the aggregate's length), not the size of the report alphabet.

References
----------
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (BLH, OLH, the variance table); V. Feldman, K. Talwar, "Lossless Compression of
Efficient Private Local Randomizers", ICML 2021 (pairwise-independent affine hash family over a finite
field).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..spec import check_spec
from ..reports import Reports, check_integer_codes, register_code_check
from ..aggregate import Aggregate
from ..aggregate import support_counts as support_count_check
from .._counting import count_in_slices, n_threads
from .._kernels import client_hashing as kernels
from .._kernels._jit import launch
from .._validation import check_scalar
from ..plans import TWO64, GRRPlan, grr_keep_cells
from ._base import FrequencyOracle

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from ..spec import Spec

__all__ = ["BLH", "OLH", "LocalHashing", "check_g", "LocalHashPlan", "check_local_hash_codes", "decode_reports", "olh_g", "hash_class_sizes",
           "support_probabilities_exact", "local_hash_support_counts", "FIELD_BITS", "G_MAX"]

#: The hash family's field is GF(2^FIELD_BITS); every category code is one of its elements.
FIELD_BITS = 24
#: Largest hash range: y is stored in the 16 low bits of a report.
G_MAX = 1 << 16
Y_BITS = 16
Y_MASK = np.uint64(G_MAX - 1)
#: Identifies the hash family and report layout in the spec (a change of either must change this string).
HASH_FAMILY = "affine-gf2^24-range/v1"


def olh_g(epsilon: float) -> int:
    """OLH's hash range ``round(e^ε) + 1``, capped at ``G_MAX``."""
    return min(round(math.exp(epsilon)) + 1, G_MAX)


def check_g(g: Any) -> int:
    """The hash range ``g`` as an int: an integer in ``[2, G_MAX]`` (TypeError / ValueError otherwise)."""
    return check_scalar(g, "g", int, low=2, high=G_MAX)


def hash_class_sizes(g: int, field_bits: int = FIELD_BITS) -> list[int]:
    """How many of the ``2**field_bits`` field elements range reduction maps to each hashed value."""
    n = 1 << field_bits
    return [-((-(u + 1) * n) // g) + ((-u * n) // g) for u in range(g)]


def support_probabilities_exact(grr: GRRPlan, field_bits: int = FIELD_BITS) -> tuple[Fraction, Fraction]:
    """``(p*, q*)`` of local hashing with the GRR plan ``grr`` over ``[0, g)``, exactly (Fractions).

    ``p* = P[y = h(v) | v]``, GRR's keep probability (a lie is never ``h(v)``). For ``v' != v``, ``(z, z')``
    is uniform on all pairs of field elements, so ``(u, u') = (h(v), h(v'))`` has probability
    ``n_u n_u' / N²`` (``N = 2**field_bits``) and

        q* = P[y = h(v')] = Σ_u (n_u/N)² p*
             + Σ_{u != u'} (n_u n_u' / N²) · c(idx_u(u')) / 2**64

    where ``c(j)`` is the plan's word count of lie index ``j`` among ``g - 1`` and ``idx_u(u') = u'`` if
    ``u' < u`` else ``u' - 1`` (the lie skips the true hashed value). The inner sums are prefix / suffix
    sums, so this is O(g) exact integer arithmetic.
    """
    g = grr.k
    N = 1 << field_bits
    n = hash_class_sizes(g, field_bits)
    cnt = grr.lie_counts()
    same = sum(x * x for x in n)
    prefix = [0] * g
    acc = 0
    for u in range(g):
        prefix[u] = acc
        if u < g - 1:
            acc += n[u] * cnt[u]
    suffix = [0] * g
    acc = 0
    for u in range(g - 1, -1, -1):
        suffix[u] = acc
        if u >= 1:
            acc += n[u] * cnt[u - 1]
    cross = sum(n[u] * (prefix[u] + suffix[u]) for u in range(g))
    keep = Fraction(grr.keep_count(), TWO64)
    q = keep * Fraction(same, N * N) + Fraction(cross, N * N * TWO64)
    return keep, q


class LocalHashPlan:
    """Integer plan of local hashing: the hash range ``g``, GRR's one-word plan over ``[0, g)``, and 2 words per record.

    GRR's plan is ``(a_keep, shift)``; the words are the seed, then GRR's.
    """

    words_per_record = 2
    field_bits = FIELD_BITS

    def __init__(self, k, g, a_keep, shift):
        self.k = k
        self.g = g
        self.a_keep = a_keep
        self.shift = shift
        self._grr = GRRPlan(g, a_keep, shift)
        self._support = None

    def __eq__(self, other):
        return isinstance(other, LocalHashPlan) and (self.k, self.g, self.a_keep, self.shift) == (
            other.k, other.g, other.a_keep, other.shift)

    def __repr__(self):
        return f"LocalHashPlan(k={self.k}, g={self.g}, a_keep={self.a_keep}, shift={self.shift})"

    @property
    def grr(self) -> GRRPlan:
        """GRR's plan over the hashed values ``[0, g)``."""
        return self._grr

    def exact_probabilities(self, h: int) -> dict[int, Fraction]:
        """``{y: Fraction}`` for a fixed seed under which the person's value hashes to ``h``.

        ``h = -1`` is an unknown value, reported uniformly. The seed's own probability does not depend on the value.
        """
        return self._grr.exact_probabilities(h)

    def extreme_ratio(self) -> Fraction:
        """Exact largest ratio over pairs of values and outputs, for any seed (GRR's over ``g``)."""
        return self._grr.extreme_ratio()

    def class_sizes(self) -> list[int]:
        """Field elements per hashed value (see :func:`hash_class_sizes`)."""
        return hash_class_sizes(self.g, self.field_bits)

    def support_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(p*, q*)`` as Fractions (see :func:`support_probabilities_exact`)."""
        if self._support is None:
            self._support = support_probabilities_exact(self._grr, self.field_bits)
        return self._support


def check_local_hash_codes(codes: NDArray[Any], spec: Spec) -> NDArray[np.uint64]:
    """Validate BLH / OLH report codes: one ``uint64`` per person, ``a << 40 | b << 16 | y`` with ``y < g``.

    Registered with :func:`ldpnum.aggregate.register_code_check`, so every :class:`~ldpnum.Reports` path (the
    constructor, slicing, ``concat``, unpickling) checks the codes field by field: the codes are not a
    categorical alphabet.
    """
    g = spec.get("g")
    if spec.get("hash") != HASH_FAMILY or not isinstance(g, int):
        raise ValueError(f"{spec} is not a local-hashing spec")
    codes = check_integer_codes(codes)
    if codes.dtype != np.uint64 or codes.flags.writeable or not codes.flags.c_contiguous:
        codes = np.array(codes, dtype=np.uint64, copy=True)  # the caller keeps their array
    bad = (codes & Y_MASK) >= np.uint64(g)
    if bad.any():
        idx = np.flatnonzero(bad)
        raise ValueError(f"codes has {idx.size} report(s) with y outside [0, {g}), first at index {idx[0]}")
    return codes


def decode_reports(reports: Reports) -> tuple[NDArray[np.uint64], NDArray[np.uint64], NDArray[np.uint64]]:
    """The fields of every BLH / OLH report: ``(a, b, y)`` as uint64 arrays (``h(v) = ((a ⊗ v) ⊕ b) g >> 24``)."""
    c = reports.codes
    return c >> np.uint64(40), (c >> np.uint64(Y_BITS)) & np.uint64((1 << FIELD_BITS) - 1), c & Y_MASK


_PARALLEL_MIN_WORK = 1 << 22  # report × category evaluations below which one thread is used


def local_hash_support_counts(codes: NDArray[np.uint64], k: int, g: int) -> NDArray[np.int64]:
    """Support counts ``I_v = #{reports with h_{a,b}(v) = y}``, ``v < k`` (the Cython kernel, on threads).

    Raises ValueError naming the count and first index of reports whose ``y`` is outside ``[0, g)``.
    """
    from .._kernels.server_hashing import local_hash_support

    codes = np.ascontiguousarray(codes, dtype=np.uint64)
    n = codes.shape[0]
    n_slices = n_threads() if n * k >= _PARALLEL_MIN_WORK else 1
    counts, n_bad, first = count_in_slices(local_hash_support, codes, k, g, n_slices=n_slices)
    if n_bad:
        raise ValueError(f"reports hold {n_bad} code(s) whose y lies outside [0, {g}), "
                         f"first at index {first}")
    return counts


class LocalHashing(FrequencyOracle):
    """The local-hashing randomizer with hash range ``g``; BLH and OLH set ``g``.

    LOLOHA reuses its report layout and aggregation.
    """

    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        return support_count_check(counts, total, n_reports, spec)  # a report adds to several support counts

    def __init__(self, epsilon: float, k: int, g: int | None) -> None:
        super().__init__(epsilon, k)
        self._g = olh_g(self._epsilon) if g is None else check_g(g)
        self._plan = LocalHashPlan(self._k, self._g, *grr_keep_cells(self._epsilon, self._g))

    @property
    def g(self) -> int:
        """Hash range: hashed values and reports ``y`` lie in ``[0, g)``."""
        return self._g

    @property
    def n_cells(self) -> int:
        """Length of the aggregate (``k`` support counts); reports are uint64 codes, not cells."""
        return self._k

    def _spec_params(self):
        return {"k": self._k, "g": self._g, "hash": HASH_FAMILY}

    def __repr__(self):
        return f"{type(self).__name__}(epsilon={self._epsilon!r}, k={self._k!r}, g={self._g!r})"

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` of the plan, exact (:func:`support_probabilities_exact`), rounded to floats."""
        p, q = self._plan.support_probabilities()
        return float(p), float(q)

    def _report_dtype(self):
        return np.dtype(np.uint64)

    def _run_kernel(self, values, words, out):
        launch(kernels.local_hash_kernel, values, self._g, self._plan.a_keep, self._plan.shift, words, out)

    def aggregate(self, reports: Reports) -> Aggregate:
        """Support counts of the reports for every category: a mergeable :class:`~ldpnum.Aggregate` of ``k`` counts.

        ``n_reports`` is carried separately (O(n·k) hash evaluations, in Cython).
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        counts = local_hash_support_counts(reports.codes, self._k, self._g)
        return Aggregate(counts, self.spec, n_reports=len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports (``k`` zero support counts), the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)


#: The former private names, kept for the family's own modules.
_LocalHashing = LocalHashing
_check_g = check_g


class BLH(LocalHashing):
    """Binary local hashing: hash each category to one bit, then randomized response on the bit.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**24.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    Local hashing with ``g = 2`` (see :mod:`ldpnum.frequency.hashing` for the hash family, the report
    layout and the exactness argument). Per-report variance of a frequency estimate at true frequency 0:
    ``(e^ε + 1)² / (e^ε - 1)²`` (Wang et al.'s table; here ``q* = 1/2`` exactly). Reports are one uint64
    each; aggregation costs O(n·k).

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
    Estimation", USENIX Security 2017; V. Feldman, K. Talwar, "Lossless Compression of Efficient Private
    Local Randomizers", ICML 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.frequency.hashing import BLH
    >>> blh = BLH(epsilon=1.0, k=8)
    >>> r = blh.privatize(np.array([0, 3, 7]), rng=0)
    >>> r.codes.dtype, len(r), blh.aggregate(r).n_reports
    (dtype('uint64'), 3, 3)
    """

    name = "blh"

    def __init__(self, epsilon: float, k: int) -> None:
        super().__init__(epsilon, k, 2)

    def __repr__(self):
        return f"BLH(epsilon={self._epsilon!r}, k={self._k!r})"


class OLH(LocalHashing):
    """Optimized local hashing: hash each category to ``[0, g)``, ``g = round(e^ε) + 1``, then GRR over ``g``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**24.
    g : int, optional
        Hash range in [2, 65536]; default ``round(e^ε) + 1`` (capped at 65536, i.e. for ε > 11.09).

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    See :mod:`ldpnum.frequency.hashing` for the hash family, the report layout and the exactness argument.
    Per-report variance of a frequency estimate at true frequency 0 is ``q*(1-q*)/(p*-q*)²`` with the exact
    ``p*, q*`` of the plan; with ``g = e^ε + 1`` it would be Wang et al.'s ``4 e^ε / (e^ε - 1)²`` (the same
    as OUE); rounding ``g`` to an integer raises it by at most 4.2% (at ε ≈ 0.4). OLH is the choice when
    ``k ≥ 3 e^ε + 2`` and communication matters (:func:`ldpnum.frequency.recommend`): one uint64 per
    report instead of ``k`` bits. Aggregation costs O(n·k).

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
    Estimation", USENIX Security 2017; V. Feldman, K. Talwar, "Lossless Compression of Efficient Private
    Local Randomizers", ICML 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.frequency.hashing import OLH
    >>> olh = OLH(epsilon=2.0, k=1000)
    >>> olh.g
    8
    >>> x = np.random.default_rng(0).integers(0, 10, 20_000)
    >>> est = olh.estimate_frequencies(olh.privatize(x, rng=1))
    >>> bool(abs(est.frequencies[:10].sum() - 1) < 0.1)
    True
    """

    name = "olh"

    def __init__(self, epsilon: float, k: int, *, g: int | None = None) -> None:
        super().__init__(epsilon, k, g)

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.epsilon, spec.get("k"), g=spec.get("g"))


for _name in (BLH.name, OLH.name):
    register_code_check(_name, check_local_hash_codes)
