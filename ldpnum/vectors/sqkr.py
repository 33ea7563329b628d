r"""SQKR: Subsampled and Quantized Kashin's Representation (Chen, Kairouz and Özgür).

Each person holds ``x`` in the unit ℓ2 ball of ``R^d`` and sends one 64-bit report; the collector sums the
reports into ``2D`` integer counts and estimates the mean vector without bias.

**1. Kashin's representation.** The public frame is a randomized Hadamard frame with ``D = 2**L``
coefficients, the smallest power of two with ``D >= ρd`` for the ``redundancy`` ``ρ`` (2 or 4; default 4,
so ``λ = D/d`` is in ``[ρ, 2ρ)``): ``U^T x = H z/√D`` with ``z`` holding ``sign[m]·x[m]`` at row ``pos[m]``
(``pos`` a public pseudo-random choice of ``d`` of the ``D`` rows, ``sign`` public pseudo-random signs, both
from SplitMix64 of fixed salts, see :func:`frame`), ``U U^T = I``. Lyubarskii and Vershynin's truncation
iterations (:data:`ITERATIONS` ``= 16`` rounds, truncation at ``T‖x_t‖/√D`` with ``T =`` :data:`TRUNCATION`
``= 0.7``, never letting a running coefficient leave the level) followed by the residual's untruncated
coefficients give ``a`` with ``U a = x`` and ``‖a‖_∞ <= c``, the level ``c = K/√D``, for every input we
tried: random directions, the basis, sparse and flat vectors, and the hardest we know, the frame's own
columns ``U e_j`` normalized (their plain frame coefficient ``j`` is ``√(d/D)``, far above ``c``), at 26
dimensions from 1 to 1024. ``K`` (:data:`LEVELS`) is the smallest of 1.6, 1.8, 2.0, 2.2, 2.5 with which none
of those inputs needed clipping: 2.5 at ``ρ = 2`` (2.2 sufficed for d <= 300; 16 rounds are needed at
d >= 512), 2.0 at ``ρ = 4`` (12 rounds suffice; 1.8 failed at d = 7 and 8, 1.6 at d = 50 and above). (At
``ρ = 8`` a level of 2.0 was also the smallest safe one, so ``ρ = 8`` would only cost work.) The variance is
proportional to ``K²`` and does not depend on ``D`` otherwise, while the client's work is ``2·ITERATIONS``
transforms of size ``D``: ``ρ = 4`` has ``(2/2.5)² = 0.64`` times the error of ``ρ = 2`` for twice the work.
Every record runs all rounds, whatever its value. When a coefficient still ends above the level it is
clipped to ``±c``: that person's representation is then biased (``U a ≠ x``), and ``privatize`` says so
with a :class:`~ldpnum.ClippingWarning` counting those rows, checked before anything is drawn and giving
no row position (which rows are hard to represent depends on their values: the warning stays at the client).

**2. Sampling and quantization.** The report carries a public seed (the top ``64 - k`` bits of a word,
independent of ``x``) that names ``k`` coordinates ``j_1..j_k`` of ``[D]``, uniform and independent (with
replacement: the first ``k`` outputs of a SplitMix64 stream started at the seed). Each sampled coefficient
is quantized on its own to ``±c`` with ``P[+c] = (1 + a_j/c)/2`` (an integer threshold over ``2**53``), so
``E[q_t] = a_{j_t}`` and draws of the same coordinate are independent.

**3. Randomized response.** The ``k`` bits ``B`` go through generalized randomized response over ``2**k``
values (:class:`ldpnum.GRR`'s integer plan, the same kernel): ``y = B`` with probability ``p``, each other
value with ``q = (1 - p)/(2**k - 1)``. Default ``k = min(⌈ε⌉, D, 16)`` (the paper's ``k = ⌈ε⌉``; at most 16
so that the GRR alphabet stays within ``2**16``).

*Privacy.* The seed is independent of ``x``; given it, ``P[y | x] = Σ_B P[B | x] P[y | B]`` is a mixture of
GRR rows, so every ratio ``P[report | x]/P[report | x']`` is at most GRR's ``max/min`` word count, which the
plan keeps ``<= e^ε`` in exact integers (and reaches within about ``2**-30``: tight over bit strings, and
reached by inputs whose sampled coefficients sit at the level). Each call of ``privatize`` is ε-LDP.

*Decoding.* For ``i ≠ i'`` the GRR output's bits have ``E[y_i] = β b_i`` and ``E[y_i y_{i'}] = β b_i b_{i'}``
with ``β = p - q`` (``y_i, b_i ∈ ±1``). The unbiased estimate of one person's coefficients is
``â = (D/k)(c/β) Σ_t y_t e_{j_t}`` and of ``x`` it is ``U â``; for the mean over ``n`` people the collector
keeps, per coefficient, the number of ``+1`` and ``-1`` bits reported (``2D`` int64 counts, merged with
``+``), and ``x̂ = U (D/k)(c/β)(plus - minus)/n = sign[m]·(H (plus - minus))[pos[m]] · K/(kβn)``.
With ``j`` uniform and independent, and ``|U_{mj}| = 1/√D``, one person's estimate has, per coordinate,

.. math:: \operatorname{Var}\hat x_m = \frac{K^2}{k\beta^2} + \Big(\frac{k-1}{k\beta} - 1\Big) x_m^2,
          \qquad E\|\hat x - x\|^2 = \frac{dK^2}{k\beta^2} + \Big(\frac{k-1}{k\beta} - 1\Big)\|x\|^2,

whatever the Kashin coefficients are (the quantized values all have magnitude ``c``). The seed family has
``2**(64-k)`` members, so the coordinates' frequencies over it differ from ``1/D`` by its sampling error,
about ``√(D/(k·2**(64-k)))`` relatively (``1e-5`` at ``k = 16``, ``D = 2**19``; ``1e-7`` at ``k = 8``,
``D = 4096``), like the sampling error of any fixed public family: with the quantization threshold's
``2**-52`` and GRR's ``2**-60`` (lie blocks differing by one word), the decoder's only departure from
unbiasedness.

References
----------
W.-N. Chen, P. Kairouz, A. Özgür, "Breaking the Communication-Privacy-Accuracy Trilemma", NeurIPS 2020.
Y. Lyubarskii, R. Vershynin, "Uncertainty Principles and Vector Quantization", IEEE Transactions on
Information Theory 56(7), 2010.
V. Feldman, K. Talwar, "Lossless Compression of Efficient Private Local Randomizers", ICML 2021 (the
comparison at d = 1000, n = 10,000).
"""

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._kernels import client_kashin
from .._kernels._jit import launch
from .._random import splitmix64
from .._typing import ArrayLike, FloatArray, SeedLike
from .._validation import check_scalar
from ..aggregate import Aggregate
from ..base import Mechanism
from ..exceptions import ClippingWarning
from ..plans import TWO64, GRRPlan, grr_keep_cells
from ..reports import Reports, check_integer_codes, register_code_check
from ..spec import Spec, check_spec
from ._base import MAX_DIM, check_names
from ._result import VectorMeanEstimate
from .unit import UnitVectorMechanism, _row_norms

