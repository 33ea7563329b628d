"""Square Wave and the General Wave family (Li et al., SIGMOD 2020) on a finite output grid.

A value is scaled to ``v`` in [0, 1]; the output domain is ``[-b, 1 + b]``. A General Wave mechanism reports
``ṽ`` with density ``W(ṽ - v)``, where the *wave* ``W`` takes values in ``[q, e^ε q]``, equals ``q`` outside
``[-b, b]`` and has total mass 1, which makes it ε-LDP. The Square Wave is the box ``W = e^ε q`` on
``[-b, b]``: among all waves it maximizes the Wasserstein distance between the output distributions of
different inputs, so it is the most informative for distribution estimation (Li et al.,
SIGMOD 2020, Theorem 2).

Grid (design rule R1). Reports are cells of a fixed grid of ``N`` cells (default 1024, doubled
until the window holds ≥ 16 cells, at most 2**16) over ``[-b', 1 + b']``: the window is
``m = round(2bN/(1 + 2b))`` cells, ``b' = m / (2(N - m))``, cell width ``1/(N - m)``. The value is randomly
rounded to a window start ``s ∈ {0..N-m}`` with ``E[s] = v (N - m)``, so the window centre equals ``v`` in
expectation. Window cells carry the wave's weight (``e^ε`` times an outside cell for the box), with integer
thresholds over 2**53 rounded so the realized ε never exceeds the stated ε (exact, see ``_plan``).

What the grid costs: ``|b' - b| ≤ 1/(2(N - m))`` (ε = 1: b = 0.25608, b' = 0.25628) and input rounding
adds a variance of at most ``1/(4 (N - m)²)`` per report on the unit scale (ε = 1: 5.5e-7, against a
per-report variance of the mean estimate of about 1.1): below 1e-6 relatively. In exchange, the output
alphabet does not depend on the input, and the transition matrix used by EM is exact.

References
----------
Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under Local
Differential Privacy", SIGMOD 2020 (General Wave, Square Wave, the bandwidth b, EM/EMS).
"""

from __future__ import annotations

import hashlib
from typing import Any
import math

import numpy as np

from ..spec import Spec
from .._typing import ArrayLike, Bounds, FloatArray
from .._validation import check_discrete, check_integral, check_scalar
from ..plans import exp_lower
from .piecewise import _WindowOracle

__all__ = ["SquareWave", "GeneralWave", "square_wave_bandwidth", "WAVE_SHAPES"]

WAVE_SHAPES = ("square", "trapezoid", "triangle")
#: Most integers a ``discrete=True`` wave mechanism takes (one EM point mass each).
MAX_POINTS = 65536


def square_wave_bandwidth(epsilon: float) -> float:
    """Li et al.'s default half-width ``b = (ε e^ε − e^ε + 1) / (2 e^ε (e^ε − 1 − ε))``.

    It maximizes an upper bound of the mutual information between input and output; ``b → 1/2`` as
    ``ε → 0`` and ``b → 0`` as ``ε → ∞``. Evaluated with ``expm1`` (and a series below ε = 1e-3) to avoid
    cancellation.
    """
    eps = float(epsilon)
    if eps < 1e-3:
        num = eps**2 / 2 + eps**3 / 3 + eps**4 / 8
        den = 2 * math.exp(eps) * (eps**2 / 2 + eps**3 / 6 + eps**4 / 24)
        return num / den
    em1 = math.expm1(eps)
    return (eps * math.exp(eps) - em1) / (2 * math.exp(eps) * (em1 - eps))


def _heights(shape, m):
    """Relative height in [0, 1] of the wave at the centre of each of the ``m`` window cells."""
    z = (np.arange(m) + 0.5) / m * 2.0 - 1.0  # cell centres on [-1, 1] (offset / b)
    if shape == "square":
        return np.ones(m)
    if shape == "triangle":
        return 1.0 - np.abs(z)
    if shape == "trapezoid":
        return np.minimum(1.0, 2.0 * (1.0 - np.abs(z)))
    h = np.asarray(shape(z), dtype=np.float64)
    if h.shape != (m,):
        raise ValueError(f"shape must return one height per point; got shape {h.shape} for {m} points")
    if not np.all(np.isfinite(h)) or h.min() < 0 or h.max() > 1:
        raise ValueError("shape must return finite heights in [0, 1] (relative to the wave's range [q, e^ε q])")
    if h.max() <= 0:
        raise ValueError("shape must be positive somewhere: an all-zero wave carries no information")
    return h


