"""The change feed (`Memory.events`, `GET /v1/events`) and the Prometheus metrics of `ebbing serve` and
`ebbing worker`, scraped over HTTP after real traffic."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import InvalidInput
from ebbing.server.app import create_app
from ebbing.server.keys import KeyStore, keys_path
from ebbing.server.sweeper import work

from .conftest import T0

DAY = 86400.0
SECRET_WORDS = ("Oberkampf", "allergic", "Rust")


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape by (name, sorted labels)."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(scrape: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return scrape.get((name, tuple(sorted(labels.items()))), 0.0)


def test_the_feed_follows_every_change_in_order_without_text(mem: Memory) -> None:
    t = T0.timestamp()
    kept = mem.add("I moved to 12 Rue Oberkampf", user_id="u", at=t).records[0]
    other = mem.add("I am allergic to shrimp", user_id="u", at=t + 60).records[0]
    third = mem.add("We write the backend in Rust", user_id="u", at=t + 120).records[0]
    mem.pin(kept.id, at=t + 180)
    mem.forget(other.id, at=t + 240)
    mem.restore(other.id, at=t + 300)
    mem.forget(third.id, at=t + 360)
    mem.purge(third.id, at=t + 420)

    seen: list[dict[str, Any]] = []
    cursor = 0
    while True:  # two at a time, as a follower with a small page would read it
        page = mem.events(since=cursor, limit=2)
        seen += page["events"]
        if page["next"] == cursor:
            break
        assert page["next"] == page["events"][-1]["seq"] > cursor
        cursor = page["next"]
    assert [e["seq"] for e in seen] == sorted(e["seq"] for e in seen)
    assert [(e["type"], e["memory_id"]) for e in seen] == [
        ("add", kept.id), ("add", other.id), ("add", third.id), ("pin", kept.id), ("tier", other.id),
        ("tier", other.id), ("tier", third.id), ("purge", third.id)]
    assert [(e.get("from"), e.get("to"), e.get("cause")) for e in seen if e["type"] in ("tier", "purge")] == [
        ("hot", "trash", "manual"), ("trash", "warm", "manual"), ("hot", "trash", "manual"),
        ("trash", None, "purge")]
    assert not any(word in json.dumps(seen) for word in SECRET_WORDS)  # what happened, never what was said

    assert mem.events(since=cursor)["events"] == []  # caught up: nothing new, the same cursor back
    assert mem.events(since=cursor)["next"] == cursor
    only = mem.events(types=["purge"])["events"]
    assert [e["memory_id"] for e in only] == [third.id]
    for bad, field in (({"since": -1}, "since"), ({"since": "1"}, "since"), ({"limit": 0}, "limit"),
                       ({"types": ["access"]}, "types")):
        with pytest.raises(InvalidInput) as caught:
            mem.events(**bad)
        assert caught.value.field == field


def test_serve_metrics_after_real_traffic(tmp_path: Path) -> None:
    t = T0.timestamp()
    with TestClient(create_app(tmp_path / "mem.db", embedder=HashEmbedder())) as http:
        ids = []
        for n, text in enumerate(("I am allergic to shrimp", "ok thanks", "The staging database is db-7",
                                  "I prefer dark mode")):
            created = http.post("/v1/memories", json={"text": text, "user_id": "alice", "at": t + n})
            assert created.status_code == 201
            ids.append(created.json()["records"][0]["id"])
        assert http.post("/v1/search", json={"query": "allergy", "user_id": "alice"}).status_code == 200
        assert http.delete(f"/v1/memories/{ids[3]}").status_code == 200
        assert http.get(f"/v1/memories/{ids[0]}").status_code == 200
        assert http.get("/v1/nothing-here").status_code == 404
        swept = http.post("/v1/sweep", json={"at": t + 200 * DAY}).json()
        moved = {(c["from"], c["to"]) for c in swept["changes"]}
        assert moved  # the acknowledgement at least has faded in 200 days

        feed = http.get("/v1/events", params={"since": 0, "limit": 1000, "types": "tier,purge"}).json()
        assert len(feed["events"]) == 1 + len(swept["changes"])
        assert http.get("/v1/events", params={"since": -1}).status_code == 422

        scrape = samples(http.get("/metrics").text)
        stats = http.get("/v1/stats").json()
        for tier in ("hot", "warm", "cold", "trash"):
            assert value(scrape, "ebbing_records", tenant="default", tier=tier) == stats["by_tier"][tier]
        assert value(scrape, "ebbing_moves_total", tenant="default", **{"from": "hot", "to": "trash",
                                                                         "cause": "manual"}) == 1
        by_sweep = sum(v for (name, labels), v in scrape.items() if name == "ebbing_moves_total"
                       and dict(labels)["cause"] in ("retention", "priority"))
        assert by_sweep == len(swept["changes"])
        assert value(scrape, "ebbing_request_duration_seconds_count", route="/v1/memories", method="POST",
                     status="201") == 4
        assert value(scrape, "ebbing_request_duration_seconds_count", route="/v1/memories/{memory_id}",
                     method="GET", status="200") == 1
        assert value(scrape, "ebbing_request_duration_seconds_count", route="unmatched", method="GET",
                     status="404") == 1
        assert value(scrape, "ebbing_embed_batch_size_count") >= 5  # four adds and a search, at least
        assert value(scrape, "ebbing_embed_queue_wait_seconds_count") == value(scrape,
                                                                               "ebbing_embed_batch_size_count")

        again = samples(http.get("/metrics").text)  # a second scrape counts nothing twice
        assert value(again, "ebbing_moves_total", tenant="default", **{"from": "hot", "to": "trash",
                                                                        "cause": "manual"}) == 1

    with TestClient(create_app(tmp_path / "off.db", embedder=HashEmbedder(), metrics_on=False)) as http:
        assert http.get("/metrics").status_code == 404


def test_worker_metrics_over_http(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    with Memory(db, embedder=HashEmbedder(), tenant="acme", archive=tmp_path / "archive") as mem:
        for n in range(5):
            mem.add(f"ok {n}", user_id="u", at=T0.timestamp() + n, kind="temporary", priority="P2")
    keys = KeyStore(keys_path(db))
    keys.create("acme", "admin")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rounds: list[int] = []

    def open_memory(tenant: str) -> Memory:
        return Memory(db, embedder=HashEmbedder(), tenant=tenant, archive=tmp_path / "archive")

    runner = threading.Thread(target=work, args=(keys, open_memory, 2.0, 2), daemon=True,
                              kwargs={"metrics_port": port, "on_report": lambda tenant, report: rounds.append(1)})
    runner.start()
    try:
        deadline = time.monotonic() + 30
        while not rounds and time.monotonic() < deadline:
            time.sleep(0.05)
        scrape = samples(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text)
        assert value(scrape, "ebbing_sweep_duration_seconds_count", tenant="acme") == 1
        moved = value(scrape, "ebbing_sweep_records_moved_total", tenant="acme")
        assert moved == sum(v for (name, labels), v in scrape.items() if name == "ebbing_moves_total")
        assert moved == 5  # P2 turns unused for far longer than 30 days: all gone to the trash
        assert value(scrape, "ebbing_records", tenant="acme", tier="trash") == 5
    finally:
        runner.join(timeout=30)
        keys.close()
