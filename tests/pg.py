"""A throwaway PostgreSQL (with pgvector) for the tests: one server per test session, one schema per test.

`pgserver` bundles PostgreSQL 16 with pgvector and starts offline from a folder. Every test gets a fresh
schema, named first in the URL's search_path, so tests stay isolated; creating and dropping a schema costs
milliseconds, where a database per test costs a checkpoint each.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg


class Server:
    def __init__(self, root: Path) -> None:
        import pgserver

        self._server: Any = pgserver.get_server(root, cleanup_mode="stop")
        self._numbers = itertools.count()
        with self._admin() as admin:  # a throwaway server: durability would only cost time
            for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
                admin.execute(f"ALTER SYSTEM SET {setting}")
            admin.execute("SELECT pg_reload_conf()")
            admin.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def uri(self, schema: str | None = None) -> str:
        """The database's URL; with a schema, one whose connections find that schema first."""
        base = str(self._server.get_uri("postgres"))
        if schema is None:
            return base
        joiner = "&" if "?" in base else "?"
        return f"{base}{joiner}options={quote(f'-c search_path={schema},public')}"

    def _admin(self) -> psycopg.Connection[tuple[Any, ...]]:
        return psycopg.connect(self.uri(), autocommit=True)

    def create(self) -> str:
        """A fresh, empty schema; returns its name."""
        name = f"t_{next(self._numbers)}"
        with self._admin() as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
            admin.execute(f"CREATE SCHEMA {name}")
        return name

    def drop(self, name: str) -> None:
        with self._admin() as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")

    def stop(self) -> None:
        self._server.cleanup()


def databases(server: Server) -> Iterator[str]:
    """Yield the URL of a fresh schema and drop it afterwards."""
    name = server.create()
    try:
        yield server.uri(name)
    finally:
        server.drop(name)
