"""The shared shape of every randomizer: validate → convert → draw → allocate → kernel → wrap (design rule R6)."""

import dataclasses
import functools
from typing import Any, ClassVar

import numpy as np

from .spec import Spec, check_spec
from .reports import MAX_COLUMN_BITS, Reports, code_dtype, packed_column_codes, packed_column_rows
from .aggregate import Aggregate, count_codes, register_count_check, single_code_counts
from ._random import block_sizes, draw_pool, resolve_rng
from ._results import MeanEstimate
from ._typing import ArrayLike, Bounds, FloatArray, SeedLike
from ._validation import check_bounds, check_epsilon, check_values, prepared
from .estimation.likelihood import check_method
from .estimation.mean import estimate_mean

__all__ = ["Mechanism", "MeanOracle", "from_spec", "registered", "memoized_mechanisms", "lookup"]

#: The quartiles a summary row shows (:meth:`Mechanism.describe_rows`), and their column labels.
QUARTILES = np.array([0.25, 0.5, 0.75])
QUARTILE_LABELS = ("25%", "50%", "75%")

#: Spec name -> mechanism class, filled by :meth:`Mechanism.__init_subclass__`: the mechanisms that take one
#: value (a number, a category, an item) per person, which :func:`registered` lists.
_REGISTRY: dict[str, type["Mechanism"]] = {}
#: Spec name -> class of the mechanisms that take one *vector* per person (``input_kind = "vector"``):
#: found by :func:`lookup` and :func:`from_spec` (so their specs round-trip), but not listed by
#: :func:`registered`, whose users (the command line, the pandas accessor, the common test suite, the
#: start-up benchmark) hand every mechanism one column of values.
_VECTOR_REGISTRY: dict[str, type["Mechanism"]] = {}
#: Spec name -> class of the longitudinal mechanisms (``memoized = True``: a permanent response derived from each
#: person's key, then an instantaneous one; :mod:`ldpnum.longitudinal`). Their ``privatize`` needs ``keys=``, so
#: they are listed by :func:`memoized_mechanisms`, not by :func:`registered`, whose users privatize with ``rng``
#: alone; :func:`lookup` and :func:`from_spec` find them.
_MEMOIZED_REGISTRY: dict[str, type["Mechanism"]] = {}
#: Normalized spelling (alias or class name) -> spec name.
_NAMES: dict[str, str] = {}

#: Modules whose import registers ldpnum's own mechanisms (imported on first use of the registry).
_BUILTIN_MODULES = ("ldpnum.mechanisms", "ldpnum.frequency", "ldpnum.ranges", "ldpnum.heavy", "ldpnum.vectors",
                    "ldpnum.multi", "ldpnum.longitudinal")


def _normalize(name: object) -> str:
    """A mechanism name as users type it: case-insensitive, ``-`` and ``_`` interchangeable."""
    return str(name).strip().lower().replace("-", "_")


def _register(cls: type["Mechanism"]) -> None:
    """Enter ``cls`` under its spec name, its aliases and its class name; refuse a name taken by another class."""
    def same(other: type) -> bool:  # a module imported twice (reload) re-registers its own class
        return (other.__module__, other.__qualname__) == (cls.__module__, cls.__qualname__)

    if not isinstance(cls.name, str) or _normalize(cls.name) != cls.name or not cls.name:
        raise TypeError(f"{cls.__qualname__}.name must be a lower-case identifier; got {cls.name!r}")
    if isinstance(cls.aliases, str):
        raise TypeError(f"{cls.__qualname__}.aliases must be a tuple of strings, not a string")
    if cls.input_kind not in ("values", "vector"):
        raise TypeError(f"{cls.__qualname__}.input_kind must be 'values' or 'vector'; got {cls.input_kind!r}")
    target = (_MEMOIZED_REGISTRY if cls.memoized
              else _VECTOR_REGISTRY if cls.input_kind == "vector" else _REGISTRY)
    old = _REGISTRY.get(cls.name) or _VECTOR_REGISTRY.get(cls.name) or _MEMOIZED_REGISTRY.get(cls.name)
    if old is not None and not same(old):
        raise TypeError(f"mechanism name {cls.name!r} of {cls.__qualname__} is already taken by {old.__qualname__}")
    spellings = {_normalize(a) for a in cls.aliases} | {_normalize(cls.__name__)}
    for key in spellings:
        owner = _NAMES.get(key)
        if (owner is not None and owner != cls.name) or (key in _all_registered() and key != cls.name):
            raise TypeError(f"alias {key!r} of {cls.__qualname__} already names the mechanism "
                            f"{owner or key!r}")
    target[cls.name] = cls
    _NAMES[cls.name] = cls.name
    for key in spellings:
        _NAMES[key] = cls.name


