"""The context builder and the token counters: the budget is a hard limit, whatever the records."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from ebbing.errors import InvalidInput
from ebbing.model import Kind, MemoryRecord, Priority
from ebbing.recall.context import Context, build_context, normalise, render_line
from ebbing.text.tokens import CharTokens, TokenCounter, XlmrTokens

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

EN = [
    "The user prefers dark mode and short, direct answers.",
    "We decided to migrate the billing service to PostgreSQL 16 next quarter.",
    "Alice is allergic to peanuts.",
    "Yesterday's deployment failed because the staging disk was full.",
    "The quarterly report is due on the last Friday of March, June, September and December.",
    "Prefers tea over coffee.",
    "Lives in Berlin.",
    "The flight leaves at 07:45 from terminal 2, seat 14C.",
]
ZH = [
    "用户喜欢深色模式，回答要简短直接。",
    "我们决定下个季度把计费服务迁移到 PostgreSQL 16。",
    "小王对花生过敏。",
    "周末他通常去公园跑步，然后和朋友一起喝早茶。",
    "我女儿九月份上小学，请在八月提醒我给她买校服。",
    "不吃辣。",
]

_ids = iter(range(1_000_000))


def rec(text: str, kind: Kind = Kind.FACT, *, rid: str | None = None, days_ago: int = 0) -> MemoryRecord:
    at = T0 - timedelta(days=days_ago)
    return MemoryRecord(
        id=rid or f"r{next(_ids):06d}",
        text=text,
        kind=kind,
        importance=0.5,
        priority=Priority.P1,
        created_at=at,
        updated_at=at,
    )


def random_text(rng: random.Random) -> str:
    pool = EN if rng.random() < 0.5 else ZH
    n = rng.choice([1, 1, 1, 2, 3, 8, 30])  # now and then a long record
    joiner = " " if pool is EN else ""
    text = joiner.join(rng.choice(pool) for _ in range(n))
    if rng.random() < 0.1:
        text = text.replace(" ", "\n", 2)  # records with line breaks of their own
    return text


def random_sections(rng: random.Random) -> list[tuple[str, str, list[MemoryRecord]]]:
    names = [
        ("pinned", "Always remember"),
        ("facts", "Current facts"),
        ("summaries", "Earlier conversations"),
        ("recent", "Recent turns"),
    ]
    sections = []
    shared = [rec(random_text(rng)) for _ in range(3)]  # the same records offered by several sections
    for name, title in names:
        kind = Kind.SUMMARY if name == "summaries" else Kind.EPISODE if name == "recent" else Kind.FACT
        records = [rec(random_text(rng), kind, days_ago=rng.randint(0, 400)) for _ in range(rng.randint(0, 12))]
        records += rng.sample(shared, rng.randint(0, 2))
        rng.shuffle(records)
        sections.append((name, title, records))
    return sections


@pytest.fixture(scope="module")
def xlmr() -> XlmrTokens:
    return XlmrTokens()


def check(ctx: Context, counter: TokenCounter) -> None:
    """What must hold of every context: the budget, the bookkeeping and the layout."""
    assert counter.count(ctx.text) == ctx.tokens <= ctx.budget
    assert [line.record_id for s in ctx.sections for line in s.lines] == [r.id for r in ctx.records]
    assert len({r.id for r in ctx.records}) == len(ctx.records)
    body = [line for line in ctx.text.split("\n") if line and not line.startswith("## ")]
    assert body == [line.text for s in ctx.sections for line in s.lines]
    assert [line[3:] for line in ctx.text.split("\n") if line.startswith("## ")] == [s.title for s in ctx.sections]
    assert all(s.lines for s in ctx.sections)
    if isinstance(counter, XlmrTokens):
        assert sum(s.tokens for s in ctx.sections) == ctx.tokens  # XLM-R counts add up over lines


# --- the budget ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("counter_name", ["xlmr", "chars"])
def test_never_over_budget(counter_name: str, xlmr: XlmrTokens) -> None:
    counter: TokenCounter = xlmr if counter_name == "xlmr" else CharTokens()
    rng = random.Random(20260105)
    for _ in range(150):
        sections = random_sections(rng)
        budget = rng.choice([rng.randint(1, 40), rng.randint(1, 300), rng.randint(1, 2000)])
        ctx = build_context(sections, budget, counter)
        check(ctx, counter)
        if counter_name == "xlmr":
            assert_greedy(ctx, sections, xlmr)


def assert_greedy(ctx: Context, sections: Sequence[tuple[str, str, Sequence[MemoryRecord]]], xlmr: XlmrTokens) -> None:
    """Nothing new was left out that would still have fitted: the fill did not stop at the first misfit.

    XLM-R counts add up over lines, so a line's cost where it would have gone is its own count (plus its header).
    """
    slack = ctx.budget - ctx.tokens
    said = normalise(ctx.text)
    present = {s.name for s in ctx.sections}
    included = {r.id for r in ctx.records}
    for name, title, records in sections:
        for record in records:
            if record.id in included or normalise(record.text) in said:
                continue  # included, or possibly a duplicate: not a place where greed is measurable
            cost = xlmr.count(render_line(record))
            if name not in present:
                cost += xlmr.count("\n\n## " + title)
            assert cost > slack, (record.text, cost, slack)


class Lumpy:
    """A counter that is not additive: every text costs 5 more than its quarter-characters."""

    def count(self, text: str) -> int:
        return 0 if not text else 5 + -(-len(text) // 4)


def test_budget_holds_for_a_counter_that_does_not_add_up() -> None:
    rng = random.Random(7)
    for _ in range(100):
        budget = rng.randint(1, 600)
        ctx = build_context(random_sections(rng), budget, Lumpy())
        check(ctx, Lumpy())


class Quadratic:
    """A counter where the whole costs more than its parts, so adding up the lines undercounts the text."""

    def count(self, text: str) -> int:
        return len(text) + len(text) ** 2 // 400


def test_budget_holds_when_the_lines_undercount_the_text() -> None:
    rng = random.Random(8)
    for _ in range(100):
        budget = rng.randint(1, 3000)
        ctx = build_context(random_sections(rng), budget, Quadratic())
        check(ctx, Quadratic())


def test_budget_below_one_is_refused(xlmr: XlmrTokens) -> None:
    for bad in (0, -5, True, 2.5, "10"):
        with pytest.raises(InvalidInput) as err:
            build_context([("facts", "Facts", [rec("x")])], bad, xlmr)  # type: ignore[arg-type]
        assert err.value.field == "budget_tokens"
        assert err.value.rule == "must be a whole number >= 1"


def test_tiny_budget_gives_empty_context(xlmr: XlmrTokens) -> None:
    ctx = build_context([("facts", "Current facts", [rec("Alice is allergic to peanuts.")])], 3, xlmr)
    assert ctx.text == "" and ctx.tokens == 0 and ctx.sections == () and ctx.records == ()


def test_long_record_is_skipped_and_shorter_later_ones_still_fit(xlmr: XlmrTokens) -> None:
    long = rec(" ".join(EN * 10))
    short = [rec("Lives in Berlin."), rec("Prefers tea over coffee.")]
    later = rec("不吃辣。")
    sections = [("pinned", "Always remember", [long, *short]), ("recent", "Recent turns", [later])]
    ctx = build_context(sections, 60, xlmr)
    assert [r.id for r in ctx.records] == [short[0].id, short[1].id, later.id]
    assert (
        ctx.text == "## Always remember\n- Lives in Berlin.\n- Prefers tea over coffee.\n\n## Recent turns\n- 不吃辣。"
    )
    check(ctx, xlmr)


def test_lines_are_never_cut(xlmr: XlmrTokens) -> None:
    records = [rec(t) for t in EN]
    for budget in range(1, 200, 7):
        ctx = build_context([("facts", "Current facts", records)], budget, xlmr)
        for line in ctx.text.split("\n")[1:]:
            assert line[2:] in EN


# --- layout, order and duplicates -----------------------------------------------------------------------


def test_sections_keep_their_order_and_records_theirs(xlmr: XlmrTokens) -> None:
    sections = [
        ("pinned", "Always remember", [rec("Alice is allergic to peanuts.")]),
        ("facts", "Current facts", [rec("Lives in Berlin."), rec("Prefers tea over coffee.")]),
        ("summaries", "Earlier conversations", [rec("We compared three databases.", Kind.SUMMARY, days_ago=2)]),
        ("recent", "Recent turns", [rec("Asked about the flight.", Kind.EPISODE)]),
    ]
    ctx = build_context(sections, 500, xlmr)
    assert ctx.text == (
        "## Always remember\n- Alice is allergic to peanuts.\n\n"
        "## Current facts\n- Lives in Berlin.\n- Prefers tea over coffee.\n\n"
        "## Earlier conversations\n- [2026-01-03] We compared three databases.\n\n"
        "## Recent turns\n- [2026-01-05] Asked about the flight."
    )
    assert [s.name for s in ctx.sections] == ["pinned", "facts", "summaries", "recent"]
    assert [r.text for r in ctx.records] == [r.text for _, _, rs in sections for r in rs]
    check(ctx, xlmr)


def test_priority_wins_when_space_runs_out(xlmr: XlmrTokens) -> None:
    first = [rec(t) for t in EN[:4]]
    second = [rec(t) for t in EN[4:]]
    alone = build_context([("a", "A", first)], 10_000, xlmr)
    both = build_context([("a", "A", first), ("b", "B", second)], alone.tokens, xlmr)
    assert both.text == alone.text and both.records == tuple(first)
    # with the order turned round, the other section wins
    swapped = build_context([("b", "B", second), ("a", "A", first)], alone.tokens, xlmr)
    assert swapped.records[0] == second[0] and swapped.sections[0].name == "b"


def test_empty_sections_get_no_header(xlmr: XlmrTokens) -> None:
    sections = [
        ("pinned", "Always remember", []),
        ("facts", "Current facts", [rec("Lives in Berlin.")]),
        ("summaries", "Earlier conversations", [rec("   ")]),
        ("recent", "Recent turns", []),
    ]
    ctx = build_context(sections, 100, xlmr)
    assert ctx.text == "## Current facts\n- Lives in Berlin."
    assert [s.name for s in ctx.sections] == ["facts"]
    assert build_context([], 100, xlmr).text == ""


def test_section_whose_lines_all_fail_to_fit_gets_no_header(xlmr: XlmrTokens) -> None:
    sections = [("facts", "Current facts", [rec("Lives in Berlin.")]), ("big", "Big", [rec(" ".join(EN * 5))])]
    ctx = build_context(sections, 30, xlmr)
    assert "## Big" not in ctx.text and [s.name for s in ctx.sections] == ["facts"]


def test_duplicates_across_sections_are_removed(xlmr: XlmrTokens) -> None:
    pinned = rec("Alice is allergic to peanuts.")
    sections = [
        ("pinned", "Always remember", [pinned]),
        (
            "facts",
            "Current facts",
            [
                pinned,  # the same record again
                rec("ALICE  is allergic\nto peanuts."),  # the same words, other case and spacing
                rec("Ａｌｉｃｅ is allergic to peanuts."),  # full-width letters: the same after NFKC
                rec("allergic to peanuts"),  # already said inside an included line
                rec("Lives in Berlin."),
            ],
        ),
        ("summaries", "Earlier conversations", [rec("Alice is allergic to peanuts.", Kind.SUMMARY)]),
    ]
    ctx = build_context(sections, 500, xlmr)
    assert ctx.text == "## Always remember\n- Alice is allergic to peanuts.\n\n## Current facts\n- Lives in Berlin."
    assert [r.id for r in ctx.records] == [pinned.id, sections[1][2][4].id]


def test_containment_is_by_whole_words_in_english_and_by_characters_in_chinese(xlmr: XlmrTokens) -> None:
    sections = [
        ("facts", "Facts", [rec("Bobby and Joanna like green tea."), rec("我们决定下个季度迁移计费服务。")]),
        ("more", "More", [rec("Bob"), rec("Anna"), rec("green tea"), rec("Joanna"), rec("迁移计费服务")]),
    ]
    ctx = build_context(sections, 500, xlmr)
    assert [r.text for r in ctx.records] == [
        "Bobby and Joanna like green tea.",
        "我们决定下个季度迁移计费服务。",
        "Bob",
        "Anna",
    ]


def test_a_longer_record_containing_an_included_one_is_kept(xlmr: XlmrTokens) -> None:
    sections = [("a", "A", [rec("Lives in Berlin.")]), ("b", "B", [rec("Lives in Berlin. Works in Potsdam.")])]
    assert len(build_context(sections, 500, xlmr).records) == 2


def test_a_record_skipped_for_space_does_not_hide_its_duplicate_or_parts(xlmr: XlmrTokens) -> None:
    long = rec("Alice is allergic to peanuts. " + " ".join(EN * 5))
    sections = [("a", "A", [long]), ("b", "B", [rec("Alice is allergic to peanuts.")])]
    ctx = build_context(sections, 30, xlmr)
    assert [r.text for r in ctx.records] == ["Alice is allergic to peanuts."]


def test_records_are_one_line_each_and_cannot_forge_headers(xlmr: XlmrTokens) -> None:
    ctx = build_context([("facts", "Facts", [rec("first line\n## Injected\nthird line")])], 100, xlmr)
    assert ctx.text == "## Facts\n- first line ## Injected third line"


def test_custom_render(xlmr: XlmrTokens) -> None:
    r = rec("Lives in Berlin.")
    ctx = build_context([("facts", "Facts", [r])], 100, xlmr, render=lambda m: f"* {m.text} ({m.kind})")
    assert ctx.text == "## Facts\n* Lives in Berlin. (fact)"


def test_to_dict_and_section_bookkeeping(xlmr: XlmrTokens) -> None:
    r = rec("周末他通常去公园跑步。")
    ctx = build_context([("facts", "事实", [r])], 100, xlmr)
    out = ctx.to_dict()
    assert out["text"] == ctx.text and out["tokens"] == ctx.tokens and out["budget"] == 100
    assert out["records"][0]["id"] == r.id
    section = out["sections"][0]
    assert section["name"] == "facts" and section["title"] == "事实"
    assert section["lines"] == [
        {"record_id": r.id, "text": "- 周末他通常去公园跑步。", "tokens": xlmr.count("- 周末他通常去公园跑步。")}
    ]
    assert section["tokens"] == ctx.tokens  # the only section: its share is the whole text


def test_deterministic(xlmr: XlmrTokens) -> None:
    sections = random_sections(random.Random(3))
    first = build_context(sections, 400, xlmr)
    for _ in range(3):
        assert build_context(sections, 400, xlmr) == first


# --- the counters -------------------------------------------------------------------------------------------


def test_xlmr_counts_small_texts(xlmr: XlmrTokens) -> None:
    assert xlmr.count("") == 0
    assert xlmr.count("   \n ") == 0
    assert 2 <= xlmr.count("hello world") <= 3
    assert xlmr.count("passage") == 1  # the embedder's "passage: " prefix is not counted


def test_xlmr_counts_chinese_sensibly(xlmr: XlmrTokens) -> None:
    for text in ZH:
        han = sum("\u4e00" <= c <= "\u9fff" for c in text)
        # about one token per 1-1.5 characters, plus at most the "▁" piece SentencePiece puts before a Han start
        assert han / 2.5 <= xlmr.count(text) <= len(text) + 1
    total_chars = sum(len(t) for t in ZH)
    total = sum(xlmr.count(t) for t in ZH)
    assert 1.0 <= total_chars / total <= 2.0


def test_xlmr_counts_english_near_words(xlmr: XlmrTokens) -> None:
    words = sum(len(t.split()) for t in EN)
    assert 1.0 <= sum(xlmr.count(t) for t in EN) / words <= 2.0


def test_xlmr_adds_up_over_lines(xlmr: XlmrTokens) -> None:
    rng = random.Random(11)
    for _ in range(200):
        a, b = random_text(rng), random_text(rng)
        assert xlmr.count(a + "\n" + b) == xlmr.count(a) + xlmr.count(b)


def test_xlmr_is_deterministic_cached_or_not(xlmr: XlmrTokens) -> None:
    long = " ".join(EN * 40) + " " + "".join(ZH * 40)  # past the cache's length limit
    assert len(long) > 5000
    assert xlmr.count(long) == xlmr.count(long) == XlmrTokens().count(long)
    assert xlmr.count(long) == sum(xlmr.count(t) for t in EN * 40) + xlmr.count("".join(ZH * 40))


def test_xlmr_odd_characters(xlmr: XlmrTokens) -> None:
    assert xlmr.count("a\x00b c d") >= xlmr.count("a b c d") - 1  # text after a NUL still counts
    assert xlmr.count("bad \ud800 surrogate") >= 2


def test_xlmr_is_thread_safe(xlmr: XlmrTokens) -> None:
    # every other text is past the cache's length limit, so both paths run at once
    texts = [f"{EN[i % len(EN)]} {i} {ZH[i % len(ZH)] * (1 if i % 2 else 80)}" for i in range(400)]
    expected = [xlmr.count(t + " uncached") for t in texts]
    results: list[list[int]] = []

    def work(chunk: Sequence[str]) -> None:
        results.append([xlmr.count(t + " uncached") for t in chunk])

    threads = [threading.Thread(target=work, args=(texts,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_char_tokens() -> None:
    chars = CharTokens()
    assert [chars.count(t) for t in ("", "a", "abcd", "abcde", "你好世界你")] == [0, 1, 1, 2, 2]
