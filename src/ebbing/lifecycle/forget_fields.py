"""Which of a user's records hold the field a forget request names ("delete my phone number", "别再记我的车牌").

A field is said in other words than the statements that hold it: "my date of birth" against "My birthday is
March 9", "my home address" against "I live at 14 Alder Road", "我家地址" against "网购都寄安苑路那个地址" or
"住在锦城花园5栋2单元1203". A small embedder puts many such pairs under the relevance floor, so the request's
ranking alone misses them (docs/evaluation.md). What does not depend on the wording is the *value*: a phone
number, an e-mail, a street address, a plate, an amount of pay, a weight, a redacted password all have a shape
or a word of their own in either language. So a field request also takes every record that holds a value of
the field it names, as long as nothing says it is someone else's or another one of several:

- its field is recognised in the request's words (`Field.asked`), and the record holds that field's value or
  words (`Field.held`);
- no possessive names another owner ("my sister's address", "my agent's number", "老公的手机号"), and it does
  not start with another person as its subject ("My daughter was born on ...");
- it holds no which-one word the request left out ("my cell" does not take "my work number ...");
- when the request holds other words ("the *wifi* password"), only the field's records that share one of them
  ("the door code" stays; when none does, none is taken on its field alone).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ebbing.judgement.align import CONTENT, PEOPLE_KEYS, align, tokens
from ebbing.model import MemoryRecord


@dataclass(frozen=True)
class Field:
    name: str
    asked: re.Pattern[str]  # the request names this field
    held: re.Pattern[str]  # a record holds its value or says its name ...
    unless: re.Pattern[str] | None  # ... and is not a value of another field that looks alike (a card number)
    words: frozenset[str]  # the field's own words (not what tells two of its records apart)
    several: bool  # a user may hold two at once (a home and a lake house), not one value over time (a weight)
    digits: bool  # every value of it holds a digit or a redacted secret (a cheap first look over a whole archive)

    def holds(self, text: str) -> bool:
        if self.digits and not _DIGIT.search(text):
            return False
        return bool(self.held.search(text)) and not (self.unless and self.unless.search(text))


_DIGIT = re.compile(r"\d|\[secret:")
# A newer statement said as a replacement of an older one ("moved", "rescheduled to the 21st", "换了个新号"): one
# thing with a new value, not a second one.
REPLACES = re.compile(r"\b(?:now|new|changed?|switched|moved|instead|rescheduled|pushed|postponed|updated|"
                      r"replaced|no longer|anymore)\b|改|换|搬|现在|新的|推迟|延期|提前", re.I)


def _field(name: str, asked: str, held: str, words: str, unless: str | None = None, *, digits: bool = False) -> Field:
    return Field(name, re.compile(asked, re.I), re.compile(held, re.I), re.compile(unless, re.I) if unless else None,
                 frozenset(words.split()), name not in _OVER_TIME, digits)


_OVER_TIME = frozenset({"birthday", "age", "weight", "salary"})  # one value of the user's at a time


_STREET = (r"street|st|road|rd|lane|ln|avenue|ave|drive|dr|way|court|ct|boulevard|blvd|place|pl|mews|close|crescent"
           r"|terrace|parkway|circle|row|grove|gardens|square|highway|hwy")
_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
_PHONE = r"(?<![\d])(?:\+?\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,5}[ .-]?\d{3,4}[ .-]?\d{3,4}(?!\d)"

# In the order they are tried: the first field a request names is the one meant ("my e-mail address" is an
# e-mail, not a street address; "account number" not a phone number).
FIELDS: tuple[Field, ...] = (
    _field("email", r"e-?mail|gmail|hotmail|outlook address|邮箱|电邮|邮件地址",
           r"[\w.+-]+@[\w-]+\.[\w.]+|\[secret:email[^\]]*\]", "email e-mail mail gmail address 邮箱 电邮 地址"),
    _field("password", r"password|passcode|pass code|\bpin\b|door code|lock code|密码|口令",
           r"\[secret:(?:password|code|pin|passcode)[^\]]*\]|password|passcode|\bpin (?:is|code)\b|密码|口令",
           "password passcode pass code pin 密码 口令"),
    _field("account",
           r"account number|bank account|bank details|routing|card number|iban|sort code|银行卡|卡号|账号|账户",
           r"\[secret:(?:bank_account|card|iban)[^\]]*\]|(?<!\d)\d{4} ?\d{4} ?\d{4} ?\d{4}(?!\d)"
           r"|(?:\baccount\b|routing|\biban\b|sort code|银行卡|卡号|账号|账户)\D{0,24}\d{4}",
           "account number bank details routing card iban sort code 银行卡 卡号 账号 账户 号", digits=True),
    _field("plate", r"number plate|licen[cs]e plate|\bplates?\b|\breg\b|car registration|车牌",
           rf"(?:\bplate|\breg\b|registration|车牌)\W{{0,12}}(?-i:[A-Z0-9][A-Z0-9 ·-]{{3,9}}[A-Z0-9])\b"
           rf"|(?-i:\b[A-Z]{{2}}\d{{2}} ?[A-Z]{{3}}\b)|[{_PROVINCES}](?-i:[A-Z])·?[A-Z0-9]{{5,6}}",
           "number plate license licence reg registration car 车牌 号 车牌号"),
    _field("phone", r"phone|\bcell\b|mobile|手机|电话|手机号|号码",
           rf"{_PHONE}|(?:\bphone|\bcell|\bmobile|手机|电话|号码|私人号|新号|旧号)\D{{0,12}}\d{{3}}",
           "phone number cell mobile 手机 电话 手机号 号码 号",
           r"\bcard\b|account|routing|\biban\b|order|tracking|invoice|ticket|booking|flight|\[secret:|landline"
           r"|extension|\bext\b|office line|卡|账号|账户|订单|单号|快递号|航班|座机|固话|分机|总机|前台"
           r"|(?<!\d)\d{4} \d{4} \d{4} \d{4}(?!\d)", digits=True),
    _field("birthday", r"birthday|date of birth|\bdob\b|birth ?date|\bborn\b|生日|出生",
           r"\bbirthday\b.{0,40}\d|\d.{0,24}\bbirthday\b|\bborn\b.*\d|date of birth|\bdob\b"
           r"|生日.{0,12}[\d一二三四五六七八九十]|[\d一二三四五六七八九十].{0,12}生日"
           r"|出生.*[\d一二三四五六七八九十]|[\d一二三四五六七八九十].*出生",
           "birthday date birth dob born 生日 出生 日期"),
    _field("age", r"\bmy age\b|how old|年龄|岁数",
           r"\bI(?:'m| am)\s+(?:turning\s+)?\d{1,3}\b(?!\s*(?:foot|feet|ft|cm|kg|lbs?|pounds|%|minutes?|hours?|days?|"
           r"weeks?|months?|miles?|km))|\bI\s+turn(?:ed|s)?\s+\d{1,3}\b|\bmy\s+\d{1,3}(?:st|nd|rd|th)\s+birthday"
           r"|我.{0,8}[\d一二三四五六七八九十]+岁|[\d一二三四五六七八九十]+岁(?:生日|了)",
           "age old 年龄 岁数"),
    _field("weight", r"\bweight\b|\bweigh|体重",
           r"\bweigh(?:s|ed|ing)?(?: in)?(?: at)?\s+(?:about |around |like |only )?\d{2,3}\b"
           r"|\b\d{2,3}(?:\.\d+)? ?(?:lbs?|pounds|kg|kilos?)\b(?! of)|\bdown to \d{2,3}\b"
           r"|体重.{0,8}[\d一二三四五六七八九]|称.{0,8}[\d一二三四五六七八九十]"
           r"|(?<!买)(?<!买了)(?:\d{2,3}(?:\.\d+)?|[一二三四五六七八九]百[一二三四五六七八九十]*)(?:斤|公斤)",
           "weight weigh 体重 数字",
           r"\b(?:bag|box|sack|dog|cat|puppy|kitten|luggage|suitcase|fish|baby)\b|狗|猫|行李|箱"),
    _field("salary", r"salary|\bwages?\b|\bincome\b|\bpay\b|工资|薪水|薪资|收入|月薪|年薪",
           r"salary|\bwages?\b|\bincome\b|\b(?:got|get|getting|gave me|give me)\b.{0,12}\braise\b"
           r"|\bpay ?(?:rise|raise)\b|base pay|\bpaycheck|\b\d+(?:\.\d+)?k (?:a year|per year|base|salary|gross)"
           r"|工资|薪|收入|税前|税后",
           "salary wage wages income pay 工资 薪水 薪资 收入 月薪 年薪"),
    _field("address", r"address|where i live|住址|地址|住在哪|家在哪",
           rf"\b\d+[a-z]?,? (?-i:(?:[A-Z][\w'-]* ){{1,3}})(?:{_STREET})\b|\bi live (?:at|on)\b|address"
           r"|[\u4e00-\u9fff]{1,6}(?:路|街|大街|大道|巷|胡同)(?:\d+号)?|\d+(?:栋|单元|号楼|号院)|住在|住址|地址",
           "address home live where 住址 地址 住 家", r"@|\[secret:email|\bweb ?address|\bip address|网址|邮箱"),
)

_STOP = frozenset("""my our the a an your of and or to for on in at it this that these those both one ones old new
    all any every numbers number info information details detail stuff thing things file please me i
    我 我的 我们 我家 的 了 那个 这个 信息 东西 数字 都 和 还有 吧 记录 多少 具体 是 哪儿 哪里""".split())
_OWNER = re.compile(r"(?P<det>\b(?:my|our|the|his|her|their)\s+(?:\w+\s+)?)?\b(?P<who>[A-Za-z][a-z]+)(?:'s|s')\s", re.I)
_OWN = frozenset({"my", "our", "it", "one", "that", "this", "who", "what", "there", "here", "he", "she", "today"})
_ZH_OWNER = re.compile(r"([\u4e00-\u9fff]{1,3})的")
_ZH_OWN = ("我", "我们", "我家", "自己", "本人")
_SUBJECT = re.compile(r"^\s*(?:my|our)\s+(?P<who>\w+)(?:\s+(?P<next>\w+))?"
                      r"|^\s*(?:我|我们)(?:的|家)?(?P<zh>[\u4e00-\u9fff]{1,3})", re.I)


def head(target: str) -> str:
    """What a target names before any exception or aside: "my mobile — the work one can stay" -> "my mobile"."""
    return re.split(r"\s[—–-]\s|[;(（，。,.!?！？]", target)[0]


def field_of(target: str) -> Field | None:
    """The field a request's target names (in its `head`), if it names one."""
    return next((f for f in FIELDS if f.asked.search(head(target))), None)


