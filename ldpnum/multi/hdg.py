r"""Hybrid-dimensional grids (HDG): 1-D and 2-D range queries over several numerical attributes at once.

Yang et al.'s answer to multi-dimensional range queries under LDP. With ``d`` public attributes (columns),
HDG builds ``d`` **1-D grids** of ``g1`` equal cells (one per attribute) and ``d(d-1)/2`` **2-D grids** of
``g2 × g2`` equal cells (one per pair of attributes): ``m = d + d(d-1)/2`` grids in all. Each person is
assigned one grid, uniformly at random and independently of their values, and reports the cell of that
grid holding their row through a categorical frequency oracle with the **full** ε: GRR while the grid has
fewer than ``3e^ε + 2`` cells, OLH beyond (Wang et al.'s rule, :func:`ldpnum.frequency.recommend` with
``communication="low"``; OLH's hash range ``round(e^ε) + 1`` is capped at 1024 so that a report is one
64-bit word, see :mod:`ldpnum._kernels.client_multi`).

**Granularities** (Yang et al.'s guideline, Section 5.4, with a smaller 1-D constant). With ``n`` people
and ``m`` grids,

.. math::

    g_1 = \left(\frac{n (e^\varepsilon - 1)^2 \alpha_1^2}{2 m e^\varepsilon}\right)^{1/3}, \qquad
    g_2 = \sqrt{2 \alpha_2 (e^\varepsilon - 1) \sqrt{\frac{n}{m e^\varepsilon}}}

with ``α1 = 0.3`` (the paper: 0.7; measured, see :func:`guideline_granularities`) and the paper's
``α2 = 0.03``; each is rounded to the nearest power of two (at least 2), ``g1`` raised to ``g2`` when smaller
(so that every 2-D cell's side is a union of 1-D cells), and capped at 4096 and 256. They balance the noise
of a grid (more cells, more noise per query) against the non-uniformity error of the cells a query cuts.
``n`` is the planned number of people: a public parameter of the collection, like the bounds.

**Estimation** (post-processing only; the code is in :mod:`ldpnum.estimation`:
:func:`~ldpnum.estimation.grids.estimate_grids` runs what this section describes, with the shared
consistency of :mod:`~ldpnum.estimation.tables` and the joint tables of :mod:`~ldpnum.estimation.joint`;
the functions named below are importable from here too). Each grid's cell frequencies are estimated
without bias from its reports, each cell with noise of variance ``σ_i²`` at frequency 0 (grid ``i``'s
oracle over its reports, :meth:`HDG.grid_variances`). Then, as in the paper, a non-negativity step on every grid and
**consistency** between each 2-D grid and the 1-D grids of its attributes, alternated until no cell is
negative (then consistency holds exactly), ending with Norm-Sub. Consistency: for each attribute and each
of its ``g2`` coarse intervals, the interval's mass in every grid holding the attribute (``T_i``, a sum of
``C_i`` cells: ``C = g1/g2`` for the 1-D grid, ``g2`` for a 2-D grid; variance ``C_i σ_i²``) is replaced by
the inverse-variance mean :math:`T = \sum_i T_i/(C_i σ_i^2) / \sum_i 1/(C_i σ_i^2)` (the least-squares
solution), each cell moving by :math:`(T - T_i)/C_i`. The paper's step is **Norm-Sub** (one shift ``δ``
off every positive cell) and its weights ``1/C_i`` (equal variances). ldpnum's default differs in both,
using the grids' known noise: the weights above (the grids' variances differ when their oracles do), and
:func:`noise_weighted_norm_sub`, which takes Norm-Sub's excess mostly from the cells whose value is within
the noise of 0. Norm-Sub's excess is the positive noise of near-empty cells, yet every populated cell pays
the same ``δ``, so that large ranges were answered low (the correlated pair at ε = 1, volume 0.5: mean error
-0.0087 with Norm-Sub, -0.0059 now). Measured against the paper's procedure (the pairs and queries of
``bench/multi.py``: three pairs, both query settings, volumes 0.1 and 0.5, ε = 0.5, 1, 2, 4, n = 10^6,
the default granularities, 3 collections: 48 cases): 2-D MAE ×0.86 (geometric mean; ×0.57 to ×1.03), at
volume 0.5 ×0.57 to ×1.01, at volume 0.1 ×0.65 to ×1.03. The cases above ×1.00 are all on the
independent Laplace pair: volume 0.1 (×1.00 to ×1.03) and ε = 0.5, volume 0.5 in the domain-64 setting
(×1.01); its tails hold true mass at the noise level, which the weighted step takes first. With 12 further
collections of that pair the losses at volume 0.1 are ×0.995 to ×1.008 (within 1 standard error) except
ε = 0.5 in the domain-64 setting, ×1.024 (2 standard errors). 1-D queries (intervals of 0.1 and 0.5 of a
column, continuous setting): ×0.94 (×0.76 to ×1.01). The weighting alone: ×0.98 (×0.73 to ×1.00).
``consistency="paper"`` gives the paper's procedure.

**Shrinkage toward independence** (ldpnum's, with ``consistency="hdg"``; ``estimate_ranges(shrink=False)``
turns it off). A 2-D grid of ``g2²`` cells is shared by ``1/m`` of the people: on an independent pair its
noise is most of a small query's error, while the product of its margins is known far better. Before the
post-processing each raw 2-D grid ``F`` is split into the product of its margins ``P = r cᵀ/s`` and an
interaction ``D = F - P`` (zero row and column sums), and becomes ``P + wD``: ``w = 1`` (kept) when a test
of independence on ``‖D‖²`` against its noise rejects, else the weight minimizing the squared error summed
over the grid's rectangles (a James–Stein / empirical-Bayes step, :func:`shrink_to_independence`). The
margins, and so the consistency, are untouched; after the post-processing the grid's interaction is scaled
by ``w`` once more (:func:`toward_independence`: the non-negativity step adds interaction back; the grid
stays non-negative and consistent). Measured (``bench/multi.py``'s pairs and queries, n = 10^6, the default
granularities, ε = 0.5 to 4, both query settings, 12 collections; 2-D MAE against ``shrink=False``):
×0.968 (geometric mean over the 96 cases; ×0.74 to ×1.03); the correlated pair unchanged (always kept),
the flights ×0.986 (×0.88 to ×1.00; shrunk mostly at ε = 0.5), the independent Laplace pair ×0.92 (×0.74
to ×1.03): volume 0.1 ×0.85 (×0.74 to ×1.01), volume 0.5 ×0.995 (×0.93 to ×1.03, within 1 standard error). In the domain-64
setting the Laplace pair's MAE at ε = 0.5, 1, 2 is then 0.0051, 0.0038, 0.0017 (volume 0.1) and 0.0093,
0.0070, 0.0031 (volume 0.5), under the reference code's figures (0.0055, 0.0042, 0.0027; 0.0094, 0.0078,
0.0038). At n = 3·10^5 (6 collections) ×0.972 (×0.79 to ×1.04). Where the 2-D grid is finer than the
guideline for ``n`` the large queries can lose: n = 10^5 with (16, 8) (the guideline: (8, 4)), volume 0.5
×1.10 at ε = 1 (volume 0.1 ×0.90).

Last, for each pair ``(a, b)`` the **response matrix**: a table of the pair's joint frequencies fitted by
iterative proportional fitting (IPF) to the 1-D grid of ``a`` (rows), of ``b`` (columns) and to the 2-D
grid (blocks), until it moves by less than ``1e-9`` (L1). The constraints are the paper's: the fitted table
has exactly the grids' row, column and block sums when they are consistent. What they leave free is how
mass lies *inside* a 2-D cell, and IPF keeps the start's odds ratios there. The paper starts from the
uniform table, so that inside each 2-D cell the fit is the product of the 1-D marginals: the pair is
independent within a cell. ldpnum first started from the 2-D grid's interpolated density
(:func:`interpolation_matrix`), which only borrows shape from neighbouring cells. Both answer a strongly
dependent pair **as if nearly independent** wherever a query corner cuts a populated cell: a pair like two
cities' hourly temperatures (r = 0.89, skewed, under wide public bounds, so that 90% of the people share one
2-D cell at ``g2 = 4``) had ``P(10 ≤ a ≤ 15, 13 ≤ b ≤ 17) = 0.214`` answered 0.155 (n = 2·10^5, ε = 2; 0.11 at
ε = 1, (16, 4)), **noise-free** as much as noisy: the within-cell model, not the noise and not the shrinkage
(the independence test keeps such a pair, ``w = 1``). ldpnum now starts from a **Gaussian copula**
(``estimate_ranges(within_cell="copula")``, the default): :func:`gaussian_copula_table` of the 1-D grids,
with the correlation ``ρ`` fitted by least squares to the raw (unbiased) 2-D grid
(:func:`fit_copula_correlation`; the result's :attr:`~MultiRangeEstimate.copula_correlations`), on a table of
``R g1`` cells a side (``R = min(4, max(1, 256 // g1))``, each 1-D cell split evenly into ``R``), so that the
dependence is kept inside the 2-D cells and inside the 1-D cells. The block sums still come from the 2-D
grid, so a dependence the copula does not describe is kept at the 2-D grid's resolution, as before.
Measured against the interpolated start (``bench/multi.py``'s pairs and square queries of volume 0.1 and
0.5, n = 10^6, ε = 0.5, 1, 2, 4, the default granularities, 2 collections; 2-D MAE): the correlated normal
pair ×0.21 to ×0.86 (volume 0.1) and ×0.79 to ×0.90 (0.5); the temperature-like pair ×0.28 to ×0.38 and
×0.93 to ×0.95; the flights ×1.00 to ×1.02 (fitted ρ within ±0.06); the independent Laplace pair ×0.94 to
×1.01. The remaining error on the temperature-like pair (0.214 answered 0.202 at n = 2·10^5, ε = 2) is the
fitted ρ's (0.875 against 0.90) and the 1-D cells' own uniformity. ``within_cell="interpolated"`` and
``"uniform"`` give the earlier and the paper's fits. A 2-D range query sums the response matrix, and a 1-D
query the 1-D grid, cells cut by the query counting in proportion to the part inside (uniform within a
cell; a response matrix cell is ``1/R`` of a 1-D cell a side).

With ``consistency="none"`` nothing of this is done: 1-D queries read the raw 1-D grid and 2-D queries the
raw 2-D grid (unbiased for queries aligned with the grids' cells; answers need not be in [0, 1]).

References
----------
J. Yang, T. Wang, N. Li, X. Cheng, S. Su, "Answering Multi-Dimensional Range Queries under Local
Differential Privacy", PVLDB 14(3), 2020 (HDG, the granularity guideline, consistency and the response
matrix). W. James, C. Stein, "Estimation with Quadratic Loss", Berkeley Symposium 1961, and B. Efron,
C. Morris, "Stein's Estimation Rule and its Competitors — an Empirical Bayes Approach", JASA 1973 (the
shrinkage). T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
Estimation", USENIX Security 2017 (GRR, OLH and the choice rule). T. Wang, M. Lopuhaä-Zwakenberg, Z. Li,
B. Škorić, N. Li, "Locally Differentially Private Frequency Estimation with Consistency", NDSS 2020
(Norm-Sub).
"""

