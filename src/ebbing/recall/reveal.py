"""Revealing a record's secrets: the placeholders the write path left in its text replaced by the values it
sealed, decrypted with the store's key. Every reveal is audited (the event says how many, never which)."""

from __future__ import annotations

from typing import Protocol

from ebbing.errors import Conflict
from ebbing.model import Event, MemoryRecord, when
from ebbing.store.base import Secrets, Writes


class Decrypts(Protocol):
    def decrypt(self, ciphertext: bytes) -> str: ...


class RevealStore(Secrets, Writes, Protocol):
    """The sealed values, and the audit log a reveal writes to."""


def reveal(store: RevealStore, record: MemoryRecord, box: Decrypts | None, now: float, actor: str) -> str:
    sealed = store.sealed(record.tenant, record.id)
    if not sealed:
        if "[secret:" in record.text:
            raise Conflict(f"{record.id} held secrets, but no key was configured when it was stored, so "
                           "their values were never kept")
        return record.text
    if box is None:
        raise Conflict("no secret key configured: set EBBING_SECRET_KEY (or Memory(secret_key=...))")
    text = record.text
    for secret in sealed:
        text = text.replace(secret.placeholder, box.decrypt(secret.ciphertext))
    store.add_events(record.tenant, [Event(record.id, "reveal", when(now), actor, "secrets decrypted",
                                           {"count": len(sealed)})])
    return text
