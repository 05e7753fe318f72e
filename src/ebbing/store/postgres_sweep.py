"""Sweeps inside PostgreSQL: the retention score as an SQL expression, tier moves as set-based statements.

The score is `ebbing.retention.composite` (Ebbinghaus decay, priority gate, exemptions; "importance" and
"blend" too) spelled as one SQL expression with the configuration's numbers written in as literals, so rows
are scored next to the data instead of travelling to Python (a test holds it against the Python policies).

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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ebbing.model import Event, MemoryRecord, Tier
from ebbing.retention.base import KINDS, MARKED_IMPORTANCE, RETENTION_COLUMNS, RecordBatch
from ebbing.retention.composite import TIER_OF_CODE, Composite
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.store.base import ArchiveWriter, SweepRows
from ebbing.store.moves import Change, reasons
from ebbing.store.postgres_rows import COLUMNS, VECTOR, archive_rows, record_from_row, window_sql

LIVE = "('hot', 'warm')"
EXP_FLOOR = -745.0  # exp() of anything lower underflows; PostgreSQL raises an error where numpy gives 0


def _f(value: float) -> str:
    """A float as an exact SQL literal (Python's repr round-trips every double)."""
    return f"{float(value)!r}::float8"


def retention_sql(config: RetentionConfig, now: float, t: str = "m") -> str:
    """The composite retention score of row `t` at `now`, as an SQL expression: the same arithmetic, in the
    same order, as `Ebbinghaus.score`, `PriorityExpiry.score`, `Importance.score` and `Composite._combine`."""
    c = config
    reference = f"coalesce({t}.last_accessed_at, {t}.created_at)"
    elapsed = f"({_f(now)} - {reference})"
    base = " ".join(f"WHEN '{k.value}' THEN {_f(c.stability_days[k] * DAY)}" for k in KINDS)
    s0 = (f"(CASE {t}.kind {base} END)"
          f" * (CASE WHEN {t}.security THEN {_f(c.security_factor)} ELSE 1.0::float8 END)"
          f" * (CASE WHEN {t}.importance >= {_f(MARKED_IMPORTANCE)} THEN {_f(c.marked_factor)} ELSE 1.0::float8 END)"
          f" * (CASE WHEN {t}.importance >= {_f(MARKED_IMPORTANCE)} THEN 1.0::float8 ELSE 1.0::float8 + "
          f"{_f(c.salience_factor - 1.0)} * least(greatest(({t}.importance - {_f(c.salience_pivot)}) / "
          f"{_f(MARKED_IMPORTANCE - c.salience_pivot)}, 0.0), 1.0) END)"
          f" * (CASE WHEN {t}.update_count >= {int(c.frequent_updates)} THEN {_f(c.updated_factor)} "
          "ELSE 1.0::float8 END)")
    reinforcement = (f"least(1.0::float8 + ln(1.0::float8 + {_f(c.beta)} * greatest({t}.access_count, 0)), "
                     f"{_f(c.max_reinforcement)})")
    weight = f"({_f(c.weight_floor)} + {_f(1.0 - c.weight_floor)} * least(greatest({t}.importance, 0.0), 1.0))"
    exponent = f"(-greatest({elapsed}, 0.0) / (({s0}) * {reinforcement}))"
    decayed = f"({weight} * (CASE WHEN {exponent} < {EXP_FLOOR} THEN 0.0 ELSE exp({exponent}) END))"
    protected = f"(({_f(now)} - {t}.created_at) < {_f(c.protection_days * DAY)})"
    decay = f"(CASE WHEN {protected} THEN greatest({decayed}, {_f(c.protection_floor)}) ELSE {decayed} END)"
    gate = (f"(CASE {t}.priority WHEN 'P0' THEN 1.0 "
            + " ".join(f"WHEN '{p.value}' THEN (CASE WHEN {elapsed} <= {_f(days * DAY)} THEN 1.0 ELSE 0.0 END)"
                       for p, days in c.expiry_days.items()) + " END)")
    w_type, w_recall, w_mark, w_relevance = (_f(w) for w in c.importance_weights)
    types = " ".join(f"WHEN '{k.value}' THEN {_f(c.type_scores[k])}" for k in KINDS)
    recall = ("1.0::float8" if c.recall_saturation <= 0
              else f"least(1.0::float8, greatest({t}.access_count, 0)::float8 / {_f(c.recall_saturation)})")
    marked = f"(CASE WHEN {t}.importance >= {_f(MARKED_IMPORTANCE)} THEN 1.0 ELSE 0.0 END)"
    importance = (f"least(greatest({w_type} * (CASE {t}.kind {types} END) + {w_recall} * {recall} + {w_mark} * "
                  f"{marked} + {w_relevance} * 0.0, 0.0), 1.0)")
    if c.combine == "decay":
        combined = decay
    elif c.combine == "importance":
        combined = importance
    else:
        combined = f"({_f(1.0 - c.blend_importance)} * {decay} + {_f(c.blend_importance)} * {importance})"
    return (f"(CASE WHEN {t}.pinned OR {t}.held OR {t}.priority = 'P0' THEN 1.0::float8 "
            f"ELSE {combined} * {gate} END)")


def tier_code_sql(config: RetentionConfig, score: str) -> str:
    """Tier code (0 hot, 1 warm, 2 cold, 3 forgotten) of a score, as `Composite.tiers` computes it."""
    hot, warm, cold = (config.thresholds[t] for t in (Tier.HOT, Tier.WARM, Tier.COLD))
    return (f"(3 - ({score} >= {_f(cold)})::int - ({score} >= {_f(warm)})::int "
            f"- ({score} >= {_f(hot)})::int)")


def placement_sql(config: RetentionConfig, now: float, score: str, t: str = "m") -> str:
    """The tier code a sweep gives (`Composite.placement`): the score's tier, except that a forgotten P1
    record stays cold until `archive_days` after its last use (`Composite.settle`)."""
    code = tier_code_sql(config, score)
    if config.archive_days <= 0:
        return code
    return (f"(CASE WHEN {code} = 3 AND {t}.priority = 'P1' AND ({_f(now)} - coalesce({t}.last_accessed_at, "
            f"{t}.created_at)) <= {_f(config.archive_days * DAY)} THEN 2 ELSE {code} END)")


def _scored(score: str) -> str:
    """The score joined to each row as `r.score`. OFFSET 0 keeps the planner from pulling the subquery up: it
    would paste the long score expression into each of the tier code's comparisons, planning a chunk's
    statement 20 times slower (some 30 ms) and scoring every row four times."""
    return f"CROSS JOIN LATERAL (SELECT {score} AS score OFFSET 0) r"


def _rank(column: str) -> str:
    return f"(CASE {column} WHEN 'hot' THEN 0 WHEN 'warm' THEN 1 WHEN 'trash' THEN 3 ELSE 2 END)"


class DatabaseSweep:
    """One worker's part of a sweep of one tenant (or user) at one instant."""

    def __init__(self, store: Any, tenant: str, user_id: str | None, at: float, config: RetentionConfig,
                 window: tuple[int, int, int] | None, batch_size: int, archive: ArchiveWriter,
                 event: Callable[[Change, float], Event]) -> None:

        self.store, self.tenant, self.at, self.config = store, tenant, at, config
        self.batch_size, self.archive, self.event = batch_size, archive, event
        self.composite = Composite(config)
        self.conn = store.sweep_connection()
        self.scope = f"x.tenant = %s AND x.tier IN {LIVE}"  # user None: the whole tenant
        self.user_params: list[Any] = []
        if user_id is not None:
            self.scope += " AND x.user_id = %s"
            self.user_params = [user_id]
        if window is not None:
            self.scope += " AND " + window_sql(window).replace("jitter", "x.jitter")
        self.key = f"{user_id}|{at!r}|{window}"
        self.score = retention_sql(config, at, "x")
        self.code = placement_sql(config, at, "r.score", "x")

    def _params(self) -> list[Any]:
        return [self.tenant, *self.user_params]

    # -- dry run: decide, move nothing ------------------------------------------------------------------

    def preview(self) -> tuple[int, list[Change]]:
        evaluated = self.store._rows(f"SELECT count(*) FROM memories x WHERE {self.scope}", self._params())[0][0]
        rows = self.store._rows(
            f"SELECT x.seq, x.id, x.user_id, x.tier, r.score, {self.code}, "
            f"{', '.join('x.' + c for c in RETENTION_COLUMNS)} FROM memories x "
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
                count, moved = self._chunk(int(chunk[0]), chunk[1])
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

    def _chunk(self, lo: int, hi: int | None) -> tuple[int, list[Change]]:
        conn = self.conn
        scope = self.scope + " AND x.seq >= %s" + (" AND x.seq < %s" if hi is not None else "")
        params = [*self._params(), lo] + ([hi] if hi is not None else [])
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
            f"SELECT x.seq, r.score, {self.code}, {', '.join('x.' + c for c in RETENTION_COLUMNS)} "
            f"FROM memories x {_scored(self.score)} "
            f"WHERE {scope} AND {self.code} = 2 ORDER BY x.seq FOR UPDATE OF x".encode(), params).fetchall()
        if cold:
            changes += self._archive([int(r[0]) for r in cold])
        self.store.insert_events(conn, self.tenant, [self.event(c, self.at) for c in changes
                                                     if c.target is not Tier.COLD])
        return int(evaluated[0]), changes

    def _archive(self, seqs: list[int]) -> list[Change]:
        """Write the rows bound for the cold tier to Parquet, then index them there and delete them (in the
        chunk's transaction: they leave the table only with the commit that follows the durable file)."""

        rows = self.conn.execute(
            f"SELECT {COLUMNS}, m.embedding, r.score, {placement_sql(self.config, self.at, 'r.score', 'm')}, "
            f"{', '.join('m.' + c for c in RETENTION_COLUMNS)} FROM memories m "
            f"{_scored(retention_sql(self.config, self.at, 'm'))} "
            "WHERE m.tenant = %s AND m.seq = ANY(%s) ORDER BY m.seq".encode(), (self.tenant, seqs)).fetchall()
        records = [(record_from_row(row, row[VECTOR]), int(row[0])) for row in rows]
        changes = self._changes([(row[0], row[1], row[3], row[13], row[VECTOR + 1], row[VECTOR + 2],
                                  *row[VECTOR + 3:]) for row in rows])
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
        return changes
