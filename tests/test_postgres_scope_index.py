"""PostgreSQL vectors per scope: a small scope is scanned exactly (every result it asks for, the true nearest
first), a large one gets an HNSW index of its own once it crosses `index_from`, built concurrently and matched by
the planner; filtered searches stay exact; new records reach the index; a purge that empties a scope drops its
index, whose predicate names the user. There is no index over every scope, so an insert pays no graph insertion
for the small scopes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import psycopg
import pytest

from ebbing.embed.base import normalise
from ebbing.model import Kind, MemoryRecord, Priority, Scope, content_hash, new_id
from ebbing.store.postgres import PostgresStore
from ebbing.store.postgres_scopes import search_width
from ebbing.store.postgres_search import scope_index_name, vector_sql
from ebbing.text.terms import terms

from .conftest import T0

DIM = 16
BIG, SMALL, ODD = "big", "small", "o'dd %s jim.m. user"  # a quote, a placeholder, the table alias


def _records(user: str, vectors: np.ndarray, agent: str = "a1") -> list[MemoryRecord]:
    at = datetime.fromtimestamp(T0.timestamp(), UTC)
    return [MemoryRecord(id=new_id(T0.timestamp()), text=f"{user} record {i}", kind=Kind.FACT, importance=0.5,
                         priority=Priority.P1, created_at=at, updated_at=at, user_id=user,
                         agent_id=agent if i % 2 else "a2", content_hash=content_hash(f"{user} record {i}"),
                         embedding=v) for i, v in enumerate(vectors)]


def _clustered(rng: np.random.Generator, count: int) -> np.ndarray:
    """Vectors in 40 clusters, as real embeddings group by topic."""
    centres = normalise(rng.standard_normal((40, DIM)).astype(np.float32))
    return normalise(centres[rng.integers(40, size=count)] + 0.35 * rng.standard_normal((count, DIM)).astype(
        np.float32))


def _index_ready(url: str, user: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)",
                           (scope_index_name("default", user),)).fetchone()
    return row is not None and bool(row[0])


@pytest.fixture
def filled(pg_url: str) -> Iterator[tuple[PostgresStore, dict[str, list[MemoryRecord]]]]:
    store = PostgresStore(pg_url, dimensions=DIM, index_from=500)
    rng = np.random.default_rng(11)
    by_user = {BIG: _records(BIG, _clustered(rng, 1_200)), SMALL: _records(SMALL, _clustered(rng, 40)),
               ODD: _records(ODD, _clustered(rng, 600))}
    for records in by_user.values():
        store.insert(records, [terms(r.text) for r in records], [])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE memories")
    yield store, by_user
    store.close()


def _exact(records: list[MemoryRecord], vector: np.ndarray, limit: int) -> list[str]:
    matrix = np.stack([np.asarray(r.embedding) for r in records])
    return [records[i].id for i in np.argsort(-(matrix @ vector), kind="stable")[:limit]]


def _ids(store: PostgresStore, keys: list[int]) -> list[str]:
    found = store.fetch(keys)
    return [found[k].id for k in keys]


def test_there_is_no_vector_index_over_every_scope(filled: tuple[PostgresStore, dict], pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'memories' "
                            "AND indexdef LIKE '%hnsw%'").fetchall()
    assert rows == []  # nothing is built until a large scope is searched


def test_a_small_scope_gets_every_result_and_the_true_nearest_first(filled: tuple[PostgresStore, dict],
                                                                    pg_url: str) -> None:
    store, by_user = filled
    rng = np.random.default_rng(3)
    for vector in normalise(rng.standard_normal((10, DIM)).astype(np.float32)):
        keys = store.vector_search(Scope("default", SMALL), vector, 10, None)
        assert _ids(store, keys) == _exact(by_user[SMALL], vector, 10)
    assert not _index_ready(pg_url, SMALL)


@pytest.mark.parametrize("user", [BIG, ODD])
def test_a_large_scope_gets_its_own_index_and_finds_the_neighbours(filled: tuple[PostgresStore, dict],
                                                                   pg_url: str, user: str) -> None:
    store, by_user = filled
    scope = Scope("default", user)
    records = by_user[user]
    rng = np.random.default_rng(4)
    picks = rng.choice(len(records), size=30, replace=False)
    store.vector_search(scope, np.asarray(records[0].embedding), 10, None)  # the first search builds it
    assert _index_ready(pg_url, user)
    query, params = vector_sql(scope, np.asarray(records[0].embedding), 10, None, indexed=True)
    plan = "\n".join(row[0] for row in store._rows("EXPLAIN " + query, params))  # as the store writes it
    assert scope_index_name("default", user) in plan
    overlap = []
    for pick in picks:
        vector = normalise((np.asarray(records[pick].embedding) + 0.05 * rng.standard_normal(DIM)).astype(
            np.float32)[None, :])[0]
        found = _ids(store, store.vector_search(scope, vector, 10, None))
        assert len(found) == 10 and found[0] == records[pick].id
        overlap.append(len(set(found) & set(_exact(records, vector, 10))) / 10)
        together = store.search_candidates(scope, [], vector, 10, None)  # the one statement takes the index too
        assert {c.key for c in together} == set(store.vector_search(scope, vector, 10, None))
    assert np.mean(overlap) >= 0.9


def test_filtered_searches_of_an_indexed_scope_stay_exact(filled: tuple[PostgresStore, dict]) -> None:
    store, by_user = filled
    records = by_user[BIG]
    store.vector_search(Scope("default", BIG), np.asarray(records[0].embedding), 10, None)
    rng = np.random.default_rng(5)
    agent_records = [r for r in records if r.agent_id == "a1"]
    for vector in normalise(rng.standard_normal((8, DIM)).astype(np.float32)):
        keys = store.vector_search(Scope("default", BIG, agent_id="a1"), vector, 10, None)
        assert _ids(store, keys) == _exact(agent_records, vector, 10)


def test_records_added_after_the_index_is_built_are_found(filled: tuple[PostgresStore, dict]) -> None:
    store, by_user = filled
    scope = Scope("default", BIG)
    store.vector_search(scope, np.asarray(by_user[BIG][0].embedding), 10, None)
    fresh = _records(BIG, normalise(np.random.default_rng(9).standard_normal((20, DIM)).astype(np.float32)))
    store.insert(fresh, [terms(r.text) for r in fresh], [])
    for record in fresh:
        assert _ids(store, store.vector_search(scope, np.asarray(record.embedding), 1, None)) == [record.id]


def test_a_purge_that_empties_a_scope_drops_its_index(filled: tuple[PostgresStore, dict], pg_url: str) -> None:
    store, by_user = filled
    store.vector_search(Scope("default", ODD), np.asarray(by_user[ODD][0].embedding), 10, None)
    assert _index_ready(pg_url, ODD)
    ids = [r.id for r in by_user[ODD]]
    store.purge("default", ids[:300], [])
    assert _index_ready(pg_url, ODD)  # records are left: the index stays
    store.purge("default", ids[300:], [])
    assert not _index_ready(pg_url, ODD)
    with psycopg.connect(pg_url) as conn:  # nothing in the catalogue names the user any more
        assert conn.execute("SELECT count(*) FROM pg_indexes WHERE indexdef LIKE %s", ("%o''dd%",)).fetchone() == (0,)
    # and a new record for that user starts a small scope again, scanned exactly
    again = _records(ODD, normalise(np.random.default_rng(2).standard_normal((5, DIM)).astype(np.float32)))
    store.insert(again, [terms(r.text) for r in again], [])
    vector = np.asarray(again[3].embedding)
    assert _ids(store, store.vector_search(Scope("default", ODD), vector, 5, None)) == _exact(again, vector, 5)


def test_a_build_held_up_by_an_open_transaction_gives_way_and_is_made_later(
        filled: tuple[PostgresStore, dict], pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store, by_user = filled
    monkeypatch.setattr("ebbing.store.postgres_scopes.INDEX_WAIT_MS", 300)
    monkeypatch.setattr("ebbing.store.postgres_scopes.RECHECK_EVERY", 1)
    records = by_user[BIG]
    vector = np.asarray(records[7].embedding)
    with psycopg.connect(pg_url) as other:  # a transaction left open elsewhere, which the build must wait for
        other.execute("UPDATE memories SET importance = importance WHERE id = %s", (records[0].id,))
        keys = store.vector_search(Scope("default", BIG), vector, 10, None)
        assert _ids(store, keys) == _exact(records, vector, 10)  # answered by the exact scan, not held up
        assert not _index_ready(pg_url, BIG)
    keys = store.vector_search(Scope("default", BIG), vector, 10, None)  # the next check builds it
    assert _index_ready(pg_url, BIG)
    assert _ids(store, keys)[0] == records[7].id


def test_the_search_width_grows_with_the_scope() -> None:
    assert [search_width(n, 100) for n in (1_000, 20_000, 50_000, 100_000, 300_000, 10**7)] == \
        [100, 100, 100, 200, 600, 1_000]  # pgvector's largest hnsw.ef_search is 1,000


def test_a_scope_wider_than_the_base_searches_its_graph_that_wide_and_only_it(pg_url: str) -> None:
    store = PostgresStore(pg_url, dimensions=DIM, index_from=500, ef_search=1)  # base width 1: any scope exceeds it
    try:
        rng = np.random.default_rng(12)
        records = _records(BIG, _clustered(rng, 1_200))
        store.insert(records, [terms(r.text) for r in records], [])
        scope = Scope("default", BIG)
        store.vector_search(scope, np.asarray(records[0].embedding), 10, None)  # builds the index
        store.scopes.searches.clear()  # the next search reads the built index's size
        for pick in rng.choice(len(records), size=10, replace=False):
            vector = np.asarray(records[pick].embedding)
            assert _ids(store, store.vector_search(scope, vector, 10, None))[0] == records[pick].id
            assert store.search_candidates(scope, [], vector, 10, None)
        assert store.scopes.widths[("default", BIG)] == 2  # 1,200 records over 500 a step
        assert store._rows("SHOW hnsw.ef_search")[0][0] == "1"  # set for the search's own transaction only
    finally:
        store.close()
