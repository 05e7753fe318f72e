"""Source authority and the review queue (issue 19, item 6): every record knows who said it; a newer value from a
source ranking below the current value's source does not replace it but waits for a person, who accepts (the
timeline shows the change) or rejects (the statement goes to the trash); both audited. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebbing import Memory
from ebbing.cli import app
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import Conflict, InvalidInput, NotFound

from .conftest import T0

DAY = 86400.0
OAK = "My shipping address is 12 Oak Street, Springfield"
ELM = "The user's shipping address is 45 Elm Avenue, Shelbyville"
QUESTION = "what is my shipping address"


def current_values(mem: Memory, user: str = "u") -> list[str]:
    return [row["value"] for row in mem.timeline(user, "shipping address") if row["current"]]


def test_a_lower_source_waits_for_review_and_accepting_writes_the_change(mem: Memory) -> None:
    t = T0.timestamp()
    oak = mem.add(OAK, user_id="u", at=t).records[0]
    for _ in range(3):  # the user's value is used often: it must still give way once the change is accepted
        mem.search(QUESTION, user_id="u", at=t + DAY / 2)
    added = mem.add(ELM, user_id="u", source="tool", at=t + DAY)
    elm = added.records[0]
    assert (oak.source, elm.source) == ("user", "tool")
    held = [e for e in added.events if e.type == "review"]
    assert len(held) == 1 and held[0].data["incumbent"] == oak.id and held[0].data["source"] == "tool"

    pending = mem.reviews()
    assert [(r.memory_id, r.incumbent, r.status, r.source, r.incumbent_source) for r in pending] == [
        (elm.id, oak.id, "pending", "tool", "user")]
    assert (pending[0].proposed, pending[0].current) == (ELM, OAK)
    assert mem.review_count() == 1 and mem.review_count("u") == 1 and mem.review_count(status="accepted") == 0
    assert mem.reviews(user_id="someone else") == []
    # Meanwhile the user's value is the current one everywhere: timeline, search, context.
    assert current_values(mem) == ["12 Oak Street"]
    hits = mem.search(QUESTION, user_id="u", at=t + 2 * DAY)
    assert hits[0].record.id == oak.id and elm.id in [h.record.id for h in hits]
    assert "45 Elm" not in mem.context(QUESTION, user_id="u", at=t + 2 * DAY).text
    assert mem.explain(elm.id, at=t + 2 * DAY)["source"] == "tool"
    assert mem.explain(elm.id, at=t + 2 * DAY)["reviews"][0]["review"] == pending[0].id

    accepted = mem.accept_review(pending[0].id, note="confirmed with the customer", at=t + 3 * DAY)
    assert (accepted.status, accepted.decided_by, accepted.note) == ("accepted", "api", "confirmed with the customer")
    assert accepted.decided_at is not None and accepted.decided_at.timestamp() == t + 3 * DAY
    assert current_values(mem) == ["45 Elm Avenue"]
    line = mem.timeline("u", "shipping address")
    assert line[0]["superseded_by"] == elm.id and line[0]["valid_to"] is not None
    assert mem.search(QUESTION, user_id="u", at=t + 4 * DAY)[0].record.id == elm.id
    assert mem.reviews() == [] and [r.status for r in mem.reviews(status=None)] == ["accepted"]
    assert [(e.actor, e.reason) for e in mem.history(oak.id) if e.type == "supersede"] == [
        ("api", "a newer value, accepted in review")]
    fed = [e for e in mem.events(limit=1000)["events"] if e["type"] == "review"]
    assert [e.get("status") for e in fed] == [None, "accepted"]
    with pytest.raises(Conflict, match="already accepted"):
        mem.reject_review(pending[0].id)


def test_rejecting_trashes_the_statement_and_keeps_the_value(mem: Memory) -> None:
    t = T0.timestamp()
    oak = mem.add(OAK, user_id="u", at=t).records[0]
    elm = mem.add(ELM, user_id="u", source="agent", at=t + DAY).records[0]
    review = mem.reviews()[0]
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    rejected = mem.reject_review(review.id, note=f"wrong customer, key {key}", at=t + 2 * DAY)
    assert rejected.status == "rejected" and key not in rejected.note and "wrong customer" in rejected.note
    assert mem.get(elm.id).tier.value == "trash"
    assert current_values(mem) == ["12 Oak Street"]
    assert mem.search(QUESTION, user_id="u", at=t + 3 * DAY)[0].record.id == oak.id
    assert any(f["memory_id"] == elm.id and "rejected in review" in f["reason"] for f in mem.forgotten())
    assert mem.restore(elm.id, at=t + 4 * DAY).tier.value == "warm"  # restorable until purged
    with pytest.raises(Conflict):
        mem.accept_review(review.id)
    with pytest.raises(NotFound, match="review_id"):
        mem.review("01J0000000000000000000NONE")
    with pytest.raises(InvalidInput, match="note"):
        mem.accept_review(review.id, note="\ud800")  # a lone surrogate: refused before anything is looked up
    with pytest.raises(InvalidInput, match="reason"):
        mem.forget(oak.id, reason="\ud800")
    assert mem.get(oak.id).tier.value != "trash"


def test_an_equal_or_higher_source_replaces_at_once(mem: Memory) -> None:
    t = T0.timestamp()
    mem.add(OAK, user_id="a", source="tool", at=t)
    mem.add(ELM, user_id="a", source="user", at=t + DAY)  # the user outranks the tool
    mem.add(OAK, user_id="b", source="tool", at=t)
    mem.add(ELM, user_id="b", source="tool", at=t + DAY)  # a tool correcting itself
    assert mem.reviews(status=None) == []
    assert current_values(mem, "a") == current_values(mem, "b") == ["45 Elm Avenue"]


def test_accepting_after_the_value_changed_again_is_refused(mem: Memory) -> None:
    t = T0.timestamp()
    mem.add(OAK, user_id="u", at=t)
    mem.add(ELM, user_id="u", source="tool", at=t + DAY)
    mem.add("My shipping address is 7 Birch Road, Capital City", user_id="u", at=t + 2 * DAY)
    review = mem.reviews()[0]
    with pytest.raises(Conflict, match="already replaced"):
        mem.accept_review(review.id, at=t + 3 * DAY)
    assert mem.review(review.id).status == "pending" and current_values(mem) == ["7 Birch Road"]
    assert mem.reject_review(review.id, at=t + 3 * DAY).status == "rejected"


def test_sources_are_configured_and_checked(location: str | Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="sources"):
        Memory(location, embedder=HashEmbedder(), archive=tmp_path / "a", sources=["user", "user"])
    with pytest.raises(InvalidInput, match="sources"):
        Memory(location, embedder=HashEmbedder(), archive=tmp_path / "a", sources=[])
    with Memory(location, embedder=HashEmbedder(), archive=tmp_path / "a", sources=["crm", "user"]) as mem:
        t = T0.timestamp()
        with pytest.raises(InvalidInput, match="source") as bad:
            mem.add(OAK, user_id="u", source="tool", at=t)
        assert bad.value.field == "source" and mem.stats("u")["total"] == 0  # nothing stored
        mem.add("My shipping address is 3 Pine Lane, Ogdenville", user_id="u", source="crm", at=t)
        mem.add(OAK, user_id="u", at=t + DAY)  # the user ranks below the CRM here
        assert [(r.source, r.incumbent_source) for r in mem.reviews()] == [("user", "crm")]
        assert current_values(mem) == ["3 Pine Lane"]


def test_default_sources_of_assistant_messages_imports_and_exports(mem: Memory, tmp_path: Path) -> None:
    t = T0.timestamp()
    said = mem.add("You could try the 9:40 train instead", user_id="u", metadata={"role": "assistant"}, at=t)
    assert said.records[0].source == "agent"
    lines = tmp_path / "in.jsonl"
    lines.write_text("\n".join(json.dumps(x) for x in [
        {"text": "Imported note about the Lisbon trip", "user_id": "v", "at": t},
        {"text": "Said by the user on the old system", "user_id": "v", "at": t, "source": "user"}]) + "\n")
    mem.import_jsonl(lines, at=t)
    assert sorted(r["source"] for r in mem.export("v")) == ["import", "user"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "x", "user_id": "v", "source": "the cloud"}) + "\n")
    with pytest.raises(InvalidInput, match="source"):
        mem.import_jsonl(bad, at=t)


def test_the_source_survives_the_archive_and_a_purge_takes_the_review(mem: Memory) -> None:
    t = T0.timestamp()
    oak = mem.add(OAK, user_id="u", at=t).records[0]
    elm = mem.add(ELM, user_id="u", source="tool", at=t + DAY).records[0]
    mem.sweep(at=t + 200 * DAY)
    moved = mem.get(elm.id)
    assert moved.tier.value in ("cold", "trash") and moved.source == "tool"
    assert mem.reviews()[0].proposed == ELM  # read from wherever the record now is
    mem.purge(elm.id, at=t + 201 * DAY)
    assert mem.reviews(status=None) == []  # its plan held the value: it goes with the record
    assert mem.get(oak.id).source == "user"


def test_the_review_queue_from_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBBING_EMBEDDER", "hash")
    runner = CliRunner()
    t = T0.timestamp()
    assert runner.invoke(app, ["add", OAK, "--user", "u", "--at", str(t)]).exit_code == 0
    held = runner.invoke(app, ["add", ELM, "--user", "u", "--source", "tool", "--at", str(t + DAY)])
    assert held.exit_code == 0 and "held for review" in held.output
    listed = runner.invoke(app, ["review", "--json"])
    assert listed.exit_code == 0, listed.output
    review = json.loads(listed.output)[0]
    assert (review["source"], review["proposed"]) == ("tool", ELM)
    shown = runner.invoke(app, ["review"])
    assert review["id"] in shown.output and "45 Elm Avenue" in shown.output
    done = runner.invoke(app, ["review", "accept", review["id"], "--note", "checked"])
    assert done.exit_code == 0 and "accepted" in done.output
    assert "no pending reviews" in runner.invoke(app, ["review"]).output
    again = runner.invoke(app, ["review", "reject", review["id"]])
    assert isinstance(again.exception, Conflict) and "already accepted" in str(again.exception)
    wrong = runner.invoke(app, ["add", "x y z", "--user", "u", "--source", "nobody"])
    assert isinstance(wrong.exception, InvalidInput) and wrong.exception.field == "source"
    monkeypatch.setenv("EBBING_SOURCES", "user,nobody")
    assert runner.invoke(app, ["add", "x y z", "--user", "u", "--source", "nobody"]).exit_code == 0


def test_a_judged_change_waits_too(smart: Memory) -> None:
    """A change the judge recognises (no rule names the slot) is held the same way, and accepted into the
    timeline like one."""
    t = T0.timestamp()
    old = smart.add("We deploy the billing service on Postgres 14", user_id="u", at=t).records[0]
    new = smart.add("The billing service now runs on Postgres 16", user_id="u", source="tool", at=t + DAY)
    assert [e.type for e in new.events] == ["add", "review"]
    question = "which Postgres version does the billing service run on"
    assert smart.search(question, user_id="u", at=t + 2 * DAY)[0].record.id == old.id
    smart.accept_review(smart.reviews()[0].id, at=t + 2 * DAY)
    assert smart.search(question, user_id="u", at=t + 3 * DAY)[0].record.id == new.records[0].id


def test_a_key_bound_to_a_source_cannot_speak_as_the_user(tmp_path: Path) -> None:
    """`ebbing keys create --source tool`: what the key adds is the tool's, whatever the request claims, so a
    tool's integration cannot skip the review queue by saying it is the user."""
    from fastapi.testclient import TestClient

    from ebbing.server.app import create_app
    from ebbing.server.keys import KeyStore, keys_path

    db = tmp_path / "mem.db"
    keys = KeyStore(keys_path(db))
    user_key, _ = keys.create("acme")
    tool_key, info = keys.create("acme", source="tool")
    assert info.source == "tool" and keys.info(info.key_id) == info
    assert [k.source for k in keys.entries("acme")] == [None, "tool"]
    keys.close()
    t = T0.timestamp()
    with TestClient(create_app(db, embedder=HashEmbedder())) as http:
        as_user = {"Authorization": f"Bearer {user_key}"}
        as_tool = {"Authorization": f"Bearer {tool_key}"}
        first = http.post("/v1/memories", json={"text": OAK, "user_id": "u", "at": t}, headers=as_user)
        assert first.status_code == 201
        claimed = http.post("/v1/memories", json={"text": ELM, "user_id": "u", "source": "user", "at": t + DAY},
                            headers=as_tool)
        assert claimed.status_code == 403 and claimed.json()["error"]["field"] == "source"
        assert http.get("/v1/reviews", headers=as_user).json()["reviews"] == []  # refused: nothing stored
        added = http.post("/v1/memories", json={"text": ELM, "user_id": "u", "at": t + DAY}, headers=as_tool)
        assert added.status_code == 201 and added.json()["records"][0]["source"] == "tool"
        [review] = http.get("/v1/reviews", headers=as_user).json()["reviews"]
        assert (review["source"], review["incumbent_source"]) == ("tool", "user")
        named = http.post("/v1/memories", json={"text": "The user's shipping address is 9 Ash Court", "user_id": "u",
                                                "source": "tool", "at": t + 2 * DAY}, headers=as_tool)
        assert named.status_code == 201  # naming its own source is fine


def test_a_keys_file_from_before_sources_opens_and_binds_nothing(tmp_path: Path) -> None:
    import sqlite3

    from ebbing.server.keys import KeyStore

    path = tmp_path / "old.keys.db"
    with sqlite3.connect(path) as conn:  # the layout keys files had before keys could be bound to a source
        conn.execute("CREATE TABLE keys (key_id TEXT PRIMARY KEY, hash TEXT NOT NULL, tenant TEXT NOT NULL, role TEXT "
                     "NOT NULL, created_at REAL NOT NULL, revoked_at REAL, note TEXT NOT NULL DEFAULT '', rate REAL, "
                     "burst INTEGER, max_body INTEGER)")
        conn.execute("INSERT INTO keys VALUES ('0123456789ab', 'x', 'acme', 'agent', 1.0, NULL, '', NULL, NULL, NULL)")
    keys = KeyStore(path)
    assert [(k.key_id, k.source) for k in keys.entries()] == [("0123456789ab", None)]
    with pytest.raises(InvalidInput, match="source"):
        keys.create("acme", source=" tool")
    keys.close()
