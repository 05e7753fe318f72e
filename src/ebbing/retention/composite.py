"""The composite retention score the engine acts on, and the tier it implies.

The composite is a weighted list of retention policies (`RetentionPolicy` in `ebbing.retention.base`), gated by
priority expiry, with exempt records kept whole. Per record, at a time `now`:

    base  = w1 * policy1 + w2 * policy2 + ...               the weights add up to 1 (a weighted mean)
    score = base * priority                                 priority is a 0/1 gate: an expired P1/P2 record
                                                            scores 0, i.e. forgotten, whatever its decay says
    score = 1.0 exactly for exempt records (pinned, under legal hold, or P0)

An explicit expiry (`expires_at`) closes the gate once it has come, and ends a pin's or P0's exemption (a legal
hold still keeps the record): the record is then forgotten like any whose priority expired.

`Composite(config)` builds the list the configuration's `combine` names (the default):

    base  = ebbinghaus                                      combine = "decay"      (the default)
          = importance                                      combine = "importance"
          = (1 - b) * ebbinghaus + b * importance           combine = "blend",  b = blend_importance

Tiers come from the thresholds: score >= hot -> hot, >= warm -> warm, >= cold -> cold, else forgotten.
Where a forgotten record goes is `settle`'s decision: a P1 record stays in the cold archive until
`archive_days` after its last use, everything else goes to the trash. Tiers are handled as small integer
codes (0 hot .. 3 forgotten) so a whole batch is classified in one numpy call; `TIER_OF_CODE` turns a code
back into a `Tier`.

Plugging in a policy: anything with a `name` and a `score(batch, now)` giving 0..1 per record (higher means
keep; `now` may also be one time per record). Give `Composite` the list, as policies or (policy, weight)
pairs (weights are relative: they are scaled to add up to 1), and hand the composite to the sweep:

    class Freshness:  # fades linearly to 0 over the 30 days after the last use
        name = "freshness"

        def score(self, batch: RecordBatch, now: float | np.ndarray) -> np.ndarray:
            return np.clip(1.0 - np.maximum(now - batch.referenced_at, 0.0) / (30 * DAY), 0.0, 1.0)

        def sql(self, row: str, now: float) -> str:  # optional: `SqlPolicy`, see below
            return (f"least(greatest(1.0::float8 - greatest({elapsed(row, now)}, 0.0) / {literal(30 * DAY)}, "
                    "0.0), 1.0)")  # elapsed, literal: ebbing.retention.sql

    config = RetentionConfig()
    composite = Composite(config, [(Ebbinghaus(config), 0.8), (Freshness(), 0.2)])
    report = Sweeper(store, archive, config, tenant, actor, composite=composite).run(now)

Such a policy works with every store. With PostgreSQL, a sweep scores rows inside the database only when every
policy in the list also renders its score as SQL (`SqlPolicy.sql`, the same formula over the row's columns, as
`Ebbinghaus`, `Importance` and `PriorityExpiry` do); otherwise it fetches the rows and scores them in Python,
with a warning in the log and `SweepReport.ran_in == "python"` with a `note` naming the policies without SQL.
The compiled kernel (`fused`) serves only the default decay composite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any

import numpy as np

from ebbing.errors import InvalidInput
from ebbing.model import Priority, Tier
from ebbing.retention import fused
from ebbing.retention.base import PRIORITIES, RecordBatch, RetentionPolicy, SqlPolicy
from ebbing.retention.config import DAY, RetentionConfig, numbers_type
from ebbing.retention.ebbinghaus import Ebbinghaus
from ebbing.retention.importance import Importance
from ebbing.retention.priority import PriorityExpiry
from ebbing.retention.sql import literal

TIER_OF_CODE: tuple[Tier, ...] = (Tier.HOT, Tier.WARM, Tier.COLD, Tier.TRASH)  # trash = forgotten
FORGOTTEN = TIER_OF_CODE.index(Tier.TRASH)
COLD = TIER_OF_CODE.index(Tier.COLD)
P1 = PRIORITIES.index(Priority.P1)
HOUR = 3_600.0
PRECISION = 60.0  # seconds: projected_change refines a tier drop to within this


def take(batch: RecordBatch, index: np.ndarray) -> RecordBatch:
    """The rows `index` of a batch (repeats allowed), every column including relevance when present."""
    rows: dict[str, Any] = {}
    for column in fields(batch):
        value = getattr(batch, column.name)
        rows[column.name] = None if value is None else value[index]
    return replace(batch, **rows)


Term = tuple[RetentionPolicy, float]  # a policy and its weight in the composite's mean
WEIGHT_SUM_SLACK = 1e-12  # weights this close to a sum of 1 are used as given, so 1 - b and b stay exact


def weighted(policies: Sequence[RetentionPolicy | tuple[RetentionPolicy, float]]) -> tuple[Term, ...]:
    """(policy, weight) terms from policies or pairs (a bare policy weighs 1), checked, the weights scaled to add
    up to 1 unless they already do."""
    terms: list[Term] = []
    for index, item in enumerate(policies):
        policy, weight = item if isinstance(item, tuple) else (item, 1.0)
        if not isinstance(policy, RetentionPolicy):
            raise InvalidInput(f"policies[{index}]", "needs a `name` and a `score(batch, now)` method")
        if isinstance(weight, bool) or not isinstance(weight, numbers_type) or not math.isfinite(weight) or weight < 0:
            raise InvalidInput(f"policies[{index}]", "weight must be a finite number >= 0")
        terms.append((policy, float(weight)))
    total = sum(weight for _, weight in terms)
    if not terms or total <= 0:
        raise InvalidInput("policies", "needs at least one policy with a weight > 0")
    if abs(total - 1.0) <= WEIGHT_SUM_SLACK:
        return tuple(terms)
    return tuple((policy, weight / total) for policy, weight in terms)


class Composite:
    """The weighted policies, the priority gate and the exemptions, as one policy; see the module docstring.

    `Composite(config)` is the configured default (`config.combine`); `Composite(config, policies)` combines
    the given policies instead (the gate and exemptions stay). `ebbinghaus`, `importance` and `priority` are
    the built-in policies for this config whatever the list, for explanations and sweep reasons."""

    name = "composite"

    def __init__(self, config: RetentionConfig | None = None,
                 policies: Sequence[RetentionPolicy | tuple[RetentionPolicy, float]] | None = None) -> None:
        self.config = config or RetentionConfig()
        self.ebbinghaus = Ebbinghaus(self.config)
        self.priority = PriorityExpiry(self.config)
        self.importance = Importance(self.config)
        self.configured = policies is None  # the list is the one `config.combine` names
        self.terms = self._configured_terms() if policies is None else tuple(
            (self._builtin(policy), weight) for policy, weight in weighted(policies))
        # The compiled kernel hard-codes the default decay composite: any other list takes the numpy path.
        self._decay_only = len(self.terms) == 1 and self.terms[0][0] is self.ebbinghaus and self.terms[0][1] == 1.0
        thresholds = self.config.thresholds
        self._thresholds = (thresholds[Tier.HOT], thresholds[Tier.WARM], thresholds[Tier.COLD])

    def _builtin(self, policy: RetentionPolicy) -> RetentionPolicy:
        """This composite's own built-in policy for an equal one given in a list, so that an explicit list equal
        to the configured one is the same composite (one score per part in `breakdown`, the compiled kernel)."""
        for own in (self.ebbinghaus, self.importance):
            if type(policy) is type(own) and getattr(policy, "config", None) == self.config:
                return own
        return policy

    def _configured_terms(self) -> tuple[Term, ...]:
        combine = self.config.combine
        if combine == "decay":
            return ((self.ebbinghaus, 1.0),)
        if combine == "importance":
            return ((self.importance, 1.0),)
        weight = self.config.blend_importance
        return ((self.ebbinghaus, 1.0 - weight), (self.importance, weight))

    @property
    def policies(self) -> list[RetentionPolicy]:
        return [policy for policy, _ in self.terms]

    @property
    def combination(self) -> str:
        """How the score is combined, in short: `config.combine` for the configured list (as before), else the
        policies by name with their weights ("0.8*ebbinghaus+0.2*freshness")."""
        if self.configured:
            return self.config.combine
        if len(self.terms) == 1:
            return self.terms[0][0].name
        return "+".join(f"{weight:g}*{policy.name}" for policy, weight in self.terms)

    @property
    def label(self) -> str:
        """The policy named in a sweep's audit events: "composite/decay" for the default."""
        return f"composite/{self.combination}"

    def score(self, batch: RecordBatch, now: float | np.ndarray) -> np.ndarray:
        """The composite score per record; `now` may be one time per record to follow a record through time."""
        if (self._decay_only and np.ndim(now) == 0 and len(batch) >= fused.FUSED_AT and not batch.expires
                and fused.applies(self.config)):
            return fused.decay_scores(batch, float(now), self.config)  # one compiled pass for big sweeps
        # Only the policies in the list are computed: sweeps score whole stores.
        parts = [policy.score(batch, now) for policy, _ in self.terms]
        return self._mix(batch, parts, self.priority.score(batch, now), now)

    def breakdown(self, batch: RecordBatch, now: float | np.ndarray) -> dict[str, np.ndarray]:
        """Every part and the result, for explanations: ebbinghaus, priority, importance (always), each other
        policy in the list by name, and composite."""
        decay = self.ebbinghaus.score(batch, now)
        gate = self.priority.score(batch, now)
        importance = self.importance.score(batch, now)
        out = {"ebbinghaus": decay, "priority": gate, "importance": importance}
        known = {id(self.ebbinghaus): decay, id(self.importance): importance}
        parts = []
        for index, (policy, _) in enumerate(self.terms):
            value = known.get(id(policy))
            if value is None:
                value = policy.score(batch, now)
                taken = policy.name in out or policy.name == "composite"
                out[f"{policy.name}[{index}]" if taken else policy.name] = value
            parts.append(value)
        out["composite"] = self._mix(batch, parts, gate, now)
        return out

    def _combine(self, batch: RecordBatch, decay: np.ndarray | None, gate: np.ndarray,
                 importance: np.ndarray | None) -> np.ndarray:
        """The composite from built-in parts already computed (the configured list only): what the compiled
        kernel is held against."""
        parts = []
        for policy, _ in self.terms:
            value = decay if policy is self.ebbinghaus else importance if policy is self.importance else None
            if value is None:
                raise ValueError(f"no part given for policy {policy.name!r}")
            parts.append(value)
        return self._mix(batch, parts, gate)

    def _mix(self, batch: RecordBatch, parts: Sequence[np.ndarray], gate: np.ndarray,
             now: float | np.ndarray | None = None) -> np.ndarray:
        """The weighted mean of the policies' scores, gated, exempt records at 1. A lone policy is taken as it is
        and the sum runs left to right, so the configured lists give exactly the figures they always gave."""
        if len(parts) == 1:
            base = parts[0]
        else:
            base = self.terms[0][1] * parts[0]
            for (_, weight), part in zip(self.terms[1:], parts[1:], strict=True):
                base = base + weight * part
        out: np.ndarray = np.where(batch.exempt if now is None else batch.exempt_at(now), 1.0, base * gate)
        return out

    # -- as SQL, for sweeps inside PostgreSQL ---------------------------------------------------------------

    def without_sql(self) -> list[str]:
        """The names of the policies that do not render as SQL (`SqlPolicy`): empty when the whole composite does
        and a PostgreSQL sweep can score inside the database."""
        missing: list[str] = []
        for policy in [*self.policies, self.priority]:
            if isinstance(policy, Composite):
                missing += policy.without_sql()  # a nested composite has `sql`, but only if its own parts do
            elif not isinstance(policy, SqlPolicy):
                missing.append(policy.name)
        return missing

    def sql(self, row: str, now: float) -> str:
        """The composite score of row `row` at `now` as one PostgreSQL expression: each policy's own SQL,
        combined as `score` combines them (so a composite is itself an `SqlPolicy` when its policies are).
        Raises ValueError when a policy has no SQL (`without_sql`)."""
        missing = self.without_sql()
        if missing:
            raise ValueError(f"no SQL for the retention policies {', '.join(missing)}")
        terms = []
        for policy, weight in self.terms:
            assert isinstance(policy, SqlPolicy)  # checked by without_sql
            terms.append((policy.sql(row, now), weight))
        if len(terms) == 1:
            combined = terms[0][0]
        else:
            combined = "(" + " + ".join(f"{literal(weight)} * {expression}" for expression, weight in terms) + ")"
        return (f"(CASE WHEN {row}.held OR (({row}.pinned OR {row}.priority = 'P0') AND NOT coalesce("
                f"{row}.expires_at <= {literal(now)}, false)) THEN 1.0::float8 "
                f"ELSE {combined} * {self.priority.sql(row, now)} END)")

    def tiers(self, scores: np.ndarray) -> np.ndarray:
        """Tier codes (0 hot, 1 warm, 2 cold, 3 forgotten) for scores; index TIER_OF_CODE with them."""
        hot, warm, cold = self._thresholds
        scores = np.asarray(scores)
        if scores.ndim == 1 and len(scores) >= fused.FUSED_AT and fused.available():
            return fused.tiers(scores, hot, warm, cold)
        # The config guarantees hot > warm > cold, so counting the thresholds a score misses gives its tier.
        out: np.ndarray = (3 - (scores >= cold).astype(np.int8) - (scores >= warm) - (scores >= hot)).astype(np.int8)
        return out

    def settle(self, batch: RecordBatch, codes: np.ndarray, now: float | np.ndarray) -> np.ndarray:
        """Where each record belongs, from its tier code: a forgotten P1 record is kept in the cold archive until
        `archive_days` after its last use (an agent may still need what faded from its working memory, and the
        archive costs no live space); other forgotten records go to the trash. Only the forgotten are looked at,
        so a sweep of mostly live records pays almost nothing for it."""
        forgotten = np.flatnonzero(codes == FORGOTTEN)
        if forgotten.size == 0 or self.config.archive_days <= 0:
            return codes
        last, created = batch.last_accessed_at[forgotten], batch.created_at[forgotten]
        referenced = np.where(np.isnan(last), created, last)
        moment = now if np.ndim(now) == 0 else np.asarray(now)[forgotten]
        keep = (batch.priority[forgotten] == P1) & (moment - referenced <= self.config.archive_days * DAY)
        if not keep.any():
            return codes
        out = codes.copy()
        out[forgotten[keep]] = COLD
        return out

    def placement(self, batch: RecordBatch, now: float) -> np.ndarray:
        """Tier codes a sweep at `now` would give: the score's tier, settled."""
        scores = self.score(batch, now)
        if len(batch) >= fused.FUSED_AT and fused.available():
            return fused.placement(scores, batch, float(now), self.config)  # tiers and settle in one pass
        return self.settle(batch, self.tiers(scores), now)

    def projected_change(self, batch_of_one: RecordBatch, now: float,
                         horizon_days: float = 3650) -> tuple[float, Tier] | None:
        """When the record would first drop below its current tier if never used again, and to which tier.

        None when it does not drop within `horizon_days` (exempt records never do, nor forgotten ones).
        The score is evaluated on a coarse grid (hourly for two days, then every six hours), all at once,
        then the first drop is narrowed by bisection on the tier code to within a minute. Bisection on the
        code rather than on the score matters: the priority gate makes the score jump, not cross.
        """
        if len(batch_of_one) != 1:
            raise InvalidInput("batch_of_one", "needs exactly one record")
        if not math.isfinite(horizon_days) or horizon_days <= 0:
            raise InvalidInput("horizon_days", "must be a finite number > 0")
        if bool(batch_of_one.exempt[0]) and not batch_of_one.expires:
            return None
        current = int(self.placement(batch_of_one, now)[0])
        if current == FORGOTTEN:
            return None
        horizon = horizon_days * DAY
        offsets = np.concatenate([np.arange(1, 49) * HOUR, np.arange(2 * DAY + 6 * HOUR, horizon, 6 * HOUR)])
        offsets = np.append(offsets[offsets < horizon], horizon)
        codes = self._codes_at(batch_of_one, now + offsets)
        dropped = np.flatnonzero(codes > current)
        if dropped.size == 0:
            return None
        first = int(dropped[0])
        # Non-increasing in time for a record left alone (decay falls, the gate only closes, protection only
        # ends), so the tier is `current` up to the drop and lower after: bisection finds the boundary.
        low = now if first == 0 else now + float(offsets[first - 1])
        high = now + float(offsets[first])
        code = int(codes[first])
        while high - low > PRECISION:
            middle = (low + high) / 2
            middle_code = int(self._codes_at(batch_of_one, np.array([middle]))[0])
            if middle_code > current:
                high, code = middle, middle_code
            else:
                low = middle
        return high, TIER_OF_CODE[code]

    def _codes_at(self, batch_of_one: RecordBatch, times: np.ndarray) -> np.ndarray:
        """Tier codes of one record at many times: the record repeated once per time, scored in one call."""
        repeated = take(batch_of_one, np.zeros(len(times), dtype=np.intp))
        return self.settle(repeated, self.tiers(self.score(repeated, times)), times)
