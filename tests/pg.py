"""A throwaway PostgreSQL (with pgvector) for the tests: one server per test session, one schema per test.

`pgserver` bundles PostgreSQL 16 with pgvector and starts offline from a folder. Every test gets a fresh
schema, named first in the URL's search_path, so tests stay isolated; creating and dropping a schema costs
milliseconds, where a database per test costs a checkpoint each.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg


class Server:
    def __init__(self, root: Path, *, crash_safe: bool = False) -> None:
        """`crash_safe` keeps commits synchronous, so a crashed server (a backend killed with SIGKILL, an
        immediate restart) loses no acknowledged commit; fsync stays off, as the machine itself never crashes."""
        import pgserver

        self._server: Any = pgserver.get_server(root, cleanup_mode="stop")
        self._numbers = itertools.count()
        settings = ["fsync = off", "full_page_writes = off"] + ([] if crash_safe else ["synchronous_commit = off"])
        with self._admin() as admin:  # a throwaway server: durability would only cost time
            for setting in settings:
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

    def restart(self, mode: str = "fast") -> None:
        """Restart the server: "fast" ends every session and shuts down cleanly, "immediate" as after a crash
        (recovery from the WAL on start). Returns once it accepts connections again."""
        from pgserver._commands import pg_ctl
        from pgserver.utils import PostmasterInfo

        server = self._server
        # pg_ctl restarts with the options the server was started with (its socket folder), so URLs still work.
        pg_ctl(["-w", "-m", mode, "-l", str(server.log), "restart"], pgdata=server.pgdata, user=server.system_user,
               timeout=30)
        server._postmaster_info = PostmasterInfo.read_from_pgdata(server.pgdata)  # so `stop` stops the new one
        self.wait_ready()

    def kill_backend(self, pid: int, timeout: float = 30.0) -> None:
        """Kill a backend with SIGKILL (as the OOM killer would) and wait out what follows: the postmaster ends
        every other session and recovers from its WAL before it takes connections again."""
        deadline = time.monotonic() + timeout
        with self._admin() as witness:  # a session of before the kill: it ends once the postmaster reacts
            os.kill(pid, signal.SIGKILL)
            while True:
                try:
                    witness.execute("SELECT 1")
                except psycopg.OperationalError:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the server did not react to the killed backend {pid}")
                time.sleep(0.005)
        self.wait_ready(timeout)

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until the server accepts connections (after a restart, or crash recovery after a killed backend)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with self._admin():
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)


def databases(server: Server) -> Iterator[str]:
    """Yield the URL of a fresh schema and drop it afterwards."""
    name = server.create()
    try:
        yield server.uri(name)
    finally:
        server.drop(name)


# The SQL type of each retention column, as the `memories` table has it (ebbing.retention.sql says the same).
RETENTION_TYPES = {"kind": "text", "importance": "float8", "priority": "text", "pinned": "boolean",
                   "held": "boolean", "security": "boolean", "created_at": "float8", "last_accessed_at": "float8",
                   "access_count": "integer", "update_count": "integer", "expires_at": "float8"}


def retention_table(conn: psycopg.Connection[Any], rows: list[tuple[Any, ...]]) -> None:
    """A temporary table `m` of retention rows (column `n` their order), for holding SQL scores against numpy."""
    from ebbing.retention.base import RETENTION_COLUMNS

    columns = ", ".join(f"{name} {RETENTION_TYPES[name]}" for name in RETENTION_COLUMNS)
    conn.execute(f"CREATE TEMP TABLE m (n int, {columns})")
    with conn.cursor() as cursor:
        cursor.executemany(f"INSERT INTO m VALUES (%s, {', '.join(['%s'] * len(RETENTION_COLUMNS))})",
                           [(i, *row) for i, row in enumerate(rows)])
