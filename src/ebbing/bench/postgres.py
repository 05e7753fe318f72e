"""The PostgreSQL side of `ebbing bench store` and `ebbing bench sweep` (`--backend postgres`).

A database comes from `--url` (your own PostgreSQL with pgvector; the role needs CREATEDB for the sweep
benchmark) or, without one, from a throwaway `pgserver` (PostgreSQL 16 + pgvector) in a temp dir, stopped
after. Its settings are the server's defaults (fsync on): the numbers are a real server's, on this machine.

Sweep benchmark, PostgreSQL: the same synthetic population as the SQLite run (`ebbing.bench.sweep.population`,
same seed) is bulk-loaded with COPY into a template database (indexes built after the load), then for each
worker count a fresh copy of that database is made (`CREATE DATABASE ... TEMPLATE`, a file copy) and that
many worker processes run `Memory.sweep(at=NOW)` on it at once; the time is from the moment all workers are
ready to the moment the last one is done. Every run must make the same moves and leave a consistent store.
"""

from __future__ import annotations

import multiprocessing
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
import pyarrow.parquet as pq

from ebbing.embed.base import normalise
from ebbing.memory import Memory
from ebbing.model import new_id
from ebbing.retention.base import KINDS, PRIORITIES
from ebbing.retention.config import RetentionConfig
from ebbing.store.sqlite import jitter


@contextmanager
def database(url: str | None) -> Iterator[tuple[str, str]]:
    """(server URL, URL of an empty database with pgvector): a fresh database on `url`'s server, or on a
    throwaway server."""
    if url is not None:
        yield from _fresh(url)
        return
    from pgserver.postgres_server import get_server

    with tempfile.TemporaryDirectory(prefix="ebbing-bench-pg-") as root:
        server: Any = get_server(Path(root), cleanup_mode="stop")
        try:
            yield from _fresh(str(server.get_uri("postgres")))
        finally:
            server.cleanup()


