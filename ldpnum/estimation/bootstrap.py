r"""Uncertainty of reconstructed distributions: a parametric bootstrap over the aggregate.

For a window mechanism (Square Wave, General Wave, Piecewise, Hybrid) an input histogram :math:`p` implies an
output distribution :math:`q = T p` over the report cells (:math:`T` the exact transition from the mechanism's
plan). A replicate redraws the n output counts from :math:`\mathrm{Multinomial}(n, q)` and refits them; ``B``
replicates give the spread of the fit under the mechanism's noise and the sampling of people, from which
:meth:`~ldpnum.DistributionEstimate.confidence_band`, ``quantile(q, ci=)`` and ``range(lo, hi, ci=)`` build
percentile bootstrap intervals.

**The smoothing bias.** EMS (and the default held-out EMS, ``method="ems-cv"``) smooths: at a sharp feature
(the step of flight departures at 6 am) the estimate :math:`\hat p` is biased, by more than its noise. Drawing
the replicates from :math:`\hat p` itself (``scheme="estimate"``) shows the noise but not that bias: the
smoothed fit is its own fixed point. By default (``scheme="undersmoothed"``) the replicates describe an
**undersmoothed** estimator instead: with :math:`L` the smoothing passes of the estimate (``ems-cv``: the level
chosen once on the observed counts; ``ems``: 1; ``em``: 0), the pilot :math:`\tilde p` is EMS with
:math:`\lfloor L/4 \rfloor` passes (plain EM, accelerated, when :math:`L < 4`) fitted to the observed counts, replicates are
drawn from :math:`T \tilde p` and refitted with that same undersmoothed estimator, and the intervals are its
percentile intervals. Undersmoothing makes the bias small against the (larger) noise: the standard route to
honest intervals for smoothed curve estimates (Hall 1992). The point estimate stays the smoothed one; where
its bias is larger than even the undersmoothed fit's noise it lies outside its own interval, and
:class:`~ldpnum.SmoothingBiasWarning` says so.

The interval ends are read at the :math:`(B+1)p`-th order statistic of the replicates (Davison and Hinkley
1997), not by numpy's default rule, which sits about one order statistic inside at each end (a 95% interval
about 8% too narrow at 100 replicates, 4% at 200).

**Levels the replicates can support.** A two-sided level :math:`L` needs :math:`(B+1)(1-L)/2 \ge 1`, i.e.
:math:`B \ge 2/(1-L) - 1` replicates (19 for 90%, 39 for 95%, 199 for 99%; a simultaneous band, one-sided,
:math:`B \ge 1/(1-L) - 1`). Below that the end would lie beyond the most extreme replicate, every higher
level would return the same interval (the replicates' range, about a :math:`1 - 2/(B+1)` interval: 0.905 at
20 replicates), and ``ci=0.999999`` would be a claim nothing supports; such a level is refused, with the
count it needs (:func:`ldpnum._results.check_replicates_support`). The replicate count itself must be an
integer in [20, 100,000] (``MAX_REPLICATES``: levels up to 0.99998; beyond it the refits would take hours
and the Monte Carlo error of the ends is already negligible), and the replicates (with the distribution
bootstrap's redrawn counts: 8 bytes per output cell and per bin each) may take at most 2 GiB
(``MEMORY_LIMIT``): ``bootstrap=10**7`` at 1024 cells would have asked for 76 GiB. Both are refused before
anything is drawn or allocated.

**An estimate outside its own interval** (decided: warn). The interval is the spread of the estimator
refitted on data simulated from a fit; when the estimate lies outside it, the bootstrap distribution is
centred away from the estimate there, i.e. biased at that query by more than its noise. Both are returned and
a :class:`~ldpnum.exceptions.BootstrapBiasWarning` says so, counting the queries and giving the first:
:class:`~ldpnum.SmoothingBiasWarning` (a subclass) for a smoothed distribution estimate, whose bias is the
smoothing at a sharp feature; for a range tree, whose replicates are simulated from the non-negative
consistent tree and refitted with the estimate's consistency, the bias of that post-processing (a
least-squares tree's negative leaves, for instance).

Measured (``make bench``, section ``bands``: 60 collections of 20,000 people, 100 replicates, ems-cv; share of
nominal 95% intervals covering the truth, undersmoothed against ``"estimate"``): the flights' 6-9 am share
0.90 / 0.92 at ε = 0.5 / 1 (0.93 / 0.94 over 300 collections) against 0.42 / 0.13, their first quartile 0.95 / 0.97 against 0.87 / 0.65, and
0.95-1.00 for the median, the third quartile and 5-8 pm; at ε = 4 all five 0.97-1.00 against 0.78-0.97;
Beta(5, 2) at ε = 0.5 and 1, 0.93-1.00 (estimate 0.92-1.00); at ε = 4 0.92 / 0.97 / 0.90 for the quartiles
and 0.97 / 0.93 for the ranges (estimate 0.90-0.95). The price is width: 1.3-2.1x where the pilot is plain
EM (ε ≤ 1, and the flights at ε = 4), about 1.05x on Beta(5, 2) at ε = 4. (Reading the ends by numpy's rule,
the same bench gave the 6-9 am share 0.88 / 0.85 and Beta(5, 2) at ε = 4 0.88 / 0.92 / 0.87 / 0.95 / 0.92 at
widths 6-9% narrower.)
Also measured and dropped (flights, ε = 1, 20 collections): an explicit bias correction — replicates from the
EM pilot refitted at level :math:`L`, basic interval :math:`\hat\theta - [\theta^*_{hi} - \theta(\tilde p),
\theta^*_{lo} - \theta(\tilde p)]` or the bias-shifted percentile interval — covered 60-85%: the correction adds
the pilot's noise, which the replicate spread does not show (Calonico, Cattaneo and Farrell 2018); refitting at
level :math:`L` from a pilot at ``L // 4`` covered the step's range 20%. On the undersmoothed replicates
themselves (40-300 collections): the basic interval around the pilot covered the flights' quartiles at ε = 1
68-75% (skewed replicate distributions), Efron's bias-corrected percentile interval Beta(5, 2)'s quartiles at
ε = 4 0.89-0.93 (against 0.89-0.95), a population corrected by the replicates' mean shift
(:math:`2\tilde p - \bar p^*`) moved the first quartile 0.875 to 0.905 and the median 0.93 to 0.90 (200
collections); plain EM run to a 1e-4-nat step on the flights at ε = 1 kept the same centre at the 6 am step
(6-9 am share −0.032) for +7% width and 3x the time.

**Why Beta(5, 2) at ε = 4 was short** (diagnosed on 300-800 collections, where the bench's 60 give each share
±0.028 and each SD ±9%): not under-dispersion. The pilot's first quartile (EMS at ``L // 4`` passes) varies
with SD 0.00278 across collections; its replicates spread 0.00271; EMS at 2 or 4 fixed passes on fresh
collections 0.00278 / 0.00275 against 0.00273 / 0.00268 on multinomial counts from the true output
distribution; EM stopped at a relative 1e-12 instead of 1e-3 nats changes none of this (0.00270 / 0.00282).
What is there is a noise bias of EM (mass that noise puts into the long left tail, which positivity keeps):
the pilot's first quartile sits −0.00069 (0.25 SD) from the truth, and the replicates, being the same
estimator on the pilot, shift by another −0.00065, so the percentile interval is centred about 0.45 SD off;
with numpy's narrower reading of the ends this covered 0.89 (300 collections), with the order statistics
0.92; the median and third quartile 0.95-0.97, the ranges 0.95.

Limits: the intervals are for the distribution the people were drawn from as the estimator sees it at the
estimate's resolution (its buckets). At a sharp step the undersmoothed fit is still somewhat biased: at ε ≤ 1
the flights' chosen level is 0-1, so the pilot is already plain EM (no weaker smoothing to fall back to), and
plain EM's own fit at the 6 am step is biased: the 6-9 am share's interval is centred 0.032 (ε = 1) and 0.056
(ε = 0.5) below the truth, 0.9-1.0 of its spread (40 collections, 60 replicates), yet the intervals are wide
enough there: the bench's coverage is 0.94 / 0.94 at ε = 0.5 / 1 over 300 collections (0.93 / 0.94 before the
pilot ran with SQUAREM; 0.90 / 0.92 in the first 60). A
density stepping from 0 to 5/3 covers 0.73-0.83 next to the step (2,000 people, ε = 2, 40 replicates). On
Beta(5, 2) at ε = 4 the first quartile's interval is centred 0.45 SD off (above): 0.92 over 300 collections;
in the bench's 60, whose quartiles happen to vary 10% more than over 800 collections, 0.90-0.92 for the first
and third.
Cost: refits at a quarter of the level, or plain EM. Plain EM needs about ten times the steps of EMS to meet
the same stopping rule (894 steps on 2,000 reports in 128 buckets), so a plain-EM pilot and its refits run with
SQUAREM (``expectation_maximization(..., accelerate=True)``: 86 steps there, the same stopping rule, a point
nearer the likelihood's maximum). Measured on the bands bench (``bench/bands.py``, 20,000 people, 100
replicates, the first 20 collections, same seeds): where the pilot is plain EM (Beta(5, 2) at ε ≤ 1, the flights)
2.2-2.4 s per collection became 0.23-0.43 s, the coverage of every quartile and range stayed within one
collection of the plain iteration's, and the intervals widened by 0-4%. 200 replicates at n = 1e5, 1024 buckets,
ε = 1 (median of 3 on two quiet cores): Beta(5, 2) (level 8, pilot level 2) 2.5 s against 1.9 s for
``scheme="estimate"``; flight departures (level 8) 2.8 s against 2.5 s.

With ``method="ems-cv"`` the smoothing strength is chosen **once**, on the observed counts, and not again on
each replicate (that would answer how much smoothing data from the pilot needs, and cost twice the time). The
bootstrap's own randomness is a simulation, not part of any report: it costs no privacy.

**Tables of cells** (HDG's grids, Marginals' attribute sets: :func:`bootstrap_tables`). Each table's counts
are redrawn from the fitted (non-negative, consistent) table with the observed reports per table
(:func:`resample_table_counts`: a GRR table's histogram exactly multinomial, an OLH table's support counts with
their exact mean and covariance) and the whole post-processing is re-run; ``HDG.estimate_ranges(...,
bootstrap=B)`` and ``Marginals.estimate_marginals(..., bootstrap=B)`` attach the refits, from which ranges,
grid cells and marginal cells get intervals (:func:`ldpnum.multi._result.table_interval`: the percentile
interval widened to hold the basic one, which undoes the non-negativity step's upward bias on near-empty
cells, repeated by the replicates). What they cannot show is the bias of a model the post-processing assumes
where the data leave it free: HDG's distribution inside a grid cell (the copula start of the response matrix)
for a range that cuts cells or a cell of the finer joint table, and maximum entropy for a marginal no released
set holds; those get no bootstrap interval (refused with a ValueError). Measured coverage (``make bench``,
section ``bands-multi``): in :meth:`ldpnum.multi.MultiRangeEstimate.range` and
:meth:`ldpnum.multi.MarginalsEstimate.marginal`.

References
----------
P. Hall, "Effect of Bias Estimation on Coverage Accuracy of Bootstrap Confidence Intervals for a Probability
Density", The Annals of Statistics 20(2), 1992 (undersmoothing against explicit bias correction). W. Härdle,
J. S. Marron, "Bootstrap Simultaneous Error Bars for Nonparametric Regression", The Annals of Statistics 19(2),
1991 (resampling from a pilot of a different bandwidth). S. Calonico, M. D. Cattaneo, M. H. Farrell, "On the
Effect of Bias Estimation on Coverage Accuracy in Nonparametric Inference", JASA 113, 2018. A. C. Davison,
D. V. Hinkley, "Bootstrap Methods and their Application", Cambridge University Press, 1997 (section 5.2: the
percentile interval's ends at the (B+1)α-th order statistics). B. Efron, "Better Bootstrap Confidence
Intervals", JASA 82, 1987 (the bias-corrected percentile interval).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._results import MAX_REPLICATES as _MAX_REPLICATES
from .._typing import SeedLike
from .._validation import check_scalar

if TYPE_CHECKING:
    from .._results import DistributionEstimate
    from ..aggregate import Aggregate
    from ..ranges import RangeEstimate
    from ..reports import Reports

__all__ = ["bootstrap_distribution", "bootstrap_ranges", "bootstrap_tables", "resample_table_counts"]

#: Default number of replicates.
DEFAULT_REPLICATES = 200
#: Fewest replicates taken (a 90% interval needs 19: see :func:`ldpnum._results.required_replicates`).
MIN_REPLICATES = 20
#: Most replicates taken (defined with the intervals that read them, :data:`ldpnum._results.MAX_REPLICATES`).
MAX_REPLICATES = _MAX_REPLICATES
#: Most memory the replicates (and, for the distribution bootstrap, their redrawn counts) may take.
MEMORY_LIMIT = 2 * 2**30
#: What the distribution bootstrap resamples and refits (see the module docstring).
SCHEMES = ("undersmoothed", "estimate")
#: The undersmoothed pilot smooths ``L // UNDERSMOOTHING`` passes where the estimate smooths ``L``.
UNDERSMOOTHING = 4

#: Estimator settings the replicates accept (anything else is refused, not ignored).
DISTRIBUTION_OPTIONS = ("n_bins", "method", "max_iter", "tol")
RANGE_OPTIONS = ("consistency", "threshold")


def check_replicates(n_boot: int, bytes_per_replicate: int, *, name: str = "n_boot") -> int:
    """``n_boot`` as an int, checked before anything is drawn or allocated.

    TypeError unless an integer; ValueError below :data:`MIN_REPLICATES`, above :data:`MAX_REPLICATES`, or when
    the replicates would take more than :data:`MEMORY_LIMIT` (2 GiB) of memory (the message gives the amount).
    """
    n_boot = check_scalar(n_boot, name, int)
    if n_boot < MIN_REPLICATES:
        raise ValueError(f"{name} must be an integer >= {MIN_REPLICATES}; got {n_boot!r}")
    if n_boot > MAX_REPLICATES:
        raise ValueError(f"{name}={n_boot:,} is more bootstrap replicates than ldpnum runs (at most "
                         f"{MAX_REPLICATES:,}, enough for intervals up to a level of 0.99998); ask for fewer")
    need = n_boot * bytes_per_replicate
    if need > MEMORY_LIMIT:
        raise ValueError(f"{name}={n_boot:,} bootstrap replicates would take {need / 2**30:.3g} GiB of memory "
                         f"({bytes_per_replicate:,} bytes each), more than the {MEMORY_LIMIT / 2**30:g} GiB limit; "
                         f"ask for at most {MEMORY_LIMIT // bytes_per_replicate:,} (or fewer bins)")
    return n_boot


def _run_replicates(one, n_boot, threads=True):
    """``one(b)`` for every replicate ``b``, on threads when there are several (their draws are made before).

    ``threads=False`` for refits that hold the GIL (small numpy post-processing): threads only add switching.
    """
    from .._counting import n_threads

    workers = min(n_threads(), n_boot) if threads else 1
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, range(n_boot)))
    else:
        for b in range(n_boot):
            one(b)


def _check_options(options, allowed, where):
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"{where} got unknown estimator option(s) {', '.join(map(repr, unknown))}; "
                        f"it accepts {', '.join(allowed)}")


def _smoothing_level(observed, transition, method, tol, max_iter):
    """Smoothing passes of the estimate's final fit: None for Norm-Sub (no EM)."""
    from .em import ems_heldout

    if method == "ems-cv":
        return ems_heldout(observed, transition, max_iter=max_iter, tol=tol).smoothing
    return {"ems": 1, "em": 0}.get(method)


