"""Ebbing as shipped: `Memory(path)` with every default, swept once a day.

Defaults: Ebbinghaus decay behind the priority gate, the fact store with timelines, restatement merges,
consolidation of each session at 80% of a 2,000-token working budget. The context is
`Memory.context(question, user_id, budget_tokens=budget, session_id=<current session>, at=...)`: pinned
and P0 memories, current facts, relevant summaries and episodes, then the session's recent turns.
"""

from __future__ import annotations

from ebbing.bench.score import Piece
from ebbing.bench.strategies.base import USER, EngineStrategy


class Default(EngineStrategy):
    name = "ebbing"
    sweeps = True

    def context(self, question: str, at: str, budget: int) -> list[Piece]:
        return self.pieces(self.memory.context(question, user_id=USER, budget_tokens=budget, session_id=self.session,
                                               at=at))
