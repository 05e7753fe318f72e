"""`ebbing bench peers`: every system is driven for real (the `peers` group is part of the test environment), at a
small size; the real run is a command (docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ebbing.bench import peer_systems, peers
from ebbing.cli import app
from ebbing.embed.base import normalise
from ebbing.errors import InvalidInput


@pytest.mark.parametrize("name", peer_systems.NAMES)
def test_each_system_searches_only_the_users_own_records(tmp_path: Path, name: str) -> None:
    assert not peer_systems.missing(name), "scripts/setup installs the peers group"
    rng = np.random.default_rng(3)
    texts = [f"record {i} about topic {i % 7}" for i in range(40)]
    vectors = normalise(rng.standard_normal((40, 384)).astype(np.float32))
    lookup = dict(zip(texts, vectors, strict=True))
    owners = ["ann" if i % 2 else "bob" for i in range(40)]
    system = peer_systems.make(name, tmp_path / name, lookup, 384)
    try:
        system.fill(texts, owners, peers.START)
        lookup["one more of ann's"] = normalise(rng.standard_normal((1, 384)).astype(np.float32))[0]
        system.add("one more of ann's", "ann", peers.START + 60)
        assert system.count("ann") == 21 and system.count("bob") == 20
        # bob's record 0 asked for in ann's scope: never returned; asked in bob's: found first
        lookup["what about record 0"] = vectors[0]
        in_ann = system.search("what about record 0", vectors[0], "ann", 10, peers.START + 3600)
        assert texts[0] not in in_ann and set(in_ann) <= {t for t, o in zip(texts, owners, strict=True)
                                                         if o == "ann"} | {"one more of ann's"}
        in_bob = system.search("what about record 0", vectors[0], "bob", 10, peers.START + 3600)
        assert in_bob[0] == texts[0]
    finally:
        system.close()


def test_peers_benchmark_runs_every_system_and_reports_ratios() -> None:
    result = peers.run(sizes=(60, 120), users=3, queries=6, adds=3, base=12, progress=False, budget=30)
    assert result["missing"] == {}
    speed = result["speed"]
    assert list(speed["systems"]) == list(peer_systems.NAMES) and speed["sizes"] == [60, 120]
    for rows in speed["systems"].values():
        assert [row["records"] for row in rows] == [63, 126]  # each size's records and the timed adds so far
        for row in rows:
            assert row["searches"] == 6 and row["add_ms"]["p50"] > 0 and row["search_ms"]["p50"] > 0
            assert row["target_found"] >= 5 / 6  # the query sits next to its target record
    judged = result["judgement"]
    assert set(judged) == {*peer_systems.NAMES, peers.PRESET}
    for name in ("mem0", "chroma", "langgraph"):  # none of them folds a restatement into the record it repeats
        assert judged[name]["records_kept"] == {"en": [5, 5, 5], "zh": [5, 5, 5]}
    kept = judged["ebbing"]["records_kept"]
    assert all(1 <= k <= 5 for lang in kept.values() for k in lang) and sum(map(sum, kept.values())) < 30
    for outcome in judged.values():
        assert {len(v) for v in outcome["first_after_change"].values()} == {4}
        assert {x for v in outcome["first_after_change"].values() for x in v} <= {"new", "old", "other"}
    speed_table, judgement_table = peers.render(result)
    cells = [str(c) for column in speed_table.columns for c in column.cells]
    assert any(cell.endswith("x)") for cell in cells)  # every peer's figure carries its ratio to Ebbing's
    assert judgement_table.row_count == 4


def test_cli_names_the_field_of_a_bad_choice() -> None:
    outcome = CliRunner().invoke(app, ["bench", "peers", "--systems", "mem0,chroma"])
    assert isinstance(outcome.exception, InvalidInput) and outcome.exception.field == "systems"
    assert "ebbing included" in str(outcome.exception)
    outcome = CliRunner().invoke(app, ["bench", "peers", "--sizes", "10,abc"])
    assert isinstance(outcome.exception, InvalidInput) and outcome.exception.field == "sizes"
