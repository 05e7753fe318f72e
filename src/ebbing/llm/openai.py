"""A chat client for any OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, vLLM, llama.cpp server)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from ebbing.errors import EbbingError, InvalidInput

MAX_RETRY_AFTER = 10.0  # seconds; a server asking for longer would stall a memory write, so we cap the wait
RETRYABLE = frozenset({408, 409, 429})  # plus every 5xx


class OpenAIChat:
    """Calls `POST {base_url}/chat/completions` with one system and one user message.

    Transport errors (timeouts included), 408, 409, 429 and 5xx are retried `retries` times with exponential
    backoff, waiting what a `Retry-After` header asks (at most 10 s) instead; other 4xx fail at once. The API
    key is sent as a bearer token and never appears in `repr` or errors.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        temperature: float = 0.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not model:
            raise InvalidInput("llm.model", "must name the chat model")
        if retries < 0 or not timeout > 0:
            raise InvalidInput("llm", "retries >= 0 and timeout > 0 are required")
        if not 0.0 <= temperature <= 2.0:
            raise InvalidInput("llm.temperature", "must be between 0 and 2")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.name = f"openai/{model}"
        self.retries = retries
        self.timeout = timeout
        self.temperature = temperature
        self._api_key = api_key or None  # kept only to scrub it from error bodies that echo it
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> OpenAIChat | None:
        """The client `EBBING_LLM_BASE_URL`, `EBBING_LLM_MODEL` and `EBBING_LLM_API_KEY` describe, else None.

        Both the model and the base URL are required, so an unset environment means "no LLM" rather than
        silently sending memories to a default cloud endpoint.
        """
        model = env.get("EBBING_LLM_MODEL", "").strip()
        base_url = env.get("EBBING_LLM_BASE_URL", "").strip()
        if not model or not base_url:
            return None
        return cls(model, base_url=base_url, api_key=env.get("EBBING_LLM_API_KEY", "").strip() or None)

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r}, base_url={self.base_url!r})"

    def complete(self, system: str, user: str, *, json_mode: bool = False, max_tokens: int = 512) -> str:
        if max_tokens < 1:
            raise InvalidInput("llm.max_tokens", "must be at least 1")
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": user})
        # `max_tokens` rather than `max_completion_tokens`: every compatible server reads it.
        body: dict[str, Any] = {
            "model": self.model, "messages": messages, "temperature": self.temperature, "max_tokens": max_tokens,
        }
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        return self._content(self._post(body))

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        delay = 0.5
        for attempt in range(self.retries + 1):
            wait: float | None = None
            try:
                response = self._client.post("/chat/completions", json=body)
            except httpx.TimeoutException:
                problem = f"the chat server did not answer within {self.timeout:g} s"
            except httpx.TransportError as exc:
                problem = f"cannot reach the chat server: {type(exc).__name__}"
            else:
                if response.status_code == 200:
                    return response
                problem = f"chat server answered {response.status_code}: {self._excerpt(response.text)}"
                if response.status_code not in RETRYABLE and response.status_code < 500:
                    raise EbbingError(problem)
                wait = retry_after(response.headers.get("retry-after"))
            if attempt < self.retries:
                time.sleep(delay if wait is None else wait)
                delay *= 2
        raise EbbingError(f"{problem} (after {self.retries + 1} attempts)")

    def _content(self, response: httpx.Response) -> str:
        try:
            choice = response.json()["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, LookupError, TypeError):
            raise EbbingError(
                f"chat server answered 200 without a chat completion: {self._excerpt(response.text)}"
            ) from None
        if not isinstance(content, str):  # refusals and tool calls come back with content null
            raise EbbingError(f"chat server returned no text (finish_reason={choice.get('finish_reason')!r})")
        return content

    def _excerpt(self, text: str) -> str:
        # Scrub before cutting, so a key that straddles the cut cannot leak either half.
        if self._api_key:
            text = text.replace(self._api_key, "<api key>")
        return " ".join(text.split())[:200]

    def close(self) -> None:
        self._client.close()


def retry_after(value: str | None) -> float | None:
    """Seconds a `Retry-After` header asks to wait (delta-seconds or HTTP date), capped at 10 s; None if unusable."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)
