r"""The ``.ldp`` accessors: privatize pandas columns and estimate from report columns (DESIGN.md §1, R3).

``import ldpnum`` registers an accessor named ``ldp`` on :class:`pandas.Series` and
:class:`pandas.DataFrame` through pandas' public extension API. The accessors hold no state and contain no
math: they validate, call the module-level functions below (which Dask and other engines call once per
partition), and those delegate to the mechanisms and estimators.

Privatizing
-----------
``s.ldp.privatize(mech, rng=None)`` returns a new Series of integer report codes with the same index and
name; ``df.ldp.privatize({column: mech, ...}, strategy=...)`` a new DataFrame holding the report columns
only (raw values never travel with reports). Two strategies share the privacy budget of a row (a person):

``"all-columns"``
    Each row reports every column. By sequential composition the row spends
    :math:`\varepsilon_\text{row} = \sum_j \varepsilon_j`.
``"one-column-per-row"``
    Each row reports **one** column, with that column's full :math:`\varepsilon_j`; its other cells are
    missing (``pd.NA`` in a nullable unsigned column such as ``UInt16``). Row :math:`i`'s column is drawn
    uniformly over the :math:`m` columns, independently of every value
    (:func:`ldpnum._random.assign_columns`), so the assignment reveals nothing, and the row spends
    :math:`\varepsilon_\text{row} = \max_j \varepsilon_j`.
    Splitting people rather than splitting ε is the more accurate choice for most mechanisms
    (T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 2021,
    appendix; the lecture slides "Local Differential Privacy (Part 1)", "On answering multiple questions"):
    each column is estimated from about :math:`n/m` reports at ε instead of :math:`n` reports at ε/m.

The j-th column of the mapping draws its words from ``child_rng(rng, j)`` and the assignment words come from
``child_rng(rng, m)``, so a seeded result is reproducible on any machine, and a single Series privatized with
``rng`` equals ``mech.privatize(values, rng=child_rng(rng, 0))``. Every column is validated (kind, dtype,
missing and out-of-range values) before the first word is drawn.

The budget is recorded on the result: ``attrs["ldpnum"]`` holds each column's :class:`~ldpnum.Spec`, the
strategy and ``epsilon_per_row`` (see :mod:`ldpnum._frame`). ``reports.ldp.epsilon_per_row`` reads it and
``repr(reports.ldp)`` prints it. pandas carries ``attrs`` through selection, ``copy``, ``concat`` of frames
with equal attrs and Parquet files, so ``pd.read_parquet(f)["col"].ldp.estimate_mean()`` works.

Estimating
----------
On a report column: ``.ldp.aggregate()``, ``.ldp.estimate_mean()``, ``.ldp.estimate_distribution(**kw)``,
``.ldp.estimate_ranges(**kw)`` (hierarchical histograms), ``.ldp.estimate_frequencies(**kw)`` (frequency
oracles), ``.ldp.quantile(q)`` and ``.ldp.range(lo, hi)``; on a report DataFrame ``.ldp.describe()``. The spec
is read from the column; an explicit ``spec=`` is used for a column that carries none and must equal the
recorded one otherwise (:class:`~ldpnum.SpecMismatchError`). Missing cells are rows that did not report
that column and are left out.

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

import copy
import functools
import math
import numbers
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .spec import Spec, check_spec
from .reports import Reports
from .aggregate import Aggregate
from ._frame import (ATTRS_KEY, add_digests, attach_specs, check_codes, codes_digest, column_digest, column_sources,
                     column_specs,
                     frame_info, histogram_digest, shuffle_delta_of, spec_for)
from ._random import MAX_ASSIGNED, assign_columns, child_rng, resolve_rng
from ._results import DistributionEstimate, FrequencyEstimate, named
from .heavy import HeavyHittersEstimate
from ._typing import ArrayLike, SeedLike
from ._validation import check_choice, dtype_hint
from .exceptions import BudgetWarning
from .mechanisms import Mechanism, from_spec
from .base import ESTIMATORS

__all__ = ["STRATEGIES", "privatize_series", "privatize_frame", "reports_of", "aggregate_series", "concat",
           "describe_aggregates", "SeriesAccessor", "DataFrameAccessor"]

#: How the columns of a DataFrame share each row's privacy budget.
STRATEGIES = ("all-columns", "one-column-per-row")

#: At most this many columns in "one-column-per-row" (see :func:`ldpnum._random.assign_columns`).
MAX_COLUMNS = MAX_ASSIGNED

_NAN_POLICIES = ("raise", "impute")


# -- validation ------------------------------------------------------------------------------------------

def _subject(name):
    return "the Series" if name is None else f"column {name!r}"


def _check_name(name, allow_none):
    if name is None and allow_none:
        return
    if isinstance(name, (bool, np.bool_)) or not isinstance(name, (str, numbers.Integral)):
        raise TypeError(f"column label {name!r} ({type(name).__name__}) cannot carry a spec: report columns "
                        "need str or int labels (they travel as JSON in attrs and Parquet metadata)")


def _check_mechanism(mech, name):
    if not isinstance(mech, Mechanism):
        raise TypeError(f"the mechanism for {_subject(name)} must be an ldpnum mechanism, e.g. "
                        f"ldp.SquareWave(epsilon=1.0, bounds=(0, 1440)); got {type(mech).__name__}")
    mech.check_column_codes(f"a pandas column ({_subject(name)})")


def _is_real(dtype):
    """Integer or float dtypes (NumPy, nullable or Arrow-backed): values or report codes."""
    return (pd.api.types.is_numeric_dtype(dtype) and getattr(dtype, "kind", "O") in "iuf"
            and not isinstance(dtype, pd.CategoricalDtype))


def _is_text(dtype):
    """String or object dtypes: items (words, URLs, ids as text) for the heavy-hitter mechanisms."""
    if isinstance(dtype, pd.CategoricalDtype):
        return False  # categories: privatize their codes with a frequency oracle (the hint says so)
    return isinstance(dtype, pd.StringDtype) or getattr(dtype, "kind", "") in "OSU"


def _check_rng(rng):
    """Validate ``rng`` without drawing from it (a Generator is not advanced)."""
    if rng is not None:
        resolve_rng(rng)


def _owned(codes):
    """The freshly randomized codes as a writable array for a new pandas object, copied only if shared."""
    try:
        codes.flags.writeable = True  # the kernel's output array: nothing else refers to it
    except ValueError:  # a view on a read-only base
        codes = codes.copy()
    return codes


def _copy_other_attrs(src, dst):
    for key, value in src.attrs.items():
        if key != ATTRS_KEY:
            dst.attrs[key] = copy.deepcopy(value)
    return dst


# -- privatizing -----------------------------------------------------------------------------------------

def privatize_series(s, mechanism, *, rng=None, nan_policy="raise", fill_value=None, ledger=None, people=None,
                     label=None, shuffled=False, shuffle_delta=1e-6, unknown="raise", _digest=True):
    """Privatize one column: a new Series of report codes, same index and name, spec in its ``attrs``.

    Parameters
    ----------
    s : pandas.Series
        One value per person: integer or float dtype (nullable ``Int64``/``Float64`` included; bool only for
        :class:`~ldpnum.RandomizedResponse`).
    mechanism : ldpnum.Mechanism
        The randomizer, e.g. ``ldp.SquareWave(epsilon=1.0, bounds=(0, 1440))``. Mechanisms whose reports are
        bit vectors (SUE, OUE, subset selection) are refused: a column holds one code per person.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        ``None`` (default): secure randomness, for real collections. Anything else: a reproducible
        simulation; the words come from ``child_rng(rng, 0)``.
    nan_policy : {"raise", "impute"}, optional
        Missing values (NaN, ``pd.NA``, ±inf) raise (default) or are replaced by the public ``fill_value``.
        They are never dropped: dropping would reveal who is missing.
    fill_value : float or int, optional
        Public replacement of missing values with ``nan_policy="impute"``.
    ledger : ldpnum.PrivacyLedger, optional
        Records the collection (each person spends ``mechanism.epsilon``) after checking its cap before
        anything is drawn (see :class:`~ldpnum.accounting.PrivacyLedger`).
    people : array-like, optional
        The ids of the rows' people for the ledger, one per row (default: the index). For a DataFrame it may
        also be the name of its column of ids (``people="pid"``, as the command line's ``--people-column``).
        A string given for a Series is refused (it is not read as its characters).
    label : str, optional
        The collection's name in the ledger.
    shuffled : bool, default False
        Declare that the reports reach the analyst anonymized and shuffled together, as one batch. The
        column then records ``shuffle_delta``; its aggregate is declared shuffled
        (:meth:`ldpnum.Aggregate.shuffled`) and estimates from it show the central ε next to the local ε;
        the ledger entry shows it too.
    shuffle_delta : float, default 1e-6
        The central δ of a shuffled collection, in (0, 1).
    unknown : {"raise", "uniform"}, optional
        For categorical mechanisms (frequency oracles): codes outside ``[0, k)`` raise (default) or, with
        ``"uniform"``, are reported uniformly at random (as the mechanism's own ``privatize(..., unknown=)``).
        Refused for other mechanisms.

    Returns
    -------
    pandas.Series
        Report codes in the smallest unsigned dtype of the mechanism's alphabet, with
        ``attrs["ldpnum"]`` recording the spec and ``epsilon_per_row = mechanism.epsilon``. The input is
        not modified.

    Raises
    ------
    TypeError
        For a non-Series, a non-mechanism, a bit-vector mechanism, or a dtype that does not hold real
        numbers (strings, objects, datetimes, categories; bools except for randomized response).
    ValueError
        For missing values with ``nan_policy="raise"``, a bad ``fill_value`` or ``nan_policy``, a negative
        seed. Nothing is drawn when anything is wrong.

    Notes
    -----
    Each person's report is ``mechanism.epsilon``-LDP (the mechanism's ``privatize``); estimators are
    post-processing.

    Examples
    --------
    >>> import pandas as pd, ldpnum as ldp
    >>> from ldpnum._random import child_rng
    >>> from ldpnum.pandas import privatize_series
    >>> m = ldp.Duchi(epsilon=1.0, bounds=(0, 10))
    >>> s = pd.Series([2.0, 7.5, 4.0], index=["a", "b", "c"], name="x")
    >>> out = privatize_series(s, m, rng=0)
    >>> out.index.tolist(), out.name, out.attrs["ldpnum"]["epsilon_per_row"]
    (['a', 'b', 'c'], 'x', 1.0)
    >>> bool((out.to_numpy() == m.privatize(s, rng=child_rng(0, 0)).codes).all())
    True
    """
    if not isinstance(s, pd.Series):
        raise TypeError(f"privatize_series expects a pandas Series; got {type(s).__name__}")
    check_choice(nan_policy, "nan_policy", _NAN_POLICIES)
    _check_mechanism(mechanism, s.name)
    _check_name(s.name, allow_none=True)
    _check_rng(rng)
    values = _prepare(mechanism, s, _subject(s.name), nan_policy, fill_value, unknown)
    delta = _shuffle_check(shuffled, shuffle_delta, s)
    ids = _ledger_check(ledger, mechanism.epsilon, s, people)
    reports = mechanism._randomize(values, child_rng(rng, 0))
    if ledger is not None:
        ledger.record(epsilon=mechanism.epsilon, people=ids, specs={s.name: reports.spec}, label=label,
                      shuffled=shuffled, shuffle_delta=shuffle_delta)
    out = pd.Series(_owned(reports.codes), index=s.index, name=s.name, copy=False)
    _copy_other_attrs(s, out)
    digests = {s.name: codes_digest(reports.codes)} if _digest else None
    return attach_specs(out, {s.name: reports.spec}, epsilon_per_row=mechanism.epsilon, digests=digests,
                        shuffle_delta=delta)


def _shuffle_check(shuffled, shuffle_delta, obj=None):
    """The central δ to record for a collection declared shuffled (None when it is not), checked before
    anything is drawn.

    A declaration is refused for reports that keep an identifying index (``obj``'s index other than a
    RangeIndex of positions): the reports keep their input's index, and a shuffled batch must reach the
    analyst with nothing that links a report to its sender (the command line likewise refuses ``--shuffled``
    with ``--keep``)."""
    if not isinstance(shuffled, (bool, np.bool_)):
        raise TypeError(f"shuffled must be True or False; got {type(shuffled).__name__} {shuffled!r}")
    from .accounting import check_shuffle_delta

    delta = check_shuffle_delta(shuffle_delta)
    if shuffled and obj is not None and not isinstance(obj.index, pd.RangeIndex):
        first = obj.index[0] if len(obj.index) else None
        raise ValueError(f"shuffled=True declares that the reports reach the analyst with nothing linking them to "
                         f"their senders, but they keep the input's index ({type(obj.index).__name__}"
                         f"{'' if first is None else f', first label {first!r}'}), which identifies each row: "
                         "privatize obj.reset_index(drop=True) (a ledger still names the people with people=)")
    return delta if shuffled else None


def _fill_values(fill_value, columns):
    if isinstance(fill_value, Mapping):
        unknown = [c for c in fill_value if c not in columns]
        if unknown:
            raise ValueError(f"fill_value names {len(unknown)} column(s) that are not privatized, first "
                             f"{unknown[0]!r}; privatized columns: {list(columns)}")
        return {c: fill_value.get(c) for c in columns}
    return {c: fill_value for c in columns}


def resolve_strategy(strategy, mechanisms, *, stacklevel=3):
    """``strategy``, or the default ``"all-columns"`` when it is None, with a
    :class:`~ldpnum.exceptions.BudgetWarning` when that default sums the ε of several columns (an explicit
    strategy is silent). Every integration that privatizes frames resolves its default here."""
    if strategy is not None:
        return strategy
    if isinstance(mechanisms, Mapping) and len(mechanisms) > 1:
        total = math.fsum(getattr(m, "epsilon", 0.0) for m in mechanisms.values())
        warnings.warn(BudgetWarning(
            f"each row reports all {len(mechanisms)} columns and spends the sum of their epsilons, {total:g} "
            "(sequential composition); pass strategy='one-column-per-row' to spend the largest epsilon instead "
            "(each column then reported by a share of the rows), or strategy='all-columns' to silence this"),
            stacklevel=stacklevel)
    return "all-columns"


def privatize_frame(df, mechanisms, *, rng=None, strategy=None, nan_policy="raise", fill_value=None,
                    ledger=None, people=None, label=None, shuffled=False, shuffle_delta=1e-6, unknown="raise",
                    _digest=True):
    r"""Privatize some columns of a DataFrame: a new DataFrame of report columns, budget recorded.

    Parameters
    ----------
    df : pandas.DataFrame
    mechanisms : mapping
        Column label -> mechanism; the result's columns in this order. Columns not named are not carried
        over (raw values never travel with reports; join public columns back by index if needed).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        ``None`` (default): secure. Otherwise column ``j`` of the mapping draws from ``child_rng(rng, j)``
        and, in ``"one-column-per-row"``, the rows' columns from ``child_rng(rng, len(mechanisms))``.
    strategy : {"all-columns", "one-column-per-row"}, optional
        ``"all-columns"`` (default): every row reports every column and spends
        :math:`\sum_j \varepsilon_j`; when it is left to the default with several columns a
        :class:`~ldpnum.exceptions.BudgetWarning` says so (pass it explicitly to silence it). ``"one-column-per-row"``: each row reports one column, drawn uniformly
        and independently of the values, and spends :math:`\max_j \varepsilon_j`; the cells it did not
        report are ``pd.NA`` (nullable unsigned columns such as ``UInt16``).
    nan_policy : {"raise", "impute"}, optional
        As for :func:`privatize_series`, for every column.
    fill_value : scalar or mapping, optional
        Public replacement of missing values with ``nan_policy="impute"``: one value for every column, or a
        mapping column -> value.
    ledger, people, label : optional
        As for :func:`privatize_series`; each person spends ``epsilon_per_row``.
    shuffled, shuffle_delta : optional
        As for :func:`privatize_series`: the rows' reports reach the analyst shuffled together as one batch.
        Each column's estimates show the central ε of that column's reports; the ledger entry shows that of
        ``epsilon_per_row`` over the rows.
    unknown : {"raise", "uniform"}, optional
        As for :func:`privatize_series`, for every categorical column (refused when there is none).

    Returns
    -------
    pandas.DataFrame
        Same index. ``attrs["ldpnum"]`` records every column's spec, the strategy and ``epsilon_per_row``.

    Raises
    ------
    TypeError
        For a non-DataFrame, a mechanisms argument that is not a mapping or holds a non-mechanism, a column
        whose dtype does not hold real numbers (the message names the column and dtype), unsuitable labels.
    ValueError
        For an empty mapping, a column that is not in ``df`` or whose label is duplicated, an unknown
        strategy, and bad values in any column (missing values, a bad fill value). Every cell of every
        column is checked before the first word is drawn (in ``"one-column-per-row"`` also the cells a row
        will not report, so whether a frame is accepted never depends on the random assignment): if
        anything is wrong nothing is randomized.

    Notes
    -----
    Each report is ε_j-LDP for its person; a person's row is ``epsilon_per_row``-LDP by sequential
    composition (``"all-columns"``) or because it holds one report chosen independently of the data
    (``"one-column-per-row"``).

    Examples
    --------
    >>> import pandas as pd, ldpnum as ldp
    >>> from ldpnum.pandas import privatize_frame
    >>> df = pd.DataFrame({"a": [0.1, 0.5, 0.9], "b": [3, 1, 2]})
    >>> out = privatize_frame(df, {"a": ldp.SquareWave(1.0, (0, 1)), "b": ldp.GRR(0.5, k=4)}, rng=0)
    >>> out.attrs["ldpnum"]["epsilon_per_row"], out.attrs["ldpnum"]["strategy"]
    (1.5, 'all-columns')
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"privatize_frame expects a pandas DataFrame; got {type(df).__name__}")
    if not isinstance(mechanisms, Mapping):
        raise TypeError("mechanisms must be a mapping {column: mechanism}, e.g. "
                        f"{{'dep_time': ldp.SquareWave(1.0, (0, 1440))}}; got {type(mechanisms).__name__}")
    if not mechanisms:
        raise ValueError("mechanisms is empty: name at least one column to privatize")
    strategy = resolve_strategy(strategy, mechanisms, stacklevel=4)
    check_choice(strategy, "strategy", STRATEGIES)
    check_choice(nan_policy, "nan_policy", _NAN_POLICIES)
    columns = list(mechanisms)
    # a vector mechanism reads several value columns, named by a tuple key, into one report column
    sources = {c: _vector_sources(c, mechanisms[c]) for c in columns}
    labels = {c: _report_label(c) if sources[c] is not None else c for c in columns}
    if len(set(labels.values())) != len(labels):
        raise ValueError(f"two keys give the same report column label; labels: {list(labels.values())}")
    missing = [v for c in columns for v in (sources[c] or [c]) if v not in df.columns]
    if missing:
        raise ValueError(f"{len(missing)} column(s) to privatize are not in the DataFrame, first {missing[0]!r}; "
                         f"its columns: {list(df.columns)}")
    if not df.columns.is_unique:
        counts = df.columns.value_counts()
        dup = [v for c in columns for v in (sources[c] or [c]) if counts.get(v, 0) > 1]
        if dup:
            raise ValueError(f"column label {dup[0]!r} appears {counts[dup[0]]} times in the DataFrame; "
                             "report columns need unique labels")
    if strategy == "one-column-per-row" and len(columns) > MAX_COLUMNS:
        raise ValueError(f"one-column-per-row handles at most {MAX_COLUMNS} columns; got {len(columns)}")
    fills = _fill_values(fill_value, columns)
    for c in columns:
        for v in sources[c] or []:
            _check_name(v, allow_none=False)
        _check_name(labels[c], allow_none=False)
        _check_mechanism(mechanisms[c], labels[c])
    _check_rng(rng)
    if unknown != "raise" and not any(_takes_unknown(mechanisms[c]) for c in columns):
        _prepare(mechanisms[columns[0]], None, None, nan_policy, None, unknown)  # the refusal
    prepared = [_prepare(mechanisms[c], df[list(sources[c])] if sources[c] is not None else df[c],
                         _subject(labels[c]), nan_policy, fills[c], unknown if _takes_unknown(mechanisms[c])
                         else "raise")
                for c in columns]
    planned = (math.fsum(mechanisms[c].epsilon for c in columns) if strategy == "all-columns"
               else max(mechanisms[c].epsilon for c in columns))
    delta = _shuffle_check(shuffled, shuffle_delta, df)
    ids = _ledger_check(ledger, planned, df, people)
    # Everything is valid: from here on, words are drawn.
    m, n = len(columns), len(df)
    streams = [child_rng(rng, j) for j in range(m + (strategy == "one-column-per-row"))]
    data, specs, epsilons, digests = {}, {}, [], {}
    if strategy == "all-columns":
        for j, c in enumerate(columns):
            mech, out_label = mechanisms[c], labels[c]
            codes = mech.column_codes(mech._randomize(prepared[j], streams[j]))
            if _digest:
                digests[out_label] = codes_digest(codes)
            data[out_label], specs[out_label] = _owned(codes), mech.spec
            epsilons.append(mech.epsilon)
        epsilon_per_row = math.fsum(epsilons)
    else:
        assigned = assign_columns(streams[m], n, m)
        for j, c in enumerate(columns):
            mech, out_label = mechanisms[c], labels[c]
            rows = np.flatnonzero(assigned == j)
            sub = prepared[j][rows]
            sub.flags.writeable = False
            own = mech.column_codes(mech._randomize(sub, streams[j]))
            if _digest:
                digests[out_label] = codes_digest(own)
            codes = np.zeros(n, dtype=own.dtype)
            codes[rows] = own
            mask = np.ones(n, dtype=bool)
            mask[rows] = False
            data[out_label], specs[out_label] = pd.arrays.IntegerArray(codes, mask), mech.spec
            epsilons.append(mech.epsilon)
        epsilon_per_row = max(epsilons)
    if ledger is not None:
        # under one-column-per-row each column's estimates show the central epsilon of its own reports: the
        # entry states the largest of them (the smallest column's), so the two agree
        counts = [int(len(v) - v.isna().sum()) for v in data.values()] if strategy == "one-column-per-row" else []
        ledger.record(epsilon=epsilon_per_row, people=ids, specs=specs, strategy=strategy, label=label,
                      shuffled=shuffled, shuffle_delta=shuffle_delta,
                      shuffle_n=min((c for c in counts if c), default=None) if shuffled else None)
    out = pd.DataFrame(data, index=df.index, copy=False)
    out.columns.name = df.columns.name
    _copy_other_attrs(df, out)
    return attach_specs(out, specs, strategy=strategy, epsilon_per_row=epsilon_per_row,
                        digests=digests if _digest else None,
                        sources={labels[c]: sources[c] for c in columns if sources[c] is not None},
                        shuffle_delta=delta)


