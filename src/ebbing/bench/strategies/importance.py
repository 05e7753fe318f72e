"""Importance scoring (the seed's strategy C): what scores low on importance is dropped first.

The Ebbinghaus strategy's set-up with `RetentionConfig(combine="importance")`: retention is the
importance score (0.3 kind + 0.25 recall frequency + 0.25 user mark + 0.2 task relevance) behind the
priority gate, so it both ranks retrieval and decides, in the daily sweep, what goes cold and to the trash.
"""

from __future__ import annotations

from ebbing.bench.strategies.ebbinghaus import Ebbinghaus


class Importance(Ebbinghaus):
    name = "importance"
    combine = "importance"
