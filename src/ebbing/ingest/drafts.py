"""From a caller's fields (an `add`, a line of an import file) to a validated `Draft`: every field checked, named
in the error when it is wrong, and nothing derived yet."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ebbing import validate
from ebbing.clock import Instant, to_epoch
from ebbing.errors import InvalidInput
from ebbing.ingest.authority import DEFAULT_SOURCES
from ebbing.ingest.guard import redact, refuse_secret
from ebbing.ingest.pipeline import Draft
from ebbing.model import Scope, role_is_assistant

IMPORT_FIELDS = {"text", "user_id", "agent_id", "session_id", "kind", "importance", "pinned", "priority",
                 "metadata", "at", "created_at", "id", "last_accessed_at", "access_count", "source_ids", "held",
                 "security", "expires_at", "source"}
# Accepted so an export imports again, but not restored: the tier and counters start afresh.
EXPORT_ONLY_FIELDS = {"tenant", "tier", "updated_at", "content_hash", "embedding", "update_count"}


def draft(item: Mapping[str, Any], at: Instant, tenant: str, tag_key: bytes | None, *,
          strict: bool = False, sources: Sequence[str] = DEFAULT_SOURCES, default_source: str = "user") -> Draft:
    """`strict` (an import line): a field Ebbing does not know is an error, not ignored. `source` must be one of
    `sources`; left out, it is `default_source`, or "agent" for a message whose metadata says the assistant's."""
    if strict:
        unknown = set(item) - IMPORT_FIELDS - EXPORT_ONLY_FIELDS
        if unknown:
            raise InvalidInput(sorted(unknown)[0], "unknown field")
    when_given = item.get("at", item.get("created_at"))
    created = to_epoch(when_given if when_given is not None else at, "at")
    last = item.get("last_accessed_at")
    count = item.get("access_count", 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InvalidInput("access_count", "must be a whole number >= 0")
    ends = item.get("expires_at")
    expires_at = to_epoch(ends, "expires_at") if ends is not None else None
    if expires_at is not None and expires_at <= created:
        raise InvalidInput("expires_at", "must be after the record's time (`at`)")
    ident = item.get("id")
    if ident is not None and (not isinstance(ident, str) or len(ident) != 26 or not ident.isalnum()):
        raise InvalidInput("id", "must be a 26-character ULID")
    scope = Scope(tenant, validate.name(item.get("user_id"), "user_id"),
                  validate.name(item.get("agent_id"), "agent_id"),
                  validate.name(item.get("session_id"), "session_id"))
    for name in ("user_id", "agent_id", "session_id"):  # stored and shown as given: no secret in them
        refuse_secret(getattr(scope, name), name)
    metadata = redact(validate.metadata(item.get("metadata")), tag_key=tag_key)
    source = item.get("source")
    if source is None:
        source = "agent" if role_is_assistant(metadata) and "agent" in sources else default_source
    elif not isinstance(source, str) or source not in sources:
        raise InvalidInput("source", f"must be one of the configured sources: {', '.join(sources)}")
    return Draft(
        text=validate.text(item.get("text")),
        scope=scope,
        kind=validate.kind(item.get("kind")),
        importance=validate.unit_interval(item.get("importance"), "importance"),
        priority=validate.priority(item.get("priority")),
        pinned=validate.flag(item.get("pinned", False), "pinned"),
        held=validate.flag(item.get("held", False), "held"),
        security=validate.flag(item.get("security", False), "security"),
        metadata=metadata,
        created_at=created,
        id=ident.upper() if ident else None,
        last_accessed_at=to_epoch(last, "last_accessed_at") if last is not None else None,
        access_count=count,
        source_ids=tuple(validate.source_ids(item.get("source_ids"))),
        expires_at=expires_at,
        source=source,
    )
