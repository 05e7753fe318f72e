"""Hybrid retrieval: candidates from the vector and keyword indexes, scored on a calibrated scale.

Raw cosine scores do not mean "relevant": the default embedder rates unrelated pairs 0.74-0.87, and
Chinese pairs higher than English ones. So each query is also compared with a fixed set of unrelated
background passages (`background.py`), and a candidate's vector relevance is how far it stands above
what unrelated text gets, in standard deviations (see `Background`). Keyword relevance is the share of the query's
terms the record contains. The two are combined as independent evidence (noisy-or):

    relevance = 1 - (1 - vector) * (1 - keyword)

and a hit must reach `relevance_floor`, so an unrelated question returns nothing rather than the
least unrelated memory. The final score multiplies relevance by the record's retention weight.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ebbing.errors import InvalidInput
from ebbing.store.base import Candidate


@dataclass(frozen=True)
class SearchConfig:
    relevance_floor: float = 0.35
    candidates: int = 30  # taken from each index before fusion (at least `limit`)
    vector_z_low: float = 2.5  # standard deviations above the background where vector relevance starts
    vector_z_high: float = 6.5  # and where it is full
    rank_z_high: float = 9.0  # ranking tells candidates apart up to here (the floor stops at vector_z_high)
    access_window: float = 86_400.0  # a record's use counts at most once per this many seconds
    # How much retention weighs in the ranking: score = relevance * ((1 - w) + w * retention). Retention
    # breaks ties between equally relevant memories; it should not bury the one that answers the question.
    retention_weight: float = 0.2
    # Deep recall: with `include_cold` unset, a search also asks the archive unless `limit` live hits reach
    # this relevance (the calibrated 0..1 above). 1.0: whenever any of the top `limit` is short of certain.
    deep_recall_relevance: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.relevance_floor <= 1.0:
            raise InvalidInput("relevance_floor", "must be between 0 and 1")
        if self.candidates < 1:
            raise InvalidInput("candidates", "must be at least 1")
        if not self.vector_z_low < self.vector_z_high:
            raise InvalidInput("vector_z_low", "must be below vector_z_high")
        if not self.rank_z_high >= self.vector_z_high:
            raise InvalidInput("rank_z_high", "must be at least vector_z_high")
        if not 0.0 <= self.deep_recall_relevance <= 1.0:
            raise InvalidInput("deep_recall_relevance", "must be between 0 and 1")
        if not 0.0 <= self.retention_weight <= 1.0:
            raise InvalidInput("retention_weight", "must be between 0 and 1")
        if self.access_window < 0:
            raise InvalidInput("access_window", "must be >= 0 seconds")


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def is_cjk(text: str) -> bool:
    """Mostly written in Chinese (or Japanese, Korean) rather than a spaced script. Runs for every
    candidate of every search, so it looks at the opening only and counts cheaply."""
    sample = text[:120]
    han = len(_CJK.findall(sample))
    return han > 0 and han >= 0.3 * (len(sample) - sample.count(" "))


@dataclass(frozen=True)
class Background:
    """Unrelated passages, embedded as passages and as queries, split by script.

    A pair's vector evidence is how far its cosine stands above what unrelated text gets, measured
    from both ends and averaged: the query against background passages written in the candidate's
    script (the embedder rates same-language pairs higher), and the candidate against background
    queries in the query's script (short or generic memories are near everything: "hubs").
    """

    passages: dict[bool, np.ndarray]  # is_cjk -> background passage vectors
    queries: dict[bool, np.ndarray]  # is_cjk -> the same texts embedded as queries

    def z(self, query: np.ndarray, query_cjk: bool, candidates: np.ndarray, candidates_cjk: np.ndarray) -> np.ndarray:
        """Standard scores of each candidate's cosine with the query (candidates: one vector a row)."""
        cosine = candidates @ query
        mean, spread = np.empty(len(cosine)), np.empty(len(cosine))
        for cjk in (False, True):
            background = self.passages[cjk] @ query
            mean[candidates_cjk == cjk] = background.mean()
            spread[candidates_cjk == cjk] = max(float(background.std()), 1e-3)
        z_query = (cosine - mean) / spread
        around = candidates @ self.queries[query_cjk].T  # each candidate against unrelated queries
        z_candidate = (cosine - around.mean(axis=1)) / np.maximum(around.std(axis=1), 1e-3)
        out: np.ndarray = (z_query + z_candidate) / 2
        return out

    def pairs(self, vectors: np.ndarray, cjk: np.ndarray) -> np.ndarray:
        """`z` of every pair at once: entry (i, j) is `z(vectors[i], cjk[i], vectors[j:j+1], cjk[j:j+1])`.
        Four small products instead of one background scan per row."""
        cosine = vectors @ vectors.T
        n = len(vectors)
        mean, spread = np.empty((n, n)), np.empty((n, n))
        around_mean, around_spread = np.empty((n, n)), np.empty((n, n))
        for script in (False, True):
            passages = vectors @ self.passages[script].T  # each row as a query, against this script's passages
            mean[:, cjk == script] = passages.mean(axis=1)[:, None]
            spread[:, cjk == script] = np.maximum(passages.std(axis=1), 1e-3)[:, None]
            queries = vectors @ self.queries[script].T  # each row as a candidate, against this script's queries
            around_mean[cjk == script, :] = queries.mean(axis=1)[None, :]
            around_spread[cjk == script, :] = np.maximum(queries.std(axis=1), 1e-3)[None, :]
        out: np.ndarray = ((cosine - mean) / spread + (cosine - around_mean) / around_spread) / 2
        return out


