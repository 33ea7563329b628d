"""Adaptive two-round collection of a numerical distribution: a Square Wave pilot, then a round adapted to it.

Each person reports **once**, with the full ε, in one of two rounds:

1. a pilot share of the people (default 20%) reports with :class:`~ldpnum.SquareWave`;
2. the collector estimates the pilot's distribution and publishes a small public payload
   (:class:`AdaptivePayload`): the breakpoints of a *warping CDF* ``F`` on a fixed grid of the bounds, and the
   runs of buckets where the pilot showed point masses (:func:`point_mass_zones`);
3. everyone else reports with :class:`WarpedSquareWave`: a Square Wave applied to ``F(x)`` instead of the
   value's unit position. Where the pilot saw much mass (a point mass, the bulk of a heavy tail) ``F`` is steep,
   so the fixed window of the Square Wave covers a narrower range of values there: resolution goes where the
   data are.

The estimate fits one histogram of equal buckets on the bounds to both rounds' reports at once, each through its
own exact transition (:func:`ldpnum.estimation.em.joint_ems_heldout`), with the point-mass zones left out of the
smoothing (the background is smoothed, a point mass stays sharp). The collector decides from the pilot whether
to adapt (:func:`adapts`): when the pilot's held-out likelihood prefers smoothing (a smooth density), the payload
says ``design="plain"`` and the second round is the pilot's own Square Wave, so that the whole collection is one plain
Square Wave collection and its estimate is exactly one round's on all n people (the aggregates merge).

Measured (``python bench/adaptive.py``: n = 10^6, ε = 0.5-4, 19 collections per cell, ratios of W1 / KS /
range MSE (volumes 0.1 and 0.5) to one round of SW + ems-cv on the same people and reports, both with the
held-out trim of the support of :func:`~ldpnum.estimation.em.ems_heldout`): five point masses (30%) on a
Beta(2, 5) at ε = 2, 0.55 / 1.02 / 0.59 / 0.38, at ε = 4 0.79 / 1.09 / 1.10 / 0.77; at ε <= 1 within 0.83-1.05
(the point masses are not clear enough to pin: the zones the joint estimate finds on both rounds' reports, kept
where both halves of them agree, cover fewer of them). KS does not fall there: a histogram's CDF is
continuous, so against a point mass of 10% it is at least 0.05 off, and one round is already at 0.053-0.059. A
log-normal tail on the bound (0, 100): KS 0.41-0.55, range MSE 0.36-0.64 at every ε, but W1 0.99-1.18 (95%
intervals over the collections from [0.77, 1.31] to [0.79, 1.80]): most of W1 there is mass the fit puts over the
empty part of the bounds, which the trim cuts from one round better than from the joint fit, and a warp built
from the people's true distribution does no better (W1 0.95-1.24: the bench's "oracle warp"). The flights'
distance: W1 0.75-0.93, KS 0.84-1.03, range MSE 0.67-0.86. Smooth data (Beta(5, 2), a Gaussian): 1.00 in every
metric at every ε, since :func:`adapts` warped none of their 152 collections (nor 32 more the rule was not chosen
on). Time: 0.09-0.69 s for the whole protocol (medians, 2-core machine), one round 0.06-0.76 s.
The final joint fit runs accelerated by SQUAREM (:func:`~ldpnum.estimation.em.joint_ems_heldout`: at spiky ε = 1
the plain final fit of EM stopped at its 10,000-step cap); the held-out search that chooses the smoothing level and
the pilot's fit stay plain. Accelerating the search too gave 0.43-1.00 s, but changed the level chosen: against the
plain search on the same 10 collections (W1 / KS / range MSE 0.1 / 0.5), spiky ε = 1 1.06 / 1.00 / 1.25 / 1.15
(smoothing where the plain search chose none), ε = 4 0.79 / 1.00 / 0.93 / 0.85; so it is not the default.

Privacy. The warp is a fixed public function of the value, applied before the Square Wave's randomized rounding;
whatever the warp, a report's distribution is a mixture of the Square Wave's window rows, so every report is ε-LDP
exactly as a Square Wave report is (the plan, and its exact ε check, are the Square Wave's). The second round's
reports depend on the pilot only through the public payload.

References
----------
L. Wang, Q. Ye, H. Hu, X. Meng, "PriPL-Tree: Accurate Range Query for Arbitrary Distribution under Local
Differential Privacy", PVLDB 17, 2024 (a 20% Square Wave pilot, a fitted shape, a second round adapted to it).
Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating Numerical Distributions under Local
Differential Privacy", SIGMOD 2020 (Square Wave, EM/EMS).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._results import DistributionEstimate
from .._typing import ArrayLike, Bounds, FloatArray, SeedLike
from .._validation import check_bounds, check_choice, check_epsilon, check_scalar
from ..aggregate import Aggregate
from ..base import Mechanism, mechanism_for
from ..reports import Reports
from ..spec import Spec, check_spec
from .wave import SquareWave

__all__ = ["AdaptiveDistribution", "AdaptivePayload", "WarpedSquareWave", "adapts", "mass_span", "point_mass_zones",
           "warp_knots", "WARP_TOTAL"]

#: Warping CDFs are integer knots over this total (so a payload is exact and JSON-serializable).
WARP_TOTAL = 2**20
#: Default number of equal segments of the bounds on which the warping CDF is linear.
DEFAULT_SEGMENTS = 128
#: Most segments a warp may have.
MAX_SEGMENTS = 4096
#: Share of the warp's slope spread uniformly (a floor on ``F'``: no range of values is squeezed to nothing).
UNIFORM_MIX = 0.5
#: Most a segment's share of the warped scale may exceed the uniform share ``1/G`` by (a cap on ``F'``: it keeps
#: every bucket's range of window starts, and so the transition's band, narrow).
MAX_SLOPE = 16.0
#: Default share of people in the pilot.
DEFAULT_PILOT_SHARE = 0.2
#: Fewest pilot reports :meth:`AdaptiveDistribution.fit_payload` fits a warp from.
MIN_PILOT_REPORTS = 2000
#: Buckets of the joint fit (a multiple of every default segment count).
FIT_BINS = 1024
#: Buckets of the joint fit of both rounds (a divisor or multiple of :data:`FIT_BINS`, and of the segments).
JOINT_BINS = 1024
#: The pilot's held-out smoothing level at or below which the second round may be warped ("auto"; see
#: :func:`adapts`).
ADAPT_MAX_SMOOTHING = 1
#: At that level, the second round is warped only when the pilot's held-out search preferred no smoothing (not
#: confirmed: ``smoothing_fallback``) or when the pilot's buckets holding ``ADAPT_MASS`` of its mass cover under
#: ``ADAPT_SPAN`` of the bounds (a tail on wide public bounds). See :func:`adapts` for the measurements.
ADAPT_MASS, ADAPT_SPAN = 0.9, 0.1
#: ... or when the pilot's plain-EM histogram of :data:`ZONE_BINS` buckets shows a point mass of at least this
#: excess over the running median of 49 buckets (:func:`point_mass_zones` with its defaults): at one pass the noise
#: of smooth densities reached 0.048 (a Gaussian), the bench's spiky data 0.07-0.12, one value held by 30% of the
#: people 0.31.
ADAPT_ATOM_MASS = 0.06
#: Cells of the uniform draw that assigns people to rounds (:func:`ldpnum._random.assign_columns`).
_ROUND_CELLS = 1 << 16
DESIGNS = ("warped", "plain")
#: Point-mass detection on the pilot's plain-EM histogram (:func:`point_mass_zones`): half-width of the running
#: median (buckets), the peak-to-median ratio, the least excess mass of a zone and the buckets added each side.
ZONE_WINDOW, ZONE_RATIO, ZONE_MIN_MASS, ZONE_PAD = 24, 2.0, 0.02, 3
#: Point masses are detected on the pilot's plain-EM histogram of this many buckets (coarser than the fit: plain
#: EM converges there within its cap, where at 1024 buckets and small ε it is still a flat bump), run for at
#: most this many iterations.
ZONE_BINS, ZONE_EM_ITER = 256, 2000
#: Iteration cap of the pilot's fit (its held-out search and final fit): the payload needs the level's side of
#: the switch, 128 segment masses and the plain-EM histogram, not plain EM run to its 1e-3-nat stop.
PILOT_MAX_ITER = 2000
#: Iteration caps of the joint fit of both rounds: its final fit, and the fits on halves of its held-out search
#: (which only rank the levels). Measured on one collection each of spiky ε = 1, 2, 4 and log-normal ε = 1, 4
#: (n = 10^6): capping the search at 800 iterations left every metric as it was (one level changed, 1 -> 0 at
#: spiky ε = 1, W1 1.16 -> 0.94 of one round) and cut the iterations by 10-48%; capping the final fit too (5,000)
#: raised spiky ε = 1's W1 by 16%; fitting on 512 buckets instead of 1024 chose plain EM at spiky ε = 4 (W1 0.42
#: -> 1.54 of one round).
#: (Those measurements were of the plain iteration; the joint fits now run SQUAREM, and converge within the caps far
#: more often: see :func:`ldpnum.estimation.em.joint_ems_heldout`.)
JOINT_MAX_ITER = 10_000
JOINT_SEARCH_MAX_ITER = 800
#: How the joint fit treats the payload's point-mass zones: False leaves their buckets out of the smoothing;
#: True fits each of them as a smoothed continuous part plus an unsmoothed atom (``atoms=True`` of
#: :func:`~ldpnum.estimation.em.joint_ems_heldout`). Measured and dropped (19 paired collections, n = 10^6): no cell
#: better, spiky ε = 4 W1 1.31× and range MSE 1.12-1.22× (the likelihood cannot split a bucket between its two
#: parts, so half of each point mass stays in the smoothed part, and the held-out search then picks no smoothing).
PIN_ATOMS = False
#: Whether the joint estimate finds its point-mass zones again on both rounds' reports (:func:`_joint_zones`)
#: rather than keeping the pilot's (the payload's ``pinned``): five times the pilot's reports show the point masses
#: more clearly. Measured (19 paired collections, n = 10^6, W1 / KS / range MSE 0.1 / 0.5 against the pilot's
#: zones): five point masses on a Beta(2, 5) at ε = 2 0.80 / 1.00 / 0.83 / 0.74, ε = 1 0.97 / 0.99 / 1.00 / 0.93,
#: ε = 0.5 and 4 1.00-1.05; the flights' distance 0.98-1.02; data the switch keeps plain are not touched. Zones
#: found on all the reports at once, without the two halves' agreement, did as well on the point masses (ε = 1
#: 0.93 / 0.99 / 0.93 / 0.88) but cost the flights' distance at ε = 1 1.03 / 1.05 in range MSE: a converged
#: plain-EM fit is spiky wherever the noise lets it be.
REDETECT_ZONES = True
#: Seed of the binomial split of the counts in :func:`_joint_zones`.
ZONE_SPLIT_SEED = 0x5A0E


def _check_knots(knots: Any, name: str = "knots") -> tuple[int, ...]:
    """Knots of a warping CDF: integers increasing strictly from 0, at most :data:`MAX_SEGMENTS` + 1 of them."""
    if isinstance(knots, (str, bytes)) or not hasattr(knots, "__len__"):
        raise TypeError(f"{name} must be a sequence of integers; got {type(knots).__name__}")
    out = tuple(check_scalar(k, name, int, low=0, high=2**53) for k in knots)
    if not 2 <= len(out) <= MAX_SEGMENTS + 1:
        raise ValueError(f"{name} must hold 2 to {MAX_SEGMENTS + 1} integers; got {len(out)}")
    if out[0] != 0:
        raise ValueError(f"{name} must start at 0; got {out[0]}")
    steps = np.diff(np.asarray(out, dtype=np.int64))
    if np.any(steps <= 0):
        i = int(np.flatnonzero(steps <= 0)[0])
        raise ValueError(f"{name} must increase strictly; knot {i + 1} ({out[i + 1]}) is not above knot {i} ({out[i]})")
    return out


def warp_knots(probabilities: ArrayLike, n_segments: int = DEFAULT_SEGMENTS, *, mix: float | None = None,
               total: int = WARP_TOTAL) -> tuple[int, ...]:
    r"""Integer knots of the warping CDF fitted to a histogram of equal buckets.

    The buckets are summed to ``n_segments`` equal segments (masses :math:`s_g`), mixed with the uniform
    distribution, :math:`w_g = (1 - \lambda) s_g + \lambda / G`, and the knots are
    :math:`K_g = \mathrm{round}(T \sum_{h < g} w_h)`, so :math:`K_0 = 0`, :math:`K_G = T` and every step is at
    least :math:`\lfloor \lambda T / G \rceil` (the warp's slope never falls below ``mix`` times the uniform one).
    Shares above ``MAX_SLOPE / G`` (16 times the uniform one) are capped and their excess spread over the other
    segments in proportion to their shares.

    Parameters
    ----------
    probabilities : array_like, shape (d,)
        Non-negative bucket masses over the bounds, ``d`` a multiple of ``n_segments``.
    n_segments : int
    mix : float in (0, 1], optional
        The uniform share :math:`\lambda` (default :data:`UNIFORM_MIX`, 0.5).
    total : int
        :math:`T`.

    Examples
    --------
    >>> warp_knots([0.7, 0.1, 0.1, 0.1], 2, mix=0.5, total=100)
    (0, 65, 100)
    """
    p = np.asarray(probabilities, dtype=np.float64)
    n_segments = check_scalar(n_segments, "n_segments", int, low=1, high=MAX_SEGMENTS)
    mix = check_scalar(UNIFORM_MIX if mix is None else mix, "mix", float, low=0, high=1, include_boundaries="right")
    total = check_scalar(total, "total", int, low=1, high=2**53)
    if p.ndim != 1 or p.size % n_segments:
        raise ValueError(f"probabilities must be 1-D with a multiple of n_segments={n_segments} buckets; got shape "
                         f"{p.shape}")
    if not (np.all(np.isfinite(p)) and np.all(p >= 0) and p.sum() > 0):
        raise ValueError("probabilities must be finite, non-negative and not all zero")
    s = p.reshape(n_segments, -1).sum(axis=1)
    w = (1 - mix) * s / s.sum() + mix / n_segments
    cap = MAX_SLOPE / n_segments
    for _ in range(n_segments):
        over = w > cap * (1 + 1e-12)
        if not over.any():
            break
        excess = float((w[over] - cap).sum())
        w[over] = cap
        free = w < cap
        w[free] += excess * w[free] / w[free].sum()
    knots = np.rint(total * np.concatenate([[0.0], np.cumsum(w)])).astype(np.int64)
    knots[-1] = total
    return _check_knots([int(k) for k in knots])


def point_mass_zones(probabilities: ArrayLike, *, window: int = ZONE_WINDOW, ratio: float = ZONE_RATIO,
                     min_mass: float = ZONE_MIN_MASS, pad: int = ZONE_PAD) -> tuple[tuple[int, int], ...]:
    r"""Runs of buckets holding a point mass: ``((start, stop), ...)``, bucket ``i`` pinned for ``start <= i < stop``.

    A bucket is *hot* when its mass exceeds ``ratio`` times the running median of the ``2 window + 1`` buckets
    around it (the background, :math:`m_i`); each run of hot buckets, widened by ``pad`` buckets on each side,
    is a zone when its excess :math:`\sum_i (p_i - m_i)` over the widened run exceeds ``min_mass``. The
    collector pins the zones in the joint fit (no smoothing there: a point mass stays sharp while the
    background is smoothed).

    Examples
    --------
    >>> p = np.full(100, 0.008); p[40] += 0.2
    >>> point_mass_zones(p / p.sum())
    ((37, 44),)
    """
    from scipy.ndimage import median_filter

    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 1 or not (np.all(np.isfinite(p)) and np.all(p >= 0)):
        raise ValueError("probabilities must be a 1-D array of finite, non-negative masses")
    window = check_scalar(window, "window", int, low=1)
    pad = check_scalar(pad, "pad", int, low=0)
    ratio = check_scalar(ratio, "ratio", float, low=1)
    min_mass = check_scalar(min_mass, "min_mass", float, low=0)
    bg = median_filter(p, size=2 * window + 1, mode="nearest")
    hot = np.r_[False, p > ratio * np.maximum(bg, np.finfo(float).tiny), False].astype(np.int8)
    starts, stops = np.flatnonzero(np.diff(hot) == 1), np.flatnonzero(np.diff(hot) == -1)
    zones: list[tuple[int, int]] = []
    for a, b in zip(starts, stops):
        lo, hi = max(0, int(a) - pad), min(p.size, int(b) + pad)
        if float((p[lo:hi] - bg[lo:hi]).sum()) > min_mass:
            if zones and lo <= zones[-1][1]:
                lo = zones.pop()[0]
            zones.append((lo, hi))
    return tuple(zones)


def _pinned_mask(zones, n_bins):
    """The zones (runs of :data:`FIT_BINS` buckets) as a mask of ``n_bins`` buckets, a divisor or multiple of it."""
    if not zones:
        return None
    mask = np.zeros(FIT_BINS, dtype=bool)
    for lo, hi in zones:
        mask[lo:hi] = True
    if n_bins < FIT_BINS:
        mask = mask.reshape(n_bins, -1).any(axis=1)
    elif n_bins > FIT_BINS:
        mask = np.repeat(mask, n_bins // FIT_BINS)
    return None if mask.all() else mask


class WarpedSquareWave(Mechanism):
    r"""Square Wave on a warped domain: the value's position is ``F(x)`` for a public increasing ``F``.

    ``F`` is linear on each of ``G = len(knots) - 1`` equal segments of the bounds, with
    ``F(low + g (high - low) / G) = knots[g] / knots[-1]``; the reports are those of
    ``SquareWave(epsilon, bounds)`` on the value whose unit position is ``F(x)``. Where ``F`` is steep the
    Square Wave's fixed window spans a narrow range of values: the second round of :class:`AdaptiveDistribution`
    steepens it where its pilot saw the mass.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    bounds : (float, float)
        Public range of the values.
    knots : sequence of int, optional
        The warp: integers increasing strictly from 0 (at most 4,097; :func:`warp_knots` fits them). The default
        ``(0, 1)`` is the identity warp: the reports are a Square Wave's on the bounds.
    bandwidth, n_cells : optional
        As for :class:`~ldpnum.SquareWave`.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. The plan is the
    Square Wave's (the warp acts before the randomized rounding to a window start, and every window start's row
    is a Square Wave row), so ε is exact and independent of the warp. ``estimate_distribution`` fits equal
    buckets of the bounds through the warped transition
    (:func:`ldpnum.estimation.em.warped_transition_from_plan`). There is no unbiased per-report mean (the warp
    is not linear): use ``estimate_distribution(...).mean``.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.WarpedSquareWave(epsilon=2.0, bounds=(0, 10), knots=(0, 3, 10))
    >>> m.warp([0.0, 2.5, 5.0, 10.0]).tolist()
    [0.0, 0.15, 0.3, 1.0]
    >>> x = np.random.default_rng(0).uniform(0, 5, 20_000)
    >>> d = m.estimate_distribution(m.privatize(x, rng=1), n_bins=64)
    >>> bool(abs(d.quantile(0.5) - 2.5) < 0.3)
    True
    """

    name = "warped_square_wave"
    aliases = ("wsw",)

    def __init__(self, epsilon: float, bounds: Bounds, *, knots: Sequence[int] = (0, 1),
                 bandwidth: float | None = None, n_cells: int | None = None) -> None:
        super().__init__(epsilon, bounds)
        self._knots = _check_knots(knots)
        self._sw = SquareWave(self._epsilon, (0.0, 1.0), bandwidth=bandwidth, n_cells=n_cells)
        self._plan = self._sw.plan
        k = np.asarray(self._knots, dtype=np.float64)
        self._unit_knots = k / k[-1]
        self._unit_knots.flags.writeable = False

    @property
    def knots(self) -> tuple[int, ...]:
        """The warp's integer knots."""
        return self._knots

    @property
    def n_segments(self) -> int:
        """Number of equal segments of the bounds on which the warp is linear."""
        return len(self._knots) - 1

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: reports are codes ``0..n_cells-1``."""
        return self._sw.n_cells

    @property
    def bandwidth(self) -> float:
        """The Square Wave's half-width ``b`` (on the warped unit scale)."""
        return self._sw.bandwidth

    def _spec_params(self):
        return {"bounds": self._bounds, "knots": self._knots, "bandwidth": self._sw.bandwidth,
                "n_cells": self._sw.n_cells}

    def warp(self, x: ArrayLike) -> FloatArray:
        """``F(x)`` in [0, 1] for values in the bounds (clamped outside): the unit position the Square Wave sees."""
        low, high = self._bounds
        t = np.clip((np.asarray(x, dtype=np.float64) - low) / (high - low), 0.0, 1.0) * self.n_segments
        g = np.minimum(t.astype(np.int64), self.n_segments - 1)
        k = self._unit_knots
        return k[g] + (k[g + 1] - k[g]) * (t - g)

    def unit_edges(self, n_bins: int) -> FloatArray:
        """``F`` at the edges of ``n_bins`` equal buckets of the bounds (``n_bins`` a multiple of the segments)."""
        n_bins = check_scalar(n_bins, "n_bins", int, low=1)
        if n_bins % self.n_segments:
            raise ValueError(f"n_bins must be a multiple of the warp's {self.n_segments} segments; got {n_bins}")
        low, high = self._bounds
        edges = self.warp(np.linspace(low, high, n_bins + 1))
        edges[0], edges[-1] = 0.0, 1.0
        return edges

    def transition(self, n_bins: int = FIT_BINS) -> Any:
        """The exact transition from ``n_bins`` equal buckets of the bounds to the output cells."""
        from ..estimation.em import warped_transition_from_plan

        return warped_transition_from_plan(self._plan, self.unit_edges(n_bins))

    def _run_kernel(self, values, words, out):
        warped = self.warp(values)
        warped.flags.writeable = False  # validated values are read-only: the Square Wave kernel's one signature
        self._sw._run_kernel(warped, words, out)

    def window_starts(self, x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """The kernel's rounding of each value's warped position: base window start and threshold for +1."""
        return self._sw.window_starts(self.warp(self.prepare_values(x)))

    def output_probabilities(self, x: float) -> np.ndarray:
        """Probability of each output cell for a value ``x`` (the Square Wave's at the warped position)."""
        return self._sw.output_probabilities(float(self.warp(np.asarray([x], dtype=np.float64))[0]))

    def estimate_distribution(self, data: Reports | Aggregate, *, n_bins: int | None = None,
                              method: str = "ems-cv", max_iter: int | None = None) -> DistributionEstimate:
        """Reconstruct the distribution of the values behind the reports, on equal buckets of the bounds.

        Parameters
        ----------
        data : Reports or Aggregate
        n_bins : int, optional
            Equal buckets of the bounds, a multiple of the warp's segments (default 1024, or the segments'
            smallest multiple above it).
        method : {"ems-cv", "ems", "em"}
            As for :meth:`ldpnum.SquareWave.estimate_distribution`, on the warped transition.
        max_iter : int, optional
        """
        return _fit([self.aggregate_of(data)], [self], n_bins=n_bins, method=method, max_iter=max_iter)

    def aggregate_of(self, data: Reports | Aggregate) -> Aggregate:
        """``data`` as an aggregate of this mechanism's reports (spec checked)."""
        return self._as_aggregate(data)

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.epsilon, spec.get("bounds"), knots=spec.get("knots"), bandwidth=spec.get("bandwidth"),
                   n_cells=spec.get("n_cells"))


