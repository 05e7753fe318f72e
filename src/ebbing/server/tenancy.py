"""Who is asking, and their tenant's `Memory`.

`principal` (a FastAPI dependency) reads the key from `Authorization: Bearer <key>`, or else the key behind
the inspector's session cookie `ebbing_session` (set by its login form; see `InspectorSessions`, keys.py),
and charges the key's rate limit. With no key ever made (open mode, which `ebbing serve` allows on loopback
only) every request is the local admin of tenant "default".

Thread-safety, by design: the server keeps ONE `Memory` per tenant, all on the same SQLite file, each with
its own connections, and one lock per tenant. `memory_for` hands out that `Memory` behind a thin proxy that
holds the tenant's lock for each method call (a generator's result, such as `export`'s, is read to the end
under the lock). Routes call one method each, so a request's store work runs under the lock as a whole; a page
that calls several methods gets each of them serialised. The text an add, a search or a context embeds is
embedded before the lock is taken (`batching.BatchingEmbedder.prepare`), so the lock is not held while the
model runs, and concurrent requests' texts share one model call. The lock is taken by a worker thread that is
already running, never while waiting for one, so a burst of requests for one tenant cannot deadlock the thread pool.
Different tenants run side by side; SQLite's WAL and busy timeout order their writes. The shared embedder
makes every model call from one thread of its own, because a model is not known to be safe to call from two
threads at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

from fastapi import Depends, Request, Response

from ebbing.memory import Memory
from ebbing.server.batching import BatchingEmbedder
from ebbing.server.errors import Forbidden, RateLimited, Unauthorized
from ebbing.server.keys import KeyInfo, KeyStore
from ebbing.server.limits import Limits, RateLimiter, bearer
from ebbing.server.metrics import Metrics
from ebbing.validate import MAX_TEXT_BYTES

COOKIE = "ebbing_session"  # an opaque session id, never the key
LEGACY_COOKIE = "ebbing_key"  # older servers kept the key itself here: it is ignored, and cleared at login
SESSION_SECONDS = 12 * 3600
LOCAL = "local"


@dataclass(frozen=True)
class Principal:
    tenant: str
    role: Literal["agent", "admin"]
    key_id: str  # public id of the key, never the secret
    source: str | None = None  # the one source the key's adds may claim (`KeyInfo.source`), None: any


class Serialised:
    """A tenant's `Memory` whose every method call holds the tenant's lock (see the module docstring)."""

    def __init__(self, memory: Memory, lock: threading.RLock, embedder: BatchingEmbedder | None = None) -> None:
        self._memory = memory
        self._lock = lock
        self._embedder = embedder

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._memory, name)
        if not callable(value) or name.startswith("_"):
            return value

        def locked(*args: Any, **kwargs: Any) -> Any:
            prepared = self._prepare(name, args, kwargs)
            try:
                with self._lock:
                    result = value(*args, **kwargs)
                    if isinstance(result, Iterator):  # a lazy result must be read while the lock is held
                        return iter(list(result))
                    return result
            finally:
                if prepared and self._embedder is not None:  # what the call did not use (it failed first)
                    self._embedder.discard(*prepared)

        return locked

    def _prepare(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[str], bool] | None:
        """Embed the call's text outside the lock. Only a hint: text the call will refuse, or change before it
        embeds it (a secret replaced by its placeholder), is embedded again under the lock as before."""
        if self._embedder is None or name not in EMBEDS_FIRST:
            return None
        field, query = EMBEDS_FIRST[name]
        texts = [kwargs.get(field, args[0] if args else None), kwargs.get("goal") if name == "context" else None]
        # what the call will refuse (it names the field) stays out of the model call other requests share
        wanted = [t.strip() for t in texts if isinstance(t, str) and _embeddable(t)]
        self._embedder.prepare(wanted, query=query)
        return wanted, query


def _embeddable(text: str) -> bool:
    if not text.strip() or "\x00" in text or len(text) > 4 * MAX_TEXT_BYTES:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


# The methods whose text is embedded before the tenant's lock is taken: (argument, as a query?).
EMBEDS_FIRST = {"add": ("text", False), "search": ("query", True), "context": ("query", True)}


class Tenants:
    """One `Memory` per tenant, opened on first use, each behind its own lock."""

    def __init__(self, open_memory: Callable[[str], Memory], embedder: BatchingEmbedder | None = None) -> None:
        self._open = open_memory
        self._embedder = embedder
        self._memories: dict[str, Memory] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._opening = threading.Lock()

    def memory(self, tenant: str) -> Memory:
        """The tenant's `Memory`, safe to share between threads (each call holds the tenant's lock)."""
        with self._opening:
            if tenant not in self._memories:
                self._memories[tenant] = self._open(tenant)
                self._locks[tenant] = threading.RLock()
            return cast(Memory, Serialised(self._memories[tenant], self._locks[tenant], self._embedder))

    def opened(self) -> list[str]:
        with self._opening:
            return sorted(self._memories)

    def open_ones(self) -> dict[str, Memory]:
        """Every tenant opened so far, by name (each call holds the tenant's lock); opens nothing."""
        with self._opening:
            return {t: cast(Memory, Serialised(m, self._locks[t], self._embedder)) for t, m in self._memories.items()}

    def close(self) -> None:
        with self._opening:
            for tenant, memory in self._memories.items():
                with self._locks[tenant]:
                    memory.close()
            self._memories.clear()


@dataclass
class Server:
    """What the routes share; lives at `app.state.ebbing`."""

    keys: KeyStore
    tenants: Tenants
    limits: Limits
    limiter: RateLimiter
    secure_cookies: bool = False  # mark the session cookie Secure even on plain HTTP (TLS ends before us)
    metrics: Metrics | None = None  # Prometheus series (server/metrics.py); None: /metrics is off

    def body_limit(self, headers: dict[str, str]) -> int:
        """The body limit of the caller in these headers: their key's own if it checks out, else the default
        (a made-up key id must not borrow another key's larger limit)."""
        key = bearer(headers)
        session = None if key else _cookie(headers.get("cookie", ""))
        info = self.keys.check(key) if key else self.keys.session(session) if session else None
        return info.max_body if info and info.max_body else self.limits.max_body


def _cookie(header: str) -> str | None:
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return value
    return None


def server_of(request: Request) -> Server:
    return cast(Server, request.app.state.ebbing)


def _principal(info: KeyInfo) -> Principal:
    return Principal(info.tenant, info.role, info.key_id, info.source)


def _secure(request: Request) -> bool:
    """Whether cookies get the Secure flag: when told so, or over HTTPS. uvicorn takes the scheme from
    X-Forwarded-Proto only when a proxy it trusts sent it (FORWARDED_ALLOW_IPS, loopback by default)."""
    return server_of(request).secure_cookies or request.url.scheme == "https"


class InspectorSessions:
    """The inspector's logins (its `Sessions`), kept in the key store so every server process on the store
    agrees on them; the cookie holds a random session id, never the key (see keys.py)."""

    def open(self, request: Request, key: str, response: Response) -> Principal | None:
        """For the login form: a session for a live key, its id set as an HttpOnly, SameSite=Strict cookie on
        `response` (Secure as `_secure` says). None, and no cookie, for a bad key."""
        keys = server_of(request).keys
        opened = keys.open_session(key, SESSION_SECONDS)
        if opened is None:
            return None
        earlier = request.cookies.get(COOKIE)
        if earlier:  # logging in again replaces this browser's session rather than leaving it to expire
            keys.close_session(earlier)
        session, info = opened
        secure = _secure(request)
        response.set_cookie(COOKIE, session, max_age=SESSION_SECONDS, path="/", httponly=True, samesite="strict",
                            secure=secure)
        if LEGACY_COOKIE in request.cookies:  # a raw key an older server left in this browser: gone now
            response.delete_cookie(LEGACY_COOKIE, path="/", httponly=True, samesite="strict", secure=secure)
        return _principal(info)

    def close(self, request: Request, response: Response) -> None:
        """For the logout button: the session ends on the server (in every process), and its cookie goes."""
        session = request.cookies.get(COOKIE)
        if session:
            server_of(request).keys.close_session(session)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=_secure(request))


