"""`Client`: the REST server (`ebbing serve`) from Python, with the methods and values of `Memory`.

    from ebbing.client import Client

    with Client("http://127.0.0.1:8420", key="ebk_...") as mem:
        mem.add("I prefer dark mode", user_id="alice")
        for hit in mem.search("theme", user_id="alice"):
            print(hit.score, hit.record.text)

Records come back as `MemoryRecord`, hits as `Hit`, contexts as `Context`, events as `Event`, reviews as
`Review`, as from `Memory`. Errors are the library's: `InvalidInput` (400/422, naming the field), `NotFound`
(404), `Conflict` (409); the rest (401, 403, 413, 429, 5xx) raise `ApiError` with the status and the server's
error type.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from types import TracebackType
from typing import Any

import httpx

from ebbing.clock import Instant
from ebbing.errors import Conflict, EbbingError, InvalidInput, NotFound
from ebbing.model import AddResult, Event, Hit, Kind, MemoryRecord, Priority, Review, Tier
from ebbing.recall.context import Context, ContextLine, Section


class ApiError(EbbingError):
    """The server refused for a reason the library has no class for (auth, limits, server failure)."""

    def __init__(self, status: int, type_: str, message: str, field: str | None = None) -> None:
        self.status = status
        self.type = type_
        self.field = field
        super().__init__(f"{status} {type_}: {message}")


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def record_from(data: dict[str, Any]) -> MemoryRecord:
    created = _time(data["created_at"])
    updated = _time(data["updated_at"])
    assert created is not None and updated is not None
    return MemoryRecord(
        id=data["id"], text=data["text"], kind=Kind(data["kind"]), importance=data["importance"],
        priority=Priority(data["priority"]), created_at=created, updated_at=updated, tenant=data["tenant"],
        user_id=data["user_id"], agent_id=data["agent_id"], session_id=data["session_id"], pinned=data["pinned"],
        held=data["held"], security=data["security"], last_accessed_at=_time(data["last_accessed_at"]),
        access_count=data["access_count"], update_count=data["update_count"], tier=Tier(data["tier"]),
        metadata=data["metadata"], source_ids=data["source_ids"], content_hash=data["content_hash"],
        expires_at=_time(data.get("expires_at")), source=data.get("source", "user"))


def event_from(data: dict[str, Any]) -> Event:
    at = _time(data["at"])
    assert at is not None
    return Event(data["memory_id"], data["type"], at, data["actor"], data["reason"], data["data"], data["seq"])


def review_from(data: dict[str, Any]) -> Review:
    created = _time(data["created_at"])
    assert created is not None
    return Review(data["id"], data["memory_id"], data["incumbent"], data["user_id"], data["source"],
                  data["incumbent_source"], created, data["status"], data["proposed"], data["current"],
                  _time(data["decided_at"]), data["decided_by"], data["note"])


def context_from(data: dict[str, Any]) -> Context:
    sections = tuple(Section(s["name"], s["title"], tuple(ContextLine(**line) for line in s["lines"]), s["tokens"])
                     for s in data["sections"])
    return Context(data["text"], data["tokens"], data["budget"], sections,
                   tuple(record_from(r) for r in data["records"]))


def _at(at: Instant) -> str | float | None:
    return at.isoformat() if isinstance(at, datetime) else at


class Client:
    """A connection to `ebbing serve`. `key` is an API key (`ebbing keys create`); None for an open server.

    `transport` lets tests or embedders route requests elsewhere (any `httpx.BaseTransport`).
    """

    def __init__(self, url: str = "http://127.0.0.1:8420", key: str | None = None, *, timeout: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- plumbing ------------------------------------------------------------------------------------

    def _call(self, method: str, path: str, *, ident: str | None = None, json: dict[str, Any] | None = None,
              params: dict[str, Any] | None = None) -> Any:
        if params:
            params = {k: v for k, v in params.items() if v is not None}
        response = self._http.request(method, path, json=json, params=params)
        if response.status_code < 300:
            return response.json() if response.content else None
        try:
            error = response.json()["error"]
            type_, message, field = str(error["type"]), str(error["message"]), error.get("field")
        except (ValueError, KeyError, TypeError):
            type_, message, field = "http_error", response.text[:200], None
        status = response.status_code
        if status in (400, 422):
            rule = message.removeprefix(f"{field}: ") if field else message
            raise InvalidInput(field or "request", rule)
        if status == 404 and type_ == "not_found" and ident is not None:
            raise NotFound(field or "id", ident)
        if status == 409:
            raise Conflict(message)
        raise ApiError(status, type_, message, field)

    def _record(self, method: str, memory_id: str, action: str = "", json: dict[str, Any] | None = None,
                params: dict[str, Any] | None = None) -> MemoryRecord:
        path = f"/v1/memories/{_quote(memory_id)}" + (f"/{action}" if action else "")
        return record_from(self._call(method, path, ident=memory_id, json=json, params=params))

    # -- the Memory API ------------------------------------------------------------------------------

    def healthy(self) -> bool:
        return bool(self._call("GET", "/healthz").get("status") == "ok")

    def add(self, text: str, user_id: str | None = None, agent_id: str | None = None,
            session_id: str | None = None, kind: str | None = None, importance: float | None = None,
            pinned: bool = False, priority: str | None = None, metadata: dict[str, Any] | None = None,
            at: Instant = None, *, expires_at: Instant = None, source: str | None = None) -> AddResult:
        body = {"text": text, "user_id": user_id, "agent_id": agent_id, "session_id": session_id, "kind": kind,
                "importance": importance, "pinned": pinned, "priority": priority, "metadata": metadata,
                "at": _at(at), "expires_at": _at(expires_at), "source": source}
        data = self._call("POST", "/v1/memories", json=body)
        return AddResult([record_from(r) for r in data["records"]], [event_from(e) for e in data["events"]])

    def get(self, memory_id: str) -> MemoryRecord:
        return self._record("GET", memory_id)

    def reviews(self, user_id: str | None = None, status: str | None = "pending", limit: int = 100) -> list[Review]:
        """The review queue (`Memory.reviews`): `status` None lists every review, whatever its status."""
        params = {"user_id": user_id, "status": "any" if status is None else status, "limit": limit}
        return [review_from(r) for r in self._call("GET", "/v1/reviews", params=params)["reviews"]]

    def review(self, review_id: str) -> Review:
        return review_from(self._call("GET", f"/v1/reviews/{_quote(review_id)}", ident=review_id))

    def accept_review(self, review_id: str, note: str = "", at: Instant = None) -> Review:
        return self._decide(review_id, "accept", note, at)

    def reject_review(self, review_id: str, note: str = "", at: Instant = None) -> Review:
        return self._decide(review_id, "reject", note, at)

    def _decide(self, review_id: str, action: str, note: str, at: Instant) -> Review:
        return review_from(self._call("POST", f"/v1/reviews/{_quote(review_id)}/{action}", ident=review_id,
                                      json={"note": note, "at": _at(at)}))

    def update(self, memory_id: str, text: str | None = None, *, kind: str | None = None,
               importance: float | None = None, priority: str | None = None,
               metadata: dict[str, Any] | None = None, at: Instant = None,
               expires_at: Instant | str = None) -> MemoryRecord:
        body = {"text": text, "kind": kind, "importance": importance, "priority": priority, "metadata": metadata,
                "at": _at(at), "expires_at": expires_at if expires_at == "never" else _at(expires_at)}
        return self._record("PATCH", memory_id, json=body)

    def pin(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self._record("POST", memory_id, "pin", {"at": _at(at)})

    def feedback(self, memory_id: str, useful: bool, at: Instant = None) -> MemoryRecord:
        return self._record("POST", memory_id, "feedback", {"useful": useful, "at": _at(at)})

    def unpin(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self._record("POST", memory_id, "unpin", {"at": _at(at)})

    def hold(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self._record("POST", memory_id, "hold", {"at": _at(at)})

    def release(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self._record("POST", memory_id, "release", {"at": _at(at)})

    def forget(self, memory_id: str, at: Instant = None, reason: str = "") -> MemoryRecord:
        return self._record("POST", memory_id, "forget", {"at": _at(at), "reason": reason})

    def restore(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self._record("POST", memory_id, "restore", {"at": _at(at)})

    def purge(self, memory_id: str, at: Instant = None) -> None:
        self._call("POST", f"/v1/memories/{_quote(memory_id)}/purge", ident=memory_id, json={"at": _at(at)})

    def purge_user(self, user_id: str, at: Instant = None) -> int:
        return int(self._call("POST", f"/v1/users/{_quote(user_id)}/purge", json={"at": _at(at)})["purged"])

    def history(self, memory_id: str) -> list[Event]:
        data = self._call("GET", f"/v1/memories/{_quote(memory_id)}/history", ident=memory_id)
        return [event_from(e) for e in data["events"]]

    def explain(self, memory_id: str, at: Instant = None) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", f"/v1/memories/{_quote(memory_id)}/explain", ident=memory_id,
                                            params={"at": _at(at)})
        return result

    def search(self, query: str, user_id: str | None = None, agent_id: str | None = None,
               session_id: str | None = None, limit: int = 10, filters: dict[str, Any] | None = None,
               at: Instant = None, *, include_cold: bool | None = None) -> list[Hit]:
        body = {"query": query, "user_id": user_id, "agent_id": agent_id, "session_id": session_id, "limit": limit,
                "filters": filters, "at": _at(at), "include_cold": include_cold}
        return [Hit(record_from(h["record"]), h["score"]) for h in self._call("POST", "/v1/search", json=body)["hits"]]

    def context(self, query: str, user_id: str | None = None, budget_tokens: int = 2000, goal: str | None = None,
                session_id: str | None = None, at: Instant = None) -> Context:
        body = {"query": query, "user_id": user_id, "budget_tokens": budget_tokens, "goal": goal,
                "session_id": session_id, "at": _at(at)}
        return context_from(self._call("POST", "/v1/context", json=body))

    def timeline(self, user_id: str | None, slot_or_query: str, at: Instant = None) -> list[dict[str, Any]]:
        data = self._call("POST", "/v1/timeline", json={"user_id": user_id, "slot": slot_or_query, "at": _at(at)})
        return list(data["timeline"])

    def stats(self, user_id: str | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/v1/stats", params={"user_id": user_id})
        return result

    def export(self, user_id: str | None = None) -> Iterator[dict[str, Any]]:
        yield from self._call("GET", "/v1/export", params={"user_id": user_id})["records"]

    def forgotten(self, since: Instant = None, until: Instant = None) -> list[dict[str, Any]]:
        data = self._call("GET", "/v1/forgotten", params={"since": _at(since), "until": _at(until)})
        return list(data["forgotten"])

    def events(self, since: int = 0, limit: int = 100, types: list[str] | None = None) -> dict[str, Any]:
        """The change feed after cursor `since` (`Memory.events`): {"events": [...], "next": cursor}."""
        params: dict[str, Any] = {"since": since, "limit": limit}
        if types is not None:
            params["types"] = ",".join(types)
        result: dict[str, Any] = self._call("GET", "/v1/events", params=params)
        return result

    def sweep(self, at: Instant = None, dry_run: bool = False, user_id: str | None = None,
              spread: bool = False) -> dict[str, Any]:
        """The sweep report as a dict (admin keys only)."""
        result: dict[str, Any] = self._call("POST", "/v1/sweep", json={"at": _at(at), "dry_run": dry_run,
                                                                        "user_id": user_id, "spread": spread})
        return result


def _quote(part: str) -> str:
    from urllib.parse import quote

    return quote(part, safe="")