def _ledger_check(ledger, epsilon, obj, people):
    """The people ids of a collection about to be drawn, after the ledger's cap check (None without a ledger)."""
    if ledger is None:
        if people is not None:
            raise ValueError("people= names the rows' people for a ledger; pass ledger= too")
        return None
    if not (hasattr(ledger, "check") and hasattr(ledger, "record")):
        raise TypeError(f"ledger must be an ldpnum.PrivacyLedger; got {type(ledger).__name__}")
    if people is not None and (isinstance(people, (str, bytes)) or np.ndim(people) == 0):
        # one label: a DataFrame's column of person ids (as the command line's --people-column), never the
        # characters of a string read as ids
        if not isinstance(obj, pd.DataFrame):
            raise TypeError(f"people must be the rows' person ids, one per row (array-like); got "
                            f"{type(people).__name__} {people!r} (a column name works for a DataFrame only)")
        if people not in obj.columns:
            raise ValueError(f"people={people!r} names no column of the DataFrame (its columns: "
                             f"{list(obj.columns)}); pass the column of person ids, or the ids themselves, one per "
                             "row")
        people = obj[people]
    ids = obj.index if people is None else people
    if people is not None and len(people) != len(obj):
        raise ValueError(f"people has {len(people)} ids for {len(obj)} rows")
    if isinstance(ids, pd.Series):
        ids = pd.Index(ids.to_numpy() if ids.dtype.kind in "iuO" else ids.astype(object).to_numpy())
    ledger.check(epsilon=epsilon, people=ids)
    return ids


