"""Framework adapters, each a thin layer over `Memory`, each importing its framework only when used:

- `EbbingStore` (`ebbing.adapters.langgraph`): a LangGraph `BaseStore`, needs `langgraph`;
- `EbbingRetriever`, `EbbingChatMessageHistory` (`ebbing.adapters.langchain`): need `langchain-core`.

Both come with `pip install 'ebbing[langchain]'`; without it, importing either says so in one line.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from ebbing.extras import require

# Importing an adapter module runs this package first: a missing framework is named here, with its install
# command, before the module's own imports would fail.
require("langchain", "the LangChain and LangGraph adapters")

_HOMES = {"EbbingStore": "langgraph", "EbbingRetriever": "langchain", "EbbingChatMessageHistory": "langchain"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """`from ebbing.adapters import EbbingStore` imports the adapter's module (and its framework) on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"ebbing.adapters.{home}"), name)
