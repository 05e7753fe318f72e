"""Reference-date expiry: P1 and P2 records expire a fixed time after their last use; P0 never does.

The score is a gate, 1.0 while the record is within its expiry window and 0.0 after, so it composes by
multiplication: an expired record is forgotten whatever its decay curve still says. A record never used
counts from its creation (`RecordBatch.referenced_at`). `PriorityExpiry.sql` is the same gate in SQL.
"""

from __future__ import annotations

import numpy as np

from ebbing.model import Priority
from ebbing.retention.base import PRIORITIES, RecordBatch
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.retention.sql import elapsed, literal


class PriorityExpiry:
    name = "priority"

    def __init__(self, config: RetentionConfig) -> None:
        self.config = config
        self._limit = np.array([np.inf if p is Priority.P0 else config.expiry_days[p] * DAY for p in PRIORITIES],
                               dtype=np.float64)

    def score(self, batch: RecordBatch, now: float | np.ndarray) -> np.ndarray:
        """1.0 while now - referenced_at <= expiry for the record's priority and its explicit expiry (if any) has
        not come, else 0.0."""
        elapsed = now - batch.referenced_at
        out: np.ndarray = np.where((elapsed <= self._limit[batch.priority]) & ~batch.expired(now), 1.0, 0.0)
        return out

    def sql(self, row: str, now: float) -> str:
        """`score` of row `row` at `now` as a PostgreSQL expression (`SqlPolicy`)."""
        since = elapsed(row, now)
        return (f"(CASE WHEN {row}.expires_at <= {literal(now)} THEN 0.0 WHEN {row}.priority = 'P0' THEN 1.0 "
                + " ".join(f"WHEN {row}.priority = '{p.value}' THEN (CASE WHEN {since} <= {literal(days * DAY)} "
                           "THEN 1.0 ELSE 0.0 END)" for p, days in self.config.expiry_days.items()) + " END)")
