"""Aggregates: mergeable counts of reports, checked against their number of reports."""

import hashlib
import hmac
import json
import math
import struct
import zlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._counting import count_in_slices, n_threads
from ._typing import ArrayLike, NDArray
from ._validation import check_scalar
from .spec import Spec, check_spec
from .reports import code_dtype

if TYPE_CHECKING:
    import pandas as pd

    from .accounting import ShuffleAmplification

__all__ = ["Aggregate", "check_block_counts", "count_codes", "register_count_check", "single_code_counts", "support_counts",
           "FRAME_ATTRS_KEY", "N_REPORTS_KEY"]


_AGG_MAGIC = b"LDPA"
_AGG_FORMAT = 1
_FLAG_N_REPORTS = 1
_FLAG_SPARSE = 2
_FLAG_MAC = 4
_FLAG_SHUFFLED = 8
_FLAG_SHUFFLE_EPSILON0 = 16  # the shuffle declaration names the local ε of each person's row (one more "<d")
_MAC_SIZE = 32
_U32_MAX = 2**32 - 1
#: attrs key of the spec in :meth:`Aggregate.to_frame`'s long form.
FRAME_ATTRS_KEY = "ldpnum_aggregate"
#: The ``key`` of the long-form row holding ``n_reports`` (aggregates with per-report counts).
N_REPORTS_KEY = -1


_I64_MAX = int(np.iinfo(np.int64).max)
_COUNT_CHECKS: dict[str, Callable[..., int | None]] = {}


def check_block_counts(counts: NDArray[Any], blocks: Any, offsets: Any, n_reports: int | None, spec: Any, *,
                       block: str = "level", cell: str = "cell", first: int = 0) -> int | None:
    """Count check of an aggregate made of blocks of single-code or support counts, one block per oracle.

    The blocks are hierarchical levels or HDG grids: ``blocks[j].level_reports(block)`` gives block ``j``'s reports; a
    hashed block's support counts are at most its reports; the blocks' reports add up to ``n_reports`` (required
    whenever there are counts). Messages number blocks from ``first``. Returns ``n_reports``.
    """
    if n_reports is None:
        if int(np.sum(counts)):
            raise ValueError(f"aggregate of {spec}: n_reports is required (hashed {block}s store support counts, "
                             "whose sum is not the number of reports)")
        n_reports = 0
    total = 0
    for j, oracle in enumerate(blocks):
        part = counts[offsets[j]:offsets[j + 1]]
        n_j = oracle.level_reports(part)
        if oracle.hashed and part.size > 1 and part[:-1].max() > n_j:
            c = int(np.argmax(part[:-1]))
            raise ValueError(f"aggregate of {spec}: {block} {j + first}'s support count {part[c]} of {cell} {c} "
                             f"exceeds the {block}'s {n_j} reports")
        total += n_j
    if total != n_reports:
        raise ValueError(f"aggregate of {spec}: n_reports={n_reports} but its {block}s hold {total} reports")
    return n_reports


def register_count_check(mechanism: str, check: Callable[..., Any]) -> None:
    """Declare how the counts of ``mechanism``'s aggregates must relate to their number of reports.

    ``check(counts, total, n_reports, spec)`` receives the non-negative int64 counts, their exact sum (a
    Python int) and the ``n_reports`` given (None or an int), raises ValueError when they cannot come
    from reports of ``spec`` (naming the cell and the numbers), and returns the ``n_reports`` to store
    (None when it is the sum of the counts). Every way of building an :class:`Aggregate` — its
    constructor, :meth:`Aggregate.from_bytes`, :meth:`Aggregate.from_frame`, unpickling — runs it, so an
    aggregate whose counts disagree with its reports is refused before any estimate is made from it.
    """
    _COUNT_CHECKS[mechanism] = check


def single_code_counts(counts: NDArray[Any], total: int, n_reports: int | None, spec: Any) -> int | None:
    """The count check of mechanisms whose report is one code: ``n_reports`` is the sum of the counts."""
    if n_reports is not None and n_reports != total:
        raise ValueError(f"aggregate of {spec}: n_reports={n_reports} but the counts sum to {total}; each "
                         f"report of {spec.mechanism} adds one to exactly one count")
    return None


def support_counts(counts: NDArray[Any], total: int, n_reports: int | None, spec: Any) -> int | None:
    """The count check of mechanisms whose report supports several cells: ``n_reports`` is stored, no count exceeds it.

    These are unary encodings, local hashing and PI-RAPPOR.
    """
    if n_reports is None:
        if total:
            raise ValueError(f"aggregate of {spec}: n_reports is required (each report of {spec.mechanism} "
                             "adds to several counts, so their sum is not the number of reports)")
        return 0
    if counts.size and counts.max() > n_reports:
        cell = int(np.argmax(counts))
        raise ValueError(f"aggregate of {spec}: count {counts[cell]} at cell {cell} exceeds n_reports "
                         f"({n_reports}); a report adds at most one to each count")
    return n_reports


