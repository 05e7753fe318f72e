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
from typing import Any, Protocol

import numpy as np

from ebbing.ingest.authority import DEFAULT_SOURCES, Authority, check_sources
from ebbing.ingest.classify import Classifier, RuleClassifier
from ebbing.ingest.facts import Fact, FactExtractor, RuleFacts
from ebbing.ingest.guard import SecretBox, guard
from ebbing.ingest.salience import Judged, SalienceModel
from ebbing.ingest.salience import shipped as shipped_salience
from ebbing.ingest.turns import LatestTurns, PreviousTurns
from ebbing.judgement.judge import STATEMENTS, Judgement, PairJudge, RuleJudge, Verdict, judged_slot
from ebbing.judgement.sameness import SamenessModel, shipped_restatement, signal_vector
from ebbing.judgement.sameness import shipped as shipped_sameness
from ebbing.model import Event, Kind, MemoryRecord, Priority, Scope, content_hash, new_id, role_is_assistant, when
from ebbing.recall.search import Background, is_cjk
from ebbing.retention.base import MARKED_IMPORTANCE
from ebbing.store.base import Closing, FactRow, Facts, Meta, Reads, ReviewRow, SealedSecret, Search, Writes
from ebbing.text.placeholders import untagged
from ebbing.text.slots import same_slot, slot_head
from ebbing.text.terms import terms

LOW_INFORMATION_IMPORTANCE = 0.1
PIN_BONUS = 0.3  # what a pin trigger adds to the classifier's importance (see ingest.classify)


@dataclass(frozen=True)
class IngestConfig:
    drop_low_information: bool = False  # "ok", "哈哈", "👍": stored as temporary, or (True) not at all
    dedupe: bool = True  # merge restatements into the record they restate (add only; imports keep all)
    facts: bool = True
    neighbours: int = 6  # nearest live records a new statement is judged against (`ingest.judge`)
    judge_floor: float = 2.0  # pairs further apart than this (vector z) are not judged at all (see also
    # `PairJudge.worth_judging`, which passes over the pairs where no verdict but distinct is possible)
    salience: bool = True  # judge salience at write time (`ingest.salience`): it sets importance with the kind
    # A P2 utterance (a request, a question, a passing remark) judged at least this likely to be needed later is
    # kept as P1: when it fades it waits in the archive, where a cue can find it, instead of the trash. Low on
    # purpose, as trashing what is needed costs more than archiving what is not: on the development set,
    # cross-validated, 0.1 keeps 99.4% of what is needed later and 15.5% of the rest (0.5: 95.6% and 4.5%).
    keep_in_archive: float = 0.1
    # Sources, highest authority first (`ingest.authority`): a newer value from a lower one waits for review.
    sources: tuple[str, ...] = DEFAULT_SOURCES

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", check_sources(self.sources))


@dataclass(frozen=True)
class Revision:
    """A record corrected in place, with what its new text gives and changes (`Ingest.revise`)."""

    record: MemoryRecord
    terms: list[str]
    plan: Plan
    judged: list[dict[str, Any]]


@dataclass(frozen=True)
class Neighbour:
    """A stored record a new statement is compared with."""

    id: str
    text: str
    kind: Kind
    access_count: int
    z: float  # the pair's calibrated vector relevance
    created_at: float
    source: str = "user"


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
    expires_at: float | None = None  # an explicit end of life (epoch seconds), after created_at
    source: str = "user"  # who said it (`ingest.authority`)


