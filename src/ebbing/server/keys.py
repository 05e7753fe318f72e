"""API keys: each belongs to one tenant and has a role; only a hash of it is ever stored.

A key reads `ebk_<id>_<secret>`: `id` (12 hex characters) is public, shown by `ebbing keys list` and used
to revoke; `secret` carries 256 random bits. The store keeps sha256 of the whole key and compares it with
`hmac.compare_digest`; a key is shown once, when it is created. Keys live in their own small SQLite file
next to the memory store (`<db stem>.keys.db`), so copying or exporting memories never copies keys.
A revoked key stays listed (with when it was revoked) and never works again.

The inspector's logins are sessions kept in the same file, so every server process on the store agrees on
them: a random session id lives in the browser's cookie, and only its sha256 is stored here, with the id of
the key that logged in and when the session ends. A session is worth only as much as its key: it is checked
again on every use, and revoking the key deletes its sessions. The plaintext key is never stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ebbing import validate
from ebbing.clock import Instant, iso, to_epoch
from ebbing.errors import InvalidInput, NotFound

Role = Literal["agent", "admin"]
ROLES: tuple[Role, ...] = ("agent", "admin")
PREFIX = "ebk_"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    key_id TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    tenant TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL,
    note TEXT NOT NULL DEFAULT '',
    rate REAL,          -- requests per second, NULL: the server's default
    burst INTEGER,      -- bucket size, NULL: the server's default
    max_body INTEGER,   -- bytes, NULL: the server's default
    source TEXT         -- the one source its adds may claim (ebbing.ingest.authority), NULL: any
)
"""

_SESSIONS = """
CREATE TABLE IF NOT EXISTS sessions (
    hash TEXT PRIMARY KEY,      -- sha256 of the session id; the id itself is only in the browser's cookie
    key_id TEXT NOT NULL,       -- the key that logged in (its public id, never the key)
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
)
"""


def keys_path(db: Path) -> Path:
    """Where the keys of the store at `db` live."""
    return db.parent / f"{db.stem}.keys.db"


@dataclass(frozen=True)
class KeyInfo:
    key_id: str
    tenant: str
    role: Role
    created_at: float
    revoked_at: float | None = None
    note: str = ""
    rate: float | None = None
    burst: int | None = None
    max_body: int | None = None
    source: str | None = None  # what its adds are stored as ("tool"): it cannot claim another source

    def to_dict(self) -> dict[str, Any]:
        return {"key_id": self.key_id, "tenant": self.tenant, "role": self.role, "created_at": iso(self.created_at),
                "revoked_at": iso(self.revoked_at) if self.revoked_at is not None else None, "note": self.note,
                "rate": self.rate, "burst": self.burst, "max_body": self.max_body, "source": self.source}


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_id_of(key: str) -> str | None:
    """The public id inside a plaintext key, or None if it is not shaped like one of ours."""
    if not key.startswith(PREFIX):
        return None
    key_id, _, secret = key[len(PREFIX):].partition("_")
    if len(key_id) != 12 or not secret:
        return None
    return key_id


_CURSORS = """
CREATE TABLE IF NOT EXISTS webhook_cursors (
    tenant TEXT NOT NULL,
    hook TEXT NOT NULL,         -- sha256 of the webhook's URL: which receiver this position is for
    seq INTEGER NOT NULL,       -- the last change-feed event the receiver acknowledged
    PRIMARY KEY (tenant, hook)
)
"""


