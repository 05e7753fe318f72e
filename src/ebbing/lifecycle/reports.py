"""Reading the lifecycle back: why a record stands where it does (`explain`), what was forgotten and why
(`forgotten`), and every record in any tier (`export`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ebbing import validate
from ebbing.errors import InvalidInput
from ebbing.lifecycle.operations import Lifecycle
from ebbing.model import Event, MemoryRecord, Tier
from ebbing.retention.composite import Composite
from ebbing.retention.config import RetentionConfig
from ebbing.retention.explain import explain as explain_retention


def explain(lifecycle: Lifecycle, record: MemoryRecord, composite: Composite, config: RetentionConfig,
            now: float) -> dict[str, Any]:
    """The record's retention by policy and its projected moves, and what the write path judged about it: its
    salience, the neighbours it was compared with, merges into it, its supersession."""
    out = explain_retention(record, composite, config, now)
    history = lifecycle.store.history(lifecycle.tenant, record.id)
    out["judgements"] = [{"event": e.type, "at": e.at.isoformat(), **{k: e.data[k] for k in ("judged", "judgement",
                         "superseded_by") if k in e.data}}
                         for e in history if "judged" in e.data or "judgement" in e.data]
    out["salience"] = next((e.data.get("salience") for e in history if e.type == "add"), None)
    said = [bool(e.data.get("useful")) for e in history if e.type == "feedback"]
    out["feedback"] = {"useful": sum(said), "not_useful": len(said) - sum(said)}
    out["source"] = record.source
    # a newer value of its source's authority held for review, and what a person decided (lifecycle.reviews)
    out["reviews"] = [{"at": e.at.isoformat(), "actor": e.actor, "reason": e.reason,
                       **{k: e.data[k] for k in ("review", "incumbent", "status") if k in e.data}}
                      for e in history if e.type == "review"]
    return out


def forgotten(lifecycle: Lifecycle, start: float, end: float) -> list[dict[str, Any]]:
    """What went to the trash or was purged in [start, end], and why, newest last."""
    out = []
    for event in lifecycle.store.events_since(lifecycle.tenant, ["tier", "purge"], start):
        if event.at.timestamp() > end or (event.type == "tier" and event.data.get("to") != Tier.TRASH.value):
            continue
        record = lifecycle.find(event.memory_id)
        out.append({**event.to_dict(), "tier_now": record.tier.value if record else "purged",
                    "preview": record.text[:80] if record else None})
    return out


def export(lifecycle: Lifecycle, user_id: str | None, embeddings: bool) -> Iterator[dict[str, Any]]:
    """Every record of the tenant (or one user) as a JSON-ready dict: the store's, then the archive's."""
    store, tenant = lifecycle.store, lifecycle.tenant
    for record in store.scan(tenant, user_id):
        yield record.to_dict(embedding=embeddings)
    for file, ids in store.cold_files(tenant, user_id, every_user=user_id is None).items():
        for record in lifecycle.read_cold(Path(file), ids):
            yield record.to_dict(embedding=embeddings)


# What a follower of the feed sees: what happened to which record, never what it said. Uses ("access") and
# reveals are left out (an audit trail, not a change); judgement details stay in `explain`.
FEED_TYPES = ("add", "update", "merge", "supersede", "tier", "purge", "forget_request", "pin", "unpin", "hold",
              "release", "feedback", "review")
FEED_DATA = ("from", "to", "policy", "superseded_by", "supersedes", "request", "fields", "user", "kind", "useful",
             "review", "incumbent", "status")


def cause(event: Event) -> str:
    """Why a record moved or went: retention, priority or expiry (a sweep), manual (forget, restore), request (a user
    asked), recall (a use lifted it), consolidation, purge, erasure (a user's right to erasure)."""
    if event.type == "purge":
        return "erasure" if "user" in event.data else "purge"
    policy = str(event.data.get("policy", ""))
    if policy in ("manual", "request", "recall", "consolidation"):
        return policy
    if event.reason.startswith("expires_at "):
        return "expiry"
    return "priority" if event.reason.startswith("priority ") else "retention"


def feed(lifecycle: Lifecycle, after: Any, limit: Any, types: Sequence[str] | None = None) -> dict[str, Any]:
    """The events after cursor `after`, oldest first, and the cursor to ask with next (`Memory.events`)."""
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise InvalidInput("since", "must be a whole number >= 0 (the `next` of the previous page)")
    wanted = tuple(types) if types is not None else FEED_TYPES
    if not wanted or any(t not in FEED_TYPES for t in wanted):
        raise InvalidInput("types", f"choose from {', '.join(FEED_TYPES)}")
    events = lifecycle.store.events_after(lifecycle.tenant, after, wanted, validate.limit(limit, maximum=1000))
    return {"events": [{"seq": e.seq, "memory_id": e.memory_id, "type": e.type, "at": e.at.isoformat(),
                        "actor": e.actor, **{k: e.data[k] for k in FEED_DATA if k in e.data},
                        **({"cause": cause(e)} if e.type in ("tier", "purge") else {})} for e in events],
            "next": max((e.seq or 0 for e in events), default=after)}
