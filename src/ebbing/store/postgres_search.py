"""The SQL of a PostgreSQL search: the vector ranking, the BM25 ranking and the candidate rows, each a fragment
`postgres.py` runs alone (`vector_search`, `keyword_search`, `candidates`) or all three as one statement
(`search_candidates`), so a search costs one round trip and both rankings read the same snapshot.

BM25 is computed in SQL over the terms both stores index (k1 1.2, b 0.75 as FTS5). A term's document frequency
is counted among the scope's live records, up to `max_term_docs` + 1 of them; a term beyond that is left out, as
in the SQLite store. The query's terms are few, so each one's contribution is written out as its own expression
(its idf from an array, 0 for a term left out): the score is then a plain expression per matching record instead
of a subquery per record, which cost ~10 µs each on a few hundred matches.

Vectors: a scope with fewer than `INDEX_FROM` live records is scanned exactly (every distance computed), which
is both exact and, at that size, fast. A larger scope gets an HNSW index of its own: a partial index whose
predicate names its tenant and user (`scope_index_sql`), which a search writes out as literals so the planner
can match it. One HNSW index over every scope, as before, cost each insert a graph insertion (bulk adds ran
~20x slower than without it) and, as pgvector filters the graph's candidates by user after the fact, gave a
small scope fewer results than asked and missed most of its true neighbours (docs/scaling.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg import sql

from ebbing.model import Scope
from ebbing.retention.base import RETENTION_COLUMNS
from ebbing.store.postgres_filters import compile_postgres
from ebbing.store.postgres_rows import LIVE

BM25_K1, BM25_B = 1.2, 0.75  # FTS5's bm25() defaults

# From this many live records a scope gets its own HNSW index. Measured (docs/scaling.md): an exact scan of
# 384-dimension vectors costs ~5 µs a record (each read from the TOAST table), 5 ms at 1,000 and 11.5 at 2,000.
INDEX_FROM = 1_000

# What scoring needs of a candidate: key, text, terms, vector, whether it is retired (every fact it states has a
# newer value, or it waits for review), then the retention columns.
CANDIDATE_COLUMNS = (
    "m.seq, m.text, m.terms, m.embedding, "
    "(EXISTS (SELECT 1 FROM facts x WHERE x.tenant = m.tenant AND x.memory_id = m.id) AND NOT EXISTS "
    "(SELECT 1 FROM facts x WHERE x.tenant = m.tenant AND x.memory_id = m.id AND x.valid_to IS NULL)) OR "
    "EXISTS (SELECT 1 FROM reviews r WHERE r.tenant = m.tenant AND r.memory_id = m.id AND r.status = 'pending'), "
    f"{', '.join('m.' + c for c in RETENTION_COLUMNS)}")


def user_clause(user_id: str | None, column: str = "user_id") -> tuple[str, list[Any]]:
    """`user_id = %s` or `user_id IS NULL`: spelled out so the planner can use the scope index."""
    return (f"{column} IS NULL", []) if user_id is None else (f"{column} = %s", [user_id])


def scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    user, params = user_clause(scope.user_id, "m.user_id")
    sql = f"m.tenant = %s AND {user} AND m.tier IN {LIVE} AND m.trashed_at IS NULL"  # the last: partial indexes
    params = [scope.tenant, *params]
    for column in ("agent_id", "session_id"):
        value = getattr(scope, column)
        if value is not None:
            sql += f" AND m.{column} = %s"
            params.append(value)
    return sql, params


def scope_index_name(tenant: str, user_id: str | None) -> str:
    """The name of a scope's HNSW index: a digest, so it holds neither id and fits PostgreSQL's 63 bytes."""
    key = f"{tenant}\x00{'' if user_id is None else user_id}\x00{user_id is None}".encode()
    return "memories_ann_" + hashlib.sha256(key).hexdigest()[:24]


def _scope_predicate(tenant: str, user_id: str | None, alias: str = "m.") -> str:
    user = f"{alias}user_id IS NULL" if user_id is None else \
        f"{alias}user_id = {sql.Literal(user_id).as_string(None)}"
    return f"{alias}tenant = {sql.Literal(tenant).as_string(None)} AND {user} AND {alias}trashed_at IS NULL"


def scope_index_sql(tenant: str, user_id: str | None) -> str:
    """The statement that builds a scope's HNSW index (cosine) without blocking writes."""
    predicate = _scope_predicate(tenant, user_id, alias="")
    return (f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {scope_index_name(tenant, user_id)} ON memories "
            f"USING hnsw (embedding vector_cosine_ops) WHERE {predicate}")


def scope_size_sql(scope: Scope, cap: int) -> tuple[str, list[Any]]:
    """The scope's live records counted up to `cap`, whether its HNSW index exists and is ready, and the index's
    row count as the planner knows it (`reltuples`: set by the build, refreshed by vacuum and analyze)."""
    user, params = user_clause(scope.user_id)
    name = scope_index_name(scope.tenant, scope.user_id)
    return ("SELECT (SELECT count(*) FROM (SELECT 1 FROM memories WHERE tenant = %s AND " + user +
            " AND trashed_at IS NULL LIMIT %s) c), coalesce((SELECT indisvalid FROM pg_index "
            "WHERE indexrelid = to_regclass(%s)), false), "
            "coalesce((SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)), 0)",
            [scope.tenant, *params, cap, name, name])


