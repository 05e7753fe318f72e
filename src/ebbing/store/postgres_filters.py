"""Metadata filters (`ebbing.store.filters`) compiled to PostgreSQL, matching what the SQLite store matches.

The SQLite compiler validates first (same errors, same rules); this only changes the spelling: record
fields are columns (booleans compared as 0/1, as SQLite stores them), other keys are looked up in the
JSONB metadata through `ebbing_meta`, which reads values the way SQLite's json_extract does.
"""

from __future__ import annotations

import json
from typing import Any

from ebbing.clock import to_epoch
from ebbing.store.filters import FIELDS, OPERATORS, TIME_FIELDS, compile_sqlite

_BOOLEAN = {"pinned", "held"}
_NUMERIC = {"importance", "access_count"}


def _value(key: str, raw: Any, field: str) -> Any:
    if key in TIME_FIELDS:
        return to_epoch(raw, field)
    if isinstance(raw, bool):
        return int(raw)
    return raw


def _column(key: str, table: str) -> tuple[str, str]:
    """The SQL expression for a filter key and how its values are bound: 'plain', 'number' or 'json'."""
    if key in _BOOLEAN:
        return f"{table}.{FIELDS[key]}::int", "number"
    if key in _NUMERIC or key in TIME_FIELDS:
        return f"{table}.{FIELDS.get(key, key)}", "number"
    if key in FIELDS:
        return f"{table}.{FIELDS[key]}", "plain"
    return f"ebbing_meta({table}.metadata, %s)", "json"


def _bind(value: Any, how: str) -> tuple[str, Any]:
    if how == "json":
        return "%s::jsonb", json.dumps(value)
    if how == "number" and isinstance(value, str):
        return "%s::text::float8", value  # compared as SQLite would cast it; a word makes the filter error out
    return "%s", value


def compile_postgres(filters: dict[str, Any] | None, table: str = "m") -> tuple[str, list[Any]]:
    """SQL conditions (joined by AND, starting with ' AND ' when not empty) and their parameters."""
    compile_sqlite(filters, table)  # the same checks and the same errors as the SQLite store
    if not filters:
        return "", []
    clauses: list[str] = []
    params: list[Any] = []
    for key, condition in filters.items():
        field = f"filters.{key}"
        column, how = _column(key, table)
        column_params = [key] if how == "json" else []
        ops = condition if isinstance(condition, dict) else {"$eq": condition}
        for op, raw in ops.items():
            if op in ("$in", "$nin"):
                values = [_value(key, v, field) for v in raw]
                parts = [_bind(v, how) for v in values]
                marks = ", ".join(mark for mark, _ in parts)
                clauses.append(f"{column} {'IN' if op == '$in' else 'NOT IN'} ({marks})")
                params.extend(column_params)
                params.extend(value for _, value in parts)
                continue
            value = _value(key, raw, field)
            if value is None:
                clauses.append(f"{column} IS {'NOT ' if op == '$ne' else ''}NULL")
                params.extend(column_params)
                continue
            mark, bound = _bind(value, how)
            clauses.append(f"{column} {OPERATORS[op]} {mark}")
            params.extend(column_params)
            params.append(bound)
    return " AND " + " AND ".join(clauses), params
