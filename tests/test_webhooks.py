"""Webhooks (issue 19, item 3): the change feed pushed to a real HTTP receiver, HMAC-signed, retried with
backoff, at least once and in order; and `ebbing serve` pushing to it on its own."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.server.keys import KeyStore, keys_path
from ebbing.server.webhooks import Deliverer, Webhook, verify

from .conftest import T0

SECRET = "a-receiver-secret-of-some-length"


class Receiver:
    """An HTTP receiver that answers 500 to the first `failures` deliveries and records every one it got."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.got: list[tuple[dict[str, str], bytes, int]] = []  # headers, body, the status it answered
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = 500 if receiver.failures > 0 else 204
                receiver.failures -= 1
                receiver.got.append(({k.lower(): v for k, v in self.headers.items()}, body, status))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/hook"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def accepted(self) -> list[dict[str, Any]]:
        """The events of the deliveries it acknowledged, in the order they came."""
        return [e for _, body, status in self.got if status == 204 for e in json.loads(body)["events"]]

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver(failures=2)
    yield made
    made.close()


def test_signed_in_order_retried_and_resumed(tmp_path: Path, receiver: Receiver) -> None:
    db = tmp_path / "mem.db"
    keys = KeyStore(keys_path(db))
    waits: list[float] = []
    with Memory(db, embedder=HashEmbedder(), archive=tmp_path / "a") as mem:
        first = [mem.add(f"fact number {n} is {n * 7}", user_id="u", at=T0.timestamp() + n).records[0].id
                 for n in range(150)]  # two pages
        mem.forget(first[0], at=T0.timestamp() + 200)
        deliverer = Deliverer(Webhook(receiver.url, SECRET), keys, sleep=waits.append)
        assert deliverer.round({"default": mem}) == {"default": 151}
        assert waits == [0.5, 1.0]  # two failures, backing off, then through
        statuses = [status for _, _, status in receiver.got]
        assert statuses == [500, 500, 204, 204]
        deliveries = [headers["x-ebbing-delivery"] for headers, _, _ in receiver.got]
        assert deliveries[0] == deliveries[1] == deliveries[2]  # a retry is the same delivery: dedupe on it
        for headers, body, _ in receiver.got:
            assert verify(SECRET, headers["x-ebbing-signature"], body)
            assert not verify("another secret entirely", headers["x-ebbing-signature"], body)
            assert not verify(SECRET, headers["x-ebbing-signature"], body.replace(b"add", b"odd"))
        events = receiver.accepted()
        assert [e["memory_id"] for e in events if e["type"] == "add"] == first
        assert events[-1]["type"] == "tier" and events[-1]["cause"] == "manual"
        assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
        assert "fact number" not in b"".join(body for _, body, _ in receiver.got).decode()  # no text leaves

        assert deliverer.round({"default": mem}) == {"default": 0}  # nothing new, nothing sent
        assert len(receiver.got) == 4
        mem.pin(first[1], at=T0.timestamp() + 300)
        again = Deliverer(Webhook(receiver.url, SECRET), keys, sleep=waits.append)  # a restart resumes
        assert again.round({"default": mem}) == {"default": 1}
        assert [e["type"] for e in receiver.accepted()[-1:]] == ["pin"]
        deliverer.close()
        again.close()
    keys.close()


def test_a_receiver_that_is_down_gets_everything_later(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    keys = KeyStore(keys_path(db))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with Memory(db, embedder=HashEmbedder(), archive=tmp_path / "a") as mem:
        added = mem.add("the office moved to the fourth floor", user_id="u", at=T0).records[0]
        down = Deliverer(Webhook(f"http://127.0.0.1:{port}/hook", SECRET, attempts=3), keys, sleep=lambda s: None)
        assert down.round({"default": mem}) == {"default": 0}
        assert keys.delivered("default", f"http://127.0.0.1:{port}/hook") == 0  # nothing acknowledged
        down.close()
        receiver = Receiver()
        try:
            up = Deliverer(Webhook(receiver.url, SECRET), keys, sleep=lambda s: None)
            assert up.round({"default": mem}) == {"default": 1}
            assert [e["memory_id"] for e in receiver.accepted()] == [added.id]
            up.close()
        finally:
            receiver.close()
    keys.close()


def test_serve_pushes_the_feed_on_its_own(tmp_path: Path) -> None:
    receiver = Receiver(failures=1)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "EBBING_EMBEDDER": "hash", "EBBING_HOME": str(tmp_path / "home"),
           "EBBING_WEBHOOK_URL": receiver.url, "EBBING_WEBHOOK_SECRET": SECRET}
    command = [sys.executable, "-m", "ebbing", "--db", str(tmp_path / "served.db"), "serve", "--port", str(port),
               "--sweep-every", "0", "--webhook-every", "0.2"]
    short = subprocess.run(command, env={**env, "EBBING_WEBHOOK_SECRET": "short"}, capture_output=True, text=True,
                           timeout=60)
    assert short.returncode == 2 and "EBBING_WEBHOOK_SECRET" in short.stderr  # refused before serving
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                request = urllib.request.Request(f"{base}/v1/memories", method="POST", data=json.dumps(
                    {"text": "I prefer the aisle seat", "user_id": "dana"}).encode(),
                    headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=5) as answer:
                    added = json.loads(answer.read())["records"][0]["id"]
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "ebbing serve did not start"
                time.sleep(0.1)
        while not receiver.accepted() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [e["memory_id"] for e in receiver.accepted()] == [added]
        assert [status for _, _, status in receiver.got][:2] == [500, 204]
    finally:
        server.terminate()
        server.wait(timeout=10)
        receiver.close()
