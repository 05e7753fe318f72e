"""One LoCoMo evaluation run: embed, replay, ask every system every question, collect what came back."""

from __future__ import annotations

import multiprocessing
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ebbing.embed.base import Embedder
from ebbing.eval.answer import answer, judge
from ebbing.eval.locomo import Conversation, Question
from ebbing.eval.systems import (
    CachingEmbedder,
    FullBm25,
    FullVector,
    Item,
    MemorySystem,
    Replay,
    ReplayStats,
    System,
    build_fifo,
    clone,
    fill,
    recall,
)
from ebbing.llm.base import LLM
from ebbing.memory import Memory
from ebbing.recall.blas import blas_threads
from ebbing.text.tokens import TokenCounter, XlmrTokens

FATES = ("hot", "warm", "cold", "trash", "purged")
SYSTEMS = ("ebbing", "ebbing_live", "ebbing_cold", "full_bm25", "full_vector", "fifo", "ebbing_no_forgetting")
TOP_K = (5, 10)
BUDGETS = (1000, 2000)
POOL = 50  # hits asked for per question: a 2,000-token context holds ~44 dated turns
JUDGED_BUDGET = 2000  # the context an LLM answers from


@dataclass(frozen=True)
class Outcome:
    """What one system returned for one question."""

    conversation: str
    question: int
    category: int
    recall: dict[str, float]  # "recall@5", "recall@10", "recall@1000tok", "recall@2000tok" (frozen state), and
    # "recall@10_asked_in_order": the timed search's top 10, the questions asked one after another (uses counted)
    tokens: dict[str, int]  # context tokens of the same contexts ("tokens@5", ...)
    search_ms: float  # the system's own top-10 search, query embedding excluded
    found: tuple[bool, ...]  # per evidence id: covered by the top 10
    ages: tuple[float, ...]  # per evidence id: days from its turn to the question
    fates: tuple[str, ...]  # per evidence id: where Ebbing (forgetting on) keeps its record at question time
    correct: bool | None = None  # the LLM judge's verdict, when an LLM answered


@dataclass
class ConversationResult:
    sample_id: str
    turns: int
    questions: int
    unresolved_evidence: int
    without_evidence: int
    live: dict[str, int]  # per system: the records it searches by default (hot + warm for Ebbing)
    replays: dict[str, ReplayStats]
    fates: dict[str, int]  # evidence turns by where Ebbing keeps them at question time
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"sample_id": self.sample_id, "turns": self.turns, "questions": self.questions,
                "unresolved_evidence_ids": self.unresolved_evidence, "without_evidence": self.without_evidence,
                "live": self.live, "evidence_fate": self.fates, "seconds": round(self.seconds, 1),
                "replays": {name: {"tiers": s.tiers, "merges": s.merges, "summaries": s.summaries,
                                   "sweeps": s.sweeps, "sweep_seconds": round(s.sweep_seconds, 2),
                                   "transitions": s.transitions, "trashed_by": s.trashed, "purged": s.purged,
                                   "recalls": s.recalls,
                                   "recalled_hits": s.recalled, "seconds": round(s.seconds, 1)}
                            for name, s in self.replays.items()}}


@dataclass
class Run:
    conversations: list[ConversationResult] = field(default_factory=list)
    outcomes: dict[str, list[Outcome]] = field(default_factory=lambda: {name: [] for name in SYSTEMS})
    embedded: int = 0
    embed_seconds: float = 0.0
    seconds: float = 0.0
    sweeps: str = "session"
    turn_queries: str = "passage"
    llm: str | None = None
    judged: tuple[str, ...] = ()
    blas_threads: int | None = None  # numpy's OpenBLAS threads during the run (None: left as it was)
    workers: int = 1  # processes that replayed and asked the conversations


class Progress:
    """Where the run is, for a progress bar: `total` steps (texts embedded, turns replayed, questions asked)."""

    def __init__(self, on_step: Callable[[int, str], None] | None = None) -> None:
        self.on_step = on_step
        self.label = ""

    def step(self, n: int = 1) -> None:
        if self.on_step:
            self.on_step(n, self.label)


def total_steps(conversations: Sequence[Conversation], embedder_texts: int) -> int:
    """Texts to embed, plus each turn twice (two replays), plus each question once."""
    return embedder_texts + sum(2 * len(c.turns) + len(c.questions) for c in conversations)


def texts_to_embed(conversations: Sequence[Conversation], turn_queries: str = "passage"
                   ) -> tuple[list[str], list[str]]:
    """(passages, queries): every turn as stored, and every question (and with `turn_queries="query"` every
    turn) as a query."""
    passages = [t.rendered for c in conversations for t in c.turns]
    queries = (passages if turn_queries == "query" else []) + [q.text for c in conversations for q in c.questions]
    return list(dict.fromkeys(passages)), list(dict.fromkeys(queries))


