"""Named schema migrations for the SQLite store, each applied once, in order, in its own transaction.

On-disk formats:
- times are epoch seconds (REAL, UTC);
- `vectors.vector` is the embedding as little-endian float32, `dimensions` numbers, unit length;
- `memories_fts.terms` holds the record's keyword terms (see `ebbing.recall.terms`) joined by spaces;
- `events.data` is a JSON object and never holds a record's text.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            tenant TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            session_id TEXT,
            text TEXT NOT NULL,
            kind TEXT NOT NULL,
            importance REAL NOT NULL,
            priority TEXT NOT NULL,
            pinned INTEGER NOT NULL DEFAULT 0,
            held INTEGER NOT NULL DEFAULT 0,
            tier TEXT NOT NULL DEFAULT 'hot',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_accessed_at REAL,
            access_count INTEGER NOT NULL DEFAULT 0,
            update_count INTEGER NOT NULL DEFAULT 0,
            metadata TEXT NOT NULL DEFAULT '{}',
            source_ids TEXT NOT NULL DEFAULT '[]',
            content_hash TEXT NOT NULL
        );
        CREATE INDEX memories_scope ON memories (tenant, user_id, tier);
        CREATE TABLE vectors (
            seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
            vector BLOB NOT NULL
        );
        CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, tokenize = 'unicode61 remove_diacritics 0');
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            at REAL NOT NULL,
            type TEXT NOT NULL,
            actor TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            data TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_memory ON events (memory_id, seq);
        """,
    ),
]


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations this file does not have yet; return their names."""
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    applied = []
    for name, script in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone() is None:
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("INSERT INTO migrations VALUES (?, datetime('now'))", (name,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
