"""Webhooks: the change feed (`Memory.events`) pushed to a receiver, signed, retried, at least once.

Every `every` seconds (`ebbing serve` and `ebbing worker`, when `EBBING_WEBHOOK_URL` is set), each tenant's
events after the position the receiver last acknowledged are POSTed in order, a page at a time:

    POST <url>
    Content-Type: application/json
    X-Ebbing-Delivery: <tenant>:<first seq>-<last seq>      the same for every retry of a page: dedupe on it
    X-Ebbing-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under EBBING_WEBHOOK_SECRET>
    {"tenant": "...", "events": [...], "next": <last seq>}

A 2xx answer moves the tenant's position past the page (kept in the keys file, so a restart resumes there);
anything else, or no answer, is retried with exponential backoff (0.5 s doubling, at most 30 s, `attempts`
tries) and then left for the next round, starting from the same page. A receiver therefore sees every event
at least once, in order, and may see a page twice (after a lost acknowledgement): the delivery id says so.
Events carry no text (see `Memory.events`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from ebbing.errors import EbbingError
from ebbing.memory import Memory
from ebbing.server.keys import KeyStore

log = logging.getLogger("ebbing.server.webhooks")
PAGE = 100


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The `v1` HMAC a receiver recomputes to check a delivery came from this server and was not altered."""
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def verify(secret: str, header: str, body: bytes, *, now: float | None = None, tolerance: float = 300.0) -> bool:
    """A receiver's check of `X-Ebbing-Signature` (also what the tests use): right HMAC, recent timestamp."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    fresh = abs((time.time() if now is None else now) - timestamp) <= tolerance
    return fresh and hmac.compare_digest(parts.get("v1", ""), signature(secret, timestamp, body))


@dataclass
class Webhook:
    url: str
    secret: str
    attempts: int = 5  # tries per page in one round
    timeout: float = 10.0


class Deliverer:
    def __init__(self, hook: Webhook, keys: KeyStore, *, client: httpx.Client | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.hook, self.keys, self.sleep = hook, keys, sleep
        self.client = client or httpx.Client(timeout=hook.timeout)

    def close(self) -> None:
        self.client.close()

    def round(self, memories: dict[str, Memory]) -> dict[str, int]:
        """Push every tenant's new events; returns how many each receiver acknowledged in this round."""
        sent = {}
        for tenant, memory in sorted(memories.items()):
            try:
                sent[tenant] = self._tenant(tenant, memory)
            except EbbingError as exc:  # a store that fails now is tried again next round
                log.error("webhook: reading the feed of tenant %s failed: %s", tenant, exc)
        return sent

    def _tenant(self, tenant: str, memory: Memory) -> int:
        done = 0
        position = self.keys.delivered(tenant, self.hook.url)
        while True:
            page = memory.events(position, PAGE)
            if not page["events"]:
                return done
            if not self._post(tenant, page):
                return done  # this page again next round: nothing after it goes before it
            position = page["next"]
            self.keys.set_delivered(tenant, self.hook.url, position)
            done += len(page["events"])

    def _post(self, tenant: str, page: dict[str, object]) -> bool:
        events = page["events"]
        assert isinstance(events, list)
        body = json.dumps({"tenant": tenant, "events": events, "next": page["next"]}, ensure_ascii=False,
                          separators=(",", ":")).encode()
        delivery = f"{tenant}:{events[0]['seq']}-{events[-1]['seq']}"
        wait = 0.5
        for attempt in range(1, self.hook.attempts + 1):
            stamp = int(time.time())
            try:
                answer = self.client.post(self.hook.url, content=body, headers={
                    "Content-Type": "application/json", "X-Ebbing-Delivery": delivery,
                    "X-Ebbing-Signature": f"t={stamp},v1={signature(self.hook.secret, stamp, body)}"})
                if 200 <= answer.status_code < 300:
                    return True
                problem = f"HTTP {answer.status_code}"
            except httpx.HTTPError as exc:
                problem = type(exc).__name__
            log.warning("webhook delivery %s, try %d of %d: %s", delivery, attempt, self.hook.attempts, problem)
            if attempt < self.hook.attempts:
                self.sleep(wait)
                wait = min(wait * 2, 30.0)
        return False
