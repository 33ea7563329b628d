r"""Duchi et al.'s multidimensional mechanism for vectors in a box (the ℓ∞ ball): one report of ``d`` signs.

Each coordinate ``x_j`` in ``[low_j, high_j]`` is mapped to ``t_j = 2 (x_j - low_j)/(high_j - low_j) - 1`` in
``[-1, 1]``. A person

1. rounds ``t`` to a sign vector ``v ∈ {±1}^d`` unbiasedly, coordinates independent: ``P[v_j = +1] =
   (1 + t_j)/2``;
2. draws ``a`` uniformly from ``{±1}^d``; if ``Σ_j a_j ≠ 0`` it puts ``a`` on the side ``⟨a, 1⟩ > 0`` with
   probability ``π = e^ε/(e^ε + 1)`` and on the side ``< 0`` otherwise (each side uniformly); a tie
   ``Σ_j a_j = 0`` (possible for even ``d``) is kept as drawn;
3. reports ``z = v ⊙ a``: ``z`` is uniform on the half-cube ``{z : ⟨z, v⟩ > 0}`` with probability ``π``, else
   on ``{z : ⟨z, v⟩ < 0}``, and a ``z`` orthogonal to ``v`` has probability ``2^-d``.

So ``P[z | v]`` is ``2π/2^d``, ``2^-d`` or ``2(1 - π)/2^d`` depending only on the sign of ``⟨z, v⟩``, and
``P[z | x] = Σ_v P[v | x] P[z | v]`` lies between the extremes: the ratio over any two inputs is at most
``π/(1 - π) = e^ε`` (reached at the corners of the box), which is exactly ε-LDP.

Decoding. By symmetry ``E[z | v] = (2π - 1) v / C_d`` with

.. math:: C_d = \frac{2^{d-1}}{\binom{d-1}{\lfloor (d-1)/2 \rfloor}},

so ``B z`` with ``B = C_d / (2π - 1) = C_d (e^ε + 1)/(e^ε - 1)`` is an unbiased estimate of ``t``, with per-
coordinate variance ``B² - t_j²``. For odd ``d`` no report is orthogonal to ``v`` and this is the paper's
``B``. For even ``d``, restatements of the sampler put the orthogonal reports into one half-cube (``⟨z, v⟩ ≤ 0``)
or into both; then some report is more likely under one input than under another by ``e^ε |T-|/|T+|`` or
``e^ε + 1``, more than ``e^ε`` (``|T±|`` the sizes of the two halves), so neither is ε-LDP (the tests check
both). Splitting them evenly, as here, keeps the ratio at ``e^ε``, and the formula for ``C_d`` above holds
for every ``d`` (exact unbiasedness is tested in rationals).

Integer plan. ``π = t_hi/2**53`` and ``1 - π = t_lo/2**53`` are the thresholds of the two-output
randomizer (``t_hi/t_lo ≤ e^ε``, rounded conservatively); ``v_j = +1`` has probability ``floor(u_j 2**53)/2**53``
(``u_j = (1 + t_j)/2``, so the rounding moves the mean by less than ``(high_j - low_j) 2**-53``); ``a`` is made of
uniform bits. Every report's probability is a ratio of integers (:meth:`DuchiMultivariatePlan.exact_probabilities`).

Reports are bit-packed (``packed_bits = d``): bit ``j`` of a report is set when ``z_j = +B``; the aggregate
counts, per coordinate, the reports with that bit set (``d`` counts and the number of reports), so it is
O(d) whatever the number of people.

References
----------
J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally private estimation",
JASA 113(521), 2018 (the ℓ∞ sampling strategy and its constant). N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui,
H. Shin, J. Shin, G. Yu, "Collecting and Analyzing Multidimensional Data with Local Differential Privacy",
ICDE 2019 (Duchi et al.'s solution for multidimensional numeric data, restated as its Algorithm 3).
"""

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._kernels import client_vector
from .._kernels._jit import launch
from .._typing import ArrayLike, FloatArray
from ..aggregate import Aggregate, support_counts
from ..frequency.unary import count_bits
from ..plans import TWO53, binary_plan
from ..reports import Reports
from ..spec import check_spec
from ._base import IMPLAUSIBLE, VectorMechanism, ceil_div, check_names, check_report_variance
from ._result import VectorMeanEstimate

