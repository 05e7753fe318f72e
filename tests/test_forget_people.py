"""Two people behind one name (`lifecycle.forget_people`): the words next to a name tell them apart, or not."""

from __future__ import annotations

import pytest

from ebbing.lifecycle.forget_people import kin_of, kin_orders, relation_names, relation_of, said_which, two_people


@pytest.mark.parametrize(("name", "texts"), [
    ("Priya", ["My neighbour Priya walks her greyhound at seven.", "Priya from work sent the slides late again."]),
    ("Priya", ["Priya Raman is my dentist.", "Priya Osei is joining our book group."]),
    ("Leo", ["Leo (the gym one) says I should deadlift more.", "My cousin Leo is getting married in May."]),
    ("老周", ["隔壁的老周养了三只猫。", "公司的老周下个月退休。"]),
    ("阿杰", ["阿杰教练让我每天拉伸。", "表哥阿杰在深圳开奶茶店。"]),
])
def test_two_contexts_no_statement_joins_are_two_people(name: str, texts: list[str]) -> None:
    assert two_people(name, texts)


@pytest.mark.parametrize(("name", "texts"), [
    ("Priya", ["My coworker Priya runs the data team.", "Priya from work sent the slides late again.",
               "Had lunch with Priya, she is moving to Lisbon."]),
    ("Priya", ["Priya Raman is my dentist.", "Priya R. moved her clinic to Elm Street."]),
    ("Leo", ["My cousin Leo is getting married in May.", "Leo asked me to be his best man."]),
    # one statement joins the two contexts: one person
    ("Leo", ["Leo from work is also my climbing coach.", "My coworker Leo hates Mondays.", "Leo at the gym yelled."]),
    ("老周", ["公司的老周下个月退休。", "老周请我们吃了散伙饭。"]),
])
def test_one_context_or_joined_contexts_are_one_person(name: str, texts: list[str]) -> None:
    assert not two_people(name, texts)


def test_a_relation_said_with_two_names() -> None:
    texts = ["My older sister Ana teaches chemistry.", "My younger sister Bea just had twins.", "Ana hates flying."]
    assert relation_of("my sister") == "sister"
    assert relation_names("sister", texts) == {"Ana", "Bea"}
    assert relation_of("my older sister") is None  # it says which
    assert relation_of("my sister's wedding") is None  # it names a thing, not the person
    assert relation_names("sister", ["My sister Ana teaches chemistry.", "Ana hates flying."]) == {"Ana"}
    assert relation_names("uncle", ["Uncle Ray fixed my bike.", "My uncle Tomas lives in Porto."]) == {"Ray", "Tomas"}


@pytest.mark.parametrize(("target", "which"), [
    ("Priya from work", True), ("Priya Raman", True), ("邻居老周", True), ("Priya", False), ("老周", False),
])
def test_a_target_that_says_which(target: str, which: bool) -> None:
    assert said_which(target) is which


def test_chinese_kin_by_birth_order() -> None:
    assert kin_of("我姐的事") == ("姐", False)
    assert kin_of("舅舅住院那事") == ("舅", True)  # names more than the person: judged among what it found
    assert kin_of("我大姐") is None  # it says which
    assert kin_of("姐夫的事") is None  # an in-law, another person
    assert kin_orders("姐", ["我大姐在成都。", "二姐在杭州。", "客服小姐很耐心。"]) == {"大", "二"}
    assert kin_orders("舅", ["老舅来了。", "大舅妈做的菜好吃。", "大舅在老家。"]) == {"大"}
