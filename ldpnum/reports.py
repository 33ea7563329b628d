"""Randomized reports: integer codes of a finite output alphabet and the spec that decodes them (design rule R3)."""

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ._typing import ArrayLike
from .spec import Spec, check_spec

__all__ = ["MAX_COLUMN_BITS", "Reports", "code_dtype", "packed_column_codes", "packed_column_rows",
           "register_code_check"]


def code_dtype(n_cells: int) -> "np.dtype[np.unsignedinteger]":
    """Smallest unsigned integer dtype holding codes ``0..n_cells-1``."""
    for dt in (np.uint8, np.uint16, np.uint32):
        if n_cells - 1 <= np.iinfo(dt).max:
            return np.dtype(dt)
    raise ValueError(f"output alphabet too large: {n_cells} cells")


def check_integer_codes(codes: ArrayLike, what: str = "codes") -> np.ndarray:
    """``codes`` as a 1-D NumPy array of non-negative integers (not copied), else one clear error.

    The shared first step of every structured-code check (hashing, hierarchical, PI-RAPPOR, HDG, vector column codes).
    """
    codes = np.asarray(codes)
    if codes.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional; got shape {codes.shape}")
    if codes.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers; got dtype {codes.dtype}")
    if codes.dtype.kind == "i" and codes.size and codes.min() < 0:
        bad = np.flatnonzero(codes < 0)
        raise ValueError(f"{what} has {bad.size} negative value(s), first at index {bad[0]} ({codes[bad[0]]})")
    return codes


class Reports:
    """Randomized reports: integer codes of a finite output alphabet, plus the :class:`Spec` to decode them.

    Parameters
    ----------
    codes : array_like of unsigned int
        One code per person, each in ``0..spec.n_cells-1``.
    spec : Spec
        The mechanism specification the codes were produced under.

    Notes
    -----
    Codes are stored in the smallest unsigned dtype that holds the alphabet and are read-only. Reports
    support ``len``, slicing, ``numpy.asarray`` and :meth:`concat`.

    *Bit-packed reports.* When the spec has the parameter ``packed_bits`` (= ``b``, e.g. the ``k`` bits of a
    unary encoding), each person's report is a bit vector and ``codes`` is a C-contiguous ``uint8`` array of
    shape ``(n, ceil(b/8))``: bit ``j`` of a report is bit ``j % 8`` (least significant first) of byte
    ``j // 8``, as ``numpy.packbits(..., bitorder="little")``; the padding bits of the last byte are zero.
    ``len``, slicing, boolean/fancy indexing, equality and :meth:`concat` work per person (row); an integer
    index returns that person's packed bytes.
    """

    __slots__ = ("codes", "spec")
    codes: np.ndarray
    spec: Spec

    def __init__(self, codes: ArrayLike, spec: Spec) -> None:
        if not isinstance(spec, Spec):
            raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
        codes = np.asarray(codes)
        if spec.get("packed_bits") is not None:
            self.codes = _check_packed(codes, int(spec.get("packed_bits")))
            self.spec = spec
            return
        check = _CODE_CHECKS.get(spec.mechanism)
        if check is not None:  # a mechanism whose codes are structured words, not a categorical alphabet
            codes = check(codes, spec)
            codes.flags.writeable = False
            self.codes = codes
            self.spec = spec
            return
        if codes.ndim != 1:
            raise ValueError(f"codes must be one-dimensional; got shape {codes.shape}")
        if codes.dtype.kind not in "iu":
            raise TypeError(f"codes must be integers; got dtype {codes.dtype}")
        dt = code_dtype(spec.n_cells)
        if codes.dtype != dt:
            if codes.size and (codes.min() < 0 or codes.max() >= spec.n_cells):
                bad = np.flatnonzero((codes < 0) | (codes >= spec.n_cells))
                raise ValueError(f"codes has {bad.size} value(s) outside the output alphabet 0..{spec.n_cells - 1}, "
                                 f"first at index {bad[0]} ({codes[bad[0]]})")
            codes = codes.astype(dt)
        elif codes.flags.writeable:
            codes = np.array(codes, copy=True)  # the caller keeps their array; ours is read-only
        codes.flags.writeable = False
        self.codes = codes
        self.spec = spec

    @classmethod
    def _from_kernel(cls, codes, spec):
        """Wrap codes that a mechanism's own kernel just wrote into an array it allocated, skipping the checks.

        The array is read-only, of the spec's dtype and layout: the codes are in the alphabet by construction, so the
        constructor's checks, which exist for codes from outside (a file, a pickle, a user array), are skipped.
        Measured: the structured-code checks took two thirds of a hierarchical histogram's privatize.
        """
        if codes.flags.writeable:
            raise ValueError("kernel output must be made read-only before it is wrapped")
        self = cls.__new__(cls)
        self.codes = codes
        self.spec = spec
        return self

    def __len__(self) -> int:
        return self.codes.shape[0]

    def __reduce__(self):
        return (Reports, (self.codes, self.spec))  # unpickled codes are checked again and read-only

    def __getitem__(self, item: Any) -> Any:
        if self.codes.ndim == 2:  # bit-packed: index people (rows) only
            if isinstance(item, tuple):
                raise IndexError("bit-packed reports are indexed by person only")
            sub = self.codes[item]
            return sub if sub.ndim == 1 else Reports(sub, self.spec)
        sub = self.codes[item]
        if np.ndim(sub) == 0:
            return int(sub)
        return Reports(sub, self.spec)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is None:
            return self.codes if not copy else self.codes.copy()
        return self.codes.astype(dtype)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Reports) and self.spec == other.spec
                and np.array_equal(self.codes, other.codes))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking container of codes: unhashable

    def __repr__(self) -> str:
        eps_perm, rnd = self.spec.get("epsilon_permanent"), self.spec.get("round")
        memo = "" if eps_perm is None else f", epsilon_permanent={eps_perm:g}"
        memo += "" if rnd is None else f", round={rnd}"
        return (f"Reports(n={len(self)}, mechanism={self.spec.mechanism!r}, epsilon={self.spec.epsilon:g}{memo}, "
                f"dtype={self.codes.dtype})")

    @property
    def epsilon(self) -> float:
        """ε of each report (ε1 for memoized reports)."""
        return self.spec.epsilon

    @property
    def epsilon_permanent(self) -> float | None:
        """ε∞ of memoized reports (:mod:`ldpnum.longitudinal`); None for one-shot reports.

        The bound of all reports about one memoized value of one person.
        """
        return self.spec.get("epsilon_permanent")

    @classmethod
    def concat(cls, parts: Iterable["Reports"]) -> "Reports":
        """Concatenate reports produced under one spec."""
        parts = list(parts)
        if not parts:
            raise ValueError("concat needs at least one Reports")
        spec = parts[0].spec
        for p in parts[1:]:
            check_spec(spec, p.spec, "reports")
        return cls(np.concatenate([p.codes for p in parts]), spec)


