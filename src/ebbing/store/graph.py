"""An approximate nearest-neighbour graph over one big scope's vectors (usearch HNSW, int8), kept beside the store.

A brute-force scan reads every vector of the scope: ~4 ms at 100k records here, ~40 ms at a million. Above a
size the SQLite store measures (`GRAPH_FROM`), a scope's vectors go into an HNSW graph instead, whose search
visits a few thousand of them whatever the size. The graph only nominates candidates: callers re-score them with
the float32 vectors from the store, so its int8 codes and its approximation never decide the final order, only
(rarely) which records get scored.

The graph is saved to a file of its own and loaded, not rebuilt, when the store is opened again; the store
journals every vector change of a scope that has a graph (`vector_journal`, written by triggers), so a graph
loaded from an older file, or held by another process, catches up by replaying the journal. usearch keeps a
removed vector's bytes in its file, so a graph that held a purged record is rebuilt, never just saved.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

import numkong
import numpy as np
from usearch.index import Index

from ebbing.store import files

CONNECTIVITY = 16  # edges per node, usearch's default: 24 or 32 gain little recall and double the build
EXPANSION_ADD = 64  # candidates weighed when a vector is linked in: half usearch's 128, so adds and builds cost less
# Candidates a search keeps. Recall@10 on `ebbing bench graph`'s turn embeddings: 0.99 at 100k with 256 (128:
# 0.95); at 1M, where each turn has ten times the near-duplicates, 256 finds 0.84, 512 0.92 and 1024 0.97. So it
# grows with the scope, capped where a search would cost more than ~10 ms on 2 cores.
EXPANSION_SEARCH = 256
EXPANSION_MAX = 1024
EXACT_BELOW = 20_000  # a filter that leaves fewer keys than this is answered by scanning just those keys


class ScopeGraph:
    """One scope's vectors in an HNSW graph, keyed by the store's `seq`."""

    def __init__(self, dimensions: int, index: Index | None = None, *, scope: str = "", file: str = "") -> None:
        self.dimensions = dimensions
        self.scope, self.file = scope, file  # the store's name for the scope, and the graph file it was read from
        self._index = index if index is not None else Index(
            ndim=dimensions, metric="cos", dtype="i8", connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH)
        # A restored index comes back with usearch's default (64), not what it was saved with: always set it.
        self._index.expansion_search = self._expansion = EXPANSION_SEARCH  # type: ignore[misc]
        self.applied = 0  # the last `vector_journal` id this graph holds the effect of
        self.unsaved = 0  # changes since the file was written

    @property
    def size(self) -> int:
        return len(self._index)

    def upsert(self, keys: Sequence[int] | np.ndarray, vectors: np.ndarray, threads: int = 1) -> None:
        """Add vectors, replacing any this graph already holds under the same keys."""
        keys = np.asarray(keys, dtype=np.uint64)
        if len(keys) == 0:
            return
        self._drop(keys)
        self._index.add(keys, np.ascontiguousarray(vectors, dtype=np.float32), threads=threads)
        self.unsaved += len(keys)

    def remove(self, keys: Sequence[int] | np.ndarray) -> None:
        self.unsaved += self._drop(np.asarray(keys, dtype=np.uint64))

    def _drop(self, keys: np.ndarray) -> int:
        """Take out those of `keys` the graph holds; how many that was."""
        if len(keys) == 0:
            return 0
        held = np.asarray(self._index.contains(keys), dtype=bool).reshape(-1)
        if held.any():
            self._index.remove(keys[held])
        return int(held.sum())

    @property
    def expansion(self) -> int:
        """How many candidates a search keeps at this size: 256 up to 100k vectors, then growing as size^0.6."""
        grown: int = round(EXPANSION_SEARCH * (self.size / 100_000) ** 0.6)
        return min(EXPANSION_MAX, max(EXPANSION_SEARCH, grown))

    def nearest(self, vector: np.ndarray, limit: int, allowed: np.ndarray | None = None,
                pool: object | None = None) -> list[int]:
        """Keys of about the `limit` nearest vectors by cosine, nearest first. With `allowed`, only those keys:
        a small set is scanned exactly, a large one filters an enlarged graph search. (`pool` is the scan's
        signature; a graph search needs no second thread.)"""
        size = self.size
        if size == 0 or limit < 1:
            return []
        if self._expansion != (width := self.expansion):
            self._index.expansion_search = self._expansion = width  # type: ignore[misc]  # settable at run time
        query = np.ascontiguousarray(vector, dtype=np.float32)
        if allowed is not None:
            allowed = np.asarray(allowed, dtype=np.uint64)
            if len(allowed) == 0:
                return []
            if len(allowed) < EXACT_BELOW:
                return self._scan(query, allowed, limit)
            wanted = min(size, limit * max(1, -(-size // len(allowed))))  # as many as the filter is expected to drop
            matches = self._index.search(query, max(wanted, limit), threads=1)
            keep = np.isin(matches.keys, allowed)
            return [int(k) for k in matches.keys[keep][:limit]]
        matches = self._index.search(query, min(limit, size), threads=1)
        return [int(k) for k in matches.keys]

    def _scan(self, query: np.ndarray, keys: np.ndarray, limit: int) -> list[int]:
        keys = keys[np.asarray(self._index.contains(keys), dtype=bool).reshape(-1)]
        if len(keys) == 0:
            return []
        codes = np.asarray(self._index.get(keys, dtype="i8")).reshape(len(keys), -1)
        probe = np.clip(np.rint(query / max(float(np.abs(query).max()), 1e-12) * 127), -127, 127).astype(np.int8)
        scores = np.asarray(numkong.cdist(codes, probe[None, :], metric="dot", out_dtype="float32"))[:, 0]
        # Each stored code is scaled on its own, so divide by its length to compare cosines.
        scores = scores / np.maximum(np.linalg.norm(codes.astype(np.float32), axis=1), 1e-12)
        top = np.argsort(-scores, kind="stable")[:limit]
        return [int(keys[i]) for i in top]

    def save(self, path: Path) -> None:
        """Write the graph to `path` atomically (a new file, then a rename), private to its owner."""
        files.private_folder(path.parent)
        partial = path.with_name(path.name + ".partial")
        try:
            self._index.save(str(partial))
            files.make_private(partial)
            os.replace(partial, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
        self.unsaved = 0

    @classmethod
    def load(cls, path: Path) -> ScopeGraph | None:
        """The graph saved at `path`, or None when there is no such file or it is unreadable (the caller
        rebuilds it from the store)."""
        if not path.exists():
            return None
        try:
            index = Index.restore(str(path))
        except (RuntimeError, ValueError, OSError):
            return None
        if index is None:
            return None
        return cls(int(index.ndim), index)
