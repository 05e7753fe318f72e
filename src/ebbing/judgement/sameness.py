"""Sameness: how likely two statements are about the same attribute (the same thing said again, or a new
value of it), rather than two different things that merely look alike.

"Please ship everything to 12 Oak Street" and "I'm living at 45 Elm Avenue in Portland since last week" share
no content word, while "my sister Tara is allergic to peanuts" and "my brother Owen is allergic to shellfish"
share most of theirs. Their cosine does not tell the two pairs apart either: the shipped embedder puts many
look-alikes closer than many paraphrases. What does tell them apart, measured on pairs written by several
people, is *which* dimensions of meaning the two share and which they differ in, and a few aligned-token signals:

- a linear probe over the pair's embeddings, `a * b` (where they agree) and `(a - b) ** 2` (where they differ),
  both symmetric in the pair, fitted on labelled pairs;
- signals read off the aligned tokens (`ingest.align`): the pair's calibrated vector relevance (z), shared
  content words, substitutions and which hold values, numbers, names, qualifiers that say whose or which one,
  change cues, and the two kinds.
A logistic model combines them into a probability. As in `ingest.salience`, the probe is fitted on all pairs and
the combiner on out-of-fold probe logits (so it learns how far to trust the probe on pairs it has not seen).
The pairs come from the update, look-alike and restatement cases of `ebbing eval updates`
(`ebbing eval updates --fit`), plus pairs of different things said on one topic (each utterance of the salience
and kind development sets with its nearest neighbours): with look-alikes as its only negatives the model called
two turns of one conversation the same attribute. The model ships as `sameness-model.npz`. The probe belongs to
the embedder it was fitted with: any other embedder gets the token signals alone (their own fitted coefficients).

It is one signal. "The same attribute" covers a new value of it as much as the same thing said again, so a second
model of the same form answers the question a merge asks: is the newer statement the same thing said again? It
is fitted on the same pairs with other labels (`ebbing eval updates --fit-restatement`): restatements of one
group are positive; an update's old and new value, near-misses, look-alikes and unrelated neighbours are negative.
It ships as `restatement-model.npz`. The write-time judge merges a reworded restatement only when the second model
is very sure, the first leans the same way, and their probes read the embedder's vectors (the token signals alone
are too weak to fold two records into one): asked alone, the first model merged "I prefer dark themes" with "Light
mode is easier on my eyes" and "我只能吃微辣" with "中辣特辣随便点" (docs/evaluation.md).
Ranking uses it for questions about what holds now (`recall.succession.QuestionAware`): the newer of two
statements of one attribute first, even when the question's words found only the older.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from ebbing.judgement.align import CONTENT, Alignment, align
from ebbing.judgement.logistic import logistic
from ebbing.model import Kind

SHIPPED = "sameness-model.npz"
RESTATEMENT = "restatement-model.npz"  # the same form, fitted to tell a restatement from a new value
SIGNALS = ("z", "shared", "substitutions", "value_substitutions", "numbers", "numbers_both", "names_both",
           "qualifiers", "words_old", "words_new", "cue", "same_kind", "new_episode", "old_episode")


def pair_signals(pair: Alignment, z: float, same_slot: bool = False) -> dict[str, Any]:
    """What differs between two aligned statements, and how close they are in meaning (z): the judge's and
    this model's inputs. Lists are [old side, new side]."""
    def only(side: str, *tags: str) -> list[str]:
        return sorted(pair.only(side, *tags))

    substitutions = [span for span in pair.spans if any(t.tag in CONTENT for t in span.old)
                     and any(t.tag in CONTENT for t in span.new)]
    valued = [span for span in substitutions if any(t.tag in ("num", "name") for t in span.old)
              and any(t.tag in ("num", "name") for t in span.new)]
    return {
        "z": round(z, 2),
        "shared": pair.shared,
        "substitutions": len(substitutions),
        "value_substitutions": len(valued),
        "numbers": [only("old", "num"), only("new", "num")],
        "names": [only("old", "name"), only("new", "name")],
        "qualifiers": [only("old", "qualifier"), only("new", "qualifier")],
        "words": [only("old", "word", "name"), only("new", "word", "name")],
        "cue": bool(pair.only("new", "cue")),
        "same_slot": same_slot,
    }


def signal_vector(old_text: str, new_text: str, z: float, old_kind: Kind, new_kind: Kind) -> np.ndarray:
    s = pair_signals(align(old_text, new_text), z)
    (num_old, num_new), (name_old, name_new) = s["numbers"], s["names"]
    (qual_old, qual_new), (word_old, word_new) = s["qualifiers"], s["words"]
    return np.array([
        z, s["shared"], s["substitutions"], s["value_substitutions"], len(num_old) + len(num_new),
        min(len(num_old), len(num_new)), min(len(name_old), len(name_new)), len(qual_old) + len(qual_new),
        math.log1p(len(word_old)), math.log1p(len(word_new)), float(s["cue"]), float(old_kind is new_kind),
        float(new_kind is Kind.EPISODE), float(old_kind is Kind.EPISODE)], dtype=np.float64)


