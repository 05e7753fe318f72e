"""Prometheus metrics for `ebbing serve` (at `/metrics`) and `ebbing worker` (`--metrics-port`).

Every series lives in the process's own `CollectorRegistry` (two apps in one process never share counters):

- `ebbing_records{tenant,tier}`: records per tier now (hot, warm, cold, trash), read from the store at scrape;
- `ebbing_moves_total{tenant,from,to,cause}`: records moved between tiers or purged, by cause (retention, expiry,
  priority, manual, request, recall, consolidation, purge, erasure), read from the store's change feed
  (`Memory.events`) at scrape, so they count what every process did, from the store's first event on;
- `ebbing_sweep_duration_seconds{tenant}` and `ebbing_sweep_records_moved_total{tenant}`: the sweeps this
  process ran;
- `ebbing_request_duration_seconds{route,method,status}`: REST and inspector latency by route template;
- `ebbing_embed_batch_size`, `ebbing_embed_queue_wait_seconds`, `ebbing_embed_duration_seconds`: the shared
  embedder's calls, how long each waited for the model and how long the model took.

Only tenants the process has opened are reported: a scrape never opens a store.
"""

from __future__ import annotations

import threading
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ebbing.lifecycle.sweep import SweepReport
from ebbing.memory import Memory

MOVES = ["tier", "purge"]
TIERS = ("hot", "warm", "cold", "trash")


class StoreCollector(Collector):
    """Records by tier and moves by cause for every opened tenant, computed when Prometheus scrapes."""

    def __init__(self, opened: Callable[[], dict[str, Memory]]) -> None:
        self.opened = opened
        self._cursors: dict[str, int] = {}
        self._moves: dict[str, Tally[tuple[str, str, str]]] = {}
        self._lock = threading.Lock()  # two scrapes at once must not count the same events twice

    def collect(self) -> Iterator[Metric]:
        records = GaugeMetricFamily("ebbing_records", "Records per tier now.", labels=["tenant", "tier"])
        moves = CounterMetricFamily("ebbing_moves", "Records moved between tiers or purged, by cause.",
                                    labels=["tenant", "from", "to", "cause"])
        with self._lock:
            for tenant, memory in sorted(self.opened().items()):
                by_tier = memory.stats()["by_tier"]
                for tier in TIERS:
                    records.add_metric([tenant, tier], by_tier.get(tier, 0))
                tally = self._moves.setdefault(tenant, Tally())
                cursor = self._cursors.get(tenant, 0)
                while True:  # the feed since the last scrape, a page at a time
                    page = memory.events(cursor, 1000, MOVES)
                    for event in page["events"]:
                        tally[(event.get("from", ""), event.get("to", "purged"), event["cause"])] += 1
                    if page["next"] == cursor:
                        break
                    cursor = page["next"]
                self._cursors[tenant] = cursor
                for (source, target, cause), count in sorted(tally.items()):
                    moves.add_metric([tenant, source, target, cause], count)
        yield records
        yield moves


class Metrics:
    def __init__(self, opened: Callable[[], dict[str, Memory]]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Histogram("ebbing_request_duration_seconds", "REST and inspector request latency.",
                                  ["route", "method", "status"], registry=self.registry)
        self.sweep_seconds = Histogram("ebbing_sweep_duration_seconds", "Sweeps this process ran.", ["tenant"],
                                       buckets=(0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800),
                                       registry=self.registry)
        self.sweep_moved = Counter("ebbing_sweep_records_moved", "Records the sweeps of this process moved.",
                                   ["tenant"], registry=self.registry)
        self.embed_batch = Histogram("ebbing_embed_batch_size", "Texts per call of the shared embedder.",
                                     buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256), registry=self.registry)
        self.embed_wait = Histogram("ebbing_embed_queue_wait_seconds", "Time a call waited for the model.",
                                    buckets=(0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
                                    registry=self.registry)
        self.embed_seconds = Histogram("ebbing_embed_duration_seconds", "Time the model took per call.",
                                       registry=self.registry)
        self.registry.register(StoreCollector(opened))

    def swept(self, tenant: str, report: SweepReport, seconds: float) -> None:
        self.sweep_seconds.labels(tenant).observe(seconds)
        self.sweep_moved.labels(tenant).inc(len(report.changes))

    def embedded(self, texts: int, waited: float, took: float) -> None:
        self.embed_batch.observe(texts)
        self.embed_wait.observe(waited)
        self.embed_seconds.observe(took)


class RequestTimer:
    """ASGI middleware: each HTTP request's latency under its route template (`/v1/memories/{memory_id}`, not
    the id), method and status; "unmatched" for paths no route serves, so a scan cannot grow the label set."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = {"code": 500}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route: Any = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(template, scope["method"], str(status["code"])).observe(
                time.perf_counter() - start)
