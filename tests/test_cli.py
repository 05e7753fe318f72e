"""The `ebbing` command, run as a real process against a real store."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from ebbing.cli import app

EBBING = str(Path(sys.executable).with_name("ebbing"))
README = Path(__file__).resolve().parents[1] / "README.md"


def run(*args: str, home: Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([EBBING, *args], capture_output=True, text=True, timeout=120,
                            env={"EBBING_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home)})
    if ok:
        assert result.returncode == 0, result.stderr
    return result


def run_json(*args: str, home: Path) -> Any:
    return json.loads(run(*args, "--json", home=home).stdout)


def test_acceptance_bilingual_search_isolation_and_history(ebbing_home: Path) -> None:
    zh = run_json("add", "我的数据库连接超时阈值是 30s", "--user", "alice", home=ebbing_home)["records"][0]
    en = run_json("add", "My database connection timeout threshold is 30s", "--user", "alice",
                  home=ebbing_home)["records"][0]
    run("add", "I like hiking on weekends", "--user", "alice", home=ebbing_home)

    hits = run_json("search", "超时阈值", "--user", "alice", home=ebbing_home)["hits"]
    assert hits[0]["record"]["id"] == zh["id"] and isinstance(hits[0]["score"], float)
    hits = run_json("search", "connection timeout threshold", "--user", "alice", home=ebbing_home)["hits"]
    assert hits[0]["record"]["id"] == en["id"]
    assert run_json("search", "超时阈值", "--user", "bob", home=ebbing_home) == {"hits": []}
    assert run_json("search", "connection timeout threshold", "--user", "bob", home=ebbing_home) == {"hits": []}

    run("search", "超时阈值", "--user", "alice", "--at", "2030-01-01T00:00:00Z", home=ebbing_home)
    events = run_json("history", zh["id"], home=ebbing_home)["events"]
    assert [e["type"] for e in events] == ["add", "access", "access"]
    assert [e["data"]["access_count"] for e in events[1:]] == [1, 2]


def test_errors_are_one_line_and_exit_nonzero(ebbing_home: Path) -> None:
    for args, code, needle in [
        (("add", "   ", "--user", "a"), 2, "text:"),
        (("add", "x", "--user", "a", "--importance", "nan"), 2, "importance:"),
        (("add", "x", "--user", "a", "--kind", "gossip"), 2, "kind:"),
        (("add", "x", "--user", "a", "--at", "soon"), 2, "at:"),
        (("add", "x", "--user", "a", "--metadata", "{bad"), 2, "metadata:"),
        (("add", "x"), 2, "--user: is required"),  # an owner-less memory would be found by nobody
        (("get", "01ZZZZZZZZZZZZZZZZZZZZZZZZ"), 3, "id:"),
        (("search", "x", "--filter", '{"k": {"$zz": 1}}'), 2, "filters.k"),
    ]:
        result = run(*args, home=ebbing_home, ok=False)
        assert result.returncode == code, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and needle in result.stderr, result.stderr
    assert json.loads(run("stats", "--json", home=ebbing_home).stdout)["total"] == 0


def test_every_command_round_trip(ebbing_home: Path, tmp_path: Path) -> None:
    db = tmp_path / "explicit.db"
    record = run_json("--db", str(db), "add", "The on-call phone is +1 555 0100", "--user", "ops",
                      "--metadata", '{"team": "sre"}', "--at", "2026-01-05T09:00:00Z", home=ebbing_home)["records"][0]
    assert not (ebbing_home / "ebbing.db").exists() and db.exists()
    got = run_json("--db", str(db), "get", record["id"], home=ebbing_home)
    assert got["metadata"] == {"team": "sre"} and got["created_at"] == "2026-01-05T09:00:00+00:00"
    assert run_json("--db", str(db), "update", record["id"], "--text", "The on-call phone is +1 555 0199",
                    home=ebbing_home)["text"].endswith("0199")
    assert run_json("--db", str(db), "pin", record["id"], home=ebbing_home)["pinned"] is True
    assert run_json("--db", str(db), "unpin", record["id"], home=ebbing_home)["pinned"] is False
    assert run_json("--db", str(db), "stats", "--user", "ops", home=ebbing_home)["by_tier"]["hot"] == 1
    exported = run("--db", str(db), "export", home=ebbing_home).stdout.splitlines()
    assert [json.loads(line)["id"] for line in exported] == [record["id"]]

    source = tmp_path / "in.jsonl"
    source.write_bytes(b'{"text": "alpha", "user_id": "u"}\n\xff\n{"text": "beta", "user_id": "u"}\n')
    refused = run("import", str(source), home=ebbing_home, ok=False)
    assert refused.returncode == 2 and "line 2: not valid UTF-8" in refused.stderr
    assert run_json("import", str(source), "--skip-invalid", home=ebbing_home) == {
        "imported": 2, "present": 0, "skipped": ["line 2: not valid UTF-8 (byte 0)"]}


def _commands() -> list[str]:
    root = get_command(app)
    names = []
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        sub = getattr(command, "commands", None)
        names.extend(f"{name} {child}" for child in sub) if sub else names.append(name)
    return names


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help_and_is_documented(command: str) -> None:
    # In process: what is checked is the help text, and a process per command cost two minutes of the suite.
    # Every other test here runs the installed `ebbing` as a process.
    result = CliRunner().invoke(app, [*command.split(), "--help"])
    assert result.exit_code == 0 and len(result.stdout) > 100, result.output
    assert re.search(rf"`ebbing {re.escape(command)}\b", README.read_text()), f"README lacks `ebbing {command}`"
