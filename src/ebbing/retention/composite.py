"""The composite retention score the engine acts on, and the tier it implies.

How the three policies combine, per record, at a time `now`:

    base  = ebbinghaus                                      combine = "decay"      (the default)
          = importance                                      combine = "importance"
          = (1 - b) * ebbinghaus + b * importance           combine = "blend",  b = blend_importance
    score = base * priority                                 priority is a 0/1 gate: an expired P1/P2 record
                                                            scores 0, i.e. forgotten, whatever its decay says
    score = 1.0 exactly for exempt records (pinned, under legal hold, or P0)

Tiers come from the thresholds: score >= hot -> hot, >= warm -> warm, >= cold -> cold, else forgotten.
Where a forgotten record goes is `settle`'s decision: a P1 record stays in the cold archive until
`archive_days` after its last use, everything else goes to the trash. Tiers are handled as small integer
codes (0 hot .. 3 forgotten) so a whole batch is classified in one numpy call; `TIER_OF_CODE` turns a code
back into a `Tier`.
"""

from __future__ import annotations

import math
from dataclasses import fields, replace
from typing import Any

import numpy as np

from ebbing.errors import InvalidInput
from ebbing.model import Priority, Tier
from ebbing.retention import fused
from ebbing.retention.base import PRIORITIES, RecordBatch
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.retention.ebbinghaus import Ebbinghaus
from ebbing.retention.importance import Importance
from ebbing.retention.priority import PriorityExpiry

TIER_OF_CODE: tuple[Tier, ...] = (Tier.HOT, Tier.WARM, Tier.COLD, Tier.TRASH)  # trash = forgotten
FORGOTTEN = TIER_OF_CODE.index(Tier.TRASH)
COLD = TIER_OF_CODE.index(Tier.COLD)
P1 = PRIORITIES.index(Priority.P1)
HOUR = 3_600.0
PRECISION = 60.0  # seconds: projected_change refines a tier drop to within this


def take(batch: RecordBatch, index: np.ndarray) -> RecordBatch:
    """The rows `index` of a batch (repeats allowed), every column including relevance when present."""
    rows: dict[str, Any] = {}
    for column in fields(batch):
        value = getattr(batch, column.name)
        rows[column.name] = None if value is None else value[index]
    return replace(batch, **rows)


