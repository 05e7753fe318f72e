"""The context builder: already-chosen records in, a prompt-ready block of text that fits a token budget out.

A pure function: it reads nothing and changes nothing. Its text looks like

    ## Always remember
    - The user is allergic to peanuts.

    ## Earlier conversations
    - [2026-01-03] We compared three vector databases and chose the embedded one.

Sections come in the order given (priority order). A record that a section earlier in the text already
said, by id, by the same normalised text or inside a longer included line, is left out. The budget is a hard
limit on the count of the whole returned text, headers and newlines included; lines are whole or absent.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ebbing.errors import InvalidInput
from ebbing.model import Kind, MemoryRecord
from ebbing.text.tokens import TokenCounter

SECTION_GAP = "\n\n"  # a blank line between sections
LINE_GAP = "\n"
DATED_KINDS = frozenset({Kind.SUMMARY, Kind.EPISODE})  # things that happened: when matters to read them


@dataclass(frozen=True)
class ContextConfig:
    """How `Memory.context` shares its budget out among the sections that come whatever the question.

    "Always remember" (pinned and P0 records) comes first, ordered by relevance to the query: the relevant
    ones (found by the search) best first, then the other pinned ones (someone asked for them to be kept in
    mind), then the other P0 ones that are short (at most `essential_short_tokens`: "allergic to peanuts", a
    name, a hard rule), each group by importance and recency. Long unrelated P0 records wait until a question
    is about them. The section takes at most `essentials_share` of
    the budget, except that a relevant pinned record always goes in (if the budget itself holds it).

    "Preferences" always brings the user's current preference records (live, not superseded by a newer
    value), relevant ones first, then by retention: at most `preferences_max` of them in `preferences_share`
    of the budget, or `preferences_asked_max` in `preferences_asked_share` when the query asks about
    preferences, style or how to answer. A profile of a few lines is what agents expect to come along. Only
    records of at most `preference_line_tokens` take part: a preference is a line ("keep answers concise"), and
    a long text classified as one still comes with "Current facts" when the search finds it.

    "Current facts" takes the retrieved facts, decisions and preferences plus up to `facts_from_table`
    current facts of the fact table whose slot shares terms with the query. A question about what was decided
    ("recap our decisions", "总结一下做过的技术决策") names no one decision, so the search finds none of them:
    then up to `decisions_asked_max` of the user's current decisions come too, newest first (the user's own
    words: not the assistant's, nor a value that was superseded).
    """

    essentials_share: float = 0.25
    essential_short_tokens: int = 48
    preferences_share: float = 0.10
    preferences_max: int = 5
    preferences_asked_share: float = 0.25
    preferences_asked_max: int = 20
    preference_line_tokens: int = 64
    facts_from_table: int = 8
    decisions_asked_max: int = 12

    def __post_init__(self) -> None:
        for name in ("essentials_share", "preferences_share", "preferences_asked_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InvalidInput(name, "must be between 0 and 1")
        for name in ("essential_short_tokens", "preferences_max", "preferences_asked_max", "facts_from_table",
                     "preference_line_tokens", "decisions_asked_max"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(name, "must be a whole number >= 0")


_DECISIONS = re.compile(r"\b(?:decisions?|decided|agreed on|what did we (?:pick|choose|settle on)|choices we made)\b|"
                        r"决定|决策|定了什么|定下|拍板|敲定|选了什么", re.IGNORECASE)


def asks_about_decisions(query: str) -> bool:
    """Whether the query asks what was decided (a recap), rather than about one thing."""
    return bool(_DECISIONS.search(query))


@dataclass(frozen=True)
class ContextLine:
    record_id: str
    text: str
    tokens: int  # what the line adds to the text, its line break included; with XLM-R simply its own count

    def to_dict(self) -> dict[str, Any]:
        return {"record_id": self.record_id, "text": self.text, "tokens": self.tokens}


@dataclass(frozen=True)
class Section:
    name: str
    title: str
    lines: tuple[ContextLine, ...]
    tokens: int  # its share of the text: header and lines with their line breaks; with XLM-R they add up exactly

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "tokens": self.tokens,
            "lines": [line.to_dict() for line in self.lines],
        }


@dataclass(frozen=True)
class Context:
    text: str
    tokens: int  # of `text` exactly as returned; never more than `budget`
    budget: int
    sections: tuple[Section, ...]  # only the sections that got at least one line
    records: tuple[MemoryRecord, ...]  # the included records, in the order of the text

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "sections": [section.to_dict() for section in self.sections],
            "records": [record.to_dict() for record in self.records],
        }


def render_line(record: MemoryRecord) -> str:
    """The default rendering: "- text", with the day in front for summaries and episodes."""
    if record.kind in DATED_KINDS:
        return f"- [{record.created_at:%Y-%m-%d}] {record.text}"
    return f"- {record.text}"


def normalise(text: str) -> str:
    """The same normalisation as content hashes: NFKC, casefolded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True)
class _Candidate:
    section: int
    record: MemoryRecord
    line: str
    norm_text: str
    norm_line: str


