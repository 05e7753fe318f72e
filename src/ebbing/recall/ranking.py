"""Ranking: one search's candidates from both indexes (and, when live evidence is weak, the archive), scored by
relevance weighted by retention, the newer of two competing values first. Nothing here counts a use
(`recall.uses` does, for the hits a caller is given)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ebbing.embed.base import Embedder
from ebbing.judgement import sameness
from ebbing.model import Hit, MemoryRecord, Scope
from ebbing.recall import succession, whose
from ebbing.recall.blas import one_thread
from ebbing.recall.cold import ColdIndex
from ebbing.recall.search import Background, Scored, SearchConfig, is_cjk, score_candidates
from ebbing.retention.base import RETENTION_COLUMNS, RecordBatch, RetentionPolicy
from ebbing.store.base import Candidate, ColdReads, Facts, GathersCandidates, Reads, Search
from ebbing.store.filters import matches
from ebbing.text.placeholders import untagged
from ebbing.text.terms import query_terms

STALE_WEIGHT = 0.5  # a fact that has a newer value ranks at half its weight
_HISTORY = re.compile(r"\b(?:history|histor(?:y|ic)|previous(?:ly)?|before|used to|changed?|changes|earlier|old|"
                      r"timeline|was it|were they)\b|之前|以前|原来|历史|变化|改过|曾经|过去|旧的", re.IGNORECASE)


class RankingStore(Search, Reads, Facts, ColdReads, Protocol):
    """What ranking reads: both indexes, the records they found, facts (who succeeded whom), the archive index."""


EXPIRES_AT = RETENTION_COLUMNS.index("expires_at")


def _expired(row: tuple[Any, ...], now: float) -> bool:
    """A candidate whose explicit expiry has come: hidden from every search, whatever its relevance."""
    ends = row[EXPIRES_AT] if len(row) > EXPIRES_AT else None
    return ends is not None and ends <= now


def asks_about_history(query: str) -> bool:
    return bool(_HISTORY.search(query))


class Ranker:
    """Ranks a scope's records for a query. `succession` and `sameness` may be swapped after construction
    (an evaluation trying another model, an agent whose questions are mostly about current values)."""

    def __init__(self, store: RankingStore, tenant: str, embedder: Embedder, composite: RetentionPolicy,
                 config: SearchConfig, background: Callable[[], Background], cold: ColdIndex) -> None:
        self.store, self.tenant, self.embedder, self.composite = store, tenant, embedder, composite
        self.config = config
        self.background = background
        self.cold = cold
        # updates first for questions about what holds now, the conservative rule for questions about events
        self.succession: succession.SuccessionConfig | succession.QuestionAware = succession.QuestionAware()
        self.sameness = sameness.shipped()  # is a newer hit the same attribute as an older one
        self.space = f"{embedder.name}:{embedder.dimensions}"  # what the sameness model reads vectors of

    def rank(self, query: str, scope: Scope, limit: int, filters: dict[str, Any] | None, now: float, *,
             include_cold: bool | None = None, query_vector: np.ndarray | None = None,
             goal: str | None = None) -> list[Hit]:
        """Candidates from both indexes (and the archive), scored and ranked; nothing is counted as used."""
        words = query_terms(query)
        if query_vector is None:
            query_vector = self.embedder.embed([query], query=True)[0]
        wanted = max(self.config.candidates, limit)
        found = [c for c in self._candidates(scope, words, query_vector, wanted, filters)
                 if not _expired(c.retention, now)]
        cold: dict[int, MemoryRecord] = {}
        history = asks_about_history(query)
        ordering = succession.for_question(self.succession, query)
        floor = self.config.relevance_floor
        # Candidates under the floor are scored only when succession may pull one up from there, or two of them
        # may answer together.
        under = ordering.pulls or ordering.corroborated_relevance <= floor
        scoring = dataclasses.replace(self.config, relevance_floor=0.0) if under and not history else self.config
        goal_vector = self.embedder.embed([goal], query=True)[0] if goal else None

        def score(found: list[Candidate]) -> list[Scored]:
            weights = self._retention_weights(found, now)
            if not history:  # the current value first; a question about the past sees all
                weights = {c.key: weights[c.key] * STALE_WEIGHT if c.stale else weights[c.key] for c in found}
            # the user's own value before another person's, for a question about the user (ebbing.recall.whose)
            others = {c.key: w for c, w in zip(found, whose.weights(query, [c.text for c in found]), strict=True)
                      if w < 1.0}
            weights = {key: weight * others.get(key, 1.0) for key, weight in weights.items()}
            if goal and goal_vector is not None:  # seed 004 §3.4: what serves the current task ranks higher
                weights = {key: weight * value for (key, weight), value in
                           zip(weights.items(), self._goal_weights(found, goal, goal_vector), strict=True)}
            with one_thread():  # small products: BLAS threads would only spin (ebbing.recall.blas)
                out = score_candidates(found, query, query_vector, words, self.background(), scoring,
                                       retention=weights.__getitem__)
            for s in out:  # shown in the hit's parts, so `explain` and the inspector can say why it ranks lower
                if s.key in others:
                    s.parts["another_person"] = others[s.key]
            return out

        every = score(found)
        if include_cold or (include_cold is None and self._live_is_weak(every, limit)):
            # The archive's nominees are scored among themselves (keyword rarity within them, as the live
            # ones are within theirs) and then compete with the live hits on one relevance scale.
            archived = []
            for record, seq, record_words, row in self._cold_candidates(scope, filters, query_vector, words, wanted):
                if _expired(row, now):
                    continue
                cold[seq] = record
                assert record.embedding is not None
                archived.append(Candidate(seq, record.text, record_words, record.embedding, row))
            if archived:
                found += archived
                every = sorted(every + score(archived), key=lambda s: (-s.score, -s.parts["cosine"], s.key))
        scored = [s for s in every if s.parts["relevance"] >= floor]
        if not scored and not history and ordering.corroborated_relevance <= floor:
            # nothing clears the floor: two weakly relevant statements of one attribute may answer together
            weak = [s for s in every if s.parts["relevance"] >= ordering.corroborated_relevance]
            scored = succession.corroborated(weak[:ordering.corroborated_considered], {c.key: c for c in found},
                                             self.background(), ordering,
                                             succession.Sameness(self.sameness, self.space))
        with one_thread():
            if not history:  # the newer of two competing answers first (ebbing.recall.succession)
                scored = succession.order(scored, {c.key: c for c in found}, query, self.background(),
                                          ordering, below=[s for s in every if s.parts["relevance"] < floor],
                                          sameness=succession.Sameness(self.sameness, self.space))
        scored = scored[:limit]
        stale = {c.key for c in found if c.stale}
        by_key = {**self.store.fetch([s.key for s in scored if s.key not in cold]),
                  **{s.key: dataclasses.replace(cold[s.key]) for s in scored if s.key in cold}}  # cache's own
        hits = [Hit(by_key[s.key], s.score, {**s.parts, "stale": float(s.key in stale)})
                for s in scored if s.key in by_key]
        if not history and stale:  # a retired record never ranks above its successor
            hits = self._successors_first(hits)[:limit]
        return hits

    def _candidates(self, scope: Scope, words: list[str], vector: np.ndarray, wanted: int,
                    filters: dict[str, Any] | None) -> list[Candidate]:
        """The `wanted` best of each index, as candidates: gathered by the store where it can (one statement on a
        database server, both indexes side by side in a large SQLite scope), else one index after the other."""
        if isinstance(self.store, GathersCandidates):
            return self.store.search_candidates(scope, words, vector, wanted, filters)
        keys = dict.fromkeys(self.store.vector_search(scope, vector, wanted, filters))
        keys.update(dict.fromkeys(self.store.keyword_search(scope, words, wanted, filters)))
        return self.store.candidates(list(keys))

    def same_attribute(self, older: MemoryRecord, newer: MemoryRecord) -> float:
        """P(the two are one attribute), as the write path's judge reads a pair (ebbing.judgement.sameness)."""
        vectors = [r.embedding if r.embedding is not None else self.embedder.embed([untagged(r.text)])[0]
                   for r in (older, newer)]
        z = float(self.background().pairs(np.stack(vectors), np.array([is_cjk(older.text),
                                                                       is_cjk(newer.text)]))[0, 1])
        signals = sameness.signal_vector(older.text, newer.text, z, older.kind, newer.kind)
        return float(self.sameness.probabilities(vectors[0], vectors[1], signals, self.space)[0])

    def _successors_first(self, hits: list[Hit]) -> list[Hit]:
        retired = [h.record.id for h in hits if h.parts.get("stale")]
        if not retired:
            return hits
        step: dict[str, str] = {}
        frontier = retired
        for _ in range(8):  # follow a chain of changes to its current value
            rows = [r for r in self.store.facts_of(self.tenant, frontier) if r.superseded_by]
            news = {r.memory_id: str(r.superseded_by) for r in sorted(rows, key=lambda r: r.valid_to or 0.0)}
            step.update(news)
            frontier = [i for i in news.values() if i not in step]
            if not frontier:
                break

        def current(memory_id: str) -> str:
            seen = set()
            while memory_id in step and memory_id not in seen:
                seen.add(memory_id)
                memory_id = step[memory_id]
            return memory_id

        successor = {i: current(i) for i in retired if current(i) != i}
        present = {h.record.id for h in hits}
        found = {i: r for i in set(successor.values()) - present if (r := self.store.get(self.tenant, i))}
        return succession.successors_first(hits, successor, found)

    def _goal_weights(self, found: list[Candidate], goal: str, vector: np.ndarray) -> list[float]:
        if not found:
            return []
        vectors = np.stack([c.vector for c in found]).astype(np.float32)
        z = self.background().z(vector, is_cjk(goal), vectors, np.array([is_cjk(c.text) for c in found]))
        low, high = self.config.vector_z_low, self.config.vector_z_high
        return [0.5 + 0.5 * float(np.clip((value - low) / (high - low), 0, 1)) for value in z]

    def _retention_weights(self, found: list[Candidate], now: float) -> dict[int, float]:
        """Ranking weight per candidate: (1 - w) + w * retention, w = `SearchConfig.retention_weight`."""
        if not found:
            return {}
        scores = self.composite.score(RecordBatch.from_rows([c.retention for c in found]), now)
        w = self.config.retention_weight
        return {c.key: (1.0 - w) + w * float(score) for c, score in zip(found, scores, strict=True)}

    def _live_is_weak(self, scored: list[Scored], limit: int) -> bool:
        """Deep recall's trigger: fewer than `limit` live hits reach `SearchConfig.deep_recall_relevance`."""
        strong = self.config.deep_recall_relevance
        return sum(1 for s in scored if s.parts["relevance"] >= strong) < limit

    def _cold_candidates(self, scope: Scope, filters: dict[str, Any] | None, vector: np.ndarray, words: list[str],
                         wanted: int) -> list[tuple[MemoryRecord, int, list[str], tuple[Any, ...]]]:
        """The scope's archived records nearest the query or sharing its terms (`ColdIndex`), with their terms."""
        version = self.store.cold_version(self.tenant, scope.user_id)
        if version[0] == 0:
            return []

        def keep(record: MemoryRecord) -> bool:
            return ((scope.agent_id is None or record.agent_id == scope.agent_id)
                    and (scope.session_id is None or record.session_id == scope.session_id)
                    and (not filters or matches(record, filters)))

        narrowed = scope.agent_id is not None or scope.session_id is not None or bool(filters)
        return self.cold.nominate(
            (self.tenant, scope.user_id), version, lambda: self.store.cold_files(self.tenant, scope.user_id),
            lambda ids: self.store.cold(self.tenant, ids), vector, words, wanted, keep if narrowed else None)