__all__ = ["DuchiMultivariate", "DuchiMultivariatePlan", "duchi_constant"]


def duchi_constant(dim: int) -> Fraction:
    """``C_d = 2^(d-1) / binom(d-1, floor((d-1)/2))``: ``E[z | v] = (2π - 1) v / C_d`` (exact)."""
    return Fraction(2 ** (dim - 1), math.comb(dim - 1, (dim - 1) // 2))


@dataclass(frozen=True)
class DuchiMultivariatePlan:
    """Integer plan of :class:`DuchiMultivariate`: the dimension and the two-output thresholds.

    ``t_hi / 2**53`` is the probability of the side ``⟨z, v⟩ > 0`` (when ``z`` is not orthogonal to ``v``),
    ``t_lo = 2**53 - t_hi``.
    """

    dim: int
    t_lo: int
    t_hi: int

    @property
    def n_bit_words(self) -> int:
        """Words holding the ``d`` uniform bits of ``a``."""
        return ceil_div(self.dim, 64)

    @property
    def words_per_record(self) -> int:
        """``d`` words for the signs of ``v``, ``ceil(d/64)`` for ``a``, one for the side."""
        return self.dim + self.n_bit_words + 1

    def sign_probability(self, a: int) -> Fraction:
        """Probability that the kernel's ``a`` (after the side is chosen) is the sign vector ``a``.

        Bit ``j`` of ``a`` is set when ``a_j = +1``.
        """
        s = 2 * bin(a).count("1") - self.dim
        if s > 0:
            return Fraction(2 * self.t_hi, TWO53 << self.dim)
        if s < 0:
            return Fraction(2 * self.t_lo, TWO53 << self.dim)
        return Fraction(1, 1 << self.dim)

    def exact_probabilities(self, thresholds: Any) -> dict[int, Fraction]:
        """``{z: probability}`` of every report for inputs whose signs have the given probabilities.

        ``z`` is a bit mask, bit ``j`` set when ``z_j = +1``; the signs ``v_j = +1`` have probability ``thresholds[j] /
        2**53``. Enumerates ``4^d`` terms (d ≤ 10).
        """
        d = self.dim
        if len(thresholds) != d or d > 10:
            raise ValueError(f"need {d} thresholds and d <= 10 to enumerate; got {len(thresholds)}, d = {d}")
        mask = (1 << d) - 1
        pv = {}
        for v in range(1 << d):
            p = Fraction(1)
            for j, t in enumerate(thresholds):
                p *= Fraction(int(t), TWO53) if v >> j & 1 else 1 - Fraction(int(t), TWO53)
            if p:
                pv[v] = p
        return {z: sum((p * self.sign_probability(~(z ^ v) & mask) for v, p in pv.items()), Fraction(0))
                for z in range(1 << d)}

    def extreme_ratio(self) -> Fraction:
        """Largest ``P[z | x] / P[z | x']``: the extreme sign probabilities, ``t_hi / t_lo`` (ties lie between)."""
        return Fraction(self.t_hi, self.t_lo)


class DuchiMultivariate(VectorMechanism):
    """Duchi et al.'s mechanism for bounded vectors: each person reports one vector of ``dim`` signs.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20] of the whole report.
    bounds : sequence of (float, float)
        Public range of each coordinate; ``dim = len(bounds)``.

    Notes
    -----
    Each call of ``privatize`` on one person's vector is ε-LDP; estimators are post-processing. The report is
    ``z ∈ {±B}^d`` drawn as described in the module docstring; ``B = C_d (e^ε + 1)/(e^ε - 1)`` with
    ``C_d = 2^(d-1)/binom(d-1, floor((d-1)/2))`` (computed from the plan's exact probabilities), so each
    coordinate's estimate is unbiased with per-report variance ``((high_j - low_j)/2)² (B² - t_j²)``, ``t_j``
    the value on the [-1, 1] scale. ``B`` grows like ``sqrt(π d / 2)``: every coordinate gets an error of order
    ``sqrt(d)/ε`` from one report of ``d`` bits, the minimax rate for the ℓ∞ ball.

    References
    ----------
    J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally private
    estimation", JASA 2018; N. Wang et al., "Collecting and Analyzing Multidimensional Data with Local
    Differential Privacy", ICDE 2019.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.DuchiMultivariate(epsilon=1.0, bounds=[(0, 1), (0, 100), (-5, 5)])
    >>> X = np.random.default_rng(0).uniform([0, 0, -5], [1, 100, 5], (200_000, 3))
    >>> r = m.privatize(X, rng=1)
    >>> r.codes.shape, r.codes.dtype            # 3 sign bits per person, packed in one byte
    ((200000, 1), dtype('uint8'))
    >>> est = m.estimate_mean(m.aggregate(r))
    >>> bool(np.all(np.abs(est.mean - X.mean(axis=0)) < 4 * est.standard_errors))
    True
    """

    name = "duchi_multivariate"
    aliases = ("duchi_md",)

    def __init__(self, epsilon: float, bounds: Any) -> None:
        super().__init__(epsilon, bounds)
        b = binary_plan(self._epsilon)
        self._plan = DuchiMultivariatePlan(dim=self.dim, t_lo=b.t_lo, t_hi=b.t_hi)
        self._scale = float(duchi_constant(self.dim) * Fraction(TWO53, b.t_hi - b.t_lo))
        # a coordinate's per-report variance is ((high - low)/2)² (B² - t²) <= (high - low)² B²/4
        check_report_variance("DuchiMultivariate", self._epsilon, self._scale**2 / 4, self._widths,
                              self._vector_bounds, unit_extent=(1 + self._scale) / 2)

    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        """Refuse an aggregate whose counts are implausible for its ``n_reports``: its reports or counts were changed.

        A report sets up to ``d`` bits (no count above ``n_reports``), and bit ``j`` is set with probability ``(1 +
        t_j/B)/2``, ``t_j`` in ``[-1, 1]``: so ``c_j/n`` lies in ``[(1 - 1/B)/2, (1 + 1/B)/2]`` up to sampling noise. By
        Hoeffding's inequality a count beyond that interval by more than ``sqrt(n ln(2d/α)/2)`` has probability below
        ``α`` (:data:`IMPLAUSIBLE`, over all coordinates); such an aggregate is refused: its ``n_reports`` or counts
        were changed (twice ``n_reports`` halves every coordinate's estimate toward the low bound; half of it, or
        doubled counts, push it beyond the bounds).
        """
        n_reports = support_counts(counts, total, n_reports, spec)
        if not n_reports or not counts.size:
            return n_reports
        d = counts.size
        b = binary_plan(float(spec.epsilon))
        inv_b = float(Fraction(b.t_hi - b.t_lo, TWO53) / duchi_constant(d))  # 1/B
        n = n_reports
        # 1e-9 n: the rounding of the signs' thresholds (2**-53 each) and of 1/B, far below the noise term
        tol = math.sqrt(n * math.log(2 * d / IMPLAUSIBLE) / 2) + 1e-9 * n + 1
        lo, hi = n * (1 - inv_b) / 2 - tol, n * (1 + inv_b) / 2 + tol
        bad = np.flatnonzero((counts < lo) | (counts > hi))
        if bad.size:
            j = int(bad[0])
            raise ValueError(f"aggregate of {spec}: coordinate {j} has {int(counts[j])} positive signs of n_reports="
                             f"{n}, outside what {n} report(s) give except with probability below {IMPLAUSIBLE:g} "
                             f"([{max(lo, 0):.0f}, {hi:.0f}]; {bad.size} coordinate(s) are outside); n_reports or "
                             "the counts were changed")
        return n_reports

    @property
    def n_cells(self) -> int:
        """Bits per report = counts in the aggregate (``dim``)."""
        return self.dim

    @property
    def scale(self) -> float:
        """``B``: a report's coordinate is ``±B`` on the [-1, 1] scale of that coordinate."""
        return self._scale

    def _spec_params(self):
        return {"bounds": self._vector_bounds, "packed_bits": self.dim}

    @classmethod
    def _from_spec(cls, spec):
        return cls(epsilon=spec.epsilon, bounds=spec.get("bounds"))

    def __repr__(self) -> str:
        return f"DuchiMultivariate(epsilon={self._epsilon!r}, bounds={self._vector_bounds!r})"

    def _allocate_reports(self, n):
        return np.empty((n, ceil_div(self.dim, 8)), dtype=np.uint8)

    def _run_kernel(self, values, words, out):
        p = self._plan
        launch(client_vector.duchi_multivariate_kernel, values, self._lows, self._inv_ranges, p.t_lo, p.t_hi,
               p.n_bit_words, words, out)

    def sign_thresholds(self, x: ArrayLike) -> np.ndarray:
        """The kernel's own threshold of ``v_j = +1`` (over 2**53) for every value of an ``(n, dim)`` array."""
        values = self.prepare_values(x)
        out = np.empty(values.shape, dtype=np.int64)
        launch(client_vector.sign_thresholds, values, self._lows, self._inv_ranges, out)
        return out

    # -- reports in a table column: the d sign bits as one code (bit j = coordinate j), Mechanism's packing ---------
    def check_column_codes(self, where: str = "a column") -> None:
        """Reports of up to 64 coordinates fit one 64-bit column code (bit ``j`` is coordinate ``j``'s sign)."""
        if self.dim > 64:
            raise TypeError(f"DuchiMultivariate reports are {self.dim} sign bits per person, more than {where} of "
                            "64-bit codes holds; keep the Reports from privatize")

    def aggregate(self, reports: Reports) -> Aggregate:
        """Count, per coordinate, the reports whose sign is ``+``: ``dim`` counts plus the number of reports."""
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        return Aggregate(count_bits(reports.codes, self.dim), self.spec, len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)

    def _unit(self, x):
        values = np.asarray(x, dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != self.dim or not np.all(np.isfinite(values)):
            raise ValueError(f"x must be a finite (n, {self.dim}) array")
        return np.clip(2 * (values - self._lows) * self._inv_ranges - 1, -1.0, 1.0)

    def variance(self, x: ArrayLike) -> FloatArray:
        """Per-report variance of each coordinate's estimate for the vectors ``x`` (shape ``(n, dim)``), in data units.

        ``((high_j - low_j)/2)² (B² - t_j²)``, exact up to the 2**-53 rounding of the signs' thresholds.
        """
        t = self._unit(x)
        return (self._widths / 2) ** 2 * (self._scale**2 - t * t)

    def expected_squared_error(self, x: ArrayLike) -> float:
        """``E‖estimate - mean(x)‖²`` of the mean estimated from one report of each row of ``x``.

        The sum over coordinates of ``Σ_i variance(x)[i, j] / n²``.
        """
        v = self.variance(x)
        return float(v.sum() / v.shape[0] ** 2)

    def estimate_mean(self, data: Reports | Aggregate, *, names: Any = None) -> VectorMeanEstimate:
        """Unbiased estimate of the mean vector behind the reports.

        With ``c_j`` of ``n`` reports having ``z_j = +B``, ``m_j = 2 c_j/n - 1`` and the estimate of coordinate
        ``j`` is ``low_j + (high_j - low_j)(1 + B m_j)/2``. Its standard error is the sample standard
        deviation of the per-report estimates ``±B`` (scaled) over ``sqrt(n)``:
        ``(high_j - low_j)/2 · B sqrt((1 - m_j²)/(n - 1))``; with one report, or all reports of one sign, the
        worst case ``(high_j - low_j)/2 · B / sqrt(n)``.

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate.
        names : sequence of str, optional
            Coordinate names for the result (e.g. the DataFrame's columns).
        """
        names = check_names(names, self.dim)
        agg = self._as_aggregate(data)
        n = agg.n_reports
        if n == 0:
            raise ValueError("estimate_mean: no reports")
        m = 2.0 * agg.counts / n - 1.0
        half = self._widths / 2
        mean = self._lows + half * (1.0 + self._scale * m)
        s2 = self._scale**2 * (1.0 - m * m) * (n / (n - 1)) if n > 1 else np.zeros(self.dim)
        s2 = np.where(s2 > 0, s2, self._scale**2)
        se = half * np.sqrt(s2 / n)
        return VectorMeanEstimate(mean=mean, standard_errors=se, expected_squared_error=float(np.sum(se * se)),
                                  n_reports=n, epsilon=self._epsilon, spec=agg.spec, dim=self.dim, names=names)
