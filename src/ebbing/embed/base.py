"""The embedder extension point."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of `dimensions` numbers.

    `name` identifies the vector space: a store remembers the name it was built with and refuses another,
    since vectors of two models cannot be compared. `query=True` embeds search queries, `query=False`
    stored passages; models without that distinction ignore it.
    """

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray: ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray = vectors / norms
    return out
