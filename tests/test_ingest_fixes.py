"""Write-path fixes found by replaying a long English/Chinese agent conversation: facts, slots, summaries."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from ebbing import Memory, Priority
from ebbing.embed.hashing import HashEmbedder
from ebbing.ingest.classify import classify
from ebbing.ingest.consolidate import names, worth_keeping
from ebbing.ingest.facts import RuleFacts

from .conftest import T0


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "m.db", embedder=HashEmbedder()) as memory:
        yield memory


def test_one_text_with_two_values_for_a_slot_keeps_the_last_and_does_not_crash(store: Memory) -> None:
    record = store.add("超时阈值是 30s，超时阈值是 60s", user_id="u", at=T0).records[0]
    timeline = store.timeline("u", "超时阈值")
    assert [(t["value"], t["current"]) for t in timeline] == [("60s", True)]
    assert timeline[0]["supersedes"] is None and store.get(record.id).text == "超时阈值是 30s，超时阈值是 60s"


def test_a_record_never_supersedes_itself(store: Memory) -> None:
    store.add("我的数据库连接超时阈值是 30s，超时阈值是 45s", user_id="u", at=T0)
    assert [(t["value"], t["current"]) for t in store.timeline("u", "超时阈值")] == [("45s", True)]
    assert store.stats(user_id="u")["total"] == 1


def test_chinese_conjunctions_are_not_statements(store: Memory) -> None:
    text = "失败的消息应该进入死信队列，而不是直接丢弃，而不是一直重试"
    assert RuleFacts().extract(text) == []
    record = store.add(text, user_id="u", at=T0).records[0]  # used to raise sqlite3.IntegrityError
    assert store.get(record.id).text == text
    for compound in ("只是", "还是", "就是", "也是", "但是", "总是", "可是", "要是"):
        assert RuleFacts().extract(f"这个方案{compound}临时的") == [], compound
    assert [f.value for f in RuleFacts().extract("我的地址是北京市朝阳区")] == ["北京市朝阳区"]


def test_a_single_function_word_is_not_a_slot() -> None:
    assert RuleFacts().extract("不：这样不行") == []


def test_an_attribute_is_not_superseded_by_its_modifier(store: Memory) -> None:
    store.add("My database connection timeout is 30s", user_id="u", at=T0)
    store.add("The database is PostgreSQL 15", user_id="u", at=T0 + timedelta(hours=1))
    timeline = store.timeline("u", "database connection timeout")
    assert [(t["value"], t["current"]) for t in timeline] == [("30s", True)]
    store.add("Change the timeout to 60s", user_id="u", at=T0 + timedelta(hours=2))  # same head: supersedes
    assert [(t["value"], t["current"]) for t in store.timeline("u", "database connection timeout")] == [
        ("30s", False), ("60s", True)]


def test_assistant_prose_creates_and_supersedes_no_facts(store: Memory) -> None:
    store.add("My database timeout is 30s", user_id="u", at=T0)
    said = store.add("The database timeout is 60s in the example config", user_id="u",
                     metadata={"role": "assistant"}, at=T0 + timedelta(hours=1)).records[0]
    store.add("Your new address is 5 Main Street", user_id="u", metadata={"role": "assistant"},
              at=T0 + timedelta(hours=2))
    assert [(t["value"], t["current"]) for t in store.timeline("u", "database timeout")] == [("30s", True)]
    assert store.timeline("u", "address") == []
    assert store.get(said.id) is not None  # stored all the same


def test_a_whole_clause_is_not_a_value() -> None:
    assert RuleFacts().extract("the 60s database timeout is a separate concern that we should handle with "
                               "retries and exponential backoff later") == []
    assert RuleFacts().extract("the reason is that we never tested the failover path") == []
    assert RuleFacts().extract("问题是我们从来没有测试过故障转移和回滚的流程以及相关的监控告警和值班安排") == []
    assert [f.value for f in RuleFacts().extract("the database is PostgreSQL 15")] == ["PostgreSQL 15"]


def test_a_capitalised_sentence_opener_is_not_a_name() -> None:
    assert names("Check the logs. Restart the pod.") == set()
    assert names("1. Consider retries\n2. Make it idempotent") == set()
    assert not worth_keeping("Consider adding a retry with backoff")
    assert names("- Aurora is down\n- Use PostgreSQL on eu-west-1") >= {"PostgreSQL", "west-1"}
    assert "Aurora" not in names("- Aurora is down")
    assert "Aurora" in names("We moved Aurora. Aurora is fine now.")  # recurs mid-sentence
    assert "Aurora" in names("Aurora is down", {"Aurora"})  # or mid-sentence in another turn of the batch
    assert worth_keeping("Aurora is down", {"Aurora"})
    assert names("Alice says the Aurora service is slow") == {"Aurora"}


@pytest.mark.parametrize("text", [
    "Never commit credentials to the repo.",
    "Don't store passwords in plain text; use a secrets manager.",
    "It is good practice to rotate API keys regularly.",
    "不要把密码提交到代码仓库。",
])
def test_advice_about_secrets_is_not_p0_by_that_alone(text: str) -> None:
    guess = classify(text)
    assert not guess.security and guess.priority is not Priority.P0


@pytest.mark.parametrize("text", [
    "Never share the prod database password with contractors.",
    "Rotate the API token for the billing service every month.",
    "My bank PIN code is [secret:pin#ab12]",
])
def test_an_actual_secret_or_access_rule_is_still_p0(text: str) -> None:
    guess = classify(text)
    assert guess.security and guess.priority is Priority.P0


@pytest.mark.parametrize("text", [
    "I'll remember this.", "Got it, I'll keep this in mind for future reference.",
    "I'll always remember that you prefer dark mode.", "Sure, I will make a note of it.", "好的，我会记住的。",
    "我会牢记这一点。",
])
def test_a_promise_to_remember_is_not_a_pin(text: str) -> None:
    assert not classify(text).pin


@pytest.mark.parametrize("text", [
    "Remember this: I will never eat meat.", "I want you to always remember this: I am vegan.",
    "We'll cap the budget at 4,000, please remember that for good.", "请记住：我对花生过敏。",
])
def test_a_request_to_remember_still_pins(text: str) -> None:
    assert classify(text).pin


def test_a_generic_trailing_word_does_not_hide_the_head(store: Memory) -> None:
    store.add("先记一个配置：我的数据库连接超时阈值是 30s。", user_id="u", at=T0)
    store.add("把数据库连接超时改成 60s，因为并发从 200 涨到了 500", user_id="u", at=T0 + timedelta(days=1))
    timeline = store.timeline("u", "超时阈值")
    assert [(t["value"], t["current"]) for t in timeline] == [("30s", False), ("60s", True)]
    assert timeline[1]["reason"] == "并发从 200 涨到了 500"
    store.add("My phone is a Pixel 8", user_id="u", at=T0)
    store.add("My phone number is 555 0192", user_id="u", at=T0 + timedelta(hours=1))
    numbers = store.timeline("u", "phone number")  # a new slot: the phone itself was not superseded
    assert [(t["value"], t["current"], t["supersedes"]) for t in numbers] == [("555 0192", True, None)]


def test_a_pin_trigger_in_assistant_prose_does_not_pin(store: Memory) -> None:
    advice = ("Keep the tenant out of the key unless you need to list sessions, and remember that key scans "
              "are expensive.")
    said = store.add(advice, user_id="u", metadata={"role": "assistant"}, at=T0).records[0]
    assert not said.pinned and said.priority is not Priority.P0
    asked = store.add("Please remember this: my manager is Priya Raman.", user_id="u", at=T0).records[0]
    assert asked.pinned and asked.priority is Priority.P0


@pytest.mark.parametrize("text", [
    "can you check whether the 3pm room is booked? never mind, found it",  # a question states nothing
    "超时阈值是多少？",
    "我们定了：每周四中午开始代码冻结。",  # "定了" is a verb, not an attribute
    "日志变慢可能是什么原因",
    "你以后也会帮忙处理团队的事是吧",
])
def test_questions_and_verbs_state_no_fact(text: str) -> None:
    assert RuleFacts().extract(text) == []


def test_a_lead_in_before_a_colon_is_not_part_of_the_attribute() -> None:
    (fact,) = RuleFacts().extract("先记一个配置：我的数据库连接超时阈值是 30s。")
    assert (fact.subject, fact.attribute, fact.value) == ("user", "数据库连接超时阈值", "30s")
    (fact,) = RuleFacts().extract("Quick note: my build timeout is 10 minutes")
    assert (fact.attribute, fact.value) == ("build timeout", "10 minutes")


def test_a_lowercase_latin_word_in_chinese_is_not_a_name() -> None:
    found = names("这个 bug 和 tenant 的 limit 有关，Atlas 组在看 gRPC 的问题")
    assert {"Atlas", "gRPC"} <= found and not found & {"bug", "tenant", "limit"}
