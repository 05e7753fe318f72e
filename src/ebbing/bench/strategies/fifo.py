"""FIFO: the newest turns that fit the budget, nothing else (the seed's strategy A, "no forgetting strategy").

The turns are stored in a `Memory` like every other strategy's (facts, restatement merges and
consolidation off, never swept, so it holds every turn verbatim); the window is read back from that
store in the order the turns were added, newest first, until the next turn would not fit, and shown
oldest first. Everything older has rolled out.
"""

from __future__ import annotations

from pathlib import Path

from ebbing.bench.score import Piece
from ebbing.bench.strategies.base import NO_CONSOLIDATION, USER, EngineStrategy
from ebbing.embed.base import Embedder
from ebbing.ingest.consolidate import ConsolidationConfig
from ebbing.ingest.pipeline import IngestConfig
from ebbing.memory import Memory
from ebbing.recall.context import LINE_GAP, render_line

TITLE = "Recent turns"


class Fifo(EngineStrategy):
    name = "fifo"

    def open(self, path: Path, embedder: Embedder | None) -> Memory:
        return Memory(path, embedder=embedder, tokens=self.tokens, actor="bench-fifo",
                      ingest=IngestConfig(facts=False, dedupe=False),
                      consolidation=ConsolidationConfig(working_budget_tokens=NO_CONSOLIDATION))

    def context(self, question: str, at: str, budget: int) -> list[Piece]:
        records = list(self.memory.store.scan(self.memory.tenant, USER))  # in the order they were added
        header = f"## {TITLE}"
        used = self.tokens.count(header)
        window: list[Piece] = []
        for record in reversed(records):
            line = " ".join(render_line(record).split())
            cost = self.tokens.count(LINE_GAP + line)
            if used + cost > budget:
                break  # a window: the first turn that does not fit ends it
            used += cost
            window.append(Piece(line, cost, self.turns(record)))
        if not window:
            return []
        return [Piece(header, self.tokens.count(header), ()), *reversed(window)]
