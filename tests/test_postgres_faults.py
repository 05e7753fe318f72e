"""PostgreSQL under faults: sweeps killed mid-chunk, and the server restarted mid-sweep and mid-add.

A sweep's chunk is one transaction on the sweep's own connection. The tests hold a chunk at a chosen point
inside that transaction (a lock the test holds and the chunk waits for) and kill the sweep right there:
- its backend with `pg_terminate_backend` (SIGTERM), on the session's shared server;
- its backend with SIGKILL, on a server of this file's own: PostgreSQL then ends every session and recovers
  from its WAL, as after a crash;
- the Python process running the sweep (`ebbing worker`'s loop) with SIGKILL;
and they restart their own server in the middle of a sweep and of `Memory.add` (and between calls, and at
random moments of a stream of adds). After every fault each record is in exactly one place (the live table or
the archive) and the rerun sweep moves each to the tier planned for it; the interrupted call fails with a
one-line `StoreError`, and the next call on the same `Memory` succeeds. In all 123 kills mid-chunk (100 SIGKILL
of a backend, 20 SIGTERM of a backend, 3 SIGKILL of a worker process) and 14 restarts.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import suppress
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any

import psycopg
import pyarrow.parquet as pq
import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import StoreError
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.server.keys import KeyStore
from ebbing.server.sweeper import work  # imported here, once: each forked worker would spend a second on it

from .conftest import T0
from .pg import Server

RETAIN = RetentionConfig(grace_days=1e6)  # nothing is purged, so every record must stay findable
DUE = (("fact", 20.0), ("episode", 20.0), ("temporary", 5.0))  # (kind, days old): warm, cold and trash at a sweep
BATCH = 8  # rows per chunk: a sweep is several chunks, and the held one is not the first
# Where a chunk is held, then killed: before its moves to warm and trash ("moves"), after them but before it
# locks the rows bound for the cold tier ("archive"), after it wrote their Parquet file but before it indexed
# them ("index": the file is on disk, noted only as an intent).
STOPS = ("moves", "archive", "index")
TERMINATIONS = 20  # backends ended with SIGTERM (pg_terminate_backend), on the shared server
SIGKILLS = 100  # backends killed with SIGKILL, on this file's own server (each a crash recovery)
WORKER_KILLS = 3  # Python sweep workers killed with SIGKILL, one at each stop (each waits out a client check)
LOST = "lost the connection to PostgreSQL mid-call"

Connection = psycopg.Connection[tuple[Any, ...]]


@pytest.fixture(scope="module")
def own_server() -> Iterator[Server]:
    """A server of this file's own, to kill backends with SIGKILL and restart: either ends every session on
    the server, which the shared one must not do to the tests running beside these. Its commits are
    synchronous, so a crash loses none that was acknowledged."""
    with tempfile.TemporaryDirectory(prefix="ebbing-pg-faults-") as root:
        server = Server(Path(root), crash_safe=True)
        yield server
        server.stop()


@pytest.fixture
def own_url(own_server: Server) -> Iterator[str]:
    name = own_server.create()
    try:
        yield own_server.uri(name)
    finally:
        own_server.wait_ready()  # a test that failed mid-restart leaves the server coming up
        own_server.drop(name)


class Records:
    """One tenant's store, given records due for every move before each sweep; it knows every id it was given."""

    def __init__(self, url: str, archive: Path) -> None:
        self.url, self.archive = url, archive
        self.mem = Memory(url, embedder=HashEmbedder(), archive=archive, retention=RETAIN)
        self.ids: set[str] = set()

    def due(self, at: float) -> tuple[dict[str, str], dict[str, str]]:
        """Add a record that a sweep at `at` moves to warm, one it archives and one it trashes; return the
        sweep's whole plan (id -> tier) and the new records' ids by the tier planned for them."""
        new = {}
        for kind, age in DUE:
            record = self.mem.add(f"note {len(self.ids)}, a {kind}", user_id="u", kind=kind, importance=0.6,
                                  priority="P2" if kind == "temporary" else "P1", at=at - age * DAY,
                                  dedupe=False).records[0]
            self.ids.add(record.id)
            new[record.id] = kind
        plan = {c.id: c.target.value for c in self.mem.sweep(at=at, dry_run=True).changes}
        by_tier = {plan[i]: i for i in new}
        assert set(by_tier) == {"warm", "cold", "trash"}, plan
        return plan, by_tier

    def check(self, *, settled: bool, files: bool = False) -> None:
        """Every record exactly once: in `memories` (hot, warm, trash) or in `archive_index` (cold), never in
        both, with its trash mark set exactly in the trash; every indexed file on disk. A file nobody indexes
        is one a killed chunk wrote, noted as an intent for the next sweep to remove; once a sweep finished
        (`settled`) there is none. `files` also reads the Parquet files (slower): each cold record in its file."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            live = conn.execute("SELECT id, tier, trashed_at IS NOT NULL FROM memories").fetchall()
            cold = dict(conn.execute("SELECT id, file FROM archive_index").fetchall())
            intents = {r[0] for r in conn.execute("SELECT file FROM archive_files")}
        counts = Counter([r[0] for r in live] + list(cold))
        assert set(counts) == self.ids, "a record was lost, or one appeared from nowhere"
        assert max(counts.values()) == 1, f"records in two places: {[i for i, n in counts.items() if n > 1]}"
        assert all(tier in ("hot", "warm", "trash") and trashed == (tier == "trash") for _, tier, trashed in live)
        on_disk = {str(p.relative_to(self.archive)) for p in self.archive.rglob("*.parquet")}
        assert set(cold.values()) <= on_disk, "an archived record points at a missing file"
        stray = on_disk - set(cold.values())
        assert stray <= intents, f"files nobody indexes and no intent explains: {stray}"
        if settled:
            assert not stray and not intents
        if files:
            for file in set(cold.values()):
                held = set(pq.read_table(self.archive / file, columns=["id"])["id"].to_pylist())
                assert {i for i, f in cold.items() if f == file} <= held

    def moved(self, plan: dict[str, str]) -> None:
        """Each planned record is where the plan sends it, and its move is in the audit trail once: a killed
        chunk's events went with its moves. (Records only move down here, so none enters a tier twice.)"""
        with psycopg.connect(self.url, autocommit=True) as conn:
            tiers = dict(conn.execute("SELECT id, tier FROM memories WHERE id = ANY(%s)", (list(plan),)).fetchall())
            tiers |= {r[0]: "cold" for r in conn.execute("SELECT id FROM archive_index WHERE id = ANY(%s)",
                                                         (list(plan),))}
            moves = Counter(conn.execute("SELECT memory_id, data ->> 'to' FROM events WHERE type = 'tier'").fetchall())
        assert tiers == plan
        assert max(moves.values()) == 1 and all(moves[(i, to)] == 1 for i, to in plan.items())


