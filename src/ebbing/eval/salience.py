"""Salience judged at write time (`ebbing.ingest.salience`), scored on labelled utterances.

A case file is JSON Lines, one utterance a line: `{"id", "lang": "en"|"zh", "text", "later": 0|1}`, `later`
saying whether a memory should keep it for weeks or months because someone will plausibly ask about it or
rely on it. The development set (`tests/data/salience-dev.jsonl`) is what the shipped model is fitted on;
the held-out set (`tests/data/salience-holdout.jsonl`) was written from the same brief (docs/salience-brief.md)
by someone who saw neither the model nor the development set.

A row may carry `context`, the message just before it (a reply's meaning often lies in the question it
answers): such a row is judged in context (`SalienceModel.judge(..., context=...)`), and its label says whether
the reply, read with that message, is worth keeping (docs/salience-context-brief.md). Fitting (`fit_model`)
fits the model on the rows without context and its in-context combiner on the rows with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ebbing.embed.base import Embedder
from ebbing.errors import InvalidInput
from ebbing.ingest.classify import classify
from ebbing.ingest.salience import Context, SalienceModel, context_vector, fit, fit_in_context, shipped
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
        if "context" in row and not (isinstance(row["context"], str) and row["context"].strip()):
            raise InvalidInput("data", f"{path}:{number}: context, when given, must be a non-empty string")
        rows.append(row)
    return rows


def _kinds(rows: Sequence[dict[str, Any]]) -> list[Kind]:
    return [classify(row["text"]).kind for row in rows]


def fit_model(rows: Sequence[dict[str, Any]], embedder: Embedder) -> SalienceModel:
    """The model on the rows without context, then its in-context combiner on the rows with it (if any)."""
    alone = [row for row in rows if "context" not in row]
    if not alone:
        raise InvalidInput("data", "fitting needs utterances without context (the model judges those first)")
    texts = [row["text"] for row in alone]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float64)
    labels = np.array([row["later"] for row in alone], dtype=np.float64)
    name = f"{embedder.name}:{embedder.dimensions}"
    model = fit(texts, _kinds(alone), vectors, labels, name)
    replies = [row for row in rows if "context" in row]
    if not replies:
        return model
    features = context_features(replies, embedder, model)
    return fit_in_context(model, features, np.array([row["later"] for row in replies], dtype=np.float64))


def context_features(rows: Sequence[dict[str, Any]], embedder: Embedder, model: SalienceModel) -> np.ndarray:
    """Rows of `context_vector` for replies with their context, the logits from `model`."""
    name = f"{embedder.name}:{embedder.dimensions}"
    replies, befores = [row["text"] for row in rows], [row["context"] for row in rows]
    vectors, before_vectors = embedder.embed(replies), embedder.embed(befores)
    return np.stack([context_vector(model.logit(text, kind, vector, name), model.logit(before, b_kind, b_vector, name),
                                    before)
                     for text, kind, vector, before, b_kind, b_vector in zip(
                         replies, _kinds(rows), vectors, befores, [classify(b).kind for b in befores],
                         before_vectors, strict=True)])


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


def by_kind(kinds: Sequence[Kind], langs: np.ndarray, labels: np.ndarray, scores: np.ndarray
            ) -> dict[str, dict[str, dict[str, Any]]]:
    """Per language and kind (as the classifier calls each utterance): how many, the share labelled needed later,
    and the mean salience. The kind sets a record's base stability (fact 60 days, episode 7): this shows whether
    how often each kind is needed later supports that spread."""
    named = np.array([kind.value for kind in kinds])
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for lang in sorted(set(langs.tolist())):
        out[lang] = {}
        for kind in sorted(set(named[langs == lang].tolist())):
            chosen = (langs == lang) & (named == kind)
            out[lang][kind] = {"utterances": int(chosen.sum()), "later_share": round(float(labels[chosen].mean()), 4),
                               "mean_salience": round(float(scores[chosen].mean()), 4)}
    return out


def evaluate(rows: Sequence[dict[str, Any]], embedder: Embedder, model: SalienceModel | None = None
             ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per language and overall: AUC, accuracy, precision and recall of "keep" at `KEEP`; and each row's score."""
    model = model or shipped()
    texts = [row["text"] for row in rows]
    vectors = embedder.embed(texts)
    name = f"{embedder.name}:{embedder.dimensions}"
    befores = [row.get("context") for row in rows]
    given = [b for b in befores if b is not None]
    before_vectors = iter(embedder.embed(given) if given else [])
    contexts = [None if b is None else Context(b, classify(b).kind, next(before_vectors)) for b in befores]
    kinds = _kinds(rows)
    judged = [model.judge(text, kind, vector, name, context) for text, kind, vector, context
              in zip(texts, kinds, vectors, contexts, strict=True)]
    scores = np.array([j.salience for j in judged])
    labels = np.array([row["later"] for row in rows], dtype=np.float64)
    langs = np.array([row["lang"] for row in rows])
    report = {"languages": {lang: _block(scores[langs == lang], labels[langs == lang])
                            for lang in sorted(set(langs.tolist()))},
              "all": _block(scores, labels), "probe_used": judged[0].probe is not None if judged else None,
              "by_kind": by_kind(kinds, langs, labels, scores)}
    replies = np.array([b is not None for b in befores])
    if replies.any():  # the replies judged in context, and the same replies judged alone, for comparison
        alone = np.array([j.salience if j.alone is None else j.alone for j in judged])
        report["replies"] = {
            "in_context": {lang: _block(scores[replies & (langs == lang)], labels[replies & (langs == lang)])
                           for lang in sorted(set(langs[replies].tolist()))},
            "alone": {lang: _block(alone[replies & (langs == lang)], labels[replies & (langs == lang)])
                      for lang in sorted(set(langs[replies].tolist()))},
            "judged_in_context": int(sum(j.alone is not None for j in judged))}
    scored = [{"id": row.get("id"), "later": row["later"], "salience": round(j.salience, 3)}
              for row, j in zip(rows, judged, strict=True)]
    return report, scored
