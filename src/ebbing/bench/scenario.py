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

# Texts. "== id" starts an entry; a line indented by two spaces continues the line above (joined with a space
# between Latin words, without one next to Chinese); other lines are separate lines of the text.
_SCRIPT_EN = """
== b01u
Morning! I'm Maya Chen, backend lead on the Atlas team. You'll be my assistant for the next couple of weeks,
  so let me set a few things straight first.
== b01a
Good morning, Maya, nice to meet you. I'll keep track of what you tell me about yourself, the Atlas team and
  the work, and I'll point it out when something new seems to conflict with something you said earlier. Tell
  me about the setup whenever you're ready: the project, the stack, and anything I should keep in mind when
  I answer.
== b02u
First thing: my database connection timeout is 30s.
== b02a
Noted: database connection timeout 30s. That is on the short side for anything that runs migrations or large
  batch reads, so if you see connection errors during deploys, that value is the first thing I'd look at. For
  normal request traffic it's a reasonable default.
== b03u
One personal thing, since you'll help with team stuff too: I'm allergic to peanuts. Keep that in mind
  whenever food is involved.
== b03a
Understood: peanut allergy. Whenever we plan lunches, offsites or team dinners I'll check menus and catering
  against it, and I'll call it out explicitly rather than assume a restaurant handles it.
== b04u
My favourite programming language is Rust, by the way. And please keep your answers concise: bullet points
  over long paragraphs.
== b04a
Got it: Rust is your favourite language, and you want concise answers with bullet points. I'll lead with the
  answer, keep explanations short and expand only when you ask.
== b05u
The project is called Aurora. The backend is written in Go, the database is PostgreSQL 15, and we deploy to
  eu-west-1.
== b05a
Here's the picture I have of Aurora so far:
- Backend: Go services
- Database: PostgreSQL 15
- Region: eu-west-1
- Connection timeout: 30s
That is a common, solid combination. Worth knowing early: both the standard database/sql pool and pgx work well
  with PostgreSQL 15, and a single region keeps backups and failover simple for now. If you have an
  architecture diagram or a list of services, share it and I'll keep it in mind when we discuss changes.
== b06u
Small thing: I use dark mode everywhere. If you ever make mockups or screenshots for me, dark theme please.
== b06a
Noted: dark mode for anything visual I prepare for you.
== b07u
I know I said Rust is my favourite, and it still is, but for scripts I prefer Python. Less ceremony for
  throwaway stuff.
== b07a
Makes sense, and it doesn't contradict the earlier preference: Rust stays your favourite language overall,
  while scripts, one-off automation and data fixes default to Python. If a script grows into a long-lived
  tool, I'll ask whether it should move.
== b08u
Change the database connection timeout to 60s, because concurrency rose from 200 to 500 after the partner
  launch and we keep seeing connection timeouts at peak.
== b08a
Done: the connection timeout goes from 30s to 60s. With concurrency at 500 instead of 200, a few related
  things are worth checking:
- Pool size: more concurrent requests wait for connections, so the pool may need to grow along with the
  timeout.
- Request deadlines: handlers should give up before the database does, or users wait for work nobody needs.
- Monitoring: track connection wait time, not only query time, to see whether 60s is enough at peak.
== b09u
Will the Go services pick up the new 60s timeout on their own, or do they need a restart?
== b09a
It depends on where the value is read. If the timeout is part of the DSN or read once at startup to build the
  pool, the services need a rolling restart to use 60s. If it's read from a config source for each new
  connection, existing connections keep the old setting until they're recycled and new ones use the new
  value. The safe path is a rolling restart right after the config change, then a look at the connection-wait
  metric to confirm the new value is active.
== b10u
Sessions are hitting PostgreSQL 15 on every request. We decided to use Redis for the session cache.
== b10a
Good call. A plan for moving sessions to Redis:
- Key sessions by a random session ID, store the serialised session with a TTL, and refresh the TTL on
  activity.
- Keep PostgreSQL 15 as the source of truth only for what must survive a cache flush, such as remember-me
  tokens.
- Roll out with a read-through phase: read Redis first, fall back to the database, then stop writing sessions
  to the database once the hit rate is stable.
- Decide upfront what happens when Redis is unavailable: fail closed and log users out, or fall back to the
  database path.
== b11u
What TTL should the Redis sessions get? And does the 60s database timeout matter for that?
== b11a
For the TTL, follow the product rule for idle logout: 30 minutes of inactivity with a sliding refresh is
  common, plus an absolute cap of a day or a week. The 60s database timeout is a separate concern: it bounds how
  long a request waits for a database connection, while the session TTL bounds how long a login lives. The only
  interaction is the fallback path. If Redis misses and the database is slow, a login check could wait up to
  60s, so give the fallback its own shorter deadline.
== b12u
For commit messages I like Conventional Commits: feat:, fix:, chore: and so on, with a short scope.
== b12a
Noted. When I draft commit messages I'll use Conventional Commits, for example "fix(sessions): refresh TTL on
  activity" or "feat(api): add cursor pagination", with a body that explains why rather than what.
== b13u
In the Go backend, should we use pgx's own pool or stick with database/sql?
== b13a
For a Go backend that only talks to PostgreSQL 15, I'd use pgxpool directly:
- It supports PostgreSQL-specific types (arrays, JSONB, COPY) without extra adapters.
- Its pool exposes acquire-time statistics, which is exactly what you need after raising the timeout.
- database/sql is the better choice only if you need to stay driver-agnostic or use a library that requires it.
The migration is mechanical: swap the pool constructor, then replace the query calls package by package.
== b14u
Should the HTTP request deadline be shorter than the 60s database timeout?
== b14a
Yes. The outer deadline should be the shortest, so a user-facing request gives up before the layers below it
  do. A typical chain: an HTTP deadline of about 10 to 15 seconds for interactive endpoints, the database
  connection timeout of 60s as a ceiling for background work, and query timeouts set per query. Pass the
  request context down, so that when the HTTP deadline fires the pending query is cancelled instead of holding
  a connection.
== b15u
Write down what we decided today so I can paste it into the team notes.
== b15a
Today's decisions:
- Session cache: Redis, with a sliding TTL and a read-through rollout.
- Database access in the backend: pgxpool instead of database/sql.
- Request deadlines: shorter than the database connection timeout, with context cancellation passed down.
- Commit messages: Conventional Commits with a scope.
== b16u
Decision: we'll shard the events table by tenant_id. The five biggest tenants already produce about 40% of
  the writes.
== b16a
Sharding by tenant_id fits that write pattern. Points to settle before implementation:
- Hot tenants: the largest five may each need a shard of their own, so plan for moving a tenant between
  shards from day one.
- Cross-tenant queries: reporting across tenants will need its own read path, such as a replica or a
  warehouse.
- Start with PostgreSQL 15 declarative partitioning on one cluster; it gives you the tenant_id routing logic
  before you add machines.
- Every query on the events table must carry the tenant_id, so add a lint rule or a repository wrapper that
  enforces it.
== b17u
Does sharding by tenant_id affect the Redis session keys?
== b17a
Not directly: sessions live in Redis, not in the sharded events table. It's still worth putting the
  tenant_id into the session value, so a request can go to the right shard without an extra lookup. Keep it
  out of the key itself unless you need to list or evict all sessions of one tenant; if you do, use a prefix
  like tenant:{id}:session:{sid} and remember that key scans are expensive.
== b18u
Let's use NATS JetStream for background jobs instead of polling the database for pending work.
== b18a
Agreed, polling would have hurt as the shards grow. With NATS JetStream:
- Use one stream per job family and a durable consumer per worker group, with explicit acks.
- Set a max-deliver limit and route poison messages to a dead-letter subject that you actually monitor.
- Make handlers idempotent: redelivery after an ack timeout is normal behaviour, not an error.
- Keep job payloads small: IDs and a version, not whole records.
== b19u
How should the NATS consumers talk to Postgres 15, given the 60s connection timeout?
== b19a
Give the workers their own small pool rather than sharing the API's, so a burst of jobs cannot starve user
  requests. The 60s connection timeout is fine as an upper bound for workers, but set the JetStream ack wait
  longer than the worst-case job duration including that wait; otherwise a job that is still waiting for a
  connection gets redelivered to another worker and runs twice.
== b20u
Honestly, I'm tempted to rewrite the ingest worker in Rust. Talk me out of it?
== b20a
I know Rust is your favourite, so here is the honest case against it for now: the rest of the backend is Go,
  the team reviews that code every day, and the worker's bottleneck is the database and the queue, not the
  CPU. A rewrite would add a second toolchain, a second set of libraries for the same infrastructure, and a bus
  factor of one. If profiling ever shows the worker is CPU-bound, a small Rust component behind a clear
  interface is a reasonable experiment.
== b21u
We decided on goose for schema migrations: plain SQL files, and it sits well with our Go code.
== b21a
goose is a good fit. Conventions that keep it painless:
- One migration per change, named with a timestamp, and never edit a migration after it has run anywhere
  shared.
- Write a down migration only when it is safe; for destructive changes, prefer a forward fix.
- Run migrations as a separate deploy step before the new code starts, with the app able to work on both
  schemas.
- Keep long data backfills out of migrations: run them as jobs so a deploy never waits on them.
== b22u
How do we run the goose migrations across the tenant_id partitions?
== b22a
With declarative partitioning on one cluster, a migration on the parent table reaches the partitions, so
  goose runs once as usual. Watch for operations that lock every partition at once, such as adding a column
  with a volatile default; split those into add-column, a backfill job, then set-default. Once tenants move to
  separate clusters, run goose per cluster from the deploy pipeline and record the applied version per
  cluster, so drift is visible.
== b23u
Internal services will talk gRPC from now on. The public API stays REST.
== b23a
Sensible split. To make gRPC between internal services go smoothly:
- Keep the .proto files in one shared repository, with a linter and breaking-change checks in CI.
- Set a deadline on every call and propagate it, the same way as for HTTP requests.
- Turn on health checking and client-side load balancing, or long-lived connections will pin traffic to old
  pods.
- Translate errors at the REST edge into stable public error codes instead of leaking gRPC status codes.
== b24u
The staging DB password is {pw}. I'll need it for the seed script later.
== b24a
Noted. I won't repeat it in summaries or notes. It would be safer in the secrets manager, with the seed script
  reading it from there, so it never ends up in shell history or in the repository.
== b25u
Recap the technical decisions of this week for my status update.
== b25a
This week's technical decisions:
- Database connection timeout raised from 30s to 60s, because concurrency rose from 200 to 500.
- Session cache moved to Redis.
- Events table sharded by tenant_id, starting with declarative partitioning.
- Background jobs on NATS JetStream instead of database polling.
- Schema migrations with goose.
- Internal service calls over gRPC; the public API stays REST.
== b26u
Please remember this: my manager is Priya Raman. Anything about the launch date goes to her first.
== b26a
Will do: Priya Raman is your manager, and launch-date questions go to her first. I'll suggest looping her in
  whenever a decision could move the launch.
== b27u
Write me a quick outline for a Python script that seeds staging with three test tenants.
== b27a
Outline for the seed script in Python:
1. Read connection settings from the environment, and the password from the secrets manager, never from the
  command line.
2. Open one connection and run everything in a transaction, so a failed run leaves nothing half-created.
3. Create the three tenants with fixed IDs and insert with ON CONFLICT DO NOTHING, so the script can run
  twice safely.
4. Add a few users and sample events per tenant, using a seeded random generator so runs are reproducible.
5. Print a summary of what was created and exit non-zero on any error.
== b28u
Load test done: peak traffic with the 60s timeout and the bigger pool, zero connection errors.
== b28a
Great result. To make it stick:
- Save the load-test profile and the numbers in the repository, so the next change can be compared against
  the same baseline.
- Keep an alert on connection wait time; if it creeps toward the 60s limit, the pool is too small again.
- Note the pool size next to the timeout in the config comments, since the two were tuned together.
== b29u
We're moving Aurora's deploy region from eu-west-1 to eu-central-1, because Nordwind, our launch customer,
  needs its data to stay in Germany.
== b29a
That's a bigger move than a config change. A migration plan for eu-central-1:
- Stand up the new environment first: the PostgreSQL 15 cluster, Redis, NATS JetStream and the services, all
  from the same infrastructure code.
- Replicate the database continuously from the old region, then cut over during a short write freeze.
- Lower the DNS TTL a day ahead, switch, and keep the old region read-only for a rollback window.
- Check data residency end to end: backups, logs and metrics must stay in Germany too, not only the primary
  database.
== b30u
After the move to eu-central-1, do we flush the Redis sessions or copy them over?
== b30a
Copying is rarely worth it. Sessions are short-lived and the cutover already includes a write freeze, so the
  simplest option is to announce it in advance and let users sign in again after the switch. If forced
  logouts are unacceptable for the launch customer, copy only the session keys during the freeze with a
  one-off dump and restore, keeping their TTLs.
== b31u
The dry run of the goose migrations against the new eu-central-1 cluster passed.
== b31a
Good. Before the real cutover, compare the schema dumps of both clusters, so nothing that was applied by hand
  in the old one is missing, and confirm that the migration version tables match. Then rehearse the rollback
  once, with the same runbook you will use on the day.
== b32u
Reviewing the NATS consumer code in the Go backend today. Anything specific to look for?
== b32a
A checklist for JetStream consumers:
- Acks happen after the work is committed, never before.
- Handlers check a processed-message key, so redeliveries are harmless.
- The consumer's ack wait is longer than the slowest realistic job.
- Shutdown drains in-flight messages instead of dropping them.
- Errors that can never succeed are terminated explicitly, not retried until the delivery limit.
== b33u
Connection wait time spiked for a few minutes in eu-central-1 this morning. Still within the 60s timeout, but
  close.
== b33a
Worth digging into before it turns into errors:
- Check whether the spike lines up with a burst of jobs; workers and API calls sharing a cluster compete for
  connections.
- Look at slow queries during the window: one long transaction holding locks can back up the whole pool.
- If a deploy was running, connection storms at startup are common; stagger the rollout or warm the pool
  gradually.
== b34u
Launch checklist time. What should I double-check?
== b34a
Launch checklist:
- Region: everything runs in eu-central-1, backups and logs included.
- Database: connection timeout 60s, pool size matching the load-test results.
- Sessions: Redis TTLs and the fallback path tested.
- Jobs: the NATS JetStream dead-letter subject is monitored and alerts.
- Rollback: the runbook rehearsed, with an owner named for each step.
- Communication: status page and support team briefed on the launch window.
== p015
Which database does Aurora use again?
== p024
What's my database connection timeout right now?
== p040
What timeout should the new connection pool use?
== p060
What is Aurora's backend written in, and which database does it run on?
== p080
I need a small script that clears expired sessions from the session cache. Which language should it be in,
  and which store does it talk to?
== p100
What did we pick for the session cache?
== p110
Which programming language do I like best?
== p125
How are we sharding the events table, and what runs our background jobs?
== p150
Set up the connection settings for the new reporting service: which database, and which timeout?
== p170
I'm ordering lunch for the team tomorrow. Is there anything I need to watch out for myself?
== p200
What did I set the timeout to before, and why did I change it?
== p215
Who should I talk to first about moving the launch date?
== p240
Which region do we deploy to?
== p265
Where does Aurora deploy now?
== p280
Has our deploy region changed? From where to where, and why?
== p290
How do I like my answers formatted?
== p310
For the intro email to the new hire: what's my name, and which team am I on?
== p320
Which commit message style do I use?
== p330
Which migration tool and which protocol between internal services did we settle on?
== p350
What language is Aurora written in? And which languages do I like?
== p370
Which region are we running in now, and which database runs there?
== p390
I'm committing the pool config. What timeout value goes in, and how should the commit message look?
== p400
For the data-residency audit: list our deploy regions in order, and why we changed.
== p410
Make me a mockup of the launch dashboard. Which of my preferences should it follow?
== p430
I'm booking the team dinner for Friday. Remind me what I can't eat.
== p450
How did the database timeout change over these two weeks, and why?
== p460
Remind me: what's my favourite language, and what do I like to write scripts in?
== p470
Summarise what Aurora runs on: language, database, region, cache and queue.
== p485
Fill in the header of the handover doc: my name, my team and my manager.
== p500
Summarise all the technical decisions I made over these 14 days.
"""

