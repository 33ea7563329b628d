"""Warnings and errors raised by ldpnum."""

__all__ = ["ClippingWarning", "TruncationWarning", "BudgetWarning", "BootstrapBiasWarning", "SmoothingBiasWarning", "BudgetExceededError", "InvalidValuesError",
           "SpecMismatchError"]


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
        Position of the first truncated item in the input.
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
    """A smoothed distribution estimate lies outside its own bootstrap interval: at that quantile or range the
    estimator's smoothing bias is larger than its noise (a sharp feature, such as a step in the density).

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


class BudgetWarning(UserWarning):
    """Each row (person) spends the sum of several columns' ε because no strategy was chosen: the default
    ``"all-columns"`` composes sequentially. Pass ``strategy=`` explicitly to silence it."""


class BudgetExceededError(ValueError):
    """A collection would take some people's total ε (sequential composition over a
    :class:`~ldpnum.accounting.PrivacyLedger`) above the ledger's cap. Nothing was recorded or drawn.

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
    """Some values cannot be privatized: missing, outside the bounds (with ``out_of_range="raise"``) or
    outside the mechanism's domain (a category outside ``[0, k)``, a randomized-response value not 0/1).

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
