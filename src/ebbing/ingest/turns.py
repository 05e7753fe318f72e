"""The message before: what a reply is judged with.

"Yeah, I drew it. It stands for freedom." means little alone and much after "Did you paint that? What does it
mean?". Salience (`ingest.salience`) judges a message with the one before it in the same session, when that one
came within `CONTEXT_WINDOW`. The message before is read from the store once per session and write, then
followed through the batch being written (the lines of one import are consecutive turns too).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ebbing.ingest.salience import CONTEXT_WINDOW, Context
from ebbing.model import Kind, MemoryRecord, Scope


class LatestTurns(Protocol):
    def latest(self, tenant: str, user_id: str | None, session_id: str | None, limit: int) -> list[MemoryRecord]:
        """A user's newest live records other than summaries (of one session when given), newest first."""
        ...


class PreviousTurns:
    """The last message of each session seen by one write: from the store, then from the batch."""

    def __init__(self, store: LatestTurns) -> None:
        self.store = store
        self.last: dict[tuple[str, str | None, str], tuple[Context, float] | None] = {}

    def before(self, scope: Scope, at: float) -> Context | None:
        """The message said just before `at` in the scope's session, if it came within `CONTEXT_WINDOW`."""
        if scope.session_id is None:
            return None
        key = (scope.tenant, scope.user_id, scope.session_id)
        if key not in self.last:
            rows = self.store.latest(scope.tenant, scope.user_id, scope.session_id, 1)
            self.last[key] = ((Context(rows[0].text, rows[0].kind, rows[0].embedding), rows[0].created_at.timestamp())
                              if rows else None)
        found = self.last[key]
        if found is None:
            return None
        context, said_at = found
        return context if 0.0 <= at - said_at <= CONTEXT_WINDOW else None

    def said(self, scope: Scope, at: float, text: str, kind: Kind, vector: np.ndarray) -> None:
        """A message of this write: the one before the next in its session."""
        if scope.session_id is not None:
            self.last[(scope.tenant, scope.user_id, scope.session_id)] = (Context(text, kind, vector), at)