import itertools
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._kernels import client_multi as kernels
from .._kernels._jit import launch
from .._typing import ArrayLike, FloatArray
from .._validation import _caller_stacklevel, check_choice, check_scalar, check_vector_bounds
from ..aggregate import Aggregate, check_block_counts, count_codes
from ..estimation.grids import (  # noqa: F401  (consistency_step, max_inconsistency: importable here too)
    HDG_CONSISTENCY,
    consistency_step,
    estimate_grids,
    make_consistent,
    max_inconsistency,
)
from ..estimation.joint import (
    REFINE_CELLS,
    RHO_MAX,
    SHRINK_Z,
    WITHIN_CELL,
    fit_copula_correlation,
    gaussian_copula_table,
    interpolation_matrix,
    response_matrix,
    shrink_to_independence,
    toward_independence,
)
from ..estimation.postprocess import NOISE_FLOOR, noise_weighted_norm_sub
from ..estimation.tables import alternate_consistency
from ..frequency import recommend
from ..frequency.hashing import HASH_FAMILY, OLH, olh_g
from ..ranges.hierarchical import GRRLevel, OLHLevel
from ..reports import Reports, check_integer_codes, register_code_check
from ..spec import check_spec
from ..vectors import VectorMechanism
from ._result import GridGeometry, MultiRangeEstimate

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["HDG", "HDGPlan", "PackedTables", "select_columns", "alternate_consistency", "check_packed_codes",
           "guideline_granularities", "make_consistent", "response_matrix", "check_hdg_codes", "ALPHA1", "ALPHA2",
           "PAPER_ALPHA1", "interpolation_matrix", "noise_weighted_norm_sub", "NOISE_FLOOR", "MAX_COLUMNS", "G1_MAX",
           "G2_MAX", "GRID_G_MAX", "HDG_CONSISTENCY", "LAYOUT", "shrink_to_independence",
           "toward_independence", "SHRINK_Z", "MIN_EPSILON", "check_table_epsilon", "gaussian_copula_table",
           "fit_copula_correlation", "WITHIN_CELL", "REFINE_CELLS", "RHO_MAX"]

