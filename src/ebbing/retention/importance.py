"""Importance: how much a record is worth keeping regardless of time.

    score = w0 * type_scores[kind]
          + w1 * min(1, access_count / recall_saturation)
          + w2 * marked                      (importance >= 0.9: someone said it matters)
          + w3 * relevance                   (0 when no current task is known)

with (w0, w1, w2, w3) = importance_weights, which add up to 1. It does not depend on `now`.
"""

from __future__ import annotations

import numpy as np

from ebbing.retention.base import KINDS, RecordBatch
from ebbing.retention.config import RetentionConfig


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
