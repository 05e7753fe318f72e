"""Facts with slots: (subject, attribute) -> value, from English and Chinese sentences.

"My DB timeout threshold is 30s", "把超时阈值改成 60s，因为并发从 200 升到 500", "I moved; my new
address is 12 Rue Oberkampf". A fact's slot is its subject and the keyword terms of its attribute
(modifiers like "new"/"新" dropped), so "超时阈值" names the same slot as "数据库连接超时阈值": a new
value for a slot supersedes the old one and the two form a timeline. Rules, not a model: they catch
the common phrasings; an LLM extractor can replace them (see `ebbing.llm`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from ebbing.errors import EbbingError
from ebbing.llm import prompts
from ebbing.llm.base import LLM, complete_json
from ebbing.text.lazy import LazyPattern, lazy
from ebbing.text.slots import slot_terms

_END = r"(?=\s*(?:[,;!?，。；！？]|\.(?:\s|$)|\s+(?:because|since|as|due to)\b|因为|由于|$))"
_VALUE = rf"(?P<value>[^,;!?，。；！？\n]{{1,80}}?){_END}"  # bounded: a long line must not cost quadratic time
_CHANGE_ZH = ("改成|改为|改到|调成|调到|调整为|调整到|换成|变成|变为|设为|设成|设置为|设置成|"
              "提高到|提升到|降低到|降到|增加到|减少到|升到")
# 是 after these is part of a word (而是 "but rather", 不是 "is not", 只是 "merely", 还是 "or/still",
# 就是, 也是, 都是, 要是 "if", 可是/但是 "but", 于是 "so", 总是 "always", 或是, 倒是, 正是, 算是, 像是,
# 真是, 老是, 凡是, 若是, 即是, 便是)
_NOT_COPULA = "而不只还就也都要可但于总或倒正算像真老凡若即便"
_PATTERNS: list[tuple[LazyPattern, bool]] = [
    # Chinese changes: "把超时阈值改成 60s", "超时阈值调整为 60s"
    (lazy(rf"把\s*(?P<attr>[^，。；！？,;!?]{{1,60}}?)\s*(?:{_CHANGE_ZH})\s*{_VALUE}"), True),
    (lazy(rf"(?P<attr>[^，。；！？,;!?把]{{1,60}}?)\s*(?:已经|已)?(?:{_CHANGE_ZH})\s*{_VALUE}"), True),
    # English changes: "change the timeout to 60s", "the timeout changed from 30s to 60s"
    (lazy(rf"\b(?:change|changed|set|update|updated|increase|increased|decrease|decreased|raise|raised|"
          rf"lower|lowered|bump|bumped|switch|switched|move|moved)\s+(?P<attr>[\w\s'-]{{1,60}}?)\s+"
          rf"(?:from\s+\S+\s+)?to\s+{_VALUE}", re.IGNORECASE), True),
    (lazy(rf"\b(?P<attr>(?:my|our|the|their)\s+[\w\s'-]{{1,60}}?)\s+(?:has\s+)?(?:changed|went|moved|was changed|"
          rf"was moved|was raised|was lowered|is now)\s+(?:from\s+\S+\s+)?(?:to\s+)?{_VALUE}", re.IGNORECASE),
     True),
    # Chinese statements: "我的数据库连接超时阈值是 30s", "新地址是 …"; not the 是 of 而是/不是/只是/还是/…
    # nor the 为 of 因为/作为/认为/以为 (conjunctions and copula compounds, not "X is Y")
    (lazy(rf"(?P<attr>[^，。；！？,;!?]{{0,30}}[\u4e00-\u9fff][^，。；！？,;!?]{{0,30}}?)"
          rf"\s*(?:(?<![{_NOT_COPULA}])是|(?<![因作认以])为|：)\s*{_VALUE}"), False),
    # English statements: "my database timeout is 30s", "our backend is written in Go"
    (lazy(rf"\b(?P<attr>(?:my|our|the|their|his|her)\s+[\w\s'-]{{1,60}}?)\s+(?:is|are|was|=|:)\s+{_VALUE}",
          re.IGNORECASE), False),
    # Named owners: "Project Aurora's backend is Go"
    (lazy(rf"\b(?P<attr>[A-Z][\w-]{{0,30}}(?:\s+[A-Z][\w-]{{0,30}}){{0,3}}'s\s+[\w\s-]{{1,40}}?)"
          rf"\s+(?:is|are|was)\s+{_VALUE}"), False),
]
# What each pattern above cannot match without (a word it requires, found in one linear pass): a clause that lacks
# it skips the pattern, whose lazy bounded groups cost time at every position of a long clause. Only a shortcut:
# a pattern is tried exactly as before wherever its needle is found.
_NEEDLES: list[LazyPattern] = [
    lazy(rf"把[\s\S]*(?:{_CHANGE_ZH})"),
    lazy(rf"(?:{_CHANGE_ZH})"),
    lazy(r"\b(?:change|changed|set|update|updated|increase|increased|decrease|decreased|raise|raised|lower|"
         r"lowered|bump|bumped|switch|switched|move|moved)\s", re.IGNORECASE),
    lazy(r"(?:changed|went|moved|was changed|was moved|was raised|was lowered|is now)", re.IGNORECASE),
    lazy(rf"(?:(?<![{_NOT_COPULA}])是|(?<![因作认以])为|：)"),
    lazy(r"\s(?:is|are|was|=|:)\s", re.IGNORECASE),
    lazy(r"'s\s"),
]
_REASON = lazy(r"(?:\bbecause\b|\bsince\b|\bdue to\b|因为|由于)\s*(?P<reason>[^。；;!?！？\n]+)", re.IGNORECASE)
_SUBJECT = lazy(r"^(?:(?P<user>my|our|i|we|我的|我们的|我们|我)\s*)", re.IGNORECASE)
MAX_CLAUSE = 400  # a fact is stated in a sentence, not a page; longer clauses are not searched (and cost time)
_NOT_ATTRIBUTES = frozenset("it this that there he she they we i you 它 这 那 他 她 我 你 今天 天气 weather".split())
# Single characters that are function words, not attributes: a slot made only of these is no slot ("而不是…" -> "不")
_NOT_ATTRIBUTES |= frozenset("不 没 也 都 就 还 只 而 但 又 很 太 要 会 能 可 是 的 了 着 过 在 和 与 或 "
                             "却 才 再 并 则".split())
MAX_VALUE_WORDS = 8  # a value longer than this is a clause someone said, not a value ("a separate concern that …")
MAX_VALUE_CJK = 24
_CLAUSE_VALUE = lazy(
    r"^(?:(?:that|which|who|whether|because|if|when|not|to|we|you|i|he|she|they|it|there|this)\s+\S+\s+\S+"
    r"|(?:应该|需要|必须|可以|不要|不能|不会|没有|我们|你们|他们)\S{4,})", re.IGNORECASE)


@dataclass(frozen=True)
class Fact:
    subject: str  # "user" for the speaker ("my", "我的"), else as said
    attribute: str  # the attribute as said, e.g. "数据库连接超时阈值"
    value: str  # verbatim, with its unit
    reason: str | None  # the cause if one was given ("because concurrency rose from 200 to 500")
    change: bool  # phrased as a change ("change to", "改成")

    @property
    def slot(self) -> frozenset[str]:
        return slot_terms(self.attribute)


class FactExtractor(Protocol):
    def extract(self, text: str) -> list[Fact]: ...


# "定了：…", "可能是什么原因", "你以后也会…是": a verb with its aspect particle, a question word or the listener
# doing something is no attribute
_NOT_AN_ATTRIBUTE = lazy(r"[了过]\s*$|什么|怎么|哪[个些里儿]|多少|^(?:可能|也许|大概|应该)$|^你(?!的)")


def is_value(value: str) -> bool:
    """A value is a short phrase ("60s", "12 Rue Oberkampf", "PostgreSQL 15"), not a whole clause."""
    cjk = len(re.findall(r"[\u4e00-\u9fff]", value))
    if cjk > MAX_VALUE_CJK or len(re.findall(r"[A-Za-z0-9][\w'.-]*", value)) > MAX_VALUE_WORDS:
        return False
    return not _CLAUSE_VALUE.match(value) and not re.search(r"什么|怎么|为什么|[吗呢]\s*$", value)


def _subject(attribute: str) -> tuple[str, str]:
    match = _SUBJECT.match(attribute.strip())
    if match:
        return "user", attribute.strip()[match.end():].strip()
    stripped = re.sub(r"^(?:the|their|his|her)\s+", "", attribute.strip(), flags=re.IGNORECASE)
    return "user", stripped  # an unnamed owner is the speaker's world: "the staging host is db-7"


class RuleFacts:
    """The default extractor: the first pattern that yields a usable (attribute, value) wins per clause."""

    def extract(self, text: str) -> list[Fact]:
        reason_match = _REASON.search(text)
        reason = reason_match.group("reason").strip() if reason_match else None
        head = text[: reason_match.start()] if reason_match else text
        out: list[Fact] = []
        parts = re.split(r"([。；;！？!?\n]|\.(?:\s|$))", head)  # sentences, each followed by its end mark
        for index in range(0, len(parts), 2):
            if index + 1 < len(parts) and parts[index + 1] in ("?", "？"):
                continue  # a question states nothing: "超时阈值是多少？", "is the timeout 30s?"
            for clause in re.split(r"[，,]", parts[index]):
                fact = self._clause(clause)
                if fact is not None:
                    out.append(Fact(fact.subject, fact.attribute, fact.value, reason, fact.change))
        return out

    def _clause(self, clause: str) -> Fact | None:
        if len(clause) > MAX_CLAUSE:
            return None
        for (pattern, change), needle in zip(_PATTERNS, _NEEDLES, strict=True):
            if not needle.search(clause):
                continue
            for match in pattern.finditer(clause):
                # "先记一个配置：我的超时阈值是 30s", "Note: my timeout is 30s": the attribute starts after the colon
                subject, attribute = _subject(re.sub(r"^.*[：:]\s*", "", match.group("attr")))
                attribute = re.sub(r"^(?:[，,、]|and\s|also\s|so\s|然后|所以|而且)\s*", "", attribute).strip()
                value = match.group("value").strip().strip("\"'“”‘’「」")
                if not attribute or not value or len(attribute) > 60 or len(value) > 80 or not is_value(value):
                    continue
                if _NOT_AN_ATTRIBUTE.search(attribute):
                    continue
                slot = slot_terms(attribute)
                if not slot or slot <= _NOT_ATTRIBUTES:
                    continue
                return Fact(subject, attribute, value, None, change)
        return None


class LLMFacts:
    """Asks a chat model (`prompts.EXTRACT_FACTS`); falls back to the rules when the answer is unusable.

    Values must appear verbatim in the text: a model that invents or rewrites a value is not trusted
    with it, so such facts are dropped rather than stored.
    """

    def __init__(self, llm: LLM, *, fallback: FactExtractor | None = None) -> None:
        self.llm = llm
        self.fallback = fallback or RuleFacts()

    def extract(self, text: str) -> list[Fact]:
        try:
            answer = complete_json(self.llm, prompts.EXTRACT_FACTS, text, max_tokens=512)
        except EbbingError:
            return self.fallback.extract(text)
        items = answer.get("facts") if isinstance(answer, dict) else None
        if not isinstance(items, list):
            return self.fallback.extract(text)
        out = []
        for item in items:
            if not isinstance(item, dict):
                continue
            attribute, value = item.get("attribute"), item.get("value")
            subject, reason = item.get("subject") or "user", item.get("reason")
            if not (isinstance(attribute, str) and isinstance(value, str) and attribute.strip() and value.strip()):
                continue
            if value.strip() not in text or not slot_terms(attribute):
                continue
            change = bool(re.search(rf"(?:to|成|为|到)\s*{re.escape(value.strip())}", text))
            out.append(Fact(str(subject), attribute.strip(), value.strip(),
                            reason.strip() if isinstance(reason, str) and reason.strip() else None, change))
        return out
