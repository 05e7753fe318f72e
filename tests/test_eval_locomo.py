"""`ebbing eval locomo`: LoCoMo parsing, evidence coverage through provenance, and one real conversation end to end.

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) is read from the shared data folder by path, never copied here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import InvalidInput
from ebbing.eval.answer import ANSWER, JUDGE
from ebbing.eval.cli import eval_app
from ebbing.eval.locomo import CATEGORIES, load, parse_evidence, parse_selection, parse_when
from ebbing.eval.report import summary
from ebbing.eval.runner import SYSTEMS, run
from ebbing.eval.systems import CachingEmbedder, Item, covered, fill, midnights, recall
from ebbing.llm.openai import OpenAIChat
from ebbing.model import Kind, MemoryRecord, Priority

from .llm_server import serve

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo10.json"
SMALLEST = 1  # conv-30: 369 turns, 81 questions of categories 1-4
KEYS = {"recall@5", "recall@10", "recall@1000tok", "recall@2000tok", "live_fraction", "search_ms_p50",
        "search_ms_p95", "context_tokens", "by_category"}

TINY: list[dict[str, Any]] = [{
    "sample_id": "conv-t",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex yesterday."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Congrats! What breed is he?"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "A beagle. Here he is.", "img_url": ["x"],
             "blip_caption": "a photo of a beagle puppy on a sofa"},
        ],
        "session_2_date_time": "12:06 am on 19 June, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "I started a new job at the aquarium last week."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "That sounds fun, do you feed the sharks?"},
            {"speaker": "Bo", "dia_id": "D2:3", "text": "Only the turtles, and I clean the tanks."},
        ],
        "session_3_date_time": "9:00 am on 1 July, 2023",  # a date with no turn list: ignored
    },
    "qa": [
        {"question": "When did Ann adopt Rex?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
        {"question": "What breed is Rex, and what does Bo feed?", "answer": "a beagle; turtles",
         "evidence": ["D1:3; D2:3"], "category": 1},
        {"question": "Where did Ann start a job?", "adversarial_answer": "at the aquarium", "evidence": ["D2:1"],
         "category": 5},
        {"question": "What colour is Rex?", "answer": "brown", "evidence": ["D9:9"], "category": 4},
    ],
}]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    return path


def test_dates_parse_as_locomo_writes_them() -> None:
    assert parse_when("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_when("12:06 am on 11 November, 2022") == datetime(2022, 11, 11, 0, 6, tzinfo=UTC)
    assert parse_when("12:30 pm on 1 January, 2024") == datetime(2024, 1, 1, 12, 30, tzinfo=UTC)
    assert parse_when("9:02 AM on 22 november 2023") == datetime(2023, 11, 22, 9, 2, tzinfo=UTC)
    for bad in ("13:00 pm on 8 May, 2023", "1:56 pm on 8 Mai, 2023", "8 May 2023", "1:56 pm on 31 June, 2023"):
        with pytest.raises(InvalidInput):
            parse_when(bad)


def test_evidence_strings_split_into_ids() -> None:
    assert parse_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert parse_evidence(["D9:1 D4:4 D4:6", "D4:4", "D21:18 D21:22"]) == ["D9:1", "D4:4", "D4:6", "D21:18", "D21:22"]
    assert parse_evidence(["D", "D:11:26", "D1:3"]) == ["D1:3"]  # malformed tokens are dropped, not guessed


def test_categories_follow_the_upstream_ids() -> None:
    assert CATEGORIES == {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def test_loading_a_conversation(tiny: Path) -> None:
    (conversation,) = load(tiny)
    assert conversation.sample_id == "conv-t" and conversation.speakers == ("Ann", "Bo")
    assert [t.dia_id for t in conversation.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert conversation.sessions == [1, 2]
    assert [t.at.minute for t in conversation.turns[:3]] == [56, 57, 58]  # a minute apart within a session
    assert conversation.turns[3].at == datetime(2023, 6, 19, 0, 6, tzinfo=UTC)
    assert conversation.turns[0].rendered == "Ann: I adopted a puppy named Rex yesterday."
    caption = "[shares an image: a photo of a beagle puppy on a sofa]"
    assert conversation.turns[2].rendered == f"Ann: A beagle. Here he is. {caption}"
    # Category 5 is not evaluated; a question whose evidence names no turn is left out and counted.
    assert [(q.category, q.evidence) for q in conversation.questions] == [(2, ("D1:1",)), (1, ("D1:3", "D2:3"))]
    assert conversation.questions[1].category_name == "multi-hop"
    assert conversation.without_evidence == 1 and conversation.unresolved == 1


def test_bad_data_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="--data"):
        load(tmp_path / "missing.json")
    (tmp_path / "x.json").write_text('{"not": "locomo"}')
    with pytest.raises(InvalidInput, match="not a LoCoMo file"):
        load(tmp_path / "x.json")
    result = CliRunner().invoke(eval_app, ["locomo", "--data", str(tmp_path / "missing.json")])
    assert result.exit_code == 2 and "--data" in result.output


def test_the_app_mounts_under_the_main_cli() -> None:
    main = typer.Typer()
    main.add_typer(eval_app, name="eval")
    result = CliRunner().invoke(main, ["eval", "locomo", "--help"])
    assert result.exit_code == 0 and "--conversations" in result.output and "--plot" in result.output


def test_conversation_selection() -> None:
    assert parse_selection("0-9", 10) == list(range(10))
    assert parse_selection("3", 10) == [3]
    assert parse_selection("0,2,5-7", 10) == [0, 2, 5, 6, 7]
    for bad in ("10", "3-1", "a", "0-10"):
        with pytest.raises(InvalidInput):
            parse_selection(bad, 10)


def test_midnights_between_sessions() -> None:
    days = midnights(datetime(2023, 5, 8, 13, 58, tzinfo=UTC), datetime(2023, 6, 19, 0, 6, tzinfo=UTC))
    assert days[0] == datetime(2023, 5, 9, tzinfo=UTC) and days[-1] == datetime(2023, 6, 19, tzinfo=UTC)
    assert len(days) == 42
    assert midnights(datetime(2023, 5, 8, 13, 0, tzinfo=UTC), datetime(2023, 5, 8, 14, 0, tzinfo=UTC)) == []


def _record(ident: str, dia_id: str | None = None, sources: list[str] | None = None) -> MemoryRecord:
    at = datetime(2023, 5, 8, tzinfo=UTC)
    return MemoryRecord(id=ident, text=ident, kind=Kind.SUMMARY if sources else Kind.EPISODE, importance=0.5,
                        priority=Priority.P1, created_at=at, updated_at=at,
                        metadata={"dia_id": dia_id} if dia_id else {}, source_ids=sources or [])


def test_coverage_through_provenance() -> None:
    turns = {r.id: r for r in (_record("a", "D1:1"), _record("b", "D1:2"), _record("c", "D2:1"))}
    summary_record = _record("s", sources=["a", "b", "gone"])  # "gone" was purged: it covers nothing
    outer = _record("t", sources=["s", "c"])  # a summary of a summary covers what both cover
    lookup = {**turns, "s": summary_record}.get
    merged = {"b": {"D1:5"}}  # D1:5 restated b, so `add` returned b for it
    assert covered(turns["a"], lookup, merged) == {"D1:1"}
    assert covered(summary_record, lookup, merged) == {"D1:1", "D1:2", "D1:5"}
    assert covered(outer, lookup, merged) == {"D1:1", "D1:2", "D1:5", "D2:1"}
    items = [Item(covered(summary_record, lookup, merged), "s", 30), Item(frozenset({"D3:1"}), "x", 5)]
    assert recall(items, ["D1:2", "D2:1"]) == 0.5
    assert recall(items[1:], ["D1:2", "D2:1"]) == 0.0


def test_budget_fills_by_rank_and_skips_what_does_not_fit() -> None:
    items = [Item(frozenset({"a"}), "a", 600), Item(frozenset({"b"}), "b", 500), Item(frozenset({"c"}), "c", 300),
             Item(frozenset({"d"}), "d", 200)]
    assert [i.line for i in fill(items, 1000)] == ["a", "c"]
    assert [i.line for i in fill(items, 2000)] == ["a", "b", "c", "d"]
    assert fill(items, 100) == []


def test_caching_embedder_embeds_each_text_once() -> None:
    inner = HashEmbedder()
    cache = CachingEmbedder(inner, batch=2)
    assert (cache.name, cache.dimensions) == (inner.name, inner.dimensions)
    cache.prime(["a b", "c d", "e f", "a b"])
    assert cache.computed == 3
    vectors = cache.embed(["c d", "a b", "g h"])
    assert cache.computed == 4  # only the new text
    assert (vectors[1] == inner.embed(["a b"])[0]).all()
    cache.embed(["a b"], query=True)
    assert cache.computed == 5  # queries and passages are different vectors


def model(body: dict[str, Any]) -> str:
    """A fake reader and judge: answers from the context, and accepts an answer naming the gold's first word."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    if system == JUDGE:
        gold = user.split("Gold answer: ")[1].split("\n")[0]
        said = user.split("Generated answer: ")[1]
        return json.dumps({"label": "CORRECT" if gold.split()[0].lower() in said.lower().split() else "WRONG"})
    assert system.startswith(ANSWER.split("{a}")[0]) and "Ann" in system and "Bo" in system
    context, question = user.split("\n\nQuestion: ")
    asked_when = question.startswith("When did Ann adopt Rex?")
    seen = "] Ann: I adopted a puppy named Rex yesterday." in context
    return "7 May 2023" if asked_when and seen else "I do not know"


