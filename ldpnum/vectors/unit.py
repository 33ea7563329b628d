r"""Unit vectors (the ℓ2 ball): PrivHS, and PrivUnit and PrivUnitG compressed to seed indices.

Each person holds a vector ``x`` of ``dim`` numbers with ``‖x‖ <= 1`` and sends a report of a few bytes:
an index into a finite, public family of directions (design rule R1 for vectors). The collector
regenerates each report's direction, sums them in fixed point, and estimates the mean vector without bias.

**Rounding to the sphere.** A row with ``0 < ‖x‖ = r <= 1`` becomes ``w = x/r`` with probability
``(1 + r)/2`` and ``-x/r`` otherwise (an integer threshold ``floor((1 + r)/2 · 2**53)`` on a 53-bit draw), so
``E[w] = x`` up to ``2**-52``; ``x = 0`` becomes ``±e_1`` with probability 1/2 each. Every randomizer below
takes a unit vector ``w`` and its decoder is unbiased for ``w``, hence for ``x``. Rows whose norm exceeds 1
by more than :data:`NORM_TOLERANCE` raise, or with ``clip=True`` are scaled to norm 1 (one
``ClippingWarning`` counts them); rows within the tolerance count as norm 1.

**The public family.** Seed ``s`` names ``g_s``, ``dim`` standard normals from a counter-based generator
(coordinate ``j`` from SplitMix64 of ``(s, j, r)``, ``r = 0, 1, ...``, through Marsaglia and Tsang's ziggurat;
:mod:`ldpnum._kernels.client_unit` gives the formulas, the counter layout and the bound ``|g_j| < 12.23``).
Its name and version, :data:`FAMILY`, are in every spec: a change of generator changes the name, and
estimators refuse reports of another (specs of the earlier ``splitmix64-boxmuller/v1`` family raise a
ValueError naming both).

**PrivHS** (Duchi, Jordan and Wainwright's randomizer in the one-bit form of Erlingsson et al., as Feldman
and Talwar describe it): the report is ``(s, b)``, ``s`` a uniform 31-bit seed and ``b = [⟨g_s, w⟩ >= 0]``,
kept with probability ``π = t_hi / 2**53`` and flipped otherwise (the two-output plan of
:func:`ldpnum.plans.binary_plan`). For every fixed ``s`` the bit is randomized response, so every
output's probability is ``2**-31 · t_hi/2**53`` or ``2**-31 · t_lo/2**53`` and the privacy loss is exactly the
plan's ``ln(t_hi/t_lo) <= ε``. Decoding: ``E[sign⟨v, w⟩ v] = c_d w`` for ``v`` uniform on the sphere, with
``c_d = E|⟨v, w⟩| = Γ(d/2) / (√π Γ((d+1)/2))``, so ``(2b - 1) g_s/‖g_s‖ / ((2π - 1) c_d)`` is unbiased; its
squared norm is the constant ``B² = 1/((2π - 1) c_d)²`` (Feldman and Talwar's ``B(d, ε)``).

**PrivUnit and PrivUnitG, compressed** (Feldman and Talwar's Algorithm 1 with the exact acceptance
probabilities). Both randomizers have a density relative to a reference distribution that takes two values:
for PrivUnit (Bhowmick et al.) the reference is the uniform sphere ``g/‖g‖`` and the output is in the cap
``{v : ⟨v, w⟩ >= γ}`` with probability ``p``; for PrivUnitG (Asi, Feldman and Talwar) the reference is
``N(0, I)`` and the output ``α w + V⊥`` has ``α >= γ`` with probability ``p``. With ``q`` the reference
mass of the cap, the ratio is ``p/q`` inside and ``(1 - p)/(1 - q)`` outside, and the mechanism is
``ε = ε0 + ε1``-LDP exactly for ``p = e^ε0/(1 + e^ε0)`` and ``q = 1/(1 + e^ε1)`` (the budget split
``θ = ε0/ε``). The compressed client draws uniform seeds, accepts one inside the cap always and one outside
with probability ``c = ratio_out/ratio_in = e^-ε`` (integer threshold ``t_c / 2**32``, rounded up, so
``1/c <= e^ε``), at most ``J`` trials, and sends a fresh uniform seed if all ``J`` reject (the reference).

*Exact privacy.* For a family in which every input's cap holds the same fraction ``q`` of seeds (the ideal
family), the acceptance probability of a trial is ``A = q + (1 - q) c`` for every input, and with
``N = 2**32`` seeds

.. math:: P[s \mid x] = \frac{1}{N}\Big[a_x(s)\,\frac{1 - (1 - A)^J}{A} + (1 - A)^J\Big],
          \qquad a_x(s) \in \{1, c\},

so the privacy loss is the log of the ratio of the ``a = 1`` and ``a = c`` values, strictly below
``ln(1/c) <= ε`` and within ``(1 - A)^J A/c`` of it: :meth:`RejectionPlan.extreme_ratio` computes it in
exact rationals and the tests check it (with a ``1.25 ε`` control that fails). For an arbitrary family
(caps of different fractions), the bound is ``2 ln(1/c) <= 2ε`` (the ratio of ``1/c`` over ``c``, as the
paper remarks): the 32-bit Gaussian family's cap fractions differ from ``q`` by the sampling error of
``2**32`` points, about ``sqrt(q/2**32)``, which is what separates the ideal statement from the realized
one. The number of trials has the same distribution for every input (``A`` does not depend on it), so the
client's running time does not depend on the input either.

*Decoding.* The accepted seed is in the cap with probability ``q/A``, and with ``T = ⟨v, w⟩`` the reference's
component along ``w`` and ``κ = E[T 1{T >= γ}] = -E[T 1{T < γ}]``, the output's mean is ``M w`` with

.. math:: M = \frac{\kappa (1 - c)}{A}\,\big(1 - (1 - A)^J\big)

(the fallback's mean is 0), for the sphere ``κ = (1 - γ²)^{(d-1)/2} / ((d - 1) B(1/2, (d-1)/2))`` and
``γ = 1 - 2 I^{-1}_q((d-1)/2, (d-1)/2)`` (the cap of mass ``q``), for the Gaussian ``κ = φ(γ)`` and
``γ = Φ^{-1}(1 - q)``. The decoders ``g_s/‖g_s‖ / M`` (PrivUnit) and ``g_s / M`` (PrivUnitG) are unbiased
for any ``J``. Their squared norm (the variance proxy of Feldman and Talwar) is ``1/M²`` for PrivUnit and
``(d + γ M)/M²`` for PrivUnitG (``E‖g‖² = d - 1 + E[T²]``, ``E[T²] = 1 + γ M``).

*Parameters.* PrivUnit's default split is the even one, ``θ = 1/2`` (Feldman and Talwar compare against "the
default split used in the experiments" of Bhowmick et al. without restating it; the even split is our
choice, and at ε <= 2 it is within 3% of the optimum in squared norm); ``optimized=True`` (Feldman and Talwar's
PrivUnitOptimized) takes the ``θ`` of the grid ``0, 0.01, ..., 1`` that minimizes the variance proxy.
PrivUnitG takes the ``θ`` (equivalently ``p`` and ``γ``) that minimizes its exact proxy: the best point of
the 101-point grid, refined by a bounded scalar minimization between its neighbours (Asi, Feldman and
Talwar choose ``p`` on a grid the same way). ``J = ceil(ln(failure_probability) / ln(1 - A))`` trials
(default failure probability 1e-6; Feldman and Talwar's ``e^ε ln(1/γ)`` is the bound ``A >= e^-ε`` of it),
or ``trials=J`` given.

**Repetition** (Feldman and Talwar's Lemma 5.1). ``repetitions=m`` sends ``m`` independent reports at
``ε/m`` each (each with its own sphere rounding), averaged by the collector: by sequential composition the
person's loss is ``m · (ε/m) = ε`` (the spec records ``epsilon`` and ``epsilon_per_report``), and the
error of the average is ``1/m`` of one report's at ``ε/m``. Defaults: PrivHS takes the ``m`` in
``1..ceil(ε)`` that minimizes ``B(d, ε/m)²/m`` (about ``ε/2.2`` copies: PrivHS stops improving with ε beyond
about 2, the "sweet spot" Feldman and Talwar observe). PrivUnit and PrivUnitG bound the client's work
instead: the default is the fewest reports ``m`` for which a split has at most :data:`TRIAL_TARGET` (64)
expected trials per report (``1/A``, which falls as ``θ`` grows), and PrivUnitOptimized and PrivUnitG then
minimize the proxy over those splits only (plain PrivUnit keeps ``θ = 1/2``, ``1/A <= e^{ε/(2m)}``).
Repetition costs accuracy (about 2x from ε = 8 to two reports at 4, Feldman and Talwar's Figure 1), and
constraining the split costs less: at ε = 8, d = 200 (PrivUnitOptimized) the constrained optimum (one
report, 64 expected trials) has squared norm 33.3, against 27.0 unconstrained (288 expected trials, pass
``repetitions=1``) and 87.4 for two reports at ε = 4 (12 trials each).
(Always using ``ceil(ε)`` reports, the other rule one might take from Lemma 5.1, would cost about 4x at ε = 8.)
Explicit ``repetitions`` choose the split without the trial constraint.

**Aggregate.** The collector regenerates each report's direction (the decoder kernel) and adds, per
coordinate, ``round(v · 2**24)`` of the unscaled direction ``v`` (``±g/‖g‖`` or ``g``) into a positive and a
negative sum, and ``round(v² · 2**24)`` into a sum of squares: ``3·dim`` int64 counts, merged with ``+``
exactly. A report adds less than ``2**24`` (sphere) or ``2**32`` (Gaussian: ``|g_j| < 12.23``, so
``g_j² · 2**24 < 150 · 2**24``) to any count, so no count can overflow before ``2**39`` or ``2**31`` reports
(people × repetitions) per aggregate; merging
further raises ``OverflowError``. The rounding moves each coordinate of the mean by at most ``2**-25/M``.
Every aggregate is checked against its ``n_reports`` when it is built: sphere directions have norm 1, so
their squares add to ``n·m`` exactly (up to rounding); Gaussian directions (PrivUnitG) have a random
squared norm whose law does not depend on the inputs, and an aggregate whose total is beyond what its
``n_reports`` give except with probability ``1e-12`` (a Chernoff bound) is refused, so an edited
``n_reports`` or doubled counts are refused once a few dozen reports are involved (below that the law is
too wide to tell; nothing is refused).

References
----------
V. Feldman, K. Talwar, "Lossless Compression of Efficient Private Local Randomizers", ICML 2021.
H. Asi, V. Feldman, K. Talwar, "Optimal Algorithms for Mean Estimation under Local Differential Privacy",
ICML 2022.
A. Bhowmick, J. Duchi, J. Freudiger, G. Kapoor, R. Rogers, "Protection Against Reconstruction and Its
Implications for Private Federated Learning", 2019.
J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally private estimation",
JASA 2018.
"""

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from .._kernels import client_unit
from .._kernels._jit import launch
from .._typing import ArrayLike, FloatArray, SeedLike
from .._validation import (
    check_choice,
    check_epsilon,
    check_frame_columns,
    check_scalar,
    plain_array,
    refuse_non_numeric,
)
from ..aggregate import Aggregate
from ..base import Mechanism
from ..exceptions import ClippingWarning, InvalidValuesError
from ..plans import TWO53, binary_plan, exp_lower
from ..reports import Reports, register_code_check
from ..spec import check_spec
from ._base import (
    IMPLAUSIBLE,
    MAX_DIM,
    VectorMechanism,
    _OffersEstimators,
    check_names,
    column_words,
)
from ._result import VectorMeanEstimate

