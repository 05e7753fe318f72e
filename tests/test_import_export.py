from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebbing import InvalidInput, Memory

from .conftest import T0


def _write(path: Path, lines: list[object]) -> Path:
    with open(path, "wb") as handle:
        for line in lines:
            handle.write(line if isinstance(line, bytes) else (json.dumps(line, ensure_ascii=False) + "\n").encode())
    return path


GOOD = [
    {"text": "The VPN endpoint is vpn.example.org", "user_id": "alice", "at": "2026-01-01T10:00:00Z"},
    {"text": "我喜欢用 Vim 写代码", "user_id": "alice", "at": 1767261600, "metadata": {"src": "chat"}},
    {"text": "Bob's build server is ci-7", "user_id": "bob", "kind": "fact", "importance": 0.7},
]


def test_import_adds_every_line_with_its_fields(mem: Memory, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    report = mem.import_jsonl(_write(tmp_path / "in.jsonl", GOOD), at=T0,
                              on_progress=lambda done, total: seen.append((done, total)))
    assert report.imported == 3 and report.skipped == []
    assert seen[-1] == (3, 3)
    alice = {r["text"]: r for r in mem.export(user_id="alice")}
    assert alice["The VPN endpoint is vpn.example.org"]["created_at"] == "2026-01-01T10:00:00+00:00"
    assert alice["我喜欢用 Vim 写代码"]["metadata"] == {"src": "chat"}
    assert alice["我喜欢用 Vim 写代码"]["kind"] == "preference"
    (bob,) = mem.export(user_id="bob")
    assert bob["created_at"] == T0.isoformat() and bob["importance"] == 0.7


@pytest.mark.parametrize(("bad", "message"), [
    (b"\xff\xfe not utf-8\n", "line 2: not valid UTF-8"),
    (b"{not json}\n", "line 2: not valid JSON"),
    (b"[1, 2]\n", "line 2: must be a JSON object"),
    (b'{"text": ""}\n', "line 2: text"),
    (b'{"text": "x", "importance": 7}\n', "line 2: importance"),
    (b'{"text": "x", "usr_id": "typo"}\n', "line 2: usr_id: unknown field"),
    (b'{"text": "x", "at": "someday"}\n', "line 2: at"),
])
def test_one_bad_line_imports_nothing(mem: Memory, tmp_path: Path, bad: bytes, message: str) -> None:
    path = _write(tmp_path / "in.jsonl", [GOOD[0], bad, GOOD[1]])
    with pytest.raises(InvalidInput, match=message):
        mem.import_jsonl(path)
    assert mem.stats()["total"] == 0


def test_skip_invalid_imports_the_rest_and_reports_lines(mem: Memory, tmp_path: Path) -> None:
    path = _write(tmp_path / "in.jsonl", [GOOD[0], b"\xc3\x28\n", b"\n", GOOD[1], b'{"text": " "}\n', GOOD[2]])
    report = mem.import_jsonl(path, skip_invalid=True)
    assert report.imported == 3
    assert [p.split(":")[0] for p in report.skipped] == ["line 2", "line 5"]


def test_export_then_import_round_trips(mem: Memory, tmp_path: Path) -> None:
    mem.import_jsonl(_write(tmp_path / "in.jsonl", GOOD), at=T0)
    first = mem.export()
    out = _write(tmp_path / "export.jsonl", list(first))
    with Memory(tmp_path / "copy.db", embedder=mem.embedder) as copy:
        assert copy.import_jsonl(out).imported == 3
        keys = ("id", "text", "kind", "importance", "priority", "user_id", "created_at", "metadata")
        assert [{k: r[k] for k in keys} for r in copy.export()] == [{k: r[k] for k in keys} for r in mem.export()]
        again = copy.import_jsonl(out)  # ids are kept, so a re-import adds nothing
        assert (again.imported, again.present) == (0, 3) and copy.stats()["total"] == 3


def test_importing_the_same_lines_twice_adds_them_once(mem: Memory, tmp_path: Path) -> None:
    lines = [{"text": "The office moved to 5 Hill Road", "user_id": "u", "at": "2026-01-02T00:00:00Z"},
             {"text": "Standup is at 9:30", "user_id": "u"},  # no time: identified by scope and text alone
             {"text": "Standup is at 9:30", "user_id": "v"},  # another user's line is another record
             {"text": "The office moved to 5 Hill Road", "user_id": "u", "at": "2026-03-02T00:00:00Z"},  # said again
             {"text": "Standup is at 9:30", "user_id": "u"}]  # the same line twice in one file
    path = _write(tmp_path / "lines.jsonl", lines)
    first = mem.import_jsonl(path, at=T0)
    assert (first.imported, first.present) == (4, 1)
    ids = {r["id"] for r in mem.export()}
    mem.sweep(at="2026-06-01T00:00:00Z")  # some of them archived: still found as present
    second = mem.import_jsonl(path, at="2026-06-02T00:00:00Z")  # another day: untimed lines keep their id
    assert (second.imported, second.present) == (0, 5)
    assert {r["id"] for r in mem.export()} == ids and len(ids) == 4


def test_export_with_embeddings(mem: Memory) -> None:
    mem.add("vectors travel too", user_id="u", at=T0)
    (row,) = mem.export(embeddings=True)
    assert len(row["embedding"]) == mem.embedder.dimensions
