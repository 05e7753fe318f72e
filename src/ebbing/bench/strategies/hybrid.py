"""Hybrid (the seed's B + light fact store): Ebbinghaus decay plus the engine's fact store, no summaries.

The Ebbinghaus strategy's set-up with fact extraction on: statements such as "my timeout is 30s" become
(subject, attribute) -> value facts, a new value closes the old one. The context is laid out as the seed's
hybrid lays it out: what retrieval finds for the question, then every current fact ("key facts, always
kept"). The facts are placed in the budget first, so retrieval can never crowd them out.
"""

from __future__ import annotations

from pathlib import Path

from ebbing.bench.score import Piece
from ebbing.bench.strategies.base import NO_CONSOLIDATION, USER, EngineStrategy
from ebbing.embed.base import Embedder
from ebbing.ingest.consolidate import ConsolidationConfig
from ebbing.memory import Memory
from ebbing.model import Tier
from ebbing.retention.config import RetentionConfig

FACTS_TITLE, RELEVANT_TITLE = "Key facts", "Relevant memories"


class Hybrid(EngineStrategy):
    name = "hybrid"
    sweeps = True

    def open(self, path: Path, embedder: Embedder | None) -> Memory:
        return Memory(path, embedder=embedder, tokens=self.tokens, actor="bench-hybrid",
                      retention=RetentionConfig(combine="decay"),
                      consolidation=ConsolidationConfig(working_budget_tokens=NO_CONSOLIDATION))

    def context(self, question: str, at: str, budget: int) -> list[Piece]:
        rows = self.memory.store.current_facts(self.memory.tenant, USER)
        facts = [self.memory.get(memory_id) for memory_id in dict.fromkeys(row.memory_id for row in rows)]
        facts = [r for r in facts if r.tier is not Tier.TRASH]
        pieces = self.build([("facts", FACTS_TITLE, facts),
                             ("relevant", RELEVANT_TITLE, self.retrieve(question, at))], budget)
        headers = [p.text for p in pieces if not p.turns]
        if f"## {RELEVANT_TITLE}" not in headers:
            return pieces
        start = next(i for i, p in enumerate(pieces) if not p.turns and p.text == f"## {RELEVANT_TITLE}")
        return pieces[start:] + pieces[:start]  # the budget was filled facts first; they are read last
