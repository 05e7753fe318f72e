"""Consolidation: the oldest turns of a session become one episodic summary.

A session's working memory has a token budget. When its unconsolidated turns reach `trigger` (80%)
of it, the oldest turns, about `batch` (half) of the budget's worth, are summarised into one `summary`
record (with the turn range, time range and source ids), and the raw turns move to the cold archive:
kept, restorable, out of the way. Turns that state a current fact stay live: they are the semantic
memory the summary points back to. Triggering at 80% rather than 100% leaves room so the turns at the
edge are never pushed out before they are summarised (seed 000, pitfall 4).

The default summariser is extractive and runs offline: it keeps every sentence that carries a number,
a proper name, a decision or a cause, so a summary loses no figure or name (pitfall 3). An LLM
summariser can replace it; whatever it writes, sentences holding figures or names it dropped are
appended, so that promise holds for both.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ebbing.errors import EbbingError, InvalidInput
from ebbing.llm import prompts
from ebbing.llm.base import LLM
from ebbing.model import MemoryRecord

_SENTENCE = re.compile(r"[^。！？!?；;\n]+[。！？!?；;]?|[^.]+(?:\.(?!\d)|$)")
_NUMBER = re.compile(r"\d")
_CUE = re.compile(r"\b(?:because|since|so that|therefore|decided|decide|chose|switch(?:ed)? to|changed?|caused|"
                  r"due to|root cause|fixed|will use|going with)\b"
                  r"|因为|由于|所以|因此|决定|改成|改为|导致|原因|选择|换成",
                  re.IGNORECASE)
_LATIN_NAME = re.compile(r"(?<![\w.])(?:[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}\w*|[A-Z][\w-]*\d\w*|[a-z]+[A-Z]\w*|"
                         r"[a-z][\w]*-\d[\w-]*)")
_CAPITALISED = re.compile(r"\b[A-Z][a-z][\w-]*")
# Capitalised only because they open a sentence: not names.
_OPENERS = frozenset("""The A An We I It Its This That These Those Yes No Ok Okay So And But Or Let Lets Please Can
    Could Would Should Will What How Why When Where Who Which Thanks Thank Sure Also Then If In On At For From My
    Our Your Their His Her Hi Hello Hey Great Good Nice Cool Just Now Today Tomorrow Yesterday Maybe Sounds
    Right Well After Before Since Because As To Do Does Did Is Are Was Were Have Has Had Not Don Once Next Last
    First Second Finally Also Still Got Here There They He She You Me Us All Any Some One Two Three""".split())


@dataclass(frozen=True)
class ConsolidationConfig:
    working_budget_tokens: int = 2000  # per session
    trigger: float = 0.8  # consolidate when the working turns reach this share of the budget
    batch: float = 0.5  # and summarise the oldest turns worth this share of it

    def __post_init__(self) -> None:
        if self.working_budget_tokens < 50:
            raise InvalidInput("working_budget_tokens", "must be at least 50")
        if not 0 < self.trigger <= 1 or not 0 < self.batch <= self.trigger:
            raise InvalidInput("trigger", "needs 0 < batch <= trigger <= 1")


class Summariser(Protocol):
    def summarise(self, turns: Sequence[MemoryRecord]) -> str: ...


@functools.cache
def _posseg() -> Any:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg


def _opens(prefix: str) -> bool:
    """Whether a word after `prefix` opens a sentence, line or bullet (so is capitalised for that alone)."""
    rest = prefix[-60:].rstrip(" \t\"'“‘(`*•>#-")
    if re.search(r"(?:^|\n)[ \t]*\d{1,3}[.)]$", rest):
        return True  # "1. Aurora"
    return not rest or rest[-1] in ".!?:;。！？；：\n"


def capitalised_mid_sentence(text: str) -> set[str]:
    """Capitalised words that appear somewhere other than at the start of a sentence, line or bullet."""
    return {m.group() for m in _CAPITALISED.finditer(text) if not _opens(text[:m.start()])}


def names(sentence: str, known: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Proper names in a sentence: product/service-like Latin words (PostgreSQL, gRPC, db-7, S3: acronyms,
    mixed case, digits), capitalised words mid-sentence other than common openers ("Aurora" in "we moved
    Aurora"), and in Chinese text the person, place, organisation and other proper nouns jieba tags (nr, ns,
    nt, nz) plus Latin words that are capitalised or name-like ("Atlas", "gRPC"; not "bug"). A capitalised
    word that opens a sentence, line or bullet ("Check the logs") is a name only if it also appears
    capitalised mid-sentence, in this text or in `known` (e.g. the other turns of a batch:
    `capitalised_mid_sentence`)."""
    found = set(_LATIN_NAME.findall(sentence))
    capitals = [(m.group(), _opens(sentence[:m.start()])) for m in _CAPITALISED.finditer(sentence)]
    middle = {word for word, opening in capitals if not opening}
    found |= {word for word, opening in capitals
              if word not in _OPENERS and (not opening or word in middle or word in known)}
    if re.search(r"[\u4e00-\u9fff]", sentence):
        for word, flag in _posseg().cut(sentence):
            word = word.strip()
            if flag in ("nr", "ns", "nt", "nz", "nrt") and word:
                found.add(word)
            elif flag == "eng" and (word[:1].isupper() or _LATIN_NAME.fullmatch(word)):
                found.add(word)  # "Atlas", "Webhook", "gRPC"; not "bug", "limit", "tenant"
    return {n for n in found if len(n) > 1}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def worth_keeping(sentence: str, known: set[str] | frozenset[str] = frozenset()) -> bool:
    return bool(_NUMBER.search(sentence) or _CUE.search(sentence) or names(sentence, known))


