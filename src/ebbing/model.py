"""The values Ebbing hands out: records, events, hits and the results of operations."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

import numpy as np
from ulid import ULID

from ebbing.clock import to_datetime


class Kind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    DECISION = "decision"
    TEMPORARY = "temporary"
    EPISODE = "episode"
    SUMMARY = "summary"


class Priority(StrEnum):
    P0 = "P0"  # never expires
    P1 = "P1"  # expires after a long time without a reference
    P2 = "P2"  # expires after a short time without a reference


class Tier(StrEnum):
    HOT = "hot"
    WARM = "warm"
    COLD = "cold"
    TRASH = "trash"


LIVE_TIERS = (Tier.HOT, Tier.WARM)


@dataclass(frozen=True)
class Scope:
    """Who a memory belongs to. Tenants never see each other; within one, a user's memories are theirs."""

    tenant: str = "default"
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None


@dataclass
class MemoryRecord:
    id: str
    text: str
    kind: Kind
    importance: float
    priority: Priority
    created_at: datetime
    updated_at: datetime
    tenant: str = "default"
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    pinned: bool = False
    held: bool = False  # legal hold: exempt from forgetting and purging
    security: bool = False  # secret-bearing or security-related: fades slower
    last_accessed_at: datetime | None = None  # the reference time: when it was last actually used
    access_count: int = 0
    update_count: int = 0  # how often its text was changed: a value that keeps changing fades faster
    tier: Tier = Tier.HOT
    metadata: dict[str, Any] = field(default_factory=dict)
    source_ids: list[str] = field(default_factory=list)
    content_hash: str = ""
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)
    # An explicit end of life: after it the record is hidden from search and context, and the next sweep moves
    # it as if forgotten (by its priority's rules; only a legal hold keeps it where it is).
    expires_at: datetime | None = None
    # Who said it: "user", "agent", "tool", "import" or a configured name. A newer value from a source ranking
    # below the current one's does not replace it; it waits for a person's review (`lifecycle.reviews`).
    source: str = "user"

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant, self.user_id, self.agent_id, self.session_id)

    @property
    def referenced_at(self) -> datetime:
        """The time decay runs from: the last use, or creation if never used."""
        return self.last_accessed_at or self.created_at

    def to_dict(self, *, embedding: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "kind": self.kind.value,
            "importance": self.importance,
            "priority": self.priority.value,
            "pinned": self.pinned,
            "held": self.held,
            "security": self.security,
            "tier": self.tier.value,
            "tenant": self.tenant,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "session_id": self.session_id,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "last_accessed_at": self.last_accessed_at.isoformat() if self.last_accessed_at else None,
            "access_count": self.access_count,
            "update_count": self.update_count,
            "metadata": self.metadata,
            "source_ids": self.source_ids,
            "content_hash": self.content_hash,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "source": self.source,
        }
        if embedding and self.embedding is not None:
            out["embedding"] = [float(x) for x in self.embedding]
        return out


@dataclass(frozen=True)
class Event:
    """One line of the append-only audit log. It never holds a record's text, only facts about it."""

    memory_id: str
    type: str  # add, update, access, pin, unpin, tier, delete, ...
    at: datetime
    actor: str = "system"
    reason: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    seq: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "memory_id": self.memory_id,
            "type": self.type,
            "at": self.at.isoformat(),
            "actor": self.actor,
            "reason": self.reason,
            "data": self.data,
        }


@dataclass(frozen=True)
class Hit:
    record: MemoryRecord
    score: float
    parts: dict[str, float] = field(default_factory=dict)  # relevance, vector, keyword, retention

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.record.to_dict(), "score": self.score, "parts": self.parts}


@dataclass(frozen=True)
class ForgetOutcome:
    """What a forget request (or `forget_matching`) did: `forgotten` went to the trash (or was purged, in
    privacy mode); when the target was `ambiguous` nothing went and `candidates` are what it could mean, so the
    agent can ask; in a dry run `candidates` are what would go. The request itself is never stored."""

    id: str  # the request's id, carried by each forget event it caused
    kind: str  # previous, this, field, topic, entity or everything (forget_matching: topic or entity)
    target: str
    forgotten: list[MemoryRecord] = field(default_factory=list)
    candidates: list[Hit] = field(default_factory=list)
    ambiguous: bool = False
    purged: bool = False
    dry_run: bool = False
    held: list[str] = field(default_factory=list)  # matched, but under legal hold: kept
    # the words need not have meant the memory ("remove the flight details"): ask whether, not which
    tentative: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "target": self.target, "ambiguous": self.ambiguous,
                "tentative": self.tentative, "purged": self.purged, "dry_run": self.dry_run, "held": self.held,
                "forgotten": [r.to_dict() for r in self.forgotten],
                "candidates": [h.to_dict() for h in self.candidates]}


@dataclass(frozen=True)
class AddResult:
    records: list[MemoryRecord]
    events: list[Event]
    forget: ForgetOutcome | None = None  # the message was a forget request: nothing of it is stored

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"records": [r.to_dict() for r in self.records],
                               "events": [e.to_dict() for e in self.events]}
        if self.forget is not None:
            out["forget"] = self.forget.to_dict()
        return out


@dataclass(frozen=True)
class Review:
    """A newer value held back for a person to decide: its source ranks below the source of the value it would
    replace (`lifecycle.reviews`). `proposed` and `current` are the two records' texts at the time of asking."""

    id: str
    memory_id: str  # the newer statement, waiting
    incumbent: str  # the record whose value it would replace
    user_id: str | None
    source: str
    incumbent_source: str
    created_at: datetime
    status: str  # pending, accepted or rejected
    proposed: str = ""
    current: str = ""
    decided_at: datetime | None = None
    decided_by: str | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "memory_id": self.memory_id, "incumbent": self.incumbent, "user_id": self.user_id,
            "source": self.source, "incumbent_source": self.incumbent_source,
            "created_at": self.created_at.isoformat(), "status": self.status, "proposed": self.proposed,
            "current": self.current, "decided_at": self.decided_at.isoformat() if self.decided_at else None,
            "decided_by": self.decided_by, "note": self.note,
        }


def expired(record: MemoryRecord, now: float) -> bool:
    """Whether the record's explicit expiry (`expires_at`) has come by `now`."""
    return record.expires_at is not None and record.expires_at.timestamp() <= now


def new_id(at: float) -> str:
    """A ULID whose time part is the add time, so ids sort by when memories were made."""
    return str(ULID.from_timestamp(at))


def content_hash(text: str) -> str:
    """Hash of the normalised text: same words, same hash, whatever the spacing or width of characters."""
    normal = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def when(epoch: float) -> datetime:
    value = to_datetime(epoch)
    assert value is not None
    return value


def role_is_assistant(metadata: Any) -> bool:
    """A record the agent itself said (`metadata={"role": "assistant"}`): it states no facts of the user's."""
    role = metadata.get("role") if isinstance(metadata, dict) else None
    return isinstance(role, str) and role.strip().casefold() == "assistant"
