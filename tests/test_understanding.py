"""What comes in is understood: secrets guarded, facts with timelines, restatements merged, sessions
consolidated, and a context built under a budget."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest

from ebbing import Conflict, Memory, Tier
from ebbing.ingest.consolidate import ConsolidationConfig, names
from ebbing.ingest.guard import SecretBox
from ebbing.text.tokens import XlmrTokens

from .conftest import T0


def files_holding(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_a_password_is_never_stored_in_plaintext(tmp_path: Path, e5) -> None:  # type: ignore[no-untyped-def]
    key = SecretBox.generate_key()
    home = tmp_path / "home"
    with Memory(home / "ebbing.db", embedder=e5, secret_key=key) as mem:
        record = mem.add("My database password is hunter2-XYZ", user_id="alice", at=T0).records[0]
        assert "hunter2-XYZ" not in record.text and "[secret:password#" in record.text
        assert record.security
        outputs = [json.dumps([h.to_dict() for h in mem.search("database password", user_id="alice", at=T0)]),
                   json.dumps(mem.context("what is my database password?", user_id="alice", at=T0).to_dict()),
                   json.dumps(list(mem.export())), json.dumps([e.to_dict() for e in mem.history(record.id)])]
        mem.sweep(at=T0 + timedelta(days=400))  # whatever tier it ends in
        export = tmp_path / "export.jsonl"
        export.write_text("\n".join(json.dumps(r) for r in mem.export()))
        assert not any("hunter2-XYZ" in out for out in outputs)
        assert files_holding(tmp_path, "hunter2-XYZ") == []
        assert mem.reveal(record.id) == "My database password is hunter2-XYZ"
    with Memory(home / "ebbing.db", embedder=e5) as keyless, pytest.raises(Conflict, match="EBBING_SECRET_KEY"):
        keyless.reveal(record.id)


def test_without_a_key_the_secret_is_dropped(mem: Memory, tmp_path: Path) -> None:
    record = mem.add("the api key is sk-proj-abcdefghijklmnopqrstuvwx123456", user_id="u", at=T0).records[0]
    assert "sk-proj" not in record.text and files_holding(tmp_path, "abcdefghijklmnopqrstuvwx") == []
    with pytest.raises(Conflict, match="never kept"):
        mem.reveal(record.id)


def test_a_text_that_is_only_a_secret_keeps_its_placeholder(mem: Memory) -> None:
    record = mem.add("sk-abcdefghijklmnopqrstuvwxyz0123", user_id="u", at=T0).records[0]
    assert re.fullmatch(r"\[secret:api_key#[0-9a-f]{4}\]", record.text)


def test_a_changed_value_supersedes_the_old_one_and_keeps_its_timeline(smart: Memory) -> None:
    old = smart.add("我的数据库连接超时阈值是 30s", user_id="alice", at=T0).records[0]
    new = smart.add("把超时阈值改成 60s，因为并发从 200 升到 500", user_id="alice",
                    at=T0 + timedelta(days=1)).records[0]
    hits = smart.search("超时阈值", user_id="alice", at=T0 + timedelta(days=2))
    assert hits[0].record.id == new.id and "60s" in hits[0].record.text
    assert [h.record.id for h in hits].index(old.id) > 0
    timeline = smart.timeline("alice", "超时阈值")
    assert [(t["value"], t["current"]) for t in timeline] == [("30s", False), ("60s", True)]
    assert timeline[1]["reason"] == "并发从 200 升到 500" and timeline[0]["superseded_by"] == new.id
    assert smart.timeline("alice", "database timeout threshold") == timeline  # found by meaning too
    assert smart.search("超时阈值之前是多少", user_id="alice", at=T0 + timedelta(days=2))  # history questions see both


def test_english_fact_changes_and_new_addresses(mem: Memory) -> None:
    mem.add("My address is 4 Elm Street, Springfield", user_id="u", at=T0)
    mem.add("I moved; my new address is 12 Rue Oberkampf", user_id="u", at=T0 + timedelta(days=30))
    timeline = mem.timeline("u", "address")
    assert [t["value"] for t in timeline] == ["4 Elm Street", "12 Rue Oberkampf"]
    assert timeline[-1]["current"]


def test_supersession_survives_purging_the_old_record(mem: Memory) -> None:
    old = mem.add("The build timeout is 10 minutes", user_id="u", at=T0).records[0]
    mem.add("Change the build timeout to 20 minutes", user_id="u", at=T0 + timedelta(hours=1))
    mem.purge(old.id)
    timeline = mem.timeline("u", "build timeout")
    assert [t["value"] for t in timeline] == ["20 minutes"] and timeline[0]["supersedes"] == old.id


def test_saying_the_same_preference_five_times_leaves_one_record(smart: Memory) -> None:
    sayings = ["I prefer dark mode", "I really prefer dark mode", "Dark mode, please, I prefer it",
               "I always use dark mode", "I like dark mode best"]
    ids = {smart.add(text, user_id="u", at=T0 + timedelta(hours=i)).records[0].id for i, text in enumerate(sayings)}
    assert len(ids) == 1
    (record,) = [smart.get(i) for i in ids]
    assert record.access_count >= 5 and smart.stats(user_id="u")["total"] == 1
    assert [e.type for e in smart.history(record.id)].count("merge") == 4
    different = smart.add("I prefer light mode on my phone", user_id="u", at=T0 + timedelta(hours=6)).records[0]
    assert different.id != record.id


def _session_turns() -> list[str]:
    topics = ["Aurora", "Borealis", "Cygnus", "Draco", "Eridanus"]
    people = ["Alice", "Bruno", "Chen Wei", "Dmitri", "Esther"]
    out = []
    for i in range(200):
        topic, person = topics[i % 5], people[(i // 5) % 5]
        match i % 4:
            case 0:
                out.append(f"{person} says the {topic} service p99 latency is {100 + i} ms after build {3000 + i}.")
            case 1:
                out.append("ok, sounds good")
            case 2:
                out.append(f"We decided to move {topic} to PostgreSQL 16 because the queue depth hit {i * 7}.")
            case _:
                out.append(f"{person} asked whether the {topic} dashboard should show error budgets per region; "
                           f"the on-call rota for week {i // 4} still needs an owner.")
    return out


def test_a_long_session_is_consolidated_without_losing_numbers_or_names(tmp_path: Path) -> None:
    from ebbing.embed.hashing import HashEmbedder

    budget = 2000
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(),
                consolidation=ConsolidationConfig(working_budget_tokens=budget)) as mem:
        start = T0
        for i, text in enumerate(_session_turns()):
            mem.add(text, user_id="u", session_id="s1", at=start + timedelta(minutes=i))
        summaries = [r for r in mem.export(user_id="u") if r["kind"] == "summary"]
        assert len(summaries) >= 2
        for summary in summaries:
            replaced = [mem.get(i) for i in summary["source_ids"]]
            for turn in replaced:
                for number in re.findall(r"\d+", turn.text):
                    assert number in summary["text"], (number, turn.text)
                for name in names(turn.text):
                    assert name in summary["text"], (name, turn.text)
            assert {t.tier for t in replaced} <= {Tier.COLD, Tier.HOT, Tier.WARM}
        assert any(mem.get(i).tier is Tier.COLD for s in summaries for i in s["source_ids"])
        counter = XlmrTokens()
        for question_budget in (50, 300, 2000):
            context = mem.context("what was the p99 latency of Cygnus?", user_id="u", session_id="s1",
                                  budget_tokens=question_budget, at=start + timedelta(hours=5))
            assert context.tokens <= question_budget and counter.count(context.text) <= question_budget
        assert "Cygnus" in mem.context("what was the p99 latency of Cygnus?", user_id="u", session_id="s1",
                                       budget_tokens=2000, at=start + timedelta(hours=5)).text


def test_context_orders_sections_and_counts_as_use(mem: Memory) -> None:
    pinned = mem.add("Always remember: I am allergic to shrimp", user_id="u", at=T0).records[0]
    fact = mem.add("The staging database is on host db-7", user_id="u", at=T0).records[0]
    context = mem.context("which host runs the staging database?", user_id="u", budget_tokens=500, at=T0)
    names_in_order = [s.name for s in context.sections]
    assert names_in_order[:2] == ["pinned", "facts"]
    assert context.text.index("allergic") < context.text.index("db-7")
    assert mem.get(fact.id).access_count == 1 and mem.get(pinned.id).access_count == 1


@pytest.mark.parametrize("text", ["🎉🎉 deploy done ✅ 部署完成 v2.3.1", "x" * 30_000, "is 42", "值是 7"])
def test_odd_inputs_are_stored_as_they_are(mem: Memory, text: str) -> None:
    record = mem.add(text, user_id="u", at=T0).records[0]
    assert mem.get(record.id).text == text.strip()
