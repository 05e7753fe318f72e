"""Schemathesis 4 over every operation of the served OpenAPI schema, with a valid admin key: valid and
invalid inputs alike must never get a 5xx (a bad request is the client's fault, and says so)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from starlette.types import Receive, Scope, Send

from ebbing.embed.hashing import HashEmbedder
from ebbing.server.app import create_app
from ebbing.server.keys import KeyStore, keys_path
from ebbing.server.limits import Limits

# Built at import, since schemathesis reads the schema when it collects the tests; one store for the module.
_DIR = Path(tempfile.mkdtemp(prefix="ebbing-schemathesis-"))
atexit.register(shutil.rmtree, _DIR, True)
_DB = _DIR / "mem.db"
_keys = KeyStore(keys_path(_DB))
KEY = _keys.create("fuzz", "admin")[0]
_keys.close()
APP = create_app(_DB, embedder=HashEmbedder(), limits=Limits(rate=1e9, burst=10**9))



async def _app_without_lifespan(scope: Scope, receive: Receive, send: Send) -> None:
    """The app with its lifespan answered here: schemathesis starts a test client per call, and the app's
    shutdown would close (and the next call reopen) every tenant's `Memory` each time."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await APP(scope, receive, send)


schema = schemathesis.openapi.from_asgi("/openapi.json", _app_without_lifespan)
schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=25)


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=25, derandomize=True)
def test_no_operation_answers_5xx(case: schemathesis.Case) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {KEY}"}, checks=[not_a_server_error])
