"""One settings module for every surface: precedence, `ebbing config`, global options anywhere, and a
PostgreSQL URL from the CLI, `serve`, `worker` and `mcp`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ebbing.bench.serve import running_server
from ebbing.cli import hoist_global_options
from ebbing.errors import InvalidInput
from ebbing.settings import load

EBBING = str(Path(sys.executable).with_name("ebbing"))


def run(*args: str, env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([EBBING, *args], capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", **env})
    if ok:
        assert result.returncode == 0, result.stderr
    return result


def test_a_flag_beats_the_environment_which_beats_config_toml_which_beats_the_default(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('db = "/from/file.db"\ntenant = "acme"\nembedder = "hash"\n'
                                      'llm_api_key = "sk-file-secret"\n')
    env = {"EBBING_HOME": str(home), "EBBING_TENANT": "from-env"}
    settings = load({"db": "/from/flag.db"}, env)
    assert settings.db == "/from/flag.db" and settings.sources["db"] == "flag"
    assert settings.tenant == "from-env" and settings.sources["tenant"] == "environment"
    assert settings.get("embedder") == "hash" and settings.sources["embedder"] == str(home / "config.toml")
    assert load({}, {"EBBING_HOME": str(tmp_path / "empty")}).db == str(tmp_path / "empty" / "ebbing.db")
    shown = {row["name"]: row for row in settings.shown()}
    assert shown["llm_api_key"]["value"] == "****" and shown["user"]["source"] == "default"

    (home / "config.toml").write_text('colour = "blue"\n')
    with pytest.raises(InvalidInput, match="colour"):
        load({}, env)


def test_ebbing_config_shows_each_value_and_where_it_came_from(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('embedder = "hash"\n')
    env = {"EBBING_HOME": str(home), "EBBING_SECRET_KEY": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA=="}
    shown = json.loads(run("config", "--db", "postgresql://ebbing:hunter2@db.internal/memories", "--json",
                           env=env).stdout)
    assert shown["db"] == {"value": "postgresql://ebbing:****@db.internal/memories", "source": "flag",
                           "env": "EBBING_DB"}
    assert shown["secret_key"]["value"] == "****" and shown["secret_key"]["source"] == "environment"
    assert shown["embedder"] == {"value": "hash", "source": str(home / "config.toml"), "env": "EBBING_EMBEDDER"}


def test_global_options_may_follow_the_command_unless_the_command_has_its_own() -> None:
    assert hoist_global_options(["search", "x", "--db", "a.db", "--user", "u"]) == [
        "--db", "a.db", "search", "x", "--user", "u"]
    assert hoist_global_options(["add", "x", "--read-only", "--tenant=acme"]) == [
        "--tenant=acme", "--read-only", "add", "x"]
    assert hoist_global_options(["keys", "create", "--tenant", "acme"]) == ["keys", "create", "--tenant", "acme"]
    assert hoist_global_options(["serve", "--db", "a.db"]) == ["serve", "--db", "a.db"]
    assert hoist_global_options(["add", "--", "--db"]) == ["add", "--", "--db"]


def test_the_cli_uses_the_embedder_and_store_the_settings_name(tmp_path: Path) -> None:
    env = {"EBBING_HOME": str(tmp_path / "home"), "EBBING_EMBEDDER": "hash", "EBBING_DB": str(tmp_path / "env.db")}
    run("add", "The deploy window is Tuesday at 14:00", "--user", "u", env=env)
    hits = json.loads(run("search", "deploy window", "--user", "u", "--json", env=env).stdout)["hits"]
    assert hits and (tmp_path / "env.db").exists() and not (tmp_path / "home" / "ebbing.db").exists()
    # The store records its embedder: the hash embedder's vectors, so the default model would be refused.
    refused = run("search", "deploy", "--user", "u", env={**env, "EBBING_EMBEDDER": "default"}, ok=False)
    assert refused.returncode == 1 and "hash" in refused.stderr


def test_postgresql_from_every_surface(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--db postgresql://...` for the CLI, `serve`, `worker` and `mcp`: one store, no local SQLite file."""
    env = {"EBBING_HOME": str(tmp_path / "home"), "EBBING_EMBEDDER": "hash", "HOME": str(tmp_path)}
    monkeypatch.chdir(tmp_path)  # a wrong reading of the URL as a path would make a folder here
    run("add", "The staging database runs PostgreSQL 16", "--user", "u", "--db", pg_url, env=env)
    hits = json.loads(run("search", "staging database", "--user", "u", "--json", "--db", pg_url, env=env).stdout)
    assert hits["hits"][0]["record"]["text"] == "The staging database runs PostgreSQL 16"
    key = json.loads(run("keys", "create", "--tenant", "default", "--role", "admin", "--json", "--db", pg_url,
                         env=env).stdout)["key"]

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with running_server(pg_url, log=tmp_path / "server.log") as url:
        headers = {"Authorization": f"Bearer {key}"}
        added = httpx.post(f"{url}/v1/memories", headers=headers, timeout=30,
                           json={"text": "Backups run nightly at 02:00", "user_id": "u"})
        assert added.status_code == 201, added.text
        found = httpx.post(f"{url}/v1/search", headers=headers, timeout=30,
                           json={"query": "staging database", "user_id": "u"}).json()
        assert found["hits"][0]["record"]["text"] == "The staging database runs PostgreSQL 16"

    swept = run("worker", "--rounds", "1", "--every", "0.01", "--db", pg_url, env=env).stdout.splitlines()
    assert [json.loads(line)["tenant"] for line in swept] == ["default"]

    async def recall() -> Any:
        params = StdioServerParameters(command=EBBING, args=["mcp", "--db", pg_url], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            with anyio.fail_after(60):
                return await session.call_tool("recall", {"query": "backups", "user_id": "u"})

    result = anyio.run(recall)
    assert not result.is_error and "Backups run nightly" in json.dumps(result.structured_content)
    assert not any(p.name.startswith("postgres") and p.is_dir() for p in tmp_path.iterdir())
    assert not list(tmp_path.rglob("*.db")) or all(p.name.endswith(".keys.db") for p in tmp_path.rglob("*.db"))
