"""A loaded scope's keyword terms beside its vectors, so a small scope's keyword search needs no FTS query.

SQLite's full-text index is one index over every user: a scoped query reads each term's whole posting list
(every user's records holding the term) and intersects it with the scope's. With 10,000 users that read, not
the user's own few hundred records, is most of a search (5.8 of 9.9 ms at 1,000,000 records, against 1.2 of 4.2
ms at 100,000). A small scope whose vectors are loaded for the vector search gets its records' terms loaded
with them (`ScopeIndex`), kept in step by the same appends and dropped by the same invalidations, and the
records holding a query's terms are found in memory.

The FTS query orders matches by bm25 over the whole table and keeps the best `limit`; this index answers only
when no more than `limit` records match (the FTS query returns all of them then, in an order no caller depends
on) and otherwise says so, and the store asks FTS. So a search finds the same records whether or not the scope
was loaded.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ebbing.store.vectors import ScopeVectors

TERMS_UP_TO = 1_000  # a scope keeps its terms up to this many records; past it the FTS index is as fast


class ScopeIndex(ScopeVectors):
    """`ScopeVectors` with, per row, the record's keyword terms (interned: users share a vocabulary, so each
    row costs a tuple of pointers). Rows appended without their terms, or more than `TERMS_UP_TO` rows, leave
    the vectors usable and the terms unknown (`holding` then answers None)."""

    def __init__(self) -> None:
        super().__init__()
        self._terms: list[tuple[str, ...]] | None = []

    def append(self, keys: Sequence[int] | np.ndarray, vectors: np.ndarray,
               terms: Sequence[Sequence[str]] | None = None) -> None:
        if len(keys) == 0:
            return
        super().append(keys, vectors)
        if (self._terms is not None and terms is not None and len(terms) == len(keys)
                and self.size <= TERMS_UP_TO):
            self._terms.extend(tuple(sys.intern(word) for word in dict.fromkeys(words)) for words in terms)
        else:
            self._terms = None  # terms unknown from here on: keyword searches go to the FTS index

    @property
    def has_terms(self) -> bool:
        return self._terms is not None

    def matching(self, words: Sequence[str], limit: int, max_docs: int) -> list[int] | None:
        """Keys of the records holding any of the words a keyword search would use, or None when more than `limit`
        do (or terms are unknown): then only a ranking can choose among them. A word counts if a record holds it
        and, in a scope of more than `max_docs` records, no more than `max_docs` do (as the FTS side leaves out a
        term that common). One pass over the rows for all the words: a query's words are tried against each
        row's terms by hash, not each word against every row's terms in turn."""
        if self._terms is None:
            return None
        wanted = frozenset(words)
        matched: list[tuple[int, frozenset[str]]] = []
        counts: Counter[str] = Counter()
        for row, held in enumerate(self._terms):
            if not wanted.isdisjoint(held):
                common = wanted.intersection(held)
                matched.append((row, common))
                counts.update(common)
        usable = {w for w, n in counts.items() if self.size <= max_docs or n <= max_docs}
        rows = [row for row, common in matched if not common.isdisjoint(usable)]
        if len(rows) > limit:
            return None
        keys = self._keys[: self.size]
        return [int(keys[row]) for row in rows]
