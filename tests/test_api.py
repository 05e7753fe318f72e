from __future__ import annotations

from datetime import timedelta

import pytest

import ebbing
from ebbing import Conflict, InvalidInput, Kind, Memory, NotFound, Priority, Tier
from ebbing.embed.hashing import HashEmbedder

from .conftest import T0


def test_public_api_is_small_and_explicit() -> None:
    assert set(ebbing.__all__) == {
        "AddResult", "Conflict", "EbbingError", "Event", "Hit", "ImportReport", "InvalidInput", "Kind",
        "Memory", "MemoryRecord", "NotFound", "Priority", "Scope", "SearchConfig", "StoreError", "Tier",
    }
    for name in ebbing.__all__:
        assert hasattr(ebbing, name)


def test_add_returns_a_complete_record(mem: Memory) -> None:
    result = mem.add("I prefer Helix as my editor", user_id="alice", agent_id="coder", session_id="s1",
                     metadata={"topic": "tools"}, at=T0)
    (record,) = result.records
    assert [e.type for e in result.events] == ["add"]
    assert len(record.id) == 26 and record.id == record.id.upper()
    assert (record.user_id, record.agent_id, record.session_id, record.tenant) == ("alice", "coder", "s1", "default")
    assert record.created_at == T0 and record.created_at.tzinfo is not None
    assert record.last_accessed_at is None and record.access_count == 0
    assert record.tier is Tier.HOT and record.kind is Kind.PREFERENCE
    assert record.metadata == {"topic": "tools"}
    assert record.embedding is not None and record.embedding.shape == (64,)
    stored = mem.get(record.id)
    assert stored.text == record.text and stored.content_hash == record.content_hash
    assert stored.embedding is not None and (stored.embedding == record.embedding).all()


def test_ids_sort_by_creation_time(mem: Memory) -> None:
    ids = [mem.add(f"note {i}", user_id="u", at=T0 + timedelta(seconds=i)).records[0].id for i in range(5)]
    assert ids == sorted(ids)


def test_explicit_values_win_over_inference(mem: Memory) -> None:
    record = mem.add("ok", user_id="u", kind="fact", importance=0.9, priority="p0", at=T0).records[0]
    assert (record.kind, record.importance, record.priority) == (Kind.FACT, 0.9, Priority.P0)
    inferred = mem.add("ok", user_id="u", at=T0).records[0]
    assert inferred.kind is Kind.TEMPORARY and inferred.priority is Priority.P2
    assert mem.history(inferred.id)[0].data["inferred"] == ["kind", "importance", "priority"]


def test_update_keeps_id_and_logs_without_text(mem: Memory) -> None:
    record = mem.add("The staging host is db-old.internal", user_id="u", at=T0).records[0]
    later = T0 + timedelta(hours=1)
    updated = mem.update(record.id, "The staging host is db-new.internal", importance=0.8, at=later)
    assert updated.id == record.id and updated.updated_at == later and updated.created_at == T0
    assert mem.get(record.id).text == "The staging host is db-new.internal"
    assert [h.record.id for h in mem.search("db-new", user_id="u", at=later)] == [record.id]
    assert mem.search("old", user_id="u", at=later) == []
    events = mem.history(record.id)
    assert [e.type for e in events] == ["add", "update", "access"]
    assert events[1].data["fields"] == ["text", "importance"]
    assert "db-old" not in repr([e.to_dict() for e in events])


def test_pin_and_unpin_are_logged(mem: Memory) -> None:
    record = mem.add("The backup tapes are stored in the basement", user_id="u", at=T0).records[0]
    assert mem.pin(record.id, at=T0).pinned
    assert mem.get(record.id).pinned
    assert not mem.unpin(record.id, at=T0).pinned
    assert [e.type for e in mem.history(record.id)] == ["add", "pin", "unpin"]


def test_pin_trigger_in_text_pins(mem: Memory) -> None:
    record = mem.add("Please always remember: I take my coffee black", user_id="u", at=T0).records[0]
    assert record.pinned and record.priority is Priority.P0
    assert mem.history(record.id)[0].reason == "pin trigger in text"


def test_stats_by_tier_and_kind(mem: Memory) -> None:
    mem.add("I prefer tea", user_id="a", at=T0)
    mem.add("thanks", user_id="a", at=T0)
    mem.add("The server runs Debian", user_id="b", at=T0)
    assert mem.stats() == {
        "total": 3,
        "by_tier": {"hot": 3, "warm": 0, "cold": 0, "trash": 0},
        "by_kind": {"fact": 1, "preference": 1, "decision": 0, "temporary": 1, "episode": 0, "summary": 0},
    }
    assert mem.stats(user_id="a")["total"] == 2


def test_unknown_ids_are_not_found(mem: Memory) -> None:
    for call in (mem.get, mem.history, mem.pin, mem.unpin):
        with pytest.raises(NotFound) as info:
            call("01ZZZZZZZZZZZZZZZZZZZZZZZZ")
        assert info.value.field == "id"
    with pytest.raises(NotFound):
        mem.update("01ZZZZZZZZZZZZZZZZZZZZZZZZ", "new text")


def test_tenants_are_invisible_to_each_other(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "shared.db"
    with Memory(path, embedder=HashEmbedder(), tenant="acme") as acme, \
         Memory(path, embedder=HashEmbedder(), tenant="globex") as globex:
        secret = acme.add("acme launch date is March 3", user_id="alice", at=T0).records[0]
        assert globex.search("launch date", user_id="alice", at=T0) == []
        with pytest.raises(NotFound):
            globex.get(secret.id)
        with pytest.raises(NotFound):
            globex.history(secret.id)
        assert globex.stats()["total"] == 0 and list(globex.export()) == []
        assert [h.record.id for h in acme.search("launch date", user_id="alice", at=T0)] == [secret.id]


def test_a_store_refuses_another_embedders_vectors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    Memory(tmp_path / "m.db", embedder=HashEmbedder(64)).close()
    with pytest.raises(Conflict, match="hash-64"):
        Memory(tmp_path / "m.db", embedder=HashEmbedder(32))


def test_default_path_is_under_ebbing_home(ebbing_home) -> None:  # type: ignore[no-untyped-def]
    with Memory(embedder=HashEmbedder()) as memory:
        memory.add("hello world", user_id="u", at=T0)
    assert (ebbing_home / "ebbing.db").is_file()


def test_context_manager_closes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "m.db", embedder=HashEmbedder()) as memory:
        memory.add("x marks the spot", user_id="u", at=T0)
    with pytest.raises(Exception):  # noqa: B017 - any use after close must fail loudly
        memory.get("01ZZZZZZZZZZZZZZZZZZZZZZZZ")


def test_bad_tenant_is_rejected(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInput, match="tenant"):
        Memory(tmp_path / "m.db", embedder=HashEmbedder(), tenant=" ")
