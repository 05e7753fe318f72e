"""The store's files: only Ebbing's own are opened, a read-only one is read without writing, all are private."""

from __future__ import annotations

import json
import logging
import os
import shlex
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import ReadOnly, StoreError
from ebbing.server.keys import KeyStore
from ebbing.store.files import APPLICATION_ID

EBBING = str(Path(sys.executable).with_name("ebbing"))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _memory(path: Path, **options: object) -> Memory:
    return Memory(path, embedder=HashEmbedder(), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("schema", [
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)",
    # Looks like a store at a glance: the table names Ebbing uses, but Ebbing did not make it.
    "CREATE TABLE memories (id TEXT, body TEXT); CREATE TABLE migrations (name TEXT)",
])
def test_a_foreign_sqlite_file_is_refused_and_left_as_it_was(tmp_path: Path, schema: str) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.executescript(schema)
    conn.close()
    before = _snapshot(tmp_path)

    with pytest.raises(StoreError, match="not an Ebbing store"):
        _memory(other)
    result = subprocess.run([EBBING, "--db", str(other), "stats"], capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "not an Ebbing store" in result.stderr

    assert _snapshot(tmp_path) == before  # same bytes, no -wal/-shm beside it, still in rollback mode


def test_other_files_and_other_applications_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("these are my notes, not a database\n")
    with pytest.raises(StoreError, match="not an Ebbing store"):
        _memory(text)
    assert text.read_text() == "these are my notes, not a database\n"

    marked = tmp_path / "app.db"
    with sqlite3.connect(marked) as conn:
        conn.execute("PRAGMA application_id = 1234")
    conn.close()
    with pytest.raises(StoreError, match="another application"):
        _memory(marked)


def test_a_new_store_is_marked_and_a_store_made_before_the_mark_is_adopted(tmp_path: Path) -> None:
    path = tmp_path / "ebbing.db"
    mem = _memory(path)
    mem.add("The deploy window is Tuesday 14:00", user_id="u", at="2026-01-01T00:00:00Z")
    mem.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        conn.execute("PRAGMA application_id = 0")  # as a store from before the mark
    conn.close()
    mem = _memory(path)
    assert [h.record.text for h in mem.search("deploy window", user_id="u", at="2026-01-02T00:00:00Z")]
    mem.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


def test_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        home = tmp_path / "fresh" / "store"
        mem = Memory(home / "ebbing.db", archive=home / "archive")  # the CLI's embedder, for its export
        at = "2026-01-01T00:00:00Z"
        record = mem.add("Temporary note: buy stamps", user_id="u", kind="temporary", at=at).records[0]
        mem.sweep(at="2026-03-01T00:00:00Z")  # ages it into the cold archive (Parquet)
        mem.close()
        KeyStore(home / "ebbing.db.keys.db").close()  # the server's key and session hashes
        export = tmp_path / "export.jsonl"
        subprocess.run([EBBING, "--db", str(home / "ebbing.db"), "export", "--user", "u", "-o", str(export)],
                       check=True, capture_output=True, timeout=120, env={"PATH": "/usr/bin:/bin",
                                                                          "HOME": str(tmp_path)})
    finally:
        os.umask(old)
    assert record.id
    folders = [p for p in (home, home.parent, *(q for q in home.rglob("*") if q.is_dir()))]
    made = [p for p in home.rglob("*") if p.is_file()] + [export]
    assert any(p.suffix == ".parquet" for p in made) and any(p.name.endswith(".keys.db") for p in made), made
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for file in made:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


def test_a_read_only_store_reads_without_counting_and_refuses_writes(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "ebbing.db"
    mem = _memory(path)
    kept = mem.add("Our staging database runs PostgreSQL 16", user_id="u", at="2026-01-01T00:00:00Z").records[0]
    mem.close()
    before = path.read_bytes()

    reader = _memory(path, read_only=True)
    with caplog.at_level(logging.WARNING, logger="ebbing"):
        hits = reader.search("staging database", user_id="u", at="2026-01-05T00:00:00Z")
    assert [h.record.id for h in hits] == [kept.id]
    assert "read-only" in caplog.text
    assert reader.get(kept.id).access_count == 0
    with pytest.raises(ReadOnly, match="read-only"):
        reader.add("Another fact", user_id="u", at="2026-01-05T00:00:00Z")
    with pytest.raises(ReadOnly):
        reader.forget(kept.id, at="2026-01-05T00:00:00Z")
    reader.close()
    # SQLite may leave an empty -wal/-shm pair beside a WAL file it read; the store itself is unchanged.
    assert path.read_bytes() == before and not any(p.stat().st_size for p in tmp_path.glob("*.db-wal"))


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX file permissions")
def test_a_store_the_user_cannot_write_is_opened_read_only(tmp_path: Path) -> None:
    # Root writes any file whatever its mode, so as root the folder is bind-mounted read-only in a mount
    # namespace of the command's own; as another user the folder and file lose their write permission.
    path = tmp_path / "store" / "ebbing.db"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run([EBBING, "--db", str(path), "add", "The backup runs at 02:00 every night", "--user", "u"],
                   check=True, capture_output=True, timeout=120, env=env)
    before = path.read_bytes()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [EBBING, "--db", str(path), *args]
        if os.geteuid() == 0:
            folder = shlex.quote(str(path.parent))
            command = ["unshare", "-m", "sh", "-c",
                       f"mount --bind -o ro {folder} {folder} && exec {shlex.join(command)}"]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)

    if os.geteuid() != 0:
        os.chmod(path, 0o400)
        os.chmod(path.parent, 0o500)
    try:
        found = run("search", "backup", "--user", "u", "--json")
        added = run("add", "more", "--user", "u")
    finally:
        os.chmod(path.parent, 0o700)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["record"]["text"] == "The backup runs at 02:00 every night"
    assert "read-only" in found.stderr and "Traceback" not in found.stderr
    assert added.returncode == 4 and added.stderr.strip().splitlines() == [
        f"error: {path} is read-only: nothing was changed"], added.stderr
    assert path.read_bytes() == before
