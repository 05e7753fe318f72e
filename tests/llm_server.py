"""A small, real OpenAI-compatible chat server on loopback, for tests of LLM clients.

`serve(handler)` runs `POST /v1/chat/completions` in a thread. The handler turns the request body into the
answer's text (the default echoes the messages as JSON, so a round trip can be checked); returning a dict
sends that dict as the whole response body instead, for malformed-answer tests. Every request is recorded,
`fail_next` makes the next requests fail with a status, and a configured `api_key` is checked like OpenAI does.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[dict[str, Any]], "str | dict[str, Any]"]


def echo(body: dict[str, Any]) -> str:
    """The answer is a JSON object of the system and the last user message, and the model asked for."""
    messages = body.get("messages", [])
    system = next((m["content"] for m in messages if m.get("role") == "system"), None)
    user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), None)
    return json.dumps({"model": body.get("model"), "system": system, "user": user}, ensure_ascii=False)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any]


@dataclass
class ServerHandle:
    url: str  # ends in /v1, as clients take it
    requests: list[Received] = field(default_factory=list)
    _failures: list[tuple[int, float | None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, n: int, status: int, retry_after: float | None = None) -> None:
        """The next `n` requests get `status` (with a `Retry-After` header if given) before anything else."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * n)

    def _record(self, received: Received) -> tuple[int, float | None] | None:
        with self._lock:
            self.requests.append(received)
            return self._failures.pop(0) if self._failures else None


@contextmanager
def serve(handler: Handler = echo, *, api_key: str | None = None) -> Iterator[ServerHandle]:
    handle: ServerHandle

    class Chat(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as httpx clients reuse connections

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            failure = handle._record(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if self.path != "/v1/chat/completions":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            if failure is not None:
                status, wait = failure
                headers = {"Retry-After": f"{wait:g}"} if wait is not None else {}
                return self._send(status, {"error": {"message": f"injected failure {status}"}}, headers)
            if api_key is not None and self.headers.get("Authorization") != f"Bearer {api_key}":
                # Echo the key the way careless servers do, so clients must scrub it from their errors.
                given = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                return self._send(401, {"error": {"message": f"Incorrect API key provided: {given}",
                                                  "type": "invalid_request_error", "code": "invalid_api_key"}})
            try:
                answer = handler(body)
            except Exception as exc:
                return self._send(500, {"error": {"message": f"handler failed: {exc!r}"}})
            if isinstance(answer, dict):
                return self._send(200, answer)
            self._send(200, {
                "id": f"chatcmpl-test-{len(handle.requests)}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            })

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing to tell it

        def log_message(self, format: str, *args: Any) -> None:  # silence the per-request log
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Chat)
    server.daemon_threads = True  # a handler still sleeping for a timeout test must not hold up shutdown
    handle = ServerHandle(f"http://127.0.0.1:{server.server_address[1]}/v1")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield handle
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
