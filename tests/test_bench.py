"""The store benchmark runs and reports measured numbers (small here; the real run is a command)."""

from __future__ import annotations

from ebbing.bench import store


def test_store_benchmark_measures_and_renders() -> None:
    result = store.run(records=1500, queries=20, dimensions=32, progress=False)
    assert result["records"] == 1500 and result["add_records_per_s"] > 0
    assert result["search_ms"]["p50"] > 0 and result["numpy_ms"]["p50"] > 0
    assert result["p50_ratio"] == round(result["search_ms"]["p50"] / result["numpy_ms"]["p50"], 2)
    assert result["target_found"] >= 0.9  # the query vectors sit near their target records
    assert "target_met" not in result  # the 100k target is only judged at 100k
    assert store.render(result).row_count >= 9


def test_store_benchmark_spreads_records_over_users() -> None:
    result = store.run(records=600, queries=12, dimensions=32, progress=False, users=6)
    assert result["users"] == 6 and result["target_found"] >= 0.9
    cold = result["cold_user_search_ms"]
    assert cold is not None and cold["p50"] > 0  # each queried user's first search, timed apart
    assert "over 6 users" in str(store.render(result).title)


def test_store_benchmark_can_write_straight_into_the_store() -> None:
    result = store.run(records=600, queries=12, dimensions=32, progress=False, users=6, direct=True)
    assert result["written"] == "directly into the store" and result["target_found"] >= 0.9
    assert any("straight into the store" in str(cell) for cell in store.render(result).columns[0].cells)
