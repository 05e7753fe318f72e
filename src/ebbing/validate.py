"""Rules for what comes in. Each check names the field and the rule, and runs before anything is written."""

from __future__ import annotations

import json
import math
from typing import Any

from ebbing.errors import InvalidInput
from ebbing.model import Kind, Priority

MAX_TEXT_BYTES = 32 * 1024  # one memory is a thought, not a document
MAX_ID_CHARS = 256
MAX_METADATA_BYTES = 64 * 1024


def note(value: Any, field: str) -> str:
    """Optional free text kept in the audit log (a forget's reason, a review's note): may be empty; otherwise the
    rules of a memory's text."""
    if not isinstance(value, str):
        raise InvalidInput(field, f"must be a string, not {type(value).__name__}")
    return text(value, field) if value.strip() else ""


def text(value: Any, field: str = "text") -> str:
    if not isinstance(value, str):
        raise InvalidInput(field, f"must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(field, "must not be empty or only whitespace")
    if "\x00" in value:
        raise InvalidInput(field, "must not contain NUL characters")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(field, "must be valid Unicode (found a lone surrogate)") from None
    if size > MAX_TEXT_BYTES:
        raise InvalidInput(field, f"is {size} bytes; the limit is {MAX_TEXT_BYTES} bytes of UTF-8")
    return value.strip()


def name(value: Any, field: str, *, required: bool = False) -> str | None:
    """A scope name (tenant, user_id, agent_id, session_id)."""
    if value is None:
        if required:
            raise InvalidInput(field, "is required")
        return None
    if not isinstance(value, str):
        raise InvalidInput(field, f"must be a string, not {type(value).__name__}")
    if not value.strip() or value != value.strip():
        raise InvalidInput(field, "must be non-empty and have no leading or trailing whitespace")
    if len(value) > MAX_ID_CHARS or any(ch < " " for ch in value):
        raise InvalidInput(field, f"must be at most {MAX_ID_CHARS} printable characters")
    return value


def kind(value: Any, field: str = "kind") -> Kind | None:
    if value is None:
        return None
    try:
        return Kind(value)
    except ValueError:
        allowed = ", ".join(k.value for k in Kind)
        raise InvalidInput(field, f"unknown kind {value!r}; expected one of {allowed}") from None


def priority(value: Any, field: str = "priority") -> Priority | None:
    if value is None:
        return None
    try:
        return Priority(value.upper() if isinstance(value, str) else value)
    except ValueError:
        raise InvalidInput(field, f"unknown priority {value!r}; expected P0, P1 or P2") from None


def unit_interval(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(field, f"must be a number between 0 and 1, not {type(value).__name__}")
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise InvalidInput(field, f"must be between 0 and 1 (got {value!r})")
    return number


def flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(field, "must be true or false")
    return value


def metadata(value: Any, field: str = "metadata") -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(field, "must be a JSON object")
    if any(not isinstance(k, str) for k in value):
        raise InvalidInput(field, "keys must be strings")
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(field, f"must be JSON-serialisable without NaN or infinity ({exc})") from None
    if len(encoded.encode("utf-8")) > MAX_METADATA_BYTES:
        raise InvalidInput(field, f"must encode to at most {MAX_METADATA_BYTES} bytes of JSON")
    loaded: dict[str, Any] = json.loads(encoded)  # a deep copy the caller cannot mutate under us
    return loaded


def limit(value: Any, field: str = "limit", maximum: int = 1000) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInput(field, f"must be a whole number from 1 to {maximum}")
    return value


def source_ids(value: Any, field: str = "source_ids") -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
        raise InvalidInput(field, "must be a list of record ids")
    return list(value)
