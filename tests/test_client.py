"""`ebbing.client.Client` against a real `ebbing serve` process: Memory's methods and values over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from ebbing.bench.serve import running_server
from ebbing.client import ApiError, Client
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import Conflict, InvalidInput, NotFound
from ebbing.memory import Memory
from ebbing.model import Event, Hit, MemoryRecord, Tier
from ebbing.recall.context import Context
from ebbing.server.keys import KeyStore, keys_path

T0 = "2026-01-05T09:00:00+00:00"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str, str]]:
    db = tmp_path_factory.mktemp("client") / "mem.db"
    store = KeyStore(keys_path(db))
    agent, admin = store.create("team", "agent")[0], store.create("team", "admin")[0]
    store.close()
    with running_server(db, args=("--sweep-every", "0")) as url:
        yield url, db, agent, admin


@pytest.fixture
def mem(served: tuple[str, Path, str, str]) -> Iterator[Client]:
    url, _, agent, _ = served
    with Client(url, agent) as client:
        yield client


def test_client_mirrors_memory(mem: Client, served: tuple[str, Path, str, str]) -> None:
    url, db, _, admin = served
    assert mem.healthy()
    added = mem.add("Dana prefers window seats on long flights", user_id="dana", at=T0)
    record = added.records[0]
    assert isinstance(record, MemoryRecord) and record.tenant == "team" and record.user_id == "dana"
    assert isinstance(added.events[0], Event) and added.events[0].type == "add"
    with Memory(db, tenant="team", embedder=HashEmbedder()) as local:  # the same record, read directly
        assert local.get(record.id) == mem.get(record.id)

    hits = mem.search("window seats", user_id="dana", limit=3)
    assert isinstance(hits[0], Hit) and hits[0].record.id == record.id and hits[0].score > 0
    context = mem.context("where does Dana like to sit?", user_id="dana", budget_tokens=200)
    assert isinstance(context, Context) and "window seats" in context.text and context.records[0].id == record.id

    assert mem.update(record.id, "Dana prefers aisle seats on long flights", at=T0).update_count == 1
    assert mem.pin(record.id).pinned and not mem.unpin(record.id).pinned
    assert mem.forget(record.id, reason="asked to").tier is Tier.TRASH
    assert [f["memory_id"] for f in mem.forgotten()] == [record.id]
    assert mem.restore(record.id).tier is Tier.WARM
    assert {"add", "access", "update", "pin", "unpin", "tier"} <= {e.type for e in mem.history(record.id)}
    assert 0.0 <= mem.explain(record.id)["score"] <= 1.0
    assert mem.stats(user_id="dana")
    assert [r["id"] for r in mem.export(user_id="dana")] == [record.id]
    mem.add("My database timeout is 30 seconds", user_id="dana", at=T0)
    mem.add("My database timeout is 60 seconds now", user_id="dana", at="2026-03-01T09:00:00Z")
    chain = mem.timeline("dana", "database timeout")
    assert chain[-1]["current"] is True and chain[-1]["value"].startswith("60")

    with Client(url, admin) as boss:
        assert boss.hold(record.id).held
        with pytest.raises(Conflict):
            boss.purge(record.id)
        assert not boss.release(record.id).held
        assert boss.sweep(dry_run=True)["dry_run"] is True
        boss.purge(record.id)
        assert boss.purge_user("dana") == 2
    with pytest.raises(NotFound):
        mem.get(record.id)


def test_client_raises_the_library_errors(mem: Client, served: tuple[str, Path, str, str]) -> None:
    url = served[0]
    with pytest.raises(InvalidInput) as bad:
        mem.search("x", limit=0)
    assert bad.value.field == "limit"
    with pytest.raises(InvalidInput) as bad:
        mem.add("   ")
    assert bad.value.field == "text"
    with pytest.raises(NotFound):
        mem.get("01KAAAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(NotFound):
        mem.pin("no/such id")  # quoted into the path: still just not found
    with pytest.raises(ApiError) as denied:
        mem.sweep()
    assert denied.value.status == 403 and denied.value.type == "forbidden"
    with Client(url, "ebk_000000000000_wrong") as stranger, pytest.raises(ApiError) as refused:
        stranger.stats()
    assert refused.value.status == 401


def test_a_burst_for_one_tenant_queues_and_completes(served: tuple[str, Path, str, str]) -> None:
    """More concurrent requests for one tenant than the server has worker threads (40): all answered."""
    url, _, agent, _ = served
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {agent}"}, limits=limits,
                      timeout=120) as http, ThreadPoolExecutor(max_workers=60) as pool:
        def call(n: int) -> int:
            if n % 3 == 0:
                return http.post("/v1/memories", json={"text": f"Burst note {n} on port {9000 + n}",
                                                       "user_id": "burst"}).status_code
            return http.post("/v1/search", json={"query": f"burst note {n}", "user_id": "burst"}).status_code

        statuses = list(pool.map(call, range(60)))
        assert sorted(set(statuses)) == [200, 201] and statuses.count(201) == 20
        assert len(http.get("/v1/export", params={"user_id": "burst"}).json()["records"]) == 20
