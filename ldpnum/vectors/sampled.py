r"""Sampled dimensions: each person reports ``k`` of the ``d`` coordinates, each with ε/k, through a 1-D mechanism.

Wang et al.'s answer to collecting ``d`` numerical attributes at once (their Algorithm 4, with the Piecewise or
Hybrid mechanism inside): instead of splitting ε over all ``d`` coordinates, each person picks ``k`` coordinates
uniformly at random (independently of the values) and reports each of them with ``ε/k`` through any of
ldpnum's mean mechanisms. By sequential composition the report is ``k · (ε/k) = ε``-LDP; the choice of
coordinates carries no information about the values. Per coordinate about ``n k/d`` people report, each
with the variance ``V(ε/k)`` of the inner mechanism, so each coordinate's mean has variance close to

.. math:: \frac{d}{k} \cdot \frac{V(\varepsilon/k)}{n},

which is the trade-off the choice of ``k`` balances: fewer coordinates per person means fewer reports per
coordinate but more budget for each.

Estimation. The aggregate is one histogram of inner codes per coordinate (``d × n_cells`` counts, whatever
the number of people). Coordinate ``j``'s mean is the inner mechanism's own estimate on its histogram, the
average of the per-report unbiased estimates of the ``n_j`` people who reported ``j``. Given ``n_j``, those
people are a uniformly random subset of everyone (the choice is independent of the values), so the
estimate is unbiased for the mean of all ``n`` people, as Wang et al.'s estimator ``(d/(k n)) Σ`` is, whose
scaling ``d/k`` this replaces by its realized value ``n/n_j`` (a lower variance: the randomness of
``n_j`` no longer enters). Its standard error is the inner estimator's: the per-report estimates' sample
standard deviation over ``sqrt(n_j)``, which covers the noise, the spread of the values and the sampling
of the ``n_j`` people (slightly conservatively: it ignores the finite-population correction ``1 - n_j/n``).
Distributions of one coordinate come the same way from its histogram (:meth:`SampledDimensions.estimate_distribution`).

Choice of ``k`` (default). For the Piecewise and Hybrid mechanisms, Wang et al.'s rule
``k = max(1, min(d, ⌊ε/2.5⌋))``. For other inner mechanisms the ``k`` in ``1..min(d, ⌈ε⌉)`` that minimizes
``(d/k) · V_max(ε/k)``, the worst-case per-report variance of the inner mechanism (computed from its plan)
scaled by the expected number of people per coordinate: the same criterion the paper's rule approximates,
evaluated exactly for the mechanism at hand. Beyond ``k = ⌈ε⌉`` each report has less than ε = 1 and the
variance of every mechanism grows about linearly in ``k`` (``V(ε/k) ∝ k²/ε²``), so larger ``k`` never wins.

Exact privacy. The inner mechanism is planned at ``ε' = ε/k`` (lowered by ulps if needed) so that
``E(ε')^k ≤ E(ε)`` in exact rationals, ``E`` the rigorous lower bound of ``e^ε`` every plan is rounded
against; each inner report has a ratio of at most ``E(ε')``, and the coordinates' choice does not depend on
the values, so every report's ratio is at most ``E(ε) < e^ε`` (and reaches it within about ``k 2^-49``).

Randomness per person: ``k`` words choose the coordinates (Floyd's algorithm with 48-bit multiply-shift picks,
the sampler of subset selection; exact probabilities in :func:`subset_probabilities`), then each chosen
coordinate's inner report reads its own inner words.

References
----------
N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu, "Collecting and Analyzing
Multidimensional Data with Local Differential Privacy", ICDE 2019 (sampling k of d attributes, Section IV,
and its choice of k). R. W. Floyd and J. Bentley, "Programming pearls: a sample of brilliance", CACM 30(9),
1987 (sampling k distinct of d with k draws).
"""

import dataclasses
import functools
import inspect
import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._kernels import client_vector
from .._kernels._jit import launch
from .._typing import ArrayLike
from .._validation import check_scalar
from .._results import DistributionEstimate
from ..aggregate import Aggregate, count_codes
from ..base import MeanOracle, lookup
from ..plans import exp_lower, floyd_distribution
from ..reports import Reports, code_dtype, register_code_check
from ..spec import Spec, check_spec
from ._base import VectorMechanism, check_names, check_report_variance, column_words
from ._result import VectorMeanEstimate

