"""Named schema migrations for the PostgreSQL store, each applied once, in order, in its own transaction.

Every table that holds tenant data leads its primary key and its B-tree indexes with `tenant`, so Citus
can distribute them all on that column and keep a tenant's rows on one node (see docs/scaling.md). Two
indexes cannot lead with it in stock PostgreSQL: the GIN keyword index and the HNSW vector index (their
access methods index one column; `btree_gin` is not bundled with every server). Under Citus each shard
has its own GIN and HNSW index, so they are partitioned by tenant anyway.

Formats:
- times are epoch seconds in float8 (UTC), exactly as the SQLite store keeps them, so the retention
  arithmetic in SQL reads the same numbers as the Python policies;
- `memories.terms` is the record's keyword terms (see `ebbing.text.terms`) as a text[]: the same terms
  both stores index, matched as exact array elements (no second tokeniser), GIN-indexed for live tiers;
- `memories.embedding` is a pgvector `vector(d)`; `d` is fixed by the first store opened with an embedder
  (the migration `vectors_<d>`); a scope with many live records gets an HNSW (cosine) index of its own, a
  partial index on its tenant and user (`ebbing.store.postgres_search.scope_index_sql`);
- no index reads `tier`: the keyword and vector indexes leave the trash out by `trashed_at IS NULL` (set
  exactly while a record is in the trash), so a hot -> warm move or a counted use changes no indexed column
  and PostgreSQL updates the row in place (a HOT update, helped by fillfactor 80) instead of adding entries
  to every index, the HNSW graph included;
- `events.data` is JSONB and never holds a record's text;
- `archive_index`, `archive_files`, `facts` and `secrets` mean what they mean in the SQLite store
  (`ebbing.store.migrations`); `archive_files.owner` is the backend pid that noted the intent, so a
  sweep worker never cleans up a file another live worker is still writing;
- `sweep_runs`/`sweep_chunks` are the work queue of in-database sweeps: chunks of a tenant's keys that
  workers claim with `FOR UPDATE SKIP LOCKED`.
"""

from __future__ import annotations

import psycopg

