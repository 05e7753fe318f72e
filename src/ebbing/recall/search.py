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
from ebbing.model import Hit, MemoryRecord
from ebbing.store.base import Candidate


@dataclass(frozen=True)
class SearchConfig:
    relevance_floor: float = 0.35
    candidates: int = 50  # taken from each index before fusion (at least `limit`)
    vector_z_low: float = 2.5  # standard deviations above the background where vector relevance starts
    vector_z_high: float = 6.5  # and where it is full
    access_window: float = 86_400.0  # a record's use counts at most once per this many seconds

    def __post_init__(self) -> None:
        if not 0.0 <= self.relevance_floor <= 1.0:
            raise InvalidInput("relevance_floor", "must be between 0 and 1")
        if self.candidates < 1:
            raise InvalidInput("candidates", "must be at least 1")
        if not self.vector_z_low < self.vector_z_high:
            raise InvalidInput("vector_z_low", "must be below vector_z_high")
        if self.access_window < 0:
            raise InvalidInput("access_window", "must be >= 0 seconds")


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def is_cjk(text: str) -> bool:
    """Mostly written in Chinese (or Japanese, Korean) rather than a spaced script."""
    letters = sum(1 for ch in text if ch.isalnum())
    return letters > 0 and len(_CJK.findall(text)) >= 0.3 * letters


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

    def z(self, query: np.ndarray, query_cjk: bool, candidate: np.ndarray, candidate_cjk: bool) -> float:
        cosine = float(candidate @ query)
        from_query = self.passages[candidate_cjk] @ query
        from_candidate = self.queries[query_cjk] @ candidate
        z_query = (cosine - float(from_query.mean())) / max(float(from_query.std()), 1e-3)
        z_candidate = (cosine - float(from_candidate.mean())) / max(float(from_candidate.std()), 1e-3)
        return (z_query + z_candidate) / 2


def score_candidates(
    candidates: Sequence[Candidate],
    query: str,
    query_vector: np.ndarray,
    query_terms: Sequence[str],
    background: Background,
    config: SearchConfig,
    retention: Callable[[MemoryRecord], float],
) -> list[Hit]:
    """Score every candidate; return those at or above the floor, best first."""
    wanted = set(query_terms)
    query_cjk = is_cjk(query)
    hits = []
    for candidate in candidates:
        cosine = float(candidate.vector @ query_vector)
        z = background.z(query_vector, query_cjk, candidate.vector, is_cjk(candidate.record.text))
        vector = float(np.clip((z - config.vector_z_low) / (config.vector_z_high - config.vector_z_low), 0, 1))
        keyword = len(wanted.intersection(candidate.terms)) / len(wanted) if wanted else 0.0
        relevance = 1.0 - (1.0 - vector) * (1.0 - keyword)
        if relevance < config.relevance_floor:
            continue
        weight = retention(candidate.record)
        parts = {"relevance": round(relevance, 4), "vector": round(vector, 4), "cosine": round(cosine, 4),
                 "keyword": round(keyword, 4), "retention": round(weight, 4)}
        hits.append(Hit(candidate.record, round(relevance * weight, 6), parts))
    hits.sort(key=lambda h: (-h.score, -h.parts["cosine"], h.record.id))
    return hits
