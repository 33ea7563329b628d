r"""Server side of the prefix heavy-hitter protocols (PEM, TreeHist): prefix supports and candidate extension.

The aggregate of a prefix protocol is a histogram of codes ``(j·H + h)·g + y`` (group ``j``, hash function
``h`` of a public family of ``H``, randomized hashed prefix ``y``), read here as an array ``counts[j, h, y]``.
Everything below is post-processing of those counts.

**Support of a candidate.** For a candidate prefix ``p`` of group ``j``'s length,

.. math:: I_j(p) = \sum_{h=0}^{H-1} \mathrm{counts}[j, h, \mathrm{hash}_h(p)],

the number of group-``j`` reports that support ``p``, and its frequency estimate among the population is

.. math:: \hat f(p) = \frac{I_j(p)/n_j - q^*}{p^* - q^*}

with ``p*`` GRR's exact keep probability over ``[0, g)`` (from its integer plan) and ``q* = 1/g``, as for
optimized local hashing (Wang, Blocki, Li, Jha). With a hash function drawn uniformly from an ideal family,
``P[hash(p) = hash(v)] = 1/g`` for ``p != v`` and the estimate is unbiased. The family here is finite
(``H`` public functions): for a fixed pair ``p != v`` the fraction ``c(p, v)`` of functions on which they
collide is ``1/g`` only on average, so a person holding ``v`` adds
``f_v (c(p, v) - 1/g)(p* - q_lie)/(p* - q*)`` to the expected estimate of ``p`` (``q_lie = (1 - p*)/(g - 1)``);
``c(p, v) - 1/g`` has standard deviation about ``sqrt(1/(g H))`` over pairs, so this bias averages out
over the many values a candidate meets, and is largest next to a single very heavy item. Measured over
20,000 random 64-bit prefixes against one item, per unit of that item's frequency: standard deviation
1.2e-2 at ε = 2 (g = 8, H = 1024), 4.2e-3 at ε = 4 (g = 56, H = 1024), 2.3e-3 at ε = 8 (g = 2982, H = 64),
each within 5% of ``sqrt(1/(gH))``. An item holding 10% of the people thus shifts another candidate's
estimate by about 4e-4 at ε = 4, under half the standard error of a group of 10^5 reports.

**Standard error.** People are assigned to groups independently of their items, so the ``n_j`` reports of
group ``j`` are a random sample of the population, each supporting ``p`` with probability
``P = q* + f (p* - q*)``: ``Var[f̂] = P(1 - P) / (n_j (p* - q*)²)`` (OLH's variance plus the sampling
variance ``f(1 - f)/n_j`` of the group), evaluated at ``f = clip(f̂, 0, 1)``.

References
----------
T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 2021.
R. Bassily, K. Nissim, U. Stemmer, A. Thakurta, "Practical Locally Private Heavy Hitters", NeurIPS 2017.
T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017.
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["prefix_hash", "prefix_supports", "extend_candidates", "top_indices", "PrefixLevels",
           "estimate_prefix_levels", "support_estimates"]

_M32 = np.uint64(0xFFFF_FFFF)
#: (candidate, function) pairs below which a thread is not worth starting (~1 ms of work).
_WORK_PER_THREAD = 1 << 18
_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)


def prefix_hash(prefixes, hash_a, hash_b, g):
    """``hash_h(p)`` for every prefix ``p`` (rows) and every function ``h`` of the family (columns).

    The kernel's hash, ``floor(mix64(a_h p + b_h) g / 2**64)``, in NumPy uint64 arithmetic (which wraps modulo
    ``2**64``, as the kernel's does); the high word of the product with ``g < 2**32`` from two 32-bit halves.

    Examples
    --------
    >>> import numpy as np
    >>> prefix_hash(np.array([1, 2], np.uint64), np.array([3], np.uint64), np.array([0], np.uint64), 8).shape
    (2, 1)
    """
    p = np.asarray(prefixes, dtype=np.uint64)[:, None]
    z = p * np.asarray(hash_a, dtype=np.uint64)[None, :] + np.asarray(hash_b, dtype=np.uint64)[None, :]
    z ^= z >> np.uint64(33)
    z *= _MIX1
    z ^= z >> np.uint64(33)
    z *= _MIX2
    z ^= z >> np.uint64(33)
    gg = np.uint64(g)
    hi = ((z >> np.uint64(32)) * gg + (((z & _M32) * gg) >> np.uint64(32))) >> np.uint64(32)
    return hi.astype(np.int64)


def prefix_supports(counts_j, prefixes, hash_a, hash_b, g):
    """``I_j(p) = Σ_h counts_j[h, hash_h(p)]`` for every candidate prefix ``p`` (float64).

    Computed by the Cython kernel :func:`ldpnum._kernels.server_prefix.prefix_supports` (the hash in
    registers, no ``candidates × H`` arrays), on two or more threads for large candidate sets; equal to
    ``counts_j[h, prefix_hash(prefixes, hash_a, hash_b, g)[:, h]]`` summed over ``h`` (tested).
    """
    from .._counting import n_threads
    from .._kernels import server_prefix

    counts_j = np.ascontiguousarray(counts_j, dtype=np.int64)
    if counts_j.shape[1] != g:
        raise ValueError(f"counts have {counts_j.shape[1]} hash values per function, not g = {g}")
    prefixes = np.ascontiguousarray(prefixes, dtype=np.uint64)
    hash_a = np.ascontiguousarray(hash_a, dtype=np.uint64)
    hash_b = np.ascontiguousarray(hash_b, dtype=np.uint64)
    out = np.empty(prefixes.size, dtype=np.float64)
    n_slices = max(1, min(n_threads(), prefixes.size * counts_j.shape[0] // _WORK_PER_THREAD))
    if n_slices == 1:
        server_prefix.prefix_supports(counts_j, prefixes, hash_a, hash_b, out)
        return out
    from concurrent.futures import ThreadPoolExecutor

    cuts = [prefixes.size * i // n_slices for i in range(n_slices + 1)]
    with ThreadPoolExecutor(n_slices) as pool:
        list(pool.map(lambda i: server_prefix.prefix_supports(counts_j, prefixes[cuts[i]:cuts[i + 1]], hash_a,
                                                              hash_b, out[cuts[i]:cuts[i + 1]]),
                      range(n_slices)))
    return out


def extend_candidates(kept, extra_bits):
    """Every extension of the kept prefixes by ``extra_bits`` bits: ``(p << d) | e`` for ``e < 2**d``, in the
    order of ``kept`` then ``e``.

    Examples
    --------
    >>> extend_candidates(np.array([1, 3], np.uint64), 1)
    array([2, 3, 6, 7], dtype=uint64)
    """
    kept = np.asarray(kept, dtype=np.uint64)
    ext = np.arange(1 << extra_bits, dtype=np.uint64)
    return ((kept[:, None] << np.uint64(extra_bits)) | ext[None, :]).ravel()


def top_indices(values, count, keys):
    """Indices of the ``count`` largest ``values``, largest first; ties broken by the smaller ``key``."""
    order = np.lexsort((np.asarray(keys), -np.asarray(values)))
    return order[:count]


@dataclass(frozen=True)
class PrefixLevels:
    """What the level-by-level search found: final candidates (full-length items, rank order) with their
    frequency estimates and standard errors, and the bookkeeping of each level."""

    items: np.ndarray
    frequencies: np.ndarray
    standard_errors: np.ndarray
    n_per_group: tuple
    candidates_per_level: tuple
    kept_per_level: tuple = field(default=())


def support_estimates(support, n_j, p_star, q_star):
    """``(f̂, se)`` from the support counts of ``n_j`` reports drawn from the population: the oracle's unbiased
    estimate, and the standard error ``sqrt(P(1 - P)/n_j)/(p* - q*)`` with ``P = q* + clip(f̂, 0, 1)(p* - q*)``
    (each report supports the value with probability ``P`` over the draw of the person: the oracle's noise and
    the sampling of people together)."""
    d = p_star - q_star
    freq = (support / n_j - q_star) / d
    share = q_star + np.clip(freq, 0.0, 1.0) * d
    se = np.sqrt(share * (1.0 - share) / n_j) / d
    return freq, se


def estimate_prefix_levels(counts, lengths, hash_a, hash_b, g, p_star, q_star, n_candidates, top_k,
                           admissible=None):
    """The prefix-extending search over ``counts[j, h, y]`` (see the module docstring).

    Group 0 estimates all ``2**lengths[0]`` prefixes; each later group estimates the extensions of the
    ``n_candidates`` best prefixes of the group before by its ``lengths[j] - lengths[j-1]`` extra bits; the
    last group's estimates of full-length items are returned, best ``top_k`` first. ``admissible(prefixes,
    length)``, when given, is a boolean mask of the candidates that can be prefixes of real items (e.g. not
    invalid UTF-8): the others are never kept (post-processing of public candidates; no privacy cost), so
    noise cannot fill the result with impossible items.

    Raises
    ------
    ValueError
        If there are no reports, or a group has none.
    """
    counts = np.asarray(counts)
    n_per_group = counts.sum(axis=(1, 2))
    if int(n_per_group.sum()) == 0:
        raise ValueError("no reports to estimate heavy hitters from")
    empty = np.flatnonzero(n_per_group == 0)
    if empty.size:
        raise ValueError(f"{empty.size} group(s) of reports are empty (first: group {int(empty[0])} of "
                         f"{counts.shape[0]}); collect more reports, or use fewer groups")
    cands = np.arange(1 << int(lengths[0]), dtype=np.uint64)
    seen, kept_sizes = [], []
    last = len(lengths) - 1
    for j in range(len(lengths)):
        if j:
            cands = extend_candidates(cands, int(lengths[j]) - int(lengths[j - 1]))
        seen.append(int(cands.size))
        support = prefix_supports(counts[j], cands, hash_a, hash_b, g)
        freq, se = support_estimates(support, float(n_per_group[j]), p_star, q_star)
        if admissible is not None:
            ok = np.asarray(admissible(cands, int(lengths[j])), dtype=bool)
            freq, se, cands = freq[ok], se[ok], cands[ok]
        idx = top_indices(freq, top_k if j == last else n_candidates, cands)
        kept_sizes.append(int(idx.size))
        cands = cands[idx]
        if j == last:
            return PrefixLevels(cands, freq[idx], se[idx], tuple(int(v) for v in n_per_group), tuple(seen),
                                tuple(kept_sizes))
    raise AssertionError("unreachable")  # pragma: no cover