def bootstrap_distribution(mechanism: Any, data: Reports | Aggregate, *, n_boot: int = DEFAULT_REPLICATES,
                           rng: SeedLike = None, estimate: DistributionEstimate | None = None,
                           scheme: str = "undersmoothed", **options: Any) -> DistributionEstimate:
    r"""The mechanism's distribution estimate with ``n_boot`` parametric bootstrap replicates attached.

    Parameters
    ----------
    mechanism : window mechanism (SquareWave, GeneralWave, Piecewise, Hybrid)
    data : Reports or Aggregate
    n_boot : int, default 200
        Number of replicates, 20 to 100,000 (and at most 2 GiB of them). A two-sided level ``L`` of the
        intervals needs at least ``2 / (1 - L) - 1`` (39 for 95%); a higher level is refused when asked.
    rng : None, int or numpy.random.Generator
        Randomness of the resampling (a simulation on the collector's side).
    estimate : DistributionEstimate, optional
        The estimate to bootstrap (default: ``mechanism.estimate_distribution(data, **options)``).
    scheme : {"undersmoothed", "estimate"}, default "undersmoothed"
        ``"undersmoothed"``: replicates drawn from an undersmoothed pilot (EMS at a quarter of the estimate's
        smoothing passes, plain EM below 4) and refitted with it, so the intervals include the smoothing bias
        at sharp features (see :mod:`ldpnum.estimation.bootstrap`; the flights' 6-9 am share at ε ≤ 1 measured
        0.93-0.94 coverage over 300 collections where the other scheme gave 0.13-0.42). ``"estimate"``: replicates drawn from the
        estimate and refitted with its own estimator (narrower and cheaper; it shows the noise only and
        under-covers where the estimate is biased). For ``method="norm-sub"`` (no smoothing) both are the same.
    **options
        Estimator settings (``n_bins``, ``method``, ...), used for the estimate and every replicate.

    Returns
    -------
    DistributionEstimate
        The estimate, with ``replicates`` (shape ``(n_boot, n_bins)``).

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> from ldpnum.estimation import bootstrap_distribution
    >>> sw = ldp.SquareWave(epsilon=2.0, bounds=(0, 1))
    >>> x = np.random.default_rng(0).beta(5, 2, 20_000)
    >>> est = bootstrap_distribution(sw, sw.aggregate(sw.privatize(x, rng=1)), n_boot=50, rng=2)
    >>> med = est.quantile(0.5, ci=0.95)
    >>> bool(med.low < np.median(x) < med.high), est.replicates.shape
    (True, (50, 256))
    """
    from ..aggregate import Aggregate
    from .._validation import check_choice
    from .em import DEFAULT_MAX_ITER, expectation_maximization
    from .distribution import DEFAULT_METHOD, input_grid, window_counts

    check_replicates(n_boot, 1)  # the kind and range first; the memory once the bins are known
    check_choice(scheme, "scheme", SCHEMES)
    _check_options(options, DISTRIBUTION_OPTIONS, "bootstrap_distribution")
    if getattr(mechanism, "plan", None) is None or not hasattr(mechanism, "estimate_distribution"):
        raise TypeError(f"{type(mechanism).__name__} has no window plan to bootstrap; bootstrap_distribution works "
                        "with SquareWave, GeneralWave, Piecewise and Hybrid")
    agg = mechanism._as_aggregate(data)
    est = mechanism.estimate_distribution(agg, **options) if estimate is None else estimate
    d = est.n_bins
    # the redrawn counts (int64 per output cell) and the refitted probabilities (float64 per bin)
    n_boot = check_replicates(n_boot, 8 * (int(agg.counts.size) + d))
    transition = input_grid(mechanism, d, agg.n_reports)[0]  # equal buckets, or a discrete mechanism's integers
    options = {**options, "n_bins": d}
    observed = window_counts(mechanism.plan, agg)  # Hybrid: its window branch's reports (see window_counts)
    tol, max_iter = options.get("tol"), options.get("max_iter") or DEFAULT_MAX_ITER
    method = options.get("method", DEFAULT_METHOD)
    # the level the estimate's held-out search chose is on the estimate: no second search
    level = est.smoothing if method == "ems-cv" and est.smoothing is not None else \
        _smoothing_level(observed, transition, method, tol, max_iter)
    if level is not None and scheme == "undersmoothed":
        level //= UNDERSMOOTHING

    def fit(counts):  # EMS at a fixed level (EM at 0), as estimate_window_distribution finishes a fit
        # a plain-EM pilot takes ~10x the steps of EMS (894 against 86 with SQUAREM, 128 buckets): accelerated;
        # scheme="estimate" refits with the estimate's own (plain) estimator
        fixed = dict(method="ems", smoothing=level) if level else \
            dict(method="em", accelerate=scheme == "undersmoothed")
        x = np.maximum(expectation_maximization(counts, transition, max_iter=max_iter, tol=tol, **fixed).x, 0.0)
        return x / x.sum()

    population = est.probabilities if level is None or scheme == "estimate" else fit(observed)
    q = np.clip(transition.dense() @ population, 0.0, None)
    q /= q.sum()
    gen = np.random.default_rng(rng)
    # all draws first: reproducible for any threads
    counts = gen.multinomial(int(observed.sum()), q, size=int(n_boot))
    reps = np.empty((int(n_boot), d))
    d_cells = counts.shape[1]

    if level is not None:
        def one(b):
            reps[b] = fit(counts[b])
    else:
        def one(b):
            full = np.zeros(agg.counts.size, dtype=np.int64)  # cells beyond the window's (Hybrid's Duchi) stay 0
            full[:d_cells] = counts[b]
            reps[b] = mechanism.estimate_distribution(Aggregate(full, agg.spec), **options).probabilities

    _run_replicates(one, int(n_boot))  # the EM kernel releases the GIL: replicates run on threads
    return est._with_replicates(reps)


