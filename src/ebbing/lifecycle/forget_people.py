"""Two people behind one name: when "forget everything about Sam" or "小李的事别记了" should ask which one.

A user's statements often tell two people of one name apart by the words next to the name: a surname ("Sam
Torres", "Sam Whitfield"), or where the user knows them from ("Sam at work", "College Sam", "部门小李", "邻居小李",
"小李教练"). A request that says only the name then fits two people, and forgetting both destroys what the user
meant to keep, so the agent should ask. The same holds for a relation said with two names ("my older brother
Dan", "my younger brother Chris", then "forget everything about my brother").

The signal is deliberately narrow: words of a context next to the name, not the whole sentence's topic; and the
two contexts must never be said of the one name together ("my coworker Sam, a college friend" joins them). A
context a person can share with any other ("friend") tells nobody apart and is not one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# Where the user knows someone from, in both languages. Each group is one context; a word of two groups in one
# statement joins them.
_CONTEXTS: dict[str, tuple[str, ...]] = {
    "work": ("work", "coworker", "co-worker", "colleague", "office", "team", "teammate", "boss", "manager", "job",
             "client", "accounting", "hr", "finance", "sales", "marketing", "engineering", "design", "platform",
             "同事", "部门", "组里", "同组", "我们组", "公司", "单位", "领导", "组长", "老板", "客户"),
    "school": ("college", "school", "university", "uni", "classmate", "roommate", "dorm", "同学", "大学", "高中",
               "初中", "室友", "学校"),
    "neighbour": ("neighbor", "neighbour", "downstairs", "upstairs", "next door", "building", "landlord", "邻居",
                  "楼下", "楼上", "隔壁", "小区", "房东", "物业"),
    "gym": ("gym", "trainer", "coach", "yoga", "climbing", "健身", "教练", "私教", "瑜伽"),
    "family": ("cousin", "uncle", "aunt", "nephew", "niece", "in-law", "husband", "wife", "sister", "brother",
               "表哥", "表弟", "表姐", "表妹", "亲戚",
               "堂哥", "堂弟", "堂姐", "堂妹", "姑姑", "舅舅", "姐夫", "妹夫", "嫂子"),
    "medical": ("doctor", "dr", "dentist", "nurse", "therapist", "医生", "大夫", "护士"),
    "club": ("club", "book club", "church", "choir", "band", "读书会", "教会", "合唱团", "俱乐部"),
}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_SENTENCE = re.compile(r"[^.!?。！？\n]+")
_SURNAME = re.compile(r"\s+(?P<surname>(?-i:[A-Z][a-z]{2,}|[A-Z]\.))")
_NOT_SURNAMES = frozenset("I The And But So Then Also Just Is Was Has Had Will Said Says And Or".split())
_ORDER = r"(?:older|younger|elder|eldest|oldest|youngest|big|little|baby|twin|step|half|middle)"


def _contexts(words: str) -> set[str]:
    """The contexts a short span of words names ("my college roommate" -> school)."""
    found = set()
    latin = {w.casefold().removesuffix("'s") for w in _WORD.findall(words)}
    for context, cues in _CONTEXTS.items():
        for cue in cues:
            if (cue in latin or (" " in cue and cue in words.casefold())) if cue.isascii() else cue in words:
                found.add(context)
    return found


def _around(sentence: str, name: str) -> tuple[set[str], set[str]]:
    """(contexts, surnames) said next to each mention of `name` in one sentence."""
    contexts: set[str] = set()
    surnames: set[str] = set()
    han = bool(re.search(r"[\u4e00-\u9fff]", name))
    pattern = re.escape(name) if han else rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])"
    for match in re.finditer(pattern, sentence, flags=0 if han else re.I):
        before, after = sentence[:match.start()], sentence[match.end():]
        if han:
            # "部门小李", "楼下邻居也姓李，大家都叫他小李", "小李教练", "小李（同事那个）"
            contexts |= _contexts(before[-16:]) | _contexts(re.split(r"[，,、；;]", after, maxsplit=1)[0][:8])
            continue
        # "my college roommate Sam", "Work Sam", "Sam at work", "Sam from college", "Sam (the coworker)"
        # within the clause: "My sister's husband is also called Sam", not "Sam" after an earlier comma
        contexts |= _contexts(" ".join(_WORD.findall(re.split(r"[,;:(]", before)[-1])[-5:]))
        tail = re.match(r"\s*(?:\(|,\s*)?(?:(?:at|from|in|on|of)\s+(?:the\s+|my\s+|our\s+)?|the\s+|my\s+|our\s+)"
                        r"([A-Za-z' -]{2,24})", after, re.I)
        if tail:
            contexts |= _contexts(" ".join(_WORD.findall(tail.group(1))[:2]))
        role = re.match(r"(?:\s+[A-Z][a-z]*\.?)?(?:\s+from\s+[a-z]+)?\s+(?:is|was|'s)\s+(?:also\s+|still\s+)?"
                        r"(?:my|our|a|the)\s+([A-Za-z' -]{2,30})", after)  # "Leo from work is also my climbing coach"
        if role:
            contexts |= _contexts(" ".join(_WORD.findall(role.group(1))[:3]))
        aside = re.match(r"\s*\(([^()]{1,30})\)", after)  # "Sam (work Sam)"
        if aside:
            contexts |= _contexts(aside.group(1))
        surname = _SURNAME.match(after)
        if surname and surname.group("surname").rstrip(".") not in _NOT_SURNAMES:
            surnames.add(surname.group("surname"))
    return contexts, surnames


def _same_surname(a: str, b: str) -> bool:
    """"W." is the initial of "Whitfield"; "Torres" is not "Whitfield"."""
    if a.endswith(".") or b.endswith("."):
        return a[0] == b[0]
    return a == b


def two_people(name: str, texts: Iterable[str]) -> bool:
    """Do the texts that mention `name` describe two people by it: two surnames that cannot be one, or contexts
    that fall into two groups no statement joins?"""
    groups: list[set[str]] = []
    surnames: list[str] = []
    for text in texts:
        contexts: set[str] = set()
        for sentence in _SENTENCE.findall(text):
            found, named = _around(sentence, name)
            contexts |= found
            surnames.extend(named)
        if contexts:
            groups.append(contexts)
    if any(not _same_surname(a, b) for i, a in enumerate(surnames) for b in surnames[i + 1:]):
        return True
    return len(_join(groups)) >= 2


def _join(groups: Sequence[set[str]]) -> list[set[str]]:
    """The contexts joined wherever one statement says two of them of the name."""
    joined: list[set[str]] = []
    for group in groups:
        overlapping = [g for g in joined if g & group]
        merged = set(group).union(*overlapping)
        joined = [g for g in joined if not g & group] + [merged]
    return joined


def relation_names(relation: str, texts: Iterable[str]) -> set[str]:
    """The names said with a relation across the texts ("my older brother Dan", "my younger brother Chris" ->
    Dan, Chris for "brother"); English only."""
    pattern = re.compile(rf"\b(?:my|our)\s+(?:{_ORDER}\s+)?{re.escape(relation)}\s*,?\s+(?-i:(?P<name>[A-Z][a-z]+))\b",
                         re.I)
    # "Aunt Carol", "Uncle Joe": the relation said as a title
    title = re.compile(rf"\b{re.escape(relation.capitalize())}\s+(?P<name>[A-Z][a-z]+)\b")
    return {m.group("name") for text in texts for found in (pattern, title) for m in found.finditer(text)
            if m.group("name") not in _NOT_SURNAMES}


_RELATION = re.compile(rf"^\s*(?:my|our)\s+(?P<order>{_ORDER}\s+)?(?P<relation>[a-z-]+)\s*$", re.I)
_RELATIONS = frozenset("""brother sister cousin uncle aunt son daughter kid niece nephew grandma grandpa grandmother
    grandfather friend coworker colleague neighbor neighbour roommate boss manager""".split())


def relation_of(target: str) -> str | None:
    """The relation a bare target names ("my brother" -> brother); None when it says which ("my older brother") or
    names more ("my brother's wedding", "my brothers")."""
    match = _RELATION.match(target)
    if not match or match.group("order"):
        return None
    relation = match.group("relation").casefold()
    return relation if relation in _RELATIONS else None


def said_which(target: str) -> bool:
    """Does the target itself say which one ("Sam from work", "部门的小李", "Sam Torres")?"""
    return bool(_contexts(target)) or re.search(r"(?-i:[A-Z][a-z]+\s+(?:[A-Z][a-z]+|[A-Z]\.))", target) is not None


# Chinese kin said by birth order: 大姐 / 二姐, 大舅 / 二舅, 小姨. "我姐" said bare fits every one of them.
_KIN = ("姐姐", "哥哥", "弟弟", "妹妹", "舅舅", "姑姑", "叔叔", "阿姨", "伯伯",
        "姐", "哥", "弟", "妹", "舅", "姑", "叔", "姨", "伯")
_IN_LAW = "夫父妈婆公"  # 姐夫, 姑父, 舅妈: another person
_ZH_ORDINAL = "大二三四五六小老"


def kin_of(target: str) -> tuple[str, bool] | None:
    """(the kin's base character, whether the target names more than the person: "舅舅住院那事") for a Chinese
    target about a relative named without a birth order ("我姐的事" -> 姐; "我大姐" -> None: it says which)."""
    text = re.sub(r"^(?:我的|我家的?|我)", "", target.strip())
    text = re.sub(r"(?:的|那些|那个|那)?(?:事情?|信息|东西|资料)$", "", text)
    if not text or text[0] in _ZH_ORDINAL:
        return None
    for kin in _KIN:
        if text.startswith(kin):
            rest = text[len(kin):]
            return None if rest[:1] and rest[0] in _IN_LAW else (kin[0], bool(rest))
    return None


def kin_orders(base: str, texts: Iterable[str]) -> set[str]:
    """The birth orders said with a kin character across the texts ("大姐", "二姐" -> 大, 二). "老舅" is one uncle
    said fondly and "小姐" a young woman, not orders; "大姐夫" is an in-law."""
    orders = {m.group(1) for text in texts
              for m in re.finditer(rf"([{_ZH_ORDINAL}]){base}(?![{_IN_LAW}])", text)}
    return orders - {"老"} - ({"小"} if base == "姐" else set())
