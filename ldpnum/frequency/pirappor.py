"""PI-RAPPOR: pairwise-independent RAPPOR (Feldman and Talwar, seed 004, Section 4.1 and Appendix A).

RAPPOR's randomizer flips each bit of a person's one-hot vector independently (a 1 stays 1 with probability
α1, a 0 becomes 1 with probability α0). PI-RAPPOR keeps every *pair* of bits distributed exactly as RAPPOR's
but sends only an affine map ``φ(z) = φ0 + z·φ1`` over a prime field F_p, which encodes the bit vector
``bool(φ(1)), ..., bool(φ(k))`` with ``bool(z) = [z < a]`` (Algorithm 3): category ``c`` is the field
element ``j = c + 1``; draw ``b ~ Bernoulli(α1)``, then ``φ`` uniformly from
``Φ_{j,b} = {φ : bool(φ(j)) = b}``.
The server decodes ``bool(φ(j))`` for every ``j`` and debiases as for RAPPOR (Algorithm 4).

Parameters (replacement ε-LDP, Lemma 4.1: the ratio ``α1(1-α0) / (α0(1-α1))`` must be at most e^ε)
------------------------------------------------------------------------------------------------------
Feldman and Talwar recommend the asymmetric (OUE-like) ``α0 = 1/(e^ε+1)``, ``α1 = 1/2`` (Corollary 4.4), which
minimizes the dominant variance term ``α0(1-α0)/(α1-α0)²`` (Wang et al. 2017). α0 must be a fraction ``a/p``
of a prime, so it is rounded; we then set α1 to the *largest* value the exact ratio allows (for a fixed α0
the variance decreases in α1), so the realized ratio is tight however coarse ``a/p`` is, and rounding α0 only
costs variance to second order. Concretely:

* ``p``: the smallest prime ``p ≥ k + 1`` admitting an ``a`` with ``a/p`` close enough to ``1/(E+1)``
  (``E`` the rigorous lower bound of e^ε) that the per-report variance ``(1 + α0(E-1))² / (α0(1-α0)(E-1)²)``
  (α1 set as above) is within ``1e-5`` of its optimum ``4E/(E-1)²`` (OUE's); ``a`` the better of
  ``floor(p/(E+1))`` and ``ceil(p/(E+1))``. A small ``p`` is what makes the whole-histogram decoding cheap
  (``O(n + p² + p·k)``). ``p < 2**30`` always (ε ≤ 20 needs at most p ≈ e^20 ≈ 4.9e8).
* ``t_b``: the Bernoulli threshold over 2**53 (``α1 = t_b / 2**53``), the largest integer with
  ``t_b · C1_max ≤ E · (2**53 - t_b) · C0_min`` where ``C1_max = ceil(2**64/a)`` and
  ``C0_min = floor(2**64/(p - a))`` are the extreme counts of the kernel's uniform draws below.

Exactness (design rule R1)
---------------------------------------
The kernel draws ``b`` from word 0 (``(w >> 11) < t_b``), ``φ1 = floor(w1·p/2**64)`` and the target
``t = φ(j)``: ``floor(w2·a/2**64)`` if ``b`` else ``a + floor(w2·(p-a)/2**64)``, then ``φ0 = t - j·φ1``.
A uniform choice among ``m`` cells from a 64-bit word gives cell ``c`` exactly
``C_m(c) = ceil((c+1)·2**64/m) - ceil(c·2**64/m)`` ∈ {⌊2**64/m⌋, ⌈2**64/m⌉} words (relative spread below
``m/2**64``; a 32-bit draw would give cells of ⌊2**32/m⌋ or ⌈2**32/m⌉ words, a spread of 2**-14 at
``m = 2**18`` and of 1/2 at ``m = 2**31``, which breaks tightness and biases ``q*``). For a fixed input ``j``
the map ``(t, φ1) → φ`` is a bijection, so

    P(φ | j) = C_p(φ1)/2**64 · W(φ(j)) / 2**117,
    W(t) = t_b·C_a(t) if t < a else (2**53 - t_b)·C_{p-a}(t - a).

The factor of ``φ1`` does not depend on the input, so the likelihood ratio of two inputs at ``φ`` is
``W(φ(j)) / W(φ(j'))``; for ``j ≠ j'`` every pair ``(φ(j), φ(j'))`` of field elements is reached (choose
``φ1 = (φ(j) - φ(j'))/(j - j')``), hence the exact worst ratio is ``max W / min W`` (``plan.extreme_ratio``),
which the tests also confirm by enumerating every ``(v, φ)`` for small primes.

An unknown value (``unknown="uniform"``) is reported as the field element ``j = 0``, which no category uses:
its report has the same form, hence the same ratio bound against every category, and it supports each
category with probability ``q*`` (so it adds nothing, in expectation, to any estimated count).

Estimator: the pure-protocol estimator with ``p* = α1 = t_b/2**53`` exactly (``bool(φ(j)) = b`` by
construction) and ``q* = α0 = a/p``. For ``j ≠ v`` the realized ``q*`` differs from ``a/p`` only through the
non-uniformity of ``φ1`` (``|C_p(f)/2**64 - 1/p| < 2**-64``): ``|q*(j, v) - a/p| < min(a, p - a)/2**64``
(a relative ``p/2**64 < 2**-34``), so the bias of an estimated count from ``n`` reports is at most
``n·min(a, p-a) / (2**64 (α1 - α0))`` (``plan.bias_bound``), that is at most ``sqrt(2·n·a·p)/2**64`` standard
errors: below 1e-6 of a standard error for ``n = 1e12`` at every (ε, k) tested. ``variance`` is Lemma 4.2
with these α's.

Report: one ``uint64`` per person, ``φ1 << 32 | φ0`` (``φ0, φ1 < p``); the spec's ``n_cells`` is ``k``,
the number of aggregate counters, and ``p``, ``a``, ``t_b`` are spec parameters.

Aggregation (:func:`support_counts`, Cython): the direct ``O(n·k)`` decoding, or the whole-histogram decoding
of Appendix A extended by decoding all ``φ`` with a common ``φ1`` at once, ``O(n + p² + p·k)``; a measured
cost model picks one (the histogram needs ``p² ≤ 2**24``, i.e. ε ≲ 8.3 and ``k < 4096``, and wins when
``n·k`` is large against ``p²``). Estimates of different categories are *not* independent as in OUE: given the true value ``v``,
``φ(v), φ(j), φ(j')`` lie on one line, so support bits of other categories are correlated (up to 0.1,
measured at ε = 1; the variance of a sum of the 15 categories next to ``v`` is 13-18% above that of
independent bits). Each category's variance is exactly Lemma 4.2's.

References
----------
V. Feldman, K. Talwar, "Lossless Compression of Efficient Private Local Randomizers", ICML 2021
(Algorithms 3, 4, 6; Lemmas 4.1, 4.2, 4.7; Corollary 4.4).
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (OUE, the pure-protocol estimator and its variance).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..spec import check_spec
from ..reports import Reports, register_code_check
from ..aggregate import Aggregate
from ..aggregate import support_counts as support_count_check
from .._counting import count_in_slices
from .._counting import n_threads as default_threads
from .._kernels import client_pirappor as kernels
from .._kernels._jit import launch
from .._validation import check_scalar
from ..plans import TWO53, TWO64, exp_lower, is_prime, next_prime, uniform_count64, uniform_extremes64
from ._base import FrequencyOracle

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray
    from ..spec import Spec
    from .._typing import SeedLike

__all__ = ["PIRappor", "PIRapporPlan", "check_pirappor_codes", "choose_field", "is_prime", "support_counts"]

P_MAX = 2**30
#: Largest relative excess of the per-report variance over OUE's optimum allowed when choosing ``p``.
VARIANCE_TOLERANCE = 1e-5
#: Largest table (``p²`` counters of 4 bytes, one per thread) the whole-histogram decoding may allocate.
HISTOGRAM_MAX_CELLS = 1 << 24
_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


# -- parameter choice -------------------------------------------------------------------------------
def _relative_excess(x, e):
    """Per-report variance at α0 = x (α1 set by the ratio bound) over OUE's ``4e/(e-1)²``, minus 1."""
    return (1 + x * (e - 1)) ** 2 / (x * (1 - x)) / (4 * e) - 1