def bootstrap_ranges(mechanism: Any, data: Reports | Aggregate, *, n_boot: int = DEFAULT_REPLICATES,
                     rng: SeedLike = None, estimate: RangeEstimate | None = None,
                     **options: Any) -> RangeEstimate:
    """The hierarchical histogram's :class:`~ldpnum.ranges.RangeEstimate` with ``n_boot`` bootstrap replicates.

    A parametric bootstrap by simulation: each replicate draws the same number of people from the leaf
    distribution of the non-negative consistent tree (a proper distribution), privatizes them with the mechanism
    (the simulation's own randomness, seeded by ``rng``), and re-estimates with the same ``options``. For any
    mechanism this has the same distribution as redrawing output counts from the implied output distribution.
    Replicates run on threads. Returns the estimate with ``replicates`` attached. ``n_boot`` as for
    :func:`bootstrap_distribution` (20 to 100,000, at most 2 GiB of trees; 39 or more for 95% intervals).

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> from ldpnum.estimation import bootstrap_ranges
    >>> hh = ldp.HierarchicalHistogram(epsilon=2.0, bounds=(0, 1), n_leaves=256)
    >>> x = np.random.default_rng(0).beta(5, 2, 20_000)
    >>> est = bootstrap_ranges(hh, hh.aggregate(hh.privatize(x, rng=1)), n_boot=40, rng=2)
    >>> r = est.range(0.6, 0.8, ci=0.95)
    >>> bool(r.low <= r.estimate <= r.high), len(est.replicates)
    (True, 40)
    """
    check_replicates(n_boot, 1)
    if not hasattr(mechanism, "estimate_ranges"):
        raise TypeError(f"{type(mechanism).__name__} does not estimate range trees")
    _check_options(options, RANGE_OPTIONS, "bootstrap_ranges")
    agg = mechanism._as_aggregate(data)
    est = mechanism.estimate_ranges(agg, **options) if estimate is None else estimate
    # the replicates and the population are fitted without the estimate's diagnostics (point-mass warnings)
    raw_fit = getattr(mechanism, "_fit_ranges", None)

    def fit(a, **o):
        return mechanism.estimate_ranges(a, **o) if raw_fit is None else raw_fit(a, **o)[0]

    # each replicate keeps a tree: its node estimates and CDF (float64), plus the object's own ~2 KB
    n_boot = check_replicates(n_boot, 8 * (sum(v.size for v in est.node_estimates) + est.n_leaves + 1) + 2048)
    # the population to simulate from: a proper distribution, so the non-negative consistent tree (a
    # least-squares tree's negative leaves, clipped, would shift mass: 0.32 instead of 0.42 measured on a range)
    # (an adaptive tree's threshold belongs to the replicates' estimator, not to this population)
    population = {k: v for k, v in options.items() if k != "threshold"}
    dist = fit(agg, **{**population, "consistency": "nonnegative"}).to_distribution()
    seeds = np.random.SeedSequence(np.random.default_rng(rng).integers(0, 2**63, 2)).spawn(int(n_boot))
    reps = [None] * int(n_boot)

    def one(b):
        g = np.random.default_rng(seeds[b])
        x = dist.sample(agg.n_reports, rng=g)
        reps[b] = fit(mechanism.aggregate(mechanism.privatize(x, rng=g)), **options)

    _run_replicates(one, int(n_boot))
    import dataclasses

    return dataclasses.replace(est, replicates=tuple(reps))


