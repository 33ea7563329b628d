"""Where randomness comes from (design rule R2).

Kernels never draw randomness: they receive *words*, unsigned 64-bit integers drawn here, a fixed number
per record (the mechanism's ``words_per_record``), record ``i`` reading words ``[c*i, c*i + c)``.
A kernel turns a word into an event by comparing integers only: a Bernoulli event is
``(word >> 11) < T`` with ``T`` an integer threshold over ``2**53``; a uniform choice among ``m <= 2**16``
cells is ``((word >> 16) * m) >> 48``. So every output probability is a ratio of integers that the tests
check exactly.

Two kinds of source, chosen by the ``rng`` argument of every randomizing function:

``rng=None`` (the default): **secure**. Words are the AES-128 counter-mode keystream (the encryption of
zero bytes, counter from 0) under a fresh 128-bit key read from the operating system's CSPRNG
(``os.urandom``) on every call, computed by OpenSSL through the ``cryptography`` package. AES-CTR under a
uniformly random key is a standard cryptographic pseudorandom generator (the core of NIST SP 800-90A's
CTR_DRBG); a fresh key per call also makes forked worker processes draw independent streams. Chosen by
measurement (design rule R2): OpenSSL's pipelined AES-NI counter mode fills 0.86-1.16 G words/s on one core
of the 2-core machine the project is benchmarked on, in blocks of 2**18 words as the randomizers draw them
(0.49 G/s into one 160 MB array, where memory bounds it), 2.4-3.3 times ``randomgen.AESCounter`` (the
previous choice) and NumPy's PCG64 measured the same way, and far faster than reading ``os.urandom``
directly (``make bench`` measures all of them, in its RNG table). The GIL is released while it fills.

``rng=int | numpy.random.SeedSequence | numpy.random.Generator``: **reproducible simulation** (the
scientific-python SPEC 7 convention). Words are ``Generator.bit_generator.random_raw`` of
``numpy.random.default_rng(rng)``. Anyone who knows the seed can recompute every report, and from the
reports and the seed, learn the inputs: never seed a real collection.

Reports are bit-identical for any Numba thread count, and a sequence of calls that share one Generator
produces exactly the reports of one call on the concatenated data, because words are consumed in record
order from a single stream.
"""

import numbers
import os
import threading
from typing import Any

import numpy as np

from ._typing import NDArray, SeedLike
from ._validation import check_scalar

__all__ = ["WordSource", "AESCounterStream", "resolve_rng", "child_rng", "assign_columns", "MAX_ASSIGNED",
           "BLOCK_RECORDS", "BLOCK_WORDS", "block_sizes", "draw_pool", "splitmix64", "splitmix64_mix"]

