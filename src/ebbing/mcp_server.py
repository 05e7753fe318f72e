"""`ebbing mcp`: the memory as Model Context Protocol tools, over stdio, for Claude Desktop, Claude Code, Cursor.

Each tool parses its arguments, calls one `Memory` method and returns a JSON object. Library errors come back
as tool errors (`is_error`) whose text names the field and the rule, so the model can correct its call; the
server keeps running. The `mcp` package is imported here only, so `import ebbing` never needs it.

Configuration is read at this edge, as the CLI does: `--db`, `--tenant`, `--user`, and from the environment
`EBBING_HOME`, `EBBING_SECRET_KEY`, `EBBING_LLM_*` and `EBBING_EMBEDDER` (`hash`: the tiny test embedder).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import version
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import Field

from ebbing import validate
from ebbing.errors import Conflict, EbbingError, InvalidInput, NotFound
from ebbing.memory import Memory
from ebbing.model import ForgetOutcome, MemoryRecord

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ebbing.settings import Settings

T = TypeVar("T")

INSTRUCTIONS = """\
Ebbing is this user's long-term memory. It forgets the way people do: what is never used fades and is
eventually forgotten, what is pinned or used often stays.
- Call `context` at the start of a task to get what you should know, as prompt-ready text.
- Call `remember` when the user states something worth keeping: a fact about them, a preference, a decision.
  Store one self-contained statement per call, in the user's words where possible.
- Call `recall` to look up specific memories (it returns ids you can `pin`, `forget` or `explain`).
- `pin` what the user asks you to always remember; `forget` what they ask you to forget or what is wrong.
- When the user asks you to forget something ("forget what I told you about my daughter's school"), pass their
  words to `remember` as they are: the request is acted on and not stored, and the result says what was
  forgotten (or, if it fits several things, which ones to ask about). `forget_matching` does the same from a
  description, as a dry run first.
