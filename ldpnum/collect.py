r"""The one table-collection layer: columns under a strategy, batches of rows, report columns read back.

Every front end that turns a *table* into report columns — the pandas accessor (:mod:`ldpnum.pandas`, per
frame, and through it the Polars namespaces of :mod:`ldpnum.polars`), the command line (:func:`ldpnum.io.privatize_file`, per Arrow batch of a file), Dask and other engines
(:mod:`ldpnum.dask`, :mod:`ldpnum.engines`, per partition) — calls the functions here, so a collection is
planned, randomized, recorded and read back the same way everywhere, and a seeded collection gives the same
reports through every front end. The front ends keep only what is theirs: reading their input, and wrapping
the codes in their own objects (pandas columns, Arrow arrays, Dask partitions).

Planning (:func:`plan_columns`)
    A mapping ``{key: mechanism}`` becomes a :class:`CollectionPlan`: one report column per key (a tuple key
    names the value columns of a vector mechanism, whose report column is labelled ``"a,b,..."``), the
    strategy that shares each row's budget (:data:`STRATEGIES`), the ε each row spends, and the random
    streams: report column ``j`` draws from ``child_rng(rng, j)`` and, under ``"one-column-per-row"``, the
    rows' columns from ``child_rng(rng, m)`` (:meth:`CollectionPlan.streams`); each stream is shared by all
    batches of one collection, so the reports do not depend on how the rows are batched. A partition of a
    distributed collection draws from its own stream ``child_rng(seed, i)`` (:func:`partition_rng`).
Privatizing a batch
    The front end validates every column of a batch first (:func:`prepare_column`: the mechanism's own
    ``prepare_values``), then :func:`privatize_batch` assigns the rows' columns, draws, and returns each
    report column's codes, the mask of rows that did not report it and the digest of its codes
    (:func:`ldpnum._frame.codes_digest`). :func:`check_shuffle`, :func:`check_memoized` (keys and memoized
    columns, in the caller's words: :class:`ArgumentNames`) and :func:`check_ledger` run before the first draw,
    :func:`record_ledger` after the last (what it charges: :meth:`CollectionPlan.ledger_charge`).
    :meth:`CollectionPlan.record` is what the collection records beside its reports (every column's spec, the
    strategy, ``epsilon_per_row``, digests, a shuffle declaration): the accessor in ``attrs``, the command line
    in the Parquet file's metadata.
Reading a report column back
    :func:`reports_of` and :func:`aggregate_series` read a report column's spec from its record, rebuild its
    mechanism (:func:`mechanism_of`, one cached instance per spec), check its codes against the digest
    recorded for them (a changed column is refused) and give its :class:`~ldpnum.Reports` or
    :class:`~ldpnum.Aggregate`, declared shuffled when the record says so (:func:`declare_shuffled`, also
    applied by Dask to the aggregate merged over partitions). :func:`estimator` picks the mechanism's
    estimator or says what its reports estimate instead. :func:`answer_queries` answers named questions of a
    column's aggregate (:data:`QUERIES`: ``ldpnum estimate --what``; :func:`check_queries` refuses, before a
    report is read, what the mechanism cannot answer), :func:`describe_aggregates` the fixed
    summary of ``describe``.
pandas objects
    :func:`privatize_series` and :func:`privatize_frame` (pandas in, pandas out) are the accessor's
    privatizing functions and the per-partition work of :func:`ldpnum.engines.partition_privatize`;
    :mod:`ldpnum.pandas` re-exports them with the read-back functions, :func:`concat` and
    :func:`describe_aggregates`.

Strategies
----------
``"all-columns"``
    Each row reports every column: by sequential composition it spends
    :math:`\varepsilon_\text{row} = \sum_j \varepsilon_j`.
``"one-column-per-row"``
    Each row reports **one** column, drawn uniformly and independently of every value
    (:func:`ldpnum._random.assign_columns`), with that column's full :math:`\varepsilon_j`, and spends
    :math:`\varepsilon_\text{row} = \max_j \varepsilon_j` (T. Wang, N. Li, S. Jha, "Locally Differentially
    Private Heavy Hitter Identification").

Examples
--------
>>> import numpy as np, ldpnum as ldp
>>> from ldpnum.collect import plan_columns
>>> plan = plan_columns({"a": ldp.SquareWave(1.0, (0, 1)), "b": ldp.Duchi(2.0, (0, 1))},
...                     "one-column-per-row")
>>> plan.labels, plan.epsilon_per_row
(['a', 'b'], 2.0)
"""

import copy
import functools
import math
import numbers
import warnings
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._frame import (
    ATTRS_KEY,
    add_digests,
    attach_specs,
    check_codes,
    codes_digest,
    column_digest,
    column_sources,
    column_specs,
    frame_info,
    histogram_digest,
    report_record,
    spec_for,
)
from ._random import MAX_ASSIGNED, assign_columns, child_rng, resolve_rng
from ._results import ESTIMATE_METHODS, named
from ._typing import SeedLike
from ._validation import check_choice, check_scalar
from .aggregate import Aggregate
from .base import ESTIMATORS
from .exceptions import BudgetWarning
from .longitudinal.keys import ClientKeys, check_keys
from .mechanisms import Mechanism, from_spec
from .reports import Reports
from .spec import Spec, check_spec

__all__ = ["MAX_COLUMNS", "NAN_POLICIES", "PYTHON_NAMES", "QUERIES", "STRATEGIES", "ArgumentNames", "BatchReports",
           "CollectionPlan", "ColumnPlan", "MarginalQueryError", "aggregate_frame", "aggregate_series", "answer_queries", "assign_rows",
           "marginal_lines",
           "check_describe_method", "check_estimate_method", "check_ledger", "check_memoized", "check_no_other_arguments",
           "check_queries", "check_rng", "check_round", "check_shuffle",
           "column_subject", "concat", "declare_shuffled", "describe_aggregates", "describe_frame", "empty_values",
           "estimate_mean_named", "estimator", "fill_values", "group_keys", "is_real_dtype", "is_text_dtype", "mechanism_of", "partition_rng", "plan_columns",
           "prepare_column", "privatize_batch", "privatize_frame", "privatize_series", "record_ledger",
           "report_label", "reports_of", "resolve_strategy", "run_seed", "run_sets", "subset", "takes_unknown", "vector_sources"]

#: How the columns of a table share each row's privacy budget.
STRATEGIES = ("all-columns", "one-column-per-row")

#: At most this many columns in "one-column-per-row" (see :func:`ldpnum._random.assign_columns`).
MAX_COLUMNS = MAX_ASSIGNED

#: What a front end does with missing values: refuse them, or impute a public fill value.
NAN_POLICIES = ("raise", "impute")


# -- planning -------------------------------------------------------------------------------------------------

def resolve_strategy(strategy: str | None, mechanisms: Any, *, stacklevel: int = 3) -> str:
    """``strategy``, or the default ``"all-columns"`` when it is None.

    The default comes with a :class:`~ldpnum.exceptions.BudgetWarning` when it sums the ε of several columns (an
    explicit strategy is silent). Every integration that privatizes frames resolves its default here.

    Examples
    --------
    >>> resolve_strategy("one-column-per-row", {})
    'one-column-per-row'
    """
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


def vector_sources(key: Hashable, mech: Any) -> list | None:
    """The value columns behind ``key`` (None for a mechanism of one column).

    The mechanism decides (:meth:`~ldpnum.Mechanism.source_columns`); a non-mechanism is refused later, by its own
    check.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> vector_sources(("q1", "q2"), ldp.SampledDimensions("piecewise", 1.0, [(0, 1), (0, 1)]))
    ['q1', 'q2']
    >>> vector_sources("x", ldp.Duchi(1.0, (0, 1))) is None
    True
    """
    return mech.source_columns(key) if isinstance(mech, Mechanism) else None


def report_label(key: tuple) -> str:
    """The report column of a vector key: its column labels joined by commas (e.g. ``"q1,q2,q3"``).

    Examples
    --------
    >>> report_label(("q1", "q2", 3))
    'q1,q2,3'
    """
    parts = [str(v) for v in key]
    bad = [p for p in parts if "," in p]
    if bad:
        raise ValueError(f"column label {bad[0]!r} contains a comma, which the report column label 'a,b,...' of a "
                         "vector key uses as separator; rename the column")
    return ",".join(parts)


@dataclass(frozen=True)
class ColumnPlan:
    """One report column of a collection.

    Attributes
    ----------
    key : hashable
        The key of the front end's mapping: a column label, or a tuple of the value columns of a vector
        mechanism.
    label : hashable
        The report column's label (``key``, or ``"a,b,..."`` for a tuple key).
    mechanism : ldpnum.Mechanism
        Its randomizer.
    sources : list or None
        The value columns it reads (None: the one column ``key``).
    """

    key: Any
    label: Any
    mechanism: Any
    sources: list | None

    @property
    def value_columns(self) -> list:
        """The input columns the report column is privatized from."""
        return list(self.sources) if self.sources is not None else [self.key]


@dataclass(frozen=True)
class CollectionPlan:
    """The report columns of one collection and the strategy that shares each row's budget among them.

    Built by :func:`plan_columns`; immutable, so one plan serves every batch and partition.
    """

    columns: tuple[ColumnPlan, ...]
    strategy: str

    @property
    def labels(self) -> list:
        """The report columns' labels, in the mapping's order."""
        return [c.label for c in self.columns]

    @property
    def mechanisms(self) -> dict:
        """Report column label -> mechanism."""
        return {c.label: c.mechanism for c in self.columns}

    @property
    def sources(self) -> dict:
        """Report column label -> its value columns (None for a column of one value per row)."""
        return {c.label: c.sources for c in self.columns}

    @property
    def memoized(self) -> bool:
        """Whether some column's reports are memoized responses (:mod:`ldpnum.longitudinal`).

        The collection then needs each row's key.
        """
        return any(c.mechanism.memoized for c in self.columns)

    def longitudinal_rounds(self, values: list, keys: Any) -> list:
        """``[(mechanism, fingerprints, round), ...]`` of the memoized columns.

        From their validated ``values`` (in column order) and the rows' ``keys``: what the ledger charges them by
        (:meth:`ldpnum.PrivacyLedger.check_longitudinal`).
        """
        return [(c.mechanism, c.mechanism.prepared_fingerprints(x, keys), c.mechanism.round)
                for c, x in zip(self.columns, values) if c.mechanism.memoized]

    @property
    def one_shot_epsilon(self) -> float | None:
        """The ε each row spends on the columns that are not memoized ("all-columns"; None when there are none).

        Charged per collection, while memoized columns are charged per memoized value.
        """
        epsilons = [c.mechanism.epsilon for c in self.columns if not c.mechanism.memoized]
        return float(math.fsum(epsilons)) if epsilons else None

    def ledger_charge(self, rounds: list | None) -> tuple[float | None, dict]:
        """What a ledger charges each row per collection: ``(ε, {label: spec})``.

        With the memoized columns' ``rounds`` (:meth:`longitudinal_rounds`, charged per memoized value by
        :func:`record_ledger`), the columns that are not memoized: :attr:`one_shot_epsilon` and their specs;
        otherwise :attr:`epsilon_per_row` and every column's spec.
        """
        if rounds:
            return self.one_shot_epsilon, {c.label: c.mechanism.spec for c in self.columns
                                           if not c.mechanism.memoized}
        return self.epsilon_per_row, self.specs

    @property
    def split(self) -> bool:
        """Whether each row reports one column ("one-column-per-row")."""
        return self.strategy == "one-column-per-row"

    @property
    def epsilon_per_row(self) -> float:
        """The ε each row spends: the sum of the columns' ε (all-columns) or the largest (one-column-per-row)."""
        epsilons = [c.mechanism.epsilon for c in self.columns]
        return float(max(epsilons) if self.split else math.fsum(epsilons))

    @property
    def specs(self) -> dict:
        """Report column label -> the spec of its mechanism."""
        return {c.label: c.mechanism.spec for c in self.columns}

    def record(self, *, digests: dict | None = None, shuffle_delta: float | None = None) -> dict:
        """The collection's ldpnum record (:func:`ldpnum._frame.report_record`).

        Every column's spec and value columns, the strategy, ``epsilon_per_row``, and optionally the digests of the
        codes and the central δ of a shuffled collection. The pandas accessor keeps it in ``attrs``, the command
        line in the Parquet file's metadata.
        """
        return report_record(self.specs, strategy=self.strategy, epsilon_per_row=self.epsilon_per_row,
                             digests=digests, sources={c.label: c.sources for c in self.columns if c.sources},
                             shuffle_delta=shuffle_delta)

    def streams(self, rng: Any) -> list:
        """The collection's random streams.

        Report column ``j`` draws from ``child_rng(rng, j)``, and under "one-column-per-row" the rows' columns from
        ``child_rng(rng, m)`` (the last stream).

        Each is a Generator shared by all batches (words are consumed in row order, so the reports do not
        depend on the batch size), or None for secure randomness (``rng=None``: each draw keyed afresh).
        """
        m = len(self.columns)
        return [None if rng is None else np.random.default_rng(child_rng(rng, j)) for j in range(m + self.split)]


