"""The `ebbing` command: a thin layer over `Memory`. Each command parses, calls one method, prints.

Where the store lives: `--db PATH`, else `$EBBING_HOME/ebbing.db`, else `~/.ebbing/ebbing.db`.
Errors print one line on stderr and exit non-zero (2 bad input, 3 not found, 4 read-only store, 1 anything else).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Column, Table

from ebbing.bench.serve import bench_serve
from ebbing.clock import to_epoch
from ebbing.errors import EbbingError, InvalidInput, NotFound, ReadOnly
from ebbing.eval.cli import eval_app
from ebbing.extras import installed, require
from ebbing.memory import Memory
from ebbing.model import Event, Hit, MemoryRecord
from ebbing.retention.base import RecordBatch
from ebbing.retention.config import DAY
from ebbing.retention.curve import kind_curves, retention_curve
from ebbing.retention.plot import plot_kinds, plot_record
from ebbing.server.cli import keys_app, serve, worker
from ebbing.settings import from_command, global_flag, set_global_flags

app = typer.Typer(help="Long-term memory for AI agents that forgets the way people do.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
bench_app = typer.Typer(help="Benchmarks. Bare `ebbing bench` runs the 14-day agent benchmark; the subcommands "
                        "measure the store and the sweep against a baseline in the same run.",
                        invoke_without_command=True)
app.add_typer(bench_app, name="bench")
app.add_typer(eval_app, name="eval")
app.command("serve")(serve)
app.command("worker")(worker)
app.add_typer(keys_app, name="keys")
review_app = typer.Typer(help="Newer values held back because their source ranks below the current value's: bare "
                         "`ebbing review` lists them; `accept` or `reject` decides one.", invoke_without_command=True)
app.add_typer(review_app, name="review")
bench_app.command("serve")(bench_serve)

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
AtOpt = Annotated[str | None, typer.Option("--at", help="When this happens (ISO-8601 or epoch seconds).")]
UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="The user the memory belongs to.")]
IdArg = Annotated[str, typer.Argument(help="The memory's id.")]


@app.callback()
def _options(
    db: Annotated[str | None, typer.Option("--db", help="SQLite file or postgresql:// URL (default EBBING_DB, "
                                           "else $EBBING_HOME/ebbing.db).")] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Tenant whose memories to use (default "
                                               "EBBING_TENANT, else `default`).")] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="Open the store for reading only (also automatic "
                                            "when the file is not writable).")] = False,
) -> None:
    # Where every command (and the server and MCP commands, through `ebbing.settings`) finds them.
    set_global_flags(db=db, tenant=tenant, read_only=read_only)


@contextmanager
def _memory() -> Iterator[Memory]:
    # Configuration comes from the settings (flags, environment, config.toml), at the edge, never inside the library.
    mem = from_command().memory("cli", read_only=bool(global_flag("read_only")))
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
    expires: Annotated[str | None, typer.Option("--expires", help="When it ends (ISO-8601 or epoch seconds): "
                                                "hidden from search after it, moved by the next sweep.")] = None,
    source: Annotated[str | None, typer.Option("--source", help="Who said it: user (default), tool, agent, import "
                                               "or a name in EBBING_SOURCES.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Remember a piece of text."""
    # A memory without an owner is found by nobody's search; a default owner is a choice made once.
    user = user or from_command().get("user") or None
    if user is None:
        raise InvalidInput("--user", "is required for add (or set EBBING_USER to a default user)")
    with _memory() as mem:
        result = mem.add(text, user_id=user, agent_id=agent, session_id=session, kind=kind,
                         importance=importance, pinned=pin, priority=priority,
                         metadata=_parse_json(metadata, "metadata"), at=at, expires_at=expires, source=source)
    if as_json:
        _print_json(result.to_dict())
    elif result.forget is not None:  # a request to forget: nothing was stored
        done = result.forget
        for record in done.forgotten:
            out.print(f"{'purged' if done.purged else 'forgot'} {record.id}  {record.text[:70]}", markup=False,
                      highlight=False)
        for hit in done.candidates:
            out.print(f"which one? {hit.record.id}  {hit.record.text[:70]}", markup=False, highlight=False)
        if not done.forgotten and not done.candidates:
            out.print("not stored (a request to forget)" if done.kind == "this" else "nothing to forget")
    else:
        for record in result.records:
            out.print(f"{record.id}  [dim]{record.kind.value} {record.priority.value} "
                      f"importance={record.importance}{' pinned' if record.pinned else ''}[/]")
        for event in result.events:
            if event.type == "review":
                out.print(f"held for review {event.data['review']}: {event.reason}", markup=False, highlight=False)


