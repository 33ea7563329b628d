"""The result of a vector mean estimate: one unbiased mean and standard error per coordinate."""

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._checks import normal_quantile
from ..accounting import ShuffleAmplification
from .._results import ConfidenceInterval, PrivacyProvenance, _g, _html_table, _mechanism_rows, _preview
from .._typing import FloatArray
from ..spec import Spec

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["VectorMeanEstimate"]


def _frozen(values: Any, name: str, dim: int) -> FloatArray:
    arr = np.array(values, dtype=np.float64, copy=True)
    if arr.shape != (dim,):
        raise ValueError(f"{name} must have shape ({dim},); got {arr.shape}")
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False, repr=False)
class VectorMeanEstimate(PrivacyProvenance):
    """Unbiased estimate of the mean vector of the ``(n, dim)`` values behind a set of vector reports.

    Attributes
    ----------
    mean : numpy.ndarray, shape (dim,)
        The estimate of each coordinate's mean, in the units of the data.
    standard_errors : numpy.ndarray, shape (dim,)
        Estimated standard error of each coordinate of ``mean`` (how each is computed is said by the
        mechanism's ``estimate_mean``).
    expected_squared_error : float
        The expected squared Euclidean error ``E‖mean - true mean‖²`` as the estimator states it: the sum of
        the per-coordinate variances ``Σ_j standard_errors[j]²`` unless the mechanism gives a closed form.
    n_reports : int
        Number of reports (people) behind the estimate.
    epsilon : float
        The privacy parameter of each person's whole report (all coordinates together).
    spec : Spec
        The mechanism specification of the reports.
    dim : int
        Dimension ``d`` of the vectors.
    k : int or None
        Coordinates each person reported (sampled dimensions), or None when every report covers all.
    n_per_coordinate : numpy.ndarray of int64, shape (dim,), or None
        Reports behind each coordinate's estimate, when people report only some coordinates.
    names : tuple of str, or None
        Coordinate names (e.g. the DataFrame columns the vectors came from); they index
        :meth:`to_frame` and :meth:`to_series`. Provenance only: not part of equality.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> X = np.random.default_rng(0).uniform(0, 1, (50_000, 3))
    >>> m = ldp.DuchiMultivariate(epsilon=2.0, bounds=[(0, 1)] * 3)
    >>> est = m.estimate_mean(m.privatize(X, rng=1), names=["a", "b", "c"])
    >>> lo, hi = est.confidence_interval(0.999)
    >>> bool(np.all((lo < X.mean(axis=0)) & (X.mean(axis=0) < hi)))
    True
    >>> est.to_frame().columns.tolist()
    ['mean', 'standard_error', 'n_reports']
    """

    mean: FloatArray
    standard_errors: FloatArray
    expected_squared_error: float
    n_reports: int
    epsilon: float
    spec: Spec
    dim: int
    k: int | None = None
    n_per_coordinate: np.ndarray | None = None
    names: tuple[str, ...] | None = field(default=None, compare=False)
    #: The central ε of a shuffled collection (:meth:`ldpnum.Aggregate.shuffled`), None when the reports were
    #: not declared shuffled; shown next to the local ε (:attr:`privacy`). Provenance only.
    shuffle: "ShuffleAmplification | None" = field(default=None, compare=False)

    def __post_init__(self):
        dim = int(self.dim)
        object.__setattr__(self, "dim", dim)
        object.__setattr__(self, "mean", _frozen(self.mean, "mean", dim))
        object.__setattr__(self, "standard_errors", _frozen(self.standard_errors, "standard_errors", dim))
        if self.n_per_coordinate is not None:
            counts = np.array(self.n_per_coordinate, dtype=np.int64, copy=True)
            if counts.shape != (dim,):
                raise ValueError(f"n_per_coordinate must have shape ({dim},); got {counts.shape}")
            counts.flags.writeable = False
            object.__setattr__(self, "n_per_coordinate", counts)
        if self.names is not None:
            names = tuple(str(n) for n in self.names)
            if len(names) != dim:
                raise ValueError(f"names must give one name per coordinate ({dim}); got {len(names)}")
            object.__setattr__(self, "names", names)
        if not (np.all(np.isfinite(self.mean)) and np.all(np.isfinite(self.standard_errors))
                and math.isfinite(self.expected_squared_error)):
            raise ValueError(f"vector mean estimate of {self.spec.mechanism} is not finite: the bounds are too wide "
                             "for float64; rescale the values")
        if not np.all(self.standard_errors > 0):
            raise ValueError(f"vector mean estimate of {self.spec.mechanism}: a standard error is not positive, "
                             "which would give a zero-width interval; the bounds are too narrow for float64")

    def __eq__(self, other: object) -> bool:
        """Equal estimates: the same numbers from the same spec (names are labels, not compared)."""
        if not isinstance(other, VectorMeanEstimate):
            return NotImplemented
        a, b = self.n_per_coordinate, other.n_per_coordinate
        counts = (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
        return bool(np.array_equal(self.mean, other.mean) and np.array_equal(self.standard_errors, other.standard_errors)
                    and counts and (self.expected_squared_error, self.n_reports, self.epsilon, self.spec, self.dim,
                                    self.k) == (other.expected_squared_error, other.n_reports, other.epsilon,
                                                other.spec, other.dim, other.k))

    __hash__ = None  # type: ignore[assignment]

    @property
    def mechanism(self) -> str:
        """Name of the mechanism that produced the reports (``spec.mechanism``)."""
        return self.spec.mechanism

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Per-coordinate normal-approximation intervals ``mean ± z·standard_errors`` (arrays ``low, high``).

        Each coordinate's estimate is a mean of independent, bounded per-report estimates, so the normal
        approximation is accurate once each coordinate has more than a few hundred reports. The intervals
        hold at ``level`` one coordinate at a time, not simultaneously (for all ``dim`` at once use
        ``level = 1 - (1 - level)/dim``, Bonferroni).
        """
        z = normal_quantile(level)
        return ConfidenceInterval(self.mean - z * self.standard_errors, self.mean + z * self.standard_errors)

    def coordinates(self) -> dict:
        """Each coordinate's estimate as a :class:`~ldpnum.MeanEstimate`, keyed by its name (or index).

        Examples
        --------
        >>> import numpy as np, ldpnum as ldp
        >>> m = ldp.SampledDimensions("duchi", 2.0, [(0, 1), (0, 10)])
        >>> est = m.estimate_mean(m.privatize(np.full((20_000, 2), [0.5, 5.0]), rng=0), names=["a", "b"])
        >>> list(est.coordinates()), bool(abs(est.coordinates()["b"].value - 5) < 0.5)
        (['a', 'b'], True)
        """
        from .._results import MeanEstimate

        labels = self.names if self.names is not None else tuple(range(self.dim))
        counts = self.n_per_coordinate if self.n_per_coordinate is not None else np.full(self.dim, self.n_reports)
        return {label: MeanEstimate(float(self.mean[j]), float(self.standard_errors[j]), int(counts[j]),
                                    self.epsilon, self.spec, name=None if self.names is None else str(label))
                for j, label in enumerate(labels)}

    def _index(self):
        import pandas as pd

        if self.names is not None:
            return pd.Index(self.names, name="coordinate")
        return pd.RangeIndex(self.dim, name="coordinate")

    def to_series(self) -> "pd.Series":
        """The mean of each coordinate as a pandas Series indexed by coordinate (names when given)."""
        import pandas as pd

        return pd.Series(self.mean, index=self._index(), name="mean")

    def to_frame(self) -> "pd.DataFrame":
        """One row per coordinate: ``mean``, ``standard_error`` and ``n_reports`` behind it."""
        import pandas as pd

        counts = self.n_per_coordinate if self.n_per_coordinate is not None else np.full(self.dim, self.n_reports)
        return pd.DataFrame({"mean": self.mean, "standard_error": self.standard_errors,
                             "n_reports": np.asarray(counts, dtype=np.int64)}, index=self._index())

    def __str__(self) -> str:
        return (f"mean {_preview(self.mean)} (SE {_preview(self.standard_errors, 3)}; n={self.n_reports}, "
                f"dim={self.dim}, epsilon={self.epsilon:g}, {self.spec.mechanism}{self._shuffle_note()})")

    def __repr__(self) -> str:
        k = "" if self.k is None else f", k={self.k}"
        return (f"VectorMeanEstimate(mean={_preview(self.mean)}, standard_errors={_preview(self.standard_errors, 3)}, "
                f"n_reports={self.n_reports}, dim={self.dim}{k}, mechanism={self.spec.mechanism!r}, "
                f"epsilon={_g(self.epsilon)}{self._shuffle_note()})")

    def _repr_html_(self) -> str:
        lo, hi = (np.asarray(v) for v in self.confidence_interval(0.95))
        labels = self.names if self.names is not None else [str(j) for j in range(self.dim)]
        rows: list = [("dimension", str(self.dim)), ("expected squared error", _g(self.expected_squared_error, 4))]
        if self.k is not None:
            rows.append(("coordinates per report (k)", str(self.k)))
        rows += _mechanism_rows(self.spec, self.epsilon, self.n_reports, self.shuffle)
        shown = list(range(min(self.dim, 20)))
        rows += [(f"{labels[j]}", f"{_g(self.mean[j])} ± {_g(self.standard_errors[j], 3)} "
                  f"[{_g(lo[j])}, {_g(hi[j])}]") for j in shown]
        if self.dim > len(shown):
            rows.append(None)
        return _html_table("VectorMeanEstimate", rows)
