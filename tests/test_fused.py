"""The compiled sweep kernel computes exactly what the numpy policies compute."""

from __future__ import annotations

import numpy as np
import pytest

from ebbing.retention import fused
from ebbing.retention.base import RecordBatch
from ebbing.retention.composite import Composite
from ebbing.retention.config import DAY, RetentionConfig


def random_batch(n: int, seed: int) -> RecordBatch:
    rng = np.random.default_rng(seed)
    created = rng.uniform(0, 400 * DAY, n)
    last = np.where(rng.random(n) < 0.3, np.nan, created + rng.uniform(0, 200 * DAY, n))
    return RecordBatch(
        kind=rng.integers(0, 6, n).astype(np.int8), importance=rng.uniform(-0.1, 1.1, n),
        priority=rng.integers(0, 3, n).astype(np.int8), pinned=rng.random(n) < 0.05, held=rng.random(n) < 0.02,
        created_at=created, last_accessed_at=last, access_count=rng.integers(-1, 300, n),
        update_count=rng.integers(0, 6, n), security=rng.random(n) < 0.1,
    )


@pytest.mark.parametrize("config", [
    RetentionConfig(),
    RetentionConfig(beta=1.3, max_reinforcement=5.0, weight_floor=0.2, protection_days=3.0, protection_floor=0.7,
                    security_factor=3.0, updated_factor=0.25, frequent_updates=1, grace_days=1.0),
], ids=["defaults", "unusual"])
def test_fused_kernel_equals_the_numpy_policies(config: RetentionConfig) -> None:
    batch = random_batch(60_000, seed=5)
    now = 500 * DAY
    composite = Composite(config)
    reference = composite._combine(batch, composite.ebbinghaus.score(batch, now), composite.priority.score(batch, now),
                                   None)
    compiled = fused.decay_scores(batch, now, config)
    assert np.allclose(compiled, reference, rtol=1e-12, atol=1e-12)
    assert np.array_equal(composite.tiers(compiled), composite.tiers(reference))
    assert np.allclose(composite.score(batch, now), reference, rtol=1e-12, atol=1e-12)  # big batches take it


def test_the_kernels_exp_matches_numpy_over_the_range_a_decay_needs() -> None:
    x = np.concatenate([-np.logspace(-12, np.log10(720), 200_000), [0.0, -0.0, -1e-300, -707.9, -708.0, -708.1, -1e6]])
    ours, reference = fused.exp_nonpositive(x), np.exp(x)
    kept = x >= fused.EXP_MIN
    assert np.allclose(ours[kept], reference[kept], rtol=4.5e-16, atol=0)  # 2 ulp
    assert np.all(ours[~kept] == 0.0) and np.all(reference[~kept] < 3.4e-308)


def test_a_reinforcement_cap_too_late_to_tabulate_is_left_to_numpy() -> None:
    config = RetentionConfig(beta=1e-9)
    assert not fused.applies(config)
    batch = random_batch(60_000, seed=3)
    composite = Composite(config)
    reference = composite._combine(batch, composite.ebbinghaus.score(batch, 500 * DAY),
                                   composite.priority.score(batch, 500 * DAY), None)
    assert np.array_equal(composite.score(batch, 500 * DAY), reference)
    with pytest.raises(ValueError, match="combine='decay'"):
        fused.decay_scores(batch, 500 * DAY, config)


def test_compiled_tier_codes_equal_numpys() -> None:
    composite = Composite(RetentionConfig())
    edges = [0.75, 0.40, 0.15, 0.0, 1.0, np.nextafter(0.75, 0)]
    scores = np.concatenate([np.random.default_rng(1).random(80_000), edges])
    hot, warm, cold = composite._thresholds
    by_numpy = (3 - (scores >= cold).astype(np.int8) - (scores >= warm) - (scores >= hot)).astype(np.int8)
    assert np.array_equal(composite.tiers(scores), by_numpy)
    assert composite.tiers(scores).dtype == np.int8


@pytest.mark.parametrize("archive_days", [365.0, 30.0, 0.0])
def test_compiled_placement_equals_tiers_then_settle(archive_days: float) -> None:
    config = RetentionConfig(archive_days=archive_days)
    composite = Composite(config)
    batch = random_batch(50_000, seed=11)
    now = 300 * DAY
    scores = composite.score(batch, now)
    expected = composite.settle(batch, composite.tiers(scores), now)
    compiled = fused.placement(scores, batch, now, config)
    assert np.array_equal(compiled, expected)
    assert (expected == 2).sum() > (composite.tiers(scores) == 2).sum() or archive_days == 0.0  # it did settle some
    assert np.array_equal(composite.placement(batch, now), expected)
