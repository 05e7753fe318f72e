"""Metadata filters: a small query language shared by every store, compiled to SQL here.

    {"kind": "fact"}                         equality
    {"topic": {"$in": ["db", "infra"]}}      keys that are not record fields look inside `metadata`
    {"importance": {"$gte": 0.5}}            $eq $ne $in $nin $gt $gte $lt $lte
    {"created_at": {"$gte": "2026-01-01"}}   times as ISO-8601 or epoch seconds
"""

from __future__ import annotations

import re
from typing import Any

from ebbing.clock import to_epoch
from ebbing.errors import InvalidInput
from ebbing.model import MemoryRecord

FIELDS = {
    "kind": "kind",
    "priority": "priority",
    "pinned": "pinned",
    "held": "held",
    "tier": "tier",
    "agent_id": "agent_id",
    "session_id": "session_id",
    "importance": "importance",
    "access_count": "access_count",
}
TIME_FIELDS = {"created_at", "updated_at", "last_accessed_at"}
OPERATORS = {"$eq": "=", "$ne": "!=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_KEY = re.compile(r"^[\w.\-]{1,128}$")


def _scalar(value: Any, field: str) -> Any:
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, int | float | str):
        return value
    raise InvalidInput(field, "filter values must be strings, numbers, booleans or null")


def compile_sqlite(filters: dict[str, Any] | None, table: str = "m") -> tuple[str, list[Any]]:
    """SQL conditions (joined by AND, starting with ' AND ' when not empty) and their parameters."""
    if not filters:
        return "", []
    if not isinstance(filters, dict):
        raise InvalidInput("filters", "must be an object of field -> value or {operator: value}")
    clauses: list[str] = []
    params: list[Any] = []
    for key, condition in filters.items():
        field = f"filters.{key}"
        if not isinstance(key, str) or not _KEY.match(key):
            raise InvalidInput(field, "keys are 1-128 letters, digits, '_', '-' or '.'")
        if key in FIELDS or key in TIME_FIELDS:
            column = f"{table}.{FIELDS.get(key, key)}"
        else:
            column = f"json_extract({table}.metadata, '$.\"{key}\"')"
        ops = condition if isinstance(condition, dict) else {"$eq": condition}
        if not ops:
            raise InvalidInput(field, "an operator object needs at least one operator")
        for op, raw in ops.items():
            convert = (lambda v, f=field: to_epoch(v, f)) if key in TIME_FIELDS else _scalar
            if op in ("$in", "$nin"):
                if not isinstance(raw, list) or not raw:
                    raise InvalidInput(field, f"{op} takes a non-empty list")
                values = [convert(v, field) for v in raw]
                marks = ", ".join("?" * len(values))
                clauses.append(f"{column} {'IN' if op == '$in' else 'NOT IN'} ({marks})")
                params.extend(values)
            elif op in OPERATORS:
                value = convert(raw, field)
                if value is None:
                    clauses.append(f"{column} IS {'NOT ' if op == '$ne' else ''}NULL")
                    if op not in ("$eq", "$ne"):
                        raise InvalidInput(field, f"{op} cannot compare with null")
                else:
                    clauses.append(f"{column} {OPERATORS[op]} ?")
                    params.append(value)
            else:
                known = ", ".join([*OPERATORS, "$in", "$nin"])
                raise InvalidInput(field, f"unknown operator {op!r}; expected one of {known}")
    return " AND " + " AND ".join(clauses), params


def matches(record: MemoryRecord, filters: dict[str, Any]) -> bool:
    """The same filters applied to a record in Python, for records outside SQL (the cold archive)."""
    compile_sqlite(filters)  # the same checks and errors as the SQL path
    for key, condition in filters.items():
        if key in FIELDS or key in TIME_FIELDS:
            value = getattr(record, key)
            if hasattr(value, "timestamp"):
                value = value.timestamp()
            elif hasattr(value, "value"):
                value = value.value
        else:
            value = record.metadata.get(key)
        ops = condition if isinstance(condition, dict) else {"$eq": condition}
        for op, raw in ops.items():
            wanted = (to_epoch(raw, key) if key in TIME_FIELDS and raw is not None else raw)
            if op in ("$in", "$nin"):
                wanted = [to_epoch(v, key) if key in TIME_FIELDS else v for v in raw]
            if not _holds(value, op, wanted):
                return False
    return True


def _holds(value: Any, op: str, wanted: Any) -> bool:
    if op in ("$in", "$nin"):
        return bool((value in wanted) == (op == "$in"))
    if op in ("$eq", "$ne"):
        return bool((value == wanted) == (op == "$eq"))
    return value is not None and _compare(value, op, wanted)


def _compare(value: Any, op: str, wanted: Any) -> bool:
    try:
        return bool({"$gt": value > wanted, "$gte": value >= wanted, "$lt": value < wanted,
                     "$lte": value <= wanted}[op])
    except TypeError:
        return False