def _as_counts(counts) -> NDArray[np.int64]:
    """Counts as a new int64 array; refuses floats that are not whole and values beyond int64."""
    arr = np.asarray(counts)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"counts must be integers; got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if arr.size and not (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise ValueError("counts must be whole numbers")
        if arr.size and np.abs(arr).max() >= 2.0**63:
            raise ValueError("counts hold values beyond int64")
    elif arr.dtype == np.uint64 and arr.size and arr.max() > np.uint64(_I64_MAX):
        raise ValueError("counts hold values beyond int64")
    return np.array(arr, dtype=np.int64, copy=True)


def _total(counts):
    """Exact sum of non-negative int64 counts as a Python int; OverflowError beyond int64."""
    if not counts.size:
        return 0
    if int(counts.max()) <= _I64_MAX // counts.size:
        total = int(counts.sum())  # cannot wrap
    else:
        total = sum(int(c) for c in counts)
    if total > _I64_MAX:
        raise OverflowError(f"counts sum to {total}, beyond int64 (2**63 - 1): not an aggregate of reports")
    return total


class Aggregate:
    """Mergeable sufficient statistics of reports: the count of each output code.

    ``a + b`` merges two aggregates of the same spec (a :class:`SpecMismatchError` otherwise), the
    empty aggregate (:meth:`empty`) is the identity, and ``sum(aggregates)`` works. Counts are exact
    int64, so merging in any order or grouping gives the same result.

    An aggregate may be declared *shuffled* (:meth:`shuffled`): its reports reached the collector anonymized
    and uniformly shuffled, so estimates made from it also show the central ε of the batch
    (:attr:`shuffle`). Merging keeps that declaration only where it stays true; see :meth:`shuffled`.
    """

    __slots__ = ("counts", "spec", "_n_reports", "_shuffle", "_shuffle_amplification")
    counts: NDArray[np.int64]
    spec: Spec

    def __init__(self, counts: ArrayLike, spec: Spec, n_reports: int | None = None) -> None:
        if not isinstance(spec, Spec):
            raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
        counts = _as_counts(counts)
        if counts.shape != (spec.n_cells,):
            raise ValueError(f"counts must have shape ({spec.n_cells},) for {spec}; got {counts.shape}")
        if counts.size and counts.min() < 0:
            bad = np.flatnonzero(counts < 0)
            raise ValueError(f"counts must be non-negative; {bad.size} are negative, first at cell {bad[0]} "
                             f"({counts[bad[0]]})")
        total = _total(counts)
        if n_reports is not None:
            n_reports = check_scalar(n_reports, "n_reports", int, low=0, high=_I64_MAX)
        check = _COUNT_CHECKS.get(spec.mechanism)
        if check is not None:
            n_reports = check(counts, total, n_reports, spec)
        elif n_reports is not None and counts.size and counts.max() > n_reports:
            cell = int(np.argmax(counts))
            raise ValueError(f"aggregate of {spec}: count {counts[cell]} at cell {cell} exceeds n_reports "
                             f"({n_reports}); no report adds more than one to a cell")
        counts.flags.writeable = False
        self.counts = counts
        self.spec = spec
        # Reports that set several cells each (unary encodings: one count per bit) carry n separately.
        self._n_reports = n_reports
        self._shuffle = None
        self._shuffle_amplification = None

    @classmethod
    def _merged(cls, counts, spec, n_reports, shuffle=None):
        """An aggregate built from the sum of two checked aggregates of one spec.

        Every layout's rule (single codes sum to n; no count above n; per-block totals) is preserved by addition, so
        only the overflow check (done by the caller) is needed.
        """
        self = cls.__new__(cls)
        counts.flags.writeable = False
        self.counts = counts
        self.spec = spec
        self._n_reports = n_reports
        self._shuffle = shuffle
        self._shuffle_amplification = None
        return self

    # -- shuffled collections -------------------------------------------------------------------------
    def shuffled(self, delta: float = 1e-6, *, epsilon0: float | None = None) -> "Aggregate":
        r"""The same aggregate, declared as **one shuffled batch**.

        Its reports, one per distinct person, reached the collector anonymized and uniformly permuted (a trusted
        shuffler or a mixnet).

        Nothing about the counts changes; estimates made from the returned aggregate carry
        :attr:`shuffle`, the central :math:`(ε, δ)` of the batch by amplification by shuffling
        (:func:`ldpnum.accounting.shuffle_epsilon` with the local ε of the spec and ``n = n_reports``), and
        show it next to the local ε.

        Parameters
        ----------
        delta : float, default 1e-6
            The central δ, in (0, 1).
        epsilon0 : float, optional
            The local ε of what each person sent in the batch, when that is more than this column's report:
            a row of several report columns shuffled together (``epsilon_per_row``, e.g. the sum of the
            columns' ε). Default: the spec's ε. The central ε is then that of ``epsilon0``-LDP messages, the
            same for every column of the batch and for the ledger's entry (a column's own ε would understate
            what the shuffled rows reveal together). At least the spec's ε.

        Returns
        -------
        Aggregate
            A copy declared shuffled (a new declaration replaces an earlier one).

        Notes
        -----
        *Merging.* ``a + b`` of two shuffled aggregates is a collection of two batches shuffled apart. Each
        person is in one batch (an aggregate holds one report per person), so by parallel composition the
        merged collection is :math:`(\max_i ε_i, δ)`-DP, the :math:`ε` of its *smallest* batch: the merge
        keeps the declaration with the smallest batch size and the number of batches (they must share one
        δ, else ValueError). Merging a shuffled aggregate with a non-empty one that is not shuffled drops
        the declaration (people whose reports were not shuffled have only the local ε). Merging with an
        empty aggregate keeps it. To declare chunks of **one** shuffled batch, merge them
        first and declare the total: declaring each chunk gives the (valid, but larger) ε of the smallest
        chunk.

        The guarantee needs what :func:`~ldpnum.accounting.shuffle_epsilon` needs: a shuffler trusted to
        hide who sent what, one report per person in the batch. It is a statement about the release of this
        batch; each person's total across collections is the job of :class:`~ldpnum.PrivacyLedger`.

        Examples
        --------
        >>> import numpy as np, ldpnum as ldp
        >>> m = ldp.SquareWave(epsilon=4.0, bounds=(0, 1))
        >>> agg = m.aggregate(m.privatize(np.random.default_rng(0).random(100_000), rng=1)).shuffled(1e-6)
        >>> round(agg.shuffle.epsilon, 3), agg.shuffle.n
        (0.17, 100000)
        >>> print(m.estimate_mean(agg).privacy)
        local ε = 4, central ε (shuffled, n = 100,000, δ = 1e-06) = 0.1698
        """
        from .accounting import check_shuffle_delta

        delta = check_shuffle_delta(delta)
        n = self.n_reports
        if n < 1:
            raise ValueError(f"an aggregate of no reports cannot be declared shuffled (aggregate of {self.spec})")
        return Aggregate._merged(self.counts, self.spec, self._n_reports,
                                 _declaration(delta, n, 1, _check_epsilon0(epsilon0, self.spec), self.spec))

    @property
    def shuffle(self) -> "ShuffleAmplification | None":
        """The central ε of the shuffled batch(es), or None when the aggregate is not declared shuffled.

        A :class:`~ldpnum.accounting.ShuffleAmplification`, computed once; see :meth:`shuffled`.
        """
        if self._shuffle is None:
            return None
        if self._shuffle_amplification is None:
            from .accounting import shuffle_epsilon

            delta, smallest = self._shuffle[:2]
            self._shuffle_amplification = shuffle_epsilon(self.shuffle_epsilon0, smallest, delta)
        return self._shuffle_amplification

    @property
    def shuffle_epsilon0(self) -> float | None:
        """The local ε of each person's message in the shuffled batch; None when not shuffled.

        The spec's ε, or the larger ``epsilon0`` it was declared with (:meth:`shuffled`).
        """
        if self._shuffle is None:
            return None
        return self._shuffle[3] if len(self._shuffle) > 3 else self.spec.epsilon

    @property
    def shuffle_batches(self) -> int:
        """Number of separately shuffled batches merged into this aggregate (0 when it is not shuffled)."""
        return 0 if self._shuffle is None else self._shuffle[2]

    def _merged_shuffle(self, other):
        """The shuffle declaration of ``self + other`` (see :meth:`shuffled`, Notes)."""
        a, b = self._shuffle, other._shuffle
        if a is None and b is None:
            return None
        if a is not None and b is not None:
            if a[0] != b[0]:
                raise ValueError(f"cannot merge aggregates shuffled with delta {a[0]:g} and {b[0]:g}: no single "
                                 "delta describes the result; declare both with one delta")
            # the largest local ε over the smallest batch bounds every batch's central ε
            return _declaration(a[0], min(a[1], b[1]), a[2] + b[2],
                                max(self.shuffle_epsilon0, other.shuffle_epsilon0), self.spec)
        if other.n_reports == 0:
            return a
        if self.n_reports == 0:
            return b
        return None  # the reports that were not shuffled have only the local epsilon

    @classmethod
    def empty(cls, spec: Spec, *, per_report_counts: bool = False) -> "Aggregate":
        """The aggregate of no reports (the identity of ``+``)."""
        return cls(np.zeros(spec.n_cells, dtype=np.int64), spec, 0 if per_report_counts else None)

    @property
    def n_reports(self) -> int:
        """Number of reports aggregated."""
        return int(self.counts.sum()) if self._n_reports is None else self._n_reports

    def __add__(self, other: "Aggregate | int") -> "Aggregate":
        if isinstance(other, int) and other == 0:
            return self
        if not isinstance(other, Aggregate):
            return NotImplemented
        check_spec(self.spec, other.spec, "aggregates")
        if self._n_reports is None and other._n_reports is None:
            n = None
            _total(np.array([self.n_reports, other.n_reports], dtype=np.int64))  # no wrap of the total
        else:
            n = self.n_reports + other.n_reports
            if n > _I64_MAX:
                raise OverflowError(f"merged aggregate of {self.spec} would hold {n} reports, more than int64")
        shuffle = self._merged_shuffle(other)
        a, b = self.counts, other.counts
        if a.size and np.any(a > _I64_MAX - b):
            cell = int(np.flatnonzero(a > _I64_MAX - b)[0])
            raise OverflowError(f"merging aggregates of {self.spec} overflows int64 at cell {cell} "
                                f"({a[cell]} + {b[cell]})")
        return Aggregate._merged(a + b, self.spec, n, shuffle)

    __radd__ = __add__

    @classmethod
    def merge(cls, aggregates: Iterable["Aggregate"]) -> "Aggregate":
        """Merge any number of aggregates of one spec."""
        aggregates = list(aggregates)
        if not aggregates:
            raise ValueError("merge needs at least one Aggregate (use Aggregate.empty(spec) for none)")
        total = aggregates[0]
        for a in aggregates[1:]:
            total = total + a
        return total

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Aggregate) and self.spec == other.spec and self.n_reports == other.n_reports
                and self._shuffle == other._shuffle and np.array_equal(self.counts, other.counts))

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return (_rebuild, (self.counts, self.spec, self._n_reports, self._shuffle))

    def __repr__(self) -> str:
        shuffled = ""
        if self._shuffle is not None:
            delta, smallest, batches = self._shuffle[:3]
            shuffled = (f", shuffled=(delta={delta:g}" + (f", batches={batches}, smallest={smallest}" if batches > 1
                                                          else "")
                        + (f", epsilon0={self._shuffle[3]:g}" if len(self._shuffle) > 3 else "") + ")")
        return (f"Aggregate(n_reports={self.n_reports}, mechanism={self.spec.mechanism!r}, "
                f"epsilon={self.spec.epsilon:g}, n_cells={self.spec.n_cells}{shuffled})")

    # -- travelling: bytes and long-form frames --------------------------------------------------------
    def to_bytes(self, *, key: "bytes | str | None" = None) -> bytes:
        r"""Serialize to a small, versioned, self-describing byte string (:meth:`from_bytes` reads it back).

        This is what crosses the network when partitions are aggregated apart and merged on one machine: a
        header of a few hundred bytes plus at most ``8 × n_cells`` bytes of counts (about 8 KB for 1024
        cells), whatever the number of reports.

        Returns
        -------
        bytes

        Notes
        -----
        Layout (all integers little-endian)::

            offset  size  field
            0       4     magic b"LDPA"
            4       1     format version, 1
            5       1     flags: bit 0 = n_reports stored; bit 1 = sparse counts; bit 2 = MAC;
                          bit 3 = declared shuffled; other bits 0
            6       2     reserved, 0
            8       4     L, length of the spec JSON (uint32)
            12      L     spec JSON, UTF-8 (Spec.to_json)
            ...     8     n_reports (int64), present only when flag bit 0 is set (aggregates whose reports
                          each set several cells, e.g. unary encodings)
            ...     24    shuffle declaration, present only when flag bit 3 is set (:meth:`shuffled`):
                          δ (float64), smallest batch (int64), number of batches (int64)
            ...           counts, dense (flag bit 1 clear): n_cells × int64
                          or sparse (flag bit 1 set): nnz (uint32), then nnz strictly increasing cell
                          indices (uint32), then their nnz positive counts (int64)
            ...     32    HMAC-SHA256 of every preceding byte under the collector's key, present only
                          when flag bit 2 is set (``to_bytes(key=...)``)
            end-4   4     CRC-32 (zlib.crc32) of every preceding byte (uint32)

        *Integrity model.* The CRC catches corruption (truncation, flipped bits), not edits: anyone can
        rewrite the counts or the spec and recompute it. Against edits, the collector states the spec it
        expects (estimators refuse another), and for tamper evidence signs aggregates with a secret key
        (``key=``, HMAC-SHA256): :meth:`from_bytes` with the same key refuses an unsigned or edited one.

        The sparse form is written when it is strictly smaller, i.e. when
        :math:`4 + 12\,\mathrm{nnz} < 8\,n_\mathrm{cells}`. Round trips are exact:
        ``Aggregate.from_bytes(a.to_bytes()) == a``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpnum import Aggregate, Spec
        >>> a = Aggregate(np.array([3, 0, 5, 0]), Spec("demo", 1.0, 4))
        >>> b = a.to_bytes()
        >>> b[:4], Aggregate.from_bytes(b) == a
        (b'LDPA', True)
        """
        spec_json = self.spec.to_json().encode("utf-8")
        nz = np.flatnonzero(self.counts)
        sparse = self.spec.n_cells <= _U32_MAX and 4 + 12 * nz.size < 8 * self.spec.n_cells
        flags = ((_FLAG_N_REPORTS if self._n_reports is not None else 0) | (_FLAG_SPARSE if sparse else 0)
                 | (_FLAG_MAC if key is not None else 0) | (_FLAG_SHUFFLED if self._shuffle is not None else 0)
                 | (_FLAG_SHUFFLE_EPSILON0 if self._shuffle is not None and len(self._shuffle) > 3 else 0))
        parts = [_AGG_MAGIC, struct.pack("<BBHI", _AGG_FORMAT, flags, 0, len(spec_json)), spec_json]
        if self._n_reports is not None:
            parts.append(struct.pack("<q", self._n_reports))
        if self._shuffle is not None:
            parts.append(struct.pack("<dqq", *self._shuffle[:3]))
            if len(self._shuffle) > 3:
                parts.append(struct.pack("<d", self._shuffle[3]))
        if sparse:
            parts += [struct.pack("<I", nz.size), nz.astype("<u4").tobytes(), self.counts[nz].astype("<i8").tobytes()]
        else:
            parts.append(self.counts.astype("<i8").tobytes())
        body = b"".join(parts)
        if key is not None:
            body += hmac.new(collector_key(key), body, hashlib.sha256).digest()
        return body + struct.pack("<I", zlib.crc32(body))

    @classmethod
    def from_bytes(cls, data: bytes, *, key: "bytes | str | None" = None) -> "Aggregate":
        """Read an aggregate written by :meth:`to_bytes`, validating every field.

        Parameters
        ----------
        data : bytes, bytearray or memoryview
        key : bytes or str, optional
            The collector's MAC key: the aggregate must carry an HMAC-SHA256 made with it
            (``to_bytes(key=...)``), else ValueError. Without a key, a MAC present is not checked.

        Returns
        -------
        Aggregate

        Raises
        ------
        TypeError
            If ``data`` is not bytes-like.
        ValueError
            If ``data`` is truncated, corrupt (checksum, magic, lengths, flags, indices, negative counts) or
            of an unknown format version.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpnum import Aggregate, Spec
        >>> a = Aggregate(np.arange(4), Spec("demo", 1.0, 4))
        >>> Aggregate.from_bytes(bytearray(a.to_bytes())).counts
        array([0, 1, 2, 3])
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes; got {type(data).__name__}")
        data = bytes(data)
        if len(data) < 16 or data[:4] != _AGG_MAGIC:
            raise ValueError(f"data is not a serialized ldpnum Aggregate (length {len(data)}, "
                             f"starts with {data[:4]!r}; expected {_AGG_MAGIC!r})")
        body, (crc,) = data[:-4], struct.unpack("<I", data[-4:])
        if zlib.crc32(body) != crc:
            raise ValueError(f"serialized Aggregate is corrupt or truncated: checksum mismatch ({len(data)} bytes)")
        version, flags, reserved, n_json = struct.unpack_from("<BBHI", body, 4)
        if version != _AGG_FORMAT:
            raise ValueError(f"serialized Aggregate has format version {version}; this ldpnum reads {_AGG_FORMAT}")
        if flags & ~(_FLAG_N_REPORTS | _FLAG_SPARSE | _FLAG_MAC | _FLAG_SHUFFLED | _FLAG_SHUFFLE_EPSILON0) \
                or reserved or (flags & _FLAG_SHUFFLE_EPSILON0 and not flags & _FLAG_SHUFFLED):
            raise ValueError(f"serialized Aggregate has unknown flags {flags:#x} / reserved {reserved}")
        if flags & _FLAG_MAC:
            if len(body) < 12 + _MAC_SIZE:
                raise ValueError("serialized Aggregate is truncated: MAC missing")
            body, mac = body[:-_MAC_SIZE], body[-_MAC_SIZE:]
            if key is not None and not hmac.compare_digest(mac, hmac.new(collector_key(key), body,
                                                                         hashlib.sha256).digest()):
                raise ValueError("serialized Aggregate fails its MAC check: edited after signing, or signed "
                                 "with another key")
        elif key is not None:
            raise ValueError("serialized Aggregate carries no MAC: it was not signed with a collector key, so "
                             "it cannot be vouched for")
        pos = 12 + n_json
        if pos > len(body):
            raise ValueError(f"serialized Aggregate is truncated: spec of {n_json} bytes at offset 12, "
                             f"only {len(body) - 12} left")
        try:
            spec = Spec.from_json(body[12:pos].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError, ValueError) as exc:
            raise ValueError(f"serialized Aggregate holds an invalid spec: {exc}") from None
        n_reports = None
        if flags & _FLAG_N_REPORTS:
            if pos + 8 > len(body):
                raise ValueError("serialized Aggregate is truncated: n_reports missing")
            (n_reports,) = struct.unpack_from("<q", body, pos)
            pos += 8
            if n_reports < 0:
                raise ValueError(f"serialized Aggregate has a negative n_reports ({n_reports})")
        shuffle = None
        if flags & _FLAG_SHUFFLED:
            if pos + 24 > len(body):
                raise ValueError("serialized Aggregate is truncated: shuffle declaration missing")
            shuffle = struct.unpack_from("<dqq", body, pos)
            pos += 24
            if flags & _FLAG_SHUFFLE_EPSILON0:
                if pos + 8 > len(body):
                    raise ValueError("serialized Aggregate is truncated: shuffle declaration's epsilon0 missing")
                shuffle += struct.unpack_from("<d", body, pos)
                pos += 8
        n = spec.n_cells
        if flags & _FLAG_SPARSE:
            if n > _U32_MAX:
                raise ValueError(f"serialized Aggregate: sparse counts of {n} cells (at most {_U32_MAX})")
            if pos + 4 > len(body):
                raise ValueError("serialized Aggregate is truncated: sparse count length missing")
            (nnz,) = struct.unpack_from("<I", body, pos)
            pos += 4
            if len(body) - pos != 12 * nnz:
                raise ValueError(f"serialized Aggregate: {nnz} sparse counts need {12 * nnz} bytes; "
                                 f"got {len(body) - pos}")
            idx = np.frombuffer(body, dtype="<u4", count=nnz, offset=pos).astype(np.int64)
            vals = np.frombuffer(body, dtype="<i8", count=nnz, offset=pos + 4 * nnz)
            if nnz and (idx[-1] >= n or np.any(np.diff(idx) <= 0) or vals.min() <= 0):
                raise ValueError(f"serialized Aggregate: sparse counts must have strictly increasing cell "
                                 f"indices below {n} and positive counts")
            counts = np.zeros(n, dtype=np.int64)
            counts[idx] = vals
        else:
            if len(body) - pos != 8 * n:
                raise ValueError(f"serialized Aggregate: {n} counts need {8 * n} bytes; got {len(body) - pos}")
            counts = np.frombuffer(body, dtype="<i8", count=n, offset=pos)
        return _rebuild(counts, spec, n_reports, shuffle, cls)  # the constructor refuses negative counts

    def to_frame(self) -> "pd.DataFrame":
        """The aggregate in long form: a pandas DataFrame with int64 columns ``key`` and ``count``.

        One row per output cell with a non-zero count (``key`` = cell index, ascending), plus, for aggregates
        that store their number of reports separately (unary encodings: each report sets several cells),
        one row with ``key = -1`` holding ``n_reports``. Rows with equal keys add up on reading, so the
        frames of several partitions merge by concatenation, or by ``SELECT key, CAST(SUM("count") AS BIGINT)
        AS "count" ... GROUP BY key`` in an SQL engine (the cast: DuckDB sums into 128-bit integers). The spec travels in ``df.attrs["ldpnum_aggregate"]`` as
        ``{"format": 1, "spec": Spec.to_dict()}`` (engines that drop ``attrs`` pass ``spec=`` to
        :meth:`from_frame`).

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> import numpy as np
        >>> from ldpnum import Aggregate, Spec
        >>> a = Aggregate(np.array([3, 0, 5, 0]), Spec("demo", 1.0, 4))
        >>> a.to_frame()
           key  count
        0    0      3
        1    2      5
        >>> Aggregate.from_frame(a.to_frame()) == a
        True
        """
        import pandas as pd

        keys = np.flatnonzero(self.counts).astype(np.int64)
        counts = self.counts[keys]
        if self._n_reports is not None:
            keys = np.concatenate([np.array([N_REPORTS_KEY], dtype=np.int64), keys])
            counts = np.concatenate([np.array([self._n_reports], dtype=np.int64), counts])
        df = pd.DataFrame({"key": keys, "count": np.asarray(counts, dtype=np.int64)})
        df.attrs[FRAME_ATTRS_KEY] = {"format": 1, "spec": self.spec.to_dict()}
        if self._shuffle is not None:
            df.attrs[FRAME_ATTRS_KEY]["shuffle"] = list(self._shuffle)
        return df

    @classmethod
    def from_frame(cls, df: "pd.DataFrame", spec: Spec | None = None) -> "Aggregate":
        """Read the long form written by :meth:`to_frame` (or any concatenation of such frames).

        Parameters
        ----------
        df : pandas.DataFrame
            Integer columns ``key`` (cell index in ``0..n_cells-1``, or ``-1`` for the number of reports) and
            ``count`` (non-negative). Rows with equal keys add up; missing keys count zero.
        spec : Spec, optional
            Needed when ``df.attrs`` carries none (e.g. after Spark or SQL); must equal the recorded spec
            otherwise (:class:`~ldpnum.SpecMismatchError`).

        Returns
        -------
        Aggregate

        Raises
        ------
        TypeError
            For a non-DataFrame, non-integer columns or a non-Spec ``spec``.
        ValueError
            For missing columns or spec, missing values, keys outside the alphabet or negative counts
            (naming the count and first row).

        Examples
        --------
        >>> import pandas as pd
        >>> from ldpnum import Aggregate, Spec
        >>> df = pd.DataFrame({"key": [2, 0, 2], "count": [1, 4, 2]})
        >>> Aggregate.from_frame(df, spec=Spec("demo", 1.0, 4)).counts
        array([4, 0, 3, 0])
        """
        import pandas as pd

        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"df must be a pandas DataFrame; got {type(df).__name__}")
        if spec is not None and not isinstance(spec, Spec):
            raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
        info = df.attrs.get(FRAME_ATTRS_KEY)
        shuffle = None
        if info is not None:
            if not isinstance(info, dict) or info.get("format") != 1 or "spec" not in info:
                raise ValueError(f"df.attrs[{FRAME_ATTRS_KEY!r}] is not ldpnum aggregate metadata: {info!r}")
            recorded = Spec.from_dict(info["spec"])
            shuffle = info.get("shuffle")
            if spec is not None:
                check_spec(spec, recorded, "aggregate counts")
            spec = recorded
        if spec is None:
            raise ValueError(f"df carries no ldpnum spec in attrs[{FRAME_ATTRS_KEY!r}]; pass spec=")
        missing = [c for c in ("key", "count") if c not in df.columns]
        if missing:
            raise ValueError(f"df must have columns 'key' and 'count'; missing {missing}")
        cols = {}
        for name in ("key", "count"):
            s = df[name]
            if s.isna().any():
                bad = np.flatnonzero(s.isna().to_numpy())
                raise ValueError(f"column {name!r} has {bad.size} missing value(s), first at row {bad[0]}")
            if not pd.api.types.is_integer_dtype(s.dtype):
                raise TypeError(f"column {name!r} must hold integers; got dtype {s.dtype}")
            arr = s.to_numpy()
            if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
                raise ValueError(f"column {name!r} holds values beyond int64")
            cols[name] = arr.astype(np.int64)
        keys, counts = cols["key"], cols["count"]
        bad = np.flatnonzero((keys < N_REPORTS_KEY) | (keys >= spec.n_cells))
        if bad.size:
            raise ValueError(f"column 'key' has {bad.size} value(s) outside -1..{spec.n_cells - 1}, "
                             f"first at row {bad[0]} ({keys[bad[0]]})")
        bad = np.flatnonzero(counts < 0)
        if bad.size:
            raise ValueError(f"column 'count' has {bad.size} negative value(s), first at row {bad[0]} "
                             f"({counts[bad[0]]})")
        is_n = keys == N_REPORTS_KEY
        total = np.zeros(spec.n_cells, dtype=np.int64)
        np.add.at(total, keys[~is_n], counts[~is_n])
        n_reports = int(counts[is_n].sum()) if is_n.any() else None
        return _rebuild(total, spec, n_reports, shuffle, cls)


def _rebuild(counts, spec, n_reports, shuffle, cls=Aggregate):
    """An aggregate from its fields, every one checked.

    The constructor's count checks, then the shuffle declaration ``(delta, smallest batch, batches)`` (None when not
    shuffled), which must be possible for its number of reports. Used by unpickling, :meth:`Aggregate.from_bytes` and
    :meth:`Aggregate.from_frame`.
    """
    agg = cls(counts, spec, n_reports)
    if shuffle is None:
        return agg
    from .accounting import check_shuffle_delta

    if not isinstance(shuffle, (tuple, list)) or len(shuffle) not in (3, 4):
        raise ValueError(f"aggregate of {spec}: shuffle declaration must be (delta, smallest batch, batches[, "
                         f"epsilon0]); got {shuffle!r}")
    delta, smallest, batches = shuffle[:3]
    delta = check_shuffle_delta(delta)
    try:
        epsilon0 = _check_epsilon0(shuffle[3] if len(shuffle) > 3 else None, spec)
        smallest = check_scalar(smallest, "the smallest batch", int, low=1)
        batches = check_scalar(batches, "batches", int, low=1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"aggregate of {spec}: shuffle declaration: {exc}") from None
    if smallest * batches > agg.n_reports:
        raise ValueError(f"aggregate of {spec}: shuffle declaration of {batches!r} batch(es) of at least "
                         f"{smallest!r} reports is impossible with {agg.n_reports} reports")
    return Aggregate._merged(agg.counts, spec, agg._n_reports,
                             _declaration(delta, int(smallest), int(batches), epsilon0, spec))


def _check_epsilon0(epsilon0, spec):
    """``epsilon0`` of a shuffle declaration as a float (None: the spec's ε)."""
    if epsilon0 is None:
        return None
    epsilon0 = check_scalar(epsilon0, "epsilon0", float, finite=False)
    if not math.isfinite(epsilon0) or epsilon0 < spec.epsilon:
        raise ValueError(f"epsilon0 (the local epsilon of each person's shuffled message) must be finite and at "
                         f"least the report's own epsilon {spec.epsilon:g}; got {epsilon0!r}")
    return float(epsilon0)


def _declaration(delta, smallest, batches, epsilon0, spec=None):
    """The stored shuffle declaration: 3 fields, or 4 when ``epsilon0`` exceeds the spec's ε."""
    if epsilon0 is None or (spec is not None and epsilon0 == spec.epsilon):
        return (delta, smallest, batches)
    return (delta, smallest, batches, float(epsilon0))


def collector_key(key: "bytes | str") -> bytes:
    """A collector's MAC key as bytes: ``bytes`` (at least 16) or a str (UTF-8, at least 16 characters)."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray)):
        raise TypeError(f"key must be bytes or str; got {type(key).__name__}")
    if len(key) < 16:
        raise ValueError(f"key must hold at least 16 bytes (a secret of the collector's); got {len(key)}")
    return bytes(key)


_PARALLEL_MIN = 1 << 20


def count_codes(codes: NDArray[np.unsignedinteger], n_cells: int) -> NDArray[np.int64]:
    """Histogram of report codes over ``0..n_cells-1`` (the Cython aggregation kernel).

    Raises ValueError naming the count and first index of codes outside the alphabet.
    """
    from ._kernels.server_counts import count_codes as _count

    codes = np.ascontiguousarray(codes)
    if codes.dtype not in (np.uint8, np.uint16, np.uint32):
        if codes.dtype.kind not in "iu":
            raise TypeError(f"report codes must be integers; got dtype {codes.dtype}")
        if codes.size and (codes.min() < 0 or codes.max() > np.iinfo(np.uint32).max):
            bad = np.flatnonzero((codes < 0) | (codes >= n_cells))
            raise ValueError(f"reports hold {bad.size} code(s) outside the output alphabet 0..{n_cells - 1}, "
                             f"first at index {bad[0]}")
        codes = codes.astype(code_dtype(max(n_cells, 2)) if n_cells <= 2**32 else np.uint32)
    parallel = codes.shape[0] >= _PARALLEL_MIN and n_cells <= codes.shape[0] // 8
    counts, n_bad, first = count_in_slices(_count, codes, n_cells, n_slices=n_threads() if parallel else 1)
    if n_bad:
        raise ValueError(f"reports hold {n_bad} code(s) outside the output alphabet 0..{n_cells - 1}, "
                         f"first at index {first} ({int(codes[first])})")
    return counts
