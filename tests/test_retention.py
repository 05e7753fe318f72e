"""Retention policies, the composite score, tier projection, curves and plots, all on a controlled clock."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from ebbing.errors import InvalidInput
from ebbing.model import Kind, Priority, Tier
from ebbing.retention.base import KINDS, PRIORITIES, RecordBatch, RetentionPolicy
from ebbing.retention.composite import TIER_OF_CODE, Composite, take
from ebbing.retention.config import RetentionConfig
from ebbing.retention.curve import kind_curves, retention_curve
from ebbing.retention.ebbinghaus import Ebbinghaus
from ebbing.retention.importance import Importance
from ebbing.retention.plot import plot_kinds, plot_record
from ebbing.retention.priority import PriorityExpiry

DAY = 86_400.0
YEAR = 365 * DAY
NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC).timestamp()
CONFIG = RetentionConfig()
HOT, WARM, COLD, FORGOTTEN = range(4)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def record(kind: Kind = Kind.FACT, importance: float = 0.6, priority: Priority = Priority.P1, *,
           created: float = NOW, last: float | None = None, count: int = 0, updates: int = 0,
           pinned: bool = False, held: bool = False, security: bool = False) -> RecordBatch:
    """A batch of one record, with the columns the classifier and store would give it."""
    return RecordBatch(
        kind=np.array([KINDS.index(kind)], dtype=np.int8),
        importance=np.array([importance]),
        priority=np.array([PRIORITIES.index(priority)], dtype=np.int8),
        pinned=np.array([pinned]),
        held=np.array([held]),
        created_at=np.array([created]),
        last_accessed_at=np.array([np.nan if last is None else last]),
        access_count=np.array([count], dtype=np.int64),
        update_count=np.array([updates], dtype=np.int64),
        security=np.array([security]),
    )


def recalled(batch: RecordBatch, at: float) -> RecordBatch:
    """The batch after one recall at `at`, the way the store records a use."""
    return replace(batch, last_accessed_at=np.full(len(batch), at), access_count=batch.access_count + 1)


def random_batch(n: int = 1_000, seed: int = 20260105, relevance: bool = True) -> RecordBatch:
    rng = np.random.default_rng(seed)
    created = NOW - rng.uniform(0, YEAR, n)
    # Some uses land after NOW (a clock behind the reference) and about a third were never used.
    accessed = created + rng.uniform(0, NOW + 2 * DAY - created)
    accessed[rng.random(n) < 0.35] = np.nan
    importance = rng.uniform(0, 1, n)
    importance[rng.random(n) < 0.05] = 1.0
    return RecordBatch(
        kind=rng.integers(0, len(KINDS), n).astype(np.int8),
        importance=importance,
        priority=rng.integers(0, len(PRIORITIES), n).astype(np.int8),
        pinned=rng.random(n) < 0.05,
        held=rng.random(n) < 0.05,
        created_at=created,
        last_accessed_at=accessed,
        access_count=rng.integers(0, 201, n),
        update_count=rng.integers(0, 7, n),
        security=rng.random(n) < 0.2,
        relevance=rng.uniform(0, 1, n) if relevance else None,
    )


POLICIES: dict[str, Callable[[RetentionConfig], RetentionPolicy]] = {
    "ebbinghaus": Ebbinghaus, "priority": PriorityExpiry, "importance": Importance, "composite": Composite,
}


def composite_tier(composite: Composite, batch: RecordBatch, at: float) -> int:
    return int(composite.tiers(composite.score(batch, at))[0])


# --- the contract every policy keeps ---------------------------------------------------------------------


def test_random_batch_covers_every_case() -> None:
    batch = random_batch()
    assert set(batch.kind.tolist()) == set(range(len(KINDS)))
    assert set(batch.priority.tolist()) == set(range(len(PRIORITIES)))
    for flags in (batch.pinned, batch.held, batch.security, batch.marked, batch.exempt,
                  np.isnan(batch.last_accessed_at), batch.access_count == 0, batch.update_count >= 3,
                  batch.referenced_at > NOW):
        assert flags.any() and not flags.all()


@pytest.mark.parametrize("relevance", [True, False], ids=["relevance", "no-relevance"])
@pytest.mark.parametrize("name", list(POLICIES))
def test_policy_contract(name: str, relevance: bool) -> None:
    policy = POLICIES[name](CONFIG)
    assert policy.name == name
    batch = random_batch(relevance=relevance)
    scores = policy.score(batch, NOW)
    assert scores.shape == (len(batch),)
    assert np.isfinite(scores).all()
    assert ((scores >= 0) & (scores <= 1)).all()
    np.testing.assert_array_equal(policy.score(batch, NOW), scores)  # pure: same input, same output
    alone = np.array([policy.score(take(batch, np.array([i])), NOW)[0] for i in range(len(batch))])
    np.testing.assert_allclose(scores, alone, rtol=1e-12, atol=0)


# --- Ebbinghaus ------------------------------------------------------------------------------------------


def test_more_recalls_never_lower_the_score() -> None:
    ebbinghaus = Ebbinghaus(CONFIG)
    batch = random_batch()
    before = ebbinghaus.score(batch, NOW)
    for extra in (1, 5, 50, 10_000):
        more = ebbinghaus.score(replace(batch, access_count=batch.access_count + extra), NOW)
        assert (more >= before).all()
    counts = np.arange(0, 500)
    one = take(record(created=NOW - 200 * DAY, last=NOW - 20 * DAY), np.zeros(len(counts), dtype=np.intp))
    series = ebbinghaus.score(replace(one, access_count=counts), NOW)
    assert (np.diff(series) >= 0).all()
    assert series[-1] > series[0]


def test_stability_is_capped() -> None:
    ebbinghaus = Ebbinghaus(CONFIG)
    s0 = CONFIG.stability_days[Kind.FACT] * DAY
    assert ebbinghaus.stability(record(count=0))[0] == pytest.approx(s0)
    assert ebbinghaus.stability(record(count=2))[0] == pytest.approx(s0 * (1 + math.log(1 + CONFIG.beta * 2)))
    for count in (100, 10_000, 10**9):
        assert ebbinghaus.stability(record(count=count))[0] == pytest.approx(CONFIG.max_reinforcement * s0)


def test_security_and_marked_fade_slower_frequently_updated_faster() -> None:
    ebbinghaus = Ebbinghaus(CONFIG)
    created, at = NOW - 40 * DAY, NOW
    plain = record(created=created, importance=0.6)
    plain_s = ebbinghaus.stability(plain)[0]
    plain_score = ebbinghaus.score(plain, at)[0]

    secure = record(created=created, importance=0.6, security=True)
    assert ebbinghaus.stability(secure)[0] == pytest.approx(plain_s * CONFIG.security_factor)
    assert ebbinghaus.score(secure, at)[0] > plain_score

    updated = record(created=created, importance=0.6, updates=CONFIG.frequent_updates)
    almost = record(created=created, importance=0.6, updates=CONFIG.frequent_updates - 1)
    assert ebbinghaus.stability(updated)[0] == pytest.approx(plain_s * CONFIG.updated_factor)
    assert ebbinghaus.stability(almost)[0] == pytest.approx(plain_s)
    assert ebbinghaus.score(updated, at)[0] < plain_score

    # A mark also raises the weight, so compare the fraction of the weight that is left, not the score.
    marked = record(created=created, importance=0.95)
    unmarked = record(created=created, importance=0.89)
    assert ebbinghaus.stability(marked)[0] == pytest.approx(plain_s * CONFIG.marked_factor)
    # Just below the mark, salience has nearly tripled S0 (x1 at the 0.6 pivot, x3 at 0.9, on a log scale)
    assert ebbinghaus.stability(unmarked)[0] == pytest.approx(plain_s * 3 ** ((0.89 - 0.6) / 0.3))
    halfway = record(created=created, importance=0.75)
    assert ebbinghaus.stability(halfway)[0] == pytest.approx(plain_s * 3 ** 0.5)
    # ... and below the pivot it shortens S0 as far, to a third at 0.3 and no further.
    low, lowest = record(created=created, importance=0.45), record(created=created, importance=0.1)
    assert ebbinghaus.stability(low)[0] == pytest.approx(plain_s / 3 ** 0.5)
    assert ebbinghaus.stability(lowest)[0] == pytest.approx(plain_s / 3)

    def left(batch: RecordBatch) -> float:
        weight = CONFIG.weight_floor + (1 - CONFIG.weight_floor) * batch.importance[0]
        return float(ebbinghaus.score(batch, at)[0] / weight)

    assert left(marked) > left(unmarked)


def test_protection_floor_holds_inside_the_period_only() -> None:
    ebbinghaus = Ebbinghaus(CONFIG)
    note = record(Kind.TEMPORARY, importance=0.0, priority=Priority.P2)
    weight = CONFIG.weight_floor
    stability = DAY / CONFIG.salience_factor  # a temporary's day, shortened as far as salience goes
    assert ebbinghaus.stability(note)[0] == pytest.approx(stability)
    inside = 0.9 * CONFIG.protection_days * DAY
    after = 1.1 * CONFIG.protection_days * DAY
    assert weight * math.exp(-inside / stability) < CONFIG.protection_floor  # the floor is what holds it up
    assert ebbinghaus.score(note, NOW + inside)[0] == pytest.approx(CONFIG.protection_floor)
    assert ebbinghaus.score(note, NOW + after)[0] == pytest.approx(weight * math.exp(-after / stability))
    assert ebbinghaus.score(note, NOW + after)[0] < CONFIG.protection_floor


def test_clock_before_the_reference_gives_the_full_weight() -> None:
    ebbinghaus = Ebbinghaus(CONFIG)
    weight = CONFIG.weight_floor + (1 - CONFIG.weight_floor) * 0.6
    used_later = record(created=NOW - 100 * DAY, last=NOW + DAY, count=4)  # outside protection
    assert ebbinghaus.score(used_later, NOW)[0] == pytest.approx(weight)
    made_later = record(created=NOW + DAY)
    assert ebbinghaus.score(made_later, NOW)[0] == pytest.approx(weight)
    assert ebbinghaus.score(made_later, NOW - YEAR)[0] == pytest.approx(weight)


# --- the composite on the default configuration ----------------------------------------------------------


def test_unreferenced_temporary_note_goes_cold_then_forgotten() -> None:
    composite = Composite(CONFIG)
    note = record(Kind.TEMPORARY, importance=0.6, priority=Priority.P2)  # at the salience pivot: S0 one day
    assert composite_tier(composite, note, NOW + 0.5 * DAY) <= WARM  # protected on its first day
    assert composite_tier(composite, note, NOW + 1.2 * DAY) == COLD
    assert composite_tier(composite, note, NOW + 2 * DAY) >= COLD
    assert composite_tier(composite, note, NOW + 4 * DAY) == FORGOTTEN
    # One judged unlikely to be needed fades at a third of that: gone as soon as its protected first day ends.
    idle = record(Kind.TEMPORARY, importance=0.2, priority=Priority.P2)
    assert composite_tier(composite, idle, NOW + 0.5 * DAY) <= WARM
    assert composite_tier(composite, idle, NOW + 1.2 * DAY) == FORGOTTEN


def test_unreferenced_fact_is_kept_for_weeks() -> None:
    composite = Composite(CONFIG)
    fact = record(Kind.FACT, importance=0.6, priority=Priority.P1)
    for days in (7, 14, 21):
        assert composite_tier(composite, fact, NOW + days * DAY) in (WARM, COLD)


def test_fact_recalled_every_three_days_stays_hot_for_a_year() -> None:
    composite = Composite(CONFIG)
    fact = record(Kind.FACT, importance=0.6, priority=Priority.P1)
    at = NOW
    while at < NOW + YEAR:
        at += 3 * DAY
        assert composite_tier(composite, fact, at - 1.0) == HOT  # just before the recall
        fact = recalled(fact, at)
    assert fact.access_count[0] >= 120


@pytest.mark.parametrize("flag", ["pinned", "held", "P0"])
def test_exempt_records_score_one_forever(flag: str) -> None:
    composite = Composite(CONFIG)
    batch = record(Kind.TEMPORARY, importance=0.0, priority=Priority.P0 if flag == "P0" else Priority.P2,
                   created=NOW - 10 * YEAR, pinned=flag == "pinned", held=flag == "held")
    for later in (0.0, DAY, 100 * DAY, 10 * YEAR, 1000 * YEAR):
        assert composite.score(batch, NOW + later)[0] == 1.0
        assert composite_tier(composite, batch, NOW + later) == HOT
    assert composite.projected_change(batch, NOW) is None


def test_expired_p2_record_is_forgotten_whatever_its_decay() -> None:
    composite = Composite(CONFIG)
    stale = record(Kind.FACT, importance=0.6, priority=Priority.P2, created=NOW - 31 * DAY)
    parts = composite.breakdown(stale, NOW)
    assert parts["ebbinghaus"][0] >= CONFIG.thresholds[Tier.WARM]  # decay alone would keep it warm
    assert parts["priority"][0] == 0.0
    assert parts["composite"][0] == 0.0
    assert composite_tier(composite, stale, NOW) == FORGOTTEN

    used = record(Kind.FACT, importance=0.6, priority=Priority.P2, created=NOW - 31 * DAY, last=NOW - 2 * DAY,
                  count=1)
    assert composite.score(used, NOW)[0] > 0.0
    assert composite_tier(composite, used, NOW) != FORGOTTEN


def test_combinations() -> None:
    batch = random_batch()
    live = ~batch.exempt & (PriorityExpiry(CONFIG).score(batch, NOW) == 1.0)
    assert live.sum() > 100
    decay = Ebbinghaus(CONFIG).score(batch, NOW)
    importance = Importance(CONFIG).score(batch, NOW)

    blend = Composite(replace(CONFIG, combine="blend")).score(batch, NOW)
    low, high = np.minimum(decay, importance), np.maximum(decay, importance)
    assert ((blend[live] >= low[live] - 1e-12) & (blend[live] <= high[live] + 1e-12)).all()
    b = CONFIG.blend_importance
    np.testing.assert_allclose(blend[live], ((1 - b) * decay + b * importance)[live])

    np.testing.assert_allclose(Composite(CONFIG).score(batch, NOW)[live], decay[live])
    np.testing.assert_allclose(Composite(replace(CONFIG, combine="importance")).score(batch, NOW)[live],
                               importance[live])
    for combine in ("decay", "importance", "blend"):
        composite = Composite(replace(CONFIG, combine=combine))
        scores = composite.score(batch, NOW)
        assert (scores[batch.exempt] == 1.0).all()
        np.testing.assert_array_equal(composite.breakdown(batch, NOW)["composite"], scores)


def test_importance_parts() -> None:
    importance = Importance(CONFIG)
    w_type, w_recall, w_mark, w_relevance = CONFIG.importance_weights
    plain = record(Kind.EPISODE, importance=0.5, count=5)
    expected = w_type * CONFIG.type_scores[Kind.EPISODE] + w_recall * 5 / CONFIG.recall_saturation
    assert importance.score(plain, NOW)[0] == pytest.approx(expected)
    saturated = record(Kind.EPISODE, importance=0.95, count=500)
    relevant = replace(saturated, relevance=np.array([0.5]))
    expected = w_type * CONFIG.type_scores[Kind.EPISODE] + w_recall + w_mark
    assert importance.score(saturated, NOW)[0] == pytest.approx(expected)
    assert importance.score(relevant, NOW)[0] == pytest.approx(expected + w_relevance * 0.5)


def test_tiers_follow_the_thresholds() -> None:
    composite = Composite(CONFIG)
    hot, warm, cold = (CONFIG.thresholds[t] for t in (Tier.HOT, Tier.WARM, Tier.COLD))
    scores = np.array([1.0, hot, np.nextafter(hot, 0), warm, np.nextafter(warm, 0), cold, np.nextafter(cold, 0), 0])
    assert composite.tiers(scores).tolist() == [HOT, HOT, WARM, WARM, COLD, COLD, FORGOTTEN, FORGOTTEN]
    assert [TIER_OF_CODE[c] for c in range(4)] == [Tier.HOT, Tier.WARM, Tier.COLD, Tier.TRASH]


# --- configuration checks --------------------------------------------------------------------------------


@pytest.mark.parametrize(("changes", "field"), [
    ({"beta": -0.1}, "beta"),
    ({"beta": math.nan}, "beta"),
    ({"weight_floor": math.nan}, "weight_floor"),
    ({"protection_floor": -1.0}, "protection_floor"),
    ({"marked_factor": math.inf}, "marked_factor"),
    ({"stability_days": {**CONFIG.stability_days, Kind.FACT: -5.0}}, "stability_days.fact"),
    ({"stability_days": {**CONFIG.stability_days, Kind.EPISODE: math.nan}}, "stability_days.episode"),
    ({"expiry_days": {Priority.P1: 90.0, Priority.P2: -1.0}}, "expiry_days.P2"),
    ({"thresholds": {Tier.HOT: 0.3, Tier.WARM: 0.4, Tier.COLD: 0.15}}, "thresholds"),
    ({"thresholds": {Tier.HOT: 0.75, Tier.WARM: 0.1, Tier.COLD: 0.15}}, "thresholds"),
    ({"thresholds": {Tier.HOT: 1.2, Tier.WARM: 0.4, Tier.COLD: 0.15}}, "thresholds"),
    ({"grace_days": -1.0}, "grace_days"),
    ({"combine": "average"}, "combine"),
])
def test_config_rejects(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        replace(CONFIG, **changes)
    assert caught.value.field == field


def test_config_accepts_the_defaults_and_valid_changes() -> None:
    assert RetentionConfig().combine == "decay"
    assert replace(CONFIG, combine="blend", grace_days=0.0, beta=0.0).grace_days == 0.0


# --- projected tier changes ------------------------------------------------------------------------------


def test_projected_change_matches_the_analytic_crossings() -> None:
    composite = Composite(CONFIG)
    fact = record(Kind.FACT, importance=0.6, priority=Priority.P1)
    weight = CONFIG.weight_floor + (1 - CONFIG.weight_floor) * 0.6
    stability = CONFIG.stability_days[Kind.FACT] * DAY
    # W * exp(-dt / S) = threshold  <=>  dt = S * ln(W / threshold)
    to_warm = stability * math.log(weight / CONFIG.thresholds[Tier.HOT])
    to_cold = stability * math.log(weight / CONFIG.thresholds[Tier.WARM])

    change = composite.projected_change(fact, NOW)
    assert change is not None
    at, tier = change
    assert tier is Tier.WARM
    assert abs(at - (NOW + to_warm)) <= 60

    change = composite.projected_change(fact, NOW + 10 * DAY)
    assert change is not None
    at, tier = change
    assert tier is Tier.COLD
    assert abs(at - (NOW + to_cold)) <= 60


def test_projected_change_of_a_p2_record_is_its_expiry() -> None:
    composite = Composite(CONFIG)
    fact = record(Kind.FACT, importance=0.6, priority=Priority.P2, created=NOW - 10 * DAY)
    expiry = NOW + CONFIG.expiry_days[Priority.P2] * DAY - 10 * DAY
    assert composite_tier(composite, fact, expiry) == WARM  # decay alone has not forgotten it
    change = composite.projected_change(fact, NOW)
    assert change is not None
    at, tier = change
    assert tier is Tier.TRASH
    assert expiry < at <= expiry + 60


def test_projected_change_edges() -> None:
    composite = Composite(CONFIG)
    gone = record(Kind.TEMPORARY, importance=0.2, priority=Priority.P2, created=NOW - 50 * DAY)
    assert composite.projected_change(gone, NOW) is None  # already forgotten: nothing lower to drop to
    slow = record(Kind.FACT, importance=1.0, priority=Priority.P1, last=NOW, count=100, security=True)
    assert composite.projected_change(slow, NOW, horizon_days=1) is None
    with pytest.raises(InvalidInput) as caught:
        composite.projected_change(random_batch(n=2), NOW)
    assert caught.value.field == "batch_of_one"
    with pytest.raises(InvalidInput) as caught:
        composite.projected_change(slow, NOW, horizon_days=0)
    assert caught.value.field == "horizon_days"


# --- curves and plots ------------------------------------------------------------------------------------


def test_recall_makes_the_curve_jump_up() -> None:
    fact = record(Kind.FACT, importance=0.6, priority=Priority.P2)
    recalls = [NOW + 10 * DAY, NOW + 25 * DAY, NOW + 60 * DAY, NOW + 200 * DAY]  # the last is out of range
    times, scores = retention_curve(fact, recalls, NOW, NOW + 90 * DAY, CONFIG, points=300)
    assert len(times) == len(scores) == 300 + 2 * 3
    assert (np.diff(times) >= 0).all()
    for at in recalls[:3]:
        before, after = np.flatnonzero(times == at)
        assert after == before + 1
        assert scores[after] > scores[before]
    # Between recalls the record is left alone, so the score never rises there.
    rises = np.flatnonzero(np.diff(scores) > 1e-12)
    assert all(times[i] == times[i + 1] for i in rises)
    # The 60-day recall came 35 days after the previous one, past the P2 expiry: it was forgotten, then back.
    at_60 = np.flatnonzero(times == recalls[2])
    assert scores[at_60[0]] == 0.0 and scores[at_60[1]] > CONFIG.thresholds[Tier.HOT]


def test_kind_curves() -> None:
    curves = kind_curves(CONFIG, days=120, points=241)
    assert set(curves) == set(Kind)
    for kind, (days, scores) in curves.items():
        assert days[0] == 0.0 and days[-1] == 120.0 and len(scores) == 241
        assert scores[0] == pytest.approx(0.84), kind
        assert (np.diff(scores) <= 1e-12).all()
        assert scores[-1] == 0.0  # P1 expiry at 90 days
    at_30 = {kind: scores[60] for kind, (_, scores) in curves.items()}
    assert at_30[Kind.FACT] > at_30[Kind.PREFERENCE] > at_30[Kind.EPISODE] > at_30[Kind.TEMPORARY]


def test_plots_write_pngs(tmp_path: Path) -> None:
    fact = record(Kind.FACT, importance=0.6, priority=Priority.P1)
    recalls = [NOW + d * DAY for d in (5, 12, 30, 70)]
    times, scores = retention_curve(fact, recalls, NOW, NOW + 180 * DAY, CONFIG)
    out = plot_record(times, scores, recalls, CONFIG, "A fact recalled four times", tmp_path / "record.png")
    kinds = plot_kinds(kind_curves(CONFIG), CONFIG, tmp_path / "plots" / "kinds.png")
    for path in (out, kinds):
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        assert len(data) > 10_000
