"""Client kernel of subset selection (Numba; design rule R6).

Record ``i`` reads ``c = 1 + ω - ⌊ω/4⌋`` words, ``[c i, c (i + 1))``:

- word 0 decides whether the true category ``v`` joins the subset (``(w >> 11) < t_inc``, over 2**53);
- the other words hold ``ω`` 48-bit *fields*, four in each group of three words ``w0, w1, w2``: the top 48
  bits of each (``w >> 16``) and their low 16 bits together, ``(w0 & 0xFFFF)·2**32 + (w1 & 0xFFFF)·2**16 +
  (w2 & 0xFFFF)``; a last group of ``ω mod 4`` words gives one field each (its top 48 bits). Fields are
  disjoint bits of independent uniform words, hence independent uniform 48-bit draws.
- The fields drive *Floyd's algorithm* drawing a uniform ``r``-subset of ``n`` indices (``n = k - 1``: the
  categories other than ``v``), ``r = ω - 1`` if ``v`` joined and ``r = ω`` otherwise. Field ``s`` is the
  pick at ``j = n - ω + s``: ``t = uniform(field, j + 1)``, a 48-bit choice among the indices ``0..j``
  (``uniform_inline`` on the field in the top bits); it adds index ``t``, or index ``j`` if ``t`` is already
  in. Field 0 (``j = n - ω``) is the first pick when ``r = ω`` and unused when ``r = ω - 1``, so the picks
  run are always those at ``j = n - r, ..., n - 1``, Floyd's sequence.
- Index ``t ∈ [0, n)`` is category ``t + (t >= v)`` (the categories other than ``v`` in order): the picks
  fill a bitmask of indices and the bits at ``v`` and above move up by one at the end.
- An unknown value (``-1``) gets a uniform ``ω``-subset of all ``k`` categories: ``n = k``, ``r = ω``, no
  category skipped, the same ``ω`` fields (word 0 unused).

Four fields in three words, not one per word: 25% fewer words for the same 48-bit picks (the same exact
probabilities); drawing the words is about half of the CPU time per record at ``k = 1024``.

Constant work. Every record runs the same ``ω`` picks whatever its value and coin: field 0 always runs its
pick and writes ``1 - coin`` (no collision is possible on the first pick), and the collision choice is
arithmetic, not a branch, so neither the time nor the memory addresses touched depend on the coin; the
index-to-category shift is the same word operations for every ``v``.

Speed. Membership is kept as one byte per index (``flags``), not as bits: a pick is one load and two plain
stores (``hit = flags[t]; flags[j] = hit; flags[t] = 1``; ``j`` is never in the subset before its pick, and
the order makes ``t = j`` come out right), where a bitmask needs two read-modify-writes of words that later
picks load again. The flags are then gathered eight at a time into bits by one multiplication
(``(x · 0x0102040810204080) >> 56`` maps bytes ``b_0..b_7``, each 0 or 1, of a little-endian word to bits
``0..7``; Numba targets little-endian processors only). Measured at ``k = 1024`` (one thread, in cache):
about 0.6x the time per record of a bitmask kept in the output row. For ``k <= 64`` the whole subset is one
64-bit mask held in a register (a pick is shifts and ors, no memory): about half the time per record of the
byte flags at ``k = 16``. Both paths run the same picks on the same fields (:func:`floyd_picks_inline`).

The subset is written as a bitmask (bit ``j`` of byte ``j // 8``, least significant first): the wire format
is canonical, nothing about the order of the picks or the true value is in it.
"""

import numpy as np

from ._jit import jit, prange
from .client_numeric import bernoulli_inline, uniform_inline

U1 = np.uint64(1)
U2 = np.uint64(2)
U16 = np.uint64(16)
U32 = np.uint64(32)
U56 = np.uint64(56)
U63 = np.uint64(63)
U255 = np.uint64(255)
LOW16 = np.uint64(0xFFFF)
ZERO = np.uint64(0)
GATHER8 = np.uint64(0x0102040810204080)

#: Records per task of the parallel loop (each task allocates its scratch arrays once).
CHUNK = 128


@jit(inline=True)
def fourth_field_inline(w0, w1, w2):
    """The fourth 48-bit field of a group of three words (their low 16 bits), where ``uniform_inline`` reads a field.

    It is shifted to the top 48 bits of a word.
    """
    return (((w0 & LOW16) << U32) | ((w1 & LOW16) << U16) | (w2 & LOW16)) << U16


@jit(inline=True)
def floyd_pick_inline(flags, field, j):
    """Floyd's pick at ``j`` on the membership bytes ``flags``: add ``t = uniform(field, j + 1)``, or ``j``.

    ``j`` is added if ``t`` is already in. ``flags[j]`` is 0 before the pick; storing it before ``flags[t]`` handles ``t
    = j``.

    Unsigned indices spare Numba's negative-index wrap-around on the three accesses: measured 400 → 278 ns
    per record at ``k = 1024`` (one thread, in cache).
    """
    t = np.uint64(uniform_inline(field, j + 1))
    hit = flags[t]
    flags[np.uint64(j)] = hit
    flags[t] = 1
    return flags


@jit(inline=True)
def floyd_pick_word_inline(mask, field, j):
    """Floyd's pick at ``j`` on a one-word bitmask (``k <= 64``): the new mask, kept in a register."""
    t = np.uint64(uniform_inline(field, j + 1))
    return mask | (U1 << t) | (((mask >> t) & U1) << np.uint64(j))


