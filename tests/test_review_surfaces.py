"""The review queue (source authority) on every surface: the REST routes and their errors and keys, the Python
`Client` against a real `ebbing serve` process, and the MCP `remember` tool over stdio, all on real SQLite files.

The scenario: the user says their shipping address, and a day later a tool reports another one. A tool ranks
below the user, so the newer value is stored but waits in the review queue until a person decides."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import ClientSession

from ebbing import Memory
from ebbing.bench.serve import running_server
from ebbing.client import Client
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import Conflict, InvalidInput, NotFound
from ebbing.model import Review, Tier
from ebbing.server.app import create_app
from ebbing.server.keys import KeyStore, key_id_of, keys_path

from .conftest import DAY, T0
from .test_mcp import data, error, serve

OLD = "My shipping address is 12 Oak Street, Springfield"
NEW = "The user's shipping address is 45 Elm Avenue, Shelbyville"
T = T0.timestamp()
UNKNOWN = "01KE0000000000000000000000"


def make_key(db: Path, tenant: str, role: str = "agent") -> str:
    store = KeyStore(keys_path(db))
    key, _ = store.create(tenant, role)
    store.close()
    return key


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def assert_error(response: Any, status: int, type_: str, field: str | None = None) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == type_ and error["message"]
    if field is not None:
        assert error["field"] == field


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "mem.db"


@pytest.fixture
def agent(db: Path) -> str:
    return make_key(db, "acme")


@pytest.fixture
def http(db: Path, agent: str) -> Iterator[TestClient]:
    """A server with keys: every request below carries the agent key of tenant "acme" unless it says otherwise."""
    with TestClient(create_app(db, embedder=HashEmbedder()), headers=bearer(agent)) as client:
        yield client


def held_back(http: TestClient, user_id: str = "u") -> dict[str, Any]:
    """The scenario over REST: the user's address, then a tool's a day later. Returns the review."""
    first = http.post("/v1/memories", json={"text": OLD, "user_id": user_id, "at": T})
    assert first.status_code == 201, first.text
    assert first.json()["records"][0]["source"] == "user"
    second = http.post("/v1/memories", json={"text": NEW, "user_id": user_id, "source": "tool", "at": T + DAY})
    assert second.status_code == 201, second.text
    added = second.json()
    assert added["records"][0]["source"] == "tool"
    [event] = [e for e in added["events"] if e["type"] == "review"]
    assert event["memory_id"] == added["records"][0]["id"]
    assert event["data"]["incumbent"] == first.json()["records"][0]["id"]
    listed = http.get("/v1/reviews", params={"user_id": user_id}).json()["reviews"]
    assert [r["id"] for r in listed] == [event["data"]["review"]]
    review: dict[str, Any] = listed[0]
    return review


def test_rest_lists_and_accepts_a_held_value(http: TestClient, agent: str) -> None:
    review = held_back(http)
    assert review["status"] == "pending" and review["user_id"] == "u"
    assert (review["source"], review["incumbent_source"]) == ("tool", "user")
    assert (review["proposed"], review["current"]) == (NEW, OLD)
    assert review["decided_at"] is None and review["decided_by"] is None
    assert http.get("/v1/reviews").json()["reviews"] == [review]  # no user_id: every user's
    assert http.get(f"/v1/reviews/{review['id']}").json() == review
    assert http.get("/v1/reviews", params={"status": "accepted"}).json() == {"reviews": []}
    assert http.get("/v1/reviews", params={"user_id": "someone-else"}).json() == {"reviews": []}
    current = http.post("/v1/timeline", json={"user_id": "u", "slot": "shipping address"}).json()["timeline"]
    assert [t["value"] for t in current if t["current"]] == ["12 Oak Street"]  # held: not superseded yet

    accepted = http.post(f"/v1/reviews/{review['id']}/accept", json={"note": "the user moved", "at": T + 2 * DAY})
    assert accepted.status_code == 200, accepted.text
    decided = accepted.json()
    assert decided["id"] == review["id"] and decided["status"] == "accepted"
    assert decided["note"] == "the user moved" and decided["decided_by"] == f"key:{key_id_of(agent)}"
    assert decided["decided_at"] == "2026-01-07T09:00:00+00:00"
    assert http.get(f"/v1/reviews/{review['id']}").json() == decided
    assert http.get("/v1/reviews").json() == {"reviews": []}  # nothing pending any more
    assert http.get("/v1/reviews", params={"status": "accepted"}).json()["reviews"] == [decided]
    assert http.get("/v1/reviews", params={"status": "any"}).json()["reviews"] == [decided]
    timeline = http.post("/v1/timeline", json={"user_id": "u", "slot": "shipping address"}).json()["timeline"]
    assert [t["value"] for t in timeline if t["current"]] == ["45 Elm Avenue"]

    assert_error(http.post(f"/v1/reviews/{review['id']}/accept"), 409, "conflict")
    assert_error(http.post(f"/v1/reviews/{review['id']}/reject", json={}), 409, "conflict")


def test_rest_reject_keeps_the_current_value_and_trashes_the_held_one(http: TestClient) -> None:
    review = held_back(http)
    rejected = http.post(f"/v1/reviews/{review['id']}/reject")  # no body: no note, now
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["status"] == "rejected" and rejected.json()["note"] == ""
    assert http.get(f"/v1/memories/{review['memory_id']}").json()["tier"] == "trash"
    assert http.get(f"/v1/memories/{review['incumbent']}").json()["tier"] == "hot"
    assert http.get("/v1/reviews", params={"status": "rejected"}).json()["reviews"] == [rejected.json()]
    assert_error(http.post(f"/v1/reviews/{review['id']}/reject"), 409, "conflict")
    assert_error(http.post(f"/v1/reviews/{review['id']}/accept", json={"note": "too late"}), 409, "conflict")


def test_rest_errors_keys_and_tenants(db: Path, http: TestClient) -> None:
    review = held_back(http)
    # Unknown ids: 404 naming the field, on every review route.
    assert_error(http.get(f"/v1/reviews/{UNKNOWN}"), 404, "not_found", "review_id")
    assert_error(http.post(f"/v1/reviews/{UNKNOWN}/accept"), 404, "not_found", "review_id")
    assert_error(http.post(f"/v1/reviews/{UNKNOWN}/reject", json={"note": "?"}), 404, "not_found", "review_id")
    # Bad input: an unknown source is the engine's rule (400), the rest is the request's shape (422).
    bad = http.post("/v1/memories", json={"text": "My phone number is 555-0100", "user_id": "u", "source": "rumour"})
    assert_error(bad, 400, "invalid_input", "source")
    assert_error(http.post("/v1/memories", json={"text": "x y z", "source": 7}), 422, "invalid_request", "source")
    assert_error(http.get("/v1/reviews", params={"status": "open"}), 422, "invalid_request", "status")
    assert_error(http.get("/v1/reviews", params={"limit": 0}), 422, "invalid_request", "limit")
    assert_error(http.post(f"/v1/reviews/{review['id']}/accept", json={"note": 5}), 422, "invalid_request", "note")
    assert_error(http.post(f"/v1/reviews/{review['id']}/accept", json={"nope": 1}), 422, "invalid_request", "nope")
    assert_error(http.post(f"/v1/reviews/{review['id']}/accept", json={"at": "not a time"}), 400, "invalid_input",
                 "at")
    # Keys: none or a bad one is refused; another tenant cannot tell the review from one that never existed.
    assert_error(http.get("/v1/reviews", headers={"Authorization": ""}), 401, "unauthorized")
    assert_error(http.post(f"/v1/reviews/{review['id']}/accept", headers=bearer("ebk_wrong")), 401, "unauthorized")
    other = bearer(make_key(db, "other"))
    assert http.get("/v1/reviews", headers=other).json() == {"reviews": []}
    assert_error(http.get(f"/v1/reviews/{review['id']}", headers=other), 404, "not_found", "review_id")
    assert_error(http.post(f"/v1/reviews/{review['id']}/accept", headers=other), 404, "not_found", "review_id")
    assert http.get(f"/v1/reviews/{review['id']}").json()["status"] == "pending"  # none of that decided it
    # Roles: there is no read-only key; deciding is a write, which an agent key (like an admin key) may do.
    admin = make_key(db, "acme", "admin")
    decided = http.post(f"/v1/reviews/{review['id']}/accept", headers=bearer(admin)).json()
    assert decided["status"] == "accepted" and decided["decided_by"] == f"key:{key_id_of(admin)}"
    [event] = [e for e in http.get(f"/v1/memories/{review['memory_id']}/history").json()["events"]
               if e["type"] == "review" and e["data"].get("status") == "accepted"]
    assert event["actor"] == f"key:{key_id_of(admin)}"
    schema = http.get("/openapi.json").json()
    assert {"/v1/reviews", "/v1/reviews/{review_id}", "/v1/reviews/{review_id}/accept",
            "/v1/reviews/{review_id}/reject"} <= set(schema["paths"])
    assert "source" in schema["components"]["schemas"]["AddBody"]["properties"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    db = tmp_path_factory.mktemp("reviews") / "mem.db"
    key = make_key(db, "team")
    with running_server(db, args=("--sweep-every", "0")) as url:
        yield url, db, key


def test_client_mirrors_the_review_queue(served: tuple[str, Path, str]) -> None:
    url, db, key = served
    with Client(url, key) as mem:
        kept = mem.add(OLD, user_id="ann", at=T).records[0]
        added = mem.add(NEW, user_id="ann", at=T + DAY, source="tool")
        assert kept.source == "user" and added.records[0].source == "tool"
        assert [e.type for e in added.events].count("review") == 1
        mem.add(OLD, user_id="bob", at=T + 3600)
        mem.add(NEW, user_id="bob", at=T + DAY + 3600, source="tool")  # an hour after ann's: the queue's order

        pending = mem.reviews()
        assert [r.user_id for r in pending] == ["ann", "bob"] and all(isinstance(r, Review) for r in pending)
        with Memory(db, tenant="team", embedder=HashEmbedder()) as local:  # the same values, read directly
            assert local.reviews() == pending
        ann, bob = pending
        assert mem.reviews(user_id="ann") == [ann] and mem.review(ann.id) == ann
        assert (ann.memory_id, ann.incumbent, ann.proposed, ann.current) == (added.records[0].id, kept.id, NEW, OLD)

        accepted = mem.accept_review(ann.id, note="confirmed by phone", at=T + 2 * DAY)
        assert accepted.status == "accepted" and accepted.note == "confirmed by phone"
        assert accepted.decided_by == f"key:{key_id_of(key)}"
        assert accepted.decided_at is not None and accepted.decided_at.timestamp() == T + 2 * DAY
        rejected = mem.reject_review(bob.id)
        assert rejected.status == "rejected" and mem.get(bob.memory_id).tier is Tier.TRASH
        assert mem.reviews() == []
        assert mem.reviews(status="accepted") == [accepted] and mem.reviews(status="rejected") == [rejected]
        assert mem.reviews(status=None, limit=1) == [accepted]
        assert mem.reviews(status=None) == [accepted, rejected]

        with pytest.raises(Conflict, match="already accepted"):
            mem.accept_review(ann.id)
        with pytest.raises(Conflict):
            mem.reject_review(bob.id)
        with pytest.raises(NotFound) as missing:
            mem.review(UNKNOWN)
        assert missing.value.field == "review_id" and missing.value.ident == UNKNOWN
        with pytest.raises(NotFound):
            mem.accept_review(UNKNOWN)
        with pytest.raises(InvalidInput) as bad:
            mem.add("My phone number is 555-0100", user_id="ann", source="rumour")
        assert bad.value.field == "source"
        with pytest.raises(InvalidInput) as bad:
            mem.reviews(status="open")
        assert bad.value.field == "status"


def test_mcp_remember_takes_a_source(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def test(session: ClientSession) -> None:
        call = session.call_tool
        first = data(await call("remember", {"text": OLD, "user_id": "maya"}))
        assert first["records"][0]["source"] == "user" and "awaiting_review" not in first
        second = data(await call("remember", {"text": NEW, "user_id": "maya", "source": "tool"}))
        assert second["records"][0]["source"] == "tool"
        [held] = second["awaiting_review"]
        assert held["memory_id"] == second["records"][0]["id"] and held["current_id"] == first["records"][0]["id"]
        assert error(await call("remember", {"text": "My phone number is 555-0100", "source": "rumour"})).startswith(
            "invalid input: source")
        seen.update(held)

    serve(tmp_path, test=test)

    with Memory(tmp_path / "mem.db", embedder=HashEmbedder()) as mem:
        [review] = mem.reviews()
        assert (review.id, review.memory_id, review.source, review.status) == (
            seen["review_id"], seen["memory_id"], "tool", "pending")
        assert mem.stats()["total"] == 2  # the refused call wrote nothing
