"""A permanent (memoized) randomizer followed by an optional instantaneous one.

The one idea of repeated collection (design rule R9), shared by every longitudinal mechanism.

A person ``i`` with value ``x`` reports

    y = I(P(m(x)), w'),     P's words = SipHash_{key_i}(tweak ‖ m(x) ‖ j),   w' fresh from ``rng``,

where ``m(x)`` is the *memoized value* (the category for L-GRR and L-OSUE, the hashed value for LOLOHA, the Bloom
filter's item for RAPPOR, the grid point of α-point rounding for 1BitMean and dBitFlip), ``P`` the *permanent*
randomizer — one of ldpnum's integer plans, fed keyed words (:func:`~ldpnum.longitudinal.keys.keyed_words`) instead
of fresh ones, so the same key and value always give the same permanent answer — and ``I`` the *instantaneous*
randomizer applied to that answer at every report, with words from ``rng`` as usual.

Privacy (Erlingsson, Pihur, Korolova; Arcolezi et al.). With ``P`` ε∞-LDP, every report ever made about one
memoized value is a post-processing of one ``P`` output, so all of them together are ε∞-LDP
(:attr:`Longitudinal.epsilon_permanent`). One report alone is ε1-LDP for the composed kernel
``P[y | v] = Σ_z P[z | v] · I[y | z]`` (:attr:`Longitudinal.epsilon`, also :attr:`~Longitudinal.epsilon_report`);
subclasses choose ``I``'s parameter so that the composed plan's ratio is at most e^ε1, and compute both ε from their
integer plans exactly (:meth:`Longitudinal.realized_epsilons`). A person whose memoized value changes spends ε∞
again per distinct value; the ledger counts exactly that
(:meth:`ldpnum.PrivacyLedger.charge_longitudinal`).

Rounds. The permanent layer's words do not depend on the round, so one mechanism serves every round.
``m.at_round(r)`` is the same mechanism bound to round ``r``: its spec records the round, so its reports' aggregates
do not merge with another round's (a spec mismatch), and a report column read back from a table or a file rebuilds
the mechanism at its round. :meth:`Longitudinal.privatize` takes ``round=`` as a shortcut for
``m.at_round(round).privatize``; a mechanism without a round aggregates and estimates the reports of any one
round, keeping their round.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._random import block_sizes, draw_pool, resolve_rng
from .._validation import check_scalar
from ..base import Mechanism
from ..aggregate import Aggregate
from ..reports import Reports
from ..spec import Spec, check_spec
from .keys import check_keys, keyed_words, memo_tweak

if TYPE_CHECKING:
    from .._typing import ArrayLike, SeedLike

__all__ = ["Longitudinal", "check_epsilons", "round_spec", "spec_round"]


def check_epsilons(epsilon_permanent: float, epsilon_report: float) -> tuple[float, float]:
    """``(ε∞, ε1)`` as floats: each a finite number in (0, 20], and ε1 < ε∞.

    One report cannot leak more than all reports of the same value, which the instantaneous layer only blurs.
    """
    eps_perm = check_scalar(epsilon_permanent, "epsilon_permanent", float, low=0, high=20,
                            include_boundaries="right")
    eps_rep = check_scalar(epsilon_report, "epsilon_report", float, low=0, high=20, include_boundaries="right")
    if not eps_rep < eps_perm:
        raise ValueError(f"epsilon_report must be below epsilon_permanent (one report is blurred further by the "
                         f"instantaneous layer); got epsilon_report={eps_rep!r} >= epsilon_permanent={eps_perm!r}")
    return eps_perm, eps_rep


def round_spec(spec: Spec, round_id: int | None) -> Spec:
    """``spec`` with the collection round ``round_id`` among its parameters (``None``: unchanged)."""
    if round_id is None:
        return spec
    params = dict(spec.params)
    params["round"] = round_id
    return dataclasses.replace(spec, params=tuple(params.items()))


def spec_round(spec: Spec) -> int | None:
    """The collection round recorded in ``spec`` (None for reports made without ``round=``)."""
    return spec.get("round")


class Longitudinal(Mechanism):
    """Base class of the longitudinal mechanisms.

    A permanent (memoized) randomizer, keyed by each person's :class:`~ldpnum.ClientKeys`, followed by an optional
    instantaneous randomizer.

    Subclasses set, in their constructor, ``_epsilon`` (ε1, per report), ``_epsilon_permanent`` (ε∞), and
    implement:

    * :meth:`_permanent_spec`: the spec of the permanent layer alone (what its words are keyed on: mechanism,
      ε∞ and the encoding's parameters, never ε1 or the round);
    * :attr:`permanent_words`, :attr:`instantaneous_words`: words per record of each layer (0: no
      instantaneous layer);
    * :meth:`_memo_values` ``(values, keys) -> (memo, inputs)``: each person's memoized value as a uint64 (what
      the keyed words are derived from) and the input array of the permanent kernel;
    * :meth:`_allocate_permanent`, :meth:`_run_permanent` ``(inputs, words, out)`` (or
      :meth:`_permanent_layer` ``(inputs, memo, keys, out)`` for a kernel that derives its keyed words), and, with
      an instantaneous
      layer, :meth:`_run_instantaneous` ``(permanent, words, out)``;
    * the exact plans: :meth:`permanent_probabilities`, :meth:`instantaneous_probabilities` (dicts of
      ``Fraction``), and the inputs/states they range over (:meth:`memo_states`; the permanent outputs are the keys of :meth:`permanent_probabilities`),
      from which :meth:`report_probabilities` and :meth:`realized_epsilons` are composed.
    """

    #: Longitudinal mechanisms need keys: the front ends ask this rather than inspect types.
    memoized: ClassVar[bool] = True
    #: Longitudinal oracles take codes only: their memoized values are fingerprinted from the codes, and declared
    #: categories are not carried through rounds (a category column's codes go in as codes).
    takes_categories: ClassVar[bool] = False

    def with_categories(self, categories: Any) -> Any:
        """Refused: a longitudinal oracle takes category codes (see :attr:`takes_categories`)."""
        raise TypeError(f"{type(self).__name__} takes category codes 0..k-1 only, not declared categories: pass a "
                        "category column's codes, s.cat.codes")

    _epsilon_permanent: float

    #: The collection round this instance is bound to (:meth:`at_round`), or None.
    _round: int | None = None

    #: The class a repr names: the public class a memoized variant is built through (``OneBitMean(...,
    #: memoize=True)``), or None for the class itself.
    _repr_name: ClassVar[str | None] = None

    # -- rounds -------------------------------------------------------------------------------------
    @property
    def round(self) -> int | None:
        """The collection round this mechanism is bound to (None: any; see :meth:`at_round`)."""
        return self._round

    def at_round(self, round: int | None) -> "Longitudinal":
        """The same mechanism bound to collection round ``round`` (≥ 0; ``None``: unbound).

        The same permanent responses, a spec that records the round.
        """
        if round is not None:
            round = check_scalar(round, "round", int, low=0)
        if round == self._round:
            return self
        import copy

        other = copy.copy(self)
        other.__dict__.pop("_spec", None)
        other._round = round
        return other

    def _make_spec(self) -> Spec:
        return round_spec(super()._make_spec(), self._round)

    # -- display ------------------------------------------------------------------------------------
    def _repr_params(self) -> dict[str, Any]:
        """The constructor's arguments that build this mechanism, in the constructor's order.

        Read from :meth:`_spec_params`, the two budgets under the constructor's names: ``epsilon_permanent`` (ε∞)
        and ``epsilon_report`` (ε1), or ``epsilon`` (ε∞) with ``memoize=True`` for a memoized variant built through
        its one-shot class.
        """
        known = {**self._spec_params(), "epsilon_permanent": self._epsilon_permanent,
                 "epsilon_report": self._epsilon, "epsilon": self._epsilon_permanent, "memoize": True}
        return {name: known[name] for name in inspect.signature(type(self)).parameters if name in known}

    def __repr__(self) -> str:
        """The constructor call of this mechanism, then its round when it is bound to one (:meth:`at_round`).

        Examples
        --------
        >>> import ldpnum as ldp
        >>> ldp.LGRR(2.0, 0.5, k=8).at_round(3)
        LGRR(epsilon_permanent=2.0, epsilon_report=0.5, k=8, round=3)
        """
        params = ", ".join(f"{k}={v!r}" for k, v in self._repr_params().items())
        rnd = "" if self._round is None else f", round={self._round}"
        return f"{self._repr_name or type(self).__name__}({params}{rnd})"

    def _expected_spec(self, spec: Any) -> Spec:
        """The spec data of this mechanism must carry: this mechanism's, at the data's round when unbound."""
        if self._round is not None or not isinstance(spec, Spec):
            return self.spec
        return round_spec(self.spec, spec_round(spec))

    # -- privacy ------------------------------------------------------------------------------------
    @property
    def epsilon_permanent(self) -> float:
        """ε∞: the privacy of all reports, however many, about one memoized value of one person."""
        return self._epsilon_permanent

    @property
    def epsilon_report(self) -> float:
        """ε1: the privacy of one report (the same as :attr:`epsilon`)."""
        return self._epsilon

    def _permanent_spec(self) -> Spec:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def tweak(self) -> np.uint64:
        """The 64-bit tweak of this mechanism's keyed words.

        :func:`~ldpnum.longitudinal.keys.memo_tweak` of the permanent layer's spec.
        """
        tweak = self.__dict__.get("_tweak")
        if tweak is None:
            tweak = self.__dict__["_tweak"] = memo_tweak(self._permanent_spec())
        return tweak

    # -- exact plans --------------------------------------------------------------------------------
    def memo_states(self) -> list[int]:
        """The memoized values the exact checks range over (all of them for small domains)."""
        raise NotImplementedError

    def permanent_probabilities(self, state: int) -> dict[int, Fraction]:
        """``{permanent output: probability}`` for the memoized value ``state`` (exact, from the plan)."""
        raise NotImplementedError

    def instantaneous_probabilities(self, permanent: int) -> dict[int, Fraction]:
        """``{report: probability}`` given the permanent output ``permanent``.

        Exact; the identity when the mechanism has no instantaneous layer.
        """
        return {permanent: Fraction(1)}

    def report_probabilities(self, state: int) -> dict[int, Fraction]:
        """``{report: probability}`` of one report for the memoized value ``state``.

        The composed plan ``Σ_z P[z | state] · I[y | z]``.
        """
        out: dict[int, Fraction] = {}
        for z, pz in self.permanent_probabilities(state).items():
            if pz:
                for y, py in self.instantaneous_probabilities(z).items():
                    out[y] = out.get(y, Fraction(0)) + pz * py
        return out

    def realized_epsilons(self) -> tuple[float, float]:
        """``(ε1, ε∞)`` realized by the integer plans.

        The log of the largest ratio of one report's composed probabilities, and of the permanent layer's, over all
        pairs of memoized values and all outputs.

        Enumerates :meth:`memo_states`; subclasses with large domains override it with a structural reduction.
        """
        return (math.log(_extreme_ratio([self.report_probabilities(s) for s in self.memo_states()])),
                math.log(_extreme_ratio([self.permanent_probabilities(s) for s in self.memo_states()])))

    # -- client side --------------------------------------------------------------------------------
    @property
    def permanent_words(self) -> int:
        """Keyed words each record's permanent layer consumes."""
        raise NotImplementedError

    @property
    def instantaneous_words(self) -> int:
        """Fresh words each record's instantaneous layer consumes (0: no instantaneous layer)."""
        raise NotImplementedError

    @property
    def words_per_record(self) -> int:
        """Fresh words (from ``rng``) per record: the instantaneous layer's."""
        return self.instantaneous_words

    def _memo_values(self, values: np.ndarray, keys: Any) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        raise NotImplementedError

    def _allocate_permanent(self, n: int) -> np.ndarray:
        """The permanent layer's output array for ``n`` people (default: the reports' own layout)."""
        return self._allocate_reports(n)

    def _run_permanent(self, inputs: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    def _permanent_layer(self, inputs: np.ndarray, memo: np.ndarray, keys: Any, out: np.ndarray) -> None:
        """The permanent responses of one block into ``out``: its keyed words, then :meth:`_run_permanent`.

        ``permanent_words`` words per person, ``SipHash-2-4_{key_i}(tweak ‖ memo_i ‖ j)``. A subclass whose kernel
        derives its keyed words as it uses them (no array of words) overrides this instead of
        :meth:`_run_permanent`.
        """
        self._run_permanent(inputs, keyed_words(keys, self.tweak, memo, self.permanent_words), out)

    def _run_instantaneous(self, permanent: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:  # noqa
        raise NotImplementedError  # pragma: no cover - abstract

    def _run_kernel(self, values, words, out):  # a Longitudinal mechanism randomizes through privatize only
        raise TypeError(f"{type(self).__name__} reports are memoized: call privatize(values, keys=keys)")

    def permanent(self, x: ArrayLike, *, keys: Any = None, **prepare: Any) -> np.ndarray:
        """Each person's permanent (memoized) response to their value. Not a report: never send it.

        What a device computes once per value and reuses, here recomputed from the key (the same answer on every
        call).

        Parameters are those of :meth:`privatize` (without ``rng`` and ``round``). Returns the permanent layer's
        output array (one row per person, in the permanent kernel's layout).
        """
        values = self.prepare_values(x, **prepare)
        keys = check_keys(keys, values.shape[0])
        memo, inputs = self._memo_values(values, keys)
        inputs.flags.writeable = False
        out = self._allocate_permanent(values.shape[0])
        self._permanent_layer(inputs, memo, keys, out)
        return out

    def memo_values(self, x: ArrayLike, *, keys: Any = None, **prepare: Any) -> np.ndarray:
        """Each person's memoized value as a uint64 (the category, the hashed value, the grid point, ...).

        What their permanent response is keyed on. A person whose memoized value is unchanged spends no more
        privacy.
        """
        values = self.prepare_values(x, **prepare)
        keys = check_keys(keys, values.shape[0])
        return self._memo_values(values, keys)[0]

    def memo_fingerprints(self, x: ArrayLike, *, keys: Any = None, **prepare: Any) -> np.ndarray:
        """A keyed 64-bit digest of each person's memoized value (SipHash under their key).

        Equal for equal memoized values of one person, and revealing nothing about the value to whoever lacks the
        key. What :meth:`ldpnum.PrivacyLedger.record_longitudinal` counts distinct values with.
        """
        values = self.prepare_values(x, **prepare)
        return self.prepared_fingerprints(values, check_keys(keys, values.shape[0]))

    def prepared_fingerprints(self, values: np.ndarray, keys: Any) -> np.ndarray:
        """:meth:`memo_fingerprints` of values already validated by :meth:`prepare_values`.

        The collection layer's path: values are checked once.
        """
        keys = check_keys(keys, values.shape[0])
        memo = self._memo_values(values, keys)[0]
        return keyed_words(keys, memo_tweak(self._permanent_spec(), "fingerprint"), memo, 1)

    def privatize(self, x: ArrayLike, *, keys: Any = None, rng: SeedLike = None,
                  round: int | None = None, **prepare: Any) -> Reports:
        """Each person's report: the permanent response to their memoized value, then the instantaneous layer.

        The permanent response comes from their key, the instantaneous layer from ``rng``.

        Parameters
        ----------
        x : array_like, shape (n,)
            One value per person (as :meth:`prepare_values` accepts them).
        keys : ClientKeys
            One key per person, row for row (:meth:`ldpnum.ClientKeys.generate`); required.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            The instantaneous layer's randomness: ``None`` (default) secure, anything else a reproducible
            simulation.
        round : int, optional
            The collection round (≥ 0), recorded in the reports' spec: aggregates of different rounds do not
            merge, and estimates are per round. The permanent responses do not depend on it.
        **prepare
            ``nan_policy``, ``fill_value``, ``out_of_range`` or ``unknown``, as :meth:`prepare_values` takes them.

        Returns
        -------
        Reports
            One report per person, with this mechanism's spec (and ``round``).

        Notes
        -----
        Each report is ε1-LDP (:attr:`epsilon`); all reports of one person about one memoized value together
        are ε∞-LDP (:attr:`epsilon_permanent`). Everything is validated before anything is derived or drawn.
        """
        mech = self.at_round(round) if round is not None else self
        values = mech.prepare_values(x, **prepare)
        keys = check_keys(keys, values.shape[0])
        return mech._randomize(values, rng, keys=keys)

    def _randomize(self, values: np.ndarray, rng: SeedLike, run: Any = None, *, keys: Any = None) -> Reports:
        """The reports of validated ``values`` (:meth:`prepare_values`' output).

        The keyed permanent layer, then the instantaneous layer from ``rng``, block by block; what :meth:`privatize`
        and the collection layer (:func:`ldpnum.collect.privatize_batch`) call. ``keys`` are checked here, before
        any draw.
        """
        if run is not None:
            raise TypeError(f"{type(self).__name__} runs its own two layers; it takes no kernel closure")
        n = values.shape[0]
        keys = check_keys(keys, n)
        source = resolve_rng(rng)
        out = self._allocate_reports(n)
        c_perm, c_inst = self.permanent_words, self.instantaneous_words
        sizes = block_sizes(n, max(c_perm + c_inst, 1))
        # With an instantaneous layer, a helper thread draws the next block's fresh words (the generator releases the
        # GIL) while this block's keyed words and permanent layer are computed: the stream is still read in record
        # order, one pending draw at a time, so the reports do not depend on the block size.
        pool = draw_pool() if c_inst and len(sizes) > 1 else None
        pending = pool.submit(source.draw, sizes[0] * c_inst) if pool is not None else None
        start = 0
        try:
            for j, size in enumerate(sizes):
                stop = start + size
                block_keys = keys[start:stop]
                memo, inputs = self._memo_values(values[start:stop], block_keys)
                inputs.flags.writeable = False  # kernels take read-only inputs: one compiled signature each
                if c_inst:
                    permanent = self._allocate_permanent(size)
                    self._permanent_layer(inputs, memo, block_keys, permanent)
                    permanent.flags.writeable = False  # kernels take read-only inputs: one compiled signature each
                    if pool is None or pending is None:
                        fresh = source.draw(size * c_inst)
                    else:
                        fresh = pending.result()
                        pending = pool.submit(source.draw, sizes[j + 1] * c_inst) if j + 1 < len(sizes) else None
                    self._run_instantaneous(permanent, fresh, out[start:stop])
                else:
                    self._permanent_layer(inputs, memo, block_keys, out[start:stop])
                start = stop
        finally:
            if pending is not None:  # a kernel raised: let the pending draw finish before unwinding
                pending.cancel() or pending.exception()
        out.flags.writeable = False
        return Reports._from_kernel(out, self.spec)

    # -- server side --------------------------------------------------------------------------------
    def aggregate(self, reports: Reports) -> Aggregate:
        """Count the reports into a mergeable :class:`~ldpnum.Aggregate` that keeps their round.

        Aggregates of different rounds do not merge.
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        expected = self._expected_spec(reports.spec)
        check_spec(expected, reports.spec, "reports")
        mech = self.at_round(spec_round(expected))
        # the next class's aggregate: each family's own counts (categories, bits, support counts)
        return super().aggregate(reports) if mech is self else mech.aggregate(reports)

    def _as_aggregate(self, data: Any) -> Aggregate:
        if isinstance(data, Reports):
            return self.aggregate(data)
        if isinstance(data, Aggregate):
            check_spec(self._expected_spec(data.spec), data.spec, "aggregates")
            return data
        raise TypeError(f"expected Reports or Aggregate; got {type(data).__name__}")

    def column_codes(self, reports: Reports) -> np.ndarray:
        """The report codes of one table column (see :meth:`ldpnum.Mechanism.column_codes`), of any one round."""
        self.check_column_codes()
        check_spec(self._expected_spec(reports.spec), reports.spec, "reports")
        return self._column_of(reports)


def _extreme_ratio(dists: list[dict[int, Fraction]]) -> Fraction:
    """Largest ``P[y | a] / P[y | b]`` over pairs of the distributions and every output ``y``.

    The ratio of the largest to the smallest probability of each output (inf if an output is impossible under one
    input and possible under another).
    """
    outputs = set().union(*dists)
    worst = Fraction(1)
    for y in outputs:
        probs = [d.get(y, Fraction(0)) for d in dists]
        lo, hi = min(probs), max(probs)
        if hi == 0:
            continue
        if lo == 0:
            raise ValueError(f"output {y} is impossible for some input and possible for another: no finite ε")
        worst = max(worst, hi / lo)
    return worst
