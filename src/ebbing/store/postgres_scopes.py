"""Each big scope's own HNSW index on PostgreSQL: when it is built, how wide its searches are, when it is dropped.

A scope with `INDEX_FROM` live records or more gets a partial HNSW index whose predicate names its tenant and user
(`postgres_search.scope_index_sql`). Its size is checked on the scope's first search in a process and every
`RECHECK_EVERY` searches after; the index is built with `CREATE INDEX CONCURRENTLY` on a connection of its own,
so writes go on, and waits at most `INDEX_WAIT_MS` for transactions already open.

The graph's search width (`hnsw.ef_search`) grows with the scope, as the SQLite graph's does: on real turn
embeddings (docs/scaling.md) a width of 100 finds 0.998 of the exact top 10 at 1,000 to 20,000 records but 0.950
at 100,000, where 200 finds 0.982. The width is read off the index's own row count (`pg_class.reltuples`, which
the build and every vacuum or analyze refresh) at the same checks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from ebbing.errors import StoreError
from ebbing.model import Scope
from ebbing.store.postgres_rows import first_line
from ebbing.store.postgres_search import scope_index_name, scope_index_sql, scope_size_sql, user_clause

INDEX_WAIT_MS = 10_000  # how long building or dropping a scope's vector index waits for open transactions
RECHECK_EVERY = 500  # a scope's size is checked again after this many of its searches in one process
RECORDS_PER_WIDTH = 500  # the search width is the scope's size over this, at least the store's base width
MAX_WIDTH = 1_000  # pgvector's largest hnsw.ef_search
log = logging.getLogger(__name__)

Rows = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


def search_width(size: float, base: int) -> int:
    """`hnsw.ef_search` for a scope of `size` records: `base` up to `base` x 500 records, then one per 500."""
    return int(min(MAX_WIDTH, max(base, size // RECORDS_PER_WIDTH)))


class ScopeIndexes:
    """Which scopes have their own index in this process, and the search width each gets."""

    def __init__(self, url: str, rows: Rows, connect: Callable[[str], psycopg.Connection[Any]], index_from: int,
                 base_width: int) -> None:
        self.url, self.rows, self.connect = url, rows, connect
        self.index_from, self.base_width = index_from, base_width
        self.widths: dict[tuple[str, str | None], int] = {}  # indexed scopes -> their search width
        self.searches: dict[tuple[str, str | None], int] = {}  # each scope's searches in this process

    def width(self, scope: Scope) -> int | None:
        """The scope's search width if it has its own HNSW index, else None (the exact scan answers). Checked on a
        scope's first search in this process and every RECHECK_EVERY after; builds the index once the scope holds
        `index_from` live records."""
        key = (scope.tenant, scope.user_id)
        done = self.searches.get(key, 0)
        self.searches[key] = done + 1
        if done % RECHECK_EVERY:
            return self.widths.get(key)
        size, ready, indexed_rows = self.rows(*scope_size_sql(scope, self.index_from))[0]
        if not ready and size >= self.index_from:
            ready = self._build(scope)
            if ready:
                indexed_rows = self.rows("SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)",
                                         [scope_index_name(scope.tenant, scope.user_id)])[0][0]
        if not ready:
            self.widths.pop(key, None)
            return None
        self.widths[key] = search_width(max(float(indexed_rows or 0), size), self.base_width)
        return self.widths[key]

    def _build(self, scope: Scope) -> bool:
        """Build the scope's HNSW index on a connection of its own (CREATE INDEX CONCURRENTLY cannot run in a
        transaction and waits for the others); False, and the exact scan goes on, if it could not."""
        name = scope_index_name(scope.tenant, scope.user_id)
        try:
            with self.connect(self.url) as conn:
                # The build waits for every transaction already open on the table; one left open elsewhere must
                # not hold this search for long. A build cut short leaves an invalid index, rebuilt next time.
                conn.execute(f"SET lock_timeout = {INDEX_WAIT_MS}")
                # A build interrupted before (killed, cancelled) leaves an invalid index of this name behind.
                row = conn.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)",
                                   (name,)).fetchone()
                if row is not None and not row[0]:
                    conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}".encode())
                conn.execute(scope_index_sql(scope.tenant, scope.user_id).encode())
                row = conn.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)",
                                   (name,)).fetchone()
        except (psycopg.Error, StoreError) as exc:
            log.warning("could not build the vector index of %s/%s: %s", scope.tenant, scope.user_id,
                        first_line(exc))
            return False
        return row is not None and bool(row[0])

    def drop_emptied(self, scopes: set[tuple[str, str | None]]) -> None:
        """Drop the HNSW index of each scope a purge left without records: its predicate names the user."""
        for tenant, user_id in scopes:
            user, params = user_clause(user_id)
            name = scope_index_name(tenant, user_id)
            if self.rows("SELECT to_regclass(%s) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memories WHERE "
                         f"tenant = %s AND {user})", (name, tenant, *params))[0][0]:
                self.widths.pop((tenant, user_id), None)
                self.searches.pop((tenant, user_id), None)
                try:
                    with self.connect(self.url) as conn:
                        conn.execute(f"SET lock_timeout = {INDEX_WAIT_MS}")
                        conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}".encode())
                except (psycopg.Error, StoreError) as exc:
                    log.warning("could not drop the vector index %s of an emptied scope: %s", name, first_line(exc))
