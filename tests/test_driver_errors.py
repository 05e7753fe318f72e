"""SQLite's failures leave the store as a one-line `StoreError`: marked transient when trying again may work
(a lock), shown by the CLI as one line and exit 1, answered by the REST server with 503 (and Retry-After when
transient). PostgreSQL's lost connections are marked transient in tests/test_postgres_faults.py."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import StoreError
from ebbing.memory import Memory
from ebbing.server.app import create_app
from ebbing.store.sqlite import SQLiteStore

from .conftest import T0
from .test_cli import run, run_json
from .test_server import add, assert_error


@contextmanager
def write_lock_held(db: Path) -> Iterator[None]:
    """Another process's write transaction on the store, held until the block ends."""
    with closing(sqlite3.connect(db, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")


def impatient(store: Any) -> None:
    """The store waits 30 s for another process's lock; the tests wait 50 ms."""
    store._conn.execute("PRAGMA busy_timeout = 50")


def damage_records_table(db: Path) -> None:
    """Overwrite the root page of the `memories` table with garbage: the file still opens (its header and
    schema are intact), but reading a record fails with SQLite's "database disk image is malformed"."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the pages are in the main file, not in the WAL
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'memories'").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    with db.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)


def assert_one_line(error: StoreError) -> None:
    assert "\n" not in str(error) and "Traceback" not in str(error)
    assert error.__cause__ is None and error.__suppress_context__  # the driver's exception is not shown


def test_a_locked_store_fails_with_a_transient_store_error_and_works_once_it_is_free(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    memory = Memory(db, embedder=HashEmbedder())
    try:
        kept = memory.add("Alice prefers dark mode", user_id="alice", at=T0).records[0]
        impatient(memory.store)
        with write_lock_held(db):
            with pytest.raises(StoreError) as caught:
                memory.add("Bob prefers light mode", user_id="bob", at=T0)
            assert memory.get(kept.id).text == kept.text  # WAL: reads go on under another process's write
        assert caught.value.transient
        assert str(caught.value) == "the store is locked by another process (database is locked): try again shortly"
        assert_one_line(caught.value)
        memory.add("Bob prefers light mode", user_id="bob", at=T0)  # no transaction was left open
        assert memory.stats()["total"] == 2
    finally:
        memory.close()


def test_a_damaged_file_fails_reads_and_streamed_reads_with_a_lasting_store_error(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    with Memory(db, embedder=HashEmbedder()) as memory:
        kept = memory.add("Alice prefers dark mode", user_id="alice", at=T0).records[0]
    damage_records_table(db)
    store = SQLiteStore(db)  # the header and the schema are fine: it opens
    try:
        with pytest.raises(StoreError, match=r"^the store's file is damaged \(.*malformed\): restore") as caught:
            store.get("default", kept.id)
        assert not caught.value.transient
        assert_one_line(caught.value)
        with pytest.raises(StoreError, match="damaged"):  # a generator raises while it is read
            next(store.scan("default", None))
    finally:
        store.close()


def test_a_broken_schema_rule_is_a_store_error_that_names_a_bug_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    with Memory(db, embedder=HashEmbedder()) as memory:
        record = memory.add("Alice prefers dark mode", user_id="alice", at=T0).records[0]
        with pytest.raises(StoreError, match=r"^the store refused a change .*UNIQUE.*this is a bug") as caught:
            memory.store.insert([record], [["dark", "mode"]], [])  # the same id again
        assert not caught.value.transient
        assert_one_line(caught.value)
        memory.add("Alice walks to work", user_id="alice", at=T0)  # the failed insert was rolled back
        assert memory.stats()["total"] == 2


def test_a_closed_store_says_so_in_one_line(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "mem.db")
    store.close()
    with pytest.raises(StoreError, match=r"could not finish the call .*closed database") as caught:
        store.get("default", "01ZZZZZZZZZZZZZZZZZZZZZZZZ")
    assert not caught.value.transient


@pytest.mark.parametrize("command", ["get", "export"])
def test_the_cli_shows_a_failing_store_in_one_line_and_exits_1(ebbing_home: Path, command: str) -> None:
    added = run_json("add", "Alice prefers dark mode", "--user", "alice", home=ebbing_home)["records"][0]
    damage_records_table(ebbing_home / "ebbing.db")
    done = run(*((command, added["id"]) if command == "get" else (command,)), home=ebbing_home, ok=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "error: the store's file is damaged (database disk image is malformed): restore it from a backup"]


def test_rest_answers_a_locked_store_with_503_and_retry_after(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    with TestClient(create_app(db, embedder=HashEmbedder())) as http:
        add(http, "Alice prefers dark mode")  # opens the tenant's store
        impatient(http.app.state.ebbing.tenants.memory("default").store)  # type: ignore[attr-defined]
        with write_lock_held(db):
            response = http.post("/v1/memories", json={"text": "Alice walks to work", "user_id": "alice"})
        error = assert_error(response, 503, "store_unavailable")
        assert response.headers["Retry-After"] == "1"
        assert error["message"].startswith("the store is locked") and error["field"] is None
        add(http, "Alice walks to work")  # the lock is gone: the same request succeeds


def test_rest_answers_a_damaged_store_with_503_without_retry_after(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    with Memory(db, embedder=HashEmbedder()) as memory:
        kept = memory.add("Alice prefers dark mode", user_id="alice", at=T0).records[0]
    damage_records_table(db)
    with TestClient(create_app(db, embedder=HashEmbedder())) as http:
        response = http.get(f"/v1/memories/{kept.id}")
    error = assert_error(response, 503, "store_unavailable")
    assert "Retry-After" not in response.headers  # waiting will not mend the file
    assert error["message"].startswith("the store's file is damaged")
