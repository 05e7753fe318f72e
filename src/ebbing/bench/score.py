"""Scoring a built context against a probe: deterministic text rules, no model.

A strategy answers a probe with the context it would hand the model: a sequence of `Piece`s in the order the
model reads them, each with its text, its token count and the scenario turns it derives from. The scorer
reads only that; it never looks at how the strategy works.

Matching a surface form. Text and forms are NFKC-normalised (full-width digits and punctuation become ASCII)
and compared case-insensitively. A form that begins (ends) with an ASCII letter or digit must not have an
ASCII letter or digit right before (after) it, so "Go backend" is not found in "Go backends", "60s" not in
"160s" and "500" not in "1500"; Chinese characters around a form never block it ("改成60秒" has "60秒").

Per probe (`score_probe`):

- key_facts / preferences: (found, needed) over the probe's needs of category "key_fact" / "preference". A
  need is found if any of its surface forms occurs anywhere in the context.
- stale_as_current: the slots of the probe's stale facts that the context presents as current. An occurrence
  of a stale form is read as past, and does not count, if
  (a) a newer value of the same slot occurs after it anywhere later in the context: later in the same
      piece ("changed the timeout from 30s to 60s", "30s → 60s") or in a later piece (the day-1 turn followed
      by the day-2 update, in that order); the values newer than a stale value are those the slot took after
      it, read from the scenario's turns up to the probe; or
  (b) a history marker stands next to it in its sentence: within 48 characters before it one of
      previously, formerly, originally, used to, was, were, old, earlier, before, from, prior, instead of,
      replaced, superseded, no longer, until, 之前, 以前, 原来, 原先, 曾经, 旧, 从, 过去, 不再, 此前, 早先,
      起初, 最初, 改; or within 24 characters after it an arrow (→, ->, =>, ⇒, ⟶) or one of before, earlier,
      previously, originally, no longer, anymore, old, 之前, 以前, 原来, 改成, 改为, 改到, 调到, 调成,
      调整为, 换成, 变成, 升到, 迁到, 迁移到, 已废弃, 作废, 不再, 旧. A sentence ends at . ! ? ; 。！？；
      or a line break ("." only before a space or the end).
  Any other occurrence presents the stale value as current: "my DB timeout is 30s" with no update after it,
  or a fact line "timeout: 60s" followed by the raw day-1 turn "timeout is 30s" (the reader sees the old
  value last). Order in the context is all that counts; dates in the text are not interpreted.
- timeline (history probes only, else None): True when (1) every value of the timeline occurs and their first
  occurrences are in order, either over the whole context or within a single piece ("30s → 60s" in one fact
  line passes even if "60s" also appears earlier in another piece); inside one piece a value may also come
  after its successor when one of its occurrences there is marked as past by rule (b) ("60s (previously
  30s)", "60秒（原来是 30 秒）"), since the marker states the order; (2) when the probe gives a reason, some
  piece contains a reason form together with a form of one of the timeline's values (the reason must be
  shown with the change, not anywhere); and (3) the slot is not in stale_as_current (a history contradicted
  by a bare old value later on is not intact).
- task_success: every need found, nothing stale presented as current, and the timeline True when asked.
- noise_tokens: each piece's tokens are shared among the turns it derives from in proportion to the length
  of their texts (in characters); the shares of turns labelled noise count. A raw turn is all noise or none;
  a summary of a long technical answer and an "ok thanks" is about 2% noise; a piece without provenance
  (a header, say) is not noise. context_tokens: the sum of the pieces' tokens.

Over all probes (`summarise`):

- key_fact_retention = Σ found / Σ needed over all key-fact needs of all probes (a probe that needs more
  facts weighs more); preference_recall likewise over preferences.
- timeline_integrity = share of history probes whose timeline is True; task_success = share of probes.
- noise = Σ noise_tokens / Σ context_tokens over all probes (0 when every context is empty).
- A rate with nothing to measure (no probe asks a history, say) is 1.0: nothing was missed.
- overall = 30·key_fact_retention + 20·preference_recall + 20·timeline_integrity + 20·task_success
  + 10·(1 − noise), on 0..100: the seed's weights, with noise entering as its complement, so a context
  without noise earns the full 10 points and one made only of noise none.
- latency_ms_p50 / p95: percentiles of the given per-turn latencies, linear interpolation between the two
  nearest ranks (numpy's default); None when no latency was measured.
- context_tokens: the final context's tokens, as passed in.

What the seed did: it names the weights (30/20/20/20/10) but not how noise enters or how its overall scores
were computed, and its table is not consistent with any single rule. With noise as (1 − share) its FIFO column
gives 35.4 (reported 35), but its other columns give 70.8 (reported 66), 78.6 (72) and 88.7 (87); the noise
contributions its overall scores imply, 2.8, 3.0, 1.6 and 7.5 points for noise shares of 68%, 22%, 18% and
8%, do not even fall as noise falls. We use the plain weighted sum with (1 − noise): it is the reading the
seed's words support, monotone in every metric, and its numbers can be checked by hand.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ebbing.bench.scenario import Fact, Probe, Scenario

WEIGHTS = {"key_fact_retention": 30, "preference_recall": 20, "timeline_integrity": 20, "task_success": 20,
           "noise": 10}  # the seed's weights; noise enters as (1 - noise)

MARK_BEFORE = 48  # characters before a stale form in which a history marker makes it past
MARK_AFTER = 24  # characters after it

_PAST_BEFORE = re.compile(
    r"\b(?:previously|formerly|originally|used to|was|were|old|earlier|before|from|prior|instead of|replaced|"
    r"superseded|no longer|until)\b|之前|以前|原来|原先|曾经|旧|从|过去|不再|此前|早先|起初|最初|改",
    re.IGNORECASE)
_PAST_AFTER = re.compile(
    r"→|->|=>|⇒|⟶|\b(?:before|earlier|previously|originally|no longer|anymore|old)\b|之前|以前|原来|改成|改为|"
    r"改到|调到|调成|调整为|换成|变成|升到|迁到|迁移到|已废弃|作废|不再|旧",
    re.IGNORECASE)
_SENTENCE_END = re.compile(r"[!?;。！？；\n]|\.(?=\s|$)")


@dataclass(frozen=True)
class Piece:
    """One item of a built context."""

    text: str
    tokens: int
    turns: tuple[int, ...]  # scenario turn indices it derives from; () if unknown


@dataclass(frozen=True)
class ProbeScore:
    after: int
    key_facts: tuple[int, int]  # (found, needed) over needs with category "key_fact"
    preferences: tuple[int, int]  # (found, needed) over needs with category "preference"
    timeline: bool | None  # None when the probe asks no history
    stale_as_current: tuple[str, ...]  # slots whose stale value is presented as current
    task_success: bool  # every needed fact present, no stale value presented as current, timeline ok if asked
    noise_tokens: int
    context_tokens: int
    missing: tuple[str, ...] = ()  # slots of needed facts not found

    def to_dict(self) -> dict[str, Any]:
        return {"after": self.after, "key_facts": list(self.key_facts), "preferences": list(self.preferences),
                "timeline": self.timeline, "stale_as_current": list(self.stale_as_current),
                "task_success": self.task_success, "noise_tokens": self.noise_tokens,
                "context_tokens": self.context_tokens, "missing": list(self.missing)}


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _ascii_word(char: str) -> bool:
    return char.isascii() and char.isalnum()


@functools.lru_cache(maxsize=1024)
def _pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = []
    for form in sorted({normalise(f) for f in forms if f.strip()}, key=len, reverse=True):
        left = r"(?<![A-Za-z0-9])" if _ascii_word(form[0]) else ""
        right = r"(?![A-Za-z0-9])" if _ascii_word(form[-1]) else ""
        alternatives.append(left + re.escape(form) + right)
    if not alternatives:
        return re.compile(r"(?!)")  # matches nothing
    return re.compile("|".join(alternatives), re.IGNORECASE)


def find(forms: Iterable[str], text: str) -> list[tuple[int, int]]:
    """Where any of the surface forms occurs in `text` (already normalised), as (start, end) spans."""
    return [m.span() for m in _pattern(tuple(forms)).finditer(text)]


def present(fact: Fact, text: str) -> bool:
    """Whether any surface form of `fact` occurs in `text`, under the matching rules above."""
    return _pattern(tuple(fact.any_of)).search(normalise(text)) is not None


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    begin = 0
    for m in _SENTENCE_END.finditer(text, 0, start):
        begin = m.end()
    after = _SENTENCE_END.search(text, end)
    return begin, after.start() if after else len(text)


def marked_past(text: str, start: int, end: int) -> bool:
    """Whether a history marker stands next to text[start:end] within its sentence (rule (b) above)."""
    begin, stop = _sentence(text, start, end)
    before = text[max(begin, start - MARK_BEFORE):start]
    after = text[end:min(stop, end + MARK_AFTER)]
    return _PAST_BEFORE.search(before) is not None or _PAST_AFTER.search(after) is not None


def _newer_forms(probe: Probe, stale: Fact, scenario: Scenario) -> tuple[str, ...]:
    """Surface forms of the values the stale fact's slot took after it, up to the probe."""
    sequence: list[str] = []
    for turn in scenario.turns[:probe.after]:
        value = turn.sets.get(stale.slot)
        if value is not None and (not sequence or sequence[-1] != value):
            sequence.append(value)
    if stale.value in sequence:
        last = max(i for i, value in enumerate(sequence) if value == stale.value)
        later = set(sequence[last + 1:])
    else:  # a fact without its canonical value: everything the probe knows of the slot except the stale forms
        later = set(sequence)
    known = [f for f in (*probe.needs, *probe.stale) if f.slot == stale.slot and f is not stale]
    forms = [form for f in known if f.value in later or not f.value for form in f.any_of]
    return tuple(form for form in forms if form not in stale.any_of)


