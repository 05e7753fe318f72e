"""The REST server in-process (FastAPI's TestClient): every route, the error shape, keys, roles and limits.

The real process over a socket, with two tenants, is tests/test_server_process.py.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from ebbing.cli import app
from ebbing.embed.hashing import HashEmbedder
from ebbing.memory import Memory
from ebbing.server.app import create_app
from ebbing.server.keys import KeyStore, keys_path
from ebbing.server.limits import Limits

T0 = "2026-01-05T09:00:00+00:00"


class FakeClock:
    """The rate limiter's clock, moved by hand so no test sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "mem.db"


def make_key(db: Path, tenant: str, role: str = "agent", **limits: Any) -> str:
    store = KeyStore(keys_path(db))
    key, _ = store.create(tenant, role, **limits)
    store.close()
    return key


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    """An open server (no keys yet): every request is the local admin of tenant "default"."""
    with TestClient(create_app(db, embedder=HashEmbedder())) as http:
        yield http


def add(http: TestClient, text: str, headers: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    response = http.post("/v1/memories", json={"text": text, "user_id": "alice", "at": T0, **fields},
                         headers=headers or {})
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()["records"][0]
    return record


def assert_error(response: Any, status: int, type_: str, field: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"type", "message", "field"}
    assert body["error"]["type"] == type_ and body["error"]["message"]
    if field is not None:
        assert body["error"]["field"] == field
    error: dict[str, Any] = body["error"]
    return error


def test_every_route_over_one_record(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    created = client.post("/v1/memories", json={"text": "Alice prefers dark mode in every editor",
                                                 "user_id": "alice", "at": T0})
    assert created.status_code == 201
    body = created.json()
    assert set(body) == {"records", "events"} and body["events"][0]["type"] == "add"
    record = body["records"][0]
    rid = record["id"]
    assert record["tenant"] == "default" and record["text"] == "Alice prefers dark mode in every editor"
    assert record["created_at"].startswith("2026-01-05T09:00")

    assert client.get(f"/v1/memories/{rid}").json() == record
    hits = client.post("/v1/search", json={"query": "dark mode", "user_id": "alice", "limit": 5}).json()["hits"]
    assert [h["record"]["id"] for h in hits] == [rid] and set(hits[0]) == {"record", "score"}
    context = client.post("/v1/context", json={"query": "which theme?", "user_id": "alice"}).json()
    assert "dark mode" in context["text"] and context["tokens"] <= context["budget"]

    patched = client.patch(f"/v1/memories/{rid}", json={"text": "Alice prefers light mode", "at": T0}).json()
    assert patched["text"] == "Alice prefers light mode" and patched["update_count"] == 1
    assert client.post(f"/v1/memories/{rid}/pin", json={"at": T0}).json()["pinned"] is True
    assert client.post(f"/v1/memories/{rid}/unpin").json()["pinned"] is False
    assert client.post(f"/v1/memories/{rid}/hold").json()["held"] is True
    assert_error(client.delete(f"/v1/memories/{rid}"), 409, "conflict")  # held: cannot be forgotten
    assert client.post(f"/v1/memories/{rid}/release").json()["held"] is False
    trashed = client.delete(f"/v1/memories/{rid}", params={"reason": "user asked"})
    assert trashed.json()["tier"] == "trash"
    forgotten = client.get("/v1/forgotten").json()["forgotten"]
    assert [f["memory_id"] for f in forgotten] == [rid]
    assert client.post(f"/v1/memories/{rid}/restore", json={}).json()["tier"] == "warm"
    assert client.post(f"/v1/memories/{rid}/forget", json={"reason": "again"}).json()["tier"] == "trash"
    assert client.post(f"/v1/memories/{rid}/restore").json()["tier"] == "warm"

    events = [e["type"] for e in client.get(f"/v1/memories/{rid}/history").json()["events"]]
    assert events[0] == "add" and {"update", "pin", "unpin", "hold", "release"} <= set(events)
    explained = client.get(f"/v1/memories/{rid}/explain", params={"at": "2026-02-05T09:00:00Z"}).json()
    assert 0.0 <= explained["score"] <= 1.0
    assert client.get("/v1/stats", params={"user_id": "alice"}).json()
    assert [r["id"] for r in client.get("/v1/export").json()["records"]] == [rid]
    report = client.post("/v1/sweep", json={"dry_run": True}).json()
    assert report["dry_run"] is True and report["evaluated"] >= 1
    assert client.post(f"/v1/memories/{rid}/purge").status_code == 204
    assert_error(client.get(f"/v1/memories/{rid}"), 404, "not_found", "id")
    add(client, "Bob owns a red bicycle", user_id="bob")
    assert client.post("/v1/users/bob/purge", json={}).json() == {"purged": 1}


def test_timeline_of_a_fact(client: TestClient) -> None:
    add(client, "My database timeout is 30 seconds")
    add(client, "My database timeout is 60 seconds now", at="2026-02-01T09:00:00Z")
    chain = client.post("/v1/timeline", json={"user_id": "alice", "slot": "database timeout"}).json()["timeline"]
    assert [step["value"] for step in chain][-1].startswith("60")


def test_errors_have_one_shape_and_the_right_status(client: TestClient) -> None:
    assert_error(client.get("/v1/memories/01NOPE"), 404, "not_found", "id")
    assert_error(client.get("/v1/nothing/here"), 404, "not_found")
    assert_error(client.put("/v1/memories/x"), 405, "method_not_allowed")
    assert_error(client.post("/v1/search", json={"user_id": "alice"}), 422, "invalid_request", "query")
    assert_error(client.post("/v1/search", json={"query": "x", "limmit": 3}), 422, "invalid_request", "limmit")
    broken = assert_error(client.post("/v1/search", content=b'{"query": "x",}',
                                      headers={"Content-Type": "application/json"}), 422, "invalid_request", "body")
    assert broken["message"].startswith("body: must be valid JSON: ") and "character 14" in broken["message"]
    assert_error(client.post("/v1/search", json={"query": "x", "limit": 0}), 400, "invalid_input", "limit")
    assert_error(client.post("/v1/memories", json={"text": "  "}), 400, "invalid_input", "text")
    assert_error(client.post("/v1/memories", json={"text": "hello", "at": "yesterday-ish"}), 400, "invalid_input",
                 "at")
    assert_error(client.post("/v1/memories", json={"text": "hello", "user_id": " x"}), 400, "invalid_input",
                 "user_id")
    rid = add(client, "A note to update")["id"]
    assert_error(client.patch(f"/v1/memories/{rid}", json={}), 400, "invalid_input", "update")
    assert client.get(f"/v1/memories/{rid}").json()["update_count"] == 0  # bad input changed nothing
    assert client.get("/openapi.json").json()["paths"]["/v1/search"]["post"]


def test_keys_roles_and_the_cookie(db: Path) -> None:
    with TestClient(create_app(db, embedder=HashEmbedder())) as http:
        assert http.get("/v1/stats").status_code == 200  # open: no key was ever made
        agent = make_key(db, "acme")
        admin = make_key(db, "acme", "admin")
        error = assert_error(http.get("/v1/stats"), 401, "unauthorized", "authorization")
        assert "Bearer" in error["message"]
        assert http.get("/v1/stats").headers["www-authenticate"] == "Bearer"
        assert_error(http.get("/v1/stats", headers=bearer("ebk_000000000000_nope")), 401, "unauthorized")
        assert_error(http.get("/v1/stats", headers=bearer(agent + "x")), 401, "unauthorized")
        assert_error(http.get("/v1/stats", headers={"Authorization": agent}), 401, "unauthorized")
        rid = add(http, "Acme ships on Fridays", bearer(agent))["id"]
        assert http.get(f"/v1/memories/{rid}", headers=bearer(agent)).json()["tenant"] == "acme"
        for path in ("/v1/sweep", f"/v1/memories/{rid}/purge", f"/v1/memories/{rid}/hold", "/v1/users/alice/purge"):
            assert_error(http.post(path, headers=bearer(agent)), 403, "forbidden")
        assert http.get(f"/v1/memories/{rid}", headers=bearer(agent)).json()["held"] is False
        assert http.post("/v1/sweep", json={}, headers=bearer(admin)).status_code == 200
        http.cookies.set("ebbing_key", agent)  # older servers' cookie held the key itself: no longer a credential
        assert_error(http.get(f"/v1/memories/{rid}"), 401, "unauthorized")
        http.cookies.clear()
        assert http.post("/inspector/login", data={"key": agent}, follow_redirects=False).status_code == 303
        assert http.get(f"/v1/memories/{rid}").status_code == 200  # the inspector's session cookie
        store = KeyStore(keys_path(db))
        store.revoke(store.check(agent).key_id)  # type: ignore[union-attr]
        store.revoke(store.check(admin).key_id)  # type: ignore[union-attr]
        store.close()
        assert "log in again" in assert_error(http.get("/v1/stats"), 401, "unauthorized")["message"]
        http.cookies.clear()
        assert_error(http.get("/v1/stats", headers=bearer(agent)), 401, "unauthorized")
        assert_error(http.get("/v1/stats"), 401, "unauthorized")  # revoking every key does not reopen it


def test_keys_are_stored_hashed(db: Path) -> None:
    store = KeyStore(keys_path(db))
    key, info = store.create("acme", "admin", note="ci")
    assert key.startswith(f"ebk_{info.key_id}_") and len(key) > 50
    assert store.check(key) == info and store.check(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert [k.key_id for k in store.entries()] == [info.key_id]
    store.close()
    raw = keys_path(db).read_bytes()
    secret = key.removeprefix(f"ebk_{info.key_id}_")  # the secret itself may contain "_" (URL-safe base64)
    assert len(secret) >= 40
    assert secret.encode() not in raw and key.encode() not in raw
    with sqlite3.connect(keys_path(db)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM keys WHERE hash = ?", (key,)).fetchone()[0] == 0


def test_rate_limit_is_a_token_bucket_per_key(db: Path) -> None:
    clock = FakeClock()
    key_a, key_b = make_key(db, "a"), make_key(db, "b")
    fast = make_key(db, "a", rate=100.0, burst=10)
    with TestClient(create_app(db, embedder=HashEmbedder(), limits=Limits(rate=1.0, burst=3), clock=clock)) as http:
        assert [http.get("/v1/stats", headers=bearer(key_a)).status_code for _ in range(3)] == [200] * 3
        refused = http.get("/v1/stats", headers=bearer(key_a))
        assert_error(refused, 429, "rate_limited")
        assert refused.headers["retry-after"] == "1"
        assert http.get("/v1/stats", headers=bearer(key_b)).status_code == 200  # another key, its own bucket
        assert [http.get("/v1/stats", headers=bearer(fast)).status_code for _ in range(10)] == [200] * 10
        clock.now += 1.0
        assert http.get("/v1/stats", headers=bearer(key_a)).status_code == 200
        assert http.get("/v1/stats", headers=bearer(key_a)).status_code == 429


def test_request_size_limit_per_key(db: Path) -> None:
    small, large = make_key(db, "a"), make_key(db, "a", max_body=100_000)
    with TestClient(create_app(db, embedder=HashEmbedder(), limits=Limits(max_body=2_000))) as http:
        text = "word " * 1000
        assert_error(http.post("/v1/memories", json={"text": text}, headers=bearer(small)), 413, "too_large", "body")

        def chunks() -> Iterator[bytes]:  # no Content-Length: the middleware counts what arrives
            yield b'{"text": "'
            yield text.encode()
            yield b'"}'

        chunked = http.post("/v1/memories", content=chunks(), headers={**bearer(small),
                                                                        "Content-Type": "application/json"})
        assert_error(chunked, 413, "too_large")
        assert http.get("/v1/export", headers=bearer(small)).json()["records"] == []
        assert http.post("/v1/memories", json={"text": text}, headers=bearer(large)).status_code == 201


def test_tenants_do_not_see_each_other_in_process(db: Path) -> None:
    a, b = make_key(db, "a"), make_key(db, "b")
    with TestClient(create_app(db, embedder=HashEmbedder())) as http:
        rid = add(http, "Tenant A's secret plan is blue", bearer(a))["id"]
        missing = http.get("/v1/memories/01KNOWNOTHING000000000000", headers=bearer(b))
        foreign = http.get(f"/v1/memories/{rid}", headers=bearer(b))
        assert foreign.status_code == missing.status_code == 404
        assert foreign.json()["error"]["message"].replace(rid, "X") == \
            missing.json()["error"]["message"].replace("01KNOWNOTHING000000000000", "X")
        assert http.post("/v1/search", json={"query": "secret plan blue"}, headers=bearer(b)).json()["hits"] == []


def test_background_sweeps_move_old_records(db: Path) -> None:
    with TestClient(create_app(db, embedder=HashEmbedder(), sweep_every=0.05, seed=1)) as http:
        rid = add(http, "lunch was a sandwich", at="2020-01-01T00:00:00Z")["id"]
        deadline = time.monotonic() + 10
        while http.get(f"/v1/memories/{rid}").json()["tier"] == "hot" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert http.get(f"/v1/memories/{rid}").json()["tier"] != "hot"
        assert any(e["type"] == "tier" for e in http.get(f"/v1/memories/{rid}/history").json()["events"])


def test_unexpected_errors_keep_the_shape(db: Path) -> None:
    served = create_app(db, embedder=HashEmbedder())

    @served.get("/boom")
    def boom() -> None:
        raise RuntimeError("a bug")

    with TestClient(served, raise_server_exceptions=False) as http:
        error = assert_error(http.get("/boom"), 500, "server_error")
        assert "RuntimeError" in error["message"] and "a bug" not in error["message"]


def test_worker_sweeps_every_tenant_with_a_key(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBBING_EMBEDDER", "hash")
    make_key(db, "a")
    make_key(db, "b")
    for tenant in ("a", "b"):
        with Memory(db, tenant=tenant, embedder=HashEmbedder()) as mem:
            mem.add("lunch was a sandwich", at="2020-01-01T00:00:00Z")
    done = CliRunner().invoke(app, ["worker", "--every", "0.01", "--rounds", "2", "--db", str(db)])
    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["tenant"] for line in lines] == ["a", "b", "a", "b"]
    assert sum(line["transitions"].get("hot->trash", 0) + line["transitions"].get("hot->cold", 0)
               + line["transitions"].get("hot->warm", 0) for line in lines[:2]) == 2
    assert all(not line["transitions"] for line in lines[2:])  # the second round finds nothing left to move


def test_a_failed_sweep_does_not_stop_the_worker(db: Path) -> None:
    """A database restart fails one tenant's sweep with a StoreError; the worker logs it and goes on."""
    from ebbing.errors import StoreError
    from ebbing.server.sweeper import work

    make_key(db, "a")
    make_key(db, "b")
    failures = {"a": 1}
    swept: list[str] = []

    def open_memory(tenant: str) -> Memory:
        if failures.get(tenant):
            failures[tenant] -= 1
            raise StoreError("lost the connection to PostgreSQL mid-call")
        return Memory(db, tenant=tenant, embedder=HashEmbedder())

    keys = KeyStore(keys_path(db))
    try:
        work(keys, open_memory, every=0.01, rounds=2, seed=1, on_report=lambda tenant, _: swept.append(tenant))
    finally:
        keys.close()
    assert swept == ["b", "a", "b"]  # a's first sweep failed, the rest went on
