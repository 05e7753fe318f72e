"""What a forgetting strategy is to the agent benchmark, and the machinery the engine-backed ones share.

A strategy sees the conversation one turn at a time (`observe`) and, when the agent needs it, gives the
context it would put in front of the model for a question, under a token budget (`context`), as `Piece`s:
one per line of text, with its token count and the scenario turns it derives from (a raw turn: itself;
a summary: the turns it summarises), so the scorer can tell where every token came from.

Every strategy here is a configuration of the real engine (`ebbing.Memory`): turns are added with
`Memory.add(text, session_id=turn.session, metadata={"turn", "role"}, at=turn.at)`, nothing else. The
scenario's labels (kind, noise, slots) are never shown to a strategy; the engine infers what it infers.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from ebbing.bench.scenario import Turn
from ebbing.bench.score import Piece
from ebbing.embed.base import Embedder
from ebbing.memory import Memory
from ebbing.model import MemoryRecord, Tier
from ebbing.recall.context import Context, build_context
from ebbing.text.tokens import XlmrTokens

USER = "agent-user"  # the one user of the benchmark conversation
NO_CONSOLIDATION = 10**9  # a working budget no session reaches: consolidation never triggers
SEARCH_LIMIT = 100  # candidates a retrieval strategy asks for (the engine's relevance floor still applies)


class Strategy(Protocol):
    """A forgetting strategy as the benchmark drives it."""

    name: str

    def observe(self, turn: Turn) -> None:
        """One more turn of the conversation, at `turn.at`."""
        ...

    def context(self, question: str, at: str, budget: int) -> list[Piece]:
        """What the agent would be shown to answer `question` at `at`, in at most `budget` tokens."""
        ...

    def close(self) -> None: ...


class CachedEmbedder:
    """Wraps an embedder and remembers every vector it made, so strategies sharing one process embed each
    text once. Same `name` and `dimensions` as the wrapped embedder: a store cannot tell them apart."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self._vectors: dict[tuple[bool, str], np.ndarray] = {}
        self._lock = threading.Lock()
        self.misses = 0

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        texts = list(texts)
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if (query, t) not in self._vectors))
        if missing:
            made = self.inner.embed(missing, query=query)
            with self._lock:
                self.misses += len(missing)
                for text, vector in zip(missing, made, strict=True):
                    self._vectors[(query, text)] = np.asarray(vector, dtype=np.float32)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            return np.stack([self._vectors[(query, t)] for t in texts])


class CachedTokens:
    """The engine's XLM-R token counter with every count remembered. The engine's own cache keeps texts up to
    1,024 characters, so summaries and whole contexts are tokenised again at every context build; the counts
    are the same, only computed once. Shared by the strategies of a process like `CachedEmbedder`."""

    name = XlmrTokens.name

    def __init__(self) -> None:
        self.inner = XlmrTokens()
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        with self._lock:
            known = self._counts.get(text)
        if known is None:
            known = self.inner.count(text)
            with self._lock:
                self._counts[text] = known
        return known


class EngineStrategy(ABC):
    """A strategy backed by one `Memory` in its own folder. Subclasses choose the configuration (`open`),
    whether to sweep once a day (`sweeps`), and how to build the context (`context`)."""

    name = "engine"
    sweeps = False

    def __init__(self, workdir: Path, embedder: Embedder | None = None, tokens: CachedTokens | None = None) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.tokens = tokens or CachedTokens()
        self.memory = self.open(workdir / "memory.db", embedder)
        self.turn_of: dict[str, int] = {}  # record id -> the scenario turn it was added for
        self.session: str | None = None
        self.day: int | None = None

    def open(self, path: Path, embedder: Embedder | None) -> Memory:
        return Memory(path, embedder=embedder, tokens=self.tokens, actor=f"bench-{self.name}")

    def observe(self, turn: Turn) -> None:
        if self.sweeps and self.day is not None and turn.day != self.day:
            self.memory.sweep(at=turn.at)  # the daily sweep, as the first thing of a new day
        self.day, self.session = turn.day, turn.session
        added = self.memory.add(turn.text, user_id=USER, session_id=turn.session,
                                metadata={"turn": turn.index, "role": turn.role}, at=turn.at)
        for record in added.records:  # a restatement comes back as the record it merged into: keep the first
            self.turn_of.setdefault(record.id, turn.index)

    @abstractmethod
    def context(self, question: str, at: str, budget: int) -> list[Piece]: ...

    def close(self) -> None:
        self.memory.close()

    # -- helpers -------------------------------------------------------------------------------------

    def turns(self, record: MemoryRecord) -> tuple[int, ...]:
        """The scenario turns a record derives from: its own (a restatement merged into it keeps the first
        saying's turn), and for a summary those of its sources."""
        found = {self.turn_of[s] for s in record.source_ids if s in self.turn_of}
        index = self.turn_of.get(record.id, record.metadata.get("turn"))
        if isinstance(index, int):
            found.add(index)
        return tuple(sorted(found))

    def retrieve(self, question: str, at: str, *, kinds: Sequence[str] = ()) -> list[MemoryRecord]:
        """The engine's search, best first: relevance (vector and keyword, above the floor) weighted by
        retention. Returned records count as used, as any search does."""
        filters = {"kind": {"$in": list(kinds)}} if kinds else None
        hits = self.memory.search(question, user_id=USER, limit=SEARCH_LIMIT, filters=filters, at=at)
        return [hit.record for hit in hits]

    def live(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        return [r for r in records if r.tier in (Tier.HOT, Tier.WARM)]

    def build(self, sections: Sequence[tuple[str, str, Sequence[MemoryRecord]]], budget: int) -> list[Piece]:
        """The engine's context builder over the chosen sections, as pieces."""
        return self.pieces(build_context(sections, budget, self.tokens))

    def pieces(self, built: Context) -> list[Piece]:
        """One piece per section header (derived from no turn) and per line (from its record's turns);
        their tokens add up to the context's."""
        records = {r.id: r for r in built.records}
        out: list[Piece] = []
        for section in built.sections:
            header = section.tokens - sum(line.tokens for line in section.lines)
            out.append(Piece(f"## {section.title}", header, ()))
            out.extend(Piece(line.text, line.tokens, self.turns(records[line.record_id])) for line in section.lines)
        return out
