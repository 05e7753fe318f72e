"""Salience: how likely a new memory is to be needed later, judged when it is written.

People keep the wedding date and lose the small talk, though both were said once. What tells them apart is
in the utterance itself: specific content (numbers, dates, names, people), a first-person life event, plan or
commitment, against acknowledgements, reactions, moods and questions that carry nothing about the speaker.

Two kinds of signal, neither tied to one phrasing or one language:
- a linear probe on the sentence embedding (the shipped multilingual embedder places "we got married on June
  3rd" and "我们六月三号领的证" near each other, and far from "haha nice"), fitted on labelled utterances;
- counts read off the aligned tokens (`ingest.align`): numbers, names, kin and roles, content words; whether the
  speaker talks about themselves; whether it is a question; the kind the classifier gave.
A logistic model combines them into a probability. Its coefficients are fitted on the development set
`tests/data/salience-dev.jsonl` (`ebbing eval salience --fit`) and shipped as `salience-model.npz`; a held-out
set written by someone else was scored once (docs/evaluation.md). The probe belongs to the embedder it was
fitted with: any other embedder gets the token signals alone (their own fitted coefficients).

A reply's meaning often lies in the message before it: "Yeah, I drew it. It stands for freedom." is thanks and
an aside alone, and an answer after "Did you paint that? What does it mean?". So a message that follows another
in the same session within `CONTEXT_WINDOW` is judged in context too: a second logistic model, fitted on labelled
replies with the message before them (`tests/data/salience-context-dev.jsonl`), combines the reply's own logit,
the context's logit, whether the context asks something, and that question's logit (so an answer could be
weighed by what was asked; as fitted, the model leans mostly on whether something was asked, docs/evaluation.md).
It needs the embedding probe on both messages; with another embedder a message is judged alone. The write path
(`ingest.pipeline`) lets the in-context judgement decide only whether a faded reply waits in the archive; the
reply's own salience sets its stability.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

import numpy as np

from ebbing.judgement import align
from ebbing.judgement.logistic import logistic
from ebbing.model import Kind

PROBE_L2 = 0.1  # chosen by 5-fold cross-validation on the development set (0.01 .. 10)
COMBINER_L2 = 1.0
SHIPPED = "salience-model.npz"
KINDS = (Kind.FACT, Kind.DECISION, Kind.PREFERENCE, Kind.TEMPORARY, Kind.EPISODE)
SIGNALS = ("numbers", "names", "people", "content_words", "first_person", "question",
           *(f"kind_{k.value}" for k in KINDS))
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|my|me|mine|myself|we|we're|we've|our|ours|us)\b|我|咱",
                           re.IGNORECASE)
_QUESTION = re.compile(r"[?？]\s*\W*$|[吗呢么]\s*\W*$")
# A question anywhere in a message ("Wow, did you paint that? It's gorgeous!"): what a reply may answer.
_ASKS = re.compile(r"[?？]|[吗呢么][\s\W]*(?:$|[，。！,.!])")
# A reply follows its message within minutes; a message after a longer pause in one session starts afresh.
CONTEXT_WINDOW = 30 * 60.0  # seconds
CONTEXT_SIGNALS = ("alone", "context", "context_asks", "answer")


def signals(text: str, kind: Kind) -> dict[str, float]:
    """The token signals of one utterance, by name (`SIGNALS`); counts are log1p-scaled."""
    tokens = align.tokens(text)
    count = {tag: sum(1 for t in tokens if t.tag == tag) for tag in ("num", "name")}
    people = sum(1 for t in tokens if t.key in align.PEOPLE_KEYS)
    content = sum(1 for t in tokens if t.tag in ("word", "name", "num", "qualifier"))
    return {
        "numbers": math.log1p(count["num"]), "names": math.log1p(count["name"]), "people": math.log1p(people),
        "content_words": math.log1p(content), "first_person": float(bool(_FIRST_PERSON.search(text))),
        "question": float(bool(_QUESTION.search(text.strip()))),
        **{f"kind_{k.value}": float(kind is k) for k in KINDS},
    }


def signal_vector(text: str, kind: Kind) -> np.ndarray:
    values = signals(text, kind)
    return np.array([values[name] for name in SIGNALS], dtype=np.float64)


@dataclass(frozen=True)
class Context:
    """The message before the one judged (its text, kind and embedding)."""

    text: str
    kind: Kind
    vector: np.ndarray | None


def asks(text: str) -> bool:
    return bool(_ASKS.search(text.strip()))


def context_vector(alone: float, context: float, context_text: str) -> np.ndarray:
    """The in-context model's inputs, in `CONTEXT_SIGNALS` order: the two messages' own logits, whether the
    context asks something, and the context's logit when it does (what answering it is worth)."""
    question = float(asks(context_text))
    return np.array([alone, context, question, question * context], dtype=np.float64)


@dataclass(frozen=True)
class Judged:
    salience: float  # 0..1: the fitted probability that this will be needed later
    probe: float | None  # the embedding probe's logit, when the probe fits this embedder
    signals: dict[str, float]
    alone: float | None = None  # judged in context: the salience of the message on its own
    context: float | None = None  # ... and of the message before it

    def explain(self) -> dict[str, Any]:
        out = {"salience": round(self.salience, 3),
               "probe": None if self.probe is None else round(self.probe, 3),
               "signals": {k: round(v, 3) for k, v in self.signals.items() if v}}
        if self.alone is not None and self.context is not None:
            out["in_context"] = {"alone": round(self.alone, 3), "context": round(self.context, 3)}
        return out


def _sigmoid(logit: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(logit, 40.0), -40.0)))


