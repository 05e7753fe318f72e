"""Retention as PostgreSQL expressions: the pieces the built-in policies spell their scores with, and the
tier a score implies (`Composite.tiers`, `Composite.settle`) over a row of the `memories` table.

A policy that can run inside the database implements `SqlPolicy.sql(row, now)` (`ebbing.retention.base`) next
to its numpy `score`; each built-in one does, in its own module, so both versions of a formula sit together.
The row's columns are `RETENTION_COLUMNS`: kind and priority as text, pinned/held/security as boolean,
importance as float8, created_at, last_accessed_at and expires_at as float8 epoch seconds (NULL when never used,
when none), access_count and update_count as integers. Numbers are written in as exact literals (`literal`), so an
expression needs no bound parameters.
"""

from __future__ import annotations

from ebbing.model import Tier
from ebbing.retention.config import DAY, RetentionConfig

EXP_FLOOR = -745.0  # exp() of anything lower underflows; PostgreSQL raises an error where numpy gives 0


def literal(value: float) -> str:
    """A float as an exact SQL literal (Python's repr round-trips every double)."""
    return f"{float(value)!r}::float8"


def referenced_at(row: str) -> str:
    """When decay starts (`RecordBatch.referenced_at`): the last use, or creation for a record never used."""
    return f"coalesce({row}.last_accessed_at, {row}.created_at)"


def elapsed(row: str, now: float) -> str:
    """Seconds from the row's reference time to `now` (negative when the reference is later)."""
    return f"({literal(now)} - {referenced_at(row)})"


def tier_code_sql(config: RetentionConfig, score: str) -> str:
    """Tier code (0 hot, 1 warm, 2 cold, 3 forgotten) of a score, as `Composite.tiers` computes it."""
    hot, warm, cold = (config.thresholds[t] for t in (Tier.HOT, Tier.WARM, Tier.COLD))
    return (f"(3 - ({score} >= {literal(cold)})::int - ({score} >= {literal(warm)})::int "
            f"- ({score} >= {literal(hot)})::int)")


def placement_sql(config: RetentionConfig, now: float, score: str, row: str = "m") -> str:
    """The tier code a sweep gives (`Composite.placement`): the score's tier, except that a forgotten P1
    record stays cold until `archive_days` after its last use (`Composite.settle`)."""
    code = tier_code_sql(config, score)
    if config.archive_days <= 0:
        return code
    return (f"(CASE WHEN {code} = 3 AND {row}.priority = 'P1' AND {elapsed(row, now)} "
            f"<= {literal(config.archive_days * DAY)} THEN 2 ELSE {code} END)")