#: The constants of the granularity guideline: α1 measured for HDG's 2-D queries (see
#: :func:`guideline_granularities`), α2 the paper's. The paper's α1 is PAPER_ALPHA1.
ALPHA1 = 0.3
ALPHA2 = 0.03
PAPER_ALPHA1 = 0.7
#: The smallest ε of HDG and :class:`ldpnum.Marginals` (see :func:`check_table_epsilon`).
MIN_EPSILON = 1e-9
#: At most 10 columns: 55 grids, whose index fits the report's 6 grid bits.
MAX_COLUMNS = 10
#: Largest granularities: 4096 cells of a 1-D grid, 256 × 256 cells of a 2-D grid.
G1_MAX = 1 << 12
G2_MAX = 1 << 8
#: Largest OLH hash range of a grid: y has the 10 low bits of a report.
GRID_G_MAX = 1 << kernels.Y_BITS
#: Names the report layout in the spec.
LAYOUT = "hdg-packed-u64/v1"

_GRID_MASK = np.uint64(((1 << kernels.GRID_BITS) - 1) << kernels.GRID_SHIFT)
_Y_MASK = np.uint64(GRID_G_MAX - 1)
_PAYLOAD_SHIFT = np.uint64(16)


# -- granularities -----------------------------------------------------------------------------------------

def _nearest_power_of_two(x):
    """The power of two nearest ``x`` (ties: the smaller), at least 2."""
    if x <= 2:
        return 2
    lo = 1 << (int(math.floor(math.log2(x))))
    hi = lo * 2
    return lo if x - lo <= hi - x else hi


def guideline_granularities(n: int, epsilon: float, d: int, *, alpha1: float = ALPHA1,
                            alpha2: float = ALPHA2) -> tuple[int, int]:
    r"""The granularities ``(g1, g2)`` for ``n`` people, ``epsilon`` and ``d`` attributes.

    Yang et al.'s guideline (see the module docstring for the formulas, ``m = d + d(d-1)/2`` grids, the
    rounding to powers of two, ``g1 ≥ g2`` and the caps) with ``α1 = 0.3`` by default instead of the
    paper's 0.7 (``alpha1=PAPER_ALPHA1`` gives the paper's rule): ``g1`` is 0.57 times the paper's before
    rounding (``g1 ∝ α1^{2/3}``), ``g2`` is the paper's.

    Why. The paper's α1 balances a 1-D query's noise against the non-uniformity of the two cells it cuts.
    In HDG the 1-D grids also feed every 2-D answer (the response matrix), and a finer 1-D grid has more
    near-empty cells whose positive noise survives the non-negativity step, mass taken from the populated
    cells: the answers to large ranges come out low, more so as ``g1`` grows (with the paper's Norm-Sub, at
    ε = 0.5, volume 0.5, the correlated pair's mean error is -0.016 with g1 = 16 and -0.039 with g1 = 64,
    g2 = 8; :func:`noise_weighted_norm_sub` reduces this bias but does not remove it). Measured: every
    candidate ``(g1, g2)`` with ``g1`` in 8 ... 128 and ``g2`` in 2 ... 32 (``bench/multi.py --sweep``; n =
    10^6, 2 attributes, 3 collections each, 200 random square queries per volume anywhere in the domain,
    the default post-processing) on three pairs (flight departure time × distance, a correlated normal
    pair, an independent Laplace pair) and two query volumes (0.1, 0.5): 6 cases per ε. Each candidate's
    MAE is divided by the best candidate's in each case; the geometric mean (and the worst) of these
    ratios over the 6 cases:

    =====  ======================  =========================  =========================
    ε      best candidate          the paper's (α1 = 0.7)     this rule (α1 = 0.3)
    =====  ======================  =========================  =========================
    0.5    (16, 8): 1.44 (2.60)    (32, 4): 1.60 (2.79)       (16, 4): 1.49 (2.38)
    1      (32, 8): 1.43 (2.72)    (32, 8): 1.43 (2.72)       (32, 8): 1.43 (2.72)
    2      (64, 8): 1.35 (2.66)    (64, 8): 1.35 (2.66)       (32, 8): 1.39 (1.93)
    4      (128, 16): 1.21 (2.51)  (128, 16): 1.21 (2.51)     (64, 16): 1.30 (2.37)
    =====  ======================  =========================  =========================

    α1 = 0.3 was chosen on the same sweep with the paper's Norm-Sub (then: 1.44, 1.40, 1.30, 1.43 against
    the paper's 1.55, 1.40, 1.33, 1.45). With the noise-weighted step the finer 1-D grids lose less and the
    two rules are close: geometric mean over the four ε 1.40 (this rule) and 1.39 (the paper's); this rule
    keeps the smaller worst case at ε = 0.5, 2 and 4, and α1 = 0.5 ((16, 4), (32, 8), (64, 8), (128, 16))
    would match the paper's rule at ε ≥ 1. The flights lose at ε = 0.5 (volume 0.5: MAE 0.0282 with (16,
    4) against 0.0148 with (32, 4): the distance column is spiky and its coarser cells are cut by the
    queries). With queries aligned to a 16-cell grid (privmdr's domain-64 setting, the same sweep) g1 = 16
    does well at every ε — no cell is cut — which says more about the queries than about the rule, so that
    setting is not used to choose. 1-D queries (answered from the 1-D grids alone; with the paper's Norm-Sub)
    follow the same pattern: at ε = 0.5 the flights' 1-D MAE (intervals of 0.1 and 0.5 of the range) is
    0.0131 and 0.0178 with g1 = 16 against 0.0104 and 0.0115 with 32, the correlated pair's 0.0057 and
    0.0066 against 0.0080 and 0.0145. Pass ``granularities`` to choose otherwise.

    Examples
    --------
    >>> guideline_granularities(10**6, 1.0, 2)
    (32, 8)
    >>> guideline_granularities(10**6, 2.0, 2)
    (32, 8)
    >>> guideline_granularities(10**6, 2.0, 2, alpha1=PAPER_ALPHA1)
    (64, 8)
    """
    alpha1, alpha2 = (check_scalar(value, f"guideline_granularities: {name}", float, low=0, include_boundaries="neither")
                      for name, value in (("alpha1", alpha1), ("alpha2", alpha2)))
    m = d + d * (d - 1) // 2
    em1, ee = math.expm1(epsilon), math.exp(epsilon)
    g1 = (n * em1 * em1 * alpha1 * alpha1 / (2 * m * ee)) ** (1 / 3)
    g2 = math.sqrt(2 * alpha2 * em1 * math.sqrt(n / (m * ee)))
    g2r = min(_nearest_power_of_two(g2), G2_MAX)
    g1r = min(max(_nearest_power_of_two(g1), g2r), G1_MAX)
    return g1r, g2r


# -- the grids' frequency oracles --------------------------------------------------------------------------

