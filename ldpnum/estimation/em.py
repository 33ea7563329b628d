"""Exact bucketized EM / EMS for the window randomizer (Square Wave, General Wave, Piecewise).

The randomizer
--------------
Output cells ``j ∈ {0..N-1}``; a window of ``m`` cells starts at ``s ∈ {0..P}``, ``P = N - m``. A value with
unit position ``u ∈ [0, 1]`` has ``pos = u·P``, randomly rounded to ``s`` with the hat function
``P(s = k | pos) = max(0, 1 - |pos - k|)`` (so ``E[s] = pos``). Given ``s``, cell ``j`` has probability
``p_lo + delta[j - s]`` for ``0 <= j - s < m`` and ``p_lo`` otherwise. Square Wave and Piecewise use a box,
``delta = (p_hi - p_lo)·1`` with ``p_hi = p_in/m``, ``p_lo = (1 - p_in)/(N - m)``, ``p_in = t_in / 2**53``;
General Wave uses its own offset table.

The kernels pick a uniform cell inside (or outside) the window with 48-bit draws, so a cell's probability
differs from ``p_hi`` (``p_lo``) by at most ``m / 2**48`` (``(N - m) / 2**48``) relatively — below 2.4e-10 for
``N <= 2**16`` and far below the sampling noise of any collection. This model ignores that; the plan's
``exact_probabilities`` has the exact values.

The transition structure, exactly
---------------------------------
Input buckets ``i = 0..d-1`` split [0, 1] evenly. With ``u`` uniform in bucket ``i``, ``pos`` is uniform on
``[a_i, b_i) = [i·P/d, (i+1)·P/d)`` and ``P(s = k | i) = (H(b_i - k) - H(a_i - k)) / (b_i - a_i)`` with ``H``
the (piecewise quadratic) integral of the hat. Only ``k = floor(a_i) .. ceil(b_i)`` are non-zero: a band of
``P + O(d)`` entries in all. In units of ``1/d`` the offsets ``A = i·P - k·d`` and ``B = A + P`` are integers,
and integrating the hat piece by piece gives each weight as one exact integer ratio,

    P(s = k | i) = [ (h1 - l1)(2d + l1 + h1) + (h2 - l2)(2d - l2 - h2) ] / (2dP),
    l1, h1 = clip(A, -d, 0), clip(B, -d, 0);   l2, h2 = clip(A, 0, d), clip(B, 0, d),

rounded once to float64 (so each row of the band sums to 1 up to rounding). The full matrix
``M[j, i] = p_lo + Σ_k P(s = k | i)·delta[j - k]`` (columns sum to 1) is never formed by the estimator;
:meth:`WindowTransition.dense` builds it for tests and small cases.

EM and EMS
----------
EM is Algorithm 1 of Li et al. (SIGMOD 2020, below): E-step
``P_i = x_i Σ_j n_j M[j, i] / (M x)_j``, M-step ``x = P / ΣP``. EMS smooths after every M-step,
``x_i ← x_i/2 + (x_{i-1} + x_{i+1})/4``, with ``x_{-1} = x_0`` and ``x_d = x_{d-1}`` at the edges, so the
smoothing is column-stochastic and preserves mass exactly (the widely copied Square Wave script instead
row-normalises the truncated edge rows to ``(2x_0 + x_1)/3``, which drains mass from the edge buckets
before its renormalisation), then renormalises. Both start from the uniform distribution; with
``L_t = Σ_j n_j log (M x_t)_j`` (cells with ``n_j = 0`` skipped) they stop after the first iteration with
``|L_t - L_{t-1}| < tol·|L_{t-1}|``, or by default once an iteration gains less than 1e-3 nats, or after
``max_iter`` iterations (see :func:`expectation_maximization`; ``accelerate=True`` runs the same map with
SQUAREM's extrapolation, Varadhan & Roland 2008). One iteration costs one forward and one
backward product, each ``O(d + N)`` for a box (the window sums are differences of prefix sums) and
``O(N·m)`` for a general ``delta`` (~9 µs and ~80 µs per iteration at N = d = 1024, m = 347, on a 2-core
CI-class machine). The loop runs in the Cython kernel ``ldpnum._kernels.server_em`` without the GIL.

References
----------
Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under Local
Differential Privacy", SIGMOD 2020 (Square Wave, General Wave, EM Algorithm 1, EMS smoothing).
R. Varadhan, C. Roland, "Simple and Globally Convergent Methods for Accelerating the Convergence of Any EM
Algorithm", Scandinavian Journal of Statistics 35(2), 2008 (SQUAREM).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels import server_em
from .._validation import _KIND_NAMES, check_choice, check_scalar

__all__ = [
    "DEFAULT_LOGLIK_STEP",
    "DEFAULT_MAX_ITER",
    "EMResult",
    "WindowTransition",
    "SMOOTHING_LEVELS",
    "ems_heldout",
    "expectation_maximization",
    "window_transition",
    "window_transition_from_plan",
    "point_transition_from_plan",
    "warped_transition_from_plan",
    "joint_expectation_maximization",
    "joint_ems_heldout",
]

#: With ``tol=None`` (the default), iterations stop once one of them changes the log-likelihood by less than
#: this many nats (see :func:`expectation_maximization` for the measurements behind it).
DEFAULT_LOGLIK_STEP = 1e-3
#: Default iteration cap.
DEFAULT_MAX_ITER = 10_000

_TWO53 = 2**53
_EMPTY = np.empty(0, dtype=np.float64)


def _frozen(a, dtype):
    """A private, read-only, C-contiguous copy."""
    a = np.array(a, dtype=dtype, order="C", copy=True)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class WindowTransition:
    """Exact transition structure between ``n_bins`` input buckets and ``n_cells`` output cells.

    ``P(cell j | bucket i) = p_lo + Σ_s B[i, s]·D(j - s)`` with ``D(t) = delta[t]`` for ``0 <= t < m``
    (``p_hi - p_lo`` for the box, ``delta=None``) and 0 otherwise. ``B`` (window start given bucket) is a
    band stored CSR-like: row ``i`` has starts ``s_index[indptr[i]:indptr[i+1]]`` with probabilities
    ``weight[...]`` (each row sums to 1). Build it with :func:`window_transition` or
    :func:`window_transition_from_plan`. Arrays are read-only.

    ``p_hi`` is used only for the box; for a general ``delta`` it is ``p_lo + max(delta)`` (informational).
    """

    n_cells: int
    m: int
    p_hi: float
    p_lo: float
    n_bins: int
    indptr: np.ndarray = field(repr=False)
    s_index: np.ndarray = field(repr=False)
    weight: np.ndarray = field(repr=False)
    delta: np.ndarray | None = field(default=None, repr=False)
    #: The inputs are points (one integer each, :func:`point_transition_from_plan`), not equal buckets: the
    #: band cannot be rebuilt for another number of inputs.
    points: bool = False
    #: The buckets are equal on the data's scale but map to unequal intervals of window positions (a warped
    #: input domain, :func:`warped_transition_from_plan`): the band cannot be rebuilt for another bucket count.
    warped: bool = False

    def __post_init__(self):
        check_scalar(self.n_cells, "n_cells", int, low=2)
        check_scalar(self.m, "m", int, low=1)
        check_scalar(self.n_bins, "n_bins", int, low=1)
        if not self.m < self.n_cells:
            raise ValueError(f"need m < n_cells; got m={self.m}, n_cells={self.n_cells}")
        object.__setattr__(self, "indptr", _frozen(self.indptr, np.int64))
        object.__setattr__(self, "s_index", _frozen(self.s_index, np.int64))
        object.__setattr__(self, "weight", _frozen(self.weight, np.float64))
        if self.indptr.shape != (self.n_bins + 1,):
            raise ValueError(f"indptr must have length n_bins + 1 = {self.n_bins + 1}; "
                             f"got {self.indptr.shape}")
        if self.delta is not None:
            object.__setattr__(self, "delta", _frozen(self.delta, np.float64))
            if self.delta.shape != (self.m,):
                raise ValueError(f"delta must have length m = {self.m}; got {self.delta.shape}")
        # the kernel checks the band (indptr monotone, s_index in range) before every call

    @property
    def n_positions(self) -> int:
        """Number of window starts, ``n_cells - m + 1``."""
        return self.n_cells - self.m + 1

    @property
    def is_box(self) -> bool:
        """Whether the window is a box (uniform inside), not a shaped window."""
        return self.delta is None

    def _args(self):
        return (self.n_cells, self.m, self.indptr, self.s_index, self.weight, self.p_lo, self.p_hi,
                _EMPTY if self.delta is None else self.delta)

    def with_bins(self, n_bins: int) -> WindowTransition:
        """The same randomizer's transition for ``n_bins`` equal buckets (the band is rebuilt exactly)."""
        n_bins = check_scalar(n_bins, "n_bins", int, low=1)
        if n_bins == self.n_bins:
            return self
        if self.points or self.warped:
            what = "input points" if self.points else "warped buckets"
            raise ValueError(f"a transition of {self.n_bins} {what} cannot be regridded to {n_bins} buckets")
        indptr, s_index, weight = _band(self.n_cells - self.m, n_bins)
        return WindowTransition(n_cells=self.n_cells, m=self.m, p_hi=self.p_hi, p_lo=self.p_lo, n_bins=n_bins,
                                indptr=indptr, s_index=s_index, weight=weight, delta=self.delta)

    def window_start_matrix(self) -> NDArray[np.float64]:
        """Dense ``(n_positions, n_bins)`` matrix ``S[k, i] = P(s = k | bucket i)``."""
        s = np.zeros((self.n_positions, self.n_bins))
        rows = np.repeat(np.arange(self.n_bins), np.diff(self.indptr))
        np.add.at(s, (self.s_index, rows), self.weight)
        return s

    def dense(self) -> NDArray[np.float64]:
        """Full ``(n_cells, n_bins)`` matrix ``M[j, i] = P(cell j | bucket i)`` (tests, small cases)."""
        s = self.window_start_matrix()
        n_pos, m = self.n_positions, self.m
        if self.delta is None:
            c = np.zeros((n_pos + 1, self.n_bins))
            np.cumsum(s, axis=0, out=c[1:])
            j = np.arange(self.n_cells)
            window = c[np.minimum(j, n_pos - 1) + 1] - c[np.maximum(0, j - m + 1)]
            return self.p_lo + (self.p_hi - self.p_lo) * window
        out = np.full((self.n_cells, self.n_bins), self.p_lo)
        for t in range(m):
            out[t:t + n_pos] += self.delta[t] * s
        return out

    def forward(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """``M @ x`` for a vector over the ``n_bins`` buckets, in O(n_bins + n_cells) (box)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        y = np.empty(self.n_cells)
        server_em.window_forward(*self._args(), x, y)
        return y

    def backward(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        """``M.T @ r`` for a vector over the ``n_cells`` cells, in O(n_bins + n_cells) (box)."""
        r = np.ascontiguousarray(r, dtype=np.float64)
        z = np.empty(self.n_bins)
        server_em.window_backward(*self._args(), r, z)
        return z


def _band(last_start, n_bins):
    """CSR band of ``P(s = k | bucket i)``: ``s ∈ 0..P``, ``P = last_start = n_cells - m``, ``d = n_bins``."""
    p, d = last_start, n_bins
    if 2 * d * p >= 2**53:
        raise ValueError(f"n_bins={d} is too large for n_cells - m = {p}")
    i = np.arange(d, dtype=np.int64)
    k_lo = (i * p) // d                      # floor(a_i)
    k_hi = -((-(i + 1) * p) // d)            # ceil(b_i) <= P
    cnt = k_hi - k_lo + 1
    indptr = np.zeros(d + 1, dtype=np.int64)
    np.cumsum(cnt, out=indptr[1:])
    nnz = int(indptr[-1])
    row = np.repeat(i, cnt)
    k = np.arange(nnz, dtype=np.int64) - np.repeat(indptr[:-1] - k_lo, cnt)
    a = row * p - k * d                      # (a_i - k)·d
    b = a + p                                # (b_i - k)·d
    l1, h1 = np.clip(a, -d, 0), np.clip(b, -d, 0)
    l2, h2 = np.clip(a, 0, d), np.clip(b, 0, d)
    num = (h1 - l1) * (2 * d + l1 + h1) + (h2 - l2) * (2 * d - l2 - h2)   # exact integers
    weight = num.astype(np.float64) / float(2 * d * p)
    return indptr, k, weight


def window_transition(n_cells: int, m: int, n_bins: int, *, p_in: float | Fraction | None = None,
                      window: ArrayLike | None = None) -> WindowTransition:
    """Exact :class:`WindowTransition` of the window randomizer for ``n_bins`` equal input buckets.

    Parameters
    ----------
    n_cells, m : int
        Output cells and window width, ``1 <= m < n_cells``.
    n_bins : int
        Number of equal-width input buckets on [0, 1].
    p_in : float or Fraction, optional
        Box window: the probability that the output lies in the window (``t_in / 2**53`` of the plan).
    window : array of m floats, optional
        General window (General Wave): ``window[t]`` is the probability of cell ``s + t`` given window start
        ``s``; every cell outside the window gets ``p_lo = (1 - sum(window)) / (n_cells - m)``. Each entry
        must be at least ``p_lo``. A window whose entries are all equal is treated as the (fast) box.

    Exactly one of ``p_in`` and ``window`` must be given. Cost: O(n_bins + n_cells).
    """
    n_cells = check_scalar(n_cells, "n_cells", int, low=2)
    m = check_scalar(m, "m", int, low=1)
    n_bins = check_scalar(n_bins, "n_bins", int, low=1)
    if m >= n_cells:
        raise ValueError(f"need m < n_cells; got m={m}, n_cells={n_cells}")
    if (p_in is None) == (window is None):
        raise TypeError("give exactly one of p_in (box window) and window (general window probabilities)")
    if p_in is not None:
        check_scalar(p_in, "p_in", float, low=0, high=1)
        q = Fraction(p_in) if isinstance(p_in, numbers.Rational) else Fraction(float(p_in))
        return _transition(n_cells, m, n_bins, float(q / m), float((1 - q) / (n_cells - m)), None)
    w = np.asarray(window)
    if w.dtype.kind not in "iuf":
        raise TypeError(f"window must be a real array; got dtype {w.dtype}")
    w = w.astype(np.float64)
    if w.shape != (m,):
        raise ValueError(f"window must have shape ({m},); got {w.shape}")
    total = math.fsum(w)
    if not (np.all(np.isfinite(w)) and np.all(w >= 0) and total <= 1 + 1e-12):
        raise ValueError("window must hold finite non-negative probabilities summing to at most 1")
    p_lo = max(0.0, (1.0 - total) / (n_cells - m))
    delta = w - p_lo
    if delta.min() < -1e-15:
        raise ValueError(f"every window probability must be at least the outside probability {p_lo!r}")
    return _transition(n_cells, m, n_bins, None, p_lo, np.maximum(delta, 0.0))


def _transition(n_cells, m, n_bins, p_hi, p_lo, delta):
    """Assemble a transition; a ``delta`` constant up to rounding becomes the box, ``p_hi = p_lo + delta``."""
    if delta is not None:
        if np.ptp(delta) <= 4 * np.finfo(float).eps * delta.max():
            p_hi, delta = p_lo + float(np.mean(delta)), None
        else:
            p_hi = p_lo + float(delta.max())
    indptr, s_index, weight = _band(n_cells - m, n_bins)
    return WindowTransition(n_cells=n_cells, m=m, p_hi=p_hi, p_lo=p_lo, n_bins=n_bins, indptr=indptr,
                            s_index=s_index, weight=weight, delta=delta)


def point_transition_from_plan(plan: Any, n_points: int) -> WindowTransition:
    r""":class:`WindowTransition` of a window plan whose inputs are ``n_points`` equally spaced **points** of [0, 1].

    The points are ``u_k = k / (n_points - 1)`` (the integers ``low..high`` of a ``discrete=True`` mechanism), instead
    of equal buckets.

    A point ``u_k`` has ``pos = u_k P`` (``P = n_cells - m``), randomly rounded to the window starts
    ``floor(pos)`` and ``floor(pos) + 1`` with the hat weights ``1 - r`` and ``r``, ``r = pos - floor(pos)``;
    in integers ``pos = kP / (n_points - 1)``, so ``floor`` and ``r`` are exact ratios (``r = 0``: one start).
    Each column of the transition is then the exact output distribution of the integer (up to the 48-bit
    uniform choices, as for buckets). The band cannot be regridded (:meth:`WindowTransition.with_bins`
    refuses); :func:`ems_heldout` fits every level on it.
    """
    n_points = check_scalar(n_points, "n_points", int, low=2)
    base = window_transition_from_plan(plan, 1)
    p = base.n_cells - base.m
    k = np.arange(n_points, dtype=np.int64)
    s_lo, rem = np.divmod(k * p, n_points - 1)
    two = rem > 0
    cnt = 1 + two.astype(np.int64)
    indptr = np.zeros(n_points + 1, dtype=np.int64)
    np.cumsum(cnt, out=indptr[1:])
    s_index = np.empty(int(indptr[-1]), dtype=np.int64)
    weight = np.empty(int(indptr[-1]))
    s_index[indptr[:-1]] = s_lo
    weight[indptr[:-1]] = (n_points - 1 - rem) / (n_points - 1)
    s_index[indptr[:-1][two] + 1] = s_lo[two] + 1
    weight[indptr[:-1][two] + 1] = rem[two] / (n_points - 1)
    return WindowTransition(n_cells=base.n_cells, m=base.m, p_hi=base.p_hi, p_lo=base.p_lo, n_bins=n_points,
                            indptr=indptr, s_index=s_index, weight=weight, delta=base.delta, points=True)


def _hat_integral(t):
    """``H(t) = ∫_{-inf}^t max(0, 1 - |τ|) dτ``, elementwise."""
    t = np.clip(t, -1.0, 1.0)
    return np.where(t <= 0, (t + 1) ** 2 / 2, 1 - (1 - t) ** 2 / 2)


def _warped_band(last_start, positions):
    """CSR band of ``P(s = k | bucket i)`` for bucket positions uniform on ``[positions[i], positions[i+1])``.

    ``positions`` increase from 0 to ``last_start``; the weights are the hat's integral
    ``(H(b - k) - H(a - k)) / (b - a)`` for ``k = floor(a) .. ceil(b)`` (clipped to ``0..last_start``).
    """
    pos = np.asarray(positions, dtype=np.float64)
    a, b = pos[:-1], pos[1:]
    k_lo = np.floor(a).astype(np.int64)
    k_hi = np.minimum(np.ceil(b).astype(np.int64), last_start)
    cnt = k_hi - k_lo + 1
    indptr = np.zeros(a.size + 1, dtype=np.int64)
    np.cumsum(cnt, out=indptr[1:])
    row = np.repeat(np.arange(a.size), cnt)
    k = np.arange(int(indptr[-1]), dtype=np.int64) - np.repeat(indptr[:-1] - k_lo, cnt)
    weight = (_hat_integral(b[row] - k) - _hat_integral(a[row] - k)) / (b[row] - a[row])
    weight /= np.add.reduceat(weight, indptr[:-1])[row]  # each row sums to 1 up to rounding
    return indptr, k, weight


def warped_transition_from_plan(plan: Any, positions: ArrayLike) -> WindowTransition:
    r""":class:`WindowTransition` of a window plan whose input buckets are warped.

    Bucket ``i`` covers ``[positions[i], positions[i+1])`` of the unit scale the randomizer sees.

    A warped mechanism (:class:`~ldpnum.mechanisms.adaptive.WarpedSquareWave`) randomizes ``F(x)`` instead of
    the value's unit position, with ``F`` increasing and linear on each bucket of the data's equal grid; a value
    uniform in bucket ``i`` then has its window position uniform on ``P·[positions[i], positions[i+1])``
    (``P = n_cells - m``), and

    .. math:: P(s = k \mid i) = \frac{H(b_i - k) - H(a_i - k)}{b_i - a_i}, \qquad
              H(t) = \int_{-\infty}^t \max(0, 1 - |\tau|)\, d\tau,

    for ``a_i, b_i`` the ends in positions (computed in float64, each row renormalised). The window (box or
    shaped) is the plan's, as in :func:`window_transition_from_plan`.

    Parameters
    ----------
    plan : WindowPlan
    positions : array_like, shape (n_bins + 1,)
        Strictly increasing, from 0 to 1.
    """
    pos = np.asarray(positions, dtype=np.float64)
    if pos.ndim != 1 or pos.size < 2:
        raise ValueError(f"positions must be a 1-D array of at least 2 edges; got shape {pos.shape}")
    if not (np.all(np.isfinite(pos)) and pos[0] == 0 and pos[-1] == 1 and np.all(np.diff(pos) > 0)):
        raise ValueError("positions must increase strictly from 0 to 1")
    base = window_transition_from_plan(plan, 1)
    last = base.n_cells - base.m
    indptr, s_index, weight = _warped_band(last, pos * last)
    return WindowTransition(n_cells=base.n_cells, m=base.m, p_hi=base.p_hi, p_lo=base.p_lo, n_bins=pos.size - 1,
                            indptr=indptr, s_index=s_index, weight=weight, delta=base.delta, warped=True)


def window_transition_from_plan(plan: Any, n_bins: int) -> WindowTransition:
    """:class:`WindowTransition` of a :class:`~ldpnum.plans.WindowPlan` for ``n_bins`` buckets.

    ``p_in = t_in / 2**53``; outside cells get ``p_lo = (1 - p_in) / (n_cells - m)``. A box plan
    (``cum is None``: Piecewise, Square Wave) gives ``p_hi = p_in / m``; a shaped plan (General Wave) gives
    window offset ``k`` the probability ``p_in (cum[k+1] - cum[k]) / 2**53``, i.e. the excess
    ``delta[k] = p_in (cum[k+1] - cum[k]) / 2**53 - p_lo`` (each computed exactly, then rounded once).
    The 48-bit uniform choices of the box and of the outside cells are taken as exactly uniform (relative
    error at most ``n_cells / 2**48``; see the module docstring).
    """
    for attr in ("n_cells", "m", "t_in"):
        if not hasattr(plan, attr):
            raise TypeError(f"plan must be a WindowPlan; got {type(plan).__name__}")
    n_cells, m = int(plan.n_cells), int(plan.m)
    p_in = Fraction(int(plan.t_in), _TWO53)
    cum = getattr(plan, "cum", None)
    if cum is None:
        return window_transition(n_cells, m, n_bins, p_in=p_in)
    n_bins = check_scalar(n_bins, "n_bins", int, low=1)
    if len(cum) != m + 1:
        raise ValueError(f"plan.cum must have m + 1 = {m + 1} entries; got {len(cum)}")
    p_lo = (1 - p_in) / (n_cells - m)
    delta = np.array([float(p_in * Fraction(int(cum[k + 1]) - int(cum[k]), _TWO53) - p_lo) for k in range(m)])
    if delta.min() < 0:
        raise ValueError("a window cell of the plan is less likely than the cells outside the window")
    return _transition(n_cells, m, n_bins, None, float(p_lo), delta)


@dataclass(frozen=True, eq=False)
class EMResult:
    """Outcome of :func:`expectation_maximization`.

    Attributes
    ----------
    x : ndarray
        Estimated probability of each input bucket (sums to 1; read-only).
    n_iter : int
        Iterations run.
    converged : bool
        Whether the stopping rule was met before ``max_iter``.
    loglik : ndarray
        Log-likelihood ``Σ_j n_j log (M x)_j`` at the start and after each iteration
        (``n_iter + 1`` values; read-only).
    method : str
        ``"em"``, ``"ems"`` or ``"ems-cv"``.
    smoothing : int
        Smoothing passes per iteration (0 for EM, 1 for Li et al.'s EMS; chosen from the data by
        :func:`ems_heldout`).
    smoothing_fallback : bool
        :func:`ems_heldout` only: True when no smoothing (plain EM) scored higher on the held-out half than
        the level before it, but by less than ``HELDOUT_ZERO_SE`` standard errors, so that smoothed level was
        kept (a choice within the noise). False otherwise.
    """

    x: np.ndarray = field(repr=False)
    n_iter: int
    converged: bool
    loglik: np.ndarray = field(repr=False)
    method: str
    smoothing: int = 1
    smoothing_fallback: bool = False


def _check_counts(counts, n_cells):
    arr = counts if isinstance(counts, np.ndarray) else np.asarray(counts)
    if arr.dtype.kind not in "iuf":
        kind = _KIND_NAMES.get(arr.dtype.kind, str(arr.dtype))
        raise TypeError(f"counts must be an integer or float array; got dtype {kind}")
    if arr.ndim != 1:
        raise ValueError(f"counts must be one-dimensional; got shape {arr.shape}")
    if arr.shape[0] != n_cells:
        raise ValueError(f"counts must have one entry per output cell ({n_cells}); got {arr.shape[0]}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~(np.isfinite(arr) & (arr >= 0))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"counts must be finite and non-negative; {int(bad.sum())} are not "
                         f"(first at index {first}: {arr[first]!r})")
    if not arr.sum() > 0:
        raise ValueError("counts are all zero: no reports to estimate from")
    return arr


def _stopping(tol):
    """``(rtol, atol)`` of the kernel's stopping rule from the public ``tol``."""
    if tol is None:
        return 0.0, DEFAULT_LOGLIK_STEP
    return check_scalar(tol, "tol", float, low=0, allow_none=True), 0.0


def _check_flag(value, name):
    """``value`` as a bool; TypeError unless it is one (Python's or NumPy's)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool (True or False); got {type(value).__name__} {value!r}")
    return bool(value)


def _check_trim(trim):
    return _check_flag(trim, "trim")


def _check_accelerate(accelerate):
    return _check_flag(accelerate, "accelerate")


def _check_start(start, n_bins):
    """A private positive copy of a starting distribution over the buckets (renormalised), or None."""
    if start is None:
        return None
    arr = np.asarray(start)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"start must be a real array; got dtype {arr.dtype}")
    if arr.shape != (n_bins,):
        raise ValueError(f"start must have one entry per bucket ({n_bins}); got shape {arr.shape}")
    arr = np.array(arr, dtype=np.float64, order="C", copy=True)
    if not (np.all(np.isfinite(arr)) and np.all(arr > 0)):
        raise ValueError("start must be finite and positive in every bucket (EM never revives a zero bucket)")
    return arr / arr.sum()


def _run(n, t, smoothing, max_iter, rtol, atol, start, accelerate=False):
    """One kernel run on checked counts ``n``: returns ``(x, n_iter, converged, loglik)`` (fresh arrays).

    ``accelerate``: the same map and stopping rule, accelerated by SQUAREM (see :func:`expectation_maximization`).
    """
    warm = start is not None
    x = start.copy() if warm else np.empty(t.n_bins)
    loglik = np.empty(max_iter + 1)
    n_iter, converged = server_em.em_window(n, t.m, t.indptr, t.s_index, t.weight, t.p_lo, t.p_hi,
                                            _EMPTY if t.delta is None else t.delta, smoothing, max_iter, rtol,
                                            atol, x, loglik, warm, None, accelerate)
    return x, n_iter, converged, loglik[:n_iter + 1].copy()


def _result(x, n_iter, converged, loglik, method, smoothing, fallback=False):
    x.flags.writeable = False
    loglik.flags.writeable = False
    return EMResult(x=x, n_iter=n_iter, converged=converged, loglik=loglik, method=method,
                    smoothing=smoothing, smoothing_fallback=fallback)


def expectation_maximization(counts: ArrayLike, transition: WindowTransition, *, method: str = "ems",
                             max_iter: int = DEFAULT_MAX_ITER, tol: float | None = None,
                             smoothing: int | None = None, start: ArrayLike | None = None,
                             accelerate: bool = False) -> EMResult:
    """Reconstruct the bucket distribution from output-cell counts with EM or EMS.

    Parameters
    ----------
    counts : array of n_cells non-negative numbers
        Observed count of each output cell (``Aggregate.counts``).
    transition : WindowTransition
        The exact transition structure (:func:`window_transition_from_plan`).
    method : {"ems", "em"}
        ``"em"``: Algorithm 1 of the seed. ``"ems"`` (default): EM with the ½, ¼, ¼ smoothing after every
        M-step (mass-preserving reflecting edges). EMS is both more accurate (W1 lower by 15-43% in the
        measurements below) and needs 3-13x fewer iterations.
    max_iter : int
        Iteration cap (default 10,000); ``converged`` tells whether the stopping rule was met before it.
    tol : float or None
        ``None`` (default): stop after the first iteration that changes the log-likelihood by less than
        ``DEFAULT_LOGLIK_STEP = 1e-3`` nats. A float: stop after the first iteration ``t`` with
        ``|L_t - L_{t-1}| < tol·|L_{t-1}|`` (the relative rule; ``tol=0`` runs ``max_iter`` iterations).

    smoothing : int, optional
        Smoothing passes after every M-step (``"ems"`` only; default 1, Li et al.'s EMS). ``k`` passes
        smooth with the binomial kernel of ``2k + 1`` taps (variance ``k/2`` buckets²), so the fixed point is
        smoother; :func:`ems_heldout` chooses ``k`` from the data.
    start : array of n_bins positive numbers, optional
        Starting distribution (renormalised); default uniform.
    accelerate : bool, default False
        Accelerate the fixed-point iteration with SQUAREM (Varadhan & Roland): every cycle of two plain steps
        ``x1 = F(x0)``, ``x2 = F(x1)`` extrapolates to ``x0 + 2a r + a^2 v`` (``r = x1 - x0``,
        ``v = x2 - 2 x1 + x0``, the S3 step length ``a = ||r|| / ||v||`` within a growing cap), projects it onto
        the simplex and takes one more step from it; the step is kept only if it does not lower ``L`` below
        ``L(x2)`` (plain EM) or, for EMS, does not raise the fixed-point residual ``||F(x) - x||``. The stopping
        rule is the same, checked at every step of the map (``n_iter`` counts those steps), so the result is a
        point where one step changes ``L`` by less than the tolerance, as the plain iteration's is. Off by
        default: see the Notes.

    Returns
    -------
    EMResult
        ``x`` (bucket probabilities), ``n_iter``, ``converged``, ``loglik`` (trace), ``smoothing``.

    Notes
    -----
    Post-processing of the aggregate: costs no privacy. The log-likelihood is non-decreasing for EM; EMS
    maximizes a smoothed objective, so its trace may wiggle at the end. Cost per iteration O(n_bins +
    n_cells) for a box window, O(n_cells·m) for a general one.

    Why the default stop is 1e-3 nats, not a fixed relative ``tol``. EM updates depend on the counts only
    through their proportions, and ``|L| ≈ n log n_cells`` grows with ``n``, while the optimisation error
    that matters is the one relative to the sampling error, whose log-likelihood scale is O(1) nats
    whatever ``n``. A fixed relative ``tol`` therefore stops too early for large ``n`` and too late for
    small ``n``. Measured (Square Wave grid, 1024 cells, 1024 buckets, Beta(5, 2), ε ∈ {0.5, 1, 2, 4},
    3 seeds each): the W1 of EMS stopped at a gain of 1e-3 nats is at most 5% above that of EMS run to
    its fixed point (relative tol 1e-13) for n = 1e4, 1e5 and 1e6 alike (sometimes below: stopping early
    regularises), at 440-1450 iterations (4-12 ms including the transition) for n = 1e5. Stopping at
    1e-2 nats costs up to +33% (n = 1e5) and +58% (n = 1e6) of W1 at ε = 0.5; 1e-4 nats gains < 4% for
    2-3x the time. The relative rules 1e-7 and 1e-8 stop far too early at n = 1e5 (W1 +90% and +19% at
    ε = 0.5); 1e-9 matches 1e-3 nats there but not at n = 1e6 (+57%). Loose relative tolerances
    (>= 1e-4) can even stop after the first iteration at small ε, where one iteration barely moves ``L``.
    ``max_iter = 10,000`` bounds the worst case to ~90 ms at 1024 x 1024; EMS needed ~2,500 iterations
    on average in the slowest case measured (n = 1e6, ε = 0.5); plain EM needs 4,000-8,000 at n = 1e5 and
    hits the cap at n = 1e6 for ε ≥ 1 (``converged=False``).

    SQUAREM (``accelerate=True``) iterates the same map to the same stopping rule in fewer steps. Measured
    on the seven reference cases of the test suite (n = 20,000, 16-64 buckets): 2-40x fewer steps; EMS
    stops within L1 1.5e-3 of the plain iteration's estimate (whose own distance to the fixed point is up
    to 1.3e-3), plain EM 0.005-0.05 away from it and higher in likelihood (the plain iteration stops far
    short of the maximum: L1 0.2-1.2 from it); run to relative tol 1e-15 both reach the same fixed point.
    On the adaptive protocol's joint fits at n = 10^6 (1024 buckets, two collections) a final fit of plain
    EM went from 10,000 steps (the cap, not converged; 0.44 s CPU) to 1,306 (converged, 0.08 s) and one of
    EMS from 6,345 to 1,633 steps (0.31 to 0.11 s). It is off by default here because the one-round estimates
    (their iteration counts, and through the held-out search sometimes their smoothing level) would change
    from those the library has always given; the joint fits of :func:`joint_ems_heldout` use it by default.

    References
    ----------
    R. Varadhan, C. Roland, "Simple and Globally Convergent Methods for Accelerating the Convergence of Any EM
    Algorithm", Scandinavian Journal of Statistics 35(2), 2008 (SQUAREM, the S3 step length).
    """
    if not isinstance(transition, WindowTransition):
        raise TypeError(f"transition must be a WindowTransition; got {type(transition).__name__}")
    check_choice(method, "method", ("ems", "em"))
    max_iter = check_scalar(max_iter, "max_iter", int, low=1)
    rtol, atol = _stopping(tol)
    if smoothing is None:
        smoothing = 1 if method == "ems" else 0
    else:
        smoothing = check_scalar(smoothing, "smoothing", int, low=1)
        if method == "em":
            raise ValueError("smoothing applies to method='ems' only (plain EM does not smooth)")
    start = _check_start(start, transition.n_bins)
    accelerate = _check_accelerate(accelerate)
    n = _check_counts(counts, transition.n_cells)
    x, n_iter, converged, loglik = _run(n, transition, smoothing, max_iter, rtol, atol, start, accelerate)
    return _result(x, n_iter, converged, loglik, method, smoothing)


#: Smoothing strengths :func:`ems_heldout` tries, strongest first (passes of the ½, ¼, ¼ filter per iteration;
#: 0 is plain EM, which wins on spiky or heavy-tailed data).
SMOOTHING_LEVELS = (32, 16, 8, 4, 2, 1, 0)
#: Seed of the fixed binomial thinning in :func:`ems_heldout` (so the estimate is a function of the counts).
HELDOUT_SEED = 0x1D9
#: Stopping step (nats) of the fits on half of the counts that only rank the smoothing levels.
HELDOUT_LOGLIK_STEP = 1e-3
#: The held-out search fits a level on a coarser grid only while it keeps at least this many buckets.
HELDOUT_MIN_BINS = 64
#: No smoothing (level 0) is chosen only when its held-out gain over the level before exceeds this many
#: standard errors of that gain (see :func:`ems_heldout`).
HELDOUT_ZERO_SE = 0.5
#: Folds that score the step to no smoothing: 2 also fits it on the second half of the thinning and scores it
#: on the first (cross-fitting); 1 (the rule before, with ``HELDOUT_ZERO_SE = 0``) uses the first fold only.
HELDOUT_FOLDS = 2
#: Masses of the estimate's upper, then lower, tail that the held-out trim of the support tries to remove, the
#: smallest first (:func:`_trim_tails`; only where the held-out search chose no smoothing). Up to 5e-3 was
#: measured too (19 collections, n = 10^6): on the log-normal at ε = 0.5-1 the larger cut reaches the real tail
#: (0.4% of the people are above 14), range MSE (volume 0.1) +6-11% against +2-3% with the cap at 2e-3, for W1
#: 0.81-0.88 instead of 0.85-0.93 of the untrimmed fit; ε = 2-4 alike.
TRIM_MASSES = (1e-4, 5e-4, 1e-3, 2e-3)
#: Below this many reports the masses above grow as ``sqrt(TRIM_REFERENCE_N / n)``: the phantom mass is noise taken
#: up by the fit, and noise falls as 1/sqrt(n) (measured: 4.8e-3 above 50 on the log-normal at n = 10^5, ε = 4,
#: 128 buckets, against 6-10e-4 at n = 10^6).
TRIM_REFERENCE_N = 1_000_000
#: Steps of each refit of a cut (a cut of phantom mass barely moves the fit; one of real mass loses at once), and the
#: held-out loss (nats) at which the scan of a tail stops.
TRIM_REFIT_MAX_ITER, TRIM_STOP_LOSS = 200, 1.0


def _level_grid(k, d):
    """``(buckets, passes)`` on which the held-out search fits ``k`` smoothing passes at ``d`` buckets.

    ``k`` passes of the ½, ¼, ¼ filter at ``d`` buckets smooth with variance ``k/2`` buckets², which is
    ``k/8`` buckets² of a grid half as fine: the same smoothing as ``k/4`` passes at ``d/2`` buckets. So a
    level ``k`` divisible by ``4^j`` is fitted at ``d/2^j`` buckets with ``k/4^j`` passes (``j`` as large as
    the divisibility, ``d`` and :data:`HELDOUT_MIN_BINS` allow): one pass costs a quarter of the arithmetic,
    on a grid of half the size.
    """
    j = 0
    while k > 0 and k % 4 ** (j + 1) == 0 and d % 2 ** (j + 1) == 0 and d >> (j + 1) >= HELDOUT_MIN_BINS:
        j += 1
    return d >> j, k // 4 ** j


def _regrid(x, d):
    """A positive bucket distribution carried to ``d`` buckets (sum pairs, or split a bucket evenly)."""
    if x is None or x.size == d:
        return x
    if x.size < d:
        f = d // x.size
        return np.repeat(x / f, f)
    return x.reshape(d, -1).sum(axis=1)


def _thin(n, seed):
    """Split counts into two halves by binomial thinning with p = ½ (fractional parts split evenly).

    For multinomial counts the halves are two multinomial samples of random sizes around ``n/2`` from the
    same cell probabilities, independent given their sizes: one fits, the other scores.
    """
    whole = np.floor(n)
    first = np.random.default_rng(seed).binomial(whole.astype(np.int64), 0.5).astype(np.float64)
    first += (n - whole) / 2
    return first, n - first


def _gain(held, log_y, best_log):
    """Held-out gain of a level over the one before, and its standard error.

    ``G = Σ_j b_j Δ_j`` with ``Δ_j`` the change of ``log (M x)_j``; its SE is the multinomial one given the
    fits, ``sqrt(Σ_j b_j Δ_j² − G²/Σ_j b_j)``.
    """
    delta = log_y - best_log
    g = float(np.dot(held, delta))
    var = float(np.dot(held, delta * delta)) - g * g / float(held.sum())
    return g, math.sqrt(max(var, 0.0))


def _best_level(levels, folds, margin=None):
    """The held-out search of :func:`ems_heldout`: ``(best level, iterations, fell back)``.

    ``folds`` is a list of ``(held, fit)``: ``fit(k, x)`` fits level ``k`` to one half of the thinning, from
    ``x`` (None: uniform), and returns ``(x, iterations, log (M x)_j)`` at the cells of the other half, whose
    counts are ``held``. The search runs on the first fold (each level warm from the one before) and stops at
    the first level that scores lower than the one before. Level 0 (no smoothing) is confirmed before it is
    chosen: the other folds fit the level before it and level 0 the same way (from the start the first fold
    used), the gains of all folds are added (:func:`_gain`, their variances too), and level 0 must gain more
    than :data:`HELDOUT_ZERO_SE` standard errors. When it gains less, but its first-fold score was higher,
    the level before it is kept and ``fell back`` is True. ``margin`` (default :data:`HELDOUT_ZERO_SE`) is that
    number of standard errors; 0 with one fold is the rule without confirmation. Returns ``(best level,
    iterations, fell back, zero fits)``: the last is, when level 0 is chosen on every fold, each fold's level-0
    fit and its held-out ``log (M x)_j`` (fitted on its own half only), for :func:`_trim_tails`; else None.
    """
    margin = HELDOUT_ZERO_SE if margin is None else margin
    (held, fit), others = folds[0], folds[1:]
    best_k, best_log, best_start, x, total = levels[0], None, None, None, 0
    zero_fits = None
    for k in levels:
        start = x
        x, it, log_y = fit(k, x)
        total += it
        if k == 0:
            zero_fits = [(x, log_y)]
        if best_log is not None:
            g, se = _gain(held, log_y, best_log)
            if not g > 0.0:
                break
            if k == 0:
                var = se * se
                for held_f, fit_f in others:
                    x_f, it_prev, prev_f = fit_f(best_k, best_start)
                    x_0, it_0, log_f = fit_f(0, x_f)
                    zero_fits.append((x_0, log_f))
                    total += it_prev + it_0
                    g_f, se_f = _gain(held_f, log_f, prev_f)
                    g, var = g + g_f, var + se_f * se_f
                if not g > margin * math.sqrt(var):
                    return best_k, total, True, None
        best_k, best_log, best_start = k, log_y, start
    return best_k, total, False, (zero_fits if best_k == 0 and zero_fits and len(zero_fits) == len(folds) else None)


def _tail_mask(x, lower, upper):
    """Buckets kept once the tails of mass ``lower`` and ``upper`` of the distribution ``x`` are cut (at least one).

    The kept run starts at the first bucket whose cumulative mass exceeds ``lower`` and ends at the first one
    whose cumulative mass reaches ``1 - upper``, so at most ``lower`` and ``upper`` of ``x``'s mass is cut.
    """
    c = np.cumsum(x)
    lo = int(np.searchsorted(c, lower, side="right")) if lower > 0 else 0
    hi = min(int(np.searchsorted(c, 1.0 - upper, side="left")) + 1, x.size) if upper > 0 else x.size
    keep = np.zeros(x.size, dtype=bool)
    keep[lo:max(hi, lo + 1)] = True
    return keep


def trim_masses(n_reports: float) -> tuple[float, ...]:
    """The tail masses the held-out trim of the support tries for ``n_reports`` reports.

    :data:`TRIM_MASSES`, times ``sqrt(TRIM_REFERENCE_N / n_reports)`` below :data:`TRIM_REFERENCE_N` reports
    (each at most 0.5).

    >>> trim_masses(10**6) == TRIM_MASSES, round(trim_masses(10**4)[0], 6)
    (True, 0.001)
    """
    scale = math.sqrt(TRIM_REFERENCE_N / n_reports) if 0 < n_reports < TRIM_REFERENCE_N else 1.0
    return tuple(min(0.5, m * scale) for m in TRIM_MASSES)


def _trim_tails(x, folds, zero_fits, n_reports):
    """The held-out trim of the support: ``(kept buckets or None, iterations)``.

    ``x`` is a level-0 (plain EM) estimate; ``folds`` as for :func:`_best_level` and ``zero_fits`` its level-0 fit
    of each fold (fitted on that fold's half only: never from ``x``, which has seen the held-out half). For each
    mass of :func:`trim_masses` (``n_reports`` the counts' total), plain EM is fitted again to each half from its fit with that much of ``x``'s
    upper tail cut away (at most :data:`TRIM_REFIT_MAX_ITER` steps), and scored on the other half. The cut whose held-out log-likelihood, summed over the folds, gains
    the most over the uncut fit is kept if it gains at all (the scan stops at the first cut that loses more than
    :data:`TRIM_STOP_LOSS` nats); then the lower tail the same way. None: no cut.
    """
    own = [(held, fit, x_h, log_h) for (held, fit), (x_h, log_h) in zip(folds, zero_fits)]
    total = 0
    cut = [0.0, 0.0]  # lower, upper
    for side in (1, 0):
        best_gain, best_mass, tried = 0.0, 0.0, [_tail_mask(x, *cut)]
        for mass in trim_masses(n_reports):
            trial = list(cut)
            trial[side] = mass
            keep = _tail_mask(x, *trial)
            if any(np.array_equal(keep, k) for k in tried):
                continue
            tried.append(keep)
            gain = 0.0
            for held, fit, x_h, log_h in own:
                start = np.where(keep, x_h, 0.0)
                if not start.sum() > 0:
                    gain = -np.inf
                    break
                _, it, log_t = fit(0, start / start.sum(), TRIM_REFIT_MAX_ITER)
                total += it
                gain += float(np.dot(held, log_t - log_h))
            if gain > best_gain:
                best_gain, best_mass = gain, mass
            elif gain < -TRIM_STOP_LOSS:  # the cut reaches mass the data hold: larger ones only lose more
                break
        cut[side] = best_mass
    keep = _tail_mask(x, *cut)
    return (None if keep.all() else keep), total


def _final_level(best_k):
    """Passes of the fit on all the counts: half the level chosen on half of them (0 and 1 kept)."""
    return best_k // 2 if best_k > 1 else best_k


def _check_levels(levels):
    if levels is None:
        return list(SMOOTHING_LEVELS)
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__len__") or len(levels) == 0:
        raise TypeError("levels must be a non-empty sequence of integers")
    levels = [check_scalar(k, "levels", int, low=0) for k in levels]
    if any(a <= b for a, b in zip(levels, levels[1:])):
        raise ValueError(f"levels must be strictly decreasing; got {levels}")
    return levels


def ems_heldout(counts: ArrayLike, transition: WindowTransition, *, levels: Sequence[int] | None = None,
                max_iter: int = DEFAULT_MAX_ITER, tol: float | None = None, accelerate: bool = False,
                trim: bool = True) -> EMResult:
    """EMS with its smoothing strength chosen by held-out likelihood on a thinning of the counts.

    EMS smooths once per iteration; how much smoothing the fixed point needs depends on the noise (n, ε)
    and on the shape: on Beta(5, 2) with 1024 buckets one pass is too little at n = 1e5 (16-32 passes
    lower W1 by up to 24%) and right at n = 1e6, ε <= 2, while on a log-normal tail any pass spreads the
    spike (KS 3-5x that of plain EM). This chooses the strength from the data:

    1. split the counts by binomial thinning, ``n = a + b`` with ``a_j ~ Binomial(n_j, ½)`` (a fixed seed,
       so the estimate depends on the counts alone);
    2. for ``k`` in ``levels`` (strongest first, each fit warm-started from the previous one) fit EMS with
       ``k`` smoothing passes per iteration to ``a`` and score it by the held-out log-likelihood
       ``Σ_j b_j log (M x_k)_j``; stop at the first level that scores lower than the one before. A level
       divisible by 4 is fitted on a coarser grid with the same smoothing variance (``k`` passes at ``d``
       buckets as ``k/4`` passes at ``d/2``; see ``_level_grid``). No smoothing (level 0) is confirmed
       before it is chosen: the level ``p`` before it and level 0 are also fitted to ``b`` and scored on
       ``a`` (cross-fitting), and the gain of 0 over ``p``, summed over both directions, must exceed
       ``HELDOUT_ZERO_SE = 0.5`` standard errors, ``sqrt(Σ_j b_j Δ_j² − G²/Σ_j b_j)`` per direction from the
       per-cell held-out terms ``b_j Δ_j`` (``Δ_j`` the change of ``log (M x)_j``, ``G`` their sum), the
       directions' variances added. When it does not, ``p`` is kept and the result says so
       (``smoothing_fallback=True``). Discrete mode (one bucket per integer of the support) keeps the search
       without this confirmation: there a spike is the model rather than noise, and on a count column with
       31% zeros (n = 5,000, ε = 2) the confirmation kept one pass, which moved a quarter of the zeros to 1
       and the lower quartile from 0 to 1 (not measured beyond that case);
    3. fit the full counts from the uniform start with ``k*/2`` passes (``k*`` itself when it is 0 or 1:
       half the data needs more smoothing than all of it, and halving was measured to track the best
       level of the full data). So the result is exactly EMS (``"ems"``) whenever ``k*`` is 1 or 2, and
       exactly EM's whenever it is 0 and step 4 cuts nothing;
    4. when no smoothing was chosen (``k* = 0``) and ``trim`` is set, the **held-out trim of the support**
       (``_trim_tails``): plain EM puts mass where nobody is. Over the empty part of wide bounds the report
       counts fluctuate; the fit cannot go below zero where they fall short and takes up the excess where they
       run over, most of it at the edge of the bounds (a log-normal on (0, 100), n = 10^6: 6-10 × 10^-4 of the
       mass above 50, where the people hold 5 × 10^-5, at ε = 1 and 4 alike; running EM longer keeps it). That
       mass, tens of units from where it belongs, can be most of W1. So tails of the estimate of mass
       ``trim_masses(n)`` (10^-4 to 2 × 10^-3 from 10^6 reports, growing as 1/sqrt(n) below; the upper tail,
       then the lower one) are cut from each half's own
       level-0 fit of step 2, each cut is refitted (at most ``TRIM_REFIT_MAX_ITER`` steps) and scored on the
       other half, and the cut with the largest summed held-out gain, if any gains, is kept: the final fit is
       run again from the uniform distribution on the kept buckets (EM never revives a zero bucket). A cut of
       real mass loses held-out likelihood at once, so the data's own tails stay. Measured
       (``python bench/adaptive.py --collections 19``, n = 10^6, 1024 buckets, ratios of means to the
       untrimmed fit on the same reports, W1 / KS / range MSE of volumes 0.1 and 0.5): the log-normal on
       (0, 100) at ε = 0.5 / 1 / 2 / 4, W1 0.85 / 0.93 / 0.70 / 0.45, KS 0.99-1.01, range MSE 0.93-1.03 at
       ε <= 2 and 0.94 / 0.74 at ε = 4; five point masses on a Beta(2, 5), W1 0.98-0.99, the rest 0.99-1.00; the flights'
       distances, W1 1.00-1.02, the rest 1.00-1.01 (a tail of long flights too faint to see at ε <= 1 is cut);
       smooth data (Beta(5, 2), a Gaussian) untouched (a smoothing level is chosen there). Time: the cuts
       refit warm from the halves' fits; the bench's medians of privatize + aggregate + estimate went from
       0.29 to 0.41 s (log-normal), 0.56 to 0.85 s (point masses) and 0.54 to 0.76 s (flights' distances).

    Level 0 is plain EM: on spiky or heavy-tailed data (most of the mass in a few buckets) any smoothing
    pass spreads the spike, and the held-out likelihood says so. At small n the score of one thinning is
    noisy, and plain EM used to win by chance on smooth data: Seattle's hourly temperatures of 2010
    (n = 8,759, bounds [0, 100] °F) chose it in 84% of collections at ε = 0.5 and 15% at ε = 2, and its
    spiky density had up to twice the KS error of EMS. The confirmation above is what keeps it from
    doing so. Measured (``python bench/ems_cv_small_n.py``; Square Wave, default buckets; 200 collections
    per cell for Seattle, 40 for the rest; share of collections whose final fit is plain EM, old → new,
    and KS against the sample, mean and 90th percentile, old → new):

    ========================================  ====  =========  ===============  ===============
    data, n                                    ε    plain EM   KS mean          KS p90
    ========================================  ====  =========  ===============  ===============
    Seattle temperature [0, 100] °F, 8,759    0.5   84% → 28%  0.133 → 0.124    0.179 → 0.165
    Seattle temperature [0, 100] °F, 8,759    2     20% → 7%   0.047 → 0.043    0.072 → 0.054
    Seattle temperature [30, 80] °F, 8,759    0.5   50% → 7%   0.108 → 0.089    0.158 → 0.129
    flights dep_time, 2,000                   0.5   45% → 10%  0.159 → 0.131    0.220 → 0.185
    flights dep_time, 2,000                   1     40% → 10%  0.100 → 0.085    0.156 → 0.125
    flights dep_time, 8,759                   0.5   48% → 15%  0.106 → 0.089    0.163 → 0.154
    flights dep_time, 30,000                  0.5   20% → 2%   0.062 → 0.057    0.086 → 0.075
    flights distance, 2,000                   1     8% → 2%    0.123 → 0.116    0.152 → 0.150
    flights distance, 8,759                   1     30% → 8%   0.093 → 0.085    0.125 → 0.101
    Beta(5, 2), 2,000                         0.5   32% → 18%  0.142 → 0.127    0.219 → 0.193
    Beta(5, 2), 2,000                         1     22% → 2%   0.089 → 0.070    0.170 → 0.095
    ========================================  ====  =========  ===============  ===============

    Over 200 Seattle collections the wide bound [0, 100] °F at ε = 0.5 still ends on plain EM in 28% (its
    confirmation kept the smoothed level in 56%: ``smoothing_fallback``), at ε ≥ 1 in at most 7%; the tight
    bound [30, 80] °F in at most 7% at every ε.
    The other cells of n ∈ {2,000, 8,759, 30,000} × ε ∈ {0.5, 1, 2, 4} changed by less than 0.003 in KS
    (most not at all: the rules differ only where the first fold prefers plain EM); the only ones for the
    worse are Seattle [0, 100] at ε = 0.5 in W1 (0.0269 → 0.0271) and the flights' distances at n = 8,759,
    ε = 4 in KS (0.0441 → 0.0443). At large n (5 collections, the cases above): Beta(5, 2) at n = 1e5 and 1e6 and the
    log-normal at 1e5 choose exactly as before (the log-normal's plain EM wins by 3.6-5 SE); the flights'
    departure times at ε = 0.5 keep one pass in one collection of 5 (W1 0.0074 → 0.0071); their distances
    at ε = 0.5 leave plain EM in one collection of 5 (W1 0.0090 → 0.0093, KS 0.0545 → 0.0555), unchanged at
    ε ≥ 1. Time: two more half fits (the level before 0 and 0) on the collections where plain EM is in
    question; median of 5 calls of ``estimate_distribution``, old → new: Seattle at ε = 0.5, 57 → 74 ms, at
    ε = 2, 30 → 45 ms; the flights' distances at ε = 0.5 (plain EM's slow half fits), 344 → 574 ms;
    Beta(5, 2) at n = 1e5, ε = 1 (no confirmation), 33 → 37 ms, within the noise of a shared machine.

    Parameters
    ----------
    counts, transition, max_iter, tol
        As for :func:`expectation_maximization` (``tol`` is the stopping rule of the final fit).
    levels : sequence of int
        Smoothing passes to try, in decreasing order (default :data:`SMOOTHING_LEVELS`).
    accelerate : bool, default False
        Every fit (the half fits and the final fit) with SQUAREM, as :func:`expectation_maximization`.
    trim : bool, default True
        Step 4, the held-out trim of the support (only where no smoothing is chosen, and not in discrete
        mode). False gives the estimate of the search and final fit alone (plain EM at level 0).

    Returns
    -------
    EMResult
        ``method="ems-cv"``, ``smoothing`` the passes of the final fit, ``smoothing_fallback`` whether the
        confirmation of level 0 failed (the level before it was kept); ``n_iter`` counts all iterations
        (half fits and the final fit); ``loglik`` is the final fit's trace.

    Notes
    -----
    Post-processing of the aggregate: costs no privacy. The half fits stop at a gain of
    ``HELDOUT_LOGLIK_STEP`` nats; a weaker level other than 0 must raise the held-out log-likelihood at
    all (a one-standard-error margin on every step was measured and dropped: it over-smoothed the flights'
    departure times, W1 +7-10% at ε = 1-2). For level 0 three rules were measured against the old one
    (``bench/experiments/cv_rules.py``): a margin of 2 SE on the one fold stopped the small-n failures but
    also real spikes (log-normal, n = 1e5, ε = 4: KS 0.024 to 0.089; flights' distances, n = 328,521,
    ε = 0.5-1: W1 +23-28%); scoring every level on both folds (cross-fitting the whole search) changed the
    levels of smooth data too (Beta(5, 2), n = 1e5, ε = 2: KS +10%) and cost 1.5-2x the time; confirming
    level 0 alone on the second fold (kept) leaves every other choice as it was and costs two more half
    fits only when level 0 is in question. Its margin: the sum of both folds' gains alone (0 SE) still chose
    plain EM in 62% of 40 Seattle collections at ε = 0.5 (KS 0.134); 0.5 SE in 33% (KS 0.123) and 1 SE in
    20% (KS 0.123), while on the flights' distances (n = 328,521, 5 collections) 0.5 SE moved one collection
    off plain EM at ε = 0.5 (W1 +3%) and none at ε = 1, and 1 SE two and one (W1 +5% and +8%). Cost: the half fits plus one full fit, about 2x the iterations of EMS on
    smooth data; when plain EM wins (level 0), EM's own slow convergence dominates (as slow as
    ``"em"``, 2-3x with the half fits). Fitting the levels divisible by 4 on the coarser grid of the same
    smoothing variance (step 2) cut the CPU time at 1024 buckets by 30% at ε = 0.5 (Beta(5, 2), n = 1e5:
    41 to 28 ms) and 10-30% elsewhere, and picked the same level as the fine grid in 47 of 48 cases
    (Beta(5, 2) at n = 1e5 and 1e6, log-normal, 3 seeds, flight departure times and distances, ε ∈ {0.5, 1,
    2, 4}; the other picked 16 passes instead of 32, W1 +1%). Warm-starting the full fit from the half fit
    was measured again and dropped (log-normal KS +10-116%); stopping the half fits at 3e-3 or 1e-2 nats
    changed the chosen level in 8 and 19 of 44 cases.

    References
    ----------
    Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under
    Local Differential Privacy", SIGMOD 2020 (EMS). Held-out likelihood by binomial thinning of counts:
    the Poisson/multinomial data splitting of J. Leiner, B. Duan, L. Wasserman, A. Ramdas, "Data Fission:
    Splitting a Single Data Point", JASA 2023.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> from ldpnum.estimation.em import ems_heldout, window_transition_from_plan
    >>> sw = ldp.SquareWave(epsilon=2.0, bounds=(0, 1))
    >>> agg = sw.aggregate(sw.privatize(np.random.default_rng(0).beta(5, 2, 100_000), rng=1))
    >>> res = ems_heldout(agg.counts, window_transition_from_plan(sw.plan, 256))
    >>> res.method, res.smoothing >= 1, bool(abs(res.x.sum() - 1) < 1e-12)
    ('ems-cv', True, True)
    """
    if not isinstance(transition, WindowTransition):
        raise TypeError(f"transition must be a WindowTransition; got {type(transition).__name__}")
    max_iter = check_scalar(max_iter, "max_iter", int, low=1)
    rtol, atol = _stopping(tol)
    levels = _check_levels(levels)
    accelerate = _check_accelerate(accelerate)
    trim = _check_trim(trim)
    n = _check_counts(counts, transition.n_cells)
    halves = _thin(n, HELDOUT_SEED)
    t = transition
    grids: dict[int, Any] = {}

    def fold(fitted, held):
        scored = held > 0

        def fit(k, x, cap=None):
            d_k, passes = (t.n_bins, k) if t.points or t.warped else _level_grid(k, t.n_bins)
            t_k = grids.setdefault(d_k, t.with_bins(d_k))
            x, it, _, _ = _run(fitted, t_k, passes, cap or max_iter, 0.0, HELDOUT_LOGLIK_STEP, _regrid(x, d_k),
                               accelerate)
            return x, it, np.log(np.maximum(t_k.forward(x)[scored], np.finfo(float).tiny))

        return held[scored], fit

    # Discrete mode (one bucket per integer) keeps the rule without confirmation: its buckets are the support's
    # points, where a spike is the model rather than noise (see the docstring).
    pairs = list(zip(halves, halves[::-1]))[:1 if t.points else HELDOUT_FOLDS]
    folds = [fold(fitted, held) for fitted, held in pairs if fitted.sum() > 0 and held.sum() > 0]
    best_k, total_iter, fallback, zero_fits = levels[0], 0, False, None
    if folds:
        best_k, total_iter, fallback, zero_fits = _best_level(levels, folds, 0.0 if t.points else None)
    final = _final_level(best_k)
    x, it, converged, loglik = _run(n, t, final, max_iter, rtol, atol, None, accelerate)
    if trim and final == 0 and zero_fits is not None and not t.points:
        keep, trim_iter = _trim_tails(x, folds, zero_fits, float(n.sum()))
        total_iter += trim_iter
        if keep is not None:  # the final fit again, from the uniform distribution on the kept buckets
            x, it_kept, converged, loglik = _run(n, t, 0, max_iter, rtol, atol, keep / keep.sum(), accelerate)
            it += it_kept
    return _result(x, total_iter + it, converged, loglik, "ems-cv", final, fallback)


def _check_parts(parts):
    """``[(counts, transition), ...]``: one or two collections through the same window over the same buckets.

    Collections without reports are dropped (they add nothing to the likelihood); at least one must have some.
    """
    if isinstance(parts, (str, bytes)) or not hasattr(parts, "__len__") or not 1 <= len(parts) <= 2:
        raise TypeError("parts must be a sequence of one or two (counts, transition) pairs")
    out = []
    for counts, t in parts:
        if not isinstance(t, WindowTransition):
            raise TypeError(f"parts: a transition must be a WindowTransition; got {type(t).__name__}")
        first = parts[0][1]
        if (t.n_bins, t.n_cells, t.m, t.p_lo, t.p_hi) != (first.n_bins, first.n_cells, first.m, first.p_lo,
                                                          first.p_hi) or \
                (t.delta is None) != (first.delta is None) or (t.delta is not None and
                                                               not np.array_equal(t.delta, first.delta)):
            raise ValueError("parts: every transition must have the same window and buckets (one plan, one grid)")
        arr = np.asarray(counts)
        if arr.shape != (t.n_cells,):
            raise ValueError(f"counts must have one entry per output cell ({t.n_cells}); got shape {arr.shape}")
        if arr.any():
            out.append((_check_counts(arr, t.n_cells), t))
    if not out:
        raise ValueError("counts are all zero: no reports to estimate from")
    return out


def _smoothed_index(pinned, n_bins):
    """Increasing indices of the buckets the smoothing acts on (``None``: all), from a mask of pinned buckets."""
    if pinned is None:
        return None
    mask = np.asarray(pinned)
    if mask.dtype != np.bool_ or mask.shape != (n_bins,):
        raise ValueError(f"pinned must be a boolean mask of the {n_bins} buckets; got dtype {mask.dtype}, "
                         f"shape {mask.shape}")
    if mask.all():
        raise ValueError("pinned: every bucket is pinned; nothing is left to smooth")
    return np.ascontiguousarray(np.flatnonzero(~mask), dtype=np.int64) if mask.any() else None


def _atom_layout(parts, pinned):
    """Parts whose transitions give every pinned bucket an atom column next to it, for :func:`_joint_run`.

    Returns ``(parts, smoothed, collapse)``: bucket ``i`` keeps its column (the continuous part, smoothed
    with every other bucket as one sequence) and a pinned bucket gets a copy of its column right after it
    (its atom, never smoothed; next to it, so the band stays narrow); ``collapse(x)`` adds each atom to its
    bucket. Without pinned buckets, the parts as they are.
    """
    mask = np.asarray(pinned)
    _smoothed_index(mask, parts[0][1].n_bins)  # validates the mask
    if not mask.any():
        return parts, None, _identity
    d = mask.size
    twice = 1 + mask.astype(np.int64)
    order = np.repeat(np.arange(d), twice)                        # extended column -> its bucket
    first = np.concatenate([[0], np.cumsum(twice)[:-1]])           # the continuous column of each bucket
    atom = first[mask] + 1
    out = []
    for n, t in parts:
        cnt = np.diff(t.indptr)[order]
        indptr = np.concatenate([[0], np.cumsum(cnt)])
        take = np.arange(int(indptr[-1]), dtype=np.int64) - np.repeat(indptr[:-1] - t.indptr[order], cnt)
        out.append((n, WindowTransition(n_cells=t.n_cells, m=t.m, p_hi=t.p_hi, p_lo=t.p_lo, n_bins=order.size,
                                        indptr=indptr, s_index=t.s_index[take], weight=t.weight[take],
                                        delta=t.delta, warped=True)))

    def collapse(x):
        y = x[first].copy()
        y[mask] += x[atom]
        return y

    return out, np.ascontiguousarray(first, dtype=np.int64), collapse


def _joint_run(parts, smoothing, max_iter, atol, start, smoothed=None, accelerate=False):
    """EM / EMS over one or two collections: ``(x, n_iter, converged, loglik)``.

    One collection runs ``em_window``, two ``em_window_joint``; ``smoothed`` (increasing bucket indices, None for
    all) are the buckets the smoothing acts on; ``accelerate``: SQUAREM.
    """
    if len(parts) == 1 and smoothed is None:
        return _run(parts[0][0], parts[0][1], smoothing, max_iter, 0.0, atol, start, accelerate)
    warm = start is not None
    x = start.copy() if warm else np.empty(parts[0][1].n_bins)
    loglik = np.empty(max_iter + 1)
    if len(parts) == 1:
        (na, ta), = parts
        n_iter, converged = server_em.em_window(na, ta.m, ta.indptr, ta.s_index, ta.weight, ta.p_lo, ta.p_hi,
                                                _EMPTY if ta.delta is None else ta.delta, smoothing, max_iter, 0.0,
                                                atol, x, loglik, warm, smoothed, accelerate)
        return x, n_iter, converged, loglik[:n_iter + 1].copy()
    (na, ta), (nb, tb) = parts
    n_iter, converged = server_em.em_window_joint(na, ta.indptr, ta.s_index, ta.weight, nb, tb.indptr, tb.s_index,
                                                  tb.weight, ta.m, ta.p_lo, ta.p_hi,
                                                  _EMPTY if ta.delta is None else ta.delta, smoothing, max_iter, 0.0,
                                                  atol, x, loglik, warm, smoothed, accelerate)
    return x, n_iter, converged, loglik[:n_iter + 1].copy()


def joint_expectation_maximization(parts: Sequence[tuple[ArrayLike, WindowTransition]], *, smoothing: int = 0,
                                   max_iter: int = DEFAULT_MAX_ITER, start: ArrayLike | None = None,
                                   pinned: ArrayLike | None = None, accelerate: bool = True,
                                   atoms: bool = False) -> EMResult:
    r"""EM (or EMS) over two collections of reports about one distribution, each with its own exact transition.

    People report in one of several rounds (a pilot and a second round adapted to it, say); round ``r``
    reports with transition :math:`M_r` over the same input buckets. The log-likelihood of all reports is
    :math:`\sum_r \sum_j n_{rj} \log (M_r x)_j` and its EM step is

    .. math:: x_i \leftarrow \frac{x_i}{N} \sum_r \sum_j n_{rj} \frac{M_r[j, i]}{(M_r x)_j},
              \qquad N = \sum_{r, j} n_{rj},

    followed, for EMS, by ``smoothing`` passes of the ½, ¼, ¼ filter (as in :func:`expectation_maximization`).
    It stops once an iteration gains less than ``DEFAULT_LOGLIK_STEP`` nats, or after ``max_iter``.

    Parameters
    ----------
    parts : sequence of one or two (counts, WindowTransition)
        Each collection's cell counts and exact transition: the same window (one plan) and the same buckets,
        with their own bands (a plain and a warped Square Wave, say).
    smoothing : int, default 0
        Smoothing passes per iteration (0: plain EM).
    max_iter : int
    start : array of n_bins positive numbers, optional
    pinned : array of n_bins bool, optional
        Buckets left out of the smoothing (point masses the fit keeps sharp): the filter runs over the other
        buckets as one sequence, so a pinned bucket neither spreads its mass nor receives its neighbours'.
    accelerate : bool, default True
        Accelerate the fixed-point iteration with SQUAREM (Varadhan & Roland), as described for
        :func:`expectation_maximization`: the same map and stopping rule in fewer steps. On by default here: see
        :func:`joint_ems_heldout`.
    atoms : bool, default False
        With ``pinned``: instead of leaving the pinned buckets out of the smoothing, model each as a continuous
        part plus an atom, :math:`x_i = c_i + a_i`. The continuous parts :math:`c` of all buckets are smoothed
        as one sequence (the background runs smoothly through a point mass) and the atoms :math:`a`, only at
        pinned buckets, are not; both share the bucket's column of the transition, so EM splits the bucket's
        share between them in proportion, and the result is :math:`c + a`.

    Returns
    -------
    EMResult
        ``method="em"`` or ``"ems"``.

    Examples
    --------
    Two rounds of the same Square Wave: the joint fit is the fit of the merged counts.

    >>> import numpy as np, ldpnum as ldp
    >>> from ldpnum.estimation.em import (expectation_maximization, joint_expectation_maximization,
    ...                                   window_transition_from_plan)
    >>> sw = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> x = np.random.default_rng(0).beta(5, 2, 20_000)
    >>> a, b = (sw.aggregate(sw.privatize(x[s], rng=1)).counts for s in (slice(0, 5000), slice(5000, None)))
    >>> t = window_transition_from_plan(sw.plan, 64)
    >>> joint = joint_expectation_maximization([(a, t), (b, t)], smoothing=1)
    >>> one = expectation_maximization(a + b, t, method="ems", accelerate=True)
    >>> bool(np.allclose(joint.x, one.x, atol=1e-6)), joint.n_iter == one.n_iter
    (True, True)
    >>> plain = joint_expectation_maximization([(a, t), (b, t)], smoothing=1, max_iter=200, accelerate=False)
    >>> bool(np.allclose(plain.x, expectation_maximization(a + b, t, method="ems", max_iter=200, tol=0).x,
    ...                  atol=1e-6))
    True
    """
    checked = _check_parts(parts)
    smoothing = check_scalar(smoothing, "smoothing", int, low=0)
    max_iter = check_scalar(max_iter, "max_iter", int, low=1)
    start = _check_start(start, checked[0][1].n_bins)
    smoothed = _smoothed_index(pinned, checked[0][1].n_bins)
    accelerate = _check_accelerate(accelerate)
    collapse = _identity
    if _check_atoms(atoms) and pinned is not None:
        checked, smoothed, collapse = _atom_layout(checked, pinned)
        if start is not None:
            start = _atom_start(start, pinned)
    x, n_iter, converged, loglik = _joint_run(checked, smoothing, max_iter, DEFAULT_LOGLIK_STEP, start, smoothed,
                                              accelerate)
    return _result(collapse(x), n_iter, converged, loglik, "ems" if smoothing else "em", smoothing)


def _identity(x):
    return x


def _check_atoms(atoms):
    return _check_flag(atoms, "atoms")


def _atom_start(start, pinned):
    """A start over the buckets carried to the atom layout: a pinned bucket's share split evenly between its parts."""
    mask = np.asarray(pinned)
    twice = 1 + mask.astype(np.int64)
    return np.repeat(start / twice, twice)


def joint_ems_heldout(parts: Sequence[tuple[ArrayLike, WindowTransition]], *, levels: Sequence[int] | None = None,
                      max_iter: int = DEFAULT_MAX_ITER, pinned: ArrayLike | None = None,
                      search_max_iter: int | None = None, accelerate: bool = True, atoms: bool = False,
                      trim: bool = True) -> EMResult:
    """:func:`ems_heldout` over two collections: one smoothing level chosen by their summed held-out likelihood.

    Every collection's counts are thinned (the same fixed seed, one sub-stream each); the levels are fitted
    jointly (:func:`joint_expectation_maximization`) on the first halves, scored on the second halves, and the
    final joint fit on all the counts uses half the best level, as :func:`ems_heldout` does; no smoothing is
    confirmed the same way (fitted on the second halves and scored on the first too, past ``HELDOUT_ZERO_SE``
    standard errors). All levels are fitted on the transitions' own buckets. ``pinned`` buckets are left out of
    every fit's smoothing (:func:`joint_expectation_maximization`). ``search_max_iter`` caps the fits on halves
    that only rank the levels (default ``max_iter``); the final fit runs to ``max_iter``. ``accelerate`` (default
    True): the final fit with SQUAREM (:func:`joint_expectation_maximization`); the fits on halves that rank the
    levels stay plain. Accelerating them too was measured on the adaptive protocol's spiky data (n = 10^6, CPU
    seconds on a loaded 2-core machine: ε = 1, 17,200 steps and 0.84 s to 6,150 and 0.45 s), but it changes the
    level chosen (more converged half fits of plain EM score lower on the held-out halves): over 10 paired
    collections at ε = 1, W1 1.06× and range MSE 1.15-1.25× the plain search's. ``atoms``: the pinned buckets as
    a smoothed continuous part plus an unsmoothed atom, in every fit (:func:`joint_expectation_maximization`).
    ``trim`` (default True): where no smoothing is chosen (and without ``atoms``), the held-out trim of the
    support of :func:`ems_heldout` (step 4) on the joint fits of the halves.

    Returns
    -------
    EMResult
        ``method="ems-cv"``; ``smoothing_fallback`` as for :func:`ems_heldout`.
    """
    checked = _check_parts(parts)
    levels = _check_levels(levels)
    max_iter = check_scalar(max_iter, "max_iter", int, low=1)
    search_iter = max_iter if search_max_iter is None else check_scalar(search_max_iter, "search_max_iter", int,
                                                                         low=1)
    halves = [_thin(n, HELDOUT_SEED + r) for r, (n, _) in enumerate(checked)]
    smoothed = _smoothed_index(pinned, checked[0][1].n_bins)
    accelerate = _check_accelerate(accelerate)
    trim = _check_trim(trim)
    collapse = _identity
    if _check_atoms(atoms) and pinned is not None:
        checked, smoothed, collapse = _atom_layout(checked, pinned)
    transitions = [t for _, t in checked]

    def fold(side):
        fitted = [(h[side], t) for h, t in zip(halves, transitions) if h[side].sum() > 0]
        scored = [h[1 - side] > 0 for h in halves]
        held = np.concatenate([h[1 - side][s] for h, s in zip(halves, scored)])

        def fit(k, x, cap=None):
            x, it, _, _ = _joint_run(fitted, k, cap or search_iter, HELDOUT_LOGLIK_STEP, x, smoothed, False)
            logs = [np.log(np.maximum(t.forward(x)[s], np.finfo(float).tiny)) for t, s in zip(transitions, scored)]
            return x, it, np.concatenate(logs)

        return (held, fit) if fitted and held.sum() > 0 else None

    folds = [f for f in (fold(side) for side in range(HELDOUT_FOLDS)) if f is not None]
    best_k, total_iter, fallback, zero_fits = levels[0], 0, False, None
    if folds:
        best_k, total_iter, fallback, zero_fits = _best_level(levels, folds)
    final = _final_level(best_k)
    x, it, converged, loglik = _joint_run(checked, final, max_iter, DEFAULT_LOGLIK_STEP, None, smoothed, accelerate)
    if trim and final == 0 and zero_fits is not None and collapse is _identity:
        keep, trim_iter = _trim_tails(x, folds, zero_fits, float(sum(c.sum() for c, _ in checked)))
        total_iter += trim_iter
        if keep is not None:  # the final fit again, from the uniform distribution on the kept buckets
            x, it_kept, converged, loglik = _joint_run(checked, 0, max_iter, DEFAULT_LOGLIK_STEP, keep / keep.sum(),
                                                       smoothed, accelerate)
            it += it_kept
    return _result(collapse(x), total_iter + it, converged, loglik, "ems-cv", final, fallback)