def plan_columns(mechanisms: Mapping, strategy: str, *, round: int | None = None) -> CollectionPlan:
    """Plan the report columns of ``mechanisms`` (key -> mechanism) under ``strategy``.

    A tuple key names the value columns of a vector mechanism (the mechanism decides:
    :meth:`~ldpnum.Mechanism.source_columns`); its report column is labelled ``"a,b,..."``
    (:func:`report_label`).

    Raises
    ------
    TypeError
        For a key the mechanism cannot read (a tuple for a mechanism of one column, or the reverse).
    ValueError
        For an unknown strategy, no columns, two keys with one report label, a label with a comma in a
        vector key, or more than :data:`MAX_COLUMNS` columns under "one-column-per-row".

    Examples
    --------
    >>> import ldpnum as ldp
    >>> plan = plan_columns({"a": ldp.Duchi(1.0, (0, 1)), "b": ldp.Duchi(0.5, (0, 1))}, "all-columns")
    >>> plan.labels, plan.epsilon_per_row
    (['a', 'b'], 1.5)
    """
    check_choice(strategy, "strategy", STRATEGIES)
    if not mechanisms:
        raise ValueError("mechanisms is empty: name at least one column to privatize")
    keys = list(mechanisms)
    sources = {k: vector_sources(k, mechanisms[k]) for k in keys}
    labels = {k: report_label(k) if sources[k] is not None else k for k in keys}
    if len(set(labels.values())) != len(labels):
        raise ValueError(f"two keys give the same report column label; labels: {list(labels.values())}")
    if strategy == "one-column-per-row" and len(keys) > MAX_COLUMNS:
        raise ValueError(f"one-column-per-row handles at most {MAX_COLUMNS} columns; got {len(keys)}")
    mechs = dict(mechanisms)
    check_round(mechs, round)
    if round is not None:
        mechs = {k: m.at_round(round) if getattr(m, "memoized", False) else m for k, m in mechs.items()}
    return CollectionPlan(tuple(ColumnPlan(k, labels[k], mechs[k], sources[k]) for k in keys), strategy)


def align_keys(keys: Any, n_rows: int, people: Any = None) -> ClientKeys | None:
    """The rows' :class:`~ldpnum.ClientKeys`, row for row (None when ``keys`` is None).

    ``keys`` is either ClientKeys for the rows, in order, or a DataFrame of key words indexed by person id
    (:meth:`ldpnum.ClientKeys.to_frame` with ``index=ids``), matched to ``people`` (one id per row: the frame's
    index, or the ledger's people): a person in several rows (panel data) uses their one key in each.

    Raises
    ------
    TypeError
        For keys of another kind.
    ValueError
        For ClientKeys of another length, or people without a key in the DataFrame.
    """
    if keys is None or isinstance(keys, ClientKeys):
        return None if keys is None else check_keys(keys, n_rows)
    if isinstance(keys, pd.DataFrame):
        if people is None:
            raise ValueError("keys given as a DataFrame are matched to the rows' person ids; name them (people=)")
        ids = pd.Index(people)
        if not keys.index.is_unique:
            dup = keys.index[keys.index.duplicated()][0]
            raise ValueError(f"keys name person {dup!r} more than once; a person holds one key")
        found = keys.index.get_indexer(ids)
        if (found < 0).any():
            bad = np.flatnonzero(found < 0)
            first = ids[bad[0]]
            first = first.item() if hasattr(first, "item") else first  # a NumPy scalar id as its plain value
            raise ValueError(f"keys hold no key for {bad.size} of the rows' people, first {first!r} (row "
                             f"{bad[0]}): a key file for other people?")
        return ClientKeys.from_frame(keys.iloc[found])
    raise TypeError(f"keys must be ClientKeys (row for row) or a DataFrame of ClientKeys.to_frame(index=people ids); "
                    f"got {type(keys).__name__}")


def assign_rows(stream: Any, n: int, m: int) -> list[np.ndarray]:
    """The rows (positions) that report each of ``m`` columns under "one-column-per-row".

    Row ``i`` reports one column drawn uniformly from ``stream`` independently of every value
    (:func:`ldpnum._random.assign_columns`, one word per row).

    Examples
    --------
    >>> [r.tolist() for r in assign_rows(0, 8, 3)]
    [[1, 2, 3], [0, 6], [4, 5, 7]]
    """
    assigned = assign_columns(stream, n, m)
    return [np.flatnonzero(assigned == j) for j in range(m)]


# -- privatizing a batch of rows ------------------------------------------------------------------------------

def fill_values(fill_value: Any, columns: list) -> dict:
    """Each column's public fill value.

    ``fill_value`` for every column, or a mapping column -> value (which must name privatized columns only).
    """
    if isinstance(fill_value, Mapping):
        unknown = [c for c in fill_value if c not in columns]
        if unknown:
            raise ValueError(f"fill_value names {len(unknown)} column(s) that are not privatized, first "
                             f"{unknown[0]!r}; privatized columns: {list(columns)}")
        return {c: fill_value.get(c) for c in columns}
    return {c: fill_value for c in columns}


def empty_values(sources: "list | None") -> "np.ndarray | pd.DataFrame":
    """No rows of a report column's values.

    Of one column (``sources`` None), or of the value columns ``sources`` of a mechanism of several. A front end
    checks a mechanism's options (a fill value, its columns) with ``prepare_values`` on it before any input is read,
    and a report column's code dtype with ``privatize`` on it.

    Examples
    --------
    >>> empty_values(None).shape, list(empty_values(["a", "b"]).columns)
    ((0,), ['a', 'b'])
    """
    return np.empty(0) if sources is None else pd.DataFrame({c: np.empty(0) for c in sources})


def column_mechanism(mech: Any, x: Any, name: Any) -> Any:
    """The mechanism that privatizes column ``x``: a frequency oracle takes a ``category`` column's categories.

    A pandas ``category`` dtype declares its categories (public, in their order): an oracle without declared
    categories (``mech.takes_categories``, ``mech.categories is None``) is given them
    (:meth:`~ldpnum.frequency.FrequencyOracle.with_categories`; its ``k`` must equal their number), so the
    report column's spec records them and estimates are labelled. A text column needs categories declared on
    the oracle and is refused without them; any other mechanism or column is returned unchanged (refused later
    if unsuitable).
    """
    if not (isinstance(mech, Mechanism) and mech.takes_categories):
        return mech
    oracle: Any = mech  # a frequency oracle: k, categories, with_categories
    if oracle.categories is not None:
        return mech
    dtype = getattr(x, "dtype", None)
    subject = column_subject(name)
    if isinstance(dtype, pd.CategoricalDtype):
        cats = list(dtype.categories)
        _warn_derived_categories(x, cats, subject)
        if len(cats) != oracle.k:
            raise ValueError(f"{subject} is a category column of {len(cats)} categories but {type(mech).__name__} "
                             f"has k={oracle.k}: build it with k={len(cats)} (its codes are the column's categories "
                             "in their declared order)")
        try:
            return oracle.with_categories(cats)
        except TypeError as exc:
            raise TypeError(f"{subject}: its {exc}") from None
    if isinstance(dtype, pd.StringDtype) or getattr(dtype, "kind", "") in "OSU":
        raise TypeError(f"{subject} holds text: declare its categories, public and fixed in advance (never read "
                        f"off the data: which values occur would leak), e.g. "
                        f"{type(mech).__name__}(epsilon, ...).with_categories(['a', 'b', ...]) or "
                        "ldp.GRR(epsilon, categories=['a', 'b', ...]), or give the column a declared category "
                        "dtype, pd.CategoricalDtype(['a', 'b', ...])")
    return mech


def _warn_derived_categories(x: Any, cats: list, subject: str) -> None:
    """:class:`~ldpnum.exceptions.CategoriesWarning` when a category column's categories look read off its values.

    Sorted, and every one occurring: what ``astype("category")`` makes (declared categories are usually in an order
    of their own, or include values no one holds).
    """
    try:
        ordered = len(cats) > 1 and cats == sorted(cats)
    except TypeError:  # categories of mixed types: not what astype("category") makes
        ordered = False
    if not ordered or not hasattr(x, "cat"):
        return
    codes = np.asarray(x.cat.codes.to_numpy(), dtype=np.int64)
    if np.bincount(codes[codes >= 0], minlength=len(cats)).all():
        from ._validation import _caller_stacklevel
        from .exceptions import CategoriesWarning

        warnings.warn(CategoriesWarning(
            f"{subject}: its {len(cats)} categories are sorted and all occur in it, as astype('category') derives "
            "them from the data; categories are public parameters, and categories read off the data reveal which "
            "values occur. Declare all the possible values on the oracle (e.g. ldp.GRR(epsilon, categories=[...]) "
            "or mech.with_categories([...])), which silences this warning"), stacklevel=_caller_stacklevel())


def takes_unknown(mech: Any) -> bool:
    """Whether ``mech.prepare_values`` takes ``unknown=`` (categorical mechanisms: frequency oracles)."""
    import inspect

    return "unknown" in inspect.signature(mech.prepare_values).parameters


def decodes_candidates(mech: Any) -> bool:
    """Whether ``mech.estimate_frequencies`` decodes against a dictionary (``candidates=``: RAPPOR, sketches).

    Such estimates are a :class:`~ldpnum.HeavyHittersEstimate` of the candidates and take no ``postprocess``.
    """
    import inspect

    return mech.offers("estimate_frequencies") and "candidates" in inspect.signature(
        mech.estimate_frequencies).parameters


def prepare_column(mech: Any, x: Any, name: str | None, nan_policy: str = "raise", fill_value: Any = None,
                   unknown: str = "raise", **options: Any) -> Any:
    """``mech.prepare_values`` of one column (validated, nothing drawn).

    With ``unknown=`` for the mechanisms that take it; ``options`` (e.g. ``out_of_range``) go to ``prepare_values``
    unchanged.
    """
    if unknown == "raise":
        return mech.prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value, **options)
    if not takes_unknown(mech):
        raise TypeError(f"unknown={unknown!r} applies to categorical mechanisms (frequency oracles such as "
                        f"ldp.GRR); {type(mech).__name__} takes values in bounds (out-of-range values are clipped)")
    return mech.prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value, unknown=unknown,
                               **options)


