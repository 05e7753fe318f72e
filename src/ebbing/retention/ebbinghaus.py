"""The Ebbinghaus forgetting curve: a record's hold fades exponentially from its last use.

    S0 = stability_days[kind] * DAY
         * security_factor  (secret-bearing or security-related records)
         * marked_factor    (records someone marked important, importance >= 0.9)
         * salience         (salience_factor ** x, x = (importance - salience_pivot) / (0.9 - salience_pivot)
                             clipped to -1..1: x1 at the pivot, up to salience_factor just below 0.9 and down
                             to 1 / salience_factor as far below it; marked records take marked_factor instead)
         * updated_factor   (records whose text changed at least `frequent_updates` times)
    S  = S0 * min(1 + ln(1 + beta * access_count), max_reinforcement)
    W  = weight_floor + (1 - weight_floor) * importance
    dt = max(0, now - referenced_at)
    R  = W * exp(-dt / S), and at least protection_floor while now - created_at < protection_days

The per-record factors on S0 are the "dynamic tau" of the seed article: what a record is, not only how
often it was used, sets how fast it fades. Reinforcement is logarithmic and capped, so a record recalled
thousands of times still fades eventually instead of becoming immortal by habit.

`Ebbinghaus.sql` spells the same formula for PostgreSQL, in the same order of operations.
"""

from __future__ import annotations

import numpy as np

from ebbing.retention.base import KINDS, MARKED_IMPORTANCE, RecordBatch
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.retention.sql import EXP_FLOOR, elapsed, literal


def salience_multiplier(importance: np.ndarray, config: RetentionConfig) -> np.ndarray:
    """S0's factor for salience, both ways and on a log scale: 1 at the pivot (a plain fact's importance), rising
    towards `salience_factor` just below the marked level (0.9), and falling to 1 / `salience_factor` as far below
    the pivot. What is judged unlikely to be needed leaves the live tiers sooner than its kind alone would let it:
    a "fact" that is small talk keeps 20 days, not 60. From the marked level on `marked_factor` applies instead."""
    share = np.clip((importance - config.salience_pivot) / (MARKED_IMPORTANCE - config.salience_pivot), -1.0, 1.0)
    out: np.ndarray = np.where(importance >= MARKED_IMPORTANCE, 1.0, config.salience_factor ** share)
    return out


class Ebbinghaus:
    name = "ebbinghaus"

    def __init__(self, config: RetentionConfig) -> None:
        self.config = config
        self._base_stability = np.array([config.stability_days[kind] * DAY for kind in KINDS], dtype=np.float64)

    def stability(self, batch: RecordBatch) -> np.ndarray:
        """S in seconds per record: the time for the score to fall to 1/e of its weight."""
        c = self.config
        s0 = (self._base_stability[batch.kind]
              * np.where(batch.security, c.security_factor, 1.0)
              * np.where(batch.marked, c.marked_factor, 1.0)
              * salience_multiplier(batch.importance, c)
              * np.where(batch.update_count >= c.frequent_updates, c.updated_factor, 1.0))
        # A negative count can only be corrupt data; clamping keeps log1p defined instead of producing NaN.
        recalls = np.maximum(batch.access_count, 0)
        reinforcement = np.minimum(1.0 + np.log1p(c.beta * recalls), c.max_reinforcement)
        out: np.ndarray = s0 * reinforcement
        return out

    def score(self, batch: RecordBatch, now: float | np.ndarray) -> np.ndarray:
        """R per record at `now` (a scalar, or one time per record to follow one record through time)."""
        c = self.config
        # Importance outside 0..1 would push the weight, and so the score, outside the policy contract.
        weight = c.weight_floor + (1.0 - c.weight_floor) * np.clip(batch.importance, 0.0, 1.0)
        elapsed = np.maximum(0.0, now - batch.referenced_at)
        stability = self.stability(batch)
        # The config allows a factor of 0, hence S = 0: treat that as instant forgetting once any time has
        # passed (and none at dt = 0) rather than letting 0/0 turn into NaN.
        ratio = np.divide(elapsed, stability, out=np.where(elapsed > 0, np.inf, 0.0), where=stability > 0)
        decayed = weight * np.exp(-ratio)
        protected = (now - batch.created_at) < c.protection_days * DAY
        out: np.ndarray = np.where(protected, np.maximum(decayed, c.protection_floor), decayed)
        return out

    def sql(self, row: str, now: float) -> str:
        """`score` of row `row` at `now` as a PostgreSQL expression (`SqlPolicy`)."""
        c, t, f = self.config, row, literal
        marked = f"{t}.importance >= {f(MARKED_IMPORTANCE)}"
        base = " ".join(f"WHEN '{k.value}' THEN {f(c.stability_days[k] * DAY)}" for k in KINDS)
        s0 = (f"(CASE {t}.kind {base} END)"
              f" * (CASE WHEN {t}.security THEN {f(c.security_factor)} ELSE 1.0::float8 END)"
              f" * (CASE WHEN {marked} THEN {f(c.marked_factor)} ELSE 1.0::float8 END)"
              f" * (CASE WHEN {marked} THEN 1.0::float8 ELSE power({f(c.salience_factor)}, "
              f"least(greatest(({t}.importance - {f(c.salience_pivot)}) / "
              f"{f(MARKED_IMPORTANCE - c.salience_pivot)}, -1.0), 1.0)) END)"
              f" * (CASE WHEN {t}.update_count >= {int(c.frequent_updates)} THEN {f(c.updated_factor)} "
              "ELSE 1.0::float8 END)")
        reinforcement = (f"least(1.0::float8 + ln(1.0::float8 + {f(c.beta)} * greatest({t}.access_count, 0)), "
                         f"{f(c.max_reinforcement)})")
        weight = f"({f(c.weight_floor)} + {f(1.0 - c.weight_floor)} * least(greatest({t}.importance, 0.0), 1.0))"
        exponent = f"(-greatest({elapsed(t, now)}, 0.0) / (({s0}) * {reinforcement}))"
        # PostgreSQL's exp() raises on underflow where numpy returns 0: the CASE gives numpy's answer.
        decayed = f"({weight} * (CASE WHEN {exponent} < {EXP_FLOOR} THEN 0.0 ELSE exp({exponent}) END))"
        protected = f"(({f(now)} - {t}.created_at) < {f(c.protection_days * DAY)})"
        return f"(CASE WHEN {protected} THEN greatest({decayed}, {f(c.protection_floor)}) ELSE {decayed} END)"