_CODE_CHECKS: dict[str, Callable[[np.ndarray, Spec], np.ndarray]] = {}


#: The most bits a bit-packed report may have to fit one table-column code (a uint64).
MAX_COLUMN_BITS = 64


def packed_column_codes(codes: np.ndarray, n_bits: int) -> np.ndarray:
    """Bit-packed reports (``(n, ceil(n_bits/8))`` uint8) as one code per person: bit ``j`` of the report is bit ``j``.

    The code of a report is ``sum_j bit_j * 2**j`` in the smallest unsigned dtype holding ``n_bits`` bits (at
    most :data:`MAX_COLUMN_BITS`); :func:`packed_column_rows` inverts it.

    Examples
    --------
    >>> import numpy as np
    >>> rows = np.packbits([[1, 0, 1], [0, 1, 1]], axis=1, bitorder="little")
    >>> packed_column_codes(rows, 3).tolist()
    [5, 6]
    """
    if n_bits > MAX_COLUMN_BITS:
        raise ValueError(f"{n_bits}-bit reports do not fit one {MAX_COLUMN_BITS}-bit column code")
    n = codes.shape[0]
    words = np.zeros((n, 8), dtype=np.uint8)
    words[:, :codes.shape[1]] = codes
    out = words.view("<u8").reshape(n)
    return out.astype(code_dtype(1 << n_bits) if n_bits <= 32 else np.uint64)


def packed_column_rows(codes: ArrayLike, n_bits: int, what: str = "column codes") -> np.ndarray:
    """The bit-packed rows (``(n, ceil(n_bits/8))`` uint8) behind :func:`packed_column_codes`' codes.

    Codes that are negative, not integers, or have a bit set at or beyond bit ``n_bits`` raise ValueError
    (with the count and first index).

    Examples
    --------
    >>> packed_column_rows([5, 6], 3).tolist()
    [[5], [6]]
    """
    words = check_integer_codes(codes, what).astype(np.uint64)
    if n_bits < 64 and words.size and int(words.max()) >> n_bits:
        bad = np.flatnonzero(words >> np.uint64(n_bits))
        raise ValueError(f"{what}: {bad.size} code(s) have bits set beyond the {n_bits} bits of a report, first at "
                         f"index {bad[0]} ({int(words[bad[0]])})")
    rows = words.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :-(-n_bits // 8)]
    return np.ascontiguousarray(rows)


def register_code_check(mechanism: str, check: Callable[[np.ndarray, Spec], np.ndarray]) -> None:
    """Declare that reports of ``mechanism`` are structured words checked by ``check(codes, spec)``.

    ``check`` returns the validated codes as a new (or read-only) 1-D array, raising TypeError/ValueError
    that name the count and first index of bad reports. Used by mechanisms whose reports pack several fields
    into one ``uint64`` (local hashing, PI-RAPPOR), so that every ``Reports`` path — constructor, slicing,
    :meth:`Reports.concat`, pickling, pandas and Parquet round trips — validates them the same way.
    """
    _CODE_CHECKS[mechanism] = check


def _check_packed(codes, n_bits):
    """Validate bit-packed report codes: ``uint8`` of shape ``(n, ceil(n_bits/8))``, zero padding bits."""
    n_bytes = -(-n_bits // 8)
    if codes.dtype != np.uint8:
        raise TypeError(f"bit-packed report codes must be uint8 bytes; got dtype {codes.dtype}")
    if codes.ndim != 2 or codes.shape[1] != n_bytes:
        raise ValueError(f"bit-packed report codes of {n_bits} bits must have shape (n, {n_bytes}); "
                         f"got {codes.shape}")
    if n_bits % 8 and codes.shape[0]:
        bad = np.flatnonzero(codes[:, -1] >> (n_bits % 8))
        if bad.size:
            raise ValueError(f"codes has {bad.size} report(s) with padding bits set beyond bit {n_bits - 1}, "
                             f"first at index {bad[0]}")
    if not codes.flags.c_contiguous or codes.flags.writeable:
        codes = np.array(codes, order="C", copy=True)  # the caller keeps their array; ours is read-only
    codes.flags.writeable = False
    return codes

