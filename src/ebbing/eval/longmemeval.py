"""LongMemEval (oracle split): does Ebbing return the newest value first, and the evidence at all?

LongMemEval (Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive Memory", ICLR 2025,
arXiv:2410.10813; MIT, github.com/xiaowu0162/LongMemEval) asks each question over its own small haystack of
chat sessions between a user and an assistant; `has_answer` marks the turns that hold the answer. The oracle
split keeps only the evidence sessions (1-6 per question). The data is never part of this project: it is read
from a path (`../shared/data/longmemeval/longmemeval_oracle.json` by default).

`ebbing eval longmemeval` replays every question's sessions into one SQLite `Memory`, the way a user of the
library would (`add` per turn, the question's id as user, forgetting on), asks the question with
`search(..., limit=10, count_use=False)` at the question's date, and measures per question type:

- `newest_first`: the first returned record that covers an evidence turn covers one of the *newest* evidence
  session (the latest date among sessions holding evidence), so an updated value comes before the stale one
  (0 when no evidence is returned);
- `recall@5`, `recall@10`: the share of the question's evidence turns covered by the top 5 / top 10.

A record covers the turn it was stored for, and the turns `add` merged into it as restatements. Two baselines
run on the same turns and the same vectors: `full_bm25` and `full_vector` (every turn, no forgetting; the
LoCoMo baselines of `ebbing.eval.systems`). Abstention questions (ids ending in `_abs`) have nothing to find and
are skipped.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ebbing.embed.base import Embedder
from ebbing.errors import InvalidInput, NotFound
from ebbing.eval import locomo
from ebbing.eval.data import shared_file
from ebbing.eval.systems import CachingEmbedder, FullBm25, FullVector
from ebbing.memory import Memory
from ebbing.recall.blas import blas_threads
from ebbing.text.tokens import CharTokens

TYPES = ("single-session-user", "single-session-assistant", "single-session-preference", "knowledge-update",
         "temporal-reasoning", "multi-session")
DEFAULT_TYPES = ("knowledge-update", "temporal-reasoning")
SYSTEMS = ("ebbing", "full_bm25", "full_vector")
METRICS = ("newest_first", "recall@5", "recall@10")
TOP_K = (5, 10)
LIMIT = 10  # what each system returns per question
TURN_GAP = timedelta(minutes=1)  # sessions are dated, their turns are not: a minute apart
FATES = ("hot", "warm", "cold", "trash", "purged")

DEFAULT_DATA = Path("..") / "shared" / "data" / "longmemeval" / "longmemeval_oracle.json"

_WHEN = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\s*[A-Za-z]{3}\s*\))?\s*(\d{1,2}):(\d{2})\s*$")


def default_data() -> Path | None:
    """`../shared/data/longmemeval/longmemeval_oracle.json` from the current folder or the checkout, if there."""
    return shared_file(DEFAULT_DATA)


def parse_date(text: str) -> datetime:
    """LongMemEval's "2023/08/11 (Fri) 20:17" as an aware UTC datetime (the data has no zone; the weekday is
    not checked)."""
    match = _WHEN.match(text)
    if match is None:
        raise InvalidInput("date", f"cannot parse LongMemEval date {text!r} (expected like '2023/08/11 (Fri) 20:17')")
    year, month, day, hour, minute = (int(g) for g in match.groups())
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError as exc:
        raise InvalidInput("date", f"{exc} in {text!r}") from None


# -- data ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    key: str  # "<session id>:<index in the session>", unique within a question
    role: str  # "user" or "assistant"
    text: str
    session: str
    at: datetime
    evidence: bool  # has_answer


@dataclass(frozen=True)
class Session:
    id: str
    at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    text: str
    at: datetime  # question_date
    sessions: tuple[Session, ...]  # by date (the file does not always list them in order)
    evidence: tuple[str, ...]  # keys of the has_answer turns
    newest: frozenset[str]  # the evidence turns of the newest evidence session

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


@dataclass(frozen=True)
class Dataset:
    questions: tuple[Question, ...]
    abstention: int  # questions of the chosen types left out because they ask to abstain (`_abs`)
    without_evidence: int  # left out because no turn has has_answer


class _Said(locomo.Turn):
    """A turn as the LoCoMo baselines read it (`dia_id` = the turn's key), rendered as the bare text Ebbing
    stores, so the baselines rank the very texts (and vectors) the store holds."""

    @property
    def rendered(self) -> str:
        return self.text


def _question(raw: dict[str, Any]) -> Question:
    qid = str(raw["question_id"])
    dates, ids, bodies = raw["haystack_dates"], raw["haystack_session_ids"], raw["haystack_sessions"]
    if not len(dates) == len(ids) == len(bodies):
        raise InvalidInput("data", f"{qid}: haystack_dates, haystack_session_ids and haystack_sessions differ in "
                                   "length")
    sessions = []
    for date, session_id, body in zip(dates, ids, bodies, strict=True):
        start = parse_date(str(date))
        # Stripped as `Memory.add` stores it, so the baselines rank (and the cache embeds) the very same text.
        turns = tuple(Turn(f"{session_id}:{i}", str(t["role"]), str(t["content"]).strip(), str(session_id),
                           start + i * TURN_GAP, bool(t.get("has_answer", False))) for i, t in enumerate(body))
        sessions.append(Session(str(session_id), start, turns))
    sessions.sort(key=lambda s: s.at)  # stable: the file's order among sessions of the same minute
    evidence = tuple(t.key for s in sessions for t in s.turns if t.evidence)
    holding = [s for s in sessions if any(t.evidence for t in s.turns)]
    newest = frozenset(t.key for t in holding[-1].turns if t.evidence) if holding else frozenset()
    return Question(qid, str(raw["question_type"]), str(raw["question"]), parse_date(str(raw["question_date"])),
                    tuple(sessions), evidence, newest)


def load(path: str | Path, types: Sequence[str] = DEFAULT_TYPES, per_type: int | None = None) -> Dataset:
    """The questions of `types` in file order (at most `per_type` of each), abstention questions skipped."""
    unknown = [t for t in types if t not in TYPES]
    if unknown or not types:
        raise InvalidInput("types", f"unknown question type {unknown[0]!r}; choose among {', '.join(TYPES)}"
                           if unknown else "choose at least one question type")
    if per_type is not None and per_type < 1:
        raise InvalidInput("questions", "must be >= 1")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput("data", f"no LongMemEval file at {path}; pass --data PATH to longmemeval_oracle.json"
                           ) from None
    except (OSError, ValueError) as exc:
        raise InvalidInput("data", f"cannot read {path} as JSON: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(q, dict) and "haystack_sessions" in q for q in data):
        raise InvalidInput("data", f"{path} is not a LongMemEval file: expected a list of questions with "
                                   "haystack_sessions")
    chosen: list[Question] = []
    taken: Counter[str] = Counter()
    abstention = without = 0
    try:
        for raw in data:
            kind = str(raw["question_type"])
            if kind not in types or (per_type is not None and taken[kind] >= per_type):
                continue
            if str(raw["question_id"]).endswith("_abs"):
                abstention += 1
                continue
            question = _question(raw)
            if not question.evidence:
                without += 1
                continue
            chosen.append(question)
            taken[kind] += 1
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InvalidInput):
            raise
        raise InvalidInput("data", f"{path} is not in LongMemEval's format: {exc!r}") from None
    return Dataset(tuple(chosen), abstention, without)


# -- metrics ---------------------------------------------------------------------------------------------


def measure(ranked: Sequence[Collection[str]], evidence: Collection[str], newest: Collection[str]) -> dict[str, float]:
    """The metrics of one question from what a system returned, best first: for each returned item, the turn
    keys it covers."""
    wanted, latest = set(evidence), set(newest)
    first = next((set(c) for c in ranked[:LIMIT] if wanted.intersection(c)), None)
    out = {"newest_first": 1.0 if first is not None and first & latest else 0.0}
    for k in TOP_K:
        found: set[str] = set()
        for covers in ranked[:k]:
            found.update(covers)
        out[f"recall@{k}"] = len(found & wanted) / len(wanted) if wanted else 0.0
    return out


# -- the run ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    question: str
    type: str
    metrics: dict[str, float]


@dataclass
class Run:
    outcomes: dict[str, list[Outcome]] = field(default_factory=lambda: {name: [] for name in SYSTEMS})
    turns: int = 0
    sessions: int = 0
    records: int = 0  # records the replays made (turns minus merges)
    merges: int = 0  # turns `add` merged into an earlier record as restatements
    sweeps: int = 0
    transitions: dict[str, int] = field(default_factory=dict)
    evidence_tiers: dict[str, dict[str, int]] = field(default_factory=dict)  # by type: evidence turns by tier
    asked_before_last_session: int = 0  # questions dated before their last session's last turn
    embedded: int = 0
    embed_seconds: float = 0.0
    seconds: float = 0.0


def total_steps(questions: Sequence[Question], texts: int) -> int:
    """Texts to embed, plus each turn replayed, plus each question asked."""
    return texts + sum(len(q.turns) + 1 for q in questions)


def texts_to_embed(questions: Sequence[Question]) -> tuple[list[str], list[str]]:
    """(passages, queries): every turn's text once, and every question once."""
    return (list(dict.fromkeys(t.text for q in questions for t in q.turns)),
            list(dict.fromkeys(q.text for q in questions)))


def replay(memory: Memory, question: Question, run: Run | None = None) -> dict[str, set[str]]:
    """Every turn of the question's sessions added in order under the question's id, sweeping at each session's
    start and at the question's date; returns what each record covers (record id -> turn keys)."""
    covers: dict[str, set[str]] = {}
    for session in question.sessions:
        _sweep(memory, question.id, session.at, run)
        for turn in session.turns:
            record = memory.add(turn.text, user_id=question.id, metadata={"role": turn.role, "session": turn.session},
                                at=turn.at).records[0]
            if record.id in covers and run is not None:
                run.merges += 1
            covers.setdefault(record.id, set()).add(turn.key)
    _sweep(memory, question.id, question.at, run)
    return covers


def _sweep(memory: Memory, user: str, at: datetime, run: Run | None) -> None:
    report = memory.sweep(at=at, user_id=user)
    if run is not None:
        run.sweeps += 1
        for name, count in report.transitions.items():
            run.transitions[name] = run.transitions.get(name, 0) + count


def _fates(memory: Memory, question: Question, covers: dict[str, set[str]]) -> Counter[str]:
    record_of = {key: record_id for record_id, keys in covers.items() for key in keys}
    out: Counter[str] = Counter()
    for key in question.evidence:
        try:
            out[memory.get(record_of[key]).tier.value] += 1
        except NotFound:
            out["purged"] += 1
    return out


def run(questions: Sequence[Question], *, embedder: Embedder, workdir: Path | None = None, blas: int = 1,
        on_step: Callable[[int, str], None] | None = None) -> Run:
    """Replay and ask every question; the store lives in a temporary folder (inside `workdir`). Every text is
    embedded once, up front, and shared by the three systems."""
    begin = time.perf_counter()
    result = Run()
    cache = embedder if isinstance(embedder, CachingEmbedder) else CachingEmbedder(embedder)

    def step(n: int, label: str) -> None:
        if on_step:
            on_step(n, label)

    passages, queries = texts_to_embed(questions)
    cache.prime(passages, on_progress=lambda n: step(n, "embedding turns"))
    cache.prime(queries, query=True, on_progress=lambda n: step(n, "embedding questions"))
    tokens = CharTokens()  # the baselines count context tokens; no metric here uses them
    with (blas_threads(blas), tempfile.TemporaryDirectory(prefix="ebbing-longmemeval-", dir=workdir) as tmp,
          Memory(Path(tmp) / "ebbing.db", embedder=cache, actor="eval") as memory):
        for question in questions:
            label = f"{question.type}: {question.id}"
            covers = replay(memory, question, result)
            step(len(question.turns), label)
            hits = memory.search(question.text, user_id=question.id, limit=LIMIT, at=question.at, count_use=False)
            ranked: dict[str, list[Collection[str]]] = {"ebbing": [covers.get(h.record.id, set()) for h in hits]}
            ranked.update(_baselines(question, cache, tokens))
            for name in SYSTEMS:
                metrics = measure(ranked[name], question.evidence, question.newest)
                result.outcomes[name].append(Outcome(question.id, question.type, metrics))
            tiers = result.evidence_tiers.setdefault(question.type, dict.fromkeys(FATES, 0))
            for tier, count in _fates(memory, question, covers).items():
                tiers[tier] += count
            result.turns += len(question.turns)
            result.sessions += len(question.sessions)
            result.records += len(covers)
            result.asked_before_last_session += int(question.at < question.turns[-1].at)
            step(1, label)
    result.embedded = cache.computed
    result.embed_seconds = cache.seconds
    result.seconds = time.perf_counter() - begin
    return result


def _baselines(question: Question, cache: CachingEmbedder, tokens: CharTokens) -> dict[str, list[Collection[str]]]:
    turns = tuple(_Said(t.key, t.role, t.text, None, number, t.at)
                  for number, s in enumerate(question.sessions, start=1) for t in s.turns)
    conversation = locomo.Conversation(question.id, ("user", "assistant"), turns, (), 0, 0)
    vector: np.ndarray = cache.vector(question.text, query=True)
    bm25 = FullBm25(conversation, tokens)
    try:
        by_words = bm25.rank(question.text, vector, LIMIT)
    finally:
        bm25.close()
    by_meaning = FullVector(conversation, cache, tokens).rank(question.text, vector, LIMIT)
    return {"full_bm25": [i.covers for i in by_words], "full_vector": [i.covers for i in by_meaning]}


# -- report ----------------------------------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float | None:
    chosen = list(values)
    return round(float(np.mean(chosen)), 4) if chosen else None


def by_type(outcomes: Sequence[Outcome], types: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for kind in types:
        mine = [o for o in outcomes if o.type == kind]
        out[kind] = {**{m: _mean(o.metrics[m] for o in mine) for m in METRICS}, "questions": len(mine)}
    return out


def summary(result: Run, dataset: Dataset, types: Sequence[str], *, data: str, date: str, commit: str | None,
            changed: list[str] | None) -> dict[str, Any]:
    """The JSON the command prints: `{"run": {...}, "systems": {name: {type: {metrics, "questions"}}}}`."""
    counts = Counter(q.type for q in dataset.questions)
    return {
        "run": {
            "benchmark": "LongMemEval, oracle split (Wu et al., ICLR 2025; MIT)",
            "data": data,
            "date": date,
            "commit": commit,
            "uncommitted_package_files": changed,  # files under src/ebbing that differed from the commit
            "types": list(types),
            "questions": len(dataset.questions),
            "questions_by_type": {kind: counts.get(kind, 0) for kind in types},
            "skipped_abstention": dataset.abstention,
            "skipped_without_evidence": dataset.without_evidence,
            "sessions": result.sessions,
            "turns": result.turns,
            "evidence_turns": sum(len(q.evidence) for q in dataset.questions),
            "asked_before_last_session": result.asked_before_last_session,
            "limit": LIMIT,
            "ebbing": {"records": result.records, "merges": result.merges, "sweeps": result.sweeps,
                       "transitions": result.transitions, "evidence_tiers": result.evidence_tiers},
            "embedded_texts": result.embedded,
            "embed_seconds": round(result.embed_seconds, 1),
            "seconds": round(result.seconds, 1),
        },
        "systems": {name: by_type(result.outcomes[name], types) for name in SYSTEMS},
    }


HEADER = ["system", "question type", "questions", "newest first %", "R@5 %", "R@10 %"]


def rows(report: dict[str, Any]) -> list[list[str]]:
    """One row per system and question type."""

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}"

    return [[name, kind, str(m["questions"]), *(pct(m[metric]) for metric in METRICS)]
            for name, kinds in report["systems"].items() for kind, m in kinds.items()]
