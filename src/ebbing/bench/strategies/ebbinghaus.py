"""Ebbinghaus decay (the seed's strategy B): memories fade along the forgetting curve unless used.

The engine with `RetentionConfig(combine="decay")` (R = W_base * exp(-dt / S), recalls reset the clock
and raise S), no fact store and no consolidation, swept once a day so faded records go cold and then to
the trash. The context is the engine's retrieval for the question: relevance (vector and keyword, above
the floor) weighted by retention, best first, filled into the budget.
"""

from __future__ import annotations

from pathlib import Path

from ebbing.bench.score import Piece
from ebbing.bench.strategies.base import NO_CONSOLIDATION, EngineStrategy
from ebbing.embed.base import Embedder
from ebbing.ingest.consolidate import ConsolidationConfig
from ebbing.ingest.pipeline import IngestConfig
from ebbing.memory import Memory
from ebbing.retention.config import RetentionConfig


class Ebbinghaus(EngineStrategy):
    name = "ebbinghaus"
    combine = "decay"
    sweeps = True

    def open(self, path: Path, embedder: Embedder | None) -> Memory:
        return Memory(path, embedder=embedder, tokens=self.tokens, actor=f"bench-{self.name}",
                      retention=RetentionConfig(combine=self.combine), ingest=IngestConfig(facts=False),
                      consolidation=ConsolidationConfig(working_budget_tokens=NO_CONSOLIDATION))

    def context(self, question: str, at: str, budget: int) -> list[Piece]:
        return self.build([("relevant", "Relevant memories", self.retrieve(question, at))], budget)
