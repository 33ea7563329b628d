r"""The ``.ldp`` accessors: privatize pandas columns and estimate from report columns.

``import ldpnum`` registers an accessor named ``ldp`` on :class:`pandas.Series` and :class:`pandas.DataFrame`
through pandas' public extension API. The accessors hold no state and no math: they call the table-collection
layer :mod:`ldpnum.collect` (which the command line, Dask and other engines call too, per Arrow batch or
partition), and that delegates to the mechanisms and estimators. Its functions on pandas objects are
re-exported here: :func:`privatize_series`, :func:`privatize_frame`, :func:`reports_of`,
:func:`aggregate_series`, :func:`concat`, :func:`subset` and :func:`describe_aggregates`.

``s.ldp.privatize(mech)`` gives a Series of report codes (same index and name), ``df.ldp.privatize({column:
mech, ...}, strategy=...)`` a DataFrame of report columns only; each column's :class:`~ldpnum.Spec` and the
per-row ε are recorded in ``attrs["ldpnum"]``, which travels through selection, ``copy`` and Parquet files. On
a report column, ``.ldp.aggregate()``, ``.ldp.estimate_mean()``, ``.ldp.estimate_distribution()``,
``.ldp.estimate_frequencies()``, ``.ldp.quantile(q)``, ``.ldp.range(lo, hi)`` read the spec from the column;
``df.ldp.describe()`` tabulates every report column. The guide (``docs/guides/pandas.md``, "pandas: the
``.ldp`` accessor" on the documentation site) explains strategies, random streams, groups and integrity.

Examples
--------
>>> import numpy as np, pandas as pd, ldpnum as ldp
>>> df = pd.DataFrame({"age": [34.0, 51.0, 27.0, 62.0], "income": [41e3, 58e3, 23e3, 90e3]})
>>> reports = df.ldp.privatize({"age": ldp.SquareWave(epsilon=1.0, bounds=(0, 100)),
...                             "income": ldp.Piecewise(epsilon=1.0, bounds=(0, 2e5))},
...                            rng=0, strategy="one-column-per-row")
>>> reports.ldp.epsilon_per_row
1.0
>>> int(reports.notna().sum(axis=1).max())   # each row reported one column
1
>>> reports["income"].ldp.spec.mechanism
'piecewise'
"""

from collections.abc import Mapping
from typing import Any

import pandas as pd

from .spec import Spec
from .reports import Reports
from .aggregate import Aggregate
from ._frame import budget_text, column_sources, column_specs, frame_info, spec_for
from .collect import (STRATEGIES, aggregate_frame, aggregate_series, check_describe_method, check_no_other_arguments,
                      column_subject, concat, describe_aggregates, describe_frame, estimate_mean_named, estimator,
                      is_real_dtype, is_text_dtype, mechanism_of, privatize_frame, privatize_series, quantiles_named,
                      range_query, report_label, reports_of, run_sets, subset)
from ._results import DistributionEstimate, FrequencyEstimate, named
from .heavy import HeavyHittersEstimate
from ._typing import ArrayLike, SeedLike
from ._validation import dtype_hint
from ._docstrings import shares_docs
from .mechanisms import Mechanism

__all__ = ["STRATEGIES", "privatize_series", "privatize_frame", "reports_of", "aggregate_series", "concat",
           "describe_aggregates", "subset", "SeriesAccessor", "DataFrameAccessor"]


# -- the accessors ---------------------------------------------------------------------------------------

