"""Common checks run over every registered mechanism (DESIGN.md R8, TESTING.md (a), (d), (e)).

Like scikit-learn's ``parametrize_with_checks``, the tests here are parametrized from the mechanism registry
(:func:`ldpnum.mechanisms.registered`): a new mechanism is tested by registering it and adding its entry to
:data:`CASES` (a registered mechanism without an entry fails :func:`test_every_registered_mechanism_has_a_case`
and every check parametrized with it). An entry says how to build a few instances and how to read the
mechanism's exact output distribution; the checks themselves are shared:

* **exact ε** — every row of the exact output distribution (one row per input state, rationals from the
  plan) sums to 1, every ratio is at most a rigorous lower bound of e^ε, and the largest one reaches e^ε;
* **kernel vs plan** — the kernel's sampled outputs for a few inputs against the exact probabilities,
  chi-square at α = 1e-6 with fixed seeds;
* **bad inputs** — the bad-input matrix: right error type, and no random word drawn;
* **reproducibility** — same seed, same reports; chunks (and blocks) equal one call; pickling; specs.

Each checker has negative controls at the end of the file: the same mechanism planned for 1.25 ε must fail
the exact check and the chi-square twin, for every registered mechanism.

The family-specific tests (test_frequency.py, test_wave.py, ...) check more per family: the structural
reductions at every ε of the grid, larger domains, the naive references bit for bit, planted bugs of each
family.
"""

import pickle
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
import pandas as pd
import pytest

import ldpnum as ldp
from ldpnum import _random
from ldpnum.reports import code_dtype
from ldpnum._kernels import client_hashing
from ldpnum._kernels import _jit
from ldpnum._kernels._jit import launch, prange
from ldpnum.frequency.unary import unpack_bits
from ldpnum.mechanisms import registered
from ldpnum.plans import TWO53

from conftest import adversarial_values
from privacy_checks import PrivacyViolation, check_exact_epsilon, check_kernel_matches, max_ratio

#: Reports per input state in the chi-square twin (TESTING.md (a): 2e5–4e5).
N_TWIN = 200_000


# -- how to read each kind of plan -------------------------------------------------------------------------

def binary_rows(m):
    """Two-output randomizers: the thresholds the kernel uses at the plan's endpoints and at adversarial
    inputs (every threshold lies between them, so these rows hold the extremes)."""
    plan = m.plan
    if m.name == "randomized_response":
        ts = m.thresholds(np.array([0.0, 1.0]))
    else:
        ts = m.thresholds(adversarial_values(m.bounds, n_random=1000))
    states = {plan.t_lo, plan.t_hi, int(ts.min()), int(ts.max())}
    return [plan.exact_probabilities(t) for t in sorted(states)], None


def window_rows(m):
    """Window randomizers: every window start (brute force) on small grids; else the plan's exact
    structural reduction, with the two extreme starts as rows (so their sums are checked too)."""
    plan = m.plan
    if plan.n_cells <= 128:
        return [plan.exact_probabilities(s) for s in range(plan.n_positions + 1)], None
    return [plan.exact_probabilities(0), plan.exact_probabilities(plan.n_positions)], plan.extreme_ratio()