def _row_epsilon(obj, agg):
    """The local ε of each person's row in a shuffled batch (``epsilon_per_row`` of the record, at least the
    column's own ε): every column of the batch, and the ledger's entry, show the central ε of that."""
    info = frame_info(obj) or {}
    eps = info.get("epsilon_per_row")
    return None if eps is None or eps <= agg.spec.epsilon else float(eps)


def _takes_unknown(mech):
    import inspect

    return "unknown" in inspect.signature(mech.prepare_values).parameters


def _prepare(mech, x, name, nan_policy, fill_value, unknown):
    """``mech.prepare_values`` of one column, with ``unknown=`` for the mechanisms that take it."""
    if unknown == "raise":
        return mech.prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value)
    if not _takes_unknown(mech):
        raise TypeError(f"unknown={unknown!r} applies to categorical mechanisms (frequency oracles such as "
                        f"ldp.GRR); {type(mech).__name__} takes values in bounds (out-of-range values are clipped)")
    return mech.prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value, unknown=unknown)


def _vector_sources(key, mech):
    """The value columns behind ``key`` (None for a mechanism of one column): the mechanism decides
    (:meth:`~ldpnum.Mechanism.source_columns`); a non-mechanism is refused later, by its own check."""
    return mech.source_columns(key) if isinstance(mech, Mechanism) else None


