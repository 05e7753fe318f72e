"""The REST surface: FastAPI routes over `Memory`, one `Memory` per tenant, API keys with roles and limits.

    app.py       create_app(...): wires the pieces; the background sweeper runs in its lifespan
    tenancy.py   who is asking (`principal`) and their tenant's `Memory` (`memory_for`)
    keys.py      the key store: hashed keys, their tenant, role and limits
    limits.py    per-key request-size limit (413) and token-bucket rate limit (429)
    errors.py    the one place where errors become HTTP statuses and `{"error": {...}}` bodies
    routes.py    the /v1 routes: parse, call one `Memory` method, format
    cli.py       `ebbing serve`, `ebbing keys ...`, `ebbing worker`
"""
