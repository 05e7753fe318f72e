"""The scale-out store: PostgreSQL with pgvector, one row per record (text, terms, vector), tenant-first keys.

`Memory("postgresql://user@host/db")` opens it (psycopg 3). A record is one `memories` row holding its
columns, its keyword terms (text[], GIN) and its embedding (pgvector, HNSW cosine), written in one
transaction with its events, facts and sealed secrets. Only live tiers (hot, warm) are in the keyword and
vector indexes (partial indexes on `trashed_at IS NULL`, so tier moves within the live tiers are in-place
updates). Keyword ranking is BM25 over the same terms the SQLite store indexes, computed in SQL; a search
gathers both rankings' candidates with their rows in one statement (`ebbing.store.postgres_search`). Reads
that return vectors ask for binary rows. Sweeps of live records run inside the database
(`ebbing.store.postgres_sweep`).

Unlike SQLite's `secure_delete`, PostgreSQL does not zero deleted tuples; `scrub` vacuums the tables so
erased rows are no longer reachable, and docs/scaling.md says what that does and does not guarantee.

A lost connection (a killed backend, a restarted server) fails the call that was using it with a `StoreError`
saying so; what that call had not committed is rolled back by the server, and the store opens a new
connection on its next call (`_Link`). A commit cut off mid-flight may or may not have landed, as with any
database: the call still fails, so its caller may retry (`Memory.add` merges a note said again).
"""

from __future__ import annotations

import logging
import select
import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format, TransactionStatus
from psycopg.types import TypeInfo
from psycopg.types.json import Jsonb

from ebbing.errors import StoreError
from ebbing.model import Event, Kind, MemoryRecord, Priority, Scope, Tier, when
from ebbing.retention.base import RETENTION_COLUMNS, RecordBatch
from ebbing.store.base import Candidate, Closing, FactRow, FullStore, ReviewRow, SealedSecret, SweepRows
from ebbing.store.postgres_rows import (
    COLUMNS,
    LIVE,
    VECTOR,
    WRITABLE,
    Connection,
    archive_rows,
    first_line,
    record_from_row,
    window_sql,
)
from ebbing.store.postgres_schema import migrate
from ebbing.store.postgres_scopes import ScopeIndexes
from ebbing.store.postgres_search import (
    INDEX_FROM,
    candidates_sql,
    keyword_sql,
    search_sql,
    user_clause,
    vector_sql,
)
from ebbing.store.reviews import COLUMNS as REVIEW_COLUMNS
from ebbing.store.reviews import review_from, review_values
from ebbing.store.sqlite import jitter

log = logging.getLogger(__name__)

CLIENT_CHECK_MS = 1000  # how often a busy backend checks that its client is still there


class _VectorDumper(Dumper):
    """numpy arrays as pgvector's binary format: width, unused, then big-endian float32s."""

    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        values = np.asarray(obj, dtype=">f4").ravel()
        return struct.pack(">HH", len(values), 0) + values.tobytes()


class _VectorLoader(Loader):
    def load(self, data: Any) -> np.ndarray:
        text = bytes(data).decode("ascii")
        return np.array(text[1:-1].split(","), dtype=np.float32)


class _VectorBinaryLoader(Loader):
    """pgvector's binary format (width, unused, big-endian float32s) as a float32 array: reads that fetch vectors
    ask for binary rows, since parsing 384 numbers of text per row cost more than the query itself."""

    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray:
        return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


def row_values(record: MemoryRecord) -> tuple[Any, ...]:
    """The record's values in `WRITABLE` order, as PostgreSQL takes them."""
    return (
        record.id, record.tenant, record.user_id, record.agent_id, record.session_id, record.text,
        record.kind.value, float(record.importance), record.priority.value, record.pinned, record.held,
        record.security, record.tier.value, record.created_at.timestamp(), record.updated_at.timestamp(),
        record.last_accessed_at.timestamp() if record.last_accessed_at else None, int(record.access_count),
        int(record.update_count), Jsonb(record.metadata), list(record.source_ids), record.content_hash,
        record.expires_at.timestamp() if record.expires_at else None, record.source,
    )


def _vector(record: MemoryRecord) -> np.ndarray:
    if record.embedding is None:
        raise StoreError(f"record {record.id} has no embedding")
    return np.asarray(record.embedding, dtype=np.float32)


def connect(url: str) -> Connection:
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError as exc:
        raise StoreError(f"cannot connect to PostgreSQL: {' '.join(str(exc).split())}") from None
    return conn


def _hung_up(conn: Connection) -> bool:
    """Whether an idle connection was ended by the server while no call used it (a restart between calls).
    Nothing arrives on an idle connection unasked except such an end, or the rare notice, so only a
    connection with something to read is asked, with one round trip, whether it still answers."""
    if conn.info.transaction_status != TransactionStatus.IDLE:
        return False  # mid-transaction: the call using it finds out itself
    if not _readable(conn.fileno()):
        return False
    try:
        conn.execute("SELECT 1")
    except psycopg.Error:
        return True
    return False


def _readable(fd: int) -> bool:
    if hasattr(select, "poll"):  # poll, not select: a busy server process may have descriptors past select's 1024
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


def _lost(exc: psycopg.Error) -> bool:
    """Whether an error ended its connection: raised by the driver itself (no SQLSTATE: the server went away
    unannounced), a connection exception (class 08) or the server ending the session (57P01-57P03: terminated,
    crashed, shutting down)."""
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in ("57P01", "57P02", "57P03")