class ExtractiveSummariser:
    """Keeps the sentences that carry numbers, names, decisions and causes, in order, once each."""

    def summarise(self, turns: Sequence[MemoryRecord]) -> str:
        kept: list[str] = []
        seen: set[str] = set()
        known = _known(turns)
        for turn in turns:
            for sentence in sentences(turn.text):
                key = " ".join(sentence.casefold().split())
                if key not in seen and worth_keeping(sentence, known):
                    seen.add(key)
                    kept.append(sentence)
        return " ".join(kept)


def complete(summary: str, turns: Sequence[MemoryRecord]) -> str:
    """Append any sentence whose numbers or names the summary lacks: no summariser may drop a figure."""
    missing = []
    known = _known(turns)
    for turn in turns:
        for sentence in sentences(turn.text):
            needed = set(re.findall(r"\d+(?:[.:,]\d+)*", sentence)) | names(sentence, known)
            if any(item not in summary for item in needed) and sentence not in missing:
                missing.append(sentence)
    return (summary + " " + " ".join(missing)).strip() if missing else summary


def _known(turns: Sequence[MemoryRecord]) -> set[str]:
    """The capitalised words the turns use mid-sentence: names even where one opens a sentence."""
    return {word for turn in turns for word in capitalised_mid_sentence(turn.text) if word not in _OPENERS}


def header(turns: Sequence[MemoryRecord]) -> str:
    first, last = turns[0].created_at, turns[-1].created_at
    span = first.strftime("%Y-%m-%d %H:%M") + (f" to {last.strftime('%Y-%m-%d %H:%M')}" if last != first else "")
    return f"Summary of {len(turns)} turns ({span} UTC): "


class LLMSummariser:
    """Asks a chat model (`prompts.SUMMARISE`) for the summary; `complete` then appends any sentence whose
    figures or names it dropped, and a failing model falls back to the extractive summary."""

    def __init__(self, llm: LLM, *, fallback: Summariser | None = None) -> None:
        self.llm = llm
        self.fallback = fallback or ExtractiveSummariser()

    def summarise(self, turns: Sequence[MemoryRecord]) -> str:
        transcript = "\n".join(f"[{t.created_at:%Y-%m-%d %H:%M}] {t.text}" for t in turns)
        try:
            answer = self.llm.complete(prompts.SUMMARISE, transcript, max_tokens=700).strip()
        except EbbingError:
            return self.fallback.summarise(turns)
        return answer or self.fallback.summarise(turns)
