"""The embedded default store: one SQLite file in WAL mode with an FTS5 keyword index and vectors.

A record is three rows written in one transaction: `memories` (the record), `memories_fts` (its
keyword terms, rowid = seq) and `vectors` (its embedding). Only live tiers (hot, warm) sit in the
keyword and vector indexes. Deleted bytes are zeroed (`secure_delete`), so erased text does not
linger in free pages.

SQLite's own exceptions never leave the store: every public method turns a `sqlite3.Error` into a one-line
`StoreError` saying what failed and what to do (`_driver_errors`), marked `transient` when trying again
shortly may work (a lock held past the busy timeout, an I/O error).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from ebbing.errors import ReadOnly, StoreError
from ebbing.model import LIVE_TIERS, Event, Kind, MemoryRecord, Priority, Scope, Tier, when
from ebbing.retention.base import RETENTION_COLUMNS, RecordBatch
from ebbing.store import files
from ebbing.store.base import Candidate, Closing, FactRow, FullStore, ReviewRow, SealedSecret, SweepRows
from ebbing.store.filters import compile_sqlite
from ebbing.store.graph import ScopeGraph
from ebbing.store.migrations import MIGRATIONS, SCOPE_TOKEN, migrate
from ebbing.store.reviews import COLUMNS as REVIEW_COLUMNS
from ebbing.store.reviews import review_from, review_values
from ebbing.store.scope_index import ScopeIndex
from ebbing.store.sqlite_graphs import SQLiteGraphs
from ebbing.store.vectors import ScopeVectors
from ebbing.text.terms import match_expression

_FIELDS = (
    "seq", "id", "tenant", "user_id", "agent_id", "session_id", "text", "kind", "importance", "priority", "pinned",
    "held", "security", "tier", "created_at", "updated_at", "last_accessed_at", "access_count", "update_count",
    "metadata", "source_ids", "content_hash", "expires_at", "source",
)
_COLUMNS = ", ".join(f"m.{name}" for name in _FIELDS)
_VECTOR = len(_FIELDS)  # index of the vector blob after the record's columns
_LIVE = "('" + "', '".join(t.value for t in LIVE_TIERS) + "')"
# A scope with this many live records searches an HNSW graph instead of scanning: `ebbing bench graph` measured
# the scan at ~0.05 ms per 1,000 records and the graph at 2-4 ms near 100k (2026-12-02, runs vary), so the graph
# wins from about 80k.
GRAPH_FROM = 80_000
# From this many live vectors in a scope, a search reads its keywords on another thread beside the vector scan.
PARALLEL_FROM = 5_000
_WRITABLE = _FIELDS[1:]  # everything but seq, in insert order


def _record(row: sqlite3.Row | tuple[Any, ...], vector: bytes | None = None) -> MemoryRecord:
    values = dict(zip(_FIELDS, tuple(row)[: len(_FIELDS)], strict=True))
    last = values["last_accessed_at"]
    return MemoryRecord(
        id=values["id"], text=values["text"], kind=Kind(values["kind"]), importance=values["importance"],
        priority=Priority(values["priority"]), created_at=when(values["created_at"]),
        updated_at=when(values["updated_at"]), tenant=values["tenant"], user_id=values["user_id"],
        agent_id=values["agent_id"], session_id=values["session_id"], pinned=bool(values["pinned"]),
        held=bool(values["held"]), security=bool(values["security"]),
        last_accessed_at=when(last) if last is not None else None, access_count=values["access_count"],
        update_count=values["update_count"], tier=Tier(values["tier"]), metadata=json.loads(values["metadata"]),
        source_ids=json.loads(values["source_ids"]), content_hash=values["content_hash"],
        embedding=np.frombuffer(vector, dtype="<f4").copy() if vector is not None else None,
        expires_at=when(values["expires_at"]) if values["expires_at"] is not None else None,
        source=values["source"],
    )


def _row(record: MemoryRecord) -> tuple[Any, ...]:
    """The record's values in `_WRITABLE` order."""
    return (
        record.id, record.tenant, record.user_id, record.agent_id, record.session_id, record.text,
        record.kind.value, record.importance, record.priority.value, int(record.pinned), int(record.held),
        int(record.security), record.tier.value, record.created_at.timestamp(), record.updated_at.timestamp(),
        record.last_accessed_at.timestamp() if record.last_accessed_at else None, record.access_count,
        record.update_count, json.dumps(record.metadata, ensure_ascii=False), json.dumps(record.source_ids),
        record.content_hash, record.expires_at.timestamp() if record.expires_at else None, record.source,
    )


def jitter(memory_id: str) -> int:
    """A stable 31-bit hash of the id: which slot of a spread-out sweep the record falls in."""
    return int.from_bytes(hashlib.blake2b(memory_id.encode(), digest_size=4).digest(), "little") & 0x7FFFFFFF


def _vector_blob(record: MemoryRecord) -> bytes:
    if record.embedding is None:
        raise StoreError(f"record {record.id} has no embedding")
    return np.asarray(record.embedding, dtype="<f4").tobytes()


# What a failure of SQLite means for the caller, by primary result code (the low byte of the extended one): what
# failed, what to do, and whether trying again shortly may work. The file's path is left out: REST clients read
# these messages too, and the server's folders are none of their business.
_FAILURES: dict[int, tuple[str, str, bool]] = {
    sqlite3.SQLITE_BUSY: ("the store is locked by another process", "try again shortly", True),
    sqlite3.SQLITE_LOCKED: ("the store is locked by another connection", "try again shortly", True),
    sqlite3.SQLITE_PROTOCOL: ("the store's lock could not be taken", "try again shortly", True),
    sqlite3.SQLITE_IOERR: ("the store's file could not be read or written", "check the disk, then try again", True),
    sqlite3.SQLITE_FULL: ("the disk holding the store is full", "free some space, then try again", False),
    sqlite3.SQLITE_READONLY: ("the store's file can no longer be written",
                              "check that it is still in place and writable, then open it again", False),
    sqlite3.SQLITE_CORRUPT: ("the store's file is damaged", "restore it from a backup", False),
    sqlite3.SQLITE_NOTADB: ("the store's file is damaged", "restore it from a backup", False),
}
_OTHER_FAILURE = ("the store could not finish the call",
                  "try again, and if it keeps failing check the file with PRAGMA integrity_check", False)


def _failure(exc: sqlite3.Error) -> tuple[str, str, bool]:
    code = getattr(exc, "sqlite_errorcode", None)  # absent on the module's own errors (a closed connection)
    return _OTHER_FAILURE if code is None else _FAILURES.get(code & 0xFF, _OTHER_FAILURE)


