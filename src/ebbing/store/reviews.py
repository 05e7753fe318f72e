"""How a held supersession's plan (`ReviewRow.facts`, `closings`) is kept in a store: one JSON column, so both
backends write and read it the same way."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from ebbing.store.base import Closing, FactRow, ReviewRow

STATUSES = ("pending", "accepted", "rejected")


def plan_json(review: ReviewRow) -> str:
    return json.dumps({"facts": [asdict(f) for f in review.facts], "closings": [asdict(c) for c in review.closings]},
                      ensure_ascii=False)


def review_from(values: dict[str, Any]) -> ReviewRow:
    """A review from its stored columns (`plan` as JSON text or an already decoded object)."""
    plan = values["plan"]
    if isinstance(plan, str | bytes):
        plan = json.loads(plan)
    return ReviewRow(
        id=values["id"], tenant=values["tenant"], user_id=values["user_id"], memory_id=values["memory_id"],
        incumbent=values["incumbent"], source=values["source"], incumbent_source=values["incumbent_source"],
        created_at=float(values["created_at"]), facts=tuple(FactRow(**f) for f in plan["facts"]),
        closings=tuple(Closing(**c) for c in plan["closings"]), status=values["status"],
        decided_at=float(values["decided_at"]) if values["decided_at"] is not None else None,
        decided_by=values["decided_by"], note=values["note"] or "")


COLUMNS = ("id", "tenant", "user_id", "memory_id", "incumbent", "source", "incumbent_source", "created_at", "plan",
           "status", "decided_at", "decided_by", "note")


def review_values(review: ReviewRow) -> tuple[Any, ...]:
    """The review's values in `COLUMNS` order."""
    return (review.id, review.tenant, review.user_id, review.memory_id, review.incumbent, review.source,
            review.incumbent_source, review.created_at, plan_json(review), review.status, review.decided_at,
            review.decided_by, review.note)
