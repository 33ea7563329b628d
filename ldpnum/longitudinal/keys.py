"""Each person's secret key, and the keyed words of memoized (permanent) responses (design rule R9).

Repeated collection from the same people spends ε again at every round unless a person who reports the same
value again gives the same *permanent* answer. RAPPOR (Erlingsson, Pihur, Korolova) derives that answer from
a secret held by the client; ldpnum does the same for every longitudinal mechanism: each person holds a
128-bit :class:`ClientKeys` entry, and the words the permanent layer of a randomizer consumes are

    word[i, j] = SipHash-2-4_{key_i}(tweak ‖ memo_i ‖ j)

(:func:`keyed_words`), where ``tweak`` is a digest of the permanent layer's spec (:func:`memo_tweak`: the
mechanism, its permanent ε and parameters, not the round) and ``memo_i`` the value being memoized (a
category, a grid point, a hashed value). The same key, spec and value give the same words, hence the same
permanent response, on any call, chunking, thread count or machine; another value or another person gives
fresh, independent words. Nothing is stored: a device and a simulation of a million devices agree.

Keys are secrets. They never enter a report, a spec or an aggregate, and ``repr`` shows only their number and
a fingerprint. Whoever holds a person's key and the reports' spec can recompute that person's permanent
responses for every value, and so learn the value from any report: keep keys on the device (or, in a
simulation, treat them like a seed).
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from .._kernels import client_keyed
from .._kernels._jit import launch
from .._random import resolve_rng
from .._validation import check_scalar

if TYPE_CHECKING:
    from ..spec import Spec
    from .._typing import SeedLike

__all__ = ["ClientKeys", "keyed_words", "memo_tweak", "check_keys"]

#: Bytes of one person's key.
KEY_BYTES = 16
#: Prefix of the digest of a spec that makes a memoization tweak (a new scheme gets a new prefix).
_TWEAK_DOMAIN = b"ldpnum/memoized-response/v1\x00"


class ClientKeys:
    """A 128-bit secret key per person, from which memoized responses are derived.

    Build with :meth:`generate` (fresh keys) or read back with :meth:`from_array`, :meth:`load` or
    :meth:`from_frame`. Row ``i`` is person ``i``: keys align with the values passed to ``privatize`` (in pandas,
    with the frame's rows; in a file, with its rows). Slicing (``keys[a:b]``, ``keys[index_array]``) gives the
    keys of those people, for chunks and partitions.

    Parameters
    ----------
    words : array_like of uint64, shape (n, 2)
        Each person's key as two little-endian 64-bit words (bytes ``0..7`` and ``8..15``).

    Notes
    -----
    Keys are secrets (see the module's notes). ``repr`` and ``str`` never show them; :attr:`fingerprint` is a
    SHA-256 digest of all keys, which identifies a key set (to check that a key file belongs to a data set)
    without revealing any key.

    Examples
    --------
    >>> import ldpnum as ldp
    >>> keys = ldp.ClientKeys.generate(3, rng=0)   # seeded: a simulation (rng=None, the default, is secure)
    >>> len(keys), keys[1:].fingerprint == ldp.ClientKeys.from_array(keys.to_array()[1:]).fingerprint
    (3, True)
    """

    __slots__ = ("_words", "_fingerprint")

    def __init__(self, words: Any) -> None:
        arr = np.asarray(words)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"client keys must be an (n, 2) array of uint64 words; got shape {arr.shape}")
        if arr.dtype != np.uint64:
            raise TypeError(f"client keys must be uint64 words; got dtype {arr.dtype}")
        arr = np.array(arr, dtype=np.uint64, order="C", copy=True)
        arr.flags.writeable = False
        self._words = arr
        self._fingerprint: str | None = None

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def generate(cls, n: int, rng: SeedLike = None) -> "ClientKeys":
        """``n`` fresh keys.

        Parameters
        ----------
        n : int
            Number of people (≥ 0).
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            ``None`` (default): 16 bytes per person from the operating system's CSPRNG (``os.urandom``), for
            real deployments. Anything else: reproducible keys for a simulation; anyone holding the seed holds
            every key.
        """
        n = check_scalar(n, "n", int, low=0)
        if rng is None:
            raw = np.frombuffer(os.urandom(KEY_BYTES * n), dtype="<u8").astype(np.uint64)
        else:
            raw = resolve_rng(rng).draw(2 * n)
        return cls(raw.reshape(n, 2))

    @classmethod
    def from_array(cls, array: Any) -> "ClientKeys":
        """Keys from :meth:`to_array`'s ``(n, 2)`` uint64 array, or from an ``(n, 16)`` uint8 array of key bytes.

        The bytes are in :meth:`to_bytes`' layout.
        """
        arr = np.asarray(array)
        if arr.ndim == 2 and arr.shape[1] == KEY_BYTES and arr.dtype == np.uint8:
            arr = np.ascontiguousarray(arr).view("<u8").astype(np.uint64)
        return cls(arr)

    @classmethod
    def from_bytes(cls, data: bytes) -> "ClientKeys":
        """Keys from :meth:`to_bytes` (16 bytes per person, in order)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"client keys: expected bytes; got {type(data).__name__}")
        data = bytes(data)
        if len(data) % KEY_BYTES:
            raise ValueError(f"client keys: {len(data)} bytes is not a whole number of {KEY_BYTES}-byte keys")
        return cls(np.frombuffer(data, dtype="<u8").astype(np.uint64).reshape(-1, 2))

    @classmethod
    def load(cls, path: Any) -> "ClientKeys":
        """Keys saved by :meth:`save` (a NumPy ``.npy`` file of the ``(n, 2)`` uint64 words)."""
        return cls.from_array(np.load(path, allow_pickle=False))

    @classmethod
    def from_frame(cls, frame: Any) -> "ClientKeys":
        """Keys from :meth:`to_frame`'s columns ``key0`` and ``key1`` (e.g. read back from Parquet)."""
        missing = {"key0", "key1"} - set(frame.columns)
        if missing:
            raise ValueError(f"client keys: the frame lacks the column(s) {sorted(missing)}; expected the columns "
                             "'key0' and 'key1' written by ClientKeys.to_frame")
        cols = [np.asarray(frame[c]) for c in ("key0", "key1")]
        for name, col in zip(("key0", "key1"), cols):
            if col.dtype != np.uint64:
                raise TypeError(f"client keys: column {name!r} must hold uint64 words; got dtype {col.dtype}")
        return cls(np.stack(cols, axis=1))

    # -- serialization ------------------------------------------------------------------------------
    def to_array(self) -> np.ndarray:
        """The keys as a writable ``(n, 2)`` uint64 array (a copy)."""
        return self._words.copy()

    def to_bytes(self) -> bytes:
        """The keys as ``16·n`` bytes, person after person (each key's two words little-endian)."""
        return self._words.astype("<u8").tobytes()

    def save(self, path: Any) -> None:
        """Write the keys to a NumPy ``.npy`` file (:meth:`load` reads it). The file is a secret."""
        np.save(path, self._words, allow_pickle=False)

    def to_frame(self, index: Any = None) -> Any:
        """The keys as a pandas DataFrame with uint64 columns ``key0`` and ``key1``, ready for Parquet.

        ``index``: the people's labels, e.g. the data frame's index.
        """
        import pandas as pd

        return pd.DataFrame({"key0": self._words[:, 0], "key1": self._words[:, 1]}, index=index)

    # -- people ---------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._words.shape[0]

    def __getitem__(self, item: Any) -> "ClientKeys":
        if isinstance(item, (int, np.integer)):
            item = slice(int(item), int(item) + 1 if int(item) != -1 else None)
        return ClientKeys(self._words[item])

    @property
    def words(self) -> np.ndarray:
        """The read-only ``(n, 2)`` uint64 array the kernels read."""
        return self._words

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the keys' bytes, hex (64 characters): identifies a key set without revealing a key."""
        if self._fingerprint is None:
            self._fingerprint = hashlib.sha256(b"ldpnum/client-keys\x00" + self.to_bytes()).hexdigest()
        return self._fingerprint

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClientKeys) and np.array_equal(self._words, other._words)

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return f"ClientKeys(n={len(self)}, fingerprint={self.fingerprint[:16]}...)"

    __str__ = __repr__

    def __getstate__(self) -> np.ndarray:
        return self._words

    def __setstate__(self, state: np.ndarray) -> None:
        self._words = state
        self._fingerprint = None