def resample_table_counts(oracles: Any, populations: Any, n_per: Any, n_boot: int,
                          rng: SeedLike = None) -> np.ndarray:
    r"""``n_boot`` simulated aggregates of tables of cells (HDG's grids, Marginals' sets), one row each.

    Table ``j`` (frequency oracle ``oracles[j]``, a GRR or OLH table of :class:`ldpnum.multi.hdg.PackedTables`)
    had ``n_j = n_per[j]`` reports; its people are drawn from the cell distribution ``populations[j]`` (clipped to
    non-negative and normalized). Each person reports one table only, chosen independently of their values, so
    given the ``n_j`` the tables' reporters are independent samples of the population and the tables are resampled
    independently, each with its own ``n_j`` (the tables' shares are ancillary: they carry no information on the
    distribution).

    * GRR table (``k`` cells): its block is the output histogram, exactly
      :math:`\mathrm{Multinomial}(n_j, q^* + (p^* - q^*)\pi)`.
    * OLH table: its block is the support counts :math:`I_v = \#\{i : h_i(v) = y_i\}`, then ``n_j``. The cells
      of the people are drawn :math:`c \sim \mathrm{Multinomial}(n_j, \pi)` and then
      :math:`I_v = \mathrm{Bin}(c_v, p^*) + \mathrm{Bin}(n_j - c_v, q^*)`, independently over ``v``. This has the
      exact mean and covariance of the real support counts: with a pairwise-independent hash the supports of two
      cells are uncorrelated given the people's cells (for a person in neither cell both indicators are
      independent with probability ``q*``; for one in ``u``, ``p*`` and ``q*``), so their whole covariance is the
      multinomial one of ``c``, :math:`-n_j (p^*-q^*)^2 \pi_u \pi_v`. Only higher joint moments differ, and it
      costs O(k) per table and replicate instead of O(n_j k) hash evaluations of simulated reports.

    The resampling is parametric (from a fitted model), not multinomial from the observed counts: an OLH block
    is not a histogram of reports (a report supports about ``k/g`` cells), so it cannot be resampled as counts,
    and the fitted, non-negative consistent tables are also the population the estimator's post-processing
    assumes (as :func:`bootstrap_ranges` draws from the non-negative consistent tree).

    Returns an int64 array ``(n_boot, cells)``: the tables' blocks concatenated, as in the mechanism's aggregate.
    """
    gen = np.random.default_rng(rng)
    blocks = []
    for o, pop, n in zip(oracles, populations, n_per):
        pi = np.clip(np.asarray(pop, dtype=np.float64).ravel(), 0.0, None)
        if not pi.sum() > 0:
            pi = np.full(pi.size, 1.0 / pi.size)
        pi /= pi.sum()
        p, q = (float(v) for v in o.oracle.support_probabilities)
        n = int(n)
        if not getattr(o, "hashed", False):
            out = np.clip(q + (p - q) * pi, 0.0, None)
            blocks.append(gen.multinomial(n, out / out.sum(), size=n_boot))
        else:
            c = gen.multinomial(n, pi, size=n_boot)
            support = gen.binomial(c, p) + gen.binomial(n - c, q)
            blocks.append(np.concatenate([support, np.full((n_boot, 1), n, dtype=np.int64)], axis=1))
    return np.ascontiguousarray(np.concatenate(blocks, axis=1), dtype=np.int64)


