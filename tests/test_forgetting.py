"""The forgetting engine end to end, with a controlled clock: tiers, sweeps, trash, restore, purge."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from ebbing import Conflict, InvalidInput, Memory, NotFound, Tier
from ebbing.ingest.guard import pseudonym
from ebbing.retention.config import RetentionConfig

from .conftest import T0


def day(n: float) -> object:
    return T0 + timedelta(days=n)


def tier(mem: Memory, memory_id: str) -> Tier:
    return mem.get(memory_id).tier


def test_an_unreferenced_temporary_note_fades_within_days(mem: Memory) -> None:
    note = mem.add("so tired today", user_id="u", at=T0).records[0]
    assert note.kind.value == "temporary"
    seen = []
    for n in range(0, 6):
        mem.sweep(at=day(n))
        seen.append(tier(mem, note.id))
    # Judged unlikely to be needed, its one-day stability is cut to a third: it stays through its protected first
    # day, then goes straight to the trash (a P2 note has no wait in the archive).
    assert seen[0] in (Tier.HOT, Tier.WARM) and seen[-1] is Tier.TRASH and seen.index(Tier.TRASH) <= 2, seen
    assert mem.search("tired", user_id="u", at=day(6)) == []


def test_an_unreferenced_fact_lasts_weeks(mem: Memory) -> None:
    fact = mem.add("The staging database lives on host db-7", user_id="u", at=T0).records[0]
    for week in range(1, 6):
        mem.sweep(at=day(7 * week))
        assert tier(mem, fact.id) is not Tier.TRASH, f"forgotten in week {week}"
    assert tier(mem, fact.id) in (Tier.WARM, Tier.COLD)


def test_a_fact_recalled_every_few_days_stays_hot_for_a_year(mem: Memory) -> None:
    fact = mem.add("The billing service timeout is 45 seconds", user_id="u", at=T0).records[0]
    for n in range(3, 366, 3):
        mem.sweep(at=day(n) - timedelta(minutes=1))
        assert tier(mem, fact.id) is Tier.HOT, f"day {n}"
        (hit,) = mem.search("billing service timeout", user_id="u", at=day(n))
        assert hit.record.id == fact.id
    assert mem.get(fact.id).access_count == 121


@pytest.mark.parametrize("flag", ["pinned", "P0", "held"])
def test_pinned_p0_and_held_records_never_move(mem: Memory, flag: str) -> None:
    record = mem.add("ok", user_id="u", pinned=flag == "pinned", priority="P0" if flag == "P0" else "P2",
                     at=T0).records[0]
    if flag == "held":
        mem.hold(record.id, at=T0)
    for n in (1, 30, 100, 400, 800):
        report = mem.sweep(at=day(n))
        assert tier(mem, record.id) is Tier.HOT and not report.changes


def test_p2_expires_after_30_days_without_use(mem: Memory) -> None:
    idle = mem.add("The demo account is demo-4412", user_id="u", priority="P2", kind="fact", at=T0).records[0]
    used = mem.add("The sandbox account is sandbox-9981", user_id="u", priority="P2", kind="fact",
                   at=T0).records[0]
    assert [h.record.id for h in mem.search("sandbox-9981", user_id="u", at=day(29))] == [used.id]
    report = mem.sweep(at=day(31))
    assert tier(mem, idle.id) is Tier.TRASH
    assert tier(mem, used.id) is not Tier.TRASH
    (change,) = [c for c in report.changes if c.id == idle.id]
    assert "P2 expired" in change.reason and change.target is Tier.TRASH


def test_restore_brings_back_a_trashed_record_with_its_history(mem: Memory) -> None:
    record = mem.add("The VPN profile is corp-eu-2", user_id="u", at=T0).records[0]
    mem.forget(record.id, at=day(1), reason="user asked")
    assert tier(mem, record.id) is Tier.TRASH
    assert mem.search("VPN profile", user_id="u", at=day(1)) == []
    restored = mem.restore(record.id, at=day(2))
    assert restored.tier is Tier.WARM and restored.id == record.id and restored.text == record.text
    assert [h.record.id for h in mem.search("VPN profile", user_id="u", at=day(2))] == [record.id]
    types = [(e.type, e.data.get("to")) for e in mem.history(record.id)]
    assert types[:3] == [("add", None), ("tier", "trash"), ("tier", "warm")]


def test_cold_records_live_in_the_archive_and_come_back(mem: Memory, tmp_path: Path) -> None:
    record = mem.add("The old build farm was in Leeds", user_id="u", kind="episode", at=T0).records[0]
    mem.sweep(at=day(12))
    assert tier(mem, record.id) is Tier.COLD
    assert list((tmp_path / "archive").rglob("*.parquet"))
    assert mem.stats()["by_tier"]["cold"] == 1
    assert mem.search("build farm Leeds", user_id="u", at=day(12), include_cold=False) == []
    (hit,) = mem.search("build farm Leeds", user_id="u", at=day(12))  # deep recall: the archive answers the cue
    assert hit.record.id == record.id and hit.record.tier is Tier.WARM
    assert tier(mem, record.id) is Tier.WARM
    assert list((tmp_path / "archive").rglob("*.parquet"))  # a recall leaves the file for compaction
    mem.sweep(at=day(13))
    assert not list((tmp_path / "archive").rglob("*.parquet"))  # its file held only it, and is gone
    assert mem.store.intents() == []
    assert [h.record.id for h in mem.search("build farm Leeds", user_id="u", at=day(13))] == [record.id]


def test_restore_from_cold_and_forget_from_cold(mem: Memory) -> None:
    a = mem.add("Episode one: the migration to Kafka", user_id="u", kind="episode", at=T0).records[0]
    b = mem.add("Episode two: the outage on Friday", user_id="u", kind="episode", at=T0).records[0]
    mem.sweep(at=day(12))
    assert tier(mem, a.id) is tier(mem, b.id) is Tier.COLD
    assert mem.restore(a.id, at=day(13)).tier is Tier.WARM
    assert mem.forget(b.id, at=day(13)).tier is Tier.TRASH
    assert mem.get(b.id).text == "Episode two: the outage on Friday"
    assert mem.stats()["by_tier"] == {"hot": 0, "warm": 1, "cold": 0, "trash": 1}


def test_purge_erases_everywhere(mem: Memory, ebbing_home: Path, tmp_path: Path) -> None:
    token = "zebracorn7731"
    record = mem.add(f"My locker code is {token} and the locker is 12B", user_id="u", kind="episode",
                     at=T0).records[0]
    other = mem.add(f"Another note that mentions {token} too", user_id="u", kind="episode", at=T0).records[0]
    mem.search(token, user_id="u", at=day(1))
    mem.sweep(at=day(40))  # one in the archive ...
    mem.restore(other.id, at=day(40))
    mem.forget(other.id, at=day(40))  # ... and one in the trash
    assert tier(mem, record.id) is Tier.COLD and tier(mem, other.id) is Tier.TRASH

    def holders() -> list[Path]:
        return [p for p in tmp_path.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]

    assert holders(), "the text was never on disk; this test would prove nothing"
    mem.purge(record.id, at=day(41))
    mem.purge(other.id, at=day(41))
    with pytest.raises(NotFound):
        mem.get(record.id)
    with pytest.raises(NotFound):
        mem.restore(record.id)
    assert holders() == []
    assert [e.type for e in mem.history(record.id)][-1] == "purge"


def test_purge_user_erases_only_that_user(mem: Memory, tmp_path: Path) -> None:
    for i in range(3):
        mem.add(f"alice secret plan number {i} quokka", user_id="alice", kind="episode", at=T0)
    keep = mem.add("bob keeps his quokka notes", user_id="bob", at=T0).records[0]
    mem.sweep(at=day(12))
    assert mem.purge_user("alice", at=day(13)) == 3
    assert mem.stats(user_id="alice")["total"] == 0
    assert mem.get(keep.id).user_id == "bob"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"secret plan" not in path.read_bytes(), path


def test_erasure_leaves_no_trace_of_the_person(mem: Memory, tmp_path: Path) -> None:
    person = "jane.doe@example.com"
    said = [mem.add(f"Jane's note {i}: the quarterly plan {i}", user_id=person, kind="episode", at=T0).records[0]
            for i in range(3)]
    mem.sweep(at=day(60))  # archived, so the Parquet files are rewritten too
    mem.forget(said[0].id, reason="Jane asked after her divorce from Tom Wright", at=day(61))
    assert mem.purge_user(person, at=day(62)) == 3

    for record in said:  # the trail keeps what happened and when, not who or why
        events = mem.history(record.id)
        assert [e.reason for e in events[:-1]] == [""] * (len(events) - 1)
        assert events[-1].type == "purge" and events[-1].reason == "erasure of a user"
        assert events[-1].data["user"] == pseudonym(person, mem.ingest.tag_key) != person
    report = json.dumps(mem.forgotten(), ensure_ascii=False)
    assert "erasure of a user" in report and person not in report and "divorce" not in report
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert person.encode() not in data and b"Tom Wright" not in data, path


def test_legal_hold_blocks_forgetting_and_purging(mem: Memory) -> None:
    record = mem.add("Contract 88-A was signed on March 3", user_id="u", at=T0).records[0]
    mem.hold(record.id, at=T0)
    with pytest.raises(Conflict):
        mem.forget(record.id)
    with pytest.raises(Conflict):
        mem.purge(record.id)
    with pytest.raises(Conflict):
        mem.purge_user("u")
    assert mem.release(record.id).held is False
    mem.purge(record.id)
    with pytest.raises(NotFound):
        mem.get(record.id)


def test_dry_run_changes_nothing(mem: Memory) -> None:
    ids = [mem.add(text, user_id="u", at=T0).records[0].id for text in ("ok", "thanks", "The port is 8443")]
    before = (mem.stats(), list(mem.export()), [mem.history(i) for i in ids])
    report = mem.sweep(at=day(40), dry_run=True)
    assert report.dry_run and report.changes
    assert (mem.stats(), list(mem.export()), [mem.history(i) for i in ids]) == before
    assert report.transitions == mem.sweep(at=day(40)).transitions


def test_a_sweep_in_the_past_resurrects_nothing(mem: Memory) -> None:
    record = mem.add("ok", user_id="u", at=T0).records[0]
    mem.sweep(at=day(10))
    assert tier(mem, record.id) is Tier.TRASH
    report = mem.sweep(at=day(1))
    assert tier(mem, record.id) is Tier.TRASH and not report.changes
    assert sum(1 for e in mem.history(record.id) if e.type == "tier") == 1


def test_trash_is_purged_after_the_grace_period(tmp_path: Path) -> None:
    from ebbing.embed.hashing import HashEmbedder

    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), retention=RetentionConfig(grace_days=7)) as mem:
        record = mem.add("ok", user_id="u", at=T0).records[0]
        mem.sweep(at=day(5))
        assert tier(mem, record.id) is Tier.TRASH
        assert mem.sweep(at=day(11)).purged == []
        assert mem.sweep(at=day(13)).purged == [record.id]
        with pytest.raises(NotFound):
            mem.get(record.id)


def test_spread_sweeps_touch_each_record_once_per_period(mem: Memory) -> None:
    for i in range(200):
        mem.add(f"fact number {i}", user_id="u", kind="fact", at=T0)
    mem.sweep(at=day(0.5), spread=True)  # the first spread sweep takes everything, and starts the clock
    touched = [mem.sweep(at=day(0.5) + timedelta(hours=h), spread=True).evaluated for h in range(1, 25)]
    assert sum(touched) == 200
    assert max(touched) < 30  # spread out: about 200 / 24 an hour, never all at once


def test_explain_breaks_the_score_down_and_projects_the_next_move(mem: Memory) -> None:
    record = mem.add("The CI runners use 8 GB of memory", user_id="u", at=T0).records[0]
    explained = mem.explain(record.id, at=day(2))
    assert explained["tier"] == "hot" and set(explained["policies"]) == {"ebbinghaus", "priority", "importance"}
    assert 0 < explained["score"] <= 1 and explained["stability_days"] > 0
    projected = explained["projected"]
    assert projected["tier"] in ("warm", "cold") and projected["at"] > day(2).isoformat()
    pinned = mem.pin(record.id)
    assert mem.explain(pinned.id, at=day(2))["projected"] is None


def test_forgotten_lists_what_went_and_why(mem: Memory) -> None:
    gone = mem.add("ok", user_id="u", at=T0).records[0]
    mem.add("The API base path is /v2", user_id="u", at=T0)
    mem.sweep(at=day(10))
    report = mem.forgotten(since=day(9))
    assert [r["memory_id"] for r in report] == [gone.id]
    assert report[0]["tier_now"] == "trash" and "retention" in report[0]["reason"] and report[0]["preview"] == "ok"
    assert mem.forgotten(since=day(11)) == []


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"beta": -1}, "beta"),
    ({"grace_days": -1}, "grace_days"),
    ({"protection_floor": float("nan")}, "protection_floor"),
    ({"thresholds": {Tier.HOT: 0.3, Tier.WARM: 0.4, Tier.COLD: 0.1}}, "thresholds"),
])
def test_bad_retention_settings_are_refused(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        RetentionConfig(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


def test_a_sweep_evaluates_each_record_once(mem: Memory) -> None:
    for i in range(30):
        mem.add(f"Weekly note {i}: the printer on floor {i} jammed", user_id="u", kind="episode", at=T0)
    report = mem.sweep(at=day(60))  # the live pass archives them, the cold pass sees them again
    assert sum(c.target is Tier.COLD for c in report.changes) == 30
    assert report.evaluated == 30
