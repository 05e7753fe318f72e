"""`ebbing eval updates`: does the memory know what changed, what is the same thing said again, and what
only looks alike?

A case file (JSON Lines, format in docs/evaluation.md) holds short histories of one user, each replayed
into its own user of one `Memory` through the public API at the case's times:

- `update`: a value is stated, maybe used, then changed. Answered newest-first when the top hit for the
  question holds the current value (and so nothing above it holds the old one); the old value must still be
  found by a question about the past (in the top 3).
- `lookalike`: statements of the same shape about different things, all true at once. Both kept when each
  probe's top hit is its own statement and no record of the case was superseded by, or merged with, another.
- `restatement`: adds labelled by group; the same label is the same memory said again. Pairs of adds are
  scored: same group and the same record is a correct merge, different groups and the same record a wrong one.

A supersession is read from the audit log (a `supersede` event names the record that replaced it), so the
measurement needs nothing but what any user of the library can see.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from ebbing.embed.base import Embedder
from ebbing.errors import InvalidInput
from ebbing.eval.systems import CachingEmbedder
from ebbing.ingest.classify import classify
from ebbing.judgement import sameness
from ebbing.memory import Memory
from ebbing.recall.background import BACKGROUND_EN, background_vectors
from ebbing.recall.search import Background, is_cjk

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # day 0 of every case
TYPES = ("update", "lookalike", "restatement")


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    type: str
    steps: list[dict[str, Any]]
    ask_day: float
    raw: dict[str, Any]


def load(path: str | Path) -> list[Case]:
    """Read and check a case file; a bad line is an error naming its line and field."""
    cases: list[Case] = []
    seen: set[str] = set()
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput("data", f"line {number}: not JSON ({exc.msg})") from None
        if not isinstance(raw, dict):
            raise InvalidInput("data", f"line {number}: must be a JSON object")
        for name in ("id", "lang", "type", "steps", "ask_day"):
            if name not in raw:
                raise InvalidInput(name, f"line {number}: missing")
        if raw["type"] not in TYPES:
            raise InvalidInput("type", f"line {number}: must be one of {', '.join(TYPES)}")
        if raw["id"] in seen:
            raise InvalidInput("id", f"line {number}: {raw['id']} is used twice")
        seen.add(raw["id"])
        steps = raw["steps"]
        if not isinstance(steps, list) or not all(isinstance(s, dict) and ("add" in s) != ("search" in s)
                                                  and isinstance(s.get("day"), int | float) for s in steps):
            raise InvalidInput("steps", f"line {number}: each step needs a day and one of add or search")
        needed = {"update": ("question", "current", "old"), "lookalike": ("probes",), "restatement": ()}
        for name in needed[raw["type"]]:
            if not raw.get(name):
                raise InvalidInput(name, f"line {number}: missing")
        cases.append(Case(str(raw["id"]), str(raw["lang"]), str(raw["type"]), steps, float(raw["ask_day"]), raw))
    return cases


def texts(cases: Iterable[Case]) -> tuple[list[str], list[str]]:
    """Every passage and every query the run will embed."""
    passages: list[str] = []
    queries: list[str] = []
    for case in cases:
        for step in case.steps:
            (passages if "add" in step else queries).append(step.get("add") or step["search"])
        queries += [case.raw[k] for k in ("question", "past_question") if case.raw.get(k)]
        queries += [p["question"] for p in case.raw.get("probes", [])]
    return passages, queries


@dataclass
class Outcome:
    case: Case
    passed: bool
    detail: dict[str, Any] = field(default_factory=dict)


def _at(day: float) -> datetime:
    return START + timedelta(days=day)


def _has(text: str, needle: str) -> bool:
    return needle.casefold() in text.casefold()


def _superseded(mem: Memory, ids: Iterable[str]) -> dict[str, str]:
    """Record id -> the id that superseded it, from the audit log."""
    out = {}
    for memory_id in set(ids):
        for event in mem.history(memory_id):
            if event.type == "supersede":
                out[memory_id] = str(event.data.get("superseded_by"))
    return out


def replay(mem: Memory, case: Case) -> list[tuple[dict[str, Any], str]]:
    """Run the case's steps; returns each add step with the id of the record it ended up as."""
    added = []
    for step in case.steps:
        if "add" in step:
            result = mem.add(step["add"], user_id=case.id, at=_at(step["day"]))
            added.append((step, result.records[0].id))
        else:
            mem.search(step["search"], user_id=case.id, at=_at(step["day"]))
    return added