def _all_registered() -> dict[str, type["Mechanism"]]:
    return {**_REGISTRY, **_VECTOR_REGISTRY, **_MEMOIZED_REGISTRY}


def _load_builtins() -> None:
    import importlib

    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def registered() -> dict[str, type["Mechanism"]]:
    """Every registered mechanism: ``{spec name: class}``, in registration order.

    A mechanism is registered by defining a subclass of :class:`Mechanism` with a ``name`` (and, optionally,
    ``aliases``); ldpnum's own mechanisms are always included. The command line offers these names, and
    the common test suite runs its checks over every one of them.

    Examples
    --------
    >>> from ldpnum.mechanisms import registered
    >>> registered()["square_wave"].__name__, registered()["square_wave"].aliases
    ('SquareWave', ('sw',))
    """
    _load_builtins()
    return dict(_REGISTRY)


def memoized_mechanisms() -> dict[str, type["Mechanism"]]:
    """Every registered longitudinal mechanism: ``{spec name: class}``, in registration order.

    A longitudinal mechanism draws a permanent response from each person's key, then an instantaneous one. Their
    ``privatize`` takes ``keys=``.

    >>> from ldpnum.base import memoized_mechanisms
    >>> "lgrr" in memoized_mechanisms()
    True
    """
    _load_builtins()
    return dict(_MEMOIZED_REGISTRY)


def lookup(name: str) -> type["Mechanism"]:
    """The mechanism class called ``name``: a spec name, an alias or a class name.

    A spec name (``square_wave``), an alias (``sw``) or a class name (``SquareWave``), case-insensitive, ``-`` and ``_``
    interchangeable.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If no registered mechanism has that name; the message lists the names.
    """
    if not isinstance(name, str):
        raise TypeError(f"a mechanism name must be a string; got {type(name).__name__}")
    _load_builtins()
    key = _normalize(name)
    spec_name = _NAMES.get(key) or _NAMES.get(key.replace("_", ""))
    if spec_name is None:
        raise ValueError(f"unknown mechanism {name!r}; registered: {', '.join(_all_registered())}")
    return _all_registered()[spec_name]


def from_spec(spec: Spec) -> "Mechanism":
    """Rebuild the mechanism that produced reports with this :class:`~ldpnum.Spec`."""
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    cls = _all_registered().get(spec.mechanism)
    if cls is None:
        _load_builtins()
        cls = _all_registered().get(spec.mechanism)
    if cls is None:
        raise ValueError(f"unknown mechanism {spec.mechanism!r} in spec")
    round_id = spec.get("round") if cls.memoized else None
    if round_id is not None:
        # A longitudinal mechanism's spec may record a collection round: the mechanism is rebuilt from the rest,
        # then bound to that round (ldpnum.longitudinal.Longitudinal.at_round).
        spec = dataclasses.replace(spec, params=tuple((k, v) for k, v in spec.params if k != "round"))
    categories = spec.get("categories") if cls.takes_categories else None
    if categories is not None:
        # Declared categories are rebuilt apart, like a round: the mechanism from the rest, then labelled.
        spec = dataclasses.replace(spec, params=tuple((k, v) for k, v in spec.params if k != "categories"))
    try:
        mech = cls._from_spec(spec)
    except (AttributeError, KeyError, IndexError, OverflowError, ZeroDivisionError) as exc:
        # A spec is data from a file or a column's metadata: a parameter of the wrong kind must read as a bad
        # spec, not as an internal error of the class it names.
        raise ValueError(f"spec of {spec.mechanism!r} does not describe a valid {cls.__name__}: "
                         f"{type(exc).__name__}: {exc}") from exc
    except TypeError as exc:
        if "positional argument" not in str(exc) and "keyword argument" not in str(exc):
            raise
        import inspect

        takes = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        raise ValueError(f"spec of {spec.mechanism!r} lacks a parameter of {cls.__name__} or names one it does not "
                         f"take: its parameters are {sorted(dict(spec.params))}; {cls.__name__} takes "
                         f"{', '.join(takes)}") from None
    unknown = sorted(set(dict(spec.params)) - set(dict(mech.spec.params)))
    if unknown:
        raise ValueError(f"spec of {spec.mechanism!r} names unknown parameter(s) {', '.join(map(repr, unknown))}; "
                         f"{cls.__name__} takes {', '.join(map(repr, sorted(dict(mech.spec.params))))}")
    check_spec(spec, mech.spec, "the spec")
    if categories is not None:
        try:
            mech = mech.with_categories(categories)
        except TypeError as exc:
            raise ValueError(f"spec of {spec.mechanism!r}: {exc}") from None
    return mech if round_id is None else mech.at_round(round_id)


