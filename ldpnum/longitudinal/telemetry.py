"""Microsoft's numeric telemetry: 1BitMean and dBitFlip, one-shot or memoized with α-point rounding.

After Ding, Kulkarni, Yekhanin.

Both mechanisms collect a counter ``x`` in public bounds ``[low, high]`` (``u = (x - low)/(high - low)``):

* **1BitMean** reports one bit, 1 with probability ``1/(e^ε + 1) + u·(e^ε - 1)/(e^ε + 1)``, and estimates the
  mean by ``low + (high - low)·mean((Y (e^ε + 1) - 1)/(e^ε - 1))``. It *is* ldpnum's two-output randomizer
  (stochastic rounding to an endpoint, then randomized response; :class:`~ldpnum.StochasticRounding`), reused
  here as it is: same integer plan (:func:`~ldpnum.plans.binary_plan`), same kernel, same estimator.
* **dBitFlip** splits the bounds into ``buckets`` equal buckets; each person samples ``d`` distinct buckets
  ``j_1 < ... < j_d`` uniformly and reports, for each, a bit that is 1 with probability
  ``e^(ε/2)/(e^(ε/2) + 1)`` if their value lies in ``j_t`` and ``1/(e^(ε/2) + 1)`` otherwise (with ``d = 1``,
  ldpnum uses ε for the one bit instead of the paper's ε/2, whose realized guarantee is ε/2). The histogram
  estimator (bucket ``v``, ``n`` reports, ``S_v`` people who sampled ``v``, ``O_v`` of them reporting 1)
  is ``ĥ_v = buckets/(n d) · (O_v - q S_v)/(p - q)``.

Memoization (``memoize=True``; design rule R9). Reports of the same person, day after day, are memoized on a
*public* discretization, keyed by the person's :class:`~ldpnum.ClientKeys`:

* 1BitMean: **α-point rounding**. The bounds carry ``grid_points`` equally spaced points
  ``g_0 = low < ... < g_s = high`` (``s = grid_points - 1`` steps of width Δ). Each person holds an offset
  ``α ∈ [0, 1)`` drawn from their key (a keyed word under its own tweak, the same every round); a value
  ``x ∈ [g_i, g_(i+1))`` with fractional position ``f = (x - g_i)/Δ`` is rounded up to ``g_(i+1)`` when
  ``α < f`` and down to ``g_i`` otherwise. Over ``α`` uniform, ``P[up] = f``, so ``E[rounded] = g_i + f·Δ =
  x``: the rounding is **unbiased over the people's offsets** (exactly up to the 2**-53 resolution of the
  integer event ``α·2**53 < ⌊f·2**53⌋``). The memoized value is the grid point; its permanent response is the
  1-bit randomizer at ``ε`` of that grid point, from keyed words. A person whose value moves without crossing
  their own α-point keeps their grid point and so their answer, and a person holds at most ``grid_points``
  permanent answers however long they report.
* **Output perturbation** (parameter γ): at every report the memoized bit is flipped with probability γ
  (fresh from ``rng``), so that a change of the rounded value — a change of the memoized bit — cannot be told
  from one report to the next with certainty. One report is then 1BitMean with
  ``p' = γ + (1 - 2γ)p``, ``q' = γ + (1 - 2γ)q``, that is, ε1-LDP with
  ``e^ε1 = (γ + (1 - γ)e^ε) / ((1 - γ) + γ e^ε)``; the mean estimator is the same affine map with ``(p', q')``.
* dBitFlip: the memoized value is the **bucket**; the sampled buckets are fixed per person (keyed words
  under their own tweak, independent of the value) and the bits are the permanent response per (person,
  bucket of the value).

Privacy. One-shot: each call of ``privatize`` on one person's value is ε-LDP. Memoized: each report is ε1-LDP
(``epsilon``) and all reports of one person about one memoized value (a grid point, a bucket) together are
ε∞-LDP (``epsilon_permanent``, the ``epsilon`` passed); a person whose memoized value changes spends ε∞ again
per distinct memoized value. All ε are computed from the composed integer plans and tested exactly.

References
----------
B. Ding, J. Kulkarni, S. Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017 (1BitMean, dBitFlip,
α-point rounding, memoization, output perturbation). Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized
Aggregatable Privacy-Preserving Ordinal Response", CCS 2014 (memoized permanent responses). J. Bentley,
R. Floyd, "A sample of brilliance", Comm. ACM 1987 (Floyd's sampler).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._kernels import client_numeric, client_telemetry
from .._kernels._jit import launch
from .._results import DistributionEstimate, FrequencyEstimate
from .._validation import check_scalar
from ..aggregate import Aggregate
from ..base import Mechanism
from ..estimation.bitflip import bucket_distribution, estimate_bit_flip_histogram
from ..mechanisms.binary import StochasticRounding
from ..plans import (RANK_SUBSETS, TWO53, BinaryPlan, binary_plan, exp_lower, floyd_distribution, rank_distribution,
                     subsets_by_rank)
from ..reports import Reports, check_integer_codes, register_code_check
from ..spec import Spec, check_spec
from .keys import keyed_words, memo_tweak
from .memo import Longitudinal, spec_round

if TYPE_CHECKING:
    from .._typing import ArrayLike, Bounds

__all__ = ["OneBitMean", "MemoizedOneBitMean", "DBitFlip", "MemoizedDBitFlip", "flip_threshold",
           "check_bit_flip_codes"]

#: Most grid points of α-point rounding (a grid point is a memoized value: 16-bit like the other grids).
MAX_GRID_POINTS = 1 << 16
#: Most dBitFlip buckets (Floyd's 48-bit picks, used beyond 2**32 samples, choose among at most 2**16).
MAX_BUCKETS = 1 << 16
#: dBitFlip's default number of buckets.
DEFAULT_BUCKETS = 16


def flip_threshold(plan: BinaryPlan, gamma: float, epsilon: float) -> tuple[int, float]:
    """``(t_γ, ε1)``: the integer flip threshold of output perturbation, and the ε1 of one report.

    The threshold (flip with probability ``t_γ / 2**53``) is that of output perturbation after the two-output plan
    ``plan`` at ``epsilon``.

    ``ε1`` is the paper's composed bound ``log((γ + (1 - γ)e^ε) / ((1 - γ) + γ e^ε))`` (``epsilon`` itself at
    γ = 0); ``t_γ`` is the smallest integer ``≥ γ·2**53`` whose composed plan keeps every ratio of one report
    at most a rigorous lower bound of ``e^ε1`` (:func:`~ldpnum.plans.exp_lower`), so the realized ε1 never
    exceeds the stated one and the realized γ is at least the γ asked for. With ``r = t_γ``, ``N = 2**53``,
    a report is 1 with probability ``(r N + (N - 2r) T)/N²`` for a permanent threshold ``T``, and the largest
    ratio is ``(r N + (N - 2r) t_hi) / (r N + (N - 2r) t_lo)``, decreasing in ``r``.
    """
    if gamma == 0:
        return 0, epsilon
    e = math.exp(epsilon)
    eps1 = math.log((gamma + (1 - gamma) * e) / ((1 - gamma) + gamma * e))
    bound = exp_lower(eps1)
    n, t_hi, t_lo = TWO53, plan.t_hi, plan.t_lo
    slope = n - 2 * t_hi - bound * (n - 2 * t_lo)  # A(r) - E·B(r) = slope·r + rhs_0, slope < 0
    least = math.ceil(Fraction(n) * (bound * t_lo - t_hi) / slope)
    return max(math.ceil(Fraction(gamma) * n), least, 0), eps1


class OneBitMean(StochasticRounding):
    """Microsoft's 1BitMean mean oracle (Ding, Kulkarni, Yekhanin).

    With ``memoize=True``, memoized with α-point rounding and output perturbation for repeated collection.

    ``OneBitMean(epsilon, bounds)`` is one-shot: ldpnum's two-output randomizer (stochastic rounding to an
    endpoint, then randomized response), the same plan, kernel and estimator as
    :class:`~ldpnum.StochasticRounding` under the paper's name. ``OneBitMean(epsilon, bounds, memoize=True,
    grid_points=..., gamma=...)`` builds a :class:`MemoizedOneBitMean`, whose ``privatize`` needs each person's
    key (see :mod:`ldpnum.longitudinal.telemetry` for the formulas).

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20]: of each report (one-shot), of all reports about one grid point (memoized).
    bounds : (float, float)
        Public range of the values.
    memoize : bool, optional
        False (default): one-shot. True: memoized (:class:`MemoizedOneBitMean`).
    grid_points, gamma
        The memoized mechanism's grid and output perturbation (refused with ``memoize=False``).

    Notes
    -----
    One-shot: each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. The
    reports equal, in law and bit for bit for one seed, those of ``StochasticRounding(epsilon, bounds)``.

    References
    ----------
    B. Ding, J. Kulkarni, S. Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.OneBitMean(epsilon=1.0, bounds=(0, 3600))
    >>> x = np.random.default_rng(1).uniform(0, 3600, 100_000)
    >>> est = m.estimate_mean(m.privatize(x, rng=2))
    >>> bool(abs(est.value - x.mean()) < 4 * est.standard_error)
    True
    """

    name = "one_bit_mean"
    aliases = ("1bitmean",)

    def __new__(cls, *args: Any, memoize: bool = False, **kwargs: Any) -> "OneBitMean":
        """A :class:`MemoizedOneBitMean` for ``memoize=True``, else a one-shot OneBitMean."""
        if memoize is True and cls is OneBitMean:
            cls = MemoizedOneBitMean
        return super().__new__(cls)

    def __init__(self, epsilon: float, bounds: Bounds, *, memoize: bool = False, grid_points: Any = None,
                 gamma: Any = None) -> None:
        if not isinstance(memoize, (bool, np.bool_)):
            raise TypeError(f"memoize must be True or False; got {type(memoize).__name__} {memoize!r}")
        if grid_points is not None or gamma is not None:
            raise TypeError("grid_points and gamma belong to the memoized mechanism: pass memoize=True (and keys= to "
                            "privatize), or leave them out for one-shot collection")
        super().__init__(epsilon, bounds)


class MemoizedOneBitMean(Longitudinal, OneBitMean):
    """1BitMean memoized for repeated collection (Ding, Kulkarni, Yekhanin).

    α-point rounding to a public grid with a per-person offset from the key, a permanent 1-bit response per grid
    point, and output perturbation γ. Build it as ``OneBitMean(epsilon, bounds, memoize=True, ...)``.

    Parameters
    ----------
    epsilon : float
        ε∞ in (0, 20]: the permanent 1-bit response of each grid point is ε-LDP, so all reports of one person
        about one grid point together are ε-LDP (:attr:`epsilon_permanent`).
    bounds : (float, float)
        Public range of the values.
    grid_points : int, optional
        Number of points of the public grid of α-point rounding, both bounds included (2 ≤ grid_points ≤
        65536; default 2: the bounds themselves). A person's reports hold at most ``grid_points`` distinct
        permanent answers however long they report, and the estimate's law does not depend on the grid: more
        points only make a changing value change its memoized point more often (spending ε∞ again).
    gamma : float, optional
        Output perturbation: the probability, in [0, 1/2), of flipping the memoized bit at each report (fresh
        from ``rng``; default 0: the memoized bit itself). Realized as ``t_γ/2**53 ≥ gamma``
        (:func:`flip_threshold`).

    Notes
    -----
    Each report is ε1-LDP (:attr:`epsilon`, ``e^ε1 = (γ + (1 - γ)e^ε)/((1 - γ) + γ e^ε)``, ε itself at γ = 0);
    all reports of one person about one grid point are ε∞-LDP with ε∞ = ``epsilon`` (:attr:`epsilon_permanent`);
    a person whose rounded value changes spends ε∞ again for each distinct grid point (at most
    ``grid_points``). Estimators are post-processing: the mean estimator
    ``low + (high - low)·mean((Y - q')/(p' - q'))`` with ``(p', q')`` the composed probabilities of the two
    plans, unbiased over the people's offsets and the randomizers; per report its variance at ``x`` is
    ``(high - low)² P(x)(1 - P(x))/(p' - q')²`` with ``P(x) = q' + u(p' - q')`` — the one-shot 1BitMean's at
    ε1 (output perturbation of randomized response is randomized response), and exactly the one-shot's at ε
    when γ = 0.

    What memoization protects: repeated reports of one rounded value (averaging them learns nothing more than
    one). What it does not: values that change often (each new grid point spends ε∞ again), and values
    correlated with other data.

    References
    ----------
    B. Ding, J. Kulkarni, S. Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.OneBitMean(epsilon=2.0, bounds=(0, 100), memoize=True, grid_points=5, gamma=0.1)
    >>> keys = ldp.ClientKeys.generate(4, rng=0)
    >>> day1 = m.privatize([10.0, 20.0, 30.0, 40.0], keys=keys, rng=1, round=1)
    >>> (m.epsilon_permanent, round(m.epsilon, 4), day1.spec.get("round"))
    (2.0, 1.4155, 1)
    """

    name = "memoized_one_bit_mean"
    _repr_name = "OneBitMean"
    aliases = ("memoized_1bitmean",)

    def __init__(self, epsilon: float, bounds: Bounds, *, memoize: bool = True, grid_points: int = 2,
                 gamma: float = 0.0) -> None:
        if memoize is not True:
            raise ValueError(f"MemoizedOneBitMean is OneBitMean(..., memoize=True); got memoize={memoize!r}")
        StochasticRounding.__init__(self, epsilon, bounds)
        self._grid_points = check_scalar(grid_points, "grid_points", int, low=2, high=MAX_GRID_POINTS)
        self._gamma = check_scalar(gamma, "gamma", float, low=0, high=0.5, include_boundaries="left")
        self._epsilon_permanent = self._epsilon
        self._t_gamma, self._epsilon = flip_threshold(self._plan, self._gamma, self._epsilon)
        steps = self._grid_points - 1
        units = np.arange(self._grid_points, dtype=np.float64) / steps
        thresholds = np.empty(self._grid_points, dtype=np.int64)
        launch(client_numeric.binary_thresholds, units, 0.0, 1.0, self._plan.t_lo, self._plan.t_hi, thresholds)
        thresholds.flags.writeable = False
        self._grid_thresholds = thresholds

    # -- parameters ---------------------------------------------------------------------------------
    def _spec_params(self):
        return {"bounds": self._bounds, "grid_points": self._grid_points, "gamma": self._gamma,
                "epsilon_permanent": self._epsilon_permanent}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.get("epsilon_permanent"), spec.get("bounds"), memoize=True,
                   grid_points=spec.get("grid_points"), gamma=spec.get("gamma"))

    def _permanent_spec(self) -> Spec:
        return Spec(OneBitMean.name, self._epsilon_permanent, 2,
                    (("bounds", self._bounds), ("grid_points", self._grid_points)))

    @property
    def grid_points(self) -> int:
        """Number of points of the public grid (both bounds included)."""
        return self._grid_points

    @property
    def grid(self) -> np.ndarray:
        """The public grid ``low + i·(high - low)/(grid_points - 1)``, ``i = 0..grid_points-1``."""
        low, high = self._bounds
        return low + (high - low) * np.arange(self._grid_points) / (self._grid_points - 1)

    @property
    def gamma(self) -> float:
        """The realized flip probability of output perturbation, ``t_γ / 2**53`` (at least the γ asked for)."""
        return self._t_gamma / TWO53

    @property
    def offset_tweak(self) -> np.uint64:
        """The tweak of the people's offsets α: the permanent spec's, renamed.

        Renamed so α is independent of every permanent word.
        """
        tweak = self.__dict__.get("_offset_tweak")
        if tweak is None:
            spec = dataclasses.replace(self._permanent_spec(), mechanism="alpha_point_offset")
            tweak = self.__dict__["_offset_tweak"] = memo_tweak(spec)
        return tweak

    # -- α-point rounding ---------------------------------------------------------------------------
    def offsets(self, keys: Any) -> np.ndarray:
        """Each person's offset α ∈ [0, 1) (a multiple of 2**-53), from their key. Secret, like the keys.

        Their value rounds up within a grid step exactly when its fractional position exceeds α.
        """
        words = self._offset_words(keys)
        return (words >> np.uint64(11)).astype(np.float64) / TWO53

    def _offset_words(self, keys: Any) -> np.ndarray:
        return keyed_words(keys, self.offset_tweak, np.zeros(len(keys), dtype=np.uint64), 1)

    def _alpha_round(self, values: np.ndarray, alpha_words: np.ndarray) -> np.ndarray:
        n = values.shape[0]
        low, _ = self._bounds
        base = np.empty(n, dtype=np.int64)
        t_up = np.empty(n, dtype=np.int64)
        launch(client_numeric.window_rounding, values, low, self._inv_range, self._grid_points - 1, base, t_up)
        return base + ((alpha_words >> np.uint64(11)).astype(np.int64) < t_up)

    def grid_indices(self, x: ArrayLike, *, keys: Any, **prepare: Any) -> np.ndarray:
        """The grid point (index ``0..grid_points-1``) each person's value is rounded to, with their offset.

        The memoized value of their reports.
        """
        from .keys import check_keys

        values = self.prepare_values(x, **prepare)
        keys = check_keys(keys, values.shape[0])
        return self._alpha_round(values, self._offset_words(keys))

    # -- exact plans --------------------------------------------------------------------------------
    def memo_states(self) -> list[int]:
        """The grid points to check: all of them up to 65; else both ends, their neighbours and the middle.

        The permanent threshold is monotone in the grid point, so the ends hold the extremes.
        """
        m = self._grid_points
        if m <= 65:
            return list(range(m))
        return sorted({0, 1, m // 2, m - 2, m - 1})

    def permanent_probabilities(self, state: int) -> dict[int, Fraction]:
        """``{bit: probability}`` of the permanent response of grid point ``state`` (exact, from the plan)."""
        return self._plan.exact_probabilities(int(self._grid_thresholds[state]))

    def instantaneous_probabilities(self, permanent: int) -> dict[int, Fraction]:
        """``{report: probability}`` given the memoized bit: flipped with probability ``t_γ / 2**53``."""
        g = Fraction(self._t_gamma, TWO53)
        return {permanent: 1 - g, 1 - permanent: g} if self._t_gamma else {permanent: Fraction(1)}

    def output_probabilities(self, x: float) -> np.ndarray:
        """Probability of report 0 and 1 for a value ``x``, over the people's offsets and both layers.

        What the reports of many people holding ``x`` follow.
        """
        values = self.prepare_values(np.asarray([x], dtype=np.float64))
        base = np.empty(1, dtype=np.int64)
        t_up = np.empty(1, dtype=np.int64)
        launch(client_numeric.window_rounding, values, self._bounds[0], self._inv_range, self._grid_points - 1,
               base, t_up)
        s, up = int(base[0]), Fraction(int(t_up[0]), TWO53)
        p1 = (1 - up) * self.report_probabilities(s).get(1, Fraction(0))
        if up:
            p1 += up * self.report_probabilities(s + 1).get(1, Fraction(0))
        return np.array([1.0 - float(p1), float(p1)])

    @property
    def _p_q(self):
        """``(p', q')``: the probability of report 1 at the upper and lower bound, both layers composed."""
        g = self._t_gamma / TWO53
        p, q = self._plan.t_hi / TWO53, self._plan.t_lo / TWO53
        return g + (1 - 2 * g) * p, g + (1 - 2 * g) * q

    # -- client side --------------------------------------------------------------------------------
    @property
    def permanent_words(self) -> int:
        """One keyed word per record (the 1-bit randomizer)."""
        return 1

    @property
    def instantaneous_words(self) -> int:
        """One fresh word per record for the flip (none at γ = 0)."""
        return 1 if self._t_gamma else 0

    def _memo_values(self, values: np.ndarray, keys: Any) -> tuple[np.ndarray, np.ndarray]:
        j = self._alpha_round(values, self._offset_words(keys))
        return j.astype(np.uint64), j / (self._grid_points - 1)

    def _allocate_permanent(self, n: int) -> np.ndarray:
        return np.empty(n, dtype=np.float64)

    def _run_permanent(self, inputs: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        launch(client_numeric.binary_kernel, inputs, 0.0, 1.0, self._plan.t_lo, self._plan.t_hi, words, out)

    def _run_instantaneous(self, permanent: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        # The flip is the two-output randomizer on the bit: P[1 | 0] = t_γ/2**53, P[1 | 1] = 1 - t_γ/2**53.
        launch(client_numeric.binary_kernel, permanent, 0.0, 1.0, self._t_gamma, TWO53 - self._t_gamma, words,
               out)


# -- dBitFlip ----------------------------------------------------------------------------------------------

def field_width(buckets: int) -> int:
    """Bits of one (bucket, bit) field of a dBitFlip code: ``bit_length(buckets - 1) + 1``."""
    return (buckets - 1).bit_length() + 1


def check_bit_flip_codes(codes: Any, spec: Spec) -> np.ndarray:
    """Validate dBitFlip report codes.

    One ``uint64`` per person holding ``d`` fields ``bucket << 1 | bit`` (``field_width`` bits each), buckets
    strictly increasing and below ``buckets``, no bit set above them.

    Registered with :func:`ldpnum.reports.register_code_check` for both dBitFlip names, so every
    :class:`~ldpnum.Reports` path checks them field by field.
    """
    b, d = spec.get("buckets"), spec.get("d")
    if not isinstance(b, int) or not isinstance(d, int):
        raise ValueError(f"{spec} is not a dBitFlip spec")
    codes = check_integer_codes(codes)
    if codes.dtype != np.uint64 or codes.flags.writeable or not codes.flags.c_contiguous:
        codes = np.array(codes, dtype=np.uint64, copy=True)
    w = field_width(b)
    bad = np.zeros(codes.shape[0], dtype=bool)
    if d * w < 64:
        bad |= (codes >> np.uint64(d * w)) != 0
    previous = None
    for t in range(d):
        j = (codes >> np.uint64(t * w + 1)) & np.uint64((1 << (w - 1)) - 1)
        bad |= j >= np.uint64(b)
        if previous is not None:
            bad |= j <= previous
        previous = j
    if bad.any():
        idx = np.flatnonzero(bad)
        raise ValueError(f"codes has {idx.size} report(s) that are not {d} increasing buckets below {b} with "
                         f"their bits, first at index {idx[0]} ({codes[idx[0]]})")
    return codes


def bit_flip_counts(codes: np.ndarray, buckets: int, d: int) -> np.ndarray:
    """The aggregate of dBitFlip codes: ``[S_0..S_(b-1), O_0..O_(b-1)]``.

    The number of reports that sampled each bucket and, among them, the number whose bit is 1 (NumPy, O(n·d), in
    blocks).
    """
    w = field_width(buckets)
    mask = np.uint64((1 << w) - 1)
    pairs = np.zeros(2 * buckets, dtype=np.int64)  # a field is bucket << 1 | bit: count the fields themselves
    block = 1 << 20
    for start in range(0, codes.shape[0], block):
        c = codes[start:start + block]
        for t in range(d):
            pairs += np.bincount(((c >> np.uint64(t * w)) & mask).astype(np.intp), minlength=2 * buckets)
    return np.concatenate([pairs[0::2] + pairs[1::2], pairs[1::2]])


class DBitFlip(Mechanism):
    """Microsoft's dBitFlip histogram oracle (Ding, Kulkarni, Yekhanin).

    With ``memoize=True``, memoized per (person, bucket) for repeated collection.

    The bounds are split into ``buckets`` equal buckets (bucket ``min(⌊u·buckets⌋, buckets - 1)``); each
    person samples ``d`` distinct buckets uniformly and reports one bit per sampled bucket:
    1 with probability ``p = e^ε_b/(e^ε_b + 1)`` if the value lies in it, else ``q = 1/(e^ε_b + 1)``, with ``ε_b = ε/2`` (the paper's; two sampled buckets can tell two values apart)
    when ``d ≥ 2`` and ``ε_b = ε`` when ``d = 1`` (a single bit can only differ at one of the two buckets, so the
    paper's ε/2 would spend half the budget: its realized guarantee is ε/2).

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20] (memoized: ε∞, of all reports about one bucket).
    bounds : (float, float)
        Public range of the values.
    buckets : int, optional
        Number of equal buckets, 2 ≤ buckets ≤ 65536 (default 16).
    d : int, optional
        Buckets sampled per person, 1 ≤ d ≤ buckets, such that the report fits 64 bits:
        ``d·(bit_length(buckets - 1) + 1) ≤ 64``. Default: as many as fit, at most ``buckets`` (12 of 16):
        the estimator's variance falls with ``d`` (``b/d`` times a per-bit term).
    memoize : bool, optional
        False (default): one-shot. True: :class:`MemoizedDBitFlip` (``privatize`` needs ``keys=``).

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. A report is one
    ``uint64``: field ``t`` (bits ``[t·w, (t+1)·w)``, ``w = bit_length(buckets - 1) + 1``) holds the ``t``-th
    smallest sampled bucket and its bit, ``bucket << 1 | bit``. The aggregate holds, per bucket, the reports
    that sampled it (``S_v``) and those of them with bit 1 (``O_v``). :meth:`estimate_histogram` gives the
    paper's unbiased estimator ``ĥ_v = b/(n d)·(O_v - q S_v)/(p - q)`` with variance
    ``(1/n)·[(b/d)(p q/(p - q)² + h_v) - h_v]`` (standard errors by plug-in of ``ĥ_v`` clipped to [0, 1]);
    :meth:`estimate_distribution` projects it onto the simplex (norm-sub) as a
    :class:`~ldpnum.DistributionEstimate` over the buckets.

    The sample and the bits, exactly. With at most 2**16 possible samples (``M = C(buckets, d)``; 35,960 for 32
    buckets and d = 4) the sample is the subset of rank ``floor(w·M/2**64)`` of one word ``w`` in a table of all
    of them (:func:`ldpnum.plans.rank_distribution`); with more, Floyd's sampler with one 48-bit pick per bucket
    (:func:`ldpnum.plans.floyd_distribution`). Either way a bucket's inclusion probability is ``d/b`` up to a
    relative 2**-32, which bounds the estimator's bias. The bits are integer events on a 2**32
    grid (:func:`ldpnum.plans.binary_plan` with ``bits=32``), two per word; the realized ε falls short of the
    stated one by a relative ``(1 + e^ε_b)/2**32`` at most. Words per report: ``1 + ⌈d/2⌉`` (rank) or
    ``d + ⌈d/2⌉`` (Floyd).

    References
    ----------
    B. Ding, J. Kulkarni, S. Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.DBitFlip(epsilon=2.0, bounds=(0, 60), buckets=6, d=2)
    >>> x = np.random.default_rng(0).uniform(0, 60, 100_000)
    >>> est = m.estimate_histogram(m.privatize(x, rng=1))
    >>> bool(np.all(np.abs(est.frequencies - 1 / 6) < 4 * est.standard_errors))
    True
    """

    name = "d_bit_flip"
    aliases: ClassVar[tuple[str, ...]] = ("dbitflip",)

    def __new__(cls, *args: Any, memoize: bool = False, **kwargs: Any) -> "DBitFlip":
        """A :class:`MemoizedDBitFlip` for ``memoize=True``, else a one-shot DBitFlip."""
        if memoize is True and cls is DBitFlip:
            cls = MemoizedDBitFlip
        return super().__new__(cls)

    def __init__(self, epsilon: float, bounds: Bounds, buckets: int = DEFAULT_BUCKETS, d: int | None = None, *,
                 memoize: bool = False, gamma: Any = None) -> None:
        if not isinstance(memoize, (bool, np.bool_)):
            raise TypeError(f"memoize must be True or False; got {type(memoize).__name__} {memoize!r}")
        if gamma is not None and type(self) is DBitFlip:
            raise TypeError("gamma belongs to the memoized mechanism: pass memoize=True (and keys= to privatize), or "
                            "leave it out for one-shot collection")
        super().__init__(epsilon, bounds)
        self._buckets = check_scalar(buckets, "buckets", int, low=2, high=MAX_BUCKETS)
        w = field_width(self._buckets)
        self._d = (min(self._buckets, 64 // w) if d is None
                   else check_scalar(d, "d", int, low=1, high=self._buckets))
        if self._d * w > 64:
            raise ValueError(f"a dBitFlip report holds d={self._d} fields of {w} bits (a bucket of "
                             f"{self._buckets} and its bit), {self._d * w} bits, which does not fit one 64-bit "
                             f"code: use d <= {64 // w} or fewer buckets")
        self._width = w
        self._epsilon_bit = self._epsilon if self._d == 1 else self._epsilon / 2
        self._plan = binary_plan(self._epsilon_bit, bits=32)
        self._subsets = math.comb(self._buckets, self._d)
        self._t_gamma = 0
        low, high = self._bounds
        self._inv_range = 1.0 / (high - low)

    # -- parameters ---------------------------------------------------------------------------------
    def _spec_params(self):
        return {"bounds": self._bounds, "buckets": self._buckets, "d": self._d}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.epsilon, spec.get("bounds"), spec.get("buckets"), spec.get("d"))

    def __repr__(self) -> str:
        return (f"DBitFlip(epsilon={self._epsilon!r}, bounds={self._bounds!r}, buckets={self._buckets!r}, "
                f"d={self._d!r})")

    @property
    def buckets(self) -> int:
        """Number of buckets."""
        return self._buckets

    @property
    def d(self) -> int:
        """Buckets sampled (and bits reported) per person."""
        return self._d

    @property
    def bucket_edges(self) -> np.ndarray:
        """Edges of the buckets: ``low + i·(high - low)/buckets``, ``i = 0..buckets``."""
        low, high = self._bounds
        return low + (high - low) * np.arange(self._buckets + 1) / self._buckets

    @property
    def epsilon_bit(self) -> float:
        """ε of each bit: ε/2 when ``d ≥ 2``, ε when ``d = 1``."""
        return self._epsilon_bit

    @property
    def n_cells(self) -> int:
        """Length of the aggregate: ``2·buckets`` counts (reports are uint64 codes, not cells)."""
        return 2 * self._buckets

    @property
    def by_rank(self) -> bool:
        """Whether the sample is drawn by its rank from one word (at most 2**16 samples), not by Floyd's picks."""
        return self._subsets <= RANK_SUBSETS

    @property
    def sample_words(self) -> int:
        """Words of the sample: 1 (by rank) or ``d`` (Floyd's picks)."""
        return 1 if self.by_rank else self._d

    @property
    def bit_words(self) -> int:
        """Words of the ``d`` bits, two per word: ``⌈d/2⌉``."""
        return (self._d + 1) // 2

    @property
    def words_per_record(self) -> int:
        """The sample's words (:attr:`sample_words`), then the bits' (:attr:`bit_words`)."""
        return self.sample_words + self.bit_words

    def _sample_table(self) -> np.ndarray:
        """Every sample's code with each field ``j_t << 1``, by rank (:func:`~ldpnum.plans.subsets_by_rank`), once.

        Read-only uint64, ``C(buckets, d) ≤ 2**16`` entries.
        """
        table = self.__dict__.get("_samples_by_rank")
        if table is None:
            subsets = np.array(subsets_by_rank(self._buckets, self._d), dtype=np.uint64).reshape(-1, self._d)
            shifts = np.arange(self._d, dtype=np.uint64) * np.uint64(self._width) + np.uint64(1)
            table = np.bitwise_or.reduce(subsets << shifts, axis=1)
            table.flags.writeable = False
            self.__dict__["_samples_by_rank"] = table
        return table

    def _thresholds32(self) -> tuple[np.uint64, np.uint64]:
        """The bits' thresholds on the 2**32 grid the kernels compare 32-bit halves with: ``(t_lo, t_hi) >> 21``."""
        return np.uint64(self._plan.t_lo >> 21), np.uint64(self._plan.t_hi >> 21)

    def sample_distribution(self) -> dict[int, Fraction]:
        """``{bitmask of buckets: probability}`` of the sample, exactly (rank or Floyd, see the class Notes)."""
        if self.by_rank:
            return rank_distribution(self._buckets, self._d)
        return floyd_distribution(self._buckets, self._d)

    def _report_dtype(self):
        return np.dtype(np.uint64)

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p, q)``: the probability that a report's bit is 1, for a sampled bucket holding the value or not.

        ``p`` for a sampled bucket holding the value, ``q`` for another one (with output perturbation, ``γ + (1 -
        2γ)·`` those of the memoized bit).
        """
        g = self._t_gamma / TWO53
        p, q = self._plan.t_hi / TWO53, self._plan.t_lo / TWO53
        return g + (1 - 2 * g) * p, g + (1 - 2 * g) * q

    # -- exact plan ---------------------------------------------------------------------------------
    def buckets_of(self, x: ArrayLike, **prepare: Any) -> np.ndarray:
        """The bucket of each value (validated as :meth:`privatize` validates it)."""
        return self._bucketize(self.prepare_values(x, **prepare))

    def _bucketize(self, values: np.ndarray) -> np.ndarray:
        out = np.empty(values.shape[0], dtype=np.int64)
        launch(client_telemetry.bucket_of, values, self._bounds[0], self._inv_range, self._buckets, out)
        return out

    def exact_probabilities(self, bucket: int) -> dict[int, Fraction]:
        """``{code: probability}`` of a report of a value in ``bucket``: for small configurations.

        Exact: the sample's distribution (:meth:`sample_distribution`) times the bits' integer plan. Enumerates
        ``C(buckets, d)·2**d`` codes.
        """
        b, d, w = self._buckets, self._d, self._width
        hit, miss = Fraction(self._plan.t_hi, TWO53), Fraction(self._plan.t_lo, TWO53)
        out: dict[int, Fraction] = {}
        for mask, p_set in self.sample_distribution().items():
            chosen = [j for j in range(b) if mask >> j & 1]
            for bits in range(1 << d):
                prob, code = p_set, 0
                for t, j in enumerate(chosen):
                    bit = bits >> t & 1
                    p1 = hit if j == bucket else miss
                    prob *= p1 if bit else 1 - p1
                    code |= (j << 1 | bit) << (t * w)
                out[code] = prob
        return out

    # -- client side --------------------------------------------------------------------------------
    def _run_kernel(self, values, words, out):
        n, d, c = values.shape[0], self._d, self.words_per_record
        buckets = self._bucketize(values)
        buckets.flags.writeable = False  # as the memoized class hands them: one signature
        t_lo, t_hi = self._thresholds32()
        if self.by_rank:
            launch(client_telemetry.rank_bit_flip_kernel, buckets, words, c, self._sample_table(), d, t_lo, t_hi,
                   self._width, out)
            return
        samples = np.empty((n, d), dtype=np.int64)
        launch(client_telemetry.sample_buckets, words, c, 0, self._buckets, d, samples)
        samples.flags.writeable = False
        launch(client_telemetry.bit_flip_kernel, buckets, samples, t_lo, t_hi, self._width, words, c, d, out)

    # -- server side --------------------------------------------------------------------------------
    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        b, d = spec.get("buckets"), spec.get("d")
        if n_reports is None:
            if total:
                raise ValueError(f"aggregate of {spec}: n_reports is required (each dBitFlip report adds to "
                                 f"{d} sampled-bucket counts and their bits)")
            return 0
        sampled, ones = counts[:b], counts[b:]
        if int(sampled.sum()) != d * n_reports:
            raise ValueError(f"aggregate of {spec}: the sampled-bucket counts sum to {int(sampled.sum())}, not "
                             f"d·n_reports = {d * n_reports}; each report samples exactly {d} buckets")
        if np.any(ones > sampled):
            v = int(np.flatnonzero(ones > sampled)[0])
            raise ValueError(f"aggregate of {spec}: bucket {v} has {ones[v]} ones among {sampled[v]} reports that "
                             "sampled it")
        return n_reports

    def aggregate(self, reports: Reports) -> Aggregate:
        """Per bucket, the reports that sampled it and those of them with bit 1.

        A mergeable :class:`~ldpnum.Aggregate` of ``2·buckets`` counts with ``n_reports`` carried separately.
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        counts = bit_flip_counts(reports.codes, self._buckets, self._d)
        return Aggregate(counts, self.spec, n_reports=len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)

    def estimate_histogram(self, data: Reports | Aggregate) -> FrequencyEstimate:
        """Unbiased estimate of the fraction of values in each bucket, with standard errors.

        ``ĥ_v = b/(n d)·(O_v - q S_v)/(p - q)``, variance ``(1/n)·[(b/d)(p q/(p - q)² + h_v) - h_v]``
        (see the class Notes; :func:`ldpnum.estimation.bitflip.estimate_bit_flip_histogram`); the frequencies may be
        negative and need not sum to 1 (project with :meth:`estimate_distribution`). ``frequencies[v]`` is the
        fraction in ``bucket_edges[v:v+2]``.
        """
        agg = self._as_aggregate(data)
        if agg.n_reports == 0:
            raise ValueError("estimate_histogram: no reports")
        p, q = self.support_probabilities
        return estimate_bit_flip_histogram(agg.counts, agg.n_reports, self._d, p, q, epsilon=self._epsilon,
                                           spec=agg.spec)

    def estimate_distribution(self, data: Reports | Aggregate, n_bins: int | None = None,
                              method: str | None = None) -> DistributionEstimate:
        """The histogram of :meth:`estimate_histogram` projected onto the simplex.

        Returned as a :class:`~ldpnum.DistributionEstimate` over :attr:`bucket_edges`.

        Parameters
        ----------
        data : Reports or Aggregate
        n_bins : int, optional
            None or :attr:`buckets`: the bins are the buckets (the front ends pass their ``n_bins``).
        method : str, optional
            ``"simplex"``: the Euclidean projection onto the simplex; anything else (default, ``"norm-sub"``, and
            the window mechanisms' ``"em"``, ``"ems"``, ``"ems-cv"``, which the front ends pass by default and
            which have no meaning for dBitFlip's bits): norm-sub (shift, clip at 0, sum to 1)
            (:func:`ldpnum.estimation.bitflip.bucket_distribution`).
        """
        if n_bins is not None and n_bins != self._buckets:
            raise ValueError(f"DBitFlip estimates the histogram of its {self._buckets} buckets; got n_bins={n_bins!r} "
                             f"(leave it out, or build the mechanism with buckets={n_bins!r})")
        return bucket_distribution(self.estimate_histogram(data), self.bucket_edges, method, epsilon=self._epsilon)


class MemoizedDBitFlip(Longitudinal, DBitFlip):
    """dBitFlip memoized for repeated collection (Ding, Kulkarni, Yekhanin).

    The sampled buckets fixed per person by their key, and the bits a permanent response per (person, bucket of the
    value). Build it as ``DBitFlip(epsilon, bounds, buckets, d, memoize=True)``.

    Parameters
    ----------
    epsilon, bounds, buckets, d
        As for :class:`DBitFlip`; ``epsilon`` is ε∞, the privacy of all reports about one bucket.
    gamma : float, optional
        Output perturbation: each reported bit is the memoized bit flipped with probability γ in [0, 1/2)
        (fresh from ``rng`` at every report; default 0, the memoized bits themselves), so that a change of
        bucket does not show with certainty. Realized as ``t_γ/2**53 ≥ gamma``.

    Notes
    -----
    Each report is ε1-LDP (:attr:`epsilon`) and all reports of one person about one bucket are ε∞-LDP
    (:attr:`epsilon_permanent` = ``epsilon``); with ``e^b1 = (γ + (1 - γ)e^ε_b)/((1 - γ) + γ e^ε_b)`` per bit,
    ε1 = 2·b1 when ``d ≥ 2`` and b1 when ``d = 1`` (ε1 = ε∞ at γ = 0). A person whose value changes bucket
    spends ε∞ again for each distinct bucket. The sampled buckets come from keyed words under their own tweak, never from
    the value, so they are the same for every bucket a person reports. Reports, aggregates and estimators are
    :class:`DBitFlip`'s, per round.

    References
    ----------
    B. Ding, J. Kulkarni, S. Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.DBitFlip(epsilon=1.0, bounds=(0, 24), buckets=8, d=2, memoize=True)
    >>> keys = ldp.ClientKeys.generate(3, rng=0)
    >>> a = m.privatize([1.0, 5.0, 23.0], keys=keys, round=1)
    >>> b = m.privatize([1.5, 5.5, 22.0], keys=keys, round=2)   # same buckets: the same reports
    >>> bool((a.codes == b.codes).all()), m.epsilon_permanent
    (True, 1.0)
    """

    name = "memoized_d_bit_flip"
    _repr_name = "DBitFlip"
    aliases: ClassVar[tuple[str, ...]] = ("memoized_dbitflip",)

    def __init__(self, epsilon: float, bounds: Bounds, buckets: int = DEFAULT_BUCKETS, d: int | None = None, *,
                 memoize: bool = True, gamma: float = 0.0) -> None:
        if memoize is not True:
            raise ValueError(f"MemoizedDBitFlip is DBitFlip(..., memoize=True); got memoize={memoize!r}")
        DBitFlip.__init__(self, epsilon, bounds, buckets, d)
        self._gamma = check_scalar(gamma, "gamma", float, low=0, high=0.5, include_boundaries="left")
        self._epsilon_permanent = self._epsilon
        self._t_gamma, eps_bit_report = flip_threshold(self._plan, self._gamma, self._epsilon_bit)
        self._epsilon = eps_bit_report if self._d == 1 else 2 * eps_bit_report

    def _spec_params(self):
        return {"bounds": self._bounds, "buckets": self._buckets, "d": self._d, "gamma": self._gamma,
                "epsilon_permanent": self._epsilon_permanent}

    def _permanent_spec(self) -> Spec:
        return Spec(DBitFlip.name, self._epsilon_permanent, 2 * self._buckets,
                    (("bounds", self._bounds), ("buckets", self._buckets), ("d", self._d)))

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.get("epsilon_permanent"), spec.get("bounds"), spec.get("buckets"), spec.get("d"),
                   memoize=True, gamma=spec.get("gamma"))

    def aggregate(self, reports: Reports) -> Aggregate:
        """:meth:`DBitFlip.aggregate` of the reports of one round, keeping their round.

        This mechanism's round, or any one round when it is not bound to a round; aggregates of different rounds do
        not merge.
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        expected = self._expected_spec(reports.spec)
        check_spec(expected, reports.spec, "reports")
        mech = self.at_round(spec_round(expected))
        assert isinstance(mech, DBitFlip)
        return DBitFlip.aggregate(mech, reports)

    @property
    def gamma(self) -> float:
        """The realized flip probability of each bit at each report, ``t_γ / 2**53`` (at least the γ asked for)."""
        return self._t_gamma / TWO53

    @property
    def sample_tweak(self) -> np.uint64:
        """The tweak of each person's sampled buckets (the permanent spec's, renamed)."""
        tweak = self.__dict__.get("_sample_tweak")
        if tweak is None:
            spec = dataclasses.replace(self._permanent_spec(), mechanism="bucket_sample")
            tweak = self.__dict__["_sample_tweak"] = memo_tweak(spec)
        return tweak

    def sampled_buckets(self, keys: Any) -> np.ndarray:
        """Each person's ``d`` sampled buckets, sorted (an ``(n, d)`` array), from their key alone."""
        out = np.empty((len(keys), self._d), dtype=np.int64)
        self._sample_into(keys, out, 0)
        return out

    def _sample_into(self, keys: Any, out: np.ndarray, col: int) -> None:
        """Each person's sampled buckets into ``out[:, col:col + d]``.

        The sample of :class:`DBitFlip` on the keyed words ``keyed_words(keys, sample_tweak, 0, sample_words)``:
        by rank, the fields of the permanent codes of the lowest bucket (the sample does not depend on it); else
        Floyd's sampler, its words derived inside the kernel.
        """
        if not len(keys):
            return
        if self.by_rank:
            low = np.full(len(keys), self._bounds[0])
            codes = np.empty(len(keys), dtype=np.uint64)
            buckets = self._bucketize(low)
            buckets.flags.writeable = False
            self._permanent_layer(buckets, buckets.astype(np.uint64), keys, codes)
            mask = np.uint64((1 << self._width) - 1)
            for t in range(self._d):
                out[:, col + t] = (codes >> np.uint64(t * self._width + 1)) & (mask >> np.uint64(1))
            return
        launch(client_telemetry.keyed_sample_kernel, keys.words, self.sample_tweak, self._buckets, self._d, col, out)

    # -- exact plans --------------------------------------------------------------------------------
    def memo_states(self) -> list[int]:
        """The buckets (what is memoized)."""
        return list(range(self._buckets))

    def permanent_probabilities(self, state: int) -> dict[int, Fraction]:
        """The permanent response's distribution for bucket ``state`` (:meth:`DBitFlip.exact_probabilities`).

        The sample from the key is the one-shot's sampler (:meth:`sample_distribution`) on uniform words.
        """
        return self.exact_probabilities(state)

    def instantaneous_probabilities(self, permanent: int) -> dict[int, Fraction]:
        """``{report: probability}`` given the permanent code, the sampled buckets kept.

        Each of its ``d`` bits flipped with probability ``t_γ / 2**53``.
        """
        if not self._t_gamma:
            return {permanent: Fraction(1)}
        g, d, w = Fraction(self._t_gamma, TWO53), self._d, self._width
        out = {}
        for flips in range(1 << d):
            k = bin(flips).count("1")
            mask = sum(1 << (t * w) for t in range(d) if flips >> t & 1)
            out[permanent ^ mask] = g ** k * (1 - g) ** (d - k)
        return out

    # -- client side --------------------------------------------------------------------------------
    @property
    def permanent_words(self) -> int:
        """``⌈d/2⌉`` keyed words per record: the bits, two per word (the sample's are keyed on the person alone)."""
        return self.bit_words

    @property
    def instantaneous_words(self) -> int:
        """``d`` fresh words per record for the flips (none at γ = 0)."""
        return self._d if self._t_gamma else 0

    def _memo_values(self, values: np.ndarray, keys: Any) -> tuple[np.ndarray, np.ndarray]:
        buckets = self._bucketize(values)
        if self.by_rank:  # the sample is drawn in the permanent kernel
            return buckets.astype(np.uint64), buckets
        inputs = np.empty((buckets.shape[0], self._d + 1), dtype=np.int64)
        inputs[:, 0] = buckets
        self._sample_into(keys, inputs, 1)
        return buckets.astype(np.uint64), inputs

    def _allocate_permanent(self, n: int) -> np.ndarray:
        return np.empty(n, dtype=np.uint64)

    def _run_instantaneous(self, permanent: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        launch(client_telemetry.flip_bits_kernel, permanent, self._d, self._width, self._t_gamma, words, out)

    def _permanent_layer(self, inputs: np.ndarray, memo: np.ndarray, keys: Any, out: np.ndarray) -> None:
        """By rank, one kernel from the keys and buckets (its keyed words derived as used); else the base's."""
        if not self.by_rank:
            super()._permanent_layer(inputs, memo, keys, out)
        elif inputs.shape[0]:
            t_lo, t_hi = self._thresholds32()
            launch(client_telemetry.keyed_rank_bit_flip_kernel, keys.words, self.sample_tweak, self.tweak, inputs,
                   self._sample_table(), self._d, t_lo, t_hi, self._width, out)

    def _run_permanent(self, inputs: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
        """Floyd's sample (``inputs[:, 1:]``), then the bits from ``⌈d/2⌉`` keyed words per person."""
        buckets, sampled = np.ascontiguousarray(inputs[:, 0]), np.ascontiguousarray(inputs[:, 1:])
        buckets.flags.writeable = sampled.flags.writeable = False  # the one-shot class's signature (read-only)
        t_lo, t_hi = self._thresholds32()
        launch(client_telemetry.bit_flip_kernel, buckets, sampled, t_lo, t_hi, self._width, words,
               self.bit_words, 0, out)


for _name in (DBitFlip.name, MemoizedDBitFlip.name):
    register_code_check(_name, check_bit_flip_codes)

# ``__new__`` (which picks the memoized class) takes ``*args, **kwargs``; what a class is called with is its
# ``__init__``'s parameters, which the front ends read (``inspect.signature``: the command line offers the mechanisms
# that take ``bounds``).
for _cls in (OneBitMean, MemoizedOneBitMean, DBitFlip, MemoizedDBitFlip):
    _init = inspect.signature(_cls.__init__)
    setattr(_cls, "__signature__", _init.replace(parameters=list(_init.parameters.values())[1:]))
