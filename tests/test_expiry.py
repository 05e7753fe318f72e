"""Explicit expiry (issue 19, item 5): `expires_at` on add and update; after it a record is hidden from search
and context, and the next sweep moves it by its priority's rules (only a legal hold keeps it); `explain` shows
it; the archive, export and import keep it; REST and the CLI take it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from ebbing import Memory
from ebbing.cli import app
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import InvalidInput
from ebbing.server.app import create_app

from .conftest import T0

DAY = 86400.0


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.record.id for h in hits]


def test_an_expired_record_is_hidden_then_moved_by_its_priority(mem: Memory) -> None:
    t = T0.timestamp()
    trip = mem.add("Our hotel in Lisbon is the Pestana Palace", user_id="u", kind="fact", priority="P1",
                   at=t, expires_at=t + 10 * DAY).records[0]
    gate = mem.add("The gate code for the Lisbon rental is on the fridge", user_id="u", kind="fact",
                   priority="P2", at=t, expires_at=t + 10 * DAY).records[0]
    pinned = mem.add("Lisbon museum pass covers the tram", user_id="u", kind="fact", pinned=True, priority="P2", at=t,
                     expires_at=t + 10 * DAY).records[0]
    held = mem.add("Lisbon deposit receipt number 4411", user_id="u", kind="fact", at=t,
                   expires_at=t + 10 * DAY).records[0]
    mem.hold(held.id, at=t)
    plain = mem.add("Lisbon is our favourite city", user_id="u", kind="preference", at=t).records[0]
    assert trip.expires_at is not None and trip.expires_at.timestamp() == t + 10 * DAY

    before = mem.search("Lisbon hotel", user_id="u", at=t + 5 * DAY, count_use=False)
    assert trip.id in ids(before)
    after = mem.search("Lisbon hotel", user_id="u", at=t + 11 * DAY, count_use=False, include_cold=True)
    assert not {trip.id, gate.id, pinned.id, held.id} & set(ids(after)) and plain.id in ids(after)
    context = mem.context("What do I know about Lisbon?", user_id="u", at=t + 11 * DAY)
    assert "Pestana" not in context.text and "museum pass" not in context.text and "favourite" in context.text
    explained = mem.explain(trip.id, at=t + 11 * DAY)
    assert explained["expired"] is True and explained["expires_at"].startswith("2026-01-15")
    assert explained["score"] == 0.0 and mem.explain(pinned.id, at=t + 11 * DAY)["exempt"] is False
    assert mem.explain(held.id, at=t + 11 * DAY)["exempt"] is True

    report = mem.sweep(at=t + 11 * DAY)
    moved = {c.id: (c.target.value, c.reason) for c in report.changes}
    assert moved[trip.id][0] == "cold" and moved[gate.id][0] == "trash" and moved[pinned.id][0] == "trash"
    assert held.id not in moved and plain.id not in moved
    assert all(reason.startswith("expires_at 2026-01-15") for _, reason in moved.values())
    assert mem.get(trip.id).expires_at == trip.expires_at  # read back from the archive file
    causes = {e["memory_id"]: e["cause"] for e in mem.events(types=["tier"])["events"]}
    assert causes[trip.id] == causes[gate.id] == "expiry"


def test_expiry_rules_update_and_round_trip(mem: Memory, tmp_path: Path) -> None:
    t = T0.timestamp()
    with pytest.raises(InvalidInput) as caught:
        mem.add("the conference badge pickup is at hall B", user_id="u", at=t, expires_at=t - DAY)
    assert caught.value.field == "expires_at"
    assert mem.stats("u")["total"] == 0  # refused: nothing stored
    record = mem.add("the conference badge pickup is at hall B", user_id="u", at=t, expires_at=t + DAY).records[0]
    assert mem.update(record.id, expires_at="never", at=t + 60).expires_at is None
    assert record.id in ids(mem.search("badge pickup", user_id="u", at=t + 2 * DAY, count_use=False))
    later = mem.update(record.id, expires_at=t + 3 * DAY, at=t + 120)
    assert later.expires_at is not None and later.expires_at.timestamp() == t + 3 * DAY
    assert [e.data["fields"] for e in mem.history(record.id) if e.type == "update"] == [["expires_at"]] * 2
    with pytest.raises(InvalidInput) as caught:
        mem.update(record.id, expires_at=t, at=t + 180)
    assert caught.value.field == "expires_at"

    exported = list(mem.export("u"))
    assert exported[0]["expires_at"] == later.expires_at.isoformat()
    lines = tmp_path / "export.jsonl"
    lines.write_text("".join(json.dumps({**row, "user_id": "v"}) + "\n" for row in exported))
    with Memory(tmp_path / "other.db", embedder=HashEmbedder(), archive=tmp_path / "other") as other:
        assert other.import_jsonl(lines).imported == 1
        assert next(iter(other.export("v")))["expires_at"] == later.expires_at.isoformat()


def test_expiry_over_rest_and_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with TestClient(create_app(tmp_path / "rest.db", embedder=HashEmbedder())) as http:
        created = http.post("/v1/memories", json={"text": "Dana's flight lands at 18:40", "user_id": "dana",
                                                  "at": "2026-01-05T09:00:00Z", "expires_at": "2026-01-06T00:00:00Z"})
        assert created.status_code == 201
        record = created.json()["records"][0]
        assert record["expires_at"] == "2026-01-06T00:00:00+00:00"
        found = http.post("/v1/search", json={"query": "flight", "user_id": "dana", "at": "2026-01-07T00:00:00Z"})
        assert found.json()["hits"] == []
        cleared = http.patch(f"/v1/memories/{record['id']}", json={"expires_at": "never"})
        assert cleared.status_code == 200 and cleared.json()["expires_at"] is None
        bad = http.post("/v1/memories", json={"text": "x y z", "user_id": "dana", "at": "2026-01-05T09:00:00Z",
                                              "expires_at": "2026-01-01T00:00:00Z"})
        assert bad.status_code == 400 and bad.json()["error"]["field"] == "expires_at"

    monkeypatch.setenv("EBBING_EMBEDDER", "hash")
    shown = CliRunner().invoke(app, ["add", "The parking pass is in the glovebox", "--user", "u", "--expires",
                                     "2099-01-01T00:00:00Z", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["records"][0]["expires_at"] == "2099-01-01T00:00:00+00:00"
