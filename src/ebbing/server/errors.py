"""Errors become HTTP responses here and nowhere else: `{"error": {"type", "message", "field"}}`.

    EbbingError (ebbing.errors)     status
    ├── InvalidInput                400 invalid_input   (a rule of the engine; the field is named)
    ├── NotFound                    404 not_found       (also a foreign tenant's id: nobody can tell them apart)
    ├── Conflict                    409 conflict
    ├── StoreError                  503 store_unavailable (with Retry-After when it is transient: a lock, a restart)
    └── ServerError (below)
        ├── Unauthorized            401 unauthorized    (no key, unknown or revoked key)
        ├── Forbidden               403 forbidden       (an agent key on an admin route)
        ├── TooLarge                413 too_large
        └── RateLimited             429 rate_limited    (with Retry-After)
    FastAPI's request validation    422 invalid_request (the field is the dotted location; "body" for bad JSON)
    Starlette's HTTP errors         their own status    (unknown route 404, wrong method 405)
    anything else (a bug)           500 server_error    (the same shape; the traceback goes to the log)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ebbing.errors import Conflict, EbbingError, InvalidInput, NotFound, StoreError

STORE_RETRY_AFTER = 1  # seconds a client waits after a transient store failure before trying again


class ServerError(EbbingError):
    status = 500
    type = "server_error"

    def __init__(self, message: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)


class Unauthorized(ServerError):
    status = 401
    type = "unauthorized"


class Forbidden(ServerError):
    status = 403
    type = "forbidden"


class TooLarge(ServerError):
    status = 413
    type = "too_large"


class RateLimited(ServerError):
    status = 429
    type = "rate_limited"

    def __init__(self, message: str, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(message)


def error_response(status: int, type_: str, message: str, field: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"type": type_, "message": message, "field": field}}, status_code=status,
                        headers=headers)


def _ebbing_error(request: Request, exc: Exception) -> JSONResponse:
    if isinstance(exc, ServerError):
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthorized) else None
        if isinstance(exc, RateLimited):
            headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))}
        return error_response(exc.status, exc.type, str(exc), exc.field, headers)
    if isinstance(exc, InvalidInput):
        return error_response(400, "invalid_input", str(exc), exc.field)
    if isinstance(exc, NotFound):
        return error_response(404, "not_found", str(exc), exc.field)
    if isinstance(exc, Conflict):
        return error_response(409, "conflict", str(exc))
    if isinstance(exc, StoreError):
        # A lock held by another process or a restarted database passes by itself: say when to try again.
        headers = {"Retry-After": str(STORE_RETRY_AFTER)} if exc.transient else None
        return error_response(503, "store_unavailable", str(exc), headers=headers)
    return error_response(500, "server_error", str(exc))


def _location(loc: Sequence[Any]) -> str:
    # ("body", "user_id") -> "user_id"; ("query", "limit") -> "limit"; the source is in the message
    parts = [str(p) for p in loc[1:]] if len(loc) > 1 else [str(p) for p in loc]
    return ".".join(parts)


def _json_problem(error: dict[str, Any]) -> str:
    reason = str((error.get("ctx") or {}).get("error") or "cannot be parsed")
    loc: Sequence[Any] = error.get("loc") or ()
    where = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else None
    return reason if where is None else f"{reason} (at character {where})"


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
    if first.get("type") == "json_invalid":  # its loc is ("body", <character offset>): name the body instead
        return error_response(422, "invalid_request", f"body: must be valid JSON: {_json_problem(first)}", "body")
    field = _location(first.get("loc", ("body",)))
    return error_response(422, "invalid_request", f"{field}: {first.get('msg', 'invalid')}", field or None)


_HTTP_TYPES = {400: "invalid_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 413: "too_large", 429: "rate_limited"}


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no route {request.method} {request.url.path}"
    return error_response(exc.status_code, _HTTP_TYPES.get(exc.status_code, "http_error"), message,
                          headers=dict(exc.headers) if exc.headers else None)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    return error_response(500, "server_error", f"internal error ({type(exc).__name__}); see the server log")


def install(app: FastAPI) -> None:
    app.add_exception_handler(Exception, _unexpected)
    app.add_exception_handler(EbbingError, _ebbing_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
