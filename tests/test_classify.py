"""The ingest classifier: rules for kind, pin, priority and security in English and Chinese, the LLM
classifier's mapping and fallback, and the benchmark over the labelled files."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ebbing.bench import classify as bench
from ebbing.errors import EbbingError
from ebbing.ingest.classify import Classification, Classifier, LLMClassifier, RuleClassifier, classify
from ebbing.llm import prompts
from ebbing.model import Kind, Priority

DATA = Path(__file__).parent / "data"


def kind_of(text: str) -> str:
    return classify(text).kind.value


@pytest.mark.parametrize("text", [
    "ok", "Cool cool", "thanks!", "Good morning!", "👍", "🙏🙏", "好的", "收到👌", "嗯嗯", "哈哈哈", "晚安", "666",
    "OK 明白了", "谢谢你",
])
def test_small_talk_is_temporary_and_worth_little(text: str) -> None:
    guess = classify(text)
    assert guess.kind is Kind.TEMPORARY and guess.priority is Priority.P2
    assert guess.importance <= 0.1 and not guess.pin and not guess.security


@pytest.mark.parametrize("text", [
    "Ugh, I'm so exhausted right now.",  # a mood
    "brb, grabbing coffee",  # a coming and going
    "Could you rewrite this paragraph?",  # a one-off request
    "What's the capital of Australia?",  # a question
    "Never mind, I found it.",
    "好困啊",
    "我先去开个会，一会儿聊",
    "帮我查一下明天上海的天气。",
    "把上面那段翻译成英文。",
    "今天有点烦，不想上班。",
])
def test_moods_requests_and_asides_are_temporary(text: str) -> None:
    assert kind_of(text) == "temporary"
    assert classify(text).priority is Priority.P2


@pytest.mark.parametrize("text", [
    "I prefer window seats on long flights.",
    "I really don't like voice messages; text me instead.",  # "instead" alone does not make it a decision
    "I can't stand open-plan offices.",
    "Please always answer in English, even when I write in Chinese.",
    "Tea over coffee, every time.",
    "我喜欢安静的咖啡馆。",
    "我宁可多走几步，也不想排队。",
    "回复里请不要用表情符号。",
    "请一直用中文回复我。",
    "我不吃香菜。",
])
def test_likes_habits_and_standing_instructions_are_preferences(text: str) -> None:
    assert kind_of(text) == "preference"


@pytest.mark.parametrize("text", [
    "We decided to move the standup to 10am.",
    "Let's go with the annual plan.",
    "From now on, every PR needs two approvals.",
    "I switched my phone carrier to Mint Mobile.",
    "Bump the retry limit from 3 to 5.",
    "我们决定下个月开始用飞书。",
    "把超时时间改成 60 秒。",
    "数据库从 MySQL 换成 PostgreSQL。",
    "以后周报改到周五交。",
])
def test_choices_and_changes_are_decisions(text: str) -> None:
    assert kind_of(text) == "decision"


@pytest.mark.parametrize("text", [
    "Yesterday the deploy broke because of a missing migration.",
    "Two weeks ago I gave a talk in Lyon.",
    "This morning I missed my train.",  # "this morning" plus a completed action
    "Our planning meeting ran three hours over.",  # a past narrative without a date
    "Back in 2019 the team finally decided to drop MongoDB.",  # a decision told as a story
    "Last week we decided to switch to Postgres.",
    "上周六我们去了千岛湖。",
    "去年年底开了一下午的会，才定下把服务迁到阿里云。",  # a decision told as a story
    "刚才开会的时候投影仪坏了。",
    "2018 年我第一次出国。",
])
def test_past_events_are_episodes(text: str) -> None:
    assert kind_of(text) == "episode"


@pytest.mark.parametrize("text", [
    "Our Postgres primary runs on port 5433.",
    "I run a podcast called 'Today in Rust'.",  # "today" inside a title is not a time
    "The 'Today' tab only shows tasks due soon.",
    "I drive a 2016 Honda Jazz.",  # a model year, not a story
    "I have two kids, aged 7 and 10.",
    "I'm left-handed.",
    "The tokens counted by the billing service include the system prompt.",
    "我老家在湖南岳阳，现在住在深圳南山。",  # "现在" alone is no mood
    "我的公众号叫「今天也要早睡」。",
    "我女儿今年上小学三年级了。",
])
def test_lasting_truths_are_facts(text: str) -> None:
    assert kind_of(text) == "fact"


@pytest.mark.parametrize(("text", "kind"), [
    # Chit-chat without a cue phrase: sighs, weather, fillers, laughter, "it works now".
    ("唉，又堵车了", "temporary"),
    ("ugh, snowing again", "temporary"),
    ("oh, that makes sense now", "temporary"),
    ("Perfect, it works now.", "temporary"),
    ("okey dokey", "temporary"),
    ("hhhhh", "temporary"),
    ("嗯，有道理", "temporary"),
    ("My head is pounding after that meeting", "temporary"),
    ("累麻了，整个人都废了", "temporary"),
    ("Heading out for lunch, back in an hour.", "temporary"),  # "back in" an hour is no past time
    # Verdicts and standing wishes without "I like".
    ("Olives are a hard no for me.", "preference"),
    ("Horror movies are not my cup of tea.", "preference"),
    ("Pop-up ads drive me nuts.", "preference"),
    ("Bullet points are easiest for me to scan.", "preference"),
    ("Use metric units whenever I ask about recipes.", "preference"),
    ("Jazz beats pop any day 🎷", "preference"),  # a trailing emoji does not hide "any day"
    ("我不太喝咖啡。", "preference"),
    ("例子最好用 Python 写，别用 Java。", "preference"),
    ("回复里如果能加上小结，我会更放心。", "preference"),
    # Decisions without "decided".
    ("Verdict: the blue logo stays.", "decision"),
    ("I've made up my mind, I'm taking the job in Berlin.", "decision"),
    ("预算从 50 万砍到 30 万。", "decision"),
    ("我们放弃了小程序，专心做 App。", "decision"),
    ("我换了一个牙医，离家近一点。", "decision"),
    ("年会就去三亚。", "decision"),
    ("We scrapped the mobile app and went all in on the web.", "decision"),
])
def test_statements_without_the_usual_cue_phrases(text: str, kind: str) -> None:
    assert kind_of(text) == kind


@pytest.mark.parametrize(("text", "kind"), [
    ("I switched from Chrome to Firefox last month.", "decision"),  # a bare switch keeps its kind
    ("我上个月把手机套餐换成了联通的。", "decision"),
    ("Last week we decided to switch to Postgres.", "episode"),  # a story about deciding
    ("Last month our office moved to the 5th floor, and half the desks arrived broken.", "episode"),
    ("When I was 7, we moved from Lagos to London.", "episode"),  # an age is a past time
    ("大三那年我去新加坡交换了半年。", "episode"),  # "交换了" is no switch
])
def test_a_dated_switch_is_a_decision_but_a_dated_story_is_an_episode(text: str, kind: str) -> None:
    assert kind_of(text) == kind


@pytest.mark.parametrize(("text", "kind"), [
    # Commitments and arrangements without "decide": future passives, present progressives, a choice named
    # with the option it beat, idioms that close a choice, and how a plan now stands.
    ("The mobile client will be built with Flutter.", "decision"),
    ("We're freezing hiring until March.", "decision"),
    ("OK, we're taking the train, not the plane.", "decision"),
    ("Thai it is, then.", "decision"),
    ("The trip is off.", "decision"),
    ("The budget for the redesign stays at $40k.", "decision"),
    ("Hiring freeze until further notice.", "decision"),
    ("这个服务是用 Go 写，不用 Java。", "decision"),
    ("往后都走公司邮箱。", "decision"),
    ("孩子的兴趣班只保留钢琴。", "decision"),
    ("我们不参加今年的展会了。", "decision"),
    # Tastes without "I like": all or nothing, verdicts, effects on the user, leanings, how things are taken,
    # and verbless phrases that pick one thing over another.
    ("Aisle seat or nothing.", "preference"),
    ("Cilantro is overrated.", "preference"),
    ("Long emails stress me out.", "preference"),
    ("I gravitate toward sci-fi when I read.", "preference"),
    ("Tabs, not spaces.", "preference"),
    ("Cold showers in the morning, hot ones at night.", "preference"),
    ("面条越筋道越好。", "preference"),
    ("还是纸质书好。", "preference"),
    ("香菜我一口都不碰。", "preference"),
    ("奶茶要三分糖，少冰。", "preference"),
    ("回复我的时候先说结论。", "preference"),
    # Go-aheads, shrugs, reactions, cheers, pauses and things that do not work just now.
    ("ok, go for it", "temporary"),
    ("huh, didn't know that", "temporary"),
    ("woohoo the tests pass", "temporary"),
    ("无所谓，都可以", "temporary"),
    ("谢了兄弟", "temporary"),
    ("累死了，又下雨", "temporary"),
    ("这个链接打不开", "temporary"),
    ("I'm logging off for the night.", "temporary"),
    ("Back in 5.", "temporary"),  # a promise, not "back in 2019"
    ("Don't forget to buy milk.", "temporary"),  # a one-off reminder
    ("明天提醒我交房租。", "temporary"),
])
def test_cue_less_statements_are_read_by_their_construction(text: str, kind: str) -> None:
    assert kind_of(text) == kind


@pytest.mark.parametrize(("text", "kind"), [
    # A one-off question-request is temporary, though "for me" reads as a wish; "always" keeps it a wish.
    ("Can you draft an outline for me?", "temporary"),
    ("Could you always answer in English?", "preference"),
    # Saying one's name is a fact, even with what to call one; disliking a nickname is a taste.
    ("My name is Lena, call me Len.", "fact"),
    ("我叫王磊，叫我磊子就行。", "fact"),
    ("我讨厌别人叫我老王。", "preference"),
    # ", never X" is a taste about the user, not about a system.
    ("The VPN only accepts hardware keys, never passwords.", "fact"),
    ("Our API only returns JSON, never XML.", "fact"),
    ("I only drink tea, never coffee.", "preference"),
    ("interesting, never thought of it that way before", "temporary"),
    # Deciding told with its occasion is a story; an "-ed" word before a noun is no event.
    ("At the retro we finally agreed to drop the weekly demo.", "episode"),
    ("The landlord came by this morning to fix the heater.", "episode"),
    ("The shared drive is mounted at /mnt/team.", "fact"),
    # "主从" is no "从 X 涨到 Y" change of plan.
    ("周一晚上主从同步延迟涨到了 3 秒。", "episode"),
    # A short message that opens with a mood is about now.
    ("困死了，昨晚没睡好", "temporary"),
    # A verbless phrase without a choice in it is no wish.
    ("Software engineer at Spotify.", "fact"),
    ("Two kids, one dog.", "fact"),
])
def test_precedence_between_rules(text: str, kind: str) -> None:
    assert kind_of(text) == kind


def test_a_pin_request_that_says_the_matter_is_settled_names_a_decision() -> None:
    guess = classify("永远记住，我们已经定了：周五不发版。")
    assert guess.pin and guess.kind is Kind.DECISION and guess.priority is Priority.P0


def test_cue_words_match_whole_words_only() -> None:
    # "on Sunday" is a date, "on Sundays" a habit; "in May" is a date, "in Mayfair" a place.
    assert kind_of("I never take calls on Sundays.") == "preference"
    assert kind_of("My sister runs a gallery in Mayfair.") == "fact"
    # A participle before a noun is no narrative: "writes compressed snapshots", "a crowded bus".
    assert kind_of("The weekly job exports archived invoices to S3 and emails finance.") == "fact"
    # A health risk "for me" is a health fact, not a taste.
    guess = classify("I have asthma, so smoke is a real danger for me.")
    assert guess.kind is Kind.FACT and guess.priority is Priority.P0


@pytest.mark.parametrize("text", [
    "my " + "a " * 15000 + "is 5",
    "哈" * 12 + "太好笑了",  # a run inside a repeated group backtracked exponentially: 1 s here, a minute at 16
    "哈" * 3000 + "x",
    "h" * 40 + " ok x",
    "next year " * 3000,  # unbounded gaps used to make these quadratic
    "is now " * 4300,
    "goes from " * 3000,
    "“a " * 10000,
    "walked " * 4300,
    "我叫陈思远，朋友一般叫我阿远。" * 2000,
])
def test_long_or_pathological_text_is_classified_quickly(text: str) -> None:
    best = min(_seconds(text) for _ in range(3))
    assert best < 0.2, f"{best:.3f}s for a {len(text)}-character text"


def _seconds(text: str) -> float:
    start = time.perf_counter()
    classify(text)
    return time.perf_counter() - start


def test_moods_and_times_only_count_in_their_place() -> None:
    assert kind_of("Kinda grumpy this morning, don't mind me.") == "temporary"  # a time without an event
    assert kind_of("今天下雨了，好烦") == "temporary"  # a short mood, though something happened
    # In a longer sentence a mood word is incidental.
    assert kind_of("旅行的话，我宁愿在一个城市慢慢逛上好几天，也不想一天赶三个景点，那样太累了。") == "preference"


@pytest.mark.parametrize(("text", "kind"), [
    ("I'm allergic to penicillin.", "fact"),
    ("我对海鲜过敏，吃虾会起疹子。", "fact"),
    ("I take 50 mg of sertraline every morning.", "fact"),
    ("我有高血压，每天早上吃一片降压药。", "fact"),
    ("My husband takes warfarin, so no aspirin for him.", "fact"),
])
def test_health_and_safety_are_facts_that_never_expire(text: str, kind: str) -> None:
    guess = classify(text)
    assert guess.kind.value == kind and guess.priority is Priority.P0 and not guess.pin
    assert guess.importance >= 0.85


@pytest.mark.parametrize(("text", "security"), [
    ("The prod database password lives in 1Password.", True),
    ("Rotate the API token for the billing service every month.", True),
    ("Only Sam and I have admin access to the billing console.", True),
    ("The access token expires after an hour.", True),
    ("公司 VPN 的账号密码每 90 天必须改一次。", True),
    ("生产服务器只有运维组能 SSH 登录。", True),
    ("The tokens counted by the billing service include the system prompt.", False),  # not "api token"
    ("I have access to a car at weekends.", False),
    ("我们的 App 支持微信登录。", False),
    ("The staging Redis lives at 10.2.14.9.", False),  # an address is not a secret
])
def test_security_needs_a_credential_or_an_access_rule(text: str, security: bool) -> None:
    guess = classify(text)
    assert guess.security is security
    assert (guess.priority is Priority.P0) is security


def test_a_question_about_passwords_is_not_a_secret() -> None:
    guess = classify("What's a good password manager?")
    assert guess.kind is Kind.TEMPORARY and not guess.security and guess.priority is Priority.P2


@pytest.mark.parametrize("text", ["My name is Daniel Okafor.", "I'm Sofia Marquez, but everyone calls me Sofi.",
                                  "我叫陈思远，朋友一般叫我阿远。"])
def test_the_users_name_is_a_fact_that_never_expires(text: str) -> None:
    guess = classify(text)
    assert guess.kind is Kind.FACT and guess.priority is Priority.P0 and not guess.security


@pytest.mark.parametrize(("text", "kind"), [
    ("Please always remember: my daughter is severely allergic to tree nuts.", "fact"),
    ("Remember this forever: I don't eat pork.", "preference"),
    ("Never forget: I prefer being called Dan, not Daniel.", "preference"),
    ("Please remember this always: we decided never to deploy on Fridays.", "decision"),
    ("Remember this: my passport number ends in 4471.", "fact"),
    ("This is important, remember it: the on-call number is +31 20 555 0192.", "fact"),
    ("永远记住：我儿子有哮喘。", "fact"),
    ("永远记住这个决定：核心代码不外包。", "decision"),  # the request names the kind
    ("这很重要，请记住：给我的文档一律用 Markdown 格式。", "preference"),
    ("记住：我们决定所有对外接口都统一用 HTTPS。", "decision"),
    ("永远记住：2022 年 6 月 1 日我们领了证。", "episode"),
])
def test_pin_triggers_pin_and_the_rest_decides_the_kind(text: str, kind: str) -> None:
    guess = classify(text)
    assert guess.pin and guess.priority is Priority.P0 and guess.kind.value == kind
    assert guess.importance >= 0.75


@pytest.mark.parametrize("text", [
    "I remember the first office had no windows.",  # recalling is not asking to be remembered
    "Don't forget to buy milk.",  # a one-off reminder
    "别忘了带伞",
    "好的，记住了",
    "这种事我总是记不住。",
    "睡眠对我很重要。",  # states a value; it is not a request
    "Remembering names is hard for me.",
])
def test_words_near_pin_triggers_do_not_pin(text: str) -> None:
    assert not classify(text).pin


def test_values_are_in_range_and_ordered_by_worth() -> None:
    texts = ["ok", "Can you summarise this?", "Yesterday I went hiking.", "I live in Lyon.",
             "We decided to use Rust.", "Remember this: I'm allergic to latex."]
    values = [classify(t).importance for t in texts]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values == sorted(values)


def test_rule_classifier_wraps_the_rules() -> None:
    rules = RuleClassifier()
    assert isinstance(rules, Classifier)
    assert rules.classify("I prefer tea.") == classify("I prefer tea.")


# --- the LLM classifier ---------------------------------------------------------------------------------


class FakeLLM:
    """Answers each call with the next canned reply (an exception is raised instead)."""

    name = "fake"

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, str]] = []

    def complete(self, system: str, user: str, *, json_mode: bool = False, max_tokens: int = 512) -> str:
        self.calls.append((system, user))
        reply = self.replies.pop(0) if self.replies else "no json here"
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_llm_classifier_maps_a_good_answer() -> None:
    llm = FakeLLM('{"kind": "Preference", "salience": 0.8, "priority": "p1", "pin": false}')
    classifier = LLMClassifier(llm)
    assert isinstance(classifier, Classifier)
    guess = classifier.classify("I like my coffee black.")
    assert guess == Classification(Kind.PREFERENCE, 0.8, Priority.P1, False, False)
    assert llm.calls == [(prompts.CLASSIFY, "I like my coffee black.")]
    assert classifier.fallbacks == 0


def test_llm_classifier_repairs_values_it_can_and_borrows_the_rest_from_the_rules() -> None:
    text = "The prod database password lives in 1Password."
    rules = classify(text)
    reply = json.dumps({"kind": "fact", "salience": 7, "priority": "urgent", "pin": "maybe"})
    guess = LLMClassifier(FakeLLM(reply)).classify(text)
    assert guess.kind is Kind.FACT and guess.importance == 0.7  # a 0..10 answer is rescaled
    assert guess.priority is rules.priority and guess.pin is rules.pin and guess.security  # from the rules

    for salience, expected in [(-0.2, rules.importance), (250, rules.importance), ("85%", 0.85), ("0.3", 0.3),
                               (True, rules.importance), (float("nan"), rules.importance)]:
        reply = json.dumps({"kind": "fact", "salience": salience, "priority": "P1", "pin": False})
        assert LLMClassifier(FakeLLM(reply)).classify(text).importance == expected


def test_llm_classifier_pinned_means_p0() -> None:
    reply = '{"kind": "fact", "salience": 0.9, "priority": "P2", "pin": "true"}'
    guess = LLMClassifier(FakeLLM(reply)).classify("My blood type is O negative.")
    assert guess.pin and guess.priority is Priority.P0


@pytest.mark.parametrize("replies", [
    ('{"kind": "summary", "salience": 0.5}',),  # not one of the five kinds
    ('{"salience": 0.5}',),
    ('["fact"]',),
    ("sorry, I cannot help", "still no JSON"),  # complete_json asks twice, then gives up
    (EbbingError("chat server answered 500"),),
])
def test_llm_classifier_falls_back_to_the_rules(replies: tuple[str | Exception, ...]) -> None:
    text = "We decided to move the standup to 10am."
    classifier = LLMClassifier(FakeLLM(*replies))
    assert classifier.classify(text) == classify(text)
    assert classifier.fallbacks == 1


# --- the benchmark --------------------------------------------------------------------------------------


def test_benchmark_scores_a_small_file(tmp_path: Path) -> None:
    rows = [
        {"text": "ok", "lang": "en", "kind": "temporary", "pin": False, "priority": "P2"},
        {"text": "I prefer tea.", "lang": "en", "kind": "preference", "pin": False, "priority": "P1"},
        {"text": "I prefer tea.", "lang": "en", "kind": "fact", "pin": True, "priority": "P0"},  # wrong on purpose
        {"text": "记住：我对花生过敏。", "lang": "zh", "kind": "fact", "pin": True, "priority": "P0"},
    ]
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    result = bench.run([path])
    scored = result["files"][0]
    assert result["classifier"] == "rules" and scored["name"] == "small.jsonl" and scored["lines"] == 4
    assert scored["kind_accuracy"] == 0.75
    assert scored["per_language"] == {"en": {"lines": 3, "kind_accuracy": 0.6667},
                                      "zh": {"lines": 1, "kind_accuracy": 1.0}}
    assert scored["confusion"]["fact"]["preference"] == 1 and scored["confusion"]["fact"]["fact"] == 1
    assert scored["pin"] == {"true_positives": 1, "false_positives": 0, "false_negatives": 1,
                             "precision": 1.0, "recall": 0.5}
    assert scored["priority_accuracy"] == 0.75
    assert [e["line"] for e in scored["misclassified_shown"]] == [3]
    tables = bench.render(result)
    assert len(tables) == 3  # summary, confusion matrix, misclassified lines


def test_benchmark_finds_the_labelled_files() -> None:
    assert [p.name for p in bench.default_paths()] == ["classify-dev.jsonl", "classify-test.jsonl",
                                                        "classify-holdout2.jsonl", "classify-holdout3.jsonl"]


# All three labelled files are development data now. classify-dev.jsonl was tuned on from the start;
# classify-test.jsonl was held out until it had been scored once (0.827 kind accuracy), and
# classify-holdout2.jsonl, written after the rules, was scored once at 0.847 (en 0.827, zh 0.867), below the
# 90% target. The rules were then improved against both files' mistakes, with patterns for classes of
# utterances rather than for their lines, so none of these numbers says how the rules generalise any more.
# That takes a new held-out file, which must not be used to tune the rules.
@pytest.mark.parametrize(("name", "lines"), [("classify-dev.jsonl", 200), ("classify-test.jsonl", 150),
                                             ("classify-holdout2.jsonl", 150)])
def test_rules_reach_the_accuracy_target_on_the_development_files(name: str, lines: int) -> None:
    scored = bench.run([DATA / name])["files"][0]
    assert scored["lines"] == lines
    assert scored["kind_accuracy"] >= 0.90, scored["misclassified_shown"]
    assert scored["per_language"]["en"]["kind_accuracy"] >= 0.90
    assert scored["per_language"]["zh"]["kind_accuracy"] >= 0.90
    assert scored["pin"]["precision"] == 1.0 and scored["pin"]["recall"] == 1.0


# classify-holdout3.jsonl was written by someone who had read neither the rules nor the other files, after the
# rules had been improved on the three files above, and scored once: 0.913 kind accuracy (en 0.907, zh 0.920),
# priority 0.927, pin precision 1.0 and recall 0.933. Its 13 mistakes are left as they are: tuning on them
# would turn it into development data and leave no honest number. This test only guards that score.
def test_rules_generalise_to_the_held_out_file() -> None:
    scored = bench.run([DATA / "classify-holdout3.jsonl"])["files"][0]
    assert scored["lines"] == 150
    assert scored["kind_accuracy"] >= 0.90, scored["misclassified_shown"]


def test_benchmark_scores_every_labelled_file_separately() -> None:
    result = bench.run()
    assert [f["name"] for f in result["files"]] == ["classify-dev.jsonl", "classify-test.jsonl",
                                                    "classify-holdout2.jsonl", "classify-holdout3.jsonl"]
    assert [f["lines"] for f in result["files"]] == [200, 150, 150, 150]


def test_benchmark_command_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--data", str(DATA / "classify-dev.jsonl"), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in result["files"]] == ["classify-dev.jsonl"]
    assert set(result["files"][0]["confusion"]) == {"fact", "preference", "decision", "temporary", "episode"}


def test_benchmark_command_prints_tables(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--data", str(DATA / "classify-dev.jsonl")])
    out = capsys.readouterr().out
    assert "kind confusion" in out and "pin precision / recall" in out


@pytest.mark.parametrize("text", ["Morning! I'm Maya Chen, backend lead on the Atlas team, so let me set a few things "
                                  "straight first.", "Good afternoon all, I'm Tomás Ruiz from the data team."])
def test_an_introduction_after_a_greeting_is_an_identity_fact(text: str) -> None:
    result = classify(text)
    assert (result.kind, result.priority) == (Kind.FACT, Priority.P0)


def test_a_greeting_with_no_name_is_still_small_talk() -> None:
    assert classify("hi, i'm going to lunch").kind is Kind.TEMPORARY


@pytest.mark.parametrize(("text", "kind"), [
    ("Gina: Thanks, Jon! Appreciate your support!", Kind.TEMPORARY),
    ("Jon: Lost my job as a banker yesterday, so I'm gonna take a shot at starting my own business.", Kind.EPISODE),
    ("Caroline: Thanks, Mel! Your backing really means a lot. I felt super powerful giving my talk. I shared my "
     "own journey and the struggles I had.", Kind.EPISODE),
    ("Important: the staging database moved to db-9", None),  # a cue label stays and is read
    ("Verdict: the blue logo stays.", Kind.DECISION),
])
def test_a_transcript_line_is_read_without_its_speaker_label(text: str, kind: Kind | None) -> None:
    result = classify(text)
    if kind is None:
        assert result.pin and result.priority is Priority.P0
    else:
        assert result.kind is kind, result
    if text.startswith(("Gina:", "Jon:", "Caroline:")):
        bare = classify(text.split(": ", 1)[1])
        assert (result.kind, result.priority) == (bare.kind, bare.priority)
