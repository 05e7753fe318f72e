"""The server's shared embedder (issue 18, item 1): concurrent requests' texts go into one model call, a request
embeds its text before it takes its tenant's lock, a prepared vector serves only its own thread, and a failing
model call fails every request in it without hanging any."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from ebbing.embed.hashing import HashEmbedder
from ebbing.server.app import create_app
from ebbing.server.batching import BatchingEmbedder

from .conftest import T0


class Counting(HashEmbedder):
    """The hash embedder, counting its calls; `during(texts)` runs inside each call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[int, bool]] = []
        self.during = lambda texts: None

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        self.calls.append((len(texts), query))
        self.during(texts)
        return super().embed(texts, query=query)


def test_concurrent_texts_share_a_model_call_and_get_their_own_vectors() -> None:
    inner = Counting()
    shared = BatchingEmbedder(inner, window=0.05)
    texts = ["amber basil cedar", "delta ember fjord", "garnet harbor indigo", "juniper kestrel lantern",
             "meadow nectar orchid", "pepper quartz raven", "saffron tundra umber", "violet willow yarrow"]
    got: dict[int, np.ndarray] = {}
    start = threading.Barrier(8)

    def ask(i: int) -> None:
        start.wait()
        got[i] = shared.embed([texts[i]], query=i % 2 == 1)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shared.close()
    assert sum(n for n, _ in inner.calls) == 8 and len(inner.calls) < 8  # batched: fewer calls than texts
    alone = HashEmbedder().embed(texts)  # each its own vector (this embedder shifts a hair with the batch)
    for i in range(8):
        assert int(np.argmax(alone @ got[i][0])) == i
        np.testing.assert_allclose(got[i][0], alone[i], atol=2e-3)


def test_a_prepared_vector_serves_its_own_thread_once() -> None:
    inner = Counting()
    shared = BatchingEmbedder(inner, window=0.0)
    shared.prepare(["where is the harbor"], query=True)
    assert len(inner.calls) == 1
    shared.embed(["where is the harbor"], query=True)
    assert len(inner.calls) == 1  # taken from what this thread prepared
    shared.embed(["where is the harbor"], query=True)
    assert len(inner.calls) == 2  # taken once: the next ask embeds again
    shared.prepare(["a text prepared here"])
    other = threading.Thread(target=lambda: shared.embed(["a text prepared here"]))
    other.start()
    other.join()
    assert len(inner.calls) == 4  # another thread (another request, maybe another tenant's) does not get it
    shared.close()


def test_a_failing_model_call_fails_each_request_in_it() -> None:
    inner = Counting()

    def fail(texts: Sequence[str]) -> None:
        raise RuntimeError("the model broke")

    inner.during = fail
    shared = BatchingEmbedder(inner, window=0.02)
    errors: list[str] = []

    def ask(i: int) -> None:
        try:
            shared.embed([f"text {i}"])
        except RuntimeError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert errors == ["the model broke"] * 4
    inner.during = lambda texts: None
    assert shared.embed(["it recovers"]).shape == (1, inner.dimensions)
    shared.close()
    with pytest.raises(RuntimeError, match="closed"):
        shared.embed(["after close"])


def test_the_server_embeds_outside_the_tenant_lock(tmp_path: Path) -> None:
    inner = Counting()
    app = create_app(tmp_path / "m.db", embedder=inner, keys=tmp_path / "keys.db")
    held: list[bool] = []
    with TestClient(app) as client:
        server = app.state.ebbing
        t = T0.timestamp()
        client.post("/v1/memories", json={"text": "warm up the store", "user_id": "u", "at": t})
        client.post("/v1/search", json={"query": "warm", "user_id": "u", "at": t})  # the background, embedded once
        lock = server.tenants._locks["default"]

        def probe(texts: Sequence[str]) -> None:
            if any("harbor" in text for text in texts):  # the model runs: is the tenant's lock free?
                free = lock.acquire(blocking=False)
                held.append(not free)
                if free:
                    lock.release()

        inner.during = probe
        inner.calls.clear()
        added = client.post("/v1/memories", json={"text": "The harbor office opens at 7", "user_id": "u", "at": t})
        assert added.status_code == 201
        found = client.post("/v1/search", json={"query": "when does the harbor office open", "user_id": "u",
                                                "at": t + 60})
        assert found.json()["hits"][0]["record"]["text"] == "The harbor office opens at 7"
        context = client.post("/v1/context", json={"query": "harbor hours", "user_id": "u", "at": t + 60})
        assert context.status_code == 200 and "harbor office" in context.json()["text"]
        inner.during = lambda texts: None
        calls = [n for n, _ in inner.calls]
        refused = client.post("/v1/memories", json={"text": "The harbor office opens at 9", "user_id": "u",
                                                    "kind": "nonsense", "at": t})
        assert refused.status_code in (400, 422)
        assert not server.tenants._embedder._cache  # what a failed request prepared does not outlive it
    assert held and not any(held)  # each text was embedded while no request held the lock
    # and each request's text was embedded once: prepared outside the lock, taken under it
    assert calls == [1, 1, 1]
