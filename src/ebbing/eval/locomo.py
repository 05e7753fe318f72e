"""LoCoMo: loading and parsing the conversations, their questions and the evidence they point to.

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024,
arXiv:2402.17753; data CC BY-NC 4.0, github.com/snap-research/locomo) is ten conversations between two
people, 19-32 sessions each spread over months, with questions whose evidence turns are labelled by
`dia_id` ("D<session>:<turn>"). The data is never part of this project: it is read from a path.

Category ids follow the upstream evaluation code (snap-research/locomo issues #6 and #29), which is
not the order of the paper's list, nor mem0's labels: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ebbing.errors import InvalidInput

CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
EVALUATED = (1, 2, 3, 4)  # category 5 has no answer to find (the evidence of an unanswerable question)
TURN_GAP = timedelta(minutes=1)  # LoCoMo dates a session, not its turns: turns are placed a minute apart

_MONTHS = {name: number for number, name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"), start=1)}
_WHEN = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*$", re.IGNORECASE)
_DIA_ID = re.compile(r"^D\d+:\d+$")
_SESSION = re.compile(r"^session_(\d+)$")


def parse_when(text: str) -> datetime:
    """LoCoMo's session time, "1:56 pm on 8 May, 2023", as an aware UTC datetime (the data has no zone).

    Parsed by hand rather than with `strptime("%B")`, which depends on the locale."""
    match = _WHEN.match(text)
    if match is None or match.group(5).lower() not in _MONTHS:
        raise InvalidInput("date_time", f"cannot parse LoCoMo time {text!r} (expected like '1:56 pm on 8 May, 2023')")
    hour, minute, half, day, month, year = match.groups()
    h = int(hour)
    if not 1 <= h <= 12:
        raise InvalidInput("date_time", f"hour out of range in {text!r}")
    h = h % 12 + (12 if half.lower() == "p" else 0)
    try:
        return datetime(int(year), _MONTHS[month.lower()], int(day), h, int(minute), tzinfo=UTC)
    except ValueError as exc:
        raise InvalidInput("date_time", f"{exc} in {text!r}") from None


def parse_evidence(items: list[str]) -> list[str]:
    """The dia_ids a question's evidence names, in order, once each.

    A few evidence strings pack several ids ("D8:6; D9:17", "D9:1 D4:4 D4:6"), so each is split on ';'
    and whitespace; tokens that are not of the form D<session>:<turn> ("D", "D:11:26") are dropped
    rather than guessed."""
    out: list[str] = []
    for item in items:
        for token in re.split(r"[;\s]+", item):
            token = token.strip().rstrip(",.")
            if _DIA_ID.match(token) and token not in out:
                out.append(token)
    return out


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str  # as said
    caption: str | None  # BLIP caption of an image the turn shared
    session: int
    at: datetime

    @property
    def rendered(self) -> str:
        """What the agent stores: "Speaker: text", and what the shared image shows."""
        image = f" [shares an image: {self.caption}]" if self.caption else ""
        return f"{self.speaker}: {self.text}{image}"


@dataclass(frozen=True)
class Question:
    index: int  # position in the conversation's qa list
    text: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # dia_ids, split and filtered to those the conversation has

    @property
    def category_name(self) -> str:
        return CATEGORIES.get(self.category, str(self.category))


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]  # every session's turns, in order
    questions: tuple[Question, ...]  # categories 1-4 with at least one known evidence id
    unresolved: int  # evidence tokens that name no turn of this conversation (dropped)
    without_evidence: int  # questions of categories 1-4 left out because no evidence id resolved

    @property
    def sessions(self) -> list[int]:
        return sorted({t.session for t in self.turns})

    @property
    def end(self) -> datetime:
        return self.turns[-1].at


def _conversation(raw: dict[str, Any]) -> Conversation:
    body = raw["conversation"]
    numbers = sorted(int(m.group(1)) for key in body if (m := _SESSION.match(key)) and isinstance(body[key], list))
    turns: list[Turn] = []
    for number in numbers:
        # Only sessions with a turn list count: conv-26 has date_time keys for sessions that never happened.
        start = parse_when(body[f"session_{number}_date_time"])
        if turns and start <= turns[-1].at:
            raise InvalidInput("date_time", f"{raw['sample_id']} session {number} starts before the previous one ends")
        for i, item in enumerate(body[f"session_{number}"]):
            caption = item.get("blip_caption")
            turns.append(Turn(str(item["dia_id"]), str(item["speaker"]), str(item["text"]),
                              str(caption) if caption else None, number, start + i * TURN_GAP))
    known = {t.dia_id for t in turns}
    questions: list[Question] = []
    unresolved = without = 0
    for index, qa in enumerate(raw.get("qa", [])):
        category = int(qa["category"])
        if category not in EVALUATED:
            continue
        named = parse_evidence([str(e) for e in qa.get("evidence", [])])
        found = tuple(e for e in named if e in known)
        tokens = {t.rstrip(",.") for e in qa.get("evidence", []) for t in re.split(r"[;\s]+", str(e)) if t}
        unresolved += len(tokens - set(found))
        if not found:
            without += 1
            continue
        questions.append(Question(index, str(qa["question"]), str(qa.get("answer", "")), category, found))
    return Conversation(str(raw["sample_id"]), (str(body["speaker_a"]), str(body["speaker_b"])), tuple(turns),
                        tuple(questions), unresolved, without)


def load(path: str | Path) -> list[Conversation]:
    """Every conversation of a LoCoMo file (`locomo10.json`), in file order."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput("data", f"no LoCoMo file at {path}; pass --data PATH to locomo10.json") from None
    except (OSError, ValueError) as exc:
        raise InvalidInput("data", f"cannot read {path} as JSON: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(c, dict) and "conversation" in c for c in data):
        raise InvalidInput("data", f"{path} is not a LoCoMo file: expected a list of conversations")
    try:
        return [_conversation(item) for item in data]
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InvalidInput):
            raise
        raise InvalidInput("data", f"{path} is not in LoCoMo's format: {exc!r}") from None


def parse_selection(text: str, count: int) -> list[int]:
    """"0-9", "3", "0,2,5-7" as sorted conversation indexes below `count`."""
    chosen: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if match is None:
            raise InvalidInput("conversations", f"{text!r}: use indexes and ranges such as 0-9 or 0,3,5-7")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) is not None else low
        if high < low or high >= count:
            raise InvalidInput("conversations", f"{part!r} is outside 0-{count - 1}")
        chosen.update(range(low, high + 1))
    return sorted(chosen)
