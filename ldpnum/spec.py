"""The specification that ties reports and aggregates to the mechanism that produced them (design rule R3).

A :class:`Spec` names the mechanism, its ε, its output alphabet and its parameters; it travels with every
report column, Parquet file and serialized aggregate, and estimators refuse reports of another spec.
"""

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import check_scalar
from .exceptions import SpecMismatchError

__all__ = ["Spec", "SPEC_VERSION", "check_spec", "spec_difference"]

SPEC_VERSION = 1


@dataclass(frozen=True)
class Spec:
    """Everything needed to decode reports: mechanism name, ε, output alphabet size and parameters.

    Two specs are equal only if every field is equal, so estimators can refuse reports produced under
    other parameters. A spec round-trips through JSON (:meth:`to_json`, :meth:`from_json`), which is how it
    travels in a pandas column's attributes or a Parquet file's metadata.
    """

    mechanism: str
    epsilon: float
    n_cells: int
    params: tuple = field(default=())
    version: int = SPEC_VERSION

    def __post_init__(self):
        object.__setattr__(self, "params", tuple((str(k), _freeze(v)) for k, v in sorted(dict(self.params).items())))

    def get(self, key: str, default: Any = None) -> Any:
        """Value of a parameter."""
        return dict(self.params).get(key, default)

    def to_dict(self) -> dict[str, Any]:
        """The spec as a plain dict (JSON-compatible)."""
        return {"mechanism": self.mechanism, "epsilon": self.epsilon, "n_cells": self.n_cells,
                "params": {k: _thaw(v) for k, v in self.params}, "version": self.version}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Spec":
        """The spec read back from :meth:`to_dict`'s dict."""
        if not isinstance(d, dict) or not {"mechanism", "epsilon", "n_cells"} <= set(d):
            raise ValueError(f"not an ldpnum spec: {d!r}")
        version = d.get("version", SPEC_VERSION)
        if version != SPEC_VERSION:
            raise ValueError(f"spec of {d['mechanism']!r} has version {version!r}; this ldpnum reads spec version "
                             f"{SPEC_VERSION} only (the reports were produced by another release of ldpnum: "
                             "estimate them with that release)")
        mechanism, epsilon, n_cells, params = d["mechanism"], d["epsilon"], d["n_cells"], d.get("params", {})
        if not isinstance(mechanism, str) or not mechanism:
            raise TypeError(f"not an ldpnum spec: its mechanism must be a name; got {mechanism!r}")
        try:  # a spec is data (a file, a column's metadata): a field of the wrong kind is a bad value, ValueError
            epsilon = check_scalar(epsilon, f"spec of {mechanism!r}: epsilon", float, low=0,
                                   include_boundaries="neither")
            n_cells = check_scalar(n_cells, f"spec of {mechanism!r}: n_cells", int, low=1)
        except TypeError as exc:
            raise ValueError(str(exc)) from None
        if not isinstance(params, dict):
            raise TypeError(f"spec of {mechanism!r}: params must be a mapping of names to values; got "
                            f"{type(params).__name__}")
        return cls(mechanism=mechanism, epsilon=epsilon, n_cells=n_cells, params=tuple(params.items()),
                   version=int(version))

    def to_json(self) -> str:
        """The spec as a JSON string."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> "Spec":
        """The spec read back from :meth:`to_json`'s text."""
        return cls.from_dict(json.loads(text))

    def __str__(self) -> str:
        params = ", ".join(f"{k}={_thaw(v)!r}" for k, v in self.params)
        return f"{self.mechanism}(epsilon={self.epsilon!r}{', ' if params else ''}{params})"

    def __repr__(self) -> str:
        # Short: floats to 6 significant digits, long sequences elided (``str`` and ``to_json`` are exact).
        params = "".join(f", {k}={_short(v)}" for k, v in self.params
                         if not (k == "n_cells" and v == self.n_cells))
        version = "" if self.version == SPEC_VERSION else f", version={self.version}"
        return f"Spec({self.mechanism!r}, epsilon={self.epsilon:g}, n_cells={self.n_cells}{params}{version})"


#: A spec's repr shows at most this many items of a sequence parameter.
_SHORT_ITEMS = 6


def _short(v):
    """A parameter value for a repr: floats to 6 significant digits, long tuples elided."""
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, tuple):
        items = [_short(x) for x in v[:_SHORT_ITEMS]]
        if len(v) > _SHORT_ITEMS:
            items.append(f"... ({len(v)} items)")
        return "(" + ", ".join(items) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


def _freeze(v):
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def _thaw(v):
    return [_thaw(x) for x in v] if isinstance(v, tuple) else v


def spec_difference(expected: Spec, got: Spec) -> str:
    """The fields in which two specs differ, as text (``""`` when they are equal)."""
    if got == expected:
        return ""
    diffs = []
    for name in ("mechanism", "epsilon", "n_cells", "version"):
        a, b = getattr(expected, name), getattr(got, name)
        if a != b or type(a) is not type(b):
            diffs.append(f"{name} {b!r} instead of {a!r}")
    pa, pb = dict(expected.params), dict(got.params)
    for key in sorted(set(pa) | set(pb)):
        if key not in pb:
            diffs.append(f"parameter {key!r} missing (expected {_thaw(pa[key])!r})")
        elif key not in pa:
            diffs.append(f"unexpected parameter {key}={_thaw(pb[key])!r}")
        elif pa[key] != pb[key] or type(pa[key]) is not type(pb[key]):
            diffs.append(f"parameter {key}={_thaw(pb[key])!r} ({type(pb[key]).__name__}) instead of "
                         f"{_thaw(pa[key])!r} ({type(pa[key]).__name__})")
    return "; ".join(diffs)


def check_spec(expected: "Spec", got: "Spec", what: str) -> None:
    """Raise :class:`SpecMismatchError` unless ``got == expected``; the message names what differs."""
    if got != expected:
        raise SpecMismatchError(f"{what} were produced by {got}, not by {expected} "
                                f"({spec_difference(expected, got)}); "
                                "estimate them with the mechanism that produced them")

