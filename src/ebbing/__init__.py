"""Ebbing: long-term memory for AI agents that forgets the way people do."""

from ebbing.errors import Conflict, EbbingError, InvalidInput, NotFound, StoreError
from ebbing.memory import ImportReport, Memory
from ebbing.model import AddResult, Event, Hit, Kind, MemoryRecord, Priority, Scope, Tier
from ebbing.recall.search import SearchConfig

__all__ = [
    "AddResult",
    "Conflict",
    "EbbingError",
    "Event",
    "Hit",
    "ImportReport",
    "InvalidInput",
    "Kind",
    "Memory",
    "MemoryRecord",
    "NotFound",
    "Priority",
    "Scope",
    "SearchConfig",
    "StoreError",
    "Tier",
]