MIGRATION_LOCK = 0x6562_6269  # "ebbi": serialises migrations of processes opening one database at once

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
        CREATE SEQUENCE memory_keys;
        CREATE TABLE memories (
            tenant text NOT NULL,
            seq bigint NOT NULL DEFAULT nextval('memory_keys'),
            id text NOT NULL,
            user_id text,
            agent_id text,
            session_id text,
            text text NOT NULL,
            kind text NOT NULL,
            importance float8 NOT NULL,
            priority text NOT NULL,
            pinned boolean NOT NULL DEFAULT false,
            held boolean NOT NULL DEFAULT false,
            security boolean NOT NULL DEFAULT false,
            tier text NOT NULL DEFAULT 'hot',
            created_at float8 NOT NULL,
            updated_at float8 NOT NULL,
            last_accessed_at float8,
            access_count integer NOT NULL DEFAULT 0,
            update_count integer NOT NULL DEFAULT 0,
            metadata jsonb NOT NULL DEFAULT '{}',
            source_ids text[] NOT NULL DEFAULT '{}',
            content_hash text NOT NULL,
            jitter integer NOT NULL DEFAULT 0,
            trashed_at float8,
            terms text[] NOT NULL DEFAULT '{}',
            embedding vector,
            PRIMARY KEY (tenant, seq),
            UNIQUE (tenant, id)
        ) WITH (fillfactor = 80);
        CREATE INDEX memories_scope ON memories (tenant, user_id, seq);
        CREATE INDEX memories_key ON memories (seq);
        CREATE INDEX memories_terms ON memories USING gin (terms) WHERE trashed_at IS NULL;
        CREATE SEQUENCE event_keys;
        CREATE TABLE events (
            tenant text NOT NULL,
            seq bigint NOT NULL DEFAULT nextval('event_keys'),
            memory_id text NOT NULL,
            at float8 NOT NULL,
            type text NOT NULL,
            actor text NOT NULL,
            reason text NOT NULL DEFAULT '',
            data jsonb NOT NULL DEFAULT '{}',
            PRIMARY KEY (tenant, seq)
        );
        CREATE INDEX events_memory ON events (tenant, memory_id, seq);
        CREATE INDEX events_type ON events (tenant, type, at);
        CREATE TABLE archive_index (
            tenant text NOT NULL,
            id text NOT NULL,
            seq bigint NOT NULL,
            user_id text,
            file text NOT NULL,
            archived_at float8 NOT NULL,
            kind text NOT NULL,
            importance float8 NOT NULL,
            priority text NOT NULL,
            pinned boolean NOT NULL,
            held boolean NOT NULL,
            security boolean NOT NULL,
            created_at float8 NOT NULL,
            last_accessed_at float8,
            access_count integer NOT NULL,
            update_count integer NOT NULL,
            jitter integer NOT NULL,
            PRIMARY KEY (tenant, id),
            UNIQUE (tenant, seq)
        );
        CREATE INDEX archive_scope ON archive_index (tenant, user_id, seq);
        CREATE INDEX archive_by_file ON archive_index (tenant, file);
        CREATE TABLE archive_files (file text PRIMARY KEY, state text NOT NULL, owner integer);
        CREATE TABLE facts (
            tenant text NOT NULL,
            memory_id text NOT NULL,
            slot text NOT NULL,
            user_id text,
            subject text NOT NULL,
            attribute text NOT NULL,
            value text NOT NULL,
            reason text,
            valid_from float8 NOT NULL,
            valid_to float8,
            superseded_by text,
            supersedes text,
            root text NOT NULL,
            PRIMARY KEY (tenant, memory_id, slot)
        );
        CREATE INDEX facts_current ON facts (tenant, user_id, valid_to);
        CREATE INDEX facts_root ON facts (tenant, root, valid_from);
        CREATE TABLE secrets (
            tenant text NOT NULL,
            memory_id text NOT NULL,
            placeholder text NOT NULL,
            kind text NOT NULL,
            ciphertext bytea NOT NULL,
            PRIMARY KEY (tenant, memory_id, placeholder)
        );
        CREATE TABLE sweep_runs (
            tenant text NOT NULL,
            key text NOT NULL,
            planned_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tenant, key)
        );
        CREATE TABLE sweep_chunks (
            tenant text NOT NULL,
            key text NOT NULL,
            lo bigint NOT NULL,
            hi bigint,
            done boolean NOT NULL DEFAULT false,
            evaluated integer NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant, key, lo)
        );
        -- A metadata value as SQLite's json_extract sees it: JSON null is SQL NULL, true/false are 1/0,
        -- so the same filter matches the same records in both stores.
        CREATE FUNCTION ebbing_meta(doc jsonb, name text) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE jsonb_typeof(doc -> name)
                WHEN 'null' THEN NULL
                WHEN 'boolean' THEN to_jsonb(CASE WHEN (doc -> name)::boolean THEN 1 ELSE 0 END)
                ELSE doc -> name END
        $$;
        """,
    ),
    (
        # A record corrected in place keeps its old value of a slot beside the new one (see the SQLite store).
        "0002_fact_corrections",
        """
        ALTER TABLE facts DROP CONSTRAINT facts_pkey;
        ALTER TABLE facts ADD PRIMARY KEY (tenant, memory_id, slot, valid_from);
        """,
    ),
    (
        # An explicit end of life (`MemoryRecord.expires_at`), epoch seconds like every time here.
        "0003_expires_at",
        """
        ALTER TABLE memories ADD COLUMN expires_at float8;
        ALTER TABLE archive_index ADD COLUMN expires_at float8;
        """,
    ),
    (
        # Who said each record and the supersessions held for review (see the SQLite store's 0006).
        "0004_sources_and_reviews",
        """
        ALTER TABLE memories ADD COLUMN source text NOT NULL DEFAULT 'user';
        CREATE TABLE reviews (
            id text PRIMARY KEY,
            tenant text NOT NULL,
            user_id text,
            memory_id text NOT NULL,
            incumbent text NOT NULL,
            source text NOT NULL,
            incumbent_source text NOT NULL,
            created_at float8 NOT NULL,
            plan jsonb NOT NULL,
            status text NOT NULL,
            decided_at float8,
            decided_by text,
            note text NOT NULL DEFAULT ''
        );
        CREATE INDEX reviews_status ON reviews (tenant, status, created_at);
        CREATE INDEX reviews_memory ON reviews (tenant, memory_id, status);
        CREATE INDEX reviews_incumbent ON reviews (tenant, incumbent);
        """,
    ),
    (
        # One HNSW index over every scope made each insert pay a graph insertion (~20x the rest of a bulk add) and
        # gave a small scope fewer results than asked (the graph's candidates are filtered by user afterwards).
        # A scope now gets an HNSW index of its own once it is large (`ebbing.store.postgres_search`); a small one
        # is scanned exactly. (Keeping vectors in the row, STORAGE MAIN, halved an exact scan but made rows too
        # wide for in-place updates: every counted use then re-inserted the row into each index, HNSW included,
        # and a search's p99 reached a second. So vectors stay out of line when a row is wide.)
        "0005_scope_vector_indexes",
        """
        DROP INDEX IF EXISTS memories_embedding;
        """,
    ),
    (
        # Every add in a session reads the session's last message (a reply is judged with it, `ingest.turns`).
        "0006_session_turns",
        """
        CREATE INDEX IF NOT EXISTS memories_session ON memories (tenant, user_id, session_id, created_at);
        """,
    ),
]


def _vectors(dimensions: int) -> tuple[str, str]:
    """The migration that fixes the vector width (the HNSW indexes are per large scope, made by the store)."""
    return (f"vectors_{dimensions}", f"""
        ALTER TABLE memories ALTER COLUMN embedding TYPE vector({dimensions});
    """)


def _apply(conn: psycopg.Connection[tuple[object, ...]], name: str, script: str) -> bool:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        if conn.execute("SELECT 1 FROM ebbing_migrations WHERE name = %s", (name,)).fetchone() is not None:
            return False  # another process applied it while we waited for the lock
        conn.execute(script.encode())
        conn.execute("INSERT INTO ebbing_migrations (name) VALUES (%s)", (name,))
    return True


def migrate(conn: psycopg.Connection[tuple[object, ...]], dimensions: int | None = None) -> list[str]:
    """Apply the migrations this database does not have yet (and, given `dimensions`, the vector index for
    that width unless a width is already fixed); return their names."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS ebbing_migrations "
                     "(name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
    done = {str(row[0]) for row in conn.execute("SELECT name FROM ebbing_migrations")}
    applied = [name for name, script in MIGRATIONS if name not in done and _apply(conn, name, script)]
    if dimensions is not None and vector_width(conn) is None:
        name, script = _vectors(dimensions)
        if _apply(conn, name, script):
            applied.append(name)
    return applied


def vector_width(conn: psycopg.Connection[tuple[object, ...]]) -> int | None:
    """The width fixed by a `vectors_<d>` migration, if one was applied."""
    row = conn.execute("SELECT name FROM ebbing_migrations WHERE name LIKE 'vectors\\_%' LIMIT 1").fetchone()
    return None if row is None else int(str(row[0]).removeprefix("vectors_"))
