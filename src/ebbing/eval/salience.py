"""Salience judged at write time (`ebbing.ingest.salience`), scored on labelled utterances.

A case file is JSON Lines, one utterance a line: `{"id", "lang": "en"|"zh", "text", "later": 0|1}`, `later`
saying whether a memory should keep it for weeks or months because someone will plausibly ask about it or
rely on it. The development set (`tests/data/salience-dev.jsonl`) is what the shipped model is fitted on;
the held-out set (`tests/data/salience-holdout.jsonl`) was written from the same brief (docs/salience-brief.md)
by someone who saw neither the model nor the development set.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ebbing.embed.base import Embedder
from ebbing.errors import InvalidInput
from ebbing.ingest.classify import classify
from ebbing.ingest.salience import SalienceModel, fit, shipped
from ebbing.jsonl import read as read_jsonl
from ebbing.model import Kind

KEEP = 0.5  # the probability above which a judged utterance counts as "keep" for precision and recall


def load(path: Path) -> list[dict[str, Any]]:
    """Read and check a file of labelled utterances; a bad line is an error naming the file, line and rule."""
    rows = []
    for number, row, problem in read_jsonl(path):
        if row is None:
            raise InvalidInput("data", f"{path}: {problem}")
        if (not isinstance(row.get("text"), str) or row.get("later") not in (0, 1)
                or row.get("lang") not in ("en", "zh")):
            raise InvalidInput("data", f"{path}:{number} needs text (string), later (0 or 1) and lang (en or zh)")
        rows.append(row)
    return rows


def _kinds(rows: Sequence[dict[str, Any]]) -> list[Kind]:
    return [classify(row["text"]).kind for row in rows]


def fit_model(rows: Sequence[dict[str, Any]], embedder: Embedder) -> SalienceModel:
    texts = [row["text"] for row in rows]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float64)
    labels = np.array([row["later"] for row in rows], dtype=np.float64)
    return fit(texts, _kinds(rows), vectors, labels, f"{embedder.name}:{embedder.dimensions}")


def auc(scores: np.ndarray, labels: np.ndarray) -> float | None:
    """Area under the ROC curve: the chance a random keeper scores above a random throwaway (ties count half)."""
    positive, negative = scores[labels == 1], scores[labels == 0]
    if not len(positive) or not len(negative):
        return None
    above = (positive[:, None] > negative[None, :]).sum() + 0.5 * (positive[:, None] == negative[None, :]).sum()
    return round(float(above) / (len(positive) * len(negative)), 4)


def _block(scores: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    kept = scores >= KEEP
    true_keep = int((kept & (labels == 1)).sum())
    return {"utterances": len(labels), "later": int(labels.sum()), "auc": auc(scores, labels),
            "accuracy": round(float((kept == (labels == 1)).mean()), 4) if len(labels) else None,
            "keep_precision": round(true_keep / int(kept.sum()), 4) if kept.sum() else None,
            "keep_recall": round(true_keep / int(labels.sum()), 4) if labels.sum() else None,
            "mean_salience_later": round(float(scores[labels == 1].mean()), 4) if labels.sum() else None,
            "mean_salience_not": round(float(scores[labels == 0].mean()), 4) if (labels == 0).any() else None}


def evaluate(rows: Sequence[dict[str, Any]], embedder: Embedder, model: SalienceModel | None = None
             ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per language and overall: AUC, accuracy, precision and recall of "keep" at `KEEP`; and each row's score."""
    model = model or shipped()
    texts = [row["text"] for row in rows]
    vectors = embedder.embed(texts)
    name = f"{embedder.name}:{embedder.dimensions}"
    judged = [model.judge(text, kind, vector, name) for text, kind, vector in zip(texts, _kinds(rows), vectors,
                                                                                    strict=True)]
    scores = np.array([j.salience for j in judged])
    labels = np.array([row["later"] for row in rows], dtype=np.float64)
    langs = np.array([row["lang"] for row in rows])
    report = {"languages": {lang: _block(scores[langs == lang], labels[langs == lang])
                            for lang in sorted(set(langs.tolist()))},
              "all": _block(scores, labels), "probe_used": judged[0].probe is not None if judged else None}
    scored = [{"id": row.get("id"), "later": row["later"], "salience": round(j.salience, 3)}
              for row, j in zip(rows, judged, strict=True)]
    return report, scored
