"""The store extension point: where records, their indexes and the audit log live.

A store keeps, for every record, the row, its keyword terms and its vector, and changes all three in
one transaction, so a crash leaves each record either whole or absent. Scope is part of every read:
a store never returns a record outside the tenant and user it was asked about.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ebbing.model import Event, MemoryRecord, Scope, Tier
from ebbing.retention.base import RecordBatch


@dataclass(frozen=True)
class Candidate:
    """A record found by one of the indexes, with just what scoring needs (full records are fetched
    for the hits only)."""

    key: int
    text: str
    terms: list[str]
    vector: np.ndarray
    retention: tuple[Any, ...] = ()  # the RETENTION_COLUMNS values, so ranking can weigh by retention
    stale: bool = False  # every fact it states has a newer value


@dataclass(frozen=True)
class SweepRows:
    """One page of records for a sweep: their keys and the columns retention scores."""

    seqs: np.ndarray
    ids: list[str]
    user_ids: list[str | None]
    tiers: list[str]
    batch: RecordBatch


@dataclass(frozen=True)
class FactRow:
    """One fact of a record: its slot's value over a span of time."""

    memory_id: str
    slot: str  # the attribute's keyword terms, sorted, space-joined
    subject: str
    attribute: str
    value: str
    reason: str | None
    valid_from: float
    valid_to: float | None = None
    superseded_by: str | None = None
    supersedes: str | None = None
    root: str = ""  # the first fact of this slot's timeline
    user_id: str | None = None


@dataclass(frozen=True)
class Closing:
    """A fact's value ends: a newer record gives the slot a new value."""

    memory_id: str
    slot: str
    valid_to: float
    superseded_by: str


@dataclass(frozen=True)
class ReviewRow:
    """A supersession held back for a person: the newer statement's source ranks below the older one's
    (`lifecycle.reviews`). `facts` and `closings` are what accepting it writes, as the write path planned them."""

    id: str
    tenant: str
    user_id: str | None
    memory_id: str  # the newer statement, waiting (ranked like a retired value meanwhile)
    incumbent: str  # the record whose value it would replace
    source: str
    incumbent_source: str
    created_at: float
    facts: tuple[FactRow, ...] = ()
    closings: tuple[Closing, ...] = ()
    status: str = "pending"  # pending, accepted, rejected
    decided_at: float | None = None
    decided_by: str | None = None
    note: str = ""


@dataclass(frozen=True)
class SealedSecret:
    memory_id: str
    placeholder: str
    kind: str
    ciphertext: bytes


class Writes(Protocol):
    """Records written: new ones with everything derived from them, a changed one, a restatement counted as a
    use, audit events. Each call is one transaction."""

    def insert(self, records: Sequence[MemoryRecord], terms: Sequence[list[str]], events: Sequence[Event], *,
               facts: Sequence[FactRow] = (), closings: Sequence[Closing] = (),
               secrets: Sequence[SealedSecret] = (), reviews: Sequence[ReviewRow] = ()) -> None:
        """Add records (with their embedding set), their events, facts, closed facts, sealed secrets and the
        supersessions they hold for review in one transaction."""

    def replace(self, record: MemoryRecord, terms: list[str] | None, events: Sequence[Event], *,
                secrets: Sequence[SealedSecret] = (), facts: Sequence[FactRow] = (),
                closings: Sequence[Closing] = (), reviews: Sequence[ReviewRow] = ()) -> None:
        """Write a changed record; `terms` None means the text and vector did not change. Facts and closings
        (a corrected text's new values and the old ones it ends) and held supersessions go in the same
        transaction."""

    def reinforce(self, tenant: str, memory_id: str, count: int, at: float, events: Sequence[Event], *,
                  source_id: str | None = None) -> None:
        """Count a restatement as a use; `source_id` (the saying's own id) joins the record's sources."""

    def add_events(self, tenant: str, events: Sequence[Event]) -> None: ...


class Reads(Protocol):
    """Records and their audit trail, by id or by key."""

    def get(self, tenant: str, memory_id: str) -> MemoryRecord | None: ...

    def fetch(self, keys: Sequence[int]) -> dict[int, MemoryRecord]:
        """Full records for these keys (those that still exist)."""

    def history(self, tenant: str, memory_id: str) -> list[Event]: ...


