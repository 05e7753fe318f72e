"""A tiny deterministic embedder for tests: feature-hashed keyword terms, no model at all.

Texts that share terms point the same way; nothing else is captured. Tests that care about meaning
use the default embedder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ebbing.embed.base import normalise
from ebbing.text.terms import terms


class HashEmbedder:
    def __init__(self, dimensions: int = 64) -> None:
        self.dimensions = dimensions
        self.name = f"hash-{dimensions}"

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in terms(text) or [text]:
                digest = hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self.dimensions
                out[row, slot] += 1.0 if digest[4] & 1 else -1.0
            out[row, row % self.dimensions] += 1e-3  # never the zero vector
        return normalise(out)
