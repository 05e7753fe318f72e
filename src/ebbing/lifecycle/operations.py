"""Moving single records by hand: forget, restore, purge, legal holds, and lifting on recall.

Every record keeps its id for life and is in exactly one place: the live store (hot, warm), the
archive (cold), the trash, or nowhere (purged).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from ebbing.errors import Conflict, NotFound
from ebbing.lifecycle.archive import Archive
from ebbing.lifecycle.sweep import RANK, ArchiveStore, compact, out_of_archive
from ebbing.model import Event, MemoryRecord, Tier, when
from ebbing.retention.base import RecordBatch
from ebbing.retention.composite import TIER_OF_CODE, Composite
from ebbing.store.base import Listing, Tiers, Writes
from ebbing.text.terms import terms

NOT_USEFUL_IMPORTANCE = 0.1  # what one "not useful" takes off a record's importance (salience stretches stability)


def _terms(record: MemoryRecord) -> list[str]:
    return terms(record.text)


class LifecycleStore(ArchiveStore, Tiers, Writes, Listing, Protocol):
    """What moving one record by hand needs, and the views of the lifecycle (`lifecycle.reports`) read."""


class Lifecycle:
    def __init__(self, store: LifecycleStore, archive: Archive, composite: Composite, tenant: str, actor: str) -> None:
        self.store, self.archive, self.composite = store, archive, composite
        self.tenant, self.actor = tenant, actor

    def find(self, memory_id: str) -> MemoryRecord | None:
        """A record in any tier (cold ones are read from their archive file)."""
        record = self.store.get(self.tenant, memory_id)
        if record is not None:
            return record
        located = self.store.cold(self.tenant, [memory_id]).get(memory_id)
        if located is None:
            return None
        found = self.read_cold(Path(located[0]), [memory_id])
        return found[0] if found else None

    def read_cold(self, file: Path, ids: Sequence[str]) -> list[MemoryRecord]:
        """Archived records as they are now: the file's copy with the flags changed since laid over it."""
        located = self.store.cold(self.tenant, list(ids))
        out = []
        for record, _ in self.archive.read(file, ids):
            if record.id in located:
                flags = located[record.id][2]
                record.pinned, record.held, record.priority = flags["pinned"], flags["held"], flags["priority"]
                out.append(record)
        return out

    def require(self, memory_id: str) -> MemoryRecord:
        record = self.find(memory_id)
        if record is None:
            raise NotFound("id", memory_id)
        return record

    def forget(self, memory_id: str, at: float, reason: str, data: dict[str, Any] | None = None) -> MemoryRecord:
        record = self.require(memory_id)
        if record.tier is Tier.TRASH:
            return record
        if record.held:
            raise Conflict(f"{memory_id} is under legal hold; release it before forgetting it")
        event = Event(memory_id, "tier", when(at), self.actor, reason or "forgotten on request",
                      {"from": record.tier.value, "to": Tier.TRASH.value, "policy": "manual", **(data or {})})
        if record.tier is Tier.COLD:
            out_of_archive(self.store, self.archive, self.tenant, [memory_id], Tier.TRASH, at, [event], None)
        else:
            seq = self._seq(memory_id)
            self.store.demote(self.tenant, [(seq, record.user_id, Tier.TRASH)], [event], at)
        return self.require(memory_id)

    def restore(self, memory_id: str, at: float, reason: str = "restored on request") -> MemoryRecord:
        """Bring a trashed or cold record back to warm, with its history."""
        record = self.require(memory_id)
        if record.tier in (Tier.HOT, Tier.WARM):
            return record
        event = Event(memory_id, "tier", when(at), self.actor, reason,
                      {"from": record.tier.value, "to": Tier.WARM.value, "policy": "manual"})
        if record.tier is Tier.COLD:
            out_of_archive(self.store, self.archive, self.tenant, [memory_id], Tier.WARM, at, [event], _terms)
        else:
            self.store.promote(self.tenant, memory_id, Tier.WARM, _terms(record), [event])
        return self.require(memory_id)

    def purge(self, ids: Sequence[str], at: float, reason: str, data: dict[str, Any] | None = None) -> list[str]:
        """Erase records everywhere: store, indexes, archive files, trash. Held records are refused."""
        found = self.store.where_held(self.tenant, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound("id", missing[0])
        held = [i for i, (_, is_held) in found.items() if is_held]
        if held:
            raise Conflict(f"under legal hold, not purged: {', '.join(held[:20])}")
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            cold = [i for i in chunk if found[i][0] is Tier.COLD]
            if cold:  # first out of the archive files (into the trash), so the text is only in the store
                out_of_archive(self.store, self.archive, self.tenant, cold, Tier.TRASH, at, [], None)
            self.store.purge(self.tenant, chunk, [Event(i, "purge", when(at), self.actor, reason,
                                                        {"from": found[i][0].value, **(data or {})})
                                            for i in chunk])
        compact(self.store, self.archive, at)  # a recalled record's old copy may linger in a stale file
        self.store.scrub()
        return list(ids)

    def purge_user(self, user: str, at: float, pseudonym: str) -> list[str]:
        """Erase every record of a user, in any tier (right to erasure). The trail keeps that a user was erased,
        not who: `pseudonym`, a keyed hash, stands for the id."""
        live, cold = self.store.user_ids(self.tenant, user)
        ids = live + cold
        return self.purge(ids, at, "erasure of a user", {"user": pseudonym}) if ids else []

    def set_flag(self, memory_id: str, name: str, value: bool, event_type: str, at: float) -> MemoryRecord:
        record = self.require(memory_id)
        if getattr(record, name) == value:
            return record
        event = Event(memory_id, event_type, when(at), self.actor)
        if record.tier is Tier.COLD:
            self.store.set_cold_flags(self.tenant, memory_id, {name: value}, [event])
        else:
            setattr(record, name, value)
            record.updated_at = when(at)
            self.store.replace(record, None, [event])
        return self.require(memory_id)

    def feedback(self, memory_id: str, useful: bool, at: float) -> MemoryRecord:
        """The agent's word on whether a record helped. Useful counts as a use, as a recall does (its stability
        grows, its decay starts again, it rises to the tier it now earns); not useful takes one use back and
        lowers its importance by `NOT_USEFUL_IMPORTANCE`, so it fades sooner. Audited as a "feedback" event."""
        record = self.require(memory_id)
        if record.tier not in (Tier.HOT, Tier.WARM):
            raise Conflict(f"{memory_id} is in the {record.tier.value} tier; restore it before giving feedback")
        event = Event(memory_id, "feedback", when(at), self.actor, "useful" if useful else "not useful",
                      {"useful": useful})
        if useful:
            self.store.reinforce(self.tenant, memory_id, 1, at, [event])
            self.lift([self.require(memory_id)], at)
        else:
            self.store.replace(replace(record, access_count=max(record.access_count - 1, 0), updated_at=when(at),
                                       importance=max(record.importance - NOT_USEFUL_IMPORTANCE, 0.0)), None, [event])
        return self.require(memory_id)

    def lift(self, records: Sequence[MemoryRecord], at: float) -> dict[str, Tier]:
        """After a counted use: a record whose retention now earns a higher tier moves up to it. Archived ones
        come back warm together, their files left for compaction (`out_of_archive(rewrite=False)`)."""
        if not records:
            return {}
        batch = RecordBatch.from_records(records)
        targets = self.composite.placement(batch, at)
        lifted = {}
        revived = []
        for record, code in zip(records, targets, strict=True):
            target = TIER_OF_CODE[int(code)]
            if record.tier is Tier.COLD:
                target = Tier.WARM  # a recalled cold record comes back warm; further recalls lift it on
                revived.append(Event(record.id, "tier", when(at), self.actor, "recalled",
                                     {"from": "cold", "to": "warm", "policy": "recall"}))
            elif target is Tier.TRASH or RANK[target] >= RANK[record.tier]:
                continue
            else:
                event = Event(record.id, "tier", when(at), self.actor, "recalled",
                              {"from": record.tier.value, "to": target.value, "policy": "recall"})
                self.store.promote(self.tenant, record.id, target, None, [event])
            lifted[record.id] = target
        if revived:
            out_of_archive(self.store, self.archive, self.tenant, [e.memory_id for e in revived], Tier.WARM, at,
                           revived, _terms, rewrite=False, known={r.id: r for r in records if r.tier is Tier.COLD})
        return lifted

    def _seq(self, memory_id: str) -> int:
        seq = self.store.seq_of(self.tenant, memory_id)
        if seq is None:
            raise NotFound("id", memory_id)
        return seq