_SCRIPT_ZH = """
== b01u
早上好！我是林晓雨，在 Atlas 组做后端负责人。接下来两周你来当我的助手，先跟你交代几件事。
== b01a
早上好，晓雨，很高兴认识你。你告诉我的个人情况、Atlas 组的情况和手头的工作我都会记下来；
  如果新说的内容和之前的有冲突，我会提醒你。准备好了就跟我说说项目、技术栈，以及回答时需要注意的地方。
== b02u
先记一个配置：我的数据库连接超时阈值是 30s。
== b02a
记下了：数据库连接超时 30s。如果要跑迁移或者大批量读取，这个值偏短，部署时出现连接错误的话可以先从它查起；
  对普通的请求流量来说，这是个合理的默认值。
== b03u
说件私事，你以后也会帮忙处理团队的事：我对花生过敏，凡是涉及吃的都要记得这一点。
== b03a
明白，花生过敏。以后安排午餐、团建或聚餐时，我都会对照菜单和餐饮方案检查，并且会明确提出来，
  不会默认餐厅能处理好。
== b04u
顺便说一句，我最喜欢的编程语言是 Rust。另外回答请简洁一点，列要点就好，别写大段文字。
== b04a
好的：你最喜欢 Rust，回答要简洁、列要点。我会先给结论，解释尽量少，你追问时再展开。
== b05u
项目名叫 Aurora，后端用 Go 写，数据库是 PostgreSQL 15，部署在 eu-west-1。
== b05a
目前我对 Aurora 的了解：
- 后端：Go 服务
- 数据库：PostgreSQL 15
- 区域：eu-west-1
- 连接超时：30s
这是一套常见又可靠的组合。有几点值得早点知道：标准的 database/sql 连接池和 pgx 都能很好地配合 PostgreSQL 15；
  只有一个区域，意味着备份和故障切换暂时都比较简单。如果有架构图或服务清单，发给我，之后讨论改动时我会参考。
== b06u
小事一件：我所有工具都用深色模式。以后给我做原型图或者截图，请用深色主题。
== b06a
记住了，给你准备的可视化内容都用深色模式。
== b07u
我说过最喜欢 Rust，这个没变；不过写脚本我更喜欢用 Python，一次性的小工具没那么多讲究。
== b07a
有道理，这和之前的偏好并不冲突：总体上你最喜欢的仍然是 Rust，而脚本、一次性的自动化和数据修复默认用 Python。
  如果哪个脚本慢慢变成了长期维护的工具，我会问你要不要迁移。
== b08u
把数据库连接超时改成 60s，因为合作方上线后并发从 200 涨到了 500，高峰期一直有连接超时。
== b08a
已改：连接超时从 30s 调到 60s。并发从 200 到了 500，还有几处相关的地方值得检查：
- 连接池大小：并发请求变多，等连接的请求也多，连接池可能要跟着调大。
- 请求截止时间：处理函数应该比数据库更早放弃，否则用户在等一个没人需要的结果。
- 监控：除了查询耗时，还要看等待连接的时间，确认高峰期 60s 是否够用。
== b09u
Go 服务会自动读到新的 60s 超时吗？还是需要重启？
== b09a
取决于这个值在哪里读取。如果超时写在 DSN 里，或者启动时读一次用来建连接池，就需要滚动重启才能用上 60s；
  如果每次新建连接时从配置中心读取，已有连接会保持旧设置直到被回收，新连接才用新值。
  稳妥的做法是改完配置后立刻滚动重启，再看等待连接的指标，确认新值已经生效。
== b10u
每个请求都要去 PostgreSQL 15 查会话，压力很大。我们决定用 Redis 做会话缓存。
== b10a
这个决定不错。把会话迁到 Redis 的方案：
- 以随机会话 ID 作为键，序列化后的会话带 TTL 存入，用户活跃时刷新 TTL。
- PostgreSQL 15 只保存缓存清空后也必须保留的数据，比如“记住我”令牌。
- 分阶段上线：先读 Redis，未命中再查数据库；命中率稳定后再停止往数据库写会话。
- 提前决定 Redis 不可用时怎么办：直接让用户重新登录，还是退回数据库路径。
== b11u
Redis 里的会话 TTL 设多少合适？60s 的数据库超时对这个有影响吗？
== b11a
TTL 按产品对“闲置自动退出”的要求来定：常见做法是闲置 30 分钟过期、活跃时顺延，再加一个一天或一周的绝对上限。
  60s 的数据库超时是另一回事：它限制请求等数据库连接的时间，而会话 TTL 限制一次登录的有效期。
  两者唯一的交集是回退路径：Redis 未命中而数据库又慢时，一次登录校验可能要等 60s，
  所以回退路径要单独设一个更短的截止时间。
== b12u
提交信息我习惯用约定式提交：feat:、fix:、chore: 这些，再加一个短短的 scope。
== b12a
记下了。以后我起草提交信息都用约定式提交，例如“fix(sessions): 活跃时刷新 TTL”或“feat(api): 增加游标分页”，
  正文写清为什么改，而不是改了什么。
== b13u
Go 后端里，我们该用 pgx 自带的连接池，还是继续用 database/sql？
== b13a
对于只连 PostgreSQL 15 的 Go 后端，我建议直接用 pgxpool：
- 支持 PostgreSQL 特有的类型（数组、JSONB、COPY），不需要额外适配。
- 连接池提供获取连接耗时的统计，调高超时之后正好需要这个。
- 只有在需要保持驱动无关、或者依赖的库要求 database/sql 时，才选后者。
迁移工作很机械：先换掉连接池的构造，再按包逐个替换查询调用。
== b14u
HTTP 请求的截止时间是不是应该比 60s 的数据库超时短？
== b14a
是的。最外层的截止时间应该最短，面向用户的请求要比下层更早放弃。常见的链路：交互式接口的 HTTP 截止时间在
  10 到 15 秒左右，数据库连接超时 60s 作为后台任务的上限，查询超时按查询单独设置。把请求的 context 一路传下去，
  这样 HTTP 截止时间一到，挂起的查询就会被取消，而不是一直占着连接。
== b15u
把今天定下来的事整理一下，我贴到团队笔记里。
== b15a
今天的决定：
- 会话缓存：Redis，滑动 TTL，分阶段上线。
- 后端数据库访问：用 pgxpool 代替 database/sql。
- 请求截止时间：比数据库连接超时短，并把 context 取消向下传递。
- 提交信息：约定式提交，带 scope。
== b16u
定了：events 表按 tenant_id 分片。最大的五个租户已经贡献了大约 40% 的写入。
== b16a
按 tenant_id 分片符合这种写入分布。动手前要先定几件事：
- 热点租户：最大的五个可能各自需要独立分片，从一开始就要支持把租户在分片之间迁移。
- 跨租户查询：跨租户的报表需要单独的读取路径，比如只读副本或数据仓库。
- 先在一个集群上用 PostgreSQL 15 的声明式分区，在加机器之前先把按 tenant_id 路由的逻辑做好。
- events 表上的每个查询都必须带 tenant_id，可以加一条 lint 规则或者在仓储层封装来强制。
== b17u
按 tenant_id 分片会影响 Redis 里的会话键吗？
== b17a
不会直接影响：会话存在 Redis 里，不在分片的 events 表里。不过建议把 tenant_id 放进会话的值里，
  这样请求可以直接路由到对应的分片，省一次查询。除非需要列出或清理某个租户的全部会话，否则别把它放进键名；
  真要放，就用 tenant:{id}:session:{sid} 这样的前缀，并注意扫描键的开销很大。
== b18u
后台任务改用 NATS JetStream 吧，不再轮询数据库找待处理的任务。
== b18a
同意，分片一多，轮询迟早出问题。用 NATS JetStream 的话：
- 每类任务一个 stream，每个 worker 组一个持久化消费者，使用显式 ack。
- 设置最大投递次数，把毒消息转到死信主题，并且真的要监控它。
- 处理函数要幂等：ack 超时后重新投递是正常行为，不是错误。
- 任务载荷保持精简：只放 ID 和版本号，不放整条记录。
== b19u
NATS 消费者访问 Postgres 15 时，考虑到 60s 的连接超时，应该怎么处理？
== b19a
给 worker 单独配一个小连接池，不要和 API 共用，免得一波任务把用户请求饿死。60s 的连接超时作为 worker 的上限没问题，
  但 JetStream 的 ack 等待时间要长于最坏情况下的任务耗时（包括等连接的时间），
  否则还在等连接的任务会被重新投递给别的 worker，执行两次。
== b20u
说实话，我很想用 Rust 重写数据接入的 worker。劝劝我？
== b20a
我知道 Rust 是你的最爱，所以实话实说，现阶段不建议：后端其余部分都是 Go 写的，团队每天审的也是这些代码，
  而这个 worker 的瓶颈在数据库和队列，不在 CPU。重写意味着多一套工具链、同一套基础设施多一套库，
  而且只有你一个人能维护。如果以后性能分析显示它确实受 CPU 限制，再把一个小的 Rust 组件放在清晰的接口后面试试，
  是合理的实验。
== b21u
数据库迁移工具定了用 goose：纯 SQL 文件，和我们的 Go 代码也合得来。
== b21a
goose 很合适。几条让它用起来省心的约定：
- 每次变更一个迁移文件，用时间戳命名；在任何共享环境执行过之后就不要再改。
- 只有在安全的情况下才写回滚迁移；破坏性变更更适合向前修复。
- 迁移作为部署中的独立步骤，在新代码启动前执行，并保证应用能同时兼容新旧表结构。
- 耗时的数据回填不要放进迁移，作为任务单独跑，别让部署等它。
== b22u
按 tenant_id 分区之后，goose 迁移怎么跑？
== b22a
在单集群上用声明式分区时，对父表执行的迁移会作用到各个分区，所以 goose 照常执行一次即可。
  要注意会同时锁住所有分区的操作，比如添加带易变默认值的列；这类操作拆成“加列、回填任务、再设默认值”三步。
  等租户迁到不同集群后，在部署流水线里对每个集群分别执行 goose，并记录每个集群已应用的版本，
  这样版本漂移一目了然。
== b23u
以后内部服务之间统一用 gRPC，对外 API 继续用 REST。
== b23a
这个划分很合理。让内部服务的 gRPC 顺利落地：
- .proto 文件统一放在一个共享仓库，CI 里跑 lint 和破坏性变更检查。
- 每次调用都设置截止时间并向下传递，和 HTTP 请求一样。
- 打开健康检查和客户端负载均衡，否则长连接会把流量钉在旧的 Pod 上。
- 在 REST 边界把错误转换成稳定的对外错误码，不要把 gRPC 状态码直接暴露出去。
== b24u
预发环境数据库的密码是 {pw}，之后跑数据初始化脚本要用。
== b24a
收到。我不会在摘要或笔记里复述它。更安全的做法是放进密钥管理服务，让初始化脚本从那里读取，
  这样它不会出现在 shell 历史或者代码仓库里。
== b25u
把这周的技术决定汇总一下，我写周报用。
== b25a
本周技术决定：
- 数据库连接超时从 30s 调到 60s，因为并发从 200 涨到了 500。
- 会话缓存改用 Redis。
- events 表按 tenant_id 分片，先用声明式分区。
- 后台任务改用 NATS JetStream，不再轮询数据库。
- 数据库迁移用 goose。
- 内部服务之间用 gRPC，对外 API 保持 REST。
== b26u
请记住：我的上级是周岚，凡是跟上线日期有关的事，先找她。
== b26a
好的，记住了：周岚是你的上级，上线日期相关的问题先找她。以后遇到可能影响上线时间的决定，我会提醒你拉上她。
== b27u
帮我写个 Python 脚本的大纲，给预发环境初始化三个测试租户。
== b27a
Python 初始化脚本的大纲：
1. 从环境变量读取连接配置，密码从密钥管理服务取，不走命令行参数。
2. 只开一个连接，全部操作放在一个事务里，失败时不会留下半成品。
3. 用固定 ID 创建三个租户，插入时用 ON CONFLICT DO NOTHING，保证脚本可以重复执行。
4. 每个租户加几个用户和示例事件，随机数生成器用固定种子，保证每次结果一致。
5. 最后打印创建了什么，出错时以非零状态退出。
== b28u
压测做完了：60s 超时加上扩大后的连接池，高峰流量下一个连接错误都没有。
== b28a
结果很好。为了保持住：
- 把压测配置和结果存进仓库，下次改动时可以用同样的基线对比。
- 对等待连接的时间保留告警；如果它逐渐逼近 60s 的上限，说明连接池又不够了。
- 在配置注释里把连接池大小和超时写在一起，因为这两个值是一起调出来的。
== b29u
Aurora 的部署区域要从 eu-west-1 迁到 eu-central-1，因为首发客户 Nordwind 要求数据必须留在德国境内。
== b29a
这可不只是改个配置。迁到 eu-central-1 的方案：
- 先搭好新环境：PostgreSQL 15 集群、Redis、NATS JetStream 和各个服务，全部用同一套基础设施代码创建。
- 从旧区域持续复制数据库，在一个短暂的写入冻结窗口里切换。
- 提前一天把 DNS 的 TTL 调低再切换，旧区域保持只读，留出回滚窗口。
- 端到端核对数据驻留：备份、日志和监控数据也都必须留在德国，而不只是主数据库。
== b30u
迁到 eu-central-1 之后，Redis 里的会话是清空还是复制过去？
== b30a
复制通常不值得。会话的生命周期短，而且切换本来就有写入冻结窗口，最简单的做法是提前通知，切换后让用户重新登录。
  如果首发客户不能接受被强制退出，就在冻结窗口里把会话键一次性导出再导入，并保留原有的 TTL。
== b31u
goose 迁移在新的 eu-central-1 集群上演练通过了。
== b31a
很好。正式切换前，对比两个集群的表结构导出，确认旧集群里没有手工改过却遗漏的地方，并核对迁移版本表是否一致。
  然后按当天要用的同一份操作手册，把回滚完整演练一遍。
== b32u
今天要审 Go 后端里 NATS 消费者的代码，有什么需要特别注意的？
== b32a
JetStream 消费者的检查清单：
- 先提交处理结果再 ack，绝不能反过来。
- 处理函数检查“已处理消息”的键，保证重复投递无害。
- 消费者的 ack 等待时间要长于实际最慢的任务。
- 关闭时要排空正在处理的消息，而不是直接丢弃。
- 注定不会成功的错误要显式终止，而不是一直重试到投递次数上限。
== b33u
今天上午 eu-central-1 的连接等待时间飙升了几分钟，还在 60s 超时以内，但已经很接近了。
== b33a
在它变成错误之前值得查清楚：
- 看飙升是否和一波任务同时发生；worker 和 API 共用集群时会抢连接。
- 查看那段时间的慢查询：一个持有锁的长事务就能把整个连接池堵住。
- 如果当时在部署，启动时的连接风暴很常见，可以分批发布，或者逐步预热连接池。
== b34u
要准备上线检查清单了，我该重点复核哪些？
== b34a
上线检查清单：
- 区域：所有服务都在 eu-central-1，包括备份和日志。
- 数据库：连接超时 60s，连接池大小与压测结果一致。
- 会话：Redis 的 TTL 和回退路径都测过。
- 任务：NATS JetStream 的死信主题有监控和告警。
- 回滚：操作手册已演练，每一步都有负责人。
- 沟通：状态页和客服团队都已知道上线的时间窗口。
== p015
帮我查下 Aurora 项目用的什么数据库？
== p024
我现在的数据库连接超时是多少？
== p040
新的连接池超时该设多少？
== p060
Aurora 的后端是用什么语言写的？数据库是哪个？
== p080
我要写个小脚本清理会话缓存里过期的会话，该用什么语言写？它要连的是哪个存储？
== p100
会话缓存最后选的是什么？
== p110
我最喜欢哪门编程语言？
== p125
events 表按什么分片？后台任务用什么跑？
== p150
给新的报表服务配数据库连接：连哪个数据库，超时设多少？
== p170
明天我给团队订午饭，我自己有什么要注意的吗？
== p200
我之前设的超时阈值是多少？为什么改？
== p215
上线日期要调整的话，我应该先找谁？
== p240
我们部署在哪个区域？
== p265
Aurora 现在部署在哪个区域？
== p280
我们的部署区域变过吗？从哪里迁到哪里，为什么？
== p290
我喜欢什么样的回答方式？
== p310
给新同事写介绍邮件：我叫什么，在哪个组？
== p320
我的提交信息用什么格式？
== p330
迁移工具和内部服务之间的通信协议，我们最后定的是什么？
== p350
Aurora 项目用什么语言？我喜欢什么语言？
== p370
我们现在跑在哪个区域？那边用的是什么数据库？
== p390
我要提交连接池的配置：超时填多少？提交信息该怎么写？
== p400
数据驻留审计要用：按时间顺序列出我们用过的部署区域，以及为什么换。
== p410
帮我做一个上线看板的原型图，要遵循我的哪些偏好？
== p430
周五的团队聚餐我来订，提醒我一下我不能吃什么。
== p450
这两周数据库超时是怎么变的？为什么？
== p460
提醒我一下：我最喜欢的语言是什么？写脚本喜欢用什么？
== p470
总结一下 Aurora 的技术栈：语言、数据库、区域、缓存和队列。
== p485
帮我填交接文档的抬头：我的名字、所在的组、上级是谁。
== p500
总结一下我这 14 天做的所有技术决策。
"""

