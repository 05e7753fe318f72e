"""Which store a location names: a `postgresql://` (or `postgres://`) URL is PostgreSQL, anything else a
SQLite file. Kept apart so choosing never imports the PostgreSQL driver."""

from __future__ import annotations


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))
