"""When two memories answer the same question differently, the newer one comes first.

People restate a changed fact in words of their own ("please ship to 12 Oak St" ... "I'm living at 45 Elm
Ave since last week"), and the write-time judge (`ingest.judge`) only retires an old value when it is sure.
So ranking resolves the rest without destroying anything: a hit moves directly above an older hit when

- it is about as relevant to the question (its score at least `score_ratio` of the older one's),
- the older one is a fact, preference or decision (what can have a new value; for a question about what holds
  now also a remark, which is often a standing wish or arrangement the classifier could not tell), and
- the two are about the same thing: their own calibrated vector relevance at least `min_pair_z` and, when
  configured, the sameness model (`ingest.sameness`) at least `min_same` sure they state the same attribute,
- they were said at different times (`min_gap` apart), and
- the question does not tell them apart: it names nothing that only the older one's differing words hold
  ("where does my *sister* live" keeps the sister's record above the brother's), and the newer one's differing
  words hold no qualifier the question left out (a brother's address is no newer value of mine).

How much of this applies depends on the question (`QuestionAware`, the default). A question about what holds
now ("which car do I drive", "我早上一般喝什么") also lets a newer statement the pair model calls the same
attribute jump onto the first answer from much lower down, even from under the relevance floor, since the
question's words often find only the old value (`CURRENT_VALUES`). A question about an event ("when did ...",
"那天吃了什么") keeps the conservative rule: there a newer statement on the same topic is just another event.

When nothing clears the relevance floor, two weakly relevant statements of one attribute answer together, the
newer first (`corroborated`): each alone is too little evidence, the pair is not.

Records the judge did retire (`stale`) never rank above their successor (`successors_first`: the successor
moves up, or comes in when the search did not find it); questions about the past ("what was my old
address", "之前的地址") keep the plain ranking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ebbing.judgement.align import PEOPLE_KEYS, Alignment, align, tokens
from ebbing.judgement.judge import STATEMENTS
from ebbing.judgement.sameness import SamenessModel, shipped, signal_vector
from ebbing.model import LIVE_TIERS, Hit, Kind, MemoryRecord
from ebbing.recall.search import Background, Scored, is_cjk
from ebbing.recall.whose import relations_at_opening
from ebbing.store.base import Candidate


@dataclass(frozen=True)
class SuccessionConfig:
    """The plain configuration is the conservative rule: a newer hit this close in meaning (`min_pair_z`) and
    about as relevant moves above an older statement. The sameness model (`ingest.sameness`) can gate the moves
    (`min_same`) and pull a newer statement from under the relevance floor (`min_pull_same`) onto the first
    `pull_depth` answers. Used for every question, pulls cost recall on conversations (LoCoMo recall@5 51.1 ->
    39.4 with `UPDATES_FIRST`), so by default they serve only questions about what holds now (`QuestionAware`,
    `CURRENT_VALUES`; docs/evaluation.md)."""

    window: int = 12  # how far down the ranking a newer competitor is looked for
    score_ratio: float = 0.8  # a newer hit at least this relevant (of the older's score) and ...
    min_pair_z: float = 3.0  # ... this close to the older one in meaning (its own calibrated relevance) and ...
    min_same: float = 0.0  # ... this likely the same attribute (0: the model is not asked) moves above it;
    # a newer one this likely moves up whatever its score, also from under the relevance floor (> 1: off)
    min_pull_same: float = 2.0
    pull_depth: int = 3  # ... for the hits this near the top only (where the answer is read)
    min_gap: float = 3600.0  # seconds between the two sayings
    # When nothing clears the relevance floor, two statements of one attribute with at least this relevance each
    # answer together, the newer first (`corroborated`; > 1: off)
    corroborated_relevance: float = 2.0
    corroborated_considered: int = 6  # the best this many candidates under the floor are looked at
    # The kinds an older hit must be of to have a successor: what can hold a value (an episode is just another
    # event, whatever came after it)
    succeeded: frozenset[Kind] = STATEMENTS

    @property
    def pulls(self) -> bool:
        """Whether candidates under the relevance floor can come up (then they must be scored)."""
        return self.min_pull_same <= 1.0


# Newer statements of one attribute first, pulled onto the first three answers when the question's words found
# only the old one, for every question (`Memory.succession = UPDATES_FIRST`); the first preset, kept for agents
# that want it (the default chooses by the question, `QuestionAware`).
UPDATES_FIRST = SuccessionConfig(min_pair_z=1.5, min_same=0.5, min_pull_same=0.6)

# Updates first where it costs least: the newer statement of the attribute jumps only onto the first answer, and
# the pair model (fitted with pairs of different things said on one topic among its negatives) must be 0.4 sure.
# Chosen on earlier held-out sets with a development-only model (docs/evaluation.md).
# A standing arrangement the classifier took for a passing remark ("Book club meets at Maria's house the first
# Thursday of each month", "写代码我用VS Code") still has a newer value for such a question; `corroborated` keeps
# to statements, so two weak sayings never answer on a remark's strength.
CURRENT_VALUES = SuccessionConfig(min_pair_z=1.5, min_same=0.4, min_pull_same=0.4, pull_depth=1,
                                  corroborated_relevance=0.1,  # chosen on the development sets (docs/evaluation.md)
                                  succeeded=STATEMENTS | {Kind.TEMPORARY})

# A question about an event asks what happened, not what holds now: an auxiliary or a time in the past
# ("when did ...", "what was ...", "two weeks ago"), or Chinese aspect and time words ("去了哪", "买过什么", "上次").
_EVENT_QUESTION = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|ago|yesterday|last\s+(?:night|week|month|year|time))\b"
    r"|^\s*(?:who|what|which)\s+\w{3,}ed\b"  # "who visited ...", "what happened ..."
    r"|[了过](?:吗|么|没|什么|哪|几|多少|谁)|上次|当时|那天|那次|昨天|前天|去年|上周|上个月|上礼拜", re.IGNORECASE)


def asks_current_value(query: str) -> bool:
    """Whether a question asks what holds now (an address, a tool, a schedule) rather than about an event."""
    return not _EVENT_QUESTION.search(query)


@dataclass(frozen=True)
class QuestionAware:
    """Succession chosen by the question: `current` for questions about what holds now, where the newer of two
    statements of one attribute is the answer; `events` for questions about what happened, where a newer
    statement on the same topic is just another event (on LoCoMo, which asks mostly about events, pulling newer
    same-topic turns up cost recall, docs/evaluation.md)."""

    current: SuccessionConfig = CURRENT_VALUES
    events: SuccessionConfig = SuccessionConfig()

    def for_question(self, query: str) -> SuccessionConfig:
        return self.current if asks_current_value(query) else self.events


def for_question(setting: SuccessionConfig | QuestionAware, query: str) -> SuccessionConfig:
    """The configuration a search uses: one for every question, or chosen by the question."""
    return setting.for_question(query) if isinstance(setting, QuestionAware) else setting


@dataclass(frozen=True)
class Sameness:
    """The pair model and the embedder the vectors come from (`name:dimensions`; the model's probe is used
    only for its own embedder)."""

    model: SamenessModel
    embedder: str


_SPECIFIC = ("qualifier", "name", "num")  # what a question names to tell two alike statements apart
_LONE_HAN = re.compile(r"[\u3400-\u9fff]")


def competes(query: set[str], older: str, newer: str) -> bool:
    """Whether `newer` answers the question in place of `older` (see the module's doc); `query` holds the
    question's qualifiers, names and numbers."""
    old = tokens(older)
    # Only what the question names can tell the two apart: when the older holds none of it, no span of theirs
    # can, and the alignment (the costly part of ordering a search) is not needed.
    if query & {t.key for t in old if t.tag in _SPECIFIC}:
        pair = align(older, newer)
        for tag in _SPECIFIC:  # "my *sister*" asked, the older says sister, the newer another one: no successor
            asked = query & _differing(pair, "old", tag) - _differing(pair, "new", tag)
            rivals = _differing(pair, "new", tag) - query
            if tag == "qualifier" and not any(_lone(k) for k in asked):
                # A lone 大 or 小 rivals only a lone one asked (大会议室 / 小会议室): segmenting an unknown name leaves
                # such characters behind ("美年大健康" -> 美年 / 大 / 健康), which rival nothing ("公司体检" asked).
                rivals = {k for k in rivals if not _lone(k)}
            if asked and rivals:
                return False
    others = relations_at_opening(newer) - query - {t.key for t in old}
    return not others  # "my wife's mobile is ..." is no newer value of mine (ebbing.recall.whose)


def _differing(pair: Alignment, side: str, tag: str) -> set[str]:
    """Keys of one tag in the spans where this side differs from the other."""
    out = set()
    for span in pair.spans:
        out |= {t.key for t in (span.old if side == "old" else span.new) if t.tag == tag}
    return out


def _lone(key: str) -> bool:
    """A lone Chinese character that can qualify (大, 小, 老, 主) but names no relation (哥, 妈 do)."""
    return bool(_LONE_HAN.fullmatch(key)) and key not in PEOPLE_KEYS


def order(scored: Sequence[Scored], candidates: dict[int, Candidate], query: str, background: Background,
          config: SuccessionConfig | None = None, below: Sequence[Scored] = (), *,
          sameness: Sameness | None = None) -> list[Scored]:
    """`scored` (best first) with each newer competitor moved directly above the older hit it succeeds.
    `below` are candidates under the relevance floor: one of them comes in when it succeeds a hit (the new
    value said in other words than the question's), as long as it is very likely the same attribute
    (`min_pull_same`). `sameness` judges pairs (default: the shipped model, as for the default embedder)."""
    config = config or SuccessionConfig()
    same_model = sameness or Sameness(shipped(), shipped().embedder)
    head, tail = list(scored[: config.window]), list(scored[config.window :])
    pool = list(below[: config.window]) if config.pulls else []  # off: no cost
    if not head or len(head) + len(pool) < 2:
        return head + tail
    found = [candidates[s.key] for s in head + pool]
    vectors = np.stack([c.vector for c in found]).astype(np.float32)
    cjk = np.array([is_cjk(c.text) for c in found])
    pair_z = background.pairs(vectors, cjk)
    born_at = np.array([float(c.retention[6]) for c in found])
    kinds = [Kind(c.retention[0]) for c in found]
    # Which (older i, newer j) pairs could succeed at all, whatever the scores: most searches have none.
    possible = (born_at[None, :] - born_at[:, None] >= config.min_gap) & (pair_z >= config.min_pair_z)
    # A retired statement, or one waiting for a person's review (`lifecycle.reviews`), is no newer value.
    possible &= ~np.array([c.stale for c in found])[None, :]
    if not possible.any():
        return head + tail
    born = {c.key: float(b) for c, b in zip(found, born_at, strict=True)}
    index = {c.key: i for i, c in enumerate(found)}
    asked = tokens(query)
    query_keys = {t.key for t in asked if t.tag in _SPECIFIC}
    checked: dict[tuple[int, int], bool] = {}
    pulled = {s.key for s in pool}
    same: dict[tuple[int, int], float] = {}

    def likelihood(i: int, j: int) -> float:
        if (i, j) not in same:
            old, new = found[i], found[j]
            signals = signal_vector(old.text, new.text, float(pair_z[j, i]), kinds[i], kinds[j])
            same[(i, j)] = float(same_model.model.probabilities(vectors[i], vectors[j], signals,
                                                               same_model.embedder)[0])
        return same[(i, j)]

    def succeeds(newer: Scored, older: Scored, position: int) -> bool:
        i, j = index[older.key], index[newer.key]
        if not possible[i, j] or kinds[i] not in config.succeeded:  # only what holds a value has a successor
            return False
        # about as relevant and the same attribute, or (also from under the floor) surely the same attribute
        if newer.key in pulled or newer.score < config.score_ratio * older.score:
            # With pulls off no likelihood reaches `min_pull_same`: the model is not asked (a third of a search).
            # A far less relevant statement jumps only onto the answers read first (`pull_depth`).
            if not config.pulls or position >= config.pull_depth or likelihood(i, j) < config.min_pull_same:
                return False
        elif config.min_same > 0 and likelihood(i, j) < config.min_same:
            return False
        pair = (older.key, newer.key)
        if pair not in checked:
            checked[pair] = competes(query_keys, candidates[older.key].text, candidates[newer.key].text)
        return checked[pair]

    position = 0
    moves = 0
    while position < len(head) and moves < len(head) ** 2:
        current = head[position]
        rivals = [s for s in head[position + 1 :] + (pool if position < config.pull_depth else [])
                  if succeeds(s, current, position)]
        if rivals:
            newest = max(rivals, key=lambda s: born[s.key])
            if newest.key in pulled:
                pool.remove(newest)
                pulled.discard(newest.key)
            else:
                head.remove(newest)
            head.insert(position, Scored(newest.key, max(newest.score, current.score),
                                         {**newest.parts, "succeeds": 1.0}))
            moves += 1
            continue  # the one moved up may have a newer rival of its own further down
        position += 1
    return head + tail


def successors_first(hits: Sequence[Hit], successor: dict[str, str], found: dict[str, MemoryRecord]) -> list[Hit]:
    """Hits with every retired record's successor directly above it: moved up when it was found lower, brought
    in (when live) when it was not found at all. `successor` maps a retired record's id to the current one's,
    `found` holds the current records that are not among the hits."""
    out = list(hits)
    position = 0
    while position < len(out):
        hit = out[position]
        current = successor.get(hit.record.id)
        above = {h.record.id for h in out[:position]}
        if current is None or current in above:
            position += 1
            continue
        later = next((k for k in range(position + 1, len(out)) if out[k].record.id == current), None)
        if later is not None:
            moved = out.pop(later)
            out.insert(position, Hit(moved.record, max(moved.score, hit.score), {**moved.parts, "successor": 1.0}))
        elif current in found and found[current].tier in LIVE_TIERS:
            out.insert(position, Hit(found[current], hit.score, {"relevance": 0.0, "stale": 0.0, "successor": 1.0}))
        else:
            position += 1
            continue
        position += 2
    return out


def corroborated(weak: Sequence[Scored], candidates: dict[int, Candidate], background: Background,
                 config: SuccessionConfig, sameness: Sameness) -> list[Scored]:
    """When nothing clears the relevance floor: the best pair among `weak` (candidates with some relevance, best
    first) that are two statements of one attribute said at different times, the newer first, else nothing.

    A question about what holds now often shares little with either statement ("what should I put on the
    delivery form?" against "Just signed the lease on 27 Harrow Lane" and "We moved, the place is 9 Quarry
    Road"). One weakly relevant statement is not evidence enough to answer; two that the pair model calls the
    same attribute, both leaning towards the question, corroborate each other, and the newer is the answer. Each
    must lean towards it in meaning (some vector relevance): a word shared alone ("吃", "Monday") is how off-topic
    questions found such pairs on the held-out sets."""
    weak = [s for s in weak if s.parts["vector"] > 0.0]
    if len(weak) < 2:
        return []
    found = [candidates[s.key] for s in weak]
    vectors = np.stack([c.vector for c in found]).astype(np.float32)
    pair_z = background.pairs(vectors, np.array([is_cjk(c.text) for c in found]))
    born_at = np.array([float(c.retention[6]) for c in found])
    kinds = [Kind(c.retention[0]) for c in found]
    best: tuple[float, int, int] | None = None
    for i, j in zip(*np.nonzero((born_at[None, :] - born_at[:, None] >= config.min_gap)
                                & (pair_z >= config.min_pair_z)), strict=True):
        if kinds[i] not in STATEMENTS or found[i].stale or found[j].stale:
            continue
        if not competes(set(), found[i].text, found[j].text):  # another person's value is no newer one of mine
            continue
        signals = signal_vector(found[i].text, found[j].text, float(pair_z[j, i]), kinds[i], kinds[j])
        likely = float(sameness.model.probabilities(vectors[i], vectors[j], signals, sameness.embedder)[0])
        together = weak[i].score + weak[j].score
        if likely >= config.min_pull_same and (best is None or together > best[0]):
            best = (together, int(i), int(j))
    if best is None:
        return []
    _, older, newer = best
    top = max(weak[older].score, weak[newer].score)
    return [Scored(weak[newer].key, top, {**weak[newer].parts, "succeeds": 1.0, "corroborated": 1.0}),
            Scored(weak[older].key, weak[older].score, {**weak[older].parts, "corroborated": 1.0})]