def two_values(older: str, newer: str, own: frozenset[str] | set[str] = frozenset()) -> bool:
    """Do two statements hold two different things of one kind: each has a number or name the other lacks, none in
    common (`own` words, such as a field's "卡号", are no value), and the newer is not said as a replacement of the
    older (`REPLACES`)? "14 Alder Road" said twice, or "Ally" as a name in one and a word in the other, is one."""
    pair = align(older, newer)
    old_keys, new_keys = pair.keys("old", *CONTENT), pair.keys("new", *CONTENT)
    shared = ((pair.keys("old", "num", "name") & new_keys) | (pair.keys("new", "num", "name") & old_keys)) - own
    return bool(pair.only("old", "num", "name") and pair.only("new", "num", "name")) and not shared \
        and not REPLACES.search(newer)


def _someone_elses(target: str, text: str) -> bool:
    """Another owner named ("my agent's number", "Mom's cell", "老公的手机号") or another person the subject, and
    the target does not name them."""
    asked = target.casefold()
    for match in _OWNER.finditer(text + " "):
        who = match.group("who")
        # an owner: "my agent's", "the landlord's", a kin word ("Mom's"), a name mid-sentence ("call Dave's");
        # not "number's still ..." (number is)
        owner = match.group("det") or who.casefold() in PEOPLE_KEYS or who.casefold().rstrip("s") in PEOPLE_KEYS \
            or (who[0].isupper() and match.start("who") > 0 and text[:match.start("who")].rstrip()[-1:] not in ".!?")
        if owner and who.casefold() not in _OWN and who.casefold() not in asked:
            return True
    for match in _ZH_OWNER.finditer(text):
        who = match.group(1)
        if not who.endswith(_ZH_OWN) and not any(w in who for w in _ZH_OWN) and who not in target \
                and any(who.endswith(p) or who.startswith(p) for p in PEOPLE_KEYS if not p.isascii()):
            return True
    people_asked = {k for k in PEOPLE_KEYS if (k in asked if not k.isascii() else re.search(rf"\b{k}", asked))}
    if people_asked:  # "我老公工资多少": his, not mine
        return not any((k in text) if not k.isascii() else re.search(rf"\b{k}", text, re.I) for k in people_asked)
    opening = re.match(r"\s*([A-Za-z]+|[\u4e00-\u9fff]{1,3})", text)
    if opening and any(opening.group(1).casefold() == k or (not k.isascii() and opening.group(1).startswith(k))
                       for k in PEOPLE_KEYS):
        return True  # "Dad is 67", "老公在体制内，工资不高": about them
    subject = _SUBJECT.match(text)
    if subject:  # "My daughter was born ...", "my little sister's ...", "我老公 ..."
        said = [(subject.group(g) or "").casefold() for g in ("who", "next", "zh")]
        people = {k for k in PEOPLE_KEYS for who in said if who and (who == k or who.rstrip("s") == k
                                                                    or who.removesuffix("'s") == k
                                                                    or (not k.isascii() and who.startswith(k)))}
        if people and not any(p in asked for p in people):
            return True
    return False


