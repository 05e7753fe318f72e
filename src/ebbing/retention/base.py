"""The retention extension point: how strongly a memory is still held, for a whole batch at once.

A policy scores a `RecordBatch` (columns of numpy arrays, one entry per record) at a time `now`
(epoch seconds) and returns one float per record in 0..1, where higher means keep. Policies are pure:
the same batch and `now` always give the same scores, and nothing reads the wall clock.

A policy that can also spell its score as SQL (`SqlPolicy`) lets the PostgreSQL sweep score rows inside the
database; one that cannot still works everywhere, the PostgreSQL sweep then scores in Python
(`ebbing.retention.composite` shows how to plug a policy in).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ebbing.model import Kind, MemoryRecord, Priority

KINDS: tuple[Kind, ...] = tuple(Kind)  # kind codes index into this
PRIORITIES: tuple[Priority, ...] = tuple(Priority)  # 0 = P0, 1 = P1, 2 = P2
RETENTION_COLUMNS = ("kind", "importance", "priority", "pinned", "held", "security", "created_at",
                     "last_accessed_at", "access_count", "update_count", "expires_at")  # what a store hands over
MARKED_IMPORTANCE = 0.9  # an importance this high can only come from someone saying it matters


@dataclass(frozen=True)
class RecordBatch:
    """The columns retention needs. Times are epoch seconds; `last_accessed_at` is NaN when never used."""

    kind: np.ndarray  # int8 codes into KINDS
    importance: np.ndarray  # float64, 0..1
    priority: np.ndarray  # int8 codes into PRIORITIES
    pinned: np.ndarray  # bool
    held: np.ndarray  # bool: legal hold
    created_at: np.ndarray  # float64
    last_accessed_at: np.ndarray  # float64, NaN = never
    access_count: np.ndarray  # int64
    update_count: np.ndarray  # int64
    security: np.ndarray  # bool: secret-bearing or security-related (decays slower)
    relevance: np.ndarray | None = None  # float64 0..1: relevance to the current task, when one is known
    expires_at: np.ndarray | None = None  # float64, NaN = no explicit expiry (None: none in the batch)

    def __len__(self) -> int:
        return len(self.kind)

    @property
    def referenced_at(self) -> np.ndarray:
        """When decay starts: the last use, or creation for a record never used."""
        out: np.ndarray = np.where(np.isnan(self.last_accessed_at), self.created_at, self.last_accessed_at)
        return out

    @property
    def marked(self) -> np.ndarray:
        out: np.ndarray = self.importance >= MARKED_IMPORTANCE
        return out

    @property
    def exempt(self) -> np.ndarray:
        """Pinned, P0 and held records never fade."""
        out: np.ndarray = self.pinned | self.held | (self.priority == PRIORITIES.index(Priority.P0))
        return out

    @property
    def expires(self) -> bool:
        """Whether any record of the batch has an explicit expiry."""
        return self.expires_at is not None and bool(np.isfinite(self.expires_at).any())

    def expired(self, now: float | np.ndarray) -> np.ndarray:
        """Records whose explicit expiry has come by `now` (NaN: none)."""
        if self.expires_at is None:
            return np.zeros(len(self), dtype=bool)
        with np.errstate(invalid="ignore"):
            out: np.ndarray = self.expires_at <= now
        return out

    def exempt_at(self, now: float | np.ndarray) -> np.ndarray:
        """`exempt`, except that an explicit expiry ends a pin or P0's exemption; a legal hold still keeps it."""
        if not self.expires:
            return self.exempt
        out: np.ndarray = self.held | (self.exempt & ~self.expired(now))
        return out

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Any]]) -> RecordBatch:
        """From rows of (kind, importance, priority, pinned, held, security, created_at, last_accessed_at,
        access_count, update_count, expires_at) as a store keeps them: kind and priority as text, times as epoch
        seconds, last_accessed_at and expires_at None when not set."""
        kind_code = {k.value: i for i, k in enumerate(KINDS)}
        priority_code = {p.value: i for i, p in enumerate(PRIORITIES)}
        if not rows:
            rows = []
        cols = list(zip(*rows, strict=True)) if rows else [()] * len(RETENTION_COLUMNS)
        return cls(
            kind=np.array([kind_code[k] for k in cols[0]], dtype=np.int8),
            importance=np.array(cols[1], dtype=np.float64),
            priority=np.array([priority_code[p] for p in cols[2]], dtype=np.int8),
            pinned=np.array(cols[3], dtype=bool), held=np.array(cols[4], dtype=bool),
            security=np.array(cols[5], dtype=bool), created_at=np.array(cols[6], dtype=np.float64),
            last_accessed_at=np.array([np.nan if v is None else v for v in cols[7]], dtype=np.float64),
            access_count=np.array(cols[8], dtype=np.int64), update_count=np.array(cols[9], dtype=np.int64),
            # rows without the column (stores and benchmarks from before it) expire never
            expires_at=np.array([np.nan if v is None else v for v in cols[10]], dtype=np.float64)
            if len(cols) > 10 else None,
        )

    @classmethod
    def from_records(cls, records: Sequence[MemoryRecord]) -> RecordBatch:
        return cls(
            kind=np.array([KINDS.index(r.kind) for r in records], dtype=np.int8),
            importance=np.array([r.importance for r in records], dtype=np.float64),
            priority=np.array([PRIORITIES.index(r.priority) for r in records], dtype=np.int8),
            pinned=np.array([r.pinned for r in records], dtype=bool),
            held=np.array([r.held for r in records], dtype=bool),
            created_at=np.array([r.created_at.timestamp() for r in records], dtype=np.float64),
            last_accessed_at=np.array([r.last_accessed_at.timestamp() if r.last_accessed_at else np.nan
                                       for r in records], dtype=np.float64),
            access_count=np.array([r.access_count for r in records], dtype=np.int64),
            update_count=np.array([r.update_count for r in records], dtype=np.int64),
            security=np.array([r.security for r in records], dtype=bool),
            expires_at=np.array([r.expires_at.timestamp() if r.expires_at else np.nan for r in records],
                                dtype=np.float64),
        )


