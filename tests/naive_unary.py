"""Slow, obviously-correct references for the unary encodings (SUE/OUE): one record, one bit at a time.

(To be merged into tests/naive.py.) ``unary`` takes the same words the kernel consumed and must reproduce
its packed reports bit for bit; ``enumerate_reports`` is an independent enumeration of the exact report
distribution of independent bits, to cross-check ``UnaryPlan.exact_probabilities``.
"""

import itertools
from fractions import Fraction

import numpy as np


def unary_bits(v, k, lane_bits, t_other, t_true, record_words, mutant=None):
    """The ``k`` report bits of one person from the record's words (``v = -1``: unknown).

    Word 0 decides the true bit (``(w >> 11) < t_true``); report bit ``s`` is lane ``s % L`` of word
    ``1 + s // L`` (``L = 64 // lane_bits`` lanes per word, lane ``l`` = bits ``[l*b, (l+1)*b)``), set iff the
    lane is below ``t_other``. ``mutant="or"`` plants pure-ldp's UE bug: the true bit is the noise bit OR'ed
    with the coin instead of being replaced by it.
    """
    per_word = 64 // lane_bits
    mask = (1 << lane_bits) - 1
    bits = []
    for s in range(k):
        w = int(record_words[1 + s // per_word])
        lane = (w >> (lane_bits * (s % per_word))) & mask
        bits.append(1 if lane < t_other else 0)
    if v >= 0:
        coin = 1 if (int(record_words[0]) >> 11) < t_true else 0
        bits[v] = (bits[v] | coin) if mutant == "or" else coin
    return bits


def unary(values, k, lane_bits, t_other, t_true, words, mutant=None):
    """Packed reports ``(n, ceil(k/8))`` uint8 of all records, words consumed ``c`` per record in order."""
    n_bytes = -(-k // 8)
    c = 1 + n_bytes * lane_bits // 8
    out = np.zeros((len(values), n_bytes), dtype=np.uint8)
    for i, v in enumerate(values):
        bits = unary_bits(int(v), k, lane_bits, t_other, t_true, words[c * i: c * i + c], mutant)
        for j, bit in enumerate(bits):
            if bit:
                out[i, j // 8] |= 1 << (j % 8)
    return out


def enumerate_reports(bit_probs):
    """``{report: Fraction}`` for independent bits with the given probabilities of 1 (report bit j = bit j of
    the integer key), by listing every one of the ``2**k`` bit vectors."""
    out = {}
    for bits in itertools.product((0, 1), repeat=len(bit_probs)):
        pr = Fraction(1)
        key = 0
        for j, (b, pj) in enumerate(zip(bits, bit_probs)):
            pr *= pj if b else 1 - pj
            key |= b << j
        out[key] = pr
    return out