def run(conversations: Sequence[Conversation], *, embedder: Embedder, sweeps: str = "session",
        turn_queries: str = "passage", tokens: TokenCounter | None = None, llm: LLM | None = None,
        judged: Sequence[str] = ("ebbing",), workdir: Path | None = None, blas: int = 1, workers: int = 1,
        on_step: Callable[[int, str], None] | None = None) -> Run:
    """Evaluate every system on `conversations`; the stores live in a temporary folder (inside `workdir`).
    `blas` limits numpy's OpenBLAS threads for the run (0: unchanged; see `ebbing.recall.blas`). With
    `workers` > 1 the conversations are replayed and asked in that many processes once every text is embedded
    (the embedder already uses every core; a replay uses one); the results are the same as with one."""
    with blas_threads(blas) as threads:
        result = _run(conversations, embedder, sweeps, turn_queries, tokens, llm, judged, workdir, blas, workers,
                      on_step)
    result.blas_threads = threads
    return result


def _run(conversations: Sequence[Conversation], embedder: Embedder, sweeps: str, turn_queries: str,
         tokens: TokenCounter | None, llm: LLM | None, judged: Sequence[str], workdir: Path | None, blas: int,
         workers: int, on_step: Callable[[int, str], None] | None) -> Run:
    begin = time.perf_counter()
    default_tokens = tokens is None
    tokens = tokens or XlmrTokens()
    cache = embedder if isinstance(embedder, CachingEmbedder) else CachingEmbedder(embedder)
    progress = Progress(on_step)
    result = Run(sweeps=sweeps, turn_queries=turn_queries, llm=llm.name if llm else None,
                 judged=tuple(judged) if llm else ())
    passages, queries = texts_to_embed(conversations, turn_queries)
    progress.label = "embedding turns"
    cache.prime(passages, on_progress=progress.step)
    progress.label = "embedding queries"
    cache.prime(queries, query=True, on_progress=progress.step)
    with tempfile.TemporaryDirectory(prefix="ebbing-locomo-", dir=workdir) as tmp:
        if workers > 1 and len(conversations) > 1 and llm is None:
            _in_processes(conversations, cache, Path(tmp), sweeps, turn_queries, None if default_tokens else tokens,
                          blas, workers, result, progress)
            result.workers = min(workers, len(conversations))
        else:
            for conversation in conversations:
                folder = Path(tmp) / conversation.sample_id
                result.conversations.append(_conversation(conversation, cache, folder, sweeps, turn_queries,
                                                          tokens, llm, result.judged, result.outcomes, progress))
    result.embedded = cache.computed
    result.embed_seconds = cache.seconds
    result.seconds = time.perf_counter() - begin
    return result


_worker: dict[str, Any] = {}


def _start_worker(cache: CachingEmbedder, tokens: TokenCounter | None, blas: int) -> None:
    _worker["blas"] = blas_threads(blas)
    _worker["blas"].__enter__()  # for the life of the worker process
    _worker["cache"], _worker["tokens"] = cache, tokens or XlmrTokens()


def _conversation_job(conversation: Conversation, folder: Path, sweeps: str, turn_queries: str
                      ) -> tuple[ConversationResult, dict[str, list[Outcome]], int, float]:
    cache: CachingEmbedder = _worker["cache"]
    computed, seconds = cache.computed, cache.seconds
    outcomes: dict[str, list[Outcome]] = {name: [] for name in SYSTEMS}
    done = _conversation(conversation, cache, folder, sweeps, turn_queries, _worker["tokens"], None, (), outcomes,
                         Progress())
    return done, outcomes, cache.computed - computed, cache.seconds - seconds


def _in_processes(conversations: Sequence[Conversation], cache: CachingEmbedder, tmp: Path, sweeps: str,
                  turn_queries: str, tokens: TokenCounter | None, blas: int, workers: int, result: Run,
                  progress: Progress) -> None:
    """Each conversation in a worker process (spawned: the embedder's OpenMP runtime does not survive a fork),
    every worker starting with the parent's embeddings; results gathered in the conversations' order."""
    context = multiprocessing.get_context("spawn")
    progress.label = f"replaying and asking ({workers} processes)"
    with ProcessPoolExecutor(max_workers=min(workers, len(conversations)), mp_context=context,
                             initializer=_start_worker, initargs=(cache, tokens, blas)) as pool:
        futures = {pool.submit(_conversation_job, c, tmp / c.sample_id, sweeps, turn_queries): c
                   for c in conversations}
        for future in as_completed(futures):
            conversation = futures[future]
            progress.step(2 * len(conversation.turns) + len(conversation.questions))
        for future in futures:
            done, outcomes, computed, seconds = future.result()
            result.conversations.append(done)
            for name, found in outcomes.items():
                result.outcomes[name].extend(found)
            cache.computed += computed
            cache.seconds += seconds