@review_app.callback()
def review_list(
    ctx: typer.Context,
    user: UserOpt = None,
    status: Annotated[str, typer.Option("--status", help="pending, accepted, rejected or any.")] = "pending",
    limit: Annotated[int, typer.Option("--limit", help="At most this many.")] = 100,
    as_json: JsonOpt = False,
) -> None:
    """List the review queue, oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    with _memory() as mem:
        reviews = mem.reviews(user_id=user, status=None if status == "any" else status, limit=limit)
    if as_json:
        _print_json([r.to_dict() for r in reviews])
        return
    if not reviews:
        out.print(f"no {status} reviews" if status != "any" else "no reviews")
    for r in reviews:
        decided = f" by {r.decided_by} {r.decided_at:%Y-%m-%d}" if r.decided_at else ""
        out.print(f"{r.id}  {r.status}{decided}  user={r.user_id}  {r.created_at:%Y-%m-%d}\n"
                  f"  current  ({r.incumbent_source}) {r.incumbent}: {r.current[:90]}\n"
                  f"  proposed ({r.source}) {r.memory_id}: {r.proposed[:90]}", markup=False, highlight=False)


def _decide(review_id: str, accept: bool, note: str, at: str | None, as_json: bool) -> None:
    with _memory() as mem:
        decided = (mem.accept_review if accept else mem.reject_review)(review_id, note=note, at=at)
    _print_json(decided.to_dict()) if as_json else out.print(
        f"{decided.id}: {decided.status}" + (" (the proposed record is in the trash, restorable)" if not accept else
                                              f" ({decided.memory_id} replaces {decided.incumbent})"),
        markup=False, highlight=False)


NoteOpt = Annotated[str, typer.Option("--note", help="Why (kept in the audit log, secrets redacted).")]


@review_app.command("accept")
def review_accept(review_id: Annotated[str, typer.Argument(help="The review's id.")], note: NoteOpt = "",
                  at: AtOpt = None, as_json: JsonOpt = False) -> None:
    """The held value replaces the current one; the timeline shows the change."""
    _decide(review_id, True, note, at, as_json)


@review_app.command("reject")
def review_reject(review_id: Annotated[str, typer.Argument(help="The review's id.")], note: NoteOpt = "",
                  at: AtOpt = None, as_json: JsonOpt = False) -> None:
    """The current value stays; the held statement goes to the trash (restorable until purged)."""
    _decide(review_id, False, note, at, as_json)


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
    expires: Annotated[str | None, typer.Option("--expires", help="A new end of life (ISO-8601 or epoch "
                                                "seconds), or never.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Correct a memory in place; it keeps its id and history."""
    with _memory() as mem:
        record = mem.update(memory_id, text, kind=kind, importance=importance, priority=priority,
                            metadata=_parse_json(metadata, "metadata"), at=at, expires_at=expires)
    _print_json(record.to_dict()) if as_json else _show_record(record)


@app.command()
def pin(memory_id: IdArg, at: AtOpt = None, as_json: JsonOpt = False) -> None:
    """Pin a memory: it is never forgotten."""
    with _memory() as mem:
        record = mem.pin(memory_id, at=at)
    _print_json(record.to_dict()) if as_json else out.print(f"pinned {record.id}")


