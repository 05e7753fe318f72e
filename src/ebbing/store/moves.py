"""A tier move a sweep makes (`Change`), why, in words (`reasons`), and which moves a page of records makes
(`plan`): shared by the Python sweep (`ebbing.lifecycle.sweep`) and the one that runs inside PostgreSQL
(`store/postgres_sweep.py`, which scores in Python too when a policy has no SQL: `sql_fallback`), so both
decide and report the same moves in the same words."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ebbing.model import Priority, Tier
from ebbing.retention.base import PRIORITIES
from ebbing.retention.composite import TIER_OF_CODE, Composite
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.store.base import SweepRows

RANK_OF_NAME = {"hot": 0, "warm": 1, "cold": 2, "trash": 3}  # a tier's name -> its tier code (TIER_OF_CODE)


@dataclass(frozen=True)
class Change:
    id: str
    source: Tier
    target: Tier
    score: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "from": self.source.value, "to": self.target.value, "score": self.score,
                "reason": self.reason}


def sql_fallback(composite: Composite) -> str | None:
    """Why a sweep inside PostgreSQL has to score in Python with this composite, or None when it need not:
    the policies that have no SQL form (`ebbing.retention.base.SqlPolicy`)."""
    missing = composite.without_sql()
    if not missing:
        return None
    names = ", ".join(repr(name) for name in missing)
    return (f"retention policy {names} has no SQL form (SqlPolicy.sql): the PostgreSQL sweep fetched the live "
            "records and scored them in Python")


def plan(composite: Composite, rows: SweepRows, now: float) -> tuple[np.ndarray, list[Change]]:
    """The moves a sweep at `now` makes of a page of records: the indices of those that move (down only, to the
    tier their score and `Composite.settle` give) and their `Change`s, in page order."""
    config = composite.config
    scores = composite.score(rows.batch, now)
    targets = composite.settle(rows.batch, composite.tiers(scores), now)
    current = np.array([RANK_OF_NAME[t] for t in rows.tiers])
    moving = np.flatnonzero(targets > current)
    if len(moving) == 0:
        return moving, []
    why = reasons(composite, config, rows, now, scores, targets, moving)
    return moving, [Change(rows.ids[i], Tier(rows.tiers[i]), TIER_OF_CODE[int(targets[i])],
                           round(float(scores[i]), 4), why[i]) for i in moving.tolist()]


def reasons(composite: Composite, config: RetentionConfig, rows: SweepRows, now: float,
            scores: np.ndarray, targets: np.ndarray, which: np.ndarray) -> dict[int, str]:
    """Why each record in `which` goes where it goes, in words, naming the policy that decided."""
    gate = composite.priority.score(rows.batch, now)
    ended = rows.batch.expired(now)
    idle_days = (now - rows.batch.referenced_at) / DAY
    thresholds = config.thresholds
    out = {}
    archived = f"; kept in the cold archive until {config.archive_days:g} days without use"
    for i in which.tolist():
        code = targets[i]
        tier = TIER_OF_CODE[int(code)]
        faded = scores[i] < thresholds[Tier.COLD]
        priority = PRIORITIES[int(rows.batch.priority[i])]
        if tier is Tier.TRASH and faded and priority is Priority.P1 and config.archive_days > 0:
            out[i] = f"{idle_days[i]:.0f} days without use, past the archive limit {config.archive_days:g}"
        elif ended[i]:
            assert rows.batch.expires_at is not None
            out[i] = (f"expires_at {datetime.fromtimestamp(float(rows.batch.expires_at[i]), tz=UTC):%Y-%m-%d %H:%M} "
                      "has passed" + (archived if tier is Tier.COLD else ""))
        elif gate[i] == 0:
            out[i] = (f"priority {priority.value} expired: {idle_days[i]:.0f} days without use "
                      f"(limit {config.expiry_days[priority]:g})" + (archived if tier is Tier.COLD else ""))
        elif tier is Tier.TRASH:
            out[i] = f"retention {scores[i]:.3f} below the cold threshold {thresholds[Tier.COLD]:g}"
        elif tier is Tier.COLD and faded:
            out[i] = f"retention {scores[i]:.3f} below the cold threshold {thresholds[Tier.COLD]:g}" + archived
        else:
            above = {Tier.WARM: Tier.HOT, Tier.COLD: Tier.WARM}.get(tier, tier)
            out[i] = f"retention {scores[i]:.3f} below the {above.value} threshold {thresholds[above]:g}"
    return out
