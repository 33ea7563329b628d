"""Exact integer plans: the thresholds kernels compare words against (DESIGN.md R1, TESTING.md D2).

Every probability a kernel realizes is a ratio of integers fixed here, in Python integers and
``fractions.Fraction``. Thresholds are rounded *conservatively* against a rigorous lower bound of e^ε,

    E = Fraction(math.exp(ε)) · (1 - 2**-50)

(``math.exp`` is accurate to a couple of ulps, far inside 2**-50), so the realized privacy loss never exceeds
the stated ε, while staying within about 2**-50 of it (the guarantee is tight).
"""

import math
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["TWO48", "TWO53", "TWO64", "cell_count", "exp_lower", "binary_plan", "window_plan", "BinaryPlan",
           "WindowPlan", "uniform_count"]

TWO53 = 2**53
TWO48 = 2**48
TWO64 = 2**64


def exp_lower(epsilon):
    """A rigorous lower bound of ``exp(epsilon)`` as a Fraction, within a relative 2**-49 of it."""
    return Fraction(math.exp(epsilon)) * (1 - Fraction(1, 2**50))


def uniform_count(j, m):
    """How many of the 2**48 draws the kernels' uniform choice maps to cell ``j`` of ``m``."""
    return -((-(j + 1) * TWO48) // m) + ((-j * TWO48) // m)


def cell_count(s, e, total):
    """How many of the 2**64 words the kernels' ``floor(word · total / 2**64)`` (``mulhi64``) maps into cells
    ``[s, e)`` of ``total``: ``ceil(e·2**64/total) - ceil(s·2**64/total)``."""
    return -((-e * TWO64) // total) + ((-s * TWO64) // total)


def uniform_extremes(m):
    """Smallest and largest :func:`uniform_count` over the ``m`` cells."""
    lo = TWO48 // m
    return (lo, lo) if TWO48 % m == 0 else (lo, lo + 1)


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

    def probability_one(self, threshold):
        """Exact probability of code 1 under a kernel threshold."""
        return Fraction(int(threshold), TWO53)

    def exact_probabilities(self, threshold):
        """``{code: Fraction}`` for a kernel threshold."""
        p1 = self.probability_one(threshold)
        return {0: 1 - p1, 1: p1}


def binary_plan(epsilon):
    """Thresholds of the ε-LDP two-output randomizer (Warner's randomized response when u ∈ {0, 1})."""
    e = exp_lower(epsilon)
    t_lo = math.ceil(Fraction(TWO53) / (1 + e))
    t_hi = TWO53 - t_lo
    if not 0 < t_lo < t_hi < TWO53:
        raise ValueError(f"epsilon={epsilon!r} is too small to separate the two outputs on a 2**53 grid")
    return BinaryPlan(t_lo=t_lo, t_hi=t_hi)


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
    def n_positions(self):
        return self.n_cells - self.m

    def in_counts(self):
        """Integer weight of each window offset: 48-bit uniform counts (box) or 53-bit shape counts."""
        if self.cum is None:
            return [uniform_count(k, self.m) for k in range(self.m)], TWO48
        return [self.cum[k + 1] - self.cum[k] for k in range(self.m)], TWO53

    def in_probabilities(self):
        """Probability of each window offset given that the output falls in the window (floats)."""
        counts, total = self.in_counts()
        return [c / total for c in counts]

    def exact_probabilities(self, s):
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

    def extreme_ratio(self):
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


def shape_counts(weights):
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


def window_plan(epsilon, n_cells, m, weights=None):
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
