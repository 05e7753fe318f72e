"""The PostgreSQL store's own promises: its schema, the retention score in SQL, and concurrent sweep workers.

The behaviour both stores share (records, search, forgetting, the API) is tested once, parametrised over
`backend` (tests/conftest.py); this file holds what only the PostgreSQL store has.
"""

from __future__ import annotations

import multiprocessing
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pyarrow.parquet as pq
import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import StoreError
from ebbing.model import Event, Kind, MemoryRecord, Priority, Tier, new_id, when
from ebbing.retention.base import KINDS, PRIORITIES, RecordBatch
from ebbing.retention.composite import Composite
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.store.postgres import PostgresStore
from ebbing.store.postgres_schema import MIGRATIONS
from ebbing.store.postgres_sweep import placement_sql, retention_sql

from .conftest import T0
from .pg import retention_table

NOW = T0.timestamp() + 200 * DAY


def _random_rows(rng: np.random.Generator, count: int) -> list[tuple[Any, ...]]:
    """Retention columns spread over every branch: kinds, priorities, flags, unused and used records, new ones
    (protection), counts past the reinforcement cap and the update threshold."""
    rows = []
    for _ in range(count):
        created = NOW - float(rng.uniform(0, 400)) * DAY
        last = None if rng.random() < 0.3 else float(rng.uniform(created, NOW))
        rows.append((str(rng.choice([k.value for k in KINDS])), float(rng.choice([0.0, 0.3, 0.6, 0.9, 1.0])),
                     str(rng.choice([p.value for p in PRIORITIES], p=[0.1, 0.6, 0.3])), bool(rng.random() < 0.05),
                     bool(rng.random() < 0.05), bool(rng.random() < 0.2), created, last,
                     int(rng.choice([0, 1, 3, 20, 1000])), int(rng.choice([0, 2, 3, 9])),
                     # an explicit expiry on some: come (pinned and P0 ones lose their exemption), or still ahead
                     None if rng.random() < 0.8 else float(NOW + rng.uniform(-30, 30) * DAY)))
    return rows


@pytest.mark.parametrize("config", [
    RetentionConfig(),
    RetentionConfig(combine="importance"),
    RetentionConfig(combine="blend", archive_days=0.0, beta=0.0),
], ids=["decay", "importance", "blend"])
def test_the_sql_score_is_the_python_policies_score(pg_url: str, config: RetentionConfig) -> None:
    rows = _random_rows(np.random.default_rng(7), 3000)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        retention_table(conn, rows)
        score = retention_sql(config, NOW)
        found = conn.execute(f"SELECT {score}, {placement_sql(config, NOW, score)} FROM m ORDER BY n").fetchall()
    composite = Composite(config)
    batch = RecordBatch.from_rows(rows)
    expected = composite.score(batch, NOW)
    sql_scores = np.array([r[0] for r in found])
    np.testing.assert_allclose(sql_scores, expected, rtol=1e-12, atol=1e-15)
    assert np.array_equal(np.array([r[1] for r in found]), composite.placement(batch, NOW))
    assert len(set(composite.placement(batch, NOW).tolist())) == 4  # the records do land in every tier


def test_the_schema_leads_every_key_with_the_tenant(pg_url: str) -> None:
    PostgresStore(pg_url, dimensions=8).close()
    store = PostgresStore(pg_url, dimensions=8)  # reopening applies nothing twice
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM ebbing_migrations ORDER BY applied_at, name")]
        indexes = conn.execute("SELECT tablename, indexname, indexdef FROM pg_indexes "
                               "WHERE schemaname = current_schema()").fetchall()
    assert names == [name for name, _ in MIGRATIONS] + ["vectors_8"]
    tenant_data = {"memories", "events", "archive_index", "facts", "secrets", "sweep_runs", "sweep_chunks"}
    for table, name, definition in indexes:
        if table not in tenant_data or name == "memories_key":  # memories_key: the protocol's keys carry no tenant
            continue
        if "USING btree" in definition:
            assert "(tenant," in definition, definition
        else:  # single-column access methods: partial indexes over the live tiers
            assert ("USING hnsw (embedding vector_cosine_ops)" in definition or "USING gin (terms)" in definition)
            assert "WHERE (trashed_at IS NULL)" in definition


def test_memory_picks_the_store_from_the_location(pg_url: str, tmp_path: Path) -> None:
    with Memory(pg_url, embedder=HashEmbedder(), archive=tmp_path / "a") as mem:
        assert isinstance(mem.store, PostgresStore)
        record = mem.add("数据库连接池的大小是 50", user_id="u", at=T0).records[0]
        assert [h.record.id for h in mem.search("连接池", user_id="u", at=T0)] == [record.id]
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
        Memory("postgresql://nobody@127.0.0.1:1/none", embedder=HashEmbedder())