# --- filler ------------------------------------------------------------------------------------------------
# "== topic.NAME": "?" a user question, ":" an opening line of the answer, "-" a point of the answer.
# "== pool.NAME": "-" items; "== pairs.NAME": "?" a user line followed by ":" its reply.
# Placeholders: {svc} a service, {m} minutes, {who} a person. Filler never names a scripted slot's value.

_FILLER_EN = """
== svc
- billing
- notifications
- export
- search
- auth
- reporting
- ingest
- webhooks
- audit log
- user profile
== who
- Tom
- Lena
- the vendor
- the recruiter
- facilities
- the dentist
== topic.review
? Can you review the {svc} handler PR? I'm mostly worried about the error handling.
? Quick review of the {svc} refactor before I merge?
? Take a look at the diff for the {svc} retry logic, anything off?
? I'm reviewing a teammate's {svc} PR. What should I focus on?
: Review notes on the {svc} change:
: I went through the {svc} diff. Main points:
- The error from the upstream call is logged and then returned, so it shows up twice in the logs; log it in one
  place only.
- There is no test for the empty-input path; a table-driven test with an empty list, one item and a duplicate
  would cover it.
- The handler builds the response field by field; a small constructor would keep the three call sites
  consistent.
- Context cancellation is not checked inside the loop, so a cancelled request keeps working until the batch
  ends.
- The new config flag has no default in the sample file, which will confuse whoever deploys it next.
- Names like tmp2 and res make the diff harder to follow than it needs to be; rename them before merging.
- The retry wraps a call that is not idempotent; either add an idempotency key or retry only the read.
- The data migration of the old field and the code change ship in one PR; split them and rollback gets safer.
- Metrics are incremented before the operation succeeds, so failures are counted as successes.
- The mutex guards the map, but the slice inside it is returned by reference and then changed by callers.
== topic.flaky
? The {svc} integration test failed on CI again but passes locally. Ideas?
? Why would a test be flaky only on the CI runners?
? The {svc} tests have been flaky all week. How do I track it down?
: Flaky tests usually come down to a handful of causes. For {svc}, I'd check:
: Things that typically make a test pass locally and fail on CI:
- Ordering: the test may rely on map iteration order, or on rows coming back in insertion order without an
  ORDER BY.
- Time: code that reads the wall clock directly can cross a second or day boundary; inject a clock instead.
- Shared state: another test in the same package may leave data behind; a shuffled run order exposes it.
- Resources: CI runners have fewer cores, so assumptions like "the worker finishes within 100 ms" break.
- Ports and files: two parallel jobs using the same fixed port or temp path collide every now and then.
- Network: a test that reaches a real external endpoint fails whenever that endpoint is slow; stub it.
- Run it in a loop with the race detector on; even if it fails once in fifty runs, you have a reproducer.
- Quarantine it with a tracking ticket rather than retrying it silently, or nobody will ever come back to it.
== topic.ratelimit
? We need rate limiting on the public API. Token bucket or sliding window?
? A customer hammered the {svc} endpoint last night. How should we rate limit it?
? What limits would you start with for the {svc} API?
: Some thoughts on rate limiting the {svc} API:
: Here's how I'd approach it:
- A token bucket per API key is easy to reason about and allows short bursts, which matches how most clients
  behave.
- Return 429 with a Retry-After header, so well-behaved clients back off instead of retrying at once.
- Keep the limiter state close to the gateway; a central store adds a network hop to every request.
- Start with generous limits, log who would have been throttled for a week, then tighten based on real traffic.
- Give expensive endpoints such as exports their own limits; one bulk call can cost as much as a thousand
  reads.
- Expose the remaining quota in response headers; it saves a lot of support tickets.
- Exempt internal callers and health checks, or an incident can end up throttling your own monitoring.
- Document the limits in the API reference, with an example of handling a 429.
== topic.logging
? Our logs are a mess. What should a good log line for {svc} contain?
? How do I get request tracing across services?
? Should we log request bodies for debugging?
: A few rules that make logs useful:
: For {svc} I'd aim for this:
- Structured JSON with a fixed set of keys: timestamp, level, service, request ID, message, and a small map of
  fields.
- Propagate a trace ID from the edge through every hop, so one search shows a request end to end.
- Log at the boundaries (request in, response out, external calls) rather than inside every helper.
- Never log request bodies wholesale: they contain emails, tokens and addresses. Log sizes and hashes instead.
- Use levels consistently: error means someone should look, warn means it might matter, info tells the story.
- Sample high-volume debug logs instead of turning them off; one percent is usually enough to see patterns.
- Put the error chain in one field rather than across several lines, so alerts can match on it.
- Add the build version to every line; "did the fix deploy?" becomes a one-query question.
== topic.postmortem
? We had an outage in {svc} yesterday. Can you help me structure the postmortem?
? I'm writing the incident report for the {svc} outage. Which sections should it have?
? How blameless should the {svc} postmortem be?
: A postmortem structure that works well:
: For the {svc} incident, I'd cover:
- A summary in three sentences: what broke, who was affected, and for how long.
- A timeline in UTC from the first signal to full recovery, including who was paged when and what they tried.
- Root cause and contributing factors, kept apart: the bug was the trigger, the missing alert is why it lasted.
- Impact in numbers: failed requests, affected customers, and any data that has to be repaired.
- What went well, for example that the rollback worked or that the runbook was accurate.
- Action items with an owner and a due date each; items without an owner do not get done.
- Keep it blameless: describe each decision with the information people had at the time.
- Share it beyond the team; other teams often have the same weak spot.
== topic.ci
? CI takes 25 minutes per PR. Where would you start cutting?
? Can we make the {svc} pipeline faster?
? Our build cache keeps missing. Any idea why?
: Ways to speed up the pipeline, roughly in order of payoff:
: Where CI time usually goes:
- Key the dependency cache on the lockfile hash rather than the branch name, so every branch hits the same
  cache.
- Split the test suite into shards and run them in parallel; most suites divide cleanly by package.
- Run the slow end-to-end suite only on changes that touch the code it covers, and always on main.
- Build the container image once and reuse it across jobs instead of rebuilding it in every stage.
- Look at the ten slowest tests: usually two or three of them account for a third of the time.
- Cache misses often come from a timestamp or version string baked into an early layer.
- Fail fast: run lint and unit tests before anything that needs a database.
- Track pipeline duration as a metric, so a regression is noticed in the week it happens.
== topic.flags
? We have 40 feature flags and nobody knows which ones are still used. Cleanup plan?
? Should the new {svc} flow go behind a feature flag?
? How long should a feature flag live?
: On feature flags:
: A cleanup plan that tends to stick:
- Give every flag an owner and an expiry date when it is created; the tooling can nag once it expires.
- List the flags that have been fully on or fully off for a month; those can be deleted right away.
- Remove a flag in two steps: hard-code the winning branch first, delete the dead code a release later.
- Keep release flags apart from long-lived operational switches; the second kind is configuration.
- Test both sides of a flag in CI while it exists, or the off path rots silently.
- Don't nest flags: two interacting flags create four code paths that nobody tests.
- A new flow in {svc} is a good fit for a flag if you want a gradual rollout by percentage.
- Log flag evaluations at low volume, so you can see which paths actually run in production.
== topic.pagination
? Offset or cursor pagination for the {svc} list endpoint?
? Clients complain that the {svc} list skips items between pages. Why would it?
? How should the {svc} list API paginate?
: Pagination notes:
: For the {svc} list endpoint:
- Cursor pagination keyed on a stable sort (creation time plus ID) neither skips nor repeats items when rows
  are inserted.
- Offset pagination gets slower as the offset grows, because the database still walks the skipped rows.
- Items go missing between pages when the sort key is not unique; add the ID as a tie-breaker.
- Make the cursor opaque (the sort key in base64), so its contents can change later.
- Cap the page size on the server and document the default, or clients will ask for everything at once.
- Return the next cursor in the body, not only in a header; many clients ignore headers.
- Total counts are expensive on large tables; offer them on request only, or as an estimate.
- Keep the filters inside the cursor, so a client cannot change the filter halfway through.
== topic.k8s
? The {svc} pods keep getting OOM-killed. How should I set the limits?
? How many replicas should {svc} run?
? Should we use the horizontal autoscaler for {svc}?
: On resources and scaling for {svc}:
: Some pointers:
- Set the memory request close to steady-state usage and the limit about a third higher; measure before
  guessing.
- OOM kills right after start usually mean a cache warming up all at once; bound it or warm it gradually.
- CPU limits cause throttling under bursts; many teams set a request and leave the CPU limit off.
- Autoscale on a signal that tracks load, such as requests per second or queue depth, rather than CPU alone.
- Run at least three replicas across zones, so draining one node doesn't take the service down.
- Add a pod disruption budget, so voluntary evictions keep enough replicas serving.
- Readiness should fail while the process is still loading; liveness should only catch a wedged process.
- Watch the memory graph over a week: a slow climb is a leak, not a limits problem.
== topic.retries
? How should {svc} retry calls to the payment provider?
? We retry everything three times. Is that a problem?
? What's a sane backoff policy for {svc}?
: Retry guidelines:
: A few rules for retries in {svc}:
- Retry only errors that can succeed on a second try: timeouts, 503s, connection resets. Never a 400.
- Use exponential backoff with jitter, so a fleet of clients does not retry in lockstep.
- Put a retry budget on the whole request rather than on each call, or nested retries multiply.
- Make the operation idempotent with a client-generated key before retrying anything that writes.
- Stop retrying once the caller's deadline has passed; nobody is waiting for the answer any more.
- A circuit breaker in front of a struggling dependency gives it room to recover.
- Record every retry as a metric; a rising retry rate is an early warning of trouble upstream.
- Three blind retries at each layer of a four-layer stack turn one user action into eighty-one calls.
== topic.export
? The {svc} CSV export runs out of memory for big customers. How do we fix it?
? How should we build large exports?
? Can the nightly export for {svc} be made faster?
: For large exports:
: The export problem usually looks like this:
- Stream rows to the file instead of loading the whole result set; memory then stays flat whatever the size.
- Run exports as background jobs and email a link when they finish, instead of holding an HTTP request open.
- Read in key-ordered batches of a few thousand rows, so every query stays short.
- Write to object storage with a multipart upload; local disks on pods are small and ephemeral.
- Compress on the fly: CSV shrinks five to ten times with gzip.
- Record progress, so a failed export resumes from the last batch instead of starting over.
- Limit concurrent exports per customer, so one large account cannot starve the others.
- Sign download links with a short expiry; export files are full of customer data.
== topic.security
? Dependabot opened 14 PRs this week. How do we keep up?
? A CVE came out for a library {svc} uses. What's the process?
? How often should we rotate service credentials?
: Keeping up with security updates:
: On the {svc} dependency question:
- Group minor and patch updates into one weekly PR, so review happens once, with the full test suite.
- Triage CVEs by reachability first: a vulnerable function you never call can wait for the regular update.
- Pin transitive dependencies with a lockfile and review lockfile diffs like code.
- Rotate service credentials on a schedule and whenever someone with access leaves; automate it so it happens.
- Keep secrets in the secrets manager, never in environment files committed to the repository.
- Scan images in CI and block on critical findings only, or the scanner turns into noise.
- Subscribe to the advisories of the handful of libraries that sit on the request path.
- When you decide not to patch something, record the exception with an expiry date.
== topic.onboarding
? A new engineer joins on Monday. What should the first week look like?
? Can you draft an onboarding checklist for {svc}?
? How do we make onboarding less painful?
: A first week that works:
: Onboarding checklist ideas:
- Day one: laptop, accounts and a working local setup; if that takes more than a day, fix the setup script.
- Pair on a small, real bug in the first two days; shipping something early builds confidence.
- Give an architecture tour with the diagrams, and ask the newcomer to fix whatever is out of date.
- Assign a buddy who is not their manager, for the questions they feel are too small to ask.
- Have them shadow an on-call shift before they join the rotation.
- Write down the unwritten rules: review expectations, when to ask for help, how deploys are announced.
- Ask for feedback on the onboarding docs at the end of week one, while the pain is fresh.
- Keep the first task in {svc} small and well scoped, with a clear definition of done.
== topic.planning
? Help me break down the {svc} work for next sprint.
? How should I estimate the {svc} rewrite?
? The sprint is overcommitted again. How do we fix our planning?
: Planning suggestions:
: For the {svc} work:
- Split the work into slices that each deliver something testable, not into layers like "database" and "API".
- Estimate in ranges and say what would push it to the high end; a single number hides the uncertainty.
- Leave a fifth of the capacity unplanned for bugs, reviews and interruptions; it gets used every sprint
  anyway.
- Put the riskiest unknown first, so surprises come early, while there is still time to adjust.
- Write acceptance criteria before estimating; half of the disagreement is about what done means.
- Track carry-over: a ticket that moves three sprints in a row is too big or blocked.
- Agree on one goal for the sprint that the team can say in a single sentence.
- Compare last sprint's estimates with the actuals once, without blame, to calibrate.
== topic.alerts
? We get paged for things that fix themselves. How do we cut the alert noise?
? Which alerts should {svc} have?
? Can you suggest SLOs for {svc}?
: On alerting:
: For {svc} I'd start with:
- Page on symptoms that users feel, such as error rate and latency, not on causes like CPU.
- Define an availability SLO, for example 99.9% of requests succeeding over 30 days, and alert on the burn
  rate.
- Every page needs a runbook link and a clear first action; otherwise it is a notification, not an alert.
- Delete or demote the alerts that resolved themselves every time during the last month.
- Use a multi-window burn-rate alert: a fast window for sudden breakage, a slow one for gradual decay.
- Route alerts that are not urgent to a ticket queue instead of the pager.
- Review the pages of each on-call week in the handover meeting.
- A dashboard should answer "is it us or a dependency?" within a minute.
== topic.index
? The {svc} dashboard query takes four seconds. How do I speed it up?
? Should I add an index for the {svc} report query?
? Why did this query get slow after the data grew?
: Query tuning steps:
: For the slow {svc} query:
- Run EXPLAIN ANALYZE first and look for sequential scans on large tables and row estimates that are far off.
- A composite index on the filter columns, then the sort column, often turns a full scan into a range read.
- Select only the columns you need; wide rows make every page read more expensive.
- If the estimates are far off, the table statistics may be stale; analyze the table and compare.
- For dashboards, a summary table refreshed every few minutes beats a live aggregate over months of rows.
- Functions applied to indexed columns in the WHERE clause keep the index from being used.
- Every index slows writes down a little, so drop the ones the planner never uses.
- Test the fix on production-sized data; small test tables hide the problem.
== topic.rfc
? I need to write a design doc for the {svc} redesign. Is there a template?
? How long should an RFC be?
? Who should review the {svc} design doc?
: A design doc template:
: For the {svc} redesign doc:
- Context: what problem, for whom, and why now, in half a page.
- Goals and explicit non-goals; the non-goals prevent most of the scope arguments later.
- The proposal, with one diagram, the main data flows and the failure modes you considered.
- The alternatives you rejected and why; otherwise reviewers will propose them again.
- The rollout and rollback plan, including how existing data is migrated.
- Open questions at the end, each with the person who will answer it.
- Ask one reviewer from a neighbouring team; they catch assumptions the team no longer sees.
- Keep it under five pages; a longer doc is probably two designs.
== topic.followup
? Anything else I'm missing?
? What else should I watch out for?
? Anything that usually goes wrong here?
? What would a senior reviewer add?
: A few more things worth considering:
: What usually bites people:
: Also worth a look:
== pool.leadin
- Context: this came up in planning this morning.
- We've been going back and forth on this in the team.
- This has been bugging me since last week.
- Asking before I write the ticket.
- The team lead asked me to look into it.
== pool.closing
- Happy to go deeper on any of these.
- Want me to draft the change?
- If you share the code, I can be more specific.
- I'd start with the first two.
- Let me know which direction you pick.
== topic.note
? Merged the {svc} pagination fix, tests are green.
? Spent the morning on the {svc} memory leak. It was an unbounded cache.
? Pairing with Lena on the {svc} refactor this afternoon.
? Deployed the {svc} hotfix to staging, looks good so far.
? The {svc} load test finished, p99 is back under 300 ms.
: Nice progress. Suggested follow-ups:
: Good news. Before moving on:
- Add a regression test that reproduces the original failure, so it stays fixed.
- Write a line in the changelog, so support knows what changed.
- Keep an eye on the error-rate dashboard for the next day.
- Close the related ticket and link the PR.
- Check whether the same pattern exists in the other services.
- Schedule the production rollout for a quiet window and announce it in the channel.
- Remove the temporary debug logging before the next release.
- Update the runbook with what you learned.
== topic.minor
? We'll retire the v1 {svc} endpoint at the end of the month.
? Decided: code freeze every Thursday from noon, for the release train.
? We're moving standup to 9:45.
? From now on, dependency updates go into one weekly PR.
? We'll keep the {svc} admin UI internal for now.
? Decided: every new service logs structured JSON.
? The on-call engineer does a ten-minute smoke check after every release.
: Noted. A couple of things to line up:
: Makes sense. To make it stick:
- Announce it in the team channel, with the date and a contact person.
- Add it to the decision log, so the reasoning survives.
- Update the docs that still describe the old way.
- Set a calendar reminder a week before it takes effect.
- Tell the support team; they get the questions first.
- Check whether any automation or dashboards depend on the old behaviour.
== pool.minorfact
- FYI, the staging cluster got two more nodes.
- The design review moved to Thursdays at 3pm.
- Lena is on holiday next week.
- On-call switched to weekly shifts.
- New office badges have to be swapped by Friday.
== pool.ack
- Noted, thanks.
- Thanks for the heads-up.
- Got it, noted.
== pool.chit
- so tired today
- haha
- lol fair
- Monday again...
- coffee number three ☕
- the office is freezing today
- my cat just walked across the keyboard, ignore that
- long day, brain is mush
- ugh, another meeting
- rain again 🌧
- almost weekend
- lunch was great btw
- I need a vacation
- that standup took forever
- haha that's a good one
== pool.chitreply
- Ha, fair enough.
- Hang in there. Maybe a short walk before the next block?
- Sounds like a long one. I'll keep things short.
- Almost there!
- Grab some water and take a break, then back at it.
- Ha, I get it.
== pool.confirm
- ok thanks
- got it
- perfect
- 👍
- sounds good
- makes sense
- ok
- cool, thanks
- great, thank you
- nice
== pool.confirmreply
- You're welcome.
- Anytime.
- 👍
- Glad it helped.
- Sure thing.
== pairs.temporary
? remind me in {m} minutes to call {who} back
: Sure, I'll remind you in {m} minutes.
? stepping out for lunch, back in {m}
: Enjoy your lunch!
? brb, meeting
: Sure, pick it up when you're back.
? hold on, phone call
: No problem, I'll wait.
? remind me to submit my expense report before I leave today
: Will do, I'll remind you this afternoon.
? can you check whether the 3pm room is booked? never mind, found it
: Good, glad it's sorted.
"""

