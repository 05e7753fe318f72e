"""The memory systems compared on LoCoMo, each behind one `search(query, vector, limit)`.

- `ebbing`, `ebbing_live`, `ebbing_cold`, `ebbing_no_forgetting`: a `Memory` the conversation was replayed into
  turn by turn (`Replay`), searched as `search()` does by default (deep recall), live tiers only, with the archive
  always, or replayed without sweeps;
- `fifo`: the newest N turns in a `Memory` (the same hybrid search), N = the live records Ebbing ends with;
- `full_vector`: every turn, exact cosine over the same embedder's vectors (numpy), no forgetting;
- `full_bm25`: every turn, SQLite FTS5's `bm25()` over the same keyword terms the store indexes.

A returned record covers the dia_id it was stored with, the dia_ids of turns merged into it as
restatements (the agent saw `add` return the existing record), and, through `source_ids`, the dia_ids
of the records it was made from (a summary covers the turns it summarises).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

import numpy as np

from ebbing.embed.base import Embedder
from ebbing.errors import NotFound
from ebbing.eval.locomo import Conversation, Turn
from ebbing.memory import Memory
from ebbing.model import Hit, MemoryRecord, Tier
from ebbing.text.terms import match_expression, query_terms, terms
from ebbing.text.tokens import TokenCounter

DAY = timedelta(days=1)
RECALL_LIMIT = 5  # what the agent recalls before each turn
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


class CachingEmbedder:
    """Wraps an embedder so each text is embedded once per run, in large batches, and shared by every
    system: the same `name` and `dimensions`, so a store built through it is a store of the wrapped model."""

    def __init__(self, inner: Embedder, batch: int = 256) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self.batch = batch
        self._cache: dict[tuple[bool, str], np.ndarray] = {}
        self.computed = 0  # texts actually embedded
        self.seconds = 0.0  # time spent embedding them

    def prime(self, texts: Iterable[str], *, query: bool = False,
              on_progress: Callable[[int], None] | None = None) -> None:
        """Embed every text not yet cached, `batch` at a time."""
        missing = list(dict.fromkeys(t for t in texts if (query, t) not in self._cache))
        for start in range(0, len(missing), self.batch):
            chunk = missing[start : start + self.batch]
            self._compute(chunk, query)
            if on_progress:
                on_progress(len(chunk))

    def _compute(self, texts: list[str], query: bool) -> None:
        begin = time.perf_counter()
        vectors = self.inner.embed(texts, query=query)
        self.seconds += time.perf_counter() - begin
        self.computed += len(texts)
        for text, vector in zip(texts, vectors, strict=True):
            self._cache[(query, text)] = np.asarray(vector, dtype=np.float32)

    def vector(self, text: str, *, query: bool = False) -> np.ndarray:
        if (query, text) not in self._cache:
            self._compute([text], query)
        return self._cache[(query, text)]

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        missing = list(dict.fromkeys(t for t in texts if (query, t) not in self._cache))
        if missing:
            self._compute(missing, query)
        return np.stack([self._cache[(query, t)] for t in texts])


@dataclass(frozen=True)
class Item:
    """One returned memory: the dia_ids it covers and its line in a context."""

    covers: frozenset[str]
    line: str
    tokens: int


class System(Protocol):
    name: str

    def rank(self, query: str, vector: np.ndarray, limit: int) -> list[Item]:
        """The `limit` best memories for `query` (its query embedding given), changing nothing: every question
        sees the state the conversation left."""
        ...

    def search(self, query: str, vector: np.ndarray, limit: int) -> tuple[list[Item], float]:
        """The system's own search, as an agent calls it (which may count uses), and the seconds it took."""
        ...


def stamp(at: datetime) -> str:
    """"8 May 2023", independent of the locale."""
    return f"{at.day} {MONTHS[at.month - 1]} {at.year}"


def context_line(text: str, at: datetime) -> str:
    """How a memory appears in a context: dated, since LoCoMo's temporal questions ask for dates."""
    return f"[{stamp(at)}] {text}"