def _report_label(key):
    """The report column of a vector key: its column labels joined by commas (e.g. ``"q1,q2,q3"``)."""
    parts = [str(v) for v in key]
    bad = [p for p in parts if "," in p]
    if bad:
        raise ValueError(f"column label {bad[0]!r} contains a comma, which the report column label 'a,b,...' of a "
                         "vector key uses as separator; rename the column")
    return ",".join(parts)


# -- reading report columns ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _cached_mechanism(spec):
    return from_spec(spec)


def _mechanism(spec):
    """The mechanism of ``spec`` (mechanisms are immutable, so one instance per spec is shared)."""
    try:
        return _cached_mechanism(spec)
    except TypeError:  # a spec with an unhashable parameter
        return from_spec(spec)


def reports_of(s, spec=None, *, _check=True):
    """The :class:`~ldpnum.Reports` held by report column ``s``.

    Parameters
    ----------
    s : pandas.Series
        Integer report codes (a numpy or nullable integer dtype; floats holding whole numbers, as after a
        CSV round trip, are accepted). Missing cells are rows that did not report this column (the other
        columns of ``"one-column-per-row"``) and are left out.
    spec : Spec, optional
        Used when the column records no spec; must equal the recorded spec otherwise.

    Returns
    -------
    Reports

    Raises
    ------
    TypeError
        For a non-Series, non-integer codes, or a bit-vector spec.
    ValueError
        When no spec is known, or for codes outside the spec's alphabet (with the count and first index).
    SpecMismatchError
        When ``spec`` differs from the recorded one.

    Examples
    --------
    >>> import numpy as np, pandas as pd, ldpnum as ldp
    >>> from ldpnum.pandas import reports_of
    >>> m = ldp.GRR(epsilon=1.0, k=3)
    >>> s = pd.Series([0, 2, None, 1], dtype="UInt8")
    >>> r = reports_of(s, m.spec)
    >>> len(r), r.codes.dtype
    (3, dtype('uint8'))
    """
    if not isinstance(s, pd.Series):
        raise TypeError(f"reports_of expects a pandas Series; got {type(s).__name__}")
    spec = spec_for(s, s.name, spec)
    mech = _mechanism(spec)
    mech.check_column_codes("a column")
    dtype = s.dtype
    kind = getattr(dtype, "kind", "O")
    if not _is_real(dtype):
        raise TypeError(f"{_subject(s.name)} holds dtype {dtype}, not integer report codes")
    if (kind == "f" or isinstance(dtype, pd.api.extensions.ExtensionDtype)) and s.hasnans:
        s = s[s.notna()]  # rows that did not report this column (numpy integer columns have none)
    if kind in "iu":
        codes = s.to_numpy(dtype=getattr(dtype, "numpy_dtype", dtype))
    else:
        values = s.to_numpy(dtype=np.float64)
        whole = np.isfinite(values) & (values == np.round(values)) & (values >= 0)
        if not whole.all():
            bad = np.flatnonzero(~whole)
            raise ValueError(f"{_subject(s.name)} holds {bad.size} value(s) that are not report codes (non-negative "
                             f"whole numbers), first at position {bad[0]} ({values[bad[0]]!r})")
        codes = values.astype(np.uint64)
    if _check:
        check_codes(s, s.name, codes)
    try:
        return mech.reports_from_column(codes)
    except (TypeError, ValueError) as exc:
        check_codes(s, s.name, codes)  # a changed column is reported as such, before its odd codes
        raise type(exc)(f"{_subject(s.name)}: {exc}") from None


