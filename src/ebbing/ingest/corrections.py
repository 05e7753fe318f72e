"""A record corrected in place (`Memory.update`): it keeps its id and history; a new text goes through what an
add goes through (secrets, classification of what the add left to inference, facts, the update judge), and the
audit log keeps the old text's hash, never the text."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ebbing import validate
from ebbing.clock import to_epoch
from ebbing.errors import Conflict, InvalidInput
from ebbing.ingest.guard import SecretBox, guard, redact
from ebbing.ingest.pipeline import Ingest
from ebbing.model import Event, MemoryRecord, Tier, when
from ebbing.store.base import SealedSecret


def correct(ingest: Ingest, get: Callable[[str], MemoryRecord], memory_id: str, fields: dict[str, Any],
            now: float, box: SecretBox | None, actor: str) -> MemoryRecord:
    """`fields`: text, kind, importance, priority, metadata as given (None leaves one as it is)."""
    tag_key = ingest.tag_key
    changes: dict[str, Any] = {}
    shield = None
    if fields.get("text") is not None:
        shield = guard(validate.text(fields["text"]), tag_key=tag_key)
        changes["text"] = shield.text
    if fields.get("kind") is not None:
        changes["kind"] = validate.kind(fields["kind"])
    if fields.get("importance") is not None:
        changes["importance"] = validate.unit_interval(fields["importance"], "importance")
    if fields.get("priority") is not None:
        changes["priority"] = validate.priority(fields["priority"])
    if fields.get("metadata") is not None:
        changes["metadata"] = redact(validate.metadata(fields["metadata"]), tag_key=tag_key)
    if fields.get("expires_at") is not None:
        ends = fields["expires_at"]
        changes["expires_at"] = None if ends == "never" else when(to_epoch(ends, "expires_at"))
        if changes["expires_at"] is not None and changes["expires_at"].timestamp() <= now:
            raise InvalidInput("expires_at", "must be after the update's time (`at`), or \"never\"")
    if not changes:
        raise InvalidInput("update", "give at least one of text, kind, importance, priority, metadata, expires_at")
    record = get(memory_id)
    if record.tier is Tier.COLD:
        raise Conflict(f"{memory_id} is in the cold archive; restore it before changing it")
    stamped = dataclasses.replace(record, updated_at=when(now))
    data: dict[str, Any] = {}
    revision = None
    if shield is not None:  # a new text goes through the write path: classification, facts, the judge
        given = {"kind", "importance", "priority"} & set(changes)
        revision = ingest.revise(stamped, shield.text, bool(shield.secrets),
                                 reinfer=[n for n in _inferred(ingest, record) if n not in given])
        stamped = revision.record
        data["previous_hash"] = record.content_hash  # the audit log keeps no text, only its hash
        if revision.judged:
            data["judged"] = revision.judged
    updated = dataclasses.replace(stamped, **{k: v for k, v in changes.items() if k != "text"})
    changed = [name for name in ("text", "kind", "importance", "priority", "metadata", "security", "expires_at")
               if getattr(record, name) != getattr(updated, name)]
    sealed = []
    if shield is not None and box is not None:
        sealed = [SealedSecret(record.id, x.placeholder, x.kind, box.encrypt(x.value)) for x in shield.secrets]
    plan = revision.plan if revision else None
    ingest.store.replace(updated, revision.terms if revision else None,
                         [Event(record.id, "update", when(now), actor, "", {"fields": changed, **data}),
                          *(plan.events if plan else [])],
                         secrets=sealed, facts=plan.facts if plan else (), closings=plan.closings if plan else (),
                         reviews=plan.reviews if plan else ())
    return updated


def _inferred(ingest: Ingest, record: MemoryRecord) -> list[str]:
    """The fields the add left to inference: a corrected text infers them again."""
    for event in ingest.store.history(record.tenant, record.id):
        if event.type == "add":
            return [str(name) for name in event.data.get("inferred", [])]
    return []
