"""Privacy checkers (TESTING.md (a), (b), (c) C1) used by the tests, each with negative controls in test_privacy.py
(and, over every registered mechanism, in test_common.py)."""

import math
from fractions import Fraction

import numpy as np
from scipy import stats

from ldpnum.plans import exp_lower

ALPHA = 1e-6


class PrivacyViolation(AssertionError):
    pass


def max_ratio(rows):
    """Largest ``P[s][j] / P[s'][j]`` over all rows (states) and outputs; ``inf`` for positive vs zero."""
    outputs = set().union(*rows)
    worst = Fraction(1)
    for j in outputs:
        col = [r.get(j, Fraction(0)) for r in rows]
        hi, lo = max(col), min(col)
        if hi == 0:
            continue
        if lo == 0:
            return math.inf
        worst = max(worst, hi / lo)
    return worst


def check_exact_epsilon(rows, epsilon, *, tight=True, ratio=None):
    """Assert, in exact rationals, that the rows are distributions whose ratios are ≤ e^ε, and reach it.

    ``rows`` is a list of ``{output: Fraction}``; ``ratio`` may be passed when it was computed by a
    structural reduction instead of from all rows. Bound: ratio ≤ E, a rigorous lower bound of e^ε.
    Tightness: ratio ≥ e^ε (1 - 1e-6); integer thresholds over 2**53 resolve the ratio
    to about (1 + e^ε)/2**53 (5e-8 at ε = 20), and a wrong formula misses by far more. Raises :class:`PrivacyViolation` otherwise.
    """
    for r in rows:
        if sum(r.values()) != 1:
            raise PrivacyViolation(f"probabilities sum to {float(sum(r.values()))}, not 1")
        if min(r.values()) < 0:
            raise PrivacyViolation("negative probability")
    worst = max_ratio(rows) if ratio is None else ratio
    if worst == math.inf or worst > exp_lower(epsilon):
        raise PrivacyViolation(f"realized ratio {float(worst)!r} exceeds e^epsilon = {math.exp(epsilon)!r}")
    if tight and worst < Fraction(math.exp(epsilon)) * (1 - Fraction(1, 10**6)):
        raise PrivacyViolation(f"realized ratio {float(worst)!r} does not reach e^epsilon = {math.exp(epsilon)!r}: "
                               "the guarantee is not tight (wrong formula?)")
    return worst


def merged_chisquare(counts, probs, min_expected=20.0):
    """Chi-square p-value of observed counts against exact probabilities, merging consecutive cells
    until each merged cell expects at least ``min_expected`` observations."""
    counts = np.asarray(counts, float)
    probs = np.asarray(probs, float)
    n = counts.sum()
    obs, exp = [], []
    acc_o = acc_e = 0.0
    for o, p in zip(counts, probs):
        acc_o += o
        acc_e += p * n
        if acc_e >= min_expected:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0 or acc_o > 0:
        if exp:
            obs[-1] += acc_o
            exp[-1] += acc_e
        else:
            obs, exp = [acc_o], [acc_e]
    if len(exp) < 2:
        return 1.0
    exp = np.array(exp) * (np.sum(obs) / np.sum(exp))
    return float(stats.chisquare(obs, exp).pvalue)


def check_kernel_matches(counts, probs):
    """Raise PrivacyViolation if sampled counts are inconsistent with the exact probabilities (α = 1e-6)."""
    p = merged_chisquare(counts, probs)
    if p < ALPHA:
        raise PrivacyViolation(f"sampled frequencies do not match the plan (chi-square p = {p:.3g})")
    return p


def check_input_free_alphabet(outputs_by_input, alphabet, *, every_output=False):
    """C1 (TESTING.md (c)): the outputs of every input are, bit for bit, elements of one alphabet fixed
    before any input is seen; with ``every_output``, every input also reaches every element (so no input
    can be told by the outputs it can or cannot produce; use it when the sample covers the alphabet).

    ``outputs_by_input`` maps each input to the array of its outputs (integer codes or floats);
    ``alphabet`` is the array the plan defines. Floats are compared by their bit patterns, so ``-0.0`` and
    ``0.0`` differ, and so do two floats one ulp apart. Raises :class:`PrivacyViolation`.
    """
    def bits(a):
        a = np.asarray(a)
        if a.dtype.kind == "f":
            return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)
        if a.dtype.kind not in "iu":
            raise PrivacyViolation(f"outputs of dtype {a.dtype} are neither codes nor floats")
        return a.astype(np.int64).view(np.uint64) if a.dtype.kind == "i" else a.astype(np.uint64)

    table = np.unique(bits(alphabet))
    for x, out in outputs_by_input.items():
        got = np.unique(bits(out))
        if (np.asarray(out).dtype.kind == "f") != (np.asarray(alphabet).dtype.kind == "f"):
            raise PrivacyViolation(f"outputs for input {x!r} are of dtype {np.asarray(out).dtype}, "
                                   f"the alphabet of {np.asarray(alphabet).dtype}")
        stray = np.setdiff1d(got, table, assume_unique=True)
        if stray.size:
            raise PrivacyViolation(f"{stray.size} distinct output(s) for input {x!r} are outside the "
                                   "input-free alphabet")
        if every_output and got.size != table.size:
            raise PrivacyViolation(f"input {x!r} reached {got.size} of the {table.size} outputs: the "
                                   "alphabet depends on the input")