# Words that say which one of the user's several values of a field a statement holds ("my *work* number", "我的
# *私人*手机号"); a time of day or "home" does not ("my home address" is the address).
_WHICH_EN = frozenset("work office business company school personal private backup secondary guest side spare burner"
                      .split())
_WHICH_ZH = re.compile(r"工作(?=号|手机|电话|邮箱|卡|账号)|公司|单位|办公室|学校|私人|个人|备用|副卡")


def _which(text: str) -> set[str]:
    """The which-one words of a text, as compared between a target and a record."""
    english = {w.casefold() for w in re.findall(r"[A-Za-z]+", text)} & _WHICH_EN
    return english | {"work" if m == "工作" else m for m in _WHICH_ZH.findall(text)}


def _words(text: str, field: Field) -> set[str]:
    """What a text says besides the field's own words: what tells one of the field's records from another."""
    out = set()
    for t in tokens(text):
        if t.tag in ("word", "name") and t.key not in _STOP and t.key not in field.words \
                and t.surface.casefold() not in _STOP and t.surface.casefold() not in field.words:
            out.add(t.key)
    return out


def holding(target: str, records: Iterable[MemoryRecord], *, skip: Sequence[str] = ()) -> list[MemoryRecord]:
    """The records that hold the field `target` names and are the user's own (see the module's doc); nothing
    when the target names no known field. `skip`: ids already chosen or not to be taken."""
    target = head(target)
    field = field_of(target)
    if field is None:
        return []
    wanted = _which(target)
    found = []
    for record in records:
        text = record.text
        if record.id in skip or not field.holds(text):
            continue
        if _someone_elses(target, text) or _which(text) - wanted:
            continue
        found.append(record)
    extra = _words(target, field)
    if extra:  # "the wifi password": the records that say which one, or none (the door code is not it)
        return [r for r in found if extra & _words(r.text, field)]
    return found