def hold(url: str, stop: str, by_tier: dict[str, str]) -> Connection:
    """A transaction holding what a sweep's chunk waits for at `stop` (see STOPS), until rolled back."""
    conn = psycopg.connect(url)
    if stop == "moves":
        conn.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", (by_tier["trash"],))
    elif stop == "archive":
        conn.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", (by_tier["cold"],))
    else:  # an uncommitted index entry with the record's id: the chunk's own entry waits for it to end
        conn.execute("INSERT INTO archive_index SELECT tenant, id, seq, user_id, 'held-by-the-test', 0, kind, "
                     "importance, priority, pinned, held, security, created_at, last_accessed_at, access_count, "
                     "update_count, jitter FROM memories WHERE id = %s", (by_tier["cold"],))
    return conn


def waiting_for(url: str, holder: Connection, timeout: float = 30.0) -> int:
    """The backend pid of the session that waits for `holder`'s lock, once one does."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as admin:
        while time.monotonic() < deadline:
            row = admin.execute("SELECT pid FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                                (holder.info.backend_pid,)).fetchone()
            if row is not None:
                return int(row[0])
            time.sleep(0.002)
    raise AssertionError("nothing came to wait for the held lock")


def interrupted(call: Callable[[], object], url: str, holder: Connection, fault: Callable[[int], None]) -> str:
    """Run `call` on a thread until it waits for `holder`, apply `fault` to the waiting backend's pid, and
    return the message of the StoreError the call raised."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # whatever it is: the test asserts on it below
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    fault(waiting_for(url, holder))
    thread.join(timeout=60)
    assert not thread.is_alive(), "the interrupted call hung"
    assert failure, "the interrupted call did not fail"
    error = failure[0]
    assert isinstance(error, StoreError), f"{type(error).__name__} leaked: {error}"
    assert "\n" not in str(error)
    assert error.transient == str(error).startswith(LOST), error  # a lost connection may be tried again
    return str(error)


def release(holder: Connection) -> None:
    """End the holding transaction (whose session may have died with the server's other sessions)."""
    if not holder.closed:
        with suppress(psycopg.OperationalError):
            holder.rollback()
    holder.close()


