"""Per-key limits: the size of a request body (413) and a token-bucket rate (429).

Each key has its own bucket of `burst` requests that refills at `rate` per second; a key's own row in the
key store may override the server's defaults. The body limit is enforced before the app parses anything:
the middleware keeps at most `max_body` bytes, whatever Content-Length claims.

Before a 413 goes out, the rest of the body is read and thrown away (up to `DRAIN` bytes in all). A client
that sends its whole body before reading the answer (Python's urllib, most simple clients) would otherwise
see the connection reset under its upload, as the server closes a socket with unread bytes in it, and never
read the 413. A body larger than `DRAIN` is not worth the wait: the server answers and closes at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ebbing.server.errors import error_response


@dataclass(frozen=True)
class Limits:
    """Server-wide defaults for every key (a key may carry its own)."""

    rate: float = 50.0  # requests per second, sustained
    burst: int = 100  # requests at once after a quiet spell
    max_body: int = 1_000_000  # bytes of request body


class RateLimiter:
    """One token bucket per key id. `clock` is injectable so tests need not sleep."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key id -> (tokens, when last filled)
        self._lock = threading.Lock()

    def take(self, key_id: str, rate: float, burst: int) -> float:
        """Take one token; returns 0 if allowed, else the seconds until a token is available."""
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(key_id, (float(burst), now))
            tokens = min(float(burst), tokens + (now - last) * rate)
            if tokens >= 1.0:
                self._buckets[key_id] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key_id] = (tokens, now)
            return (1.0 - tokens) / rate


DRAIN = 16 * 1024 * 1024  # bytes of an oversize body read (and dropped) so that the client can read the 413


class BodyLimit:
    """ASGI middleware: refuses a body larger than `limit_for(headers)` bytes with 413, before any parsing."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[dict[str, str]], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        limit = self.limit_for(headers)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            if int(declared) <= DRAIN and not await _drain(receive, 0):
                return
            await self._refuse(scope, receive, send, limit)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                if message.get("more_body", False) and not await _drain(receive, size):
                    return
                await self._refuse(scope, receive, send, limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        response = error_response(413, "too_large", f"request body is larger than this key's limit of {limit} bytes",
                                  "body", {"Connection": "close"})
        await response(scope, receive, send)


async def _drain(receive: Receive, size: int) -> bool:
    """Read the rest of a request body into nothing, `size` bytes of it already read, up to `DRAIN` bytes in all.
    False if the client went away meanwhile (there is nobody left to answer)."""
    while size <= DRAIN:
        message = await receive()
        if message["type"] == "http.disconnect":
            return False
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            return True
    return True  # too much to wait for: answer now, and the connection closes under the rest


def bearer(headers: dict[str, Any]) -> str | None:
    """The key in `Authorization: Bearer <key>`, if any."""
    value = str(headers.get("authorization", ""))
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
