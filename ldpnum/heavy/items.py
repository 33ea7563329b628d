r"""Items from huge domains as fixed-width unsigned words: the one place heavy hitters encode and decode them.

Heavy-hitter mechanisms (PEM, TreeHist, SVIM/SVSM), the count-mean sketch and RAPPOR never see strings, bytes or
Python integers: :func:`encode_items` turns every item into the unsigned integer of ``item_bits`` bits that
encodes it before any mechanism sees it, and :func:`decode_items` turns the words of a result back into items of
the input's type.

The encoding
------------
An item's *encoding* is a bit string :math:`b_1 b_2 \dots b_L` of length :math:`L` = ``item_bits``
(:math:`1 \le L \le 256`, :data:`MAX_ITEM_BITS`); its *value* is the integer

.. math::

    w = \sum_{i=1}^{L} b_i \, 2^{L - i} \in [0, 2^L),

so the prefix of length :math:`l` of the item is ``w >> (L - l)``. It is stored in :math:`W = \lceil L/64
\rceil` unsigned 64-bit *words*, its base-:math:`2^{64}` digits, most significant first:

.. math::

    w = \sum_{k=0}^{W-1} w_k \, 2^{64 (W - 1 - k)}, \qquad 0 \le w_k < 2^{64}.

Up to 64 bits (:math:`W = 1`) an array of items is a one-dimensional ``uint64`` array, one word per item;
wider items are an ``(n, W)`` array, one row per item (``W`` = 2, 3 or 4). The value, and so every prefix, is the
same whatever the width of the storage: the prefix of length :math:`l \le 64` of a wide item is one word, as it is
for a narrow one.

**Digests.** A mechanism that only *hashes* items (the count-mean sketch, RAPPOR's Bloom filter) and the levels of
a prefix protocol longer than 64 bits hash one word per item: the item (or prefix) itself when it has at most 64
bits, else its *digest*, a public 64-bit hash under the key :data:`DIGEST_KEY` of its base-:math:`2^{64}` digits
(:func:`item_digests`, :func:`prefix_digests`; the construction is in :mod:`ldpnum._kernels.client_items`). Items of at most 64 bits are hashed as they always were; two
distinct wide items share a digest with probability about :math:`2^{-64}`. The spec of a mechanism that hashes
wide items names the digest (``digest``, :data:`DIGEST_NAME`), so reports hashed with another are refused.

* **uint** (unsigned integers): the bit string is the :math:`L`-bit binary expansion, so :math:`w` is the
  integer itself. Integers must lie in :math:`[0, 2^L)`; they are never truncated (a cut integer would be
  another integer, silently).
* **bytes**: the bytes are placed big-endian, the first byte in the top 8 bits, padded with zero bytes on the
  right to :math:`L / 8` bytes. A lexicographic prefix of ``j`` bytes is therefore the bit prefix of length
  :math:`8j`: ``w >> (L - 8*j)`` is the encoding of the first ``j`` bytes. Items longer than :math:`L / 8`
  bytes are truncated to their first :math:`L / 8` bytes, with one :class:`~ldpnum.exceptions.TruncationWarning`
  per call (or a ValueError with ``truncate=False``). Byte items need :math:`L` a multiple of 8. Zero bytes
  inside an item are ordinary bytes (``b"\x0a\x00\x00\x01"``, an IPv4 address, is found like any other
  item), but trailing zero bytes cannot be told from the padding: ``b"ab\x00"`` encodes as ``b"ab"``, so the
  two are counted as one item and results return it as ``b"ab"``. This is a property of any fixed-width
  encoding of variable-length items, not an estimation error; for fixed-length binary ids (addresses,
  hashes) restore the width with ``item.ljust(L // 8, b"\x00")``, or encode them as integers
  (``int.from_bytes(b, "big")``, ``item_type="uint"``), which keeps every id distinct.
* **str**: the UTF-8 bytes of the string, then as **bytes**. Truncation may cut a multi-byte character; its
  partial bytes decode to one replacement mark U+FFFD (``"société"`` at 64 bits reads ``"sociét\ufffd"``), so
  a cut item is never mistaken for a shorter complete one. Strings containing the NUL character ``"\x00"`` are refused (its
  UTF-8 byte is the padding byte, so they would be ambiguous).
"""

from typing import Any, Sequence
import numbers
import warnings

import numpy as np

from .._checks import where
from .._kernels.objects import object_words
from ..exceptions import TruncationWarning
from .._validation import _caller_stacklevel, check_scalar, plain_array

__all__ = ["MAX_ITEM_BITS", "item_words", "ints_to_words", "words_to_ints", "item_digests", "prefix_digests",
           "digest_params", "check_digest", "admissible_prefixes", "distinct_candidates", "encode_typed_items", "ITEM_TYPES", "encode_items", "decode_items", "check_item_bits", "check_words"]

#: The kinds of items heavy-hitter mechanisms accept, as :func:`encode_items` names them.
ITEM_TYPES = ("str", "bytes", "uint")

#: Widest item encoding, in bits (four 64-bit words: 32-byte ids, long words, most URLs' first 32 bytes).
MAX_ITEM_BITS = 256
#: Public key of the digest of wide items and prefixes (:func:`item_digests`): ASCII ``"ldpnum:item-dig1"`` as two
#: little-endian words. A change of key changes every digest (and the name below).
DIGEST_KEY = (0x693A6D756E70646C, 0x316769642D6D6574)
#: Name of the digest, recorded as the ``digest`` parameter of the spec of every mechanism that hashes items of more
#: than 64 bits (:func:`digest_params`), so that reports hashed with another digest are refused
#: (:func:`check_digest`). A change of the digest must change this name.
DIGEST_NAME = "mix64-words/v2"
# v1 ("siphash13-words/v1") was SipHash-1-3 of the prefix's m words: a keyed pseudo-random function under a public
# key, and a loop over m that random prefix lengths mispredict; v2 costs a fifth of it per record of a prefix protocol.

_KIND = {str: "str", bytes: "bytes", int: "uint"}
_SHOWN = 40  # characters of an offending item shown in a message