__all__ = ["PrivHS", "PrivUnit", "PrivUnitG", "PrivHSPlan", "RejectionPlan", "UnitVectorMechanism", "FAMILY",
           "NORM_TOLERANCE", "TRIAL_TARGET", "FIXED_POINT_BITS", "generate_directions", "privhs_constant"]

#: Name and version of the public direction family (in every spec).
FAMILY = client_unit.FAMILY
#: Earlier families whose specs are refused with a message naming them.
RETIRED_FAMILIES = ("splitmix64-boxmuller/v1",)
#: Rows whose norm is at most ``1 + NORM_TOLERANCE`` count as in the unit ball (rows normalized in float64
#: land within a few 1e-16 of 1).
NORM_TOLERANCE = 1e-9
#: Default largest expected number of trials per report of the rejection samplers (chooses repetitions).
TRIAL_TARGET = 64
#: Most reports per person.
MAX_REPETITIONS = 1024
#: Largest trial bound ``J`` (words per report are ``J + 2``).
MAX_TRIALS = 1 << 20
#: The aggregate's sums are in units of ``2**-FIXED_POINT_BITS``.
FIXED_POINT_BITS = 24
#: Default probability that all ``J`` trials reject.
DEFAULT_FAILURE = 1e-6
#: PrivUnit's default budget split ``θ = ε0/ε``.
DEFAULT_SPLIT = 0.5
#: The budget-split grid of PrivUnitOptimized (and the start of PrivUnitG's search).
SPLIT_GRID = tuple(k / 100 for k in range(101))
#: Rows per call of the decoder kernel (bounds the collector's memory whatever the number of reports).
DECODE_ROWS = 1 << 14
TWO32 = 2**32
_SCALE = float(2**FIXED_POINT_BITS)
#: Largest magnitude of a coordinate of the family (the ziggurat's tail from 53-bit uniforms:
#: ``R + sqrt(2·53 ln 2)`` with ``R = 3.654...``, below 12.23).
GAUSS_MAX = client_unit.GAUSS_MAX
#: Reports (people × repetitions) one aggregate holds exactly: sphere directions, Gaussian ones.
MAX_REPORTS = (2**39, 2**31)


def privhs_constant(dim: int) -> float:
    """``c_d = E|⟨v, w⟩| = Γ(d/2) / (√π Γ((d+1)/2))`` for ``v`` uniform on the sphere of ``R^d``."""
    return math.exp(math.lgamma(dim / 2) - math.lgamma((dim + 1) / 2)) / math.sqrt(math.pi)


def generate_directions(seeds: ArrayLike, dim: int) -> FloatArray:
    """The family's vectors ``g_s`` (rows, ``dim`` standard normals each) for the given seeds (< 2**32).

    Examples
    --------
    >>> g = generate_directions([0, 1, 2**32 - 1], 5)
    >>> g.shape, bool(np.all(np.abs(g) < 12.23))
    ((3, 5), True)
    """
    s = np.asarray(seeds)
    if s.ndim != 1 or s.dtype.kind not in "iu" or (s.size and (s.min() < 0 or s.max() >= TWO32)):
        raise ValueError("seeds must be a 1-D array of integers in [0, 2**32)")
    dim = check_scalar(dim, "dim", int, low=1, high=MAX_DIM)
    out = np.empty((s.size, dim))
    launch(client_unit.generate_directions, np.ascontiguousarray(s, dtype=np.uint64), out)
    return out


# -- parameters -----------------------------------------------------------------------------------------
def _cap(sphere: bool, dim: int, q: float) -> tuple[float, float]:
    """``(γ, κ)`` of the cap of reference mass ``q`` (sphere of ``R^dim``, or the standard normal)."""
    from scipy import special  # imported when a mechanism is built, not with ldpnum (fast start)

    if sphere:
        a = (dim - 1) / 2
        gamma = 1.0 - 2.0 * float(special.betaincinv(a, a, q))
        log_kappa = a * math.log1p(-gamma * gamma) - math.log(dim - 1) - float(special.betaln(0.5, a))
        return gamma, math.exp(log_kappa)
    gamma = float(special.ndtri(1.0 - q)) if q >= 0.5 else -float(special.ndtri(q))
    return gamma, math.exp(-0.5 * gamma * gamma) / math.sqrt(2 * math.pi)


