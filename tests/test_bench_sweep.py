"""The sweep benchmark runs at a small size and reports measured, self-consistent numbers (the 1M run is a command)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ebbing.bench import sweep
from ebbing.retention.config import RetentionConfig

RECORDS = 20_000


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return sweep.run(records=RECORDS, moving=0.10, seed=1, progress=False)


def test_result_structure_and_timings(result: dict[str, Any]) -> None:
    assert result["records"] == RECORDS and result["moving_requested"] == 0.10
    for key in ("build_seconds", "load_seconds", "evaluate_seconds", "evaluate_paged_seconds", "baseline_seconds"):
        assert result[key] > 0, key
    assert result["dry_run"]["seconds"] > 0 and result["sweep"]["seconds"] > 0
    assert result["pages"] == -(-RECORDS // sweep.PAGE)
    assert result["peak_rss_mb"] >= result["peak_rss_after_build_mb"] > 0
    assert not result["baseline_extrapolated"] and result["baseline_measured_records"] == RECORDS
    assert sum(result["designed"].values()) == RECORDS
    assert sweep.render(result).row_count >= 20


def test_ratio_is_computed_from_the_two_timings(result: dict[str, Any]) -> None:
    assert result["speedup"] == round(result["baseline_seconds"] / result["evaluate_seconds"], 1)
    loop = result["full_loop"]
    assert loop["speedup"] == round(loop["seconds"] / result["evaluate_seconds"], 1)
    targets = result["targets"]
    assert targets["speedup >= 50x"] is (result["speedup"] >= 50)
    assert targets["sweep < 30 s at 1,000,000 records"] is None  # not judged at this size


def test_the_designed_share_moves(result: dict[str, Any]) -> None:
    dry, swept = result["dry_run"], result["sweep"]
    assert dry["evaluated"] == RECORDS
    assert abs(dry["moving_fraction"] - 0.10) <= 0.02
    assert dry["moving"] == result["designed_moving"]  # score bands sit clear of the thresholds
    assert swept["moved"] == dry["moving"]
    assert dry["transitions"] == swept["transitions"] == result["expected_transitions"]
    for move in ("hot->warm", "warm->cold", "hot->trash", "warm->trash"):
        assert swept["transitions"].get(move, 0) > 0, move


def test_the_full_loop_matches_the_engine(result: dict[str, Any]) -> None:
    assert result["full_loop"]["tier_agreement"] == 1.0  # the same formula, one record at a time


def test_store_is_consistent_after_the_sweep(result: dict[str, Any]) -> None:
    stats, check, moves = result["stats_after"], result["check"], result["sweep"]["transitions"]
    assert stats["total"] == RECORDS
    assert stats["by_tier"]["cold"] == check["archive_index"] == check["parquet_rows"]
    assert check["archive_index"] == sum(v for k, v in moves.items() if k.endswith("->cold"))
    assert stats["by_tier"]["trash"] == sum(v for k, v in moves.items() if k.endswith("->trash"))
    assert check["consistent"] and check["pending_intents"] == 0


def test_population_is_seeded_and_sized() -> None:
    config = RetentionConfig()
    a, counts = sweep.population(np.random.default_rng(7), 5_000, 0.2, config)
    b, _ = sweep.population(np.random.default_rng(7), 5_000, 0.2, config)
    assert len(a) == 5_000 == sum(counts.values())
    assert sum(c for g, c in zip(sweep.GROUPS, counts.values(), strict=True) if g.moves) == 1_000
    assert np.array_equal(a.created_at, b.created_at) and np.array_equal(a.kind, b.kind)
    assert np.all(np.diff(a.created_at) >= 0)  # inserted in creation order, like real adds
    used = ~np.isnan(a.last_accessed_at)
    assert np.all(a.created_at[used] <= a.last_accessed_at[used])
    assert np.all(a.created_at <= sweep.NOW - 2 * 86_400)  # nobody is inside the new-record protection


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        sweep.run(records=10, progress=False)
    with pytest.raises(ValueError):
        sweep.run(records=5_000, moving=0.9, progress=False)
