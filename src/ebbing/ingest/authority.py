"""Source authority: who said a record decides whether its newer value may replace an older one.

Every record has a source ("user", "tool", "agent", "import", or a name the deployment configures) and the
sources have an order, highest authority first. A newer value replaces an older one only when its source ranks
at least as high; otherwise the write path stores the newer statement but holds the supersession for a person
to accept or reject (`lifecycle.reviews`). The default order trusts what the user says over a tool's result, a
tool's result over the agent's own inference, and all of them over a bulk import of old data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ebbing import validate
from ebbing.errors import InvalidInput

DEFAULT_SOURCES: tuple[str, ...] = ("user", "tool", "agent", "import")


@dataclass(frozen=True)
class Authority:
    order: tuple[str, ...] = DEFAULT_SOURCES  # highest authority first

    def __post_init__(self) -> None:
        check_sources(self.order)

    def rank(self, source: str) -> int:
        """0 for the highest authority. A source no longer configured ranks with the highest: a value whose
        author is unknown is not replaced without a person's say."""
        return self.order.index(source) if source in self.order else 0

    def yields(self, newer: str, older: str) -> bool:
        """Whether a value from `newer` must wait for review before it replaces one from `older`."""
        return self.rank(newer) > self.rank(older)


def check_sources(order: Sequence[str]) -> tuple[str, ...]:
    """A configured source order: at least one name, each a valid name, none twice."""
    if isinstance(order, str) or not isinstance(order, Sequence) or not order:
        raise InvalidInput("sources", "must be a non-empty list of source names, highest authority first")
    names = tuple(validate.name(name, "sources", required=True) or "" for name in order)
    if len(set(names)) != len(names):
        raise InvalidInput("sources", "must not name a source twice")
    return names
