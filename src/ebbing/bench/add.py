"""Single-add latency for a user who already has many records: what judging each new statement against its
neighbours (`ingest.judge`) costs.

    ebbing bench add [--records N] [--adds A] [--json]

One user's store is built with `records` synthetic records (as `bench store` builds it: seeded vectors served by
`FixedEmbedder`, so the numbers are the store's and the judge's, not the embedder's), then copied. Half of the
timed adds restate or change a stored record (a word swapped, a vector at cosine ~0.95 to it, so the judge has
close neighbours to align), half are new. They go through `Memory.add` one at a time on the first copy, and with
`dedupe=False` (no neighbour judgement: guard, classification, rule facts and the write only) on the second, in
the same run; the ratio of the two is the judge's cost. Only public API is used, so the same file measures an
older checkout too (`PYTHONPATH=old/src python src/ebbing/bench/add.py`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from ebbing.bench.store import START, USER, FixedEmbedder, synthesize, vocabulary
from ebbing.embed.base import normalise
from ebbing.memory import Memory


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = np.sort(np.array(samples) * 1000)
    return {"p50": round(float(np.percentile(ordered, 50)), 3), "p95": round(float(np.percentile(ordered, 95)), 3),
            "mean": round(float(ordered.mean()), 3)}


def run(records: int = 10_000, adds: int = 200, dimensions: int = 384, seed: int = 0) -> dict[str, Any]:
    if records < 1 or adds < 2:
        raise ValueError("records must be >= 1 and adds >= 2")
    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    texts = synthesize(rng, records, words)
    matrix = normalise(rng.standard_normal((records, dimensions), dtype=np.float32))
    embedder = FixedEmbedder(dimensions)
    embedder.lookup = dict(zip(texts, matrix, strict=True))
    fresh = synthesize(rng, records + adds, words)[records:]
    timed: list[str] = []
    for i in range(adds):
        if i % 2:  # a new statement
            text, vector = fresh[i], normalise(rng.standard_normal((1, dimensions), dtype=np.float32))[0]
        else:  # a restatement or change of a stored one: one word swapped, nearly the same vector
            target = int(rng.integers(records))
            own = texts[target].split()
            own[int(rng.integers(len(own)))] = str(rng.choice(words))
            text = " ".join(own) + f" {i}"
            noise = rng.standard_normal(dimensions).astype(np.float32) * (0.3 / np.sqrt(dimensions))
            vector = normalise((matrix[target] + noise)[None, :])[0]
        embedder.lookup[text] = vector
        timed.append(text)
    with tempfile.TemporaryDirectory(prefix="ebbing-bench-add-") as tmp:
        source = Path(tmp) / "records.jsonl"
        source.write_text("".join(json.dumps({"text": t, "user_id": USER}, ensure_ascii=False) + "\n"
                                  for t in texts), encoding="utf-8")
        judged_db, plain_db = Path(tmp) / "judged.db", Path(tmp) / "plain.db"
        with Memory(judged_db, embedder=embedder, actor="bench", archive=Path(tmp) / "archive") as mem:
            mem.import_jsonl(source, at=START)
        shutil.copy(judged_db, plain_db)
        results: dict[str, list[float]] = {}
        for name, db, dedupe in (("judged", judged_db, True), ("plain", plain_db, False)):
            with Memory(db, embedder=embedder, actor="bench", archive=Path(tmp) / f"archive-{name}") as mem:
                mem.add("warm up", user_id=USER, at=START + 60, dedupe=dedupe)  # loads the matrix and background
                samples = []
                for step, text in enumerate(timed):
                    began = time.perf_counter()
                    mem.add(text, user_id=USER, at=START + 3600 + step, dedupe=dedupe)
                    samples.append(time.perf_counter() - began)
                results[name] = samples
    judged, plain = _ms(results["judged"]), _ms(results["plain"])
    return {"records": records, "adds": adds, "dimensions": dimensions, "seed": seed,
            "add_ms": judged, "add_without_judge_ms": plain,
            "p50_ratio": round(judged["p50"] / plain["p50"], 3) if plain["p50"] else None}


def render(result: dict[str, Any]) -> Table:
    table = Table("measure", "with the judge", "without (dedupe=False)", title=(
        f"Single add for a user with {result['records']:,} records ({result['adds']} adds, half near a stored one)"),
        title_justify="left")
    for key in ("p50", "p95", "mean"):
        table.add_row(f"add {key}", f"{result['add_ms'][key]:.2f} ms", f"{result['add_without_judge_ms'][key]:.2f} ms")
    table.add_row("p50 ratio", f"{result['p50_ratio']:.2f}x", "1.00x")
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ebbing bench add", description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.records, args.adds, seed=args.seed)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        Console().print(render(result))


if __name__ == "__main__":
    main()