def _conversation(conversation: Conversation, cache: CachingEmbedder, folder: Path, sweeps: str,
                  turn_queries: str, tokens: TokenCounter, llm: LLM | None, judged: Sequence[str],
                  outcomes: dict[str, list[Outcome]], progress: Progress) -> ConversationResult:
    begin = time.perf_counter()
    replays = {}
    for name, forgetting in (("ebbing", True), ("ebbing_no_forgetting", False)):
        progress.label = f"{conversation.sample_id}: replaying ({name})"
        replay = Replay(conversation, cache, folder / name, forgetting=forgetting, sweeps=sweeps,
                        turn_queries=turn_queries, on_turn=progress.step)
        replay.run()
        replays[name] = replay
    main, plain = replays["ebbing"], replays["ebbing_no_forgetting"]
    at, user, turns = main.question_at, conversation.sample_id, len(conversation.turns)
    evidence = sorted({e for q in conversation.questions for e in q.evidence})
    fate = main.fate(evidence)
    size = min(main.stats.live, turns)
    fifo = folder / "fifo" / "ebbing.db"
    build_fifo(conversation, size, cache, fifo)
    bm25, vector = FullBm25(conversation, tokens), FullVector(conversation, cache, tokens)

    def stores(name: str, database: Path, merged: Mapping[str, Iterable[str]], cold: bool | None = None
               ) -> MemorySystem:
        # One copy is only ranked (never changed), the other searched as an agent would (uses counted).
        frozen, live = (Memory(clone(database, f"{name}-{role}"), embedder=cache, actor="eval")
                        for role in ("frozen", "live"))
        return MemorySystem(name, frozen, live, user, at, tokens, include_cold=cold, merged=merged)

    systems: dict[str, System] = {
        "ebbing": stores("ebbing", main.database, main.merged),
        "ebbing_live": stores("ebbing_live", main.database, main.merged, cold=False),
        "ebbing_cold": stores("ebbing_cold", main.database, main.merged, cold=True),
        "full_bm25": bm25,
        "full_vector": vector,
        "fifo": stores("fifo", fifo, {}, cold=False),
        "ebbing_no_forgetting": stores("ebbing_no_forgetting", plain.database, plain.merged),
    }
    live = {"ebbing": main.stats.live, "ebbing_live": main.stats.live,
            "ebbing_cold": main.stats.live, "full_bm25": turns, "full_vector": turns,
            "fifo": size, "ebbing_no_forgetting": plain.stats.live}
    when = {t.dia_id: t.at for t in conversation.turns}
    progress.label = f"{conversation.sample_id}: questions"
    try:
        for question in conversation.questions:
            vector_of_question = cache.vector(question.text, query=True)
            ages = tuple((at - when[e]).total_seconds() / 86_400 for e in question.evidence)
            fates = tuple(fate[e] for e in question.evidence)
            for name, system in systems.items():
                outcomes[name].append(_ask(system, conversation, question, vector_of_question, ages, fates, llm,
                                           name in judged))
            progress.step()
    finally:
        for system in systems.values():
            close = getattr(system, "close", None)
            if close is not None:
                close()
    counts = Counter(fate.values())
    return ConversationResult(conversation.sample_id, turns, len(conversation.questions), conversation.unresolved,
                              conversation.without_evidence, live,
                              {name: replay.stats for name, replay in replays.items()},
                              {tier: counts.get(tier, 0) for tier in FATES}, time.perf_counter() - begin)


def _ask(system: System, conversation: Conversation, question: Question, vector: np.ndarray,
         ages: tuple[float, ...], fates: tuple[str, ...], llm: LLM | None, judge_it: bool) -> Outcome:
    top = system.rank(question.text, vector, max(TOP_K))
    pool = system.rank(question.text, vector, POOL)
    asked, seconds = system.search(question.text, vector, max(TOP_K))
    contexts: dict[str, list[Item]] = {f"recall@{k}": top[:k] for k in TOP_K}
    contexts.update({f"recall@{b}tok": fill(pool, b) for b in BUDGETS})
    recalls = {name: recall(items, question.evidence) for name, items in contexts.items()}
    sizes = {name.replace("recall", "tokens"): sum(i.tokens for i in items) for name, items in contexts.items()}
    covered = set().union(*(i.covers for i in top[: max(TOP_K)]))
    recalls["recall@10_asked_in_order"] = recall(asked, question.evidence)
    correct = None
    if llm is not None and judge_it:
        context = "\n".join(i.line for i in fill(pool, JUDGED_BUDGET))
        said = answer(llm, conversation.speakers, context, question.text)
        correct = judge(llm, question.text, question.answer, said)
    return Outcome(conversation.sample_id, question.index, question.category, recalls, sizes, seconds * 1000.0,
                   tuple(e in covered for e in question.evidence), ages, fates, correct)
