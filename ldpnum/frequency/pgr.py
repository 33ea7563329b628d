"""Projective geometry response (Feldman, Nelson, Nguyen and Talwar): subset selection's error in ⌈log₂ k⌉ bits.

**Construction.** Over the prime field F_q, the points of the projective space PG(t-1, q) are the nonzero
vectors of F_q^t up to a scalar, ``b = (q^t - 1)/(q - 1)`` of them; each is written in canonical form (first
nonzero coordinate 1) and numbered (:class:`ProjectiveSpace`). Category ``v`` is point ``v`` (``t`` the
smallest ``≥ 2`` with ``b ≥ k``; points ``≥ k`` are never anyone's value). Its set is the hyperplane
``S_v = {u : ⟨u, v⟩ = 0}``, ``c = (q^{t-1} - 1)/(q - 1)`` points; two hyperplanes meet in
``c' = (q^{t-2} - 1)/(q - 1)`` points. A person with category ``v`` reports one point ``u``:

    P[u | v] ∝ e^ε   if u ∈ S_v,        ∝ 1 otherwise,

so PGR is subset selection whose subsets (of size ``c ≈ b/q``) are hyperplanes, and with ``q ≈ e^ε + 1`` it
has subset selection's variance (the two agree within 5% in the tests) with a report of ``⌈log₂ b⌉`` bits.

**Hybrid.** With a small prime ``q`` (e.g. 3) the domain is ``h = max(2, ⌈(e^ε + 1)/q⌉)`` blocks of ``b``
points (``t`` the smallest with ``h·b ≥ k``); category ``v`` is point ``v mod b`` of block ``v // b``, and
the report is a code ``block·b + point`` of ``K = h·b``, weighted ``e^ε`` on the person's own hyperplane in
their own block and 1 elsewhere (plain PGR is ``h = 1``). The decoder then works on ``h`` small geometries.

**Integer plan (design rule R1).** Word 0 decides "in the set" with the integer threshold ``t_in`` over
2**53; word 1 picks a uniform cell of the set (``c`` cells) or of its complement (``K - c`` cells) as
``floor(w·m/2**64)``, cell ``i`` getting exactly ``C_m(i) = ⌈(i+1)2**64/m⌉ - ⌈i 2**64/m⌉`` of the 2**64
words; cells map to points by index arithmetic (:mod:`ldpnum._kernels.client_pgr`: bijections, so every
output's probability is exact, :meth:`PGRPlan.exact_probabilities`). ``t_in`` is the largest integer with
``t_in·⌈2**64/c⌉ ≤ E·(2**53 - t_in)·⌊2**64/(K - c)⌋`` (``E`` the rigorous lower bound of ``e^ε``), so the
largest ratio, a set cell against a complement cell, is at most ``E``; :meth:`PGRPlan.extreme_ratio_bound`
bounds every ratio (and the unknown value's uniform row) for any size, and the tests enumerate small ones.

**Estimator.** With ``I_v`` the reports in ``v``'s block on ``v``'s hyperplane and ``J_B`` the reports in
block ``B``: ``E[J_B] = N_B β + (n - N_B) γ`` and ``E[I_v] = n_v P + (N_B - n_v) a + (n - N_B) r`` with
``P = t_in/2**53``, ``a = P c'/c + (1 - P)(c - c')/(K - c)`` (another point of the block), ``r = (1 - P)c/(K - c)``
(another block), ``β = P + (1 - P)q^{t-1}/(K - c)``, ``γ = (1 - P) b/(K - c)``; solving gives the unbiased
``n̂_v`` and its exact variance (:meth:`PGR.variance`). For ``h = 1``, ``J = n`` and this is the pure-protocol
estimator with ``p* = P``, ``q* = a``. The realized cell probabilities differ from ``1/m`` by less than
``m/2**64`` relatively (below 2**-38), which is the only gap between these ideal supports and the plan.

**Decoding** (:mod:`ldpnum._kernels.server_pgr`). ``I_v`` for every ``v`` is ``Σ_{u ⊥ v} hist[u]`` over
the code histogram: each distinct report adds its count along its own hyperplane (the incidence is
symmetric), ``c`` additions per distinct code with the innermost coordinate a run of stride 1 or ``q``, or
the dynamic program over coordinates of Feldman et al. (``O(b·q·t)`` per block) when the histogram is dense;
``candidates=`` sums the histogram over each candidate's hyperplane (``c`` reads per candidate).

References
----------
V. Feldman, J. Nelson, H. Nguyen, K. Talwar, "Private Frequency Estimation via Projective Geometry", ICML 2022.
S. Wang et al., "Mutual Information Optimally Local Private Discrete Distribution Estimation", 2016, and
M. Ye, A. Barg, IEEE Trans. Inf. Theory 2018 (subset selection, whose error PGR matches).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._kernels import client_pgr as kernels
from .._kernels._jit import launch
from .._results import FrequencyEstimate
from .._validation import check_choice, check_scalar
from ..estimation.frequency import estimate_frequencies as pure_estimate
from ..estimation.likelihood import check_method
from ..estimation.postprocess import POSTPROCESS, postprocess_frequencies
from ..plans import TWO53, TWO64, exp_lower, is_prime, uniform_count64, uniform_extremes64
from ._base import FrequencyOracle

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ..aggregate import Aggregate
    from ..reports import Reports

__all__ = ["PGR", "PGRPlan", "ProjectiveSpace", "choose_q", "dp_operations", "hyperplane_dp", "hyperplane_sums"]

#: Largest field (the kernels hold a table of its inverses).
MAX_Q = 1 << 20
#: Largest number of report codes ``K = h·b`` (the decoder holds a few arrays of ``K`` int64).
MAX_CODES = 1 << 26
VARIANTS = ("pgr", "hybrid")


def _inverse_table(q):
    inv = np.zeros(q, dtype=np.int64)
    if q == 2:
        inv[1] = 1
        return inv
    a = np.arange(1, q, dtype=np.int64)
    # Fermat: a^(q-2) by repeated squaring on int64 (q < 2**20: products below 2**40)
    result = np.ones(q - 1, dtype=np.int64)
    base, e = a.copy(), q - 2
    while e:
        if e & 1:
            result = result * base % q
        base = base * base % q
        e >>= 1
    inv[1:] = result
    return inv


class ProjectiveSpace:
    """The points of PG(t-1, q) in canonical form and their numbering.

    Point index ``(q^s - 1)/(q - 1) + R`` is the vector whose leading 1 is followed by ``s`` coordinates
    reading ``R`` in base ``q`` (most significant first): index 0 is ``(0, ..., 0, 1)``.
    """

    def __init__(self, q: int, t: int) -> None:
        self.q, self.t = q, t
        self.offs = np.array([(q**s - 1) // (q - 1) for s in range(t + 1)], dtype=np.int64)
        self.pows = np.array([q**s for s in range(t + 1)], dtype=np.int64)
        self.inv = _inverse_table(q)

    @property
    def n_points(self) -> int:
        """``b = (q^t - 1)/(q - 1)``."""
        return int(self.offs[self.t])

    @property
    def hyperplane_size(self) -> int:
        """``c = (q^{t-1} - 1)/(q - 1)``: points of a hyperplane."""
        return int(self.offs[self.t - 1])

    @property
    def intersection_size(self) -> int:
        """``c' = (q^{t-2} - 1)/(q - 1)``: points common to two distinct hyperplanes."""
        return int(self.offs[self.t - 2])

    def point(self, index: int, length: int | None = None) -> list[int]:
        """The canonical vector with this index (of ``length`` coordinates, default ``t``)."""
        length = self.t if length is None else length
        s = max(r for r in range(length) if self.offs[r] <= index)
        x = self.q**s + index - int(self.offs[s])
        digits = []
        for _ in range(length):
            digits.append(x % self.q)
            x //= self.q
        return digits[::-1]

    def index(self, x: list[int]) -> int:
        """Index of the point of the nonzero vector ``x`` (scaled to canonical form first)."""
        q = self.q
        lead = next(r for r, c in enumerate(x) if c % q)
        scale = pow(x[lead], q - 2, q) if q > 2 else 1
        value = 0
        for c in x:
            value = value * q + c * scale % q
        s = len(x) - 1 - lead
        return value - q**s + int(self.offs[s])

    def dot(self, u: list[int], v: list[int]) -> int:
        """``⟨u, v⟩`` in F_q."""
        return sum(a * b for a, b in zip(u, v)) % self.q