@runtime_checkable
class RetentionPolicy(Protocol):
    """Scores records: 0..1 per record, higher means keep. `name` labels the policy in explanations.

    `now` is one time for the whole batch, or one time per record (an array) when a record is followed through
    time (`Composite.projected_change`, `retention.curve`); numpy broadcasting handles both alike."""

    name: str

    def score(self, batch: RecordBatch, now: float | np.ndarray) -> np.ndarray: ...


@runtime_checkable
class SqlPolicy(RetentionPolicy, Protocol):
    """A policy that also renders its score as one PostgreSQL float8 expression, so sweeps run in the database.

    `sql(row, now)` spells `score` for the row aliased `row` of the `memories` table at the single time `now`:
    its columns are RETENTION_COLUMNS (`ebbing.retention.sql` lists their SQL types and has the helpers the
    built-in policies use). The expression must give what `score` gives (a test holds the built-in ones to
    1e-12); it takes no bound parameters (write numbers in with `retention.sql.literal`). Relevance is not a
    column: a sweep has no current task, and `RecordBatch.relevance` is None there too."""

    def sql(self, row: str, now: float) -> str: ...


def retention_row(record: MemoryRecord) -> tuple[Any, ...]:
    """A record's RETENTION_COLUMNS values, as a store would hand them over."""
    return (record.kind.value, record.importance, record.priority.value, record.pinned, record.held,
            record.security, record.created_at.timestamp(),
            record.last_accessed_at.timestamp() if record.last_accessed_at else None,
            record.access_count, record.update_count,
            record.expires_at.timestamp() if record.expires_at else None)
