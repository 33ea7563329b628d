"""Warnings and errors raised by ldpnum."""

__all__ = ["ClippingWarning", "TruncationWarning", "BudgetWarning", "BootstrapBiasWarning", "SmoothingBiasWarning",
           "BudgetExceededError", "InvalidValuesError", "SpecMismatchError", "PointMassWarning", "SizeCorrectionWarning",
           "NoisyRangesWarning", "CategoriesWarning"]


class ClippingWarning(UserWarning):
    """Finite values outside the public bounds were clipped to the nearest bound.

    Attributes
    ----------
    count : int
        How many values were clipped.
    first_index : int
        Position of the first clipped value in the input.
    """

    def __init__(self, message, *, count=0, first_index=-1):
        super().__init__(message)
        self.count = int(count)
        self.first_index = int(first_index)


class TruncationWarning(UserWarning):
    """Items longer than the declared item width were truncated to it (heavy hitters over str/bytes items).

    Each such item is cut to its first ``item_bits // 8`` bytes, so it is counted together with every other
    item sharing that prefix. Raised by :func:`ldpnum.heavy.encode_items` (and so by every heavy-hitter
    ``privatize``) once per call; pass ``truncate=False`` there to get a ValueError instead.

    Attributes
    ----------
    count : int
        How many items were truncated.
    first_index : int
        -1: a client's warning names no position (it is a side channel; see :func:`ldpnum.heavy.encode_items`
        for what the count reveals). The position of the first truncated item only when a collector-side
        caller asks for it (``locate=True``).
    """

    def __init__(self, message, *, count=0, first_index=-1):
        super().__init__(message)
        self.count = int(count)
        self.first_index = int(first_index)


class BootstrapBiasWarning(UserWarning):
    """An estimate lies outside its own bootstrap interval: the bootstrap distribution is biased there.

    A percentile interval is the spread of the estimator refitted on data simulated from a fit. When the
    estimate itself falls outside that spread, the replicates are centred away from the estimate at that query:
    the estimator's bias there (post-processing such as smoothing, consistency or clipping at zero) is larger
    than its noise. Both are returned; the interval may under-cover there. Raised once per call by the ``ci=``
    queries of :class:`~ldpnum.ranges.RangeEstimate`; :class:`SmoothingBiasWarning` is the case of a smoothed
    distribution estimate.

    Attributes
    ----------
    count : int
        How many of the queries have the estimate outside the interval.
    first_index : int
        Position (flat) of the first such query.
    """

    def __init__(self, message, *, count=0, first_index=-1):
        super().__init__(message)
        self.count = int(count)
        self.first_index = int(first_index)


class SmoothingBiasWarning(BootstrapBiasWarning):
    """A smoothed distribution estimate lies outside its own bootstrap interval.

    At that quantile or range the estimator's smoothing bias is larger than its noise (a sharp feature, such as a step
    in the density).

    The interval (from the undersmoothed bootstrap, :func:`ldpnum.estimation.bootstrap_distribution`) is then
    the better statement of the two, but an undersmoothed fit is still somewhat biased at a step: measured on a
    density stepping from 0 to 5/3 (Square Wave, 5,000 people, ε = 1-2), its nominal 95% intervals of the mass
    next to the step covered 82-87%. Treat the interval as indicative there. The warning is one-sided: it fires
    only where the bias is larger than even the undersmoothed fit's noise (in that measurement, 1 collection in
    30; in the ``bands`` bench at most 2% of the collections, also where the flights' 6-9 am share covered
    0.85), so its absence does not vouch for an interval next to a step. Raised once per call by
    :meth:`~ldpnum.DistributionEstimate.quantile` and :meth:`~ldpnum.DistributionEstimate.range` with ``ci=``.

    Attributes
    ----------
    count : int
        How many of the queries have the estimate outside the interval.
    first_index : int
        Position (flat) of the first such query.
    """

    def __init__(self, message, *, count=0, first_index=-1):
        super().__init__(message)
        self.count = int(count)
        self.first_index = int(first_index)


class PointMassWarning(SmoothingBiasWarning):
    """A continuous-mode distribution or range estimate has cells holding point masses (integer or rounded values).

    Such cells hold far more mass than their neighbours' interpolation allows, so queries that spread a cell's mass
    uniformly within it — a range end or a quantile inside such a cell — can be far off, with intervals that do not
    cover. Raised at estimation (``HierarchicalHistogram.estimate_ranges``, ``estimate_distribution`` of Square Wave and
    General Wave); for integer data build the mechanism with ``discrete=True``.

    A subclass of :class:`SmoothingBiasWarning` (a filter on that one also catches this). The test, per cell:
    its estimate exceeds the mean of its neighbours' by more than half its own value and by more than
    ``z`` standard errors of that excess, ``z`` the Bonferroni normal quantile at a 1% family-wise level over
    the cells (:func:`ldpnum.estimation.distribution.point_mass_cells`).

    Attributes
    ----------
    count : int
        How many cells hold point masses.
    first_index : int
        The first such cell (leaf or bin index).
    """


