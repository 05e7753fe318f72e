"""Files Ebbing writes are private to their owner, and a SQLite file is used only if Ebbing made it.

Memories are personal: the store, its archive, exports and key files are created 0600 in folders created
0700, whatever the umask (022 would make them world-readable). Existing folders are left as they are: the
user chose them.

A store file carries `PRAGMA application_id = 0x45626267` ("Ebbg"). `claim` reads a file before anything
writes to it, and refuses one that is not an Ebbing store, so `ebbing --db other.db stats` on somebody
else's database changes nothing (no tables, no WAL switch).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from ebbing.errors import StoreError

APPLICATION_ID = 0x45626267
FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folder(path: Path) -> None:
    """Create `path` and any missing parents as 0700 folders; existing ones are not touched."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # created meanwhile by another process: theirs to keep
            folder.mkdir(mode=FOLDER_MODE)
            os.chmod(folder, FOLDER_MODE)  # mkdir's mode is masked by the umask


def private_file(path: Path) -> None:
    """Create `path` empty with mode 0600 if it does not exist (SQLite gives its -wal and -shm files the
    database file's mode, so they follow)."""
    private_folder(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)
    os.chmod(path, FILE_MODE)


def make_private(path: Path) -> None:
    """Set 0600 on a file another library created (pyarrow's Parquet files, say)."""
    os.chmod(path, FILE_MODE)


def writable(path: Path) -> bool:
    """Can this process write the store at `path`? SQLite in WAL mode also writes beside the file."""
    if path.exists():
        return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    existing = next((p for p in path.parents if p.exists()), None)
    return existing is not None and os.access(existing, os.W_OK)


def claim(path: Path) -> bool:
    """Check, without writing, that `path` is an Ebbing store or may become one. Returns True when the file
    still needs Ebbing's mark (new, empty, or made by a version before the mark); raises StoreError when the
    file belongs to something else."""
    if not path.exists() or path.stat().st_size == 0:
        return True
    conn = _read(path)
    try:
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if application_id == APPLICATION_ID:
            return False
        if application_id != 0:
            raise StoreError(f"{path} belongs to another application (application_id {application_id:#x}); "
                             "Ebbing opens only its own stores, and nothing was changed")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return True  # an empty database: nothing of anybody's to change
        if {"migrations", "memories", "meta"} <= tables and conn.execute(
                "SELECT 1 FROM migrations WHERE name = '0001_initial'").fetchone():
            return True  # a store made before the mark existed
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is not an Ebbing store ({exc}); nothing was changed") from None
    finally:
        conn.close()
    raise StoreError(f"{path} is not an Ebbing store (a SQLite database Ebbing did not create); "
                     "nothing was changed")


def _read(path: Path) -> sqlite3.Connection:
    """A connection that cannot write. A WAL file whose -shm is missing in a folder we may not write cannot be
    opened that way; nobody can be writing it then, so it is read as immutable."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        conn.execute("PRAGMA application_id").fetchone()
        return conn
    except sqlite3.OperationalError:
        pass
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is not an Ebbing store ({exc}); nothing was changed") from None
    try:
        return sqlite3.connect(uri + "&immutable=1", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None
