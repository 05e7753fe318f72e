"""The review queue: newer values that a source's authority held back (`ingest.authority`), for a person to decide.

The write path stores such a statement as a record of its own, ranked like a retired value meanwhile (it never
outranks the value it challenges), and keeps what superseding would have written beside it. Accepting writes
that now: the old value closes at the time the newer one was said, and the timeline shows the change. Rejecting
sends the statement to the trash (restorable until purged). Both are audited with who decided and why.
"""

from __future__ import annotations

from typing import Protocol

from ebbing.errors import Conflict, InvalidInput, NotFound
from ebbing.ingest.pipeline import slot_hash
from ebbing.lifecycle.operations import Lifecycle
from ebbing.model import Event, MemoryRecord, Review, Tier, when
from ebbing.store.base import Facts, ReviewRow, Reviews
from ebbing.store.reviews import STATUSES


class ReviewStore(Reviews, Facts, Protocol):
    """What the queue reads and decides."""


class ReviewQueue:
    def __init__(self, store: ReviewStore, lifecycle: Lifecycle, tenant: str) -> None:
        self.store, self.lifecycle, self.tenant = store, lifecycle, tenant

    def listed(self, user_id: str | None, *, every_user: bool, status: str | None, limit: int) -> list[Review]:
        return [self._shown(row) for row in self._rows(user_id, every_user, status, limit)]

    def count(self, user_id: str | None, *, every_user: bool, status: str | None, limit: int) -> int:
        """How many reviews `list` would show, up to `limit`, without reading the records' texts."""
        return len(self._rows(user_id, every_user, status, limit))

    def _rows(self, user_id: str | None, every_user: bool, status: str | None, limit: int) -> list[ReviewRow]:
        if status is not None and status not in STATUSES:
            raise InvalidInput("status", f"must be one of {', '.join(STATUSES)}")
        return self.store.reviews(self.tenant, status, user_id, every_user=every_user, limit=limit)

    def get(self, review_id: str) -> Review:
        return self._shown(self._pending_or_not(review_id))

    def accept(self, review_id: str, at: float, actor: str, note: str) -> Review:
        """The newer value replaces the older one, as if its source had had the authority when it was said."""
        row = self._pending(review_id)
        proposed = self.lifecycle.require(row.memory_id)
        if proposed.tier is Tier.TRASH:
            raise Conflict(f"review {review_id}: the proposed record {row.memory_id} is in the trash; "
                           "restore it first or reject the review")
        replaced = [f for f in self.store.facts_of(self.tenant, [row.incumbent]) if f.superseded_by]
        if replaced:
            raise Conflict(f"review {review_id}: {row.incumbent} was already replaced by {replaced[-1].superseded_by};"
                           " reject this review or add the value again")
        slot = next((f.slot for f in row.facts), "")
        events = [
            Event(row.incumbent, "supersede", when(at), actor, "a newer value, accepted in review",
                  {"superseded_by": row.memory_id, "review": row.id, "slot": slot_hash(slot)}),
            Event(row.memory_id, "review", when(at), actor, "accepted", {"review": row.id, "status": "accepted"}),
        ]
        if not self.store.decide_review(self.tenant, row.id, "accepted", at, actor, note, events, facts=row.facts,
                                        closings=row.closings):
            raise Conflict(f"review {review_id}: it was decided, or the value it replaces changed, meanwhile")
        return self.get(review_id)

    def reject(self, review_id: str, at: float, actor: str, note: str) -> Review:
        """The older value stays; the newer statement goes to the trash (restorable until purged), unless it is
        under legal hold, which keeps it where it is."""
        row = self._pending(review_id)
        events = [Event(row.memory_id, "review", when(at), actor, "rejected", {"review": row.id,
                                                                              "status": "rejected"})]
        if not self.store.decide_review(self.tenant, row.id, "rejected", at, actor, note, events):
            raise Conflict(f"review {review_id}: it was decided meanwhile")
        proposed = self.lifecycle.find(row.memory_id)
        if proposed is not None and not proposed.held:
            self.lifecycle.forget(row.memory_id, at, "rejected in review", {"review": row.id})
        return self.get(review_id)

    def _pending_or_not(self, review_id: str) -> ReviewRow:
        if not isinstance(review_id, str) or not review_id:
            raise InvalidInput("review_id", "must be a non-empty string")
        row = self.store.get_review(self.tenant, review_id)
        if row is None:
            raise NotFound("review_id", review_id)
        return row

    def _pending(self, review_id: str) -> ReviewRow:
        row = self._pending_or_not(review_id)
        if row.status != "pending":
            raise Conflict(f"review {review_id} was already {row.status}")
        return row

    def _shown(self, row: ReviewRow) -> Review:
        proposed, current = self.lifecycle.find(row.memory_id), self.lifecycle.find(row.incumbent)
        return Review(row.id, row.memory_id, row.incumbent, row.user_id, row.source, row.incumbent_source,
                      when(row.created_at), row.status, _text(proposed), _text(current),
                      when(row.decided_at) if row.decided_at is not None else None, row.decided_by, row.note)


def _text(record: MemoryRecord | None) -> str:
    return record.text if record is not None else ""