#: SplitMix64's increment (the golden ratio) and its output function's multipliers (Steele, Lea, Flood, "Fast
#: splittable pseudorandom number generators", OOPSLA 2014).
SPLITMIX_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SPLITMIX_M1, _SPLITMIX_M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def splitmix64_mix(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """SplitMix64's finalizer on a uint64 array, **in place** (and returned), in NumPy's wrapping arithmetic.

    ``z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31``: the
    collector's copy of the kernels' ``client_unit.splitmix_inline`` (which adds :data:`SPLITMIX_GOLDEN` first).
    """
    z ^= z >> np.uint64(30)
    z *= _SPLITMIX_M1
    z ^= z >> np.uint64(27)
    z *= _SPLITMIX_M2
    z ^= z >> np.uint64(31)
    return z


def splitmix64(x: Any) -> NDArray[np.uint64]:
    """SplitMix64's output at states ``x`` (uint64; a new array): :func:`splitmix64_mix` of ``x + golden``.

    Examples
    --------
    >>> hex(int(splitmix64(np.array([0], np.uint64))[0]))
    '0xe220a8397b1dcdaf'
    """
    return splitmix64_mix(np.asarray(x, dtype=np.uint64) + SPLITMIX_GOLDEN)

#: Records randomized per kernel launch: words for one block are drawn, then the block is randomized.
#: Keeps memory bounded (a few MB of words) for inputs of any size.
BLOCK_RECORDS = 1 << 18

#: At most this many words are drawn per block (2 MB: a block drawn by the helper thread is still in cache
#: when the kernel reads it), so records that need many words (unary encodings) use smaller blocks.
BLOCK_WORDS = 1 << 18


class WordSource:
    """A stream of uniformly random 64-bit words.

    Parameters
    ----------
    bit_generator : numpy.random.BitGenerator
        The underlying generator; only its ``random_raw`` is used.
    secure : bool
        Whether the stream comes from a cryptographic generator keyed from the operating system.
    """

    __slots__ = ("_bit_generator", "secure")

    def __init__(self, bit_generator, secure):
        self._bit_generator = bit_generator
        self.secure = bool(secure)

    def draw(self, n_words):
        """Return ``n_words`` fresh words as a C-contiguous ``uint64`` array."""
        bg = self._bit_generator
        with bg.lock:
            return bg.random_raw(int(n_words))

    def __repr__(self):
        kind = "secure" if self.secure else "seeded"
        return f"WordSource({kind}, {type(self._bit_generator).__name__})"


class AESCounterStream:
    """The AES-128 counter-mode keystream under ``key`` as 64-bit words.

    It has the bit-generator interface that :class:`WordSource` uses: ``random_raw`` and ``lock``.

    Block ``i`` of the keystream is ``AES_key(i)`` (the counter a 128-bit big-endian integer from 0); word
    ``j`` is bytes ``[8j, 8j + 8)`` of the keystream read as a little-endian integer. Consecutive draws
    continue the stream, so drawing ``a`` then ``b`` words gives the words of one draw of ``a + b``.

    Parameters
    ----------
    key : bytes
        16 bytes; ldpnum passes 16 fresh bytes from ``os.urandom`` for every call of a randomizer.

    Examples
    --------
    >>> s = AESCounterStream(bytes(16))   # the all-zero key: AES_0(0) = 66e94bd4ef8a2c3b...
    >>> hex(int(s.random_raw(1)[0]))
    '0x3b2c8aefd44be966'
    """

    __slots__ = ("_encryptor", "lock")

    #: Bytes encrypted per OpenSSL call (the zero plaintext is shared by all streams).
    PIECE_BYTES = 1 << 21
    _zeros = None

    def __init__(self, key):
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        key = bytes(key)
        if len(key) != 16:
            raise ValueError(f"AES-128 needs a 16-byte key; got {len(key)} bytes")
        self._encryptor = Cipher(algorithms.AES(key), modes.CTR(bytes(16))).encryptor()
        self.lock = threading.Lock()

    def random_raw(self, size):
        """The next ``size`` words of the stream, a C-contiguous ``uint64`` array."""
        size = int(size)
        if AESCounterStream._zeros is None:
            AESCounterStream._zeros = bytes(self.PIECE_BYTES)
        zeros = memoryview(AESCounterStream._zeros)
        total = 8 * size
        buf = np.empty(total + 16, dtype=np.uint8)  # OpenSSL's update_into asks for a block of slack
        out = memoryview(buf)
        for start in range(0, total, self.PIECE_BYTES):
            m = min(self.PIECE_BYTES, total - start)
            self._encryptor.update_into(zeros[:m], out[start:start + m + 15])
        words = buf[:total].view("<u8")
        return words if words.dtype == np.uint64 else words.astype(np.uint64)

    def __repr__(self):
        return "AESCounterStream(AES-128-CTR)"


def secure_source():
    """A fresh secure word source: AES-128-CTR keyed from ``os.urandom``."""
    return WordSource(AESCounterStream(os.urandom(16)), secure=True)


def resolve_rng(rng):
    """Turn an ``rng`` argument into a :class:`WordSource`, validating it first.

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None`` for secure randomness (a real collection); anything else for reproducible simulation.

    Raises
    ------
    TypeError
        For bools, floats, ``numpy.random.RandomState`` and other kinds.
    ValueError
        For negative integer seeds.
    """
    if rng is None:
        return secure_source()
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError("rng must be None, an int seed, a numpy SeedSequence or a numpy Generator; got a bool")
    if isinstance(rng, np.random.Generator):
        return WordSource(rng.bit_generator, secure=False)
    if isinstance(rng, np.random.SeedSequence):
        return WordSource(np.random.PCG64(rng), secure=False)
    if isinstance(rng, numbers.Integral):
        if int(rng) < 0:
            raise ValueError(f"rng: an integer seed must be non-negative; got {int(rng)}")
        return WordSource(np.random.PCG64(int(rng)), secure=False)
    if isinstance(rng, np.random.RandomState):
        raise TypeError("rng: numpy.random.RandomState is not supported (it is global-state legacy); "
                        "pass numpy.random.default_rng(seed) or an int seed")
    raise TypeError("rng must be None, an int seed, a numpy SeedSequence or a numpy Generator; "
                    f"got {type(rng).__name__}")


def child_rng(rng: Any, *key: int) -> Any:
    """The ``rng`` of an independent sub-stream numbered ``key`` (a column, a partition, ...).

    ``None`` stays ``None``: every sub-stream is then secure, keyed afresh from the operating system.
    Otherwise the result is a :class:`numpy.random.SeedSequence` whose spawn key extends the parent's by
    ``key`` (non-negative ints), so the same seed and key always give the same stream, on any machine and
    under any scheduler, and different keys give independent streams (NumPy's spawning scheme). A
    :class:`numpy.random.Generator` parent contributes 128 bits drawn from it as the entropy (so it advances,
    as a Generator does on every use).

    >>> child_rng(7, 2).spawn_key
    (2,)
    >>> child_rng(None, 2) is None
    True
    """
    key = tuple(check_scalar(k, "a sub-stream key", int, low=0) for k in key)
    if rng is None:
        return None
    resolve_rng(rng)  # the same TypeError/ValueError as everywhere else, before anything is drawn
    if isinstance(rng, np.random.Generator):
        entropy = [int(w) for w in rng.bit_generator.random_raw(2)]
        return np.random.SeedSequence(entropy, spawn_key=key)
    if isinstance(rng, np.random.SeedSequence):
        return np.random.SeedSequence(rng.entropy, spawn_key=tuple(rng.spawn_key) + key,
                                      pool_size=rng.pool_size)
    return np.random.SeedSequence(int(rng), spawn_key=key)


#: At most this many choices for :func:`assign_columns` (a uniform choice from the top 48 bits of a word).
MAX_ASSIGNED = 1 << 16


def assign_columns(rng: SeedLike, n: int, m: int) -> NDArray[np.int64]:
    r"""Each of ``n`` rows' one column among ``m``, uniformly at random and independently of any value.

    The draw behind the "one-column-per-row" strategy (each person reports one attribute with its full ε):
    row :math:`i` gets column

    .. math:: j_i = \left\lfloor \frac{(w_i \gg 16)\, m}{2^{48}} \right\rfloor

    for the :math:`i`-th 64-bit word :math:`w_i` of ``rng``: the top 48 bits, read as a fraction
    :math:`u_i \in [0, 1)` of :math:`2^{48}`, scaled to ``m`` cells. Integer arithmetic only (the product
    stays below :math:`2^{64}` for :math:`m \le 2^{16}`), so every column has probability
    :math:`\lceil 2^{48}/m \rceil / 2^{48}` or :math:`\lfloor 2^{48}/m \rfloor / 2^{48}`, uniform up to
    :math:`m / 2^{48}`, on every machine. One word per row, drawn in row order: rows assigned in batches from
    one Generator are those of one call on all rows.

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None``: secure randomness. A Generator is advanced by ``n`` words (so consecutive calls continue
        the stream).
    n : int
        Number of rows.
    m : int
        Number of columns, ``1 <= m <= 2**16``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        The column of each row, in ``0..m-1``.

    Examples
    --------
    >>> assign_columns(0, 8, 3)
    array([1, 0, 0, 0, 2, 2, 1, 2])
    """
    n = check_scalar(n, "n", int, low=0)
    m = check_scalar(m, "m", int, low=1, high=MAX_ASSIGNED)
    source = resolve_rng(rng)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    words = source.draw(int(n))
    return (((words >> np.uint64(16)) * np.uint64(m)) >> np.uint64(48)).astype(np.int64)


def block_sizes(n, words_per_record):
    """Records per block for ``n`` records, the last block shorter.

    Each block holds ``BLOCK_WORDS`` worth of words (at most ``BLOCK_RECORDS`` records, at least one).

    >>> block_sizes(10, 1)
    [10]
    >>> block_sizes(600_000, 1)
    [262144, 262144, 75712]
    """
    block = max(1, min(BLOCK_RECORDS, BLOCK_WORDS // max(1, int(words_per_record))))
    return [min(block, n - start) for start in range(0, n, block)]


_POOL = None
_POOL_LOCK = threading.Lock()


def draw_pool():
    """The process's helper threads that draw the next block's words while a kernel randomizes this block.

    Created on first use and kept (starting a thread per ``privatize`` call cost ~0.2 ms); one worker per
    core, so concurrent calls from several Python threads still draw in parallel. A forked child gets a
    fresh pool on first use (the parent's threads do not exist in the child).
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor
            _POOL = ThreadPoolExecutor(max(1, os.cpu_count() or 1), thread_name_prefix="ldpnum-draw")
        return _POOL


def _forget_pool_in_child():
    global _POOL, _POOL_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)
