"""Exact cosine search over one scope's vectors, held in memory as one float32 matrix.

Measured on 2 cores: a matrix-vector product over 100k x 384 floats takes ~4 ms, which meets the
10 ms search target without an approximate index, and exact search filters by scope and metadata
for free (a boolean mask) where a graph index would need over-fetching. The matrix is a cache of the
`vectors` table, loaded per scope on first use and appended to as records arrive.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class ScopeVectors:
    def __init__(self, keys: np.ndarray, matrix: np.ndarray) -> None:
        self._keys = keys.astype(np.int64)
        self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self._size = len(keys)

    @property
    def size(self) -> int:
        return self._size

    def append(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        needed = self._size + len(keys)
        if needed > len(self._keys):  # grow geometrically so a stream of adds stays O(1) amortised
            capacity = max(needed, 2 * len(self._keys), 64)
            keys_grown = np.empty(capacity, dtype=np.int64)
            keys_grown[: self._size] = self._keys[: self._size]
            matrix_grown = np.empty((capacity, vectors.shape[1]), dtype=np.float32)
            matrix_grown[: self._size] = self._matrix[: self._size]
            self._keys, self._matrix = keys_grown, matrix_grown
        self._keys[self._size : needed] = keys
        self._matrix[self._size : needed] = vectors
        self._size = needed

    def nearest(self, vector: np.ndarray, limit: int, allowed: np.ndarray | None = None) -> list[int]:
        """Keys of the `limit` nearest vectors, nearest first; `allowed` restricts to those keys."""
        if self._size == 0:
            return []
        keys = self._keys[: self._size]
        scores = self._matrix[: self._size] @ vector.astype(np.float32)
        if allowed is not None:
            scores = np.where(np.isin(keys, allowed), scores, -np.inf)
        limit = min(limit, self._size)
        top = np.argpartition(-scores, limit - 1)[:limit]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [int(keys[i]) for i in top if np.isfinite(scores[i])]