class BudgetWarning(UserWarning):
    """Each row (person) spends the sum of several columns' ε because no strategy was chosen.

    The default ``"all-columns"`` composes sequentially. Pass ``strategy=`` explicitly to silence it.
    """


class CategoriesWarning(UserWarning):
    """A category column's categories look derived from the data, not declared: the set of values may leak.

    Raised when a frequency oracle takes its categories from a pandas ``category`` column whose categories are
    sorted and all occur in it, as ``astype("category")`` makes them. Categories are public parameters of the
    collection: which values occur is what the reports are to hide. Declare them, all the possible values in a
    fixed order, on the oracle (``ldp.GRR(epsilon, categories=[...])``, ``mech.with_categories([...])``), which
    also silences this warning.
    """


class BudgetExceededError(ValueError):
    """A collection would take some people's total ε above the ledger's cap. Nothing was recorded or drawn.

    The total is the sequential composition over a :class:`~ldpnum.accounting.PrivacyLedger`.

    Attributes
    ----------
    count : int
        How many people would exceed the cap.
    first : object
        The first such person's id.
    """

    def __init__(self, message, *, count=0, first=None):
        super().__init__(message)
        self.count = count
        self.first = first


class SpecMismatchError(ValueError):
    """Reports or aggregates were produced under a different mechanism specification."""


class InvalidValuesError(ValueError):
    """Some values cannot be privatized: missing, outside the bounds or outside the mechanism's domain.

    Outside the bounds with ``out_of_range="raise"``; outside the domain: a category outside ``[0, k)``, a
    randomized-response value not 0/1.

    Raised by :meth:`ldpnum.Mechanism.prepare_values` (and so by every ``privatize``) before anything is
    drawn. Callers that validate data in pieces (a file read in batches, Dask partitions) can rebuild a
    message with positions in the whole data from the attributes.

    Attributes
    ----------
    count : int
        How many values are bad.
    first_index : int
        Position of the first bad value in the input.
    reason : {"missing", "out_of_range", "invalid"}
        What is wrong with them.
    """

    def __init__(self, message, *, count=0, first_index=-1, reason="invalid"):
        super().__init__(message)
        self.count = int(count)
        self.first_index = int(first_index)
        self.reason = reason


class SizeCorrectionWarning(UserWarning):
    """A size-corrected SVIM/SVSM frequency was impossible under the collected set sizes, and was clipped.

    The size correction (:func:`ldpnum.heavy.setvalued.size_scale`) assumes that the holders of an item have local sets of sizes
    distributed like those of a random held item (``∝ m θ_m``). When an item is held mostly by people with
    small sets and others hold long ones, the corrected estimate can exceed what the sizes allow, even 1
    (measured: 92% of people hold ``{x}`` alone, 8% hold five other items: ``x`` at 1.21 without the clip).
    The estimate is then clipped to the largest frequency the sizes allow (:func:`ldpnum.heavy.setvalued.frequency_bounds`); its
    interval spans every frequency the sizes allow, so it still covers, but the point estimate is a guess
    within that range. Attributes ``count`` (how many returned items were clipped so) and ``first_index``
    (rank position, from 0, of the first).
    """

    def __init__(self, message, *, count=0, first_index=-1):
        super().__init__(message)
        self.count = int(count)
        self.first_index = int(first_index)


class NoisyRangesWarning(UserWarning):
    """Some grid of an HDG estimate has so few reports for its cells that its range answers are noise.

    A range over half of its cells has a standard error above ``ldpnum.multi.NOISE_WARNING_SE`` = 0.2 (a 95% interval
    about ±0.4 wide, most of [0, 1]). Raised by :meth:`ldpnum.HDG.estimate_ranges`; the answers' standard errors are
    :meth:`ldpnum.MultiRangeEstimate.standard_error` (and ``range(query, ci=level)``).

    Attributes
    ----------
    grids : tuple
        The grids (their columns) concerned.
    standard_errors : tuple of float
        Each one's standard error of a range over half its cells, at frequency 0.
    """

    def __init__(self, message, *, grids=(), standard_errors=()):
        super().__init__(message)
        self.grids = tuple(grids)
        self.standard_errors = tuple(float(v) for v in standard_errors)
