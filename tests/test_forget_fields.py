"""Which records hold the field a forget request names (`lifecycle.forget_fields`): the value's shape and words in
both languages, and what keeps another person's value or another one of several out."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ebbing.lifecycle.forget_fields import alternatives, field_of, holding
from ebbing.model import Kind, MemoryRecord, Priority

from .conftest import T0


def _records(texts: list[str]) -> list[MemoryRecord]:
    return [MemoryRecord(id=f"r{i}", text=t, kind=Kind.FACT, importance=0.5, priority=Priority.P1,
                         created_at=T0 + timedelta(days=i), updated_at=T0) for i, t in enumerate(texts)]


@pytest.mark.parametrize(("target", "field"), [
    ("my date of birth", "birthday"), ("my home address", "address"), ("my gmail address", "email"),
    ("my cell", "phone"), ("the main wifi password", "password"), ("my number plate", "plate"),
    ("我的手机号", "phone"), ("我家地址", "address"), ("银行卡号", "account"), ("体重的数字", "weight"),
    ("我工资多少", "salary"), ("my favourite restaurant", None), ("我的身份证号", None),
])
def test_the_field_a_target_names(target: str, field: str | None) -> None:
    found = field_of(target)
    assert (found.name if found else None) == field


@pytest.mark.parametrize(("target", "text"), [
    ("my number plate", "That plate is gorgeous, did you make it?"),
    ("my weight", "I've been lifting weights for a year now."),
    ("my weight", "We weighed the pros and cons for weeks."),
    ("my salary", "We raised money for the dog shelter, 5K run and all."),
    ("my home address", "It was a 3 hour drive from me and worth it."),
    ("my age", "Max the cat is already 8 years old."),
    ("my date of birth", "She used to bake pineapple birthday cakes for me."),
    ("my wifi password", "Hard work pays off, I'm so proud of you."),
])
def test_words_of_a_field_without_its_value_are_not_the_field(target: str, text: str) -> None:
    """Conversation is full of a field's words used otherwise (a dinner plate, lifting weights, raising money)."""
    assert holding(target, _records([text])) == []


@pytest.mark.parametrize(("target", "texts", "taken"), [
    ("my date of birth", ["My birthday is March 9, 1988.", "My husband's birthday is July 2.",
                          "My daughter was born on April 30, 2020.", "I was born in Ohio."], [0]),
    ("my cell", ["My cell is 917-555-0126.", "Got a new phone, a Pixel 8.", "My agent's number is 212-555-0110.",
                 "My card is 6222 0210 9876 5432.", "Work line is 0114 496 0321, extension 208."], [0]),
    ("my personal mobile number please — the work one can stay",
     ["My mobile is 07700 900482.", "My work mobile is 07700 900111."], [0]),
    ("my weight", ["Weighed in at 198 this morning!", "Bought a 20 lb bag of dog food.", "Down to 196 lbs!"], [0, 2]),
    ("the main wifi password", ["Home wifi password is [secret:password#61f0].",
                                "My Netflix password is [secret:password#aa11]."], [0]),
    ("我的手机号", ["我手机号是138 1234 5678，有事打这个", "换了个新手机壳，仙人掌图案的。",
                "律所座机是010-65881234，分机808。", "我老婆的手机号是13900001111。"], [0]),
    ("我工资多少", ["涨薪了，现在税前两万五。", "老公在体制内，工资不高但稳定。", "我妈退休工资三千多。"], [0]),
    ("我老公工资多少", ["老公涨工资了，一个月两万。", "我自己是自由插画师，收入不稳定。"], [0]),
    ("银行卡号", ["换工作了，工资卡变成工行的了，6222 0210 9876 5432", "房租每个月十号从工资卡扣。",
              "支付宝账号就是我手机号"], [0]),
    ("我的体重", ["今天早上称了一下，122斤。", "买了两斤苹果。"], [0]),
    ("my favourite restaurant", ["My favourite restaurant is Nopa."], []),
], ids=["birthday", "phone", "which-one", "weight", "password", "phone-zh", "salary-zh", "his-salary-zh", "card-zh",
        "weight-zh", "no-field"])
def test_records_holding_the_field_and_those_kept_out(target: str, texts: list[str], taken: list[int]) -> None:
    records = _records(texts)
    assert [r.id for r in holding(target, records)] == [records[i].id for i in taken]


@pytest.mark.parametrize(("target", "texts", "ask"), [
    ("my address", ["Our home address is 210 Maple Ave, Evanston IL.",
                    "We also have a lake house at 9 Shoreline Dr, Lake Geneva WI."], True),
    ("我的密码", ["家里WiFi密码是 lemon2024!!，客人来了你可以告诉他们。", "门锁密码是 905513，给遛狗的阿姨用。"], True),
    ("我的卡号", ["我的信用卡是中信的，卡号6226 9000 1234 5566。", "储蓄卡是工行的，卡号6222 0202 0000 8877。"], True),
    ("my home address", ["I live at 14 Alder Road, Sheffield S7 1PQ.",
                         "If anything needs posting, use 14 Alder Road, flat 2."], False),  # one address
    ("my address", ["I live at 2214 Birchwood Lane, Columbus.", "Moved! New place is 77 Oakridge Dr, Columbus."],
     False),  # the old one and its successor: both go
    ("我的手机号", ["我手机号是138 1234 5678，有事打这个", "换了个新号，186 2233 4455，旧的不用了"], False),
    ("my weight", ["Weighed in at 198 this morning!", "Down to 189 lbs."], False),  # one value over time
    ("my cell", ["My cell is 917-555-0126.", "Got a second cell for travel, 646-555-0199."], True),  # "got": no change
    ("the wifi password", ["Home wifi password is [secret:password#61f0].", "Door code is [secret:code#aa11]."], False),
], ids=["two-addresses", "two-passwords-zh", "two-cards-zh", "same-address", "moved", "new-number-zh", "weight",
        "second-phone", "said-which"])
def test_two_values_held_at_once_make_the_request_ask(target: str, texts: list[str], ask: bool) -> None:
    assert alternatives(target, _records(texts)) is ask