def check_item_bits(item_bits: object, item_type: str | None = None) -> int:
    """``item_bits`` as an int in [1, 256] (and a multiple of 8 for str/bytes items); TypeError/ValueError."""
    bits = check_scalar(item_bits, "item_bits", int, low=1, high=MAX_ITEM_BITS)
    if item_type in ("str", "bytes") and bits % 8:
        raise ValueError(f"{item_type} items need item_bits a multiple of 8 (whole bytes); got item_bits={bits}")
    return bits


def item_words(item_bits: int) -> int:
    """Words per item: 1 up to 64 bits (a 1-D array of words), else ``ceil(item_bits / 64)`` (a row each)."""
    return -(-int(item_bits) // 64)


def ints_to_words(ints: Sequence[int], item_bits: int) -> np.ndarray:
    """Python ints below ``2**item_bits`` as the encoding's words: shape ``(n,)`` up to 64 bits, else ``(n, W)``.

    A row holds the base-``2**64`` digits of its int, most significant first.
    """
    n_words = item_words(item_bits)
    if n_words == 1:
        return np.array([int(v) for v in ints], dtype=np.uint64)
    raw = b"".join(int(v).to_bytes(8 * n_words, "big") for v in ints)
    return np.frombuffer(raw, dtype=">u8").astype(np.uint64).reshape(-1, n_words)


def words_to_ints(words: np.ndarray) -> list[int]:
    """The encoding's words (a 1-D array, or rows of ``W`` words, most significant first) as Python ints."""
    words = np.asarray(words, dtype=np.uint64)
    if words.ndim == 1:
        return words.tolist()
    size = 8 * words.shape[1]
    raw = np.ascontiguousarray(words.astype(">u8")).tobytes()
    return [int.from_bytes(raw[i:i + size], "big") for i in range(0, len(raw), size)]


def _read_only_rows(words):
    """Rows of words as the digest kernels take them: a C-contiguous read-only uint64 view (one signature)."""
    words = np.ascontiguousarray(words, dtype=np.uint64).view()
    words.flags.writeable = False
    return words


def prefix_digests(words: np.ndarray, item_bits: int, shifts: np.ndarray) -> np.ndarray:
    r"""One word per item for the prefix ``words[i] >> shifts[i]``: the prefix itself up to 64 bits, else its digest.

    ``words`` are rows of :math:`W` words (items of ``item_bits`` > 64 bits); ``shifts`` (int64, one per row) in
    ``[0, item_bits)``. The digest of a prefix :math:`P` of :math:`l > 64` bits mixes its four base-:math:`2^{64}`
    digits, most significant first, and :math:`m = \lceil l/64 \rceil` under the public key :data:`DIGEST_KEY`
    (:mod:`ldpnum._kernels.client_items`).
    """
    from .._kernels import client_items
    from .._kernels._jit import launch

    words = _read_only_rows(words)
    shifts = np.ascontiguousarray(shifts, dtype=np.int64)
    out = np.empty(words.shape[0], dtype=np.uint64)
    launch(client_items.prefix_digest_kernel, words, int(item_bits), shifts, np.uint64(DIGEST_KEY[0]),
           np.uint64(DIGEST_KEY[1]), out)
    return out


def item_digests(words: np.ndarray, item_bits: int) -> np.ndarray:
    r"""The one word a hash-based mechanism hashes per item: the word itself up to 64 bits, else the item's digest.

    Items of :math:`L \le 64` bits are returned unchanged (their reports stay what they were). Rows of wider items
    become their digests under the public key :data:`DIGEST_KEY` (see :func:`prefix_digests`): two
    distinct items share a digest with probability about :math:`2^{-64}`.

    Examples
    --------
    >>> w, _, _ = encode_items(["a" * 30, "a" * 29 + "b"], 256)
    >>> d = item_digests(w, 256)
    >>> w.shape, d.shape, bool(d[0] != d[1])
    ((2, 4), (2,), True)
    """
    if item_words(item_bits) == 1:
        return np.asarray(words, dtype=np.uint64)
    from .._kernels import client_items
    from .._kernels._jit import launch

    words = _read_only_rows(words)
    out = np.empty(words.shape[0], dtype=np.uint64)
    launch(client_items.item_digest_kernel, words, int(item_bits), np.uint64(DIGEST_KEY[0]), np.uint64(DIGEST_KEY[1]),
           out)
    return out


def digest_params(item_bits: int) -> dict[str, str]:
    """The spec parameters that name the digest a mechanism hashes items of ``item_bits`` bits with.

    ``{"digest": DIGEST_NAME}`` above 64 bits (items are hashed through :func:`item_digests` or
    :func:`prefix_digests`); ``{}`` up to 64 bits, where items are hashed themselves, so those specs are
    unchanged.

    Examples
    --------
    >>> digest_params(64), digest_params(256)
    ({}, {'digest': 'mix64-words/v2'})
    """
    return {"digest": DIGEST_NAME} if int(item_bits) > 64 else {}


def check_digest(params: dict, mechanism: str) -> None:
    """Remove ``"digest"`` from the parameters of a spec being rebuilt, after checking it is this ldpnum's digest.

    ``params`` are the spec's parameters (its ``item_bits`` defaulting to 64). A spec of items wider than 64 bits
    must name :data:`DIGEST_NAME`: reports hashed with another digest, or with one the spec does not name (an
    older release), cannot be merged with or estimated as this release's. A spec of at most 64 bits names none.

    Raises
    ------
    ValueError
        The digest is missing, another, or named for items of at most 64 bits.

    Examples
    --------
    >>> params = {"item_bits": 256, "digest": "siphash13-words/v1"}
    >>> check_digest(params, "pem")
    Traceback (most recent call last):
    ...
    ValueError: spec of 'pem' hashes its 256-bit items with the digest 'siphash13-words/v1'; this ldpnum computes 'mix64-words/v2': its reports and aggregates cannot be merged with or estimated as this release's (estimate them with the release that produced them)
    """
    bits = params.get("item_bits", 64)
    digest = params.pop("digest", None)
    wide = isinstance(bits, int) and not isinstance(bits, bool) and bits > 64
    if not wide:
        if digest is not None:
            raise ValueError(f"spec of {mechanism!r} names the digest {digest!r} but its items have item_bits="
                             f"{bits!r}: items of at most 64 bits are hashed themselves, and such specs name no digest")
        return
    if digest is None:
        raise ValueError(f"spec of {mechanism!r} has {bits}-bit items but names no digest (parameter 'digest'): items "
                         f"wider than 64 bits are hashed through a digest, and this ldpnum computes {DIGEST_NAME!r}; "
                         "a spec without one comes from an older release (estimate its reports with that release)")
    if digest != DIGEST_NAME:
        raise ValueError(f"spec of {mechanism!r} hashes its {bits}-bit items with the digest {digest!r}; this ldpnum "
                         f"computes {DIGEST_NAME!r}: its reports and aggregates cannot be merged with or estimated "
                         "as this release's (estimate them with the release that produced them)")


def _short(v):
    r = repr(v)
    return r if len(r) <= _SHOWN else r[:_SHOWN - 3] + "..."


def _kind_of(v):
    """``"str"``, ``"bytes"``, ``"uint"``, ``"missing"``, or ``None`` (not an item) for one Python value."""
    kind = _KIND.get(type(v))
    if kind is not None:
        return kind
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, str):
        return "str"
    if isinstance(v, bytes):
        return "bytes"
    if isinstance(v, numbers.Integral):
        return "uint"
    if v is None or (isinstance(v, numbers.Real) and v != v):
        return "missing"
    if type(v).__name__ in ("NAType", "NaTType"):  # pandas' missing-value markers
        return "missing"
    return None


