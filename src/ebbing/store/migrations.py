"""Named schema migrations for the SQLite store, each applied once, in order, in its own transaction.

On-disk formats:
- times are epoch seconds (REAL, UTC);
- `vectors.vector` is the embedding as little-endian float32, `dimensions` numbers, unit length;
- `memories_fts.terms` holds the record's keyword terms (see `ebbing.text.terms`) joined by spaces, and
  `memories_fts.scope` one token naming the record's scope, `'s' || hex(json_array(tenant, user_id))`
  (`SCOPE_TOKEN`), so a keyword search reads only its scope's rows and counts a term's rarity there;
- `events.data` is a JSON object and never holds a record's text;
- cold records leave `memories` for Parquet files (see `ebbing.lifecycle.archive`); `archive_index`
  says which file holds each and keeps the columns retention needs, so sweeps never open the files;
- `archive_files` is the intent log of file changes: a file being written ('writing') or replaced
  ('deleting') is listed until the change is complete, so a crash leaves a note of what to clean up; a file
  that recalls took rows out of without rewriting it ('stale') is listed until it is compacted;
- `memories.jitter` is a 32-bit hash of the id: a record's slot in a spread-out sweep;
- trash is `memories.tier = 'trash'` with `trashed_at` set: out of the indexes, restorable until purged;
- `facts` holds the (subject, attribute) -> value facts found in records: `slot` is the attribute's
  keyword terms, sorted and space-joined; `valid_to`/`superseded_by` close a value when a newer one
  arrives, `root` names the first fact of a slot's timeline;
- `graph_scopes` names the scopes whose vectors are in an HNSW graph file beside the store (`store.graph`) and
  how far into `vector_journal` each file is; the journal, written by triggers, lists every record whose
  vector changed in such a scope since (added, re-embedded, trashed or restored, archived, deleted);
- `secrets` holds secret values only as Fernet ciphertext, and only when a key was configured; the
  record's text carries a placeholder instead.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            tenant TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            session_id TEXT,
            text TEXT NOT NULL,
            kind TEXT NOT NULL,
            importance REAL NOT NULL,
            priority TEXT NOT NULL,
            pinned INTEGER NOT NULL DEFAULT 0,
            held INTEGER NOT NULL DEFAULT 0,
            tier TEXT NOT NULL DEFAULT 'hot',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_accessed_at REAL,
            access_count INTEGER NOT NULL DEFAULT 0,
            update_count INTEGER NOT NULL DEFAULT 0,
            metadata TEXT NOT NULL DEFAULT '{}',
            source_ids TEXT NOT NULL DEFAULT '[]',
            content_hash TEXT NOT NULL
        );
        CREATE INDEX memories_scope ON memories (tenant, user_id, tier);
        CREATE TABLE vectors (
            seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
            vector BLOB NOT NULL
        );
        CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, tokenize = 'unicode61 remove_diacritics 0');
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            at REAL NOT NULL,
            type TEXT NOT NULL,
            actor TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            data TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_memory ON events (memory_id, seq);
        """,
    ),
    (
        "0002_forgetting",
        """
        ALTER TABLE memories ADD COLUMN security INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE memories ADD COLUMN jitter INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE memories ADD COLUMN trashed_at REAL;
        CREATE TABLE archive_index (
            id TEXT PRIMARY KEY,
            seq INTEGER NOT NULL UNIQUE,
            tenant TEXT NOT NULL,
            user_id TEXT,
            file TEXT NOT NULL,
            archived_at REAL NOT NULL,
            kind TEXT NOT NULL,
            importance REAL NOT NULL,
            priority TEXT NOT NULL,
            pinned INTEGER NOT NULL,
            held INTEGER NOT NULL,
            security INTEGER NOT NULL,
            created_at REAL NOT NULL,
            last_accessed_at REAL,
            access_count INTEGER NOT NULL,
            update_count INTEGER NOT NULL,
            jitter INTEGER NOT NULL
        );
        CREATE INDEX archive_scope ON archive_index (tenant, user_id, seq);
        CREATE INDEX memories_user_seq ON memories (tenant, user_id, seq);
        CREATE INDEX archive_by_file ON archive_index (file);
        CREATE TABLE archive_files (file TEXT PRIMARY KEY, state TEXT NOT NULL);
        CREATE INDEX events_type ON events (tenant, type, at)
        """,
    ),
    (
        "0003_facts_and_secrets",
        """
        CREATE TABLE facts (
            memory_id TEXT NOT NULL,
            slot TEXT NOT NULL,
            tenant TEXT NOT NULL,
            user_id TEXT,
            subject TEXT NOT NULL,
            attribute TEXT NOT NULL,
            value TEXT NOT NULL,
            reason TEXT,
            valid_from REAL NOT NULL,
            valid_to REAL,
            superseded_by TEXT,
            supersedes TEXT,
            root TEXT NOT NULL,
            PRIMARY KEY (memory_id, slot)
        );
        CREATE INDEX facts_current ON facts (tenant, user_id, valid_to);
        CREATE INDEX facts_root ON facts (root, valid_from);
        CREATE TABLE secrets (
            memory_id TEXT NOT NULL,
            placeholder TEXT NOT NULL,
            kind TEXT NOT NULL,
            ciphertext BLOB NOT NULL,
            PRIMARY KEY (memory_id, placeholder)
        )
        """,
    ),
    (
        # A record corrected in place (`Memory.update`) keeps its old value of a slot on the timeline beside the
        # new one, so a slot may hold several values of one record, told apart by when each began.
        "0004_fact_corrections",
        """
        CREATE TABLE facts_new (
            memory_id TEXT NOT NULL,
            slot TEXT NOT NULL,
            tenant TEXT NOT NULL,
            user_id TEXT,
            subject TEXT NOT NULL,
            attribute TEXT NOT NULL,
            value TEXT NOT NULL,
            reason TEXT,
            valid_from REAL NOT NULL,
            valid_to REAL,
            superseded_by TEXT,
            supersedes TEXT,
            root TEXT NOT NULL,
            PRIMARY KEY (memory_id, slot, valid_from)
        );
        INSERT INTO facts_new SELECT memory_id, slot, tenant, user_id, subject, attribute, value, reason, valid_from,
            valid_to, superseded_by, supersedes, root FROM facts;
        DROP TABLE facts;
        ALTER TABLE facts_new RENAME TO facts;
        CREATE INDEX facts_current ON facts (tenant, user_id, valid_to);
        CREATE INDEX facts_root ON facts (root, valid_from)
        """,
    ),
    (
        "0005_expires_at",
        """
        ALTER TABLE memories ADD COLUMN expires_at REAL;
        ALTER TABLE archive_index ADD COLUMN expires_at REAL
        """,
    ),
    (
        # Who said each record (`MemoryRecord.source`), and the supersessions a source's authority held back for a
        # person to accept or reject (`lifecycle.reviews`); `plan` holds what accepting writes (JSON).
        "0006_sources_and_reviews",
        """
        ALTER TABLE memories ADD COLUMN source TEXT NOT NULL DEFAULT 'user';
        CREATE TABLE reviews (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            user_id TEXT,
            memory_id TEXT NOT NULL,
            incumbent TEXT NOT NULL,
            source TEXT NOT NULL,
            incumbent_source TEXT NOT NULL,
            created_at REAL NOT NULL,
            plan TEXT NOT NULL,
            status TEXT NOT NULL,
            decided_at REAL,
            decided_by TEXT,
            note TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX reviews_status ON reviews (tenant, status, created_at);
        CREATE INDEX reviews_memory ON reviews (memory_id, status);
        CREATE INDEX reviews_incumbent ON reviews (incumbent)
        """,
    ),
    (
        # Scopes whose vectors are in an HNSW graph file (`store.graph`), and a journal of their vector changes,
        # written by triggers so no write path can forget it: a graph replays what it has not applied. `scope`
        # is json_array(tenant, user_id). Scopes without a graph journal nothing.
        "0007_vector_graphs",
        """
        CREATE TABLE graph_scopes (scope TEXT PRIMARY KEY, file TEXT NOT NULL, applied INTEGER NOT NULL);
        CREATE TABLE vector_journal (id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, seq INTEGER NOT NULL);
        CREATE INDEX vector_journal_scope ON vector_journal (scope, id);
        CREATE TRIGGER vector_journal_insert AFTER INSERT ON vectors WHEN EXISTS (SELECT 1 FROM graph_scopes)
        BEGIN
            INSERT INTO vector_journal (scope, seq) SELECT g.scope, NEW.seq FROM memories m
                JOIN graph_scopes g ON g.scope = json_array(m.tenant, m.user_id) WHERE m.seq = NEW.seq;
        END;
        CREATE TRIGGER vector_journal_update AFTER UPDATE OF vector ON vectors WHEN EXISTS (SELECT 1 FROM graph_scopes)
        BEGIN
            INSERT INTO vector_journal (scope, seq) SELECT g.scope, NEW.seq FROM memories m
                JOIN graph_scopes g ON g.scope = json_array(m.tenant, m.user_id) WHERE m.seq = NEW.seq;
        END;
        CREATE TRIGGER vector_journal_tier AFTER UPDATE OF tier ON memories
            WHEN (OLD.tier IN ('hot', 'warm')) <> (NEW.tier IN ('hot', 'warm')) AND EXISTS (SELECT 1 FROM graph_scopes)
        BEGIN
            INSERT INTO vector_journal (scope, seq)
                SELECT scope, NEW.seq FROM graph_scopes WHERE scope = json_array(NEW.tenant, NEW.user_id);
        END;
        CREATE TRIGGER vector_journal_owner AFTER UPDATE OF tenant, user_id ON memories
            WHEN EXISTS (SELECT 1 FROM graph_scopes)
        BEGIN
            INSERT INTO vector_journal (scope, seq) SELECT scope, OLD.seq FROM graph_scopes
                WHERE scope IN (json_array(OLD.tenant, OLD.user_id), json_array(NEW.tenant, NEW.user_id));
        END;
        CREATE TRIGGER vector_journal_delete AFTER DELETE ON memories WHEN EXISTS (SELECT 1 FROM graph_scopes)
        BEGIN
            INSERT INTO vector_journal (scope, seq)
                SELECT scope, OLD.seq FROM graph_scopes WHERE scope = json_array(OLD.tenant, OLD.user_id);
        END
        """,
    ),
    (
        # The keyword index learns whose each row is. A search matched a term in every user's records and
        # dropped the other users' rows after ranking them all, and a term's rarity was counted over the whole
        # store: in a store of many users most terms were "too common" and the keyword side went quiet.
        # A trigger keeps the token right when a record changes owner.
        "0008_scoped_keywords",
        """
        CREATE VIRTUAL TABLE memories_fts_scoped USING fts5 (scope, terms, tokenize = 'unicode61 remove_diacritics 0');
        INSERT INTO memories_fts_scoped (rowid, scope, terms)
            SELECT f.rowid, 's' || hex(json_array(m.tenant, m.user_id)), f.terms
            FROM memories_fts f JOIN memories m ON m.seq = f.rowid;
        DROP TABLE memories_fts;
        ALTER TABLE memories_fts_scoped RENAME TO memories_fts;
        CREATE TRIGGER memories_fts_owner AFTER UPDATE OF tenant, user_id ON memories
        BEGIN
            UPDATE memories_fts SET scope = 's' || hex(json_array(NEW.tenant, NEW.user_id)) WHERE rowid = NEW.seq;
        END
        """,
    ),
    (
        # Every add in a session reads the session's last message (a reply is judged with it, `ingest.turns`):
        # without this index that read sorted all of the user's live records, 7.5 ms at 10,000.
        "0009_session_turns",
        """
        CREATE INDEX memories_session ON memories (tenant, user_id, session_id, created_at)
        """,
    ),
]

# The scope token of `memories_fts.scope` for a record row `m`, as SQL.
SCOPE_TOKEN = "'s' || hex(json_array(m.tenant, m.user_id))"


def statements(script: str) -> list[str]:
    """A script's statements: split at semicolons, but a trigger's body (BEGIN ...; ...; END) stays whole."""
    out, pending = [], ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                out.append(pending.strip())
            pending = ""
    if pending.strip(" \n;"):
        out.append(pending.strip())
    return out


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations this file does not have yet; return their names."""
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    applied = []
    for name, script in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone() is None:
                for statement in statements(script):
                    conn.execute(statement)
                conn.execute("INSERT INTO migrations VALUES (?, datetime('now'))", (name,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