@dataclass(frozen=True)
class _Design:
    """One rejection design: split, cap mass ``q``, threshold ``γ``, ``κ``, acceptance, trials and ``M``."""

    split: float
    q: float
    gamma: float
    kappa: float
    c: float
    acceptance: float
    trials: int
    scale: float  # M
    squared_norm: float  # E‖decoded‖²
    t2: float  # E[⟨v, w⟩²] of the unscaled output v


def _design(sphere, dim, eps, split, t_c, trials=None, failure=DEFAULT_FAILURE):
    from scipy import special

    eps1 = (1.0 - split) * eps
    q = float(special.expit(-eps1))
    gamma, kappa = _cap(sphere, dim, q)
    c = t_c / TWO32
    A = q + (1.0 - q) * c
    if trials is None:
        trials = 1 if A >= 1.0 else max(1, math.ceil(math.log(failure) / math.log1p(-A)))
    fail = math.exp(trials * math.log1p(-A)) if A < 1.0 else 0.0
    M = kappa * (1.0 - c) / A * (1.0 - fail)
    if sphere:  # E[T² 1{T >= γ}] for T = ⟨v, w⟩, v uniform: (1 - I_{γ²}(3/2, (d-1)/2)) / (2d) for γ >= 0
        tail = (1.0 - float(special.betainc(1.5, (dim - 1) / 2, gamma * gamma))) / (2 * dim)
        inside = tail if gamma >= 0 else 1.0 / dim - tail
        t2 = (inside + c * (1.0 / dim - inside)) / A * (1.0 - fail) + fail / dim
        norm2 = 1.0
    else:
        t2 = 1.0 + gamma * M
        norm2 = dim - 1 + t2
    return _Design(split, q, gamma, kappa, c, A, int(trials), M, norm2 / (M * M), t2)


def _accept_threshold(eps):
    """``t_c = ceil(2**32 / E)``, ``E <= e^ε`` (so the realized ``c = t_c/2**32 >= e^-ε``)."""
    return math.ceil(Fraction(TWO32) / exp_lower(eps))


@lru_cache(maxsize=1)
def min_epsilon_per_report() -> float:
    """Smallest ``ε/m`` of one PrivUnit/PrivUnitG report (about ``2**-32``).

    Below it the acceptance threshold ``ceil(2**32/E)`` (``E <= e^ε``) reaches ``2**32``, every seed is accepted and the
    decoding scale ``M`` is 0 (the constructors refuse such ``ε/m``; they used to divide by zero, and below about 3e-16
    build a mechanism with a negative ``M``).
    """
    lo, hi = 0.0, 1e-9  # _accept_threshold(hi) < 2**32; bisect on floats
    while math.nextafter(lo, hi) < hi:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _accept_threshold(mid) < TWO32:
            hi = mid
        else:
            lo = mid
    return hi


def _best_split(sphere, dim, eps, t_c, refine, max_expected_trials=None):
    """The split minimizing the ideal (``J = ∞``) proxy on the 101-point grid (refined if asked), within a trial budget.

    Among the splits whose expected trials ``1/A`` are at most ``max_expected_trials`` (None: all); None if none is.
    """
    from scipy import optimize

    def design(th):
        return _design(sphere, dim, eps, th, t_c, trials=10**9)

    designs = [design(th) for th in SPLIT_GRID]
    feasible = [k for k, des in enumerate(designs)
                if max_expected_trials is None or 1.0 / des.acceptance <= max_expected_trials]
    if not feasible:
        return None
    k = min(feasible, key=lambda i: designs[i].squared_norm)
    best = SPLIT_GRID[k]
    if refine:
        # 1/A decreases as the split grows, so the feasible splits are those above the smallest feasible one
        lo = SPLIT_GRID[k] if k == feasible[0] else SPLIT_GRID[k - 1]
        hi = SPLIT_GRID[min(k + 1, len(SPLIT_GRID) - 1)]
        res = optimize.minimize_scalar(lambda th: design(th).squared_norm, bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-6})
        if res.success and res.fun < designs[k].squared_norm:
            best = float(res.x)
    return best


# -- plans ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PrivHSPlan:
    """Integer plan of :class:`PrivHS`: 31-bit seeds, the two-output thresholds over ``2**53``.

    Three words per report (sphere rounding, seed, coin), ``repetitions`` reports per person.
    """

    dim: int
    repetitions: int
    t_lo: int
    t_hi: int
    seed_bits: int = 31

    @property
    def words_per_record(self) -> int:
        """Random 64-bit words each record consumes: three per repetition."""
        return 3 * self.repetitions

    def probability(self, bit: int, side: int) -> Fraction:
        """Exact probability of one report ``(s, bit)``, for any seed ``s``, when ``[⟨g_s, w⟩ >= 0] = side``."""
        return Fraction(self.t_hi if bit == side else self.t_lo, TWO53 << self.seed_bits)

    def extreme_ratio(self) -> Fraction:
        """Largest ``P[report | x] / P[report | x']`` over all reports and inputs: ``t_hi / t_lo``."""
        return Fraction(self.t_hi, self.t_lo)


@dataclass(frozen=True)
class RejectionPlan:
    """Integer plan of the compressed PrivUnit/PrivUnitG: trial bound, acceptance threshold, cap.

    A trial accepts a seed outside the cap with probability ``t_c / 2**32``. ``q`` is the cap's mass under
    the reference (the ideal family's fraction of seeds in every cap).
    """

    dim: int
    repetitions: int
    trials: int
    t_c: int
    gamma: float
    q: float
    sphere: bool
    seed_bits: int = 32

    @property
    def words_per_record(self) -> int:
        """Random 64-bit words each record consumes: the trials plus two, per repetition."""
        return (self.trials + 2) * self.repetitions

    @property
    def c(self) -> Fraction:
        """Acceptance probability of a seed outside the cap (exact)."""
        return Fraction(self.t_c, TWO32)

    def acceptance(self, q: Any = None) -> Fraction:
        """``A = q + (1 - q) c``, exactly, for a family whose caps hold the fraction ``q`` (default: the plan's)."""
        q = Fraction(self.q if q is None else q)
        return q + (1 - q) * self.c

    def seed_probability(self, inside: bool, q: Any = None) -> Fraction:
        """Exact ``P[s | x]`` of a seed inside (``a = 1``) or outside (``a = c``) the cap of ``x``."""
        A = self.acceptance(q)
        fail = (1 - A) ** self.trials
        a = Fraction(1) if inside else self.c
        return (a * (1 - fail) / A + fail) / (1 << self.seed_bits)

    def extreme_ratio(self, q: Any = None) -> Fraction:
        """Largest ratio ``P[s | x] / P[s | x']`` for the ideal family (caps of mass ``q``), exactly."""
        return self.seed_probability(True, q) / self.seed_probability(False, q)

    def epsilon(self, q: Any = None) -> float:
        """Realized privacy loss of one report for the ideal family: ``ln(extreme_ratio(q))``."""
        return math.log(self.extreme_ratio(q))

    def unconditional_ratio_bound(self) -> Fraction:
        """Bound on the ratio for any family (caps of any fractions): ``(1/c)²``, i.e. ``2 ln(1/c) <= 2ε``."""
        return 1 / self.c**2


# -- validation -----------------------------------------------------------------------------------------
def _row_norms(x, r2=None):
    """Euclidean norm of each row, without overflow or underflow for finite values.

    ``r2``: the rows' sums of squares, if already computed. Rows whose sum of squares is not finite or below 1e-290 (and
    not 0) are rescaled by their largest magnitude first; the others cost one pass.
    """
    if r2 is None:
        r2 = np.einsum("ij,ij->i", x, x)
    r = np.sqrt(r2)
    suspect = np.flatnonzero(~np.isfinite(r2) | (r2 < 1e-290))
    if suspect.size:
        rows = x[suspect]
        amax = np.abs(rows).max(axis=1)
        nz = amax > 0
        scaled = rows[nz] / amax[nz, None]
        r[suspect[nz]] = amax[nz] * np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
    return r