@functools.lru_cache(maxsize=128)
def _cached_from_spec(spec):
    return from_spec(spec)


def mechanism_for(spec: Spec) -> "Mechanism":
    """The mechanism of ``spec``, shared: mechanisms are immutable, so one instance per spec serves every reader.

    Specs with unhashable parameters are rebuilt each time.
    """
    try:
        return _cached_from_spec(spec)
    except TypeError:
        if not isinstance(spec, Spec):
            raise
        return from_spec(spec)


def _shows_shuffle(estimate):
    """``estimate`` such that an estimate from an aggregate declared shuffled carries that aggregate's central ε.

    ``estimate`` is a mechanism's ``estimate_*`` method, whose first argument is Reports or an Aggregate; an aggregate
    declared shuffled (:meth:`~ldpnum.Aggregate.shuffled`) passes its central ε to ``result.shuffle``, whatever the
    result type. The one place where shuffled collections reach results, applied to every mechanism by
    :meth:`Mechanism.__init_subclass__`.
    """
    @functools.wraps(estimate)
    def method(self, *args, **kwargs):
        result = estimate(self, *args, **kwargs)
        data = args[0] if args else kwargs.get("data")
        shuffle = data.shuffle if isinstance(data, Aggregate) else None
        if shuffle is not None and getattr(result, "shuffle", False) is None:
            result = dataclasses.replace(result, shuffle=shuffle)
        return result

    method._shows_shuffle = True
    return method


#: The estimators a mechanism may offer (:meth:`Mechanism.offers`), with what each estimates, in words.
ESTIMATORS = {"estimate_mean": "means", "estimate_distribution": "distributions", "estimate_ranges": "range trees",
              "estimate_frequencies": "category frequencies", "estimate_heavy_hitters": "heavy hitters",
              "estimate_marginals": "marginals"}