_FILLER_ZH = """
== svc
- 计费
- 通知
- 导出
- 搜索
- 鉴权
- 报表
- 数据接入
- Webhook
- 审计日志
- 用户资料
== who
- 老王
- 小李
- 供应商
- 招聘的同事
- 物业
- 牙医诊所
== topic.review
? 帮我看看{svc}服务处理函数的 PR？我主要担心错误处理。
? 合并前帮我快速过一下{svc}的重构？
? 看下{svc}重试逻辑的 diff，有没有不对的地方？
? 在审同事的{svc} PR，应该重点看什么？
: {svc}这次改动的评审意见：
: 看完了{svc}的 diff，主要几点：
- 上游调用的错误先打了日志又被返回，日志里会出现两次，只在一个地方记录就够了。
- 空输入的路径没有测试，用表驱动测试覆盖空列表、单个元素和重复元素三种情况。
- 处理函数逐个字段拼装响应，写个小的构造函数能让三个调用点保持一致。
- 循环里没有检查 context 是否取消，请求被取消后还会一直跑到这批处理结束。
- 新加的配置项在示例配置里没有默认值，下一个部署的人会一头雾水。
- tmp2、res 这类变量名让 diff 很难读，合并前换成有意义的名字。
- 重试包住了一个非幂等的调用：要么加幂等键，要么只重试读操作。
- 旧字段的数据迁移和代码改动放在同一个 PR 里，拆开之后回滚更安全。
- 指标在操作成功之前就加了一，失败也会被算成成功。
- 互斥锁保护了 map，但 map 里的切片是按引用返回的，调用方还会去修改它。
== topic.flaky
? {svc}的集成测试在 CI 上又挂了，本地却能过，有什么思路？
? 为什么有的测试只在 CI 机器上不稳定？
? 这周{svc}的测试老是时好时坏，怎么排查？
: 不稳定的测试通常就那几种原因，{svc}可以先查这些：
: 本地能过、CI 上挂的测试，常见原因有：
- 顺序：测试可能依赖 map 的遍历顺序，或者没写 ORDER BY 却假设结果按插入顺序返回。
- 时间：直接读系统时钟的代码可能恰好跨过秒或天的边界，应该注入时钟。
- 共享状态：同一个包里别的测试留下了数据，打乱执行顺序跑一遍就能看出来。
- 资源：CI 机器核数少，“worker 100 毫秒内一定跑完”这类时间假设会失效。
- 端口和文件：两个并行任务用了同一个固定端口或临时路径，偶尔就会冲突。
- 网络：访问真实外部服务的测试，对方一慢就失败，应该换成桩。
- 开着竞态检测循环跑，哪怕五十次才挂一次，至少有了稳定的复现手段。
- 把它隔离出来并建个跟踪工单，不要悄悄自动重试，否则没人会回头修。
== topic.ratelimit
? 对外 API 要加限流，用令牌桶还是滑动窗口？
? 昨晚有个客户狂刷{svc}接口，限流该怎么做？
? {svc} API 的限流值一开始设多少合适？
: 关于{svc} API 限流的一些想法：
: 我会这样做：
- 按 API Key 的令牌桶最容易理解，也允许短时突发，符合大多数客户端的行为。
- 返回 429 并带上 Retry-After 头，让守规矩的客户端退避，而不是立刻重试。
- 限流状态尽量放在网关附近，集中存储会让每个请求多一次网络往返。
- 先把限额设宽一些，记录一周“本该被限流”的调用方，再根据真实流量收紧。
- 导出这类昂贵的接口单独限流，一次批量调用的成本可能抵得上一千次读取。
- 在响应头里返回剩余配额，能省掉很多工单。
- 内部调用和健康检查要豁免，不然一次故障可能连自己的监控也被限流了。
- 在 API 文档里写清限额，并给出处理 429 的示例。
== topic.logging
? 我们的日志一团糟，{svc}的一条好日志应该包含什么？
? 怎么做跨服务的请求追踪？
? 为了排查问题，要不要记录请求体？
: 让日志真正有用的几条规则：
: {svc}可以按这个目标来：
- 结构化 JSON，固定几个字段：时间戳、级别、服务名、请求 ID、消息，再加一个小的字段表。
- 从入口开始把 trace ID 传到每一跳，一次搜索就能看到请求的完整链路。
- 在边界处记日志（请求进、响应出、外部调用），而不是在每个辅助函数里都打。
- 不要整段记录请求体，里面有邮箱、令牌和地址，记录大小和哈希就够了。
- 级别要统一：error 表示需要有人看，warn 表示可能有影响，info 用来讲清经过。
- 高频的调试日志用采样代替关闭，百分之一通常就足够看出规律。
- 错误链放在一个字段里，不要拆成多行，方便告警规则匹配。
- 每行都带上构建版本，“修复上线了没有”就变成一次查询的事。
== topic.postmortem
? {svc}昨天出了故障，能帮我搭一下复盘报告的结构吗？
? 在写{svc}故障的事故报告，需要哪些部分？
? {svc}的复盘要做到多“无责”？
: 一个好用的复盘结构：
: {svc}这次事故，我建议写这些：
- 三句话的摘要：什么坏了，影响了谁，持续了多久。
- 用 UTC 时间写时间线：从第一个信号到完全恢复，包括什么时候呼叫了谁、尝试了什么。
- 根因和促成因素分开写：bug 是触发点，缺少告警才是它持续这么久的原因。
- 用数字描述影响：失败的请求数、受影响的客户、需要修复的数据。
- 做得好的地方也写上，比如回滚很顺利、操作手册是准确的。
- 每个改进项都要有负责人和截止日期，没有负责人的事不会有人做。
- 保持无责：按当时掌握的信息来描述每个决定。
- 分享给团队以外的人，别的团队往往有同样的薄弱环节。
== topic.ci
? 每个 PR 的 CI 要跑 25 分钟，从哪里开始优化？
? {svc}的流水线能再快一点吗？
? 构建缓存老是不命中，可能是什么原因？
: 加速流水线的办法，大致按收益排序：
: CI 的时间通常花在这些地方：
- 依赖缓存的键用锁文件的哈希，而不是分支名，这样所有分支都能命中同一份缓存。
- 把测试切成多个分片并行跑，大多数测试套件按包就能切得很干净。
- 慢的端到端测试只在改动涉及相关代码时跑，主干上则每次都跑。
- 容器镜像只构建一次，各个任务复用，不要每个阶段都重新构建。
- 看看最慢的十个测试，通常其中两三个就占了三分之一的时间。
- 缓存不命中往往是因为前面的层里写进了时间戳或版本号。
- 快速失败：先跑 lint 和单元测试，再跑需要数据库的部分。
- 把流水线耗时当作指标来跟踪，哪周变慢了当周就能发现。
== topic.flags
? 我们有 40 个功能开关，没人知道哪些还在用，怎么清理？
? {svc}的新流程要不要放在功能开关后面？
? 功能开关应该保留多久？
: 关于功能开关：
: 一个比较能坚持下去的清理方案：
- 每个开关创建时就指定负责人和过期日期，到期后由工具自动提醒。
- 列出一个月以来一直全开或全关的开关，这些可以马上删。
- 分两步移除：先把胜出的分支写死，下一个版本再删掉无用的代码。
- 发布开关和长期存在的运维开关要分开，后者其实是配置，不是开关。
- 开关存在期间，CI 里两边的路径都要测，否则关闭的那条路径会悄悄腐烂。
- 不要嵌套开关，两个开关组合起来就是四条没人测的代码路径。
- 如果想按百分比逐步放量，{svc}的新流程很适合放在开关后面。
- 以较低的量记录开关的求值结果，就能看到生产上实际走的是哪条路径。
== topic.pagination
? {svc}的列表接口用偏移分页还是游标分页？
? 客户反馈{svc}列表翻页时会漏数据，为什么？
? {svc}的列表 API 应该怎么分页？
: 分页要点：
: 关于{svc}的列表接口：
- 以稳定排序（创建时间加 ID）为键的游标分页，在有新数据插入时不会漏也不会重复。
- 偏移分页越往后越慢，因为数据库仍然要扫过被跳过的行。
- 排序键不唯一时翻页就会漏数据，加上 ID 作为第二排序键。
- 游标做成不透明的（排序键的 base64），以后可以随意调整它的内容。
- 服务端限制每页大小并写明默认值，否则客户端会一次要全部数据。
- 下一页的游标放在响应体里，而不只是响应头里，很多客户端会忽略响应头。
- 大表上的总数统计很贵，只在明确请求时提供，或者给一个估算值。
- 过滤条件要包含在游标里，防止客户端翻到一半换了过滤条件。
== topic.k8s
? {svc}的 Pod 老是被 OOM 杀掉，资源限制该怎么设？
? {svc}应该跑几个副本？
? {svc}要不要上水平自动扩缩容？
: 关于{svc}的资源和扩缩容：
: 几点建议：
- 内存 request 设在稳定运行时的用量附近，limit 再高出三分之一左右；先测量，别靠猜。
- 刚启动就被 OOM 杀掉，通常是缓存一次性预热，要给它设上限或者逐步预热。
- CPU limit 会让突发流量被限速，很多团队只设 request，不设 CPU limit。
- 按能反映负载的信号扩缩容，比如每秒请求数或队列长度，而不只看 CPU。
- 至少跑三个副本并分布在不同可用区，排空一个节点不会让服务挂掉。
- 加上 Pod 中断预算，主动驱逐时也能保证足够的副本在服务。
- 进程还在加载时就绪检查应该失败；存活检查只用来发现卡死的进程。
- 看一周的内存曲线，缓慢上涨是泄漏，不是 limit 的问题。
== topic.retries
? {svc}调用支付服务商时应该怎么重试？
? 我们所有调用都重试三次，这有问题吗？
? {svc}的退避策略怎么设比较合理？
: 重试的基本原则：
: {svc}里重试的几条规则：
- 只重试有可能第二次成功的错误：超时、503、连接被重置。400 绝对不要重试。
- 用带抖动的指数退避，避免一大批客户端同时重试。
- 给整个请求设重试预算，而不是每次调用各自重试，否则层层重试会成倍放大。
- 重试任何写操作之前，先用客户端生成的幂等键让它变成幂等的。
- 调用方的截止时间已过就停止重试，已经没人在等结果了。
- 在状况不好的依赖前面加熔断器，给它恢复的空间。
- 把每次重试记成指标，重试率上升是上游出问题的早期信号。
- 四层调用栈每层盲目重试三次，一次用户操作就会变成八十一次调用。
== topic.export
? 大客户导出{svc}的 CSV 时内存不够，怎么修？
? 大批量导出应该怎么做？
? {svc}每晚的导出能更快一点吗？
: 大批量导出的做法：
: 导出问题通常是这样的：
- 逐行流式写入文件，而不是把整个结果集加载进来，这样内存占用与数据量无关。
- 导出放到后台任务里跑，完成后发邮件给下载链接，不要一直占着 HTTP 请求。
- 按键的顺序分批读取，每批几千行，让每次查询都很短。
- 用分段上传写到对象存储，Pod 上的本地磁盘又小又是临时的。
- 边写边压缩，CSV 用 gzip 通常能缩小五到十倍。
- 记录进度，导出失败后可以从上一批继续，而不是从头再来。
- 限制每个客户同时进行的导出数量，免得一个大客户把别人都饿死。
- 下载链接要签名并设较短的有效期，导出文件里全是客户数据。
== topic.security
? Dependabot 这周开了 14 个 PR，怎么跟得上？
? {svc}用的一个库出了 CVE，流程是什么？
? 服务凭据应该多久轮换一次？
: 跟上安全更新的做法：
: 关于{svc}依赖的问题：
- 把次要版本和补丁更新合并成每周一个 PR，只需评审一次，并跑完整的测试。
- 先按可达性给 CVE 分级：有漏洞的函数如果根本没被调用，可以等常规升级。
- 用锁文件固定间接依赖，并像审代码一样审锁文件的变更。
- 服务凭据定期轮换，有权限的人离开后也要轮换；做成自动化才会真正执行。
- 密钥放在密钥管理服务里，绝不要放进提交到仓库的环境变量文件。
- 在 CI 里扫描镜像，只对严重级别的问题阻断，否则扫描器会变成噪音。
- 订阅请求链路上那几个关键库的安全公告。
- 决定暂不修补时，把例外记录下来，并设好到期日。
== topic.onboarding
? 下周一有新同事入职，第一周怎么安排？
? 能帮我起草一份{svc}的入职清单吗？
? 怎么让入职不那么痛苦？
: 比较有效的第一周：
: 入职清单的一些想法：
- 第一天：电脑、账号和能跑起来的本地环境；如果这要花一天以上，就该修安装脚本了。
- 前两天结对修一个真实的小 bug，早点交付东西能建立信心。
- 带新同事看一遍架构图，并请他把过时的地方更新掉。
- 安排一个不是他上级的伙伴，专门回答那些他觉得“太小不好意思问”的问题。
- 正式加入值班之前，先跟一次班。
- 把不成文的规矩写下来：评审的预期、什么时候该求助、发布怎么通知。
- 第一周结束时请他反馈入职文档，趁痛点还新鲜。
- 在{svc}里的第一个任务要小而明确，完成标准清楚。
== topic.planning
? 帮我拆一下下个迭代{svc}的工作。
? {svc}重写的工作量该怎么估？
? 迭代又排满了，计划怎么改进？
: 计划方面的建议：
: 关于{svc}的工作：
- 按能独立测试、交付的切片来拆，而不是按“数据库”“API”这样的层来拆。
- 用区间来估算，并说明什么情况会落到上限；单个数字会掩盖不确定性。
- 留出五分之一的容量给 bug、评审和各种打断，反正每个迭代都会用掉。
- 把风险最大的未知项放在最前面，意外越早出现，越有时间调整。
- 先写验收标准再估算，一半的分歧其实是对“完成”的理解不同。
- 跟踪延期的任务，同一个工单连续三个迭代都没完成，说明它太大或者被卡住了。
- 给迭代定一个团队能用一句话说清的目标。
- 开一次会，不追责地对比上个迭代的估算和实际，用来校准。
== topic.alerts
? 总有会自己恢复的问题把我们叫起来，怎么减少告警噪音？
? {svc}应该配哪些告警？
? 能帮{svc}定几个 SLO 吗？
: 关于告警：
: {svc}我会先从这些开始：
- 按用户能感受到的症状告警，比如错误率和延迟，而不是 CPU 这类原因。
- 定义可用性 SLO，例如 30 天内 99.9% 的请求成功，并按消耗速率告警。
- 每个呼叫告警都要附操作手册链接和明确的第一步动作，否则它只是通知，不是告警。
- 过去一个月每次都自行恢复的告警，删掉或者降级。
- 用多窗口消耗速率告警：快窗口抓突然的故障，慢窗口抓逐渐的劣化。
- 不紧急的告警发到工单队列，而不是呼叫值班。
- 每周值班交接会上回顾这一周的呼叫。
- 看板要能在一分钟内回答“是我们的问题还是依赖的问题”。
== topic.index
? {svc}看板的查询要四秒，怎么加速？
? {svc}的报表查询要不要加索引？
? 数据量涨了以后这个查询为什么变慢了？
: 查询调优的步骤：
: 针对{svc}的慢查询：
- 先跑 EXPLAIN ANALYZE，看大表上有没有顺序扫描，以及行数估计是否严重偏离。
- 按过滤列、再按排序列建复合索引，往往能把全表扫描变成范围读取。
- 只查需要的列，宽行会让每次页面读取都更贵。
- 估计偏差很大时，可能是统计信息过期了，ANALYZE 一下再对比。
- 看板用几分钟刷新一次的汇总表，比实时聚合几个月的数据好得多。
- 注意 WHERE 里对索引列套函数，这会让索引失效。
- 每个索引都会让写入慢一点，把查询计划从来不用的索引删掉。
- 用生产规模的数据验证优化效果，小的测试表会掩盖问题。
== topic.rfc
? 要给{svc}重新设计写设计文档，有模板吗？
? RFC 一般写多长合适？
? {svc}的设计文档该找谁评审？
: 设计文档模板：
: {svc}重设计的文档可以这样写：
- 背景：什么问题、为谁解决、为什么是现在，半页就够。
- 目标和明确的非目标；写清非目标能避免后面大部分的范围之争。
- 方案本身：一张图、主要的数据流，以及考虑过的故障模式。
- 被否决的备选方案及原因，否则评审的人会再提一遍。
- 上线和回滚计划，包括已有数据怎么迁移。
- 最后列出待解决的问题，每个都指定一个负责回答的人。
- 请一位相邻团队的人来评审，他们能发现团队自己已经看不见的假设。
- 控制在五页以内，更长的话，多半其实是两个设计。
== topic.followup
? 还有我没想到的吗？
? 还有什么要注意的？
? 这里一般容易出什么问题？
? 资深的人还会补充什么？
: 还有几点值得考虑：
: 常见的坑：
: 另外也值得看看：
== pool.leadin
- 背景：今天上午做计划时提到的。
- 这个问题组里来回讨论好几次了。
- 这件事从上周起就一直困扰我。
- 写工单之前先问问你。
- 组长让我研究一下这个。
== pool.closing
- 需要的话，我可以展开讲其中任何一点。
- 要不要我直接起草改动？
- 把代码发我的话，我可以说得更具体。
- 我会先从前两条入手。
- 你定了方向告诉我。
== topic.note
? 合并了{svc}的分页修复，测试全绿。
? 上午都在查{svc}的内存泄漏，原来是个没有上限的缓存。
? 下午和小李结对做{svc}的重构。
? {svc}的热修复已经部署到预发环境，目前看没问题。
? {svc}压测跑完了，p99 回到 300 毫秒以下。
: 进展不错。后续建议：
: 好消息。继续之前：
- 加一个能复现原问题的回归测试，保证它不会再坏。
- 在变更日志里写一句，让客服知道改了什么。
- 接下来一天盯着错误率看板。
- 关掉相关工单并关联 PR。
- 检查其他服务里是否有同样的写法。
- 找个低峰时段安排生产发布，并在群里通知。
- 下个版本发布前去掉临时加的调试日志。
- 把这次学到的东西更新到操作手册里。
== topic.minor
? {svc}的 v1 接口月底下线。
? 定了：每周四中午开始代码冻结，跟着发布列车走。
? 站会改到 9:45。
? 以后依赖升级统一每周一个 PR。
? {svc}的管理后台暂时只对内开放。
? 定了：新服务的日志统一用结构化 JSON。
? 每次发布后由值班同学做十分钟的冒烟检查。
: 记下了。有几件事要跟上：
: 有道理。为了让它落地：
- 在团队群里通知，写明日期和联系人。
- 记进决策日志，让理由也能留下来。
- 更新还在描述旧做法的文档。
- 生效前一周设个日历提醒。
- 告诉客服团队，他们最先接到问题。
- 检查有没有自动化脚本或看板依赖旧的行为。
== pool.minorfact
- 顺便说下，预发集群加了两个节点。
- 设计评审改到周四下午三点了。
- 小李下周休假。
- 值班改成一周一轮了。
- 新的门禁卡周五前要换。
== pool.ack
- 好的，记下了。
- 收到，谢谢告知。
- 明白，记住了。
== pool.chit
- 今天好累啊
- 哈哈哈
- 第三杯咖啡了 ☕
- 办公室空调太冷了
- 周一综合症又犯了
- 猫刚踩过键盘，别理那行
- 脑子已经转不动了
- 又一个会，唉
- 外面又下雨了 🌧
- 终于快到周末了
- 午饭还挺好吃的
- 好想放假
- 站会开了四十分钟……
- 今天地铁挤爆了
- 哈哈，有道理
== pool.chitreply
- 辛苦了，下一个任务之前出去走走吧。
- 哈哈，确实。
- 听起来今天不轻松，我尽量说得短一点。
- 撑住，快结束了。
- 喝杯水歇一会儿再继续。
- 哈哈，理解。
== pool.confirm
- 好的
- 收到
- 明白了
- 行
- OK 谢谢
- 嗯嗯
- 好嘞
- 懂了
- 谢谢！
- 👍
== pool.confirmreply
- 不客气。
- 随时找我。
- 好的。
- 👌
- 没问题。
== pairs.temporary
? {m} 分钟后提醒我给{who}回个电话。
: 好的，{m} 分钟后提醒你。
? 我去吃个午饭，{m} 分钟后回来。
: 去吧，午饭愉快！
? 先去开个会，回来再聊。
: 好的，回来继续。
? 接个电话，稍等。
: 没问题，等你。
? 提醒我下班前把报销单交了。
: 好的，下午提醒你。
? 帮我看看三点的会议室订了没有……算了，我自己看到了。
: 好，那就行。
"""

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
    script = {key: "\n".join(lines) for key, lines in _sections(_SCRIPT_ZH if lang == "zh" else _SCRIPT_EN).items()}
    filler = _sections(_FILLER_ZH if lang == "zh" else _FILLER_EN)
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
