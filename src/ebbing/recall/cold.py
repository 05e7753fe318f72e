"""Deep recall without rereading the archive: parsed archive files, and per user an index over them, in memory.

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

import numpy as np

from ebbing.model import MemoryRecord
from ebbing.retention.base import retention_row
from ebbing.store.base import ColdReads
from ebbing.store.vectors import ScopeVectors

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
        parsed = self.parsed(file)
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

    def parsed(self, file: str) -> Parsed:
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

    def archived(self, store: ColdReads, tenant: str, user_id: str | None) -> list[MemoryRecord]:
        """Every archived record of one user, as it is now, from the parsed files: reading a user's whole archive
        costs a Parquet read only for files not parsed yet. Shared with the cache, as `records`: copy one before
        handing it out."""
        out = []
        for file, ids in store.cold_files(tenant, user_id).items():
            out += [record for record, *_ in self.records(file, store.cold(tenant, ids), ids)]
        return out


Located = tuple[MemoryRecord, int, list[str], tuple[Any, ...]]  # record, seq, keyword terms, retention row


@dataclasses.dataclass
class _UserArchive:
    """One user's archived records as rows: where each lives, its vector (int8, `ScopeVectors`) and which rows
    hold each keyword term."""

    version: tuple[int, int]
    ids: list[str]
    files: list[str]
    vectors: ScopeVectors
    postings: dict[str, np.ndarray]
    seqs: np.ndarray
    alive: np.ndarray  # False for rows a recall took out of the archive since the build


class ColdIndex:
    """What a search of the archive needs, kept in memory per user, so a deep recall costs a vector scan and a
    few dictionary look-ups rather than a read of the Parquet files.

    Every change to a user's archive (a sweep archives a batch, a purge or restore rewrites a file, a recall
    takes rows out) alters the store's (count, sum of seq) of the user's archived records, the `version`: a
    search that finds another version rebuilds this user's index from the parsed files (`ColdFiles`, which
    parses only files it has not seen); a recall made here drops its rows in place instead (`left`).
    Nominating works like the live indexes: the `wanted` nearest vectors and the `wanted` rows sharing the
    rarest query terms; the caller scores them with everything else.
    """

    def __init__(self, files: ColdFiles) -> None:
        self.files = files
        self._users: dict[tuple[str, str | None], _UserArchive] = {}

    def left(self, user: tuple[str, str | None], ids: list[str], version: tuple[int, int]) -> None:
        """Records recalled out of `user`'s archive: drop their rows when that explains the store's new `version`
        (nothing else changed meanwhile), else forget the user's index (rebuilt at the next search)."""
        archive = self._users.get(user)
        if archive is None:
            return
        gone = set(ids)
        rows = [i for i, memory_id in enumerate(archive.ids) if memory_id in gone and archive.alive[i]]
        expected = (archive.version[0] - len(rows), archive.version[1] - int(archive.seqs[rows].sum()))
        if expected != version:
            del self._users[user]
            return
        archive.alive[rows] = False
        archive.version = version

    def clear(self) -> None:
        """Forget every index and parsed file (after a purge: no copy of an erased text stays in memory)."""
        self._users.clear()
        self.files.clear()

    def nominate(self, user: tuple[str, str | None], version: tuple[int, int],
                 listing: Callable[[], Mapping[str, list[str]]],
                 locate: Callable[[list[str]], Mapping[str, tuple[str, int, dict[str, Any]]]],
                 vector: np.ndarray, words: list[str], wanted: int,
                 keep: Callable[[MemoryRecord], bool] | None = None) -> list[Located]:
        """Archived records of `user` near `vector` or sharing `words`, at most 2 x `wanted`, with the flags the
        store holds now; `keep` (agent, session, metadata filters) narrows the rows before nominating."""
        archive = self._users.get(user)
        if archive is None or archive.version != version:
            archive = self._users[user] = self._build(version, listing(), locate)
        if not archive.alive.any():  # none archived, or every row recalled since the build
            return []
        allowed = None if archive.alive.all() else np.flatnonzero(archive.alive)
        if keep is not None:
            allowed = np.array([i for i, (file, memory_id) in enumerate(zip(archive.files, archive.ids, strict=True))
                                if archive.alive[i] and (parsed := self.files.parsed(file).get(memory_id))
                                and keep(parsed[0])], dtype=np.int64)
        rows = dict.fromkeys(archive.vectors.nearest(vector, wanted, allowed))
        rows.update(dict.fromkeys(self._keyword_rows(archive, words, wanted, allowed)))
        chosen = [archive.ids[r] for r in rows]
        located = locate(chosen)
        by_file: dict[str, list[str]] = {}
        for r in rows:
            by_file.setdefault(archive.files[r], []).append(archive.ids[r])
        out = [found for file, ids in by_file.items() for found in self.files.records(file, located, ids)]
        order = {memory_id: i for i, memory_id in enumerate(chosen)}
        return sorted(out, key=lambda found: order[found[0].id])

    def _build(self, version: tuple[int, int], listing: Mapping[str, list[str]],
               locate: Callable[[list[str]], Mapping[str, tuple[str, int, dict[str, Any]]]]) -> _UserArchive:
        ids: list[str] = []
        files: list[str] = []
        vectors: list[np.ndarray] = []
        postings: dict[str, list[int]] = {}
        for file, wanted in listing.items():
            parsed = self.files.parsed(file)
            for memory_id in wanted:
                if memory_id not in parsed or parsed[memory_id][0].embedding is None:
                    continue
                record, words, _ = parsed[memory_id]
                for word in set(words):
                    postings.setdefault(word, []).append(len(ids))
                ids.append(memory_id)
                files.append(file)
                vectors.append(np.asarray(record.embedding, dtype=np.float32))
        scoped = ScopeVectors()
        if ids:
            scoped.append(np.arange(len(ids), dtype=np.int64), np.stack(vectors))
        located = locate(ids) if ids else {}
        seqs = np.array([located[i][1] if i in located else 0 for i in ids], dtype=np.int64)
        return _UserArchive(version, ids, files, scoped,
                            {word: np.array(rows, dtype=np.int64) for word, rows in postings.items()}, seqs,
                            np.ones(len(ids), dtype=bool))

    @staticmethod
    def _keyword_rows(archive: _UserArchive, words: list[str], wanted: int, allowed: np.ndarray | None) -> list[int]:
        """Rows holding the query's terms, the rarer a term the more it counts (idf); no term, no row."""
        size = len(archive.ids)
        scores = np.zeros(size)
        for word in set(words):
            rows = archive.postings.get(word)
            if rows is not None:
                scores[rows] += np.log1p(size / len(rows))
        if allowed is not None:
            mask = np.zeros(size, dtype=bool)
            mask[allowed] = True
            scores[~mask] = 0.0
        hits = np.flatnonzero(scores > 0)
        if len(hits) > wanted:
            hits = hits[np.argpartition(-scores[hits], wanted - 1)[:wanted]]
        return [int(r) for r in hits[np.argsort(-scores[hits], kind="stable")]]
