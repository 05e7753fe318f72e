"""Kill sweeping (and restoring) processes with SIGKILL at random moments, 160 times, and check
after every kill that no record is lost or duplicated across the live store, the archive and the trash."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pyarrow.parquet as pq

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.retention.config import RetentionConfig

from .conftest import DAY, T0

RECORDS = 400
KILLS = 160
KEEP_TRASH = RetentionConfig(grace_days=1e6)  # nothing is purged, so every record must stay findable


def worker(db: str, seed: int) -> None:
    """Forever: move time on, sweep in small batches, then bring some cold and trashed records back."""
    rng = random.Random(seed)
    with Memory(db, embedder=HashEmbedder(), retention=KEEP_TRASH) as mem:
        at = T0.timestamp() + rng.uniform(0, 400) * DAY
        while True:
            at += rng.uniform(1, 20) * DAY
            mem.sweep(at=at, batch_size=37)
            conn = sqlite3.connect(db)
            back = [r[0] for r in conn.execute("SELECT id FROM archive_index ORDER BY random() LIMIT 5")]
            back += [r[0] for r in conn.execute(
                "SELECT id FROM memories WHERE tier = 'trash' ORDER BY random() LIMIT 5")]
            conn.close()
            for memory_id in back:
                mem.restore(memory_id, at=at)


def check(db: Path, archive: Path, expected: set[str], recovered: bool) -> int:
    """Check the invariants; return how many file changes were caught half-done."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        live = [r[0] for r in conn.execute("SELECT id FROM memories")]
        indexed = dict(conn.execute("SELECT id, file FROM archive_index").fetchall())
        intents = {r[0] for r in conn.execute("SELECT file FROM archive_files")}
        assert len(live) == len(set(live)) and not set(live) & set(indexed), "a record in two places"
        assert set(live) | set(indexed) == expected, "a record was lost"
        seqs = {r[0] for r in conn.execute("SELECT seq FROM memories")}
        assert seqs == {r[0] for r in conn.execute("SELECT seq FROM vectors")}
        fts = {r[0] for r in conn.execute("SELECT rowid FROM memories_fts")}
        live_seqs = {r[0] for r in conn.execute("SELECT seq FROM memories WHERE tier IN ('hot', 'warm')")}
        assert fts == live_seqs, "the keyword index disagrees with the live tiers"
    finally:
        conn.close()
    files = {str(p.relative_to(archive)): p for p in archive.rglob("*.parquet")} if archive.exists() else {}
    in_files: dict[str, str] = {}
    for name, path in files.items():
        for memory_id in pq.read_table(path, columns=["id"])["id"].to_pylist():
            assert memory_id not in in_files or name in intents or in_files[memory_id] in intents, \
                f"{memory_id} in two live files"
            in_files.setdefault(memory_id, name)
    for memory_id, file in indexed.items():
        assert file in files, f"{memory_id} points at a missing file"
    stray = set(files) - set(indexed.values())
    assert stray <= intents, f"files nobody indexes and no intent explains: {stray}"
    if recovered:
        assert not stray and not intents
    return len(intents)


def test_sigkill_during_sweeps_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db, embedder=HashEmbedder()) as mem:
        kinds = ["temporary", "episode", "fact", "preference", "decision"]
        expected = {mem.add(f"record {i} about topic {i % 17}", user_id=f"u{i % 3}", kind=kinds[i % 5],
                            priority="P2" if i % 7 == 0 else None, at=T0).records[0].id for i in range(RECORDS)}
    fork = multiprocessing.get_context("fork")
    rng = random.Random(11)
    moved_seen = half_done = 0
    for kill in range(KILLS):
        child = fork.Process(target=worker, args=(str(db), kill))
        child.start()
        time.sleep(rng.uniform(0.02, 0.25))
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join()
        half_done += check(db, tmp_path / "archive", expected, recovered=False) > 0
        if kill % 40 == 39:
            with Memory(db, embedder=HashEmbedder(), retention=KEEP_TRASH) as mem:
                mem.sweep(at=T0.timestamp())  # recovery runs first; at T0 nothing is due to move
                moved_seen += mem.stats()["by_tier"]["cold"] + mem.stats()["by_tier"]["trash"]
            check(db, tmp_path / "archive", expected, recovered=True)
    assert moved_seen > 0, "the workers never moved anything; the kills proved nothing"
    assert half_done > 0, "no kill landed inside an archive file change; the kills proved too little"