def embedding_features(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Rows of [a * b, (a - b) ** 2] for row-aligned unit vectors (symmetric in the pair)."""
    a, b = np.atleast_2d(np.asarray(old, dtype=np.float64)), np.atleast_2d(np.asarray(new, dtype=np.float64))
    return np.hstack([a * b, (a - b) ** 2])


@dataclass(frozen=True)
class SamenessModel:
    """Fitted coefficients: the probe over `embedding_features` of `embedder` (standardisation folded in), the
    combiner over [probe logit, standardised signals] used with it, and one over the signals alone for other
    embedders. `mean`/`scale` standardise the signals."""

    embedder: str
    probe: np.ndarray
    probe_bias: float
    mean: np.ndarray
    scale: np.ndarray
    with_probe: np.ndarray  # len(SIGNALS) + 2: probe logit, signals, bias
    signals_only: np.ndarray  # len(SIGNALS) + 1: signals, bias

    def reads(self, embedder: str) -> bool:
        """Whether the embedding probe applies to vectors of `embedder` ("name:dimensions")."""
        return embedder == self.embedder

    def probabilities(self, old: np.ndarray, new: np.ndarray, signals: np.ndarray, embedder: str) -> np.ndarray:
        """P(same attribute) for row-aligned pairs: `old`/`new` unit vectors (one a row), `signals` rows of
        `signal_vector`."""
        x = (np.atleast_2d(signals) - self.mean) / self.scale
        if self.reads(embedder) and np.shape(old)[-1] * 2 == len(self.probe):
            probe = embedding_features(old, new) @ self.probe + self.probe_bias
            logit = self.with_probe[0] * probe + x @ self.with_probe[1:-1] + self.with_probe[-1]
        else:
            logit = x @ self.signals_only[:-1] + self.signals_only[-1]
        out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(logit, -40.0, 40.0)))
        return out

    def save(self, path: Any) -> None:
        np.savez_compressed(path, embedder=np.array(self.embedder), signals=np.array(SIGNALS), probe=self.probe,
                            probe_bias=np.array(self.probe_bias), mean=self.mean, scale=self.scale,
                            with_probe=self.with_probe, signals_only=self.signals_only)


def load(source: Any) -> SamenessModel:
    """A model written by `SamenessModel.save` (a path or a binary file)."""
    with np.load(source) as data:
        if tuple(str(s) for s in data["signals"]) != SIGNALS:
            raise RuntimeError(f"{source} was fitted on other signals; refit it (ebbing eval updates --fit)")
        return SamenessModel(str(data["embedder"]), data["probe"].astype(np.float64), float(data["probe_bias"]),
                             data["mean"].astype(np.float64), data["scale"].astype(np.float64),
                             data["with_probe"].astype(np.float64), data["signals_only"].astype(np.float64))


@functools.lru_cache(maxsize=2)
def shipped(name: str = SHIPPED) -> SamenessModel:
    """A model fitted on the development pairs, as shipped with the package: P(same attribute) by default,
    P(the same thing said again) with `RESTATEMENT`."""
    with resources.files("ebbing.judgement").joinpath(name).open("rb") as handle:
        return load(handle)


def shipped_restatement() -> SamenessModel:
    return shipped(RESTATEMENT)


# --- fitting (ebbing eval updates --fit) -------------------------------------------------------------------

PROBE_L2 = 300.0  # chosen on pairs of other writers (fit on the development sets, scored on earlier held-out
COMBINER_L2 = 1.0  # sets that have since become development data; docs/evaluation.md)


def fit(old: np.ndarray, new: np.ndarray, signals: np.ndarray, labels: np.ndarray, groups: Sequence[str],
        embedder: str, *, folds: int = 5, seed: int = 0) -> SamenessModel:
    """Fit on labelled pairs (1: same attribute). `groups` keeps the pairs of one case in one fold, so the
    combiner sees probe logits of cases the probe was not fitted on."""
    features = embedding_features(old, new)
    centre, spread = features.mean(axis=0), features.std(axis=0) + 1e-6
    standard = (features - centre) / spread
    mean, scale = signals.mean(axis=0), signals.std(axis=0) + 1e-6
    x = (signals - mean) / scale
    names = sorted(set(groups))
    of_group = dict(zip(names, np.random.default_rng(seed).permutation(len(names)) % folds, strict=True))
    fold = np.array([of_group[g] for g in groups])
    held = np.zeros(len(labels))
    for f in range(folds):
        w = logistic(standard[fold != f], labels[fold != f], PROBE_L2)
        held[fold == f] = standard[fold == f] @ w[:-1] + w[-1]
    w = logistic(standard, labels, PROBE_L2)
    probe = w[:-1] / spread  # fold the standardisation into the direction and bias
    bias = float(w[-1] - (centre / spread) @ w[:-1])
    with_probe = logistic(np.hstack([held[:, None], x]), labels, COMBINER_L2)
    signals_only = logistic(x, labels, COMBINER_L2)
    return SamenessModel(embedder, probe, bias, mean, scale, with_probe, signals_only)
