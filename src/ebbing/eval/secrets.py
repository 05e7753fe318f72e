"""How well the secret guard keeps credentials out of storage, and how rarely it touches ordinary text.

Three kinds of data, kept apart (docs/evaluation.md, "Secrets"):
- the generated corpus (`secrets_corpus`, written by a helper who had not read the guard): seed 0 is the
  development set the rules were tuned on; other seeds keep the sentence forms but draw new values;
- a held-out file written by another helper (tests/data/secrets-holdout.jsonl), scored once and then
  read, so it is development data now;
- public conversations (LoCoMo's 5,882 turns, LongMemEval's user turns): no secrets there, so every
  redaction is a false positive.

A sentence counts as protected when none of its secret values survives in the guarded text.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ebbing.eval import secrets_corpus
from ebbing.ingest.guard import guard


def _rate(hit: int, total: int) -> float | None:
    return round(hit / total, 4) if total else None


def score(cases: Iterable[tuple[str, str, str, tuple[str, ...]]]) -> dict[str, Any]:
    """(language, form, text, secrets) rows; an empty `secrets` is a near-miss. Per language: sentences
    fully protected, secret values redacted, near-misses touched."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    missed: list[dict[str, Any]] = []
    for language, form, text, secrets in cases:
        guarded = guard(text)
        block = counts[language]
        if not secrets:
            block["near_misses"] += 1
            block["near_misses_touched"] += bool(guarded.secrets)
            continue
        left = [s for s in secrets if s in guarded.text]
        block["sentences"] += 1
        block["sentences_protected"] += not left
        block["values"] += len(secrets)
        block["values_redacted"] += len(secrets) - len(left)
        if left:
            missed.append({"language": language, "form": form, "text": text, "left": left})
    languages = {}
    for language, block in sorted(counts.items()):
        languages[language] = {
            **block,
            "protected_rate": _rate(block["sentences_protected"], block["sentences"]),
            "false_positive_rate": _rate(block["near_misses_touched"], block["near_misses"]),
        }
    return {"languages": languages, "missed": missed}


def corpus(seed: int, per_form: int = 5) -> list[tuple[str, str, str, tuple[str, ...]]]:
    rows = [(c.language, c.form, c.text, c.secrets) for c in secrets_corpus.cases(seed=seed, per_form=per_form)]
    return rows + [(language, "near_miss", text, ()) for language, text in secrets_corpus.NEAR_MISSES]


def held_out(path: Path) -> list[tuple[str, str, str, tuple[str, ...]]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            rows.append((item["language"], item["form"], item["text"], tuple(item["secrets"])))
    return rows


def conversation_turns(locomo: Path | None, longmemeval: Path | None) -> dict[str, list[str]]:
    """The public turns: every LoCoMo turn, every distinct LongMemEval user turn."""
    turns: dict[str, list[str]] = {}
    if locomo is not None and locomo.exists():
        data = json.loads(locomo.read_text(encoding="utf-8"))
        turns["locomo"] = [t.get("text", "") for c in data for k, v in c["conversation"].items()
                           if k.startswith("session_") and isinstance(v, list) for t in v]
    if longmemeval is not None and longmemeval.exists():
        data = json.loads(longmemeval.read_text(encoding="utf-8"))
        turns["longmemeval"] = list(dict.fromkeys(t["content"] for q in data for s in q["haystack_sessions"]
                                                  for t in s if t["role"] == "user"))
    return turns


def false_positives(turns: list[str]) -> dict[str, Any]:
    touched = [t for t in turns if guard(t).secrets]
    return {"turns": len(turns), "touched": len(touched), "rate": _rate(len(touched), len(turns)),
            "examples": [t[:200] for t in touched[:10]]}