def concat(objs, **kwargs):
    """Concatenate report Series or DataFrames of one collection design, keeping their record.

    ``pandas.concat`` keeps ``attrs`` only when every part's are equal; report columns record a digest of
    their own codes, which differs between collections (days, batches), so ``pandas.concat`` drops the
    record and the result is no longer read as reports. This checks that every part is an unchanged report
    object, that the parts share specs, strategy and ``epsilon_per_row``, and records the combined specs and
    digests on the concatenation.

    Parts declared shuffled (``privatize(..., shuffled=True)``) were shuffled apart, not as one batch, so the
    concatenation is not declared shuffled: aggregate each part and merge the aggregates instead (``a + b``
    keeps the central ε of the smallest batch; see :meth:`ldpnum.Aggregate.shuffled`).

    Parameters
    ----------
    objs : iterable of pandas.Series or pandas.DataFrame
        Report objects (all Series or all DataFrames) with the same report columns.
    **kwargs
        Passed to :func:`pandas.concat` (rows only: ``axis=0``).

    Returns
    -------
    pandas.Series or pandas.DataFrame

    Raises
    ------
    ValueError
        For no parts, parts without an ldpnum record, a changed part (:class:`ReportsChangedError`), or
        parts with other columns, strategy or ``epsilon_per_row``.
    SpecMismatchError
        For a column whose specs differ between parts.

    Examples
    --------
    >>> import numpy as np, pandas as pd, ldpnum as ldp
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> day1 = pd.Series(np.full(50, 0.3), name="x").ldp.privatize(m, rng=1)
    >>> day2 = pd.Series(np.full(70, 0.6), name="x").ldp.privatize(m, rng=2)
    >>> ldp.pandas.concat([day1, day2]).ldp.aggregate() == day1.ldp.aggregate() + day2.ldp.aggregate()
    True
    """
    objs = list(objs)
    if not objs:
        raise ValueError("concat needs at least one report object")
    if kwargs.get("axis", 0) not in (0, "index"):
        raise ValueError("concat joins report rows (axis=0); join columns with pandas.concat(axis=1) and "
                         "estimate each column from its own object")
    kinds = {isinstance(o, pd.Series) for o in objs}
    if not all(isinstance(o, (pd.Series, pd.DataFrame)) for o in objs) or len(kinds) != 1:
        raise TypeError("concat expects report Series only or report DataFrames only")
    infos = [frame_info(o) for o in objs]
    if any(info is None for info in infos):
        raise ValueError(f"part {[i for i, info in enumerate(infos) if info is None][0]} carries no ldpnum record: "
                         "it is not a report object")
    specs = column_specs(objs[0])
    series = kinds == {True}
    for i, (o, info) in enumerate(zip(objs, infos)):
        if column_specs(o).keys() != specs.keys():
            raise ValueError(f"part {i} records columns {list(column_specs(o))}, part 0 {list(specs)}")
        for c, sp in column_specs(o).items():
            check_spec(specs[c], sp, f"reports in column {c!r} of part {i}")
        for key in ("strategy", "epsilon_per_row"):
            if info.get(key) != infos[0].get(key):
                raise ValueError(f"part {i} has {key} {info.get(key)!r}, part 0 {infos[0].get(key)!r}: they are "
                                 "not one collection design")
        for col in ([o] if series else [o[c] for c in specs]):
            reports_of(col)  # raises ReportsChangedError for a changed part
    digests = {}
    for c in specs:
        parts = [column_digest(o, c) for o in objs]
        if all(d is not None for d in parts):
            digests[c] = add_digests(*parts)
    out = pd.concat(objs, **kwargs)
    sources = {c: column_sources(objs[0], c) for c in specs if column_sources(objs[0], c) is not None}
    return attach_specs(out, specs, strategy=infos[0].get("strategy"),
                        epsilon_per_row=infos[0].get("epsilon_per_row"), digests=digests, sources=sources)


def aggregate_series(s, spec=None):
    """The mergeable :class:`~ldpnum.Aggregate` of report column ``s`` (see :func:`reports_of`).

    Examples
    --------
    >>> import numpy as np, pandas as pd, ldpnum as ldp
    >>> from ldpnum.pandas import aggregate_series
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> s = pd.Series(np.linspace(0, 1, 100), name="x").ldp.privatize(m, rng=0)
    >>> aggregate_series(s).n_reports
    100
    """
    reports = reports_of(s, spec, _check=False)
    mech = _mechanism(reports.spec)
    try:
        agg = mech.aggregate(reports)
    except ValueError:
        check_codes(s, s.name, mech.column_codes(reports))  # a changed column is reported as such first
        raise
    if column_digest(s, s.name) is not None:
        # one code per report: the aggregate's counts are the codes' histogram, whose digest costs O(cells)
        one_code = agg._n_reports is None and reports.codes.ndim == 1 and agg.spec.n_cells <= 1 << 16
        check_codes(s, s.name, None if one_code else mech.column_codes(reports),
                    digest=histogram_digest(agg.counts) if one_code else None)
    delta = shuffle_delta_of(s)
    return agg if delta is None or not agg.n_reports else agg.shuffled(delta, epsilon0=_row_epsilon(s, agg))


def estimate_mean_named(mech, agg, record, name):
    """``mech.estimate_mean(agg)`` named after report column ``name`` of ``record`` (an object carrying the
    report record): a vector column's coordinates take the names of the value columns it was privatized from."""
    names = column_sources(record, name)
    if names is not None:
        return _need(mech, "estimate_mean")(agg, names=names)
    return named(_need(mech, "estimate_mean")(agg), name)


def _no_other_arguments(what, kwargs):
    """A clear TypeError for keywords a privatizing call does not take (rather than Python's bare one)."""
    if not kwargs:
        return
    name = next(iter(kwargs))
    hint = {"bandwidth": "a mechanism's parameters are given to its constructor (e.g. "
                         "ldp.GeneralWave(epsilon, bounds, shape=...)), estimator settings to the "
                         "estimate (e.g. reports.ldp.estimate_distribution(...))",
            "out_of_range": "out-of-range values are clipped with a ClippingWarning; check them before privatizing "
                            "to refuse them instead"}.get(name, "see help(" + what + ")")
    raise TypeError(f"{what} got an unexpected keyword argument {name!r}: {hint}")


def _run_sets(protocol, finds, s, rng, truncate, shuffled, shuffle_delta, ledger=None, people=None, label=None):
    """``protocol.run`` on a column of sets, for a protocol that finds ``finds`` ("items" or "itemsets");
    ``shuffled``/``shuffle_delta`` go to it unchanged (each phase one shuffled batch). With a ledger, the cap is
    checked before anything is drawn and the collection recorded after it: each person reports in one phase with
    the protocol's full ε (parallel composition over the phases), so each spends ``protocol.epsilon``."""
    if getattr(protocol, "finds", None) != finds:
        want = "ldp.SVIM(...)" if finds == "items" else "ldp.SVSM(...)"
        raise TypeError(f"frequent_{finds} needs a set-valued protocol that finds {finds}, e.g. {want}; got "
                        f"{type(protocol).__name__}")
    _check_rng(rng)
    if shuffled:
        _shuffle_check(shuffled, shuffle_delta)
    ids = _ledger_check(ledger, protocol.epsilon, s, people)
    result = protocol.run(s, rng=rng, truncate=truncate, shuffled=shuffled, shuffle_delta=shuffle_delta)
    if ledger is not None:
        ledger.record(epsilon=protocol.epsilon, people=ids, specs=[repr(protocol)], label=label, shuffled=shuffled,
                      shuffle_delta=shuffle_delta)
    return named(result, s.name) if hasattr(result, "name") else result


