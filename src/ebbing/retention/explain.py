"""Why a record is where it is: its retention by policy now, and when it will move down if unused."""

from __future__ import annotations

from typing import Any

from ebbing.clock import iso
from ebbing.model import MemoryRecord
from ebbing.retention.base import RecordBatch
from ebbing.retention.composite import TIER_OF_CODE, Composite
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.retention.ebbinghaus import salience_multiplier


def explain(record: MemoryRecord, composite: Composite, config: RetentionConfig, now: float) -> dict[str, Any]:
    batch = RecordBatch.from_records([record])
    parts = {name: round(float(values[0]), 4) for name, values in composite.breakdown(batch, now).items()}
    by_score = TIER_OF_CODE[int(composite.placement(batch, now)[0])]
    change = composite.projected_change(batch, now)
    referenced = float(batch.referenced_at[0])
    return {
        "id": record.id,
        "at": iso(now),
        "tier": record.tier.value,
        "tier_by_score": by_score.value,
        "score": parts.pop("composite"),
        "policies": parts,
        "combine": composite.combination,  # config.combine for the configured composite
        "exempt": bool(batch.exempt_at(now)[0]),
        "why_exempt": [name for name in ("pinned", "held") if getattr(record, name)]
        + (["P0"] if record.priority.value == "P0" else []),
        "expires_at": iso(record.expires_at.timestamp()) if record.expires_at else None,
        "expired": bool(batch.expired(now)[0]),
        "stability_days": round(float(composite.ebbinghaus.stability(batch)[0]) / DAY, 2),
        "importance": record.importance,
        "salience_stability_factor": round(float(salience_multiplier(batch.importance, config)[0]), 3),
        "referenced_at": iso(referenced),
        "idle_days": round(max(0.0, now - referenced) / DAY, 2),
        "access_count": record.access_count,
        "thresholds": {tier.value: value for tier, value in config.thresholds.items()},
        "projected": None if change is None else {"at": iso(change[0]), "tier": change[1].value},
    }