def check_unit_vectors(x: ArrayLike, dim: int, *, name: str = "x", clip: bool = False, nan_policy: str = "raise",
                       fill_value: Any = None, return_norms: bool = False) -> Any:
    """Validate an ``(n, dim)`` array of vectors of norm at most 1; return it as C-contiguous float64.

    With ``return_norms``, also the rows' Euclidean norms computed for the check: ``(array, norms)``.

    Raises TypeError for non-real dtypes, ValueError (InvalidValuesError for bad rows) for a wrong shape,
    non-finite values (unless ``nan_policy="impute"``: each is replaced by the public ``fill_value``, one
    number or ``dim`` numbers), or rows of norm above ``1 + NORM_TOLERANCE`` (unless ``clip``: then they
    are counted in one ``ClippingWarning`` and the kernels use their direction with norm 1). Nothing is
    drawn.
    """
    if not isinstance(clip, (bool, np.bool_)):
        raise TypeError(f"clip must be True or False; got {type(clip).__name__} {clip!r}")
    check_choice(nan_policy, "nan_policy", ("raise", "impute"))
    fill = None
    if nan_policy == "impute":
        if fill_value is None:
            raise ValueError("nan_policy='impute' needs an explicit public fill_value")
        fill = np.broadcast_to(np.asarray(fill_value, dtype=np.float64), (dim,)) if np.ndim(fill_value) <= 1 and (
            np.size(fill_value) in (1, dim)) else None
        if fill is None or not np.all(np.isfinite(fill)):
            raise ValueError(f"fill_value must be a finite number or {dim} finite numbers; got {fill_value!r}")
    elif fill_value is not None:
        raise ValueError("fill_value is only used with nan_policy='impute'")
    to_numpy = getattr(x, "to_numpy", None)
    is_frame = to_numpy is not None and check_frame_columns(x, name)  # text columns: TypeError naming them
    arr = (np.asarray(to_numpy(dtype=np.float64, na_value=np.nan)) if is_frame and to_numpy is not None
           else plain_array(x, name))
    if arr.dtype.kind not in "iuf":
        refuse_non_numeric(arr, name)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(f"{name} must have shape (n, {dim}), one vector of dim={dim} per person; got shape "
                         f"{arr.shape} (for one person pass x.reshape(1, -1))")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.size == 0:
        return (arr, np.zeros(arr.shape[0])) if return_norms else arr
    r2 = np.einsum("ij,ij->i", arr, arr)  # finite unless some value is not (or a row's squares overflow)
    bad = ~np.isfinite(arr) if not np.isfinite(r2).all() else None
    if bad is not None and bad.any() and fill is not None:
        arr = np.where(bad, fill, arr)
        r2 = None
    elif bad is not None and bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        n_bad = int(bad.any(axis=1).sum())
        raise InvalidValuesError(f"{name} has {n_bad} row(s) with missing or non-finite values (NaN, inf or NA), "
                                 f"first at index {i} (coordinate {j}: {float(arr[i, j])!r}); pass nan_policy='impute' "
                                 "with a public fill_value, or remove them before privatizing", count=n_bad,
                                 first_index=i, reason="missing")
    r = _row_norms(arr, r2)
    over = r > 1.0 + NORM_TOLERANCE
    n_over = int(over.sum())
    if n_over:
        i = int(np.flatnonzero(over)[0])
        msg = (f"{name} has {n_over} row(s) of Euclidean norm above 1 (+{NORM_TOLERANCE:g}), first at index {i} "
               f"(norm {float(r[i])!r})")
        if not clip:
            raise InvalidValuesError(msg + "; scale the data into the unit ball, or pass clip=True to scale such "
                                     "rows to norm 1", count=n_over, first_index=i, reason="out_of_range")
        warnings.warn(ClippingWarning(msg + "; they were scaled to norm 1", count=n_over, first_index=i),
                      stacklevel=4)
    return (arr, r) if return_norms else arr


def resolve_clip(clip: Any, out_of_range: Any) -> bool:
    """The unit-ball mechanisms' ``clip`` from the keywords every mechanism's ``privatize`` takes.

    ``out_of_range`` is the name the one-column and box mechanisms use (``"clip"``/``"raise"``; the command
    line and the table accessors pass it to every mechanism): for the unit ball, "out of range" is a norm
    above 1, so ``"clip"`` means ``clip=True`` and ``"raise"`` ``clip=False``. None (the default) leaves
    ``clip`` as given; contradicting ``clip=True`` with ``out_of_range="raise"`` raises.
    """
    if out_of_range is None:
        return clip
    check_choice(out_of_range, "out_of_range", ("clip", "raise"))
    if clip and out_of_range == "raise":
        raise ValueError("clip=True contradicts out_of_range='raise'; pass one of them")
    return out_of_range == "clip"


def _check_family(spec):
    """Refuse a spec of another direction family (its seeds name other vectors), naming both."""
    family = spec.get("family")
    if family != FAMILY:
        known = " (an earlier ldpnum's family)" if family in RETIRED_FAMILIES else ""
        raise ValueError(f"spec of {spec.mechanism!r} names the direction family {family!r}{known}; this ldpnum "
                         f"generates {FAMILY!r}, so its seeds would decode to other vectors; estimate those reports "
                         "with the ldpnum that produced them")


def _sphere_inputs(values, r=None):
    """Per-row ``1/‖x‖`` (0 for ``x = 0``) and the sphere rounding's threshold over 2**53.

    ``r``: the rows' norms, if already computed.
    """
    if r is None:
        r = _row_norms(values)
    inv = np.zeros_like(r)
    pos = r > 0
    inv[pos] = 1.0 / r[pos]
    rc = np.minimum(r, 1.0)
    keep = np.floor((1.0 + rc) * 0.5 * float(TWO53)).astype(np.int64)
    return inv, keep


