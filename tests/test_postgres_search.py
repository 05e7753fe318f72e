"""The PostgreSQL search in one statement (`PostgresStore.search_candidates`) finds exactly what its three
separate calls find (`vector_search`, `keyword_search`, then `candidates`), within the same scope, filters and
tiers; its BM25 ranks as the formula says; and a search through `Memory` gives the same hits either way."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from ebbing import InvalidInput, Memory
from ebbing.embed.base import normalise
from ebbing.embed.hashing import HashEmbedder
from ebbing.model import Kind, MemoryRecord, Priority, Scope, Tier, content_hash, new_id, when
from ebbing.store import sqlite as sqlite_store
from ebbing.store.base import FactRow, GathersCandidates
from ebbing.store.postgres import PostgresStore
from ebbing.store.postgres_search import BM25_B, BM25_K1
from ebbing.text.terms import query_terms, terms

from .conftest import T0

DIM = 16
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
         "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"]
USERS = ["ann", "bob", None]


def _records(rng: np.random.Generator, count: int) -> list[MemoryRecord]:
    """Records over three users (one of them no user), two agents, two sessions, varied importance and metadata;
    words drawn so some are common (in most of a user's records) and some rare."""
    weights = 1.0 / np.arange(1, len(WORDS) + 1)
    at = datetime.fromtimestamp(T0.timestamp(), UTC)
    out = []
    for i in range(count):
        picks = rng.choice(len(WORDS), size=int(rng.integers(3, 9)), p=weights / weights.sum())
        text = " ".join(WORDS[p] for p in picks) + f" n{i}"
        out.append(MemoryRecord(
            id=new_id(T0.timestamp()), text=text, kind=Kind.FACT, importance=float(rng.choice([0.2, 0.5, 0.9])),
            priority=Priority.P1, created_at=at, updated_at=at, user_id=USERS[i % 3],
            agent_id=["a1", "a2"][i % 2], session_id=["s1", "s2"][(i // 2) % 2], metadata={"topic": f"t{i % 4}"},
            content_hash=content_hash(text), embedding=normalise(rng.standard_normal(DIM).astype(np.float32))[0]))
    return out


@pytest.fixture
def store(pg_url: str) -> Iterator[tuple[PostgresStore, list[MemoryRecord]]]:
    store = PostgresStore(pg_url, dimensions=DIM, max_term_docs=40)  # low: some common terms are left out
    records = _records(np.random.default_rng(5), 360)
    # A few facts with a newer value (their records are retired, `stale`); a few records in the trash.
    facts = [FactRow(r.id, "slot", "s", "a", "v", None, T0.timestamp(), T0.timestamp() + 1, "other", root=r.id,
                     user_id=r.user_id) for r in records[:12]]
    store.insert(records, [terms(r.text) for r in records], [], facts=facts)
    seqs = {r.id: store.seq_of("default", r.id) for r in records}
    store.demote("default", [(int(seqs[r.id] or 0), r.user_id, Tier.TRASH) for r in records[12:30]], [],
                 T0.timestamp())
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE memories")  # the collection size BM25 reads is the planner's row count
    yield store, records
    store.close()


def _queries(rng: np.random.Generator, records: list[MemoryRecord]) -> list[tuple[Scope, list[str], np.ndarray,
                                                                                     dict[str, Any] | None]]:
    scopes = [Scope("default", user) for user in USERS] + [
        Scope("default", "ann", agent_id="a1"), Scope("default", "bob", session_id="s2"),
        Scope("default", "nobody"), Scope("other-tenant", "ann")]
    filters: list[dict[str, Any] | None] = [None, {"topic": "t1"}, {"importance": {"$gte": 0.5}},
                                            {"topic": {"$in": ["t0", "t3"]}, "pinned": False}]
    out = []
    for i in range(60):
        record = records[int(rng.integers(len(records)))]
        words = query_terms(" ".join(rng.choice(record.text.split(), size=int(rng.integers(1, 4)), replace=False)))
        if i % 10 == 0:
            words = []  # no terms: the vector ranking alone
        assert record.embedding is not None
        vector = normalise(record.embedding + rng.standard_normal(DIM).astype(np.float32) * 0.3)[0]
        out.append((scopes[i % len(scopes)], words, vector, filters[i % len(filters)]))
    return out


def test_one_statement_finds_what_the_three_calls_find(store: tuple[PostgresStore, list[MemoryRecord]]) -> None:
    pg, records = store
    assert isinstance(pg, GathersCandidates)
    by_seq = {pg.seq_of("default", r.id): r for r in records}
    nonempty = 0
    for scope, words, vector, filters in _queries(np.random.default_rng(9), records):
        keys = dict.fromkeys(pg.vector_search(scope, vector, 15, filters))
        keys.update(dict.fromkeys(pg.keyword_search(scope, words, 15, filters)))
        apart = sorted(pg.candidates(list(keys)), key=lambda c: c.key)
        together = pg.search_candidates(scope, words, vector, 15, filters)
        assert [c.key for c in together] == [c.key for c in apart]
        for one, other in zip(together, apart, strict=True):
            assert (one.text, one.terms, one.retention, one.stale) == (other.text, other.terms, other.retention,
                                                                      other.stale)
            assert one.vector.dtype == np.float32 and np.array_equal(one.vector, other.vector)
        for candidate in together:  # never outside the scope, the filters or the live tiers
            record = by_seq[candidate.key]
            assert (record.tenant, record.user_id) == (scope.tenant, scope.user_id)
            assert scope.agent_id in (None, record.agent_id) and scope.session_id in (None, record.session_id)
            assert records.index(record) not in range(12, 30)  # trashed
            assert np.array_equal(candidate.vector, record.embedding)
            if filters and "topic" in filters:
                wanted = filters["topic"]
                assert record.metadata["topic"] in (wanted["$in"] if isinstance(wanted, dict) else [wanted])
        nonempty += bool(together)
    assert nonempty >= 30  # the comparison compared something


def test_stale_flags_come_through_the_one_statement(store: tuple[PostgresStore, list[MemoryRecord]]) -> None:
    pg, records = store
    retired = {pg.seq_of("default", r.id) for r in records[:12]}
    found = [c for user in USERS for r in records[:12] if r.user_id == user and r.embedding is not None
             for c in pg.search_candidates(Scope("default", user), [], r.embedding, 1, None)]
    assert found and all(c.stale == (c.key in retired) for c in found)
    assert any(c.stale for c in found)


def _bm25(records: list[tuple[int, list[str]]], scope_terms: list[list[str]], words: list[str], total: float,
          max_docs: int) -> dict[int, float]:
    """BM25 as documented: document frequency among the user's live records (terms in more than `max_docs` of
    them left out), length normalised by the matching records' mean, summed over the query's terms in order."""
    wanted = list(dict.fromkeys(words))
    df = {w: sum(w in t for t in scope_terms) for w in wanted}
    usable = [w for w in wanted if 0 < df[w] <= max_docs]
    if not usable:
        return {}
    size = max(total, max(df[w] for w in usable), 1.0)
    idf = {w: math.log(1 + (size - df[w] + 0.5) / (df[w] + 0.5)) for w in usable}
    hits = [(seq, t) for seq, t in records if set(t) & set(usable)]
    mean = max(sum(len(t) for _, t in hits) / len(hits), 1.0)
    return {seq: sum(idf[w] * t.count(w) * (BM25_K1 + 1) /
                     (t.count(w) + BM25_K1 * (1 - BM25_B + BM25_B * len(t) / mean)) for w in usable)
            for seq, t in hits}


def test_keyword_ranking_is_bm25(store: tuple[PostgresStore, list[MemoryRecord]], pg_url: str) -> None:
    pg, records = store
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass").fetchone()
    assert row is not None
    total = float(row[0])
    live = [(pg.seq_of("default", r.id), r) for i, r in enumerate(records) if i not in range(12, 30)]
    checked = 0
    for user in USERS:
        own = [(int(seq or 0), terms(r.text)) for seq, r in live if r.user_id == user]
        for query in ["alpha", "alpha bravo golf", "kilo lima mike", "tango sierra alpha", "charlie n7 delta"]:
            words = query_terms(query)
            expected = _bm25(own, [t for _, t in own], words, total, 40)
            found = pg.keyword_search(Scope("default", user), words, 25, None)
            best = sorted(expected, key=lambda seq: (-expected[seq], seq))[:25]
            assert len(found) == len(best)
            scores = [expected[seq] for seq in found]  # best first, up to rounding in the last digits
            assert all(a >= b - 1e-9 for a, b in itertools.pairwise(scores))
            assert {s for s in found if expected[s] > expected[best[-1]] + 1e-9} == \
                   {s for s in best if expected[s] > expected[best[-1]] + 1e-9}
            checked += len(found)
    assert checked > 100


def test_a_bad_filter_fails_the_one_statement_as_it_fails_each_call(
        store: tuple[PostgresStore, list[MemoryRecord]]) -> None:
    pg, records = store
    vector = records[0].embedding
    assert vector is not None
    for bad in ({"topic": {"$regex": "t"}}, {"no such field!": 1}, {"topic": {"$in": "t1"}}):
        with pytest.raises(InvalidInput) as apart:
            pg.vector_search(Scope("default", "ann"), vector, 5, bad)
        with pytest.raises(InvalidInput) as together:
            pg.search_candidates(Scope("default", "ann"), ["alpha"], vector, 5, bad)
        assert str(together.value) == str(apart.value)
    assert pg.search_candidates(Scope("default", "ann"), ["alpha"], vector, 5, None)  # the store still works


class _ThreeCalls:
    """The store without its own gathering of candidates, so ranking takes the three calls."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "search_candidates":
            raise AttributeError(name)
        return getattr(self._store, name)


@pytest.mark.parametrize("parallel_from", [0, 10**9], ids=["side-by-side", "one-after-the-other"])
def test_memory_search_gives_the_same_hits_either_way(location: str | Path, tmp_path: Path, parallel_from: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """On both backends, and on SQLite with a scope's keywords read beside its vector scan or after it."""
    monkeypatch.setattr(sqlite_store, "PARALLEL_FROM", parallel_from)
    rng = np.random.default_rng(3)
    with Memory(location, embedder=HashEmbedder(), archive=tmp_path / "archive") as mem:
        for i in range(120):
            text = " ".join(rng.choice(WORDS, size=int(rng.integers(3, 7)))) + f" note {i}"
            mem.add(text, user_id=["ann", "bob"][i % 2], metadata={"topic": f"t{i % 3}"}, at=T0)
        queries = [("alpha bravo", "ann", None), ("golf hotel india", "bob", None), ("kilo", "ann", {"topic": "t1"}),
                   ("note 7", "bob", {"importance": {"$gte": 0.0}}), ("zulu unknown", "ann", None)]
        one = [mem.search(q, user_id=u, filters=f, at=T0, count_use=False) for q, u, f in queries]
        one = [mem.search(q, user_id=u, filters=f, at=T0, count_use=False) for q, u, f in queries]  # scopes loaded
        mem.ranker.store = _ThreeCalls(mem.store)  # type: ignore[assignment]
        assert not isinstance(mem.ranker.store, GathersCandidates)
        three = [mem.search(q, user_id=u, filters=f, at=T0, count_use=False) for q, u, f in queries]
    assert sum(len(h) for h in one) > 10
    for (_, user, _), a, b in zip(queries, one, three, strict=True):
        assert [(h.record.id, h.score) for h in a] == [(h.record.id, h.score) for h in b]
        assert all(h.record.user_id == user for h in a)


def test_counting_a_use_writes_the_counts_and_their_events_in_one_statement(
        store: tuple[PostgresStore, list[MemoryRecord]]) -> None:
    pg, records = store
    ids = [r.id for r in records[30:35]]
    at = T0.timestamp() + 1234.5678901  # finer than a microsecond: events keep what an `Event` keeps
    assert pg.record_access("default", [*ids, "no-such-id"], at, 86_400.0, "tester") == set(ids)
    assert pg.record_access("default", ids, at + 60, 86_400.0, "tester") == set()  # within the window
    assert pg.record_access("other-tenant", ids, at + 2 * 86_400, 86_400.0, "tester") == set()
    for memory_id in ids:
        stored = pg.get("default", memory_id)
        assert stored is not None and stored.access_count == 1 and stored.last_accessed_at is not None
        (event,) = [e for e in pg.history("default", memory_id) if e.type == "access"]
        assert (event.actor, event.reason, event.data) == ("tester", "returned by search", {"access_count": 1})
        assert event.at == when(at) == stored.last_accessed_at