def unsaid_which(target: str, records: Iterable[MemoryRecord]) -> list[MemoryRecord]:
    """The user's records that hold the field when each says which one it is and the target says none ("my
    number": "my personal mobile is ..." and "work phone is ..."; "我的密码": none plain): the words do not say which,
    so the agent should ask. Nothing when one value is said plainly ("My phone number is ..." is the one meant), or
    the target says which or what else ("the wifi password")."""
    target = head(target)
    field = field_of(target)
    if field is None or not field.several or _which(target) or _words(target, field) \
            or any(t.tag == "qualifier" for t in tokens(target)):  # "the home phone number" says which
        return []
    held = [r for r in records if field.holds(r.text) and not _someone_elses(target, r.text)]
    kinds = {frozenset(_which(r.text)) for r in held}
    return held if len(kinds) >= 2 and frozenset() not in kinds else []


def alternatives(target: str, records: Sequence[MemoryRecord]) -> bool:
    """Do the records hold two values of the field the target names that can both be the user's at once ("my
    address": the home and the lake house; "我的密码": the wifi's and the door's), when the target does not say
    which one? A newer value said as a change (`REPLACES`: "moved", "new", "换了") replaces the older one and is no
    alternative to it; neither is the same value said again, in more or fewer words ("14 Alder Road, flat 2")."""
    target = head(target)
    field = field_of(target)
    if field is None or not field.several or _which(target) or _words(target, field):
        return False
    held = sorted((r for r in records if field.holds(r.text) and not _someone_elses(target, r.text)),
                  key=lambda r: r.created_at)
    return any(two_values(older.text, newer.text, field.words)
               for i, older in enumerate(held) for newer in held[i + 1:])
