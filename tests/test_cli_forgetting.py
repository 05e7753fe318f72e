"""The forgetting commands of `ebbing` (sweep, forget, restore, purge, holds, explain, curves, forgotten),
run as a real process against a real store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .test_cli import run, run_json

PNG = b"\x89PNG\r\n\x1a\n"
CREATED = "2026-01-01T09:00:00Z"
SWEEP_AT = "2026-01-10T00:00:00Z"


def _snapshot(home: Path) -> tuple[str, Any]:
    """Everything a sweep could change: every record as exported, and the counts by tier and kind."""
    return run("export", home=home).stdout, run_json("stats", home=home)


def _one_line_error(result: Any, code: int, needle: str) -> None:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and needle in result.stderr, result.stderr


def test_forgetting_lifecycle_end_to_end(ebbing_home: Path, tmp_path: Path) -> None:
    # Kind, priority and importance given, so the judged salience (tests/test_deep_recall.py) sets none of them.
    note = run_json("add", "Remind me to buy milk on the way home", "--kind", "temporary", "--priority", "P2",
                    "--user", "alice", "--at", CREATED, home=ebbing_home)["records"][0]["id"]
    fact = run_json("add", "The staging database runs PostgreSQL 16", "--kind", "fact", "--importance", "0.6",
                    "--user", "alice", "--at", CREATED, home=ebbing_home)["records"][0]["id"]
    keeper = run_json("add", "Bob's desk is on the third floor", "--user", "bob", "--pin", "--at", CREATED,
                      home=ebbing_home)["records"][0]["id"]

    # A dry run reports the moves and changes nothing.
    before = _snapshot(ebbing_home)
    dry = run_json("sweep", "--dry-run", "--at", SWEEP_AT, home=ebbing_home)
    assert dry["dry_run"] is True and dry["evaluated"] == 3
    moves = {c["id"]: (c["from"], c["to"]) for c in dry["changes"]}
    assert moves == {note: ("hot", "trash"), fact: ("hot", "warm")}
    assert dry["transitions"] == {"hot->trash": 1, "hot->warm": 1}
    assert all(c["reason"] for c in dry["changes"])
    assert _snapshot(ebbing_home) == before
    human = run("sweep", "--dry-run", "--at", SWEEP_AT, home=ebbing_home).stdout
    assert "dry run" in human and "hot -> trash" in human and note in human
    assert _snapshot(ebbing_home) == before

    # The real sweep moves them: the note to the trash, the fact to warm; the pinned one stays hot.
    done = run_json("sweep", "--at", SWEEP_AT, home=ebbing_home)
    assert done["dry_run"] is False and {c["id"]: (c["from"], c["to"]) for c in done["changes"]} == moves
    assert run_json("stats", home=ebbing_home)["by_tier"] == {"hot": 1, "warm": 1, "cold": 0, "trash": 1}
    assert run_json("get", note, home=ebbing_home)["tier"] == "trash"
    assert run_json("get", keeper, home=ebbing_home)["tier"] == "hot"

    # The forgetting report says what went and why.
    report = run_json("forgotten", "--since", "2026-01-01", home=ebbing_home)["forgotten"]
    assert [(e["memory_id"], e["type"], e["data"]["to"], e["tier_now"]) for e in report] == [
        (note, "tier", "trash", "trash")]
    assert report[0]["reason"].startswith("retention") and report[0]["preview"].startswith("Remind me")
    assert run_json("forgotten", "--until", "2026-01-09", home=ebbing_home) == {"forgotten": []}

    # Restore brings it back warm; a legal hold blocks forgetting until released.
    assert run_json("restore", note, home=ebbing_home)["tier"] == "warm"
    assert run_json("hold", note, home=ebbing_home)["held"] is True
    _one_line_error(run("forget", note, home=ebbing_home, ok=False), 1, "legal hold")
    assert run_json("get", note, home=ebbing_home)["tier"] == "warm"
    released = run("release", note, home=ebbing_home).stdout
    assert note in released and "warm" in released
    forgot = run_json("forget", note, "--reason", "bought it", home=ebbing_home)
    assert forgot["tier"] == "trash" and forgot["held"] is False
    restored = run("restore", note, home=ebbing_home).stdout
    assert note in restored and "warm" in restored

    # A recall after the sweep, so the fact's curve has a jump in it.
    hits = run_json("search", "staging database", "--user", "alice", "--limit", "1", "--at", "2026-01-11",
                    home=ebbing_home)["hits"]
    assert [h["record"]["id"] for h in hits] == [fact]

    explained = run_json("explain", fact, "--at", "2026-01-12", home=ebbing_home)
    assert explained["id"] == fact and 0 < explained["score"] <= 1
    assert set(explained["policies"]) >= {"ebbinghaus", "priority", "importance"}
    assert explained["projected"]["tier"] in ("warm", "cold", "trash") and explained["projected"]["at"] > "2026-01-12"
    assert explained["access_count"] == 1 and explained["exempt"] is False
    human = run("explain", keeper, home=ebbing_home).stdout
    assert "score" in human and "exempt" in human and "pinned" in human and "none foreseen" in human

    plot = tmp_path / "plots" / "out.png"
    shown = run("explain", fact, "--at", "2026-01-12", "--plot", str(plot), home=ebbing_home).stdout
    assert str(plot) in shown and "next move" in shown
    assert plot.read_bytes()[:8] == PNG and plot.stat().st_size > 10_000

    kinds = tmp_path / "kinds.png"
    assert str(kinds) in run("curves", "--plot", str(kinds), "--days", "90", home=ebbing_home).stdout
    assert kinds.read_bytes()[:8] == PNG and kinds.stat().st_size > 10_000

    # Purge needs --yes; without it nothing changes.
    before = _snapshot(ebbing_home)
    _one_line_error(run("purge", note, home=ebbing_home, ok=False), 2, "purge erases for good; add --yes")
    _one_line_error(run("purge-user", "alice", home=ebbing_home, ok=False), 2, "add --yes")
    assert _snapshot(ebbing_home) == before
    assert run_json("purge", note, "--yes", home=ebbing_home) == {"purged": note}
    _one_line_error(run("get", note, home=ebbing_home, ok=False), 3, "id:")
    causes = run("forgotten", "--since", "2026-01-01", home=ebbing_home).stdout.strip().splitlines()[-1]
    assert causes == "3 forgotten: retention 1, manual 1, purge 1", causes
    purged = run_json("forgotten", home=ebbing_home)["forgotten"]
    assert purged[-1]["type"] == "purge" and purged[-1]["tier_now"] == "purged" and purged[-1]["preview"] is None

    # Erasing a user takes every one of their records and nobody else's.
    assert run_json("purge-user", "alice", "--yes", home=ebbing_home) == {"user_id": "alice", "purged": 1}
    _one_line_error(run("get", fact, home=ebbing_home, ok=False), 3, "id:")
    assert run_json("stats", home=ebbing_home)["total"] == 1
    assert "purged 0 memories of alice" in run("purge-user", "alice", "--yes", home=ebbing_home).stdout
