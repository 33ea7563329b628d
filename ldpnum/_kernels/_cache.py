"""Compiling every client kernel before the first call: the signature manifest behind ``ldpnum compile``.

A first ``privatize`` above the interpreted tier's size compiles its kernels (1-5 s per mechanism, up to a
minute for SQKR on a loaded 2-core machine) unless Numba's on-disk cache already holds them. Each kernel is
called with one input signature per output code dtype (dtype normalization happens before dispatch; the common
test suite checks it), so the signatures are known in advance. ``signatures.txt`` beside this module lists
them, one line per signature::

    client_grr.grr_kernel(int64[1,C,ro], int64, int64, int64, uint64[1,C], uint8[1,C])

(kernel module and name; each argument a Numba scalar type, or an array as ``dtype[ndim,layout]`` with
``,ro`` when read-only). ``ldpnum compile`` (:func:`compile_all`) compiles every line into Numba's cache —
beside the kernel modules, or the per-user cache directory when the package directory is read-only, or
``NUMBA_CACHE_DIR`` — in a few worker processes, all signatures of one kernel in the same process (they share
one cache index file). Later processes *load* the compiled code (0.25-0.55 s per
mechanism) instead of compiling it. ``make install`` runs it; a ``pip install`` user runs ``python -m ldpnum
compile`` once (and again after upgrading Numba or moving to another processor: the cache is specific to both).

The manifest is checked against what the registered mechanisms launch (``tests/_kernels/test_cache.py``,
which also rewrites it: ``python tests/_kernels/test_cache.py --write``), so a new kernel or signature cannot be
left out silently.
"""

import concurrent.futures
import importlib
import multiprocessing
import os
import pathlib
import re
import time

from ldpnum._kernels import _jit

__all__ = ["MANIFEST", "encode", "decode", "read_manifest", "compile_entries", "compile_all"]

#: The manifest file: one ``module.kernel(arg, ...)`` line per signature (``#`` starts a comment).
MANIFEST = pathlib.Path(__file__).with_name("signatures.txt")

_PACKAGE = "ldpnum._kernels."
_ARRAY = re.compile(r"^(\w+)\[(\d+),([CFA])(,ro)?\]$")
_LINE = re.compile(r"^(\w+)\.(\w+)\((.*)\)$")


def encode(signature) -> str:
    """One Numba signature (a tuple of Numba types) as the manifest writes it.

    Examples
    --------
    >>> import numba
    >>> encode((numba.types.Array(numba.types.float64, 1, "C", readonly=True), numba.types.int64))
    'float64[1,C,ro], int64'
    """
    numba = _jit.numba_module()
    parts = []
    for t in signature:
        if isinstance(t, numba.types.Array):
            if not t.aligned:
                raise ValueError(f"unaligned array type {t} cannot be written to the kernel manifest")
            parts.append(f"{t.dtype}[{t.ndim},{t.layout}{'' if t.mutable else ',ro'}]")
        elif isinstance(t, (numba.types.Integer, numba.types.Float, numba.types.Boolean)):
            parts.append(str(t))
        else:
            raise ValueError(f"argument type {t!r} ({type(t).__name__}) cannot be written to the kernel manifest")
    return ", ".join(parts)


def decode(text: str) -> tuple:
    """The Numba types of one manifest argument list (the inverse of :func:`encode`).

    Examples
    --------
    >>> decode("float64[1,C,ro], int64")
    (Array(float64, 1, 'C', True, aligned=True), int64)
    """
    numba = _jit.numba_module()
    out = []
    for part in _split(text):
        m = _ARRAY.match(part)
        name = m.group(1) if m else part
        scalar = getattr(numba.types, name, None)
        if not isinstance(scalar, (numba.types.Integer, numba.types.Float, numba.types.Boolean)):
            raise ValueError(f"unknown type {name!r} in kernel manifest entry {text!r}")
        out.append(numba.types.Array(scalar, int(m.group(2)), m.group(3), readonly=bool(m.group(4)))
                   if m else scalar)
    return tuple(out)


def _split(text):
    """Arguments of a manifest line, splitting on the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "[") - (c == "]")
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def read_manifest(path=None) -> list[tuple[str, str, str]]:
    """``(module, kernel, arguments)`` of every manifest line, in file order.

    Raises ValueError naming the line when one is malformed.
    """
    path = MANIFEST if path is None else pathlib.Path(path)
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            raise ValueError(f"{path.name} line {number} is not 'module.kernel(arguments)': {line!r}")
        out.append(m.groups())
    return out


def _kernel(module, name):
    k = getattr(importlib.import_module(_PACKAGE + module), name, None)
    if not isinstance(k, _jit.Kernel):
        raise ValueError(f"kernel manifest names {module}.{name}, which is not a kernel of ldpnum/_kernels")
    return k


def compile_entries(entries) -> list[dict]:
    """Compile (or load from Numba's cache) the given manifest entries in this process.

    Returns one ``{"kernel", "arguments", "seconds", "loaded"}`` dict per entry; ``loaded`` is True when the
    code came from the on-disk cache rather than the compiler.
    """
    rows = []
    for module, name, arguments in entries:
        k = _kernel(module, name)
        d = k.dispatcher
        hits = sum(d.stats.cache_hits.values())
        t0 = time.perf_counter()
        d.compile(decode(arguments))
        rows.append({"kernel": f"{module}.{name}", "arguments": arguments, "seconds": time.perf_counter() - t0,
                     "loaded": sum(d.stats.cache_hits.values()) > hits})
    return rows


def compile_all(jobs: int | None = None, entries=None) -> list[dict]:
    """Compile every manifest signature into Numba's on-disk cache, in ``jobs`` worker processes.

    Parameters
    ----------
    jobs : int, optional
        Worker processes (default: the CPU count, at most the number of kernels). ``1`` compiles in
        this process.
    entries : list of (module, kernel, arguments), optional
        The entries to compile (default: the whole manifest).

    Returns
    -------
    list of dict
        :func:`compile_entries`'s rows, every entry once.

    Examples
    --------
    >>> rows = compile_all(jobs=1, entries=[("client_grr", "grr_kernel",
    ...     "int64[1,C,ro], int64, int64, int64, uint64[1,C], uint8[1,C]")])
    >>> rows[0]["kernel"]
    'client_grr.grr_kernel'
    """
    entries = read_manifest() if entries is None else list(entries)
    for module, name, arguments in entries:  # every line checked before any compilation
        _kernel(module, name)
        decode(arguments)
    groups: dict[tuple[str, str], list] = {}
    for e in entries:
        groups.setdefault(e[:2], []).append(e)
    jobs = min(os.cpu_count() or 1, len(groups)) if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if jobs == 1 or len(groups) <= 1:
        return compile_entries(entries)
    # Largest groups first, each to the worker with the fewest signatures so far.
    shares: list[list] = [[] for _ in range(min(jobs, len(groups)))]
    for g in sorted(groups.values(), key=len, reverse=True):
        min(shares, key=len).extend(g)
    ctx = multiprocessing.get_context("spawn")  # no forked Numba state; each worker imports ldpnum afresh
    with concurrent.futures.ProcessPoolExecutor(len(shares), mp_context=ctx) as pool:
        results = list(pool.map(compile_entries, shares))
    return [row for rows in results for row in rows]