def _records(count: int) -> list[MemoryRecord]:
    """Records of one tenant whose ages spread them over every move a sweep at NOW makes."""
    rng = np.random.default_rng(3)
    out = []
    for i in range(count):
        created = NOW - float(rng.uniform(0, 150)) * DAY
        kind = [Kind.FACT, Kind.EPISODE, Kind.TEMPORARY][i % 3]
        priority = [Priority.P1, Priority.P2][i % 2]
        vector = rng.standard_normal(HashEmbedder().dimensions).astype(np.float32)
        out.append(MemoryRecord(
            id=new_id(created), text=f"record {i}", kind=kind, importance=0.6, priority=priority,
            created_at=when(created), updated_at=when(created), tenant="acme", user_id=f"u{i % 5}",
            content_hash=f"h{i}", embedding=vector / np.linalg.norm(vector)))
    return out


def _worker(url: str, archive: str, start: Any, out: Any) -> None:
    with Memory(url, embedder=HashEmbedder(), tenant="acme", archive=archive, actor="worker") as mem:
        start.wait()
        report = mem.sweep(at=NOW, batch_size=50)
        out.put((report.evaluated, [(c.id, c.target.value) for c in report.changes]))


def test_four_workers_sweep_one_tenant_without_moving_a_record_twice(pg_url: str, tmp_path: Path) -> None:
    records = _records(1200)
    archive = tmp_path / "archive"
    with Memory(pg_url, embedder=HashEmbedder(), tenant="acme", archive=archive) as mem:
        mem.store.insert(records, [["record", str(i)] for i in range(len(records))],
                         [Event(r.id, "add", r.created_at, "test") for r in records])
        expected = {c.id: c.target.value for c in mem.sweep(at=NOW, dry_run=True).changes}
    assert Counter(expected.values()).keys() == {"warm", "cold", "trash"}

    context = multiprocessing.get_context("fork")
    start, out = context.Barrier(4), context.Queue()
    workers = [context.Process(target=_worker, args=(pg_url, str(archive), start, out)) for _ in range(4)]
    for worker in workers:
        worker.start()
    results = [out.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0

    moved = [change for _, changes in results for change in changes]
    assert sorted(moved) == sorted(expected.items())  # every move made once, by exactly one worker
    assert sum(1 for _, changes in results if changes) >= 2  # the work was in fact shared

    with psycopg.connect(pg_url, autocommit=True) as conn:
        tier_events = Counter(r[0] for r in conn.execute("SELECT memory_id FROM events WHERE type = 'tier'"))
        live = dict(conn.execute("SELECT id, tier FROM memories WHERE tenant = 'acme'").fetchall())
        cold = {r[0] for r in conn.execute("SELECT id FROM archive_index WHERE tenant = 'acme'")}
        pending = conn.execute("SELECT count(*) FROM archive_files").fetchone()
        chunks = conn.execute("SELECT count(*), sum(evaluated), bool_and(done) FROM sweep_chunks").fetchone()
    assert chunks is not None and chunks[0] > 4 and chunks[1:] == (len(records), True)  # each record scored once
    assert max(tier_events.values()) == 1 and set(tier_events) == set(expected)  # no record moved twice
    assert set(live) | cold == {r.id for r in records} and not set(live) & cold  # none lost, none in two places
    assert cold == {i for i, to in expected.items() if to == "cold"}
    assert all(live[i] == to for i, to in expected.items() if to != "cold")
    parquet = [row for f in archive.rglob("*.parquet") for row in pq.read_table(f, columns=["id"])["id"].to_pylist()]
    assert sorted(parquet) == sorted(cold) and pending == (0,)


def test_a_dead_workers_file_is_cleaned_up_but_a_live_workers_is_not(pg_url: str, tmp_path: Path) -> None:
    with Memory(pg_url, embedder=HashEmbedder(), archive=tmp_path / "a") as mem, \
            Memory(pg_url, embedder=HashEmbedder(), archive=tmp_path / "a") as other:
        other.store.intent("tenant=default/month=2026-01/part-live.parquet", "writing")
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("INSERT INTO archive_files VALUES ('tenant=default/month=2026-01/part-dead.parquet', "
                         "'writing', 999999)")
        assert [file for file, _ in mem.store.intents()] == ["tenant=default/month=2026-01/part-dead.parquet"]
        mem.sweep(at=T0)
        assert [file for file, _ in other.store.intents()] == ["tenant=default/month=2026-01/part-live.parquet"]


def test_a_record_moved_by_hand_is_not_moved_again_by_the_sweep(pg_url: str, tmp_path: Path) -> None:
    with Memory(pg_url, embedder=HashEmbedder(), archive=tmp_path / "a") as mem:
        note = mem.add("remind me to call the bank", user_id="u", kind="temporary", at=T0).records[0]
        mem.forget(note.id, at=T0)
        report = mem.sweep(at=T0.timestamp() + 10 * DAY)
        assert report.changes == [] and mem.get(note.id).tier is Tier.TRASH
