"""The /v1 routes. Each parses its input, calls one `Memory` method and formats the result with the
value's own `to_dict()`. A foreign tenant's id is simply not found in the caller's tenant: 404, the same
body as an id that never existed.

Roles: an `agent` key reads and writes its tenant's memories, and lists and decides its review queue (a
decision is audited as made by `key:<key id>`); `admin` may also sweep, purge, purge a user and put records
under legal hold (hold/release).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from fastapi.security import HTTPBearer

from ebbing.memory import Memory
from ebbing.server.errors import Forbidden
from ebbing.server.models import (
    AddBody,
    AtBody,
    ContextBody,
    FeedbackBody,
    ForgetBody,
    ForgetMatchingBody,
    ReviewBody,
    SearchBody,
    SweepBody,
    TimelineBody,
    UpdateBody,
)
from ebbing.server.tenancy import Principal, admin, memory_for, principal

# Declares the bearer scheme in the OpenAPI schema; `principal` does the checking (also for the cookie).
_bearer = HTTPBearer(auto_error=False, description="An API key from `ebbing keys create`.")
router = APIRouter(prefix="/v1", dependencies=[Depends(_bearer), Depends(principal)])

Mem = Annotated[Memory, Depends(memory_for)]
Admin = Annotated[Principal, Depends(admin)]
Caller = Annotated[Principal, Depends(principal)]
AtQuery = Annotated[str | None, Query(description="When this happens: ISO-8601 or epoch seconds (default: now).")]
UserQuery = Annotated[str | None, Query(description="Only this user's memories.")]
_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No such record in your tenant"}}
_NO_REVIEW: dict[int | str, dict[str, Any]] = {404: {"description": "No such review in your tenant"}}
_DECIDE: dict[int | str, dict[str, Any]] = {**_NO_REVIEW, 409: {"description": "Already decided, or the value it "
                                                                            "would replace changed meanwhile"}}


def _at(body: AtBody | None) -> str | float | None:
    return body.at if body is not None else None


def _by(who: Principal) -> str:
    """Who decided a review, for its audit trail: the caller's key by its public id ("key:local" in open mode)."""
    return f"key:{who.key_id}"


@router.post("/memories", status_code=201, summary="Remember a text",
             responses={403: {"description": "The key is bound to another source"}})
def add(body: AddBody, mem: Mem, who: Caller) -> dict[str, Any]:
    fields = body.model_dump()
    if who.source is not None:  # a key bound to a source speaks only as that source
        if fields["source"] not in (None, who.source):
            raise Forbidden(f"this key adds as source {who.source!r}, not {fields['source']!r}", "source")
        fields["source"] = who.source
    return mem.add(**fields).to_dict()


@router.get("/memories/{memory_id}", responses=_NOT_FOUND, summary="A record in any tier")
def get(memory_id: str, mem: Mem) -> dict[str, Any]:
    return mem.get(memory_id).to_dict()


@router.patch("/memories/{memory_id}", responses=_NOT_FOUND, summary="Correct a record in place")
def update(memory_id: str, body: UpdateBody, mem: Mem) -> dict[str, Any]:
    return mem.update(memory_id, **body.model_dump()).to_dict()


@router.delete("/memories/{memory_id}", responses=_NOT_FOUND, summary="Forget: send to the trash (restorable)")
def delete(memory_id: str, mem: Mem, reason: str = "", at: AtQuery = None) -> dict[str, Any]:
    return mem.forget(memory_id, at=at, reason=reason).to_dict()


@router.post("/memories/{memory_id}/forget", responses=_NOT_FOUND, summary="Forget: send to the trash")
def forget(memory_id: str, mem: Mem, body: ForgetBody | None = None) -> dict[str, Any]:
    body = body or ForgetBody()
    return mem.forget(memory_id, at=body.at, reason=body.reason).to_dict()


@router.post("/forget-matching", summary="Forget what a query names (a dry run unless dry_run is false)")
def forget_matching(body: ForgetMatchingBody, mem: Mem) -> dict[str, Any]:
    return mem.forget_matching(**body.model_dump()).to_dict()


@router.post("/memories/{memory_id}/restore", responses=_NOT_FOUND, summary="Bring back from trash or cold")
def restore(memory_id: str, mem: Mem, body: AtBody | None = None) -> dict[str, Any]:
    return mem.restore(memory_id, at=_at(body)).to_dict()


@router.post("/memories/{memory_id}/pin", responses=_NOT_FOUND, summary="Pin: never forgotten")
def pin(memory_id: str, mem: Mem, body: AtBody | None = None) -> dict[str, Any]:
    return mem.pin(memory_id, at=_at(body)).to_dict()


@router.post("/memories/{memory_id}/feedback", responses=_NOT_FOUND,
             summary="Whether a recalled memory helped: useful reinforces it, not useful lets it fade sooner")
def feedback(memory_id: str, mem: Mem, body: FeedbackBody) -> dict[str, Any]:
    return mem.feedback(memory_id, body.useful, at=body.at).to_dict()


@router.post("/memories/{memory_id}/unpin", responses=_NOT_FOUND, summary="Unpin")
def unpin(memory_id: str, mem: Mem, body: AtBody | None = None) -> dict[str, Any]:
    return mem.unpin(memory_id, at=_at(body)).to_dict()


