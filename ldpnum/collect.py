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

__all__ = ["MAX_COLUMNS", "NAN_POLICIES", "STRATEGIES", "CollectionPlan", "ColumnPlan", "assign_rows", "plan_columns",
           "report_label", "resolve_strategy", "vector_sources"]

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
