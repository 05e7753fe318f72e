"""Reading the lifecycle back: why a record stands where it does (`explain`), what was forgotten and why
(`forgotten`), and every record in any tier (`export`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ebbing.lifecycle.operations import Lifecycle
from ebbing.model import MemoryRecord, Tier
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
