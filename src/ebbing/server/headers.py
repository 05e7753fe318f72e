"""Security headers on every response: the inspector's pages may not be framed, sniffed or leak their URLs,
and run nothing but their own stylesheet and script.

The Content-Security-Policy fits what the inspector loads: `/inspector/static/inspector.css` and
`inspector.js`, inline SVG charts (presentation attributes, no `style`), forms that post to this site. No
inline script or style anywhere, so neither `'unsafe-inline'` nor a nonce is needed. JSON answers get the
same policy (harmless: nothing in them runs). `/docs` (Swagger UI, from installed files: server/docs.py) gets
`DOCS_CSP`, which allows the style attributes and data: icons Swagger UI draws with, and no inline script.

`Referrer-Policy: same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` with a
form's POST, which `inspector.same_origin` would refuse as another site.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
DOCS_CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


class SecurityHeaders:
    """ASGI middleware: adds `HEADERS` and a Content-Security-Policy to every HTTP response that does not set
    its own; paths in `docs` get `DOCS_CSP` instead of `CSP`."""

    def __init__(self, app: ASGIApp, docs: Iterable[str | None] = ()) -> None:
        self.app = app
        self.docs = {path for path in docs if path}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = DOCS_CSP if scope["path"] in self.docs else CSP

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in {**HEADERS, "Content-Security-Policy": policy}.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
