"""Request bodies, at the HTTP edge only. The engine validates meaning (`InvalidInput` → 400); these only
give the OpenAPI schema its shape and refuse unknown fields (→ 422), so a typo never passes silently.

`at` is the time an operation happens: ISO-8601 or epoch seconds; absent means now.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

At = str | float | None
_AT = Field(None, description="When this happens: ISO-8601 or epoch seconds (default: now).")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AtBody(Body):
    at: At = _AT


class FeedbackBody(Body):
    useful: bool
    at: At = _AT


class AddBody(Body):
    text: str
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    kind: str | None = None
    importance: float | None = None
    pinned: bool = False
    priority: str | None = None
    metadata: dict[str, Any] | None = None
    at: At = _AT
    expires_at: At = Field(None, description="When it ends: hidden from search and context after it, moved by "
                                            "the next sweep (ISO-8601 or epoch seconds; default: never).")
    source: str | None = Field(None, description='Who said it, highest authority first: "user" (the default), '
                                                 '"tool", "agent", "import". A newer value from a source of lower '
                                                 "authority than the current value's waits in /v1/reviews.")


class UpdateBody(Body):
    text: str | None = None
    kind: str | None = None
    importance: float | None = None
    priority: str | None = None
    metadata: dict[str, Any] | None = None
    at: At = _AT
    expires_at: At = Field(None, description='A new end of life (ISO-8601 or epoch seconds), or "never" to '
                                            "remove it.")


class ReviewBody(Body):
    note: str = Field(default="", description="Why it was decided so, for the audit log.")
    at: At = _AT


class ForgetBody(Body):
    reason: str = ""
    at: At = _AT


class ForgetMatchingBody(Body):
    query: str
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    dry_run: bool = True
    at: At = _AT


class SearchBody(Body):
    query: str
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    limit: int = 10
    filters: dict[str, Any] | None = None
    include_cold: bool | None = None
    at: At = _AT


class ContextBody(Body):
    query: str
    user_id: str | None = None
    budget_tokens: int = 2000
    goal: str | None = None
    session_id: str | None = None
    at: At = _AT


class TimelineBody(Body):
    slot: str = Field(description="The attribute ('database timeout') or a question about it.")
    user_id: str | None = None
    at: At = _AT


class SweepBody(Body):
    at: At = _AT
    dry_run: bool = False
    user_id: str | None = None
    spread: bool = False
