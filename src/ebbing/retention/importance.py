"""Importance: how much a record is worth keeping regardless of time.

    score = w0 * type_scores[kind]
          + w1 * min(1, access_count / recall_saturation)
          + w2 * marked                      (importance >= 0.9: someone said it matters)
          + w3 * relevance                   (0 when no current task is known)

with (w0, w1, w2, w3) = importance_weights, which add up to 1. It does not depend on `now`.
`Importance.sql` is the same sum in SQL, where relevance is always 0 (a sweep has no current task).
"""

from __future__ import annotations

import numpy as np

from ebbing.retention.base import KINDS, MARKED_IMPORTANCE, RecordBatch
from ebbing.retention.config import RetentionConfig
from ebbing.retention.sql import literal


class Importance:
    name = "importance"

    def __init__(self, config: RetentionConfig) -> None:
        self.config = config
        self._type_score = np.array([config.type_scores[kind] for kind in KINDS], dtype=np.float64)

    def score(self, batch: RecordBatch, now: float | np.ndarray) -> np.ndarray:
        """The weighted sum above; `now` is accepted for the policy protocol and does not matter."""
        w_type, w_recall, w_mark, w_relevance = self.config.importance_weights
        saturation = self.config.recall_saturation
        recalls = np.maximum(batch.access_count, 0).astype(np.float64)
        # A saturation of 0 (not rejected by the config) means any count saturates; dividing would give 0/0.
        recall_part = np.ones(len(batch)) if saturation <= 0 else np.minimum(1.0, recalls / saturation)
        relevance = np.zeros(len(batch)) if batch.relevance is None else batch.relevance
        total = (w_type * self._type_score[batch.kind] + w_recall * recall_part
                 + w_mark * batch.marked + w_relevance * relevance)
        # type_scores and relevance are not bounded above by anything upstream; keep the 0..1 contract.
        out: np.ndarray = np.clip(total, 0.0, 1.0)
        return out

    def sql(self, row: str, now: float) -> str:
        """`score` of row `row` as a PostgreSQL expression (`SqlPolicy`); `now` does not matter here either."""
        c, t = self.config, row
        w_type, w_recall, w_mark, w_relevance = (literal(w) for w in c.importance_weights)
        types = " ".join(f"WHEN '{k.value}' THEN {literal(c.type_scores[k])}" for k in KINDS)
        recall = ("1.0::float8" if c.recall_saturation <= 0
                  else f"least(1.0::float8, greatest({t}.access_count, 0)::float8 / {literal(c.recall_saturation)})")
        marked = f"(CASE WHEN {t}.importance >= {literal(MARKED_IMPORTANCE)} THEN 1.0 ELSE 0.0 END)"
        # The relevance term is kept (times 0) so the sum has the same terms, in the same order, as numpy's.
        return (f"least(greatest({w_type} * (CASE {t}.kind {types} END) + {w_recall} * {recall} + {w_mark} * "
                f"{marked} + {w_relevance} * 0.0, 0.0), 1.0)")