def _merged_pairs(ids: Sequence[str]) -> int:
    """Pairs of adds that ended up as one record."""
    return sum(n * (n - 1) // 2 for n in Counter(ids).values())


def judge_case(mem: Memory, case: Case) -> Outcome:
    added = replay(mem, case)
    at = _at(case.ask_day)
    ids = [record for _, record in added]
    superseded = _superseded(mem, ids)
    if case.type == "update":
        hits = mem.search(case.raw["question"], user_id=case.id, at=at)
        top = hits[0].record.text if hits else ""
        newest = bool(hits) and _has(top, case.raw["current"])
        past = case.raw.get("past_question")
        past_hits = mem.search(past, user_id=case.id, at=at, limit=3) if past else []
        old_ids = {record for step, record in added if _has(step["add"], case.raw["old"])}
        new_ids = {record for step, record in added if _has(step["add"], case.raw["current"])}
        detail = {"top": top, "newest_first": newest, "merged": _merged_pairs(ids),
                  "past_found": any(_has(h.record.text, case.raw["old"]) for h in past_hits) if past else None,
                  "old_superseded": any(superseded.get(i) in new_ids for i in old_ids),
                  "wrongly_superseded": sorted(i for i, by in superseded.items() if i not in old_ids),
                  "merged_old_and_new": bool(old_ids & new_ids)}
        return Outcome(case, newest, detail)
    if case.type == "lookalike":
        firsts = []
        for probe in case.raw["probes"]:
            hits = mem.search(probe["question"], user_id=case.id, at=at)
            firsts.append(bool(hits) and _has(hits[0].record.text, probe["expect"]))
        merged = len(set(ids)) < len(ids)
        detail = {"probes_first": firsts, "superseded": sorted(superseded), "merged": merged,
                  "merged_pairs": _merged_pairs(ids)}
        false = bool(superseded) or merged
        return Outcome(case, all(firsts) and not false, {**detail, "false_supersession": false})
    pairs = {"tp": 0, "fn": 0, "fp": 0}
    group_of = {record: step.get("group") for step, record in added}
    for (a, record_a), (b, record_b) in combinations(added, 2):
        same_group, same_record = a.get("group") == b.get("group"), record_a == record_b
        if same_group:
            pairs["tp" if same_record else "fn"] += 1
        elif same_record:
            pairs["fp"] += 1
    wrong = sorted(i for i, by in superseded.items() if group_of.get(i) != group_of.get(by))
    return Outcome(case, pairs["fn"] == 0 and pairs["fp"] == 0 and not wrong,
                   {**pairs, "false_supersession": bool(wrong), "superseded": wrong})


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 4) if den else None


