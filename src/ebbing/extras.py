"""The optional parts of Ebbing and what each needs. The core install (`pip install ebbing`) is the library,
the CLI, the SQLite store, the offline embedder and the Parquet archive; the rest comes with an extra:

    server     REST server, inspector, worker    fastapi, uvicorn, jinja2, prometheus-client, fastapi-offline
    mcp        `ebbing mcp`                        mcp
    postgres   PostgreSQL + pgvector store        psycopg (pgserver: a local server for tests and benchmarks)
    langchain  LangChain / LangGraph adapters     langchain-core, langgraph
    plots      PNG figures                        matplotlib
    fast       the compiled sweep kernel          numba (without it the same scores come from numpy)

A feature checks for its modules when it starts (`require`), so a missing extra is one line that says what to
install, not a traceback from deep inside an import."""

from __future__ import annotations

from importlib.util import find_spec

from ebbing.errors import MissingExtra

MODULES = {
    "server": ("fastapi", "uvicorn", "jinja2", "prometheus_client", "fastapi_offline"),
    "mcp": ("mcp",),
    "postgres": ("psycopg",),
    "langchain": ("langchain_core", "langgraph"),
    "plots": ("matplotlib",),
    "fast": ("numba",),
}


def installed(extra: str) -> bool:
    return all(find_spec(module) is not None for module in MODULES[extra])


def require(extra: str, feature: str) -> None:
    """Raise `MissingExtra` naming the install command unless every module of `extra` can be imported."""
    if not installed(extra):
        raise MissingExtra(extra, feature)
