"""Sweeps: score records in batches and move each one down to the tier its retention says.

A sweep only ever moves records down (hot -> warm -> cold -> trash); recall lifts them. Each step is
its own transaction and safe to repeat, so a sweep killed at any point and run again ends where an
uninterrupted one would: an archive file is noted before it is written and indexed in the same
transaction that removes its records from the live store; an interrupted file change is undone (or
finished) by `recover` from that note.

Records are scored by a `Composite` (the configured one unless the caller hands one in). A store that sweeps
inside its database (PostgreSQL) scores its live records there when every policy renders as SQL, and in
Python otherwise; the report says which (`ran_in`, and a `note` when it had to fall back).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ebbing.lifecycle.archive import Archive
from ebbing.model import Event, MemoryRecord, Tier, when
from ebbing.retention.composite import Composite
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.store.base import ArchiveIndex, ColdReads, Meta, Reads, SweepRows, SweepsInDatabase, Tiers
from ebbing.store.moves import Change, plan, sql_fallback

RANK = {Tier.HOT: 0, Tier.WARM: 1, Tier.COLD: 2, Tier.TRASH: 3}


@dataclass
class SweepReport:
    at: float
    dry_run: bool
    evaluated: int = 0
    changes: list[Change] = field(default_factory=list)
    purged: list[str] = field(default_factory=list)
    ran_in: str = "python"  # where the live records were scored: "python", or "database" (PostgreSQL, in SQL)
    note: str | None = None  # why a store that sweeps in its database scored in Python instead

    @property
    def transitions(self) -> dict[str, int]:
        return dict(Counter(f"{c.source.value}->{c.target.value}" for c in self.changes))

    def to_dict(self) -> dict[str, Any]:
        return {"at": when(self.at).isoformat(), "dry_run": self.dry_run, "evaluated": self.evaluated,
                "transitions": self.transitions, "purged": len(self.purged), "ran_in": self.ran_in,
                "note": self.note, "changes": [c.to_dict() for c in self.changes]}


class ArchiveStore(Reads, ColdReads, ArchiveIndex, Protocol):
    """What moving records into, out of and between archive files needs: the rows, the index, the intent log."""


class SweepStore(Tiers, Meta, ArchiveStore, Protocol):
    """What a sweep needs: pages of retention columns, moves in the store, the archive, its jitter window."""


class Sweeper:
    def __init__(self, store: SweepStore, archive: Archive, config: RetentionConfig, tenant: str, actor: str, *,
                 composite: Composite | None = None) -> None:
        """`composite` scores the records (its own policies); by default `Composite(config)`. Its config must be
        `config`: thresholds, archive and trash limits are read from both."""
        if composite is not None and composite.config != config:
            raise ValueError("the composite's RetentionConfig differs from the sweep's")
        self.store, self.archive, self.config = store, archive, config
        self.composite = composite if composite is not None else Composite(config)
        self.tenant, self.actor = tenant, actor

    def recover(self, at: float) -> None:
        """Finish or undo file changes a crash interrupted: a file still 'writing' was never indexed, and
        one 'deleting' was already replaced; either way the file goes. Then compact the files that recalls
        left stale rows in (`compact`)."""
        for file, state in self.store.intents():
            if state != "stale":
                self.archive.remove(Path(file))
                self.store.clear_intent(file)
        compact(self.store, self.archive, at)

    def window(self, at: float, user_id: str | None) -> tuple[int, int, int] | bool | None:
        """The jitter slots due since the last spread sweep: (period, low, high], None for all, False for none."""
        period = int(self.config.sweep_period)
        key = f"spread:{self.tenant}:{user_id}"
        last_text = self.store.get_meta(key)
        last = float(last_text) if last_text is not None else None
        if last is None or at - last >= period:
            return None
        if at <= last:
            return False  # the clock went back: nothing new is due
        return (period, int(last) % period, int(at) % period)

    def run(self, at: float, *, dry_run: bool = False, user_id: str | None = None, spread: bool = False,
            batch_size: int = 5000) -> SweepReport:
        report = SweepReport(at=at, dry_run=dry_run)
        if not dry_run:
            self.recover(at)
        window = self.window(at, user_id) if spread else None
        store = self.store
        in_database = isinstance(store, SweepsInDatabase)
        exclusive: Any = nullcontext(True)
        if isinstance(store, SweepsInDatabase):  # the store scores and moves its live records itself
            # In SQL when every policy has an SQL form; the store falls back to Python (and logs why) otherwise.
            report.note = sql_fallback(self.composite)
            report.ran_in = "python" if report.note else "database"
            if window is not False:
                # `sweep_live` takes the composite where a RetentionConfig used to go (either is accepted).
                evaluated, changes = store.sweep_live(
                    self.tenant, user_id, at, self.composite, window=window if isinstance(window, tuple) else None,
                    dry_run=dry_run, batch_size=batch_size, archive=self.archive, event=self._event)
                report.evaluated += evaluated
                report.changes.extend(changes)
            exclusive = store.sweep_lock(self.tenant)
        # Cold records and purges rewrite archive files: with several workers, one at a time does them.
        with exclusive as archive_pass:
            if window is not False and archive_pass:
                for source in ("cold",) if in_database else ("live", "cold"):
                    after = 0
                    while rows := self.store.sweep_rows(self.tenant, user_id, source, after, batch_size,
                                                        window if isinstance(window, tuple) else None):
                        after = int(rows.seqs[-1])
                        # A record archived by this sweep's live pass comes round again in the cold pass;
                        # it is one record evaluated, not two.
                        archived = {c.id for c in report.changes if c.target is Tier.COLD and source == "cold"}
                        report.evaluated += sum(1 for i in rows.ids if i not in archived)
                        self._batch(rows, at, dry_run, report)
            if window is not False and spread and not dry_run:
                self.store.set_meta(f"spread:{self.tenant}:{user_id}", repr(at))
            if archive_pass:
                report.purged = self.store.expired_trash(self.tenant, at - self.config.grace_days * DAY, user_id)
            if report.purged and not dry_run:
                reason = f"{self.config.grace_days:g} days in the trash"
                self.store.purge(self.tenant, report.purged,
                                 [Event(i, "purge", when(at), self.actor, reason) for i in report.purged])
                self.store.scrub()
        return report

    def _batch(self, rows: SweepRows, at: float, dry_run: bool, report: SweepReport) -> None:
        moving, changes = plan(self.composite, rows, at)
        if len(moving) == 0:
            return
        report.changes.extend(changes)
        if dry_run:
            return
        by_id = {c.id: (int(rows.seqs[i]), rows.user_ids[i], c) for i, c in zip(moving.tolist(), changes, strict=True)}
        in_store = [(seq, user, c) for seq, user, c in by_id.values()
                    if c.source is not Tier.COLD and c.target in (Tier.WARM, Tier.TRASH)]
        if in_store:
            self.store.demote(self.tenant, [(seq, user, c.target) for seq, user, c in in_store],
                              [self._event(c, at) for _, _, c in in_store], at)
        to_cold = [(seq, c) for seq, _, c in by_id.values() if c.target is Tier.COLD]
        if to_cold:
            self._archive([seq for seq, _ in to_cold], [c for _, c in to_cold], at)
        from_cold = [c for c in changes if c.source is Tier.COLD]
        if from_cold:
            out_of_archive(self.store, self.archive, self.tenant, [c.id for c in from_cold], Tier.TRASH, at,
                           [self._event(c, at) for c in from_cold], terms_for=None)

    def _archive(self, seqs: list[int], changes: list[Change], at: float) -> None:
        archive_records(self.store, self.archive, self.tenant, seqs, [self._event(c, at) for c in changes], at)

    def _event(self, change: Change, at: float) -> Event:
        return Event(change.id, "tier", when(at), self.actor, change.reason, {
            "from": change.source.value, "to": change.target.value, "score": change.score,
            "policy": self.composite.label,
            "thresholds": {t.value: v for t, v in self.config.thresholds.items()},
        })


def archive_records(store: ArchiveStore, archive: Archive, tenant: str, seqs: list[int], events: list[Event],
                    at: float) -> None:
    """Move live records into the archive: one file per month of creation, each noted before it is written
    and indexed in the transaction that takes its records out of the store."""
    records = store.fetch(seqs)
    groups: dict[str, list[tuple[MemoryRecord, int]]] = {}
    for seq in seqs:
        if seq in records:
            groups.setdefault(Archive.month_of(records[seq]), []).append((records[seq], seq))
    for month, members in groups.items():
        relative = archive.new_path(tenant, month)
        store.intent(str(relative), "writing")  # noted first: a crash after this leaves a trail
        archive.write(relative, members, at)
        ids = {record.id for record, _ in members}
        store.archive_move(tenant, str(relative), [seq for _, seq in members],
                           [e for e in events if e.memory_id in ids], at)


def out_of_archive(store: ArchiveStore, archive: Archive, tenant: str, ids: list[str], target: Tier, at: float,
                   events: list[Event], terms_for: Any, *, rewrite: bool = True,
                   known: dict[str, MemoryRecord] | None = None) -> list[MemoryRecord]:
    """Bring archived records back into the store as `target` (warm, or trash), rewriting each file they
    leave. `terms_for(record)` gives keyword terms for live targets. Returns the records moved.

    `rewrite=False` (a revival by recall, on the search path) leaves each file as it is: the rows that left
    are out of the index, stale, and the file is marked for compaction (`compact`, at the next sweep or purge),
    so a recall costs a transaction instead of rewriting and syncing a file; `known` records (as archived, the
    caller already read them) spare the read."""
    located = store.cold(tenant, ids)
    by_file: dict[str, list[str]] = {}
    for memory_id, (file, _, _) in located.items():
        by_file.setdefault(file, []).append(memory_id)
    moved: list[MemoryRecord] = []
    for file, members in by_file.items():
        old = Path(file)
        if not rewrite and known is not None and all(m in known for m in members):
            pairs = [(dataclasses.replace(known[m]), located[m][1]) for m in members]
        else:
            pairs = archive.read(old, members)
        reinstated = []
        for record, seq in pairs:
            flags = located[record.id][2]
            record.pinned, record.held, record.priority = flags["pinned"], flags["held"], flags["priority"]
            record.tier = target
            words = terms_for(record) if terms_for is not None and target is not Tier.TRASH else None
            reinstated.append((record, seq, words))
            moved.append(record)
        member_events = [e for e in events if e.memory_id in members]
        if not rewrite:
            store.replace_file(tenant, str(old), None, members, reinstated, member_events, at, keep_file=True)
            continue
        replacement = archive.new_path(tenant, old.parent.name.removeprefix("month="))
        store.intent(str(replacement), "writing")
        # Only the rows the index still points at, less the leaving ones: a row an earlier recall left stale
        # in this file must not move on into the replacement (it would outlive its purge there).
        leaving = set(members)
        staying = [memory_id for _, memory_id in store.indexed_in(file) if memory_id not in leaving]
        kept = archive.rewrite_only(old, staying, replacement) if staying else 0
        if kept == 0:
            store.clear_intent(str(replacement))
        store.replace_file(tenant, str(old), str(replacement) if kept else None, members, reinstated,
                           member_events, at)
        archive.remove(old)
        store.clear_intent(str(old))
    return moved


def compact(store: ArchiveStore, archive: Archive, at: float) -> int:
    """Rewrite every archive file marked stale (rows revived out of it) to hold only the rows the index still
    points at, or remove it when none are left; returns how many files were compacted. Safe to kill: the
    replacement is noted 'writing' before it exists, and the stale file stays marked until it is replaced."""
    done = 0
    for file, state in store.intents():
        if state != "stale":
            continue
        old = Path(file)
        indexed = store.indexed_in(file)
        if not indexed:
            store.replace_file("", file, None, [], [], [], at)  # marks it 'deleting'
        else:
            tenant = indexed[0][0]
            replacement = old.parent / f"part-{uuid.uuid4().hex}.parquet"
            store.intent(str(replacement), "writing")
            written = [memory_id for _, memory_id in indexed]
            if archive.rewrite_only(old, written, replacement) == 0:
                store.clear_intent(str(replacement))  # the file was gone: nothing to point at
                store.replace_file(tenant, file, None, [], [], [], at)
            else:
                store.replace_file(tenant, file, str(replacement), [], [], [], at)
                if len(store.indexed_in(str(replacement))) < len(written):  # a recall took a row meanwhile
                    store.intent(str(replacement), "stale")
        archive.remove(old)
        store.clear_intent(file)
        done += 1
    return done
