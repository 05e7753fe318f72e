"""The SQLite store's documented on-disk format and housekeeping."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from ebbing import Memory, Tier
from ebbing.embed.hashing import HashEmbedder
from ebbing.model import Scope
from ebbing.store import scope_index
from ebbing.store.migrations import MIGRATIONS
from ebbing.store.sqlite import SQLiteStore

from .conftest import T0


def test_file_layout_is_as_documented(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder()) as mem:
        record = mem.add("数据库连接池的大小是 50", user_id="u", at=T0).records[0]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert [r[0] for r in conn.execute("SELECT name FROM migrations")] == [name for name, _ in MIGRATIONS]
    seq, created = conn.execute("SELECT seq, created_at FROM memories WHERE id = ?", (record.id,)).fetchone()
    assert created == T0.timestamp()
    blob = conn.execute("SELECT vector FROM vectors WHERE seq = ?", (seq,)).fetchone()[0]
    assert record.embedding is not None
    assert np.array_equal(np.frombuffer(blob, dtype="<f4"), record.embedding)
    indexed = conn.execute("SELECT terms FROM memories_fts WHERE rowid = ?", (seq,)).fetchone()[0]
    assert {"数据库", "连接池", "50"} <= set(indexed.split())
    assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH '\"连接池\"'").fetchone()[0] == 1


def test_reopening_applies_no_migration_twice(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "m.db").close()
    store = SQLiteStore(tmp_path / "m.db")
    store.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    assert conn.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(MIGRATIONS)


def test_the_audit_log_never_holds_text(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder()) as mem:
        record = mem.add("the launch code is tangerine", user_id="u", at=T0).records[0]
        mem.update(record.id, "the launch code is grapefruit", at=T0)
        mem.search("launch code", user_id="u", at=T0)
    rows = sqlite3.connect(path).execute("SELECT type, reason, data FROM events").fetchall()
    assert {r[0] for r in rows} == {"add", "update", "access"}
    assert not any("tangerine" in str(r) or "grapefruit" in str(r) for r in rows)


def _keyword(mem: Memory, user: str, term: str) -> list[str]:
    seqs = mem.store.keyword_search(Scope(mem.tenant, user), [term], 10, None)  # type: ignore[attr-defined]
    return [r.text for r in mem.store.fetch(seqs).values()]  # type: ignore[attr-defined]


def test_a_terms_rarity_is_counted_in_the_users_own_records(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        mem.store.max_term_docs = 3  # type: ignore[attr-defined]
        for i in range(6):  # common among bob's records, and so in the store ...
            mem.add(f"kayak trip number {i} with the club", user_id="bob", kind="episode", at=T0)
        mem.add("I sold my old kayak last spring", user_id="alice", kind="fact", at=T0)
        # ... but alice holds it once: her search still matches it, and never reads bob's rows
        assert _keyword(mem, "alice", "kayak") == ["I sold my old kayak last spring"]
        assert _keyword(mem, "bob", "kayak") == []  # too common among bob's own records to tell anything


def test_the_keyword_index_learns_whose_each_row_is_on_migration_and_owner_change(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder()) as mem:
        mem.add("the fjord ferry leaves at nine", user_id="alice", at=T0)
        mem.add("the fjord hotel has no lift", user_id="bob", at=T0)
    # The store as migration 0007 left it: one column of terms, no scope.
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT rowid, terms FROM memories_fts ORDER BY rowid").fetchall()
    conn.executescript("DROP TRIGGER memories_fts_owner; DROP TABLE memories_fts; CREATE VIRTUAL TABLE memories_fts "
                       "USING fts5 (terms, tokenize = 'unicode61 remove_diacritics 0');"
                       "DELETE FROM migrations WHERE name = '0008_scoped_keywords';")
    conn.executemany("INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)", rows)
    conn.commit()
    conn.close()
    with Memory(path, embedder=HashEmbedder()) as mem:
        assert _keyword(mem, "alice", "fjord") == ["the fjord ferry leaves at nine"]
        assert _keyword(mem, "bob", "fjord") == ["the fjord hotel has no lift"]
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET user_id = 'carol' WHERE user_id = 'bob'")
    conn.commit()
    conn.close()
    with Memory(path, embedder=HashEmbedder()) as mem:
        assert _keyword(mem, "bob", "fjord") == []
        assert _keyword(mem, "carol", "fjord") == ["the fjord hotel has no lift"]


def test_a_loaded_scope_follows_moves_without_rereading_its_vectors(tmp_path: Path) -> None:
    """A search loads a scope's vectors once. A record moving between the live tiers leaves them as they are, one
    revived from the archive joins them, and only a move in or out of the trash makes the next search reload."""
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), archive=tmp_path / "archive") as mem:
        texts = ("We ran the charity 10K on May 14th in 52 minutes", "the tent is green and sleeps four",
                 "the car is a red 2019 Volvo")
        first, second, third = (mem.add(text, user_id="u", at=T0).records[0] for text in texts)
        store = mem.store
        assert isinstance(store, SQLiteStore)
        loads: list[Scope] = []
        load = store._load_vectors
        store._load_vectors = lambda scope: loads.append(scope) or load(scope)  # type: ignore[method-assign]
        scope, vector = Scope(mem.tenant, "u"), first.embedding
        assert vector is not None

        def found() -> set[str]:
            return {r.id for r in store.fetch(store.vector_search(scope, vector, 10, None)).values()}

        assert found() == {first.id, second.id, third.id} and len(loads) == 0  # loaded by the adds already
        mem.sweep(at=T0 + timedelta(days=30))  # the episode to the archive (a reload), the facts to warm
        assert [mem.get(r.id).tier for r in (first, second, third)] == [Tier.COLD, Tier.WARM, Tier.WARM]
        assert found() == {second.id, third.id} and len(loads) == 1
        mem.search("the green tent", user_id="u", at=T0 + timedelta(days=31))  # lifts the tent: warm -> hot
        assert mem.get(second.id).tier is Tier.HOT
        hits = mem.search("charity 10K in 52 minutes", user_id="u", at=T0 + timedelta(days=31), include_cold=True)
        assert first.id in [h.record.id for h in hits] and mem.get(first.id).tier is Tier.WARM  # revived
        assert found() == {first.id, second.id, third.id} and len(loads) == 1  # neither move reread the vectors
        mem.forget(third.id, at=T0 + timedelta(days=31))
        assert found() == {first.id, second.id} and len(loads) == 2
        mem.restore(third.id, at=T0 + timedelta(days=31))
        assert found() == {first.id, second.id, third.id} and len(loads) == 3


@pytest.mark.parametrize("max_term_docs", [500, 12], ids=["every-term", "common-terms-left-out"])
def test_a_loaded_scope_finds_what_the_keyword_index_finds(tmp_path: Path, max_term_docs: int) -> None:
    """A small loaded scope answers keyword searches from its own terms (`ScopeIndex`): the same records as the
    FTS query whenever it answers, before and after adds, edits, forgets and restores, and never for a scope
    narrowed by agent or filters."""
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(40)]
    weights = 1.0 / np.arange(1, len(words) + 1)

    def text() -> str:
        return " ".join(rng.choice(words, size=int(rng.integers(2, 6)), p=weights / weights.sum()))

    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), archive=tmp_path / "archive") as mem:
        store = mem.store
        assert isinstance(store, SQLiteStore)
        store.max_term_docs = max_term_docs
        added = [mem.add(text(), user_id=["ann", "bob"][i % 2], kind="fact", at=T0).records[0] for i in range(80)]
        answered = 0

        def check() -> None:
            nonlocal answered
            for user in ("ann", "bob"):
                scope = Scope(mem.tenant, user)
                store.vector_search(scope, np.ones(HashEmbedder().dimensions, dtype=np.float32), 5, None)  # loads
                loaded = store._vectors[(mem.tenant, user)]
                for _ in range(30):
                    query = list(rng.choice(words, size=int(rng.integers(1, 4))))
                    limit = int(rng.choice([8, 50]))
                    held = store._held_in_memory(loaded, scope, query, limit, None)
                    if held is not None:
                        answered += 1
                        assert sorted(held) == sorted(store.keyword_search(scope, query, limit, None)), query
                    assert store._held_in_memory(loaded, Scope(mem.tenant, user, "agent"), query, 8, None) is None
                    assert store._held_in_memory(loaded, scope, query, 8, {"kind": "fact"}) is None

        check()
        mem.add("w0 w39 brand new words", user_id="ann", kind="fact", at=T0)
        mem.update(added[0].id, "w38 w37 replaced", at=T0)
        mem.forget(added[2].id, at=T0)
        check()
        mem.restore(added[2].id, at=T0)
        check()
        assert answered > 60  # most queries were answered from memory, not handed to the FTS index


def test_a_scope_index_keeps_terms_only_while_it_knows_them_all_and_is_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scope_index, "TERMS_UP_TO", 4)
    index = scope_index.ScopeIndex()
    vectors = np.eye(4, dtype=np.float32)
    index.append([10, 11], vectors[:2], [["kayak", "lake"], ["tent"]])
    assert index.matching(["lake", "tent", "moon"], 5, 500) == [10, 11] and index.matching(["moon"], 5, 500) == []
    assert index.matching(["lake", "tent"], 1, 500) is None  # more than the limit: only bm25 can choose
    index.append([12, 13], vectors[2:], [["kayak"], ["kayak", "moon"]])
    assert index.matching(["moon"], 5, 500) == [13] and index.matching(["kayak"], 5, 500) == [10, 12, 13]
    # in a scope larger than max_docs, a word more records hold than that is left out, as FTS leaves it out
    assert index.matching(["kayak", "moon"], 5, 2) == [13] and index.matching(["kayak"], 5, 2) == []
    assert index.matching(["kayak", "tent"], 5, 4) == [10, 11, 12, 13]  # the scope is not larger: all count
    index.append([14], vectors[:1], [["lake"]])  # past TERMS_UP_TO: the FTS index answers from here on
    assert not index.has_terms and index.matching(["lake"], 5, 500) is None and index.size == 5
    unknown = scope_index.ScopeIndex()
    unknown.append([1], vectors[:1], None)
    assert not unknown.has_terms and unknown.matching(["lake"], 5, 500) is None