class Composite:
    name = "composite"

    def __init__(self, config: RetentionConfig | None = None) -> None:
        self.config = config or RetentionConfig()
        self.ebbinghaus = Ebbinghaus(self.config)
        self.priority = PriorityExpiry(self.config)
        self.importance = Importance(self.config)
        thresholds = self.config.thresholds
        self._thresholds = (thresholds[Tier.HOT], thresholds[Tier.WARM], thresholds[Tier.COLD])

    def score(self, batch: RecordBatch, now: float | np.ndarray) -> np.ndarray:
        """The composite score per record; `now` may be one time per record to follow a record through time."""
        combine = self.config.combine
        if np.ndim(now) == 0 and len(batch) >= fused.FUSED_AT and fused.applies(self.config):
            return fused.decay_scores(batch, float(now), self.config)  # one compiled pass for big sweeps
        # Only the parts the configured combination uses are computed: sweeps score whole stores.
        decay = None if combine == "importance" else self.ebbinghaus.score(batch, now)
        importance = None if combine == "decay" else self.importance.score(batch, now)
        return self._combine(batch, decay, self.priority.score(batch, now), importance)

    def breakdown(self, batch: RecordBatch, now: float | np.ndarray) -> dict[str, np.ndarray]:
        """Every part and the result, for explanations: ebbinghaus, priority, importance, composite."""
        decay = self.ebbinghaus.score(batch, now)
        gate = self.priority.score(batch, now)
        importance = self.importance.score(batch, now)
        return {"ebbinghaus": decay, "priority": gate, "importance": importance,
                "composite": self._combine(batch, decay, gate, importance)}

    def _combine(self, batch: RecordBatch, decay: np.ndarray | None, gate: np.ndarray,
                 importance: np.ndarray | None) -> np.ndarray:
        combine = self.config.combine
        if combine == "decay":
            assert decay is not None
            base = decay
        elif combine == "importance":
            assert importance is not None
            base = importance
        else:
            assert decay is not None and importance is not None
            weight = self.config.blend_importance
            base = (1.0 - weight) * decay + weight * importance
        out: np.ndarray = np.where(batch.exempt, 1.0, base * gate)
        return out

    def tiers(self, scores: np.ndarray) -> np.ndarray:
        """Tier codes (0 hot, 1 warm, 2 cold, 3 forgotten) for scores; index TIER_OF_CODE with them."""
        hot, warm, cold = self._thresholds
        scores = np.asarray(scores)
        if scores.ndim == 1 and len(scores) >= fused.FUSED_AT:
            return fused.tiers(scores, hot, warm, cold)
        # The config guarantees hot > warm > cold, so counting the thresholds a score misses gives its tier.
        out: np.ndarray = (3 - (scores >= cold).astype(np.int8) - (scores >= warm) - (scores >= hot)).astype(np.int8)
        return out

    def settle(self, batch: RecordBatch, codes: np.ndarray, now: float | np.ndarray) -> np.ndarray:
        """Where each record belongs, from its tier code: a forgotten P1 record is kept in the cold archive until
        `archive_days` after its last use (an agent may still need what faded from its working memory, and the
        archive costs no live space); other forgotten records go to the trash. Only the forgotten are looked at,
        so a sweep of mostly live records pays almost nothing for it."""
        forgotten = np.flatnonzero(codes == FORGOTTEN)
        if forgotten.size == 0 or self.config.archive_days <= 0:
            return codes
        last, created = batch.last_accessed_at[forgotten], batch.created_at[forgotten]
        referenced = np.where(np.isnan(last), created, last)
        moment = now if np.ndim(now) == 0 else np.asarray(now)[forgotten]
        keep = (batch.priority[forgotten] == P1) & (moment - referenced <= self.config.archive_days * DAY)
        if not keep.any():
            return codes
        out = codes.copy()
        out[forgotten[keep]] = COLD
        return out

    def placement(self, batch: RecordBatch, now: float) -> np.ndarray:
        """Tier codes a sweep at `now` would give: the score's tier, settled."""
        scores = self.score(batch, now)
        if len(batch) >= fused.FUSED_AT:
            return fused.placement(scores, batch, float(now), self.config)  # tiers and settle in one pass
        return self.settle(batch, self.tiers(scores), now)

    def projected_change(self, batch_of_one: RecordBatch, now: float,
                         horizon_days: float = 3650) -> tuple[float, Tier] | None:
        """When the record would first drop below its current tier if never used again, and to which tier.

        None when it does not drop within `horizon_days` (exempt records never do, nor forgotten ones).
        The score is evaluated on a coarse grid (hourly for two days, then every six hours), all at once,
        then the first drop is narrowed by bisection on the tier code to within a minute. Bisection on the
        code rather than on the score matters: the priority gate makes the score jump, not cross.
        """
        if len(batch_of_one) != 1:
            raise InvalidInput("batch_of_one", "needs exactly one record")
        if not math.isfinite(horizon_days) or horizon_days <= 0:
            raise InvalidInput("horizon_days", "must be a finite number > 0")
        if bool(batch_of_one.exempt[0]):
            return None
        current = int(self.placement(batch_of_one, now)[0])
        if current == FORGOTTEN:
            return None
        horizon = horizon_days * DAY
        offsets = np.concatenate([np.arange(1, 49) * HOUR, np.arange(2 * DAY + 6 * HOUR, horizon, 6 * HOUR)])
        offsets = np.append(offsets[offsets < horizon], horizon)
        codes = self._codes_at(batch_of_one, now + offsets)
        dropped = np.flatnonzero(codes > current)
        if dropped.size == 0:
            return None
        first = int(dropped[0])
        # Non-increasing in time for a record left alone (decay falls, the gate only closes, protection only
        # ends), so the tier is `current` up to the drop and lower after: bisection finds the boundary.
        low = now if first == 0 else now + float(offsets[first - 1])
        high = now + float(offsets[first])
        code = int(codes[first])
        while high - low > PRECISION:
            middle = (low + high) / 2
            middle_code = int(self._codes_at(batch_of_one, np.array([middle]))[0])
            if middle_code > current:
                high, code = middle, middle_code
            else:
                low = middle
        return high, TIER_OF_CODE[code]

    def _codes_at(self, batch_of_one: RecordBatch, times: np.ndarray) -> np.ndarray:
        """Tier codes of one record at many times: the record repeated once per time, scored in one call."""
        repeated = take(batch_of_one, np.zeros(len(times), dtype=np.intp))
        return self.settle(repeated, self.tiers(self.score(repeated, times)), times)
