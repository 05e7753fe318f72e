"""Feedback (issue 19, item 4): an agent says whether a recalled memory helped. Useful reinforces it like a
recall; not useful lets it fade sooner; both are audited and shown by `explain`; the library, REST and CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from ebbing import Memory
from ebbing.cli import app
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import Conflict, InvalidInput
from ebbing.server.app import create_app

from .conftest import T0

DAY = 86400.0


def test_useful_reinforces_and_not_useful_weakens(mem: Memory) -> None:
    t = T0.timestamp()
    kept, plain, dropped = (mem.add(text, user_id="u", kind="fact", importance=0.5, at=t).records[0]
                            for text in ("The staging database is db-7", "The CI runner image is ubuntu-24",
                                         "The build cache lives on node nine"))
    useful = mem.feedback(kept.id, True, at=t + 20 * DAY)
    assert useful.access_count == kept.access_count + 1
    assert useful.last_accessed_at is not None and useful.last_accessed_at.timestamp() == t + 20 * DAY
    weaker = mem.feedback(dropped.id, False, at=t + 20 * DAY)
    assert weaker.access_count == 0 and weaker.importance == pytest.approx(0.4)
    assert weaker.last_accessed_at == dropped.last_accessed_at  # not a use: its decay clock runs on

    later = t + 60 * DAY
    scores = {name: mem.explain(record.id, at=later)["score"] for name, record in
              (("useful", kept), ("plain", plain), ("not useful", dropped))}
    assert scores["useful"] > scores["plain"] > scores["not useful"]
    assert mem.explain(kept.id, at=later)["feedback"] == {"useful": 1, "not_useful": 0}
    assert mem.explain(dropped.id, at=later)["feedback"] == {"useful": 0, "not_useful": 1}
    assert mem.explain(plain.id, at=later)["feedback"] == {"useful": 0, "not_useful": 0}
    assert [e.data for e in mem.history(kept.id) if e.type == "feedback"] == [{"useful": True}]
    feed = mem.events(types=["feedback"])["events"]
    assert [(e["memory_id"], e["useful"]) for e in feed] == [(kept.id, True), (dropped.id, False)]

    mem.forget(plain.id, at=later)
    with pytest.raises(Conflict, match="restore it"):
        mem.feedback(plain.id, True, at=later)
    with pytest.raises(InvalidInput) as caught:
        mem.feedback(kept.id, "yes", at=later)  # type: ignore[arg-type]
    assert caught.value.field == "useful"
    assert mem.get(kept.id).access_count == useful.access_count  # the refused call changed nothing


def test_feedback_over_rest_and_the_cli(tmp_path: Path, ebbing_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with TestClient(create_app(tmp_path / "rest.db", embedder=HashEmbedder())) as http:
        record = http.post("/v1/memories", json={"text": "I prefer window seats", "user_id": "dana",
                                                 "at": T0.isoformat()}).json()["records"][0]
        answer = http.post(f"/v1/memories/{record['id']}/feedback", json={"useful": False})
        assert answer.status_code == 200 and answer.json()["importance"] < record["importance"]
        assert http.post(f"/v1/memories/{record['id']}/feedback", json={}).status_code == 422
        assert http.post("/v1/memories/01KE0000000000000000000000/feedback",
                         json={"useful": True}).status_code == 404

    monkeypatch.setenv("EBBING_EMBEDDER", "hash")
    runner = CliRunner()
    added = json.loads(runner.invoke(app, ["add", "I am allergic to shrimp", "--user", "u", "--json"]).stdout)
    memory_id = added["records"][0]["id"]
    shown = runner.invoke(app, ["feedback", memory_id, "--useful", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["access_count"] == added["records"][0]["access_count"] + 1
    assert runner.invoke(app, ["feedback", memory_id]).exit_code == 2  # --useful or --not-useful is required