def _type_error(name, i, v, item_type=None):
    what = f"{type(v).__name__} {_short(v)}"
    if isinstance(v, (bool, np.bool_)):
        return TypeError(f"{name} must be str, bytes or non-negative int items; item {i} is a bool ({v!r}): "
                         "booleans are not items (encode them as 0/1 ints if that is meant)")
    if isinstance(v, numbers.Real):
        return TypeError(f"{name} must be str, bytes or non-negative int items; item {i} is a float ({v!r}): "
                         "convert whole-number floats to ints first (e.g. numpy.asarray(x).astype('uint64'))")
    if item_type is not None:
        return TypeError(f"{name} must hold items of one type; item 0's type is {item_type} but item {i} is "
                         f"{what}")
    return TypeError(f"{name} must be str, bytes or non-negative int items; item {i} is {what}")


def _classify(seq, name, types=None):
    """The item type of a list of Python objects, after checking there is one type and no missing value.

    ``types`` is ``set(map(type, seq))`` when the caller has it.
    """
    types = set(map(type, seq)) if types is None else types
    if len(types) == 1 and next(iter(types)) in _KIND:
        return _KIND[next(iter(types))]
    item_type, first_index, missing = None, -1, []
    for i, v in enumerate(seq):
        kind = _kind_of(v)
        if kind is None:
            raise _type_error(name, i, v)
        if kind == "missing":
            missing.append(i)
            continue
        if item_type is None:
            item_type, first_index = kind, i
        elif kind != item_type:
            raise TypeError(f"{name} must hold items of one type; item {first_index} is {item_type} but item "
                            f"{i} is {kind} ({type(v).__name__} {_short(v)})")
    if missing:
        raise ValueError(f"{name} must not contain missing values (None, NaN, pandas NA): {len(missing)} "
                         f"item(s) are missing, first at index {missing[0]}; heavy-hitter items are never "
                         "imputed: drop or replace them first")
    return item_type


def _from_pandas(items, name):
    """A pandas Series/Index/array as a NumPy array (int, uint, str_ or object), missing values refused."""
    import pandas as pd

    dtype = items.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _from_pandas(pd.Series(np.asarray(items, dtype=object)), name)
    kind = getattr(dtype, "kind", "O")
    if kind in "iuf" or kind == "b":
        if kind == "b":
            raise TypeError(f"{name} must be str, bytes or non-negative int items; got booleans (dtype {dtype})")
        if kind == "f":
            raise TypeError(f"{name} must be str, bytes or non-negative int items; got floats (dtype {dtype}): "
                            "convert whole-number floats to ints first (e.g. .astype('uint64'))")
        missing = np.asarray(pd.isna(items))
        if missing.any():
            count, first = where(missing)
            raise ValueError(f"{name} must not contain missing values (pandas NA): {count} item(s) are missing, "
                             f"first at index {first}; heavy-hitter items are never imputed")
        return np.asarray(items.to_numpy(dtype=np.dtype(dtype.numpy_dtype if hasattr(dtype, "numpy_dtype")
                                                        else dtype)))
    if isinstance(dtype, pd.StringDtype) or kind == "O":
        values = np.asarray(items.to_numpy(dtype=object, na_value=None), dtype=object)
        return values
    raise TypeError(f"{name} must be str, bytes or non-negative int items; got a pandas column of dtype {dtype}")


