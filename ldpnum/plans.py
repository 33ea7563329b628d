"""Exact integer plans: the thresholds kernels compare words against (design rule R1).

Every probability a kernel realizes is a ratio of integers fixed here, in Python integers and
``fractions.Fraction``. Thresholds are rounded *conservatively* against a rigorous lower bound of e^ε,

    E = Fraction(math.exp(ε)) · (1 - 2**-50)

(``math.exp`` is accurate to a couple of ulps, far inside 2**-50), so the realized privacy loss never exceeds
the stated ε, while staying within about 2**-50 of it (the guarantee is tight).

This module is the plan arithmetic that several families share, kept outside any one of them so that each
family imports it from here rather than from a sibling's private names:

- word arithmetic: :func:`exp_lower`, :func:`uniform_count`, :func:`cell_count`, :func:`uniform_extremes`;
- the two-output randomizer (:func:`binary_plan`): Duchi, stochastic rounding, Hadamard response, the vector
  mechanisms' bits;
- the window on a grid (:func:`grid_size`, :func:`window_plan`, :func:`window_estimates`): Piecewise, Hybrid,
  Square Wave, the General Wave family and any new window mechanism;
- generalized randomized response from one word (:class:`GRRPlan`, :func:`grr_keep_cells`,
  :func:`lie_shift`): GRR itself, local hashing, PEM/TreeHist, padding-and-sampling, SQKR;
- Floyd's sampler with the kernels' 48-bit picks (:func:`floyd_weights`, :func:`floyd_distribution`): subset
  selection and sampled dimensions;
- a subset by its rank from one word (:func:`subsets_by_rank`, :func:`rank_distribution`): dBitFlip's sampled
  buckets.

References
----------
S. L. Warner, "Randomized Response: A Survey Technique for Eliminating Evasive Answer Bias", JASA 1965.
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017 (generalized randomized response).
N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu, "Collecting and Analyzing
Multidimensional Data with Local Differential Privacy", ICDE 2019 (the Piecewise window).
Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under Local
Differential Privacy", SIGMOD 2020 (the Square and General Wave windows).
J. Bentley, R. Floyd, "A sample of brilliance", Comm. ACM 1987 (Floyd's sampling algorithm).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from ._validation import check_scalar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

__all__ = ["TWO48", "TWO53", "TWO64", "cell_count", "exp_lower", "binary_plan", "window_plan", "BinaryPlan",
           "WindowPlan", "uniform_count", "uniform_extremes", "grid_size", "shape_counts", "window_estimates",
           "GRRPlan", "grr_keep_cells", "lie_shift", "floyd_weights", "floyd_distribution", "is_prime", "next_prime",
           "uniform_count64", "uniform_extremes64", "RANK_SUBSETS", "subsets_by_rank", "rank_distribution"]

TWO53 = 2**53
TWO48 = 2**48
TWO64 = 2**64


def exp_lower(epsilon: float) -> Fraction:
    """A rigorous lower bound of ``exp(epsilon)`` as a Fraction, within a relative 2**-49 of it."""
    return Fraction(math.exp(epsilon)) * (1 - Fraction(1, 2**50))


def uniform_count(j: int, m: int) -> int:
    """How many of the 2**48 draws the kernels' uniform choice maps to cell ``j`` of ``m``."""
    return -((-(j + 1) * TWO48) // m) + ((-j * TWO48) // m)


def cell_count(s: int, e: int, total: int) -> int:
    """How many of the 2**64 words the kernels' ``mulhi64`` maps into cells ``[s, e)`` of ``total``.

    The kernels compute ``floor(word · total / 2**64)``; the count is ``ceil(e·2**64/total) - ceil(s·2**64/total)``.
    """
    return -((-e * TWO64) // total) + ((-s * TWO64) // total)


def uniform_extremes(m: int) -> tuple[int, int]:
    """Smallest and largest :func:`uniform_count` over the ``m`` cells."""
    lo = TWO48 // m
    return (lo, lo) if TWO48 % m == 0 else (lo, lo + 1)


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for ``n < 3.3e24`` (bases: the first 13 primes)."""
    if n < 2:
        return False
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for q in bases:
        if n % q == 0:
            return n == q
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for q in bases:
        x = pow(q, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def next_prime(n: int) -> int:
    """Smallest prime ``>= n``."""
    n = max(2, int(n))
    while not is_prime(n):
        n += 1
    return n


def uniform_count64(c: int, m: int) -> int:
    """How many of the 2**64 words the kernel's uniform choice ``floor(w·m/2**64)`` maps to cell ``c``."""
    return cell_count(c, c + 1, m)


def uniform_extremes64(m: int) -> tuple[int, int]:
    """Smallest and largest :func:`uniform_count64` over the ``m`` cells."""
    lo = TWO64 // m
    return (lo, lo) if TWO64 % m == 0 else (lo, lo + 1)


@dataclass(frozen=True)
class BinaryPlan:
    """Plan of the two-output randomizer.

    For a value mapped to ``u`` in [0, 1] the kernel uses the threshold ``T(u) = t_lo + floor(u (t_hi - t_lo))``
    and outputs code 1 with probability ``T(u) / 2**53``. With ``t_hi = 2**53 - t_lo`` and
    ``t_lo = ceil(2**53 / (1 + E))`` both likelihood ratios ``t_hi / t_lo`` and
    ``(2**53 - t_lo) / (2**53 - t_hi)`` are at most E < e^ε.
    """

    t_lo: int
    t_hi: int
    words_per_record: int = 1

    def probability_one(self, threshold: int) -> Fraction:
        """Exact probability of code 1 under a kernel threshold."""
        return Fraction(int(threshold), TWO53)

    def exact_probabilities(self, threshold: int) -> dict[int, Fraction]:
        """``{code: Fraction}`` for a kernel threshold."""
        p1 = self.probability_one(threshold)
        return {0: 1 - p1, 1: p1}


def binary_plan(epsilon: float, bits: int = 53) -> BinaryPlan:
    """Thresholds of the ε-LDP two-output randomizer (Warner's randomized response when u ∈ {0, 1}).

    On a ``2**bits`` grid (``bits ≤ 53``): ``t_lo = ceil(2**bits / (1 + E))``, ``t_hi = 2**bits - t_lo`` for ``E``
    a rigorous lower bound of e^ε, returned scaled to the 2**53 grid of :class:`BinaryPlan` (multiplied by
    ``2**(53 - bits)``), so its probabilities are exact as they are. With ``bits = 32`` a kernel draws the bit from
    one 32-bit half ``h`` of a word as ``h < t >> 21``, two bits per word; the ratio then falls short of e^ε by a
    relative ``(1 + e^ε)/2**32`` at most.
    """
    e = exp_lower(epsilon)
    grid = 1 << bits
    t_lo = math.ceil(Fraction(grid) / (1 + e))
    t_hi = grid - t_lo
    if not 0 < t_lo < t_hi < grid:
        raise ValueError(f"epsilon={epsilon!r} is too small to separate the two outputs on a 2**{bits} grid")
    scale = 1 << (53 - bits)
    return BinaryPlan(t_lo=t_lo * scale, t_hi=t_hi * scale)


@dataclass(frozen=True)
class WindowPlan:
    """Plan of the window-on-a-grid randomizer (Piecewise, Square Wave and the General Wave family).

    ``n_cells`` output cells; a window of ``m`` consecutive cells starting at ``s ∈ {0..n_cells-m}``.
    The value's unit position ``u`` is randomly rounded to ``s`` (``E[s] = u (n_cells - m)``); then the
    output is a window cell with probability ``t_in / 2**53``, else a uniform cell outside the window.

    Inside the window the cell is uniform (``cum is None``: the box of Piecewise and Square Wave, drawn
    with a 48-bit uniform choice) or follows a *shape*: offset ``k`` has probability
    ``(cum[k+1] - cum[k]) / 2**53`` (drawn by inverting the cumulative table with a 53-bit word).
    Uniform choices use 48-bit draws, so their cell probabilities differ from exactly uniform by at most
    ``m / 2**48`` relatively; :meth:`exact_probabilities` accounts for that exactly.
    """

    n_cells: int
    m: int
    t_in: int
    cum: tuple | None = None
    words_per_record: int = 3

    @property
    def n_positions(self) -> int:
        """Number of window offsets: ``n_cells - m``."""
        return self.n_cells - self.m

    def in_counts(self) -> tuple[list[int], int]:
        """Integer weight of each window offset: 48-bit uniform counts (box) or 53-bit shape counts."""
        if self.cum is None:
            return [uniform_count(k, self.m) for k in range(self.m)], TWO48
        return [self.cum[k + 1] - self.cum[k] for k in range(self.m)], TWO53

    def in_probabilities(self) -> list[float]:
        """Probability of each window offset given that the output falls in the window (floats)."""
        counts, total = self.in_counts()
        return [c / total for c in counts]

    def exact_probabilities(self, s: int) -> dict[int, Fraction]:
        """``{cell: Fraction}`` for the window starting at cell ``s`` (exact; O(n_cells))."""
        n, m = self.n_cells, self.m
        p_in = Fraction(self.t_in, TWO53)
        counts, total = self.in_counts()
        out = {}
        for j in range(n):
            if s <= j < s + m:
                out[j] = p_in * Fraction(counts[j - s], total)
            else:
                k = j if j < s else j - m
                out[j] = (1 - p_in) * Fraction(uniform_count(k, n - m), TWO48)
        return out

    def extreme_ratio(self) -> Fraction:
        """Largest ratio ``P[j | s] / P[j | s']`` over all cells and window starts, exactly.

        A cell is either inside the window (probability ``p_in · c/total`` with ``c`` the count of its
        offset) or outside (``(1 - p_in) · c'/2**48``, ``c'`` a uniform count of ``n_cells - m``), and every
        combination is reachable by moving the window, so the extremes of the counts give the exact maximum.
        """
        p_in = Fraction(self.t_in, TWO53)
        counts, total = self.in_counts()
        out_lo, out_hi = uniform_extremes(self.n_cells - self.m)
        values = [p_in * Fraction(min(counts), total), p_in * Fraction(max(counts), total),
                  (1 - p_in) * Fraction(out_lo, TWO48), (1 - p_in) * Fraction(out_hi, TWO48)]
        return max(values) / min(values)


#: Window grids (:func:`grid_size`): the fewest cells a default window holds, the default number of cells,
#: and the most cells a grid has.
MIN_WINDOW_CELLS = 16
DEFAULT_CELLS = 1024
MAX_CELLS = 2**16


def grid_size(window_fraction: float, n_cells: int | None = None) -> tuple[int, int]:
    """Number of cells and window width for a window covering ``window_fraction`` of the output grid.

    Default: 1024 cells, doubled until the window holds ``MIN_WINDOW_CELLS`` cells, capped at 2**16.
    """
    if n_cells is None:
        n_cells = DEFAULT_CELLS
        while round(n_cells * window_fraction) < MIN_WINDOW_CELLS and n_cells < MAX_CELLS:
            n_cells *= 2
    else:
        n_cells = check_scalar(n_cells, "n_cells", int, low=4, high=MAX_CELLS)
    m = min(max(1, round(n_cells * window_fraction)), n_cells - 1)
    return n_cells, m


def shape_counts(weights: Sequence[float] | NDArray[np.float64]) -> list[int]:
    """Quantize positive window weights to integer counts summing to exactly 2**53 (largest remainders)."""
    w = [Fraction(x) for x in weights]
    total = sum(w)
    exact = [x * TWO53 / total for x in w]
    counts = [math.floor(x) for x in exact]
    rest = TWO53 - sum(counts)
    order = sorted(range(len(w)), key=lambda k: exact[k] - counts[k], reverse=True)
    for k in order[:rest]:
        counts[k] += 1
    return counts


def window_plan(epsilon: float, n_cells: int, m: int,
                weights: Sequence[float] | NDArray[np.float64] | None = None) -> WindowPlan:
    """Plan of the window randomizer with the largest ``t_in`` such that every ratio is ≤ E < e^ε.

    ``weights`` (``m`` positive numbers, the shape of the wave inside the window relative to the cells
    outside, each in [1, e^ε)) gives a shaped window; ``None`` gives the box.
    """
    if not (1 <= m < n_cells <= 2**16):
        raise ValueError(f"need 1 <= m < n_cells <= 65536; got m={m}, n_cells={n_cells}")
    e = exp_lower(epsilon)
    out_min = uniform_extremes(n_cells - m)[0]
    if weights is None:
        in_max = uniform_extremes(m)[1]
        # t_in · in_max / 2**48 <= E · (2**53 - t_in) · out_min / 2**48
        t_in = math.floor(e * out_min * TWO53 / (in_max + e * out_min))
        return WindowPlan(n_cells=n_cells, m=m, t_in=t_in)
    if len(weights) != m:
        raise ValueError(f"need {m} window weights; got {len(weights)}")
    counts = shape_counts(weights)
    if min(counts) <= 0:
        raise ValueError("window weights must be positive")
    cum = [0]
    for c in counts:
        cum.append(cum[-1] + c)
    # t_in · c_max / 2**53 <= E · (2**53 - t_in) · out_min / 2**48   (2**53 / 2**48 = 32)
    t_in = math.floor(e * out_min * 32 * TWO53 / (max(counts) + e * out_min * 32))
    plan = WindowPlan(n_cells=n_cells, m=m, t_in=t_in, cum=tuple(cum))
    if plan.extreme_ratio() > e:
        raise ValueError(f"window weights span more than e^epsilon (max/min = {max(weights) / min(weights):.6g}); "
                         "they must lie in [1, e^epsilon)")
    return plan


def window_estimates(plan: WindowPlan, in_probs: Any = None) -> tuple[NDArray[np.float64], float]:
    """Unbiased estimate, on the unit scale, of the value behind a report in each cell of a window plan, and P_in.

    In centred cell coordinates ``c_j = j + 1/2 - n/2`` the expected output given window start ``s`` is
    ``κ (s - P/2) + δ`` with ``P = n - m``, ``κ = P_in - P_out m / P`` and
    ``δ = P_in (μ + 1/2 - m/2)``, ``μ`` the mean window offset (``(m - 1)/2`` for symmetric shapes).
    Since ``E[s] = u P``, ``û = ((c_j - δ)/κ + P/2) / P`` is unbiased. ``in_probs`` (the plan's
    :meth:`WindowPlan.in_probabilities` as a float array) may be passed to save recomputing it.
    """
    if in_probs is None:
        in_probs = np.array(plan.in_probabilities(), dtype=np.float64)
    n, m = plan.n_cells, plan.m
    positions = n - m
    p_in = plan.t_in / TWO53
    kappa = p_in - (1 - p_in) * m / positions
    mu = float(np.arange(m) @ in_probs)
    delta = p_in * (mu + 0.5 - m / 2)
    centred = np.arange(n) + 0.5 - n / 2
    u_hat = ((centred - delta) / kappa + positions / 2) / positions
    return u_hat, p_in


def lie_shift(epsilon: float, k: int) -> int:
    """``b``: each lie block has ``2**b`` cells, as many as keep ``G = a_keep + (k-1)·2**b`` below ``2**63``."""
    return 63 - (math.ceil(math.exp(epsilon)) + k - 1).bit_length()


def _keep_cells_ok(a, k, b, e):
    total = a + ((k - 1) << b)
    d = TWO64 << b
    lie_lo, lie_hi = d // total, -(-d // total)
    return cell_count(0, a, total) <= e * lie_lo and lie_hi <= e * lie_lo


def _admissible(epsilon, k):
    b = lie_shift(epsilon, k)
    return _keep_cells_ok(1 << b, k, b, exp_lower(epsilon))


def _smallest_epsilon(k):
    """The smallest ε (to 1%) whose GRR plan exists for ``k`` categories (for the message of a refusal)."""
    lo, hi = 1e-20, 1e-9  # lo refused, hi admissible, for every k GRR takes
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if _admissible(mid, k) else (mid, hi)
    return hi


# Memoized: a plan is a pure function of ``(epsilon, k)``, and its bisection compares Fractions (about 1 ms);
# a hierarchical histogram's constructor asks for it about 40 times (its levels, and every branching it
# weighs), so building one took 40-80 ms, 1.6-2.7 ms with the cache.
@lru_cache(maxsize=1024)
def grr_keep_cells(epsilon: float, k: int) -> tuple[int, int]:
    """``(a_keep, b)``: the largest ``a_keep`` keeping every likelihood ratio of GRR's one-word plan ≤ E < e^ε.

    Lies come in blocks of ``2**b`` cells (:func:`lie_shift`).

    Every lie block has ``floor(d)`` or ``ceil(d)`` words, ``d = 2**(64+b) / G``; the keep run has
    ``cell_count(0, a_keep, G)``. The ratio of the keep run to the smallest possible lie block grows with
    ``a_keep``, so the largest admissible ``a_keep`` below ``E·2**b`` is found by bisection.
    """
    e = exp_lower(epsilon)
    b = lie_shift(epsilon, k)
    lo, hi = 1 << b, math.floor(e * (1 << b))  # invariant: lo admissible, hi + 1 not
    if not _keep_cells_ok(lo, k, b, e):
        least = _smallest_epsilon(k)
        raise ValueError(f"epsilon={epsilon!r} is too small for GRR with k={k}: its exact plan draws from 64-bit "
                         f"words, which cannot express a likelihood ratio this close to 1; the smallest epsilon it "
                         f"takes is about {least:.2g} (any epsilon in [{least:.2g}, 20] works)")
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _keep_cells_ok(mid, k, b, e):
            lo = mid
        else:
            hi = mid - 1
    return lo, b


class GRRPlan:
    """Integer plan of GRR from one word: ``a_keep`` keep cells and ``k - 1`` lie blocks of ``2**shift`` cells.

    The word picks one of ``total = a_keep + (k - 1)·2**shift`` cells (``floor(word · total / 2**64)``); see
    :mod:`ldpnum.frequency.grr` for the plan and :func:`grr_keep_cells` for ``a_keep`` and ``shift``. Shared by
    every oracle whose last step is GRR (GRR, BLH/OLH, PEM/TreeHist, padding-and-sampling, SQKR).
    """

    words_per_record = 1

    def __init__(self, k, a_keep, shift):
        self.k = k
        self.a_keep = a_keep
        self.shift = shift
        self.total = a_keep + ((k - 1) << shift)
        if not (0 < a_keep and self.total < TWO64):
            raise ValueError(f"GRR plan out of range: a_keep={a_keep}, shift={shift}, k={k}")
        self._lie_counts = None

    def __eq__(self, other):
        return isinstance(other, GRRPlan) and (self.k, self.a_keep, self.shift) == (
            other.k, other.a_keep, other.shift)

    def __repr__(self):
        return f"GRRPlan(k={self.k}, a_keep={self.a_keep}, shift={self.shift})"

    def keep_count(self) -> int:
        """Words (of 2**64) that keep the true category."""
        return cell_count(0, self.a_keep, self.total)

    def lie_counts(self) -> list[int]:
        """Words (of 2**64) of each lie index ``0..k-2`` (index ``j`` reports the ``j``-th other category)."""
        if self._lie_counts is None:
            a, t, b = self.a_keep, self.total, self.shift
            self._lie_counts = [cell_count(a + (j << b), a + ((j + 1) << b), t) for j in range(self.k - 1)]
        return self._lie_counts

    def exact_probabilities(self, v: int) -> dict[int, Fraction]:
        """``{code: Fraction}`` for true category ``v`` (``-1``: an unknown value, reported uniformly)."""
        k = self.k
        if v < 0:
            return {j: Fraction(cell_count(j, j + 1, k), TWO64) for j in range(k)}
        out = {v: Fraction(self.keep_count(), TWO64)}
        lies = self.lie_counts()
        for j in range(k):
            if j != v:
                out[j] = Fraction(lies[j if j < v else j - 1], TWO64)
        return out

    def extreme_ratio(self) -> Fraction:
        """Exact largest ratio over all pairs of true categories and outputs.

        An output is kept (the keep count) or a lie of index ``j`` or ``j - 1``, so the extremes of the counts give the
        maximum.
        """
        counts = [self.keep_count()] + self.lie_counts()
        return Fraction(max(counts), min(counts))


@lru_cache(maxsize=64)
def _pick_counts(m):
    """``uniform_count(t, m)`` for every cell ``t`` of a 48-bit uniform choice among ``m``."""
    return tuple(uniform_count(t, m) for t in range(m))


def floyd_weights(n: int, r: int, target: Any = None) -> dict[int, int]:
    """Floyd's algorithm for an ``r``-subset of ``0..n-1`` with the kernel's 48-bit picks, exactly.

    Returns ``{bitmask of indices: weight}``, the probability of each subset being ``weight / 2**(48 r)``:
    dynamic programming over the partial subsets after each pick, summing ``∏ uniform_count(t_i, m_i)`` over
    the draw sequences that lead to them. With ``target`` (a bitmask), only partial subsets of ``target`` are
    kept, which is all that can lead to it (subsets only grow).
    """
    states = {0: 1}
    for j in range(n - r, n):
        counts = _pick_counts(j + 1)
        nxt: dict[int, int] = {}
        for s, w in states.items():
            for t, c in enumerate(counts):
                add = 1 << j if s >> t & 1 else 1 << t
                key = s | add
                if target is None or key & ~target == 0:
                    nxt[key] = nxt.get(key, 0) + w * c
        states = nxt
    return states


@lru_cache(maxsize=32)
def floyd_distribution(n: int, r: int) -> dict[int, Fraction]:
    """``{bitmask of indices: Fraction}``: the exact output distribution of the kernel's Floyd sampler."""
    scale = TWO48 ** r
    return {s: Fraction(w, scale) for s, w in floyd_weights(n, r).items()}


#: Most subsets a kernel draws by their rank from one 64-bit word, looked up in a table of them all (≤ 512 KiB of
#: codes; each subset's probability within a relative 2**-48 of uniform).
RANK_SUBSETS = 1 << 16


@lru_cache(maxsize=32)
def subsets_by_rank(n: int, r: int) -> tuple[tuple[int, ...], ...]:
    """Every ``r``-subset of ``0..n-1``, increasing, in lexicographic order: the subset of rank ``j`` is entry ``j``.

    At most :data:`RANK_SUBSETS` of them (``C(n, r)``).
    """
    m = math.comb(n, r)
    if m > RANK_SUBSETS:
        raise ValueError(f"C({n}, {r}) = {m} subsets: more than the {RANK_SUBSETS} drawn by rank")
    return tuple(itertools.combinations(range(n), r))


@lru_cache(maxsize=32)
def rank_distribution(n: int, r: int) -> dict[int, Fraction]:
    """``{bitmask of indices: Fraction}``: the exact distribution of the kernels' ``r``-subset by rank.

    The rank is ``floor(w·C(n, r)/2**64)`` of one uniform 64-bit word ``w`` (``mulhi64``), the subset entry
    ``rank`` of :func:`subsets_by_rank`: subset ``j`` has probability :func:`uniform_count64` ``(j, C(n, r)) /
    2**64``, within a relative ``C(n, r)/2**64 ≤ 2**-48`` of uniform.
    """
    subsets = subsets_by_rank(n, r)
    m = len(subsets)
    return {sum(1 << c for c in s): Fraction(uniform_count64(j, m), TWO64) for j, s in enumerate(subsets)}
