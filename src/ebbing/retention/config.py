"""`RetentionConfig`: every number the forgetting engine uses, in one frozen value, checked on creation."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ebbing.errors import InvalidInput
from ebbing.model import Kind, Priority, Tier

DAY = 86_400.0
numbers_type = (int, float, np.integer, np.floating)


def _frozen(values: Mapping[Any, float]) -> Mapping[Any, float]:
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class RetentionConfig:
    # Ebbinghaus: R = W_base * exp(-dt / S), S = S0[kind] * (1 + ln(1 + beta * N)), S <= max_reinforcement * S0
    stability_days: Mapping[Kind, float] = field(default_factory=lambda: _frozen({
        Kind.FACT: 60.0, Kind.DECISION: 45.0, Kind.SUMMARY: 45.0, Kind.PREFERENCE: 30.0,
        Kind.EPISODE: 7.0, Kind.TEMPORARY: 1.0,
    }))
    beta: float = 0.5  # reinforcement per recall
    max_reinforcement: float = 3.0  # stability grows to at most this multiple of S0
    weight_floor: float = 0.6  # W_base = weight_floor + (1 - weight_floor) * importance
    protection_days: float = 1.0  # a new record scores at least protection_floor this long
    protection_floor: float = 0.5
    security_factor: float = 2.0  # S0 multiplied for secret-bearing / security-related records
    marked_factor: float = 5.0  # S0 multiplied for records someone marked important (importance >= 0.9)
    # Salience (`importance`, judged at write time by `ingest.salience`): S0 is multiplied by
    # salience_factor ** x, x = (importance - salience_pivot) / (0.9 - salience_pivot) clipped to -1..1. The
    # pivot is a plain fact's importance: x1 there, up to x3 at the marked level (0.9) so a life event outlasts
    # small talk said as often, and down to x1/3 as far below (0.3) so what is judged unlikely to be needed
    # leaves the live tiers sooner than its kind alone would let it (docs/evaluation.md, issue 14).
    salience_factor: float = 3.0
    salience_pivot: float = 0.6
    updated_factor: float = 0.5  # S0 multiplied for records whose text changed often
    frequent_updates: int = 3  # this many text changes make a record "frequently updated"
    # Reference-date priorities: P0 never expires; P1 and P2 expire this long after their last use.
    expiry_days: Mapping[Priority, float] = field(default_factory=lambda: _frozen({
        Priority.P1: 90.0, Priority.P2: 30.0,
    }))
    # Importance score: weights of kind, recall frequency, user mark, task relevance.
    importance_weights: tuple[float, float, float, float] = (0.30, 0.25, 0.25, 0.20)
    type_scores: Mapping[Kind, float] = field(default_factory=lambda: _frozen({
        Kind.FACT: 0.9, Kind.DECISION: 0.85, Kind.SUMMARY: 0.7, Kind.PREFERENCE: 0.6,
        Kind.EPISODE: 0.4, Kind.TEMPORARY: 0.1,
    }))
    recall_saturation: int = 10  # this many recalls make the recall-frequency part 1
    # How the composite combines: "decay" (Ebbinghaus), "importance", or "blend" (weighted mean).
    combine: str = "decay"
    blend_importance: float = 0.3  # importance's weight when combine == "blend"
    # Score -> tier: at or above hot -> hot, at or above warm -> warm, at or above cold -> cold, else forgotten.
    thresholds: Mapping[Tier, float] = field(default_factory=lambda: _frozen({
        Tier.HOT: 0.75, Tier.WARM: 0.40, Tier.COLD: 0.15,
    }))
    # A P1 record that fades below the cold threshold, or whose priority expires, stays in the cold archive
    # (searchable with cold fallback, restorable) until this long after its last use; only then the trash.
    # P2 records (small talk, reminders) go straight to the trash. 0 sends P1 there at once as well.
    archive_days: float = 365.0
    grace_days: float = 30.0  # time in the trash before a record is purged
    sweep_period: float = DAY  # with spread=True each record is due once per period, on its hash slot

    def __post_init__(self) -> None:
        numbers = {
            "beta": self.beta, "max_reinforcement": self.max_reinforcement, "weight_floor": self.weight_floor,
            "protection_days": self.protection_days, "protection_floor": self.protection_floor,
            "security_factor": self.security_factor, "marked_factor": self.marked_factor,
            "salience_factor": self.salience_factor, "salience_pivot": self.salience_pivot,
            "updated_factor": self.updated_factor, "blend_importance": self.blend_importance,
            "grace_days": self.grace_days, "sweep_period": self.sweep_period, "archive_days": self.archive_days,
            **{f"stability_days.{k}": v for k, v in self.stability_days.items()},
            **{f"expiry_days.{k}": v for k, v in self.expiry_days.items()},
            **{f"type_scores.{k}": v for k, v in self.type_scores.items()},
            **{f"thresholds.{k}": v for k, v in self.thresholds.items()},
            **{f"importance_weights[{i}]": v for i, v in enumerate(self.importance_weights)},
        }
        numbers["frequent_updates"] = self.frequent_updates
        numbers["recall_saturation"] = self.recall_saturation
        for name, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, numbers_type) or not math.isfinite(value) or value < 0:
                raise InvalidInput(name, "must be a finite number >= 0")
        positive = {"max_reinforcement": self.max_reinforcement, "sweep_period": self.sweep_period,
                    "security_factor": self.security_factor, "marked_factor": self.marked_factor,
                    "salience_factor": self.salience_factor, "updated_factor": self.updated_factor,
                    "recall_saturation": self.recall_saturation,
                    **{f"stability_days.{k}": v for k, v in self.stability_days.items()}}
        for name, value in positive.items():
            if value <= 0:
                raise InvalidInput(name, "must be > 0")
        for kind, value in self.type_scores.items():
            if value > 1:
                raise InvalidInput(f"type_scores.{kind}", "must be between 0 and 1")
        if self.max_reinforcement < 1:
            raise InvalidInput("max_reinforcement", "must be >= 1 (reinforcement never weakens)")
        if self.salience_pivot >= 0.9:
            raise InvalidInput("salience_pivot", "must be below 0.9 (the marked level)")
        for name in ("weight_floor", "protection_floor", "blend_importance"):
            if getattr(self, name) > 1:
                raise InvalidInput(name, "must be between 0 and 1")
        for name, mapping in (("stability_days", self.stability_days), ("type_scores", self.type_scores)):
            if set(mapping) != set(Kind):
                raise InvalidInput(name, "needs a value for every kind")
        if set(self.expiry_days) != {Priority.P1, Priority.P2}:
            raise InvalidInput("expiry_days", "needs P1 and P2 (P0 never expires)")
        if set(self.thresholds) != {Tier.HOT, Tier.WARM, Tier.COLD}:
            raise InvalidInput("thresholds", "needs hot, warm and cold")
        hot, warm, cold = (self.thresholds[t] for t in (Tier.HOT, Tier.WARM, Tier.COLD))
        if not 1 >= hot > warm > cold > 0:
            raise InvalidInput("thresholds", "must satisfy 1 >= hot > warm > cold > 0")
        if self.combine not in ("decay", "importance", "blend"):
            raise InvalidInput("combine", "must be decay, importance or blend")
        if self.frequent_updates < 1:
            raise InvalidInput("frequent_updates", "must be >= 1")
        if abs(sum(self.importance_weights) - 1) > 1e-9:
            raise InvalidInput("importance_weights", "must add up to 1")