def _stale_slots(probe: Probe, texts: Sequence[str], scenario: Scenario) -> tuple[str, ...]:
    out: list[str] = []
    for stale in probe.stale:
        if stale.slot in out:
            continue
        newer = _newer_forms(probe, stale, scenario)
        later_has_newer = [False] * len(texts)  # does any piece after i contain a newer value?
        seen = False
        for i in range(len(texts) - 1, -1, -1):
            later_has_newer[i] = seen
            seen = seen or bool(newer and find(newer, texts[i]))
        presented = False
        for i, text in enumerate(texts):
            for start, end in find(stale.any_of, text):
                if later_has_newer[i] or (newer and find(newer, text[end:])) or marked_past(text, start, end):
                    continue
                presented = True
                break
            if presented:
                break
        if presented:
            out.append(stale.slot)
    return tuple(out)


def _first(forms: tuple[str, ...], text: str) -> int | None:
    spans = find(forms, text)
    return spans[0][0] if spans else None


def _ordered(positions: list[int | None]) -> bool:
    if any(p is None for p in positions):
        return False
    values = [p for p in positions if p is not None]
    return all(a < b for a, b in itertools.pairwise(values))


def _piece_in_order(timeline: tuple[tuple[str, ...], ...], text: str) -> bool:
    """All values in one piece, each before its successor or marked as past there."""
    firsts = [_first(forms, text) for forms in timeline]
    if any(p is None for p in firsts):
        return False
    for i in range(len(timeline) - 1):
        older, newer = firsts[i], firsts[i + 1]
        if older is not None and newer is not None and older < newer:
            continue
        if not any(marked_past(text, start, end) for start, end in find(timeline[i], text)):
            return False
    return True