def test_a_small_run_with_an_llm_judge(tiny: Path) -> None:
    conversations = load(tiny)
    with serve(model) as server:
        llm = OpenAIChat("fake", base_url=server.url, retries=0)
        result = run(conversations, embedder=HashEmbedder(), llm=llm, judged=["ebbing", "full_vector"])
        report = summary(result, data=str(tiny), date="2026-11-29", commit=None, changed=None)
        asked = [r.body["messages"][0]["content"] for r in server.requests]
    assert set(report["systems"]) == set(SYSTEMS)
    for name, system in report["systems"].items():
        assert set(system) >= KEYS
        assert system["questions"] == 2
        if name in ("ebbing", "full_vector"):
            # Q1's evidence says "yesterday" in a turn of 8 May: the fake reader answers 7 May when its context
            # (2,000 tokens) holds that turn, so the judged score follows the evidence recall at that budget.
            temporal = system["by_category"]["temporal"]["recall@2000tok"]
            assert system["answer"]["questions"] == 2
            assert system["answer"]["by_category"]["temporal"] == temporal
            assert system["answer"]["by_category"]["multi-hop"] == 0.0
        else:
            assert "answer" not in system
    assert asked.count(JUDGE) == 4  # two questions, two judged systems
    assert report["run"]["answer_level"].startswith("openai/fake")
    # Every turn fits a 2,000-token budget here, so full history finds every evidence id at that budget.
    assert report["systems"]["full_vector"]["recall@2000tok"] == 1.0
    assert report["systems"]["full_vector"]["answer"]["by_category"]["temporal"] == 1.0
    # Six weeks on, the adoption (an episode, never recalled since) has faded out of Ebbing's live store.
    assert report["conversations"][0]["evidence_fate"]["hot"] + report["conversations"][0]["evidence_fate"]["warm"] < 3
    assert report["systems"]["full_bm25"]["live_fraction"] == 1.0


