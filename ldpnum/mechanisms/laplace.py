r"""The Laplace mean oracle on a finite output alphabet: discrete Laplace noise on a grid (design rule R1, D3).

The textbook local Laplace mechanism reports ``y = x + Lap((high - low)/ε)`` (lecture notes "Local Model of
Differential Privacy", Lecture 20). In floating point that output leaks the input through its representation
(Mironov 2012), so ldpnum reports an integer instead:

1. **Input grid.** ``u = (x - low)/(high - low)`` in [0, 1] is randomly rounded to ``i ∈ {0..G}``
   with ``E[i] = uG`` (one word, the same rounding as the window randomizers). ``G = 256`` cells, halved
   (a power of two, at least 2) while the noise table would exceed 2**18 entries (ε < 0.0783).
2. **Noise.** ``z`` is discrete Laplace on the integers, ``P(z) ∝ R^{-|z|}`` with ``R`` a rational just
   below ``e^{ε/G}`` (``R^G ≤ E ≤ e^ε``): a sensitivity of ``G`` grid cells gives ε-LDP. The report is
   ``y = clamp(i + z, -T, G + T)`` with ``T = ⌈40 G/ε⌉ ≥ 40·scale`` (scale ``G/ε``), sent as the code
   ``y + T ∈ {0..G + 2T}``: one alphabet for every input.
3. **Integer thresholds.** The tail beyond the clamp is ``≈ e^{-40}``, below 2**-53, so ``z`` is drawn from
   *two* words: a 106-bit uniform ``U = (w1 >> 11)·2**53 + (w2 >> 11)`` inverts a cumulative table of
   integer weights ``W(z)``, ``z ∈ [-Z, Z]``, ``Z = G + T``, with ``ΣW = 2**106`` exactly; the kernel
   binary-searches the table's high and low 53-bit halves lexicographically (a fixed number of steps).
   Three words per record, whatever the value.

**Exact ε by construction.** ``R = p/2**64`` is the largest such fraction with ``R^G ≤ E`` (compared
exactly in Fractions, ``E`` = :func:`~ldpnum.plans.exp_lower`). The interior weights are built
from the centre out, ``W(0) = A`` (even), ``W(z + 1) = ⌈W(z)/R⌉`` for ``0 ≤ z < Z - 1``, ``W(-z) = W(z)``,
so every consecutive ratio ``W(z)/W(z + 1) ≤ R`` and every ratio ``W(z)/W(z')`` with ``|z - z'| ≤ G`` is
``≤ R^G ≤ E``. The rest of the mass, ``2**106 - Σ interior``, goes in equal halves to ``W(±Z)``; those two
entries are reached only through the clamp atoms (for every input ``i``, ``i - Z ≤ -T`` and
``i + Z ≥ G + T``, while every ``|z| < Z`` that is not clamped lands on an interior output). The atom
``y = -T`` has probability ``(W(Z) + Σ_{a=T+i}^{Z-1} W(a))/2**106``, largest for ``i = 0`` and smallest for
``i = G``, so its ratio is ``1 + Σ_{a=T}^{Z-1} W(a)/W(Z)``; ``A`` is chosen so that ``W(Z)`` is about twice
the geometric tail beyond ``Z``, which keeps this ratio well below ``E`` (checked exactly when the plan is
built and in the tests). Interior outputs reach the bound: ``W(0)/W(G)`` is within a relative 1e-15 of
``e^ε``.

*Why centre-out with ceilings* (the agreed design built the table from the tail, ``W(Z-1) = B``,
``W(z) = ⌊W(z+1) R⌋``): the interior sum is then a function of ``B`` in steps of about ``2**106/B``, and
the leftover, which lands in the atoms, biases the estimate by up to ``W(Z)/2**106`` of the range. ``B``
is forced by the 2**106 budget to about ``2**106 e^{-40-ε} ε/(2G)``: ``2**38`` at ε = 1 but ``2**15`` at
ε = 20. Measured with the largest ``B`` whose interior sum stays below 2**106, the leftover biased the
estimate by 1.6e-12 of the range at ε = 0.5, 6.1e-11 at ε = 8, 1.6e-7 at ε = 16 and 2.0e-5 at ε = 20
(against a budget of 1e-12); and nothing but the luck of that leftover kept it above the minimum the atom
ratio needs. Starting from the centre, the sum moves in steps of about ``2G/ε`` out of 2**106, so the
atoms get what the atom ratio needs with a factor-two margin (≈ ``e^{-40-ε}`` of the mass) and the bias
is below 5e-18 of the range at every ε.

**Estimator.** A report ``y`` estimates ``low + (y/G)(high - low)``. ``E[y | i] = i`` up to the clamp
(the tails beyond ``±T`` and the atoms' mass); :attr:`LaplacePlan.max_bias` gives the exact
``max_i |E[y|i] - i|`` from the plan, below 1e-14 grid cells for every ε (see :attr:`Laplace.max_bias`).
Input rounding truncates its probability to 2**-53, a bias below ``2**-53 (high - low)/G``.

**Variance.** Per report, ``(high - low)²/G² · (Var z + f(1 - f))`` up to the clamp, where
``Var z = 2R^{-1}/(1 - R^{-1})² ≈ 2G²/ε²`` (the textbook ``2((high - low)/ε)²``) and ``f(1 - f) ≤ 1/4`` is
the input rounding: at most ``(high - low)²/(4G²)``, i.e. a fraction ``ε²/(8G²)`` of the noise variance
(1.9e-6 at ε = 1, 7.6e-4 at ε = 20).

References
----------
Lecture 20, "Local Model of Differential Privacy", course lecture notes (the local Laplace mean estimator
``y_i = x_i + Lap(m/ε)``).
I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
C. L. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020
(discrete Laplace sampling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from itertools import accumulate
from typing import Any

import numpy as np

from .._kernels import client_numeric
from .._typing import ArrayLike, Bounds
from .._kernels._jit import launch
from ..base import MeanOracle
from ..plans import TWO53, exp_lower

__all__ = ["Laplace", "LaplacePlan", "laplace_plan", "build_plan", "grid_cells", "clamp_cells", "MIN_EPSILON"]

TWO106 = 2**106
RATIO_BITS = 64  # R = p / 2**64
DEFAULT_GRID = 256
MAX_TABLE = 2**18
TAIL_SCALES = 40
MASK53 = TWO53 - 1


def clamp_cells(epsilon: float, g: int) -> int:
    """``T = ⌈40 G/ε⌉``, computed exactly from the float ε."""
    return math.ceil(Fraction(TAIL_SCALES * g) / Fraction(epsilon))


def _min_epsilon():
    eps = 2 * TAIL_SCALES / ((MAX_TABLE - 1) // 2 - 2)
    while 2 * (2 + clamp_cells(eps, 2)) + 1 > MAX_TABLE:
        eps = math.nextafter(eps, math.inf)
    return eps


#: Smallest ε whose noise table fits in 2**18 entries with the smallest grid (G = 2): about 6.1e-4.
MIN_EPSILON = _min_epsilon()


def grid_cells(epsilon: float) -> int:
    """Input grid size ``G``: 256, halved while the noise table ``2(G + T) + 1`` exceeds 2**18 entries."""
    g = DEFAULT_GRID
    while 2 * (g + clamp_cells(epsilon, g)) + 1 > MAX_TABLE:
        if g == 2:
            raise ValueError(f"epsilon={epsilon!r} is too small for ldpnum's Laplace mechanism: its noise "
                             f"table would exceed {MAX_TABLE} entries (epsilon must be at least "
                             f"{MIN_EPSILON:.6g}); "
                             "StochasticRounding has half its variance at such epsilon")
        g //= 2
    return g


def _ratio(epsilon, g):
    """Largest ``p`` with ``(p / 2**64)**g <= exp_lower(epsilon)``, exactly."""
    e = exp_lower(epsilon)
    scale = 1 << (RATIO_BITS * g)

    def ok(p):
        return p**g * e.denominator <= e.numerator * scale

    guess = int(Fraction(math.exp(epsilon / g)) * (1 << RATIO_BITS))
    step = 1 << 14
    lo, hi = guess - step, guess + step
    while not ok(lo):
        lo -= step
        step *= 2
    while ok(hi):
        hi += step
        step *= 2
    while hi - lo > 1:  # ok(lo), not ok(hi)
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True, eq=False)
class LaplacePlan:
    """Integer plan of the discrete Laplace randomizer.

    Attributes
    ----------
    epsilon : float
        The ε the plan was built for.
    g : int
        Input grid cells ``G``: inputs are rounded to ``i ∈ {0..G}``.
    t : int
        Clamp margin ``T``: outputs ``y ∈ {-T..G+T}``, codes ``y + T``.
    p, k : int
        The noise ratio ``R = p / 2**k``, ``R^G ≤ E``.
    weights : tuple of int
        ``W(|z|)`` for ``|z| = 0..Z``, ``Z = G + T``; the table is symmetric, ``ΣW = 2**106``.
    table_hi, table_lo : numpy.ndarray of uint64
        The kernel's cumulative table: ``C(j) = Σ_{z ≤ j - Z} W(z) = table_hi[j]·2**53 + table_lo[j]``,
        ``j = 0..2Z``; the noise is ``z = j - Z`` for the smallest ``j`` with ``U < C(j)``.
    """

    epsilon: float
    g: int
    t: int
    p: int
    k: int
    weights: tuple = field(repr=False)
    table_hi: np.ndarray = field(repr=False)
    table_lo: np.ndarray = field(repr=False)
    words_per_record: int = 3

    @classmethod
    def from_weights(cls, epsilon: float, g: int, t: int, p: int, k: int,
                     weights: list[int] | tuple[int, ...]) -> LaplacePlan:
        """A plan (and the kernel's cumulative table) from one-sided weights ``W(0..Z)``; checks nothing."""
        weights = tuple(int(w) for w in weights)
        if len(weights) != g + t + 1:
            raise ValueError(f"need G + T + 1 = {g + t + 1} weights; got {len(weights)}")
        full = weights[:0:-1] + weights
        cum = np.array(list(accumulate(full)), dtype=object)
        hi = (cum >> 53).astype(np.uint64)
        lo = (cum & MASK53).astype(np.uint64)
        hi.flags.writeable = False
        lo.flags.writeable = False
        return cls(epsilon=float(epsilon), g=int(g), t=int(t), p=int(p), k=int(k), weights=weights,
                   table_hi=hi, table_lo=lo)

    # -- shape ----------------------------------------------------------------------------------------
    @property
    def z_max(self) -> int:
        """``Z = G + T``: the noise table covers ``z ∈ [-Z, Z]``."""
        return self.g + self.t

    @property
    def n_cells(self) -> int:
        """Output alphabet size ``G + 2T + 1``."""
        return self.g + 2 * self.t + 1

    @property
    def ratio(self) -> Fraction:
        """``R = p / 2**k`` as a Fraction."""
        return Fraction(self.p, 1 << self.k)

    def weight(self, z: int) -> int:
        """``W(z)`` (zero outside ``[-Z, Z]``)."""
        z = abs(int(z))
        return self.weights[z] if z <= self.z_max else 0

    @cached_property
    def total(self) -> int:
        """``Σ_z W(z)`` over ``[-Z, Z]`` (``2**106`` for a valid plan)."""
        return self.weights[0] + 2 * sum(self.weights[1:])

    def table_values(self) -> list[int]:
        """The kernel's cumulative table as Python ints ``C(0..2Z)``."""
        return [(int(h) << 53) | int(lo) for h, lo in zip(self.table_hi.tolist(), self.table_lo.tolist())]

    # -- exact output distribution ---------------------------------------------------------------------
    def atom_weights(self, i: int) -> tuple[int, int]:
        """Weights (over 2**106) of the two clamp atoms for grid input ``i``: ``(y = -T, y = G + T)``."""
        w, t, z = self.weights, self.t, self.z_max
        low = w[z] + sum(w[t + i:z])
        high = w[z] + sum(w[t + self.g - i:z])
        return low, high

    def exact_weights(self, i: int) -> dict[int, int]:
        """``{code: weight}`` with ``P(code | i) = weight / 2**106``, from the plan's structure (exact)."""
        t, n = self.t, self.n_cells
        lo_atom, hi_atom = self.atom_weights(i)
        out = {0: lo_atom, n - 1: hi_atom}
        for c in range(1, n - 1):
            out[c] = self.weights[abs(c - t - i)]
        return out

    def exact_probabilities(self, i: int) -> dict[int, Fraction]:
        """``{code: Fraction}``: the exact output distribution for grid input ``i ∈ {0..G}``."""
        return {c: Fraction(w, TWO106) for c, w in self.exact_weights(i).items()}

    def probabilities(self, i: int) -> np.ndarray:
        """Output distribution for grid input ``i`` as a float array (each entry correctly rounded)."""
        t, n = self.t, self.n_cells
        y = np.arange(1, n - 1) - t - i
        out = np.empty(n)
        out[1:-1] = self._weights_float[np.abs(y)]
        lo_atom, hi_atom = self.atom_weights(i)
        out[0] = lo_atom / TWO106
        out[-1] = hi_atom / TWO106
        return out

    @cached_property
    def _weights_float(self):
        return np.array([w / TWO106 for w in self.weights])

    # -- structural exact checks ----------------------------------------------------------------------
    def consecutive_ratios_ok(self) -> bool:
        """``W(a + 1) ≤ W(a) ≤ R·W(a + 1)`` and ``W(a) > 0`` for every interior ``0 ≤ a < Z - 1`` (exact)."""
        w, p, k = self.weights, self.p, self.k
        z = self.z_max
        if w[z - 1] <= 0:
            return False
        return all(w[a + 1] <= w[a] and (w[a] << k) <= w[a + 1] * p for a in range(z - 1))

    def window_ratio(self) -> Fraction:
        """Largest ``W(z)/W(z')`` over interior ``|z|, |z'| < Z`` with ``|z - z'| ≤ G``, exactly.

        For interior outputs ``P(y|i)/P(y|i') = W(y - i)/W(y - i')`` with ``|i - i'| ≤ G``. Assumes (and
        :meth:`consecutive_ratios_ok` checks) that ``W`` decreases in ``|z|``, so the largest ratio is
        ``W(a)/W(a + G)`` for some ``0 ≤ a ≤ Z - 1 - G``.
        """
        w, g = self.weights, self.g
        best_n, best_d = w[0], w[g]
        for a in range(1, self.z_max - g):
            n, d = w[a], w[a + g]
            if n * best_d > best_n * d:
                best_n, best_d = n, d
        return Fraction(best_n, best_d)

    def atom_ratio(self) -> Fraction | float:
        """Largest ratio of an atom's probability across all inputs ``i ∈ {0..G}``, exactly.

        Computed from every input's atom weights (not only the extremes ``i = 0, G``); ``inf`` if an atom
        has probability zero for some input and not for another.
        """
        atoms = [self.atom_weights(i) for i in range(self.g + 1)]
        worst = Fraction(1)
        for col in zip(*atoms):
            hi, lo = max(col), min(col)
            if hi == 0:
                continue
            if lo == 0:
                return math.inf
            worst = max(worst, Fraction(hi, lo))
        return worst

    def max_ratio(self) -> Fraction | float:
        """Largest ``P(y|i)/P(y|i')`` over all outputs and grid inputs (structural, exact)."""
        if not self.consecutive_ratios_ok():
            raise ValueError("weights do not decrease geometrically: the structural reduction does not apply")
        return max(self.window_ratio(), self.atom_ratio())

    # -- moments ---------------------------------------------------------------------------------------
    @cached_property
    def _moments(self):
        """Exact ``ΣW·E[y | i]``, ``ΣW·E[y² | i]`` for ``i = 0..G``, and ``Σ z² W(z)`` (Python ints)."""
        w, g, t = self.weights, self.g, self.t
        total = self.total
        second = 2 * sum(a * a * wa for a, wa in enumerate(w))  # Σ z² W(z) over [-Z, Z]; Σ z W(z) = 0
        # suffix sums over a = T+j .. Z of W(a), a W(a), a² W(a), j = 0..G (+1 sentinel)
        s0, s1, s2 = [0] * (g + 2), [0] * (g + 2), [0] * (g + 2)
        for j in range(g, -1, -1):
            a = t + j
            s0[j] = s0[j + 1] + w[a]
            s1[j] = s1[j + 1] + a * w[a]
            s2[j] = s2[j + 1] + a * a * w[a]
        m1, m2 = [], []
        for i in range(g + 1):
            j, jj = i, g - i  # lower clamp: a = -z ≥ T + i; upper clamp: a = z ≥ T + (G - i)
            # Σ W (clamp - (i+z)) over clamped z: lower (-T) - (i - a); upper (G+T) - (i + a)
            low1 = s1[j] - (t + i) * s0[j]
            up1 = (g + t - i) * s0[jj] - s1[jj]
            m1.append(i * total + low1 + up1)
            # Σ W (clamp² - (i+z)²)
            low2 = t * t * s0[j] - (s2[j] - 2 * i * s1[j] + i * i * s0[j])
            up2 = (g + t) ** 2 * s0[jj] - (s2[jj] + 2 * i * s1[jj] + i * i * s0[jj])
            m2.append(i * i * total + second + low2 + up2)
        return m1, m2, second

    def exact_mean(self, i: int) -> Fraction:
        """``E[y | i]`` as a Fraction (grid cells)."""
        return Fraction(self._moments[0][i], self.total)

    def exact_second_moment(self, i: int) -> Fraction:
        """``E[y² | i]`` as a Fraction."""
        return Fraction(self._moments[1][i], self.total)

    @cached_property
    def mean_table(self) -> np.ndarray:
        """``E[y | i]`` for ``i = 0..G`` as floats."""
        return np.array([float(self.exact_mean(i)) for i in range(self.g + 1)])

    @cached_property
    def second_moment_table(self) -> np.ndarray:
        """``E[y² | i]`` for ``i = 0..G`` as floats."""
        return np.array([float(self.exact_second_moment(i)) for i in range(self.g + 1)])

    @cached_property
    def max_bias(self) -> float:
        """``max_i |E[y | i] - i|`` in grid cells, computed exactly and returned as a float."""
        return float(max(abs(self.exact_mean(i) - i) for i in range(self.g + 1)))

    @cached_property
    def noise_variance(self) -> float:
        """``Var z = Σ z² W(z) / 2**106`` (unclamped), as a float."""
        return float(Fraction(self._moments[2], self.total))


def _one_sided(a, z, p, k):
    """``W(0) = a``, ``W(j + 1) = ⌈W(j)·2**k / p⌉`` for ``j = 0..z-2``: the interior weights ``W(0..Z-1)``."""
    out = [a]
    w = a
    for _ in range(z - 1):
        w = -((-w << k) // p)
        out.append(w)
    return out


def laplace_plan(epsilon: float, g: int | None = None) -> LaplacePlan:
    """Build the exact plan of the discrete Laplace randomizer for ``epsilon`` (and grid ``g``).

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20] (at least :data:`MIN_EPSILON`).
    g : int, optional
        Input grid cells (a power of two ≥ 2). Default :func:`grid_cells`; smaller grids exist for tests.

    Returns
    -------
    LaplacePlan

    Raises
    ------
    ValueError
        If ε is too small for the table.
    """
    if g is None:
        g = grid_cells(epsilon)
    return build_plan(epsilon, g, clamp_cells(epsilon, g), _ratio(epsilon, g))


def build_plan(epsilon: float, g: int, t: int, p: int, k: int = RATIO_BITS) -> LaplacePlan:
    """The plan for given ``G``, ``T`` and noise ratio ``R = p/2**k`` (``laplace_plan`` picks them).

    ``W(0) = A`` (even) is computed so that the interior sum leaves room for two atoms of about twice the
    geometric tail beyond ``Z``; the atoms then get the rest, exactly ``2**106 - Σ interior``. Raises
    ValueError unless the atoms satisfy ``W(Z)·(E - 1) ≥ Σ_{a=T}^{Z-1} W(a)`` (the atom ratio bound), which
    the margin ensures. Does not check ``R^G ≤ E``: tests use it to build planted bugs.
    """
    z = g + t
    e = exp_lower(epsilon)
    one = 1 << k
    r = one / p
    one_minus_r = (p - one) / p
    r_z = math.exp(-z * math.log1p((p - one) / one))  # r^Z ≈ e^{-40-ε}
    # Interior sum ≈ A (1 + r)/(1 - r) - 2 A r^Z/(1 - r) + (ceiling excess ≤ 2Z/(1 - r)): truncating at Z
    # frees one geometric tail A r^Z/(1 - r) ≈ 2**106 r^Z/(1 + r) per side; the margin frees one more, so
    # each atom gets about twice the tail (the atom ratio needs about one), plus the unused ceiling room.
    margin = 2 * r_z / (1 + r)
    for _ in range(8):
        room = TWO106 - math.ceil(TWO106 * margin) - math.ceil(4 * z / one_minus_r) - 4
        a = (room * (p - one)) // (p + one)
        a -= a % 2  # an even centre makes the slack even, so the two atoms are equal
        w = _one_sided(a, z, p, k)
        slack = TWO106 - (w[0] + 2 * sum(w[1:]))
        atom = slack // 2
        if slack >= 0 and slack % 2 == 0 and atom > 0 and atom * (e - 1) >= sum(w[t:z]):
            return LaplacePlan.from_weights(epsilon, g, t, p, k, w + [atom])
        margin *= 4
    raise ValueError(f"could not build a Laplace plan for epsilon={epsilon!r}")  # pragma: no cover


class Laplace(MeanOracle):
    r"""The Laplace local mean oracle as a finite-output mechanism: discrete Laplace noise on a grid.

    A value ``x`` in ``[low, high]`` is randomly rounded to ``i ∈ {0..G}``
    (``E[i] = G(x - low)/(high - low)``), then reported as ``y = clamp(i + z, -T, G + T)`` with
    ``P(z) ∝ R^{-|z|}``, ``R ≈ e^{ε/G}``: the textbook ``y = x + Lap((high - low)/ε)`` on a grid of ``G``
    cells, without its float leak. The mean is estimated by the mean of ``low + (y/G)(high - low)``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20], at least ``MIN_EPSILON`` ≈ 6.1e-4 (smaller ε would need a noise
        table above 2**18 entries; at such ε :class:`StochasticRounding` has half the variance anyway).
    bounds : (float, float)
        Public range of the values.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing.
    Noise weights are integers over 2**106 (two 53-bit words per draw, three words per record with the
    input rounding) built so that every ratio of output probabilities is at most a rigorous lower bound
    of ``e^ε``, and reaches it to within 1e-15 (see :mod:`ldpnum.mechanisms.laplace` and
    :class:`LaplacePlan`).

    ``G = 256`` input cells (fewer for ε < 0.0783), ``T = ⌈40G/ε⌉`` so the clamp touches a fraction
    ``≈ e^{-40}`` of the noise; the alphabet has ``G + 2T + 1`` codes (20,737 at ε = 1). The estimate is
    unbiased up to the clamp, :attr:`max_bias` (below 5e-18 of the range at every ε; exact, from the plan).
    Per-report variance ``≈ 2((high - low)/ε)² + (high - low)² f(1 - f)/G²`` where ``f`` is the
    rounding's fractional part; the second term is at most ``ε²/(8G²)`` of the first.
    :meth:`variance` is exact for the plan.

    References
    ----------
    Lecture 20, "Local Model of Differential Privacy", course lecture notes (the local Laplace mean
    estimator).
    I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.Laplace(epsilon=2.0, bounds=(0, 100))
    >>> x = np.random.default_rng(0).uniform(0, 100, 100_000)
    >>> r = m.privatize(x, rng=1)
    >>> r.codes.dtype, m.n_cells
    (dtype('uint16'), 10497)
    >>> est = m.estimate_mean(r)
    >>> bool(abs(est.value - x.mean()) < 4 * est.standard_error)
    True
    >>> bool(m.max_bias < 1e-12 * 100)
    True
    """

    name = "laplace"

    def __init__(self, epsilon: float, bounds: Bounds) -> None:
        super().__init__(epsilon, bounds)
        self._plan = laplace_plan(self._epsilon)
        low, high = self._bounds
        self._inv_range = 1.0 / (high - low)

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: reports are codes ``0..n_cells-1``."""
        return self._plan.n_cells

    @property
    def grid(self) -> int:
        """Input grid cells ``G``."""
        return self._plan.g

    def _run_kernel(self, values, words, out):
        p = self._plan
        launch(client_numeric.laplace_kernel, values, self._bounds[0], self._inv_range, p.g, p.t, p.table_hi,
               p.table_lo, words, out)

    def rounding(self, x: ArrayLike) -> tuple[Any, Any]:
        """The kernel's own input rounding: base grid cell and threshold (over 2**53) for rounding up."""
        values = self.prepare_values(x)
        s0 = np.empty(values.shape[0], dtype=np.int64)
        t_up = np.empty(values.shape[0], dtype=np.int64)
        launch(client_numeric.window_rounding, values, self._bounds[0], self._inv_range, self._plan.g, s0, t_up)
        return s0, t_up

    def output_probabilities(self, x: float) -> np.ndarray:
        """Probability of each output code for a value ``x`` (from the kernel's own rounding threshold)."""
        s0, t_up = self.rounding(np.asarray([x], dtype=np.float64))
        s0, f = int(s0[0]), float(t_up[0]) / TWO53
        out = (1.0 - f) * self._plan.probabilities(s0)
        if f > 0:
            out += f * self._plan.probabilities(min(s0 + 1, self._plan.g))
        return out

    @property
    def labels(self) -> np.ndarray:
        """Value of each code in data units: ``low + (y/G)(high - low)``, ``y = code - T``."""
        p = self._plan
        low, high = self._bounds
        y = np.arange(p.n_cells, dtype=np.float64) - p.t
        return low + (y / p.g) * (high - low)

    @property
    def code_estimates(self) -> np.ndarray:
        """Unbiased estimate of the value carried by each output code, in data units."""
        return self.labels

    @property
    def max_bias(self) -> float:
        """Largest ``|E[estimate | x] - x|`` over grid inputs, in data units (exact from the plan; a float).

        Only the clamp causes it; input rounding adds less than ``2**-53 (high - low)/G``.
        """
        low, high = self._bounds
        return self._plan.max_bias * (high - low) / self._plan.g

    def _second_moment(self, x):
        p = self._plan
        low, high = self._bounds
        h = (high - low) / p.g
        pos = (x - low) / (high - low) * p.g
        i0 = np.minimum(np.floor(pos), p.g).astype(np.int64)
        f = pos - i0
        i1 = np.minimum(i0 + 1, p.g)
        m1, m2 = p.mean_table, p.second_moment_table

        def moment(i):
            return low * low + 2 * low * h * m1[i] + h * h * m2[i]

        return (1 - f) * moment(i0) + f * moment(i1)

    @property
    def worst_case_variance(self) -> float:
        """Largest per-report variance, over the grid points and the midpoints between them."""
        low, high = self._bounds
        grid = np.linspace(low, high, 2 * self._plan.g + 1)
        return float(np.max(self.variance(grid)))
