r"""Which mechanism and estimator ldpnum uses for a task, with its predicted error: :func:`recommend`.

The rules, per task:

* ``"mean"``: the mean oracle with the smallest **worst-case** per-report variance at this ε among
  Duchi, Piecewise, Hybrid, Square Wave and Laplace (their closed forms, from each mechanism's integer plan);
  the predicted error is the worst-case standard error ``sqrt(V_max / n)``, in the units of the data (data
  away from the worst case do better). Duchi wins at small ε (where Hybrid equals it), Hybrid above about
  ε = 0.6 (Piecewise's worst case comes within a few percent of it at large ε).
* ``"distribution"`` and ``"quantiles"``: Square Wave with its default estimator (the reconstruction that
  ``SquareWave.estimate_distribution`` uses without ``method=``). The predicted error is **simulated**: ten
  collections of ``min(n, 10^6)`` people drawn from a reference distribution on the bounds (a Beta(2, 2), smooth
  and unimodal, rescaled to the bounds), privatized with fixed seeds, reconstructed, and scored — the mean
  Wasserstein-1 distance (as a fraction of the domain width) for ``"distribution"``, the mean absolute error of the 0.1, 0.5
  and 0.9 quantiles for ``"quantiles"``. For ``n > 10^6`` it is scaled by ``sqrt(10^6 / n)`` (the variance part;
  the estimator's smoothing bias does not shrink that way, so the figure is optimistic there).
* ``"ranges"``: Square Wave + its default estimator (``ems-cv``) or the hierarchical histogram with the adaptive
  (AHEAD-style) estimator, ``estimate_ranges(consistency="adaptive")``, whichever has the smaller simulated
  range-query MSE (200 random ranges each of volume 0.1 and 0.5 of the domain) on the same reference
  collections. Which one wins depends on the shape of the data. Measured by ``bench/ranges.py`` (n = 10^6, domain
  1024, 1000 ranges per volume, 10 collections; MSE of the adaptive tree / MSE of Square Wave + ems-cv with its
  default buckets, volume 0.1 and 0.5): Gaussian 2.2 / 5.0 (ε = 0.8) and 4.3 / 4.8 (ε = 2); two-Gaussian mixture
  1.6 / 1.9 and 1.9 / 3.3; spiky (30% in five point masses on a Beta(2, 5)) 0.38 / 0.55 and 0.83 / 0.60;
  log-normal on a wide bound 0.98 / 2.0 and 0.48 / 0.67. On the smooth default reference Square Wave is chosen.
  Given ``reference=`` (a public sample of 20,000 values of each of those shapes) the rule picked Square Wave on
  the Gaussian, the mixture and the log-normal and the adaptive tree on the spiky data, at both ε: right wherever
  one method is ahead by 2x or more on both volumes, and Square Wave where the adaptive tree's edge is smaller
  (the log-normal at ε = 2); the same picks with 3 and with 10 simulated collections. The simulation cannot
  rank methods within a factor of ~1.5: one collection's range MSE varies by ±50% (its error is smooth across
  ranges) and Square Wave's now and then lands at 2-10x its typical MSE, and on the log-normal it is dominated
  by the few ranges with an end in the peak (the first 3% of the domain).
* ``"frequencies"``: :func:`ldpnum.frequency.recommend` (Wang et al.'s rule), given ``k``; the predicted error
  is the standard error of one frequency at frequency 0.
* **The adaptive two-round protocol** (:class:`~ldpnum.AdaptiveDistribution`) is recommended for
  ``"distribution"`` and ``"ranges"`` only from a public ``reference`` showing the shape it was measured to help,
  at ``n >= 10^5`` (a pilot of at least 20,000 reports) and ``ε >= 2``: point masses on a continuous background
  (the reference's repeated values hold 10-90% of it; all values repeating is a discrete column, for the
  discrete mode). Measured by ``bench/adaptive.py`` (n = 10^6, 10 collections per cell; ratios to one round of
  Square Wave + ems-cv): five point masses holding 30% on a Beta(2, 5), ε = 2: W1 0.71, range MSE 0.69 / 0.51
  (volumes 0.1 / 0.5; the adaptive tree's were 0.83 / 0.60 at ε = 2 in ``bench/ranges.py``); ε = 4: W1 0.77,
  range MSE 1.07 / 0.77; at ε <= 1 the pilot's point masses are not clear enough and it stayed within 0.82-1.05
  of one round, so one round is kept. Heavy tails on wide bounds gain in KS and range MSE (0.40-0.68) but not
  in W1 at ε <= 1 (1.01-1.16), so they are not chosen. It is never the pick of ``mechanism="auto"`` (one ``privatize`` call cannot run two rounds)
  nor without a reference. The predicted error is then Square Wave's simulated one (an upper figure).

The simulations draw from a reference distribution: by default a Beta(2, 2) rescaled to the bounds; with
``reference=`` values, a smoothed bootstrap of those values (values that occur more than once are kept as
point masses; see ``_reference``). The reference must be **public**
knowledge (an earlier published release, a synthetic guess): choosing the mechanism from the private values
themselves would make the choice depend on them, which LDP does not cover. A simulation takes 0.3–5 s (0.3 s at
n = 10^4, 2–5 s at n >= 10^6 on 2 cores: it runs the real mechanisms); the result says which reference it used.
"""

