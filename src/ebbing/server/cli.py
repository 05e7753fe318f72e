"""`ebbing serve`, `ebbing keys create|list|revoke` and `ebbing worker`: the server's commands.

Settings come from `ebbing.settings`, as for every command: the store (`--db` path or `postgresql://` URL),
`EBBING_SECRET_KEY`, `EBBING_EMBEDDER`, `EBBING_LLM_*`, `EBBING_COOKIE_SECURE` (as `--secure-cookies`).
"""

from __future__ import annotations

import ipaddress
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ebbing.errors import InvalidInput
from ebbing.extras import require
from ebbing.settings import Settings, from_command

if TYPE_CHECKING:
    from ebbing.server.webhooks import Webhook

keys_app = typer.Typer(help="API keys for `ebbing serve`: each belongs to one tenant and has a role (agent or "
                       "admin). Only a hash is kept; a key is shown once, when it is created.",
                       no_args_is_help=True)

DbOpt = Annotated[str | None, typer.Option("--db", help="SQLite file or postgresql:// URL (default: the global "
                                           "--db, else EBBING_DB, else $EBBING_HOME/ebbing.db).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _settings(db: str | None) -> Settings:
    return from_command(db=db)


def _webhook(settings: Settings) -> Webhook | None:
    """The webhook the settings name, if any (EBBING_WEBHOOK_URL, EBBING_WEBHOOK_SECRET): checked before serving."""
    from ebbing.server.webhooks import Webhook

    url = settings.get("webhook_url")
    if not url:
        return None
    if not url.startswith(("http://", "https://")):
        raise InvalidInput("EBBING_WEBHOOK_URL", "must be an http:// or https:// URL")
    secret = settings.get("webhook_secret")
    if not secret or len(secret) < 16:
        raise InvalidInput("EBBING_WEBHOOK_SECRET", "must be set, at least 16 characters, when a webhook URL is")
    return Webhook(url, secret)


def _keys_file(db: str | None) -> Path:
    return _settings(db).keys_file


def _print(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8420,
    db: DbOpt = None,
    sweep_every: Annotated[float, typer.Option("--sweep-every", help="Seconds between background sweeps of "
                                               "every tenant (jittered ±25%); 0 turns them off, e.g. when "
                                               "`ebbing worker` sweeps instead.")] = 3600.0,
    rate: Annotated[float, typer.Option("--rate", help="Requests per second per key (a key may set its own).")]
    = 50.0,
    burst: Annotated[int, typer.Option("--burst", help="Requests a key may make at once.")] = 100,
    max_body: Annotated[int, typer.Option("--max-body", help="Largest request body per key, in bytes.")]
    = 1_000_000,
    secure_cookies: Annotated[bool, typer.Option("--secure-cookies",
                                                 help="Mark the inspector's session cookie Secure even on plain "
                                                 "HTTP, e.g. behind a TLS proxy (over HTTPS it always is); "
                                                 "also EBBING_COOKIE_SECURE=1.")]
    = False,
    metrics: Annotated[bool, typer.Option("--metrics/--no-metrics", help="Serve Prometheus metrics at /metrics "
                                          "(no key needed: keep it behind your proxy).")] = True,
    webhook_every: Annotated[float, typer.Option("--webhook-every", help="Seconds between pushes of the change "
                                                 "feed to EBBING_WEBHOOK_URL, when it is set.", min=0.1)] = 5.0,
) -> None:
    """Serve the REST API (/v1, OpenAPI at /docs) and the inspector (/) over HTTP. Needs API keys
    (`ebbing keys create`) unless it listens on a loopback address."""
    require("server", "ebbing serve")
    import uvicorn

    from ebbing.llm.openai import OpenAIChat
    from ebbing.server.app import create_app
    from ebbing.server.keys import KeyStore
    from ebbing.server.limits import Limits

    settings = _settings(db)
    path = settings.db
    if rate <= 0 or burst < 1 or max_body < 1:
        raise InvalidInput("rate" if rate <= 0 else "burst" if burst < 1 else "max_body", "must be > 0")
    store = KeyStore(settings.keys_file)
    configured = store.configured()
    store.close()
    if not configured and not is_loopback(host):
        raise InvalidInput("host", f"no API key exists for {path}, so the server may only listen on a loopback "
                           "address; create one with `ebbing keys create --tenant NAME --role admin` first")
    app = create_app(path, embedder=settings.embedder(), keys=settings.keys_file, limits=Limits(rate, burst, max_body),
                     sweep_every=sweep_every or None, secret_key=settings.get("secret_key") or None,
                     secure_cookies=secure_cookies or settings.cookie_secure(), archive=settings.archive,
                     llm=OpenAIChat.from_env(settings.llm_env()), metrics_on=metrics, webhook=_webhook(settings),
                     webhook_every=webhook_every, sources=settings.source_order())
    shown = next(row["value"] for row in settings.shown() if row["name"] == "db")  # without a URL's password
    mode = "keys required" if configured else "open: no keys yet, loopback only"
    print(f"ebbing serving {shown} on http://{host}:{port} ({mode})", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


@keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant the key belongs to.")],
    role: Annotated[str, typer.Option("--role", help="agent (own tenant's memories) or admin (also sweep, "
                                      "purge, hold).")] = "agent",
    note: Annotated[str, typer.Option("--note", help="What the key is for.")] = "",
    rate: Annotated[float | None, typer.Option("--rate", help="This key's requests per second.")] = None,
    burst: Annotated[int | None, typer.Option("--burst", help="This key's burst.")] = None,
    max_body: Annotated[int | None, typer.Option("--max-body", help="This key's largest body, bytes.")] = None,
    source: Annotated[str | None, typer.Option("--source", help="Bind the key to one source (tool, agent, ...): "
                                               "what it adds is stored as said by that source, whatever the "
                                               "request claims.")] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a key and print it: the only time it is shown."""
    from ebbing.server.keys import KeyStore

    store = KeyStore(_keys_file(db))
    try:
        key, info = store.create(tenant, role, note=note, rate=rate, burst=burst, max_body=max_body, source=source)
    finally:
        store.close()
    if as_json:
        _print({"key": key, "tenant": info.tenant, "role": info.role, "key_id": info.key_id, "source": info.source})
    else:
        bound = f", source {info.source}" if info.source else ""
        print(f"{key}\n(tenant {info.tenant}, role {info.role}{bound}, id {info.key_id}; this key is not shown again)")


@keys_app.command("list")
def keys_list(
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's keys.")] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List keys by public id (never the key itself), with tenant, role and revocation."""
    from ebbing.server.keys import KeyStore

    store = KeyStore(_keys_file(db))
    try:
        rows = [k.to_dict() for k in store.entries(tenant)]
    finally:
        store.close()
    if as_json:
        _print(rows)
        return
    for row in rows:
        state = f"revoked {row['revoked_at']}" if row["revoked_at"] else "live"
        bound = f"  source {row['source']}" if row.get("source") else ""
        print(f"{row['key_id']}  {row['tenant']}  {row['role']}{bound}  created {row['created_at']}  {state}  "
              f"{row['note']}")


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's public id (from `ebbing keys list`).")],
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Revoke a key: it stops working at once, also on a running server."""
    from ebbing.server.keys import KeyStore

    store = KeyStore(_keys_file(db))
    try:
        info = store.revoke(key_id)
    finally:
        store.close()
    _print(info.to_dict()) if as_json else print(f"revoked {info.key_id} (tenant {info.tenant})")


def _summary(tenant: str, report: dict[str, Any]) -> None:
    print(json.dumps({"tenant": tenant, **{k: v for k, v in report.items() if k != "changes"}}), flush=True)


def worker(
    every: Annotated[float, typer.Option("--every", help="Seconds between sweeps (jittered ±25%).")] = 3600.0,
    rounds: Annotated[int | None, typer.Option("--rounds", help="Stop after this many rounds (default: "
                                                "never).")] = None,
    db: DbOpt = None,
    metrics_port: Annotated[int | None, typer.Option("--metrics-port", help="Serve Prometheus metrics at "
                                                     "http://127.0.0.1:PORT/metrics.", min=1, max=65535)] = None,
) -> None:
    """Sweep every tenant with a live key on a schedule, as a process of its own (run `ebbing serve
    --sweep-every 0` beside it)."""
    require("server", "ebbing worker")
    from ebbing.memory import Memory
    from ebbing.server.keys import KeyStore
    from ebbing.server.sweeper import work
    from ebbing.server.webhooks import Deliverer

    if every <= 0:
        raise InvalidInput("every", "must be > 0 seconds")
    settings = _settings(db)
    embedder = settings.embedder()
    hook = _webhook(settings)

    def open_memory(tenant: str) -> Memory:
        return settings.memory("worker", tenant=tenant, embedder=embedder)

    store = KeyStore(settings.keys_file)
    deliverer = Deliverer(hook, store) if hook is not None else None
    try:
        work(store, open_memory, every, rounds, on_report=lambda tenant, report: _summary(tenant, report.to_dict()),
             metrics_port=metrics_port, deliverer=deliverer)
    finally:
        if deliverer is not None:
            deliverer.close()
        store.close()
