"""The 14-day agent scenario: a seeded, labelled 500-turn conversation in English or Chinese, with probes.

    generate(lang="en", seed=0) -> Scenario      dump(scenario, path) / load(path): JSONL

It follows the script of the seed article (../shared/seeds/000_*.txt): Maya Chen (林晓雨 in Chinese), backend
lead on the Atlas team, uses an assistant for two weeks on project Aurora. The same script, the same slots
and the same labels exist in both languages; only the words differ, so results compare across languages.

What happens, at the default size (turn numbers are the seed's where it gives them):

- Day 1 (turns 1-10): name and team; "my database connection timeout is 30s" (turn 3); a peanut allergy
  (a P0 personal fact); "my favourite language is Rust" and "keep answers concise" (turn 7); "the project is
  Aurora, the backend is written in Go, the database is PostgreSQL 15, we deploy to eu-west-1" (turn 9).
- Day 2 (11-40): dark mode; "for scripts I prefer Python" (turn 21), which refines the Rust preference and
  does not replace it (it is its own slot, `script_language`); turn 29 changes the timeout to 60s "because
  concurrency rose from 200 to 500" (the seed's turn 30 is the assistant's confirmation).
- Days 3-5 (41-150): dense technical discussion that refers back to the earlier facts, with decisions: Redis
  for the session cache, Conventional Commits, sharding the events table by tenant_id, NATS JetStream for
  jobs, goose for migrations, gRPC between internal services; the staging password (turn 137, `secret`, never
  needed by a probe); a recap of the week's decisions.
- Day 6: "Please remember this: my manager is Priya Raman" (`remember`). Day 8: the deploy region moves from
  eu-west-1 to eu-central-1 "because the launch customer needs its data to stay in Germany": the second
  timeline. Later days: occasional references back, and a launch checklist on day 14.
- Everything else is filler drawn from the seeded generator: technical questions with long answers (code
  review notes, plans, checklists), work notes, minor decisions and facts that no probe asks about,
  chit-chat, confirmations and temporary notes.

Labels. `kind` is the ground truth the classifier benchmark uses (fact, preference, decision, temporary,
episode); chit-chat and confirmations are "temporary", as in tests/data/classify-*.jsonl. `sets` names the
slots a turn states and their canonical values; `refers` (added) names the slots whose values a turn mentions
without setting them (tests check that a slot's surface forms appear in no other turn). `noise` marks turns
whose text no probe and no later work can use: chit-chat, confirmations, filler acknowledgements, and
temporary notes ("remind me in 10 minutes", "stepping out for lunch"). Temporary notes count as noise
because they stop mattering within minutes and no probe asks about them; the seed counts them the same
way (its Ebbinghaus strategy has less noise "because temporary information decays fast"). Minor decisions
and facts, work notes and technical answers are not noise: they are real work, just not probed.

Probes are asked right after turn `after` (the seed's 15, 200, 350 and 500, and 26 more). Their needs are the
slots' values current at that point, their stale facts the values those slots had before, and history probes
(`timeline_slot`, added) list every value of the slot oldest first with the surface forms of the stated
reason. Needs, stale values and timelines are derived from the turns as generated, never written by hand.

Sizes and time. Turns mostly alternate user/assistant (a few users send two messages in a row); each day is
one session "day-NN", starting at 2026-03-02 09:00 UTC, spread between roughly 09:00 and 18:30 with at
least 90 s between turns. A probe is asked one minute after its turn, before the next one. Other sizes
(`turns`, `days`) scale the script's positions proportionally and keep its order; the days of the script
are exact only at the default size. Everything random comes from `random.Random(seed)`.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

LANGS = ("en", "zh")
KINDS = ("fact", "preference", "decision", "temporary", "episode")
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
NOMINAL_TURNS = 500
NOMINAL_DAYS = 14
DAY_STARTS = (1, 11, 41, 79, 115, 151, 186, 226, 269, 311, 356, 393, 431, 467)  # first turn of each day, nominal
DENSE_DAYS = frozenset({3, 4, 5})  # the seed's "dense task period": more technical work, less chit-chat
WORKDAY_SECONDS = 9 * 3600 + 30 * 60  # 09:00 to 18:30
MIN_GAP = 90  # seconds between two turns; a probe comes 60 s after its turn
PROBE_DELAY = 60
SECRET_SLOT = "staging_db_password"


@dataclass(frozen=True)
class Turn:
    index: int  # 1-based position (1..len(turns))
    day: int  # 1..days
    at: str  # ISO-8601 UTC; strictly increasing
    role: str  # "user" or "assistant"
    text: str
    kind: str  # ground truth: "fact" | "preference" | "decision" | "temporary" | "episode"
    sets: dict[str, str]  # slot -> canonical value this turn sets; {} for most turns
    noise: bool  # chit-chat, confirmations, filler, temporary notes
    session: str  # "day-03": one session per day
    reason: str | None = None  # why a slot changed, when the turn states it
    secret: bool = False  # the turn carries a secret (the password turn)
    refers: tuple[str, ...] = ()  # slots whose values the turn mentions without setting them
    remember: bool = False  # the user explicitly asks to remember this ("please remember this")


@dataclass(frozen=True)
class Fact:
    slot: str  # e.g. "db_timeout", "favourite_language"
    category: str  # "key_fact" | "preference"
    any_of: tuple[str, ...]  # surface forms; present if any appears (see ebbing.bench.score for matching)
    value: str = ""  # the canonical value, as in Turn.sets


@dataclass(frozen=True)
class Probe:
    after: int  # asked right after turn `after` was added
    at: str  # ISO time, a minute after that turn
    question: str
    needs: tuple[Fact, ...]  # facts the answer needs (current values)
    stale: tuple[Fact, ...] = ()  # superseded values that must not be presented as current
    timeline: tuple[tuple[str, ...], ...] = ()  # history probes: the slot's values oldest first, as surface forms
    reason: tuple[str, ...] = ()  # surface forms of the stated reason that must appear with the timeline
    timeline_slot: str | None = None  # the slot whose history is asked


@dataclass(frozen=True)
class Scenario:
    lang: str
    seed: int
    turns: tuple[Turn, ...]
    probes: tuple[Probe, ...]


# --- slots: canonical values and surface forms ----------------------------------------------------------


@dataclass(frozen=True)
class _Value:
    en: str
    zh: str
    forms: tuple[str, ...]  # both languages' forms; a form of the other language simply never matches
    reason_en: str | None = None  # stated when a slot changes to this value
    reason_zh: str | None = None
    reason_forms: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Slot:
    category: str  # "key_fact" | "preference"
    values: tuple[_Value, ...]  # in the order the script sets them


def _seconds(n: int) -> tuple[str, ...]:
    return (f"{n}s", f"{n} s", f"{n} sec", f"{n} secs", f"{n} seconds", f"{n}-second", f"{n} 秒", f"{n}秒")


SLOTS: dict[str, _Slot] = {
    "user_name": _Slot("key_fact", (_Value("Maya Chen", "林晓雨", ("Maya", "林晓雨", "晓雨")),)),
    "team": _Slot("key_fact", (_Value("Atlas", "Atlas 组", ("Atlas",)),)),
    "db_timeout": _Slot("key_fact", (
        _Value("30s", "30s", _seconds(30)),
        _Value("60s", "60s", _seconds(60), "concurrency rose from 200 to 500", "并发从 200 涨到了 500", ("500",)),
    )),
    "allergy": _Slot("key_fact", (_Value("peanuts", "花生", ("peanut", "peanuts", "花生")),)),
    "project": _Slot("key_fact", (_Value("Aurora", "Aurora", ("Aurora",)),)),
    "backend_language": _Slot("key_fact", (_Value("Go", "Go", (
        "Go backend", "Go service", "Go services", "Go code", "Go-based", "in Go", "Golang", "backend is Go",
        "backend: Go", "Go 后端", "Go 服务", "Go 写", "Go 代码", "用 Go", "用Go", "后端是 Go", "后端：Go", "Go 语言",
    )),)),
    "database": _Slot("key_fact", (_Value("PostgreSQL 15", "PostgreSQL 15", (
        "PostgreSQL 15", "Postgres 15", "PostgreSQL15", "Postgres15", "PG 15", "PG15",
    )),)),
    "deploy_region": _Slot("key_fact", (
        _Value("eu-west-1", "eu-west-1", ("eu-west-1", "Ireland", "爱尔兰")),
        _Value("eu-central-1", "eu-central-1", ("eu-central-1", "Frankfurt", "法兰克福"),
               "the launch customer needs its data to stay in Germany", "首发客户要求数据留在德国境内",
               ("Germany", "German", "德国")),
    )),
    "manager": _Slot("key_fact", (_Value("Priya Raman", "周岚", ("Priya", "周岚")),)),
    "session_cache": _Slot("key_fact", (_Value("Redis", "Redis", ("Redis",)),)),
    "shard_key": _Slot("key_fact", (_Value("tenant_id", "tenant_id", (
        "tenant_id", "tenant ID", "by tenant", "按租户", "租户 ID", "租户ID",
    )),)),
    "job_queue": _Slot("key_fact", (_Value("NATS JetStream", "NATS JetStream", ("NATS", "JetStream")),)),
    "migration_tool": _Slot("key_fact", (_Value("goose", "goose", ("goose",)),)),
    "api_protocol": _Slot("key_fact", (_Value("gRPC", "gRPC", ("gRPC",)),)),
    "favourite_language": _Slot("preference", (_Value("Rust", "Rust", ("Rust",)),)),
    "script_language": _Slot("preference", (_Value("Python", "Python", ("Python",)),)),
    "answer_style": _Slot("preference", (_Value("concise", "简洁", (
        "concise", "bullet points", "bullet-point", "short answers", "简洁", "列要点", "简短",
    )),)),
    "editor_theme": _Slot("preference", (_Value("dark mode", "深色模式", (
        "dark mode", "dark theme", "深色", "暗色",
    )),)),
    "commit_style": _Slot("preference", (_Value("Conventional Commits", "约定式提交", (
        "Conventional Commits", "Conventional Commit", "约定式提交",
    )),)),
}


def fact(slot: str, value_index: int, lang: str) -> Fact:
    """The Fact for one value of a slot (the script's `value_index`-th), in `lang`."""
    spec = SLOTS[slot]
    value = spec.values[value_index]
    return Fact(slot, spec.category, value.forms, value.zh if lang == "zh" else value.en)


def _value_index(slot: str, value: str, lang: str) -> int:
    for i, v in enumerate(SLOTS[slot].values):
        if (v.zh if lang == "zh" else v.en) == value:
            return i
    raise KeyError(f"{slot}: unknown value {value!r}")


def facts_at(scenario: Scenario, after: int) -> tuple[Fact, ...]:
    """The facts current right after turn `after`: every slot set so far, its latest value; secrets left out."""
    current: dict[str, str] = {}
    for turn in scenario.turns[:after]:
        current.update({k: v for k, v in turn.sets.items() if k in SLOTS})
    return tuple(fact(slot, _value_index(slot, value, scenario.lang), scenario.lang)
                 for slot, value in current.items())


# --- the script --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Say:
    role: str
    kind: str
    text: str  # id of the text in the language blocks
    sets: tuple[tuple[str, int], ...] = ()  # (slot, value index)
    refers: tuple[str, ...] = ()
    secret: bool = False
    remember: bool = False


@dataclass(frozen=True)
class _Ask:
    after: int
    text: str  # id of the question in the language blocks
    needs: tuple[str, ...]
    history: str | None = None


def _u(kind: str, text: str, *, sets: tuple[tuple[str, int], ...] = (), refers: tuple[str, ...] = (),
       secret: bool = False, remember: bool = False) -> _Say:
    return _Say("user", kind, text, sets, refers, secret, remember)


def _a(kind: str, text: str, *, refers: tuple[str, ...] = ()) -> _Say:
    return _Say("assistant", kind, text, (), refers)


_BEATS: tuple[tuple[int, tuple[_Say, ...]], ...] = (
    (1, (_u("fact", "b01u", sets=(("user_name", 0), ("team", 0))),
         _a("episode", "b01a", refers=("user_name", "team")))),
    (3, (_u("fact", "b02u", sets=(("db_timeout", 0),)), _a("episode", "b02a", refers=("db_timeout",)))),
    (5, (_u("fact", "b03u", sets=(("allergy", 0),)), _a("episode", "b03a", refers=("allergy",)))),
    (7, (_u("preference", "b04u", sets=(("favourite_language", 0), ("answer_style", 0))),
         _a("episode", "b04a", refers=("favourite_language", "answer_style")))),
    (9, (_u("fact", "b05u", sets=(("project", 0), ("backend_language", 0), ("database", 0), ("deploy_region", 0))),
         _a("episode", "b05a", refers=("project", "backend_language", "database", "deploy_region", "db_timeout")))),
    (13, (_u("preference", "b06u", sets=(("editor_theme", 0),)), _a("episode", "b06a", refers=("editor_theme",)))),
    (21, (_u("preference", "b07u", sets=(("script_language", 0),), refers=("favourite_language",)),
          _a("episode", "b07a", refers=("favourite_language", "script_language")))),
    (29, (_u("fact", "b08u", sets=(("db_timeout", 1),)), _a("episode", "b08a", refers=("db_timeout",)))),
    (35, (_u("episode", "b09u", refers=("db_timeout", "backend_language")),
          _a("episode", "b09a", refers=("db_timeout",)))),
    (43, (_u("decision", "b10u", sets=(("session_cache", 0),), refers=("database",)),
          _a("episode", "b10a", refers=("session_cache", "database")))),
    (49, (_u("episode", "b11u", refers=("session_cache", "db_timeout")),
          _a("episode", "b11a", refers=("session_cache", "db_timeout")))),
    (55, (_u("preference", "b12u", sets=(("commit_style", 0),)), _a("episode", "b12a", refers=("commit_style",)))),
    (61, (_u("episode", "b13u", refers=("backend_language",)),
          _a("episode", "b13a", refers=("backend_language", "database")))),
    (67, (_u("episode", "b14u", refers=("db_timeout",)), _a("episode", "b14a", refers=("db_timeout",)))),
    (73, (_u("episode", "b15u"), _a("decision", "b15a", refers=("session_cache", "commit_style")))),
    (83, (_u("decision", "b16u", sets=(("shard_key", 0),)), _a("episode", "b16a", refers=("shard_key", "database")))),
    (91, (_u("episode", "b17u", refers=("shard_key", "session_cache")),
          _a("episode", "b17a", refers=("shard_key", "session_cache")))),
    (97, (_u("decision", "b18u", sets=(("job_queue", 0),)), _a("episode", "b18a", refers=("job_queue",)))),
    (103, (_u("episode", "b19u", refers=("job_queue", "database", "db_timeout")),
           _a("episode", "b19a", refers=("job_queue", "db_timeout")))),
    (111, (_u("episode", "b20u", refers=("favourite_language",)),
           _a("episode", "b20a", refers=("favourite_language", "backend_language")))),
    (117, (_u("decision", "b21u", sets=(("migration_tool", 0),), refers=("backend_language",)),
           _a("episode", "b21a", refers=("migration_tool",)))),
    (127, (_u("episode", "b22u", refers=("migration_tool", "shard_key")),
           _a("episode", "b22a", refers=("migration_tool",)))),
    (131, (_u("decision", "b23u", sets=(("api_protocol", 0),)), _a("episode", "b23a", refers=("api_protocol",)))),
    (137, (_u("fact", "b24u", secret=True), _a("episode", "b24a"))),
    (143, (_u("episode", "b25u"), _a("decision", "b25a", refers=(
        "db_timeout", "session_cache", "shard_key", "job_queue", "migration_tool", "api_protocol")))),
    (161, (_u("fact", "b26u", sets=(("manager", 0),), remember=True), _a("episode", "b26a", refers=("manager",)))),
    (175, (_u("episode", "b27u", refers=("script_language",)), _a("episode", "b27a", refers=("script_language",)))),
    (205, (_u("episode", "b28u", refers=("db_timeout",)), _a("episode", "b28a", refers=("db_timeout",)))),
    (251, (_u("fact", "b29u", sets=(("deploy_region", 1),), refers=("project",)),
           _a("episode", "b29a", refers=("deploy_region", "database", "session_cache", "job_queue")))),
    (257, (_u("episode", "b30u", refers=("deploy_region", "session_cache")), _a("episode", "b30a"))),
    (275, (_u("episode", "b31u", refers=("migration_tool", "deploy_region")), _a("episode", "b31a"))),
    (337, (_u("episode", "b32u", refers=("job_queue", "backend_language")),
           _a("episode", "b32a", refers=("job_queue",)))),
    (377, (_u("episode", "b33u", refers=("deploy_region", "db_timeout")), _a("episode", "b33a"))),
    (475, (_u("episode", "b34u"), _a("episode", "b34a", refers=(
        "deploy_region", "db_timeout", "session_cache", "job_queue")))),
)

_ASKS: tuple[_Ask, ...] = (
    _Ask(15, "p015", ("database",)),
    _Ask(24, "p024", ("db_timeout",)),
    _Ask(40, "p040", ("db_timeout",)),
    _Ask(60, "p060", ("backend_language", "database")),
    _Ask(80, "p080", ("script_language", "session_cache")),
    _Ask(100, "p100", ("session_cache",)),
    _Ask(110, "p110", ("favourite_language",)),
    _Ask(125, "p125", ("shard_key", "job_queue")),
    _Ask(150, "p150", ("database", "db_timeout")),
    _Ask(170, "p170", ("allergy",)),
    _Ask(200, "p200", ("db_timeout",), history="db_timeout"),
    _Ask(215, "p215", ("manager",)),
    _Ask(240, "p240", ("deploy_region",)),
    _Ask(265, "p265", ("deploy_region",)),
    _Ask(280, "p280", ("deploy_region",), history="deploy_region"),
    _Ask(290, "p290", ("answer_style",)),
    _Ask(310, "p310", ("user_name", "team")),
    _Ask(320, "p320", ("commit_style",)),
    _Ask(330, "p330", ("migration_tool", "api_protocol")),
    _Ask(350, "p350", ("backend_language", "favourite_language", "script_language")),
    _Ask(370, "p370", ("deploy_region", "database")),
    _Ask(390, "p390", ("db_timeout", "commit_style")),
    _Ask(400, "p400", ("deploy_region",), history="deploy_region"),
    _Ask(410, "p410", ("editor_theme", "answer_style")),
    _Ask(430, "p430", ("allergy",)),
    _Ask(450, "p450", ("db_timeout",), history="db_timeout"),
    _Ask(460, "p460", ("favourite_language", "script_language")),
    _Ask(470, "p470", ("backend_language", "database", "deploy_region", "session_cache", "job_queue")),
    _Ask(485, "p485", ("user_name", "team", "manager")),
    _Ask(500, "p500", ("db_timeout", "session_cache", "shard_key", "job_queue", "migration_tool", "api_protocol",
                       "deploy_region")),
)

# --- texts -----------------------------------------------------------------------------------------------
# The words live in data/ as UTF-8 text, apart from the code, so they can be read and edited as prose:
# script-LANG.txt holds the scripted turns and probe questions by id, filler-LANG.txt what the filler draws from.
# "== id" starts an entry; a line indented by two spaces continues the line above (joined with a space
# between Latin words, without one next to Chinese); other lines are separate lines of the text.
# Filler: "== topic.NAME": "?" a user question, ":" an opening line of the answer, "-" a point of the answer.
# "== pool.NAME": "-" items; "== pairs.NAME": "?" a user line followed by ":" its reply.
# Placeholders: {svc} a service, {m} minutes, {who} a person, {pw} the password. Filler never names a scripted
# slot's value.


def _data(name: str) -> str:
    """One file of data/. Only `_texts` reads them, and it is cached: each file is read once per process."""
    return (resources.files("ebbing.bench") / "data" / name).read_text(encoding="utf-8")


_MINUTES = (5, 10, 15, 20, 40, 45)
_FILLER_WEIGHTS = {  # unit kind -> weight, on ordinary days and on the dense days 3-5
    "work": (56, 74), "note": (8, 8), "minor": (8, 6), "minorfact": (3, 2),
    "chit": (10, 4), "confirm": (8, 5), "temporary": (8, 3),
}
_NOT_WORK = frozenset({"note", "minor", "followup"})
_SINGLE = 0.06  # chance that a user sends a lone message (a confirmation or chit-chat) with no reply


def _is_cjk(char: str) -> bool:
    return ord(char) >= 0x2E80


def _sections(block: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in block.splitlines():
        if not raw.strip():
            continue
        if raw.startswith("== "):
            current = out.setdefault(raw[3:].strip(), [])
        elif current is None:
            raise ValueError(f"text before the first section: {raw!r}")
        elif raw.startswith("  ") and current:
            line, more = current[-1], raw.strip()
            current[-1] = line + more if _is_cjk(line[-1]) or _is_cjk(more[0]) else f"{line} {more}"
        else:
            current.append(raw.rstrip())
    return out


@dataclass(frozen=True)
class _Topic:
    asks: tuple[str, ...]
    openers: tuple[str, ...]
    points: tuple[str, ...]


@dataclass(frozen=True)
class _Texts:
    script: dict[str, str]
    topics: dict[str, _Topic]
    pools: dict[str, tuple[str, ...]]
    pairs: tuple[tuple[str, str], ...]


def _items(lines: list[str], marker: str) -> tuple[str, ...]:
    return tuple(line[2:] for line in lines if line.startswith(marker + " "))


@functools.cache
def _texts(lang: str) -> _Texts:
    suffix = "zh" if lang == "zh" else "en"  # as before the move: any other value reads the English texts
    script = {key: "\n".join(lines) for key, lines in _sections(_data(f"script-{suffix}.txt")).items()}
    filler = _sections(_data(f"filler-{suffix}.txt"))
    topics = {name[6:]: _Topic(_items(lines, "?"), _items(lines, ":"), _items(lines, "-"))
              for name, lines in filler.items() if name.startswith("topic.")}
    pools = {name.removeprefix("pool."): _items(lines, "-") for name, lines in filler.items()
             if name.startswith("pool.") or name in ("svc", "who")}
    pair_lines = filler["pairs.temporary"]
    pairs = tuple((pair_lines[i][2:], pair_lines[i + 1][2:]) for i in range(0, len(pair_lines), 2))
    return _Texts(script, topics, pools, pairs)


# --- generation --------------------------------------------------------------------------------------------


@dataclass
class _Draft:
    role: str
    kind: str
    text: str
    noise: bool = False
    sets: dict[str, str] = field(default_factory=dict)
    refers: tuple[str, ...] = ()
    reason: str | None = None
    secret: bool = False
    remember: bool = False


class _Filler:
    """Draws the turns between scripted ones: seeded, never the same topic or line twice in a row."""

    def __init__(self, lang: str, rng: random.Random) -> None:
        self.texts = _texts(lang)
        self.rng = rng
        self.last: dict[str, str] = {}

    def _pick(self, key: str, options: tuple[str, ...]) -> str:
        choices = [o for o in options if o != self.last.get(key)] or list(options)
        choice = self.rng.choice(choices)
        self.last[key] = choice
        return choice

    def _answer(self, topic: _Topic, chosen: list[str], closing: bool, svc: str) -> str:
        text = self.rng.choice(topic.openers) + "\n" + "\n".join(f"- {p}" for p in chosen)
        if closing:
            text += "\n" + self._pick("closing", self.texts.pools["closing"])
        return text.replace("{svc}", svc)

    def single(self) -> list[_Draft]:
        if self.rng.random() < 0.5:
            return [_Draft("user", "temporary", self._pick("confirm", self.texts.pools["confirm"]), noise=True)]
        return [_Draft("user", "temporary", self._pick("chit", self.texts.pools["chit"]), noise=True)]

    def unit(self, dense: bool, room: int) -> list[_Draft]:
        kinds = list(_FILLER_WEIGHTS)
        kind = self.rng.choices(kinds, weights=[_FILLER_WEIGHTS[k][1 if dense else 0] for k in kinds])[0]
        pools, topics = self.texts.pools, self.texts.topics
        svc = self.rng.choice(pools["svc"])  # one service per exchange: the question and its answer agree
        if kind == "work":
            name = self._pick("topic", tuple(sorted(k for k in topics if k not in _NOT_WORK)))
            topic = topics[name]
            ask = self.rng.choice(topic.asks).replace("{svc}", svc)
            if self.rng.random() < 0.4:
                ask = f"{self._pick('leadin', pools['leadin'])} {ask}" if ask.isascii() else \
                    self._pick("leadin", pools["leadin"]) + ask
            points = self.rng.sample(topic.points, min(len(topic.points), 8))
            first = self.rng.randint(5, 7)
            turns = [_Draft("user", "episode", ask),
                     _Draft("assistant", "episode", self._answer(topic, points[:first], self.rng.random() < 0.6, svc))]
            if room >= 4 and self.rng.random() < 0.5 and len(points) > first + 1:  # a follow-up on the same topic
                more = topics["followup"]
                turns += [_Draft("user", "episode", self._pick("followup", more.asks)),
                          _Draft("assistant", "episode",
                                 self._answer(more, points[first:first + self.rng.randint(2, 4)], False, svc))]
            return turns
        if kind in ("note", "minor"):
            topic = topics[kind]
            said = self._pick(kind, topic.asks).replace("{svc}", svc)
            answer = self._answer(topic, self.rng.sample(topic.points, self.rng.randint(3, 4)), False, svc)
            return [_Draft("user", "episode" if kind == "note" else "decision", said),
                    _Draft("assistant", "episode", answer)]
        if kind == "minorfact":
            return [_Draft("user", "fact", self._pick("minorfact", pools["minorfact"])),
                    _Draft("assistant", "temporary", self._pick("ack", pools["ack"]), noise=True)]
        if kind == "temporary":
            ask, reply = self.rng.choice([p for p in self.texts.pairs if p[0] != self.last.get("temporary")])
            self.last["temporary"] = ask
            minutes, who = str(self.rng.choice(_MINUTES)), self.rng.choice(pools["who"])
            ask, reply = (t.replace("{m}", minutes).replace("{who}", who) for t in (ask, reply))
            return [_Draft("user", "temporary", ask, noise=True), _Draft("assistant", "temporary", reply, noise=True)]
        user_pool, reply_pool = ("chit", "chitreply") if kind == "chit" else ("confirm", "confirmreply")
        return [_Draft("user", "temporary", self._pick(user_pool, pools[user_pool]), noise=True),
                _Draft("assistant", "temporary", self._pick(reply_pool, pools[reply_pool]), noise=True)]

    def gap(self, length: int, dense: bool) -> list[_Draft]:
        out: list[_Draft] = []
        while len(out) < length:
            left = length - len(out)
            if left == 1 or self.rng.random() < _SINGLE:
                out.extend(self.single())
            else:
                out.extend(self.unit(dense, left))
        if len(out) > length:  # cannot happen: a unit never takes more than the room it is given
            raise AssertionError("filler overflow")
        return out


def _scale(position: int, turns: int) -> int:
    return max(1, round(position * turns / NOMINAL_TURNS))


def _nominal_day(index: int, turns: int) -> int:
    position = (index - 0.5) * NOMINAL_TURNS / turns + 0.5
    day = 1
    for number, first in enumerate(DAY_STARTS, 1):
        if position >= first:
            day = number
    return day


def _password(rng: random.Random) -> str:
    word = rng.choice(("harbor", "marble", "tundra", "cobalt", "juniper", "quartz", "saffron", "walnut"))
    return f"{rng.choice('BDFHKMQTXZ')}{rng.randint(2, 9)}{word}-{rng.randint(10, 99)}!"


def _times(rng: random.Random, day: int, roles: list[str]) -> list[datetime]:
    """Turn times of one day: a reply 90-240 s after its message, the other gaps spread over working hours."""
    start = START + timedelta(days=day - 1, minutes=rng.randint(0, 25))
    if not roles:
        return []
    gaps: list[int | None] = []
    weights: list[float] = []
    for previous, role in itertools.pairwise(roles):
        if previous == "user" and role == "assistant":
            gaps.append(rng.randint(MIN_GAP, 240))
        else:
            gaps.append(None)
            weights.append(rng.expovariate(1.0) + 0.3)
    fixed = sum(g for g in gaps if g is not None) + MIN_GAP * len(weights)
    free = WORKDAY_SECONDS - (start - START - timedelta(days=day - 1)).seconds - fixed
    if free < 0:
        raise ValueError(f"day {day}: {len(roles)} turns do not fit into one working day")
    spread = free * rng.uniform(0.75, 0.95)
    total = sum(weights) or 1.0
    out, now, w = [start], start, iter(weights)
    for gap in gaps:
        seconds = gap if gap is not None else MIN_GAP + int(spread * next(w) / total)
        now = now + timedelta(seconds=seconds)
        out.append(now)
    return out


def generate(lang: str = "en", seed: int = 0, turns: int = NOMINAL_TURNS, days: int = NOMINAL_DAYS) -> Scenario:
    """The scenario for `seed` in `lang` ("en" or "zh"): the same seed always gives the same scenario."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, not {lang!r}")
    if days < 1 or turns < days:
        raise ValueError("need at least one day and at least one turn per day")
    rng = random.Random(seed)
    texts = _texts(lang)
    password = _password(rng)

    # Place the script in order: beats at their scaled positions, pushed later when the ones before them need
    # the room, and probes after their scaled turn but never before a beat that came earlier in the script.
    events: list[tuple[int, int, Any]] = [(start, 0, says) for start, says in _BEATS]
    events += [(ask.after, 1, ask) for ask in _ASKS]
    slots: list[_Draft | None] = [None] * turns
    placed: list[tuple[int, _Ask]] = []
    cursor = 1
    for position, what, item in sorted(events, key=lambda e: (e[0], e[1])):
        if what == 0:
            begin = max(cursor, _scale(position, turns))
            if begin + len(item) - 1 > turns:
                raise ValueError(f"{turns} turns are too few for the script")
            for offset, say in enumerate(item):
                slots[begin - 1 + offset] = _scripted(say, texts, lang, password)
            cursor = begin + len(item)
        else:
            after = max(cursor - 1, _scale(position, turns))
            if after > turns:
                raise ValueError(f"{turns} turns are too few for the script")
            placed.append((after, item))
            cursor = max(cursor, after + 1)

    def actual_day(index: int) -> int:
        return 1 + (_nominal_day(index, turns) - 1) * days // NOMINAL_DAYS

    filler = _Filler(lang, rng)
    index = 1
    while index <= turns:  # fill each run of free positions within one day
        if slots[index - 1] is not None:
            index += 1
            continue
        end, day = index, actual_day(index)
        while end + 1 <= turns and slots[end] is None and actual_day(end + 1) == day:
            end += 1
        drafts = filler.gap(end - index + 1, _nominal_day(index, turns) in DENSE_DAYS)
        slots[index - 1:end] = drafts
        index = end + 1

    drafts_all = [d for d in slots if d is not None]
    if len(drafts_all) != turns:
        raise AssertionError("unfilled positions")
    by_day: dict[int, list[int]] = {}
    for i in range(1, turns + 1):
        by_day.setdefault(actual_day(i), []).append(i)
    times: dict[int, datetime] = {}
    for day in range(1, days + 1):
        indices = by_day.get(day, [])
        for i, at in zip(indices, _times(rng, day, [drafts_all[i - 1].role for i in indices]), strict=True):
            times[i] = at

    out_turns = tuple(
        Turn(index=i, day=actual_day(i), at=times[i].isoformat(), role=d.role, text=d.text, kind=d.kind,
             sets=dict(d.sets), noise=d.noise, session=f"day-{actual_day(i):02d}", reason=d.reason, secret=d.secret,
             refers=d.refers, remember=d.remember)
        for i, d in enumerate(drafts_all, 1))
    probes = tuple(_probe(after, ask, out_turns, texts, lang) for after, ask in placed)
    return Scenario(lang, seed, out_turns, probes)


def _scripted(say: _Say, texts: _Texts, lang: str, password: str) -> _Draft:
    text = texts.script[say.text].replace("{pw}", password)
    sets: dict[str, str] = {}
    reason = None
    for slot, i in say.sets:
        value = SLOTS[slot].values[i]
        sets[slot] = value.zh if lang == "zh" else value.en
        if i > 0 and value.reason_en:
            reason = value.reason_zh if lang == "zh" else value.reason_en
    if say.secret:
        sets[SECRET_SLOT] = password
    return _Draft(say.role, say.kind, text, sets=sets, refers=say.refers, reason=reason, secret=say.secret,
                  remember=say.remember)


def _probe(after: int, ask: _Ask, turns: tuple[Turn, ...], texts: _Texts, lang: str) -> Probe:
    history: dict[str, list[int]] = {}  # slot -> value indices in the order they were set
    for turn in turns[:after]:
        for slot, value in turn.sets.items():
            if slot in SLOTS:
                index = _value_index(slot, value, lang)
                if not history.get(slot) or history[slot][-1] != index:
                    history.setdefault(slot, []).append(index)
    needs, stale = [], []
    for slot in ask.needs:
        if slot not in history:
            raise AssertionError(f"probe after {after} needs {slot}, which was never stated")
        needs.append(fact(slot, history[slot][-1], lang))
        stale += [fact(slot, i, lang) for i in dict.fromkeys(history[slot][:-1]) if i != history[slot][-1]]
    timeline: tuple[tuple[str, ...], ...] = ()
    reason: tuple[str, ...] = ()
    if ask.history is not None:
        values = [SLOTS[ask.history].values[i] for i in history[ask.history]]
        timeline = tuple(v.forms for v in values)
        reason = tuple(dict.fromkeys(form for v in values for form in v.reason_forms))
    at = datetime.fromisoformat(turns[after - 1].at) + timedelta(seconds=PROBE_DELAY)
    return Probe(after, at.isoformat(), texts.script[ask.text], tuple(needs), tuple(stale), timeline, reason,
                 ask.history)


# --- JSONL -------------------------------------------------------------------------------------------------


def _records(scenario: Scenario) -> Iterator[dict[str, Any]]:
    yield {"type": "scenario", "lang": scenario.lang, "seed": scenario.seed, "turns": len(scenario.turns),
           "probes": len(scenario.probes)}
    probes: dict[int, list[Probe]] = {}
    for probe in scenario.probes:
        probes.setdefault(probe.after, []).append(probe)
    for turn in scenario.turns:
        record = asdict(turn)
        record["refers"] = list(turn.refers)
        yield {"type": "turn", **record}
        for probe in probes.get(turn.index, []):
            record = asdict(probe)
            record["needs"] = [asdict(f) | {"any_of": list(f.any_of)} for f in probe.needs]
            record["stale"] = [asdict(f) | {"any_of": list(f.any_of)} for f in probe.stale]
            record["timeline"] = [list(forms) for forms in probe.timeline]
            record["reason"] = list(probe.reason)
            yield {"type": "probe", **record}


def dump(scenario: Scenario, path: Path) -> None:
    """JSONL, one record a line: a "scenario" header, then every turn, each probe right after its turn."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as out:
        for record in _records(scenario):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _fact_from(record: dict[str, Any]) -> Fact:
    return Fact(record["slot"], record["category"], tuple(record["any_of"]), record.get("value", ""))


def load(path: Path) -> Scenario:
    """Reads what `dump` wrote."""
    lang, seed = "en", 0
    turns: list[Turn] = []
    probes: list[Probe] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        record = json.loads(line)
        kind = record.pop("type", None)
        if kind == "scenario":
            lang, seed = record["lang"], int(record["seed"])
        elif kind == "turn":
            record["refers"] = tuple(record.get("refers", ()))
            turns.append(Turn(**record))
        elif kind == "probe":
            probes.append(Probe(
                after=record["after"], at=record["at"], question=record["question"],
                needs=tuple(_fact_from(f) for f in record["needs"]),
                stale=tuple(_fact_from(f) for f in record.get("stale", ())),
                timeline=tuple(tuple(forms) for forms in record.get("timeline", ())),
                reason=tuple(record.get("reason", ())), timeline_slot=record.get("timeline_slot")))
        else:
            raise ValueError(f"{path}:{number}: unknown record type {kind!r}")
    return Scenario(lang, seed, tuple(turns), tuple(probes))