def check_shuffle(shuffled: Any, shuffle_delta: Any, obj: Any = None) -> float | None:
    """The central δ to record for a collection declared shuffled (None when it is not).

    Checked before anything is drawn.

    A declaration is refused for reports that keep an identifying index (``obj``'s index other than a
    RangeIndex of positions): the reports keep their input's index, and a shuffled batch must reach the
    analyst with nothing that links a report to its sender (the command line likewise refuses ``--shuffled``
    with ``--keep``).
    """
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


def people_ids(obj: Any, people: Any) -> Any:
    """The rows' person ids: ``people`` (one per row, or a DataFrame's column of ids), or ``obj``'s index."""
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
    return ids


def check_ledger(ledger: Any, epsilon: float | None, obj: Any, people: Any, rounds: list | None = None) -> Any:
    """The people ids of a collection about to be drawn from the rows of ``obj`` (a pandas object).

    Returned after the ledger's cap check (None without a ledger).

    ``people`` gives one id per row (default: the index), or names the DataFrame's column of ids. ``rounds``:
    the memoized columns' :meth:`CollectionPlan.longitudinal_rounds` (then ``epsilon`` is the one-shot columns'
    ε per row, or None), checked together with the one-shot columns.
    """
    if ledger is None:
        if people is not None:
            raise ValueError("people= names the rows' people for a ledger; pass ledger= too")
        return None
    if not (hasattr(ledger, "check") and hasattr(ledger, "record")):
        raise TypeError(f"ledger must be an ldpnum.PrivacyLedger; got {type(ledger).__name__}")
    ids = people_ids(obj, people)
    if rounds:
        ledger.check_longitudinal(rounds, people=ids, epsilon=epsilon)
    else:
        ledger.check(epsilon=epsilon, people=ids)
    return ids


@dataclass(frozen=True)
class ArgumentNames:
    """How a front end names its arguments in the refusals of :func:`check_memoized`.

    The rules are one; the words are the caller's (the Python API says ``keys=``, the command line ``--keys``).

    Attributes
    ----------
    keys_unused : str
        The refusal of keys given when no column is memoized.
    keys_missing : str
        The refusal of a memoized column without keys; ``{column!r}`` and ``{mechanism}`` (its class name) are
        filled in.
    shuffled, ledger, split, all_columns : str
        The names of the shuffle declaration, the ledger and the two strategies.
    round_unused : str
        The refusal of a round given when no column is memoized (:func:`check_round`).
    queries : mapping of str to str
        The refusals of :func:`check_queries`, by rule (the keys of :data:`PYTHON_NAMES`' mapping); ``{name}``
        (the mechanism's spec name) and the rule's own fields are filled in.
    error : type or None
        The exception raised for every refusal; None: TypeError for missing keys, ValueError otherwise.
    """

    keys_unused: str
    keys_missing: str
    shuffled: str
    ledger: str
    split: str
    all_columns: str
    round_unused: str
    queries: Mapping[str, str]
    error: type[Exception] | None = None


#: The Python API's names (pandas, Dask, the engines).
PYTHON_NAMES = ArgumentNames(
    keys_unused="keys= are each person's keys for longitudinal mechanisms (LGRR, LOSUE, LOLOHA, RAPPOR, memoized "
                "OneBitMean/DBitFlip); none of these columns is memoized",
    keys_missing="longitudinal (memoized) columns need each person's key: pass keys=ClientKeys (row for row) or "
                 "keys=ClientKeys.to_frame(index=person ids)",
    shuffled="shuffled=True", ledger="ledger", split="'one-column-per-row'", all_columns="'all-columns'",
    round_unused="round= numbers the rounds of a longitudinal collection; none of these mechanisms is longitudinal "
                 "(LGRR, LOSUE, LOLOHA, RAPPOR, memoized OneBitMean/DBitFlip)",
    queries={
        "no_marginals": "{name} reports do not hold marginals of categorical columns; the 'marginals' query and "
                        "marginals= need a marginals report column",
        "marginals_only": "{name} reports estimate marginals only: ask for 'marginals' (optionally marginals=[(C1, "
                          "C2)])",
        "no_plot": "distribution=True does not apply to {name} reports",
        "marginal_columns": "marginals={value!r}: give distinct columns of the report column ({columns}); {problem}",
        "ranges_needed": "{name} reports answer range queries over their columns: ask for 'range' with "
                         "query={{column: (low, high)}}",
        "ranges_only": "{name} reports answer range queries only ('range' with query={{column: (low, high)}})",
        "numerical": "{name} reports are numerical; 'frequencies' needs a frequency oracle's reports (grr, oue, olh, "
                     "...)",
        "categorical": "{name} reports are categorical: ask for 'frequencies'",
        "range_of_columns": "{name} reports answer query=(low, high), not query={{column: (low, high)}}",
        "range_of_values": "{name} reports answer query={{column: (low, high)}}, not query=(low, high)",
        "no_distribution": "{name} reports estimate {estimates} only; distributions, quantiles, ranges and "
                           "distribution=True need square_wave, general_wave, piecewise, hybrid or hierarchical_histogram",
        "n_bins": "n_bins= does not apply to {name}: its bins are {bins}",
        "no_mle": "method='mle': {name} reports have no maximum-likelihood estimate of {what} (their likelihood is "
                  "not implemented); it is offered for {what} of {offered} reports; use method='unbiased'",
        "mle_queries": "method='mle' gives the maximum-likelihood mean or frequencies; it does not apply to "
                       "{what} (their estimators are set by their own options)",
        "range_interval": "{problem}",
        "mle_postprocess": "method='mle' takes no postprocess (its frequencies are already on the simplex); got "
                           "postprocess={value!r}",
        "no_candidates": "candidates= apply to reports decoded against a dictionary of items (rappor, "
                         "count_mean_sketch); {name} reports estimate their own categories",
        "needs_candidates": "{name} frequencies {why}: pass candidates=[...], the items to estimate",
        "candidates_postprocess": "{name} frequencies are decoded against the candidates and take no postprocess; "
                                  "got postprocess={value!r}",
    })


#: Why a mechanism's frequencies need candidates (:attr:`~ldpnum.Mechanism.needs_candidates`), in a refusal.
_WHY_CANDIDATES = {
    "rappor": "without segment pairs are decoded against a dictionary of items only",
    "count_mean_sketch": "over items are those of a dictionary of items (the sketch names none)",
}


def _refuse(names: ArgumentNames, kind: type[Exception], text: str) -> None:
    """Raise ``text`` as the front end's exception (:attr:`ArgumentNames.error`), else as ``kind``."""
    raise (names.error or kind)(text)


