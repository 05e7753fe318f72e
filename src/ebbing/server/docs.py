"""`/docs` without a network: Swagger UI's files come from the `fastapi-offline` package (installed with the
server extra) and its start-up script from this package, so the page loads nothing from a CDN and runs no
inline script. ReDoc is not served (FastAPI's loads from a CDN)."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Response
from fastapi.responses import HTMLResponse

# name -> (the package folder that holds it, media type); the page's policy is headers.DOCS_CSP
ASSETS = {"swagger-ui-bundle.js": (("fastapi_offline", "static"), "text/javascript"),
          "swagger-ui.css": (("fastapi_offline", "static"), "text/css"),
          "favicon.png": (("fastapi_offline", "static"), "image/png"),
          "docs.js": (("ebbing.server", "static/docs"), "text/javascript")}
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} - API</title>
<link rel="icon" href="/docs/assets/favicon.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
"""


def router(title: str) -> APIRouter:
    routes = APIRouter(include_in_schema=False)

    @routes.get("/docs")
    def page() -> HTMLResponse:
        return HTMLResponse(PAGE.format(title=title))

    @routes.get("/docs/assets/{name}")
    def asset(name: str) -> Response:
        if name not in ASSETS:
            return Response("not found", status_code=404, media_type="text/plain")
        (package, folder), media = ASSETS[name]
        return Response(files(package).joinpath(folder, name).read_bytes(), media_type=media,
                        headers={"Cache-Control": "public, max-age=86400"})

    return routes