def check_table_epsilon(epsilon: float, owner: str) -> None:
    r"""Refuse an ``epsilon`` below :data:`MIN_EPSILON` = 1e-9 for HDG or Marginals (``owner`` names it).

    One ValueError, in the constructor (before anything is planned or drawn).

    Why 1e-9. The tables' oracles (GRR, OLH) estimate through :math:`(I/n - q^*)/(p^* - q^*)` with
    :math:`p^* - q^* \approx ε/k`, computed in float64 from the exact integer plan. Measured relative error
    of that float difference against the exact rational one (k = 2 to 65536 cells, GRR and OLH): at most
    1.1e-7 at ε = 1e-9, 1.1e-6 at 1e-10, 1.1e-4 at 1e-12, 2.4e-2 at 1e-14; at 1e-15 OLH's :math:`p^* = q^*` in
    float64 (the estimate divides by 0: a ``ZeroDivisionError`` or an infinite noise scale before this
    check), and below about 1.1e-16 :math:`e^ε - 1 = 0`. Above 1e-9 the float arithmetic is exact to 1e-7,
    so the estimates are the plan's. Nothing usable is lost: a cell's standard deviation is about
    :math:`\sqrt{k}/(ε\sqrt{n_j})`, so at ε = 1e-9 even 10^18 people per table leave every answer noise.
    """
    if epsilon < MIN_EPSILON:
        raise ValueError(f"{owner}: epsilon={epsilon!r} is too small: below {MIN_EPSILON:g} a table's frequency "
                         f"oracle cannot separate a person's cell from the others in float64 (p* - q* ~ epsilon/cells "
                         f"loses its precision; equal at 1e-15), and every answer would be noise anyway (a cell's "
                         f"standard deviation ~ sqrt(cells)/(epsilon*sqrt(n))); use epsilon >= {MIN_EPSILON:g}")


class GridOLH(OLHLevel):
    """OLH over a grid's cells with the hash range ``round(e^ε) + 1`` capped at 1024.

    The cap is the report's 10 bits for ``y``; it binds for ε > 6.93.
    """

    def __init__(self, epsilon, k):
        self.epsilon = epsilon
        self.k = k
        self.g = min(olh_g(epsilon), GRID_G_MAX)
        self.oracle = OLH(epsilon, k, g=self.g)


def _grid_oracle(epsilon, k):
    """GRR while ``k < 3e^ε + 2``, OLH beyond (:func:`ldpnum.frequency.recommend`, low communication)."""
    rec = recommend(k, epsilon, communication="low")
    return GridOLH(epsilon, k) if rec.name.lower() == "olh" else GRRLevel(epsilon, k)


# -- the plan ----------------------------------------------------------------------------------------------

class HDGPlan:
    """The integer plan of HDG's grids.

    The grids (their attributes and granularity), their oracles, the kernel's grid table, the blocks of the aggregate
    and the exact grid distribution.

    Grid ``j`` is drawn with probability ``grid_weights[j] = c_j / 2**48``, ``c_j = ceil((j+1) 2**48 / m) -
    ceil(j 2**48 / m)`` (:func:`ldpnum._random.assign_columns`' multiply-shift), independently of the values.
    Blocks of the aggregate: a GRR grid's ``k`` code counts; an OLH grid's ``k`` support counts, then its
    number of reports.
    """

    words_per_record = 3

    def __init__(self, d, g1, g2, epsilon):
        self.d, self.g1, self.g2 = d, g1, g2
        self.grids = tuple((a,) for a in range(d)) + tuple(itertools.combinations(range(d), 2))
        self.m = len(self.grids)
        self.oracles = tuple(_grid_oracle(epsilon, g1 if len(a) == 1 else g2 * g2) for a in self.grids)
        sizes = [o.block_size for o in self.oracles]
        self.offsets = tuple(int(v) for v in np.concatenate(([0], np.cumsum(sizes))))
        self.n_cells = self.offsets[-1]
        rows = []
        for attrs, o in zip(self.grids, self.oracles):
            kind, size, keep, lie_shift = o.kernel_row()
            b = attrs[1] if len(attrs) == 2 else -1
            rows.append((kind, size, keep, lie_shift, attrs[0], b, g1 if len(attrs) == 1 else g2))
        self.table = np.array(rows, dtype=np.int64).reshape(self.m, 7)
        self.table.flags.writeable = False
        self.grid_weights = tuple(Fraction(self.grid_count(j), 1 << 48) for j in range(self.m))

    def grid_count(self, j: int) -> int:
        """How many of the 2**48 top-bit patterns choose grid ``j``."""
        return -((-(j + 1) << 48) // self.m) + ((-j << 48) // self.m)

    def __eq__(self, other):
        return isinstance(other, HDGPlan) and np.array_equal(self.table, other.table)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        names = ",".join(o.name for o in self.oracles)
        return f"HDGPlan(d={self.d}, g1={self.g1}, g2={self.g2}, grids={self.m}, oracles=[{names}])"

    def pair_index(self, a: int, b: int) -> int:
        """Index of the 2-D grid of attributes ``a < b``."""
        return self.d + self.grids[self.d:].index((a, b))

    def report(self, j: int, code: int, seed: int = 0) -> int:
        """The report of grid ``j`` whose oracle output is ``code`` (``y`` for OLH, with seed word ``seed``)."""
        tag = j << kernels.GRID_SHIFT
        if self.oracles[j].hashed:
            return (int(seed) & 0xFFFF_FFFF_FFFF_0000) | tag | int(code)
        return (int(code) << 16) | tag

    def exact_probabilities(self, cells: Any, seed: int = 0) -> dict[int, Fraction]:
        """``{report: Fraction}``: the exact report distribution of a person whose cell in grid ``j`` is ``cells[j]``.

        Given the hash seed word ``seed`` (the seed's own distribution is uniform and does not depend on the values):
        ``P(grid j) · P(oracle output | cell)``.
        """
        out = {}
        for j, o in enumerate(self.oracles):
            w = self.grid_weights[j]
            for code, p in o.exact_probabilities(int(cells[j]), seed).items():
                out[self.report(j, code, seed)] = w * p
        return out

    def report_grids(self, codes: ArrayLike) -> np.ndarray:
        """The grid index of each report."""
        return ((np.asarray(codes, dtype=np.uint64) & _GRID_MASK) >> np.uint64(kernels.GRID_SHIFT)).astype(np.intp)

    def aggregate(self, codes: ArrayLike) -> np.ndarray:
        """The aggregate counts of reports (see the class docstring).

        O(n log m) to split by grid, then each grid's histogram or OLH support counts.
        """
        from ..frequency.hashing import local_hash_support_counts

        codes = np.ascontiguousarray(codes, dtype=np.uint64)
        grid = self.report_grids(codes).astype(np.uint8)
        order = np.argsort(grid, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(grid, minlength=self.m))))
        out = np.zeros(self.n_cells, dtype=np.int64)
        for j, o in enumerate(self.oracles):
            part = codes[order[bounds[j]:bounds[j + 1]]]
            lo, hi = self.offsets[j], self.offsets[j + 1]
            if o.hashed:
                out[lo:hi - 1] = local_hash_support_counts(part & ~_GRID_MASK, o.k, o.g)
                out[hi - 1] = part.size
            else:
                out[lo:hi] = count_codes(part >> _PAYLOAD_SHIFT, o.k)
        return out


