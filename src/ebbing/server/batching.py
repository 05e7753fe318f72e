"""The server's one embedder, shared by every tenant: concurrent requests' texts are embedded together.

A model call costs about the same for one text as for a few (the engine parallelises inside a call), so texts
asked for within a short window (`window`, 2 ms) by different requests go into one call, up to `max_batch`.
One worker thread makes every model call, so the model is never called from two threads at once.

A request also embeds its text *before* it takes its tenant's lock (`prepare`; `tenancy.Serialised` calls it
for add, search and context): the vector waits for the `embed` call the engine then makes under the lock, on
the same thread. So the lock is held for the store's work only, and while one request writes, the next ones'
texts are being embedded. A prepared vector is kept for its own thread and taken by its first use: no request
is ever answered faster because another one (another tenant's) embedded the same text.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ebbing.embed.base import Embedder


@dataclass
class _Ask:
    texts: list[str]
    query: bool
    asked: float = field(default_factory=time.perf_counter)
    done: threading.Event = field(default_factory=threading.Event)
    vectors: np.ndarray | None = None
    error: BaseException | None = None


class BatchingEmbedder:
    """`observe(texts, waited, took)` hears of each model call: how many texts went in, how long the oldest of
    them waited, how long the model took (metrics)."""

    def __init__(self, inner: Embedder, observe: Callable[[int, float, float], None] | None = None, *,
                 window: float = 0.002, max_batch: int = 32, cache: int = 4096) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self.observe = observe
        self.window, self.max_batch, self.cache_size = window, max_batch, cache
        self._queue: list[_Ask] = []
        self._ready = threading.Condition()
        self._cache: OrderedDict[tuple[int, bool, str], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._closed = False

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        found = self._take(texts, query)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, self._ask(missing, query), strict=True))
        return np.stack([found[t] for t in texts])

    def prepare(self, texts: Sequence[str], *, query: bool = False) -> None:
        """Embed `texts` now (outside any lock) and keep their vectors for the `embed` call that follows."""
        wanted = [t for t in dict.fromkeys(texts) if t]
        if not wanted:
            return
        vectors = self._ask(wanted, query)
        thread = threading.get_ident()
        with self._cache_lock:
            for text, vector in zip(wanted, vectors, strict=True):
                self._cache[(thread, query, text)] = vector
            while len(self._cache) > self.cache_size:  # prepared and never used (the request failed first)
                self._cache.popitem(last=False)

    def discard(self, texts: Sequence[str], query: bool = False) -> None:
        """Drop what this thread prepared for `texts` and did not use: the next request on this thread (maybe
        another tenant's) starts with nothing."""
        thread = threading.get_ident()
        with self._cache_lock:
            for text in texts:
                self._cache.pop((thread, query, text), None)

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        if self._worker is not None:
            self._worker.join(timeout=5)

    def _take(self, texts: Sequence[str], query: bool) -> dict[str, np.ndarray]:
        """The vectors this thread prepared for `texts`, taken out of the cache."""
        thread = threading.get_ident()
        with self._cache_lock:
            found = {}
            for text in texts:
                vector = self._cache.pop((thread, query, text), None)
                if vector is not None:
                    found[text] = vector
            return found

    def _ask(self, texts: list[str], query: bool) -> np.ndarray:
        ask = _Ask(texts, query)
        with self._ready:
            if self._closed:
                raise RuntimeError("the embedder is closed")
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="ebbing-embed", daemon=True)
                self._worker.start()
            self._queue.append(ask)
            self._ready.notify()
        ask.done.wait()
        if ask.error is not None:
            raise ask.error
        assert ask.vectors is not None
        return ask.vectors

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if self._closed and not self._queue:
                    return
            time.sleep(self.window)  # let the texts of requests arriving together join this call
            with self._ready:
                batch, size = [], 0
                while self._queue and size < self.max_batch:
                    batch.append(self._queue.pop(0))
                    size += len(batch[-1].texts)
            for query in (False, True):
                self._run([a for a in batch if a.query is query], query)

    def _run(self, asks: list[_Ask], query: bool) -> None:
        if not asks:
            return
        texts = [t for a in asks for t in a.texts]
        started = time.perf_counter()
        try:
            vectors = self.inner.embed(texts, query=query)
        except BaseException as exc:  # every waiting request learns of the failure, none hangs
            for a in asks:
                a.error = exc
                a.done.set()
            return
        if self.observe is not None:
            self.observe(len(texts), started - min(a.asked for a in asks), time.perf_counter() - started)
        at = 0
        for a in asks:
            a.vectors = vectors[at: at + len(a.texts)]
            at += len(a.texts)
            a.done.set()
