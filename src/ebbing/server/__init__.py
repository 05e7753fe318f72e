"""The REST surface: FastAPI routes over `Memory`, one `Memory` per tenant, API keys with roles and limits.

    app.py       create_app(...): wires the pieces; the background sweeper runs in its lifespan
    tenancy.py   who is asking (`principal`) and their tenant's `Memory` (`memory_for`)
    keys.py      the key store: hashed keys, their tenant, role and limits; the inspector's sessions
    limits.py    per-key request-size limit (413) and token-bucket rate limit (429)
    errors.py    the one place where errors become HTTP statuses and `{"error": {...}}` bodies
    headers.py   security headers and the Content-Security-Policy on every response
    routes.py    the /v1 routes: parse, call one `Memory` method, format
    cli.py       `ebbing serve`, `ebbing keys ...`, `ebbing worker`
"""