__all__ = [
    "DEFAULT_REDUNDANCY",
    "FRAME",
    "ITERATIONS",
    "LEVELS",
    "MAX_K",
    "SQKR",
    "TRUNCATION",
    "SQKRPlan",
    "frame",
    "kashin_coefficients",
]

#: Name and version of the public frame and coordinate sampler (in every spec).
FRAME = "hadamard-splitmix64/v1"
#: ``K`` for each redundancy ``ρ`` (``D >= ρ d``): the quantization level is ``c = K/√D``.
LEVELS = {2: 2.5, 4: 2.0}
#: Default redundancy ``ρ``.
DEFAULT_REDUNDANCY = 4
#: Truncation rounds of Lyubarskii and Vershynin's iteration.
ITERATIONS = 16
#: ``T``: each round truncates the frame coefficients at ``T‖x_t‖/√D``.
TRUNCATION = 0.7
#: Largest ``k`` (GRR over at most ``2**16`` bit strings).
MAX_K = 16
#: Rows per call of the collector's decoder (bounds its memory: ``k`` int64 per row).
DECODE_ROWS = 1 << 16
_POS_SALT = 0x53514B52_00000000  # "SQKR"
_SIGN_SALT = 0x53514B52_80000000
_GOLDEN = 0x9E3779B97F4A7C15
_M64 = (1 << 64) - 1


