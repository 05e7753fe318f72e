"""The write path: from validated drafts to records, facts, sealed secrets and merges.

For each draft, in order: guard (secrets out, placeholders in; low-information turns marked), classify
(kind, salience, priority, pin), embed, look for a restatement of something already stored (merge
instead of adding), extract facts and close the values they supersede. The caller writes the plan in
one transaction.

Facts are the user's: a draft whose metadata has `"role": "assistant"` (the agent's own explanations,
"the 60s database timeout is a separate concern…") is stored and searchable like any record, but no facts
are extracted from it, so it neither states nor supersedes a value, and a pin trigger in it ("…and remember
that key scans are expensive", "anything I should keep in mind") does not pin it: only the caller's
`pinned=True` does. One text yields at most one fact per
slot: when it states the same slot twice, the last value stated wins ("30s, no, 60s"), and a record never
supersedes its own facts.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ebbing.ingest.classify import Classifier, RuleClassifier
from ebbing.ingest.dedupe import is_restatement
from ebbing.ingest.facts import Fact, FactExtractor, RuleFacts, same_slot, slot_head
from ebbing.ingest.guard import SecretBox, guard
from ebbing.model import Event, Kind, MemoryRecord, Priority, Scope, content_hash, new_id, when
from ebbing.recall.search import Background, is_cjk
from ebbing.recall.terms import terms
from ebbing.store.base import Closing, FactRow, FullStore, SealedSecret

LOW_INFORMATION_IMPORTANCE = 0.1
PIN_BONUS = 0.3  # what a pin trigger adds to the classifier's importance (see ingest.classify)


@dataclass(frozen=True)
class IngestConfig:
    drop_low_information: bool = False  # "ok", "哈哈", "👍": stored as temporary, or (True) not at all
    dedupe: bool = True  # merge restatements into the record they restate (add only; imports keep all)
    dedupe_min_z: float = 6.0  # see ingest.dedupe
    dedupe_swap_z: float = 9.5
    facts: bool = True


@dataclass(frozen=True)
class Draft:
    """A validated request to add one record, before anything is derived from it."""

    text: str
    scope: Scope
    kind: Kind | None
    importance: float | None
    priority: Priority | None
    pinned: bool
    held: bool
    security: bool
    metadata: dict[str, Any]
    created_at: float
    id: str | None = None
    last_accessed_at: float | None = None
    access_count: int = 0
    source_ids: tuple[str, ...] = ()


@dataclass
class Plan:
    records: list[MemoryRecord] = field(default_factory=list)
    terms: list[list[str]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    facts: list[FactRow] = field(default_factory=list)
    closings: list[Closing] = field(default_factory=list)
    secrets: list[SealedSecret] = field(default_factory=list)
    merges: list[tuple[str, int, Event]] = field(default_factory=list)  # (existing id, uses to add, event)
    results: list[str] = field(default_factory=list)  # per kept draft: the id it ended up as


def slot_key(fact: Fact) -> str:
    return " ".join(sorted(fact.slot))


def _slot_hash(slot: str) -> str:
    return hashlib.sha256(slot.encode()).hexdigest()[:12]  # events name slots without their words


class Ingest:
    def __init__(self, store: FullStore, embed: Callable[[list[str]], np.ndarray],
                 background: Callable[[], Background], config: IngestConfig, *, classifier: Classifier | None = None,
                 extractor: FactExtractor | None = None, box: SecretBox | None = None, actor: str = "api") -> None:
        self.store, self.embed, self.background, self.config = store, embed, background, config
        self.classifier = classifier or RuleClassifier()
        self.extractor = extractor or RuleFacts()
        self.box, self.actor = box, actor
        self.tag_key = tag_key(store)

    def prepare(self, drafts: Sequence[Draft], *, dedupe: bool) -> Plan:
        plan = Plan()
        guarded = [guard(d.text, tag_key=self.tag_key) for d in drafts]
        kept = [(d, g) for d, g in zip(drafts, guarded, strict=True)
                if not (g.low_information and self.config.drop_low_information)]
        vectors = self.embed([g.text for _, g in kept]) if kept else np.zeros((0, 0), dtype=np.float32)
        current: dict[tuple[str, str | None], list[FactRow]] = {}
        for (draft, shield), vector in zip(kept, vectors, strict=True):
            record = self._record(draft, shield.text, bool(shield.secrets), shield.low_information, vector)
            words = terms(record.text)
            if dedupe and self.config.dedupe and not draft.id:
                existing = self._restated(record, words)
                if existing is not None:
                    plan.merges.append(existing)
                    plan.results.append(existing[0])
                    continue
            plan.records.append(record)
            plan.terms.append(words)
            plan.results.append(record.id)
            plan.events.append(self._added(record, draft))
            for secret in shield.secrets:
                if self.box is not None:
                    plan.secrets.append(SealedSecret(record.id, secret.placeholder, secret.kind,
                                                     self.box.encrypt(secret.value)))
            if self.config.facts and not _from_assistant(draft):
                key = (record.tenant, record.user_id)
                if key not in current:
                    current[key] = self.store.current_facts(record.tenant, record.user_id)
                self._facts(record, current[key], plan)
        return plan

    def _record(self, draft: Draft, text: str, secret: bool, low: bool, vector: np.ndarray) -> MemoryRecord:
        guess = self.classifier.classify(text)
        if guess.pin and _from_assistant(draft):  # the assistant's advice is no request to keep anything
            guess = replace(guess, pin=False, importance=max(guess.importance - PIN_BONUS, 0.0),
                            priority=Priority.P0 if guess.security else Priority.P1)
        kind = draft.kind or (Kind.TEMPORARY if low else guess.kind)
        importance = draft.importance if draft.importance is not None else (
            min(guess.importance, LOW_INFORMATION_IMPORTANCE) if low else guess.importance)
        priority = draft.priority or (Priority.P2 if low else guess.priority)
        return MemoryRecord(
            id=draft.id or new_id(draft.created_at), text=text, kind=kind, importance=importance, priority=priority,
            created_at=when(draft.created_at), updated_at=when(draft.created_at), tenant=draft.scope.tenant,
            user_id=draft.scope.user_id, agent_id=draft.scope.agent_id, session_id=draft.scope.session_id,
            pinned=draft.pinned or guess.pin, held=draft.held, security=draft.security or guess.security or secret,
            last_accessed_at=when(draft.last_accessed_at) if draft.last_accessed_at is not None else None,
            access_count=draft.access_count, metadata=draft.metadata, source_ids=list(draft.source_ids),
            content_hash=content_hash(text), embedding=vector,
        )

    def _added(self, record: MemoryRecord, draft: Draft) -> Event:
        inferred = [name for name in ("kind", "importance", "priority") if getattr(draft, name) is None]
        reason = "pin trigger in text" if record.pinned and not draft.pinned else ""
        return Event(record.id, "add", record.created_at, self.actor, reason, {
            "kind": record.kind.value, "importance": record.importance, "priority": record.priority.value,
            "pinned": record.pinned, "inferred": inferred, "content_hash": record.content_hash,
            "secrets": record.text.count("[secret:"),
        })

    def _restated(self, record: MemoryRecord, words: list[str]) -> tuple[str, int, Event] | None:
        """The stored record this one restates, if any, with the uses to credit and the merge event."""
        assert record.embedding is not None
        scope = Scope(record.tenant, record.user_id)
        keys = self.store.vector_search(scope, record.embedding, 5, None)
        found = self.store.candidates(keys)
        if not found:
            return None
        vectors = np.stack([c.vector for c in found]).astype(np.float32)
        z = self.background().z(record.embedding, is_cjk(record.text), vectors,
                                np.array([is_cjk(c.text) for c in found]))
        for index in np.argsort(-z):
            candidate = found[int(index)]
            kind, access_count = candidate.retention[0], candidate.retention[8]
            if kind != record.kind.value or candidate.stale:
                continue
            if is_restatement(record.text, words, candidate.text, candidate.terms, float(z[index]),
                              self.config.dedupe_min_z, self.config.dedupe_swap_z):
                existing = self.store.fetch([candidate.key])[candidate.key]
                uses = 2 if access_count == 0 else 1  # the first restatement credits the original saying too
                event = Event(existing.id, "merge", record.created_at, self.actor, "restated",
                              {"uses": uses, "z": round(float(z[index]), 2), "content_hash": record.content_hash})
                return existing.id, uses, event
        return None

    def _facts(self, record: MemoryRecord, current: list[FactRow], plan: Plan) -> None:
        at = record.created_at.timestamp()
        for fact, head in _one_per_slot(self.extractor.extract(record.text)):
            slot = slot_key(fact)
            words = set(fact.slot)
            matches = [row for row in current if row.subject == fact.subject and row.user_id == record.user_id
                       and row.memory_id != record.id
                       and same_slot(words, head, set(row.slot.split()), slot_head(row.attribute))]
            previous = max(matches, key=lambda row: (_jaccard(words, set(row.slot.split())), row.valid_from),
                           default=None)
            if previous is not None and previous.value.casefold() == fact.value.casefold():
                continue  # the same value said again: nothing changes on the timeline
            row = FactRow(record.id, slot, fact.subject, fact.attribute, fact.value, fact.reason, at,
                          supersedes=previous.memory_id if previous else None,
                          root=previous.root if previous else record.id, user_id=record.user_id)
            plan.facts.append(row)
            current.append(row)
            if previous is not None:
                plan.closings.append(Closing(previous.memory_id, previous.slot, at, record.id))
                current.remove(previous)
                plan.events.append(Event(previous.memory_id, "supersede", record.created_at, self.actor,
                                         "a newer value for the same slot", {
                                             "superseded_by": record.id, "slot": _slot_hash(previous.slot)}))


def tag_key(store: FullStore) -> bytes:
    """The store's random key for secret placeholder tags, made on first use."""
    stored = store.get_meta("secret_tag_key")
    if stored is None:
        stored = secrets.token_hex(32)
        store.set_meta("secret_tag_key", stored)
    return bytes.fromhex(stored)


def _from_assistant(draft: Draft) -> bool:
    role = draft.metadata.get("role") if isinstance(draft.metadata, dict) else None
    return isinstance(role, str) and role.strip().casefold() == "assistant"


def _one_per_slot(facts: Sequence[Fact]) -> list[tuple[Fact, str | None]]:
    """The facts of one text, one per slot: a later fact for the same slot replaces an earlier one (the last
    value stated wins), so a record never holds two values for a slot nor supersedes itself."""
    kept: list[tuple[Fact, str | None]] = []
    for fact in facts:
        head = slot_head(fact.attribute)
        kept = [(f, h) for f, h in kept
                if slot_key(f) != slot_key(fact) and not same_slot(f.slot, h, fact.slot, head)]
        kept.append((fact, head))
    return kept


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0