def summarise(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    updates = [o for o in outcomes if o.case.type == "update"]
    looks = [o for o in outcomes if o.case.type == "lookalike"]
    groups = [o for o in outcomes if o.case.type == "restatement"]
    past = [o for o in updates if o.detail["past_found"] is not None]
    tp, fn, fp = (sum(o.detail[k] for o in groups) for k in ("tp", "fn", "fp"))
    elsewhere = sum(o.detail["merged"] for o in updates) + sum(o.detail["merged_pairs"] for o in looks)
    asked = [o for o in outcomes if "offtopic" in o.detail]
    return {
        "updates": len(updates),
        "newest_first": _ratio(sum(o.passed for o in updates), len(updates)),
        "past_found": _ratio(sum(bool(o.detail["past_found"]) for o in past), len(past)),
        "old_superseded": _ratio(sum(o.detail["old_superseded"] for o in updates), len(updates)),
        "update_wrong_supersessions": sum(len(o.detail["wrongly_superseded"]) for o in updates),
        "lookalikes": len(looks),
        "lookalikes_kept": _ratio(sum(o.passed for o in looks), len(looks)),
        "lookalike_false_supersession": _ratio(sum(o.detail["false_supersession"] for o in looks), len(looks)),
        "restatement_cases": len(groups),
        "merge_recall": _ratio(tp, tp + fn),
        "merge_precision": _ratio(tp, tp + fp),
        "restatement_false_supersession": _ratio(sum(o.detail["false_supersession"] for o in groups), len(groups)),
        # Two statements of an update or look-alike case made one record: a different value or thing folded into
        # another, which the restatement precision above does not see. Counted as wrong merges in the last line.
        "wrong_merges_elsewhere": elsewhere,
        "merge_precision_all": _ratio(tp, tp + fp + elsewhere),
        # An unrelated question should find nothing: the relevance floor's precision
        "offtopic_asked": len(asked),
        "offtopic_answered": _ratio(sum(o.detail["offtopic"]["answered"] for o in asked), len(asked)),
    }


def load_offtopic(path: str | Path) -> list[dict[str, str]]:
    """Questions no remembered statement answers (JSON Lines with "lang" and "text"); a bad line is an error
    naming its line and field."""
    out = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput("offtopic", f"{path} line {number}: not JSON ({exc.msg})") from None
        for name in ("lang", "text"):
            if not isinstance(row, dict) or not isinstance(row.get(name), str) or not row[name].strip():
                raise InvalidInput("offtopic", f"{path} line {number}: needs a non-empty string field {name}")
        out.append({"lang": row["lang"], "text": row["text"]})
    return out


def ask_offtopic(mem: Memory, case: Case, question: str) -> bool:
    """Whether a question none of the case's statements answers still returned something (asked after the case
    was judged, so its uses change nothing that was scored)."""
    return bool(mem.search(question, user_id=case.id, at=_at(case.ask_day)))


def run(cases: Sequence[Case], embedder: Embedder, *, on_case: Callable[[], None] | None = None,
        folder: Path | None = None, model: sameness.SamenessModel | None = None,
        restatement: sameness.SamenessModel | None = None, offtopic: Sequence[dict[str, str]] = ()
        ) -> tuple[dict[str, Any], list[Outcome]]:
    """Replay every case into one store (a user per case) and score it; per language and in all. With `offtopic`,
    each case's store is also asked one of the questions of its language (in turn), which should return nothing."""
    cache = embedder if isinstance(embedder, CachingEmbedder) else CachingEmbedder(embedder)
    passages, queries = texts(cases)
    cache.prime(passages)
    cache.prime([*queries, *(q["text"] for q in offtopic)], query=True)
    by_lang: dict[str, list[str]] = {}
    for row in offtopic:
        by_lang.setdefault(row["lang"], []).append(row["text"])
    turn: Counter[str] = Counter()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="ebbing-updates-", dir=folder) as tmp, \
            Memory(Path(tmp) / "updates.db", embedder=cache, archive=Path(tmp) / "archive") as mem:
        if model is not None:  # ranking and the write-time judge both ask it
            mem.ranker.sameness = mem.ingest.sameness = model
        if restatement is not None:
            mem.ingest.restatement = restatement
        for case in cases:
            outcome = judge_case(mem, case)
            questions = by_lang.get(case.lang, [])
            if questions:
                question = questions[turn[case.lang] % len(questions)]
                turn[case.lang] += 1
                outcome.detail["offtopic"] = {"question": question, "answered": ask_offtopic(mem, case, question)}
            outcomes.append(outcome)
            if on_case:
                on_case()
    languages = sorted({o.case.lang for o in outcomes})
    report = {"languages": {lang: summarise([o for o in outcomes if o.case.lang == lang]) for lang in languages},
              "all": summarise(outcomes)}
    return report, outcomes


