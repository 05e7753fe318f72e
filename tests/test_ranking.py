"""How relevance and retention combine in the ranking: rare query terms weigh more than common ones, and a
faded memory that answers the question still outranks a fresh one that only shares its words."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from ebbing import InvalidInput, Memory, SearchConfig
from ebbing.recall.search import _keyword_scores
from ebbing.store.base import Candidate
from ebbing.text.terms import query_terms, terms

from .conftest import T0


def _candidates(texts: list[str]) -> list[Candidate]:
    return [Candidate(i, t, terms(t), np.zeros(4, dtype=np.float32)) for i, t in enumerate(texts)]


def test_a_rare_query_term_weighs_more_than_one_every_candidate_holds() -> None:
    texts = ["Gina: thanks so much", "Gina: see you soon", "Gina: that sounds fun",
             "I finally opened the dance studio downtown"]
    scores = _keyword_scores(_candidates(texts), query_terms("What did Gina say about the dance studio?"))
    # terms: gina, say, danc, studio; the plain share of terms held would be 2/4 against 1/4
    assert scores[3] > 0.5 and max(scores[:3]) < 0.2, scores
    assert np.all((scores >= 0) & (scores <= 1))


def test_without_query_terms_no_candidate_gets_keyword_credit() -> None:
    assert _keyword_scores(_candidates(["anything at all"]), []).tolist() == [0.0]


def test_a_faded_memory_that_answers_outranks_a_fresh_one_that_does_not(smart: Memory) -> None:
    old = smart.add("Jon lost his job as a banker and opened a dance studio", user_id="u", at=T0).records[0]
    for n in range(40):
        smart.add(f"Jon: the weather on day {n} was fine, thanks for asking", user_id="u",
                  at=T0 + timedelta(days=60, minutes=n))
    hits = smart.search("Why did Jon open a dance studio?", user_id="u", at=T0 + timedelta(days=61),
                        count_use=False)
    assert hits and hits[0].record.id == old.id
    assert hits[0].parts["retention"] < 1.0  # it has faded, and still comes first


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"retention_weight": 1.5}, "retention_weight"),
    ({"retention_weight": -0.1}, "retention_weight"),
    ({"rank_z_high": 5.0}, "rank_z_high"),
])
def test_bad_ranking_settings_are_refused(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(InvalidInput, match=field):
        SearchConfig(**kwargs)  # type: ignore[arg-type]
