"""The `memories` row layout of the PostgreSQL store and the SQL both the store (`postgres.py`) and the sweep
inside the database (`postgres_sweep.py`) build on: the columns, a row as a record, the sweep window's
condition and moving rows to the archive index. Kept apart so neither of the two imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from ebbing.model import Kind, MemoryRecord, Priority, Tier, when

Connection = psycopg.Connection[tuple[Any, ...]]
LIVE = "('hot', 'warm')"


def first_line(exc: BaseException) -> str:
    """A driver error's first line: the server's message, without its context lines and libpq's hints."""
    lines = str(exc).strip().splitlines()
    return lines[0].strip() if lines else type(exc).__name__

FIELDS = (
    "seq", "id", "tenant", "user_id", "agent_id", "session_id", "text", "kind", "importance", "priority", "pinned",
    "held", "security", "tier", "created_at", "updated_at", "last_accessed_at", "access_count", "update_count",
    "metadata", "source_ids", "content_hash", "expires_at", "source",
)
COLUMNS = ", ".join(f"m.{name}" for name in FIELDS)
VECTOR = len(FIELDS)
WRITABLE = FIELDS[1:]


def record_from_row(row: Sequence[Any], vector: np.ndarray | None = None) -> MemoryRecord:
    values = dict(zip(FIELDS, tuple(row)[: len(FIELDS)], strict=True))
    last = values["last_accessed_at"]
    return MemoryRecord(
        id=values["id"], text=values["text"], kind=Kind(values["kind"]), importance=values["importance"],
        priority=Priority(values["priority"]), created_at=when(values["created_at"]),
        updated_at=when(values["updated_at"]), tenant=values["tenant"], user_id=values["user_id"],
        agent_id=values["agent_id"], session_id=values["session_id"], pinned=bool(values["pinned"]),
        held=bool(values["held"]), security=bool(values["security"]),
        last_accessed_at=when(last) if last is not None else None, access_count=values["access_count"],
        update_count=values["update_count"], tier=Tier(values["tier"]), metadata=dict(values["metadata"]),
        source_ids=list(values["source_ids"]), content_hash=values["content_hash"],
        embedding=None if vector is None else np.asarray(vector, dtype=np.float32),
        expires_at=when(values["expires_at"]) if values["expires_at"] is not None else None,
        source=values["source"],
    )


def window_sql(window: tuple[int, int, int]) -> str:
    """Records whose jitter slot is in (low, high] of the period (wrapping around), as a literal condition
    (with `%%` for modulo: it goes into queries that take parameters)."""
    period, low, high = (int(v) for v in window)
    joiner = "AND" if low < high else "OR"
    return f"((jitter %% {period}) > {low} {joiner} (jitter %% {period}) <= {high})"


def archive_rows(conn: Connection, tenant: str, file: str, seqs: Sequence[int], at: float) -> None:
    """Index records in archive `file` and take them out of the live store (in the caller's transaction)."""
    keys = [int(s) for s in seqs]
    conn.execute(
        "INSERT INTO archive_index (tenant, id, seq, user_id, file, archived_at, kind, importance, priority, pinned, "
        "held, security, created_at, last_accessed_at, access_count, update_count, jitter, expires_at) SELECT "
        "tenant, id, seq, user_id, %s, %s, kind, importance, priority, pinned, held, security, created_at, "
        "last_accessed_at, access_count, update_count, jitter, expires_at FROM memories WHERE tenant = %s AND "
        f"seq = ANY(%s) AND tier IN {LIVE}",
        (file, at, tenant, keys))
    conn.execute("DELETE FROM memories WHERE tenant = %s AND seq = ANY(%s)", (tenant, keys))
    conn.execute("DELETE FROM archive_files WHERE file = %s", (file,))
