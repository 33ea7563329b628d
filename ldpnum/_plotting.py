"""Plot helpers the result objects draw with (matplotlib is imported only when drawing).

Below the results: this module imports neither :mod:`ldpnum._results` nor :mod:`ldpnum.ranges`, so
``DistributionEstimate.plot`` and ``RangeEstimate.plot`` use it without a circular import, and
:func:`ldpnum.plot.compare` sits on top of both.
"""

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ._checks import check_finite, real_array
from ._typing import Bounds

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["KINDS", "check_kind", "check_true", "draw_true", "new_axes", "require_matplotlib"]

KINDS = ("pdf", "cdf")

#: Above this many values the empirical CDF is drawn on a fine grid (exact at its points) instead of at
#: every value.
ECDF_EXACT_MAX = 20_000


def check_kind(kind):
    if kind not in KINDS:
        raise ValueError(f"kind must be 'pdf' or 'cdf'; got {kind!r}")


def check_true(true: ArrayLike, name: str = "true_values") -> np.ndarray:
    """Raw values as a sorted 1-D float64 array (finite, non-empty); ValueError naming ``name`` otherwise."""
    values = real_array(true, name)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{name} must be a non-empty one-dimensional array of values; got shape {values.shape}")
    return np.sort(check_finite(values, name, " value(s)"))


def draw_true(ax: "Axes", values: ArrayLike, *, bounds: Bounds, kind: str = "cdf", bin_edges: ArrayLike | None = None,
              label: str | None = None) -> "Axes":
    """Draw the true distribution of raw ``values`` (clipped to ``bounds``, as the mechanisms do).

    ``kind="cdf"``: the empirical CDF as a step line (one artist). ``kind="pdf"``: a filled density
    histogram on ``bin_edges`` (default: 64 equal bins of the bounds; one artist). Returns ``ax``.
    """
    check_kind(kind)
    lo, hi = bounds
    clipped = np.clip(check_true(values, "values"), lo, hi)
    if kind == "cdf":
        n = clipped.size
        if n <= ECDF_EXACT_MAX:
            xs = np.concatenate(([lo], clipped, [hi]))
            fs = np.concatenate(([0.0], np.arange(1, n + 1) / n, [1.0]))
        else:
            xs = np.linspace(lo, hi, 4097)
            fs = np.searchsorted(clipped, xs, side="right") / n
        ax.step(xs, fs, where="post", color="0.25", label=label or "true (empirical CDF)")
    else:
        edges = np.linspace(lo, hi, 65) if bin_edges is None else np.asarray(bin_edges, dtype=np.float64)
        counts, _ = np.histogram(clipped, bins=edges)
        ax.stairs(counts / (clipped.size * np.diff(edges)), edges, fill=True, alpha=0.3, color="0.5",
                  label=label or "true (histogram)")
    return ax


#: How to get matplotlib, the optional dependency every plot needs (the ``plot`` extra of pyproject.toml).
INSTALL_HINT = 'pip install "ldpnum[plot]" (or pip install matplotlib)'


def require_matplotlib():
    """Import and return ``matplotlib.pyplot``; an ImportError saying how to install it when it is missing.

    matplotlib is an optional dependency (the ``plot`` extra): ``import ldpnum`` never imports it, and
    without it only plotting fails, with this message instead of a bare ``ModuleNotFoundError``.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(f"plotting needs matplotlib, which is not installed ({exc}); install it with "
                          f"{INSTALL_HINT}", name="matplotlib") from exc
    return plt


def new_axes(ax):
    """``ax``, or the axes of a new figure when None.

    matplotlib is imported here, only when drawing; without it, an ImportError names ``pip install "ldpnum[plot]"``.
    """
    if ax is None:
        _, ax = require_matplotlib().subplots()
    return ax