@dataclass
class Plan:
    records: list[MemoryRecord] = field(default_factory=list)
    terms: list[list[str]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    facts: list[FactRow] = field(default_factory=list)
    closings: list[Closing] = field(default_factory=list)
    secrets: list[SealedSecret] = field(default_factory=list)
    # (existing id, uses to add, event, the saying's id for the record's sources)
    merges: list[tuple[str, int, Event, str]] = field(default_factory=list)
    results: list[str] = field(default_factory=list)  # per kept draft: the id it ended up as
    reviews: list[ReviewRow] = field(default_factory=list)  # supersessions held for a person (`ingest.authority`)


def slot_key(fact: Fact) -> str:
    return " ".join(sorted(fact.slot))


def slot_hash(slot: str) -> str:
    return hashlib.sha256(slot.encode()).hexdigest()[:12]  # events name slots without their words


class IngestStore(Writes, Reads, Search, Facts, Meta, LatestTurns, Protocol):
    """What the write path reads (neighbours, current facts, the store's tag key) and writes."""


class Ingest:
    def __init__(self, store: IngestStore, embed: Callable[[list[str]], np.ndarray],
                 background: Callable[[], Background], config: IngestConfig, *, classifier: Classifier | None = None,
                 extractor: FactExtractor | None = None, box: SecretBox | None = None, actor: str = "api",
                 judge: PairJudge | None = None, embedder: str = "", salience: SalienceModel | None = None,
                 sameness: SamenessModel | None = None, restatement: SamenessModel | None = None) -> None:
        self.store, self.background, self.config = store, background, config
        # a placeholder's tag is random per store, not meaning (`text.placeholders`)
        self.embed: Callable[[list[str]], np.ndarray] = lambda texts: embed([untagged(t) for t in texts])
        self.embedder = embedder  # "name:dimensions": the models' probes apply to the embedder they were fitted on
        self.salience = salience or (shipped_salience() if config.salience else None)
        self.sameness = sameness or shipped_sameness()
        self.restatement = restatement or shipped_restatement()  # a restatement rather than a new value
        self.classifier = classifier or RuleClassifier()
        self.extractor = extractor or RuleFacts()
        self.judge = judge or RuleJudge()
        self.box, self.actor = box, actor
        self.tag_key = tag_key(store)
        self.authority = Authority(config.sources)

    def prepare(self, drafts: Sequence[Draft], *, dedupe: bool) -> Plan:
        """`dedupe`: the interactive write path (add, update): restatements merge and each new statement is
        judged against its neighbours (`ingest.judge`). Imports keep every line and only the rule facts."""
        plan = Plan()
        guarded = [guard(d.text, tag_key=self.tag_key) for d in drafts]
        kept = [(d, g) for d, g in zip(drafts, guarded, strict=True)
                if not (g.low_information and self.config.drop_low_information)]
        vectors = self.embed([g.text for _, g in kept]) if kept else np.zeros((0, 0), dtype=np.float32)
        current: dict[tuple[str, str | None], list[FactRow]] = {}
        turns = PreviousTurns(self.store)
        for (draft, shield), vector in zip(kept, vectors, strict=True):
            record, salient = self._record(draft, shield.text, bool(shield.secrets), shield.low_information, vector,
                                           turns)
            turns.said(draft.scope, draft.created_at, record.text, record.kind, vector)
            words = terms(record.text)
            stated = self.extractor.extract(record.text) if self.config.facts and not _from_assistant(draft) else []
            judged: list[tuple[Neighbour, Judgement]] = []
            # A statement with its own expiry is kept as said, not merged into one that may outlive it.
            if (dedupe and self.config.dedupe and not draft.id and record.kind is not Kind.SUMMARY
                    and draft.expires_at is None):
                judged = self._judge(record, stated, set(words))
                merge = next(((n, j) for n, j in judged if j.verdict is Verdict.RESTATES), None)
                if merge is not None:
                    plan.merges.append(self._merge(record, *merge))
                    plan.results.append(merge[0].id)
                    continue
            superseding = [(n, j) for n, j in judged if j.verdict is Verdict.SUPERSEDES]
            if superseding and draft.kind is None and record.kind not in STATEMENTS:
                # "I moved last week, my address is ..." reports a change: it is the fact it replaces, not a story
                record = replace(record, kind=superseding[0][0].kind)
            plan.records.append(record)
            plan.terms.append(words)
            plan.results.append(record.id)
            plan.events.append(self._added(record, draft, judged, salient))
            for secret in shield.secrets:
                if self.box is not None:
                    plan.secrets.append(SealedSecret(record.id, secret.placeholder, secret.kind,
                                                     self.box.encrypt(secret.value)))
            if self.config.facts and not _from_assistant(draft):
                key = (record.tenant, record.user_id)
                if key not in current:
                    current[key] = self.store.current_facts(record.tenant, record.user_id)
                closed = self._facts(record, stated, current[key], plan, {n.id: j for n, j in judged})
                for neighbour, judgement in superseding:
                    if neighbour.id not in closed:
                        self._supersede(record, neighbour, judgement, current[key], plan)
        return plan

    def write(self, drafts: list[Draft], tenant: str, get: Callable[[str], MemoryRecord], *,
              dedupe: bool = False) -> tuple[list[MemoryRecord], list[Event]]:
        """Prepare the drafts and write the plan: new records in one transaction, then each merge's use. Returns
        the record each draft ended up as (`get` reads a merged-into one) and the events."""
        plan = self.prepare(drafts, dedupe=dedupe)
        self.store.insert(plan.records, plan.terms, plan.events, facts=plan.facts, closings=plan.closings,
                          secrets=plan.secrets, reviews=plan.reviews)
        events = list(plan.events)
        for memory_id, uses, event, saying in plan.merges:
            self.store.reinforce(tenant, memory_id, uses, event.at.timestamp(), [event], source_id=saying)
            events.append(event)
        fresh = {r.id: r for r in plan.records}
        return [fresh[i] if i in fresh else get(i) for i in dict.fromkeys(plan.results)], events

    def revise(self, record: MemoryRecord, text: str, secret: bool, *, reinfer: Sequence[str] = ()) -> Revision:
        """A record corrected in place (`Memory.update`) goes through what an add goes through: classification
        (of the fields the caller left to inference when adding it, `reinfer`), embedding, the rule facts and
        the judge against its neighbours. Its own old facts close (the correction supersedes them, so the
        timeline shows both values); a neighbour it now gives a new value is superseded. Nothing is merged: the
        caller named this record, so it stays; a restatement it now makes is shown on the event."""
        guess = self.classifier.classify(text)
        changes: dict[str, Any] = {"text": text, "content_hash": content_hash(text),
                                   "embedding": self.embed([text])[0], "update_count": record.update_count + 1}
        for name in ("kind", "importance", "priority"):
            if name in reinfer:
                changes[name] = getattr(guess, name)
        if secret or guess.security:
            changes["security"] = True
        revised = replace(record, **changes)
        plan = Plan()
        assistant = role_is_assistant(record.metadata)
        stated = self.extractor.extract(text) if self.config.facts and not assistant else []
        judged = self._judge(revised, stated, set(terms(text))) if revised.kind is not Kind.SUMMARY else []
        if self.config.facts and not assistant:
            at = revised.updated_at.timestamp()
            everyone = self.store.current_facts(record.tenant, record.user_id)
            own = [row for row in everyone if row.memory_id == record.id]
            others = [row for row in everyone if row.memory_id != record.id]
            closed = self._facts(revised, stated, others, plan, {n.id: j for n, j in judged})
            for row in own:
                plan.closings.append(Closing(row.memory_id, row.slot, at, record.id))
            plan.facts = [_continue(row, own) if row.memory_id == record.id else row for row in plan.facts]
            for neighbour, judgement in judged:
                if judgement.verdict is Verdict.SUPERSEDES and neighbour.id not in closed:
                    self._supersede(revised, neighbour, judgement, others, plan)
        return Revision(revised, terms(text), plan, [{"id": n.id, **j.audit()} for n, j in judged])

    def _record(self, draft: Draft, text: str, secret: bool, low: bool, vector: np.ndarray,
                turns: PreviousTurns) -> tuple[MemoryRecord, Judged | None]:
        guess = self.classifier.classify(text)
        if guess.pin and _from_assistant(draft):  # the assistant's advice is no request to keep anything
            guess = replace(guess, pin=False, importance=max(guess.importance - PIN_BONUS, 0.0),
                            priority=Priority.P0 if guess.security else Priority.P1)
        kind = draft.kind or (Kind.TEMPORARY if low else guess.kind)
        importance = draft.importance if draft.importance is not None else (
            min(guess.importance, LOW_INFORMATION_IMPORTANCE) if low else guess.importance)
        priority = draft.priority or (Priority.P2 if low else guess.priority)
        salient = None
        if self.salience is not None and not low and kind is not Kind.SUMMARY:
            # a reply is judged with the message before it (`ingest.turns`), when the model can read both
            context = (turns.before(draft.scope, draft.created_at)
                       if self.salience.reads_context(self.embedder) else None)
            salient = self.salience.judge(text, kind, vector, self.embedder, context)
            if draft.importance is None and importance < MARKED_IMPORTANCE and not guess.pin:
                # The kind's prior and the judged likelihood of being needed, half each; only someone saying it
                # matters reaches the marked level. A reply's own salience sets how long it stays live; judged in
                # context it only decides below whether it waits in the archive (the in-context model lifts most
                # replies to a question, needed or not: docs/evaluation.md).
                own = salient.salience if salient.alone is None else salient.alone
                importance = min(round(0.5 * importance + 0.5 * own, 3), MARKED_IMPORTANCE - 0.01)
            if draft.priority is None and priority is Priority.P2 and salient.salience >= self.config.keep_in_archive:
                priority = Priority.P1
        record = MemoryRecord(
            id=draft.id or new_id(draft.created_at), text=text, kind=kind, importance=importance, priority=priority,
            created_at=when(draft.created_at), updated_at=when(draft.created_at), tenant=draft.scope.tenant,
            user_id=draft.scope.user_id, agent_id=draft.scope.agent_id, session_id=draft.scope.session_id,
            pinned=draft.pinned or guess.pin, held=draft.held, security=draft.security or guess.security or secret,
            last_accessed_at=when(draft.last_accessed_at) if draft.last_accessed_at is not None else None,
            access_count=draft.access_count, metadata=draft.metadata, source_ids=list(draft.source_ids),
            content_hash=content_hash(text), embedding=vector,
            expires_at=when(draft.expires_at) if draft.expires_at is not None else None, source=draft.source,
        )
        return record, salient

    def _added(self, record: MemoryRecord, draft: Draft, judged: Sequence[tuple[Neighbour, Judgement]] = (),
               salient: Judged | None = None) -> Event:
        inferred = [name for name in ("kind", "importance", "priority") if getattr(draft, name) is None]
        reason = "pin trigger in text" if record.pinned and not draft.pinned else ""
        data: dict[str, Any] = {
            "kind": record.kind.value, "importance": record.importance, "priority": record.priority.value,
            "pinned": record.pinned, "inferred": inferred, "content_hash": record.content_hash,
            "secrets": record.text.count("[secret:"),
        }
        if salient is not None:  # counts and scores only: the audit log keeps no words
            data["salience"] = salient.explain()
        if judged:  # the neighbours it was compared with and what was decided: `explain` shows them
            data["judged"] = [{"id": n.id, **j.audit()} for n, j in judged]
        return Event(record.id, "add", record.created_at, self.actor, reason, data)

    def _judge(self, record: MemoryRecord, facts: Sequence[Fact], words: set[str]
               ) -> list[tuple[Neighbour, Judgement]]:
        """The user's live records nearest in meaning, each with the verdict on the pair, nearest first.
        Only pairs close enough to be the same attribute are judged; a stale record (it has a successor)
        is neither merged into nor superseded again."""
        assert record.embedding is not None
        scope = Scope(record.tenant, record.user_id)
        found = self.store.candidates(self.store.vector_search(scope, record.embedding, self.config.neighbours, None))
        if not found:
            return []
        vectors = np.stack([c.vector for c in found]).astype(np.float32)
        z = self.background().z(record.embedding, is_cjk(record.text), vectors,
                                np.array([is_cjk(c.text) for c in found]))
        close = [(found[int(i)], float(z[i])) for i in np.argsort(-z)
                 if not found[int(i)].stale and z[i] >= self.config.judge_floor
                 and found[int(i)].retention[0] != Kind.SUMMARY.value]
        if not close:
            return []
        records = self.store.fetch([c.key for c, _ in close])
        rows: dict[str, list[FactRow]] = {}
        for row in self.store.facts_of(record.tenant, [r.id for r in records.values()]):
            rows.setdefault(row.memory_id, []).append(row)
        new_slots = [(f.slot, slot_head(f.attribute)) for f in facts]
        out = []
        for candidate, value in close:
            old = records.get(candidate.key)
            if old is None or old.id == record.id:
                continue
            same = any(same_slot(slot, head, set(r.slot.split()), slot_head(r.attribute))
                       for slot, head in new_slots for r in rows.get(old.id, []))
            # how likely the two state the same attribute (`ingest.sameness`); asked only of a pair that may
            # merge, and only when the model's embedding probe reads these vectors
            signals = signal_vector(old.text, record.text, value, old.kind, record.kind) \
                if _mergeable(record.kind, old.kind) and self.sameness.reads(self.embedder) else None
            likely = None if signals is None else \
                float(self.sameness.probabilities(candidate.vector, record.embedding, signals, self.embedder)[0])
            if not self.judge.worth_judging(value, len(words & set(candidate.terms)), same) and not (
                    likely is not None and likely >= self.judge.merge_at):
                continue
            # and, for a pair that may merge on the first model's word, whether it is the same thing said again
            again = float(self.restatement.probabilities(candidate.vector, record.embedding, signals,
                                                         self.embedder)[0]) \
                if signals is not None and likely is not None and likely >= self.judge.merge_at \
                and self.restatement.reads(self.embedder) else None
            judgement = self.judge.judge(old.text, old.kind, record.text, record.kind, value, same_slot=same,
                                         same=likely, again=again)
            if judgement.verdict is Verdict.RESTATES and not _mergeable(record.kind, old.kind):
                judgement = Judgement(Verdict.DISTINCT, judgement.score, {**judgement.signals, "why": "kinds"})
            out.append((Neighbour(old.id, old.text, old.kind, old.access_count, value,
                                  old.created_at.timestamp(), old.source), judgement))
        return out

    def _merge(self, record: MemoryRecord, into: Neighbour, judgement: Judgement) -> tuple[str, int, Event, str]:
        """The merge of a restatement: uses to credit, the audit event, and the saying's own id for provenance."""
        uses = 2 if into.access_count == 0 else 1  # the first restatement credits the original saying too
        saying = new_id(record.created_at.timestamp())
        event = Event(into.id, "merge", record.created_at, self.actor, "restated", {
            "uses": uses, "z": round(into.z, 2), "content_hash": record.content_hash, "saying": saying,
            "judgement": judgement.audit()})
        return into.id, uses, event, saying

    def _supersede(self, record: MemoryRecord, old: Neighbour, judgement: Judgement, current: list[FactRow],
                   plan: Plan) -> None:
        """Put a judged supersession on the timeline: the old record's current facts close (or, when the rules
        found none in it, it gets a closed fact of its own) and the new record carries the slot on."""
        at = record.created_at.timestamp()
        rows = [r for r in current if r.memory_id == old.id]
        new_rows = {r.slot: r for r in plan.facts if r.memory_id == record.id}
        facts: list[FactRow] = []
        closings: list[Closing] = []
        if rows:
            slot, root, attribute = rows[0].slot, rows[0].root, rows[0].attribute
            closings += [Closing(row.memory_id, row.slot, at, record.id) for row in rows]
        else:
            slot, attribute = judged_slot(old.text, record.text)
            root = old.id
            facts.append(FactRow(old.id, slot, "user", attribute, _clip(old.text), None, old.created_at,
                                 valid_to=at, superseded_by=record.id, root=old.id, user_id=record.user_id))
        if slot not in new_rows:
            facts.append(FactRow(record.id, slot, "user", attribute, _clip(record.text), None, at, supersedes=old.id,
                                 root=root, user_id=record.user_id))
        if self.authority.yields(record.source, old.source):
            self._hold(record, old.id, old.source, slot, facts, closings, plan, judgement)
            return
        for row in rows:
            current.remove(row)
        plan.closings += closings
        plan.facts += facts
        current += [row for row in facts if row.memory_id == record.id]
        plan.events.append(Event(old.id, "supersede", record.created_at, self.actor,
                                 f"judged a newer value ({judgement.signals.get('why', '')})", {
                                     "superseded_by": record.id, "slot": slot_hash(slot),
                                     "judgement": judgement.audit()}))

    def _hold(self, record: MemoryRecord, old_id: str, old_source: str, slot: str, facts: Sequence[FactRow],
              closings: Sequence[Closing], plan: Plan, judgement: Judgement | None = None) -> None:
        """A newer value whose source ranks below the current one's: the record is kept, and what superseding
        would write waits in the review queue (`lifecycle.reviews`) instead of the timeline."""
        review = ReviewRow(new_id(record.created_at.timestamp()), record.tenant, record.user_id, record.id, old_id,
                           record.source, old_source, record.created_at.timestamp(), tuple(facts), tuple(closings))
        plan.reviews.append(review)
        data: dict[str, Any] = {"review": review.id, "incumbent": old_id, "slot": slot_hash(slot),
                                "source": record.source, "incumbent_source": old_source}
        if judgement is not None:
            data["judgement"] = judgement.audit()
        plan.events.append(Event(record.id, "review", record.created_at, self.actor,
                                 f"held for review: source {record.source} ranks below {old_source}", data))

    def _facts(self, record: MemoryRecord, stated: Sequence[Fact], current: list[FactRow], plan: Plan,
               judged: dict[str, Judgement] | None = None) -> set[str]:
        """The rule extractor's facts of a new record; returns the ids of the records whose values it closed.
        `judged` holds the judge's verdicts on neighbours, shown on the event beside the rules' own reason."""
        at = record.created_at.timestamp()
        closed: set[str] = set()
        for fact, head in _one_per_slot(stated):
            slot = slot_key(fact)
            words = set(fact.slot)
            matches = [row for row in current if row.subject == fact.subject and row.user_id == record.user_id
                       and row.memory_id != record.id
                       and same_slot(words, head, set(row.slot.split()), slot_head(row.attribute))]
            previous = max(matches, key=lambda row: (_jaccard(words, set(row.slot.split())), row.valid_from),
                           default=None)
            if previous is not None and previous.value.casefold() == fact.value.casefold():
                continue  # the same value said again: nothing changes on the timeline
            if previous is not None and judged and _told_apart(judged.get(previous.memory_id)):
                # The slot rules read "my wife's salary" as the user's salary; the judge, reading both
                # statements whole, found whose or which one differs. Another person's or thing's value
                # retires nothing: it starts a timeline of its own.
                previous = None
            row = FactRow(record.id, slot, fact.subject, fact.attribute, fact.value, fact.reason, at,
                          supersedes=previous.memory_id if previous else None,
                          root=previous.root if previous else record.id, user_id=record.user_id)
            if previous is not None:
                older = self._source_of(record.tenant, previous.memory_id)
                if self.authority.yields(record.source, older):
                    closed.add(previous.memory_id)  # handled: the judge does not supersede it either
                    self._hold(record, previous.memory_id, older, previous.slot, [row],
                               [Closing(previous.memory_id, previous.slot, at, record.id)], plan,
                               judged.get(previous.memory_id) if judged else None)
                    continue
            plan.facts.append(row)
            current.append(row)
            if previous is not None:
                closed.add(previous.memory_id)
                plan.closings.append(Closing(previous.memory_id, previous.slot, at, record.id))
                current.remove(previous)
                data: dict[str, Any] = {"superseded_by": record.id, "slot": slot_hash(previous.slot)}
                if judged and previous.memory_id in judged:
                    data["judgement"] = judged[previous.memory_id].audit()
                plan.events.append(Event(previous.memory_id, "supersede", record.created_at, self.actor,
                                         "a newer value for the same slot", data))
        return closed

    def _source_of(self, tenant: str, memory_id: str) -> str:
        """Who said a stored record; one the live store no longer holds (archived) is taken as the highest
        authority, so a lower source never replaces it unseen."""
        found = self.store.get(tenant, memory_id)
        return found.source if found is not None else self.authority.order[0]


def _told_apart(judgement: Judgement | None) -> bool:
    """Whether the judge found the pair to be about different people or things (a differing qualifier)."""
    return (judgement is not None and judgement.verdict is Verdict.DISTINCT
            and judgement.signals.get("why") == "qualifier")


def tag_key(store: Meta) -> bytes:
    """The store's random key for secret placeholder tags, made on first use."""
    stored = store.get_meta("secret_tag_key")
    if stored is None:
        stored = secrets.token_hex(32)
        store.set_meta("secret_tag_key", stored)
    return bytes.fromhex(stored)


def _mergeable(new: Kind, old: Kind) -> bool:
    """An episode that mentions a preference ("had Thai again today") is not the preference."""
    return new == old or (new in STATEMENTS and old in STATEMENTS)


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _from_assistant(draft: Draft) -> bool:
    return role_is_assistant(draft.metadata)


def _continue(row: FactRow, own: Sequence[FactRow]) -> FactRow:
    """A corrected record's new value of a slot it held before carries that slot's timeline on."""
    before = next((o for o in own if o.slot == row.slot or same_slot(set(o.slot.split()), slot_head(o.attribute),
                                                                     set(row.slot.split()), slot_head(row.attribute))),
                  None)
    if before is None:
        return row
    return replace(row, slot=before.slot, supersedes=row.memory_id, root=before.root or before.memory_id,
                   valid_from=max(row.valid_from, before.valid_from + 1e-3))


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