def failures(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """The cases that failed, and the off-topic questions that returned something."""
    return [{"id": o.case.id, **o.detail} for o in outcomes
            if not o.passed or o.detail.get("offtopic", {}).get("answered")]


# --- the pairs the sameness model is fitted on (ebbing eval updates --fit) ---------------------------------


@dataclass(frozen=True)
class Pair:
    old: str
    new: str
    same: bool  # the same attribute: a new value of it, or it said again
    case: str


def pairs(cases: Iterable[Case], *, restatements: bool = False) -> list[Pair]:
    """Labelled pairs of statements, older first: an update's old and new statements are the same attribute,
    and its new statement against the other earlier ones is not; a look-alike case's statements are pairwise
    not; a restatement case's adds are the same within a group and not across groups. With `restatements` the
    label asks whether the newer says the same thing again: only a restatement group's pairs are, and an update's
    old and new value are not."""
    if restatements:
        kinds = {case.id: case.type for case in cases}
        return [replace(p, same=p.same and kinds[p.case] == "restatement") for p in pairs(cases)]
    out: list[Pair] = []
    for case in cases:
        adds = [step for step in case.steps if "add" in step]
        if case.type == "update":
            new = max((i for i, s in enumerate(adds) if _has(s["add"], case.raw["current"])), default=None)
            old = min((i for i, s in enumerate(adds) if _has(s["add"], case.raw["old"])), default=None)
            if new is None or old is None or old >= new:
                continue
            out += [Pair(adds[i]["add"], adds[new]["add"], i == old, case.id) for i in range(new)]
        else:
            out += [Pair(a["add"], b["add"], case.type == "restatement" and a.get("group") == b.get("group"),
                         case.id) for a, b in combinations(adds, 2)]
    return out


def unrelated_pairs(texts: Sequence[str], embedder: Embedder, neighbours: int = 2) -> list[Pair]:
    """Pairs of different things said near each other in meaning: each statement with its `neighbours` nearest
    others of the same language. The cases' own negatives are look-alikes (same shape, another subject); without
    these the model also called two turns of one conversation on one topic ("Thanks, my family means a lot to me"
    / "We took the kids camping last weekend") the same attribute, with high confidence. The statements come from
    utterances labelled for other purposes (salience, kinds), one saying each, so a pair of them is two things."""
    unique = sorted({t for t in texts if len(t.strip()) >= 4})  # "ok", an emoji: nothing to pair
    if len(unique) < 2:
        return []
    vectors = np.asarray(embedder.embed(unique), dtype=np.float32)
    cjk = np.array([is_cjk(t) for t in unique])
    similar = vectors @ vectors.T
    similar[cjk[:, None] != cjk[None, :]] = -np.inf  # within one language
    np.fill_diagonal(similar, -np.inf)
    out: dict[tuple[int, int], Pair] = {}
    for i in range(len(unique)):
        for j in np.argsort(-similar[i])[:neighbours]:
            if np.isfinite(similar[i, j]):
                a, b = sorted((i, int(j)))
                out.setdefault((a, b), Pair(unique[a], unique[b], False, f"unrelated-{a}"))
    return list(out.values())


class _Meta(dict[str, str]):
    """A throw-away cache for background vectors of an embedder that does not ship them."""

    def get_meta(self, key: str) -> str | None:
        return self.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self[key] = value


def background(embedder: Embedder) -> Background:
    passages, queries = background_vectors(embedder, _Meta())
    split = len(BACKGROUND_EN)
    return Background({False: passages[:split], True: passages[split:]},
                      {False: queries[:split], True: queries[split:]})


def fit_model(cases: Sequence[Case], embedder: Embedder, unrelated: Sequence[str] = (), *,
              restatements: bool = False) -> sameness.SamenessModel:
    """Fit the sameness model (with `restatements`: the restatement model) on every labelled pair of `cases`, and
    on pairs of `unrelated` statements that are near each other in meaning (`unrelated_pairs`)."""
    labelled = pairs(cases, restatements=restatements) + unrelated_pairs(unrelated, embedder)
    if not labelled or len({p.same for p in labelled}) < 2:
        raise InvalidInput("data", "needs pairs of both labels (update, look-alike and restatement cases)")
    unique = sorted({p.old for p in labelled} | {p.new for p in labelled})
    vector = dict(zip(unique, np.asarray(embedder.embed(unique), dtype=np.float32), strict=True))
    kind = {text: classify(text).kind for text in unique}
    bg = background(embedder)
    old = np.stack([vector[p.old] for p in labelled])
    new = np.stack([vector[p.new] for p in labelled])
    z = [float(bg.z(vector[p.new], is_cjk(p.new), vector[p.old][None, :], np.array([is_cjk(p.old)]))[0])
         for p in labelled]
    signals = np.stack([sameness.signal_vector(p.old, p.new, score, kind[p.old], kind[p.new])
                        for p, score in zip(labelled, z, strict=True)])
    labels = np.array([p.same for p in labelled], dtype=np.float64)
    return sameness.fit(old, new, signals, labels, [p.case for p in labelled], f"{embedder.name}:{embedder.dimensions}")