@dataclass(frozen=True)
class Scored:
    key: int
    score: float
    parts: dict[str, float]


def _keyword_scores(candidates: Sequence[Candidate], query_terms: Sequence[str]) -> np.ndarray:
    """Share of the query's terms a candidate holds, each term weighted by how rare it is among the candidates
    (inverse document frequency): a speaker's name in every turn, or "the", tells little; "Vault" tells a lot.
    The candidates are what both indexes found near the query, so this weighs terms where it matters."""
    wanted = list(dict.fromkeys(query_terms))
    if not wanted:
        return np.zeros(len(candidates))
    holds = np.array([[term in held for term in wanted] for held in map(set, (c.terms for c in candidates))],
                     dtype=np.float64).reshape(len(candidates), len(wanted))  # candidate x query term
    frequency = holds.sum(axis=0)
    # A term no candidate holds weighs like the rarest one held: it separates nothing, but still says the
    # query asks for more than any candidate has.
    weight = np.log1p((len(candidates) + 1.0) / (np.maximum(frequency, 1.0) + 0.5))
    out: np.ndarray = holds @ weight / float(weight.sum())
    return out


def score_candidates(
    candidates: Sequence[Candidate],
    query: str,
    query_vector: np.ndarray,
    query_terms: Sequence[str],
    background: Background,
    config: SearchConfig,
    retention: Callable[[int], float],
) -> list[Scored]:
    """Score every candidate; return those at or above the floor, best first."""
    if not candidates:
        return []
    vectors = np.stack([c.vector for c in candidates]).astype(np.float32)
    cosine = vectors @ query_vector
    z = background.z(query_vector, is_cjk(query), vectors, np.array([is_cjk(c.text) for c in candidates]))
    vector = np.clip((z - config.vector_z_low) / (config.vector_z_high - config.vector_z_low), 0.0, 1.0)
    keyword = _keyword_scores(candidates, query_terms)
    relevance = 1.0 - (1.0 - vector) * (1.0 - keyword)
    # Ranking keeps apart what the floor treats alike: above vector_z_high many memories are "fully" relevant,
    # and the one that answers the question is usually the one standing furthest above the background.
    reach = (z - config.vector_z_low) / (config.rank_z_high - config.vector_z_low)
    ranked = 1.0 - (1.0 - np.clip(reach, 0.0, 1.0)) * (1.0 - keyword)
    out = []
    for i in np.flatnonzero(relevance >= config.relevance_floor):
        candidate = candidates[int(i)]
        weight = retention(candidate.key)
        parts = {"relevance": round(float(relevance[i]), 4), "vector": round(float(vector[i]), 4),
                 "cosine": round(float(cosine[i]), 4), "keyword": round(float(keyword[i]), 4),
                 "retention": round(weight, 4)}
        out.append(Scored(candidate.key, round(float(ranked[i]) * weight, 6), parts))
    out.sort(key=lambda s: (-s.score, -s.parts["cosine"], s.key))
    return out
