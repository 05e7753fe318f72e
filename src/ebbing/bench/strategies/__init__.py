"""Forgetting strategies for the agent benchmark (`ebbing bench`), each a configuration of the engine."""

from __future__ import annotations

from pathlib import Path

from ebbing.bench.strategies.base import CachedEmbedder, CachedTokens, EngineStrategy, Strategy
from ebbing.bench.strategies.consolidation import Consolidation
from ebbing.bench.strategies.default import Default
from ebbing.bench.strategies.ebbinghaus import Ebbinghaus
from ebbing.bench.strategies.fifo import Fifo
from ebbing.bench.strategies.hybrid import Hybrid
from ebbing.bench.strategies.importance import Importance
from ebbing.embed.base import Embedder

STRATEGIES: dict[str, type[EngineStrategy]] = {
    cls.name: cls for cls in (Fifo, Ebbinghaus, Importance, Consolidation, Hybrid, Default)
}
NAMES = tuple(STRATEGIES)


def make(name: str, workdir: Path, embedder: Embedder | None = None, tokens: CachedTokens | None = None) -> Strategy:
    """A fresh strategy `name` keeping its store in `workdir`; strategies of one process may share an embedder
    and a token counter (`CachedEmbedder`, `CachedTokens`) so that each text is embedded and counted once."""
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(NAMES)}")
    return STRATEGIES[name](workdir, embedder, tokens)


__all__ = ["NAMES", "STRATEGIES", "CachedEmbedder", "CachedTokens", "EngineStrategy", "Strategy", "make"]
