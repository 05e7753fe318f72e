"""The SQLite store's documented on-disk format and housekeeping."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.store.migrations import MIGRATIONS
from ebbing.store.sqlite import SQLiteStore

from .conftest import T0


def test_file_layout_is_as_documented(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder()) as mem:
        record = mem.add("数据库连接池的大小是 50", user_id="u", at=T0).records[0]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert [r[0] for r in conn.execute("SELECT name FROM migrations")] == [name for name, _ in MIGRATIONS]
    seq, created = conn.execute("SELECT seq, created_at FROM memories WHERE id = ?", (record.id,)).fetchone()
    assert created == T0.timestamp()
    blob = conn.execute("SELECT vector FROM vectors WHERE seq = ?", (seq,)).fetchone()[0]
    assert record.embedding is not None
    assert np.array_equal(np.frombuffer(blob, dtype="<f4"), record.embedding)
    indexed = conn.execute("SELECT terms FROM memories_fts WHERE rowid = ?", (seq,)).fetchone()[0]
    assert {"数据库", "连接池", "50"} <= set(indexed.split())
    assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH '\"连接池\"'").fetchone()[0] == 1


def test_reopening_applies_no_migration_twice(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "m.db").close()
    store = SQLiteStore(tmp_path / "m.db")
    store.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    assert conn.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(MIGRATIONS)


def test_the_audit_log_never_holds_text(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder()) as mem:
        record = mem.add("the launch code is tangerine", user_id="u", at=T0).records[0]
        mem.update(record.id, "the launch code is grapefruit", at=T0)
        mem.search("launch code", user_id="u", at=T0)
    rows = sqlite3.connect(path).execute("SELECT type, reason, data FROM events").fetchall()
    assert {r[0] for r in rows} == {"add", "update", "access"}
    assert not any("tangerine" in str(r) or "grapefruit" in str(r) for r in rows)
