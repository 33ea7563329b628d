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

__all__ = ["TWO48", "TWO53", "exp_lower", "binary_plan", "window_plan", "BinaryPlan", "WindowPlan",
           "uniform_count"]

TWO53 = 2**53
TWO48 = 2**48


def exp_lower(epsilon):
    """A rigorous lower bound of ``exp(epsilon)`` as a Fraction, within a relative 2**-49 of it."""
    return Fraction(math.exp(epsilon)) * (1 - Fraction(1, 2**50))


def uniform_count(j, m):
    """How many of the 2**48 draws the kernels' uniform choice maps to cell ``j`` of ``m``."""
    return -((-(j + 1) * TWO48) // m) + ((-j * TWO48) // m)


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
    """Plan of the window-on-a-grid randomizer (Piecewise, and the Square Wave family).

    ``n_cells`` output cells; a window of ``m`` consecutive cells starting at ``s ∈ {0..n_cells-m}``.
    The value's unit position ``u`` is randomly rounded to ``s`` (``E[s] = u (n_cells - m)``); then the
    output is a uniform window cell with probability ``t_in / 2**53``, else a uniform cell outside the window.
    Uniform choices use 48-bit draws, so cell probabilities differ from exactly uniform by at most
    ``m / 2**48`` relatively; :meth:`exact_probabilities` accounts for that exactly.
    """

    n_cells: int
    m: int
    t_in: int
    words_per_record: int = 3

    @property
    def n_positions(self):
        return self.n_cells - self.m

    def exact_probabilities(self, s):
        """``{cell: Fraction}`` for the window starting at cell ``s`` (exact; O(n_cells))."""
        n, m = self.n_cells, self.m
        p_in = Fraction(self.t_in, TWO53)
        out = {}
        for j in range(n):
            if s <= j < s + m:
                out[j] = p_in * Fraction(uniform_count(j - s, m), TWO48)
            else:
                k = j if j < s else j - m
                out[j] = (1 - p_in) * Fraction(uniform_count(k, n - m), TWO48)
        return out

    def extreme_ratio(self):
        """Largest ratio ``P[j | s] / P[j | s']`` over all cells and window starts, exactly.

        A cell is either inside the window (probability ``p_in · c/2**48`` with ``c`` a uniform count of
        ``m``) or outside (``(1 - p_in) · c'/2**48``, ``c'`` a count of ``n_cells - m``), and every in/out
        combination is reachable by moving the window, so the extremes of the counts give the exact maximum.
        """
        p_in = Fraction(self.t_in, TWO53)
        in_lo, in_hi = uniform_extremes(self.m)
        out_lo, out_hi = uniform_extremes(self.n_cells - self.m)
        ins = (p_in * in_lo, p_in * in_hi)
        outs = ((1 - p_in) * out_lo, (1 - p_in) * out_hi)
        values = [*ins, *outs]
        return max(values) / min(values)


def window_plan(epsilon, n_cells, m):
    """Largest ``t_in`` such that every cell's probability ratio across window positions is ≤ E < e^ε."""
    if not (1 <= m < n_cells <= 2**16):
        raise ValueError(f"need 1 <= m < n_cells <= 65536; got m={m}, n_cells={n_cells}")
    e = exp_lower(epsilon)
    in_max = uniform_extremes(m)[1]
    out_min = uniform_extremes(n_cells - m)[0]
    # t_in · in_max <= E · (2**53 - t_in) · out_min
    t_in = math.floor(e * out_min * TWO53 / (in_max + e * out_min))
    return WindowPlan(n_cells=n_cells, m=m, t_in=t_in)