import math
import warnings
from typing import Any, NamedTuple

import numpy as np

from .exceptions import BootstrapBiasWarning, NoisyRangesWarning
from ._validation import check_bounds, check_epsilon, check_scalar

__all__ = ["recommend", "NumericalRecommendation", "TASKS"]

TASKS = ("mean", "distribution", "quantiles", "ranges", "frequencies")
#: People per simulated collection (at most).
SIM_N = 1_000_000
#: Simulated collections averaged per prediction. One collection's range MSE (and quantile error) is
#: heavy-tailed: with Square Wave + ems-cv one collection in a few lands at 2-10x the typical error, and a mean
#: of 3 followed it (the rule picked the adaptive tree on its own smooth default reference at ε = 1, n = 10^4
#: and 10^5, where the tree's range MSE is 1.5-2.7x Square Wave's over 30 collections).
SIM_RUNS = 10
#: Quantiles scored for ``task="quantiles"``.
SIM_QUANTILES = (0.1, 0.5, 0.9)
#: The adaptive protocol's rule (see the module docstring): fewest people, least ε, and the share of the reference
#: in repeated values (point masses) it needs, below the share of a discrete column.
ADAPTIVE_MIN_N = 100_000
ADAPTIVE_MIN_EPSILON = 2.0
ADAPTIVE_ATOM_SHARE = (0.1, 0.9)


class NumericalRecommendation(NamedTuple):
    """What :func:`recommend` returns.

    ``mechanism`` is a ready instance (``epsilon`` and ``bounds`` applied); ``estimator`` names the estimate
    method and its settings; ``predicted_error`` is in ``metric`` units; ``how`` says how it was predicted;
    ``alternatives`` maps the other candidates' names to their predicted errors.
    """

    task: str
    mechanism: Any
    estimator: str
    predicted_error: float
    metric: str
    how: str
    alternatives: dict


def _check_n(n):
    return check_scalar(n, "n", int, low=1)


class _Reference(NamedTuple):
    """A checked public reference sample: its values, which of them are point masses, and a kernel bandwidth.

    Point masses are values that occur more than once (resampled exactly); the bandwidth is that of the others (0 when
    there are fewer than 2).
    """

    values: np.ndarray
    atom: np.ndarray
    bandwidth: float


