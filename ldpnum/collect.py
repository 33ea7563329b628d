r"""The one table-collection layer: columns under a strategy, batches of rows, report columns read back.

Every front end that turns a *table* into report columns — the pandas accessor (:mod:`ldpnum.pandas`, per
frame), the command line (:func:`ldpnum.cli.privatize_file`, per Arrow batch of a file), Dask and other engines
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
    (:func:`ldpnum._frame.codes_digest`). :func:`check_shuffle` and :func:`check_ledger` run before the first
    draw, :func:`record_ledger` after the last.
Reading a report column back
    :func:`mechanism_of` rebuilds (and caches) the mechanism of a spec; :func:`reports_from_codes` and
    :func:`aggregate_codes` check a column's codes against the digest recorded for them and turn them into
    :class:`~ldpnum.Reports` or an :class:`~ldpnum.Aggregate` (declared shuffled when the record says so).

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

import math
import warnings
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._random import MAX_ASSIGNED, assign_columns, child_rng
from ._validation import check_choice
from .exceptions import BudgetWarning

__all__ = ["MAX_COLUMNS", "NAN_POLICIES", "STRATEGIES", "BatchReports", "CollectionPlan", "ColumnPlan", "assign_rows",
           "check_ledger", "check_shuffle", "fill_values", "plan_columns", "prepare_column", "privatize_batch",
           "record_ledger", "report_label", "resolve_strategy", "takes_unknown", "vector_sources"]

#: How the columns of a table share each row's privacy budget.
STRATEGIES = ("all-columns", "one-column-per-row")

#: At most this many columns in "one-column-per-row" (see :func:`ldpnum._random.assign_columns`).
MAX_COLUMNS = MAX_ASSIGNED

#: What a front end does with missing values: refuse them, or impute a public fill value.
NAN_POLICIES = ("raise", "impute")


# -- planning -------------------------------------------------------------------------------------------------

def resolve_strategy(strategy: str | None, mechanisms: Any, *, stacklevel: int = 3) -> str:
    """``strategy``, or the default ``"all-columns"`` when it is None, with a
    :class:`~ldpnum.exceptions.BudgetWarning` when that default sums the ε of several columns (an explicit
    strategy is silent). Every integration that privatizes frames resolves its default here.

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
    """The value columns behind ``key`` (None for a mechanism of one column): the mechanism decides
    (:meth:`~ldpnum.Mechanism.source_columns`); a non-mechanism is refused later, by its own check.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> vector_sources(("q1", "q2"), ldp.SampledDimensions("piecewise", 1.0, [(0, 1), (0, 1)]))
    ['q1', 'q2']
    >>> vector_sources("x", ldp.Duchi(1.0, (0, 1))) is None
    True
    """
    from .mechanisms import Mechanism

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
    def split(self) -> bool:
        """Whether each row reports one column ("one-column-per-row")."""
        return self.strategy == "one-column-per-row"

    @property
    def epsilon_per_row(self) -> float:
        """The ε each row spends: the sum of the columns' ε (all-columns) or the largest (one-column-per-row)."""
        epsilons = [c.mechanism.epsilon for c in self.columns]
        return float(max(epsilons) if self.split else math.fsum(epsilons))

    def streams(self, rng: Any) -> list:
        """The collection's random streams: report column ``j`` draws from ``child_rng(rng, j)``, and under
        "one-column-per-row" the rows' columns from ``child_rng(rng, m)`` (the last stream).

        Each is a Generator shared by all batches (words are consumed in row order, so the reports do not
        depend on the batch size), or None for secure randomness (``rng=None``: each draw keyed afresh)."""
        m = len(self.columns)
        return [None if rng is None else np.random.default_rng(child_rng(rng, j)) for j in range(m + self.split)]


def plan_columns(mechanisms: Mapping, strategy: str) -> CollectionPlan:
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
    return CollectionPlan(tuple(ColumnPlan(k, labels[k], mechanisms[k], sources[k]) for k in keys), strategy)