def frame(dim: int, redundancy: int = DEFAULT_REDUNDANCY) -> tuple[int, np.ndarray, np.ndarray]:
    """The public frame of ``dim`` coordinates: ``(L, pos, sign)``.

    ``D = 2**L``, the smallest power of two with ``D >= redundancy·dim``.

    ``pos`` are the ``dim`` rows ``j`` of ``[D]`` with the smallest ``splitmix64(salt_pos + j)``, in increasing
    order, and ``sign[m] = -1`` when the top bit of ``splitmix64(salt_sign + m)`` is set, else ``+1``.

    Examples
    --------
    >>> L, pos, sign = frame(3)
    >>> L, pos.shape, sorted(set(sign.tolist())) <= [-1.0, 1.0]
    (4, (3,), True)
    """
    dim = check_scalar(dim, "dim", int, low=1, high=MAX_DIM)
    redundancy = _check_redundancy(redundancy)
    L = max(1, (redundancy * dim - 1).bit_length())
    D = 1 << L
    keys = splitmix64(np.uint64(_POS_SALT) + np.arange(D, dtype=np.uint64))
    pos = np.sort(np.argsort(keys, kind="stable")[:dim]).astype(np.int64)
    top = splitmix64(np.uint64(_SIGN_SALT) + np.arange(dim, dtype=np.uint64)) >> np.uint64(63)
    sign = np.where(top == 1, -1.0, 1.0)
    for arr in (pos, sign):
        arr.flags.writeable = False
    return L, pos, sign


def _check_redundancy(redundancy):
    redundancy = check_scalar(redundancy, "redundancy", int)
    if redundancy not in LEVELS:
        raise ValueError(f"redundancy must be 2 or 4; got {redundancy!r}")
    return redundancy