def _reference(n, bounds, seed, reference=None):
    """``n`` simulated values: a Beta(2, 2) on the bounds, or a smoothed bootstrap of the public ``reference``.

    The smoothed bootstrap (Silverman & Young) resamples the reference with replacement and moves each value that
    occurs only once in it by a normal kernel of Silverman's bandwidth ``0.9 min(sd, IQR/1.34) m^(-1/5)`` (of
    those ``m`` values), reflected at the bounds; values that occur more than once are point masses of the
    reference and are kept exactly. Why not simpler: a plain resample of a few thousand values turns a smooth
    shape into that many point masses, and the linearly interpolated ECDF is as rough as the sample's spacings;
    both favour the hierarchical histogram on smooth data (measured with a reference of 20,000 values, n = 10^6:
    both picked it on a log-normal at ε = 0.8, where it has 2.0x Square Wave's range MSE over 10 collections).
    """
    rng = np.random.default_rng(seed)
    lo, hi = bounds
    if reference is None:
        return lo + (hi - lo) * rng.beta(2.0, 2.0, n)
    idx = rng.integers(0, reference.values.size, n)
    x = reference.values[idx]
    if reference.bandwidth > 0:
        x = x + np.where(reference.atom[idx], 0.0, reference.bandwidth * rng.standard_normal(n))
        x = np.where(x < lo, 2 * lo - x, x)
        x = np.clip(np.where(x > hi, 2 * hi - x, x), lo, hi)
    return x


def _check_reference(reference, bounds):
    """``reference`` as a :class:`_Reference` of at least 2 finite values inside ``bounds`` (or None)."""
    if reference is None:
        return None
    from ._checks import check_finite, real_array, where

    arr = real_array(reference, "reference")
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"reference must be a 1-D sample of at least 2 values; got shape {arr.shape}")
    check_finite(arr, "reference", " value(s)")
    lo, hi = bounds
    outside = (arr < lo) | (arr > hi)
    if outside.any():
        count, first = where(outside)
        raise ValueError(f"reference must lie inside bounds ({lo:g}, {hi:g}); {count} value(s) do not, first at "
                         f"index {first} ({arr[first]!r})")
    arr = np.ascontiguousarray(arr)
    _, inverse, counts = np.unique(arr, return_inverse=True, return_counts=True)
    atom = counts[inverse] > 1
    smooth = arr[~atom]
    bandwidth = 0.0
    if smooth.size >= 2:
        sd = float(np.std(smooth, ddof=1))
        q75, q25 = np.percentile(smooth, [75, 25])
        spread = min(sd, float(q75 - q25) / 1.34) if q75 > q25 else sd
        bandwidth = 0.9 * spread * smooth.size ** -0.2
    return _Reference(arr, atom, bandwidth)


#: Range volumes (fractions of the domain) scored for ``task="ranges"``, ``SIM_RANGES`` ranges each.
SIM_VOLUMES = (0.1, 0.5)
SIM_RANGES = 200


def _queries(bounds, seed, count=SIM_RANGES, width=0.1):
    """``count`` random ranges ``[a, a + width·(hi - lo)]`` inside the bounds."""
    lo, hi = bounds
    a = lo + np.random.default_rng(seed).uniform(0, 1 - width, count) * (hi - lo)
    return a, a + width * (hi - lo)


def _simulate(task, epsilon, bounds, n, reference=None):
    """Mean simulated error of Square Wave (and, for ranges, the hierarchical histogram)."""
    from .mechanisms import SquareWave

    m = min(n, SIM_N)
    scale = math.sqrt(m / n)
    if task == "ranges":
        scale = m / n  # a mean squared error: the variance part shrinks as 1/n
    sw = SquareWave(epsilon, bounds)
    errors: dict[str, list[float]] = {"square_wave": [], "hierarchical_histogram": []}
    with warnings.catch_warnings():
        # the simulated collections' estimates warn about the reference's point masses or a tree's noisy cells,
        # once per run and with numbers of runs the user never made: the comparison below is what they asked for
        warnings.simplefilter("ignore", BootstrapBiasWarning)
        warnings.simplefilter("ignore", NoisyRangesWarning)
        for run in range(SIM_RUNS):
            _simulate_run(task, sw, epsilon, bounds, m, scale, run, reference, errors)
    return {k: float(np.mean(v)) for k, v in errors.items() if v}