def principal(request: Request) -> Principal:
    """FastAPI dependency: the caller, authenticated and rate-limited once per request."""
    cached = getattr(request.state, "ebbing_principal", None)
    if isinstance(cached, Principal):
        return cached
    server = server_of(request)
    key = bearer(dict(request.headers))
    session = None if key else request.cookies.get(COOKIE)
    rate, burst = server.limits.rate, server.limits.burst
    if key:
        info = server.keys.check(key)
        if info is None:
            raise Unauthorized("the API key is unknown or revoked", "authorization")
    elif not server.keys.configured():
        info = None  # open mode: everyone is the local admin, whatever stale cookie they bring
    elif session:
        info = server.keys.session(session)
        if info is None:
            raise Unauthorized("the inspector session expired, was logged out or its key was revoked: log in "
                               "again", "authorization")
    else:
        raise Unauthorized("an API key is required: send the header `Authorization: Bearer <key>`",
                           "authorization")
    if info is None:
        who = Principal("default", "admin", LOCAL)
    else:
        who = _principal(info)
        rate, burst = info.rate or rate, info.burst or burst
    wait = server.limiter.take(who.key_id, rate, burst)
    if wait > 0:
        raise RateLimited(f"too many requests for this key (limit {rate:g}/s, burst {burst}); retry in {wait:.2f}s",
                          wait)
    request.state.ebbing_principal = who
    return who


def admin(who: Annotated[Principal, Depends(principal)]) -> Principal:
    """FastAPI dependency for admin-only routes."""
    if who.role != "admin":
        raise Forbidden("this route needs an admin key", "authorization")
    return who


def memory_for(request: Request, who: Annotated[Principal, Depends(principal)]) -> Memory:
    """FastAPI dependency: the caller's tenant's `Memory`, each method call under the tenant's lock."""
    return server_of(request).tenants.memory(who.tenant)
