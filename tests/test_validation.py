"""Bad input: a clear error naming the field, and nothing changed."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ebbing import InvalidInput, Memory
from ebbing.validate import MAX_TEXT_BYTES

from .conftest import T0


def _snapshot(mem: Memory) -> tuple[Any, ...]:
    return (mem.stats(), list(mem.export()))


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"text": ""}, "text"),
    ({"text": "   \n\t"}, "text"),
    ({"text": "x" * (MAX_TEXT_BYTES + 1)}, "text"),
    ({"text": "汉" * (MAX_TEXT_BYTES // 3 + 1)}, "text"),  # the limit is in UTF-8 bytes, not characters
    ({"text": "bad \ud800 surrogate"}, "text"),
    ({"text": "nul \x00 byte"}, "text"),
    ({"text": 42}, "text"),
    ({"kind": "gossip"}, "kind"),
    ({"priority": "P9"}, "priority"),
    ({"importance": 1.5}, "importance"),
    ({"importance": -0.1}, "importance"),
    ({"importance": math.nan}, "importance"),
    ({"importance": True}, "importance"),
    ({"at": "next tuesday-ish"}, "at"),
    ({"at": math.inf}, "at"),
    ({"at": -5}, "at"),
    ({"metadata": ["not", "an", "object"]}, "metadata"),
    ({"metadata": {"x": math.nan}}, "metadata"),
    ({"metadata": {"x": object()}}, "metadata"),
    ({"user_id": ""}, "user_id"),
    ({"user_id": " alice"}, "user_id"),
    ({"user_id": "x" * 300}, "user_id"),
    ({"pinned": "yes"}, "pinned"),
])
def test_bad_add_names_the_field_and_changes_nothing(mem: Memory, kwargs: dict[str, Any], field: str) -> None:
    mem.add("an existing memory", user_id="alice", at=T0)
    before = _snapshot(mem)
    call: dict[str, Any] = {"text": "a fine memory", "user_id": "alice", "at": T0, **kwargs}
    with pytest.raises(InvalidInput) as info:
        mem.add(**call)
    assert info.value.field == field
    assert field in str(info.value)
    assert _snapshot(mem) == before


def test_long_text_at_the_limit_is_accepted(mem: Memory) -> None:
    text = "a" * MAX_TEXT_BYTES
    assert mem.add(text, user_id="u", at=T0).records[0].text == text


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"query": ""}, "query"),
    ({"limit": 0}, "limit"),
    ({"limit": 10_001}, "limit"),
    ({"limit": 2.5}, "limit"),
    ({"at": "yesterday"}, "at"),
    ({"filters": {"bad key!": 1}}, "filters.bad key!"),
    ({"filters": {"kind": {"$in": []}}}, "filters.kind"),
    ({"filters": {"kind": {"$gt": None}}}, "filters.kind"),
])
def test_bad_search_names_the_field_and_counts_no_use(mem: Memory, kwargs: dict[str, Any], field: str) -> None:
    mem.add("rotate the TLS certificates in May", user_id="u", at=T0)
    before = _snapshot(mem)
    with pytest.raises(InvalidInput) as info:
        mem.search(**{"query": "TLS certificates", "user_id": "u", **kwargs})
    assert info.value.field == field
    assert _snapshot(mem) == before


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"text": ""}, "text"),
    ({"kind": "nope"}, "kind"),
    ({"importance": 2}, "importance"),
    ({}, "update"),
])
def test_bad_update_changes_nothing(mem: Memory, kwargs: dict[str, Any], field: str) -> None:
    record = mem.add("the cron job runs at 02:00", user_id="u", at=T0).records[0]
    before = _snapshot(mem)
    with pytest.raises(InvalidInput) as info:
        mem.update(record.id, **kwargs)
    assert info.value.field == field
    assert _snapshot(mem) == before


def test_timestamps_parse_in_every_documented_form(mem: Memory) -> None:
    forms = [T0, T0.timestamp(), int(T0.timestamp()), T0.isoformat(), "2026-01-05T09:00:00Z",
             "2026-01-05T09:00:00", str(T0.timestamp())]
    for at in forms:
        assert mem.add("same time", user_id="u", at=at).records[0].created_at == T0
