"""Turning a run into numbers: the JSON summary, the tables (rich or Markdown) and the figure."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ebbing.eval.locomo import CATEGORIES, EVALUATED
from ebbing.eval.runner import BUDGETS, FATES, POOL, SYSTEMS, TOP_K, Outcome, Run

METRICS = tuple(f"recall@{k}" for k in TOP_K) + tuple(f"recall@{b}tok" for b in BUDGETS)
AGE_BUCKETS = ((0.0, 30.0, "<30 days"), (30.0, 90.0, "30-90 days"), (90.0, 180.0, "90-180 days"),
               (180.0, float("inf"), ">=180 days"))
LABELS = {"ebbing": "Ebbing (default: deep recall)", "ebbing_live": "Ebbing (live only)",
          "ebbing_cold": "Ebbing (archive always searched)", "full_bm25": "full history, BM25",
          "full_vector": "full history, vector", "fifo": "FIFO (same live size)",
          "ebbing_no_forgetting": "Ebbing, no forgetting"}


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def _recalls(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    return {metric: _mean([o.recall[metric] for o in outcomes]) for metric in METRICS}


def _evidence_rate(outcomes: Sequence[Outcome], keep: Any) -> dict[str, Any]:
    pairs = [found for o in outcomes for found, age, fate in zip(o.found, o.ages, o.fates, strict=True)
             if keep(age, fate)]
    return {"evidence": len(pairs), "found@10": _mean([float(f) for f in pairs])}


def _system(name: str, run: Run) -> dict[str, Any]:
    outcomes = run.outcomes[name]
    turns = sum(c.turns for c in run.conversations)
    live = sum(c.live[name] for c in run.conversations)
    latencies = [o.search_ms for o in outcomes]
    out: dict[str, Any] = {
        **_recalls(outcomes),
        "recall@10_asked_in_order": _mean([o.recall["recall@10_asked_in_order"] for o in outcomes]),
        "live_fraction": round(live / turns, 4) if turns else None,
        "live_records": live,
        "search_ms_p50": round(float(np.percentile(latencies, 50)), 2) if latencies else None,
        "search_ms_p95": round(float(np.percentile(latencies, 95)), 2) if latencies else None,
        "context_tokens": _mean([o.tokens["tokens@10"] for o in outcomes]),
        **{f"context_tokens@{b}tok": _mean([o.tokens[f"tokens@{b}tok"] for o in outcomes]) for b in BUDGETS},
        "questions": len(outcomes),
        "by_category": {},
        "found@10_by_evidence_age": {label: _evidence_rate(outcomes, lambda a, f, lo=lo, hi=hi: lo <= a < hi)
                                     for lo, hi, label in AGE_BUCKETS},
    }
    out["found@10_by_evidence_fate"] = {fate: _evidence_rate(outcomes, lambda a, f, t=fate: f == t)
                                        for fate in FATES}
    for category in EVALUATED:
        mine = [o for o in outcomes if o.category == category]
        out["by_category"][CATEGORIES[category]] = {"category": category, "questions": len(mine), **_recalls(mine)}
    judged = [o for o in outcomes if o.correct is not None]
    if judged:
        out["answer"] = {"J": _mean([float(bool(o.correct)) for o in judged]), "questions": len(judged),
                         "by_category": {CATEGORIES[c]: _mean([float(bool(o.correct)) for o in judged
                                                              if o.category == c]) for c in EVALUATED}}
    return out


def summary(run: Run, *, data: str, date: str, commit: str | None, changed: list[str] | None) -> dict[str, Any]:
    """The JSON the command prints: `{"systems": {...}, "run": {...}, "conversations": [...]}`."""
    questions = run.outcomes[SYSTEMS[0]]
    fates: dict[str, int] = {fate: sum(c.fates.get(fate, 0) for c in run.conversations) for fate in FATES}
    if run.llm is None:
        answer_level = ("skipped: no LLM configured (set EBBING_LLM_BASE_URL and EBBING_LLM_MODEL, and "
                        "EBBING_LLM_API_KEY if the server needs one)")
    else:
        answer_level = f"{run.llm} answered from the 2,000-token context and judged; systems: {', '.join(run.judged)}"
    return {
        "systems": {name: _system(name, run) for name in SYSTEMS},
        "run": {
            "benchmark": "LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0)",
            "data": data,
            "date": date,
            "commit": commit,
            "uncommitted_package_files": changed,  # files under src/ebbing that differed from the commit
            "conversations": [c.sample_id for c in run.conversations],
            "turns": sum(c.turns for c in run.conversations),
            "questions": len(questions),
            "questions_by_category": {CATEGORIES[c]: sum(o.category == c for o in questions) for c in EVALUATED},
            "left_out_without_evidence": sum(c.without_evidence for c in run.conversations),
            "unresolved_evidence_ids": sum(c.unresolved_evidence for c in run.conversations),
            "evidence_fate": fates,
            "evidence_trashed_or_purged": (round((fates.get("trash", 0) + fates.get("purged", 0))
                                                 / sum(fates.values()), 4) if sum(fates.values()) else None),
            "top_k": list(TOP_K),
            "budgets_tokens": list(BUDGETS),
            "budget_pool": POOL,
            "sweeps": run.sweeps,
            "turn_queries": run.turn_queries,
            "blas_threads": run.blas_threads,
            "workers": run.workers,
            "embedded_texts": run.embedded,
            "embed_seconds": round(run.embed_seconds, 1),
            "wall_seconds": round(run.seconds, 1),
            "answer_level": answer_level,
        },
        "conversations": [c.to_dict() for c in run.conversations],
    }


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def rows(result: dict[str, Any]) -> list[list[str]]:
    """The main table: one row per system."""
    out = []
    for name, s in result["systems"].items():
        out.append([name, *(_pct(s[m]) for m in METRICS), _pct(s["live_fraction"]), f"{s['context_tokens']:.0f}",
                    f"{s['search_ms_p50']:.1f}", f"{s['search_ms_p95']:.1f}"])
    return out


HEADER = ["system", "R@5", "R@10", "R@1000tok", "R@2000tok", "live %", "ctx tok (top 10)", "p50 ms", "p95 ms"]


def category_rows(result: dict[str, Any], metric: str = "recall@10") -> tuple[list[str], list[list[str]]]:
    names = [CATEGORIES[c] for c in EVALUATED]
    first = result["systems"][SYSTEMS[0]]["by_category"]
    header = ["system", *(f"{n} ({first[n]['questions']})" for n in names)]
    body = [[name, *(_pct(s["by_category"][n][metric]) for n in names)] for name, s in result["systems"].items()]
    return header, body


def age_rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    labels = [label for _, _, label in AGE_BUCKETS]
    first = result["systems"][SYSTEMS[0]]["found@10_by_evidence_age"]
    header = ["system", *(f"{label} ({first[label]['evidence']})" for label in labels)]
    body = [[name, *(_pct(s["found@10_by_evidence_age"][label]["found@10"]) for label in labels)]
            for name, s in result["systems"].items()]
    return header, body


def fate_rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    first = result["systems"][SYSTEMS[0]]["found@10_by_evidence_fate"]
    header = ["system", *(f"{fate} ({first[fate]['evidence']})" for fate in FATES)]
    body = [[name, *(_pct(s["found@10_by_evidence_fate"][fate]["found@10"]) for fate in FATES)]
            for name, s in result["systems"].items()]
    return header, body


def markdown(result: dict[str, Any]) -> str:
    """The tables as Markdown, for docs/evaluation.md."""

    def table(header: list[str], body: list[list[str]]) -> str:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
        return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in body)])

    parts = [table(HEADER, rows(result)),
             "Recall@10 by category (questions):\n\n" + table(*category_rows(result)),
             "Evidence ids found in the top 10, by the turn's age at question time (evidence ids over all "
             "questions):\n\n"
             + table(*age_rows(result)),
             "Evidence ids found in the top 10, by where Ebbing (forgetting on) keeps the turn at question time "
             "(evidence ids over all questions):\n\n" + table(*fate_rows(result))]
    return "\n\n".join(parts) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    """Recall@10 and recall@2000tok against the live store size (share of turns), one point per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = result["run"]
    figure, axes = plt.subplots(1, 2, figsize=(11.0, 4.8), dpi=120, sharey=True)
    colours = {"ebbing": "#d62728", "ebbing_live": "#8c564b",
               "ebbing_cold": "#1f77b4", "full_bm25": "#2ca02c", "full_vector": "#9467bd",
               "fifo": "#7f7f7f", "ebbing_no_forgetting": "#ff7f0e"}
    markers = {"ebbing": "o", "ebbing_live": "P", "ebbing_cold": "s", "full_bm25": "^", "full_vector": "v", "fifo": "X",
               "ebbing_no_forgetting": "D"}
    # Systems of the same store size sit on top of each other: each value is written beside its point.
    offsets = {"ebbing": (8, -14), "ebbing_live": (8, -4),
               "ebbing_cold": (8, 6), "fifo": (-34, 6), "full_bm25": (-40, 6),
               "full_vector": (-40, -12), "ebbing_no_forgetting": (-46, -4)}
    for axis, metric in zip(axes, ("recall@10", "recall@2000tok"), strict=True):
        for name, s in result["systems"].items():
            x, y = 100 * s["live_fraction"], 100 * s[metric]
            axis.scatter([x], [y], s=70, color=colours.get(name, "black"), marker=markers.get(name, "o"),
                         label=LABELS.get(name, name), zorder=3)
            axis.annotate(f"{y:.1f}", (x, y), textcoords="offset points", xytext=offsets.get(name, (6, 6)),
                          fontsize=8, color=colours.get(name, "black"))
        axis.set_xlabel("live store (hot + warm records), % of turns")
        axis.set_title(f"evidence {metric}")
        axis.set_xlim(0, 105)
        axis.set_ylim(0, 100)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("evidence recall, %")
    axes[1].legend(loc="lower right", fontsize=8)
    commit = run.get("commit") or "unknown commit"
    figure.suptitle(f"LoCoMo, {len(run['conversations'])} conversations, {run['questions']} questions "
                    f"(categories 1-4) — {run['date']}, {commit}", fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
