"""Store benchmark: add throughput and search latency of one user's store, against plain numpy.

    python -m ebbing.bench.store [--records N] [--queries Q] [--dim D] [--seed S] [--db PATH] [--json]

Vectors are seeded random unit vectors served by `FixedEmbedder`, so no model is loaded and the numbers
are the store's, not the embedder's. Texts are random words (Zipf-like frequencies) from a vocabulary of
generated pseudo-words plus real English and Chinese words, so the FTS index holds realistic content.
Records go in through `Memory.import_jsonl` (256 per transaction), or with `--direct` straight into the store
(10,000 per transaction, no write-path judgements: for stores of millions); searches pass `query_vector`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from ebbing.bench import postgres
from ebbing.embed.base import normalise
from ebbing.memory import Memory
from ebbing.model import Kind, MemoryRecord, Priority, Scope, content_hash, new_id
from ebbing.recall.background import BACKGROUND_EN, BACKGROUND_ZH
from ebbing.text.terms import STOPWORDS, query_terms, terms

USER = "bench"
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z: records are added at this time, searched an hour later
TARGET_RECORDS, TARGET_P50_MS = 100_000, 10.0
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


class FixedEmbedder:
    """Serves pre-computed vectors by text; any other text (the background passages) gets a vector
    seeded from its hash. `misses` counts those, so the build can check every record hit the lookup."""

    def __init__(self, dimensions: int) -> None:
        self.name = f"bench-fixed-{dimensions}"
        self.dimensions = dimensions
        self.lookup: dict[str, np.ndarray] = {}
        self.misses = 0

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            vector = self.lookup.get(text)
            if vector is None:
                self.misses += 1
                digest = hashlib.blake2b(f"{query}:{text}".encode(), digest_size=8).digest()
                seed = int.from_bytes(digest, "little")
                vector = normalise(np.random.default_rng(seed).standard_normal(self.dimensions))[0]
            out[row] = vector
        return out


def vocabulary(rng: np.random.Generator, pseudo: int = 5_000) -> list[str]:
    """Real English and Chinese words (from the background passages) and `pseudo` made-up words,
    shuffled so that rank (hence frequency) does not depend on the language."""
    english = {w for s in BACKGROUND_EN for w in re.findall(r"[a-z]+", s.lower()) if len(w) > 2} - STOPWORDS
    han = re.compile(r"[\u4e00-\u9fff]{2,}")
    chinese = {w for s in BACKGROUND_ZH for w in terms(s) if han.fullmatch(w)}
    made: set[str] = set()
    while len(made) < pseudo:
        made.add("".join(rng.choice(_SYLLABLES, size=int(rng.integers(2, 5)))))
    words = sorted(english) + sorted(chinese) + sorted(made - english)
    return [words[i] for i in rng.permutation(len(words))]


def synthesize(rng: np.random.Generator, count: int, words: list[str]) -> list[str]:
    """`count` distinct texts of 8-20 words with Zipf-Mandelbrot frequencies, 1/(rank + 10)^1.07: the
    commonest word is in ~1/5 of the texts, like a common content word (stop words are not indexed)."""
    weights = 1.0 / (np.arange(1, len(words) + 1) + 10.0) ** 1.07
    lengths = rng.integers(8, 21, size=count)
    picks = rng.choice(len(words), size=int(lengths.sum()), p=weights / weights.sum())
    texts: list[str] = []
    seen: set[str] = set()
    ends = np.cumsum(lengths)
    for end, length in zip(ends, lengths, strict=True):
        text = " ".join(words[i] for i in picks[end - length : end])
        while text in seen:  # vanishingly rare; keeps text -> vector one to one
            text += " " + words[int(rng.integers(len(words)))]
        seen.add(text)
        texts.append(text)
    return texts


def _ms(samples: list[float]) -> dict[str, float]:
    values = np.asarray(samples) * 1000
    p50, p99 = np.percentile(values, [50, 99])
    return {"p50": round(float(p50), 3), "p99": round(float(p99), 3), "mean": round(float(values.mean()), 3)}


def _peak_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def run(records: int = 100_000, queries: int = 200, dimensions: int = 384, seed: int = 0,
        path: Path | None = None, progress: bool = True, backend: str = "sqlite",
        url: str | None = None, users: int = 1, direct: bool = False) -> dict[str, Any]:
    """Build a store of `records` synthetic records spread over `users` users (record i is user i mod `users`'s),
    time adds and per-user searches; return numbers. With more than one user, each queried user's first search
    (which loads that user's vectors) is timed apart as a cold search, then the same search again as the warm
    one, and numpy scans only that user's vectors. `backend="postgres"` measures the PostgreSQL store instead:
    on `url`, or on a throwaway server. `direct` writes the records straight into the store (10,000 a
    transaction) instead of through `import_jsonl`'s write path: the way to build a store of millions in minutes
    when only the search is measured."""
    if records < 1 or queries < 1 or dimensions < 2 or not 1 <= users <= records:
        raise ValueError("records and queries must be >= 1, dimensions >= 2, 1 <= users <= records")
    owners = [USER] if users == 1 else [f"{USER}-{i:05d}" for i in range(users)]
    if path is not None and path.exists():
        raise FileExistsError(f"{path} exists; the benchmark needs a fresh store")
    rng = np.random.default_rng(seed)
    if backend not in ("sqlite", "postgres"):
        raise ValueError("backend must be sqlite or postgres")
    with tempfile.TemporaryDirectory(prefix="ebbing-bench-") as tmp, \
            Progress(console=Console(stderr=True), transient=True, disable=not progress) as bar, \
            (postgres.database(url) if backend == "postgres" else nullcontext(None)) as server:
        db = path if path is not None else Path(tmp) / "bench.db"
        location: str | Path = server[1] if server else db
        texts = synthesize(rng, records, vocabulary(rng))
        matrix = normalise(rng.standard_normal((records, dimensions), dtype=np.float32))
        embedder = FixedEmbedder(dimensions)
        embedder.lookup = dict(zip(texts, matrix, strict=True))
        source = Path(tmp) / "records.jsonl"
        with source.open("w", encoding="utf-8") as out:
            for index, text in enumerate(texts):
                out.write(json.dumps({"text": text, "user_id": owners[index % users]}, ensure_ascii=False) + "\n")

        building = bar.add_task("adding records", total=records)
        with Memory(location, embedder=embedder, actor="bench", archive=Path(tmp) / "archive") as mem:
            began = time.perf_counter()
            if direct:
                _write_directly(mem, texts, matrix, owners, lambda done: bar.update(building, completed=done))
            else:
                mem.import_jsonl(source, at=START,
                                 on_progress=lambda done, _: bar.update(building, completed=done))
            write_seconds = time.perf_counter() - began
            if embedder.misses:
                raise RuntimeError(f"{embedder.misses} records missed the vector lookup")
            peak_after_build = _peak_mb()

            targets = rng.integers(records, size=queries)
            noise = rng.standard_normal((queries, dimensions), dtype=np.float32) * (0.6 / np.sqrt(dimensions))
            vectors = normalise(matrix[targets] + noise)  # cosine to the target ~0.86
            phrases = []
            for target in targets:
                own = texts[target].split()
                picks = rng.choice(len(own), size=min(len(own), int(rng.integers(2, 4))), replace=False)
                phrases.append(" ".join(own[i] for i in picks))
            at = START + 3600

            owner_of = np.arange(records) % users
            began = time.perf_counter()  # the first search loads the matrix and the background vectors
            mem.search(phrases[0], user_id=owners[owner_of[targets[0]]], limit=10, query_vector=vectors[0], at=at)
            cold_seconds = time.perf_counter() - began

            searching = bar.add_task("searching", total=queries)
            timings: list[float] = []
            cold_users: list[float] = []  # with many users: each queried user's first search
            warmed = {int(owner_of[targets[0]])}
            found = keyword_hits = 0
            for phrase, vector, target in zip(phrases, vectors, targets, strict=True):
                owner = int(owner_of[target])
                if owner not in warmed:
                    warmed.add(owner)
                    began = time.perf_counter()
                    mem.search(phrase, user_id=owners[owner], limit=10, query_vector=vector, at=at)
                    cold_users.append(time.perf_counter() - began)
                began = time.perf_counter()
                hits = mem.search(phrase, user_id=owners[owner], limit=10, query_vector=vector, at=at)
                timings.append(time.perf_counter() - began)
                found += any(h.record.text == texts[target] for h in hits)
                # Untimed: how many records the keyword index offers this search (50 asked), so a quiet
                # keyword side shows (a term counted too common is not matched at all).
                keyword_hits += len(mem.store.keyword_search(Scope(mem.tenant, owners[owner]), query_terms(phrase),
                                                             50, None))
                bar.advance(searching)

            baseline: list[float] = []
            agree = 0
            scopes = {o: np.flatnonzero(owner_of == o) for o in {int(owner_of[t]) for t in targets}}
            scoped = {o: matrix[rows] for o, rows in scopes.items()}  # each user's own vectors, as the store holds
            for vector, target in zip(vectors, targets, strict=True):
                owner = int(owner_of[target])
                began = time.perf_counter()
                top = scopes[owner][np.argpartition(-(scoped[owner] @ vector), min(9, len(scopes[owner]) - 1))[:10]]
                baseline.append(time.perf_counter() - began)
                agree += int(target in top)

            wal = db.with_name(db.name + "-wal")
            db_mb = postgres.disk_mb(str(location)) if server else db.stat().st_size / 2**20
            wal_mb = wal.stat().st_size / 2**20 if wal.exists() else 0.0

    ebbing, numpy = _ms(timings), _ms(baseline)
    result: dict[str, Any] = {
        "backend": backend, "records": records, "users": users, "dimensions": dimensions, "queries": queries,
        "seed": seed, "written": "directly into the store" if direct else "through import_jsonl",
        "add_seconds": round(write_seconds, 3), "add_records_per_s": round(records / write_seconds, 1),
        "cold_start_ms": round(cold_seconds * 1000, 3),
        "search_ms": ebbing, "numpy_ms": numpy,
        "cold_user_search_ms": _ms(cold_users) if cold_users else None,
        "p50_ratio": round(ebbing["p50"] / numpy["p50"], 2) if numpy["p50"] else None,
        "target_found": round(found / queries, 4), "numpy_target_found": round(agree / queries, 4),
        "keyword_hits_per_search": round(keyword_hits / queries, 2),
        "db_mb": round(db_mb, 2), "wal_mb": round(wal_mb, 2), "disk_mb": round(db_mb + wal_mb, 2),
        "peak_rss_after_build_mb": peak_after_build, "peak_rss_mb": _peak_mb(),
    }
    if records >= TARGET_RECORDS:
        result["target"] = f"search p50 <= {TARGET_P50_MS:g} ms at {TARGET_RECORDS:,} records"
        result["target_met"] = ebbing["p50"] <= TARGET_P50_MS
    return result


def plain_records(texts: list[str], matrix: np.ndarray, rows: range, owners: Sequence[str],
                  tenant: str = "default") -> list[MemoryRecord]:
    """Records as a store holds them, built without the write path (no guard, classification or judgement):
    row i is texts[i] with vector matrix[i], owned by owners[i mod len(owners)]."""
    at = datetime.fromtimestamp(START, UTC)
    return [MemoryRecord(id=new_id(START), text=texts[i], kind=Kind.FACT, importance=0.5, priority=Priority.P1,
                         created_at=at, updated_at=at, tenant=tenant, user_id=owners[i % len(owners)],
                         content_hash=content_hash(texts[i]), embedding=matrix[i]) for i in rows]


def _write_directly(mem: Memory, texts: list[str], matrix: np.ndarray, owners: list[str],
                    advance: Callable[[int], object]) -> None:
    """Records straight into the store, 10,000 a transaction."""
    for start in range(0, len(texts), 10_000):
        batch = plain_records(texts, matrix, range(start, min(start + 10_000, len(texts))), owners, mem.tenant)
        mem.store.insert(batch, [terms(r.text) for r in batch], [])
        advance(start + len(batch))


def render(result: dict[str, Any]) -> Table:
    spread = f" over {result['users']:,} users" if result.get("users", 1) > 1 else ""
    title = (f"ebbing store benchmark: {result['records']:,} records{spread} x {result['dimensions']} dims, "
             f"{result['queries']} queries")
    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    ebbing, numpy = result["search_ms"], result["numpy_ms"]
    rows = [
        ("add throughput (import_jsonl, 256/txn)" if result.get("written", "").startswith("through")
         else "add throughput (straight into the store, 10,000/txn)", f"{result['add_records_per_s']:,.0f} records/s"),
        ("add time", f"{result['add_seconds']:.2f} s"),
        ("cold start (first search: load vectors)", f"{result['cold_start_ms']:.1f} ms"),
        ("search p50 / p99 / mean", f"{ebbing['p50']:.2f} / {ebbing['p99']:.2f} / {ebbing['mean']:.2f} ms"),
        ("numpy brute force p50 / p99", f"{numpy['p50']:.3f} / {numpy['p99']:.3f} ms"),
        *([("a user's first search (loads its vectors) p50 / p99",
            f"{result['cold_user_search_ms']['p50']:.2f} / {result['cold_user_search_ms']['p99']:.2f} ms")]
          if result.get("cold_user_search_ms") else []),
        ("ratio ebbing p50 / numpy p50", f"{result['p50_ratio']}x"),
        ("queries whose target is in the top 10 (ebbing / numpy)",
         f"{result['target_found']:.1%} / {result['numpy_target_found']:.1%}"),
        *([("keyword index hits per search (of 50 asked)", f"{result['keyword_hits_per_search']:.1f}")]
          if "keyword_hits_per_search" in result else []),
        ("disk: db + wal", f"{result['db_mb']:.1f} + {result['wal_mb']:.1f} = {result['disk_mb']:.1f} MB"),
        ("peak RSS (after build / end)",
         f"{result['peak_rss_after_build_mb']:.0f} / {result['peak_rss_mb']:.0f} MB"),
    ]
    if "target_met" in result:
        rows.append((result["target"], "[green]met[/]" if result["target_met"] else "[red]NOT met[/]"))
    for name, value in rows:
        table.add_row(name, value)
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ebbing.bench.store",
                                     description="Benchmark the store: add throughput, search latency.")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", type=Path, default=None, help="write the store here (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--users", type=int, default=1)
    parser.add_argument("--direct", action="store_true", help="write straight into the store, not via import")
    args = parser.parse_args(argv)  # both stores side by side: `ebbing bench store --backend postgres`
    result = run(args.records, args.queries, args.dim, args.seed, args.db, progress=not args.json, users=args.users,
                 direct=args.direct)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        Console().print(render(result))


if __name__ == "__main__":
    main()