# -- the mechanism -----------------------------------------------------------------------------------------

def _check_columns_bounds(bounds):
    """``bounds`` as ``(names, pairs)``: a mapping of 2..10 str column names to ``(low, high)``."""
    if bounds is None:
        raise ValueError("bounds is required: pass {column: (low, high)} for every attribute, e.g. "
                         "{'dep_time': (0, 1440), 'distance': (0, 5000)}; ldpnum never derives bounds from the data")
    if not isinstance(bounds, Mapping):
        raise TypeError(f"bounds must be a mapping {{column: (low, high)}} naming every attribute; got "
                        f"{type(bounds).__name__}")
    names = tuple(bounds)
    bad = [k for k in names if not isinstance(k, str) or not k]
    if bad:
        raise TypeError(f"bounds: column names must be non-empty str; got {bad[0]!r}")
    if not 2 <= len(names) <= MAX_COLUMNS:
        raise ValueError(f"bounds must name 2 to {MAX_COLUMNS} columns; got {len(names)}"
                         + (" (for one column use ldp.HierarchicalHistogram)" if len(names) == 1 else ""))
    pairs = check_vector_bounds([bounds[k] for k in names], "bounds")
    return names, pairs


def _check_granularities(granularities):
    if isinstance(granularities, (str, bytes)) or not hasattr(granularities, "__len__") or len(granularities) != 2:
        raise TypeError(f"granularities must be None or a pair (g1, g2) of ints; got {granularities!r}")
    g1 = check_scalar(granularities[0], "granularities[0] (g1)", int, low=2, high=G1_MAX)
    g2 = check_scalar(granularities[1], "granularities[1] (g2)", int, low=2, high=G2_MAX)
    if g1 % g2:
        raise ValueError(f"granularities: g1 = {g1} must be a multiple of g2 = {g2} (each 2-D cell's side is a union "
                         "of 1-D cells, which consistency needs)")
    return g1, g2


def select_columns(x: Any, columns: Any, name: str | None, owner: str, where: str) -> Any:
    """``x`` itself, or, for a DataFrame, its ``columns`` in that order.

    The frame must hold exactly those columns (any order; matched by name), else one ValueError naming the missing and
    extra ones.
    """
    have_columns = getattr(x, "columns", None)
    if have_columns is None or not hasattr(x, "to_numpy") or isinstance(x, np.ndarray):
        return x
    have = list(have_columns)
    missing = [c for c in columns if c not in have]
    extra = [c for c in have if c not in columns]
    if missing or extra or len(have) != len(columns):
        subject = "x" if name is None else str(name)
        raise ValueError(f"{subject}: {owner}'s columns are {list(columns)}; the DataFrame's are {have}"
                         + (f" (missing {missing})" if missing else "")
                         + (f" (not in {where}: {extra})" if extra else "")
                         + f"; pass exactly the columns named in {where}, in any order")
    return x[list(columns)]