class Search(Protocol):
    """The two live indexes a search asks, and the ranking columns of what they found."""

    def keyword_search(
        self, scope: Scope, terms: Sequence[str], limit: int, filters: dict[str, Any] | None
    ) -> list[int]:
        """Record keys containing any of the terms, best BM25 first. A store may leave out terms so
        common that matching them costs more than they tell (vector search covers those)."""

    def vector_search(
        self, scope: Scope, vector: np.ndarray, limit: int, filters: dict[str, Any] | None
    ) -> list[int]:
        """Record keys nearest to a unit vector by cosine, nearest first."""

    def candidates(self, keys: Sequence[int]) -> list[Candidate]: ...


@runtime_checkable
class GathersCandidates(Protocol):
    """A store that gathers a search's candidates from both indexes with their rows itself: PostgreSQL in one
    statement (one round trip instead of three), SQLite reading a large scope's keywords beside its vector scan.
    Ranking uses it when the store offers it; its result is exactly `candidates` of the keys `vector_search` and
    `keyword_search` return."""

    def search_candidates(self, scope: Scope, terms: Sequence[str], vector: np.ndarray, limit: int,
                          filters: dict[str, Any] | None) -> list[Candidate]: ...


class AccessLog(Protocol):
    """Uses of records: what lets stability grow with real recall."""

    def record_access(self, tenant: str, ids: Sequence[str], at: float, window: float, actor: str) -> set[str]:
        """Count a use of each record not already counted within `window` seconds; return those counted."""


class Meta(Protocol):
    """Small settings kept in the store itself (embedder space, privacy mode, keys), so every surface sees them."""

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...


class Listing(Protocol):
    """Whole-scope views: every record, counts, users, events of some types."""

    def scan(self, tenant: str, user_id: str | None) -> Iterator[MemoryRecord]: ...

    def stats(self, tenant: str, user_id: str | None) -> dict[str, Any]: ...

    def users(self, tenant: str) -> dict[str | None, int]:
        """Every user of a tenant with how many records they have in any tier (None: records of no user)."""

    def events_since(self, tenant: str, types: Sequence[str], since: float) -> list[Event]: ...

    def events_after(self, tenant: str, after: int, types: Sequence[str], limit: int) -> list[Event]:
        """Events of these types with a sequence number above `after`, in order: a feed another system follows
        with the last number it saw as its cursor."""


class Facts(Protocol):
    """Facts and their timelines."""

    def current_facts(self, tenant: str, user_id: str | None) -> list[FactRow]: ...

    def user_facts(self, tenant: str, user_id: str | None) -> list[FactRow]: ...

    def timeline(self, tenant: str, root: str) -> list[FactRow]: ...

    def facts_of(self, tenant: str, memory_ids: Sequence[str]) -> list[FactRow]: ...


class Reviews(Protocol):
    """Supersessions held for a person to accept or reject (`lifecycle.reviews`)."""

    def reviews(self, tenant: str, status: str | None, user_id: str | None, *, every_user: bool,
                limit: int) -> list[ReviewRow]:
        """Oldest first; `status` None: any; `every_user`: ignore `user_id`."""
        ...

    def get_review(self, tenant: str, review_id: str) -> ReviewRow | None: ...

    def decide_review(self, tenant: str, review_id: str, status: str, at: float, actor: str, note: str,
                      events: Sequence[Event], *, facts: Sequence[FactRow] = (),
                      closings: Sequence[Closing] = ()) -> bool:
        """Close a pending review as `status` with its events, facts and closings, in one transaction. False (and
        nothing written) when it was no longer pending or a value it closes is no longer current."""
        ...


class Secrets(Protocol):
    """Secret values sealed with the store's key."""

    def sealed(self, tenant: str, memory_id: str) -> list[SealedSecret]: ...


class Views(Protocol):
    """The selections consolidation, context and forget requests read: sessions, essentials, kinds, newest."""

    def session_turns(self, tenant: str, user_id: str | None, session_id: str, *, unconsolidated: bool,
                      limit: int = 100_000) -> list[MemoryRecord]: ...

    def mark_consolidated(self, tenant: str, ids: Sequence[str], summary_id: str) -> None: ...

    def essentials(self, tenant: str, user_id: str | None, limit: int) -> list[MemoryRecord]: ...

    def live_of_kind(self, tenant: str, user_id: str | None, kind: str, limit: int) -> list[MemoryRecord]:
        """A user's live records of one kind, newest first."""

    def latest(self, tenant: str, user_id: str | None, session_id: str | None, limit: int) -> list[MemoryRecord]:
        """A user's newest live records other than summaries (of one session when given), newest first."""