def _store_error(exc: sqlite3.Error) -> StoreError:
    detail = str(exc).strip() or type(exc).__name__
    if isinstance(exc, sqlite3.IntegrityError):  # the engine broke one of the schema's rules: a bug, not an outage
        return StoreError(f"the store refused a change that breaks its rules ({detail}): nothing was changed; "
                          "this is a bug in Ebbing, please report it")
    failed, advice, transient = _failure(exc)
    return StoreError(f"{failed} ({detail}): {advice}", transient=transient)


@contextmanager
def _driver_errors() -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise _store_error(exc) from None  # users see one line; the driver's exception stays in __context__


_Method = TypeVar("_Method", bound=Callable[..., Any])
_Class = TypeVar("_Class", bound=type)


def _translated(method: _Method) -> _Method:
    """`method` raising a `StoreError` where it raised a `sqlite3.Error` (a generator: while it is read)."""
    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def generator(*args: Any, **kwargs: Any) -> Iterator[Any]:
            with _driver_errors():
                yield from method(*args, **kwargs)
        return cast(_Method, generator)

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        with _driver_errors():
            return method(*args, **kwargs)
    return cast(_Method, call)


def _store_errors_only(cls: _Class) -> _Class:
    """Translate driver errors in every public method of `cls` (and `__init__`), present and future, in one
    place rather than in each method."""
    for name, member in list(vars(cls).items()):
        if inspect.isfunction(member) and (name == "__init__" or not name.startswith("_")):
            setattr(cls, name, _translated(member))
    return cls


# A record's keyword row: its terms, and its scope's token (migration 0008) read from its `memories` row, which
# every write path has written just before. Parameters: the terms joined by spaces, the record's seq.
_FTS_INSERT = (f"INSERT INTO memories_fts (rowid, scope, terms) SELECT m.seq, {SCOPE_TOKEN}, ? "
               "FROM memories m WHERE m.seq = ?")
# A MATCH argument for one scope's rows holding any of the terms. Parameters: tenant, user_id, the terms'
# expression (`match_expression`). The token is hex digits, so it needs no quoting.
_SCOPED_MATCH = "('scope : s' || hex(json_array(?, ?)) || ' AND terms : (' || ? || ')')"


def _scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    sql = f"m.tenant = ? AND m.user_id IS ? AND m.tier IN {_LIVE}"
    params: list[Any] = [scope.tenant, scope.user_id]
    for column in ("agent_id", "session_id"):
        value = getattr(scope, column)
        if value is not None:
            sql += f" AND m.{column} = ?"
            params.append(value)
    return sql, params


