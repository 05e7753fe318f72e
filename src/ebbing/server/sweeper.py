"""Sweeps on a jittered schedule: inside the server process, or in a separate worker (`ebbing worker`).

Each round sweeps every tenant that has a live key (and "default" while the server is open), one tenant at
a time, each under that tenant's lock (as a request would be). The wait between rounds is
`every` seconds ± 25 %, so several servers or workers on one store do not sweep in step.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable

from prometheus_client import start_http_server
from starlette.concurrency import run_in_threadpool

from ebbing.errors import EbbingError
from ebbing.lifecycle.sweep import SweepReport
from ebbing.memory import Memory
from ebbing.server.keys import KeyStore
from ebbing.server.metrics import Metrics
from ebbing.server.tenancy import Server
from ebbing.server.webhooks import Deliverer

log = logging.getLogger("ebbing.server.sweeper")


def jittered(every: float, rng: random.Random) -> float:
    return every * rng.uniform(0.75, 1.25)


def tenants_to_sweep(keys: KeyStore, opened: list[str]) -> list[str]:
    names = set(keys.tenants()) | set(opened)
    if not keys.configured():
        names.add("default")
    return sorted(names)


async def sweep_round(server: Server) -> dict[str, SweepReport]:
    reports: dict[str, SweepReport] = {}
    for tenant in tenants_to_sweep(server.keys, server.tenants.opened()):
        try:
            memory = await run_in_threadpool(server.tenants.memory, tenant)
            started = time.perf_counter()
            reports[tenant] = await run_in_threadpool(memory.sweep)  # under the tenant's lock, as requests are
            if server.metrics is not None:
                server.metrics.swept(tenant, reports[tenant], time.perf_counter() - started)
        except EbbingError as exc:  # one tenant's failure must not stop the others' sweeps
            log.error("sweep of tenant %s failed: %s", tenant, exc)
            continue
        log.info("swept tenant %s: %s", tenant, reports[tenant].transitions)
    return reports


def every_tenant(server: Server) -> dict[str, Memory]:
    """The tenants a round serves (those with a live key, and any opened), each opened if need be."""
    return {t: server.tenants.memory(t) for t in tenants_to_sweep(server.keys, server.tenants.opened())}


async def deliver_forever(deliverer: Deliverer, server: Server, every: float) -> None:
    """Push the change feed to the webhook every `every` seconds (server/webhooks.py)."""
    while True:
        await run_in_threadpool(lambda: deliverer.round(every_tenant(server)))
        await asyncio.sleep(every)


async def sweep_forever(server: Server, every: float, seed: int | None = None) -> None:
    rng = random.Random(seed)
    while True:
        await asyncio.sleep(jittered(every, rng))
        await sweep_round(server)


def work(keys: KeyStore, open_memory: Callable[[str], Memory], every: float, rounds: int | None = None,
         seed: int | None = None, on_report: Callable[[str, SweepReport], None] | None = None,
         metrics_port: int | None = None, metrics_host: str = "127.0.0.1", deliverer: Deliverer | None = None) -> None:
    """The separate worker: sweep every tenant, wait a jittered `every`, again (`rounds` times, or forever).
    With `metrics_port`, Prometheus metrics are served at http://metrics_host:metrics_port/metrics; with a
    `deliverer`, the change feed goes to its webhook after every round."""
    rng = random.Random(seed)
    memories: dict[str, Memory] = {}
    metrics = None
    if metrics_port is not None:  # a scrape reads the stores from the exporter's thread; their calls are locked
        metrics = Metrics(lambda: dict(memories))
        start_http_server(metrics_port, addr=metrics_host, registry=metrics.registry)
    done = 0
    try:
        while rounds is None or done < rounds:
            for tenant in tenants_to_sweep(keys, []):
                try:
                    if tenant not in memories:
                        memories[tenant] = open_memory(tenant)
                    started = time.perf_counter()
                    report = memories[tenant].sweep()
                    if metrics is not None:
                        metrics.swept(tenant, report, time.perf_counter() - started)
                except EbbingError as exc:  # a database restart fails this sweep; the next round reconnects
                    log.error("sweep of tenant %s failed: %s", tenant, exc)
                    continue
                if on_report:
                    on_report(tenant, report)
            if deliverer is not None:
                deliverer.round(dict(memories))
            done += 1
            if rounds is None or done < rounds:
                time.sleep(jittered(every, rng))
    finally:
        for memory in memories.values():
            memory.close()