class Tiers(Protocol):
    """Moving records between tiers inside the store, and erasing them."""

    def sweep_rows(self, tenant: str, user_id: str | None, source: str, after: int, limit: int,
                   window: tuple[int, int, int] | None = None) -> SweepRows | None: ...

    def demote(self, tenant: str, moves: Sequence[tuple[int, str | None, Tier]], events: Sequence[Event],
               at: float) -> None: ...

    def promote(self, tenant: str, memory_id: str, to: Tier, terms: list[str] | None,
                events: Sequence[Event]) -> None: ...

    def seq_of(self, tenant: str, memory_id: str) -> int | None: ...

    def where_held(self, tenant: str, ids: Sequence[str]) -> dict[str, tuple[Tier, bool]]: ...

    def expired_trash(self, tenant: str, before: float, user_id: str | None = None) -> list[str]: ...

    def user_ids(self, tenant: str, user_id: str | None) -> tuple[list[str], list[str]]: ...

    def purge(self, tenant: str, ids: Sequence[str], events: Sequence[Event]) -> None: ...

    def scrub(self) -> None: ...


class ColdReads(Protocol):
    """Where each cold record is, read by deep recall, restores and exports."""

    def cold(self, tenant: str, ids: Sequence[str]) -> dict[str, tuple[str, int, dict[str, Any]]]: ...

    def cold_files(self, tenant: str, user_id: str | None, *, every_user: bool = False) -> dict[str, list[str]]: ...

    def cold_version(self, tenant: str, user_id: str | None) -> tuple[int, int]:
        """(count, sum of seq) of a user's archived records: changes whenever their archive does."""
        ...


class ArchiveIndex(Protocol):
    """Which archive file holds each cold record, and the intent log of file changes."""

    def intent(self, file: str, state: str) -> None: ...

    def intents(self) -> list[tuple[str, str]]: ...

    def clear_intent(self, file: str) -> None: ...

    def archive_move(self, tenant: str, file: str, seqs: Sequence[int], events: Sequence[Event],
                     at: float) -> None: ...

    def set_cold_flags(self, tenant: str, memory_id: str, flags: dict[str, Any], events: Sequence[Event]) -> None: ...

    def replace_file(self, tenant: str, old: str, new: str | None, leaving: Sequence[str],
                     reinstated: Sequence[tuple[MemoryRecord, int, list[str] | None]], events: Sequence[Event],
                     at: float, *, keep_file: bool = False) -> None:
        """`keep_file`: `old` stays as it is, its `leaving` rows now stale (out of the index), and it is marked
        'stale' for the next compaction instead of 'deleting' (a revival need not rewrite a file)."""
        ...

    def indexed_in(self, file: str) -> list[tuple[str, str]]:
        """(tenant, id) of the archive index rows that point at `file`."""
        ...


class FullStore(Writes, Reads, Search, AccessLog, Meta, Listing, Facts, Reviews, Secrets, Views, Tiers, ColdReads,
                ArchiveIndex, Protocol):
    """Everything a backend implements (SQLite, PostgreSQL). Each engine part asks only for the protocols above
    that it uses (`recall.ranking.RankingStore`, `lifecycle.sweep.SweepStore`, ...), so what it touches is plain."""

    def close(self) -> None: ...


class ArchiveWriter(Protocol):
    """What a sweep inside the database needs of the Parquet archive (`ebbing.lifecycle.archive.Archive`):
    a file name for a tenant's month, and a durable write."""

    def month_of(self, record: MemoryRecord) -> str: ...

    def new_path(self, tenant: str, month: str) -> Path: ...

    def write(self, relative: Path, records: Sequence[tuple[MemoryRecord, int]], at: float) -> None: ...


@runtime_checkable
class SweepsInDatabase(Protocol):
    """A store that scores and moves its live records itself, next to the data (PostgreSQL), with several
    worker processes able to sweep one tenant at once. `Sweeper` uses it when the store offers it."""

    def sweep_live(self, tenant: str, user_id: str | None, at: float, config: Any, *, window: Any, dry_run: bool,
                   batch_size: int, archive: Any, event: Any) -> tuple[int, list[Any]]:
        """Sweep the live tiers: (records evaluated, the `Change`s made); `event(change, at)` makes the audit
        event of each move."""

    def sweep_lock(self, tenant: str) -> Any:
        """A context manager yielding whether this worker holds the tenant's archive pass (cold records and
        purges touch files, so one worker at a time does them)."""
