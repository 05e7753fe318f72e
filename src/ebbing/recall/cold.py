"""Cold-tier fallback without rereading the archive: parsed archive files kept in memory.

An archive file never changes once written (a change writes a new file under a new name and removes the
old one), so a file's parsed records and their keyword terms can be kept by name for as long as the file
is listed. Per search, only the flags that can change while a record is cold (pinned, held, priority) come
from the store's archive index; the file is read once. The cache holds at most `capacity` records, drops
the files used least recently, and is emptied by every purge (an erased text must not linger in memory).
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ebbing.model import MemoryRecord
from ebbing.retention.base import retention_row

# id -> (record as archived, its keyword terms, its retention row): what ranking needs, computed once
Parsed = dict[str, tuple[MemoryRecord, list[str], tuple[Any, ...]]]


class ColdFiles:
    def __init__(self, read: Callable[[Path], list[MemoryRecord]], terms: Callable[[str], list[str]],
                 capacity: int = 200_000) -> None:
        self._read, self._terms, self.capacity = read, terms, capacity
        self._files: OrderedDict[str, Parsed] = OrderedDict()
        self._size = 0

    def records(self, file: str, located: Mapping[str, tuple[str, int, dict[str, Any]]],
                ids: list[str]) -> list[tuple[MemoryRecord, int, list[str], tuple[Any, ...]]]:
        """(record, seq, terms, retention row) of `ids` in `file`, with the flags the store's archive index has
        now. The records are shared with the cache: callers copy one before handing it out."""
        parsed = self._parsed(file)
        out = []
        for memory_id in ids:
            if memory_id not in parsed or memory_id not in located:
                continue
            record, words, row = parsed[memory_id]
            _, seq, flags = located[memory_id]
            if (record.pinned, record.held, record.priority) != (flags["pinned"], flags["held"], flags["priority"]):
                record = dataclasses.replace(record, pinned=flags["pinned"], held=flags["held"],
                                             priority=flags["priority"])
                row = retention_row(record)
            out.append((record, seq, words, row))
        return out

    def clear(self) -> None:
        """Forget every parsed file: after a purge, no copy of an erased text may stay in memory."""
        self._files.clear()
        self._size = 0

    def _parsed(self, file: str) -> Parsed:
        if file in self._files:
            self._files.move_to_end(file)
            return self._files[file]
        parsed = {record.id: (record, self._terms(record.text), retention_row(record))
                  for record in self._read(Path(file))}
        self._files[file] = parsed
        self._size += len(parsed)
        while self._size > self.capacity and len(self._files) > 1:
            _, dropped = self._files.popitem(last=False)
            self._size -= len(dropped)
        return parsed
