"""Retention over time for one record: the data behind the forgetting-curve plots.

A recall sets the record's `last_accessed_at` to that instant and adds one to `access_count`, so the score
jumps back to its weight and then fades more slowly (stability grows with recalls). The curve holds the
instant just before and just after each recall at the same time value, so a plot draws the jump vertically.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ebbing.errors import InvalidInput
from ebbing.model import Kind, Priority
from ebbing.retention.base import KINDS, PRIORITIES, RecordBatch
from ebbing.retention.composite import Composite, take
from ebbing.retention.config import DAY, RetentionConfig

DEFAULT_IMPORTANCE = 0.6  # what a record of any kind gets when nothing says it matters more or less


def retention_curve(record_columns: RecordBatch, access_times: Sequence[float], start: float, end: float,
                    config: RetentionConfig, points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """(times, scores) of one record's composite score from `start` to `end`, recalled at `access_times`.

    Times are epoch seconds, sorted; each recall inside the range appears twice, before then after it.
    Recalls before `start` already count at `start`; recalls after `end` are ignored.
    """
    if len(record_columns) != 1:
        raise InvalidInput("record_columns", "needs exactly one record")
    if not end > start:
        raise InvalidInput("end", "must be after start")
    if points < 2:
        raise InvalidInput("points", "must be at least 2")
    recalls = np.sort(np.asarray(access_times, dtype=np.float64))
    inside = recalls[(recalls >= start) & (recalls <= end)]
    grid = np.linspace(start, end, points)
    times = np.concatenate([grid, inside, inside])
    # How many recalls have happened at each instant: a grid point counts recalls up to and including it,
    # the "before" copy of a recall counts only those strictly earlier, the "after" copy includes it.
    done = np.concatenate([np.searchsorted(recalls, grid, side="right"),
                           np.searchsorted(recalls, inside, side="left"),
                           np.searchsorted(recalls, inside, side="right")])
    order = np.lexsort((done, times))  # by time, and at equal times before-the-recall first
    times, done = times[order], done[order]
    repeated = take(record_columns, np.zeros(len(times), dtype=np.intp))
    last_recall = recalls[np.maximum(done - 1, 0)] if recalls.size else np.zeros(len(times))
    simulated = replace(
        repeated,
        last_accessed_at=np.where(done > 0, last_recall, repeated.last_accessed_at),
        access_count=repeated.access_count + done,
    )
    return times, Composite(config).score(simulated, times)


def kind_curves(config: RetentionConfig, days: float = 120,
                points: int = 400) -> dict[Kind, tuple[np.ndarray, np.ndarray]]:
    """For each kind, (days, scores) of a never-used P1 record of importance 0.6 created at t = 0."""
    curves: dict[Kind, tuple[np.ndarray, np.ndarray]] = {}
    for kind in KINDS:
        record = RecordBatch(
            kind=np.array([KINDS.index(kind)], dtype=np.int8),
            importance=np.array([DEFAULT_IMPORTANCE]),
            priority=np.array([PRIORITIES.index(Priority.P1)], dtype=np.int8),
            pinned=np.zeros(1, dtype=bool),
            held=np.zeros(1, dtype=bool),
            created_at=np.zeros(1),
            last_accessed_at=np.full(1, np.nan),
            access_count=np.zeros(1, dtype=np.int64),
            update_count=np.zeros(1, dtype=np.int64),
            security=np.zeros(1, dtype=bool),
        )
        times, scores = retention_curve(record, [], 0.0, days * DAY, config, points)
        curves[kind] = (times / DAY, scores)
    return curves