def _queryable(mech, agg, kw):
    """The estimate that answers quantiles and ranges (the mechanism's :meth:`~ldpnum.mechanisms.Mechanism.queryable_estimate`)."""
    return mech.queryable_estimate(agg, **kw)


def _need(mech, method):
    if not mech.offers(method):
        raise TypeError(f"{type(mech).__name__} reports do not estimate {ESTIMATORS[method]} (they estimate "
                        f"{mech.answers})")
    return getattr(mech, method)


def describe_aggregates(aggregates, *, level=0.95, sources=None, bootstrap=None, rng=None):
    """Per column: the mean with its confidence interval and the quartiles, from aggregates.

    Parameters
    ----------
    aggregates : mapping
        Column label -> :class:`~ldpnum.Aggregate` (e.g. merged over partitions). Columns of frequency
        oracles (categories, not numbers) are left out; a vector report column gives one row per
        coordinate (means only).
    sources : mapping, optional
        Vector report column label -> the names of its coordinates (the value columns), for the row labels.
    bootstrap : int, optional
        Bootstrap the distribution estimates with this many replicates (e.g. 200; mechanisms whose
        ``estimate_distribution`` takes ``bootstrap=``) and add ``level`` intervals of the quartiles:
        columns ``25% low``, ``25% high``, ... (NaN for the others). ``rng`` seeds the resampling.
    level : float, optional
        Confidence level of the interval (default 0.95).

    Returns
    -------
    pandas.DataFrame
        One row per column: ``mechanism``, ``epsilon`` (each report's local ε), ``central_epsilon`` (only when
        some aggregate is declared shuffled: the central ε of its batch, NaN for the others), ``n_reports``;
        ``mean``, ``std_error``, ``ci_low``, ``ci_high``: the **unbiased** mean estimate with its standard error and interval (NaN for mechanisms
        without one, e.g. hierarchical histograms); ``dist_mean``: the mean of the **estimated
        distribution**; and the quartiles ``25%``, ``50%``, ``75%`` of that distribution (NaN for
        mechanisms that estimate means only). Default estimator settings.

    Categorical columns (frequency oracles) and item columns (heavy hitters such as PEM) have no mean or
    quartiles: they are left out of the table, and a frame with nothing else is refused with a ValueError
    that names them and the methods that estimate them (an empty table would look like "nothing to report").

    Notes
    -----
    *Which mean to use.* ``mean`` averages every report's own unbiased estimate: its expectation is the
    true mean, and its interval covers it at the stated level; quote it when the mean is the question.
    ``dist_mean`` is the mean of the reconstructed distribution, which the quantiles and plots describe: the
    estimator (EM/EMS, least squares with non-negativity) keeps the distribution inside the bounds and
    smooths it, which pulls mass from the tails towards the middle, so ``dist_mean`` is biased (most at
    small ε and small n) and has no standard error. It agrees with ``mean`` within a few standard errors
    when the distribution is well estimated; use it to keep one coherent picture next to the quartiles.
    """
    rows, index, skipped = [], [], []
    sources = sources or {}
    for name, agg in aggregates.items():
        mech = _mechanism(agg.spec)
        if mech.categorical:
            skipped.append((name, mech))  # categories and items, not numbers
            continue
        row = {"mechanism": agg.spec.mechanism, "epsilon": agg.spec.epsilon, "n_reports": agg.n_reports,
               "central_epsilon": np.nan if agg.shuffle is None else agg.shuffle.epsilon}
        for label, stats in mech.describe_rows(agg, column=name, names=sources.get(name), level=level,
                                               bootstrap=bootstrap, rng=rng):
            rows.append({**row, **stats})
            index.append(label)
    columns = ["mechanism", "epsilon", "n_reports", "mean", "std_error", "ci_low", "ci_high", "dist_mean", "25%",
               "50%", "75%"]
    if any(a.shuffle is not None for a in aggregates.values()):
        columns.insert(2, "central_epsilon")
    if bootstrap is not None:
        columns += [f"{p} {side}" for p in ("25%", "50%", "75%") for side in ("low", "high")]
    if not rows and skipped:
        what = ", ".join(f"{name!r} ({type(mech).__name__}: {mech.answers})" for name, mech in skipped)
        raise ValueError(f"describe() summarises numerical report columns (mean, interval, quartiles); this "
                         f"frame has only categorical or item columns: {what}. Estimate those with their own "
                         "methods, e.g. df[column].ldp.estimate_frequencies() or df[column].ldp.heavy_hitters()")
    return pd.DataFrame(rows, index=pd.Index(index, name="column"), columns=columns)


