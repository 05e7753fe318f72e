"""When a session's working memory is nearly full, its oldest turns become one summary and move to the archive
(the policy and the summarisers are in `ingest.consolidate`); what stays live is what the summary would bury."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

from ebbing import validate
from ebbing.ingest.consolidate import ConsolidationConfig, Summariser, complete, header
from ebbing.ingest.pipeline import Draft
from ebbing.lifecycle.archive import Archive
from ebbing.lifecycle.sweep import ArchiveStore, archive_records
from ebbing.model import Event, Kind, MemoryRecord, Priority, Scope, Tier, role_is_assistant, when
from ebbing.store.base import Facts, Tiers, Views, Writes
from ebbing.text.tokens import TokenCounter

Write = Callable[[list[Draft]], tuple[list[MemoryRecord], list[Event]]]


def _clip(text: str, limit: int) -> str:
    """At most `limit` bytes of UTF-8, cut at a character boundary."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


class ConsolidationStore(Views, Facts, Writes, Tiers, ArchiveStore, Protocol):
    """A session's unconsolidated turns, the facts that keep a turn live, and the moves to the archive."""


class Consolidation:
    def __init__(self, store: ConsolidationStore, archive: Archive, tenant: str, actor: str,
                 config: ConsolidationConfig, summariser: Summariser, tokens: TokenCounter, write: Write) -> None:
        self.store, self.archive, self.tenant, self.actor = store, archive, tenant, actor
        self.config, self.summariser, self.tokens, self.write = config, summariser, tokens, write

    def run(self, scope: Scope, now: float) -> list[Event]:
        """Summarise the oldest turns of a session once its working memory is nearly full."""
        assert scope.session_id is not None
        config = self.config
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
        (record,), events = self.write([summary])
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
