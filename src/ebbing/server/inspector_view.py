"""What the inspector shows, read from the public `Memory` API only: a user's records by tier with their
retention and projected fade, the forgetting log, tier counts over time and projected retention curves.

Pure functions of a `Memory` and an injected `now`; the routes in `inspector.py` render them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ebbing import Memory
from ebbing.model import MemoryRecord, Tier
from ebbing.retention.base import RecordBatch
from ebbing.retention.config import DAY
from ebbing.retention.curve import retention_curve

TIERS = [t.value for t in Tier]
PAGE = 25  # records shown per tier until "show more"
MORE = 500
HISTORY_DAYS = 30
HISTORY_RECORDS = 2000  # the tier chart replays at most this many records' histories
CURVES = 6  # projected retention curves drawn at most
CURVE_DAYS = 90


@dataclass
class Row:
    """One record as a line of a tier table."""

    record: dict[str, Any]
    trashed_at: str | None = None  # for the trash: when it was sent there
    score: float | None = None
    projected: dict[str, Any] | None = None  # {"at", "tier"} if it will move down when unused
    exempt: list[str] = field(default_factory=list)


@dataclass
class TierPage:
    tier: str
    total: int
    rows: list[Row]


def day(value: str | None, time: bool = True) -> str:
    """An ISO timestamp as a short UTC date (and time) for tables."""
    if not value:
        return ""
    return datetime.fromisoformat(value).astimezone(UTC).strftime("%Y-%m-%d %H:%M" if time else "%Y-%m-%d")


def user_records(memory: Memory, user: str | None) -> list[dict[str, Any]]:
    """Every record of the user (of the whole tenant when None), newest first."""
    return sorted(memory.export(user), key=lambda r: r["created_at"], reverse=True)


def tier_pages(memory: Memory, records: list[dict[str, Any]], now: float, more: str | None) -> list[TierPage]:
    """Each tier's first records with their retention now and when they would move down."""
    pages = []
    for tier in TIERS:
        members = [r for r in records if r["tier"] == tier]
        if tier == Tier.TRASH.value:  # the most recently forgotten first
            when = {r["id"]: trashed_at(memory, r["id"]) for r in members}
            members.sort(key=lambda r: when[r["id"]] or "", reverse=True)
            shown = members[: MORE if more == tier else PAGE]
            pages.append(TierPage(tier, len(members), [Row(r, when[r["id"]]) for r in shown]))
            continue
        shown = members[: MORE if more == tier else PAGE]
        rows = []
        for record in shown:
            why = memory.explain(record["id"], at=now)
            rows.append(Row(record, score=why["score"], projected=why["projected"], exempt=why["why_exempt"]))
        pages.append(TierPage(tier, len(members), rows))
    return pages


def trashed_at(memory: Memory, memory_id: str) -> str | None:
    """When a record was last sent to the trash (ISO), from its history."""
    moves = [e.at for e in memory.history(memory_id) if e.type == "tier" and e.data.get("to") == Tier.TRASH.value]
    return max(moves).isoformat() if moves else None


def forgetting_log(memory: Memory, ids: set[str] | None, now: float, days: float) -> list[dict[str, Any]]:
    """What was forgotten in the last `days` days and why, newest first; only `ids` when given."""
    found = memory.forgotten(since=now - days * DAY, until=now)
    return [entry for entry in reversed(found) if ids is None or entry["memory_id"] in ids]


def tier_history(memory: Memory, records: list[dict[str, Any]], now: float,
                 days: int = HISTORY_DAYS) -> tuple[list[float], dict[str, list[int]]]:
    """How many of these records were in each tier at the end of each of the last `days` days.

    Replays each record's tier events: before its first move it was in the tier it started in. Purged
    records are gone from the list, so they drop out of the past too.
    """
    times = [now - (days - step) * DAY for step in range(days + 1)]
    counts = {tier: [0] * len(times) for tier in TIERS}
    for record in records[:HISTORY_RECORDS]:
        created = datetime.fromisoformat(record["created_at"]).timestamp()
        moves = [(e.at.timestamp(), str(e.data.get("from")), str(e.data.get("to")))
                 for e in memory.history(record["id"]) if e.type == "tier"]
        moves.sort()
        first = moves[0][1] if moves else record["tier"]
        for index, moment in enumerate(times):
            if moment < created:
                continue
            tier = first
            for at, _, to in moves:
                if at > moment:
                    break
                tier = to
            if tier in counts:
                counts[tier][index] += 1
    return times, counts


def curves(memory: Memory, records: list[MemoryRecord], now: float,
           days: float = CURVE_DAYS) -> list[tuple[MemoryRecord, np.ndarray, np.ndarray]]:
    """Each record's retention from now on if nobody uses it again: (record, days from now, scores)."""
    out = []
    for record in records[:CURVES]:
        times, scores = retention_curve(RecordBatch.from_records([record]), [], now, now + days * DAY,
                                        memory.retention, points=60)
        out.append((record, (times - now) / DAY, scores))
    return out


def thresholds(memory: Memory) -> dict[str, float]:
    return {tier.value: float(value) for tier, value in memory.retention.thresholds.items()}
