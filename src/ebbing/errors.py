"""One error tree for the whole library; surfaces translate it at their edge.

    EbbingError
    ├── InvalidInput   a field broke a rule; nothing was changed
    ├── NotFound       no record (or no longer one) with that id
    ├── Conflict       the request contradicts the stored state
    ├── StoreError     the store could not do what was asked (`transient`: trying again shortly may work)
    │   └── ReadOnly   a write to a store opened read-only
    └── MissingExtra   a feature whose optional dependencies are not installed (the message says how)
"""

from __future__ import annotations


class EbbingError(Exception):
    """Base of every error Ebbing raises on purpose."""


class InvalidInput(EbbingError, ValueError):
    """A field broke a rule. `field` names it and `rule` says what was expected."""

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")


class NotFound(EbbingError, LookupError):
    def __init__(self, what: str, ident: str) -> None:
        self.field = what
        self.ident = ident
        super().__init__(f"{what}: no record with id {ident!r}")


class Conflict(EbbingError):
    """The request contradicts the stored state (for example another embedder's vectors)."""


class StoreError(EbbingError):
    """The store failed; the message says how, in one line. `transient` marks a failure that may pass by itself
    (a lock held by another process, a lost connection), so a caller may try again shortly."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        self.transient = transient
        super().__init__(message)


class ReadOnly(StoreError):
    """The store was opened read-only (the file is not writable, or `read_only=True` was asked): reads work,
    writes fail with this and change nothing."""


class MissingExtra(EbbingError, ImportError):
    """A feature needs an optional part of Ebbing that is not installed. `extra` names it (`server`, `mcp`,
    `postgres`, `langchain`, `plots`, `fast`) and the message gives the exact command that installs it."""

    def __init__(self, extra: str, feature: str) -> None:
        self.extra = extra
        super().__init__(f"{feature} needs the optional dependencies of ebbing[{extra}]: "
                         f"pip install 'ebbing[{extra}]'")