def check_estimate_method(mech: Mechanism, estimator: str, method: Any, *,
                          names: ArgumentNames = PYTHON_NAMES) -> str:
    """``method`` (``"unbiased"`` or ``"mle"``) of ``mech``'s ``estimator``, checked before a report is read.

    ``estimator`` is ``"estimate_mean"`` or ``"estimate_frequencies"``; what the mechanism offers is its own
    :meth:`~ldpnum.Mechanism.estimate_methods`. A method it does not offer is refused in the front end's words
    (``names``), naming the mechanisms that offer it.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> check_estimate_method(ldp.RandomizedResponse(1.0), "estimate_mean", "mle")
    'mle'
    >>> check_estimate_method(ldp.OUE(1.0, k=4), "estimate_frequencies", "mle")
    Traceback (most recent call last):
    ...
    ValueError: method='mle': oue reports have no maximum-likelihood estimate of frequencies (their likelihood is \
not implemented); it is offered for frequencies of grr reports; use method='unbiased'
    """
    from .base import registered
    from .estimation.likelihood import METHODS

    if method not in METHODS:
        _refuse(names, ValueError, f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    if method not in mech.estimate_methods(estimator):
        what = "the mean" if estimator == "estimate_mean" else "frequencies"
        offered = [n for n, cls in registered().items() if method in cls.estimate_methods(estimator)]
        _refuse(names, ValueError, names.queries["no_mle"].format(name=mech.spec.mechanism, what=what,
                                                                 offered=", ".join(offered)))
    return str(method)


def check_round(mechanisms: Mapping, round: int | None, *, names: ArgumentNames = PYTHON_NAMES) -> None:
    """Refuse a ``round`` for a collection of no memoized (longitudinal) column.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> check_round({"app": ldp.LGRR(2.0, 1.0, k=4)}, 3)
    >>> check_round({"x": ldp.Duchi(1.0, (0, 1))}, 3)
    Traceback (most recent call last):
    ...
    ValueError: round= numbers the rounds of a longitudinal collection; none of these mechanisms is longitudinal \
(LGRR, LOSUE, LOLOHA, RAPPOR, memoized OneBitMean/DBitFlip)
    """
    if round is not None and not any(getattr(m, "memoized", False) for m in mechanisms.values()):
        _refuse(names, ValueError, names.round_unused)


def check_memoized(mechanisms: Mapping, *, keys: bool, shuffled: bool, ledger: bool = False, split: bool = False,
                   round: int | None = None, names: ArgumentNames = PYTHON_NAMES) -> None:
    """One clear error, before anything is drawn, for keys and memoized columns that do not go together.

    Refused: keys given for no memoized column, a memoized column without keys, a memoized collection declared
    shuffled (the shuffle's amplification assumes fresh randomness in every report, and memoized answers repeat
    across rounds), and a ledger for memoized columns under "one-column-per-row" (each memoized column is charged
    per memoized value, which that strategy's accounting does not do); and a ``round`` when no column is memoized
    (:func:`check_round`).

    Parameters
    ----------
    mechanisms : mapping
        Report column -> mechanism (each says whether it is memoized).
    keys, shuffled, ledger, split : bool
        Whether keys are given, the collection is declared shuffled, a ledger is kept, and the strategy is
        "one-column-per-row".
    round : int, optional
        The collection's round, if one is given.
    names : ArgumentNames, optional
        The front end's names of these arguments (default: the Python API's).

    Examples
    --------
    >>> import ldpnum as ldp
    >>> check_memoized({"app": ldp.LGRR(2.0, 1.0, k=4)}, keys=True, shuffled=False)
    >>> check_memoized({"x": ldp.Duchi(1.0, (0, 1))}, keys=True, shuffled=False)
    Traceback (most recent call last):
    ...
    ValueError: keys= are each person's keys for longitudinal mechanisms (LGRR, LOSUE, LOLOHA, RAPPOR, memoized \
OneBitMean/DBitFlip); none of these columns is memoized
    """
    memoized = [c for c, m in mechanisms.items() if m.memoized]

    def refuse(kind: type[Exception], text: str) -> None:
        _refuse(names, kind, text)

    if keys and not memoized:
        refuse(ValueError, names.keys_unused)
    check_round(mechanisms, round, names=names)
    if not memoized:
        return
    if not keys:
        refuse(TypeError, names.keys_missing.format(column=memoized[0],
                                                    mechanism=type(mechanisms[memoized[0]]).__name__))
    if shuffled:
        refuse(ValueError, f"{names.shuffled} is not available for longitudinal columns: shuffle amplification "
                           "assumes fresh randomness in every report, and memoized answers repeat across rounds")
    if ledger and split:
        refuse(ValueError, f"a {names.ledger} for longitudinal columns under {names.split} is not supported: use "
                           f"{names.all_columns} (each memoized column is charged per memoized value)")


def check_keys_and_rounds(plan: CollectionPlan, values: list, keys: Any, obj: Any, people: Any, ledger: Any,
                          shuffled: bool) -> tuple:
    """The rows' keys (:func:`align_keys`) and, with a ledger, the memoized columns' rounds to charge.

    The rounds are :meth:`CollectionPlan.longitudinal_rounds`. One clear error, before anything is drawn, for keys
    and memoized columns that do not go together (:func:`check_memoized`).
    """
    row_keys = align_keys(keys, len(obj), people_ids(obj, people) if isinstance(keys, pd.DataFrame) else None)
    check_memoized(plan.mechanisms, keys=row_keys is not None, shuffled=shuffled, ledger=ledger is not None,
                   split=plan.split)
    if not plan.memoized:
        return None, None
    if ledger is None:
        return row_keys, None
    return row_keys, plan.longitudinal_rounds(values, row_keys)


def record_ledger(ledger: Any, *, epsilon: float | None, people: Any, specs: Any, strategy: str | None = None,
                  label: str | None = None, shuffled: bool = False, shuffle_delta: float = 1e-6,
                  counts: Any = (), rounds: list | None = None) -> None:
    """Charge a drawn collection to ``ledger``.

    Each of ``people`` spends ``epsilon`` (the one-shot columns'; None when every column is memoized), and each
    memoized column's round (``rounds``, see :func:`check_ledger`) what it adds to each person's longitudinal bound.

    Declared shuffled, the entry shows the central ε of the smallest non-empty report column (``counts``:
    the number of reports of each column; under "one-column-per-row" each column's estimates show the central
    ε of its own reports, so the entry states the largest of them, and the two agree).
    """
    for mech, fingerprints, round_id in rounds or ():
        ledger.record_longitudinal(mech, people=people, fingerprints=fingerprints, round=round_id, label=label)
    if epsilon is None:
        return
    ledger.record(epsilon=epsilon, people=people, specs=specs, strategy=strategy, label=label, shuffled=shuffled,
                  shuffle_delta=shuffle_delta,
                  shuffle_n=min((c for c in counts if c), default=None) if shuffled else None)


def _owned(codes: np.ndarray) -> np.ndarray:
    """The freshly randomized codes as a writable array for a new table column, copied only if shared."""
    try:
        codes.flags.writeable = True  # the kernel's output array: nothing else refers to it
    except ValueError:  # a view on a read-only base
        codes = codes.copy()
    return codes


@dataclass(frozen=True)
class BatchReports:
    """The report columns of one batch of rows (:func:`privatize_batch`).

    Attributes
    ----------
    n_rows : int
        Rows in the batch.
    codes : dict
        Report column label -> one code per row (the mechanism's :meth:`~ldpnum.Mechanism.column_codes`;
        0 in the rows that did not report the column), a writable array the caller may wrap without copying.
    missing : dict
        Report column label -> boolean array, True in the rows that did not report the column
        ("one-column-per-row"); None when every row reported it.
    digests : dict
        Report column label -> :func:`ldpnum._frame.codes_digest` of the codes reported (empty when not asked
        for); digests of consecutive batches add up (:func:`ldpnum._frame.add_digests`).
    """

    n_rows: int
    codes: dict
    missing: dict
    digests: dict

    @property
    def counts(self) -> dict:
        """Report column label -> the number of rows that reported it."""
        return {c: self.n_rows - (0 if m is None else int(m.sum())) for c, m in self.missing.items()}


def privatize_batch(plan: CollectionPlan, values: list, streams: list, n_rows: int, *,
                    digest: bool = True, keys: Any = None) -> BatchReports:
    """Randomize one batch of rows: every report column of ``plan`` from its validated values.

    Parameters
    ----------
    plan : CollectionPlan
    values : list
        Per report column of ``plan``, in order: the batch's values as the mechanism's ``prepare_values``
        returned them (:func:`prepare_column`), ``n_rows`` rows each. Every column of the batch is validated
        by the caller before this is called, and the batch's shape is checked here before the first draw.
    streams : list
        :meth:`CollectionPlan.streams`, shared by the batches of one collection in row order.
    n_rows : int
        Rows in the batch.
    digest : bool, default True
        Whether to compute the digest of each column's codes.
    keys : ClientKeys, optional
        The rows' keys, row for row (:func:`align_keys`): required when a column is memoized
        (:attr:`CollectionPlan.memoized`), refused otherwise.

    Returns
    -------
    BatchReports

    Notes
    -----
    Under "one-column-per-row" the rows' columns are drawn first (one word per row from the last stream),
    then each column randomizes only the rows assigned to it, so every row holds one report and spends one
    column's ε.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> from ldpnum.collect import plan_columns, prepare_column, privatize_batch
    >>> plan = plan_columns({"a": ldp.SquareWave(1.0, (0, 1)), "b": ldp.Duchi(2.0, (0, 1))},
    ...                     "one-column-per-row")
    >>> x = [prepare_column(c.mechanism, np.linspace(0, 1, 6), c.label) for c in plan.columns]
    >>> batch = privatize_batch(plan, x, plan.streams(0), 6)
    >>> bool((batch.missing["a"] ^ batch.missing["b"]).all()), sum(batch.counts.values())
    (True, 6)
    """
    m = len(plan.columns)
    if len(values) != m or len(streams) != m + plan.split:
        raise ValueError(f"a batch of {m} report column(s) takes {m} value arrays and {m + plan.split} streams; got "
                         f"{len(values)} and {len(streams)}")
    for col, x in zip(plan.columns, values):
        if len(x) != n_rows:
            raise ValueError(f"the values of report column {col.label!r} hold {len(x)} rows; the batch has {n_rows}")
    if plan.memoized:
        keys = check_keys(keys, n_rows)
    else:
        check_memoized(plan.mechanisms, keys=keys is not None, shuffled=False)

    def randomize(j, x, rows_j=None):
        mech = plan.columns[j].mechanism
        if mech.memoized:
            return mech._randomize(x, streams[j], keys=keys if rows_j is None else keys[rows_j])
        return mech._randomize(x, streams[j])

    # Everything is valid: from here on, words are drawn.
    rows = assign_rows(streams[m], n_rows, m) if plan.split else None
    codes: dict = {}
    missing: dict = {}
    digests: dict = {}
    for j, col in enumerate(plan.columns):
        mech = col.mechanism
        if rows is None:
            own = mech.column_codes(randomize(j, values[j]))
            codes[col.label], missing[col.label] = _owned(own), None
        else:
            sub = values[j][rows[j]]
            sub.flags.writeable = False
            own = mech.column_codes(randomize(j, sub, rows[j]))
            full = np.zeros(n_rows, dtype=own.dtype)
            full[rows[j]] = own
            mask = np.ones(n_rows, dtype=bool)
            mask[rows[j]] = False
            codes[col.label], missing[col.label] = full, mask
        if digest:
            digests[col.label] = codes_digest(own)
    return BatchReports(n_rows, codes, missing, digests)


# -- partitions -----------------------------------------------------------------------------------------------

def run_seed(rng: Any) -> Any:
    """The run's seed as something every partition can extend: None, an int or a SeedSequence.

    A Generator contributes 128 bits drawn from it on the driver (it advances, as on every use). Partition
    ``i`` of the run then draws from ``partition_rng(run_seed(rng), i)``.

    Examples
    --------
    >>> run_seed(7), run_seed(None)
    (7, None)
    """
    if rng is None:
        return None
    resolve_rng(rng)  # TypeError/ValueError for bad kinds and values, before anything runs
    if isinstance(rng, np.random.Generator):
        return child_rng(rng)
    return rng if isinstance(rng, np.random.SeedSequence) else int(rng)


def _check_seed(seed):
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        hint = (" (a Generator cannot be shared by partitions on several machines; pass an int seed or "
                "ldpnum.engines.child_rng(generator))" if isinstance(seed, np.random.Generator) else "")
        raise TypeError(f"seed must be None, a non-negative int or a numpy SeedSequence; "
                        f"got {type(seed).__name__}{hint}")
    if int(seed) < 0:
        raise ValueError(f"seed must be non-negative; got {int(seed)}")
    return int(seed)


def _check_index(partition_index):
    return check_scalar(partition_index, "partition_index", int, low=0)


def partition_rng(seed: Any, partition_index: Any) -> Any:
    """The stream of partition ``partition_index`` of a run seeded with ``seed``: ``child_rng(seed, i)``.

    Every partition of a distributed collection (Dask, Spark, a process pool) draws from its own sub-stream,
    so a seeded run gives the same reports whatever the engine, scheduler, worker count or task order; within
    the partition the columns draw from the partition's own column streams (:meth:`CollectionPlan.streams`).
    ``seed=None`` (a real collection) keys every partition afresh from the operating system.

    Raises
    ------
    TypeError
        For a seed that is not None, an int or a SeedSequence (a Generator cannot be shared by partitions on
        several machines), or a partition index that is not an int.
    ValueError
        For negative seeds and indices.

    Examples
    --------
    >>> partition_rng(7, 3).spawn_key
    (3,)
    """
    return child_rng(_check_seed(seed), _check_index(partition_index))


# -- pandas tables: privatizing frames and Series --------------------------------------------------------------

def column_subject(name: Any) -> str:
    """How messages name a column: ``"the Series"`` for an unnamed one, else ``"column 'name'"``."""
    return "the Series" if name is None else f"column {name!r}"


def _check_name(name, allow_none):
    if name is None and allow_none:
        return
    if isinstance(name, (bool, np.bool_)) or not isinstance(name, (str, numbers.Integral)):
        raise TypeError(f"column label {name!r} ({type(name).__name__}) cannot carry a spec: report columns "
                        "need str or int labels (they travel as JSON in attrs and Parquet metadata)")


def _check_mechanism(mech, name):
    if not isinstance(mech, Mechanism):
        raise TypeError(f"the mechanism for {column_subject(name)} must be an ldpnum mechanism, e.g. "
                        f"ldp.SquareWave(epsilon=1.0, bounds=(0, 1440)); got {type(mech).__name__}")
    mech.check_column_codes(f"a pandas column ({column_subject(name)})")


def is_real_dtype(dtype: Any) -> bool:
    """Integer or float dtypes (NumPy, nullable or Arrow-backed): values or report codes."""
    return (pd.api.types.is_numeric_dtype(dtype) and getattr(dtype, "kind", "O") in "iuf"
            and not isinstance(dtype, pd.CategoricalDtype))


def is_text_dtype(dtype: Any) -> bool:
    """String or object dtypes: items (words, URLs, ids as text) for the heavy-hitter mechanisms."""
    if isinstance(dtype, pd.CategoricalDtype):
        return False  # categories: privatize their codes with a frequency oracle (the hint says so)
    return isinstance(dtype, pd.StringDtype) or getattr(dtype, "kind", "") in "OSU"


def check_no_other_arguments(what: str, kwargs: Mapping) -> None:
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


def run_sets(protocol: Any, finds: str, s: "pd.Series", rng: SeedLike, truncate: bool, shuffled: bool,
             shuffle_delta: float, ledger: Any = None, people: Any = None, label: str | None = None) -> Any:
    """``protocol.run`` on a column of sets, for a protocol that finds ``finds`` ("items" or "itemsets").

    ``shuffled``/``shuffle_delta`` go to it unchanged (each phase one shuffled batch). With a ledger, the cap is checked
    before anything is drawn and the collection recorded after it: each person reports in one phase with the protocol's
    full ε (parallel composition over the phases), so each spends ``protocol.epsilon``.
    """
    if getattr(protocol, "finds", None) != finds:
        want = "ldp.SVIM(...)" if finds == "items" else "ldp.SVSM(...)"
        raise TypeError(f"frequent_{finds} needs a set-valued protocol that finds {finds}, e.g. {want}; got "
                        f"{type(protocol).__name__}")
    check_rng(rng)
    if shuffled:
        check_shuffle(shuffled, shuffle_delta)
    ids = check_ledger(ledger, protocol.epsilon, s, people)
    result = protocol.run(s, rng=rng, truncate=truncate, shuffled=shuffled, shuffle_delta=shuffle_delta)
    if ledger is not None:
        record_ledger(ledger, epsilon=protocol.epsilon, people=ids, specs=[repr(protocol)], label=label,
                      shuffled=shuffled, shuffle_delta=shuffle_delta)
    return named(result, s.name) if hasattr(result, "name") else result


def check_rng(rng: Any) -> None:
    """Validate ``rng`` without drawing from it (a Generator is not advanced)."""
    if rng is not None:
        resolve_rng(rng)


def _copy_other_attrs(src, dst):
    for key, value in src.attrs.items():
        if key != ATTRS_KEY:
            dst.attrs[key] = copy.deepcopy(value)
    return dst


def privatize_series(s: "pd.Series", mechanism: Mechanism, *, rng: SeedLike = None, nan_policy: str = "raise",
                     fill_value: Any = None, ledger: Any = None, people: Any = None, label: str | None = None,
                     shuffled: bool = False, shuffle_delta: float = 1e-6, unknown: str = "raise",
                     keys: Any = None, round: int | None = None, _digest: bool = True) -> "pd.Series":
    """Privatize one column: a new Series of report codes, same index and name, spec in its ``attrs``.

    Parameters
    ----------
    s : pandas.Series
        One value per person: real numbers (integer or float dtype, nullable ``Int64``/``Float64`` included;
        bool only for :class:`~ldpnum.RandomizedResponse`), categories or text for a frequency oracle (see
        *Categories* below), text for the heavy hitters.
    mechanism : ldpnum.Mechanism
        The randomizer, e.g. ``ldp.SquareWave(epsilon=1.0, bounds=(0, 1440))``. A column holds one code per
        person: the report of a bit-vector mechanism (SUE, OUE, subset selection) as one unsigned code whose bit
        ``j`` is the report's bit ``j`` (:meth:`~ldpnum.Mechanism.column_codes`), up to 64 bits; longer bit
        vectors are refused.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        ``None`` (default): secure randomness, for real collections. Anything else: a reproducible
        simulation; the words come from ``child_rng(rng, 0)``.
    nan_policy : {"raise", "impute"}, optional
        Missing values (NaN, ``pd.NA``, ±inf) raise (default) or are replaced by the public ``fill_value``.
        They are never dropped: dropping would reveal who is missing.
    fill_value : scalar, optional
        Public replacement of missing values with ``nan_policy="impute"`` (a category label for a column of
        declared categories).
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
    keys : ClientKeys or pandas.DataFrame, optional
        Each person's key, for a longitudinal (memoized) mechanism (required then, refused otherwise):
        :class:`~ldpnum.ClientKeys` row for row, or ``ClientKeys.to_frame(index=ids)`` matched to the rows'
        people (the index, or ``people``), so a person in several rows uses their one key.
    round : int, optional
        The round of a longitudinal collection, recorded in the column's spec (aggregates of two rounds do not
        merge); the ledger charges each person per memoized value
        (:meth:`~ldpnum.PrivacyLedger.record_longitudinal`), not per round.

    Returns
    -------
    pandas.Series
        Report codes in the smallest unsigned dtype of the mechanism's alphabet, with
        ``attrs["ldpnum"]`` recording the spec and ``epsilon_per_row = mechanism.epsilon``. The input is
        not modified.

    Raises
    ------
    TypeError
        For a non-Series, a non-mechanism, a bit vector of more than 64 bits, or a dtype the mechanism does not
        take: real numbers for numeric mechanisms (bools only for randomized response), categories or text
        with declared categories for frequency oracles, text for heavy hitters.
    ValueError
        For bad values (missing with ``nan_policy="raise"``, outside the categories, a ``k`` that differs from
        the declared number of categories) or bad options (``fill_value``, ``nan_policy``, a negative seed).
        Nothing is drawn when anything is wrong.

    Notes
    -----
    Each person's report is ``mechanism.epsilon``-LDP (the mechanism's ``privatize``); estimators are
    post-processing.

    **Categories.** A frequency oracle takes a pandas ``category`` column as its declared categories, in
    their order (``k`` must equal their number): code ``i`` is ``s.cat.categories[i]``, the report
    column's spec records the categories and estimates are labelled by them. The categories are public
    parameters: declare them (``pd.CategoricalDtype([...])``), do not derive them from the data
    (``astype("category")`` keeps only the values present, which leaks who answered what). A text column
    needs them declared on the oracle: ``ldp.GRR(epsilon, categories=[...])`` or
    ``mech.with_categories([...])``.

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
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    _check_mechanism(mechanism, s.name)
    _check_name(s.name, allow_none=True)
    check_rng(rng)
    mechanism = column_mechanism(mechanism, s, s.name)
    values = prepare_column(mechanism, s, column_subject(s.name), nan_policy, fill_value, unknown)
    delta = check_shuffle(shuffled, shuffle_delta, s)
    plan = plan_columns({s.name: mechanism}, "all-columns", round=round) if round is not None else \
        CollectionPlan((ColumnPlan(s.name, s.name, mechanism, None),), "all-columns")
    mechanism = plan.columns[0].mechanism
    row_keys, rounds = check_keys_and_rounds(plan, [values], keys, s, people, ledger, shuffled)
    ids = check_ledger(ledger, None if rounds else mechanism.epsilon, s, people, rounds)
    batch = privatize_batch(plan, [values], plan.streams(rng), len(s), digest=_digest, keys=row_keys)
    specs = {s.name: mechanism.spec}
    if ledger is not None:
        record_ledger(ledger, epsilon=None if rounds else mechanism.epsilon, people=ids, specs=specs, label=label,
                      shuffled=shuffled, shuffle_delta=shuffle_delta, rounds=rounds)
    out = pd.Series(batch.codes[s.name], index=s.index, name=s.name, copy=False)
    _copy_other_attrs(s, out)
    return attach_specs(out, specs, epsilon_per_row=mechanism.epsilon, digests=batch.digests if _digest else None,
                        shuffle_delta=delta)


def privatize_frame(df: "pd.DataFrame", mechanisms: Mapping, *, rng: SeedLike = None, strategy: str | None = None,
                    nan_policy: str = "raise", fill_value: Any = None, ledger: Any = None, people: Any = None,
                    label: str | None = None, shuffled: bool = False, shuffle_delta: float = 1e-6,
                    unknown: str = "raise", keys: Any = None, round: int | None = None,
                    _digest: bool = True) -> "pd.DataFrame":
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
    keys, round : optional
        As for :func:`privatize_series`: the rows' keys for longitudinal (memoized) columns, and the round.

    Returns
    -------
    pandas.DataFrame
        Same index. ``attrs["ldpnum"]`` records every column's spec, the strategy and ``epsilon_per_row``.

    Raises
    ------
    TypeError
        For a non-DataFrame, a mechanisms argument that is not a mapping or holds a non-mechanism, a column
        whose dtype its mechanism does not take (the message names the column, its dtype and a conversion),
        unsuitable labels.
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
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    # a vector mechanism reads several value columns, named by a tuple key, into one report column
    mechanisms = {key: column_mechanism(mech, df[key], key)
                  if not isinstance(key, tuple) and key in df.columns and df.columns.is_unique else mech
                  for key, mech in mechanisms.items()}
    plan = plan_columns(mechanisms, strategy, round=round)
    missing = [v for c in plan.columns for v in c.value_columns if v not in df.columns]
    if missing:
        raise ValueError(f"{len(missing)} column(s) to privatize are not in the DataFrame, first {missing[0]!r}; "
                         f"its columns: {list(df.columns)}")
    if not df.columns.is_unique:
        counts = df.columns.value_counts()
        dup = [v for c in plan.columns for v in c.value_columns if counts.get(v, 0) > 1]
        if dup:
            raise ValueError(f"column label {dup[0]!r} appears {counts[dup[0]]} times in the DataFrame; "
                             "report columns need unique labels")
    fills = fill_values(fill_value, [c.key for c in plan.columns])
    for c in plan.columns:
        for v in c.sources or []:
            _check_name(v, allow_none=False)
        _check_name(c.label, allow_none=False)
        _check_mechanism(c.mechanism, c.label)
    check_rng(rng)
    if unknown != "raise" and not any(takes_unknown(c.mechanism) for c in plan.columns):
        prepare_column(plan.columns[0].mechanism, None, None, nan_policy, None, unknown)  # the refusal
    # every cell of every column is validated before the first word is drawn
    prepared = [prepare_column(c.mechanism, df[list(c.sources)] if c.sources is not None else df[c.key],
                               column_subject(c.label), nan_policy, fills[c.key],
                               unknown if takes_unknown(c.mechanism) else "raise")
                for c in plan.columns]
    delta = check_shuffle(shuffled, shuffle_delta, df)
    row_keys, rounds = check_keys_and_rounds(plan, prepared, keys, df, people, ledger, shuffled)
    charged, charged_specs = plan.ledger_charge(rounds)
    ids = check_ledger(ledger, charged, df, people, rounds)
    # Everything is valid: from here on, words are drawn.
    batch = privatize_batch(plan, prepared, plan.streams(rng), len(df), digest=_digest, keys=row_keys)
    data = {c: codes if batch.missing[c] is None else pd.arrays.IntegerArray(codes, batch.missing[c])
            for c, codes in batch.codes.items()}
    if ledger is not None:
        record_ledger(ledger, epsilon=charged, people=ids, specs=charged_specs, strategy=strategy, label=label,
                      shuffled=shuffled, shuffle_delta=shuffle_delta,
                      counts=batch.counts.values() if plan.split else (), rounds=rounds)
    out = pd.DataFrame(data, index=df.index, copy=False)
    out.columns.name = df.columns.name
    _copy_other_attrs(df, out)
    out.attrs[ATTRS_KEY] = plan.record(digests=batch.digests if _digest else None, shuffle_delta=delta)
    return out


# -- reading a report column back ------------------------------------------------------------------------------

def declare_shuffled(agg: Any, shuffle_delta: float | None, epsilon_per_row: float | None = None) -> Any:
    """``agg`` declared the one shuffled batch its record says it is.

    Unchanged without a declaration, or without reports.

    The messages shuffled are the rows': each person's row spends ``epsilon_per_row`` (at least the column's
    own ε), so every column of the batch, and the ledger's entry, show the central ε of that. The pandas
    accessor applies it to a column, the Dask accessor to the aggregate merged over the partitions (each
    partition's own declaration would read as batches shuffled apart).

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 1))
    >>> agg = m.aggregate(m.privatize(np.full(5000, 0.5), rng=0))
    >>> declare_shuffled(agg, 1e-6).shuffle.epsilon < 1.0, declare_shuffled(agg, None) is agg
    (True, True)
    """
    if shuffle_delta is None or not agg.n_reports:
        return agg
    eps = None if epsilon_per_row is None or epsilon_per_row <= agg.spec.epsilon else float(epsilon_per_row)
    return agg.shuffled(shuffle_delta, epsilon0=eps)


@functools.lru_cache(maxsize=64)
def _cached_from_spec(spec):
    return from_spec(spec)


def mechanism_of(spec: Any) -> Any:
    """The mechanism of ``spec`` (mechanisms are immutable, so one instance per spec is shared)."""
    try:
        return _cached_from_spec(spec)
    except TypeError:  # a spec with an unhashable parameter
        return from_spec(spec)


def estimator(mech: Any, method: str, options: Mapping | None = None) -> Any:
    """``mech``'s bound estimator ``method`` (e.g. ``"estimate_mean"``).

    Otherwise a TypeError naming what its reports estimate instead. ``options`` are the keyword arguments the
    estimator is to be called with: their ``method=`` of a mean or frequency estimate (``"unbiased"`` or
    ``"mle"``) is checked too (:func:`check_estimate_method`), so a front end that asks this before reading the
    reports refuses a method the mechanism does not offer before any report is read.
    """
    if not mech.offers(method):
        raise TypeError(f"{type(mech).__name__} reports do not estimate {ESTIMATORS[method]} (they estimate "
                        f"{mech.answers})")
    if options and "method" in options and method in ("estimate_mean", "estimate_frequencies"):
        check_estimate_method(mech, method, options["method"])
    return getattr(mech, method)


def reports_of(s: "pd.Series", spec: Spec | None = None, *, _check: bool = True) -> Reports:
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
        For a non-Series, non-integer codes, or a spec of bit vectors longer than 64 bits.
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
    mech = mechanism_of(spec)
    mech.check_column_codes("a column")
    dtype = s.dtype
    kind = getattr(dtype, "kind", "O")
    if not is_real_dtype(dtype):
        raise TypeError(f"{column_subject(s.name)} holds dtype {dtype}, not integer report codes")
    if (kind == "f" or isinstance(dtype, pd.api.extensions.ExtensionDtype)) and s.hasnans:
        s = s[s.notna()]  # rows that did not report this column (numpy integer columns have none)
    if kind in "iu":
        codes = s.to_numpy(dtype=getattr(dtype, "numpy_dtype", dtype))
    else:
        values = s.to_numpy(dtype=np.float64)
        whole = np.isfinite(values) & (values == np.round(values)) & (values >= 0)
        if not whole.all():
            bad = np.flatnonzero(~whole)
            raise ValueError(f"{column_subject(s.name)} holds {bad.size} value(s) that are not report codes "
                             f"(non-negative whole numbers), first at position {bad[0]} ({values[bad[0]]!r})")
        codes = values.astype(np.uint64)
    if _check:
        check_codes(s, s.name, codes)
    try:
        return mech.reports_from_column(codes)
    except (TypeError, ValueError) as exc:
        check_codes(s, s.name, codes)  # a changed column is reported as such, before its odd codes
        raise type(exc)(f"{column_subject(s.name)}: {exc}") from None


def aggregate_series(s: "pd.Series", spec: Spec | None = None) -> Aggregate:
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
    mech = mechanism_of(reports.spec)
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
    info = frame_info(s) or {}
    return declare_shuffled(agg, info.get("shuffle_delta"), info.get("epsilon_per_row"))


def estimate_mean_named(mech: Any, agg: Aggregate, record: Any, name: Any, **kwargs: Any) -> Any:
    """``mech.estimate_mean(agg, **kwargs)`` named after report column ``name`` of ``record``.

    ``record`` is an object carrying the report record: a vector column's coordinates take the names of the value
    columns it was privatized from.
    """
    names = column_sources(record, name)
    if names is not None:
        return estimator(mech, "estimate_mean", kwargs)(agg, names=names, **kwargs)
    return named(estimator(mech, "estimate_mean", kwargs)(agg, **kwargs), name)


def quantiles_named(mech: Any, agg: Aggregate, q: Any, name: Any, **kwargs: Any) -> Any:
    """Quantile(s) of the queryable estimate from ``agg``, as :meth:`pandas.Series.quantile` gives them.

    A float for a scalar ``q``; otherwise a Series of the quantiles indexed by ``q`` and named ``name``.
    ``kwargs`` go to ``mech.queryable_estimate`` (the estimator's options).
    """
    est = mech.queryable_estimate(agg, **kwargs)
    if np.ndim(q) == 0:
        return float(est.quantile(q))
    qs = np.asarray(q, dtype=np.float64)
    return pd.Series(np.asarray(est.quantile(qs), dtype=np.float64), index=pd.Index(qs), name=name)


def range_query(mech: Any, agg: Aggregate, lo: Any, hi: Any = None, **kwargs: Any) -> Any:
    """Estimated fraction of people with values in ``[lo, hi]``, from the queryable estimate of ``agg``.

    A report column of several value columns (:class:`~ldpnum.HDG`) takes one mapping ``{column: (lo, hi)}`` as
    ``lo`` and no ``hi``, passed to its estimate's ``range``.
    """
    est = mech.queryable_estimate(agg, **kwargs)
    if hi is None:
        if not isinstance(lo, Mapping):
            raise TypeError("range needs lo and hi (or, for a report column of several value columns, one "
                            "mapping {column: (lo, hi)})")
        return est.range(lo)
    return est.range(lo, hi)


def subset(obj: Any, mask: Any) -> Any:
    """The rows of report object ``obj`` (a report Series or DataFrame) where ``mask`` is True, still reports.

    Selecting people by a **public** key (a region, a day, an ``aggregate(by=)`` group) is post-processing: the
    subset's estimates describe those people and cost no privacy. The record is kept (specs, strategy,
    ``epsilon_per_row``) with the digests of the rows kept, after checking that every report column is unchanged.
    The mask must not be computed from the report codes: selecting reports by their own values biases every
    estimate.

    Parameters
    ----------
    obj : pandas.Series or pandas.DataFrame
        An unchanged report object (from ``privatize``, :func:`concat` or a Parquet file).
    mask : array-like of bool or pandas.Series of bool
        One entry per row (a Series is aligned on the index); no missing entries.

    Returns
    -------
    pandas.Series or pandas.DataFrame

    Raises
    ------
    TypeError
        For a mask that is not boolean.
    ValueError
        For an object without a record, a mask of the wrong length or with missing entries, or a collection
        declared shuffled (its reports carry no row to select by).
    ReportsChangedError
        For a report column changed since it was privatized.

    Examples
    --------
    >>> import numpy as np, pandas as pd, ldpnum as ldp
    >>> df = pd.DataFrame({"x": np.r_[np.full(20_000, 2.0), np.full(20_000, 8.0)]})
    >>> r = df.ldp.privatize({"x": ldp.Duchi(2.0, (0, 10))}, rng=0)
    >>> south = np.repeat([False, True], 20_000)       # public: where each report was collected
    >>> round(r.ldp.subset(south)["x"].ldp.estimate_mean().value)
    8
    """
    info = frame_info(obj)
    if info is None:
        raise ValueError("subset needs a report object (from privatize, concat or a report file); this one carries no "
                         "ldpnum record")
    if info.get("shuffle_delta") is not None:
        raise ValueError("these reports are declared one shuffled batch: they reach the analyst without rows to "
                         "select people by, so a subset of them is not a shuffled batch; collect the groups apart")
    if isinstance(mask, pd.Series) and mask.index.is_unique:
        mask = mask.reindex(obj.index)
    keep = mask.to_numpy() if isinstance(mask, (pd.Series, pd.Index)) else np.asarray(mask)
    if keep.ndim != 1 or len(keep) != len(obj):
        raise ValueError(f"mask has {len(keep)} entries for {len(obj)} rows: give one boolean per row")
    if pd.isna(keep).any():
        raise ValueError(f"mask has {int(pd.isna(keep).sum())} missing entries, first at row "
                         f"{int(np.flatnonzero(pd.isna(keep))[0])}: say whether those rows belong to the subset")
    if keep.dtype != bool:
        raise TypeError(f"mask must be boolean (one True/False per row); got dtype {keep.dtype}")
    specs = column_specs(obj)
    columns = [obj] if isinstance(obj, pd.Series) else [obj[c] for c in specs if c in obj.columns]
    out = obj[keep]
    digests = {}
    for col in columns:
        reports_of(col)  # raises ReportsChangedError for a changed column
        part = out if isinstance(out, pd.Series) else out[col.name]
        digests[col.name] = codes_digest(mechanism_of(specs[col.name]).column_codes(
            reports_of(part, specs[col.name], _check=False)))
    sources = {c: column_sources(obj, c) for c in specs if column_sources(obj, c) is not None}
    return attach_specs(out, specs, strategy=info.get("strategy"), epsilon_per_row=info.get("epsilon_per_row"),
                        digests=digests, sources=sources)


def concat(objs: Any, **kwargs: Any) -> Any:
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
        For no parts, parts without an ldpnum record, a changed part (:class:`~ldpnum._frame.ReportsChangedError`), or
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
    infos: list[dict[str, Any]] = []
    for i, o in enumerate(objs):
        info = frame_info(o)
        if info is None:
            raise ValueError(f"part {i} carries no ldpnum record: it is not a report object")
        infos.append(info)
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
        parts = [d for d in (column_digest(o, c) for o in objs) if d is not None]
        if len(parts) == len(objs):
            digests[c] = add_digests(*parts)
    out = pd.concat(objs, **kwargs)
    sources = {c: column_sources(objs[0], c) for c in specs if column_sources(objs[0], c) is not None}
    return attach_specs(out, specs, strategy=infos[0].get("strategy"),
                        epsilon_per_row=infos[0].get("epsilon_per_row"), digests=digests, sources=sources)


def check_describe_method(specs: Mapping, method: Any) -> str:
    """``method`` of :func:`describe_aggregates` for report columns of ``specs`` (label -> Spec), before a report is read.

    ``"unbiased"`` for every column; ``"mle"`` only when every numerical column's mechanism offers the
    maximum-likelihood mean (:func:`check_estimate_method`; categorical columns are not summarised). A refusal
    names the first column that does not.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> check_describe_method({"smoker": ldp.RandomizedResponse(1.0).spec}, "mle")
    'mle'
    """
    check_choice(method, "method", ESTIMATE_METHODS)
    for name, spec in specs.items() if method != "unbiased" else ():
        mech = mechanism_of(spec)
        if mech.categorical:
            continue
        try:
            check_estimate_method(mech, "estimate_mean", method)
        except ValueError as exc:
            raise ValueError(f"{column_subject(name)}: {exc}") from None
    return str(method)


def describe_aggregates(aggregates: Mapping, *, level: float = 0.95, sources: Mapping | None = None,
                        bootstrap: int | None = None, rng: SeedLike = None,
                        method: str = "unbiased") -> "pd.DataFrame":
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
    method : {"unbiased", "mle"}, optional
        ``"mle"``: ``mean``, ``std_error``, ``ci_low`` and ``ci_high`` are the maximum-likelihood mean, its
        Wald standard error and its likelihood-ratio interval (randomized response, stochastic rounding,
        Duchi et al.); refused (:func:`check_describe_method`) when a numerical column's mechanism has none.

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
    check_describe_method({name: agg.spec for name, agg in aggregates.items()}, method)
    rows, index, skipped = [], [], []
    sources = sources or {}
    for name, agg in aggregates.items():
        mech = mechanism_of(agg.spec)
        if mech.categorical:
            skipped.append((name, mech))  # categories and items, not numbers
            continue
        row = {"mechanism": agg.spec.mechanism, "epsilon": agg.spec.epsilon, "n_reports": agg.n_reports,
               "central_epsilon": np.nan if agg.shuffle is None else agg.shuffle.epsilon}
        for label, stats in mech.describe_rows(agg, column=name, names=sources.get(name), level=level,
                                               bootstrap=bootstrap, rng=rng, method=method):
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


# -- answering named questions of an aggregate ----------------------------------------------------------------

#: The questions :func:`answer_queries` answers (``ldpnum estimate --what``).
QUERIES = ("mean", "distribution", "quantiles", "range", "frequencies", "marginals")


class MarginalQueryError(ValueError):
    """A marginal that the estimate of a marginals report column cannot give (:func:`answer_queries`)."""


# -- a report frame's columns, whole or by a public group key ---------------------------------------------------

def _frame_columns(df: "pd.DataFrame", recorded: Mapping, specs: Any) -> tuple[list, Mapping]:
    """The report columns of ``df`` (the recorded ones, then those ``specs`` adds) and the explicit specs."""
    if specs is None:
        specs = {}
    elif not isinstance(specs, Mapping):
        raise TypeError(f"specs must be a mapping {{column: Spec}}; got {type(specs).__name__}")
    names = list(recorded) + [c for c in specs if c not in recorded]
    for c in names:
        if c not in df.columns:
            raise ValueError(f"column {c!r} is not in the DataFrame; its columns: {list(df.columns)}")
    return names, specs


def group_keys(df: "pd.DataFrame", by: Any, names: list) -> np.ndarray:
    """One public group key per row of ``df``.

    ``by`` is a column that is not a report column, a Series on the index, or an array of ``len(df)`` keys; refused
    when a key is missing or ``by`` names a report column.
    """
    n = len(df)
    if isinstance(by, str) or np.ndim(by) == 0:
        if by not in df.columns:
            raise ValueError(f"by={by!r} is not a column of the DataFrame; its columns: {list(df.columns)}")
        if by in names:
            raise ValueError(f"by={by!r} is a report column: its codes are randomized, not group keys; group by "
                             "a public column")
        keys = df[by]
    else:
        if isinstance(by, pd.Series):  # aligned on the index (rows without a key are missing keys)
            by = by.reindex(df.index) if by.index.is_unique else by
        values = by.to_numpy() if isinstance(by, (pd.Series, pd.Index)) else np.asarray(by, dtype=object)
        if values.ndim != 1 or len(values) != n:
            raise ValueError(f"by has {len(values)} keys for {n} rows: give one key per row (or a column name)")
        keys = pd.Series(values, index=df.index)
    missing = keys.isna()
    if missing.any():
        first = int(np.flatnonzero(missing.to_numpy())[0])
        raise ValueError(f"the group key has {int(missing.sum())} missing value(s), first at row {first}: every "
                         "report belongs to a group (fill them with a group of their own)")
    return keys.to_numpy()


def aggregate_frame(df: "pd.DataFrame", recorded: Mapping, specs: Any = None, *, by: Any = None) -> dict:
    """Column -> :class:`~ldpnum.Aggregate` of every report column of ``df`` (with ``by``, per group).

    With ``by`` (a public key, see :func:`group_keys`): group -> {column -> Aggregate}, groups sorted (first-seen
    order for keys that do not sort). ``recorded`` are the frame's recorded specs, ``specs`` adds or checks columns. Each column's record is checked
    once on the whole column; the group aggregates add up to the column's. This is
    :meth:`ldpnum.pandas.DataFrameAccessor.aggregate`.
    """
    names, specs = _frame_columns(df, recorded, specs)
    if by is None:
        return {c: aggregate_series(df[c], specs.get(c)) for c in names}
    keys = group_keys(df, by, names)
    whole = {c: aggregate_series(df[c], specs.get(c)) for c in names}  # checks each record once
    groups = pd.unique(keys)
    try:
        groups = sorted(groups)
    except TypeError:  # keys of mixed types: first-seen order
        pass
    out: dict[Any, dict[Any, Aggregate]] = {}
    for g in groups:
        rows = np.asarray(keys == g)
        out[g] = {c: mechanism_of(whole[c].spec).aggregate(
            reports_of(df[c][rows], whole[c].spec, _check=False)) for c in names}
    for c in names:  # the groups partition the rows: their aggregates add up to the column's
        total = sum((out[g][c] for g in groups[1:]), out[groups[0]][c]) if len(groups) else None
        if total is not None and total != whole[c]:  # pragma: no cover - a partition always adds up
            raise AssertionError(f"group aggregates of column {c!r} do not add up")
    return out


def describe_frame(df: "pd.DataFrame", recorded: Mapping, specs: Any = None, *, level: float = 0.95, by: Any = None,
                   bootstrap: int | None = None, rng: Any = None, method: str = "unbiased") -> "pd.DataFrame":
    """:func:`describe_aggregates` of every report column of ``df`` (with ``by``: per group).

    Per group, the table has a two-level row index. The estimate ``method`` is checked for every column before a
    report is read. This is :meth:`ldpnum.pandas.DataFrameAccessor.describe`.
    """
    check_describe_method({**recorded, **(specs or {})}, method)
    sources = {c: column_sources(df, c) for c in recorded if column_sources(df, c) is not None}
    if by is None:
        return describe_aggregates(aggregate_frame(df, recorded, specs), level=level, sources=sources,
                                   bootstrap=bootstrap, rng=rng, method=method)
    parts = {}
    for g, aggregates in aggregate_frame(df, recorded, specs, by=by).items():
        for c, agg in aggregates.items():
            if agg.n_reports == 0:
                raise ValueError(f"group {g!r} has no reports in column {c!r}: nothing can be estimated for it "
                                 "(merge it with another group, or collect more)")
        parts[g] = describe_aggregates(aggregates, level=level, sources=sources, bootstrap=bootstrap, rng=rng,
                                       method=method)
    label = by if isinstance(by, str) else "group"
    return pd.concat(parts, names=[label])


def marginal_lines(mg: dict) -> list[str]:
    """The text lines of :func:`answer_queries`'s ``"marginals"`` answer (what ``ldpnum estimate`` prints).

    A 2-way table as a grid of cells; other tables (and bootstrapped ones, with every cell's interval and
    standard error) one cell a line.
    """
    import numpy as np

    lines = [f"marginals ({mg['consistency']} post-processing; released sets: "
             + "; ".join(",".join(v) for v in mg["sets"]) + ")"]
    for t in mg["tables"]:
        freq = np.asarray(t["frequency"])
        how = "" if t["covered"] else " (maximum entropy: no released set holds these columns)"
        lines.append(f"P({', '.join(t['columns'])}){how}:")
        boot = [np.asarray(t[k]) for k in ("ci_low", "ci_high", "standard_error")] if "ci_low" in t else None
        if freq.ndim == 2 and boot is None:
            lines.append(f"  {t['columns'][0] + ' / ' + t['columns'][1]:>14}  "
                         + "  ".join(f"{j:>7}" for j in range(freq.shape[1])))
            lines += [f"  {i:>14}  " + "  ".join(f"{v:7.4f}" for v in row) for i, row in enumerate(freq)]
            continue
        if boot:
            lines.append(f"  {'cell':>14}  {'frequency':>9}  {100 * t['level']:g}% bootstrap CI, standard error")
        for idx in np.ndindex(freq.shape):
            ci = f"    [{boot[0][idx]:.4f}, {boot[1][idx]:.4f}], {boot[2][idx]:.4f}" if boot else ""
            lines.append(f"  {', '.join(map(str, idx)):>14}  {freq[idx]:7.4f}{ci}")
    return lines


def _marginal_sets(marginals: Any) -> list | None:
    """The column tuples of ``marginals``: a list of column tuples, or one ``"C1,C2"`` string; None stays None."""
    if marginals is None:
        return None
    if isinstance(marginals, str):
        return [tuple(c.strip() for c in marginals.split(","))]
    return [tuple(cols) for cols in marginals]


def check_queries(mech: Mechanism, queries: Any, *, marginals: Any = None, query: Any = None,
                  distribution: bool = False, n_bins: int | None = None, estimate_method: str = "unbiased",
                  postprocess: str = "none", bootstrap: int | None = None, candidates: Any = None,
                  names: ArgumentNames = PYTHON_NAMES) -> list:
    """The questions :func:`answer_queries` is to answer, checked against the mechanism before a report is read.

    A request the mechanism cannot answer fails at once, not after a large collection is read.

    Parameters
    ----------
    mech : Mechanism
        The report column's mechanism.
    queries : list of str or None
        Among :data:`QUERIES`; None: the mechanism's default (its mean, else its distribution, else its
        frequencies; marginals for a marginals report column).
    marginals, query, distribution, n_bins, estimate_method, postprocess, bootstrap, candidates : optional
        As for :func:`answer_queries` (``marginals`` may also be one ``"C1,C2"`` string); ``candidates`` only for
        reports decoded against a dictionary (:func:`decodes_candidates`), whose frequencies take no
        ``postprocess``; ``"mle"`` is checked
        against the mechanism (:func:`check_estimate_method`) and refused for the questions it does not apply to;
        with ``bootstrap``, a range whose interval the estimate would refuse is refused from the spec
        (:meth:`~ldpnum.Mechanism.check_range_interval`: an HDG range cutting a grid cell).
    names : ArgumentNames, optional
        The front end's words for the refusals (default: the Python API's).

    Returns
    -------
    list of str
        The questions to answer.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> check_queries(ldp.SquareWave(1.0, (0, 1)), None), check_queries(ldp.GRR(1.0, k=4), None)
    (['mean'], ['frequencies'])
    >>> check_queries(ldp.Duchi(1.0, (0, 1)), ["quantiles"])
    Traceback (most recent call last):
    ...
    ValueError: duchi reports estimate means only; distributions, quantiles, ranges and distribution=True need \
