"""The embedded default store: one SQLite file in WAL mode with an FTS5 keyword index and vectors.

A record is three rows written in one transaction: `memories` (the record), `memories_fts` (its
keyword terms, rowid = seq) and `vectors` (its embedding). Only live tiers (hot, warm) sit in the
keyword and vector indexes. Deleted bytes are zeroed (`secure_delete`), so erased text does not
linger in free pages.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ebbing.errors import StoreError
from ebbing.model import LIVE_TIERS, Event, Kind, MemoryRecord, Priority, Scope, Tier, when
from ebbing.recall.terms import match_expression
from ebbing.store.base import Candidate
from ebbing.store.filters import compile_sqlite
from ebbing.store.migrations import migrate
from ebbing.store.vectors import ScopeVectors

_COLUMNS = (
    "seq, id, tenant, user_id, agent_id, session_id, text, kind, importance, priority, pinned, held, tier, "
    "created_at, updated_at, last_accessed_at, access_count, metadata, source_ids, content_hash"
)
_LIVE = "('" + "', '".join(t.value for t in LIVE_TIERS) + "')"


def _record(row: sqlite3.Row | tuple[Any, ...], vector: bytes | None = None) -> MemoryRecord:
    (_, id_, tenant, user_id, agent_id, session_id, text, kind, importance, priority, pinned, held, tier,
     created_at, updated_at, last_accessed_at, access_count, metadata, source_ids, chash) = tuple(row)[:20]
    return MemoryRecord(
        id=id_, text=text, kind=Kind(kind), importance=importance, priority=Priority(priority),
        created_at=when(created_at), updated_at=when(updated_at), tenant=tenant, user_id=user_id,
        agent_id=agent_id, session_id=session_id, pinned=bool(pinned), held=bool(held),
        last_accessed_at=when(last_accessed_at) if last_accessed_at is not None else None,
        access_count=access_count, tier=Tier(tier), metadata=json.loads(metadata),
        source_ids=json.loads(source_ids), content_hash=chash,
        embedding=np.frombuffer(vector, dtype="<f4").copy() if vector is not None else None,
    )


def _row(record: MemoryRecord) -> tuple[Any, ...]:
    return (
        record.id, record.tenant, record.user_id, record.agent_id, record.session_id, record.text,
        record.kind.value, record.importance, record.priority.value, int(record.pinned), int(record.held),
        record.tier.value, record.created_at.timestamp(), record.updated_at.timestamp(),
        record.last_accessed_at.timestamp() if record.last_accessed_at else None, record.access_count,
        json.dumps(record.metadata, ensure_ascii=False), json.dumps(record.source_ids), record.content_hash,
    )


def _vector_blob(record: MemoryRecord) -> bytes:
    if record.embedding is None:
        raise StoreError(f"record {record.id} has no embedding")
    return np.asarray(record.embedding, dtype="<f4").tobytes()


def _scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    sql = f"m.tenant = ? AND m.user_id IS ? AND m.tier IN {_LIVE}"
    params: list[Any] = [scope.tenant, scope.user_id]
    for column in ("agent_id", "session_id"):
        value = getattr(scope, column)
        if value is not None:
            sql += f" AND m.{column} = ?"
            params.append(value)
    return sql, params


class SQLiteStore:
    def __init__(self, path: str | Path, *, max_term_docs: int = 500) -> None:
        self.path = Path(path)
        self.max_term_docs = max_term_docs
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            # synchronous=NORMAL in WAL mode: a killed process loses nothing committed; a power cut may
            # lose the last commits but never corrupts the file. FULL would fsync on every search.
            for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON",
                           "secure_delete = ON", "busy_timeout = 30000"):
                self._conn.execute(f"PRAGMA {pragma}")
            migrate(self._conn)
            # A second connection for keyword reads, so a search can rank keywords while the vector scan
            # runs on the other core (WAL lets readers and the writer proceed side by side).
            self._reader = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            self._reader.execute("PRAGMA busy_timeout = 30000")
            self._reader.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_vocab USING fts5vocab(main, memories_fts, 'row')")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open {self.path} as an Ebbing store: {exc}") from None
        self._lock = threading.RLock()
        self._reader_lock = threading.Lock()
        self._scan_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ebbing-scan")
        self._vectors: dict[tuple[str, str | None], ScopeVectors] = {}
        self._data_version = self._conn.execute("PRAGMA data_version").fetchone()[0]

    # -- plumbing ------------------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _fresh(self) -> None:
        """Drop cached vectors when another connection has committed since we last looked."""
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            self._data_version = version
            self._vectors.clear()

    def _insert_events(self, conn: sqlite3.Connection, tenant: str, events: Sequence[Event]) -> None:
        conn.executemany(
            "INSERT INTO events (memory_id, tenant, at, type, actor, reason, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(e.memory_id, tenant, e.at.timestamp(), e.type, e.actor, e.reason,
              json.dumps(e.data, ensure_ascii=False)) for e in events],
        )

    # -- writes --------------------------------------------------------------------------------------

    def insert(self, records: Sequence[MemoryRecord], terms: Sequence[list[str]], events: Sequence[Event]) -> None:
        if not records:
            return
        placeholders = ", ".join("?" * 19)
        tenant_of = {r.id: r.tenant for r in records}
        added: list[tuple[MemoryRecord, int]] = []
        with self._write() as conn:
            self._fresh()
            if len(records) != len(terms):
                raise StoreError("insert needs one list of terms per record")
            for record in records:
                cursor = conn.execute(
                    "INSERT INTO memories (id, tenant, user_id, agent_id, session_id, text, kind, importance, "
                    "priority, pinned, held, tier, created_at, updated_at, last_accessed_at, access_count, "
                    f"metadata, source_ids, content_hash) VALUES ({placeholders})",
                    _row(record),
                )
                assert cursor.lastrowid is not None
                added.append((record, cursor.lastrowid))
            conn.executemany("INSERT INTO vectors (seq, vector) VALUES (?, ?)",
                             [(seq, _vector_blob(record)) for record, seq in added])
            conn.executemany("INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)",
                             [(seq, " ".join(words)) for (_, seq), words in zip(added, terms, strict=True)])
            by_tenant: dict[str, list[Event]] = {}
            for event in events:
                by_tenant.setdefault(tenant_of[event.memory_id], []).append(event)
            for tenant, tenant_events in by_tenant.items():
                self._insert_events(conn, tenant, tenant_events)
        for record, seq in added:  # keep loaded scopes in step with what we just committed
            cached = self._vectors.get((record.tenant, record.user_id))
            if cached is not None and record.tier in LIVE_TIERS:
                assert record.embedding is not None
                cached.append([seq], record.embedding[None, :])

    def replace(self, record: MemoryRecord, terms: list[str] | None, events: Sequence[Event]) -> None:
        row = _row(record)
        with self._write() as conn:
            self._fresh()
            found = conn.execute("SELECT seq FROM memories WHERE id = ? AND +tenant = ?",
                                 (record.id, record.tenant)).fetchone()
            if found is None:
                raise StoreError(f"record {record.id} vanished during the update")
            seq = found[0]
            conn.execute(
                "UPDATE memories SET text = ?, kind = ?, importance = ?, priority = ?, pinned = ?, held = ?, "
                "tier = ?, updated_at = ?, last_accessed_at = ?, access_count = ?, metadata = ?, "
                "source_ids = ?, content_hash = ?, update_count = update_count + ? WHERE seq = ?",
                (*row[5:13], *row[14:19], int(terms is not None), seq),
            )
            if terms is not None:
                conn.execute("UPDATE vectors SET vector = ? WHERE seq = ?", (_vector_blob(record), seq))
                conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
                conn.execute("INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)", (seq, " ".join(terms)))
            self._insert_events(conn, record.tenant, events)
        if terms is not None:
            self._vectors.pop((record.tenant, record.user_id), None)

    def record_access(self, tenant: str, ids: Sequence[str], at: float, window: float, actor: str) -> set[str]:
        if not ids:
            return set()
        marks = ", ".join("?" * len(ids))
        with self._write() as conn:
            rows = conn.execute(
                f"SELECT id, last_accessed_at, access_count FROM memories WHERE id IN ({marks}) AND +tenant = ?",
                (*ids, tenant),
            ).fetchall()
            due = [(id_, count + 1) for id_, last, count in rows if last is None or at - last >= window]
            conn.executemany(
                "UPDATE memories SET access_count = ?, last_accessed_at = ? WHERE id = ? AND +tenant = ?",
                [(count, at, id_, tenant) for id_, count in due],
            )
            self._insert_events(conn, tenant, [
                Event(id_, "access", when(at), actor, "returned by search", {"access_count": count})
                for id_, count in due
            ])
        return {id_ for id_, _ in due}

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                         (key, value))

    # -- reads ---------------------------------------------------------------------------------------

    def get(self, tenant: str, memory_id: str) -> MemoryRecord | None:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS.replace('seq, ', 'm.seq, ')}, v.vector FROM memories m "
                "LEFT JOIN vectors v ON v.seq = m.seq WHERE m.id = ? AND +m.tenant = ?",
                (memory_id, tenant),
            ).fetchone()
        return None if row is None else _record(row, row[20])

    def keyword_search(self, scope: Scope, terms: Sequence[str], limit: int, filters: dict[str, Any] | None
                       ) -> list[int]:
        with self._reader_lock:
            usable = self._selective(terms)
            if not usable:
                return []
            where, params = _scope_sql(scope)
            extra, extra_params = compile_sqlite(filters)
            rows = self._reader.execute(
                "SELECT m.seq FROM memories_fts f JOIN memories m ON m.seq = f.rowid "
                f"WHERE memories_fts MATCH ? AND {where}{extra} ORDER BY bm25(memories_fts) LIMIT ?",
                (match_expression(usable), *params, *extra_params, limit),
            ).fetchall()
        return [row[0] for row in rows]

    def _selective(self, terms: Sequence[str]) -> list[str]:
        """The terms worth matching: ranking every record that holds a very common term costs time in
        proportion to how many hold it, and such a term tells little anyway."""
        if not terms:
            return []
        marks = ", ".join("?" * len(terms))
        counts = dict(self._reader.execute(
            f"SELECT term, doc FROM temp.memories_vocab WHERE term IN ({marks})", list(terms)).fetchall())
        return [t for t in terms if t in counts and counts[t] <= self.max_term_docs]

    def vector_search(self, scope: Scope, vector: np.ndarray, limit: int, filters: dict[str, Any] | None) -> list[int]:
        with self._lock:
            self._fresh()
            key = (scope.tenant, scope.user_id)
            cached = self._vectors.get(key)
            if cached is None:
                cached = self._vectors[key] = self._load_vectors(scope)
            allowed = None
            if filters or scope.agent_id is not None or scope.session_id is not None:
                where, params = _scope_sql(scope)
                extra, extra_params = compile_sqlite(filters)
                allowed = np.fromiter(
                    (row[0] for row in self._conn.execute(f"SELECT m.seq FROM memories m WHERE {where}{extra}",
                                                          (*params, *extra_params))),
                    dtype=np.int64,
                )
        return cached.nearest(vector, limit, allowed, self._scan_pool)  # outside the lock: needs no connection

    def _load_vectors(self, scope: Scope) -> ScopeVectors:
        where, params = _scope_sql(Scope(scope.tenant, scope.user_id))
        loaded = ScopeVectors()
        cursor = self._conn.execute(
            f"SELECT m.seq, v.vector FROM memories m JOIN vectors v ON v.seq = m.seq WHERE {where}", params)
        while rows := cursor.fetchmany(4096):  # in pages: never the whole scope as Python objects at once
            keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            loaded.append(keys, np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1))
        return loaded

    def candidates(self, keys: Sequence[int]) -> list[Candidate]:
        if not keys:
            return []
        marks = ", ".join("?" * len(keys))
        with self._lock:
            rows = self._conn.execute(
                "SELECT m.seq, m.text, f.terms, v.vector FROM memories m "
                "JOIN vectors v ON v.seq = m.seq JOIN memories_fts f ON f.rowid = m.seq "
                f"WHERE m.seq IN ({marks})",
                list(keys),
            ).fetchall()
        return [Candidate(row[0], row[1], row[2].split(), np.frombuffer(row[3], dtype="<f4")) for row in rows]

    def fetch(self, keys: Sequence[int]) -> list[MemoryRecord]:
        if not keys:
            return []
        marks = ", ".join("?" * len(keys))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS.replace('seq, ', 'm.seq, ')}, v.vector FROM memories m "
                f"LEFT JOIN vectors v ON v.seq = m.seq WHERE m.seq IN ({marks})",
                list(keys),
            ).fetchall()
        found = {row[0]: _record(row, row[20]) for row in rows}
        return [found[key] for key in keys if key in found]

    def history(self, tenant: str, memory_id: str) -> list[Event]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, memory_id, type, at, actor, reason, data FROM events "
                "WHERE memory_id = ? AND tenant = ? ORDER BY seq",
                (memory_id, tenant),
            ).fetchall()
        return [Event(memory_id=r[1], type=r[2], at=when(r[3]), actor=r[4], reason=r[5], data=json.loads(r[6]),
                      seq=r[0]) for r in rows]

    def stats(self, tenant: str, user_id: str | None) -> dict[str, Any]:
        where, params = "tenant = ?", [tenant]
        if user_id is not None:
            where += " AND user_id = ?"
            params.append(user_id)
        with self._lock:
            by_tier = dict(self._conn.execute(
                f"SELECT tier, count(*) FROM memories WHERE {where} GROUP BY tier", params).fetchall())
            by_kind = dict(self._conn.execute(
                f"SELECT kind, count(*) FROM memories WHERE {where} GROUP BY kind", params).fetchall())
        return {"total": sum(by_tier.values()), "by_tier": {t.value: by_tier.get(t.value, 0) for t in Tier},
                "by_kind": {k.value: by_kind.get(k.value, 0) for k in Kind}}

    def scan(self, tenant: str, user_id: str | None) -> Iterator[MemoryRecord]:
        where, params = "m.tenant = ?", [tenant]
        if user_id is not None:
            where += " AND m.user_id = ?"
            params.append(user_id)
        last = 0
        while True:  # page by seq so a long export holds no lock and no giant result set
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT {_COLUMNS.replace('seq, ', 'm.seq, ')}, v.vector FROM memories m "
                    f"LEFT JOIN vectors v ON v.seq = m.seq WHERE {where} AND m.seq > ? ORDER BY m.seq LIMIT 500",
                    (*params, last),
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield _record(row, row[20])
            last = rows[-1][0]

    def close(self) -> None:
        self._scan_pool.shutdown(wait=True)
        with self._lock, self._reader_lock:
            self._vectors.clear()
            self._reader.close()
            self._conn.close()