def _timeline_ok(probe: Probe, texts: Sequence[str]) -> bool:
    whole = "\n".join(texts)
    in_order = _ordered([_first(forms, whole) for forms in probe.timeline]) or any(
        _piece_in_order(probe.timeline, text) for text in texts)
    if not in_order:
        return False
    if not probe.reason:
        return True
    values = tuple(form for forms in probe.timeline for form in forms)
    return any(find(probe.reason, text) and find(values, text) for text in texts)


def _noise_tokens(pieces: Sequence[Piece], scenario: Scenario) -> int:
    total = 0.0
    count = len(scenario.turns)
    for piece in pieces:
        sources = sorted(set(piece.turns))
        if not sources:
            continue
        for index in sources:
            if not 1 <= index <= count:
                raise ValueError(f"piece derives from turn {index}, outside 1..{count}")
        turns = [scenario.turns[i - 1] for i in sources]
        weights = [max(len(t.text), 1) for t in turns]
        noisy = sum(w for t, w in zip(turns, weights, strict=True) if t.noise)
        total += piece.tokens * noisy / sum(weights)
    return round(total)


def score_probe(probe: Probe, pieces: Sequence[Piece], scenario: Scenario) -> ProbeScore:
    """How well the context `pieces` (in reading order) serves `probe`; see the module docstring."""
    texts = [normalise(p.text) for p in pieces]
    whole = "\n".join(texts)
    found = {i: bool(find(f.any_of, whole)) for i, f in enumerate(probe.needs)}
    counts: dict[str, tuple[int, int]] = {}
    for category in ("key_fact", "preference"):
        indices = [i for i, f in enumerate(probe.needs) if f.category == category]
        counts[category] = (sum(found[i] for i in indices), len(indices))
    missing = tuple(f.slot for i, f in enumerate(probe.needs) if not found[i])
    stale = _stale_slots(probe, texts, scenario)
    timeline: bool | None = None
    if probe.timeline:
        timeline = _timeline_ok(probe, texts) and (probe.timeline_slot is None or probe.timeline_slot not in stale)
    success = not missing and not stale and timeline is not False
    return ProbeScore(
        after=probe.after, key_facts=counts["key_fact"], preferences=counts["preference"], timeline=timeline,
        stale_as_current=stale, task_success=success, noise_tokens=_noise_tokens(pieces, scenario),
        context_tokens=sum(p.tokens for p in pieces), missing=missing)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation between the nearest ranks."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _rate(hits: int, total: int) -> float:
    return hits / total if total else 1.0


