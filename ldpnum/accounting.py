r"""Privacy accounting across reports: amplification by shuffling, and a ledger of what each person spent.

:class:`PrivacyLedger` records every collection a population took part in and each person's total ε
(sequential composition; parallel where people were partitioned); see its docstring.

When each of ``n`` people sends one report of an ε0-LDP randomizer and the reports reach the analyst
anonymized and uniformly shuffled (a trusted shuffler, or a mixnet), the analyst's view of the whole batch is
(ε, δ)-differentially private with a central ε much smaller than ε0. :func:`shuffle_epsilon` computes that ε
by the analysis of Feldman, McMillan and Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal Analysis
of Privacy Amplification by Shuffling" (FOCS 2021), both numerically (tight for their reduction) and in closed
form.

Results show it: an aggregate declared shuffled (:meth:`ldpnum.Aggregate.shuffled`, or
``df.ldp.privatize(..., shuffled=True)``, or ``ldpnum privatize --shuffled``) gives estimates whose ``shuffle`` is
this bound over its reports, shown next to the local ε ("local ε = 4, central ε (shuffled, n = 100,000,
δ = 1e-06) = 0.1698").

**The reduction.** Each of the other ``n - 1`` people is, with probability ``p = e^{-ε0}``, a "clone" whose
report is distributed as a fair mixture of the two differing people's report distributions. With ``C`` the
number of clones and ``A | C ~ Bin(C, 1/2)`` the clones that look like the first, the shuffled output is
post-processing of the pair ``(C, A + Δ)``, with ``Δ ~ Bernoulli(α)`` under one data set and
``Bernoulli(1 - α)`` under its neighbour, ``α = e^{ε0} / (e^{ε0} + 1)``. So the batch is (ε, δ)-DP whenever
the hockey-stick divergence of these two distributions is at most δ:

.. math::

    δ(ε) = \sum_{c} \Pr[C = c] \sum_k \max\bigl(0, P_c(k) - e^{ε} Q_c(k)\bigr),\quad
    P_c(k) = α B_c(k) + (1 - α) B_c(k - 1),\ Q_c(k) = (1 - α) B_c(k) + α B_c(k - 1),

``B_c`` the Bin(c, 1/2) probabilities. ``P_c(k)/Q_c(k)`` decreases in ``k``, so the inner sum is over
``k < β (c + 1)`` with ``β = τ / (1 + τ)``, ``τ = (e^{ε0} - e^{ε}) / (e^{ε + ε0} - 1)``, and equals
``(α - e^ε (1 - α)) F_c(K) + ((1 - α) - e^ε α) F_c(K - 1)`` with ``F_c`` the Bin(c, 1/2) distribution function
and ``K`` the largest integer below ``β (c + 1)``. By the symmetry ``Q_c(k) = P_c(c + 1 - k)`` the divergence the
other way round is the same number.

**The numerical bound** evaluates ``δ(ε)`` exactly for every ``c`` whose probability matters: ``c`` runs over
the central interval of Bin(n − 1, p) outside which the mass is at most ``δ·10⁻⁶``; that outside mass is
added to ``δ(ε)`` in full (as if those ``c`` revealed everything), so the result stays an upper bound. The
smallest ε with ``δ(ε) ≤ δ`` is found by bisection on ``[0, ε0]`` to a relative width of ``10⁻⁹`` and the upper
end is returned. The authors' reference implementation walks ``c`` in steps and bounds each step by its
endpoints; in its upper bound the second divergence is taken as ``max(Δq(upper), Δq(upper))`` where
``max(Δq(upper), Δq(lower))`` is meant, which can understate ε by up to about 1.5%. Here every ``c`` is
evaluated (no steps), so there is no such bracket and no such typo; at ``n = 10⁵``, ``ε0 = 4``,
``δ = 10⁻⁶`` this gives ε ≈ 0.170, inside the authors' published bracket [0.1675, 0.1728].

**The closed form** (their Theorem 3.1, in the form of the authors' implementation): for
``ε0 ≤ log(n / (16 log(4/δ)))``,

.. math::

    ε ≤ \log\Bigl(1 + \frac{1 - e^{-ε0}}{1 + e^{-ε0 - e}}\,(a + b)\Bigr),\quad
    a = 8\sqrt{\frac{e^{ε0} \log(4/δ)}{n}},\ b = \frac{8 e^{ε0}}{n},\ e = \log(1 + a + b).

Above that ε0 the theorem says nothing (reported as ``closed_form = None``), and the numerical bound may
show no amplification at all (ε = ε0).

Examples
--------
>>> from ldpnum.accounting import shuffle_epsilon
>>> r = shuffle_epsilon(4.0, 100_000, 1e-6)
>>> round(r.epsilon, 3), round(r.closed_form, 4), r.amplified
(0.17, 0.5378, True)
"""

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ._validation import check_scalar

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ShuffleAmplification", "shuffle_epsilon", "closed_form_shuffle_epsilon", "PrivacyLedger",
           "check_shuffle_delta"]