@dataclass(frozen=True)
class SalienceModel:
    """Fitted coefficients: the probe (direction and bias over unit embeddings of `embedder`), the combiner
    over [probe logit, signals...] used with it, and a combiner over the signals alone for other embedders."""

    embedder: str
    probe: np.ndarray
    probe_bias: float
    with_probe: np.ndarray  # len(SIGNALS) + 2: probe logit, signals, bias
    signals_only: np.ndarray  # len(SIGNALS) + 1: signals, bias
    in_context: np.ndarray | None = None  # len(CONTEXT_SIGNALS) + 1: a reply judged with the message before it

    def _logit(self, text: str, kind: Kind, vector: np.ndarray | None, embedder: str
               ) -> tuple[float, float | None, dict[str, float]]:
        values = signals(text, kind)
        x = np.array([values[name] for name in SIGNALS], dtype=np.float64)
        if vector is not None and embedder == self.embedder and len(vector) == len(self.probe):
            probe = float(np.asarray(vector, dtype=np.float64) @ self.probe + self.probe_bias)
            return float(self.with_probe[0] * probe + x @ self.with_probe[1:-1] + self.with_probe[-1]), probe, values
        return float(x @ self.signals_only[:-1] + self.signals_only[-1]), None, values

    def judge(self, text: str, kind: Kind, vector: np.ndarray | None, embedder: str,
              context: Context | None = None) -> Judged:
        """`context`: the message before this one in its session, when there is one."""
        logit, probe, values = self._logit(text, kind, vector, embedder)
        if context is None or self.in_context is None or probe is None:
            return Judged(_sigmoid(logit), probe, values)
        before, before_probe, _ = self._logit(context.text, context.kind, context.vector, embedder)
        if before_probe is None:
            return Judged(_sigmoid(logit), probe, values)
        x = context_vector(logit, before, context.text)
        both = float(x @ self.in_context[:-1] + self.in_context[-1])
        return Judged(_sigmoid(both), probe, values, alone=_sigmoid(logit), context=_sigmoid(before))

    def reads_context(self, embedder: str) -> bool:
        """Whether `judge` can use a context for vectors of `embedder` (so whether to look one up)."""
        return self.in_context is not None and embedder == self.embedder

    def logit(self, text: str, kind: Kind, vector: np.ndarray | None, embedder: str) -> float:
        """The message's own logit (what `judge` makes a probability of, without context)."""
        return self._logit(text, kind, vector, embedder)[0]

    def save(self, path: Any) -> None:
        arrays: dict[str, np.ndarray] = {
            "embedder": np.array(self.embedder), "signals": np.array(SIGNALS), "probe": self.probe,
            "probe_bias": np.array(self.probe_bias), "with_probe": self.with_probe, "signals_only": self.signals_only,
            "context_signals": np.array(CONTEXT_SIGNALS)}
        if self.in_context is not None:
            arrays["in_context"] = self.in_context
        np.savez_compressed(path, allow_pickle=False, **arrays)


@functools.lru_cache(maxsize=1)
def shipped() -> SalienceModel:
    """The model fitted on the development set, as shipped with the package."""
    with resources.files("ebbing.ingest").joinpath(SHIPPED).open("rb") as handle, np.load(handle) as data:
        if tuple(str(s) for s in data["signals"]) != SIGNALS:
            raise RuntimeError(f"{SHIPPED} was fitted on other signals; refit it (ebbing eval salience --fit)")
        in_context = None
        if "in_context" in data.files:
            if tuple(str(s) for s in data["context_signals"]) != CONTEXT_SIGNALS:
                raise RuntimeError(f"{SHIPPED} was fitted on other context signals; refit it "
                                   "(ebbing eval salience --fit)")
            in_context = data["in_context"].astype(np.float64)
        return SalienceModel(str(data["embedder"]), data["probe"].astype(np.float64), float(data["probe_bias"]),
                             data["with_probe"].astype(np.float64), data["signals_only"].astype(np.float64),
                             in_context)


# --- fitting (ebbing eval salience --fit) ------------------------------------------------------------------


def fit(texts: Sequence[str], kinds: Sequence[Kind], vectors: np.ndarray, labels: np.ndarray, embedder: str,
        *, folds: int = 5, seed: int = 0) -> SalienceModel:
    """Fit the probe on all rows, and the combiner on out-of-fold probe logits (so the combiner learns how far
    to trust the probe on text it was not fitted on, not on text it has memorised)."""
    x = np.stack([signal_vector(t, k) for t, k in zip(texts, kinds, strict=True)])
    fold = np.random.default_rng(seed).permutation(len(labels)) % folds
    held_logit = np.zeros(len(labels))
    for f in range(folds):
        w = logistic(vectors[fold != f], labels[fold != f], PROBE_L2)
        held_logit[fold == f] = vectors[fold == f] @ w[:-1] + w[-1]
    probe = logistic(vectors, labels, PROBE_L2)
    with_probe = logistic(np.hstack([held_logit[:, None], x]), labels, COMBINER_L2)
    signals_only = logistic(x, labels, COMBINER_L2)
    return SalienceModel(embedder, probe[:-1], float(probe[-1]), with_probe, signals_only)


def fit_in_context(model: SalienceModel, features: np.ndarray, labels: np.ndarray) -> SalienceModel:
    """Add the in-context combiner, fitted on rows of `context_vector` for labelled replies (the logits come
    from `model`, which never saw these replies, so the combiner learns how far to trust them on new text)."""
    return replace(model, in_context=logistic(features, labels, COMBINER_L2))