def _check_codes(codes, spec):
    arr = np.asarray(codes)
    m = int(spec.get("repetitions"))
    if arr.dtype.kind not in "iu":
        raise TypeError(f"report codes of {spec.mechanism} must be integers (seed indices); got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != m:
        raise ValueError(f"report codes of {spec.mechanism} must have shape (n, {m}) (one column per repetition); "
                         f"got {arr.shape}")
    if arr.dtype != np.uint32:
        if arr.size and (arr.min() < 0 or arr.max() >= TWO32):
            bad = np.flatnonzero(((arr < 0) | (arr >= TWO32)).any(axis=1))
            raise ValueError(f"report codes of {spec.mechanism} must be in [0, 2**32); {bad.size} row(s) are not, "
                             f"first at index {bad[0]}")
        arr = arr.astype(np.uint32)
    else:
        arr = np.array(arr, copy=True)
    return arr


@lru_cache(maxsize=64)
def _gaussian_design(dim, epsilon_per_report, split, trials, failure):
    """The :class:`_Design` behind a PrivUnitG spec (the constructor's computation, without the search)."""
    return _design(False, dim, epsilon_per_report, split, _accept_threshold(epsilon_per_report), trials, failure)


def _gaussian_log_mgf(des, dim, w):
    """``log E[exp(λ ‖g‖²)]`` of one PrivUnitG report's direction ``g``, with ``1 - 2λ = e^w``.

    ``‖g‖² = T² + R`` with ``R ~ χ²(d - 1)`` independent of ``T = ⟨g, w⟩`` (the acceptance depends on ``T``
    only), and ``T`` has density ``φ(t)[a(t)(1 - f)/A + f]`` (``a = 1`` in the cap ``t >= γ``, ``c`` outside;
    ``f = (1 - A)^J`` the fallback), so with ``s = e^{w/2}`` and ``Q`` the normal upper tail,
    ``E[e^{λ T²}] = [(1 - f)(c + (1 - c) Q(γ s))/A + f] / s``.
    """
    from scipy import special

    fail = math.exp(des.trials * math.log1p(-des.acceptance)) if des.acceptance < 1.0 else 0.0
    tail = float(special.ndtr(-des.gamma * math.exp(0.5 * w)))
    return -0.5 * dim * w + math.log((1.0 - fail) * (des.c + (1.0 - des.c) * tail) / des.acceptance + fail)


def _unimodal_minimum(f, lo, hi, xatol=1e-9):
    """``min f`` over ``[lo, hi]`` for a unimodal ``f``, by golden-section search to ``xatol`` (both ends tried).

    The Chernoff exponent below is convex in ``λ`` and ``λ`` is monotone in the search variable, so it is
    unimodal there; a plain search keeps SciPy's optimizer (a third of a second to import) off an aggregate's
    first check.
    """
    inv = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - inv * (b - a), a + inv * (b - a)
    fc, fd = f(c), f(d)
    while b - a > xatol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - inv * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + inv * (b - a)
            fd = f(d)
    return min(fc, fd, f(lo), f(hi))


def _check_gaussian_squares(squares, copies, scale, spec):
    """Refuse a PrivUnitG aggregate whose total sum of squares cannot come from ``copies`` reports.

    Unlike the sphere's directions (norm 1 exactly), a Gaussian direction's squared norm is random, but its
    distribution is the same for every input (see :func:`_gaussian_log_mgf`), so the total ``S`` of ``N``
    reports has a known law. Chernoff's bound ``P[S >= s] <= exp(N K(λ) - λ s)`` (``λ > 0``; ``<=`` with
    ``λ < 0``), minimized over ``λ``, bounds the probability of a total as far out as the observed one
    (widened by the fixed-point rounding, at most ``1/2`` unit per coordinate and report); below
    :data:`IMPLAUSIBLE` the aggregate is refused. This catches an edited ``n_reports`` (half of it doubles
    the mean) and edited counts (doubled sums) once a few dozen reports are involved; for very few reports
    the law is too wide to tell, and nothing is refused.
    """
    d = int(spec.get("dim"))
    m = int(spec.get("repetitions"))
    des = _gaussian_design(d, float(spec.epsilon) / m, float(spec.get("split")), int(spec.get("trials")),
                           float(spec.get("failure_probability")))
    total = sum(int(v) for v in squares) / scale
    slack = copies * d * 0.5 / scale
    if copies == 0:
        raise ValueError(f"aggregate of {spec}: n_reports=0 but the sums of squares add to {total:.6g}")
    limit = math.log(IMPLAUSIBLE / 2)

    def log_bound(w, s):
        lam = -0.5 * math.expm1(w)  # 1 - 2λ = e^w
        return copies * _gaussian_log_mgf(des, d, w) - lam * s

    mean = copies * (d - 1 + des.t2)
    for lo, hi, s, side in ((-60.0, 0.0, total - slack, "above"), (0.0, 60.0, total + slack, "below")):
        if (s > mean) != (side == "above"):
            continue
        low = _unimodal_minimum(lambda w: log_bound(w, s), lo, hi)
        if low < limit:
            raise ValueError(
                f"aggregate of {spec}: the sums of squares add to {total:.6g} (in units of the directions), "
                f"{'more' if side == 'above' else 'less'} than {copies} report(s) give except with probability below "
                f"10**{low / math.log(10):.0f} (expected {mean:.6g}); n_reports or the counts were changed")


# -- the mechanisms -------------------------------------------------------------------------------------
class UnitVectorMechanism(_OffersEstimators, Mechanism):
    """Base of the mechanisms for vectors in the unit ℓ2 ball (:class:`PrivHS`, :class:`PrivUnit`, :class:`PrivUnitG`).

    Validation, sphere rounding, repetition, fixed-point aggregation, the estimate.

    Found by :func:`ldpnum.mechanisms.lookup` and :func:`ldpnum.from_spec` (``input_kind = "vector"``).
    """

    input_kind = "vector"
    #: Summary rows: one per coordinate, as every vector mechanism's.
    describe_rows = VectorMechanism.describe_rows
    #: Decoder kind of the kernel (0 PrivHS, 1 PrivUnit, 2 PrivUnitG).
    _kind: ClassVar[int] = -1
    _repetitions: int
    _dim: int
    _scale_m: float
    _squared_norm: float
    _t2: float  # E[⟨v, w⟩²] of a report's unscaled direction v

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name") is not None:
            register_code_check(cls.name, _check_codes)

    def _init_common(self, epsilon, dim, min_dim=1):
        self._epsilon = check_epsilon(epsilon)
        self._bounds = None
        self._dim = check_scalar(dim, "dim", int, low=min_dim, high=MAX_DIM)

    @staticmethod
    def _check_repetitions(repetitions, epsilon):
        if repetitions is None:
            return None
        return check_scalar(repetitions, "repetitions", int, low=1, high=MAX_REPETITIONS)

    # -- parameters
    @property
    def dim(self) -> int:
        """Dimension ``d`` of the vectors."""
        return self._dim

    @property
    def bounds(self) -> Any:
        """None: the input domain is the unit ℓ2 ball, not a box."""
        return None

    @property
    def repetitions(self) -> int:
        """Reports per person, each at ``epsilon / repetitions`` (sequential composition)."""
        return self._repetitions

    @property
    def epsilon_per_report(self) -> float:
        """``ε/m``, the privacy parameter of each of the ``m`` reports."""
        return self._epsilon / self._repetitions

    @property
    def n_cells(self) -> int:
        """Counts in the aggregate: positive sums, negative sums and sums of squares, ``dim`` each."""
        return 3 * self._dim

    @property
    def decoding_scale(self) -> float:
        """``M``: a report's unscaled direction has mean ``M w``; the decoder divides by it."""
        return self._scale_m

    @property
    def squared_norm(self) -> float:
        """``E‖decoded report‖²`` (the same for every unit input): Feldman and Talwar's variance proxy."""
        return self._squared_norm

    def _common_params(self):
        return {"dim": self._dim, "repetitions": self._repetitions, "epsilon_per_report": self.epsilon_per_report,
                "family": FAMILY, "seed_bits": self._plan.seed_bits, "fixed_point_bits": FIXED_POINT_BITS}

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self._repr_params().items())
        return f"{type(self).__name__}(epsilon={self._epsilon!r}, dim={self._dim}, repetitions={self._repetitions}{extra})"

    def _repr_params(self):
        return {}

    # -- client side
    def prepare_values(self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise",
                       fill_value: Any = None, clip: bool = False, out_of_range: str | None = None) -> FloatArray:
        """Validate an ``(n, dim)`` array (or DataFrame) of vectors of norm at most 1 without drawing anything.

        See :func:`check_unit_vectors`; ``out_of_range`` ("clip" or "raise") is another way to say ``clip``
        (:func:`resolve_clip`). Returns a read-only C-contiguous float64 array.
        """
        clip = resolve_clip(clip, out_of_range)
        values = check_unit_vectors(x, self._dim, name="x" if name is None else str(name), clip=clip,
                                    nan_policy=nan_policy, fill_value=fill_value)
        values = values.view()
        values.flags.writeable = False
        return values

    def _checked_with_norms(self, x, nan_policy, fill_value, clip):
        """:meth:`prepare_values` for :meth:`privatize` (the same depth of calls for the warning), with the norms."""
        values, r = check_unit_vectors(x, self._dim, name="x", clip=clip, nan_policy=nan_policy,
                                       fill_value=fill_value, return_norms=True)
        values = values.view()
        values.flags.writeable = False
        return values, r

    def privatize(self, x: ArrayLike, *, rng: SeedLike = None, nan_policy: str = "raise",
                  fill_value: Any = None, clip: bool = False, out_of_range: str | None = None) -> Reports:
        """Randomize each person's vector; return their :class:`~ldpnum.Reports`.

        ``repetitions`` seed indices (uint32) per person.

        Parameters
        ----------
        x : array_like of real numbers, shape (n, dim)
            One vector per person, Euclidean norm at most 1.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness. Anything else: a reproducible simulation.
        nan_policy : {"raise", "impute"}, optional
            Non-finite values raise (default), or are replaced by ``fill_value``.
        fill_value : float or sequence of float, optional
            Public replacement (one per coordinate, or one for all) with ``nan_policy="impute"``.
        clip : bool, optional
            Scale rows of norm above 1 to norm 1 (with a ``ClippingWarning``) instead of raising.
        out_of_range : {None, "clip", "raise"}, optional
            The keyword every mechanism's ``privatize`` takes (the command line and the table accessors pass
            it): ``"clip"`` is ``clip=True``, ``"raise"`` is ``clip=False``; None (default) keeps ``clip``.

        Notes
        -----
        Each call on one person's vector is ε-LDP (``repetitions`` reports at ``ε/repetitions`` each);
        estimators are post-processing. The whole batch is validated before the first word is drawn.
        """
        values, r = self._checked_with_norms(x, nan_policy, fill_value, resolve_clip(clip, out_of_range))
        inv, keep = _sphere_inputs(values, r)  # the norms of the validation, not a second pass over x
        start = [0]

        def run(v, words, out):  # blocks come in record order
            a = start[0]
            start[0] = a + v.shape[0]
            self._run_kernel(v, words, out, sphere=(inv[a:start[0]], keep[a:start[0]]))

        return self._randomize(values, rng, run=run)

    def _allocate_reports(self, n):
        return np.empty((n, self._repetitions), dtype=np.uint32)

    # -- reports in a table column: the m seeds of a row as one 64-bit code (32 bits each)
    def check_column_codes(self, where: str = "a column") -> None:
        """A person's reports fit one 64-bit column code when there are at most two (32 bits each)."""
        if self._repetitions > 2:
            raise TypeError(f"{type(self).__name__} sends {self._repetitions} reports of 32 bits per person, more than "
                            f"{where} of 64-bit codes holds; keep the Reports from privatize, or pass repetitions=1 "
                            "or 2")

    def column_codes(self, reports: Reports) -> np.ndarray:
        """Each person's reports as one uint64: ``code_0 + 2**32 code_1``.

        Examples
        --------
        >>> import numpy as np, ldpnum as ldp
        >>> m = ldp.PrivHS(4.0, 3, repetitions=2)
        >>> r = m.privatize(np.full((4, 3), 0.5), rng=0)
        >>> m.reports_from_column(m.column_codes(r)) == r
        True
        """
        self.check_column_codes()
        check_spec(self.spec, reports.spec, "reports")
        codes = np.asarray(reports.codes, dtype=np.uint64)
        out = codes[:, 0].copy()
        if self._repetitions == 2:
            out |= codes[:, 1] << np.uint64(32)
        return out

    def reports_from_column(self, codes: ArrayLike) -> Reports:
        """The Reports behind column codes (:meth:`column_codes`'s inverse).

        With one report per person a code of 2**32 or more raises ValueError.
        """
        self.check_column_codes()
        words = column_words(codes, type(self).__name__)
        if self._repetitions == 1 and words.size and int(words.max()) >= TWO32:
            bad = np.flatnonzero(words >= np.uint64(TWO32))
            raise ValueError(f"{bad.size} column code(s) exceed 32 bits, first at index {bad[0]} ({int(words[bad[0]])})")
        rows = np.empty((words.size, self._repetitions), dtype=np.uint32)
        rows[:, 0] = words & np.uint64(0xFFFFFFFF)
        if self._repetitions == 2:
            rows[:, 1] = words >> np.uint64(32)
        return Reports(rows, self.spec)

    # -- server side
    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        d = int(spec.get("dim"))
        m = int(spec.get("repetitions"))
        if n_reports is None:
            if total:
                raise ValueError(f"aggregate of {spec}: n_reports is required (the counts are fixed-point sums)")
            return 0
        copies = n_reports * m
        bound = 1.0 if cls._kind != 2 else GAUSS_MAX
        scale = 2 ** int(spec.get("fixed_point_bits"))
        lim1 = copies * (math.ceil(bound * scale) + 1)
        lim2 = copies * (math.ceil(bound * bound * scale) + 1)
        c = counts.reshape(3, d)
        for a, lim, what in ((0, lim1, "positive sum"), (1, lim1, "negative sum"), (2, lim2, "sum of squares")):
            if c[a].size and int(c[a].max()) > lim:
                j = int(np.argmax(c[a]))
                raise ValueError(f"aggregate of {spec}: {what} {int(c[a, j])} of coordinate {j} exceeds what "
                                 f"{n_reports} report(s) can add ({lim})")
        if cls._kind != 2 and copies:  # every decoded direction has norm 1: the squares add to one per report
            s2 = sum(int(v) for v in c[2])
            if abs(s2 - copies * scale) > copies * (d + 1):
                raise ValueError(f"aggregate of {spec}: the sums of squares add to {s2}, not {copies} report(s) of "
                                 f"norm 1 ({copies * scale} ± {copies * (d + 1)})")
        elif copies or int(c[2].sum()):
            _check_gaussian_squares(c[2], copies, scale, spec)
        return n_reports

    def aggregate(self, reports: Reports) -> Aggregate:
        """Regenerate every report's direction and sum them in fixed point, mergeable with ``+``.

        ``3·dim`` counts and the number of people (see the module notes for the precision and the overflow limit).

        The decoder kernel runs on blocks of ``DECODE_ROWS`` people, so memory stays ``O(dim)`` per thread
        whatever the number of reports.
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        codes = reports.codes
        n = codes.shape[0]
        limit = MAX_REPORTS[self._kind == 2]
        if n * self._repetitions > limit:
            raise OverflowError(f"{n} people x {self._repetitions} reports exceed the {limit} reports one aggregate "
                                "holds exactly; aggregate in parts and merge them with +")
        total = np.zeros((3, self._dim), dtype=np.int64)
        sums = np.empty((client_unit.DECODE_TASKS, 3, self._dim), dtype=np.int64)
        for start in range(0, n, DECODE_ROWS):
            block = np.ascontiguousarray(codes[start:start + DECODE_ROWS])
            launch(client_unit.decode_sums, block, self._kind, _SCALE, sums)
            total += sums.sum(axis=0)
        return Aggregate(total.ravel(), self.spec, n)

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)

    def _rows(self, x):
        values = np.asarray(x, dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != self._dim or not np.all(np.isfinite(values)) or not len(values):
            raise ValueError(f"x must be a finite, non-empty (n, {self._dim}) array")
        return values

    def variance(self, x: ArrayLike) -> FloatArray:
        """Variance of each coordinate of one person's estimate, for each row of ``x`` (``(n, dim)``), in closed form.

        The person's estimate is the average of their ``m`` decoded reports.

        A report's unscaled direction ``v`` has ``T = ⟨v, w⟩`` with ``E[T²] = t2`` and, given ``T``, a
        component orthogonal to ``w`` that is uniform in direction (sphere: of squared norm ``1 - T²``;
        Gaussian: ``N(0, I - w wᵀ)``), so ``E[v_j²] = t2 w_j² + (1 - t2)(1 - w_j²)/(d - 1)`` (sphere) or
        ``t2 w_j² + 1 - w_j²`` (Gaussian), with ``w_j² = x_j²/‖x‖²`` whichever way ``x`` was rounded (and
        ``w = e_1`` for ``x = 0``). The variance is ``(E[v_j²]/M² - x_j²)/m`` (rows beyond norm 1 as clipped).
        """
        values = self._rows(x)
        d = self._dim
        r = _row_norms(values)
        w2 = np.zeros(values.shape)
        w2[:, 0] = 1.0  # x = 0 is rounded to ±e_1
        pos = r > 0
        w2[pos] = (values[pos] / r[pos, None]) ** 2
        rc = np.minimum(r, 1.0)
        xj2 = w2 * (rc * rc)[:, None]
        t2 = self._t2
        if self._kind == 2:
            ev2 = t2 * w2 + 1.0 - w2
        elif d == 1:
            ev2 = np.ones_like(w2)
        else:
            ev2 = t2 * w2 + (1.0 - t2) * (1.0 - w2) / (d - 1)
        return (ev2 / self._scale_m**2 - xj2) / self._repetitions

    def expected_squared_error(self, x: ArrayLike) -> float:
        """``E‖estimate - mean(x)‖²`` of the mean estimated from one person per row of ``x`` (closed form).

        ``Σ_i (squared_norm - min(‖x_i‖, 1)²) / (m n²)``, the sum of :meth:`variance` over ``n²``.
        """
        values = self._rows(x)
        r = np.minimum(_row_norms(values), 1.0)
        n = values.shape[0]
        return float(np.sum(self._squared_norm - r * r) / (self._repetitions * n * n))

    def estimate_mean(self, data: Reports | Aggregate, *, names: Any = None) -> VectorMeanEstimate:
        """Unbiased estimate of the mean vector behind the reports.

        With ``N = n·m`` reports, the estimate is the sum of the decoded directions over ``N``:
        ``(pos - neg) / (2**24 · M · N)``. Standard errors are empirical: each coordinate's second moment of
        the decoded reports (from the sums of squares) less the squared mean, over ``N - 1``, then over ``N``
        (treating the reports as independent; the repetitions of one person are independent given their
        vector). They include the spread of the people's vectors around their mean, so for the mean of these
        people they are conservative (by at most that spread over ``N``, small unless ε is large). ``expected_squared_error`` is the closed form ``squared_norm / N``, the exact error less
        ``mean ‖x_i‖² / N`` (at most ``1/N``).

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate.
        names : sequence of str, optional
            Coordinate names for the result.
        """
        names = check_names(names, self._dim)
        agg = self._as_aggregate(data)
        n = agg.n_reports
        if n == 0:
            raise ValueError("estimate_mean: no reports")
        N = n * self._repetitions
        c = agg.counts.reshape(3, self._dim)
        unit = _SCALE * self._scale_m * N
        mean = (c[0] - c[1]) / unit
        second = c[2] / (_SCALE * self._scale_m**2 * N)
        floor = self._squared_norm / self._dim
        if N > 1:
            var = np.maximum(second - mean * mean, 0.0) * (N / (N - 1))
            var = np.where(var > 0, var, floor)
        else:
            var = np.full(self._dim, floor)
        return VectorMeanEstimate(mean=mean, standard_errors=np.sqrt(var / N),
                                  expected_squared_error=self._squared_norm / N, n_reports=n,
                                  epsilon=self._epsilon, spec=agg.spec, dim=self._dim, names=names)


class PrivHS(UnitVectorMechanism):
    """PrivHS: one sign bit and a public uniform direction (31-bit seed) per report.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20] of each person's reports together.
    dim : int
        Dimension of the vectors (1 to 65536).
    repetitions : int, optional
        Reports per person, each at ``epsilon/repetitions``; default: the ``m`` in ``1..ceil(ε)`` minimizing
        ``B(d, ε/m)²/m`` (see :mod:`ldpnum.vectors.unit`).

    Notes
    -----
    Each call of ``privatize`` on one person's vector is ε-LDP; estimators are post-processing. A report is
    ``2 s + b`` (uint32), ``s`` the seed and ``b`` the randomized sign of ``⟨g_s, w⟩``; for every seed the
    bit is randomized response with the integer plan of the two-output randomizer, so the ratio of any
    report's probabilities under two inputs is at most ``t_hi/t_lo <= e^{ε/m}`` (exact). The decoded report
    ``(2b - 1) g_s/‖g_s‖ / ((2π - 1) c_d)`` is unbiased with squared norm ``B² = 1/((2π - 1) c_d)²``.

    References
    ----------
    V. Feldman, K. Talwar, "Lossless Compression of Efficient Private Local Randomizers", ICML 2021;
    J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally private
    estimation", JASA 2018.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> X = np.random.default_rng(0).normal(size=(20_000, 3))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True) * 2        # norm 1/2
    >>> X[:, 0] = np.abs(X[:, 0])
    >>> m = ldp.PrivHS(epsilon=2.0, dim=3)
    >>> r = m.privatize(X, rng=1)
    >>> r.codes.shape, r.codes.dtype
    ((20000, 1), dtype('uint32'))
    >>> est = m.estimate_mean(m.aggregate(r))
    >>> bool(np.all(np.abs(est.mean - X.mean(axis=0)) < 4 * est.standard_errors))
    True
    """

    name = "priv_hs"
    _kind = 0

    def __init__(self, epsilon: float, dim: int, *, repetitions: int | None = None) -> None:
        self._init_common(epsilon, dim)
        reps = self._check_repetitions(repetitions, self._epsilon)
        cd = privhs_constant(self._dim)
        if reps is None:
            candidates = range(1, max(1, math.ceil(self._epsilon)) + 1)
            reps = min(candidates, key=lambda mm: self._privhs_scale(self._epsilon / mm, cd) ** -2 / mm)
        self._repetitions = reps
        b = binary_plan(self._epsilon / reps)
        self._plan = PrivHSPlan(dim=self._dim, repetitions=reps, t_lo=b.t_lo, t_hi=b.t_hi)
        self._scale_m = self._privhs_scale(self._epsilon / reps, cd)
        self._squared_norm = self._scale_m**-2
        self._t2 = 1.0 / self._dim  # the sign does not change T² = ⟨g/‖g‖, w⟩², of mean 1/d

    @staticmethod
    def _privhs_scale(eps, cd):
        b = binary_plan(eps)
        return (b.t_hi - b.t_lo) / TWO53 * cd

    def _spec_params(self):
        return self._common_params()

    @classmethod
    def _from_spec(cls, spec):
        _check_family(spec)
        return cls(epsilon=spec.epsilon, dim=spec.get("dim"), repetitions=spec.get("repetitions"))

    def _run_kernel(self, values, words, out, sphere=None):
        inv, keep = _sphere_inputs(values) if sphere is None else sphere
        launch(client_unit.privhs_kernel, values, inv, keep, self._repetitions, self._plan.t_hi, words, out)


class _RejectionMechanism(UnitVectorMechanism):
    """Shared body of the compressed PrivUnit and PrivUnitG (one rejection kernel, one plan)."""

    _sphere: ClassVar[bool] = True
    _design_: _Design

    def _init_rejection(self, epsilon, dim, repetitions, failure_probability, trials, choose_split):
        self._init_common(epsilon, dim, min_dim=2 if self._sphere else 1)
        reps = self._check_repetitions(repetitions, self._epsilon)
        self._failure = check_scalar(failure_probability, "failure_probability", float, low=0, high=1,
                                     include_boundaries="neither")
        if trials is not None:
            trials = check_scalar(trials, "trials", int, low=1, high=MAX_TRIALS)

        def design(mm, max_expected_trials):
            eps = self._epsilon / mm
            t_c = _accept_threshold(eps)
            if t_c >= TWO32:
                raise ValueError(
                    f"{type(self).__name__}: epsilon/repetitions = {eps!r} is too small for the acceptance threshold "
                    f"on a 2**32 grid: e^-ε rounds to 1, so every seed would be accepted and the reports would carry "
                    f"no information; each report needs epsilon/repetitions >= {min_epsilon_per_report()!r}")
            split = choose_split(eps, t_c, max_expected_trials)
            if split is None:
                return None, t_c
            des = _design(self._sphere, self._dim, eps, split, t_c, trials, self._failure)
            if max_expected_trials is not None and 1.0 / des.acceptance > max_expected_trials:
                return None, t_c
            return des, t_c

        if reps is None:  # the fewest reports with a split of at most TRIAL_TARGET expected trials
            reps = 1
            des, t_c = design(reps, TRIAL_TARGET)
            while des is None:
                reps += 1
                des, t_c = design(reps, TRIAL_TARGET if reps < math.ceil(self._epsilon) else None)
        else:
            des, t_c = design(reps, None)
        assert des is not None
        if des.trials > MAX_TRIALS:
            raise ValueError(f"{type(self).__name__}: {des.trials} trials per report needed at epsilon/repetitions = "
                             f"{self._epsilon / reps:g} (more than {MAX_TRIALS}); use more repetitions")
        self._repetitions = reps
        self._design_ = des
        self._plan = RejectionPlan(dim=self._dim, repetitions=reps, trials=des.trials, t_c=t_c, gamma=des.gamma,
                                   q=des.q, sphere=self._sphere)
        self._scale_m = des.scale
        self._squared_norm = des.squared_norm
        self._t2 = des.t2

    @property
    def split(self) -> float:
        """``θ = ε0/ε`` of each report: ``ε1 = (1 - θ) ε/m`` sets the cap's mass ``q = 1/(1 + e^ε1)``."""
        return self._design_.split

    @property
    def cap_threshold(self) -> float:
        """``γ``: the cap is ``⟨v, w⟩ >= γ``."""
        return self._design_.gamma

    @property
    def cap_probability(self) -> float:
        """``p``: probability (ideal family, ``J = ∞``) that a report is in its cap, ``q/A``."""
        return self._design_.q / self._design_.acceptance

    @property
    def trials(self) -> int:
        """``J``, the trial bound of each report."""
        return self._plan.trials

    @property
    def expected_trials(self) -> float:
        """Expected trials per report, ``(1 - (1 - A)^J)/A`` (the fallback counted as a trial)."""
        A = self._design_.acceptance
        return (1.0 - (1.0 - A) ** self.trials) / A + (1.0 - A) ** self.trials

    def _rejection_params(self):
        return {**self._common_params(), "trials": self._plan.trials, "failure_probability": self._failure,
                "split": self._design_.split}

    def _run_kernel(self, values, words, out, trials=None, sphere=None):
        inv, keep = _sphere_inputs(values) if sphere is None else sphere
        if trials is None:
            trials = np.empty(out.shape, dtype=np.int64)
        p = self._plan
        launch(client_unit.rejection_kernel, values, inv, keep, self._repetitions, p.trials, self._sphere,
               p.gamma, p.t_c, words, out, trials)

    def trial_counts(self, x: ArrayLike, *, rng: SeedLike = None, clip: bool = False) -> tuple[Reports, np.ndarray]:
        """``privatize`` that also returns the trials each report used (``trials + 1`` when it fell back).

        Same words as :meth:`privatize` with the same ``rng``, so the same reports.
        """
        from .._random import resolve_rng

        values = self.prepare_values(x, clip=clip)
        source = resolve_rng(rng)
        n = values.shape[0]
        out = self._allocate_reports(n)
        used = np.zeros(out.shape, dtype=np.int64)
        if n:
            self._run_kernel(values, source.draw(n * self.words_per_record), out, used)
        out.flags.writeable = False
        return Reports._from_kernel(out, self.spec), used


