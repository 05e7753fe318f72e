"""Which store a location names: a `postgresql://` (or `postgres://`) URL is PostgreSQL, anything else a
SQLite file. Kept apart so choosing never imports the PostgreSQL driver unless it is asked for."""

from __future__ import annotations

from pathlib import Path

from ebbing.config import default_db
from ebbing.extras import require
from ebbing.store.base import FullStore


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_store(location: str | Path | None, dimensions: int, *, read_only: bool = False) -> tuple[FullStore, Path]:
    """The store at `location` (default `$EBBING_HOME/ebbing.db`) and where its archive goes when nobody says:
    beside the SQLite file, or under `$EBBING_HOME` for PostgreSQL."""
    if is_postgres_url(location):
        require("postgres", "a postgresql:// store")
        from ebbing.store.postgres import PostgresStore

        return PostgresStore(str(location), dimensions=dimensions), default_db().parent / "archive"
    from ebbing.store.sqlite import SQLiteStore

    db = Path(location) if location is not None else default_db()
    return SQLiteStore(db, read_only=read_only), db.parent / "archive"