def fwht(a: np.ndarray) -> np.ndarray:
    """Unnormalized Walsh–Hadamard transform along the last axis (Sylvester order), a new float64 array."""
    a = np.array(a, dtype=np.float64, copy=True)
    D = a.shape[-1]
    lead = a.shape[:-1]
    h = 1
    while h < D:
        v = a.reshape(lead + (D // (2 * h), 2, h))
        u, w = v[..., 0, :].copy(), v[..., 1, :].copy()
        v[..., 0, :] = u + w
        v[..., 1, :] = u - w
        h *= 2
    return a


def coordinates(seeds: np.ndarray, k: int, frame_bits: int) -> np.ndarray:
    """The ``k`` coordinates (``(n, k)`` int64) named by each report seed (the kernel's sampler)."""
    steps = np.arange(k, dtype=np.uint64) * np.uint64(_GOLDEN)
    h = splitmix64(np.asarray(seeds, dtype=np.uint64)[:, None] + steps[None, :])
    return (h >> np.uint64(64 - frame_bits)).astype(np.int64)


@dataclass(frozen=True, eq=False)
class SQKRPlan:
    """Integer plan of :class:`SQKR`: the frame size, ``k``, and the GRR plan over the ``2**k`` bit strings.

    Words per record: ``k + 2`` (seed, one per quantized coefficient, the randomized-response word).
    """

    dim: int
    frame_bits: int
    k: int
    grr: GRRPlan

    @property
    def words_per_record(self) -> int:
        """Random 64-bit words each record consumes."""
        return self.k + 2

    @property
    def seed_bits(self) -> int:
        """Bits of a report's seed index: a 64-bit word less the ``k`` bits of the coefficient index."""
        return 64 - self.k

    def exact_probabilities(self, bits: int) -> dict:
        """``{y: Fraction}``: the randomized response of the bit string ``bits`` (for any seed)."""
        return self.grr.exact_probabilities(bits)

    def report_probabilities(self, quantize_one: list) -> dict:
        """``{y: Fraction}`` for a seed whose ``k`` sampled coefficients quantize to 1 with given probabilities.

        The exact probabilities are ``quantize_one[t]`` (Fractions): the mixture ``Σ_B P[B] P[y | B]``.
        """
        k = self.k
        out: dict = {}
        for bits in range(1 << k):
            pb = Fraction(1)
            for t in range(k):
                pb *= quantize_one[t] if (bits >> t) & 1 else 1 - quantize_one[t]
            if pb:
                for y, p in self.exact_probabilities(bits).items():
                    out[y] = out.get(y, Fraction(0)) + pb * p
        return out

    def extreme_ratio(self) -> Fraction:
        """Largest ``P[report | x]/P[report | x']`` over all inputs and reports: GRR's.

        A mixture's ratio is at most its rows'.
        """
        return self.grr.extreme_ratio()

    def debias(self) -> tuple[float, float]:
        """``(p, β)``: the probability of reporting the bit string unchanged, and ``β = p - q``."""
        p = Fraction(self.grr.keep_count(), TWO64)  # exact: at small ε, p - q in floats loses its digits
        q = (1 - p) / ((1 << self.k) - 1)
        return float(p), float(p - q)


def _check_sqkr_codes(codes: np.ndarray, spec: Spec) -> np.ndarray:
    """SQKR reports: one uint64 per person, ``seed << k | y`` (every 64-bit word is a report)."""
    codes = check_integer_codes(codes, f"report codes of {spec.mechanism}")
    if codes.dtype.kind == "i" or codes.dtype.itemsize > 8:
        codes = codes.astype(np.uint64)
    return np.array(codes, dtype=np.uint64, order="C", copy=True)


def kashin_coefficients(x: ArrayLike, dim: int, redundancy: int = DEFAULT_REDUNDANCY,
                        level: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Kashin's representation (the kernel's) of each row of ``x`` (norm at most 1): ``(a, clipped)``.

    ``a`` has shape ``(n, D)`` with ``|a| <= K/√D`` (``K = level``, default ``LEVELS[redundancy]``) and ``U a = x``
    unless ``clipped``.

    Examples
    --------
    >>> a, clipped = kashin_coefficients(np.array([[0.6, 0.0, -0.8]]), 3)
    >>> a.shape, bool(clipped[0]), bool(np.abs(a).max() <= LEVELS[4] / np.sqrt(16))
    ((1, 16), False, True)
    """
    L, pos, sign = frame(dim, redundancy)
    K = LEVELS[redundancy] if level is None else float(level)
    values = np.ascontiguousarray(x, dtype=np.float64)
    r = _row_norms(values)
    scale = np.where(r > 1.0, 1.0 / np.where(r > 0, r, 1.0), 1.0)
    out = np.empty((values.shape[0], 1 << L))
    clipped = np.empty(values.shape[0], dtype=np.uint8)
    launch(client_kashin.kashin_probe, values, scale, pos, sign, K / math.sqrt(1 << L), TRUNCATION, ITERATIONS,
           L, out, clipped)
    return out, clipped.astype(bool)


class SQKR(UnitVectorMechanism):
    r"""SQKR (Chen, Kairouz and Özgür): one 64-bit report per person.

    Kashin's representation, ``k`` sampled coefficients quantized to one bit each, ``2**k``-ary randomized response.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20] of each person's report.
    dim : int
        Dimension of the vectors (1 to 65536).
    k : int, optional
        Coefficients per report (1 to ``min(D, 16)``); default ``min(⌈ε⌉, D, 16)``.
    redundancy : {2, 4}, optional
        ``D`` is the smallest power of two ``>= redundancy·dim`` (default 4). More redundancy lowers the level
        ``K`` (2.5, 2.0), hence the error (1, 0.64), for twice the client work.

    Notes
    -----
    Each call of ``privatize`` on one person's vector is ε-LDP; estimators are post-processing. A report is
    ``seed << k | y`` (uint64): ``64 - k`` bits of public seed naming ``k`` coefficients of the ``D = 2**L``
    of the frame (``D >= ρd``), and the randomized response ``y`` of their ``k`` quantized signs. The
    decoder is unbiased and one person's estimate has ``E‖x̂ - x‖² = dK²/(kβ²) + ((k-1)/(kβ) - 1)‖x‖²``
    (:attr:`squared_norm` is ``E‖x̂‖²`` at ``‖x‖ = 1``); see :mod:`ldpnum.vectors.sqkr`.

    References
    ----------
    W.-N. Chen, P. Kairouz, A. Özgür, "Breaking the Communication-Privacy-Accuracy Trilemma", NeurIPS 2020;
    Y. Lyubarskii, R. Vershynin, "Uncertainty Principles and Vector Quantization", IEEE Trans. Inf. Theory
    2010.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> X = np.tile([0.6, 0.0, -0.8], (20_000, 1))
    >>> m = ldp.SQKR(epsilon=4.0, dim=3)
    >>> m.k, m.frame_size, m.report_bits
    (4, 16, 64)
    >>> r = m.privatize(X, rng=1)
    >>> r.codes.shape, r.codes.dtype
    ((20000,), dtype('uint64'))
    >>> est = m.estimate_mean(m.aggregate(r))
    >>> bool(np.all(np.abs(est.mean - X[0]) < 4 * est.standard_errors))
    True
    """

    name = "sqkr"
    _kind = 3

    def __init__(self, epsilon: float, dim: int, *, k: int | None = None,
                 redundancy: int = DEFAULT_REDUNDANCY) -> None:
        self._init_common(epsilon, dim)
        self._redundancy = _check_redundancy(redundancy)
        self._K = LEVELS[self._redundancy]
        L, pos, sign = frame(self._dim, self._redundancy)
        D = 1 << L
        kmax = min(D, MAX_K)
        k = min(math.ceil(self._epsilon), kmax) if k is None else check_scalar(k, "k", int, low=1, high=kmax)
        self._repetitions = 1
        self._pos, self._sign = pos, sign
        self._level = self._K / math.sqrt(D)
        try:
            cells = grr_keep_cells(self._epsilon, 1 << k)
        except ValueError as exc:  # the randomized response's own refusal, in SQKR's terms
            raise ValueError(f"epsilon={self._epsilon!r} is too small for SQKR's randomized response on the 2**{k} "
                             f"strings of {k} sign bit(s): its integer thresholds cannot tell the true string from "
                             f"the others ({exc}); use a larger epsilon") from None
        self._plan = SQKRPlan(dim=self._dim, frame_bits=L, k=k, grr=GRRPlan(1 << k, *cells))
        _, beta = self._plan.debias()
        if not beta > 0:  # p = q: the integer plan cannot favour the true bits at this ε
            raise ValueError(f"epsilon={self._epsilon!r} is too small for SQKR's randomized response on 2**{k} bit "
                             "strings: on the 2**64 grid of its thresholds the true bits are kept no more often than "
                             "any other string, so reports would carry no information; use a larger epsilon")
        self._beta = beta
        self._scale_m = beta
        self._var0 = self._K**2 / (k * beta * beta)  # per coordinate, x = 0
        self._coef = (k - 1) / (k * beta) - 1.0  # per coordinate, times x_m²
        self._squared_norm = self._dim * self._var0 + self._coef + 1.0
        self._t2 = float("nan")

    # -- parameters
    @property
    def k(self) -> int:
        """Coefficients sampled (and bits sent through randomized response) per report."""
        return self._plan.k

    @property
    def frame_size(self) -> int:
        """``D``: coefficients of Kashin's representation (a power of two, at least ``2·dim``)."""
        return 1 << self._plan.frame_bits

    @property
    def redundancy(self) -> int:
        """``ρ``: the frame has ``D >= ρ·dim`` coefficients."""
        return self._redundancy

    @property
    def kashin_level(self) -> float:
        """``K``: coefficients are kept within ``K/√D``."""
        return self._K

    @property
    def level(self) -> float:
        """``c = K/√D``: every coefficient is quantized to ``±c``."""
        return self._level

    @property
    def report_bits(self) -> int:
        """Bits per report: 64 (``64 - k`` of seed, ``k`` of randomized response)."""
        return 64

    @property
    def decoding_scale(self) -> float:
        """``β = p - q``: a reported bit's mean is ``β`` times its quantized sign."""
        return self._beta

    @property
    def n_cells(self) -> int:
        """Counts in the aggregate: reported ``+1`` and ``-1`` bits per frame coefficient, ``2D``."""
        return 2 * self.frame_size

    def _spec_params(self):
        return {"dim": self._dim, "k": self.k, "frame": FRAME, "redundancy": self._redundancy,
                "frame_size": self.frame_size, "level": self._K,
                "iterations": ITERATIONS, "truncation": TRUNCATION, "seed_bits": self._plan.seed_bits}

    @classmethod
    def _from_spec(cls, spec):
        m = cls(epsilon=spec.epsilon, dim=spec.get("dim"), k=spec.get("k"), redundancy=spec.get("redundancy"))
        for key in ("frame", "frame_size", "level", "iterations", "truncation", "seed_bits"):
            if spec.get(key) != m.spec.get(key):
                raise ValueError(f"{spec}: {key} {spec.get(key)!r} is not this version's {m.spec.get(key)!r}")
        return m

    def __repr__(self) -> str:
        extra = "" if self._redundancy == DEFAULT_REDUNDANCY else f", redundancy={self._redundancy}"
        return f"SQKR(epsilon={self._epsilon!r}, dim={self._dim}, k={self.k}{extra})"

    # -- client side
    def privatize(self, x: ArrayLike, *, rng: SeedLike = None, nan_policy: str = "raise",
                  fill_value: Any = None, clip: bool = False, out_of_range: str | None = None) -> Reports:
        """Randomize each person's vector; return their :class:`~ldpnum.Reports`, one uint64 per person.

        Parameters
        ----------
        x : array_like of real numbers, shape (n, dim)
            One vector per person, Euclidean norm at most 1.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): secure randomness. Anything else: a reproducible simulation.
        nan_policy : {"raise", "impute"}, optional
            Non-finite values raise (default), or are replaced by ``fill_value``.
        fill_value : float or sequence of float, optional
            Public replacement (one per coordinate, or one for all) with ``nan_policy="impute"``.
        clip : bool, optional
            Scale rows of norm above 1 to norm 1 (with a ``ClippingWarning``) instead of raising.
        out_of_range : {None, "clip", "raise"}, optional
            As for :meth:`ldpnum.PrivUnit.privatize`: ``"clip"`` is ``clip=True``, ``"raise"`` ``clip=False``.

        Warns
        -----
        ldpnum.ClippingWarning
            When some row's Kashin coefficient has to be clipped to the level (its estimate is then biased),
            with the number of such rows. The check runs on the values before any random word is drawn, and
            the warning gives the count only, no row position: it is a function of the people's values (which
            rows have a hard representation), so like any client-side message it must stay with whoever holds
            the values and never travel with the reports (``count`` is set, ``first_index`` is -1).

        Notes
        -----
        Each call on one person's vector is ε-LDP; estimators are post-processing. The whole batch is
        validated before the first word is drawn.
        """
        values = self.prepare_values(x, nan_policy=nan_policy, fill_value=fill_value, clip=clip,
                                     out_of_range=out_of_range)
        count = self.kashin_clipped(values)  # before drawing: nothing is randomized when it raises
        if count:
            warnings.warn(ClippingWarning(
                f"SQKR: {count} row(s) keep a Kashin coefficient above the level K/sqrt(D) after {ITERATIONS} "
                "iterations; it is clipped to the level, so those rows' estimates are biased", count=count),
                stacklevel=2)
        return self._randomize(values, rng)

    def kashin_clipped(self, values: ArrayLike) -> int:
        """Number of rows of validated ``values`` whose Kashin representation needs a coefficient clipped to the level.

        ``values`` as :meth:`prepare_values` returns them; the kernel's own flag; nothing is drawn.
        """
        v = np.ascontiguousarray(values, dtype=np.float64)
        if not v.shape[0]:
            return 0
        r = _row_norms(v)
        scale = np.where(r > 1.0, 1.0 / np.where(r > 0, r, 1.0), 1.0)
        flags = np.zeros(v.shape[0], dtype=np.uint8)
        launch(client_kashin.kashin_clip_flags, v, scale, self._pos, self._sign, self._level, TRUNCATION, ITERATIONS,
               self._plan.frame_bits, flags)
        return int(flags.sum())

    def _run_kernel(self, values, words, out, clipped=None):
        if clipped is None:
            clipped = np.zeros(values.shape[0], dtype=np.uint8)
        r = _row_norms(values)
        scale = np.where(r > 1.0, 1.0 / np.where(r > 0, r, 1.0), 1.0)
        p = self._plan
        launch(client_kashin.sqkr_kernel, values, scale, self._pos, self._sign, self._level, TRUNCATION, ITERATIONS,
               p.k, p.frame_bits, p.grr.a_keep, p.grr.shift, words, out, clipped)

    def _allocate_reports(self, n):
        return np.empty(n, dtype=np.uint64)

    # -- reports in a table column: the report itself is the 64-bit code
    def check_column_codes(self, where: str = "a column") -> None:
        """A report is one 64-bit code: it always fits a column."""

    def column_codes(self, reports: Reports) -> np.ndarray:
        """Each person's report (uint64) as its column code."""
        return Mechanism.column_codes(self, reports)

    def reports_from_column(self, codes: ArrayLike) -> Reports:
        """The Reports behind column codes (every non-negative 64-bit integer is a report)."""
        return Reports(codes, self.spec)

    # -- server side
    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        k = int(spec.get("k"))
        if n_reports is None:
            if total:
                raise ValueError(f"aggregate of {spec}: n_reports is required (each report adds {k} counts)")
            return 0
        if total != k * n_reports:
            raise ValueError(f"aggregate of {spec}: the counts add to {total}, not {k} per report "
                             f"({k * n_reports} for {n_reports} report(s))")
        return n_reports

    def aggregate(self, reports: Reports) -> Aggregate:
        """Count, per frame coefficient, the reported ``+1`` and ``-1`` bits, mergeable with ``+``.

        ``2D`` counts (``+1`` first) and the number of people. Each report adds exactly ``k``.
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        codes = reports.codes
        k, L = self.k, self._plan.frame_bits
        D = 1 << L
        total = np.zeros(2 * D, dtype=np.int64)
        shifts = np.arange(k, dtype=np.uint64)
        for start in range(0, codes.shape[0], DECODE_ROWS):
            block = codes[start:start + DECODE_ROWS]
            j = coordinates(block >> np.uint64(k), k, L)
            bits = ((block[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.int64)
            total += np.bincount((j + D * (1 - bits)).ravel(), minlength=2 * D)
        return Aggregate(total, self.spec, codes.shape[0])

    def _decode(self, counts, n):
        """``x̂``: the unbiased mean from the counts of ``n`` reports."""
        D = self.frame_size
        diff = counts[:D].astype(np.float64) - counts[D:].astype(np.float64)
        return self._sign * fwht(diff)[self._pos] * (self._K / (self.k * self._beta * n))

    def variance(self, x: ArrayLike) -> FloatArray:
        """Variance of each coordinate of one person's estimate, for each row of ``x`` (``(n, dim)``).

        ``K²/(kβ²) + ((k - 1)/(kβ) - 1) x_m²`` (rows beyond norm 1 as clipped).
        """
        values = self._rows(x)
        r = _row_norms(values)
        v = values * np.where(r > 1.0, 1.0 / np.where(r > 0, r, 1.0), 1.0)[:, None]
        return self._var0 + self._coef * v * v

    def expected_squared_error(self, x: ArrayLike) -> float:
        """``E‖estimate - mean(x)‖²`` from one report per row of ``x`` (closed form).

        ``Σ_i (dK²/(kβ²) + ((k - 1)/(kβ) - 1)‖x_i‖²)/n²``.
        """
        values = self._rows(x)
        r = np.minimum(_row_norms(values), 1.0)
        n = values.shape[0]
        return float(np.sum(self._dim * self._var0 + self._coef * r * r) / (n * n))

    def estimate_mean(self, data: Reports | Aggregate, *, names: Any = None) -> VectorMeanEstimate:
        """Unbiased estimate of the mean vector behind the reports.

        The estimate is ``sign[m]·(H (plus - minus))[pos[m]]·K/(kβn)`` (see the module notes). Standard errors
        come from the closed form, conservatively: ``sqrt((K²/(kβ²) + max(0, (k-1)/(kβ) - 1))/n)`` for every
        coordinate (the data's ``x_m²``, at most 1, enters with the coefficient ``(k-1)/(kβ) - 1``, which is
        usually slightly negative). ``expected_squared_error`` is ``squared_norm/n``: the exact error
        ``(dK²/(kβ²) + ((k-1)/(kβ) - 1)·mean‖x_i‖²)/n`` at unit inputs, plus ``1/n`` (the same convention as
        the other unit-vector mechanisms, ``E‖decoded report‖²/n``).

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate.
        names : sequence of str, optional
            Coordinate names for the result.
        """
        names = check_names(names, self._dim)
        agg = self._as_aggregate(data)
        n = agg.n_reports
        if n == 0:
            raise ValueError("estimate_mean: no reports")
        mean = self._decode(agg.counts, n)
        var = self._var0 + max(0.0, self._coef)
        return VectorMeanEstimate(mean=mean, standard_errors=np.full(self._dim, math.sqrt(var / n)),
                                  expected_squared_error=self._squared_norm / n, n_reports=n,
                                  epsilon=self._epsilon, spec=agg.spec, dim=self._dim, names=names)


register_code_check(SQKR.name, _check_sqkr_codes)