def assign_rows(stream: Any, n: int, m: int) -> list[np.ndarray]:
    """The rows (positions) that report each of ``m`` columns under "one-column-per-row": row ``i`` reports
    one column drawn uniformly from ``stream`` independently of every value
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
    """Each column's public fill value: ``fill_value`` for every column, or a mapping column -> value (which
    must name privatized columns only)."""
    if isinstance(fill_value, Mapping):
        unknown = [c for c in fill_value if c not in columns]
        if unknown:
            raise ValueError(f"fill_value names {len(unknown)} column(s) that are not privatized, first "
                             f"{unknown[0]!r}; privatized columns: {list(columns)}")
        return {c: fill_value.get(c) for c in columns}
    return {c: fill_value for c in columns}


def takes_unknown(mech: Any) -> bool:
    """Whether ``mech.prepare_values`` takes ``unknown=`` (categorical mechanisms: frequency oracles)."""
    import inspect

    return "unknown" in inspect.signature(mech.prepare_values).parameters


def prepare_column(mech: Any, x: Any, name: str | None, nan_policy: str = "raise", fill_value: Any = None,
                   unknown: str = "raise", **options: Any) -> Any:
    """``mech.prepare_values`` of one column (validated, nothing drawn), with ``unknown=`` for the mechanisms
    that take it; ``options`` (e.g. ``out_of_range``) go to ``prepare_values`` unchanged."""
    if unknown == "raise":
        return mech.prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value, **options)
    if not takes_unknown(mech):
        raise TypeError(f"unknown={unknown!r} applies to categorical mechanisms (frequency oracles such as "
                        f"ldp.GRR); {type(mech).__name__} takes values in bounds (out-of-range values are clipped)")
    return mech.prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value, unknown=unknown,
                               **options)


def check_shuffle(shuffled: Any, shuffle_delta: Any, obj: Any = None) -> float | None:
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
    if shuffled and obj is not None:
        import pandas as pd

        if not isinstance(obj.index, pd.RangeIndex):
            first = obj.index[0] if len(obj.index) else None
            raise ValueError(f"shuffled=True declares that the reports reach the analyst with nothing linking them "
                             f"to their senders, but they keep the input's index ({type(obj.index).__name__}"
                             f"{'' if first is None else f', first label {first!r}'}), which identifies each row: "
                             "privatize obj.reset_index(drop=True) (a ledger still names the people with people=)")
    return delta if shuffled else None


def check_ledger(ledger: Any, epsilon: float, obj: Any, people: Any) -> Any:
    """The people ids of a collection about to be drawn from the rows of ``obj`` (a pandas object), after the
    ledger's cap check (None without a ledger).

    ``people`` gives one id per row (default: the index), or names the DataFrame's column of ids."""
    if ledger is None:
        if people is not None:
            raise ValueError("people= names the rows' people for a ledger; pass ledger= too")
        return None
    if not (hasattr(ledger, "check") and hasattr(ledger, "record")):
        raise TypeError(f"ledger must be an ldpnum.PrivacyLedger; got {type(ledger).__name__}")
    import pandas as pd

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


def record_ledger(ledger: Any, *, epsilon: float, people: Any, specs: Any, strategy: str | None = None,
                  label: str | None = None, shuffled: bool = False, shuffle_delta: float = 1e-6,
                  counts: Any = ()) -> None:
    """Charge a drawn collection to ``ledger``: each of ``people`` spends ``epsilon``.

    Declared shuffled, the entry shows the central ε of the smallest non-empty report column (``counts``:
    the number of reports of each column; under "one-column-per-row" each column's estimates show the central
    ε of its own reports, so the entry states the largest of them, and the two agree)."""
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
                    digest: bool = True) -> BatchReports:
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
    # Everything is valid: from here on, words are drawn.
    from ._frame import codes_digest

    rows = assign_rows(streams[m], n_rows, m) if plan.split else None
    codes, missing, digests = {}, {}, {}
    for j, col in enumerate(plan.columns):
        mech = col.mechanism
        if rows is None:
            own = mech.column_codes(mech._randomize(values[j], streams[j]))
            codes[col.label], missing[col.label] = _owned(own), None
        else:
            sub = values[j][rows[j]]
            sub.flags.writeable = False
            own = mech.column_codes(mech._randomize(sub, streams[j]))
            full = np.zeros(n_rows, dtype=own.dtype)
            full[rows[j]] = own
            mask = np.ones(n_rows, dtype=bool)
            mask[rows[j]] = False
            codes[col.label], missing[col.label] = full, mask
        if digest:
            digests[col.label] = codes_digest(own)
    return BatchReports(n_rows, codes, missing, digests)
