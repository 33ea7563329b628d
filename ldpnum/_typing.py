"""Type aliases of the public API (the package ships ``py.typed``; ``mypy ldpnum`` runs in ``make test``)."""

from typing import Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "NDArray", "FloatArray", "Bounds", "SeedLike"]

#: A float64 array returned by estimators and queries.
FloatArray = NDArray[np.float64]

#: Public ``(low, high)`` bounds of the values.
Bounds = tuple[float, float]

#: What ``rng=`` accepts (SPEC 7): None (secure randomness), an int seed, a SeedSequence or a Generator.
SeedLike = Union[None, int, np.random.SeedSequence, np.random.Generator]