- `timeline` shows how a fact changed over time; `explain` says why a memory is fading and when it moves.
"""

# A record as the model sees it: enough to act on, without hashes, embeddings and counters.
RECORD_FIELDS = ("id", "text", "kind", "priority", "importance", "pinned", "tier", "user_id", "session_id",
                 "created_at", "last_accessed_at", "metadata", "source")


def record_view(record: MemoryRecord) -> dict[str, Any]:
    full = record.to_dict()
    return {name: full[name] for name in RECORD_FIELDS}


def forget_view(outcome: ForgetOutcome) -> dict[str, Any]:
    """What a forget request did, for the agent to confirm or to ask which one was meant."""
    return {"kind": outcome.kind, "forgotten": [record_view(r) for r in outcome.forgotten],
            "ambiguous": outcome.ambiguous, "tentative": outcome.tentative,
            "candidates": [record_view(h.record) for h in outcome.candidates],
            "purged": outcome.purged, "dry_run": outcome.dry_run, "kept_under_hold": outcome.held}


def error_text(exc: EbbingError) -> str:
    """One line for the model: what kind of problem, and for bad input the field and the rule."""
    if isinstance(exc, InvalidInput):
        return f"invalid input: {exc.field}: {exc.rule}"
    if isinstance(exc, NotFound):
        return f"not found: {exc}"
    if isinstance(exc, Conflict):
        return f"conflict: {exc}"
    return f"error: {exc}"


class Tools:
    """The tool bodies, one `Memory` call each. Calls are serialised: the SDK runs sync tools on worker threads."""

    def __init__(self, memory: Memory, user: str | None = None) -> None:
        self.memory = memory
        self.user = user
        self._lock = threading.Lock()

    def call(self, body: Callable[[], T]) -> T:
        from mcp.server.mcpserver.exceptions import ToolError

        try:
            with self._lock:
                return body()
        except EbbingError as exc:
            raise ToolError(error_text(exc)) from exc

    def scope(self, user_id: str | None) -> str | None:
        """The user a call acts for: the one given, else the server's; a server bound to a user serves no other."""
        if self.user is None:
            return user_id
        if user_id not in (None, self.user):
            raise InvalidInput("user_id", f"this server serves user {self.user!r} only; leave user_id out")
        return self.user

    def owned(self, memory_id: str) -> MemoryRecord:
        """The record, if it belongs to the server's user (another user's record is reported as missing)."""
        record = self.memory.get(memory_id)
        if self.user is not None and record.user_id != self.user:
            raise NotFound("id", memory_id)
        return record

    # -- the tools ---------------------------------------------------------------------------------------

    def remember(
        self,
        text: Annotated[str, Field(description="One self-contained statement to keep, e.g. 'Maya is allergic "
                                               "to peanuts' or 'The team chose PostgreSQL for the billing service'.")],
        user_id: Annotated[str | None, Field(description="Whose memory it is (default: the server's user).")] = None,
        kind: Annotated[str | None, Field(description="fact, preference, decision, temporary or episode; "
                                                      "leave out to let Ebbing infer it.")] = None,
        importance: Annotated[float | None, Field(description="0..1; leave out to let Ebbing infer it.")] = None,
        pinned: Annotated[bool, Field(description="True to keep it forever (only when the user asks).")] = False,
        session_id: Annotated[str | None, Field(description="The conversation it came from, if any.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Extra JSON fields to file it under.")] = None,
        expires_at: Annotated[str | None, Field(description="When it stops mattering, ISO-8601 (e.g. the end of a "
                                                            "trip); leave out for no end.")] = None,
        source: Annotated[str | None, Field(description='Who said it: "user" (default: the user told you), "tool" '
                                                        '(a tool or document returned it) or "agent" (your own '
                                                        "inference).")] = None,
    ) -> dict[str, Any]:
        """Store something worth remembering about the user or the work: a fact, a preference, a decision.
        A restatement of a stored memory strengthens that memory instead of adding a copy; a new value for a
        known fact ("my timeout is now 60s") supersedes the old one, which stays on the timeline. A new value
        from a less trusted source than the current one's (a tool's over the user's) is kept but waits for a
        person's review before it replaces it (`awaiting_review` in the result)."""

        def body() -> dict[str, Any]:
            result = self.memory.add(text, user_id=self.scope(user_id), session_id=session_id, kind=kind,
                                     importance=importance, pinned=pinned, metadata=metadata, expires_at=expires_at,
                                     source=source)
            merged = [e.memory_id for e in result.events if e.type == "merge"]
            out = {"records": [record_view(r) for r in result.records], "merged_into": merged}
            held = [{"review_id": e.data["review"], "memory_id": e.memory_id, "current_id": e.data["incumbent"]}
                    for e in result.events if e.type == "review"]
            if held:  # the new value does not replace the current one until a person accepts it
                out["awaiting_review"] = held
            if result.forget is not None:  # the text asked to forget something: nothing of it was stored
                out["forget"] = forget_view(result.forget)
            return out

        return self.call(body)

    def recall(
        self,
        query: Annotated[str, Field(description="What to look for, in natural language or keywords.")],
        user_id: Annotated[str | None, Field(description="Whose memories (default: the server's user).")] = None,
        limit: Annotated[int, Field(description="At most this many memories (1..100).")] = 5,
        filters: Annotated[dict[str, Any] | None, Field(
            description='Optional filters, e.g. {"kind": "preference"} or {"importance": {"$gte": 0.5}}.')] = None,
    ) -> dict[str, Any]:
        """Search the memories most relevant to a query, best first, each with its id and a score (relevance
        weighted by how well it is retained). May return fewer than `limit`, or none when nothing is relevant.
        Recalling a memory counts as using it, which keeps it from fading."""

        def body() -> dict[str, Any]:
            if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
                raise InvalidInput("limit", "must be a whole number from 1 to 100")
            hits = self.memory.search(query, user_id=self.scope(user_id), limit=limit, filters=filters)
            return {"hits": [{**record_view(h.record), "score": round(h.score, 4)} for h in hits]}

        return self.call(body)

    def context(
        self,
        query: Annotated[str, Field(description="The task or question at hand.")],
        user_id: Annotated[str | None, Field(description="Whose memories (default: the server's user).")] = None,
        budget_tokens: Annotated[int, Field(description="Upper bound on the size of the text, in tokens.")] = 1000,
        goal: Annotated[str | None, Field(description="The wider goal, to rank what serves it higher.")] = None,
        session_id: Annotated[str | None, Field(description="The current conversation, for its recent turns.")]
        = None,
    ) -> dict[str, Any]:
        """What you should know before answering: pinned essentials, the user's preferences, current facts and
        relevant earlier conversations, as prompt-ready text that never exceeds `budget_tokens`. Call it at the
        start of a task."""

        def body() -> dict[str, Any]:
            built = self.memory.context(query, user_id=self.scope(user_id), budget_tokens=budget_tokens, goal=goal,
                                        session_id=session_id)
            return {"text": built.text, "tokens": built.tokens, "budget": built.budget,
                    "sections": [s.name for s in built.sections], "record_ids": [r.id for r in built.records]}

        return self.call(body)

    def forget(
        self,
        memory_id: Annotated[str, Field(description="The id of the memory, from `recall` or `remember`.")],
        reason: Annotated[str, Field(description="Why, for the audit log (e.g. 'user asked', 'wrong').")] = "",
    ) -> dict[str, Any]:
        """Forget a memory now: it leaves recall and context at once and goes to the trash, where a person can
        still restore it until it is purged. Use it when the user asks you to forget something or it is wrong."""

        def body() -> dict[str, Any]:
            self.owned(memory_id)
            return record_view(self.memory.forget(memory_id, reason=reason or "forgotten over MCP"))

        return self.call(body)

    def forget_matching(
        self,
        query: Annotated[str, Field(description="What to forget, in the user's words, e.g. 'my daughter's school' "
                                                "or 'everything about Mark'.")],
        user_id: Annotated[str | None, Field(description="Whose memories (default: the server's user).")] = None,
        dry_run: Annotated[bool, Field(description="True (default) only lists what would be forgotten.")] = True,
    ) -> dict[str, Any]:
        """Forget the memories a description names, as when the user says "forget what I told you about X". By
        default a dry run: show the user the candidates, then call again with dry_run=false to forget them."""

        def body() -> dict[str, Any]:
            return forget_view(self.memory.forget_matching(query, user_id=self.scope(user_id), dry_run=dry_run))

        return self.call(body)

    def feedback(
        self,
        memory_id: Annotated[str, Field(description="The id of a memory `recall` or `context` gave you.")],
        useful: Annotated[bool, Field(description="True if it helped with the task, false if it was beside the "
                                              "point or wrong.")],
    ) -> dict[str, Any]:
        """Say whether a recalled memory helped: a useful one is kept longer (as if recalled again), one that
        was not useful fades sooner. Call it after using `recall` results, once per memory you judged."""

        def body() -> dict[str, Any]:
            self.owned(memory_id)
            return record_view(self.memory.feedback(memory_id, useful))

        return self.call(body)

    def pin(
        self,
        memory_id: Annotated[str, Field(description="The id of the memory, from `recall` or `remember`.")],
        pinned: Annotated[bool, Field(description="True to pin, false to unpin.")] = True,
    ) -> dict[str, Any]:
        """Pin a memory so it is never forgotten and always comes with `context` (or unpin it with
        pinned=false). Use it when the user says to always remember something."""

        def body() -> dict[str, Any]:
            self.owned(memory_id)
            record = self.memory.pin(memory_id) if pinned else self.memory.unpin(memory_id)
            return record_view(record)

        return self.call(body)

    def timeline(
        self,
        slot: Annotated[str, Field(description="The fact to trace, by name or as a question, e.g. "
                                               "'database timeout' or 'where does Maya live'.")],
        user_id: Annotated[str | None, Field(description="Whose memories (default: the server's user).")] = None,
    ) -> dict[str, Any]:
        """How a fact changed over time, oldest first: each value, from when until when it held, and why it
        changed. Use it when the user asks what something used to be or when it changed."""

        def body() -> dict[str, Any]:
            return {"timeline": self.memory.timeline(self.scope(user_id), slot)}

        return self.call(body)

    def explain(
        self,
        memory_id: Annotated[str, Field(description="The id of the memory, from `recall` or `remember`.")],
    ) -> dict[str, Any]:
        """Why a memory is where it is: its retention score now (0..1, by policy), whether it is exempt from
        forgetting (pinned, held, P0), and when it will move down a tier if it is never used again."""

        def body() -> dict[str, Any]:
            self.owned(memory_id)
            return self.memory.explain(memory_id)

        return self.call(body)


