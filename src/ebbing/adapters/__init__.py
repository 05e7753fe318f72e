"""Framework adapters, each a thin layer over `Memory`, each importing its framework only when used:

- `EbbingStore` (`ebbing.adapters.langgraph`): a LangGraph `BaseStore`, needs `langgraph`;
- `EbbingRetriever`, `EbbingChatMessageHistory` (`ebbing.adapters.langchain`): need `langchain-core`.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {"EbbingStore": "langgraph", "EbbingRetriever": "langchain", "EbbingChatMessageHistory": "langchain"}
_PACKAGES = {"langgraph": "langgraph", "langchain": "langchain-core"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """`from ebbing.adapters import EbbingStore` imports the adapter's module (and its framework) on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = import_module(f"ebbing.adapters.{home}")
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(f"{name} needs {_PACKAGES[home]}: pip install {_PACKAGES[home]}") from exc
    return getattr(module, name)
