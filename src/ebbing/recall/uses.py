"""Use counting: what a search or a context hands to the caller counts as used (at most once a day per record),
which is what lets stability grow with real recall; a used record rises to the tier it now earns, and an
archived one found by a good cue comes back from the archive."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from ebbing.model import Hit, MemoryRecord, Tier, when
from ebbing.recall.cold import ColdIndex
from ebbing.store.base import AccessLog, ColdReads

log = logging.getLogger("ebbing")

# Lifts records to the tier their retention now earns; returns the new tier of each record it moved.
Lift = Callable[[Sequence[MemoryRecord], float], dict[str, Tier]]


class UseStore(AccessLog, ColdReads, Protocol):
    """What counting uses writes (the access log) and reads (whether a revived record left the archive)."""


class Uses:
    def __init__(self, store: UseStore, tenant: str, lift: Lift, cold: ColdIndex, window: float, actor: str) -> None:
        self.store, self.tenant, self.lift, self.cold = store, tenant, lift, cold
        self.window, self.actor = window, actor
        self._warned_read_only = False

    @property
    def read_only(self) -> bool:
        return bool(getattr(self.store, "read_only", False))

    def count(self, hits: list[Hit], now: float) -> list[Hit]:
        """Count returned records as used (once a day each) and lift them to the tier they now earn."""
        if self.read_only:
            if not self._warned_read_only:
                self._warned_read_only = True
                log.warning("the store is read-only: this recall is not counted as a use of what it found")
            return hits
        live_ids = [h.record.id for h in hits if h.record.tier is not Tier.COLD]
        counted = self.store.record_access(self.tenant, live_ids, now, self.window, self.actor)
        hits = [_touched(h, now) if h.record.id in counted else h for h in hits]
        recalled = [h.record for h in hits if h.record.id in counted or h.record.tier is Tier.COLD]
        lifted = self.lift(recalled, now)
        revived = [h.record.id for h in hits if h.record.tier is Tier.COLD and h.record.id in lifted]
        if revived:  # back in the store now, so their recall counts like any other
            for user in {h.record.user_id for h in hits if h.record.id in revived}:
                self.cold.left((self.tenant, user), revived, self.store.cold_version(self.tenant, user))
            counted |= self.store.record_access(self.tenant, revived, now, self.window, self.actor)
            hits = [_touched(h, now) if h.record.id in revived else h for h in hits]
        return [Hit(dataclasses.replace(h.record, tier=lifted[h.record.id]), h.score, h.parts)
                if h.record.id in lifted else h for h in hits]


def _touched(hit: Hit, now: float) -> Hit:
    record = dataclasses.replace(hit.record, access_count=hit.record.access_count + 1, last_accessed_at=when(now))
    return Hit(record, hit.score, hit.parts)