class Mechanism:
    """Base class of ldpnum's randomizers. Subclasses set ``name`` and implement the plan and kernel call.

    A mechanism is immutable: parameters are validated once in the constructor, and the integer plan the
    kernels use is built once. Two mechanisms are equal when their specs are.
    """

    #: The mechanism's name in its spec (``Spec.mechanism``); a subclass that sets it is registered.
    name: ClassVar[str | None] = None
    #: Short names accepted wherever a mechanism is named (``ldpnum privatize --mechanism``,
    #: :func:`lookup`), besides ``name`` and the class name.
    aliases: ClassVar[tuple[str, ...]] = ()
    #: What one person's input is: ``"values"`` (one number, category or item; listed by
    #: :func:`registered`) or ``"vector"`` (a row of an ``(n, d)`` array; found by :func:`lookup` and
    #: :func:`from_spec` only).
    input_kind: ClassVar[str] = "values"
    #: Whether reports are memoized responses derived from each person's key (:mod:`ldpnum.longitudinal`): such
    #: a mechanism's ``privatize`` needs ``keys=``, and the front ends pass them (they ask this, not the type).
    memoized: ClassVar[bool] = False
    #: Whether the mechanism takes declared, public category labels (``with_categories``; frequency oracles).
    takes_categories: ClassVar[bool] = False
    #: The integer plan of the kernels, set by each subclass's constructor.
    _plan: Any

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for attr, value in list(cls.__dict__.items()):
            if attr.startswith("estimate_") and callable(value) and not hasattr(value, "_shows_shuffle"):
                setattr(cls, attr, _shows_shuffle(value))
        if cls.__dict__.get("name") is not None:
            _register(cls)
            register_count_check(cls.name, cls._check_counts)

    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        """How an aggregate's counts must relate to its number of reports.

        See :func:`ldpnum.aggregate.register_count_check`. Default: one code per report, so the counts sum to
        ``n_reports``. Mechanisms whose reports add to several counts override this.
        """
        return single_code_counts(counts, total, n_reports, spec)

    def __init__(self, epsilon: float, bounds: Bounds) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._bounds = check_bounds(bounds)

    # -- parameters ---------------------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        """The privacy parameter: each report is ε-LDP for its person."""
        return self._epsilon

    @property
    def bounds(self) -> Bounds | None:
        """Public range ``(low, high)`` of the input values."""
        return self._bounds

    @property
    def plan(self) -> Any:
        """The integer plan the kernel consumes (thresholds over 2**53, alphabet size)."""
        return self._plan

    @property
    def n_cells(self) -> int:
        """Size of the output alphabet: reports are codes ``0..n_cells-1``."""
        raise NotImplementedError

    @property
    def words_per_record(self) -> int:
        """Random 64-bit words each record consumes (fixed, whatever its value)."""
        return self._plan.words_per_record

    def _spec_params(self):
        return {"bounds": self._bounds}

    @property
    def spec(self) -> Spec:
        """The :class:`~ldpnum.Spec` attached to this mechanism's reports and aggregates.

        Built once (a mechanism is immutable): every aggregate, estimate and spec check reads it, and
        building it costs ~20 µs, a tenth of aggregating 10^6 reports.
        """
        spec = self.__dict__.get("_spec")
        if spec is None:
            spec = self.__dict__["_spec"] = self._make_spec()
        return spec

    def _make_spec(self):
        return Spec(self.name, self._epsilon, self.n_cells, tuple(self._spec_params().items()))

    @classmethod
    def _from_spec(cls, spec):
        return cls(epsilon=spec.epsilon, **{k: spec.get(k) for k, _ in spec.params})

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash(self.spec)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._spec_params().items())
        return f"{type(self).__name__}(epsilon={self._epsilon!r}{', ' if params else ''}{params})"

    # -- client side --------------------------------------------------------------------------------
    def prepare_values(self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise",
                       fill_value: float | None = None, out_of_range: str = "clip") -> FloatArray:
        """Validate one column of values for this mechanism, without drawing anything.

        The one place where inputs are checked: :meth:`privatize` calls it, and so do the pandas accessor,
        the command line and the Dask layer, so a column is accepted or refused, and described, the same
        way everywhere. Subclasses with another input domain override it (frequency oracles take category
        codes, randomized response 0/1 values).

        Parameters
        ----------
        x : array_like of real numbers, shape (n,)
            One value per person (see :meth:`privatize`).
        name : str, optional
            How messages refer to the values, e.g. ``"column 'age'"`` (default ``"x"``). Errors and
            clipping warnings name it.
        nan_policy, fill_value, out_of_range
            As for :meth:`privatize`.

        Returns
        -------
        numpy.ndarray
            The values as a read-only, C-contiguous float64 array (missing values imputed), which is what
            the kernel takes. It may share memory with ``x``.

        Raises
        ------
        TypeError
            For a dtype that does not hold real numbers (the message says how to convert it).
        ldpnum.exceptions.InvalidValuesError
            A ``ValueError`` for missing values (``nan_policy="raise"``) or values outside the bounds
            (``out_of_range="raise"``), with the count and first index of the bad values.
        ValueError
            For a bad ``nan_policy``, ``fill_value`` or ``out_of_range``.

        Warns
        -----
        ldpnum.ClippingWarning
            For finite values outside the bounds (clipped by the kernel), with their count and first index.

        Examples
        --------
        >>> import numpy as np, ldpnum as ldp
        >>> m = ldp.SquareWave(epsilon=1.0, bounds=(0, 10))
        >>> m.prepare_values(np.array([1, 2, 3], dtype=np.int8))
        array([1., 2., 3.])
        >>> m.prepare_values([1.0, np.nan], name="column 'age'")
        Traceback (most recent call last):
        ...
        ldpnum.exceptions.InvalidValuesError: column 'age' has 1 missing or non-finite value(s) (NaN, inf or NA), \
first at index 1 (nan); pass nan_policy='impute' with a public fill_value, or remove them before privatizing
        """
        return prepared(check_values, x, self._bounds, name=name, nan_policy=nan_policy, fill_value=fill_value,
                        out_of_range=out_of_range)

    def _run_kernel(self, values, words, out):  # pragma: no cover - abstract
        raise NotImplementedError

    def privatize(self, x: ArrayLike, *, rng: SeedLike = None, nan_policy: str = "raise",
                  fill_value: float | None = None, out_of_range: str = "clip") -> Reports:
        """Randomize each person's value; return their :class:`~ldpnum.Reports`.

        Parameters
        ----------
        x : array_like of real numbers, shape (n,)
            One value per person (a scalar is one person). Integer and floating dtypes of any width or
            byte order, and pandas Series (nullable dtypes included) are accepted.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness, for real collections. Anything else: a reproducible
            simulation, in which anyone holding the seed can recompute the reports.
        nan_policy : {"raise", "impute"}, optional
            Missing or non-finite values raise (default), or are replaced by ``fill_value``.
        fill_value : float, optional
            Public replacement for missing values with ``nan_policy="impute"``.
        out_of_range : {"clip", "raise"}, optional
            Finite values outside the bounds are clipped with a ``ClippingWarning`` (default), or raise.

        Returns
        -------
        Reports
            One integer code per person, with this mechanism's spec.

        Notes
        -----
        Each call on one person's value is ε-LDP; estimators are post-processing. Every input is
        validated before the first random word is drawn: if anything is wrong, nothing is randomized.
        """
        values = self.prepare_values(x, nan_policy=nan_policy, fill_value=fill_value, out_of_range=out_of_range)
        return self._randomize(values, rng)

    def _randomize(self, values, rng, run=None):
        """Draw words (after validation) and run the kernel block by block; wrap the codes as Reports.

        ``run(values, words, out)`` replaces :meth:`_run_kernel` (a mechanism that also collects per-record
        flags from its kernel passes a closure); blocks are run in record order.
        """
        source = resolve_rng(rng)
        if run is None:
            run = self._run_kernel
        n = values.shape[0]
        out = self._allocate_reports(n)
        c = self.words_per_record
        sizes = block_sizes(n, c)
        if len(sizes) <= 1:
            if n:
                run(values, source.draw(n * c), out)
        else:
            # Pipeline: a helper thread draws the next block's words (the generator releases the GIL)
            # while the kernel randomizes this block. Words are still drawn in record order from one
            # stream, so the reports do not depend on the block size. Only one draw of this call is
            # pending at a time: the stream is read in order.
            pool = draw_pool()
            pending = pool.submit(source.draw, sizes[0] * c)
            start = 0
            try:
                for j, size in enumerate(sizes):
                    words = pending.result()
                    pending = pool.submit(source.draw, sizes[j + 1] * c) if j + 1 < len(sizes) else None
                    run(values[start:start + size], words, out[start:start + size])
                    start += size
            finally:
                if pending is not None:  # a kernel raised: let the pending draw finish before unwinding
                    pending.cancel() or pending.exception()
        out.flags.writeable = False
        return Reports._from_kernel(out, self.spec)

    def _allocate_reports(self, n):
        """The output array for ``n`` reports (owned by the caller, written by the kernel)."""
        return np.empty(n, dtype=self._report_dtype())

    def _report_dtype(self):
        return code_dtype(self.n_cells)

    # -- reports in a table column ------------------------------------------------------------------
    def source_columns(self, key: Any) -> list | None:
        """The value columns a table key names for this mechanism.

        None for a mechanism of one column (the key is that column); for one that reads a vector per row (``input_kind
        == "vector"``), the columns of its tuple key, one per coordinate.
        """
        if self.input_kind == "vector":
            if not isinstance(key, tuple):
                raise TypeError(f"{type(self).__name__} privatizes one vector per row: name its value columns with "
                                f"a tuple key, e.g. {{('q1', 'q2'): mechanism}}; got the single key {key!r}")
            if len(set(key)) != len(key):
                raise ValueError(f"key {key!r} names a column twice")
            return list(key)
        if isinstance(key, tuple):
            raise TypeError(f"key {key!r} is a tuple, which names the value columns of a vector mechanism "
                            f"(SampledDimensions, DuchiMultivariate), but {type(self).__name__} privatizes one column "
                            "of values, and its report column needs a str or int label, not a tuple (labels travel "
                            "as JSON)")
        return None

    def check_column_codes(self, where: str = "a column") -> None:
        """Raise TypeError unless each report fits one integer code of a table column.

        The pandas accessor, the command line and Dask hold reports that way; :meth:`column_codes` packs them.

        A mechanism whose reports are single codes fits; so do bit-vector reports (SUE, OUE, subset selection,
        Duchi et al.'s multivariate signs) of at most 64 bits, as one unsigned code whose bit ``j`` is the
        report's bit ``j``. Longer bit vectors do not.
        """
        bits = self.spec.get("packed_bits")
        if bits is not None and int(bits) > MAX_COLUMN_BITS:
            name = type(self).__name__
            raise TypeError(f"{name} reports are bit vectors of {bits} bits per person, more than {where} of "
                            f"{MAX_COLUMN_BITS}-bit codes holds; call {name}.privatize on the values and keep the "
                            "Reports, or use an oracle whose report is one code (GRR, OLH, HadamardResponse)")

    def _column_of(self, reports: Reports) -> np.ndarray:
        """The column codes of reports already checked against the spec (bit vectors packed into one code)."""
        bits = self.spec.get("packed_bits")
        return reports.codes if bits is None else packed_column_codes(reports.codes, int(bits))

    def column_codes(self, reports: Reports) -> np.ndarray:
        """Each report as one non-negative integer code, for a table column.

        :meth:`reports_from_column` inverts it. The default: the report codes themselves (one per person); a
        bit-vector report of ``b <= 64`` bits as the code ``sum_j bit_j 2**j`` (the smallest unsigned dtype of
        ``b`` bits).

        Examples
        --------
        >>> import numpy as np, ldpnum as ldp
        >>> oue = ldp.OUE(1.0, k=10)
        >>> r = oue.privatize(np.arange(10), rng=0)
        >>> codes = oue.column_codes(r)
        >>> codes.dtype, oue.reports_from_column(codes) == r
        (dtype('uint16'), True)
        """
        self.check_column_codes()
        check_spec(self.spec, reports.spec, "reports")
        return self._column_of(reports)

    def reports_from_column(self, codes: ArrayLike) -> Reports:
        """The :class:`~ldpnum.Reports` behind the codes of a table column (:meth:`column_codes`'s inverse).

        Codes outside the alphabet (for bit vectors: with a bit set beyond the report's bits) raise ValueError.
        """
        self.check_column_codes()
        bits = self.spec.get("packed_bits")
        if bits is not None:
            return Reports(packed_column_rows(codes, int(bits), f"{type(self).__name__} column codes"), self.spec)
        return Reports(codes, self.spec)

    # -- server side --------------------------------------------------------------------------------
    def aggregate(self, reports: Reports) -> Aggregate:
        """Count the reports' codes into a mergeable :class:`~ldpnum.Aggregate`."""
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        return Aggregate(count_codes(reports.codes, self.n_cells), self.spec)

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        return Aggregate.empty(self.spec)

    # -- what the reports answer (for the integrations) ---------------------------------------------
    @classmethod
    def offers(cls, estimator: str) -> bool:
        """Whether this mechanism's reports answer ``estimator`` (one of :data:`ESTIMATORS`).

        Asked of a class or an instance: what a mechanism estimates is a property of its type.

        The pandas accessor, the command line and the Dask accessor ask this instead of inspecting mechanism
        types: what a report column can answer is the mechanism's own description.

        >>> import ldpnum as ldp
        >>> m = ldp.SquareWave(1.0, (0, 1))
        >>> m.offers("estimate_distribution"), m.offers("estimate_frequencies")
        (True, False)
        """
        if estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {estimator!r}; one of {', '.join(ESTIMATORS)}")
        return callable(getattr(cls, estimator, None))

    @classmethod
    def estimate_methods(cls, estimator: str) -> tuple[str, ...]:
        """The ``method`` values ``estimator`` takes: ``"unbiased"``, and ``"mle"`` where the likelihood is known.

        For ``"estimate_mean"`` (the two-output mean oracles also take ``"mle"``) and ``"estimate_frequencies"``
        (GRR also takes ``"mle"``); ``()`` when the reports do not answer ``estimator``. The front ends check a
        requested ``method`` against this before any report is read.

        >>> import ldpnum as ldp
        >>> ldp.RandomizedResponse.estimate_methods("estimate_mean"), ldp.OUE.estimate_methods("estimate_frequencies")
        (('unbiased', 'mle'), ('unbiased',))
        """
        attr = {"estimate_mean": "mean_methods", "estimate_frequencies": "frequency_methods"}.get(estimator)
        if attr is None:
            raise ValueError(f"estimator must be 'estimate_mean' or 'estimate_frequencies' (the estimators with a "
                             f"method= of 'unbiased' or 'mle'); got {estimator!r}")
        if not cls.offers(estimator):
            return ()
        return tuple(getattr(cls, attr, ("unbiased",)))

    def queryable_estimate(self, data: Reports | Aggregate, **kwargs: Any) -> Any:
        """The estimate that answers quantiles and ranges of the values.

        The range tree's (``estimate_ranges``) where the mechanism has one (hierarchical histograms, HDG's grids), else
        its reconstructed distribution (``estimate_distribution``); TypeError for mechanisms that estimate means,
        frequencies or items only. ``kwargs`` go to that estimator.
        """
        if self.offers("estimate_ranges"):
            return self.estimate_ranges(data, **kwargs)  # type: ignore[attr-defined]
        if self.offers("estimate_distribution"):
            return self.estimate_distribution(data, **kwargs)  # type: ignore[attr-defined]
        raise TypeError(f"{type(self).__name__} reports estimate {self.answers} only; quantiles and ranges need a "
                        "distribution mechanism (SquareWave, GeneralWave, Piecewise, Hybrid, HierarchicalHistogram)")

    def check_range_interval(self, query: Any) -> None:
        """Refuse, from the spec alone, a range ``query`` whose bootstrap interval the estimate would refuse.

        Called before any report is read (``ldpnum estimate --range ... --bootstrap B``). The default has nothing
        to check; :class:`~ldpnum.HDG` raises ValueError for a range that cuts a cell of the grid answering it.
        """

    def describe_rows(self, agg: Aggregate, *, column: Any, names: Any = None, level: float = 0.95,
                      bootstrap: int | None = None, rng: SeedLike = None,
                      method: str = "unbiased") -> list[tuple[Any, dict]]:
        """The rows this mechanism's report column adds to a summary table: ``[(label, statistics), ...]``.

        The summary table is the pandas accessor's ``describe``.

        One row labelled ``column``: the mean with its ``level`` confidence interval (mechanisms that
        estimate means), and the mean and quartiles of the estimate that answers quantiles
        (:meth:`queryable_estimate`), with the quartiles' bootstrap intervals (``"25% low"``, ...) when
        ``bootstrap`` replicates are asked for and the distribution estimator takes them. Statistics a
        mechanism cannot give are NaN. Mechanisms of several value columns override it (one row per column;
        ``names`` are the value columns behind the report column). ``method="mle"``: the mean is the
        maximum-likelihood estimate with its likelihood-ratio interval (:meth:`estimate_methods`).
        """
        nan = float("nan")
        stats = {"mean": nan, "std_error": nan, "ci_low": nan, "ci_high": nan, "dist_mean": nan,
                 "25%": nan, "50%": nan, "75%": nan}
        if self.offers("estimate_mean"):
            mean = self.estimate_mean(agg, **({} if method == "unbiased" else {"method": method}))  # type: ignore[attr-defined]
            lo, hi = mean.confidence_interval(level)
            stats.update(mean=mean.value, std_error=mean.standard_error, ci_low=lo, ci_high=hi)
        est = self._describe_estimate(agg, bootstrap, rng)
        if est is not None:
            dist = est.to_distribution() if self.offers("estimate_ranges") else est  # a range tree's own distribution
            stats["dist_mean"] = dist.mean
            stats.update(zip(QUARTILE_LABELS, (float(v) for v in est.quantile(QUARTILES))))
            if bootstrap is not None and getattr(est, "replicates", None) is not None:
                iv = est.quantile(QUARTILES, ci=level)
                for p, lo_q, hi_q in zip(QUARTILE_LABELS, iv.low, iv.high):
                    stats[f"{p} low"], stats[f"{p} high"] = float(lo_q), float(hi_q)
        return [(column, stats)]

    def _describe_estimate(self, agg: Aggregate, bootstrap: int | None, rng: SeedLike) -> Any:
        """The :meth:`queryable_estimate` of ``agg`` for :meth:`describe_rows` (None when the mechanism has none).

        With ``bootstrap`` replicates when its distribution estimator takes them.
        """
        if not (self.offers("estimate_ranges") or self.offers("estimate_distribution")):
            return None
        import inspect

        boot = (bootstrap is not None and self.offers("estimate_distribution")
                and "bootstrap" in inspect.signature(self.estimate_distribution).parameters)  # type: ignore[attr-defined]
        return self.queryable_estimate(agg, **({"bootstrap": bootstrap, "rng": rng} if boot else {}))

    @property
    def answers(self) -> str:
        """What the reports estimate, in words ("means", "frequencies", "heavy hitters", ...)."""
        return " and ".join(words for est, words in ESTIMATORS.items() if self.offers(est))

    @property
    def categorical(self) -> bool:
        """True when the reports describe categories, items or their marginals rather than numbers."""
        return any(self.offers(e) for e in ("estimate_frequencies", "estimate_heavy_hitters", "estimate_marginals"))

    @property
    def needs_candidates(self) -> bool:
        """True when ``estimate_frequencies`` can only decode against a dictionary (``candidates=[...]``).

        RAPPOR without segment pairs and a count-mean sketch over items: their reports name no item, so the
        frequencies of the items a user asks about need the list of those items. The front ends refuse such a
        request without candidates before a report is read. False for every other mechanism.
        """
        return False

    def _as_aggregate(self, data):
        if isinstance(data, Reports):
            return self.aggregate(data)
        if isinstance(data, Aggregate):
            check_spec(self.spec, data.spec, "aggregates")
            return data
        raise TypeError(f"expected Reports or Aggregate; got {type(data).__name__}")


