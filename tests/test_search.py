from __future__ import annotations

from datetime import timedelta

import pytest

from ebbing import InvalidInput, Memory

from .conftest import T0

NOTES = [
    "我的数据库连接超时阈值是 30s",
    "My database connection timeout threshold is 30s",
    "I am allergic to shrimp",
    "我对虾过敏",
    "I prefer Rust for backend services",
    "Project Aurora has a Go backend and uses PostgreSQL 16",
    "今天好累啊",
]


@pytest.fixture
def notes(smart: Memory) -> dict[str, str]:
    return {text: smart.add(text, user_id="alice", at=T0).records[0].id for text in NOTES}


@pytest.mark.parametrize(("query", "expected"), [
    ("超时阈值", "我的数据库连接超时阈值是 30s"),
    ("数据库超时", "我的数据库连接超时阈值是 30s"),
    ("database timeout threshold", "My database connection timeout threshold is 30s"),
    ("what am I allergic to?", "I am allergic to shrimp"),
    ("我对什么过敏", "我对虾过敏"),
    ("which programming language do I like", "I prefer Rust for backend services"),
    ("what backend does Aurora use", "Project Aurora has a Go backend and uses PostgreSQL 16"),
])
def test_relevant_memory_comes_first(smart: Memory, notes: dict[str, str], query: str, expected: str) -> None:
    hits = smart.search(query, user_id="alice", at=T0)
    assert hits and hits[0].record.text == expected
    assert set(hits[0].parts) == {"relevance", "vector", "cosine", "keyword", "retention", "stale"}


@pytest.mark.parametrize("query", ["what's the weather like tomorrow?", "明天天气怎么样", "tell me a joke"])
def test_unrelated_questions_surface_nothing(smart: Memory, notes: dict[str, str], query: str) -> None:
    assert smart.search(query, user_id="alice", at=T0) == []
    allergy = smart.get(notes["I am allergic to shrimp"])
    assert allergy.access_count == 0 and allergy.last_accessed_at is None  # not kept alive by accident


def test_other_users_never_see_alices_memories(smart: Memory, notes: dict[str, str]) -> None:
    assert smart.search("超时阈值", user_id="bob", at=T0) == []
    assert smart.search("allergic", at=T0) == []  # no user is a scope of its own, not "everyone"


def test_a_returned_record_counts_as_used_once_a_day(mem: Memory) -> None:
    record = mem.add("The deploy window is Tuesday 14:00", user_id="u", at=T0).records[0]
    for minutes in (5, 60, 600):
        (hit,) = mem.search("deploy window", user_id="u", at=T0 + timedelta(minutes=minutes))
    assert hit.record.access_count == 1 and hit.record.last_accessed_at == T0 + timedelta(minutes=5)
    mem.search("deploy window", user_id="u", at=T0 + timedelta(days=1, minutes=5))
    stored = mem.get(record.id)
    assert stored.access_count == 2 and stored.last_accessed_at == T0 + timedelta(days=1, minutes=5)
    accesses = [e for e in mem.history(record.id) if e.type == "access"]
    assert [e.data["access_count"] for e in accesses] == [1, 2]
    mem.search("deploy window", user_id="u", at=T0)  # the clock going back never moves the reference back
    assert mem.get(record.id).last_accessed_at == T0 + timedelta(days=1, minutes=5)


def test_limit_caps_hits_and_ranking_is_by_score(mem: Memory) -> None:
    for i in range(20):
        mem.add(f"release checklist item {i}", user_id="u", at=T0)
    hits = mem.search("release checklist", user_id="u", limit=5, at=T0)
    assert len(hits) == 5
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_filters_on_fields_and_metadata(mem: Memory) -> None:
    mem.add("Kafka retention is 7 days", user_id="u", metadata={"topic": "infra", "level": 2}, at=T0)
    mem.add("Kafka consumer lag alert at 5000", user_id="u", metadata={"topic": "alerts", "level": 5}, at=T0)
    mem.add("I prefer Kafka over RabbitMQ", user_id="u", metadata={"topic": "infra"}, at=T0)

    def texts(**kwargs: object) -> set[str]:
        return {h.record.text for h in mem.search("Kafka", user_id="u", at=T0, **kwargs)}  # type: ignore[arg-type]

    assert texts(filters={"topic": "infra"}) == {"Kafka retention is 7 days", "I prefer Kafka over RabbitMQ"}
    assert texts(filters={"level": {"$gte": 3}}) == {"Kafka consumer lag alert at 5000"}
    assert texts(filters={"kind": "preference"}) == {"I prefer Kafka over RabbitMQ"}
    assert texts(filters={"topic": {"$in": ["alerts", "none"]}, "kind": {"$ne": "preference"}}) == {
        "Kafka consumer lag alert at 5000"}
    with pytest.raises(InvalidInput, match=r"filters\.level"):
        mem.search("Kafka", user_id="u", filters={"level": {"$near": 3}})


def test_agent_and_session_narrow_the_scope(mem: Memory) -> None:
    mem.add("build cache lives in /var/cache/ci", user_id="u", agent_id="ci", session_id="s1", at=T0)
    mem.add("build cache for the desktop app is ~/.cache", user_id="u", agent_id="desk", session_id="s2", at=T0)
    assert len(mem.search("build cache", user_id="u", at=T0)) == 2
    (hit,) = mem.search("build cache", user_id="u", agent_id="ci", at=T0)
    assert hit.record.agent_id == "ci"
    (hit,) = mem.search("build cache", user_id="u", session_id="s2", at=T0)
    assert hit.record.session_id == "s2"


def test_search_sees_records_added_by_another_connection(tmp_path, e5) -> None:  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "m.db", embedder=e5) as reader, Memory(tmp_path / "m.db", embedder=e5) as writer:
        writer.add("The office wifi password rotates monthly", user_id="u", at=T0)
        assert reader.search("wifi", user_id="u", at=T0)  # loads the vector cache
        writer.add("The printer on floor 3 is out of toner", user_id="u", at=T0)
        hits = reader.search("printer toner", user_id="u", at=T0)
        assert hits[0].record.text.startswith("The printer")