@_store_errors_only
class SQLiteStore:
    _immutable = False  # read through `immutable=1` (a read-only WAL file without its -shm)

    def __init__(self, path: str | Path, *, max_term_docs: int = 500, read_only: bool = False,
                 graph_from: int = GRAPH_FROM) -> None:
        self.path = Path(path)
        self.max_term_docs = max_term_docs
        self.graph_from = graph_from  # a scope with this many live records searches an HNSW graph (store.graph)
        self.graph_folder = self.path.with_name(self.path.name + ".graphs")
        # A file this process cannot write is opened for reading: search works (without counting uses),
        # writes fail with one clear error instead of SQLite's "attempt to write a readonly database".
        self.read_only = read_only or not files.writable(self.path)
        try:
            if self.read_only:
                self._conn = self._open_read_only()
            else:
                files.private_file(self.path)
                unmarked = files.claim(self.path)  # before any write: a foreign file is left as it was
                self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
                # synchronous=NORMAL in WAL mode: a killed process loses nothing committed; a power cut may
                # lose the last commits but never corrupts the file. FULL would fsync on every search.
                for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON",
                               "secure_delete = ON", "busy_timeout = 30000"):
                    self._conn.execute(f"PRAGMA {pragma}")
                if unmarked:
                    self._conn.execute(f"PRAGMA application_id = {files.APPLICATION_ID}")
                migrate(self._conn)
            # A second connection for keyword reads, so a search of a large scope can rank keywords while the
            # vector scan runs on the other core (WAL lets readers and the writer proceed side by side).
            self._reader = self._connect_reader()
            self._reader.execute("PRAGMA busy_timeout = 30000")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open {self.path} as an Ebbing store: {exc}", transient=_failure(exc)[2]) from None
        self._lock = threading.RLock()
        self._reader_lock = threading.Lock()
        self._scan_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ebbing-scan")
        self._keyword_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ebbing-keyword")
        self._vectors: dict[tuple[str, str | None], ScopeVectors | ScopeGraph] = {}
        self._data_version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        self._graphs = SQLiteGraphs(self._conn, self._write, self.graph_folder, self.read_only)

    # -- plumbing ------------------------------------------------------------------------------------

    def _uri(self, immutable: bool = False) -> str:
        return f"{self.path.resolve().as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")

    def _open_read_only(self) -> sqlite3.Connection:
        if not self.path.exists():
            raise StoreError(f"no Ebbing store at {self.path}, and the folder is read-only")
        files.claim(self.path)
        try:
            conn = sqlite3.connect(self._uri(), uri=True, isolation_level=None, check_same_thread=False, timeout=30)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            # A WAL file without its -shm in a folder we cannot write: nobody can be writing it either, so
            # it is read as an immutable file.
            self._immutable = True
            conn = sqlite3.connect(self._uri(True), uri=True, isolation_level=None, check_same_thread=False)
        applied = {row[0] for row in conn.execute("SELECT name FROM migrations")}
        if missing := [name for name, _ in MIGRATIONS if name not in applied]:
            conn.close()
            raise StoreError(f"{self.path} needs schema changes ({', '.join(missing)}) but is read-only; "
                             "open it once with write access")
        return conn

    def _connect_reader(self) -> sqlite3.Connection:
        if not self.read_only:
            return sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        return sqlite3.connect(self._uri(self._immutable), uri=True, isolation_level=None, check_same_thread=False,
                               timeout=30)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise ReadOnly(f"{self.path} is read-only: nothing was changed")
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # SQLite itself rolls back on some errors (a full disk, I/O)
                    self._conn.execute("ROLLBACK")
                raise

    def _fresh(self) -> None:
        """Drop cached vectors when another connection has committed since we last looked (a graph stays: it
        replays the vector journal before its next search)."""
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            self._data_version = version
            self._vectors = {key: held for key, held in self._vectors.items() if isinstance(held, ScopeGraph)}

    def _drop_scan(self, scope: tuple[str, str | None]) -> None:
        """Forget a scope's scanned vectors after a change that `append` cannot follow; a graph follows every
        change through the journal and stays."""
        if not isinstance(self._vectors.get(scope), ScopeGraph):
            self._vectors.pop(scope, None)

    def _insert_events(self, conn: sqlite3.Connection, tenant: str, events: Sequence[Event]) -> None:
        conn.executemany(
            "INSERT INTO events (memory_id, tenant, at, type, actor, reason, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(e.memory_id, tenant, e.at.timestamp(), e.type, e.actor, e.reason,
              json.dumps(e.data, ensure_ascii=False)) for e in events],
        )

    # -- writes --------------------------------------------------------------------------------------

    def insert(self, records: Sequence[MemoryRecord], terms: Sequence[list[str]], events: Sequence[Event], *,
               facts: Sequence[FactRow] = (), closings: Sequence[Closing] = (),
               secrets: Sequence[SealedSecret] = (), reviews: Sequence[ReviewRow] = ()) -> None:
        """Add records with their events, facts (closing the values they supersede), sealed secrets and held
        supersessions, all in one transaction."""
        if not records:
            return
        columns = ", ".join((*_WRITABLE, "jitter"))
        placeholders = ", ".join("?" * (len(_WRITABLE) + 1))
        tenant_of = {r.id: r.tenant for r in records}
        added: list[tuple[MemoryRecord, int]] = []
        with self._write() as conn:
            self._fresh()
            if len(records) != len(terms):
                raise StoreError("insert needs one list of terms per record")
            for record in records:
                cursor = conn.execute(f"INSERT INTO memories ({columns}) VALUES ({placeholders})",
                                      (*_row(record), jitter(record.id)))
                assert cursor.lastrowid is not None
                added.append((record, cursor.lastrowid))
            conn.executemany("INSERT INTO vectors (seq, vector) VALUES (?, ?)",
                             [(seq, _vector_blob(record)) for record, seq in added])
            conn.executemany(_FTS_INSERT,
                             [(" ".join(words), seq) for (_, seq), words in zip(added, terms, strict=True)])
            _write_facts(conn, records[0].tenant, tenant_of, facts, closings)
            conn.executemany("INSERT INTO secrets VALUES (?, ?, ?, ?)",
                             [(x.memory_id, x.placeholder, x.kind, x.ciphertext) for x in secrets])
            _write_reviews(conn, reviews)
            by_tenant: dict[str, list[Event]] = {}
            for event in events:
                by_tenant.setdefault(tenant_of.get(event.memory_id, records[0].tenant), []).append(event)
            for tenant, tenant_events in by_tenant.items():
                self._insert_events(conn, tenant, tenant_events)
        for (record, seq), words in zip(added, terms, strict=True):  # keep loaded scopes in step with the commit
            cached = self._vectors.get((record.tenant, record.user_id))
            if isinstance(cached, ScopeIndex) and record.tier in LIVE_TIERS:
                assert record.embedding is not None
                cached.append([seq], record.embedding[None, :], [words])

    def replace(self, record: MemoryRecord, terms: list[str] | None, events: Sequence[Event], *,
                secrets: Sequence[SealedSecret] = (), facts: Sequence[FactRow] = (),
                closings: Sequence[Closing] = (), reviews: Sequence[ReviewRow] = ()) -> None:
        row = _row(record)
        with self._write() as conn:
            self._fresh()
            found = conn.execute("SELECT seq FROM memories WHERE id = ? AND +tenant = ?",
                                 (record.id, record.tenant)).fetchone()
            if found is None:
                raise StoreError(f"record {record.id} vanished during the update")
            seq = found[0]
            changing = [name for name in _WRITABLE if name not in ("id", "tenant", "created_at")]
            values = dict(zip(_WRITABLE, row, strict=True))
            conn.execute(f"UPDATE memories SET {', '.join(f'{n} = ?' for n in changing)} WHERE seq = ?",
                         (*(values[n] for n in changing), seq))
            if terms is not None:
                conn.execute("UPDATE vectors SET vector = ? WHERE seq = ?", (_vector_blob(record), seq))
                conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
                if record.tier in LIVE_TIERS:  # trash stays out of the index
                    conn.execute(_FTS_INSERT, (" ".join(terms), seq))
            conn.executemany("INSERT OR REPLACE INTO secrets VALUES (?, ?, ?, ?)",
                             [(x.memory_id, x.placeholder, x.kind, x.ciphertext) for x in secrets])
            _write_facts(conn, record.tenant, {}, facts, closings)
            _write_reviews(conn, reviews)
            self._insert_events(conn, record.tenant, events)
        if terms is not None:
            self._drop_scan((record.tenant, record.user_id))

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
                f"SELECT {_COLUMNS}, v.vector FROM memories m "
                "LEFT JOIN vectors v ON v.seq = m.seq WHERE m.id = ? AND +m.tenant = ?",
                (memory_id, tenant),
            ).fetchone()
        return None if row is None else _record(row, row[_VECTOR])

    def keyword_search(self, scope: Scope, terms: Sequence[str], limit: int, filters: dict[str, Any] | None
                       ) -> list[int]:
        with self._reader_lock:
            usable = self._selective(scope, terms)
            if not usable:
                return []
            where, params = _scope_sql(scope)
            extra, extra_params = compile_sqlite(filters)
            rows = self._reader.execute(  # the scope column weighs nothing in the ranking
                "SELECT m.seq FROM memories_fts f JOIN memories m ON m.seq = f.rowid "
                f"WHERE memories_fts MATCH {_SCOPED_MATCH} AND {where}{extra} "
                "ORDER BY bm25(memories_fts, 0.0, 1.0) LIMIT ?",
                (scope.tenant, scope.user_id, match_expression(usable), *params, *extra_params, limit),
            ).fetchall()
        return [row[0] for row in rows]

    def _selective(self, scope: Scope, terms: Sequence[str]) -> list[str]:
        """The terms worth matching: ranking every record that holds a very common term costs time in
        proportion to how many hold it, and such a term tells little anyway. A term is counted among this
        scope's live records (up to `max_term_docs` + 1 of them), as the PostgreSQL store counts it: how common
        it is in other users' records says nothing about this user's."""
        if not terms:
            return []
        where, params = _scope_sql(Scope(scope.tenant, scope.user_id))
        size = self._reader.execute(f"SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {where} LIMIT ?)",
                                    (*params, self.max_term_docs + 1)).fetchone()[0]
        if size <= self.max_term_docs:  # no term can be too common in so few records: nothing to count
            return list(terms)
        held = {}
        for term in dict.fromkeys(terms):
            held[term] = self._reader.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH {_SCOPED_MATCH} LIMIT ?)",
                (scope.tenant, scope.user_id, match_expression([term]), self.max_term_docs + 1)).fetchone()[0]
        return [t for t in terms if 0 < held[t] <= self.max_term_docs]

    def vector_search(self, scope: Scope, vector: np.ndarray, limit: int, filters: dict[str, Any] | None) -> list[int]:
        with self._lock:
            self._fresh()
            key = (scope.tenant, scope.user_id)
            cached = self._vectors.get(key)
            if isinstance(cached, ScopeGraph):
                cached = self._graphs.current(cached)
                if cached is None:  # its registration went with a purge, or another process saved a newer file
                    del self._vectors[key]
            elif cached is not None and cached.size >= self.graph_from and not self.read_only:
                cached = None  # grew past the size where a graph beats the scan
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
            if isinstance(cached, ScopeGraph):  # usearch may not search while the journal replay changes it
                return self._graphs.rescored(cached.nearest(vector, 2 * limit, allowed), vector, limit)
        return cached.nearest(vector, limit, allowed, self._scan_pool)  # outside the lock: needs no connection

    def search_candidates(self, scope: Scope, terms: Sequence[str], vector: np.ndarray, limit: int,
                          filters: dict[str, Any] | None) -> list[Candidate]:
        """`candidates` of the keys both indexes return. A small loaded scope's keywords come from its own terms
        (`ScopeIndex`) when they can; a large scope's are read on the other core while its vectors are searched;
        the rest one after the other, as handing work to a thread costs more than a small scan."""
        loaded = self._vectors.get((scope.tenant, scope.user_id))
        if (held := self._held_in_memory(loaded, scope, terms, limit, filters)) is not None:
            keys = dict.fromkeys(self.vector_search(scope, vector, limit, filters))
            keys.update(dict.fromkeys(held))
        elif loaded is not None and (isinstance(loaded, ScopeGraph) or loaded.size >= PARALLEL_FROM):
            keyword = self._keyword_pool.submit(self.keyword_search, scope, terms, limit, filters)
            keys = dict.fromkeys(self.vector_search(scope, vector, limit, filters))
            keys.update(dict.fromkeys(keyword.result()))
        else:
            keys = dict.fromkeys(self.vector_search(scope, vector, limit, filters))
            keys.update(dict.fromkeys(self.keyword_search(scope, terms, limit, filters)))
        return self.candidates(list(keys))

    def _held_in_memory(self, loaded: ScopeVectors | ScopeGraph | None, scope: Scope, terms: Sequence[str],
                        limit: int, filters: dict[str, Any] | None) -> list[int] | None:
        """What `keyword_search` would return, from a loaded scope's terms (`ScopeIndex`), or None where only the
        FTS index can say: a narrowed scope, filters, a scope not loaded or a graph, or more than `limit`
        matches (then bm25 chooses). The same terms are left out as `_selective` leaves out."""
        if (not isinstance(loaded, ScopeIndex) or not loaded.has_terms or filters or scope.agent_id is not None
                or scope.session_id is not None):
            return None
        with self._lock:
            self._fresh()
            if self._vectors.get((scope.tenant, scope.user_id)) is not loaded:  # another connection wrote
                return None
            return loaded.matching(terms, limit, self.max_term_docs)

    def _load_vectors(self, scope: Scope) -> ScopeVectors | ScopeGraph:
        where, params = _scope_sql(Scope(scope.tenant, scope.user_id))
        if not self.read_only:
            live = self._conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()[0]
            if live >= self.graph_from and (graph := self._graphs.open(scope.tenant, scope.user_id)) is not None:
                return graph
        loaded = ScopeIndex()
        cursor = self._conn.execute(
            "SELECT m.seq, v.vector, f.terms FROM memories m JOIN vectors v ON v.seq = m.seq "
            f"LEFT JOIN memories_fts f ON f.rowid = m.seq WHERE {where}", params)
        while rows := cursor.fetchmany(4096):  # in pages: never the whole scope as Python objects at once
            keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            words = None if any(r[2] is None for r in rows) else [r[2].split() for r in rows]
            loaded.append(keys, np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1),
                          words)
        return loaded

    def candidates(self, keys: Sequence[int]) -> list[Candidate]:
        if not keys:
            return []
        marks = ", ".join("?" * len(keys))
        with self._lock:
            rows = self._conn.execute(
                "SELECT m.seq, m.text, f.terms, v.vector, "
                "(EXISTS (SELECT 1 FROM facts x WHERE x.memory_id = m.id) AND NOT EXISTS "
                "(SELECT 1 FROM facts x WHERE x.memory_id = m.id AND x.valid_to IS NULL)) OR EXISTS "
                "(SELECT 1 FROM reviews r WHERE r.memory_id = m.id AND r.status = 'pending'), "
                f"{', '.join('m.' + c for c in RETENTION_COLUMNS)} FROM memories m "
                "JOIN vectors v ON v.seq = m.seq JOIN memories_fts f ON f.rowid = m.seq "
                f"WHERE m.seq IN ({marks})",
                list(keys),
            ).fetchall()
        return [Candidate(row[0], row[1], row[2].split(), np.frombuffer(row[3], dtype="<f4"), tuple(row[5:]),
                          stale=bool(row[4])) for row in rows]

    def fetch(self, keys: Sequence[int]) -> dict[int, MemoryRecord]:
        if not keys:
            return {}
        marks = ", ".join("?" * len(keys))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS}, v.vector FROM memories m "
                f"LEFT JOIN vectors v ON v.seq = m.seq WHERE m.seq IN ({marks})",
                list(keys),
            ).fetchall()
        return {row[0]: _record(row, row[_VECTOR]) for row in rows}

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
            by_tier["cold"] = self._conn.execute(f"SELECT count(*) FROM archive_index WHERE {where}",
                                                 params).fetchone()[0]
            by_kind = dict(self._conn.execute(
                f"SELECT kind, count(*) FROM (SELECT kind FROM memories WHERE {where} "
                f"UNION ALL SELECT kind FROM archive_index WHERE {where}) GROUP BY kind", params * 2).fetchall())
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
                    f"SELECT {_COLUMNS}, v.vector FROM memories m "
                    f"LEFT JOIN vectors v ON v.seq = m.seq WHERE {where} AND m.seq > ? ORDER BY m.seq LIMIT 500",
                    (*params, last),
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield _record(row, row[_VECTOR])
            last = rows[-1][0]

    # -- lifecycle: tiers, archive, trash, purge -------------------------------------------------------

    def sweep_rows(self, tenant: str, user_id: str | None, source: str, after: int, limit: int,
                   window: tuple[int, int, int] | None = None) -> SweepRows | None:
        """A page of live ("live") or archived ("cold") records after key `after`, with their retention
        columns. `window` = (period, low, high) keeps records whose jitter slot is in (low, high]."""
        live = source == "live"
        table, tier = ("memories", f"tier IN {_LIVE}") if live else ("archive_index", "1")
        # Pages walk one index in seq order: the primary key for a whole tenant ("+tenant" keeps SQLite off the
        # scope index, which would sort the tenant's rows again for every page), (tenant, user_id, seq) for a user.
        where, params = f"+tenant = ? AND {tier} AND seq > ?", [tenant, after]
        if user_id is not None:
            table += " INDEXED BY " + ("memories_user_seq" if live else "archive_scope")
            where = f"tenant = ? AND user_id = ? AND {tier} AND seq > ?"
            params = [tenant, user_id, after]
        if window is not None:
            period, low, high = window
            joiner = "AND" if low < high else "OR"
            where += f" AND ((jitter % ?) > ? {joiner} (jitter % ?) <= ?)"
            params.extend([period, low, period, high])
        tier_column = "tier" if source == "live" else "'cold'"
        with self._lock:
            rows = self._conn.execute(
                f"SELECT seq, id, user_id, {tier_column}, {', '.join(RETENTION_COLUMNS)} FROM {table} "
                f"WHERE {where} ORDER BY seq LIMIT ?", (*params, limit)).fetchall()
        if not rows:
            return None
        return SweepRows(np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows], [r[2] for r in rows],
                         [r[3] for r in rows], RecordBatch.from_rows([r[4:] for r in rows]))

    def demote(self, tenant: str, moves: Sequence[tuple[int, str | None, Tier]], events: Sequence[Event],
               at: float) -> None:
        """Move live records (seq, user_id, to) to warm or to the trash, with their events, in one go."""
        trashed = [(at, seq) for seq, _, to in moves if to is Tier.TRASH]
        with self._write() as conn:
            self._fresh()
            conn.executemany("UPDATE memories SET tier = 'trash', trashed_at = ? WHERE seq = ?", trashed)
            conn.executemany("DELETE FROM memories_fts WHERE rowid = ?", [(seq,) for _, seq in trashed])
            conn.executemany("UPDATE memories SET tier = ? WHERE seq = ?",
                             [(to.value, seq) for seq, _, to in moves if to is not Tier.TRASH])
            self._insert_events(conn, tenant, events)
        for scope in {(tenant, user_id) for _, user_id, to in moves if to is Tier.TRASH}:
            self._drop_scan(scope)

    def promote(self, tenant: str, memory_id: str, to: Tier, terms: list[str] | None, events: Sequence[Event]) -> None:
        """Lift a record within the store: warm to hot, or trash back to a live tier (`terms` re-index it)."""
        with self._write() as conn:
            self._fresh()
            row = conn.execute("SELECT seq, user_id, tier FROM memories WHERE id = ? AND +tenant = ?",
                               (memory_id, tenant)).fetchone()
            if row is None:
                raise StoreError(f"record {memory_id} vanished before it could move")
            conn.execute("UPDATE memories SET tier = ?, trashed_at = NULL WHERE seq = ?", (to.value, row[0]))
            if row[2] == Tier.TRASH.value and terms is not None:
                conn.execute(_FTS_INSERT, (" ".join(terms), row[0]))
            self._insert_events(conn, tenant, events)
        if row[2] == Tier.TRASH.value:  # back among the live vectors; warm to hot leaves the live set as it is
            self._drop_scan((tenant, row[1]))

    def intent(self, file: str, state: str) -> None:
        """Note a file change before making it ('writing' or 'deleting'), so a crash leaves a trail."""
        with self._write() as conn:
            conn.execute("INSERT OR REPLACE INTO archive_files VALUES (?, ?)", (file, state))

    def intents(self) -> list[tuple[str, str]]:
        with self._lock:
            return [(r[0], r[1]) for r in self._conn.execute("SELECT file, state FROM archive_files")]

    def clear_intent(self, file: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM archive_files WHERE file = ?", (file,))

    def archive_move(self, tenant: str, file: str, seqs: Sequence[int], events: Sequence[Event], at: float) -> None:
        """After `file` holds these records durably: index them there and take them out of the live store."""
        marks = ", ".join("?" * len(seqs))
        with self._write() as conn:
            self._fresh()
            conn.execute(
                "INSERT INTO archive_index (id, seq, tenant, user_id, file, archived_at, kind, importance, "
                "priority, pinned, held, security, created_at, last_accessed_at, access_count, update_count, "
                "jitter, expires_at) SELECT id, seq, tenant, user_id, ?, ?, kind, importance, priority, pinned, held, "
                f"security, created_at, last_accessed_at, access_count, update_count, jitter, expires_at FROM memories "
                f"WHERE seq IN ({marks}) AND tier IN {_LIVE}",
                (file, at, *seqs))
            users = {r[0] for r in conn.execute(f"SELECT DISTINCT user_id FROM memories WHERE seq IN ({marks})",
                                                list(seqs))}
            conn.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", list(seqs))
            conn.execute(f"DELETE FROM memories WHERE seq IN ({marks})", list(seqs))  # vectors cascade
            conn.execute("DELETE FROM archive_files WHERE file = ?", (file,))
            self._insert_events(conn, tenant, events)
        for user_id in users:
            self._drop_scan((tenant, user_id))

    def cold(self, tenant: str, ids: Sequence[str]) -> dict[str, tuple[str, int, dict[str, Any]]]:
        """Where archived records are: id -> (file, seq, current flags that override the file's copy)."""
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT id, file, seq, pinned, held, priority FROM archive_index WHERE id IN ({marks}) "
                "AND +tenant = ?", (*ids, tenant)).fetchall()
        return {r[0]: (r[1], r[2], {"pinned": bool(r[3]), "held": bool(r[4]), "priority": Priority(r[5])})
                for r in rows}

    def cold_version(self, tenant: str, user_id: str | None) -> tuple[int, int]:
        with self._lock:
            count, total = self._conn.execute(
                "SELECT count(*), coalesce(sum(seq), 0) FROM archive_index WHERE tenant = ? AND user_id IS ?",
                (tenant, user_id)).fetchone()
        return int(count), int(total)

    def cold_files(self, tenant: str, user_id: str | None, *, every_user: bool = False) -> dict[str, list[str]]:
        """Archive files holding a user's (or, with every_user, the tenant's) cold records, and their ids."""
        where, params = ("tenant = ?", [tenant]) if every_user else ("tenant = ? AND user_id IS ?", [tenant, user_id])
        with self._lock:
            rows = self._conn.execute(f"SELECT file, id FROM archive_index WHERE {where} ORDER BY seq",
                                      params).fetchall()
        out: dict[str, list[str]] = {}
        for file, id_ in rows:
            out.setdefault(file, []).append(id_)
        return out

    def set_cold_flags(self, tenant: str, memory_id: str, flags: dict[str, Any], events: Sequence[Event]) -> None:
        allowed = {"pinned", "held", "priority"}
        assert set(flags) <= allowed
        values = [v.value if isinstance(v, Priority) else int(v) for v in flags.values()]
        with self._write() as conn:
            conn.execute(f"UPDATE archive_index SET {', '.join(f'{k} = ?' for k in flags)} "
                         "WHERE id = ? AND +tenant = ?", (*values, memory_id, tenant))
            self._insert_events(conn, tenant, events)

    def replace_file(self, tenant: str, old: str, new: str | None, leaving: Sequence[str],
                     reinstated: Sequence[tuple[MemoryRecord, int, list[str] | None]], events: Sequence[Event],
                     at: float, *, keep_file: bool = False) -> None:
        """Swap archive file `old` for `new` (which holds its rows but `leaving`), drop `leaving` from the
        archive index, and put `reinstated` records (with their original key; terms for live tiers) back
        into the store, all in one transaction. `old` is then marked for deletion, or with `keep_file` (no
        `new`: the file stays, its leaving rows stale) for compaction."""
        marks = ", ".join("?" * len(leaving))
        with self._write() as conn:
            self._fresh()
            if leaving:
                conn.execute(f"DELETE FROM archive_index WHERE id IN ({marks}) AND +tenant = ?", (*leaving, tenant))
            if new is not None:
                conn.execute("UPDATE archive_index SET file = ? WHERE file = ?", (new, old))
                conn.execute("DELETE FROM archive_files WHERE file = ?", (new,))
            columns = ", ".join(("seq", *_WRITABLE, "jitter", "trashed_at"))
            placeholders = ", ".join("?" * (len(_WRITABLE) + 3))
            for record, seq, words in reinstated:
                trashed = at if record.tier is Tier.TRASH else None
                conn.execute(f"INSERT INTO memories ({columns}) VALUES ({placeholders})",
                             (seq, *_row(record), jitter(record.id), trashed))
                conn.execute("INSERT INTO vectors (seq, vector) VALUES (?, ?)", (seq, _vector_blob(record)))
                if words is not None:
                    conn.execute(_FTS_INSERT, (" ".join(words), seq))
            conn.execute("INSERT OR REPLACE INTO archive_files VALUES (?, ?)",
                         (old, "stale" if keep_file else "deleting"))
            self._insert_events(conn, tenant, events)
        for record, seq, words in reinstated:  # a revived record joins a loaded scan, as an insert does
            cached = self._vectors.get((tenant, record.user_id))
            if isinstance(cached, ScopeIndex) and record.tier in LIVE_TIERS and record.embedding is not None:
                cached.append([seq], np.asarray(record.embedding, dtype=np.float32)[None, :],
                              None if words is None else [words])
            elif record.tier in LIVE_TIERS:
                self._drop_scan((tenant, record.user_id))

    def indexed_in(self, file: str) -> list[tuple[str, str]]:
        with self._lock:
            return [(r[0], r[1]) for r in self._conn.execute("SELECT tenant, id FROM archive_index WHERE file = ?",
                                                             (file,))]

    def seq_of(self, tenant: str, memory_id: str) -> int | None:
        with self._lock:
            row = self._conn.execute("SELECT seq FROM memories WHERE id = ? AND +tenant = ?",
                                     (memory_id, tenant)).fetchone()
        return None if row is None else int(row[0])

    def where_held(self, tenant: str, ids: Sequence[str]) -> dict[str, tuple[Tier, bool]]:
        """Tier and legal hold of each id that exists, live, trashed or cold."""
        out: dict[str, tuple[Tier, bool]] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            with self._lock:
                for id_, tier, held in self._conn.execute(
                        f"SELECT id, tier, held FROM memories WHERE id IN ({marks}) AND +tenant = ? UNION ALL "
                        f"SELECT id, 'cold', held FROM archive_index WHERE id IN ({marks}) AND +tenant = ?",
                        (*chunk, tenant, *chunk, tenant)):
                    out[id_] = (Tier(tier), bool(held))
        return out

    # -- facts and secrets ---------------------------------------------------------------------------

    def current_facts(self, tenant: str, user_id: str | None) -> list[FactRow]:
        """Facts still valid (no newer value yet) of a user's live and cold records."""
        return self._facts("tenant = ? AND user_id IS ? AND valid_to IS NULL", [tenant, user_id])

    def timeline(self, tenant: str, root: str) -> list[FactRow]:
        return self._facts("tenant = ? AND root = ?", [tenant, root])

    def facts_of(self, tenant: str, memory_ids: Sequence[str]) -> list[FactRow]:
        marks = ", ".join("?" * len(memory_ids))
        return self._facts(f"tenant = ? AND memory_id IN ({marks})", [tenant, *memory_ids]) if memory_ids else []

    # -- reviews -------------------------------------------------------------------------------------

    def reviews(self, tenant: str, status: str | None, user_id: str | None, *, every_user: bool,
                limit: int) -> list[ReviewRow]:
        where, params = ["tenant = ?"], list[Any]([tenant])
        if status is not None:
            where.append("status = ?")
            params.append(status)
        if not every_user:
            where.append("user_id IS ?")
            params.append(user_id)
        return self._reviews(f"{' AND '.join(where)} ORDER BY created_at, id LIMIT ?", [*params, limit])

    def get_review(self, tenant: str, review_id: str) -> ReviewRow | None:
        found = self._reviews("tenant = ? AND id = ?", [tenant, review_id])
        return found[0] if found else None

    def decide_review(self, tenant: str, review_id: str, status: str, at: float, actor: str, note: str,
                      events: Sequence[Event], *, facts: Sequence[FactRow] = (),
                      closings: Sequence[Closing] = ()) -> bool:
        try:
            with self._write() as conn:
                self._fresh()
                changed = conn.execute("UPDATE reviews SET status = ?, decided_at = ?, decided_by = ?, note = ? "
                                       "WHERE tenant = ? AND id = ? AND status = 'pending'",
                                       (status, at, actor, note, tenant, review_id)).rowcount
                if changed != 1 or not all(conn.execute(
                        "SELECT 1 FROM facts WHERE memory_id = ? AND slot = ? AND valid_to IS NULL",
                        (c.memory_id, c.slot)).fetchone() for c in closings):
                    raise _Undecided
                _write_facts(conn, tenant, {}, facts, closings)
                self._insert_events(conn, tenant, events)
        except _Undecided:
            return False  # rolled back: nothing written
        return True

    def _reviews(self, where: str, params: list[Any]) -> list[ReviewRow]:
        with self._lock:
            rows = self._conn.execute(f"SELECT {', '.join(REVIEW_COLUMNS)} FROM reviews WHERE {where}",
                                      params).fetchall()
        return [review_from(dict(zip(REVIEW_COLUMNS, row, strict=True))) for row in rows]

    def _facts(self, where: str, params: list[Any]) -> list[FactRow]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT memory_id, slot, subject, attribute, value, reason, valid_from, valid_to, superseded_by, "
                f"supersedes, root, user_id FROM facts WHERE {where} ORDER BY valid_from, memory_id", params).fetchall()
        return [FactRow(*row) for row in rows]

    def user_facts(self, tenant: str, user_id: str | None) -> list[FactRow]:
        return self._facts("tenant = ? AND user_id IS ?", [tenant, user_id])

    def essentials(self, tenant: str, user_id: str | None, limit: int) -> list[MemoryRecord]:
        """Pinned and P0 live records of a user: what every context starts with."""
        return self._records(f"m.tenant = ? AND m.user_id IS ? AND m.tier IN {_LIVE} AND "
                             "(m.pinned = 1 OR m.priority = 'P0') ORDER BY m.importance DESC, m.seq DESC LIMIT ?",
                             [tenant, user_id, limit])

    def live_of_kind(self, tenant: str, user_id: str | None, kind: str, limit: int) -> list[MemoryRecord]:
        """A user's live records of one kind, newest first."""
        return self._records(f"m.tenant = ? AND m.user_id IS ? AND m.tier IN {_LIVE} AND m.kind = ? "
                             "ORDER BY m.seq DESC LIMIT ?", [tenant, user_id, kind, limit])

    def latest(self, tenant: str, user_id: str | None, session_id: str | None, limit: int) -> list[MemoryRecord]:
        session = " AND m.session_id = ?" if session_id is not None else ""
        return self._records(f"m.tenant = ? AND m.user_id IS ? AND m.tier IN {_LIVE} AND m.kind != 'summary'{session} "
                             "ORDER BY m.created_at DESC, m.seq DESC LIMIT ?",
                             [tenant, user_id, *([session_id] if session_id is not None else []), limit])

    def session_turns(self, tenant: str, user_id: str | None, session_id: str, *, unconsolidated: bool,
                      limit: int = 100_000) -> list[MemoryRecord]:
        """A session's live records other than summaries, oldest first (the newest `limit` of them)."""
        extra = " AND json_extract(m.metadata, '$.consolidated_into') IS NULL" if unconsolidated else ""
        rows = self._records(f"m.tenant = ? AND m.user_id IS ? AND m.session_id = ? AND m.tier IN {_LIVE} "
                             f"AND m.kind != 'summary'{extra} ORDER BY m.created_at DESC, m.seq DESC LIMIT ?",
                             [tenant, user_id, session_id, limit])
        return rows[::-1]

    def _records(self, where: str, params: list[Any]) -> list[MemoryRecord]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS}, v.vector FROM memories m LEFT JOIN vectors v ON v.seq = m.seq WHERE {where}",
                params).fetchall()
        return [_record(row, row[_VECTOR]) for row in rows]

    def mark_consolidated(self, tenant: str, ids: Sequence[str], summary_id: str) -> None:
        with self._write() as conn:
            conn.executemany(
                "UPDATE memories SET metadata = json_set(metadata, '$.consolidated_into', ?) WHERE id = ? "
                "AND +tenant = ?", [(summary_id, i, tenant) for i in ids])

    def add_events(self, tenant: str, events: Sequence[Event]) -> None:
        with self._write() as conn:
            self._insert_events(conn, tenant, events)

    def sealed(self, tenant: str, memory_id: str) -> list[SealedSecret]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT s.memory_id, s.placeholder, s.kind, s.ciphertext FROM secrets s WHERE s.memory_id = ? AND "
                "EXISTS (SELECT 1 FROM memories m WHERE m.id = s.memory_id AND +m.tenant = ? UNION ALL "
                "SELECT 1 FROM archive_index a WHERE a.id = s.memory_id AND a.tenant = ?)",
                (memory_id, tenant, tenant)).fetchall()
        return [SealedSecret(r[0], r[1], r[2], bytes(r[3])) for r in rows]

    def reinforce(self, tenant: str, memory_id: str, count: int, at: float, events: Sequence[Event], *,
                  source_id: str | None = None) -> None:
        """Count a restatement as a use: `count` more accesses, a fresh reference time, and the saying's id
        among the record's sources."""
        with self._write() as conn:
            conn.execute("UPDATE memories SET access_count = access_count + ?, last_accessed_at = max(coalesce("
                         "last_accessed_at, 0), ?), source_ids = CASE WHEN ? IS NULL THEN source_ids ELSE "
                         "json_insert(source_ids, '$[#]', ?) END WHERE id = ? AND +tenant = ?",
                         (count, at, source_id, source_id, memory_id, tenant))
            self._insert_events(conn, tenant, events)

    def expired_trash(self, tenant: str, before: float, user_id: str | None = None) -> list[str]:
        where, params = "tenant = ? AND tier = 'trash' AND held = 0 AND trashed_at <= ?", [tenant, before]
        if user_id is not None:
            where += " AND user_id = ?"
            params.append(user_id)
        with self._lock:
            return [r[0] for r in self._conn.execute(f"SELECT id FROM memories WHERE {where}", params)]

    def users(self, tenant: str) -> dict[str | None, int]:
        """Every user of a tenant with how many records they have in any tier (None: records of no user)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT user_id, count(*) FROM (SELECT user_id FROM memories WHERE tenant = ? UNION ALL "
                "SELECT user_id FROM archive_index WHERE tenant = ?) GROUP BY user_id ORDER BY user_id",
                (tenant, tenant)).fetchall()
        return {user: count for user, count in rows}

    def user_ids(self, tenant: str, user_id: str | None) -> tuple[list[str], list[str]]:
        """Every id of a user: (in the store, in the archive)."""
        with self._lock:
            live = [r[0] for r in self._conn.execute(
                "SELECT id FROM memories WHERE tenant = ? AND user_id IS ?", (tenant, user_id))]
            cold = [r[0] for r in self._conn.execute(
                "SELECT id FROM archive_index WHERE tenant = ? AND user_id IS ?", (tenant, user_id))]
        return live, cold

    def purge(self, tenant: str, ids: Sequence[str], events: Sequence[Event]) -> None:
        """Erase records from the store (not the archive files: the caller rewrites those first)."""
        marks = ", ".join("?" * len(ids))
        with self._write() as conn:
            self._fresh()
            seqs = [r[0] for r in conn.execute(f"SELECT seq FROM memories WHERE id IN ({marks}) AND +tenant = ?",
                                               (*ids, tenant))]
            seq_marks = ", ".join("?" * len(seqs))
            # A graph file keeps a removed vector's bytes: a graph that held one of these is rebuilt, not saved.
            registered = conn.execute(
                f"SELECT scope, file FROM graph_scopes WHERE scope IN (SELECT json_array(tenant, user_id) "
                f"FROM memories WHERE seq IN ({seq_marks}))", seqs).fetchall() if seqs else []
            graphs, stale = [r[0] for r in registered], [r[1] for r in registered]
            conn.executemany("DELETE FROM graph_scopes WHERE scope = ?", [(g,) for g in graphs])
            conn.executemany("DELETE FROM vector_journal WHERE scope = ?", [(g,) for g in graphs])
            if seqs:
                conn.execute(f"DELETE FROM memories_fts WHERE rowid IN ({seq_marks})", seqs)
                conn.execute(f"DELETE FROM memories WHERE seq IN ({seq_marks})", seqs)
            conn.execute(f"DELETE FROM archive_index WHERE id IN ({marks}) AND +tenant = ?", (*ids, tenant))
            conn.execute(f"DELETE FROM facts WHERE memory_id IN ({marks}) AND tenant = ?", (*ids, tenant))
            conn.execute(f"DELETE FROM secrets WHERE memory_id IN ({marks})", list(ids))
            # A review's plan holds the values it would write: it goes with either of its two records.
            conn.execute(f"DELETE FROM reviews WHERE tenant = ? AND (memory_id IN ({marks}) OR incumbent IN ({marks}))",
                         (tenant, *ids, *ids))
            # Reasons are free text ("forget(reason=...)") and may name the person; they go with the record.
            conn.execute(f"UPDATE events SET reason = '' WHERE memory_id IN ({marks}) AND tenant = ?",
                         (*ids, tenant))
            self._insert_events(conn, tenant, events)
        # Scans are reloaded; a graph stays unless it held a purged vector (other scopes' graphs replay the journal).
        self._vectors = {key: held for key, held in self._vectors.items()
                         if isinstance(held, ScopeGraph) and held.scope not in graphs}
        for file in stale:
            with contextlib.suppress(FileNotFoundError):
                (self.graph_folder / file).unlink()

    def scrub(self) -> None:
        """Make erased text unrecoverable from the files: rebuild the keyword index (deleted terms linger
        in its segments until merged), then checkpoint and truncate the WAL, which holds old pages."""
        with self._write() as conn:
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def events_since(self, tenant: str, types: Sequence[str], since: float) -> list[Event]:
        marks = ", ".join("?" * len(types))
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, memory_id, type, at, actor, reason, data FROM events "
                f"WHERE tenant = ? AND type IN ({marks}) AND at >= ? ORDER BY seq", (tenant, *types, since)).fetchall()
        return [Event(memory_id=r[1], type=r[2], at=when(r[3]), actor=r[4], reason=r[5], data=json.loads(r[6]),
                      seq=r[0]) for r in rows]

    def events_after(self, tenant: str, after: int, types: Sequence[str], limit: int) -> list[Event]:
        marks = ", ".join("?" * len(types))
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, memory_id, type, at, actor, reason, data FROM events "
                f"WHERE tenant = ? AND seq > ? AND type IN ({marks}) ORDER BY seq LIMIT ?",
                (tenant, after, *types, limit)).fetchall()
        return [Event(memory_id=r[1], type=r[2], at=when(r[3]), actor=r[4], reason=r[5], data=json.loads(r[6]),
                      seq=r[0]) for r in rows]

    def close(self) -> None:
        self._scan_pool.shutdown(wait=True)
        self._keyword_pool.shutdown(wait=True)
        with self._lock, self._reader_lock:
            for held in self._vectors.values():
                if isinstance(held, ScopeGraph) and held.unsaved and not self.read_only:
                    self._graphs.save(held)
            self._vectors.clear()
            self._reader.close()
            self._conn.close()


if TYPE_CHECKING:  # mypy checks here that the SQLite store implements every store protocol
    _implements: type[FullStore] = SQLiteStore


class _Undecided(Exception):
    """A review was decided elsewhere, or a value it would close changed, inside `decide_review`'s transaction."""