TOOL_NAMES = ("remember", "recall", "context", "forget", "forget_matching", "pin", "feedback", "timeline", "explain")


def build_server(memory: Memory, user: str | None = None) -> MCPServer:
    """An MCP server whose tools act on `memory` (for the user `user`, when given)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    tools = Tools(memory, user)
    server: MCPServer = MCPServer(name="ebbing", version=version("ebbing"), instructions=INSTRUCTIONS,
                                  log_level="WARNING")
    idempotent = {"recall", "context", "timeline", "explain", "pin"}
    for name in TOOL_NAMES:
        # Recall counts as a use of what it returns, so no tool is strictly read-only. Forget is the one that
        # takes something away (a client may ask before calling it), though a person can restore it from the trash.
        hints = ToolAnnotations(read_only_hint=False, destructive_hint=name in ("forget", "forget_matching"),
                                idempotent_hint=name in idempotent)
        server.add_tool(getattr(tools, name), name=name, annotations=hints)
    return server


def serve_stdio(settings: Settings, user: str | None) -> None:
    """`ebbing mcp`: the store `settings` name, served over stdio until the client closes it."""
    user = validate.name(user, "--user")  # a bad user fails now, not at every call
    memory = settings.memory("mcp")
    try:
        build_server(memory, user).run("stdio")
    finally:
        memory.close()
