"""Sweeps inside PostgreSQL: the retention score as an SQL expression, tier moves as set-based statements.

The score is the sweep's `Composite` (`ebbing.retention.composite`) spelled as one SQL expression: each policy
renders its own part (`SqlPolicy.sql`, next to its numpy twin: Ebbinghaus decay, importance, the priority gate),
with the configuration's numbers written in as literals, so rows are scored next to the data instead of
travelling to Python (a test holds the SQL against the Python policies). When a policy has no SQL form the
sweep scores in Python instead (`DatabaseSweep.ran_in == "python"`, with a warning naming the policy): each
chunk's rows are read and locked, scored with the composite in numpy (`store.moves.plan`, as the SQLite sweep
does) and moved with the same statements, so the moves, their reasons and the multi-worker safety are the same.

Several worker processes may sweep one tenant at once. The first to arrive plans the sweep: it cuts the
tenant's live keys into chunks of `batch_size` rows (`sweep_chunks`). Every worker then claims chunks with
`FOR UPDATE SKIP LOCKED`, so no chunk is swept twice, and inside its chunk's transaction:
- moves hot -> warm and live -> trash with one `UPDATE ... RETURNING` (the returned rows become audit events);
- locks the rows bound for the cold tier, writes them to Parquet (noted first as an intent), then indexes
  them in `archive_index` and deletes them from `memories`, so a row leaves the table only once its file is
  durable;
- marks the chunk done. A worker that dies rolls its chunk back (its backend notices a killed client within
  a second, even while it waits for a lock: `CLIENT_CHECK_MS` in `ebbing.store.postgres`); another one claims
  it again. A lost connection fails the sweep with a `StoreError`; the next sweep reconnects and does the rest.
Cold records (whose moves rewrite Parquet files) and purges stay in Python, done by one worker at a time
(`sweep_lock`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ebbing.model import Event, MemoryRecord, Tier
from ebbing.retention.base import RETENTION_COLUMNS, RecordBatch
from ebbing.retention.composite import TIER_OF_CODE, Composite
from ebbing.retention.config import RetentionConfig
from ebbing.retention.sql import placement_sql
from ebbing.store.base import ArchiveWriter, SweepRows
from ebbing.store.moves import Change, plan, reasons, sql_fallback
from ebbing.store.postgres_rows import COLUMNS, VECTOR, archive_rows, record_from_row, window_sql

log = logging.getLogger(__name__)
LIVE = "('hot', 'warm')"
LOWEST_SEQ = -(2**63)  # below every bigint key: where paging starts
_warned: set[str] = set()  # fallback notes already logged as warnings by this process


def retention_sql(config: RetentionConfig, now: float, t: str = "m") -> str:
    """The configured composite retention score of row `t` at `now`, as an SQL expression: the same arithmetic,
    in the same order, as `Composite(config).score` (`Composite.sql`)."""
    return Composite(config).sql(t, now)


def _scored(score: str) -> str:
    """The score joined to each row as `r.score`. OFFSET 0 keeps the planner from pulling the subquery up: it
    would paste the long score expression into each of the tier code's comparisons, planning a chunk's
    statement 20 times slower (some 30 ms) and scoring every row four times."""
    return f"CROSS JOIN LATERAL (SELECT {score} AS score OFFSET 0) r"


def _columns(t: str) -> str:
    """The retention columns of row `t`, in RETENTION_COLUMNS order (what `RecordBatch.from_rows` reads)."""
    return ", ".join(f"{t}.{c}" for c in RETENTION_COLUMNS)


def _rank(column: str) -> str:
    return f"(CASE {column} WHEN 'hot' THEN 0 WHEN 'warm' THEN 1 WHEN 'trash' THEN 3 ELSE 2 END)"


class DatabaseSweep:
    """One worker's part of a sweep of one tenant (or user) at one instant.

    `retention` is the sweep's `Composite`, or a `RetentionConfig` for the configured one. `ran_in` says where
    the live records are scored: "database" (in SQL) or "python" (a policy has no SQL form; `note` says which)."""

    def __init__(self, store: Any, tenant: str, user_id: str | None, at: float,
                 retention: RetentionConfig | Composite, window: tuple[int, int, int] | None, batch_size: int,
                 archive: ArchiveWriter, event: Callable[[Change, float], Event]) -> None:

        self.composite = retention if isinstance(retention, Composite) else Composite(retention)
        self.store, self.tenant, self.at, self.config = store, tenant, at, self.composite.config
        self.batch_size, self.archive, self.event = batch_size, archive, event
        self.conn = store.sweep_connection()
        self.scope = f"x.tenant = %s AND x.tier IN {LIVE}"  # user None: the whole tenant
        self.user_params: list[Any] = []
        if user_id is not None:
            self.scope += " AND x.user_id = %s"
            self.user_params = [user_id]
        if window is not None:
            self.scope += " AND " + window_sql(window).replace("jitter", "x.jitter")
        self.key = f"{user_id}|{at!r}|{window}"
        self.note = sql_fallback(self.composite)
        self.ran_in = "python" if self.note else "database"
        self.score = self.code = ""
        if self.note is not None:
            # Said once per process as a warning (a periodic sweep would repeat it every round), then quietly.
            log.log(logging.INFO if self.note in _warned else logging.WARNING, "tenant %s: %s", tenant, self.note)
            _warned.add(self.note)
        else:
            # Every statement below binds parameters, where a bare % would read as a placeholder: a policy's own
            # SQL may hold one (the modulo operator).
            self.score = self.composite.sql("x", at).replace("%", "%%")
            self.code = placement_sql(self.config, at, "r.score", "x")

    def _params(self) -> list[Any]:
        return [self.tenant, *self.user_params]

    # -- dry run: decide, move nothing ------------------------------------------------------------------

    def preview(self) -> tuple[int, list[Change]]:
        if self.ran_in == "python":
            return self._preview_in_python()
        evaluated = self.store._rows(f"SELECT count(*) FROM memories x WHERE {self.scope}", self._params())[0][0]
        rows = self.store._rows(
            f"SELECT x.seq, x.id, x.user_id, x.tier, r.score, {self.code}, {_columns('x')} FROM memories x "
            f"{_scored(self.score)} "
            f"WHERE {self.scope} AND {self.code} > {_rank('x.tier')} ORDER BY x.seq", self._params())
        return int(evaluated), self._changes(rows)

    def _changes(self, rows: Sequence[Sequence[Any]]) -> list[Change]:
        """Changes for rows of (seq, id, user_id, from tier, score, code, *retention columns)."""
        if not rows:
            return []
        page = SweepRows(np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows],
                         [r[2] for r in rows], [r[3] for r in rows], RecordBatch.from_rows([r[6:] for r in rows]))
        scores = np.array([r[4] for r in rows], dtype=np.float64)
        codes = np.array([r[5] for r in rows], dtype=np.int8)
        why = reasons(self.composite, self.config, page, self.at, scores, codes, np.arange(len(rows)))
        return [Change(r[1], Tier(r[3]), TIER_OF_CODE[int(r[5])], round(float(r[4]), 4), why[i])
                for i, r in enumerate(rows)]

    def _preview_in_python(self) -> tuple[int, list[Change]]:
        """The dry run when a policy has no SQL: the scope's rows a page at a time, scored in Python."""
        evaluated, changes, after = 0, list[Change](), LOWEST_SEQ
        while rows := self.store._rows(
                f"SELECT x.seq, x.id, x.user_id, x.tier, {_columns('x')} FROM memories x WHERE {self.scope} "
                "AND x.seq > %s ORDER BY x.seq LIMIT %s", [*self._params(), after, self.batch_size]):
            evaluated += len(rows)
            after = int(rows[-1][0])
            changes += self._planned(rows)[1]
        return evaluated, changes

    def _planned(self, rows: Sequence[Sequence[Any]]) -> tuple[dict[str, int], list[Change]]:
        """The moves of rows of (seq, id, user_id, tier, *retention columns), decided in Python as the SQLite
        sweep decides them (`store.moves.plan`): each mover's seq by id, and the changes in seq order."""
        if not rows:
            return {}, []
        page = SweepRows(np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows],
                         [r[2] for r in rows], [r[3] for r in rows], RecordBatch.from_rows([r[4:] for r in rows]))
        moving, changes = plan(self.composite, page, self.at)
        return {c.id: int(page.seqs[i]) for i, c in zip(moving.tolist(), changes, strict=True)}, changes

    # -- the real thing -------------------------------------------------------------------------------

    def run(self) -> tuple[int, list[Change]]:
        self._plan()
        evaluated, changes = 0, list[Change]()
        while True:
            with self.conn.transaction():
                chunk = self.conn.execute(
                    "SELECT lo, hi FROM sweep_chunks WHERE tenant = %s AND key = %s AND NOT done ORDER BY lo "
                    "LIMIT 1 FOR UPDATE SKIP LOCKED", (self.tenant, self.key)).fetchone()
                if chunk is None:
                    return evaluated, changes
                chunk_of = self._chunk if self.ran_in == "database" else self._chunk_in_python
                count, moved = chunk_of(int(chunk[0]), chunk[1])
                self.conn.execute("UPDATE sweep_chunks SET done = true, evaluated = %s WHERE tenant = %s AND "
                                  "key = %s AND lo = %s", (count, self.tenant, self.key, chunk[0]))
            evaluated += count
            changes.extend(moved)

    def _plan(self) -> None:
        """Cut the scope's live keys into chunks, once per sweep: the first worker plans, the others wait for
        its plan and share it. A finished plan is planned afresh (a later sweep at the same instant)."""
        with self.conn.transaction():
            self.conn.execute("INSERT INTO sweep_runs (tenant, key) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                              (self.tenant, self.key))
            self.conn.execute("SELECT 1 FROM sweep_runs WHERE tenant = %s AND key = %s FOR UPDATE",
                              (self.tenant, self.key))
            row = self.conn.execute("SELECT count(*), count(*) FILTER (WHERE NOT done) FROM sweep_chunks "
                                    "WHERE tenant = %s AND key = %s", (self.tenant, self.key)).fetchone()
            assert row is not None
            if row[0] and row[1]:
                return  # a plan in progress: join it
            self.conn.execute("DELETE FROM sweep_chunks WHERE tenant = %s AND (key = %s OR done)",
                              (self.tenant, self.key))
            self.conn.execute("DELETE FROM sweep_runs r WHERE tenant = %s AND key <> %s AND NOT EXISTS "
                              "(SELECT 1 FROM sweep_chunks c WHERE c.tenant = r.tenant AND c.key = r.key)",
                              (self.tenant, self.key))
            # The first chunk starts at 0: a record restored from the archive keeps its old, smaller key.
            self.conn.execute(
                "INSERT INTO sweep_chunks (tenant, key, lo, hi) SELECT %s, %s, lo, lead(lo) OVER (ORDER BY lo) FROM "
                "(SELECT CASE WHEN n = 0 THEN 0 ELSE seq END AS lo FROM (SELECT x.seq, row_number() OVER "
                f"(ORDER BY x.seq) - 1 AS n FROM memories x WHERE {self.scope}) s WHERE n %% %s = 0) b".encode(),
                (self.tenant, self.key, *self._params(), self.batch_size))

    def _chunk_scope(self, lo: int, hi: int | None) -> tuple[str, list[Any]]:
        """The scope of one chunk, [lo, hi), and its parameters."""
        scope = self.scope + " AND x.seq >= %s" + (" AND x.seq < %s" if hi is not None else "")
        return scope, [*self._params(), lo] + ([hi] if hi is not None else [])

    def _chunk(self, lo: int, hi: int | None) -> tuple[int, list[Change]]:
        conn = self.conn
        scope, params = self._chunk_scope(lo, hi)
        evaluated = conn.execute(f"SELECT count(*) FROM memories x WHERE {scope}".encode(), params).fetchone()
        assert evaluated is not None
        columns = ", ".join("m." + c for c in RETENTION_COLUMNS)
        moved = conn.execute(
            "UPDATE memories m SET tier = CASE WHEN s.code = 3 THEN 'trash' ELSE 'warm' END, "
            "trashed_at = CASE WHEN s.code = 3 THEN %s ELSE m.trashed_at END "
            f"FROM (SELECT x.seq, x.tier AS old, r.score, {self.code} AS code FROM memories x "
            f"{_scored(self.score)} WHERE {scope}) s "
            f"WHERE m.tenant = %s AND m.seq = s.seq AND m.tier IN {LIVE} AND s.code IN (1, 3) "
            f"AND s.code > {_rank('m.tier')} "
            f"RETURNING m.seq, m.id, m.user_id, s.old, s.score, s.code, {columns}".encode(),
            (self.at, *params, self.tenant)).fetchall()
        changes = self._changes(sorted(moved))
        cold = conn.execute(
            f"SELECT x.seq, x.id, x.user_id, x.tier, r.score, {self.code}, {_columns('x')} "
            f"FROM memories x {_scored(self.score)} "
            f"WHERE {scope} AND {self.code} = 2 ORDER BY x.seq FOR UPDATE OF x".encode(), params).fetchall()
        if cold:
            archived = self._changes(cold)  # scored once, as the rows were locked
            self._archive([int(r[0]) for r in cold], archived)
            changes += archived
        self.store.insert_events(conn, self.tenant, [self.event(c, self.at) for c in changes
                                                     if c.target is not Tier.COLD])
        return int(evaluated[0]), changes

    def _chunk_in_python(self, lo: int, hi: int | None) -> tuple[int, list[Change]]:
        """`_chunk` for a composite without SQL: the chunk's rows locked and read, scored in Python, then moved by
        the statements the store's own `demote` uses and the same archive step, in the chunk's transaction."""
        conn = self.conn
        scope, params = self._chunk_scope(lo, hi)
        rows = conn.execute(f"SELECT x.seq, x.id, x.user_id, x.tier, {_columns('x')} FROM memories x "
                            f"WHERE {scope} ORDER BY x.seq FOR UPDATE OF x".encode(), params).fetchall()
        seq_of, planned = self._planned(rows)
        # Reported as the SQL path reports them: the in-table moves first, then the archived ones.
        changes = [c for c in planned if c.target is not Tier.COLD]
        if changes:
            conn.execute("UPDATE memories m SET tier = v.tier, trashed_at = CASE WHEN v.tier = 'trash' THEN %s "
                         "ELSE m.trashed_at END FROM unnest(%s::bigint[], %s::text[]) v(seq, tier) "
                         "WHERE m.tenant = %s AND m.seq = v.seq",
                         (self.at, [seq_of[c.id] for c in changes], [c.target.value for c in changes], self.tenant))
        archived = [c for c in planned if c.target is Tier.COLD]
        if archived:
            self._archive([seq_of[c.id] for c in archived], archived)
        self.store.insert_events(conn, self.tenant, [self.event(c, self.at) for c in changes])
        return len(rows), changes + archived

    def _archive(self, seqs: list[int], changes: list[Change]) -> None:
        """Write the rows bound for the cold tier to Parquet, then index them there and delete them (in the
        chunk's transaction: they leave the table only with the commit that follows the durable file).
        `changes` are the rows' moves, already decided while the rows were locked."""

        rows = self.conn.execute(
            f"SELECT {COLUMNS}, m.embedding FROM memories m "
            "WHERE m.tenant = %s AND m.seq = ANY(%s) ORDER BY m.seq".encode(), (self.tenant, seqs)).fetchall()
        records = [(record_from_row(row, row[VECTOR]), int(row[0])) for row in rows]
        by_id = {c.id: c for c in changes}
        groups: dict[str, list[tuple[MemoryRecord, int]]] = {}
        for record, seq in records:
            groups.setdefault(self.archive.month_of(record), []).append((record, seq))
        for month, members in groups.items():
            relative = self.archive.new_path(self.tenant, month)
            self.store.intent(str(relative), "writing")  # committed on the main connection before the file exists
            self.archive.write(relative, members, self.at)
            archive_rows(self.conn, self.tenant, str(relative), [seq for _, seq in members], self.at)
            self.store.insert_events(self.conn, self.tenant, [self.event(by_id[r.id], self.at) for r, _ in members])