__all__ = ["SampledDimensions", "default_k", "split_epsilon", "subset_probabilities", "MAX_COUNTS"]

#: Largest aggregate: ``dim × inner n_cells`` counts (256 MB of int64).
MAX_COUNTS = 1 << 25

#: Inner mechanisms for which Wang et al. give the rule k = max(1, min(d, ⌊ε/2.5⌋)).
_PAPER_RULE = ("piecewise", "hybrid")


def _inner_class(mechanism: Any) -> type[MeanOracle]:
    """The class of a 1-D mean mechanism named ``mechanism`` (a name, alias or class)."""
    if isinstance(mechanism, str):
        cls = lookup(mechanism)
    elif isinstance(mechanism, type):
        cls = mechanism
    else:
        raise TypeError(f"mechanism must be a mechanism name (e.g. 'piecewise') or class; got "
                        f"{type(mechanism).__name__} {mechanism!r}")
    if (not issubclass(cls, MeanOracle) or getattr(cls, "input_kind", "values") != "values"
            or "bounds" not in inspect.signature(cls).parameters or cls.name is None):
        raise ValueError(f"mechanism must be a registered mean mechanism of bounded numbers (e.g. 'piecewise', "
                         f"'hybrid', 'duchi', 'stochastic_rounding', 'square_wave'); got {cls.__name__}")
    return cls


def split_epsilon(epsilon: float, k: int) -> float:
    """The ε' of each of ``k`` reports: ``ε/k``, lowered by ulps until ``E(ε')^k ≤ E(ε)`` exactly.

    ``E`` is the rigorous lower bound of ``exp`` that plans are rounded against, so the composition stays within ε.
    """
    total = exp_lower(epsilon)
    each = epsilon / k
    while exp_lower(each) ** k > total:
        each = math.nextafter(each, 0.0)
    return each


@functools.lru_cache(maxsize=256)
def _unit_mechanism(name: str, epsilon: float, params: tuple) -> MeanOracle:
    """The registered mechanism ``name`` on the unit interval (cached: the default-k search builds several)."""
    return _inner_class(name)(epsilon=epsilon, bounds=(0.0, 1.0), **dict(params))


def default_k(mechanism: Any, epsilon: float, dim: int, params: dict | None = None) -> int:
    """The default number of coordinates each person reports (see the module docstring).

    Examples
    --------
    >>> default_k("piecewise", 8.0, 10), default_k("hybrid", 1.0, 10)
    (3, 1)
    >>> default_k("duchi", 8.0, 10) > 1
    True
    """
    cls = _inner_class(mechanism)
    if cls.name in _PAPER_RULE:
        return max(1, min(dim, math.floor(epsilon / 2.5)))
    frozen = tuple(sorted((params or {}).items()))
    best_k, best = 1, math.inf
    for k in range(1, min(dim, max(1, math.ceil(epsilon))) + 1):
        cost = dim / k * _unit_mechanism(str(cls.name), split_epsilon(epsilon, k), frozen).worst_case_variance
        if cost < best:
            best_k, best = k, cost
    return best_k


def subset_probabilities(dim: int, k: int) -> dict[tuple[int, ...], Fraction]:
    """Exact probability of each sorted ``k``-subset of ``range(dim)`` under the kernel's draws (small ``dim``).

    The coordinates are chosen by Floyd's algorithm with 48-bit picks, the sampler of subset selection, so
    this is subset selection's exact distribution (:mod:`ldpnum.frequency.subset`) keyed by sorted tuples.
    """
    return {tuple(j for j in range(dim) if mask >> j & 1): p for mask, p in floyd_distribution(dim, k).items()}