def build_context(
    sections: Sequence[tuple[str, str, Sequence[MemoryRecord]]],
    budget: int,
    counter: TokenCounter,
    *,
    render: Callable[[MemoryRecord], str] | None = None,
    oldest_first: Collection[str] = (),
) -> Context:
    """Fill `sections` (name, title, records), in priority order, into at most `budget` tokens of text.

    Each record becomes one line under a "## title" header; a section with no line gets no header. A line
    that does not fit is skipped and the next ones are tried, so one long record cannot crowd out short
    important ones; lines are never cut. The sections named in `oldest_first` are filled in the order given
    and then written oldest first, so that of two statements of one thing the later one is read last.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InvalidInput("budget_tokens", "must be a whole number >= 1")
    to_line = render or render_line
    candidates = [
        _Candidate(index, record, line, normalise(record.text), normalise(line))
        for index, (_, _, records) in enumerate(sections)
        for record in records
        if (line := _one_line(to_line(record)))
    ]
    titles = [_one_line(title) for _, title, _ in sections]
    costs: dict[str, int] = {}

    def cost(piece: str) -> int:
        if piece not in costs:
            costs[piece] = counter.count(piece)
        return costs[piece]

    # The greedy fill adds up the counts of the pieces; the whole text is then counted exactly. For the
    # default counter the two agree (no piece crosses a line break), but a counter need not be additive:
    # when the text comes out over, the fill runs again with a target lowered by the excess.
    target = budget
    dated = {index for index, (name, _, _) in enumerate(sections) if name in oldest_first}
    while True:
        chosen = _fill(candidates, titles, target, cost) if target >= 1 else []
        chosen = [c for _, picked in _grouped(chosen) for c in
                  (sorted(picked, key=lambda c: c.record.created_at) if picked[0].section in dated else picked)]
        text = _render(chosen, titles)
        tokens = counter.count(text)
        if tokens <= budget or not chosen:
            break
        target -= max(tokens - budget, 1)

    built: list[Section] = []
    for position, (index, picked) in enumerate(_grouped(chosen)):
        name, title = sections[index][0], titles[index]
        lines = tuple(ContextLine(c.record.id, c.line, cost(LINE_GAP + c.line)) for c in picked)
        share = cost((SECTION_GAP if position else "") + _header(title)) + sum(line.tokens for line in lines)
        built.append(Section(name, title, lines, share))
    return Context(text, tokens, budget, tuple(built), tuple(c.record for c in chosen))


def _fill(
    candidates: Sequence[_Candidate], titles: Sequence[str], target: int, cost: Callable[[str], int]
) -> list[_Candidate]:
    chosen: list[_Candidate] = []
    used = 0
    ids: set[str] = set()
    texts: set[str] = set()
    lines: list[str] = []
    open_section = -1  # the section whose header is already in the text
    for candidate in candidates:
        record = candidate.record
        if record.id in ids or not candidate.norm_text or candidate.norm_text in texts:
            continue
        if any(_contains(line, candidate.norm_text) for line in lines):
            continue
        needed = cost(LINE_GAP + candidate.line)
        if candidate.section != open_section:
            gap = SECTION_GAP if chosen else ""
            needed += cost(gap + _header(titles[candidate.section]))
        if used + needed > target:
            continue
        used += needed
        chosen.append(candidate)
        open_section = candidate.section
        ids.add(record.id)
        texts.add(candidate.norm_text)
        lines.append(candidate.norm_line)
    return chosen


def _contains(line: str, text: str) -> bool:
    """Whether `text` occurs in `line` as whole words: "Bob" is not said by "Bobby likes tea".

    Han, kana and other scripts written without spaces have no word edges to check, so any occurrence counts.
    """
    start = line.find(text)
    while start >= 0:
        end = start + len(text)
        before_ok = start == 0 or not (_wordy(line[start - 1]) and _wordy(text[0]))
        after_ok = end == len(line) or not (_wordy(line[end]) and _wordy(text[-1]))
        if before_ok and after_ok:
            return True
        start = line.find(text, start + 1)
    return False


def _wordy(char: str) -> bool:
    return char.isalnum() and ord(char) < 0x2E80  # below the CJK blocks: letters of space-separated scripts


def _one_line(text: str) -> str:
    # A record's own line breaks would break the layout (and could forge a "## " header): fold them to spaces.
    return " ".join(text.split())


def _header(title: str) -> str:
    return f"## {title}"


def _block(title: str, lines: Sequence[str]) -> str:
    return _header(title) + "".join(LINE_GAP + line for line in lines)


def _grouped(chosen: Sequence[_Candidate]) -> list[tuple[int, list[_Candidate]]]:
    groups: list[tuple[int, list[_Candidate]]] = []
    for candidate in chosen:
        if groups and groups[-1][0] == candidate.section:
            groups[-1][1].append(candidate)
        else:
            groups.append((candidate.section, [candidate]))
    return groups


def _render(chosen: Sequence[_Candidate], titles: Sequence[str]) -> str:
    return SECTION_GAP.join(_block(titles[index], [c.line for c in picked]) for index, picked in _grouped(chosen))