def _alpha0_window(e, tolerance):
    """``[x_lo, x_hi]``: the α0 whose variance excess is at most ``tolerance`` (bisection on each side)."""
    xs = 1 / (e + 1)
    lo, hi = 0.0, xs
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _relative_excess(mid, e) > tolerance else (lo, mid)
    x_lo = hi
    lo, hi = xs, 0.5
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _relative_excess(mid, e) > tolerance else (mid, hi)
    return x_lo, lo


def best_a(p: int, e: float) -> int:
    """The ``a`` in ``{floor(p/(e+1)), ceil(p/(e+1))}`` ∩ [1, (p-1)/2] with the smaller variance."""
    xs = p / (e + 1)
    cands = {min(max(1, c), (p - 1) // 2) for c in (math.floor(xs), math.ceil(xs))}
    return min(sorted(cands), key=lambda a: _relative_excess(a / p, e))


def choose_field(epsilon: float, k: int, tolerance: float = VARIANCE_TOLERANCE) -> tuple[int, int]:
    """``(p, a)``: the smallest prime ``p >= k + 1`` with an ``a`` whose α0 = a/p is accurate enough, and that ``a``.

    Accurate enough: it costs at most ``tolerance`` of relative variance (see the module docstring).
    """
    e = float(exp_lower(epsilon))
    x_lo, x_hi = _alpha0_window(e, tolerance)
    best = None
    a = max(1, math.floor((k + 1) * x_lo))
    while True:
        lo = max(k + 1, math.ceil(a / x_hi))
        if best is not None and lo > best:
            break
        if lo >= P_MAX:
            raise ValueError(f"no prime below 2**30 fits epsilon={epsilon!r}, k={k}")
        hi = math.floor(a / x_lo)
        if lo <= hi:
            p = next_prime(lo)
            if p <= hi and (best is None or p < best):
                best = p
        a += 1
    return best, best_a(best, e)


def bernoulli_threshold(epsilon: float, p: int, a: int) -> int:
    """Largest ``t_b`` over 2**53 with the exact worst ratio ``t_b·C1_max / ((2**53 - t_b)·C0_min)`` ≤ E."""
    e = exp_lower(epsilon)
    c1_max = uniform_extremes64(a)[1]
    c0_min = uniform_extremes64(p - a)[0]
    return math.floor(e * TWO53 * c0_min / (c1_max + e * c0_min))


# -- the plan ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PIRapporPlan:
    """Integer plan of PI-RAPPOR: field ``p``, ``bool(z) = [z < a]``, ``b ~ t_b / 2**53``; 3 words/record."""

    p: int
    a: int
    t_b: int

    words_per_record = 3

    @property
    def barrett(self) -> int:
        """``floor(2**64 / p)``, the kernel's constant for reducing ``j·φ1`` modulo ``p``."""
        return TWO64 // self.p

    @property
    def alpha0(self) -> Fraction:
        """``a / p``: probability that ``bool`` of a uniform field element is 1."""
        return Fraction(self.a, self.p)

    @property
    def alpha1(self) -> Fraction:
        """``t_b / 2**53``: probability that a report supports the person's own category (exact)."""
        return Fraction(self.t_b, TWO53)

    def weight(self, t: int) -> int:
        """Exact weight (over 2**117) of the target ``t = φ(j)`` for any input ``j``."""
        if t < self.a:
            return self.t_b * uniform_count64(t, self.a)
        return (TWO53 - self.t_b) * uniform_count64(t - self.a, self.p - self.a)

    def weight_values(self) -> set[int]:
        """The set of values :meth:`weight` takes (from the extreme counts; each one occurs)."""
        w1 = {self.t_b * c for c in uniform_extremes64(self.a)}
        w0 = {(TWO53 - self.t_b) * c for c in uniform_extremes64(self.p - self.a)}
        return w1 | w0

    def extreme_ratio(self) -> Fraction:
        """Exact largest likelihood ratio over all pairs of inputs and all outputs (structural, any ``p``)."""
        w = self.weight_values()
        return Fraction(max(w), min(w))

    def probability(self, phi0: int, phi1: int, v: int) -> Fraction:
        """Exact probability of the report ``(φ0, φ1)`` for category ``v`` (``-1``: unknown value)."""
        j = v + 1
        t = (phi0 + j * phi1) % self.p
        return Fraction(uniform_count64(phi1, self.p) * self.weight(t), 2**181)

    def exact_probabilities(self, v: int) -> dict[int, Fraction]:
        """``{code: Fraction}`` over all ``p²`` reports for category ``v`` (enumeration; small ``p`` only)."""
        p = self.p
        if p > 512:
            raise ValueError(f"enumeration of {p}² reports is for small primes only")
        weights = [self.weight(t) for t in range(p)]
        j = v + 1
        out = {}
        for f in range(p):
            cf = uniform_count64(f, p)
            for x in range(p):
                out[(f << 32) | x] = Fraction(cf * weights[(x + j * f) % p], 2**181)
        return out

    def support_probability(self, c: int, v: int) -> Fraction:
        """Exact probability that a report of category ``v`` supports category ``c`` (``O(p²)``, small p)."""
        p, a = self.p, self.a
        d = (c - v) % p
        total = 0
        cf = [uniform_count64(f, p) for f in range(p)]
        for t in range(p):
            s = sum(cf[f] for f in range(p) if (t + d * f) % p < a)
            total += self.weight(t) * s
        return Fraction(total, 2**181)

    def bias_bound(self, n_reports: int = 1) -> Fraction:
        """Upper bound on ``|E[ĉ_c] - c|`` (people) from ``n_reports`` reports.

        Since ``|q* - a/p| < min(a, p-a)/2**64`` for every pair of categories.
        """
        return n_reports * Fraction(min(self.a, self.p - self.a), TWO64) / (self.alpha1 - self.alpha0)


def make_plan(epsilon: float, k: int, p: int | None = None) -> PIRapporPlan:
    """The plan for ``epsilon`` and ``k``; ``p`` overrides the choice of the prime (tests, specs)."""
    if p is None:
        p, a = choose_field(epsilon, k)
    else:
        p = check_scalar(p, "p", int)
        if not (k + 1 <= p < P_MAX and is_prime(p)):
            raise ValueError(f"p must be a prime in [k + 1, 2**30) = [{k + 1}, {P_MAX}); got {p}")
        a = best_a(p, float(exp_lower(epsilon)))
    t_b = bernoulli_threshold(epsilon, p, a)
    plan = PIRapporPlan(p=p, a=a, t_b=t_b)
    if not (0 < t_b < TWO53 and plan.alpha1 > plan.alpha0):
        raise ValueError(f"epsilon={epsilon!r} cannot separate α1 from α0 = {a}/{p} on a 2**53 grid")
    return plan


# -- reports ----------------------------------------------------------------------------------------
def check_pirappor_codes(codes: NDArray[Any], spec: Spec) -> NDArray[np.uint64]:
    """Validate PI-RAPPOR report codes: ``uint64`` ``φ1 << 32 | φ0`` with ``φ0, φ1 < p`` (``p`` from the spec).

    Registered with :func:`ldpnum.aggregate.register_code_check`: a report is one of ``p²`` pairs (64 bits), not
    a code of a categorical alphabet, and ``spec.n_cells`` is ``k`` (the aggregate's counters).
    """
    p = spec.get("p")
    if spec.mechanism != PIRappor.name or not isinstance(p, int):
        raise ValueError(f"PI-RAPPOR reports need a pi_rappor spec; got {spec}")
    codes = np.asarray(codes)
    if codes.ndim != 1:
        raise ValueError(f"codes must be one-dimensional; got shape {codes.shape}")
    if codes.dtype.kind not in "iu":
        raise TypeError(f"codes must be integers; got dtype {codes.dtype}")
    if codes.dtype != np.uint64:
        if codes.size and codes.min() < 0:
            bad = np.flatnonzero(codes < 0)
            raise ValueError(f"codes has {bad.size} negative value(s), first at index {bad[0]}")
        codes = codes.astype(np.uint64)
    elif codes.flags.writeable or not codes.flags.c_contiguous:
        codes = codes.copy()
    bad = ((codes & _LOW32) >= np.uint64(p)) | ((codes >> _SHIFT) >= np.uint64(p))
    if bad.any():
        idx = np.flatnonzero(bad)
        raise ValueError(f"codes has {idx.size} value(s) outside the PI-RAPPOR alphabet "
                         f"(phi0, phi1 < p = {p}), first at index {idx[0]} ({int(codes[idx[0]]):#x})")
    return codes


# -- decoding ---------------------------------------------------------------------------------------
#: Measured costs (ns, 2-core AMD EPYC) of the cost model that picks the decoding: direct decoding per
#: (report, category) pair, histogram scan per report and per thread, histogram decode per table cell.
_COST_PAIR = 0.25
_COST_FILL_CACHED = 1.0
_COST_FILL = 8.0
_COST_CELL = 2.0
_MAX_SLICE = 1 << 31


def _histogram_pays(n, p, k, n_threads):
    """Whether the whole-histogram decoding is expected to beat the direct one (per-thread wall time)."""
    if p * p > HISTOGRAM_MAX_CELLS:
        return False
    fill = _COST_FILL_CACHED if 4 * p * p <= 1 << 20 else _COST_FILL
    stream = n * k * _COST_PAIR / n_threads
    histogram = n * fill / n_threads + (p * p + p * k) * _COST_CELL
    return histogram < stream


def support_counts(codes: ArrayLike, p: int, a: int, k: int, *, method: str = "auto",
                   n_threads: int | None = None) -> NDArray[np.int64]:
    """Support counts ``I_c = #{reports with bool(φ(c + 1)) = 1}``, ``c = 0..k-1``, of PI-RAPPOR codes.

    Parameters
    ----------
    codes : array_like of uint64
        Codes ``φ1 << 32 | φ0``.
    p, a, k : int
        Field size, ``bool`` threshold and number of categories (``k < p < 2**30``).
    method : {"auto", "stream", "histogram"}
        ``"stream"``: direct decoding, ``O(n·k)``. ``"histogram"``: whole-histogram decoding,
        ``O(n + p² + p·k)`` with a table of ``p²`` counters (only for ``p² <= 2**24``). ``"auto"`` picks the
        cheaper by a measured cost model. All give identical counts.
    n_threads : int, optional
        Python threads (the kernels release the GIL); default: Numba's thread count.

    Raises
    ------
    ValueError
        Naming the count and first index of codes outside the alphabet.
    """
    from .._kernels import server_pirappor

    if method not in ("auto", "stream", "histogram"):
        raise ValueError(f"method must be 'auto', 'stream' or 'histogram'; got {method!r}")
    codes = np.ascontiguousarray(codes)
    if codes.dtype != np.uint64:
        raise TypeError(f"PI-RAPPOR codes must be uint64; got dtype {codes.dtype}")
    n = codes.shape[0]
    if n == 0:
        return np.zeros(k, dtype=np.int64)
    threads = n_threads or default_threads()
    if method == "auto":
        method = "histogram" if _histogram_pays(n, p, k, threads) else "stream"
    if method == "histogram":
        if p * p > HISTOGRAM_MAX_CELLS:
            raise ValueError(f"histogram decoding needs p² <= {HISTOGRAM_MAX_CELLS}; p = {p}")
        kernel = server_pirappor.support_histogram
        min_slice = max(1 << 16, 4 * p * p)  # each slice pays for a table of p² counters
    else:
        kernel = server_pirappor.support_stream
        min_slice = 1 << 14
    # Slices on Python threads (the kernels release the GIL), each into private counts; the histogram's
    # 32-bit table counters bound a slice to fewer than 2**32 reports.
    n_slices = max(min(threads, n // min_slice), -(-n // _MAX_SLICE), 1)
    counts, n_bad, first = count_in_slices(kernel, codes, k, p, a, n_slices=n_slices, max_workers=threads)
    if n_bad:
        raise ValueError(f"reports hold {n_bad} code(s) outside the PI-RAPPOR alphabet "
                         f"(phi0, phi1 < p = {p}), first at index {first} ({int(codes[first]):#x})")
    return counts


# -- the mechanism ----------------------------------------------------------------------------------
class PIRappor(FrequencyOracle):
    """Pairwise-independent RAPPOR over ``k`` categories: RAPPOR's accuracy, two field elements per report.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**24.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP (replacement: any two values, including an
    unknown one with ``unknown="uniform"``); estimators are post-processing. Reports are one ``uint64`` each
    (one ``uint64`` per person, ``φ1 << 32 | φ0``); the aggregate holds ``k`` support counts and the number of reports, and merges
    with ``+``. The per-report variance of a frequency estimate is Lemma 4.2 of the seed,
    ``[α0(1-α0) + f (α1-α0)(1-α0-α1)] / (α1-α0)²``, within 1e-5 of OUE's ``4e^ε/(e^ε-1)²`` at f = 0. The
    parameter choice and the exactness argument are in the module docstring.

    References
    ----------
    V. Feldman, K. Talwar, "Lossless Compression of Efficient Private Local Randomizers", ICML 2021
    (PI-RAPPOR).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpnum.frequency.pirappor import PIRappor
    >>> m = PIRappor(epsilon=1.0, k=16)
    >>> r = m.privatize(np.array([0, 3, 3, 15]), rng=0)
    >>> r.codes.dtype, len(r)
    (dtype('uint64'), 4)
    """

    name = "pi_rappor"

    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        return support_count_check(counts, total, n_reports, spec)  # a report adds to several support counts

    def __init__(self, epsilon: float, k: int) -> None:
        super().__init__(epsilon, k)
        self._plan = make_plan(self._epsilon, self._k)

    @classmethod
    def _with_prime(cls, epsilon, k, p):
        """Private constructor with a given prime ``p`` (``a`` and ``t_b`` chosen for it as usual)."""
        obj = cls.__new__(cls)
        FrequencyOracle.__init__(obj, epsilon, k)
        obj._plan = make_plan(obj._epsilon, obj._k, p)
        return obj

    @classmethod
    def _from_spec(cls, spec):
        return cls._with_prime(spec.epsilon, spec.get("k"), spec.get("p"))

    def _spec_params(self):
        return {"k": self._k, "p": self._plan.p, "a": self._plan.a, "t_b": self._plan.t_b}

    def __repr__(self):
        if self._plan.p == choose_field(self._epsilon, self._k)[0]:
            return f"PIRappor(epsilon={self._epsilon!r}, k={self._k})"
        return f"PIRappor._with_prime({self._epsilon!r}, {self._k}, p={self._plan.p})"

    @property
    def n_cells(self) -> int:
        """``k``: the aggregate's support counters (a report is one of ``p²`` pairs, see the class notes)."""
        return self._k

    def _report_dtype(self):
        return np.dtype(np.uint64)

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: probability that a report supports the person's own / another given category."""
        plan = self._plan
        return plan.t_b / TWO53, plan.a / plan.p

    # -- client side --------------------------------------------------------------------------------
    def privatize(  # type: ignore[override]  # categories: ``unknown`` instead of ``out_of_range``
            self, x: ArrayLike, *, rng: SeedLike = None, nan_policy: str = "raise",
            fill_value: int | None = None, unknown: str = "raise") -> Reports:
        """Randomize each person's category; return their :class:`~ldpnum.Reports`.

        Parameters
        ----------
        x : array_like of int, shape (n,)
            One category code in ``0..k-1`` per person (integer dtypes, including pandas nullable ``Int64``).
            Floats are refused, even when integral.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness. Anything else: reproducible simulation.
        nan_policy : {"raise", "impute"}, optional
            Missing values raise (default), or are replaced by the public category ``fill_value``.
        unknown : {"raise", "uniform"}, optional
            Codes outside ``[0, k)`` raise (default), or are reported as the field element 0, which no
            category uses: such a report is ε-indistinguishable from every category's (the same exact ratio
            bound) and supports each category with probability ``q*``, so it adds nothing to any count.

        Notes
        -----
        Each call on one person's value is ε-LDP; estimators are post-processing. Everything is validated
        before the first random word is drawn. Three 64-bit words per person; every person's record does
        the same work whatever the value.
        """
        return super().privatize(x, rng=rng, nan_policy=nan_policy, fill_value=fill_value, unknown=unknown)

    def _run_kernel(self, values, words, out):
        plan = self._plan
        launch(kernels.pirappor_kernel, values, plan.p, plan.a, plan.t_b, plan.barrett, words, out)

    # -- server side --------------------------------------------------------------------------------
    def aggregate(self, reports: Reports, *, method: str = "auto") -> Aggregate:
        """Decode reports into the ``k`` support counts plus the number of reports (mergeable with ``+``).

        ``method``: ``"auto"`` (default), ``"stream"`` or ``"histogram"``; see :func:`support_counts`.
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        plan = self._plan
        counts = support_counts(reports.codes, plan.p, plan.a, self._k, method=method)
        return Aggregate(counts, self.spec, n_reports=len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)


register_code_check(PIRappor.name, check_pirappor_codes)