def hybrid_rows(m):
    """Hybrid: Piecewise cells with probability α, Duchi's two codes otherwise, for every window start
    combined with the Duchi branch's extreme and middle thresholds."""
    a = Fraction(m._t_mix, TWO53)
    pw, bp = m.piecewise_plan, m.duchi_plan
    n = pw.n_cells
    if n > 128:
        ratios = [bp.t_hi * Fraction(1, bp.t_lo)]
        if a > 0:
            ratios.append(pw.extreme_ratio())
        return [], max(ratios)
    rows = []
    for s in range(pw.n_positions + 1):
        for t in (bp.t_lo, bp.t_hi, (bp.t_lo + bp.t_hi) // 2):
            row = {j: a * p for j, p in pw.exact_probabilities(s).items()}
            row[n] = (1 - a) * (1 - Fraction(t, TWO53))
            row[n + 1] = (1 - a) * Fraction(t, TWO53)
            rows.append(row)
    return rows, None


def laplace_rows(m):
    """Laplace: the plan's structural maximum (checked against its preconditions), with the extreme and
    middle grid inputs as rows."""
    plan = m.plan
    rows = [plan.exact_probabilities(i) for i in (0, plan.g // 2, plan.g)]
    return rows, plan.max_ratio()


def category_rows(m):
    """Categorical oracles whose report does not depend on a hash seed: every category."""
    return [m.plan.exact_probabilities(v) for v in range(m.k)], None


def hash_values(seed_words, values, g):
    """``h(v)`` of the local-hashing family for each (seed word, value) pair (the kernel's own hash)."""
    seed_words = np.ascontiguousarray(seed_words, dtype=np.uint64)
    values = np.ascontiguousarray(values, dtype=np.int64)
    out = np.empty(values.shape[0], dtype=np.int64)
    launch(client_hashing.local_hash_probe, seed_words, values, g, out)
    return out


#: Fixed seed words for the seeded checks (hash seeds of local hashing, packed hierarchical levels).
SEEDS = [int(w) for w in np.random.default_rng(2024).bit_generator.random_raw(8)]


def local_hash_given_seed(m, v, seed):
    """Exact distribution of a local-hashing report of ``v`` given the seed word, keyed by the full code."""
    h = int(hash_values([seed], [v], m.g)[0])
    base = seed & int(client_hashing.SEED_MASK)
    return {base | y: p for y, p in m.plan.exact_probabilities(h).items()}


def local_hash_rows(m):
    """Local hashing: for each of 8 fixed seeds, all categories. The seed is drawn from its own word,
    independently of the value, so the ratio over (seed, report) pairs is the largest ratio given a seed."""
    worst = Fraction(1)
    for s in SEEDS:
        worst = max(worst, max_ratio([local_hash_given_seed(m, v, s) for v in range(m.k)]))
    return [local_hash_given_seed(m, v, SEEDS[0]) for v in range(m.k)], worst


def hierarchy_rows(m):
    """Hierarchical histogram: every leaf (given each fixed seed word when a level hashes)."""
    plan = m.plan
    if not plan.packed:
        return [plan.exact_probabilities(t) for t in range(m.n_leaves)], None
    worst = Fraction(1)
    for s in SEEDS[:4]:
        worst = max(worst, max_ratio([plan.exact_probabilities(t, seed=s) for t in range(m.n_leaves)]))
    return [plan.exact_probabilities(t, seed=SEEDS[0]) for t in range(m.n_leaves)], worst


def prefix_rows(m):
    """Prefix protocols (PEM, TreeHist): every item of a small domain, given each fixed first word. The
    group and hash index come from that word alone (never from the item), so the ratio over (word, report)
    pairs is the largest ratio given the word: GRR's over ``g``."""
    items = range(1 << m.item_bits)
    worst = Fraction(1)
    for s in SEEDS:
        worst = max(worst, max_ratio([m.plan.exact_probabilities(v, s) for v in items]))
    return [m.plan.exact_probabilities(v, SEEDS[0]) for v in items], worst


def local_set_rows(m):
    """Padding-and-sampling: every local set of a small candidate domain, with the plan's structural bound
    (the largest sampling probability of a value is the largest 48-bit slot count over ℓ)."""
    from itertools import combinations

    sets = [c for r in range(m.k + 1) for c in combinations(range(m.k), r)]
    return [m.plan.exact_probabilities(s) for s in sets], m.plan.extreme_ratio()


def local_set_hash_rows(m):
    """Padding-and-sampling with local hashing: every local set given each fixed seed word (drawn from its own
    word, never from the set), so the ratio over (seed, report) pairs is the largest ratio given a seed."""
    from itertools import combinations

    sets = [c for r in range(m.k + 1) for c in combinations(range(m.k), r)]
    worst = Fraction(1)
    for s in SEEDS:
        worst = max(worst, max_ratio([m.plan.exact_probabilities(x, s) for x in sets]))
    return [m.plan.exact_probabilities(x, SEEDS[0]) for x in sets], worst


def sketch_rows(m):
    """Count-mean sketch: every category given each fixed first word (it chooses the hash index, and HCMS's
    column, never from the value), so the ratio over (word, report) pairs is the largest ratio given the word."""
    states = [*range(m.k), -1]  # -1: an unknown value (unknown="uniform")
    worst = Fraction(1)
    for s in SEEDS:
        worst = max(worst, max_ratio([m.plan.exact_probabilities(v, s) for v in states]))
    return [m.plan.exact_probabilities(v, SEEDS[0]) for v in states], worst


# -- sampling: what the kernel reports for one input --------------------------------------------------------

def float_table(probs):
    return {j: float(p) for j, p in enumerate(probs)}


def leaf_value(m, t):
    """The centre of leaf ``t`` (in discrete mode, the leaf's integer)."""
    edges = m.leaf_edges
    return float((edges[t] + edges[t + 1]) / 2)


def hierarchy_distribution(m, x, seed=None):
    """The report distribution of a value in a leaf (given the seed word when a level hashes)."""
    edges = m.leaf_edges
    leaf = min(int(np.searchsorted(edges, x, side="right")) - 1, m.n_leaves - 1)
    if m.plan.packed:
        return m.plan.exact_probabilities(leaf, seed=seed)
    return float_table(m.plan.probabilities(leaf))


def bit_keys(m, reports):
    """A bit-vector report as the integer whose bit ``j`` is report bit ``j`` (the plans' key)."""
    bits = unpack_bits(reports).astype(np.int64)
    return bits @ (np.int64(1) << np.arange(bits.shape[1], dtype=np.int64))


def pair_keys(m, reports):
    """PI-RAPPOR's ``φ1 << 32 | φ0`` codes, as the plan keys them."""
    return reports.codes.astype(np.int64)


# -- the table: one entry per registered mechanism ----------------------------------------------------------

@dataclass
class Case:
    """How the common checks read one registered mechanism.

    ``settings`` are keyword arguments of a few instances (``epsilon`` included), built by ``factory``
    (default: the registered class). ``kind`` selects the bad-input matrix and the inputs of the
    reproducibility checks. ``rows(m)`` returns ``(rows, ratio)``: exact output distributions
    ``{output: Fraction}`` for the input states, and the exact largest ratio when it comes from a structural
    reduction rather than from the rows (``None``: computed from the rows). ``inputs(m)`` lists the values
    sampled by the chi-square twin and ``distribution(m, x, seed)`` their exact (or correctly rounded)
    output probabilities keyed like ``keys(m, reports)``. With ``seeded`` the twin fixes word 0 of every
    record (the hash seed) to each of two seed words and compares the distribution given that seed.
    """

    kind: str
    settings: list
    rows: Callable
    inputs: Callable
    distribution: Callable
    keys: Callable = None
    seeded: bool = False
    factory: Callable = None


def numeric_inputs(m):
    low, high = m.bounds
    return [low, low + 0.3 * (high - low), high]


def numeric_distribution(m, x, seed=None):
    return float_table(m.output_probabilities(x))


def category_inputs(m):
    return [0, m.k - 1]


def category_distribution(m, v, seed=None):
    return m.plan.exact_probabilities(v)


def pirappor_with_prime(epsilon, k, p):
    """PI-RAPPOR over a small field, so that all ``p²`` reports can be enumerated."""
    return ldp.PIRappor._with_prime(epsilon, k, p)


CASES = {
    "stochastic_rounding": Case(
        "numeric", [dict(epsilon=1.0, bounds=(0, 10)), dict(epsilon=0.1, bounds=(-3.5, 1e6)),
                    dict(epsilon=20.0, bounds=(0, 1))],
        binary_rows, numeric_inputs, numeric_distribution),
    "duchi": Case(
        "numeric", [dict(epsilon=0.5, bounds=(-1, 1)), dict(epsilon=4.0, bounds=(0, 1440))],
        binary_rows, numeric_inputs, numeric_distribution),
    "one_bit_mean": Case(
        "numeric", [dict(epsilon=1.0, bounds=(0, 3600)), dict(epsilon=8.0, bounds=(-2, 2))],
        binary_rows, numeric_inputs, numeric_distribution),
    "d_bit_flip": Case(
        "numeric", [dict(epsilon=2.0, bounds=(0, 60), buckets=5, d=2), dict(epsilon=1.0, bounds=(0, 1), buckets=4, d=1),
                    dict(epsilon=4.0, bounds=(-5, 5), buckets=6, d=3)],
        lambda m: ([m.exact_probabilities(v) for v in range(m.buckets)], None), numeric_inputs,
        lambda m, x, seed: m.exact_probabilities(int(m.buckets_of([x])[0]))),
    "randomized_response": Case(
        "binary", [dict(epsilon=1.0), dict(epsilon=8.0)],
        binary_rows, lambda m: [0, 1], numeric_distribution),
    "laplace": Case(
        "numeric", [dict(epsilon=2.0, bounds=(0, 100)), dict(epsilon=8.0, bounds=(-5, 5))],
        laplace_rows, numeric_inputs, numeric_distribution),
    "piecewise": Case(
        "numeric", [dict(epsilon=1.0, bounds=(0, 10), n_cells=64), dict(epsilon=4.0, bounds=(0, 10)),
                    dict(epsilon=0.1, bounds=(-1, 1), n_cells=16)],
        window_rows, numeric_inputs, numeric_distribution),
    "hybrid": Case(
        "numeric", [dict(epsilon=2.0, bounds=(0, 10), n_cells=16), dict(epsilon=0.5, bounds=(0, 1))],
        hybrid_rows, numeric_inputs, numeric_distribution),
    "general_wave": Case(
        "numeric", [dict(epsilon=1.0, bounds=(0, 1440), shape="triangle", n_cells=64),
                    dict(epsilon=2.0, bounds=(0, 1), shape="trapezoid")],
        window_rows, numeric_inputs, numeric_distribution),
    "square_wave": Case(
        "numeric", [dict(epsilon=1.0, bounds=(0, 1440)), dict(epsilon=2.0, bounds=(0, 1), n_cells=64),
                    dict(epsilon=2.0, bounds=(0, 10), n_cells=64, discrete=True)],
        window_rows, numeric_inputs, numeric_distribution),
    "warped_square_wave": Case(
        "numeric", [dict(epsilon=1.0, bounds=(0, 10), knots=(0, 3, 40, 41, 50), n_cells=64),
                    dict(epsilon=4.0, bounds=(-1, 1), knots=tuple(range(0, 2**20 + 1, 2**13)))],
        window_rows, numeric_inputs, numeric_distribution),
    "grr": Case(
        "categorical", [dict(epsilon=1.0, k=5), dict(epsilon=0.1, k=2), dict(epsilon=4.0, k=64)],
        category_rows, category_inputs, category_distribution),
    "hadamard_response": Case(
        "categorical", [dict(epsilon=1.0, k=5), dict(epsilon=3.0, k=64)],
        category_rows, category_inputs, category_distribution),
    "sue": Case(
        "categorical", [dict(epsilon=1.0, k=4), dict(epsilon=0.5, k=6)],
        category_rows, category_inputs, category_distribution, keys=bit_keys),
    "oue": Case(
        "categorical", [dict(epsilon=1.0, k=4), dict(epsilon=4.0, k=5)],
        category_rows, category_inputs, category_distribution, keys=bit_keys),
    "subset_selection": Case(
        "categorical", [dict(epsilon=1.0, k=8), dict(epsilon=0.5, k=6)],  # ω = 2 at ε and 1.25 ε
        category_rows, category_inputs, category_distribution, keys=bit_keys),
    "blh": Case(
        "categorical", [dict(epsilon=1.0, k=4), dict(epsilon=4.0, k=3)],
        local_hash_rows, category_inputs, lambda m, v, seed: local_hash_given_seed(m, v, seed), seeded=True),
    "olh": Case(
        "categorical", [dict(epsilon=2.0, k=5, g=8), dict(epsilon=0.5, k=3)],  # g = 8, the default at ε = 2
        local_hash_rows, category_inputs, lambda m, v, seed: local_hash_given_seed(m, v, seed), seeded=True),
    "pgr": Case(
        "categorical", [dict(epsilon=1.0, k=5, q=3), dict(epsilon=2.0, k=20, variant="hybrid", q=2)],
        category_rows, category_inputs, category_distribution),
    "pi_rappor": Case(
        "categorical", [dict(epsilon=1.0, k=3, p=7), dict(epsilon=2.0, k=4, p=11)],
        category_rows, category_inputs, category_distribution, keys=pair_keys, factory=pirappor_with_prime),
    "count_mean_sketch": Case(
        "categorical", [dict(epsilon=1.0, k=5, width=8, hashes=16), dict(epsilon=4.0, k=3, width=8, hashes=8),
                        dict(epsilon=2.0, k=4, width=256, hashes=256, variant="hcms")],
        sketch_rows, category_inputs, lambda m, v, seed: m.plan.exact_probabilities(v, seed),
        keys=lambda m, r: bit_keys(m, r) if m.variant == "cms" else r.codes.astype(np.int64), seeded=True),
    "pem": Case(
        "items", [dict(epsilon=2.0, item_bits=6, top_k=2, g=8, n_hashes=16, item_type="uint"),
                  dict(epsilon=4.0, item_bits=7, top_k=3, eta=2, g=16, n_hashes=4, item_type="uint")],
        prefix_rows, lambda m: [0, (1 << m.item_bits) - 1],
        lambda m, v, seed: m.plan.exact_probabilities(v, seed), seeded=True),
    "tree_hist": Case(
        "items", [dict(epsilon=1.0, item_bits=5, top_k=2, g=4, n_hashes=8, item_type="uint")],
        prefix_rows, lambda m: [0, (1 << m.item_bits) - 1],
        lambda m, v, seed: m.plan.exact_probabilities(v, seed), seeded=True),
    "padding_sampling": Case(
        "sets", [dict(epsilon=2.0, k=4, ell=3), dict(epsilon=0.5, k=3, ell=1), dict(epsilon=4.0, k=3, ell=5)],
        local_set_rows, lambda m: [frozenset(), frozenset({0}), frozenset(range(m.k))],
        lambda m, v, seed: m.plan.exact_probabilities(v)),
    "padding_sampling_olh": Case(
        "sets", [dict(epsilon=2.0, k=4, ell=2, g=8), dict(epsilon=1.0, k=3, ell=1)],  # tight: ℓ = 1, or collisions
        local_set_hash_rows, lambda m: [frozenset(), frozenset({0}), frozenset(range(m.k))],
        lambda m, v, seed: m.plan.exact_probabilities(v, seed), seeded=True),
    "hierarchical_histogram": Case(
        "numeric", [dict(epsilon=1.0, bounds=(0, 10), n_leaves=16, branching=4, oracle="grr"),
                    dict(epsilon=2.0, bounds=(0, 1), n_leaves=10, branching=3, oracle="hadamard"),
                    dict(epsilon=1.0, bounds=(0, 10), n_leaves=16, branching=2, oracle="olh"),
                    dict(epsilon=2.0, bounds=(-3, 9), branching=3, oracle="grr", discrete=True),
                    dict(epsilon=1.0, bounds=(0, 20), branching=4, oracle="olh", discrete=True)],
        hierarchy_rows, lambda m: [leaf_value(m, t) for t in (0, m.n_leaves // 2 + 1, m.n_leaves - 1)],
        hierarchy_distribution,
        seeded=None),  # seeded exactly when a level hashes (see `is_seeded`)
}


def is_seeded(case, m):
    return m.plan.packed if case.seeded is None else case.seeded


def build(name, **kwargs):
    case = CASES[name]
    return (case.factory or registered()[name])(**kwargs)


def _instances():
    out = []
    for name in registered():
        case = CASES.get(name)
        settings = case.settings if case is not None else [None]
        for i, kw in enumerate(settings):
            out.append(pytest.param(name, kw, id=f"{name}-{i}"))
    return out


INSTANCES = _instances()
NAMES = list(registered())
#: Registered mechanisms of numerical values within public bounds (those without a case are in NAMES, and fail).
NUMERIC = [n for n in NAMES if n in CASES and CASES[n].kind == "numeric"]


def case_of(name):
    if name not in CASES:
        pytest.fail(f"registered mechanism {name!r} has no entry in tests/common/test_common.py CASES: add one")
    return CASES[name]


def instance(name, kwargs):
    case_of(name)
    return build(name, **kwargs)


def test_every_registered_mechanism_has_a_case():
    missing = sorted(set(registered()) - set(CASES))
    assert not missing, f"registered mechanisms without a common-test case: {missing}"
    assert not set(CASES) - set(registered()), "cases for mechanisms that are not registered"


def test_cli_offers_the_registered_numerical_mechanisms():
    from ldpnum import cli

    offered = cli.cli_mechanisms()
    assert {"square_wave", "laplace", "hierarchical_histogram"} <= set(offered)
    assert not {"grr", "olh", "randomized_response"} & set(offered)  # no public bounds to give
    for alias, full in cli.MECHANISM_ALIASES.items():
        assert registered()[full].name == full and (alias == full or alias in registered()[full].aliases)
    with pytest.raises(cli.CLIError, match="not a mechanism for numerical columns"):
        cli.make_mechanism("grr", 1.0, (0, 1))


# -- (a) exact ε ---------------------------------------------------------------------------------------------

def exact_check(name, m, epsilon):
    rows, ratio = CASES[name].rows(m)
    if ratio is not None and rows:
        assert max_ratio(rows) <= ratio  # the structural maximum bounds the rows it stands for
    return check_exact_epsilon(rows, epsilon, ratio=ratio)


@pytest.mark.parametrize("name,kwargs", INSTANCES)
def test_exact_epsilon(name, kwargs):
    """Rows sum to 1, every ratio is ≤ e^ε (rigorous, in rationals), and the largest reaches e^ε."""
    m = instance(name, kwargs)
    exact_check(name, m, m.epsilon)


# -- (b) kernel vs plan -------------------------------------------------------------------------------------

def prepared(m, x, n):
    """``n`` copies of ``x`` as the kernel takes them: through the mechanism's own validation hook."""
    return m.prepare_values(np.full(n, x))


def sample(m, x, n, seed, seed_word=None):
    """``n`` reports of value ``x`` from the kernel (through ``privatize``, or with every record's word 0 set
    to ``seed_word``, the hash seed)."""
    if seed_word is None:
        return m.privatize(np.full(n, x), rng=seed)
    c = m.words_per_record
    words = np.random.default_rng(seed).bit_generator.random_raw(n * c)
    words[0::c] = seed_word
    out = m._allocate_reports(n)
    m._run_kernel(prepared(m, x, n), words, out)
    out.flags.writeable = False
    return ldp.Reports(out, m.spec)


def twin(name, m, sampler, n=N_TWIN, recode=None):
    """Chi-square of the kernel's reports (from ``sampler``; ``recode`` maps its reports into ``m``'s
    alphabet if they differ) against ``m``'s exact distribution, for each input of the case (and two seed
    words when seeded)."""
    case = CASES[name]
    seeds = SEEDS[:2] if is_seeded(case, m) else [None]
    for i, x in enumerate(case.inputs(m)):
        for j, s in enumerate(seeds):
            r = sample(sampler, x, n, seed=1000 + 10 * i + j, seed_word=s)
            if recode is not None:
                r = recode(r)
            keys = case.keys(sampler, r) if case.keys else r.codes
            exact = case.distribution(m, x, s)
            outcomes = list(exact)
            got, cnt = np.unique(np.asarray(keys), return_counts=True)
            counts = dict(zip((int(g) for g in got), cnt.tolist()))
            stray = set(counts) - set(outcomes)
            if stray:
                raise PrivacyViolation(f"{len(stray)} reported output(s) have no probability in the plan, "
                                       f"e.g. {min(stray)}")
            check_kernel_matches([counts.get(o, 0) for o in outcomes], [float(exact[o]) for o in outcomes])


@pytest.mark.parametrize("name,kwargs", INSTANCES)
def test_kernel_matches_plan(name, kwargs):
    m = instance(name, kwargs)
    twin(name, m, m)


# -- (d) bad inputs: the right error, and nothing randomized ---------------------------------------------------

@pytest.fixture
def no_draws(monkeypatch):
    """Fail the test if any random word is drawn."""
    def forbidden(self, n):
        raise AssertionError("random words were drawn for a bad input")
    monkeypatch.setattr(_random.WordSource, "draw", forbidden)


BAD_EPSILONS = [(np.nan, ValueError), (np.inf, ValueError), (-np.inf, ValueError), (0.0, ValueError),
                (-0.0, ValueError), (-1.0, ValueError), (20.0000001, ValueError), (True, TypeError),
                ("1", TypeError), (None, TypeError), (1 + 0j, TypeError), (np.array([1.0]), TypeError)]


@pytest.mark.parametrize("name", NAMES)
def test_bad_epsilon(name):
    kwargs = dict(case_of(name).settings[0])
    for eps, exc in BAD_EPSILONS:
        kwargs["epsilon"] = eps
        with pytest.raises(exc, match="epsilon"):
            build(name, **kwargs)
    for eps in (np.float32(1.0), np.float64(2.0), 3, np.int64(1), 20):
        kwargs["epsilon"] = eps
        assert build(name, **kwargs).epsilon == float(eps)


def bad_values(m):
    """``(x, error type, message)`` of the bad-input matrix for the mechanism's kind of input (the message,
    where given, must name the count and the first index of the bad records)."""
    kind = CASES[m.name].kind
    wrong_kinds = [np.array(["a", "b"]), np.array([1 + 2j]), np.array(["2020-01-01"], dtype="datetime64[D]"),
                   np.array([1.0, None], dtype=object), pd.Series(["a", "b"])]
    common = [(x, TypeError, None) for x in wrong_kinds]
    common += [(np.zeros((3, 2), dtype=np.int64), ValueError, "one-dimensional")]
    if kind == "items":
        top = 1 << m.item_bits
        return [(x, TypeError, None) for x in wrong_kinds] + [  # strings: TypeError, as m holds uint items
            (np.zeros((3, 2), dtype=np.int64), ValueError, "one-dimensional"),
            (np.array([0, -1, 2]), ValueError, "1 item.* negative, first at index 1"),
            (np.array([0, 1, top, top]), ValueError, "2 item.* first at index 2"),
            (np.array([0.0, 1.0]), TypeError, None), (np.array([True]), TypeError, None),
            (pd.array([0, None], dtype="Int64"), ValueError, "1 item.* missing, first at index 1")]
    if kind == "sets":
        k = m.k
        return [(x, TypeError, None) for x in wrong_kinds] + [
            ([{0}, None], TypeError, "1 entries are not, first at index 1"),
            ([{0}, {-1}, {1}], ValueError, "1 set.* first at index 1"),
            ([{0}, {1}, {k}, {k, 0}], ValueError, "2 set.* first at index 2"),
            ([[0, 1], [1, 1]], ValueError, "1 list.* repeat an item, first at index 1"),
            ([{0}, {0.5}], TypeError, "person 1"), ([[True]], TypeError, None),
            (np.zeros((3, k + 1), dtype=bool), ValueError, "one column per candidate"),
            (np.zeros((3, k)), TypeError, None), (np.full((2, k), 2), ValueError, "first at index 0"),
            (np.zeros((2, 2, 2), dtype=bool), ValueError, "one-dimensional")]
    if kind == "categorical":
        return common + [(np.array([0, -1, 2]), ValueError, "1 value.* first at index 1"),
                         (np.array([0, 1, m.k, m.k]), ValueError, "2 value.* first at index 2"),
                         (np.array([0.0, 1.0]), TypeError, None), (np.array([0, np.nan]), TypeError, None),
                         (pd.array([0, None], dtype="Int64"), ValueError, "1 missing.* first at index 1"), (np.array([True]), TypeError, None)]
    mid = sum(m.bounds) / 2 if kind == "numeric" else 0.0
    out = common + [(np.array([mid, np.nan, mid, np.nan]), ValueError, "has 2 missing.* first at index 1"),
                    (np.array([np.inf]), ValueError, "first at index 0"),
                    (np.array([mid, -np.inf]), ValueError, "first at index 1"),
                    (pd.array([mid, None], dtype="Float64"), ValueError, "1 missing.* first at index 1")]
    if kind == "numeric":
        out.append((np.array([True, False]), TypeError, None))
    else:
        out.append((np.array([0.0, 0.5]), ValueError, "first at index 1"))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_bad_inputs_raise_before_any_draw(name, no_draws):
    m = instance(name, case_of(name).settings[0])
    for x, exc, msg in bad_values(m):
        with pytest.raises(exc, match=msg):
            m.privatize(x, rng=0)
    for rng, exc in [(True, TypeError), (-1, ValueError), (1.5, TypeError), (np.random.RandomState(0), TypeError)]:
        with pytest.raises(exc):
            m.privatize(valid_input(m, 3), rng=rng)


BAD_BOUNDS = [(None, ValueError, "bounds is required"), ((1, 1), ValueError, "low < high"),
              ((2, 1), ValueError, "low < high"), ((0, np.inf), ValueError, "finite"),
              ((np.nan, 1), ValueError, "finite"), ((0, 1, 2), ValueError, "pair"), ("ab", TypeError, "pair"),
              (5, TypeError, "pair"), ((0, "1"), TypeError, "high must be a real number"),
              ((True, 2), TypeError, "low must be a real number")]


@pytest.mark.parametrize("name", NUMERIC)
def test_bad_bounds(name):
    kwargs = dict(case_of(name).settings[0])
    for bounds, exc, msg in BAD_BOUNDS:
        with pytest.raises(exc, match=msg):
            build(name, **{**kwargs, "bounds": bounds})


@pytest.mark.parametrize("name", NUMERIC)
def test_out_of_range_values_are_clipped_with_a_warning(name):
    """Finite values outside the bounds are clipped with a counted warning (categories outside [0, k) and
    non-0/1 bits raise instead: test_bad_inputs_raise_before_any_draw)."""
    m = instance(name, case_of(name).settings[0])
    low, high = m.bounds
    width = high - low
    x = np.array([low + width / 2, high + width, low - width / 3, high, high + 2 * width])
    with pytest.warns(ldp.ClippingWarning, match=r"3 finite value\(s\) outside bounds .* first at index 1") as rec:
        r = m.privatize(x, rng=3)
    assert rec[0].message.count == 3 and rec[0].message.first_index == 1
    assert r == m.privatize(np.clip(x, low, high), rng=3)
    with pytest.raises(ValueError, match="outside bounds"):
        m.privatize(x, out_of_range="raise", rng=3)


def accepted_forms(m):
    """Equivalent spellings of one input: dtypes, byte orders, strided views, lists, pandas (nullable) Series."""
    if CASES[m.name].kind == "items":
        base = np.array([0, (1 << m.item_bits) - 1, 1, 0, 5, 1], dtype=np.uint64)
        return base, [base.astype(np.int64), base.astype(np.uint8), base.astype(">u8"), np.repeat(base, 2)[::2],
                      [int(v) for v in base], pd.Series(base.astype(np.int64)), pd.Series(base, dtype="Int64")]
    if CASES[m.name].kind == "sets":
        base = np.zeros((5, m.k), dtype=bool)
        base[0, [0, m.k - 1]] = True
        base[2, 1] = base[4, :] = True
        lists = [np.flatnonzero(r).tolist() for r in base]
        return base, [[set(v) for v in lists], tuple(frozenset(v) for v in lists), [v[::-1] for v in lists],
                      pd.Series(lists), np.array([tuple(v) for v in lists] + [None], dtype=object)[:-1],
                      base.astype(np.uint8), np.asfortranarray(base)]
    if CASES[m.name].kind == "categorical":
        base = np.array([0, m.k - 1, 1, 0, m.k - 1, 1], dtype=np.int64)
        return base, [base.astype(np.int32), base.astype(np.uint8), base.astype(">i8"), np.repeat(base, 2)[::2],
                      list(base), pd.Series(base), pd.Series(base, dtype="Int64")]
    if CASES[m.name].kind == "binary":
        base = np.array([0.0, 1.0, 1.0, 0.0])
        return base, [base.astype(bool), base.astype(np.int8), base.astype(np.float32), list(base),
                      pd.Series(base, dtype="Float64")]
    low, high = m.bounds
    base = low + (high - low) * np.array([0.0, 0.25, 0.5, 1.0, 0.75, 0.0])  # exact in float16 on unit bounds
    forms = [base.astype(">f8"), np.repeat(base, 2)[::2], pd.Series(base), list(base),
             pd.Series(base, dtype="Float64")]
    if (low, high) == (0, 1):
        forms += [base.astype(np.float32), base.astype(np.float16)]
    return base, forms


@pytest.mark.parametrize("name", NAMES)
def test_accepted_forms_agree(name):
    """Every accepted dtype, byte order and container gives the reports of the canonical array (they are
    converted before the kernel, which sees one signature)."""
    m = instance(name, case_of(name).settings[0])
    base, forms = accepted_forms(m)
    ref = m.privatize(base, rng=9)
    for x in forms:
        assert m.privatize(x, rng=9) == ref


@pytest.mark.parametrize("name", NAMES)
def test_empty_input(name):
    m = instance(name, case_of(name).settings[0])
    r = m.privatize(valid_input(m, 0), rng=0)
    assert len(r) == 0 and r.codes.dtype.kind == "u" and r.spec == m.spec
    assert m.aggregate(r).n_reports == 0 and m.aggregate(r) == m.empty_aggregate()
    estimators = [e for e in ("estimate_mean", "estimate_frequencies", "estimate_ranges", "estimate_distribution",
                              "estimate_heavy_hitters")
                  if hasattr(m, e)]
    assert estimators
    for e in estimators:
        with pytest.raises(ValueError, match="no reports"):
            getattr(m, e)(r)


def launched_kernels(monkeypatch, calls):
    """``{name: kernels}``: the kernels of ldpnum/_kernels that each name's calls launch (helpers that Numba
    inlines into a kernel are not launched, and are left out)."""
    seen = []
    original = _jit.Kernel.__call__

    def spy(self, *args):
        if not self.inline:
            seen.append(self)
        return original(self, *args)

    monkeypatch.setattr(_jit.Kernel, "__call__", spy)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, call in calls:
            del seen[:]
            call()
            out.setdefault(name, set()).update(seen)
    monkeypatch.setattr(_jit.Kernel, "__call__", original)
    return out


def signature_problems(launched):
    """What breaks the one-input-signature rule: names that launched no kernel (so no kernel of theirs is
    checked), and kernels compiled for several input types."""
    problems = [f"{name} launched no kernel of ldpnum/_kernels" for name, ks in launched.items() if not ks]
    for k in sorted(set().union(*launched.values()), key=lambda k: (k.__module__, k.__qualname__)):
        inputs = {str(sig[0]) for sig in k.signatures}
        if len(inputs) != 1:
            problems.append(f"{k.__module__}.{k.__qualname__} has {len(inputs)} input signature(s): {sorted(inputs)}")
    return problems


def signature_calls(names):
    """``(name, call)`` pairs privatizing every accepted form of input (dtypes, byte orders, containers) with
    every instance of each mechanism's case."""
    calls = []
    for name in names:
        for kwargs in case_of(name).settings:
            m = build(name, **kwargs)
            if getattr(m, "discrete", False):  # integer values only (non-integers are refused)
                base = valid_input(m, 6)
                forms = [base.astype(np.float32), base.astype(">f8"), list(base), pd.Series(base, dtype="Float64")]
            else:
                base, forms = accepted_forms(m)
            for x in (base, *forms):
                calls.append((name, lambda m=m, x=x: m.privatize(x, rng=0)))
    return calls


def test_client_kernels_have_one_input_signature(monkeypatch):
    """dtype normalization happens before dispatch: after every registered mechanism has seen every input form
    it accepts, each kernel it launched has one input type (its first argument). A kernel may have one signature
    per output code dtype (uint8 for alphabets up to 256 cells, uint16 above). The kernels checked are those the
    registered mechanisms launch (no list of them is kept), and every mechanism must launch one. The compiled
    tier is forced: signatures are what it compiles (small calls would otherwise run the Python source)."""
    monkeypatch.setattr(_jit, "MODE", "compile")
    launched = launched_kernels(monkeypatch, signature_calls(NAMES))
    assert set(launched) == set(NAMES)
    assert len(set().union(*launched.values())) > 15
    assert signature_problems(launched) == []


@_jit.jit(parallel=True)
def _planted_copy(values, out):
    for i in prange(values.shape[0]):
        out[i] = values[i]


def test_signature_check_names_a_planted_kernel_and_mechanism(monkeypatch):
    """Negative control: a kernel that reaches two input types, and a mechanism that launches none, are named."""
    monkeypatch.setattr(_jit, "MODE", "compile")
    def launch_copy(dtype):
        _jit.launch(_planted_copy, np.zeros(3, dtype), np.empty(3))

    launched = launched_kernels(monkeypatch, [("planted_a", lambda: launch_copy(np.float64)),
                                              ("planted_a", lambda: launch_copy(np.float32)),
                                              ("planted_b", lambda: None)])
    assert launched["planted_a"] == {_planted_copy} and launched["planted_b"] == set()
    problems = signature_problems(launched)
    assert problems[0] == "planted_b launched no kernel of ldpnum/_kernels"
    assert "_planted_copy has 2 input signature(s)" in problems[1]


# -- (e) reproducibility, chunks, pickling, specs --------------------------------------------------------------

def valid_input(m, n, seed=0):
    """``n`` valid values for the mechanism, spread over its domain."""
    rng = np.random.default_rng(seed)
    kind = CASES[m.name].kind
    if kind == "items":
        return rng.integers(0, 1 << m.item_bits, n, dtype=np.uint64)
    if kind == "sets":
        return rng.random((n, m.k)) < 0.4
    if kind == "categorical":
        return rng.integers(0, m.k, n)
    if kind == "binary":
        return (rng.random(n) < 0.4).astype(np.float64)
    low, high = m.bounds
    if getattr(m, "discrete", False):  # integer values (non-integers are refused)
        return rng.integers(int(low), int(high) + 1, n).astype(np.float64)
    return rng.uniform(low, high, n)


@pytest.mark.parametrize("name,kwargs", INSTANCES)
def test_same_seed_same_reports(name, kwargs):
    m = instance(name, kwargs)
    x = valid_input(m, 5000)
    a = m.privatize(x, rng=42)
    assert a == m.privatize(x, rng=42)
    assert m.privatize(x, rng=np.random.SeedSequence(42)) == m.privatize(x, rng=np.random.default_rng(42))
    if m.epsilon <= 8:  # at ε = 20 a two-output randomizer is all but deterministic
        assert a != m.privatize(x, rng=43)


@pytest.mark.parametrize("name", NAMES)
def test_chunks_and_blocks_equal_one_call(name, monkeypatch):
    """Calls sharing one Generator consume the stream in record order: 7 chunks == one call, and so do the
    blocks a long call is cut into (blocks of 1000 records here); aggregates of the chunks add up."""
    m = instance(name, case_of(name).settings[0])
    x = valid_input(m, 6007)
    whole = m.privatize(x, rng=np.random.default_rng(5))
    g = np.random.default_rng(5)
    parts = [m.privatize(c, rng=g) for c in np.array_split(x, 7)]
    assert ldp.Reports.concat(parts) == whole
    assert ldp.Aggregate.merge([m.aggregate(p) for p in parts]) == m.aggregate(whole)
    monkeypatch.setattr(_random, "BLOCK_RECORDS", 1000)
    monkeypatch.setattr(_random, "BLOCK_WORDS", 1000 * m.words_per_record)
    assert len(_random.block_sizes(len(x), m.words_per_record)) == 7
    assert m.privatize(x, rng=np.random.default_rng(5)) == whole


@pytest.mark.parametrize("name,kwargs", INSTANCES)
def test_pickling_and_specs_round_trip(name, kwargs):
    m = instance(name, kwargs)
    r = m.privatize(valid_input(m, 500), rng=3)
    agg = m.aggregate(r)
    m2 = pickle.loads(pickle.dumps(m))
    assert m2 == m and hash(m2) == hash(m) and m2.spec == m.spec
    assert m2.privatize(valid_input(m, 500), rng=3) == r
    assert pickle.loads(pickle.dumps(r)) == r
    assert not r.codes.flags.writeable
    if r.codes.ndim == 1 and r.codes.dtype != np.uint64:  # one code per report: the smallest dtype that fits
        assert r.codes.dtype == code_dtype(m.n_cells)
    assert pickle.loads(pickle.dumps(agg)) == agg
    assert ldp.from_spec(m.spec) == m
    assert ldp.Spec.from_json(m.spec.to_json()) == m.spec
    assert r.spec == agg.spec == m.spec
    assert m.spec.mechanism == name


# -- negative controls: each checker rejects a planted bug ---------------------------------------------------

def mutant_kwargs(name):
    """The first setting, and the same planned for 1.25 ε."""
    kw = dict(case_of(name).settings[0])
    assert 1.25 * kw["epsilon"] <= 20
    return kw, {**kw, "epsilon": 1.25 * kw["epsilon"]}


@pytest.mark.parametrize("name", NAMES)
def test_exact_check_rejects_inflated_epsilon(name):
    """M5: the mechanism planned for 1.25 ε, checked against ε, must fail (for every registered mechanism)."""
    honest_kw, mutant_kw = mutant_kwargs(name)
    with pytest.raises(PrivacyViolation, match="exceeds"):
        exact_check(name, instance(name, mutant_kw), honest_kw["epsilon"])


@pytest.mark.parametrize("name", NAMES)
def test_exact_check_rejects_untight_plan(name):
    """M6: a plan for ε/2 is private at ε but the guarantee is not tight: the check must say so."""
    honest_kw, _ = mutant_kwargs(name)
    with pytest.raises(PrivacyViolation, match="not tight"):
        exact_check(name, instance(name, {**honest_kw, "epsilon": honest_kw["epsilon"] / 2}), honest_kw["epsilon"])


@pytest.mark.parametrize("name", NAMES)
def test_twin_rejects_a_kernel_off_its_plan(name):
    """M5 sampled: reports of the kernel run at 1.25 ε against the plan at ε must fail the chi-square."""
    honest_kw, mutant_kw = mutant_kwargs(name)
    honest, mutant = instance(name, honest_kw), instance(name, mutant_kw)
    recode = None
    if name == "laplace":  # the clamp margin T depends on ε: compare the noisy values y = code - T
        shift = honest.plan.t - mutant.plan.t
        recode = lambda r: ldp.Reports(r.codes.astype(np.int64) + shift, honest.spec)  # noqa: E731
    with pytest.raises(PrivacyViolation):
        twin(name, honest, mutant, recode=recode)
