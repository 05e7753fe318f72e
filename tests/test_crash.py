"""kill -9 in the middle of writing leaves every record whole (row, keyword terms, vector) or absent."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder

WRITER = """
import sys
from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
mode, db, source, start = sys.argv[1:5]
with Memory(db, embedder=HashEmbedder()) as mem:
    mem.search("warm up", user_id="u")  # loads the tokenizers and background before the clock starts
    print("ready", flush=True)
    if mode == "import":  # each round resumes the killed import: what a run committed is not added again
        mem.import_jsonl(source, on_progress=lambda done, total: print(done, flush=True))  # a batch committed
        print("done", flush=True)
        sys.stdin.read()
    for i in range(int(start), int(start) + 100_000):  # new texts each round: a said-again note merges
        mem.add(f"note number {i} about the deploy pipeline", user_id="u", at=1_767_600_000 + i)
        print(i, flush=True)  # the test kills after a random number of committed adds, not after a set time
"""


def check_consistent(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        rows = {r[0] for r in conn.execute("SELECT seq FROM memories")}
        vectors = {r[0] for r in conn.execute("SELECT seq FROM vectors")}
        terms = {r[0] for r in conn.execute("SELECT rowid FROM memories_fts")}
        added = {r[0] for r in conn.execute("SELECT memory_id FROM events WHERE type = 'add'")}
        ids = {r[0] for r in conn.execute("SELECT id FROM memories")}
        assert rows == vectors == terms, "a record is missing its vector or keyword terms"
        assert ids == added, "a record without its add event, or an event without its record"
        return len(rows)
    finally:
        conn.close()


LINES = 6_000  # more than eight killed rounds get through, so each round resumes a partial import


@pytest.mark.parametrize("mode", ["import", "add"])
def test_sigkill_mid_write_leaves_whole_records(tmp_path: Path, mode: str) -> None:
    source = tmp_path / "in.jsonl"
    with open(source, "w") as handle:
        for i in range(LINES):
            handle.write(json.dumps({"text": f"imported fact {i} about service {i % 97}", "user_id": "u"}) + "\n")
    db = tmp_path / "crash.db"
    rng = random.Random(7)
    counts: list[int] = []
    for round_ in range(8):
        child = subprocess.Popen([sys.executable, "-c", WRITER, mode, str(db), str(source), str(round_ * 100_000)],
                                 stdout=subprocess.PIPE, stdin=subprocess.PIPE,
                                 env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
        # Progress is counted, not timed: a busy machine writes slowly, and a round that wrote nothing proves
        # nothing. The random sleep after that puts the kill anywhere inside the next add or import batch.
        wanted = rng.randint(1, 60) if mode == "add" else rng.randint(1, 3)
        while wanted:
            line = child.stdout.readline()
            assert line and line.strip() != b"done", "the writer died or finished before it was killed"
            # A resumed import first reports the batches an earlier round committed; only new ones count.
            wanted -= mode == "add" or int(line) > (counts[-1] if counts else 0)
        time.sleep(rng.uniform(0.0, 0.02 if mode == "add" else 0.3))
        child.send_signal(signal.SIGKILL)
        child.wait()
        counts.append(check_consistent(db))
    assert counts == sorted(counts) and len(set(counts)) > 4, f"writers made too little progress: {counts}"
    with Memory(db, embedder=HashEmbedder()) as mem:
        assert mem.stats()["total"] == counts[-1]
        assert mem.search("deploy pipeline" if mode == "add" else "service 5", user_id="u")
        if mode == "import":  # the last run completes the file: every line exactly once
            report = mem.import_jsonl(source)
            assert report.imported + report.present == LINES and report.present == counts[-1]
            texts = [r["text"] for r in mem.export()]
            assert len(texts) == len(set(texts)) == LINES