def _same_plan(a: Any, b: Any) -> bool:
    """Whether two integer plans are equal (dataclasses whose fields may be arrays)."""
    if dataclasses.is_dataclass(a) and type(a) is type(b):
        return all(np.array_equal(getattr(a, f.name), getattr(b, f.name)) if isinstance(getattr(a, f.name), np.ndarray)
                   else _same_plan(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return bool(a == b)


def _check_codes(codes: np.ndarray, spec: Spec) -> np.ndarray:
    """Validate reports of sampled dimensions: ``(n, k)`` codes ``coordinate · n_inner + inner code``.

    The codes must be in the alphabet, the coordinates strictly increasing along each row (the canonical wire order).
    """
    k, dim = int(spec.get("k")), len(spec.get("bounds"))
    n_inner = spec.n_cells // dim
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        raise TypeError(f"codes must be integers; got dtype {codes.dtype}")
    if codes.ndim != 2 or codes.shape[1] != k:
        raise ValueError(f"reports of sampled dimensions with k = {k} must have shape (n, {k}); got {codes.shape}")
    bad: np.ndarray = np.flatnonzero(((codes < 0) | (codes >= spec.n_cells)).any(axis=1))
    if bad.size:
        raise ValueError(f"codes has {bad.size} report(s) outside the output alphabet 0..{spec.n_cells - 1}, first "
                         f"at index {bad[0]}")
    if k > 1 and codes.size:
        coords = codes.astype(np.int64) // n_inner
        bad = np.flatnonzero((np.diff(coords, axis=1) <= 0).any(axis=1))
        if bad.size:
            raise ValueError(f"codes has {bad.size} report(s) whose coordinates are not strictly increasing (repeated "
                             f"or out of the canonical order), first at index {bad[0]}")
    return np.array(codes, dtype=code_dtype(spec.n_cells), order="C", copy=True)


class SampledDimensions(VectorMechanism):
    """Each person reports ``k`` of the ``dim`` coordinates, each with ``ε/k``, through a 1-D mean mechanism.

    Parameters
    ----------
    mechanism : str or type
        The inner mechanism: a registered mean mechanism of bounded numbers, by name, alias or class
        (``"piecewise"``, ``"hybrid"``, ``"duchi"``, ``"stochastic_rounding"``, ``"square_wave"``,
        ``"general_wave"``, ``"laplace"``).
    epsilon : float
        Privacy parameter in (0, 20] of the whole report.
    bounds : sequence of (float, float)
        Public range of each coordinate; ``dim = len(bounds)``.
    k : int, optional
        Coordinates per person, ``1 <= k <= dim`` (default: see :func:`default_k`).
    params : dict, optional
        Further parameters of the inner mechanism (``{"n_cells": 256}``, ``{"shape": "triangle"}``).

    Notes
    -----
    Each call of ``privatize`` on one person's vector is ε-LDP; estimators are post-processing. A report is
    one row of ``k`` codes ``coordinate · n_inner + inner code``, coordinates in increasing order; the
    aggregate holds ``dim × n_inner`` counts. See the module docstring for the estimator, its variance and
    the exact composition.

    References
    ----------
    N. Wang et al., "Collecting and Analyzing Multidimensional Data with Local Differential Privacy",
    ICDE 2019.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> X = np.random.default_rng(0).uniform(0, 1, (100_000, 4)) * [1, 10, 100, 1000]
    >>> m = ldp.SampledDimensions("piecewise", epsilon=4.0, bounds=[(0, 1), (0, 10), (0, 100), (0, 1000)])
    >>> m.k, m.inner.epsilon
    (1, 4.0)
    >>> agg = m.aggregate(m.privatize(X, rng=1))
    >>> est = m.estimate_mean(agg)
    >>> bool(np.all(np.abs(est.mean - X.mean(axis=0)) < 4 * est.standard_errors))
    True
    >>> bool(abs(m.estimate_distribution(agg, 2).quantile(0.5) - 50) < 10)
    True
    """

    name = "sampled_dimensions"
    aliases = ("sampled",)

    def __init__(self, mechanism: Any, epsilon: float, bounds: Any, *, k: int | None = None,
                 params: dict | None = None) -> None:
        super().__init__(epsilon, bounds)
        cls = _inner_class(mechanism)
        if params is None:
            params = {}
        if not isinstance(params, dict) or not all(isinstance(key, str) for key in params):
            raise TypeError(f"params must be a dict of the inner mechanism's keyword parameters; got {params!r}")
        if "epsilon" in params or "bounds" in params:
            raise ValueError("params must not hold epsilon or bounds: they are SampledDimensions' own")
        dim = self.dim
        with np.errstate(all="ignore"):  # a degenerate plan (tiny ε) is refused below, naming ε
            k = (default_k(cls, self._epsilon, dim, params) if k is None
                 else check_scalar(k, "k", int, low=1, high=dim))
            self._inner = cls(epsilon=split_epsilon(self._epsilon, k), bounds=(0.0, 1.0), **params)
        self._k = k
        self._cls = cls
        self._params = tuple(sorted(params.items()))
        inner_spec = self._inner.spec
        if inner_spec.get("packed_bits") is not None or self._inner.plan is None:
            raise ValueError(f"{cls.__name__} reports are not single codes; it cannot be the inner mechanism")
        if dim * self._inner.n_cells > MAX_COUNTS:
            raise ValueError(f"dim × n_cells = {dim} × {self._inner.n_cells} counts exceeds {MAX_COUNTS}: use fewer "
                             "coordinates or a coarser grid (params={'n_cells': ...})")
        # Estimates must be representable: at tiny ε the inner variance overflows whatever the bounds (blame ε),
        # with huge bounds the variance in data units does (blame those bounds); refused here, before any draw.
        with np.errstate(all="ignore"):
            unit_var = float(np.max(self._inner.variance(np.array([0.0, 0.5, 1.0]))))
        with np.errstate(all="ignore"):
            codes = np.asarray(self._inner.code_estimates, dtype=np.float64)
            extent = float(np.max(np.abs(codes))) if codes.size else 1.0
        check_report_variance(f"SampledDimensions({cls.__name__}, k={k})", self._epsilon, unit_var, self._widths,
                              self._vector_bounds, what=f"one {cls.__name__} report at epsilon/k = {self._inner.epsilon:g}",
                              unit_extent=extent if math.isfinite(extent) else math.inf)
        self._coordinate_mechanisms: dict[int, MeanOracle] = {}
        self.coordinate_mechanism(0)  # the inner plan must not depend on the bounds (checked once here)

    # -- parameters -----------------------------------------------------------------------------------------
    @property
    def k(self) -> int:
        """Coordinates each person reports."""
        return self._k

    @property
    def inner(self) -> MeanOracle:
        """The inner mechanism on the unit interval, planned at the per-report ε' (:func:`split_epsilon`)."""
        return self._inner

    @property
    def per_report_epsilon(self) -> float:
        """ε' of each of the ``k`` inner reports (``k · ε' ≤ ε``)."""
        return self._inner.epsilon

    @property
    def n_cells(self) -> int:
        """Counts in the aggregate: ``dim × inner.n_cells``."""
        return self.dim * self._inner.n_cells

    @property
    def words_per_record(self) -> int:
        """``k`` words choose the coordinates, then each inner report reads its own words."""
        return self._k * (1 + self._inner.words_per_record)

    @property
    def plan(self) -> Any:
        """The inner mechanism's integer plan (every inner report uses it)."""
        return self._inner.plan

    def _spec_params(self):
        return {"bounds": self._vector_bounds, "inner": self._cls.name, "k": self._k, "params": self._params}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.get("inner"), epsilon=spec.epsilon, bounds=spec.get("bounds"), k=spec.get("k"),
                   params={key: value for key, value in (spec.get("params") or ())})

    def __repr__(self) -> str:
        extra = f", params={dict(self._params)!r}" if self._params else ""
        return (f"SampledDimensions({self._cls.name!r}, epsilon={self._epsilon!r}, dim={self.dim}, k={self._k}"
                f"{extra})")

    def coordinate_mechanism(self, j: int) -> MeanOracle:
        """The inner mechanism with coordinate ``j``'s bounds, whose estimators apply to ``j``'s histogram.

        Its codes mean what the reports' inner codes for ``j`` mean (same plan).
        """
        j = check_scalar(j, "coordinate", int, low=0, high=self.dim - 1)
        m = self._coordinate_mechanisms.get(j)
        if m is None:
            m = self._cls(epsilon=self._inner.epsilon, bounds=self._vector_bounds[j], **dict(self._params))
            if not _same_plan(m.plan, self._inner.plan) or m.n_cells != self._inner.n_cells:
                raise ValueError(f"{self._cls.__name__}'s plan depends on its bounds: it cannot be the inner mechanism")
            self._coordinate_mechanisms[j] = m
        return m

    # -- client side ------------------------------------------------------------------------------------------
    def _allocate_reports(self, n):
        return np.empty((n, self._k), dtype=self._report_dtype())

    def _run_kernel(self, values, words, out):
        b, k, c = values.shape[0], self._k, self.words_per_record
        coords = np.empty((b, k), dtype=np.int64)
        units = np.empty(b * k, dtype=np.float64)
        launch(client_vector.sample_coordinates, values, self._lows, self._inv_ranges, k, c, words, coords, units)
        units.flags.writeable = False  # the inner kernel sees read-only values, as from its own privatize
        inner_words = np.ascontiguousarray(words.reshape(b, c)[:, k:]).reshape(-1)
        inner_out = self._inner._allocate_reports(b * k)
        self._inner._run_kernel(units, inner_words, inner_out)
        launch(client_vector.combine_codes, coords, inner_out, self._inner.n_cells, out)

    def coordinates(self, n: int, rng: Any = None) -> np.ndarray:
        """The ``(n, k)`` coordinates that ``privatize`` with this ``rng`` gives ``n`` people, whatever their values.

        The choice reads only the first ``k`` words of each person.
        """
        n = check_scalar(n, "n", int, low=0, high=2**62)
        zeros = np.zeros((n, self.dim))
        zeros += self._lows
        r = self.privatize(zeros, rng=rng)
        return np.asarray(r.codes, dtype=np.int64) // self._inner.n_cells

    # -- reports in a table column: the k codes of a row as one 64-bit mixed-radix code ----------------------
    def check_column_codes(self, where: str = "a column") -> None:
        """A report (``k`` codes, each below ``R = n_cells``) fits one 64-bit column code when ``R^k ≤ 2^64``."""
        if self.n_cells ** self._k > 1 << 64:
            raise TypeError(f"SampledDimensions reports are {self._k} codes of {self.n_cells} values each "
                            f"({self._k * math.log2(self.n_cells):.0f} bits per person), more than {where} of 64-bit "
                            "codes holds; keep the Reports from privatize, or report fewer coordinates (k)")

    def column_codes(self, reports: Reports) -> np.ndarray:
        """Each report as one uint64: ``Σ_i code_i · R^i`` over its ``k`` codes (``R = n_cells``).

        Examples
        --------
        >>> import numpy as np, ldpnum as ldp
        >>> m = ldp.SampledDimensions("duchi", 4.0, [(0, 1)] * 3, k=2)
        >>> r = m.privatize(np.full((5, 3), 0.5), rng=0)
        >>> m.reports_from_column(m.column_codes(r)) == r
        True
        """
        self.check_column_codes()
        check_spec(self.spec, reports.spec, "reports")
        codes = np.asarray(reports.codes, dtype=np.uint64).reshape(len(reports), self._k)
        radix, out = np.uint64(self.n_cells), np.zeros(len(reports), dtype=np.uint64)
        for i in range(self._k - 1, -1, -1):
            out = out * radix + codes[:, i]
        return out

    def reports_from_column(self, codes: ArrayLike) -> Reports:
        """The Reports behind column codes (:meth:`column_codes`'s inverse).

        Codes that are not ``k`` distinct coordinates in increasing order, each with a code of the inner alphabet, raise
        ValueError.
        """
        self.check_column_codes()
        words = column_words(codes, "SampledDimensions")
        radix = np.uint64(self.n_cells)
        if self.n_cells ** self._k < 1 << 64 and words.size and int(words.max()) >= self.n_cells ** self._k:
            bad = np.flatnonzero(words >= np.uint64(self.n_cells ** self._k))
            raise ValueError(f"{bad.size} column code(s) exceed the {self._k}-code alphabet, first at index {bad[0]} "
                             f"({int(words[bad[0]])})")
        rows = np.empty((words.size, self._k), dtype=np.uint64)
        for i in range(self._k):
            rows[:, i] = words % radix
            words = words // radix
        return Reports(rows.astype(self._report_dtype()), self.spec)

    # -- server side ------------------------------------------------------------------------------------------
    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        """Each report adds one count to each of ``k`` distinct coordinates' histograms."""
        k, dim = int(spec.get("k")), len(spec.get("bounds"))
        if n_reports is None:
            if total:
                raise ValueError(f"aggregate of {spec}: n_reports is required (each report adds {k} counts)")
            return 0
        if total != k * n_reports:
            raise ValueError(f"aggregate of {spec}: counts sum to {total} but {n_reports} reports of k = {k} "
                             f"coordinates add {k * n_reports}")
        per = counts.reshape(dim, -1).sum(axis=1)
        if per.size and per.max() > n_reports:
            j = int(np.argmax(per))
            raise ValueError(f"aggregate of {spec}: coordinate {j} has {per[j]} counts, more than n_reports "
                             f"({n_reports}); a report adds at most one to each coordinate")
        return n_reports

    def aggregate(self, reports: Reports) -> Aggregate:
        """Histogram of each coordinate's inner codes: ``dim × n_inner`` counts plus the number of reports."""
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        return Aggregate(count_codes(reports.codes.reshape(-1), self.n_cells), self.spec, len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)

    def coordinate_aggregate(self, data: Reports | Aggregate, j: int) -> Aggregate:
        """Coordinate ``j``'s histogram as an aggregate of :meth:`coordinate_mechanism` ``(j)``."""
        agg = self._as_aggregate(data)
        m = self.coordinate_mechanism(j)
        n_inner = self._inner.n_cells
        return Aggregate(agg.counts[j * n_inner:(j + 1) * n_inner], m.spec)

    def estimate_mean(self, data: Reports | Aggregate, *, names: Any = None) -> VectorMeanEstimate:
        """Unbiased estimate of the mean vector: each coordinate by the inner estimator on its histogram.

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate.
        names : sequence of str, optional
            Coordinate names for the result.

        Returns
        -------
        VectorMeanEstimate
            ``mean``, ``standard_errors`` (the inner estimator's, from the ``n_j`` reports of each coordinate),
            ``expected_squared_error = Σ_j standard_errors[j]²`` and ``n_per_coordinate``.

        Raises
        ------
        ValueError
            For no reports, or a coordinate nobody reported (too few people for ``dim/k``).
        """
        names = check_names(names, self.dim)
        agg = self._as_aggregate(data)
        n = agg.n_reports
        if n == 0:
            raise ValueError("estimate_mean: no reports")
        per = agg.counts.reshape(self.dim, -1).sum(axis=1)
        if per.min() == 0:
            empty = np.flatnonzero(per == 0)
            raise ValueError(f"estimate_mean: {empty.size} coordinate(s) have no reports, first {empty[0]} (n = {n} "
                             f"people, each reporting k = {self._k} of {self.dim}); collect more reports")
        mean = np.empty(self.dim)
        se = np.empty(self.dim)
        for j in range(self.dim):
            est = self.coordinate_mechanism(j).estimate_mean(self.coordinate_aggregate(agg, j))
            mean[j], se[j] = est.value, est.standard_error
        return VectorMeanEstimate(mean=mean, standard_errors=se, expected_squared_error=float(np.sum(se * se)),
                                  n_reports=n, epsilon=self._epsilon, spec=agg.spec, dim=self.dim, k=self._k,
                                  n_per_coordinate=per, names=names)

    def estimate_distribution(self, data: Reports | Aggregate, coordinate: int, **options: Any) -> DistributionEstimate:
        """The distribution of one coordinate's values, by the inner mechanism's estimator on its histogram.

        Only the ``n_j`` people who reported the coordinate contribute; they are a uniformly random subset
        of everyone, so the estimate is that of the whole population's distribution. ``options``
        (``n_bins``, ``method``, ...) go to the inner ``estimate_distribution``.

        Raises
        ------
        TypeError
            If the inner mechanism estimates no distribution (two-output mechanisms such as ``duchi``).
        """
        m = self.coordinate_mechanism(coordinate)
        estimate = getattr(m, "estimate_distribution", None)
        if estimate is None:
            raise TypeError(f"{type(m).__name__} estimates means only; choose an inner mechanism with a "
                            "distribution estimator (piecewise, square_wave, general_wave, hybrid, laplace)")
        return estimate(self.coordinate_aggregate(data, coordinate), **options)


register_code_check(SampledDimensions.name, _check_codes)