class PrivUnit(_RejectionMechanism):
    """PrivUnit (Bhowmick et al.), compressed to one 32-bit seed per report by rejection sampling.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20] of each person's reports together.
    dim : int
        Dimension of the vectors (2 to 65536).
    optimized : bool, optional
        Feldman and Talwar's PrivUnitOptimized: the budget split minimizing the variance proxy on the grid
        ``θ = 0, 0.01, ..., 1``. Default False: ``θ = 1/2``.
    repetitions : int, optional
        Reports per person at ``epsilon/repetitions`` each; default: the fewest with at most 64 expected
        trials per report.
    failure_probability : float, optional
        Probability that all ``J`` trials reject (default 1e-6); sets ``J``.
    trials : int, optional
        The trial bound ``J`` itself (overrides ``failure_probability``).

    Notes
    -----
    Each call of ``privatize`` on one person's vector is ε-LDP for the ideal family (exactly: see
    :class:`RejectionPlan`), and ``2ε``-LDP for any family; estimators are post-processing. The decoded
    report ``g_s/‖g_s‖ / M`` is unbiased for any ``J`` and has squared norm ``1/M²`` (:attr:`squared_norm`).

    References
    ----------
    A. Bhowmick, J. Duchi, J. Freudiger, G. Kapoor, R. Rogers, "Protection Against Reconstruction and Its
    Implications for Private Federated Learning", 2019; V. Feldman, K. Talwar, "Lossless Compression of
    Efficient Private Local Randomizers", ICML 2021.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> X = np.tile([0.6, 0.0, -0.8], (20_000, 1))
    >>> m = ldp.PrivUnit(epsilon=4.0, dim=3, optimized=True)
    >>> m.repetitions, m.trials, round(m.expected_trials, 1)
    (1, 96, 7.4)
    >>> est = m.estimate_mean(m.privatize(X, rng=1))
    >>> bool(np.all(np.abs(est.mean - X[0]) < 4 * est.standard_errors))
    True
    """

    name = "priv_unit"
    _kind = 1
    _sphere = True

    def __init__(self, epsilon: float, dim: int, *, optimized: bool = False, repetitions: int | None = None,
                 failure_probability: float = DEFAULT_FAILURE, trials: int | None = None) -> None:
        if not isinstance(optimized, (bool, np.bool_)):
            raise TypeError(f"optimized must be True or False; got {type(optimized).__name__} {optimized!r}")
        self._optimized = bool(optimized)
        d = check_scalar(dim, "dim", int, low=2, high=MAX_DIM)

        def choose(eps, t_c, max_expected_trials):
            if self._optimized:
                return _best_split(True, d, eps, t_c, False, max_expected_trials)
            return DEFAULT_SPLIT

        self._init_rejection(epsilon, dim, repetitions, failure_probability, trials, choose)

    def _spec_params(self):
        return {**self._rejection_params(), "optimized": self._optimized}

    def _repr_params(self):
        return {"optimized": self._optimized} if self._optimized else {}

    @classmethod
    def _from_spec(cls, spec):
        _check_family(spec)
        return cls(epsilon=spec.epsilon, dim=spec.get("dim"), optimized=bool(spec.get("optimized")),
                   repetitions=spec.get("repetitions"), failure_probability=spec.get("failure_probability"),
                   trials=spec.get("trials"))