def bootstrap_tables(mechanism: Any, data: Reports | Aggregate, refit: Any, populations: Any, *,
                     n_boot: int = DEFAULT_REPLICATES, rng: SeedLike = None,
                     bytes_per_replicate: int = 0) -> tuple:
    """Bootstrap replicates of an estimate over tables of cells (HDG, Marginals): refits of simulated aggregates.

    Each replicate's aggregate is drawn by :func:`resample_table_counts` from ``populations`` (the fitted tables,
    one per table of the mechanism's plan) with the observed reports per table, and ``refit(aggregate)`` re-runs
    the estimate's whole post-processing on it. All draws are made first (reproducible from ``rng`` for any
    number of threads); the refits run one after another. ``n_boot`` as for :func:`bootstrap_distribution` (20 to
    100,000; at most 2 GiB with the redrawn counts and ``bytes_per_replicate`` for each refit).
    Returns the tuple of refitted estimates. The resampling is a simulation on the collector's side: it costs
    no privacy.
    """
    from ..aggregate import Aggregate

    check_replicates(n_boot, 1)
    agg = mechanism._as_aggregate(data)
    plan = mechanism._plan
    n_boot = check_replicates(n_boot, 8 * plan.n_cells + int(bytes_per_replicate))
    blocks = mechanism.grid_counts(agg)
    n_per = tuple(o.level_reports(b) for o, b in zip(plan.oracles, blocks))
    counts = resample_table_counts(plan.oracles, populations, n_per, n_boot, rng)
    reps: list = [None] * n_boot

    def one(b):
        reps[b] = refit(Aggregate(counts[b], agg.spec, n_reports=agg.n_reports))

    # the tables' post-processing is small numpy steps holding the GIL: measured serial 0.03 s against 0.17-0.3 s
    # on two threads for 39 refits of Marginals' three 2-way tables (a loaded 2-core machine)
    _run_replicates(one, n_boot, threads=False)
    return tuple(reps)