class PackedTables(VectorMechanism):
    """What HDG and :class:`ldpnum.Marginals` share: one packed report per person, one aggregate block per table.

    One ``uint64`` report per person names a table (a grid, an attribute set) and the oracle's output over its cells
    (:mod:`ldpnum._kernels.client_multi`), and an aggregate holds every table's block (a GRR table's counts; an OLH
    table's support counts, then its number of reports). Subclasses set ``_plan`` (an :class:`HDGPlan` or a plan with
    its interface).
    """

    @property
    def oracle_names(self) -> tuple[str, ...]:
        """The frequency oracle of each table (grid or column set), in order."""
        return tuple(o.name for o in self._plan.oracles)

    @property
    def n_cells(self) -> int:
        """Length of the aggregate: every table's block."""
        return self._plan.n_cells

    def _report_dtype(self):
        return np.dtype(np.uint64)

    def report_grids(self, reports: Reports) -> np.ndarray:
        """The table of each report: an index into the mechanism's ``grids`` (HDG's grids, the attribute sets of Marginals)."""
        if not isinstance(reports, Reports):
            raise TypeError(f"report_grids expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        return self._plan.report_grids(reports.codes)

    # -- reports in a table column: already one uint64 each -----------------------------------------------------
    def check_column_codes(self, where: str = "a column") -> None:
        """An HDG report is one uint64 code: it always fits a column."""

    def column_codes(self, reports: Reports) -> np.ndarray:
        """The reports' uint64 codes (one per person: grid index and cell or hash fields)."""
        check_spec(self.spec, reports.spec, "reports")
        return reports.codes

    def reports_from_column(self, codes: ArrayLike) -> Reports:
        """The Reports behind column codes; codes that are not reports of this spec raise ValueError."""
        return Reports(codes, self.spec)

    @classmethod
    def _check_counts(cls, counts, total, n_reports, spec):
        """Per table: a GRR block sums to the table's reports, an OLH block's support counts are at most its reports.

        The OLH bound is its recorded number of reports; the tables' reports add up to ``n_reports``.
        """
        from ..base import mechanism_for

        plan = mechanism_for(spec)._plan
        return check_block_counts(counts, plan.oracles, plan.offsets, n_reports, spec, block="grid")

    def aggregate(self, reports: Reports) -> Aggregate:
        """Every grid's counts, concatenated: a mergeable :class:`~ldpnum.Aggregate` of :attr:`n_cells` counts.

        GRR: its cells' histogram; OLH: its cells' support counts and its number of reports.
        """
        if not isinstance(reports, Reports):
            raise TypeError(f"aggregate expects Reports; got {type(reports).__name__}")
        check_spec(self.spec, reports.spec, "reports")
        return Aggregate(self._plan.aggregate(reports.codes), self.spec, n_reports=len(reports))

    def empty_aggregate(self) -> Aggregate:
        """The aggregate of no reports, the identity of ``+``."""
        return Aggregate.empty(self.spec, per_report_counts=True)

    def grid_counts(self, data: Reports | Aggregate) -> tuple[np.ndarray, ...]:
        """Every grid's block of an aggregate (or of reports)."""
        agg = self._as_aggregate(data)
        o = self._plan.offsets
        return tuple(agg.counts[o[j]:o[j + 1]] for j in range(self._plan.m))


class HDG(PackedTables):
    r"""Hybrid-dimensional grids: 1-D and 2-D range queries over several numerical columns, one report each.

    Parameters
    ----------
    epsilon : float
        Privacy parameter in [1e-9, 20] of each person's one report (below 1e-9: a ValueError, see
        :func:`~ldpnum.multi.hdg.check_table_epsilon`).
    bounds : dict
        ``{column: (low, high)}`` for 2 to 10 columns (str names): public ranges. Their order is the order
        of the columns of an array given to :meth:`privatize`.
    granularities : (int, int), optional
        ``(g1, g2)``: cells of each 1-D grid and per side of each 2-D grid (``g1`` a multiple of ``g2``).
        Default: Yang et al.'s guideline for ``n`` people with a measured 1-D constant
        (:func:`guideline_granularities`).
    n : int, default 1_000_000
        The planned number of people (public), used only by the granularity guideline.

    Notes
    -----
    Each call of ``privatize`` on one person's row is ε-LDP; estimators are post-processing. The grid is
    chosen from a word of its own, independently of the values, and the grid's oracle (GRR or OLH, planned
    exactly like :class:`ldpnum.GRR` and :class:`ldpnum.OLH`) spends the whole ε on the one cell. See the
    module :mod:`ldpnum.multi.hdg` for the guideline, the post-processing and the response matrix, and
    :mod:`ldpnum._kernels.client_multi` for the report layout (one ``uint64`` per person: grid index and
    cell code or hash seed and hashed value). The aggregate holds every grid's counts (O(total cells));
    OLH grids cost O(n_j · k_j) hash evaluations at aggregation, as OLH always does.

    A DataFrame given to :meth:`privatize` (or a tuple key of the pandas accessor,
    ``df.ldp.privatize({("a", "b"): hdg})``) must hold exactly the columns of ``bounds``, in any order:
    columns are matched by name.

    References
    ----------
    J. Yang, T. Wang, N. Li, X. Cheng, S. Su, "Answering Multi-Dimensional Range Queries under Local
    Differential Privacy", PVLDB 14(3), 2020.

    Examples
    --------
    >>> import numpy as np, ldpnum as ldp
    >>> rng = np.random.default_rng(0)
    >>> a = rng.uniform(0, 1, 200_000); b = np.clip(a + rng.normal(0, 0.1, a.size), 0, 1)
    >>> hdg = ldp.HDG(2.0, bounds={"a": (0, 1), "b": (0, 1)}, n=a.size)
    >>> hdg.granularities
    (32, 8)
    >>> est = hdg.estimate_ranges(hdg.aggregate(hdg.privatize(np.column_stack([a, b]), rng=1)))
    >>> true = np.mean((a < 0.5) & (b < 0.5))
    >>> bool(abs(est.range({"a": (0, 0.5), "b": (0, 0.5)}) - true) < 0.02)
    True
    """

    name = "hdg"

    def __init__(self, epsilon: float, bounds: Any, *, granularities: Any = None, n: int = 1_000_000) -> None:
        names, pairs = _check_columns_bounds(bounds)
        super().__init__(epsilon, pairs)
        check_table_epsilon(self._epsilon, "HDG")
        n = check_scalar(n, "n", int, low=1, high=1 << 62)
        if granularities is None:
            g1, g2 = guideline_granularities(n, self._epsilon, len(names))
        else:
            g1, g2 = _check_granularities(granularities)
        self._columns = names
        self._plan = HDGPlan(len(names), g1, g2, self._epsilon)

    # -- parameters -----------------------------------------------------------------------------------------
    @property
    def columns(self) -> tuple[str, ...]:
        """The attributes' column names, in order."""
        return self._columns

    @property
    def bounds(self) -> Any:
        """``{column: (low, high)}`` (a dict)."""
        return dict(zip(self._columns, self._vector_bounds))

    @property
    def granularities(self) -> tuple[int, int]:
        """``(g1, g2)``."""
        return self._plan.g1, self._plan.g2

    @property
    def grids(self) -> tuple[tuple[str, ...], ...]:
        """The grids' attributes by name: the ``d`` 1-D grids, then the pairs."""
        return tuple(tuple(self._columns[a] for a in attrs) for attrs in self._plan.grids)

    def _spec_params(self):
        return {"columns": self._columns, "bounds": self._vector_bounds, "granularities": self.granularities,
                "oracle": self.oracle_names, "layout": LAYOUT, "hash": HASH_FAMILY,
                "g": tuple(o.g if o.hashed else 0 for o in self._plan.oracles)}

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec.epsilon, dict(zip(spec.get("columns"), spec.get("bounds"))),
                   granularities=tuple(spec.get("granularities")))

    def __repr__(self) -> str:
        return (f"HDG(epsilon={self._epsilon!r}, bounds={self.bounds!r}, granularities={self.granularities!r}, "
                f"oracle={self.oracle_names!r})")

    # -- client side ----------------------------------------------------------------------------------------
    def prepare_values(self, x: ArrayLike, *, name: str | None = None, nan_policy: str = "raise",
                       fill_value: Any = None, out_of_range: str = "clip") -> FloatArray:
        """Validate an ``(n, d)`` array or a DataFrame of exactly the columns of ``bounds``, without drawing anything.

        The array's columns are in the order of ``bounds``; the frame's in any order (matched by name).
        """
        x = select_columns(x, self._columns, name, "HDG", "bounds")
        return super().prepare_values(x, name=name, nan_policy=nan_policy, fill_value=fill_value,
                                      out_of_range=out_of_range)

    def _run_kernel(self, values, words, out):
        launch(kernels.hdg_kernel, values, self._lows, self._inv_ranges, self._plan.table, words, out)

    def cells(self, x: ArrayLike, grid: int, **options: Any) -> np.ndarray:
        """The cell of grid ``grid`` (an index into :attr:`grids`) holding each row, exactly as ``privatize`` maps it.

        Validated the same way; for simulations and tests.
        """
        grid = check_scalar(grid, "grid", int, low=0, high=self._plan.m - 1)
        values = self.prepare_values(x, **options)
        out = np.empty(values.shape[0], dtype=np.int64)
        if values.shape[0]:
            launch(kernels.hdg_cells_kernel, values, self._lows, self._inv_ranges, self._plan.table, grid, out)
        return out

    def true_grids(self, x: ArrayLike, **options: Any) -> tuple[np.ndarray, ...]:
        """The true cell frequencies of every grid (1-D: ``g1``; 2-D: ``(g2, g2)``) of the rows of ``x``."""
        out = []
        for j, attrs in enumerate(self._plan.grids):
            k = self._plan.oracles[j].k
            f = np.bincount(self.cells(x, j, **options), minlength=k) / max(1, len(np.asarray(x)))
            out.append(f if len(attrs) == 1 else f.reshape(self._plan.g2, self._plan.g2))
        return tuple(out)

    # -- server side ----------------------------------------------------------------------------------------
    def raw_grids(self, data: Reports | Aggregate) -> tuple[tuple[np.ndarray, ...], tuple[int, ...]]:
        """Unbiased estimates of every grid's cell frequencies and every grid's number of reports.

        Frequencies among all people: each grid's reporters are a uniformly random subset.

        Raises ValueError when a grid received no report.
        """
        agg = self._as_aggregate(data)
        plan = self._plan
        blocks = self.grid_counts(agg)
        n_per = tuple(o.level_reports(b) for o, b in zip(plan.oracles, blocks))
        if agg.n_reports == 0:
            raise ValueError("estimate_ranges: no reports")
        if min(n_per) == 0:
            empty = [self.grids[j] for j, v in enumerate(n_per) if v == 0]
            raise ValueError(f"estimate_ranges: grid(s) {empty} received no reports ({agg.n_reports} reports in all, "
                             f"spread over {plan.m} grids); collect more reports")
        raw = []
        for attrs, o, b in zip(plan.grids, plan.oracles, blocks):
            f = o.estimate(b)
            raw.append(f if len(attrs) == 1 else f.reshape(plan.g2, plan.g2))
        return tuple(raw), n_per

    def grid_variances(self, n_per: tuple[int, ...]) -> tuple[float, ...]:
        """Variance of one raw cell estimate of each grid at frequency 0 (its oracle's, over its reports)."""
        return tuple(float(o.variance(v)) for o, v in zip(self._plan.oracles, n_per))

    def cell_variances(self, raw: tuple[np.ndarray, ...], n_per: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        r"""Plug-in variance of every raw cell estimate as an estimate of the frequency among all people.

        In the shapes of ``raw`` (:meth:`raw_grids`): the oracle's variance at the cell's frequency ``f`` (clipped to
        [0, 1]) over the grid's ``n_j`` reports, plus the sampling of the grid's people from the ``N`` in all,
        :math:`[v(f) + f(1 - f)(1 - n_j/N)] / n_j`.
        """
        total = sum(n_per)
        out = []
        for r, o, nj in zip(raw, self._plan.oracles, n_per):
            f = np.clip(np.asarray(r, dtype=np.float64), 0.0, 1.0)
            out.append((o.oracle.variance(f) + f * (1.0 - f) * (1.0 - nj / total)) / nj)
        return tuple(out)

    def estimate_ranges(self, data: Reports | Aggregate, *, consistency: str = "hdg",
                        shrink: bool | None = None, within_cell: str = "copula", bootstrap: int | None = None,
                        rng: Any = None) -> MultiRangeEstimate:
        """Estimate every grid and answer 1-D and 2-D range queries.

        Parameters
        ----------
        data : Reports or Aggregate
        consistency : {"hdg", "paper", "norm-sub", "none"}, default "hdg"
            ``"hdg"``: the post-processing of the module docstring (noise-weighted Norm-Sub and
            variance-weighted consistency between grids, response matrices). ``"paper"``: the paper's
            (Norm-Sub, consistency weighted by cell counts only, response matrices). ``"norm-sub"``:
            Norm-Sub on each grid, then the response matrices (grids need not agree). ``"none"``: the raw
            unbiased grids (2-D queries from the 2-D grid, no response matrix).
        shrink : bool, optional
            Shrink each raw 2-D grid toward the product of its attributes' raw 1-D grids before the
            post-processing, by the positive-part James–Stein weight of :func:`shrink_to_independence`
            (independent pairs: toward the product; dependent pairs: nearly unchanged). Default: on with
            ``consistency="hdg"``, off otherwise (the paper's procedure and the raw grids as they were).
            The weights are the result's :attr:`~MultiRangeEstimate.shrinkage`.
        within_cell : {"copula", "interpolated", "uniform"}, default "copula"
            How each pair's response matrix places mass inside the 2-D grid's cells (:func:`response_matrix`'s
            ``start``): ``"copula"``, a Gaussian copula whose correlation is fitted to the raw 2-D grid
            (:func:`fit_copula_correlation`; the result's :attr:`~MultiRangeEstimate.copula_correlations`),
            on a table 4 times finer than the 1-D grids (up to 256 cells a side); ``"interpolated"`` (the
            earlier default) and ``"uniform"`` (the paper's) are nearly independent inside a cell, so that a
            strongly dependent pair's rectangles cutting populated cells come out far too low. Not used with
            ``consistency="none"``.
        bootstrap : int, optional
            Attach this many parametric bootstrap replicates (20 to 100,000; 39 or more for 95% intervals):
            each grid's counts are redrawn from the fitted grids with the observed reports per grid
            (:func:`ldpnum.estimation.bootstrap.resample_table_counts`: GRR exactly multinomial, OLH's support
            counts with their exact mean and covariance) and the whole post-processing is re-run with the same
            settings (:func:`ldpnum.estimation.bootstrap.bootstrap_tables`). ``range(query, ci=)`` then gives
            percentile bootstrap intervals of the ranges on the grids' cell edges, and ``joint(a, b, grid=True,
            ci=)`` of the 2-D grid's cells; a range cutting a cell is refused (its answer rests on the
            within-cell model, whose bias the replicates do not contain; measured coverage in
            :meth:`~ldpnum.multi.MultiRangeEstimate.range`). ``rng`` seeds the resampling (a simulation: it
            costs no privacy).
        rng : None, int or numpy.random.Generator
            Randomness of the bootstrap's resampling.

        Returns
        -------
        MultiRangeEstimate
            With every raw cell's variance, so that each answer has a standard error
            (:meth:`~MultiRangeEstimate.standard_error`) and a conservative interval
            (``range(query, ci=0.95)``); with ``bootstrap``, its replicates.

        Warns
        -----
        NoisyRangesWarning
            When a grid has so few reports for its cells that a range over half of them has a standard error
            above 0.2 (e.g. 5 reports: about 1.8): its answers are noise, whatever their value (an answer of
            0.5 from 5 reports is not a measurement). The estimate is still returned, with its standard errors.
        """
        check_choice(consistency, "consistency", HDG_CONSISTENCY)
        check_choice(within_cell, "within_cell", WITHIN_CELL)
        if shrink is not None and not isinstance(shrink, (bool, np.bool_)):
            raise TypeError(f"estimate_ranges: shrink must be True, False or None; got {shrink!r}")
        if bootstrap is not None:
            from ..estimation.bootstrap import check_replicates

            check_replicates(bootstrap, 1, name="bootstrap")
        agg = self._as_aggregate(data)
        options: dict[str, Any] = dict(consistency=consistency, shrink=shrink, within_cell=within_cell)
        est = self._fit_ranges(agg, warn=True, **options)
        if bootstrap is None:
            return est
        from ..estimation.bootstrap import bootstrap_tables

        # the population: the fitted grids (non-negative and consistent; the raw grids of "none" clipped to
        # non-negative and normalized by the resampling)
        size = 8 * (sum(g.size for g in est.grids) * 2 + sum(j.size for j in est.joints) * 2) + 4096
        reps = bootstrap_tables(self, agg, lambda a: self._fit_ranges(a, **options), est.grids,
                                n_boot=bootstrap, rng=rng, bytes_per_replicate=size)
        import dataclasses

        return dataclasses.replace(est, replicates=reps)

    def check_range_interval(self, query: Any) -> None:
        """Raise ValueError when ``range(query, ci=)`` would be refused: the query cuts a cell of its grid.

        The grids are in the spec, so this needs no reports (see :meth:`MultiRangeEstimate.range`).

        Examples
        --------
        >>> import ldpnum as ldp
        >>> hdg = ldp.HDG(1.0, {"a": (0, 1), "b": (0, 1)}, granularities=(4, 2))
        >>> hdg.check_range_interval({"a": (0, 0.5)})       # on the 1-D grid's edges
        >>> hdg.check_range_interval({"a": (0, 0.3), "b": (0, 1)})
        Traceback (most recent call last):
        ...
        ValueError: range(ci=): 1 of 1 queries cut cells of the 2-D grid (2 x 2 cells), first at query 0; ...
        """
        GridGeometry(self._columns, self._vector_bounds, self.granularities)._refuse_cut(query)

    def _fit_ranges(self, agg: Aggregate, *, consistency: str = "hdg", shrink: bool | None = None,
                    within_cell: str = "copula", warn: bool = False) -> MultiRangeEstimate:
        """The :class:`MultiRangeEstimate` of an aggregate (no bootstrap; warnings only with ``warn``)."""
        raw, n_per = self.raw_grids(agg)
        plan = self._plan
        d, g1, g2 = plan.d, plan.g1, plan.g2
        if shrink is None:
            shrink = consistency == "hdg"
        variances = self.grid_variances(n_per)
        cell_var = self.cell_variances(raw, n_per)
        if warn:
            _warn_noisy_grids(self.grids, plan, variances)
        post = estimate_grids(raw, plan.grids, d, g1, g2, variances=variances, cell_variances=cell_var,
                              consistency=consistency, shrink=bool(shrink), within_cell=within_cell)
        ests = post.grids
        return MultiRangeEstimate(columns=self._columns, bounds=self._vector_bounds, marginals=tuple(ests[:d]),
                                  joints=post.joints, grids=ests, granularities=(g1, g2),
                                  consistency=consistency, spec=agg.spec, n_reports=agg.n_reports,
                                  grid_reports=n_per, grid_variances=self.grid_variances(n_per), n_iter=post.n_iter,
                                  converged=post.converged, shrinkage=post.shrinkage,
                                  within_cell=within_cell if consistency != "none" else "uniform",
                                  copula_correlations=post.copula_correlations, cell_variances=cell_var)

def _warn_noisy_grids(names, plan, variances):
    """:class:`~ldpnum.multi.NoisyRangesWarning` when a range over half of some grid's cells is too noisy.

    Too noisy: its standard error (the oracle's noise at frequency 0) is above
    :data:`~ldpnum.multi._result.NOISE_WARNING_SE`.
    """
    import warnings

    from ._result import NOISE_WARNING_SE, NoisyRangesWarning

    se = [math.sqrt(o.k / 2 * v) for o, v in zip(plan.oracles, variances)]
    bad = [j for j, v in enumerate(se) if v > NOISE_WARNING_SE]
    if bad:
        worst = max(bad, key=lambda j: se[j])
        warnings.warn(NoisyRangesWarning(
            f"estimate_ranges: {len(bad)} of {plan.m} grids have too few reports for their cells: a range over half "
            f"of grid {names[worst]}'s {plan.oracles[worst].k} cells has a standard error of {se[worst]:.3g} "
            f"(above {NOISE_WARNING_SE}), so its answers are mostly noise; collect more reports, use fewer cells "
            f"(granularities=) or a larger epsilon, and read est.standard_error(query) / est.range(query, ci=0.95)",
            grids=[names[j] for j in bad], standard_errors=[se[j] for j in bad]), stacklevel=_caller_stacklevel())


def check_hdg_codes(codes: np.ndarray, spec: "Spec") -> np.ndarray:
    """Validate HDG report codes against their spec (every :class:`~ldpnum.Reports` path).

    One ``uint64`` per report whose grid index is below ``m``; on an OLH grid ``y < g``; on a GRR grid ``y = 0`` and the
    cell below the grid's cell count. Raises TypeError / ValueError naming the count and first index.
    """
    codes = check_integer_codes(codes)
    if spec.get("layout") != LAYOUT or spec.get("hash") != HASH_FAMILY:
        raise ValueError(f"{spec} has an unknown report layout")
    d = len(spec.get("columns"))
    g1, g2 = spec.get("granularities")
    return check_packed_codes(codes, spec, [g1] * d + [g2 * g2] * (d * (d - 1) // 2))


def check_packed_codes(codes: np.ndarray, spec: "Spec", ks: list[int]) -> np.ndarray:
    """Check packed one-word reports (HDG's layout) of the tables of ``ks`` cells each; returns them as uint64.

    The layout is :mod:`ldpnum._kernels.client_multi`'s; the tables' OLH hash ranges are the spec's ``g`` (0 for a GRR
    table): the table index below ``len(ks)``; on an OLH table ``y < g``; on a GRR table ``y = 0`` and the cell below
    ``k``. ``codes`` are already known to be 1-D non-negative integers.
    """
    gs = spec.get("g")
    if len(gs) != len(ks):
        raise ValueError(f"{spec}: {len(gs)} grids in 'g' for {len(ks)} grids")
    if codes.dtype != np.uint64 or codes.flags.writeable or not codes.flags.c_contiguous:
        codes = np.array(codes, dtype=np.uint64, copy=True)
    grid = ((codes & _GRID_MASK) >> np.uint64(kernels.GRID_SHIFT)).astype(np.intp)
    bad = grid >= len(ks)
    grid = np.minimum(grid, len(ks) - 1)
    y_limit = np.array([g if g else 1 for g in gs], dtype=np.uint64)
    payload_limit = np.array([1 << 48 if g else k for g, k in zip(gs, ks)], dtype=np.uint64)
    bad |= (codes & _Y_MASK) >= y_limit[grid]
    bad |= (codes >> _PAYLOAD_SHIFT) >= payload_limit[grid]
    if bad.any():
        idx = np.flatnonzero(bad)
        raise ValueError(f"codes has {idx.size} report(s) that are not reports of {spec} (grid, hashed value or cell "
                         f"out of range), first at index {idx[0]} ({int(codes[idx[0]]):#x})")
    return codes


register_code_check(HDG.name, check_hdg_codes)