class PGRPlan:
    """Integer plan of projective geometry response: ``h`` blocks of PG(t-1, q), ``t_in`` over 2**53.

    2 words per record (the coin, the cell).
    """

    words_per_record = 2

    def __init__(self, q: int, t: int, h: int, k: int, t_in: int) -> None:
        self.q, self.t, self.h, self.k, self.t_in = q, t, h, k, t_in
        self.space = ProjectiveSpace(q, t)
        self.b = self.space.n_points
        self.c = self.space.hyperplane_size
        self.c2 = self.space.intersection_size

    @property
    def n_codes(self) -> int:
        """``K = h·b``: reports are codes ``0..K-1``."""
        return self.h * self.b

    @property
    def n_outside(self) -> int:
        """``K - c``: codes off the person's own hyperplane (other blocks included)."""
        return self.n_codes - self.c

    def __eq__(self, other):
        return isinstance(other, PGRPlan) and (self.q, self.t, self.h, self.k, self.t_in) == (
            other.q, other.t, other.h, other.k, other.t_in)

    def __repr__(self):
        return f"PGRPlan(q={self.q}, t={self.t}, h={self.h}, k={self.k}, t_in={self.t_in})"

    # -- the kernel's maps, in Python (exact probabilities, tests) ----------------------------------
    def _lift(self, y, v, z):
        sp, q = self.space, self.q
        j = max(r for r, c in enumerate(v) if c)
        x = y[:j] + [0] + y[j:]
        x[j] = (z - sum(x[r] * v[r] for r in range(j))) * pow(v[j], q - 2, q) % q if q > 2 else \
            (z - sum(x[r] * v[r] for r in range(j))) % 2
        return sp.index(x)

    def inside_code(self, v: int, i: int) -> int:
        """The code of set cell ``i`` (of ``c``) for category ``v``."""
        blk, vd = divmod(v, self.b)
        y = self.space.point(i, self.t - 1)
        return blk * self.b + self._lift(y, self.space.point(vd), 0)

    def outside_code(self, v: int, o: int) -> int:
        """The code of complement cell ``o`` (of ``K - c``) for category ``v``."""
        blk, vd = divmod(v, self.b)
        own = self.q ** (self.t - 1)
        if o < own:
            y = [(o // self.q ** (self.t - 2 - r)) % self.q for r in range(self.t - 1)]
            return blk * self.b + self._lift(y, self.space.point(vd), 1)
        other, point = divmod(o - own, self.b)
        return (other + (other >= blk)) * self.b + point

    def exact_probabilities(self, v: int) -> dict[int, Fraction]:
        """``{code: Fraction}`` over all ``K`` codes for category ``v`` (``-1``: unknown, uniform); small plans."""
        K = self.n_codes
        if K > 1 << 16:
            raise ValueError("exact enumeration is for at most 2**16 codes")
        if v < 0:
            return {u: Fraction(uniform_count64(u, K), TWO64) for u in range(K)}
        p_in = Fraction(self.t_in, TWO53)
        out = dict.fromkeys(range(K), Fraction(0))
        for i in range(self.c):
            out[self.inside_code(v, i)] += p_in * Fraction(uniform_count64(i, self.c), TWO64)
        m = self.n_outside
        for o in range(m):
            out[self.outside_code(v, o)] += (1 - p_in) * Fraction(uniform_count64(o, m), TWO64)
        return out

    def supports(self, u: int, v: int) -> bool:
        """Whether code ``u`` lies on category ``v``'s hyperplane in ``v``'s block."""
        if u // self.b != v // self.b:
            return False
        sp = self.space
        return sp.dot(sp.point(u % self.b), sp.point(v % self.b)) == 0

    def extreme_ratio_bound(self) -> Fraction:
        """A rigorous upper bound of the largest likelihood ratio between any two inputs (unknown included).

        Outputs have probability ``P·C_c(i)/2**64`` (on the set), ``(1 - P)·C_{K-c}(o)/2**64`` (off it) or
        ``C_K(u)/2**64`` (unknown value); the bound is the largest over the extremes of each kind.
        """
        p = Fraction(self.t_in, TWO53)
        kinds = [[p * c for c in uniform_extremes64(self.c)],
                 [(1 - p) * c for c in uniform_extremes64(self.n_outside)],
                 [Fraction(c) for c in uniform_extremes64(self.n_codes)]]
        values = [x for kind in kinds for x in kind]
        return max(values) / min(values)

    # -- the estimator's supports ------------------------------------------------------------------
    def support_terms(self) -> tuple[float, float, float, float, float]:
        """``(P, a, r, β, γ)``: the probabilities of the estimator's two events (module docstring).

        A report on ``v``'s hyperplane from ``v`` / another point of its block / another block; a report in a
        block from that block / from another block.
        """
        P = self.t_in / TWO53
        m = self.n_outside
        own = self.q ** (self.t - 1)
        a = P * self.c2 / self.c + (1 - P) * (self.c - self.c2) / m
        if self.h == 1:
            return P, a, 0.0, 1.0, 0.0
        return P, a, (1 - P) * self.c / m, P + (1 - P) * own / m, (1 - P) * self.b / m


def _geometry(q, h, k):
    """Smallest ``t >= 2`` with ``h·(q^t - 1)/(q - 1) >= k``."""
    t = 2
    while h * ((q**t - 1) // (q - 1)) < k:
        t += 1
    return t


def _t_in(epsilon, c, n_outside):
    """Largest ``t`` with ``t·⌈2**64/c⌉ ≤ E·(2**53 - t)·⌊2**64/(K - c)⌋``."""
    e = exp_lower(epsilon)
    r = e * Fraction(uniform_extremes64(n_outside)[0], uniform_extremes64(c)[1])
    return math.floor(TWO53 * r / (1 + r))


def _ideal_variance(epsilon, q, t, h):
    """Per-report variance at frequency 0 of the ideal (real-valued) plan."""
    e = math.exp(epsilon)
    sp_c = (q ** (t - 1) - 1) // (q - 1)
    c2 = (q ** (t - 2) - 1) // (q - 1)
    K = h * (q**t - 1) // (q - 1)
    P = e * sp_c / (e * sp_c + K - sp_c)
    a = P * c2 / sp_c + (1 - P) * (sp_c - c2) / (K - sp_c)
    return a * (1 - a) / (P - a) ** 2


def _primes_near(x):
    below = next((n for n in range(math.floor(x), 1, -1) if is_prime(n)), None)
    above = math.ceil(x)
    while not is_prime(above):
        above += 1
    return [p for p in {below, above} if p is not None]


def choose_q(epsilon: float, k: int) -> int:
    """The prime ``q`` of plain PGR for ``k`` categories at ``epsilon``.

    Of the primes just below and above ``e^ε + 1``, the one whose plan has the smaller per-report variance
    (ties: the smaller ``q``), among those that fit the limits.
    """
    fits = []
    for q in _primes_near(math.exp(epsilon) + 1):
        t = _geometry(q, 1, k)
        if q <= MAX_Q and (q**t - 1) // (q - 1) <= MAX_CODES:
            fits.append((_ideal_variance(epsilon, q, t, 1), q))
    if not fits:
        raise ValueError(f"epsilon={epsilon!r} has no prime q near e^epsilon + 1 = {math.exp(epsilon) + 1:.4g} "
                         f"that fits PGR's limits (q <= {MAX_Q}, at most {MAX_CODES} codes); at this epsilon GRR "
                         "is the better oracle")
    return min(fits)[1]


def dp_operations(q: int, t: int) -> int:
    """Inner additions of the dynamic program over one geometry: ``Σ_l A_l B_l q·(digits)``, about ``t·q^t``."""
    off = [(q**s - 1) // (q - 1) for s in range(t + 1)]
    return sum((off[t - l] + 1) * (off[l] * q + 2) * q for l in range(1, t - 1)) + 2 * off[t] + off[t - 1] * q


#: Measured cost of one scattered addition relative to one addition of the dynamic program: about 17 ns
#: against 1.7 ns of CPU time at k = 3.3 million, q = 149 (scattered adds into millions of codes miss the
#: cache; the program streams contiguous rows).
SCATTER_COST = 10


def hyperplane_sums(histogram: NDArray[np.int64], plan: PGRPlan,
                    candidates: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
    """``I_v = Σ_{u ⊥ v, same block} histogram[u]`` for every category ``v`` (or for ``candidates``).

    Every category: the dynamic program (``O(b·q·t)`` per block, the blocks as lanes of one program), or the
    scattered walks along the hyperplanes of the distinct reports when they are so few that ``c`` additions
    each cost less (:data:`SCATTER_COST`). Candidates: a walk along each candidate's hyperplane.
    """
    from .._kernels import server_pgr

    hist = np.ascontiguousarray(histogram, dtype=np.int64)
    sp = plan.space
    if candidates is not None:
        out = np.zeros(candidates.shape[0], dtype=np.int64)
        server_pgr.hyperplane_gather(hist, np.ascontiguousarray(candidates, dtype=np.int64), out, plan.q, plan.t,
                                     sp.offs, sp.pows, sp.inv)
        return out
    b = plan.b
    lanes = -(-plan.k // b)  # the blocks that hold categories
    hist = hist[:lanes * b]
    if np.count_nonzero(hist) * plan.c * SCATTER_COST < dp_operations(plan.q, plan.t) * lanes:
        out = np.zeros(lanes * b, dtype=np.int64)
        server_pgr.hyperplane_scatter(hist, out, plan.q, plan.t, lanes, sp.offs, sp.pows, sp.inv)
        return out[:plan.k]
    sums = hyperplane_dp(np.ascontiguousarray(hist.reshape(lanes, b).T), plan)
    return np.ascontiguousarray(sums.T).reshape(-1)[:plan.k]


def hyperplane_dp(histograms: NDArray[np.int64], plan: PGRPlan, n_workers: int | None = None) -> NDArray[np.int64]:
    """``out[v, B] = Σ_{u ⊥ v} histograms[u, B]`` over one geometry by the dynamic program over coordinates.

    ``histograms`` has one column per block (``b × H``, C-contiguous int64): the blocks of the hybrid share the
    geometry and run as lanes of one program. Level ``l`` (from ``t - 1`` down to 0) sums the histogram over
    the reports with a given prefix of ``l`` coordinates whose other coordinates have a given inner product
    with a given suffix of a category (:mod:`ldpnum._kernels.server_pgr`); each level's suffixes are split
    between ``n_workers`` threads (default: the JIT policy's thread count), each writing its own rows, so the
    result does not depend on it.
    """
    from concurrent.futures import ThreadPoolExecutor

    from .._counting import n_threads
    from .._kernels import server_pgr

    q, t, sp = plan.q, plan.t, plan.space
    lanes = histograms.shape[1]
    size = server_pgr.dp_size(q, t, lanes, sp.offs)
    prev, cur = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
    server_pgr.dp_start(histograms, prev, q, t, sp.offs)
    workers = max(1, n_threads() if n_workers is None else n_workers)
    with ThreadPoolExecutor(workers) as pool:
        for level in range(t - 2, 0, -1):
            n_suffixes = int(sp.offs[t - level]) + 1
            cuts = [n_suffixes * w // workers for w in range(workers + 1)]
            jobs = [pool.submit(server_pgr.dp_range, prev, cur, q, t, level, lanes, sp.offs, sp.pows, sp.inv, lo, hi)
                    for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]
            for job in jobs:
                job.result()
            prev, cur = cur, prev
    out = np.empty((plan.b, lanes), dtype=np.int64)
    server_pgr.dp_finish(prev, out, q, t, sp.offs, sp.pows, sp.inv)
    return out


class PGR(FrequencyOracle):
    """Projective geometry response over ``k`` categories: each person reports one point of PG(t-1, q).

    Parameters
    ----------
    epsilon : float
        Privacy parameter in (0, 20].
    k : int
        Number of categories (codes ``0..k-1``), 2 ≤ k ≤ 2**24.
    variant : {"pgr", "hybrid"}, optional
        ``"pgr"`` (default): one geometry with ``q ≈ e^ε + 1``. ``"hybrid"``: ``h = max(2, ⌈(e^ε + 1)/q⌉)``
        blocks of a geometry over a small field, cheaper to decode.
    q : int, optional
        The prime field size. Default for ``"pgr"``: :func:`choose_q` (the prime next to ``e^ε + 1`` with the
        smaller variance; 149 at ε = 5); for ``"hybrid"``: 3 (the paper's choice). At most 2**20; prime powers
        are not supported.

    Notes
    -----
    Each call of ``privatize`` on one person's value is ε-LDP; estimators are post-processing. A person with
    category ``v`` reports a point on ``v``'s hyperplane (``c = (q^{t-1} - 1)/(q - 1)`` of the ``K`` codes) with
    probability ``P = t_in/2**53 ≈ e^ε c/(e^ε c + K - c)``, else a uniform code off it; 2 random words per
    person, reports one code of ``⌈log₂ K⌉`` bits (the smallest unsigned dtype; see :mod:`ldpnum.frequency.pgr`).
    Per-report variance at frequency 0: ``a(1 - a)/(P - a)²`` (plain PGR), subset selection's with subsets
    of size ``c``: about
    ``4e^ε/(e^ε - 1)²`` for large ``k``. ``estimate_frequencies(agg, candidates=...)`` estimates only the
    listed categories. At least 2 and at most ``2**26`` codes; an ε whose field would not fit is refused.

    References
    ----------
    V. Feldman, J. Nelson, H. Nguyen, K. Talwar, "Private Frequency Estimation via Projective Geometry",
    ICML 2022.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> m = ldp.PGR(epsilon=2.0, k=1000)
    >>> m.q, m.t, m.n_cells
    (7, 5, 2801)
    >>> x = np.random.default_rng(0).integers(0, 10, 20_000)
    >>> est = m.estimate_frequencies(m.aggregate(m.privatize(x, rng=1)), candidates=[0, 500])
    >>> bool(abs(est.frequencies[0] - np.mean(x == 0)) < 4 * est.standard_errors[0])
    True
    """

    name = "pgr"
    aliases = ("projective_geometry_response",)

    def __init__(self, epsilon: float, k: int, *, variant: str = "pgr", q: int | None = None) -> None:
        super().__init__(epsilon, k)
        check_choice(variant, "variant", VARIANTS)
        self._variant = variant
        if q is None:
            q = choose_q(self._epsilon, self._k) if variant == "pgr" else 3
        q = check_scalar(q, "q", int, low=2, high=MAX_Q)
        if not is_prime(q):
            raise ValueError(f"q must be a prime (prime powers are not supported); got q={q}")
        h = 1 if variant == "pgr" else max(2, math.ceil((math.exp(self._epsilon) + 1) / q))
        t = _geometry(q, h, self._k)
        n_codes = h * (q**t - 1) // (q - 1)
        if n_codes > MAX_CODES:
            raise ValueError(f"PGR with q={q} over k={self._k} categories at epsilon={epsilon!r} needs {n_codes} "
                             f"codes; at most {MAX_CODES} are supported")
        c = (q ** (t - 1) - 1) // (q - 1)
        self._q = q
        self._plan = PGRPlan(q, t, h, self._k, _t_in(self._epsilon, c, n_codes - c))
        if self._plan.extreme_ratio_bound() > exp_lower(self._epsilon):  # pragma: no cover - defensive
            raise ValueError(f"epsilon={epsilon!r} cannot be planned for PGR with q={q}")

    def _spec_params(self):
        return {"k": self._k, "variant": self._variant, "q": self._q}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.epsilon, spec.get("k"), variant=spec.get("variant"), q=spec.get("q"))

    def __repr__(self):
        return f"PGR(epsilon={self._epsilon!r}, k={self._k}, variant={self._variant!r}, q={self._q})"

    @property
    def variant(self) -> str:
        """``"pgr"`` or ``"hybrid"``."""
        return self._variant

    @property
    def q(self) -> int:
        """The prime field size."""
        return self._q

    @property
    def t(self) -> int:
        """The dimension: points are those of PG(t-1, q)."""
        return self._plan.t

    @property
    def blocks(self) -> int:
        """``h``: blocks of ``(q^t - 1)/(q - 1)`` points (1 for plain PGR)."""
        return self._plan.h

    @property
    def n_cells(self) -> int:
        """``K = h·(q^t - 1)/(q - 1)``: reports are codes ``0..K-1``."""
        return self._plan.n_codes

    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: a report on the person's own hyperplane / on another category's of the same block."""
        P, a, *_ = self._plan.support_terms()
        return P, a

    def _run_kernel(self, values, words, out):
        plan = self._plan
        sp = plan.space
        launch(kernels.pgr_kernel, values, plan.q, plan.t, plan.h, plan.b, plan.t_in, sp.offs, sp.pows, sp.inv,
               words, out)

    # -- estimation ---------------------------------------------------------------------------------
    def _coefficients(self):
        """``(A, C)``: ``n̂_v = A·I_v + C·J_B + const·n``."""
        P, a, r, beta, gamma = self._plan.support_terms()
        A = 1.0 / (P - a)
        C = 0.0 if self._plan.h == 1 else -(a - r) / ((beta - gamma) * (P - a))
        return A, C

    def variance(self, frequency: ArrayLike = 0.0, block_frequency: ArrayLike | None = None) -> Any:
        """Per-report variance of the frequency estimate of a category of frequency ``frequency``.

        Divide by ``n`` for ``n`` reports. ``block_frequency`` is the frequency of the category's whole block:
        for plain PGR always 1 (one block), for the hybrid default ``frequency`` (nobody else in the block);
        plain PGR's is the pure-protocol
        ``[q*(1 - q*) + f (p* - q*)(1 - p* - q*)]/(p* - q*)²``.
        """
        f = np.asarray(frequency, dtype=np.float64)
        if block_frequency is None:
            fb = np.ones_like(f) if self._plan.h == 1 else f
        else:
            fb = np.asarray(block_frequency, dtype=np.float64)
        if not (np.all((f >= 0) & (f <= 1)) and np.all((fb >= f) & (fb <= 1))):
            raise ValueError("frequency must lie in [0, 1] and block_frequency in [frequency, 1]")
        P, a, r, beta, gamma = self._plan.support_terms()
        A, C = self._coefficients()

        def one(p1, p2):  # Var(A·I1 + C·I2) of one report, I1 ⊂ I2
            return (A * A + 2 * A * C) * p1 + C * C * p2 - (A * p1 + C * p2) ** 2

        out = f * one(P, beta) + (fb - f) * one(a, beta) + (1 - fb) * one(r, gamma)
        return float(out) if out.ndim == 0 else out

    def estimate_frequencies(self, data: Reports | Aggregate, *, candidates: ArrayLike | None = None,
                             postprocess: str = "none", method: str = "unbiased") -> FrequencyEstimate:
        """Unbiased estimate of how many people hold each category (or each of ``candidates``).

        Parameters
        ----------
        data : Reports or Aggregate
            Reports of this mechanism or their (merged) aggregate.
        candidates : array_like of int, optional
            Categories to estimate (codes in ``[0, k)``); entry ``i`` of the result is ``candidates[i]``.
            Decodes only their hyperplanes: ``c`` reads of the histogram per candidate.
        postprocess : {"none", "norm-sub", "simplex", "clip"}, optional
            As for every frequency oracle; with ``candidates`` only ``"none"`` and ``"clip"`` (the others need
            all ``k`` categories).
        method : {"unbiased"}, optional
            The only estimator offered (``"mle"`` is refused with a clear message, as by every oracle whose
            likelihood is not implemented).

        Returns
        -------
        FrequencyEstimate
        """
        check_method(method, self.frequency_methods, mechanism=self.name)
        agg = self._as_aggregate(data)
        check_choice(postprocess, "postprocess", POSTPROCESS)
        cand = None
        if candidates is not None:
            cand = self.prepare_values(candidates, name="candidates")
            if postprocess not in ("none", "clip"):
                raise ValueError(f"postprocess={postprocess!r} needs every category; with candidates use 'none' "
                                 "or 'clip'")
        n = agg.n_reports
        if n == 0:
            raise ValueError("estimate_frequencies: no reports")
        plan = self._plan
        support = hyperplane_sums(agg.counts, plan, cand).astype(np.float64)
        P, a, r, beta, gamma = plan.support_terms()
        if plan.h == 1 and cand is None:
            return self._labelled(pure_estimate(support, n, P, a, postprocess=postprocess, epsilon=self._epsilon,
                                                spec=agg.spec))
        cats = np.arange(self._k) if cand is None else cand
        blocks = agg.counts.reshape(plan.h, plan.b).sum(axis=1).astype(np.float64)[cats // plan.b]
        n_block = (blocks - n * gamma) / (beta - gamma) if plan.h > 1 else np.full(cats.shape, float(n))
        freq = (support - n_block * (a - r) - n * r) / (P - a) / n
        fb = np.clip(n_block / n, 0.0, 1.0)
        fv = np.minimum(np.clip(freq, 0.0, 1.0), fb)
        se = np.sqrt(self.variance(fv, fb) / n)
        freq_pp = postprocess_frequencies(freq, postprocess)
        return self._labelled(FrequencyEstimate(counts=freq_pp * n, frequencies=freq_pp,
                                                standard_errors=np.atleast_1d(se), n_reports=n, epsilon=self._epsilon,
                                                spec=agg.spec, postprocess=postprocess, categories=cand))