#: Relative width of the bisection's final bracket on ε.
_RTOL = 1e-7
#: Most blocks of clone counts evaluated per δ(ε) (every count when the relevant range is shorter).
_MAX_BLOCKS = 2048
#: Fewest blocks, and the widest block relative to its clone count (see :func:`_clone_blocks`).
_MIN_BLOCKS = 64
_BLOCK_RTOL = 1e-5
#: Share of δ the truncated tails of Bin(n - 1, e^{-ε0}) may cost (added to δ(ε) in full).
_TAIL_SHARE = 1e-6
#: Largest n evaluated as such (2**53: every count an exact double); larger n are bounded by it.
_N_EXACT = 2**53
#: Above this ε0 no amplification is computed: ε = ε0, always a valid bound; with at most 2**53 people the
#: expected number of clones n·e^{-ε0} is below 1e-27, so there is nothing to gain (and Bin(n, e^{-ε0})'s
#: distribution function overflows in SciPy well before e^{-ε0} underflows).
_EPS0_MAX = 100.0


@dataclass(frozen=True)
class ShuffleAmplification:
    """The central (ε, δ) of ``n`` shuffled ε0-LDP reports.

    Attributes
    ----------
    epsilon : float
        The numerical upper bound on the central ε (at most ``epsilon0``): the batch is (epsilon, delta)-DP.
    closed_form : float or None
        The closed-form bound, or None where it does not apply (``epsilon0 > log(n / (16 log(4/δ)))``).
    epsilon0, n, delta
        The inputs: each report's local ε, the number of people shuffled together, the central δ.

    ``float(result)`` is ``epsilon``.
    """

    epsilon: float
    closed_form: float | None
    epsilon0: float
    n: int
    delta: float

    @property
    def amplified(self) -> bool:
        """Whether shuffling lowers ε below the local ``epsilon0`` at this δ."""
        return self.epsilon < self.epsilon0

    @property
    def closed_form_applies(self) -> bool:
        """Whether ``epsilon0 ≤ log(n / (16 log(4/δ)))``, the closed form's condition."""
        return self.closed_form is not None

    def __float__(self) -> float:
        return self.epsilon

    def describe(self) -> str:
        """``"local ε = 4, central ε (shuffled, n = 100,000, δ = 1e-06) = 0.1698"``: how results show it."""
        return (f"local ε = {self.epsilon0:g}, central ε (shuffled, n = {self.n:,}, δ = {self.delta:g}) = "
                f"{self.epsilon:.4g}")

    def __str__(self) -> str:
        cf = "n/a (ε0 above its range)" if self.closed_form is None else f"{self.closed_form:.4g}"
        what = "amplified" if self.amplified else "no amplification"
        return (f"{self.n:,} shuffled {self.epsilon0:g}-LDP reports: ({self.epsilon:.4g}, {self.delta:g})-DP "
                f"({what}); closed form {cf}")


def check_shuffle_delta(delta: float) -> float:
    """``delta`` as a float in (0, 1), the central δ of a shuffled collection, else ValueError.

    TypeError for a non-number. Integrations call it before drawing anything.
    """
    return check_scalar(delta, "shuffle_delta", float, low=0, high=1, include_boundaries="neither", finite=False,
                        verb="lie")


def _check(epsilon0, n, delta):
    return (check_scalar(epsilon0, "epsilon0", float, low=0, include_boundaries="neither"),
            check_scalar(n, "n", int, low=1),
            check_scalar(delta, "delta", float, low=0, high=1, include_boundaries="neither", finite=False, verb="lie"))


def closed_form_shuffle_epsilon(epsilon0: float, n: int, delta: float) -> float | None:
    """The closed-form central ε of Feldman, McMillan and Talwar (see the module docstring), or None out of its range.

    None when ``epsilon0 > log(n / (16 log(4/δ)))`` (outside the theorem's range).

    Examples
    --------
    >>> round(closed_form_shuffle_epsilon(4.0, 100_000, 1e-6), 4)
    0.5378
    >>> closed_form_shuffle_epsilon(8.0, 100_000, 1e-6) is None
    True
    """
    eps0, n, delta = _check(epsilon0, n, delta)
    if n < 16 * math.log(4 / delta) or eps0 > math.log(n / (16 * math.log(4 / delta))):
        return None
    a = 8 * math.sqrt(math.exp(eps0) * math.log(4 / delta) / n)
    b = 8 * math.exp(eps0) / n
    e = math.log1p(a + b)
    return math.log1p((-math.expm1(-eps0)) / (1 + math.exp(-eps0 - e)) * (a + b))


def _delta_of(eps, eps0, c, weight, tail):
    """Upper bound on ``δ(ε)`` of the module docstring.

    ``Σ weight_i · D(c_i)`` plus the truncated mass ``tail``, where ``weight_i`` is the probability of the block of
    clone counts starting at ``c_i`` (``D`` decreases in ``c``, so a block's first count bounds the whole block).

    ``F_c(K)`` is the regularized incomplete beta function ``I_{1/2}(c - K, K + 1)`` (``scipy.special.betainc``,
    accurate in the tails for any ``c``). ``scipy.special.bdtr`` is not used: it loses digits for ``c`` beyond
    about 10⁶ (at ``c = 10⁸`` it gives 0.39 for a probability of 0.4998) and returns NaN beyond ``2³¹``; nor
    is ``F_c(K - 1)`` taken as ``F_c(K)`` minus a point probability from log-gamma, which cancels
    catastrophically at large ``c``. ``τ`` is formed from ``e^{ε - ε0}`` and ``e^{-ε0}`` (no overflow for any
    ``ε0``).
    """
    import numpy as np
    from scipy.special import betainc

    if eps >= eps0:
        return tail
    alpha = 1.0 / (1.0 + math.exp(-eps0))
    # τ = (e^{ε0} - e^ε) / (e^{ε + ε0} - 1), numerator and denominator multiplied by e^{-ε0} (and the
    # denominator e^ε - e^{-ε0} as expm1(ε) - expm1(-ε0), exact where both are tiny: τ = 1 at ε = 0)
    tau = -math.expm1(eps - eps0) / (math.expm1(eps) - math.expm1(-eps0))
    beta = tau / (1.0 + tau)
    k = np.ceil(beta * (c + 1.0)) - 1.0  # the largest integer below beta (c + 1)
    f_k = np.where(k >= c, 1.0, betainc(np.maximum(c - k, 1.0), k + 1.0, 0.5))
    f_k = np.where(k < 0, 0.0, f_k)
    f_k1 = np.where(k >= 1, betainc(c - k + 1.0, np.maximum(k, 1.0), 0.5), 0.0)  # F_c(K - 1)
    e = math.exp(eps)
    inner = (alpha - e * (1 - alpha)) * f_k + ((1 - alpha) - e * alpha) * f_k1
    return float(np.dot(weight, np.clip(inner, 0.0, 1.0))) + tail