class PrivUnitG(_RejectionMechanism):
    """PrivUnitG (Asi, Feldman and Talwar), compressed to one 32-bit seed per report by rejection sampling.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20] of each person's reports together.
    dim : int
        Dimension of the vectors (1 to 65536).
    repetitions, failure_probability, trials
        As for :class:`PrivUnit`.

    Notes
    -----
    Each call of ``privatize`` on one person's vector is ε-LDP for the ideal family (exactly: see
    :class:`RejectionPlan`), and ``2ε``-LDP for any family; estimators are post-processing. The report is a
    seed ``s`` whose normal vector ``g_s`` has ``⟨g_s, w⟩ >= γ`` with probability ``p``; ``p`` and ``γ`` (through
    the split ``θ``) minimize the exact squared norm ``(d + γM)/M²`` of the decoded report ``g_s / M``.

    References
    ----------
    H. Asi, V. Feldman, K. Talwar, "Optimal Algorithms for Mean Estimation under Local Differential
    Privacy", ICML 2022; V. Feldman, K. Talwar, "Lossless Compression of Efficient Private Local
    Randomizers", ICML 2021.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> X = np.tile([0.6, 0.0, -0.8], (20_000, 1))
    >>> m = ldp.PrivUnitG(epsilon=2.0, dim=3)
    >>> est = m.estimate_mean(m.privatize(X, rng=1))
    >>> bool(np.all(np.abs(est.mean - X[0]) < 4 * est.standard_errors))
    True
    """

    name = "priv_unit_g"
    _kind = 2
    _sphere = False

    def __init__(self, epsilon: float, dim: int, *, repetitions: int | None = None,
                 failure_probability: float = DEFAULT_FAILURE, trials: int | None = None) -> None:
        d = check_scalar(dim, "dim", int, low=1, high=MAX_DIM)

        def choose(eps, t_c, max_expected_trials):
            return _best_split(False, d, eps, t_c, True, max_expected_trials)

        self._init_rejection(epsilon, dim, repetitions, failure_probability, trials, choose)

    def _spec_params(self):
        return self._rejection_params()

    @classmethod
    def _from_spec(cls, spec):
        _check_family(spec)
        return cls(epsilon=spec.epsilon, dim=spec.get("dim"), repetitions=spec.get("repetitions"),
                   failure_probability=spec.get("failure_probability"), trials=spec.get("trials"))