@app.command()
def feedback(
    memory_id: IdArg,
    useful: Annotated[bool, typer.Option("--useful/--not-useful", help="Whether the memory helped.")],
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Say whether a memory helped: useful reinforces it like a recall, not useful lets it fade sooner."""
    with _memory() as mem:
        record = mem.feedback(memory_id, useful, at=at)
    _print_json(record.to_dict()) if as_json else out.print(
        f"{record.id}: {'useful' if useful else 'not useful'} (uses {record.access_count}, importance "
        f"{record.importance:.2f}, {record.tier.value})", markup=False, highlight=False)


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
    out.print(f"imported {report.imported}" + (f", {report.present} already present" if report.present else ""))
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
        # An export holds every memory in clear text: only its owner may read it (0600, like the store).
        handle = stack.enter_context(os.fdopen(os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                                               encoding="utf-8")) if output else sys.stdout
        for row in mem.export(user_id=user, embeddings=embeddings):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


# -- forgetting ----------------------------------------------------------------------------------------

YesOpt = Annotated[bool, typer.Option("--yes", help="Confirm: this erases for good.")]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="Write a PNG plot here.", dir_okay=False)]
SHOWN_CHANGES = 20  # a human-readable sweep lists this many changes; --json lists them all
PLOT_MIN_DAYS = 30  # an explain plot spans at least this long from creation
PLOT_MARGIN = 0.1  # and runs this fraction of its span past the projected move


def _require_yes(yes: bool) -> None:
    if not yes:
        err.print("error: purge erases for good; add --yes", markup=False, highlight=False)
        raise typer.Exit(2)


def _id_column() -> Column:
    return Column("id", no_wrap=True, min_width=26)  # ids are never cut short, whatever the width


def _seconds(timestamp: str) -> str:
    """An ISO-8601 time to the second, for people."""
    return datetime.fromisoformat(timestamp).isoformat(timespec="seconds")


def _minutes(timestamp: str) -> str:
    """An ISO-8601 time as a short UTC date and time, for narrow tables."""
    return datetime.fromisoformat(timestamp).astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _show_tier(verb: str, record: MemoryRecord, as_json: bool) -> None:
    if as_json:
        _print_json(record.to_dict())
    else:
        flags = "".join(f" {name}" for name in ("pinned", "held") if getattr(record, name))
        out.print(f"{verb} {record.id}  tier {record.tier.value}{flags}", highlight=False)


@app.command()
def sweep(
    at: AtOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would move; change nothing.")] = False,
    user: UserOpt = None,
    spread: Annotated[bool, typer.Option("--spread", help="Only the records whose slot in the sweep period "
                                         "came due since the last spread sweep.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Score every memory and move each down to the tier its retention earns; purge trash past its grace."""
    with _memory() as mem:
        report = mem.sweep(at=at, dry_run=dry_run, user_id=user, spread=spread)
    if as_json:
        _print_json(report.to_dict())
        return
    summary = report.to_dict()
    out.print(f"{'dry run: nothing changed; ' if report.dry_run else ''}swept at {summary['at']}: "
              f"evaluated {report.evaluated}, moved {len(report.changes)}, "
              f"purged {len(report.purged)}", highlight=False)
    if report.transitions:
        counts = Table("transition", "count")
        for transition, count in sorted(report.transitions.items()):
            counts.add_row(transition.replace("->", " -> "), str(count))
        out.print(counts)
    if report.changes:
        changes = Table(_id_column(), "from", "to", "score", "reason")
        for change in report.changes[:SHOWN_CHANGES]:
            changes.add_row(change.id, change.source.value, change.target.value, f"{change.score:.3f}",
                            change.reason)
        out.print(changes)
        if len(report.changes) > SHOWN_CHANGES:
            out.print(f"[dim]… and {len(report.changes) - SHOWN_CHANGES} more (--json lists them all)[/]")


@app.command()
def forget(
    memory_id: IdArg,
    reason: Annotated[str, typer.Option("--reason", help="Why, for the audit log.")] = "",
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Send a memory to the trash now; `ebbing restore` brings it back until it is purged."""
    with _memory() as mem:
        record = mem.forget(memory_id, at=at, reason=reason)
    _show_tier("forgot", record, as_json)


@app.command("forget-matching")
def forget_matching(
    query: Annotated[str, typer.Argument(help="What to forget, e.g. \"my daughter's school\" or \"Mark\".")],
    user: UserOpt = None,
    apply: Annotated[bool, typer.Option("--apply", help="Forget them (default: only list them).")] = False,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the memories a description names, as a user's "forget what I told you about ..." would; --apply
    sends them to the trash (purges them in privacy mode)."""
    with _memory() as mem:
        outcome = mem.forget_matching(query, user_id=user, dry_run=not apply, at=at)
    if as_json:
        _print_json(outcome.to_dict())
        return
    shown = outcome.forgotten if apply else [h.record for h in outcome.candidates]
    verb = ("purged" if outcome.purged else "forgot") if apply else "would forget"
    for record in shown:
        out.print(f"{verb} {record.id}  {record.text[:70]}", markup=False, highlight=False)
    if not shown:
        out.print("nothing matches")


@app.command()
def privacy(
    mode: Annotated[str | None, typer.Argument(help="on or off (default: show the setting).")] = None,
) -> None:
    """Privacy mode: what a user asks to forget is purged at once instead of going to the trash."""
    if mode not in (None, "on", "off"):
        err.print("error: mode: must be on or off")
        raise typer.Exit(2)
    with _memory() as mem:
        if mode is not None:
            mem.set_privacy(mode == "on")
        out.print(f"privacy mode {'on' if mem.privacy else 'off'}")


@app.command()
def restore(memory_id: IdArg, at: AtOpt = None, as_json: JsonOpt = False) -> None:
    """Bring a trashed or cold memory back to warm, with its id and history."""
    with _memory() as mem:
        record = mem.restore(memory_id, at=at)
    _show_tier("restored", record, as_json)


@app.command()
def purge(memory_id: IdArg, at: AtOpt = None, yes: YesOpt = False, as_json: JsonOpt = False) -> None:
    """Erase a memory for good (store, archive, trash); its audit events stay, without text. Needs --yes."""
    _require_yes(yes)
    with _memory() as mem:
        mem.purge(memory_id, at=at)
    _print_json({"purged": memory_id}) if as_json else out.print(f"purged {memory_id}", highlight=False)


@app.command("purge-user")
def purge_user(
    user_id: Annotated[str, typer.Argument(help="The user whose memories to erase.")],
    at: AtOpt = None,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Erase every memory of a user for good (right to erasure); held memories block it. Needs --yes."""
    _require_yes(yes)
    with _memory() as mem:
        count = mem.purge_user(user_id, at=at)
    if as_json:
        _print_json({"user_id": user_id, "purged": count})
    else:
        out.print(f"purged {count} memories of {user_id}", markup=False, highlight=False)


@app.command()
def hold(memory_id: IdArg, at: AtOpt = None, as_json: JsonOpt = False) -> None:
    """Put a memory under legal hold: it is never forgotten or purged until released."""
    with _memory() as mem:
        record = mem.hold(memory_id, at=at)
    _show_tier("held", record, as_json)


@app.command()
def release(memory_id: IdArg, at: AtOpt = None, as_json: JsonOpt = False) -> None:
    """Release a memory from legal hold: it fades like any other again."""
    with _memory() as mem:
        record = mem.release(memory_id, at=at)
    _show_tier("released", record, as_json)


@app.command("explain")
def explain_(memory_id: IdArg, at: AtOpt = None, plot: PlotOpt = None, as_json: JsonOpt = False) -> None:
    """Why a memory is in its tier: its retention by policy now, and when it moves down if never used.

    With --plot, also draw its retention curve from creation past that move, with its recalls marked.
    """
    if plot is not None:
        require("plots", "explain --plot")
    with _memory() as mem:
        explanation = mem.explain(memory_id, at=at)
        written = _plot_record(mem, memory_id, explanation, plot) if plot is not None else None
    if as_json:
        _print_json({**explanation, "plot": str(written)} if written else explanation)
        return
    _show_explanation(explanation)
    if written:
        out.print(f"wrote {written}", markup=False, highlight=False)


def _plot_record(mem: Memory, memory_id: str, explanation: dict[str, Any], path: Path) -> Path:
    """The record's retention from creation to past its next move, replaying the recalls in its history."""
    record = mem.get(memory_id)
    recalls = [e.at.timestamp() for e in mem.history(memory_id) if e.type == "access"]
    # The curve replays the recalls, so it starts from the record as it was before any of them.
    before = dataclasses.replace(record, access_count=max(0, record.access_count - len(recalls)),
                                 last_accessed_at=None if recalls else record.last_accessed_at)
    start = record.created_at.timestamp()
    now = to_epoch(explanation["at"])
    end = max(now, start + PLOT_MIN_DAYS * DAY)
    if explanation["projected"]:
        move = to_epoch(explanation["projected"]["at"])
        end = max(end, move + max(DAY, PLOT_MARGIN * (move - start)))
    times, scores = retention_curve(RecordBatch.from_records([before]), recalls, start, end, mem.retention)
    title = f"{record.id} ({record.kind.value}, now {record.tier.value})"
    return plot_record(times, scores, recalls, mem.retention, title, path)


def _show_explanation(e: dict[str, Any]) -> None:
    table = Table(show_header=False, box=None)
    table.add_row("[bold]id[/]", e["id"])
    table.add_row("[bold]at[/]", _seconds(e["at"]))
    table.add_row("[bold]score[/]", f"{e['score']:.4f} ({e['combine']})")
    table.add_row("[bold]tier[/]", f"{e['tier']} (by score: {e['tier_by_score']})")
    table.add_row("[bold]thresholds[/]", ", ".join(f"{tier} ≥ {value:g}" for tier, value in e["thresholds"].items()))
    for name, value in e["policies"].items():
        table.add_row(f"[bold]  {name}[/]", f"{value:.4f}")
    table.add_row("[bold]stability[/]", f"{e['stability_days']:g} days")
    table.add_row("[bold]idle[/]", f"{e['idle_days']:g} days (since {_seconds(e['referenced_at'])}, "
                  f"recalls: {e['access_count']})")
    projected = e["projected"]
    table.add_row("[bold]next move[/]", f"{_seconds(projected['at'])} -> {projected['tier']} if never used"
                  if projected else "none foreseen")
    table.add_row("[bold]exempt[/]", f"yes ({', '.join(e['why_exempt'])})" if e["exempt"] else "no")
    out.print(table, highlight=False)


@app.command()
def curves(
    plot: Annotated[Path, typer.Option("--plot", help="Write the PNG here.", dir_okay=False)],
    days: Annotated[float, typer.Option("--days", help="How many days to draw.", min=1)] = 120,
    as_json: JsonOpt = False,
) -> None:
    """Draw how forgetting works: one retention curve per kind (never recalled) over the tier thresholds."""
    require("plots", "ebbing curves")
    with _memory() as mem:
        written = plot_kinds(kind_curves(mem.retention, days=days), mem.retention, plot)
    _print_json({"plot": str(written)}) if as_json else out.print(f"wrote {written}", markup=False,
                                                                   highlight=False)


def forgetting_cause(entry: dict[str, Any]) -> str:
    """What made a forgetting happen: priority expiry, retention, manual (forget), a user's request or purge."""
    if entry["data"].get("policy") == "request":
        return "asked by the user"
    if entry["type"] == "purge":
        return "purge"
    if entry["data"].get("policy") == "manual":
        return "manual"
    return "priority expiry" if entry["reason"].startswith("priority ") else "retention"


@app.command()
def forgotten(
    since: Annotated[str | None, typer.Option("--since", help="From this time (ISO-8601 or epoch seconds).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Up to this time (default: now).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The forgetting report: what was sent to the trash or purged, when, and why (oldest first)."""
    with _memory() as mem:
        entries = mem.forgotten(since=since, until=until)
    if as_json:
        _print_json({"forgotten": entries})
        return
    table = Table(Column("when (UTC)", no_wrap=True), _id_column(), Column("move", no_wrap=True), "reason",
                  "preview")
    for entry in entries:
        move = f"{entry['data'].get('from', '?')} -> {'purged' if entry['type'] == 'purge' else entry['data']['to']}"
        table.add_row(_minutes(entry["at"]), entry["memory_id"], move, entry["reason"], entry["preview"] or "")
    if entries:
        out.print(table)
    causes = Counter(forgetting_cause(entry) for entry in entries)
    out.print(f"{len(entries)} forgotten" + (": " + ", ".join(f"{cause} {count}"
                                                               for cause, count in causes.most_common())
                                             if causes else ""), highlight=False)


@app.command()
def context(
    query: Annotated[str, typer.Argument(help="The question or task the context is for.")],
    user: UserOpt = None,
    budget: Annotated[int, typer.Option("--budget", help="At most this many tokens (XLM-R pieces).")] = 2000,
    goal: Annotated[str | None, typer.Option("--goal", help="The current task: re-weights by relevance.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Include this session's recent turns.")] = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Build the context an agent should see for a query, under a token budget."""
    with _memory() as mem:
        built = mem.context(query, user_id=user, budget_tokens=budget, goal=goal, session_id=session, at=at)
    if as_json:
        _print_json(built.to_dict())
        return
    out.print(built.text, markup=False, highlight=False)
    err.print(f"[dim]{built.tokens} of {built.budget} tokens, {len(built.records)} memories[/]")


@app.command()
def timeline(
    slot: Annotated[str, typer.Argument(help='The attribute ("超时阈值", "address") or a question about it.')],
    user: UserOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show how a fact changed over time: each value, when it held, and why it changed."""
    with _memory() as mem:
        entries = mem.timeline(user, slot)
    if as_json:
        _print_json({"timeline": entries})
        return
    if not entries:
        out.print("[dim]no such fact[/]")
        return
    table = Table("from", "until", "value", "reason", "id")
    for entry in entries:
        table.add_row(entry["valid_from"][:16], (entry["valid_to"] or "now")[:16], entry["value"],
                      entry["reason"] or "", entry["id"])
    out.print(table)


@app.command()
def reveal(memory_id: IdArg, as_json: JsonOpt = False) -> None:
    """Show a memory with its secrets decrypted (needs EBBING_SECRET_KEY; every reveal is audited)."""
    with _memory() as mem:
        text = mem.reveal(memory_id)
    _print_json({"id": memory_id, "text": text}) if as_json else out.print(text, markup=False, highlight=False)


@app.command()
def classify(text: Annotated[str, typer.Argument(help="A sentence to classify.")], as_json: JsonOpt = False) -> None:
    """Show how a sentence would be understood: kind, salience, priority, pin, secrets, facts."""
    from ebbing.ingest import understand

    result = understand.describe(text)
    if as_json:
        _print_json(result)
        return
    for key, value in result.items():
        out.print(f"[bold]{key}[/]: {json.dumps(value, ensure_ascii=False)}", highlight=False)


@app.command("classify-eval")
def classify_eval(
    data: Annotated[list[Path] | None, typer.Option("--data", help="Labelled JSONL files.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure the classifier on labelled sentences: accuracy and a confusion matrix."""
    from ebbing.bench import classify as bench

    result = bench.run(data) if data else bench.run()
    if as_json:
        _print_json(result)
        return
    for renderable in bench.render(result):
        out.print(renderable)


@bench_app.callback(invoke_without_command=True)
def bench_agent(
    ctx: typer.Context,
    lang: Annotated[str, typer.Option("--lang", help="en, zh or both.")] = "both",
    budget: Annotated[int, typer.Option("--budget", help="Context budget in tokens, the same for every strategy.")]
    = 8000,
    seed: Annotated[int, typer.Option("--seed", help="Scenario seed.")] = 0,
    turns: Annotated[int, typer.Option("--turns", help="Turns of the conversation.")] = 500,
    strategies: Annotated[str | None, typer.Option("--strategies", help="Comma list (default: all six).")] = None,
    output: Annotated[Path, typer.Option("--out", help="Where to write the JSON result.")] = Path("bench-results.json"),
    plot: Annotated[Path, typer.Option("--plot", help="Where to draw the figure (PNG).")] = Path("bench-results.png"),
    as_json: JsonOpt = False,
) -> None:
    """The 14-day agent benchmark: FIFO, Ebbinghaus, importance, consolidation, hybrid and Ebbing as shipped
    replay the same conversation; a table of key facts, preferences, timeline, task success, noise, context
    size and latency per strategy, the JSON result and a figure."""
    if ctx.invoked_subcommand is not None:
        return
    from ebbing.bench import agent
    from ebbing.bench.strategies import NAMES

    if lang not in ("en", "zh", "both"):
        raise InvalidInput("lang", "must be en, zh or both")
    names = [n.strip() for n in strategies.split(",") if n.strip()] if strategies is not None else list(NAMES)
    unknown = [n for n in names if n not in NAMES]
    if unknown or not names:
        raise InvalidInput("strategies", f"choose from {', '.join(NAMES)}")
    if budget < 1 or turns < 1:
        raise InvalidInput("budget" if budget < 1 else "turns", "must be >= 1")
    langs = list(agent.LANGS) if lang == "both" else [lang]
    result = agent.run(langs, names, budget, seed, turns, progress=not as_json)
    agent.write(result, output)
    drawn = installed("plots")  # the figure needs matplotlib; the table and the JSON do not
    if drawn:
        agent.plot(result, plot)
    if as_json:
        _print_json(result)
        return
    console = out if out.is_terminal else Console(soft_wrap=True, width=140)  # a log or a pipe: room for the table
    console.print(agent.render(result))
    console.print(f"{result['seconds']:.0f} s; wrote {output}" + (f" and {plot}" if drawn else
                  f"; no figure: pip install 'ebbing[plots]' to draw {plot}"), highlight=False)


@bench_app.command("scenario")
def bench_scenario(
    lang: Annotated[str, typer.Option("--lang", help="en or zh.")] = "en",
    seed: Annotated[int, typer.Option("--seed", help="Scenario seed.")] = 0,
    turns: Annotated[int, typer.Option("--turns", help="Turns of the conversation.")] = 500,
    dump: Annotated[Path | None, typer.Option("--dump", help="Write the scenario here as JSON Lines.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The benchmark conversation with its labels: turns, and the probes with the facts they need."""
    from ebbing.bench import scenario as scenarios

    if lang not in ("en", "zh"):
        raise InvalidInput("lang", "must be en or zh")
    made = scenarios.generate(lang=lang, seed=seed, turns=turns)
    if dump is not None:
        scenarios.dump(made, dump)
    summary = {"lang": made.lang, "seed": made.seed, "turns": len(made.turns), "probes": len(made.probes),
               "noise_turns": sum(t.noise for t in made.turns), "dump": str(dump) if dump else None}
    if as_json:
        _print_json(summary)
        return
    for key, value in summary.items():
        out.print(f"[bold]{key}[/]: {value}", highlight=False)


@bench_app.command("store")
def bench_store(
    records: Annotated[int, typer.Option("--records", help="How many synthetic records.")] = 100_000,
    queries: Annotated[int, typer.Option("--queries", help="How many searches to time.")] = 200,
    as_json: JsonOpt = False,
    backend: Annotated[str, typer.Option("--backend", help="sqlite, or postgres: both side by side.")] = "sqlite",
    url: Annotated[str | None, typer.Option("--url", help="PostgreSQL URL (default: a throwaway server).")] = None,
    users: Annotated[int, typer.Option("--users", help="Spread the records over this many users; searches are "
                                       "per user.")] = 1,
    direct: Annotated[bool, typer.Option("--direct", help="Write the records straight into the store (10,000 a "
                                         "transaction, no write-path judgements): big stores in minutes.")] = False,
) -> None:
    """Store throughput and search latency against numpy brute force over the same vectors."""
    from ebbing.bench import store as bench

    if backend == "postgres":  # docs/scaling.md
        require("postgres", "bench --backend postgres")
        from ebbing.bench import side_by_side

        both = side_by_side.compare_store(records, queries, url, not as_json, users=users, direct=direct)
        _print_json(both) if as_json else out.print(side_by_side.render_store(both))
        return
    if not 1 <= users <= records:
        raise InvalidInput("--users", "must be from 1 to --records")
    result = bench.run(records=records, queries=queries, progress=not as_json, users=users, direct=direct)
    _print_json(result) if as_json else out.print(bench.render(result))


@bench_app.command("add")
def bench_add(
    records: Annotated[int, typer.Option("--records", help="Records the user already has.")] = 10_000,
    adds: Annotated[int, typer.Option("--adds", help="Single adds to time (half near a stored record).")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """Single-add latency with the neighbour judgement against the same adds without it, in one run."""
    from ebbing.bench import add as bench

    result = bench.run(records=records, adds=adds)
    _print_json(result) if as_json else out.print(bench.render(result))


@bench_app.command("graph")
def bench_graph(
    sizes: Annotated[str, typer.Option("--sizes", help="One user's record counts, comma-separated.")] = "1000,100000",
    base: Annotated[int, typer.Option("--base", help="Real turns embedded to build the records around.")] = 1_500,
    queries: Annotated[int, typer.Option("--queries", help="Queries (other turns) to time.")] = 200,
    adds: Annotated[int, typer.Option("--adds", help="Single adds to time at each size.")] = 100,
    as_json: JsonOpt = False,
) -> None:
    """One user's vector search through the HNSW graph against the exact scan, on real turn embeddings."""
    from ebbing.bench import graph as bench

    try:
        chosen = [int(part) for part in sizes.split(",")]
    except ValueError:
        raise InvalidInput("sizes", f"{sizes!r}: use record counts such as 1000,100000") from None
    if not chosen or min(chosen) < 1:
        raise InvalidInput("sizes", "every size must be at least 1")
    result = bench.run(chosen, base=base, queries=queries, adds=adds)
    _print_json(result) if as_json else out.print(bench.render(result))


@bench_app.command("peers")
def bench_peers(
    sizes: Annotated[str, typer.Option("--sizes", help="Store sizes in records, comma-separated.")] = "10000,100000",
    users: Annotated[int, typer.Option("--users", help="Users the records are spread over.")] = 100,
    queries: Annotated[int, typer.Option("--queries", help="Per-user searches to time at each size.")] = 200,
    adds: Annotated[int, typer.Option("--adds", help="Single adds to time at each size.")] = 200,
    systems: Annotated[str, typer.Option("--systems", help="Which systems, comma-separated.")] =
        "ebbing,mem0,chroma,langgraph",
    budget: Annotated[float, typer.Option("--budget", help="Seconds of searches per system and size.")] = 60.0,
    as_json: JsonOpt = False,
) -> None:
    """Ebbing beside mem0 OSS, Chroma and LangGraph's store on the same texts and vectors, in one process."""
    from ebbing.bench import peers as bench
    from ebbing.bench.peer_systems import NAMES

    try:
        chosen = [int(part) for part in sizes.split(",")]
    except ValueError:
        raise InvalidInput("sizes", f"{sizes!r}: use record counts such as 10000,100000") from None
    if not chosen or min(chosen) < users or users < 1:
        raise InvalidInput("sizes", f"every size must be at least --users ({users}), and --users at least 1")
    names = [part.strip() for part in systems.split(",") if part.strip()]
    unknown = sorted(set(names) - set(NAMES))
    if unknown or "ebbing" not in names:
        raise InvalidInput("systems", f"choose among {', '.join(NAMES)}, ebbing included (the baseline of "
                                      f"every ratio); unknown: {', '.join(unknown) or 'none'}")
    if queries < 1 or adds < 1 or budget <= 0:
        raise InvalidInput("queries", "--queries and --adds must be at least 1 and --budget above 0")
    result = bench.run(chosen, users=users, queries=queries, adds=adds, systems=names, progress=not as_json,
                       budget=budget)
    if as_json:
        _print_json(result)
    else:
        for table in bench.render(result):
            out.print(table)


@bench_app.command("sweep")
def bench_sweep(
    records: Annotated[int, typer.Option("--records", help="How many synthetic records.")] = 1_000_000,
    moving: Annotated[float, typer.Option("--moving", help="Share of records designed to move.")] = 0.10,
    as_json: JsonOpt = False,
    backend: Annotated[str, typer.Option("--backend", help="sqlite, or postgres: both side by side.")] = "sqlite",
    url: Annotated[str | None, typer.Option("--url", help="PostgreSQL URL (default: a throwaway server).")] = None,
) -> None:
    """Sweep evaluation and end-to-end time against the seed's per-record loop, in the same run."""
    from ebbing.bench import sweep as bench

    if backend == "postgres":  # docs/scaling.md
        require("postgres", "bench --backend postgres")
        from ebbing.bench import side_by_side

        both = side_by_side.compare_sweep(records, moving, url, not as_json)
        _print_json(both) if as_json else out.print(side_by_side.render_sweep(both))
        return
    result = bench.run(records=records, moving=moving, progress=not as_json)
    _print_json(result) if as_json else out.print(bench.render(result))


EXIT_CODES = {InvalidInput: 2, NotFound: 3, ReadOnly: 4}


@app.command("mcp")
def mcp_(
    db: Annotated[str | None, typer.Option("--db", help="SQLite file or postgresql:// URL (default: the global "
                                           "--db, else EBBING_DB, else $EBBING_HOME/ebbing.db).")] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Tenant whose memories to serve "
                                               "(default: the global --tenant).")] = None,
    user: Annotated[str | None, typer.Option("--user", "-u", help="Serve this user only: tools default to it "
                                             "and refuse other users.")] = None,
) -> None:
    """Serve the memory to MCP clients (Claude Desktop, Claude Code, Cursor) over stdio.

    Tools: remember, recall, context, forget, forget_matching, pin, feedback, timeline, explain.

    Settings come from the same options, environment and config.toml as every command (`ebbing config`).
    """
    require("mcp", "ebbing mcp")
    from ebbing.mcp_server import serve_stdio  # the mcp package is imported only here

    serve_stdio(from_command(db=db, tenant=tenant), user)


@app.command("config")
def config_(as_json: JsonOpt = False) -> None:
    """The effective settings (secrets masked) and where each came from: flag, environment, config.toml or
    default."""
    rows = from_command().shown()
    if as_json:
        _print_json({row["name"]: {k: row[k] for k in ("value", "source", "env")} for row in rows})
        return
    table = Table("setting", "value", "source", "environment variable")
    for row in rows:
        table.add_row(row["name"], "" if row["value"] is None else str(row["value"]), row["source"], row["env"])
    out.print(table)


GLOBAL_OPTIONS = {"--db": True, "--tenant": True, "--read-only": False}  # option -> takes a value


def hoist_global_options(args: list[str], root: Any = None) -> list[str]:
    """`ebbing search x --db other.db` as `ebbing --db other.db search x`: global options may follow the
    command, unless the command has an option of that name itself (`keys create --tenant`, `serve --db`).
    `root` is the app's click command when the caller has built it already."""
    command: Any = typer.main.get_command(app) if root is None else root
    position = 0
    while position < len(args) and hasattr(command, "get_command"):
        word = args[position]
        if word.startswith("-"):
            position += 2 if GLOBAL_OPTIONS.get(word.split("=")[0]) and "=" not in word else 1
            continue
        found = command.get_command(typer.Context(command), word)
        if found is None:
            return args
        command, position = found, position + 1
    own = {opt for param in command.params for opt in getattr(param, "opts", [])}
    front, rest = args[:position], []
    index = position
    while index < len(args):
        word = args[index]
        name = word.split("=")[0]
        if word == "--":
            rest += args[index:]
            break
        if name in GLOBAL_OPTIONS and name not in own:
            takes = GLOBAL_OPTIONS[name] and "=" not in word
            front = [word, *args[index + 1 : index + 2], *front] if takes else [word, *front]
            index += 2 if takes else 1
            continue
        rest.append(word)
        index += 1
    return front + rest


def main() -> None:
    """Console entry point: run the app, turning library errors into one line and an exit code."""
    try:
        # The click command is built once (a tenth of a second for ~100 commands) for both the hoisting and
        # the run. Standalone: usage errors are reported and exit 2 inside.
        root = typer.main.get_command(app)
        root.main(args=hoist_global_options(sys.argv[1:], root), prog_name="ebbing")
    except EbbingError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(next((code for kind, code in EXIT_CODES.items() if isinstance(exc, kind)), 1))