def fault_mid_chunk(records: Records, url: str, n: int, at: float, fault: Callable[[Connection, float], None],
                    *, files: bool = False) -> None:
    """Give `records` new due ones, hold their sweep at `at` inside a chunk (at the n-th of STOPS) and apply
    `fault` there; then check that nothing was lost or doubled, and that the next sweep, on the same `Memory`,
    moves every record where the plan sends it."""
    plan, by_tier = records.due(at)
    holder = hold(url, STOPS[n % len(STOPS)], by_tier)
    try:
        fault(holder, at)
    finally:
        release(holder)
    records.check(settled=False)
    records.mem.sweep(at=at)  # it reconnects, clears what the killed chunk left, and finishes the plan
    records.moved(plan)
    records.check(settled=True, files=files)


def in_sweep(records: Records, url: str, kill: Callable[[int], None], saying: str = ""
             ) -> Callable[[Connection, float], None]:
    """A fault that runs the sweep on a thread of this process and applies `kill` to its waiting backend: the
    sweep must fail with a StoreError saying it lost its connection (and `saying`)."""
    def fault(holder: Connection, at: float) -> None:
        message = interrupted(partial(records.mem.sweep, at=at, batch_size=BATCH), url, holder, kill)
        assert message.startswith(LOST) and saying in message, message
    return fault


def test_sweeps_whose_backend_is_terminated_mid_chunk_lose_and_duplicate_nothing(pg_url: str, tmp_path: Path
                                                                                 ) -> None:
    records = Records(pg_url, tmp_path / "archive")

    def terminate(pid: int) -> None:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

    fault = in_sweep(records, pg_url, terminate, "terminating connection due to administrator command")
    for n in range(TERMINATIONS):
        fault_mid_chunk(records, pg_url, n, T0.timestamp() + n * DAY, fault, files=n == TERMINATIONS - 1)
    records.mem.close()


def test_sweeps_whose_backend_is_killed_with_sigkill_mid_chunk_lose_and_duplicate_nothing(
        own_server: Server, own_url: str, tmp_path: Path) -> None:
    records = Records(own_url, tmp_path / "archive")
    fault = in_sweep(records, own_url, own_server.kill_backend)  # every session ends, the server recovers
    for n in range(SIGKILLS):
        fault_mid_chunk(records, own_url, n, T0.timestamp() + n * DAY, fault, files=n % 25 == 24)
    records.mem.close()


def _worker(url: str, archive: str, keys: str) -> None:
    """`ebbing worker`'s loop, one round, over the default tenant."""

    def open_memory(tenant: str) -> Memory:
        return Memory(url, tenant=tenant, embedder=HashEmbedder(), archive=archive, retention=RETAIN, actor="worker")

    work(KeyStore(keys), open_memory, every=3600.0, rounds=1)


def test_sweep_workers_killed_with_sigkill_mid_chunk_lose_and_duplicate_nothing(pg_url: str, tmp_path: Path
                                                                                ) -> None:
    records = Records(pg_url, tmp_path / "archive")
    fork = multiprocessing.get_context("fork")

    def kill_the_worker(holder: Connection, at: float) -> None:
        worker = fork.Process(target=_worker, args=(pg_url, str(records.archive), str(tmp_path / "keys.db")))
        worker.start()  # it sweeps at its own clock's now, a moment after `at`: the same plan
        orphan = waiting_for(pg_url, holder)
        os.kill(worker.pid or 0, signal.SIGKILL)
        worker.join()
        # Its backend notices the dead client within a second although it still waits for the lock, and rolls
        # its chunk back, freeing the chunk for the next sweep.
        with psycopg.connect(pg_url, autocommit=True) as admin:
            deadline = time.monotonic() + 10
            while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (orphan,)).fetchone():
                assert time.monotonic() < deadline, "the killed worker's backend outlived it"
                time.sleep(0.01)

    for n in range(WORKER_KILLS):
        fault_mid_chunk(records, pg_url, n, time.time(), kill_the_worker, files=n == WORKER_KILLS - 1)
    records.mem.close()


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_server_restart_mid_sweep_fails_that_sweep_and_the_next_succeeds(own_server: Server, own_url: str,
                                                                           tmp_path: Path, mode: str) -> None:
    records = Records(own_url, tmp_path / "archive")
    fault = in_sweep(records, own_url, lambda _: own_server.restart(mode))
    for n in range(len(STOPS)):
        fault_mid_chunk(records, own_url, n, T0.timestamp() + n * DAY, fault, files=True)
    records.mem.close()


