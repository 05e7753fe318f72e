"""Regular expressions compiled the first time they are used.

The cue tables of the ingest rules are a few hundred patterns, some of them thousands of characters long;
compiling them all takes about a second, which every `ebbing` command paid at import even when it never reads
a text (`stats`, `get`, `export`). A `LazyPattern` keeps the source and compiles on its first match; after
that it costs one attribute look-up per call."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any


class LazyPattern:
    """The part of `re.Pattern[str]` the engine uses, compiled on first use."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]:
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    """`re.compile`, deferred to the first use."""
    return LazyPattern(pattern, flags)
