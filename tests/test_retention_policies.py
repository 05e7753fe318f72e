"""Retention policies plugged into `Composite`: the configured default keeps every figure, a list of weighted
policies combines as a weighted mean, and the PostgreSQL sweep runs a composite in SQL when every policy has an
SQL form and falls back to Python, saying so, when one has not; numba is optional."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import InvalidInput
from ebbing.lifecycle.sweep import Sweeper, SweepReport
from ebbing.model import Event, Kind, MemoryRecord, Priority, new_id, when
from ebbing.retention import fused
from ebbing.retention.base import KINDS, PRIORITIES, RecordBatch, SqlPolicy
from ebbing.retention.composite import Composite
from ebbing.retention.config import DAY, RetentionConfig
from ebbing.retention.ebbinghaus import Ebbinghaus
from ebbing.retention.importance import Importance
from ebbing.retention.priority import PriorityExpiry
from ebbing.retention.sql import elapsed, literal
from ebbing.store import postgres_sweep

from .conftest import T0
from .pg import retention_table

NOW = T0.timestamp() + 200 * DAY
CONFIG = RetentionConfig()


class Freshness:
    """A policy with no SQL form: fades linearly to 0 over the 30 days after the last use."""

    name = "freshness"

    def score(self, batch: RecordBatch, now: float | np.ndarray) -> np.ndarray:
        out: np.ndarray = np.clip(1.0 - np.maximum(now - batch.referenced_at, 0.0) / (30 * DAY), 0.0, 1.0)
        return out


class SqlFreshness(Freshness):
    """The same policy with its SQL twin (the `% 1` is there to show a policy's % reaches PostgreSQL intact)."""

    def sql(self, row: str, now: float) -> str:
        return (f"least(greatest(1.0::float8 - greatest({elapsed(row, now)}, 0.0) / {literal(30 * DAY)} "
                f"+ 0.0 * ({row}.access_count % 1), 0.0), 1.0)")


def random_batch(n: int, seed: int) -> RecordBatch:
    rng = np.random.default_rng(seed)
    created = NOW - rng.uniform(0, 400 * DAY, n)
    last = np.where(rng.random(n) < 0.3, np.nan, created + rng.uniform(0, NOW - created))
    return RecordBatch(
        kind=rng.integers(0, len(KINDS), n).astype(np.int8), importance=rng.uniform(0, 1, n),
        priority=rng.integers(0, len(PRIORITIES), n).astype(np.int8), pinned=rng.random(n) < 0.05,
        held=rng.random(n) < 0.02, created_at=created, last_accessed_at=last, access_count=rng.integers(0, 40, n),
        update_count=rng.integers(0, 6, n), security=rng.random(n) < 0.1)


# --- the composite in Python ------------------------------------------------------------------------------


@pytest.mark.parametrize("combine", ["decay", "importance", "blend"])
def test_the_configured_composite_is_the_formula_and_the_equivalent_list(combine: str) -> None:
    config = RetentionConfig(combine=combine, blend_importance=0.3)
    batch = random_batch(2000, seed=1)
    decay, importance = Ebbinghaus(config).score(batch, NOW), Importance(config).score(batch, NOW)
    gate = PriorityExpiry(config).score(batch, NOW)
    base = {"decay": decay, "importance": importance, "blend": 0.7 * decay + 0.3 * importance}[combine]
    configured = Composite(config)
    assert np.array_equal(configured.score(batch, NOW), np.where(batch.exempt, 1.0, base * gate))

    terms: dict[str, list[Any]] = {
        "decay": [(Ebbinghaus(config), 1.0)], "importance": [Importance(config)],
        "blend": [(Ebbinghaus(config), 1 - 0.3), (Importance(config), 0.3)]}
    listed = Composite(config, terms[combine])
    assert np.array_equal(listed.score(batch, NOW), configured.score(batch, NOW))
    assert np.array_equal(listed.placement(batch, NOW), configured.placement(batch, NOW))
    times = NOW + np.arange(len(batch)) * 600.0  # one time per record, as curves and projections use
    assert np.array_equal(listed.score(batch, times), configured.score(batch, times))
    assert configured.label == f"composite/{combine}"  # what sweep events have always named
    for composite in (configured, listed):
        assert composite.sql("m", NOW)  # every built-in policy renders as SQL
        assert composite.without_sql() == []


def test_only_the_decay_composite_takes_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[RetentionConfig] = []

    def kernel(batch: RecordBatch, now: float, config: RetentionConfig) -> np.ndarray:
        calls.append(config)
        return np.zeros(len(batch))

    # A spy instead of numba (test_fused holds the kernel itself to numpy): only the routing is in question here.
    monkeypatch.setattr(fused, "FUSED_AT", 100)
    monkeypatch.setattr(fused, "applies", lambda config: True)
    monkeypatch.setattr(fused, "decay_scores", kernel)
    batch = random_batch(100, seed=2)
    for composite in (Composite(CONFIG), Composite(CONFIG, [(Ebbinghaus(CONFIG), 1.0)]), Composite(CONFIG, [
            (Ebbinghaus(CONFIG), 0.9), (Freshness(), 0.1)]), Composite(CONFIG, [Freshness()]), Composite(CONFIG, [
            Ebbinghaus(RetentionConfig(beta=0.1))])):
        composite.score(batch, NOW)
    assert len(calls) == 2  # the configured decay composite, and the list equal to it


def test_weights_are_relative_and_a_custom_policy_is_explained_by_name() -> None:
    batch = random_batch(500, seed=3)
    doubled = Composite(CONFIG, [(Ebbinghaus(CONFIG), 2.0), (Importance(CONFIG), 2.0)])
    blend = Composite(RetentionConfig(combine="blend", blend_importance=0.5))
    np.testing.assert_allclose(doubled.score(batch, NOW), blend.score(batch, NOW), rtol=1e-15)

    mixed = Composite(CONFIG, [(Ebbinghaus(CONFIG), 0.75), (Freshness(), 0.25)])
    parts = mixed.breakdown(batch, NOW)
    assert list(parts) == ["ebbinghaus", "priority", "importance", "freshness", "composite"]
    expected = np.where(batch.exempt, 1.0, (0.75 * parts["ebbinghaus"] + 0.25 * parts["freshness"]) * parts["priority"])
    assert np.array_equal(parts["composite"], expected)
    assert np.array_equal(mixed.score(batch, NOW), expected)
    assert mixed.label == "composite/0.75*ebbinghaus+0.25*freshness"
    assert mixed.without_sql() == ["freshness"] and not isinstance(Freshness(), SqlPolicy)
    with pytest.raises(ValueError, match="freshness"):
        mixed.sql("m", NOW)
    change = mixed.projected_change(random_batch(1, seed=4), NOW)
    assert change is None or change[0] > NOW


@pytest.mark.parametrize(("policies", "field"), [
    ([], "policies"), ([(Freshness(), 0.0)], "policies"), ([(Freshness(), -1.0)], "policies[0]"),
    ([(Freshness(), float("nan"))], "policies[0]"), ([object()], "policies[0]"),
])
def test_a_bad_policy_list_is_refused(policies: list[Any], field: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        Composite(CONFIG, policies)
    assert refused.value.field == field


@pytest.fixture
def without_numba(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    fused.available.cache_clear()
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now raises ImportError
    yield
    monkeypatch.undo()
    fused.available.cache_clear()


@pytest.mark.usefixtures("without_numba")
def test_without_numba_every_batch_takes_the_numpy_path() -> None:
    assert not fused.available() and not fused.applies(CONFIG)
    batch = random_batch(fused.FUSED_AT, seed=5)
    composite = Composite(CONFIG)
    decay, gate = composite.ebbinghaus.score(batch, NOW), composite.priority.score(batch, NOW)
    scores = composite.score(batch, NOW)
    assert np.array_equal(scores, np.where(batch.exempt, 1.0, decay * gate))
    hot, warm, cold = composite._thresholds
    codes = (3 - (scores >= cold).astype(np.int8) - (scores >= warm) - (scores >= hot)).astype(np.int8)
    assert np.array_equal(composite.tiers(scores), codes)
    assert np.array_equal(composite.placement(batch, NOW), composite.settle(batch, codes, NOW))


# --- SQL ----------------------------------------------------------------------------------------------------


def test_each_policys_sql_is_its_python_score(pg_url: str) -> None:
    rng = np.random.default_rng(7)
    rows = []
    for _ in range(1500):  # every branch: kinds, priorities, flags, never used, new (protected), capped counts
        created = NOW - float(rng.uniform(0, 400)) * DAY
        last = None if rng.random() < 0.3 else float(rng.uniform(created, NOW))
        rows.append((str(rng.choice([k.value for k in KINDS])), float(rng.choice([0.0, 0.3, 0.6, 0.75, 0.9, 1.0])),
                     str(rng.choice([p.value for p in PRIORITIES])), bool(rng.random() < 0.05),
                     bool(rng.random() < 0.05), bool(rng.random() < 0.2), created, last,
                     int(rng.choice([0, 1, 3, 20, 1000])), int(rng.choice([0, 2, 3, 9])),
                     # an explicit expiry on some: come (pinned and P0 ones lose their exemption), or still ahead
                     None if rng.random() < 0.8 else float(NOW + rng.uniform(-30, 30) * DAY)))
    batch = RecordBatch.from_rows(rows)
    policies: dict[str, Any] = {
        "ebbinghaus": Ebbinghaus(CONFIG), "importance": Importance(CONFIG), "priority": PriorityExpiry(CONFIG),
        "freshness": SqlFreshness(),
        "composite": Composite(CONFIG, [(Ebbinghaus(CONFIG), 0.6), (Importance(CONFIG), 0.3), (SqlFreshness(), 0.1)]),
    }
    with psycopg.connect(pg_url, autocommit=True) as conn:
        retention_table(conn, rows)
        columns = ", ".join(policy.sql("m", NOW) for policy in policies.values())
        found = np.array(conn.execute(f"SELECT {columns} FROM m ORDER BY n").fetchall(), dtype=np.float64)
    for index, (name, policy) in enumerate(policies.items()):
        np.testing.assert_allclose(found[:, index], policy.score(batch, NOW), rtol=1e-12, atol=1e-15, err_msg=name)


# --- sweeps: SQLite, PostgreSQL in SQL, PostgreSQL falling back to Python -----------------------------------


def _records() -> list[MemoryRecord]:
    """Records whose ages spread them over every move a sweep at NOW makes."""
    rng = np.random.default_rng(3)
    out = []
    for i in range(240):
        created = NOW - float(rng.uniform(0, 150)) * DAY
        vector = rng.standard_normal(HashEmbedder().dimensions).astype(np.float32)
        out.append(MemoryRecord(
            id=new_id(created), text=f"record {i}", kind=[Kind.FACT, Kind.EPISODE, Kind.TEMPORARY][i % 3],
            importance=0.6, priority=[Priority.P1, Priority.P2][i % 2], created_at=when(created),
            updated_at=when(created), tenant="acme", user_id=f"u{i % 3}", content_hash=f"h{i}",
            embedding=vector / np.linalg.norm(vector)))
    return out


def _sweep(location: str | Path, archive: Path, records: list[MemoryRecord], policy: Freshness) -> tuple[
        SweepReport, SweepReport, dict[str, str]]:
    """A dry run, then a sweep, of `records` at NOW scored 0.7 * decay + 0.3 * `policy`: both reports, and where
    every record is after."""
    with Memory(location, embedder=HashEmbedder(), tenant="acme", archive=archive) as mem:
        mem.store.insert(records, [["record", str(i)] for i in range(len(records))],
                         [Event(r.id, "add", r.created_at, "test") for r in records])
        composite = Composite(mem.retention, [(Ebbinghaus(mem.retention), 0.7), (policy, 0.3)])
        sweeper = Sweeper(mem.store, mem.archive, mem.retention, mem.tenant, "test", composite=composite)
        preview = sweeper.run(NOW, dry_run=True, batch_size=50)
        report = sweeper.run(NOW, batch_size=50)
        where = {r.id: (found.tier.value if (found := mem.store.get("acme", r.id)) else "gone") for r in records}
        for memory_id in mem.store.cold("acme", list(where)):
            where[memory_id] = "cold"
        policies = {e.data["policy"] for e in mem.store.events_since("acme", ["tier"], 0.0)}
    assert policies == {"composite/0.7*ebbinghaus+0.3*freshness"}  # the audit log names the policies
    assert "gone" not in where.values()
    return preview, report, where


def _moves(report: SweepReport) -> dict[str, tuple[str, str, float, str]]:
    return {c.id: (c.source.value, c.target.value, c.score, c.reason) for c in report.changes}


def test_a_policy_without_sql_sweeps_postgres_in_python_like_sqlite(
        pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres_sweep, "_warned", set())  # the first fallback of a process is a warning
    records = _records()
    _, sqlite, sqlite_after = _sweep(tmp_path / "mem.db", tmp_path / "a1", records, Freshness())
    assert (sqlite.ran_in, sqlite.note) == ("python", None)
    assert {"hot->warm", "hot->cold", "hot->trash"} <= set(sqlite.transitions)

    with caplog.at_level(logging.WARNING, logger="ebbing.store.postgres_sweep"):
        preview, swept, after = _sweep(pg_url, tmp_path / "a2", records, Freshness())
    for report in (preview, swept):
        assert report.ran_in == "python" and "'freshness' has no SQL form" in str(report.note)
        assert report.to_dict()["ran_in"] == "python" and report.to_dict()["note"] == report.note
        assert _moves(report) == _moves(sqlite) and report.evaluated == sqlite.evaluated
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "'freshness'" in r.getMessage()]
    assert len(warnings) == 1  # said once, not at every sweep
    assert after == sqlite_after


def test_a_policy_with_sql_sweeps_postgres_in_the_database_like_sqlite(pg_url: str, tmp_path: Path) -> None:
    records = _records()
    _, sqlite, sqlite_after = _sweep(tmp_path / "mem.db", tmp_path / "a1", records, SqlFreshness())
    preview, swept, after = _sweep(pg_url, tmp_path / "a2", records, SqlFreshness())
    for report in (preview, swept):
        assert (report.ran_in, report.note) == ("database", None)
        assert _moves(report).keys() == _moves(sqlite).keys()
        assert all(m[:2] == _moves(sqlite)[i][:2] for i, m in _moves(report).items())  # scores agree to 1e-12
    assert after == sqlite_after


def test_a_sweep_refuses_a_composite_of_another_config(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem.db", embedder=HashEmbedder(), archive=tmp_path / "a") as mem, \
            pytest.raises(ValueError, match="RetentionConfig"):
        Sweeper(mem.store, mem.archive, mem.retention, mem.tenant, "test",
                composite=Composite(RetentionConfig(beta=0.1)))


def test_memory_takes_policies_for_its_sweeps_ranking_and_explain(tmp_path: Path) -> None:
    """`Memory(policies=...)`: the one composite every part of the engine scores with."""
    with Memory(tmp_path / "mem.db", embedder=HashEmbedder(), archive=tmp_path / "a", tenant="acme",
                policies=[(Ebbinghaus(CONFIG), 0.7), (Freshness(), 0.3)]) as mem:
        record = mem.add("the staging cluster runs on three nodes", user_id="u", kind="fact", at=T0).records[0]
        explained = mem.explain(record.id, at=T0.timestamp() + 40 * DAY)
        assert explained["combine"] == "0.7*ebbinghaus+0.3*freshness"
        assert explained["policies"]["freshness"] == 0.0  # 40 days unused: the custom policy has let go
        report = mem.sweep(at=T0.timestamp() + 40 * DAY)
        moved = [e for e in mem.history(record.id) if e.type == "tier"]
    assert report.changes and moved
    assert {e.data["policy"] for e in moved} == {"composite/0.7*ebbinghaus+0.3*freshness"}