def _texts(url: str) -> Counter[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return Counter(r[0] for r in conn.execute("SELECT text FROM memories"))


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_server_restart_mid_add_fails_that_add_and_the_next_succeeds(own_server: Server, own_url: str,
                                                                       tmp_path: Path, mode: str) -> None:
    with Memory(own_url, embedder=HashEmbedder(), archive=tmp_path / "archive") as mem:
        acknowledged = [mem.add(f"note {i} about the deploy pipeline", user_id="u", at=T0).records[0].id
                        for i in range(5)]
        holder = psycopg.connect(own_url)
        holder.execute("LOCK TABLE memories IN SHARE MODE")  # reads go on; the add's insert waits
        message = interrupted(lambda: mem.add("the note cut off by the restart", user_id="u", at=T0), own_url,
                              holder, lambda _: own_server.restart(mode))
        assert message.startswith(LOST)
        release(holder)
        acknowledged += [mem.add(f"note {i} after the restart", user_id="u", at=T0).records[0].id for i in range(3)]
        texts = _texts(own_url)
        assert "the note cut off by the restart" not in texts  # it never committed
        acknowledged.append(mem.add("the note cut off by the restart", user_id="u", at=T0).records[0].id)
        assert sorted(r.id for r in mem.store.scan("default", None)) == sorted(acknowledged)
        assert set(_texts(own_url).values()) == {1}
        # A restart between calls fails none: each connection notices its end before it is used again.
        own_server.restart(mode)
        assert mem.search("deploy pipeline", user_id="u", at=T0)  # the keyword reader's connection too
        acknowledged.append(mem.add("a note after a quiet restart", user_id="u", at=T0).records[0].id)
        assert sorted(r.id for r in mem.store.scan("default", None)) == sorted(acknowledged)


def test_adds_go_on_through_server_restarts_at_random_moments(own_server: Server, own_url: str,
                                                              tmp_path: Path) -> None:
    """Restarts at unplanned moments of a stream of adds: an add cut off fails with a StoreError, the next one
    succeeds, and every acknowledged add is stored once. An add cut off as it committed may have landed, so a
    failed add is stored at most once, and once after it is retried (a note said again merges)."""
    rng = random.Random(5)
    restarts = 4
    up, done = threading.Event(), threading.Event()
    up.set()
    outcomes: list[tuple[str, BaseException | None]] = []  # (text, what its add raised), in order

    def writer() -> None:
        with Memory(own_url, embedder=HashEmbedder(), archive=tmp_path / "archive") as mem:
            i = 0
            while not done.is_set():
                text = f"note {i} about the deploy pipeline"
                i += 1
                try:
                    mem.add(text, user_id="u", at=T0.timestamp() + i)
                except BaseException as exc:  # whatever it is: the test asserts on it below
                    outcomes.append((text, exc))
                    up.wait()  # the next add, once the server is back, must succeed
                    continue
                outcomes.append((text, None))

    thread = threading.Thread(target=writer)
    thread.start()
    for _ in range(restarts):
        time.sleep(rng.uniform(0.05, 0.3))
        up.clear()
        own_server.restart(rng.choice(["fast", "immediate"]))
        up.set()
    time.sleep(0.2)
    done.set()
    thread.join(timeout=60)
    assert not thread.is_alive()
    errors = [error for _, error in outcomes if error is not None]
    assert all(isinstance(e, StoreError) and "\n" not in str(e) for e in errors), errors
    failed = [text for text, error in outcomes if error is not None]
    acknowledged = [text for text, error in outcomes if error is None]
    assert 0 < len(failed) <= restarts and outcomes[-1][1] is None
    assert not any(was and now for (_, was), (_, now) in pairwise(outcomes)), "the add after a failed one failed too"
    texts = _texts(own_url)
    assert all(texts[t] == 1 for t in acknowledged), "an acknowledged add was lost or stored twice"
    assert all(texts[t] <= 1 for t in failed)
    assert len(acknowledged) > 20
    with Memory(own_url, embedder=HashEmbedder(), archive=tmp_path / "archive") as mem:
        for text in failed:
            mem.add(text, user_id="u", at=T0)
    texts = _texts(own_url)
    assert sorted(texts) == sorted(text for text, _ in outcomes) and set(texts.values()) == {1}


def test_a_lost_connection_is_dropped_even_when_it_still_looks_open(pg_url: str, tmp_path: Path) -> None:
    """A batch cut off by a restart can leave psycopg's connection 'open' but stuck in pipeline mode; the store
    must not hand it to the next call (seen once in CI: the add after a restart failed on the old connection)."""
    with Memory(pg_url, embedder=HashEmbedder(), archive=tmp_path / "archive") as mem:
        store: Any = mem.store
        stuck = store._main.get()
        with pytest.raises(StoreError, match="lost the connection"), store._guard():
            raise psycopg.OperationalError("consuming input failed: cannot exit pipeline mode while busy")
        assert stuck.closed and store._main.get() is not stuck
        assert mem.add("the next call works", user_id="u", at=T0).records