def _clone_blocks(n, p, tail_target):
    """Blocks of the clone count ``C ~ Bin(n - 1, p)``: ``(starts, block probabilities, outside mass)``.

    The central interval ``μ ± z σ`` holds all but about ``tail_target`` of the mass (the exact outside mass
    is returned and charged in full); it is cut into at most :data:`_MAX_BLOCKS` blocks of equal width
    (width 1, i.e. every count, when the interval is short).
    """
    import numpy as np
    from scipy.stats import binom

    m = n - 1
    mu, sd = m * p, math.sqrt(m * p * (1 - p))
    z = 1.5 * math.sqrt(-2 * math.log(tail_target)) + 3  # (1 / 5e-324 overflows; -log does not)
    lo = max(0, math.floor(mu - z * sd))
    hi = min(m, math.ceil(mu + z * sd))
    # a block's first count bounds it, D(c) changing by about (width / c) / 2 relative across it; at huge n the
    # interval is a tiny fraction of c (10⁻⁶ at n = 10¹⁵), so blocks up to c·_BLOCK_RTOL wide cost nothing
    # measurable and keep the number of (slow, near-central) incomplete-beta evaluations small
    blocks = min(_MAX_BLOCKS, max(_MIN_BLOCKS, math.ceil((hi - lo + 1) / max(1.0, lo * _BLOCK_RTOL))))
    width = max(1, -(-(hi - lo + 1) // blocks))
    starts = np.arange(lo, hi + 1, width, dtype=np.float64)
    ends = np.minimum(starts + width - 1, hi)
    cdf_hi = binom.cdf(ends, m, p)
    cdf_lo = binom.cdf(starts - 1, m, p)
    weight = np.maximum(cdf_hi - cdf_lo, 0.0)
    if width == 1:  # the pmf is accurate where differences of the cdf lose digits
        weight = binom.pmf(starts, m, p)
    outside = max(0.0, float(binom.cdf(lo - 1, m, p)) + float(binom.sf(hi, m, p)))
    return starts, weight, outside


def shuffle_epsilon(epsilon0: float, n: int, delta: float) -> ShuffleAmplification:
    """Central (ε, δ) of ``n`` people's ε0-LDP reports after anonymous uniform shuffling.

    Parameters
    ----------
    epsilon0 : float
        Each report's local ε (> 0): the ε of the mechanism each person ran (for a person who sent several
        reports to the same shuffled batch, their sum).
    n : int
        Number of people whose reports are shuffled together (≥ 1).
    delta : float
        The central δ, in (0, 1).

    Returns
    -------
    ShuffleAmplification
        ``epsilon`` (the numerical upper bound, never above ``epsilon0``), ``closed_form`` (or None outside its
        range), ``amplified``.

    Notes
    -----
    The numerical bound and the closed form of Feldman, McMillan and Talwar, "Hiding Among the Clones"
    (FOCS 2021), as described in :mod:`ldpnum.accounting`; the numerical one evaluates every clone count in
    the relevant range rather than steps of them (fixing a typo of the reference implementation that
    understates ε by up to ~1.5%). It holds for any ε0-LDP randomizer run once per person, when the shuffler
    is trusted to hide who sent what and to permute uniformly; the shuffled reports must come from distinct
    people. It does not account for the collector's other releases (compose them). One call takes
    milliseconds to about a second, for any n (measured: n = 10¹⁵, ε0 = 1 in 1 s on a loaded machine).

    At the extremes: for very large ``n`` the two neighbouring views can be closer in total variation than
    ``delta`` (at ε0 = 1, δ = 10⁻⁶ from about n = 10¹² on), and the result is then ε = 0, a true
    (0, δ)-DP statement. ``n`` above 2**53 is evaluated as 2**53 people (more people only amplify more, so
    that is still an upper bound). ``epsilon0`` above 100 gets ε = ε0, no amplification: valid for any
    randomizer (shuffling is post-processing), and with at most 2**53 people the expected number of clones
    ``n e^{-ε0}`` is below 10⁻²⁷, so there is nothing to amplify with. A ``delta`` as small as the smallest double works
    (the bound is then ε0 or close to it).

    Raises
    ------
    ValueError
        ``epsilon0`` not finite and > 0, ``n`` not an integer ≥ 1, ``delta`` not in (0, 1).

    Examples
    --------
    >>> r = shuffle_epsilon(1.0, 10_000, 1e-6)
    >>> r.amplified and r.epsilon < 0.5
    True
    >>> r = shuffle_epsilon(8.0, 1_000, 1e-6)    # too few people: (almost) no amplification
    >>> round(r.epsilon, 4), r.closed_form
    (8.0, None)
    """
    eps0, n, delta = _check(epsilon0, n, delta)
    closed = closed_form_shuffle_epsilon(eps0, n, delta)
    if n == 1 or eps0 > _EPS0_MAX:
        return ShuffleAmplification(eps0, closed, eps0, n, delta)
    # more people only amplify more (the clone count grows stochastically, δ(ε) decreases in it), so beyond
    # 2**53 (where counts stop being exact doubles) the bound for 2**53 people is an upper bound for n
    n_eval = min(n, _N_EXACT)
    # (a subnormal δ times the share is 0: the smallest positive double then)
    c, weight, tail = _clone_blocks(n_eval, math.exp(-eps0), max(delta * _TAIL_SHARE, 5e-324))
    if _delta_of(0.0, eps0, c, weight, tail) <= delta:
        return ShuffleAmplification(0.0, closed, eps0, n, delta)
    from scipy.optimize import brentq

    # log δ(ε) - log δ decreases in ε: its root by Brent's method, then nudged up until δ(ε) ≤ δ holds, so
    # the returned ε is an upper bound
    hi = eps0
    if closed is not None and closed < eps0 and _delta_of(closed, eps0, c, weight, tail) <= delta:
        hi = closed  # the closed form is valid: it brackets the root
    if _delta_of(hi, eps0, c, weight, tail) > delta:  # only at hi = eps0 with a tail above delta
        return ShuffleAmplification(eps0, closed, eps0, n, delta)
    floor = max(delta * 1e-3, 5e-324)  # below δ, so the root is where δ(ε) = δ, even for δ = 1e-300
    f = lambda e: math.log(max(_delta_of(e, eps0, c, weight, tail), floor)) - math.log(delta)  # noqa: E731
    xtol = _RTOL * hi
    right = min(brentq(f, 0.0, hi, xtol=xtol, rtol=1e-12) + xtol, hi)
    while right < hi and _delta_of(right, eps0, c, weight, tail) > delta:
        right = min(right + xtol, hi)
    return ShuffleAmplification(right if right < eps0 else eps0, closed, eps0, n, delta)


# -- the privacy ledger -------------------------------------------------------------------------------------

#: Format of :meth:`PrivacyLedger.to_json`.
LEDGER_FORMAT = 1


def _id_kind(v):
    """``"int"`` or ``"str"``: the kind of one person id (NumPy scalars count as their Python kind), else None."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, str):
        return "str"
    return None


def _person_ids(people, what="people", kind=None):
    """People ids as a unique pandas Index, all ints or all strs (JSON-able), of ``kind`` when given.

    Every id is checked (not only the first): a float, bytes or bool id is a TypeError, and so is a mix of ints
    and strs, or ids of the other kind than ``kind`` (the ledger's), naming the count and first position.
    """
    import pandas as pd

    listed = isinstance(people, (list, tuple))
    # a list keeps each id's own type while it is checked ([1, 2.5] must not pass as floats 1.0, 2.5)
    index = people if isinstance(people, pd.Index) else pd.Index(people, dtype=object) if listed else \
        pd.Index(np.asarray(people))
    if index.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional ids")
    if index.hasnans:
        raise ValueError(f"{what} holds {int(index.isna().sum())} missing id(s): every person needs an id")
    inferred = index.inferred_type  # pandas' one C pass: "integer", "string", "mixed-integer", ...
    if index.dtype.kind in "iu" or inferred == "integer":
        kinds = np.full(len(index), "int", dtype=object)
    elif inferred == "string":
        kinds = np.full(len(index), "str", dtype=object)
    else:
        kinds = np.array([_id_kind(v) for v in index], dtype=object)
    bad = np.flatnonzero(np.equal(kinds, None))
    if bad.size:
        v = index[bad[0]]
        v = v.item() if isinstance(v, np.generic) else v
        raise TypeError(f"{what} ids must be ints or strs (they are written to JSON); got {bad.size} id(s) of "
                        f"another type, the first at position {bad[0]}: {type(v).__name__} {v!r}")
    if len(index):
        want = kind if kind is not None else kinds[0]
        other = np.flatnonzero(kinds != want)
        if other.size:
            v = index[other[0]]
            v = v.item() if hasattr(v, "item") else v
            whose = "this ledger holds" if kind is not None else f"{what} starts with"
            raise TypeError(
                f"{what} mixes id types: {whose} {want} ids, but {other.size} id(s) are "
                f"{'strs' if want == 'int' else 'ints'}, the first at position {other[0]}: {v!r}. A ledger keeps "
                "one id type so that 7 and '7' cannot pass as two people (which would bypass the cap); convert "
                f"the ids to {want} (e.g. {'int(x)' if want == 'int' else 'str(x)'}) before recording")
    return pd.Index(list(people)) if listed else index  # ints as int64


def _per_person(ids, amount):
    """``amount`` (a number, or one per id) summed per person: a unique index and each person's total.

    Panel data (one person in several rows of a collection) composes per person: a person with three rows of
    ε = 1 spends 3.
    """
    import pandas as pd

    return pd.Series(amount, index=ids, dtype=np.float64).groupby(level=0, sort=False).sum()


class PrivacyLedger:
    r"""What each person has spent across collections.

    Every collection recorded with its mechanisms, ε and people, and each person's total ε by sequential
    composition.

    A person who takes part in collections with :math:`ε_1, ε_2, \ldots` has given up at most
    :math:`\sum_i ε_i` (basic sequential composition, for pure ε-LDP reports). Collections that partition
    people (each person in one of them) compose in parallel: a person's total counts only the collections they
    were in, so recording each part with its own people gives the parallel bound automatically. Within one
    collection, the ε recorded per person is what one person's row spent (``epsilon_per_row`` of a report frame:
    the sum of the columns' ε with ``"all-columns"``, their largest with ``"one-column-per-row"``).

    **Person ids** are ints or strs (they are written to JSON), and one ledger holds one kind: the first
    collection recorded fixes it, and a later collection with ids of the other kind (or a mix) is refused with
    a TypeError before anything is recorded. Were ``7`` and ``"7"`` kept apart, the same person arriving once
    with a numeric id and once with a text id (two files, two systems) would have two totals and pass the cap
    twice; were they merged silently, ``"007"`` and ``7`` would raise the question of which spellings are the
    same person, which only the data's owner can answer. So convert ids to one kind before recording (the
    command line reads ``--people-column`` as text, or as ints for a ledger that already holds ints).
    :meth:`total` and :meth:`check` refuse an id of the other kind too, rather than answering 0.

    **δ.** A collection's ``delta`` (for approximate-DP mechanisms; 0 for pure ε-LDP, the default) must lie in
    [0, 1): δ ≥ 1 promises nothing, and a negative δ is meaningless, so both are refused. The ledger records δ
    per collection (see :meth:`to_frame`) but composes only ε: its totals are the basic composition of pure ε;
    add the recorded δs for a person's total δ.

    Parameters
    ----------
    cap : float, optional
        Largest total ε any person may reach. A collection that would take someone above it is refused
        (:class:`~ldpnum.exceptions.BudgetExceededError`, nothing recorded) or, with ``on_exceed="warn"``,
        recorded with a :class:`~ldpnum.exceptions.BudgetWarning`.
    on_exceed : {"raise", "warn"}, optional

    Examples
    --------
    >>> import numpy as np, pandas as pd, ldpnum as ldp
    >>> ledger = ldp.PrivacyLedger(cap=3.0)
    >>> df = pd.DataFrame({"age": np.random.default_rng(0).uniform(20, 60, 100)})
    >>> r = df.ldp.privatize({"age": ldp.Duchi(1.0, (0, 100))}, rng=0, ledger=ledger, label="survey 1")
    >>> _ = ledger.record(epsilon=1.5, people=range(50), label="follow-up of the first 50")
    >>> float(ledger.totals().max()), float(ledger.totals().min()), ledger.total(99)
    (2.5, 1.0, 1.0)
    >>> ledger.check(epsilon=1.0, people=range(10))
    Traceback (most recent call last):
      ...
    ldpnum.exceptions.BudgetExceededError: 10 person(s) would reach a total epsilon above the cap 3 (first: 0 at 3.5); nothing was recorded
    """

    def __init__(self, cap: float | None = None, *, on_exceed: str = "raise") -> None:
        import pandas as pd

        cap = check_scalar(cap, "cap", float, low=0, include_boundaries="neither", allow_none=True)
        if on_exceed not in ("raise", "warn"):
            raise ValueError(f"on_exceed must be 'raise' or 'warn'; got {on_exceed!r}")
        self.cap = None if cap is None else float(cap)
        self.on_exceed = on_exceed
        self._entries: list[dict] = []
        self._totals = pd.Series(dtype=np.float64)
        self._kind: str | None = None  # "int" or "str": the one id kind of this ledger, once anyone is recorded
        self._streams: dict[str, dict] = {}  # longitudinal collections: per person reports and memoized values seen

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        cap = "" if self.cap is None else f", cap={self.cap:g}"
        return f"PrivacyLedger({len(self._entries)} collection(s), {len(self._totals):,} people{cap})"

    def check(self, *, epsilon: float, people: Any) -> None:
        """Raise :class:`~ldpnum.exceptions.BudgetExceededError` (or warn) if a collection would exceed the cap.

        Raises (or warns, per ``on_exceed``) if recording a collection of ``epsilon`` per person over ``people``
        would take someone above the cap; records nothing. Integrations call it before drawing any randomness.
        """
        eps = _check_epsilon_spent(epsilon)
        ids = _person_ids(people, kind=self._kind)
        self._over_cap(_per_person(ids, eps))

    def _over_cap(self, spend):
        """Refuse (or warn) if adding ``spend`` (a Series: each person's added ε) takes someone above the cap."""
        if self.cap is None:
            return
        ids = spend.index
        after = self._totals.reindex(ids, fill_value=0.0).to_numpy() + spend.to_numpy()
        over = np.flatnonzero(after > self.cap * (1 + 1e-12))
        if over.size:
            first = ids[over[0]]
            first = first.item() if hasattr(first, "item") else first  # a NumPy scalar id as a Python value
            msg = (f"{over.size} person(s) would reach a total epsilon above the cap {self.cap:g} (first: "
                   f"{first!r} at {after[over[0]]:g})")
            if self.on_exceed == "raise":
                from .exceptions import BudgetExceededError

                raise BudgetExceededError(msg + "; nothing was recorded", count=int(over.size), first=first)
            from .exceptions import BudgetWarning

            warnings.warn(BudgetWarning(msg + "; recorded anyway (on_exceed='warn')"), stacklevel=4)

    def record(self, *, epsilon: float, people: Any, specs: Any = None, strategy: str | None = None,
               label: str | None = None, delta: float = 0.0, shuffled: bool = False,
               shuffle_delta: float = 1e-6, shuffle_n: int | None = None) -> dict:
        """Record one collection: ``epsilon`` spent by each of ``people`` (ids: the rows' index, user ids).

        A person named in several rows (panel data) spends ``epsilon`` per row (sequential composition).

        ``specs`` (mechanism specs or a mapping column -> spec) and ``strategy`` are kept for the record;
        ``label`` names the collection. Checks the cap first (see :meth:`check`). With ``shuffled=True`` (the
        reports reached the analyst anonymized and shuffled together) the entry also shows the central
        ``(ε, shuffle_delta)`` of the batch (:func:`shuffle_epsilon` over its people) next to the local ε; the
        totals stay local ε (what a person gave up towards whoever sees reports before the shuffle).
        ``shuffle_n`` (at most the number of people) computes that central ε over fewer reports: the
        integrations pass the smallest report column's count under "one-column-per-row", where each column's
        estimates show the central ε of its own reports, so the entry states the largest of them (a valid
        bound for the batch) and agrees with the columns. Returns the entry.
        """
        eps = _check_epsilon_spent(epsilon)
        delta = _check_delta_spent(delta)
        if shuffled:
            shuffle_delta = check_shuffle_delta(shuffle_delta)
        ids = _person_ids(people, kind=self._kind)
        spend = _per_person(ids, eps)
        self._over_cap(spend)
        import datetime

        if specs is None:
            spec_list = []
        elif isinstance(specs, dict):
            spec_list = [f"{c}: {s}" for c, s in specs.items()]
        elif isinstance(specs, (list, tuple)):
            spec_list = [str(s) for s in specs]
        else:
            spec_list = [str(specs)]
        shuffle_n = check_scalar(shuffle_n, "shuffle_n", int, allow_none=True)
        if shuffle_n is not None and not 1 <= shuffle_n <= len(ids):
            raise ValueError(f"shuffle_n must be an integer in [1, {len(ids)}] (the people recorded); got "
                             f"{shuffle_n!r}")
        central = shuffle_epsilon(eps, len(ids) if shuffle_n is None else int(shuffle_n), shuffle_delta) \
            if shuffled and len(ids) else None
        entry = {"label": None if label is None else str(label), "epsilon": eps, "delta": float(delta),
                 "shuffled_epsilon": None if central is None else central.epsilon,
                 "shuffled_delta": None if central is None else float(shuffle_delta),
                 "strategy": strategy, "mechanisms": spec_list, "n_people": len(spend),
                 "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 "people": ids.tolist()}
        self._totals = self._totals.add(spend, fill_value=0.0)
        self._entries.append(entry)
        if len(ids) and self._kind is None:
            self._kind = _id_kind(ids[0])
        return {k: v for k, v in entry.items() if k != "people"}

    # -- longitudinal collections (design rule R9) -------------------------------------------------------------
    def _longitudinal_spend(self, stream, people, fingerprints, round_id, state=None):
        """Each person's added ε for one round of the longitudinal ``stream``, and the stream's state after it.

        The state is not stored yet: per (person, fingerprint of a memoized value), how many reports the person sent
        about that value. ``state``: the stream's state to start from (default: the recorded one).

        Vectorized over reports: with ``c`` earlier reports and ``d`` new ones about one value, the person's bound
        for it grows by ``min(ε∞, (c + d)·ε1) - min(ε∞, c·ε1)``.
        """
        import pandas as pd

        if state is None:
            state = self._streams.get(stream["id"])
        if state is None:
            state = {**stream, "counts": pd.Series(dtype=np.int64), "rounds": {}}
        ids = pd.Index(people)
        if round_id is not None and round_id in state["rounds"]:
            again = ids[ids.isin(state["rounds"][round_id])]
            if len(again):
                first = again[0].item() if hasattr(again[0], "item") else again[0]
                raise ValueError(f"round {round_id} of this longitudinal collection ({stream['mechanism']}) was already "
                                 f"recorded for {len(again)} of these people (first: {first!r}): a round is "
                                 "collected once per person; use a new round number")
        eps_perm, eps_rep = state["epsilon_permanent"], state["epsilon_report"]
        pairs = pd.MultiIndex.from_arrays([ids, pd.Index(np.asarray(fingerprints, dtype=np.uint64))],
                                          names=["person", "fingerprint"])
        new = pd.Series(1, index=pairs, dtype=np.int64).groupby(level=[0, 1], sort=False).sum()
        before = state["counts"].reindex(new.index, fill_value=0).to_numpy() if len(state["counts"]) else \
            np.zeros(len(new), dtype=np.int64)
        after_counts = before + new.to_numpy()
        gain = np.minimum(eps_perm, after_counts * eps_rep) - np.minimum(eps_perm, before * eps_rep)
        spend = pd.Series(gain, index=new.index.get_level_values(0), dtype=np.float64).groupby(level=0,
                                                                                              sort=False).sum()
        counts = state["counts"].add(new, fill_value=0).astype(np.int64) if len(state["counts"]) else new
        rounds = dict(state["rounds"])
        if round_id is not None:
            rounds[round_id] = ids.unique() if round_id not in rounds else rounds[round_id].append(ids).unique()
        return spend, {**state, "counts": counts, "rounds": rounds}

    def _longitudinal_rounds(self, rounds, people):
        """Validate ``people`` and each ``(mechanism, fingerprints, round)``.

        Checks the ids, and per round its stream (identity and ε of the mechanism's permanent layer), fingerprints
        and round number.
        """
        ids = _person_ids(people, kind=self._kind)
        out = []
        for mechanism, fingerprints, round_id in rounds:
            if not getattr(mechanism, "memoized", False):
                raise TypeError(f"a longitudinal round takes a longitudinal mechanism (LGRR, LOSUE, LOLOHA, RAPPOR, "
                                f"memoized OneBitMean/DBitFlip); got {type(mechanism).__name__}: record it with "
                                "record()")
            fps = np.asarray(fingerprints)
            if fps.shape != (len(ids),) or fps.dtype != np.uint64:
                raise ValueError(f"fingerprints must be one uint64 per person ({len(ids)}); got shape {fps.shape}, "
                                 f"dtype {fps.dtype}")
            if round_id is not None:
                round_id = check_scalar(round_id, "round", int, low=0)
            stream: dict[str, Any] = {
                "id": f"{int(mechanism.tweak):016x}", "mechanism": str(mechanism._permanent_spec()),
                "epsilon_permanent": float(mechanism.epsilon_permanent),
                "epsilon_report": float(mechanism.epsilon_report)}
            out.append((stream, fps, round_id))
        return ids, out

    def check_longitudinal(self, rounds: Any, *, people: Any, epsilon: float | None = None) -> None:
        """Raise (or warn, per ``on_exceed``) if recording the longitudinal ``rounds`` would exceed the cap.

        Checks recording ``rounds`` — ``(mechanism, fingerprints, round)`` each, over the same ``people`` — plus
        ``epsilon`` per row of one-shot reports: an error if it would take someone above the cap, or would record a
        round twice; records nothing. The integrations call it before drawing any randomness (see
        :meth:`record_longitudinal`).
        """
        import pandas as pd

        ids, checked = self._longitudinal_rounds(rounds, people)
        people_list = ids.tolist()
        total = _per_person(ids, _check_epsilon_spent(epsilon)) if epsilon is not None else pd.Series(dtype=np.float64)
        states: dict = {}
        for stream, fps, round_id in checked:
            spend, states[stream["id"]] = self._longitudinal_spend(stream, people_list, fps.tolist(), round_id,
                                                                   states.get(stream["id"]))
            total = total.add(spend, fill_value=0.0)
        self._over_cap(total)

    def record_longitudinal(self, mechanism: Any, *, people: Any, fingerprints: Any, round: int | None = None,
                            label: str | None = None) -> dict:
        """Record one round of a longitudinal collection (a :class:`~ldpnum.longitudinal.Longitudinal` mechanism).

        A person's loss towards the collector over all rounds of one mechanism is at most
        ``Σ_v min(ε∞, r_v·ε1)`` over the distinct values ``v`` they memoized, ``r_v`` the reports they sent about
        ``v``: the reports about one value post-process one permanent response (ε∞-LDP) and are each ε1-LDP, so
        both bounds hold for them, and the permanent responses of different values are independent (sequential
        composition across values). So the ledger adds ε1 per report until a value has cost ε∞, then nothing
        while the value stays, and starts again when it changes to a new one
        (:meth:`~ldpnum.longitudinal.Longitudinal.memo_fingerprints` tells it which values are the same without
        telling it the values). Naive repeated collection would add ε1 per report forever. Checks the cap first
        (nothing recorded if refused).

        Parameters
        ----------
        mechanism : Longitudinal
            The round's mechanism: its ε1, ε∞ and permanent spec identify the collection (rounds of one
            mechanism share their permanent responses, and so their budget).
        people : array_like of int or str
            One id per report (a person with several rows, panel data, is composed per person).
        fingerprints : array_like of uint64
            ``mechanism.memo_fingerprints(values, keys)``, one per report: a keyed digest of each memoized value.
        round : int, optional
            The round; recording one round twice for a person is refused.
        label : str, optional
            Names the collection in :meth:`to_frame`.

        Returns
        -------
        dict
            The entry (as :meth:`record`'s), with ``epsilon`` the largest ε any person added in this round.
        """
        ids, rounds = self._longitudinal_rounds([(mechanism, fingerprints, round)], people)
        (stream, fps, round), = rounds
        people_list = ids.tolist()
        spend, after = self._longitudinal_spend(stream, people_list, fps.tolist(), round)
        self._over_cap(spend)
        import datetime

        entry = {"label": None if label is None else str(label), "epsilon": float(spend.max()) if len(spend) else 0.0,
                 "delta": 0.0, "shuffled_epsilon": None, "shuffled_delta": None, "strategy": None,
                 "mechanisms": [str(mechanism.spec)], "n_people": len(spend),
                 "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 "people": people_list,
                 "longitudinal": {**stream, "round": round, "fingerprints": [f"{int(f):016x}" for f in fps]}}
        self._streams[stream["id"]] = after
        self._totals = self._totals.add(spend, fill_value=0.0)
        self._entries.append(entry)
        if len(ids) and self._kind is None:
            self._kind = _id_kind(ids[0])
        return {k: v for k, v in entry.items() if k not in ("people", "longitudinal")}

    def _replay_longitudinal(self, i, e):
        """Replay entry ``i``, a longitudinal round written by :meth:`PrivacyLedger.to_json`."""
        lon = e["longitudinal"]
        try:
            stream = {k: lon[k] for k in ("id", "mechanism", "epsilon_permanent", "epsilon_report")}
            fps = [int(f, 16) for f in lon["fingerprints"]]
            ids = _person_ids(e["people"], kind=self._kind)
            if len(fps) != len(ids):
                raise ValueError(f"{len(fps)} fingerprints for {len(ids)} people")
            spend, after = self._longitudinal_spend(stream, ids.tolist(), fps, lon.get("round"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"privacy ledger JSON: entry {i}: not a valid longitudinal round ({exc})") from None
        self._streams[stream["id"]] = after
        self._totals = self._totals.add(spend, fill_value=0.0)
        self._entries.append(dict(e))
        if len(ids) and self._kind is None:
            self._kind = _id_kind(ids[0])

    def totals(self) -> "pd.Series":
        """Each person's total ε over the recorded collections (sequential composition), by id."""
        return self._totals.rename("epsilon").rename_axis("person").copy()

    def total(self, person: Any) -> float:
        """One person's total ε (0 for someone never recorded).

        TypeError for an id of the other kind than the ledger's (``"7"`` in a ledger of int ids), which could never
        be found.
        """
        kind = _id_kind(person)
        if kind is None:
            raise TypeError(f"person must be an int or str id; got {type(person).__name__} {person!r}")
        if self._kind is not None and kind != self._kind:
            raise TypeError(f"person {person!r} is a {kind} id but this ledger holds {self._kind} ids; convert it "
                            f"(e.g. {'int(x)' if self._kind == 'int' else 'str(x)'})")
        return float(self._totals.get(person, 0.0))

    @property
    def id_kind(self) -> str | None:
        """``"int"`` or ``"str"``: the kind of person ids this ledger holds (None while it records nobody)."""
        return self._kind

    def to_frame(self) -> "pd.DataFrame":
        """One row per recorded collection: label, epsilon per person, delta, strategy, mechanisms, people, time."""
        import pandas as pd

        cols = ["label", "epsilon", "delta", "shuffled_epsilon", "shuffled_delta", "strategy", "mechanisms",
                "n_people", "time"]
        return pd.DataFrame([{k: e.get(k) for k in cols} for e in self._entries], columns=cols)

    def to_json(self) -> str:
        """The ledger as JSON (collections with their people ids; the cap and policy)."""
        import json

        return json.dumps({"format": LEDGER_FORMAT, "cap": self.cap, "on_exceed": self.on_exceed,
                           "entries": self._entries})

    @classmethod
    def from_json(cls, text: str) -> "PrivacyLedger":
        """A ledger written by :meth:`to_json`; totals are recomputed from the collections."""
        import json

        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not an ldpnum privacy ledger: not JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != LEDGER_FORMAT:
            raise ValueError(f"not an ldpnum privacy ledger (format {LEDGER_FORMAT})")
        entries = data.get("entries")
        if not isinstance(entries, list):
            raise ValueError("privacy ledger JSON: 'entries' must be a list of collections; "
                             f"got {'nothing' if entries is None else type(entries).__name__}")
        try:
            ledger = cls(data.get("cap"), on_exceed=data.get("on_exceed", "raise"))
        except TypeError as exc:  # a cap of another kind: still one ValueError for a damaged ledger
            raise ValueError(f"privacy ledger JSON: {exc}") from None
        policy, ledger.cap = ledger.cap, None  # replay without re-checking: the history is what it was
        for i, e in enumerate(entries):
            missing = [k for k in ("epsilon", "people") if not isinstance(e, dict) or k not in e]
            if missing:
                raise ValueError(f"privacy ledger JSON: entry {i} (of {len(entries)}) lacks "
                                 f"{' and '.join(repr(k) for k in missing)}; a collection records its epsilon "
                                 "and its people's ids")
            if not isinstance(e["people"], list):
                raise ValueError(f"privacy ledger JSON: entry {i}: 'people' must be a list of ids; got "
                                 f"{type(e['people']).__name__}")
            if isinstance(e, dict) and e.get("longitudinal") is not None:
                ledger._replay_longitudinal(i, e)
                continue
            try:
                ledger.record(epsilon=e["epsilon"], people=e["people"], specs=e.get("mechanisms"),
                              strategy=e.get("strategy"), label=e.get("label"),
                              delta=0.0 if e.get("delta") is None else e["delta"])
            except (TypeError, ValueError) as exc:
                raise ValueError(f"privacy ledger JSON: entry {i} (of {len(entries)}): {exc}") from None
            for key in ("time", "shuffled_epsilon", "shuffled_delta"):
                ledger._entries[-1][key] = e.get(key)
            ledger._entries[-1]["mechanisms"] = list(e.get("mechanisms") or [])
        ledger.cap = policy
        return ledger


def _check_delta_spent(delta):
    """A collection's δ as a float in [0, 1) (see :class:`PrivacyLedger`)."""
    delta = check_scalar(delta, "delta", float, finite=False)
    if not 0 <= delta < 1:
        raise ValueError(f"delta must lie in [0, 1) (0 for pure epsilon-LDP; delta >= 1 promises nothing); "
                         f"got {delta!r}")
    return float(delta)


def _check_epsilon_spent(epsilon):
    return check_scalar(epsilon, "epsilon", float, low=0, include_boundaries="neither")
