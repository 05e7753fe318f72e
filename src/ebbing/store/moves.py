"""A tier move a sweep makes (`Change`) and why, in words (`reasons`): shared by the Python sweep
(`ebbing.lifecycle.sweep`) and the one that runs inside PostgreSQL (`store/postgres_sweep.py`), so both
report the same moves in the same words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ebbing.model import Priority, Tier
from ebbing.retention.base import PRIORITIES
from ebbing.retention.composite import TIER_OF_CODE, Composite
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.store.base import SweepRows


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



def reasons(composite: Composite, config: RetentionConfig, rows: SweepRows, now: float,
            scores: np.ndarray, targets: np.ndarray, which: np.ndarray) -> dict[int, str]:
    """Why each record in `which` goes where it goes, in words, naming the policy that decided."""
    gate = composite.priority.score(rows.batch, now)
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