def _budget_text(info):
    if info is None or info.get("epsilon_per_row") is None:
        return ""
    strategy = info.get("strategy")
    shuffled = "" if info.get("shuffle_delta") is None else f"; shuffled (central delta {info['shuffle_delta']:g})"
    return f"epsilon per row {info['epsilon_per_row']:g}" + (f" ({strategy})" if strategy else "") + shuffled


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
        if not (_is_real(dtype) or pd.api.types.is_bool_dtype(dtype) or _is_text(dtype)):
            raise AttributeError(f"the .ldp accessor works on Series of real numbers or bools (values), of "
                                 f"text items (heavy hitters) and of integer codes (reports); "
                                 f"{_subject(obj.name)} has dtype {dtype}: {dtype_hint(dtype)}")

    # -- privatizing
    def privatize(self, mechanism: Any, *, rng: SeedLike = None, nan_policy: str = "raise",
                  fill_value: float | None = None, ledger: Any = None, people: Any = None,
                  label: str | None = None, epsilon: float | None = None, bounds: Any = None,
                  task: str = "distribution", shuffled: bool = False, shuffle_delta: float = 1e-6,
                  unknown: str = "raise", **kwargs: Any) -> pd.Series:
        """Privatize the values: see :func:`privatize_series`.

        ``mechanism="auto"`` (with ``epsilon`` and ``bounds``) uses the mechanism :func:`ldpnum.recommend`
        picks for ``task`` ("mean", "distribution", "quantiles" or "ranges") at this column's length.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> s = pd.Series(np.random.default_rng(0).uniform(0, 100, 1000), name="age")
        >>> s.ldp.privatize("auto", epsilon=4.0, bounds=(0, 100), task="mean", rng=1).ldp.spec.mechanism
        'hybrid'
        """
        _no_other_arguments("Series.ldp.privatize", kwargs)
        if isinstance(mechanism, str) and mechanism == "auto":
            if epsilon is None or bounds is None:
                raise ValueError("mechanism='auto' needs epsilon= and bounds= (the public range of the values)")
            from ._recommend import recommend

            mechanism = recommend(task, n=max(len(self._obj), 1), epsilon=epsilon, bounds=bounds).mechanism
        elif epsilon is not None or bounds is not None:
            raise ValueError("epsilon= and bounds= go with mechanism='auto'; a mechanism carries its own")
        return privatize_series(self._obj, mechanism, rng=rng, nan_policy=nan_policy, fill_value=fill_value,
                                ledger=ledger, people=people, label=label, shuffled=shuffled,
                                shuffle_delta=shuffle_delta, unknown=unknown)

    # -- what the column is
    @property
    def spec(self) -> Spec | None:
        """The :class:`~ldpnum.Spec` recorded for this report column (None for a column of values)."""
        return column_specs(self._obj).get(self._obj.name)

    @property
    def epsilon_per_row(self):
        """The total ε each row (person) spent on the collection the column comes from (None if unknown)."""
        info = frame_info(self._obj)
        return None if info is None else info.get("epsilon_per_row")

    def __repr__(self):
        spec = self.spec
        if spec is None:
            return f"<ldp accessor: {_subject(self._obj.name)}, values (no ldpnum spec)>"
        budget = _budget_text(frame_info(self._obj))
        return f"<ldp accessor: {_subject(self._obj.name)}, reports of {spec}{'; ' + budget if budget else ''}>"

    # -- estimating
    def reports(self, spec: Spec | None = None) -> Reports:
        """The column's :class:`~ldpnum.Reports` (see :func:`reports_of`)."""
        return reports_of(self._obj, spec)

    def aggregate(self, spec: Spec | None = None) -> Aggregate:
        """The column's mergeable :class:`~ldpnum.Aggregate` (see :func:`aggregate_series`)."""
        return aggregate_series(self._obj, spec)

    def _mech_agg(self, spec):
        agg = aggregate_series(self._obj, spec)
        return _mechanism(agg.spec), agg

    def estimate_mean(self, spec: Spec | None = None) -> Any:
        """Unbiased :class:`~ldpnum.MeanEstimate` of the mean (mean oracles and distribution mechanisms), or
        a :class:`~ldpnum.vectors.VectorMeanEstimate` for a vector report column (coordinates named by the
        value columns)."""
        mech, agg = self._mech_agg(spec)
        return estimate_mean_named(mech, agg, self._obj, self._obj.name)

    def estimate_distribution(self, spec: Spec | None = None, **kwargs: Any) -> DistributionEstimate:
        """:class:`~ldpnum.DistributionEstimate` of the values; ``kwargs`` go to the mechanism's estimator."""
        mech, agg = self._mech_agg(spec)
        return named(_need(mech, "estimate_distribution")(agg, **kwargs), self._obj.name)

    def estimate_ranges(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.RangeEstimate` (hierarchical histograms); ``kwargs`` go to ``estimate_ranges``."""
        mech, agg = self._mech_agg(spec)
        return named(_need(mech, "estimate_ranges")(agg, **kwargs), self._obj.name)

    def estimate_frequencies(self, spec: Spec | None = None, **kwargs: Any) -> FrequencyEstimate:
        """:class:`~ldpnum.FrequencyEstimate` of the categories (frequency oracles)."""
        mech, agg = self._mech_agg(spec)
        return named(_need(mech, "estimate_frequencies")(agg, **kwargs), self._obj.name)

    def heavy_hitters(self, spec: Spec | None = None, **kwargs: Any) -> "HeavyHittersEstimate":
        """:class:`~ldpnum.HeavyHittersEstimate`: the most frequent items (PEM, TreeHist reports);
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
        mech, agg = self._mech_agg(spec)
        return named(_need(mech, "estimate_heavy_hitters")(agg, **kwargs), self._obj.name)

    def estimate_marginals(self, spec: Spec | None = None, **kwargs: Any) -> Any:
        """:class:`~ldpnum.MarginalsEstimate` of a report column of several categorical columns
        (:class:`~ldpnum.Marginals`); ``kwargs`` go to ``estimate_marginals`` (e.g. ``consistency``).

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
        return _need(mech, "estimate_marginals")(agg, **kwargs)

    def frequent_items(self, protocol: Any, *, rng: SeedLike = None, truncate: bool = True, shuffled: bool = False,
                       shuffle_delta: float = 1e-6, ledger: Any = None, people: Any = None,
                       label: str | None = None) -> "HeavyHittersEstimate":
        """The most frequent items of a column of sets (each cell a set, list or tuple of str, bytes or
        int items): a simulation of ``protocol``'s whole multi-phase collection on the column
        (``protocol.run``, e.g. :class:`~ldpnum.SVIM`); for a real collection use the protocol's phases
        (see its documentation). ``shuffled=True`` declares each phase's reports one shuffled batch (central
        δ ``shuffle_delta``): the result shows the collection's central ε, the largest over the phases.
        ``ledger``, ``people``, ``label``: as for :meth:`privatize`; each person reports in one phase with
        the protocol's ε, so each spends ``protocol.epsilon`` (checked against the cap before any draw).

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> baskets = [["milk", "bread"], ["milk"], ["tea"]]
        >>> s = pd.Series([baskets[i] for i in np.random.default_rng(0).choice(3, 30_000, p=[.5, .3, .2])])
        >>> s.ldp.frequent_items(ldp.SVIM(epsilon=4.0, top_k=2), rng=1).items
        ('milk', 'bread')
        """
        return _run_sets(protocol, "items", self._obj, rng, truncate, shuffled, shuffle_delta, ledger, people, label)

    def frequent_itemsets(self, protocol: Any, *, rng: SeedLike = None, truncate: bool = True, shuffled: bool = False,
                          shuffle_delta: float = 1e-6, ledger: Any = None, people: Any = None,
                          label: str | None = None) -> Any:
        """The most frequent itemsets (frozensets, single items included) of a column of sets: a simulation of
        ``protocol``'s collection (e.g. :class:`~ldpnum.SVSM`) on the column; an
        :class:`~ldpnum.ItemsetsEstimate`. ``shuffled``, ``shuffle_delta``, ``ledger``, ``people``, ``label``: as
        for :meth:`frequent_items`."""
        return _run_sets(protocol, "itemsets", self._obj, rng, truncate, shuffled, shuffle_delta, ledger, people,
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
        est = _queryable(mech, agg, kwargs)
        if np.ndim(q) == 0:
            return float(est.quantile(q))
        qs = np.asarray(q, dtype=np.float64)
        return pd.Series(np.asarray(est.quantile(qs), dtype=np.float64), index=pd.Index(qs), name=self._obj.name)

    def range(self, lo: Any, hi: ArrayLike | None = None, *, spec: Spec | None = None, **kwargs: Any) -> Any:
        """Estimated fraction of people with values in ``[lo, hi]`` (arrays broadcast).

        A report column of several value columns (:class:`~ldpnum.HDG`) takes one query mapping instead,
        ``{column: (lo, hi), ...}``, passed to its estimate's ``range``."""
        mech, agg = self._mech_agg(spec)
        est = _queryable(mech, agg, kwargs)
        if hi is None:
            if not isinstance(lo, Mapping):
                raise TypeError("range needs lo and hi (or, for a report column of several value columns, one "
                                "mapping {column: (lo, hi)})")
            return est.range(lo)
        return est.range(lo, hi)


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

    def privatize(self, mechanisms: Mapping[Any, Mechanism], *, rng: SeedLike = None,
                  strategy: "str | None" = None, nan_policy: str = "raise",
                  fill_value: Any = None, ledger: Any = None, people: Any = None,
                  label: str | None = None, shuffled: bool = False, shuffle_delta: float = 1e-6,
                  unknown: str = "raise", **kwargs: Any) -> pd.DataFrame:
        """Privatize columns: see :func:`privatize_frame`.

        ``mechanisms`` maps columns to mechanisms; ``mechanism="auto"`` with ``epsilon=``/``bounds=`` is the
        Series accessor's (one column, one public range): ``df[c].ldp.privatize("auto", epsilon=...,
        bounds=...)``, or build each column's mechanism with :func:`ldpnum.recommend`. ``people`` may name
        the frame's column of person ids."""
        if "mechanism" in kwargs or "epsilon" in kwargs or "bounds" in kwargs or "task" in kwargs:
            raise TypeError("DataFrame.ldp.privatize takes a mapping {column: mechanism}; mechanism='auto' with "
                            "epsilon=, bounds= and task= chooses the mechanism of one column: use "
                            "df[column].ldp.privatize('auto', epsilon=..., bounds=...), or give each column "
                            "ldp.recommend(task, n=len(df), epsilon=..., bounds=...).mechanism in the mapping")
        _no_other_arguments("DataFrame.ldp.privatize", kwargs)
        return privatize_frame(self._obj, mechanisms, rng=rng, strategy=strategy, nan_policy=nan_policy,
                               fill_value=fill_value, ledger=ledger, people=people, label=label, shuffled=shuffled,
                               shuffle_delta=shuffle_delta, unknown=unknown)

    @property
    def specs(self):
        """Report column -> :class:`~ldpnum.Spec`, for the recorded columns present in the frame."""
        return {c: s for c, s in column_specs(self._obj).items() if c in self._obj.columns}

    @property
    def epsilon_per_row(self):
        """Total ε each row spent: the sum of the columns' ε ("all-columns") or their max
        ("one-column-per-row"). None for a frame that is not a report frame."""
        info = frame_info(self._obj)
        return None if info is None else info.get("epsilon_per_row")

    @property
    def strategy(self):
        """The strategy the report columns were privatized with (None if unknown)."""
        info = frame_info(self._obj)
        return None if info is None else info.get("strategy")

    def __repr__(self):
        specs = self.specs
        if not specs:
            return "<ldp accessor: no report columns>"
        lines = [f"<ldp accessor: {len(specs)} report column(s); {_budget_text(frame_info(self._obj))}"]
        lines += [f"  {c!r}: {s}" for c, s in specs.items()]
        return "\n".join(lines) + ">"

    def _specs_for(self, specs):
        if specs is None:
            specs = {}
        elif not isinstance(specs, Mapping):
            raise TypeError(f"specs must be a mapping {{column: Spec}}; got {type(specs).__name__}")
        names = list(self.specs) + [c for c in specs if c not in self.specs]
        for c in names:
            if c not in self._obj.columns:
                raise ValueError(f"column {c!r} is not in the DataFrame; its columns: {list(self._obj.columns)}")
        return names, specs

    def estimate_mean(self, column: Any) -> pd.Series:
        """Unbiased means of one report column as a Series: a vector column (``column`` its tuple key, e.g.
        ``("q1", "q2")``, or its label ``"q1,q2"``) indexed by its value columns; a one-value column as a
        Series of one entry. For standard errors use ``reports[label].ldp.estimate_mean()``.

        Examples
        --------
        >>> import numpy as np, pandas as pd, ldpnum as ldp
        >>> df = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (40_000, 2)), columns=["q1", "q2"])
        >>> m = ldp.SampledDimensions("piecewise", 4.0, [(0, 1), (0, 1)])
        >>> r = df.ldp.privatize({("q1", "q2"): m}, rng=1)
        >>> r.columns.tolist(), r.ldp.estimate_mean(("q1", "q2")).round(1).to_dict()
        (['q1,q2'], {'q1': 0.5, 'q2': 0.5})
        """
        label = _report_label(column) if isinstance(column, tuple) else column
        if label not in self._obj.columns:
            raise ValueError(f"report column {label!r} is not in the DataFrame; its columns: {list(self._obj.columns)}")
        column_reports = self._obj[label]
        mech, agg = column_reports.ldp._mech_agg(None)
        return estimate_mean_named(mech, agg, column_reports, label).to_series()

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
        names, specs = self._specs_for(specs)
        if by is None:
            return {c: aggregate_series(self._obj[c], specs.get(c)) for c in names}
        keys = self._group_keys(by, names)
        whole = {c: aggregate_series(self._obj[c], specs.get(c)) for c in names}  # checks each record once
        groups = pd.unique(keys)
        try:
            groups = sorted(groups)
        except TypeError:  # keys of mixed types: first-seen order
            pass
        out: dict[Any, dict[Any, Aggregate]] = {}
        for g in groups:
            rows = np.asarray(keys == g)
            out[g] = {c: _mechanism(whole[c].spec).aggregate(
                reports_of(self._obj[c][rows], whole[c].spec, _check=False)) for c in names}
        for c in names:  # the groups partition the rows: their aggregates add up to the column's
            total = sum((out[g][c] for g in groups[1:]), out[groups[0]][c]) if len(groups) else None
            if total is not None and total != whole[c]:  # pragma: no cover - a partition always adds up
                raise AssertionError(f"group aggregates of column {c!r} do not add up")
        return out

    def _group_keys(self, by, names):
        n = len(self._obj)
        if isinstance(by, str) or np.ndim(by) == 0:
            if by not in self._obj.columns:
                raise ValueError(f"by={by!r} is not a column of the DataFrame; its columns: {list(self._obj.columns)}")
            if by in names:
                raise ValueError(f"by={by!r} is a report column: its codes are randomized, not group keys; group by "
                                 "a public column")
            keys = self._obj[by]
        else:
            if isinstance(by, pd.Series):  # aligned on the index (rows without a key are missing keys)
                by = by.reindex(self._obj.index) if by.index.is_unique else by
            values = by.to_numpy() if isinstance(by, (pd.Series, pd.Index)) else np.asarray(by, dtype=object)
            if values.ndim != 1 or len(values) != n:
                raise ValueError(f"by has {len(values)} keys for {n} rows: give one key per row (or a column name)")
            keys = pd.Series(values, index=self._obj.index)
        missing = keys.isna()
        if missing.any():
            first = int(np.flatnonzero(missing.to_numpy())[0])
            raise ValueError(f"the group key has {int(missing.sum())} missing value(s), first at row {first}: every "
                             "report belongs to a group (fill them with a group of their own)")
        return keys.to_numpy()

    def describe(self, *, level: float = 0.95, specs: Mapping[Any, Spec] | None = None,
                 by: Any = None, bootstrap: int | None = None, rng: Any = None) -> pd.DataFrame:
        """Per report column: mean with a ``level`` confidence interval and quartiles; with ``by`` (a public
        group key, see :meth:`aggregate`), per group and column (a two-level row index); with ``bootstrap=B``
        (e.g. 200), ``level`` intervals of the quartiles too (``25% low``, ``25% high``, ...).

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
        sources = {c: column_sources(self._obj, c) for c in self.specs if column_sources(self._obj, c) is not None}
        if by is None:
            return describe_aggregates(self.aggregate(specs), level=level, sources=sources, bootstrap=bootstrap,
                                       rng=rng)
        parts = {}
        for g, aggregates in self.aggregate(specs, by=by).items():
            for c, agg in aggregates.items():
                if agg.n_reports == 0:
                    raise ValueError(f"group {g!r} has no reports in column {c!r}: nothing can be estimated for it "
                                     "(merge it with another group, or collect more)")
            parts[g] = describe_aggregates(aggregates, level=level, sources=sources, bootstrap=bootstrap, rng=rng)
        label = by if isinstance(by, str) else "group"
        return pd.concat(parts, names=[label])
