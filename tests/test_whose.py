"""Whose value a memory holds: a question about the user ranks the user's own statement above a relative's, in
English and Chinese, on every backend; a question that names the relative, or a third person, is left alone."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ebbing import Memory
from ebbing.recall import whose

from .conftest import T0


@pytest.mark.parametrize(("query", "about_user"), [
    ("What's my mobile number?", True),
    ("Which city do I live in?", True),
    ("我一个月税前挣多少？", True),
    ("What's my wife's mobile number?", False),  # names the relative
    ("我老婆的手机号是多少？", False),
    ("What did Caroline research?", False),  # a third person
    ("What's Marco's number?", False),  # a name
    ("How do solar panels work?", False),  # not about anyone
])
def test_a_question_is_about_the_user_when_first_person_and_naming_nobody_else(query: str, about_user: bool) -> None:
    assert whose.asks_about_user(query) is about_user


@pytest.mark.parametrize(("text", "another"), [
    ("My wife's mobile is 555-0177, put her down as the emergency contact.", True),
    ("My brother runs 50 km a week, total show-off.", True),
    ("我老婆税前一个月一万五左右。", True),
    ("紧急联系人填我老婆，她手机是13698765432。", True),
    ("My cell is 555-0142 in case you need it for any forms.", False),
    ("我税前月薪一万八，五险一金按全额交。", False),
    # a relation far into the statement says whom it was with, not whose value it is
    ("I moved to 9 Quarry Road in York last month, my sister helped me carry the boxes.", False),
    # done with a relation, or together with one: the user's own
    ("Dinner with my boyfriend Marco tonight, he insists on cooking.", False),
    ("My wife and I moved to Denver in March.", False),
    ("国庆计划改了，跟朋友去新疆自驾。", False),
    ("和老婆一起去吃了火锅。", False),
    # done to or for a relation: the user's own doing, not the relation's value
    ("Sold the Honda to my nephew, picking up the RAV4 on Thursday.", False),
    ("秦卖给表弟了，提了辆理想L6。", False),
    ("今天第一次给孙经理做周汇报。", False),
])
def test_a_statement_opening_on_a_relation_is_another_persons(text: str, another: bool) -> None:
    assert whose.opens_on_another_person(text) is another


@pytest.mark.parametrize(("own", "relative", "question", "naming"), [
    ("My salary is 5,200 a month after tax.", "My wife's salary is 4,800 a month after tax.",
     "How much is my salary after tax?", "How much is my wife's salary after tax?"),
    ("我税前月薪一万八。", "我老婆税前月薪一万五左右。", "我一个月税前挣多少？", "我老婆一个月税前挣多少？"),
])
def test_the_users_own_value_comes_before_a_relatives(smart: Memory, own: str, relative: str, question: str,
                                                        naming: str) -> None:
    mine = smart.add(own, user_id="u", at=T0).records[0]
    theirs = smart.add(relative, user_id="u", at=T0 + timedelta(days=3)).records[0]
    at = T0 + timedelta(days=4)
    hits = smart.search(question, user_id="u", at=at)
    assert [h.record.id for h in hits][:2] == [mine.id, theirs.id]
    assert hits[1].parts["another_person"] == whose.OTHER_PERSON_WEIGHT and "another_person" not in hits[0].parts
    # asked about the relative, their statement is not held back
    named = smart.search(naming, user_id="u", at=at)
    assert named[0].record.id == theirs.id and all("another_person" not in h.parts for h in named)


def test_a_relatives_statement_still_answers_when_it_is_the_only_one(smart: Memory) -> None:
    theirs = smart.add("My brother runs about 50 km a week.", user_id="u", at=T0).records[0]
    hits = smart.search("How far do I run each week?", user_id="u", at=T0 + timedelta(days=1))
    assert hits and hits[0].record.id == theirs.id  # ranked lower, never hidden
