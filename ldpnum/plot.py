"""Plots of estimated distributions against the truth (matplotlib, imported only when drawing).

:func:`compare` overlays the true distribution of raw values and any number of estimates
(:class:`~ldpnum.DistributionEstimate` or :class:`~ldpnum.RangeEstimate`) on one axes. Each estimate also
has its own ``.plot(ax=None, *, true=None, kind=...)``. All follow matplotlib's ``ax=`` convention: they draw
on the given axes (or on a new figure's), return the axes, never call ``pyplot.show()`` and never change
global style. Importing this module does not import matplotlib (install the ``plot`` extra:
``pip install ldpnum[plot]``).
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING


from ._plotting import check_kind, check_true, draw_true, new_axes
from ._results import DistributionEstimate
from ._typing import ArrayLike
from .ranges import RangeEstimate

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["compare", "check_true", "draw_true"]


def _edges(est):
    return est.bin_edges if isinstance(est, DistributionEstimate) else est.leaf_edges


def compare(true_values: ArrayLike, *estimates: "DistributionEstimate | RangeEstimate",
            ax: "Axes | None" = None, kind: str = "cdf", labels: Sequence[str] | None = None) -> "Axes":
    """Overlay the true distribution of raw values and one or more estimates of it.

    Parameters
    ----------
    true_values : array_like of float
        One true value per person (finite), e.g. the column before privatization. Drawn as an empirical CDF
        (``kind="cdf"``) or as a density histogram on the first estimate's bins (``kind="pdf"``), after
        clipping to the estimates' bounds.
    *estimates : DistributionEstimate or RangeEstimate
        At least one; all on the same bounds.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure and axes when None.
    kind : {"cdf", "pdf"}, default "cdf"
        The CDF shows quantiles and the Wasserstein distance (the area between the curves) directly.
    labels : sequence of str, optional
        One legend label per estimate (default: mechanism and ε).

    Returns
    -------
    matplotlib.axes.Axes
        With ``1 + len(estimates)`` artists (lines for ``"cdf"``, step patches for ``"pdf"``) and a legend.

    Raises
    ------
    TypeError
        If an estimate is of another kind.
    ValueError
        For no estimates, estimates on different bounds, a wrong number of labels, a bad ``kind``, or
        non-finite or empty true values.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, ldpnum as ldp
    >>> x = np.random.default_rng(0).beta(5, 2, 20_000)
    >>> sw = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> est = sw.estimate_distribution(sw.privatize(x, rng=1))
    >>> ax = ldp.plot.compare(x, est, kind="cdf")
    >>> len(ax.lines)
    2
    """
    check_kind(kind)
    if not estimates:
        raise ValueError("compare needs at least one estimate after the true values")
    for i, est in enumerate(estimates):
        if not isinstance(est, (DistributionEstimate, RangeEstimate)):
            raise TypeError(f"estimates[{i}] must be a DistributionEstimate or RangeEstimate; "
                            f"got {type(est).__name__}")
    bounds = estimates[0].bounds
    for i, est in enumerate(estimates[1:], 1):
        if tuple(est.bounds) != tuple(bounds):
            raise ValueError(f"all estimates must share bounds; estimates[0] has {bounds}, estimates[{i}] has "
                             f"{est.bounds}")
    if labels is None:
        labels = [_default_label(est, i) for i, est in enumerate(estimates)]
    else:
        if isinstance(labels, str) or len(labels) != len(estimates):
            raise ValueError(f"labels must give one label per estimate ({len(estimates)}); got {labels!r}")
        labels = [str(v) for v in labels]
    values = check_true(true_values)
    ax = new_axes(ax)
    draw_true(ax, values, bounds=bounds, kind=kind, bin_edges=_edges(estimates[0]))
    for est, label in zip(estimates, labels):
        est.plot(ax=ax, kind=kind, label=label)
    ax.legend()
    return ax


def _default_label(est, i):
    spec = getattr(est, "spec", None)
    if spec is None:
        return f"estimate {i}"
    return f"{spec.mechanism} (ε = {spec.epsilon:g})"
