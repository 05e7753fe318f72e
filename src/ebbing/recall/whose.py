"""Whose value a memory holds: a question about the user ranks the user's own statements above another person's.

"What's my mobile number?" finds "My cell is 555-0142" and "My wife's mobile is 555-0177" about equally well:
the embedder and the keyword index both see a phone number of someone close. What tells them apart is whose it
is, said at the statement's opening ("my wife's mobile", "我老婆税前", "我儿子一般"), where `succession.competes`
also reads it. So when a question is asked in the first person and names nobody else, a memory that opens on
another person (a relation: wife, brother, 老婆, 儿子; the words `judgement.align.PEOPLE` holds) ranks at
`OTHER_PERSON_WEIGHT` of its weight. It is a weight, not a filter: when only the other person's statement
answers, it still comes first, and nothing is hidden from a question that names the person ("my wife's
number", "我哥的女朋友") or anyone by name.
"""

from __future__ import annotations

import re

from ebbing.judgement.align import CONTENT, PEOPLE_KEYS, tokens
from ebbing.recall.search import is_cjk

OTHER_PERSON_WEIGHT = 0.5
OPENING = 4  # content words at a statement's start, where whose it is gets said
_OPENING_CHARS = {False: 80, True: 24}  # characters that hold them, in a spaced script and in Chinese

_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b|我", re.IGNORECASE)


def asks_about_user(query: str) -> bool:
    """A first-person question that names no other person, by relation or by name."""
    if not _FIRST_PERSON.search(query):
        return False
    return not any(t.key in PEOPLE_KEYS or t.tag == "name" for t in tokens(query))


# Before a relation, these say the user did something with them ("dinner with my boyfriend", "跟朋友去新疆") or
# to or for them ("sold the Honda to my nephew", "in the partner meetings", "卖给表弟"): not whose value it is;
# after one, "and I" / "和我" make it the user's own too ("my wife and I moved"): neither is another's value.
_WITH = frozenset("""with and together to for from at in on by 跟 和 同 与 带 陪 带着 陪着 跟着 给 向 替 为 对
    卖给 送给 交给 发给""".split())
_POSSESSIVE = frozenset("my our the a 我 我们 的".split())
_AND_ME = (("and", "i"), ("and", "me"), ("和", "我"), ("跟", "我"), ("与", "我"))


def relations_at_opening(text: str) -> set[str]:
    """The relations a statement's opening names as whose value it is ("*my wife's* mobile", "*我老婆*税前"),
    not those the user did something with ("with my sister", "跟朋友去")."""
    # Only the opening is read: a search asks this of every candidate, and segmenting a long Chinese text costs
    # milliseconds where its first characters cost microseconds.
    found = tokens(text[:_OPENING_CHARS[is_cjk(text)]])
    out: set[str] = set()
    content = 0
    for i, token in enumerate(found):
        if token.tag not in CONTENT:
            continue
        content += 1
        if content > OPENING:
            break
        if token.key not in PEOPLE_KEYS:
            continue
        before = i - 1
        while before >= 0 and (found[before].key in _POSSESSIVE or found[before].tag == "name"):  # 给孙经理
            before -= 1
        if before >= 0 and found[before].key in _WITH:
            continue
        if tuple(t.key for t in found[i + 1:i + 3]) in _AND_ME:
            continue
        out.add(token.key)
    return out


def opens_on_another_person(text: str) -> bool:
    """Whether a statement's opening says it holds a relation's value rather than the user's."""
    return bool(relations_at_opening(text))


def weights(query: str, texts: list[str]) -> list[float]:
    """A ranking weight per text for this question: `OTHER_PERSON_WEIGHT` for another person's statement when
    the question is about the user, else 1."""
    if not asks_about_user(query):
        return [1.0] * len(texts)
    return [OTHER_PERSON_WEIGHT if opens_on_another_person(text) else 1.0 for text in texts]
