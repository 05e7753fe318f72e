"""`ebbing eval forget`: when a user asks to forget, is the right thing forgotten and nothing else?

A case file (JSON Lines, format in docs/forget-brief.md) holds short histories of one user, each ending with
one message. Each case is replayed into a `Memory` of its own (so one case's keyword statistics cannot shift
another's ranking) through the public API: the memories at their times, a sweep (so old ones may sit in the
archive, as they would), then the message with `add`.

Scored per language:
- targets forgotten (recall): a request's targets in the trash or purged after the message; targets the
  sweep had already sent to the trash are left out of the count;
- collateral: records that are not targets forgotten by the message, in every type of case;
- false triggers: near-misses whose message forgot anything; near-misses not stored (taken for a request);
- requests stored as memories: request, ambiguous and off-the-record messages that left a record;
- ambiguous cases asked about: nothing forgotten and the targets among the candidates (those the sweep had
  already sent to the trash cannot be offered and are not required).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ebbing.embed.base import Embedder
from ebbing.errors import InvalidInput, NotFound
from ebbing.eval.systems import CachingEmbedder
from ebbing.memory import Memory

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)  # the final message of every case
TYPES = ("request", "ambiguous", "off_record", "near_miss")
TARGET_KINDS = ("topic", "field", "previous", "entity")


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    type: str
    target_kind: str | None
    memories: list[dict[str, Any]]
    turn: dict[str, Any]
    targets: list[str]


def load(path: str | Path) -> list[Case]:
    """Read and check a case file; a bad line is an error naming its line and field."""
    cases: list[Case] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{Path(path).name} line {number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(where, f"not JSON: {exc.msg}") from None
        for name in ("id", "lang", "type", "memories", "turn", "targets"):
            if name not in raw:
                raise InvalidInput(f"{where}: {name}", "required")
        if raw["type"] not in TYPES:
            raise InvalidInput(f"{where}: type", f"must be one of {', '.join(TYPES)}")
        keys = [m.get("key") for m in raw["memories"]]
        if any(t not in keys for t in raw["targets"]):
            raise InvalidInput(f"{where}: targets", "must be keys of the case's memories")
        if not isinstance(raw["turn"], dict) or not isinstance(raw["turn"].get("text"), str):
            raise InvalidInput(f"{where}: turn", "must be an object with a text")
        cases.append(Case(str(raw["id"]), str(raw["lang"]), raw["type"], raw.get("target_kind"), raw["memories"],
                          raw["turn"], list(raw["targets"])))
    return cases


@dataclass
class Outcome:
    case: Case
    detected: str | None  # the kind of request the message was taken for; None: stored as a memory
    stored: bool
    targets: int  # targets still there to forget when the message came
    forgotten_targets: list[str] = field(default_factory=list)
    collateral: list[str] = field(default_factory=list)
    ambiguous: bool = False
    candidates: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)  # targets the sweep had sent to the trash: nothing to offer


def _place(mem: Memory, memory_id: str) -> str:
    try:
        return mem.get(memory_id).tier.value
    except NotFound:
        return "purged"


def judge_case(mem: Memory, case: Case) -> Outcome:
    user = case.id
    ids: dict[str, str] = {}
    for memory in case.memories:
        at = NOW - timedelta(days=float(memory.get("days_ago", 0))) - timedelta(minutes=2)
        role = memory.get("role", "user")
        result = mem.add(memory["text"], user_id=user, at=at, metadata={"role": role} if role != "user" else None)
        if result.records:
            ids[memory["key"]] = result.records[0].id
    mem.sweep(at=NOW - timedelta(minutes=1), user_id=user)
    before = {key: _place(mem, i) for key, i in ids.items()}
    gone = {"trash", "purged"}
    role = case.turn.get("role", "user")
    result = mem.add(case.turn["text"], user_id=user, at=NOW, metadata={"role": role} if role != "user" else None)
    after = {key: _place(mem, i) for key, i in ids.items()}
    newly = [key for key in ids if after[key] in gone and before[key] not in gone]
    targets = [t for t in case.targets if t in ids and before[t] not in gone]
    keys_of = {i: key for key, i in ids.items()}
    outcome = result.forget
    return Outcome(case, outcome.kind if outcome else None, bool(result.records), len(targets),
                   [k for k in newly if k in targets], [k for k in newly if k not in case.targets],
                   bool(outcome and outcome.ambiguous),
                   [keys_of.get(h.record.id, h.record.id) for h in (outcome.candidates if outcome else [])],
                   [t for t in case.targets if t not in ids or before[t] in gone])


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def summarise(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    requests = [o for o in outcomes if o.case.type == "request"]
    near = [o for o in outcomes if o.case.type == "near_miss"]
    ambiguous = [o for o in outcomes if o.case.type == "ambiguous"]
    off = [o for o in outcomes if o.case.type == "off_record"]
    targets = sum(o.targets for o in requests)
    hit = sum(len(o.forgotten_targets) for o in requests)
    by_kind = {}
    for kind in TARGET_KINDS:
        chosen = [o for o in requests if o.case.target_kind == kind]
        if chosen:
            by_kind[kind] = _rate(sum(len(o.forgotten_targets) for o in chosen), sum(o.targets for o in chosen))
    return {
        "requests": len(requests),
        "targets": targets,
        "targets_forgotten": _rate(hit, targets),
        "targets_forgotten_by_kind": by_kind,
        "requests_fully_right": _rate(sum(1 for o in requests if len(o.forgotten_targets) == o.targets
                                          and not o.collateral), len(requests)),
        "requests_detected": _rate(sum(1 for o in requests if o.detected), len(requests)),
        "collateral": sum(len(o.collateral) for o in outcomes),
        "collateral_cases": sum(1 for o in outcomes if o.collateral),
        "near_misses": len(near),
        "false_triggers": sum(1 for o in near if o.forgotten_targets or o.collateral),
        "near_misses_not_stored": sum(1 for o in near if not o.stored),
        "requests_stored": sum(1 for o in requests + ambiguous + off if o.stored),
        "ambiguous": len(ambiguous),
        "ambiguous_asked": sum(1 for o in ambiguous if o.ambiguous and not o.collateral and not o.forgotten_targets
                               and set(o.case.targets) - set(o.gone) <= set(o.candidates)),
        "ambiguous_forgot": sum(1 for o in ambiguous if o.collateral or o.forgotten_targets),
        "off_record": len(off),
        "off_record_kept_out": sum(1 for o in off if not o.stored),
    }


def run(cases: Sequence[Case], embedder: Embedder, *, on_case: Callable[[], None] | None = None,
        folder: Path | None = None) -> tuple[dict[str, Any], list[Outcome]]:
    """Replay every case into a store of its own and score it; per language and in all.

    A store per case, not a user per case in one store: keyword statistics (bm25's document frequencies)
    span a whole store, so cases sharing one would shift each other's relevance and an outcome would
    depend on its neighbours in the file.
    """
    cache = embedder if isinstance(embedder, CachingEmbedder) else CachingEmbedder(embedder)
    cache.prime([m["text"] for c in cases for m in c.memories] + [c.turn["text"] for c in cases])
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="ebbing-forget-", dir=folder) as tmp:
        for n, case in enumerate(cases):
            with Memory(Path(tmp) / f"case-{n}.db", embedder=cache, archive=Path(tmp) / f"archive-{n}") as mem:
                outcomes.append(judge_case(mem, case))
            if on_case:
                on_case()
    languages = sorted({o.case.lang for o in outcomes})
    report = {"languages": {lang: summarise([o for o in outcomes if o.case.lang == lang]) for lang in languages},
              "all": summarise(outcomes)}
    return report, outcomes


def failures(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    out = []
    for o in outcomes:
        wrong = (o.collateral or (o.case.type == "request" and len(o.forgotten_targets) < o.targets)
                 or (o.case.type in ("request", "ambiguous", "off_record") and o.stored)
                 or (o.case.type == "near_miss" and not o.stored)
                 or (o.case.type == "ambiguous" and not o.ambiguous))
        if wrong:
            out.append({"id": o.case.id, "turn": o.case.turn["text"], "kind": o.case.target_kind,
                        "detected": o.detected, "stored": o.stored, "targets": o.case.targets,
                        "forgotten": o.forgotten_targets, "collateral": o.collateral, "candidates": o.candidates})
    return out