@pytest.fixture(scope="module")
def smallest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path]]:
    if not DATA.is_file():
        if os.environ.get("CI"):  # CI has the shared data next to the checkout: a missing file is a failure
            pytest.fail(f"LoCoMo data not found at {DATA} in CI")
        pytest.skip(f"LoCoMo data not found at {DATA} (copy locomo10.json there to run this test)")
    plot = tmp_path_factory.mktemp("locomo") / "recall.png"
    with pytest.MonkeyPatch.context() as patch:
        for name in ("EBBING_LLM_BASE_URL", "EBBING_LLM_MODEL", "EBBING_LLM_API_KEY"):
            patch.delenv(name, raising=False)
        result = CliRunner().invoke(eval_app, ["locomo", "--data", str(DATA), "--conversations", str(SMALLEST),
                                               "--json", "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    yield json.loads(result.stdout), plot


@pytest.mark.slow
def test_one_real_conversation_end_to_end(smallest: tuple[dict[str, Any], Path]) -> None:
    report, plot = smallest
    assert set(report["systems"]) == set(SYSTEMS)
    run_info = report["run"]
    assert run_info["conversations"] == ["conv-30"] and run_info["turns"] == 369 and run_info["questions"] == 81
    assert run_info["answer_level"].startswith("skipped: no LLM configured")
    for name, system in report["systems"].items():
        assert set(system) >= KEYS, name
        values = [system[k] for k in ("recall@5", "recall@10", "recall@1000tok", "recall@2000tok", "live_fraction")]
        assert all(0.0 <= v <= 1.0 for v in values), (name, values)
        assert system["recall@5"] <= system["recall@10"]  # the top 5 are the first of the same 10
        assert set(system["by_category"]) == {"multi-hop", "temporal", "open-domain", "single-hop"}
        assert sum(c["questions"] for c in system["by_category"].values()) == 81
        assert 0 < system["search_ms_p50"] <= system["search_ms_p95"]
    conversation = report["conversations"][0]
    tiers = conversation["replays"]["ebbing"]["tiers"]
    live = tiers["hot"] + tiers["warm"]
    assert conversation["live"]["ebbing"] == live
    assert conversation["live"]["fifo"] == live  # the FIFO window holds as many records as Ebbing keeps live
    assert report["systems"]["fifo"]["live_fraction"] == report["systems"]["ebbing"]["live_fraction"]
    assert report["systems"]["full_vector"]["live_fraction"] == 1.0
    assert conversation["replays"]["ebbing_no_forgetting"]["sweeps"] == 0
    assert conversation["replays"]["ebbing"]["sweeps"] == 20  # at each of the 19 session starts, then the questions
    assert sum(conversation["evidence_fate"].values()) > 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_worker_processes_give_the_same_results(tmp_path: Path) -> None:
    twin = json.loads(json.dumps(TINY[0]))
    twin["sample_id"] = "conv-u"
    path = tmp_path / "two.json"
    path.write_text(json.dumps([TINY[0], twin]), encoding="utf-8")
    conversations = load(path)
    reports = []
    for workers in (1, 2):
        result = run(conversations, embedder=HashEmbedder(), workers=workers)
        assert result.workers == workers
        reports.append(summary(result, data=str(path), date="2026-11-29", commit=None, changed=None))

    def measured(report: dict[str, Any]) -> dict[str, Any]:  # everything but timings
        return {name: {k: v for k, v in system.items() if "_ms_" not in k}
                for name, system in report["systems"].items()}

    assert measured(reports[0]) == measured(reports[1])
    assert [c["sample_id"] for c in reports[1]["conversations"]] == ["conv-t", "conv-u"]
    with pytest.raises(InvalidInput, match="workers"):
        from ebbing.eval.cli import _locomo

        _locomo(path, "0-1", True, None, False, "session", "passage", 1, "ebbing", 0)


@pytest.mark.parametrize(("name", "prefix"), [("conversations-dev.json", "dev"),
                                              ("conversations-holdout.json", "hold")])
def test_our_own_conversations_load_as_locomo(name: str, prefix: str) -> None:
    """The development and held-out conversations (docs/conversations-brief.md) replay like LoCoMo's: two per
    language, months long, every question's evidence resolved to turns that exist."""
    conversations = load(Path(__file__).parent / "data" / name)
    assert [c.sample_id for c in conversations] == [f"{prefix}-{lang}-{n}" for lang in ("en", "zh") for n in (1, 2)]
    for conversation in conversations:
        assert len(conversation.sessions) >= 12 and (conversation.end - conversation.turns[0].at).days >= 120
        assert len(conversation.questions) >= 40 and conversation.unresolved == 0
        assert conversation.without_evidence == 0
        known = {t.dia_id for t in conversation.turns}
        assert all(set(q.evidence) <= known for q in conversation.questions)