square_wave, general_wave, piecewise, hybrid or hierarchical_histogram
    """
    name = mech.spec.mechanism

    def refuse(rule: str, **fields: Any) -> None:
        _refuse(names, ValueError, names.queries[rule].format(name=name, **fields))

    unknown = [q for q in queries or () if q not in QUERIES]
    if unknown:
        raise ValueError(f"queries must be among {', '.join(QUERIES)}; got {unknown[0]!r}")
    is_marginals = mech.offers("estimate_marginals")
    if is_marginals or (queries and "marginals" in queries) or marginals is not None:
        if not is_marginals:
            refuse("no_marginals")
        if queries is not None and list(queries) != ["marginals"]:
            refuse("marginals_only")
        if distribution:
            refuse("no_plot")
        columns = list(getattr(mech, "columns", ()))
        for cols in _marginal_sets(marginals) or ():
            unknown = [c for c in cols if c not in columns]
            if unknown or len(set(cols)) != len(cols):
                refuse("marginal_columns", value=marginals, columns=", ".join(columns),
                       problem=f"unknown: {', '.join(unknown)}" if unknown else "a column is named twice")
        return ["marginals"]
    has_mean = mech.offers("estimate_mean")
    has_dist = mech.offers("estimate_distribution")
    is_freq = mech.offers("estimate_frequencies")
    has_tree = mech.offers("estimate_ranges")
    numerical = has_mean or has_dist or has_tree
    ranges_only = has_tree and not (has_mean or has_dist)
    if queries is None:
        if ranges_only:
            refuse("ranges_needed")
        queries = ["mean"] if has_mean else ["distribution"] if has_dist else ["frequencies"] if is_freq else ["mean"]
    queries = list(queries)
    if ranges_only and any(q != "range" for q in queries):
        refuse("ranges_only")
    multi = isinstance(query, dict)
    for what in queries:
        if what == "frequencies" and not is_freq:
            refuse("numerical")
        if what != "frequencies" and not numerical:
            refuse("categorical")
        if what == "range" and multi != ranges_only:
            refuse("range_of_columns" if multi else "range_of_values")
        if (what in ("distribution", "quantiles") or distribution or (what == "range" and not multi)) and not has_dist:
            refuse("no_distribution", estimates="frequencies" if is_freq else "means")
    if has_tree and n_bins is not None:
        n_leaves = getattr(mech, "n_leaves", None)  # a range tree; HDG's bins are the cells of its grids
        refuse("n_bins", bins="the cells of its grids" if n_leaves is None else f"its leaves ({n_leaves})")
    if bootstrap is not None and query is not None and "range" in queries:
        try:
            mech.check_range_interval(query)
        except ValueError as exc:
            refuse("range_interval", problem=str(exc))
    dictionary = decodes_candidates(mech)
    if candidates is not None and not dictionary:
        refuse("no_candidates")
    if candidates is None and mech.needs_candidates and "frequencies" in queries:
        refuse("needs_candidates", why=_WHY_CANDIDATES.get(name, "are decoded against a dictionary of items"))
    if dictionary and "frequencies" in queries and postprocess != "none":
        refuse("candidates_postprocess", value=postprocess)
    if estimate_method != "unbiased":
        for what in queries:
            if what not in ("mean", "frequencies"):
                refuse("mle_queries", what=what)
            check_estimate_method(mech, "estimate_mean" if what == "mean" else "estimate_frequencies",
                                  estimate_method, names=names)
            if what == "frequencies" and postprocess != "none":
                refuse("mle_postprocess", value=postprocess)
    return queries


def _mean_entry(label: Any, est: Any, level: float) -> dict:
    """One mean estimate (of a column, or of one coordinate of a vector) as JSON: value, standard error, CI."""
    lo, hi = est.confidence_interval(level)
    return {**({} if label is None else {"coordinate": label}), "value": est.value,
            "standard_error": est.standard_error, "ci": [lo, hi]}


def answer_queries(mech: Mechanism, agg: Aggregate, queries: list, *, n_bins: int | None = None,
                   method: str = "ems-cv", level: float = 0.95, quantiles: Any = (0.25, 0.5, 0.75),
                   query: Any = None, marginals: list | None = None, postprocess: str = "none",
                   distribution: bool = False, bootstrap: int | None = None,
                   rng: SeedLike = None, estimate_method: str = "unbiased",
                   candidates: Any = None) -> tuple[dict, Any]:
    """Answer named questions of one report column's aggregate, as JSON-friendly values.

    The command line's ``ldpnum estimate --what ...`` prints (or writes as JSON) what this returns; the
    questions are checked against the mechanism before any report is read, so each one here is one the
    mechanism answers. The distribution is estimated once and shared by the questions that need it.

    Parameters
    ----------
    mech : Mechanism
        The report column's mechanism.
    agg : Aggregate
        Its aggregate (at least one report).
    queries : list of str
        Among :data:`QUERIES`: ``"mean"`` (unbiased, with its ``level`` interval, per coordinate for a vector;
        else the mean of the estimated distribution), ``"quantiles"`` (at ``quantiles``), ``"range"`` (the
        mass and count in ``query``: ``(low, high)``, or ``{column: (low, high)}`` for a mechanism of
        several columns), ``"distribution"`` (its summary, bins and probabilities), ``"marginals"`` (the
        tables of ``marginals``, a list of column tuples, default every released set) and ``"frequencies"``
        (with ``postprocess`` and ``level`` intervals; of reports decoded against a dictionary, RAPPOR's or a
        count-mean sketch's, the frequencies of ``candidates``, a sequence of items, in decreasing order).
    n_bins, method : optional
        The distribution estimator's settings (range trees take neither: their bins are their leaves).
    distribution : bool, default False
        Estimate the distribution even when no question needs it (to plot it).
    bootstrap : int, optional
        Give the quantiles, ranges and marginals ``level`` intervals from this many parametric bootstrap
        replicates (20 to 100,000; 39 or more for 95%): ``ci`` ``[low, high]`` next to each value (marginals:
        ``ci_low``, ``ci_high`` and ``standard_error`` tables), the estimates' own ``ci=`` intervals
        (window mechanisms' ``estimate_distribution(bootstrap=)``, range trees' and HDG's
        ``estimate_ranges(bootstrap=)``, ``Marginals.estimate_marginals(bootstrap=)``), refused with their
        ValueError where they cannot vouch for one (an HDG range cutting a grid cell, a maximum-entropy marginal).
        Means and frequencies keep their closed-form intervals. ``rng`` seeds the resampling.
    estimate_method : {"unbiased", "mle"}, optional
        How means and frequencies are estimated: unbiased (default), or by maximum likelihood with
        likelihood-ratio intervals (``estimate_mean(method="mle")`` of randomized response, stochastic rounding
        and Duchi et al.'s mechanism; ``estimate_frequencies(method="mle")`` of GRR); refused, before a report
        is read, for other mechanisms and other questions (:func:`check_queries`).

    Returns
    -------
    answers : dict
        Question -> its answer (JSON-friendly).
    distribution : DistributionEstimate or None
        The estimated distribution, when one was estimated.

    Raises
    ------
    ValueError
        For an aggregate without reports, or a question the mechanism cannot answer (:func:`check_queries`).
    MarginalQueryError
        For a marginal the estimate cannot give.
    """
    is_tree = mech.offers("estimate_ranges")  # range trees: the distribution is the tree's leaves
    dist = None
    tree = None
    out: dict = {}
    m: Any = mech
    boot = {} if bootstrap is None else {"bootstrap": bootstrap, "rng": rng}

    def estimated():
        nonlocal dist
        if dist is None:
            if is_tree:
                dist = m.estimate_distribution(agg)
            else:
                dist = m.estimate_distribution(agg, n_bins=n_bins, method=method, **boot)
        return dist

    def queryable():  # what answers quantiles and ranges, with its replicates when bootstrapped
        nonlocal tree
        if not is_tree:
            return estimated()
        if tree is None:
            tree = m.estimate_ranges(agg, **boot)
        return tree

    def with_ci(entry, iv, many=False):
        if bootstrap is not None:
            entry["level"] = level
            entry["ci"] = ([[float(a), float(b)] for a, b in zip(iv.low, iv.high)] if many
                           else [float(iv.low), float(iv.high)])
        return entry

    queries = check_queries(mech, queries, marginals=marginals, query=query, distribution=distribution,
                            n_bins=n_bins, estimate_method=estimate_method, postprocess=postprocess,
                            bootstrap=bootstrap, candidates=candidates)
    mle = estimate_method == "mle"
    how = {"method": "mle"} if mle else {}
    if bootstrap is not None:
        import inspect

        from .estimation.bootstrap import check_replicates

        check_replicates(bootstrap, 1, name="bootstrap")
        takes = [getattr(mech, f) for f in ("estimate_distribution", "estimate_ranges", "estimate_marginals")
                 if mech.offers(f)]
        if not any("bootstrap" in inspect.signature(f).parameters for f in takes):
            raise ValueError(f"{mech.spec.mechanism} reports give no bootstrap intervals (bootstrap= applies to "
                             "the quantiles, ranges and marginals of square_wave, general_wave, piecewise, hybrid, "
                             "hierarchical_histogram, hdg and marginals reports)")
    if agg.n_reports == 0:
        raise ValueError("the column holds no reports")
    for what in queries:
        if what == "mean":
            if mech.offers("estimate_mean"):
                est = m.estimate_mean(agg, **how)
                coordinates = getattr(est, "coordinates", None)  # a vector's mean: one estimate per coordinate
                if coordinates is not None:
                    out["mean"] = {"coordinates": [_mean_entry(label, e, level)
                                                   for label, e in coordinates().items()],
                                   "level": level, "unbiased": True, "method": "unbiased"}
                else:
                    out["mean"] = {**_mean_entry(None, est, level), "level": level, "unbiased": not mle,
                                   "method": estimate_method}
            else:
                out["mean"] = {"value": estimated().mean, "standard_error": None, "level": None, "ci": None,
                               "unbiased": False, "method": None}
        elif what == "quantiles":
            d = queryable() if bootstrap is not None else estimated()
            iv = d.quantile(list(quantiles), ci=level) if bootstrap is not None else None
            out["quantiles"] = with_ci({"q": list(quantiles), "value": [float(v) for v in d.quantile(quantiles)]},
                                       iv, many=True)
        elif what == "range" and isinstance(query, dict):  # several value columns (HDG)
            hdg = m.estimate_ranges(agg, **boot)
            mass = float(hdg.range(query))
            out["range"] = with_ci({"query": {c: list(v) for c, v in query.items()}, "mass": mass,
                                    "count": mass * agg.n_reports, "n_reports": agg.n_reports},
                                   hdg.range(query, ci=level, interval="bootstrap") if boot else None)
        elif what == "range":
            lo, hi = query
            d = queryable()
            mass = float(d.range(lo, hi))
            out["range"] = with_ci({"low": lo, "high": hi, "mass": mass, "count": mass * agg.n_reports,
                                    "n_reports": agg.n_reports}, d.range(lo, hi, ci=level) if boot else None)
        elif what == "distribution":
            d = estimated()
            qs = (0.05, 0.25, 0.5, 0.75, 0.95)
            out["distribution"] = {"n_bins": d.n_bins, "method": d.method, "n_iter": d.n_iter,
                                   "converged": d.converged, "mean": d.mean, "std": math.sqrt(max(d.var, 0.0)),
                                   "quantiles": {"q": list(qs), "value": [float(v) for v in d.quantile(qs)]},
                                   "bin_edges": [float(v) for v in d.bin_edges],
                                   "probabilities": [float(v) for v in d.probabilities]}
        elif what == "marginals":
            est = m.estimate_marginals(agg, **boot)
            wanted = _marginal_sets(marginals) or list(est.sets)
            try:
                tables = [{"columns": list(cols), "covered": est.covers(cols),
                           "frequency": est.marginal(cols).tolist()} for cols in wanted]
                if boot:
                    for t, cols in zip(tables, wanted):
                        iv = est.marginal(cols, ci=level)
                        t.update(level=level, ci_low=iv.low.tolist(), ci_high=iv.high.tolist(),
                                 standard_error=est.standard_error(cols).tolist())
            except (TypeError, ValueError) as exc:
                raise MarginalQueryError(str(exc).strip() or type(exc).__name__) from exc
            out["marginals"] = {"sets": [list(v) for v in est.sets], "consistency": est.consistency,
                                "tables": tables, "n_reports": agg.n_reports}
        elif what == "frequencies":
            if decodes_candidates(m):  # against the candidates (a HeavyHittersEstimate), or a sketch's codes
                est = m.estimate_frequencies(agg, **({} if candidates is None else {"candidates": candidates}), **how)
            else:
                est = m.estimate_frequencies(agg, postprocess=postprocess, **how)
            items = getattr(est, "items", None)
            lo, hi = est.confidence_interval(level)
            # the candidates found, or the declared categories, or the codes 0..k-1
            labels = list(items) if items is not None else est.to_series().index.tolist()
            out["frequencies"] = {"postprocess": getattr(est, "postprocess", "none"),
                                  "method": est.provenance.get("method") if items is not None else est.method,
                                  "level": level, "category": labels,
                                  "frequency": [float(v) for v in est.frequencies],
                                  "standard_error": [float(v) for v in est.standard_errors],
                                  "ci_low": [float(v) for v in lo], "ci_high": [float(v) for v in hi],
                                  "count": [float(v) for v in est.counts]}
    if distribution:
        estimated()
    return out, dist