def summarise(probes: Sequence[ProbeScore], final_context_tokens: int, latencies_ms: Sequence[float]) -> dict[str, Any]:
    """The metrics over all probes and `overall` on 0..100; see the module docstring for each definition."""
    if not probes:
        raise ValueError("no probe scores to summarise")
    key = _rate(sum(p.key_facts[0] for p in probes), sum(p.key_facts[1] for p in probes))
    pref = _rate(sum(p.preferences[0] for p in probes), sum(p.preferences[1] for p in probes))
    asked = [p.timeline for p in probes if p.timeline is not None]
    timeline = _rate(sum(asked), len(asked))
    success = _rate(sum(p.task_success for p in probes), len(probes))
    context = sum(p.context_tokens for p in probes)
    noise = sum(p.noise_tokens for p in probes) / context if context else 0.0
    overall = (WEIGHTS["key_fact_retention"] * key + WEIGHTS["preference_recall"] * pref
               + WEIGHTS["timeline_integrity"] * timeline + WEIGHTS["task_success"] * success
               + WEIGHTS["noise"] * (1 - noise))
    return {
        "overall": overall,
        "key_fact_retention": key,
        "preference_recall": pref,
        "timeline_integrity": timeline,
        "task_success": success,
        "noise": noise,
        "context_tokens": final_context_tokens,
        "latency_ms_p50": percentile(latencies_ms, 50) if latencies_ms else None,
        "latency_ms_p95": percentile(latencies_ms, 95) if latencies_ms else None,
    }