class GeneralWave(_WindowOracle):
    r"""A General Wave mechanism on a fixed output grid: a named or user-defined wave shape.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    bounds : (float, float)
        Public range of the values.
    shape : {"square", "trapezoid", "triangle"} or callable, optional
        The wave inside ``[-b, b]``. ``"square"`` is the box (identical to :class:`SquareWave`); ``"triangle"``
        falls linearly from ``e^ε q`` at the centre to ``q`` at ``±b``; ``"trapezoid"`` is flat on the inner
        half and linear outside it. A callable ``f(z)`` receives the window cell centres ``z ∈ (-1, 1)``
        (offset divided by ``b``) and returns heights in [0, 1]; height ``h`` becomes weight
        ``1 + (e^ε - 1) h`` relative to the cells outside the window, normalised to total mass 1.
    bandwidth : float, optional
        Half-width ``b`` of the wave on the unit scale (default: :func:`square_wave_bandwidth`).
    n_cells : int, optional
        Output grid size (default 1024, raised until the window holds 16 cells).
    discrete : bool, default False
        The values are integers (counts, ages, ratings): ``bounds = (low, high)`` are integers, both included,
        and non-integer values are refused (InvalidValuesError, before anything is drawn). The randomizer and
        its ε are unchanged (same plan, grid and kernel); what changes is estimation: ``estimate_distribution``
        fits one point mass per integer (the EM transition of each integer is exact, from its window starts),
        and the :class:`~ldpnum.DistributionEstimate` it returns is in discrete mode: ``range(lo, hi)`` is
        :math:`P(lo \le X \le hi)` with both ends included, quantiles are integers. Recorded in the spec, so the
        pandas accessor and the command line read it back. At most 65,536 integers.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. The plan holds
    the exact integer probability of every window offset (a cumulative table over 2**53); heights at the very
    top are scaled by ``1 - 1e-12`` so that quantization never lets a ratio exceed ``e^ε``.
    ``estimate_mean`` is unbiased for any shape (it uses the exact mean offset of the quantized shape).

    References
    ----------
    Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under
    Local Differential Privacy", SIGMOD 2020 (General Wave definition and Theorem 1).

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.GeneralWave(epsilon=1.0, bounds=(0, 1440), shape="triangle")
    >>> x = np.random.default_rng(0).uniform(300, 1200, 50_000)
    >>> est = m.estimate_mean(m.privatize(x, rng=1))
    >>> bool(abs(est.value - x.mean()) < 4 * est.standard_error)
    True
    """

    name = "general_wave"
    aliases = ("gw",)

    def __init__(self, epsilon: float, bounds: Bounds, *, shape: str | ArrayLike = "square",
                 bandwidth: float | None = None, n_cells: int | None = None, discrete: bool = False) -> None:
        super().__init__(epsilon, bounds)
        self._n_points = check_discrete(discrete, self._bounds, MAX_POINTS)
        if bandwidth is None:
            b = square_wave_bandwidth(self._epsilon)
        else:
            b = check_scalar(bandwidth, "bandwidth", float, low=0, high=1e3, include_boundaries="right")
        if isinstance(shape, str):
            if shape not in WAVE_SHAPES:
                raise ValueError(f"shape must be one of {WAVE_SHAPES} or a callable; got {shape!r}")
        elif not callable(shape):
            raise TypeError(f"shape must be a name or a callable; got {type(shape).__name__}")
        self._shape = shape
        self._bandwidth = b
        top = float(exp_lower(self._epsilon)) * (1 - 1e-12)
        weights = None if shape == "square" else (lambda m: (1.0 + (top - 1.0) * _heights(shape, m)).tolist())
        self._setup_window(2 * b / (1 + 2 * b), n_cells, weights)
        self._plan = self._window

    @property
    def bandwidth(self) -> float:
        """The requested half-width ``b`` of the wave (unit scale)."""
        return self._bandwidth

    @property
    def realized_bandwidth(self) -> float:
        """``b' = m / (2 (N - m))``: the half-width of the window on the grid."""
        return self._window.m / (2 * (self._window.n_cells - self._window.m))

    @property
    def shape(self) -> Any:
        """The wave's shape, as given to the constructor."""
        return self._shape

    @property
    def discrete(self) -> bool:
        """Whether the values are the integers of the bounds (see ``discrete`` in the parameters)."""
        return self._n_points is not None

    @property
    def n_points(self) -> int | None:
        """Discrete mode: the number of integers in the bounds, ``high - low + 1`` (None otherwise)."""
        return self._n_points

    def prepare_values(self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise",
                       fill_value: float | None = None, out_of_range: str = "clip") -> FloatArray:
        """Validate values as :meth:`ldpnum.Mechanism.prepare_values` does.

        With ``discrete=True`` also refuse non-integer values (InvalidValuesError with their count and first index;
        nothing is drawn).
        """
        values = super().prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value,
                                        out_of_range=out_of_range)
        return values if self._n_points is None else check_integral(values, "x" if name is None else str(name))

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: reports are codes ``0..n_cells-1``."""
        return self._window.n_cells

    def _spec_params(self):
        params = {"bounds": self._bounds, "bandwidth": self._bandwidth, "n_cells": self._window.n_cells}
        if self._shape != "square":
            if isinstance(self._shape, str):
                params["shape"] = self._shape
            else:
                digest = hashlib.sha256(repr(self._window.cum).encode()).hexdigest()[:16]
                params["shape"] = f"callable:{digest}"
        if self._n_points is not None:  # recorded only when set: continuous specs are unchanged
            params["discrete"] = True
        return params

    def _make_spec(self):
        name = "square_wave" if self._shape == "square" else "general_wave"
        return Spec(name, self._epsilon, self.n_cells, tuple(self._spec_params().items()))

    def __eq__(self, other):
        return isinstance(other, GeneralWave) and self.spec == other.spec

    __hash__ = _WindowOracle.__hash__

    @classmethod
    def _from_spec(cls, spec):
        shape = spec.get("shape", "square")
        if not isinstance(shape, str):
            raise ValueError(f"spec of {spec.mechanism!r}: shape must be the name of a wave shape; got {shape!r}")
        if shape.startswith("callable:"):
            raise ValueError("a General Wave with a user-defined shape cannot be rebuilt from its spec; "
                             "construct it again with the same shape")
        return cls(spec.epsilon, spec.get("bounds"), shape=shape, bandwidth=spec.get("bandwidth"),
                   n_cells=spec.get("n_cells"), discrete=bool(spec.get("discrete", False)))

    def __repr__(self):
        shape = self._shape if isinstance(self._shape, str) else getattr(self._shape, "__name__", "callable")
        extra = ", discrete=True" if self._n_points is not None else ""
        return (f"{type(self).__name__}(epsilon={self._epsilon!r}, bounds={self._bounds!r}, shape={shape!r}, "
                f"bandwidth={self._bandwidth:.6g}, n_cells={self.n_cells}{extra})")

    @property
    def labels(self) -> np.ndarray:
        """Centre of each output cell in data units (the cells span ``[low - b'(high-low), high + b'(high-low)]``)."""
        n, m = self._window.n_cells, self._window.m
        low, high = self._bounds
        return low + (high - low) * (np.arange(n) + 0.5 - m / 2) / (n - m)


class SquareWave(GeneralWave):
    """The Square Wave mechanism on a fixed output grid.

    A value scaled to ``v`` in [0, 1] is reported as a cell of ``[-b', 1 + b']``: with probability
    ``P_in = m e^ε / (m e^ε + N - m)`` a uniform cell of the ``m``-cell window centred (in expectation) at
    ``v``, else a uniform cell outside it — the grid version of ``p = e^ε/(2b e^ε + 1)`` inside
    ``|ṽ - v| ≤ b`` and ``q = 1/(2b e^ε + 1)`` elsewhere. Unbiased mean: ``(c - 1/2)/κ + 1/2`` on the unit
    scale with ``κ = P_in - (1 - P_in) m/(N - m)`` (``c`` the cell's position).

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    bounds : (float, float)
        Public range of the values.
    bandwidth : float, optional
        Half-width ``b`` (default: :func:`square_wave_bandwidth`).
    n_cells : int, optional
        Output grid size (default 1024, raised to a power of two until the window holds ≥ 16 cells; 8192 at
        ε = 8; at most 2**16).
    discrete : bool, default False
        Integer values, one point mass per integer of the (integer) bounds in ``estimate_distribution``;
        see :class:`GeneralWave`.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. Identical to
    ``GeneralWave(shape="square")``: same plan, same reports, same spec.

    References
    ----------
    Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under
    Local Differential Privacy", SIGMOD 2020 (Square Wave mechanism, choice of b, EM/EMS).

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> sw = ldp.SquareWave(epsilon=1.0, bounds=(0, 1440))
    >>> sw.n_cells, sw.plan.m
    (1024, 347)
    >>> x = np.random.default_rng(0).uniform(300, 1200, 100_000)
    >>> est = sw.estimate_mean(sw.privatize(x, rng=1))
    >>> bool(abs(est.value - x.mean()) < 4 * est.standard_error)
    True

    Integer values: one point mass per integer, ranges with both ends included, integer quantiles.

    >>> sw = ldp.SquareWave(epsilon=4.0, bounds=(0, 80), discrete=True)
    >>> x = np.random.default_rng(0).poisson(3, 200_000)
    >>> d = sw.estimate_distribution(sw.privatize(x, rng=1))
    >>> bool(abs(d.range(1, 3) - np.mean((x >= 1) & (x <= 3))) < 0.017), d.quantile(0.5)
    (True, 3)
    """

    name = "square_wave"
    aliases = ("sw",)

    def __init__(self, epsilon: float, bounds: Bounds, *, bandwidth: float | None = None,
                 n_cells: int | None = None, discrete: bool = False) -> None:
        super().__init__(epsilon, bounds, shape="square", bandwidth=bandwidth, n_cells=n_cells, discrete=discrete)

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.epsilon, spec.get("bounds"), bandwidth=spec.get("bandwidth"), n_cells=spec.get("n_cells"),
                   discrete=bool(spec.get("discrete", False)))