@pd.api.extensions.register_series_accessor("ldp")
class SeriesAccessor:
    """``s.ldp``: privatize a column of values, or estimate from a column of reports.

    Construction is O(1) and the accessor keeps no state besides the Series (pandas rebuilds it on every
    access). It exists only for Series that can be values or reports: real-number and bool dtypes.

    Examples
    --------
    >>> import numpy as np, pandas as pd, ldpnum as ldp
    >>> x = pd.Series(np.random.default_rng(1).uniform(0, 10, 20_000), name="x")
    >>> r = x.ldp.privatize(ldp.Piecewise(epsilon=2.0, bounds=(0, 10)), rng=0)
    >>> est = r.ldp.estimate_mean()
    >>> bool(abs(est.value - x.mean()) < 5 * est.standard_error)
    True
    """

    def __init__(self, obj):
        self._validate(obj)
        self._obj = obj

    @staticmethod
    def _validate(obj):
        dtype = obj.dtype
        if not (is_real_dtype(dtype) or pd.api.types.is_bool_dtype(dtype) or is_text_dtype(dtype)
                or isinstance(dtype, pd.CategoricalDtype)):
            raise AttributeError(f"the .ldp accessor works on Series of real numbers or bools (values), of "
                                 f"categories or text (frequency oracles, heavy hitters) and of integer codes "
                                 f"(reports); "
                                 f"{column_subject(obj.name)} has dtype {dtype}: {dtype_hint(dtype)}")

    # -- privatizing
    @shares_docs(privatize_series, sections=["Raises", "Notes"],
                 parameters=["rng", "nan_policy", "fill_value", "ledger", "people", "label", "shuffled",
                             "shuffle_delta", "unknown", "keys", "round"])
    def privatize(self, mechanism: Any, *, rng: SeedLike = None, nan_policy: str = "raise",
                  fill_value: float | None = None, ledger: Any = None, people: Any = None,
                  label: str | None = None, epsilon: float | None = None, bounds: Any = None,
                  task: str = "distribution", shuffled: bool = False, shuffle_delta: float = 1e-6,
                  unknown: str = "raise", keys: Any = None, round: int | None = None, **kwargs: Any) -> pd.Series:
        """Randomize each person's value: a new Series of report codes, same index and name, spec recorded.

        The column is one value per person. Every value is validated before the first random word is drawn;
        raw values never travel with the reports.

        Parameters
        ----------
        mechanism : ldpnum.Mechanism or "auto"
            The randomizer, e.g. ``ldp.SquareWave(epsilon=1.0, bounds=(0, 1440))`` for numbers, a frequency
            oracle (``ldp.GRR(epsilon, k)``) for categories, ``ldp.PEM(...)`` for text items. ``"auto"`` (with
            ``epsilon`` and ``bounds``) uses the mechanism :func:`ldpnum.recommend` picks for ``task`` at this
            column's length.
        epsilon, bounds, task : optional
            For ``mechanism="auto"`` only: the budget, the public range of the values and the task ("mean",
            "distribution", "quantiles" or "ranges").
        {parameters}

        Returns
        -------
        pandas.Series
            Report codes in the smallest unsigned dtype of the mechanism's alphabet; ``.ldp.spec`` and
            ``.ldp.epsilon_per_row`` read what was recorded (it travels through ``copy``, ``concat`` and
            Parquet files).

        Raises
        ------
        {Raises}

        Notes
        -----
        {Notes}

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> drinks = pd.CategoricalDtype(["tea", "coffee", "water"])
        >>> s = pd.Series(np.random.default_rng(0).choice(["tea", "coffee", "water"], 20_000), name="drink")
        >>> r = s.astype(drinks).ldp.privatize(ldp.GRR(epsilon=2.0, k=3), rng=1)
        >>> r.ldp.spec.get("categories")
        ('tea', 'coffee', 'water')
        >>> r.ldp.estimate_frequencies().to_series().round(1).to_dict()
        {'tea': 0.3, 'coffee': 0.3, 'water': 0.3}
        >>> age = pd.Series(np.random.default_rng(0).uniform(0, 100, 1000), name="age")
        >>> age.ldp.privatize("auto", epsilon=4.0, bounds=(0, 100), task="mean", rng=1).ldp.spec.mechanism
        'hybrid'
        """
        check_no_other_arguments("Series.ldp.privatize", kwargs)
        if isinstance(mechanism, str) and mechanism == "auto":
            if epsilon is None or bounds is None:
                raise ValueError("mechanism='auto' needs epsilon= and bounds= (the public range of the values)")
            from ._recommend import recommend

            mechanism = recommend(task, n=max(len(self._obj), 1), epsilon=epsilon, bounds=bounds).mechanism
        elif epsilon is not None or bounds is not None:
            raise ValueError("epsilon= and bounds= go with mechanism='auto'; a mechanism carries its own")
        return privatize_series(self._obj, mechanism, rng=rng, nan_policy=nan_policy, fill_value=fill_value,
                                ledger=ledger, people=people, label=label, shuffled=shuffled,
                                shuffle_delta=shuffle_delta, unknown=unknown, keys=keys, round=round)

    # -- what the column is
    @property
    def spec(self) -> Spec | None:
        """The :class:`~ldpnum.Spec` recorded for this report column (None for a column of values)."""
        return column_specs(self._obj).get(self._obj.name)

    @property
    def epsilon_per_row(self) -> float | None:
        """The total ε each row (person) spent on the collection the column comes from (None if unknown)."""
        info = frame_info(self._obj)
        return None if info is None else info.get("epsilon_per_row")

    def __repr__(self):
        spec = self.spec
        if spec is None:
            return f"<ldp accessor: {column_subject(self._obj.name)}, values (no ldpnum spec)>"
        budget = budget_text(frame_info(self._obj))
        return f"<ldp accessor: {column_subject(self._obj.name)}, reports of {spec}{'; ' + budget if budget else ''}>"

    # -- estimating
    def reports(self, spec: Spec | None = None) -> Reports:
        """The report column as :class:`~ldpnum.Reports` of the rows that reported it, checked against its spec.

        ``spec`` is for a column that carries no spec (e.g. read from a CSV file); it must equal the recorded one
        otherwise (:class:`~ldpnum.SpecMismatchError`). Missing cells are left out; see :func:`reports_of`.

        Examples
        --------
        >>> import pandas as pd, ldpnum as ldp
        >>> r = pd.Series([0.2, 0.8, 0.5], name="x").ldp.privatize(ldp.Duchi(1.0, (0, 1)), rng=0)
        >>> len(r.ldp.reports()), r.ldp.reports().spec == ldp.Duchi(1.0, (0, 1)).spec
        (3, True)
        """
        return reports_of(self._obj, spec)

    def aggregate(self, spec: Spec | None = None) -> Aggregate:
        """The report column's counts as a mergeable :class:`~ldpnum.Aggregate`.

        ``spec`` as for :meth:`reports`. Aggregates of one spec add up (``a + b``) and serialize, so batches or
        partitions are estimated together (see :func:`aggregate_series`).

        Examples
        --------
        >>> import pandas as pd, ldpnum as ldp
        >>> r = pd.Series([0, 1, 1, 2], name="c").ldp.privatize(ldp.GRR(1.0, k=3), rng=0)
        >>> agg = r.ldp.aggregate()
        >>> agg.n_reports, (agg + agg).n_reports
        (4, 8)
        """
        return aggregate_series(self._obj, spec)

    def _estimate(self, which, spec, kwargs, check=False):
        mech, agg = self._mech_agg(spec, which if check else None, kwargs)
        return named(estimator(mech, which)(agg, **kwargs), self._obj.name)

    def _mech_agg(self, spec, estimate=None, options=None):
        if estimate is not None:  # the estimator and its method= are checked before a report is read
            estimator(mechanism_of(spec_for(self._obj, self._obj.name, spec)), estimate, options)
        agg = aggregate_series(self._obj, spec)
        return mechanism_of(agg.spec), agg

    def estimate_mean(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.MeanEstimate` of the mean (unbiased, or ``method="mle"``), or a vector report column's mean.

        A :class:`~ldpnum.MeanEstimate` for mean oracles and distribution mechanisms; a
        :class:`~ldpnum.vectors.VectorMeanEstimate` for a vector report column (coordinates named by the value columns).
        ``kwargs`` go to the mechanism's ``estimate_mean``: ``method="mle"`` gives the maximum-likelihood mean with a
        likelihood-ratio interval (randomized response, stochastic rounding, Duchi et al.; refused, before a report
        is read, for other mechanisms).

        Examples
        --------
        >>> import pandas as pd, ldpnum as ldp
        >>> r = pd.Series([True] * 3 + [False] * 27, name="smoker").ldp.privatize(ldp.RandomizedResponse(1.0), rng=0)
        >>> est = r.ldp.estimate_mean(method="mle")
        >>> est.method, bool(0 <= est.confidence_interval(0.95)[0] <= est.value <= 1)
        ('mle', True)
        """
        mech, agg = self._mech_agg(spec, "estimate_mean", kwargs)
        return estimate_mean_named(mech, agg, self._obj, self._obj.name, **kwargs)

    def estimate_distribution(self, spec: Spec | None = None, **kwargs: Any) -> DistributionEstimate:
        """Estimated distribution of the values, from a report column of a distribution mechanism.

        ``spec`` as for :meth:`reports`; ``kwargs`` go to the mechanism's ``estimate_distribution`` (e.g. ``n_bins``,
        ``smoothing``).

        Returns
        -------
        DistributionEstimate
            Named like the column; its ``mean``, ``quantile`` and ``range`` answer queries.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> x = pd.Series(np.random.default_rng(0).uniform(0, 10, 20_000), name="x")
        >>> d = x.ldp.privatize(ldp.SquareWave(2.0, (0, 10)), rng=1).ldp.estimate_distribution()
        >>> d.name, bool(abs(d.range(0, 5) - 0.5) < 0.1)
        ('x', True)
        """
        return self._estimate("estimate_distribution", spec, kwargs)

    def estimate_ranges(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.RangeEstimate` (hierarchical histograms); ``kwargs`` go to ``estimate_ranges``."""
        return self._estimate("estimate_ranges", spec, kwargs)

    def estimate_frequencies(self, spec: Spec | None = None, **kwargs: Any) -> FrequencyEstimate:
        """Estimated frequency of each category, from a report column of a frequency oracle.

        ``spec`` as for :meth:`reports`; ``kwargs`` go to the oracle's ``estimate_frequencies``, e.g.
        ``postprocess="norm-sub"`` or ``method="mle"`` (checked before a report is read).

        Returns
        -------
        FrequencyEstimate
            Named like the column; indexed by the declared categories when the column was privatized from
            a ``category`` or text column (they are in its spec), by the codes ``0..k-1`` otherwise.
            ``to_series()`` and ``to_frame()`` (with 95% intervals) give pandas objects.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> s = pd.Series(np.random.default_rng(0).choice(["yes", "no"], 20_000, p=[0.7, 0.3]), name="q")
        >>> r = s.ldp.privatize(ldp.GRR(2.0, categories=["yes", "no"]), rng=1)
        >>> r.ldp.estimate_frequencies().to_frame()["frequency"].round(1).to_dict()
        {'yes': 0.7, 'no': 0.3}
        """
        return self._estimate("estimate_frequencies", spec, kwargs, check=True)

    def subset(self, mask: Any) -> pd.Series:
        """The reports of the rows a **public** boolean ``mask`` selects, still reports (see :func:`subset`)."""
        return subset(self._obj, mask)

    def describe(self, *, level: float = 0.95, spec: Spec | None = None, bootstrap: int | None = None,
                 rng: Any = None, method: str = "unbiased") -> pd.DataFrame:
        """The report column's row of :meth:`DataFrameAccessor.describe`: mean with its interval, and quartiles.

        One row (one per coordinate for a vector report column); ``level``, ``bootstrap``, ``rng`` and ``method``
        as there, ``spec`` as for :meth:`reports`. See :func:`describe_aggregates` for the columns.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> x = pd.Series(np.random.default_rng(0).uniform(0, 60, 20_000), name="t")
        >>> d = x.ldp.privatize(ldp.SquareWave(epsilon=2.0, bounds=(0, 60)), rng=1).ldp.describe()
        >>> d.index.tolist(), bool(d.loc["t", "ci_low"] < 30 < d.loc["t", "ci_high"])
        (['t'], True)
        """
        name = self._obj.name
        check_describe_method({name: spec_for(self._obj, name, spec)}, method)  # before a report is read
        sources = column_sources(self._obj, name)
        return describe_aggregates({name: self.aggregate(spec)}, level=level, bootstrap=bootstrap, rng=rng,
                                   sources=None if sources is None else {name: sources}, method=method)

    def heavy_hitters(self, spec: Spec | None = None, **kwargs: Any) -> "HeavyHittersEstimate":
        """:class:`~ldpnum.HeavyHittersEstimate`: the most frequent items (PEM, TreeHist reports).

        ``kwargs`` go to ``estimate_heavy_hitters`` (e.g. ``top_k``).

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> words = pd.Series(np.random.default_rng(0).choice(["the", "of", "and", "to"], 50_000,
        ...                                                   p=[0.4, 0.3, 0.2, 0.1]), name="word")
        >>> reports = words.ldp.privatize(ldp.PEM(epsilon=4.0, top_k=2), rng=0)
        >>> reports.ldp.heavy_hitters().items
        ('the', 'of')
        """
        return self._estimate("estimate_heavy_hitters", spec, kwargs)

    def estimate_marginals(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.MarginalsEstimate` of a report column of several categorical columns.

        The column holds :class:`~ldpnum.Marginals` reports; ``kwargs`` go to ``estimate_marginals`` (e.g.
        ``consistency``).

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"a": rng.integers(0, 2, 20_000), "b": rng.integers(0, 3, 20_000)})
        >>> r = df.ldp.privatize({("a", "b"): ldp.Marginals(4.0, categories={"a": 2, "b": 3})}, rng=1)
        >>> r["a,b"].ldp.estimate_marginals().marginal("a").round(1).tolist()
        [0.5, 0.5]
        """
        mech, agg = self._mech_agg(spec)
        return estimator(mech, "estimate_marginals")(agg, **kwargs)

    def frequent_items(self, protocol: Any, *, rng: SeedLike = None, truncate: bool = True, shuffled: bool = False,
                       shuffle_delta: float = 1e-6, ledger: Any = None, people: Any = None,
                       label: str | None = None) -> "HeavyHittersEstimate":
        """The most frequent items of a column of sets: a simulation of ``protocol``'s whole multi-phase collection.

        Each cell is a set, list or tuple of str, bytes or int items; the simulation is ``protocol.run`` on the column
        (e.g. :class:`~ldpnum.SVIM`); for a real collection use the protocol's phases (see its documentation).
        ``shuffled=True`` declares each phase's reports one shuffled batch (central δ ``shuffle_delta``): the result
        shows the collection's central ε, the largest over the phases. ``ledger``, ``people``, ``label``: as for
        :meth:`privatize`; each person reports in one phase with the protocol's ε, so each spends ``protocol.epsilon``
        (checked against the cap before any draw).

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> baskets = [["milk", "bread"], ["milk"], ["tea"]]
        >>> s = pd.Series([baskets[i] for i in np.random.default_rng(0).choice(3, 30_000, p=[.5, .3, .2])])
        >>> s.ldp.frequent_items(ldp.SVIM(epsilon=4.0, top_k=2), rng=1).items
        ('milk', 'bread')
        """
        return run_sets(protocol, "items", self._obj, rng, truncate, shuffled, shuffle_delta, ledger, people, label)

    def frequent_itemsets(self, protocol: Any, *, rng: SeedLike = None, truncate: bool = True, shuffled: bool = False,
                          shuffle_delta: float = 1e-6, ledger: Any = None, people: Any = None,
                          label: str | None = None) -> Any:
        """The most frequent itemsets (frozensets, single items included) of a column of sets.

        A simulation of ``protocol``'s collection (e.g. :class:`~ldpnum.SVSM`) on the column; an
        :class:`~ldpnum.ItemsetsEstimate`. ``shuffled``, ``shuffle_delta``, ``ledger``, ``people``, ``label``: as for
        :meth:`frequent_items`.
        """
        return run_sets(protocol, "itemsets", self._obj, rng, truncate, shuffled, shuffle_delta, ledger, people,
                         label)

    def quantile(self, q: ArrayLike = 0.5, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """Estimated quantile(s), like :meth:`pandas.Series.quantile`.

        From the estimated distribution (hierarchical histograms: the range tree). A scalar ``q`` gives a
        float, a list a Series indexed by ``q`` and named like the column. ``kwargs`` go to the estimator.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> x = pd.Series(np.random.default_rng(0).uniform(0, 100, 50_000))
        >>> r = x.ldp.privatize(ldp.SquareWave(epsilon=2.0, bounds=(0, 100)), rng=0)
        >>> q = r.ldp.quantile([0.25, 0.75])
        >>> q.index.tolist(), bool(abs(q[0.25] - 25) < 5 and abs(q[0.75] - 75) < 5)
        ([0.25, 0.75], True)
        """
        mech, agg = self._mech_agg(spec)
        return quantiles_named(mech, agg, q, self._obj.name, **kwargs)

    def range(self, lo: Any, hi: ArrayLike | None = None, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """Estimated fraction of people with values in ``[lo, hi]`` (arrays broadcast).

        A report column of several value columns (:class:`~ldpnum.HDG`) takes one query mapping instead,
        ``{column: (lo, hi), ...}``, passed to its estimate's ``range``.
        """
        mech, agg = self._mech_agg(spec)
        return range_query(mech, agg, lo, hi, **kwargs)


@pd.api.extensions.register_dataframe_accessor("ldp")
class DataFrameAccessor:
    """``df.ldp``: privatize columns, read the recorded budget, describe report columns.

    Needs unique column labels (specs and random streams are keyed by label).

    Examples
    --------
    >>> import pandas as pd, ldpnum as ldp
    >>> df = pd.DataFrame({"a": [0.2, 0.4, 0.6], "b": [10.0, 20.0, 30.0]})
    >>> r = df.ldp.privatize({"a": ldp.Duchi(0.5, (0, 1)), "b": ldp.Duchi(0.5, (0, 50))}, rng=3)
    >>> r.ldp.epsilon_per_row, r.ldp.strategy
    (1.0, 'all-columns')
    """

    def __init__(self, obj):
        self._validate(obj)
        self._obj = obj

    @staticmethod
    def _validate(obj):
        if not obj.columns.is_unique:
            dup = obj.columns[obj.columns.duplicated()][0]
            raise AttributeError(f"the .ldp accessor needs unique column labels (specs are recorded by label); "
                                 f"{dup!r} appears more than once")

    @shares_docs(privatize_frame, sections=["Raises"],
                 parameters=["rng", "strategy", "nan_policy", "fill_value", "ledger", "shuffled", "unknown", "keys"])
    def privatize(self, mechanisms: Mapping[Any, Mechanism], *, rng: SeedLike = None,
                  strategy: "str | None" = None, nan_policy: str = "raise",
                  fill_value: Any = None, ledger: Any = None, people: Any = None,
                  label: str | None = None, shuffled: bool = False, shuffle_delta: float = 1e-6,
                  unknown: str = "raise", keys: Any = None, round: int | None = None,
                  **kwargs: Any) -> pd.DataFrame:
        """Randomize some columns: a new DataFrame of report columns (same index), the budget recorded.

        Every cell of every named column is validated before the first random word is drawn; columns not
        named are not carried over (raw values never travel with reports).

        Parameters
        ----------
        mechanisms : mapping
            Column label -> mechanism, the result's columns in this order, e.g. ``{"age":
            ldp.SquareWave(1.0, (0, 100)), "drink": ldp.GRR(1.0, k=3)}``; a tuple key names the value columns
            of a vector mechanism. A ``category`` column given to a frequency oracle uses its declared
            categories; a text column needs them declared on the oracle (see :meth:`SeriesAccessor.privatize`).
            ``mechanism="auto"`` is the Series accessor's (``df[c].ldp.privatize("auto", epsilon=...,
            bounds=...)``), or build each column's mechanism with :func:`ldpnum.recommend`.
        {parameters}

        Returns
        -------
        pandas.DataFrame
            The report columns; ``.ldp.specs``, ``.ldp.epsilon_per_row`` and ``.ldp.strategy`` read what was
            recorded (``attrs``, carried through selection, ``concat`` and Parquet files).

        Raises
        ------
        {Raises}

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"age": rng.uniform(18, 90, 30_000),
        ...                    "drink": pd.Categorical(rng.choice(["tea", "coffee"], 30_000),
        ...                                            categories=["tea", "coffee"])})
        >>> r = df.ldp.privatize({"age": ldp.SquareWave(2.0, (0, 100)), "drink": ldp.GRR(2.0, k=2)},
        ...                      rng=1, strategy="one-column-per-row")
        >>> r.ldp.epsilon_per_row, r["drink"].ldp.estimate_frequencies().to_series().round(1).to_dict()
        (2.0, {'tea': 0.5, 'coffee': 0.5})
        """
        if "mechanism" in kwargs or "epsilon" in kwargs or "bounds" in kwargs or "task" in kwargs:
            raise TypeError("DataFrame.ldp.privatize takes a mapping {column: mechanism}; mechanism='auto' with "
                            "epsilon=, bounds= and task= chooses the mechanism of one column: use "
                            "df[column].ldp.privatize('auto', epsilon=..., bounds=...), or give each column "
                            "ldp.recommend(task, n=len(df), epsilon=..., bounds=...).mechanism in the mapping")
        check_no_other_arguments("DataFrame.ldp.privatize", kwargs)
        return privatize_frame(self._obj, mechanisms, rng=rng, strategy=strategy, nan_policy=nan_policy,
                               fill_value=fill_value, ledger=ledger, people=people, label=label, shuffled=shuffled,
                               shuffle_delta=shuffle_delta, unknown=unknown, keys=keys, round=round)

    @property
    def specs(self) -> dict[Any, Spec]:
        """Report column -> :class:`~ldpnum.Spec`, for the recorded columns present in the frame."""
        return {c: s for c, s in column_specs(self._obj).items() if c in self._obj.columns}

    @property
    def epsilon_per_row(self) -> float | None:
        """Total ε each row spent: the sum of the columns' ε ("all-columns") or their max ("one-column-per-row").

        None for a frame that is not a report frame.
        """
        info = frame_info(self._obj)
        return None if info is None else info.get("epsilon_per_row")

    @property
    def strategy(self) -> str | None:
        """The strategy the report columns were privatized with (None if unknown)."""
        info = frame_info(self._obj)
        return None if info is None else info.get("strategy")

    def __repr__(self):
        specs = self.specs
        if not specs:
            return "<ldp accessor: no report columns>"
        lines = [f"<ldp accessor: {len(specs)} report column(s); {budget_text(frame_info(self._obj))}"]
        lines += [f"  {c!r}: {s}" for c, s in specs.items()]
        return "\n".join(lines) + ">"

    def estimate_mean(self, column: Any, **kwargs: Any) -> pd.Series:
        """Means of one report column as a Series (``kwargs`` as for :meth:`SeriesAccessor.estimate_mean`).

        A vector column (``column`` its tuple key, e.g. ``("q1", "q2")``, or its label ``"q1,q2"``) indexed by its value
        columns; a one-value column as a Series of one entry. For standard errors use
        ``reports[label].ldp.estimate_mean()``.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> df = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (40_000, 2)), columns=["q1", "q2"])
        >>> m = ldp.SampledDimensions("piecewise", 4.0, [(0, 1), (0, 1)])
        >>> r = df.ldp.privatize({("q1", "q2"): m}, rng=1)
        >>> r.columns.tolist(), r.ldp.estimate_mean(("q1", "q2")).round(1).to_dict()
        (['q1,q2'], {'q1': 0.5, 'q2': 0.5})
        """
        label = report_label(column) if isinstance(column, tuple) else column
        if label not in self._obj.columns:
            raise ValueError(f"report column {label!r} is not in the DataFrame; its columns: {list(self._obj.columns)}")
        column_reports = self._obj[label]
        mech, agg = column_reports.ldp._mech_agg(None, "estimate_mean", kwargs)
        return estimate_mean_named(mech, agg, column_reports, label, **kwargs).to_series()

    def aggregate(self, specs: Mapping[Any, Spec] | None = None, *, by: Any = None) -> dict[Any, Any]:
        """Column -> :class:`~ldpnum.Aggregate` of every report column (``specs`` adds or checks columns).

        With ``by`` (a column of the frame that is not a report column, a Series aligned on the index, or an
        array of one key per row):
        group key -> {column -> Aggregate}, the reports of each group counted apart, groups in sorted order.
        The key must be **public** (e.g. the region a collection server sits in, or a column the analyst may
        see in the clear): grouping by it costs no privacy, but nothing protects it. When the key is itself
        private, privatize it jointly with the values instead (a two-attribute grid).

        Each report column's record is checked once on the whole column, and the group aggregates add up to
        the column's aggregate. Raises ValueError for a missing key (NaN/None: say which group those rows
        belong to), a key that is a report column, or a key array of the wrong length.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> df = pd.DataFrame({"x": np.r_[np.full(20_000, 2.0), np.full(20_000, 8.0)]})
        >>> r = df.ldp.privatize({"x": ldp.Duchi(2.0, (0, 10))}, rng=0)
        >>> r["region"] = np.repeat(["north", "south"], 20_000)      # public: where each report was collected
        >>> aggs = r.ldp.aggregate(by="region")
        >>> {g: round(ldp.Duchi(2.0, (0, 10)).estimate_mean(a["x"]).value) for g, a in aggs.items()}
        {'north': 2, 'south': 8}
        """
        return aggregate_frame(self._obj, self.specs, specs, by=by)

    def subset(self, mask: Any) -> pd.DataFrame:
        """The report rows a **public** boolean ``mask`` selects (one per row, or a Series on the index), still reports.

        Their estimates describe the people selected; see :func:`subset` (and :meth:`aggregate` with ``by=`` for
        every group at once).
        """
        return subset(self._obj, mask)

    def describe(self, *, level: float = 0.95, specs: Mapping[Any, Spec] | None = None,
                 by: Any = None, bootstrap: int | None = None, rng: Any = None,
                 method: str = "unbiased") -> pd.DataFrame:
        """Per report column: mean with a ``level`` confidence interval and quartiles.

        With ``by`` (a public group key, see :meth:`aggregate`), per group and column (a two-level row index); with
        ``bootstrap=B`` (e.g. 200), ``level`` intervals of the quartiles too (``25% low``, ``25% high``, ...);
        with ``method="mle"``, maximum-likelihood means with likelihood-ratio intervals (checked for every
        numerical column before a report is read).

        See :func:`describe_aggregates` for the columns of the result.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> df = pd.DataFrame({"t": np.random.default_rng(0).uniform(0, 60, 20_000)})
        >>> r = df.ldp.privatize({"t": ldp.SquareWave(epsilon=2.0, bounds=(0, 60))}, rng=1)
        >>> d = r.ldp.describe()
        >>> d.columns.tolist()[:4], bool(d.loc["t", "ci_low"] < 30 < d.loc["t", "ci_high"])
        (['mechanism', 'epsilon', 'n_reports', 'mean'], True)
        """
        return describe_frame(self._obj, self.specs, specs, level=level, by=by, bootstrap=bootstrap, rng=rng,
                              method=method)