def _write_reviews(conn: sqlite3.Connection, reviews: Sequence[ReviewRow]) -> None:
    marks = ", ".join("?" * len(REVIEW_COLUMNS))
    conn.executemany(f"INSERT INTO reviews ({', '.join(REVIEW_COLUMNS)}) VALUES ({marks})",
                     [review_values(r) for r in reviews])


def _write_facts(conn: sqlite3.Connection, tenant: str, tenant_of: dict[str, str], facts: Sequence[FactRow],
                 closings: Sequence[Closing]) -> None:
    """Close the values that ended (first: a corrected record closes its own old value of a slot before it
    states the new one) and add the new ones."""
    conn.executemany(
        "UPDATE facts SET valid_to = ?, superseded_by = ? WHERE memory_id = ? AND slot = ? AND valid_to IS NULL",
        [(c.valid_to, c.superseded_by, c.memory_id, c.slot) for c in closings])
    conn.executemany(
        "INSERT INTO facts (memory_id, slot, tenant, user_id, subject, attribute, value, reason, valid_from, "
        "valid_to, superseded_by, supersedes, root) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(f.memory_id, f.slot, tenant_of.get(f.memory_id, tenant), f.user_id, f.subject, f.attribute, f.value,
          f.reason, f.valid_from, f.valid_to, f.superseded_by, f.supersedes, f.root or f.memory_id) for f in facts])
