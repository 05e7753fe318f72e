"""Both stores side by side: `ebbing bench store --backend postgres` and `ebbing bench sweep --backend postgres`
run the same benchmark on SQLite and on PostgreSQL in one run and print them next to each other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ebbing.bench import store, sweep
from ebbing.bench.postgres import sweep_run

# -- both backends, side by side ----------------------------------------------------------------------------

def compare_store(records: int, queries: int, url: str | None, progress: bool = True, seed: int = 0,
                  dimensions: int = 384, users: int = 1, direct: bool = False) -> dict[str, Any]:
    """The store benchmark on SQLite and on PostgreSQL, with the same records and queries (same seed)."""
    return {backend: store.run(records, queries, dimensions, seed, progress=progress, backend=backend, url=url,
                               users=users, direct=direct)
            for backend in ("sqlite", "postgres")}


def compare_sweep(records: int, moving: float, url: str | None, progress: bool = True, seed: int = 0,
                  workers: Sequence[int] = (1, 2, 4)) -> dict[str, Any]:
    """The sweep benchmark on SQLite (the full run) and on PostgreSQL (sweeps with 1, 2 and 4 workers)."""
    return {"sqlite": sweep.run(records, moving, seed, progress=progress),
            "postgres": sweep_run(records, moving, seed, url, workers)}


def _table(title: str, rows: list[tuple[str, str, str]]) -> Any:
    from rich.table import Table

    table = Table(title=title)
    for name, justify in (("measure", "left"), ("SQLite", "right"), ("PostgreSQL + pgvector", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*row)
    return table


def render_store(both: dict[str, Any]) -> Any:
    lite, pg = both["sqlite"], both["postgres"]

    def ms(result: dict[str, Any], key: str) -> str:
        return f"{result['search_ms'][key]:.2f} ms"

    rows = [
        ("add throughput (import_jsonl, 256/txn)" if lite.get("written", "").startswith("through")
         else "add throughput (straight into the store, 10,000/txn)", f"{lite['add_records_per_s']:,.0f} records/s",
         f"{pg['add_records_per_s']:,.0f} records/s"),
        ("add time", f"{lite['add_seconds']:.1f} s", f"{pg['add_seconds']:.1f} s"),
        ("first search (loads vectors / warms caches)", f"{lite['cold_start_ms']:.1f} ms",
         f"{pg['cold_start_ms']:.1f} ms"),
        ("search p50", ms(lite, "p50"), ms(pg, "p50")),
        ("search p99", ms(lite, "p99"), ms(pg, "p99")),
        ("search mean", ms(lite, "mean"), ms(pg, "mean")),
        ("queries whose target is in the top 10", f"{lite['target_found']:.1%}", f"{pg['target_found']:.1%}"),
        ("disk (database)", f"{lite['disk_mb']:.1f} MB", f"{pg['disk_mb']:.1f} MB"),
    ]
    return _table(f"ebbing store benchmark: {lite['records']:,} records x {lite['dimensions']} dims, "
                  f"{lite['queries']} queries, SQLite vs PostgreSQL", rows)


def render_sweep(both: dict[str, Any]) -> Any:
    lite, pg = both["sqlite"], both["postgres"]
    rows = [
        ("build (setup: bulk load, not the benchmark)", f"{lite['build_seconds']:.1f} s",
         f"{pg['build_seconds']:.1f} s"),
        ("dry run (score + decide)", f"{lite['dry_run']['seconds']:.2f} s", f"{pg['dry_run']['seconds']:.2f} s"),
        ("dry run: moving", f"{lite['dry_run']['moving']:,}", f"{pg['dry_run']['moving']:,}"),
    ]
    for count, run in pg["runs"].items():
        name = f"full sweep, {count} worker{'s' if count != '1' else ''}"
        sqlite_cell = f"{lite['sweep']['seconds']:.2f} s" if count == "1" else "one writer per file"
        rows.append((name, sqlite_cell, f"{run['seconds']:.2f} s"))
    first = next(iter(pg["runs"].values()))
    rows += [
        ("full sweep: moved", f"{lite['sweep']['moved']:,}", f"{first['moved']:,}"),
        ("after: consistent (nothing lost; archive = Parquet)", "yes" if lite["check"]["consistent"] else "NO",
         ", ".join(f"{n}: {'yes' if r['check']['consistent'] else 'NO'}" for n, r in pg["runs"].items())),
        ("records moved twice", "-", ", ".join(f"{n}: {r['check']['records_moved_twice']}"
                                               for n, r in pg["runs"].items())),
        ("disk (database before the sweep)", f"{lite['disk']['db_mb_before']:.0f} MB", f"{pg['db_mb']:.0f} MB"),
    ]
    return _table(f"ebbing sweep benchmark: {lite['records']:,} records, SQLite vs PostgreSQL", rows)