def covered(record: MemoryRecord, lookup: Callable[[str], MemoryRecord | None],
            merged: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """The dia_ids a record stands for: its own, those merged into it, and those of its sources, recursively."""
    out: set[str] = set()
    stack, seen = [record], set()
    while stack:
        current = stack.pop()
        if current.id in seen:
            continue
        seen.add(current.id)
        dia_id = current.metadata.get("dia_id")
        if isinstance(dia_id, str):
            out.add(dia_id)
        out.update(merged.get(current.id, ()))
        for source_id in current.source_ids:
            source = lookup(source_id)
            if source is not None:
                stack.append(source)
    return frozenset(out)


def fill(items: Sequence[Item], budget: int) -> list[Item]:
    """Items by rank while they fit under `budget` tokens; one that does not fit is skipped, the next tried."""
    out, used = [], 0
    for item in items:
        if used + item.tokens <= budget:
            out.append(item)
            used += item.tokens
    return out


def recall(items: Iterable[Item], evidence: Sequence[str]) -> float:
    """Share of the evidence dia_ids covered by the items."""
    found: set[str] = set()
    for item in items:
        found |= item.covers
    return len(found.intersection(evidence)) / len(evidence)


# -- Ebbing ----------------------------------------------------------------------------------------------


@dataclass
class ReplayStats:
    turns: int = 0
    recalls: int = 0  # per-turn recall searches
    recalled: int = 0  # hits they returned
    merges: int = 0  # turns merged into an earlier record as restatements
    sweeps: int = 0
    sweep_seconds: float = 0.0
    transitions: dict[str, int] = field(default_factory=dict)
    trashed: dict[str, int] = field(default_factory=dict)  # records sent to the trash, by the policy that decided
    purged: int = 0  # trashed records erased after the grace period
    summaries: int = 0
    tiers: dict[str, int] = field(default_factory=dict)  # at question time
    seconds: float = 0.0

    @property
    def live(self) -> int:
        return self.tiers.get(Tier.HOT.value, 0) + self.tiers.get(Tier.WARM.value, 0)


def midnights(after: datetime, until: datetime) -> list[datetime]:
    """Every 00:00 UTC in (after, until]."""
    first = after.replace(hour=0, minute=0, second=0, microsecond=0) + DAY
    out = []
    while first <= until:
        out.append(first)
        first += DAY
    return out


class Replay:
    """A conversation replayed into a fresh `Memory`, as an agent living through it would.

    Before each turn is stored, the agent recalls with that turn as the query (`search`, which counts
    uses and so reinforces what comes back). `turn_queries="passage"` recalls with the vector the turn is
    stored with (each turn embedded once, as an agent that embeds a message once for both does);
    `"query"` embeds it again as a query, as `search(text)` alone would.

    With forgetting on, sweeps run as time passes: `daily` sweeps at every midnight (UTC) crossed,
    `session` once at each session's start; the questions come a day after the last turn, after the
    sweeps due by then.
    """

    def __init__(self, conversation: Conversation, embedder: CachingEmbedder, directory: Path, *,
                 forgetting: bool = True, sweeps: str = "session", turn_queries: str = "passage",
                 on_turn: Callable[[], None] | None = None) -> None:
        if sweeps not in ("daily", "session"):
            raise ValueError("sweeps must be daily or session")
        if turn_queries not in ("passage", "query"):
            raise ValueError("turn_queries must be passage or query")
        self.turn_queries = turn_queries
        self.conversation = conversation
        self.embedder = embedder
        self.directory = directory
        self.forgetting = forgetting
        self.sweeps = sweeps
        self.on_turn = on_turn
        self.user = conversation.sample_id
        self.merged: dict[str, set[str]] = {}  # record id -> dia_ids of turns merged into it
        self.record_of: dict[str, str] = {}  # dia_id -> the record id its turn ended up as
        self.stats = ReplayStats()
        self.question_at = conversation.end + DAY

    @property
    def database(self) -> Path:
        return self.directory / "ebbing.db"

    def open(self, database: Path | None = None) -> Memory:
        return Memory(database or self.database, embedder=self.embedder, actor="eval")

    def run(self) -> None:
        begin = time.perf_counter()
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.open() as memory:
            previous: Turn | None = None
            for turn in self.conversation.turns:
                if self.forgetting:
                    if self.sweeps == "daily" and previous is not None:
                        for moment in midnights(previous.at, turn.at):
                            self._sweep(memory, moment)
                    elif self.sweeps == "session" and (previous is None or previous.session != turn.session):
                        self._sweep(memory, turn.at)
                self._turn(memory, turn)
                previous = turn
            if self.forgetting:
                assert previous is not None
                moments = midnights(previous.at, self.question_at) if self.sweeps == "daily" else [self.question_at]
                for moment in moments:
                    self._sweep(memory, moment)
            counts = memory.stats(self.user)
            self.stats.tiers = dict(counts["by_tier"])
            self.stats.summaries = int(counts["by_kind"].get("summary", 0))
        self.stats.seconds = time.perf_counter() - begin

    def _turn(self, memory: Memory, turn: Turn) -> None:
        text = turn.rendered
        hits = memory.search(text, user_id=self.user, limit=RECALL_LIMIT, at=turn.at,
                             query_vector=self.embedder.vector(text, query=self.turn_queries == "query"))
        self.stats.recalls += 1
        self.stats.recalled += len(hits)
        result = memory.add(text, user_id=self.user, session_id=f"session_{turn.session}", at=turn.at,
                            metadata={"dia_id": turn.dia_id, "speaker": turn.speaker})
        record = result.records[0]
        self.record_of[turn.dia_id] = record.id
        if record.metadata.get("dia_id") != turn.dia_id:
            self.merged.setdefault(record.id, set()).add(turn.dia_id)
            self.stats.merges += 1
        self.stats.turns += 1
        if self.on_turn:
            self.on_turn()

    def _sweep(self, memory: Memory, at: datetime) -> None:
        begin = time.perf_counter()
        report = memory.sweep(at=at)
        self.stats.sweep_seconds += time.perf_counter() - begin
        self.stats.sweeps += 1
        for name, count in report.transitions.items():
            self.stats.transitions[name] = self.stats.transitions.get(name, 0) + count
        for change in report.changes:
            if change.target is Tier.TRASH:
                policy = "priority expiry" if "expired" in change.reason else "retention decay"
                self.stats.trashed[policy] = self.stats.trashed.get(policy, 0) + 1
        self.stats.purged += len(report.purged)

    def fate(self, dia_ids: Iterable[str]) -> dict[str, str]:
        """Where each turn's record is now: hot, warm, cold, trash, or purged. Call after `run`."""
        out = {}
        with self.open() as memory:
            for dia_id in dia_ids:
                try:
                    out[dia_id] = memory.get(self.record_of[dia_id]).tier.value
                except NotFound:
                    out[dia_id] = "purged"
        return out


def clone(database: Path, name: str) -> Path:
    """A copy of a closed store (its folder: database and archive), so two systems can be asked the same
    questions without one's recalls (which count as uses) changing what the other finds."""
    target = database.parent.with_name(f"{database.parent.name}-{name}")
    shutil.copytree(database.parent, target)
    return target / database.name


class MemorySystem:
    """An Ebbing store at question time, in two copies of the same state.

    `rank` asks the first copy with `Memory.search(..., count_use=False)` (the same ranking: hybrid candidates,
    calibrated relevance, retention weight, cold archive if asked, but no use counted), so no question
    changes what another finds. `search` is `Memory.search` on the second copy, timed: it counts uses (and
    lifts or revives what it returns) as it would for an agent asking the questions one after another.
    """

    def __init__(self, name: str, frozen: Memory, live: Memory, user: str, at: datetime, tokens: TokenCounter, *,
                 include_cold: bool | None = None, merged: Mapping[str, Iterable[str]] | None = None) -> None:
        self.name = name
        self.frozen = frozen
        self.live = live
        self.user = user
        self.at = at
        self.tokens = tokens
        self.include_cold = include_cold
        self.merged = merged or {}
        self._records: dict[str, MemoryRecord | None] = {}
        self._sizes: dict[str, int] = {}

    def _lookup(self, memory_id: str) -> MemoryRecord | None:
        if memory_id not in self._records:
            try:
                self._records[memory_id] = self.frozen.get(memory_id)
            except NotFound:
                self._records[memory_id] = None  # purged: its provenance is gone with it
        return self._records[memory_id]

    def _items(self, hits: Sequence[Hit]) -> list[Item]:
        items = []
        for hit in hits:
            line = context_line(hit.record.text, hit.record.created_at)
            if line not in self._sizes:  # summaries are long, and the tokenizer caches short texts only
                self._sizes[line] = self.tokens.count(line)
            items.append(Item(covered(hit.record, self._lookup, self.merged), line, self._sizes[line]))
        return items

    def rank(self, query: str, vector: np.ndarray, limit: int) -> list[Item]:
        hits = self.frozen.search(query, user_id=self.user, limit=limit, at=self.at, include_cold=self.include_cold,
                                  query_vector=vector, count_use=False)
        return self._items(hits)

    def search(self, query: str, vector: np.ndarray, limit: int) -> tuple[list[Item], float]:
        begin = time.perf_counter()
        hits = self.live.search(query, user_id=self.user, limit=limit, at=self.at, include_cold=self.include_cold,
                                query_vector=vector)
        seconds = time.perf_counter() - begin
        return self._items(hits), seconds

    def close(self) -> None:
        self.frozen.close()
        self.live.close()


def build_fifo(conversation: Conversation, size: int, embedder: CachingEmbedder, database: Path) -> list[Turn]:
    """A store holding only the newest `size` turns, bulk-imported (no per-turn recall, no sweeps); returns them."""
    database.parent.mkdir(parents=True, exist_ok=True)
    window = list(conversation.turns[len(conversation.turns) - size :]) if size > 0 else []
    lines = database.parent / "fifo.jsonl"
    with lines.open("w", encoding="utf-8") as handle:
        for turn in window:
            handle.write(json.dumps({"text": turn.rendered, "user_id": conversation.sample_id,
                                     "session_id": f"session_{turn.session}", "at": turn.at.isoformat(),
                                     "metadata": {"dia_id": turn.dia_id, "speaker": turn.speaker}}) + "\n")
    with Memory(database, embedder=embedder, actor="eval-fifo") as memory:
        if window:
            memory.import_jsonl(lines)
    return window


# -- full-history baselines ------------------------------------------------------------------------------


class FullVector:
    """Every turn, ranked by exact cosine with the query (the same embedder's vectors); no forgetting."""

    name = "full_vector"

    def __init__(self, conversation: Conversation, embedder: CachingEmbedder, tokens: TokenCounter) -> None:
        self.turns = conversation.turns
        self.matrix = np.stack([embedder.vector(t.rendered) for t in self.turns]).astype(np.float32)
        self.lines = [context_line(t.rendered, t.at) for t in self.turns]
        self.sizes = [tokens.count(line) for line in self.lines]

    def rank(self, query: str, vector: np.ndarray, limit: int) -> list[Item]:
        return self.search(query, vector, limit)[0]

    def search(self, query: str, vector: np.ndarray, limit: int) -> tuple[list[Item], float]:
        begin = time.perf_counter()
        scores = self.matrix @ vector
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        order = top[np.argsort(-scores[top], kind="stable")]
        seconds = time.perf_counter() - begin
        return [Item(frozenset([self.turns[i].dia_id]), self.lines[i], self.sizes[i]) for i in order.tolist()], seconds


class FullBm25:
    """Every turn, ranked by SQLite FTS5's `bm25()` over the keyword terms Ebbing's store indexes (jieba for
    Chinese, Snowball stems for English), any query term matching; no forgetting, no term cut-off."""

    name = "full_bm25"

    def __init__(self, conversation: Conversation, tokens: TokenCounter) -> None:
        self.turns = conversation.turns
        self.lines = [context_line(t.rendered, t.at) for t in self.turns]
        self.sizes = [tokens.count(line) for line in self.lines]
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE turns USING fts5 (terms, tokenize = 'unicode61 remove_diacritics 0')")
        self.db.executemany("INSERT INTO turns (rowid, terms) VALUES (?, ?)",
                            [(i, " ".join(terms(t.rendered))) for i, t in enumerate(self.turns)])
        self.db.commit()

    def rank(self, query: str, vector: np.ndarray, limit: int) -> list[Item]:
        return self.search(query, vector, limit)[0]

    def search(self, query: str, vector: np.ndarray, limit: int) -> tuple[list[Item], float]:
        begin = time.perf_counter()
        words = list(dict.fromkeys(query_terms(query)))
        rows = self.db.execute("SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
                               (match_expression(words), limit)).fetchall() if words else []
        seconds = time.perf_counter() - begin
        return [Item(frozenset([self.turns[i].dia_id]), self.lines[i], self.sizes[i]) for (i,) in rows], seconds

    def close(self) -> None:
        self.db.close()