class _Link:
    """One of the store's connections, opened anew once it broke. psycopg never reconnects by itself: a killed
    backend or a restarted server would leave the store failing every call until it was reopened."""

    def __init__(self, open_connection: Callable[[], Connection], first: Connection | None = None) -> None:
        self._open = open_connection
        self._conn = first

    def get(self) -> Connection:
        """The connection, a new one in place of one that broke (in use, or idle: see `_hung_up`)."""
        conn = self._conn
        if conn is None or conn.closed or _hung_up(conn):
            if conn is not None:
                conn.close()
            conn = self._conn = self._open()
        return conn

    def discard(self) -> None:
        """Drop a connection a call lost: it may still look open (a pipeline cut off mid-batch leaves it
        'busy'), so the next `get` must not trust it."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(psycopg.Error):
                conn.close()

    def close(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()


class PostgresStore:
    def __init__(self, url: str, *, dimensions: int | None = None, max_term_docs: int = 500,
                 ef_search: int = 100, index_from: int = INDEX_FROM) -> None:
        self.url = url
        self.max_term_docs = max_term_docs
        self.index_from = index_from
        self._ef_search = ef_search
        conn = connect(url)
        try:
            migrate(conn, dimensions)
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"cannot prepare {url.split('@')[-1]} as an Ebbing store: {exc}") from None
        self._ready(conn)
        self._main = _Link(self._open, conn)
        # `keyword_search` alone, on another thread; a search asks `search_candidates` on the main connection, so
        # this one is opened only if something calls `keyword_search` by itself.
        self._reader = _Link(self._open)
        self._sweeper = _Link(self._open)  # opened by the first in-database sweep
        self._lock = threading.RLock()
        self._reader_lock = threading.Lock()
        # Which big scopes have their own HNSW index, and how wide their searches are (`postgres_scopes`).
        self.scopes = ScopeIndexes(url, self._rows, connect, index_from, ef_search)

    def _open(self) -> Connection:
        return self._ready(connect(self.url))

    def _ready(self, conn: Connection) -> Connection:
        try:
            self._prepare(conn)
        except psycopg.OperationalError as exc:
            conn.close()
            raise StoreError(f"cannot prepare a connection to PostgreSQL: {first_line(exc)}") from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _prepare(self, conn: Connection) -> None:
        info = TypeInfo.fetch(conn, "vector")
        if info is None:
            raise StoreError("the pgvector extension is missing: run CREATE EXTENSION vector as a superuser")
        dumper = type("VectorDumper", (_VectorDumper,), {"oid": info.oid})
        conn.adapters.register_dumper(np.ndarray, dumper)
        conn.adapters.register_loader(info.oid, _VectorLoader)
        conn.adapters.register_loader(info.oid, _VectorBinaryLoader)
        conn.execute(f"SET hnsw.ef_search = {int(self._ef_search)}")
        # The backend of a killed process then ends within a second, even while it waits for a lock, instead of
        # holding its transaction's locks (a sweep chunk's claim among them) until that statement is done.
        # PostgreSQL before 14, or a platform without the check, refuses the setting: such backends end later.
        with suppress(psycopg.errors.UndefinedObject, psycopg.errors.InvalidParameterValue):
            conn.execute(f"SET client_connection_check_interval = {CLIENT_CHECK_MS}")

    def sweep_connection(self) -> Connection:
        """A connection of its own for in-database sweeps, whose chunk transactions run while this store's
        main connection notes archive intents."""
        return self._sweeper.get()

    # -- plumbing ------------------------------------------------------------------------------------

    @contextmanager
    def _guard(self, *links: _Link) -> Iterator[None]:
        """Turn the server's operational failures into a `StoreError` with a one-line message. The connections
        the call used (`links`, default the main one) are dropped when it lost them, and opened anew by their
        next use (`_Link`), so only the interrupted call fails."""
        try:
            yield
        except psycopg.OperationalError as exc:
            if _lost(exc):
                for link in links or (self._main,):
                    link.discard()
                raise StoreError(f"lost the connection to PostgreSQL mid-call ({first_line(exc)}): what the call "
                                 "had not committed is rolled back, and the next call reconnects",
                                 transient=True) from None
            raise StoreError(f"PostgreSQL could not finish the call: {first_line(exc)}") from None

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with self._lock, self._guard():
            conn = self._main.get()
            with conn.transaction():
                yield conn

    def _rows(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> list[tuple[Any, ...]]:
        """The rows of one statement on the main connection; `binary` rows for reads of vectors."""
        with self._lock, self._guard():
            return self._main.get().execute(sql.encode(), params, binary=binary).fetchall()

    @staticmethod
    def insert_events(conn: Connection, tenant: str, events: Sequence[Event]) -> None:
        if not events:
            return
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO events (tenant, memory_id, at, type, actor, reason, data) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [(tenant, e.memory_id, e.at.timestamp(), e.type, e.actor, e.reason, Jsonb(e.data)) for e in events])

    # -- writes --------------------------------------------------------------------------------------

    def insert(self, records: Sequence[MemoryRecord], terms: Sequence[list[str]], events: Sequence[Event], *,
               facts: Sequence[FactRow] = (), closings: Sequence[Closing] = (),
               secrets: Sequence[SealedSecret] = (), reviews: Sequence[ReviewRow] = ()) -> None:
        if not records:
            return
        if len(records) != len(terms):
            raise StoreError("insert needs one list of terms per record")
        columns = ", ".join((*WRITABLE, "jitter", "terms", "embedding"))
        marks = ", ".join(["%s"] * (len(WRITABLE) + 3))
        tenant_of = {r.id: r.tenant for r in records}
        with self._write() as conn, conn.cursor() as cursor:
            cursor.executemany(f"INSERT INTO memories ({columns}) VALUES ({marks})".encode(), [
                (*row_values(r), jitter(r.id), list(words), _vector(r))
                for r, words in zip(records, terms, strict=True)])
            _write_facts(cursor, records[0].tenant, tenant_of, facts, closings)
            cursor.executemany(
                "INSERT INTO secrets VALUES (%s, %s, %s, %s, %s)",
                [(tenant_of.get(x.memory_id, records[0].tenant), x.memory_id, x.placeholder, x.kind, x.ciphertext)
                 for x in secrets])
            _write_reviews(cursor, reviews)
            by_tenant: dict[str, list[Event]] = {}
            for event in events:
                by_tenant.setdefault(tenant_of.get(event.memory_id, records[0].tenant), []).append(event)
            for tenant, tenant_events in by_tenant.items():
                self.insert_events(conn, tenant, tenant_events)

    def replace(self, record: MemoryRecord, terms: list[str] | None, events: Sequence[Event], *,
                secrets: Sequence[SealedSecret] = (), facts: Sequence[FactRow] = (),
                closings: Sequence[Closing] = (), reviews: Sequence[ReviewRow] = ()) -> None:
        values = dict(zip(WRITABLE, row_values(record), strict=True))
        changing = [name for name in WRITABLE if name not in ("id", "tenant", "created_at")]
        sets = [f"{name} = %s" for name in changing]
        params = [values[name] for name in changing]
        if terms is not None:
            sets += ["terms = %s", "embedding = %s"]
            params += [list(terms), _vector(record)]
        with self._write() as conn:
            found = conn.execute(f"UPDATE memories SET {', '.join(sets)} WHERE tenant = %s AND id = %s "
                                 "RETURNING seq".encode(), (*params, record.tenant, record.id)).fetchone()
            if found is None:
                raise StoreError(f"record {record.id} vanished during the update")
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO secrets VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant, memory_id, placeholder) "
                    "DO UPDATE SET kind = excluded.kind, ciphertext = excluded.ciphertext",
                    [(record.tenant, x.memory_id, x.placeholder, x.kind, x.ciphertext) for x in secrets])
                _write_facts(cursor, record.tenant, {}, facts, closings)
                _write_reviews(cursor, reviews)
            self.insert_events(conn, record.tenant, events)

    def record_access(self, tenant: str, ids: Sequence[str], at: float, window: float, actor: str) -> set[str]:
        if not ids:
            return set()
        # One statement (the counts and their events), so one round trip and its own transaction instead of five.
        # Every search that returns something commits here, so its commit does not wait for the WAL to reach the
        # disk (set_config, local to this transaction): a crash of the server may lose the last fraction of a
        # second of use counts, never anything else and never consistency, as the SQLite store's
        # synchronous=NORMAL may on a power cut.
        rows = self._rows(
            "WITH counted AS (UPDATE memories SET access_count = access_count + 1, last_accessed_at = %s "
            "WHERE tenant = %s AND id = ANY(%s) AND (last_accessed_at IS NULL OR %s - last_accessed_at >= %s) "
            "RETURNING id, access_count), "
            "logged AS (INSERT INTO events (tenant, memory_id, at, type, actor, reason, data) SELECT %s, id, %s, "
            "'access', %s, 'returned by search', jsonb_build_object('access_count', access_count) FROM counted) "
            "SELECT id, set_config('synchronous_commit', 'off', true) FROM counted",
            (at, tenant, list(ids), at, window, tenant, when(at).timestamp(), actor))  # the time as an Event has it
        return {row[0] for row in rows}

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = %s", (key,))
        return None if not rows else str(rows[0][0])

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                         (key, value))

    # -- reads ---------------------------------------------------------------------------------------

    def get(self, tenant: str, memory_id: str) -> MemoryRecord | None:
        rows = self._rows(f"SELECT {COLUMNS}, m.embedding FROM memories m WHERE m.tenant = %s AND m.id = %s",
                          (tenant, memory_id), binary=True)
        return record_from_row(rows[0], rows[0][VECTOR]) if rows else None

    def keyword_search(self, scope: Scope, terms: Sequence[str], limit: int, filters: dict[str, Any] | None
                       ) -> list[int]:
        """Live records holding any of the terms, best BM25 first (`ebbing.store.postgres_search`)."""
        query = keyword_sql(scope, terms, limit, filters, self.max_term_docs)
        if query is None:
            return []
        with self._reader_lock, self._guard(self._reader):
            rows = self._reader.get().execute(query[0].encode(), query[1]).fetchall()
        return [row[0] for row in rows]

    def vector_search(self, scope: Scope, vector: np.ndarray, limit: int, filters: dict[str, Any] | None) -> list[int]:
        width = self.scopes.width(scope)
        query = vector_sql(scope, vector, limit, filters, indexed=width is not None)
        return [row[0] for row in self._search_rows(width, *query)]

    def _search_rows(self, width: int | None, sql: str, params: Sequence[Any], *, binary: bool = False
                     ) -> list[tuple[Any, ...]]:
        """A search statement's rows; a scope wider than the store's base width searches its graph that wide, in
        a transaction of its own (`SET LOCAL`), so the next search starts from the base width again."""
        if width is None or width == self._ef_search:
            return self._rows(sql, params, binary=binary)
        with self._lock, self._guard():
            conn = self._main.get()
            with conn.transaction():
                conn.execute(f"SET LOCAL hnsw.ef_search = {int(width)}")
                return conn.execute(sql.encode(), params, binary=binary).fetchall()

    def candidates(self, keys: Sequence[int]) -> list[Candidate]:
        if not keys:
            return []
        return _candidates(self._rows(candidates_sql("SELECT unnest(%s::bigint[])"), ([int(k) for k in keys],),
                                      binary=True))

    def search_candidates(self, scope: Scope, terms: Sequence[str], vector: np.ndarray, limit: int,
                          filters: dict[str, Any] | None) -> list[Candidate]:
        """`candidates` of what `vector_search` and `keyword_search` find, in one statement: one round trip."""
        width = self.scopes.width(scope)
        return _candidates(self._search_rows(width, *search_sql(scope, terms, vector, limit, filters,
                                                                self.max_term_docs, indexed=width is not None),
                                             binary=True))

    def fetch(self, keys: Sequence[int]) -> dict[int, MemoryRecord]:
        if not keys:
            return {}
        rows = self._rows(f"SELECT {COLUMNS}, m.embedding FROM memories m WHERE m.seq = ANY(%s)",
                          ([int(k) for k in keys],), binary=True)
        return {row[0]: record_from_row(row, row[VECTOR]) for row in rows}

    def history(self, tenant: str, memory_id: str) -> list[Event]:
        rows = self._rows("SELECT seq, memory_id, type, at, actor, reason, data FROM events "
                          "WHERE tenant = %s AND memory_id = %s ORDER BY seq", (tenant, memory_id))
        return _events(rows)

    def stats(self, tenant: str, user_id: str | None) -> dict[str, Any]:
        where, params = "tenant = %s", [tenant]
        if user_id is not None:
            where += " AND user_id = %s"
            params.append(user_id)
        by_tier = dict(self._rows(f"SELECT tier, count(*) FROM memories WHERE {where} GROUP BY tier", params))
        by_tier["cold"] = self._rows(f"SELECT count(*) FROM archive_index WHERE {where}", params)[0][0]
        by_kind = dict(self._rows(f"SELECT kind, count(*) FROM (SELECT kind FROM memories WHERE {where} UNION ALL "
                                  f"SELECT kind FROM archive_index WHERE {where}) k GROUP BY kind", params * 2))
        return {"total": sum(by_tier.values()), "by_tier": {t.value: by_tier.get(t.value, 0) for t in Tier},
                "by_kind": {k.value: by_kind.get(k.value, 0) for k in Kind}}

    def users(self, tenant: str) -> dict[str | None, int]:
        """Every user of a tenant with how many records they have in any tier (None: records of no user)."""
        rows = self._rows("SELECT user_id, count(*) FROM (SELECT user_id FROM memories WHERE tenant = %s UNION ALL "
                          "SELECT user_id FROM archive_index WHERE tenant = %s) u GROUP BY user_id "
                          "ORDER BY user_id COLLATE \"C\" NULLS FIRST", (tenant, tenant))
        return {user: int(count) for user, count in rows}

    def scan(self, tenant: str, user_id: str | None) -> Iterator[MemoryRecord]:
        where, params = "m.tenant = %s", [tenant]
        if user_id is not None:
            where += " AND m.user_id = %s"
            params.append(user_id)
        last = 0
        while True:  # page by key so a long export holds no lock and no giant result set
            rows = self._rows(f"SELECT {COLUMNS}, m.embedding FROM memories m WHERE {where} AND m.seq > %s "
                              "ORDER BY m.seq LIMIT 500", (*params, last), binary=True)
            if not rows:
                return
            for row in rows:
                yield record_from_row(row, row[VECTOR])
            last = rows[-1][0]

    # -- lifecycle: tiers, archive, trash, purge -------------------------------------------------------

    def sweep_rows(self, tenant: str, user_id: str | None, source: str, after: int, limit: int,
                   window: tuple[int, int, int] | None = None) -> SweepRows | None:
        live = source == "live"
        table, tier = ("memories", f"tier IN {LIVE}") if live else ("archive_index", "true")
        where, params = f"tenant = %s AND {tier} AND seq > %s", [tenant, after]
        if user_id is not None:
            where += " AND user_id = %s"
            params.append(user_id)
        if window is not None:
            where += " AND " + window_sql(window)
        tier_column = "tier" if live else "'cold'"
        rows = self._rows(f"SELECT seq, id, user_id, {tier_column}, {', '.join(RETENTION_COLUMNS)} FROM {table} "
                          f"WHERE {where} ORDER BY seq LIMIT %s", (*params, limit))
        if not rows:
            return None
        return SweepRows(np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows], [r[2] for r in rows],
                         [r[3] for r in rows], RecordBatch.from_rows([r[4:] for r in rows]))

    def demote(self, tenant: str, moves: Sequence[tuple[int, str | None, Tier]], events: Sequence[Event],
               at: float) -> None:
        with self._write() as conn:
            conn.execute("UPDATE memories m SET tier = v.tier, trashed_at = CASE WHEN v.tier = 'trash' THEN %s "
                         "ELSE m.trashed_at END FROM unnest(%s::bigint[], %s::text[]) v(seq, tier) "
                         "WHERE m.tenant = %s AND m.seq = v.seq",
                         (at, [int(s) for s, _, _ in moves], [to.value for _, _, to in moves], tenant))
            self.insert_events(conn, tenant, events)

    def promote(self, tenant: str, memory_id: str, to: Tier, terms: list[str] | None, events: Sequence[Event]) -> None:
        with self._write() as conn:
            row = conn.execute("SELECT seq, tier FROM memories WHERE tenant = %s AND id = %s FOR UPDATE",
                               (tenant, memory_id)).fetchone()
            if row is None:
                raise StoreError(f"record {memory_id} vanished before it could move")
            if row[1] == Tier.TRASH.value and terms is not None:
                conn.execute("UPDATE memories SET tier = %s, trashed_at = NULL, terms = %s WHERE tenant = %s "
                             "AND seq = %s", (to.value, terms, tenant, row[0]))
            else:
                conn.execute("UPDATE memories SET tier = %s, trashed_at = NULL WHERE tenant = %s AND seq = %s",
                             (to.value, tenant, row[0]))
            self.insert_events(conn, tenant, events)

    def intent(self, file: str, state: str) -> None:
        """Note a file change before making it, with this connection's backend as its owner."""
        with self._write() as conn:
            conn.execute("INSERT INTO archive_files VALUES (%s, %s, pg_backend_pid()) ON CONFLICT (file) "
                         "DO UPDATE SET state = excluded.state, owner = excluded.owner", (file, state))

    def intents(self) -> list[tuple[str, str]]:
        """Intents whose owner is gone (a crashed process): a live worker's file in progress is not listed."""
        return [(r[0], r[1]) for r in self._rows(
            "SELECT file, state FROM archive_files WHERE owner IS NULL OR owner = pg_backend_pid() OR owner NOT IN "
            "(SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)")]

    def clear_intent(self, file: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM archive_files WHERE file = %s", (file,))

    def archive_move(self, tenant: str, file: str, seqs: Sequence[int], events: Sequence[Event], at: float) -> None:
        with self._write() as conn:
            archive_rows(conn, tenant, file, seqs, at)
            self.insert_events(conn, tenant, events)

    def cold(self, tenant: str, ids: Sequence[str]) -> dict[str, tuple[str, int, dict[str, Any]]]:
        if not ids:
            return {}
        rows = self._rows("SELECT id, file, seq, pinned, held, priority FROM archive_index WHERE tenant = %s AND "
                          "id = ANY(%s)", (tenant, list(ids)))
        return {r[0]: (r[1], r[2], {"pinned": bool(r[3]), "held": bool(r[4]), "priority": Priority(r[5])})
                for r in rows}

    def cold_version(self, tenant: str, user_id: str | None) -> tuple[int, int]:
        user, user_params = user_clause(user_id)
        rows = self._rows(f"SELECT count(*), coalesce(sum(seq), 0) FROM archive_index WHERE tenant = %s AND {user}",
                          [tenant, *user_params])
        return int(rows[0][0]), int(rows[0][1])

    def cold_files(self, tenant: str, user_id: str | None, *, every_user: bool = False) -> dict[str, list[str]]:
        where, params = "tenant = %s", [tenant]
        if not every_user:
            user, user_params = user_clause(user_id)
            where += f" AND {user}"
            params += user_params
        out: dict[str, list[str]] = {}
        for file, id_ in self._rows(f"SELECT file, id FROM archive_index WHERE {where} ORDER BY seq", params):
            out.setdefault(file, []).append(id_)
        return out

    def set_cold_flags(self, tenant: str, memory_id: str, flags: dict[str, Any], events: Sequence[Event]) -> None:
        assert set(flags) <= {"pinned", "held", "priority"}
        values = [v.value if isinstance(v, Priority) else bool(v) for v in flags.values()]
        with self._write() as conn:
            conn.execute(f"UPDATE archive_index SET {', '.join(f'{k} = %s' for k in flags)} "
                         "WHERE tenant = %s AND id = %s".encode(), (*values, tenant, memory_id))
            self.insert_events(conn, tenant, events)

    def replace_file(self, tenant: str, old: str, new: str | None, leaving: Sequence[str],
                     reinstated: Sequence[tuple[MemoryRecord, int, list[str] | None]], events: Sequence[Event],
                     at: float, *, keep_file: bool = False) -> None:
        columns = ", ".join(("seq", *WRITABLE, "jitter", "trashed_at", "terms", "embedding"))
        marks = ", ".join(["%s"] * (len(WRITABLE) + 5))
        with self._write() as conn, conn.cursor() as cursor:
            if leaving:
                conn.execute("DELETE FROM archive_index WHERE tenant = %s AND id = ANY(%s)", (tenant, list(leaving)))
            if new is not None:
                conn.execute("UPDATE archive_index SET file = %s WHERE tenant = %s AND file = %s", (new, tenant, old))
                conn.execute("DELETE FROM archive_files WHERE file = %s", (new,))
            cursor.executemany(f"INSERT INTO memories ({columns}) VALUES ({marks})".encode(), [
                (int(seq), *row_values(record), jitter(record.id), at if record.tier is Tier.TRASH else None,
                 list(words or []), _vector(record))
                for record, seq, words in reinstated])
            if keep_file:  # no owner: any process's next compaction takes it
                conn.execute("INSERT INTO archive_files VALUES (%s, 'stale', NULL) ON CONFLICT (file) "
                             "DO UPDATE SET state = 'stale', owner = NULL", (old,))
            else:
                conn.execute("INSERT INTO archive_files VALUES (%s, 'deleting', pg_backend_pid()) ON CONFLICT (file) "
                             "DO UPDATE SET state = 'deleting', owner = excluded.owner", (old,))
            self.insert_events(conn, tenant, events)

    def indexed_in(self, file: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._rows("SELECT tenant, id FROM archive_index WHERE file = %s", (file,))]

    def seq_of(self, tenant: str, memory_id: str) -> int | None:
        rows = self._rows("SELECT seq FROM memories WHERE tenant = %s AND id = %s", (tenant, memory_id))
        return None if not rows else int(rows[0][0])

    def where_held(self, tenant: str, ids: Sequence[str]) -> dict[str, tuple[Tier, bool]]:
        rows = self._rows("SELECT id, tier, held FROM memories WHERE tenant = %s AND id = ANY(%s) UNION ALL "
                          "SELECT id, 'cold', held FROM archive_index WHERE tenant = %s AND id = ANY(%s)",
                          (tenant, list(ids), tenant, list(ids)))
        return {id_: (Tier(tier), bool(held)) for id_, tier, held in rows}

    def sweep_live(self, tenant: str, user_id: str | None, at: float, config: Any, *, window: Any, dry_run: bool,
                   batch_size: int, archive: Any, event: Any) -> tuple[int, list[Any]]:
        """Score and move the live records inside the database (see `ebbing.store.postgres_sweep`)."""
        from ebbing.store.postgres_sweep import DatabaseSweep

        sweep = DatabaseSweep(self, tenant, user_id, at, config, window, batch_size, archive, event)
        # A chunk cut off mid-way is rolled back whole; the next sweep takes it again.
        with self._guard(self._main, self._sweeper):
            return sweep.preview() if dry_run else sweep.run()

    @contextmanager
    def sweep_lock(self, tenant: str) -> Iterator[bool]:
        """Whether this worker may do the tenant's archive pass now (a session advisory lock, not waited for)."""
        conn = self.sweep_connection()
        with self._guard(self._sweeper):
            row = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (f"ebbing-archive:{tenant}",)).fetchone()
        held = bool(row and row[0])
        try:
            yield held
        finally:
            if held and not conn.closed:  # a connection that broke took its session's lock with it
                with self._guard(self._sweeper):
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (f"ebbing-archive:{tenant}",))

    # -- facts and secrets ---------------------------------------------------------------------------

    def current_facts(self, tenant: str, user_id: str | None) -> list[FactRow]:
        user, params = user_clause(user_id)
        return self._facts(f"tenant = %s AND {user} AND valid_to IS NULL", [tenant, *params])

    def timeline(self, tenant: str, root: str) -> list[FactRow]:
        return self._facts("tenant = %s AND root = %s", [tenant, root])

    def facts_of(self, tenant: str, memory_ids: Sequence[str]) -> list[FactRow]:
        return self._facts("tenant = %s AND memory_id = ANY(%s)", [tenant, list(memory_ids)]) if memory_ids else []

    def user_facts(self, tenant: str, user_id: str | None) -> list[FactRow]:
        user, params = user_clause(user_id)
        return self._facts(f"tenant = %s AND {user}", [tenant, *params])

    # -- reviews -------------------------------------------------------------------------------------

    def reviews(self, tenant: str, status: str | None, user_id: str | None, *, every_user: bool,
                limit: int) -> list[ReviewRow]:
        where, params = ["tenant = %s"], list[Any]([tenant])
        if status is not None:
            where.append("status = %s")
            params.append(status)
        if not every_user:
            user, user_params = user_clause(user_id)
            where.append(user)
            params += user_params
        return self._reviews(f"{' AND '.join(where)} ORDER BY created_at, id COLLATE \"C\" LIMIT %s",
                             [*params, limit])

    def get_review(self, tenant: str, review_id: str) -> ReviewRow | None:
        found = self._reviews("tenant = %s AND id = %s", [tenant, review_id])
        return found[0] if found else None

    def decide_review(self, tenant: str, review_id: str, status: str, at: float, actor: str, note: str,
                      events: Sequence[Event], *, facts: Sequence[FactRow] = (),
                      closings: Sequence[Closing] = ()) -> bool:
        try:
            with self._write() as conn:
                changed = conn.execute(b"UPDATE reviews SET status = %s, decided_at = %s, decided_by = %s, note = %s "
                                       b"WHERE tenant = %s AND id = %s AND status = 'pending'",
                                       (status, at, actor, note, tenant, review_id)).rowcount
                if changed != 1 or not all(conn.execute(
                        b"SELECT 1 FROM facts WHERE tenant = %s AND memory_id = %s AND slot = %s AND valid_to IS NULL",
                        (tenant, c.memory_id, c.slot)).fetchone() for c in closings):
                    raise _Undecided
                with conn.cursor() as cursor:
                    _write_facts(cursor, tenant, {}, facts, closings)
                self.insert_events(conn, tenant, events)
        except _Undecided:
            return False  # the transaction rolled back: nothing written
        return True

    def _reviews(self, where: str, params: list[Any]) -> list[ReviewRow]:
        rows = self._rows(f"SELECT {', '.join(REVIEW_COLUMNS)} FROM reviews WHERE {where}", params)
        return [review_from(dict(zip(REVIEW_COLUMNS, row, strict=True))) for row in rows]

    def _facts(self, where: str, params: list[Any]) -> list[FactRow]:
        rows = self._rows("SELECT memory_id, slot, subject, attribute, value, reason, valid_from, valid_to, "
                          f"superseded_by, supersedes, root, user_id FROM facts WHERE {where} "
                          "ORDER BY valid_from, memory_id COLLATE \"C\"", params)
        return [FactRow(*row) for row in rows]

    def essentials(self, tenant: str, user_id: str | None, limit: int) -> list[MemoryRecord]:
        user, params = user_clause(user_id, "m.user_id")
        return self._records(f"m.tenant = %s AND {user} AND m.tier IN {LIVE} AND (m.pinned OR m.priority = 'P0') "
                             "ORDER BY m.importance DESC, m.seq DESC LIMIT %s", [tenant, *params, limit])

    def live_of_kind(self, tenant: str, user_id: str | None, kind: str, limit: int) -> list[MemoryRecord]:
        user, params = user_clause(user_id, "m.user_id")
        return self._records(f"m.tenant = %s AND {user} AND m.tier IN {LIVE} AND m.kind = %s "
                             "ORDER BY m.seq DESC LIMIT %s", [tenant, *params, kind, limit])

    def latest(self, tenant: str, user_id: str | None, session_id: str | None, limit: int) -> list[MemoryRecord]:
        user, params = user_clause(user_id, "m.user_id")
        session = " AND m.session_id = %s" if session_id is not None else ""
        return self._records(f"m.tenant = %s AND {user} AND m.tier IN {LIVE} AND m.kind != 'summary'{session} "
                             "ORDER BY m.created_at DESC, m.seq DESC LIMIT %s",
                             [tenant, *params, *([session_id] if session_id is not None else []), limit])

    def session_turns(self, tenant: str, user_id: str | None, session_id: str, *, unconsolidated: bool,
                      limit: int = 100_000) -> list[MemoryRecord]:
        user, params = user_clause(user_id, "m.user_id")
        extra = " AND m.metadata ->> 'consolidated_into' IS NULL" if unconsolidated else ""
        rows = self._records(f"m.tenant = %s AND {user} AND m.session_id = %s AND m.tier IN {LIVE} "
                             f"AND m.kind != 'summary'{extra} ORDER BY m.created_at DESC, m.seq DESC LIMIT %s",
                             [tenant, *params, session_id, limit])
        return rows[::-1]

    def _records(self, where: str, params: list[Any]) -> list[MemoryRecord]:
        rows = self._rows(f"SELECT {COLUMNS}, m.embedding FROM memories m WHERE {where}", params, binary=True)
        return [record_from_row(row, row[VECTOR]) for row in rows]

    def mark_consolidated(self, tenant: str, ids: Sequence[str], summary_id: str) -> None:
        with self._write() as conn:
            conn.execute("UPDATE memories SET metadata = jsonb_set(metadata, '{consolidated_into}', "
                         "to_jsonb(%s::text)) WHERE tenant = %s AND id = ANY(%s)", (summary_id, tenant, list(ids)))

    def add_events(self, tenant: str, events: Sequence[Event]) -> None:
        with self._write() as conn:
            self.insert_events(conn, tenant, events)

    def sealed(self, tenant: str, memory_id: str) -> list[SealedSecret]:
        rows = self._rows(
            "SELECT s.memory_id, s.placeholder, s.kind, s.ciphertext FROM secrets s WHERE s.tenant = %s AND "
            "s.memory_id = %s AND (EXISTS (SELECT 1 FROM memories m WHERE m.tenant = s.tenant AND m.id = s.memory_id) "
            "OR EXISTS (SELECT 1 FROM archive_index a WHERE a.tenant = s.tenant AND a.id = s.memory_id)) "
            "ORDER BY s.placeholder", (tenant, memory_id))
        return [SealedSecret(r[0], r[1], r[2], bytes(r[3])) for r in rows]

    def reinforce(self, tenant: str, memory_id: str, count: int, at: float, events: Sequence[Event], *,
                  source_id: str | None = None) -> None:
        with self._write() as conn:
            conn.execute("UPDATE memories SET access_count = access_count + %s, last_accessed_at = "
                         "greatest(coalesce(last_accessed_at, 0), %s), source_ids = CASE WHEN %s::text IS NULL "
                         "THEN source_ids ELSE array_append(source_ids, %s::text) END WHERE tenant = %s AND id = %s",
                         (count, at, source_id, source_id, tenant, memory_id))
            self.insert_events(conn, tenant, events)

    def expired_trash(self, tenant: str, before: float, user_id: str | None = None) -> list[str]:
        where, params = "tenant = %s AND tier = 'trash' AND NOT held AND trashed_at <= %s", [tenant, before]
        if user_id is not None:
            where += " AND user_id = %s"
            params.append(user_id)
        return [r[0] for r in self._rows(f"SELECT id FROM memories WHERE {where} ORDER BY seq", params)]

    def user_ids(self, tenant: str, user_id: str | None) -> tuple[list[str], list[str]]:
        user, params = user_clause(user_id)
        live = [r[0] for r in self._rows(f"SELECT id FROM memories WHERE tenant = %s AND {user} ORDER BY seq",
                                         [tenant, *params])]
        cold = [r[0] for r in self._rows(f"SELECT id FROM archive_index WHERE tenant = %s AND {user} ORDER BY seq",
                                         [tenant, *params])]
        return live, cold

    def purge(self, tenant: str, ids: Sequence[str], events: Sequence[Event]) -> None:
        with self._write() as conn:
            scopes = {(tenant, row[0]) for row in conn.execute(
                b"SELECT DISTINCT user_id FROM memories WHERE tenant = %s AND id = ANY(%s)", (tenant, list(ids)))}
            for table, column in (("memories", "id"), ("archive_index", "id"), ("facts", "memory_id"),
                                  ("secrets", "memory_id")):
                conn.execute(f"DELETE FROM {table} WHERE tenant = %s AND {column} = ANY(%s)".encode(),
                             (tenant, list(ids)))
            # A review's plan holds the values it would write: it goes with either of its two records.
            conn.execute(b"DELETE FROM reviews WHERE tenant = %s AND (memory_id = ANY(%s) OR incumbent = ANY(%s))",
                         (tenant, list(ids), list(ids)))
            # Reasons are free text ("forget(reason=...)") and may name the person; they go with the record.
            conn.execute(b"UPDATE events SET reason = '' WHERE tenant = %s AND memory_id = ANY(%s)",
                         (tenant, list(ids)))
            self.insert_events(conn, tenant, events)
        self.scopes.drop_emptied(scopes)

    def scrub(self) -> None:
        """Vacuum the tables that held erased rows, so their dead tuples are no longer reachable."""
        with self._lock, self._guard():
            self._main.get().execute("VACUUM memories, archive_index, facts, secrets, events, reviews")

    def events_since(self, tenant: str, types: Sequence[str], since: float) -> list[Event]:
        rows = self._rows("SELECT seq, memory_id, type, at, actor, reason, data FROM events "
                          "WHERE tenant = %s AND type = ANY(%s) AND at >= %s ORDER BY seq",
                          (tenant, list(types), since))
        return _events(rows)

    def events_after(self, tenant: str, after: int, types: Sequence[str], limit: int) -> list[Event]:
        rows = self._rows("SELECT seq, memory_id, type, at, actor, reason, data FROM events "
                          "WHERE tenant = %s AND seq > %s AND type = ANY(%s) ORDER BY seq LIMIT %s",
                          (tenant, after, list(types), limit))
        return _events(rows)

    def close(self) -> None:
        with self._lock, self._reader_lock:
            for link in (self._reader, self._main, self._sweeper):
                link.close()