def _simulate_run(task, sw, epsilon, bounds, m, scale, run, reference, errors):
    """One simulated collection of :func:`_simulate`: its errors appended to ``errors``."""
    from . import metrics
    from .ranges import HierarchicalHistogram

    x = _reference(m, bounds, 1000 + run, reference)
    dist = sw.estimate_distribution(sw.aggregate(sw.privatize(x, rng=2000 + run)))
    if task == "distribution":
        errors["square_wave"].append(metrics.wasserstein(dist, x) * scale)
    elif task == "quantiles":
        got = np.asarray(dist.quantile(np.array(SIM_QUANTILES)))
        errors["square_wave"].append(float(np.mean(np.abs(got - np.quantile(x, SIM_QUANTILES)))) * scale)
    else:
        qs = [_queries(bounds, 10 * run + i, width=v) for i, v in enumerate(SIM_VOLUMES)]
        lo_q, hi_q = np.concatenate([q[0] for q in qs]), np.concatenate([q[1] for q in qs])
        xs = np.sort(x)
        truth = (np.searchsorted(xs, hi_q, side="right") - np.searchsorted(xs, lo_q, side="left")) / m
        errors["square_wave"].append(float(np.mean((dist.range(lo_q, hi_q) - truth) ** 2)) * scale)
        hh = HierarchicalHistogram(epsilon, bounds)
        ranges = hh.estimate_ranges(hh.aggregate(hh.privatize(x, rng=3000 + run)), consistency="adaptive")
        errors["hierarchical_histogram"].append(float(np.mean((ranges.range(lo_q, hi_q) - truth) ** 2)) * scale)


def _adaptive_pays(task, epsilon, n, ref):
    """Whether the rule predicts the adaptive two-round protocol better than one round (module docstring)."""
    if ref is None or task not in ("distribution", "ranges") or n < ADAPTIVE_MIN_N or epsilon < ADAPTIVE_MIN_EPSILON:
        return False
    share = float(np.mean(ref.atom))
    return ADAPTIVE_ATOM_SHARE[0] <= share < ADAPTIVE_ATOM_SHARE[1]


