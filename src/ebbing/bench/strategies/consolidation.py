"""Layered consolidation (the seed's strategy D without its fact layer): old turns become summaries.

The engine's consolidation with facts off: when a session's unconsolidated turns reach 80% of the working
budget (the default `ConsolidationConfig`: 2,000 tokens), the oldest half-budget's worth becomes one summary
record (the extractive summariser keeps every sentence with a number, a name, a decision or a cause) and
those raw turns go to the cold archive. Not swept: here forgetting is consolidation, the raw wording goes
and the summary stays. The context is the summaries and live turns the engine retrieves for the question,
then the session's 20 newest unconsolidated turns (the working memory).
"""

from __future__ import annotations

from pathlib import Path

from ebbing.bench.score import Piece
from ebbing.bench.strategies.base import USER, EngineStrategy
from ebbing.embed.base import Embedder
from ebbing.ingest.consolidate import ConsolidationConfig
from ebbing.ingest.pipeline import IngestConfig
from ebbing.memory import Memory

RECENT_TURNS = 20


class Consolidation(EngineStrategy):
    name = "consolidation"

    def open(self, path: Path, embedder: Embedder | None) -> Memory:
        return Memory(path, embedder=embedder, tokens=self.tokens, actor="bench-consolidation",
                      ingest=IngestConfig(facts=False), consolidation=ConsolidationConfig())

    def context(self, question: str, at: str, budget: int) -> list[Piece]:
        recent = self.memory.store.session_turns(self.memory.tenant, USER, self.session, unconsolidated=True,
                                                 limit=RECENT_TURNS) if self.session else []
        return self.build([("summaries", "Earlier conversations", self.retrieve(question, at)),
                           ("recent", "Recent turns", recent)], budget)