@router.post("/memories/{memory_id}/hold", responses=_NOT_FOUND, summary="Legal hold (admin)")
def hold(memory_id: str, who: Admin, mem: Mem, body: AtBody | None = None) -> dict[str, Any]:
    return mem.hold(memory_id, at=_at(body)).to_dict()


@router.post("/memories/{memory_id}/release", responses=_NOT_FOUND, summary="Release a legal hold (admin)")
def release(memory_id: str, who: Admin, mem: Mem, body: AtBody | None = None) -> dict[str, Any]:
    return mem.release(memory_id, at=_at(body)).to_dict()


@router.post("/memories/{memory_id}/purge", status_code=204, responses=_NOT_FOUND,
             summary="Erase a record for good (admin)")
def purge(memory_id: str, who: Admin, mem: Mem, body: AtBody | None = None) -> Response:
    mem.purge(memory_id, at=_at(body))
    return Response(status_code=204)


@router.get("/memories/{memory_id}/history", responses=_NOT_FOUND, summary="The record's audit events")
def history(memory_id: str, mem: Mem) -> dict[str, Any]:
    return {"events": [e.to_dict() for e in mem.history(memory_id)]}


@router.get("/memories/{memory_id}/explain", responses=_NOT_FOUND, summary="Retention now and projected fade")
def explain(memory_id: str, mem: Mem, at: AtQuery = None) -> dict[str, Any]:
    return mem.explain(memory_id, at=at)


@router.get("/reviews", summary="Newer values held back by their source's authority, oldest first")
def reviews(
    mem: Mem,
    user_id: Annotated[str | None, Query(description="Only this user's reviews (default: every user's).")] = None,
    status: Annotated[Literal["pending", "accepted", "rejected", "any"],
                      Query(description='Which reviews: "pending" (default), "accepted", "rejected" or "any".')]
    = "pending",
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many reviews.")] = 100,
) -> dict[str, Any]:
    """`status=any` lists every review whatever its status (`Memory.reviews(status=None)`)."""
    found = mem.reviews(user_id, None if status == "any" else status, limit)
    return {"reviews": [r.to_dict() for r in found]}


@router.get("/reviews/{review_id}", responses=_NO_REVIEW, summary="A review, pending or decided")
def review(review_id: str, mem: Mem) -> dict[str, Any]:
    return mem.review(review_id).to_dict()


@router.post("/reviews/{review_id}/accept", responses=_DECIDE,
             summary="Accept: the held value replaces the current one (409 once decided)")
def accept_review(review_id: str, who: Caller, mem: Mem, body: ReviewBody | None = None) -> dict[str, Any]:
    body = body or ReviewBody()
    return mem.accept_review(review_id, note=body.note, at=body.at, by=_by(who)).to_dict()


@router.post("/reviews/{review_id}/reject", responses=_DECIDE,
             summary="Reject: the current value stays, the held one goes to the trash (409 once decided)")
def reject_review(review_id: str, who: Caller, mem: Mem, body: ReviewBody | None = None) -> dict[str, Any]:
    body = body or ReviewBody()
    return mem.reject_review(review_id, note=body.note, at=body.at, by=_by(who)).to_dict()


@router.post("/search", summary="The most relevant memories, best first")
def search(body: SearchBody, mem: Mem) -> dict[str, Any]:
    hits = mem.search(**body.model_dump())
    return {"hits": [{"record": h.record.to_dict(), "score": h.score} for h in hits]}


@router.post("/context", summary="What an agent should know to answer a query, under a token budget")
def context(body: ContextBody, mem: Mem) -> dict[str, Any]:
    return mem.context(**body.model_dump()).to_dict()


@router.post("/timeline", summary="The history of a fact's slot, oldest first")
def timeline(body: TimelineBody, mem: Mem) -> dict[str, Any]:
    return {"timeline": mem.timeline(body.user_id, body.slot, at=body.at)}


@router.get("/stats", summary="Counts by tier and kind for your tenant (or one user)")
def stats(mem: Mem, user_id: UserQuery = None) -> dict[str, Any]:
    return mem.stats(user_id)


@router.get("/export", summary="Every record of your tenant (or one user), oldest first")
def export(mem: Mem, user_id: UserQuery = None) -> dict[str, Any]:
    return {"records": list(mem.export(user_id))}


@router.get("/forgotten", summary="What was forgotten in a period, and why")
def forgotten(mem: Mem, since: AtQuery = None, until: AtQuery = None) -> dict[str, Any]:
    return {"forgotten": mem.forgotten(since, until)}


@router.get("/events", summary="The change feed: what happened to records after a cursor, without text")
def events(
    mem: Mem,
    since: Annotated[int, Query(ge=0, description="The `next` of the previous page (0: from the start).")] = 0,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many events.")] = 100,
    types: Annotated[str | None, Query(description="Comma list of event types (default: every change).")] = None,
) -> dict[str, Any]:
    return mem.events(since, limit, [t.strip() for t in types.split(",")] if types is not None else None)


@router.post("/sweep", summary="Score every record and move each to the tier it earns (admin)")
def sweep(who: Admin, mem: Mem, body: SweepBody | None = None) -> dict[str, Any]:
    body = body or SweepBody()
    return mem.sweep(**body.model_dump()).to_dict()


@router.post("/users/{user_id}/purge", summary="Erase every record of a user (admin)")
def purge_user(user_id: str, who: Admin, mem: Mem, body: AtBody | None = None) -> dict[str, Any]:
    return {"purged": mem.purge_user(user_id, at=_at(body))}