def check_keys(keys: Any, n: int, *, name: str = "keys") -> ClientKeys:
    """``keys`` as :class:`ClientKeys` for ``n`` people; one clear error otherwise (before anything is drawn).

    Raises
    ------
    TypeError
        If ``keys`` is not a :class:`ClientKeys`.
    ValueError
        If it holds keys for another number of people.
    """
    if keys is None:
        raise TypeError(f"{name}: memoized responses need each person's key; pass keys=ClientKeys.generate(n) "
                        "(stored by each person, or kept like a seed in a simulation)")
    if not isinstance(keys, ClientKeys):
        raise TypeError(f"{name} must be ClientKeys (ldpnum.ClientKeys.generate(n), or ClientKeys.from_array for "
                        f"saved key words); got {type(keys).__name__}")
    if len(keys) != n:
        raise ValueError(f"{name} holds keys for {len(keys)} people but there are {n} values: keys align with people, "
                         "row for row")
    return keys


def memo_tweak(spec: Spec, purpose: str = "response") -> np.uint64:
    """The 64-bit tweak of memoized responses under ``spec`` (the permanent layer's spec).

    The first 8 bytes of SHA-256 over a domain prefix, ``purpose`` and the spec's JSON, so two mechanisms (or one
    mechanism with another permanent ε) never share permanent words, and words drawn for another purpose under the
    same spec (a cohort, a hash seed, a rounding offset, the ledger's fingerprints) are independent of the
    responses'.
    """
    digest = hashlib.sha256(_TWEAK_DOMAIN + purpose.encode() + b"\x00" + spec.to_json().encode()).digest()
    return np.uint64(int.from_bytes(digest[:8], "little"))


def keyed_words(keys: ClientKeys, tweak: Any, memo: Any, words_per_record: int) -> np.ndarray:
    """The permanent layer's words: ``SipHash-2-4_{key_i}(tweak ‖ memo_i ‖ j)`` for ``j < words_per_record``.

    Person after person (``n · words_per_record`` uint64 words, record ``i`` reading ``[c·i, c·i + c)`` as every
    kernel does).

    Parameters
    ----------
    keys : ClientKeys
        One key per person (validated by :func:`check_keys`).
    tweak : int
        :func:`memo_tweak` of the permanent layer's spec.
    memo : array_like of int, shape (n,)
        Each person's memoized value as a non-negative integer below 2**64.
    words_per_record : int
        Words each person's permanent randomizer consumes.
    """
    memo = np.ascontiguousarray(memo, dtype=np.uint64).view()
    memo.flags.writeable = False  # read-only whatever the caller's array: one compiled signature
    c = int(words_per_record)
    if memo.ndim != 1 or memo.shape[0] != len(keys):
        raise ValueError(f"memoized values: expected {len(keys)}, one per key; got shape {memo.shape}")
    out = np.empty(memo.shape[0] * c, dtype=np.uint64)
    if memo.shape[0]:
        launch(client_keyed.keyed_words_kernel, keys.words, np.uint64(tweak), memo, c, out)
    return out
