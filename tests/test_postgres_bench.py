"""`--backend postgres` of the store and sweep benchmarks: tiny runs, both stores side by side, real numbers."""

from __future__ import annotations

from ebbing.bench import postgres, side_by_side

from .pg import Server


def test_store_benchmark_prints_both_backends(pg_server: Server) -> None:
    both = side_by_side.compare_store(records=300, queries=10, url=pg_server.uri(), progress=False, dimensions=32)
    assert both["sqlite"]["backend"] == "sqlite" and both["postgres"]["backend"] == "postgres"
    for result in both.values():
        assert result["records"] == 300 and result["add_records_per_s"] > 0 and result["search_ms"]["p99"] > 0
        assert result["target_found"] >= 0.9 and result["disk_mb"] > 0
    assert side_by_side.render_store(both).row_count == 8


def test_sweep_benchmark_runs_workers_on_identical_copies(pg_server: Server) -> None:
    result = postgres.sweep_run(records=2000, moving=0.2, seed=1, url=pg_server.uri(), workers=(1, 2))
    runs = result["runs"]
    assert result["dry_run"]["evaluated"] == 2000 and result["dry_run"]["moving"] > 0
    for run in runs.values():  # every worker count makes exactly the dry run's moves, and loses nothing
        assert run["transitions"] == result["dry_run"]["transitions"] and run["seconds"] > 0
        assert run["check"]["consistent"] and run["check"]["records_moved_twice"] == 0