@jit(inline=True)
def floyd_picks_inline(state, pick, words, base, j0, omega):
    """Run ``state = pick(state, field, j)`` for fields ``1..ω-1`` of the record at word ``base``.

    Field ``s`` is at ``j = j0 + s``; field 0 is the caller's. The one place that knows the four-in-three field layout.
    """
    n_groups = omega >> 2
    for g in range(n_groups):
        w = base + np.uint64(1 + 3 * g)
        w0 = words[w]
        w1 = words[w + U1]
        w2 = words[w + U2]
        j = j0 + 4 * g
        if g > 0:
            state = pick(state, w0, j)
        state = pick(state, w1, j + 1)
        state = pick(state, w2, j + 2)
        state = pick(state, fourth_field_inline(w0, w1, w2), j + 3)
    w = base + np.uint64(1 + 3 * n_groups)
    for q in range(1 if n_groups == 0 else 0, omega & 3):
        state = pick(state, words[w + np.uint64(q)], j0 + 4 * n_groups + q)
    return state


@jit(inline=True)
def record_head_inline(values, words, i, c, k, omega, t_inc):
    """Record ``i``'s value ``v``, first word, ``j0 = n - ω`` and coin.

    ``n = k`` for an unknown value, else ``k - 1``; the coin says whether ``v`` joins the subset (always 0 for an
    unknown value).

    Word indices are unsigned: Numba adds a negative-index wrap-around to every load with a signed index
    (measured 8% of the record time at ``k = 16``).
    """
    v = values[i]
    base = np.uint64(c) * np.uint64(i)
    if v < 0:
        return v, base, k - omega, 0
    return v, base, k - 1 - omega, np.int64(bernoulli_inline(words[base], t_inc))


@jit(inline=True)
def gather_bits_inline(flags64, mask, nb):
    """Pack the membership bytes (``8 nb`` of them, read as ``nb`` words) into the bitmask words ``mask``."""
    for w in range(mask.shape[0]):
        mask[w] = ZERO
    for g in range(nb):
        mask[g >> 3] |= ((flags64[g] * GATHER8) >> U56) << np.uint64(8 * (g & 7))


@jit(inline=True)
def insert_gap_inline(mask, v):
    """Move the bits at positions ``>= v`` up by one, leaving bit ``v`` clear: indices to categories.

    The same operations on every word whatever ``v``: of word ``w``, the bits below ``v`` stay and those above
    ``v`` come from the word shifted up by one.
    """
    for w in range(mask.shape[0] - 1, -1, -1):
        mask[w] = gap_word_inline(mask[w], mask[w - 1] >> U63 if w > 0 else ZERO, v - 64 * w)


@jit(inline=True)
def gap_word_inline(cur, below, b):
    """One word of :func:`insert_gap_inline`: the gap at bit ``b`` of this word.

    None if ``b`` is past it, the whole word shifted if ``b < 0``; ``below`` is the bit carried in from the word beneath
    (0 or 1).
    """
    return (cur & low_bits_inline(b)) | (((cur << U1) | below) & ~low_bits_inline(b + 1))


@jit(inline=True)
def low_bits_inline(b):
    """The word with its lowest ``min(max(b, 0), 64)`` bits set (no branch, no shift by 64)."""
    lo = min(max(b, 0), 64)
    return ((U1 << np.uint64(lo & 63)) - U1) | (ZERO - np.uint64(lo >> 6))


@jit(parallel=True)
def subset_kernel(values, k, omega, t_inc, words, out):
    """Subset selection, ``1 + omega - omega // 4`` words per record; ``out`` is ``(n, ceil(k/8))`` uint8."""
    c = 1 + omega - (omega >> 2)
    nb = out.shape[1]
    nw = (nb + 7) >> 3
    wide = (nb & 7) == 0
    n = values.shape[0]
    if nw == 1:  # k <= 64: the whole subset in one register
        for i in prange(n):
            v, base, j0, inc = record_head_inline(values, words, i, c, k, omega, t_inc)
            # field 0 (top of word 1): the pick at j = n - omega, made only when v stays out
            m = np.uint64(1 - inc) << np.uint64(uniform_inline(words[base + U1], j0 + 1))
            m = floyd_picks_inline(m, floyd_pick_word_inline, words, base, j0, omega)
            if v >= 0:  # indices to categories, then bit v = coin
                # gap_word_inline with the gap known to fall inside the word (v < k <= 64): no clamping of
                # the gap position to the word; 12% of the record time at k = 16
                low = (U1 << np.uint64(v)) - U1
                m = (m & low) | ((m & ~low) << U1) | (np.uint64(inc) << np.uint64(v))
            for b in range(nb):
                out[np.uint64(i), np.uint64(b)] = np.uint8((m >> np.uint64(8 * b)) & U255)
        return
    for chunk in prange((n + CHUNK - 1) // CHUNK):
        flags64 = np.empty(nb, np.uint64)  # one byte per index: 8 nb >= k bytes
        flags = flags64.view(np.uint8)
        mask = np.empty(nw, np.uint64)
        for i in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
            for g in range(nb):
                flags64[g] = ZERO
            v, base, j0, inc = record_head_inline(values, words, i, c, k, omega, t_inc)
            flags[uniform_inline(words[base + U1], j0 + 1)] = np.uint8(1 - inc)  # field 0, as above
            floyd_picks_inline(flags, floyd_pick_inline, words, base, j0, omega)
            gather_bits_inline(flags64, mask, nb)
            if v >= 0:
                insert_gap_inline(mask, v)
                mask[v >> 6] |= np.uint64(inc) << np.uint64(v & 63)
            row = out[i]
            if wide:
                row64 = row.view(np.uint64)
                for b in range(nw):
                    row64[b] = mask[b]
            else:
                for b in range(nb):
                    row[b] = np.uint8((mask[b >> 3] >> np.uint64(8 * (b & 7))) & U255)