class KeyStore:
    """Thread-safe (one connection behind a lock); other processes may add or revoke keys meanwhile."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Key hashes and session hashes: private to the owner like the store (SQLite's -wal and -shm files
        # take the database file's mode).
        with contextlib.suppress(FileExistsError):
            os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._conn.execute(_SCHEMA)
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(keys)")}
        if "source" not in columns:  # a keys file from before keys could be bound to a source
            with contextlib.suppress(sqlite3.OperationalError):  # another process added it meanwhile
                self._conn.execute("ALTER TABLE keys ADD COLUMN source TEXT")
        self._conn.execute(_SESSIONS)
        self._conn.execute(_CURSORS)

    @property
    def _conn(self) -> sqlite3.Connection:
        # Opened on first use and again after close(), so an app outlives one server run (tests run several).
        if self._connection is None:
            self._connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            self._connection.execute("PRAGMA journal_mode = WAL")
        return self._connection

    def delivered(self, tenant: str, url: str) -> int:
        """The change-feed position a webhook receiver acknowledged last (0: nothing yet)."""
        with self._lock:
            row = self._conn.execute("SELECT seq FROM webhook_cursors WHERE tenant = ? AND hook = ?",
                                     (tenant, _hash(url))).fetchone()
        return int(row[0]) if row else 0

    def set_delivered(self, tenant: str, url: str, seq: int) -> None:
        with self._lock:
            self._conn.execute("INSERT INTO webhook_cursors VALUES (?, ?, ?) ON CONFLICT (tenant, hook) DO UPDATE "
                               "SET seq = max(seq, excluded.seq)", (tenant, _hash(url), seq))

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def create(self, tenant: str, role: str = "agent", *, note: str = "", rate: float | None = None,
               burst: int | None = None, max_body: int | None = None, at: Instant = None,
               source: str | None = None) -> tuple[str, KeyInfo]:
        """A new key: returns the plaintext (show it once, it is not kept) and its description. `source` binds
        it: whatever it adds is stored as said by that source (a tool's key cannot speak as the user)."""
        tenant = validate.name(tenant, "tenant", required=True) or ""
        if role not in ROLES:
            raise InvalidInput("role", f"must be one of {', '.join(ROLES)}")
        if rate is not None and not (isinstance(rate, int | float) and rate > 0):
            raise InvalidInput("rate", "must be a number of requests per second > 0")
        for name, value in (("burst", burst), ("max_body", max_body)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InvalidInput(name, "must be a whole number >= 1")
        source = validate.name(source, "source")
        key_id = secrets.token_hex(6)
        key = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        info = KeyInfo(key_id, tenant, role, to_epoch(at), None, note, rate, burst, max_body, source)
        with self._lock:
            self._conn.execute("INSERT INTO keys (key_id, hash, tenant, role, created_at, note, rate, burst, max_body,"
                               " source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               (key_id, _hash(key), tenant, role, info.created_at, note, rate, burst, max_body,
                                source))
        return key, info

    def check(self, key: str) -> KeyInfo | None:
        """The live key's description, or None for anything else (unknown, revoked, malformed)."""
        key_id = key_id_of(key)
        if key_id is None:
            return None
        with self._lock:
            row = self._conn.execute("SELECT hash, revoked_at FROM keys WHERE key_id = ?", (key_id,)).fetchone()
        if row is None or row[1] is not None or not hmac.compare_digest(row[0], _hash(key)):
            return None
        return self.info(key_id)

    def info(self, key_id: str) -> KeyInfo | None:
        with self._lock:
            row = self._conn.execute("SELECT key_id, tenant, role, created_at, revoked_at, note, rate, burst, "
                                     "max_body, source FROM keys WHERE key_id = ?", (key_id,)).fetchone()
        return KeyInfo(*row) if row else None

    def entries(self, tenant: str | None = None) -> list[KeyInfo]:
        sql = "SELECT key_id, tenant, role, created_at, revoked_at, note, rate, burst, max_body, source FROM keys"
        params: tuple[str, ...] = ()
        if tenant is not None:
            sql, params = sql + " WHERE tenant = ?", (tenant,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY created_at, key_id", params).fetchall()
        return [KeyInfo(*row) for row in rows]

    def revoke(self, key_id: str, at: Instant = None) -> KeyInfo:
        """Revoke by public id (a whole key works too). Revoking twice keeps the first time."""
        key_id = key_id_of(key_id) or key_id
        with self._lock:
            self._conn.execute("UPDATE keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL",
                               (to_epoch(at), key_id))
            self._conn.execute("DELETE FROM sessions WHERE key_id = ?", (key_id,))
        info = self.info(key_id)
        if info is None:
            raise NotFound("key_id", key_id)
        return info

    def configured(self) -> bool:
        """Whether any key was ever made. Revoking every key does not reopen the server: it stays closed."""
        with self._lock:
            return self._conn.execute("SELECT 1 FROM keys LIMIT 1").fetchone() is not None

    def tenants(self) -> list[str]:
        """Tenants with a live key: the ones the background sweeper visits."""
        with self._lock:
            rows = self._conn.execute("SELECT DISTINCT tenant FROM keys WHERE revoked_at IS NULL ORDER BY tenant")
            return [row[0] for row in rows.fetchall()]

    def open_session(self, key: str, seconds: float, at: Instant = None) -> tuple[str, KeyInfo] | None:
        """Log in with a live key: a new session id (for the cookie; only its hash is kept) lasting `seconds`,
        and the key's description; None if the key does not work."""
        info = self.check(key)
        if info is None:
            return None
        now = to_epoch(at)
        session = secrets.token_urlsafe(32)
        with self._lock:
            self._conn.execute("DELETE FROM sessions WHERE expires_at <= ?", (now,))  # tidy up as we go
            self._conn.execute("INSERT INTO sessions (hash, key_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                               (_hash(session), info.key_id, now, now + seconds))
        return session, info

    def session(self, session: str, at: Instant = None) -> KeyInfo | None:
        """The key behind a session id while both are alive; None once it expired, was closed, or its key was
        revoked."""
        with self._lock:
            row = self._conn.execute("SELECT key_id FROM sessions WHERE hash = ? AND expires_at > ?",
                                     (_hash(session), to_epoch(at))).fetchone()
        info = self.info(row[0]) if row else None
        return info if info is not None and info.revoked_at is None else None

    def close_session(self, session: str) -> None:
        """Log out: the session id stops working at once, in every process."""
        with self._lock:
            self._conn.execute("DELETE FROM sessions WHERE hash = ?", (_hash(session),))