def _candidates(rows: Sequence[Sequence[Any]]) -> list[Candidate]:
    return [Candidate(row[0], row[1], list(row[2]), row[3], tuple(row[5:]), stale=bool(row[4])) for row in rows]


def _events(rows: Sequence[Sequence[Any]]) -> list[Event]:
    return [Event(memory_id=r[1], type=r[2], at=when(r[3]), actor=r[4], reason=r[5], data=dict(r[6]), seq=r[0])
            for r in rows]


if TYPE_CHECKING:  # mypy checks here that the PostgreSQL store implements every store protocol
    _implements: type[FullStore] = PostgresStore


class _Undecided(Exception):
    """A review was decided elsewhere, or a value it would close changed, inside `decide_review`'s transaction."""


def _write_reviews(cursor: psycopg.Cursor[Any], reviews: Sequence[ReviewRow]) -> None:
    marks = ", ".join("%s::jsonb" if c == "plan" else "%s" for c in REVIEW_COLUMNS)
    cursor.executemany(f"INSERT INTO reviews ({', '.join(REVIEW_COLUMNS)}) VALUES ({marks})".encode(),
                       [review_values(r) for r in reviews])


def _write_facts(cursor: psycopg.Cursor[Any], tenant: str, tenant_of: dict[str, str], facts: Sequence[FactRow],
                 closings: Sequence[Closing]) -> None:
    """Close the values that ended (first: a corrected record closes its own old value of a slot before it
    states the new one) and add the new ones."""
    cursor.executemany(
        "UPDATE facts SET valid_to = %s, superseded_by = %s "
        "WHERE tenant = %s AND memory_id = %s AND slot = %s AND valid_to IS NULL",
        [(c.valid_to, c.superseded_by, tenant, c.memory_id, c.slot) for c in closings])
    cursor.executemany(
        "INSERT INTO facts (tenant, memory_id, slot, user_id, subject, attribute, value, reason, valid_from, "
        "valid_to, superseded_by, supersedes, root) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        [(tenant_of.get(f.memory_id, tenant), f.memory_id, f.slot, f.user_id, f.subject, f.attribute, f.value,
          f.reason, f.valid_from, f.valid_to, f.superseded_by, f.supersedes, f.root or f.memory_id) for f in facts])
