"""Privacy checkers (TESTING.md (a), (b)) used by the tests, each with a negative control in test_privacy.py."""

import math
from fractions import Fraction

import numpy as np
from scipy import stats

from ldpnum.mechanisms._plan import exp_lower

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
