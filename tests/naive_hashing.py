"""Slow, obviously-correct references for the hashing frequency oracles (Python ints, one record at a time).

To be merged into ``tests/naive.py``. Each randomizer reference takes the same words the kernel consumed
and must reproduce its output bit for bit; the support-count references decode every report against
every category the plain way.
"""

import numpy as np

from naive import bernoulli, uniform

FIELD_BITS = 24
POLY = 0x1B  # x^24 + x^4 + x^3 + x + 1 (low terms)
#: Low terms of an irreducible polynomial of each small degree, for brute-force checks on small fields.
SMALL_FIELD_POLYS = {3: 0x3, 4: 0x3, 5: 0x5, 6: 0x3, 7: 0x3, 8: 0x1B, 24: POLY}


def clmul(a, b):
    """Carry-less product of two non-negative Python ints."""
    p = 0
    i = 0
    while b >> i:
        if (b >> i) & 1:
            p ^= a << i
        i += 1
    return p


def poly_mod(p, modulus):
    """Remainder of the GF(2) polynomial ``p`` modulo ``modulus`` (both as bit masks)."""
    d = modulus.bit_length() - 1
    while p.bit_length() - 1 >= d:
        p ^= modulus << (p.bit_length() - 1 - d)
    return p


def gf_mul(a, v, field_bits=FIELD_BITS, poly=POLY):
    """``a ⊗ v`` in GF(2^field_bits): schoolbook carry-less product, then long division."""
    return poly_mod(clmul(a, v), (1 << field_bits) | poly)


def is_irreducible(modulus):
    """Rabin's test: a GF(2) polynomial of degree n is irreducible iff x^(2^n) = x (mod it) and
    gcd(x^(2^(n/q)) - x, it) = 1 for every prime q dividing n."""
    n = modulus.bit_length() - 1

    def x_pow_2_pow(t):
        x = 2
        for _ in range(t):
            x = poly_mod(clmul(x, x), modulus)
        return x

    def gcd(a, b):
        while b:
            a, b = b, poly_mod(a, b)
        return a

    if x_pow_2_pow(n) != 2:
        return False
    primes = [q for q in range(2, n + 1) if n % q == 0 and all(q % r for r in range(2, q))]
    return all(gcd(modulus, x_pow_2_pow(n // q) ^ 2) == 1 for q in primes)


def local_hash(a, b, v, g, field_bits=FIELD_BITS, poly=POLY):
    """``h_{a,b}(v) = floor(((a ⊗ v) ⊕ b) · g / 2^field_bits)``."""
    return ((gf_mul(a, v, field_bits, poly) ^ b) * g) >> field_bits


def decode(code):
    """``(a, b, y)`` of one local-hashing report."""
    code = int(code)
    return code >> 40, (code >> 16) & ((1 << 24) - 1), code & 0xFFFF


def grr_one(h, w_keep, w_lie, g, t_keep):
    if h < 0:
        return uniform(w_lie, g)
    if bernoulli(w_keep, t_keep):
        return h
    j = uniform(w_lie, g - 1)
    return j + 1 if j >= h else j


def local_hashing(values, g, t_keep, words):
    """BLH/OLH reports: seed bits of word 3i, GRR over g of h(v) with words 3i+1, 3i+2."""
    out = []
    for i, v in enumerate(values):
        v = int(v)
        w = int(words[3 * i])
        a, b = w >> 40, (w >> 16) & ((1 << 24) - 1)
        h = local_hash(a, b, v, g) if v >= 0 else -1
        y = grr_one(h, words[3 * i + 1], words[3 * i + 2], g, t_keep)
        out.append((w & ~0xFFFF & (2**64 - 1)) | y)
    return np.array(out, dtype=np.uint64)


def gf_mul_np(a, v, field_bits=FIELD_BITS, poly=POLY):
    """``a ⊗ v`` for an array ``a`` and one int ``v`` (NumPy uint64, bit by bit)."""
    a = np.asarray(a, dtype=np.uint64)
    p = np.zeros_like(a)
    for i in range(int(v).bit_length()):
        if (int(v) >> i) & 1:
            p ^= a << np.uint64(i)
    for d in range(2 * field_bits, field_bits - 1, -1):
        hit = ((p >> np.uint64(d)) & np.uint64(1)).astype(bool)
        p[hit] ^= np.uint64(((1 << field_bits) | poly) << (d - field_bits))
    return p


def local_hash_support(codes, k, g):
    """``I_v = #{reports with h(v) = y}``, decoding every report against every category (NumPy)."""
    codes = np.asarray(codes, dtype=np.uint64)
    a = codes >> np.uint64(40)
    b = (codes >> np.uint64(16)) & np.uint64((1 << 24) - 1)
    y = codes & np.uint64(0xFFFF)
    out = np.zeros(k, dtype=np.int64)
    for v in range(k):
        h = ((gf_mul_np(a, v) ^ b) * np.uint64(g)) >> np.uint64(24)
        out[v] = int(np.count_nonzero(h == y))
    return out


def parity(x):
    return bin(int(x)).count("1") & 1


def hadamard(values, log2_k, t_keep, words):
    """Hadamard response: a uniform index, flipped on the lowest set bit of v + 1 into the chosen half."""
    out = []
    for i, v in enumerate(values):
        v = int(v)
        u = int(words[2 * i + 1]) >> (64 - log2_k)
        if v >= 0:
            r = v + 1
            target = 0 if bernoulli(words[2 * i], t_keep) else 1
            if parity(r & u) != target:
                u ^= r & -r
        out.append(u)
    return np.array(out, dtype=np.int64)


def hadamard_matrix(K):
    """Dense Sylvester–Hadamard matrix by its recursive construction ``[[H, H], [H, -H]]`` (which equals
    ``(-1)^popcount(r & y)``; built independently of that formula on purpose)."""
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < K:
        h = np.block([[h, h], [h, -h]])
    return h


def hadamard_support(codes, k):
    """``I_v = #{reports y with popcount((v + 1) & y) even}``, report by report."""
    codes = np.asarray(codes, dtype=np.int64)
    out = np.zeros(k, dtype=np.int64)
    for v in range(k):
        par = np.array([parity((v + 1) & int(y)) for y in codes])
        out[v] = int(np.count_nonzero(par == 0))
    return out