def recommend(task: str, *, n: int, epsilon: float, bounds: Any = None, k: int | None = None,
              reference: Any = None) -> NumericalRecommendation:
    """The mechanism and estimator ldpnum uses for ``task`` at ``n`` people and ``epsilon``, and its predicted error.

    See :mod:`ldpnum._recommend` for the rules and how errors are predicted.

    Parameters
    ----------
    task : {"mean", "distribution", "quantiles", "ranges", "frequencies"}
    n : int
        Number of people (each sends one report).
    epsilon : float
    bounds : (float, float)
        The public range of the values (numerical tasks).
    k : int
        Number of categories (``task="frequencies"``).
    reference : array_like of float, optional
        ``"distribution"``, ``"quantiles"`` and ``"ranges"``: a **public** sample of values like the ones to
        be collected (inside ``bounds``), simulated from instead of the default Beta(2, 2). Never the private
        values themselves (the choice would then depend on them).

    Returns
    -------
    NumericalRecommendation
        ``mechanism`` (an instance to privatize with), ``estimator``, ``predicted_error`` with its
        ``metric``, ``how`` it was predicted, and the ``alternatives`` considered.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> r = ldp.recommend("mean", n=10_000, epsilon=4.0, bounds=(0, 100))
    >>> r.mechanism.name, r.metric, round(r.predicted_error, 3)
    ('hybrid', 'worst-case standard error of the mean', 0.234)
    >>> ldp.recommend("mean", n=10_000, epsilon=0.5, bounds=(0, 100)).mechanism.name
    'duchi'
    >>> ldp.recommend("frequencies", n=10_000, epsilon=1.0, k=4).estimator
    'GRR frequencies (norm-sub)'

    With a public reference sample that has point masses, the adaptive hierarchical histogram wins ranges at
    ε = 1, and the adaptive two-round protocol from ε = 2:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> spiky = np.where(rng.random(20_000) < 0.3, rng.choice([0.1, 0.3, 0.45, 0.7, 0.9], 20_000),
    ...                  rng.beta(2, 5, 20_000))
    >>> r = ldp.recommend("ranges", n=100_000, epsilon=1.0, bounds=(0, 1), reference=spiky)
    >>> r.mechanism.name, r.estimator
    ('hierarchical_histogram', "estimate_ranges(consistency='adaptive')")
    >>> type(ldp.recommend("ranges", n=100_000, epsilon=2.0, bounds=(0, 1), reference=spiky).mechanism).__name__
    'AdaptiveDistribution'
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(map(repr, TASKS))}; got {task!r}")
    n = _check_n(n)
    eps = check_epsilon(epsilon)
    if task == "frequencies":
        if reference is not None:
            raise ValueError("task='frequencies' takes k, not reference")
        if bounds is not None:
            raise ValueError("task='frequencies' takes k (the number of categories), not bounds")
        if k is None:
            raise ValueError("task='frequencies' needs k, the number of categories")
        from .frequency import recommend as recommend_oracle

        rec = recommend_oracle(k, eps)
        mech = rec.mechanism(eps, k)
        return NumericalRecommendation(task, mech, f"{rec.name} frequencies (norm-sub)", math.sqrt(rec.variance / n),
                                       "standard error of one frequency (at frequency 0)",
                                       "closed form (Wang et al.'s variance of the oracle)", {})
    if k is not None:
        raise ValueError(f"task={task!r} takes bounds, not k")
    bounds = check_bounds(bounds)
    if task == "mean":
        if reference is not None:
            raise ValueError("task='mean' is chosen from closed forms (worst case); it takes no reference")
        from .mechanisms import Duchi, Hybrid, Laplace, Piecewise, SquareWave

        se = {}
        mechs = {}
        for cls in (Duchi, Piecewise, Hybrid, SquareWave, Laplace):
            m = cls(eps, bounds)
            mechs[m.name] = m
            se[m.name] = math.sqrt(m.worst_case_variance / n)
        best = min(se, key=se.__getitem__)
        return NumericalRecommendation(task, mechs[best], "estimate_mean", se[best],
                                       "worst-case standard error of the mean",
                                       "closed form (each mechanism's worst-case variance from its plan)",
                                       {k2: v for k2, v in se.items() if k2 != best})
    from .mechanisms import SquareWave
    from .ranges import HierarchicalHistogram

    ref = _check_reference(reference, bounds)
    errs = _simulate(task, eps, bounds, n, ref)
    source = ("a Beta(2, 2) on the bounds" if ref is None
              else f"a smoothed bootstrap of the {ref.values.size:,} reference values")
    how = (f"simulated: {SIM_RUNS} collections of {min(n, SIM_N):,} people from {source}"
           + ((f", scaled by {SIM_N:,}/n" if task == "ranges" else f", scaled by sqrt({SIM_N:,}/n)")
              if n > SIM_N else ""))
    metric = {"distribution": "Wasserstein-1 distance (fraction of the domain width)",
              "quantiles": "mean absolute error of the 0.1/0.5/0.9 quantiles (units of the data)",
              "ranges": "range-query MSE (squared fraction of people; ranges of 0.1 and 0.5 of the domain)"}[task]
    if _adaptive_pays(task, eps, n, ref):
        from .mechanisms import AdaptiveDistribution

        return NumericalRecommendation(task, AdaptiveDistribution(eps, bounds),
                                       "run(values), or round by round: fit_payload, second_mechanism, estimate",
                                       errs["square_wave"], metric,
                                       how + "; Square Wave's error (the adaptive protocol's rule is measured, not "
                                       "simulated: see ldpnum._recommend)", dict(errs))
    if task == "ranges" and errs["hierarchical_histogram"] < errs["square_wave"]:
        return NumericalRecommendation(task, HierarchicalHistogram(eps, bounds),
                                       "estimate_ranges(consistency='adaptive')",
                                       errs["hierarchical_histogram"], metric, how,
                                       {"square_wave": errs["square_wave"]})
    estimator = "estimate_distribution" if task != "ranges" else "estimate_distribution (its range)"
    return NumericalRecommendation(task, SquareWave(eps, bounds), estimator, errs["square_wave"], metric, how,
                                   {k2: v for k2, v in errs.items() if k2 != "square_wave"})