def _transition_of(mechanism, n_bins):
    from ..estimation.em import window_transition_from_plan

    if isinstance(mechanism, WarpedSquareWave):
        return mechanism.transition(n_bins)
    return window_transition_from_plan(mechanism.plan, n_bins)


def _fit(aggs, mechanisms, *, n_bins=None, method="ems-cv", max_iter=None, spec=None, pinned=None,
         search_max_iter=None, atoms=False):
    """One histogram of equal buckets fitted to every aggregate through its mechanism's exact transition."""
    from ..estimation.em import DEFAULT_MAX_ITER, joint_ems_heldout, joint_expectation_maximization

    check_choice(method, "method", ("ems-cv", "ems", "em"))
    n = sum(a.n_reports for a in aggs)
    if n == 0:
        raise ValueError("estimate_distribution: no reports")
    segs = max((m.n_segments for m in mechanisms if isinstance(m, WarpedSquareWave)), default=1)
    if n_bins is None:
        n_bins = -(-FIT_BINS // segs) * segs
    n_bins = check_scalar(n_bins, "n_bins", int, low=2, high=65536)
    max_iter = DEFAULT_MAX_ITER if max_iter is None else check_scalar(max_iter, "max_iter", int, low=1)
    parts = [(np.asarray(a.counts, dtype=np.float64), _transition_of(m, n_bins)) for a, m in zip(aggs, mechanisms)]
    if method == "ems-cv":
        res = joint_ems_heldout(parts, max_iter=max_iter, pinned=pinned, search_max_iter=search_max_iter,
                                atoms=atoms)
    else:
        res = joint_expectation_maximization(parts, smoothing=1 if method == "ems" else 0, max_iter=max_iter,
                                             pinned=pinned, atoms=atoms)
    x = np.maximum(res.x, 0.0)
    low, high = mechanisms[-1].bounds
    return DistributionEstimate(np.linspace(low, high, n_bins + 1), x / x.sum(), spec=spec or aggs[-1].spec,
                                n_reports=n, method=method, n_iter=res.n_iter, converged=res.converged,
                                log_likelihood=tuple(float(v) for v in res.loglik), smoothing=res.smoothing,
                                smoothing_fallback=res.smoothing_fallback)


def _digest(spec: Spec) -> str:
    return hashlib.sha256(repr(spec).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class AdaptivePayload:
    """What the second round's clients receive: public, small, JSON-serializable.

    Attributes
    ----------
    epsilon : float
    bounds : (float, float)
    design : {"warped", "plain"}
        ``"warped"``: the second round reports with ``WarpedSquareWave(epsilon, bounds, knots=knots)``;
        ``"plain"``: with the pilot's Square Wave (``knots`` empty).
    knots : tuple of int
        The warping CDF (integers over :data:`WARP_TOTAL`).
    pilot : str
        Digest of the pilot mechanism's spec (the payload belongs to that pilot).
    n_cells : int
        The Square Wave grid of both rounds.
    pinned : tuple of (int, int)
        Point-mass zones the pilot showed (:func:`point_mass_zones`), as bucket runs of the joint fit's 1024
        buckets. Not used by the clients; the joint estimate leaves out of its smoothing the zones it finds
        again on both rounds' reports (:data:`REDETECT_ZONES`), or these when that is off.
    """

    epsilon: float
    bounds: tuple[float, float]
    design: str
    knots: tuple[int, ...]
    pilot: str
    n_cells: int
    pinned: tuple[tuple[int, int], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "bounds", tuple(check_bounds(self.bounds)))
        check_choice(self.design, "design", DESIGNS)
        knots = _check_knots(self.knots) if self.design == "warped" else tuple(self.knots)
        if self.design == "plain" and knots:
            raise ValueError("a plain payload carries no knots")
        object.__setattr__(self, "knots", knots)
        if not isinstance(self.pilot, str):
            raise TypeError(f"pilot must be a digest string; got {type(self.pilot).__name__}")
        object.__setattr__(self, "n_cells", check_scalar(self.n_cells, "n_cells", int, low=2, high=2**16))
        if isinstance(self.pinned, (str, bytes)) or not hasattr(self.pinned, "__len__"):
            raise TypeError(f"pinned must be a sequence of (start, stop) pairs; got {type(self.pinned).__name__}")
        zones = []
        for i, z in enumerate(self.pinned):
            if isinstance(z, (str, bytes)) or not hasattr(z, "__len__") or len(z) != 2:
                raise ValueError(f"pinned[{i}] must be a (start, stop) pair; got {z!r}")
            lo = check_scalar(z[0], "pinned", int, low=0, high=FIT_BINS)
            hi = check_scalar(z[1], "pinned", int, low=0, high=FIT_BINS)
            if not lo < hi or (zones and lo <= zones[-1][1]):
                raise ValueError(f"pinned[{i}] = {z!r}: zones must be non-empty, increasing and apart")
            zones.append((lo, hi))
        if zones and self.design != "warped":
            raise ValueError("a plain payload pins no zones")
        object.__setattr__(self, "pinned", tuple(zones))

    def to_json(self) -> str:
        """The payload as a JSON object (what a client is sent)."""
        return json.dumps({"epsilon": self.epsilon, "bounds": list(self.bounds), "design": self.design,
                           "knots": list(self.knots), "pilot": self.pilot, "n_cells": self.n_cells,
                           "pinned": [list(z) for z in self.pinned]})

    @classmethod
    def from_json(cls, text: str) -> "AdaptivePayload":
        """Read a payload back from :meth:`to_json` (ValueError for anything else)."""
        try:
            d = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not an adaptive payload: {exc}") from None
        fields = {"epsilon", "bounds", "design", "knots", "pilot", "n_cells", "pinned"}
        if not isinstance(d, dict) or set(d) != fields:
            raise ValueError(f"an adaptive payload is a JSON object with the fields {sorted(fields)}")
        pinned = d["pinned"]
        if not isinstance(pinned, list):
            raise ValueError("an adaptive payload's pinned field is a list of [start, stop] pairs")
        return cls(d["epsilon"], tuple(d["bounds"]), d["design"], tuple(d["knots"]), d["pilot"], d["n_cells"],
                   tuple(tuple(z) if isinstance(z, list) else z for z in pinned))


def mass_span(probabilities: ArrayLike, mass: float = ADAPT_MASS) -> float:
    """Share of the buckets that the fewest buckets holding ``mass`` of the probability need (largest first).

    1 minus that share of an equal-bucket histogram is how much of the bounds holds almost nothing: 0.035 for
    a log-normal(0, 1) on (0, 100) (90% of the mass in 3.5% of the bounds), 0.32 for N(0.5, 0.1²) on (0, 1).
    """
    p = np.sort(np.asarray(probabilities, dtype=np.float64))[::-1]
    if p.size == 0:
        raise ValueError("mass_span: no buckets")
    k = int(np.searchsorted(np.cumsum(p), mass * p.sum())) + 1
    return min(k, p.size) / p.size


def _zones(histogram: ArrayLike) -> tuple[tuple[int, int], ...]:
    """The point-mass zones of a plain-EM histogram of :data:`ZONE_BINS` buckets, as runs of :data:`FIT_BINS` ones.

    :func:`point_mass_zones` with its window and padding scaled to the coarser grid.
    """
    f = FIT_BINS // ZONE_BINS
    return tuple((lo * f, hi * f) for lo, hi in point_mass_zones(histogram, window=ZONE_WINDOW // f,
                                                                   pad=max(1, ZONE_PAD // f)))


def _zones_of_fit(parts):
    """The zones of a joint plain-EM fit of ``parts``.

    :func:`_zones` of the fit (SQUAREM, at most :data:`ZONE_EM_ITER` steps), its buckets summed to
    :data:`ZONE_BINS`.
    """
    from ..estimation.em import joint_expectation_maximization

    h = np.maximum(joint_expectation_maximization(parts, smoothing=0, max_iter=ZONE_EM_ITER).x, 0.0)
    h = h.reshape(ZONE_BINS, -1).sum(axis=1)
    return _zones(h / h.sum())


def _joint_zones(aggs, mechanisms, n_bins):
    """The point-mass zones of both rounds' reports, kept only where both halves of the reports show them.

    Every aggregate's counts are split in two by binomial thinning (p = 1/2, the fixed seed
    :data:`ZONE_SPLIT_SEED`: the estimate is a function of the reports); each half's joint plain-EM fit on the
    ``n_bins`` buckets of the joint fit (a warped transition on the coarser :data:`ZONE_BINS` buckets can span
    more window starts than the kernel's band holds), run by SQUAREM for at most :data:`ZONE_EM_ITER` steps and
    summed to :data:`ZONE_BINS` buckets, gives its zones (:func:`_zones`); a zone is kept where a zone of each half
    overlaps, over the union of the two. A converged plain-EM fit is spiky wherever the reports' noise lets it be
    (the likelihood's maximum is a few point masses), so a zone found once may be noise; the halves' noise is
    independent, a point mass shows in both.
    """
    transitions = [_transition_of(m, n_bins) for m in mechanisms]
    counts = [np.asarray(a.counts, dtype=np.float64) for a in aggs]
    rng = np.random.default_rng(ZONE_SPLIT_SEED)
    firsts = [rng.binomial(c.astype(np.int64), 0.5).astype(np.float64) for c in counts]
    za = _zones_of_fit(list(zip(firsts, transitions)))
    zb = _zones_of_fit([(c - f, t) for c, f, t in zip(counts, firsts, transitions)])
    pairs = sorted((min(lo, a), max(hi, b)) for lo, hi in za for a, b in zb if a < hi and lo < b)
    out: list[tuple[int, int]] = []
    for lo, hi in pairs:  # the overlaps' unions, merged where they touch
        if out and lo <= out[-1][1]:
            lo, hi = out[-1][0], max(hi, out.pop()[1])
        out.append((lo, hi))
    return tuple(out)


def adapts(pilot_estimate: DistributionEstimate, zone_histogram: ArrayLike | None = None) -> bool:
    """The switch of ``adapt="auto"``: whether the pilot's estimate calls for the warped second round.

    Warp when the pilot's held-out likelihood (:func:`ldpnum.estimation.em.ems_heldout`) chose no smoothing
    (spikes, a heavy tail, a rough density); at one smoothing pass only when that search preferred no
    smoothing but could not confirm it (``smoothing_fallback``), when the pilot's mass sits on a small part
    of the bounds (:func:`mass_span` under :data:`ADAPT_SPAN`), or when ``zone_histogram`` (the pilot's
    plain-EM histogram of :data:`ZONE_BINS` buckets) shows a point mass of at least :data:`ADAPT_ATOM_MASS`;
    otherwise (a smooth density) keep the plain Square Wave.

    Measured (``python bench/adaptive.py``, n = 10^6, 18 collections per cell; ratios of W1 / KS / range MSE 0.1
    / 0.5 to one round): warping every pilot at one pass, as before, cost the Gaussian N(0.5, 0.1²) at ε = 1
    1.04 / 1.08 / 1.13 / 1.02 (2 of 18 warped, each 1.5x the W1 and 7x the range MSE of one round: their
    joint fit under-smoothed); with this rule the smooth sets (Beta(5, 2), the Gaussian) fall back in every
    collection (1.00 at every ε), the heavy tail keeps all its gains (KS 0.42-0.54), and spiky data and the
    flights' distance at ε = 0.5 give up a little (spiky range MSE 0.90 -> 0.95, flights 0.73 -> 0.80), while
    the point-mass trigger keeps spiky ε = 1 at 0.83 (all 18 warped) and a single strong point mass warped (30%
    of the people at one value, ε = 1, a 40,000-report pilot at one pass).
    The rule was chosen on those collections; collections it was not chosen on are in the bench's table.
    """
    level = pilot_estimate.smoothing
    if level is None or level > ADAPT_MAX_SMOOTHING:
        return False
    if level == 0 or pilot_estimate.smoothing_fallback:
        return True
    if mass_span(pilot_estimate.probabilities) < ADAPT_SPAN:
        return True
    return zone_histogram is not None and bool(point_mass_zones(zone_histogram, min_mass=ADAPT_ATOM_MASS))


class AdaptiveDistribution:
    r"""Two-round collection of a numerical distribution: a Square Wave pilot, then a round warped to its shape.

    Each person reports once, with the full ε, in one round: a random ``pilot_share`` of the people reports with
    :class:`~ldpnum.SquareWave`; the collector fits the pilot (held-out EMS), and publishes an
    :class:`AdaptivePayload`; everyone else reports with :class:`WarpedSquareWave` on the pilot's smoothed CDF
    (mixed half and half with the uniform one, on ``n_segments`` equal segments of the bounds). The estimate
    fits one histogram to both rounds' reports, each through its exact transition.

    **When not to adapt.** Warping moves the Square Wave's resolution to where the pilot saw mass: it pays where
    one fixed window fails (heavy tails on wide bounds, sharp features) and is a gamble on smooth densities. With
    ``adapt="auto"`` (default) the collector adapts only when the pilot's held-out likelihood (the choice of
    smoothing of :func:`~ldpnum.estimation.ems_heldout`) prefers no smoothing at all, a sign of sharp features, or
    keeps one pass on a pilot that leaned towards none, holds 90% of its mass on under a tenth of the bounds (a
    tail on wide bounds) or shows a point mass of 6% of the people (the rule and its measurements:
    ``ldpnum.mechanisms.adaptive.adapts``); otherwise the
    payload is ``design="plain"``: the second round is the pilot's Square Wave, the two rounds are
    one Square Wave collection, and the estimate is exactly ``SquareWave.estimate_distribution`` of their merged
    aggregate. ``adapt=True`` / ``False`` force the choice.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20]: each person's one report is ε-LDP.
    bounds : (float, float)
        Public range of the values.
    pilot_share : float, optional
        Share of the people in the pilot, in (0, 1) (default 0.2, as PriPL-Tree).
    n_segments : int, optional
        Segments of the warp (default 128; at most 4,096).
    n_cells : int, optional
        The Square Wave's grid (default as for :class:`~ldpnum.SquareWave`).
    adapt : {"auto", True, False}
        Whether the second round is warped: decided from the pilot (default), always, or never.
    pin_point_masses : bool, default True
        With a warped second round, detect point masses in the pilot's plain-EM histogram
        (:func:`point_mass_zones`), publish them in the payload, and leave those buckets out of the smoothing of
        the joint fit: the background is smoothed, the point masses stay sharp. Measured (``python
        bench/adaptive.py``, 19 collections): on five point masses over a Beta(2, 5) at ε = 2 and 4, W1 and
        range MSE fell by 11-32% against the warp alone; KS cannot fall below half the largest point
        mass for any histogram (its CDF is continuous), so it does not move.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP (both rounds' plans are the Square Wave's, whatever
    the payload); estimators are post-processing. Every person is in exactly one round, so the collection is
    ε-LDP for everyone. The second round's reports depend on the pilot only through the public payload.

    References
    ----------
    L. Wang, Q. Ye, H. Hu, X. Meng, "PriPL-Tree: Accurate Range Query for Arbitrary Distribution under Local
    Differential Privacy", PVLDB 17, 2024.

    Examples
    --------
    The whole protocol on simulated people:

    >>> import numpy as np, ldpnum as ldp
    >>> rng = np.random.default_rng(0)
    >>> x = np.where(rng.random(200_000) < 0.3, 600.0, rng.uniform(0, 1440, 200_000))  # a point mass at 600
    >>> proto = ldp.AdaptiveDistribution(epsilon=1.0, bounds=(0, 1440))
    >>> d = proto.run(x, rng=1)
    >>> bool(abs(d.range(590, 610) - np.mean((x >= 590) & (x < 610))) < 0.02), d.n_reports
    (True, 200000)

    Round by round, as a real collection runs it:

    >>> rounds = proto.assign_rounds(x.size, rng=2)            # 0: pilot, 1: second round
    >>> pilot = proto.pilot_mechanism()
    >>> pilot_agg = pilot.aggregate(pilot.privatize(x[rounds == 0], rng=3))
    >>> payload = proto.fit_payload(pilot_agg)                 # public: sent to the second round's clients
    >>> payload.design
    'warped'
    >>> second = proto.second_mechanism(ldp.AdaptivePayload.from_json(payload.to_json()))
    >>> second_agg = second.aggregate(second.privatize(x[rounds == 1], rng=4))
    >>> d = proto.estimate(pilot_agg, second_agg, payload=payload)  # the payload's point-mass zones stay sharp
    >>> bool(abs(d.quantile(0.5) - np.median(x)) < 20)
    True
    """

    #: The protocol's name, as a mechanism's (``ldp.recommend(...).mechanism.name``).
    name = "adaptive_distribution"

    def __init__(self, epsilon: float, bounds: Bounds, *, pilot_share: float | None = None,
                 n_segments: int | None = None, n_cells: int | None = None, adapt: Any = "auto",
                 pin_point_masses: bool = True) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._bounds = check_bounds(bounds)
        share = DEFAULT_PILOT_SHARE if pilot_share is None else pilot_share
        self._pilot_share = check_scalar(share, "pilot_share", float, low=0, high=1, include_boundaries="neither")
        self._pilot_cells = round(self._pilot_share * _ROUND_CELLS)
        if not 0 < self._pilot_cells < _ROUND_CELLS:
            raise ValueError(f"pilot_share must leave both rounds someone (between 2**-16 and 1 - 2**-16); "
                             f"got {share!r}")
        segs = DEFAULT_SEGMENTS if n_segments is None else n_segments
        self._n_segments = check_scalar(segs, "n_segments", int, low=1, high=MAX_SEGMENTS)
        if adapt not in ("auto", True, False) or isinstance(adapt, (int, float)) and not isinstance(adapt, bool):
            raise ValueError(f"adapt must be 'auto', True or False; got {adapt!r}")
        self._adapt = adapt
        if not isinstance(pin_point_masses, bool):
            raise TypeError(f"pin_point_masses must be True or False; got {pin_point_masses!r}")
        self._pin = pin_point_masses
        self._pilot = SquareWave(self._epsilon, self._bounds, n_cells=n_cells)

    def __repr__(self) -> str:
        return (f"AdaptiveDistribution(epsilon={self._epsilon!r}, bounds={self._bounds!r}, "
                f"pilot_share={self._pilot_share!r}, n_segments={self._n_segments}, n_cells={self._pilot.n_cells}, "
                f"adapt={self._adapt!r})")

    @property
    def epsilon(self) -> float:
        """The privacy parameter of every report."""
        return self._epsilon

    @property
    def bounds(self) -> Bounds:
        """Public range of the values."""
        return self._bounds

    @property
    def pilot_share(self) -> float:
        """Share of the people in the pilot (exactly ``round(share * 2**16) / 2**16`` per person)."""
        return self._pilot_cells / _ROUND_CELLS

    # -- the protocol, round by round -----------------------------------------------------------------------
    def assign_rounds(self, n: int, rng: SeedLike = None) -> np.ndarray:
        """The round of each of ``n`` people (0: pilot, 1: second), one random word each, independent of values."""
        from .._random import assign_columns

        return (assign_columns(rng, n, _ROUND_CELLS) >= self._pilot_cells).astype(np.int64)

    def pilot_mechanism(self) -> SquareWave:
        """The pilot's mechanism: ``SquareWave(epsilon, bounds)``."""
        return self._pilot

    def _check_pilot(self, pilot_agg):
        if not isinstance(pilot_agg, Aggregate):
            raise TypeError(f"pilot_agg must be an Aggregate of the pilot's reports; got {type(pilot_agg).__name__}")
        check_spec(self._pilot.spec, pilot_agg.spec, "pilot reports")

    def fit_payload(self, pilot_agg: Aggregate) -> AdaptivePayload:
        """Fit the pilot's reports and return the payload of the second round (public; costs no privacy).

        ValueError for fewer than :data:`MIN_PILOT_REPORTS` (2,000) pilot reports, too few to tell a shape from
        the noise; TypeError/SpecMismatchError for an aggregate that is not the pilot's.
        """
        self._check_pilot(pilot_agg)
        if pilot_agg.n_reports < MIN_PILOT_REPORTS:
            raise ValueError(f"fit_payload: the pilot has {pilot_agg.n_reports:,} reports; fitting a shape needs at "
                             f"least {MIN_PILOT_REPORTS:,} (raise pilot_share or collect more people)")
        d = max(self._n_segments, FIT_BINS)
        d = -(-d // self._n_segments) * self._n_segments
        est = self._pilot.estimate_distribution(pilot_agg, n_bins=d, max_iter=PILOT_MAX_ITER)
        plain = None  # the pilot's plain-EM histogram of ZONE_BINS buckets: point masses, for the switch and pins
        if self._adapt is True or (self._adapt == "auto" and est.smoothing is not None
                                   and est.smoothing <= ADAPT_MAX_SMOOTHING):
            from ..estimation.em import expectation_maximization, window_transition_from_plan

            t = window_transition_from_plan(self._pilot.plan, ZONE_BINS)
            plain = expectation_maximization(pilot_agg.counts, t, method="em", max_iter=ZONE_EM_ITER).x
        warped = self._adapt is True or (self._adapt == "auto" and adapts(est, plain))
        knots = warp_knots(est.probabilities, self._n_segments) if warped else ()
        zones: tuple[tuple[int, int], ...] = ()
        if warped and self._pin and d == FIT_BINS and plain is not None:  # plain: fitted whenever it may warp
            zones = _zones(plain)
        return AdaptivePayload(self._epsilon, self._bounds, "warped" if warped else "plain", knots,
                               _digest(self._pilot.spec), self._pilot.n_cells, zones)

    def second_mechanism(self, payload: AdaptivePayload) -> SquareWave | WarpedSquareWave:
        """The second round's mechanism, built from the payload alone.

        Refuses (ValueError, before anything is drawn) a payload of another ε, other bounds, another grid or
        another pilot.
        """
        if not isinstance(payload, AdaptivePayload):
            raise TypeError(f"payload must be an AdaptivePayload; got {type(payload).__name__}")
        for what, mine, theirs in (("epsilon", self._epsilon, payload.epsilon),
                                   ("bounds", self._bounds, payload.bounds),
                                   ("n_cells", self._pilot.n_cells, payload.n_cells),
                                   ("pilot", _digest(self._pilot.spec), payload.pilot)):
            if tuple(np.atleast_1d(mine)) != tuple(np.atleast_1d(theirs)):
                raise ValueError(f"payload: {what} {theirs!r} is not this protocol's ({mine!r}); the payload was "
                                 "fitted for another collection")
        if payload.design == "plain":
            return self._pilot
        return WarpedSquareWave(self._epsilon, self._bounds, knots=payload.knots, bandwidth=self._pilot.bandwidth,
                                n_cells=self._pilot.n_cells)

    def estimate(self, pilot_agg: Aggregate, second_agg: Aggregate, *, payload: AdaptivePayload | None = None,
                 bootstrap: int | None = None, rng: SeedLike = None) -> DistributionEstimate:
        """The distribution behind both rounds' reports.

        A plain second round: the pilot's Square Wave estimate of the merged aggregate (``ems-cv``, with
        ``bootstrap`` replicates if asked). A warped one: one histogram of equal buckets of the bounds (1024)
        fitted to both rounds by held-out EMS (:func:`~ldpnum.estimation.em.joint_ems_heldout`); ``bootstrap``
        then attaches parametric bootstrap replicates (both rounds' counts redrawn from the fit, refitted at the
        chosen smoothing level), for ``confidence_band``, ``quantile(q, ci=)`` and ``range(lo, hi, ci=)``.
        The point-mass zones are left out of the smoothing: those both halves of both rounds' reports show
        (:func:`_joint_zones`, :data:`REDETECT_ZONES`), else the payload's (``payload``, or the pilot's refitted
        when omitted).
        """
        self._check_pilot(pilot_agg)
        if not isinstance(second_agg, Aggregate):
            raise TypeError(f"second_agg must be an Aggregate; got {type(second_agg).__name__}")
        if second_agg.spec == self._pilot.spec:
            return self._pilot.estimate_distribution(pilot_agg + second_agg, bootstrap=bootstrap, rng=rng)
        if second_agg.spec.mechanism != WarpedSquareWave.name:
            raise ValueError(f"second_agg: reports of {second_agg.spec.mechanism!r}, not of this protocol's second "
                             "round (square_wave or warped_square_wave)")
        second = mechanism_for(second_agg.spec)
        assert isinstance(second, WarpedSquareWave)
        self.second_mechanism(AdaptivePayload(second.epsilon, self._bounds, "warped", second.knots,
                                              _digest(self._pilot.spec), second.n_cells))
        if payload is None:
            payload = self.fit_payload(pilot_agg)
        else:
            self.second_mechanism(payload)  # TypeError / ValueError for a payload of another collection
        if payload.knots != second.knots:
            raise ValueError("payload: its knots are not those of the second round's reports")
        d = -(-JOINT_BINS // second.n_segments) * second.n_segments
        zones = payload.pinned
        if REDETECT_ZONES and self._pin and d == JOINT_BINS:
            zones = _joint_zones([pilot_agg, second_agg], [self._pilot, second], d)
        pinned = _pinned_mask(zones, d) if d == JOINT_BINS else None
        est = _fit([pilot_agg, second_agg], [self._pilot, second], n_bins=d, pinned=pinned,
                   max_iter=JOINT_MAX_ITER, search_max_iter=JOINT_SEARCH_MAX_ITER, atoms=PIN_ATOMS)
        if bootstrap is None:
            return est
        return _bootstrap(est, [pilot_agg, second_agg], [self._pilot, second], bootstrap, rng, pinned, PIN_ATOMS)

    # -- the whole protocol ---------------------------------------------------------------------------------
    def run(self, values: ArrayLike, rng: SeedLike = None, *, bootstrap: int | None = None) -> DistributionEstimate:
        """Simulate the whole protocol: assign rounds, collect the pilot, fit, collect the second round, estimate.

        Everything is validated before the first random word is drawn. ``rng=None`` is secure; an int,
        SeedSequence or Generator makes the run reproducible (one independent sub-stream for the assignment and
        one per round).
        """
        from .._random import child_rng, resolve_rng

        if rng is not None:
            resolve_rng(rng)
        x = self._pilot.prepare_values(values, name="values")
        if bootstrap is not None:
            check_scalar(bootstrap, "bootstrap", int, low=20)
        expected = x.size * self.pilot_share
        if expected - 5 * math.sqrt(expected + 1) < MIN_PILOT_REPORTS:
            raise ValueError(f"run: {x.size:,} people give about {expected:,.0f} pilot reports; fitting the pilot's "
                             f"shape needs at least {MIN_PILOT_REPORTS:,} (raise pilot_share or collect more people)")
        rounds = self.assign_rounds(x.size, child_rng(rng, 0))
        pilot_agg = self._pilot.aggregate(self._pilot.privatize(x[rounds == 0], rng=child_rng(rng, 1)))
        payload = self.fit_payload(pilot_agg)
        second = self.second_mechanism(payload)
        second_agg = second.aggregate(second.privatize(x[rounds == 1], rng=child_rng(rng, 2)))
        return self.estimate(pilot_agg, second_agg, payload=payload, bootstrap=bootstrap, rng=child_rng(rng, 3))


def _bootstrap(est, aggs, mechanisms, n_boot, rng, pinned=None, atoms=False):
    """``est`` with parametric bootstrap replicates: each round's counts redrawn from the fit, refitted jointly."""
    from ..estimation.bootstrap import check_replicates
    from ..estimation.em import joint_expectation_maximization

    d = est.n_bins
    n_boot = check_replicates(n_boot, 8 * (sum(int(a.counts.size) for a in aggs) + d))
    trans = [_transition_of(m, d) for m in mechanisms]
    level = est.smoothing or 0
    gen = np.random.default_rng(rng)
    draws = []
    for a, t in zip(aggs, trans):
        q = np.clip(t.forward(est.probabilities), 0.0, None)
        draws.append(gen.multinomial(int(a.n_reports), q / q.sum(), size=n_boot))
    reps = np.empty((n_boot, d))
    for b in range(n_boot):
        res = joint_expectation_maximization([(c[b], t) for c, t in zip(draws, trans)], smoothing=level,
                                             pinned=pinned, atoms=atoms)
        reps[b] = np.maximum(res.x, 0.0) / np.maximum(res.x, 0.0).sum()
    return est._with_replicates(reps)
