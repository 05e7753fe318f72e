"""The `ebbing` command: a thin layer over `Memory`. Each command parses, calls one method, prints.

Where the store lives: `--db PATH`, else `$EBBING_HOME/ebbing.db`, else `~/.ebbing/ebbing.db`.
Errors print one line on stderr and exit non-zero (2 bad input, 3 not found, 1 anything else).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ebbing.errors import EbbingError, InvalidInput, NotFound
from ebbing.memory import Memory
from ebbing.model import Event, Hit, MemoryRecord

app = typer.Typer(help="Long-term memory for AI agents that forgets the way people do.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
bench_app = typer.Typer(help="Benchmarks that measure Ebbing against a baseline in the same run.",
                        no_args_is_help=True)
app.add_typer(bench_app, name="bench")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
AtOpt = Annotated[str | None, typer.Option("--at", help="When this happens (ISO-8601 or epoch seconds).")]
UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="The user the memory belongs to.")]
IdArg = Annotated[str, typer.Argument(help="The memory's id.")]


class _State:
    db: Path | None = None
    tenant: str = "default"


state = _State()


@app.callback()
def _options(
    db: Annotated[Path | None, typer.Option("--db", help="SQLite file (default $EBBING_HOME/ebbing.db).")] = None,
    tenant: Annotated[str, typer.Option("--tenant", help="Tenant whose memories to use.")] = "default",
) -> None:
    state.db = db
    state.tenant = tenant


@contextmanager
def _memory() -> Iterator[Memory]:
    mem = Memory(state.db, tenant=state.tenant, actor="cli")
    try:
        yield mem
    finally:
        mem.close()


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _parse_json(text: str | None, field: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(field, f"must be JSON ({exc.msg})") from None


def _show_record(record: MemoryRecord) -> None:
    table = Table(show_header=False, box=None)
    for key, value in record.to_dict().items():
        table.add_row(f"[bold]{key}[/]", json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list)
                      else str(value))
    out.print(table)


def _show_events(events: list[Event]) -> None:
    table = Table("at", "event", "actor", "reason", "data")
    for e in events:
        table.add_row(e.at.isoformat(timespec="seconds"), e.type, e.actor, e.reason,
                      json.dumps(e.data, ensure_ascii=False))
    out.print(table)


@app.command()
def add(
    text: Annotated[str, typer.Argument(help="What to remember.")],
    user: UserOpt = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent id.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Session id.")] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="fact, preference, decision, temporary, "
                                             "episode or summary (default: inferred).")] = None,
    importance: Annotated[float | None, typer.Option("--importance", help="Salience 0..1.")] = None,
    pin: Annotated[bool, typer.Option("--pin", help="Never forget it.")] = False,
    priority: Annotated[str | None, typer.Option("--priority", help="P0, P1 or P2.")] = None,
    metadata: Annotated[str | None, typer.Option("--metadata", help="A JSON object.")] = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remember a piece of text."""
    with _memory() as mem:
        result = mem.add(text, user_id=user, agent_id=agent, session_id=session, kind=kind,
                         importance=importance, pinned=pin, priority=priority,
                         metadata=_parse_json(metadata, "metadata"), at=at)
    if as_json:
        _print_json(result.to_dict())
    else:
        for record in result.records:
            out.print(f"{record.id}  [dim]{record.kind.value} {record.priority.value} "
                      f"importance={record.importance}{' pinned' if record.pinned else ''}[/]")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: UserOpt = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's memories.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session's memories.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many hits.")] = 10,
    filters: Annotated[str | None, typer.Option("--filter", help='JSON filters, e.g. {"kind": "fact"}.')] = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find the memories most relevant to a query (a search counts as a use of what it returns)."""
    with _memory() as mem:
        hits = mem.search(query, user_id=user, agent_id=agent, session_id=session, limit=limit,
                          filters=_parse_json(filters, "filter"), at=at)
    if as_json:
        _print_json({"hits": [h.to_dict() for h in hits]})
        return
    _show_hits(hits)


def _show_hits(hits: list[Hit]) -> None:
    if not hits:
        out.print("[dim]no relevant memories[/]")
        return
    table = Table("score", "id", "kind", "text")
    for hit in hits:
        table.add_row(f"{hit.score:.3f}", hit.record.id, hit.record.kind.value, hit.record.text)
    out.print(table)


@app.command()
def get(memory_id: IdArg, as_json: JsonOpt = False) -> None:
    """Show one memory."""
    with _memory() as mem:
        record = mem.get(memory_id)
    _print_json(record.to_dict()) if as_json else _show_record(record)


@app.command()
def update(
    memory_id: IdArg,
    text: Annotated[str | None, typer.Option("--text", help="The corrected text.")] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="A new kind.")] = None,
    importance: Annotated[float | None, typer.Option("--importance", help="A new salience 0..1.")] = None,
    priority: Annotated[str | None, typer.Option("--priority", help="P0, P1 or P2.")] = None,
    metadata: Annotated[str | None, typer.Option("--metadata", help="A JSON object (replaces).")] = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Correct a memory in place; it keeps its id and history."""
    with _memory() as mem:
        record = mem.update(memory_id, text, kind=kind, importance=importance, priority=priority,
                            metadata=_parse_json(metadata, "metadata"), at=at)
    _print_json(record.to_dict()) if as_json else _show_record(record)