def vector_sql(scope: Scope, vector: np.ndarray, limit: int, filters: dict[str, Any] | None, *,
               indexed: bool = False) -> tuple[str, list[Any]]:
    """Keys of the nearest live records by cosine. `indexed` (the scope has its own HNSW index, and the search
    has no agent, session or metadata filter, which the graph could only apply after the fact): through that
    index, its predicate written out so the planner matches it; otherwise an exact scan of the scope."""
    target = np.asarray(vector, dtype=np.float32)
    if indexed and not filters and scope.agent_id is None and scope.session_id is None:
        predicate = _scope_predicate(scope.tenant, scope.user_id).replace("%", "%%")  # not a placeholder
        return (f"SELECT m.seq FROM memories m WHERE {predicate} "
                f"AND m.tier IN {LIVE} ORDER BY m.embedding <=> %s LIMIT %s", [target, limit])
    where, params = scope_sql(scope)
    extra, extra_params = compile_postgres(filters)
    return (f"SELECT m.seq FROM memories m WHERE {where}{extra} ORDER BY m.embedding <=> %s LIMIT %s",
            [*params, *extra_params, target, limit])


def keyword_sql(scope: Scope, terms: Sequence[str], limit: int, filters: dict[str, Any] | None,
                max_term_docs: int) -> tuple[str, list[Any]] | None:
    """Keys of the live records holding any of the terms, best BM25 first (None: no terms). Document frequencies
    come from this scope's user (not its agent, session or filters), length is normalised by the matching
    records' mean, and the collection size is the table's (its planner estimate)."""
    wanted = list(dict.fromkeys(terms))
    if not wanted:
        return None
    where, params = scope_sql(scope)
    extra, extra_params = compile_postgres(filters)
    user, user_params = user_clause(scope.user_id, "m.user_id")
    tf = "coalesce(cardinality(array_positions(h.terms, %s::text)), 0)::float8"  # how often the term occurs
    # One term's part: idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / mean length)); summed in query order.
    parts = [f"idf.v[{i}] * {tf} * %s / ({tf} + %s * (1 - %s + %s * cardinality(h.terms) / norm.avgdl))"
             for i in range(1, len(wanted) + 1)]
    part_params: list[Any] = []
    for term in wanted:
        part_params += [term, BM25_K1 + 1, term, BM25_K1, BM25_B, BM25_B]
    # Each term's frequency is its own subquery with the term bound, not one subquery over unnest(terms): the
    # planner then reads the term's frequency from the column statistics and, for a common term and a small
    # scope, reads the scope's rows instead of the term's entries for the whole table (which grow with it).
    count = (f"(SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.terms @> ARRAY[%s::text] AND m.tenant = %s "
             f"AND {user} AND m.tier IN {LIVE} AND m.trashed_at IS NULL LIMIT %s) c)::float8")
    frequencies = ", ".join(f"({i}, %s::text, {count})" for i in range(1, len(wanted) + 1))
    count_params: list[Any] = []
    for term in wanted:
        count_params += [term, term, scope.tenant, *user_params, max_term_docs + 1]
    sql = (
        f"WITH df AS MATERIALIZED (SELECT i, term, n FROM (VALUES {frequencies}) d(i, term, n)), "
        "usable AS (SELECT i, term, n FROM df WHERE n > 0 AND n <= %s), "
        "total AS (SELECT greatest((SELECT reltuples::bigint FROM pg_class WHERE oid = 'memories'::regclass), "
        "(SELECT max(n) FROM usable)::bigint, 1)::float8 AS n), "
        "idf AS MATERIALIZED (SELECT array_agg(coalesce(ln(1 + (total.n - u.n + 0.5) / (u.n + 0.5)), 0) "
        "ORDER BY d.i) AS v FROM df d LEFT JOIN usable u ON u.i = d.i, total), "
        # The first condition (all the query's terms, bound) is for the planner's estimate; the second decides.
        # EXISTS is evaluated once, before the scan: when every term is too common, nothing is read.
        "hits AS (SELECT m.seq, m.terms FROM memories m WHERE EXISTS (SELECT 1 FROM usable) "
        "AND m.terms && %s::text[] "
        f"AND m.terms && (SELECT array_agg(term) FROM usable) AND {where}{extra}), "
        "norm AS (SELECT greatest(avg(cardinality(terms)), 1)::float8 AS avgdl FROM hits) "
        f"SELECT h.seq FROM hits h, norm, idf ORDER BY {' + '.join(parts)} DESC, h.seq LIMIT %s")
    return sql, [*count_params, max_term_docs, wanted, *params, *extra_params, *part_params, limit]


def candidates_sql(keys: str) -> str:
    """The candidate rows of the live records whose keys `keys` (SQL yielding one column of keys) selects, in key
    order."""
    return f"SELECT {CANDIDATE_COLUMNS} FROM memories m WHERE m.seq IN ({keys}) AND m.tier IN {LIVE} ORDER BY m.seq"


def search_sql(scope: Scope, terms: Sequence[str], vector: np.ndarray, limit: int, filters: dict[str, Any] | None,
               max_term_docs: int, *, indexed: bool = False) -> tuple[str, list[Any]]:
    """One statement: the `limit` nearest records and the `limit` best BM25 matches of the scope, as candidate
    rows (each record once)."""
    nearest, params = vector_sql(scope, vector, limit, filters, indexed=indexed)
    keys = f"(SELECT seq FROM ({nearest}) v)"
    keyword = keyword_sql(scope, terms, limit, filters, max_term_docs)
    if keyword is not None:
        keys += f" UNION ALL ({keyword[0]})"
        params += keyword[1]
    return candidates_sql(keys), params