def _to_array(items, name):
    """Any accepted container as a 1-D NumPy array (numeric, ``U``, ``S`` or object)."""
    if isinstance(items, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of items; got a single {type(items).__name__} "
                        "(wrap it in a list)")
    if isinstance(items, np.ndarray):
        arr = plain_array(items, name)
    elif isinstance(items, (list, tuple)):
        arr = np.empty(len(items), dtype=object)
        arr[:] = items if items else []
    elif type(items).__module__.split(".")[0] == "pandas" and hasattr(items, "dtype"):
        arr = _from_pandas(items, name)
    else:
        raise TypeError(f"{name} must be a list, tuple, NumPy array or pandas Series of items; "
                        f"got {type(items).__name__}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    return arr


def _check_uint(arr, bits, name):
    """A NumPy int/uint array as uint64 words, each checked to be in [0, 2**bits)."""
    if arr.dtype.kind == "i":
        neg = arr < 0
        if neg.any():
            count, first = where(neg)
            raise ValueError(f"{name} must be non-negative integers; {count} item(s) are negative, first at "
                             f"index {first} ({int(arr[first])})")
    words = arr.astype(np.uint64)
    if bits < 64:
        big = words >= np.uint64(1 << bits)
        if big.any():
            count, first = where(big)
            raise ValueError(f"{name} must be integers below 2**item_bits = 2**{bits}; {count} item(s) are not, "
                             f"first at index {first} ({int(words[first])}); integer items are never truncated: "
                             "raise item_bits")
    if bits > 64:  # below 2**64 <= 2**bits: the lowest word of each row
        wide = np.zeros((words.size, item_words(bits)), dtype=np.uint64)
        wide[:, -1] = words
        return wide
    return words


def _ints(arr, bits, name):
    """An object array of Python/NumPy ints as uint64 words, each checked to be in [0, 2**bits)."""
    values = arr.tolist()
    try:
        fast = np.array(values)
    except (OverflowError, ValueError, TypeError):
        fast = None
    if fast is not None and fast.dtype.kind in "iu" and fast.shape == arr.shape:
        return _check_uint(fast, bits, name)
    ints = [int(v) for v in values]
    bad = [i for i, v in enumerate(ints) if v < 0]
    if bad:
        raise ValueError(f"{name} must be non-negative integers; {len(bad)} item(s) are negative, first at "
                         f"index {bad[0]} ({ints[bad[0]]})")
    bad = [i for i, v in enumerate(ints) if v >> bits]
    if bad:
        raise ValueError(f"{name} must be integers below 2**item_bits = 2**{bits}; {len(bad)} item(s) are not, "
                         f"first at index {bad[0]} ({_short(ints[bad[0]])}); integer items are never truncated: "
                         "raise item_bits")
    return ints_to_words(ints, bits)


def _object_words(arr, bits):
    """Words of an object array (or a list) of only exact ``bytes`` or only exact ``str`` items in one compiled pass.

    Returns ``(words, item_type, n_truncated, first_truncated)``; None for anything else (the checked NumPy route then
    classifies the items and names the offending one).
    """
    if bits % 8:
        return None
    return object_words(arr, bits // 8)


def _utf8(v):
    return v.encode("utf-8") if isinstance(v, str) else v


def _refuse_truncation(count, first, size, bits, name, item_type):
    """The ValueError of ``truncate=False`` for ``count`` items longer than ``bits`` allows.

    An error is the caller's, so it names the first one.
    """
    what = "bytes" if item_type == "bytes" else "bytes of UTF-8"
    return ValueError(f"{name}: {count} item(s) are longer than item_bits={bits} allows "
                      f"({bits // 8} {what}), first at index {first} ({size} bytes); "
                      "raise item_bits or pass truncate=True to cut them")


def _truncation_warning(count, first, bits, name, item_type, locate):
    """The one :class:`TruncationWarning` of a call: the count only, unless ``locate`` (collector side)."""
    nbytes = bits // 8
    what = "bytes" if item_type == "bytes" else "bytes of UTF-8"
    where_ = f", first at index {first}" if locate else ""
    return TruncationWarning(
        f"{name}: {count} item(s) longer than {nbytes} {what} (item_bits={bits}) were truncated "
        f"to their first {nbytes} bytes{where_}; they are counted with every item sharing that prefix",
        count=count, first_index=first if locate else -1)


def _bytes_words(values, bits, name, item_type, truncate):
    """Words of byte strings (a list of bytes or an ``S`` array).

    One NumPy conversion to fixed-width ``S(nbytes + 1)``: the extra byte shows which items are longer than
    ``nbytes`` (``str_len`` of the fixed array; zero bytes at the end are padding and do not count).
    """
    nbytes = bits // 8
    fixed = np.asarray(values, dtype=f"S{nbytes + 1}") if not isinstance(values, np.ndarray) else \
        values.astype(f"S{nbytes + 1}")
    long = np.strings.str_len(fixed) > nbytes
    n_truncated = int(np.count_nonzero(long))
    first = int(np.argmax(long)) if n_truncated else -1
    if n_truncated and not truncate:
        raise _refuse_truncation(n_truncated, first, len(values[first]), bits, name, item_type)
    n_words = item_words(bits)
    # the item's nbytes bytes (zero bytes on the right) as the low bytes of a big-endian integer of n_words words
    raw = np.zeros((fixed.size, 8 * n_words), dtype=np.uint8)
    raw[:, 8 * n_words - nbytes:] = fixed.view(np.uint8).reshape(fixed.size, nbytes + 1)[:, :nbytes]
    words = raw.view(">u8").astype(np.uint64)
    return (words[:, 0] if n_words == 1 else words), n_truncated, first


def _strings(values, bits, name, truncate):
    """Words of a list of Python str."""
    if "\x00" in "".join(values):
        bad = [i for i, v in enumerate(values) if "\x00" in v]
        raise ValueError(f"{name} must not contain the NUL character '\\x00' (it is the padding byte, so such "
                         f"strings would be ambiguous): {len(bad)} item(s) do, first at index {bad[0]} "
                         f"({_short(values[bad[0]])})")
    encoded = [v.encode("utf-8") for v in values]
    return _bytes_words(encoded, bits, name, "str", truncate)


def _unencodable(values, name):
    r"""The ValueError for str items with no UTF-8 form: their count, the first one's index and the offending character.

    Such items hold lone surrogates, e.g. from ``errors="surrogateescape"`` decoding or a JSON ``"\ud800"``.
    """
    bad, first_exc = [], None
    for i, v in enumerate(values):
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad.append(i)
                first_exc = first_exc or exc
    if not bad:  # pragma: no cover - only called after an encoding error
        return None
    v = values[bad[0]]
    char = first_exc.object[first_exc.start]
    return ValueError(f"{name} must be valid Unicode text: {len(bad)} str item(s) have no UTF-8 form, first at "
                      f"index {bad[0]} ({_short(v)}: a lone surrogate {char!r} at position {first_exc.start}, as "
                      "left by decoding bytes with errors='surrogateescape' or a JSON \\ud800 escape); repair "
                      "or remove them, or pass the raw bytes with item_type='bytes'")


def _empty_type(arr, bits):
    kind = arr.dtype.kind
    if kind in "iu":
        return "uint"
    if kind == "S":
        return "bytes"
    if kind == "U":
        return "str"
    return "str" if bits % 8 == 0 else "uint"


def encode_items(items: object, item_bits: int = 64, *, name: str = "items",
                 truncate: bool = True, locate: bool = False) -> tuple[np.ndarray, str, int]:
    r"""Encode str, bytes or unsigned-integer items as fixed-width words (the heavy hitters' input).

    Parameters
    ----------
    items : list, tuple, numpy.ndarray or pandas Series/Index/array
        One item per person, all of one type: ``str`` (encoded as UTF-8), ``bytes``, or non-negative
        integers (Python or NumPy). Accepted containers: a list or tuple; a NumPy array of unsigned or signed
        integers (negatives refused), of ``str_`` (``U``), ``bytes_`` (``S``) or of objects; a pandas Series,
        Index or array of object, ``string`` (python or pyarrow storage), categorical or integer (nullable
        too) dtype.
    item_bits : int, default 64
        The width :math:`L` of the encoding, in [1, 256]; a multiple of 8 for str and bytes items (at most
        :math:`L/8` bytes, e.g. 32 bytes of UTF-8 at 256 bits).
    name : str, default "items"
        How messages name the items (e.g. the column's name).
    truncate : bool, default True
        What to do with str/bytes items longer than :math:`L/8` bytes: cut them to their first :math:`L/8`
        bytes with one :class:`~ldpnum.exceptions.TruncationWarning` (True), or raise ValueError (False).
        Integers are never truncated.
    locate : bool, default False
        Whether the TruncationWarning names the position of the first truncated item. Off by default: on a
        client, a warning is a side channel (it may be logged, or shown and sent on), so it must not point at
        individual inputs; a collector-side caller that holds the whole column (a simulation, a file) may
        ask for it. Errors (``truncate=False``) always name the first bad item: they go to the caller.

    Returns
    -------
    words : numpy.ndarray of uint64, shape (n,) up to 64 bits, (n, W) above
        C-contiguous and read-only. ``words[i]`` is the integer :math:`w \in [0, 2^L)` whose :math:`L`-bit
        binary expansion (most significant bit first) is item ``i``'s encoding, so its prefix of length
        :math:`l` is ``words[i] >> (L - l)`` (see the module docstring for the encoding of each type). For
        :math:`L > 64` row ``i`` holds the :math:`W = \lceil L/64 \rceil` base-:math:`2^{64}` digits of
        :math:`w`, most significant first (:func:`words_to_ints` gives the Python ints).
    item_type : {"str", "bytes", "uint"}
        The type of the items, for :func:`decode_items`. For an empty input it is read from the dtype when
        there is one (integers: "uint", ``S``: "bytes", ``U``/``string``: "str"); otherwise it is "str",
        or "uint" when ``item_bits`` is not a multiple of 8 (the only type that width admits).
    n_truncated : int
        How many items were truncated (0 for integers and whenever none was too long).

    Raises
    ------
    TypeError
        ``items`` is not an accepted container, or holds bools, floats, other objects, or items of mixed
        types (the message names the first offending index and both types); ``item_bits`` is not an int.
    ValueError
        Missing values (None, NaN, pandas NA: never imputed), negative integers, integers of :math:`L` bits
        or more, strings containing NUL, items too long with ``truncate=False``, a multi-dimensional array,
        ``item_bits`` outside [1, 256] or not a multiple of 8 for str/bytes items. Messages give the count and
        first index of the bad items; nothing is returned or warned before all checks pass.

    Warns
    -----
    TruncationWarning
        Once per call, when str/bytes items were truncated, with their ``count``; ``first_index`` is -1
        (and the message names no position) unless ``locate=True``. What it reveals: how many of the call's
        raw items were longer than :math:`L/8` bytes, a fact about the raw items that no randomization
        protects (for one person's call, whether their item was long). Keep it on the device that holds the
        items; it is never part of the reports.

    Notes
    -----
    Lists and object arrays holding only ``bytes`` or only ``str`` take one compiled pass (each item's bytes,
    or its UTF-8 form, read in place and written as a word; a list is read as it is, without the object array,
    whose making cost 24 ms per million items, more than the pass; :mod:`ldpnum._kernels.objects`); anything else
    (integers, subclasses, mixed or missing items) takes the checked NumPy route: strings encoded in one list
    comprehension, then cut and padded by one conversion to a fixed-width byte array (one byte wider than
    kept, which shows the items that are cut), viewed as big-endian 64-bit words. Both give the same words and
    the same truncation count (tested against each other and against the bit-by-bit definition). Bytes items
    ending in zero bytes are not told apart from the padding, so zero bytes beyond the width are not counted as
    truncation. Measured on the development machine (2 cores, shared, 2026, medians of 5): one million short
    ASCII strings (1–8 characters) encode in 0.02 s from a list of str or of bytes, 0.07 s from a pandas
    ``string`` column; one million integers in 0.07 s from a list and under 1 ms from a NumPy array; one million
    path-like strings of 20–32 bytes from a list in 0.015 s at 64 bits and 0.028 s at 256 bits (one thread,
    December 2026, load about 3).

    Examples
    --------
    >>> from ldpnum.heavy import encode_items, decode_items
    >>> words, item_type, n_truncated = encode_items(["ab", "b"], item_bits=16)
    >>> [hex(w) for w in words], item_type, n_truncated
    (['0x6162', '0x6200'], 'str', 0)
    >>> int(words[0] >> 8) == ord("a")        # the prefix of 8 bits is the first byte
    True
    >>> decode_items(words, item_type, 16)
    ['ab', 'b']
    >>> encode_items([5, 2**20 - 1], item_bits=20)[0]
    array([      5, 1048575], dtype=uint64)

    The truncation warning counts the cut items but says which only when asked (``locate=True``):

    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = encode_items(["ok", "far too long"], item_bits=32)
    >>> w = caught[0].message
    >>> w.count, w.first_index, "index" in str(w)
    (1, -1, False)
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str; got {type(name).__name__}")
    if not isinstance(truncate, (bool, np.bool_)):
        raise TypeError(f"truncate must be a bool; got {type(truncate).__name__} {truncate!r}")
    bits = check_item_bits(item_bits)
    # a list of only str or only bytes is read in place by the compiled pass; anything else becomes an array first
    arr = items if type(items) is list and items else _to_array(items, name)
    if not isinstance(locate, (bool, np.bool_)):
        raise TypeError(f"locate must be a bool; got {type(locate).__name__} {locate!r}")
    try:
        fast = _object_words(arr, bits) if isinstance(arr, list) else None
        if fast is None and isinstance(arr, list):
            arr = _to_array(items, name)
        words, item_type, n_truncated, first = _encode(arr, bits, name, truncate, fast)
    except UnicodeEncodeError:
        error = _unencodable(arr if isinstance(arr, list) else arr.tolist(), name)
        if error is None:  # pragma: no cover
            raise
        raise error from None
    words = np.ascontiguousarray(words, dtype=np.uint64)
    if fast is None and np.shares_memory(words, arr):
        words = words.copy()
    words.flags.writeable = False
    if n_truncated:
        warnings.warn(_truncation_warning(n_truncated, first, bits, name, item_type, bool(locate)),
                      stacklevel=_caller_stacklevel())
    return words, item_type, n_truncated


def _encode(arr, bits, name, truncate, fast=None):
    """:func:`encode_items` on a checked 1-D array: ``(words, item_type, n_truncated, first_truncated)``.

    ``fast`` is the compiled pass's result when the caller has it (``arr`` is then the list it read). Refuses
    truncation with ``truncate=False``, warns about nothing.
    """
    n_truncated, first = 0, -1
    if fast is None and arr.dtype.kind == "O":
        fast = _object_words(arr, bits)
    if fast is not None:
        words, item_type, n_truncated, first = fast
        if n_truncated and not truncate:
            raise _refuse_truncation(n_truncated, first, len(_utf8(arr[first])), bits, name, item_type)
    elif arr.size == 0:
        item_type = _empty_type(arr, bits)
        check_item_bits(bits, item_type)
        words = np.empty((0, item_words(bits)) if bits > 64 else 0, dtype=np.uint64)
    elif arr.dtype.kind in "iu":
        item_type, words = "uint", _check_uint(arr, bits, name)
    elif arr.dtype.kind == "U":
        item_type = "str"
        check_item_bits(bits, item_type)
        words, n_truncated, first = _strings(arr.tolist(), bits, name, truncate)
    elif arr.dtype.kind == "S":
        item_type = "bytes"
        check_item_bits(bits, item_type)
        words, n_truncated, first = _bytes_words(arr, bits, name, item_type, truncate)
    elif arr.dtype.kind == "O":
        values = arr.tolist()
        types = set(map(type, values))
        item_type = _classify(values, name, types)
        check_item_bits(bits, item_type)
        if item_type == "uint":
            words = _ints(arr, bits, name)
        elif item_type == "str":
            words, n_truncated, first = _strings(values if types == {str} else [str(v) for v in values], bits,
                                                 name, truncate)
        else:
            # exact bytes convert from the object array (faster than from the list); bytearray, memoryview
            # and bytes subclasses are copied to bytes first
            words, n_truncated, first = _bytes_words(arr if types == {bytes} else [bytes(b) for b in values],
                                                     bits, name, item_type, truncate)
    elif arr.dtype.kind == "b":
        raise TypeError(f"{name} must be str, bytes or non-negative int items; got booleans (dtype {arr.dtype})")
    elif arr.dtype.kind in "fc":
        raise TypeError(f"{name} must be str, bytes or non-negative int items; got floats (dtype {arr.dtype}): "
                        "convert whole-number floats to ints first (e.g. numpy.asarray(x).astype('uint64'))")
    else:
        raise TypeError(f"{name} must be str, bytes or non-negative int items; got an array of dtype {arr.dtype}")
    return words, item_type, n_truncated, first


def _words(words, bits, name="words", width="item_bits"):
    """``words`` as uint64, each checked to be an integer in ``[0, 2**bits)``.

    TypeError/ValueError name the count, first index and value of the bad ones. Lists and tuples are read as Python ints
    one by one, so that ``-1`` or ``2**70`` are named, not converted to floats or refused by a C conversion.
    """
    if isinstance(words, (list, tuple)):
        arr = np.empty(len(words), dtype=object)
        arr[:] = words if len(words) else []
    else:
        arr = np.asarray(words)
    n_words = item_words(bits)
    if n_words > 1 and arr.ndim == 2 and arr.shape[1] == n_words and (arr.dtype.kind in "iu" or arr.size == 0):
        if arr.dtype.kind == "i" and (arr < 0).any():  # rows of base-2**64 digits: each in [0, 2**64)
            count, first = where((arr < 0).any(axis=1))
            raise ValueError(f"{name} must be non-negative; {count} rows hold a negative digit, first at index "
                             f"{first}")
        rows = np.ascontiguousarray(arr, dtype=np.uint64)
        top_bits = bits - 64 * (n_words - 1)  # the bits of the first digit, 1..64 (a shift by 64 is undefined)
        top = rows[:, 0] >> np.uint64(top_bits) if top_bits < 64 else np.zeros(0, np.uint64)
        if top.any():
            count, first = where(top != 0)
            raise ValueError(f"{name} must be below 2**{width} = 2**{bits}; {count} are not, first at index {first}")
        return rows
    if arr.ndim != 1:
        expect = f"one-dimensional, or ({arr.shape[0] if arr.ndim else 'n'}, {n_words}) rows of words" \
            if n_words > 1 else "one-dimensional"
        raise ValueError(f"{name} must be {expect}; got shape {arr.shape}")
    if arr.dtype.kind == "O":
        values = arr.tolist()
        bad = [i for i, v in enumerate(values)
               if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral)]
        if bad:
            v = values[bad[0]]
            raise TypeError(f"{name} must be unsigned integers; {len(bad)} are not, first at index {bad[0]} "
                            f"({type(v).__name__} {_short(v)})")
        ints = [int(v) for v in values]
        bad = [i for i, v in enumerate(ints) if v < 0]
        if bad:
            raise ValueError(f"{name} must be non-negative; {len(bad)} are negative, first at index {bad[0]} "
                             f"({ints[bad[0]]})")
        bad = [i for i, v in enumerate(ints) if v >> bits]
        if bad:
            raise ValueError(f"{name} must be below 2**{width} = 2**{bits}; {len(bad)} are not, first at index "
                             f"{bad[0]} ({_short(ints[bad[0]])})")
        return ints_to_words(ints, bits)
    if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype.kind == "f"):
        raise TypeError(f"{name} must be an array of unsigned integers; got dtype {arr.dtype}")
    if arr.dtype.kind == "i" and (arr < 0).any():
        count, first = where(arr < 0)
        raise ValueError(f"{name} must be non-negative; {count} are negative, first at index {first} "
                         f"({int(arr[first])})")
    arr = arr.astype(np.uint64)
    if bits < 64 and (arr >> np.uint64(bits)).any():
        count, first = where((arr >> np.uint64(bits)) != 0)
        raise ValueError(f"{name} must be below 2**{width} = 2**{bits}; {count} are not, first at index {first} "
                         f"({int(arr[first])})")
    if n_words > 1:
        wide = np.zeros((arr.size, n_words), dtype=np.uint64)
        wide[:, -1] = arr
        return wide
    return arr


def check_words(words: object, item_bits: int, *, name: str = "words") -> np.ndarray:
    """Words (encoded items, e.g. candidates read from a payload or a file) checked and returned as uint64.

    Up to 64 bits one word per item; wider items as rows of ``W = ceil(item_bits / 64)`` words (most significant
    first), from such rows or from Python ints below ``2**item_bits``.

    Lists and tuples are read as Python ints one by one, so a bad entry is named by its index and value
    instead of failing in a C conversion (``Python int too large to convert to C long``, ``Python integer -1
    out of bounds for uint64``) or turning the list into floats.

    Raises
    ------
    TypeError
        An entry is not an integer (bools, floats and strings included), or an array is not of integers.
    ValueError
        An entry is negative or not below ``2**item_bits``; ``words`` is not one-dimensional. Messages give
        ``name``, the count and the first index and value of the bad entries.

    Examples
    --------
    >>> check_words([3, 255], 8).tolist()
    [3, 255]
    >>> check_words([3, -1], 8, name="candidates")
    Traceback (most recent call last):
    ...
    ValueError: candidates must be non-negative; 1 are negative, first at index 1 (-1)
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str; got {type(name).__name__}")
    return _words(words, check_item_bits(item_bits), name=name)


def decode_items(words: object, item_type: str, item_bits: int) -> list:
    r"""Decode words made by :func:`encode_items` back into items (for results).

    Parameters
    ----------
    words : array_like of unsigned int, shape (k,) or (k, W)
        Words in :math:`[0, 2^L)`, ``L = item_bits``: one per item up to 64 bits; for wider items rows of
        :math:`W = \lceil L/64 \rceil` words, most significant first (as :func:`encode_items` returns them), or
        Python ints below :math:`2^L`.
    item_type : {"str", "bytes", "uint"}
        The type :func:`encode_items` returned.
    item_bits : int
        The width :math:`L` the words were encoded with.

    Returns
    -------
    list
        ``"uint"``: Python ints (up to :math:`2^{256} - 1`). ``"bytes"``: the :math:`L/8` bytes of each word with
        the trailing zero bytes (the padding) stripped. ``"str"``: those bytes decoded as UTF-8 with
        ``errors="replace"``: a multi-byte character cut at the end by truncation becomes one replacement mark
        U+FFFD (so a cut item never reads as a complete shorter word), as does any other invalid byte sequence
        (a word that no string encodes, e.g. a noisy candidate).

    Examples
    --------
    >>> from ldpnum.heavy import encode_items, decode_items
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     words, kind, cut = encode_items(["día", "naïve!"], item_bits=24)
    >>> decode_items(words, kind, 24), cut   # "naïve!" was cut inside the two-byte "ï"
    (['dí', 'na\ufffd'], 2)
    >>> words, kind, _ = encode_items(["https://example.org/a/long/path"], item_bits=256)
    >>> words.shape, decode_items(words, kind, 256)
    ((1, 4), ['https://example.org/a/long/path'])
    """
    if item_type not in ITEM_TYPES:
        raise ValueError(f"item_type must be one of {ITEM_TYPES}; got {item_type!r}")
    bits = check_item_bits(item_bits, item_type)
    arr = _words(words, bits)
    if item_type == "uint":
        return words_to_ints(arr)
    nbytes, n_words = bits // 8, item_words(bits)
    big = np.ascontiguousarray(arr.reshape(-1, n_words).astype(">u8"))
    raw = np.ascontiguousarray(big.view(np.uint8).reshape(-1, 8 * n_words)[:, 8 * n_words - nbytes:])
    values = raw.view(f"S{nbytes}").reshape(-1).tolist()  # NumPy strips the trailing b"\0" (the padding)
    if item_type == "bytes":
        return values
    return [b.decode("utf-8", errors="replace") for b in values]


def admissible_prefixes(prefixes: object, length: int, item_type: str, item_bits: int) -> np.ndarray:
    r"""Which ``length``-bit prefixes can begin the encoding of a real item of ``item_type``.

    For ``"uint"`` and ``"bytes"`` every prefix can: every word is the encoding of some integer, and of some
    byte string (zero bytes may stand anywhere in a bytes item, e.g. the IPv4 address ``b"\x0a\x00\x00\x01"``;
    a word ending in zero bytes is the encoding of the item without them, since trailing zero bytes cannot be
    told from the padding). For ``"str"`` an encoding is the string's UTF-8 bytes followed by zero padding and
    strings holding NUL are refused, so a zero byte followed by a non-zero byte never occurs, not even one begun
    by the prefix's last bits; the complete bytes must also be valid UTF-8, except for an incomplete character
    at the end (a truncated string, or a prefix that stops inside a character). Used by the heavy-hitter
    estimators to drop impossible candidates.

    Examples
    --------
    >>> import numpy as np
    >>> w, _, _ = encode_items(["ab", "é"], 16)
    >>> bad = np.array([0x0061], dtype=np.uint64)  # "\x00a": a zero byte before a non-zero one
    >>> admissible_prefixes(np.concatenate([w, bad]), 16, "str", 16).tolist()
    [True, True, False]
    >>> admissible_prefixes(bad, 16, "bytes", 16).tolist()  # the bytes item b"\x00a"
    [True]
    """
    if item_type not in ITEM_TYPES:
        raise ValueError(f"item_type must be one of {ITEM_TYPES}; got {item_type!r}")
    bits = check_item_bits(item_bits, item_type)
    if not 1 <= check_scalar(length, "length", int) <= bits:
        raise ValueError(f"length must be an int in [1, item_bits = {bits}]; got {length!r}")
    n_bits = int(length)
    arr = _words(prefixes, n_bits, name="prefixes", width="length")
    if item_type != "str":
        return np.ones(arr.shape[0], dtype=bool)
    n_bytes = n_bits // 8
    if n_bytes == 0:
        return np.ones(arr.shape[0], dtype=bool)
    n_partial = n_bits - 8 * n_bytes
    if arr.ndim == 1:
        whole = arr >> np.uint64(n_partial)  # the complete bytes of each prefix, as an integer of n_bytes bytes
        partial = (arr & np.uint64((1 << n_partial) - 1)) != 0  # non-zero first bits of the next byte
        raw = whole.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - n_bytes:]  # (n, n_bytes), first byte first
    else:  # prefixes of more than 64 bits: rows of words, read as Python ints (a level's few candidates)
        ints = words_to_ints(arr)
        partial = np.array([v & ((1 << n_partial) - 1) != 0 for v in ints], dtype=bool)
        raw = np.frombuffer(b"".join((v >> n_partial).to_bytes(n_bytes, "big") for v in ints),
                            dtype=np.uint8).reshape(-1, n_bytes)
    nonzero = raw != 0
    # the last non-zero byte's position (-1 for none); a zero byte before it, or any zero byte when the next
    # byte has begun with non-zero bits, is a zero byte followed by a non-zero one
    last = np.where(nonzero.any(axis=1), n_bytes - 1 - np.argmax(nonzero[:, ::-1], axis=1), -1)
    zero_before = (~nonzero & (np.arange(n_bytes)[None, :] < last[:, None])).any(axis=1)
    out = ~(zero_before | (partial & ~nonzero.all(axis=1)))
    if item_type == "str":
        # ASCII bytes are valid UTF-8; the others are checked one by one
        for i in np.flatnonzero(out & (raw >= 0x80).any(axis=1)).tolist():
            stripped = raw[i].tobytes().rstrip(b"\x00")
            try:
                stripped.decode("utf-8")
            except UnicodeDecodeError as exc:
                # an incomplete character at the very end is a cut, not an error
                out[i] = exc.reason == "unexpected end of data" and exc.end == len(stripped)
    return out


def distinct_candidates(candidates: Any, words: np.ndarray, item_type: str, item_bits: int) -> list:
    """A dictionary of candidate items as a list, after checking it is not empty and its items are distinct.

    ``words`` are the candidates' words (:func:`encode_items`). Items that encode to the same word (str/bytes cut
    to ``item_bits / 8`` bytes) are refused: reports about them cannot be told apart. Integer items are returned as
    Python ints. One ValueError names the first repeated candidate and the one it repeats.
    """
    if words.shape[0] == 0:
        raise ValueError("candidates is empty: pass at least one candidate item")
    items = list(candidates.tolist() if hasattr(candidates, "tolist") else candidates)
    if item_type == "uint":
        items = [int(v) for v in items]
    uniq, first, inverse = np.unique(words, return_index=True, return_inverse=True,
                                     axis=0 if words.ndim == 2 else None)
    inverse = inverse.reshape(-1)
    if uniq.shape[0] != words.shape[0]:
        dup = np.flatnonzero(first[inverse] != np.arange(words.shape[0]))
        i = int(dup[0])
        j = int(first[inverse[i]])
        same = "repeats" if items[i] == items[j] else f"encodes to the same {item_bits}-bit word as"
        raise ValueError(f"candidates must be distinct items: {dup.size} are not, first candidate {i} ({items[i]!r}) "
                         f"{same} candidate {j} ({items[j]!r})")
    return items


def encode_typed_items(x: Any, item_type: str, item_bits: int, *, name: str, owner: str, truncate: bool = True,
                       locate: bool = False) -> np.ndarray:
    """:func:`encode_items` for a mechanism built for ``item_type`` items: their words, or one TypeError.

    Items of another type (including str/bytes items given to a mechanism whose ``item_bits`` is not whole bytes,
    which only uint items admit) raise a TypeError naming both types and the constructor argument to change;
    ``owner`` names the mechanism in it.
    """
    def mismatch(got):
        return TypeError(f"{name} holds {got} items but this {owner} was built for {item_type} items; "
                         f"pass item_type={got!r} to the constructor")

    try:
        words, got, _ = encode_items(x, item_bits, name=name, truncate=truncate, locate=locate)
    except ValueError as exc:  # str/bytes items at a width that is not whole bytes: a uint mechanism
        for t in ("str", "bytes"):
            if str(exc).startswith(f"{t} items need item_bits a multiple of 8"):
                raise mismatch(t) from exc
        raise
    if len(words) and got != item_type:
        raise mismatch(got)
    return words