@app.command()
def pin(memory_id: IdArg, at: AtOpt = None, as_json: JsonOpt = False) -> None:
    """Pin a memory: it is never forgotten."""
    with _memory() as mem:
        record = mem.pin(memory_id, at=at)
    _print_json(record.to_dict()) if as_json else out.print(f"pinned {record.id}")


@app.command()
def unpin(memory_id: IdArg, at: AtOpt = None, as_json: JsonOpt = False) -> None:
    """Unpin a memory: it fades like any other again."""
    with _memory() as mem:
        record = mem.unpin(memory_id, at=at)
    _print_json(record.to_dict()) if as_json else out.print(f"unpinned {record.id}")


@app.command()
def history(memory_id: IdArg, as_json: JsonOpt = False) -> None:
    """Show every event of a memory, oldest first: its add, updates, pins and counted uses."""
    with _memory() as mem:
        events = mem.history(memory_id)
    _print_json({"events": [e.to_dict() for e in events]}) if as_json else _show_events(events)


@app.command()
def stats(user: UserOpt = None, as_json: JsonOpt = False) -> None:
    """Count memories by tier and kind."""
    with _memory() as mem:
        counts = mem.stats(user_id=user)
    if as_json:
        _print_json(counts)
        return
    out.print(f"total: {counts['total']}")
    for group in ("by_tier", "by_kind"):
        out.print(f"{group[3:]}: " + ", ".join(f"{k} {v}" for k, v in counts[group].items()))


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help='JSON Lines: {"text", "user_id", "at", ...} per line.',
                                         exists=True, dir_okay=False)],
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Import the good lines, "
                                               "report the bad ones.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import memories from a JSON Lines file: all lines are checked first; one bad line imports nothing."""
    with _memory() as mem, Progress(TextColumn("importing"), BarColumn(), MofNCompleteColumn(),
                                    TimeRemainingColumn(), console=err, disable=as_json) as progress:
        task = progress.add_task("import", total=None)
        report = mem.import_jsonl(file, skip_invalid=skip_invalid,
                                  on_progress=lambda done, total: progress.update(task, completed=done,
                                                                                  total=total))
    if as_json:
        _print_json(report.to_dict())
        return
    out.print(f"imported {report.imported}")
    for problem in report.skipped:
        err.print(f"skipped {problem}")


@app.command()
def export(
    user: UserOpt = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
    embeddings: Annotated[bool, typer.Option("--embeddings", help="Include the vectors.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Export memories as JSON Lines (one record per line; the output is JSON either way)."""
    with _memory() as mem, ExitStack() as stack:
        handle = stack.enter_context(open(output, "w", encoding="utf-8")) if output else sys.stdout
        for row in mem.export(user_id=user, embeddings=embeddings):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


@bench_app.command("store")
def bench_store(
    records: Annotated[int, typer.Option("--records", help="How many synthetic records.")] = 100_000,
    queries: Annotated[int, typer.Option("--queries", help="How many searches to time.")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """Store throughput and search latency against numpy brute force over the same vectors."""
    from ebbing.bench import store as bench

    result = bench.run(records=records, queries=queries, progress=not as_json)
    _print_json(result) if as_json else out.print(bench.render(result))


EXIT_CODES = {InvalidInput: 2, NotFound: 3}


def main() -> None:
    """Console entry point: run the app, turning library errors into one line and an exit code."""
    try:
        app()  # standalone: usage errors are reported and exit 2 inside
    except EbbingError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(next((code for kind, code in EXIT_CODES.items() if isinstance(exc, kind)), 1))
