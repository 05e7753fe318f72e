"""Classifier benchmark: how well the ingest classifier labels kind, pin and priority on labelled files.

    python -m ebbing.bench.classify [--data FILE ...] [--llm] [--json]

Each file is JSONL, one `{"text", "lang", "kind", "pin", "priority"}` per line. Without `--data` the four
files under `tests/data` are used (found next to the package in a checkout, else under the current
directory): `classify-dev.jsonl`, `classify-test.jsonl` and `classify-holdout2.jsonl`, which the rules
were written and tuned on (the last two were each held out and scored once, then became development
data), and `classify-holdout3.jsonl`, written afterwards by someone who had not read the rules or the
other files, and never used to tune. Every file is reported on its own, because only the held-out number
says how the rules generalise.

`--llm` evaluates `LLMClassifier` with the chat model `EBBING_LLM_BASE_URL`/`EBBING_LLM_MODEL` name.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console, RenderableType
from rich.table import Table

from ebbing.ingest.classify import Classifier, RuleClassifier

KINDS = ("fact", "preference", "decision", "temporary", "episode")
DEFAULT_FILES = ("classify-dev.jsonl", "classify-test.jsonl", "classify-holdout2.jsonl", "classify-holdout3.jsonl")
SHOWN_ERRORS = 20


def default_paths() -> list[Path]:
    """The labelled files of a checkout: tests/data beside src/, else tests/data under the current directory."""
    import ebbing

    candidates = [Path(ebbing.__file__).resolve().parents[2] / "tests" / "data", Path.cwd() / "tests" / "data"]
    for folder in candidates:
        paths = [folder / name for name in DEFAULT_FILES]
        if all(p.is_file() for p in paths):
            return paths
    raise FileNotFoundError("no tests/data/classify-*.jsonl found; pass --data FILE")


def load(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = {"text", "kind"} - row.keys()
        if missing:
            raise ValueError(f"{path}:{number}: missing {', '.join(sorted(missing))}")
        rows.append({**row, "line": number})
    return rows


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def evaluate(rows: Iterable[dict[str, Any]], classifier: Classifier) -> dict[str, Any]:
    """Scores of `classifier` on labelled rows: kind accuracy (overall, per language), confusion, pin, priority."""
    total = correct = priority_total = priority_correct = 0
    by_lang: Counter[str] = Counter()
    by_lang_correct: Counter[str] = Counter()
    confusion: dict[str, Counter[str]] = {}
    tp = fp = fn = 0
    mistakes: list[dict[str, Any]] = []
    other: list[dict[str, Any]] = []
    for row in rows:
        guess = classifier.classify(row["text"])
        truth, predicted = row["kind"], guess.kind.value
        lang = row.get("lang") or "?"
        total += 1
        by_lang[lang] += 1
        confusion.setdefault(truth, Counter())[predicted] += 1
        hit = truth == predicted
        correct += hit
        by_lang_correct[lang] += hit
        wrong = [] if hit else ["kind"]
        if "pin" in row:
            tp += row["pin"] and guess.pin
            fp += guess.pin and not row["pin"]
            fn += row["pin"] and not guess.pin
            if bool(row["pin"]) != guess.pin:
                wrong.append("pin")
        if "priority" in row:
            priority_total += 1
            priority_correct += row["priority"] == guess.priority.value
            if row["priority"] != guess.priority.value:
                wrong.append("priority")
        if wrong:
            entry = {
                "line": row["line"], "lang": lang, "text": row["text"], "wrong": wrong,
                "truth": {"kind": truth, "pin": row.get("pin"), "priority": row.get("priority")},
                "predicted": {"kind": predicted, "pin": guess.pin, "priority": guess.priority.value},
            }
            (mistakes if not hit else other).append(entry)
    labels = [k for k in KINDS if k in confusion or any(k in c for c in confusion.values())]
    labels += sorted(({k for c in confusion.values() for k in c} | confusion.keys()) - set(labels))
    return {
        "lines": total,
        "kind_accuracy": _ratio(correct, total),
        "kind_correct": correct,
        "per_language": {lang: {"lines": n, "kind_accuracy": _ratio(by_lang_correct[lang], n)}
                         for lang, n in sorted(by_lang.items())},
        "labels": labels,
        "confusion": {t: {p: confusion.get(t, Counter())[p] for p in labels} for t in labels},
        "pin": {"true_positives": tp, "false_positives": fp, "false_negatives": fn,
                "precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn)},
        "priority_accuracy": _ratio(priority_correct, priority_total),
        "misclassified": len(mistakes),
        "misclassified_shown": mistakes[:SHOWN_ERRORS],
        "pin_or_priority_errors": len(other),
        "pin_or_priority_errors_shown": other[:SHOWN_ERRORS],
    }


def run(paths: Sequence[Path] | None = None, classifier: Classifier | None = None) -> dict[str, Any]:
    """Evaluate `classifier` (default: the rules) on each labelled file; each file is scored separately."""
    chosen = RuleClassifier() if classifier is None else classifier
    files = [Path(p) for p in paths] if paths else default_paths()
    result: dict[str, Any] = {
        "classifier": getattr(chosen, "name", type(chosen).__name__),
        "files": [{"path": str(path), "name": path.name, **evaluate(load(path), chosen)} for path in files],
    }
    fallbacks = getattr(chosen, "fallbacks", None)
    if isinstance(fallbacks, int):
        result["llm_fallbacks"] = fallbacks
    return result


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def render(result: dict[str, Any]) -> list[RenderableType]:
    out: list[RenderableType] = []
    for scored in result["files"]:
        summary = Table(title=f"classifier '{result['classifier']}' on {scored['name']} ({scored['lines']} lines)")
        summary.add_column("measure")
        summary.add_column("value", justify="right")
        summary.add_row("kind accuracy", f"{_pct(scored['kind_accuracy'])} ({scored['kind_correct']}"
                                         f"/{scored['lines']})")
        for lang, part in scored["per_language"].items():
            summary.add_row(f"  kind accuracy, {lang}", f"{_pct(part['kind_accuracy'])} ({part['lines']} lines)")
        pin = scored["pin"]
        summary.add_row("pin precision / recall", f"{_pct(pin['precision'])} / {_pct(pin['recall'])} "
                                                  f"(tp {pin['true_positives']}, fp {pin['false_positives']}, "
                                                  f"fn {pin['false_negatives']})")
        summary.add_row("priority accuracy", _pct(scored["priority_accuracy"]))
        out.append(summary)

        labels = scored["labels"]
        matrix = Table(title="kind confusion (rows: truth, columns: predicted)")
        matrix.add_column("truth \\ predicted")
        for label in labels:
            matrix.add_column(label, justify="right")
        matrix.add_column("recall", justify="right")
        for truth in labels:
            counts = scored["confusion"][truth]
            n = sum(counts.values())
            cells = [f"[bold]{counts[p]}[/]" if p == truth else (str(counts[p]) if counts[p] else ".")
                     for p in labels]
            matrix.add_row(truth, *cells, _pct(counts[truth] / n if n else None))
        out.append(matrix)

        if scored["misclassified_shown"]:
            errors = Table(title=f"misclassified kinds (first {SHOWN_ERRORS} of {scored['misclassified']})")
            errors.add_column("line", justify="right")
            errors.add_column("lang")
            errors.add_column("truth")
            errors.add_column("predicted")
            errors.add_column("text", overflow="fold")
            for entry in scored["misclassified_shown"]:
                errors.add_row(str(entry["line"]), entry["lang"], entry["truth"]["kind"],
                               entry["predicted"]["kind"], entry["text"])
            out.append(errors)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ebbing.bench.classify",
                                     description="Evaluate the memory classifier on labelled JSONL files.")
    parser.add_argument("--data", type=Path, nargs="+", action="extend", default=None, metavar="FILE",
                        help="labelled JSONL files (default: the three files in tests/data)")
    parser.add_argument("--llm", action="store_true",
                        help="evaluate the LLM classifier (EBBING_LLM_BASE_URL, EBBING_LLM_MODEL) instead of the rules")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    classifier: Classifier | None = None
    if args.llm:
        from ebbing.ingest.classify import LLMClassifier
        from ebbing.llm.openai import OpenAIChat

        chat = OpenAIChat.from_env(os.environ)
        if chat is None:
            parser.error("--llm needs EBBING_LLM_BASE_URL and EBBING_LLM_MODEL")
        classifier = LLMClassifier(chat)
    try:
        result = run(args.data, classifier)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        console = Console()
        for renderable in render(result):
            console.print(renderable)


if __name__ == "__main__":
    main()