class MeanOracle(Mechanism):
    """A randomizer whose every output code has an unbiased estimate of the input value.

    Subclasses provide ``code_estimates`` (one unbiased estimate per output code, in data units),
    ``_second_moment(x)`` (``E[estimate² | x]``, exact from the plan) and ``worst_case_variance``.
    """

    @property
    def code_estimates(self) -> np.ndarray:
        """Unbiased estimate of the value carried by each output code, in data units."""
        raise NotImplementedError

    def _second_moment(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def variance(self, x: ArrayLike) -> Any:
        """Variance of one report's unbiased estimate when the true value is ``x`` (exact, from the plan).

        The mean of ``n`` reports with values ``x_i`` has variance ``sum(variance(x_i)) / n**2``.
        """
        arr = np.asarray(x, dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            raise ValueError("variance: x must be finite")
        low, high = self._bounds
        arr = np.clip(arr, low, high)
        out = self._second_moment(arr) - arr * arr
        return float(out) if out.ndim == 0 else out

    @property
    def worst_case_variance(self) -> float:
        """Largest per-report variance over all inputs in the bounds."""
        raise NotImplementedError

    #: The ``method`` values :meth:`estimate_mean` takes ("mle" where the reports' likelihood is implemented).
    mean_methods: ClassVar[tuple[str, ...]] = ("unbiased",)

    def estimate_mean(self, data: Reports | Aggregate, *, method: str = "unbiased") -> MeanEstimate:
        """Estimate of the mean of the values behind the reports: unbiased (default) or maximum likelihood.

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism, or their aggregate (merged over any number of batches).
        method : {"unbiased", "mle"}, optional
            ``"unbiased"``: the average of the per-report unbiased estimates (:mod:`ldpnum.estimation.mean`).
            ``"mle"`` (two-output mechanisms: randomized response, stochastic rounding, Duchi et al.): the
            constrained maximum-likelihood estimate, inside the bounds, whose ``confidence_interval`` is the
            likelihood-ratio interval (:mod:`ldpnum.estimation.likelihood`).

        Returns
        -------
        MeanEstimate
            With a standard error from the sample variance of the per-report estimates (``"unbiased"``), or
            the Wald standard error at the MLE and the likelihood for its intervals (``"mle"``).

        Raises
        ------
        ValueError
            For an unknown ``method`` or one this mechanism does not offer (before anything is computed).
        """
        check_method(method, self.mean_methods, mechanism=self.name)
        agg = self._as_aggregate(data)
        if method == "mle":
            return self._mean_mle(agg)
        return estimate_mean(agg, self.code_estimates, worst_case_variance=self.worst_case_variance,
                             epsilon=self._epsilon)

    def _mean_mle(self, agg):  # pragma: no cover - offered only where ``mean_methods`` includes "mle"
        raise NotImplementedError


# -- mechanisms by name: what a front end offers ----------------------------------------------------------------

def bounded_mechanisms() -> dict[str, type[Mechanism]]:
    """The registered mechanisms built from ε and public bounds alone: ``{spec name: class}``.

    Those whose constructor takes ``bounds`` (one numerical column in a public range), in registration order:
    the command line's ``--mechanism`` offers exactly these, so a new one is offered by registering it.

    Examples
    --------
    >>> from ldpnum.base import bounded_mechanisms
    >>> "square_wave" in bounded_mechanisms(), "grr" in bounded_mechanisms()
    (True, False)
    """
    import inspect

    return {name: cls for name, cls in registered().items() if "bounds" in inspect.signature(cls).parameters}


def mechanisms_offering(method: str) -> dict[str, type[Mechanism]]:
    """The registered mechanisms that offer the estimator ``method``: ``{spec name: class}``, in registration order.

    See :meth:`Mechanism.offers`.

    Examples
    --------
    >>> from ldpnum.base import mechanisms_offering
    >>> sorted(mechanisms_offering("estimate_heavy_hitters"))
    ['pem', 'tree_hist']
    """
    return {name: cls for name, cls in registered().items() if cls.offers(method)}


def mechanism_spellings(mechanisms: dict[str, type[Mechanism]]) -> dict[str, str]:
    """``{spec name or alias: spec name}`` of ``mechanisms`` (``{spec name: class}``).

    The names a user may type for them, besides their class names (which :func:`lookup` also takes).

    Examples
    --------
    >>> from ldpnum.base import bounded_mechanisms, mechanism_spellings
    >>> mechanism_spellings(bounded_mechanisms())["sw"]
    'square_wave'
    """
    return {alias: name for name, cls in mechanisms.items() for alias in (name, *cls.aliases)}
