"""Shared shape of the categorical frequency oracles: validation, support probabilities, variances.

The estimator of a *pure* frequency oracle (Wang et al., USENIX Security 2017) is in
:mod:`ldpnum.estimation.frequency`; each oracle provides its support probabilities ``p*`` and ``q*``
(from its integer plan) and its support counts.
"""

import copy
import dataclasses
from typing import Any, ClassVar

import numpy as np

from ..reports import Reports
from ..aggregate import Aggregate
from .._results import FrequencyEstimate
from .._typing import ArrayLike, NDArray, SeedLike
from .._validation import (check_categories, check_category_labels, check_labelled_categories, check_choice, check_epsilon,
                           check_k, prepared)
from ..estimation.frequency import estimate_frequencies, support_variance
from ..estimation.likelihood import check_method, frequencies_mle
from ..estimation.postprocess import POSTPROCESS
from ..base import Mechanism

__all__ = ["FrequencyOracle"]


class FrequencyOracle(Mechanism):
    """Base class of the categorical frequency oracles over codes ``0..k-1``.

    An oracle may carry declared **categories** (:meth:`with_categories`, or ``categories=`` where the
    constructor takes it): public labels, str or int, ``categories[i]`` being code ``i``. It then takes
    labels instead of codes, records the categories in its spec, and its estimates are indexed by them.
    """

    #: Frequency oracles take declared categories (:meth:`with_categories`).
    takes_categories: ClassVar[bool] = True
    _categories: tuple | None = None

    def __init__(self, epsilon: float, k: int | None, categories: Any = None) -> None:
        self._epsilon = check_epsilon(epsilon)
        if categories is not None:
            self._categories = check_category_labels(categories, None if k is None else check_k(k))
            k = len(self._categories)
        elif k is None:
            raise TypeError(f"{type(self).__name__} needs k (the number of categories) or categories=[...]")
        self._k = check_k(k)
        self._bounds = None

    @property
    def k(self) -> int:
        """Number of categories: values are codes ``0..k-1``."""
        return self._k

    @property
    def categories(self) -> tuple | None:
        """The declared categories (``categories[i]`` is code ``i``), or None: the values are codes."""
        return self._categories

    def with_categories(self, categories: Any) -> "FrequencyOracle":
        """The same oracle over declared, public ``categories`` (str or int labels; ``categories[i]`` is code ``i``).

        The result takes labels instead of codes (a text or pandas ``category`` column; values outside the
        categories raise, or are reported uniformly at random with ``unknown="uniform"``), records the
        categories in its :attr:`spec` (so report columns and files carry them) and labels its estimates.
        The categories must be declared, not read off the data: which values occur would leak. Their number
        must equal :attr:`k`. The randomization is the same: reports of a label equal those of its code.

        Examples
        --------
        >>> import ldpnum as ldp
        >>> grr = ldp.GRR(2.0, k=3).with_categories(["tea", "coffee", "water"])
        >>> r = grr.privatize(["tea", "water", "tea"], rng=0)
        >>> grr.estimate_frequencies(r).to_series().index.tolist()
        ['tea', 'coffee', 'water']
        """
        cats = check_category_labels(categories, self._k)
        new = copy.copy(self)
        new.__dict__.pop("_spec", None)
        new._categories = cats
        return new

    def _make_spec(self):
        spec = super()._make_spec()
        if self._categories is None:
            return spec
        return dataclasses.replace(spec, params=spec.params + (("categories", self._categories),))

    def __repr__(self) -> str:
        text = super().__repr__()
        return text if self._categories is None else f"{text[:-1]}, categories={list(self._categories)!r})"

    def _labelled(self, est: FrequencyEstimate) -> FrequencyEstimate:
        """``est`` indexed by the declared categories (entry codes, ``0..k-1`` or chosen ones, become labels)."""
        if self._categories is None:
            return est
        codes = np.arange(self._k) if est.categories is None else np.asarray(est.categories, dtype=np.int64)
        return dataclasses.replace(est, categories=np.array(self._categories, dtype=object)[codes])

    def _spec_params(self):
        return {"k": self._k}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.epsilon, spec.get("k"))

    def privatize(  # type: ignore[override]  # categories: ``unknown`` instead of ``out_of_range``
            self, x: ArrayLike, *, rng: SeedLike = None, nan_policy: str = "raise",
            fill_value: int | None = None, unknown: str = "raise") -> Reports:
        """Randomize each person's category; return their :class:`~ldpnum.Reports`.

        Parameters
        ----------
        x : array_like of int, shape (n,)
            One category code in ``0..k-1`` per person (integer dtypes, including pandas nullable ``Int64``).
            Floats are refused, even when integral.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness. Anything else: reproducible simulation.
        nan_policy : {"raise", "impute"}, optional
            Missing values raise (default), or are replaced by the public category ``fill_value``.
        unknown : {"raise", "uniform"}, optional
            Codes outside ``[0, k)`` raise (default), or are reported as a uniformly random output.

        Notes
        -----
        Each call on one person's value is ε-LDP; estimators are post-processing. Everything is validated
        before the first random word is drawn.
        """
        values = self.prepare_values(x, nan_policy=nan_policy, fill_value=fill_value, unknown=unknown)
        return self._randomize(values, rng)

    # Categories take ``unknown`` where numbers take ``out_of_range``: codes are never clipped.
    def prepare_values(  # type: ignore[override]
            self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise", fill_value: int | None = None,
            unknown: str = "raise") -> NDArray[np.int64]:
        """Validate one column of category codes for this oracle, without drawing anything.

        As :meth:`ldpnum.Mechanism.prepare_values`, for categories: integer codes in ``0..k-1`` (floats
        are refused even when whole), returned as a read-only C-contiguous int64 array; codes outside
        ``[0, k)`` raise, or with ``unknown="uniform"`` become ``-1`` (reported uniformly at random).
        ``name`` is how messages refer to the values (default ``"x"``).

        With declared :attr:`categories`, the values are their labels (text, int, or a pandas ``category``
        column matched by value) and ``fill_value`` is a label.
        """
        if self._categories is not None:
            return prepared(check_labelled_categories, x, self._categories, name=name, nan_policy=nan_policy,
                            fill_value=fill_value, unknown=unknown)
        return prepared(check_categories, x, self._k, name=name, nan_policy=nan_policy, fill_value=fill_value,
                        unknown=unknown)

    # -- the pure-protocol estimator ---------------------------------------------------------------
    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: probability that a report supports the person's own / another given category."""
        raise NotImplementedError

    def _support_counts(self, agg):
        """``I_v`` for every category from the aggregate (the aggregate's counts, for most oracles)."""
        return agg.counts.astype(np.float64)

    def variance(self, frequency: ArrayLike = 0.0) -> Any:
        """Variance of one report's contribution to the frequency estimate of a category of frequency ``frequency``.

        ``frequency`` is the true one: ``[q*(1 - q*) + f (p* - q*)(1 - p* - q*)] / (p* - q*)²``.

        ``variance(f) / n`` is the variance of the estimated frequency from ``n`` reports; ``variance(0)``
        is Wang et al.'s table entry ``Var[c̃(i)]/n``.
        """
        f = np.asarray(frequency, dtype=np.float64)
        if not np.all((f >= 0) & (f <= 1)):
            raise ValueError("frequency must lie in [0, 1]")
        p, q = self.support_probabilities
        out = support_variance(p, q, f)
        return float(out) if out.ndim == 0 else out

    @property
    def worst_case_variance(self) -> float:
        """Largest per-report variance over true frequencies in [0, 1]."""
        return max(self.variance(0.0), self.variance(1.0))

    #: The ``method`` values :meth:`estimate_frequencies` takes ("mle" where the likelihood is implemented).
    frequency_methods: ClassVar[tuple[str, ...]] = ("unbiased",)

    def estimate_frequencies(self, data: Reports | Aggregate, *, postprocess: str = "none",
                             method: str = "unbiased") -> FrequencyEstimate:
        """Estimate of how many people hold each category: unbiased (default) or maximum likelihood.

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate.
        postprocess : {"none", "norm-sub", "simplex", "clip"}, optional
            ``"none"`` keeps the unbiased estimate (which can be negative); ``"norm-sub"`` zeroes negatives
            and shifts the rest to sum to 1 (iterated, Wang et al. NDSS 2020); ``"simplex"`` is the Euclidean
            projection onto the probability simplex (the same as Norm-Sub unless mass must be added, when
            the projection can revive slightly negative entries); ``"clip"`` clips each frequency to [0, 1].
            Post-processing costs no privacy but trades bias for variance; standard errors always describe
            the unbiased estimate.
        method : {"unbiased", "mle"}, optional
            ``"unbiased"`` (default): the estimate above. ``"mle"`` (:class:`ldpnum.GRR`): the constrained
            maximum-likelihood frequencies on the simplex, with per-category profile-likelihood intervals
            from ``confidence_interval`` (:mod:`ldpnum.estimation.likelihood`); takes no ``postprocess``.

        Returns
        -------
        FrequencyEstimate

        Raises
        ------
        ValueError
            For an unknown ``postprocess`` or ``method``, a ``method`` this oracle does not offer, or
            ``method="mle"`` with a ``postprocess`` other than ``"none"``.
        """
        check_method(method, self.frequency_methods, mechanism=self.name)
        check_choice(postprocess, "postprocess", POSTPROCESS)
        if method == "mle" and postprocess != "none":
            raise ValueError(f"postprocess must be 'none' with method='mle' (the MLE is already on the simplex); "
                             f"got {postprocess!r}")
        agg = self._as_aggregate(data)
        p, q = self.support_probabilities
        if method == "mle":
            return self._labelled(frequencies_mle(agg, p, q, epsilon=self._epsilon))
        return self._labelled(estimate_frequencies(self._support_counts(agg), agg.n_reports, p, q,
                                                   postprocess=postprocess, epsilon=self._epsilon, spec=agg.spec))

    def empty_aggregate(self) -> Aggregate:
        return Aggregate.empty(self.spec)