def with_database(url: str, name: str) -> str:
    """`url` pointing at database `name` (kept: host, port, user, query such as a socket directory)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _admin(url: str) -> psycopg.Connection[tuple[Any, ...]]:
    return psycopg.connect(url, autocommit=True)


def _fresh(url: str, name: str = "ebbing_bench") -> Iterator[tuple[str, str]]:
    with _admin(url) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    target = with_database(url, name)
    with _admin(target) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    try:
        yield url, target
    finally:
        with _admin(url) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def disk_mb(url: str) -> float:
    with _admin(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return round(int(row[0]) / 2**20, 2) if row else 0.0


# -- sweep --------------------------------------------------------------------------------------------------

def copy_load(url: str, pop: Any, rng: np.random.Generator, embedder: Any, on_progress: Callable[[int], None]
              | None = None) -> None:
    """Fill a fresh store with the population, keys 1..N in creation order, as `PostgresStore.insert` lays the
    rows out; the keyword index is dropped for the load and built after it (a sweep reads no vector index)."""
    from ebbing.bench.sweep import CHUNK, DIMENSIONS, TENANT, USERS, vocabulary

    Memory(url, embedder=embedder).close()  # the schema, the vector width, the embedder's name
    words, word_terms = vocabulary(rng)
    users = [f"user-{i:03d}" for i in range(USERS)]
    kinds = [k.value for k in KINDS]
    priorities = [p.value for p in PRIORITIES]
    with _admin(url) as conn:
        conn.execute("DROP INDEX memories_terms")
        columns = ("tenant, seq, id, user_id, text, kind, importance, priority, pinned, held, security, tier, "
                   "created_at, updated_at, last_accessed_at, access_count, update_count, content_hash, jitter, "
                   "terms, embedding")
        for start in range(0, len(pop), CHUNK):
            end = min(start + CHUNK, len(pop))
            vectors = normalise(rng.standard_normal((end - start, DIMENSIONS), dtype=np.float32))
            with conn.transaction(), conn.cursor() as cursor, \
                    cursor.copy(f"COPY memories ({columns}) FROM STDIN") as copy:
                for i in range(start, end):
                    chosen = rng.integers(len(words), size=int(rng.integers(4, 9))).tolist()
                    created = float(pop.created_at[i])
                    last = float(pop.last_accessed_at[i])
                    record_id = new_id(created)
                    copy.write_row((
                        TENANT, i + 1, record_id, users[i % USERS], " ".join(words[w] for w in chosen),
                        kinds[pop.kind[i]], float(pop.importance[i]), priorities[pop.priority[i]], bool(pop.pinned[i]),
                        bool(pop.held[i]), bool(pop.security[i]), str(pop.tier[i]), created, created,
                        None if np.isnan(last) else last, int(pop.access_count[i]), int(pop.update_count[i]),
                        f"bench-{i}", jitter(record_id), [t for w in chosen for t in word_terms[w]],
                        "[" + ",".join(repr(float(v)) for v in vectors[i - start]) + "]"))
            if on_progress:
                on_progress(end)
        conn.execute("SELECT setval('memory_keys', %s)", (len(pop),))
        conn.execute("SET maintenance_work_mem = '1GB'")  # the GIN build below
        conn.execute("CREATE INDEX memories_terms ON memories USING gin (terms) WHERE trashed_at IS NULL")
        conn.execute("VACUUM ANALYZE memories")


def _worker(url: str, archive: str, config: RetentionConfig, now: float, start: Any, out: Any) -> None:
    from ebbing.bench.sweep import TinyEmbedder

    with Memory(url, embedder=TinyEmbedder(), retention=config, archive=archive, actor="bench") as mem:
        start.wait()
        began = time.time()
        report = mem.sweep(at=now)
        out.put((began, time.time(), report.transitions))


def _check(url: str, archive: Path, records: int) -> dict[str, Any]:
    with _admin(url) as conn:
        count = {name: int(conn.execute(sql).fetchone()[0]) for name, sql in {  # type: ignore[index]
            "memories": "SELECT count(*) FROM memories",
            "archive_index": "SELECT count(*) FROM archive_index",
            "pending_intents": "SELECT count(*) FROM archive_files",
            "tier_events": "SELECT count(*) FROM events WHERE type = 'tier'",
            "records_moved_twice": "SELECT count(*) FROM (SELECT memory_id FROM events WHERE type = 'tier' "
                                   "GROUP BY memory_id HAVING count(*) > 1) t",
        }.items()}
    files = sorted(archive.rglob("*.parquet")) if archive.exists() else []
    count["parquet_rows"] = sum(pq.read_metadata(f).num_rows for f in files)
    count["consistent"] = (count["memories"] + count["archive_index"] == records
                           and count["archive_index"] == count["parquet_rows"] and count["pending_intents"] == 0
                           and count["records_moved_twice"] == 0)
    return count


def sweep_run(records: int, moving: float, seed: int, url: str | None, workers: Sequence[int] = (1, 2, 4),
              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build the population in PostgreSQL, then time a dry run and a full sweep with each worker count."""
    from ebbing.bench.sweep import NOW, TinyEmbedder, population

    config = RetentionConfig()
    rng = np.random.default_rng(seed)
    pop, designed = population(rng, records, moving, config)
    out: dict[str, Any] = {"records": records, "designed": designed, "runs": {}}
    with database(url) as (server, template), tempfile.TemporaryDirectory(prefix="ebbing-bench-pg-") as tmp:
        began = time.perf_counter()
        copy_load(template, pop, rng, TinyEmbedder(), lambda done: progress and progress(f"loaded {done:,}"))
        out["build_seconds"] = round(time.perf_counter() - began, 3)
        out["db_mb"] = disk_mb(template)
        with Memory(template, embedder=TinyEmbedder(), retention=config, archive=Path(tmp) / "dry") as mem:
            began = time.perf_counter()
            dry = mem.sweep(at=NOW, dry_run=True)
            out["dry_run"] = {"seconds": round(time.perf_counter() - began, 3), "evaluated": dry.evaluated,
                              "moving": len(dry.changes), "transitions": dry.transitions}
        for count in workers:
            if progress:
                progress(f"sweep with {count} worker(s)")
            out["runs"][str(count)] = _timed_sweep(server, template, count, config, NOW, Path(tmp) / str(count),
                                                   records)
    return out


def _timed_sweep(server: str, template: str, workers: int, config: RetentionConfig, now: float, archive: Path,
                 records: int) -> dict[str, Any]:
    name = f"ebbing_bench_w{workers}"
    with _admin(server) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name} TEMPLATE {urlsplit(template).path.lstrip('/')} STRATEGY FILE_COPY")
    url = with_database(template, name)
    try:
        context = multiprocessing.get_context("fork")
        start, queue = context.Barrier(workers), context.Queue()
        processes = [context.Process(target=_worker, args=(url, str(archive), config, now, start, queue))
                     for _ in range(workers)]
        for process in processes:
            process.start()
        results = [queue.get(timeout=3600) for _ in processes]
        for process in processes:
            process.join()
        transitions: dict[str, int] = {}
        for _, _, moved in results:
            for key, value in moved.items():
                transitions[key] = transitions.get(key, 0) + value
        return {"seconds": round(max(r[1] for r in results) - min(r[0] for r in results), 3),
                "moved": sum(transitions.values()), "transitions": transitions,
                "check": _check(url, archive, records)}
    finally:
        with _admin(server) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
